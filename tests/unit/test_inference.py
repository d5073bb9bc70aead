"""gpulesson.inference: KV-cache sizes, prefill and decode, and what fits in a GPU."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpulesson import inference
from gpulesson.transformer import TransformerConfig, active_params, preset

from .conftest import FUZZ_DEPTH
from .strategies import bytes_per, configs, finite_nonneg, params, rates

KIB = 1024


# ---------------------------------------------------------------------------------------
# Published figures


@pytest.mark.parametrize(("name", "kib_per_token"),
                         [("llama-2-7b", 512), ("llama-3-8b", 128), ("mistral-7b", 128),
                          ("llama-2-70b", 320)])
def test_source_kv_cache_per_token(name: str, kib_per_token: int) -> None:
    """vLLM-style KV sizes from the models' configs (2 x layers x kv_heads x head_dim x 2
    bytes): Llama-2-7B (MHA) 512 KiB/token; Llama-3-8B and Mistral-7B (8 KV heads) 128 KiB;
    Llama-2-70B (80 layers, 8 KV heads) 320 KiB."""
    assert inference.kv_cache_bytes_per_token(preset(name)) == kib_per_token * KIB
    assert inference.kv_cache_bytes(preset(name), seq_len=1) == kib_per_token * KIB


def test_source_vllm_paper_opt13b_kv_per_token() -> None:
    """Kwon et al. 2023 (vLLM / PagedAttention), section 3: the KV cache of one token of
    OPT-13B takes 800 KB = 2 (K and V) x 5120 (hidden) x 40 (layers) x 2 bytes."""
    opt13b = TransformerConfig(hidden=5120, layers=40, heads=40, vocab=50272,
                               max_positions=2048)
    assert inference.kv_cache_bytes_per_token(opt13b) == 800 * KIB


def test_source_nvidia_blog_llama2_7b_kv_4096() -> None:
    """NVIDIA Technical Blog, 'Mastering LLM Techniques: Inference Optimization' (2023):
    Llama 2 7B, batch 1, 4096 tokens, 16-bit: 1 x 4096 x 2 x 32 x 4096 x 2 bytes ~ 2 GB."""
    value = inference.kv_cache_bytes(preset("llama-2-7b"), seq_len=4096, batch=1)
    assert value == 4096 * 2 * 32 * 4096 * 2
    assert value / 2**30 == 2.0


def test_source_gqa_reduction_factor() -> None:
    """Ainslie et al. 2023 (GQA): grouping h query heads over g KV heads shrinks the KV
    cache by h/g. Llama-2-70B: 64 heads over 8 KV heads, 8x smaller than MHA."""
    cfg = preset("llama-2-70b")
    mha = TransformerConfig(hidden=cfg.hidden, layers=cfg.layers, heads=cfg.heads,
                            vocab=cfg.vocab, ffn=cfg.ffn)
    assert inference.kv_cache_bytes(mha, seq_len=4096) == 8 * inference.kv_cache_bytes(
        cfg, seq_len=4096)


# ---------------------------------------------------------------------------------------
# Validation


def test_prefill_refuses_a_partial_attention_shape() -> None:
    with pytest.raises(ValueError, match="give all of layers, heads and head_dim"):
        inference.prefill_flops(7e9, 100, heads=32)


def test_kv_cache_needs_a_config() -> None:
    with pytest.raises(TypeError, match="TransformerConfig"):
        inference.kv_cache_bytes("llama-2-7b", seq_len=10)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------
# Properties


@given(cfg=configs(), seq=st.integers(1, 10**6), batch=st.integers(1, 1024), b=bytes_per)
def test_kv_cache_is_exact_and_gqa_aware(cfg: TransformerConfig, seq: int, batch: int,
                                         b: float) -> None:
    kv = inference.kv_cache_bytes(cfg, seq_len=seq, batch=batch, bytes_per_element=b)
    assert isinstance(kv, int) and kv > 0
    assert kv == math.ceil(2 * cfg.layers * cfg.kv_heads * cfg.head_dim * seq * batch * b)


@given(n=params, tokens=st.integers(1, 10**6), peak=rates, bw=rates, b=st.integers(1, 4096))
@settings(max_examples=50 * FUZZ_DEPTH)
def test_inference_outputs_finite(n: float, tokens: int, peak: float, bw: float,
                                  b: int) -> None:
    assert inference.prefill_flops(n, tokens) == 2 * n * tokens
    w = 2 * n
    assert finite_nonneg(inference.prefill_time(n_params=n, tokens=tokens, peak_flops=peak,
                                                bandwidth=bw, weight_bytes=w))
    one = inference.decode_ceiling_tokens_per_second(weight_bytes=w, bandwidth=bw, batch=1,
                                                     kv_bytes_per_sequence=1e6)
    many = inference.decode_ceiling_tokens_per_second(weight_bytes=w, bandwidth=bw, batch=b,
                                                      kv_bytes_per_sequence=1e6)
    assert finite_nonneg(one) and many >= one * (1 - 1e-12)


# ---------------------------------------------------------------------------------------
# Behaviour


def test_max_concurrent_sequences_by_hand() -> None:
    """Llama 3 8B (config.json: 32 layers, 8 KV heads of 128) in BF16 on an 80 GB H100 with
    2 GB of overhead: 8,030,261,248 x 2 bytes of weights, 2 x 32 x 8 x 128 x 8,192 x 2 =
    1,073,741,824 bytes of cache per 8,192-token conversation, and
    (80e9 - 16,060,522,496 - 2e9) / 1,073,741,824 = 57.7, so 57 conversations fit; an FP8
    cache halves the per-conversation bytes: 115. With OPT-13B's 800 KB per token (vLLM
    paper, section 3) a 2,048-token request holds 1.6 GB, and on an A100 40GB beside 25.7 GB
    of FP16 weights and 2 GB of overhead only 7 such requests fit (12.3 GB / 1.68 GB)."""
    cfg = preset("llama-3-8b")
    per_conversation = 2 * 32 * 8 * 128 * 8192 * 2
    assert per_conversation == 1_073_741_824
    by_hand = int((80e9 - 8_030_261_248 * 2 - 2e9) // per_conversation)
    assert by_hand == 57
    assert inference.max_concurrent_sequences(cfg, context=8192, gpu_memory=80e9) == by_hand
    assert inference.max_concurrent_sequences(cfg, context=8192, gpu_memory=80e9,
                                              kv_dtype="fp8") == 115
    opt13b = TransformerConfig(hidden=5120, layers=40, heads=40, vocab=50272,
                               max_positions=2048)
    assert inference.max_concurrent_sequences(opt13b, context=2048, gpu_memory=40e9) == 7
    assert inference.max_concurrent_sequences(cfg, context=8192, gpu_memory=10e9) == 0


def test_decode_speed_total_and_per_user() -> None:
    """One decode step of 16 GB of weights plus 8 caches of 1 GB at 3.2 TB/s takes
    24 GB / 3.2e12 = 7.5 ms (memory-bound: 2 x 8e9 x 8 FLOPs at 1e15 take 0.128 ms), so
    8 / 7.5 ms = 1,066.7 tokens/s in all and 133.3 for each user. Without caches, at batch
    400 the FLOPs win: 2 x 8e9 x 400 / 1e15 = 6.4 ms against 16e9 / 3.2e12 = 5 ms, so each
    user gets 1 / 6.4 ms = 156.25 tokens/s."""
    s = inference.decode_speed(n_params=8e9, weight_bytes=16e9, batch=8,
                               kv_bytes_per_sequence=1e9, peak_flops=1e15, bandwidth=3.2e12)
    assert s.step_time == pytest.approx(7.5e-3)
    assert s.tokens_per_second == pytest.approx(8 / 7.5e-3)
    assert s.per_sequence == pytest.approx(1 / 7.5e-3)
    c = inference.decode_speed(n_params=8e9, weight_bytes=16e9, batch=400,
                               kv_bytes_per_sequence=0, peak_flops=1e15, bandwidth=3.2e12)
    assert c.step_time == pytest.approx(6.4e-3) and c.per_sequence == pytest.approx(156.25)
    with pytest.raises(ValueError, match="batch"):
        inference.decode_speed(n_params=8e9, weight_bytes=16e9, batch=0,
                               kv_bytes_per_sequence=0, peak_flops=1e15, bandwidth=3.2e12)


# ---------------------------------------------------------------------------------------
# Latent attention, sliding windows, mixture-of-experts decode


def test_source_deepseek_latent_kv_cache_is_gqa_with_2_25_groups() -> None:
    """DeepSeek-AI 2024a (DeepSeek-V2), Table 1: MLA caches (d_c + d_R) x l values per
    token, about 4.5 d_h l with d_c = 4 d_h and d_R = d_h / 2: the cache of GQA with only
    2.25 groups. DeepSeek-V3 (d_h = 128, 61 layers) in BF16: 70,272 bytes per token."""
    ds = preset("deepseek-v3")
    per_token = inference.kv_cache_bytes_per_token(ds, bytes_per_element=1)
    assert per_token == 4.5 * 128 * 61 == 2 * 2.25 * 128 * 61
    assert inference.kv_cache_bytes(ds, seq_len=1000, batch=3) == 3 * 1000 * 2 * per_token
    mha = 2 * 61 * 128 * 128  # what 128 heads of keys and values of 128 would keep
    assert round(mha / per_token, 1) == 56.9


def test_source_mistral_rolling_buffer_cuts_the_cache_8x_at_32k() -> None:
    """Jiang et al. 2023 (Mistral 7B), section 2: with a 4,096-token window "on a sequence
    length of 32k tokens, this reduces the cache memory usage by 8x"."""
    from gpulesson.transformer import from_hf_config

    from .test_transformer import HF_DIR

    cfg = from_hf_config(HF_DIR / "mistral__Mistral-7B-v0.1.json")
    full = inference.kv_cache_bytes(cfg, seq_len=32768, cap_windows=False)
    assert full / inference.kv_cache_bytes(cfg, seq_len=32768) == 8
    assert full == inference.kv_cache_bytes(preset("mistral-7b"), seq_len=32768,
                                            cap_windows=False)
    assert inference.kv_cache_bytes(cfg, seq_len=32768) == inference.kv_cache_bytes(
        preset("mistral-7b"), seq_len=32768)
    assert inference.model_attention_crossover_tokens(preset("mistral-7b")) is None


def test_hybrid_windows_cap_only_the_local_layers() -> None:
    """Gemma-2-9B: half its 42 layers slide a 4,096-token window (Gemma Team 2024);
    gpt-oss-20b: 12 of 24 layers a 128-token window (OpenAI 2025)."""
    gemma = preset("gemma-2-9b")
    per_layer_token = 2 * 8 * 256 * 2
    assert inference.kv_cache_bytes(gemma, seq_len=8192) == per_layer_token * (
        21 * 8192 + 21 * 4096)
    oss = preset("gpt-oss-20b")
    assert inference.kv_cache_bytes(oss, seq_len=131072) == 2 * 8 * 64 * 2 * (
        12 * 131072 + 12 * 128)


@given(e=st.integers(1, 256), data=st.data())
def test_expected_experts_grow_from_k_to_all(e: int, data: st.DataObject) -> None:
    """Uniform routing: one token touches its k experts; more tokens touch more, never
    more than all of them."""
    k = data.draw(st.integers(1, e))
    b = data.draw(st.integers(1, 10_000))
    one = inference.expected_experts_used(experts=e, experts_per_token=k, tokens=1)
    many = inference.expected_experts_used(experts=e, experts_per_token=k, tokens=b)
    assert one == pytest.approx(k)
    assert k - 1e-9 <= many <= e + 1e-9
    assert inference.expected_experts_used(experts=e, experts_per_token=k,
                                           tokens=b + 1) >= many - 1e-9


def test_source_mixtral_decodes_like_a_13b_model_at_batch_1() -> None:
    """Mistral AI (Mixtral of experts, 2023): it "processes input and generates output at
    the same speed and for the same cost as a 12.9B model": at batch 1 a decode step reads
    the active parameters; at batch 64 nearly all 46.7B (uniform routing)."""
    from gpulesson.transformer import active_params, param_count

    cfg = preset("mixtral-8x7b")
    assert inference.decode_weight_bytes(cfg, batch=1) == 2 * active_params(cfg)
    assert inference.decode_weight_bytes(cfg, batch=64) / (2 * param_count(cfg)) > 0.9999
    dense = preset("llama-3-8b")
    assert inference.decode_weight_bytes(dense, batch=64) == 2 * param_count(dense)
    h100 = {"peak_flops": 989.4e12, "bandwidth": 3.35e12}
    alone = inference.model_decode_speed(cfg, batch=1, context=1, **h100)
    assert round(alone.tokens_per_second) == round(3.35e12 / (2 * active_params(cfg)
                                                              + 2 * 32 * 1024 * 2))


def test_model_prefill_and_decode_reduce_to_the_shape_formulas_when_dense() -> None:
    from gpulesson.transformer import param_count

    cfg = preset("llama-2-7b")
    n, shape = param_count(cfg), {"layers": 32, "heads": 32, "head_dim": 128}
    assert inference.model_prefill_flops(cfg, 3000, batch=2) == inference.prefill_flops(
        n, 3000, batch=2, **shape)
    assert inference.model_decode_flops(cfg, 50, context_len=700) == inference.decode_flops(
        n, 50, context_len=700, **shape)
    # a window caps the keys a decoding token attends to
    gemma = preset("gemma-2-9b")
    capped = inference.model_decode_flops(gemma, 10, context_len=9000)
    per_key = 2 * 16 * 512
    attention = capped - 2 * 9_241_705_984 * 10
    assert attention == per_key * (21 * sum(9000 + i for i in range(1, 11)) + 21 * 10 * 4096)


def test_expected_experts_validates() -> None:
    with pytest.raises(ValueError, match=r"experts_per_token must be between 1 and experts "
                                         r"\(8\), got 9"):
        inference.expected_experts_used(experts=8, experts_per_token=9, tokens=4)


def test_source_mha_equivalent_of_latent_attention() -> None:
    """DeepSeek-AI 2024a (DeepSeek-V2), Table 1 compares MLA's (d_c + d_R) l cached values
    with multi-head attention's 2 n_h d_h l: for DeepSeek-V3's 128 heads of d_h = 128 the
    multi-head cache is 56.9 times larger. A GQA model's equivalent has kv_heads = heads."""
    ds = preset("deepseek-v3")
    mha = inference.multi_head_equivalent(ds)
    assert inference.kv_cache_bytes_per_token(mha, bytes_per_element=1) == 2 * 61 * 128 * 128
    llama = inference.multi_head_equivalent(preset("llama-3-8b"))
    assert (llama.kv_heads, llama.heads) == (32, 32)


def test_model_prefill_time_and_compute_bound_batch_reduce_to_the_dense_formulas() -> None:
    """A dense model's prefill reads every weight once and its decode turns compute-bound at
    peak x bytes / (2 x bandwidth): H100 SXM, BF16, 295 sequences (Pope et al. 2022)."""
    from gpulesson.transformer import param_count

    cfg = preset("llama-2-7b")
    n = param_count(cfg)
    h100 = {"peak_flops": 989.4e12, "bandwidth": 3.35e12}
    for tokens in (16, 300, 8192):
        assert inference.model_prefill_time(cfg, tokens, **h100) == inference.prefill_time(
            n_params=n, tokens=tokens, weight_bytes=2 * n, layers=32, heads=32,
            head_dim=128, **h100)
    assert inference.model_compute_bound_batch(cfg, **h100) == pytest.approx(295.3, abs=0.05)


def test_source_mixtral_turns_compute_bound_later_than_a_dense_model() -> None:
    """Mixtral 8x7B computes with 12.9B parameters per token but a large batch reads all
    46.7B (Jiang et al. 2024; uniform routing): on an H100 SXM decode turns compute-bound at
    the first batch whose 2 N_active B FLOPs outlast the weights it reads, about 46.7/12.9
    times the dense 295."""
    from gpulesson.transformer import active_params, param_count

    cfg = preset("mixtral-8x7b")
    h100 = {"peak_flops": 989.4e12, "bandwidth": 3.35e12}
    turn = inference.model_compute_bound_batch(cfg, **h100)
    assert turn == pytest.approx(295.3 * param_count(cfg) / active_params(cfg), rel=0.01)

    def bound(batch: int) -> bool:
        return (2 * active_params(cfg) * batch / 989.4e12
                >= inference.decode_weight_bytes(cfg, batch=batch) / 3.35e12)

    assert bound(int(turn)) and not bound(int(turn) - 1)


def test_attention_crossover_follows_windows_and_latent_attention() -> None:
    """Prefill's attention equals its weight FLOPs at T = N / (2 L H Q) for a dense model
    (Llama-2-7B: 25,705 tokens); DeepSeek-V3's heads score 192-wide keys and mix 128-wide
    values, so T = N_active / (L H (192 + 128)); Gemma-2-9B's local layers stop at 4,096
    keys, so only its 21 global layers carry the rest."""
    from gpulesson.transformer import active_params, param_count

    llama = preset("llama-2-7b")
    assert inference.model_attention_crossover_tokens(llama) == (
        inference.attention_crossover_tokens(param_count(llama), layers=32, heads=32,
                                             head_dim=128))
    ds = preset("deepseek-v3")
    assert inference.model_attention_crossover_tokens(ds) == pytest.approx(
        active_params(ds) / (61 * 128 * 320))
    gemma = preset("gemma-2-9b")
    per_key = 2 * 16 * 512
    t = inference.model_attention_crossover_tokens(gemma)
    assert per_key * (21 * t + 21 * 4096) == pytest.approx(2 * param_count(gemma))


def test_decode_step_counts_the_attention_flops_it_is_given() -> None:
    """max((2N + A) B / peak, bytes / bandwidth): attention FLOPs only matter once the step
    is compute-bound."""
    step = {"n_params": 1e9, "weight_bytes": 2e9, "kv_bytes_per_sequence": 0,
            "peak_flops": 1e15, "bandwidth": 1e12}
    assert inference.decode_step_time(batch=1, attention_flops_per_sequence=1e9,
                                      **step) == 2e-3
    assert inference.decode_step_time(batch=1000, attention_flops_per_sequence=1e9,
                                      **step) == pytest.approx(3e-3)


def test_kv_per_gpu_replicates_the_latent_and_splits_heads() -> None:
    """Latent attention cannot be split by head (Ray Serve LLM docs, data parallel
    attention): DeepSeek-V3 keeps 61 x 576 x 2 bytes per token on each of 8 GPUs. Llama 3
    70B's 8 KV heads split one per GPU at tp 8, and are copied at tp 16."""
    ds = preset("deepseek-v3")
    assert inference.kv_cache_bytes_per_token_per_gpu(ds, tp=8) == 61 * 576 * 2
    llama = preset("llama-3-70b")
    whole = inference.kv_cache_bytes_per_token(llama)
    assert inference.kv_cache_bytes_per_token_per_gpu(llama, tp=8) == whole / 8
    assert inference.kv_cache_bytes_per_token_per_gpu(llama, tp=16) == whole / 8


def test_source_deepseek_v3_experts_are_memory_bound_within_256_tokens() -> None:
    """DeepSeek-AI 2024 (DeepSeek-V3 technical report, arXiv 2412.19437, section 3.4.2,
    decoding): "the batch size per expert is relatively small (usually within 256 tokens),
    and the bottleneck is memory access rather than computation". On an H800 (the H100
    SXM's 1,979 TFLOP/s of dense FP8 and 3.35 TB/s; NVIDIA H800 datasheet) with 1-byte FP8
    expert weights, an expert turns compute-bound at 295 tokens: 256 is below it. With 8 of
    256 experts per token, the whole batch must be E/k = 32 times larger, about 9,450."""
    h800 = {"peak_flops": 1978.9e12, "bandwidth": 3.35e12, "bytes_per_param": 1}
    dense = inference.decode_compute_bound_batch(**h800)
    assert 256 < dense < 300
    moe = inference.expert_compute_bound_batch(experts=256, experts_per_token=8, **h800)
    assert moe == pytest.approx(32 * dense)
    assert round(moe, -1) == 9450
    with pytest.raises(ValueError, match=r"experts_per_token must be between 1 and experts "
                                         r"\(8\), got 9"):
        inference.expert_compute_bound_batch(experts=8, experts_per_token=9, **h800)


def test_source_databricks_bandwidth_utilisation_of_a_decode_step() -> None:
    """Databricks, "LLM Inference Performance Engineering: Best Practices" (2023): model
    bandwidth utilisation is (parameter bytes + KV-cache bytes) / TPOT over the peak
    bandwidth; "if a 7B parameter running with 16-bit precision has TPOT equal to 14ms,
    then it's moving 14GB of parameters in 14ms ... If the peak bandwidth of the machine is
    2TB/sec, we are running at an MBU of 50%." The roofline step, which reads the weights
    and the caches at the peak, takes half the measured 14 ms; a batch of 8 with 0.5 GB of
    cache each reads 18 GB and would take 9 ms at the peak."""
    step = {"n_params": 7e9, "weight_bytes": 14e9, "peak_flops": 312e12, "bandwidth": 2e12}
    alone = inference.decode_step_time(batch=1, kv_bytes_per_sequence=0, **step)
    assert alone / 14e-3 == pytest.approx(0.50)
    assert inference.decode_step_time(batch=8, kv_bytes_per_sequence=0.5e9, **step) == \
        pytest.approx(9e-3)


# ---------------------------------------------------------------------------------------
# Hybrid models: a fixed state in the linear-attention layers, KV in the others

def _qwen3_next():
    from pathlib import Path

    from gpulesson import transformer
    path = (Path(__file__).resolve().parents[1] / "data" / "hf_configs"
            / "qwen3_next__Qwen3-Next-80B-A3B-Instruct.json")
    return transformer.from_hf_config(path)


def test_source_qwen3_next_state_plus_kv_of_the_full_attention_layers() -> None:
    """Qwen3-Next-80B-A3B (config: 48 layers, every 4th full attention with 2 KV heads of
    256; Gated DeltaNet with 16 key and 32 value heads of 128, kernel 4). By hand, BF16:
    KV per token 12 x 2 x 2 x 256 x 2 = 24,576 bytes; state per linear layer
    3 x (2 x 2,048 + 4,096) x 2 + 32 x 128 x 128 x 2 = 1,097,728 bytes (vLLM's
    gated_delta_net_state_shape), 36 of them."""
    cfg = _qwen3_next()
    per_token = 12 * 2 * 2 * 256 * 2
    state = 36 * (3 * (2 * 2048 + 4096) * 2 + 32 * 128 * 128 * 2)
    assert inference.kv_cache_bytes_per_token(cfg) == per_token
    assert inference.recurrent_state_bytes(cfg) == state == 39_518_208
    for length in (4096, 131072):
        assert inference.kv_cache_bytes(cfg, seq_len=length) == length * per_token
        total = inference.recurrent_state_bytes(cfg) + inference.kv_cache_bytes(
            cfg, seq_len=length)
        assert total == state + length * per_token
    # 4K tokens: 140.2 MB, the state 28 % of it; 128K tokens: 3.26 GB, the state 1.2 %
    assert round(state / (state + 4096 * per_token), 2) == 0.28
    # a model counted as if every layer attended would hold 4x the KV
    dense = dataclasses.replace(cfg, linear_attention="none", full_attention_interval=0,
                                linear_key_heads=0, linear_value_heads=0,
                                linear_key_head_dim=0, linear_value_head_dim=0,
                                linear_conv_kernel=0)
    assert inference.kv_cache_bytes_per_token(dense) == 4 * per_token
    assert inference.recurrent_state_bytes(dense) == 0


def test_recurrent_state_splits_over_tp_and_takes_an_fp32_ssm_dtype() -> None:
    cfg = _qwen3_next()
    conv, ssm = 3 * 8192 * 2, 32 * 128 * 128 * 2
    assert inference.recurrent_state_bytes(cfg, tp=4) == 36 * (conv + ssm) // 4
    assert inference.recurrent_state_bytes(cfg, ssm_bytes_per_element=4) == \
        36 * (conv + 2 * ssm)
    with pytest.raises(ValueError, match="tp .3. must divide linear_key_heads"):
        inference.recurrent_state_bytes(cfg, tp=3)
    # the state counts in how many users fit: each sequence holds 39.5 MB more
    with_state = inference.max_concurrent_sequences(cfg, context=4096, gpu_memory=200e9)
    kv = inference.kv_cache_bytes(cfg, seq_len=4096)
    assert with_state == int((200e9 - 2 * 79_674_391_296 - 2e9) // (kv + 39_518_208))


# ---------------------------------------------------------------------------------------
# DeepSeek Sparse Attention: the lightning indexer's key cache


def _hf_config(name: str) -> TransformerConfig:
    from pathlib import Path

    from gpulesson import transformer
    return transformer.from_hf_config(
        Path(__file__).resolve().parents[1] / "data" / "hf_configs" / name)


def test_source_deepseek_v32_kv_cache_counts_the_indexer_key() -> None:
    """DeepSeek-V3.2 (61 layers, latent 512 + 64, indexer keys of 128): each layer keeps
    its latent and one indexer key of 128 FP8 values with an FP32 scale per 128
    (deepseek-ai/DeepSeek-V3.2-Exp inference/model.py, Indexer: k_cache float8_e4m3fn and
    k_scale_cache float32 of head_dim // 128; vLLM deepseek_v2.py Indexer: head_dim +
    head_dim // 128 * 4 = 132 uint8). By hand: BF16 61 x (576 x 2 + 132) = 78,324 bytes a
    token; FP8 61 x (576 + 132) = 43,188; copied whole on each of 8 GPUs."""
    v32 = _hf_config("deepseek_v32__DeepSeek-V3.2.json")
    v3 = _hf_config("deepseek_v3__DeepSeek-V3.json")
    assert inference.indexer_key_bytes(v32) == 128 + 4
    assert inference.indexer_key_bytes(v32, bytes_per_element=2) == 256  # no scales
    assert inference.indexer_key_bytes(v3) == 0
    assert inference.kv_cache_bytes_per_token(v32) == 61 * (576 * 2 + 132) == 78_324
    assert inference.kv_cache_bytes_per_token(v32, bytes_per_element=1) == 43_188
    assert inference.kv_cache_bytes_per_token(v32, indexer_bytes_per_element=2) == \
        61 * (576 * 2 + 256)
    assert inference.kv_cache_bytes_per_token_per_gpu(v32, tp=8) == 78_324
    assert inference.kv_cache_bytes(v32, seq_len=1000, batch=3) == 78_324 * 3000
    # the model without its indexer is DeepSeek-V3's cache, unchanged
    assert inference.kv_cache_bytes_per_token(v3) == 61 * 576 * 2 == 70_272
    bare = dataclasses.replace(v32, indexer_heads=0, indexer_head_dim=0,
                               indexer_topk=0)
    assert inference.kv_cache_bytes(bare, seq_len=1000) == 70_272 * 1000


def test_source_glm5_kv_cache_counts_the_indexer_key() -> None:
    """GLM-5.1 (glm_moe_dsa: 78 layers, latent 512 + 64, indexer keys of 128): by hand
    78 x (1,152 + 132) = 100,152 bytes a token in BF16."""
    glm = _hf_config("glm_moe_dsa__GLM-5.1.json")
    assert inference.kv_cache_bytes_per_token(glm) == 78 * (1152 + 132) == 100_152


def test_indexer_key_bytes_refuses_a_bad_width() -> None:
    v32 = _hf_config("deepseek_v32__DeepSeek-V3.2.json")
    with pytest.raises(ValueError, match="bytes_per_element"):
        inference.indexer_key_bytes(v32, bytes_per_element=0)
    with pytest.raises(ValueError, match="indexer_bytes_per_element"):
        inference.kv_cache_bytes_per_token(v32, indexer_bytes_per_element=-1)
    with pytest.raises(ValueError, match="indexer_bytes_per_element"):
        inference.kv_cache_bytes(v32, seq_len=8, indexer_bytes_per_element=0)


def test_source_dsa_decode_reads_top_k_latents_and_every_indexer_key() -> None:
    """DeepSeek Sparse Attention: a decode step's attention reads the latents of the
    index_topk = 2,048 tokens the indexer picks and the indexer keys of all of them.
    By hand, DeepSeek-V3.2 in BF16 (61 layers, latent 1,152 bytes, key 132):
    4,096 tokens, 61 x (2,048 x 1,152 + 4,096 x 132) = 176,898,048 bytes against the
    whole cache's 61 x 4,096 x 1,284 = 320,815,104; 131,072 tokens, 61 x (2,048 x 1,152
    + 131,072 x 132) = 1,199,308,800 against 10,266,083,328 (8.6 times less). GLM-5.1
    (78 layers, the same sizes) at 131,072: 78 x 19,660,800 = 1,533,542,400."""
    v32 = _hf_config("deepseek_v32__DeepSeek-V3.2.json")
    glm = _hf_config("glm_moe_dsa__GLM-5.1.json")
    assert inference.decode_kv_read_bytes(v32, context=4096) == 176_898_048
    assert inference.kv_cache_bytes(v32, seq_len=4096) == 320_815_104
    assert inference.decode_kv_read_bytes(v32, context=131072) == 1_199_308_800
    assert inference.kv_cache_bytes(v32, seq_len=131072) == 10_266_083_328
    assert inference.decode_kv_read_bytes(glm, context=131072) == 1_533_542_400
    # FP8 latent (576 bytes): 61 x (2,048 x 576 + 131,072 x 132)
    assert inference.decode_kv_read_bytes(v32, context=131072, bytes_per_element=1) == \
        61 * (2048 * 576 + 131072 * 132)
    # up to the top-k every latent is read: the whole cache
    for n in (1, 2047, 2048):
        assert inference.decode_kv_read_bytes(v32, context=n) == \
            inference.kv_cache_bytes(v32, seq_len=n)
    # dense attention (top-k 0) and every other kind of model: the cache it holds
    dense = dataclasses.replace(v32, indexer_topk=0)
    assert inference.decode_kv_read_bytes(dense, context=131072) == 10_266_083_328
    others = [preset(name) for name in ("llama-2-7b", "mistral-7b", "gemma-2-9b")] + [
        _hf_config(name) for name in ("llama4__Llama-4-Maverick-17B-128E.json",
                                      "qwen3_next__Qwen3-Next-80B-A3B-Instruct.json",
                                      "deepseek_v3__DeepSeek-V3.json")]
    for cfg in others:
        for n in (100, 5000, 40000):
            assert inference.decode_kv_read_bytes(cfg, context=n, bytes_per_element=1) == \
                inference.kv_cache_bytes(cfg, seq_len=n, bytes_per_element=1)
    with pytest.raises(ValueError, match="context"):
        inference.decode_kv_read_bytes(v32, context=0)
    with pytest.raises(ValueError, match="bytes_per_element"):
        inference.decode_kv_read_bytes(v32, context=8, bytes_per_element=0)


def test_source_dsa_decode_speed_and_flops_follow_the_top_k() -> None:
    """The decode step's bytes and FLOPs of DeepSeek-V3.2 at 131,072 tokens: its KV read
    is decode_kv_read_bytes (checked on a step that bandwidth sets), and its attention
    per new token 61 x (81,920 x 2,048 + 16,512 x 131,072) = 142,254,014,464 FLOPs
    (81,920 = 2 x 128 heads x (192 + 128); 16,512 = 2 x 64 indexer heads x (128 + 1)),
    not the 61 x 81,920 x 131,072 = 654,982,512,640 of attending to every token.
    Three new tokens after 2,046 attend to 2,047, 2,048 and 2,048 (the cap) keys, and
    the indexer scores 2,047 + 2,048 + 2,049."""
    v32 = _hf_config("deepseek_v32__DeepSeek-V3.2.json")
    n2 = 2.0 * active_params(v32)
    assert inference.model_decode_flops(v32, 1, context_len=131071) == \
        n2 + 142_254_014_464
    dense = dataclasses.replace(v32, indexer_topk=0)
    assert inference.model_decode_flops(dense, 1, context_len=131071) == \
        n2 + 654_982_512_640
    assert inference.model_decode_flops(v32, 3, context_len=2046, batch=2) == \
        2 * (3 * n2 + 61 * (81920 * (2047 + 2048 + 2048) + 16512 * (2047 + 2048 + 2049)))
    weights = inference.decode_weight_bytes(v32, batch=1)
    speed = inference.model_decode_speed(v32, batch=1, context=131072, peak_flops=1e30,
                                         bandwidth=1e12)
    assert speed.step_time == pytest.approx((weights + 1_199_308_800) / 1e12, rel=1e-12)
    # the step's compute side decodes latent attention absorbed, as FlashMLA's sparse
    # kernel does: 2 x 128 x (576 + 512) = 278,528 FLOPs a picked key
    slow = inference.model_decode_speed(v32, batch=1, context=131072, peak_flops=1e12,
                                        bandwidth=1e30)
    assert slow.step_time == pytest.approx(
        (n2 + 61 * (278_528 * 2048 + 16_512 * 131_072)) / 1e12, rel=1e-12)
    # prefill crosses over later: attention stops at 2,048 keys, the indexer goes on
    t = inference.model_attention_crossover_tokens(v32)
    assert t is not None and t > 2048
    assert 61 * (81920 * 2048 + 16512 * t) == pytest.approx(n2, rel=1e-12)
    assert t > inference.model_attention_crossover_tokens(dense)  # type: ignore[operator]


# ---------------------------------------------------------------------------------------
# Decode attention as the engines run it: latent attention absorbed


def test_source_decode_attention_flops_absorb_latent_attention() -> None:
    """vLLM's MLA backends decode in the "data-movement friendly" form
    (``vllm/v1/attention/backends/mla/common.py``, module docstring: "MQA with QK headdim
    = Lkv + R, V headdim = Lkv"): DeepSeek-V3's 128 heads each score the 512-value latent
    and the 64-value rotary key and weight the 512-value latent, 2 x 128 x (576 + 512) =
    278,528 FLOPs a key and layer, not the 81,920 of its up-projected heads. Hand count:
    a token after 4,095 cached ones, 61 x 4,096 x 278,528; FlashMLA's deep dive
    (``docs/20250422-new-kernel-deep-dive.md``) counts ``2 h_q s_q s_k (d_k + d_v)`` and
    its compute-to-memory ratio ``h_q s_q (d_k + d_v) / d_k`` per BF16 byte read, 241.8
    for 128 heads."""
    v3 = preset("deepseek-v3")
    assert inference.decode_attention_flops(v3, context_len=4095) == 61 * 4096 * 278_528
    assert inference.decode_attention_flops(v3, 2, context_len=99, batch=3) == \
        3 * 61 * (100 + 101) * 278_528
    # FlashMLA's FLOPs and FLOPs per byte (h_q = 128, s_q = 1, d_k = 576, d_v = 512)
    s_k = 65_536
    flashmla = 2 * 128 * 1 * s_k * (576 + 512)
    assert inference.decode_attention_flops(v3, context_len=s_k - 1) == 61 * flashmla
    ratio = (inference.decode_attention_flops(v3, context_len=s_k - 1)
             / inference.decode_kv_read_bytes(v3, context=s_k))
    assert ratio == pytest.approx(128 * (576 + 512) / 576, rel=1e-12)
    # not absorbed: the up-projected heads' count of model_decode_flops
    assert inference.decode_attention_flops(v3, context_len=4095, absorbed=False) == \
        61 * 4096 * 81_920
    # Kimi K2: 64 heads on the same latent
    assert inference.decode_attention_flops(preset("kimi-k2"), context_len=9) == \
        61 * 10 * 2 * 64 * (512 + 64 + 512)


def test_model_decode_speed_counts_the_attention_the_engines_run() -> None:
    """model_decode_speed's compute side is decode_attention_flops: DeepSeek-V3 at batch
    64 and 32,768 tokens with an unbounded bandwidth takes 64 x (2N + 61 x 32,768 x
    278,528) FLOPs, not the up-projected 81,920 a key; a chunked layer (Llama 4) attends
    to its current chunk only."""
    v3 = preset("deepseek-v3")
    slow = inference.model_decode_speed(v3, batch=64, context=32768, peak_flops=1e15,
                                        bandwidth=1e30)
    assert slow.step_time == pytest.approx(
        64 * (2.0 * active_params(v3) + 61 * 32768 * 278_528) / 1e15, rel=1e-12)
    maverick = preset("llama-4-maverick")
    chunked = inference.model_decode_speed(maverick, batch=8, context=10000, peak_flops=1e12,
                                           bandwidth=1e30)
    keys = 12 * 10000 + 36 * (10000 - 8192)
    assert chunked.step_time == pytest.approx(
        8 * (2.0 * active_params(maverick) + 2 * 40 * 256 * keys) / 1e12, rel=1e-12)


def test_decode_attention_flops_follow_windows_chunks_and_the_top_k() -> None:
    """Grouped-query attention is the same either way, with its windows and chunks; the
    attention part of model_decode_flops is the not-absorbed count; DeepSeek-V3.2 attends
    to its top-k absorbed and its indexer scores every key."""
    for name in ("llama-3-70b", "gemma-2-9b", "llama-4-maverick", "gpt-oss-20b"):
        cfg = preset(name)
        for c, k in ((0, 1), (5000, 1), (9000, 10), (20000, 3)):
            attention = (inference.model_decode_flops(cfg, k, context_len=c)
                         - 2.0 * active_params(cfg) * k)
            assert inference.decode_attention_flops(cfg, k, context_len=c) == attention
            assert inference.decode_attention_flops(cfg, k, context_len=c,
                                                    absorbed=False) == attention
    assert inference.decode_attention_flops(preset("llama-3-70b"), context_len=4095) == \
        80 * 4096 * 2 * 64 * (128 + 128)
    v32 = _hf_config("deepseek_v32__DeepSeek-V3.2.json")
    assert inference.decode_attention_flops(v32, context_len=131071) == \
        61 * (278_528 * 2048 + 16_512 * 131_072)
    assert inference.decode_attention_flops(v32, 3, context_len=2046) == \
        61 * (278_528 * (2047 + 2048 + 2048) + 16_512 * (2047 + 2048 + 2049))
    for c, k in ((0, 1), (131071, 1), (2046, 3)):
        assert inference.decode_attention_flops(v32, k, context_len=c, absorbed=False) == \
            inference.model_decode_flops(v32, k, context_len=c) - 2.0 * active_params(v32) * k
    with pytest.raises(ValueError, match="context_len"):
        inference.decode_attention_flops(v32, context_len=-1)
    with pytest.raises(ValueError, match="new_tokens"):
        inference.decode_attention_flops(v32, 0, context_len=8)
    with pytest.raises(ValueError, match="batch"):
        inference.decode_attention_flops(v32, context_len=8, batch=0)
    with pytest.raises(TypeError, match="absorbed"):
        inference.decode_attention_flops(v32, context_len=8, absorbed="yes")


def test_kv_bytes_per_element_of_a_sparse_models_fp8_cache() -> None:
    """A DeepSeek Sparse Attention model's FP8 latent is the 656-byte fp8_ds_mla record
    (512 FP8 values + 4 FP32 scales + 64 BF16 rotary values), 656 / 576 bytes a value:
    kv_cache_bytes gives exactly 656 bytes a latent, however many (61 x 788 = 48,068 a
    token for DeepSeek-V3.2; 10^6 tokens x 1,000 sequences still exact). BF16, other FP8
    caches and INT8 keep the precision's bytes."""
    v32 = preset("deepseek-v3.2")
    b = inference.kv_bytes_per_element(v32, "fp8")
    assert inference.kv_cache_bytes_per_token(v32, bytes_per_element=b) == 61 * 788
    assert inference.kv_cache_bytes(v32, seq_len=10**6, batch=1000, bytes_per_element=b) \
        == 61 * 788 * 10**9
    assert inference.decode_kv_read_bytes(v32, context=100_000, bytes_per_element=b) == \
        61 * (2048 * 656 + 100_000 * 132)
    assert inference.kv_bytes_per_element(v32, "fp8_e4m3") == b
    assert inference.kv_bytes_per_element(v32, "bf16") == 2
    assert inference.kv_bytes_per_element(v32, "int8") == 1
    assert inference.kv_bytes_per_element(preset("deepseek-v3"), "fp8") == 1
    assert inference.kv_bytes_per_element(preset("llama-3-8b"), "fp8") == 1
    with pytest.raises(ValueError, match="fp7"):
        inference.kv_bytes_per_element(v32, "fp7")
