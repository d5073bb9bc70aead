"""The exercises, live in Chromium on the built site served from 127.0.0.1, as a learner
uses them.

On two lessons, the whole loop of one learner (``test_a_learner_works_through_a_lesson``):
a declared mistake gets its hint, nonsense is "invalid", the reference is "correct" and
opens the worked solution, a choice is checked, a prediction is committed and then set
against the build's measurement (hidden until then), the model solution of a code
exercise (pasted from the page's worked solution) is "correct", an endless loop is
"timeout" and the next submission, once Python has restarted, is "correct" again; after a
reload the progress is still there. Every answer is the one the installed package gives
for the same input (:func:`gpulesson.exercises.browser.handle`), message for message. The
page records no console error, no failed request and no request to another host.

Also: every exercise page goes live, every exercise on it, with axe-core finding nothing
serious once the controls show; the keyboard alone answers, asks for a hint and writes,
checks and leaves a code editor; an answer typed while Python starts is checked once it
is ready; a corrupt progress record is reset with a message; export gives the notebook's
file and a notebook's file imports; a page opened from disk says why it cannot check.
The seconds from page open to the first exercise live, the exercises live per page and
the round trip of one check are written to ``GL_SCREENSHOT_DIR/exercise-timings.json``
(and printed): figures for the report, never timed asserts.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpulesson.exercises import browser, progress
from gpulesson.exercises.catalogue import available_lessons, lesson_module
from gpulesson.exercises.core import ChoiceExercise, CodeExercise, NumericExercise, PredictExercise

from .axe import assert_accessible
from .building import exercise_pack, exercises_left_static
from .harness import (
    RecordedPage,
    new_context,
    record_page,
    report_timings,
    require_same_package,
)

pytestmark = pytest.mark.browser

#: Generous: Pyodide starts in a few seconds, slower on a loaded 2-core machine.
LIVE_TIMEOUT_MS = 90_000
#: The learner's time limit in these tests (the site's default is 10 s). The endless loop
#: burns a core until it is stopped; the model solutions answer in tens of milliseconds.
TIME_LIMIT_MS = 1_500
#: Two lessons with every kind of exercise between them, the first with a prediction.
JOURNEY = ["parallelism_at_the_core", "memory_what_fits"]
#: The kernel lab's page: test_kernel_lab_live.py checks it goes live (as every exercise
#: page, :func:`_assert_goes_live`) on the page load its kernels are then checked on.
KERNEL_LAB = "inside_the_gpu"
ENDLESS = "def {name}({signature}):\n    while True:\n        pass\n"
FINAL = ("correct", "mistake", "incorrect", "invalid", "committed", "compared", "timeout",
         "error")
TIMINGS: dict[str, Any] = {"pages": {}}


def _page(slug: str) -> str:
    return f"exercises/{slug}.html"


def _exercises(slug: str, kind: type) -> list[Any]:
    """The lesson's exercises of ``kind`` that the browser checks."""
    return [ex.variant(None) for ex in lesson_module(slug).EXERCISES
            if isinstance(ex, kind) and f"{slug}:{ex.number}" not in exercises_left_static()]


@pytest.fixture
def learner(browser: Any, site_server: Any) -> Iterator[RecordedPage]:
    """A recorded page whose time limit for learner code is TIME_LIMIT_MS."""
    context = new_context(browser, "light")
    context.add_init_script(f"window.GL_EXERCISE_TIME_LIMIT_MS = {TIME_LIMIT_MS};")
    try:
        yield record_page(context, site_server)
    finally:
        context.close()


@pytest.fixture(scope="module", autouse=True)
def _report_timings() -> Iterator[None]:
    yield
    if not TIMINGS["pages"]:
        return
    pages = TIMINGS["pages"].values()
    TIMINGS["summary"] = {
        "pages": len(TIMINGS["pages"]),
        "exercises_live": sum(p["exercises_live"] for p in pages),
        "median_s_to_first_live": round(statistics.median(p["s_to_first_live"] for p in pages), 2),
        "max_s_to_first_live": max(p["s_to_first_live"] for p in pages),
        "median_round_trip_ms": round(statistics.median(
            p["round_trip_ms"] for p in pages if p.get("round_trip_ms") is not None), 1),
    }
    report_timings("exercise", TIMINGS)


# ---------------------------------------------------------------------------------------
# Helpers: what a learner does, and what the page then shows


def _open_live(recorded: RecordedPage, path: str) -> float:
    """Open ``path``; wait until its exercises are live. Returns the seconds it took."""
    started = time.perf_counter()
    recorded.open(path, settle=False)
    page = recorded.page
    page.wait_for_function(
        "() => { const all = document.querySelectorAll("
        "'[data-exercise]:not([data-state=unavailable])');"
        " return (all.length && Array.from(all).every(e => e.dataset.state === 'live'))"
        " || !!document.querySelector('[data-exercise][data-state=failed]'); }",
        timeout=LIVE_TIMEOUT_MS)
    seconds = time.perf_counter() - started
    failed = page.locator("[data-exercise][data-state=failed]")
    assert failed.count() == 0, page.locator("[data-gl-status]").inner_text()
    require_same_package(page, "GLExercises", exercise_pack())
    return seconds


def _exercise(page: Any, ex: Any) -> Any:
    found = page.locator(f'[data-exercise="{ex.lesson}:{ex.number}"]')
    assert found.count() == 1, f"{ex.id} is not on the page once"
    return found


def _wait_feedback(page: Any, ex: Any, timeout: int = LIVE_TIMEOUT_MS) -> tuple[str, str]:
    """(data-status, the message's HTML) of ``ex`` once the checker has answered."""
    selector = f'[data-exercise="{ex.lesson}:{ex.number}"] [data-feedback]'
    page.wait_for_function(
        "([sel, final]) => { const f = document.querySelector(sel);"
        " return f && final.includes(f.dataset.status) && !f.hasAttribute('aria-busy'); }",
        arg=[selector, list(FINAL)], timeout=timeout)
    box = page.locator(selector)
    message = box.locator(".gl-ex-message")
    return str(box.get_attribute("data-status")), message.inner_html() if message.count() else ""


def _type_and_check(page: Any, ex: Any, text: str) -> tuple[str, str]:
    block = _exercise(page, ex)
    block.locator("[data-answer]").fill(text)
    block.locator("button[data-check]").click()
    return _wait_feedback(page, ex)


def _expected(page: Any, request: dict[str, Any]) -> tuple[str, str]:
    """What the installed package answers to the same request, its HTML as the browser
    writes it back (entities normalised)."""
    answer = browser.handle(request)
    return answer["status"], _as_shown(page, answer["message_html"])


def _as_shown(page: Any, markup: str) -> str:
    """``markup`` as the browser writes it back (``&#x27;`` becomes ``'``)."""
    return page.evaluate("h => { const d = document.createElement('span'); d.innerHTML = h;"
                         " return d.innerHTML; }", markup)


def _set_code(page: Any, ex: Any, source: str) -> None:
    """Put ``source`` into the code editor (its element's value, as a paste would)."""
    editor = _exercise(page, ex).locator("[data-answer]")
    assert editor.evaluate("e => e.classList.contains('cm-content')"), "no code editor"
    editor.evaluate("(e, text) => { e.value = text; }", source)
    assert editor.evaluate("e => e.value") == source


def _submit_code(page: Any, ex: Any) -> None:
    """Press the code exercise's Check button once it can be pressed (visible, enabled:
    not while Python restarts). The editor lays its new text out over the next frames,
    which can move the button by a line: a click at the point Playwright measured just
    before then lands beside it (seen here in about one run of five once Python started
    fast). So the click event goes to the button itself, as a screen reader's would; the
    keyboard test presses the real keys."""
    button = _exercise(page, ex).locator("button[data-check]")
    button.click(trial=True, timeout=LIVE_TIMEOUT_MS)  # waits until it could be clicked
    button.dispatch_event("click")


def _shown_solution(page: Any, ex: Any) -> str:
    """The model solution as the page's worked solution shows it (what a learner copies)."""
    return _exercise(page, ex).locator("pre.gl-model-solution").text_content()


# ---------------------------------------------------------------------------------------
# The learner's loop, on two lessons


@pytest.mark.parametrize("slug", JOURNEY)
def test_a_learner_works_through_a_lesson(learner: RecordedPage, slug: str) -> None:
    page = learner.page
    seconds = _open_live(learner, _page(slug))
    _assert_goes_live(learner, slug, seconds)  # as every exercise page, on this page load
    ref = lambda ex: f"{ex.lesson}:{ex.number}"  # noqa: E731

    # a numeric exercise: a declared mistake, nonsense, then the reference
    numeric = next(ex for ex in _exercises(slug, NumericExercise) if ex.mistakes)
    examples = numeric.example_answers()
    key = numeric.mistakes[0].key
    status, message = _type_and_check(page, numeric, examples[key])
    assert (status, message) == _expected(page, {"action": "check", "exercise": ref(numeric),
                                           "answer": examples[key]})
    assert status == "mistake"
    assert _as_shown(page, browser.message_html(numeric.mistake_hint(key))) in message
    status, message = _type_and_check(page, numeric, "twelve bananas")
    assert status == "invalid", message
    solution = _exercise(page, numeric).locator("details.gl-solution")
    assert not solution.evaluate("d => d.open"), "the solution opened before a right answer"
    status, message = _type_and_check(page, numeric, examples["reference"])
    assert (status, message) == _expected(page, {"action": "check", "exercise": ref(numeric),
                                           "answer": examples["reference"]})
    assert status == "correct" and solution.evaluate("d => d.open")
    round_trip = page.evaluate("window.GLExercises.stats.roundTrips.slice(-1)[0]")

    # a choice: the option the calculators pick
    choice = _exercises(slug, ChoiceExercise)[0]
    block = _exercise(page, choice)
    block.locator(f'[data-answer] input[value="{choice.answer_value()}"]').check()
    block.locator("button[data-check]").click()
    assert _wait_feedback(page, choice)[0] == "correct"

    # a prediction: committed before the build's measurement shows, then compared
    for predict in _exercises(slug, PredictExercise):
        block = _exercise(page, predict)
        cell = page.locator(f"#{block.get_attribute('data-measurement')} .cell_output")
        assert cell.is_hidden(), "the measurement shows before a prediction is committed"
        status, message = _type_and_check(page, predict, "10")
        measured = float(block.get_attribute("data-measured"))
        assert (status, message) == _expected(page, {"action": "compare", "exercise": ref(predict),
                                               "answer": "10", "measured": measured})
        assert status == "compared" and cell.is_visible()
        assert block.locator("button[data-check]").is_disabled()

    # a code exercise: the model solution, an endless loop, the model solution again
    code = _exercises(slug, CodeExercise)[0]
    pasted = _shown_solution(page, code)
    assert pasted == browser.learner_solution(code)
    _set_code(page, code, pasted)
    _submit_code(page, code)
    assert _wait_feedback(page, code) == _expected(page, {"action": "code", "exercise": ref(code),
                                                    "source": pasted})
    _set_code(page, code, ENDLESS.format(name=code.function_name, signature=code.signature))
    started = time.perf_counter()
    _submit_code(page, code)
    status, message = _wait_feedback(page, code)
    stopped = time.perf_counter() - started
    assert status == "timeout", message
    assert "stopped" in message and stopped >= TIME_LIMIT_MS / 1000 * 0.9
    assert page.locator("[data-exercise][data-state=restarting]").count() > 0
    # a fresh worker's first call is cold (over 1.5 s on a loaded 2-core machine): the
    # site's own limit applies to it, as it does for a learner
    page.evaluate("delete window.GL_EXERCISE_TIME_LIMIT_MS")
    _set_code(page, code, pasted)
    _submit_code(page, code)  # waits for the restart
    assert _wait_feedback(page, code)[0] == "correct"
    assert page.evaluate("window.GLExercises.stats.restarts") == 1

    # the progress, kept in this browser in the notebook's schema, survives a reload
    kept = page.evaluate("localStorage.getItem('gpulesson-progress')")
    record = json.loads(kept)
    done = {ex.id for ex in (numeric, choice, code, *_exercises(slug, PredictExercise))}
    assert {k for k, v in record["exercises"].items() if v["done"]} == done
    assert set(record) == {"version", "exercises"}
    # the page starts a fresh worker after each code check: a reload while it still
    # downloads Pyodide would abort those requests (and fail assert_clean below)
    page.wait_for_function("() => { const s = window.GLExercises.stats;"
                           " return s.starts === s.readies; }", timeout=LIVE_TIMEOUT_MS)
    page.reload()
    page.wait_for_function("() => { const s = document.querySelector('[data-progress-summary]');"
                           " return s && s.textContent.length > 0; }", timeout=LIVE_TIMEOUT_MS)
    summary = page.locator("[data-progress-summary]").inner_text()
    assert browser.handle({"action": "progress", "lesson": slug, "progress": kept})[
        "progress"]["summary"] in summary
    for ex_id in done:
        number = ex_id.rpartition("-ex")[2]
        assert page.locator(f'[data-exercise="{slug}:{number}"] [data-done-note]').is_visible()
    learner.screenshot(f"exercises-{slug}-after-reload", full_page=True)
    learner.assert_clean(f"{slug}: the learner's loop")
    TIMINGS.setdefault("journeys", {})[slug] = {
        "s_to_first_live": round(seconds, 2), "round_trip_ms": round(round_trip, 1),
        "timeout_to_stopped_s": round(stopped, 2)}


# ---------------------------------------------------------------------------------------
# Every exercise page


@pytest.mark.parametrize("slug", [s for s in available_lessons()
                                  if s not in (*JOURNEY, KERNEL_LAB)])
def test_every_exercise_page_goes_live(site_page: RecordedPage, slug: str) -> None:
    """All of a page's exercises become live; one check's round trip is measured; axe-core
    finds nothing serious with the controls shown and a feedback on screen. (The pages of
    the learner's loop, and the kernel lab's, are checked the same way by their own tests,
    on the same page load.)"""
    _assert_goes_live(site_page, slug, _open_live(site_page, _page(slug)))
    site_page.assert_clean(_page(slug))


def _assert_goes_live(recorded: RecordedPage, slug: str, seconds: float) -> None:
    page = recorded.page
    assert any(text.strip() for text in page.locator("main h1").all_inner_texts())
    count = page.locator("[data-exercise][data-state=live]").count()
    refs = [f"{slug}:{ex.number}" for ex in lesson_module(slug).EXERCISES]
    static = [r for r in refs if r in exercises_left_static()]
    assert count == len(refs) - len(static)
    for ref in static:  # checked in Jupyter only, and the page says so
        assert page.locator(f'[data-exercise="{ref}"] [data-unavailable]').is_visible()
    first = page.evaluate("window.GLExercises.stats.pageToLiveMs") / 1000
    assert page.evaluate("window.GLExercises.stats.info.snapshot"), "started without snapshot"
    assert page.evaluate("window.GLExercises.stats.info.bytecode") == sum(
        path.endswith(".py") for path in exercise_pack()["files"]), "no byte code written"
    ex = _exercises(slug, NumericExercise)[0]
    assert _type_and_check(page, ex, "not a number at all")[0] == "invalid"
    trip = page.evaluate("window.GLExercises.stats.roundTrips.slice(-1)[0]")
    TIMINGS["pages"][slug] = {"exercises_live": count, "exercises_in_jupyter_only": len(static),
                              "s_to_first_live": round(first, 2),
                              "s_to_all_live_seen_by_test": round(seconds, 2),
                              "boot_ms": round(page.evaluate("window.GLExercises.stats.bootMs")),
                              "round_trip_ms": round(trip, 1)}
    assert_accessible(recorded, f"{slug} (live)")


# ---------------------------------------------------------------------------------------
# The keyboard, the time before Python, the progress record, a page from disk


def test_the_keyboard_alone_answers_and_writes_code(learner: RecordedPage) -> None:
    page = learner.page
    slug = "memory_what_fits"
    _open_live(learner, _page(slug))
    numeric = _exercises(slug, NumericExercise)[0]
    block = _exercise(page, numeric)
    block.locator("[data-answer]").focus()
    page.keyboard.type(numeric.example_answers()["reference"])
    page.keyboard.press("Enter")
    assert _wait_feedback(page, numeric)[0] == "correct"
    page.keyboard.press("Tab")  # to Check
    assert page.evaluate("document.activeElement.hasAttribute('data-check')")
    page.keyboard.press("Tab")  # to the hint button
    assert page.evaluate("document.activeElement.hasAttribute('data-hint')")
    page.keyboard.press("Enter")
    assert block.locator("[data-hints-shown] li").count() == 1

    code = _exercises(slug, CodeExercise)[0]
    editor = _exercise(page, code).locator("[data-answer]")
    editor.focus()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    # typed line by line: the editor indents after the colon by itself
    page.keyboard.type(f"def {code.function_name}({code.signature}):")
    page.keyboard.press("Enter")
    page.keyboard.type("return 0")
    assert editor.evaluate("e => e.value") == (
        f"def {code.function_name}({code.signature}):\n    return 0")
    page.keyboard.press("Control+Enter")
    assert _wait_feedback(page, code)[0] == "incorrect"
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")  # leaves the editor, to its Check button
    assert page.evaluate("document.activeElement.hasAttribute('data-check')")
    learner.assert_clean("keyboard")


def test_an_answer_typed_while_python_starts_is_checked_when_it_is_ready(
        learner: RecordedPage) -> None:
    page = learner.page
    slug = "memory_what_fits"
    numeric = _exercises(slug, NumericExercise)[0]
    learner.open(_page(slug), settle=False)
    block = _exercise(page, numeric)
    block.locator("[data-answer]").wait_for(state="visible")
    state = block.get_attribute("data-state")
    block.locator("[data-answer]").fill(numeric.example_answers()["reference"])
    block.locator("button[data-check]").click()
    assert _wait_feedback(page, numeric)[0] == "correct"
    TIMINGS["state_when_typed"] = state
    learner.assert_clean("typed before Python was ready")


def test_a_corrupt_record_is_reset_and_progress_moves_both_ways(
        learner: RecordedPage, tmp_path: Path) -> None:
    page = learner.page
    slug = "memory_what_fits"
    page.context.add_init_script(
        "if (!sessionStorage.getItem('gl-test-seeded')) {"
        " sessionStorage.setItem('gl-test-seeded', '1');"
        " localStorage.setItem('gpulesson-progress', '{this is not json'); }")
    _open_live(learner, _page(slug))
    message = page.locator("[data-progress-message]")
    message.wait_for(state="visible")
    page.wait_for_function("() => document.querySelector('[data-progress-message]')"
                           ".textContent.includes('could not be read')", timeout=10_000)
    assert json.loads(page.evaluate("localStorage.getItem('gpulesson-progress')")) == {
        "exercises": {}, "version": 1}

    # a notebook's progress file, written by the notebook's own code, imports
    notebook_file = tmp_path / progress.PROGRESS_FILE
    progress.record(f"{slug}-ex1", "correct", path=notebook_file)
    page.locator("[data-progress-file]").set_input_files(str(notebook_file))
    page.wait_for_function("() => document.querySelector('[data-progress-message]')"
                           ".textContent.includes('Imported')", timeout=10_000)
    assert page.locator(f'[data-exercise="{slug}:1"] [data-done-note]').is_visible()

    # export gives that record back, as the notebook's schema, with the unreadable record
    # it replaced kept aside (a key the notebook keeps as it is)
    with page.expect_download() as download:
        page.locator("[data-progress-export]").click()
    exported = json.loads(Path(download.value.path()).read_text(encoding="utf-8"))
    assert exported.pop("set_aside") == {"": "{this is not json"}
    assert exported == json.loads(notebook_file.read_text(encoding="utf-8"))
    assert progress.progress_summary(slug, Path(download.value.path())).startswith(
        f"{lesson_module(slug).TITLE}: 1 of")
    learner.assert_clean("progress import and export")


def test_a_page_opened_from_disk_says_why_it_cannot_check(browser: Any, site_dir: Path) -> None:
    context = new_context(browser, "light")
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto((site_dir / _page("memory_what_fits")).as_uri())
        page.wait_for_function("() => document.querySelector('[data-exercise]')"
                               ".dataset.state === 'file'", timeout=15_000)
        assert "opened from a file" in page.locator("[data-gl-status]").inner_text()
        assert page.locator("[data-exercise] [data-gl-live]:not([hidden])").count() == 0
        assert not errors, errors
    finally:
        context.close()
