"""Build a Jupyter Book the way ``make book`` does, and the course's build of a test session.

:func:`course_build` is the one place a test session gets the course book: built at most
once per session into ``_build/html`` (or taken from ``GL_SITE_DIR``), by whichever asks
first. The fixtures ``built_site``/``site_dir`` (``conftest.py``) and the nbval references
of ``nbval_reference.py`` both ask it, so the order of the paths on the pytest command line
does not matter and ``make test`` builds the book once (with pytest-xdist, once for all the
workers of the run: see :func:`course_build`). :func:`build_book` also builds the
small books that some tests write with the course's configuration.

Also here, because the site tests share them: the pages of ``_toc.yml``
(:func:`toc_files`, :func:`toc_pages`) and the build helpers of ``scripts/`` imported by
path (:func:`script_module`).
"""

from __future__ import annotations

import fcntl
import functools
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
#: The flags of `make book`: warnings are errors, nitpicky references, report them all.
JB_FLAGS = ("-W", "-n", "--keep-going")
#: Where the session's build of the course writes its full log.
BUILD_LOG = REPO_ROOT / "_build" / "book-build.log"
#: With pytest-xdist, beside the log: the lock the workers of a run take to build the book
#: once (``.book-build.lock``), and the outcome of that build (``.book-build.json``).
LOCK_NAME, RECORD_NAME = ".book-build.lock", ".book-build.json"


@dataclass(frozen=True)
class BookBuild:
    """The outcome of one book build (or of the site ``GL_SITE_DIR`` names)."""

    returncode: int
    html_dir: Path
    log: str
    seconds: float
    #: ``GL_SITE_DIR`` when the site was given rather than built in this session.
    given: str | None = None

    @property
    def ok(self) -> bool:
        """True when the build exited 0 and wrote an index page."""
        return self.returncode == 0 and (self.html_dir / "index.html").is_file()

    @property
    def jupyter_cache(self) -> Path:
        """The build's jupyter-cache: every notebook as the build executed it."""
        return self.html_dir.parent / ".jupyter_cache"

    def tail(self, lines: int = 80) -> str:
        """The end of the build log, for failure messages."""
        return "\n".join(self.log.splitlines()[-lines:])

    def describe(self) -> str:
        """One line: where the site came from, for reports and failure messages."""
        if self.given is not None:
            return (f"the site of GL_SITE_DIR={self.given}" if self.ok else
                    f"GL_SITE_DIR={self.given} holds no built site (no index.html)")
        outcome = "built" if self.ok else f"failed (exit code {self.returncode})"
        return f"the book {outcome} in {self.seconds:.0f} s into {self.html_dir} (log: {BUILD_LOG})"


def jupyter_book_command() -> str:
    """The ``jupyter-book`` of this environment (beside the running Python)."""
    beside_python = Path(sys.executable).with_name("jupyter-book")
    if beside_python.exists():
        return str(beside_python)
    found = shutil.which("jupyter-book")
    if found is None:
        raise FileNotFoundError("jupyter-book is not installed: run `make test` (installs .[dev])")
    return found


def build_book(source: Path, *extra: str) -> BookBuild:
    """Build the book in ``source`` into ``source/_build/html`` with the flags of make book."""
    start = time.perf_counter()
    proc = subprocess.run(
        [jupyter_book_command(), "build", str(source), *JB_FLAGS, *extra],
        cwd=source,
        capture_output=True,
        text=True,
        # the environment of make book: the kernels draw with Jupyter's inline backend, so
        # the built pages hold the figures a reader sees (make test runs pytest itself
        # with MPLBACKEND=Agg, which would leave every figure out of the site)
        env={key: value for key, value in os.environ.items() if key != "MPLBACKEND"},
    )
    return BookBuild(
        returncode=proc.returncode,
        html_dir=source / "_build" / "html",
        log=proc.stdout + proc.stderr,
        seconds=time.perf_counter() - start,
    )


# ---------------------------------------------------------------------------------------
# The course book of this test session

_SESSION_BUILD = pytest.StashKey[BookBuild]()


def course_build(config: pytest.Config) -> BookBuild:
    """The course book of this pytest session: the first call builds it, later calls reuse it.

    ``GL_SITE_DIR`` set: that folder (a built ``_build/html``) is the site and nothing is
    built; its jupyter-cache is the ``.jupyter_cache`` beside it. Otherwise the book is built
    exactly as ``make book`` builds it (``jupyter-book build . -W -n --keep-going``, which
    executes every notebook of ``_toc.yml``), its log written to :data:`BUILD_LOG`. A failed
    build is remembered too: it is not retried within the session. Under pytest-xdist the
    workers of one run take a lock beside :data:`BUILD_LOG` in turn: the first builds, the
    others wait and reuse its outcome (recorded beside the log, under the run's id).
    """
    if _SESSION_BUILD not in config.stash:
        config.stash[_SESSION_BUILD] = _obtain_course_build()
    return config.stash[_SESSION_BUILD]


def session_build(config: pytest.Config) -> BookBuild | None:
    """The session's course book if something has asked for it already, else None."""
    return config.stash.get(_SESSION_BUILD, None)


def _obtain_course_build() -> BookBuild:
    given = os.environ.get("GL_SITE_DIR")
    if given:
        html = Path(given).resolve()
        ok = (html / "index.html").is_file()
        log = "(GL_SITE_DIR given)" if ok else (
            f"GL_SITE_DIR={given} has no index.html: build the book first (make book)")
        return BookBuild(returncode=0 if ok else 1, html_dir=html, log=log, seconds=0.0,
                         given=given)
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run is None:  # one process: this session is the only one that asks
        return _build_course()
    # pytest-xdist: the workers of one run share one build. The first to take the lock
    # builds and records the outcome under the run's id; the others wait for the lock and
    # read the record.
    BUILD_LOG.parent.mkdir(exist_ok=True)
    record_path = BUILD_LOG.with_name(RECORD_NAME)
    with open(BUILD_LOG.with_name(LOCK_NAME), "a", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            record = json.loads(record_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            record = {}
        if record.get("run") == run:
            return BookBuild(returncode=record["returncode"], html_dir=Path(record["html"]),
                             log=BUILD_LOG.read_text(encoding="utf-8"),
                             seconds=record["seconds"])
        result = _build_course()
        record_path.write_text(json.dumps({"run": run, "returncode": result.returncode,
                                            "html": str(result.html_dir),
                                            "seconds": result.seconds}), encoding="utf-8")
        return result


def _build_course() -> BookBuild:
    # as make book does: a notebook's cached run is stale once gpulesson or its data changed
    script_module("book_cache").refresh(REPO_ROOT)
    result = build_book(REPO_ROOT)
    BUILD_LOG.parent.mkdir(exist_ok=True)
    BUILD_LOG.write_text(result.log, encoding="utf-8")
    return result


# ---------------------------------------------------------------------------------------
# What the book is made of


def toc_files() -> list[str]:
    """Every document of ``_toc.yml`` (the root, then each ``file:``), in reading order,
    without extensions (``book/intro``, ``notebooks/<slug>`` ...)."""
    return _documents(yaml.safe_load((REPO_ROOT / "_toc.yml").read_text(encoding="utf-8")))


def _documents(node: object) -> list[str]:
    found: list[str] = []
    if isinstance(node, dict):
        for key in ("root", "file"):
            if key in node:
                found.append(str(node[key]))
        for value in node.values():
            found += _documents(value)
    elif isinstance(node, list):
        for item in node:
            found += _documents(item)
    return found


def toc_pages() -> list[str]:
    """Site-relative paths of every page the book builds, read from ``_toc.yml``.

    The documents of :func:`toc_files`, and Sphinx's own ``genindex.html`` and
    ``search.html``; ``index.html`` is the front door that sends the reader to the root page
    (written by ``scripts/gl_exercises.py``).
    """
    return ["index.html", *(f"{doc}.html" for doc in toc_files()), "genindex.html",
            "search.html"]


@functools.cache
def script_module(name: str) -> ModuleType:
    """``scripts/<name>.py`` (a build helper, not a package module) imported by its path."""
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None, f"no scripts/{name}.py"
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.cache
def exercise_pack() -> dict[str, Any]:
    """The exercises' pack as the build makes it from the installed package
    (``scripts/gl_exercises.py``). Making one reads and parses every module it packs (about
    a second), so each test process makes it once; callers only read it."""
    return script_module("gl_exercises").exercise_pack()


@functools.cache
def exercises_left_static() -> dict[str, dict[str, Any]]:
    """The exercises the build leaves static because their checker needs a library Pyodide
    lacks, found as the build finds them (each reference answer run in the pack alone, in
    a subprocess: seconds), once per test process and only when a test asks: the modules
    that read it call this from their tests, not when they are collected (each xdist
    worker collects every module)."""
    return script_module("gl_exercises").browser_unavailable(exercise_pack())


@functools.cache
def calculator_pack() -> dict[str, Any]:
    """The calculators' pack as the build makes it (``scripts/gl_calculators.py``), once per
    test process."""
    return script_module("gl_calculators").make_pack()
