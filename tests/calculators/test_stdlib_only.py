"""The calculator modules and units import only the standard library (they run in Pyodide)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

MODULES = ["course", "units", "_validate", "gemm", "roofline", "transformer", "memory", "flops",
           "inference", "distributed", "cost", "optimisations", "hardware", "precision",
           "calculators", "planning", "browser", "display",
           # the exercise logic runs without a kernel (and could run in the browser)
           "exercises.core", "exercises.lesson", "exercises.mistakes", "exercises.render"]
REPO = Path(__file__).resolve().parents[2]

# Run without site-packages (-S; the package is imported from the source tree) and import
# the module with every third-party top-level package made unimportable, then list
# every module loaded that is neither built in, nor in the standard library, nor ours.
SCRIPT = r"""
import sys, importlib.abc
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top not in sys.stdlib_module_names and top != "gpulesson":
            raise ImportError(f"blocked third-party import: {name}")
        return None
sys.meta_path.insert(0, Block())
import importlib
before = set(sys.modules)
importlib.import_module("gpulesson." + sys.argv[1])
bad = sorted(m for m in set(sys.modules) - before
             if m.partition(".")[0] not in sys.stdlib_module_names
             and m.partition(".")[0] != "gpulesson")
print(",".join(bad))
"""


@pytest.mark.parametrize("module", MODULES)
def test_module_imports_only_the_standard_library(module: str) -> None:
    path = REPO / "gpulesson" / (module.replace(".", "/") + ".py")
    if not path.exists():  # a package
        path = path.with_suffix("") / "__init__.py"
    if not path.exists():
        pytest.fail(f"{path.relative_to(REPO)} is missing")
    proc = subprocess.run([sys.executable, "-S", "-c", SCRIPT, module], capture_output=True,
                          text=True, cwd=REPO, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "", f"non-stdlib modules loaded: {proc.stdout}"
