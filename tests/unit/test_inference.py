"""gpulesson.inference: KV-cache sizes, prefill and decode, and what fits in a GPU."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpulesson import inference
from gpulesson.transformer import TransformerConfig, preset

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
@settings(max_examples=50)
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
