"""A lesson's exercises, as a notebook uses them: :func:`load_lesson` and :class:`Lesson`.

Standard library only at import time. :meth:`Lesson.show` imports the widget layer
(:mod:`gpulesson.exercises.widgets`, which needs ipywidgets) when it is called, so that
everything else here also runs where ipywidgets is not installed (Pyodide, a plain
``python``).
"""

from __future__ import annotations

from typing import Any

from gpulesson.exercises import progress
from gpulesson.exercises.catalogue import lesson_module
from gpulesson.exercises.checking import check_answer, with_notice
from gpulesson.exercises.core import CodeExercise, Exercise, Feedback, PredictExercise
from gpulesson.exercises.guard import Runner, default_runner
from gpulesson.exercises.render import RenderedFeedback, rendered
from gpulesson.exercises.session import UNSET, settings

__all__ = ["Lesson", "load_lesson"]


class Lesson:
    """The exercises of one lesson, bound to a variant, as a notebook uses them.

    >>> lesson = load_lesson("parallelism_at_the_core")      # doctest: +SKIP
    >>> lesson.show(1)            # the live widget in Jupyter, static HTML on the site
    >>> lesson.check(2, "48")     # the same check without a widget: a Feedback

    Parameters
    ----------
    slug:
        the lesson slug.
    variant:
        class-variant seed, or ``None`` for the lesson's own numbers; left out, the
        session's :attr:`~gpulesson.exercises.session.Settings.variant`.
    runner:
        how checks run (:mod:`gpulesson.exercises.guard`): by default under guard in
        Jupyter (a time budget, printed output captured) and as a plain call in the
        browser, whose Web Worker keeps the time.
    """

    def __init__(self, slug: str, variant: int | None = UNSET, *,
                 runner: Runner | None = None) -> None:
        module = lesson_module(slug)
        self.slug = slug
        self.title: str = getattr(module, "TITLE", slug)
        self.variant = settings.variant if variant is UNSET else variant
        self.runner: Runner = default_runner() if runner is None else runner
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
        """The exercise as a live widget with a static rendering (an ``Interactive``).

        The widget reports each answer back through :meth:`record`. ``namespace`` is
        where a code exercise looks its function up (default: the notebook's).
        """
        # the one import kept inside a function: the widget layer needs ipywidgets
        from gpulesson.exercises.widgets import ExerciseWidget

        widget = ExerciseWidget(self.exercise(number), lesson=self, namespace=namespace)
        self._widgets[number] = widget
        return widget

    def check(self, number: int, answer: Any) -> RenderedFeedback:
        """Check ``answer`` to exercise ``number`` and note it in the progress file.

        For a predict-then-run exercise this commits the prediction. For a code
        exercise pass the function itself: ``lesson.check(3, matmul_flops)``; it runs
        under :attr:`runner` (a time budget, printed output captured and shown).
        """
        return rendered(check_answer(self.exercise(number), answer, runner=self.runner,
                                     record=self.noted))

    def predict(self, number: int, prediction: Any) -> RenderedFeedback:
        """Commit a prediction for a predict-then-run exercise (same as :meth:`check`)."""
        if not isinstance(self.exercise(number), PredictExercise):
            raise TypeError(f"exercise {number} of {self.slug} is not a predict-then-run one")
        return self.check(number, prediction)

    def record(self, number: int, feedback: Feedback) -> str | None:
        """Take note of ``feedback`` on an answer to exercise ``number``.

        A committed prediction is kept for :meth:`reveal`; a graded answer (not an
        unreadable one, nor a check that timed out or was interrupted) goes to the
        progress file. :meth:`check` calls this; so does the exercise's widget, which
        checks answers itself. Returns what the learner must be told once about the
        progress file (it was unreadable and moved aside), else ``None``.
        """
        ex = self.exercise(number)
        if isinstance(ex, PredictExercise) and feedback.status == "committed":
            self._predictions[number] = feedback.value
        if feedback.graded:
            progress.record(ex.id, feedback.status, variant=self.variant)
        return progress.take_notice()

    def noted(self, exercise: Exercise, feedback: Feedback) -> str | None:
        """:meth:`record` as :func:`~gpulesson.exercises.checking.check_answer` calls it."""
        return self.record(exercise.number, feedback)

    def solved_before(self, number: int) -> str | None:
        """When exercise ``number`` was first answered correctly, as the progress file
        says (``"2026-12-06T13:38:04"``), for these numbers (this variant); ``None`` when it
        was not, or progress is off. Never raises."""
        if not progress.enabled():
            return None
        entry = progress.load_progress()["exercises"].get(self.exercise(number).id)
        if not progress.is_done(entry) or entry.get("variant") != self.variant:
            return None
        done_at = entry.get("done_at")
        return done_at if isinstance(done_at, str) else ""

    def prediction(self, number: int) -> float | None:
        """The committed prediction (SI units), if any."""
        return self._predictions.get(number)

    def reveal(self, number: int, measured: float) -> RenderedFeedback:
        """Set the committed prediction for ``number`` against the ``measured`` value.

        Updates the exercise's widget when it is shown, notes progress, and returns the
        feedback (which displays as HTML in a notebook and on the site).
        """
        ex = self.exercise(number)
        if not isinstance(ex, PredictExercise):
            raise TypeError(f"exercise {number} of {self.slug} is not a predict-then-run one")
        feedback = ex.compare(self.prediction(number), measured)
        if feedback.value is not None:
            feedback = with_notice(feedback, self.record(number, feedback))
        widget = self._widgets.get(number)
        if widget is not None:
            widget.show_comparison(feedback)
        return rendered(feedback)

    def summary(self) -> str:
        """One line of local progress for this lesson."""
        return progress.progress_summary(self.slug)

    def code_exercises(self) -> list[CodeExercise]:
        """The lesson's code exercises, in order."""
        return [ex for ex in self.exercises if isinstance(ex, CodeExercise)]


def load_lesson(slug: str, variant: int | None = UNSET, *,
                runner: Runner | None = None) -> Lesson:
    """The exercises of lesson ``slug`` (see :class:`Lesson`)."""
    return Lesson(slug, variant, runner=runner)
