"""gpulesson.distributed: ZeRO, collectives and the layout advisor (pipeline schedules:
test_pipeline.py)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpulesson import distributed
from gpulesson.hardware import gpu
from gpulesson.transformer import param_count, preset

GB = 1e9
LLAMA_405B = preset("llama-3.1-405b")


# ---------------------------------------------------------------------------------------
# Published figures


@pytest.mark.parametrize(("stage", "gb"), [(0, 120.0), (1, 31.4), (2, 16.6), (3, 1.9)],
                         ids=["baseline", "P_os", "P_os+g", "P_os+g+p"])
def test_source_zero_figure1_7_5b_example(stage: int, gb: float) -> None:
    """Rajbhandari et al. 2020 (ZeRO), Figure 1 / section 5: a 7.5B model with K = 12 and
    Nd = 64 needs 120 GB per GPU of model state, 31.4 GB with P_os, 16.6 GB with P_os+g
    and 1.9 GB with P_os+g+p."""
    value = distributed.zero_memory_per_gpu(7.5e9, stage=stage, dp=64, optimizer_bytes=12)
    assert round(value / GB, 1) == gb


def test_source_zero_asymptotic_reductions() -> None:
    """ZeRO section 5: for large Nd the stages approach 4x (P_os), 8x (P_os+g) and Nd-fold
    (P_os+g+p) reductions of the 16 Psi baseline (K = 12)."""
    psi, nd = 1e9, 1_000_000
    base = distributed.zero_memory_per_gpu(psi, stage=0, dp=nd)
    assert base / distributed.zero_memory_per_gpu(psi, stage=1, dp=nd) == pytest.approx(4,
                                                                                      rel=1e-4)
    assert base / distributed.zero_memory_per_gpu(psi, stage=2, dp=nd) == pytest.approx(8,
                                                                                      rel=1e-4)
    assert base / distributed.zero_memory_per_gpu(psi, stage=3, dp=nd) == pytest.approx(nd)


@pytest.mark.parametrize(("stage", "gb"), [(0, 120), (1, 31.4), (2, 16.6), (3, 1.9)])
def test_source_zero_figure1_through_layout_memory(stage: int, gb: float) -> None:
    """Rajbhandari et al. 2020 (ZeRO), Figure 1: 7.5B parameters, Nd = 64, K = 12:
    120, 31.4, 16.6 and 1.9 GB per GPU; layout_memory without activations agrees."""
    m = distributed.layout_memory(n_params=7.5e9, n_gpus=64, zero_stage=stage)
    assert (m.dp, m.tp, m.pp) == (64, 1, 1)
    assert m.activations == 0 and m.total == m.model_state
    assert round(m.total / 1e9, 1) == gb


def test_source_zero_stage3_moves_one_and_a_half_times_the_data() -> None:
    """Rajbhandari et al. 2020, section 7: ZeRO-1 and ZeRO-2 communicate 2 Psi per step,
    like an all-reduce; ZeRO-3 3 Psi, 1.5x. Ring volumes from nccl-tests: all-reduce
    2(n-1)/n S, all-gather (n-1)/n S."""
    base = dict(dp=64, bytes_per_value=2, bandwidth=50e9)
    plain = distributed.data_parallel_sync_time(7e9, zero_stage=0, **base)
    assert plain == pytest.approx(2 * 63 / 64 * 14e9 / 50e9)
    for stage in (1, 2):
        assert distributed.data_parallel_sync_time(7e9, zero_stage=stage, **base) == plain
    assert distributed.data_parallel_sync_time(7e9, zero_stage=3, **base) == pytest.approx(
        1.5 * plain)
    assert distributed.data_parallel_sync_time(7e9, dp=1, bandwidth=50e9, latency=1e-3) == 0


NCCL_FACTORS = [
    ("all_reduce", 2 * 7 / 8), ("reduce_scatter", 7 / 8), ("all_gather", 7 / 8),
    ("alltoall", 7 / 8), ("broadcast", 1.0), ("reduce", 1.0),
]


@pytest.mark.parametrize(("collective", "factor"), NCCL_FACTORS,
                         ids=[row[0] for row in NCCL_FACTORS])
def test_source_nccl_tests_bus_bandwidth_factor(collective: str, factor: float) -> None:
    """NVIDIA nccl-tests, doc/PERFORMANCE.md, 'Summary': bus-bandwidth correction factors
    (AllReduce 2(n-1)/n; ReduceScatter, AllGather, AlltoAll (n-1)/n; Broadcast, Reduce 1),
    here for n = 8 ranks."""
    assert distributed.bus_bandwidth_factor(collective, 8) == pytest.approx(factor)


def test_source_nccl_tests_busbw_from_algbw() -> None:
    """nccl-tests PERFORMANCE.md: algbw = S/t and, for AllReduce, busbw = algbw * 2(n-1)/n;
    the ideal time is t = (S/B) * 2(n-1)/n. 1 GB on 8 ranks in 10 ms: algbw 100 GB/s,
    busbw 175 GB/s."""
    assert distributed.algorithm_bandwidth(1e9, 0.01) == pytest.approx(100e9)
    assert distributed.bus_bandwidth("all_reduce", 1e9, 0.01, 8) == pytest.approx(175e9)
    assert distributed.collective_time("all_reduce", 1e9, 8, bandwidth=175e9) == pytest.approx(
        0.01)
    assert distributed.allreduce_bytes_per_rank(1e9, 8) == pytest.approx(1.75e9)


def test_source_llama3_stages_hold_at_most_8_layers() -> None:
    """Dubey et al. 2024, section 3.3: 126 layers on 16 pipeline stages, the first and
    last holding one layer fewer (7 + 14 x 8 + 7 = 126): the largest stage has 8."""
    assert distributed.stage_layers(126, 16) == 8
    assert 7 + 14 * 8 + 7 == 126
    n = param_count(LLAMA_405B)
    assert distributed.params_per_gpu(n, tp=8, pp=16, layers=126) == pytest.approx(
        n / 8 * 8 / 126)
    assert distributed.params_per_gpu(n, tp=8, pp=16) == pytest.approx(n / 128)


# ---------------------------------------------------------------------------------------
# Validation


def test_bad_arguments_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="stage must be 0, 1, 2 or 3, got 4"):
        distributed.zero_memory_per_gpu(1e9, stage=4, dp=8)
    with pytest.raises(ValueError, match="dp must be a positive integer, got 0"):
        distributed.zero_memory_per_gpu(1e9, stage=1, dp=0)
    with pytest.raises(TypeError, match="n_ranks must be a positive integer"):
        distributed.bus_bandwidth_factor("all_reduce", 8.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="latency"):
        distributed.collective_time("all_reduce", 1e9, 8, bandwidth=1e11, latency=-1)
    with pytest.raises(ValueError, match="overlap"):
        distributed.scaling_efficiency(1.0, 1.0, overlap=2)
    with pytest.raises(ValueError, match="gpu_memory"):
        distributed.recommend_layout(n_params=1e9, gpu_memory=math.nan, n_gpus=8)
    with pytest.raises(ValueError, match="zero_stage must be 0, 1, 2 or 3"):
        distributed.data_parallel_sync_time(1e9, dp=8, zero_stage=5, bandwidth=50e9)


def test_collective_name_validation() -> None:
    with pytest.raises(KeyError, match="all_reduce"):
        distributed.bus_bandwidth_factor("gossip", 4)


def test_stage_layers_refuses_more_stages_than_layers() -> None:
    with pytest.raises(ValueError, match=r"pp must be at most layers \(126\)"):
        distributed.stage_layers(126, 127)


def test_layout_memory_needs_dividing_degrees() -> None:
    with pytest.raises(ValueError, match=r"tp x pp \(8 x 3 = 24\) must divide n_gpus \(64\)"):
        distributed.layout_memory(n_params=7e9, n_gpus=64, tp=8, pp=3)
    with pytest.raises(ValueError, match="zero_stage must be 0, 1, 2 or 3"):
        distributed.layout_memory(n_params=7e9, n_gpus=64, zero_stage=4)
    with pytest.raises(ValueError, match=r"tp must divide heads \(32\)"):
        distributed.layout_memory(n_params=7e9, n_gpus=48, tp=3, cfg=preset("llama-2-7b"),
                                  seq_len=4096)


# ---------------------------------------------------------------------------------------
# Properties


@given(psi=st.floats(1e6, 1e13), dp=st.integers(1, 4096), k=st.sampled_from([4, 8, 12, 14]))
def test_zero_monotone(psi: float, dp: int, k: float) -> None:
    """Stage k+1 never needs more than stage k; more ranks never more under ZeRO-3."""
    values = [distributed.zero_memory_per_gpu(psi, stage=s, dp=dp, optimizer_bytes=k)
              for s in range(4)]
    assert all(math.isfinite(x) and x > 0 for x in values)
    assert values[0] >= values[1] >= values[2] >= values[3]
    more = distributed.zero_memory_per_gpu(psi, stage=3, dp=dp + 1, optimizer_bytes=k)
    assert more <= values[3]


# ---------------------------------------------------------------------------------------
# Behaviour


def test_small_model_gets_plain_data_parallel() -> None:
    """GPT-2 small: 124M x 16 bytes = 2 GB fits an 80 GB GPU without any sharding."""
    r = distributed.recommend_layout(n_params=param_count(preset("gpt2")), gpu_memory=80e9,
                                     n_gpus=8)
    assert (r.name, r.dp, r.tp, r.pp, r.zero_stage, r.fits) == ("data parallel", 8, 1, 1, 0,
                                                                 True)
    assert "least communication" in r.reason


def test_7b_on_8_h100_needs_zero() -> None:
    """7B x 16 bytes = 112 GB > 80 GB, but ZeRO-1 over 8 GPUs is 4*7 + 12*7/8 = 38.5 GB."""
    r = distributed.recommend_layout(n_params=7e9, gpu_memory=gpu("H100 SXM").memory_bytes,
                                     n_gpus=8)
    assert r.name == "ZeRO-1" and r.fits
    assert r.memory_per_gpu == pytest.approx(38.5e9)
    assert "112.0 GB" in r.reason and "ZeRO-1" in r.reason


def test_activations_push_to_tensor_parallel() -> None:
    """Large activations that ZeRO cannot shard call for tensor parallelism in a node."""
    r = distributed.recommend_layout(n_params=7e9, gpu_memory=80e9, n_gpus=8,
                                     activation_bytes=120e9)
    assert r.tp > 1 and r.pp == 1 and r.fits
    assert r.dp * r.tp * r.pp == 8
    assert "NVLink" in r.reason


def test_pipeline_across_nodes_for_70b_with_activations() -> None:
    """Llama-2-70B on 64 x 80 GB with FlashAttention (its default): at 4K tokens tensor
    parallelism in a node fits; at 16K tokens it alone does not, and a pipeline across
    nodes is added. With the GPT block's eager scores even 4K tokens need more than a
    node's tensor parallelism without recomputation."""
    cfg = preset("llama-2-70b")
    common = dict(n_params=param_count(cfg), gpu_memory=80e9, n_gpus=64, cfg=cfg)
    r = distributed.recommend_layout(**common, seq_len=4096, recompute="none")
    assert r.fits and (r.tp, r.pp) == (8, 1)
    r2 = distributed.recommend_layout(**common, seq_len=16384, recompute="none")
    assert r2.fits and r2.pp > 1 and r2.dp * r2.tp * r2.pp == 64 and cfg.heads % r2.tp == 0
    eager = distributed.layout_memory(n_params=param_count(cfg), n_gpus=64, tp=8,
                                      zero_stage=1, cfg=cfg, seq_len=4096, attention="eager")
    assert eager.total > 80e9


def test_nothing_fits_says_how_many_gpus() -> None:
    r = distributed.recommend_layout(n_params=1e12, gpu_memory=80e9, n_gpus=8)
    assert not r.fits
    assert "at least 200 such GPUs" in r.reason


def test_single_gpu_no_zero() -> None:
    r = distributed.recommend_layout(n_params=7e9, gpu_memory=80e9, n_gpus=1)
    assert not r.fits and r.dp == 1 and r.zero_stage == 0


def test_first_stage_activations_do_not_shrink_with_pipeline() -> None:
    """Korthikanti et al. 2022, section 4.2.3: with 1F1B the first stage holds pp
    micro-batches over L/pp layers, the activations of the whole model for one micro-batch.
    With uneven stages it holds pp * ceil(L/pp) layers' worth."""
    from gpulesson import activations

    cfg = LLAMA_405B
    kw = dict(n_params=param_count(cfg), n_gpus=16_384, tp=8, zero_stage=1, cfg=cfg,
              seq_len=8192, recompute="selective")
    per_layer = activations.layer_activation_bytes(cfg, seq_len=8192, tp=8,
                                                   sequence_parallel=True,
                                                   recompute="selective")
    for pp in (2, 16, 32, 64):
        m = distributed.layout_memory(pp=pp, **kw)
        assert m.activations == pytest.approx(
            pp * distributed.stage_layers(126, pp) * per_layer, rel=1e-12)
        assert m.activations >= 126 * per_layer


def test_advisor_finds_a_layout_for_llama3_405b_on_16k_h100() -> None:
    """Llama 3.1 405B, 16,384 H100s of 80 GB, 8K sequences, selective recomputation: the
    advisor used to try only pipeline sizes dividing the 126 layers (2 here) and found
    nothing. With uneven stages it finds tp = 8 and pp = 32 (126 layers on 32 stages, at
    most 4 each), which fits. Llama 3 itself ran tp = 8, pp = 16 (Dubey et al. 2024,
    Table 4); with its Llama blocks' activations (FlashAttention, grouped-query attention,
    no dropout) that needs 81.4 GB, a little more than 80 GB."""
    cfg = LLAMA_405B
    n = param_count(cfg)
    h100 = gpu("H100 SXM").memory_bytes
    r = distributed.recommend_layout(n_params=n, gpu_memory=h100, n_gpus=16_384, cfg=cfg,
                                     seq_len=8192, recompute="selective")
    assert r.fits and (r.tp, r.pp, r.dp, r.zero_stage) == (8, 32, 64, 1)
    assert 126 % r.pp != 0
    assert "at most 4 of the 126 layers" in r.reason
    assert r.params_per_gpu == pytest.approx(distributed.params_per_gpu(n, tp=8, pp=32,
                                                                        layers=126))
    llama3 = distributed.layout_memory(n_params=n, n_gpus=16_384, tp=8, pp=16,
                                       zero_stage=1, cfg=cfg, seq_len=8192,
                                       recompute="selective")
    assert llama3.dp == 128 and 80e9 < llama3.total < 90e9
    # at 4K tokens fewer stages suffice, again a size that does not divide 126
    r4 = distributed.recommend_layout(n_params=n, gpu_memory=h100, n_gpus=16_384, cfg=cfg,
                                      seq_len=4096, recompute="selective")
    assert r4.fits and (r4.tp, r4.pp) == (8, 8)


def test_scaling_efficiency_and_speedup() -> None:
    assert distributed.scaling_efficiency(1.0, 1.0) == 0.5
    assert distributed.scaling_efficiency(1.0, 1.0, overlap=1.0) == 1.0
    assert distributed.scaling_efficiency(1.0, 3.0, overlap=1.0) == pytest.approx(1 / 3)
    assert distributed.effective_speedup(64, 0.5) == 32


# ---------------------------------------------------------------------------------------
# Achievable bandwidth, NVLink SHARP, tiers, overlap, DualPipe


def test_source_nccl_tests_212_achievable_nvlink_bandwidth() -> None:
    """nccl-tests issue #212 (S. Jeaugey): "450GB/s is the line rate. With the protocol
    overhead (~20%) NCCL can get an effective NVLink bandwidth of 370GB/s"."""
    assert distributed.achievable_bandwidth(450e9) == pytest.approx(370e9)
    assert distributed.achievable_bandwidth(450e9) / 450e9 == pytest.approx(0.8, abs=0.03)


def test_source_nccl_tests_290_ndr_nic() -> None:
    """nccl-tests issue #290: "For NDR @ 400Gbps you should see 46-48GB/s per NIC"."""
    assert 46e9 <= distributed.achievable_bandwidth(50e9, "network") <= 48e9


def test_source_nccl_tests_212_sharp_beats_the_ring() -> None:
    """On 8 H100, NVLink SHARP reaches algbw ~275 GB/s (busbw ~480 GB/s): faster than any
    ring at 370 GB/s of bus bandwidth, whose algbw is 370 / (2 x 7/8) = 211 GB/s."""
    size = 1e9
    sharp = distributed.sharp_allreduce_time(size, line_rate=450e9)
    ring = distributed.collective_time("all_reduce", size, 8, bandwidth=370e9)
    assert size / sharp == pytest.approx(275e9)
    assert size / ring == pytest.approx(211.4e9, rel=1e-3)
    assert sharp < ring
    busbw = distributed.bus_bandwidth("all_reduce", size, sharp, 8)
    assert busbw > 450e9  # above the line rate: the ring's 2(n-1)/n bound does not apply


def test_group_tier() -> None:
    """tp 8 in an 8-GPU server stays on NVLink; the data-parallel group of stride 8 crosses
    servers; in a 72-GPU NVL72 rack a stride-8 group of 9 stays inside."""
    assert distributed.group_tier(stride=1, size=8, domain=8) == "nvlink"
    assert distributed.group_tier(stride=8, size=2, domain=8) == "network"
    assert distributed.group_tier(stride=8, size=9, domain=72) == "nvlink"
    assert distributed.group_tier(stride=8, size=1, domain=8) == "nvlink"


def test_exposed_time_limited_to_window() -> None:
    assert distributed.exposed_time(1.0, 0.4) == pytest.approx(0.6)
    assert distributed.exposed_time(1.0, 5.0) == 0.0
    assert distributed.exposed_time(1.0, 5.0, overlap=0.5) == 0.0
    assert distributed.exposed_time(1.0, 1.0, overlap=0.0) == 1.0


# ---------------------------------------------------------------------------------------
# Embeddings on the first and last stage, context parallelism


def test_source_llama3_405b_stage_layout() -> None:
    """Dubey et al. 2024, section 3.3.2: Llama 3 405B's 126 layers on 16 pipeline stages,
    with one layer fewer on the first and the last stage (they hold the embedding and the
    output layer): 7, then 14 stages of 8, then 7."""
    assert distributed.stage_layer_counts(126, 16) == [7] + [8] * 14 + [7]
    assert sum(distributed.stage_layer_counts(61, 8)) == 61


def test_embeddings_sit_on_the_end_stages() -> None:
    """Llama 3 405B with its 2.1B-parameter embedding on the first stage and its 2.1B
    output layer on the last: the two ends, one layer lighter, hold 24.4B, within 5 % of
    the middle stages' 25.5B, which is why the layout removes that layer."""
    from gpulesson.transformer import embedding_params, param_breakdown

    cfg = LLAMA_405B
    n = param_count(cfg)
    emb, out = embedding_params(cfg), param_breakdown(cfg)["lm_head"]
    stages = distributed.stage_params(n, layers=126, pp=16, embedding_params=emb,
                                      output_params=out)
    assert sum(stages) == pytest.approx(n)
    per_layer = (n - emb - out) / 126
    assert stages[0] == pytest.approx(7 * per_layer + emb)
    assert stages[-1] == pytest.approx(7 * per_layer + out)
    assert max(stages) == pytest.approx(8 * per_layer)
    assert round(stages[0] / 1e9, 1) == 24.4 and round(max(stages) / 1e9, 1) == 25.5
    # spread like the layers (the default), the largest stage is ceil(126/16) = 8 layers
    assert distributed.params_per_gpu(n, pp=16, layers=126) == pytest.approx(n * 8 / 126)
    # tied embeddings: the last stage keeps a copy of the shared matrix
    tied = distributed.stage_params(100.0, layers=2, pp=2, embedding_params=10.0,
                                    tied_embeddings=True)
    assert tied == [55.0, 55.0]


def test_layout_with_context_parallelism_and_end_stages() -> None:
    cfg = preset("llama-3-8b")
    n = param_count(cfg)
    base = distributed.layout_memory(n_params=n, n_gpus=8, cfg=cfg, seq_len=32768,
                                     attention="flash")
    cp = distributed.layout_memory(n_params=n, n_gpus=8, cp=4, cfg=cfg, seq_len=32768,
                                   attention="flash", zero_stage=1)
    assert (cp.dp, cp.cp) == (2, 4)
    assert cp.activations == pytest.approx(base.activations / 4)
    ends = distributed.layout_memory(n_params=n, n_gpus=8, pp=4, cfg=cfg,
                                     embedding_on_ends=True)
    assert ends.params_per_gpu > distributed.layout_memory(n_params=n, n_gpus=8, pp=4,
                                                           cfg=cfg).params_per_gpu
    with pytest.raises(ValueError, match=r"tp x pp x cp \(1 x 1 x 3 = 3\) must divide "
                                         r"n_gpus \(8\)"):
        distributed.layout_memory(n_params=n, n_gpus=8, cp=3)


# Bounded work and wrong types


def test_the_layout_search_is_bounded_for_many_gpus() -> None:
    """``recommend_layout`` scanned every integer up to ``n_gpus``: 2^40 GPUs whose
    activations fit nowhere took hours. It walks the divisors up to the square root
    (``distributed.divisors``) and answers within a second."""
    import signal

    def ring(*_args: object) -> None:
        raise TimeoutError("recommend_layout ran past 1 s")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        found = distributed.recommend_layout(n_params=7e9, gpu_memory=1e9, n_gpus=2**40,
                                             activation_bytes=1e20)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert not found.fits


def test_divisors_match_a_brute_force_search_and_refuse_unbounded_work() -> None:
    """``divisors(n, limit)`` is every divisor up to ``limit``, found by trial division up
    to the square root; past 2^42 it asks for a limit instead of running for hours."""
    for n in range(1, 400):
        for limit in (None, 1, 7, 20, n):
            top = n if limit is None else limit
            assert distributed.divisors(n, limit) == [
                d for d in range(1, n + 1) if n % d == 0 and d <= top]
    assert distributed.divisors(16_384, 32) == [1, 2, 4, 8, 16, 32]
    assert distributed.divisors(2**60, 64) == [1, 2, 4, 8, 16, 32, 64]
    with pytest.raises(ValueError, match="give a limit"):
        distributed.divisors(2**60)


def test_advisor_tries_zero2_and_zero3_with_pipelines() -> None:
    """When no pipeline depth fits with ZeRO-1, the advisor shards gradients (ZeRO-2) and
    then parameters (ZeRO-3) across the data-parallel groups, as the training planner's
    search does (it tried ZeRO-1 only and gave up). Llama 3.1 405B on 16,384 GPUs, tp 8,
    8K tokens: the leanest ZeRO-1 layout (64 stages) needs 71.8 GB; on 71 GB GPUs ZeRO-2
    with 64 stages fits (70.2 GB), on 69 GB only ZeRO-3 does (68.7 GB)."""
    cfg = LLAMA_405B
    n = param_count(cfg)
    kw = dict(n_params=n, n_gpus=16_384, cfg=cfg, seq_len=8192, recompute="selective")
    r = distributed.recommend_layout(gpu_memory=71e9, **kw)
    assert r.fits and (r.tp, r.pp, r.zero_stage) == (8, 64, 2), r
    assert "ZeRO-2" in r.name and r.memory_per_gpu == pytest.approx(70.2e9, rel=0.01)
    r3 = distributed.recommend_layout(gpu_memory=69e9, **kw)
    assert r3.fits and r3.zero_stage == 3, r3


# ---------------------------------------------------------------------------------------
# The data-parallel compute/communication roofline

#: Austin et al. 2025, *How to Scale Your Model* (jax-ml/scaling-book at 1a55377, gpus.md,
#: "Rooflines for LLM Scaling on GPUs", Data Parallelism): "Within a node, we just need the per-GPU
#: token batch size > 990e12 / 450e9 = 2200"; "Within an SU or at the spine level, BS >
#: 990e12 / 400e9 = 2475"; DeepSeek v3 on H800s with 300GB/s "would need 990e12 / 300e9 =
#: 3300 tokens per GPU, or about 6.7M" (2,048 GPUs); gpt-oss "with k=4 and E=128, this
#: increases to 32 * 2475 = 79,200 across nodes"; 2-node data parallelism "B / N > 1237".
H100_BF16 = 990e12


@pytest.mark.parametrize(("bandwidth", "tokens"), [(450e9, 2200), (400e9, 2475),
                                                   (300e9, 3300)],
                         ids=["nvlink", "across-nodes", "h800-nvlink"])
def test_source_scaling_book_gpu_data_parallel_roofline(bandwidth: float,
                                                        tokens: int) -> None:
    got = distributed.data_parallel_critical_tokens(flops=H100_BF16, bandwidth=bandwidth)
    assert round(got) == tokens


def test_source_scaling_book_deepseek_v3_batch_and_moe_factor() -> None:
    per_gpu = distributed.data_parallel_critical_tokens(flops=H100_BF16, bandwidth=300e9)
    assert int(2048 * per_gpu / 1e5) == 67  # "about 6.7M": 2,048 x 3,300 = 6.76M
    gpt_oss = distributed.data_parallel_critical_tokens(flops=H100_BF16, bandwidth=400e9,
                                                        total_params=128, active_params=4)
    assert round(gpt_oss) == 79_200
    two_nodes = distributed.data_parallel_critical_tokens(flops=H100_BF16, bandwidth=400e9,
                                                          dp=2)
    assert int(two_nodes) == 1237


def test_source_scaling_book_tpu_v5p_data_parallel_roofline() -> None:
    """Austin et al. 2025, training.md: "For TPUv5p, C=4.6e14 and W=2 * 9e10 for 1D data
    parallelism over ICI, so our batch size per chip must be at least 2,550"
    ("4.59e14 / 1.8e11 = 2550"); over all three axes "BS=850 per TPU"; DeepSeek-V2's ~40M
    tokens "would allow us to scale to roughly 47,000 chips"."""
    one_axis = distributed.data_parallel_critical_tokens(flops=4.59e14, bandwidth=1.8e11)
    assert round(one_axis) == 2550
    three = distributed.data_parallel_critical_tokens(flops=4.59e14, bandwidth=3 * 1.8e11)
    assert round(three) == 850
    assert round(40e6 / three, -3) == 47_000


def test_critical_tokens_balance_the_backward_pass_and_the_all_reduce() -> None:
    """At T* the backward pass (4 N_active T FLOPs) and the ring all-reduce of the BF16
    gradients (data_parallel_sync_time) take the same time, for a dense 70B model on 64
    ranks and for an MoE with 8x the parameters it computes with."""
    for total, active in ((70e9, 70e9), (560e9, 70e9)):
        t = distributed.data_parallel_critical_tokens(
            flops=400e12, bandwidth=40e9, dp=64, total_params=total, active_params=active)
        backward = 4 * active * t / 400e12
        sync = distributed.data_parallel_sync_time(total, dp=64, bandwidth=40e9)
        assert backward == pytest.approx(sync)
    assert distributed.data_parallel_critical_tokens(flops=1e15, bandwidth=1e11, dp=1) == 0
    with pytest.raises(ValueError, match=r"active_params must be at most total_params"):
        distributed.data_parallel_critical_tokens(flops=1e15, bandwidth=1e11,
                                                  total_params=1e9, active_params=2e9)


def test_long_sequences_get_context_parallelism() -> None:
    """DeepSeek-V3 at 131,072 tokens on 256 H100s: no tensor, pipeline or ZeRO layout fits
    (selective recomputation keeps about 2.2 TB of activations a sequence, which 1F1B's
    first stage holds whatever the depth); context parallelism splits the sequence, as
    Llama 3 405B's 128K stage did (cp 16), and fits. The same model at 4,096 tokens
    needs none."""
    cfg = preset("deepseek-v3")
    h100 = gpu("H100 SXM").usable_memory()
    common = dict(n_params=param_count(cfg), gpu_memory=h100, n_gpus=256, cfg=cfg,
                  recompute="selective")
    r = distributed.recommend_layout(**common, seq_len=131072)
    assert r.fits and r.cp > 1 and r.memory_per_gpu <= h100
    assert r.dp * r.tp * r.pp * r.cp == 256 and 131072 % r.cp == 0
    assert f"cp={r.cp}" in r.name and "Context parallelism" in r.reason
    assert distributed.layout_memory(n_params=common["n_params"], n_gpus=256, tp=r.tp,
                                     cp=r.cp, zero_stage=r.zero_stage, cfg=cfg,
                                     seq_len=131072, recompute="selective").total == (
        r.memory_per_gpu)
    short = distributed.recommend_layout(**common, seq_len=4096)
    assert short.fits and short.cp == 1
