"""Lesson 5's training-FLOPs calculator on published figures: 6·N·D, the attention term,
GPU-hours at an MFU and Chinchilla's tokens."""

from __future__ import annotations

import pytest

from gpulesson import calculators as C


def test_gpt3_training_compute():
    """Brown et al. 2020 (GPT-3), Table D.1: the 175B model trained on 300B tokens took
    3.14e23 FLOPs (6·N·D, the attention term left out)."""
    gpt3 = {"model": "gpt3-175b", "tokens": 300, "attention_term": "left_out"}
    out = C.compute("training_flops", **gpt3)
    assert round(out["total"] / 1e23, 2) == 3.14
    assert out["attention_per_token"] == 0
    assert C.evaluate("training_flops", gpt3)["text"]["total"] == "3.14 × 10²³ FLOP"


def test_one_attention_convention_from_flops_per_token_to_gpu_hours():
    """Chowdhery et al. 2022 (PaLM), appendix B: model FLOPs per token are 6N + 12·L·H·Q·T.
    GPT-3 at its 2,048-token context: 12 × 96 × 96 × 128 × 2,048 = 28,991,029,248 more
    FLOPs per token; the total over 300B tokens, the time and the GPU-hours all carry it,
    so the total is exactly tokens × FLOPs per token."""
    gpt3 = {"model": "gpt3-175b", "tokens": 300, "seq_len": 2048}
    counted = C.compute("training_flops", **gpt3)
    left_out = C.compute("training_flops", **gpt3, attention_term="left_out")
    assert counted["attention_per_token"] == 28_991_029_248
    assert counted["total"] == pytest.approx(300e9 * counted["flops_per_token"], rel=1e-12)
    assert counted["total"] - left_out["total"] == pytest.approx(300e9 * 28_991_029_248,
                                                                rel=1e-9)
    assert counted["gpu_hours"] / left_out["gpu_hours"] == pytest.approx(
        counted["flops_per_token"] / left_out["flops_per_token"], rel=1e-12)


def test_a_mixture_of_experts_trains_at_its_active_parameters():
    """Jiang et al. 2024 (Mixtral of Experts, section 2.1): each token uses 13B of Mixtral
    8x7B's 47B parameters, so a training token costs 6 × 12.9B FLOPs (plus attention), not
    6 × 46.7B; memory still holds the 46.7B."""
    out = C.compute("training_flops", model="mixtral-8x7b", attention_term="left_out")
    assert (round(out["n_params"] / 1e9), round(out["total_params"] / 1e9)) == (13, 47)
    assert out["flops_per_token"] == 6 * out["n_params"]


def test_llama2_7b_gpu_hours_at_40_percent_mfu():
    """Touvron et al. 2023 (Llama 2): the 7B model saw 2.0T tokens (Table 1) in 184,320
    A100-80GB GPU-hours (Table 2). 6·N·D = 8.09e22 FLOPs at 312 TFLOP/s dense BF16 (A100
    datasheet) and an assumed 40 % MFU gives 179,979 GPU-hours, within 3 %: the run's MFU
    was about 39 %."""
    out = C.compute("training_flops", attention_term="left_out")
    assert out["total"] == pytest.approx(8.086e22, rel=1e-3)
    assert out["gpu_hours"] == pytest.approx(184_320, rel=0.03)
    assert out["gpu_hours"] == pytest.approx(out["time"] * 1024 / 3600, rel=1e-12)


def test_palm_attention_flops_per_token():
    """Chowdhery et al. 2022 (PaLM), appendix B: besides 6·N per token, attention costs
    12·L·H·Q·T FLOPs per token: for PaLM 540B (L = 118, H = 48, Q = 256, T = 2,048)
    12 × 118 × 48 × 256 × 2,048 = 35,634,806,784."""
    palm = dict(model="custom", hidden=18432, layers=118, heads=48, kv_heads=1, head_dim=256,
                ffn=73728, vocab=256000, max_positions=0, embeddings="tied", mlp="gated",
                norm="layernorm", biases="none", seq_len=2048)
    out = C.compute("training_flops", **palm)
    assert out["attention_per_token"] == 35_634_806_784
    assert out["flops_per_token"] == 6 * out["n_params"] + 35_634_806_784


def test_chinchilla_optimal_tokens():
    """Hoffmann et al. 2022: compute-optimal training uses about 20 tokens per parameter
    (Chinchilla: 70B parameters on 1.4T tokens); Llama 3 70B's 70.55B parameters call for
    1.41T tokens."""
    out = C.compute("training_flops", model="llama-3-70b")
    assert out["chinchilla_tokens"] == pytest.approx(1.41e12, rel=1e-3)
    assert C.evaluate("training_flops", {"model": "llama-3-70b"})["text"][
        "chinchilla_tokens"] == "1.41 trillion tokens"


def test_kaplans_count_leaves_the_embeddings_out():
    """Kaplan et al. 2020, §2.1: N counts the non-embedding parameters; the parameter-count
    calculator gives the same N (GPT-2 small: 85,056,000)."""
    out = C.compute("training_flops", model="gpt2", count="non_embedding")
    assert out["n_params"] == C.compute("param_count", model="gpt2")["non_embedding"]
    assert out["n_params"] == 85_056_000


def test_llama_4_maverick_attention_stops_at_its_chunk():
    """Llama 4 Maverick (config.json: 40 heads of 128, 48 layers, 8,192-token chunks on 36
    of them): at 32,768 tokens the attention term is 12 x 40 x 128 x (12 x 32,768 +
    36 x 8,192) = 42,278,584,320 FLOPs per token, not the 12 x 40 x 128 x 48 x 32,768 =
    96,636,764,160 of full attention; 6N counts its 17,184,691,200 active parameters."""
    out = C.compute("training_flops", model="llama-4-maverick", seq_len=32_768)
    assert out["attention_per_token"] == 12 * 40 * 128 * (12 * 32_768 + 36 * 8192)
    assert out["attention_per_token"] == 42_278_584_320
    assert out["n_params"] == 17_184_691_200
    assert out["flops_per_token"] == pytest.approx(6 * 17_184_691_200 + 42_278_584_320,
                                                   rel=1e-12)


def test_sparse_attention_preset_training_flops_by_hand():
    """DeepSeek-V3.2 at 131,072-token sequences (its sparse training stage, arXiv
    2512.02556): per token 6 x 38,403,822,336 + 61 x (3 x 81,920 x 2,048 + 16,512 x
    (131,072 + 2 x 2,048)) = 397,270,774,272 FLOPs; the attention term 166,847,840,256,
    not the 1,964,947,537,920 of attending to every key."""
    out = C.compute("training_flops", model="deepseek-v3.2", seq_len=131072,
                    attention_term="counted")
    attention = 61 * (3 * 81920 * 2048 + 16512 * (131072 + 2 * 2048))
    assert out["attention_per_token"] == attention == 166_847_840_256
    assert out["flops_per_token"] == 6 * 38_403_822_336 + attention == 397_270_774_272
