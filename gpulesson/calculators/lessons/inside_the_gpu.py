"""Lesson ``inside_the_gpu``: occupancy, tile and wave quantization of a GEMM, coalescing
of a strided load, and the intensity of a tiled matrix product."""

from __future__ import annotations

from typing import Any

from gpulesson import execution, gemm, memory, roofline
from gpulesson.calculators import shared
from gpulesson.calculators.spec import (
    Calculator,
    Choice,
    Input,
    Integer,
    Number,
    Output,
    Select,
)

LESSON = "inside_the_gpu"

_GPU_CHOICES = tuple(Choice(name, f"{name} (compute capability {g.compute_capability})")
                     for name, g in execution.GPU_EXECUTION.items())


#: The warp model of these calculators is NVIDIA's: said where a menu also offers AMD GPUs.
_NVIDIA_MODEL = ("The model is NVIDIA's (32-thread warps, 32-byte sectors); AMD's CDNA GPUs in "
                 "the menu run 64-wide wavefronts with their own cache-line sizes, so for them "
                 "it is only a first approximation.")


def _gpu_select(default: str = "H100 SXM") -> Input:
    return Select("gpu", "GPU", default=default, choices=_GPU_CHOICES,
                  help="Sets the per-SM limits of its compute capability. "
                       f"{shared.EXECUTION_NOTE} {shared.EXECUTION_COVERAGE}")


def _occupancy(*, gpu: str, threads_per_block: int, registers_per_thread: int,
               shared_memory_per_block: float) -> dict[str, Any]:
    spec = execution.gpu_execution(gpu)
    occ = execution.occupancy(threads_per_block, registers_per_thread=registers_per_thread,
                              shared_memory_per_block=round(shared_memory_per_block),
                              arch=spec.compute_capability)
    return {
        "blocks_per_sm": occ.blocks_per_sm, "warps_per_sm": occ.warps_per_sm,
        "occupancy": occ.occupancy, "limited_by": ", ".join(occ.limited_by),
        "registers_per_block": occ.registers_per_block,
        "shared_memory_allocated": occ.shared_memory_per_block,
        # threads, not warp lanes: a partial warp's spare lanes hold none (review r22 F2)
        "resident_threads": occ.blocks_per_sm * threads_per_block * spec.sms,
        "idle_lanes": occ.threads_per_sm - occ.blocks_per_sm * threads_per_block,
    }


OCCUPANCY = Calculator(
    name="occupancy",
    title="Occupancy of a kernel",
    description="Blocks and warps one SM holds at once for a kernel's block size, registers "
                "per thread and shared memory per block, and which limit sets them.",
    lesson=LESSON,
    inputs=(
        _gpu_select(),
        Integer("threads_per_block", "Threads per block", default=256, range=(1, 1024),
                help="blockDim.x × blockDim.y × blockDim.z of the launch. A size that is "
                     "not a multiple of 32 leaves lanes of its last warp idle: they count "
                     "toward occupancy but run no thread."),
        Integer("registers_per_thread", "Registers per thread", default=32, range=(1, 255),
                help="What the compiler allocated (nvcc --resource-usage, or Numba's "
                     "kernel.get_regs_per_thread())."),
        Number("shared_memory_per_block", "Shared memory per block", default=0,
               range=(0, 227), step=1, unit="KiB", scale=1024, dimension="bytes",
               help="Static plus dynamic shared memory of one block, KiB (1,024 bytes); "
                    "the driver adds 1 KiB per block from compute capability 8.0."),
    ),
    outputs=(
        Output("blocks_per_sm", "Blocks per SM", "count"),
        Output("warps_per_sm", "Warps per SM", "count"),
        Output("occupancy", "Occupancy (warps / maximum)", "percent"),
        Output("limited_by", "Limited by", "text"),
        Output("registers_per_block", "Registers allocated per block", "count"),
        Output("shared_memory_allocated", "Shared memory allocated per block", "bytes",
               binary=True),
        Output("resident_threads", "Threads resident on the whole GPU", "count",
               help="Blocks per SM × threads per block × SMs: the idle lanes of a partial "
                    "warp are no threads."),
        Output("idle_lanes", "Idle warp lanes per SM (block size not a multiple of 32)",
               "count",
               help="Lanes of resident warps that hold no thread: warps per SM × 32 − "
                    "blocks per SM × threads per block. They occupy warp slots and issue "
                    "with their warp, doing nothing."),
    ),
    function=_occupancy,
    sources=("NVIDIA CUDA Occupancy Calculator and cuda_occupancy.h",
             "NVIDIA CUDA C++ Programming Guide, compute capabilities", shared.EXECUTION_NOTE),
)


#: M, N and K of the product C = A·B that the tiled kernels compute.
_SHAPE = (shared.matrix_dimension("m", "M (rows of C)"),
          shared.matrix_dimension("n", "N (columns of C)"),
          shared.matrix_dimension("k", "K (inner dimension)"))


def _gemm_waves(**kw: Any) -> dict[str, Any]:
    tiling = {name: kw[name] for name in ("sms", "tile_m", "tile_n", "blocks_per_sm")}
    layout = execution.gemm_waves(kw["m"], kw["n"], **tiling)
    time = execution.gemm_time(kw["m"], kw["n"], kw["k"], peak_flops=kw["peak_flops"],
                               **tiling)
    work = gemm.flops(kw["m"], kw["k"], kw["n"])
    return {
        "tiles": layout.tiles, "wave_size": layout.wave_size, "waves": layout.waves,
        "fractional_waves": layout.fractional_waves, "last_wave_tiles": layout.last_wave_tiles,
        "tiles_per_sm": layout.tiles_per_sm,
        "tile_efficiency": layout.tile_efficiency, "wave_efficiency": layout.wave_efficiency,
        "efficiency": layout.efficiency, "time": time, "achieved": work / time,
    }


GEMM_WAVES = Calculator(
    name="gemm_waves",
    title="Tile and wave quantization of a GEMM",
    description="How a tiled GEMM's output tiles fill the SMs of a GPU in waves, the "
                "arithmetic the rounding wastes, and the time it predicts for a "
                "compute-bound product.",
    lesson=LESSON,
    inputs=(
        *_SHAPE,
        Integer("tile_m", "Tile rows", default=256, range=(1, 1024),
                help="Rows of C one thread block computes (cuBLAS picks among 64 to 256)."),
        Integer("tile_n", "Tile columns", default=128, range=(1, 1024),
                help="Columns of C one thread block computes. Swap the two (128 × 256) for "
                     "the other orientation: at 4,097 × 4,096 it needs 4 waves, not 5, and a "
                     "library that holds both shapes picks the one with fewer waves."),
        Integer("blocks_per_sm", "Tiles per SM at once", default=1, range=(1, 32),
                help="1 for the large tiles of a big GEMM (the occupancy calculator says "
                     "how many fit). More make fewer, longer waves, not a different time: "
                     "the tiles on one SM share it, so the time is the most tiles any SM "
                     "computes, each at a whole SM's rate."),
        shared.dtype_input(),
        *shared.gpu_inputs("H100 SXM", sms=True, peak=True),
    ),
    outputs=(
        Output("tiles", "Output tiles (thread blocks)", "count"),
        Output("wave_size", "Tiles per wave", "count"),
        Output("waves", "Waves", "count"),
        Output("fractional_waves", "Tiles / wave size", "number"),
        Output("last_wave_tiles", "Tiles in the last wave", "count"),
        Output("tiles_per_sm", "Most tiles one SM computes (sets the time)", "count",
               help="ceil(tiles / SMs): the tiles on one SM share it, so a wave lasts as "
                    "long as its busiest SM needs at the SM's full rate."),
        Output("tile_efficiency", "Tile efficiency", "percent"),
        Output("wave_efficiency", "Wave efficiency", "percent",
               help="Tiles / (most tiles on one SM × SMs): the share of the SMs' time that "
                    "holds a tile. With one tile per SM, the share of the waves' slots."),
        Output("efficiency", "Useful share of the arithmetic", "percent"),
        Output("time", "Predicted time (arithmetic only: the busiest SM's tiles)", "seconds",
               help="Each tile's FLOPs at a whole SM's share of the peak, for the SM that "
                    "computes the most tiles. It counts no memory traffic: a product of "
                    "small tiles re-reads its operands more often (the tiled-matmul "
                    "calculator counts the requests), and may take longer."),
        Output("achieved", "Achieved FLOP/s", "flop/s"),
    ),
    function=_gemm_waves,
    sources=("NVIDIA Matrix Multiplication Background User's Guide (2023), dimension "
             "quantization effects", shared.EXECUTION_NOTE, shared.GPU_NOTE),
)


_ELEMENT_BYTES = tuple(Choice(str(b), f"{b} bytes") for b in (1, 2, 4, 8, 16))


def _coalescing(**kw: Any) -> dict[str, Any]:
    c = execution.coalescing(kw["stride"], element_bytes=int(kw["element_bytes"]),
                             offset_elements=kw["offset_elements"])
    return {"sectors": c.sectors, "bytes_moved": c.bytes_moved, "useful_bytes": c.useful_bytes,
            "efficiency": c.efficiency, "bytes_per_useful_byte": c.bytes_per_useful_byte,
            "useful_bandwidth": kw["bandwidth"] * c.efficiency}


COALESCING = Calculator(
    name="coalescing",
    title="Coalescing of a warp's load",
    description="The 32-byte sectors one warp's load touches when thread t reads element "
                "offset + t × stride, and the bandwidth left for useful bytes. "
                + _NVIDIA_MODEL,
    lesson=LESSON,
    inputs=(
        Integer("stride", "Stride between threads (elements)", default=1, range=(1, 4096)),
        Select("element_bytes", "Element size", default="4", choices=_ELEMENT_BYTES,
               help="4 bytes for FP32, 2 for BF16."),
        Integer("offset_elements", "Offset of thread 0 (elements)", default=0,
                range=(0, 64), help="Elements from a 32-byte boundary to thread 0's one."),
        *shared.gpu_inputs("H100 SXM", bandwidth=True),
    ),
    outputs=(
        Output("sectors", "32-byte sectors touched", "count"),
        Output("bytes_moved", "Bytes moved", "bytes"),
        Output("useful_bytes", "Bytes the threads asked for", "bytes"),
        Output("efficiency", "Efficiency (useful / moved)", "percent"),
        Output("bytes_per_useful_byte", "Bytes moved per useful byte", "ratio"),
        Output("useful_bandwidth", "Useful bandwidth at the peak", "bytes/s"),
    ),
    function=_coalescing,
    sources=("NVIDIA CUDA C++ Best Practices Guide, coalesced access to global memory",
             shared.GPU_NOTE),
)


def _tiled(**kw: Any) -> dict[str, Any]:
    b = memory.precision_bytes(kw["dtype"])
    m, n, k, tile = kw["m"], kw["n"], kw["k"], kw["tile"]
    intensity = execution.tiled_matmul_intensity(m, n, k, tile_m=tile, bytes_per_element=b)
    return {
        "bytes": execution.tiled_matmul_bytes(m, n, k, tile_m=tile, bytes_per_element=b),
        "intensity": intensity,
        "naive_intensity": execution.tiled_matmul_intensity(m, n, k, tile_m=1,
                                                            bytes_per_element=b),
        "ridge_point": roofline.ridge_point(kw["peak_flops"], kw["bandwidth"]),
        "bound": roofline.bound(intensity, kw["peak_flops"], kw["bandwidth"]),
        "attainable": roofline.attainable_flops(intensity, kw["peak_flops"], kw["bandwidth"]),
        "shared_per_block": memory.weight_bytes(2 * tile * tile, precision=kw["dtype"]),
    }


TILED_MATMUL = Calculator(
    name="tiled_matmul",
    title="Shared-memory tiling of a matrix product",
    description="Bytes requested from global memory and their arithmetic intensity for a "
                "matrix product whose blocks compute T × T tiles from shared memory, against "
                "the naive kernel and the GPU's DRAM ridge point. The L1 and L2 caches serve "
                "many of these requests, so the DRAM roofline bounds a kernel only when its "
                "requests miss the caches (the naive kernel's mostly hit them). "
                + _NVIDIA_MODEL,
    lesson=LESSON,
    inputs=(
        *_SHAPE,
        Integer("tile", "Tile width T", default=32, range=(1, 512),
                help="Each block computes a T × T tile of C; T = 1 is the naive kernel."),
        shared.dtype_input(default="fp32"),
        *shared.gpu_inputs("H100 SXM", peak=True, bandwidth=True),
    ),
    outputs=(
        Output("bytes", "Global-memory requests (bytes, before the caches)", "bytes"),
        Output("intensity", "Intensity of the requests", "intensity"),
        Output("naive_intensity", "Request intensity of the naive kernel", "intensity"),
        Output("ridge_point", "GPU ridge point (DRAM)", "intensity"),
        Output("bound", "Bound by, if every request went to DRAM", "text"),
        Output("attainable", "Attainable FLOP/s, if every request went to DRAM", "flop/s"),
        Output("shared_per_block", "Shared memory per block (two tiles)", "bytes",
               binary=True),
    ),
    function=_tiled,
    sources=("Hwu, Kirk & El Hajj 2022, Programming Massively Parallel Processors, ch. 5",
             shared.GPU_NOTE),
)

ENTRIES = (OCCUPANCY, GEMM_WAVES, COALESCING, TILED_MATMUL)
