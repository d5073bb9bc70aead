"""``cuda`` without Numba: the course's stand-in for ``numba.cuda``, for writing kernels
that the pure-Python runtime runs (in Jupyter without Numba, and on the site, where
``from numba import cuda`` resolves to it).

``@cuda.jit`` keeps the function; ``kernel[grid, block](*arrays)`` runs it in
:func:`gpulesson.kernelcheck.scheduler.run_kernel`, writes the results back into the arrays
passed (numpy arrays, lists or :class:`~gpulesson.kernelcheck.arrays.DeviceArray`) and
prints what the checker found, if anything. ``cuda.grid``, ``cuda.threadIdx`` and the rest
exist only inside a running kernel, where the runtime gives the kernel its own ``cuda``. A
real Numba, when installed, is never replaced: this is a separate module. Standard library
only.
"""

from __future__ import annotations

from typing import Any

from gpulesson.kernelcheck.arrays import (
    DeviceArray,
    as_device,
    float32,
    float64,
    int32,
    int64,
    uint32,
    zeros,
)
from gpulesson.kernelcheck.scheduler import run_kernel

__all__ = ["cuda", "float32", "float64", "int32", "int64", "uint32"]


class Kernel:
    """A ``@cuda.jit`` function: launch it with ``kernel[grid, block](*args)``."""

    def __init__(self, fn: Any, device: bool = False) -> None:
        self.py_func = fn
        self.device = device
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__doc__ = getattr(fn, "__doc__", None)

    def __getitem__(self, config: Any) -> Any:
        if self.device:
            raise TypeError(f"{self.__name__} is a device function: call it from a kernel")
        if not isinstance(config, tuple) or len(config) < 2:
            raise TypeError(f"launch as {self.__name__}[blocks, threads_per_block](...)")
        grid, block = config[0], config[1]
        return lambda *args: _launch(self, grid, block, args)

    def __call__(self, *args: Any) -> Any:
        if self.device:
            raise TypeError(f"{self.__name__} is a device function: call it from a kernel")
        raise TypeError(f"launch {self.__name__} as {self.__name__}[blocks, "
                        "threads_per_block](...)")

    def __repr__(self) -> str:
        return f"<kernel {self.__name__}{' (device)' if self.device else ''}>"


def _launch(kernel: Kernel, grid: Any, block: Any, args: tuple[Any, ...]) -> None:
    run = run_kernel(kernel, grid, block, *args)
    for result, original in zip(run.arrays.values(), [a for a in args if _is_array(a)],
                                strict=True):
        _write_back(original, result)
    for finding in run.findings:
        print(f"kernel check: {finding}")


def _is_array(value: Any) -> bool:
    return isinstance(value, (DeviceArray, list)) or hasattr(value, "__array_interface__")


def _write_back(original: Any, result: DeviceArray) -> None:
    if isinstance(original, DeviceArray):
        original.data[:] = result.data
    elif isinstance(original, list):
        values = result.tolist()
        original[:] = values
    else:
        original[...] = result.copy_to_host()


class _Outside:
    def __get__(self, obj: Any, owner: Any) -> Any:
        raise AttributeError("cuda.grid, cuda.threadIdx and the other thread indexes exist "
                             "only inside a running kernel")


class CudaShim:
    """The ``cuda`` module of the shim."""

    _gl_cuda_shim = True
    threadIdx = blockIdx = blockDim = gridDim = laneid = _Outside()  # noqa: N815

    @staticmethod
    def jit(fn: Any = None, *, device: bool = False, **options: Any) -> Any:
        """``@cuda.jit`` or ``@cuda.jit(device=True)``; other options are ignored."""
        if fn is None or isinstance(fn, (str, tuple)):  # a signature: @cuda.jit("void(...)")
            return lambda f: Kernel(f, device=device)
        return Kernel(fn, device=device)

    @staticmethod
    def to_device(values: Any) -> DeviceArray:
        return as_device(values)

    @staticmethod
    def device_array(shape: Any, dtype: Any = "float32") -> DeviceArray:
        return zeros(shape, dtype)

    @staticmethod
    def synchronize() -> None:
        pass

    @staticmethod
    def is_available() -> bool:
        return False

    def grid(self, ndim: int) -> Any:
        raise RuntimeError("cuda.grid exists only inside a running kernel")

    gridsize = grid

    def __repr__(self) -> str:
        return "<the course's cuda stand-in (gpulesson.kernelcheck.shim)>"


cuda = CudaShim()
