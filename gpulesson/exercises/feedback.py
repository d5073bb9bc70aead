"""What a learner is told: :class:`Feedback` (plain data) and the wording of numbers.

Standard library only (runs in Pyodide). :mod:`gpulesson.exercises.core` builds feedback
with these; :mod:`gpulesson.exercises.render` turns it into HTML. Every helper here is
safe on anything a learner's code can hand back: a ratio beyond :data:`FAR_FACTOR` is
worded "far too high" rather than printed, and a ``repr`` or ``str`` that raises is
replaced by the type's name.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

__all__ = ["FAR_FACTOR", "STATUSES", "CheckStopped", "Feedback", "binary_step", "format_number",
           "how_far"]

#: Feedback statuses. ``correct``, ``mistake`` (a declared mistake matched), ``incorrect``
#: (wrong, no declared mistake matched), ``invalid`` (could not be read),
#: ``committed`` (a prediction was recorded), ``compared`` (a prediction met a measurement),
#: ``timeout`` (the learner's code ran past the time budget) and ``error`` (the check was
#: interrupted or could not run; nothing was graded).
STATUSES = ("correct", "mistake", "incorrect", "invalid", "committed", "compared", "timeout",
            "error")
#: Beyond this factor a wrong answer is only "far too high" (or low): no ratio is printed.
FAR_FACTOR = 1e6
#: The relative difference a float result may have from an exact count and still be it:
#: the noise of floating-point arithmetic (a division that does not come out exactly), far
#: below a count's smallest step for any count a learner's function returns.
FLOAT_NOISE = 1e-9


def format_number(value: float, digits: int = 4) -> str:
    """Format a plain number for a learner: integers exactly, others to ``digits`` figures.

    ``512 -> '512'``, ``4096 -> '4,096'``, ``5.9259 -> '5.926'``, ``0.0033 -> '0.0033'``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"value must be a number, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"value must be finite, got {value!r}")
    if value == 0:
        return "0"
    if value.is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    magnitude = math.floor(math.log10(abs(value)))
    if magnitude >= 15 or magnitude < -4:
        return f"{value:.{digits - 1}e}"
    decimals = max(digits - 1 - magnitude, 0)
    text = f"{value:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


class CheckStopped(BaseException):
    """Raised into a running check to stop it (its time budget ran out).

    A ``BaseException``, so that a learner's ``except Exception`` does not swallow it, and
    never caught by a check: the runner that raised it (:mod:`gpulesson.exercises.guard`)
    turns it into ``timeout`` feedback. ``during`` names the call that was running.
    """

    def __init__(self, reason: str = "timeout") -> None:
        super().__init__(reason)
        self.reason = reason
        self.during: str | None = None


def text_of(error: BaseException) -> str:
    """``str(error)``, or its type's name when even that fails (a learner's exception)."""
    try:
        return str(error)
    except Exception:  # noqa: BLE001 - a broken __str__ must not break the feedback
        return type(error).__name__


@dataclass(frozen=True)
class Feedback:
    """What a learner is told about one answer.

    Plain data: :func:`gpulesson.exercises.render.feedback_html` renders it, and what a
    :class:`~gpulesson.exercises.lesson.Lesson` returns shows itself as that HTML in
    Jupyter (:class:`~gpulesson.exercises.render.RenderedFeedback`).

    Attributes
    ----------
    exercise_id:
        ``"<lesson>-ex<N>"``.
    status:
        one of :data:`STATUSES`: ``correct``, ``mistake``, ``incorrect``, ``invalid``,
        ``committed``, ``compared``, ``timeout``, ``error``.
    message:
        one or two plain-text sentences, shown as they are.
    mistake:
        the key of the declared mistake that matched, if any.
    value:
        the parsed answer (SI base units, option key, or the prediction), if any.
    details:
        extra plain-text lines (for a code exercise: the first input that differed).
    output:
        what the learner's code printed during the check (cut short), shown as it is.
    """

    exercise_id: str
    status: str
    message: str
    mistake: str | None = None
    value: Any = None
    details: tuple[str, ...] = ()
    output: str = ""

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")

    @property
    def correct(self) -> bool:
        """True when the answer was accepted."""
        return self.status == "correct"

    @property
    def is_error(self) -> bool:
        """True for answers that could not be read or checks that could not finish (red)."""
        return self.status in ("invalid", "timeout", "error")

    @property
    def graded(self) -> bool:
        """True when the answer was judged (it counts as an attempt in the progress file)."""
        return self.status not in ("invalid", "committed", "timeout", "error")

    def __str__(self) -> str:
        return "\n".join((self.message, *self.details))


def how_far(ratio: float, *, you: str = "That is about", far: str = "That is") -> str:
    """``"That is about 3.2× too high."`` for ``ratio`` = given / expected > 0; beyond
    :data:`FAR_FACTOR` either way (an overflow to inf, an underflow to 0 included) only
    "far too high" or "far too low", so that no ratio is ever printed as inf."""
    if not ratio < FAR_FACTOR:
        return f"{far} far too high (over {format_number(FAR_FACTOR)}× too high)."
    if not ratio > 1 / FAR_FACTOR:
        return f"{far} far too low (over {format_number(FAR_FACTOR)}× too low)."
    if ratio > 1:
        return f"{you} {format_number(ratio, 2)}× too high."
    return f"{you} {format_number(1 / ratio, 2)}× too low."


#: Binary against decimal prefixes, the most common first: (binary, decimal, their sizes in
#: bytes as written, binary / decimal), for answers no declared mistake explains (the common
#: mistake gib_as_gb covers one direction, where an exercise declares it). A kB and a KiB
#: differ by 2.4 %, inside "close": not listed.
_BINARY_STEPS = (("GiB", "GB", "2^30", "10^9", 2**30 / 10**9),
                 ("MiB", "MB", "2^20", "10^6", 2**20 / 10**6),
                 ("TiB", "TB", "2^40", "10^12", 2**40 / 10**12))
#: The decimal prefixes of :data:`_BINARY_STEPS` by size, for an answer's own scale.
_SCALES = ((1e12, "T"), (1e9, "G"), (1e6, "M"))


def byte_prefix(unit: str) -> str:
    """The prefix letter of a byte unit, binary or decimal: ``"GB"``, ``"GiB"``,
    ``"GiB/s"`` and ``" gb "`` give ``"G"``; anything else (``"bytes"``, ``""``, ``"FLOP"``)
    gives ``""``."""
    text = unit.strip().lower().removesuffix("/s").strip()
    if len(text) in (2, 3) and text[0] in "kmgtpe" and text[1:] in ("b", "ib"):
        return text[0].upper()
    return ""


def binary_step(value: float, expected: float, dimension: str, rtol: float,
                atol: float = 0.0, *, units: tuple[str, ...] = ()) -> str:
    """What to tell a learner whose byte answer (``dimension`` "bytes" or "bytes/s") is off
    by exactly the step between a binary and a decimal prefix (a GiB is 1.074 GB): the
    right figure written with the other unit, the mix-up the conventions page warns about.
    Said only when the answer, moved by that step, is within ``rtol`` (or ``atol``) of the
    right one; empty otherwise. The right figure to three or four figures lands within
    0.5 % of the step; a looser answer 5 to 10 % off is "close" or simply too high.

    Only the steps of the prefixes in play are tried: those of ``units`` (the unit the
    learner typed and the question's unit, e.g. ``("MB", "GB")``), or, where none of them
    has a prefix (a bare number in a field in bytes), the prefix of the right answer's
    scale. A learner who typed GB for an answer in GB used no TB: an answer 1.0995× too
    high there is not a TiB read as a TB (review r22, F4), however near the ratio."""
    if dimension not in ("bytes", "bytes/s"):
        return ""
    rate = "/s" if dimension == "bytes/s" else ""
    in_play = {byte_prefix(unit) for unit in units} - {""}
    if not in_play:  # below a MB no step is listed
        in_play = {next((letter for size, letter in _SCALES if abs(expected) >= size), "")}

    def near(x: float) -> bool:
        return abs(x - expected) <= max(rtol * abs(expected), atol)

    for binary, decimal, binary_bytes, decimal_bytes, step in _BINARY_STEPS:
        if decimal[0] not in in_play:
            continue
        side = "high" if near(value / step) else "low" if near(value * step) else ""
        if side:
            return (f"That is {step:.3f}× too {side}, the ratio of a {binary}{rate} "
                    f"({binary_bytes} bytes{rate}) to a {decimal}{rate} "
                    f"({decimal_bytes} bytes{rate}): check where you used one for the other.")
    return ""


def short(text: str, limit: int = 160) -> str:
    """``text`` on one line, cut to ``limit`` characters (a message never holds a page)."""
    text = " ".join(text[: 4 * limit].split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def safe_repr(value: Any) -> str:
    """``repr(value)`` of what a learner's function returned; its type if that fails."""
    try:
        return repr(value)
    except Exception:  # noqa: BLE001 - the learner's __repr__
        return f"a {type(value).__name__} object"


def agrees(got: float, expected: float, rtol: float) -> bool:
    """Whether a code exercise's finite result ``got`` is the reference's ``expected``:
    within ``rtol``, or, for an exact count (``rtol`` 0), that count up to floating-point
    noise (:data:`FLOAT_NOISE`)."""
    if close(got, float(expected), rtol, 0.0):
        return True
    return (rtol == 0 and float(expected).is_integer() and round(got) == expected
            and close(got, float(expected), FLOAT_NOISE, 0.0))


def close(x: float, target: float, rtol: float, atol: float) -> bool:
    """Whether ``x`` is within ``rtol`` of ``target`` (relative) or ``atol`` (absolute)."""
    return abs(x - target) <= max(rtol * abs(target), atol)


def told_apart(got: float, expected: float) -> tuple[str, str]:
    """Both numbers as :func:`format_number` writes them, to as many significant figures
    as it takes to tell them apart (4 at the least): never "returned 48, expected 48"
    for 48.000000001."""
    for digits in range(4, 18):
        shown, wanted = format_number(got, digits), format_number(expected, digits)
        if shown != wanted:
            return shown, wanted
    return repr(got), repr(expected)


def as_float(value: Any) -> float:
    """``float(value)``; inf for an integer beyond the float range (10**400)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf


def raised_message(function_name: str, call: str, error: BaseException) -> str:
    """The message for a learner's function that raised ``error`` (``SystemExit`` too)."""
    kind = type(error).__name__
    if isinstance(error, SystemExit):
        return (f"Your function called sys.exit() (SystemExit) for {function_name}({call}): "
                "a check calls your function, so it must return its value, not end the "
                "program. Nothing else was stopped: fix it and check again.")
    return (f"Your function raised {kind} for {function_name}({call}): "
            f"{short(text_of(error))}")
