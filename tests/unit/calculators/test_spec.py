"""The declarations (:mod:`gpulesson.calculators.spec`) and the checks run when an entry
is added to the registry (:func:`gpulesson.calculators.registry.check_declaration`)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpulesson import calculators as C
from gpulesson.calculators import spec
from gpulesson.calculators.registry import check_declaration

from .toy import TOY, echo


def test_constructors_declare_each_kind() -> None:
    workers = spec.Integer("workers", "Workers", default=64, range=(1, 1_000_000))
    assert (workers.kind, workers.default, workers.min, workers.max, workers.step) == (
        "integer", 64, 1, 1_000_000, 1)
    rate = spec.Number("rate", "Bandwidth", default=3.35, range=(0.01, 100), step=0.01,
                       unit="TB/s", scale=1e12, dimension="bytes/s")
    assert (rate.kind, rate.min, rate.max, rate.step, rate.scale) == ("number", 0.01, 100,
                                                                      0.01, 1e12)
    pick = spec.Select("dtype", "Precision", default="bf16",
                       choices=(spec.Choice("bf16", "BF16"),))
    assert (pick.kind, pick.choice_values()) == ("choice", ("bf16",))
    gpu = spec.Preset("gpu", "GPU", default="a", choices=(spec.Choice("a", "A"),),
                      fills={"a": {}})
    assert (gpu.kind, gpu.fills) == ("preset", {"a": {}})


@pytest.mark.parametrize("make", [
    lambda: spec.Input("n", "Count", "integer", 8, 1, 1024, 1),
    lambda: spec.Integer("n", "Count", 8, (1, 1024)),
    lambda: spec.Number("x", "X", (0, 1), 0.5),
    lambda: spec.Select("s", "S", (spec.Choice("a", "A"),)),
    lambda: spec.Output("x", "X", "number", "months"),
    lambda: spec.Keyed("dtype", {"bf16": 1.0}),
], ids=["Input", "Integer", "Number", "Select", "Output", "Keyed"])
def test_positional_arguments_beyond_name_and_label_are_refused(make) -> None:
    """Which of seven numbers is the step? None: after the name and the label (the format
    of an output), every argument must be named."""
    with pytest.raises(TypeError, match="positional"):
        make()


@pytest.mark.parametrize(("range_", "error"), [
    ((10, 1), ValueError), ((1,), TypeError), ([1, 10], TypeError), ((1, "10"), TypeError),
])
def test_a_bad_range_names_the_input(range_, error) -> None:
    with pytest.raises(error, match="^workers: range"):
        spec.Integer("workers", "Workers", default=1, range=range_)


def test_binary_applies_to_bytes_outputs_only() -> None:
    assert spec.Output("kv", "KV cache", "bytes", binary=True).binary
    with pytest.raises(ValueError, match="^x: binary applies to bytes outputs only"):
        spec.Output("x", "X", "count", binary=True)


def test_input_and_output_lookups_list_the_names() -> None:
    assert TOY.input("rate").unit == "TB/s"
    assert TOY.output("big").format == "count"
    with pytest.raises(KeyError, match="has no input 'nope'; inputs are n, precision, gpu"):
        TOY.input("nope")


def _with_inputs(*inputs: spec.Input) -> spec.Calculator:
    return replace(TOY, name="_bad", inputs=inputs)


N = spec.Integer("n", "Count", default=8, range=(1, 1024))


@pytest.mark.parametrize(("calc", "message"), [
    (_with_inputs(spec.Integer("n", "Count", range=(1, 10))), r"^_bad\.n: needs a default"),
    (_with_inputs(replace(N, name="Hidden size d")), "is not an identifier"),
    (_with_inputs(N, N), "duplicate input names"),
    (_with_inputs(replace(N, kind="slider")), "kind must be one of"),
    (_with_inputs(replace(N, max=None)), r"^_bad\.n: needs a range min <= max"),
    (_with_inputs(replace(N, dimension="furlongs")), "unknown dimension furlongs"),
    (_with_inputs(spec.Select("s", "S", default="a", choices=())), "a choice needs choices"),
    (_with_inputs(N, spec.Preset("p", "P", default="a", choices=(spec.Choice("a", "A"),),
                                 fills={"a": {"n": 1}})), "a preset needs a 'custom' choice"),
    (_with_inputs(N, spec.Preset("p", "P", default="a",
                                 choices=(spec.Choice("a", "A"), spec.Choice(C.CUSTOM, "Custom")),
                                 fills={"a": {"m": 1}})), "fills unknown 'm'"),
    (_with_inputs(N, spec.Preset("p", "P", default="a",
                                 choices=(spec.Choice("a", "A"), spec.Choice(C.CUSTOM, "Custom")),
                                 fills={"b": {"n": 1}})), "fill for unknown 'b'"),
    (_with_inputs(N, spec.Preset("p", "P", default="a",
                                 choices=(spec.Choice("a", "A"), spec.Choice(C.CUSTOM, "Custom")),
                                 fills={"a": {"n": spec.Keyed(by="n", values={})}})),
     "keyed by 'n', which is not a choice input"),
    (_with_inputs(N, spec.Preset("p", "P", default="a",
                                 choices=(spec.Choice("a", "A"), spec.Choice(C.CUSTOM, "Custom")),
                                 fills={"a": {"n": 1}}, suggests=("price",))),
     r"^_bad\.p: suggests \['price'\], which it never fills"),
    (replace(TOY, name="_bad", outputs=(spec.Output("x", "X", "furlongs"),)),
     r"^_bad\.x: unknown format 'furlongs'"),
    (replace(TOY, name="_bad", outputs=(spec.Output("x", "X", "count"),) * 2),
     "duplicate output names"),
    (replace(TOY, name="_bad", lesson="lesson_10"), "lesson 'lesson_10' is not in"),
], ids=["default", "identifier", "duplicate-input", "kind", "range", "dimension",
        "choices", "custom", "fill-target", "fill-choice", "keyed-by", "suggests", "format",
        "duplicate-output", "lesson"])
def test_a_broken_declaration_is_refused_naming_what_is_wrong(calc, message) -> None:
    with pytest.raises(ValueError, match=message):
        check_declaration(calc)
    with pytest.raises(ValueError, match=message):
        C.CALCULATORS._add(calc)
    assert calc.name not in C.CALCULATORS


def test_an_input_filled_by_the_default_preset_needs_no_default_of_its_own() -> None:
    check_declaration(TOY)  # peak and rate come from the "fast" GPU
    custom_default = replace(TOY, name="_bad", inputs=tuple(
        replace(i, default=C.CUSTOM) if i.kind == "preset" else i for i in TOY.inputs))
    with pytest.raises(ValueError, match=r"^_bad\.peak: needs a default"):
        check_declaration(custom_default)


def test_a_name_is_registered_once(toy) -> None:
    with pytest.raises(ValueError, match="declared twice"):
        C.CALCULATORS._add(replace(TOY, function=echo))


def test_smallest_is_for_a_range_from_zero_and_the_help_states_it() -> None:
    number = spec.Number("qps", "Traffic", range=(0, 1e6), smallest=0.001,
                         unit="requests/s", help="Arrivals per second.")
    assert number.smallest == 0.001
    assert number.help == "Arrivals per second. Enter 0 or at least 0.001 requests/s."
    price = spec.Number("usd", "Price", range=(0, 10), smallest=0.01, unit="$/h")
    assert price.help == "Enter 0 or at least $0.01/h."
    assert spec.Number("x", "X", range=(0, 1)).smallest is None
    for range_, smallest in (((1, 10), 2), ((0, 10), 0), ((0, 10), 11), ((0, 10), True)):
        with pytest.raises(ValueError, match="^x: smallest must be"):
            spec.Number("x", "X", range=range_, smallest=smallest)
