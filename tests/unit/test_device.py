"""gpulesson.device: forced CPU, forced GPU without one, cupy without a driver, bad values.

The "cupy installed, no driver" case is what ``pip install cupy-cuda12x`` produces on a
machine without an NVIDIA driver (checked by hand with cupy-cuda12x 14.2.0 here:
``import cupy`` works, ``cupy.cuda.runtime.getDeviceCount()`` and the first allocation raise
``cupy.cuda.runtime.CUDARuntimeError: cudaErrorInsufficientDriver``). The tests simulate it
with a fake ``cupy`` module in ``sys.modules`` so they run without the 137 MB wheel.
"""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from gpulesson import device as device_mod
from gpulesson.device import (
    ENV_VAR,
    Device,
    describe,
    get_device,
    reset_device_cache,
    synchronize,
    to_numpy,
)


class FakeCUDARuntimeError(RuntimeError):
    """Stands in for cupy_backends.cuda.api.runtime.CUDARuntimeError."""


class FakeArray:
    """Just enough of a cupy ndarray for the probe: ``+``, ``sum`` and ``get``."""

    __module__ = "cupy._core.core"

    def __init__(self, data: np.ndarray) -> None:
        self.data = np.asarray(data)

    def __add__(self, other: float) -> FakeArray:
        return FakeArray(self.data + other)

    def sum(self) -> FakeArray:
        return FakeArray(self.data.sum())

    def get(self) -> np.ndarray:
        return self.data.copy()


def make_fake_cupy(*, driver: bool, count: int = 1) -> types.ModuleType:
    """A fake ``cupy``: with ``driver=False`` CUDA calls raise the runtime error type."""
    cupy = types.ModuleType("cupy")
    cupy.__version__ = "99.0-fake"
    cupy.float32 = np.float32
    runtime = types.SimpleNamespace(CUDARuntimeError=FakeCUDARuntimeError)
    calls: list[str] = []

    def fail(*_args: object, **_kwargs: object) -> None:
        raise FakeCUDARuntimeError(
            "cudaErrorInsufficientDriver: CUDA driver version is insufficient"
        )

    if driver:
        runtime.getDeviceCount = lambda: count
        runtime.getDeviceProperties = lambda i: {
            "name": b"Fake GPU 80GB", "totalGlobalMem": 80 * 10**9, "multiProcessorCount": 132,
        }
        runtime.deviceSynchronize = lambda: calls.append("sync")

        def zeros(n: int, dtype: object = None) -> FakeArray:
            return FakeArray(np.zeros(n, dtype=dtype))

        cupy.zeros = zeros
    else:
        runtime.getDeviceCount = fail
        cupy.zeros = fail
    cupy.cuda = types.SimpleNamespace(runtime=runtime)
    cupy.sync_calls = calls
    return cupy


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch: pytest.MonkeyPatch):
    """Every test starts without a cached probe and without GPULESSON_DEVICE."""
    monkeypatch.delenv(ENV_VAR, raising=False)
    reset_device_cache()
    yield
    reset_device_cache()


def test_forced_cpu_is_numpy_and_never_imports_cupy(monkeypatch: pytest.MonkeyPatch) -> None:
    # a cupy that would raise on any use proves the cpu path does not touch it
    broken = types.ModuleType("cupy")
    monkeypatch.setitem(sys.modules, "cupy", broken)
    monkeypatch.setenv(ENV_VAR, "cpu")
    dev = get_device()
    assert dev.xp is np
    assert dev.kind == "cpu" and not dev.is_gpu
    assert "GPULESSON_DEVICE=cpu" in dev.why
    assert dev.cores is not None and dev.cores >= 1
    assert dev.describe().startswith("Running on CPU")
    assert "numpy " + np.__version__ in dev.describe()


def test_forced_cpu_by_argument_and_case_insensitive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "GPU")  # the explicit argument wins over the environment
    assert get_device(" CPU ").kind == "cpu"


def test_auto_without_cupy_falls_back_to_numpy_and_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "cupy", None)  # makes `import cupy` raise ImportError
    dev = get_device()
    assert dev.xp is np
    assert "cupy is not installed" in dev.why
    assert describe() == dev.describe()


def test_forced_gpu_without_cupy_raises_a_helpful_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cupy", None)
    monkeypatch.setenv(ENV_VAR, "gpu")
    with pytest.raises(RuntimeError) as info:
        get_device()
    message = str(info.value)
    for needle in ("GPULESSON_DEVICE=gpu", "cupy is not installed", "cupy-cuda12x",
                   "cupy-cuda13x", ".[gpu]", "Tried"):
        assert needle in message


def test_cupy_without_a_driver_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cupy", make_fake_cupy(driver=False))
    dev = get_device()
    assert dev.xp is np and dev.kind == "cpu"
    assert "FakeCUDARuntimeError" in dev.why and "insufficient" in dev.why


def test_cupy_without_a_driver_and_forced_gpu_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cupy", make_fake_cupy(driver=False))
    with pytest.raises(RuntimeError, match="CUDA is not usable.*insufficient"):
        get_device("gpu")


def test_other_errors_are_not_swallowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only CUDA's own errors mean "no GPU"; a bug elsewhere must surface."""
    cupy = make_fake_cupy(driver=True)

    def buggy(*_args: object, **_kwargs: object) -> None:
        raise ZeroDivisionError("a bug, not a missing driver")

    cupy.zeros = buggy
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    with pytest.raises(ZeroDivisionError):
        get_device()


def test_zero_devices_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cupy", make_fake_cupy(driver=True, count=0))
    assert "no device" in get_device().why


def test_usable_gpu_is_chosen_and_described(monkeypatch: pytest.MonkeyPatch) -> None:
    cupy = make_fake_cupy(driver=True, count=2)
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    dev = get_device("gpu")
    assert dev.xp is cupy and dev.is_gpu
    assert dev.name == "Fake GPU 80GB"
    assert dev.memory_bytes == 80 * 10**9 and dev.cores == 132
    assert "2 usable CUDA devices" in dev.why
    assert dev.describe().startswith("Running on GPU Fake GPU 80GB (cupy 99.0-fake)")
    synchronize(dev)
    synchronize(cupy)
    assert cupy.sync_calls == ["sync", "sync"]


def test_detection_is_cached_until_reset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cupy", None)
    first = get_device()
    monkeypatch.setitem(sys.modules, "cupy", make_fake_cupy(driver=True))
    assert get_device() is first  # cached: no second probe
    reset_device_cache()
    assert get_device().is_gpu


@pytest.mark.parametrize("value", ["cuda", "tpu", "1", "numpy"])
def test_invalid_environment_value_lists_the_allowed_ones(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(ENV_VAR, value)
    with pytest.raises(ValueError) as info:
        get_device()
    message = str(info.value)
    assert ENV_VAR in message and repr(value) in message
    assert "auto, cpu, gpu" in message


def test_invalid_argument_names_the_argument() -> None:
    with pytest.raises(ValueError, match="prefer must be one of"):
        get_device("fast")
    with pytest.raises(TypeError, match="prefer must be a string"):
        get_device(1)  # type: ignore[arg-type]


def test_empty_environment_value_means_auto(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cupy", None)
    monkeypatch.setenv(ENV_VAR, "  ")
    assert get_device().kind == "cpu"


def test_to_numpy_converts_gpu_arrays_and_passes_numpy_through() -> None:
    host = np.arange(6.0).reshape(2, 3)
    assert to_numpy(host) is host
    fake = FakeArray(host)
    out = to_numpy(fake)
    assert isinstance(out, np.ndarray) and out is not host
    np.testing.assert_array_equal(out, host)
    np.testing.assert_array_equal(to_numpy([1, 2]), np.array([1, 2]))


def test_synchronize_is_a_no_op_on_numpy_and_rejects_other_things() -> None:
    synchronize(np)
    synchronize(get_device("cpu"))
    with pytest.raises(TypeError, match="device_or_xp"):
        synchronize(types.ModuleType("notanarraylib"))


def test_device_is_frozen() -> None:
    dev = get_device("cpu")
    with pytest.raises(AttributeError):
        dev.kind = "gpu"  # type: ignore[misc]
    assert isinstance(dev, Device)
    assert device_mod.ALLOWED_VALUES == ("auto", "cpu", "gpu")


# ---------------------------------------------------------------------------------------
# A CUDA library that cannot load, a hung driver, and an empty preference


def _cupy_failing_at_first_kernel(error: BaseException) -> types.ModuleType:
    """cupy that counts and allocates, then fails at the first kernel with ``error``."""
    cupy = make_fake_cupy(driver=True)

    class Failing(FakeArray):
        def __add__(self, other: float) -> FakeArray:
            raise error

    cupy.zeros = lambda n, dtype=None: Failing(np.zeros(n, dtype=dtype))
    return cupy


NVRTC_MISSING = RuntimeError(
    "CuPy failed to load libnvrtc.so.12: OSError: libnvrtc.so.12: cannot open shared object "
    "file: No such file or directory")


def test_a_cuda_library_that_cannot_load_falls_back_in_auto_mode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The real cupy raises ``RuntimeError("CuPy failed to load libnvrtc.so.12 ...")`` at
    the first kernel when NVRTC is missing (cupy/_environment.py); auto mode used to crash
    on it instead of running on numpy."""
    monkeypatch.setitem(sys.modules, "cupy", _cupy_failing_at_first_kernel(NVRTC_MISSING))
    dev = get_device()
    assert dev.kind == "cpu" and "cannot load a CUDA library" in dev.why
    assert "libnvrtc.so.12" in dev.why
    with pytest.raises(RuntimeError, match="asks for a GPU, but none is usable.*libnvrtc"):
        get_device("gpu")


def test_an_nvrtc_error_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    class FakeNVRTCError(RuntimeError):
        """Stands in for cupy_backends.cuda.libs.nvrtc.NVRTCError."""

    cupy = _cupy_failing_at_first_kernel(FakeNVRTCError("NVRTC_ERROR_COMPILATION (6)"))
    cupy.cuda.nvrtc = types.SimpleNamespace(NVRTCError=FakeNVRTCError)
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    assert "FakeNVRTCError" in get_device().why


def test_another_runtime_error_is_still_a_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cupy",
                        _cupy_failing_at_first_kernel(RuntimeError("an unrelated bug")))
    with pytest.raises(RuntimeError, match="an unrelated bug"):
        get_device()


def test_a_hung_probe_times_out_and_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``getDeviceCount`` that never returns blocked the lesson forever."""
    import threading
    import time

    release = threading.Event()
    cupy = make_fake_cupy(driver=True)
    cupy.cuda.runtime.getDeviceCount = lambda: release.wait(30) and 1
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setenv(device_mod.TIMEOUT_VAR, "0.2")
    began = time.perf_counter()
    try:
        dev = get_device()
        assert time.perf_counter() - began < 5
        assert dev.kind == "cpu" and "did not finish within 0.2 s" in dev.why
        reset_device_cache()
        with pytest.raises(RuntimeError, match="did not finish within 0.2 s"):
            get_device("gpu")
    finally:
        release.set()


@pytest.mark.parametrize("raw", ["0", "-3", "soon", "inf"])
def test_a_bad_probe_timeout_names_the_variable(monkeypatch: pytest.MonkeyPatch,
                                                raw: str) -> None:
    monkeypatch.setitem(sys.modules, "cupy", make_fake_cupy(driver=True))
    monkeypatch.setenv(device_mod.TIMEOUT_VAR, raw)
    with pytest.raises(ValueError, match="GPULESSON_PROBE_TIMEOUT must be a positive number"):
        get_device()


@pytest.mark.parametrize("empty", ["", "   "])
def test_an_empty_preference_means_auto(monkeypatch: pytest.MonkeyPatch, empty: str) -> None:
    """The message says "empty means auto"; ``get_device("")`` was refused."""
    monkeypatch.setitem(sys.modules, "cupy", None)
    assert get_device(empty).kind == "cpu"
    monkeypatch.setenv(ENV_VAR, "cpu")  # an empty argument leaves the choice to the variable
    assert "GPULESSON_DEVICE=cpu" in get_device(empty).why
