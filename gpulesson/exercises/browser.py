"""The site's exercises, Python side: what the browser calls to check an answer.

On the published site every exercise page runs this module in Pyodide, in a Web Worker
started by ``scripts/site_js/exercises.js``, together with the lesson's bank module and
the calculators it calls: the very files a notebook imports. An answer typed on the page
goes to the same :meth:`~gpulesson.exercises.core.Exercise.check` that the Jupyter widget
calls, so the site and the notebook cannot disagree. JavaScript only moves text between
the page and :func:`handle_json`.

Protocol (:func:`handle_json`: one JSON object in, one out). Every request names an
``action`` and, except ``progress`` and ``import``, an ``exercise`` as the page writes it,
``"<slug>:<number>"`` (the lesson's own numbers: variant ``None``). It may carry
``progress``, the text the browser keeps under the key ``gpulesson-progress`` (the schema
of the notebook's ``.gpulesson-progress.json``, :mod:`gpulesson.exercises.progress`):

``check`` ``{"answer": text}``
    a numeric, choice or predict exercise (for a prediction, the commitment).
``code`` ``{"source": text}``
    a code exercise: the learner's source is run as a notebook cell would run it (here, in
    the worker the page stops when it runs too long), the function it defines is looked
    up and given to the exercise's checker; what it prints is captured and bounded.
``compare`` ``{"answer": prediction text, "measured": number in SI units}``
    a committed prediction set against the measurement of the site's build.
``progress`` ``{}``
    read the kept progress (a corrupt record is reset, with a message).
``import`` ``{"imported": text}``
    merge a progress file (exported from the site, or a notebook's) into the kept one.

The answer: ``status`` (a feedback status of :data:`gpulesson.exercises.core.STATUSES`, or
``"error"`` when the exercise itself failed), ``message`` and ``details`` (plain text),
``message_html`` (the message escaped, with the exercises' mini-markup: what the page
shows), ``mistake`` (the declared mistake's key, if one
matched), ``output`` and ``output_dropped`` (code exercises), and ``progress``:
``{"text": what to keep, "summary": one line, "done": [numbers done], "reset": message or
null, "set_aside": {where: text} of the parts of the kept record that could not be read}``
(the page keeps those aside: nothing saved is lost). A progress record is updated as
:meth:`Lesson.record <gpulesson.exercises.lesson.Lesson.record>` updates the notebook's
file: every graded answer counts, a correct one (or a prediction compared) marks the
exercise done.

Never raises: a malformed request or a failing exercise is answered with status
``"error"`` and a message. Writes no file: the record is data in and data out
(:mod:`gpulesson.exercises.progress`). Standard library only (this module runs in the
browser).
"""

from __future__ import annotations

import contextlib
import functools
import json
import linecache
import math
import os
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any

from gpulesson.exercises import progress as _progress
from gpulesson.exercises.checking import Record, check_answer, with_notice
from gpulesson.exercises.core import CodeExercise, Exercise, Feedback, PredictExercise
from gpulesson.exercises.feedback import text_of
from gpulesson.exercises.lesson import Lesson
from gpulesson.exercises.render import markup

__all__ = [
    "MAX_SOURCE_CHARS",
    "OUTPUT_LIMIT",
    "PROGRESS_KEY",
    "check",
    "check_code",
    "compare",
    "exercise",
    "handle",
    "handle_json",
    "learner_solution",
    "measured_value",
    "merge_progress",
    "message_html",
    "read_progress",
    "read_progress_parts",
]

#: Where the site keeps progress (``localStorage``); its value is a progress file's text.
PROGRESS_KEY = "gpulesson-progress"
#: The most characters of printed output a code check hands back.
OUTPUT_LIMIT = 2_000
#: The most lines of printed output a code check hands back.
OUTPUT_LINES = 40
#: The longest code the site accepts (a notebook cell has no limit; a page needs one).
MAX_SOURCE_CHARS = 20_000


# ---------------------------------------------------------------------------------------
# Exercises, as the page names them


@functools.cache
def _lesson(slug: str) -> Lesson:
    return Lesson(slug, variant=None)


def exercise(ref: str) -> Exercise:
    """The exercise the page calls ``"<slug>:<number>"`` (the lesson's own numbers).

    Raises
    ------
    KeyError
        naming the reference when no lesson or no exercise has it.
    """
    if not isinstance(ref, str) or not re.fullmatch(r"[a-z][a-z0-9_]*:[1-9][0-9]*", ref):
        raise KeyError(f"exercise must read '<lesson slug>:<number>', got {ref!r}")
    slug, number = ref.split(":")
    return _lesson(slug).exercise(int(number))


def _answer(feedback: Feedback) -> dict[str, Any]:
    return {"status": feedback.status, "message": feedback.message,
            "message_html": message_html(feedback.message),
            "details": list(feedback.details), "mistake": feedback.mistake}


def _error(message: str) -> dict[str, Any]:
    return {"status": "error", "message": message, "message_html": message_html(message),
            "details": [], "mistake": None}


def message_html(message: str) -> str:
    """A feedback message as inline HTML: escaped, with the exercises' mini-markup
    (:func:`gpulesson.exercises.render.markup`: code, bold, emphasis, powers), so that
    ``2^30`` reads as a power on the page as it does in the question."""
    block = markup(" ".join(str(message).split()))
    return block[3:-4] if block.startswith("<p>") and block.endswith("</p>") else block


def _in_worker(ex: Exercise, check: Callable[[], Feedback]) -> Feedback:
    """The site's runner (:class:`~gpulesson.exercises.guard.Runner`): a plain call (the
    page stops a worker that runs too long) with a shallow stack; whatever it raises is
    ``error`` feedback."""
    try:
        with _shallow_stack():
            return check()
    except BaseException as error:  # noqa: BLE001 - the checker never reaches the page raw
        return ex._feedback("error", f"Sorry, this answer could not be checked "
                            f"({type(error).__name__}: {_short(error)}).")


def check(ref: str, answer: Any, *, record: Record | None = None) -> dict[str, Any]:
    """Check a typed answer (or commit a prediction) exactly as the notebook does (the one
    check path, :func:`~gpulesson.exercises.checking.check_answer`; ``record`` notes it)."""
    ex = exercise(ref)
    if isinstance(ex, CodeExercise):
        raise TypeError(f"{ref} is a code exercise: use check_code with its source")
    return _answer(check_answer(ex, answer, runner=_in_worker, record=record))


def compare(ref: str, prediction: Any, measured: Any, *,
            record: Record | None = None) -> dict[str, Any]:
    """Set a prediction (as typed) against ``measured`` (SI units, from the site's build);
    ``record`` notes a comparison made."""
    ex = exercise(ref)
    if not isinstance(ex, PredictExercise):
        raise TypeError(f"{ref} is not a predict-then-run exercise")
    committed = _in_worker(ex, lambda: ex.check(prediction))
    if committed.status != "committed":
        return _answer(committed)
    if isinstance(measured, bool) or not isinstance(measured, (int, float)):
        measured = float("nan")
    compared = _in_worker(ex, lambda: ex.compare(committed.value, float(measured)))
    if record is not None and compared.status == "compared":
        compared = with_notice(compared, record(ex, compared))
    return _answer(compared)


_MEASURED = re.compile(r"[Mm]easured(?: on this machine:)? (.+?)\.(?:\s|$)")


def measured_value(ex: PredictExercise, text: str) -> float | None:
    """The measurement a revealed comparison names (SI units), or ``None``.

    ``text`` is the plain text of the feedback a notebook's ``lesson.reveal(n, measured)``
    showed when the site was built (:meth:`PredictExercise.compare`): the figure is read
    back with the exercise's own :meth:`~PredictExercise.parse`, so it is the measurement
    to the exercise's shown precision.
    """
    match = _MEASURED.search(" ".join(text.split()))
    if match is None:
        return None
    try:
        value = ex.parse(match.group(1))
    except (ValueError, TypeError, OverflowError):
        return None
    return value if math.isfinite(value) and value > 0 else None


# ---------------------------------------------------------------------------------------
# Code exercises


def learner_solution(ex: CodeExercise) -> str:
    """The model solution as a learner can paste it into the editor and check it.

    The worked solution (:meth:`~CodeExercise.model_solution_source`, which already names
    the function as the exercise asks) with an ``import`` line first for each module it
    uses: the bank imports them at its top (``import math``).
    """
    source = ex.model_solution_source()
    if not source:
        return ""
    function = ex.model_solution
    names = getattr(getattr(function, "__code__", None), "co_names", ())
    space = getattr(function, "__globals__", {})
    modules = sorted(name for name in set(names)
                     if type(space.get(name)).__name__ == "module"
                     and getattr(space[name], "__name__", "") == name)
    imports = "".join(f"import {name}\n" for name in modules)
    return f"{imports}\n\n{source}" if imports else source


class _Bounded:
    """A text stream that keeps the first :data:`OUTPUT_LIMIT` characters and
    :data:`OUTPUT_LINES` lines and counts what it drops."""

    def __init__(self, limit: int, lines: int) -> None:
        self.limit = limit
        self.lines = lines
        self.kept: list[str] = []
        self.size = 0
        self.newlines = 0
        self.dropped = 0

    def write(self, text: Any) -> int:
        text = str(text)
        room = self.limit - self.size
        if self.newlines >= self.lines:
            room = 0
        else:
            # stop after the last allowed line
            allowed = self.lines - self.newlines
            at = -1
            for _ in range(allowed):
                at = text.find("\n", at + 1)
                if at < 0:
                    break
            if at >= 0:
                room = min(room, at + 1)
        piece = text[:max(room, 0)]
        self.kept.append(piece)
        self.size += len(piece)
        self.newlines += piece.count("\n")
        self.dropped += len(text) - len(piece)
        return len(text)

    def flush(self) -> None:
        pass

    def text(self) -> str:
        return "".join(self.kept)


def check_code(ref: str, source: Any, *, limit: int = OUTPUT_LIMIT,
               record: Record | None = None) -> dict[str, Any]:
    """Run the learner's ``source`` and check the function it defines, as the notebook does.

    The source runs in a fresh namespace, like a notebook cell whose function the widget
    then looks up by name; :meth:`CodeExercise.check` calls it on the lesson's numbers and
    on random inputs. What the code prints (while it is defined and while it is checked) is
    captured: the first ``limit`` characters (and :data:`OUTPUT_LINES` lines) come back as
    ``output``, the count of the rest as ``output_dropped``. An endless loop never returns:
    the page stops the worker (``scripts/site_js/exercises.js``).
    """
    ex = exercise(ref)
    if not isinstance(ex, CodeExercise):
        raise TypeError(f"{ref} is not a code exercise")
    out = _Bounded(limit, OUTPUT_LINES)
    answer = _run_and_check(ex, source, out, record)
    answer["output"] = out.text()
    answer["output_dropped"] = out.dropped
    return answer


def _run_and_check(ex: CodeExercise, source: Any, out: _Bounded,
                   record: Record | None) -> dict[str, Any]:
    name = ex.function_name
    stub = f"def {name}({ex.signature}):"
    if not isinstance(source, str) or not source.strip():
        return _answer(ex._feedback("invalid", f"Write the function in the editor first, "
                                    f"starting with {stub}"))
    if len(source) > MAX_SOURCE_CHARS:
        return _answer(ex._feedback("invalid", f"Your code has {len(source):,} characters; "
                                    f"the page checks up to {MAX_SOURCE_CHARS:,}."))
    try:
        with _shallow_stack():
            code = compile(source, "your code", "exec")
    except (SyntaxError, ValueError) as error:
        where = f" (line {error.lineno})" if getattr(error, "lineno", None) else ""
        reason = getattr(error, "msg", None) or text_of(error)
        return _answer(ex._feedback("invalid", f"Python could not read your code{where}: "
                                    f"{reason}."))
    except (RecursionError, MemoryError):
        return _answer(ex._feedback("invalid", "Python could not read your code: it nests "
                                    "too deeply (an expression of thousands of parts?)."))
    namespace: dict[str, Any] = {"__name__": "__main__"}
    # the source, for tracebacks and for the kernel checker, which reads a kernel's source
    linecache.cache["your code"] = (len(source), None, source.splitlines(True), "your code")
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out), \
            _no_exit():  # type: ignore[type-var]
        try:
            with _shallow_stack():
                exec(code, namespace)  # the learner's own cell, run as Jupyter would run it
        except _ExitCalled as error:
            return _answer(ex._feedback("invalid", f"Your code called os._exit({_short(error)}), "
                                        "which would stop the page's Python: leave it out."))
        except BaseException as error:  # noqa: BLE001 - a learner's cell may raise anything
            return _answer(ex._feedback("invalid", f"Your code raised {type(error).__name__} "
                                        f"when it ran: {_short(error)}"))
        function = namespace.get(name)
        if function is None:
            return _answer(ex._feedback("invalid", f"Your code defines no function {name}: "
                                        f"write {stub} ..."))
        if not callable(function):
            return _answer(ex._feedback("invalid", f"{name} is not a function (it holds a "
                                        f"{type(function).__name__} value); define it with "
                                        "def."))
        return _answer(check_answer(ex, function, runner=_in_worker, record=record))


def _short(error: BaseException, limit: int = 200) -> str:
    text = " ".join(text_of(error).split()) or "no message"
    return text if len(text) <= limit else text[: limit - 1] + "…"


#: How deep a learner's code may recurse on the site: below Python's default, so that the
#: Web Worker's stack (smaller than a desktop process's) is never what stops it.
LEARNER_RECURSION_LIMIT = 400


@contextlib.contextmanager
def _shallow_stack():  # noqa: ANN202 - a context manager
    """Lower the recursion limit while a learner's code is compiled or run, so that deep
    recursion ends in Python's ``RecursionError``, never in the stack of the host."""
    previous = sys.getrecursionlimit()
    depth = _depth()
    sys.setrecursionlimit(max(min(previous, depth + LEARNER_RECURSION_LIMIT), depth + 50))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def _depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


class _ExitCalled(SystemExit):
    """``os._exit`` called by a learner's code: reported, never obeyed."""


@contextlib.contextmanager
def _no_exit():  # noqa: ANN202 - a context manager
    """While a learner's code runs, ``os._exit`` (which would end the interpreter, and on
    the site the page's Python with it) raises :class:`SystemExit` instead."""
    def refuse(code: Any = 0) -> None:
        raise _ExitCalled(code)

    patched = [m for m in (os, sys.modules.get("posix"), sys.modules.get("nt"))
               if m is not None and hasattr(m, "_exit")]
    saved = [(m, m._exit) for m in patched]
    for module in patched:
        module._exit = refuse  # type: ignore[attr-defined]
    try:
        yield
    finally:
        for module, original in saved:
            module._exit = original  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------------------
# Progress, kept by the browser in the notebook's schema


_RESET = ("The progress saved in this browser could not be read, so it starts again from "
          "nothing; what was saved is kept aside (Export progress includes it).")


def read_progress(text: Any) -> tuple[dict[str, Any], str | None]:
    """The progress record a browser kept (``text``), and why it was reset, if it was.

    An empty or missing record is a fresh start (no message). Text that is not a progress
    record (not JSON, or no ``exercises`` object) is reset, and entries that are not
    records of an exercise (or are nested too deeply, or hold a number too long to read)
    are dropped from it; the message says so. Never raises, and writes no file:
    :func:`read_progress_parts` also gives what was dropped.
    """
    data, message, _aside = read_progress_parts(text)
    return data, message


def read_progress_parts(text: Any) -> tuple[dict[str, Any], str | None, dict[str, str]]:
    """:func:`read_progress`, and the text of every part it dropped, by where it was
    (:attr:`gpulesson.exercises.progress.Parsed.set_aside`): the page keeps them aside."""
    if text is None or (isinstance(text, str) and not text.strip()):
        return _progress.empty_record(), None, {}
    if not isinstance(text, str):
        return _progress.empty_record(), _RESET, {}
    parsed = _progress.parse_progress(text)
    if parsed.problem is not None:
        return _progress.empty_record(), _RESET, parsed.set_aside
    data, aside = parsed.record, dict(parsed.set_aside)
    for key, entry in list(data["exercises"].items()):
        if not isinstance(entry, dict):  # the page reads records only
            aside[f"exercises/{key}"] = json.dumps(entry)
            del data["exercises"][key]
    dropped = sum(1 for where in aside if where.startswith("exercises/"))
    if not aside:
        return data, None, aside
    if not dropped:
        return data, ("Part of the progress saved in this browser could not be read; it is "
                      "kept aside (Export progress includes it)."), aside
    return data, (f"{dropped} saved {'entry' if dropped == 1 else 'entries'} of your "
                  f"progress could not be read and {'was' if dropped == 1 else 'were'} "
                  "dropped from it; kept aside, Export progress includes "
                  f"{'it' if dropped == 1 else 'them'}."), aside


def _progress_answer(slug: str | None, data: Mapping[str, Any], reset: str | None,
                     aside: Mapping[str, str] | None = None) -> dict[str, Any]:
    answer: dict[str, Any] = {"text": _progress.serialise(data), "reset": reset,
                              "summary": None, "done": [], "set_aside": dict(aside or {})}
    if slug is not None:
        answer["summary"] = _progress.summary_of(slug, data)
        answer["done"] = [ex.number for ex in _lesson(slug)
                          if _progress.is_done(data["exercises"].get(ex.id))]
    return answer


class _KeptRecord:
    """The site's record step (:data:`~gpulesson.exercises.checking.Record`): a graded
    answer is noted in the record the page sent (data: no file), which goes back to it."""

    def __init__(self, kept: Any) -> None:
        self.data, self.reset, self.aside = read_progress_parts(kept)

    def __call__(self, ex: Exercise, feedback: Feedback) -> None:
        if feedback.graded:
            self.data = _progress.record_answer(self.data, ex.id, feedback.status)

    def answer(self, slug: str) -> dict[str, Any]:
        return _progress_answer(slug, self.data, self.reset, self.aside)


def merge_progress(kept: Mapping[str, Any], imported: Mapping[str, Any]) -> dict[str, Any]:
    """Both records in one (:func:`gpulesson.exercises.progress.merge_records`): an exercise
    done in either is done; the larger attempt count, the earliest ``done_at`` and the
    latest ``last`` are kept; imported ids that are no exercise of the course are left
    out."""
    return _progress.merge_records(kept, imported)[0]


# ---------------------------------------------------------------------------------------
# The one entry point


def handle(request: Mapping[str, Any]) -> dict[str, Any]:
    """Answer one request of the page (see the module docstring); never raises."""
    try:
        return _handle(request)
    except (KeyError, TypeError, ValueError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        return {**_error(f"bad request from the page: {text_of(message)}"), "progress": None}
    except BaseException as error:  # noqa: BLE001 - whatever happened, the page gets an answer
        return {**_error(f"Sorry, this could not be checked ({type(error).__name__}: "
                          f"{_short(error)}). Check again, or reload the page."),
                "progress": None}


def _handle(request: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(request, Mapping):
        raise TypeError("the request must be a JSON object")
    action = request.get("action")
    kept = request.get("progress")
    if action in ("progress", "import"):
        slug = request.get("lesson")
        if slug is not None:
            _lesson(str(slug))  # an unknown lesson is a bad request
        data, reset, aside = read_progress_parts(kept)
        answer = {"status": "committed" if action == "import" else None, "message": "",
                  "details": [], "mistake": None}
        if action == "import":
            imported, problem, _ = read_progress_parts(request.get("imported"))
            data, left_out = _progress.merge_records(data, imported)
            n = len(imported["exercises"]) - left_out
            if problem is not None or n <= 0:
                data, _, _ = read_progress_parts(kept)
                answer.update(status="invalid", message=(
                    "That file holds no progress of this course: choose a file saved with "
                    "“Export progress”, or a notebook's .gpulesson-progress.json."))
            else:
                answer["message"] = (f"Imported the progress of {n} "
                                     f"exercise{'s' if n != 1 else ''}.")
                if left_out:
                    answer["message"] += (f" {left_out:,} "
                                          f"{'entry was' if left_out == 1 else 'entries were'}"
                                          " left out: not an exercise of this course.")
        answer["progress"] = _progress_answer(None if slug is None else str(slug), data, reset,
                                              aside)
        return answer
    ref = request.get("exercise")
    ex = exercise(ref)  # type: ignore[arg-type]
    record = _KeptRecord(kept)
    if action == "check":
        answer = check(ref, request.get("answer"), record=record)  # type: ignore[arg-type]
    elif action == "code":
        answer = check_code(ref, request.get("source"), record=record)  # type: ignore[arg-type]
    elif action == "compare":
        answer = compare(ref, request.get("answer"), request.get("measured"),  # type: ignore[arg-type]
                         record=record)
        if answer["status"] != "compared":
            answer["status"] = "invalid" if answer["status"] != "error" else "error"
    else:
        raise ValueError(f"action must be one of check, code, compare, progress, import; "
                         f"got {action!r}")
    answer["progress"] = record.answer(ex.lesson)
    return answer


#: What :func:`handle_json` answers when even its answer cannot be written.
_LAST_RESORT = json.dumps({**_error("Sorry, the checker's answer could not be written; "
                                    "check again, or reload the page."), "progress": None})
#: A lone surrogate (``print('\ud800')``): valid in a Python string, not in UTF-8 text.
_SURROGATE = re.compile("[\ud800-\udfff]")


def handle_json(request_json: str) -> str:
    """:func:`handle` with JSON text in and out: the one function the browser calls.

    Never raises, whatever the request or the learner's code did: the answer is valid JSON
    text that UTF-8 can carry (a lone surrogate a learner's code printed becomes U+FFFD).
    """
    try:
        try:
            request = json.loads(request_json)
        except (TypeError, ValueError, RecursionError) as error:
            answer = {**_error(f"bad request from the page: {_short(error)}"),
                      "progress": None}
        else:
            answer = handle(request)
        text = json.dumps(answer, ensure_ascii=False, allow_nan=False)
        return _SURROGATE.sub("\ufffd", text)
    except BaseException:  # noqa: BLE001 - the page always gets an answer it can read
        return _LAST_RESORT
