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

API: :data:`CALCULATORS` (ordered, course order), :func:`get`, :func:`compute` (validated
outputs in SI units), :func:`example` (the worked example), :func:`describe` (JSON spec),
:func:`evaluate` (never raises: values, formatted text or the error and the input at
fault), :func:`apply_preset` (what a preset choice fills in), :func:`apply_changes` (the
preset rules of a live form and what it then shows), :func:`preset_links` (which presets
fill, or are keyed by, each input), :func:`resolve` and :func:`si_inputs` (the inputs as
shown and as passed on), :func:`sweep` (outputs across one input, for plots) and
:func:`to_json` (integers above 2^53 as strings).

A live form calls :func:`apply_changes` on every change: it fills from a preset when one is
chosen (and again when an input its fill is keyed by changes), sets a preset to
``"custom"`` when the reader edits an input it filled, and evaluates the result. Both
front ends do exactly this: :mod:`gpulesson.widgets` with ipywidgets, and
:mod:`gpulesson.browser` on the site.

Standard library only: this module runs in the browser (Pyodide).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from gpulesson import course, units

__all__ = [
    "CALCULATORS",
    "CUSTOM",
    "Calculator",
    "Choice",
    "Input",
    "Keyed",
    "Output",
    "apply_changes",
    "apply_preset",
    "compute",
    "describe",
    "evaluate",
    "example",
    "format_output",
    "get",
    "preset_links",
    "resolve",
    "si_inputs",
    "sweep",
    "to_json",
]

#: The choice every preset input has: keep the values as they are.
CUSTOM = "custom"

#: Input kinds.
KINDS = ("number", "integer", "choice", "preset")

#: Output formats: any dimension of :func:`gpulesson.units.format_quantity`, plus these.
EXTRA_FORMATS = ("ratio", "intensity", "text", "bool", "number", "words")

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
    ``"text"``, ``"bool"`` (yes/no), ``"number"`` (significant digits and ``unit``) and
    ``"words"`` (135 billion). ``binary`` adds the GiB figure to a bytes output; FLOP
    counts beyond the E prefix are written as powers of ten.
    """

    name: str
    label: str
    format: str
    unit: str = ""
    digits: int = 3
    help: str = ""
    binary: bool = False

    def __post_init__(self) -> None:
        if self.binary and self.format != "bytes":
            raise ValueError(f"{self.name}: binary applies to bytes outputs only")


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
        return self._named("input", self.inputs, name)

    def output(self, name: str) -> Output:
        return self._named("output", self.outputs, name)

    def _named(self, what: str, specs: tuple[Any, ...], name: str) -> Any:
        for spec in specs:
            if spec.name == name:
                return spec
        raise KeyError(
            f"calculator {self.name!r} has no {what} {name!r}; "
            f"{what}s are {', '.join(s.name for s in specs)}"
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
    given explicitly. Presets and choices are validated here (a preset fill may depend on
    a choice, so a bad one raises ``ValueError`` naming it); numbers by :func:`compute`.
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
    presets = [spec for spec in calc.inputs if spec.kind == "preset"]
    for spec in presets:
        _validate_one(spec, values.get(spec.name))
    presets = [spec for spec in presets if values[spec.name] != CUSTOM]
    # plain fills first, then check the choices (a keyed fill is looked up by one), then
    # the keyed fills
    for keyed in (False, True):
        if keyed:
            for spec in calc.inputs:
                if spec.kind == "choice":
                    _validate_one(spec, values.get(spec.name))
        for spec in presets:
            choice = values[spec.name]
            for target, raw in spec.fills[choice].items():
                if isinstance(raw, Keyed) != keyed:
                    continue
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


def sweep(name: str, input: str, values: Any, **inputs: Any) -> list[dict[str, Any]]:
    """Outputs of ``name`` for each of ``values`` of one input, the others fixed.

    For plots tied to a calculator (``gpulesson.widgets.explorer``): every point comes
    from :func:`compute`. Raises ``ValueError`` (naming the input) at the first invalid
    point.
    """
    get(name).input(input)
    return [compute(name, **{**inputs, input: value}) for value in values]


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
        return f"{units.format_significant(value, spec.digits)}×"
    if fmt == "intensity":
        return f"{units.format_significant(value, spec.digits)} FLOP/byte"
    if fmt == "flops" and abs(value) >= 1e21:  # beyond the E prefix: powers of ten
        return _power_of_ten(value, spec.digits) + " FLOP"
    if fmt == "words":
        return _in_words(value, spec.digits, spec.unit)
    if fmt == "bytes" and spec.binary:
        return (f"{units.format_bytes(value)} "
                f"({units.format_bytes(value, binary=True, digits=2)})")
    if fmt == "number":
        text = units.format_significant(value, spec.digits)
        return f"{text} {spec.unit}".strip()
    text = units.format_quantity(value, fmt)
    return f"{text} {spec.unit}".strip() if spec.unit else text


_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def _power_of_ten(value: float, digits: int) -> str:
    """``8.09e22 -> '8.09 × 10²²'``."""
    mantissa, exponent = f"{value:.{max(digits - 1, 0)}e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


_WORDS = ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"), (1e3, "thousand"))


def _in_words(value: float, digits: int, unit: str) -> str:
    """``1.348e11 -> '135 billion'``: large counts a reader can say aloud."""
    for factor, word in _WORDS:
        if abs(value) >= factor:
            return f"{units.format_significant(value / factor, digits)} {word} {unit}".strip()
    return f"{units.format_significant(value, digits)} {unit}".strip()


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
                     "digits": o.digits, "help": o.help, "binary": o.binary}
                    for o in calc.outputs],
        "example": {
            "inputs": ex["inputs"], "outputs": ex["outputs"],
            "text": {o.name: format_output(o, ex["outputs"][o.name]) for o in calc.outputs},
        },
    })


# ---------------------------------------------------------------------------------------
# A live form: the preset rules, for the Jupyter widgets and the site's calculators alike


def preset_links(name: str) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Which presets fill each input, and which presets are keyed by each input.

    Returns ``(filled_by, keyed_by)``: input name -> preset input names, in declaration
    order. Derived from the declarations (``Input.fills`` and ``Keyed.by``).
    """
    filled_by: dict[str, list[str]] = {}
    keyed_by: dict[str, list[str]] = {}
    for spec in get(name).inputs:
        if spec.kind != "preset":
            continue
        for fills in spec.fills.values():
            for target, raw in fills.items():
                _append_once(filled_by.setdefault(target, []), spec.name)
                if isinstance(raw, Keyed):
                    _append_once(keyed_by.setdefault(raw.by, []), spec.name)
    return filled_by, keyed_by


def _append_once(names: list[str], name: str) -> None:
    if name not in names:
        names.append(name)


def _same_shown(a: Any, b: Any) -> bool:
    """Equal as shown values: 80 and 80.0 are the same figure; choices compare as text."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0) or a == b
    return a == b


def apply_changes(name: str, values: Mapping[str, Any],
                  changed: Iterable[str] = ()) -> dict[str, Any]:
    """What a form shows once the reader has changed the inputs ``changed``.

    The one implementation of the preset rules, used by :mod:`gpulesson.widgets` (Jupyter)
    and :mod:`gpulesson.browser` (the site). For each changed input, in order:

    * a preset fills what it covers (:func:`apply_preset`);
    * an input a preset filled, edited to anything but the preset's figure, turns that
      preset to ``custom`` (80 and 80.0 are the same figure);
    * an input a fill is keyed by (a GPU's peak depends on the precision) makes the presets
      keyed by it fill again, unless they are custom.

    Parameters
    ----------
    name:
        a key of :data:`CALCULATORS`.
    values:
        the form's inputs in shown units (``None`` for an empty box); inputs left out take
        their defaults.
    changed:
        the inputs the reader changed, in order; unknown names are ignored.

    Returns
    -------
    dict
        ``{"updates": {input: shown value}, "result": ...}``: the inputs to overwrite, and
        :func:`evaluate` of the inputs after those updates (never raises for bad input), or
        ``{"ok": False, "error": message, "input": preset}`` when a preset has no figure
        for the current combination (for example a GPU without an FP8 peak).
    """
    calc = get(name)
    known = {spec.name: spec for spec in calc.inputs}
    shown = dict(values)
    filled_by, keyed_by = preset_links(name)
    updates: dict[str, Any] = {}

    def fill(preset: str) -> dict[str, Any] | None:
        """The preset's fills applied to ``shown``; the failure result otherwise."""
        try:
            filled = apply_preset(name, preset, shown.get(preset, CUSTOM), shown)
        except ValueError as exc:
            message = str(exc.args[0]) if exc.args else str(exc)
            return {"ok": False, "error": message, "input": preset}
        shown.update(filled)
        updates.update(filled)
        return None

    for key in changed:
        spec = known.get(key)
        if spec is None:
            continue
        if spec.kind == "preset":
            failure = fill(key)
            if failure:
                return {"updates": updates, "result": failure}
            continue
        for preset in filled_by.get(key, []):
            choice = shown.get(preset)
            if choice in (None, CUSTOM):
                continue
            try:
                expected = apply_preset(name, preset, choice, shown)
            except ValueError:
                expected = {}
            if not _same_shown(expected.get(key), shown.get(key)):
                shown[preset] = updates[preset] = CUSTOM
        for preset in keyed_by.get(key, []):
            if shown.get(preset) not in (None, CUSTOM):
                failure = fill(preset)
                if failure:
                    return {"updates": updates, "result": failure}
    return {"updates": updates, "result": evaluate(name, shown)}


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
    if calc.lesson not in course.SLUGS:
        raise ValueError(f"{calc.name}: lesson {calc.lesson!r} is not in gpulesson.course")


def _default_from_preset(calc: Calculator, target: str, filled: Mapping[str, str]) -> bool:
    preset_name = filled.get(target)
    if preset_name is None:
        return False
    preset = next(i for i in calc.inputs if i.name == preset_name)
    return preset.default not in (None, CUSTOM) and target in preset.fills.get(preset.default, {})


# =======================================================================================
# The entries. Each compute function only assembles arguments and calls the calculator
# functions; every number it returns comes from them.

from gpulesson import cost as _cost  # noqa: E402
from gpulesson import distributed as _distributed  # noqa: E402
from gpulesson import flops as _flops  # noqa: E402
from gpulesson import gemm as _gemm  # noqa: E402
from gpulesson import hardware as _hardware  # noqa: E402
from gpulesson import inference as _inference  # noqa: E402
from gpulesson import memory as _memory  # noqa: E402
from gpulesson import optimisations as _optimisations  # noqa: E402
from gpulesson import roofline as _roofline  # noqa: E402
from gpulesson import transformer as _transformer  # noqa: E402

# ---------------------------------------------------------------------------------------
# Shared input groups: models, GPUs, precisions

MODEL_LABELS = _transformer.MODEL_LABELS

_CUSTOM_MODEL = Choice(CUSTOM, "Custom (edit the shape)")
_CUSTOM_GPU = Choice(CUSTOM, "Custom (edit the figures)")

#: The choices of a model preset: every gpulesson.transformer.PRESETS name, then custom.
_MODEL_CHOICES = tuple(Choice(k, MODEL_LABELS.get(k, k))
                       for k in _transformer.PRESETS) + (_CUSTOM_MODEL,)


def _model_fill(cfg: Any) -> dict[str, Any]:
    biases = "all" if cfg.linear_bias else ("qkv" if cfg.qkv_bias else "none")
    return {
        "hidden": cfg.hidden, "layers": cfg.layers, "heads": cfg.heads,
        "kv_heads": cfg.kv_heads, "head_dim": cfg.head_dim, "ffn": cfg.ffn,
        "vocab": cfg.vocab, "max_positions": cfg.max_positions,
        "embeddings": "tied" if cfg.tied_embeddings else "untied",
        "mlp": "gated" if cfg.gated_mlp else "plain", "norm": cfg.norm, "biases": biases,
    }


def _model_inputs(default: str = "llama-2-7b", *, advanced: bool = True) -> tuple[Input, ...]:
    """The model preset and the shape it fills (``advanced``: folded away)."""
    fills = {k: _model_fill(cfg) for k, cfg in _transformer.PRESETS.items()}

    def shape(name: str, label: str, hi: int, help: str, lo: int = 1) -> Input:
        return Input(name, label, "integer", None, lo, hi, 1, help=help, advanced=advanced)

    return (
        Input("model", "Model", "preset", default, choices=_MODEL_CHOICES, fills=fills,
              help="A published model; its shape comes from its config file "
                   "(gpulesson.transformer.PRESETS). Edit any field to explore."),
        shape("hidden", "Hidden size d", 65536, "Model width (hidden_size, n_embd)."),
        shape("layers", "Layers L", 1000, "Number of transformer blocks."),
        shape("heads", "Attention heads", 1024, "Query heads."),
        shape("kv_heads", "KV heads", 1024,
              "Key/value heads: equal to heads for multi-head attention, fewer with "
              "grouped-query attention (must divide heads)."),
        shape("head_dim", "Head size", 1024, "Size of one head, usually hidden ÷ heads."),
        shape("ffn", "MLP inner size", 262144, "intermediate_size; 4·d in GPT-2."),
        shape("vocab", "Vocabulary", 1_000_000, "Rows of the token-embedding matrix."),
        shape("max_positions", "Learned positions", 1_000_000,
              "Rows of a learned position embedding (GPT-2: 1024); 0 for rotary.", lo=0),
        Input("embeddings", "Output layer", "choice", None,
              choices=(Choice("tied", "tied to the embedding"),
                       Choice("untied", "separate matrix")),
              help="Whether the output layer reuses the token-embedding matrix.",
              advanced=True),
        Input("mlp", "MLP", "choice", None,
              choices=(Choice("plain", "2 matrices (GELU)"),
                       Choice("gated", "3 matrices (SwiGLU)")),
              help="GPT-2 uses two matrices; Llama's SwiGLU uses three.", advanced=True),
        Input("norm", "Norm", "choice", None,
              choices=(Choice("layernorm", "LayerNorm (weight + bias)"),
                       Choice("rmsnorm", "RMSNorm (weight)")),
              help="Each norm has d or 2·d parameters.", advanced=True),
        Input("biases", "Biases", "choice", None,
              choices=(Choice("all", "on every linear layer"),
                       Choice("qkv", "on q, k, v only"), Choice("none", "none")),
              help="GPT-2 has biases everywhere, Llama none, Qwen2 on q, k, v.",
              advanced=True),
    )


def _params_inputs(default: str = "llama-2-7b", n_params: float | None = None
                   ) -> tuple[Input, Input]:
    """A model preset that fills only the parameter count, and that count (billions).

    ``n_params`` is the count's own default, for a preset that is custom by default.
    """
    return (
        Input("model", "Model", "preset", default, choices=_MODEL_CHOICES,
              fills={k: {"n_params": _transformer.param_count(cfg)}
                     for k, cfg in _transformer.PRESETS.items()},
              help="Fills the parameter count (gpulesson.transformer.param_count)."),
        Input("n_params", "Parameters", "number", n_params, 0.001, 10_000, 0.1,
              unit="billion", scale=1e9, dimension="count"),
    )


def _config(kw: Mapping[str, Any]) -> Any:
    """The TransformerConfig the model inputs describe (it validates itself)."""
    return _transformer.TransformerConfig(
        hidden=kw["hidden"], layers=kw["layers"], heads=kw["heads"], vocab=kw["vocab"],
        ffn=kw["ffn"], kv_heads=kw["kv_heads"], head_dim=kw["head_dim"],
        max_positions=kw["max_positions"], tied_embeddings=kw["embeddings"] == "tied",
        gated_mlp=kw["mlp"] == "gated", norm=kw["norm"],
        linear_bias=kw["biases"] == "all", qkv_bias=kw["biases"] == "qkv",
    )


_GPU_NOTE = ("Figures from gpulesson.hardware (datasheets, dense tensor-core peaks; "
             "sparse figures are never used).")
_MISSING_PEAK = "{choice} has no dense {key} figure on its datasheet"


#: The figures a GPU preset fills (their defaults come from the preset).
_GPU_MEMORY = Input("gpu_memory", "GPU memory", "number", None, 1, 10000, 1, unit="GB",
                    scale=1e9, dimension="bytes", help="Device memory, decimal GB (10⁹ bytes).")
_PEAK = Input("peak_flops", "Peak compute (dense)", "number", None, 0.1, 100_000, 0.1,
              unit="TFLOP/s", scale=1e12, dimension="flop/s",
              help="Dense peak for the chosen precision (not the 2:4-sparse headline).")
_BANDWIDTH = Input("bandwidth", "Memory bandwidth", "number", None, 0.01, 100, 0.01,
                   unit="TB/s", scale=1e12, dimension="bytes/s",
                   help="Peak HBM/GDDR bandwidth, decimal TB/s.")


def _gpu_inputs(default: str, *, memory: bool = False, peak: bool | Input = False,
                bandwidth: bool = False) -> tuple[Input, ...]:
    """A GPU preset (``gpu``) and the figures it fills from gpulesson.hardware.GPUS.

    The figures follow the preset in this order: ``gpu_memory`` (GB), ``peak_flops``
    (dense TFLOP/s, keyed by the ``dtype`` input) and ``bandwidth`` (TB/s). ``peak`` may
    be the peak input to use instead of :data:`_PEAK` (another range or help).
    """
    fills: dict[str, dict[str, Any]] = {}
    for key, spec in _hardware.GPUS.items():
        fill: dict[str, Any] = {}
        if memory:
            fill["gpu_memory"] = spec.memory_bytes
        if bandwidth:
            fill["bandwidth"] = spec.bandwidth
        if peak:
            fill["peak_flops"] = Keyed("dtype", dict(spec.peak_flops), missing=_MISSING_PEAK)
        fills[key] = fill
    choices = tuple(Choice(k, k) for k in _hardware.GPUS) + (_CUSTOM_GPU,)
    figures = (_GPU_MEMORY if memory else None,
               (peak if isinstance(peak, Input) else _PEAK) if peak else None,
               _BANDWIDTH if bandwidth else None)
    return (Input("gpu", "GPU", "preset", default, choices=choices, fills=fills,
                  help=_GPU_NOTE),
            *(figure for figure in figures if figure is not None))


_COMPUTE_DTYPES = (Choice("bf16", "BF16"), Choice("fp16", "FP16"), Choice("fp8", "FP8"),
                   Choice("tf32", "TF32 (FP32 storage)"), Choice("fp32", "FP32"))
_STORAGE = (Choice("fp32", "FP32 (4 bytes)"), Choice("bf16", "BF16 (2 bytes)"),
            Choice("fp16", "FP16 (2 bytes)"), Choice("fp8", "FP8 (1 byte)"),
            Choice("int8", "INT8 (1 byte)"), Choice("int4", "INT4 (0.5 byte)"))


def _dtype_input(name: str = "dtype", label: str = "Precision",
                 default: str = "bf16") -> Input:
    return Input(name, label, "choice", default, choices=_COMPUTE_DTYPES,
                 help="Data type of the tensor-core math; sets the peak and the bytes "
                      "per element.")


def _storage_input(name: str, label: str, default: str = "bf16", help: str = "") -> Input:
    return Input(name, label, "choice", default, choices=_STORAGE,
                 help=help or "Bytes per stored value (gpulesson.memory.PRECISION_BYTES).")


def _yes_no(name: str, label: str, default: str, help: str) -> Input:
    return Input(name, label, "choice", default,
                 choices=(Choice("no", "no"), Choice("yes", "yes")), help=help)


def _tokens(name: str, label: str, default: int, help: str = "") -> Input:
    """Tokens of one sequence (a context, a prompt): 1 to 1,048,576."""
    return Input(name, label, "integer", default, 1, 1_048_576, 1, unit="tokens", help=help)


def _batch(label: str, default: int = 1, *, unit: str = "", help: str = "") -> Input:
    """``batch``: sequences processed together, 1 to 4096."""
    return Input("batch", label, "integer", default, 1, 4096, 1, unit=unit, help=help)


def _percent(name: str, label: str, default: float, lo: float, hi: float, step: float,
             help: str = "") -> Input:
    """A share entered in percent on a slider, passed on as a fraction."""
    return Input(name, label, "number", default, lo, hi, step, unit="%", scale=0.01,
                 dimension="percent", slider=True, help=help)


#: Outputs several entries show.
_N_PARAMS_OUT = Output("n_params", "Parameters", "count")
_WEIGHTS_OUT = Output("weights", "Weights", "bytes")
_TRAINING_TIME_OUT = Output("time", "Training time at that MFU", "seconds")
_GPU_HOURS_OUT = Output("gpu_hours", "GPU-hours", "number", unit="GPU-hours")
_EFFICIENCY_OUT = Output("efficiency", "Scaling efficiency", "percent")


# ---------------------------------------------------------------------------------------
# Lesson 1: parallelism_at_the_core


def _amdahl(*, serial_fraction: float, workers: int) -> dict[str, Any]:
    return {"speedup": _roofline.amdahl_speedup(serial_fraction, workers)}


CALCULATORS._add(Calculator(
    name="amdahl",
    title="Amdahl's law",
    description="How much faster N workers finish a job of which a share must run "
                "serially.",
    lesson="parallelism_at_the_core",
    inputs=(
        _percent("serial_fraction", "Serial share", 5, 0, 100, 0.5,
                 help="Share of the one-worker run time that cannot be split."),
        Input("workers", "Workers", "integer", 64, 1, 1_000_000, 1,
              help="Cores, GPUs or people working in parallel."),
    ),
    outputs=(Output("speedup", "Speed-up over one worker", "ratio"),),
    function=_amdahl,
    sources=("Amdahl 1967, AFIPS Spring Joint Computer Conference",),
))


def _will_it_fit(**kw: Any) -> dict[str, Any]:
    cfg = _config(kw)
    n = _transformer.param_count(cfg)
    kv = _inference.kv_cache_bytes(cfg, seq_len=kw["context"], batch=kw["batch"],
                                   bytes_per_element=_memory.precision_bytes(kw["kv_dtype"]))
    mem = _memory.inference_memory(n, precision=kw["precision"], kv_cache_bytes=kv,
                                   overhead_bytes=kw["overhead"])
    return {
        "n_params": n, "weights": mem.weights, "kv_cache": mem.kv_cache,
        "total": mem.total, "fits": _memory.fits(mem.total, kw["gpu_memory"]),
        "headroom": _memory.headroom(mem.total, kw["gpu_memory"]),
        "gpus_needed": _memory.gpus_needed(mem.total, kw["gpu_memory"]),
    }


CALCULATORS._add(Calculator(
    name="will_it_fit",
    title="Will it fit? Serving a model on one GPU",
    description="Weights at a precision, plus the KV cache of the sequences in flight and "
                "a fixed overhead, against the memory of a GPU.",
    lesson="parallelism_at_the_core",
    inputs=(
        *_model_inputs("llama-3-8b"),
        _storage_input("precision", "Weights precision"),
        _tokens("context", "Context length", 8192,
                help="Tokens held per sequence (prompt + generated)."),
        _batch("Concurrent sequences"),
        _storage_input("kv_dtype", "KV-cache precision"),
        Input("overhead", "Overhead", "number", 2, 0, 1000, 0.5, unit="GB", scale=1e9,
              dimension="bytes",
              help="CUDA context, framework and activation buffers: an assumption, about "
                   "1-2 GB in practice; measure yours."),
        *_gpu_inputs("H100 SXM", memory=True),
    ),
    outputs=(
        _N_PARAMS_OUT,
        _WEIGHTS_OUT,
        Output("kv_cache", "KV cache", "bytes"),
        Output("total", "Total", "bytes"),
        Output("fits", "Fits on one GPU", "bool"),
        Output("headroom", "Headroom (negative: short by)", "bytes"),
        Output("gpus_needed", "GPUs needed (evenly split)", "count"),
    ),
    function=_will_it_fit,
))


def _decode_ceiling(**kw: Any) -> dict[str, Any]:
    weights = _memory.weight_bytes(kw["n_params"], precision=kw["precision"])
    return {
        "weights": weights,
        "tokens_per_second": _inference.decode_ceiling_tokens_per_second(
            weight_bytes=weights, bandwidth=kw["bandwidth"], batch=kw["batch"],
            kv_bytes_per_sequence=kw["kv_per_sequence"]),
    }


CALCULATORS._add(Calculator(
    name="decode_ceiling",
    title="The decode ceiling",
    description="Generating a token reads every weight once: memory bandwidth caps the "
                "tokens per second, and batching shares each read.",
    lesson="parallelism_at_the_core",
    inputs=(
        *_params_inputs(),
        _storage_input("precision", "Weights precision"),
        *_gpu_inputs("H100 SXM", bandwidth=True),
        _batch("Batch (sequences)",
               help="Sequences decoded together: one weight read serves them all."),
        Input("kv_per_sequence", "KV cache per sequence", "number", 0, 0, 10_000, 0.1,
              unit="GB", scale=1e9, dimension="bytes",
              help="Read every step too; 0 ignores it (see the KV-cache calculator)."),
    ),
    outputs=(
        Output("weights", "Weights read per step", "bytes"),
        Output("tokens_per_second", "Ceiling, all sequences", "tokens/s"),
    ),
    function=_decode_ceiling,
))


# ---------------------------------------------------------------------------------------
# Lesson 2: roofline_and_tensor_cores


def _gemm_calc(**kw: Any) -> dict[str, Any]:
    a = _gemm.analyse(kw["m"], kw["k"], kw["n"], peak_flops=kw["peak_flops"],
                      bandwidth=kw["bandwidth"],
                      bytes_per_element=_memory.precision_bytes(kw["dtype"]),
                      read_c=kw["read_c"] == "yes")
    return {
        "flops": a.flops, "bytes": a.bytes, "intensity": a.intensity,
        "ridge_point": a.ridge_point, "compute_time": a.compute_time,
        "memory_time": a.memory_time, "time": a.time, "bound": a.bound,
        "attainable": _roofline.attainable_flops(a.intensity, kw["peak_flops"],
                                                 kw["bandwidth"]),
    }


def _dim(name: str, label: str) -> Input:
    return Input(name, label, "integer", 4096, 1, 262_144, 1)


CALCULATORS._add(Calculator(
    name="gemm",
    title="Tensor-core GEMM calculator",
    description="FLOPs, minimum bytes, arithmetic intensity and roofline time of "
                "C = A·B with A of M×K and B of K×N on a chosen GPU.",
    lesson="roofline_and_tensor_cores",
    inputs=(
        _dim("m", "M (rows of A and C)"), _dim("k", "K (inner dimension)"),
        _dim("n", "N (columns of B and C)"),
        _dtype_input(),
        _yes_no("read_c", "Also read C (β ≠ 0)", "no",
                "C = αAB + βC reads C as well: one more M×N matrix of traffic."),
        *_gpu_inputs("H100 SXM", peak=True, bandwidth=True),
    ),
    outputs=(
        Output("flops", "Operations (2·M·K·N)", "flops"),
        Output("bytes", "Minimum memory traffic", "bytes"),
        Output("intensity", "Arithmetic intensity", "intensity"),
        Output("ridge_point", "GPU ridge point", "intensity"),
        Output("compute_time", "Time at peak compute", "seconds"),
        Output("memory_time", "Time at peak bandwidth", "seconds"),
        Output("time", "Roofline time", "seconds"),
        Output("bound", "Bound by", "text"),
        Output("attainable", "Attainable FLOP/s", "flop/s"),
    ),
    function=_gemm_calc,
    sources=("Williams, Waterman & Patterson 2009 (roofline)", _GPU_NOTE),
))


# ---------------------------------------------------------------------------------------
# Lesson 3: memory_what_fits


def _param_count(**kw: Any) -> dict[str, Any]:
    cfg = _config(kw)
    parts = _transformer.param_breakdown(cfg)
    return {
        "total": _transformer.param_count(cfg),
        "embedding": parts["embedding"], "attention": parts["attention"],
        "mlp": parts["mlp"], "norm": parts["norm"], "lm_head": parts["lm_head"],
        "non_embedding": _transformer.non_embedding_params(cfg),
    }


CALCULATORS._add(Calculator(
    name="param_count",
    title="Parameter counting for transformers",
    description="Exact parameters of a GPT-2- or Llama-style decoder, part by part; the "
                "presets match the models' published counts.",
    lesson="memory_what_fits",
    inputs=_model_inputs("gpt2", advanced=False),
    outputs=(
        Output("total", "Total parameters", "count"),
        Output("embedding", "Embeddings (token + position)", "count"),
        Output("attention", "Attention (all layers)", "count"),
        Output("mlp", "MLP (all layers)", "count"),
        Output("norm", "Norms", "count"),
        Output("lm_head", "Output layer (0 when tied)", "count"),
        Output("non_embedding", "Non-embedding (Kaplan's N)", "count"),
    ),
    function=_param_count,
    sources=("Radford et al. 2019 (GPT-2); Touvron et al. 2023 (Llama 2); the models' "
             "config.json files",),
))


_TRAINING_PRECISIONS = (
    Choice("mixed", "mixed BF16/FP16 + FP32 master (16 B/param with Adam)"),
    Choice("mixed_fp32_grads", "mixed, FP32 gradients (18 B/param)"),
    Choice("fp32", "FP32 (16 B/param with Adam)"),
    Choice("pure_bf16", "pure BF16, no master copy"),
)
_OPTIMIZERS = (Choice("adam", "Adam / AdamW (2 states)"),
               Choice("sgd_momentum", "SGD with momentum (1 state)"),
               Choice("sgd", "plain SGD (no state)"))
_RECOMPUTE = (Choice("none", "none (store everything)"),
              Choice("selective", "selective (attention scores)"),
              Choice("full", "full (store layer inputs only)"))
_TRAINING_PRECISION = Input("precision", "Training precision", "choice", "mixed",
                            choices=_TRAINING_PRECISIONS)
_OPTIMIZER = Input("optimizer", "Optimizer", "choice", "adam", choices=_OPTIMIZERS)
_RECOMPUTE_INPUT = Input("recompute", "Activation recomputation", "choice", "none",
                         choices=_RECOMPUTE)


def _training_memory(**kw: Any) -> dict[str, Any]:
    cfg = _config(kw)
    m = _memory.training_memory(
        cfg, batch=kw["batch"], seq_len=kw["seq_len"], precision=kw["precision"],
        optimizer=kw["optimizer"], recompute=kw["recompute"], tp=kw["tp"],
        sequence_parallel=kw["sequence_parallel"] == "yes", memory_per_gpu=kw["gpu_memory"])
    return {
        "n_params": _transformer.param_count(cfg),
        "bytes_per_param": _memory.bytes_per_param(kw["precision"], kw["optimizer"]),
        "weights": m.weights, "gradients": m.gradients, "optimizer_state": m.optimizer,
        "activations": m.activations, "total": m.total,
        "fits": _memory.fits(m.total, kw["gpu_memory"]), "gpus_needed": m.gpus_needed,
    }


CALCULATORS._add(Calculator(
    name="training_memory",
    title="Training memory calculator",
    description="Weights, gradients, optimizer state and activations per GPU of a "
                "tensor-parallel group, and how many GPUs the whole state needs.",
    lesson="memory_what_fits",
    inputs=(
        *_model_inputs("llama-2-7b"),
        _batch("Micro-batch", unit="sequences"),
        _tokens("seq_len", "Sequence length", 4096),
        replace(_TRAINING_PRECISION,
                help="What each parameter keeps: ZeRO paper §3.1 counts 2 + 2 + 12 bytes."),
        _OPTIMIZER,
        replace(_RECOMPUTE_INPUT,
                help="Korthikanti et al. 2022: selective drops the attention scores, full "
                     "keeps only each layer's input."),
        Input("tp", "Tensor-parallel size", "integer", 1, 1, 512, 1,
              help="GPUs sharing each layer; must divide heads and hidden."),
        _yes_no("sequence_parallel", "Sequence parallel", "no",
                "Megatron sequence parallelism: also splits norms and dropout by the TP "
                "size."),
        *_gpu_inputs("H100 SXM", memory=True),
    ),
    outputs=(
        _N_PARAMS_OUT,
        Output("bytes_per_param", "Model-state bytes per parameter", "number", unit="B"),
        Output("weights", "Weights per GPU", "bytes"),
        Output("gradients", "Gradients per GPU", "bytes"),
        Output("optimizer_state", "Optimizer state + master weights per GPU", "bytes"),
        Output("activations", "Activations per GPU", "bytes",
               help="Korthikanti et al. 2022, Table 2 (GPT-style block, 16-bit)."),
        Output("total", "Total per GPU", "bytes"),
        Output("fits", "Fits on the chosen GPU", "bool"),
        Output("gpus_needed", "GPUs needed for the whole state (fully sharded)", "count"),
    ),
    function=_training_memory,
    sources=("Rajbhandari et al. 2020 (ZeRO) §3.1", "Korthikanti et al. 2022, Table 2"),
))


# ---------------------------------------------------------------------------------------
# Lesson 4: flops_and_scaling


_TRAINING_TOKENS = Input("tokens", "Training tokens", "number", 2000, 0.001, 1_000_000, 1,
                         unit="billion", scale=1e9, dimension="count")


def _training_run(n_params: int, tokens: float, gpus: int,
                  kw: Mapping[str, Any]) -> tuple[float, float]:
    """``(FLOPs, seconds)``: 6·N·D over ``tokens``, and ``gpus`` at the entry's peak and MFU."""
    total = _flops.training_flops(n_params, tokens)
    return total, _flops.training_time(total, gpus, kw["peak_flops"], kw["mfu"])


def _training_flops(**kw: Any) -> dict[str, Any]:
    cfg = _config(kw)
    n = (_transformer.param_count(cfg) if kw["count"] == "all"
         else _transformer.non_embedding_params(cfg))
    total, time = _training_run(n, kw["tokens"], kw["n_devices"], kw)
    return {
        "n_params": n,
        "flops_per_token": _flops.flops_per_token(
            n, layers=cfg.layers, heads=cfg.heads, head_dim=cfg.head_dim,
            seq_len=kw["seq_len"]),
        "attention_per_token": _flops.attention_flops_per_token(
            layers=cfg.layers, heads=cfg.heads, head_dim=cfg.head_dim,
            seq_len=kw["seq_len"]),
        "total": total,
        "time": time,
        "gpu_hours": _cost.gpu_hours(gpus=kw["n_devices"], seconds=time),
        "chinchilla_tokens": _flops.chinchilla_tokens(n),
    }


CALCULATORS._add(Calculator(
    name="training_flops",
    title="Training FLOPs calculator",
    description="6·N·D training FLOPs, the attention term per token, and the days a "
                "cluster needs at an assumed model FLOPs utilisation (MFU).",
    lesson="flops_and_scaling",
    inputs=(
        *_model_inputs("llama-2-7b"),
        Input("count", "N counts", "choice", "all",
              choices=(Choice("all", "all parameters (PaLM, Chinchilla, Llama 3)"),
                       Choice("non_embedding", "non-embedding parameters (Kaplan et al.)")),
              help="Which parameters 6N counts; say which when you quote a figure."),
        replace(_TRAINING_TOKENS, label="Training tokens D",
                help="Llama 2 was trained on 2.0T tokens (Touvron et al. 2023, Table 1)."),
        _tokens("seq_len", "Sequence length", 4096,
                help="Only the attention term (12·L·H·Q·T per token) depends on it."),
        _dtype_input(),
        *_gpu_inputs("A100 80GB", peak=True),
        Input("n_devices", "GPUs", "integer", 1024, 1, 1_000_000, 1),
        _percent("mfu", "MFU (assumed)", 40, 1, 100, 1,
                 help="Model FLOPs utilisation: 35-45 % is typical of large published runs "
                      "(e.g. Llama 3 405B: 38-43 %, Dubey et al. 2024, Table 4)."),
    ),
    outputs=(
        Output("n_params", "N used", "count"),
        Output("flops_per_token", "FLOPs per token (6N + attention)", "flops"),
        Output("attention_per_token", "of which attention (12·L·H·Q·T)", "flops"),
        Output("total", "Training FLOPs (6·N·D)", "flops"),
        _TRAINING_TIME_OUT,
        replace(_GPU_HOURS_OUT, label="GPU-hours (GPUs × time)",
                help="What papers report and clouds bill: the time one GPU alone would "
                    "need. Llama 2 7B reports 184,320 A100 GPU-hours (Touvron et al. 2023, "
                    "Table 2)."),
        Output("chinchilla_tokens", "Chinchilla-optimal tokens (20·N)", "words",
               unit="tokens"),
    ),
    function=_training_flops,
    sources=("Kaplan et al. 2020 §2.1", "Chowdhery et al. 2022 (PaLM), appendix B",
             "Hoffmann et al. 2022 (Chinchilla)"),
))


# ---------------------------------------------------------------------------------------
# Lesson 5: inference_and_kv_cache


def _kv_cache(**kw: Any) -> dict[str, Any]:
    cfg = _config(kw)
    b = _memory.precision_bytes(kw["kv_dtype"])
    mha = _transformer.TransformerConfig(
        hidden=cfg.hidden, layers=cfg.layers, heads=cfg.heads, vocab=cfg.vocab,
        ffn=cfg.ffn, kv_heads=cfg.heads, head_dim=cfg.head_dim)
    return {
        "per_token": _inference.kv_cache_bytes_per_token(cfg, bytes_per_element=b),
        "total": _inference.kv_cache_bytes(cfg, seq_len=kw["seq_len"], batch=kw["batch"],
                                           bytes_per_element=b),
        "total_mha": _inference.kv_cache_bytes(mha, seq_len=kw["seq_len"],
                                               batch=kw["batch"], bytes_per_element=b),
    }


CALCULATORS._add(Calculator(
    name="kv_cache",
    title="KV-cache calculator",
    description="Bytes of keys and values a model keeps for every token in flight, with "
                "grouped-query attention counted right.",
    lesson="inference_and_kv_cache",
    inputs=(
        *_model_inputs("llama-3-8b"),
        _tokens("seq_len", "Context length", 8192),
        _batch("Concurrent sequences"),
        _storage_input("kv_dtype", "KV-cache precision"),
    ),
    outputs=(
        Output("per_token", "Per token (2·L·kv_heads·head_dim·bytes)", "bytes",
               binary=True),
        Output("total", "KV cache", "bytes", binary=True),
        Output("total_mha", "Same model with one KV head per query head", "bytes",
               binary=True),
    ),
    function=_kv_cache,
    sources=("Ainslie et al. 2023 (GQA)", "the models' config.json files"),
))


def _inference_calc(**kw: Any) -> dict[str, Any]:
    cfg = _config(kw)
    n = _transformer.param_count(cfg)
    shape = {"layers": cfg.layers, "heads": cfg.heads, "head_dim": cfg.head_dim}
    weights = _memory.weight_bytes(n, precision=kw["precision"])
    kv_b = _memory.precision_bytes(kw["kv_dtype"])
    context = kw["prompt"] + kw["new_tokens"]
    kv_seq = _inference.kv_cache_bytes(cfg, seq_len=context, batch=1, bytes_per_element=kv_b)
    speed = _inference.decode_speed(
        n_params=n, weight_bytes=weights, batch=kw["batch"], kv_bytes_per_sequence=kv_seq,
        peak_flops=kw["peak_flops"], bandwidth=kw["bandwidth"])
    return {
        "n_params": n,
        "prefill_flops": _inference.prefill_flops(n, kw["prompt"], batch=kw["batch"],
                                                  **shape),
        "decode_flops": _inference.decode_flops(n, kw["new_tokens"], context_len=kw["prompt"],
                                                batch=kw["batch"], **shape),
        "weights": weights,
        "kv_cache": _inference.kv_cache_bytes(cfg, seq_len=context, batch=kw["batch"],
                                              bytes_per_element=kv_b),
        "prefill_time": _inference.prefill_time(
            n_params=n, tokens=kw["prompt"], peak_flops=kw["peak_flops"],
            bandwidth=kw["bandwidth"], weight_bytes=weights, batch=kw["batch"], **shape),
        "step_time": speed.step_time,
        "decode_total": speed.tokens_per_second,
        "decode_per_user": speed.per_sequence,
        "ceiling": _inference.decode_ceiling_tokens_per_second(
            weight_bytes=weights, bandwidth=kw["bandwidth"], batch=kw["batch"],
            kv_bytes_per_sequence=kv_seq),
        "compute_bound_batch": _inference.decode_compute_bound_batch(
            peak_flops=kw["peak_flops"], bandwidth=kw["bandwidth"],
            bytes_per_param=_memory.precision_bytes(kw["precision"])),
        "crossover": _inference.attention_crossover_tokens(n, **shape),
    }


CALCULATORS._add(Calculator(
    name="inference",
    title="Inference FLOPs and KV cache",
    description="Prefill and decode FLOPs, the KV cache, and the memory-bandwidth ceiling "
                "on decode speed for a model on a GPU.",
    lesson="inference_and_kv_cache",
    inputs=(
        *_model_inputs("llama-3-8b"),
        _tokens("prompt", "Prompt tokens", 8192),
        _tokens("new_tokens", "Generated tokens", 512),
        _batch("Batch (sequences)"),
        _storage_input("precision", "Weights precision"),
        _storage_input("kv_dtype", "KV-cache precision"),
        _dtype_input("dtype", "Compute precision"),
        *_gpu_inputs("H100 SXM", peak=True, bandwidth=True),
    ),
    outputs=(
        _N_PARAMS_OUT,
        Output("prefill_flops", "Prefill FLOPs (2·N·T + attention)", "flops"),
        Output("decode_flops", "Decode FLOPs (2·N per token + attention)", "flops"),
        _WEIGHTS_OUT,
        Output("kv_cache", "KV cache at the end", "bytes"),
        Output("prefill_time", "Prefill time (roofline)", "seconds"),
        Output("step_time", "Decode step time at the end (roofline)", "seconds"),
        Output("decode_total", "Decode speed at the end, all sequences", "tokens/s",
               help="batch ÷ step time: what the GPU produces for all users together."),
        Output("decode_per_user", "Decode speed at the end, each sequence", "tokens/s",
               help="1 ÷ step time: what one user sees; batching lowers it."),
        Output("ceiling", "Decode ceiling, all sequences", "tokens/s"),
        Output("compute_bound_batch", "Batch where decode turns compute-bound", "number",
               unit="sequences"),
        Output("crossover", "Prompt length where attention FLOPs equal weight FLOPs",
               "number", unit="tokens"),
    ),
    function=_inference_calc,
    sources=("Pope et al. 2022 (Efficiently scaling transformer inference)",
             "Chowdhery et al. 2022 (PaLM), appendix B", _GPU_NOTE),
))


# ---------------------------------------------------------------------------------------
# Lesson 6: distributed_math

_GRAD_DTYPES = (Choice("bf16", "BF16 (2 bytes)"), Choice("fp16", "FP16 (2 bytes)"),
                Choice("fp32", "FP32 (4 bytes)"))

# The cluster of a data-parallel run (also in the planning dashboard, lesson 9).
_GRAD_DTYPE = Input("grad_dtype", "Gradient precision", "choice", "bf16", choices=_GRAD_DTYPES)
_N_GPUS = Input("n_gpus", "GPUs", "integer", 64, 1, 100_000, 1)
_GPUS_PER_NODE = Input(
    "gpus_per_node", "GPUs per node", "integer", 8, 1, 72, 1,
    help="GPUs sharing NVLink: the largest tensor-parallel size considered.")
_NETWORK = Input("bandwidth", "Network bandwidth per GPU", "number", 50, 0.1, 10_000, 1,
                 unit="GB/s", scale=1e9, dimension="bytes/s")
_LATENCY = Input("latency", "Latency per all-reduce (α)", "number", 10, 0, 100_000, 1,
                 unit="µs", scale=1e-6, dimension="seconds")


def _overlap(default: float, help: str = "") -> Input:
    return _percent("overlap", "Overlap of communication with compute", default, 0, 100, 5,
                    help=help)


def _scaling(**kw: Any) -> dict[str, Any]:
    grads = _memory.weight_bytes(kw["n_params"], precision=kw["grad_dtype"])
    comm = _distributed.collective_time("all_reduce", grads, kw["n_gpus"],
                                        bandwidth=kw["bandwidth"], latency=kw["latency"])
    efficiency = _distributed.scaling_efficiency(kw["compute_time"], comm, kw["overlap"])
    layout = _distributed.recommend_layout(
        n_params=kw["n_params"], gpu_memory=kw["gpu_memory"], n_gpus=kw["n_gpus"],
        gpus_per_node=kw["gpus_per_node"])
    return {
        "gradient_bytes": grads,
        "volume": _distributed.allreduce_bytes_per_rank(grads, kw["n_gpus"]),
        "comm_time": comm,
        "efficiency": efficiency,
        "speedup": _distributed.effective_speedup(kw["n_gpus"], efficiency),
        "layout": layout.name,
        "layout_memory": layout.memory_per_gpu,
        "reason": layout.reason,
    }


CALCULATORS._add(Calculator(
    name="scaling_efficiency",
    title="Scaling efficiency calculator",
    description="Data-parallel training: the gradient all-reduce each step (ring, "
                "alpha-beta model), how much of it compute hides, and the resulting "
                "speed-up; plus the cheapest layout whose model state fits.",
    lesson="distributed_math",
    inputs=(
        *_params_inputs(),
        replace(_GRAD_DTYPE, help="Bytes per gradient value in the all-reduce."),
        _N_GPUS,
        _GPUS_PER_NODE,
        replace(_NETWORK, label="Bus bandwidth per GPU",
                help="One-way network bandwidth per GPU: 400 Gb/s InfiniBand NDR is 50 GB/s "
                     "(one NIC per GPU, as in NVIDIA DGX H100)."),
        replace(_LATENCY, help="Fixed cost of one collective; fit it to measurements "
                               "(lesson 6)."),
        Input("compute_time", "Compute time per step", "number", 5, 0.001, 100_000, 0.1,
              unit="s", dimension="seconds",
              help="Forward + backward of one step on one GPU: measure it, or compute "
                   "6·N·tokens ÷ (peak·MFU) with the training-FLOPs calculator."),
        _overlap(0, help="Share of the all-reduce hidden behind the backward pass (bucketed "
                         "gradients overlap a large part of it)."),
        *_gpu_inputs("H100 SXM", memory=True),
    ),
    outputs=(
        Output("gradient_bytes", "Gradients to all-reduce", "bytes"),
        Output("volume", "Sent per GPU (2(N−1)/N × size)", "bytes"),
        Output("comm_time", "Communication time (α + volume ÷ bandwidth)", "seconds"),
        _EFFICIENCY_OUT,
        Output("speedup", "Effective speed-up", "ratio"),
        Output("layout", "Recommended layout (model state only)", "text"),
        Output("layout_memory", "Memory per GPU in that layout", "bytes"),
        Output("reason", "Why", "text"),
    ),
    function=_scaling,
    sources=("Patarasuk & Yuan 2009 (ring all-reduce)", "nccl-tests doc/PERFORMANCE.md",
             "Rajbhandari et al. 2020 (ZeRO)"),
))


def _zero(**kw: Any) -> dict[str, Any]:
    per_stage = {s: _distributed.zero_memory_per_gpu(
        kw["n_params"], stage=s, dp=kw["dp"], optimizer_bytes=kw["optimizer_bytes"])
        for s in range(4)}
    chosen = per_stage[int(kw["stage"])]
    return {
        "stage0": per_stage[0], "stage1": per_stage[1], "stage2": per_stage[2],
        "stage3": per_stage[3], "chosen": chosen,
        "fits": _memory.fits(chosen, kw["gpu_memory"]),
        "headroom": _memory.headroom(chosen, kw["gpu_memory"]),
    }


CALCULATORS._add(Calculator(
    name="zero",
    title="ZeRO optimizer analysis",
    description="Model-state memory per GPU for ZeRO stages 0-3: partitioning optimizer "
                "states, then gradients, then parameters over the data-parallel GPUs.",
    lesson="distributed_math",
    inputs=(
        *_params_inputs(CUSTOM, n_params=7.5),
        Input("dp", "Data-parallel GPUs (Nd)", "integer", 64, 1, 100_000, 1),
        Input("optimizer_bytes", "Optimizer bytes per parameter (K)", "number", 12, 0, 64,
              1, unit="bytes", dimension="bytes",
              help="12 for mixed-precision Adam: FP32 master weights, momentum and "
                   "variance (ZeRO paper §3.1)."),
        Input("stage", "ZeRO stage", "choice", "3",
              choices=(Choice("0", "0: plain data parallel"),
                       Choice("1", "1: optimizer states partitioned"),
                       Choice("2", "2: + gradients"), Choice("3", "3: + parameters"))),
        *_gpu_inputs("A100 80GB", memory=True),
    ),
    outputs=(
        Output("stage0", "Stage 0: (2+2+K)Ψ", "bytes"),
        Output("stage1", "Stage 1: 4Ψ + KΨ/Nd", "bytes"),
        Output("stage2", "Stage 2: 2Ψ + (2+K)Ψ/Nd", "bytes"),
        Output("stage3", "Stage 3: (4+K)Ψ/Nd", "bytes"),
        Output("chosen", "Chosen stage, per GPU", "bytes"),
        Output("fits", "Fits on the chosen GPU (model state only)", "bool"),
        Output("headroom", "Left for activations (negative: short by)", "bytes"),
    ),
    function=_zero,
    sources=("Rajbhandari et al. 2020, ZeRO, Figure 1 (7.5B parameters, Nd = 64, K = 12)",),
))


def _pipeline(**kw: Any) -> dict[str, Any]:
    slots = _distributed.pipeline_schedule(kw["stages"], kw["microbatches"],
                                           schedule=kw["schedule"],
                                           interleave=kw["interleave"])
    return {
        "bubble": _distributed.pipeline_bubble_fraction(kw["stages"], kw["microbatches"],
                                                        kw["interleave"]),
        "makespan": _distributed.pipeline_makespan(slots),
    }


CALCULATORS._add(Calculator(
    name="pipeline_bubble",
    title="Pipeline bubble",
    description="Idle time of pipeline parallelism: (p − 1)/(v·m) of the ideal time, and "
                "the length of the simulated schedule.",
    lesson="distributed_math",
    inputs=(
        Input("stages", "Pipeline stages p", "integer", 4, 1, 16, 1, slider=True),
        Input("microbatches", "Micro-batches m", "integer", 8, 1, 64, 1, slider=True),
        Input("schedule", "Schedule", "choice", "1f1b",
              choices=(Choice("gpipe", "GPipe (all forwards, then backwards)"),
                       Choice("1f1b", "1F1B (one forward, one backward)"),
                       Choice("interleaved", "interleaved 1F1B (v chunks per GPU)"))),
        Input("interleave", "Model chunks per GPU v", "integer", 1, 1, 4, 1,
              help="Only the interleaved schedule uses v > 1; it needs m to be a multiple "
                   "of p."),
    ),
    outputs=(
        Output("bubble", "Bubble, as a share of the ideal time", "percent"),
        Output("makespan", "Iteration length (forward = 1, backward = 2)", "number",
               unit="time units"),
    ),
    function=_pipeline,
    sources=("Huang et al. 2019 (GPipe)", "Narayanan et al. 2021 §2.2"),
))


# ---------------------------------------------------------------------------------------
# Lesson 7: cost_economics. Prices are dated examples with a source, never current facts.

_PRICE_NOTE = "Example price, dated; prices change: use a current quote for real plans."


def _utilization(help: str) -> Input:
    return _percent("utilization", "Utilisation", 100, 1, 100, 1, help=help)


def _gpu_hour_price(others: str) -> Input:
    """The price of a GPU-hour, with the AWS p5 example and what ``others`` charged."""
    return Input("usd_per_gpu_hour", "Price per GPU-hour", "number", 12.29, 0, 1000, 0.01,
                 unit="$/h", dimension="usd",
                 help="Example: $98.32 per hour for AWS p5.48xlarge (8× H100) on demand, "
                      "us-east-1, July 2023, i.e. $12.29 per GPU-hour; " + others + " "
                      + _PRICE_NOTE)


def _tco(**kw: Any) -> dict[str, Any]:
    power = dict(power_watts=kw["power_watts"], usd_per_kwh=kw["usd_per_kwh"],
                 pue=kw["pue"], utilization=kw["utilization"])
    owned = _cost.on_prem_breakdown(hardware_usd=kw["hardware_usd"], years=kw["years"],
                                    **power)
    return {
        "annual_power": _cost.on_prem_breakdown(hardware_usd=0, years=1, **power).power,
        "power": owned.power,
        "on_prem": owned.total,
        "cloud": _cost.cloud_cost(usd_per_hour=kw["cloud_usd_per_hour"], years=kw["years"],
                                  utilization=kw["utilization"]),
        "breakeven": _cost.breakeven_months(hardware_usd=kw["hardware_usd"],
                                            cloud_usd_per_hour=kw["cloud_usd_per_hour"],
                                            **power),
    }


CALCULATORS._add(Calculator(
    name="tco",
    title="Total cost of ownership: buy or rent",
    description="An 8-GPU server bought and powered for some years, against renting the "
                "same in the cloud by the hour. Hardware and power only: staff, network, "
                "space and financing come on top.",
    lesson="cost_economics",
    inputs=(
        Input("hardware_usd", "Hardware price", "number", 270_000, 0, 1e9, 1000, unit="$",
              dimension="usd",
              help="Example: about $270,000 for an NVIDIA DGX H100 (8 GPUs), SemiAnalysis's "
                   "estimate of May 2023 as cited by Epoch AI. " + _PRICE_NOTE),
        Input("power_watts", "Power draw", "number", 10_200, 0, 1e8, 100, unit="W",
              dimension="count",
              help="DGX H100: about 10.2 kW maximum system power (NVIDIA DGX H100 "
                   "datasheet, 2023)."),
        Input("pue", "PUE", "number", 1.58, 1, 3, 0.01,
              help="Facility power ÷ IT power: industry average 1.58 in the Uptime Institute "
                   "Global Data Center Survey 2023; about 1.1 for the best hyperscale halls."),
        Input("usd_per_kwh", "Electricity price", "number", 0.0806, 0, 10, 0.001,
              unit="$/kWh", dimension="usd",
              help="Example: US average industrial price in 2023, 8.06 ¢/kWh (EIA). "
                   + _PRICE_NOTE),
        Input("cloud_usd_per_hour", "Cloud price (same 8 GPUs)", "number", 98.32, 0, 1e6,
              0.01, unit="$/h", dimension="usd",
              help="Example: AWS p5.48xlarge (8× H100) on demand, us-east-1, at its launch "
                   "in July 2023 (The Next Platform, 2023-07-27); reserved and smaller "
                   "providers' prices are much lower. " + _PRICE_NOTE),
        Input("years", "Years", "number", 5, 0.1, 20, 0.5, unit="years", dimension="count"),
        _utilization("Share of hours the machine works: the cloud bills only those hours, "
                     "the owned machine draws power only then (idle power ignored)."),
    ),
    outputs=(
        Output("annual_power", "Power per year", "usd"),
        Output("power", "Power over the period", "usd"),
        Output("on_prem", "On-premises total (hardware + power)", "usd"),
        Output("cloud", "Cloud total", "usd"),
        Output("breakeven", "Owning is cheaper after", "number", unit="months"),
    ),
    function=_tco,
    sources=("The Green Grid 2007 (PUE)", "Uptime Institute Global Data Center Survey 2023",
             "EIA Electric Power Annual 2023", "NVIDIA DGX H100 datasheet"),
))


def _cost_per_token(**kw: Any) -> dict[str, Any]:
    return {"per_1k": _cost.cost_per_1k_tokens(
        usd_per_gpu_hour=kw["usd_per_gpu_hour"], gpus=kw["gpus"],
        tokens_per_second=kw["tokens_per_second"], utilization=kw["utilization"])}


# Llama 2 7B's BF16 weights read once per token from one H100 SXM: the batch-1 ceiling
# quoted in the help text below, from the calculators rather than typed in.
_CEILING_7B_H100 = _inference.decode_ceiling_tokens_per_second(
    weight_bytes=_memory.weight_bytes(
        _transformer.param_count(_transformer.preset("llama-2-7b")), precision="bf16"),
    bandwidth=_hardware.gpu("H100 SXM").bandwidth)


CALCULATORS._add(Calculator(
    name="cost_per_token",
    title="Inference cost per token",
    description="What 1,000 generated tokens cost from the price of a GPU-hour and the "
                "throughput the GPUs actually sustain.",
    lesson="cost_economics",
    inputs=(
        _gpu_hour_price("smaller providers charged $2-3."),
        Input("gpus", "GPUs serving", "integer", 1, 1, 100_000, 1),
        Input("tokens_per_second", "Throughput, all sequences", "number", 1000, 0.001, 1e9,
              10, unit="tokens/s", dimension="tokens/s",
              help="Aggregate tokens/s of all the GPUs while they work. Llama 2 7B in BF16 "
                   f"on one H100 SXM is capped at {_CEILING_7B_H100:,.0f} tokens/s at batch "
                   "1 (the decode-ceiling calculator); batching raises it."),
        _utilization("Share of the paid hours the GPUs have work: idle hours are billed "
                     "too, so 50 % doubles the cost per token. Leave 100 % if the throughput "
                     "is already averaged over every paid hour."),
    ),
    outputs=(Output("per_1k", "Cost per 1,000 tokens", "usd"),),
    function=_cost_per_token,
))


# ---------------------------------------------------------------------------------------
# Lesson 8: optimisations


def _flash(**kw: Any) -> dict[str, Any]:
    e = _memory.precision_bytes(kw["dtype"])
    shape = dict(seq_len=kw["seq_len"], head_dim=kw["head_dim"], batch=kw["batch"],
                 heads=kw["heads"], bytes_per_element=e)
    block_c, block_r, t_c = _optimisations.flash_attention_tiles(
        seq_len=kw["seq_len"], head_dim=kw["head_dim"], sram_bytes=kw["sram_bytes"],
        bytes_per_element=e)
    return {
        "standard": _optimisations.standard_attention_hbm_bytes(**shape),
        "flash": _optimisations.flash_attention_hbm_bytes(sram_bytes=kw["sram_bytes"],
                                                          **shape),
        "block_c": block_c, "block_r": block_r, "passes": t_c,
    }


CALCULATORS._add(Calculator(
    name="flash_attention",
    title="FlashAttention: bytes to and from HBM",
    description="HBM traffic of one attention forward pass: standard attention writes and "
                "re-reads the N×N scores; FlashAttention keeps tiles in on-chip SRAM.",
    lesson="optimisations",
    inputs=(
        Input("seq_len", "Sequence length N", "integer", 1024, 1, 262_144, 1, unit="tokens",
              help="The defaults are GPT-2 medium as in Dao et al. 2022, Figure 2: N = 1024, "
                   "d = 64, 16 heads, batch 64, FP16, on an A100."),
        Input("head_dim", "Head size d", "integer", 64, 1, 1024, 1),
        Input("heads", "Heads", "integer", 16, 1, 1024, 1),
        _batch("Batch", 64),
        Input("dtype", "Precision", "choice", "fp16",
              choices=(Choice("bf16", "BF16"), Choice("fp16", "FP16"),
                       Choice("fp32", "FP32"))),
        Input("sram_bytes", "On-chip SRAM per SM (M)", "number", 192, 1, 100_000, 1,
              unit="KiB", scale=1024, dimension="bytes",
              help="A100: 192 KiB of combined L1/shared memory per SM (NVIDIA A100 "
                   "whitepaper); H100: 256 KiB."),
    ),
    outputs=(
        Output("standard", "Standard attention (4Nd + 4N² per head)", "bytes"),
        Output("flash", "FlashAttention (Algorithm 1)", "bytes"),
        Output("block_c", "Key/value block B_c", "count"),
        Output("block_r", "Query block B_r", "count"),
        Output("passes", "Outer passes T_c", "count"),
    ),
    function=_flash,
    sources=("Dao et al. 2022, FlashAttention, Algorithms 0 and 1, Theorem 2",),
))


def _checkpointing(**kw: Any) -> dict[str, Any]:
    cfg = _config(kw)
    per_layer = _memory.activation_bytes_per_layer(
        seq_len=kw["seq_len"], batch=kw["batch"], hidden=cfg.hidden, heads=cfg.heads)
    segments = kw["segments"] or None  # 0: the best number, about sqrt(L)
    return {
        "per_layer": per_layer,
        "without": _optimisations.activation_memory_without_checkpointing(
            layers=cfg.layers, per_layer_bytes=per_layer),
        "with": _optimisations.checkpoint_memory(layers=cfg.layers,
                                                 per_layer_bytes=per_layer,
                                                 segments=segments),
        "best_segments": _optimisations.optimal_segments(cfg.layers),
        "overhead": _optimisations.recompute_overhead(recompute="full"),
    }


CALCULATORS._add(Calculator(
    name="checkpointing",
    title="Gradient checkpointing trade-off",
    description="Store only segment boundaries and recompute each segment in the backward "
                "pass: activation memory falls to about 2√L layers for one extra forward "
                "pass.",
    lesson="optimisations",
    inputs=(
        *_model_inputs("llama-2-7b"),
        _batch("Micro-batch", unit="sequences"),
        _tokens("seq_len", "Sequence length", 4096),
        Input("segments", "Segments k", "integer", 0, 0, 1000, 1,
              help="0 picks the best k (about √L); k = 1 or k = L saves nothing."),
    ),
    outputs=(
        Output("per_layer", "Activations per layer", "bytes",
               help="Korthikanti et al. 2022, no recomputation, GPT-style block."),
        Output("without", "Activations without checkpointing (L layers)", "bytes"),
        Output("with", "With checkpointing (k + ⌈L/k⌉ layers)", "bytes",
               help="k checkpoints, each counted as one layer's worth (Chen et al. 2016), "
                    "plus the ⌈L/k⌉ layers of the segment being recomputed."),
        Output("best_segments", "Best number of segments", "count",
               help="The k with the least memory; among equally good k, the one nearest "
                    "√L."),
        Output("overhead", "Extra compute (one more forward pass)", "percent"),
    ),
    function=_checkpointing,
    sources=("Chen et al. 2016, Training Deep Nets with Sublinear Memory Cost",
             "Korthikanti et al. 2022"),
))


# ---------------------------------------------------------------------------------------
# Lesson 9: planning_dashboard


def _planning(**kw: Any) -> dict[str, Any]:
    cfg = _config(kw)
    n = _transformer.param_count(cfg)
    n_gpus = kw["n_gpus"]
    advised = _distributed.recommend_layout(
        n_params=n, gpu_memory=kw["gpu_memory"], n_gpus=n_gpus,
        gpus_per_node=kw["gpus_per_node"], precision=kw["precision"],
        optimizer=kw["optimizer"], cfg=cfg, batch=kw["batch"], seq_len=kw["seq_len"],
        recompute=kw["recompute"])
    if kw["layout"] == "manual":
        chosen = _distributed.layout_memory(
            n_params=n, n_gpus=n_gpus, tp=kw["tp"], pp=kw["pp"],
            zero_stage=kw["zero_stage"], precision=kw["precision"],
            optimizer=kw["optimizer"], cfg=cfg, batch=kw["batch"], seq_len=kw["seq_len"],
            recompute=kw["recompute"])
        dp, tp, pp, stage = chosen.dp, chosen.tp, chosen.pp, chosen.zero_stage
        need, shard = chosen.total, chosen.params_per_gpu
        fits = _memory.fits(need, kw["gpu_memory"])
    else:
        dp, tp, pp, stage = advised.dp, advised.tp, advised.pp, advised.zero_stage
        need, shard, fits = advised.memory_per_gpu, advised.params_per_gpu, advised.fits
    total, time = _training_run(n, kw["tokens"], n_gpus, kw)
    step = _training_run(n, kw["step_tokens"], n_gpus, kw)[1]  # one global batch
    # each data-parallel rank synchronises the gradients of its model-parallel shard
    comm = _distributed.data_parallel_sync_time(
        shard, dp=dp, zero_stage=stage,
        bytes_per_value=_memory.precision_bytes(kw["grad_dtype"]),
        bandwidth=kw["bandwidth"], latency=kw["latency"])
    efficiency = _distributed.scaling_efficiency(step, comm, kw["overlap"])
    if not fits:
        bottleneck = ("memory: this layout does not fit on these GPUs" if kw["layout"] == "manual"
                      else "memory: no layout fits on these GPUs")
    elif efficiency < 0.5:  # exposed communication takes longer than the compute
        bottleneck = "communication: the gradient synchronisation outlasts the compute"
    else:
        bottleneck = "compute: the GPUs' arithmetic sets the pace"
    return {
        "n_params": n, "layout": advised.name,
        "degrees": f"dp {dp} × tp {tp} × pp {pp}, ZeRO stage {stage}",
        "memory_per_gpu": need, "fits": fits,
        "reason": advised.reason, "total_flops": total,
        "tokens_per_second": _flops.tokens_per_second(
            n_devices=n_gpus, peak_flops=kw["peak_flops"], mfu=kw["mfu"],
            flops_per_token=_flops.flops_per_token(n)),
        "step_compute": step, "comm_time": comm, "efficiency": efficiency,
        "bottleneck": bottleneck, "time": time,
        "gpu_hours": _cost.gpu_hours(gpus=n_gpus, seconds=time),
        "cost": _cost.run_cost(usd_per_gpu_hour=kw["usd_per_gpu_hour"], gpus=n_gpus,
                               seconds=time),
    }


CALCULATORS._add(Calculator(
    name="planning",
    title="Plan a training run",
    description="Choose a model, a GPU, a cluster, a precision, a batch and a layout (or let "
                "the advisor pick one): memory per GPU, throughput, step time, communication, "
                "bottleneck, training days and cost, every figure from the calculators with "
                "its inputs in view.",
    lesson="planning_dashboard",
    inputs=(
        *_model_inputs("llama-2-7b"),
        _dtype_input(),
        # down to 1 GFLOP/s: a CPU's measured rate (gpulesson.machine) is a valid "GPU" here
        *_gpu_inputs("H100 SXM", memory=True, peak=replace(
            _PEAK, min=0.001,
            help="Dense peak for the chosen precision (not the 2:4-sparse headline), or a "
                 "measured rate: gpulesson.machine.this_machine() for this computer.")),
        _N_GPUS,
        _GPUS_PER_NODE,
        Input("layout", "Parallel layout", "choice", "recommended",
              choices=(Choice("recommended", "recommended (cheapest that fits)"),
                       Choice("manual", "as set below (tp, pp, ZeRO stage)")),
              help="The advisor tries data parallel, ZeRO-1/2/3, tensor parallel in a node, "
                   "then pipeline stages, and takes the first that fits; or set your own."),
        Input("tp", "Tensor-parallel size (if set)", "integer", 1, 1, 1024, 1,
              help="Used when the layout is set: splits every weight matrix; must divide "
                   "the heads. tp × pp must divide the GPUs; dp is the rest."),
        Input("pp", "Pipeline stages (if set)", "integer", 1, 1, 1024, 1,
              help="Used when the layout is set: at most the number of layers; the largest "
                   "stage holds ⌈layers ÷ pp⌉ layers."),
        Input("zero_stage", "ZeRO stage (if set)", "integer", 1, 0, 3, 1,
              help="Used when the layout is set: 0 none, 1 optimizer states, 2 + gradients, "
                   "3 + parameters, partitioned across the data-parallel GPUs."),
        _TRAINING_PRECISION,
        _OPTIMIZER,
        _batch("Micro-batch per GPU", unit="sequences"),
        _tokens("seq_len", "Sequence length", 4096),
        replace(_RECOMPUTE_INPUT, default="selective"),
        _TRAINING_TOKENS,
        Input("step_tokens", "Tokens per step (global batch)", "number", 4, 0.001, 1000,
              0.5, unit="million", scale=1e6, dimension="count",
              help="Llama 2 used 4M tokens per step (Touvron et al. 2023, §2.2)."),
        _percent("mfu", "MFU (assumed)", 40, 1, 100, 1,
                 help="Model FLOPs utilisation of the whole run: an assumption, shown so "
                      "you can question it (large published runs report 35-45 %)."),
        _GRAD_DTYPE,
        replace(_NETWORK, help="One-way, per GPU: 400 Gb/s InfiniBand NDR is 50 GB/s."),
        _LATENCY,
        _overlap(50),
        _gpu_hour_price("reserved clusters and smaller providers charged a fraction of "
                        "that."),
    ),
    outputs=(
        _N_PARAMS_OUT,
        Output("layout", "Recommended layout", "text"),
        Output("degrees", "Layout used", "text"),
        Output("memory_per_gpu", "Memory per GPU", "bytes",
               help="Model state after ZeRO plus stored activations, on the GPUs of the "
                    "largest pipeline stage."),
        Output("fits", "Fits", "bool"),
        Output("reason", "Why the recommended layout", "text"),
        Output("total_flops", "Training FLOPs (6·N·D)", "flops"),
        Output("tokens_per_second", "Throughput at that MFU (all GPUs)", "tokens/s"),
        Output("step_compute", "Compute time per step at that MFU", "seconds"),
        Output("comm_time", "Gradient synchronisation per step", "seconds"),
        _EFFICIENCY_OUT,
        Output("bottleneck", "Bottleneck", "text"),
        _TRAINING_TIME_OUT,
        _GPU_HOURS_OUT,
        Output("cost", "Cost at that price", "usd"),
    ),
    function=_planning,
    sources=("Narayanan et al. 2021 (Megatron-LM at scale)", "Rajbhandari et al. 2020",
             "Korthikanti et al. 2022", "Chowdhery et al. 2022, appendix B",
             "Dubey et al. 2024 (Llama 3), section 3.3"),
))
