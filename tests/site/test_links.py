"""Internal links of the built site resolve: every local ``href``/``src`` on every page is
served with status 200, and every ``#fragment`` of a local link names an element of its
target page. Scripts, styles, images and frames must be local (a link *to* another site is
fine; loading a resource *from* one is not).
"""

from __future__ import annotations

import functools
import urllib.error
import urllib.request
from html.parser import HTMLParser
from urllib.parse import urldefrag, urljoin, urlsplit

import pytest

from .building import toc_pages
from .harness import SiteServer

pytestmark = pytest.mark.browser

#: (tag, attribute) pairs that make the browser fetch something when the page loads.
RESOURCE_ATTRS = {("script", "src"), ("img", "src"), ("iframe", "src"), ("source", "src"),
                  ("video", "src"), ("audio", "src"), ("embed", "src")}
NON_HTTP = ("mailto:", "javascript:", "data:", "tel:", "blob:")


class _PageParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[tuple[str, str, str]] = []  # (tag, attr, url)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v for k, v in attrs if v is not None}
        for key in ("id", "name"):
            if key in values:
                self.ids.add(values[key])
        if tag == "a" and "href" in values:
            self.links.append((tag, "href", values["href"]))
        if tag == "link" and "href" in values:
            rel = values.get("rel", "")
            kind = "resource" if any(r in rel for r in ("stylesheet", "icon", "preload")) else ""
            self.links.append((tag, f"href{':' + kind if kind else ''}", values["href"]))
        for res_tag, attr in RESOURCE_ATTRS:
            if tag == res_tag and attr in values:
                self.links.append((tag, attr, values[attr]))


@functools.cache
def _fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            body = response.read()
            kind = response.headers.get_content_type()
            return response.status, body.decode("utf-8", "replace") if kind == "text/html" else ""
    except urllib.error.HTTPError as exc:
        return exc.code, ""


@functools.cache
def _parse(url: str) -> _PageParser:
    parser = _PageParser()
    parser.feed(_fetch(url)[1])
    return parser


@pytest.mark.parametrize("path", toc_pages())
def test_links_on_page_resolve(site_server: SiteServer, path: str) -> None:
    page_url = site_server.url(path)
    status, _ = _fetch(page_url)
    assert status == 200, f"{path}: HTTP {status}"
    problems: list[str] = []
    for tag, attr, raw in _parse(page_url).links:
        if not raw or raw.startswith(NON_HTTP):
            continue
        absolute = urljoin(page_url, raw)
        parts = urlsplit(absolute)
        is_local = parts.scheme in ("http", "https", "") and parts.netloc == urlsplit(
            page_url
        ).netloc
        is_resource = attr != "href"
        if not is_local:
            if is_resource:
                problems.append(f"<{tag} {attr}={raw!r}> loads from another host")
            continue
        target, fragment = urldefrag(absolute)
        target_status, _ = _fetch(target)
        if target_status != 200:
            problems.append(f"<{tag} {attr.split(':')[0]}={raw!r}> -> HTTP {target_status}")
            continue
        if fragment and tag == "a" and target.endswith(".html"):
            if fragment not in _parse(target).ids:
                problems.append(f"<a href={raw!r}>: no element with id {fragment!r} there")
    assert not problems, f"{path}:\n  " + "\n  ".join(sorted(set(problems)))
