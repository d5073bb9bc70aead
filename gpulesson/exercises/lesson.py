"""A lesson's exercises, as a notebook uses them, and the session settings.

Standard library only at import time; :meth:`Lesson.show` imports the widget layer
(ipywidgets) when it is called.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from gpulesson import course
from gpulesson.exercises.core import CodeExercise, Exercise, Feedback, PredictExercise

__all__ = ["Lesson", "Settings", "available_lessons", "configure", "lesson_module",
           "load_lesson", "settings"]

SOLUTION_MODES = ("on-request", "after-correct", "never")


@dataclass
class Settings:
    """Session-wide settings; change them with :func:`configure`.

    Attributes
    ----------
    solutions:
        ``"on-request"`` (the default: a "Show solution" button, and the solution after a
        correct answer), ``"after-correct"`` (student editions: only after a correct
        answer; the static rendering carries no solution) or ``"never"``.
    variant:
        the class variant seed used by :func:`load_lesson` (``None``: the lesson's own
        numbers).
    progress:
        keep the local progress file (see :mod:`gpulesson.exercises.progress`).
    progress_path:
        where to keep it (default ``./.gpulesson-progress.json``).
    """

    solutions: str = "on-request"
    variant: int | None = None
    progress: bool = True
    progress_path: str | None = None


settings = Settings()
_UNSET: Any = object()


def configure(*, solutions: str | None = None, variant: int | None = _UNSET,
              progress: bool | None = None, progress_path: str | None = _UNSET) -> Settings:
    """Change the session settings (an instructor's student edition calls this first).

    Raises
    ------
    ValueError
        for an unknown ``solutions`` mode or a negative ``variant``.
    """
    if solutions is not None:
        if solutions not in SOLUTION_MODES:
            raise ValueError(f"solutions must be one of {SOLUTION_MODES}, got {solutions!r}")
        settings.solutions = solutions
    if variant is not _UNSET:
        if variant is not None and (isinstance(variant, bool) or not isinstance(variant, int)
                                    or variant < 0):
            raise ValueError(f"variant must be a non-negative integer or None, got {variant!r}")
        settings.variant = variant
    if progress is not None:
        settings.progress = bool(progress)
    if progress_path is not _UNSET:
        settings.progress_path = None if progress_path is None else str(progress_path)
    return settings


def lesson_module(slug: str) -> ModuleType:
    """The bank module ``gpulesson.exercises.bank.<slug>``.

    Raises
    ------
    KeyError
        naming the known lessons when ``slug`` has no bank module.
    """
    if not isinstance(slug, str) or not slug.isidentifier():
        raise KeyError(f"lesson must be a lesson slug; known: {available_lessons()}")
    try:
        return importlib.import_module(f"gpulesson.exercises.bank.{slug}")
    except ModuleNotFoundError as error:
        if error.name != f"gpulesson.exercises.bank.{slug}":
            raise
        raise KeyError(f"no exercises for lesson {slug!r}; known: {available_lessons()}") \
            from None


def available_lessons() -> list[str]:
    """Slugs of every lesson with a bank module, in course order where known."""
    from gpulesson.exercises import bank

    found = [m.name for m in pkgutil.iter_modules(bank.__path__) if not m.name.startswith("_")]
    order = course.SLUGS
    return sorted(found, key=lambda s: (order.index(s) if s in order else len(order), s))


class Lesson:
    """The exercises of one lesson, bound to a variant, as a notebook uses them.

    >>> lesson = load_lesson("parallelism_at_the_core")      # doctest: +SKIP
    >>> lesson.show(1)            # the live widget in Jupyter, static HTML on the site
    >>> lesson.check(1, "512")    # the same check without a widget: a Feedback

    Parameters
    ----------
    slug:
        the lesson slug.
    variant:
        class-variant seed; ``None`` uses :data:`settings.variant` (default: the lesson's
        own numbers).
    """

    def __init__(self, slug: str, variant: int | None = _UNSET) -> None:
        module = lesson_module(slug)
        self.slug = slug
        self.title: str = getattr(module, "TITLE", slug)
        self.variant = settings.variant if variant is _UNSET else variant
        self.exercises: list[Exercise] = [ex.variant(self.variant) for ex in module.EXERCISES]
        self._widgets: dict[int, Any] = {}
        self._predictions: dict[int, float] = {}

    def __len__(self) -> int:
        return len(self.exercises)

    def __iter__(self):  # noqa: ANN204 - iterator of Exercise
        return iter(self.exercises)

    def __repr__(self) -> str:
        return f"Lesson({self.slug!r}, variant={self.variant!r}, {len(self)} exercises)"

    def exercise(self, number: int) -> Exercise:
        """Exercise ``number`` (as numbered in the lesson)."""
        for ex in self.exercises:
            if ex.number == number:
                return ex
        raise KeyError(f"{self.slug} has no exercise {number!r}; it has "
                       f"{[e.number for e in self.exercises]}")

    def show(self, number: int, *, namespace: dict[str, Any] | None = None) -> Any:
        """The exercise as a live widget with a static rendering (an ``Interactive``)."""
        from gpulesson.exercises.widgets import ExerciseWidget

        widget = ExerciseWidget(self.exercise(number), lesson=self, namespace=namespace)
        self._widgets[number] = widget
        return widget

    def check(self, number: int, answer: Any) -> Feedback:
        """Check ``answer`` to exercise ``number`` and note it in the progress file.

        For a predict-then-run exercise this commits the prediction. For a code
        exercise pass the function itself: ``lesson.check(12, matmul_flops)``.
        """
        ex = self.exercise(number)
        feedback = ex.check(answer)
        if isinstance(ex, PredictExercise) and feedback.status == "committed":
            self._predictions[number] = feedback.value
        self._record(ex, feedback)
        return feedback

    def predict(self, number: int, prediction: Any) -> Feedback:
        """Commit a prediction for a predict-then-run exercise (same as :meth:`check`)."""
        if not isinstance(self.exercise(number), PredictExercise):
            raise TypeError(f"exercise {number} of {self.slug} is not a predict-then-run one")
        return self.check(number, prediction)

    def prediction(self, number: int) -> float | None:
        """The committed prediction (SI units), if any."""
        return self._predictions.get(number)

    def reveal(self, number: int, measured: float) -> Feedback:
        """Set the committed prediction for ``number`` against the ``measured`` value.

        Updates the exercise's widget when it is shown, notes progress, and returns the
        feedback (which displays as HTML in a notebook and on the site).
        """
        ex = self.exercise(number)
        if not isinstance(ex, PredictExercise):
            raise TypeError(f"exercise {number} of {self.slug} is not a predict-then-run one")
        feedback = ex.compare(self.prediction(number), measured)
        widget = self._widgets.get(number)
        if widget is not None:
            widget.show_comparison(feedback)
        if feedback.value is not None:
            self._record(ex, feedback)
        return feedback

    def _commit(self, number: int, value: float) -> None:
        self._predictions[number] = value

    def _record(self, ex: Exercise, feedback: Feedback) -> None:
        if feedback.status in ("invalid", "committed"):
            return
        from gpulesson.exercises.progress import record

        record(ex.id, feedback.status, variant=self.variant)

    def summary(self) -> str:
        """One line of local progress for this lesson."""
        from gpulesson.exercises.progress import progress_summary

        return progress_summary(self.slug)

    def code_exercises(self) -> list[CodeExercise]:
        return [ex for ex in self.exercises if isinstance(ex, CodeExercise)]


def load_lesson(slug: str, variant: int | None = _UNSET) -> Lesson:
    """The exercises of lesson ``slug`` (see :class:`Lesson`)."""
    return Lesson(slug, variant)
