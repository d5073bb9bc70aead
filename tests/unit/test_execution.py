"""gpulesson.execution: occupancy, waves and tile quantization, coalescing, tiling and warp
divergence, held to NVIDIA's published figures.

Sources, cited in each test: the CUDA C++ Programming Guide (technical specifications per
compute capability, the register example of "Maximize Utilization"), the CUDA C++ Best
Practices Guide (occupancy, coalesced access), NVIDIA's Matrix Multiplication Background
User's Guide (tile and wave quantization), the Blackwell Tuning Guide, the architecture
whitepapers (SM counts) and Hwu, Kirk & El Hajj (tiling).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpulesson import execution as ex
from gpulesson import hardware

KIB = 1024

# ---------------------------------------------------------------------------------------
# Published figures: occupancy


def test_best_practices_guide_occupancy_examples() -> None:
    """CUDA C++ Best Practices Guide, "Calculating Occupancy" (compute capability 7.0): "a
    kernel with 128-thread blocks using 37 registers per thread results in an occupancy of
    75% with 12 active 128-thread blocks per multi-processor, whereas a kernel with
    320-thread blocks using the same 37 registers per thread results in an occupancy of 63%
    because only four 320-thread blocks can reside on a multiprocessor"."""
    small = ex.occupancy(128, registers_per_thread=37, arch="7.0")
    assert small.blocks_per_sm == 12 and small.occupancy == 0.75
    assert small.limited_by == ("registers",)
    large = ex.occupancy(320, registers_per_thread=37, arch="7.0")
    assert large.blocks_per_sm == 4 and math.floor(100 * large.occupancy + 0.5) == 63


def test_best_practices_guide_32_registers_for_full_occupancy() -> None:
    """Best Practices Guide, "Occupancy": on compute capability 7.0 (65,536 registers, 2,048
    resident threads) "for a multiprocessor to have 100% occupancy, each thread can use at
    most 32 registers"."""
    for threads in (128, 256, 512, 1024):
        assert ex.occupancy(threads, registers_per_thread=32, arch="7.0").occupancy == 1.0
        assert ex.occupancy(threads, registers_per_thread=33, arch="7.0").occupancy < 1.0


def test_programming_guide_register_example() -> None:
    """CUDA C++ Programming Guide, "Multiprocessor Level" (compute capability 6.x): with 64
    registers per thread and 512-thread blocks "two blocks (i.e., 32 warps) can reside on
    the multiprocessor ... But as soon as the kernel uses one more register, only one block
    (i.e., 16 warps) can be resident"."""
    two = ex.occupancy(512, registers_per_thread=64, arch="6.0")
    assert (two.blocks_per_sm, two.warps_per_sm) == (2, 32)
    one = ex.occupancy(512, registers_per_thread=65, arch="6.0")
    assert (one.blocks_per_sm, one.warps_per_sm) == (1, 16)


def test_technical_specifications_per_compute_capability() -> None:
    """CUDA C++ Programming Guide, "Technical Specifications per Compute Capability":
    resident threads and blocks per SM, shared memory per SM and per block (KB = 1,024
    bytes there), 64K registers, 255 per thread, 1,024 threads per block."""
    table = {  # cc: threads/SM, blocks/SM, shared KB per SM, shared KB per block
        "7.0": (2048, 32, 96, 96), "7.5": (1024, 16, 64, 64), "8.0": (2048, 32, 164, 163),
        "8.6": (1536, 16, 100, 99), "8.9": (1536, 24, 100, 99), "9.0": (2048, 32, 228, 227),
        "10.0": (2048, 32, 228, 227),
    }
    for cc, (threads, blocks, per_sm, per_block) in table.items():
        lim = ex.ARCHITECTURES[cc]
        assert (lim.max_threads_per_sm, lim.max_blocks_per_sm) == (threads, blocks), cc
        assert lim.shared_memory_per_sm == per_sm * KIB, cc
        assert lim.shared_memory_per_block == per_block * KIB, cc
        assert lim.registers_per_sm == lim.max_registers_per_block == 65536
        assert (lim.max_registers_per_thread, lim.max_threads_per_block) == (255, 1024)
        assert lim.max_warps_per_sm == threads // 32
        assert lim.reserved_shared_memory_per_block == (KIB if float(cc) >= 8 else 0)


def test_blackwell_tuning_guide_shared_memory() -> None:
    """NVIDIA Blackwell Tuning Guide: "Both the NVIDIA H100 GPU and the NVIDIA B200 GPU
    support shared memory capacities of 0, 8, 16, 32, 64, 100, 132, 164, 196 and 228 KB per
    SM ... CUDA reserves 1 KB of shared memory per thread block. Hence, the B200 GPU enables a
    single thread block to address up to 227 KB of shared memory"."""
    sizes = tuple(k * KIB for k in (0, 8, 16, 32, 64, 100, 132, 164, 196, 228))
    for name in ("H100 SXM", "B200"):
        lim = ex.sm_limits(name)
        assert lim.shared_memory_carveouts == sizes
        assert lim.shared_memory_per_block == 227 * KIB
    ex.occupancy(256, shared_memory_per_block=227 * KIB, arch="B200")
    with pytest.raises(ValueError, match="shared_memory_per_block must be at most 232,448"):
        ex.occupancy(256, shared_memory_per_block=227 * KIB + 1, arch="B200")


def test_shared_memory_reserve_and_granularity() -> None:
    """The 1 KB each block loses to the driver from 8.0 on (Programming Guide, compute
    capability 8.x: "the 1 KB of shared memory not made available to a thread block is
    reserved for system use"), in allocation units of 128 bytes (cuda_occupancy.h): on an
    H100, four blocks of 48 KiB take 4 × 49 KiB of the 228 KiB, a fifth would not fit."""
    occ = ex.occupancy(128, registers_per_thread=32, shared_memory_per_block=48 * KIB,
                       arch="9.0")
    assert occ.shared_memory_per_block == 49 * KIB
    assert occ.block_limits["shared memory"] == 4 and occ.limited_by == ("shared memory",)
    # on Volta the same block is rounded to 256 bytes and nothing is reserved
    volta = ex.occupancy(128, shared_memory_per_block=1000, arch="7.0")
    assert volta.shared_memory_per_block == 1024


def test_a_small_carveout_is_raised_to_fit_one_block() -> None:
    """From Volta on the driver raises a carveout too small for one block to the next size
    that fits (cudaOccSMemPerMultiprocessor in cuda_occupancy.h)."""
    occ = ex.occupancy(128, shared_memory_per_block=40 * KIB, arch="9.0", carveout=32 * KIB)
    assert occ.shared_memory_carveout == 64 * KIB and occ.blocks_per_sm == 1
    assert ex.occupancy(128, shared_memory_per_block=10 * KIB, arch="9.0",
                        carveout=100 * KIB).blocks_per_sm == 9


# ---------------------------------------------------------------------------------------
# Published figures: SM counts, tile and wave quantization


def test_sm_counts_from_the_whitepapers() -> None:
    """NVIDIA architecture whitepapers: V100 80 SMs, A100 108, H100 SXM5 132, H100 PCIe 114;
    the RTX 4090 128; B200 148 SMs."""
    counts = {"V100 SXM": 80, "A100 80GB": 108, "A100 40GB": 108, "H100 SXM": 132,
              "H100 PCIe": 114, "H200": 132, "B200": 148, "RTX 4090": 128}
    for name, sms in counts.items():
        assert ex.gpu_execution(name).sms == sms, name
    assert ex.gpu_execution("h100").name == "H100 SXM"


@pytest.mark.parametrize(("name", "printed"), [
    ("H200", "multi_processor_count=132"), ("B200", "multi_processor_count=148"),
    ("L4", "(58) Multiprocessors"),
])
def test_source_sm_counts_cite_a_source_that_prints_them(name: str, printed: str) -> None:
    """These SM counts cited the H200 and L4 datasheets, whose tables give rates, memory
    and power, and for the B200 the cudaDeviceProp reference page, which names the field,
    not a B200's value. What prints the counts: PyTorch's
    device properties on an H200 (132) and a B200 (148) (ai-bot-pro/achatbot,
    skywork_r1v.py, 2025-07-16) and CUDA's deviceQuery on an L4, 58 multiprocessors of
    128 CUDA cores (Alawaji214/GPU-Median-Blurring README, 2023-12-12)."""
    assert printed in ex.gpu_execution(name).source, ex.gpu_execution(name).source


def test_every_nvidia_gpu_of_the_catalogue_has_an_sm_count_or_a_reason() -> None:
    """Each NVIDIA GPU of the catalogue has an SM count, or a stated reason it has none."""
    nvidia = {name for name, spec in hardware.GPUS.items() if spec.vendor == "NVIDIA"}
    assert nvidia == set(ex.GPU_EXECUTION) | set(ex.NOT_COVERED)
    assert not set(ex.GPU_EXECUTION) & set(ex.NOT_COVERED)
    for name in ex.GPU_EXECUTION:
        assert name in hardware.GPUS


def test_matrix_multiplication_guide_tile_quantization() -> None:
    """Matrix Multiplication Background User's Guide, "Tile Quantization": a 256×256 output in
    128×128 tiles needs 4 thread blocks; at 257×256 it needs 6, two of them nearly empty."""
    assert ex.tiles(256, 256, tile_m=128, tile_n=128) == 4
    assert ex.tiles(257, 256, tile_m=128, tile_n=128) == 6
    assert ex.tile_efficiency(256, 256, tile_m=128, tile_n=128) == 1.0
    assert ex.tile_efficiency(257, 256, tile_m=128, tile_n=128) == pytest.approx(257 / 384)


@pytest.mark.parametrize(("m", "n"), [("abc", 2**40), (2**40, [1, 2])])
def test_tile_efficiency_checks_its_arguments_before_any_arithmetic(m: object,
                                                                     n: object) -> None:
    """Text times a huge count is a string of terabytes: ``m * n`` ran before the check
    and raised MemoryError (found by fuzzing); the refusal now names the argument."""
    with pytest.raises(TypeError, match=r"^(m|n) must be a positive integer"):
        ex.tile_efficiency(m, n)  # type: ignore[arg-type]


def test_matrix_multiplication_guide_wave_quantization() -> None:
    """Matrix Multiplication Background User's Guide, "Wave Quantization": "An NVIDIA A100 GPU
    has 108 SMs; in the particular case of 256x128 thread block tiles, it can execute one
    thread block per SM, leading to a wave size of 108 tiles", so utilisation is highest
    when the tiles are a multiple of 108 or just below; the guide's sweep fixes M = 2304 and
    K = 4096 and varies N."""
    a100 = ex.gpu_execution("A100 80GB").sms
    full = ex.gemm_waves(2304, 1536, sms=a100)
    assert (full.wave_size, full.tiles, full.waves, full.efficiency) == (108, 108, 1, 1.0)
    over = ex.gemm_waves(2304, 1537, sms=a100)
    assert (over.tiles, over.waves, over.last_wave_tiles) == (117, 2, 9)
    assert over.efficiency == pytest.approx(2304 * 1537 / (2 * 108 * 256 * 128))
    t = [ex.gemm_time(2304, n, 4096, peak_flops=312e12, sms=a100) for n in (1536, 1537)]
    assert t[1] == pytest.approx(2 * t[0])


def test_one_more_row_can_cost_a_wave_on_an_h100() -> None:
    """The lesson's question: 4096 × 4096 fills 512 of 528 slots of four H100 waves (132
    SMs, 256×128 tiles); 4097 rows add a row of 32 tiles and a fifth, nearly empty wave."""
    h100 = ex.gpu_execution("H100 SXM").sms
    square = ex.gemm_waves(4096, 4096, sms=h100)
    taller = ex.gemm_waves(4097, 4096, sms=h100)
    assert (square.tiles, square.waves, taller.tiles, taller.waves) == (512, 4, 544, 5)
    times = [ex.gemm_time(m, 4096, 4096, peak_flops=989.4e12, sms=h100) for m in (4096, 4097)]
    assert times[1] / times[0] == pytest.approx(5 / 4)


# ---------------------------------------------------------------------------------------
# Published figures: coalescing, tiling, divergence


def test_best_practices_guide_coalescing() -> None:
    """CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory" (32-byte sectors,
    4-byte words): aligned sequential access, four sectors; misaligned by one word, five
    sectors (80 % efficiency); "a stride of 2 results in a 50% of load/store efficiency";
    large strides, one 32-byte sector per thread."""
    aligned = ex.coalescing(1)
    assert (aligned.sectors, aligned.efficiency, aligned.bytes_moved) == (4, 1.0, 128)
    shifted = ex.coalescing(1, offset_elements=1)
    assert (shifted.sectors, shifted.efficiency) == (5, 0.8)
    assert ex.coalescing(2).efficiency == 0.5
    for stride in (8, 32, 1000):
        wide = ex.coalescing(stride)
        assert wide.sectors == 32 and wide.bytes_per_useful_byte == 8.0


@pytest.mark.parametrize(("kwargs", "name", "most"), [
    ({"threads": 1025}, "threads", "1,024"), ({"threads": 2**40}, "threads", "1,024"),
    ({"element_bytes": 129}, "element_bytes", "128"),
    ({"element_bytes": 2**40}, "element_bytes", "128")])
def test_a_warps_sectors_refuse_counts_past_a_block_or_a_cache_line(kwargs, name, most) -> None:
    """The mapping lists every thread and every sector of its element: 2**40 threads, or an
    element of 2**40 bytes, ran until the memory was full. Both are refused by name, with
    the range: at most a block's 1,024 threads, an element of at most a 128-byte line."""
    for function in (ex.warp_sectors, ex.coalescing):
        with pytest.raises(ValueError, match=rf"{name} must be 1 to {most}\b.*got "):
            function(1, **kwargs)
    widest = ex.coalescing(1, threads=1024, element_bytes=128)
    assert widest.sectors == 1024 * 128 // 32 and widest.efficiency == 1.0


def test_best_practices_guide_misaligned_warp_thread_by_thread() -> None:
    """The guide's misaligned case (4-byte words shifted by one): threads 0-30 share the
    first four sectors and thread 31 alone brings the fifth; an element that straddles a
    sector boundary needs both sectors."""
    shifted = ex.warp_sectors(1, offset_elements=1)
    assert len(shifted) == 32
    assert {s for t in shifted[:31] for (s,) in [t]} == {0, 1, 2, 3}
    assert shifted[31] == (4,)
    assert ex.warp_sectors(1, element_bytes=12, threads=3) == ((0,), (0,), (0, 1))
    assert [t for (t,) in ex.warp_sectors(8)] == list(range(32))  # a sector per thread


def test_pmpp_tiling_divides_global_traffic_by_the_tile_width() -> None:
    """Hwu, Kirk & El Hajj, Programming Massively Parallel Processors (4th ed.), chapter 5:
    "With 16 × 16 tiles, one can reduce the global memory accesses by a factor of 16"
    compared with the kernel that reads every operand from global memory."""
    n = 4096
    naive = ex.tiled_matmul_bytes(n, n, n, tile_m=1)
    tiled = ex.tiled_matmul_bytes(n, n, n, tile_m=16)
    assert naive / tiled == pytest.approx(16, rel=0.01)
    # the intensity approaches T / bytes_per_element
    assert ex.tiled_matmul_intensity(n, n, n, tile_m=1) == pytest.approx(0.25, rel=0.001)
    assert ex.tiled_matmul_intensity(n, n, n, tile_m=32) == pytest.approx(8, rel=0.01)
    assert ex.tiled_matmul_intensity(n, n, n, tile_m=128, bytes_per_element=2) == \
        pytest.approx(64, rel=0.02)


def test_programming_guide_simt_divergence() -> None:
    """CUDA C++ Programming Guide, "SIMT Architecture": a diverging warp "executes each branch
    path taken, disabling threads that are not on that path"; warps that agree run one
    path. An even/odd branch splits every warp; a branch on the warp index splits none."""
    split = ex.warp_divergence(16, then_cost=3, else_cost=5)
    assert split.cycles == 8 and split.divergent_warps == 1
    assert split.efficiency == pytest.approx(4 / 8)
    assert ex.warp_divergence(32, then_cost=3, else_cost=5).cycles == 3
    assert ex.warp_divergence(0, then_cost=3, else_cost=5).cycles == 5
    even_odd = ex.branch_cost([i % 2 == 0 for i in range(1024)])
    assert (even_odd.warps, even_odd.divergent_warps, even_odd.slowdown) == (32, 32, 2.0)
    by_warp = ex.branch_cost([(i // 32) % 2 == 0 for i in range(1024)])
    assert (by_warp.divergent_warps, by_warp.slowdown) == (0, 1.0)


# ---------------------------------------------------------------------------------------
# Properties

threads = st.integers(1, 1024)
registers = st.integers(1, 255)
archs = st.sampled_from(sorted(ex.ARCHITECTURES))


@given(threads=threads, regs=registers, arch=archs, smem=st.integers(0, 96 * KIB))
def test_occupancy_is_the_tightest_limit(threads: int, regs: int, arch: str,
                                         smem: int) -> None:
    try:
        occ = ex.occupancy(threads, registers_per_thread=regs, shared_memory_per_block=smem,
                           arch=arch)
    except ValueError:
        return  # a block that cannot launch
    assert occ.blocks_per_sm == min(occ.block_limits.values()) >= 1
    assert 0 < occ.occupancy <= 1
    assert occ.warps_per_sm <= occ.limits.max_warps_per_sm
    assert occ.blocks_per_sm * occ.registers_per_block <= occ.limits.registers_per_sm
    assert occ.blocks_per_sm * occ.shared_memory_per_block <= occ.shared_memory_carveout
    assert occ.limited_by and all(occ.block_limits[k] == occ.blocks_per_sm
                                  for k in occ.limited_by)


@given(threads=threads, regs=st.integers(1, 254), arch=archs)
def test_more_registers_never_raise_occupancy(threads: int, regs: int, arch: str) -> None:
    try:
        more = ex.occupancy(threads, registers_per_thread=regs + 1, arch=arch)
    except ValueError:
        return
    assert ex.occupancy(threads, registers_per_thread=regs, arch=arch).occupancy >= \
        more.occupancy


@given(m=st.integers(1, 20_000), n=st.integers(1, 20_000), sms=st.integers(1, 200),
       tm=st.sampled_from([64, 128, 256]), tn=st.sampled_from([64, 128, 256]),
       per_sm=st.integers(1, 4))
def test_quantization_accounts_for_every_tile(m: int, n: int, sms: int, tm: int, tn: int,
                                              per_sm: int) -> None:
    g = ex.gemm_waves(m, n, sms=sms, tile_m=tm, tile_n=tn, blocks_per_sm=per_sm)
    assert (g.waves - 1) * g.wave_size < g.tiles <= g.waves * g.wave_size
    assert 1 <= g.last_wave_tiles <= g.wave_size
    assert 0 < g.efficiency <= 1
    busiest = -(-g.tiles // sms)  # tiles on the busiest SM
    assert g.tiles_per_sm == busiest
    assert math.isclose(g.efficiency, m * n / (busiest * sms * tm * tn))
    if per_sm == 1:
        assert math.isclose(g.efficiency, m * n / (g.waves * g.wave_size * tm * tn))


@given(m=st.integers(1, 20_000), n=st.integers(1, 20_000), sms=st.integers(1, 200),
       per_sm=st.integers(2, 32))
def test_more_tiles_per_sm_leave_a_compute_bound_gemm_time_alone(m: int, n: int, sms: int,
                                                                 per_sm: int) -> None:
    """Review r22 F1: the tiles resident on an SM share it, so holding more of them at once
    regroups the waves but neither slows nor speeds a compute-bound GEMM (the old model
    gave a slot 1/(sms × blocks_per_sm) of the peak, 8× slower at 32 per SM)."""
    one = ex.gemm_time(m, n, 4096, peak_flops=989.4e12, sms=sms)
    more = ex.gemm_time(m, n, 4096, peak_flops=989.4e12, sms=sms, blocks_per_sm=per_sm)
    assert math.isclose(more, one)


@given(stride=st.integers(1, 64), eb=st.sampled_from([1, 2, 4, 8, 16]),
       offset=st.integers(0, 64))
def test_coalescing_never_moves_less_than_asked(stride: int, eb: int, offset: int) -> None:
    c = ex.coalescing(stride, element_bytes=eb, offset_elements=offset)
    assert c.useful_bytes <= c.bytes_moved
    assert c.sectors <= 32 * (1 + -(-eb // 32))
    assert ex.coalescing(stride, element_bytes=eb).efficiency >= \
        ex.coalescing(stride * 2, element_bytes=eb).efficiency
    per_thread = ex.warp_sectors(stride, element_bytes=eb, offset_elements=offset)
    assert len({s for t in per_thread for s in t}) == c.sectors


@given(tile=st.integers(1, 256), n=st.integers(1, 3000))
def test_bigger_tiles_never_move_more(tile: int, n: int) -> None:
    assert ex.tiled_matmul_bytes(n, n, n, tile_m=tile) >= \
        ex.tiled_matmul_bytes(n, n, n, tile_m=tile + 1)


# ---------------------------------------------------------------------------------------
# Bad input names the argument, the value and the range


@pytest.mark.parametrize(("call", "message"), [
    (lambda: ex.occupancy(0), "threads_per_block must be a positive integer, got 0"),
    (lambda: ex.occupancy(1025), "threads_per_block must be at most 1024"),
    (lambda: ex.occupancy(128, registers_per_thread=256), "registers_per_thread must be 1 to "
     "255, got 256"),
    (lambda: ex.occupancy(128, shared_memory_per_block=-1),
     "shared_memory_per_block must be a non-negative integer, got -1"),
    (lambda: ex.occupancy(128, shared_memory_per_block=100 * KIB, arch="8.6"),
     "shared_memory_per_block must be at most 101,376 bytes"),
    (lambda: ex.occupancy(1024, registers_per_thread=65), "needs 73,728 registers, more than "
     "the 65,536"),
    (lambda: ex.occupancy(128, arch="3.5"), "arch must be a compute capability"),
    (lambda: ex.occupancy(128, carveout=1000), "carveout must be one of 0, 8, 16"),
    (lambda: ex.waves(0, sms=132), "blocks must be a positive integer, got 0"),
    (lambda: ex.gemm_waves(4096, 4096, sms=0), "sms must be a positive integer, got 0"),
    (lambda: ex.gemm_time(64, 64, 64, peak_flops=0, sms=1), "peak_flops must be a finite "
     "positive number, got 0"),
    (lambda: ex.coalescing(0), "stride must be a positive integer, got 0"),
    (lambda: ex.warp_divergence(33), "taken must be 0 to warp_size (32), got 33"),
    (lambda: ex.warp_divergence(3, then_cost=0, else_cost=0), "must not both be 0"),
    (lambda: ex.branch_cost([]), "conditions must hold at least one"),
    (lambda: ex.gpu_execution("MI300X"), "unknown GPU 'MI300X'; known GPUs: V100 SXM"),
])
def test_errors_name_the_argument(call, message: str) -> None:
    with pytest.raises((ValueError, KeyError)) as info:
        call()
    assert message in str(info.value)


def test_counts_refuse_bools_and_floats() -> None:
    with pytest.raises(TypeError, match="threads_per_block"):
        ex.occupancy(True)
    with pytest.raises(TypeError, match="registers_per_thread"):
        ex.occupancy(128, registers_per_thread=32.0)
