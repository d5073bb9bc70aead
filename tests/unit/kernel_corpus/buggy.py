"""Buggy kernels: ``(id, task, expected first kind, source, constants)``.

Each was written to plant one bug a learner makes: races within and across loop
iterations, missing or divergent barriers, accesses out of bounds, uncoalesced accesses,
bank conflicts, wrong results, hangs and escapes (``SystemExit``, ``KeyboardInterrupt``).
"""

from gpulesson.kernelcheck import catalogue

T, B, TT, SB = catalogue.TILE, catalogue.SUM_BLOCK, catalogue.TRANSPOSE_TILE, 32
TILE = {"TILE": T}
BLOCK = {"BLOCK": B}
TILE_T = {"TILE_T": TT}
SBLOCK = {"SBLOCK": SB}
EPS = {"EPS": catalogue.EPS}

_MATMUL = """
@cuda.jit
def matmul_tiled(A, B, C):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    col, row = cuda.grid(2)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    acc = float32(0.0)
    for t in range((A.shape[1] + TILE - 1) // TILE):
        k = t * TILE
        sA[ty, tx] = A[row, k + tx] if row < A.shape[0] and k + tx < A.shape[1] else 0
        sB[ty, tx] = B[k + ty, col] if k + ty < B.shape[0] and col < B.shape[1] else 0
        cuda.syncthreads()  # FIRST
        for j in range(TILE):
            acc += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()  # SECOND
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc
"""

_SUM = """
@cuda.jit
def sum_kernel(x, out):
    s = cuda.shared.array(BLOCK, float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    s[tid] = x[i] if i < x.size else 0
    cuda.syncthreads()  # LOADED
    step = BLOCK // 2
    while step > 0:
        if tid < step:
            s[tid] += s[tid + step]
        cuda.syncthreads()  # STEP
        step //= 2
    if tid == 0:
        cuda.atomic.add(out, 0, s[0])
"""

_DOT = _SUM.replace("sum_kernel(x, out)", "dot(a, b, out)").replace(
    "x[i] if i < x.size else 0", "a[i] * b[i] if i < a.size else 0")

_WARP = """
@cuda.jit
def warp_sum(x, out):
    i = cuda.grid(1)
    v = x[i] if i < x.size else float32(0)
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)
"""

_TRANSPOSE = """
@cuda.jit
def transpose_tiled(x, out):
    tile = cuda.shared.array((TILE_T, TILE_T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    r0, c0 = cuda.blockIdx.y * TILE_T, cuda.blockIdx.x * TILE_T
    if r0 + ty < x.shape[0] and c0 + tx < x.shape[1]:
        tile[ty, tx] = x[r0 + ty, c0 + tx]
    cuda.syncthreads()
    if c0 + ty < out.shape[0] and r0 + tx < out.shape[1]:
        out[c0 + ty, r0 + tx] = tile[tx, ty]
"""
_PADDED = _TRANSPOSE.replace("transpose_tiled", "transpose_padded")

_SOFTMAX = """
@cuda.jit
def softmax_rows(x, out):
    row, lane = cuda.blockIdx.x, cuda.threadIdx.x
    cols = x.shape[1]
    m = -math.inf
    for c in range(lane, cols, 32):
        m = max(m, x[row, c])
    for offset in (16, 8, 4, 2, 1):
        m = max(m, cuda.shfl_xor_sync(0xFFFFFFFF, m, offset))
    total = 0.0
    for c in range(lane, cols, 32):
        total += math.exp(x[row, c] - m)
    for offset in (16, 8, 4, 2, 1):
        total += cuda.shfl_xor_sync(0xFFFFFFFF, total, offset)
    for c in range(lane, cols, 32):
        out[row, c] = math.exp(x[row, c] - m) / total
"""

_LAYERNORM = """
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
"""

_STENCIL = """
@cuda.jit
def stencil_1d(x, out):
    s = cuda.shared.array(SBLOCK + 2, float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x + 1
    s[t] = x[i] if i < x.size else 0
    if cuda.threadIdx.x == 0:
        s[0] = x[i - 1] if 0 < i <= x.size else 0
        s[SBLOCK + 1] = x[i + SBLOCK] if i + SBLOCK < x.size else 0
    cuda.syncthreads()
    if i < x.size:
        out[i] = s[t - 1] + s[t] + s[t + 1]
"""


def _va(body: str) -> str:
    return "@cuda.jit\ndef vector_add(a, b, out):\n" + body


def _edit(text: str, old: str, new: str = "") -> str:
    assert old in text, old
    return text.replace(old, new, 1)


BUGGY = [
    # vector_add: bounds, indexes, results, escapes and hangs
    ("va-no-bounds", "vector_add", "out_of_bounds", _va(
        "    i = cuda.grid(1)\n    out[i] = a[i] + b[i]\n"), {}),
    ("va-thread-index-only", "vector_add", "race", _va(
        "    i = cuda.threadIdx.x\n    if i < out.size:\n        out[i] = a[i] + b[i]\n"), {}),
    ("va-subtracts", "vector_add", "wrong_value", _va(
        "    i = cuda.grid(1)\n    if i < out.size:\n        out[i] = a[i] - b[i]\n"), {}),
    ("va-off-by-one", "vector_add", "out_of_bounds", _va(
        "    i = cuda.grid(1)\n    if i <= out.size:\n        out[i] = a[i] + b[i]\n"), {}),
    ("va-block-index", "vector_add", "race", _va(
        "    i = cuda.blockIdx.x\n    out[i] = a[i] + b[i]\n"), {}),
    ("va-writes-input", "vector_add", "input_written", _va(
        "    i = cuda.grid(1)\n    if i < out.size:\n        a[i] = a[i] + b[i]\n"
        "        out[i] = a[i]\n"), {}),
    ("va-every-other", "vector_add", "missing_value", _va(
        "    i = cuda.grid(1) * 2\n    if i < out.size:\n        out[i] = a[i] + b[i]\n"), {}),
    ("va-strided-threads", "vector_add", "uncoalesced", _va(
        "    i = cuda.threadIdx.x * cuda.gridDim.x + cuda.blockIdx.x\n"
        "    if i < out.size:\n        out[i] = a[i] + b[i]\n"), {}),
    ("va-neighbour", "vector_add", "out_of_bounds", _va(
        "    i = cuda.grid(1)\n    if i < out.size:\n        out[i] = a[i] + b[i + 1]\n"), {}),
    ("va-float-index", "vector_add", "unsupported", _va(
        "    i = cuda.grid(1) / 1\n    if i < out.size:\n        out[i] = a[i] + b[i]\n"), {}),
    ("va-divides-by-zero", "vector_add", "exception", _va(
        "    i = cuda.grid(1)\n    if i < out.size:\n        out[i] = a[i] / 0\n"), {}),
    ("va-sys-exit", "vector_add", "unsupported", _va(
        "    import sys\n    sys.exit(0)\n"), {}),
    ("va-raise-system-exit", "vector_add", "exception", _va(
        "    raise SystemExit(0)\n"), {}),
    ("va-keyboard-interrupt", "vector_add", "exception", _va(
        "    raise KeyboardInterrupt\n"), {}),
    ("va-unprintable-exception", "vector_add", "exception", _va(
        "    class Unprintable(Exception):\n        def __str__(self):\n"
        "            raise ValueError('no')\n    raise Unprintable()\n"), {}),
    ("va-open-file", "vector_add", "unsupported", _va(
        "    open('/etc/passwd').read()\n"), {}),
    ("va-endless-loop", "vector_add", "timeout", _va(
        "    while True:\n        pass\n"), {}),
    ("va-no-increment", "vector_add", "timeout", _va(
        "    i = cuda.grid(1)\n    while i < out.size:\n        out[i] = a[i] + b[i]\n"), {}),
    ("va-loop-catching-everything", "vector_add", "timeout", _va(
        "    while True:\n        try:\n            pass\n        except BaseException:\n"
        "            continue\n"), {}),
    ("va-loop-after-barrier", "vector_add", "timeout", _va(
        "    cuda.syncthreads()\n    while True:\n        pass\n"), {}),
    ("va-long-sleep", "vector_add", "timeout", _va(
        "    import time\n    time.sleep(1000)\n"), {}),
    ("va-huge-range", "vector_add", "unsupported", _va(
        "    for _ in range(10 ** 12):\n        pass\n"), {}),
    # add_bias
    ("bias-swapped", "add_bias", "missing_value", """
@cuda.jit
def add_bias(x, bias, out):
    row, col = cuda.grid(2)
    if row < out.shape[0] and col < out.shape[1]:
        out[row, col] = x[row, col] + bias[col]
""", {}),
    ("bias-no-bounds", "add_bias", "out_of_bounds", """
@cuda.jit
def add_bias(x, bias, out):
    col, row = cuda.grid(2)
    out[row, col] = x[row, col] + bias[col]
""", {}),
    ("bias-by-row", "add_bias", "wrong_value", """
@cuda.jit
def add_bias(x, bias, out):
    col, row = cuda.grid(2)
    if row < out.shape[0] and col < out.shape[1]:
        out[row, col] = x[row, col] + bias[row]
""", {}),
    ("bias-half-guard", "add_bias", "out_of_bounds", """
@cuda.jit
def add_bias(x, bias, out):
    col, row = cuda.grid(2)
    if col < out.shape[1]:
        out[row, col] = x[row, col] + bias[col]
""", {}),
    # tiled matrix product
    ("mm-no-first-barrier", "matmul_tiled", "race",
     _edit(_MATMUL, "        cuda.syncthreads()  # FIRST\n"), TILE),
    ("mm-no-second-barrier", "matmul_tiled", "race",
     _edit(_MATMUL, "        cuda.syncthreads()  # SECOND\n"), TILE),
    ("mm-returns-early", "matmul_tiled", "barrier_divergence", _edit(
        _MATMUL, "    tx, ty =", "    if row >= C.shape[0] or col >= C.shape[1]:\n"
        "        return\n    tx, ty ="), TILE),
    ("mm-barrier-in-if", "matmul_tiled", "barrier_divergence", _edit(
        _MATMUL, "        cuda.syncthreads()  # FIRST\n",
        "        if row < C.shape[0]:\n            cuda.syncthreads()\n"), TILE),
    ("mm-no-zero-fill", "matmul_tiled", "uninitialized", _edit(_edit(
        _MATMUL, "        sA[ty, tx] = A[row, k + tx] if row < A.shape[0] and k + tx < "
        "A.shape[1] else 0\n", "        if row < A.shape[0] and k + tx < A.shape[1]:\n"
        "            sA[ty, tx] = A[row, k + tx]\n"),
        "        sB[ty, tx] = B[k + ty, col] if k + ty < B.shape[0] and col < B.shape[1] "
        "else 0\n", "        if k + ty < B.shape[0] and col < B.shape[1]:\n"
        "            sB[ty, tx] = B[k + ty, col]\n"), TILE),
    ("mm-wrong-b-index", "matmul_tiled", "out_of_bounds",
     _edit(_MATMUL, "B[k + ty, col] if", "B[k + tx, col] if"), TILE),
    ("mm-short-inner-loop", "matmul_tiled", "wrong_value",
     _edit(_MATMUL, "range(TILE):", "range(TILE - 1):"), TILE),
    # naive matrix product
    ("mmn-no-bounds", "matmul_naive", "out_of_bounds", """
@cuda.jit
def matmul_naive(A, B, C):
    col, row = cuda.grid(2)
    acc = 0.0
    for k in range(A.shape[1]):
        acc += A[row, k] * B[k, col]
    C[row, col] = acc
""", {}),
    ("mmn-b-transposed", "matmul_naive", "out_of_bounds", """
@cuda.jit
def matmul_naive(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = 0.0
        for k in range(A.shape[1]):
            acc += A[row, k] * B[col, k]
        C[row, col] = acc
""", {}),
    # tree reductions
    ("sum-plain-add", "sum_kernel", "race",
     _edit(_SUM, "cuda.atomic.add(out, 0, s[0])", "out[0] += s[0]"), BLOCK),
    ("sum-no-step-barrier", "sum_kernel", "race",
     _edit(_SUM, "        cuda.syncthreads()  # STEP\n"), BLOCK),
    ("sum-no-load-barrier", "sum_kernel", "race",
     _edit(_SUM, "    cuda.syncthreads()  # LOADED\n"), BLOCK),
    ("sum-no-padding", "sum_kernel", "out_of_bounds",
     _edit(_SUM, "x[i] if i < x.size else 0", "x[i]"), BLOCK),
    ("sum-interleaved", "sum_kernel", "divergence", _edit(_edit(_edit(
        _SUM, "    step = BLOCK // 2\n    while step > 0:",
        "    step = 1\n    while step < BLOCK:"),
        "if tid < step:", "if tid % (2 * step) == 0:"), "step //= 2", "step *= 2"), BLOCK),
    ("sum-barrier-in-if", "sum_kernel", "barrier_divergence", _edit(
        _SUM, "            s[tid] += s[tid + step]\n        cuda.syncthreads()  # STEP",
        "            s[tid] += s[tid + step]\n            cuda.syncthreads()"), BLOCK),
    ("sum-step-too-big", "sum_kernel", "out_of_bounds",
     _edit(_SUM, "step = BLOCK // 2", "step = BLOCK"), BLOCK),
    ("sum-adds-wrong-slot", "sum_kernel", "wrong_value",
     _edit(_SUM, "cuda.atomic.add(out, 0, s[0])", "cuda.atomic.add(out, 0, s[1])"), BLOCK),
    ("dot-no-padding", "dot", "out_of_bounds",
     _edit(_DOT, "a[i] * b[i] if i < a.size else 0", "a[i] * b[i]"), BLOCK),
    ("dot-plain-add", "dot", "race",
     _edit(_DOT, "cuda.atomic.add(out, 0, s[0])", "out[0] += s[0]"), BLOCK),
    ("dot-strided-loads", "dot", "uncoalesced", _edit(
        _DOT, "    s[tid] = a[i] * b[i] if i < a.size else 0\n",
        "    j = tid * cuda.gridDim.x + cuda.blockIdx.x\n"
        "    s[tid] = a[j] * b[j] if j < a.size else 0\n"), BLOCK),
    # warp shuffles
    ("warp-returns-early", "warp_sum", "barrier_divergence", _edit(
        _WARP, "    v = x[i] if i < x.size else float32(0)\n",
        "    if i >= x.size:\n        return\n    v = x[i]\n"), {}),
    ("warp-plain-add", "warp_sum", "race",
     _edit(_WARP, "cuda.atomic.add(out, 0, v)", "out[0] += v"), {}),
    ("warp-half-the-steps", "warp_sum", "wrong_value", _edit(_WARP, "offset = 16", "offset = 8"),
     {}),
    ("warp-shuffles-up", "warp_sum", "wrong_value",
     _edit(_WARP, "shfl_down_sync", "shfl_up_sync"), {}),
    ("warp-shuffle-in-branch", "warp_sum", "barrier_divergence", """
@cuda.jit
def warp_sum(x, out):
    i = cuda.grid(1)
    v = float32(0)
    if i < x.size:
        v = x[i]
        offset = 16
        while offset > 0:
            v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
            offset //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)
""", {}),
    # grid-stride loops
    ("saxpy-no-loop", "saxpy", "missing_value", """
@cuda.jit
def saxpy(a, x, y):
    i = cuda.grid(1)
    if i < y.size:
        y[i] = a * x[i] + y[i]
""", {}),
    ("saxpy-chunks", "saxpy", "uncoalesced", """
@cuda.jit
def saxpy(a, x, y):
    start = cuda.grid(1)
    chunk = (y.size + cuda.gridsize(1) - 1) // cuda.gridsize(1)
    for i in range(start * chunk, min(start * chunk + chunk, y.size)):
        y[i] = a * x[i] + y[i]
""", {}),
    ("saxpy-step-one", "saxpy", "race", """
@cuda.jit
def saxpy(a, x, y):
    for i in range(cuda.grid(1), y.size):
        y[i] = a * x[i] + y[i]
""", {}),
    # coalescing and bank conflicts
    ("copy-rows-along-x", "copy_matrix", "uncoalesced", """
@cuda.jit
def copy_matrix(x, out):
    row, col = cuda.grid(2)
    if row < out.shape[0] and col < out.shape[1]:
        out[row, col] = x[row, col]
""", {}),
    ("copy-no-bounds", "copy_matrix", "out_of_bounds", """
@cuda.jit
def copy_matrix(x, out):
    col, row = cuda.grid(2)
    out[row, col] = x[row, col]
""", {}),
    ("transpose-copies", "transpose_naive", "out_of_bounds", """
@cuda.jit
def transpose_naive(x, out):
    col, row = cuda.grid(2)
    if row < x.shape[0] and col < x.shape[1]:
        out[row, col] = x[row, col]
""", {}),
    ("transpose-guards-out", "transpose_naive", "out_of_bounds", """
@cuda.jit
def transpose_naive(x, out):
    col, row = cuda.grid(2)
    if row < out.shape[0] and col < out.shape[1]:
        out[col, row] = x[row, col]
""", {}),
    ("tiled-no-barrier", "transpose_tiled", "race",
     _edit(_TRANSPOSE, "    cuda.syncthreads()\n"), TILE_T),
    ("tiled-strided-store", "transpose_tiled", "uncoalesced", _edit(
        _TRANSPOSE, "    if c0 + ty < out.shape[0] and r0 + tx < out.shape[1]:\n"
        "        out[c0 + ty, r0 + tx] = tile[tx, ty]",
        "    if c0 + tx < out.shape[0] and r0 + ty < out.shape[1]:\n"
        "        out[c0 + tx, r0 + ty] = tile[ty, tx]"), TILE_T),
    ("tiled-tile-not-turned", "transpose_tiled", "uninitialized",
     _edit(_TRANSPOSE, "= tile[tx, ty]", "= tile[ty, tx]"), TILE_T),
    ("padded-not-padded", "transpose_padded", "bank_conflict", _PADDED, TILE_T),
    ("padded-by-two", "transpose_padded", "bank_conflict",
     _edit(_PADDED, "(TILE_T, TILE_T)", "(TILE_T, TILE_T + 2)"), TILE_T),
    # rows
    ("softmax-lane-sum", "softmax_rows", "wrong_value", _edit(
        _SOFTMAX, "    for offset in (16, 8, 4, 2, 1):\n"
        "        total += cuda.shfl_xor_sync(0xFFFFFFFF, total, offset)\n"), {}),
    ("softmax-lane-max", "softmax_rows", "wrong_value", _edit(
        _SOFTMAX, "    for offset in (16, 8, 4, 2, 1):\n"
        "        m = max(m, cuda.shfl_xor_sync(0xFFFFFFFF, m, offset))\n"), {}),
    ("softmax-row-per-thread", "softmax_rows", "uncoalesced", """
@cuda.jit
def softmax_rows(x, out):
    row = cuda.blockIdx.x
    lane = cuda.threadIdx.x
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
""", {}),
    ("layernorm-mean-over-lanes", "layernorm_rows", "wrong_value",
     _edit(_LAYERNORM, "mean = s / cols", "mean = s / 32"), EPS),
    ("layernorm-variance-over-lanes", "layernorm_rows", "wrong_value",
     _edit(_LAYERNORM, "q / cols", "q / 32"), EPS),
    # atomics
    ("hist-plain-increment", "histogram", "race", """
@cuda.jit
def histogram(x, bins):
    i = cuda.grid(1)
    if i < x.size:
        bins[x[i]] += 1
""", {}),
    ("hist-no-bounds", "histogram", "out_of_bounds", """
@cuda.jit
def histogram(x, bins):
    i = cuda.grid(1)
    cuda.atomic.add(bins, x[i], 1)
""", {}),
    ("hist-counts-index", "histogram", "out_of_bounds", """
@cuda.jit
def histogram(x, bins):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(bins, i, 1)
""", {}),
    # halos
    ("stencil-no-barrier", "stencil_1d", "race",
     _edit(_STENCIL, "    cuda.syncthreads()\n"), SBLOCK),
    ("stencil-no-halo", "stencil_1d", "uninitialized", _edit(
        _STENCIL, "    if cuda.threadIdx.x == 0:\n"
        "        s[0] = x[i - 1] if 0 < i <= x.size else 0\n"
        "        s[SBLOCK + 1] = x[i + SBLOCK] if i + SBLOCK < x.size else 0\n"), SBLOCK),
    ("stencil-unguarded-halo", "stencil_1d", "out_of_bounds",
     _edit(_STENCIL, "x[i - 1] if 0 < i <= x.size else 0", "x[i - 1]"), SBLOCK),
]
