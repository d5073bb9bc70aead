"""Lesson 8, *Optimisations that Change the Math* (``notebooks/optimisations.ipynb``): the
promises its page and its exercises make, checked without running the notebook (nbval
runs it, hidden asserts included).

* the skeleton of the house style, collapsed "Pause and think" answers, the lesson's two
  registry calculators, glossary terms and citations that exist;
* the byte counts of the NumPy attentions and the checkpointing simulation are checked
  against the calculators by hidden asserts, and the prose figures are pinned;
* the floating-point limits the bank computes from bit layouts are BF16's (Kalamkar et al.
  2019: FP32's 8 exponent bits, 7 fraction bits; the IEEE 754 formats are checked against
  NumPy in ``tests/unit/test_precision.py``); the online-softmax merge equals a direct
  log-sum-exp;
* the exercise bank has the kinds and common mistakes the lesson promises.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpulesson import flops, hardware
from gpulesson.exercises import lesson_module
from gpulesson.precision import float_format

from . import nbtools as nb

SLUG = "optimisations"
NOTEBOOK = nb.notebook(SLUG)
BANK = lesson_module(SLUG)


def _to_bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 to the nearest bfloat16 (ties to even), as float32: the top 16 bits."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32)
    rounded = bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))
    return (rounded & np.uint32(0xFFFF0000)).view(np.float32)


# ---------------------------------------------------------------------------------------
# The page


def test_skeleton_of_the_house_style() -> None:
    nb.check_skeleton(SLUG, "Optimisations that Change the Math", headings=(
        "## Set-up", "## 1. FlashAttention", "## 2. Gradient checkpointing",
        "## 3. Mixed precision"))
    nb.check_first_cell_picks_the_device(NOTEBOOK)


def test_every_pause_and_think_hides_its_answer() -> None:
    nb.check_pauses_hide_answers(nb.markdown(NOTEBOOK), at_least=3)


def test_calculators_are_this_lessons_registry_entries() -> None:
    nb.check_registry_widgets(SLUG, {"flash_attention", "checkpointing"})


def test_every_term_is_in_the_glossary() -> None:
    assert len(nb.check_terms_in_glossary(nb.markdown(NOTEBOOK))) >= 20


def test_every_citation_is_in_the_bibliography() -> None:
    cited = nb.check_citations_in_bibliography(nb.markdown(NOTEBOOK))
    assert {"dao2022flashattention", "shah2024flashattention3", "chen2016sublinear",
            "korthikanti2022reducing", "micikevicius2018mixed"} <= cited


def test_implementations_are_checked_against_the_calculators() -> None:
    """The byte counters of both attentions equal the calculator's counts; the outputs agree
    with each other; the simulated schedule's peak equals checkpoint_memory for every k."""
    visible = "\n".join(nb.code(NOTEBOOK, hidden=False))
    hidden = "\n".join(nb.code(NOTEBOOK, hidden=True))
    assert "np.testing.assert_allclose(out_flash, out_std" in visible
    assert "c_std == optimisations.standard_attention_hbm_bytes(" in hidden
    assert "c_flash == optimisations.flash_attention_hbm_bytes(" in hidden
    assert "peak_k == optimisations.checkpoint_memory(" in hidden
    assert "optimisations.optimal_segments(layers)" in hidden
    assert "abs(k - math.sqrt(layers))" in hidden  # ties: the k nearest sqrt(L)
    assert "optimisations.recompute_overhead())" in hidden
    # timings are measured with the course's benchmark on the lesson's device, one BLAS thread
    assert "benchmark(standard_attention" in visible and "threadpool_limits(1" in visible
    assert 'sizes_for(dev, "gemm")' in visible


def test_prose_figures_are_pinned_by_hidden_asserts() -> None:
    nb.check_pinned(NOTEBOOK, asserts=40, pinned=(
        "274_877_906_944", "9_126_805_504", "1_639_972_864", "== 5.6",
        "round(fa3, 2) == 0.75", "3_254_779_904", "== 104.2", "== 107.8",
        "optimal_segments(96) == 10", "== 20", "== 4.3", "== 18.3",
        "round(sel_extra, 3) == 0.046", "== 0.363", "== 0.329", "== 14.8"))
    text = nb.markdown(NOTEBOOK)
    for figure in ("9.13 GB", "5.87 ms", "5.6 times", "75 %", "104 GB", "18.3 GB",
                   "4.6 %", "4.3 GB", "20 layers", "33 %"):
        assert figure in text, figure


def test_flashattention3_utilisation_as_published() -> None:
    """Shah et al. 2024 (abstract): FP16 up to 740 TFLOP/s, 75 % of the H100's dense FP16
    peak (989.4 TFLOP/s, NVIDIA H100 datasheet)."""
    assert round(flops.utilization(740e12, hardware.gpu("H100 SXM").dense("fp16")), 2) == 0.75


# ---------------------------------------------------------------------------------------
# The float formats (gpulesson.precision) and the bank's helper against NumPy


def test_bf16_limits_from_its_bit_patterns() -> None:
    """BF16 (Kalamkar et al. 2019) is the top half of FP32: 0x7F7F is its largest finite
    value, 0x0080 its smallest normal (FP32's), 0x0001 its smallest subnormal, and the next
    number after 1.0 (0x3F80) is 0x3F81."""
    def from_bits(pattern: int) -> float:
        return float(np.uint32(pattern << 16).view(np.float32))

    spec = float_format("bf16")
    assert spec.largest == from_bits(0x7F7F)
    assert spec.smallest_normal == from_bits(0x0080) == float(np.finfo(np.float32).tiny)
    assert spec.smallest_subnormal == from_bits(0x0001)
    assert spec.epsilon == from_bits(0x3F81) - 1.0


def test_bf16_limits_match_ml_dtypes_where_installed() -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    spec, info = float_format("bf16"), ml_dtypes.finfo(ml_dtypes.bfloat16)
    assert spec.largest == float(info.max) and spec.epsilon == float(info.eps)
    assert spec.smallest_normal == float(info.smallest_normal)


def test_rounds_to_zero_matches_numpy_casts() -> None:
    """Round-to-nearest-even: FP16 turns everything up to 2^-25 into zero, nothing above."""
    fp16, bf16 = float_format("fp16"), float_format("bf16")
    values = np.geomspace(1e-44, 1e-4, 4001)
    for x in values:
        assert fp16.rounds_to_zero(float(x)) == (float(np.float16(x)) == 0.0), x
        assert bf16.rounds_to_zero(float(x)) == (float(_to_bf16(np.float32(x))) == 0.0), x
    assert fp16.rounds_to_zero(2.0**-25) and not fp16.rounds_to_zero(2.0**-25 * 1.0001)
    with pytest.raises(ValueError, match="value"):
        fp16.rounds_to_zero(float("nan"))
    with pytest.raises(KeyError, match="fp16"):
        float_format("fp8")


def test_merged_softmax_sum_equals_a_direct_log_sum_exp() -> None:
    """Milakov and Gimelshein 2018: merging two parts' (max, sum) gives the whole row's."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        row = rng.normal(0, 30, size=rng.integers(2, 50))
        cut = int(rng.integers(1, len(row)))
        a, b = row[:cut], row[cut:]
        m = row.max()
        merged = BANK.merged_softmax_sum(a.max(), np.exp(a - a.max()).sum(),
                                         b.max(), np.exp(b - b.max()).sum())
        assert math.isclose(merged, np.exp(row - m).sum(), rel_tol=1e-12)
    with pytest.raises(ValueError, match="l_a"):
        BANK.merged_softmax_sum(0.0, -1.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="m_b"):
        BANK.merged_softmax_sum(0.0, 1.0, float("inf"), 1.0)


# ---------------------------------------------------------------------------------------
# The exercises


def test_exercise_bank_promises() -> None:
    exercises = BANK.EXERCISES
    assert len(exercises) >= 5
    assert {ex.kind for ex in exercises} == {"numeric", "choice", "predict", "code"}
    keys = {m.key for ex in exercises for m in ex.mistakes}
    for mistake in ("counted_numbers", "scores_once", "no_rescaling", "no_checkpointing",
                    "segment_only", "twenty_percent", "whole_step_again", "subnormal",
                    "precision_for_range", "quoted_percentage", "forgot_master_copy",
                    "used_sparse_peak"):
        assert mistake in keys, mistake
    sources = nb.check_exercise_notebook(SLUG)
    assert "lesson.reveal(3, ratio)" in "\n".join(sources)


def test_exercise_answers_agree_with_numpy() -> None:
    """The lesson's own numbers: standard attention at N = 4096, d = 128 in BF16 moves
    (4Nd + 4N^2) x 2 bytes (Dao et al. 2022, Algorithm 0); FP16's smallest normal is
    2^-14; a gradient of 1e-8 survives only in BF16; 64 layers need 16 layers' worth."""
    by_number = {ex.number: ex for ex in BANK.EXERCISES}
    assert by_number[1].answer_value() == (4 * 4096 * 128 + 4 * 4096**2) * 2
    assert by_number[4].answer_value() == 16 * 1.5e9
    assert by_number[6].answer_value() == float(np.finfo(np.float16).smallest_normal)
    for seed in (None, 0, 1, 2, 3, 7, 42):
        ex = by_number[7].variant(seed)
        value = ex.inputs["value"]
        fp16_keeps = float(np.float16(value)) != 0
        bf16_keeps = float(_to_bf16(np.float32(value))) != 0
        expected = {(True, True): "both", (False, True): "bf16", (True, False): "fp16",
                    (False, False): "neither"}[(fp16_keeps, bf16_keeps)]
        assert ex.answer_value() == expected
    assert by_number[8].answer_value() == "none"
    code = by_number[2]
    assert code.check(code.model_solution).correct
    assert code.check(lambda m_a, l_a, m_b, l_b: l_a + l_b).mistake == "no_rescaling"
