"""The stand-in's ``cupy.cuda``: one device, the null stream, events and the memory pool.

Every ``synchronize`` marks the queued work done (see the package docstring); events keep
the host clock, so ``get_elapsed_time`` between two synchronised events is real time."""

from __future__ import annotations

from cupy import _REAL_CLOCKS, _Queue
from cupy.cuda import compiler, driver, memory, runtime  # noqa: F401


class _Current:
    """What a device and a stream share: ``synchronize`` waits for the queued work, and
    ``use()`` or ``with`` makes it current (one device and one queue: nothing changes)."""

    def synchronize(self):
        _Queue.synchronize()

    def use(self):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class Device(_Current):
    """``cupy.cuda.Device(0)``: the only device."""

    def __init__(self, device=None):
        self.id = 0 if device is None else int(device)
        if self.id != 0:
            raise runtime.CUDARuntimeError(101)  # cudaErrorInvalidDevice

    @property
    def compute_capability(self):
        return "90"

    @property
    def attributes(self):
        props = runtime.getDeviceProperties(0)
        return {"MultiProcessorCount": props["multiProcessorCount"],
                "L2CacheSize": props["l2CacheSize"]}

    @property
    def mem_info(self):
        return runtime.memGetInfo()

    def __repr__(self):
        return f"<CUDA Device {self.id}>"


class Stream(_Current):
    """A stream: work is queued on it until ``synchronize``."""

    null: Stream

    def __init__(self, null=False, non_blocking=False, ptds=False):
        self.ptr = 0 if null else id(self)

    def record(self, event=None):
        event = event or Event()
        event.record(self)
        return event

    @property
    def done(self):
        return _Queue.synchronized >= _Queue.launched


Stream.null = Stream(null=True)


def get_current_stream(device_id=None):
    return Stream.null


class Event:
    """An event: the host clock when it was recorded, valid once synchronised."""

    def __init__(self, block=False, disable_timing=False, interprocess=False):
        self._time = None

    def record(self, stream=None):
        self._time = _REAL_CLOCKS["perf_counter"]()

    def synchronize(self):
        _Queue.synchronize()

    @property
    def done(self):
        return True


def get_elapsed_time(start_event, end_event):
    """Milliseconds between two recorded events, as CuPy's."""
    if start_event._time is None or end_event._time is None:
        raise runtime.CUDARuntimeError(600)  # cudaErrorNotReady
    return (end_event._time - start_event._time) * 1e3


def is_available():
    return True
