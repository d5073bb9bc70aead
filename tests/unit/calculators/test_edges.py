"""Every calculator at the edges of its ranges: what the reader sees is an answer or a
message about a field, never an internal call, a NaN or an absurd number.

Edge audit of 2026-12-06: each number input of every calculator set in turn (the others
at the worked example) to its minimum, its maximum and, for a range from 0, 1e-300, 1e-9
and the smallest float (5e-324). Found: the serving planner at qps = 5e-324 or 1e-320
showed "plan_serving(model=TransformerConfig(..." with no field marked; prices,
electricity and traffic of 1e-300 printed "$1.12e-300" a year, "$5.10e+301" per million
tokens and an SLO of "1.00e-294 ns"; FlashAttention's "Time saved" read "-171 ns" (at
one token) and prefix caching's "-80.5 ms", labelled as if they could not be negative.
"""

from __future__ import annotations

import math
import re

import pytest

from gpulesson import calculators as C

_REPR = re.compile(r"TransformerConfig\(|GPUSpec\(|\b[a-z_]+\([a-z_]+=")
_EXPONENT = re.compile(r"\d(?:\.\d+)?e([+-]?\d+)")
_UNSEPARATED = re.compile(r"(?<![\d,.])\d{5,}(?![\d,])")  # 163614 where 163,614 is meant


def _edges(spec):
    values = [spec.min, spec.max]
    if spec.kind == "number" and spec.min == 0:
        values += [1e-300, 1e-9, 5e-324]
    return values


def _cases():
    for name, calc in C.CALCULATORS.items():
        if name.startswith("_"):
            continue
        for spec in calc.inputs:
            if spec.kind in ("number", "integer"):
                yield name, spec.name, _edges(spec)


@pytest.mark.parametrize(("name", "box", "values"),
                         [pytest.param(*case, id=f"{case[0]}-{case[1]}") for case in _cases()])
def test_an_edge_gives_an_answer_or_a_message_about_a_field(name, box, values):
    for value in values:
        shown = C.evaluate(name, {box: value})
        if not shown["ok"]:
            message = shown["error"]
            assert shown["input"] is not None, (box, value, message)
            assert not _REPR.search(message), (box, value, message)
            continue
        labels = {output.name: output.label for output in C.get(name).outputs}
        for key, result in shown["values"].items():
            assert not (isinstance(result, float) and not math.isfinite(result)), (box, value,
                                                                                  key)
            if isinstance(result, (int, float)) and not isinstance(result, bool) and result < 0:
                # "-171 ns" of time saved reads as an error unless the label says it can be
                assert "negative" in labels[key], (box, value, key, labels[key])
        for key, text in shown["text"].items():
            # a layout's degrees ("tp 8 × dp 1000000") are notation, parsed as written
            prose = re.sub(r"\b(?:tp|cp|dp|pp|ep) \d+", "", text)
            assert not _UNSEPARATED.search(prose), (box, value, key, text)
            for exponent in _EXPONENT.findall(text):
                # a figure beyond 1e±30 in what a reader sees is an artefact, not an answer
                assert abs(int(exponent)) <= 30, (box, value, key, text)
