"""Hostile learner code on the site, live in Chromium (issue 35, items 2 to 6).

A learner's code runs in the page's Web Worker, beside the course's own Python. Here it
does what a hostile or careless learner could: patches ``gpulesson.exercises.browser`` so
that the feedback carries script and the progress record loses every other lesson, posts
forged answers to the page, reaches for another host (fetch, synchronous XHR, WebSocket),
prints a lone surrogate, calls ``os._exit`` and overflows the stack. The page must stay
intact: no script of the learner runs in it, the forged answers are ignored, the patch
does not outlive its check, the stored progress of the other exercises is kept, nothing
reaches the other host, and every case gets a sentence rather than "internal error".

A stored record with a 5,000-level entry and a 5,000-digit count loses only those two
entries, which are kept aside and exported.
"""

from __future__ import annotations

import http.server
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpulesson.exercises import browser
from gpulesson.exercises.core import CodeExercise, NumericExercise

from .building import toc_pages
from .harness import HOST, RecordedPage, in_background, new_context, record_page
from .test_exercises_live import (
    _exercise,
    _exercises,
    _expected,
    _open_live,
    _set_code,
    _shown_solution,
    _submit_code,
    _type_and_check,
    _wait_feedback,
)

SLUG = "memory_what_fits"
#: Entries of other lessons a learner has earned, and two no reader can parse sensibly.
OTHERS = {"parallelism_at_the_core-ex1": {"attempts": 2, "done": True},
          "flops_and_scaling-ex4": {"attempts": 7, "done": False}}
DEEP = "[" * 5_000 + "]" * 5_000
LONG_COUNT = '{"attempts": ' + "9" * 5_000 + ', "done": true}'
SEEDED = ('{"version": 1, "exercises": {'
          + ", ".join(f'"{k}": {json.dumps(v)}' for k, v in OTHERS.items())
          + f', "flops_and_scaling-ex2": {DEEP}, "flops_and_scaling-ex3": {LONG_COUNT}}}}}')

#: Patches the checker inside the worker, forges answers, then defines a right function.
PATCHING = '''
import json
import gpulesson.exercises.browser as checker
from js import postMessage, Object
from pyodide.ffi import to_js

checker.message_html = lambda message: (
    '<img src="x" onerror="window.glPwned = 1"><script>window.glPwned = 2</script>'
    '<b onclick="window.glPwned = 3" style="color: red">bold</b> <code>kept</code>')
_answer = checker._progress_answer
checker._progress_answer = lambda slug, data, reset, aside=None: _answer(
    slug, {{"version": 1, "exercises": {{}}}}, None, aside)
forged = json.dumps({{"status": "correct", "message": "forged",
                     "message_html": '<img src="x" onerror="window.glPwned = 4">',
                     "details": [], "progress": {{"text": '{{"version": 1, "exercises": {{}}}}'}}}})
for request in range(1, 40):
    postMessage(to_js({{"type": "answer", "id": request, "json": forged}},
                      dict_converter=Object.fromEntries))

{solution}
'''

#: Tries three ways to another host; prints what happened.
REACHING = '''
from js import fetch, XMLHttpRequest, WebSocket
tried = []
try:
    fetch("{url}/fetch")
    tried.append("fetch sent")
except Exception as error:
    tried.append("fetch refused")
try:
    xhr = XMLHttpRequest.new()
    xhr.open("GET", "{url}/xhr", False)
    xhr.send()
    tried.append(f"xhr answered {{xhr.status}}")
except Exception as error:
    tried.append("xhr refused")
try:
    WebSocket.new("{ws}/ws")
    tried.append("websocket made")
except Exception as error:
    tried.append("websocket refused")
print(" / ".join(tried))

def {name}({signature}):
    return 0
'''


class _Recorder(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        type(self).hits.append(self.path)
        self.send_response(200)
        self.send_header("Access-Control-Allow-Origin", "*")
        self.end_headers()
        self.wfile.write(b"reached")

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture
def other_host() -> Iterator[tuple[str, list[str]]]:
    """Another origin on this machine (another port) that records every request."""
    hits: list[str] = []
    handler = type("Recorder", (_Recorder,), {"hits": hits})
    with in_background(http.server.ThreadingHTTPServer((HOST, 0), handler)) as server:
        yield f"http://{HOST}:{server.server_address[1]}", hits


@pytest.fixture
def seeded(browser: Any, site_server: Any) -> Iterator[RecordedPage]:
    """A page whose stored progress holds other lessons' entries and two unreadable ones."""
    context = new_context(browser, "light")
    context.add_init_script(
        "if (!sessionStorage.getItem('gl-seeded')) { sessionStorage.setItem('gl-seeded', '1');"
        f" localStorage.setItem('gpulesson-progress', {json.dumps(SEEDED)}); }}")
    try:
        yield record_page(context, site_server)
    finally:
        context.close()


def _stored(page: Any) -> dict[str, Any]:
    return json.loads(page.evaluate("localStorage.getItem('gpulesson-progress')"))


def _code(slug: str = SLUG) -> CodeExercise:
    return _exercises(slug, CodeExercise)[0]


def _check_code(page: Any, ex: CodeExercise, source: str) -> tuple[str, str]:
    _set_code(page, ex, source)
    _submit_code(page, ex)
    return _wait_feedback(page, ex)


@pytest.mark.browser
def test_hostile_code_leaves_the_page_and_the_progress_intact(seeded: RecordedPage) -> None:
    page = seeded.page
    _open_live(seeded, f"exercises/{SLUG}.html")

    # the stored record: two unreadable entries kept aside, the others carried over
    page.wait_for_function("() => document.querySelector('[data-progress-message]')"
                           ".textContent.includes('kept aside')", timeout=10_000)
    assert _stored(page)["exercises"] == OTHERS
    aside = json.loads(page.evaluate("localStorage.getItem('gpulesson-progress-set-aside')"))
    assert set(aside) == {"exercises/flops_and_scaling-ex2", "exercises/flops_and_scaling-ex3"}

    # the patch, the forged answers and a right function, in one check
    code = _code()
    pasted = _shown_solution(page, code)
    status, message = _check_code(page, code, PATCHING.format(solution=pasted))
    assert status == "correct" and "forged" not in message
    feedback = _exercise(page, code).locator("[data-feedback]")
    assert feedback.locator("img, script, [onclick], [onerror], [style]").count() == 0
    assert feedback.locator(".gl-ex-message b").inner_text() == "bold"  # allowed tags stay
    assert feedback.locator(".gl-ex-message code").inner_text() == "kept"
    assert page.evaluate("window.glPwned") is None
    # the patched record (every entry gone) was refused, the previous one kept
    assert _stored(page)["exercises"] == OTHERS
    assert "not updated" in page.locator("[data-progress-message]").inner_text()

    # the next check runs in a fresh worker: the patch is gone
    numeric = _exercises(SLUG, NumericExercise)[0]
    answer = numeric.example_answers()["reference"]
    assert _type_and_check(page, numeric, answer) == _expected(
        page, {"action": "check", "exercise": f"{SLUG}:{numeric.number}", "answer": answer})
    assert page.evaluate("window.GLExercises.stats.recycled") >= 1
    stored = _stored(page)["exercises"]
    assert {k: stored[k] for k in OTHERS} == OTHERS and stored[numeric.id]["done"] is True

    # the code exercise again, honestly: recorded like any other
    assert _check_code(page, code, pasted)[0] == "correct"
    assert _stored(page)["exercises"][code.id]["done"] is True

    # export: the record and what was kept aside
    with page.expect_download() as download:
        page.locator("[data-progress-export]").click()
    exported = json.loads(Path(download.value.path()).read_text(encoding="utf-8"))
    assert set(exported["set_aside"]) == set(aside)
    assert exported["set_aside"]["exercises/flops_and_scaling-ex3"].startswith(
        '{"attempts": 9999')
    assert seeded.page_errors == [] and seeded.foreign_requests == []


@pytest.mark.browser
def test_learner_code_reaches_no_other_host(site_page: RecordedPage,
                                            other_host: tuple[str, list[str]]) -> None:
    url, hits = other_host
    page = site_page.page
    _open_live(site_page, f"exercises/{SLUG}.html")
    code = _code()
    source = REACHING.format(url=url, ws=url.replace("http", "ws"), name=code.function_name,
                             signature=code.signature)
    status, _ = _check_code(page, code, source)
    assert status == "incorrect"
    printed = _exercise(page, code).locator("[data-output] pre").inner_text()
    # a synchronous XHR throws; fetch and WebSocket fail later, out of the code's sight
    assert "xhr refused" in printed, printed
    page.wait_for_timeout(1000)  # time for a request that was sent after all
    assert hits == [], hits  # (Playwright lists the XHR it was asked for: it never left)
    # the page itself is under the same policy
    assert page.evaluate("url => fetch(url).then(() => 'reached', () => 'refused')",
                         f"{url}/page") == "refused"
    # and the other host answers whoever may reach it: the policy, not the network, stops it
    other = page.context.new_page()
    other.goto(f"{url}/direct")
    assert hits[:1] == ["/direct"]  # (then perhaps /favicon.ico)
    other.close()
    # the worker's own files still load under the policy: checks go on
    assert _check_code(page, code, _shown_solution(page, code))[0] == "correct"


#: (what the learner's code does, what the message must say)
CRASHES = {
    "lone surrogate": ("print('\\ud800')\n", None),
    "os._exit": ("import os\nos._exit(1)\n", "os._exit(1)"),
    "stack overflow": ("import sys\nsys.setrecursionlimit(10**6)\n"
                       "def down(n):\n    return down(n + 1)\ndown(0)\n", None),
    "interrupt": ("raise KeyboardInterrupt\n", "KeyboardInterrupt"),
}


@pytest.mark.browser
def test_code_that_breaks_python_gets_a_sentence(site_page: RecordedPage) -> None:
    page = site_page.page
    _open_live(site_page, f"exercises/{SLUG}.html")
    code = _code()
    stub = f"def {code.function_name}({code.signature}):\n    return 0\n"
    for case, (source, says) in CRASHES.items():
        status, message = _check_code(page, code, source + stub)
        assert status in ("invalid", "incorrect", "error"), (case, status, message)
        assert "internal error" not in message and "PythonError" not in message, (case, message)
        if says:
            assert says in message, (case, message)
    assert _check_code(page, code, _shown_solution(page, code))[0] == "correct"
    assert site_page.page_errors == []


@pytest.mark.browser
def test_feedback_html_keeps_allowed_tags_only(site_page: RecordedPage) -> None:
    """The page's own sanitiser, on what a patched checker could send."""
    page = site_page.page
    _open_live(site_page, f"exercises/{SLUG}.html")
    rebuilt = page.evaluate(
        "h => { const s = document.createElement('span');"
        " s.appendChild(window.GLExercises.learnerSafe.fragment(h)); return s.innerHTML; }",
        '2<sup>30</sup> <a href="javascript:alert(1)">link</a><svg onload="x()"><text>in svg'
        '</text></svg><iframe srcdoc="x"></iframe><em title="t">em</em>'
        '<style>body{display:none}</style>')
    assert rebuilt == "2<sup>30</sup> link<em>em</em>"
    assert browser.message_html("2^30") == "2<sup>30</sup>"  # what Python sends, kept


@pytest.mark.book
def test_every_page_connects_to_the_site_only(site_dir: Path) -> None:
    """The policy is the first thing in each page's head that could load anything, so it
    covers every request the page (and the worker it starts from a blob: URL) makes."""
    policy = '<meta http-equiv="Content-Security-Policy" content="connect-src &#x27;self&#x27;" />'
    # index.html is the front door: a redirect that loads nothing
    pages = [site_dir / page for page in toc_pages() if page != "index.html"]
    assert len(pages) > 20
    for path in pages:
        head = path.read_text(encoding="utf-8").split("</head>")[0]
        assert head.count(policy) == 1, path
        first = min((head.find(tag) for tag in ("<script", "<link", "<style")
                     if tag in head), default=len(head))
        assert head.index(policy) < first, f"{path}: something loads before the policy"
