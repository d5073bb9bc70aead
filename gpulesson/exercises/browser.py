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
null}``. A progress record is updated as :meth:`Lesson.record
<gpulesson.exercises.lesson.Lesson.record>` updates the notebook's file: every graded
answer counts, a correct one (or a prediction compared) marks the exercise done.

Never raises: a malformed request or a failing exercise is answered with status
``"error"`` and a message. Standard library only (this module runs in the browser).
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import re
import tempfile
from collections.abc import Mapping
from typing import Any

from gpulesson.exercises import progress as _progress
from gpulesson.exercises.core import CodeExercise, Exercise, Feedback, PredictExercise
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


def check(ref: str, answer: Any) -> dict[str, Any]:
    """Check a typed answer (or commit a prediction) exactly as the notebook does."""
    ex = exercise(ref)
    if isinstance(ex, CodeExercise):
        raise TypeError(f"{ref} is a code exercise: use check_code with its source")
    return _answer(ex.check(answer))


def compare(ref: str, prediction: Any, measured: Any) -> dict[str, Any]:
    """Set a prediction (as typed) against ``measured`` (SI units, from the site's build)."""
    ex = exercise(ref)
    if not isinstance(ex, PredictExercise):
        raise TypeError(f"{ref} is not a predict-then-run exercise")
    committed = ex.check(prediction)
    if committed.status != "committed":
        return _answer(committed)
    if isinstance(measured, bool) or not isinstance(measured, (int, float)):
        return _answer(ex.compare(committed.value, float("nan")))
    return _answer(ex.compare(committed.value, float(measured)))


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


def check_code(ref: str, source: Any, *, limit: int = OUTPUT_LIMIT) -> dict[str, Any]:
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
    answer = _run_and_check(ex, source, out)
    answer["output"] = out.text()
    answer["output_dropped"] = out.dropped
    return answer


def _run_and_check(ex: CodeExercise, source: Any, out: _Bounded) -> dict[str, Any]:
    name = ex.function_name
    stub = f"def {name}({ex.signature}):"
    if not isinstance(source, str) or not source.strip():
        return _answer(ex._feedback("invalid", f"Write the function in the editor first, "
                                    f"starting with {stub}"))
    if len(source) > MAX_SOURCE_CHARS:
        return _answer(ex._feedback("invalid", f"Your code has {len(source):,} characters; "
                                    f"the page checks up to {MAX_SOURCE_CHARS:,}."))
    try:
        code = compile(source, "your code", "exec")
    except (SyntaxError, ValueError) as error:
        where = f" (line {error.lineno})" if getattr(error, "lineno", None) else ""
        reason = getattr(error, "msg", None) or str(error)
        return _answer(ex._feedback("invalid", f"Python could not read your code{where}: "
                                    f"{reason}."))
    namespace: dict[str, Any] = {"__name__": "__main__"}
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):  # type: ignore[type-var]
        try:
            exec(code, namespace)  # the learner's own cell, run as Jupyter would run it
        except (Exception, SystemExit) as error:
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
        try:
            return _answer(ex.check(function))
        except (Exception, SystemExit) as error:  # the checker must never reach the page raw
            return _error(f"Sorry, this answer could not be checked ({type(error).__name__}: "
                          f"{_short(error)}).")


def _short(error: BaseException, limit: int = 200) -> str:
    text = " ".join(str(error).split()) or "no message"
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------------------------------
# Progress, kept by the browser in the notebook's schema


def _serialise(data: Mapping[str, Any]) -> str:
    # the layout progress.record writes: a site export is a notebook's progress file
    return json.dumps(data, indent=1, sort_keys=True)


def read_progress(text: Any) -> tuple[dict[str, Any], str | None]:
    """The progress record a browser kept (``text``), and why it was reset, if it was.

    An empty or missing record is a fresh start (no message). Text that is not a progress
    record (not JSON, or no ``exercises`` object) is reset, and so are entries that are
    not records of an exercise; the message says so. Never raises.
    """
    empty: dict[str, Any] = {"version": 1, "exercises": {}}
    if text is None or (isinstance(text, str) and not text.strip()):
        return empty, None
    reset = ("The progress saved in this browser could not be read, so it starts again "
             "from nothing.")
    if not isinstance(text, str):
        return empty, reset
    try:
        raw = json.loads(text)
    except ValueError:
        return empty, reset
    if not isinstance(raw, dict) or not isinstance(raw.get("exercises"), dict):
        return empty, reset
    with _progress_file(text) as path:
        data = _progress.load_progress(path)
    # entries the page can read: an exercise id and its record
    data["exercises"] = {k: v for k, v in data["exercises"].items()
                         if isinstance(k, str) and isinstance(v, dict)}
    dropped = len(raw["exercises"]) - len(data["exercises"])
    if dropped:
        return data, (f"{dropped} saved {'entry' if dropped == 1 else 'entries'} of your "
                      "progress could not be read and "
                      f"{'was' if dropped == 1 else 'were'} dropped.")
    return data, None


@contextlib.contextmanager
def _progress_file(text: str | None):  # noqa: ANN202 - a context manager of a path
    with tempfile.TemporaryDirectory(prefix="gpulesson-") as folder:
        path = os.path.join(folder, _progress.PROGRESS_FILE)
        if text:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
        yield path


def _read_text(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _progress_answer(slug: str | None, data: Mapping[str, Any],
                     reset: str | None) -> dict[str, Any]:
    text = _serialise(data)
    answer: dict[str, Any] = {"text": text, "reset": reset, "summary": None, "done": []}
    if slug is not None:
        with _progress_file(text) as path:
            answer["summary"] = _progress.progress_summary(slug, path)
        done = {k for k, v in data["exercises"].items() if v.get("done")}
        answer["done"] = [ex.number for ex in _lesson(slug) if ex.id in done]
    return answer


def _record(slug: str, kept: Any, ex: Exercise | None, status: str | None) -> dict[str, Any]:
    data, reset = read_progress(kept)
    if ex is not None and status is not None and status not in ("invalid", "committed",
                                                                 "error"):
        with _progress_file(_serialise(data)) as path:
            if _progress.record(ex.id, status, variant=None, path=path):
                data, _ = read_progress(_read_text(path))
    return _progress_answer(slug, data, reset)


def merge_progress(kept: Mapping[str, Any], imported: Mapping[str, Any]) -> dict[str, Any]:
    """Both records in one: an exercise done in either is done; the larger attempt count,
    the earliest ``done_at`` and the latest ``last`` are kept."""
    merged = {k: dict(v) for k, v in kept["exercises"].items()}
    for key, entry in imported["exercises"].items():
        mine = merged.setdefault(key, {})
        both = (mine, entry)
        mine["attempts"] = max(_count(e.get("attempts")) for e in both)
        mine["done"] = any(bool(e.get("done")) for e in both)
        for field, pick in (("done_at", min), ("last", max)):
            values = [e[field] for e in both if isinstance(e.get(field), str)]
            if values:
                mine[field] = pick(values)
        if "variant" in entry:
            mine["variant"] = entry["variant"]
    return {"version": 1, "exercises": merged}


def _count(value: Any) -> int:
    try:
        return max(int(value), 0)
    except (TypeError, ValueError, OverflowError):
        return 0


# ---------------------------------------------------------------------------------------
# The one entry point


def handle(request: Mapping[str, Any]) -> dict[str, Any]:
    """Answer one request of the page (see the module docstring); never raises."""
    try:
        return _handle(request)
    except (KeyError, TypeError, ValueError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        return {**_error(f"bad request from the page: {message}"), "progress": None}


def _handle(request: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(request, Mapping):
        raise TypeError("the request must be a JSON object")
    action = request.get("action")
    kept = request.get("progress")
    if action in ("progress", "import"):
        slug = request.get("lesson")
        if slug is not None:
            _lesson(str(slug))  # an unknown lesson is a bad request
        data, reset = read_progress(kept)
        answer = {"status": "committed" if action == "import" else None, "message": "",
                  "details": [], "mistake": None}
        if action == "import":
            imported, problem = read_progress(request.get("imported"))
            if problem is not None or not imported["exercises"]:
                answer.update(status="invalid", message=(
                    "That file holds no progress of this course: choose a file saved with "
                    "“Export progress”, or a notebook's .gpulesson-progress.json."))
            else:
                data = merge_progress(data, imported)
                n = len(imported["exercises"])
                answer["message"] = (f"Imported the progress of {n} "
                                     f"exercise{'s' if n != 1 else ''}.")
        answer["progress"] = _progress_answer(None if slug is None else str(slug), data, reset)
        return answer
    ref = request.get("exercise")
    ex = exercise(ref)  # type: ignore[arg-type]
    if action == "check":
        answer = check(ref, request.get("answer"))  # type: ignore[arg-type]
    elif action == "code":
        answer = check_code(ref, request.get("source"))  # type: ignore[arg-type]
    elif action == "compare":
        answer = compare(ref, request.get("answer"), request.get("measured"))  # type: ignore[arg-type]
        if answer["status"] != "compared":
            answer["status"] = "invalid" if answer["status"] != "error" else "error"
    else:
        raise ValueError(f"action must be one of check, code, compare, progress, import; "
                         f"got {action!r}")
    answer["progress"] = _record(ex.lesson, kept, ex, answer["status"])
    return answer


def handle_json(request_json: str) -> str:
    """:func:`handle` with JSON text in and out: the one function the browser calls."""
    try:
        request = json.loads(request_json)
    except (TypeError, ValueError) as error:
        answer = {**_error(f"bad request from the page: {error}"), "progress": None}
    else:
        answer = handle(request)
    return json.dumps(answer, ensure_ascii=False, allow_nan=False)
