"""What a form shows (:mod:`gpulesson.calculators.forms`), on the toy calculator: the
evaluated outputs or the error, the JSON spec, and the preset rules of a live form that
the Jupyter widgets and the site's calculators both call."""

from __future__ import annotations

import json

import pytest

from gpulesson import calculators as C


def test_evaluate_formats_every_output_and_keeps_big_integers_exact(toy):
    result = C.evaluate(toy, {"rate": 2.0})
    assert result == {
        "ok": True,
        "values": {"n_out": 8, "rate_out": 2.0e12, "peak_out": 1000e12,
                   "big": str(2**60 + 8), "precision_out": "bf16"},
        "text": {"n_out": "8", "rate_out": "2.00 TB/s", "peak_out": "1.0 PFLOP/s",
                 "big": f"{2**60 + 8:,}", "precision_out": "bf16"},
    }


@pytest.mark.parametrize(("inputs", "name"), [
    ({"n": 0}, "n"), ({"rate": "fast"}, "rate"), ({"precision": "fp64"}, "precision"),
    ({"gpu": "old"}, "gpu"),
])
def test_evaluate_never_raises_and_names_the_input_at_fault(toy, inputs, name):
    result = C.evaluate(toy, inputs)
    assert result["ok"] is False
    assert result["input"] == name
    with pytest.raises(ValueError) as err:
        C.compute(toy, **inputs)
    assert result["error"] == str(err.value)


def test_describe_is_json_and_big_integers_are_strings(toy):
    spec = C.describe(toy)
    assert json.loads(json.dumps(spec, allow_nan=False)) == spec
    assert spec["example"]["outputs"]["big"] == str(2**60 + 8)
    assert spec["example"]["outputs"]["n_out"] == 8
    assert spec["example"]["text"]["rate_out"] == "3.35 TB/s"
    n = spec["inputs"][0]
    assert (n["name"], n["kind"], n["default"], n["min"], n["max"], n["step"]) == (
        "n", "integer", 8, 1, 1024, 1)
    gpu = next(i for i in spec["inputs"] if i["name"] == "gpu")
    assert gpu["fills"]["fast"]["peak"] == {"by": "precision",
                                             "values": {"bf16": 1e15, "fp32": 6e13}}
    assert gpu["default"] == "fast"
    peak = next(i for i in spec["inputs"] if i["name"] == "peak")
    assert peak["default"] == 1000  # from the default preset, in the shown unit


def test_preset_links_follow_the_declarations(toy):
    assert C.preset_links(toy) == ({"peak": ["gpu"], "rate": ["gpu"]},
                                   {"precision": ["gpu"]})


def test_apply_changes_fills_refills_and_turns_custom(toy):
    """The one preset rule of the widgets and the site: fill, refill on the key, custom."""
    chosen = C.apply_changes(toy, {"gpu": "old", "precision": "fp32"}, ["gpu"])
    assert chosen["updates"] == {"peak": 15.7, "rate": 0.9}
    assert chosen["result"]["values"]["rate_out"] == 0.9e12
    refill = C.apply_changes(toy, {"gpu": "fast", "precision": "fp32", "peak": 1000},
                             ["precision"])
    assert refill["updates"] == {"peak": 60, "rate": 3.35}
    edited = C.apply_changes(toy, {"gpu": "fast", "peak": 1000, "rate": 1.5}, ["rate"])
    assert edited["updates"] == {"gpu": C.CUSTOM}
    assert edited["result"]["values"]["rate_out"] == 1.5e12
    # the preset's own figure typed as another number type keeps the preset
    assert C.apply_changes(toy, {"gpu": "fast", "rate": 3.35}, ["rate"])["updates"] == {}
    # a custom preset no longer follows its key; unknown names are ignored
    kept = C.apply_changes(toy, {"gpu": C.CUSTOM, "precision": "fp32", "peak": 5, "rate": 2},
                           ["precision", "bogus"])
    assert kept["updates"] == {} and kept["result"]["values"]["peak_out"] == 5e12


def test_apply_changes_reports_a_missing_figure_against_the_preset(toy):
    answer = C.apply_changes(toy, {"gpu": "old", "precision": "fp32"}, ["precision"])
    assert answer["result"]["ok"]
    missing = C.apply_changes(toy, {"gpu": "old", "precision": "bf16"}, ["precision"])
    assert missing["updates"] == {}
    assert missing["result"] == {
        "ok": False, "input": "gpu",
        "error": "gpu: Old GPU has no figure for bf16 (choose another precision or gpu)"}


def test_evaluate_refuses_an_integer_beyond_float_range_naming_the_input(toy):
    """10**400 made ``math.isfinite`` raise OverflowError inside validation."""
    result = C.evaluate(toy, {"n": 10**400})
    assert result["ok"] is False and result["input"] == "n"
    assert "about 10^400" in result["error"]


def test_evaluate_answers_an_arithmetic_error_of_the_function(toy):
    """``evaluate`` is documented never to raise: an ArithmeticError inside a calculator's
    function (a registry function doing its own sum) is an error result too."""
    from dataclasses import replace

    from .toy import TOY

    C.CALCULATORS._remove(toy)
    C.CALCULATORS._add(replace(TOY, function=lambda **kw: {"n_out": 1 / 0}))
    result = C.evaluate(toy, {})
    assert result["ok"] is False and "beyond what the calculator can compute" in result["error"]
