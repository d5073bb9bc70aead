"""Makes nbval's ``nbval-check-output`` tag mean something for notebooks without outputs.

Notebooks are committed without outputs, so nbval alone has no reference to compare a
tagged cell with. Once the book has been built in the same session (``make test`` lists
``tests`` before the notebooks, so ``tests/book/test_book_build.py`` builds it first), the
reference of each tagged cell is its output in the build's execution of the same notebook,
kept in the build's jupyter-cache (``_build/.jupyter_cache``): nbval then checks that a
second, independent run prints the same thing, after ``tests/nbval_sanitize.cfg``. A
seeded, deterministic cell passes; one whose output depends on an unseeded draw or the clock
fails. Without a build in the session there is nothing to compare with and nbval only runs
the cell.

This hook lives in the root ``conftest.py`` because the notebooks are outside ``tests/``,
and a conftest's run-time hooks reach only the tests below its folder.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import nbformat
import pytest

CHECK_TAG = "nbval-check-output"


@cache
def _executed_cells(cache_dir: Path, notebook: Path) -> dict[str, nbformat.NotebookNode]:
    """Cells of the book build's execution of ``notebook``, by cell id (empty if none)."""
    from jupyter_cache import get_cache

    try:
        record = get_cache(cache_dir).match_cache_notebook(nbformat.read(notebook, 4))
    except KeyError:  # no execution of this exact notebook in the cache
        return {}
    executed = get_cache(cache_dir).get_cache_bundle(record.pk).nb
    return {cell.get("id", ""): cell for cell in executed.cells}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Give an nbval cell tagged ``nbval-check-output`` the book build's output as reference."""
    cell = getattr(item, "cell", None)
    cache_dir = getattr(item.config, "gl_jupyter_cache", None)
    if cell is None or cache_dir is None:
        return
    if CHECK_TAG not in cell.get("metadata", {}).get("tags", []):
        return
    notebook = Path(str(item.path)).resolve()
    cells = _executed_cells(cache_dir, notebook)
    reference = cells.get(cell.get("id", ""))
    if (reference is None or reference.get("execution_count") is None
            or reference.get("source") != cell.get("source")):
        pytest.fail(f"{notebook.name}: cell {cell.get('id')!r} is tagged "
                    f"{CHECK_TAG}, but the book build's cache ({cache_dir}) holds no execution "
                    "of its current source", pytrace=False)
    cell["outputs"] = nbformat.from_dict(json.loads(json.dumps(reference.get("outputs", []))))
    cell["execution_count"] = reference["execution_count"]
