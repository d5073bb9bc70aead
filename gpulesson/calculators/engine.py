"""The engine: inputs resolved, validated, converted to SI units and computed.

A calculator's inputs are entered in the units shown to the reader (a bandwidth in TB/s);
each :class:`~gpulesson.calculators.spec.Input` declares a ``scale`` to the SI base unit
the calculator functions take (``3.35 TB/s × 1e12 = 3.35e12 B/s``). This module turns
what a reader typed into those SI keyword arguments and calls the entry's function:

* :func:`resolve`: every input as shown, from the defaults, the presets and what is given;
* :func:`apply_preset`: what one preset choice fills in (a :class:`Keyed` fill reads its
  key, such as the precision, from the other inputs);
* :func:`si_inputs`: the validated SI keyword arguments (``ValueError`` naming the input
  and its allowed range);
* :func:`compute`, :func:`sweep` and :func:`example`: the outputs in SI units
  (:func:`outputs` from SI arguments already validated).

Standard library only: this module runs in the browser (Pyodide).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from gpulesson import _validate, units
from gpulesson.calculators.formatting import MAX_SAFE_INTEGER, message_number
from gpulesson.calculators.registry import get
from gpulesson.calculators.spec import CUSTOM, Calculator, Input, Keyed

__all__ = ["apply_preset", "compute", "example", "outputs", "range_rule", "resolve", "si_inputs",
           "sweep"]

_INT_MAX = int(_validate.FLOAT_MAX)  # an integer beyond it cannot become a float


def _nice(value: float) -> float | int:
    """A shown value without float noise: 12 significant digits, ints kept as ints."""
    if isinstance(value, int):
        return value
    rounded = float(f"{value:.12g}")
    return int(rounded) if rounded.is_integer() and abs(rounded) < MAX_SAFE_INTEGER else rounded


#: A preset's figure of more than :data:`LONG_FIGURE` significant digits (a measured byte
#: count, a fitted ratio) goes into a form's box with :data:`SHOWN_DIGITS` of them and every
#: digit before the point: 85.52 GB for the 85,520,809,984 bytes an H100 reports, 80.09 %
#: for a measured efficiency of 0.800910010111; a datasheet's 1,978.9 TFLOP/s stays as
#: printed. The calculation takes the exact figure while the box still shows the preset's
#: (:func:`si_inputs`).
SHOWN_DIGITS = 4
LONG_FIGURE = 6


def _in_box(value: float | int) -> float | int:
    """``value`` as a preset writes it into a box (:data:`SHOWN_DIGITS`)."""
    if isinstance(value, int) or value == 0 or not math.isfinite(value):
        return value
    if units.significant_figures(value) <= LONG_FIGURE:
        return value
    decimals = max(SHOWN_DIGITS - 1 - math.floor(math.log10(abs(value))), 0)
    return _nice(round(value, decimals))


def _fill_value(calc: Calculator, preset: Input, choice: str, target: str, raw: Any,
                values: Mapping[str, Any], *, exact: bool = False) -> Any:
    """The value a preset puts into ``target`` (converted from SI to its unit): as its box
    shows it, or ``exact``."""
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
    value = _nice(raw / spec.scale)
    return value if exact else _in_box(value)


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
    """All inputs of ``name`` in shown units, as a form's boxes show them: defaults, then
    presets, then ``inputs``.

    A preset named in ``inputs`` (or by default) fills the inputs it covers unless they are
    given explicitly, to :data:`SHOWN_DIGITS` (the calculation takes its exact figures:
    :func:`si_inputs`). Presets and choices are validated here (a preset fill may depend on
    a choice, so a bad one raises ``ValueError`` naming it); numbers by :func:`compute`.
    """
    return _resolved(name, inputs, exact=False)


def _resolved(name: str, inputs: Mapping[str, Any], *, exact: bool) -> dict[str, Any]:
    """:func:`resolve`; with ``exact``, a preset's exact figures in the boxes it fills and
    in those that still show its figure (rounded: :func:`_in_box`)."""
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
                filled = _fill_value(calc, spec, choice, target, raw, values, exact=exact)
                if target not in inputs or (exact and _same_figure(inputs[target], filled)):
                    values[target] = filled
    return {i.name: values.get(i.name) for i in calc.inputs}


def _same_figure(given: Any, exact: Any) -> bool:
    """Whether ``given`` is ``exact`` as a preset shows it in a box (85.52 for 85.5208...)."""
    if isinstance(given, bool) or not isinstance(given, (int, float)):
        return False
    if isinstance(exact, bool) or not isinstance(exact, (int, float)):
        return False
    return given == exact or given == _in_box(exact)


def _range_text(spec: Input) -> str:
    if spec.unit.startswith("$"):  # "$0 and $1000/h", as the outputs write dollars
        per = spec.unit[1:]
        low, zero = spec.min, ""
        if spec.smallest is not None:
            low, zero = spec.smallest, f", or $0{per}"
        return f"between ${_shown(low)}{per} and ${_shown(spec.max)}{per}{zero}"
    unit = f" {spec.unit}" if spec.unit else ""
    if spec.smallest is not None:
        return f"between {_shown(spec.smallest)} and {_shown(spec.max)}{unit}, or 0"
    return f"between {_shown(spec.min)} and {_shown(spec.max)}{unit}"


def _shown(value: float | None) -> str:
    return message_number(value)


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
    if isinstance(value, int) and not -_INT_MAX <= value <= _INT_MAX:
        raise ValueError(
            f"{spec.name} ({spec.label}) must be a number {_range_text(spec)}, got "
            f"{_validate._int_text(value)}"
        )
    if not math.isfinite(value):
        raise ValueError(
            f"{spec.name} ({spec.label}) must be a finite number {_range_text(spec)}, "
            f"got {value!r}"
        )
    if value == 0:
        value = abs(value)  # "-0" typed is 0, never a -0.0 that prints as "-0.0"
    if spec.kind == "integer":
        if isinstance(value, float):
            if not value.is_integer():
                raise ValueError(
                    f"{spec.name} ({spec.label}) must be a whole number "
                    f"{_range_text(spec)}, got {value!r}"
                )
            value = int(value)
    if ((spec.min is not None and value < spec.min) or (spec.max is not None and value > spec.max)
            or (spec.smallest is not None and 0 < value < spec.smallest)):
        raise ValueError(f"{range_rule(spec)}, got {_shown(value)}")
    return value


def range_rule(spec: Input) -> str:
    """What a number input accepts, as its messages say it: "qps (Traffic ...) must be a
    number between 0.001 and 1,000,000 requests/s, or 0"."""
    kind = "a whole number" if spec.kind == "integer" else "a number"
    return f"{spec.name} ({spec.label}) must be {kind} {_range_text(spec)}"


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
    shown = _resolved(name, inputs, exact=True)
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
    return outputs(name, si_inputs(name, **inputs))


def outputs(name: str, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Every output of calculator ``name`` from SI keyword arguments that
    :func:`si_inputs` has already resolved and validated (a front end that also needs
    them, for its warnings, resolves and validates once)."""
    calc = get(name)
    try:
        result = dict(calc.function(**kwargs))
    except _validate.NoFiniteResultError as error:
        # the guard's message names an internal call (plan_serving(model=TransformerConfig(
        # ...)): the reader gets the field of the form instead
        raise ValueError(_no_finite_message(calc, kwargs, error.where)) from error
    where = _validate._first_non_finite(result)
    if where is not None:  # a formula of the lesson module itself
        raise ValueError(_no_finite_message(calc, kwargs, where[0]))
    expected = [o.name for o in calc.outputs]
    if sorted(result) != sorted(expected):
        raise RuntimeError(
            f"calculator {name!r} returned {sorted(result)}, declared {sorted(expected)}"
        )
    return {key: result[key] for key in expected}


def _furthest_input(calc: Calculator, kwargs: Mapping[str, Any]) -> Input | None:
    """The number input furthest from the worked example's value, by orders of magnitude
    (an input at 0, or whose example is 0, is left out: 0 is an "off" or "none")."""
    example_si = si_inputs(calc.name)
    best, best_score = None, 0.0
    for spec in calc.inputs:
        if spec.kind not in ("number", "integer"):
            continue
        value, default = kwargs.get(spec.name), example_si.get(spec.name)
        if not (isinstance(value, (int, float)) and isinstance(default, (int, float))):
            continue
        if value <= 0 or default <= 0 or value == default:
            continue
        score = abs(math.log10(value) - math.log10(default))
        if score > best_score:
            best, best_score = spec, score
    return best


def _no_finite_message(calc: Calculator, kwargs: Mapping[str, Any], where: str) -> str:
    """What a reader is told when the inputs give no finite result: the field furthest
    from the worked example, its value and the example's, never the internal call."""
    words = [w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", where or "") if w != "result"]
    what = f"the {words[-1].replace('_', ' ')}" if words else "a result"
    spec = _furthest_input(calc, kwargs)
    if spec is None:
        return (f"these inputs give no finite result ({what} would be infinite or undefined): "
                "bring the inputs nearer the worked example")
    unit = f" {spec.unit}" if spec.unit else ""
    value = kwargs[spec.name] / spec.scale
    example_value = resolve(calc.name)[spec.name]
    size = "small" if value < example_value else "large"
    return (f"{spec.name} ({spec.label}) = {_shown(value)}{unit} is too {size} for this "
            f"calculator: {what} would be infinite or undefined; enter a value nearer the "
            f"worked example's {_shown(example_value)}{unit}")


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


