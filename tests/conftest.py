"""Fixtures shared by the whole test suite.

``built_site``: the course book, built once per test session into ``_build/html`` exactly
as ``make book`` builds it (``jupyter-book build . -W -n --keep-going``, which executes every
notebook of ``_toc.yml``). ``tests/book/test_book_build.py`` asserts that the build succeeded;
``site_dir`` hands the built folder to the browser tests (``tests/browser``). Set
``GL_SITE_DIR`` to an already built site to skip the build while working on browser tests.

After a successful build the fixture records where the build keeps its executed notebooks
(``config.gl_jupyter_cache``, the build's jupyter-cache); the repository's root
``conftest.py`` uses them as nbval's reference for cells tagged ``nbval-check-output``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from book.building import REPO_ROOT, BookBuild, build_book

BUILD_LOG = REPO_ROOT / "_build" / "book-build.log"


@pytest.fixture(scope="session")
def built_site(request: pytest.FixtureRequest) -> BookBuild:
    """The course site, built once per session (or taken from ``GL_SITE_DIR``)."""
    given = os.environ.get("GL_SITE_DIR")
    if given:
        html = Path(given).resolve()
        if not (html / "index.html").is_file():
            pytest.fail(f"GL_SITE_DIR={given} has no index.html: build the book first")
        return BookBuild(returncode=0, html_dir=html, log="(GL_SITE_DIR given)", seconds=0.0)
    result = build_book(REPO_ROOT)
    BUILD_LOG.parent.mkdir(exist_ok=True)
    BUILD_LOG.write_text(result.log, encoding="utf-8")
    if result.ok:
        request.config.gl_jupyter_cache = result.html_dir.parent / ".jupyter_cache"
    return result


@pytest.fixture(scope="session")
def site_dir(built_site: BookBuild) -> Path:
    """The built site's folder; fails (each test that needs it) when the book did not build."""
    if not built_site.ok:
        pytest.fail(
            f"the book did not build (exit code {built_site.returncode}); full log in "
            f"{BUILD_LOG}. Last lines:\n{built_site.tail(30)}",
            pytrace=False,
        )
    return built_site.html_dir
