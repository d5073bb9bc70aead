"""Answers a reviewer typed into the exercises of lessons 1-5 (review r22, 2026-12-07):
each test types what the learner typed and checks what the learner is told. Every figure
typed comes from the calculators, as a learner following the lesson would get it.

That each declared mistake is recognised at all, for every variant, is
``test_bank.test_each_declared_mistake_produces_its_own_hint``; these tests pin the
particular slips the review found answered wrongly or generically.
"""

from __future__ import annotations

import pytest

from gpulesson import transformer
from gpulesson.exercises import load_lesson


def _exercise(slug: str, number: int, seed: int | None = None):
    ex = load_lesson(slug).exercises[number - 1]
    return ex if seed is None else ex.variant(seed)


@pytest.mark.parametrize("seed", [None, 0, 1, 2, 3])
def test_the_weights_alone_are_not_the_attention_parameters(seed):
    """Review r22, F3: "the Q, K, V and output-projection weights and their biases" accepted
    28,311,552, the weights alone (L·4d²), 0.13 % below the key and inside its 0.5 %
    tolerance. A parameter count is exact, and the missing biases are named."""
    ex = _exercise("memory_what_fits", 1, seed)
    cfg = transformer.preset(ex.inputs["model"])
    weights_only = cfg.layers * 4 * cfg.hidden ** 2
    feedback = ex.check(f"{weights_only:,}")
    assert feedback.status == "mistake" and feedback.mistake == "forgot_biases", \
        feedback.message
    assert "biases" in feedback.message
    assert ex.tolerance_text() == "exact"
    key = transformer.param_breakdown(cfg)["attention"]
    assert ex.check(f"{key:,}").correct
    assert not ex.check(f"{key + 1:,}").correct


def test_the_exact_count_rounded_is_told_to_type_every_digit():
    """A diff review the same day: the right count typed rounded ("28.35M" for 28,348,416)
    was told "1,584 parameters too high ... count again", though the learner had counted
    right. A count rounded to its own figures is told so; one off by a real amount is
    still told how far and to count again."""
    ex = _exercise("memory_what_fits", 1)
    key = transformer.param_breakdown(transformer.preset(ex.inputs["model"]))["attention"]
    rounded = ex.check(f"{key / 1e6:.2f}M")
    assert not rounded.correct and "count rounded" in rounded.message, rounded.message
    assert "type every digit" in rounded.message
    off = ex.check(f"{key + 1000:,}")
    assert "too high" in off.message and "count again" in off.message, off.message


def test_a_gb_answer_a_tenth_too_high_is_not_a_tib_read_as_a_tb():
    """Review r22, F4: memory ex 8 (GPT-3, TP = 8 + SP, 10.27 GB): 11.3, typed in GB, was
    "1.100× too high, the ratio of a TiB (2^40 bytes) to a TB (10^12 bytes)"."""
    ex = _exercise("memory_what_fits", 8)
    for typed in ("11.3", "11.3 GB"):
        feedback = ex.check(typed)
        assert "TiB" not in feedback.message and "TB" not in feedback.message, \
            feedback.message


def _lesson_1_fine_tune_state() -> float:
    """Lesson 1's round figure for a 7B fine-tune (its exercise 10: 7e9 × 16 bytes)."""
    ex = _exercise("parallelism_at_the_core", 10)
    assert ex.inputs["n_params"] == 7e9
    return ex.answer_value()


def _last_memory_bound_batch() -> str:
    """The largest of roofline ex 6's batches below the A100 80GB's BF16 ridge (128)."""
    from gpulesson import gemm, hardware
    from gpulesson.exercises.bank.roofline_and_tensor_cores import _BATCHES

    ex = _exercise("roofline_and_tensor_cores", 6)
    ridge = hardware.gpu(ex.inputs["gpu"]).ridge_point("bf16")
    d = ex.inputs["d"]
    below = [t for t in _BATCHES if gemm.arithmetic_intensity(t, d, d) < ridge]
    return f"{below[-1]} tokens"


def _typed_f11():
    from gpulesson import execution
    from gpulesson.exercises.bank.flops_and_scaling import REPORTED_LLAMA31_405B_GPU_HOURS

    strided = _exercise("inside_the_gpu", 4)
    return [
        ("flops_and_scaling", 9, f"{REPORTED_LLAMA31_405B_GPU_HOURS:.4g}", "reported_hours"),
        ("inside_the_gpu", 4, format(100 * execution.coalescing(
            strided.inputs["stride"], element_bytes=4).efficiency, "g"), "efficiency_percent"),
        ("roofline_and_tensor_cores", 6, _last_memory_bound_batch(), "last_memory_bound"),
        ("memory_what_fits", 5, f"{_lesson_1_fine_tune_state() / 1e9:g}", "named_size"),
    ]


@pytest.mark.parametrize(("slug", "number", "typed", "key"), _typed_f11(),
                         ids=lambda v: v if isinstance(v, str) else None)
def test_figures_the_course_prints_elsewhere_get_their_own_hint(slug, number, typed, key):
    """Review r22, F11: 30.84e6 (the GPU-hours Meta reports, cited in the solution), 12.5
    (the efficiency in %), "128 tokens" (124 FLOP/byte against a ridge of 153) and 112
    (lesson 1's 7e9 × 16 for Llama-2-7B's 6.74e9) got only "about 1.2× too high", "not
    right here" or "check your rounding"."""
    feedback = _exercise(slug, number).check(typed)
    assert feedback.status == "mistake" and feedback.mistake == key, feedback.message
    assert "rounding" not in feedback.message
