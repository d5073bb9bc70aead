"""The references of ``nbval-check-output`` cells (``nbval_reference.py``), without the book.

A small notebook of its own and a jupyter-cache of its own stand in for the book build
(``GL_SITE_DIR``): pytest runs on the notebook alone, as a learner would run one lesson,
and each tagged cell must be compared with the cache's run of it. A correct reference
passes, a corrupted one fails, a changed cell fails for want of a reference, and
``--no-book-reference`` runs the cells without comparing them. The session's build is
obtained once however often it is asked for.
"""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import nbformat
import pytest

from . import building, nbval_reference
from .building import BookBuild
from .nbval_reference import CHECK_TAG, executed_cells, reference_for

#: (notebook, source run by nbval, source the cache executed, output the cache holds)
NOTEBOOKS = {
    "agrees": ("print(6 * 7)", "print(6 * 7)", "42\n"),
    "corrupted": ("print(7 * 6)", "print(7 * 6)", "41\n"),
    "changed": ("print(2 + 3)", "print(2 + 2)", "4\n"),
}
NBVAL = ("-p", "tests.site.nbval_reference", "--nbval-lax", "--nbval-current-env", "-rA",
         "-p", "no:cacheprovider")


def _pytest(folder: Path, *args: str, site_dir: Path) -> subprocess.CompletedProcess[str]:
    """pytest in ``folder``, in a process of its own, with ``GL_SITE_DIR=site_dir``."""
    path = [str(building.REPO_ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "GL_SITE_DIR": str(site_dir), "PYTHONPATH": os.pathsep.join(path)}
    return subprocess.run([sys.executable, "-m", "pytest", *NBVAL, *args], cwd=folder,
                          env=env, capture_output=True, text=True, timeout=300)


def _notebook(source: str, output: str | None = None) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    cell = nbformat.v4.new_code_cell(source, id="answer", metadata={"tags": [CHECK_TAG]})
    if output is not None:
        cell.execution_count = 1
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=output)]
    nb.cells = [cell]
    return nb


@pytest.fixture
def fake_build(tmp_path: Path) -> Path:
    """A built site (``_build/html``) whose jupyter-cache ran the notebooks of NOTEBOOKS."""
    from jupyter_cache import get_cache

    html = tmp_path / "_build" / "html"
    html.mkdir(parents=True)
    (html / "index.html").write_text("<html></html>", encoding="utf-8")
    cache = get_cache(tmp_path / "_build" / ".jupyter_cache")
    executed = tmp_path / "executed"
    executed.mkdir()
    for name, (source, cached_source, output) in NOTEBOOKS.items():
        nbformat.write(_notebook(source), tmp_path / f"{name}.ipynb")
        nbformat.write(_notebook(cached_source, output), executed / f"{name}.ipynb")
        cache.cache_notebook_file(str(executed / f"{name}.ipynb"), check_validity=False)
    return html


def test_a_notebook_run_alone_is_compared_with_the_build(fake_build: Path) -> None:
    run = _pytest(fake_build.parents[1], *(f"{name}.ipynb" for name in NOTEBOOKS),
                  site_dir=fake_build)
    out = run.stdout
    assert run.returncode == 1, out
    assert "1 failed, 1 passed, 1 error" in out, out
    assert "PASSED agrees.ipynb::Cell 0" in out
    assert "FAILED corrupted.ipynb::Cell 0" in out and "Cell outputs differ" in out
    assert "ERROR changed.ipynb::Cell 0" in out  # in the cell's set-up: no reference
    assert "holds no execution of its current source" in out
    assert f"{CHECK_TAG}: 2 of 3 tagged cells handed the book build's outputs" in out


class _Reporter:
    """The part of pytest's terminal reporter that the summary uses."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def section(self, title: str, sep: str = "=") -> None:
        self.lines.append(title)

    def write_line(self, line: str) -> None:
        self.lines.append(line)


def _tagged_cell(notebook: Path, *, no_book_reference: bool) -> types.SimpleNamespace:
    """An nbval cell item of ``notebook``'s tagged cell, in a session of its own."""
    options = {"no_book_reference": no_book_reference}
    config = types.SimpleNamespace(stash=pytest.Stash(), getoption=options.__getitem__)
    return types.SimpleNamespace(cell=nbformat.read(notebook, 4).cells[0], config=config,
                                 path=notebook)


def test_no_book_reference_runs_the_cells_without_comparing(fake_build: Path) -> None:
    item = _tagged_cell(fake_build.parents[1] / "corrupted.ipynb", no_book_reference=True)
    nbval_reference.pytest_runtest_setup(item)
    assert item.cell.execution_count is None and item.cell.outputs == [], (
        "nbval compares only a cell with a reference run")
    assert building.session_build(item.config) is None, "nothing may be built"
    reporter = _Reporter()
    nbval_reference.pytest_terminal_summary(reporter, item.config)
    assert "0 of 1 tagged cells" in reporter.lines[-1]
    assert "--no-book-reference" in reporter.lines[-1]


def test_a_tagged_cell_fails_when_the_book_did_not_build(
        fake_build: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    failed = BookBuild(returncode=2, html_dir=tmp_path / "none", log="Extension error", seconds=3)
    monkeypatch.delenv("GL_SITE_DIR", raising=False)
    monkeypatch.setattr(building, "build_book", lambda source, *extra: failed)
    monkeypatch.setattr(building, "BUILD_LOG", tmp_path / "book-build.log")
    item = _tagged_cell(fake_build.parents[1] / "agrees.ipynb", no_book_reference=False)
    with pytest.raises(pytest.fail.Exception, match=r"failed \(exit code 2\)[\s\S]*Extension"):
        nbval_reference.pytest_runtest_setup(item)
    assert building.session_build(item.config) is failed


def test_reference_is_the_cached_run_of_the_current_source(fake_build: Path) -> None:
    cache_dir = fake_build.parent / ".jupyter_cache"
    notebook = fake_build.parents[1] / "agrees.ipynb"
    cell = nbformat.read(notebook, 4).cells[0]
    outputs, count = reference_for(cell, notebook, executed_cells(cache_dir, notebook),
                                   cache_dir)
    assert count == 1 and outputs[0]["text"] == "42\n"
    changed = fake_build.parents[1] / "changed.ipynb"
    assert executed_cells(cache_dir, changed) == {}
    with pytest.raises(LookupError, match="holds no execution of its current source"):
        reference_for(nbformat.read(changed, 4).cells[0], changed, {}, cache_dir)
    assert executed_cells(fake_build / "nowhere", notebook) == {}
    assert not (fake_build / "nowhere").exists(), "looking must not create a cache"


def test_the_session_build_is_obtained_once(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Whoever asks first (a site test or a tagged cell) builds; the rest get that build."""
    calls: list[Path] = []

    def fake_build_book(source: Path, *extra: str) -> BookBuild:
        calls.append(source)
        return BookBuild(returncode=0, html_dir=tmp_path / "html", log="built", seconds=1.0)

    monkeypatch.delenv("GL_SITE_DIR", raising=False)
    monkeypatch.setattr(building, "build_book", fake_build_book)
    monkeypatch.setattr(building, "BUILD_LOG", tmp_path / "book-build.log")
    session = types.SimpleNamespace(stash=pytest.Stash())  # all course_build reads of a Config
    assert building.session_build(session) is None
    first = building.course_build(session)
    assert building.course_build(session) is first and building.session_build(session) is first
    assert calls == [building.REPO_ROOT]
    assert (tmp_path / "book-build.log").read_text(encoding="utf-8") == "built"
    other_session = types.SimpleNamespace(stash=pytest.Stash())
    assert building.course_build(other_session) is not first and len(calls) == 2
