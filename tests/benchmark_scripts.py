"""The scripts of ``benchmarks/`` as modules, for the tests that hold a report's figures
against the planner's or against what a page says."""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@functools.cache
def benchmark_module(name: str) -> ModuleType:
    """``benchmarks/<name>.py``, loaded once per process. It is registered in
    ``sys.modules`` (a dataclass of its own needs that), and the ``sys.path`` entries its
    imports add are taken back afterwards."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    if spec is None or spec.loader is None:
        raise FileNotFoundError(BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    kept = list(sys.path)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = kept
    return module
