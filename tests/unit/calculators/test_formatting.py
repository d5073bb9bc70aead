"""Outputs written for a reader, and values made safe for JavaScript
(:mod:`gpulesson.calculators.formatting`)."""

from __future__ import annotations

import pytest

from gpulesson import calculators as C
from gpulesson.calculators import Output


@pytest.mark.parametrize(("output", "value", "text"), [
    (Output("x", "x", "ratio"), 3.14159, "3.14×"),
    (Output("x", "x", "intensity"), 682.67, "683 FLOP/byte"),
    (Output("x", "x", "bool"), True, "yes"),
    (Output("x", "x", "bool"), False, "no"),
    (Output("x", "x", "text"), "compute", "compute"),
    (Output("x", "x", "bytes"), 14e9, "14.0 GB"),
    (Output("x", "x", "number", unit="months", digits=2), 6.83, "6.8 months"),
    (Output("x", "x", "count"), 124_439_808, "124,439,808"),
    (Output("x", "x", "percent"), 0.4, "40.0%"),
    (Output("x", "x", "number", unit="GPU-hours"), 179_979.05,
     "179,979 GPU-hours"),
], ids=["ratio", "intensity", "yes", "no", "text", "bytes", "number", "count", "percent",
        "number-large"])
def test_format_output_writes_the_unit(output, value, text):
    assert C.format_output(output, value) == text


def test_money_outputs_share_one_style() -> None:
    """Review 4, C-f: the TCO calculator showed "$326,893.99" beside "$2,410,752" (cents
    stopped at a million). Large sums are whole dollars, as the lessons write them; a
    price per hour or per 1,000 tokens keeps its cents or its three significant figures."""
    money = Output("x", "x", "usd")
    assert C.format_output(money, 326_893.99) == "$326,894"
    assert C.format_output(money, 2_410_752.0) == "$2,410,752"
    assert C.format_output(money, 11_378.80) == "$11,379"
    assert C.format_output(money, 55.04) == "$55.04"
    assert C.format_output(money, 0.000289352) == "$0.000289"
    outputs = C.compute("tco")
    shown = [C.format_output(o, outputs[o.name]) for o in C.get("tco").outputs
             if o.format == "usd"]
    assert len(shown) >= 4 and not any("." in text for text in shown), shown


def test_bytes_can_show_the_binary_figure_too():
    """A KV cache of 2^30 bytes is 1.07 GB, which a reader may know as 1 GiB: written
    "1 GiB" (three significant figures, no trailing zeros), never "1.00 GiB"."""
    assert C.format_output(Output("x", "x", "bytes", binary=True), 2**30) == \
        "1.1 GB (1 GiB)"
    # Qwen2.5-7B's KV cache for 8,192 tokens in BF16: 28 layers x 4 KV heads x 128 x 2 x 2
    # bytes = 56 KiB per token (Qwen2.5 technical report, config), 448 MiB in all
    assert C.format_output(Output("x", "x", "bytes", binary=True), 8192 * 56 * 1024) == \
        "469.8 MB (448 MiB)"


def test_flops_beyond_the_exa_prefix_are_powers_of_ten():
    """Brown et al. 2020 (GPT-3), Table D.1: 3.14e23 training FLOPs; beyond E (10^18 ...
    10^20) no SI prefix a reader knows is left, so the count is written 3.14 × 10²³."""
    assert C.format_output(Output("x", "x", "flops"), 3.14e23) == "3.14 × 10²³ FLOP"
    assert C.format_output(Output("x", "x", "flops"), 137_438_953_472) == "137.44 GFLOP"


def test_large_counts_in_words():
    """20 tokens per parameter of Llama 2 7B (Hoffmann et al. 2022): 135 billion tokens."""
    words = Output("x", "x", "words", unit="tokens")
    assert C.format_output(words, 20 * 6_738_415_616) == "135 billion tokens"
    assert C.format_output(words, 1.4e12) == "1.40 trillion tokens"
    assert C.format_output(words, 950) == "950 tokens"


def test_to_json_sends_integers_beyond_2_53_as_strings():
    assert C.to_json({"a": 2**53, "b": 2**53 + 1, "c": [1.5, True, None, (-(2**60),)]}) == \
        {"a": 2**53, "b": str(2**53 + 1), "c": [1.5, True, None, [str(-(2**60))]]}
    with pytest.raises(ValueError, match="non-finite"):
        C.to_json({"x": float("inf")})


@pytest.mark.parametrize(("value", "text"), [
    (1e308, "1e+308"), (-1e308, "-1e+308"), (1e-300, "1e-300"), (2.5e15, "2.5e+15"),
    (65536, "65,536"), (1_000_000.0, "1,000,000"), (0.5, "0.5"), (0, "0"), (None, "?"),
    (10**400, "an integer of 1,329 bits (about 10^400)")])
def test_numbers_in_messages_are_short(value: object, text: str) -> None:
    """Limits and typed values in a refusal: huge or tiny in scientific notation."""
    from gpulesson.calculators.formatting import message_number

    assert message_number(value) == text


def test_a_refusal_of_1e308_is_one_short_sentence() -> None:
    """The engine wrote 1e308 as 309 digits and 102 commas (issue 35, item 11)."""
    from gpulesson.calculators import engine

    for value in (1e308, -1e308, 1e300):
        with pytest.raises(ValueError) as refused:
            engine.compute("amdahl", workers=value)
        message = str(refused.value)
        assert len(message) < 120 and "e+30" in message, message
