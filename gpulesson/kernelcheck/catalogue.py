"""The course's kernel tasks (:data:`TASKS`): what each kernel computes, the shapes it is
checked on, how it is launched, what it is graded on and the traffic a good kernel moves.

Standard library only: the expected results are computed in plain Python.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from gpulesson.kernelcheck.arrays import zeros
from gpulesson.kernelcheck.taskspec import KernelTask, blocks, floats, ints, nan

__all__ = ["BINS", "EPS", "MAP_BLOCK", "ROW_THREADS", "SUM_BLOCK", "TASKS", "TILE",
           "TRANSPOSE_TILE", "VECTOR_BLOCK", "task"]

VECTOR_BLOCK = 32
MAP_BLOCK = (8, 8)
TILE = 8
SUM_BLOCK = 64
STRIDE_BLOCKS, STRIDE_THREADS = 2, 32
COPY_BLOCK = (16, 16)
TRANSPOSE_TILE = 32
ROW_THREADS = 32
EPS = 1e-5
BINS = 16
F32 = 4


def _mm(a: Any, b: Any) -> list[float]:
    (m, k), n = a.shape, b.shape[1]
    A, B = a.data, b.data
    return [sum(A[i * k + j] * B[j * n + c] for j in range(k)) for i in range(m)
            for c in range(n)]


def _transpose(x: Any) -> list[float]:
    rows, cols = x.shape
    return [x.data[r * cols + c] for c in range(cols) for r in range(rows)]


def _rows(x: Any) -> list[list[float]]:
    rows, cols = x.shape
    return [list(x.data[r * cols:(r + 1) * cols]) for r in range(rows)]


def _softmax(x: Any) -> list[float]:
    out = []
    for row in _rows(x):
        top = max(row)
        e = [math.exp(v - top) for v in row]
        total = sum(e)
        out += [v / total for v in e]
    return out


def _layernorm(x: Any) -> list[float]:
    out = []
    for row in _rows(x):
        mean = sum(row) / len(row)
        var = sum((v - mean) ** 2 for v in row) / len(row)
        out += [(v - mean) / math.sqrt(var + EPS) for v in row]
    return out


def _stencil(x: Any) -> list[float]:
    d, n = x.data, x.size
    return [(d[i - 1] if i else 0) + d[i] + (d[i + 1] if i + 1 < n else 0) for i in range(n)]


_VECTOR_ADD = KernelTask(
    name="vector_add", title="out = a + b, element by element",
    signature=("a", "b", "out"), inputs=("a", "b"), outputs=("out",),
    shapes=(("n = 64 (2 full blocks)", {"n": 64}),
            ("n = 100 (4 blocks, the last one ragged)", {"n": 100})),
    arguments=lambda s, rng: {"a": ints(rng, s["n"]), "b": ints(rng, s["n"]),
                              "out": nan(s["n"])},
    launch=lambda s: (blocks(s["n"], VECTOR_BLOCK), VECTOR_BLOCK),
    expected=lambda a: {"out": [x + y for x, y in zip(a["a"].data, a["b"].data, strict=True)]},
    launch_text=f"{VECTOR_BLOCK} threads per block, ⌈n / {VECTOR_BLOCK}⌉ blocks",
    performance=("uncoalesced",), predicted_bytes=lambda s: 3 * s["n"] * F32,
)

_ADD_BIAS = KernelTask(
    name="add_bias", title="out[row, col] = x[row, col] + bias[col]",
    signature=("x", "bias", "out"), inputs=("x", "bias"), outputs=("out",),
    shapes=(("16 × 16 (2 × 2 full blocks)", {"rows": 16, "cols": 16}),
            ("13 rows × 21 columns (ragged in both directions)", {"rows": 13, "cols": 21})),
    arguments=lambda s, rng: {"x": ints(rng, (s["rows"], s["cols"])),
                              "bias": ints(rng, s["cols"]), "out": nan((s["rows"], s["cols"]))},
    launch=lambda s: ((blocks(s["cols"], MAP_BLOCK[0]), blocks(s["rows"], MAP_BLOCK[1])),
                      MAP_BLOCK),
    expected=lambda a: {"out": [v + a["bias"].data[i % a["x"].shape[1]]
                                for i, v in enumerate(a["x"].data)]},
    launch_text=(f"blocks of {MAP_BLOCK[0]} × {MAP_BLOCK[1]} threads; x (threadIdx.x, and "
                 "the first value of cuda.grid(2)) runs along the columns, y along the rows"),
    predicted_bytes=lambda s: (2 * s["rows"] * s["cols"] + s["cols"]) * F32,
)

_MATMUL_SHAPES = (("M = K = N = 16 (whole tiles)", {"m": 16, "k": 16, "n": 16}),
                  ("M = 13, K = 20, N = 11 (ragged tiles)", {"m": 13, "k": 20, "n": 11}))


def _mm_arguments(s: Mapping[str, int], rng: Any) -> dict[str, Any]:
    return {"A": ints(rng, (s["m"], s["k"])), "B": ints(rng, (s["k"], s["n"])),
            "C": nan((s["m"], s["n"]))}


def _mm_launch(s: Mapping[str, int]) -> tuple[Any, Any]:
    return (blocks(s["n"], TILE), blocks(s["m"], TILE)), (TILE, TILE)


def _mm_bytes(s: Mapping[str, int]) -> int:
    return (s["m"] * s["k"] + s["k"] * s["n"] + s["m"] * s["n"]) * F32


def _matmul_task(name: str, title: str, launch_text: str) -> KernelTask:
    """C = A @ B on the matmul shapes, one thread per element of C."""
    return KernelTask(
        name=name, title=title, signature=("A", "B", "C"), inputs=("A", "B"), outputs=("C",),
        shapes=_MATMUL_SHAPES, arguments=_mm_arguments, launch=_mm_launch,
        expected=lambda a: {"C": _mm(a["A"], a["B"])}, launch_text=launch_text,
        predicted_bytes=_mm_bytes,
    )


_MATMUL = _matmul_task(
    "matmul_tiled", f"C = A @ B with {TILE} × {TILE} tiles in shared memory",
    f"TILE = {TILE}: blocks of {TILE} × {TILE} threads, one per element of a tile of C; x "
    "runs along the columns of C, y along its rows")
_MATMUL_NAIVE = _matmul_task(
    "matmul_naive", "C = A @ B, one element of C per thread",
    f"blocks of {TILE} × {TILE} threads, one per element of C; x runs along the columns of "
    "C, y along its rows")


def _sum_task(name: str, title: str, threads: str,
              performance: tuple[str, ...]) -> KernelTask:
    """A reduction of x into out[0]; ``threads`` says more of a block's threads, if needed."""
    return KernelTask(
        name=name, title=title, signature=("x", "out"), inputs=("x",), outputs=("out",),
        shapes=(("n = 128 (2 full blocks)", {"n": 128}),
                ("n = 200 (4 blocks, the last one ragged)", {"n": 200})),
        arguments=lambda s, rng: {"x": ints(rng, s["n"]), "out": zeros(1)},
        launch=lambda s: (blocks(s["n"], SUM_BLOCK), SUM_BLOCK),
        expected=lambda a: {"out": [sum(a["x"].data)]},
        fills_outputs=False,
        launch_text=(f"{SUM_BLOCK} threads per block{threads}, ⌈n / {SUM_BLOCK}⌉ blocks; out "
                     "holds one zero when the kernel starts"),
        performance=performance, predicted_bytes=lambda s: s["n"] * F32,
    )


_SUM = _sum_task("sum_kernel", "out[0] = the sum of x", "", ("divergence",))

_DOT = KernelTask(
    name="dot", title="out[0] = the dot product of a and b",
    signature=("a", "b", "out"), inputs=("a", "b"), outputs=("out",),
    shapes=(("n = 128 (2 full blocks)", {"n": 128}),
            ("n = 150 (3 blocks, the last one ragged)", {"n": 150})),
    arguments=lambda s, rng: {"a": ints(rng, s["n"]), "b": ints(rng, s["n"]), "out": zeros(1)},
    launch=lambda s: (blocks(s["n"], SUM_BLOCK), SUM_BLOCK),
    expected=lambda a: {"out": [sum(x * y for x, y in zip(a["a"].data, a["b"].data,
                                                         strict=True))]},
    fills_outputs=False,
    launch_text=(f"{SUM_BLOCK} threads per block, ⌈n / {SUM_BLOCK}⌉ blocks; out holds one "
                 "zero when the kernel starts"),
    performance=("uncoalesced", "divergence"), predicted_bytes=lambda s: 2 * s["n"] * F32,
)

_WARP_SUM = _sum_task("warp_sum", "out[0] = the sum of x, each warp reducing with shuffles",
                      " (2 warps)", ("uncoalesced",))

_SAXPY = KernelTask(
    name="saxpy", title="y = a·x + y with a grid-stride loop",
    signature=("a", "x", "y"), inputs=("x",), outputs=("y",),
    shapes=(("n = 256 (4 elements per thread)", {"n": 256}),
            ("n = 300 (ragged: some threads take one more)", {"n": 300})),
    arguments=lambda s, rng: {"a": 2.0, "x": ints(rng, s["n"]), "y": ints(rng, s["n"])},
    launch=lambda s: (STRIDE_BLOCKS, STRIDE_THREADS),
    expected=lambda a: {"y": [a["a"] * x + y for x, y in zip(a["x"].data, a["y"].data,
                                                            strict=True)]},
    launch_text=(f"always {STRIDE_BLOCKS} blocks of {STRIDE_THREADS} threads, fewer threads "
                 "than elements"),
    performance=("uncoalesced",), predicted_bytes=lambda s: 3 * s["n"] * F32,
)

def _matrix_task(name: str, title: str, shapes: Any, values: Any, *, transposed: bool = False,
                 **fields: Any) -> KernelTask:
    """A kernel that reads the rows × cols matrix x (``values(rng, shape)``) and writes out
    (its transpose's shape if ``transposed``), each once: ``2 * rows * cols * 4`` bytes."""
    def arguments(s: Mapping[str, int], rng: Any) -> dict[str, Any]:
        out = (s["cols"], s["rows"]) if transposed else (s["rows"], s["cols"])
        return {"x": values(rng, (s["rows"], s["cols"])), "out": nan(out)}

    return KernelTask(
        name=name, title=title, signature=("x", "out"), inputs=("x",), outputs=("out",),
        shapes=shapes, arguments=arguments,
        predicted_bytes=lambda s: 2 * s["rows"] * s["cols"] * F32, **fields)


_COPY = _matrix_task(
    "copy_matrix", "out = x for a row-major matrix, coalesced",
    (("32 × 32 (2 × 2 full blocks)", {"rows": 32, "cols": 32}),
     ("20 × 20 (ragged)", {"rows": 20, "cols": 20})), ints,
    launch=lambda s: ((blocks(s["cols"], COPY_BLOCK[0]), blocks(s["rows"], COPY_BLOCK[1])),
                      COPY_BLOCK),
    expected=lambda a: {"out": list(a["x"].data)},
    launch_text=f"blocks of {COPY_BLOCK[0]} × {COPY_BLOCK[1]} threads covering the matrix",
    performance=("uncoalesced",),
)


def _transpose_task(name: str, title: str, performance: tuple[str, ...]) -> KernelTask:
    tile = TRANSPOSE_TILE
    return _matrix_task(
        name, title, (("x of 32 × 64 (whole tiles)", {"rows": 32, "cols": 64}),
                      ("x of 40 × 36 (ragged tiles)", {"rows": 40, "cols": 36})),
        ints, transposed=True,
        launch=lambda s: ((blocks(s["cols"], tile), blocks(s["rows"], tile)), (tile, tile)),
        expected=lambda a: {"out": _transpose(a["x"])},
        launch_text=(f"TILE = {tile}: blocks of {tile} × {tile} threads over x (rows × "
                     "columns); x runs along the columns of x"),
        performance=performance)


_TRANSPOSE_NAIVE = _transpose_task("transpose_naive", "out = xᵀ, one element per thread", ())
_TRANSPOSE_TILED = _transpose_task(
    "transpose_tiled", "out = xᵀ through a shared tile, both sides coalesced",
    ("uncoalesced",))
_TRANSPOSE_PADDED = _transpose_task(
    "transpose_padded", "out = xᵀ through a padded shared tile, no bank conflicts",
    ("uncoalesced", "bank_conflict"))


def _row_task(name: str, title: str, expected: Any, rtol: float, atol: float) -> KernelTask:
    return _matrix_task(
        name, title, (("4 rows of 64", {"rows": 4, "cols": 64}),
                      ("3 rows of 50 (ragged: not a multiple of 32)", {"rows": 3, "cols": 50})),
        floats, launch=lambda s: (s["rows"], ROW_THREADS),
        expected=lambda a: {"out": expected(a["x"])},
        launch_text=f"one block of {ROW_THREADS} threads (one warp) per row",
        performance=("uncoalesced",), rtol=rtol, atol=atol)


_SOFTMAX = _row_task("softmax_rows", "the softmax of every row", _softmax, 1e-4, 1e-6)
_LAYERNORM = _row_task("layernorm_rows", f"every row normalised: (x − mean) / √(var + {EPS:g})",
                       _layernorm, 1e-4, 1e-4)


def _histogram_expected(a: Mapping[str, Any]) -> dict[str, list[float]]:
    counts = [0] * BINS
    for v in a["x"].data:
        counts[v] += 1
    return {"bins": counts}


_HISTOGRAM = KernelTask(
    name="histogram", title=f"bins[v] = how many elements of x equal v (0 ≤ v < {BINS})",
    signature=("x", "bins"), inputs=("x",), outputs=("bins",),
    shapes=(("n = 256 (4 full blocks)", {"n": 256}),
            ("n = 300 (5 blocks, the last one ragged)", {"n": 300})),
    arguments=lambda s, rng: {"x": ints(rng, s["n"], 0, BINS - 1, "int32"),
                              "bins": zeros(BINS, "int32")},
    launch=lambda s: (blocks(s["n"], SUM_BLOCK), SUM_BLOCK),
    expected=_histogram_expected, fills_outputs=False,
    launch_text=(f"{SUM_BLOCK} threads per block; bins holds {BINS} zeros (int32) when the "
                 "kernel starts"),
    performance=("uncoalesced",), predicted_bytes=lambda s: s["n"] * F32,
)

_STENCIL = KernelTask(
    name="stencil_1d", title="out[i] = x[i − 1] + x[i] + x[i + 1] (0 past the ends)",
    signature=("x", "out"), inputs=("x",), outputs=("out",),
    shapes=(("n = 64 (2 full blocks)", {"n": 64}),
            ("n = 100 (4 blocks, the last one ragged)", {"n": 100})),
    arguments=lambda s, rng: {"x": ints(rng, s["n"]), "out": nan(s["n"])},
    launch=lambda s: (blocks(s["n"], VECTOR_BLOCK), VECTOR_BLOCK),
    expected=lambda a: {"out": _stencil(a["x"])},
    launch_text=f"{VECTOR_BLOCK} threads per block, ⌈n / {VECTOR_BLOCK}⌉ blocks",
    performance=("uncoalesced",), predicted_bytes=lambda s: 2 * s["n"] * F32,
)

#: The checker's tasks, by the kernel's name.
TASKS: Mapping[str, KernelTask] = MappingProxyType({t.name: t for t in (
    _VECTOR_ADD, _ADD_BIAS, _MATMUL, _MATMUL_NAIVE, _SUM, _DOT, _WARP_SUM, _SAXPY, _COPY,
    _TRANSPOSE_NAIVE, _TRANSPOSE_TILED, _TRANSPOSE_PADDED, _SOFTMAX, _LAYERNORM, _HISTOGRAM,
    _STENCIL)})


def task(name: str) -> KernelTask:
    """The task ``name``; ``KeyError`` listing the known ones."""
    try:
        return TASKS[name]
    except KeyError:
        raise KeyError(f"no kernel task {name!r}; the tasks are: {', '.join(TASKS)}") from None
