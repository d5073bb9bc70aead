"""The book's configuration, checked without building it.

The table of contents lists exactly the course's notebooks, in course order; the site points
at JavaScript it serves itself (never a CDN); the vendored widget manager matches the
installed ipywidgets; the HTML builder prefers the static rendering of interactive objects;
the course's pages are in the toc, the reference pages in its "Reference" part.
"""

from __future__ import annotations

import json
import re
from importlib import metadata
from pathlib import Path

import pytest
import yaml

from gpulesson import course

from .building import REPO_ROOT, script_module, toc_files

CONFIG = yaml.safe_load((REPO_ROOT / "_config.yml").read_text(encoding="utf-8"))
TOC = yaml.safe_load((REPO_ROOT / "_toc.yml").read_text(encoding="utf-8"))
SPHINX = CONFIG["sphinx"]["config"]


def _source_for(docname: str) -> Path | None:
    for suffix in (".md", ".ipynb", ".rst"):
        path = REPO_ROOT / f"{docname}{suffix}"
        if path.is_file():
            return path
    return None


def test_toc_lists_only_files_that_exist() -> None:
    missing = [doc for doc in toc_files() if _source_for(doc) is None]
    assert not missing, f"_toc.yml lists files that do not exist: {missing}"


def test_every_notebook_is_in_the_toc() -> None:
    """only_build_toc_files silently skips a notebook missing from the toc: refuse that."""
    listed = set(toc_files())
    notebooks = sorted(REPO_ROOT.glob("notebooks/*.ipynb")) + sorted(
        REPO_ROOT.glob("exercises/*.ipynb")
    )
    absent = [
        str(p.relative_to(REPO_ROOT))
        for p in notebooks
        if str(p.relative_to(REPO_ROOT).with_suffix("")) not in listed
    ]
    assert not absent, f"add these to the 'Lessons' part of _toc.yml: {absent}"


def test_lessons_follow_course_order_each_followed_by_its_exercises() -> None:
    slugs = list(course.SLUGS)
    lesson_docs = [d for d in toc_files() if d.startswith(("notebooks/", "exercises/"))]
    seen = [(slugs.index(Path(d).name) if Path(d).name in slugs else -1, d) for d in lesson_docs]
    unknown = [d for rank, d in seen if rank < 0 and d.startswith("notebooks/")]
    assert not unknown, f"lessons missing from gpulesson/course.py: {unknown}"
    listed = [Path(d).name for d in lesson_docs if d.startswith("notebooks/")]
    assert listed == slugs, f"_toc.yml's lessons {listed} are not gpulesson.course's {slugs}"
    ranks = [rank for rank, _ in seen if rank >= 0]
    assert ranks == sorted(ranks), f"lessons out of course order in _toc.yml: {lesson_docs}"
    for i, doc in enumerate(lesson_docs):
        lesson = "notebooks/" + Path(doc).name
        if doc.startswith("exercises/") and _source_for(lesson) is not None:
            assert i > 0 and lesson_docs[i - 1] == lesson, (
                f"{doc} must come right after its lesson {lesson}"
            )


def test_build_settings_fail_on_errors() -> None:
    assert CONFIG["only_build_toc_files"] is True
    assert CONFIG["execute"]["execute_notebooks"] == "cache"
    assert SPHINX["nb_execution_raise_on_error"] is True
    assert CONFIG["execute"].get("allow_errors", False) is False


def test_site_loads_its_scripts_from_itself() -> None:
    """mathjax_path and nb_ipywidgets_js point at the files scripts/vendor_js.py publishes."""
    vendor = script_module("vendor_js")
    assert "_vendor" in SPHINX["html_extra_path"]
    configured = [SPHINX["mathjax_path"], *SPHINX["nb_ipywidgets_js"]]
    for url in configured:
        assert "://" not in url and not url.startswith("//"), f"{url} is not a local path"
    # Sphinx prefixes local scripts with _static/, so "../x" is the site root's x.
    site_paths = {url.removeprefix("../") for url in configured}
    assert site_paths == set(vendor.SITE_PATHS.values()) | set(vendor.OWN_SCRIPTS.values())
    # The widget bundle is an AMD module: RequireJS first, then the set-up, then the bundle.
    assert [Path(u).name for u in SPHINX["nb_ipywidgets_js"]] == [
        "require.js",
        "widgets-setup.js",
        "embed-amd.js",
    ]
    for kwargs in SPHINX["nb_ipywidgets_js"].values():
        cdn = kwargs.get("data-jupyter-widgets-cdn", "")
        assert "://" not in cdn, "the widget manager must not fall back to a CDN"
    vendored = REPO_ROOT / "_vendor"
    if vendored.is_dir():  # after `make site-assets` the files are really there
        for path in site_paths:
            assert (vendored / path).is_file(), f"_vendor/{path} missing: run make site-assets"


def test_thebe_is_off_and_the_theme_mode_is_set() -> None:
    """The two console errors of a default JB1 build (architecture.md) are configured away."""
    assert CONFIG["launch_buttons"]["thebe"] is False
    assert "sphinx_thebe" not in SPHINX["extensions"]
    assert SPHINX["html_context"]["default_mode"] in {"auto", "light", "dark"}


def test_html_prefers_the_static_rendering_of_interactive_objects() -> None:
    """CONTRIBUTING.md, "Two renderings": text/html must outrank the widget view."""
    from myst_nb.core.render import get_mime_priority

    overrides = [tuple(item) for item in SPHINX["nb_mime_priority_overrides"]]
    order = get_mime_priority("html", overrides)
    widget = "application/vnd.jupyter.widget-view+json"
    assert order.index("text/html") < order.index(widget)
    # ... and without our override myst-nb would pick the widget: the setting matters.
    default = get_mime_priority("html", [])
    assert default.index(widget) < default.index("text/html")


def test_widget_manager_matches_installed_ipywidgets() -> None:
    """@jupyter-widgets/html-manager 1.x renders ipywidgets 8 state (0.x was ipywidgets 7)."""
    lock = json.loads((REPO_ROOT / "package-lock.json").read_text(encoding="utf-8"))
    manager = lock["packages"]["node_modules/@jupyter-widgets/html-manager"]["version"]
    ipywidgets = metadata.version("ipywidgets")
    expected_major = {"8": "1", "7": "0"}.get(ipywidgets.split(".")[0])
    assert manager.split(".")[0] == expected_major, (
        f"html-manager {manager} does not match ipywidgets {ipywidgets}"
    )
    package = json.loads((REPO_ROOT / "package.json").read_text(encoding="utf-8"))
    for name, spec in package["dependencies"].items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", spec), f"{name} must be pinned exactly, got {spec}"


COURSE_PAGES = [("book/intro", None), ("book/how_to_use", None), ("book/glossary", None),
                ("book/references", None), ("book/status", None),
                ("book/calculators", "Reference"), ("book/hardware", "Reference"),
                ("book/instructors", "Reference")]


@pytest.mark.parametrize(("page", "part"), COURSE_PAGES, ids=[page for page, _ in COURSE_PAGES])
def test_course_pages_are_in_the_toc(page: str, part: str | None) -> None:
    """Every course page is in the toc; the reference pages in its "Reference" part."""
    assert page in toc_files()
    if part is not None:
        chapters = next(p["chapters"] for p in TOC["parts"] if p["caption"] == part)
        assert page in [chapter["file"] for chapter in chapters], f"{page} is not in {part!r}"
