"""Lesson 6, *Distributed Math* (``notebooks/distributed_math.ipynb``), and its exercises:
the promises the pages make, checked without running them (nbval runs them).

* the skeleton of the house style, hidden answers, the lesson's registry widgets, glossary
  terms and citations that exist, and the exercise notebook wired to the bank;
* the real measurement: an MPI all-reduce through ``gpulesson.collectives`` with 2 and 4
  processes, nccl-tests' table, the alpha-beta fit and the NCCL recipe shown as text;
* published figures the lesson relies on: the ZeRO paper's 7.5B example, nccl-tests' bus
  bandwidth, the Llama 3 paper's Table 4, and the earlier calculator page's scaling
  figures reproduced from the inputs the lesson names.

The bank itself (reference accepted, each mistake its own hint, variants) is covered for
every lesson by ``tests/exercises/test_bank.py``; here are the checks specific to this one.
"""

from __future__ import annotations

import re

import pytest

from gpulesson import calculators, distributed, flops, hardware, memory, transformer
from gpulesson.exercises import lesson_module

from . import nbtools as nb

SLUG = "distributed_math"
NOTEBOOK = nb.notebook(SLUG)
BANK = lesson_module(SLUG)


# ---------------------------------------------------------------------------------------
# The page


def test_skeleton_of_the_house_style() -> None:
    nb.check_skeleton(SLUG, "Distributed Math")


def test_every_pause_and_think_hides_its_answer() -> None:
    nb.check_pauses_hide_answers(nb.markdown(NOTEBOOK), at_least=6)


def test_widgets_are_this_lessons_registry_calculators() -> None:
    """The brief: calculator_widget("scaling_efficiency"), ("zero"), ("pipeline_bubble")."""
    nb.check_registry_widgets(SLUG, {"scaling_efficiency", "zero", "pipeline_bubble"})


def test_every_term_is_in_the_glossary() -> None:
    terms = nb.check_terms_in_glossary(nb.markdown(NOTEBOOK))
    assert {"all-reduce", "all-gather", "reduce-scatter", "bus bandwidth",
            "algorithm bandwidth", "alpha-beta model", "pipeline bubble", "ZeRO",
            "scaling efficiency", "MPI"} <= terms


def test_every_citation_is_in_the_bibliography() -> None:
    cited = nb.check_citations_in_bibliography(nb.markdown(NOTEBOOK))
    assert {"dubey2024llama3", "rajbhandari2020zero", "nccltests", "patarasuk2009bandwidth",
            "huang2019gpipe", "narayanan2021megatron", "mpi41",
            "hockney1994communication"} <= cited


def test_prose_numbers_are_pinned_by_hidden_asserts() -> None:
    nb.check_pinned(NOTEBOOK, asserts=40, pinned=(
        "== 1.10", "== 521", "== 66", "== 11.8", "== 13.5", "== 23.6", "== 52 and",
        "== 531", "== 257", "[33, 33, 28.5]", "== [8, 4]", "[120.0, 31.4, 16.6, 1.9]",
        "== [None, None, None, 14]", "[99.9, 92.7, 75.7, 43.7]", "== 612.5e9", "== 12.25",
        "== 38", "== 1061", "== 28.3", "== 97.6", "== [43, 40, 38]",
        "[8_192, 16_384, 8_192]", "== 79.8", "== 0.9375"))


def test_plots_have_labelled_axes() -> None:
    plots = [src for src in nb.code(NOTEBOOK) if "plt.show()" in src]
    assert len(plots) >= 5
    for src in plots:
        assert "label_axes(" in src


# ---------------------------------------------------------------------------------------
# The measurement


def test_the_measurement_is_a_real_mpi_allreduce_with_2_and_4_processes() -> None:
    code = "\n".join(nb.code(NOTEBOOK, hidden=False))
    assert "collectives.run_allreduce_benchmark(" in code
    assert "RANKS = (2, 4)" in code
    assert "max_seconds_per_size=" in code and "timeout=" in code
    for call in ("collectives.format_table(", "collectives.fit_alpha_beta(",
                 "collectives.predict_times(", "collectives.torch_nccl_recipe()",
                 "collectives.allreduce_command("):
        assert call in code, call
    # the hand-made ring only counts bytes; the timed all-reduce is MPI's
    ring_cells = [src for src in nb.code(NOTEBOOK, hidden=False) if "def ring_allreduce(" in src]
    assert len(ring_cells) == 1 and "perf_counter" not in ring_cells[0]


def test_measurement_cells_are_not_compared_by_nbval() -> None:
    for src, tags in nb.code_cells(NOTEBOOK):
        if ("run_allreduce_benchmark(" in src or "fit_alpha_beta(" in src) and \
                "remove-cell" not in tags:
            assert "nbval-ignore-output" in tags, src[:60]
        if "nbval-check-output" in tags:
            assert "measured" not in src and "perf_counter" not in src, src[:60]


def test_measurement_fits_the_time_budget() -> None:
    """The brief: the whole lesson under 60 s on 2 busy cores. The rounds of measurement
    stop after about 40 s, and each run is bounded per size and in total."""
    code = "\n".join(nb.code(NOTEBOOK, hidden=False))
    assert re.search(r"> 40:", code)
    assert "for attempt in range(3)" in code
    assert re.search(r"SIZES = \[4\*\*k \* 2\*\*12 for k in range\(8\)\]", code)


def test_the_page_says_what_makes_the_measurement_noisy() -> None:
    text = nb.markdown(NOTEBOOK)
    for phrase in ("oversubscribed", "cache", "busy", "shared memory"):
        assert phrase in text, phrase
    for phrase in ("754 MB", "6.6 MB", "NVLink", "InfiniBand", "tree"):
        assert phrase in text, phrase


# ---------------------------------------------------------------------------------------
# Published figures


def test_zero_paper_example() -> None:
    """Rajbhandari et al. 2020, Figure 1: 7.5B parameters, K = 12, Nd = 64: 120 GB, 31.4 GB,
    16.6 GB and 1.88 GB of model states per device for baseline, P_os, P_os+g, P_os+g+p."""
    per_stage = [distributed.zero_memory_per_gpu(7.5e9, stage=s, dp=64) for s in range(4)]
    assert [round(b / 1e9, 1) for b in per_stage] == [120.0, 31.4, 16.6, 1.9]


def test_nccl_tests_bus_bandwidth_definition() -> None:
    """nccl-tests doc/PERFORMANCE.md: busbw = algbw x 2(n-1)/n for all-reduce."""
    t = distributed.collective_time("all_reduce", 2**30, 8, bandwidth=450e9)
    assert distributed.bus_bandwidth("all_reduce", 2**30, t, 8) == pytest.approx(450e9)
    assert distributed.algorithm_bandwidth(2**30, t) == pytest.approx(450e9 / 1.75)


def test_llama3_table4_mfu_and_layouts() -> None:
    """Dubey et al. 2024, Table 4: 430, 400 and 380 TFLOP/s per H100 are 43%, 41% and 38%
    BF16 MFU (the dense 989.4 TFLOP/s gives 40.4% for the middle row); TP 8 x PP 16 on
    8,192 and 16,384 GPUs with DP 64 and 128; 126 layers on 16 stages."""
    peak = hardware.gpu("H100 SXM").dense("bf16")
    assert [round(100 * flops.utilization(r, peak), 1) for r in (430e12, 400e12, 380e12)] \
        == [43.5, 40.4, 38.4]
    assert 8 * 1 * 16 * 64 == 8_192 and 8 * 1 * 16 * 128 == 16_384
    assert transformer.preset("llama-3.1-405b").layers == 126
    assert distributed.stage_layers(126, 16) == 8
    text = nb.markdown(NOTEBOOK)
    assert "16,000+ H100 GPUs across multiple datacenters" in text
    assert "within the same datacenter building" in text and "4D parallelism" in text


def test_the_earlier_pages_scaling_figures_follow_from_the_named_inputs() -> None:
    """The seed page prints 612.5 GB, 12.25 s, 0.8% and 0.06x. They follow from a 175B
    model's FP16 gradients (350 GB) all-reduced over 8 GPUs at 50 GB/s after 0.1 s of
    compute: 1.75 x 350 GB = 612.5 GB; 612.5 / 50 = 12.25 s; 0.1 / 12.35 = 0.81%;
    8 x 0.81% = 0.065."""
    out = calculators.compute("scaling_efficiency", model="custom", n_params=175,
                              grad_dtype="fp16", n_gpus=8, bandwidth=50, latency=0,
                              compute_time=0.1, overlap=0)
    assert out["gradient_bytes"] == 350e9 and out["volume"] == 612.5e9
    assert out["comm_time"] == 12.25
    assert f"{100 * out['efficiency']:.1f}" == "0.8" and f"{out['speedup']:.2f}" == "0.06"
    assert not out["layout_memory"] <= 80e9
    assert memory.gpus_needed(16 * 175e9, 80e9) == 35


# ---------------------------------------------------------------------------------------
# Exercises


def test_exercise_answers_and_mistakes_on_the_lessons_numbers() -> None:
    """14 GB of BF16 gradients over 8 GPUs: 24.5 GB per GPU; 4 stages, 16 micro-batches:
    18.75%, interleaved v = 2: 9.375%; ZeRO-3, 7B on 64 GPUs: 16 x 7e9 / 64 = 1.75 GB."""
    by_number = {ex.number: ex for ex in BANK.EXERCISES}
    assert len(by_number) >= 5
    assert by_number[1].answer_value() == pytest.approx(24.5e9)
    assert by_number[1].check("12.25 GB").mistake == "reduce_scatter_only"
    assert by_number[1].check("28 GB").mistake == "twice_the_buffer"
    assert by_number[2].check(f"{2**30 / 5.22e-3 / 1e9:.2f} GB/s").mistake == "algbw"
    assert by_number[3].answer_value() == pytest.approx(0.1875)
    assert by_number[3].check("25%").mistake == "p_over_m"
    assert by_number[4].answer_value() == pytest.approx(0.09375)
    assert by_number[4].check("18.75%").mistake == "forgot_v"
    assert by_number[5].answer_value() == pytest.approx(1.75e9)
    assert by_number[5].check("112 GB").mistake == "stage_0"
    assert by_number[7].check("slow").mistake == "slow"
    kinds = {ex.kind for ex in BANK.EXERCISES}
    assert {"numeric", "choice", "code", "predict"} <= kinds
    assert all(ex.mistakes for ex in BANK.EXERCISES if ex.kind != "predict")


def test_exercise_notebook_shows_every_exercise_once() -> None:
    sources = nb.check_exercise_notebook(SLUG)
    assert any("def ring_allreduce_bytes(" in s for s in sources)
    assert any("lesson.reveal(10," in s and "run_allreduce_benchmark(" in s for s in sources)
