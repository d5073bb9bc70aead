"""The recorder of the browser tests (``harness.py``) can fail: a page that reaches for
another host, from the page itself or from one of its workers, is reported, and the
request never leaves this machine. Every page test relies on this for "the site works
offline"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .harness import new_context, record_page, serve

pytestmark = pytest.mark.browser

#: Addresses no test machine should reach: a name (RFC 2606) and an address (RFC 5737).
ELSEWHERE = ["http://example.com/font.css", "http://192.0.2.7/pixel.png",
             "https://example.org/from-a-worker.json"]

PAGE = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Reaches out</title>
<link rel="stylesheet" href="{ELSEWHERE[0]}"></head>
<body><main><h1>Reaches out</h1><img alt="" src="{ELSEWHERE[1]}">
<script>
  const worker = new Worker("worker.js");
  worker.onmessage = (event) => {{ document.body.dataset.worker = event.data; }};
</script></main></body></html>
"""
WORKER = f"""fetch("{ELSEWHERE[2]}").then(() => postMessage("reached"),
                                          () => postMessage("refused"));
"""


def test_requests_to_other_hosts_are_recorded_and_stopped(browser: Any, tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text(PAGE, encoding="utf-8")
    (tmp_path / "worker.js").write_text(WORKER, encoding="utf-8")
    with serve(tmp_path) as server:
        context = new_context(browser, "light")
        try:
            recorded = record_page(context, server)
            failures: dict[str, str] = {}
            context.on("requestfailed", lambda r: failures.setdefault(r.url, r.failure))
            recorded.open("index.html", settle=False)
            recorded.page.wait_for_function("document.body.dataset.worker", timeout=15_000)
            outcome = recorded.page.evaluate("document.body.dataset.worker")
            problems = recorded.problems()
        finally:
            context.close()
    assert outcome == "refused", "a worker's request to another host got an answer"
    assert sorted(recorded.foreign_requests) == sorted(ELSEWHERE), problems
    assert f"request to another host (blocked): {ELSEWHERE[1]}" in problems
    assert recorded.failed_requests == [], "a foreign request was reported twice"
    # stopped on this machine, at the dead proxy (not by a missing network)
    assert failures == {url: "net::ERR_PROXY_CONNECTION_FAILED" for url in ELSEWHERE}
