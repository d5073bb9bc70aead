"""Buggy kernels: ``(id, task, expected first kind, source, constants)``.

Each plants one bug a learner makes: races within and across loop iterations, missing or
divergent barriers, accesses out of bounds, uncoalesced accesses, bank conflicts, wrong
results, hangs and escapes (``SystemExit``, ``KeyboardInterrupt``). A bug is planted in
the course's own model kernel for the task (:mod:`gpulesson.exercises.bank.inside_the_gpu`,
so the corpus checks the kernels learners are shown), or is one of the mistakes the bank
declares for it; ``edited`` fails loudly when a model no longer holds the text an edit
replaces.
"""

from gpulesson.exercises.bank import inside_the_gpu
from gpulesson.exercises.kernel import KernelExercise, KernelSource

_EXERCISES = {ex.task: ex for ex in inside_the_gpu.EXERCISES if isinstance(ex, KernelExercise)}


def _model(task: str) -> KernelSource:
    """The course's model kernel for ``task``."""
    return _EXERCISES[task].model_solution


def _declared(task: str, key: str) -> KernelSource:
    """The kernel of a mistake the bank declares for ``task``."""
    return _EXERCISES[task].mistake_function(key)


def _case(case_id: str, kind: str, kernel: KernelSource) -> tuple:
    return (case_id, kernel.__name__, kind, kernel.source, kernel.constants)


def _va(case_id: str, kind: str, body: str) -> tuple:
    """vector_add with another body."""
    return _case(case_id, kind, _model("vector_add").with_body(body))


BUGGY = [
    # vector_add: bounds, indexes, results, escapes and hangs
    _va("va-no-bounds", "out_of_bounds",
        "    i = cuda.grid(1)\n    out[i] = a[i] + b[i]\n"),
    _va("va-thread-index-only", "race",
        "    i = cuda.threadIdx.x\n    if i < out.size:\n        out[i] = a[i] + b[i]\n"),
    _va("va-subtracts", "wrong_value",
        "    i = cuda.grid(1)\n    if i < out.size:\n        out[i] = a[i] - b[i]\n"),
    _va("va-off-by-one", "out_of_bounds",
        "    i = cuda.grid(1)\n    if i <= out.size:\n        out[i] = a[i] + b[i]\n"),
    _va("va-block-index", "race",
        "    i = cuda.blockIdx.x\n    out[i] = a[i] + b[i]\n"),
    _va("va-writes-input", "input_written",
        "    i = cuda.grid(1)\n    if i < out.size:\n        a[i] = a[i] + b[i]\n"
        "        out[i] = a[i]\n"),
    _va("va-every-other", "missing_value",
        "    i = cuda.grid(1) * 2\n    if i < out.size:\n        out[i] = a[i] + b[i]\n"),
    _va("va-strided-threads", "uncoalesced",
        "    i = cuda.threadIdx.x * cuda.gridDim.x + cuda.blockIdx.x\n"
        "    if i < out.size:\n        out[i] = a[i] + b[i]\n"),
    _va("va-neighbour", "out_of_bounds",
        "    i = cuda.grid(1)\n    if i < out.size:\n        out[i] = a[i] + b[i + 1]\n"),
    _va("va-float-index", "unsupported",
        "    i = cuda.grid(1) / 1\n    if i < out.size:\n        out[i] = a[i] + b[i]\n"),
    _va("va-divides-by-zero", "exception",
        "    i = cuda.grid(1)\n    if i < out.size:\n        out[i] = a[i] / 0\n"),
    _va("va-sys-exit", "unsupported",
        "    import sys\n    sys.exit(0)\n"),
    _va("va-raise-system-exit", "exception",
        "    raise SystemExit(0)\n"),
    _va("va-keyboard-interrupt", "exception",
        "    raise KeyboardInterrupt\n"),
    _va("va-unprintable-exception", "exception",
        "    class Unprintable(Exception):\n        def __str__(self):\n"
        "            raise ValueError('no')\n    raise Unprintable()\n"),
    _va("va-open-file", "unsupported",
        "    open('/etc/passwd').read()\n"),
    _va("va-endless-loop", "timeout",
        "    while True:\n        pass\n"),
    _va("va-no-increment", "timeout",
        "    i = cuda.grid(1)\n    while i < out.size:\n        out[i] = a[i] + b[i]\n"),
    _va("va-loop-catching-everything", "timeout",
        "    while True:\n        try:\n            pass\n        except BaseException:\n"
        "            continue\n"),
    _va("va-loop-after-barrier", "timeout",
        "    cuda.syncthreads()\n    while True:\n        pass\n"),
    _va("va-long-sleep", "timeout",
        "    import time\n    time.sleep(1000)\n"),
    _va("va-huge-range", "unsupported",
        "    for _ in range(10 ** 12):\n        pass\n"),
    # add_bias
    _case("bias-swapped", "missing_value", _declared("add_bias", "rows_and_columns_swapped")),
    _case("bias-no-bounds", "out_of_bounds", _declared("add_bias", "no_bounds_check")),
    _case("bias-by-row", "wrong_value", _model("add_bias").edited("bias[col]", "bias[row]")),
    _case("bias-half-guard", "out_of_bounds", _model("add_bias").edited(
        "if row < out.shape[0] and col < out.shape[1]:", "if col < out.shape[1]:")),
    # tiled matrix product
    _case("mm-no-first-barrier", "race", _declared("matmul_tiled", "missing_first_barrier")),
    _case("mm-no-second-barrier", "race", _declared("matmul_tiled", "missing_second_barrier")),
    _case("mm-returns-early", "barrier_divergence", _declared("matmul_tiled", "returned_early")),
    _case("mm-barrier-in-if", "barrier_divergence", _model("matmul_tiled").edited(
        "        cuda.syncthreads()  # the tiles are loaded\n",
        "        if row < C.shape[0]:\n            cuda.syncthreads()\n")),
    _case("mm-no-zero-fill", "uninitialized", _declared("matmul_tiled", "no_zero_padding")),
    _case("mm-wrong-b-index", "out_of_bounds",
          _model("matmul_tiled").edited("= B[k + ty, col]", "= B[k + tx, col]")),
    _case("mm-short-inner-loop", "wrong_value",
          _model("matmul_tiled").edited("range(TILE):", "range(TILE - 1):")),
    # naive matrix product
    _case("mmn-no-bounds", "out_of_bounds", _declared("matmul_naive", "no_bounds_check")),
    _case("mmn-b-transposed", "out_of_bounds",
          _model("matmul_naive").edited("B[k, col]", "B[col, k]")),
    # tree reductions
    _case("sum-plain-add", "race", _declared("sum_kernel", "plain_add_across_blocks")),
    _case("sum-no-step-barrier", "race", _declared("sum_kernel", "no_barrier_between_steps")),
    _case("sum-no-load-barrier", "race",
          _model("sum_kernel").edited("    cuda.syncthreads()\n")),
    _case("sum-no-padding", "out_of_bounds", _declared("sum_kernel", "no_padding")),
    _case("sum-interleaved", "divergence", _model("sum_kernel").edited(
        "    step = BLOCK // 2\n    while step > 0:", "    step = 1\n    while step < BLOCK:")
        .edited("if tid < step:", "if tid % (2 * step) == 0:").edited("step //= 2", "step *= 2")),
    _case("sum-barrier-in-if", "barrier_divergence", _model("sum_kernel").edited(
        "            s[tid] += s[tid + step]\n        cuda.syncthreads()",
        "            s[tid] += s[tid + step]\n            cuda.syncthreads()")),
    _case("sum-step-too-big", "out_of_bounds",
          _model("sum_kernel").edited("step = BLOCK // 2", "step = BLOCK")),
    _case("sum-adds-wrong-slot", "wrong_value", _model("sum_kernel").edited(
        "cuda.atomic.add(out, 0, s[0])", "cuda.atomic.add(out, 0, s[1])")),
    _case("dot-no-padding", "out_of_bounds",
          _model("dot").edited("a[i] * b[i] if i < a.size else 0", "a[i] * b[i]")),
    _case("dot-plain-add", "race",
          _model("dot").edited("cuda.atomic.add(out, 0, s[0])", "out[0] += s[0]")),
    _case("dot-strided-loads", "uncoalesced", _model("dot").edited(
        "    s[tid] = a[i] * b[i] if i < a.size else 0\n",
        "    j = tid * cuda.gridDim.x + cuda.blockIdx.x\n"
        "    s[tid] = a[j] * b[j] if j < a.size else 0\n")),
    # warp shuffles
    _case("warp-returns-early", "barrier_divergence", _declared("warp_sum", "returned_early")),
    _case("warp-plain-add", "race", _declared("warp_sum", "plain_add")),
    _case("warp-half-the-steps", "wrong_value",
          _model("warp_sum").edited("offset = 16", "offset = 8")),
    _case("warp-shuffles-up", "wrong_value",
          _model("warp_sum").edited("shfl_down_sync", "shfl_up_sync")),
    _case("warp-shuffle-in-branch", "barrier_divergence", _model("warp_sum").edited(
        "    offset = 16\n    while offset > 0:\n        v += cuda.shfl_down_sync(0xFFFFFFFF, v, "
        "offset)  # the value of lane + offset\n        offset //= 2\n",
        "    if i < x.size:  # the lanes past the end skip the shuffles\n        offset = 16\n"
        "        while offset > 0:\n            v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)\n"
        "            offset //= 2\n")),
    # grid-stride loops
    _case("saxpy-no-loop", "missing_value", _declared("saxpy", "one_element_per_thread")),
    _case("saxpy-chunks", "uncoalesced", _declared("saxpy", "contiguous_chunks")),
    _case("saxpy-step-one", "race", _model("saxpy").with_body("""
    for i in range(cuda.grid(1), y.size):
        y[i] = a * x[i] + y[i]
""")),
    # coalescing and bank conflicts
    _case("copy-rows-along-x", "uncoalesced", _declared("copy_matrix", "rows_along_x")),
    _case("copy-no-bounds", "out_of_bounds", _declared("copy_matrix", "no_bounds_check")),
    _case("transpose-copies", "out_of_bounds", _declared("transpose_naive", "not_transposed")),
    _case("transpose-guards-out", "out_of_bounds",
          _declared("transpose_naive", "guarded_with_out")),
    _case("tiled-no-barrier", "race", _declared("transpose_tiled", "no_barrier")),
    _case("tiled-strided-store", "uncoalesced", _declared("transpose_tiled", "store_strided")),
    _case("tiled-tile-not-turned", "uninitialized",
          _model("transpose_tiled").edited("= tile[tx, ty]", "= tile[ty, tx]")),
    _case("padded-not-padded", "bank_conflict", _declared("transpose_padded", "not_padded")),
    _case("padded-by-two", "bank_conflict", _model("transpose_padded").edited(
        "(TILE_T, TILE_T + 1)", "(TILE_T, TILE_T + 2)")),
    # rows
    _case("softmax-lane-sum", "wrong_value", _declared("softmax_rows", "lane_sum_only")),
    _case("softmax-lane-max", "wrong_value", _model("softmax_rows").edited(
        "    for offset in (16, 8, 4, 2, 1):  # every lane ends with the row's maximum\n"
        "        m = max(m, cuda.shfl_xor_sync(0xFFFFFFFF, m, offset))\n")),
    _case("softmax-row-per-thread", "uncoalesced",
          _declared("softmax_rows", "contiguous_columns")),
    _case("layernorm-mean-over-lanes", "wrong_value",
          _model("layernorm_rows").edited("mean = s / cols", "mean = s / 32")),
    _case("layernorm-variance-over-lanes", "wrong_value",
          _model("layernorm_rows").edited("q / cols", "q / 32")),
    # atomics
    _case("hist-plain-increment", "race", _declared("histogram", "plain_increment")),
    _case("hist-no-bounds", "out_of_bounds", _declared("histogram", "no_bounds_check")),
    _case("hist-counts-index", "out_of_bounds", _model("histogram").edited(
        "cuda.atomic.add(bins, x[i], 1)", "cuda.atomic.add(bins, i, 1)")),
    # halos
    _case("stencil-no-barrier", "race", _declared("stencil_1d", "no_barrier")),
    _case("stencil-no-halo", "uninitialized", _declared("stencil_1d", "no_halo")),
    _case("stencil-unguarded-halo", "out_of_bounds", _model("stencil_1d").edited(
        "x[i - 1] if 0 < i <= x.size else 0", "x[i - 1]")),
]
