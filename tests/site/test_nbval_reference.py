"""The references of ``nbval-check-output`` cells (``nbval_reference.py``), without the book.

A small notebook of its own and a jupyter-cache of its own stand in for the book build
(``GL_SITE_DIR``): pytest runs on the notebook alone, as a learner would run one lesson,
and each tagged cell must be compared with the cache's run of it, so a correct reference
passes and a corrupted one fails. A cell changed since the build fails for want of a
reference, so does every tagged cell when the book did not build, and
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

#: notebook -> its tagged cells: (cell id, source nbval runs, source the cache executed,
#: output the cache holds)
NOTEBOOKS = {
    "lesson": [("right", "print(6 * 7)", "print(6 * 7)", "42\n"),
               ("corrupted", "print(7 * 6)", "print(7 * 6)", "41\n")],
    "changed": [("edited", "print(2 + 3)", "print(2 + 2)", "4\n")],
}
NBVAL = ("-p", "tests.site.nbval_reference", "--nbval-lax", "--nbval-current-env", "-rA",
         "-p", "no:cacheprovider")


def _pytest(folder: Path, *args: str, site_dir: Path) -> subprocess.CompletedProcess[str]:
    """pytest in ``folder``, in a process of its own, with ``GL_SITE_DIR=site_dir`` and none
    of this session's pytest settings (a PYTEST_ADDOPTS such as --junitxml would reach it)."""
    path = [str(building.REPO_ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(GL_SITE_DIR=str(site_dir), PYTHONPATH=os.pathsep.join(path))
    return subprocess.run([sys.executable, "-m", "pytest", *NBVAL, *args], cwd=folder,
                          env=env, capture_output=True, text=True, timeout=300)


def _notebook(cells: list[tuple[str, str, str, str]], *, executed: bool) -> nbformat.NotebookNode:
    """The notebook as committed (``executed=False``) or as the cache holds its run."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    for count, (cell_id, source, cached_source, output) in enumerate(cells, start=1):
        cell = nbformat.v4.new_code_cell(cached_source if executed else source, id=cell_id,
                                         metadata={"tags": [CHECK_TAG]})
        if executed:
            cell.execution_count = count
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=output)]
        nb.cells.append(cell)
    return nb


@pytest.fixture
def fake_build(tmp_path: Path) -> Path:
    """A built site (``_build/html``) whose jupyter-cache ran the notebooks of NOTEBOOKS."""
    from jupyter_cache import get_cache

    html = tmp_path / "_build" / "html"
    html.mkdir(parents=True)
    (html / "index.html").write_text("<html></html>", encoding="utf-8")
    cache = get_cache(tmp_path / "_build" / ".jupyter_cache")
    (tmp_path / "executed").mkdir()
    for name, cells in NOTEBOOKS.items():
        nbformat.write(_notebook(cells, executed=False), tmp_path / f"{name}.ipynb")
        run = tmp_path / "executed" / f"{name}.ipynb"
        nbformat.write(_notebook(cells, executed=True), run)
        cache.cache_notebook_file(str(run), check_validity=False)
    return html


def test_a_notebook_run_alone_is_compared_with_the_build(fake_build: Path) -> None:
    run = _pytest(fake_build.parents[1], "lesson.ipynb", site_dir=fake_build)
    out = run.stdout
    assert run.returncode == 1, out
    assert "1 failed, 1 passed" in out, out
    assert "PASSED lesson.ipynb::Cell 0" in out
    assert "FAILED lesson.ipynb::Cell 1" in out and "Cell outputs differ" in out
    assert "'41\\n' == '42\\n'" in out, "the reference is the cache's output"
    assert f"{CHECK_TAG}: 2 of 2 tagged cells handed the book build's outputs" in out


class _Reporter:
    """The part of pytest's terminal reporter that the summary uses."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def section(self, title: str, sep: str = "=") -> None:
        self.lines.append(title)

    def write_line(self, line: str) -> None:
        self.lines.append(line)


def _tagged_cell(notebook: Path, *, no_book_reference: bool) -> types.SimpleNamespace:
    """An nbval item of ``notebook``'s first (tagged) cell, in a session of its own."""
    options = {"no_book_reference": no_book_reference}
    config = types.SimpleNamespace(stash=pytest.Stash(), getoption=options.__getitem__)
    return types.SimpleNamespace(cell=nbformat.read(notebook, 4).cells[0], config=config,
                                 path=notebook)


def test_a_cell_changed_since_the_build_fails_for_want_of_a_reference(
        fake_build: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GL_SITE_DIR", str(fake_build))
    item = _tagged_cell(fake_build.parents[1] / "changed.ipynb", no_book_reference=False)
    with pytest.raises(pytest.fail.Exception, match="holds no execution of its current source"):
        nbval_reference.pytest_runtest_setup(item)
    right = _tagged_cell(fake_build.parents[1] / "lesson.ipynb", no_book_reference=False)
    nbval_reference.pytest_runtest_setup(right)
    assert right.cell.outputs[0]["text"] == "42\n" and right.cell.execution_count == 1


def test_no_book_reference_runs_the_cells_without_comparing(fake_build: Path) -> None:
    item = _tagged_cell(fake_build.parents[1] / "lesson.ipynb", no_book_reference=True)
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
    item = _tagged_cell(fake_build.parents[1] / "lesson.ipynb", no_book_reference=False)
    with pytest.raises(pytest.fail.Exception, match=r"failed \(exit code 2\)[\s\S]*Extension"):
        nbval_reference.pytest_runtest_setup(item)
    assert building.session_build(item.config) is failed


def test_reference_is_the_cached_run_of_the_current_source(fake_build: Path) -> None:
    cache_dir = fake_build.parent / ".jupyter_cache"
    notebook = fake_build.parents[1] / "lesson.ipynb"
    cells = nbformat.read(notebook, 4).cells
    executed = executed_cells(cache_dir, notebook)
    outputs, count = reference_for(cells[1], notebook, executed, cache_dir)
    assert count == 2 and outputs[0]["text"] == "41\n"
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
    monkeypatch.delenv("PYTEST_XDIST_TESTRUNUID", raising=False)  # one process, not xdist
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


def test_the_workers_of_one_xdist_run_share_one_build(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Under pytest-xdist each worker is a session of its own: the first to ask builds, the
    others of the same run reuse that build (its outcome and log); a new run builds again."""
    calls: list[Path] = []

    def fake_build_book(source: Path, *extra: str) -> BookBuild:
        calls.append(source)
        return BookBuild(returncode=3, html_dir=tmp_path / "html", log=f"build {len(calls)}",
                         seconds=7.0)

    monkeypatch.delenv("GL_SITE_DIR", raising=False)
    monkeypatch.setattr(building, "build_book", fake_build_book)
    monkeypatch.setattr(building, "BUILD_LOG", tmp_path / "book-build.log")

    def worker(run: str) -> BookBuild:
        monkeypatch.setenv("PYTEST_XDIST_TESTRUNUID", run)
        return building.course_build(types.SimpleNamespace(stash=pytest.Stash()))

    worker("run-a")
    second = worker("run-a")
    assert len(calls) == 1
    assert (second.returncode, second.html_dir, second.log, second.seconds) == (
        3, tmp_path / "html", "build 1", 7.0)
    assert worker("run-b").log == "build 2" and len(calls) == 2
