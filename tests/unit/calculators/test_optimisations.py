"""Lesson 9's calculators on published figures: FlashAttention's tiles and HBM traffic,
and the memory gradient checkpointing saves."""

from __future__ import annotations

import pytest

from gpulesson import calculators as C


def test_flash_attention_tiles_on_an_a100():
    """Dao et al. 2022 (FlashAttention), Algorithm 1, lines 1-3, in the setting of their
    Figure 2 (GPT-2 medium: N = 1,024, d = 64, 16 heads, batch 64, FP16, on an A100 with
    192 KiB of SRAM per SM, i.e. M = 98,304 FP16 values): B_c = ⌈M/4d⌉ = 384,
    B_r = min(B_c, d) = 64, and T_c = ⌈N/B_c⌉ = 3 passes over the keys and values."""
    out = C.compute("flash_attention")
    assert (out["block_c"], out["block_r"], out["passes"]) == (384, 64, 3)


def test_standard_attention_moves_the_n_by_n_scores_through_hbm():
    """Dao et al. 2022, Algorithm 0: standard attention reads Q, K, V, writes and reads back
    S and P, and writes O: 4·N·d + 4·N² values per head, 4,456,448 at N = 1,024, d = 64;
    × 2 bytes × 16 heads × batch 64 = 9,126,805,504 bytes. FlashAttention avoids the N²
    terms (Theorem 2) and moves far less."""
    out = C.compute("flash_attention")
    assert out["standard"] == 9_126_805_504
    assert out["flash"] < out["standard"] / 4


def test_flash_attention_saves_time_and_memory_on_the_chosen_gpu():
    """Dao et al. 2022, Figure 2 (GPT-2 medium's attention on an A100): standard attention
    runs 41.7 ms and FlashAttention 7.3 ms forward and backward, 5.7 times faster, because
    standard attention is bound by its HBM traffic. On the roofline of an A100 40GB
    (312 TFLOP/s FP16 dense, 1.555 TB/s) the forward pass alone is 5.6 times faster, within
    10 % of that; the memory kept for backward falls from the N×N probabilities of every
    head (1,024² × 16 × 64 × 2 bytes) to one FP32 statistic per row (section 3.1). An H100
    SXM (3.35 TB/s, 256 KiB per SM) moves the same bytes faster and tiles them larger."""
    out = C.compute("flash_attention")
    flops = 4 * 1024**2 * 64 * 16 * 64
    assert out["standard_time"] == pytest.approx(9_126_805_504 / 1.555e12)
    assert out["flash_time"] == pytest.approx(out["flash"] / 1.555e12)
    assert out["speedup"] == pytest.approx(41.7 / 7.3, rel=0.1)
    assert out["time_saved"] == pytest.approx(out["standard_time"] - out["flash_time"])
    assert out["standard_memory"] == 1024**2 * 16 * 64 * 2
    assert out["flash_memory"] == 4 * 1024 * 16 * 64
    on_h100 = C.compute("flash_attention", gpu="H100 SXM", sram_bytes=256)
    assert on_h100["standard_time"] == pytest.approx(9_126_805_504 / 3.35e12)
    assert on_h100["flash_time"] == pytest.approx(on_h100["flash"] / 3.35e12)
    assert on_h100["flash"] < out["flash"] and on_h100["flash_time"] > flops / 989.4e12


def test_checkpointing_gpt3():
    """Chen et al. 2016: keeping k checkpoints of L layers and recomputing one segment
    needs k + ⌈L/k⌉ layers of activations, least near k = √L, for one more forward pass,
    a third of the 6·N FLOPs of a training step. GPT-3 at 2,048 tokens, batch 1, eager
    attention with dropout: Korthikanti et al. 2022's s·b·h·(34 + 5·a·s/h) =
    2048 × 12,288 × 114 = 2,868,903,936 bytes per layer; k = 8 ... 12 all need 20 layers
    (k + ⌈96/k⌉), and k = 10, nearest √96 = 9.8, is chosen."""
    gpt3 = {"model": "gpt3-175b", "seq_len": 2048}
    out = C.compute("checkpointing", **gpt3)
    assert out["per_layer"] == 2_868_903_936
    assert out["without"] == 96 * 2_868_903_936
    assert out["best_segments"] == 10
    assert out["with"] == 20 * 2_868_903_936
    assert out["overhead"] == pytest.approx(1 / 3)
    assert C.compute("checkpointing", **gpt3, segments=1)["with"] == 97 * 2_868_903_936


def test_checkpointing_follows_the_attention_implementation():
    """Llama-2-7B at 4,096 tokens: with FlashAttention (its default, Dao et al. 2022) each
    layer keeps 2 × 32 × 4,096² − 4 × 32 × 4,096 bytes fewer than eager attention without
    dropout, the score matrix it never stores; checkpointing keeps k + ⌈L/k⌉ = 12 such
    layers (k = 6 of 32)."""
    flash = C.compute("checkpointing")
    eager = C.compute("checkpointing", attention="eager")
    assert eager["per_layer"] - flash["per_layer"] == 2 * 32 * 4096**2 - 4 * 32 * 4096
    assert flash["with"] == 12 * flash["per_layer"]
