"""Lesson 8's calculators on published figures: FlashAttention's tiles and HBM traffic,
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


def test_checkpointing_llama2_7b():
    """Chen et al. 2016: keeping k checkpoints of L layers and recomputing one segment
    needs k + ⌈L/k⌉ layers of activations, least near k = √L, for one more forward pass,
    a third of the 6·N FLOPs of a training step. Llama-2-7B at 4,096 tokens, batch 1:
    Korthikanti et al. 2022's s·b·h·(34 + 5·a·s/h) = 3,254,779,904 bytes per layer, so
    104.15 GB for all 32 layers; k = 4 ... 8 all need 12 layers (k + ⌈32/k⌉), and k = 6,
    nearest √32 = 5.66, is chosen: 39.06 GB."""
    out = C.compute("checkpointing")
    assert out["per_layer"] == 3_254_779_904
    assert out["without"] == 32 * 3_254_779_904
    assert out["best_segments"] == 6
    assert out["with"] == 12 * 3_254_779_904
    assert out["overhead"] == pytest.approx(1 / 3)
    assert C.compute("checkpointing", segments=1)["with"] == 33 * 3_254_779_904
