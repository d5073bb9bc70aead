"""The status page's table (scripts/gl_status.py), without building the book."""

from __future__ import annotations

import importlib.util
import types

import pytest

from book.building import REPO_ROOT


def _gl_status():
    spec = importlib.util.spec_from_file_location("gl_status", REPO_ROOT / "scripts/gl_status.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rows_report_the_forced_cpu_device_and_versions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPULESSON_DEVICE", "cpu")  # deterministic: never probes for a GPU
    rows = dict(_gl_status().machine_rows())
    assert rows["Device the lessons ran on"].startswith("CPU: ")
    assert "GPULESSON_DEVICE=cpu" in rows["Why this device"]
    assert rows["GPULESSON_DEVICE"] == "cpu"
    import numpy

    assert rows["numpy"] == numpy.__version__
    assert rows["Built"].endswith(" UTC")


def test_cuda_versions_are_read_from_cupy_runtime() -> None:
    """cudaRuntimeGetVersion encodes 12.4 as 12040 (1000*major + 10*minor)."""
    runtime = types.SimpleNamespace(runtimeGetVersion=lambda: 12040, driverGetVersion=lambda: 13000)
    fake_cupy = types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime))
    assert _gl_status()._cuda_versions(fake_cupy) == "runtime 12.4, driver 13.0"
    assert _gl_status()._cuda_versions(types.SimpleNamespace()) is None
