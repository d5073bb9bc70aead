"""A plan's band: how far the planner missed on the runs most like it, each predicted
without being fitted on it (gpulesson.planning.bands)."""

from __future__ import annotations

import math

import pytest

from gpulesson.planning import bands, heldout, published
from gpulesson.planning.published import PUBLISHED_RUNS, plan_run
from gpulesson.planning.training import plan_training

ROWS = bands.validation_rows()


def test_the_band_draws_on_the_set_and_the_held_out_runs() -> None:
    """Every run of the set, predicted by factors fitted without it, then every held-out
    run of a later release and every run of the papers outside the fit, predicted by the
    factors fitted on the set: no row was fitted on itself."""
    loo, held, papers = (published.leave_one_out(), heldout.held_out_rows(),
                         heldout.paper_rows())
    assert [r.name for r in ROWS] == [r.name for r in (*loo, *held, *papers)]
    assert len(held) >= 30 and len(papers) >= 12
    for row in (*held, *papers):
        assert row.error == pytest.approx(row.predicted_mfu / row.published_mfu - 1)
        assert row.architecture and row.precision in ("bf16", "fp16", "fp8")
        assert row.active_params > 0


def test_a_plan_states_its_band_and_dominant_term() -> None:
    """The band is the largest error among the runs most like the plan: of the runs of its
    precision and kind of model, the three nearest in active parameters."""
    plan = plan_run(PUBLISHED_RUNS[0])
    like = [r for r in ROWS if (r.precision, r.moe) == ("bf16", False)]
    ratio = [abs(math.log(r.active_params / plan.active_params)) for r in like]
    nearest = sorted(range(len(like)), key=ratio.__getitem__)[:3]
    assert bands.uncertainty(plan) == (
        pytest.approx(max(abs(like[i].error) for i in nearest)), 3)
    assert plan.dominant_term == "compute"


def test_a_small_plan_is_held_against_runs_of_its_size() -> None:
    """Issue 31: Llama 2 7B on 64 H100s in BF16 shares its GPU generation with the three
    Llama 3 405B runs only; its band comes from the dense BF16 runs of 6 to 9 billion
    parameters, Llama 2 7B's own run among them, whatever GPU they ran on. A 405B plan on
    H100s keeps the three Llama 3 405B runs (same size, same generation first)."""
    small = plan_training("llama-2-7b", "H100 SXM", n_gpus=64, tokens=2e12,
                          global_batch_tokens=4 * 2**20, seq_len=4096)
    rows = bands.similar_runs(small)
    assert all(6e9 <= r.active_params <= 9e9 and r.precision == "bf16" and not r.moe
               for r in rows)
    assert "Llama 2 7B" in [r.name for r in rows]
    assert bands.uncertainty(small)[0] == pytest.approx(max(abs(r.error) for r in rows))
    large = plan_training("llama-3.1-405b", "H100 SXM", n_gpus=16_384, tokens=15.6e12,
                          global_batch_tokens=16 * 2**20, seq_len=8192)
    assert {r.name for r in bands.similar_runs(large)} == {
        r.name for r in ROWS if r.name.startswith("Llama 3 405B")}


def test_gpt_oss_in_fp8_is_held_against_its_own_later_runs() -> None:
    """GPT-OSS 120B in FP8 on 64 B200s has no FP8 run of its own in the set, and its band
    came from Qwen3 30B-A3B's FP8 runs, one of them NeMo 25.11's regressed release
    (predicted +102 %). The held-out releases ran GPT-OSS 120B in MXFP8 three times, and
    the planner was high on each (by 16 to 41 %): those are the runs like the plan."""
    plan = plan_training("gpt-oss-120b", "B200", n_gpus=64, tokens=1e12,
                         global_batch_tokens=8 * 2**20, seq_len=4096, precision="fp8")
    like = bands.similar_runs(plan)
    assert all("GPT-OSS 120B" in r.name and "MXFP8" in r.name for r in like), like
    assert all(r.error > 0 for r in like)
    assert bands.uncertainty(plan)[0] == pytest.approx(max(r.error for r in like))
    assert bands.uncertainty(plan)[0] < 0.9


def test_the_mfu_range_holds_every_miss_of_the_runs_like_the_plan() -> None:
    """An error is predicted / published - 1: a plan that misses as a run like it missed
    reaches mfu / (1 + error). The range holds that figure for each of the runs the band
    comes from, and stays above zero where the band reaches 100 % (Qwen3 30B-A3B in FP8 on
    16 H100s is held against its own 25.11 run, predicted twice its published MFU:
    mfu * (1 - band) would give about zero)."""
    plans = [plan_training("llama-2-7b", "H100 SXM", n_gpus=64, tokens=2e12,
                           global_batch_tokens=4 * 2**20, seq_len=4096),
             plan_training("qwen3-30b-a3b", "H100 SXM", n_gpus=16, tokens=1e12,
                           global_batch_tokens=2 * 2**20, seq_len=4096, precision="fp8")]
    for plan in plans:
        low, high = bands.mfu_range(plan)
        assert 0 < low < plan.mfu < high
        for r in bands.similar_runs(plan):
            reached = plan.mfu / (1 + r.error)
            assert low * (1 - 1e-12) <= reached <= high * (1 + 1e-12)
    band, _ = bands.uncertainty(plans[1])
    assert band > 0.9                      # the run of the regressed release is among them
    low, high = bands.mfu_range(plans[1])
    assert low == pytest.approx(plans[1].mfu / (1 + band))
    assert low > 0.4 * plans[1].mfu


def test_a_band_needs_a_plan() -> None:
    with pytest.raises(TypeError, match="plan must be a TrainingPlan"):
        bands.similar_runs("llama-2-7b")  # type: ignore[arg-type]
