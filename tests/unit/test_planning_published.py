"""Predicted MFU against published runs (gpulesson.planning.published)."""

from __future__ import annotations

import pytest

from gpulesson import distributed
from gpulesson.planning import Layout, plan_training
from gpulesson.planning.calibration import PRIOR
from gpulesson.planning.published import (
    H800_NVLINK,
    PUBLISHED_RUNS,
    deepseek_v3,
    plan_run,
    published_comparison,
)

COMPARISONS = {c.run.name: c for c in published_comparison()}
WITHIN = ["Llama 3 405B, 8,192 GPUs", "Llama 3 405B, 16,384 GPUs",
          "Llama 3 405B, 16,384 GPUs, 128K context", "Megatron-LM 1T", "MegaScale 175B"]


@pytest.mark.parametrize("name", WITHIN)
def test_source_predicted_mfu_within_25_percent(name: str) -> None:
    """Llama 3 405B (Dubey et al. 2024, Table 4: 43, 41, 38 % BF16 MFU), Megatron-LM 1T
    (Narayanan et al. 2021, Table 1: 163 TFLOP/s with recomputation, 39.2 % MFU) and
    MegaScale 175B (Jiang et al. 2024: 55.2 %): the plan on the published layout predicts
    each within 25 %."""
    c = COMPARISONS[name]
    assert abs(c.error) <= 0.25, (name, c.predicted_mfu, c.run.published_mfu)


def test_source_megatron_published_mfu_conversion() -> None:
    """Narayanan et al. 2021, Table 1: 163 TFLOP/s per A100 counted by their eq. 3, which
    includes the recomputed forward pass (96 instead of 72): 52 % of 312. As tokens per
    second and the course's model FLOPs (6N + 12LHQT), that is 39.2 % MFU."""
    run = next(r for r in PUBLISHED_RUNS if r.name == "Megatron-LM 1T")
    assert run.published_mfu == pytest.approx(0.392, abs=0.002)


def test_source_gpu_hours_count_only_the_effective_training_time() -> None:
    """Touvron et al. 2023, Table 2: 184,320 A100 GPU-hours for Llama 2 7B on 2.0T tokens,
    the whole run. Meta reports more than 90 % effective training time for Llama 3 (Dubey
    et al. 2024, section 3.3.4), so 90 % of the hours trained: 45.3 % MFU on the raw hours,
    50.3 % on the effective ones (DeepSeek-V3's 180K H800 GPU-hours per trillion tokens:
    44.7 % and 49.7 %)."""
    from gpulesson.planning.runs import EFFECTIVE_TRAINING_TIME
    assert EFFECTIVE_TRAINING_TIME == 0.90
    runs = {r.name: r for r in PUBLISHED_RUNS}
    assert runs["Llama 2 7B"].published_mfu == pytest.approx(0.503, abs=0.002)
    assert runs["DeepSeek-V3"].published_mfu == pytest.approx(0.497, abs=0.002)


def test_source_gpt_oss_on_b200_uses_its_recipes_expert_parallelism() -> None:
    """Megatron-Bridge 25.11 (tag v0.2.0, GPT_OSS_120B_B200_BF16_BASE_CONFIG): EP 64 over
    eight DGX B200 servers, so the experts' all-to-all leaves each server (the table's
    row says EP 8; the 26.02 summary lists EP 64 at 8,047 tokens/s/GPU)."""
    run = next(r for r in PUBLISHED_RUNS if r.name == "Megatron-Bridge GPT-OSS 120B, 64 B200, BF16")
    assert run.layout.ep == 64
    assert plan_run(run).tiers["expert"] == "network"


def test_every_run_names_its_source_quote_date_and_layout() -> None:
    """The validation set: at least 30 runs, five code bases, each with a quote, an address
    and a date; A100, H100, H200, B200 and GB200; dense and MoE; BF16 and FP8."""
    assert len(PUBLISHED_RUNS) >= 30
    assert len({r.code_base for r in PUBLISHED_RUNS}) >= 5
    for run in PUBLISHED_RUNS:
        assert run.quote and run.url.startswith("https://") and run.date[:2] == "20", run.name
        assert run.layout.tp * run.layout.pp * run.layout.cp <= run.n_gpus
    gpus = {r.gpu for r in PUBLISHED_RUNS}
    assert {"A100 80GB", "H100 SXM", "H200", "B200", "GB200 NVL72"} <= gpus
    assert {r.precision for r in PUBLISHED_RUNS} == {"bf16", "fp8"}
    assert {r.is_moe for r in PUBLISHED_RUNS} == {True, False}
    seqs = {r.seq_len for r in PUBLISHED_RUNS}
    assert min(seqs) == 2048 and max(seqs) == 131072


def test_source_deepseek_v3_memory_bound_bytes_match_the_training_trace() -> None:
    """DeepSeek-AI, profile-data, ``train.json`` (commit 449602428a1b, an H800, 2025-02-25):
    one DualPipe forward and backward chunk of 4 MoE layers on a 4,096-token micro-batch
    spends 14.3 ms in memory-bound kernels other than the FP8 casts (norms 3,448 us, SwiGLU
    1,863, token permutation 3,062, RoPE 1,512, copies and other elementwise kernels 4,415).
    The bytes the model counts for the same 4-layer stage and micro-batch (without FP8),
    moved at the HBM bandwidth left beside the all-to-all kernels' 20 SMs, take as long
    within 20 %: the kernels stream at about the full bandwidth. (The calibrated memory
    factor is larger: it also absorbs work the model leaves out, which the lesson shows.)"""
    run = next(r for r in PUBLISHED_RUNS if r.name == "DeepSeek-V3")
    plan = plan_run(run, precision="bf16", factors={**PRIOR, "memory": 1.0})
    stage_layers = -(-deepseek_v3().layers // run.layout.pp)
    assert stage_layers == 4 and run.layout.micro_batch * run.seq_len == 4096
    per_micro_batch = plan.breakdown["memory_bound"] / plan.micro_batches
    assert per_micro_batch == pytest.approx(14.3e-3, rel=0.20)


def _v3_exposed(**options: object):  # noqa: ANN202
    """DeepSeek-V3's published layout on H800s (as H100s with 160 GB/s NVLink), nothing but
    the gradients overlapped."""
    run = next(r for r in PUBLISHED_RUNS if r.name == "DeepSeek-V3")
    return plan_training(deepseek_v3(), "H100 SXM", n_gpus=2048, tokens=1e12,
                         global_batch_tokens=run.global_batch_tokens, seq_len=4096,
                         layout=run.layout, precision="fp8", nvlink_bandwidth=H800_NVLINK,
                         overlap={"data": 1.0}, **options)


def test_source_deepseek_v3_node_limited_all_to_all_against_compute() -> None:
    """DeepSeek-V3 report, section 2.1.2: each token reaches at most M = 4 nodes (its config:
    8 groups of experts, 4 picked; a group is a node at EP 64), sent once to each over
    InfiniBand (section 3.2.2). Unhidden, the planner's all-to-all is then half of what all
    8 copies take (the network share sets the time) and below the micro-batch's compute:
    the report's "approximately 1:1" (section 3.2.1) also counts the 20 SMs that
    communication keeps, which this comparison leaves out."""
    limited = _v3_exposed()
    every = _v3_exposed(max_nodes_per_token=deepseek_v3().experts_per_token)
    assert limited.tiers["expert"] == every.tiers["expert"] == "network"
    assert limited.breakdown["expert"] == pytest.approx(every.breakdown["expert"] / 2,
                                                        rel=0.01)
    b = limited.breakdown
    ratio = b["expert"] / (b["compute"] + b["recompute"] + b["memory_bound"])
    assert 0.25 < ratio < 1.0


def test_llama3_row_uses_papers_layout_and_nvlink_for_tp() -> None:
    c = COMPARISONS["Llama 3 405B, 16,384 GPUs"]
    assert c.plan.layout == Layout(tp=8, pp=16, cp=1, dp=128, interleave=2, zero_stage=2)
    assert c.plan.tiers["tensor"] == "nvlink" and c.plan.tiers["data"] == "network"
    assert c.plan.breakdown["bubble"] == pytest.approx(
        distributed.pipeline_bubble_fraction(16, 16, 2) * (
            c.plan.step_time - c.plan.breakdown["bubble"] - c.plan.breakdown["data"]
            - c.plan.breakdown["optimizer"]))


def _deepseek_plan(recompute: str):  # noqa: ANN202
    run = next(r for r in PUBLISHED_RUNS if r.name == "DeepSeek-V3")
    return plan_training(run.model(), run.gpu, n_gpus=run.n_gpus, tokens=run.tokens,
                         global_batch_tokens=run.global_batch_tokens, seq_len=run.seq_len,
                         layout=run.layout, **{**run.options, "recompute": recompute})


def test_source_deepseek_v3_published_layout_fits_with_its_recipe() -> None:
    """DeepSeek-V3 trained on 2,048 H800s with PP 16, EP 64 and no tensor parallelism
    (report, section 3.2), so that layout fits. It does thanks to the report's memory
    savings: RMSNorms and MLA up-projections recomputed (section 3.2.3), activations cached
    in FP8 and the MoE SwiGLU's output recomputed (section 3.3.3). Without them (attention
    recomputed only, FlashAttention's way) it does not fit in 80 GB."""
    row = COMPARISONS["DeepSeek-V3"]
    assert row.run.options["recompute"] == "deepseek-v3"
    assert row.plan.feasible, row.plan.problems
    without = _deepseek_plan("selective")
    assert not without.feasible
    assert any(p.startswith("memory:") for p in without.problems)
    assert row.plan.memory_per_gpu < without.memory_per_gpu / 1.5


def test_source_deepseek_v3_recipe_recompute_is_a_minor_overhead() -> None:
    """DeepSeek-V3 report, section 3.2.3: recomputing the norms and the up-projections
    comes "with a minor overhead": the recipe's recomputation takes some time, less than
    5 % of the compute, and less than selective recomputation's, which runs the attention
    core again where the recipe keeps it."""
    recipe, selective = _deepseek_plan("deepseek-v3"), _deepseek_plan("selective")
    redo = recipe.breakdown["recompute"]
    assert 0 < redo < 0.05 * recipe.breakdown["compute"]
    assert redo < selective.breakdown["recompute"]


def test_deepseek_v3_recipe_refuses_a_model_without_latent_attention() -> None:
    with pytest.raises(ValueError, match="recompute='deepseek-v3'"):
        plan_training("llama-3-8b", "H100 SXM", n_gpus=8, tokens=1e12,
                      global_batch_tokens=2**20, seq_len=4096, recompute="deepseek-v3")
    with pytest.raises(ValueError, match=r"recompute must be one of .*'deepseek-v3'"):
        plan_training("llama-3-8b", "H100 SXM", n_gpus=8, tokens=1e12,
                      global_batch_tokens=2**20, seq_len=4096, recompute="partial")


def test_the_table_fits_the_sites_output_column() -> None:
    """The lesson prints format_table() into an output box of about 80 monospace
    characters at 1280 px; a longer row wrapped its dominant term onto a line of its own."""
    from gpulesson.planning.published import TABLE_WIDTH, format_table

    lines = format_table().splitlines()
    assert lines[0].split()[-4:] == ["quoted", "model", "error", "term"]
    assert max(len(line) for line in lines) <= TABLE_WIDTH


def test_source_llama3_table4_quotes_match_the_paper() -> None:
    """Dubey et al. 2024, The Llama 3 Herd of Models (arXiv 2407.21783), Table 4:
    8,192 GPUs, DP 64: 430 TFLOPs/GPU, 43 %; 16,384 GPUs, DP 128: 400 TFLOPs/GPU, 41 %;
    16,384 GPUs at 131,072 tokens, CP 16, printed DP 4: 380 TFLOPs/GPU, 38 %. The 128K
    row's printed DP 4 does not multiply out (8 x 16 x 16 x 4 = 8,192 GPUs, not 16,384;
    16M tokens / 131,072 / 16 per rank = 8 ranks), so the layout uses DP 8 and says why."""
    import json
    from importlib import resources
    text = resources.files("gpulesson").joinpath("data/training_runs.json").read_text(
        encoding="utf-8")
    runs = {r["name"]: r for r in json.loads(text)["runs"]}
    for name, tflops, mfu, dp_printed in [
            ("Llama 3 405B, 8,192 GPUs", 430, 0.43, 64),
            ("Llama 3 405B, 16,384 GPUs", 400, 0.41, 128),
            ("Llama 3 405B, 16,384 GPUs, 128K context", 380, 0.38, 4)]:
        run = runs[name]
        assert f"{tflops} TFLOPs/GPU" in run["quote"], (name, run["quote"])
        assert f"DP {dp_printed}," in run["quote"], (name, run["quote"])
        assert run["published"] == {"kind": "mfu", "value": mfu}
        layout = run["layout"]
        assert layout["tp"] * layout["pp"] * layout["cp"] * layout["dp"] == run["n_gpus"]
    assert "Table 4 prints DP 4" in runs["Llama 3 405B, 16,384 GPUs, 128K context"]["assumptions"]
