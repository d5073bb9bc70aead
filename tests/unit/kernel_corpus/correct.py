"""Correct kernels: ``(id, task, source, constants)``. Each must pass its task with no
finding: the course's model kernels, and other correct ways to write them."""

from gpulesson.exercises.bank import inside_the_gpu
from gpulesson.exercises.kernel import KernelExercise
from gpulesson.kernelcheck import catalogue

B = catalogue.SUM_BLOCK

MODELS = [(f"model-{ex.task}", ex.task, ex.model_solution.source, ex.model_solution.constants)
          for ex in inside_the_gpu.EXERCISES if isinstance(ex, KernelExercise)]

OTHERS = [
    ("va-grid-stride", "vector_add", """
@cuda.jit
def vector_add(a, b, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = a[i] + b[i]
""", {}),
    ("va-early-return", "vector_add", """
@cuda.jit
def vector_add(a, b, out):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i >= out.size:
        return
    out[i] = a[i] + b[i]
""", {}),
    ("bias-explicit-indexes", "add_bias", """
@cuda.jit
def add_bias(x, bias, out):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < x.shape[0]:
        if col < x.shape[1]:
            value = x[row, col]
            out[row, col] = value + bias[col]
""", {}),
    ("sum-atomics-only", "sum_kernel", """
@cuda.jit
def sum_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(out, 0, x[i])
""", {}),
    ("sum-shuffles", "sum_kernel", """
@cuda.jit
def sum_kernel(x, out):
    partial = cuda.shared.array(2, float32)
    i = cuda.grid(1)
    v = x[i] if i < x.size else float32(0)
    for offset in (16, 8, 4, 2, 1):
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
    if cuda.laneid == 0:
        partial[cuda.threadIdx.x // 32] = v
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(out, 0, partial[0] + partial[1])
""", {}),
    ("hist-shared-privatised", "histogram", """
@cuda.jit
def histogram(x, bins):
    local = cuda.shared.array(16, int32)
    tid = cuda.threadIdx.x
    if tid < 16:
        local[tid] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(local, x[i], 1)
    cuda.syncthreads()
    if tid < 16:
        cuda.atomic.add(bins, tid, local[tid])
""", {}),
    ("dot-shuffles", "dot", """
@cuda.jit
def dot(a, b, out):
    i = cuda.grid(1)
    v = a[i] * b[i] if i < a.size else float32(0)
    for offset in (16, 8, 4, 2, 1):
        v += cuda.shfl_xor_sync(0xFFFFFFFF, v, offset)
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)
""", {}),
    ("transpose-explicit-indexes", "transpose_naive", """
@cuda.jit
def transpose_naive(x, out):
    r = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    rows, cols = x.shape
    if r < rows and c < cols:
        value = x[r, c]
        out[c, r] = value
""", {}),
    ("stencil-from-global", "stencil_1d", """
@cuda.jit
def stencil_1d(x, out):
    i = cuda.grid(1)
    if i < x.size:
        left = x[i - 1] if i > 0 else 0
        right = x[i + 1] if i + 1 < x.size else 0
        out[i] = left + x[i] + right
""", {}),
    ("softmax-shared-memory", "softmax_rows", """
@cuda.jit
def softmax_rows(x, out):
    part = cuda.shared.array(32, float32)
    row, lane = cuda.blockIdx.x, cuda.threadIdx.x
    cols = x.shape[1]
    m = -math.inf
    for c in range(lane, cols, 32):
        m = max(m, x[row, c])
    part[lane] = m
    cuda.syncthreads()
    top = part[0]
    for k in range(1, 32):
        top = max(top, part[k])
    cuda.syncthreads()
    total = 0.0
    for c in range(lane, cols, 32):
        total += math.exp(x[row, c] - top)
    part[lane] = total
    cuda.syncthreads()
    whole = 0.0
    for k in range(32):
        whole += part[k]
    for c in range(lane, cols, 32):
        out[row, c] = math.exp(x[row, c] - top) / whole
""", {}),
]

CORRECT = MODELS + OTHERS
