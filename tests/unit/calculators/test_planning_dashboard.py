"""Lesson 9's planning calculator on published figures: a Llama 2 7B run, and the
bottleneck it names (the rule of :func:`gpulesson.planning.bottleneck`)."""

from __future__ import annotations

import pytest

from gpulesson import calculators as C


def test_llama2_7b_plan_on_a100s_matches_the_reported_gpu_hours():
    """Touvron et al. 2023 (Llama 2): 7B on 2.0T tokens (Table 1), 4M tokens per step
    (§2.2), 184,320 A100-80GB GPU-hours (Table 2). At 312 TFLOP/s dense BF16 (A100
    datasheet) and an assumed 40 % MFU the plan's 6·N·D = 8.09e22 FLOPs take 179,979
    GPU-hours on any number of GPUs, within 3 % of the report."""
    out = C.compute("planning", gpu="A100 80GB")
    assert out["total_flops"] == pytest.approx(8.086e22, rel=1e-3)
    assert out["gpu_hours"] == pytest.approx(184_320, rel=0.03)
    assert C.compute("planning", gpu="A100 80GB", n_gpus=2048)["gpu_hours"] == \
        pytest.approx(out["gpu_hours"], rel=1e-12)
    # one step of 4M tokens on 64 GPUs: 6 · 6,738,415,616 · 4e6 / (64 · 312e12 · 0.4)
    assert out["step_compute"] == pytest.approx(20.25, abs=0.01)


def test_llama2_7b_needs_more_than_one_80_gb_gpu():
    """Rajbhandari et al. 2020 (ZeRO), §3.1: 16 bytes per parameter of model state with
    mixed-precision Adam, 107.8 GB for Llama-2-7B: more than one 80 GB GPU holds, whatever
    the layout, and plain data parallelism on 64 GPUs does not fit either."""
    alone = C.compute("planning", n_gpus=1)
    assert alone["fits"] is False
    assert alone["bottleneck"] == "memory: no layout fits on these GPUs"
    plain = C.compute("planning", layout="manual", tp=1, pp=1, zero_stage=0)
    assert plain["fits"] is False and plain["memory_per_gpu"] > 107.8e9
    assert plain["bottleneck"] == "memory: this layout does not fit on these GPUs"


def test_a_slow_network_makes_the_run_communication_bound():
    """The recommended ZeRO-1 layout on 64 H100s synchronises the BF16 gradients every step;
    over 0.1 GB/s per GPU that outlasts the 6.4 s of compute, so communication, not
    compute, is the bottleneck; at 50 GB/s (400 Gb/s InfiniBand NDR) compute is."""
    assert C.compute("planning")["bottleneck"] == "compute: the GPUs' arithmetic sets the pace"
    slow = C.compute("planning", bandwidth=0.1)
    assert slow["efficiency"] < 0.5
    assert slow["bottleneck"] == \
        "communication: the gradient synchronisation outlasts the compute"
