"""The registry engine itself, on a small calculator declared here.

The toy calculator's function only echoes its SI inputs, so these tests check what the
engine does around a calculator (defaults, presets, units, validation, JSON), not any
formula: formulas are tested in the calculator modules' own tests.
"""

from __future__ import annotations

import json

import pytest

from gpulesson import calculators as C
from gpulesson.calculators import Calculator, Input, Output

from .conftest import TOY, _echo


def test_defaults_come_from_the_default_preset(toy):
    assert C.resolve(toy) == {"n": 8, "precision": "bf16", "gpu": "fast", "peak": 1000,
                              "rate": 3.35}


def test_shown_units_are_scaled_to_si_before_the_function(toy):
    out = C.compute(toy, rate=2.0)
    assert out["rate_out"] == 2.0e12
    assert out["peak_out"] == 1000e12


def test_preset_fill_follows_the_key_input(toy):
    assert C.resolve(toy, precision="fp32")["peak"] == 60
    assert C.resolve(toy, gpu="old", precision="fp32") ["rate"] == 0.9


def test_preset_without_a_figure_for_the_key_is_an_error_naming_the_preset(toy):
    with pytest.raises(ValueError, match=r"^gpu"):
        C.compute(toy, gpu="old")  # no BF16 figure for the old GPU
    result = C.evaluate(toy, {"gpu": "old"})
    assert result["ok"] is False and result["input"] == "gpu"


def test_explicit_inputs_win_over_the_preset(toy):
    assert C.compute(toy, peak=5.0)["peak_out"] == 5e12


def test_custom_preset_keeps_given_values(toy):
    assert C.resolve(toy, gpu=C.CUSTOM, peak=7.0)["peak"] == 7.0


@pytest.mark.parametrize(
    ("inputs", "name"),
    [({"n": 0}, "n"), ({"n": 2000}, "n"), ({"n": 2.5}, "n"), ({"n": True}, "n"),
     ({"rate": float("nan")}, "rate"), ({"rate": -1.0}, "rate"), ({"rate": "fast"}, "rate"),
     ({"precision": "fp64"}, "precision"), ({"gpu": "nope"}, "gpu")],
)
def test_invalid_inputs_raise_value_error_naming_the_input_and_range(toy, inputs, name):
    with pytest.raises(ValueError) as err:
        C.compute(toy, **inputs)
    message = str(err.value)
    assert message.startswith(name)
    spec = TOY.input(name)
    if spec.kind in ("number", "integer"):
        assert "between" in message
    assert C.evaluate(toy, inputs) == {"ok": False, "error": message, "input": name}


def test_unknown_input_is_refused(toy):
    with pytest.raises(ValueError, match="bogus is not an input"):
        C.compute(toy, bogus=1)


def test_integer_valued_floats_from_the_browser_are_accepted(toy):
    assert C.compute(toy, n=16.0)["n_out"] == 16
    assert isinstance(C.compute(toy, n=16.0)["n_out"], int)


def test_describe_is_json_and_big_integers_are_strings(toy):
    spec = C.describe(toy)
    text = json.dumps(spec)
    assert json.loads(text) == spec
    assert spec["example"]["outputs"]["big"] == str(2**60 + 8)
    assert spec["example"]["outputs"]["n_out"] == 8
    gpu = next(i for i in spec["inputs"] if i["name"] == "gpu")
    assert gpu["fills"]["fast"]["peak"] == {"by": "precision",
                                             "values": {"bf16": 1e15, "fp32": 6e13}}


def test_apply_preset_returns_shown_values(toy):
    assert C.apply_preset(toy, "gpu", "old", {"precision": "fp32"}) == {"peak": 15.7,
                                                                        "rate": 0.9}
    assert C.apply_preset(toy, "gpu", C.CUSTOM, {}) == {}


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
    assert missing["result"]["ok"] is False and missing["result"]["input"] == "gpu"
    assert "bf16" in missing["result"]["error"]


def test_preset_links_follow_the_declarations(toy):
    assert C.preset_links(toy) == ({"peak": ["gpu"], "rate": ["gpu"]},
                                   {"precision": ["gpu"]})


def test_declaration_errors_are_caught_when_an_entry_is_added():
    bad = Calculator(name="_bad", title="", description="", lesson="", function=_echo,
                     inputs=(Input("n", "Count", "integer", None, 1, 10, 1),),
                     outputs=(Output("n_out", "n", "count"),))
    with pytest.raises(ValueError, match="needs a default"):
        C.CALCULATORS._add(bad)
    assert "_bad" not in C.CALCULATORS


def test_format_output_extra_formats():
    assert C.format_output(Output("x", "x", "ratio"), 3.14159) == "3.14×"
    assert C.format_output(Output("x", "x", "intensity"), 682.67) == "683 FLOP/byte"
    assert C.format_output(Output("x", "x", "bool"), True) == "yes"
    assert C.format_output(Output("x", "x", "bytes"), 14e9) == "14.0 GB"
    assert C.format_output(Output("x", "x", "number", unit="months", digits=2), 6.83) == \
        "6.8 months"
