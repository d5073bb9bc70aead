"""The pure core of the exercise system: exercise kinds, answer checking, feedback.

Standard library only (this module also runs in Pyodide). Nothing here imports ipywidgets
or numpy, and nothing typed by a learner is ever ``eval``-ed: numeric answers go through
:func:`gpulesson.units.parse_quantity`, choices are matched against declared keys, and a
code exercise receives a real Python callable that the learner defined in a cell.

An exercise is *data plus reference functions*:

* ``defaults``: the inputs of the lesson's own version of the question;
* ``sample(rng)``: draws fresh, valid inputs for a class variant (optional);
* ``answer(p)``: the reference answer, computed by the calculators of :mod:`gpulesson`
  (never typed by hand);
* ``mistakes``: common mistakes, each the answer a learner *making that mistake* would
  give, as a function of the same inputs, with a specific hint;
* ``hints``: progressive hints, and ``solution``: the worked solution.

Texts (question, hints, solution, mistake hints) are either ``str.format`` templates or
callables; both receive the *context*: the inputs, whatever ``derived(p)`` adds, and
``answer`` (the formatted reference answer).

Taught in: every lesson's exercise notebook (``exercises/<slug>.ipynb``).
"""

from __future__ import annotations

import inspect
import math
import numbers
import random
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from gpulesson.exercises.feedback import (
    FAR_FACTOR,
    FLOAT_NOISE,
    STATUSES,
    CheckStopped,
    Feedback,
    agrees,
    as_float,
    binary_step,
    close,
    format_number,
    how_far,
    raised_message,
    safe_repr,
    short,
    text_of,
    told_apart,
)
from gpulesson.units import (
    DIMENSIONS,
    format_usd,
    parse_bare_power,
    parse_quantity,
    parse_scaled_number,
    parse_scaled_quantity,
    significant_figures,
)

__all__ = [
    "FAR_FACTOR",
    "NO_PREDICTION_YET",
    "STATUSES",
    "CheckStopped",
    "ChoiceExercise",
    "CodeExercise",
    "Exercise",
    "Feedback",
    "Mistake",
    "NumericExercise",
    "PredictExercise",
    "Text",
    "format_number",
]

#: A text of an exercise: a ``str.format`` template or a function of the context.
Text = str | Callable[[Mapping[str, Any]], str]

_MAX_ANSWER_CHARS = 64
_UNITS_WITHOUT_SPACE = ("×", "x", "%")
#: The unit word a typed answer ends with ("GB", "TiB", "GB/s"), if any.
_TYPED_UNIT = re.compile(r"(?<![A-Za-z])([A-Za-z]+(?:/s)?)\s*$")
_BARE_NUMBER = re.compile(r"^\s*[+\-\u2212]?(\d[\d,_]*\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$")


def _render(text: Text, context: Mapping[str, Any]) -> str:
    if callable(text):
        return text(context)
    return text.format(**context)


#: A numeric answer off by at most this many tolerances is "close" (rounding, units).
CLOSE_TOLERANCES = 3

#: What a predict-then-run measurement says when no prediction was committed before it ran
#: (in Jupyter). The site replaces it in the build's output (``scripts/gl_exercises.py``).
NO_PREDICTION_YET = ("Commit a prediction above before running the measurement to see how "
                     "close you were.")

@dataclass(frozen=True)
class Mistake:
    """A common mistake, declared as the answer a learner making it would give.

    Parameters
    ----------
    key:
        short identifier, e.g. ``"counted_macs"``; recorded in :class:`Feedback`.
    hint:
        the specific hint shown when a wrong answer matches (template or callable of
        the context).
    value:
        function of the exercise's inputs (for a code exercise: of one call's inputs)
        returning the answer this mistake produces, or ``None`` where the mistake does
        not apply to these inputs. For a choice exercise it returns an option key.
    """

    key: str
    hint: Text
    value: Callable[[Mapping[str, Any]], Any]


@dataclass(frozen=True, kw_only=True)
class Exercise:
    """Common fields of every exercise kind. Use a subclass.

    Parameters
    ----------
    lesson:
        the lesson slug, e.g. ``"parallelism_at_the_core"``.
    number:
        the exercise's number in that lesson (1, 2, ...); the id is ``"<lesson>-ex<N>"``.
    title:
        a short title ("Rounds at batch size 1").
    question, solution:
        texts (templates or callables of the context).
    hints:
        progressive hints, the gentlest first.
    mistakes:
        declared common mistakes (:class:`Mistake`).
    defaults:
        the inputs of the lesson's own version.
    sample:
        ``sample(rng) -> inputs`` for class variants; ``None`` for a fixed exercise.
    derived:
        ``derived(inputs) -> mapping`` of extra template values (formatted numbers
        computed by the calculators for the question and the solution).
    params:
        the bound inputs; ``None`` means ``defaults``. Set by :meth:`variant`.
    variant_seed:
        the seed of this variant, ``None`` for the lesson's own numbers.
    """

    kind: ClassVar[str] = "exercise"

    lesson: str
    number: int
    title: str
    question: Text
    solution: Text
    hints: tuple[Text, ...] = ()
    mistakes: tuple[Mistake, ...] = ()
    defaults: Mapping[str, Any] = field(default_factory=dict)
    sample: Callable[[random.Random], Mapping[str, Any]] | None = None
    derived: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None
    params: Mapping[str, Any] | None = None
    variant_seed: int | None = None

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", self.lesson or ""):
            raise ValueError(f"lesson must be a slug like 'parallelism_at_the_core', "
                             f"got {self.lesson!r}")
        if isinstance(self.number, bool) or not isinstance(self.number, int) or self.number < 1:
            raise ValueError(f"number must be a positive integer, got {self.number!r}")
        keys = [m.key for m in self.mistakes]
        if len(set(keys)) != len(keys):
            raise ValueError(f"mistake keys must be unique in {self.id}, got {keys}")

    # ------------------------------------------------------------------ identity, inputs
    @property
    def id(self) -> str:
        """``"<lesson>-ex<N>"``: the HTML id, the progress key and the answer-key anchor."""
        return f"{self.lesson}-ex{self.number}"

    @property
    def inputs(self) -> Mapping[str, Any]:
        """The bound inputs (the defaults unless this is a variant)."""
        return dict(self.defaults if self.params is None else self.params)

    def context(self) -> dict[str, Any]:
        """Everything a text template may use: inputs, derived values and ``answer``."""
        ctx: dict[str, Any] = dict(self.inputs)
        if self.derived is not None:
            ctx.update(self.derived(self.inputs))
        ctx.setdefault("answer", self.answer_text())
        return ctx

    def variant(self, seed: int | None) -> Exercise:
        """A copy with fresh inputs drawn from ``seed`` (``None``: the lesson's own numbers).

        Each variant is still checked by the calculators. Draws are repeated (up to 100
        times, deterministically) until every declared mistake stays distinguishable
        from the answer and from each other, so each mistake keeps its own hint. When no
        draw manages that (two mistakes that often pick the same option), the draw that
        keeps the most mistakes is used, without the mistakes that coincide with the
        answer or with an earlier one: those get the generic feedback in that variant.

        Raises
        ------
        RuntimeError
            when no draw gives a variant that can be checked at all (a bank's bug),
            naming the exercise, the seed and what went wrong.
        """
        if seed is None:
            return replace(self, params=None, variant_seed=None)
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
        if self.sample is None:
            return replace(self, params=None, variant_seed=seed)
        rng = random.Random(f"{self.id}/variant/{seed}")
        draws = []
        for _ in range(100):
            candidate = replace(self, params=dict(self.sample(rng)), variant_seed=seed)
            if not candidate.problems():
                return candidate
            draws.append(candidate)
        best: Exercise | None = None
        for candidate in draws:
            trimmed = candidate._without_clashing_mistakes()
            if trimmed is not None and (best is None or
                                        len(trimmed.mistakes) > len(best.mistakes)):
                best = trimmed
        if best is None:
            raise RuntimeError(f"{self.id}: no valid variant in 100 draws for seed {seed}; "
                               f"last problems: {draws[-1].problems()}")
        return best

    def _without_clashing_mistakes(self) -> Exercise | None:
        """This exercise keeping, in order, each mistake that stays distinguishable from
        the answer and from those kept before it; ``None`` if even that has problems."""
        kept: list[Mistake] = []
        for mistake in self.mistakes:
            if not replace(self, mistakes=(*kept, mistake)).problems():
                kept.append(mistake)
        trimmed = replace(self, mistakes=tuple(kept))
        return None if trimmed.problems() else trimmed

    # ------------------------------------------------------------------ texts
    def title_text(self) -> str:
        """The title, rendered for these inputs (titles may be templates too)."""
        return _render(self.title, self.context())

    def question_text(self) -> str:
        return _render(self.question, self.context())

    def solution_text(self) -> str:
        return _render(self.solution, self.context())

    def hint_texts(self) -> list[str]:
        ctx = self.context()
        return [_render(h, ctx) for h in self.hints]

    def hint(self, level: int) -> str | None:
        """The ``level``-th hint (1 = gentlest), or ``None`` when there are no more."""
        texts = self.hint_texts()
        return texts[level - 1] if 1 <= level <= len(texts) else None

    def mistake_hint(self, key: str) -> str:
        for mistake in self.mistakes:
            if mistake.key == key:
                return _render(mistake.hint, self.context())
        raise KeyError(f"{self.id} has no mistake {key!r}; known: "
                       f"{[m.key for m in self.mistakes]}")

    # ------------------------------------------------------------------ to override
    def answer_value(self) -> Any:
        """The reference answer (SI units, option key ...), from the calculators."""
        raise NotImplementedError

    def answer_text(self) -> str:
        """The reference answer as a learner would write it."""
        raise NotImplementedError

    def check(self, answer: Any) -> Feedback:
        """Check one answer. Never raises for anything a learner can type or write.

        A failure to build the feedback (a bug in a definition, a value no formatter can
        show) becomes ``invalid`` feedback that says what failed. Only
        :class:`CheckStopped` and ``KeyboardInterrupt`` leave a check: they stop it.
        """
        try:
            return self._check(answer)
        except Exception as error:  # noqa: BLE001 - reported to the learner, never raised
            return self._feedback("invalid", "Sorry, this answer could not be checked "
                                  f"({type(error).__name__}: {short(text_of(error))}).")

    def _check(self, answer: Any) -> Feedback:
        """The check of one kind (:meth:`check` calls it and catches its failures)."""
        raise NotImplementedError

    def problems(self) -> list[str]:
        """Reasons this (variant of the) exercise cannot teach well; empty when fine."""
        try:
            answer = self.answer_value()
        except (ValueError, TypeError, KeyError) as error:
            return [f"answer() failed: {error}"]
        return self._problems(answer)

    def _problems(self, answer: Any) -> list[str]:
        """The problems of one kind, given its reference answer (:meth:`problems` works it
        out and reports a failure to)."""
        return []

    def example_answers(self) -> dict[str, Any]:
        """Answers for tests and the answer key: ``"reference"`` and one per mistake."""
        return {}

    # ------------------------------------------------------------------ helpers
    def _feedback(self, status: str, message: str, **kwargs: Any) -> Feedback:
        return Feedback(exercise_id=self.id, status=status, message=message, **kwargs)


@dataclass(frozen=True, kw_only=True)
class NumericExercise(Exercise):
    """A numeric answer with units, e.g. "14 GB", "14e9 bytes" or "13.04 GiB".

    Parameters
    ----------
    answer:
        ``answer(inputs) -> float`` in SI base units, computed by a calculator.
    dimension:
        a dimension of :data:`gpulesson.units.DIMENSIONS` ("bytes", "flops", "count",
        "tokens/s", "seconds" ...).
    unit:
        the unit the question asks for ("GB", "tokens/s", "rounds"); a bare number typed
        by the learner is read in this unit, and the answer is shown in it.
    extra_units:
        exercise-specific unit words and their factor to the base unit, e.g.
        ``{"FLOP/byte": 1}`` or ``{"rounds": 1}``.
    rtol, atol:
        accepted when ``|x - answer| <= max(rtol * |answer|, atol)``. The same tolerance
        decides whether a wrong answer matches a declared mistake.
    digits:
        significant figures when showing the answer.
    """

    kind: ClassVar[str] = "numeric"

    answer: Callable[[Mapping[str, Any]], float]
    dimension: str = "count"
    unit: str = ""
    extra_units: Mapping[str, float] = field(default_factory=dict)
    rtol: float = 0.02
    atol: float = 0.0
    digits: int = 4

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.dimension not in DIMENSIONS:
            raise ValueError(f"dimension must be one of {sorted(DIMENSIONS)}, "
                             f"got {self.dimension!r}")
        if not (0 <= self.rtol < 1) or self.atol < 0:
            raise ValueError(f"rtol must be in [0, 1) and atol >= 0, got {self.rtol}, {self.atol}")

    # units -------------------------------------------------------------
    def _unit_factor(self) -> float | None:
        table = {k.lower(): v for k, v in self.extra_units.items()}
        table.update({k: v for k, v in DIMENSIONS[self.dimension].items() if k})
        return table.get(self.unit.lower().replace(" ", "")) if self.unit else None

    def format_value(self, value: float) -> str:
        """Show ``value`` (SI base units) in the exercise's unit.

        US dollars read as money, to :attr:`digits` significant figures
        (:func:`gpulesson.units.format_usd`): ``$6,868``, ``$12.29``, ``$0.0002894``.
        """
        factor = self._unit_factor()
        if self.dimension == "usd" and factor in (None, 1):
            return format_usd(value, digits=self.digits)
        number = format_number(value if factor is None else value / factor, self.digits)
        unit = self.unit
        if unit.endswith("s") and number == "1" and unit[:-1].lower() in {
            k.lower() for k in self.extra_units
        }:
            unit = unit[:-1]  # "1 round", not "1 rounds"
        if unit in _UNITS_WITHOUT_SPACE:
            return f"{number}{unit}"
        return f"{number} {unit}".strip()

    def parse(self, text: Any) -> float:
        """Read a learner's answer in SI base units; ``ValueError`` with a learner message.

        Numbers (``int``/``float``) and bare numbers typed as text are read in
        :attr:`unit`.
        """
        if isinstance(text, bool):
            raise ValueError("Please type a number, not True/False.")
        if isinstance(text, numbers.Real):
            if not math.isfinite(float(text)):
                raise ValueError(f"Please type a finite number, not {text!r}.")
            text = repr(float(text))
        if not isinstance(text, str):
            raise ValueError(f"Please type a number; got a {type(text).__name__}.")
        raw = text.strip()
        if len(text) > _MAX_ANSWER_CHARS or not raw:
            return parse_quantity(text, self.dimension)  # raises the length/empty message
        lowered = raw.lower()
        for word in sorted(self.extra_units, key=len, reverse=True):
            if lowered.endswith(word.lower()):
                number = raw[: len(raw) - len(word)]
                if _BARE_NUMBER.match(number):
                    value = parse_quantity(number, "count") * self.extra_units[word]
                    return self._finite(value, raw)
                scaled = parse_scaled_number(number)
                if scaled is not None:
                    return self._finite(scaled * self.extra_units[word], raw)
        scaled = parse_scaled_quantity(raw, self.dimension)
        if scaled is not None:
            return self._finite(scaled, raw)
        factor = self._unit_factor()
        power = None if factor is None else parse_bare_power(raw, self.dimension)
        if power is not None:  # "2^23", read in the question's unit as a bare number is
            return self._finite(power * factor, raw)
        if _BARE_NUMBER.match(raw) and factor is not None:
            value = parse_quantity(raw, "count", allow_negative=True) * factor
            if value < 0:
                raise ValueError(f"{raw!r} is negative; this quantity cannot be below zero.")
            return self._finite(value, raw)
        try:
            value = parse_quantity(raw, self.dimension)
        except ValueError as error:
            own = {k.lower() for k in self.extra_units}
            if self.unit and self.unit.lower() in own and str(error).startswith("Unknown unit"):
                # the dimension's own units were listed; the question's is an exercise's word
                raise ValueError(f"{error} This answer is in {self.unit}: type a number, or "
                                 f"a number and {self.unit}.") from error
            raise
        if factor:
            self._finite(value / factor, raw)  # 1e308 µs would show as inf in the unit
        return value

    def _bare_in_base_unit(self, answer: Any) -> float | None:
        factor = self._unit_factor()
        if factor in (None, 1) or not isinstance(answer, str):
            return None
        try:  # "14e9" or "1.4 × 10^10" or "2^34" in a GB field
            bare = (_BARE_NUMBER.match(answer)
                    or parse_bare_power(answer, self.dimension) is not None)
            return parse_quantity(answer, self.dimension) if bare else None
        except ValueError:
            return None

    @staticmethod
    def _finite(value: float, raw: str) -> float:
        if not math.isfinite(value):
            raise ValueError(f"{raw!r} is too large to be a sensible answer.")
        return value

    # reference ---------------------------------------------------------
    def answer_value(self) -> float:
        value = self.answer(self.inputs)
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{self.id}: answer() must return a number, got {value!r}")
        return float(value)

    def answer_text(self) -> str:
        return self.format_value(self.answer_value())

    def _mistake_values(self) -> list[tuple[Mistake, float]]:
        out = []
        for mistake in self.mistakes:
            value = mistake.value(self.inputs)
            if value is not None:
                out.append((mistake, float(value)))
        return out

    def _shown(self, value: float) -> str:
        """:meth:`format_value`, or e-notation when that fails or runs long (1e308 USD)."""
        try:
            text = self.format_value(value)
        except (ValueError, TypeError, OverflowError):
            text = ""
        if not text or len(text) > 40:
            text = f"{value:.3e} {self.unit}".strip()
        return text

    def _check(self, answer: Any) -> Feedback:
        try:
            value = self.parse(answer)
        except (ValueError, TypeError, OverflowError) as error:
            return self._feedback("invalid", str(error))
        expected = self.answer_value()
        shown = self._shown(value)
        if close(value, expected, self.rtol, self.atol):
            return self._feedback("correct", f"Correct: {shown}.{self._rate_note(answer)}",
                                  value=value)
        base = self._bare_in_base_unit(answer)
        if base is not None and close(base, expected, self.rtol, self.atol):
            # "14e9" in a GB field: a bare number in the base unit is a fair reading too
            return self._feedback("correct", f"Correct: {self.format_value(base)} (your "
                                  f"number read as {self.dimension}).", value=base)
        for mistake, wrong in self._mistake_values():
            if close(value, wrong, self.rtol, self.atol):
                hint = _render(mistake.hint, self.context())
                return self._feedback("mistake", f"Not quite: {shown}. {hint}"
                                      f"{self._rate_note(answer)}",
                                      mistake=mistake.key, value=value)
        direction = self._direction(value, expected, answer)
        return self._feedback("incorrect", f"Not quite: {shown}. {direction}"
                              f" Try again, or ask for a hint.{self._rate_note(answer)}",
                              value=value)

    def _rate_note(self, answer: Any) -> str:
        """A note when a count of FLOPs was typed with a rate's "FLOPS" (capital S).

        The parser reads "35 TFLOPS" as 35 TFLOP, the plural of the count; many datasheets
        write the rate, FLOP/s, the same way. The units box of the lessons is about exactly
        this (review 4, I7), so the answer is accepted and the ambiguity named.
        """
        if self.dimension != "flops" or not isinstance(answer, str) or not re.search(
                r"FLOPS\s*$", answer):
            return ""
        return (" (Read as a count. \"FLOPS\" with a capital S usually means FLOP per "
                "second, a rate; a count is written FLOP or FLOPs.)")

    def _direction(self, value: float, expected: float, answer: Any = None) -> str:
        if expected == 0 or value == 0:
            return "That is not the expected value."
        # the right figure in the other unit: a GiB for a GB (said when that close), of the
        # prefixes the learner typed or the question asks in
        typed = _TYPED_UNIT.search(answer) if isinstance(answer, str) else None
        binary = binary_step(value, expected, self.dimension, min(self.rtol, 0.005),
                             self.atol, units=(typed.group(1) if typed else "", self.unit))
        if binary:
            return binary
        ratio = value / expected  # inf or 0.0 at the ends of the float range: see _how_far
        if self.rtol > 0 and abs(ratio - 1) <= CLOSE_TOLERANCES * self.rtol:
            return (f"Close, but outside the {self.rtol:.0%} tolerance: "
                    "check your rounding and the units.")
        if self.rtol == 0 and 1 / 1.15 < ratio < 1.15:   # an exact count: no rounding to blame
            figures = significant_figures(value)
            # the count rounded to three figures or more (28.35M), not a guess such as 50
            if figures >= 3 and float(f"{expected:.{figures}g}") == value:
                return ("That is the count rounded, and this answer is exact: type every "
                        "digit.")
            side = "high" if value > expected else "low"
            return (f"That is {self.format_value(abs(value - expected))} too {side}, and this "
                    "answer is exact: count again.")
        return how_far(ratio)

    def _problems(self, expected: float) -> list[str]:
        found = []
        if not math.isfinite(expected) or expected < 0:
            found.append(f"answer {expected!r} is not a finite non-negative number")
        values = self._mistake_values()
        for i, (mistake, wrong) in enumerate(values):
            if close(wrong, expected, self.rtol, self.atol) or close(
                expected, wrong, self.rtol, self.atol
            ):
                found.append(f"mistake {mistake.key} gives the right answer ({wrong!r})")
            for other, other_value in values[i + 1:]:
                if close(wrong, other_value, self.rtol, self.atol) or close(
                    other_value, wrong, self.rtol, self.atol
                ):
                    found.append(f"mistakes {mistake.key} and {other.key} coincide")
        return found

    def example_answers(self) -> dict[str, Any]:
        examples: dict[str, Any] = {"reference": self.answer_text()}
        for mistake, wrong in self._mistake_values():
            examples[mistake.key] = self.format_value(wrong)
        return examples

    def tolerance_text(self) -> str:
        parts = []
        if self.rtol >= 1e-6:  # a smaller rtol only absorbs floating-point noise: exact
            parts.append(f"±{format_number(self.rtol * 100, 2)}%")
        if self.atol:
            parts.append(f"±{self.format_value(self.atol)}")
        return " or ".join(parts) if parts else "exact"


@dataclass(frozen=True, kw_only=True)
class ChoiceExercise(Exercise):
    """Multiple choice: one correct option, chosen by a reference function.

    Parameters
    ----------
    options:
        ``(key, label)`` pairs, or a function of the context returning them. Labels may be
        templates.
    answer:
        ``answer(inputs) -> key`` of the correct option, computed by the calculators.
    """

    kind: ClassVar[str] = "choice"

    options: Sequence[tuple[str, str]] | Callable[[Mapping[str, Any]], Sequence[tuple[str, str]]]
    answer: Callable[[Mapping[str, Any]], str]

    def option_pairs(self) -> list[tuple[str, str]]:
        """``(key, label)`` with the labels rendered for these inputs."""
        ctx = self.context()
        raw = self.options(ctx) if callable(self.options) else self.options
        return [(key, _render(label, ctx)) for key, label in raw]

    def answer_value(self) -> str:
        key = self.answer(self.inputs)
        known = [k for k, _ in self._raw_options()]
        if key not in known:
            raise ValueError(f"{self.id}: answer() returned {key!r}, not one of {known}")
        return key

    def _raw_options(self) -> list[tuple[str, str]]:
        # option keys without rendering (rendering needs answer_text: avoid recursion)
        if callable(self.options):
            ctx: dict[str, Any] = dict(self.inputs)
            if self.derived is not None:
                ctx.update(self.derived(self.inputs))
            return list(self.options(ctx))
        return list(self.options)

    def answer_text(self) -> str:
        key = self.answer_value()
        ctx: dict[str, Any] = dict(self.inputs)
        if self.derived is not None:
            ctx.update(self.derived(self.inputs))
        ctx.setdefault("answer", "")
        for k, label in self._raw_options():
            if k == key:
                return _render(label, ctx)
        raise AssertionError("unreachable")

    def _check(self, answer: Any) -> Feedback:
        pairs = self.option_pairs()
        if answer is None or (isinstance(answer, str) and not answer.strip()):
            return self._feedback("invalid", "Please choose one of the options.")
        if not isinstance(answer, str):
            return self._feedback("invalid", "Please choose one of the options "
                                  f"(got a {type(answer).__name__}).")
        key = None
        for k, label in pairs:
            if answer.strip() in (k, label):
                key = k
        if key is None:
            shown = answer if len(answer) <= 40 else answer[:37] + "..."
            return self._feedback("invalid", f"{shown!r} is not one of the options; choose one "
                                  f"of: {', '.join(k for k, _ in pairs)}.")
        label = dict(pairs)[key]
        if key == self.answer_value():
            return self._feedback("correct", f"Correct: {label}.", value=key)
        for mistake in self.mistakes:
            if mistake.value(self.inputs) == key:
                hint = _render(mistake.hint, self.context())
                return self._feedback("mistake", f"Not quite. {hint}", mistake=mistake.key,
                                      value=key)
        return self._feedback("incorrect", f"Not quite: “{label}” is not right here. "
                              "Try again, or ask for a hint.", value=key)

    def _problems(self, correct: str) -> list[str]:
        found = []
        seen: dict[str, str] = {}
        known = [k for k, _ in self._raw_options()]
        for mistake in self.mistakes:
            chosen = mistake.value(self.inputs)
            if chosen is None:
                continue
            if chosen not in known:
                found.append(f"mistake {mistake.key} picks unknown option {chosen!r}")
            elif chosen == correct:
                found.append(f"mistake {mistake.key} picks the correct option")
            elif chosen in seen:
                found.append(f"mistakes {seen[chosen]} and {mistake.key} pick the same option")
            seen[chosen] = mistake.key
        return found

    def example_answers(self) -> dict[str, Any]:
        examples: dict[str, Any] = {"reference": self.answer_value()}
        for mistake in self.mistakes:
            chosen = mistake.value(self.inputs)
            if chosen is not None:
                examples[mistake.key] = chosen
        return examples


@dataclass(frozen=True, kw_only=True)
class PredictExercise(Exercise):
    """Predict, then run: the learner commits a number; a later cell measures the real one.

    :meth:`check` records (validates) the prediction; :meth:`compare` sets it against the
    measured value and says how far off it was. There is no reference answer to type:
    the measurement is the answer, so nothing here is typed by hand either.

    Parameters
    ----------
    dimension, unit, extra_units:
        as for :class:`NumericExercise`.
    good_within:
        a prediction within this factor of the measurement counts as a good estimate.
    """

    kind: ClassVar[str] = "predict"

    dimension: str = "count"
    unit: str = ""
    extra_units: Mapping[str, float] = field(default_factory=dict)
    good_within: float = 2.0
    digits: int = 3

    def _numeric(self) -> NumericExercise:
        return NumericExercise(lesson=self.lesson, number=self.number, title=self.title,
                               question="", solution="", answer=lambda p: 0.0,
                               dimension=self.dimension, unit=self.unit,
                               extra_units=self.extra_units, digits=self.digits)

    def parse(self, text: Any) -> float:
        return self._numeric().parse(text)

    def format_value(self, value: float) -> str:
        return self._numeric().format_value(value)

    def answer_value(self) -> None:
        return None

    def answer_text(self) -> str:
        return "measured when you run the notebook"

    def _shown(self, value: float) -> str:
        return self._numeric()._shown(value)

    def _check(self, answer: Any) -> Feedback:
        try:
            value = self.parse(answer)
        except (ValueError, TypeError, OverflowError) as error:
            return self._feedback("invalid", str(error))
        return self._feedback("committed", f"Prediction recorded: {self._shown(value)}. "
                              "Now run the measurement cell below and compare.", value=value)

    def compare(self, prediction: float | None, measured: float) -> Feedback:
        """How far ``prediction`` (SI units; ``None`` if none was made) is from ``measured``.

        Never raises: a measurement or prediction that is not a finite number, or a
        failure to word the comparison, is ``invalid`` feedback saying so.
        """
        try:
            return self._compare(prediction, measured)
        except Exception as error:  # noqa: BLE001 - reported, never raised
            return self._feedback("invalid", "Sorry, this measurement could not be compared "
                                  f"({type(error).__name__}: {short(text_of(error))}).")

    def _compare(self, prediction: float | None, measured: float) -> Feedback:
        if isinstance(measured, bool) or not isinstance(measured, numbers.Real) or not (
            math.isfinite(measured) and measured > 0
        ):
            return self._feedback("invalid", f"The measurement {short(repr(measured), 60)} is "
                                  "not a positive finite number; run the measurement cell "
                                  "again.")
        measured = float(measured)
        shown = self._shown(measured)
        if prediction is not None and (
            isinstance(prediction, bool) or not isinstance(prediction, numbers.Real)
            or not math.isfinite(prediction) or prediction < 0
        ):
            return self._feedback("invalid", f"The prediction {short(repr(prediction), 60)} "
                                  "is not a finite number; commit a prediction again.")
        if prediction is None:
            return self._feedback("compared", f"Measured on this machine: {shown}. "
                                  f"{NO_PREDICTION_YET}", value=None)
        prediction = float(prediction)
        if prediction <= 0:
            ratio_text = "Your prediction was zero."
            good = False
        else:
            ratio = prediction / measured  # inf or 0.0 at the ends of the range: _how_far
            good = 1 / self.good_within <= ratio <= self.good_within
            if 1 / 1.1 <= ratio <= 1.1:
                ratio_text = "That is within 10%: an excellent estimate."
            else:
                ratio_text = how_far(ratio, you="Your prediction was",
                                      far="Your prediction was")
            if good and not 1 / 1.1 <= ratio <= 1.1:
                ratio_text += f" Within a factor of {format_number(self.good_within, 2)}: " \
                              "a good estimate."
        return self._feedback("compared", f"You predicted {self._shown(prediction)}; "
                              f"measured {shown}. {ratio_text}", value=prediction)

    def example_answers(self) -> dict[str, Any]:
        return {}


@dataclass(frozen=True, kw_only=True)
class CodeExercise(Exercise):
    """Write a small function; it is checked against the reference calculator.

    The learner's function is a real callable defined in a notebook cell; nothing is
    evaluated from text. It is called with keyword arguments on the ``examples`` first,
    then on ``trials`` random valid inputs drawn deterministically from the variant seed;
    the first input where it differs from ``reference`` is reported, with the hint of a
    declared mistake when its output matches one.

    Parameters
    ----------
    function_name:
        the name the learner defines, e.g. ``"matmul_flops"``.
    signature:
        the parameter list shown to the learner, e.g. ``"m, k, n"``.
    reference:
        ``reference(**inputs) -> number``: a calculator call.
    sample_input:
        ``sample_input(rng) -> inputs`` for one random valid call.
    examples:
        fixed inputs tried first (the lesson's own numbers).
    model_solution:
        a plain implementation a learner could write; shown as the worked solution (its
        source) and tested to pass :meth:`check`.
    rtol:
        relative tolerance. At 0 the answer is an exact count: an integer must be it, and
        a float must be it up to floating-point noise (within :data:`FLOAT_NOISE` of it,
        relatively, and rounding to it): ``2.0*m*k*n`` is the count, and so is a float
        a rounding error off it (``2*m*k*n * 0.1 * 10`` gives 48.00000000000001).
    """

    kind: ClassVar[str] = "code"

    function_name: str
    signature: str
    reference: Callable[..., float]
    sample_input: Callable[[random.Random], Mapping[str, Any]]
    examples: tuple[Mapping[str, Any], ...] = ()
    model_solution: Callable[..., Any] | None = None
    trials: int = 8
    rtol: float = 1e-9

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.function_name.isidentifier():
            raise ValueError(f"function_name must be an identifier, got {self.function_name!r}")

    def answer_value(self) -> Callable[..., Any] | None:
        return self.model_solution

    def answer_text(self) -> str:
        return f"a function {self.function_name}({self.signature})"

    def trial_inputs(self) -> list[dict[str, Any]]:
        """The inputs a submission is checked on, in order (deterministic per variant)."""
        rng = random.Random(f"{self.id}/trials/{self.variant_seed}")
        return [dict(x) for x in self.examples] + [
            dict(self.sample_input(rng)) for _ in range(self.trials)
        ]

    def model_solution_source(self) -> str:
        """The source of the model solution (for the worked solution and the answer key).

        The bank may define it under a private name (``_matmul_flops_model``); what a
        learner reads defines the function the exercise asks for (:attr:`function_name`),
        so that pasting it and checking it works.
        """
        if self.model_solution is None:
            return ""
        try:
            source = textwrap.dedent(inspect.getsource(self.model_solution)).strip()
        except (OSError, TypeError):
            return f"# see {self.model_solution.__module__}.{self.model_solution.__qualname__}"
        return re.sub(r"^def [A-Za-z_]\w*\(", f"def {self.function_name}(", source, count=1,
                      flags=re.M)

    def _check(self, answer: Any) -> Feedback:
        if isinstance(answer, str):
            return self._feedback("invalid", f"Pass the function itself, not text: "
                                  f"check({self.function_name}) without quotes. Text is never run.")
        if not callable(answer):
            return self._feedback("invalid", f"Define a function {self.function_name}"
                                  f"({self.signature}) in a cell and pass it (got "
                                  f"{type(answer).__name__}).")
        inputs_list = self.trial_inputs()
        unfit = self._unfit_parameters(answer, inputs_list[0]) if inputs_list else None
        if unfit is not None:
            return self._feedback("invalid", unfit)
        for inputs in inputs_list:
            call = ", ".join(f"{k}={v!r}" for k, v in inputs.items())
            failing = (f"first failing input: {call}",)
            try:  # the learner's code: the call, and turning what it returned into a float
                got = answer(**inputs)
                number = not (isinstance(got, bool) or not isinstance(got, numbers.Real))
                got_f = as_float(got) if number else math.nan
                returned = "" if number else short(safe_repr(got))
            except CheckStopped as stop:  # the time budget ran out: the runner reports it
                stop.during = f"{self.function_name}({call})"
                raise
            except KeyboardInterrupt:
                raise
            except BaseException as error:  # noqa: BLE001 - SystemExit too: report it
                return self._feedback("incorrect", raised_message(self.function_name, call, error),
                                      details=failing)
            if not number:
                # only None comes from a missing return: "returned 'abc'" needs no such hint
                forgot = " Did you forget `return`?" if got is None else ""
                return self._feedback(
                    "incorrect",
                    f"{self.function_name}({call}) returned {returned}; it should "
                    f"return a number.{forgot}", details=failing)
            expected = self.reference(**inputs)
            if math.isfinite(got_f) and agrees(got_f, expected, self.rtol):
                continue
            for mistake in self.mistakes:
                wrong = mistake.value(inputs)
                if wrong is not None and math.isfinite(got_f) and close(
                    got_f, float(wrong), max(self.rtol, FLOAT_NOISE), 0.0
                ):
                    hint = _render(mistake.hint, self.context())
                    shown, wanted = told_apart(got_f, float(expected))
                    return self._feedback(
                        "mistake",
                        f"{self.function_name}({call}) returned {shown}, "
                        f"expected {wanted}. {hint}",
                        mistake=mistake.key, details=failing)
            if math.isfinite(got_f):
                shown, wanted = told_apart(got_f, float(expected))
            else:
                shown, wanted = repr(got_f), format_number(float(expected))
            if math.isinf(got_f) and isinstance(got, numbers.Integral):
                shown = "an integer beyond the float range"
            return self._feedback(
                "incorrect",
                f"{self.function_name}({call}) returned {shown}, expected "
                f"{wanted}. Try again, or ask for a hint.",
                details=failing)
        return self._feedback("correct", f"Correct: {self.function_name} agrees with the "
                              f"course's calculator on all {len(inputs_list)} inputs tried.",
                              value=self.function_name)

    def _unfit_parameters(self, function: Callable[..., Any],
                          inputs: Mapping[str, Any]) -> str | None:
        """Why ``function`` cannot be called with ``inputs`` by name (its parameters are
        named otherwise than :attr:`signature`, or it needs one more), else ``None``.
        Callables whose signature cannot be read are left to the call itself."""
        try:
            signature = inspect.signature(function)
        except (TypeError, ValueError):
            return None
        try:
            signature.bind(**inputs)
        except TypeError:
            params = signature.parameters.values()
            by_name = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
            takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
            named = {p.name for p in params if p.kind in by_name}
            unknown = [k for k in inputs if not takes_any and k not in named]
            needed = [p.name for p in params if p.kind in by_name
                      and p.default is p.empty and p.name not in inputs]
            why = "; ".join(
                [f"it has no parameter {', '.join(unknown)}"] * bool(unknown)
                + [f"it also needs {', '.join(needed)}, which the check does not pass"]
                * bool(needed)) or "the call does not fit them"
            names = ", ".join(f"{k}=..." for k in inputs)
            return (f"The check calls your function by name: {self.function_name}({names}), "
                    f"but its parameters are {short(str(signature), 120)}: {short(why, 160)}. "
                    f"Name them as in def {self.function_name}({self.signature}): and check "
                    "again.")
        return None

    def problems(self) -> list[str]:
        found = []
        for inputs in self.trial_inputs():
            expected = float(self.reference(**inputs))
            values = []
            for mistake in self.mistakes:
                wrong = mistake.value(inputs)
                if wrong is None:
                    continue
                if close(float(wrong), expected, max(self.rtol, FLOAT_NOISE), 0.0):
                    # harmless for one input if other inputs tell them apart
                    continue
                values.append((mistake.key, float(wrong)))
            for i, (key, v) in enumerate(values):
                for other, w in values[i + 1:]:
                    if close(v, w, max(self.rtol, FLOAT_NOISE), 0.0):
                        found.append(f"mistakes {key} and {other} coincide for {inputs}")
        if self.model_solution is not None and not self.check(self.model_solution).correct:
            found.append("the model solution does not pass check()")
        return found

    def mistake_function(self, key: str) -> Callable[..., float]:
        """A learner-style function that makes mistake ``key`` (for tests and demos)."""
        for mistake in self.mistakes:
            if mistake.key == key:
                def wrong(*, _mistake: Mistake = mistake, **inputs: Any) -> float:
                    value = _mistake.value(inputs)
                    return float(self.reference(**inputs) if value is None else value)

                wrong.__name__ = f"{self.function_name}_{key}"
                return wrong
        raise KeyError(f"{self.id} has no mistake {key!r}")
