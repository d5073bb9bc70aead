"""What a reader of the built site waits for, measured in Chromium: bytes and seconds.

For a few pages of a built site (default: a lesson with calculators, its exercise page,
the calculators page, the home page) it opens each page twice in one browser profile,
cold (a new browser profile, its cache empty) and warm (the same profile again: the
browser's HTTP cache on disk), and prints

1. the bytes transferred, by resource type (script, document, JSON/fetch, wasm, font,
   image, stylesheet), the number of requests, and any URL fetched twice in one load;
2. the first contentful paint, and the load event;
3. on a page with calculators: the seconds until the first calculator is live and shows
   a result computed in the browser (the first one is scrolled into view on load);
4. on an exercise page: the seconds until the first numeric exercise is live, and until
   an answer typed into it is checked; where the page has a code exercise, a code check,
   a pause of a few seconds, and the seconds from the next check's click to its feedback
   (the page replaces its Python after every code check);
5. any request that leaves the site (it is blocked, and counted: there should be none).

Run: ``.venv/bin/python benchmarks/bench_site.py --dir _build/html`` (it serves the folder
itself, as ``make serve`` does, and counts the bytes of every reply: 304 replies are the
warm cache revalidating). Numbers depend on the machine: compare two builds in one run
(``--dir A --dir B``, pages interleaved) as ratios. ``--throttle 20 40`` loads over a
20 Mbit/s link with 40 ms round trips (Chromium applies it to the page's Web Worker too:
Pyodide's download is slowed). Speed goals live here, printed, never in timed asserts.

Measured on 2026-12-06 (2 shared cores, main's build): a lesson page with calculators moves
23 MB on a first visit (Pyodide's wasm 9.6 MB, its start-up snapshot 6.2 MB and standard
library 2.5 MB, the course package 0.95 MB as a zip), nothing on a second (every file
cached); its first calculator is live 2-4 s after the page opens, cached or not (Python's
start, mostly the import of the course package, not the download); 13-15 s on a 20 Mbit/s
link. Its exercise page, opened next, moves 1.2 MB (the rest of the exercises' package
0.73 MB) and is live 1-1.3 s after it opens on that link.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import io
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

DEFAULT_PAGES = [
    "notebooks/planning_dashboard.html",
    "notebooks/inference_and_kv_cache.html",
    "exercises/planning_dashboard.html",
    "book/calculators.html",
    "book/intro.html",
]
CHROMIUM = "/usr/bin/chromium"
# as tests/site/harness.py: a dead proxy stops any request to another host (127.0.0.1 is
# never proxied), with no route handler, which would turn the browser's cache off
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
         "--proxy-server=http://127.0.0.1:9"]
TIMEOUT_MS = 120_000
#: How long a learner reads the feedback of a code check before the next check.
READING_S = 3


def kind(path: str) -> str:
    """A reply's class for the byte table, by its file name."""
    for suffix, name in ((".wasm", "wasm"), (".bin.gz", "python"), (".zip", "python"),
                         (".whl", "python"), (".json", "json"), (".js", "script"),
                         (".mjs", "script"), (".css", "style"), (".woff", "font"),
                         (".woff2", "font"), (".ttf", "font"), (".png", "image"),
                         (".svg", "image"), (".html", "html")):
        if path.endswith(suffix):
            return name
    return "other"


#: A page and module worker served beside the site (``/__bench/``) that start Python as
#: scripts/site_js/python-worker.js does, timing each step: where a calculator's wait goes.
PROBE_WORKER = """
const T = {}; let t0 = performance.now();
const mark = (k) => { const n = performance.now(); T[k] = Math.round(n - t0); t0 = n; };
const site = new URL("../", self.location.href).href;
const manifest = await (await fetch(site + "_pyodide/manifest.json")).json();
const py = site + manifest.path + "/";
const gz = new Uint8Array(await (await fetch(site + manifest.snapshot)).arrayBuffer());
mark("fetch snapshot");
const mem = new Uint8Array(await new Response(new Blob([gz]).stream()
  .pipeThrough(new DecompressionStream("gzip"))).arrayBuffer());
mark("gunzip snapshot");
const { loadPyodide } = await import(py + "pyodide.mjs");
const pyodide = await loadPyodide({ indexURL: py, _loadSnapshot: mem, stdout: () => {} });
mark("restore Python (wasm, stdlib)");
const zip = new Uint8Array(await (await fetch(site + "_lib/course/gpulesson-pack.zip"))
  .arrayBuffer());
mark("fetch course pack");
const b = "/home/pyodide/site-packages-gl";  // sources and .pyc files, as the worker has
pyodide.unpackArchive(zip, "zip", { extractDir: b });
const pack = JSON.parse(pyodide.FS.readFile(`${b}/gl-pack.json`, { encoding: "utf8" }));
mark(`unpack pack (${pack.files.length} files, ${pack.bytecode.length} .pyc)`);
pyodide.runPython(`import sys, glob\\nsys.path.insert(0, "${b}")\\n` +
  `for f in glob.glob("${b}/**/*.py", recursive=True):\\n` +
  `    compile(open(f).read(), f, "exec")`);
mark("compile the pack's source (alone)");
pyodide.runPython(`import ${pack.entry}`);
mark("import " + pack.entry + (pack.bytecode.length ? " (from .pyc)" : " (compiles again)"));
postMessage(T);
"""
PROBE_PAGE = """<!doctype html><title>probe</title><script>
const w = new Worker("probe-worker.js", {type: "module"});
w.onmessage = (e) => { window.RESULT = e.data; };
w.onerror = (e) => { window.RESULT = {error: String(e.message)}; };
</script>"""
PROBES = {"/__bench/probe.html": ("text/html", PROBE_PAGE),
          "/__bench/probe-worker.js": ("text/javascript", PROBE_WORKER)}


class Log:
    """What the server sent: (path, status, body bytes) per request, in order."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, int, int]] = []
        self.lock = threading.Lock()

    def mark(self) -> int:
        with self.lock:
            return len(self.entries)

    def since(self, mark: int) -> list[tuple[str, int, int]]:
        with self.lock:
            return list(self.entries[mark:])


@contextlib.contextmanager
def served(directory: str, port: int = 0) -> Iterator[tuple[str, Log]]:
    """Serve ``directory`` as ``make serve`` does, counting the bytes of every reply."""
    import serve_site

    log = Log()

    class Counting(serve_site.SiteHandler):
        def send_head(self) -> Any:
            probe = PROBES.get(self.path.split("?")[0])
            if probe:
                body = probe[1].encode()
                self.send_response(200)
                self.send_header("Content-Type", probe[0])
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                return io.BytesIO(body)
            self._gl_code = 0
            body = super().send_head()  # sends the status line (log_request) and headers
            size = 0
            if body is not None and self._gl_code == 200:
                with contextlib.suppress(OSError, AttributeError):
                    size = os.fstat(body.fileno()).st_size
            with log.lock:
                log.entries.append((self.path.split("?")[0], self._gl_code, size))
            return body

        def log_request(self, code: Any = "-", size: Any = "-") -> None:
            self._gl_code = int(code)

        def log_message(self, *args: Any) -> None:
            pass

    handler = functools.partial(Counting, directory=directory)
    server = serve_site.SiteHTTPServer(("127.0.0.1", port), handler)
    with serve_site.in_background(server):
        yield f"http://127.0.0.1:{server.server_address[1]}/", log


def _seconds_until(page: Any, started: float, condition: str) -> float:
    """Wait until the JavaScript ``condition`` holds in ``page``; the seconds since
    ``started`` (a ``time.perf_counter()`` reading)."""
    page.wait_for_function(condition, timeout=TIMEOUT_MS)
    return time.perf_counter() - started


def measure(context: Any, base: str, log: Log, path: str,
            throttle: tuple[float, float] | None = None) -> dict[str, Any]:
    """Open ``base + path`` in a fresh page of ``context``; what it loaded and how long.

    ``throttle``: (Mbit/s, round trip in ms) of a reader's link (DevTools' network
    emulation)."""
    page = context.new_page()
    if throttle:
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        rate = throttle[0] * 1e6 / 8
        cdp.send("Network.emulateNetworkConditions", {
            "offline": False, "latency": throttle[1], "downloadThroughput": rate,
            "uploadThroughput": rate})
    outside: list[str] = []
    page.on("request", lambda request: outside.append(request.url)
            if not request.url.startswith((base, "data:", "blob:")) else None)
    result: dict[str, Any] = {"page": path}
    mark = log.mark()
    started = time.perf_counter()
    page.goto(base + path, wait_until="load", timeout=TIMEOUT_MS)
    result["load_s"] = time.perf_counter() - started
    result["fcp_s"] = page.evaluate(
        "() => { const e = performance.getEntriesByName('first-contentful-paint')[0];"
        " return e ? e.startTime / 1000 : null; }")
    calculators = page.locator(".gl-calculator[data-calculator]")
    if calculators.count():
        calculators.first.scroll_into_view_if_needed()
        result["calc_live_s"] = _seconds_until(
            page, started,
            "() => { const c = document.querySelector('.gl-calculator[data-calculator]');"
            " return c && ((c.dataset.glState === 'live' && c.dataset.glPending === '0')"
            " || c.dataset.glState === 'failed'); }")
        result["state"] = calculators.first.get_attribute("data-gl-state")
        result["boot_ms"] = page.evaluate("() => window.GLCalculators.stats.bootMs")
    numeric = page.locator('[data-exercise][data-kind="numeric"]')
    if numeric.count():
        block = numeric.first
        block.scroll_into_view_if_needed()
        result["exercise_live_s"] = _seconds_until(
            page, started,
            "() => { const e = document.querySelector('[data-exercise][data-kind=numeric]');"
            " return e && (e.dataset.state === 'live' || e.dataset.state === 'failed'); }")
        result["state"] = block.get_attribute("data-state")
        block.locator("[data-answer]").fill("1")
        block.locator("button[data-check]").click()
        result["exercise_checked_s"] = _seconds_until(
            page, started,
            "() => { const f = document.querySelector('[data-exercise][data-kind=numeric]"
            " [data-feedback]'); return f && f.dataset.status && !f.hasAttribute('aria-busy'); }")
        result["boot_ms"] = page.evaluate("() => window.GLExercises.stats.bootMs")
        code = page.locator('[data-exercise][data-kind="code"]')
        if code.count():
            result["after_code_s"] = check_after_code(page, code.first, block)
    page.wait_for_timeout(1000)  # let late requests (fonts, idle work) finish
    page.close()
    entries = log.since(mark)
    sizes: collections.Counter[str] = collections.Counter()
    counts: collections.Counter[str] = collections.Counter()
    for url, status, size in entries:
        sizes[kind(url)] += size
        if status == 200:
            counts[url] += 1
    result["bytes"] = dict(sizes)
    result["total_bytes"] = sum(sizes.values())
    result["requests"] = len(entries)
    result["not_modified"] = sum(1 for _, status, _ in entries if status == 304)
    result["twice"] = sorted(u for u, n in counts.items() if n > 1)
    result["outside"] = outside
    result["largest"] = sorted(((size, url) for url, _, size in entries), reverse=True)[:12]
    return result


def _feedback(page: Any, block: Any, before: int) -> None:
    """Wait until ``block``'s checker has answered for the ``before``+1-th time."""
    ref = block.get_attribute("data-exercise")
    page.wait_for_function(
        "([ref, n]) => { const f = document.querySelector(`[data-exercise='${ref}']"
        " [data-feedback]`); return f && f.dataset.status && !f.hasAttribute('aria-busy')"
        " && window.GLExercises.stats.roundTrips.length > n; }",
        arg=[ref, before], timeout=TIMEOUT_MS)


def check_after_code(page: Any, code: Any, numeric: Any) -> float:
    """A code check (after which the page replaces its Python worker), a reader's pause of
    :data:`READING_S`, then a numeric answer checked: the seconds from its click to its
    feedback (the wait a learner sees on every check that follows a code check)."""
    code.scroll_into_view_if_needed()
    code.locator("button[data-check]").click(trial=True, timeout=TIMEOUT_MS)
    code.locator("[data-answer]").evaluate("(e, text) => { e.value = text; }",
                                           "def answer():\n    return 0\n")
    before = page.evaluate("() => window.GLExercises.stats.roundTrips.length")
    code.locator("button[data-check]").dispatch_event("click")
    _feedback(page, code, before)
    page.wait_for_timeout(READING_S * 1000)
    numeric.scroll_into_view_if_needed()
    numeric.locator("[data-answer]").fill("2")
    before = page.evaluate("() => window.GLExercises.stats.roundTrips.length")
    clicked = time.perf_counter()
    numeric.locator("button[data-check]").click()
    _feedback(page, numeric, before)
    return time.perf_counter() - clicked


def row(label: str, r: dict[str, Any]) -> str:
    fmt = lambda v: "-" if v is None else f"{v:6.2f}"  # noqa: E731
    return (f"{label:<44} {r['total_bytes'] / 1e6:7.2f} MB {r['requests']:4d} req "
            f"fcp {fmt(r['fcp_s'])} s  load {fmt(r['load_s'])} s  "
            f"calc {fmt(r.get('calc_live_s'))} s  ex-live {fmt(r.get('exercise_live_s'))} s  "
            f"checked {fmt(r.get('exercise_checked_s'))} s  "
            f"after-code {fmt(r.get('after_code_s'))} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", action="append", required=True,
                        help="a built site's folder (repeat to compare sites in one run)")
    parser.add_argument("--pages", nargs="*", default=DEFAULT_PAGES)
    parser.add_argument("--rounds", type=int, default=1, help="cold+warm rounds per page")
    parser.add_argument("--largest", action="store_true", help="list each page's largest files")
    parser.add_argument("--throttle", nargs=2, type=float, metavar=("MBIT_S", "RTT_MS"),
                        help="a reader's link for the page's requests, e.g. 20 40")
    parser.add_argument("--python-phases", action="store_true",
                        help="also time each step of Python's start in a worker")
    parser.add_argument("--chromium", default=CHROMIUM)
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with contextlib.ExitStack() as stack:
        sites = [stack.enter_context(served(d)) for d in args.dir]
        bases = [base for base, _ in sites]
        p = stack.enter_context(sync_playwright())
        results: dict[tuple[str, str, str], list[dict[str, Any]]] = collections.defaultdict(list)
        for _ in range(args.rounds):
            for path in args.pages:
                for index, (base, log) in enumerate(sites):  # interleaved: a busy machine
                    # slows both alike. A profile of its own on disk, as a reader's browser
                    # has: an incognito context's memory cache keeps no file over a few MB
                    # (Pyodide's 9.6 MB wasm would be fetched again on every "warm" load).
                    with tempfile.TemporaryDirectory(prefix="bench-site-") as profile:
                        context = p.chromium.launch_persistent_context(
                            profile, executable_path=args.chromium, args=FLAGS)
                        try:
                            for state in ("cold", "warm"):
                                r = measure(context, base, log, path, args.throttle)
                                results[(base, path, state)].append(r)
                                print(row(f"{state} {path} [{index}]", r), flush=True)
                        finally:
                            context.close()
        if args.python_phases:
            print("\nPython's start in a worker, step by step (ms; first cold, then warm):")
            for index, (base, _) in enumerate(sites):
                with tempfile.TemporaryDirectory(prefix="bench-site-") as profile:
                    context = p.chromium.launch_persistent_context(
                        profile, executable_path=args.chromium, args=FLAGS)
                    try:
                        for attempt in range(1 + args.rounds):
                            page = context.new_page()
                            page.goto(base + "__bench/probe.html")
                            page.wait_for_function("() => window.RESULT", timeout=TIMEOUT_MS)
                            phases = page.evaluate("window.RESULT")
                            page.close()
                            total = sum(v for v in phases.values() if isinstance(v, int))
                            print(f"  [{index}] {'cold' if attempt == 0 else 'warm'}: "
                                  + ", ".join(f"{k} {v}" for k, v in phases.items())
                                  + f"; total {total}")
                    finally:
                        context.close()
        print("\nBytes by type (first round):")
        for (base, path, state), rs in results.items():
            r = rs[0]
            parts = ", ".join(f"{k} {v / 1e3:.0f} kB" for k, v in
                              sorted(r["bytes"].items(), key=lambda kv: -kv[1]) if v)
            print(f"  {state} {path} [{bases.index(base)}]: {parts or 'nothing'}")
            for url in r["twice"]:
                print(f"      fetched twice: {url}")
            for url in r["outside"]:
                print(f"      LEFT THE SITE (blocked): {url}")
            if args.largest and state == "cold":
                for size, url in r["largest"]:
                    print(f"      {size / 1e3:8.0f} kB  {url}")
        if len(bases) > 1:
            print("\nRatios, site [1] / site [0] (medians over rounds):")
            for path in args.pages:
                for state in ("cold", "warm"):
                    a, b = results[(bases[0], path, state)], results[(bases[1], path, state)]
                    out = []
                    for key in ("total_bytes", "fcp_s", "load_s", "calc_live_s",
                                "exercise_live_s", "exercise_checked_s", "after_code_s"):
                        va = [r[key] for r in a if r.get(key)]
                        vb = [r[key] for r in b if r.get(key)]
                        if va and vb:
                            out.append(f"{key} {statistics.median(vb) / statistics.median(va):.2f}")
                    print(f"  {state} {path}: " + ", ".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
