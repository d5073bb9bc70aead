"""The course's model kernels on a real GPU: compiled by Numba's CUDA target from the very
sources the checker runs, launched as the tasks launch them on large sizes, their results
checked, their time measured and set beside the traffic prediction.

:func:`kernel_timings` is step 5 of ``make gpu-check`` (``scripts/gpu_check.py``). For each
task of :data:`TIMED` it builds the task's arguments at a size of a few million elements
(the task's own :attr:`~gpulesson.kernelcheck.tasks.KernelTask.arguments`, with a fast,
deterministic stand-in for the random numbers), copies them to the device, compiles the
model kernel with ``cuda.jit``, launches it once and compares its outputs with the task's
expected result, then times it with :func:`gpulesson.bench.benchmark`. The prediction is the
task's :attr:`~gpulesson.kernelcheck.tasks.KernelTask.predicted_bytes` (every input read
once, every output written once) over the GPU's memory bandwidth (the datasheet's when the
GPU is in :mod:`gpulesson.hardware`, else the caller's).

``cuda`` may be Numba's simulator with tiny sizes (:data:`TINY`): that is how the unit tests
run the whole path on a CPU. numpy and Numba are imported by the caller.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpulesson.kernelcheck.catalogue import task

__all__ = ["TIMED", "TINY", "KernelTiming", "compile_model", "kernel_timings", "models_of"]

#: Tasks timed on a GPU, and the size of each (a few million elements, or 4 MiB and more).
TIMED: Mapping[str, Mapping[str, int]] = {
    "vector_add": {"n": 1 << 22},
    "add_bias": {"rows": 2048, "cols": 2048},
    "copy_matrix": {"rows": 2048, "cols": 2048},
    "transpose_naive": {"rows": 2048, "cols": 2048},
    "transpose_tiled": {"rows": 2048, "cols": 2048},
    "transpose_padded": {"rows": 2048, "cols": 2048},
    "sum_kernel": {"n": 1 << 22},
    "dot": {"n": 1 << 22},
    "warp_sum": {"n": 1 << 22},
    "histogram": {"n": 1 << 22},
    "stencil_1d": {"n": 1 << 22},
    "softmax_rows": {"rows": 4096, "cols": 1024},
    "layernorm_rows": {"rows": 4096, "cols": 1024},
    "matmul_naive": {"m": 256, "k": 256, "n": 256},  # the expected result is plain Python
    "matmul_tiled": {"m": 256, "k": 256, "n": 256},
}
#: The same tasks at the sizes of their checks' first shape (for a run in the simulator).
TINY: Mapping[str, Mapping[str, int]] = {name: task(name).shapes[0][1] for name in TIMED}


class _CyclingRandom:
    """A stand-in for ``random.Random`` that is fast on millions of values: ``randint``
    cycles through its range, ``uniform`` through 7 evenly spaced values."""

    def __init__(self) -> None:
        self.i = 0

    def randint(self, low: int, high: int) -> int:
        self.i += 1
        return low + self.i % (high - low + 1)

    def uniform(self, low: float, high: float) -> float:
        self.i += 1
        return low + (high - low) * (self.i % 7) / 6


@dataclass(frozen=True)
class KernelTiming:
    """One model kernel timed on a device."""

    task: str
    sizes: Mapping[str, int]
    predicted_bytes: int
    predicted_seconds: float
    measured_seconds: float
    correct: bool

    @property
    def ratio(self) -> float:
        """Measured over predicted time (1.0: the kernel runs at the memory's bandwidth)."""
        return self.measured_seconds / self.predicted_seconds

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task, "sizes": dict(self.sizes),
                "predicted_bytes": self.predicted_bytes,
                "predicted_seconds": self.predicted_seconds,
                "measured_seconds": self.measured_seconds, "ratio": self.ratio,
                "correct": self.correct}


def compile_model(name: str, source: Any, cuda: Any) -> Any:
    """The model kernel of task ``name``, compiled with ``cuda.jit`` from ``source`` (the
    exercise's worked solution: its ``source`` text and its ``constants``)."""
    import numba

    space: dict[str, Any] = {"cuda": cuda, "float32": numba.float32, "int32": numba.int32,
                             "math": math, **source.constants}
    exec(compile(source.source, f"<{name}>", "exec"), space)  # noqa: S102 - the course's own
    return space[name]


def _host(value: Any, np: Any) -> Any:
    if hasattr(value, "data") and hasattr(value, "shape") and hasattr(value, "dtype"):
        return np.frombuffer(value.data, dtype=value.dtype).reshape(value.shape).copy()
    return value


def kernel_timings(device: Any, cuda: Any, *, models: Mapping[str, Any], bandwidth: float,
                   sizes: Mapping[str, Mapping[str, int]] = TIMED,
                   repeats: int = 5) -> list[KernelTiming]:
    """Run and time each model kernel of ``sizes`` on ``device`` (``device.xp``: cupy on a
    GPU, numpy with Numba's simulator), its outputs checked against the task's expected
    result; the prediction is the task's compulsory traffic over ``bandwidth`` (bytes/s).

    ``models`` maps each task to its worked solution (the kernel exercises' bank, which
    stands above this package, hands them in: :func:`models_of`)."""
    import numpy as np

    from gpulesson.bench import benchmark
    from gpulesson.device import synchronize

    xp = device.xp
    out = []
    for name, size in sizes.items():
        t = task(name)
        arguments = t.arguments(size, _CyclingRandom())
        host = {key: _host(value, np) for key, value in arguments.items()}
        expected = t.expected(arguments)
        kernel = compile_model(name, models[name], cuda)
        grid, block = t.launch(size)
        fresh = {key: xp.asarray(value) if isinstance(value, np.ndarray) else value
                 for key, value in host.items()}
        kernel[grid, block](*(fresh[p] for p in t.signature))
        synchronize(device)
        correct = True
        for output in t.outputs:
            got = np.asarray(fresh[output].get() if hasattr(fresh[output], "get")
                             else fresh[output]).ravel()
            want = np.asarray(expected[output], dtype=np.float64)
            correct &= bool(np.allclose(got, want, rtol=max(t.rtol, 1e-4), atol=1e-3))
        work = {key: xp.asarray(value) if isinstance(value, np.ndarray) else value
                for key, value in host.items()}

        def launch(kernel: Any = kernel, grid: Any = grid, block: Any = block,
                   work: dict = work, t: Any = t) -> None:
            kernel[grid, block](*(work[p] for p in t.signature))

        result = benchmark(launch, repeats=repeats, min_time=0.0, device=device, name=name)
        predicted = t.predicted_bytes(size) if t.predicted_bytes else 0
        out.append(KernelTiming(name, dict(size), predicted, predicted / bandwidth,
                                result.median, correct))
    return out


def markdown_table(timings: list[KernelTiming]) -> str:
    """The timings as a markdown table: measured beside predicted."""
    rows = ["| kernel | size | predicted traffic | predicted time | measured | ratio | "
            "result |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for k in timings:
        size = " × ".join(f"{v:,}" for v in k.sizes.values())
        rows.append(f"| {k.task} | {size} | {k.predicted_bytes / 2**20:,.1f} MiB | "
                    f"{k.predicted_seconds * 1e6:,.1f} µs | {k.measured_seconds * 1e6:,.1f} µs "
                    f"| {k.ratio:.2f}× | {'right' if k.correct else 'WRONG'} |")
    return "\n".join(rows)


def models_of(exercises: Any) -> dict[str, Any]:
    """Each kernel exercise's task and its worked solution, from a bank's ``EXERCISES``."""
    return {ex.task: ex.model_solution for ex in exercises
            if getattr(ex, "task", None) and getattr(ex, "model_solution", None) is not None}
