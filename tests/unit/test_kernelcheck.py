"""gpulesson.kernelcheck: the checker accepts correct kernels and rejects, with a message
naming the thread, the element and the line, the bugs learners make: no bounds check on a
ragged shape, a missing cuda.syncthreads() in a tiled matrix product, a race in a
reduction, threads that return before a barrier.

The kernels are written with the course's ``cuda`` stand-in (no Numba needed) and run in
the pure-Python runtime; kernels written with Numba's ``cuda`` run there the same way
(tests/unit/test_kernelcheck_runtime.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from gpulesson import kernelcheck as kc
from gpulesson.kernelcheck import catalogue

# Numba picks its CUDA target once per process, at the first import of numba.cuda: choose it
# here, at collection, before any test runs learner code that says `from numba import cuda`
# (the tests that compare with Numba's simulator need the simulator on this machine).
kc.numba_cuda()
cuda = kc.cuda
float32 = kc.float32

TILE = catalogue.TILE
BLOCK = catalogue.SUM_BLOCK


@cuda.jit
def vector_add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


@cuda.jit
def vector_add_unchecked(a, b, out):
    i = cuda.grid(1)
    out[i] = a[i] + b[i]


@cuda.jit
def add_bias(x, bias, out):
    col, row = cuda.grid(2)
    if row < out.shape[0] and col < out.shape[1]:
        out[row, col] = x[row, col] + bias[col]


@cuda.jit
def add_bias_swapped(x, bias, out):
    row, col = cuda.grid(2)
    if row < out.shape[0] and col < out.shape[1]:
        out[row, col] = x[row, col] + bias[col]


def _matmul(first_barrier: bool = True, second_barrier: bool = True, early: bool = False):
    @cuda.jit
    def matmul_tiled(A, B, C):
        sA = cuda.shared.array((TILE, TILE), float32)
        sB = cuda.shared.array((TILE, TILE), float32)
        col, row = cuda.grid(2)
        if early and (row >= C.shape[0] or col >= C.shape[1]):
            return
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        acc = float32(0.0)
        for t in range((A.shape[1] + TILE - 1) // TILE):
            k = t * TILE
            a_ok = row < A.shape[0] and k + tx < A.shape[1]
            b_ok = k + ty < B.shape[0] and col < B.shape[1]
            sA[ty, tx] = A[row, k + tx] if a_ok else 0
            sB[ty, tx] = B[k + ty, col] if b_ok else 0
            if first_barrier:
                cuda.syncthreads()
            for j in range(TILE):
                acc += sA[ty, j] * sB[j, tx]
            if second_barrier:
                cuda.syncthreads()
        if row < C.shape[0] and col < C.shape[1]:
            C[row, col] = acc

    return matmul_tiled


def _sum(barrier_in_loop: bool = True, atomic: bool = True):
    @cuda.jit
    def sum_kernel(x, out):
        s = cuda.shared.array(BLOCK, float32)
        tid = cuda.threadIdx.x
        i = cuda.grid(1)
        s[tid] = x[i] if i < x.size else 0
        cuda.syncthreads()
        step = BLOCK // 2
        while step > 0:
            if tid < step:
                s[tid] += s[tid + step]
            if barrier_in_loop:
                cuda.syncthreads()
            step //= 2
        if tid == 0:
            if atomic:
                cuda.atomic.add(out, 0, s[0])
            else:
                out[0] += s[0]

    return sum_kernel


# ---------------------------------------------------------------------------------------
# The reference kernels pass


@pytest.mark.parametrize(("kernel", "name"), [
    (vector_add, "vector_add"), (add_bias, "add_bias"), (_matmul(), "matmul_tiled"),
    (_sum(), "sum_kernel")])
def test_reference_kernels_pass_on_every_shape_and_order(kernel, name: str) -> None:
    report = kc.check_kernel(kernel, name)
    assert report.ok, str(report)
    labels = {case.label for case in report.cases}
    assert any("ragged" in label for label in labels) and len(labels) == 2
    assert {case.schedule for case in report.cases} == {"sequential", "reverse"}
    assert "passed" in report.summary()


def test_an_undecorated_function_runs_too() -> None:
    assert kc.check_kernel(vector_add.py_func, "vector_add").ok


# ---------------------------------------------------------------------------------------
# The bugs, each with its message


def test_missing_bounds_check_fails_on_the_ragged_shape_only() -> None:
    report = kc.check_kernel(vector_add_unchecked, "vector_add")
    whole, ragged = report.cases[0], report.cases[-1]
    assert whole.ok and "ragged" in ragged.label
    first = report.first
    assert first.kind == "out_of_bounds" and first.array == "a" and first.index == (100,)
    assert str(first.thread) == "thread 100 (block 3, threadIdx.x 4)"
    assert "read a[100] but a has 100 elements, 0 to 99" in first.message
    assert "line 3 of vector_add_unchecked: `out[i] = a[i] + b[i]`" in first.message
    assert first.count == 28  # threads 100 to 127


def test_tiled_matmul_missing_the_second_barrier_is_a_race() -> None:
    report = kc.check_kernel(_matmul(second_barrier=False), "matmul_tiled")
    assert report.first.kind == "race" and not report.has("uninitialized")
    message = report.first.message
    assert message.startswith("race on shared sA[0, 0]: the thread at cuda.grid(2) = (0, 0)")
    assert "with no cuda.syncthreads() between them" in message
    assert "`sA[ty, tx] = A[row, k + tx] if a_ok else 0`" in message
    assert "`acc += sA[ty, j] * sB[j, tx]`" in message
    assert report.has("wrong_value")


def test_tiled_matmul_missing_the_first_barrier_reads_unwritten_tiles() -> None:
    report = kc.check_kernel(_matmul(first_barrier=False), "matmul_tiled")
    assert report.kinds[:2] == ("race", "uninitialized")
    unwritten = next(f for f in report.findings if f.kind == "uninitialized")
    assert "before any thread of its block wrote it" in unwritten.message


def test_threads_that_return_before_a_barrier_are_named() -> None:
    report = kc.check_kernel(_matmul(early=True), "matmul_tiled")
    assert report.first.kind == "barrier_divergence"
    assert "had returned when the other threads of its block reached cuda.syncthreads()" in \
        report.first.message
    assert "ragged" in report.first_case.label


def test_reduction_with_a_plain_add_across_blocks_is_a_race() -> None:
    """Blocks run in no fixed order: out[0] += s[0] from two blocks races, although the
    result is right when the blocks run one after the other."""
    report = kc.check_kernel(_sum(atomic=False), "sum_kernel")
    assert report.kinds == ("race",)
    first = report.first
    assert first.array == "out" and first.index == (0,)
    assert "race on global out[0]: thread 0 (block 0, threadIdx.x 0) wrote it" in first.message
    assert "thread 64 (block 1, threadIdx.x 0) read it" in first.message
    assert "their blocks run in no fixed order" in first.message


def test_reduction_without_the_barrier_in_its_loop_is_a_race_on_shared_memory() -> None:
    report = kc.check_kernel(_sum(barrier_in_loop=False), "sum_kernel")
    assert report.first.kind == "race" and report.first.array == "s"
    assert "with no cuda.syncthreads() between them" in report.first.message


def test_swapped_rows_and_columns_leave_elements_unwritten() -> None:
    report = kc.check_kernel(add_bias_swapped, "add_bias")
    assert report.first.kind == "missing_value"
    assert "no thread wrote out[0, 16]" in report.first.message


def test_a_python_error_is_reported_with_its_line() -> None:
    @cuda.jit
    def broken(a, b, out):
        i = cuda.grid(1)
        out[i] = a[i] + undefined_name  # noqa: F821

    report = kc.check_kernel(broken, "vector_add")
    assert report.first.kind == "exception"
    assert "NameError" in report.first.message and "line 3 of broken" in report.first.message


def test_writing_an_input_and_negative_indexes_are_findings() -> None:
    @cuda.jit
    def writes_input(a, b, out):
        i = cuda.grid(1)
        if i < out.size:
            a[i] = 0
            out[i] = a[i - 1] + b[i]

    report = kc.check_kernel(writes_input, "vector_add")
    assert report.has("input_written") and report.has("out_of_bounds")
    negative = next(f for f in report.findings if f.kind == "out_of_bounds")
    assert "a[-1]" in negative.message and "negative index" in negative.message


# ---------------------------------------------------------------------------------------
# Runs and thread orders


def test_a_race_across_blocks_is_found_in_either_order_and_the_caller_keeps_its_arrays(
        ) -> None:
    x = np.arange(128, dtype=np.float32)
    racy, right = _sum(atomic=False), _sum()
    for schedule in kc.SCHEDULES:
        out = np.zeros(1, np.float32)
        run = kc.run_kernel(right, 2, BLOCK, x, out, schedule=schedule)
        assert run.ok and run.arrays["out"].tolist() == [x.sum()]
        assert out[0] == 0, "the caller's array is left alone"
        racy_run = kc.run_kernel(racy, 2, BLOCK, x, np.zeros(1, np.float32),
                                 schedule=schedule)
        assert [f.kind for f in racy_run.findings] == ["race"]
        assert "blocks run in no fixed order" in racy_run.findings[0].message


def test_runs_are_deterministic() -> None:
    kernel = _matmul(second_barrier=False)
    first = kc.check_kernel(kernel, "matmul_tiled")
    again = kc.check_kernel(kernel, "matmul_tiled")
    assert str(first) == str(again)


def test_shared_arrays_start_as_nan_and_are_per_block() -> None:
    @cuda.jit
    def peek(out):
        s = cuda.shared.array(4, float32)
        if cuda.threadIdx.x == 0:
            s[0] = cuda.blockIdx.x
        cuda.syncthreads()
        out[cuda.grid(1)] = s[0] + s[1] * 0

    run = kc.run_kernel(peek, 2, 4, np.zeros(8, np.float32))
    assert np.isnan(run.arrays["out"].copy_to_host()).all()  # s[1] was never written
    assert [f.kind for f in run.findings] == ["uninitialized"]


def test_a_runaway_loop_is_stopped() -> None:
    @cuda.jit
    def spins(a, b, out):
        while a[0] == a[0]:
            pass

    run = kc.run_kernel(spins, 1, 1, np.zeros(1), np.zeros(1), np.zeros(1),
                        budget=kc.Budget(seconds=0.5))
    assert [f.kind for f in run.findings] == ["timeout"]
    assert "ran past the checker's budget of 0.5 s" in run.findings[0].message


@pytest.mark.parametrize(("call", "message"), [
    (lambda: kc.run_kernel(vector_add, 1, 2048, np.zeros(1), np.zeros(1), np.zeros(1)),
     "block must have at most 1,024 threads"),
    (lambda: kc.run_kernel(vector_add, 0, 32, np.zeros(1), np.zeros(1), np.zeros(1)),
     "grid must be a positive int or a tuple of 1 to 3 positive ints, got 0"),
    (lambda: kc.run_kernel(vector_add, 1, 32, np.zeros(1), schedule="sequential"),
     "vector_add takes 3 arguments (a, b, out), got 1"),
    (lambda: kc.run_kernel(vector_add, 1, 32, np.zeros(1), np.zeros(1), np.zeros(1),
                           schedule="random"), "schedule must be one of"),
    (lambda: kc.run_kernel("vector_add", 1, 32), "kernel must be a @cuda.jit kernel"),
    (lambda: kc.run_kernel(vector_add, 10**6, 1000, np.zeros(1), np.zeros(1), np.zeros(1)),
     "grid × block must be at most 65,536 threads for the checker, got 1e+09"),
    (lambda: kc.task("transpose"), "no kernel task 'transpose'; the tasks are: vector_add"),
])
def test_bad_arguments_name_the_argument(call, message: str) -> None:
    with pytest.raises((ValueError, TypeError, KeyError)) as info:
        call()
    assert message in str(info.value)


def test_numba_cuda_matches_the_machine() -> None:
    from gpulesson.device import get_device

    numba_cuda = kc.numba_cuda()
    assert kc.simulated() is (not get_device().is_gpu) or kc.simulated() is True
    from numba import cuda as imported

    assert numba_cuda is imported


def test_a_gpu_without_nvidias_driver_library_gets_the_simulator() -> None:
    """An array library may report a GPU (CuPy's test stand-in does) on a machine without
    libcuda; Numba's CUDA target would then fail at the first launch, so the simulator is
    chosen. Numba fixes its target once per process: checked in a fresh one."""
    import subprocess
    import sys
    from pathlib import Path

    if kc.cuda_driver_present():
        pytest.skip("NVIDIA's driver library is installed here")
    code = ("from types import SimpleNamespace\n"
            "from gpulesson import kernelcheck as kc\n"
            "kc.numba_cuda(SimpleNamespace(is_gpu=True))\n"
            "print(kc.simulated())\n")
    env = {k: v for k, v in __import__("os").environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[2], env=env, timeout=120)
    assert out.stdout.strip() == "True", out.stderr[-2000:]
