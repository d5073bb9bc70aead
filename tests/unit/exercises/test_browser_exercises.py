"""The Python side of the site's exercises (:mod:`gpulesson.exercises.browser`).

What the page sends is answered exactly as the notebook answers it: for every exercise of
every lesson, the reference is correct, each declared mistake gets its own hint, nonsense
is invalid, a code exercise's model solution (as the page shows it) passes and the usual
slips in learner code are explained; the progress record is the notebook's file, byte for
byte the schema :func:`gpulesson.exercises.progress.record` writes; a corrupt record is
reset with a message; nothing the page can send raises. The exercises' pack answers the
same when imported on its own in a bare interpreter, as in Pyodide.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpulesson.exercises import browser, progress
from gpulesson.exercises.catalogue import available_lessons, lesson_module
from gpulesson.exercises.core import CodeExercise, PredictExercise
from gpulesson.exercises.kernel import KernelExercise
from gpulesson.exercises.lesson import Lesson
from gpulesson.kernelcheck import numba_cuda

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "scripts"))
import gl_exercises  # noqa: E402

EXERCISES = [ex for slug in available_lessons() for ex in lesson_module(slug).EXERCISES]
IDS = [ex.id for ex in EXERCISES]


@functools.cache
def unavailable() -> dict[str, dict[str, Any]]:
    """What the browser cannot check (a checker that needs a library Pyodide lacks), found as
    the site's build finds it; only such exercises may be left out below. Seconds (a
    subprocess), so found once per test process, when a test first asks, not when the
    module is collected."""
    return gl_exercises.browser_unavailable(gl_exercises.exercise_pack())


def _ref(ex: Any) -> str:
    return f"{ex.lesson}:{ex.number}"


def _ask(**request: Any) -> dict[str, Any]:
    """One request through the JSON entry point, as the page sends it."""
    return json.loads(browser.handle_json(json.dumps(request)))


def _learner_source(ex: CodeExercise) -> str:
    """The model solution as the site's worked solution shows it (learner_solution)."""
    source = browser.learner_solution(ex)
    assert re.search(rf"^def {ex.function_name}\(", source, re.M), source
    return source


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_the_page_gets_the_notebooks_feedback(ex: Any) -> None:
    """Reference, every declared mistake and nonsense: the notebook's Feedback, verbatim."""
    bound = ex.variant(None)
    if _ref(ex) in unavailable():
        assert unavailable()[_ref(ex)]["needs"], unavailable()[_ref(ex)]
        pytest.skip(f"checked in Jupyter only: needs {unavailable()[_ref(ex)]['needs']}")
    if isinstance(ex, CodeExercise):
        if isinstance(ex, KernelExercise):
            # the learner's `from numba import cuda` runs in this process, and Numba picks
            # its target once per process: let it pick as the course does (the simulator
            # without a GPU), as a notebook's set-up cell does, so the Numba tests that run
            # later in this process find that target whatever the order
            numba_cuda()
        answer = _ask(action="code", exercise=_ref(ex), source=_learner_source(ex))
        assert answer["status"] == "correct", answer["message"]
        for key in (m.key for m in ex.mistakes):
            wrong = bound.check(bound.mistake_function(key))
            assert wrong.status == "mistake" and wrong.mistake == key
        return
    if isinstance(ex, PredictExercise):
        answer = _ask(action="check", exercise=_ref(ex), answer="12")
        assert answer["status"] == "committed"
        return
    examples = bound.example_answers()
    for key, typed in examples.items():
        expected = bound.check(typed)
        answer = _ask(action="check", exercise=_ref(ex), answer=typed)
        assert (answer["status"], answer["message"], answer["mistake"]) == (
            expected.status, expected.message, expected.mistake), key
        assert answer["status"] == ("correct" if key == "reference" else "mistake"), key
    nonsense = _ask(action="check", exercise=_ref(ex), answer="banana split")
    assert nonsense["status"] == "invalid"


@pytest.mark.parametrize("ex", [e for e in EXERCISES if isinstance(e, PredictExercise)],
                         ids=lambda e: e.id)
def test_a_prediction_meets_the_builds_measurement(ex: PredictExercise) -> None:
    """The measurement a notebook's reveal printed reads back; compared as Lesson.reveal does."""
    bound = ex.variant(None)
    measured = bound.parse("8")  # a measurement of 8 in the exercise's own unit
    shown = bound.compare(None, measured).message
    assert browser.measured_value(bound, shown) == pytest.approx(measured, rel=1e-9)
    answer = _ask(action="compare", exercise=_ref(ex), answer="4", measured=measured)
    expected = bound.compare(bound.parse("4"), measured)
    assert (answer["status"], answer["message"]) == ("compared", expected.message)
    # a prediction that cannot be read is not compared
    assert _ask(action="compare", exercise=_ref(ex), answer="soon",
                measured=measured)["status"] == "invalid"
    assert browser.measured_value(bound, "no figure here") is None


CODE = next(ex for ex in EXERCISES if ex.id == "memory_what_fits-ex2")


@pytest.mark.parametrize(("source", "says"), [
    ("", "Write the function"),
    ("def gpt2_param_count(vocab, positions, hidden, layers)\n    return 1\n", "line 1"),
    ("x = 1\n", "defines no function gpt2_param_count"),
    ("gpt2_param_count = 3\n", "is not a function"),
    ("raise RuntimeError('boom')\n", "RuntimeError"),
    ("import sys\nsys.exit(3)\n", "SystemExit"),
], ids=["empty", "syntax", "missing", "not-callable", "raises", "exits"])
def test_slips_in_learner_code_are_explained(source: str, says: str) -> None:
    answer = _ask(action="code", exercise=_ref(CODE), source=source)
    assert answer["status"] == "invalid" and says in answer["message"], answer["message"]


def test_a_function_that_raises_or_returns_nothing_is_incorrect_not_an_error() -> None:
    stub = "def gpt2_param_count(vocab, positions, hidden, layers):\n    return None\n"
    answer = _ask(action="code", exercise=_ref(CODE), source=stub)
    assert answer["status"] == "incorrect" and "return" in answer["message"]
    boom = "def gpt2_param_count(vocab, positions, hidden, layers):\n    return 1 / 0\n"
    assert _ask(action="code", exercise=_ref(CODE), source=boom)["status"] == "incorrect"


def test_printed_output_is_captured_and_bounded() -> None:
    source = _learner_source(CODE).replace(
        "):\n", "):\n    print('x' * 500)\n", 1)
    answer = _ask(action="code", exercise=_ref(CODE), source=source)
    assert answer["status"] == "correct"
    assert len(answer["output"]) <= browser.OUTPUT_LIMIT
    trials = len(CODE.trial_inputs())
    assert len(answer["output"]) + answer["output_dropped"] == trials * 501
    lines = _ask(action="code", exercise=_ref(CODE), source=_learner_source(CODE).replace(
        "):\n", "):\n    for i in range(30): print(i)\n", 1))
    assert lines["output"].count("\n") == browser.OUTPUT_LINES and lines["output_dropped"] > 0
    assert len(_ask(action="code", exercise=_ref(CODE), source="print('x' * 10**5)\n")[
        "output"]) == browser.OUTPUT_LIMIT


def test_the_progress_record_is_the_notebooks_file(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The same answers, given in a notebook (Lesson.check writes the file) and on the page
    (the page keeps the text Python hands back): the same record, timestamps aside."""
    monkeypatch.chdir(tmp_path)
    ex4 = Lesson("memory_what_fits", variant=None).exercise(4)
    answers = [("24.24 GB", "mistake"), ("banana", "invalid"), (ex4.answer_text(), "correct")]
    lesson = Lesson("memory_what_fits", variant=None)
    kept = None
    for typed, status in answers:
        assert lesson.check(4, typed).status == status
        answer = _ask(action="check", exercise="memory_what_fits:4", answer=typed,
                      progress=kept)
        assert answer["status"] == status
        kept = answer["progress"]["text"]
    notebook = json.loads((tmp_path / progress.PROGRESS_FILE).read_text(encoding="utf-8"))
    site = json.loads(kept)
    for record in (notebook, site):
        for entry in record["exercises"].values():
            entry.pop("last"), entry.pop("done_at")
    assert site == notebook == {"version": 1, "exercises": {
        "memory_what_fits-ex4": {"attempts": 2, "done": True}}}
    summary = _ask(action="progress", lesson="memory_what_fits", progress=kept)["progress"]
    assert summary["done"] == [4]
    assert summary["summary"] == progress.progress_summary(
        "memory_what_fits", tmp_path / progress.PROGRESS_FILE)


@pytest.mark.parametrize("kept", ["{not json", "[1, 2]", '{"exercises": 3}', "42"])
def test_a_corrupt_record_is_reset_with_a_message(kept: str) -> None:
    answer = _ask(action="check", exercise="memory_what_fits:4", answer="26 GB",
                  progress=kept)
    assert answer["status"] == "correct"
    assert answer["progress"]["reset"] and "could not be read" in answer["progress"]["reset"]
    assert json.loads(answer["progress"]["text"])["exercises"].keys() == {
        "memory_what_fits-ex4"}


def test_unreadable_entries_are_dropped_and_counted() -> None:
    kept = json.dumps({"version": 1, "exercises": {
        "memory_what_fits-ex1": {"attempts": 1, "done": True}, "memory_what_fits-ex2": 7}})
    answer = _ask(action="progress", lesson="memory_what_fits", progress=kept)["progress"]
    assert answer["done"] == [1] and "1 saved entry" in answer["reset"]
    assert _ask(action="progress", lesson="memory_what_fits")["progress"]["reset"] is None


def test_import_merges_a_notebooks_file() -> None:
    kept = json.dumps({"version": 1, "exercises": {
        "memory_what_fits-ex1": {"attempts": 3, "done": False, "last": "2026-01-02T10:00:00"}}})
    imported = json.dumps({"version": 1, "exercises": {
        "memory_what_fits-ex1": {"attempts": 1, "done": True, "done_at": "2026-01-01T09:00:00",
                                 "last": "2026-01-01T09:00:00"},
        "memory_what_fits-ex9": {"attempts": 2, "done": True}}})
    answer = _ask(action="import", lesson="memory_what_fits", progress=kept, imported=imported)
    assert "2 exercises" in answer["message"]
    merged = json.loads(answer["progress"]["text"])["exercises"]
    assert merged["memory_what_fits-ex1"] == {"attempts": 3, "done": True,
                                              "done_at": "2026-01-01T09:00:00",
                                              "last": "2026-01-02T10:00:00"}
    assert answer["progress"]["done"] == [1, 9]
    refused = _ask(action="import", lesson="memory_what_fits", progress=kept,
                   imported="hello")
    assert refused["status"] == "invalid"
    assert json.loads(refused["progress"]["text"]) == json.loads(kept)


@pytest.mark.parametrize("request_json", [
    "", "nonsense", "[]", "null", '{"action": "check"}',
    '{"action": "check", "exercise": "memory_what_fits:99", "answer": "1"}',
    '{"action": "check", "exercise": "no_such_lesson:1", "answer": "1"}',
    '{"action": "code", "exercise": "memory_what_fits:4", "source": "x"}',
    '{"action": "fly", "exercise": "memory_what_fits:4"}',
    '{"action": "check", "exercise": "memory_what_fits:4", "answer": {"a": 1}}',
    '{"action": "progress", "lesson": "nope"}',
])
def test_nothing_the_page_sends_raises(request_json: str) -> None:
    answer = json.loads(browser.handle_json(request_json))
    assert answer["status"] in ("error", "invalid"), answer
    assert answer["message"]


def test_messages_render_the_exercise_markup_escaped() -> None:
    assert browser.message_html("1 GiB = 2^30 bytes") == "1 GiB = 2<sup>30</sup> bytes"
    assert browser.message_html("'<b>' is not a number") == \
        "&#x27;&lt;b&gt;&#x27; is not a number"


SANDBOX = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from gpulesson.exercises import browser
requests = json.loads(sys.argv[2])
answers = [json.loads(browser.handle_json(json.dumps(r))) for r in requests]
packed = ("gpulesson", "__main__", "numba")  # numba: the pack's stand-in for kernels
bad = [m for m in sys.modules if m.partition(".")[0] not in sys.stdlib_module_names
       and (m.partition(".")[0] not in packed
            or not getattr(sys.modules[m], "__file__", sys.argv[1]).startswith(sys.argv[1]))]
assert browser.__file__.startswith(sys.argv[1]), browser.__file__
print(json.dumps({"answers": answers, "foreign": bad}))
"""


def test_the_exercise_pack_alone_answers_like_the_installed_package(tmp_path: Path) -> None:
    """Imported from the pack in ``python -I -S`` (no site-packages, as in Pyodide), one
    answer per lesson comes back as the installed package gives it."""
    for path, text in gl_exercises.exercise_pack()["files"].items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    requests: list[dict[str, str]] = []
    mistaken: list[dict[str, str]] = []
    for slug in available_lessons():
        for ex in lesson_module(slug).EXERCISES:
            if _ref(ex) in unavailable():
                continue
            if isinstance(ex, CodeExercise):
                requests.append({"action": "code", "exercise": _ref(ex),
                                 "source": _learner_source(ex)})
                # a kernel's declared mistakes too: the site's browser test types only a
                # few kernels' mistakes into the page
                mistaken += [{"action": "code", "exercise": _ref(ex),
                              "source": mistake.kernel.learner_text()}
                             for mistake in ex.mistakes if isinstance(ex, KernelExercise)]
            elif not isinstance(ex, PredictExercise):
                requests.append({"action": "check", "exercise": _ref(ex),
                                 "answer": ex.variant(None).example_answers()["reference"]})
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", SANDBOX, str(tmp_path),
                           json.dumps(requests + mistaken)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["foreign"] == []
    wanted = ["correct"] * len(requests) + ["mistake"] * len(mistaken)
    assert len(mistaken) >= 32  # 16 kernels, two declared mistakes each
    for request, answer, status in zip(requests + mistaken, report["answers"], wanted,
                                       strict=True):
        here = _ask(**request)
        assert answer["status"] == status, (request["exercise"], answer["message"])
        assert (answer["status"], answer["message"]) == (here["status"], here["message"])


#: Learner code that once escaped handle_json (issue 35, case 6), run as a page sends it.
HOSTILE_CODE = {
    "KeyboardInterrupt": "raise KeyboardInterrupt",
    "BaseException subclass": "class Stop(BaseException):\n    pass\nraise Stop('out')",
    "GeneratorExit": "raise GeneratorExit",
    "__str__ raises": ("class Odd(Exception):\n    def __str__(self):\n        raise ValueError\n"
                       "raise Odd()"),
    "os._exit": "import os\nos._exit(1)",
    "posix._exit": "import posix\nposix._exit(3)",
    "os._exit in the function": "def {name}({signature}):\n    import os\n    os._exit(1)",
    "interrupt in the function": "def {name}({signature}):\n    raise KeyboardInterrupt",
    "deep expression": "x = " + "1+" * 9_000 + "1",
    "deep unary": "x = " + "-" * 19_000 + "1",
    "deep recursion at definition": "def f(n):\n    return f(n + 1)\nf(0)",
    "lone surrogate printed": "print('\\ud800')\ndef {name}({signature}):\n    return 0",
}
HOSTILE_RUN = r"""
import json, sys
from gpulesson.exercises import browser
ref, sources = sys.argv[1], json.loads(sys.argv[2])
for source in sources:
    text = browser.handle_json(json.dumps({"action": "code", "exercise": ref,
                                           "source": source}))
    text.encode("utf-8")  # what the page gets must be UTF-8 text
    print(text, flush=True)
print("still running")
"""


def test_hostile_learner_code_gets_a_learner_facing_answer() -> None:
    """Each case is answered with valid JSON text, a learner's status and a message naming
    what happened; none stops the interpreter (a subprocess, for os._exit)."""
    ex = next(e.variant(None) for e in EXERCISES if isinstance(e, CodeExercise)
              and _ref(e) not in unavailable())
    sources = [s.replace("{name}", ex.function_name).replace("{signature}", ex.signature)
               for s in HOSTILE_CODE.values()]
    proc = subprocess.run([sys.executable, "-c", HOSTILE_RUN, _ref(ex), json.dumps(sources)],
                          capture_output=True, text=True, timeout=300, cwd=REPO)
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0 and lines[-1] == "still running", proc.stderr[-2000:]
    answers = dict(zip(HOSTILE_CODE, (json.loads(line) for line in lines[:-1]), strict=True))
    for case, answer in answers.items():
        assert answer["status"] in ("invalid", "incorrect", "error"), (case, answer)
        assert "internal error" not in answer["message"] and "bad request" not in \
            answer["message"], (case, answer["message"])
    assert "KeyboardInterrupt" in answers["KeyboardInterrupt"]["message"]
    assert "Stop" in answers["BaseException subclass"]["message"]
    assert "os._exit(1)" in answers["os._exit"]["message"]
    assert "nests too deeply" in answers["deep expression"]["message"]
    assert "RecursionError" in answers["deep recursion at definition"]["message"]
    assert answers["lone surrogate printed"]["output"] == "\ufffd\n"


@pytest.mark.parametrize("error", [KeyboardInterrupt, SystemExit, GeneratorExit,
                                   RecursionError, MemoryError])
def test_handle_json_answers_whatever_the_checker_raises(
        error: type[BaseException], monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(_request: Any) -> None:
        raise error("from inside")

    monkeypatch.setattr(browser, "_handle", broken)
    answer = json.loads(browser.handle_json('{"action": "progress"}'))
    assert answer["status"] == "error" and error.__name__ in answer["message"]
    monkeypatch.setattr(browser, "handle", broken)
    assert json.loads(browser.handle_json("{}"))["status"] == "error"


DEEP_ENTRY = "[" * 5_000 + "]" * 5_000


@pytest.mark.parametrize("bad", [DEEP_ENTRY, '{"attempts": ' + "9" * 5_000 + "}", "7"],
                         ids=["5,000 levels", "5,000 digits", "not a record"])
def test_one_unreadable_entry_costs_only_itself(bad: str) -> None:
    """A 5,000-level entry made every check on every page 'could not be read', and one
    5,000-digit count discarded every readable entry (issue 35, items 3 and 4): now the
    check goes through, the other lessons' entries stay, and the bad one comes back to be
    kept aside."""
    kept = ('{"version": 1, "exercises": {"other_lesson-ex1": {"attempts": 1, "done": true}, '
            f'"memory_what_fits-ex2": {bad}}}}}')
    answer = _ask(action="check", exercise="memory_what_fits:4", answer="26 GB",
                  progress=kept)
    assert answer["status"] == "correct"
    entries = json.loads(answer["progress"]["text"])["exercises"]
    assert set(entries) == {"other_lesson-ex1", "memory_what_fits-ex4"}
    assert answer["progress"]["set_aside"] == {"exercises/memory_what_fits-ex2": bad}
    assert "1 saved entry" in answer["progress"]["reset"] and "kept aside" in \
        answer["progress"]["reset"]


def test_a_corrupt_record_comes_back_to_be_kept_aside() -> None:
    answer = _ask(action="progress", lesson="memory_what_fits", progress="{half a record")
    assert answer["progress"]["set_aside"] == {"": "{half a record"}
    assert "kept aside" in answer["progress"]["reset"]


def test_an_import_takes_exercises_of_this_course_and_true_only() -> None:
    """An import kept 30,000 ids that are no exercise and read "done": "false" as done
    (issue 35, item 11)."""
    entries = {f"no_such_lesson-ex{i}": {"attempts": 1, "done": True} for i in range(30_000)}
    entries["memory_what_fits-ex1"] = {"attempts": 1, "done": "false"}
    entries["memory_what_fits-ex2"] = {"attempts": 2, "done": True}
    answer = _ask(action="import", lesson="memory_what_fits",
                  imported=json.dumps({"version": 1, "exercises": entries}))
    assert answer["status"] == "committed"
    assert "2 exercises" in answer["message"] and "30,000 entries were left out" in \
        answer["message"]
    assert set(json.loads(answer["progress"]["text"])["exercises"]) == {
        "memory_what_fits-ex1", "memory_what_fits-ex2"}
    assert answer["progress"]["done"] == [2]
    only_junk = json.dumps({"exercises": {"x-ex1": {"done": True}}})
    assert _ask(action="import", lesson="memory_what_fits",
                imported=only_junk)["status"] == "invalid"


def test_a_checked_answer_writes_no_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 37, item 4: the site's worker keeps progress as data. Every way to open or
    create a file fails here, and a check with progress still answers."""
    import builtins
    import os
    import tempfile

    def refuse(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("a file was opened")

    kept = _ask(action="check", exercise="memory_what_fits:4", answer="banana")["progress"]
    for module, name in ((builtins, "open"), (os, "open"), (tempfile, "mkstemp"),
                         (tempfile, "mkdtemp"), (tempfile, "TemporaryDirectory"),
                         (tempfile, "NamedTemporaryFile")):
        monkeypatch.setattr(module, name, refuse)
    answer = _ask(action="check", exercise="memory_what_fits:4", answer="26 GB",
                  progress=kept["text"])
    assert answer["status"] == "correct" and answer["progress"]["done"] == [4]
    summary = _ask(action="progress", lesson="memory_what_fits",
                   progress=answer["progress"]["text"])["progress"]["summary"]
    assert "1 of" in summary
