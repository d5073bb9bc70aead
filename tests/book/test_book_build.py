"""The book builds with warnings as errors, executing every notebook of ``_toc.yml``, and the
built site is complete: a page for every toc entry, the vendored scripts published at the
site root, no script or stylesheet from another host, and a status page naming the machine.

The build itself is the session fixture ``built_site`` (tests/conftest.py), shared with the
browser tests.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser.harness import toc_pages

pytestmark = pytest.mark.book

REMOTE_RESOURCE = re.compile(
    r"<(?:script|img|iframe|source)\b[^>]*\bsrc=\"(?:https?:)?//[^\"]+\""
    r"|<link\b[^>]*\brel=\"(?:stylesheet|preload|icon|modulepreload)\"[^>]*\bhref=\"(?:https?:)?//"
)


def test_book_builds_with_warnings_as_errors(built_site) -> None:
    assert built_site.ok, (
        f"jupyter-book build -W -n --keep-going failed (exit {built_site.returncode}).\n"
        f"{built_site.tail()}"
    )
    assert not re.search(r"\bWARNING\b", built_site.log.replace("IPKernelApp] WARNING", "")), (
        "the build logged a warning"
    )


def test_every_toc_page_is_built(site_dir: Path) -> None:
    missing = [page for page in toc_pages() if not (site_dir / page).is_file()]
    assert not missing, f"pages missing from the built site: {missing}"


def test_no_page_loads_anything_from_another_host(site_dir: Path) -> None:
    offenders = {}
    for page in sorted(site_dir.rglob("*.html")):
        if "_lib" in page.parts or "_static" in page.parts:
            continue
        hits = REMOTE_RESOURCE.findall(page.read_text(encoding="utf-8"))
        if hits:
            offenders[str(page.relative_to(site_dir))] = hits[:3]
    assert not offenders, f"remote scripts or styles: {offenders}"


def test_vendored_scripts_are_published_outside_static(site_dir: Path) -> None:
    for path in ("_lib/requirejs/require.js", "_lib/jupyter-widgets/embed-amd.js",
                 "_lib/mathjax/tex-chtml.js", "_lib/course/widgets-setup.js",
                 "_lib/VERSIONS.json"):
        assert (site_dir / path).is_file(), f"{path} was not published"
    assert not (site_dir / "_static" / "_lib").exists()


def test_status_page_names_the_machine(site_dir: Path) -> None:
    html = (site_dir / "book" / "status.html").read_text(encoding="utf-8")
    for label in ("Device the lessons ran on", "Python", "numpy", "Built"):
        assert label in html, f"status page lacks {label!r}"
    assert re.search(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC", html), "status page has no build date"
