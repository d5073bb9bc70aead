"""What a form shows: evaluated outputs, the JSON spec, and the preset rules of a live form.

Three front ends read the registry:

* :func:`gpulesson.widgets.calculator_widget` builds an ipywidgets calculator (Jupyter);
* the static site runs this package in Pyodide (:mod:`gpulesson.browser`) and calls
  :func:`apply_changes` on every change;
* the static HTML written at build time shows the worked example
  (:func:`~gpulesson.calculators.engine.example`).

:func:`evaluate` never raises for bad input: it returns the formatted outputs, or the
message and the input at fault. :func:`describe` is the JSON spec a browser form is built
from. A live form calls :func:`apply_changes` on every change: it fills from a preset when
one is chosen (and again when an input its fill is keyed by changes), sets a preset to
``"custom"`` when the reader edits an input it filled, and evaluates the result; both
front ends do exactly this. :func:`preset_links` says which presets fill, or are keyed by,
each input.

Standard library only: this module runs in the browser (Pyodide).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from gpulesson.calculators import shared
from gpulesson.calculators.engine import apply_preset, example, outputs, si_inputs
from gpulesson.calculators.formatting import format_output, to_json
from gpulesson.calculators.registry import get
from gpulesson.calculators.spec import CUSTOM, Calculator, Keyed

__all__ = ["apply_changes", "describe", "evaluate", "preset_links"]


def _input_for_message(calc: Calculator, message: str) -> str | None:
    """The input a validation message is about (its first word naming an input, alone or
    as ``name=value``)."""
    head = message.split(":", 1)[0].split(" (", 1)[0].split(" ", 1)[0].split("=", 1)[0].strip()
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
    values, "text": formatted strings}``, plus ``"warnings"``, a list of ``{"input",
    "message"}``, when an input looks like a spec-sheet mistake
    (:func:`gpulesson.calculators.shared.input_warnings`: a 2:4-sparse peak typed as the
    dense one): the form shows them, and the outputs still stand. Used by the widgets
    and, in Pyodide, by the site.
    """
    calc = get(name)
    try:
        kwargs = si_inputs(name, **dict(inputs or {}))
        results = outputs(name, kwargs)
        text = {o.name: format_output(o, results[o.name]) for o in calc.outputs}
        values = to_json(results)
        warnings = shared.input_warnings(calc, kwargs)
    except (ValueError, TypeError, KeyError, ArithmeticError) as exc:
        message = str(exc.args[0]) if exc.args else str(exc)
        if isinstance(exc, ArithmeticError):
            message = f"these inputs are beyond what the calculator can compute ({message})"
        return {"ok": False, "error": message, "input": _input_for_message(calc, message)}
    result: dict[str, Any] = {"ok": True, "values": values, "text": text}
    if warnings:
        result["warnings"] = warnings
    return result


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
      preset to ``custom`` (80 and 80.0 are the same figure); an input the preset's
      current choice does not fill (a GPU the price table has no quote for), or one it only
      suggests (its dated price: ``Input.suggests``), leaves it;
    * an input a fill is keyed by (a GPU's peak depends on the precision) makes the presets
      keyed by it fill again, unless they are custom; the inputs they only suggest keep
      what the reader typed.

    Parameters
    ----------
    name:
        a key of :data:`gpulesson.calculators.CALCULATORS`.
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

    def fill(preset: str, keep: Iterable[str] = ()) -> dict[str, Any] | None:
        """The preset's fills applied to ``shown``, but for the inputs in ``keep``; the
        failure result otherwise."""
        try:
            filled = apply_preset(name, preset, shown.get(preset, CUSTOM), shown)
        except ValueError as exc:
            message = str(exc.args[0]) if exc.args else str(exc)
            return {"ok": False, "error": message, "input": preset}
        filled = {k: v for k, v in filled.items() if k not in keep}
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
            if choice in (None, CUSTOM) or key in known[preset].suggests:
                continue
            try:
                expected: dict[str, Any] | None = apply_preset(name, preset, choice, shown)
            except ValueError:
                expected = None
            if expected is not None and key not in expected:
                continue  # this choice fills other inputs only (a GPU without a price)
            if expected is None or not _same_shown(expected.get(key), shown.get(key)):
                shown[preset] = updates[preset] = CUSTOM
        for preset in keyed_by.get(key, []):
            if shown.get(preset) not in (None, CUSTOM):
                # a refill for the key keeps what the reader typed over a suggestion
                failure = fill(preset, keep=known[preset].suggests)
                if failure:
                    return {"updates": updates, "result": failure}
    return {"updates": updates, "result": evaluate(name, shown)}
