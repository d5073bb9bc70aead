"""The stand-in's ``cupyx.profiler.benchmark``: times a callable the way CuPy's does.

CuPy records a CUDA event before and after each call and synchronises on the second, so
``gpu_times`` is the device's time for the call. The stand-in's "device" is the host, so
both are host times around a synchronised call; the synchronisation keeps the clock guard
of the stand-in satisfied, exactly as CuPy's own events would make the timing right."""

from __future__ import annotations

import math

import numpy
from cupy import _REAL_CLOCKS, _Queue

_clock = _REAL_CLOCKS["perf_counter"]


class _PerfCaseResult:
    def __init__(self, name, cpu_times, gpu_times):
        self.name = name
        self._cpu = numpy.asarray(cpu_times, dtype=float)
        self._gpu = numpy.asarray(gpu_times, dtype=float).reshape(1, -1)

    @property
    def cpu_times(self):
        return self._cpu

    @property
    def gpu_times(self):
        return self._gpu

    def __repr__(self):
        return (f"{self.name}: CPU {self._cpu.mean() * 1e6:.3f} us, "
                f"GPU-0 {self._gpu.mean() * 1e6:.3f} us (stand-in)")


def benchmark(func, args=(), kwargs=None, n_repeat=10000, *, name=None, n_warmup=10,
              max_duration=math.inf, devices=None):
    kwargs = kwargs or {}
    name = name or getattr(func, "__name__", "func")
    _Queue.synchronize()
    for _ in range(n_warmup):
        func(*args, **kwargs)
    _Queue.synchronize()
    cpu, gpu = [], []
    started = _clock()
    for _ in range(n_repeat):
        t0 = _clock()
        func(*args, **kwargs)
        t1 = _clock()
        _Queue.synchronize()  # the stop event's synchronisation
        t2 = _clock()
        cpu.append(t1 - t0)
        gpu.append(t2 - t0)
        if t2 - started >= max_duration:
            break
    return _PerfCaseResult(name, cpu, gpu)
