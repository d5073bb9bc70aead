"""Lesson 7, *Distributed Math* (``notebooks/distributed_math.ipynb``), and its exercises:
what the two notebooks promise beyond the figures of the prose (those are claims in
``test_distributed_math.py``; the measurement and the published figures are in
``test_distributed_math_sources.py``).

* the lesson's own code (the rank layout, the hand-made ring) run here against the
  calculators, and the drawn pipeline schedules against the bubble formula;
* the skeleton of the house style, hidden answers, the lesson's registry widgets, glossary
  terms and citations that exist, and plots with labelled axes;
* the exercises' answers and mistakes on the lesson's numbers, and the exercise notebook
  wired to the bank. The bank itself (reference accepted, each mistake its own hint,
  variants) is covered for every lesson by ``tests/unit/exercises/test_bank.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from gpulesson import distributed
from gpulesson.exercises import lesson_module

from . import nbtools as nb
from .test_distributed_math import (
    M_MICRO,
    NOTEBOOK,
    P_STAGES,
    SLUG,
    V_CHUNKS,
    _bubble,
    _idle,
    _run_cell,
    _schedules,
)

BANK = lesson_module(SLUG)


# ---------------------------------------------------------------------------------------
# The lesson's own code, run here


def test_the_rank_layout_has_16384_gpus_and_places_gpu_1000() -> None:
    """Section 2's layout cell: Llama 3 405B's [TP, CP, PP, DP] = [8, 1, 16, 128] is 16,384
    GPUs, and GPU 1000 is TP rank 0, PP rank 13 of DP group 7."""
    namespace, _ = _run_cell("8cc57b25")
    assert int(np.prod(namespace["sizes"])) == 16_384
    assert {k: int(v) for k, v in namespace["coords"].items()} == {"TP": 0, "CP": 0, "PP": 13,
                                                                  "DP": 7}


@pytest.mark.parametrize("n_ranks", [2, 3, 4, 5, 8])
def test_the_hand_made_ring_sums_exactly_and_sends_what_the_calculator_says(n_ranks) -> None:
    """Section 3's ``ring_allreduce`` on small integer arrays (exact in float32): every rank
    gets the sum, and sends 2(n-1)/n of its buffer, ``distributed.allreduce_bytes_per_rank``."""
    ring = _run_cell("3aa92890", distributed=distributed)[0]["ring_allreduce"]
    results, sent = ring([np.full(120, float(k), dtype=np.float32) for k in range(n_ranks)])
    assert all(np.array_equal(r, np.full(120, sum(range(n_ranks)))) for r in results)
    assert sent == [distributed.allreduce_bytes_per_rank(480, n_ranks)] * n_ranks


@pytest.mark.parametrize("name", ["GPipe", "1F1B", "interleaved"])
def test_every_gpu_of_the_drawn_schedules_idles_as_the_formula_says(name) -> None:
    """Section 5, "every GPU idles as long": in each simulated schedule (p = 4, m = 8, v = 2
    for the interleaved one) every GPU's idle over busy time is (p-1)/(vm)."""
    v = V_CHUNKS if name == "interleaved" else 1
    slots = _schedules()[name]
    for stage in range(P_STAGES):
        idle, busy, _ = _idle(slots, stage)
        assert idle / busy == pytest.approx(_bubble(P_STAGES, M_MICRO, v), abs=1e-12)


def test_the_interleaved_schedule_ends_earlier() -> None:
    ends = {name: distributed.pipeline_makespan(s) for name, s in _schedules().items()}
    assert ends["GPipe"] == ends["1F1B"] > ends["interleaved"]


# ---------------------------------------------------------------------------------------
# The page


def test_skeleton_of_the_house_style() -> None:
    nb.check_skeleton(SLUG, "Distributed Math")


def test_every_pause_and_think_hides_its_answer() -> None:
    nb.check_pauses_hide_answers(nb.markdown(NOTEBOOK), at_least=6)


def test_widgets_are_this_lessons_registry_calculators() -> None:
    """The lesson shows calculator_widget("scaling_efficiency"), ("zero"), ("pipeline_bubble")
    and ("parallel_traffic")."""
    nb.check_registry_widgets(SLUG, {"scaling_efficiency", "zero", "pipeline_bubble",
                                     "parallel_traffic"})


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


def test_plots_have_labelled_axes() -> None:
    plots = [src for src in nb.code(NOTEBOOK) if "plt.show()" in src]
    assert len(plots) >= 5
    for src in plots:
        assert "label_axes(" in src


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
