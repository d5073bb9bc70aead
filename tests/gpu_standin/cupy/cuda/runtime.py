"""The stand-in's ``cupy.cuda.runtime``: one small device that computes with numpy."""

from __future__ import annotations

import cupy
from cupy import _Memory, _Queue

#: CUDA 12.8 (the version numbers CUDA encodes as 1000 * major + 10 * minor).
_RUNTIME_VERSION = 12080
_DRIVER_VERSION = 12080


class CUDARuntimeError(RuntimeError):
    """As CuPy's: raised by the first allocation when there is no usable GPU."""

    def __init__(self, status):
        self.status = status
        super().__init__(f"cudaError {status} (stand-in)")


def getDeviceCount():
    return 1


def getDevice():
    return 0


def setDevice(device):
    if device != 0:
        raise CUDARuntimeError(101)


def deviceSynchronize():
    _Queue.synchronize()


def runtimeGetVersion():
    return _RUNTIME_VERSION


def driverGetVersion():
    return _DRIVER_VERSION


def memGetInfo():
    """(free, total) bytes of the device."""
    return cupy.MEMORY_BYTES - _Memory.used, cupy.MEMORY_BYTES


def getDeviceProperties(device):
    if device != 0:
        raise CUDARuntimeError(101)
    return {
        "name": cupy.DEVICE_NAME.encode(),
        "totalGlobalMem": cupy.MEMORY_BYTES,
        "multiProcessorCount": 4,
        "l2CacheSize": 4 * 2**20,
        "major": 9,
        "minor": 0,
        "clockRate": 1_000_000,
        "memoryClockRate": 1_000_000,
        "memoryBusWidth": 256,
        "warpSize": 32,
        "maxThreadsPerBlock": 1024,
    }
