"""Lesson 7, *Distributed Math* (``notebooks/distributed_math.ipynb``): its real
measurement and the published figures it relies on (the rest of its checks are in
``test_distributed_math.py``).

* the measurement: an MPI all-reduce through ``gpulesson.collectives``, nccl-tests' table,
  the alpha-beta fit and the NCCL recipe shown as text, within the time budget;
* published figures: the ZeRO paper's 7.5B example (Rajbhandari et al. 2020, Figure 1),
  nccl-tests' bus bandwidth (doc/PERFORMANCE.md), the Llama 3 paper's Table 4 (Dubey et
  al. 2024), and the earlier calculator page's scaling figures reproduced from the inputs
  the lesson names.
"""

from __future__ import annotations

import re

import pytest

from gpulesson import calculators, distributed, flops, hardware, memory, transformer

from . import nbtools as nb
from .test_distributed_math import ALPHA_NETWORK, ALPHA_NVLINK, NOTEBOOK

# ---------------------------------------------------------------------------------------
# The measurement


def test_the_measurement_is_a_real_mpi_allreduce_pinned_to_the_ring() -> None:
    code = "\n".join(nb.code(NOTEBOOK, hidden=False))
    assert "collectives.run_allreduce_benchmark(" in code
    assert 'algorithm="ring"' in code
    assert "collectives.ranks_for_this_machine()" in code   # 2, 4, 8 where the cores exist
    for call in ("collectives.format_table(", "collectives.best_of(",
                 "collectives.fit_regimes(", "collectives.fit_alpha_beta(",
                 "collectives.torch_nccl_recipe()", "collectives.allreduce_command(",
                 "last_level_cache_bytes()", "measure_copy("):
        assert call in code, call
    # every sum is checked in view; the hand-made ring only counts bytes
    assert "assert right" in code
    ring_cells = [src for src in nb.code(NOTEBOOK, hidden=False) if "def ring_allreduce(" in src]
    assert len(ring_cells) == 1 and "perf_counter" not in ring_cells[0]


def test_one_alpha_per_tier_throughout_the_lesson() -> None:
    """Sections 3 and 7 take the latency of a collective from the one definition."""
    setup, *rest = nb.code(NOTEBOOK, hidden=False)[1:]
    assert "ALPHA_NVLINK, ALPHA_NETWORK = 10e-6, 30e-6" in setup
    assert (ALPHA_NVLINK, ALPHA_NETWORK) == (10e-6, 30e-6)
    for src in rest:
        assert not re.search(r"latency=(?!0\b)\d", src), src[:80]  # 0: the seed's input
        assert "10e-6" not in src and "30e-6" not in src, src[:80]


def test_measurement_cells_are_not_compared_by_nbval() -> None:
    for src, tags in nb.code_cells(NOTEBOOK):
        if ("run_allreduce_benchmark(" in src or "fit_regimes(" in src) and \
                "remove-cell" not in tags:
            assert "nbval-ignore-output" in tags, src[:60]
        if "nbval-check-output" in tags:
            assert "measured" not in src and "perf_counter" not in src, src[:60]


def test_measurement_fits_the_time_budget() -> None:
    """The whole lesson in well under a minute on 2 busy cores: the rounds of measurement
    stop after about 12 s, and each size is bounded."""
    code = "\n".join(nb.code(NOTEBOOK, hidden=False))
    assert re.search(r"> 12:", code)
    assert "for attempt in range(3)" in code
    assert "max_seconds_per_size=0.03" in code and "timeout=60" in code
    assert re.search(r"SIZES = \[2\*\*k for k in range\(12, 27\)\]", code)


def test_the_page_says_what_makes_the_measurement_noisy() -> None:
    text = nb.markdown(NOTEBOOK)
    for phrase in ("oversubscribed", "cache", "busy", "shared memory"):
        assert phrase in text, phrase
    for phrase in ("139 MB", "6.6 MB", "NVLink", "InfiniBand", "tree"):
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
