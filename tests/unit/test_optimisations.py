"""gpulesson.optimisations: checkpointing, recomputation, mixed precision, attention IO."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpulesson import optimisations
from gpulesson.transformer import param_count, preset

# ---------------------------------------------------------------------------------------
# Published figures


def test_source_chen_sqrt_checkpointing() -> None:
    """Chen et al. 2016, section 4: memory n/k + k is smallest at k = sqrt(n), 2 sqrt(n)
    (20 layers' worth for n = 100), at the cost of one extra forward pass, about 1/3 of a
    training step's 6N FLOPs per token (forward 2N, backward 4N)."""
    assert optimisations.optimal_segments(100) == 10
    assert optimisations.checkpoint_memory(layers=100, per_layer_bytes=1.0) == 20
    assert optimisations.recompute_overhead(recompute="full") == pytest.approx(1 / 3)


def test_chen_ties_go_to_the_k_nearest_sqrt_l() -> None:
    """Chen et al. 2016 set k = sqrt(n). Where k + ceil(L/k) ties, the calculator takes the
    k nearest sqrt(L): 32 layers tie at 12 for k = 4 to 8 (4 + 8, 5 + 7, 6 + 6, 7 + 5,
    8 + 4), and sqrt(32) = 5.66 picks 6; 96 layers tie at 20 for k = 8 to 12, and
    sqrt(96) = 9.80 picks 10; 64 layers have a single best k = 8 = sqrt(64)."""
    assert [k + -(-32 // k) for k in range(3, 10)] == [14, 12, 12, 12, 12, 12, 13]
    assert optimisations.optimal_segments(32) == 6
    assert optimisations.optimal_segments(96) == 10
    assert optimisations.optimal_segments(64) == 8
    assert optimisations.checkpoint_memory(layers=32, per_layer_bytes=1.0) == 12


def test_without_checkpointing_keeps_every_layer_once() -> None:
    """No checkpointing keeps all L layers (Chen et al.'s O(n) baseline): Llama 2 7B at
    4,096 tokens, batch 1, 32 layers of Korthikanti et al.'s sbh(34 + 5as/h) =
    4096 * 4096 * (34 + 5 * 32 * 4096 / 4096) = 3,254,779,904 bytes: 104.15 GB, not the
    33 layers' 107.4 GB that a one-segment checkpoint schedule keeps."""
    per_layer = 4096 * 4096 * (34 + 5 * 32 * 4096 // 4096)
    assert per_layer == 3_254_779_904
    without = optimisations.activation_memory_without_checkpointing(
        layers=32, per_layer_bytes=per_layer)
    assert round(without / 1e9, 1) == 104.2
    one_segment = optimisations.checkpoint_memory(layers=32, per_layer_bytes=per_layer,
                                                  segments=1)
    assert round(one_segment / 1e9, 1) == 107.4 and one_segment - without == per_layer
    with pytest.raises(ValueError, match="layers"):
        optimisations.activation_memory_without_checkpointing(layers=0, per_layer_bytes=1)


def test_source_dao_algorithm0_hbm_accesses() -> None:
    """Dao et al. 2022 (FlashAttention), Algorithm 0 / Theorem 2: standard attention
    reads and writes Theta(Nd + N^2) elements: Q, K, V read, S and P written and read
    back, O written: 4Nd + 4N^2 per head."""
    n, d = 1024, 64
    assert optimisations.standard_attention_hbm_bytes(seq_len=n, head_dim=d,
                                                      bytes_per_element=1) == 4 * n * d + 4 * n * n


def test_source_dao_theorem2_scaling() -> None:
    """Dao et al. 2022, Theorem 2: FlashAttention needs Theta(N^2 d^2 / M) HBM accesses:
    doubling the SRAM M roughly halves the accesses at long sequence length, and doubling
    N roughly quadruples them; standard attention does not depend on M."""
    def fa(n: int, sram: int) -> int:
        return optimisations.flash_attention_hbm_bytes(seq_len=n, head_dim=64,
                                                       sram_bytes=sram)
    big = 65536
    assert fa(big, 2 * 102400) / fa(big, 102400) == pytest.approx(0.5, rel=0.05)
    assert fa(2 * big, 102400) / fa(big, 102400) == pytest.approx(4, rel=0.05)
    assert fa(big, 102400) < optimisations.standard_attention_hbm_bytes(seq_len=big,
                                                                          head_dim=64)


# ---------------------------------------------------------------------------------------
# Validation


def test_bad_arguments_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="sram_bytes"):
        optimisations.flash_attention_hbm_bytes(seq_len=8, head_dim=8, sram_bytes=0)
    with pytest.raises(ValueError, match="recompute must be one of"):
        optimisations.recompute_overhead(recompute="half")


# ---------------------------------------------------------------------------------------
# Properties


@given(layers=st.integers(1, 2000))
def test_optimal_segments_is_optimal(layers: int) -> None:
    best = optimisations.checkpoint_memory(layers=layers, per_layer_bytes=1.0)
    assert best <= layers + 1
    for k in range(1, min(layers, 80) + 1):
        assert best <= optimisations.checkpoint_memory(layers=layers, per_layer_bytes=1.0,
                                                       segments=k)
    assert best <= 2 * math.sqrt(layers) + 2


@given(n=st.integers(1, 20000), d=st.sampled_from([32, 64, 128, 256]),
       sram=st.integers(4096, 256 * 1024))
def test_flash_attention_monotone_in_sram(n: int, d: int, sram: int) -> None:
    small = optimisations.flash_attention_hbm_bytes(seq_len=n, head_dim=d, sram_bytes=sram)
    large = optimisations.flash_attention_hbm_bytes(seq_len=n, head_dim=d,
                                                    sram_bytes=2 * sram)
    assert 0 < large <= small


# ---------------------------------------------------------------------------------------
# Behaviour


def test_checkpoint_memory_edges() -> None:
    """k + ceil(L/k): one segment keeps its input and all 12 layers; 12 segments keep 12
    checkpoints and a one-layer segment; 4 segments of 3 layers: 4 + 3."""
    assert optimisations.checkpoint_memory(layers=12, per_layer_bytes=1.0, segments=1) == 13
    assert optimisations.checkpoint_memory(layers=12, per_layer_bytes=1.0, segments=12) == 13
    assert optimisations.checkpoint_memory(layers=12, per_layer_bytes=2.0, segments=4) == 14
    with pytest.raises(ValueError, match="segments must be at most layers"):
        optimisations.checkpoint_memory(layers=4, per_layer_bytes=1.0, segments=5)


def test_selective_recompute_overhead_is_small() -> None:
    """Selective recomputation costs a few percent (Korthikanti et al. 2022), full a third."""
    cfg = preset("llama-2-7b")
    shape = {"layers": cfg.layers, "heads": cfg.heads, "head_dim": cfg.head_dim,
             "seq_len": 4096}
    sel = optimisations.recompute_overhead(recompute="selective",
                                           n_params=param_count(cfg), **shape)
    full = optimisations.recompute_overhead(recompute="full", n_params=param_count(cfg),
                                            **shape)
    assert 0.01 < sel < 0.1 and full == pytest.approx(1 / 3)
    assert optimisations.recompute_overhead(recompute="none") == 0
    with pytest.raises(ValueError, match="needs n_params"):
        optimisations.recompute_overhead(recompute="selective")
    # 'full' with a parameter count but no attention shape names what is missing, and
    # does not talk about 'selective'
    with pytest.raises(ValueError, match="recompute='full'.*missing: layers, heads") as err:
        optimisations.recompute_overhead(recompute="full", n_params=param_count(cfg))
    assert "selective" not in str(err.value)


def test_mixed_precision_saves_only_activations_with_adam() -> None:
    s = optimisations.mixed_precision_savings(n_params=7e9)
    assert s.saved_bytes == 0 and s.fp32_bytes == 112e9
    s = optimisations.mixed_precision_savings(n_params=7e9, activation_bytes_fp32=100e9)
    assert s.saved_bytes == pytest.approx(50e9)


def test_source_dao_flash_attention_is_io_bound_no_more() -> None:
    """Dao et al. 2022, section 3.2 and Figure 2: standard attention (GPT-2 medium, N =
    1,024, d = 64, 16 heads, batch 64, FP16) is bound by HBM accesses; FlashAttention does
    the same FLOPs with far fewer and keeps O(N) statistics instead of the N x N matrix.
    On an A100 40GB roofline (312 TFLOP/s, 1.555 TB/s) the forward pass is 5.6 times
    faster (5.7 measured forward and backward), and still bound by memory, as on an H100
    SXM (989.4 TFLOP/s, 3.35 TB/s)."""
    fig2 = dict(seq_len=1024, head_dim=64, heads=16, batch=64, sram_bytes=192 * 1024)
    r = optimisations.attention_on_gpu(**fig2, peak_flops=312e12, bandwidth=1.555e12)
    assert r.flops == 4 * 1024**2 * 64 * 16 * 64
    assert r.standard_time == r.standard_bytes / 1.555e12 > r.flops / 312e12
    assert r.time_saved == r.standard_time - r.flash_time
    assert round(r.standard_time / r.flash_time, 1) == 5.6
    assert r.memory_saved == 2 * 1024**2 * 16 * 64 - 4 * 1024 * 16 * 64
    h100 = optimisations.attention_on_gpu(**fig2, peak_flops=989.4e12, bandwidth=3.35e12)
    assert h100.flash_time == h100.flash_bytes / 3.35e12 > h100.flops / 989.4e12
    with pytest.raises(ValueError, match="bandwidth"):
        optimisations.attention_on_gpu(seq_len=8, head_dim=8, sram_bytes=1024,
                                       peak_flops=1e12, bandwidth=0)


@pytest.mark.parametrize("mode", ["none", "full", "selective"])
@pytest.mark.parametrize("kwargs", [{"heads": ""}, {"layers": 0}, {"seq_len": 2.5},
                                    {"n_params": -1.0}, {"head_dim": True}])
def test_recompute_overhead_checks_every_argument_given(mode: str, kwargs: dict) -> None:
    """recompute='none' returned 0 without looking at the rest (issue 35, item 11)."""
    (name, value), = kwargs.items()
    with pytest.raises((TypeError, ValueError), match=rf"^{name} must be"):
        optimisations.recompute_overhead(recompute=mode, **kwargs)
