"""Exercises of the lesson *Inside the GPU: threads, warps, tiles and waves*
(``exercises/inside_the_gpu.ipynb``).

They practise what the lesson teaches: sixteen kernels to write (here a vector addition, a
2-D map, a tiled matrix product, a sum; the kernel lab of
:mod:`gpulesson.exercises.bank._inside_the_gpu_kernels` adds twelve more, exercises 11 to
22), each run by the kernel checker
(:mod:`gpulesson.kernelcheck`) on ragged shapes and in two thread orders, with a message
naming the thread, the element and the line at fault and a hint for each common bug; and
the arithmetic of the execution model: which branch diverges, the bytes a strided load
moves, a tile's intensity, two occupancies and the waves of a GEMM.

Every answer and every figure of a worked solution comes from :mod:`gpulesson.execution`
and :mod:`gpulesson.hardware`; the kernels' model solutions are sources
(:class:`~gpulesson.exercises.kernel.KernelSource`) that the checker runs as they are
shown. Standard library only (the checker is imported when a kernel is checked).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from gpulesson import course, execution, gemm, hardware
from gpulesson.exercises import core, wording
from gpulesson.exercises.bank._common import H100, P
from gpulesson.exercises.bank._inside_the_gpu_kernels import EXERCISES as KERNEL_LAB
from gpulesson.exercises.core import Mistake
from gpulesson.exercises.kernel import KernelSource, first_is, kernel_exercise, kernel_mistake
from gpulesson.kernelcheck import catalogue as tasks
from gpulesson.units import format_bandwidth, format_seconds

LESSON = "inside_the_gpu"
TITLE = course.title(LESSON)

KIB = 1024


def _shape(task: str, case: int) -> str:
    """A matrix shape of a task, as the checker runs it: ``'13 × 21'``."""
    sizes = tasks.task(task).shapes[case][1]
    return f"{sizes['rows']} × {sizes['cols']}"


def _mkn(case: int) -> str:
    sizes = tasks.task("matmul_tiled").shapes[case][1]
    if sizes["m"] == sizes["k"] == sizes["n"]:
        return f"{sizes['m']} × {sizes['k']} × {sizes['n']}"
    return f"M = {sizes['m']}, K = {sizes['k']}, N = {sizes['n']}"


# ---------------------------------------------------------------------------------------
# 1. A vector addition

_RAGGED_N = tasks.task("vector_add").shapes[-1][1]["n"]


def _idle(n: int, threads: int) -> int:
    """Threads of the last block past the end of n elements."""
    return execution.tiles(n, 1, tile_m=threads, tile_n=1) * threads - n


VECTOR_ADD = KernelSource("vector_add", """
@cuda.jit
def vector_add(a, b, out):
    i = cuda.grid(1)  # blockIdx.x * blockDim.x + threadIdx.x
    if i < out.size:  # the last block hangs over the end
        out[i] = a[i] + b[i]
""")

vector_add = kernel_exercise(
    LESSON, 1, "A vector addition", VECTOR_ADD,
    question=(
        "Write the kernel `vector_add(a, b, out)` that sets `out[i] = a[i] + b[i]` for every "
        "element, one thread per element. The checker launches it with "
        f"{tasks.VECTOR_BLOCK} threads per block and as many blocks as it takes to cover the "
        "vector, on a size that fills whole blocks and on one that does not, and watches every "
        "access of every thread."
    ),
    hints=(
        "`i = cuda.grid(1)` is the thread's element: `blockIdx.x * blockDim.x + threadIdx.x`.",
        "Blocks are whole, so the last one has threads past the end of the vector: they must "
        "not touch memory (`if i < out.size:`).",
    ),
    solution=(
        "Each thread computes its global index with `cuda.grid(1)` and handles one element. "
        f"The grid has ⌈n / {tasks.VECTOR_BLOCK}⌉ blocks, so at n = {_RAGGED_N} the last "
        f"block has {_idle(_RAGGED_N, tasks.VECTOR_BLOCK)} threads past the end; the bounds "
        "check keeps them out of memory. On a GPU their accesses would not fail: they would "
        "read or overwrite whatever lies after the arrays."
    ),
    mistakes=(
        kernel_mistake(
            "no_bounds_check",
            "Threads past the end of the vector read and write out of bounds: guard the "
            "access with `if i < out.size:`.",
            VECTOR_ADD.edited("    if i < out.size:  # the last block hangs over the end\n"
                              "        out[i]", "    out[i]"),
            first_is("out_of_bounds")),
        kernel_mistake(
            "thread_index_only",
            "Every block wrote the same first elements (a race between blocks) and the rest "
            "stayed unwritten: `cuda.threadIdx.x` restarts at 0 in every block. The element "
            "of a thread is `cuda.grid(1)`.",
            VECTOR_ADD.edited("cuda.grid(1)", "cuda.threadIdx.x"),
            first_is("race")),
    ),
)


# ---------------------------------------------------------------------------------------
# 2. A 2-D map: add a bias to every row

ADD_BIAS = KernelSource("add_bias", """
@cuda.jit
def add_bias(x, bias, out):
    col, row = cuda.grid(2)  # x runs along the columns, y along the rows
    if row < out.shape[0] and col < out.shape[1]:
        out[row, col] = x[row, col] + bias[col]
""")

add_bias = kernel_exercise(
    LESSON, 2, "A 2-D map: add a bias to every row", ADD_BIAS,
    question=(
        "A layer adds a bias vector to every row of its output. Write the kernel "
        "`add_bias(x, bias, out)` that sets `out[row, col] = x[row, col] + bias[col]`, one "
        f"thread per element. The checker launches blocks of {tasks.MAP_BLOCK[0]} × "
        f"{tasks.MAP_BLOCK[1]} threads: x (`threadIdx.x`, the first value of `cuda.grid(2)`) "
        f"runs along the columns, y along the rows, on a {_shape('add_bias', 0)} matrix and on "
        f"a {_shape('add_bias', 1)} one, ragged in both directions."
    ),
    hints=(
        "`col, row = cuda.grid(2)`: the first value is the x index, which runs along the "
        "columns, the fastest-varying index of a row-major array.",
        "Both indices can run past the edge: check `row < out.shape[0] and col < "
        "out.shape[1]`.",
    ),
    solution=(
        "`cuda.grid(2)` returns (x, y). With x along the columns, neighbouring threads of a "
        "warp read neighbouring elements of a row, which is also what makes the loads "
        f"coalesced. The grid covers ⌈columns / {tasks.MAP_BLOCK[0]}⌉ × ⌈rows / "
        f"{tasks.MAP_BLOCK[1]}⌉ blocks, so both indices need a bounds check."
    ),
    mistakes=(
        kernel_mistake(
            "no_bounds_check",
            "Threads past the right or bottom edge went out of bounds: check both indices, "
            "`if row < out.shape[0] and col < out.shape[1]:`.",
            ADD_BIAS.edited("    if row < out.shape[0] and col < out.shape[1]:\n"
                            "        out[row, col]", "    out[row, col]"),
            first_is("out_of_bounds")),
        kernel_mistake(
            "rows_and_columns_swapped",
            "Some elements were never written: `cuda.grid(2)` returns (x, y), and the checker's "
            "x runs along the columns. Write `col, row = cuda.grid(2)`.",
            ADD_BIAS.edited("col, row = cuda.grid(2)", "row, col = cuda.grid(2)"),
            lambda r: first_is("missing_value")(r) and r.first.index is not None),
    ),
)


# ---------------------------------------------------------------------------------------
# 3. Which branch diverges?

_BRANCHES = (("even", "i % 2 == 0"), ("by_warp", "(i // 32) % 2 == 0"),
             ("quarter", "i % 64 < 16"), ("bounds", "i < 1000"))
_CONDITIONS: Mapping[str, Callable[[int], bool]] = {
    "even": lambda i: i % 2 == 0, "by_warp": lambda i: (i // 32) % 2 == 0,
    "quarter": lambda i: i % 64 < 16, "bounds": lambda i: i < 1000}
_THREADS = 1024


def _branch(key: str) -> execution.BranchCost:
    return execution.branch_cost([_CONDITIONS[key](i) for i in range(_THREADS)])


def _branch_derived(p: P) -> dict[str, Any]:
    out: dict[str, Any] = {"warps": wording.count(_branch("even").warps)}
    for key, _ in _BRANCHES:
        cost = _branch(key)
        out[f"{key}_split"] = wording.count(cost.divergent_warps)
        out[f"{key}_slowdown"] = f"{cost.slowdown:.3g}×"
    return out


branch_divergence = core.ChoiceExercise(
    lesson=LESSON, number=3, title="Which branch diverges least?",
    question=(
        f"A kernel of {wording.count(_THREADS)} threads has an `if` whose two sides take equally "
        "long. With which condition on the thread index `i` does it run fastest?"
    ),
    options=tuple((key, f"`if {text}:`") for key, text in _BRANCHES),
    hints=("A warp is 32 consecutive threads; it pays for a side if any of its threads takes "
           "it.",
           "For each condition, count the warps whose threads disagree."),
    solution=(
        "Count warps, not threads: a warp whose threads disagree runs both sides. "
        "`i % 2 == 0` splits {even_split} of the {warps} warps ({even_slowdown}); "
        "`i % 64 < 16` splits {quarter_split} ({quarter_slowdown}); the bounds check "
        "`i < 1000` splits {bounds_split}, the last ({bounds_slowdown}); the answer, {answer}, "
        "splits {by_warp_split}: half the threads take each side, but whole warps at a time."
    ),
    answer=lambda p: min(_CONDITIONS, key=lambda k: _branch(k).cycles),
    derived=_branch_derived,
    mistakes=(
        Mistake("half_the_threads",
                "Half the threads take each side, but every warp holds both kinds, so every "
                "warp runs both sides: twice the time.", lambda p: "even"),
        Mistake("fewest_threads",
                "Only a quarter of the threads take the `if`, but each group of 16 sits in a "
                "different warp: half the warps run both sides.", lambda p: "quarter"),
        Mistake("bounds_check_is_free",
                "A bounds check is cheap, not free: the warp holding element 1,000 still "
                "splits. One condition splits no warp at all.", lambda p: "bounds"),
    ),
)


# ---------------------------------------------------------------------------------------
# 4. Bytes a strided load moves

def _coalescing(p: P) -> execution.Coalescing:
    return execution.coalescing(p["stride"], element_bytes=4)


strided_load = core.NumericExercise(
    lesson=LESSON, number=4, title="A strided load: stride {stride}",
    question=(
        "Thread `t` of a warp reads element `t * {stride}` of a float32 array (4 bytes per "
        "element), for example one column of a row-major matrix with {stride} columns. How "
        "many bytes does memory move for every byte the threads use?"
    ),
    hints=("Global memory moves whole 32-byte sectors: count the sectors the 32 threads "
           "touch.",
           "A sector holds 8 floats. When the threads are 8 or more elements apart, each "
           "needs a sector of its own."),
    solution=(
        "The 32 threads ask for 32 × 4 = 128 bytes. They touch {sectors} sectors of 32 bytes, "
        "{moved} bytes in all: **{answer}** bytes moved per useful byte, an efficiency of "
        "{efficiency}. On an H100 ({bandwidth}) that leaves {useful} of useful bandwidth."
    ),
    answer=lambda p: _coalescing(p).bytes_per_useful_byte,
    derived=lambda p: {
        "sectors": _coalescing(p).sectors, "moved": wording.count(_coalescing(p).bytes_moved),
        "efficiency": wording.percent(_coalescing(p).efficiency),
        "bandwidth": format_bandwidth(hardware.gpu(H100).bandwidth),
        "useful": format_bandwidth(hardware.gpu(H100).bandwidth
                                   * _coalescing(p).efficiency)},
    mistakes=(
        Mistake("stride_as_waste",
                "The waste is not the stride itself: a sector is 32 bytes, so one thread can "
                "waste at most the other 28 bytes of its sector.",
                lambda p: float(p["stride"])),
        Mistake("cache_line",
                "Memory moves 32-byte sectors, not 128-byte cache lines: a lone 4-byte read "
                "costs 32 bytes, not 128.",
                lambda p: execution.coalescing(p["stride"], element_bytes=4,
                                               sector_bytes=128).bytes_per_useful_byte),
        # review r22, F11: the efficiency the lesson and the solution print beside it
        Mistake("efficiency_percent",
                "That is the efficiency in percent: the share of the moved bytes that the "
                "threads use. The question asks the other way round: how many bytes move "
                "for each byte used.",
                lambda p: 100 * _coalescing(p).efficiency),
    ),
    defaults={"stride": 1024},
    sample=lambda rng: {"stride": rng.choice([16, 64, 256, 1024, 4096])},
    dimension="count", unit="×", extra_units=wording.TIMES, rtol=0.02, digits=3,
)


# ---------------------------------------------------------------------------------------
# 5. A tile's arithmetic intensity

def _tile_intensity(p: P, tile: int | None = None, b: float = 4) -> float:
    return execution.tiled_matmul_intensity(4096, 4096, 4096, tile_m=tile or p["tile"],
                                            bytes_per_element=b)


tile_intensity = core.NumericExercise(
    lesson=LESSON, number=5, title="The intensity of {tile} × {tile} tiles",
    question=(
        "A matrix-product kernel for 4096 × 4096 FP32 matrices gives each block {a_tile} × "
        "{tile} tile of C, loading the tiles of A and B it needs into shared memory once. "
        "About how many FLOPs does it do per byte of global-memory traffic?"
    ),
    hints=("Each element brought into shared memory takes part in {tile} multiply-adds, one "
           "for each thread of its row or column of the tile.",
           "2 FLOPs per multiply-add, 4 bytes per FP32 element: about T / 4 FLOP/byte."),
    solution=(
        "The naive kernel reads both operands of every multiply-add from global memory: "
        "{naive} FLOP/byte. The tile divides the traffic by its width, {tile}: **{answer}** "
        "(a little under {tile}/4, for the output written once). The H100's FP32 ridge is "
        "{ridge} FLOP/byte."
    ),
    answer=_tile_intensity,
    derived=lambda p: {"naive": f"{_tile_intensity(p, 1):.3f}",
                       "a_tile": wording.with_article(str(p["tile"])),
                       "ridge": f"{hardware.gpu('H100 SXM').ridge_point('fp32'):.1f}"},
    mistakes=(
        Mistake("counted_elements",
                "That is FLOPs per element. Each FP32 element is 4 bytes: divide by 4.",
                lambda p: _tile_intensity(p, b=1)),
        Mistake("reuse_squared",
                "Each loaded element is reused {tile} times, once per thread of its row (or "
                "column) of the tile, not {tile}² times.",
                lambda p: p["tile"] ** 2 / 4),
        Mistake("naive_kernel",
                "That is the naive kernel's intensity; the tile reuses every loaded element "
                "{tile} times.", lambda p: _tile_intensity(p, 1)),
    ),
    defaults={"tile": 32},
    sample=lambda rng: {"tile": rng.choice([8, 16, 32, 64])},
    dimension="count", unit="FLOP/byte", extra_units={"FLOP/byte": 1, "FLOPs/byte": 1},
    rtol=0.02, digits=3,
)


# ---------------------------------------------------------------------------------------
# 6. A tiled matrix product

MATMUL_TILED = KernelSource("matmul_tiled", """
@cuda.jit
def matmul_tiled(A, B, C):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    col, row = cuda.grid(2)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    acc = float32(0.0)
    for t in range((A.shape[1] + TILE - 1) // TILE):
        k = t * TILE
        if row < A.shape[0] and k + tx < A.shape[1]:
            sA[ty, tx] = A[row, k + tx]
        else:
            sA[ty, tx] = 0
        if k + ty < B.shape[0] and col < B.shape[1]:
            sB[ty, tx] = B[k + ty, col]
        else:
            sB[ty, tx] = 0
        cuda.syncthreads()  # the tiles are loaded
        for j in range(TILE):
            acc += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()  # everyone is done with them
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc
""", constants={"TILE": tasks.TILE})

_MATMUL_NO_FILL = MATMUL_TILED.edited("        else:\n            sA[ty, tx] = 0\n").edited(
    "        else:\n            sB[ty, tx] = 0\n")

matmul_tiled = kernel_exercise(
    LESSON, 6, "A tiled matrix product", MATMUL_TILED,
    question=(
        f"Write `matmul_tiled(A, B, C)`, computing C = A @ B with TILE = {tasks.TILE}: each "
        f"block of {tasks.TILE} × {tasks.TILE} threads computes one tile of C, loading the "
        "tiles of A and B it needs into `cuda.shared.array((TILE, TILE), float32)` arrays one "
        "step of K at a time. x runs along the columns of C, y along its rows. The checker "
        f"tries whole tiles ({_mkn(0)}) and ragged ones ({_mkn(1)})."
    ),
    hints=(
        "Loop over the tiles along K. In each step every thread loads one element of the A "
        "tile and one of the B tile, the block waits at `cuda.syncthreads()`, then each "
        "thread adds TILE products to its sum.",
        "Elements past the edge of A or B must be loaded as 0, by every thread of the block: "
        "all threads must reach every barrier, so no thread may return early.",
        "A second `cuda.syncthreads()` at the end of each step keeps fast threads from "
        "overwriting a tile that slower ones are still reading.",
    ),
    solution=(
        "Each step loads one tile of A and one of B, zero past the edges, so that the sum over "
        "j needs no test. The first barrier keeps any thread from reading the tiles before "
        "they are complete; the second keeps any thread from loading the next tiles while "
        "others still read these. Every thread of the block reaches both, even those whose "
        "element of C lies outside the matrix: they help load and only skip the final store."
    ),
    mistakes=(
        kernel_mistake(
            "missing_second_barrier",
            "A thread loaded the next tile while another still read the current one: end "
            "each step with a second `cuda.syncthreads()`.",
            MATMUL_TILED.edited("        cuda.syncthreads()  # everyone is done with them\n"),
            lambda r: first_is("race")(r) and not r.has("uninitialized")),
        kernel_mistake(
            "missing_first_barrier",
            "A thread read the shared tiles before the others had loaded them: wait with "
            "`cuda.syncthreads()` between the loads and the products.",
            MATMUL_TILED.edited("        cuda.syncthreads()  # the tiles are loaded\n"),
            lambda r: first_is("race")(r) and r.has("uninitialized")),
        kernel_mistake(
            "returned_early",
            "Threads outside C returned before the barriers: they must stay, load their "
            "share of the tiles (0 past the edge) and reach every `cuda.syncthreads()`; "
            "skip only the final store.",
            MATMUL_TILED.edited("    tx, ty =", "    if row >= C.shape[0] or col >= C.shape[1]:\n"
                                "        return\n    tx, ty ="),
            first_is("barrier_divergence")),
        kernel_mistake(
            "no_zero_padding",
            "On the ragged shape, tile elements past the edge of A or B were never written, "
            "so the products read garbage: store 0 in them.",
            _MATMUL_NO_FILL, first_is("uninitialized")),
    ),
)


# ---------------------------------------------------------------------------------------
# 7. Occupancy: registers

_GPUS = ("H100 SXM", "A100 80GB", "B200", "L4")


def _occupancy(p: P, **changes: Any) -> float:
    limits = execution.gpu_execution(p["gpu"]).limits
    return execution.occupancy(p["threads"], registers_per_thread=p.get("registers", 32),
                               shared_memory_per_block=p.get("shared_kib", 0) * KIB,
                               arch=replace(limits, **changes) if changes else limits
                               ).occupancy


def _occ_derived(p: P) -> dict[str, Any]:
    spec = execution.gpu_execution(p["gpu"])
    occ = execution.occupancy(p["threads"], registers_per_thread=p.get("registers", 32),
                              shared_memory_per_block=p.get("shared_kib", 0) * KIB,
                              arch=spec.compute_capability)
    lim = spec.limits
    per_warp = occ.registers_per_block // occ.warps_per_block
    return {
        "a_gpu": wording.with_article(p["gpu"]),
        "cc": spec.compute_capability, "warps_per_block": occ.warps_per_block,
        "raw": wording.count(p.get("registers", 32) * lim.warp_size),
        "per_warp": wording.count(per_warp),
        "per_partition": wording.count(lim.registers_per_sm // lim.register_partitions),
        "partition_warps": (lim.registers_per_sm // lim.register_partitions) // per_warp,
        "blocks": occ.blocks_per_sm, "warps": occ.warps_per_sm,
        "max_warps": lim.max_warps_per_sm, "max_blocks": lim.max_blocks_per_sm,
        "limit": ", ".join(occ.limited_by),
        "unit": lim.register_allocation_unit, "partitions": lim.register_partitions,
        "warp_size": lim.warp_size,
        "allocated": wording.count(occ.shared_memory_per_block),
        "carveout_kib": occ.shared_memory_carveout // KIB,
        "reserve": wording.count(lim.reserved_shared_memory_per_block),
    }


def _occ_sample(rng: Any) -> dict[str, Any]:
    return {"gpu": rng.choice(_GPUS), "threads": rng.choice([64, 128, 256, 512]),
            "registers": rng.choice([37, 40, 45, 48, 56, 72, 80, 96, 100, 120])}


occupancy_registers = core.NumericExercise(
    lesson=LESSON, number=7, title="Occupancy at {registers} registers per thread",
    question=(
        "A kernel runs blocks of {threads} threads on {a_gpu} (compute capability {cc}); the "
        "compiler gave it {registers} registers per thread, and it uses no shared memory. "
        "Its SM holds at most {max_warps} warps and {max_blocks} blocks. What is its "
        "occupancy, the share of the SM's warp slots it fills?"
    ),
    hints=(
        "Registers are allocated per warp, in units of {unit}, and each of the SM's "
        "{partitions} register partitions holds a whole number of warps.",
        "{registers} × {warp_size} = {raw} registers per warp, rounded up to {per_warp}; a "
        "partition has {per_partition}.",
    ),
    solution=(
        "A warp needs {raw} registers, allocated as {per_warp}. Each partition of "
        "{per_partition} registers holds {partition_warps} such warps, the SM {partitions} × "
        "{partition_warps}; in blocks of {warps_per_block} warps that is {blocks} blocks, "
        "{warps} of the {max_warps} warp slots: **{answer}** (limited by {limit})."
    ),
    answer=_occupancy,
    derived=_occ_derived,
    mistakes=(
        Mistake("no_allocation_rounding",
                "Registers are not handed out one by one: a warp gets a multiple of {unit}, "
                "and each of the {partitions} partitions holds whole warps. Round up first.",
                lambda p: _occupancy(p, register_allocation_unit=1, register_partitions=1)),
        Mistake("registers_ignored",
                "That counts threads only. {registers} registers per thread use up the "
                "register file before the thread slots run out.",
                lambda p: _occupancy({**p, "registers": 1})),
        Mistake("share_of_blocks",
                "That is blocks over the most blocks an SM takes; occupancy counts warps: "
                "{warps} of {max_warps}.",
                lambda p: execution.occupancy(p["threads"], registers_per_thread=p["registers"],
                                              arch=execution.gpu_execution(p["gpu"]).limits
                                              ).blocks_per_sm
                / execution.gpu_execution(p["gpu"]).limits.max_blocks_per_sm),
    ),
    defaults={"gpu": "H100 SXM", "threads": 128, "registers": 37},
    sample=_occ_sample,
    dimension="percent", unit="%", rtol=0.01, digits=4,
)


# ---------------------------------------------------------------------------------------
# 8. Occupancy: shared memory

def _smem_sample(rng: Any) -> dict[str, Any]:
    return {"gpu": rng.choice(("H100 SXM", "A100 80GB", "B200")),
            "threads": rng.choice([128, 256]),
            "shared_kib": rng.choice([20, 30, 40, 45, 50, 60, 70, 100])}


occupancy_shared = core.NumericExercise(
    lesson=LESSON, number=8, title="Occupancy with {shared_kib} KiB of shared memory",
    question=(
        "A kernel runs blocks of {threads} threads at 32 registers per thread on {a_gpu}, "
        "each block using {shared_kib} KiB of shared memory (1 KiB = 1,024 bytes). The SM's "
        "carveout is the largest, {carveout_kib} KiB, and the SM holds at most {max_warps} "
        "warps and {max_blocks} blocks. What is its occupancy?"
    ),
    hints=(
        "From compute capability 8.0 the CUDA driver reserves {reserve} bytes of shared memory "
        "for every block.",
        "Each block takes {allocated} bytes; divide the carveout by it, round down, and "
        "compare with the other limits.",
    ),
    solution=(
        "Each block takes {shared_kib} KiB plus the driver's {reserve} bytes, {allocated} "
        "bytes; {blocks} fit in {carveout_kib} KiB, {warps} of the {max_warps} warp slots: "
        "**{answer}** (limited by {limit})."
    ),
    answer=_occupancy,
    derived=_occ_derived,
    mistakes=(
        Mistake("forgot_reserve",
                "The CUDA driver keeps {reserve} bytes of shared memory for every block "
                "(compute capability 8.0 and later): add them to the {shared_kib} KiB.",
                lambda p: _occupancy(p, reserved_shared_memory_per_block=0)),
        Mistake("shared_memory_ignored",
                "That leaves out the shared memory, which here limits how many blocks fit "
                "before the threads or registers do.",
                lambda p: _occupancy({**p, "shared_kib": 0})),
    ),
    defaults={"gpu": "H100 SXM", "threads": 256, "shared_kib": 45},
    sample=_smem_sample,
    dimension="percent", unit="%", rtol=0.01, digits=4,
)


# ---------------------------------------------------------------------------------------
# 9. The waves of a GEMM

def _gemm_time(p: P) -> float:
    return execution.gemm_time(p["m"], p["n"], p["k"], peak_flops=hardware.gpu(p["gpu"]).dense(
        "bf16"), sms=execution.gpu_execution(p["gpu"]).sms)


def _waves(p: P) -> execution.GemmWaves:
    return execution.gemm_waves(p["m"], p["n"], sms=execution.gpu_execution(p["gpu"]).sms)


def _per_tile(p: P) -> float:
    return _gemm_time(p) / _waves(p).waves


def _waves_derived(p: P) -> dict[str, Any]:
    w = _waves(p)
    return {"a_gpu": wording.with_article(p["gpu"]), "a_m": wording.with_article(str(p["m"])),
            "sms": execution.gpu_execution(p["gpu"]).sms, "tiles_m": w.tiles_m,
            "tiles_n": w.tiles_n, "tiles": wording.count(w.tiles), "waves": w.waves,
            "fractional": f"{w.fractional_waves:.2f}", "last": w.last_wave_tiles,
            "per_tile": format_seconds(_per_tile(p)), "efficiency": wording.percent(w.efficiency),
            "peak_time": format_seconds(gemm.flops(p["m"], p["k"], p["n"])
                                        / hardware.gpu(p["gpu"]).dense("bf16")),
            "peak": f"{hardware.gpu(p['gpu']).dense('bf16') / 1e12:,.1f} TFLOP/s"}


def _waves_sample(rng: Any) -> dict[str, Any]:
    return {"gpu": rng.choice(("H100 SXM", "B200", "A100 80GB")),
            "m": rng.choice([2048, 2049, 4096, 4097, 4224, 8192, 8193]),
            "n": rng.choice([4096, 8192]), "k": 4096}


gemm_waves = core.NumericExercise(
    lesson=LESSON, number=9, title="The waves of {a_m} × {n} GEMM on the {gpu}",
    question=(
        "A library multiplies A ({m} × {k}) by B ({k} × {n}), both BF16, on {a_gpu} ({sms} "
        "SMs, {peak} dense), in 256 × 128 tiles of the output, one tile per SM at a time, each "
        "tile running at the SM's share of the peak. How long does the product take?"
    ),
    hints=(
        "Count the tiles: ⌈{m} / 256⌉ × ⌈{n} / 128⌉. They run in waves of {sms}.",
        "Round the waves up: a wave lasts as long as one tile, {per_tile}, however few tiles "
        "it holds.",
    ),
    solution=(
        "{tiles_m} × {tiles_n} = {tiles} tiles make {fractional} waves of {sms}, so {waves}, "
        "the last holding {last} tiles. Each wave takes one tile's time at a 1/{sms} share "
        "of the peak, {per_tile}: **{answer}**. The arithmetic alone at the peak would take "
        "{peak_time}; {efficiency} of the work the SMs do is useful."
    ),
    answer=_gemm_time,
    derived=_waves_derived,
    mistakes=(
        Mistake("waves_not_rounded",
                "A wave cannot be a fraction: the last one takes as long as a full one. Round "
                "the waves up.", lambda p: _waves(p).fractional_waves * _per_tile(p)),
        Mistake("waves_rounded_down",
                "The tiles left over after the full waves still need a wave of their own: "
                "round up, not down.",
                lambda p: (_waves(p).tiles // _waves(p).wave_size) * _per_tile(p)
                if _waves(p).tiles // _waves(p).wave_size else None),
        Mistake("peak_only",
                "That is the arithmetic at the peak: it leaves out the tiles' overhang and "
                "the idle SMs of the last wave.",
                lambda p: gemm.flops(p["m"], p["k"], p["n"]) / hardware.gpu(p["gpu"]).dense(
                    "bf16")),
    ),
    defaults={"gpu": "H100 SXM", "m": 4097, "n": 4096, "k": 4096},
    sample=_waves_sample,
    dimension="seconds", unit="µs", rtol=0.01, digits=3,
)


# ---------------------------------------------------------------------------------------
# 10. A sum

SUM_KERNEL = KernelSource("sum_kernel", """
@cuda.jit
def sum_kernel(x, out):
    s = cuda.shared.array(BLOCK, float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    s[tid] = x[i] if i < x.size else 0  # past the end: add nothing
    cuda.syncthreads()
    step = BLOCK // 2
    while step > 0:
        if tid < step:
            s[tid] += s[tid + step]
        cuda.syncthreads()  # the next step reads what this one wrote
        step //= 2
    if tid == 0:
        cuda.atomic.add(out, 0, s[0])  # blocks never wait for each other
""", constants={"BLOCK": tasks.SUM_BLOCK})

sum_kernel = kernel_exercise(
    LESSON, 10, "A sum with a tree in shared memory", SUM_KERNEL,
    question=(
        "Write `sum_kernel(x, out)`, adding up all of `x` into `out[0]` (which holds 0 when "
        f"the kernel starts). The checker launches blocks of BLOCK = {tasks.SUM_BLOCK} "
        "threads, as many as cover `x`: sum each block's elements with a tree in "
        "`cuda.shared.array(BLOCK, float32)`, then add each block's sum to `out[0]`."
    ),
    hints=(
        "Each thread writes its element (0 past the end) to shared memory. Then, for step = "
        "BLOCK / 2, BLOCK / 4, ..., 1, the threads with `tid < step` add `s[tid + step]` to "
        "`s[tid]`.",
        "Every step reads what the previous one wrote: a `cuda.syncthreads()` after each.",
        "Blocks cannot wait for each other: combine their sums with `cuda.atomic.add(out, 0, "
        "s[0])`.",
    ),
    solution=(
        "The tree halves the active threads at each step, log2(BLOCK) steps in all, and the "
        "barrier after each makes the partial sums visible to the next. Within a block the "
        "barrier orders the threads; across blocks nothing does, so the block sums go to "
        "`out[0]` with an atomic addition, one per block."
    ),
    mistakes=(
        kernel_mistake(
            "plain_add_across_blocks",
            "`out[0] += s[0]` from several blocks races: two blocks can read the same old "
            "value and one addition is lost. Use `cuda.atomic.add(out, 0, s[0])`.",
            SUM_KERNEL.edited("cuda.atomic.add(out, 0, s[0])", "out[0] += s[0]"),
            lambda r: first_is("race")(r) and r.first.array == "out"),
        kernel_mistake(
            "no_barrier_between_steps",
            "Each step of the tree reads what the previous one wrote: put a "
            "`cuda.syncthreads()` after every step, reached by all threads.",
            SUM_KERNEL.edited("        cuda.syncthreads()  # the next step reads what this "
                              "one wrote\n"),
            lambda r: first_is("race")(r) and r.first.array != "out"),
        kernel_mistake(
            "no_padding",
            "Threads past the end of `x` read out of bounds: let them write 0 to shared "
            "memory (`x[i] if i < x.size else 0`) and still take part in the tree.",
            SUM_KERNEL.edited("x[i] if i < x.size else 0", "x[i]"),
            first_is("out_of_bounds")),
    ),
)


EXERCISES = (vector_add, add_bias, branch_divergence, strided_load, tile_intensity,
             matmul_tiled, occupancy_registers, occupancy_shared, gemm_waves, sum_kernel,
             *KERNEL_LAB)
