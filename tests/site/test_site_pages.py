"""Every page of the built site but the exercise pages (``test_exercises_live.py`` checks
those with their exercises live), opened in Chromium from 127.0.0.1: it loads with no
console error, no uncaught exception, no failed request, no HTTP error and no request to any
other host (the site must work offline), and axe-core reports no serious or critical
accessibility violation in light or dark mode (``axe.py``). Also: search works offline, and
dark mode is as clean.
"""

from __future__ import annotations

import pytest

from .axe import assert_accessible
from .building import toc_pages
from .harness import RecordedPage

pytestmark = pytest.mark.browser

#: Exercise pages are opened, checked clean and run through axe-core with their exercises
#: live by test_exercises_live.py::test_every_exercise_page_goes_live; loading them here too
#: would boot Python in the browser a second time for the same checks.
PAGES = [path for path in toc_pages() if not path.startswith("exercises/")]


@pytest.mark.parametrize("path", PAGES)
def test_page_loads_cleanly_and_offline(site_page: RecordedPage, path: str) -> None:
    response = site_page.open(path)
    assert response is not None and response.ok, f"{path}: HTTP {response and response.status}"
    if path != "index.html":  # index.html is the front door: it sends the reader on
        titles = [text.strip() for text in site_page.page.locator("main h1").all_inner_texts()]
        assert any(titles), f"{path} has no visible title"
    site_page.assert_clean(path)
    # same page load: axe-core finds nothing serious, in light and in dark mode
    assert_accessible(site_page, path)


def test_intro_is_clean_in_dark_mode_too(site_page_dark: RecordedPage) -> None:
    site_page_dark.open("book/intro.html")
    theme = site_page_dark.page.evaluate("document.documentElement.dataset.theme")
    assert theme == "dark", f"the theme did not follow the reader's dark mode (got {theme!r})"
    site_page_dark.screenshot("intro-dark")
    site_page_dark.assert_clean()


#: Sphinx's search (searchtools.js) shows its results one at a time, 5 ms apart, then
#: writes its summary: until then a result further down may not be on the page yet.
SEARCH_DONE = ("() => { const s = document.querySelector('#search-results p.search-summary');"
               " return !!s && s.textContent.length > 0; }")


def test_search_finds_a_glossary_term_offline(site_page: RecordedPage) -> None:
    """Sphinx's search runs in the page from the site's own index: no search service."""
    site_page.open("search.html?q=bandwidth")
    results = site_page.page.locator("#search-results ul.search li")
    results.first.wait_for(timeout=15_000)
    site_page.page.wait_for_function(SEARCH_DONE, timeout=15_000)
    anchors = results.locator("a")
    links = [anchors.nth(i).get_attribute("href") for i in range(anchors.count())]
    assert any("glossary" in (href or "") for href in links), f"no glossary hit in {links}"
    site_page.assert_clean()


def test_a_page_loads_the_search_index_only_when_searched(site_page: RecordedPage) -> None:
    """Sphinx's search scripts (searchindex.js is 0.2 MB) load on the search page alone
    (book/_templates/layout.html): a lesson page asks for none of them, and its search
    box still leads to results."""
    page = site_page.page
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url.split("?")[0]))
    site_page.open("book/intro.html")
    search_scripts = ("searchindex.js", "searchtools.js", "language_data.js")
    assert not [url for url in asked if url.endswith(search_scripts)], asked
    page.keyboard.press("Control+k")
    field = page.locator("form.bd-search input[name=q]:visible").first
    field.wait_for(timeout=15_000)  # a loaded CI machine: the other waits here take 15 s
    field.fill("bandwidth")
    field.press("Enter")
    page.wait_for_url("**/search.html?q=bandwidth*", timeout=15_000)
    page.locator("#search-results ul.search li").first.wait_for(timeout=15_000)
    assert [url for url in asked if url.endswith("searchindex.js")], "the search page had no index"
    site_page.assert_clean()


def test_glossary_terms_render_math(site_page: RecordedPage) -> None:
    """MathJax comes from the site (vendored) and typesets the glossary's formulas."""
    site_page.open("book/glossary.html")
    typeset = site_page.page.locator("mjx-container").count()
    assert typeset > 5, f"only {typeset} formulas typeset on the glossary"
    site_page.screenshot("glossary-light")
    site_page.assert_clean()


def test_search_passages_quote_the_article(site_page: RecordedPage) -> None:
    """Each result quotes its page's text, not the page's buttons or its contents list
    (scripts/site_js/site.js narrows Sphinx's passage to the article)."""
    site_page.open("search.html?q=lessons")
    passages = site_page.page.locator("#search-results ul.search li p.context")
    passages.first.wait_for(timeout=15_000)
    # passages arrive one page fetch at a time: wait for the list to end and for five of
    # them (a fixed 2 s alone assumed a quiet machine), then 2 s for the rest
    site_page.page.wait_for_function(SEARCH_DONE, timeout=15_000)
    site_page.page.wait_for_function(
        "() => document.querySelectorAll('#search-results ul.search li p.context').length"
        " >= 5", timeout=15_000)
    site_page.page.wait_for_timeout(2_000)
    texts = passages.all_inner_texts()
    assert len(texts) >= 5
    for text in texts:
        assert "Contents" not in text.split()[:3] and not text.startswith("....md"), text
        assert "Binder" not in text and ".ipynb .pdf" not in text, text
    site_page.assert_clean()
