"""Running a check under guard: a time budget, printed output captured, interrupts reported.

A check of a code exercise calls the learner's function, and a learner's function can do
anything: loop for ever, print 200,000 lines, call ``sys.exit()``. The check itself
(:meth:`gpulesson.exercises.core.CodeExercise.check`) already reports any exception the
function raises, ``SystemExit`` included; what it cannot do alone is stop a function that
never returns. That is the job of a *runner*: ``runner(exercise, check) -> Feedback``
calls ``check()`` (a function of no arguments that returns the feedback) and says what
happened when it could not finish.

Two runners, so the same checking logic runs in Jupyter and in the browser:

:class:`GuardedRunner` (Jupyter, any CPython)
    a time budget per check (``timeout`` feedback naming the call that was running), the
    learner's printed output captured, cut short and shown with the feedback, and
    ``KeyboardInterrupt`` (Kernel → Interrupt) turned into ``error`` feedback, so the widget
    always stays usable. The budget is kept by ``SIGALRM`` where that works (the main
    thread of a POSIX process, no other timer armed) and otherwise by a trace function that
    looks at the clock between lines.
:func:`direct`
    a plain in-process call, for the browser: there the check runs in a Web Worker that the
    page itself stops on timeout, so nothing here needs signals or threads.

:func:`default_runner` picks the guarded one in CPython and the direct one in Pyodide.
Standard library only.
"""

from __future__ import annotations

import contextlib
import io
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from gpulesson.exercises.core import CheckStopped, Exercise, Feedback
from gpulesson.exercises.feedback import short, text_of
from gpulesson.exercises.session import check_time_budget, settings

__all__ = ["DEFAULT_TIME_BUDGET", "GuardedRunner", "Runner", "default_runner", "direct"]

#: Seconds a check may run (every call of a learner's function together).
DEFAULT_TIME_BUDGET = 10.0
#: How much of what a learner's code printed is kept and shown.
MAX_OUTPUT_CHARS = 2_000
MAX_OUTPUT_LINES = 40

Check = Callable[[], Feedback]


class Runner(Protocol):
    """Runs ``check()`` for ``exercise`` and returns the feedback; never raises."""

    def __call__(self, exercise: Exercise, check: Check) -> Feedback: ...


def _interrupted(exercise: Exercise, seconds: float) -> Feedback:
    return Feedback(exercise.id, "error", f"Checking was interrupted after {seconds:.1f} s "
                    "(Kernel → Interrupt); nothing was recorded. Press Check to try again.")


def _failed(exercise: Exercise, error: BaseException) -> Feedback:
    return Feedback(exercise.id, "error", "Sorry, this answer could not be checked "
                    f"({type(error).__name__}: {short(text_of(error))}).")


def direct(exercise: Exercise, check: Check) -> Feedback:
    """Call ``check()`` in process, without a time budget (the browser's runner: its Web
    Worker is stopped by the page on timeout). An interrupt or a failure of the check
    itself is ``error`` feedback, never raised."""
    began = time.monotonic()
    try:
        return check()
    except KeyboardInterrupt:
        return _interrupted(exercise, time.monotonic() - began)
    except CheckStopped as stop:  # only a guarded runner raises it; report it all the same
        return _timed_out(exercise, stop, time.monotonic() - began)
    except Exception as error:  # noqa: BLE001 - a check never raises
        return _failed(exercise, error)


def _timed_out(exercise: Exercise, stop: CheckStopped, budget: float) -> Feedback:
    during = f" (it was running {short(stop.during, 120)})" if stop.during else ""
    return Feedback(exercise.id, "timeout", f"Stopped after {budget:g} s: your function did "
                    f"not finish in time{during}. Look for a loop that never ends, or a "
                    "size much larger than the question's. Nothing was recorded; press Check "
                    "again after fixing it.")


class _BoundedText(io.TextIOBase):
    """A text stream that keeps the first ``chars`` characters and ``lines`` lines and only
    counts the rest, so that printing 200,000 lines costs neither memory nor the front end."""

    def __init__(self, chars: int, lines: int) -> None:
        super().__init__()
        self._parts: list[str] = []
        self._kept = 0
        self._lines = 0
        self._max_chars = chars
        self._max_lines = lines
        self.dropped_chars = 0
        self.dropped_lines = 0

    def writable(self) -> bool:
        return True

    def write(self, text: Any) -> int:
        if not isinstance(text, str):
            text = str(text)
        room = self._max_chars - self._kept
        if room > 0 and self._lines < self._max_lines:
            piece = text[:room]
            newlines = piece.count("\n")
            if self._lines + newlines > self._max_lines:
                cut = -1
                for _ in range(self._max_lines - self._lines):
                    cut = piece.index("\n", cut + 1)
                piece = piece[: cut + 1]
                newlines = piece.count("\n")
            self._parts.append(piece)
            self._kept += len(piece)
            self._lines += newlines
            rest = text[len(piece):]
        else:
            rest = text
        if rest:
            self.dropped_chars += len(rest)
            self.dropped_lines += rest.count("\n")
        return len(text)

    def text(self) -> str:
        kept = "".join(self._parts)
        if self.dropped_chars:
            lines = (f"{self.dropped_lines:,} more lines, " if self.dropped_lines else "")
            kept = (kept.rstrip("\n") + f"\n… ({lines}{self.dropped_chars:,} more characters "
                    "not shown)")
        return kept


class GuardedRunner:
    """The Jupyter runner: a time budget, captured output and reported interrupts.

    Parameters
    ----------
    time_budget:
        seconds one check may take; ``None`` reads the session's
        :attr:`~gpulesson.exercises.session.Settings.time_budget` at each check.
    max_output_chars, max_output_lines:
        how much printed output is kept and shown with the feedback.
    """

    def __init__(self, time_budget: float | None = None, *,
                 max_output_chars: int = MAX_OUTPUT_CHARS,
                 max_output_lines: int = MAX_OUTPUT_LINES) -> None:
        self.time_budget = None if time_budget is None else check_time_budget(time_budget)
        self.max_output_chars = max_output_chars
        self.max_output_lines = max_output_lines

    def budget(self) -> float:
        """The budget of the next check, in seconds."""
        return settings.time_budget if self.time_budget is None else self.time_budget

    def __call__(self, exercise: Exercise, check: Check) -> Feedback:
        budget = self.budget()
        sink = _BoundedText(self.max_output_chars, self.max_output_lines)
        began = time.monotonic()
        try:
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), \
                    _deadline(budget):
                feedback = check()
        except CheckStopped as stop:
            feedback = _timed_out(exercise, stop, budget)
        except KeyboardInterrupt:
            feedback = _interrupted(exercise, time.monotonic() - began)
        except Exception as error:  # noqa: BLE001 - a check never raises
            feedback = _failed(exercise, error)
        printed = sink.text()
        return replace(feedback, output=printed) if printed else feedback

    def __repr__(self) -> str:
        return f"GuardedRunner(time_budget={self.time_budget!r})"


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Raise :class:`CheckStopped` into the code run inside after ``seconds``."""
    if _alarm_usable():
        with _alarm(seconds):
            yield
    else:
        with _traced(seconds):
            yield


def _alarm_usable() -> bool:
    return (hasattr(signal, "setitimer") and hasattr(signal, "SIGALRM")
            and threading.current_thread() is threading.main_thread()
            and signal.getitimer(signal.ITIMER_REAL)[0] == 0)


#: Source files whose frames are the checking machinery, never the learner's code: this
#: package and ``contextlib`` (the ``with`` blocks a check runs in).
_CHECKING_FILES = (str(Path(__file__).resolve().parent), contextlib.__file__)


def _is_checking(frame: Any) -> bool:
    return frame.f_code.co_filename.startswith(_CHECKING_FILES)


@contextlib.contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    """``SIGALRM`` after ``seconds``, then every 0.2 s until the block ends.

    A learner's ``except BaseException`` can swallow an alarm; one inside a loop around a
    call that takes all the time (``time.sleep``, a long C call) swallowed every one of
    them, and ran for ever. So the first alarm also traces the learner's frames: from
    then on each of their lines raises again, the ``except`` block's too, and a stop raised
    in a handler leaves it. The checking machinery's own frames (:data:`_CHECKING_FILES`)
    are never stopped this way, and the trace function is put back when the block ends.
    """
    state = {"active": True}
    previous_trace = sys.gettrace()

    def stop_every_line(frame: Any, event: str, _arg: Any) -> Any:
        if not state["active"]:
            return None
        if event == "line" and not _is_checking(frame):
            raise CheckStopped("timeout")
        return stop_every_line

    def ring(_signum: int, frame: Any) -> None:
        if not state["active"]:
            return
        if sys.gettrace() is not stop_every_line:
            sys.settrace(stop_every_line)  # frames the learner's code calls from now on
            while frame is not None and not _is_checking(frame):  # and those running now
                frame.f_trace = stop_every_line
                frame = frame.f_back
        raise CheckStopped("timeout")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.2)
    try:
        yield
    finally:
        while True:  # an alarm ringing during the clean-up only makes it start again
            try:
                state["active"] = False
                signal.setitimer(signal.ITIMER_REAL, 0, 0)
                signal.signal(signal.SIGALRM, previous)
                sys.settrace(previous_trace)
                break
            except CheckStopped:
                continue


@contextlib.contextmanager
def _traced(seconds: float) -> Iterator[None]:
    """The portable deadline: a trace function that looks at the clock every 1,000 events
    (slower, so only where ``SIGALRM`` cannot be used: another thread, Windows). It traces
    opcodes, not lines: ``while True: pass`` never starts a new line."""
    deadline = time.monotonic() + seconds
    counter = [0]
    previous = sys.gettrace()

    def tracer(frame: Any, event: str, _arg: Any) -> Any:
        if event == "call":
            frame.f_trace_opcodes = True
        counter[0] += 1
        if counter[0] % 1000 == 0 and time.monotonic() > deadline:
            raise CheckStopped("timeout")
        return tracer

    sys.settrace(tracer)
    try:
        yield
    finally:
        sys.settrace(previous)


def default_runner() -> Runner:
    """:class:`GuardedRunner` in CPython; :func:`direct` in Pyodide (the page's Web Worker
    keeps the time there)."""
    if sys.platform == "emscripten":
        return direct
    return GuardedRunner()
