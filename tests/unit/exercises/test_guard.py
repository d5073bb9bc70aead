"""gpulesson.exercises.guard: checks of learner code under a time budget, with printed
output captured and interrupts reported, in Jupyter (guarded) and the browser (direct)."""

from __future__ import annotations

import signal
import sys
import threading
import time

import pytest

from gpulesson.exercises import configure, load_lesson
from gpulesson.exercises.guard import GuardedRunner, _BoundedText, default_runner, direct

from .demo import flops_code_exercise

pytestmark = pytest.mark.usefixtures("clean_session")


def endless(m, k, n):
    while True:
        pass


def stubborn(m, k, n):
    """Swallows the first stop, then loops again."""
    try:
        while True:
            pass
    except BaseException:  # noqa: BLE001 - what a learner might write
        pass
    while True:
        pass


def _run(runner, function):
    ex = flops_code_exercise()
    began = time.monotonic()
    feedback = runner(ex, lambda: ex.check(function))
    return feedback, time.monotonic() - began


@pytest.mark.parametrize("function", [endless, stubborn])
def test_the_budget_stops_a_function_that_never_returns(function):
    feedback, seconds = _run(GuardedRunner(0.2), function)
    assert feedback.status == "timeout" and seconds < 3
    assert "Stopped after 0.2 s" in feedback.message and "matmul_flops(m=2" in feedback.message


_SWALLOWS_EVERY_STOP = """
import sys, time
from gpulesson.exercises.guard import GuardedRunner
from tests.unit.exercises.demo import flops_code_exercise

def matmul_flops(m, k, n):
    while True:  # a retry loop with a bare except: every stop lands inside the try
        try:
            time.sleep(0.01)
        except BaseException:
            pass

ex = flops_code_exercise()
began = time.monotonic()
feedback = GuardedRunner(0.3)(ex, lambda: ex.check(matmul_flops))
print(feedback.status, round(time.monotonic() - began, 1))
"""


def test_the_budget_stops_a_loop_that_swallows_every_stop():
    """A loop whose ``except BaseException`` catches every alarm (they land in its
    ``time.sleep``) used to run for ever, and Kernel -> Interrupt could not stop it
    either: past the budget every line of the learner's code raises, the handler too."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    try:
        done = subprocess.run([sys.executable, "-c", _SWALLOWS_EVERY_STOP], cwd=root,
                              capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("a learner's loop that swallows every stop ran past 30 s")
    status, seconds = done.stdout.split()
    assert status == "timeout" and float(seconds) < 5, done.stderr


def test_the_alarm_is_put_back_as_it_was():
    before = signal.getsignal(signal.SIGALRM)
    _run(GuardedRunner(0.2), endless)
    assert signal.getsignal(signal.SIGALRM) is before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_the_budget_holds_outside_the_main_thread_too():
    """A widget callback may run in another thread, where no signal can be used: a trace
    function keeps the time there."""
    result = {}

    def check_in_thread():
        result["feedback"], result["seconds"] = _run(GuardedRunner(0.2), endless)

    worker = threading.Thread(target=check_in_thread)
    worker.start()
    worker.join(10)
    assert not worker.is_alive()
    assert result["feedback"].status == "timeout" and result["seconds"] < 3


def test_another_timer_already_armed_is_left_alone():
    """With an interval timer already running (a test runner's own timeout), the check
    keeps its time by tracing instead of taking the alarm over."""
    fired = []
    previous = signal.signal(signal.SIGALRM, lambda *_: fired.append(1))
    signal.setitimer(signal.ITIMER_REAL, 30)
    try:
        feedback, _ = _run(GuardedRunner(0.2), endless)
        assert feedback.status == "timeout"
        remaining = signal.getitimer(signal.ITIMER_REAL)[0]
        assert 20 < remaining <= 30 and not fired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_a_correct_function_is_graded_as_usual_and_its_output_kept():
    def chatty(m, k, n):
        print(f"m={m}")
        return 2 * m * k * n

    feedback, _ = _run(GuardedRunner(5), chatty)
    assert feedback.correct and feedback.output.startswith("m=2\n")


def test_the_budget_is_the_sessions_unless_given():
    configure(time_budget=0.25)
    assert GuardedRunner().budget() == 0.25
    assert GuardedRunner(3).budget() == 3
    with pytest.raises(ValueError, match="time_budget must be a number of seconds"):
        configure(time_budget=-1)
    with pytest.raises(ValueError, match="time_budget"):
        GuardedRunner(True)  # type: ignore[arg-type]


def test_bounded_text_keeps_the_head_and_counts_the_rest():
    sink = _BoundedText(chars=100, lines=3)
    for i in range(1000):
        sink.write(f"line {i}\n")
    text = sink.text()
    assert text.startswith("line 0\nline 1\nline 2\n…") and "997 more lines" in text
    assert len(text) < 200
    quiet = _BoundedText(chars=100, lines=3)
    quiet.write("short")
    assert quiet.text() == "short"


def test_direct_is_a_plain_call_that_reports_an_interrupt():
    def interrupted(m, k, n):
        raise KeyboardInterrupt

    assert _run(direct, lambda m, k, n: 2 * m * k * n)[0].correct
    assert _run(direct, interrupted)[0].status == "error"


def test_the_browser_gets_the_direct_runner(monkeypatch):
    assert isinstance(default_runner(), GuardedRunner)
    monkeypatch.setattr(sys, "platform", "emscripten")
    assert default_runner() is direct


def test_lesson_check_runs_under_the_lessons_runner():
    lesson = load_lesson("parallelism_at_the_core", runner=GuardedRunner(0.2))
    ex = lesson.code_exercises()[0]
    feedback = lesson.check(ex.number, endless)
    assert feedback.status == "timeout" and "Stopped after 0.2 s" in feedback.to_html()
    assert lesson.summary().startswith("Parallelism at the Core: 0 of")  # not recorded
