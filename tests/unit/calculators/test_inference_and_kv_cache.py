"""Lesson 6's calculators on published figures: the KV cache with grouped-query attention,
and prefill and decode on a GPU."""

from __future__ import annotations

import pytest

from gpulesson import calculators as C

KIB = 1024


def test_llama3_8b_kv_cache_at_8k_context():
    """Meta-Llama-3-8B config.json: 32 layers, 8 KV heads of 128: 2 × 32 × 8 × 128 × 2 bytes
    = 128 KiB per token in BF16, 1 GiB for 8,192 tokens; with one KV head per query head
    (32) the cache would be 32/8 = 4 times larger (Ainslie et al. 2023, GQA)."""
    out = C.compute("kv_cache")
    assert out["per_token"] == 128 * KIB
    assert out["total"] == 2**30
    assert out["total_mha"] == 4 * 2**30
    assert C.evaluate("kv_cache")["text"]["total"] == "1.1 GB (1 GiB)"


def test_llama2_7b_kv_cache_at_4k_context():
    """NVIDIA Technical Blog, 'Mastering LLM Techniques: Inference Optimization' (2023):
    Llama 2 7B, batch 1, 4,096 tokens, 16-bit: 1 × 4096 × 2 × 32 × 4096 × 2 bytes, about
    2 GB (exactly 2 GiB); multi-head attention, so the GQA figure is the same."""
    out = C.compute("kv_cache", model="llama-2-7b", seq_len=4096)
    assert out["total"] == out["total_mha"] == 2 * 2**30


def test_llama2_70b_kv_cache_per_token():
    """Llama-2-70b-hf config.json: 80 layers, 8 KV heads of 128 for 64 query heads:
    320 KiB per token in 16-bit, 8 times less than multi-head attention would keep."""
    out = C.compute("kv_cache", model="llama-2-70b", seq_len=1)
    assert out["per_token"] == out["total"] == 320 * KIB
    assert out["total_mha"] == 8 * 320 * KIB


def test_opt_13b_kv_cache_per_token():
    """Kwon et al. 2023 (vLLM), §3: one token of OPT-13B keeps 800 KB of KV cache,
    2 (key and value) × 5,120 (hidden size) × 40 (layers) × 2 bytes."""
    opt13b = dict(model="custom", hidden=5120, layers=40, heads=40, kv_heads=40,
                  head_dim=128, ffn=20480, vocab=50272, max_positions=2048,
                  embeddings="tied", mlp="plain", norm="layernorm", biases="all")
    assert C.compute("kv_cache", seq_len=1, **opt13b)["per_token"] == 800 * KIB


def test_llama3_8b_decoding_on_an_h100():
    """Llama-3-8B in BF16 (16,060,522,496 bytes of weights, 128 KiB of KV cache per token)
    after an 8,192-token prompt and 512 generated tokens holds 8,704 × 128 KiB =
    1,140,850,688 bytes of cache; one decode step reads both at 3.35 TB/s (H100 SXM
    datasheet): at most 3.35e12 / 17,201,373,184 = 194.8 tokens/s. Decode turns
    compute-bound once 2·N FLOPs per sequence outlast reading 2·N bytes of weights, at a
    batch of 989.4 / 3.35 = 295 sequences, the ridge point (Pope et al. 2022: decoding
    small batches is bound by loading the weights)."""
    out = C.compute("inference")
    assert (out["weights"], out["kv_cache"]) == (16_060_522_496, 1_140_850_688)
    assert out["ceiling"] == pytest.approx(194.75, rel=1e-4)
    assert out["decode_total"] == out["decode_per_user"] == pytest.approx(out["ceiling"])
    assert out["compute_bound_batch"] == pytest.approx(295.3, abs=0.05)


def test_deepseek_v3_caches_its_latent():
    """DeepSeek-AI 2024 (DeepSeek-V2, Table 1): multi-head latent attention caches
    (d_c + d_R)·l values per token, against 2·n_h·d_h·l for multi-head attention.
    DeepSeek-V3's config.json: d_c = 512, d_R = 64, 61 layers, 128 heads of d_h = 128; in
    BF16 that is 61 × 576 × 2 = 70,272 bytes per token, against 61 × 2 × 128 × 128 × 2 =
    3,997,696 (1.76 %)."""
    out = C.compute("kv_cache", model="deepseek-v3", seq_len=1)
    assert out["per_token"] == out["total"] == 70_272
    assert out["total_mha"] == 3_997_696


def test_gemma2_local_layers_keep_their_window():
    """google/gemma-2-9b config.json: 42 layers, 8 KV heads of 256, a 4,096-token sliding
    window on every other layer (Gemma Team 2024, section 2). At 8,192 tokens the 21 local
    layers hold 4,096 tokens and the 21 global ones 8,192: 2 × 8 × 256 × 2 bytes × 21 ×
    (8,192 + 4,096) = 2,113,929,216 bytes, three quarters of the 2,818,572,288 a cache
    without the window would reserve."""
    out = C.compute("kv_cache", model="gemma-2-9b", seq_len=8192)
    assert out["total"] == 2_113_929_216
    assert out["total_uncapped"] == 2_818_572_288


def test_mixtral_decode_reads_the_experts_its_batch_routes_to():
    """Jiang et al. 2024 (Mixtral of Experts, section 2.1): a token is processed by 2 of 8
    experts, 12.9B of the 46.7B parameters, so a decode step at batch 1 reads 25.8 GB of
    BF16 weights, not 93.4 GB. With uniform routing the batch's tokens reach
    8 × (1 − (6/8)^B) experts per layer: 7.92 at B = 16, nearly all of them. The step's
    FLOPs stay 2 × 12.9B per token, so decode turns compute-bound at a batch about
    46.7/12.9 times the dense 295 of an H100 SXM (989.4 TFLOP/s, 3.35 TB/s)."""
    one = C.compute("inference", model="mixtral-8x7b", batch=1)
    assert one["decode_weights"] == 2 * one["active"] == 2 * 12_879_925_248
    sixteen = C.compute("inference", model="mixtral-8x7b", batch=16)
    routed = 32 * 8 * 3 * 4096 * 14336  # every expert of every layer
    assert sixteen["decode_weights"] == pytest.approx(
        2 * (one["n_params"] - routed + routed * (1 - 0.75**16)), rel=1e-12)
    turn = one["compute_bound_batch"]
    assert turn == pytest.approx(295.3 * one["n_params"] / one["active"], rel=0.01)


def test_presets_of_2025_26_kv_cache_by_hand():
    """From each config.json, BF16, per token: Llama 4 Maverick 48 layers x 2 x 8 KV heads
    x 128 x 2 bytes = 196,608; MiniMax-M2.7 62 layers x 2 x 8 x 128 x 2 = 253,952; Kimi K2
    61 layers x (512 + 64) latent values x 2 = 70,272. At Maverick's whole context of
    1,048,576 tokens its 36 chunked layers keep at most one 8,192-token chunk (transformers
    Llama4TextAttention, vLLM's ChunkedLocalAttentionManager) and its 12 global layers
    every token: 12 x 1,048,576 x 4,096 + 36 x 8,192 x 4,096 = 52,747,567,104 bytes, a
    quarter of the 206,158,430,208 with every layer at full length, plus 1.2 GB."""
    per_token = {"llama-4-maverick": 196_608, "minimax-m2.7": 253_952, "kimi-k2": 70_272}
    for model, expected in per_token.items():
        assert C.compute("kv_cache", model=model)["per_token"] == expected, model
    long = C.compute("kv_cache", model="llama-4-maverick", seq_len=1_048_576)
    assert long["total"] == 12 * 1_048_576 * 4096 + 36 * 8192 * 4096 == 52_747_567_104
    assert long["total_uncapped"] == 48 * 1_048_576 * 4096 == 206_158_430_208
    short = C.compute("kv_cache", model="llama-4-maverick", seq_len=8192)
    assert short["total"] == short["total_uncapped"] == 8192 * 196_608


def _dsa_kw(monkeypatch: pytest.MonkeyPatch, **kw: object) -> dict[str, object]:
    """The inputs a model preset gives, for DeepSeek-V3.2 read from its config.json and
    offered as the preset "dsa" (the calculator functions take the whole configuration
    from gpulesson.transformer.PRESETS)."""
    from pathlib import Path

    from gpulesson import transformer
    from gpulesson.calculators import shared
    path = Path(__file__).parents[2] / "data" / "hf_configs" / "deepseek_v32__DeepSeek-V3.2.json"
    cfg = transformer.from_hf_config(path)
    monkeypatch.setattr(transformer, "PRESETS", {"dsa": cfg})
    return {"model": "dsa", **shared._model_fill(cfg), **kw}


def test_kv_cache_read_by_a_decode_step_follows_a_sparse_models_top_k(monkeypatch):
    """The KV cache held is every token's (storage), the bytes a decode step reads are not
    always: DeepSeek-V3.2 (61 layers, latent 576 values, indexer key 132 bytes, top-k
    2,048) at 131,072 tokens in BF16 holds 61 x 1,284 x 131,072 = 10,266,083,328 bytes
    and a step reads 61 x (2,048 x 1,152 + 131,072 x 132) = 1,199,308,800 per sequence,
    4 sequences 4,797,235,200. A dense or windowed model reads what it holds."""
    from gpulesson.calculators.lessons import inference_and_kv_cache as lesson
    kw = _dsa_kw(monkeypatch, seq_len=131072, batch=4, kv_dtype="bf16")
    out = lesson._kv_cache(**kw)
    assert out["total"] == 4 * 61 * 1284 * 131072 == 41_064_333_312
    assert out["read"] == 4 * 61 * (2048 * 1152 + 131072 * 132) == 4_797_235_200
    for model, seq_len in (("llama-3-8b", 8192), ("mistral-7b", 32768),
                           ("llama-4-maverick", 1_048_576)):
        out = C.compute("kv_cache", model=model, seq_len=seq_len)
        assert out["read"] == out["total"], model


def test_speculative_verification_reads_each_tokens_top_k(monkeypatch):
    """Verifying gamma = 4 draft tokens runs 5 tokens of each sequence; with DeepSeek
    Sparse Attention each picks its own 2,048 cached tokens, so the step reads up to 5 x
    2,048 latents besides every indexer key: DeepSeek-V3.2 at 131,072 tokens in BF16,
    61 x (10,240 x 1,152 + 131,072 x 132) = 1,774,977,024 bytes against a plain step's
    61 x (2,048 x 1,152 + 131,072 x 132) = 1,199,308,800. At batch 1 on an H100 SXM both
    steps are memory-bound (76.8 GB of active weights at 3.35 TB/s): speed-up
    E x t / (t_verify + 4 x 0.05 x t), E = (1 - 0.8^5) / 0.2 = 3.3616."""
    from gpulesson import inference, transformer
    from gpulesson.calculators.lessons import inference_and_kv_cache as lesson
    kw = _dsa_kw(monkeypatch, acceptance_rate=0.8, draft_tokens=4, draft_cost=0.05,
                 batch=1, context=131072, precision="bf16", kv_dtype="bf16",
                 peak_flops=989.4e12, bandwidth=3.35e12, gpu_memory=80e9)
    cfg = transformer.PRESETS["dsa"]
    weights = inference.decode_weight_bytes(cfg, batch=1)
    plain = (weights + 61 * (2048 * 1152 + 131072 * 132)) / 3.35e12
    verify = (weights + 1_774_977_024) / 3.35e12
    expected = 3.3616 * plain / (verify + 4 * 0.05 * plain)
    assert lesson._speculative(**kw)["speedup_at_batch"] == pytest.approx(expected, rel=1e-12)
    # a dense model's verification reads its whole cache, as a plain step does
    out = C.compute("speculative_decoding", model="llama-3-8b", batch=1)
    assert out["speedup_at_batch"] == pytest.approx(out["speedup"], rel=1e-12)


def test_sparse_attention_presets_at_128k_by_hand():
    """DeepSeek-V3.2 (61 layers) and GLM-5.1 (78) from their config.json files, BF16, at
    131,072 tokens. Held per token: layers x (576 x 2 + 132) = 78,324 and 100,152 bytes,
    every token kept. Read by a decode step: layers x (2,048 x 1,152 + 131,072 x 132) =
    1,199,308,800 and 1,533,542,400. DeepSeek-V3.2 on an H100 SXM after 130,560 + 512
    tokens: attention per new token 61 x (81,920 x 2,048 + 16,512 x 131,072) FLOPs
    (81,920 = 2 x 128 x (192 + 128); 16,512 = 2 x 64 x (128 + 1)); prefill FLOPs
    130,560 x (2 N_active + 61 x (81,920 x 2,048 + 16,512 x 130,560)); the ceiling
    3.35e12 / (76,807,644,672 + 1,199,308,800) = 42.9 tokens/s."""
    for model, layers in (("deepseek-v3.2", 61), ("glm-5.1", 78)):
        out = C.compute("kv_cache", model=model, seq_len=131072)
        assert out["per_token"] == layers * 1284, model
        assert out["total"] == layers * 1284 * 131072, model
        assert out["read"] == layers * (2048 * 1152 + 131072 * 132), model
    out = C.compute("inference", model="deepseek-v3.2", prompt=130560, new_tokens=512)
    n2 = 2 * out["active"]
    assert out["active"] == 38_403_822_336
    assert out["kv_cache"] == 10_266_083_328
    assert out["prefill_flops"] == 130560 * (n2 + 61 * (81920 * 2048 + 16512 * 130560))
    assert out["decode_flops"] == 512 * n2 + 61 * (
        81920 * 512 * 2048 + 16512 * sum(range(130561, 131073)))
    assert out["decode_weights"] == 76_807_644_672
    assert out["ceiling"] == pytest.approx(3.35e12 / (76_807_644_672 + 1_199_308_800),
                                           rel=1e-12)
    assert out["step_time"] == pytest.approx(1 / out["ceiling"], rel=1e-12)  # memory-bound


def test_the_time_outputs_help_quotes_the_absorbed_and_model_counts():
    """The prefill and decode-step help texts quote a latent model's FLOPs per key and layer
    as its kernels run it (absorbed) against the model count: both figures are the
    functions' (DeepSeek-V3.2 for prefill past its top-k, DeepSeek-V3 for decode; the same
    latent shape, 2 x 128 x (2 x 512 + 64) and 2 x 128 x (192 + 128))."""
    from gpulesson import flops, transformer

    helps = {o.name: o.help for o in C.get("inference").outputs}
    for name, model in (("prefill_time", "deepseek-v3.2"), ("step_time", "deepseek-v3")):
        cfg = transformer.preset(model)
        absorbed = f"{flops.absorbed_attention_flops_per_key(cfg):,}"
        model_count = f"{flops.attention_flops_per_key(cfg):,}"
        assert f"{absorbed} FLOPs a key and layer" in helps[name], name
        assert f"model count has {model_count}" in helps[name], name


@pytest.mark.parametrize("acceptance, cost, gamma", [
    (100, 5, 64), (100, 0, 64), (99, 1, 40), (95, 0.5, 30), (80, 5, 4)])
def test_speculative_best_draft_length_searches_every_length_offered(acceptance, cost, gamma):
    """The best draft length is the best of the lengths the form offers (0 to 64): its
    speed-up is never below the one at the draft length entered. With α = 100 % and
    c = 5 % the speed-up (γ + 1) / (γ c + 1) grows with γ: 64 gives 65 / 4.2 = 15.5,
    where a search stopped at 16 gave 17 / 1.8 = 9.4 and called it the best."""
    out = C.compute("speculative_decoding", acceptance_rate=acceptance, draft_cost=cost,
                    draft_tokens=gamma)
    assert out["best_speedup"] >= out["speedup"] * (1 - 1e-12)
    top = C.get("speculative_decoding").input("draft_tokens").max
    assert 0 <= out["best_gamma"] <= top


@pytest.mark.parametrize("model, layers", [("deepseek-v3.2", 61), ("glm-5.1", 78)])
def test_sparse_attention_fp8_cache_is_the_656_byte_record_everywhere(model, layers):
    """A DeepSeek Sparse Attention model's FP8 cache holds, a token and layer, the
    656-byte fp8_ds_mla record (512 FP8 latent values, 4 FP32 scales, 64 rotary values in
    BF16: what FlashMLA's sparse kernels read, and vLLM and SGLang store) and the 132-byte
    indexer key: DeepSeek-V3.2 61 x 788 = 48,068 bytes a token, as the serving planner
    counts it (planning.sparse), not 61 x (576 + 132) = 43,188. Lesson 6's calculators
    give the planner's figure: per token, held at 131,072 tokens, read by a decode step
    (the top 2,048 latents and every indexer key), and in the inference calculator's
    cache at the end."""
    from gpulesson.planning.sparse import vllm_kv_bytes_per_token
    per_token = vllm_kv_bytes_per_token(model, kv_dtype="fp8")
    assert per_token == layers * (656 + 132)
    out = C.compute("kv_cache", model=model, seq_len=131072, batch=2, kv_dtype="fp8")
    assert out["per_token"] == per_token
    assert out["total"] == out["total_uncapped"] == per_token * 131072 * 2
    assert out["read"] == 2 * layers * (2048 * 656 + 131072 * 132)
    calc = C.compute("inference", model=model, prompt=8192, new_tokens=512, batch=3,
                     kv_dtype="fp8")
    assert calc["kv_cache"] == per_token * (8192 + 512) * 3
    # BF16 and a model without an indexer keep one byte count per value
    assert C.compute("kv_cache", model=model, kv_dtype="bf16")["per_token"] == \
        layers * (576 * 2 + 132)
    assert C.compute("kv_cache", model="deepseek-v3", kv_dtype="fp8")["per_token"] == 61 * 576


@pytest.mark.parametrize(("name", "batch_input", "fails_at", "cached_tokens"), [
    ("disaggregation", "decode_batch", 64, 64 * (8192 + 512)),     # to the end of a request
    ("chunked_prefill", "decode_batch", 64, 64 * 8192 + 8192),     # and the newcomer's prompt
    ("speculative_decoding", "batch", 128, 128 * (8192 + 4)),      # and the draft tokens
])
def test_a_serving_technique_says_when_its_batch_does_not_fit(name, batch_input, fails_at,
                                                              cached_tokens):
    """Llama 3 8B in BF16 on an 80 GB H100: 16.06 GB of weights and 128 KiB of cache per
    token. A decode batch of 64 at 8,192 + 512 tokens holds 73.0 GB of
    cache, 89.1 GB in all: it does not fit, yet the disaggregation calculator gave its rate
    with no word (the site, 2026-12-07). These three now say so, as the inference
    calculator does; their default batches fit."""
    assert C.compute(name)["fits"] == "yes"
    said = C.compute(name, **{batch_input: fails_at})["fits"]
    assert said.startswith("no: at least 2 GPUs"), said
    held = 16.06e9 + cached_tokens * 128 * KIB  # the count by hand agrees: over the memory
    assert held > C.resolve(name)["gpu_memory"] * 1e9
