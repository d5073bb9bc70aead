"""Check a CUDA kernel on a CPU: bounds, races, barriers, results, and the traffic the
hardware would see (coalescing, bank conflicts, divergence, occupancy), thread by thread.

A learner writes a kernel as for Numba (``@cuda.jit``). The checker runs the kernel's own
source in a pure-Python CUDA runtime (:mod:`gpulesson.kernelcheck.runtime`, standard
library only), so the same kernel is checked in Jupyter without Numba and on the course's
site, in the browser's Python. It runs the kernel on several shapes, including ragged ones
that are not a multiple of the block, in two thread orders, within a time budget, and
reports, naming the thread, the array element and the line:

* an index outside its array (a missing bounds check);
* a race: two threads on one element, at least one writing, with no barrier between them
  (or in different blocks), said to be across loop iterations when it is;
* a shared-memory element read before its block wrote it;
* threads of a block at different barriers, or returned before one;
* an output element that is wrong, or that no thread wrote;
* an exception (``SystemExit`` and ``KeyboardInterrupt`` included) or a kernel that runs
  past its budget;
* per warp (:mod:`gpulesson.kernelcheck.counters`): global requests and 32-byte sectors,
  shared-memory wavefronts (bank conflicts), divergent branches, and the occupancy.

Use::

    from gpulesson.kernelcheck import cuda, check_kernel   # or: from numba import cuda

    @cuda.jit
    def vector_add(a, b, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a[i] + b[i]

    print(check_kernel(vector_add, "vector_add"))

:func:`run_kernel` runs one launch of any kernel on your own arrays (:class:`Run`);
:data:`TASKS` holds the course's exercises. :func:`numba_cuda` gives Numba's CUDA module
(the real target on a GPU, its simulator otherwise) for timing kernels on a device, and
:mod:`gpulesson.kernelcheck.simulator` runs a kernel in Numba's simulator as a cross-check.
Taught in: ``notebooks/inside_the_gpu.ipynb`` and its exercises.
"""

from __future__ import annotations

import os
import sys
from types import ModuleType
from typing import Any

from gpulesson.kernelcheck.catalogue import TASKS, task
from gpulesson.kernelcheck.findings import (
    KINDS,
    PERFORMANCE_KINDS,
    CaseResult,
    Finding,
    Report,
    Site,
    ThreadId,
)
from gpulesson.kernelcheck.runtime import SCHEDULES, Budget, python_function
from gpulesson.kernelcheck.scheduler import Run, run_kernel
from gpulesson.kernelcheck.shim import cuda, float32, int32
from gpulesson.kernelcheck.tasks import KernelTask, check_kernel

__all__ = ["KINDS", "PERFORMANCE_KINDS", "SCHEDULES", "TASKS", "Budget", "CaseResult",
           "Finding", "KernelTask", "Report", "Run", "Site", "ThreadId", "check_kernel",
           "cuda", "float32", "int32", "numba_cuda", "python_function", "run_kernel",
           "simulated", "task"]

SIMULATOR_VARIABLE = "NUMBA_ENABLE_CUDASIM"
_INSTALL = ("Install Numba's CUDA target in the course's environment: "
            "`pip install -c constraints.txt numba numba-cuda` (for a GPU: the `gpu` extra, "
            "`pip install -c constraints.txt -e '.[gpu]'`).")


def simulated() -> bool | None:
    """Whether ``numba.cuda`` runs kernels in the simulator (``None``: not imported yet)."""
    if "numba.cuda" not in sys.modules:
        return None
    from numba.cuda import config

    return bool(config.ENABLE_CUDASIM)


def cuda_driver_present() -> bool:
    """Whether NVIDIA's driver library (``libcuda``), which Numba's CUDA target loads, is
    installed here."""
    import ctypes
    import ctypes.util

    for name in ("libcuda.so.1", "libcuda.so", ctypes.util.find_library("cuda"), "nvcuda.dll"):
        if not name:
            continue
        try:
            ctypes.CDLL(name)
        except OSError:
            continue
        return True
    return False


def numba_cuda(device: Any = None) -> ModuleType:
    """``numba.cuda`` for this machine: the real CUDA target when ``device`` (default
    :func:`gpulesson.device.get_device`) is a GPU, Numba's CPU simulator otherwise.

    Numba decides once per process, when ``numba.cuda`` is first imported, reading the
    environment variable ``NUMBA_ENABLE_CUDASIM``; this function sets it to ``1`` before
    that import when there is no GPU (and leaves it as the user set it otherwise). Kernels
    written with the returned module run unchanged on both.

    Raises
    ------
    ImportError
        when numba or numba-cuda is not installed (says how to install them).
    RuntimeError
        when ``numba.cuda`` was already imported for the other target.
    """
    if device is None:
        from gpulesson.device import get_device

        device = get_device()
    # Numba's CUDA target needs NVIDIA's driver library itself; an array library that
    # reports a GPU without it (a test stand-in) still gets the simulator
    want_simulator = not device.is_gpu or not cuda_driver_present()
    mode = simulated()
    if mode is None:
        if want_simulator:
            os.environ[SIMULATOR_VARIABLE] = "1"
            config = sys.modules.get("numba.core.config")
            if config is not None:  # numba itself was imported: it read the variable then
                config.ENABLE_CUDASIM = 1
        try:
            from numba import cuda
        except ImportError as error:
            raise ImportError(f"{error}. {_INSTALL}") from error
        return cuda
    if want_simulator and not mode:
        raise RuntimeError("numba.cuda was imported for a GPU before numba_cuda() was called, "
                           "and this machine has none: restart the kernel and call "
                           "numba_cuda() before importing numba.cuda")
    from numba import cuda

    return cuda
