"""The book builds with warnings as errors, executing every notebook of ``_toc.yml``, and
writes a page for every toc entry.

The build itself is :func:`~.building.course_build` (the session fixture ``built_site``),
shared with the other site tests and with the nbval references of the notebooks. What the
pages hold is checked in ``test_built_site.py`` (from disk) and by the browser tests.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .building import toc_pages

pytestmark = pytest.mark.book


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
