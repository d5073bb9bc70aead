"""Helpers of the browser tests: a static server of the built site, a recorded page.

The fixtures that use them are in ``conftest.py`` (see there); the list of the site's pages
is :func:`~.building.toc_pages`.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from .building import script_module

HOST = "127.0.0.1"
CHROMIUM = Path(os.environ.get("GL_CHROMIUM", "/usr/bin/chromium"))
#: A port on this machine where nothing listens: the proxy of every request that is not to
#: 127.0.0.1 (Chromium never sends loopback requests through a proxy), so that no such
#: request leaves the machine; the recorder reports each one.
DEAD_PROXY = f"http://{HOST}:9"
#: architecture.md: headless, no sandbox (we run as root in CI), no background traffic of
#: Chromium's own (updates, sync, safe browsing), so every request seen is the page's, and
#: no way out but to 127.0.0.1.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    f"--proxy-server={DEAD_PROXY}",
]
#: How long a page may take to settle (scripts, fonts, MathJax, widgets), in milliseconds.
SETTLE_MS = 15_000


# ---------------------------------------------------------------------------------------
# The server


_SERVE_SITE = script_module("serve_site")
#: ``with in_background(server) as server:``: a server answering on a thread for the block.
in_background = _SERVE_SITE.in_background


class _QuietHandler(_SERVE_SITE.SiteHandler):
    """``make serve``'s handler (the MIME types Pyodide needs), without a log line per request."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass


@dataclass
class SiteServer:
    """A running HTTP server for a folder; ``url(path)`` gives a page's address."""

    root: Path
    port: int

    @property
    def origin(self) -> str:
        return f"http://{HOST}:{self.port}"

    def url(self, path: str = "") -> str:
        return f"{self.origin}/{path.lstrip('/')}"


@contextlib.contextmanager
def serve(root: Path) -> Iterator[SiteServer]:
    """Serve ``root`` on 127.0.0.1 at a free port: ``with serve(folder) as server: ...``."""
    handler = functools.partial(_QuietHandler, directory=str(root))
    with in_background(_SERVE_SITE.SiteHTTPServer((HOST, 0), handler),
                       name="site-server") as server:
        yield SiteServer(root=root, port=server.server_address[1])


@dataclass
class RecordedPage:
    """A Playwright page plus everything that went wrong while it was open."""

    page: Any
    origin: str
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    bad_responses: list[str] = field(default_factory=list)
    foreign_requests: list[str] = field(default_factory=list)

    def open(self, path: str, *, settle: bool = True) -> Any:
        """Go to a site-relative ``path``; wait until scripts, fonts and math have settled."""
        response = self.page.goto(f"{self.origin}/{path.lstrip('/')}", wait_until="load")
        if settle:
            self.settle()
        return response

    def settle(self) -> None:
        """Wait for network silence, MathJax's first typeset and the widget manager."""
        self.page.wait_for_load_state("networkidle", timeout=SETTLE_MS)
        self.page.evaluate(
            """async () => {
                const mj = window.MathJax;
                if (mj && mj.startup && mj.startup.promise) { await mj.startup.promise; }
            }"""
        )
        self.page.wait_for_load_state("networkidle", timeout=SETTLE_MS)

    def problems(self) -> list[str]:
        """Every recorded problem, one line each; empty when the page was clean."""
        return (
            [f"console error: {m}" for m in self.console_errors]
            + [f"uncaught exception: {m}" for m in self.page_errors]
            + [f"failed request: {m}" for m in self.failed_requests]
            + [f"HTTP error: {m}" for m in self.bad_responses]
            + [f"request to another host (blocked): {m}" for m in self.foreign_requests]
        )

    def screenshot(self, name: str, *, full_page: bool = False) -> Path | None:
        """Save a PNG into ``GL_SCREENSHOT_DIR`` when that is set (for reports); else no-op.
        The window by default; ``full_page=True`` for the whole page (seconds on a long page:
        2.4 s for the glossary's 18,849 px, against 0.1 s for the window)."""
        folder = os.environ.get("GL_SCREENSHOT_DIR")
        if not folder:
            return None
        path = Path(folder) / f"{name}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(path), full_page=full_page)
        return path

    def assert_clean(self, what: str = "") -> None:
        problems = self.problems()
        assert not problems, f"{what or self.page.url}:\n  " + "\n  ".join(problems)


def record_page(context: Any, server: SiteServer) -> RecordedPage:
    """A new page of ``context`` whose problems are recorded: console errors, uncaught
    exceptions, failed requests, HTTP errors, and every request (the page's, its workers')
    to anywhere but ``server``. Chromium's proxy flag (:data:`DEAD_PROXY`) stops the
    request itself; no route handler sits in the way of the others. (A route for every
    request cost each page load about 0.3 s and turns off the browser's cache.)"""
    page = context.new_page()
    recorded = RecordedPage(page=page, origin=server.origin)
    local = (HOST, server.port)

    def watch(request: Any) -> None:
        parts = urlsplit(request.url)
        if parts.scheme in ("http", "https", "ws", "wss") and (parts.hostname, parts.port) != local:
            recorded.foreign_requests.append(request.url)

    context.on("request", watch)
    page.on(
        "console",
        lambda msg: recorded.console_errors.append(f"{msg.text} [{msg.location.get('url', '')}]")
        if msg.type == "error"
        else None,
    )
    page.on("pageerror", lambda exc: recorded.page_errors.append(str(exc)))

    def on_failed(request: Any) -> None:
        if request.url not in recorded.foreign_requests:  # already reported as foreign
            recorded.failed_requests.append(f"{request.url} ({request.failure})")

    page.on("requestfailed", on_failed)
    page.on(
        "response",
        lambda resp: recorded.bad_responses.append(f"{resp.status} {resp.url}")
        if resp.status >= 400
        else None,
    )
    return recorded


def new_context(browser: Any, color_scheme: str) -> Any:
    # service workers could answer requests out of sight of the recorder: block them.
    return browser.new_context(
        color_scheme=color_scheme,
        service_workers="block",
        viewport={"width": 1280, "height": 900},
    )


@contextlib.contextmanager
def recorded_page(browser: Any, server: SiteServer,
                  color_scheme: str = "light") -> Iterator[RecordedPage]:
    """A recorded page (:func:`record_page`) in a fresh context of ``browser``
    (:func:`new_context`), closed with its context when the block ends."""
    context = new_context(browser, color_scheme)
    try:
        yield record_page(context, server)
    finally:
        context.close()


def report_timings(kind: str, timings: dict[str, Any]) -> None:
    """Print a browser test's timings and, when ``GL_SCREENSHOT_DIR`` is set, keep them there
    as ``<kind>-timings.json`` for the report."""
    text = json.dumps(timings, indent=2)
    print(f"\n{kind} timings:", text)
    folder = os.environ.get("GL_SCREENSHOT_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / f"{kind}-timings.json").write_text(text + "\n", encoding="utf-8")


def require_same_package(page: Any, interactive: str, pack: dict[str, Any]) -> None:
    """Stop a live test when the page's packed gpulesson (``window.<interactive>``'s) is not
    the one installed here: it would compare another version's answers with this one's."""
    served = page.evaluate(f"window.{interactive}.stats.info.sha256")
    if served != pack["sha256"]:
        pytest.fail("the site was built from another version of gpulesson than the one "
                    "installed here: rebuild it (make book), or unset GL_SITE_DIR",
                    pytrace=False)
