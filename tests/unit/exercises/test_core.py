"""gpulesson.exercises.core: exercise kinds, checking and feedback, on the demo exercises
(no kernel, no widgets, no rendering)."""

from __future__ import annotations

import builtins
import dataclasses
import math
import random

import pytest

from gpulesson.exercises import (
    ChoiceExercise,
    Feedback,
    Mistake,
    NumericExercise,
    PredictExercise,
    format_number,
)
from gpulesson.exercises.core import STATUSES
from gpulesson.exercises.mistakes import counted_macs
from gpulesson.units import DIMENSIONS

from .demo import fit_exercise, flops_code_exercise, weights_exercise


# ---------------------------------------------------------------- numeric: accepted forms
@pytest.mark.parametrize("answer", ["14 GB", "14e9 bytes", "13.04 GiB", "14", "14.1 GB",
                                    "14,000 MB", "0.014 TB", " 14 gb ", 14, 14.0, "14e9"])
def test_numeric_accepts_equivalent_units(answer):
    feedback = weights_exercise().check(answer)
    assert feedback.correct, feedback.message
    assert feedback.value == pytest.approx(14e9, rel=0.02)


def test_dollar_answers_read_as_money():
    """A year of 5.6 kW at PUE 1.4 and $0.10/kWh is $6,867.84: shown as "$6,868" (four
    significant digits, the default), small amounts likewise, and read back."""
    bill = weights_exercise(question="Power bill?", solution="{answer}",
                            answer=lambda p: 5.6 * 1.4 * 8760 * 0.10, dimension="usd",
                            unit="USD", mistakes=(), hints=("kW x h x $/kWh",))
    assert bill.answer_text() == "$6,868"
    assert bill.check("$6,868").correct and bill.check("6868 USD").correct
    assert "$4,906" in bill.check("$4,905.60").message
    cheap = weights_exercise(question="Per 1K tokens?", solution="{answer}",
                             answer=lambda p: 2.5 / 8_640_000 * 1000, dimension="usd",
                             unit="USD", mistakes=(), hints=("price / tokens",))
    assert cheap.answer_text() == "$0.0002894"
    assert cheap.check(cheap.answer_text()).correct


def test_numeric_tolerance_is_relative_to_the_answer():
    ex = weights_exercise()
    assert ex.check("14.27 GB").correct        # +1.9%
    assert not ex.check("14.35 GB").correct    # +2.5%
    assert not weights_exercise(rtol=0.001).check("14.1 GB").correct
    assert ex.tolerance_text() == "±2%"
    assert weights_exercise(rtol=0).tolerance_text() == "exact"


@pytest.mark.parametrize("dimension", sorted(DIMENSIONS))
def test_unit_parsing_round_trips_through_the_shown_answer(dimension):
    """Whatever unit an exercise asks in, its shown answer parses back to the value."""
    rng = random.Random(dimension)
    for unit in [u for u in DIMENSIONS[dimension] if u and u not in {"b"}][:12]:
        for _ in range(5):
            value = rng.choice([1, 3.5, 7e9, 2.5e-3, 123456.0, 989.4e12]) * rng.uniform(0.5, 2)
            ex = NumericExercise(lesson="demo", number=1, title="t", question="q",
                                 solution="s", answer=lambda p, v=value: v,
                                 dimension=dimension, unit=unit)
            shown = ex.answer_text()
            assert ex.parse(shown) == pytest.approx(value, rel=1e-3), (unit, shown)
            assert ex.check(shown).correct


def test_extra_units_are_read():
    ex = NumericExercise(lesson="demo", number=2, title="t", question="q", solution="s",
                         answer=lambda p: 227.6, unit="FLOP/byte",
                         extra_units={"FLOP/byte": 1, "FLOPs/byte": 1})
    for text in ["227.6 FLOP/byte", "228 flops/byte", "227.6", "2.276e2 FLOP/byte"]:
        assert ex.check(text).correct, text
    assert ex.answer_text() == "227.6 FLOP/byte"
    assert ex.check("abc FLOP/byte").status == "invalid"


def test_a_power_is_read_as_the_number_it_stands_for():
    """ "2^23" for a count a lesson writes as a power of two was refused (the exercise
    pages, 2026-12-06). Typed alone, a power is read in the question's unit as a bare
    number is ("2^4" in a GB question is 16 GB, as "16" is); with a unit, in that unit."""
    count = weights_exercise(answer=lambda p: 2**23, dimension="count", unit="",
                             mistakes=())
    for typed in ["2^23", "2**23", "2^20 × 8", "8 x 2^20", "8388608", "2^13 × 1024"]:
        assert count.check(typed).correct, typed
    tokens = weights_exercise(answer=lambda p: 2**20, dimension="count", unit="tokens",
                              extra_units={"tokens": 1}, mistakes=())
    for typed in ["2^20 tokens", "2^20", "2^10 × 1024 tokens", "1048576 tokens"]:
        assert tokens.check(typed).correct, typed
    size = weights_exercise(answer=lambda p: 16e9, mistakes=())  # a GB question
    for typed in ["2^4", "2^4 GB", "16e9 bytes", "2^2 x 4"]:
        assert size.check(typed).correct, typed
    assert size.check("2^34 bytes").value == 2**34  # 17.2 GB: wrong, but read as typed
    for typed in ["1.6 × 10^10", "16 × 10^9"]:  # in GB 1.6e10 GB, wrong; in bytes, right
        feedback = size.check(typed)
        assert feedback.correct and "read as bytes" in feedback.message, typed
    too_large = size.check("2^1024")
    assert too_large.status == "invalid" and "too large" in too_large.message


@pytest.mark.parametrize("typed", ["1/0", "3/4", "0/0", "14/2 GB"])
def test_a_fraction_is_answered_with_what_to_type(typed):
    """ "1/0" was answered "Unknown unit '/0'"; nothing is divided."""
    feedback = weights_exercise().check(typed)
    assert feedback.status == "invalid"
    assert "fraction; type the value as one number" in feedback.message, feedback.message
    share = weights_exercise(answer=lambda p: 0.75, dimension="percent", unit="%",
                             mistakes=())
    assert "fraction" in share.check(typed).message
    assert share.check("75 percent").correct and share.check("75").correct


def test_unit_words_are_read_in_an_exercise():
    assert weights_exercise().check("14 gigabytes").correct
    assert weights_exercise().check("14,000 megabytes").correct
    latency = weights_exercise(answer=lambda p: 5e-6, dimension="seconds", unit="µs",
                               mistakes=())
    assert latency.check("5 microseconds").correct
    assert latency.check("0.005 milliseconds").correct
    price = weights_exercise(answer=lambda p: 0.08, dimension="usd", unit="USD",
                             mistakes=())
    assert price.check("8 cents").correct and price.check("$0.08").correct


# ---------------------------------------------------------------- numeric: wrong answers
def test_close_is_said_within_a_few_tolerances_and_never_for_an_exact_count():
    """Review S2 (2026-12-06): 50 for 48 FLOP was called 'close, check your rounding'."""
    ex = weights_exercise(rtol=0.02)  # 14 GB, 2 %
    assert "Close, but outside the 2% tolerance" in ex.check("14.8 GB").message  # 5.7 % off
    assert "Close" not in ex.check("16 GB").message  # 14 % off: more than 3 tolerances
    assert "1.1× too high" in ex.check("16 GB").message
    exact = NumericExercise(lesson="demo", number=3, title="t", question="q", solution="s",
                            answer=lambda p: 48, unit="FLOP", dimension="flops", rtol=0)
    fifty = exact.check("50").message
    assert "2 FLOP too high" in fifty and "exact" in fifty and "rounding" not in fifty


def test_a_count_typed_with_a_rates_flops_is_read_and_the_ambiguity_named():
    """Review 4, I7: "35 TFLOPS" was read as a count of 35 TFLOP without comment, though the
    lesson's units box is about exactly this."""
    ex = NumericExercise(lesson="demo", number=3, title="t", question="q", solution="s",
                         answer=lambda p: 29.8e12, unit="TFLOP", dimension="flops")
    rate = "FLOPS\" with a capital S usually means FLOP per second"
    right = ex.check("29.8 TFLOPS")
    assert right.correct and rate in right.message
    assert rate in ex.check("35 TFLOPS").message   # wrong, and named too
    for plain in ("29.8 TFLOP", "29.8 TFLOPs", "29.8 tflops", "29.8e12"):
        assert rate not in ex.check(plain).message, plain
    assert rate not in weights_exercise().check("14 GB").message


def test_each_declared_mistake_gets_its_own_hint():
    ex = weights_exercise()
    gib = ex.check("13.04 GB")
    assert gib.status == "mistake" and gib.mistake == "gib_as_gb"
    assert "GiB" in gib.message
    one = ex.check("7 GB")
    assert one.status == "mistake" and one.mistake == "one_byte"
    assert "INT8" in one.message
    assert gib.message != one.message


def test_clearly_wrong_answer_gets_generic_feedback_with_direction():
    ex = weights_exercise()
    high = ex.check("100 GB")
    assert high.status == "incorrect" and high.mistake is None
    assert "too high" in high.message and "hint" in high.message
    low = ex.check("1 GB")
    assert low.status == "incorrect" and "too low" in low.message
    near = ex.check("14.3 GB")  # 2.1 % off: within a few tolerances of 2 %
    assert near.status == "incorrect" and "tolerance" in near.message


@pytest.mark.parametrize("answer, words", [
    ("abc", "Could not read a number"),
    ("", "Please type a number"),
    ("   ", "Please type a number"),
    ("1e999", "too large"),
    ("1e999 GB", "too large"),
    ("-5 GB", "negative"),
    ("-5", "negative"),
    ("5 parsecs", "Unknown unit"),
    ("14 b", "bits"),
    ("9" * 100_000, "characters long"),
    (None, "Please type a number"),
    (True, "not True/False"),
    ([14], "Please type a number"),
    (float("nan"), "finite"),
])
def test_malformed_input_gets_a_clear_message_and_no_exception(answer, words):
    feedback = weights_exercise().check(answer)
    assert feedback.status == "invalid" and feedback.is_error
    assert words.lower() in feedback.message.lower(), feedback.message
    assert len(feedback.message) < 300


def test_text_is_never_evaluated(monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("eval/exec must never be called")

    monkeypatch.setattr(builtins, "eval", boom)
    monkeypatch.setattr(builtins, "exec", boom)
    assert flops_code_exercise().check("2*m*k*n").status == "invalid"
    assert weights_exercise().check("__import__('os')").status == "invalid"


# ---------------------------------------------------------------- texts
def test_progressive_hints_and_solution_are_rendered_with_the_inputs():
    ex = weights_exercise()
    assert ex.hint(1).startswith("How many bytes")
    assert ex.hint(2) == "Multiply by 7,000,000,000."
    assert ex.hint(3) is None and ex.hint(0) is None
    assert ex.solution_text() == "7,000,000,000 × 2 bytes = 14 GB"
    assert ex.mistake_hint("one_byte") == "One byte per parameter is INT8, not FP16."
    with pytest.raises(KeyError, match="one_byte"):
        ex.mistake_hint("no_such_mistake")


def test_example_answers_give_the_reference_and_each_mistake():
    assert weights_exercise().example_answers() == {
        "reference": "14 GB", "gib_as_gb": "13.04 GB", "one_byte": "7 GB"}
    assert fit_exercise().example_answers() == {"reference": "yes", "fp32": "no"}


# ---------------------------------------------------------------- variants, problems
def test_variants_are_deterministic_and_checked_by_the_reference():
    ex = weights_exercise()
    a, b = ex.variant(5), ex.variant(5)
    assert a.inputs == b.inputs and a.variant_seed == 5
    assert len({ex.variant(s).inputs["n"] for s in range(30)}) > 2
    for seed in range(10):
        v = ex.variant(seed)
        assert v.check(v.answer_text()).correct
        assert not v.problems()
    assert ex.variant(None).inputs == {"n": 7e9}
    with pytest.raises(ValueError, match="seed"):
        ex.variant(-1)


def test_variant_draws_avoid_indistinguishable_mistakes():
    """n = 1e9 would make the two mistakes equal: such draws are skipped."""
    ex = weights_exercise(
        mistakes=(Mistake("half", "Half.", lambda p: p["n"]),
                  Mistake("dup", "Same as half when n is 1e9.",
                          lambda p: 1e9 if p["n"] == 1e9 else p["n"] * 3)),
        sample=lambda rng: {"n": rng.choice([1e9, 2e9])})
    for seed in range(20):
        assert ex.variant(seed).inputs["n"] == 2e9


def test_problems_reports_a_mistake_equal_to_the_answer():
    ex = weights_exercise(mistakes=(Mistake("same", "x", lambda p: p["n"] * 2),))
    assert any("right answer" in p for p in ex.problems())


@pytest.mark.parametrize("fields, words", [
    ({"mistakes": (counted_macs(lambda p: 1), counted_macs(lambda p: 2))}, "unique"),
    ({"lesson": "Not A Slug"}, "lesson"),
    ({"number": 0}, "number"),
    ({"dimension": "parsecs"}, "dimension"),
    ({"rtol": 1.5}, "rtol"),
])
def test_bad_definitions_are_refused(fields, words):
    with pytest.raises(ValueError, match=words):
        weights_exercise(**fields)


# ---------------------------------------------------------------- choice
def test_choice_by_key_or_label():
    ex = fit_exercise()
    assert ex.check("yes").correct
    assert ex.check("Yes, with 24 GB").correct
    wrong = ex.check("no")
    assert wrong.status == "mistake" and "FP32" in wrong.message
    assert ex.answer_text() == "Yes, with 24 GB"


@pytest.mark.parametrize("answer", [None, "", "maybe", 3, "x" * 10_000])
def test_choice_invalid(answer):
    feedback = fit_exercise().check(answer)
    assert feedback.status == "invalid"
    assert len(feedback.message) < 300


def test_choice_without_matching_mistake_is_generic():
    ex = ChoiceExercise(lesson="demo", number=4, title="t", question="q", solution="s",
                        options=[("a", "A"), ("b", "B"), ("c", "C")], answer=lambda p: "a",
                        mistakes=(Mistake("b", "Why b.", lambda p: "b"),))
    assert ex.check("c").status == "incorrect"
    assert ex.check("b").mistake == "b"


# ---------------------------------------------------------------- predict, then run
def test_predict_commits_then_compares():
    ex = PredictExercise(lesson="demo", number=5, title="t", question="q", solution="s",
                         unit="×", dimension="count")
    committed = ex.check("50x")
    assert committed.status == "committed" and committed.value == 50
    assert ex.check("fast").status == "invalid"
    low = ex.compare(50, 200.0)
    assert low.status == "compared" and "4× too low" in low.message
    assert "2.5× too high" in ex.compare(50, 20.0).message
    assert "within 10%" in ex.compare(50, 52.0).message
    none = ex.compare(None, 52.0)
    assert none.value is None and "Commit a prediction" in none.message
    assert ex.compare(50, float("nan")).status == "invalid"
    assert ex.compare(50, -1).status == "invalid"


def test_an_unknown_unit_names_the_unit_the_question_asks_for():
    """ "1.2k FLOP/byte" in a FLOP/byte field was told "use one of: k, M, B (billion)",
    the prefixes of a count, which it had used: never the unit the question asks for."""
    ex = NumericExercise(lesson="demo", number=9, title="Intensity", question="?",
                         solution="", answer=lambda p: 1247.0, dimension="count",
                         unit="FLOP/byte", extra_units={"FLOP/byte": 1, "flops/byte": 1})
    for typed in ("1247 F/B", "3 kg", "1.2 kg FLOP/byte"):
        feedback = ex.check(typed)
        assert feedback.status == "invalid"
        assert "This answer is in FLOP/byte: type a number, or a number and FLOP/byte" \
            in feedback.message, feedback.message
    assert ex.check("1247 flops/byte").correct
    assert ex.check("1.247k FLOP/byte").correct  # a scale word is read (test below)
    plain = weights_exercise()
    assert "This answer is in" not in plain.check("14 kg").message  # a unit of its own


def test_a_scale_word_before_the_unit_word_is_read():
    """ "28.35M parameters", "156.7k conversations", "1.97k tokens/s" and "$867.9k" were
    "Unknown unit 'M parameters' ... use one of: k, M, B (billion)": the scale the message
    offered, with the unit the question asked for (the site's exercise pages of lessons 1,
    4 and 8, 2026-12-06). A scale word between the number and the unit word is read; one
    that is no scale is still refused."""
    params = NumericExercise(lesson="demo", number=1, title="t", question="?", solution="",
                             answer=lambda p: 28_348_416, dimension="count",
                             unit="parameters", extra_units={"parameters": 1, "params": 1},
                             rtol=0.005)
    for typed in ("28.35M parameters", "28.35 million parameters", "0.02835B params",
                  "28,348.4k parameters"):
        assert params.check(typed).correct, (typed, params.check(typed).message)
    assert params.check("28.35 parsec parameters").status == "invalid"
    rate = NumericExercise(lesson="demo", number=2, title="t", question="?", solution="",
                           answer=lambda p: 1968.25, dimension="tokens/s", unit="tokens/s")
    for typed in ("1.968k tokens/s", "1.968 k tok/s", "1968 tokens/s"):
        assert rate.check(typed).correct, (typed, rate.check(typed).message)
    assert rate.check("1.968 kg tokens/s").status == "invalid"
    money = NumericExercise(lesson="demo", number=3, title="t", question="?", solution="",
                            answer=lambda p: 867_871.0, dimension="usd", unit="USD")
    for typed in ("$867.9k", "868k USD", "$0.868 million", "$0.8679M", "867.871 thousand USD"):
        assert money.check(typed).correct, (typed, money.check(typed).message)
    for typed in ("$1 parsec", "1e400k USD", "$k"):
        assert money.check(typed).status == "invalid", typed


# ---------------------------------------------------------------- code exercises
def test_code_exercise_accepts_a_correct_function():
    def matmul_flops(m, k, n):
        return 2 * m * n * k

    feedback = flops_code_exercise().check(matmul_flops)
    assert feedback.correct and "9 inputs" in feedback.message


def test_code_exercise_names_the_mistake_and_the_first_failing_input():
    def macs(m, k, n):
        return m * k * n

    feedback = flops_code_exercise().check(macs)
    assert feedback.status == "mistake" and feedback.mistake == "counted_macs"
    assert "matmul_flops(m=2, k=3, n=4) returned 24, expected 48" in feedback.message

    def exact(m, k, n):
        return m * n * (2 * k - 1)

    assert flops_code_exercise().check(exact).mistake == "exact_count"


def test_code_feedback_shows_the_digits_where_the_numbers_differ():
    """Review r22, F8: "matmul_flops(m=2, k=3, n=4) returned 48, expected 48" for a
    function that returned a float a hair off 48: both were written to 4 figures."""
    exact = dataclasses.replace(flops_code_exercise(), rtol=0.0)  # as lesson 1's ex 3
    feedback = exact.check(lambda m, k, n: 2 * m * k * n + 0.001)
    assert feedback.status == "incorrect"
    assert "returned 48.001, expected 48." in feedback.message, feedback.message
    feedback = flops_code_exercise().check(lambda m, k, n: 2 * m * k * n * (1 + 1e-6))
    assert "returned 48.00005, expected 48." in feedback.message, feedback.message


def test_an_exact_count_computed_in_floats_is_still_the_count():
    """Review r22, F8: with rtol 0 (an exact count) the check took 2.0*m*k*n, whose float
    is the count, but not 2*m*k*n*0.1*10 = 48.00000000000001, the same count with a
    rounding error. A float within FLOAT_NOISE of the count and rounding to it is the
    count; one a whole unit off is not, however small that is relatively."""
    exact = dataclasses.replace(flops_code_exercise(), rtol=0.0)
    for counted in (lambda m, k, n: 2.0 * m * k * n,
                    lambda m, k, n: 2 * m * k * n * 0.1 * 10,
                    lambda m, k, n: 2 * m * k * n / 1e9 * 1e9,
                    lambda m, k, n: 2 * m * k * n + 1e-9):
        assert exact.check(counted).correct, exact.check(counted).message
    big = dataclasses.replace(exact, reference=lambda m, k, n: 2 * m * k * n * 10**8,
                              model_solution=None)
    feedback = big.check(lambda m, k, n: 2.0 * m * k * n * 10**8 + 1)  # 2e-10 off
    assert feedback.status == "incorrect", feedback.message
    assert "returned 4,800,000,001, expected 4,800,000,000." in feedback.message


def test_code_exercise_reports_a_difference_found_only_on_random_inputs():
    def only_lesson_numbers(m, k, n):
        return 48 if (m, k, n) == (2, 3, 4) else 0

    feedback = flops_code_exercise().check(only_lesson_numbers)
    assert feedback.status == "incorrect"
    assert "first failing input" in feedback.details[0]
    assert "(m=2, k=3, n=4)" not in feedback.message


@pytest.mark.parametrize("submission, words", [
    ("def matmul_flops(m, k, n): return 2*m*k*n", "not text"),
    (42, "Define a function"),
    (lambda m, k, n: None, "forget `return`"),
    (lambda m, k, n: 1 / 0, "ZeroDivisionError"),
    (lambda a, b, c: 2 * a * b * c, "it has no parameter m, k, n"),
    (lambda m, k, n: "48", "should return a number"),
    (lambda m, k, n: float("inf"), "returned inf"),
])
def test_code_exercise_bad_submissions_never_raise(submission, words):
    feedback = flops_code_exercise().check(submission)
    assert not feedback.correct
    assert words in feedback.message, feedback.message
    # "Did you forget return?" only where nothing was returned (a string was asked it too,
    # the site's lesson 6 exercise 4, 2026-12-07)
    assert ("forget `return`" in feedback.message) == (words == "forget `return`")


def test_code_exercise_names_the_parameters_a_renamed_function_lacks():
    """A function whose parameters are named otherwise than the stub's (``a, b, c``) used
    to be reported as raising TypeError, an attempt marked wrong; it is a form problem:
    the check calls it by the stub's names, and the learner is told so."""
    def matmul_flops(rows, inner, cols):
        return 2 * rows * inner * cols

    feedback = flops_code_exercise().check(matmul_flops)
    assert feedback.status == "invalid" and not feedback.graded
    assert "by name: matmul_flops(m=..., k=..., n=...)" in feedback.message
    assert "(rows, inner, cols)" in feedback.message
    assert "it has no parameter m, k, n" in feedback.message

    def extra(m, k, n, bytes_per_element):
        return 2 * m * k * n

    assert "it also needs bytes_per_element, which the check does not pass" in \
        flops_code_exercise().check(extra).message
    assert flops_code_exercise().check(lambda **kw: 2 * kw["m"] * kw["k"] * kw["n"]).correct
    assert flops_code_exercise().check(lambda m, k, n=1, *, scale=1: 2 * m * k * n).correct


def test_code_exercise_sys_exit_message_fits_the_site_too():
    """The same feedback is shown on the site, where no kernel runs: it must not speak of
    one."""
    import sys

    feedback = flops_code_exercise().check(lambda m, k, n: sys.exit(1))
    assert "sys.exit()" in feedback.message and "kernel" not in feedback.message.lower()


def test_code_exercise_trials_are_seeded():
    ex = flops_code_exercise()
    assert ex.trial_inputs() == ex.trial_inputs()
    assert ex.trial_inputs()[0] == {"m": 2, "k": 3, "n": 4}
    assert ex.variant(1).trial_inputs() != ex.variant(2).trial_inputs()
    assert ex.mistake_function("counted_macs")(m=2, k=3, n=4) == 24


def test_model_solution_source_is_the_code_a_learner_reads():
    source = flops_code_exercise().model_solution_source()
    assert "2 * m * k * n" in source and source == source.strip()


# ---------------------------------------------------------------- feedback, numbers
def test_feedback_is_plain_data_with_a_known_status():
    feedback = Feedback("demo-ex1", "mistake", "Not quite.", details=("first failing input",))
    assert not feedback.correct and not feedback.is_error
    assert str(feedback) == "Not quite.\nfirst failing input"
    # the statuses of the site's DOM contract (data-status of [data-feedback])
    assert set(STATUSES) == {"correct", "mistake", "incorrect", "invalid", "committed",
                             "compared", "timeout", "error"}
    with pytest.raises(ValueError, match="status"):
        Feedback("demo-ex1", "great", "x")


@pytest.mark.parametrize("value, text", [(512, "512"), (4096, "4,096"), (5.92593, "5.926"),
                                         (0.00337, "0.00337"), (227.55, "227.6"),
                                         (1.0e-7, "1.000e-07"), (1.5e20, "1.500e+20")])
def test_format_number(value, text):
    assert format_number(value) == text


def test_format_number_refuses_non_numbers():
    with pytest.raises(TypeError):
        format_number("1")
    with pytest.raises(ValueError):
        format_number(math.inf)


# ---------------------------------------------------------------- never raises
def test_an_answer_at_the_ends_of_the_float_range_gets_feedback_not_an_error():
    """``check("5e-324 GB")`` raised ZeroDivisionError (the ratio underflowed to 0) and
    ``check("1e308")`` raised "value must be finite" (it overflowed to inf), in 53 of the
    67 numeric and predict exercises. Beyond 10^6× the feedback says only "far too"."""
    from gpulesson.exercises import load_lesson

    tiny = load_lesson("memory_what_fits").exercise(4).check("5e-324 GB")
    assert tiny.status == "incorrect" and "far too low" in tiny.message
    huge = load_lesson("cost_economics").exercise(5).check("1e308")
    assert huge.status == "incorrect" and "far too high" in huge.message
    assert "inf" not in huge.message
    ex = weights_exercise()
    assert "about 2× too high" in ex.check("28 GB").message  # ordinary ratios as before
    assert "far too high" in ex.check("1e290 GB").message


@pytest.mark.parametrize(("prediction", "measured", "words"), [
    (1e-300, 1e300, "far too low"), (1e300, 1e-300, "far too high"),
    (5e-324, 1.0, "far too low"), (1.0, 1.7e308, "far too low"), (0.0, 3.0, "zero"),
])
def test_a_comparison_at_the_ends_of_the_range_never_raises(prediction, measured, words):
    ex = PredictExercise(lesson="demo", number=5, title="t", question="q", solution="s",
                         unit="×")
    feedback = ex.compare(prediction, measured)
    assert feedback.status == "compared" and words in feedback.message


@pytest.mark.parametrize("prediction", [math.inf, math.nan, -1.0, "12", True, object()])
def test_a_prediction_that_is_not_a_number_is_invalid(prediction):
    ex = PredictExercise(lesson="demo", number=5, title="t", question="q", solution="s")
    assert ex.compare(prediction, 3.0).status == "invalid"


def test_a_failure_to_build_feedback_is_invalid_feedback_saying_why():
    ex = dataclasses.replace(weights_exercise(), answer=lambda p: 1 / 0)
    feedback = ex.check("14 GB")
    assert feedback.status == "invalid" and "ZeroDivisionError" in feedback.message


class _Hostile(float):
    """A number whose repr and str raise: what a learner's class might return."""

    def __repr__(self):
        raise RuntimeError("no repr")

    __str__ = __repr__


class _HostileError(Exception):
    def __str__(self):
        raise RuntimeError("no str")


@pytest.mark.parametrize(("returned", "words"), [
    (10**400, "an integer beyond the float range"), (math.nan, "returned nan"),
    (_Hostile(3.0), "returned 3"), ([1, 2], "should return a number"),
], ids=["huge-int", "nan", "hostile-float", "list"])
def test_what_a_learners_function_returns_never_breaks_the_check(returned, words):
    feedback = flops_code_exercise().check(lambda m, k, n: returned)
    assert feedback.status == "incorrect" and words in feedback.message


def test_an_exception_that_cannot_be_printed_is_still_reported():
    def matmul_flops(m, k, n):
        raise _HostileError

    feedback = flops_code_exercise().check(matmul_flops)
    assert feedback.status == "incorrect" and "_HostileError" in feedback.message


def test_system_exit_is_reported_not_raised():
    import sys

    feedback = flops_code_exercise().check(lambda m, k, n: sys.exit(1))
    assert feedback.status == "incorrect" and "sys.exit()" in feedback.message


def test_an_interrupt_and_a_stop_leave_the_check():
    """The runner reports them (gpulesson.exercises.guard); a check never swallows them."""
    from gpulesson.exercises.core import CheckStopped

    def interrupted(m, k, n):
        raise KeyboardInterrupt

    def stopped(m, k, n):
        raise CheckStopped("timeout")

    with pytest.raises(KeyboardInterrupt):
        flops_code_exercise().check(interrupted)
    with pytest.raises(CheckStopped) as err:
        flops_code_exercise().check(stopped)
    assert err.value.during == "matmul_flops(m=2, k=3, n=4)"


def test_a_power_of_ten_before_the_unit_word_is_read():
    """ "1.4 × 10^12 tokens" in a field in tokens: the power before the question's word."""
    tokens = NumericExercise(lesson="demo", number=4, title="t", question="?", solution="",
                             answer=lambda p: 1.4e12, dimension="count", unit="tokens",
                             extra_units={"tokens": 1})
    for typed in ("1.4 × 10^12 tokens", "1.4 x 10^12", "1.4*10**12 tokens"):
        assert tokens.check(typed).correct, (typed, tokens.check(typed).message)


@pytest.mark.parametrize(("typed", "words"), [
    ("112 GiB", "1.074× too high, the ratio of a GiB (2^30 bytes) to a GB (10^9 bytes): "
                "check where you used one for the other."),
    ("120.3 GB", "1.074× too high, the ratio of a GiB (2^30 bytes) to a GB (10^9 bytes)"),
    ("104.3 GB", "1.074× too low, the ratio of a GiB (2^30 bytes) to a GB (10^9 bytes): "
                 "check where you used one for the other."),
    ("106,800 MB", "1.049× too low, the ratio of a MiB (2^20 bytes) to a MB (10^6 bytes)"),
    ("0.112 TiB", "1.100× too high, the ratio of a TiB (2^40 bytes) to a TB (10^12 bytes)"),
])
def test_a_byte_answer_off_by_a_binary_prefix_is_told_so(typed, words):
    """Audit 2026-12-06: "112 GiB" for an answer of 112 GB (the right figure, the other
    unit) was only "about 1.1× too high". Said when the answer, moved by the step between
    the prefixes, would be accepted; never for a quantity that is not bytes."""
    ex = NumericExercise(lesson="demo", number=7, title="t", question="q", solution="s",
                         answer=lambda p: 112e9, dimension="bytes", unit="GB")
    feedback = ex.check(typed)
    assert feedback.status == "incorrect" and words in feedback.message, feedback.message
    assert "ratio of a" not in ex.check("200 GB").message  # about 1.8× too high
    count = NumericExercise(lesson="demo", number=8, title="t", question="q", solution="s",
                            answer=lambda p: 112.0, dimension="count")
    assert "GiB" not in count.check("120.25").message


def test_a_binary_step_is_named_only_for_the_prefixes_in_play():
    """Review r22, F4: 11.3 typed for 10.27 GB was told "1.100× too high, the ratio of a
    TiB (2^40 bytes) to a TB (10^12 bytes)": no TB was typed or asked for, and the ratio
    only happened to be near 2^40 / 10^12. The steps tried are those of the unit typed and
    the question's unit; where neither has a prefix, that of the answer's own scale."""
    gb = NumericExercise(lesson="demo", number=7, title="t", question="q", solution="s",
                         answer=lambda p: 112e9, dimension="bytes", unit="GB")
    tib_over_tb = 2**40 / 10**12
    high = 112 * tib_over_tb  # 123.15 (GB), the right figure times a TiB / TB
    for typed in (f"{high:.2f}", f"{high:.2f} GB", f"{high * 1000:.0f} MB"):
        feedback = gb.check(typed)
        assert feedback.status == "incorrect" and "TiB" not in feedback.message, typed
        assert "1.1× too high" in feedback.message, feedback.message
    assert "ratio of a TiB" in gb.check(f"{high / 1000:.5f} TB").message  # TB typed
    # a question in bytes (no prefix): the answer's scale decides, here TB
    in_bytes = NumericExercise(lesson="demo", number=9, title="t", question="q",
                               solution="s", answer=lambda p: 2e12, dimension="bytes",
                               unit="bytes")
    assert "ratio of a TiB" in in_bytes.check(f"{2e12 * tib_over_tb:.4e}").message
    assert "ratio of a" not in in_bytes.check(f"{2e12 * 2**30 / 10**9:.4e}").message
