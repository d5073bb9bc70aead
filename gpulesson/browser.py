"""The site's calculators, Python side: what the browser calls on every reader action.

On the published site each calculator (the static markup of
:func:`gpulesson.widgets.static_html`) is brought to life by a few lines of JavaScript that
only move text between the page and this module, which runs in Pyodide in a Web Worker
together with :mod:`gpulesson.calculators` and the calculator modules it calls. No formula
and no preset logic exists in JavaScript: the page sends what the reader typed, Python
answers with what to show.

Protocol (:func:`react_json`, strings in and out so that nothing is lost crossing into
JavaScript: integers above 2^53 travel as strings, see :func:`gpulesson.calculators.to_json`):

request
    ``name``: the registry entry; ``values``: ``{input: text as typed}`` for every input
    of the form (``""`` for an empty box); ``changed``: the inputs the reader changed since
    the last answer, in order (empty to simply recompute, for example at start-up).
answer
    ``{"updates": {input: shown value}, "result": evaluate(...)}``: ``updates`` are the
    inputs to overwrite (the values a preset fills, or ``"custom"`` for a preset whose
    filled input the reader edited by hand); ``result`` is exactly
    :func:`gpulesson.calculators.evaluate` of the inputs after those updates: formatted
    ``text`` per output, or the ``error`` message naming the ``input`` at fault.

The preset rules are :func:`gpulesson.calculators.apply_changes`, the very function the
Jupyter widgets (:mod:`gpulesson.widgets`) call: choosing a preset fills what it covers;
changing an input a fill is keyed by (a GPU's peak depends on the precision) fills again;
editing a filled input by hand turns its preset to ``custom``, but for one it only
suggests (a GPU's dated price). This module only turns the
page's text into values (:func:`parse_value`) and the answer into JSON.

Standard library only: this module runs in the browser (Pyodide).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from gpulesson import calculators as _calc
from gpulesson.calculators.engine import range_rule

__all__ = ["UNREADABLE", "parse_value", "react", "react_json"]

#: What the page sends for a number box whose text the browser cannot read as a number
#: (``input.validity.badInput``: "1e309", beyond the largest double, or "1e" half typed).
#: Such a box reports an empty value, and the reader who typed 1e309 was told the box
#: "needs a value"; with this, :func:`react` says the text is not a number it can read.
#: No one can type it: a number box takes no letters but "e".
UNREADABLE = "unreadable"


def parse_value(spec: _calc.Input, text: Any) -> Any:
    """The shown value of input ``spec`` from the text of its form control.

    Choices and presets stay strings; numbers become ``float``; integers become ``int``
    when the text is a whole number (a fraction or ``1e3`` is kept as ``float`` so that the
    registry's validation names it). An empty box becomes ``None`` ("needs a value");
    text that is not a number is kept as text, which validation reports with the range.
    """
    if spec.kind in ("choice", "preset"):
        return "" if text is None else str(text)
    if text is None:
        return None
    if isinstance(text, bool):
        return text
    if isinstance(text, (int, float)):
        return float(text) if spec.kind == "number" else text
    text = str(text).strip()
    if not text:
        return None
    if spec.kind == "integer":
        try:
            return int(text, 10)
        except ValueError:
            pass
    try:
        return float(text)
    except ValueError:
        return text


def _failure(message: str, input_name: str | None) -> dict[str, Any]:
    return {"ok": False, "error": message, "input": input_name}


def react(name: str, values: Mapping[str, Any],
          changed: Iterable[str] = ()) -> dict[str, Any]:
    """Apply the reader's changes to calculator ``name``; say what to show.

    Parameters
    ----------
    name:
        a key of :data:`gpulesson.calculators.CALCULATORS`.
    values:
        input name -> the text of its control (see :func:`parse_value`); inputs left out
        take their defaults.
    changed:
        the inputs the reader changed, in order; unknown names are ignored.

    Returns
    -------
    dict
        the answer of :func:`gpulesson.calculators.apply_changes` for the parsed values,
        its ``updates`` made JSON-safe: ``{"updates": {input: shown value}, "result":
        {...}}`` where ``result`` is :func:`gpulesson.calculators.evaluate` of the updated
        inputs (never raises for bad input), or the preset's own error when a preset has
        no figure for the current combination (for example a GPU without an FP8 peak).
    """
    known = {spec.name: spec for spec in _calc.get(name).inputs}
    shown = {key: parse_value(known[key], text) for key, text in values.items() if key in known}
    answer = _calc.apply_changes(name, shown, changed)
    result = answer["result"]
    at_fault = known.get(result.get("input") or "")
    if not result["ok"] and at_fault is not None and values.get(at_fault.name) == UNREADABLE:
        result = _failure(_unreadable_message(at_fault), at_fault.name)
    return {"updates": _calc.to_json(answer["updates"]), "result": result}


def _unreadable_message(spec: _calc.Input) -> str:
    """The message for a box whose text the browser could not read (:data:`UNREADABLE`)."""
    return f"{range_rule(spec)}; what is typed is not a number the browser can read"


def react_json(name: str, values_json: str, changed_json: str = "[]") -> str:
    """:func:`react` with JSON text in and out: the one function the browser calls.

    Anything unexpected (an unknown calculator, a malformed request, inputs beyond what a
    float holds) is answered as an error result rather than raised, so that the page shows
    a message, never a traceback.
    """
    try:
        values = json.loads(values_json)
        changed = json.loads(changed_json)
        if not isinstance(values, dict) or not isinstance(changed, list):
            raise TypeError("values must be an object and changed a list")
        answer = react(name, values, [str(c) for c in changed])
    except KeyError as exc:
        answer = {"updates": {}, "result": _failure(str(exc.args[0]) if exc.args else
                                                    str(exc), None)}
    except (TypeError, ValueError, ArithmeticError, RecursionError) as exc:
        answer = {"updates": {}, "result": _failure(f"bad request from the page: {exc}", None)}
    try:
        return json.dumps(answer, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:  # a value JSON cannot carry
        return json.dumps({"updates": {}, "result": _failure(
            f"the answer could not be sent to the page: {exc}", None)}, ensure_ascii=False)
