"""gpulesson.planning.moe_serving: expert parallelism and data-parallel attention at serving.

Sources: vLLM ``model_executor/layers/fused_moe/config.py`` (``FusedMoEParallelConfig.make``:
the MoE layers of ``tp x dp`` GPUs hold whole experts under ``--enable-expert-parallel``,
else are tensor-parallel over all of them; ``FusedMoEConfig.__post_init__`` asserts the
intermediate size divides), ``determine_expert_map`` (uneven experts: one more on the first
ranks), ``vllm/config/parallel.py`` (``all2all_backend`` defaults to
``allgather_reducescatter``); SGLang issue #6017 for a log.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpulesson import inference, traffic, transformer
from gpulesson.planning import gpu_view, kv_budget, model_view, plan_serving
from gpulesson.planning.moe_serving import (
    LATENCY,
    MoEParallel,
    decode_read_bytes,
    dispatch_time,
    moe_parallel,
    weight_bytes_per_gpu,
)
from gpulesson.planning.serving import GIB, rotary_table_bytes

from .conftest import FUZZ_DEPTH

DSV3 = dict(max_model_len=8192, weight_dtype="fp8")


def _dsv3_bytes() -> tuple[float, float]:
    """DeepSeek-V3 in FP8 by hand (its config.json): the routed experts, 58 MoE layers x
    256 experts x 3 matrices of 7,168 x 2,048, one byte each; the rest one byte a parameter
    but the embedding and output layer (2 x 129,280 x 7,168), kept in BF16."""
    routed = 58 * 256 * 3 * 7168 * 2048
    table = 2 * 129280 * 7168
    total = transformer.param_count(model_view("deepseek-v3").cfg)
    return float(routed), float(total - routed - table + 2 * table)


def test_weights_per_gpu_dp8_ep8_equal_a_hand_count() -> None:
    """DP8 + EP8 (vLLM --data-parallel-size 8 --enable-expert-parallel): every GPU holds
    its engine's whole non-expert weights and 256 / 8 = 32 experts; TP8 holds an eighth of
    everything, the same 32 experts' bytes but an eighth of the rest."""
    routed, other = _dsv3_bytes()
    rotary = rotary_table_bytes("deepseek-v3")
    # what TP copies whole onto every rank anyway (checkpoints.replicated_params): the
    # routers (58 layers x 256 x 7,168 and a bias of 256) and the norms in BF16, the
    # latent down-projections (61 x 7,168 x (1,536 + 512 + 64)) in FP8
    router, latent, norms = 58 * 256 * (7168 + 1), 61 * 7168 * 2112, 1_006_592
    dp8 = kv_budget("deepseek-v3", "H200 SXM", dp=8, expert_parallel=True, **DSV3)
    tp8 = kv_budget("deepseek-v3", "H200 SXM", tp=8, **DSV3)
    assert dp8.weights == pytest.approx(other + routed * 32 / 256 + rotary + router + norms,
                                        rel=1e-12)
    assert tp8.weights == pytest.approx(
        (other + routed) / 8 + rotary + (router + norms) * 15 / 8 + latent * 7 / 8,
        rel=1e-12)
    ep_tp8 = kv_budget("deepseek-v3", "H200 SXM", tp=8, expert_parallel=True, **DSV3)
    assert ep_tp8.weights == pytest.approx(tp8.weights, rel=1e-12)
    # the copied non-expert weights: 7/8 of 17.1 GB more on every GPU, less what TP copies
    assert dp8.weights - tp8.weights == pytest.approx(
        (other - router - latent - norms) * 7 / 8, rel=1e-12)


def test_uneven_experts_busiest_gpu_holds_one_more() -> None:
    """vLLM's determine_expert_map gives the first ``E mod ep`` ranks one more expert:
    256 experts on 3 GPUs, 86 on the busiest."""
    routed, other = _dsv3_bytes()
    mv = model_view("deepseek-v3")
    par = moe_parallel(mv, tp=1, dp=3, expert_parallel=True)
    assert weight_bytes_per_gpu(mv, par, other + routed, routed) == pytest.approx(
        other + routed * 86 / 256, rel=1e-12)


def test_mla_cache_not_copied_under_dp_attention() -> None:
    """TP8 keeps DeepSeek-V3's whole 70,272-byte latent per token on every GPU, the same
    token on all 8; DP8 keeps the same bytes per token but each engine its own tokens, so
    the 8 GPUs hold 8 x one engine's pool. What is left for it shrinks by the copied
    weights (and the larger MoE workspace) and grows by the tensor-parallel group's NCCL
    buffers, which the planner counts for tp 8 and not for eight one-GPU engines (their
    data- and expert-parallel communicators are left out), so the group holds 8 x the pool
    ratio more tokens, not 8 x."""
    plan_dp = plan_serving("deepseek-v3", "H200 SXM", tp=1, dp=8, expert_parallel=True,
                           **DSV3)
    plan_tp = plan_serving("deepseek-v3", "H200 SXM", tp=8, **DSV3)
    dp8 = kv_budget("deepseek-v3", "H200 SXM", dp=8, expert_parallel=True, **DSV3)
    tp8 = kv_budget("deepseek-v3", "H200 SXM", tp=8, **DSV3)
    assert (dp8.non_torch, tp8.non_torch) == (plan_dp.budget.non_torch,
                                              plan_tp.budget.non_torch)
    assert dp8.kv_bytes_per_token == tp8.kv_bytes_per_token == 61 * 576 * 2
    assert dp8.kv_cache == pytest.approx(
        tp8.kv_cache - (dp8.weights - tp8.weights) - (dp8.activation_peak
                                                      - tp8.activation_peak)
        - (dp8.non_torch - tp8.non_torch), rel=1e-12)
    assert plan_dp.gpus == plan_tp.gpus == 8 and plan_dp.dp == 8
    held_dp, held_tp = plan_dp.kv_cache_tokens * plan_dp.dp, plan_tp.kv_cache_tokens
    assert held_dp / held_tp == pytest.approx(8 * dp8.kv_cache / tp8.kv_cache, rel=1e-3)
    assert 1 < held_dp / held_tp < 8


def test_gqa_heads_split_over_the_engine_tp_only() -> None:
    """Qwen3-235B-A22B (4 KV heads) as 2 engines of tp 4: each GPU keeps one KV head of its
    engine's tokens, a quarter of a token's cache."""
    cfg = model_view("qwen3-235b-a22b").cfg
    b = kv_budget("qwen3-235b-a22b", "H200 SXM", tp=4, dp=2, expert_parallel=True,
                  max_model_len=8192)
    assert b.kv_bytes_per_token == inference.kv_cache_bytes_per_token(cfg) / 4


def test_source_sglang_6017_dp_attention_latent_per_token() -> None:
    """SGLang issue #6017 (2025-05-09, https://github.com/sgl-project/sglang/issues/6017):
    DeepSeek-R1 with --enable-dp-attention and DeepEP, every rank labelled "DP i TP i"
    (attention tensor-parallel size 1), prints "KV Cache is allocated. #tokens: 161488,
    KV size: 10.57 GB" (SGLang's GB are GiB): each engine's tokens with the whole BF16
    latent, 61 x 576 x 2 bytes. Weights are not compared: that run keeps redundant experts
    (--ep-num-redundant-experts) the planner does not model."""
    b = kv_budget("deepseek-v3", "H200 SXM", tp=1, dp=16, expert_parallel=True,
                  max_model_len=8192)
    assert b.kv_bytes_per_token * 161488 / GIB == pytest.approx(10.57, abs=0.005)


def test_refusals_name_the_input() -> None:
    """Expert parallelism or data-parallel engines on a dense model, more expert-parallel
    GPUs than experts and an unknown backend raise; tensor-parallel MoE layers whose
    intermediate size ``tp x dp`` does not divide make the plan infeasible (vLLM asserts)."""
    with pytest.raises(ValueError, match="dense model"):
        plan_serving("llama-3-8b", "H100 SXM", expert_parallel=True, max_model_len=4096)
    with pytest.raises(ValueError, match="dense model"):
        kv_budget("llama-3-8b", "H100 SXM", dp=2, max_model_len=4096)
    with pytest.raises(ValueError, match="exceed the 8 routed experts"):
        plan_serving("mixtral-8x7b", "H100 SXM", tp=1, dp=16, expert_parallel=True,
                     max_model_len=4096)
    with pytest.raises(ValueError, match="all2all_backend"):
        plan_serving("deepseek-v3", "H200 SXM", tp=1, dp=8, expert_parallel=True,
                     all2all_backend="pplx", **DSV3)
    # Qwen3-30B-A3B's experts are 768 wide: 5 GPUs cannot cut them, but hold them whole
    plan = plan_serving("qwen3-30b-a3b", "H200 SXM", tp=1, dp=5, max_model_len=8192)
    assert not plan.feasible
    assert "must divide the experts' intermediate size (768)" in plan.problems[0]
    assert plan_serving("qwen3-30b-a3b", "H200 SXM", tp=1, dp=5, expert_parallel=True,
                        max_model_len=8192).feasible


def test_defaults_unchanged_and_ep_on_one_engine_matches_tp() -> None:
    """``dp=1`` without expert parallelism is the tensor-parallel plan; experts whole on
    one engine's 8 GPUs read the same bytes a step (the MoE output is all-reduced as
    under TP)."""
    base = plan_serving("deepseek-v3", "H200 SXM", tp=8, **DSV3)
    assert plan_serving("deepseek-v3", "H200 SXM", tp=8, dp=1, expert_parallel=False,
                        all2all_backend="allgather_reducescatter", **DSV3) == base
    ep = plan_serving("deepseek-v3", "H200 SXM", tp=8, expert_parallel=True, **DSV3)
    assert ep.tpot == pytest.approx(base.tpot, rel=1e-9)
    assert ep.kv_cache_tokens == base.kv_cache_tokens


def test_dispatch_copies_allgather_vs_deepep() -> None:
    """Qwen3-235B-A22B (k = 8) over 16 GPUs: vLLM's default backend gathers every token on
    all 16 GPUs, DeepEP sends it to the GPUs of its 8 experts: half the bytes, the same
    number of collectives (2 per MoE layer)."""
    mv, gv = model_view("qwen3-235b-a22b"), gpu_view("H200 SXM")
    times = {a: dispatch_time(mv, moe_parallel(mv, tp=1, dp=16, expert_parallel=True,
                                               all2all=a), gv, 4096)
             for a in ("allgather_reducescatter", "deepep")}
    fixed = 2 * mv.moe_layers * LATENCY
    assert (times["deepep"] - fixed) / (times["allgather_reducescatter"] - fixed) == \
        pytest.approx(8 / 16, rel=1e-9)
    assert dispatch_time(mv, moe_parallel(mv, tp=16), gv, 4096) == 0.0  # one engine


def test_node_limited_routing_bounds_network_copies() -> None:
    """DeepSeek-V3 over 64 H200 (8 NVLink domains of 8) with DeepEP: node-limited routing
    (8 groups, 4 picked: :func:`gpulesson.traffic.routed_node_limit`) sends a token over
    the network at most 4 times, not 8: half the bytes of the same model without groups."""
    mv, gv = model_view("deepseek-v3"), gpu_view("H200 SXM")
    free = model_view(dataclasses.replace(mv.cfg, routing_groups=0, routing_group_topk=0))
    assert traffic.routed_node_limit(experts=256, routing_groups=8, routing_group_topk=4,
                                     ep=64, ranks_per_node=8) == 4
    fixed = 2 * mv.moe_layers * LATENCY
    limited, unlimited = (dispatch_time(m, moe_parallel(m, tp=1, dp=64, expert_parallel=True,
                                                        all2all="deepep"), gv, 65536)
                          for m in (mv, free))
    assert (limited - fixed) / (unlimited - fixed) == pytest.approx(4 / 8, rel=1e-9)


def test_backward_false_counts_two_all_to_alls_a_layer() -> None:
    """Inference moves forward only: a dispatch and a combine per MoE layer."""
    kw = dict(tokens=16, hidden=8, experts_per_token=2, moe_layers=3, ep=4)
    assert traffic.expert_parallel_traffic(**kw, backward=False).count == 6
    assert traffic.expert_parallel_traffic(**kw).count == 12


def test_auto_tp_skips_sizes_whose_group_straddles_nvlink_domains() -> None:
    """Audit (2026-12): with tp left to the planner and dp = 3 on 8-GPU H200 servers, the
    tp = 4 candidate (12 GPUs, a domain and a half) raised, and the whole plan failed,
    though tp 1, 2 (3 and 6 GPUs, in one domain) and 8 (24, three whole domains) are
    valid; likewise Mixtral (8 experts) with dp = 2 and experts whole, whose tp = 8
    candidate makes 16 expert-parallel GPUs. The planner now leaves such a size out of
    its comparison, saying why in its reason; a tp the reader sets still names the input
    at fault."""
    kw = dict(dp=3, expert_parallel=True, max_model_len=8192, weight_dtype="fp8",
              qps=1.0, prompt_tokens=1000, output_tokens=200)
    auto = plan_serving("qwen3-235b-a22b", "H200 SXM", tp=None, **kw)
    assert auto.tp in (1, 2, 8) and auto.dp == 3
    assert auto.gpus == auto.tp * 3 * auto.replicas
    assert "tp 4: left out, dp: tp x dp = 12 GPUs must fit one 8-GPU NVLink domain" in \
        auto.reason, auto.reason
    with pytest.raises(ValueError, match=r"^dp: tp x dp = 12 GPUs"):
        plan_serving("qwen3-235b-a22b", "H200 SXM", tp=4, **kw)
    mixtral = plan_serving("mixtral-8x7b", "H100 SXM", tp=None, dp=2, expert_parallel=True,
                           max_model_len=4096)
    assert mixtral.tp in (1, 2, 4)
    assert "tp 8: left out, expert_parallel: tp x dp = 16 GPUs exceed" in mixtral.reason
    with pytest.raises(ValueError, match="exceed the 8 routed experts"):
        plan_serving("mixtral-8x7b", "H100 SXM", tp=8, dp=2, expert_parallel=True,
                     max_model_len=4096)


@pytest.mark.parametrize("batch", [-5, 0, float("nan"), float("inf"), "3", None, True])
def test_decode_read_bytes_refuses_a_bad_batch_by_name(batch: object) -> None:
    """Audit (2026-12): a negative batch was read as one sequence, the string "3" as 3, and
    NaN failed with "cannot convert float NaN to integer"; each now names batch."""
    mv = model_view("deepseek-v3")
    par = moe_parallel(mv, tp=1, dp=8, expert_parallel=True)
    with pytest.raises((ValueError, TypeError), match="^batch must be"):
        decode_read_bytes(mv, par, 2e9, 1e9, batch)


def test_weight_figures_refuse_more_routed_bytes_than_weights() -> None:
    """Audit (2026-12): routed expert bytes above the weights gave a negative weight per GPU
    (-3.4 bytes for weights 1, routed 5) and a negative read; a dense model's read divided
    by its zero expert parameters. Each is now refused by name."""
    mv = model_view("deepseek-v3")
    par = moe_parallel(mv, tp=1, dp=8, expert_parallel=True)
    with pytest.raises(ValueError, match=r"^routed \(5\) must be at most weights \(1\)"):
        weight_bytes_per_gpu(mv, par, 1.0, 5.0)
    with pytest.raises(ValueError, match=r"^routed \(5\) must be at most weights \(1\)"):
        decode_read_bytes(mv, par, 1.0, 5.0, 4)
    with pytest.raises(ValueError, match="^weights must be"):
        decode_read_bytes(mv, par, float("nan"), 1.0, 4)
    with pytest.raises(ValueError, match="^model: llama-3-8b is a dense model"):
        decode_read_bytes(model_view("llama-3-8b"), MoEParallel(1), 2e9, 0.0, 4)


@pytest.mark.parametrize("fields", [dict(tp=0), dict(tp=1, dp=0), dict(tp=2.0),
                                    dict(tp=1, expert_parallel=1),
                                    dict(tp=1, all2all="pplx")])
def test_moe_parallel_built_directly_is_checked(fields: dict[str, object]) -> None:
    """Audit (2026-12): MoEParallel(0) was accepted (a group of 0 GPUs) as were unknown
    backends; the dataclass now checks its fields as moe_parallel does."""
    with pytest.raises((ValueError, TypeError), match=r"^(tp|dp|expert_parallel|all2all)"):
        MoEParallel(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize("layout", [dict(tp=8), dict(tp=1, dp=8, expert_parallel=True)])
def test_the_plans_pool_is_kv_budgets_on_the_same_gpu(layout: dict[str, object]) -> None:
    """Audit (2026-12): plan_serving sized its pool without the GPU, so with PyTorch's
    default cuBLAS workspace (8.1 MiB) where kv_budget on an H200 counts Hopper's 32 MiB:
    DeepSeek-V3 in FP8, TP8, 640,240 tokens in the plan (and the serving calculator)
    against 639,888 from kv_budget; DP8 + EP8, 416,864 per engine against 416,512. The
    plan now reads the same budget."""
    plan = plan_serving("deepseek-v3", "H200 SXM", **layout, **DSV3)
    budget = kv_budget("deepseek-v3", "H200 SXM", **layout, **DSV3)
    assert plan.budget.workspace == budget.workspace == 32 * 2**20
    assert plan.kv_cache_tokens == budget.kv_cache_tokens


def test_shared_experts_are_whole_on_every_gpu_under_sequence_parallel_moe() -> None:
    """vLLM ``config/parallel.py``, ``ParallelConfig.use_sequence_parallel_moe``: with
    expert parallelism, tp > 1 and dp > 1 (either backend here) each engine's GPUs split
    its tokens before the MoE layers, and ``DeepseekV2MLP`` builds the shared experts with
    ``disable_tp=is_sequence_parallel`` (Llama 4's ``shared_expert`` likewise): whole on
    each GPU, not cut over tp. Audit (2026-12): the planner cut them over tp.
    DeepSeek-V3 in FP8 as 2 engines of tp 4: the 58 x 3 x 7,168 x 2,048 shared-expert
    bytes (2.55 GB) whole on each GPU, 1.92 GB more than the quarter the planner counted;
    the routed experts 32 per GPU where one engine of tp 4 holds 64."""
    shared = 58 * 3 * 7168 * 2048
    routed, _ = _dsv3_bytes()
    sp = kv_budget("deepseek-v3", "H200 SXM", tp=4, dp=2, expert_parallel=True, **DSV3)
    one = kv_budget("deepseek-v3", "H200 SXM", tp=4, expert_parallel=True, **DSV3)
    assert sp.weights - one.weights == pytest.approx(shared * 3 / 4 - routed * 32 / 256,
                                                     rel=1e-12)
    # without expert parallelism, or with one engine, or tp 1: cut (or whole) as before
    tp_moe = kv_budget("deepseek-v3", "H200 SXM", tp=4, dp=2, **DSV3)
    assert tp_moe.weights - one.weights == pytest.approx(-routed * (1 / 4 - 1 / 8),
                                                         rel=1e-12)


def test_a_decode_step_reads_the_whole_shared_experts_under_sequence_parallel_moe() -> None:
    """The same layout: each GPU of an engine of tp 4 reads its whole copy of the shared
    experts every step, 3/4 of 2.55 GB more than the cut the planner read before; at one
    sequence, where weights dominate, the step reads that much more per GPU."""
    shared = 58 * 3 * 7168 * 2048
    mv = model_view("deepseek-v3")
    par = moe_parallel(mv, tp=4, dp=2, expert_parallel=True)
    routed, other = _dsv3_bytes()
    base = decode_read_bytes(mv, par, other + routed, routed, 1)
    assert decode_read_bytes(mv, par, other + routed, routed, 1, shared=shared) - base == \
        pytest.approx(shared * 3 / 4, rel=1e-12)
    sp = plan_serving("deepseek-v3", "H200 SXM", tp=4, dp=2, expert_parallel=True, **DSV3)
    one_engine = dataclasses.replace(par, dp=1)
    assert decode_read_bytes(mv, one_engine, other + routed, routed, 1, shared=shared) == \
        decode_read_bytes(mv, one_engine, other + routed, routed, 1)  # no SP: cut
    assert sp.feasible


_MOE = ("mixtral-8x7b", "deepseek-v3", "qwen3-30b-a3b", "qwen3-235b-a22b", "gpt-oss-120b",
        "llama-4-maverick", "kimi-k2", "minimax-m2.7")


@settings(max_examples=60 * FUZZ_DEPTH)
@given(model=st.sampled_from(_MOE), gpu=st.sampled_from(("H100 SXM", "H200", "L40S", "B200",
                                                          "GB200 NVL72")),
       tp=st.sampled_from((None, 1, 2, 3, 4, 8, 16)), dp=st.integers(1, 24),
       ep=st.booleans(), a2a=st.sampled_from(("allgather_reducescatter", "deepep")),
       dtype=st.sampled_from(("bf16", "fp8")), qps=st.sampled_from((None, 0.5, 50.0)))
def test_any_moe_layout_gives_a_whole_plan_or_names_the_input(model, gpu, tp, dp, ep, a2a,
                                                              dtype, qps) -> None:
    """Property (2026-12 audit): any MoE preset, GPU and layout either plans (its GPUs tp x
    dp x replicas, the engines' pools non-negative, finite times) or refuses with a
    ValueError that begins with the argument at fault, never another exception."""
    try:
        plan = plan_serving(model, gpu, tp=tp, dp=dp, expert_parallel=ep,
                            all2all_backend=a2a, weight_dtype=dtype, qps=qps,
                            max_model_len=4096, prompt_tokens=1000, output_tokens=200)
    except ValueError as exc:
        assert str(exc).split(":")[0].split(" ")[0] in ("dp", "expert_parallel", "tp"), exc
        return
    assert plan.dp == dp and plan.gpus == plan.tp * dp * plan.replicas
    assert plan.kv_cache_tokens >= 0 and plan.budget.weights > 0
    assert plan.tpot > 0 and plan.ttft > 0 and plan.throughput >= 0
    assert not plan.feasible or plan.kv_cache_tokens > 0


@pytest.mark.parametrize("parts", ["router", None, ("router", 1), {"router": 1}])
def test_replicated_bytes_wants_a_sequence_of_kinds(parts: object) -> None:
    """Audit (2026-12): parts="router" was read letter by letter ("got 'r'"), and None
    failed with "'NoneType' object is not iterable"; each now says what parts takes."""
    from gpulesson.planning.checkpoints import replicated_bytes

    with pytest.raises((TypeError, ValueError), match=r"^parts must be a tuple of"):
        replicated_bytes("deepseek-v3", "fp8", parts=parts)  # type: ignore[arg-type]
    assert replicated_bytes("deepseek-v3", "fp8", parts=["router"]) == \
        replicated_bytes("deepseek-v3", "fp8", parts=("router",))


def test_the_expert_byte_helpers_take_a_preset_name() -> None:
    """Audit (2026-12): routed_bytes and shared_expert_bytes took only a ModelView, where
    weight_bytes beside them takes a preset name too."""
    from gpulesson.planning.checkpoints import routed_bytes, shared_expert_bytes

    mv = model_view("deepseek-v3")
    assert routed_bytes("deepseek-v3", "fp8") == routed_bytes(mv, "fp8") == 58 * 256 * 3 * \
        7168 * 2048
    assert shared_expert_bytes("deepseek-v3", "fp8") == shared_expert_bytes(mv, "fp8") == \
        58 * 3 * 7168 * 2048


def test_deepep_matters_only_with_experts_whole_and_several_engines() -> None:
    """vLLM uses the all-to-all kernels only when ``dp_size > 1 and use_ep``
    (``FusedMoEParallelConfig.use_all2all_kernels``): DeepEP asked for without expert
    parallelism, or on one engine, plans as the default backend; with both it moves
    fewer bytes (k = 8 copies of a token, not 16)."""
    kw = dict(max_model_len=8192, weight_dtype="fp8", qps=None, prompt_tokens=2000,
              output_tokens=300)

    def tpot(**layout: object) -> float:
        return plan_serving("qwen3-235b-a22b", "H200 SXM", **layout, **kw).tpot

    for layout in (dict(tp=1, dp=16), dict(tp=8, expert_parallel=True)):
        assert tpot(**layout, all2all_backend="deepep") == tpot(**layout)
    both = dict(tp=1, dp=16, expert_parallel=True)
    assert tpot(**both, all2all_backend="deepep") < tpot(**both)
