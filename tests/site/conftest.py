"""Fixtures of the site tests: the built book, the served site, Chromium.

``built_site`` (session)
    the course book of this session (:func:`~.building.course_build`): built once into
    ``_build/html`` exactly as ``make book`` builds it, or the site ``GL_SITE_DIR`` names
    (set it to a built ``_build/html`` to skip the build while working on these tests).
    The nbval references of the notebooks come from the same build (``nbval_reference.py``),
    whichever asks first. ``test_book_build.py`` asserts that the build succeeded.
``site_dir`` (session)
    the built site's folder; fails, in each test that needs it, when the book did not build.
``site_server`` (session)
    serves the built site on ``127.0.0.1`` at a free port, with the MIME types of
    ``make serve``; ``site_server.url("book/intro.html")``.
``browser`` (session)
    Debian's Chromium (``/usr/bin/chromium``, or ``GL_CHROMIUM``) launched by Playwright
    through ``executable_path`` with the flags of architecture.md. Skipped, with the reason,
    only when Chromium is truly absent and ``GL_REQUIRE_BROWSER`` is not 1 (``make test``
    sets it to 1 wherever it can install Chromium, so there a missing browser fails).
``site_page``
    a :class:`~.harness.RecordedPage`: a fresh browser context whose requests and console
    messages are recorded; requests to any host but the site's are blocked *and* recorded.
    ``site_page.open("book/intro.html")``, then ``site_page.assert_clean()`` (or inspect
    ``site_page.problems()``); ``site_page.page`` is the Playwright page.
``site_page_dark``
    the same with the reader's system in dark mode (``prefers-color-scheme: dark``).

Helpers live in ``building.py`` (``toc_pages()`` lists the site's pages at collection time)
and ``harness.py`` (``serve``, ``new_context``, ``record_page`` and ``recorded_page`` serve
and record any other folder). Set ``GL_SCREENSHOT_DIR`` to keep the screenshots tests take with
``RecordedPage.screenshot``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .building import BookBuild, course_build
from .harness import (
    CHROMIUM,
    CHROMIUM_FLAGS,
    RecordedPage,
    SiteServer,
    recorded_page,
    serve,
)


@pytest.fixture(scope="session")
def built_site(request: pytest.FixtureRequest) -> BookBuild:
    """The course site of this session, built once (or taken from ``GL_SITE_DIR``)."""
    return course_build(request.config)


@pytest.fixture(scope="session")
def site_dir(built_site: BookBuild) -> Path:
    """The built site's folder; fails (each test that needs it) when the book did not build."""
    if not built_site.ok:
        pytest.fail(f"{built_site.describe()}. Last lines:\n{built_site.tail(30)}",
                    pytrace=False)
    return built_site.html_dir


@pytest.fixture(scope="session")
def site_server(site_dir: Path) -> Iterator[SiteServer]:
    """The built course site on http://127.0.0.1:<free port>/."""
    with serve(site_dir) as server:
        yield server


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Chromium driven by Playwright (sync API); one browser for the whole session."""
    if not CHROMIUM.exists():
        reason = (
            f"Chromium not found at {CHROMIUM}: install it (`apt-get install chromium`, which "
            "`make test` does on Debian/Ubuntu) or set GL_CHROMIUM to a Chrome/Chromium binary"
        )
        if os.environ.get("GL_REQUIRE_BROWSER") == "1":
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture
def site_page(browser: Any, site_server: SiteServer) -> Iterator[RecordedPage]:
    """A fresh, recorded page on the served site (light colour scheme)."""
    with recorded_page(browser, site_server, "light") as recorded:
        yield recorded


@pytest.fixture
def site_page_dark(browser: Any, site_server: SiteServer) -> Iterator[RecordedPage]:
    """A fresh, recorded page on the served site, with the reader's system in dark mode."""
    with recorded_page(browser, site_server, "dark") as recorded:
        yield recorded
