"""gpulesson.planning.plan_training: plans that respect the batch, the bubble, recomputation,
FP8, the links each collective crosses, usable memory and the price of the chosen GPU.

Each test named after a defect failed with the course's previous planner (the registry
entry ``planning``), which accepted any of these plans as they were.
"""

from __future__ import annotations

import re

import pytest

from gpulesson import distributed, flops, transformer
from gpulesson.planning import Layout, gpu_view, plan_training

M = 2**20
BASE = dict(tokens=2e12, global_batch_tokens=4 * M, seq_len=4096)


def test_defect_batch_that_cannot_exist_is_infeasible() -> None:
    """4M tokens of 4,096-token sequences are 1,024 sequences: 16,384 data-parallel GPUs
    would each hold a sixteenth of one. The plan says so and names the fix."""
    plan = plan_training("llama-2-7b", "H100 SXM", n_gpus=16384, layout=Layout(dp=16384),
                         **BASE)
    assert not plan.feasible
    assert plan.sequences == 1024
    assert any("1,024 sequences" in p and "dp = 16,384" in p for p in plan.problems)

    one = plan_training("llama-2-7b", "H100 SXM", n_gpus=2, layout=Layout(dp=2),
                        tokens=2e12, global_batch_tokens=4096, seq_len=4096)
    assert any("at most 1 data-parallel replica (" in p for p in one.problems), one.problems


def test_auto_layout_never_has_more_replicas_than_sequences() -> None:
    """On 16,384 GPUs the search must put the rest into tp, pp or cp: dp <= 1,024."""
    plan = plan_training("llama-2-7b", "H100 SXM", n_gpus=16384, **BASE)
    assert plan.layout.dp <= 1024
    assert plan.micro_batches >= 1 and plan.micro_batches == int(plan.micro_batches)


def test_defect_pipeline_bubble_is_counted() -> None:
    """Llama 3.1 405B on 32 stages with 32 micro-batches: the bubble is (p-1)/(v m) of the
    work (Narayanan et al. 2021, section 2.2), about 97 % of the ideal time on top."""
    plan = plan_training("llama-3.1-405b", "H100 SXM", n_gpus=16384, tokens=15.6e12,
                         global_batch_tokens=16 * M, seq_len=8192,
                         layout=Layout(tp=8, pp=32, dp=64, micro_batch=1))
    b = plan.breakdown
    work = plan.step_time - b["bubble"] - b["data"] - b["optimizer"]
    assert plan.micro_batches == 32
    assert b["bubble"] / work == pytest.approx(distributed.pipeline_bubble_fraction(32, 32))
    assert b["bubble"] / work == pytest.approx(31 / 32)


def test_defect_recomputation_costs_time() -> None:
    """Full recomputation repeats the forward pass: 8N instead of 6N for the weights
    (Narayanan et al. 2021, eq. 3), so it takes longer than selective, which takes longer
    than none; and it saves memory."""
    plans = {rc: plan_training("llama-2-7b", "H100 SXM", n_gpus=64, layout=Layout(dp=64),
                               recompute=rc, **BASE) for rc in ("none", "selective", "full")}
    assert plans["none"].days < plans["selective"].days < plans["full"].days
    assert plans["full"].memory_per_gpu < plans["selective"].memory_per_gpu
    full = plans["full"].breakdown
    assert full["recompute"] / full["compute"] == pytest.approx(2 / 6, rel=0.06)


def test_defect_fp8_does_not_halve_the_time_and_mfu_stays_against_bf16() -> None:
    """FP8 speeds up the weight matrices only: well below 2x end to end (torchao's float8
    README reports up to 1.25x for Llama 3 8B on 8 H100 and 1.5x at 405B). MFU is quoted
    against the BF16 dense peak, as Llama 3's "BF16 MFU"."""
    kw = dict(n_gpus=8, tokens=1e12, global_batch_tokens=32 * 8192, seq_len=8192,
              layout=Layout(dp=8, zero_stage=2))
    bf16 = plan_training("llama-3-8b", "H100 SXM", **kw)
    fp8 = plan_training("llama-3-8b", "H100 SXM", precision="fp8", **kw)
    speedup = bf16.days / fp8.days
    assert 1.0 < speedup < 1.5
    fpt = flops.flops_per_token(8.03e9, layers=32, heads=32, head_dim=128, seq_len=8192)
    assert fp8.mfu == pytest.approx(fp8.tokens_per_second * fpt / (8 * 989.4e12), rel=1e-3)


def test_a_measured_bf16_efficiency_moves_fp8_with_it_not_onto_it() -> None:
    """A matmul efficiency given to the planner (measured here, or the forms' prefilled
    80.1 %) is a BF16 figure: FP8 keeps its own ratio to it (the step model's sourced GEMM
    table), never the BF16 fraction of the FP8 peak, which had the forms' FP8 plans at 91 %
    MFU."""
    h100 = gpu_view("H100 SXM")
    assert gpu_view("H100 SXM", matmul_efficiency=h100.matmul_efficiency) == h100
    kw = dict(n_gpus=8, tokens=1e12, global_batch_tokens=32 * 8192, seq_len=8192,
              layout=Layout(dp=8, zero_stage=2), precision="fp8")
    typed = plan_training("llama-3-8b", "H100 SXM", matmul_efficiency=h100.matmul_efficiency,
                          **kw)
    assert typed.mfu == pytest.approx(plan_training("llama-3-8b", "H100 SXM", **kw).mfu)


def test_defect_data_parallel_inside_one_server_uses_nvlink() -> None:
    """Eight H100 of one server synchronise over NVLink, not the 50 GB/s network: the
    gradient all-reduce of Llama 2 7B in BF16 takes about 50 ms (lesson 7's 52 ms), where
    the network would take about 0.5 s."""
    plan = plan_training("llama-2-7b", "H100 SXM", n_gpus=8,
                         layout=Layout(dp=8, zero_stage=0), **BASE)
    assert plan.tiers["data"] == "nvlink"
    assert plan.traffic["data"] == pytest.approx(2 * 7 / 8 * 6_738_415_616 * 2)
    two_servers = plan_training("llama-2-7b", "H100 SXM", n_gpus=16,
                                layout=Layout(dp=16, zero_stage=0), **BASE)
    assert two_servers.tiers["data"] == "network"


def test_defect_data_parallel_across_servers_uses_every_nic() -> None:
    """The network as built: each H100 of an HGX server has its own 400 Gb/s NIC. A
    data-parallel ring over two 8-GPU servers (tp 1) leaves each server through its eight
    NICs, so its all-reduce runs at about 370 GB/s of bus bandwidth (NVIDIA: "With 8 400
    Gbps NICs your peak would be at 400 GB/s", nccl-tests issue #309), not one NIC's 47
    GB/s; with tp 8 each data-parallel group holds one GPU per server and has one NIC."""
    from gpulesson.network import group_bus_bandwidth
    gv = gpu_view("H100 SXM")
    kw = dict(overlap={"data": 0.0}, **BASE)
    wide = plan_training("llama-2-7b", "H100 SXM", n_gpus=16,
                         layout=Layout(dp=16, zero_stage=0), **kw)
    ring = group_bus_bandwidth(stride=1, size=16, domain=8, nvlink_line_rate=gv.nvlink_bandwidth,
                               nic_line_rate=gv.scaleout_bandwidth).bus_bandwidth
    assert ring > 300e9
    size = wide.traffic["data"]  # bytes each GPU sends: 2 (n-1)/n of the gradients
    assert wide.breakdown["data"] == pytest.approx(size / ring, rel=0.01)
    narrow = plan_training("llama-2-70b", "H100 SXM", n_gpus=16,
                           layout=Layout(tp=8, dp=2, zero_stage=0), **kw)
    one_nic = distributed.achievable_bandwidth(gv.scaleout_bandwidth, "network")
    assert narrow.breakdown["data"] == pytest.approx(narrow.traffic["data"] / one_nic,
                                                     rel=0.01)


def test_moe_expert_gradients_sync_over_their_own_group() -> None:
    """GPT-OSS 120B on 64 B200s with EP 8: the routed experts (most of its weights) are
    reduced over the 8 GPUs that hold the same experts, one per server, so through one
    NIC each, while the rest syncs over all 64; with EP 64 no GPU shares its experts and
    only the rest is synchronised: 7 times less (the planner, treating the experts as
    data-parallel over all 64 GPUs, gave 4)."""
    kw = dict(n_gpus=64, tokens=1e12, global_batch_tokens=512 * 4096, seq_len=4096)
    ep8 = plan_training("gpt-oss-120b", "B200", layout=Layout(ep=8, micro_batch=4), **kw)
    ep64 = plan_training("gpt-oss-120b", "B200", layout=Layout(ep=64, micro_batch=4), **kw)
    assert ep8.traffic["data"] > 6 * ep64.traffic["data"]
    assert ep8.tiers["data"] == "network"


def test_defect_data_parallel_hides_only_behind_the_backward_pass() -> None:
    """DDP's buckets are ready only during the backward pass: with a slow network the
    gradient synchronisation shows even with overlap 1."""
    plan = plan_training("llama-2-7b", "H100 SXM", n_gpus=64, layout=Layout(dp=64),
                         scaleout_bandwidth=5e9, **BASE)
    b = plan.breakdown
    assert b["data"] > 0
    assert plan.settings.overlap["data"] == 1.0


def test_defect_usable_memory_and_a_reserve() -> None:
    """The limit is the total the driver reports (nvidia-smi: 81,559 MiB on an H100) less a
    5 % reserve, 81.2 GB, never the datasheet's 80e9 bytes taken as usable."""
    plan = plan_training("llama-2-7b", "H100 SXM", n_gpus=64, **BASE)
    assert gpu_view("H100 SXM").usable_memory == 81_559 * 2**20
    assert plan.memory_limit == pytest.approx(81_559 * 2**20 * 0.95)


def test_defect_price_follows_the_gpu() -> None:
    """$6.88 is the H100's dated price (AWS p5.48xlarge on demand, 2026-09-19), not every
    GPU's: each GPU brings its own default quote (gpulesson.prices) or none."""
    h100 = plan_training("llama-2-7b", "H100 SXM", n_gpus=64, **BASE)
    assert h100.cost_usd == pytest.approx(6.88 * h100.gpu_hours)
    b200 = gpu_view("B200")
    plan = plan_training("llama-2-7b", "B200", n_gpus=64, **BASE)
    if b200.price is None:
        assert plan.cost_usd is None
    else:
        assert plan.cost_usd == pytest.approx(b200.price * plan.gpu_hours)
    assert plan_training("llama-2-7b", "B200", n_gpus=64, usd_per_gpu_hour=1.0,
                         **BASE).cost_usd == pytest.approx(plan.gpu_hours)


def test_auto_reason_is_a_comparison() -> None:
    """The advisor compares: the chosen layout against a runner-up of other degrees."""
    plan = plan_training("llama-3-70b", "H100 SXM", n_gpus=256, tokens=1e12,
                         global_batch_tokens=4 * M, seq_len=8192)
    assert plan.feasible
    assert "Fastest of the" in plan.reason and "runner-up" in plan.reason
    fixed = [plan_training("llama-3-70b", "H100 SXM", n_gpus=256, tokens=1e12,
                           global_batch_tokens=4 * M, seq_len=8192, layout=lay)
             for lay in (Layout(tp=8, dp=32), Layout(tp=8, pp=4, dp=8))]
    assert all(plan.step_time <= f.step_time or not f.feasible for f in fixed)


def test_auto_reason_names_what_sets_the_rejected_layout_apart() -> None:
    """The faster layout turned down for its memory is named with its ZeRO stage and
    micro-batch, not by its degrees alone: Llama 3.1 405B on 16,384 H100s keeps tp 8 x dp
    2,048 with ZeRO-3, and the same degrees with a lower stage would be faster but do not
    fit. The rejected layout has no other problem than its memory."""
    plan = plan_training("llama-3.1-405b", "H100 SXM", n_gpus=16_384, tokens=15.6e12,
                         global_batch_tokens=16 * M, seq_len=8192)
    assert plan.feasible
    rejected = plan.reason.split(" would be faster")[0].rsplit(". ", 1)[1]
    assert re.search(r"ZeRO-\d, micro-batch \d", rejected)
    assert rejected != plan.layout.describe()
    degrees, zero, micro = re.match(r"(.*), ZeRO-(\d), micro-batch (\d+)", rejected).groups()
    tp, cp, dp, pp = map(int, re.findall(r"\d+", degrees))
    again = plan_training("llama-3.1-405b", "H100 SXM", n_gpus=16_384, tokens=15.6e12,
                          global_batch_tokens=16 * M, seq_len=8192,
                          layout=Layout(tp=tp, cp=cp, dp=dp, pp=pp, zero_stage=int(zero),
                                        micro_batch=int(micro)))
    assert again.problems and all(p.startswith("memory") for p in again.problems)
    assert again.step_time < plan.step_time


def test_data_parallel_traffic_hides_only_behind_the_compute_a_replica_has() -> None:
    """ZeRO-3 sends 3 x 2 bytes per parameter per step over the data-parallel group. With
    2,048 sequences on 16,384 replicas each computes an eighth of a sequence, and the
    traffic can hide only behind that eighth, not behind a whole sequence: it stays
    partly exposed. With a batch of one sequence per replica the same traffic hides."""
    kw = dict(n_gpus=16_384, tokens=15.6e12, seq_len=8192, recompute="full",
              layout=Layout(tp=1, pp=1, zero_stage=3))
    short = plan_training("llama-3.1-405b", "H100 SXM", global_batch_tokens=16 * M, **kw)
    whole = plan_training("llama-3.1-405b", "H100 SXM", global_batch_tokens=128 * M, **kw)
    assert short.micro_batches == pytest.approx(0.125) and not short.feasible
    n_params = transformer.param_count(transformer.preset("llama-3.1-405b"))
    assert short.traffic["data"] == pytest.approx(3 * 2 * n_params, rel=0.01)
    assert short.breakdown["data"] > 0.1 * short.breakdown["compute"]
    assert whole.feasible and whole.breakdown["data"] == 0
    assert whole.traffic["data"] == pytest.approx(short.traffic["data"])


def test_breakdown_adds_up_and_mfu_is_an_output() -> None:
    plan = plan_training("llama-3-70b", "H100 SXM", n_gpus=256, tokens=1e12,
                         global_batch_tokens=4 * M, seq_len=8192,
                         layout=Layout(tp=8, pp=4, dp=8))
    assert sum(plan.breakdown.values()) == pytest.approx(plan.step_time)
    assert plan.tokens_per_second == pytest.approx(4 * M / plan.step_time)
    assert 0 < plan.mfu < gpu_view("H100 SXM").matmul_efficiency


def test_layout_rules_become_problems() -> None:
    """tp must divide the KV heads, pp at most the layers, cp divide the sequence, ep needs
    experts: plans with problems, not errors."""
    kw = dict(n_gpus=256, tokens=1e12, global_batch_tokens=4 * M, seq_len=8192)
    cases = {Layout(tp=16, dp=16): "KV heads", Layout(tp=2, pp=128, dp=1): "layers",
             Layout(tp=8, ep=2, dp=32): "mixture-of-experts"}
    for lay, word in cases.items():
        plan = plan_training("llama-3-70b", "H100 SXM", layout=lay, **kw)
        assert not plan.feasible and any(word in p for p in plan.problems), lay
    odd = plan_training("llama-3-70b", "H100 SXM", n_gpus=24, tokens=1e12,
                        global_batch_tokens=3 * 8192 * 8, seq_len=8192,
                        layout=Layout(tp=8, cp=3, dp=1))
    assert any("cp = 3" in p for p in odd.problems)


@pytest.mark.parametrize(("kwargs", "name"), [
    (dict(n_gpus=0), "n_gpus"),
    (dict(layout=Layout(tp=8, pp=2, dp=3)), "layout"),
    (dict(scaleout_bandwidth=-1.0), "scaleout_bandwidth"),
    (dict(layout="fastest"), "layout"),
    (dict(overlap={"tensr": 1.0}), "overlap"),
    (dict(precision="fp4"), "precision"),
    (dict(tokens=1e6), r"tokens must be at least global_batch_tokens \(4,194,304\).*got "
                       r"1,000,000"),
])
def test_bad_arguments_name_the_argument(kwargs: dict, name: str) -> None:
    args = dict(n_gpus=64, **BASE)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        plan_training("llama-2-7b", "H100 SXM", **args)


def test_config_json_mapping_is_a_model() -> None:
    """A parsed config.json plans like the preset it describes (Llama 2 7B's fields)."""
    config = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
              "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32000,
              "intermediate_size": 11008, "tie_word_embeddings": False}
    a = plan_training(config, "H100 SXM", n_gpus=64, layout=Layout(dp=64), **BASE)
    b = plan_training("llama-2-7b", "H100 SXM", n_gpus=64, layout=Layout(dp=64), **BASE)
    assert a.step_time == pytest.approx(b.step_time)


@pytest.mark.parametrize("name", ["overlap", "latency"])
@pytest.mark.parametrize("value", [0, False, "", [], 0.0, 1])
def test_overlap_and_latency_must_be_mappings(name: str, value: object) -> None:
    """A falsy value was read as 'none given' (issue 35, item 11); any non-mapping is refused,
    naming the argument and the value."""
    shown = re.escape(repr(value))
    with pytest.raises(TypeError, match=rf"{name} must be a mapping .* got {shown}"):
        plan_training("llama-2-7b", "H100 SXM", n_gpus=8, **BASE, **{name: value})


# ---- named defects of issue 31 (each failed on the planner before the calibrated model)

def test_defect_llama3_405b_on_16384_h100_fits_as_meta_ran_it() -> None:
    """Dubey et al. 2024, Table 4 and section 3.3.2: TP 8, PP 16, DP 128 on 16,384 H100s,
    FSDP sharding optimizer states and gradients without resharding the parameters after
    the forward pass (ZeRO-2). Planned so, it fits (it was called infeasible at ZeRO-1,
    81.3 GB against 81.2 GB)."""
    from gpulesson.planning.published import PUBLISHED_RUNS, plan_run
    run = next(r for r in PUBLISHED_RUNS if r.name == "Llama 3 405B, 16,384 GPUs")
    assert run.layout.zero_stage == 2
    plan = plan_run(run)
    assert plan.feasible, plan.problems
    assert plan.memory_per_gpu < 0.95 * plan.memory_limit


def test_defect_layout_search_tries_zero2_and_zero3_with_pipelines() -> None:
    """The auto search compares ZeRO-2 and ZeRO-3 with pipeline parallelism too (it tried
    only ZeRO-1 with model parallelism, so never found Meta's layout)."""
    from gpulesson.planning import model_view
    from gpulesson.planning.layout import candidate_layouts
    lays = candidate_layouts(model_view("llama-3.1-405b"), n_gpus=16384, seq_len=8192,
                             domain=8, sequences=2048)
    assert {(lay.zero_stage) for lay in lays if lay.pp > 1 and lay.tp > 1} == {1, 2, 3}
    assert Layout(tp=8, pp=16, dp=128, interleave=2, zero_stage=2) in lays


def test_defect_blackwell_fp8_has_its_own_efficiency() -> None:
    """On Blackwell, FP8 products run at the FP8 peak with their own efficiency and fitted
    factor (they fell back to the BF16 efficiency): an FP8 plan's products belong to the
    ``gemm:Blackwell:fp8`` factor, and their time at unit factors is well under the BF16
    plan's (twice the peak, the sourced FP8 efficiency; the output layer stays BF16)."""
    from gpulesson.planning.training import default_factors
    f = default_factors()
    assert f["gemm:Blackwell:fp8"] != f["gemm:Blackwell:bf16"]
    kw = dict(n_gpus=8, tokens=1e12, global_batch_tokens=128 * 8192, seq_len=8192,
              layout=Layout(dp=8, micro_batch=2))
    fp8 = plan_training("llama-3-8b", "B200", precision="fp8", **kw)
    bf16 = plan_training("llama-3-8b", "B200", **kw)
    assert "gemm:Blackwell:fp8" in fp8.terms and "gemm:Blackwell:bf16" not in fp8.terms
    assert fp8.terms["gemm:Blackwell:fp8"] < 0.7 * bf16.terms["gemm:Blackwell:bf16"]
    assert fp8.mfu > bf16.mfu


def test_defect_cpu_activation_offload_makes_a_published_gb200_run_fit() -> None:
    """Megatron-Bridge's Llama 3 70B on 64 GB200s (FP8, Megatron-FSDP, micro-batch 2, 8K)
    offloads the activations of 40 of 80 layers to the Grace CPU's memory
    (cpu_offloading_num_layers=40). Without offload it does not fit; with it, it does, and
    the copies over NVLink-C2C hide behind the compute."""
    from gpulesson.planning.published import PUBLISHED_RUNS, plan_run
    run = next(r for r in PUBLISHED_RUNS
               if r.name.startswith("Megatron-Bridge Llama 3 70B, 64 GB200"))
    assert run.options["offload_layers"] == 40
    with_offload, without = plan_run(run), plan_run(run, offload_layers=0)
    assert with_offload.feasible and not without.feasible
    assert with_offload.breakdown["offload"] < 0.05 * with_offload.step_time


@pytest.mark.parametrize(("model", "n_gpus", "lay"), [
    ("llama-3-8b", 8, Layout(dp=8, micro_batch=1)),
    ("llama-2-7b", 64, Layout(dp=64, micro_batch=2)),
    ("llama-3-70b", 64, Layout(tp=4, pp=8, dp=2, interleave=5))])
def test_fp8_speed_up_agrees_with_the_optimisations_lesson(model: str, n_gpus: int,
                                                          lay: Layout) -> None:
    """One FP8 story (review P-c): the optimisations lesson teaches end-to-end FP8 gains of
    1.3 to 1.5x (torchao: 1.34 to 1.43x on 2,048 H200s; up to 1.5x on 512 GPUs). The
    calibrated planner's FP8 plans on H100s speed up 1.3 to about 1.5x (it gave 1.04 to
    1.13x with one FP8 efficiency from one trace)."""
    kw = dict(n_gpus=n_gpus, tokens=1e12, global_batch_tokens=128 * 8192, seq_len=8192,
              layout=lay)
    ratio = (plan_training(model, "H100 SXM", precision="fp8", **kw).mfu
             / plan_training(model, "H100 SXM", **kw).mfu)
    assert 1.3 <= ratio <= 1.55, ratio


def test_an_all_to_all_across_servers_sends_its_near_share_over_nvlink() -> None:
    """Qwen3 235B-A22B on 256 H100s with EP 32 folded over tp 2 x dp 16: each GPU's
    all-to-all reaches 7 of its 31 peers inside its server (NVLink) and 24 across the
    network, at the same time; the network share sets the time, 24/31 of sending it all
    over the network (hierarchical, as NCCL routes it)."""
    from gpulesson.planning.published import PUBLISHED_RUNS, plan_run
    run = next(r for r in PUBLISHED_RUNS if r.name.startswith("Megatron-Bridge Qwen3 235B")
               and "H100" in r.name)
    plan = plan_run(run)
    assert plan.tiers["expert"] == "network"
    flat = plan_run(run, nvlink_domain=1)  # no server: every peer over the network
    ratio = plan.breakdown["expert"] / flat.breakdown["expert"]
    assert ratio == pytest.approx(24 / 31, rel=0.05)


def test_multi_token_prediction_loads_the_last_stage() -> None:
    """Megatron-Bridge's DeepSeek-V3 on 256 B200s runs "w/ MTP" with 16 stages: 4 layers on
    each, and on the last one layer, the loss and the prediction module (one more layer, a
    2h x h projection, the output layer again). That stage paces the pipeline: its work
    over a 4-layer stage's is the step's ratio to the same plan without MTP."""
    from gpulesson.planning import model_view
    from gpulesson.planning.published import PUBLISHED_RUNS, plan_run
    run = next(r for r in PUBLISHED_RUNS
               if r.name.startswith("Megatron-Bridge DeepSeek-V3, 256 B200"))
    assert run.options["mtp_layers"] == 1
    mv = model_view("deepseek-v3")
    head = mv.hidden * mv.cfg.vocab
    layer = (mv.active_params - 2 * head) / mv.layers
    ratio = (layer + head + layer + 2 * mv.hidden**2 + head) / (4 * layer)
    with_mtp, without = plan_run(run), plan_run(run, mtp_layers=0)
    compute = with_mtp.breakdown["compute"] / without.breakdown["compute"]
    assert compute == pytest.approx(ratio, rel=1e-6)
    assert with_mtp.mfu < without.mfu


def test_a_batch_no_layout_can_take_is_not_called_a_memory_problem():
    """4,000,000 tokens a step are 488.28 sequences of 8,192: every layout of Llama 3 8B on
    8 H100s is refused for the batch, not the memory. The search said "None of the 70
    valid layouts fits: the leanest ... needs 20.6 GB per GPU of the 81.2 GB usable" and
    added "488 sequences do not split ... over dp = 1 replicas (488 each)"; half a sequence
    was "a global batch of 0 sequences"."""
    plan = plan_training("llama-3-8b", "H100 SXM", n_gpus=8, tokens=1e12,
                         global_batch_tokens=4_000_000, seq_len=8192)
    assert not plan.feasible and plan.memory_fits
    assert "fits:" not in plan.reason and "global_batch_tokens (4,000,000)" in plan.reason
    assert plan.problems == ("global_batch_tokens (4,000,000) is not a whole number of "
                             "8,192-token sequences: use a multiple of seq_len",)
    half = plan_training("llama-3-8b", "H100 SXM", n_gpus=8, tokens=1e12,
                         global_batch_tokens=4096, seq_len=8192)
    assert any("global batch of 0.5 sequences" in p for p in half.problems)


def test_a_model_state_too_large_for_the_gpus_names_a_fix_that_can_work():
    """Qwen3 8B on one RTX 4090: its weights, gradients and Adam state alone take 131 GB of
    the 24.5 GB usable. The plan said "try recompute='full', more tensor or pipeline
    parallelism, a higher zero_stage or a smaller micro_batch", none of which can help on
    one GPU; it now says how many GPUs the state needs, or to train fewer parameters."""
    plan = plan_training("qwen3-8b", "RTX 4090", n_gpus=1, tokens=1e9,
                         global_batch_tokens=8192, seq_len=2048)
    (text,) = plan.problems
    state = 16 * transformer.param_count(transformer.preset("qwen3-8b"))
    assert "on one GPU the weights, gradients and Adam state alone take" in text
    assert f"use at least {-(-state // plan.memory_limit):,.0f} GPUs" in text
    assert "LoRA" in text and "zero_stage" not in text and "tensor" not in text
    four = plan_training("qwen3-8b", "L4", n_gpus=4, tokens=1e9, global_batch_tokens=65536,
                         seq_len=4096)
    assert any("even spread over all 4 GPUs (ZeRO-3)" in p for p in four.problems)
    # where sharding can bring it within the limit, the layout levers are still named
    short = plan_training("llama-3-8b", "H100 SXM", n_gpus=8, tokens=1e9,
                          global_batch_tokens=8 * 32768, seq_len=32768,
                          layout=Layout(zero_stage=3))
    assert any("more tensor or pipeline parallelism" in p for p in short.problems)


def test_bf16_on_a_gpu_without_bf16_is_a_problem():
    """A V100 has FP16 tensor cores and no BF16: a BF16 plan on it was feasible, priced at
    the FP16 peak. It now says to use fp16, as an FP8 plan on an A100 says to use bf16."""
    plan = plan_training("llama-3.2-1b", "V100 SXM", n_gpus=8, tokens=1e10,
                         global_batch_tokens=64 * 2048, seq_len=2048)
    assert not plan.feasible
    assert any(p.startswith("precision: V100 SXM has no BF16 tensor cores; use fp16")
               for p in plan.problems)
    assert plan_training("llama-3.2-1b", "V100 SXM", n_gpus=8, tokens=1e10,
                         global_batch_tokens=64 * 2048, seq_len=2048, precision="fp16").feasible


def test_a_layout_kept_at_the_edge_of_memory_is_called_tight():
    """Llama 3 8B on 8 H100s with 8,192-token sequences: the search keeps ZeRO-1 at 80.7 of
    the 81.2 GB usable (99.3 %), since ZeRO-2 and ZeRO-3 take the same step time and the
    lower stage wins ties; the reason said nothing of it. It now calls the plan tight and
    names the fastest layout with 10 % to spare (ZeRO-2, 66.7 GB, no slower). A plan well
    within its memory (Llama 3.1 405B on 16,384 H100s, 83 %) says nothing of the kind."""
    plan = plan_training("llama-3-8b", "H100 SXM", n_gpus=8, tokens=1e12,
                         global_batch_tokens=4 * M, seq_len=8192)
    assert plan.feasible and plan.memory_per_gpu > 0.95 * plan.memory_limit
    assert f"It holds {plan.memory_per_gpu / plan.memory_limit:.1%} of the usable memory: " \
           "tight" in plan.reason
    roomy = re.search(r"The fastest layout with 10% to spare, (.*), needs ([\d.]+) GB and "
                      r"takes ([\d.]+)% longer", plan.reason)
    assert roomy and float(roomy.group(2)) * 1e9 <= 0.9 * plan.memory_limit
    assert float(roomy.group(3)) < 1
    frontier = plan_training("llama-3.1-405b", "H100 SXM", n_gpus=16_384, tokens=15.6e12,
                             global_batch_tokens=16 * M, seq_len=8192)
    assert frontier.memory_per_gpu < 0.95 * frontier.memory_limit
    assert "tight" not in frontier.reason


def _v3_on(gpu: str, **options: object):  # noqa: ANN202
    """DeepSeek-V3 on its published layout (2,048 GPUs: PP 16, EP 64, 4,096-token micro-
    batches, FP8 dispatch; DeepSeek-AI 2024, section 3.2), nothing but gradients hidden."""
    return plan_training("deepseek-v3", gpu, n_gpus=2048, tokens=1e12,
                         global_batch_tokens=15360 * 4096, seq_len=4096,
                         layout=Layout(tp=1, pp=16, ep=64, zero_stage=1),
                         precision="fp8", recompute="deepseek-v3", **options)


def test_defect_deepseek_v3_all_to_all_crosses_the_network_once_per_node() -> None:
    """DeepSeek-V3's config groups its 256 experts in 8 groups and picks 4 per token
    (n_group, topk_group; report section 2.1.2): at EP 64, 8 GPUs a server, a group is a
    server's experts, so each token crosses InfiniBand to at most 4 servers (section
    3.2.2). The planner sent all 8 copies over the network unless told
    max_nodes_per_token: its bytes per GPU are now the lesson's node-limited all-to-all
    (traffic.expert_parallel_traffic with node_limit=4) times the micro-batches, and with
    every copy (max_nodes_per_token=8) the unlimited one."""
    from gpulesson import traffic
    cfg = transformer.preset("deepseek-v3")
    assert (cfg.routing_groups, cfg.routing_group_topk) == (8, 4)
    kw = dict(tokens=4096, hidden=cfg.hidden, experts_per_token=8,
              moe_layers=-(-cfg.moe_layers // 16), ep=64, dispatch_bytes_per_value=1)
    limited, every = _v3_on("H100 SXM"), _v3_on("H100 SXM", max_nodes_per_token=8)
    assert limited.tiers["expert"] == "network"
    assert limited.traffic["expert"] == pytest.approx(traffic.expert_parallel_traffic(
        **kw, node_limit=4).bytes_per_rank * limited.micro_batches)
    assert every.traffic["expert"] == pytest.approx(traffic.expert_parallel_traffic(
        **kw).bytes_per_rank * every.micro_batches)
    # the network share sets the time: half the seconds for half the copies
    assert limited.breakdown["expert"] == pytest.approx(every.breakdown["expert"] / 2,
                                                        rel=0.01)
    # a limit passed explicitly is the one used
    assert _v3_on("H100 SXM", max_nodes_per_token=2).traffic["expert"] == pytest.approx(
        limited.traffic["expert"] / 2)


def test_group_limit_changes_nothing_inside_one_nvlink_domain_or_without_groups() -> None:
    """In a GB200 NVL72 rack the 64 GPUs of expert parallelism share NVLink: no copy
    crosses the network, and the limit changes nothing. A model without groups (Qwen3,
    n_group absent) keeps all k copies across servers."""
    nvl = _v3_on("GB200 NVL72")
    assert nvl.tiers["expert"] == "nvlink"
    assert nvl.breakdown == _v3_on("GB200 NVL72", max_nodes_per_token=8).breakdown
    qwen = dict(tokens=1e12, global_batch_tokens=2048 * 4096, seq_len=4096,
                layout=Layout(tp=2, pp=8, ep=32, zero_stage=1))
    plain = plan_training("qwen3-235b-a22b", "H100 SXM", n_gpus=256, **qwen)
    assert plain.tiers["expert"] == "network"
    assert plain.breakdown == plan_training("qwen3-235b-a22b", "H100 SXM", n_gpus=256,
                                            max_nodes_per_token=8, **qwen).breakdown


def test_fp8_saves_no_activation_memory_under_full_recomputation() -> None:
    """Full recomputation keeps each layer's BF16 input only, no product's FP8 input: FP8
    and BF16 plans hold the same memory (with selective recomputation FP8 holds less)."""
    def memory(precision: str, recompute: str) -> float:
        return plan_training("llama-3-8b", "H100 SXM", n_gpus=8, tokens=1e12,
                             global_batch_tokens=8192 * 64, seq_len=8192,
                             layout=Layout(zero_stage=1), precision=precision,
                             recompute=recompute).memory_per_gpu
    assert memory("fp8", "full") == pytest.approx(memory("bf16", "full"))
    assert memory("fp8", "selective") < memory("bf16", "selective")


def test_up_projection_recomputation_keeps_fp8s_saving() -> None:
    """Megatron-Core's "mla-up-proj" drops Q, K, V and the normalised latents, none of them
    a product's input that FP8 keeps in 1 byte: FP8 saves the same bytes with it as
    without it; and it refuses a model without latent attention."""
    def memory(precision: str, recompute: str) -> float:
        return plan_training("deepseek-v3", "B200", n_gpus=256, tokens=1e12,
                             global_batch_tokens=4096 * 4096, seq_len=4096,
                             layout=Layout(pp=8, ep=8, zero_stage=1, micro_batch=1),
                             precision=precision, recompute=recompute).memory_per_gpu
    fp8 = {rc: memory("fp8", rc) for rc in ("none", "mla-up-proj")}
    bf16 = {rc: memory("bf16", rc) for rc in ("none", "mla-up-proj")}
    assert fp8["none"] - fp8["mla-up-proj"] == pytest.approx(bf16["none"] - bf16["mla-up-proj"])
    assert fp8["mla-up-proj"] < bf16["mla-up-proj"] < bf16["none"]
    with pytest.raises(ValueError, match="recompute='mla-up-proj'"):
        plan_training("llama-3-8b", "H100 SXM", n_gpus=8, recompute="mla-up-proj", **BASE)


def test_recomputation_is_booked_apart_from_the_compute_with_sparse_attention() -> None:
    """DeepSeek-V3.2 at 32K: what recomputation repeats (the attention core; with full
    recomputation also the products and the indexer's scoring) is the ``recompute`` term;
    the ``compute`` term is the same whatever the mode."""
    def plan(rc: str):  # noqa: ANN202
        return plan_training("deepseek-v3.2", "H200", n_gpus=1024, tokens=1e12,
                             global_batch_tokens=32768 * 256, seq_len=32768,
                             layout=Layout(tp=2, cp=4, ep=64, zero_stage=2), recompute=rc)
    none, sel, full = (plan(rc).breakdown for rc in ("none", "selective", "full"))
    assert none["recompute"] == 0 < sel["recompute"] < full["recompute"]
    assert sel["compute"] == pytest.approx(none["compute"])
    assert full["compute"] == pytest.approx(none["compute"])


def test_a_recipe_keeps_the_indexer_whole_on_every_tensor_parallel_gpu() -> None:
    """With DeepSeek-V3's recipe, as with the layout's own modes, tensor parallelism splits
    the activations but not the sparse-attention indexer's (plain Linear layers, the same
    on every GPU): DeepSeek-V3.2 at tp 2 holds its 61 x 4,096 x 33,280 bytes whole."""
    from gpulesson import activations
    from gpulesson.planning import model_view
    from gpulesson.planning.training import _memory
    mv = model_view("deepseek-v3.2")
    lay = Layout(tp=2, ep=8, zero_stage=1).resolve(16)
    mem, _ = _memory(mv, lay, 4096, "deepseek-v3")
    cfg = transformer.preset("deepseek-v3.2")
    per_gpu = activations.activation_bytes(cfg, seq_len=4096, recompute="deepseek-v3", tp=2,
                                           sequence_parallel=True)
    index = sum(activations.indexer_tensors(cfg, tokens=4096, seq_len=4096).values())
    assert per_gpu - activations.activation_bytes(
        cfg, seq_len=4096, recompute="deepseek-v3") / 2 == pytest.approx(61 * index / 2,
                                                                          rel=1e-3)
    state = distributed.layout_memory(
        n_params=mv.total_params - mv.expert_params + mv.expert_params / 8, n_gpus=16, tp=2,
        zero_stage=1, cfg=cfg, activation_bytes=0, embedding_on_ends=False).total
    assert mem == pytest.approx(state + per_gpu, rel=1e-6)


def test_a_whole_step_in_one_cuda_graph_has_no_host_syncs() -> None:
    """A dropless mixture of experts waits for the host once a layer forward and once
    backward; a step captured whole as one CUDA graph cannot (Megatron-Core's
    full_iteration graphs size the experts' buffers ahead): the launch time keeps its
    kernels' gaps and loses exactly the syncs. A dense model has none to lose."""
    from gpulesson.planning.training import default_factors

    kw = dict(n_gpus=8, layout=Layout(ep=8, dp=8), precision="fp8", **BASE)
    eager = plan_training("qwen3-30b-a3b", "B200", **kw)
    graph = plan_training("qwen3-30b-a3b", "B200", cuda_graphs="full", **kw)
    syncs = default_factors()["syncs"] * eager.terms["syncs"]
    assert syncs > 0 and graph.terms["syncs"] == 0
    assert eager.breakdown["launch"] - graph.breakdown["launch"] == pytest.approx(
        syncs, rel=1e-9)
    dense = dict(n_gpus=8, layout=Layout(dp=8), **BASE)
    assert plan_training("llama-3-8b", "B200", cuda_graphs="full", **dense).step_time == (
        plan_training("llama-3-8b", "B200", **dense).step_time)
    with pytest.raises(ValueError, match="cuda_graphs"):
        plan_training("llama-3-8b", "B200", cuda_graphs="partial", **dense)


def test_an_older_attention_kernel_slows_the_attention_alone() -> None:
    """Llama 3 8B at 32,768 tokens on 8 H100s with FlashAttention in Triton
    (llm-foundry's kernel): the attention's coefficient in the step grows by the kernel's
    forward and backward slow-downs, the backward counted twice; with full recomputation
    the attention's forward runs again at the forward's slow-down. Nothing else moves.
    FP8 attention runs in the fused kernel only, and Blackwell has no published speed of
    the Triton kernel."""
    from gpulesson.planning.perf_model import attention_kernel_slowdown

    kw = dict(n_gpus=8, layout=Layout(dp=8), tokens=1e12, global_batch_tokens=8 * 32768,
              seq_len=32768)
    fwd, bwd = attention_kernel_slowdown("triton", "Hopper")
    for recompute, weight in (("none", (fwd + 2 * bwd) / 3), ("full", (2 * fwd + 2 * bwd) / 4)):
        fused = plan_training("llama-3-8b", "H100 SXM", recompute=recompute, **kw)
        triton = plan_training("llama-3-8b", "H100 SXM", recompute=recompute,
                               attention_kernel="triton", **kw)
        assert triton.terms["attention:Hopper"] == pytest.approx(
            weight * fused.terms["attention:Hopper"], rel=1e-9)
        assert {k: c for k, c in triton.terms.items() if k != "attention:Hopper"} == (
            {k: c for k, c in fused.terms.items() if k != "attention:Hopper"})
        assert triton.step_time > fused.step_time
    with pytest.raises(ValueError, match="attention_kernel: FP8 attention runs in the fused"):
        plan_training("llama-3-8b", "H100 SXM", precision="fp8", fp8_attention=True,
                      attention_kernel="flash-attention-2", **kw)
    with pytest.raises(ValueError, match="attention_kernel: no published speed.*Blackwell"):
        plan_training("llama-3-8b", "B200", attention_kernel="triton", **kw)
