"""How an NVIDIA GPU executes a kernel: occupancy, waves, tile quantization, coalescing and
shared-memory tiling, as formulas.

A kernel runs as a *grid* of *thread blocks*; each block runs on one streaming
multiprocessor (SM) as *warps* of 32 threads. How many blocks an SM holds at once
(:func:`occupancy`), how many rounds of blocks the whole GPU needs (:func:`waves`,
:func:`gemm_waves`), how many bytes a warp's load really moves (:func:`coalescing`), how
much work a block does per byte it loads (:func:`tiled_matmul_intensity`) and what a
branch costs a warp whose threads disagree (:func:`warp_divergence`) all follow from a few
architectural limits per compute capability (:data:`ARCHITECTURES`) and from each GPU's SM
count (:data:`GPU_EXECUTION`). Both live with the GPUs' other specifications, with their
sources, in ``gpulesson/data/gpus.json`` (read through :mod:`gpulesson.hardware`).

Sources
-------
* NVIDIA, *CUDA C++ Programming Guide*, "Compute Capabilities", table "Technical
  Specifications per Compute Capability" (threads, warps and blocks per SM, registers,
  shared memory per SM and per block), and the per-architecture sections ("the CUDA
  driver reserves 1 KB of shared memory per thread block" from compute capability 8.0 on;
  the shared-memory carveouts).
* NVIDIA, *CUDA Occupancy Calculator* and ``cuda_occupancy.h`` (shipped with the CUDA
  toolkit; what ``cudaOccupancyMaxActiveBlocksPerMultiprocessor`` computes): registers are
  allocated per warp in units of 256, in the SM's 4 register-file partitions; shared memory
  per block in units of 128 bytes (256 before compute capability 8.0).
* NVIDIA, *CUDA C++ Best Practices Guide*, "Occupancy" and "Coalesced Access to Global
  Memory" (32-byte sectors; the misaligned and strided copies).
* NVIDIA, *Matrix Multiplication Background User's Guide* (DU-09799-001, 2023), "Dimension
  Quantization Effects": tile quantization and wave quantization.
* SM counts: the architecture whitepapers (V100, A100, H100, Ada) and NVIDIA's Blackwell
  documentation; see :data:`GPU_EXECUTION`.

All sizes are in bytes (SI base units); shared-memory limits are given by NVIDIA in KiB
(1 KB = 1,024 bytes in those tables), stored here in bytes.

Standard library only: this module also runs in the browser (Pyodide).
Taught in: ``notebooks/inside_the_gpu.ipynb``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from gpulesson import _validate as v
from gpulesson import gemm, hardware

__all__ = [
    "ARCHITECTURES",
    "GPU_EXECUTION",
    "NOT_COVERED",
    "BranchCost",
    "Coalescing",
    "GPUExecution",
    "GemmWaves",
    "Occupancy",
    "SMLimits",
    "branch_cost",
    "coalescing",
    "gemm_time",
    "gemm_waves",
    "gpu_execution",
    "occupancy",
    "sm_limits",
    "tile_efficiency",
    "tiled_matmul_bytes",
    "tiled_matmul_intensity",
    "tiles",
    "warp_divergence",
    "warp_sectors",
    "wave_efficiency",
    "waves",
]

KIB = 1024



# ---------------------------------------------------------------------------------------
# Architectural limits per compute capability


@dataclass(frozen=True)
class SMLimits:
    """What one SM of a compute capability can hold at once.

    Attributes
    ----------
    compute_capability, architecture:
        e.g. ``"9.0"``, ``"Hopper"``.
    max_threads_per_sm:
        resident threads per SM (2,048 on 7.0, 8.0, 9.0, 10.0).
    max_blocks_per_sm:
        resident thread blocks per SM.
    shared_memory_per_sm:
        the largest shared-memory carveout of the SM, bytes.
    shared_memory_per_block:
        the most shared memory one block may use (with the opt-in above 48 KiB), bytes.
    shared_memory_carveouts:
        the carveout sizes the SM can be configured to, bytes.
    shared_memory_allocation_unit:
        a block's shared memory is allocated in multiples of this, bytes.
    reserved_shared_memory_per_block:
        shared memory the CUDA driver reserves for every block (1 KiB from 8.0), bytes.
    warp_size, max_threads_per_block:
        32 and 1,024 on every architecture here.
    registers_per_sm, max_registers_per_block, max_registers_per_thread:
        32-bit registers: 65,536 per SM and per block, 255 per thread.
    register_allocation_unit:
        registers are allocated to a warp in multiples of this (256).
    register_partitions:
        the SM's register file is split into this many partitions (4), one per warp
        scheduler; each holds a whole number of warps, so warps per SM come in multiples
        of 4 when registers limit them (the calculator's "warp allocation granularity").
    source:
        where the figures come from.
    """

    compute_capability: str
    architecture: str
    max_threads_per_sm: int
    max_blocks_per_sm: int
    shared_memory_per_sm: int
    shared_memory_per_block: int
    shared_memory_carveouts: tuple[int, ...]
    shared_memory_allocation_unit: int
    reserved_shared_memory_per_block: int
    warp_size: int
    max_threads_per_block: int
    registers_per_sm: int
    max_registers_per_block: int
    max_registers_per_thread: int
    register_allocation_unit: int
    register_partitions: int
    source: str

    @property
    def max_warps_per_sm(self) -> int:
        """Resident warps per SM: ``max_threads_per_sm / warp_size``."""
        return self.max_threads_per_sm // self.warp_size


def _limits(cc: str, row: Mapping[str, Any]) -> SMLimits:
    """One ``compute_capabilities`` row of ``gpus.json`` (sizes in KiB there) as limits."""
    rest = {key: value for key, value in row.items()
            if key not in ("sources", "source") and not key.endswith("_kib")}
    return SMLimits(compute_capability=cc,
                    shared_memory_per_sm=row["shared_memory_per_sm_kib"] * KIB,
                    shared_memory_per_block=row["shared_memory_per_block_kib"] * KIB,
                    shared_memory_carveouts=tuple(size * KIB for size
                                                  in row["shared_memory_carveouts_kib"]),
                    source=row["source"], **rest)


#: The limits of each compute capability (keys ``"6.0"`` ... ``"10.0"``), read-only: the
#: ``compute_capabilities`` table of ``gpulesson/data/gpus.json``, with its sources.
ARCHITECTURES: Mapping[str, SMLimits] = MappingProxyType({
    cc: _limits(cc, row) for cc, row in hardware.COMPUTE_CAPABILITIES.items()})


@dataclass(frozen=True)
class GPUExecution:
    """A GPU's compute capability and SM count, with the source of the count."""

    name: str
    compute_capability: str
    sms: int
    source: str

    @property
    def limits(self) -> SMLimits:
        """The per-SM limits of its compute capability."""
        return ARCHITECTURES[self.compute_capability]


#: SM counts of the course's NVIDIA GPUs (names as in :data:`gpulesson.hardware.GPUS`):
#: each GPU's ``execution`` entry in ``gpus.json``.
GPU_EXECUTION: Mapping[str, GPUExecution] = MappingProxyType({
    name: GPUExecution(name, spec.compute_capability, spec.sms, spec.figure_sources["sms"])
    for name, spec in hardware.GPUS.items()
    if spec.compute_capability is not None and spec.sms is not None})

#: NVIDIA GPUs of :data:`gpulesson.hardware.GPUS` without an entry above, and why: the
#: execution calculators leave them out of their menus rather than guess.
NOT_COVERED: Mapping[str, str] = MappingProxyType({
    name: spec.execution_note for name, spec in hardware.GPUS.items() if spec.execution_note})


_GPU_ALIASES = {"V100": "V100 SXM", "A100": "A100 80GB", "H100": "H100 SXM",
                "H200 SXM": "H200", "B200 SXM": "B200", "GeForce RTX 4090": "RTX 4090"}


def gpu_execution(name: str) -> GPUExecution:
    """A GPU's compute capability and SM count (``gpu_execution("H100 SXM").sms == 132``).

    Lookup ignores case, spaces and hyphens; an unknown name raises ``KeyError`` listing the
    GPUs known here (NVIDIA only: other vendors' compute units follow other rules).
    """
    return v.lookup("GPU", name, GPU_EXECUTION, _GPU_ALIASES)[1]


def sm_limits(arch: str | SMLimits) -> SMLimits:
    """The limits of ``arch``: a compute capability (``"9.0"``), a GPU name (``"H100 SXM"``)
    or an :class:`SMLimits` itself."""
    if isinstance(arch, SMLimits):
        return arch
    if isinstance(arch, str) and arch.strip() in ARCHITECTURES:
        return ARCHITECTURES[arch.strip()]
    if isinstance(arch, str):
        try:
            return gpu_execution(arch).limits
        except KeyError:
            pass
    raise v.UnknownNameError(
        f"arch must be a compute capability ({', '.join(ARCHITECTURES)}) or a GPU "
        f"({', '.join(GPU_EXECUTION)}), got {arch!r}")


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


# ---------------------------------------------------------------------------------------
# Occupancy


@dataclass(frozen=True)
class Occupancy:
    """How many blocks of a kernel one SM runs at once, and what limits them.

    Attributes
    ----------
    blocks_per_sm, warps_per_sm:
        resident blocks and warps per SM.
    occupancy:
        resident warps / the SM's maximum warps (0 to 1).
    limited_by:
        the limits that set ``blocks_per_sm``: any of ``"warps"`` (threads per SM),
        ``"blocks"`` (blocks per SM), ``"registers"``, ``"shared memory"``.
    block_limits:
        blocks per SM each limit alone would allow (same keys).
    warps_per_block, registers_per_block, shared_memory_per_block:
        what one block is allocated (registers rounded per warp, shared memory rounded to
        the allocation unit, the driver's reserve included).
    shared_memory_carveout:
        the carveout the SM runs with, bytes.
    limits:
        the :class:`SMLimits` used.
    """

    blocks_per_sm: int
    warps_per_sm: int
    occupancy: float
    limited_by: tuple[str, ...]
    block_limits: Mapping[str, int]
    warps_per_block: int
    registers_per_block: int
    shared_memory_per_block: int
    shared_memory_carveout: int
    limits: SMLimits

    @property
    def threads_per_sm(self) -> int:
        """Resident warp lanes per SM, ``warps_per_sm * 32``: the resident threads when the
        block size is a multiple of 32; otherwise the last warp of each block has idle
        lanes, counted here (``blocks_per_sm * threads_per_block`` counts threads)."""
        return self.warps_per_sm * self.limits.warp_size


def occupancy(threads_per_block: int, *, registers_per_thread: int = 32,
              shared_memory_per_block: int = 0, arch: str | SMLimits = "9.0",
              carveout: int | None = None) -> Occupancy:
    """Resident blocks and warps per SM for a kernel, as the CUDA Occupancy Calculator finds
    them.

    Four limits, each a number of blocks per SM; the smallest wins:

    * warps: ``floor(max_warps_per_sm / ceil(threads_per_block / 32))``;
    * blocks: the architecture's maximum resident blocks;
    * registers: a warp is allocated ``r_w = ceil(32 * registers_per_thread / 256) * 256``
      registers; each of the 4 register-file partitions (16,384 registers) holds
      ``floor(16384 / r_w)`` warps, so ``floor(4 * floor(16384 / r_w) / warps_per_block)``
      blocks;
    * shared memory: a block is allocated ``s_b = ceil((shared_memory_per_block + reserve)
      / unit) * unit`` bytes (reserve 1 KiB and unit 128 B from 8.0 on), and
      ``floor(carveout / s_b)`` blocks fit.

    Occupancy is resident warps over the SM's maximum warps. Assumptions, as in
    ``cudaOccupancyMaxActiveBlocksPerMultiprocessor``: the kernel has opted in to more than
    48 KiB of shared memory where it asks for more; the carveout is the largest unless
    ``carveout`` is given, and a given carveout too small for one block is raised to the
    next size that fits (the driver does this from Volta on). Higher occupancy hides more
    latency, but is no goal in itself: many fast kernels run at 25 to 50 %.

    Parameters
    ----------
    threads_per_block:
        1 to 1,024.
    registers_per_thread:
        registers the compiler allocated per thread, 1 to 255 (``--resource-usage``, or
        ``kernel.get_regs_per_thread()`` in Numba).
    shared_memory_per_block:
        static plus dynamic shared memory per block, bytes (0 to the architecture's
        per-block maximum, 232,448 bytes = 227 KiB on 9.0).
    arch:
        a compute capability (``"9.0"``), a GPU name (``"H100 SXM"``) or :class:`SMLimits`.
    carveout:
        the shared-memory carveout, bytes: one of the architecture's carveout sizes.

    Examples
    --------
    CUDA C++ Best Practices Guide, "Calculating Occupancy" (compute capability 7.0): 37
    registers per thread, 128-thread blocks: 12 blocks, 75 %; 320-thread blocks: 4 blocks,
    63 %.

    >>> occupancy(128, registers_per_thread=37, arch="7.0").occupancy
    0.75
    """
    lim = sm_limits(arch)
    threads = v.positive_int("threads_per_block", threads_per_block)
    if threads > lim.max_threads_per_block:
        raise ValueError(f"threads_per_block must be at most {lim.max_threads_per_block} on "
                         f"compute capability {lim.compute_capability}, got {threads}")
    regs = v.positive_int("registers_per_thread", registers_per_thread)
    if regs > lim.max_registers_per_thread:
        raise ValueError(f"registers_per_thread must be 1 to {lim.max_registers_per_thread}, "
                         f"got {regs}")
    smem = v.nonneg_int("shared_memory_per_block", shared_memory_per_block)
    if smem > lim.shared_memory_per_block:
        raise ValueError(
            f"shared_memory_per_block must be at most {lim.shared_memory_per_block:,} bytes "
            f"({lim.shared_memory_per_block // KIB} KiB) on compute capability "
            f"{lim.compute_capability}, got {smem:,}")

    warps_per_block = -(-threads // lim.warp_size)
    by_warps = lim.max_warps_per_sm // warps_per_block

    regs_per_warp = _round_up(regs * lim.warp_size, lim.register_allocation_unit)
    regs_per_block = regs_per_warp * warps_per_block
    # the hardware's launch check assumes warps spread over every partition
    regs_checked = regs_per_warp * _round_up(warps_per_block, lim.register_partitions)
    if max(regs_per_block, regs_checked) > lim.max_registers_per_block:
        raise ValueError(
            f"a block of {threads} threads at {regs} registers per thread needs "
            f"{max(regs_per_block, regs_checked):,} registers, more than the "
            f"{lim.max_registers_per_block:,} a block may use: lower registers_per_thread "
            "or threads_per_block")
    warps_per_partition = (lim.registers_per_sm // lim.register_partitions) // regs_per_warp
    by_registers = warps_per_partition * lim.register_partitions // warps_per_block

    smem_block = _round_up(smem + lim.reserved_shared_memory_per_block,
                           lim.shared_memory_allocation_unit)
    if carveout is None:
        carveout_bytes = lim.shared_memory_per_sm
    else:
        carveout_bytes = v.nonneg_int("carveout", carveout)
        if carveout_bytes not in lim.shared_memory_carveouts:
            sizes = ", ".join(str(size // KIB) for size in lim.shared_memory_carveouts)
            raise ValueError(f"carveout must be one of {sizes} KiB (in bytes) on compute "
                             f"capability {lim.compute_capability}, got {carveout_bytes:,}")
        if carveout_bytes < smem_block:
            carveout_bytes = min(c for c in lim.shared_memory_carveouts if c >= smem_block)
    by_smem = carveout_bytes // smem_block if smem_block else lim.max_blocks_per_sm

    block_limits = {"warps": by_warps, "blocks": lim.max_blocks_per_sm,
                    "registers": by_registers, "shared memory": by_smem}
    blocks = min(block_limits.values())
    warps = blocks * warps_per_block
    return Occupancy(
        blocks_per_sm=blocks, warps_per_sm=warps, occupancy=warps / lim.max_warps_per_sm,
        limited_by=tuple(k for k, n in block_limits.items() if n == blocks),
        block_limits=MappingProxyType(block_limits), warps_per_block=warps_per_block,
        registers_per_block=regs_per_block, shared_memory_per_block=smem_block,
        shared_memory_carveout=carveout_bytes, limits=lim)


# ---------------------------------------------------------------------------------------
# Waves and tile quantization


def waves(blocks: int, *, sms: int, blocks_per_sm: int = 1) -> int:
    """Rounds of blocks the GPU needs: ``ceil(blocks / (sms * blocks_per_sm))``.

    A *wave* is as many blocks as the GPU runs at once: one per SM times the blocks each SM
    holds (:func:`occupancy`). The last wave may be partly empty (the *tail*). Matrix
    Multiplication Background User's Guide, "Wave Quantization": an A100 (108 SMs) runs one
    256×128-tile block per SM, a wave of 108 tiles.
    """
    blocks = v.positive_int("blocks", blocks)
    sms = v.positive_int("sms", sms)
    blocks_per_sm = v.positive_int("blocks_per_sm", blocks_per_sm)
    return -(-blocks // (sms * blocks_per_sm))


def wave_efficiency(blocks: int, *, sms: int, blocks_per_sm: int = 1) -> float:
    """Share of the GPU's block slots that hold a block, over all waves:
    ``blocks / (waves * sms * blocks_per_sm)`` (1.0 when the blocks fill whole waves)."""
    n = waves(blocks, sms=sms, blocks_per_sm=blocks_per_sm)
    return blocks / (n * sms * blocks_per_sm)


def tiles(m: int, n: int, *, tile_m: int = 256, tile_n: int = 128) -> int:
    """Output tiles of an ``m × n`` result cut into ``tile_m × tile_n`` tiles:
    ``ceil(m / tile_m) * ceil(n / tile_n)``, one thread block each.

    Matrix Multiplication Background User's Guide, "Tile Quantization": a 256×256 output in
    128×128 tiles takes 4 blocks, a 257×256 one 6.
    """
    m = v.positive_int("m", m)
    n = v.positive_int("n", n)
    tile_m = v.positive_int("tile_m", tile_m)
    tile_n = v.positive_int("tile_n", tile_n)
    return -(-m // tile_m) * -(-n // tile_n)


def tile_efficiency(m: int, n: int, *, tile_m: int = 256, tile_n: int = 128) -> float:
    """Useful share of the tiles' work: ``m * n / (tiles * tile_m * tile_n)``.

    Every block does a whole tile's arithmetic, even where the tile hangs over the edge of
    the matrix (the library masks the stores, not the math).
    """
    count = tiles(m, n, tile_m=tile_m, tile_n=tile_n)  # checks every argument first
    return m * n / (count * tile_m * tile_n)


@dataclass(frozen=True)
class GemmWaves:
    """Tile and wave quantization of one GEMM on one GPU (see :func:`gemm_waves`)."""

    m: int
    n: int
    tile_m: int
    tile_n: int
    tiles_m: int
    tiles_n: int
    tiles: int
    wave_size: int
    waves: int
    last_wave_tiles: int
    tile_efficiency: float
    wave_efficiency: float
    sms: int

    @property
    def tiles_per_sm(self) -> int:
        """The most tiles one SM computes, ``ceil(tiles / sms)``: the tiles on an SM
        share it, so this (not the wave count) sets a compute-bound GEMM's time
        (:func:`gemm_time`). Equal to ``waves`` with one tile per SM."""
        return -(-self.tiles // self.sms)

    @property
    def efficiency(self) -> float:
        """Useful share of the GPU's arithmetic: tile efficiency × wave efficiency, equal to
        ``m * n / (tiles_per_sm * sms * tile_m * tile_n)`` (with one tile per SM,
        ``m * n / (waves * wave_size * tile_m * tile_n)``)."""
        return self.tile_efficiency * self.wave_efficiency

    @property
    def fractional_waves(self) -> float:
        """Tiles over the wave size, e.g. 4.12 for a fifth wave an eighth full."""
        return self.tiles / self.wave_size


def gemm_waves(m: int, n: int, *, sms: int, tile_m: int = 256, tile_n: int = 128,
               blocks_per_sm: int = 1) -> GemmWaves:
    """How a library's tiled GEMM spreads an ``m × n`` output over a GPU's SMs.

    ``tiles = ceil(m/tile_m) * ceil(n/tile_n)`` blocks run in ``waves = ceil(tiles /
    (sms * blocks_per_sm))`` rounds. Both roundings waste arithmetic: tile quantization
    where a tile overhangs the matrix, wave quantization where the last wave leaves SMs
    idle. Source: NVIDIA, Matrix Multiplication Background User's Guide (DU-09799-001,
    2023), "Dimension Quantization Effects". Defaults: 256×128 tiles, one block per SM, as
    in the guide's A100 example.

    Parameters
    ----------
    m, n:
        rows and columns of the output C.
    sms:
        the GPU's SMs (``gpu_execution("H100 SXM").sms``).
    tile_m, tile_n:
        the thread-block tile.
    blocks_per_sm:
        tiles one SM holds at once. They share the SM, so the wave efficiency is the share
        of the SMs' time that holds a tile, ``tiles / (ceil(tiles / sms) * sms)``: with one
        tile per SM, the share of the wave slots that hold one, ``tiles / (waves * sms)``;
        with more, a last wave of fewer tiles than SMs runs each at a whole SM's rate
        (review r22 F1).
    """
    tm = v.positive_int("tile_m", tile_m)
    tn = v.positive_int("tile_n", tile_n)
    count = tiles(m, n, tile_m=tm, tile_n=tn)
    sm_count = v.positive_int("sms", sms)
    size = sm_count * v.positive_int("blocks_per_sm", blocks_per_sm)
    rounds = waves(count, sms=sms, blocks_per_sm=blocks_per_sm)
    return GemmWaves(m=m, n=n, tile_m=tm, tile_n=tn, tiles_m=-(-m // tm), tiles_n=-(-n // tn),
                     tiles=count, wave_size=size, waves=rounds,
                     last_wave_tiles=count - (rounds - 1) * size,
                     tile_efficiency=tile_efficiency(m, n, tile_m=tm, tile_n=tn),
                     wave_efficiency=count / (-(-count // sm_count) * sm_count), sms=sm_count)


def gemm_time(m: int, n: int, k: int, *, peak_flops: float, sms: int, tile_m: int = 256,
              tile_n: int = 128, blocks_per_sm: int = 1) -> float:
    """Predicted time of a compute-bound tiled GEMM, seconds: whole waves of whole tiles.

    The tiles resident on one SM share the whole SM, so a wave lasts as long as its most
    loaded SM needs at the SM's full rate, ``peak_flops / sms``. Summed over the waves
    (``blocks_per_sm`` tiles on every SM in a full wave, ``ceil(last / sms)`` on the
    busiest in the last), that is

    ``t = ceil(tiles / sms) * 2 * tile_m * tile_n * k / (peak_flops / sms)``,

    with one tile per SM ``waves`` tile-times. The time grows in steps: one more row can add
    a whole wave. ``blocks_per_sm`` regroups the tiles into fewer, longer waves but leaves
    the time as it is: more resident blocks hide latency, which this model does not count
    (review r22 F1: a slot's fixed share of the peak made 32 blocks per SM 8× slower).
    Assumes the GEMM is compute-bound (large ``k`` and tiles; check with
    :func:`gpulesson.roofline.time`), every SM runs at the same rate, and the block
    scheduler deals the tiles out to the SMs in turn, so no SM holds more than
    ``ceil(tiles / sms)`` of them.
    """
    peak = v.positive_number("peak_flops", peak_flops)
    layout = gemm_waves(m, n, sms=sms, tile_m=tile_m, tile_n=tile_n,
                        blocks_per_sm=blocks_per_sm)
    per_tile = gemm.flops(layout.tile_m, k, layout.tile_n) / (peak / layout.sms)
    return layout.tiles_per_sm * per_tile


# ---------------------------------------------------------------------------------------
# Coalescing


@dataclass(frozen=True)
class Coalescing:
    """Bytes a warp's load moves against the bytes its threads asked for."""

    stride: int
    element_bytes: int
    offset_elements: int
    threads: int
    sector_bytes: int
    sectors: int
    useful_bytes: int

    @property
    def bytes_moved(self) -> int:
        """Sectors × sector size: what crosses between memory and the SM."""
        return self.sectors * self.sector_bytes

    @property
    def efficiency(self) -> float:
        """Useful bytes / bytes moved (1.0 for a perfectly coalesced load)."""
        return self.useful_bytes / self.bytes_moved

    @property
    def bytes_per_useful_byte(self) -> float:
        """Bytes moved per useful byte: 1 / efficiency."""
        return self.bytes_moved / self.useful_bytes


def coalescing(stride: int = 1, *, element_bytes: int = 4, offset_elements: int = 0,
               threads: int = 32, sector_bytes: int = 32) -> Coalescing:
    """The 32-byte sectors one warp's load touches when thread ``t`` reads element
    ``offset_elements + t * stride`` of an array aligned to a sector.

    Memory moves whole sectors (32 bytes on compute capability 6.0 and later); a warp's
    request is served by every sector any of its threads touches. Efficiency = the bytes the
    threads asked for / the bytes of those sectors. Published cases (CUDA C++ Best Practices
    Guide, "Coalesced Access to Global Memory"), 4-byte words: consecutive and aligned, 4
    sectors, 100 %; shifted by one word, 5 sectors, 80 %; stride 2, 50 %; a stride of 8 or
    more, a sector per thread, 32 sectors for 128 useful bytes, 12.5 %.

    Parameters
    ----------
    stride:
        elements between neighbouring threads' reads (1 = consecutive).
    element_bytes:
        bytes per element (4 for FP32; 1 to 128, a cache line).
    offset_elements:
        elements between the sector boundary and thread 0's element.
    threads:
        threads that read (a warp: 32; 1 to 1,024, a block's most).
    sector_bytes:
        the memory transaction size (32).
    """
    per_thread = warp_sectors(stride, element_bytes=element_bytes,
                              offset_elements=offset_elements, threads=threads,
                              sector_bytes=sector_bytes)
    touched = {s for sectors in per_thread for s in sectors}
    useful = threads * element_bytes  # a stride of at least 1: every thread its own element
    return Coalescing(stride=stride, element_bytes=element_bytes,
                      offset_elements=offset_elements, threads=threads,
                      sector_bytes=sector_bytes, sectors=len(touched), useful_bytes=useful)


#: The most threads one block holds, on every compute capability of the table (1,024).
_MOST_THREADS = max(limits.max_threads_per_block for limits in ARCHITECTURES.values())
#: A cache line, bytes: four 32-byte sectors, mapped to a 128-byte aligned segment of
#: device memory (CUDA C++ Programming Guide, global memory of compute capability 5.x on).
_LINE_BYTES = 128


def warp_sectors(stride: int = 1, *, element_bytes: int = 4, offset_elements: int = 0,
                 threads: int = 32, sector_bytes: int = 32) -> tuple[tuple[int, ...], ...]:
    """The sectors each thread's read falls in: entry ``t`` holds the indices (from the
    array's start, in ``sector_bytes`` units) of the sectors that element ``offset_elements
    + t * stride`` occupies, one sector unless an element straddles a boundary.

    :func:`coalescing` counts the distinct sectors of all the threads; this is the same
    mapping thread by thread (what the lesson's sector diagram draws). Arguments as in
    :func:`coalescing`.
    """
    stride = v.positive_int("stride", stride)
    eb = v.positive_int("element_bytes", element_bytes)
    offset = v.nonneg_int("offset_elements", offset_elements)
    threads = v.positive_int("threads", threads)
    sector = v.positive_int("sector_bytes", sector_bytes)
    # the mapping lists every thread and every sector of its element: bounded, so that a
    # mistyped count is refused by name instead of filling the memory
    if threads > _MOST_THREADS:
        raise ValueError(f"threads must be 1 to {_MOST_THREADS:,} (a warp is 32; a block "
                         f"holds at most {_MOST_THREADS:,} on every GPU here), got {threads:,}")
    if eb > _LINE_BYTES:
        raise ValueError(f"element_bytes must be 1 to {_LINE_BYTES} (one thread's element, at "
                         f"most a {_LINE_BYTES}-byte cache line), got {eb:,}")
    per_thread = []
    for t in range(threads):
        start = (offset + t * stride) * eb
        per_thread.append(tuple(range(start // sector, (start + eb - 1) // sector + 1)))
    return tuple(per_thread)


# ---------------------------------------------------------------------------------------
# Shared-memory tiling


def tiled_matmul_bytes(m: int, n: int, k: int, *, tile_m: int, tile_n: int | None = None,
                       bytes_per_element: float = 4) -> int:
    """Global-memory bytes a tiled matrix product reads and writes, with no cache between.

    Each block computes a ``tile_m × tile_n`` tile of C: it loads its ``tile_m`` rows of A
    and ``tile_n`` columns of B (through shared memory, a slice of K at a time) and writes
    its tile once. Every element of A is so loaded by ``ceil(n / tile_n)`` blocks, every
    element of B by ``ceil(m / tile_m)``:

    ``bytes = (m*k*ceil(n/tile_n) + k*n*ceil(m/tile_m) + m*n) * bytes_per_element``.

    ``tile_m = tile_n = 1`` is the naive kernel (one thread per output, every operand read
    from global memory). L2 caches serve part of these re-reads on a real GPU, so this is
    what the tiling alone guarantees.
    """
    m = v.positive_int("m", m)
    n = v.positive_int("n", n)
    k = v.positive_int("k", k)
    tm = v.positive_int("tile_m", tile_m)
    tn = tm if tile_n is None else v.positive_int("tile_n", tile_n)
    b = v.positive_number("bytes_per_element", bytes_per_element)
    elements = m * k * -(-n // tn) + k * n * -(-m // tm) + m * n
    return v.tensor_bytes(elements, b)


def tiled_matmul_intensity(m: int, n: int, k: int, *, tile_m: int, tile_n: int | None = None,
                           bytes_per_element: float = 4) -> float:
    """FLOP per global-memory byte of a tiled matrix product: ``2*m*n*k /``
    :func:`tiled_matmul_bytes`.

    With square ``T × T`` tiles and large sizes this is close to ``T / bytes_per_element``:
    each element brought into shared memory takes part in ``T`` multiply-adds (2T FLOPs) for
    its ``bytes_per_element`` bytes, where the naive kernel (``T = 1``) does 1 FLOP per
    4-byte FP32 load, 0.25 FLOP/byte. Source: Hwu, Kirk & El Hajj, *Programming Massively
    Parallel Processors* (4th ed., 2022), chapter 5, "Memory architecture and data locality".
    """
    return gemm.flops(m, k, n) / tiled_matmul_bytes(m, n, k, tile_m=tile_m, tile_n=tile_n,
                                                    bytes_per_element=bytes_per_element)


# ---------------------------------------------------------------------------------------
# Warp divergence


@dataclass(frozen=True)
class BranchCost:
    """A branch over many warps: issue time against the time if no warp diverged."""

    warps: int
    divergent_warps: int
    cycles: float
    useful_cycles: float

    @property
    def efficiency(self) -> float:
        """Useful lane-work / the lane-work the warps were busy for (1.0: no divergence)."""
        return self.useful_cycles / self.cycles

    @property
    def slowdown(self) -> float:
        """Cycles / useful cycles: 2.0 when every warp runs both sides of an even branch."""
        return self.cycles / self.useful_cycles


def warp_divergence(taken: int, *, then_cost: float = 1.0, else_cost: float = 1.0,
                    warp_size: int = 32) -> BranchCost:
    """One warp at an ``if``/``else`` where ``taken`` of its threads take the ``if`` side.

    A warp issues one instruction for all its threads at a time; when they disagree it runs
    the ``if`` side with the others masked off, then the ``else`` side. Cycles =
    ``then_cost * [taken > 0] + else_cost * [taken < warp_size]``; useful cycles (what the
    threads needed, shared across the warp) = ``(taken * then_cost + (warp_size - taken) *
    else_cost) / warp_size``. CUDA C++ Programming Guide, "SIMT Architecture": "If threads
    of a warp diverge via a data-dependent conditional branch, the warp executes each branch
    path taken, disabling threads that are not on that path."
    """
    warp_size = v.positive_int("warp_size", warp_size)
    taken = v.nonneg_int("taken", taken)
    if taken > warp_size:
        raise ValueError(f"taken must be 0 to warp_size ({warp_size}), got {taken}")
    then_cost = v.nonneg_number("then_cost", then_cost)
    else_cost = v.nonneg_number("else_cost", else_cost)
    if then_cost + else_cost == 0:
        raise ValueError("then_cost and else_cost must not both be 0")
    cycles = then_cost * (taken > 0) + else_cost * (taken < warp_size)
    useful = (taken * then_cost + (warp_size - taken) * else_cost) / warp_size
    return BranchCost(warps=1, divergent_warps=int(0 < taken < warp_size), cycles=cycles,
                      useful_cycles=useful)


def branch_cost(conditions: Iterable[bool], *, then_cost: float = 1.0,
                else_cost: float = 1.0, warp_size: int = 32) -> BranchCost:
    """A branch over a whole launch: ``conditions[i]`` is whether thread ``i`` takes the
    ``if`` side; threads ``32w`` to ``32w + 31`` form warp ``w`` (a last, partial warp
    counts its threads only). Sums :func:`warp_divergence` over the warps.

    ``if i % 2 == 0`` splits every warp (slowdown 2.0 for equal sides); ``if (i // 32) % 2 ==
    0`` splits none, though half the threads take each side.
    """
    flags = [bool(c) for c in conditions]
    if not flags:
        raise ValueError("conditions must hold at least one thread's condition, got none")
    size = v.positive_int("warp_size", warp_size)
    warps = divergent = 0
    cycles = useful = 0.0
    for start in range(0, len(flags), size):
        lanes = flags[start:start + size]
        one = warp_divergence(sum(lanes), then_cost=then_cost, else_cost=else_cost,
                              warp_size=len(lanes))
        warps += 1
        divergent += one.divergent_warps
        cycles += one.cycles
        useful += one.useful_cycles
    return BranchCost(warps=warps, divergent_warps=divergent, cycles=cycles,
                      useful_cycles=useful)


v.guard_module(globals())
