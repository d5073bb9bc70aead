"""The status page: its table (``scripts/gl_status.py``) without building the book, and the
built page naming the machine the lessons ran on."""

from __future__ import annotations

import re
import types
from pathlib import Path

import pytest

from .building import script_module


def _gl_status():
    return script_module("gl_status")


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


@pytest.mark.book
def test_status_page_names_the_machine(site_dir: Path) -> None:
    html = (site_dir / "book" / "status.html").read_text(encoding="utf-8")
    for label in ("Device the lessons ran on", "Python", "numpy", "Built"):
        assert label in html, f"status page lacks {label!r}"
    assert re.search(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC", html), "status page has no build date"
