"""The registry: every calculator of the course, declared once.

Each :class:`Calculator` names its inputs (label, unit, default, range, step, choices,
presets), its outputs (label and how to format them) and a compute function that maps the
validated inputs to output values **by calling the calculator functions** of
:mod:`gpulesson.gemm`, :mod:`gpulesson.memory`, :mod:`gpulesson.flops` and the others. The
registry holds no formula of its own: change a formula in its module and every widget,
site calculator and exercise follows.

Three front ends read this registry:

* :func:`gpulesson.widgets.calculator_widget` builds an ipywidgets calculator (Jupyter);
* the static site runs this very module in Pyodide and calls :func:`evaluate` on every
  change (:func:`describe` gives it the JSON spec to build the form from);
* the static HTML written at build time shows :func:`example`, the worked example.

Units. Every input is entered in the unit shown next to it (``unit``), for example a
bandwidth in TB/s; ``scale`` converts it to the SI base unit the calculator functions take
(``3.35 TB/s × 1e12 = 3.35e12 B/s``). Outputs are SI values, formatted for a reader by
:mod:`gpulesson.units`.

Presets. An input of kind ``"preset"`` (a model, a GPU) fills other inputs with values
taken from :data:`gpulesson.transformer.PRESETS` or :data:`gpulesson.hardware.GPUS`; a fill
may depend on another input (a GPU's peak FLOP/s depends on the chosen precision). Every
preset has a ``"custom"`` choice; editing a filled input by hand makes the preset custom.

Standard library only: this module runs in the browser (Pyodide).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpulesson import units

__all__ = [
    "CALCULATORS",
    "CUSTOM",
    "Calculator",
    "Choice",
    "Input",
    "Keyed",
    "Output",
    "apply_preset",
    "compute",
    "describe",
    "evaluate",
    "example",
    "format_output",
    "get",
    "resolve",
    "si_inputs",
    "to_json",
]

#: The choice every preset input has: keep the values as they are.
CUSTOM = "custom"

#: Input kinds.
KINDS = ("number", "integer", "choice", "preset")

#: Output formats: any dimension of :func:`gpulesson.units.format_quantity`, plus these.
EXTRA_FORMATS = ("ratio", "intensity", "text", "bool", "number")

_MAX_SAFE_INTEGER = 2**53  # larger integers lose precision in JavaScript


@dataclass(frozen=True)
class Choice:
    """One option of a ``choice`` or ``preset`` input: the value passed on, and its label."""

    value: str
    label: str


@dataclass(frozen=True)
class Keyed:
    """A preset fill that depends on another input's value (in SI units).

    Example: a GPU's dense peak depends on the precision, so the GPU preset fills
    ``peak_flops`` with ``Keyed(by="dtype", values={"bf16": 989.4e12, ...})``. A missing
    key means the datasheet gives no figure for that combination.
    """

    by: str
    values: Mapping[str, float]
    missing: str = ""  # message shown when the key is absent; {choice} and {key} filled in


@dataclass(frozen=True)
class Input:
    """One input of a calculator.

    Parameters
    ----------
    name:
        keyword used by :func:`compute` (and ``name=`` in the static HTML).
    label:
        what the reader sees, without the unit.
    kind:
        ``"number"``, ``"integer"``, ``"choice"`` or ``"preset"``.
    default:
        the worked example's value, in ``unit``. ``None`` for an input filled by a preset
        whose default is not custom: its default then comes from that preset.
    min, max, step:
        the allowed range (inclusive) and the widget step, in ``unit``.
    unit:
        unit shown to the reader (``"TB/s"``); values are entered in it.
    scale:
        factor from ``unit`` to the SI base unit the calculator functions take.
    dimension:
        dimension of the SI value (a key of :data:`gpulesson.units.DIMENSIONS`).
    choices:
        options of a ``choice`` or ``preset`` input (``custom`` is added to presets).
    fills:
        for a preset: choice -> {input name: SI value or :class:`Keyed`}.
    help:
        one or two sentences: what the input means, where a default comes from.
    advanced:
        shown folded away (architecture details), still editable.
    slider:
        draw a slider rather than a text box (small ranges only).
    """

    name: str
    label: str
    kind: str = "number"
    default: Any = None
    min: float | None = None
    max: float | None = None
    step: float | None = None
    unit: str = ""
    scale: float = 1.0
    dimension: str = "count"
    choices: tuple[Choice, ...] = ()
    fills: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    help: str = ""
    advanced: bool = False
    slider: bool = False

    def choice_values(self) -> tuple[str, ...]:
        return tuple(c.value for c in self.choices)


@dataclass(frozen=True)
class Output:
    """One output: a name, a label and how to format its (SI) value.

    ``format`` is a dimension of :func:`gpulesson.units.format_quantity` (``"bytes"``,
    ``"flops"``, ``"flop/s"``, ``"bytes/s"``, ``"seconds"``, ``"usd"``, ``"tokens/s"``,
    ``"count"``, ``"percent"``) or one of ``"ratio"`` (×), ``"intensity"`` (FLOP/byte),
    ``"text"``, ``"bool"`` (yes/no) and ``"number"`` (significant digits and ``unit``).
    """

    name: str
    label: str
    format: str
    unit: str = ""
    digits: int = 3
    help: str = ""


@dataclass(frozen=True)
class Calculator:
    """A calculator of the course: inputs, outputs and the function that links them.

    ``function`` receives every input as a keyword argument in SI units (integers as
    ``int``, choices as ``str``) and returns a mapping with exactly one value per output.
    """

    name: str
    title: str
    description: str
    lesson: str
    inputs: tuple[Input, ...]
    outputs: tuple[Output, ...]
    function: Callable[..., Mapping[str, Any]]
    sources: tuple[str, ...] = ()

    def input(self, name: str) -> Input:
        for spec in self.inputs:
            if spec.name == name:
                return spec
        raise KeyError(
            f"calculator {self.name!r} has no input {name!r}; "
            f"inputs are {', '.join(i.name for i in self.inputs)}"
        )

    def output(self, name: str) -> Output:
        for spec in self.outputs:
            if spec.name == name:
                return spec
        raise KeyError(
            f"calculator {self.name!r} has no output {name!r}; "
            f"outputs are {', '.join(o.name for o in self.outputs)}"
        )


class _Registry(Mapping[str, Calculator]):
    """An ordered, read-only mapping name -> :class:`Calculator` (course order)."""

    def __init__(self) -> None:
        self._items: dict[str, Calculator] = {}

    def __getitem__(self, name: str) -> Calculator:
        return self._items[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"CALCULATORS({', '.join(self._items)})"

    def _add(self, calc: Calculator) -> None:
        if calc.name in self._items:
            raise ValueError(f"calculator {calc.name!r} is declared twice")
        _check_declaration(calc)
        self._items[calc.name] = calc


#: Every calculator of the course, in course order.
CALCULATORS = _Registry()


def get(name: str) -> Calculator:
    """The calculator called ``name``; ``KeyError`` lists the known names."""
    if not isinstance(name, str) or name not in CALCULATORS:
        raise KeyError(
            f"unknown calculator {name!r}; known calculators: {', '.join(CALCULATORS)}"
        )
    return CALCULATORS[name]


# ---------------------------------------------------------------------------------------
# Resolving, validating and computing


def _nice(value: float) -> float | int:
    """A shown value without float noise: 12 significant digits, ints kept as ints."""
    if isinstance(value, int):
        return value
    rounded = float(f"{value:.12g}")
    return int(rounded) if rounded.is_integer() and abs(rounded) < _MAX_SAFE_INTEGER else rounded


def _fill_value(calc: Calculator, preset: Input, choice: str, target: str, raw: Any,
                values: Mapping[str, Any]) -> Any:
    """The shown value a preset puts into ``target`` (converted from SI to its unit)."""
    spec = calc.input(target)
    if isinstance(raw, Keyed):
        key = values.get(raw.by)
        if key not in raw.values:
            label = _choice_label(preset, choice)
            message = raw.missing or "{choice} has no figure for {key}"
            raise ValueError(
                f"{preset.name}: " + message.format(choice=label, key=key)
                + f" (choose another {calc.input(raw.by).label.lower()} or {preset.label.lower()})"
            )
        raw = raw.values[key]
    if spec.kind in ("choice", "preset"):
        return raw
    if spec.kind == "integer":
        shown = raw / spec.scale if spec.scale != 1 else raw
        return int(round(shown))
    return _nice(raw / spec.scale)


def _choice_label(spec: Input, value: str) -> str:
    for choice in spec.choices:
        if choice.value == value:
            return choice.label
    return str(value)


def apply_preset(name: str, preset: str, choice: str,
                 values: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The values (in shown units) that preset input ``preset`` set to ``choice`` fills in.

    ``values`` are the current inputs; a :class:`Keyed` fill reads its key from them (for
    example the precision). ``custom`` fills nothing.

    Raises
    ------
    ValueError
        when the preset has no figure for the current combination (for example a GPU
        without a BF16 peak), naming the preset input.
    """
    calc = get(name)
    spec = calc.input(preset)
    if spec.kind != "preset":
        raise ValueError(f"{preset} is not a preset input of {name}")
    if choice == CUSTOM:
        return {}
    if choice not in spec.fills:
        raise ValueError(
            f"{preset} must be one of {', '.join(spec.choice_values())}, got {choice!r}"
        )
    current = dict(_declared_defaults(calc))
    current.update(values or {})
    return {target: _fill_value(calc, spec, choice, target, raw, current)
            for target, raw in spec.fills[choice].items()}


def _declared_defaults(calc: Calculator) -> dict[str, Any]:
    return {i.name: i.default for i in calc.inputs if i.default is not None}


def resolve(name: str, **inputs: Any) -> dict[str, Any]:
    """All inputs of ``name`` in shown units: defaults, then presets, then ``inputs``.

    A preset named in ``inputs`` (or by default) fills the inputs it covers unless they are
    given explicitly. Only choices are validated here (a preset fill may depend on one);
    numbers are validated by :func:`compute`.
    """
    calc = get(name)
    known = {i.name for i in calc.inputs}
    unknown = sorted(set(inputs) - known)
    if unknown:
        raise ValueError(
            f"{unknown[0]} is not an input of calculator {name!r}; "
            f"inputs are {', '.join(i.name for i in calc.inputs)}"
        )
    values = _declared_defaults(calc)
    values.update(inputs)
    for spec in calc.inputs:  # a preset fill may be keyed by a choice: check those first
        if spec.kind == "choice":
            _validate_one(spec, values.get(spec.name))
    for spec in calc.inputs:
        if spec.kind != "preset":
            continue
        choice = values.get(spec.name, CUSTOM)
        if choice == CUSTOM or choice not in spec.fills:
            continue  # an unknown choice is reported by validation
        for target, raw in spec.fills[choice].items():
            # evaluated even when the target is given, so that a contradiction (a GPU
            # without a figure for the chosen precision) is reported, not hidden
            filled = _fill_value(calc, spec, choice, target, raw, values)
            if target not in inputs:
                values[target] = filled
    return {i.name: values.get(i.name) for i in calc.inputs}


def _range_text(spec: Input) -> str:
    unit = f" {spec.unit}" if spec.unit else ""
    return f"between {_shown(spec.min)} and {_shown(spec.max)}{unit}"


def _shown(value: float | None) -> str:
    if value is None:
        return "?"
    if float(value).is_integer() and abs(value) >= 1e4:
        return f"{int(value):,}"
    return f"{value:g}"


def _validate_one(spec: Input, value: Any) -> Any:
    """Check one shown value against its declaration; return it normalised."""
    if spec.kind in ("choice", "preset"):
        allowed = spec.choice_values()
        if value not in allowed:
            raise ValueError(
                f"{spec.name} ({spec.label}) must be one of {', '.join(allowed)}, got {value!r}"
            )
        return value
    if value is None:
        raise ValueError(f"{spec.name} ({spec.label}) needs a value {_range_text(spec)}")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(
            f"{spec.name} ({spec.label}) must be a number {_range_text(spec)}, "
            f"got {type(value).__name__} {value!r}"
        )
    if not math.isfinite(value):
        raise ValueError(
            f"{spec.name} ({spec.label}) must be a finite number {_range_text(spec)}, "
            f"got {value!r}"
        )
    if spec.kind == "integer":
        if isinstance(value, float):
            if not value.is_integer():
                raise ValueError(
                    f"{spec.name} ({spec.label}) must be a whole number "
                    f"{_range_text(spec)}, got {value!r}"
                )
            value = int(value)
    if (spec.min is not None and value < spec.min) or (spec.max is not None and value > spec.max):
        kind = "a whole number" if spec.kind == "integer" else "a number"
        raise ValueError(
            f"{spec.name} ({spec.label}) must be {kind} {_range_text(spec)}, got {_shown(value)}"
        )
    return value


def _to_si(spec: Input, value: Any) -> Any:
    if spec.kind in ("choice", "preset") or spec.scale == 1:
        return value
    si = value * spec.scale
    if spec.kind == "integer" and float(si).is_integer():
        return int(si)
    return si


def si_inputs(name: str, **inputs: Any) -> dict[str, Any]:
    """Resolve and validate ``inputs``; return the SI keyword arguments ``function`` gets.

    Raises
    ------
    ValueError
        naming the first invalid input and its allowed range.
    """
    calc = get(name)
    shown = resolve(name, **inputs)
    return {spec.name: _to_si(spec, _validate_one(spec, shown[spec.name]))
            for spec in calc.inputs}


def compute(name: str, **inputs: Any) -> dict[str, Any]:
    """Compute every output of calculator ``name`` from ``inputs`` (shown units).

    Missing inputs take their defaults (the worked example), a preset fills the inputs it
    covers, explicit inputs win. Outputs are SI values (bytes, FLOPs, seconds, USD ...).

    Raises
    ------
    ValueError
        naming the input and its allowed range, or the calculator function's own message
        for a combination it refuses (for example heads that do not divide hidden).
    """
    calc = get(name)
    kwargs = si_inputs(name, **inputs)
    result = dict(calc.function(**kwargs))
    expected = [o.name for o in calc.outputs]
    if sorted(result) != sorted(expected):
        raise RuntimeError(
            f"calculator {name!r} returned {sorted(result)}, declared {sorted(expected)}"
        )
    return {key: result[key] for key in expected}


def example(name: str) -> dict[str, dict[str, Any]]:
    """The worked example: ``{"inputs": shown default inputs, "outputs": SI values}``."""
    return {"inputs": resolve(name), "outputs": compute(name)}


# ---------------------------------------------------------------------------------------
# Formatting and JSON


def format_output(spec: Output, value: Any) -> str:
    """Format an output value for a reader (units from :mod:`gpulesson.units`)."""
    fmt = spec.format
    if fmt == "text":
        return str(value)
    if fmt == "bool":
        return "yes" if value else "no"
    if fmt == "ratio":
        return f"{_significant(value, spec.digits)}×"
    if fmt == "intensity":
        return f"{_significant(value, spec.digits)} FLOP/byte"
    if fmt == "count" and isinstance(value, int):
        return f"{value:,} {spec.unit}".strip()  # exact: no detour through float
    if fmt == "number":
        text = _significant(value, spec.digits)
        return f"{text} {spec.unit}".strip()
    text = units.format_quantity(value, fmt)
    return f"{text} {spec.unit}".strip() if spec.unit else text


def _significant(value: float, digits: int) -> str:
    if value == 0:
        return "0"
    if isinstance(value, int) and abs(value) < 10**digits:
        return f"{value:,}"
    decimals = max(digits - 1 - math.floor(math.log10(abs(value))), 0)
    return f"{value:,.{decimals}f}"


def to_json(value: Any) -> Any:
    """``value`` made JSON-safe for the browser: integers above 2^53 become strings."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value) if abs(value) > _MAX_SAFE_INTEGER else value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot send a non-finite number to the browser: {value!r}")
        return value
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    return str(value)


def _input_for_message(calc: Calculator, message: str) -> str | None:
    """The input a validation message is about (its first word naming an input)."""
    head = message.split(":", 1)[0].split(" (", 1)[0].split(" ", 1)[0].strip()
    names = {i.name for i in calc.inputs}
    if head in names:
        return head
    for spec in calc.inputs:
        if f" {spec.name} " in f" {message} ":
            return spec.name
    return None


def evaluate(name: str, inputs: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What a front end shows for ``inputs``: values, formatted text, or an error.

    Never raises for bad input: returns ``{"ok": False, "error": message, "input": name
    of the input at fault (or None)}``. On success ``{"ok": True, "values": JSON-safe SI
    values, "text": formatted strings}``. Used by the widgets and, in Pyodide, by the site.
    """
    calc = get(name)
    try:
        outputs = compute(name, **dict(inputs or {}))
    except (ValueError, TypeError, KeyError) as exc:
        message = str(exc.args[0]) if exc.args else str(exc)
        return {"ok": False, "error": message, "input": _input_for_message(calc, message)}
    return {
        "ok": True,
        "values": to_json(outputs),
        "text": {o.name: format_output(o, outputs[o.name]) for o in calc.outputs},
    }


def describe(name: str) -> dict[str, Any]:
    """A JSON-serialisable spec of calculator ``name`` for building a form in the browser.

    Contains the inputs (with shown units, ranges, choices and preset fills in SI units,
    a keyed fill as ``{"by": input, "values": {...}}``), the outputs, and the worked
    example (inputs, SI outputs and their formatted text). Integers above 2^53 are strings.
    """
    calc = get(name)
    ex = example(name)
    inputs = []
    for spec in calc.inputs:
        item: dict[str, Any] = {
            "name": spec.name, "label": spec.label, "kind": spec.kind,
            "default": ex["inputs"][spec.name], "min": spec.min, "max": spec.max,
            "step": spec.step, "unit": spec.unit, "scale": spec.scale,
            "dimension": spec.dimension, "help": spec.help, "advanced": spec.advanced,
            "slider": spec.slider,
        }
        if spec.choices:
            item["choices"] = [{"value": c.value, "label": c.label} for c in spec.choices]
        if spec.kind == "preset":
            item["fills"] = {
                choice: {
                    target: ({"by": raw.by, "values": dict(raw.values)}
                             if isinstance(raw, Keyed) else raw)
                    for target, raw in fills.items()
                }
                for choice, fills in spec.fills.items()
            }
        inputs.append(item)
    return to_json({
        "name": calc.name, "title": calc.title, "description": calc.description,
        "lesson": calc.lesson, "sources": list(calc.sources), "inputs": inputs,
        "outputs": [{"name": o.name, "label": o.label, "format": o.format, "unit": o.unit,
                     "digits": o.digits, "help": o.help} for o in calc.outputs],
        "example": {
            "inputs": ex["inputs"], "outputs": ex["outputs"],
            "text": {o.name: format_output(o, ex["outputs"][o.name]) for o in calc.outputs},
        },
    })


# ---------------------------------------------------------------------------------------
# Declaration checks (run when an entry is added: a broken entry fails at import)


def _check_declaration(calc: Calculator) -> None:
    names = [i.name for i in calc.inputs]
    if len(set(names)) != len(names):
        raise ValueError(f"{calc.name}: duplicate input names in {names}")
    outs = [o.name for o in calc.outputs]
    if len(set(outs)) != len(outs):
        raise ValueError(f"{calc.name}: duplicate output names in {outs}")
    filled: dict[str, str] = {}
    for spec in calc.inputs:
        if spec.kind not in KINDS:
            raise ValueError(f"{calc.name}.{spec.name}: kind must be one of {KINDS}")
        if spec.kind in ("number", "integer"):
            if spec.min is None or spec.max is None or spec.min > spec.max:
                raise ValueError(f"{calc.name}.{spec.name}: needs a range min <= max")
            if spec.dimension not in units.DIMENSIONS:
                raise ValueError(f"{calc.name}.{spec.name}: unknown dimension {spec.dimension}")
        if spec.kind in ("choice", "preset") and not spec.choices:
            raise ValueError(f"{calc.name}.{spec.name}: a {spec.kind} needs choices")
        if spec.kind == "preset":
            if CUSTOM not in spec.choice_values():
                raise ValueError(f"{calc.name}.{spec.name}: a preset needs a 'custom' choice")
            for choice, fills in spec.fills.items():
                if choice not in spec.choice_values():
                    raise ValueError(f"{calc.name}.{spec.name}: fill for unknown {choice!r}")
                for target, raw in fills.items():
                    if target not in names or target == spec.name:
                        raise ValueError(f"{calc.name}.{spec.name}: fills unknown {target!r}")
                    if isinstance(raw, Keyed) and (
                            raw.by not in names or calc.input(raw.by).kind != "choice"):
                        raise ValueError(f"{calc.name}.{spec.name}: keyed by {raw.by!r}, "
                                         "which is not a choice input")
                    filled[target] = spec.name
    for spec in calc.inputs:
        if spec.default is None and not _default_from_preset(calc, spec.name, filled):
            raise ValueError(f"{calc.name}.{spec.name}: needs a default")
    for o in calc.outputs:
        if o.format not in EXTRA_FORMATS and o.format not in (
                "bytes", "flops", "flop/s", "bytes/s", "seconds", "usd", "tokens/s",
                "count", "percent"):
            raise ValueError(f"{calc.name}.{o.name}: unknown format {o.format!r}")


def _default_from_preset(calc: Calculator, target: str, filled: Mapping[str, str]) -> bool:
    preset_name = filled.get(target)
    if preset_name is None:
        return False
    preset = next(i for i in calc.inputs if i.name == preset_name)
    return preset.default not in (None, CUSTOM) and target in preset.fills.get(preset.default, {})
