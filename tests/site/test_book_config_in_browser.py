"""The course's ``_config.yml`` does what CONTRIBUTING.md and architecture.md promise, checked
on a small book of its own (so it holds whatever the lessons currently contain):

* an ``Interactive`` (widget + static HTML) shows its static ``text/html`` on the site;
* a plain ipywidget with no HTML alternative still renders its initial view from the widget
  state saved at execution, through the vendored widget manager;
* a widget label's formula is typeset by the site's MathJax 3 (through
  ``scripts/site_js/widgets-setup.js``);
* nothing is requested from any host but the site's, and the console stays clean.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
import yaml

from .building import REPO_ROOT, BookBuild, build_book
from .harness import RecordedPage, recorded_page, serve

pytestmark = pytest.mark.browser

STATIC_HTML = (
    '<div class="gl-calculator" data-calculator="demo"><label for="demo-n">n</label>'
    '<input id="demo-n" name="n" value="3"><output data-output="double">6</output></div>'
)
NOTEBOOK_CELLS = [
    ("markdown", "# Widgets on the site\n\nInline math $2MKN$ and display math\n\n"
                 "$$I = \\frac{F}{B}$$"),
    ("code", "import ipywidgets as widgets\n"
             "plain = widgets.IntSlider(value=7, min=0, max=10, description=r'$\\alpha$')\n"
             "plain"),
    ("code", "from gpulesson.display import Interactive\n"
             "live = widgets.VBox([widgets.IntSlider(value=3, description='n'),\n"
             "                     widgets.HTML('<output>6</output>')])\n"
             f"Interactive(live, {STATIC_HTML!r})"),
]


def _write_book(root: Path) -> None:
    config = yaml.safe_load((REPO_ROOT / "_config.yml").read_text(encoding="utf-8"))
    config["title"] = "Configuration check"
    config["bibtex_bibfiles"] = ["refs.bib"]
    config["sphinx"]["local_extensions"] = {"gl_status": str(REPO_ROOT / "scripts")}
    config["sphinx"]["config"]["html_static_path"] = [
        str(REPO_ROOT / p) for p in config["sphinx"]["config"].get("html_static_path", [])
    ]
    if config["html"].get("favicon"):
        config["html"]["favicon"] = str(REPO_ROOT / config["html"]["favicon"])
    (root / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    (root / "_toc.yml").write_text(
        "format: jb-book\nroot: index\nchapters:\n  - file: notebooks/demo\n", encoding="utf-8"
    )
    (root / "index.md").write_text("# Check\n\nThe ridge point $P/B$.\n", encoding="utf-8")
    (root / "refs.bib").write_text(
        "@misc{demo, title = {Demo}, author = {Nobody}, year = {2024}}\n", encoding="utf-8"
    )
    vendored = REPO_ROOT / "_vendor"
    if not (vendored / "_lib" / "VERSIONS.json").is_file():
        pytest.fail("no vendored JavaScript: run `make site-assets` (make test does)")
    (root / "_vendor").symlink_to(vendored, target_is_directory=True)
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [
        nbformat.v4.new_markdown_cell(src) if kind == "markdown" else nbformat.v4.new_code_cell(src)
        for kind, src in NOTEBOOK_CELLS
    ]
    (root / "notebooks").mkdir()
    nbformat.write(nb, root / "notebooks" / "demo.ipynb")


@pytest.fixture(scope="module")
def demo_book(tmp_path_factory: pytest.TempPathFactory) -> BookBuild:
    root = tmp_path_factory.mktemp("configbook")
    _write_book(root)
    result = build_book(root)
    assert result.ok, f"the configuration-check book did not build:\n{result.tail()}"
    return result


@pytest.fixture
def demo_page(browser: Any, demo_book: BookBuild) -> Iterator[RecordedPage]:
    with serve(demo_book.html_dir) as server:
        with recorded_page(browser, server) as recorded:
            recorded.open("notebooks/demo.html")
            yield recorded


def test_interactive_objects_render_their_static_html(demo_book: BookBuild) -> None:
    html = (demo_book.html_dir / "notebooks" / "demo.html").read_text(encoding="utf-8")
    assert 'data-calculator="demo"' in html, "the static rendering is missing"
    views = html.count('type="application/vnd.jupyter.widget-view+json"')
    assert views == 1, f"expected only the plain widget's view, found {views} widget views"
    assert "widget-state+json" in html, "widget state was not saved at execution"
    assert "embed-amd.js" in html, "a page that shows a widget lost the widget manager"


def test_saved_widget_state_renders_offline(demo_page: RecordedPage) -> None:
    page = demo_page.page
    slider = page.locator(".widget-slider").first
    slider.wait_for(timeout=15_000)
    readouts = page.locator(".widget-readout")
    assert readouts.count() == 1, "only the plain slider should render as a live widget"
    assert readouts.first.inner_text().strip() == "7", "the slider lost its initial value"
    assert page.locator('output[data-output="double"]').inner_text() == "6"
    # ipywidgets typesets labels with the MathJax 2 API: scripts/site_js/widgets-setup.js
    # bridges it to the site's MathJax 3, so the label's formula is typeset too.
    page.locator(".widget-slider mjx-container").first.wait_for(timeout=15_000)
    if os.environ.get("GL_SCREENSHOT_DIR"):
        demo_page.screenshot("config-check-widgets")
    demo_page.assert_clean("notebooks/demo.html")
