"""Published figures and definitions for distributed training, checkpointing and attention IO."""

from __future__ import annotations

import pytest

from gpulesson import distributed, optimisations

GB = 1e9


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


def test_source_narayanan_bubble_fractions() -> None:
    """Narayanan et al. 2021, sections 2.2.1-2.2.2: the pipeline bubble is (p-1)/m of the
    ideal time for GPipe/1F1B and (1/v)(p-1)/m for the interleaved schedule."""
    assert distributed.pipeline_bubble_fraction(8, 32) == pytest.approx(7 / 32)
    assert distributed.pipeline_bubble_fraction(8, 32, 4) == pytest.approx(7 / 128)


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_source_gpipe_bubble_overhead_in_simulated_schedule(schedule: str) -> None:
    """Huang et al. 2019 (GPipe), section 2.3: with K stages and M micro-batches each
    device idles (K-1)/(M+K-1) of the time, the ratio to ideal being (K-1)/M; the
    simulated schedule reproduces it."""
    p, m = 4, 16
    slots = distributed.pipeline_schedule(p, m, schedule=schedule)
    makespan = distributed.pipeline_makespan(slots)
    busy = sum(s.duration for s in slots if s.stage == 0)
    assert (makespan - busy) / makespan == pytest.approx((p - 1) / (m + p - 1))
    assert makespan / busy - 1 == pytest.approx(
        distributed.pipeline_bubble_fraction(p, m))


def test_source_narayanan_interleaved_schedule_bubble() -> None:
    """Narayanan et al. 2021, section 2.2.2: with v model chunks per device the bubble
    time drops to (p-1)(t_f+t_b)/v; the simulated interleaved schedule matches."""
    p, m, v = 4, 8, 2
    slots = distributed.pipeline_schedule(p, m, schedule="interleaved", interleave=v)
    makespan = distributed.pipeline_makespan(slots)
    ideal = m * (1.0 + 2.0)
    assert makespan - ideal == pytest.approx((p - 1) * 3.0 / v)
    assert (makespan - ideal) / ideal == pytest.approx(
        distributed.pipeline_bubble_fraction(p, m, v))


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
