"""Pick the array module for this machine: cupy on a usable CUDA GPU, numpy otherwise.

Every lesson gets its arrays from one call, so a notebook runs unchanged on a laptop and on a
GPU server::

    from gpulesson.device import get_device, to_numpy

    dev = get_device()
    print(dev.describe())          # "Running on CPU (numpy 2.4.6): no CUDA device found ..."
    xp = dev.xp                    # numpy or cupy: the same API
    a = xp.ones((512, 512), dtype=xp.float32)
    c = to_numpy(a @ a)            # always a numpy array, wherever it was computed

How the choice is made
----------------------
1. ``prefer`` (an argument), else the environment variable ``GPULESSON_DEVICE``, else
   ``"auto"``. Allowed values: ``auto``, ``cpu``, ``gpu``.
2. ``cpu``: numpy, without even importing cupy.
3. ``auto`` and ``gpu``: import cupy and *use* the device once (count devices, allocate a
   tiny array, run one kernel, copy the result back). ``pip install cupy-cuda12x`` succeeds
   on a machine without an NVIDIA driver and ``import cupy`` then works too; the first
   allocation is what raises ``cupy.cuda.runtime.CUDARuntimeError``. Only that error (plus
   cupy's driver and kernel-compiler errors, NVRTC's errors, cupy's ``RuntimeError("CuPy
   failed to load libnvrtc.so.12 ...")`` when a CUDA library is missing, and
   ``ImportError`` for the import) counts as "no usable GPU"; anything else is a bug and
   propagates.
4. ``auto`` falls back to numpy and says why; ``gpu`` raises :class:`RuntimeError` saying
   what was tried, why it failed and how to install the ``gpu`` extra. Nothing downgrades
   silently when a GPU was asked for.
5. The probe runs under a time limit (:data:`PROBE_TIMEOUT_S`, or ``GPULESSON_PROBE_TIMEOUT``
   in seconds): a driver that hangs in ``getDeviceCount`` counts as no usable GPU instead
   of blocking the lesson.

The probe runs once per process (cached); :func:`reset_device_cache` forgets it (tests).
Taught in: every lesson's set-up cell (``parallelism_at_the_core`` first).
"""

from __future__ import annotations

import functools
import os
import platform
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal

import numpy as np

__all__ = [
    "ALLOWED_VALUES",
    "ENV_VAR",
    "PROBE_TIMEOUT_S",
    "Device",
    "cpu_device",
    "describe",
    "get_device",
    "reset_device_cache",
    "synchronize",
    "to_numpy",
]

#: Environment variable that forces the choice (``make gpu-check`` sets it to ``gpu``).
ENV_VAR = "GPULESSON_DEVICE"
#: Values accepted by ``prefer`` and by ``GPULESSON_DEVICE`` (empty means ``auto``).
ALLOWED_VALUES = ("auto", "cpu", "gpu")
#: Seconds the GPU probe may take before it counts as "no usable GPU"
#: (``GPULESSON_PROBE_TIMEOUT`` overrides it). A first CUDA start takes a few seconds.
PROBE_TIMEOUT_S = 30.0
TIMEOUT_VAR = "GPULESSON_PROBE_TIMEOUT"

_INSTALL_HINT = (
    "Install the GPU extra inside the course's virtual environment: "
    "`pip install -c constraints.txt -e '.[gpu]'` (cupy-cuda12x, for a CUDA 12 driver), "
    "or `pip install cupy-cuda13x 'numba-cuda[cu13]'` for a CUDA 13 driver; check the "
    "driver with `nvidia-smi`."
)


@dataclass(frozen=True)
class Device:
    """The array backend a lesson runs on.

    Attributes
    ----------
    xp:
        the array module: ``numpy`` or ``cupy`` (same API for what the course uses).
    kind:
        ``"gpu"`` or ``"cpu"``.
    name:
        the processor's name, e.g. ``"NVIDIA H100 80GB HBM3"`` or the CPU model.
    why:
        one sentence: why this device was chosen.
    memory_bytes:
        GPU memory, or the machine's RAM for the CPU (bytes); ``None`` when unknown.
    cores:
        CPU cores usable by this process, or the GPU's streaming multiprocessors.
    """

    xp: ModuleType
    kind: Literal["gpu", "cpu"]
    name: str
    why: str
    memory_bytes: int | None = None
    cores: int | None = None

    @property
    def is_gpu(self) -> bool:
        """True when arrays live on a CUDA GPU (``xp`` is cupy)."""
        return self.kind == "gpu"

    @property
    def library(self) -> str:
        """The array library and its version, e.g. ``"numpy 2.4.6"``."""
        return f"{self.xp.__name__} {getattr(self.xp, '__version__', '?')}"

    def describe(self) -> str:
        """One line for a notebook: which device, which library, and why."""
        where = "GPU" if self.is_gpu else "CPU"
        return f"Running on {where} {self.name} ({self.library}): {self.why}"


# ---------------------------------------------------------------------------------------
# The CPU


def _cpu_name() -> str:
    """The CPU model from /proc/cpuinfo (Linux), else what :mod:`platform` knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def _cpu_cores() -> int:
    """Cores this process may run on (respects affinity masks, unlike ``os.cpu_count``)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _ram_bytes() -> int | None:
    """Physical memory, when the OS tells us cheaply (Linux, macOS); else ``None``."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


def cpu_device(why: str = "numpy on the CPU") -> Device:
    """The numpy device, with ``why`` as its reason."""
    cores = _cpu_cores()
    return Device(
        xp=np,
        kind="cpu",
        name=f"{_cpu_name()}, {cores} core{'s' if cores != 1 else ''}",
        why=why,
        memory_bytes=_ram_bytes(),
        cores=cores,
    )


# ---------------------------------------------------------------------------------------
# The GPU probe


@dataclass(frozen=True)
class _Probe:
    """What trying cupy found: a usable device, or the reason there is none."""

    device: Device | None
    reason: str


def _cupy_error_types(cupy: ModuleType) -> tuple[type[BaseException], ...]:
    """The exceptions that mean "cupy is installed but there is no usable GPU".

    ``cupy.cuda.runtime.CUDARuntimeError`` (no driver, no device, driver too old) is the
    one the first allocation raises; ``cupy.cuda.driver.CUDADriverError`` and
    ``cupy.cuda.compiler.CompileException`` (NVRTC cannot build a kernel: missing CUDA
    headers) are looked up when cupy provides them.
    """
    cuda = cupy.cuda
    types: list[type[BaseException]] = [cuda.runtime.CUDARuntimeError]
    for module_name, attr in (("driver", "CUDADriverError"), ("compiler", "CompileException"),
                              ("nvrtc", "NVRTCError")):
        module = getattr(cuda, module_name, None)
        error = getattr(module, attr, None) if module is not None else None
        if isinstance(error, type) and issubclass(error, BaseException):
            types.append(error)
    return tuple(types)


#: cupy's message when a CUDA library cannot be loaded at the first kernel, e.g.
#: ``RuntimeError: CuPy failed to load libnvrtc.so.12: OSError: libnvrtc.so.12: cannot open
#: shared object file`` (cupy/_environment.py).
_LIBRARY_FAILURE = re.compile(r"^CuPy failed to load ")


def _library_failure(err: BaseException) -> bool:
    """Whether ``err`` says a CUDA library could not be loaded (no usable GPU, not a bug)."""
    return isinstance(err, RuntimeError) and bool(_LIBRARY_FAILURE.match(str(err)))


def _probe_gpu_uncached(import_cupy: Callable[[], ModuleType]) -> _Probe:
    try:
        cupy = import_cupy()
    except ImportError as err:
        if isinstance(err, ModuleNotFoundError) and err.name == "cupy":
            return _Probe(None, "cupy is not installed")
        return _Probe(None, f"cupy is installed but failed to import: {err}")
    errors = _cupy_error_types(cupy)
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
        if count < 1:
            return _Probe(None, "cupy is installed but CUDA reports no device")
        # The first allocation is where a missing driver shows up; the kernel and the copy
        # back prove the device can compute, not only allocate.
        probe = cupy.zeros(4, dtype=cupy.float32)
        total = float((probe + 1).sum().get())
        if total != 4.0:
            return _Probe(None, f"a test kernel on the GPU returned {total}, expected 4.0")
        props = cupy.cuda.runtime.getDeviceProperties(0)
        memory = int(props.get("totalGlobalMem", 0)) or None
        sms = int(props.get("multiProcessorCount", 0)) or None
        raw_name = props.get("name", b"CUDA device")
        name = raw_name.decode(errors="replace") if isinstance(raw_name, bytes) else str(raw_name)
    except errors as err:
        return _Probe(None, f"cupy is installed but CUDA is not usable: "
                            f"{type(err).__name__}: {err}")
    except RuntimeError as err:
        if not _library_failure(err):
            raise
        return _Probe(None, f"cupy is installed but cannot load a CUDA library: {err}")
    plural = "s" if count != 1 else ""
    device = Device(
        xp=cupy,
        kind="gpu",
        name=name,
        why=f"cupy found {count} usable CUDA device{plural} (using device 0)",
        memory_bytes=memory,
        cores=sms,
    )
    return _Probe(device, device.why)


def _import_cupy() -> ModuleType:
    import cupy  # the optional dependency, imported only when a GPU may be used

    return cupy


def _probe_timeout() -> float:
    """:data:`PROBE_TIMEOUT_S`, or ``GPULESSON_PROBE_TIMEOUT`` when it is a positive number."""
    raw = os.environ.get(TIMEOUT_VAR, "").strip()
    if not raw:
        return PROBE_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not (value > 0 and value < float("inf")):
        raise ValueError(f"{TIMEOUT_VAR} must be a positive number of seconds, got {raw!r}")
    return value


def _probe_with_timeout(import_cupy: Callable[[], ModuleType], timeout: float) -> _Probe:
    """:func:`_probe_gpu_uncached` in a helper thread, given up after ``timeout`` seconds.

    A hung driver call cannot be cancelled; the daemon thread is left behind (it does not
    keep the process alive) and the probe reports that the GPU did not answer. An error
    the probe does not handle is raised again here.
    """
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["probe"] = _probe_gpu_uncached(import_cupy)
        except BaseException as err:  # noqa: BLE001 - handed to the calling thread
            outcome["error"] = err

    worker = threading.Thread(target=run, name="gpulesson-gpu-probe", daemon=True)
    worker.start()
    worker.join(timeout)
    if "error" in outcome:
        raise outcome["error"]
    if "probe" in outcome:
        return outcome["probe"]
    return _Probe(None, f"the GPU probe did not finish within {timeout:g} s (a CUDA call "
                        f"hung; set {TIMEOUT_VAR} to wait longer)")


@functools.lru_cache(maxsize=1)
def _probe_gpu() -> _Probe:
    return _probe_with_timeout(_import_cupy, _probe_timeout())


@functools.lru_cache(maxsize=1)
def _numpy_device(why: str) -> Device:
    return cpu_device(why)


def reset_device_cache() -> None:
    """Forget the cached GPU probe and CPU description (for tests, or after installing cupy)."""
    _probe_gpu.cache_clear()
    _numpy_device.cache_clear()


def _resolve_preference(prefer: str | None) -> tuple[str, str]:
    """Return (choice, where it came from), validating the value."""
    if prefer is not None and not (isinstance(prefer, str) and not prefer.strip()):
        source, raw = "prefer", prefer
    elif os.environ.get(ENV_VAR, "").strip():
        source, raw = ENV_VAR, os.environ[ENV_VAR]
    else:
        return "auto", "default"
    if not isinstance(raw, str):
        raise TypeError(f"{source} must be a string, one of {ALLOWED_VALUES}, got {raw!r}")
    choice = raw.strip().lower()
    if choice not in ALLOWED_VALUES:
        raise ValueError(
            f"{source} must be one of {', '.join(ALLOWED_VALUES)} (empty means auto), "
            f"got {raw!r}"
        )
    return choice, source


def get_device(prefer: str | None = None) -> Device:
    """Return the device the course runs on.

    Parameters
    ----------
    prefer:
        ``"auto"``, ``"cpu"`` or ``"gpu"``. ``None`` (default) or an empty string reads
        ``GPULESSON_DEVICE`` and falls back to ``"auto"``. An explicit argument wins over
        the environment.

    Returns
    -------
    Device
        cupy on a usable CUDA GPU (``auto``, ``gpu``), numpy otherwise (``auto``, ``cpu``).

    Raises
    ------
    RuntimeError
        ``gpu`` was asked for and there is no usable GPU; the message says what was tried,
        why it failed and how to install the ``gpu`` extra.
    ValueError
        ``prefer`` or ``GPULESSON_DEVICE`` is not one of ``auto``, ``cpu``, ``gpu``.
    """
    choice, source = _resolve_preference(prefer)
    if choice == "cpu":
        how = f"{ENV_VAR}=cpu" if source == ENV_VAR else "prefer='cpu'"
        return _numpy_device(f"{how} forces numpy")
    probe = _probe_gpu()
    if probe.device is not None:
        return probe.device
    if choice == "gpu":
        how = f"{ENV_VAR}=gpu" if source == ENV_VAR else "prefer='gpu'"
        raise RuntimeError(
            f"{how} asks for a GPU, but none is usable. Tried: import cupy, count CUDA "
            f"devices, allocate a 4-element array and run one kernel. Failed because "
            f"{probe.reason}. {_INSTALL_HINT} Unset {ENV_VAR} (or set it to cpu) to run "
            f"on numpy instead."
        )
    return _numpy_device(f"no usable CUDA GPU, {probe.reason}")


def describe(device: Device | None = None) -> str:
    """One line for a notebook, e.g. ``"Running on CPU ... (numpy 2.4.6): ..."``."""
    return (device if device is not None else get_device()).describe()


# ---------------------------------------------------------------------------------------
# Helpers that work for either backend


def _is_cupy_array(x: Any) -> bool:
    return type(x).__module__.split(".", 1)[0] == "cupy" and hasattr(x, "get")


def to_numpy(x: Any) -> np.ndarray:
    """Return ``x`` as a numpy array, copying it from the GPU when it lives there."""
    if _is_cupy_array(x):
        return np.asarray(x.get())
    return np.asarray(x)


def synchronize(device_or_xp: Device | ModuleType | None = None) -> None:
    """Wait until the GPU has finished all queued work; nothing to do on numpy.

    GPU calls return before the work is done, so a timer read without this measures the
    launch, not the computation. ``None`` means the current :func:`get_device`.
    """
    if device_or_xp is None:
        device_or_xp = get_device()
    xp = device_or_xp.xp if isinstance(device_or_xp, Device) else device_or_xp
    if xp is np:
        return
    cuda = getattr(xp, "cuda", None)
    if cuda is None:
        raise TypeError(
            f"device_or_xp must be a Device, numpy or cupy, got {device_or_xp!r}"
        )
    cuda.runtime.deviceSynchronize()
