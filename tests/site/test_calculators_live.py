"""The site's calculators, live in Chromium: the numbers a reader sees are the package's.

For every calculator of the registry, on ``book/calculators.html`` once Python is ready in
the page (Pyodide in a Web Worker): 20 seeded random valid inputs (presets included) are
typed in, and every shown output must equal :func:`gpulesson.calculators.evaluate` computed
here in CPython for the same inputs, and every input a preset fills must hold the value the
registry's :func:`~gpulesson.calculators.resolve` gives. Invalid values must show the
package's own message, naming the input, with the outputs blanked. Also: the worked example
is shown before Python is ready; a lesson page starts Python only once the reader nears a
calculator, then goes live too (which pages carry the loader at all, and which calculators
the calculators page holds, ``test_built_site.py`` checks from disk); Python starts from
the build's start-up snapshot, and without it when the snapshot is damaged; the keyboard alone
drives a calculator; a wrongly configured server and a page opened from disk both say so
instead of loading forever. Boot and update times are
written to ``GL_SCREENSHOT_DIR/calculator-timings.json`` (and printed) for the report.
"""

from __future__ import annotations

import functools
import html
import http.server
import math
import os
import random
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpulesson import calculators

from .building import calculator_pack
from .harness import (
    HOST,
    RecordedPage,
    SiteServer,
    in_background,
    new_context,
    recorded_page,
    report_timings,
    require_same_package,
)

pytestmark = pytest.mark.browser

PAGE = "book/calculators.html"
SAMPLES = 20
SEED = 20240611
#: Generous: Pyodide boots in a few seconds, slower on a loaded 2-core machine.
BOOT_TIMEOUT_MS = 90_000

# ---------------------------------------------------------------------------------------
# Random valid inputs, drawn and checked here in CPython


def _draw_number(rng: random.Random, spec: calculators.Input) -> float | int:
    lo, hi = float(spec.min), float(spec.max)  # type: ignore[arg-type]
    if lo > 0 and hi / lo > 100:  # spans decades: draw the exponent
        value = math.exp(rng.uniform(math.log(lo), math.log(hi)))
    else:
        value = rng.uniform(lo, hi)
    if spec.kind == "integer":
        return min(max(int(round(value)), math.ceil(lo)), math.floor(hi))
    value = float(f"{value:.4g}")
    return min(max(value, lo), hi)


def _filled_by_presets(calc: calculators.Calculator, sample: dict[str, Any]) -> set[str]:
    """Inputs a non-custom preset of ``sample`` fills (the sample leaves them to it)."""
    filled: set[str] = set()
    for spec in calc.inputs:
        if spec.kind == "preset" and sample.get(spec.name) not in (None, calculators.CUSTOM):
            filled |= set(spec.fills.get(sample[spec.name], {}))
    return filled


def _typed(calc: calculators.Calculator, shown: dict[str, Any]) -> dict[str, Any]:
    """Shown values as a form hands them over: numbers as float, whole numbers as int."""
    typed: dict[str, Any] = {}
    for spec in calc.inputs:
        value = shown[spec.name]
        if spec.kind == "number":
            typed[spec.name] = float(value)
        elif spec.kind == "integer":
            typed[spec.name] = int(value)
        else:
            typed[spec.name] = value
    return typed


def valid_samples(name: str, count: int = SAMPLES, seed: int = SEED) -> list[dict[str, Any]]:
    """``count`` seeded random input sets that the registry accepts.

    Each is ``{"ops": [(input, text), ...] in the order a reader would set them (presets,
    then choices, then numbers), "shown": resolve(...), "text": evaluate(...)["text"],
    "warning": the spec-sheet warnings evaluate(...) gives, joined}``.
    """
    calc = calculators.get(name)
    rng = random.Random(f"{seed}-{name}")
    found: list[dict[str, Any]] = []
    for _ in range(4000):
        sample: dict[str, Any] = {}
        for spec in calc.inputs:
            if spec.kind == "preset":
                sample[spec.name] = rng.choice(spec.choice_values())
        filled = _filled_by_presets(calc, sample)  # left to the preset, as a reader would
        for spec in calc.inputs:
            if spec.name in filled or spec.kind == "preset":
                continue
            if spec.kind == "choice":
                sample[spec.name] = rng.choice(spec.choice_values())
            else:
                sample[spec.name] = _draw_number(rng, spec)
        try:
            shown = calculators.resolve(name, **sample)
        except ValueError:
            continue  # a preset without a figure for the drawn precision
        result = calculators.evaluate(name, _typed(calc, shown))
        if not result["ok"]:
            continue
        order = {"preset": 0, "choice": 1, "integer": 2, "number": 2}
        ops = [(spec.name, str(sample[spec.name]))
               for spec in sorted(calc.inputs, key=lambda s: order[s.kind])
               if spec.name in sample]
        found.append({"ops": ops, "shown": _typed(calc, shown), "text": result["text"],
                      "warning": " ".join(w["message"] for w in result.get("warnings", []))})
        if len(found) == count:
            return found
    raise AssertionError(f"{name}: only {len(found)} valid random inputs in 4000 draws")


# ---------------------------------------------------------------------------------------
# The page, booted once for the module

#: Set inputs in order (dispatching the events a reader's edit fires), wait until the
#: calculator has shown every answer, and report what it shows.
APPLY_JS = """
async ([id, samples]) => {
  const root = document.getElementById(id);
  const settled = () => new Promise((resolve, reject) => {
    const started = performance.now();
    const poll = () => {
      if (root.dataset.glPending === "0") { resolve(performance.now() - started); }
      else if (performance.now() - started > 20000) { reject(new Error(id + " never settled")); }
      else { setTimeout(poll, 2); }
    };
    poll();
  });
  const report = [];
  for (const ops of samples) {
    const started = performance.now();
    for (const [name, value] of ops) {
      const control = root.querySelector(`[name="${name}"]`);
      control.value = value;
      control.dispatchEvent(new Event(control.tagName === "SELECT" ? "change" : "input",
                                      { bubbles: true }));
    }
    await settled();
    const values = {};
    root.querySelectorAll("input[name], select[name]").forEach((c) => {
      values[c.name] = c.value;
    });
    const outputs = {};
    root.querySelectorAll("output[data-output]").forEach((o) => {
      outputs[o.dataset.output] = o.textContent;
    });
    const invalid = Array.from(root.querySelectorAll("[aria-invalid=true]")).map((c) => c.name);
    report.push({ ms: performance.now() - started, values, outputs, invalid,
                  error: root.querySelector(".gl-calc-error").textContent });
  }
  return report;
}
"""

TIMINGS: dict[str, Any] = {}


@pytest.fixture(scope="module")
def live_page(browser: Any, site_server: SiteServer) -> Iterator[RecordedPage]:
    """``book/calculators.html`` with Python ready (every calculator live)."""
    with recorded_page(browser, site_server) as recorded:
        started = time.perf_counter()
        recorded.open(PAGE, settle=False)
        page = recorded.page
        before = page.evaluate(
            "Array.from(document.querySelectorAll('.gl-calculator')).map(e => e.dataset.glState)"
        )
        TIMINGS["state_before_python"] = sorted(set(before))
        page.wait_for_function(
            "() => { const all = document.querySelectorAll('.gl-calculator');"
            " return all.length > 0 && Array.from(all).every(e => e.dataset.glState === 'live'"
            " && e.dataset.glPending === '0')"
            " || !!document.querySelector('[data-gl-state=failed]'); }",
            timeout=BOOT_TIMEOUT_MS,
        )
        TIMINGS["page_to_all_live_s"] = round(time.perf_counter() - started, 2)
        failed = page.locator("[data-gl-state=failed] .gl-calc-status")
        assert failed.count() == 0, f"the calculators did not start: {failed.first.inner_text()}"
        require_same_package(page, "GLCalculators", calculator_pack())
        yield recorded


@pytest.fixture(scope="module", autouse=True)
def _report_timings() -> Iterator[None]:
    yield
    if not TIMINGS:
        return
    report_timings("calculator", TIMINGS)


def _calculator_on(live_page: RecordedPage, name: str) -> tuple[Any, str]:
    """The Playwright page and the element id of calculator ``name`` on it."""
    page = live_page.page
    element = page.locator(f'.gl-calculator[data-calculator="{name}"]').first
    assert element.count() == 1, f"{name} is not on {PAGE}"
    return page, str(element.get_attribute("id"))


def test_page_shows_the_worked_example_before_python_is_ready(live_page: RecordedPage,
                                                             site_dir: Path) -> None:
    """Before Python is ready the page shows the worked example, computed at build time."""
    assert TIMINGS["state_before_python"] == ["loading"], TIMINGS["state_before_python"]
    source = (site_dir / PAGE).read_text(encoding="utf-8")
    for name in calculators.CALCULATORS:
        example = calculators.evaluate(name, calculators.resolve(name))
        assert example["ok"], f"{name}: the worked example is invalid"
        for out, text in example["text"].items():
            assert f'data-output="{out}" name="{out}"' in source
            assert html.escape(text) in source, f"{name}.{out}: {text!r} not in the HTML"


def test_python_in_the_worker_runs_the_installed_package(live_page: RecordedPage) -> None:
    """Every calculator of the page is live (the fixture waits for that; which calculators
    the page holds, ``test_built_site.py`` checks), on Python from the package's pack."""
    stats = live_page.page.evaluate("window.GLCalculators.stats")
    TIMINGS["boot_ms_in_worker"] = round(stats["bootMs"])
    TIMINGS["python"] = stats["info"]["python"]
    TIMINGS["pyodide"] = stats["info"]["pyodide"]
    assert stats["info"]["package"] and len(stats["info"]["sha256"]) == 64
    assert stats["info"]["snapshot"] is True, (
        "Python started without the build's start-up snapshot (see the console's warning)")
    assert stats["info"]["bytecode"] == sum(path.endswith(".py") for path in calculator_pack()[
        "files"]), "the worker wrote no byte code for the package's modules"


def test_a_broken_snapshot_still_starts_python_the_ordinary_way(
        browser: Any, site_server: SiteServer) -> None:
    """When the start-up snapshot cannot be restored (here: a damaged download), the worker
    says so in the console and starts Pyodide without it; the calculators go live."""
    with recorded_page(browser, site_server) as recorded:
        warnings: list[str] = []
        recorded.page.on("console", lambda m: warnings.append(m.text)
                         if m.type == "warning" else None)
        recorded.page.context.route(
            "**/python-snapshot.bin.gz",
            lambda route: route.fulfill(status=200, body=b"\x1f\x8b not a snapshot"))
        recorded.open(PAGE, settle=False)
        recorded.page.wait_for_function(ALL_LIVE, timeout=BOOT_TIMEOUT_MS)
        assert recorded.page.evaluate("window.GLCalculators.stats.info.snapshot") is False
        assert any("snapshot could not be used" in text for text in warnings), warnings
        recorded.assert_clean("a damaged snapshot")


@pytest.mark.parametrize("name", list(calculators.CALCULATORS))
def test_outputs_equal_the_package_for_random_inputs(live_page: RecordedPage, name: str) -> None:
    calc = calculators.get(name)
    samples = valid_samples(name)
    page, uid = _calculator_on(live_page, name)
    reports = page.evaluate(APPLY_JS, [uid, [s["ops"] for s in samples]])
    problems: list[str] = []
    for i, (sample, report) in enumerate(zip(samples, reports, strict=True)):
        if report["error"] != sample["warning"]:  # a computed result shows only its warnings
            problems.append(f"sample {i} {sample['ops']}: page shows {report['error']!r}, "
                            f"CPython warns {sample['warning']!r}")
            continue
        if report["outputs"] != sample["text"]:
            diff = {k: (report["outputs"].get(k), v) for k, v in sample["text"].items()
                    if report["outputs"].get(k) != v}
            problems.append(f"sample {i} {sample['ops']}: (page, CPython) differ: {diff}")
        for spec in calc.inputs:  # presets filled what the registry says they fill
            shown, expected = report["values"][spec.name], sample["shown"][spec.name]
            if spec.kind in ("number", "integer"):
                same = math.isclose(float(shown), float(expected), rel_tol=1e-12)
            else:
                same = shown == expected
            if not same:
                problems.append(f"sample {i}: input {spec.name} shows {shown!r}, "
                                f"registry resolves {expected!r}")
    assert not problems, f"{name}:\n  " + "\n  ".join(problems[:10])
    TIMINGS.setdefault("update_ms_per_input_set", {})[name] = round(
        statistics.median(r["ms"] for r in reports), 2)


def _numeric_input(name: str) -> calculators.Input:
    """The first number input (typing into one a preset filled turns the preset custom)."""
    return next(s for s in calculators.get(name).inputs if s.kind in ("number", "integer"))


@pytest.mark.parametrize("name", list(calculators.CALCULATORS))
def test_invalid_inputs_show_the_package_message(live_page: RecordedPage, name: str) -> None:
    calc = calculators.get(name)
    spec = _numeric_input(name)
    page, uid = _calculator_on(live_page, name)
    base = valid_samples(name, count=1, seed=SEED + 1)[0]
    too_big = spec.max * 10 if spec.max else 1e30  # type: ignore[operator]
    bad_values = [str(int(too_big) if spec.kind == "integer" else too_big), ""]
    for bad in bad_values:
        ops = [*base["ops"], (spec.name, bad)]
        report = page.evaluate(APPLY_JS, [uid, [ops]])[0]
        inputs = {**base["shown"], spec.name: (float(bad) if spec.kind == "number" else
                                               int(float(bad))) if bad else None}
        expected = calculators.evaluate(name, inputs)
        assert not expected["ok"], f"{name}: CPython accepts {spec.name}={bad!r}"
        assert report["error"] == expected["error"], (report["error"], expected["error"])
        assert spec.name in report["error"], "the message must name the input"
        assert report["invalid"] == [spec.name], f"aria-invalid on {report['invalid']}"
        assert set(report["outputs"].values()) == {"\u2014"}, report["outputs"]
    # back to valid: the message goes away and numbers come back
    report = page.evaluate(APPLY_JS, [uid, [base["ops"]]])[0]
    assert report["error"] == "" and report["invalid"] == []
    assert report["outputs"] == base["text"]
    assert all(calc.output(k) for k in report["outputs"])


def test_integers_above_2_53_reach_the_page_exactly(live_page: RecordedPage) -> None:
    """A GEMM of 262,144³ is 2 x 2^54 = 36,028,797,018,963,968 FLOPs: more than a JavaScript
    number holds exactly (2^53), so it crosses as a string, digit for digit."""
    calc = calculators.get("gemm")
    sizes = {name: str(int(calc.input(name).max)) for name in ("m", "k", "n")}
    expected_values = calculators.compute("gemm", **{k: int(v) for k, v in sizes.items()})
    flops = expected_values["flops"]
    assert isinstance(flops, int) and flops > 2**53
    page, uid = _calculator_on(live_page, "gemm")
    report = page.evaluate(APPLY_JS, [uid, [list(sizes.items())]])[0]
    last = page.evaluate("window.GLCalculators.calculators.find(c => c.name === 'gemm')"
                         ".last.result.values.flops")
    assert last == str(flops)
    shown = calculators.evaluate("gemm", _typed(calc, {
        **{k: v for k, v in report["values"].items()}}))
    assert report["outputs"] == shown["text"]


def test_update_times_are_recorded(live_page: RecordedPage) -> None:
    stats = live_page.page.evaluate("window.GLCalculators.stats")
    assert len(stats["updates"]) >= len(calculators.CALCULATORS) * SAMPLES
    TIMINGS["round_trip_ms_median"] = round(statistics.median(stats["updates"]), 2)
    TIMINGS["python_ms_median"] = round(statistics.median(stats["python"]), 3)
    TIMINGS["python_ms_p95"] = round(sorted(stats["python"])[int(0.95 * len(stats["python"]))],
                                     3)
    TIMINGS["requests"] = len(stats["updates"])
    live_page.assert_clean(PAGE)


def test_keyboard_alone_drives_a_calculator(live_page: RecordedPage) -> None:
    """Tab into the GEMM calculator, type a size, pick another GPU with the arrow keys."""
    page, uid = _calculator_on(live_page, "gemm")
    page.evaluate(APPLY_JS, [uid, [valid_samples("gemm", 1, SEED + 2)[0]["ops"]]])
    page.evaluate(APPLY_JS, [uid, [[("gpu", "H100 SXM"), ("dtype", "bf16")]]])
    # focus the element before the first input, then Tab into it
    page.locator(f"#{uid} .gl-calc-description").click()
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.name")
    assert focused == calculators.get("gemm").inputs[0].name, focused
    page.keyboard.press("Control+A")
    page.keyboard.type("2048")
    page.wait_for_function(f"document.getElementById('{uid}').dataset.glPending === '0'")
    gpu_select = page.locator(f"#{uid} select[name=gpu]")
    gpu_select.focus()
    page.keyboard.press("ArrowDown")
    page.wait_for_function(f"document.getElementById('{uid}').dataset.glPending === '0'")
    values = page.evaluate(
        f"Object.fromEntries(Array.from(document.querySelectorAll('#{uid} [name]'))"
        ".filter(c => c.tagName !== 'OUTPUT').map(c => [c.name, c.value]))"
    )
    assert values["m"] == "2048"
    assert values["gpu"] == "H100 PCIe", "ArrowDown should move from H100 SXM to the next GPU"
    calc = calculators.get("gemm")
    expected = calculators.evaluate("gemm", _typed(calc, {**values}))
    shown = page.evaluate(
        f"Object.fromEntries(Array.from(document.querySelectorAll('#{uid} output'))"
        ".map(o => [o.dataset.output, o.textContent]))"
    )
    assert shown == expected["text"]
    # NVIDIA H100 datasheet (2023): H100 PCIe, 2 TB/s of HBM2e bandwidth
    assert float(values["bandwidth"]) == 2.0, "the H100 PCIe preset fills its 2 TB/s"


@pytest.mark.parametrize("typed", ["1e309", "1e"])
def test_a_number_the_browser_cannot_read_is_not_called_empty(live_page: RecordedPage,
                                                               typed: str) -> None:
    """Audit 2026-12-06: "1e309" (beyond a double) or a half-typed "1e" leaves a number
    box's value empty, and the page said the box "needs a value". Typed with the keyboard,
    as a reader types it, the message names the box and its range and says what is wrong."""
    page, uid = _calculator_on(live_page, "gemm")
    spec = calculators.get("gemm").input("m")
    box = page.locator(f"#{uid} input[name=m]")
    box.click()
    page.keyboard.press("Control+A")
    page.keyboard.type(typed)
    assert box.evaluate("b => b.validity.badInput && b.value === ''")
    page.wait_for_function(f"document.getElementById('{uid}').dataset.glPending === '0'")
    error = page.locator(f"#{uid} .gl-calc-error").inner_text()
    assert error.startswith(f"m ({spec.label}) must be a whole number between 1 and "), error
    assert "needs a value" not in error and "not a number" in error, error
    assert box.get_attribute("aria-invalid") == "true"
    box.fill("4096")  # back to the worked example's size
    page.wait_for_function(f"document.getElementById('{uid}').dataset.glPending === '0'")
    assert page.locator(f"#{uid} .gl-calc-error").inner_text() == ""
    live_page.assert_clean(PAGE)


# ---------------------------------------------------------------------------------------
# When the calculator cannot start, it says so


class _WrongTypes(http.server.SimpleHTTPRequestHandler):
    """A misconfigured static host: some files served as plain bytes."""

    wrong: tuple[str, ...] = ()

    def guess_type(self, path: Any) -> str:
        if str(path).endswith(self.wrong):
            return "application/octet-stream"
        return "text/javascript" if str(path).endswith((".js", ".mjs")) else super().guess_type(
            path)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass


@pytest.mark.parametrize(("wrong", "reason"), [
    (".mjs", "Failed to fetch dynamically imported module"),  # fails at once
    (".wasm", "no answer from Python after 5 s"),             # Pyodide hangs: the timeout
])
def test_a_misconfigured_server_gives_a_clear_message(browser: Any, site_dir: Path,
                                                      wrong: str, reason: str) -> None:
    handler = functools.partial(type("Wrong", (_WrongTypes,), {"wrong": (wrong,)}),
                                directory=str(site_dir))
    with in_background(http.server.ThreadingHTTPServer((HOST, 0), handler)) as server:
        context = new_context(browser, "light")
        try:
            context.add_init_script("window.GL_CALC_TIMEOUT_MS = 5000;")
            page = context.new_page()
            page.goto(f"http://{HOST}:{server.server_address[1]}/{PAGE}")
            page.wait_for_selector("[data-gl-state=failed]", timeout=30_000)
            status = page.locator(".gl-calc-status").first.inner_text()
            assert "could not start" in status and "application/wasm" in status, status
            assert reason in status, status
            # the worked example is still there
            example = calculators.evaluate("gemm", calculators.resolve("gemm"))["text"]
            shown = page.locator('.gl-calculator[data-calculator="gemm"] output').first.inner_text()
            assert shown == next(iter(example.values()))
        finally:
            context.close()


def test_a_page_opened_from_disk_says_to_serve_the_site(browser: Any, site_dir: Path) -> None:
    context = new_context(browser, "light")
    try:
        page = context.new_page()
        page.goto((site_dir / PAGE).resolve().as_uri())
        page.wait_for_selector("[data-gl-state=file]", timeout=15_000)
        status = page.locator(".gl-calc-status").first.inner_text()
        assert "make serve" in status, status
    finally:
        context.close()


# ---------------------------------------------------------------------------------------
# A lesson's calculators, and screenshots for the report (GL_SCREENSHOT_DIR)

LESSON = "notebooks/memory_what_fits.html"
ALL_LIVE = ("Array.from(document.querySelectorAll('.gl-calculator')).every("
            "e => e.dataset.glState === 'live' && e.dataset.glPending === '0')")


def _shoot(page: Any, name: str, locator: Any = None) -> None:
    folder = os.environ.get("GL_SCREENSHOT_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        target = locator if locator is not None else page
        target.screenshot(path=str(Path(folder) / f"{name}.png"))


def _example_ops(name: str) -> list[tuple[str, str]]:
    """The worked example as a reader would set it: presets, then what they do not fill."""
    calc = calculators.get(name)
    shown = calculators.resolve(name)
    filled = _filled_by_presets(calc, shown)
    order = {"preset": 0, "choice": 1, "integer": 2, "number": 2}
    return [(spec.name, str(shown[spec.name]))
            for spec in sorted(calc.inputs, key=lambda s: order[s.kind])
            if spec.kind == "preset" or spec.name not in filled]


def test_screenshots_light(live_page: RecordedPage) -> None:
    page, uid = _calculator_on(live_page, "kv_cache")
    report = page.evaluate(APPLY_JS, [uid, [_example_ops("kv_cache")]])[0]
    example = calculators.evaluate("kv_cache", calculators.resolve("kv_cache"))
    assert report["outputs"] == example["text"], "back at the worked example"
    page.evaluate("window.scrollTo(0, 0)")
    _shoot(page, "calculators-page-light")
    _shoot(page, "calculator-kv-cache-light",
           page.locator('.gl-calculator[data-calculator="kv_cache"]'))
    lesson = page.context.new_page()  # same context: the calculators page stays open
    try:
        lesson.goto(f"{live_page.origin}/{LESSON}", wait_until="networkidle")
        _shoot(lesson, "lesson-light")
    finally:
        lesson.close()


def test_a_lesson_goes_live_near_its_calculator_in_dark_mode(
        site_page_dark: RecordedPage, site_dir: Path) -> None:
    """On a lesson, Python starts only when the reader nears a calculator; then the
    lesson's calculators go live like the calculators page's (and dark mode for the report)."""
    assert 'class="gl-calculator"' in (site_dir / LESSON).read_text(encoding="utf-8")
    recorded = site_page_dark
    page = recorded.page
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    recorded.open(LESSON)
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    _shoot(page, "lesson-dark")
    first = page.locator(".gl-calculator").first
    if first.evaluate("e => e.getBoundingClientRect().top") > 2 * 900:
        # far below the first screen: nothing of Pyodide is loaded yet
        assert not [u for u in requests if "_pyodide" in u], "Pyodide loaded before needed"
    first.scroll_into_view_if_needed()
    page.wait_for_function(ALL_LIVE, timeout=BOOT_TIMEOUT_MS)
    assert any("pyodide.asm.wasm" in u for u in requests)
    name = first.get_attribute("data-calculator")
    shown = page.evaluate(
        "Array.from(document.querySelector('.gl-calculator').querySelectorAll('output'))"
        ".map(o => [o.dataset.output, o.textContent])")
    values = page.evaluate(
        "Object.fromEntries(Array.from(document.querySelector('.gl-calculator')"
        ".querySelectorAll('input[name], select[name]')).map(c => [c.name, c.value]))")
    expected = calculators.evaluate(str(name), _typed(calculators.get(str(name)), values))
    assert dict(shown) == expected["text"], "the lesson's calculator disagrees with CPython"
    first.evaluate("e => e.scrollIntoView({block: 'start'})")
    _shoot(page, "lesson-calculator-dark")
    recorded.assert_clean(LESSON)
    recorded.open(PAGE, settle=False)
    page.wait_for_function(ALL_LIVE, timeout=BOOT_TIMEOUT_MS)
    _shoot(page, "calculators-page-dark")
    _shoot(page, "calculator-kv-cache-dark",
           page.locator('.gl-calculator[data-calculator="kv_cache"]'))
    recorded.assert_clean(PAGE)
