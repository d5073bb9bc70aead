"""The engine (:mod:`gpulesson.calculators.engine`) on the toy calculator of ``toy.py``.

The toy's function only echoes its SI inputs, so these tests check what the engine does
around a calculator (defaults, presets, units, validation), not any formula: formulas are
tested in the calculator modules' own tests, each entry in ``test_<lesson slug>.py``.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpulesson import calculators as C

from .toy import TOY, echo


def test_defaults_come_from_the_default_preset(toy):
    assert C.resolve(toy) == {"n": 8, "precision": "bf16", "gpu": "fast", "peak": 1000,
                              "rate": 3.35}


def test_shown_units_are_scaled_to_si_before_the_function(toy):
    assert C.si_inputs(toy, rate=2.0) == {"n": 8, "precision": "bf16", "gpu": "fast",
                                          "peak": 1000e12, "rate": 2.0e12}
    out = C.compute(toy, rate=2.0)
    assert out["rate_out"] == 2.0e12
    assert out["peak_out"] == 1000e12


def test_preset_fill_follows_the_key_input(toy):
    assert C.resolve(toy, precision="fp32")["peak"] == 60
    assert C.resolve(toy, gpu="old", precision="fp32")["rate"] == 0.9


def test_preset_without_a_figure_for_the_key_is_an_error_naming_the_preset(toy):
    with pytest.raises(ValueError, match=r"^gpu: Old GPU has no figure for bf16"):
        C.compute(toy, gpu="old")  # no BF16 figure for the old GPU


def test_explicit_inputs_win_over_the_preset(toy):
    assert C.compute(toy, peak=5.0)["peak_out"] == 5e12


def test_custom_preset_keeps_given_values(toy):
    assert C.resolve(toy, gpu=C.CUSTOM, peak=7.0)["peak"] == 7.0


@pytest.mark.parametrize(
    ("inputs", "name"),
    [({"n": 0}, "n"), ({"n": 2000}, "n"), ({"n": 2.5}, "n"), ({"n": True}, "n"),
     ({"rate": float("nan")}, "rate"), ({"rate": -1.0}, "rate"), ({"rate": "fast"}, "rate"),
     ({"rate": None}, "rate"), ({"precision": "fp64"}, "precision"), ({"gpu": "nope"}, "gpu")],
)
def test_invalid_inputs_raise_value_error_naming_the_input_and_range(toy, inputs, name):
    with pytest.raises(ValueError) as err:
        C.compute(toy, **inputs)
    message = str(err.value)
    assert message.startswith(f"{name} ({TOY.input(name).label})")
    if TOY.input(name).kind in ("number", "integer"):
        assert "between" in message


def test_out_of_range_message_spells_the_range_in_the_shown_unit(toy):
    with pytest.raises(ValueError, match=r"^rate \(Bandwidth\) must be a number between "
                                         r"0\.01 and 100 TB/s, got 200$"):
        C.compute(toy, rate=200)
    with pytest.raises(ValueError, match=r"^n \(Count\) must be a whole number between 1 "
                                         r"and 1024, got 2\.5$"):
        C.compute(toy, n=2.5)


@pytest.mark.parametrize(("name", "box", "typed", "expected"), [
    ("tco", "hardware_usd", -1, "between $1 and $1,000,000,000, or $0, got -1"),
    ("tco", "cloud_usd_per_hour", 2e6, "between $0.001/h and $1,000,000/h, or $0/h, got "
                                       "2,000,000"),
    ("tco", "usd_per_kwh", 20, "between $0.0001/kWh and $10/kWh, or $0/kWh, got 20"),
])
def test_a_range_in_dollars_puts_the_sign_before_each_figure(name, box, typed, expected):
    """Audit 2026-12-06: the range of a price read "between 0 and 1,000,000,000 $" and
    "between 0 and 1000 $/h": the dollar sign goes before the figure, as every output of
    these calculators writes it ("$11,379")."""
    spec = C.get(name).input(box)
    with pytest.raises(ValueError) as err:
        C.compute(name, **{box: typed})
    assert str(err.value) == f"{box} ({spec.label}) must be a number {expected}"


def test_unknown_input_is_refused(toy):
    with pytest.raises(ValueError, match="bogus is not an input of calculator '_toy'"):
        C.compute(toy, bogus=1)


def test_integer_valued_floats_from_the_browser_are_accepted(toy):
    assert C.compute(toy, n=16.0)["n_out"] == 16
    assert isinstance(C.compute(toy, n=16.0)["n_out"], int)


def test_a_function_returning_other_outputs_than_declared_is_a_programming_error(toy):
    C.CALCULATORS._remove(toy)
    C.CALCULATORS._add(replace(TOY, function=lambda **kw: {"n_out": 1}))
    with pytest.raises(RuntimeError, match=r"returned \['n_out'\], declared \['big', "):
        C.compute(toy)


def test_example_is_the_defaults_and_their_outputs(toy):
    ex = C.example(toy)
    assert ex["inputs"] == C.resolve(toy)
    assert ex["outputs"] == C.compute(toy)


def test_sweep_is_compute_at_each_value(toy):
    points = C.sweep(toy, "n", [1, 8, 64], rate=2.0)
    assert points == [C.compute(toy, n=n, rate=2.0) for n in (1, 8, 64)]
    with pytest.raises(ValueError, match=r"^n \("):
        C.sweep(toy, "n", [1, 0])
    with pytest.raises(KeyError, match="no input 'm'"):
        C.sweep(toy, "m", [1])


def test_apply_preset_returns_shown_values(toy):
    assert C.apply_preset(toy, "gpu", "old", {"precision": "fp32"}) == {"peak": 15.7,
                                                                        "rate": 0.9}
    assert C.apply_preset(toy, "gpu", C.CUSTOM, {}) == {}
    with pytest.raises(ValueError, match="gpu must be one of fast, old, custom"):
        C.apply_preset(toy, "gpu", "new")
    with pytest.raises(ValueError, match="n is not a preset input"):
        C.apply_preset(toy, "n", "fast")


def test_a_preset_shows_four_digits_and_the_calculation_keeps_them_all():
    """Three walks of 2026-12-07 found "85.520809984" (GB) and "80.0910010111" (%) in the
    planners' boxes: the H100's reported bytes and a measured efficiency, written to the
    last digit. A box now shows a preset's figure to four significant digits (every digit
    before the point), and while it still shows that figure the calculation takes the
    exact one: the outputs are those of the preset itself. A figure typed over it is
    taken as typed."""
    shown = C.apply_preset("planning", "gpu", "H100 SXM")
    assert (shown["gpu_memory"], shown["matmul_efficiency"]) == (85.52, 80.09)
    assert C.apply_preset("planning", "model", "deepseek-v3")["hidden"] == 7168
    exact = C.compute("serving_plan", gpu="H100 SXM")
    boxes = C.compute("serving_plan", gpu="H100 SXM",
                      **C.apply_preset("serving_plan", "gpu", "H100 SXM"))
    assert boxes == exact
    typed = C.compute("serving_plan", gpu="H100 SXM", gpu_memory=85.5)
    assert typed["kv_memory"] < exact["kv_memory"]


def test_get_lists_the_known_calculators():
    with pytest.raises(KeyError, match="unknown calculator 'nope'; known calculators: amdahl"):
        C.get("nope")


def test_a_typed_minus_zero_is_zero():
    """Audit of the site's calculators (2026-12): "-0" in a box whose range starts at 0
    passed as -0.0, and the TCO verdict read "owning, from month -0.0 of 60"."""
    import math

    value = C.si_inputs("tco", hardware_usd=float("-0"))["hardware_usd"]
    assert value == 0 and math.copysign(1.0, value) == 1.0
    assert C.compute("tco", hardware_usd=-0.0)["verdict"] == "owning, from month 0 of 60"


def _toy_through_a_guarded_call(toy, formula):
    """The toy with its function calling a guarded module function of ``formula(peak)``."""
    from gpulesson import _validate

    @_validate.guarded
    def internal_call(config, peak):  # an internal call, its arguments a config and SI
        return {"per_peak": formula(peak)}

    def function(**kw):
        per = internal_call({"hidden": 8192}, kw["peak"])["per_peak"]
        return echo(**kw) | {"n_out": per}

    C.CALCULATORS._remove(toy)
    C.CALCULATORS._add(replace(TOY, function=function))


@pytest.mark.parametrize("formula", [lambda peak: 1e300 * (1e12 / peak) * 1e10,  # inf
                                     lambda peak: (1e12 / peak) ** 110])  # OverflowError
def test_no_finite_result_names_the_field_not_the_internal_call(toy, formula):
    """Site audit (2026-12-06): Traffic = 1e-320 requests/s in the serving planner showed
    "plan_serving(model=TransformerConfig(hidden=8192, ...) has no finite result", an
    internal call dumped and no field named. A guarded call without a finite result now
    reads as the form's field furthest from the worked example, its value and the
    example's."""
    _toy_through_a_guarded_call(toy, formula)
    with pytest.raises(ValueError) as caught:
        C.compute(toy, peak=1e-3, rate=50)
    message = str(caught.value)
    assert message.startswith("peak (Peak) = 0.001 TFLOP/s is too small"), message
    assert "internal_call" not in message and "hidden" not in message, message
    assert "worked example's 1000 TFLOP/s" in message, message
    shown = C.evaluate(toy, {"peak": 1e-3})
    assert shown["ok"] is False and shown["input"] == "peak", shown


def test_a_non_finite_output_of_the_calculator_itself_names_the_field(toy):
    C.CALCULATORS._remove(toy)
    C.CALCULATORS._add(replace(TOY, function=lambda **kw: echo(**kw) | {
        "n_out": 1e300 / kw["rate"] * 1e300}))
    with pytest.raises(ValueError, match=r"^rate \(Bandwidth\) = 100 TB/s is too large .*"
                                         r"the n out would be infinite"):
        C.compute(toy, rate=100)


def test_a_positive_value_below_the_smallest_is_refused_zero_is_not(toy):
    """Edge audit (2026-12-06): a range from 0 let 1e-300 through: a price of $1e-300/h
    printed "$2.78e-304" per 1,000 tokens, a traffic of 1e-300 requests/s "$5.10e+301" per
    million tokens. ``smallest`` refuses what lies between 0 and it, and says so."""
    C.CALCULATORS._remove(toy)
    price = C.Number("price", "Price", default=2.5, range=(0, 1000), smallest=0.001,
                     unit="$/h", dimension="usd")
    rate = C.Number("rate", "Bandwidth", default=3.35, range=(0, 100), smallest=0.01,
                    unit="TB/s", scale=1e12, dimension="bytes/s")
    C.CALCULATORS._add(replace(TOY, inputs=(*TOY.inputs[:4], rate, price),
                               function=lambda **kw: echo(**kw)))
    for typed in (1e-300, 5e-324, 0.0009):
        with pytest.raises(ValueError) as err:
            C.compute(toy, price=typed)
        assert str(err.value).startswith(
            "price (Price) must be a number between $0.001/h and $1000/h, or $0/h, got "), err
    with pytest.raises(ValueError, match=r"^rate \(Bandwidth\) must be a number between "
                                         r"0\.01 and 100 TB/s, or 0, got 1e-09$"):
        C.compute(toy, rate=1e-9)
    assert C.compute(toy, price=0, rate=0)["rate_out"] == 0
    assert C.compute(toy, price=0.001, rate=0.01)["rate_out"] == pytest.approx(1e10)
