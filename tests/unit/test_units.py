"""gpulesson.units: counts stay exact, money reads as money."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpulesson import units


def test_integer_counts_are_exact_beyond_2_53() -> None:
    """2^60 + 1 = 1,152,921,504,606,846,977: a float keeps 53 bits and would print ...976."""
    assert units.format_quantity(2**60 + 1, "count") == "1,152,921,504,606,846,977"
    assert units.format_quantity(405_853_388_800, "count") == "405,853,388,800"
    assert units.format_quantity(12.0, "count") == "12"


@pytest.mark.parametrize(("amount", "text"), [(6_867.84, "$6,867.84"), (0.000289352, "$0.000289"),
                                              (1_550_309.76, "$1,550,310"),
                                              (5.576e6, "$5,576,000")])
def test_format_usd(amount: float, text: str) -> None:
    assert units.format_usd(amount) == text


@pytest.mark.parametrize(("amount", "digits", "text"),
                         [(6_867.84, 4, "$6,868"), (0.0017528, 4, "$0.001753"),
                          (2.5, 4, "$2.50"), (12.29, 4, "$12.29"), (12.0, 3, "$12"),
                          (1_550_309.76, 4, "$1,550,310"), (-3.14159, 3, "-$3.14")])
def test_format_usd_to_significant_digits(amount: float, digits: int, text: str) -> None:
    assert units.format_usd(amount, digits=digits) == text


@pytest.mark.parametrize(("amount", "text"), [(62.5, "$63"), (112.5, "$113"), (13.5, "$14"),
                                              (2.5, "$3"), (-62.5, "-$63")])
def test_whole_dollars_round_a_half_up(amount: float, text: str) -> None:
    """Review of 2026-12-07 (lessons 6-10, F3): 50,000 conversations a day at $0.00125 and
    $0.00225 printed "$62" and "$112" but $0.00027's "$14": Python rounds a half to even.
    A reader rounds it up, and so do the course's figures (2.675 is read as written)."""
    assert units.format_usd(amount, cents=False) == text
    assert units.format_usd(2.675) == "$2.68"
    assert units.format_usd(0.00225 * 50_000, cents=False) == "$113"  # 112.49999999999999
    # a diff review the same day: a half rounded up across a power of ten keeps its figures
    # (not "10.00"), and forced cents on a huge amount keep its digits (not "...234.60")
    assert units.format_significant(9.995, 3) == "10.0"
    assert units.format_significant(0.0009995, 3) == "0.00100"
    assert units.format_usd(12_345_678_901_234.56, cents=True) == "$12,345,678,901,234.56"


@pytest.mark.parametrize(("value", "figures"), [(28_350_000, 4), (28_348_416, 8),
                                                (85.520809984, 11), (1978.9, 5),
                                                (0.00123, 3), (1.5e-7, 2), (-9.995, 4), (0, 0)])
def test_significant_figures_counts_what_a_number_is_written_with(value, figures) -> None:
    """One count for the exercises (a rounded exact count: "28.35M") and the forms (a long
    preset figure to round in its box)."""
    assert units.significant_figures(value) == figures


def test_format_usd_refuses_bad_digits() -> None:
    with pytest.raises(ValueError, match="digits must be a positive integer"):
        units.format_usd(1.0, digits=0)


@pytest.mark.parametrize(("value", "digits", "text"),
                         [(1234.5, 3, "1,235"), (0.012345, 3, "0.0123"), (12, 3, "12"),
                          (12.0, 3, "12.0"), (2**60 + 1, 3, "1,152,921,504,606,846,977"),
                          (0, 3, "0"), (-3.14159, 3, "-3.14")])
def test_format_significant(value: float, digits: int, text: str) -> None:
    """One helper for significant figures (units, the registry's outputs)."""
    assert units.format_significant(value, digits) == text


#: nccl-tests' time column (us): ``%7.2f`` below 100, ``%7.1f`` below 10,000, ``%7.0f``
#: above (all_reduce_perf rows such as "    8.06", "  117.1", "  12345").
NCCL_TIME = ((10000, "7.0f"), (100, "7.1f"), (0, "7.2f"))


@pytest.mark.parametrize(("value", "text"), [(8.0612, "   8.06"), (99.994, "  99.99"),
                                             (100.0, "  100.0"), (117.06, "  117.1"),
                                             (9999.94, " 9999.9"), (10000.0, "  10000"),
                                             (123456.7, " 123457"), (0.0, "   0.00")])
def test_format_by_size_takes_the_first_step_reached(value: float, text: str) -> None:
    assert units.format_by_size(value, NCCL_TIME) == text


def test_format_by_size_below_every_step_uses_the_last() -> None:
    assert units.format_by_size(-2.5, ((100, ",.0f"), (10, ".1f"), (0, ".3g"))) == "-2.5"


@pytest.mark.parametrize(("steps", "error", "match"), [
    ((), TypeError, "steps must be a non-empty tuple"),
    ([(0, ".1f")], TypeError, "steps must be a non-empty tuple"),
    (((0, 1),), TypeError, "steps must be a non-empty tuple"),
    (((True, ".1f"),), TypeError, "steps must be a non-empty tuple"),
    (((0, "abc"),), ValueError, "steps must hold format specs"),
])
def test_format_by_size_refuses_bad_steps(steps: object, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        units.format_by_size(1.0, steps)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------
# Reading what a learner types: separators, flags, and every shown figure typed back


@pytest.mark.parametrize("typed", ["1,5", "2,25", "1,5e3"])
def test_a_decimal_comma_asks_for_a_point(typed: str) -> None:
    """``'1,5'`` was read as 15, so a learner writing a decimal comma was told "Correct: 15
    GPUs"; it is refused with a message that shows the number with a point."""
    with pytest.raises(ValueError, match=r"use a point for decimals, as in 1\.5|2\.25"):
        units.parse_quantity(typed)


@pytest.mark.parametrize("typed", ["12,34,5", "1_5", "1,", "1,000,00", "1,000_000", "1234,567"])
def test_thousands_separators_only_in_groups_of_three(typed: str) -> None:
    with pytest.raises(ValueError, match="groups of three"):
        units.parse_quantity(typed)


@pytest.mark.parametrize(("typed", "value"), [("1,024", 1024), ("12,345,678", 12_345_678),
                                              ("1_000_000", 1e6), ("1,000.5", 1000.5),
                                              ("999", 999), (".5", 0.5)])
def test_separated_thousands_still_read(typed: str, value: float) -> None:
    assert units.parse_quantity(typed) == value


@pytest.mark.parametrize("flag", ["no", "yes", 0, 1, None])
def test_allow_negative_must_be_a_bool(flag: object) -> None:
    """``allow_negative="no"`` was truthy and let -14 GB through."""
    with pytest.raises(TypeError, match="allow_negative must be True or False"):
        units.parse_quantity("-14 GB", "bytes", allow_negative=flag)  # type: ignore[arg-type]
    assert units.parse_quantity("-14 GB", "bytes", allow_negative=True) == -14e9


@pytest.mark.parametrize(("formatter", "bad"), [
    (units.format_bytes, -1), (units.format_flops, 21), (units.format_flop_rate, 2.5),
    (units.format_bandwidth, True), (units.format_seconds, 0), (units.format_usd, 0),
])
def test_formatters_refuse_bad_digits(formatter, bad: object) -> None:
    with pytest.raises((TypeError, ValueError), match="digits must be"):
        formatter(1e9, digits=bad)


def test_huge_integers_are_refused_by_the_formatters() -> None:
    with pytest.raises(ValueError, match="n must be a finite number no larger than"):
        units.format_bytes(10**400)
    with pytest.raises(ValueError, match="value must be a finite number"):
        units.format_significant(10**400, 3)


@pytest.mark.parametrize(("text", "dimension", "value"), [
    ("1.0 EB", "bytes", 1e18), ("2.00 PB/s", "bytes/s", 2e15), ("3.0 EiB", "bytes", 3 * 2**60),
    ("5.00 kB/s", "bytes/s", 5e3), ("1.5 EFLOP/s", "flop/s", 1.5e18), ("-$5.00", "usd", -5.0),
])
def test_the_largest_shown_units_read_back(text: str, dimension: str, value: float) -> None:
    assert units.parse_quantity(text, dimension, allow_negative=True) == pytest.approx(value)


@given(value=st.floats(min_value=1e-9, max_value=1e30),
       negative=st.booleans(),
       dimension=st.sampled_from(["bytes", "flops", "flop/s", "bytes/s", "seconds", "usd",
                                  "tokens/s", "count", "percent"]))
def test_every_shown_figure_can_be_typed_back(value: float, negative: bool,
                                              dimension: str) -> None:
    """What the course shows (``format_quantity``) is an answer ``parse_quantity`` reads,
    to the precision shown (one decimal of the mantissa at worst: 5%)."""
    if dimension == "percent":
        value = value % 10
    elif dimension in ("bytes", "flops", "flop/s", "bytes/s") and value < 1:
        value += 1  # below one unit these show one significant figure ("0.2 B")
    signed = -value if negative else value
    text = units.format_quantity(signed, dimension)
    back = units.parse_quantity(text, dimension, allow_negative=True)
    shown_step = 1e-3 if dimension == "percent" else 1e-9
    assert back == pytest.approx(signed, rel=0.05, abs=shown_step), text


def test_messages_for_the_learner_are_shown_as_they_are():
    """The guard leads a message that names no argument with the call; the parser's
    messages are written for the learner who typed the text, and stay as written."""
    with pytest.raises(ValueError, match=r"^Could not read a number in 'abc'; type for example"):
        units.parse_quantity("abc", "usd")


@pytest.mark.parametrize(("call", "text"), [
    (lambda: units.format_usd(1e-300), "$1.00e-300"),
    (lambda: units.format_usd(1e308), "$1.00e+308"),
    (lambda: units.format_usd(1e-300, digits=4), "$1.000e-300"),
    (lambda: units.format_usd(-1e300, cents=False), "-$1.00e+300"),
    (lambda: units.format_significant(1e-300, 3), "1.00e-300"),
    (lambda: units.format_significant(10**30, 3), "1.00e+30"),
    (lambda: units.format_significant(12345, 3), "12,345"),
    (lambda: units.format_usd(0.0002894, digits=4), "$0.0002894"),
])
def test_huge_and_tiny_amounts_are_scientific(call, text: str) -> None:
    """1e-300 dollars were 300 characters, 1e308 a 309-digit number (issue 35, item 11)."""
    assert call() == text


def test_a_greek_mu_and_bits_per_second_are_read_as_meant():
    """ "179 μs" typed with a Greek mu was "Unknown unit 'μs' ... use one of: ns, µs" (the
    two look alike); "2880 Gb/s" in a GB/s answer was read as 2,880 GB/s, 8× off, though
    network links are quoted in gigabits (the site's lesson 3 and 7 exercise pages)."""
    assert units.parse_quantity("179 \u03bcs", "seconds") == pytest.approx(179e-6)
    assert units.parse_quantity("179 \u00b5s", "seconds") == pytest.approx(179e-6)
    for typed in ("2880 Gb/s", "400 Gbps", "3 Tb/s", "10 Gbit/s"):
        with pytest.raises(ValueError, match="bits per second"):
            units.parse_quantity(typed, "bytes/s")
    assert units.parse_quantity("360 GB/s", "bytes/s") == 360e9
    assert units.parse_quantity("360 gb/s", "bytes/s") == 360e9  # lower case, a byte's B


def test_bits_are_not_read_as_bytes():
    """ "112 Gb" was marked correct for 112 GB, and "896 Gb", the same amount in gigabits,
    "8× too high" (the site's lesson 1 exercise 10, 2026-12-07): a bit unit in an answer in
    bytes is refused, as in a byte rate; "gb", all lower case, stays a gigabyte."""
    for typed in ("112 Gb", "0.9 Tb", "4 Mb", "8 Kb", "1 Eb", "12 Gib", "3 Mib", "112 Gbit",
                  "896 gigabits", "8 bits"):
        with pytest.raises(ValueError, match="is bits; .* 112 Gb is 14 GB"):
            units.parse_quantity(typed, "bytes")
    assert units.parse_quantity("112 gb", "bytes") == 112e9
    assert units.parse_quantity("112 GB", "bytes") == 112e9
    assert units.parse_quantity("14 GiB", "bytes") == 14 * 2**30


@pytest.mark.parametrize(("typed", "dimension", "value"), [
    ("8.4 × 10^22 FLOP", "flops", 8.4e22), ("8.4×10^22", "flops", 8.4e22),
    ("1.4 x 10^12", "count", 1.4e12), ("1.4*10**12", "count", 1.4e12),
    ("2.603 × 10^10 bytes", "bytes", 2.603e10), ("$2.894 × 10^\u22124", "usd", 2.894e-4),
])
def test_a_power_of_ten_written_as_the_lessons_write_it_is_read(typed, dimension, value):
    """ "8.4 × 10^22 FLOP", the lessons' own notation, was "Unknown unit '× 10^22 FLOP'"
    (the site's lesson 5 exercise page, 2026-12-06)."""
    assert units.parse_quantity(typed, dimension) == pytest.approx(value, rel=1e-12)


def test_a_power_of_ten_past_the_float_range_is_too_large():
    with pytest.raises(ValueError, match="too large"):
        units.parse_quantity("8.4 × 10^999", "flops")
    for typed in ("8.4 × 10^2.2", "8.4e3 × 10^19", "5.93 x 10"):
        with pytest.raises(ValueError, match="Unknown unit"):
            units.parse_quantity(typed, "flops")


@pytest.mark.parametrize(("typed", "dimension", "canonical"), [
    ("2^23", "count", "8388608"), ("2**23", "count", "8388608"),
    ("2 ^ 23", "count", "8388608"), ("2^10 × 8", "count", "8192"),
    ("8 x 2^10", "count", "8192"), ("2^10*8", "count", "8192"),
    ("2^30 bytes", "bytes", "1073741824 bytes"), ("2^30", "bytes", "1073741824"),
    ("2**10 KiB", "bytes", "1048576 B"), ("2^3 x", "count", "8x"),
    ("10^9 FLOP", "flops", "1e9 FLOP"), ("10^-3 s", "seconds", "1e-3 s"),
    ("$10^6", "usd", "$1000000"), ("2^53", "count", "9007199254740992"),
])
def test_a_power_of_two_is_read_as_its_value(typed, dimension, canonical):
    """ "2^23" for a count a lesson writes as a power of two was "Unknown unit '^23'"
    (the exercise pages, 2026-12-06); read it, exactly as the number it stands for."""
    assert units.parse_quantity(typed, dimension) == units.parse_quantity(canonical, dimension)


@pytest.mark.parametrize(("typed", "dimension", "message"), [
    ("2^1024", "count", "too large"), ("2^9999", "count", "too large"),
    ("2**1024 bytes", "bytes", "too large"), ("9^400 x 2^10", "count", "too large"),
    ("2^10 FLOP", "flops", r"only as a power of ten .*type the value as one number"),
    ("$2^10", "usd", "only as a power of ten"), ("2^10 s", "seconds", "power of ten"),
    ("2^-3", "bytes", "whole exponent of 0 or more"),
    ("2^-3 bytes", "bytes", "whole exponent of 0 or more"),
    ("3^-2", "count", r"negative power is read only of 2 or 10 \(2\^-14, 10\^-3\)"),
    ("2^-14", "percent", "only as a power of ten"),
    ("2^-9999", "count", "too small"), ("10^-999 s", "seconds", "too small"),
    ("10^-350 s", "seconds", "too small"), ("2^-1100", "count", "too small"),
    ("1.5^2", "count", "whole number to a whole power"),
    ("1e3^2", "count", "whole number to a whole power"),
    ("-2^2", "count", "whole number to a whole power"),
    ("2^2^3", "count", "whole number to a whole power"),
    ("2^10 × 8 × 2", "count", "whole number to a whole power"),
    ("2^10 × 1,024", "count", "whole number to a whole power"),
    ("2^1.5", "count", "whole number to a whole power"),
])
def test_a_power_not_read_says_what_to_type(typed, dimension, message):
    with pytest.raises(ValueError, match=message) as error:
        units.parse_quantity(typed, dimension)
    assert "example" in str(error.value) or " to be a sensible answer" in str(error.value)


@pytest.mark.parametrize(("typed", "value"), [
    ("2^-14", 6.103515625e-05), ("2^\u221214", 6.103515625e-05), ("2**-14", 6.103515625e-05),
    ("2 ^ -15", 3.0517578125e-05), ("2^-126", 2.0**-126), ("1 × 2^-14", 6.103515625e-05),
    ("1.0 x 2^\u221214", 6.103515625e-05),
])
def test_a_negative_power_of_two_is_read_for_a_plain_number(typed, value):
    """Review r22, F2 (Medium): optimisations Ex 6 refused "2^-14", the form its own worked
    solution prints ("2^\u221214 = 6.104e-05"): "type a power with a whole exponent of 0 or
    more (2^23)". A plain number (a count) reads a negative power of two exactly, with
    the minus the solution prints (U+2212) as with a hyphen."""
    assert units.parse_quantity(typed, "count") == value


@pytest.mark.parametrize(("typed", "value", "status"), [
    ("2^-14", 6.103515625e-05, "correct"), ("2^\u221214", 6.103515625e-05, "correct"),
    ("2^-15", 3.0517578125e-05, "mistake"),
])
def test_the_smallest_normal_fp16_number_can_be_typed_as_a_power_of_two(typed, value, status):
    """Review r22, F2: optimisations Ex 6 ("The smallest positive normal FP16 number")
    refused "2^-14", and its declared mistake ``bias_off_by_one`` ("You used
    2^(\u2212bias)") could not be reached by typing "2^-15", the natural form of the slip."""
    from gpulesson.exercises import load_lesson

    ex = load_lesson("optimisations").exercises[5]
    assert ex.title.startswith("The smallest positive normal") and ex.inputs["fmt"] == "fp16"
    assert ex.parse(typed) == value
    feedback = ex.check(typed)
    assert feedback.status == status, feedback.message
    if status == "mistake":
        assert feedback.mistake == "bias_off_by_one", feedback.message
        assert "You used 2^(\u2212bias)" in feedback.message, feedback.message


@pytest.mark.parametrize(("typed", "dimension"), [
    ("1/0", "count"), ("3/4", "percent"), ("1 / 3", "count"), ("0/0", "count"),
    ("7/0 GB", "bytes"), ("$1/0", "usd"), ("1/-0", "seconds"), ("1e308/1e-308", "flops"),
])
def test_a_fraction_asks_for_one_number(typed, dimension):
    """ "1/0" was "Unknown unit '/0'". A fraction is never divided (a bare number in a
    "%" question reads in percent, so "3/4" read as 0.75 would be 0.75 % there): the
    learner is asked for the value as one number."""
    with pytest.raises(ValueError, match=r"is a fraction; type the value as one number"):
        units.parse_quantity(typed, dimension)


@pytest.mark.parametrize(("typed", "dimension", "canonical"), [
    ("45 percent", "percent", "45%"), ("45 per cent", "percent", "45%"),
    ("14 gigabytes", "bytes", "14 GB"), ("1 Gigabyte", "bytes", "1 GB"),
    ("3 megabytes", "bytes", "3 MB"), ("2 terabytes", "bytes", "2 TB"),
    ("5 kilobytes", "bytes", "5 kB"), ("13.04 gibibytes", "bytes", "13.04 GiB"),
    ("5 microseconds", "seconds", "5 µs"), ("5 milliseconds", "seconds", "5 ms"),
    ("1 millisecond", "seconds", "1 ms"), ("3 nanoseconds", "seconds", "3 ns"),
    ("7 seconds", "seconds", "7 s"), ("8 cents", "usd", "$0.08"), ("8¢", "usd", "$0.08"),
    ("1 cent", "usd", "$0.01"),
])
def test_unit_words_a_learner_types_are_read(typed, dimension, canonical):
    """ "45 percent", "14 gigabytes", "5 microseconds", "8 cents" were "Unknown unit"
    (the exercise pages, 2026-12-06); spelt out, they mean what their symbols mean (the
    course's GB is 10^9 bytes: book/conventions.md)."""
    assert units.parse_quantity(typed, dimension) == units.parse_quantity(canonical, dimension)


@pytest.mark.parametrize("typed", ["6.9k", "6.9K", "6.9 k", "$6.9k", "2.5M", "2.5m", "1.2B",
                                   "1.2 b", "3 thousand", "2.5 million", "1.2 billion"])
def test_money_reads_the_scale_words_a_count_reads(typed):
    """Review r22, F8 (Low): cost Ex 1 accepted "6.868 kUSD" but refused "6.9k" ("Unknown
    unit 'k' for usd"), while a count accepts "157k". A sum of money reads exactly the
    scale words a count reads: the same value, and no others."""
    count = typed.replace("$", "")
    assert units.parse_quantity(typed, "usd") == units.parse_quantity(count, "count")


@pytest.mark.parametrize(("typed", "unit"), [("6.9bn", "bn"), ("6.9km", "km"),
                                             ("6.9 kg", "kg"), ("5x", "x"), ("6.9 kb", "kb"),
                                             ("6.9 t", "t")])
def test_money_refuses_what_a_count_refuses_and_names_its_scales(typed, unit):
    """Review r22, F8: only a count's scale words (k, M, B and the words) are read after a
    sum of money ("bn" and "t" are refused there as for a count; "x", a count's "times",
    is no money), and the message names what was typed and what is allowed."""
    with pytest.raises(ValueError, match=r"Unknown unit .* for usd; use one of: \$, USD, "
                                         r"cents, k, M, B \(billion\)") as error:
        units.parse_quantity(typed, "usd")
    assert f"Unknown unit {unit!r}" in str(error.value)


def test_cost_ex1_reads_a_bare_k_as_it_reads_k_usd():
    """Review r22, F8: cost Ex 1 ($6,868) refused "6.9k" but accepted "6.868 kUSD";
    both are now read, and what was accepted stays accepted."""
    from gpulesson.exercises import load_lesson

    ex = load_lesson("cost_economics").exercises[0]
    assert ex.answer_text() == "$6,868"
    for typed in ("6.9k", "6.868k", "6.868 K", "$6.868k", "6.868 kUSD", "6868", "$6,868"):
        assert ex.check(typed).correct, (typed, ex.check(typed).message)
    assert ex.check("6.9 parsec").status == "invalid"


@pytest.mark.parametrize(("typed", "value"), [
    ("26.95 ZFLOP", 2.695e22), ("26.95 zflop", 2.695e22), ("26.95 ZFLOPs", 2.695e22),
    ("0.02695 YFLOP", 2.695e22), ("3.8 YFLOP", 3.8e24), ("1 ZFLOP", 1e21),
])
def test_a_training_run_total_reads_in_zflop_and_yflop(typed, value):
    """Review r22, F8 (Low): optimisations Ex 5 refused "26.95 ZFLOP" ("Unknown unit
    'ZFLOP' ... FLOP, GFLOP, TFLOP, PFLOP, EFLOP"), though lesson-scale totals (1e22 to
    1e25 FLOP) are naturally written in ZFLOP. Z is 10^21 and Y 10^24."""
    assert units.parse_quantity(typed, "flops") == pytest.approx(value, rel=1e-12)


def test_an_unknown_flop_unit_names_zflop_and_yflop():
    """Review r22, F8: the message names what was typed and every prefix now allowed."""
    with pytest.raises(ValueError, match=r"Unknown unit 'XFLOP' for flops; use one of: "
                                         r"FLOP, GFLOP, TFLOP, PFLOP, EFLOP, ZFLOP, YFLOP"):
        units.parse_quantity("26.95 XFLOP", "flops")


def test_recompute_ex5_accepts_its_answer_in_zflop():
    """Review r22, F8: optimisations Ex 5 (2.695e22 FLOP) accepts "26.95 ZFLOP"; the
    forms it accepted before still are."""
    from gpulesson.exercises import load_lesson

    ex = load_lesson("optimisations").exercises[4]
    assert ex.answer_value() == pytest.approx(2.695e22, rel=1e-3)
    for typed in ("26.95 ZFLOP", "0.02695 YFLOP", "26950 EFLOP", "2.695e22", "2.695e22 FLOP"):
        assert ex.check(typed).correct, (typed, ex.check(typed).message)


def test_dollars_and_cents_together_are_refused():
    with pytest.raises(ValueError, match=r"type dollars \(\$0.05\) or cents \(5 cents\)"):
        units.parse_quantity("$5 cents", "usd")


@given(st.text(alphabet="0123456789^*/x× .,-+e$%GBs", max_size=30))
def test_typed_arithmetic_is_read_or_refused_never_evaluated(typed: str) -> None:
    """Digits and operators in any order: a finite value or a learner's ValueError, never
    another exception (ZeroDivisionError, OverflowError) and never a long computation."""
    for dimension in ("count", "bytes", "usd", "percent"):
        try:
            value = units.parse_quantity(typed, dimension)
        except ValueError as error:
            assert str(error)
        else:
            assert value == value and abs(value) < float("inf")
