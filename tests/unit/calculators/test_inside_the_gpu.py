"""The calculators of *Inside the GPU* on published figures: occupancy, tile and wave
quantization, coalescing and shared-memory tiling."""

from __future__ import annotations

import pytest

from gpulesson import calculators as C


def test_occupancy_best_practices_guide_example():
    """CUDA C++ Best Practices Guide, "Calculating Occupancy" (compute capability 7.0, a
    V100): 37 registers per thread and 128-thread blocks give 12 blocks and 75 %."""
    out = C.compute("occupancy", gpu="V100 SXM", threads_per_block=128,
                    registers_per_thread=37)
    assert (out["blocks_per_sm"], out["warps_per_sm"], out["occupancy"]) == (12, 48, 0.75)
    assert out["limited_by"] == "registers"
    assert out["registers_per_block"] == 4 * 1280  # 37 × 32 rounded up to 1,280 per warp


def test_occupancy_on_an_h100_counts_the_reserved_kilobyte():
    """NVIDIA H100 whitepaper (2022): 132 SMs of 2,048 threads (270,336 threads resident at
    full occupancy); CUDA C++ Programming Guide: from compute capability 8.0 the driver
    reserves 1 KB of shared memory per block, so 48 KiB blocks take 49 KiB and four fit in
    the 228 KiB of an SM."""
    full = C.compute("occupancy")
    assert (full["occupancy"], full["resident_threads"]) == (1.0, 270_336)
    assert full["shared_memory_allocated"] == 1024
    out = C.compute("occupancy", shared_memory_per_block=48)
    assert (out["blocks_per_sm"], out["limited_by"]) == (4, "shared memory")
    assert out["shared_memory_allocated"] == 49 * 1024


def test_occupancy_counts_threads_not_the_idle_lanes_of_a_partial_warp():
    """Review r22 F2: 33-thread blocks on an H100 SXM (32 registers, no shared memory) are
    two warps each, 32 blocks per SM, 100 % occupancy; the GPU holds 32 × 33 × 132 =
    139,392 threads, not the 64 warps × 32 lanes × 132 = 270,336 the output printed, and 31
    of every 64 lanes hold no thread. The help says so for any size not a multiple of 32."""
    out = C.compute("occupancy", threads_per_block=33)
    assert (out["blocks_per_sm"], out["warps_per_sm"], out["occupancy"]) == (32, 64, 1.0)
    assert out["resident_threads"] == 139_392
    assert out["idle_lanes"] == 32 * 31
    assert C.compute("occupancy")["idle_lanes"] == 0  # 256 threads: whole warps
    help_text = next(i for i in C.get("occupancy").inputs
                     if i.name == "threads_per_block").help
    assert "not a multiple of 32" in help_text and "idle" in help_text


def test_occupancy_errors_name_the_input():
    result = C.evaluate("occupancy", {"threads_per_block": 2048})
    assert result["ok"] is False and result["input"] == "threads_per_block"
    assert "1 to 1024" in result["error"] or "1024" in result["error"]


def test_gemm_waves_matrix_multiplication_guide():
    """NVIDIA Matrix Multiplication Background User's Guide, "Wave Quantization": an A100 has
    108 SMs and runs one 256 × 128 tile per SM, a wave of 108 tiles; with M = 2304 and
    K = 4096, N = 1536 is one full wave and N = 1537 needs a second, nearly empty one."""
    full = C.compute("gemm_waves", gpu="A100 80GB", m=2304, n=1536, k=4096)
    assert (full["wave_size"], full["tiles"], full["waves"]) == (108, 108, 1)
    assert full["efficiency"] == 1.0
    over = C.compute("gemm_waves", gpu="A100 80GB", m=2304, n=1537, k=4096)
    assert (over["tiles"], over["waves"], over["last_wave_tiles"]) == (117, 2, 9)
    assert over["time"] == pytest.approx(2 * full["time"])


def test_gemm_waves_presets_fill_sm_counts_and_dense_peaks():
    """H100 SXM5: 132 SMs and 989.4 TFLOP/s dense BF16 (H100 whitepaper, 2022); B200: 148
    SMs."""
    shown = C.resolve("gemm_waves", gpu="H100 SXM")
    assert (shown["sms"], shown["peak_flops"]) == (132, 989.4)
    assert C.resolve("gemm_waves", gpu="B200")["sms"] == 148


def test_gemm_waves_tile_help_names_the_orientation_without_a_fifth_wave():
    """The tile-columns help says 128 × 256 tiles run 4,097 × 4,096 in 4 waves on an H100
    where 256 × 128 need 5 (lesson 3, section 6): both counts come from the calculator."""
    spec = C.get("gemm_waves")
    help_text = next(i for i in spec.inputs if i.name == "tile_n").help
    assert "(128 × 256)" in help_text and "4 waves, not 5" in help_text
    waves = {tiles: C.compute("gemm_waves", gpu="H100 SXM", m=4097, n=4096, k=4096,
                              tile_m=tiles[0], tile_n=tiles[1])["waves"]
             for tiles in ((256, 128), (128, 256))}
    assert waves == {(256, 128): 5, (128, 256): 4}


def test_gemm_waves_more_tiles_per_sm_never_slow_a_compute_bound_gemm():
    """Review r22 F1: at 4,097 × 4,096 × 4,096 (544 tiles of 256 × 128, H100 SXM) the old
    model gave every slot 1/(SMs × b) of the peak however few tiles a wave held: 32 tiles
    per SM predicted 1.15 ms and 2 predicted 215 µs against 179 µs for 1. The tiles on an SM
    share the whole SM: ceil(544 / 132) = 5 tiles on the busiest SM whatever b is, the
    lesson's 179 µs; b only regroups them into waves (5, 3, then 1)."""
    runs = {b: C.evaluate("gemm_waves", {"m": 4097, "blocks_per_sm": b})
            for b in (1, 2, 32)}
    assert all(r["ok"] for r in runs.values())
    assert {b: r["text"]["time"] for b, r in runs.items()} == {1: "179 µs", 2: "179 µs",
                                                                32: "179 µs"}
    assert {b: r["values"]["waves"] for b, r in runs.items()} == {1: 5, 2: 3, 32: 1}
    assert {r["values"]["tiles_per_sm"] for r in runs.values()} == {5}
    # the useful share and the achieved rate say the same as the time
    for r in runs.values():
        out = r["values"]
        assert out["achieved"] == pytest.approx(out["efficiency"] * 989.4e12)


def test_coalescing_best_practices_guide():
    """CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory": 4-byte words
    misaligned by one take five 32-byte sectors (80 %); a stride of 2 gives 50 %."""
    shifted = C.compute("coalescing", offset_elements=1)
    assert (shifted["sectors"], shifted["efficiency"]) == (5, 0.8)
    assert C.compute("coalescing", stride=2)["efficiency"] == 0.5
    wide = C.compute("coalescing", stride=1024)
    assert wide["bytes_per_useful_byte"] == 8.0
    assert wide["useful_bandwidth"] == pytest.approx(3.35e12 / 8)


def test_coalescing_useful_bandwidth_shows_three_significant_digits():
    """Review r22 F12: a stride of 8 leaves 12.5 % of the H100 SXM's 3.35 TB/s, which the
    widget printed as "418.75 GB/s" beside "1.68 TB/s"; the lesson writes 419 GB/s. The
    output now shows 3 significant digits, as its neighbours do."""
    text = {s: C.evaluate("coalescing", {"stride": s})["text"]["useful_bandwidth"]
            for s in (1, 2, 8)}
    assert text == {1: "3.35 TB/s", 2: "1.68 TB/s", 8: "419 GB/s"}
    # a diff review the same day: the prefix is the rounded figure's (999.6 GB/s to three
    # figures is 1.00 TB/s, not "1,000 GB/s")
    from gpulesson.calculators.formatting import format_output
    rate = C.get("coalescing").output("useful_bandwidth")
    assert format_output(rate, 999.6e9) == "1.00 TB/s"


def test_tiled_matmul_pmpp_factor_of_the_tile_width():
    """Hwu, Kirk & El Hajj, Programming Massively Parallel Processors (4th ed.), ch. 5: 16 ×
    16 tiles cut global-memory accesses by a factor of 16; the H100 SXM's FP32 ridge is
    66.9 / 3.35 = 20 FLOP/byte (H100 whitepaper), above 32 × 32 FP32 tiles (8 FLOP/byte)."""
    naive = C.compute("tiled_matmul", tile=1)
    tiled = C.compute("tiled_matmul", tile=16)
    assert naive["bytes"] / tiled["bytes"] == pytest.approx(16, rel=0.01)
    default = C.compute("tiled_matmul")
    assert default["ridge_point"] == pytest.approx(20.0, abs=0.05)
    assert default["bound"] == "memory" and default["intensity"] < default["ridge_point"]
    assert default["shared_per_block"] == 2 * 32 * 32 * 4
