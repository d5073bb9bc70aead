"""Makes nbval's ``nbval-check-output`` tag mean something for notebooks without outputs.

Notebooks are committed without outputs, so nbval alone has no reference to compare a
tagged cell with. The reference is the same cell's output in the book build's execution of
the same notebook, kept in the build's jupyter-cache (``_build/.jupyter_cache``): when a
tagged cell is about to run, this plugin asks :func:`~.building.course_build` for the
session's book (building it then if nothing has yet, or taking ``GL_SITE_DIR``'s) and hands
nbval the build's outputs of that cell. nbval then checks that this second, independent run
prints the same thing, after ``tests/nbval_sanitize.cfg``: a seeded, deterministic cell
passes; one whose output depends on an unseeded draw or the clock fails.

So ``pytest --nbval-lax ... notebooks/<slug>.ipynb`` alone compares its tagged cells, the
order of the paths on the command line does not matter, and a session that runs both the
site tests and the notebooks (``make test``) builds the book once. A tagged cell fails when
the book did not build, or when the build's cache holds no execution of the cell's current
source (the notebook changed since ``GL_SITE_DIR``'s build). ``--no-book-reference`` runs
the tagged cells without comparing them (no build; the summary says so).

The repository's root ``conftest.py`` loads this plugin (``pytest_plugins``): the notebooks
are outside ``tests/``, and a conftest's run-time hooks reach only the tests below it.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from .building import course_build, session_build

CHECK_TAG = "nbval-check-output"
#: Tagged cells seen in this session: (notebook name, cell id) -> "compared" or "not compared".
_SEEN = pytest.StashKey[dict[tuple[str, str], str]]()
#: Executed cells read from a jupyter-cache, per (cache folder, notebook), for this session.
_EXECUTED = pytest.StashKey[dict[tuple[Path, Path], dict[str, nbformat.NotebookNode]]]()
#: pytest-xdist controller: how each worker's book came about (one line when they shared it).
_WORKER_BOOKS = pytest.StashKey[set[str]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("nbval").addoption(
        "--no-book-reference", action="store_true", default=False,
        help=f"run cells tagged {CHECK_TAG} without the book build's outputs as reference "
             "(nothing is built and nothing compared)")


def executed_cells(cache_dir: Path, notebook: Path) -> dict[str, nbformat.NotebookNode]:
    """Cells of the cache's execution of ``notebook`` as it is now, by cell id (empty if the
    cache holds no execution of these sources)."""
    from jupyter_cache import get_cache

    if not cache_dir.is_dir():  # get_cache would create an empty cache there
        return {}
    cache = get_cache(cache_dir)
    try:
        record = cache.match_cache_notebook(nbformat.read(notebook, 4))
    except KeyError:  # no execution of this exact notebook in the cache
        return {}
    return {cell.get("id", ""): cell for cell in cache.get_cache_bundle(record.pk).nb.cells}


def reference_for(cell: dict, notebook: Path, executed: dict[str, nbformat.NotebookNode],
                  cache_dir: Path) -> tuple[list, int]:
    """The build's ``(outputs, execution_count)`` of ``cell``, from ``executed`` (the
    :func:`executed_cells` of ``notebook`` in ``cache_dir``).

    Raises LookupError when the cache holds no execution of the cell's current source.
    """
    reference = executed.get(cell.get("id", ""))
    if (reference is None or reference.get("execution_count") is None
            or reference.get("source") != cell.get("source")):
        raise LookupError(f"{notebook.name}: cell {cell.get('id')!r} is tagged {CHECK_TAG}, "
                          f"but the book build's cache ({cache_dir}) holds no execution of its "
                          "current source")
    outputs = nbformat.from_dict(json.loads(json.dumps(reference.get("outputs", []))))
    return outputs, reference["execution_count"]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Give an nbval cell tagged ``nbval-check-output`` the book build's output as reference."""
    cell = getattr(item, "cell", None)
    if cell is None or CHECK_TAG not in cell.get("metadata", {}).get("tags", []):
        return
    config = item.config
    notebook = Path(str(item.path)).resolve()
    seen = config.stash.setdefault(_SEEN, {})
    key = (notebook.name, str(cell.get("id", "")))
    seen[key] = "not compared"
    if config.getoption("no_book_reference"):
        return
    build = course_build(config)
    if not build.ok:
        pytest.fail(f"{notebook.name}: cell {cell.get('id')!r} is tagged {CHECK_TAG}, and its "
                    f"reference is the book build's run of it, but {build.describe()}. "
                    f"Last lines:\n{build.tail(20)}", pytrace=False)
    cache = config.stash.setdefault(_EXECUTED, {})
    if (build.jupyter_cache, notebook) not in cache:
        cache[build.jupyter_cache, notebook] = executed_cells(build.jupyter_cache, notebook)
    try:
        outputs, count = reference_for(cell, notebook, cache[build.jupyter_cache, notebook],
                                       build.jupyter_cache)
    except LookupError as missing:
        pytest.fail(str(missing), pytrace=False)
    cell["outputs"] = outputs
    cell["execution_count"] = count
    seen[key] = "compared"


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In a pytest-xdist worker: hand the book and the tagged cells seen to the controller."""
    output = getattr(session.config, "workeroutput", None)
    if output is None:
        return
    build = session_build(session.config)
    output["gl_book"] = build.describe() if build is not None else None
    output["gl_seen"] = [[*key, state] for key, state in
                         session.config.stash.get(_SEEN, {}).items()]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """In the pytest-xdist controller: gather what each worker saw, for the summary."""
    output = getattr(node, "workeroutput", {})
    config = node.config
    if output.get("gl_book"):
        config.stash.setdefault(_WORKER_BOOKS, set()).add(output["gl_book"])
    seen = config.stash.setdefault(_SEEN, {})
    for notebook, cell, state in output.get("gl_seen", []):
        seen[notebook, cell] = state


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    """Say where the session's book came from and how many tagged cells were compared."""
    build = session_build(config)
    books = sorted(config.stash.get(_WORKER_BOOKS, set()))
    if build is not None:
        books = [build.describe()]
    seen = config.stash.get(_SEEN, {})
    if not books and not seen:
        return
    terminalreporter.section("book build and nbval references", sep="-")
    for book in books:
        terminalreporter.write_line(f"book: {book}")
    if seen:
        compared = sum(1 for state in seen.values() if state == "compared")
        line = (f"{CHECK_TAG}: {compared} of {len(seen)} tagged cells handed the book "
                f"build's outputs as reference")
        if compared < len(seen):
            reason = "--no-book-reference" if config.getoption("no_book_reference") else (
                "see the failures above")
            line += f" ({len(seen) - compared} not compared: {reason})"
        terminalreporter.write_line(line)
