"""Published KV-cache sizes and inference figures."""

from __future__ import annotations

import pytest

from gpulesson import inference
from gpulesson.transformer import TransformerConfig, preset

KIB = 1024


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
