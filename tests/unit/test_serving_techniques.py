"""gpulesson.serving_techniques: prefix caching, chunked prefill, disaggregated prefill and
decode, speculative decoding and multi-token prediction."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpulesson import hardware, inference
from gpulesson import serving_techniques as st_
from gpulesson.transformer import active_params, param_count, preset

from .conftest import FUZZ_DEPTH

H100 = hardware.gpu("H100 SXM")
GPU = {"peak_flops": H100.dense("bf16"), "bandwidth": H100.bandwidth}
LLAMA = preset("llama-3-8b")

# ---------------------------------------------------------------------------------------
# Published figures


def test_source_deepseek_prefix_cache_hit_rate_is_the_share_of_prefill_skipped() -> None:
    """DeepSeek-AI, "DeepSeek-V3/R1 Inference System Overview" (open-infra-index, Day 6,
    1 March 2025): "Total input tokens: 608B, of which 342B tokens (56.3%) hit the on-disk
    KV cache." A token found in the cache is a token whose prefill is skipped: at a hit
    rate of 342/608 the prefill FLOPs of every prompt fall by 56.3 % (to the rounding of
    the published share), for a dense and a latent-attention mixture-of-experts model."""
    hit = 342 / 608
    for name in ("llama-3-8b", "deepseek-v3"):
        saving = st_.prefix_cache_saving(preset(name), 8192, hit_rate=hit, **GPU)
        assert saving.flops_saved == 342 / 608       # 56.25 %, published as 56.3 %
        assert abs(100 * saving.flops_saved - 56.3) <= 0.05 + 1e-9
        assert saving.cached_tokens == math.floor(hit * 8192)


def test_source_deepseek_node_count_from_the_two_pools() -> None:
    """The same overview: in 24 hours, 608B input and 168B output tokens; "each H800 node
    delivers an average throughput of ~73.7k tokens/s input (including cache hits) during
    prefilling or ~14.8k tokens/s output during decoding"; "the average node occupancy
    was 226.75 nodes". Two pools sized for the day's load add up to that occupancy
    (0.05 % off: the published throughputs are rounded)."""
    day = 24 * 3600
    pools = st_.disaggregated_gpus(request_rate=1 / day, input_tokens=608e9,
                                   output_tokens=168e9, prefill_tokens_per_second=73.7e3,
                                   decode_tokens_per_second=14.8e3)
    assert pools.prefill_gpus + pools.decode_gpus == pytest.approx(226.75, rel=1e-3)
    assert pools.ratio == pytest.approx(pools.prefill_gpus / pools.decode_gpus)
    assert 0.7 < pools.ratio < 0.75   # fewer prefill nodes than decode nodes


def test_source_deepseek_v3_multi_token_prediction() -> None:
    """DeepSeek-AI 2024 (DeepSeek-V3 technical report, arXiv 2412.19437, section 5.4.3):
    "the acceptance rate of the second token prediction ranges between 85% and 90% ...
    This high acceptance rate enables DeepSeek-V3 to achieve a significantly improved
    decoding speed, delivering 1.8 times TPS". One MTP module is a draft of g = 1 token;
    its cost c is one more MoE layer (the model's 61st part of its active weights) and the
    shared output head with the 2d x d projection, over the active parameters. The
    published 1.8x lies between the speed-ups at 85 % and at 90 %."""
    ds = preset("deepseek-v3")
    n = active_params(ds)
    head = ds.vocab * ds.hidden
    c = ((n - 2 * head) / ds.layers + head + 2 * ds.hidden ** 2) / n
    assert 0.03 < c < 0.06
    low, high = (st_.speculative_speedup(acceptance_rate=a, draft_tokens=1, draft_cost=c)
                 for a in (0.85, 0.90))
    assert low < 1.8 < high
    assert st_.expected_tokens_per_step(acceptance_rate=0.85, draft_tokens=1) == \
        pytest.approx(1.85)


def test_source_leviathan_expected_tokens_is_the_mean_of_the_accepted_run() -> None:
    """Leviathan, Kalman and Matias 2023 (arXiv 2211.17192), equation 1: the number of
    tokens one run of the target produces is a capped geometric variable, with mean
    (1 - a^(g+1)) / (1 - a). Enumerated here over every accept/reject pattern of the g
    draft tokens: the step yields the accepted run plus the target's own token."""
    for a, g in itertools.product((0.0, 0.3, 0.6, 0.8, 0.95), range(0, 7)):
        mean = 0.0
        for pattern in itertools.product((True, False), repeat=g):
            p = math.prod(a if ok else 1 - a for ok in pattern)
            run = next((i for i, ok in enumerate(pattern) if not ok), g)
            mean += p * (run + 1)
        assert st_.expected_tokens_per_step(acceptance_rate=a, draft_tokens=g) == \
            pytest.approx(mean)
    assert st_.expected_tokens_per_step(acceptance_rate=1, draft_tokens=5) == 6


def test_source_leviathan_corollary_3_9() -> None:
    """Leviathan et al. 2023, Corollary 3.9: "If a > c, there exists g with which we'll
    get an improvement, and the improvement factor will be at least (1 + a)/(1 + c)."
    And none pays when a <= c: every draft length is then no faster than plain decoding."""
    for a, c in itertools.product((0.1, 0.3, 0.5, 0.7, 0.9), (0.0, 0.05, 0.2, 0.5, 0.8)):
        best = st_.best_draft_length(acceptance_rate=a, draft_cost=c)
        one = st_.speculative_speedup(acceptance_rate=a, draft_tokens=1, draft_cost=c)
        assert one == pytest.approx((1 + a) / (1 + c))
        if a > c:
            assert best >= 1
            assert st_.speculative_speedup(acceptance_rate=a, draft_tokens=best,
                                           draft_cost=c) >= one - 1e-12 > 1
        else:
            assert best == 0


def test_source_vllm_token_budget_trades_inter_token_latency_for_ttft() -> None:
    """vLLM documentation, "Optimization and Tuning", Chunked Prefill (docs/configuration/
    optimization.md, vllm-project/vllm): "Smaller values (e.g., 2048) achieve better
    inter-token latency (ITL) because there are fewer prefills slowing down decodes. Higher
    values achieve better time to first token (TTFT) ... If max_num_batched_tokens is the
    same as max_model_len, that's almost the equivalent to the V0 default scheduling
    policy." Llama-3-8B on an H100, 32 conversations decoding at 8,192 tokens, an
    8,192-token prompt arriving: the longest gap grows and the newcomer's TTFT falls as
    the budget grows, and a budget that holds the whole prompt gives the unchunked gap to
    within one decode step."""
    budgets = (512, 1024, 2048, 4096, 8192)
    runs = [st_.chunked_prefill(LLAMA, token_budget=b, **CHUNK) for b in budgets]
    gaps, ttfts = [r.gap_chunked for r in runs], [r.ttft_chunked for r in runs]
    assert gaps == sorted(gaps) and gaps[0] < gaps[-1]
    assert ttfts == sorted(ttfts, reverse=True) and ttfts[-1] < ttfts[0]
    whole = st_.chunked_prefill(LLAMA, token_budget=8192 + 32, **CHUNK)
    assert whole.steps == 1
    assert abs(whole.gap_chunked - whole.gap_unchunked) <= whole.decode_step


def test_source_speculation_pays_at_batch_1_and_costs_past_the_ridge() -> None:
    """Liu et al. 2024 (arXiv 2406.14066), section 1: speculative decoding "can reduce
    latency at low request rates but increase it at high request rates" because the
    verification's extra tokens are free only while decode is memory-bound. Llama-3-8B on
    an H100 with a draft of cost 0.05: at batch 1 the speed-up is Leviathan's; at batch 512
    (past the ridge of 295) the step that checks 5 tokens per sequence is compute-bound and
    speculation slows decoding down."""
    n = param_count(LLAMA)
    step = {"n_params": n, "weight_bytes": 2 * n, "kv_bytes_per_sequence": 0, **GPU}
    spec = {"acceptance_rate": 0.8, "draft_tokens": 4, "draft_cost": 0.05}
    alone = st_.speculative_speedup_at_batch(batch=1, **spec, **step)
    assert alone == pytest.approx(st_.speculative_speedup(**spec))
    assert st_.speculative_speedup_at_batch(batch=512, **spec, **step) < 1


# ---------------------------------------------------------------------------------------
# Prefix caching


def test_prefix_cache_reduces_to_the_plain_prefill_and_saves_the_cached_share() -> None:
    for name in ("llama-3-8b", "gemma-2-9b", "mixtral-8x7b", "deepseek-v3"):
        cfg = preset(name)
        assert st_.prefill_flops_with_prefix(cfg, 3000, cached_tokens=0, batch=2) == \
            pytest.approx(inference.model_prefill_flops(cfg, 3000, batch=2))
        assert st_.prefill_time_with_prefix(cfg, 3000, cached_tokens=0, **GPU) == \
            pytest.approx(inference.model_prefill_time(cfg, 3000, **GPU))
        assert st_.prefill_flops_with_prefix(cfg, 3000, cached_tokens=1000) == \
            pytest.approx(inference.model_prefill_flops(cfg, 3000) * 2 / 3)


def test_a_full_hit_costs_about_one_decode_step() -> None:
    """All but the last token cached: the weights and the cached keys and values are read
    once for one token, as a decode step at context T - 1 reads them."""
    saving = st_.prefix_cache_saving(LLAMA, 8192, hit_rate=1.0, **GPU)
    assert saving.cached_tokens == 8191
    step = inference.model_decode_speed(LLAMA, batch=1, context=8191, **GPU).step_time
    assert saving.ttft == pytest.approx(step, rel=1e-3)
    assert saving.ttft_saved == pytest.approx(saving.ttft_without - saving.ttft)


def test_a_sparse_models_full_hit_reads_the_top_k_as_a_decode_step_does() -> None:
    """DeepSeek-V3.2, 131,071 of 131,072 tokens cached: the last token's indexer reads all
    131,071 indexer keys (132 bytes) and its attention the latents of the 2,048 it picks
    (1,152 bytes in BF16), 61 x (2,048 x 1,152 + 131,071 x 132) = 1,199,300,748 bytes, not
    the whole 10.27 GB cache; the time is a decode step's at that context. More new tokens
    pick more: 10 of them at most 20,480 latents, and 32,768 new tokens the whole cache."""
    from pathlib import Path

    from gpulesson.transformer import from_hf_config
    hf = Path(__file__).resolve().parents[1] / "data" / "hf_configs"
    v32 = from_hf_config(hf / "deepseek_v32__DeepSeek-V3.2.json")
    saving = st_.prefix_cache_saving(v32, 131072, hit_rate=1.0, **GPU)
    assert saving.cached_tokens == 131071
    read = (inference.decode_weight_bytes(v32, batch=1)
            + 61 * (2048 * 1152 + 131071 * 132))
    assert saving.ttft == pytest.approx(read / GPU["bandwidth"], rel=1e-12)
    step = inference.model_decode_speed(v32, batch=1, context=131071, **GPU).step_time
    assert saving.ttft == pytest.approx(step, rel=1e-3)
    kv = inference.decode_kv_read_bytes
    assert kv(v32, context=98304, new_tokens=10) == 61 * (20480 * 1152 + 98304 * 132)
    assert kv(v32, context=98304, new_tokens=32768) == inference.kv_cache_bytes(
        v32, seq_len=98304)
    assert kv(LLAMA, context=8191, new_tokens=100) == inference.kv_cache_bytes(
        LLAMA, seq_len=8191)  # dense: the whole cache, however many new tokens
    with pytest.raises(ValueError, match="new_tokens"):
        kv(v32, context=10, new_tokens=0)


def test_prefix_cache_refuses_a_cache_as_long_as_the_prompt() -> None:
    with pytest.raises(ValueError, match=r"cached_tokens must be between 0 and "
                                         r"prompt_tokens - 1 \(99\).*got 100"):
        st_.prefill_flops_with_prefix(LLAMA, 100, cached_tokens=100)
    with pytest.raises(ValueError, match="hit_rate must be a number in"):
        st_.prefix_cache_saving(LLAMA, 100, hit_rate=1.5, **GPU)


@settings(max_examples=40 * FUZZ_DEPTH, deadline=None)
@given(st.floats(0, 1), st.floats(0, 1), st.integers(2, 40_000))
def test_more_hits_never_cost_more_flops(h1: float, h2: float, tokens: int) -> None:
    """More cached tokens, fewer FLOPs; and a compute-bound prompt (above twice the ridge
    point) is always faster with all of it cached than with none. A memory-bound prompt of
    a few tokens may gain nothing: its time is the weight read, and the cached keys and
    values add a little reading."""
    low, high = sorted((h1, h2))
    a = st_.prefix_cache_saving(LLAMA, tokens, hit_rate=low, **GPU)
    b = st_.prefix_cache_saving(LLAMA, tokens, hit_rate=high, **GPU)
    assert b.flops <= a.flops
    if tokens > 2 * H100.ridge_point("bf16"):
        full = st_.prefix_cache_saving(LLAMA, tokens, hit_rate=1.0, **GPU)
        assert full.ttft < full.ttft_without


@pytest.mark.parametrize("name", ["llama-3-8b", "llama-2-7b", "mistral-7b", "gemma-2-9b"])
def test_a_shared_prefix_is_stored_once(name: str) -> None:
    """Nothing shared: max_concurrent_sequences. Shared: the count is the largest batch
    whose weights, prefix (stored once), own tokens and overhead fit, and it never falls
    as more is shared. Mistral-7B's window of 4,096 holds only a conversation's own tokens
    once they fill it, so sharing the first half of 8,192 tokens saves nothing there."""
    from gpulesson import memory

    cfg = preset(name)
    mem = H100.memory_bytes
    counts = [st_.conversations_with_shared_prefix(cfg, context=8192, shared_tokens=p,
                                                   gpu_memory=mem)
              for p in (0, 1, 1024, 4096, 6144, 8191)]
    assert counts[0] == inference.max_concurrent_sequences(cfg, context=8192, gpu_memory=mem,
                                                           overhead=2e9)
    assert counts == sorted(counts)
    p, b = 6144, counts[4]
    own = inference.kv_cache_bytes(cfg, seq_len=8192 - p)
    prefix = inference.kv_cache_bytes(cfg, seq_len=8192) - own

    def need(batch: int) -> float:
        return memory.inference_memory(param_count(cfg), kv_cache_bytes=prefix + batch * own,
                                       overhead_bytes=2e9).total

    assert need(b) <= mem < need(b + 1)
    if name == "mistral-7b":
        assert counts[3] == counts[0]
    else:
        assert counts[3] > counts[0]


def test_shared_prefix_refuses_a_prefix_as_long_as_the_context() -> None:
    with pytest.raises(ValueError, match=r"shared_tokens must be between 0 and context - 1 "
                                         r"\(8191\), got 8192"):
        st_.conversations_with_shared_prefix(LLAMA, context=8192, shared_tokens=8192,
                                             gpu_memory=80e9)


# ---------------------------------------------------------------------------------------
# Chunked prefill

CHUNK = {"prompt_tokens": 8192, "decode_batch": 32, "context": 8192, **GPU}


def test_chunking_bounds_the_gap_by_one_hybrid_step() -> None:
    """Unchunked, a decoding conversation waits a decode step and the whole prefill; with a
    budget, one step holding its chunk. A budget larger than the prompt puts the whole
    prompt in one hybrid step."""
    plain = inference.model_prefill_time(LLAMA, 8192, **GPU)
    step = inference.model_decode_speed(LLAMA, batch=32, context=8192, **GPU).step_time
    for budget in (256, 512, 2048, 8192):
        r = st_.chunked_prefill(LLAMA, token_budget=budget, **CHUNK)
        assert r.decode_step == pytest.approx(step)
        assert r.gap_unchunked == pytest.approx(step + plain)
        assert r.ttft_unchunked == pytest.approx(plain)
        assert r.chunk == budget - 32 and r.steps == math.ceil(8192 / (budget - 32))
        assert step <= r.gap_chunked < r.gap_unchunked
        assert r.ttft_chunked >= plain * (1 - 1e-12)
    whole = st_.chunked_prefill(LLAMA, token_budget=9000, **CHUNK)
    assert (whole.chunk, whole.steps) == (8192, 1)
    assert whole.ttft_chunked == whole.gap_chunked


def test_a_chunk_under_the_ridge_rides_free_on_a_memory_bound_step() -> None:
    """A hybrid step stays memory-bound while its tokens are fewer than about the ridge
    point (295 on an H100 in BF16): a 256-token budget adds no time to the decode step."""
    r = st_.chunked_prefill(LLAMA, token_budget=256, **CHUNK)
    assert r.gap_chunked == pytest.approx(r.decode_step)


def test_chunked_prefill_refuses_a_budget_without_room_for_the_prompt() -> None:
    with pytest.raises(ValueError, match=r"token_budget must be larger than decode_batch "
                                         r"\(32\).*got 32"):
        st_.chunked_prefill(LLAMA, token_budget=32, **CHUNK)


# ---------------------------------------------------------------------------------------
# Speculative decoding


def test_speculation_validates_its_inputs() -> None:
    with pytest.raises(ValueError, match="acceptance_rate must be a number in"):
        st_.expected_tokens_per_step(acceptance_rate=-0.1, draft_tokens=3)
    with pytest.raises(ValueError, match="draft_tokens"):
        st_.speculative_speedup(acceptance_rate=0.5, draft_tokens=-1, draft_cost=0.1)
    with pytest.raises(ValueError, match="max_draft_tokens must be at most 1024"):
        st_.best_draft_length(acceptance_rate=0.5, draft_cost=0.1, max_draft_tokens=5000)


@settings(max_examples=60 * FUZZ_DEPTH, deadline=None)
@given(st.floats(0, 1), st.integers(0, 12), st.floats(0, 1), st.integers(1, 4096))
def test_speculation_never_beats_its_memory_bound_speedup(a: float, g: int, c: float,
                                                          batch: int) -> None:
    n = param_count(LLAMA)
    step = {"n_params": n, "weight_bytes": 2 * n, "kv_bytes_per_sequence": 1e6, **GPU}
    at_batch = st_.speculative_speedup_at_batch(acceptance_rate=a, draft_tokens=g,
                                                draft_cost=c, batch=batch, **step)
    assert at_batch <= st_.speculative_speedup(acceptance_rate=a, draft_tokens=g,
                                               draft_cost=c) * (1 + 1e-12)


def test_speculative_verification_may_read_more_of_the_cache() -> None:
    """verify_kv_bytes_per_sequence: the verification step's own KV read (a sparse model's
    g + 1 tokens each read their top-k). Memory-bound at batch 1 with 16 GB of weights and
    1 GB of cache a plain step, 2 GB a verification: t = 17 GB / bw, t_v = 18 GB / bw,
    speed-up E x 17 / (18 + 4 x 0.05 x 17). By default the plain step's read."""
    n = 8e9
    step = {"n_params": n, "weight_bytes": 2 * n, "kv_bytes_per_sequence": 1e9, **GPU}
    spec = {"acceptance_rate": 0.8, "draft_tokens": 4, "draft_cost": 0.05}
    tokens = st_.expected_tokens_per_step(acceptance_rate=0.8, draft_tokens=4)
    more = st_.speculative_speedup_at_batch(batch=1, verify_kv_bytes_per_sequence=2e9,
                                            **spec, **step)
    assert more == pytest.approx(tokens * 17 / (18 + 0.2 * 17), rel=1e-12)
    assert st_.speculative_speedup_at_batch(batch=1, **spec, **step) == pytest.approx(
        st_.speculative_speedup_at_batch(batch=1, verify_kv_bytes_per_sequence=1e9,
                                         **spec, **step), rel=0)
    with pytest.raises(ValueError, match="verify_kv_bytes_per_sequence"):
        st_.speculative_speedup_at_batch(batch=1, verify_kv_bytes_per_sequence=-1,
                                         **spec, **step)


def test_a_sparse_models_prefill_time_runs_its_picked_keys_absorbed() -> None:
    """DeepSeek-V3.2 prefills a prompt past its 2,048-key top-k with FlashMLA's sparse
    MQA-mode kernel (vLLM's sparse MLA backends), latent attention absorbed: 2 x 128 x
    (2 x 512 + 64) = 278,528 FLOPs a picked key, not the up-projected 81,920 of the model
    count. By hand, a 32,768-token prompt on an H100, compute-bound: 32,768 x (2 N_active
    + 61 x (278,528 x 2,048 + 16,512 x 32,768)) FLOPs at the BF16 peak; the model FLOPs
    (model_prefill_flops, prefill_flops_with_prefix) keep 81,920. The prefix-cache and
    chunked-prefill times follow (at P = 0 the model_prefill_time), a prompt within the
    top-k (2,048) runs the up-projected kernel, and Llama is unchanged."""
    from pathlib import Path

    from gpulesson.transformer import from_hf_config
    hf = Path(__file__).resolve().parents[1] / "data" / "hf_configs"
    v32 = from_hf_config(hf / "deepseek_v32__DeepSeek-V3.2.json")
    t, n2 = 32768, 2.0 * active_params(v32)
    run = t * (n2 + 61 * (278_528 * 2048 + 16_512 * t))
    model = t * (n2 + 61 * (81_920 * 2048 + 16_512 * t))
    assert inference.model_prefill_flops(v32, t) == pytest.approx(model, rel=1e-12)
    assert st_.prefill_flops_with_prefix(v32, t, cached_tokens=0) == pytest.approx(
        model, rel=1e-12)
    assert inference.model_prefill_time(v32, t, **GPU) == pytest.approx(
        run / GPU["peak_flops"], rel=1e-12)
    assert st_.prefill_time_with_prefix(v32, t, cached_tokens=0, **GPU) == pytest.approx(
        run / GPU["peak_flops"], rel=1e-12)
    assert st_.prefill_time_with_prefix(v32, t, cached_tokens=t // 2, **GPU) == \
        pytest.approx(run / 2 / GPU["peak_flops"], rel=1e-12)
    chunked = st_.chunked_prefill(v32, prompt_tokens=t, token_budget=t + 1, decode_batch=1,
                                  context=t, **GPU)
    assert chunked.ttft_unchunked == pytest.approx(run / GPU["peak_flops"], rel=1e-12)
    # 16 prompts within the top-k (compute-bound): up-projected, the model count
    short = 16 * 2048 * (n2 + 61 * (81_920 + 16_512) * 2048)
    assert inference.model_prefill_time(v32, 2048, batch=16, **GPU) == pytest.approx(
        short / GPU["peak_flops"], rel=1e-12)
    assert inference.model_prefill_time(LLAMA, 8192, **GPU) == pytest.approx(
        inference.model_prefill_flops(LLAMA, 8192) / GPU["peak_flops"], rel=1e-12)


@pytest.mark.parametrize("model", ["llama-3-8b", "deepseek-v3", "deepseek-v3.2",
                                   "llama-4-maverick"])
def test_chunked_prefills_decode_step_is_lesson_6s_decode_step(model: str) -> None:
    """Without a prompt in it, the chunked-prefill calculator's decode step is the step of
    lesson 6's decode model (inference.model_decode_speed) for the same batch, context and
    GPU: latent attention counted absorbed (DeepSeek-V3: 278,528 FLOPs a key, where the
    model count has 81,920) and a chunked layer's current chunk, as the engines decode.
    Batch 512 at 131,072 tokens with FP8 weights and cache on an H100's BF16 peak and
    bandwidth: DeepSeek-V3's step is bound by its absorbed attention there."""
    cfg = preset(model)
    kw = dict(peak_flops=989.4e12, bandwidth=3.35e12, bytes_per_param=1,
              kv_bytes_per_element=1)
    chunked = st_.chunked_prefill(cfg, prompt_tokens=4096, token_budget=1024, decode_batch=512,
                                  context=131_072, **kw)
    alone = inference.model_decode_speed(cfg, batch=512, context=131_072, **kw)
    assert chunked.decode_step == pytest.approx(alone.step_time, rel=1e-12)
