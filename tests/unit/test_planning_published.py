"""Predicted MFU against published runs (gpulesson.planning.published)."""

from __future__ import annotations

import pytest

from gpulesson import distributed
from gpulesson.planning import Layout, plan_training
from gpulesson.planning.published import PUBLISHED_RUNS, deepseek_v3, published_comparison

COMPARISONS = {c.run.name: c for c in published_comparison()}
WITHIN = [r.name for r in PUBLISHED_RUNS if not r.name.startswith("DeepSeek")]


@pytest.mark.parametrize("name", WITHIN)
def test_source_predicted_mfu_within_25_percent(name: str) -> None:
    """Llama 3 405B (Dubey et al. 2024, Table 4: 43, 41, 38 % BF16 MFU), Megatron-LM 1T
    (Narayanan et al. 2021, Table 1: 163 TFLOP/s with recomputation, 39.2 % MFU) and
    MegaScale 175B (Jiang et al. 2024: 55.2 %): the plan on the published layout predicts
    each within 25 %."""
    c = COMPARISONS[name]
    assert abs(c.error) <= 0.25, (name, c.predicted_mfu, c.run.published_mfu)


def test_source_megatron_published_mfu_conversion() -> None:
    """163 TFLOP/s of the A100's 312 counted with recomputation is 52.2 %; eq. 3 without
    the recomputed pass (72 instead of 96) makes it 39.2 %."""
    run = next(r for r in PUBLISHED_RUNS if r.name == "Megatron-LM 1T")
    assert run.published_mfu == pytest.approx(0.392, abs=0.001)


@pytest.mark.xfail(strict=True, reason="the planner leaves out what makes DeepSeek-V3 slower "
                   "than its arithmetic: expert load imbalance, the memory traffic of routing "
                   "tokens and fine-grained FP8 scaling; it predicts about 1.5x the MFU "
                   "180K H800 GPU-hours per trillion tokens imply")
def test_source_deepseek_v3_gpu_hours_within_25_percent() -> None:
    """DeepSeek-AI 2024, section 1: 180K H800 GPU-hours per trillion tokens."""
    c = COMPARISONS["DeepSeek-V3"]
    assert abs(c.error) <= 0.25


def test_source_deepseek_v3_expert_traffic_about_equals_compute() -> None:
    """DeepSeek-V3 report, section 3.2.1: cross-node expert parallelism gives "a
    computation-to-communication ratio of approximately 1:1". Without node-limited routing
    or overlap, the all-to-all of a micro-batch takes about as long as its compute."""
    run = next(r for r in PUBLISHED_RUNS if r.name == "DeepSeek-V3")
    plan = plan_training(deepseek_v3(), "H100 SXM", n_gpus=2048, tokens=1e12,
                         global_batch_tokens=run.global_batch_tokens, seq_len=4096,
                         layout=run.layout, precision="fp8", nvlink_bandwidth=200e9,
                         overlap={"data": 1.0})
    b = plan.breakdown
    ratio = b["expert"] / (b["compute"] + b["recompute"] + b["memory_bound"])
    assert 0.5 < ratio < 2.0
    assert plan.tiers["expert"] == "network"


def test_llama3_row_uses_papers_layout_and_nvlink_for_tp() -> None:
    c = COMPARISONS["Llama 3 405B, 16,384 GPUs"]
    assert c.plan.layout == Layout(tp=8, pp=16, cp=1, dp=128, interleave=2)
    assert c.plan.tiers["tensor"] == "nvlink" and c.plan.tiers["data"] == "network"
    assert c.plan.breakdown["bubble"] == pytest.approx(
        distributed.pipeline_bubble_fraction(16, 16, 2) * (
            c.plan.step_time - c.plan.breakdown["bubble"] - c.plan.breakdown["data"]))
