"""A fake ``cupyx.profiler`` for the tests that time a stand-in GPU without CuPy
(``test_bench.py``, ``test_gpu_check.py``): each test brings its own ``benchmark``."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

import pytest


def install_profiler(monkeypatch: pytest.MonkeyPatch, benchmark: Callable[..., Any]) -> None:
    """Make ``import cupyx.profiler`` find a module whose ``benchmark`` is ``benchmark``,
    for the rest of the test (``monkeypatch`` undoes it)."""
    profiler = types.ModuleType("cupyx.profiler")
    profiler.benchmark = benchmark  # type: ignore[attr-defined]
    cupyx = types.ModuleType("cupyx")
    cupyx.profiler = profiler  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "cupyx", cupyx)
    monkeypatch.setitem(sys.modules, "cupyx.profiler", profiler)
