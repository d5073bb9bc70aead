"""Check a CUDA kernel on a CPU: bounds, races, barriers and results, thread by thread.

A learner writes a kernel with Numba (``@cuda.jit``); on a machine without a GPU it runs in
Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``), on a GPU unchanged on the device. The
checker runs the kernel's Python function in an instrumented simulator
(:mod:`gpulesson.kernelcheck.simulator`) on several shapes, including ragged ones that are
not a multiple of the block, in two thread orders, and reports, naming the thread, the
array element and the line:

* an index outside its array (a missing bounds check);
* a race: two threads on one element, at least one writing, with no barrier between them
  (or in different blocks); a missing ``cuda.syncthreads()`` shows as one;
* a shared-memory element read before its block wrote it;
* threads of a block at different barriers, or returned before one;
* an output element that is wrong, or that no thread wrote.

Use::

    from gpulesson.kernelcheck import numba_cuda, check_kernel
    cuda = numba_cuda()            # the real CUDA target on a GPU, the simulator otherwise

    @cuda.jit
    def vector_add(a, b, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a[i] + b[i]

    print(check_kernel(vector_add, "vector_add"))

:func:`run_kernel` runs one launch of any kernel on your own arrays and returns what it
found (:class:`Run`); :data:`TASKS` holds the course's exercises (vector add, a 2-D map,
a tiled matrix product, a sum).

The checker imports numpy and Numba when it runs a kernel (numba and numba-cuda from PyPI);
importing this package loads neither. Taught in: ``notebooks/inside_the_gpu.ipynb`` and its
exercises.
"""

from __future__ import annotations

import os
import sys
from types import ModuleType
from typing import Any

from gpulesson.kernelcheck.findings import KINDS, CaseResult, Finding, Report, Site, ThreadId
from gpulesson.kernelcheck.simulator import SCHEDULES, Run, python_function, run_kernel
from gpulesson.kernelcheck.tasks import TASKS, KernelTask, check_kernel, task

__all__ = ["KINDS", "SCHEDULES", "TASKS", "CaseResult", "Finding", "KernelTask", "Report",
           "Run", "Site", "ThreadId", "check_kernel", "numba_cuda", "python_function",
           "run_kernel", "simulated", "task"]

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
