"""The kernel lab of *Inside the GPU*: twelve more kernels to write (exercises 11 to 22), from
a grid-stride loop to a row softmax, each checked by the pure-Python kernel runtime
(:mod:`gpulesson.kernelcheck`) in Jupyter and on the site alike.

Each exercise has a question, a starter in the exercise notebook, hints, a model kernel
(shown as the worked solution, exactly what the checker runs), the mistakes learners make
(each a kernel the checker must recognise) and, in its feedback, the global traffic the
checker counted against the prediction for a coalesced kernel. The tasks (shapes, launch,
expected results, graded performance counts) are in
:mod:`gpulesson.kernelcheck.catalogue`. Standard library only.
"""

from __future__ import annotations

from gpulesson.exercises.kernel import (
    KernelExercise,
    KernelMistake,
    KernelSource,
    first_is,
    kernel_exercise,
    kernel_mistake,
)
from gpulesson.kernelcheck import catalogue as tasks

LESSON = "inside_the_gpu"

__all__ = ["EXERCISES"]


_TRAFFIC = ("The feedback of a correct kernel sets the global traffic the checker counted, "
            "warp by warp, beside the prediction for a coalesced kernel that reads each input "
            "once and writes each output once.")


def _lab(number: int, title: str, model: KernelSource, *, question: str,
         hints: tuple[str, ...], solution: str,
         mistakes: tuple[KernelMistake, ...]) -> KernelExercise:
    """An exercise of the lab: its worked solution ends on the traffic the feedback sets."""
    return kernel_exercise(LESSON, number, title, model, question=question, hints=hints,
                           solution=solution + _TRAFFIC, mistakes=mistakes)

# ---------------------------------------------------------------------------------------
# 11. A grid-stride loop

SAXPY = KernelSource("saxpy", """
@cuda.jit
def saxpy(a, x, y):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)  # all the threads of the grid
    for i in range(start, y.size, stride):
        y[i] = a * x[i] + y[i]
""")

saxpy = _lab(
    11, "A grid-stride loop", SAXPY,
    question=(
        "Write `saxpy(a, x, y)`, setting `y[i] = a * x[i] + y[i]` for every element. The "
        f"checker always launches {tasks.STRIDE_BLOCKS} blocks of {tasks.STRIDE_THREADS} "
        "threads, fewer threads than elements, so each thread must handle several. The "
        "loads must stay coalesced: the checker counts the sectors every warp moves."
    ),
    hints=(
        "`cuda.gridsize(1)` is the number of threads in the grid. Thread `start` handles "
        "`start`, `start + stride`, `start + 2 * stride`, ...",
        "Do not give each thread a contiguous chunk: at each step the 32 threads of a warp "
        "must touch 32 neighbouring elements.",
    ),
    solution=(
        "A grid-stride loop: thread `start` takes every `gridsize`-th element. At each "
        "iteration the warp's 32 threads read 32 consecutive floats, 4 sectors, so every "
        "request is coalesced, whatever the size of the vector and of the grid. "
    ),
    mistakes=(
        kernel_mistake("one_element_per_thread",
                 "Only the first elements changed: with fewer threads than elements, each "
                 "thread must loop, `for i in range(start, y.size, cuda.gridsize(1))`.",
                 SAXPY.with_body("""
    i = cuda.grid(1)
    if i < y.size:
        y[i] = a * x[i] + y[i]
"""), lambda r: (r.first is not None and r.first.kind in ("missing_value", "wrong_value")
                and r.first.index is not None)),
        kernel_mistake("contiguous_chunks",
                 "Each thread took a contiguous chunk, so the 32 threads of a warp read "
                 "elements a chunk apart: each needs its own sector. Stride by the grid "
                 "instead, so that neighbouring threads read neighbouring elements.",
                 SAXPY.with_body("""
    start = cuda.grid(1)
    chunk = (y.size + cuda.gridsize(1) - 1) // cuda.gridsize(1)
    for i in range(start * chunk, min(start * chunk + chunk, y.size)):
        y[i] = a * x[i] + y[i]
"""), first_is("uncoalesced")),
    ),
)

# ---------------------------------------------------------------------------------------
# 12. A coalesced copy of a matrix

COPY = KernelSource("copy_matrix", """
@cuda.jit
def copy_matrix(x, out):
    col, row = cuda.grid(2)  # x, the fast index of a warp, runs along a row
    if row < out.shape[0] and col < out.shape[1]:
        out[row, col] = x[row, col]
""")

copy_matrix = _lab(
    12, "A coalesced copy of a matrix", COPY,
    question=(
        f"Write `copy_matrix(x, out)` copying a square row-major matrix, launched with blocks "
        f"of {tasks.COPY_BLOCK[0]} × {tasks.COPY_BLOCK[1]} threads. Any mapping of threads to "
        "elements gives the right numbers; the checker also counts the 32-byte sectors each "
        "warp moves and wants every request coalesced."
    ),
    hints=(
        "A warp is 32 consecutive threads in x first: threadIdx.x changes fastest.",
        "Row-major: consecutive elements of a row are neighbours in memory. Let x index the "
        "columns: `col, row = cuda.grid(2)`.",
    ),
    solution=(
        f"With x along the columns, a warp of a {tasks.COPY_BLOCK[0]}-wide block covers two "
        "half-rows of 64 bytes: 4 sectors for 128 useful bytes, 100 % efficiency. With x "
        "along the rows, the 32 threads read 32 different rows: 32 sectors for the same "
        "128 bytes, 12.5 %. "
    ),
    mistakes=(
        kernel_mistake("rows_along_x",
                 "The copy is right but each warp moved 8 times the sectors it needed: x "
                 "ran down a column. Write `col, row = cuda.grid(2)`.",
                 COPY.edited("col, row = cuda.grid(2)", "row, col = cuda.grid(2)"),
                 first_is("uncoalesced")),
        kernel_mistake("no_bounds_check",
                 "Threads past the edge of the 20 × 20 matrix went out of bounds: check "
                 "both indexes.",
                 COPY.edited("    if row < out.shape[0] and col < out.shape[1]:\n"
                             "        out[row, col]", "    out[row, col]"),
                 first_is("out_of_bounds")),
    ),
)

# ---------------------------------------------------------------------------------------
# 13-15. Transposes

_T = tasks.TRANSPOSE_TILE

TRANSPOSE_NAIVE = KernelSource("transpose_naive", """
@cuda.jit
def transpose_naive(x, out):
    col, row = cuda.grid(2)  # one thread per element of x
    if row < x.shape[0] and col < x.shape[1]:
        out[col, row] = x[row, col]
""")

transpose_naive = _lab(
    13, "A naive transpose", TRANSPOSE_NAIVE,
    question=(
        "Write `transpose_naive(x, out)`: `out[c, r] = x[r, c]` for a matrix x of any shape "
        f"(out has the shape of xᵀ), one thread per element of x, in blocks of {_T} × {_T}. "
        "Once it passes, read the traffic in the feedback: which side is coalesced?"
    ),
    hints=(
        "`col, row = cuda.grid(2)` indexes x; guard with x's shape, not out's.",
        "The store `out[col, row]` sends neighbouring threads to neighbouring rows of out.",
    ),
    solution=(
        "Reading `x[row, col]` with x along the columns is coalesced; writing `out[col, row]` "
        "puts every thread of a warp in a row of its own, so each store request moves 32 "
        "sectors for 128 useful bytes. The counted traffic is about 4.5 times the prediction, "
        "almost all of it the stores. Exercises 14 and 15 fix that with a tile. "
    ),
    mistakes=(
        kernel_mistake("guarded_with_out",
                 "x is not square: guard with x's shape (`row < x.shape[0] and col < "
                 "x.shape[1]`), the indexes of x.",
                 TRANSPOSE_NAIVE.edited("if row < x.shape[0] and col < x.shape[1]:",
                                        "if row < out.shape[0] and col < out.shape[1]:"),
                 lambda r: (first_is("out_of_bounds", at="out[col, row]")(r)
                            or (first_is("missing_value")(r) and r.first.index is not None))),
        kernel_mistake("not_transposed",
                 "That copies x instead of transposing it: store into `out[col, row]`.",
                 TRANSPOSE_NAIVE.edited("out[col, row] = x[row, col]",
                                        "out[row, col] = x[row, col]"),
                 first_is("out_of_bounds", at="out[row, col]")),
    ),
)

TRANSPOSE_TILED = KernelSource("transpose_tiled", """
@cuda.jit
def transpose_tiled(x, out):
    tile = cuda.shared.array((TILE_T, TILE_T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    r0, c0 = cuda.blockIdx.y * TILE_T, cuda.blockIdx.x * TILE_T  # the block's tile of x
    if r0 + ty < x.shape[0] and c0 + tx < x.shape[1]:
        tile[ty, tx] = x[r0 + ty, c0 + tx]  # coalesced: x runs along a row of x
    cuda.syncthreads()
    if c0 + ty < out.shape[0] and r0 + tx < out.shape[1]:
        out[c0 + ty, r0 + tx] = tile[tx, ty]  # coalesced: x runs along a row of out
""", constants={"TILE_T": _T})

transpose_tiled = _lab(
    14, "A transpose through a shared tile", TRANSPOSE_TILED,
    question=(
        f"Write `transpose_tiled(x, out)` with TILE_T = {_T}: each block of {_T} × {_T} threads "
        "loads one TILE_T × TILE_T tile of x into `cuda.shared.array((TILE_T, TILE_T), "
        "float32)` with coalesced loads, waits, then writes the tile's transpose to out with "
        "coalesced stores. The checker fails an uncoalesced access."
    ),
    hints=(
        "The block's tile of x starts at row `blockIdx.y * TILE_T`, column `blockIdx.x * "
        "TILE_T`; in out that tile lands at row `blockIdx.x * TILE_T`, column `blockIdx.y * "
        "TILE_T`.",
        "Store with threadIdx.x along the columns of out, and read the tile transposed: "
        "`tile[tx, ty]`. A `cuda.syncthreads()` between the load and the store.",
    ),
    solution=(
        "The tile turns the strided side into a shared-memory access: global loads and stores "
        "are both coalesced, so the counted global traffic equals the prediction. The "
        "feedback notes a 32-way bank conflict on `tile[tx, ty]`: a column of a 32-wide "
        "tile sits in one bank (exercise 15). "
    ),
    mistakes=(
        kernel_mistake("no_barrier",
                 "A thread read the tile before the thread that loads that element had "
                 "written it: `cuda.syncthreads()` between the load and the store.",
                 TRANSPOSE_TILED.edited("    cuda.syncthreads()\n"),
                 lambda r: r.first is not None and r.first.kind in ("race", "uninitialized")),
        kernel_mistake("store_strided",
                 "The store is still strided: write `out[c0 + ty, r0 + tx] = tile[tx, ty]`, "
                 "so that threadIdx.x runs along a row of out.",
                 TRANSPOSE_TILED.edited(
                     "    if c0 + ty < out.shape[0] and r0 + tx < out.shape[1]:\n"
                     "        out[c0 + ty, r0 + tx] = tile[tx, ty]",
                     "    if c0 + tx < out.shape[0] and r0 + ty < out.shape[1]:\n"
                     "        out[c0 + tx, r0 + ty] = tile[ty, tx]"),
                 first_is("uncoalesced")),
    ),
)

TRANSPOSE_PADDED = KernelSource("transpose_padded", TRANSPOSE_TILED.source.replace(
    "transpose_tiled", "transpose_padded").replace(
    "cuda.shared.array((TILE_T, TILE_T), float32)",
    "cuda.shared.array((TILE_T, TILE_T + 1), float32)  # one spare column"),
    constants={"TILE_T": _T})

transpose_padded = _lab(
    15, "A transpose without bank conflicts", TRANSPOSE_PADDED,
    question=(
        f"Write `transpose_padded(x, out)`: exercise 14's transpose (TILE_T = {_T}), but the "
        "checker now also fails a shared-memory access with bank conflicts. Shared memory "
        "has 32 banks of 4 bytes; a warp's request takes as many passes as the busiest bank "
        "has different words."
    ),
    hints=(
        "Reading `tile[tx, ty]`, the 32 threads of a warp read one column: with 32 floats "
        "per row, every element of a column is in the same bank.",
        "Give the tile one spare column: `cuda.shared.array((TILE_T, TILE_T + 1), float32)`. "
        "Row r then starts r words further along the banks.",
    ),
    solution=(
        "With 33 floats per row, element (r, c) is in bank (33 r + c) mod 32 = (r + c) mod "
        "32: a column touches 32 different banks, one pass instead of 32. The spare column "
        "costs 128 bytes of shared memory per block. "
    ),
    mistakes=(
        kernel_mistake("not_padded",
                 "Every read of a column hit one bank, a 32-way conflict: pad the tile to 33 "
                 "columns, `cuda.shared.array((TILE_T, TILE_T + 1), float32)`.",
                 TRANSPOSE_PADDED.edited("(TILE_T, TILE_T + 1)", "(TILE_T, TILE_T)"),
                 first_is("bank_conflict")),
        kernel_mistake("no_barrier",
                 "A thread read the tile before it was loaded: `cuda.syncthreads()` between "
                 "the load and the store.",
                 TRANSPOSE_PADDED.edited("    cuda.syncthreads()\n"),
                 lambda r: r.first is not None and r.first.kind in ("race", "uninitialized")),
    ),
)

# ---------------------------------------------------------------------------------------
# 16. A warp-level sum

WARP_SUM = KernelSource("warp_sum", """
@cuda.jit
def warp_sum(x, out):
    i = cuda.grid(1)
    v = x[i] if i < x.size else float32(0)  # lanes past the end add nothing, but take part
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)  # the value of lane + offset
        offset //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)  # one atomic per warp
""")

warp_sum = _lab(
    16, "A sum with warp shuffles", WARP_SUM,
    question=(
        "Write `warp_sum(x, out)`, adding all of `x` into `out[0]` (0 at the start), without "
        f"shared memory: in blocks of {tasks.SUM_BLOCK} threads, each warp sums its 32 values "
        "with `cuda.shfl_down_sync(0xFFFFFFFF, v, offset)` for offset = 16, 8, 4, 2, 1, and "
        "lane 0 of each warp adds the warp's sum to `out[0]`."
    ),
    hints=(
        "`cuda.shfl_down_sync(mask, v, k)` returns lane (lane + k)'s `v`; after the steps 16, "
        "8, 4, 2, 1, lane 0 holds the sum of all 32.",
        "Every lane named in the mask must reach each shuffle: lanes past the end of x take "
        "part with 0 instead of returning.",
        "Warps never wait for each other: `cuda.atomic.add(out, 0, v)` from lane "
        "`cuda.laneid == 0`.",
    ),
    solution=(
        "Five shuffles halve the partial sums in registers: no shared memory and no "
        "`syncthreads`, since the lanes of a warp exchange values directly. The ragged last "
        "block shows why the lanes past the end stay: a shuffle reads the registers of the "
        "lanes in its mask, and a lane that returned has none. "
    ),
    mistakes=(
        kernel_mistake("returned_early",
                 "Lanes past the end returned before the shuffles: every lane in the mask "
                 "must take part. Give them `v = 0` instead of returning.",
                 WARP_SUM.with_body("""
    i = cuda.grid(1)
    if i >= x.size:
        return
    v = x[i]
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)
"""), first_is("barrier_divergence")),
        kernel_mistake("plain_add",
                 "`out[0] += v` from several warps races: use `cuda.atomic.add(out, 0, v)`.",
                 WARP_SUM.edited("cuda.atomic.add(out, 0, v)", "out[0] += v"),
                 first_is("race")),
    ),
)

# ---------------------------------------------------------------------------------------
# 17-18. Rows: softmax and layer norm, one warp per row

SOFTMAX = KernelSource("softmax_rows", """
@cuda.jit
def softmax_rows(x, out):
    row, lane = cuda.blockIdx.x, cuda.threadIdx.x
    cols = x.shape[1]
    m = -math.inf
    for c in range(lane, cols, 32):  # each lane a stride of the row: coalesced
        m = max(m, x[row, c])
    for offset in (16, 8, 4, 2, 1):  # every lane ends with the row's maximum
        m = max(m, cuda.shfl_xor_sync(0xFFFFFFFF, m, offset))
    total = 0.0
    for c in range(lane, cols, 32):
        total += math.exp(x[row, c] - m)
    for offset in (16, 8, 4, 2, 1):
        total += cuda.shfl_xor_sync(0xFFFFFFFF, total, offset)
    for c in range(lane, cols, 32):
        out[row, c] = math.exp(x[row, c] - m) / total
""")

softmax_rows = _lab(
    17, "The softmax of a row", SOFTMAX,
    question=(
        "Write `softmax_rows(x, out)`: each row of out is the softmax of the row of x, "
        "exp(x − max) / Σ exp(x − max). The checker launches one block of 32 threads (one "
        "warp) per row, on rows of 64 and of 50 columns; the loads must be coalesced."
    ),
    hints=(
        "Lane `l` handles columns l, l + 32, l + 64, ...: at each step the warp reads 32 "
        "neighbouring floats.",
        "`cuda.shfl_xor_sync(0xFFFFFFFF, v, k)` for k = 16, 8, 4, 2, 1 leaves every lane with "
        "the combination of all 32 (a butterfly): use it with `max`, then with `+`.",
    ),
    solution=(
        "Three passes over the row: the maximum, the sum of exponentials, the output, each "
        "strided by 32 so that every request is coalesced, and two butterflies of shuffles "
        "that give every lane the row's maximum and sum. Subtracting the maximum keeps exp "
        "from overflowing on large logits; it changes nothing in exact arithmetic. "
    ),
    mistakes=(
        kernel_mistake("lane_sum_only",
                 "Each lane divided by its own partial sum: combine the sums of the 32 lanes "
                 "with shuffles before dividing.",
                 SOFTMAX.edited("    for offset in (16, 8, 4, 2, 1):\n"
                                "        total += cuda.shfl_xor_sync(0xFFFFFFFF, total, "
                                "offset)\n"),
                 first_is("wrong_value")),
        kernel_mistake("contiguous_columns",
                 "Each lane took a contiguous run of columns, so a warp's 32 loads are spread "
                 "over the row: stride the columns by 32 instead.",
                 SOFTMAX.with_body("""
    row, lane = cuda.blockIdx.x, cuda.threadIdx.x
    cols = x.shape[1]
    per = (cols + 31) // 32
    lo, hi = lane * per, min(lane * per + per, cols)
    m = -math.inf
    for c in range(lo, hi):
        m = max(m, x[row, c])
    for offset in (16, 8, 4, 2, 1):
        m = max(m, cuda.shfl_xor_sync(0xFFFFFFFF, m, offset))
    total = 0.0
    for c in range(lo, hi):
        total += math.exp(x[row, c] - m)
    for offset in (16, 8, 4, 2, 1):
        total += cuda.shfl_xor_sync(0xFFFFFFFF, total, offset)
    for c in range(lo, hi):
        out[row, c] = math.exp(x[row, c] - m) / total
"""), first_is("uncoalesced")),
    ),
)

LAYERNORM = KernelSource("layernorm_rows", """
@cuda.jit
def layernorm_rows(x, out):
    row, lane = cuda.blockIdx.x, cuda.threadIdx.x
    cols = x.shape[1]
    s = 0.0
    for c in range(lane, cols, 32):
        s += x[row, c]
    for offset in (16, 8, 4, 2, 1):
        s += cuda.shfl_xor_sync(0xFFFFFFFF, s, offset)
    mean = s / cols
    q = 0.0
    for c in range(lane, cols, 32):
        d = x[row, c] - mean
        q += d * d
    for offset in (16, 8, 4, 2, 1):
        q += cuda.shfl_xor_sync(0xFFFFFFFF, q, offset)
    inv = 1.0 / math.sqrt(q / cols + EPS)
    for c in range(lane, cols, 32):
        out[row, c] = (x[row, c] - mean) * inv
""", constants={"EPS": tasks.EPS})

layernorm_rows = _lab(
    18, "Layer normalisation of a row", LAYERNORM,
    question=(
        f"Write `layernorm_rows(x, out)`: out = (x − mean) / √(var + EPS) for each row, with "
        f"EPS = {tasks.EPS:g} and the variance over the row's n columns (divided by n). One "
        "warp per row, as in exercise 17."
    ),
    hints=(
        "Two reductions: the sum (for the mean), then the sum of squared deviations (for the "
        "variance), each a strided loop and a butterfly of shuffles.",
        "Divide by the number of columns, not by 32: the lanes cover the whole row.",
    ),
    solution=(
        "The same pattern as the softmax: strided, coalesced passes over the row and "
        "butterflies of shuffles. Computing the variance from the deviations, after the "
        "mean, avoids the cancellation of E[x²] − E[x]². "
    ),
    mistakes=(
        kernel_mistake("contiguous_columns",
                 "Each lane took a contiguous run of columns, so a warp's 32 loads are spread "
                 "over the row: stride the columns by 32, `range(lane, cols, 32)`.",
                 KernelSource("layernorm_rows", LAYERNORM.source.replace(
                     "    cols = x.shape[1]\n",
                     "    cols = x.shape[1]\n    per = (cols + 31) // 32\n").replace(
                     "range(lane, cols, 32)", "range(lane * per, min(lane * per + per, cols))"),
                     constants={"EPS": tasks.EPS}), first_is("uncoalesced")),
        kernel_mistake("lane_mean_only",
                 "Each lane used its own partial sum as the row's: combine the lanes with "
                 "shuffles first.",
                 LAYERNORM.edited("    for offset in (16, 8, 4, 2, 1):\n"
                                  "        s += cuda.shfl_xor_sync(0xFFFFFFFF, s, offset)\n"),
                 first_is("wrong_value")),
    ),
)

# ---------------------------------------------------------------------------------------
# 19. A histogram

HISTOGRAM = KernelSource("histogram", """
@cuda.jit
def histogram(x, bins):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(bins, x[i], 1)  # many threads may hit one bin
""")

histogram = _lab(
    19, "A histogram with atomics", HISTOGRAM,
    question=(
        f"Write `histogram(x, bins)`: `bins[v]` counts the elements of x equal to v (x holds "
        f"int32 values from 0 to {tasks.BINS - 1}; bins starts at 0). One thread per element, "
        f"blocks of {tasks.SUM_BLOCK}."
    ),
    hints=(
        "Two threads with the same value update the same bin: the read-add-write must be "
        "indivisible.",
        "`cuda.atomic.add(bins, x[i], 1)`.",
    ),
    solution=(
        "The atomic makes each increment indivisible, so no count is lost whatever the "
        "order. Atomics on a few hot bins serialise: a faster histogram counts in shared "
        "memory per block first, then adds each block's bins once. "
    ),
    mistakes=(
        kernel_mistake("plain_increment",
                 "`bins[x[i]] += 1` from two threads on one bin loses a count: use "
                 "`cuda.atomic.add(bins, x[i], 1)`.",
                 HISTOGRAM.edited("cuda.atomic.add(bins, x[i], 1)", "bins[x[i]] += 1"),
                 first_is("race")),
        kernel_mistake("no_bounds_check",
                 "Threads past the end of x read out of bounds: `if i < x.size:`.",
                 HISTOGRAM.with_body("""
    i = cuda.grid(1)
    cuda.atomic.add(bins, x[i], 1)
"""), first_is("out_of_bounds")),
    ),
)

# ---------------------------------------------------------------------------------------
# 20. A stencil with a halo

STENCIL = KernelSource("stencil_1d", """
@cuda.jit
def stencil_1d(x, out):
    s = cuda.shared.array(SBLOCK + 2, float32)  # the block's elements and one on each side
    i = cuda.grid(1)
    t = cuda.threadIdx.x + 1
    s[t] = x[i] if i < x.size else 0
    if cuda.threadIdx.x == 0:  # the halo: the neighbours outside the block
        s[0] = x[i - 1] if 0 < i <= x.size else 0
        s[SBLOCK + 1] = x[i + SBLOCK] if i + SBLOCK < x.size else 0
    cuda.syncthreads()
    if i < x.size:
        out[i] = s[t - 1] + s[t] + s[t + 1]
""", constants={"SBLOCK": tasks.VECTOR_BLOCK})

stencil_1d = _lab(
    20, "A stencil with a halo in shared memory", STENCIL,
    question=(
        "Write `stencil_1d(x, out)`: `out[i] = x[i - 1] + x[i] + x[i + 1]`, with 0 past "
        f"either end. Blocks of SBLOCK = {tasks.VECTOR_BLOCK} threads; load the block's "
        "elements and its two neighbours (the halo) into `cuda.shared.array(SBLOCK + 2, "
        "float32)` once, then read the three values from there."
    ),
    hints=(
        "Thread t stores its element at `s[t + 1]`; one thread also loads `s[0]` and "
        "`s[SBLOCK + 1]`, the elements just before and after the block (0 outside x).",
        "`cuda.syncthreads()` before any thread reads its neighbours' elements.",
    ),
    solution=(
        "Each element is read from global memory once and from shared memory three times. "
        "The barrier orders every store before every read; the halo carries the neighbours "
        "that belong to the blocks either side. "
    ),
    mistakes=(
        kernel_mistake("no_barrier",
                 "A thread read a neighbour's element before that thread stored it: "
                 "`cuda.syncthreads()` between the loads and the sum.",
                 STENCIL.edited("    cuda.syncthreads()\n"),
                 lambda r: r.has("race")),
        kernel_mistake("no_halo",
                 "The first and last thread of each block read `s[0]` and `s[SBLOCK + 1]`, "
                 "which no thread loaded: load the two neighbours of the block too.",
                 STENCIL.edited(
                     "    if cuda.threadIdx.x == 0:  # the halo: the neighbours outside the "
                     "block\n        s[0] = x[i - 1] if 0 < i <= x.size else 0\n"
                     "        s[SBLOCK + 1] = x[i + SBLOCK] if i + SBLOCK < x.size else 0\n"),
                 lambda r: first_is("uninitialized")(r) and not r.has("race")),
    ),
)

# ---------------------------------------------------------------------------------------
# 21. A dot product without divergence

DOT = KernelSource("dot", """
@cuda.jit
def dot(a, b, out):
    s = cuda.shared.array(BLOCK, float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    s[tid] = a[i] * b[i] if i < a.size else 0
    cuda.syncthreads()
    step = BLOCK // 2
    while step > 0:  # the active threads stay together: whole warps idle
        if tid < step:
            s[tid] += s[tid + step]
        cuda.syncthreads()
        step //= 2
    if tid == 0:
        cuda.atomic.add(out, 0, s[0])
""", constants={"BLOCK": tasks.SUM_BLOCK})

dot = _lab(
    21, "A dot product without divergence", DOT,
    question=(
        f"Write `dot(a, b, out)`, adding a · b into `out[0]` with a tree in shared memory "
        f"(blocks of BLOCK = {tasks.SUM_BLOCK}), as in exercise 10. This time the checker "
        "also counts divergent branches: a step of the tree may not split most of the warps."
    ),
    hints=(
        "`if tid % (2 * step) == 0` keeps every other thread, then every fourth...: every "
        "warp holds both kinds and runs both sides.",
        "Keep the active threads together: `if tid < step`, with step going down from "
        "BLOCK / 2. Whole warps then go idle together.",
    ),
    solution=(
        "With `tid < step` the threads that add are the first `step` ones, so at each step "
        "at most one warp is split, and from step 32 down to 1 whole warps simply skip the "
        "addition. The interleaved tree splits every warp at every step but the last, where "
        "only thread 0 adds and the first warp alone is split. "
    ),
    mistakes=(
        kernel_mistake("interleaved_tree",
                 "`tid % (2 * step) == 0` splits every warp at every step of the tree but the "
                 "last: add "
                 "`s[tid + step]` into `s[tid]` for `tid < step`, step going down.",
                 DOT.with_body("""
    s = cuda.shared.array(BLOCK, float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    s[tid] = a[i] * b[i] if i < a.size else 0
    cuda.syncthreads()
    step = 1
    while step < BLOCK:
        if tid % (2 * step) == 0:
            s[tid] += s[tid + step]
        cuda.syncthreads()
        step *= 2
    if tid == 0:
        cuda.atomic.add(out, 0, s[0])
"""), first_is("divergence")),
        kernel_mistake("barrier_in_branch",
                 "The barrier sat inside `if tid < step:`, which some threads skip: a "
                 "`cuda.syncthreads()` must be reached by every thread of the block, so put "
                 "it after the `if`.",
                 DOT.edited("            s[tid] += s[tid + step]\n        cuda.syncthreads()",
                            "            s[tid] += s[tid + step]\n"
                            "            cuda.syncthreads()"),
                 first_is("barrier_divergence")),
    ),
)

# ---------------------------------------------------------------------------------------
# 22. A naive matrix product

MATMUL_NAIVE = KernelSource("matmul_naive", """
@cuda.jit
def matmul_naive(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]  # 2 loads for each multiply-add
        C[row, col] = acc
""")

matmul_naive = _lab(
    22, "A naive matrix product, and its traffic", MATMUL_NAIVE,
    question=(
        f"Write `matmul_naive(A, B, C)`, C = A @ B with one thread per element of C, blocks "
        f"of {tasks.TILE} × {tasks.TILE} (x along the columns of C), no shared memory. Then "
        "compare the traffic in the feedback with exercise 6's tiled kernel: how many times "
        "more sectors does the naive one request?"
    ),
    hints=(
        "`col, row = cuda.grid(2)`; a loop over k adds `A[row, k] * B[k, col]`.",
        "K is `A.shape[1]`: on the ragged shape it differs from the number of columns of C.",
    ),
    solution=(
        "Every multiply-add requests two operands from global memory, 2·M·N·K elements in "
        "all. The tiled kernel loads each tile of A once per block column (N/TILE times) "
        "and each tile of B once per block row (M/TILE times): M·K·N/TILE + K·N·M/TILE = "
        "2·M·N·K/TILE, TILE times fewer. These are "
        "requests, not DRAM traffic: on a GPU the L1 and L2 caches serve most of them, which "
        "is why a coalesced naive kernel runs far faster than the DRAM roofline of its "
        "request intensity suggests. "
    ),
    mistakes=(
        kernel_mistake("k_from_c",
                 "The sum runs over K, `A.shape[1]`, not over the columns of C.",
                 MATMUL_NAIVE.edited("range(A.shape[1])", "range(C.shape[1])"),
                 first_is("wrong_value")),
        kernel_mistake("no_bounds_check",
                 "Threads past the edge of C went out of bounds: guard with C's shape.",
                 MATMUL_NAIVE.with_body("""
    col, row = cuda.grid(2)
    acc = float32(0.0)
    for k in range(A.shape[1]):
        acc += A[row, k] * B[k, col]
    C[row, col] = acc
"""), first_is("out_of_bounds")),
    ),
)


EXERCISES = (saxpy, copy_matrix, transpose_naive, transpose_tiled, transpose_padded, warp_sum,
             softmax_rows, layernorm_rows, histogram, stencil_1d, dot, matmul_naive)
