"""The one check path: check, guard, record, notice.

Every answer a learner gives goes through :func:`check_answer`, wherever it is given: a
notebook's :meth:`Lesson.check <gpulesson.exercises.lesson.Lesson.check>`, the Jupyter
widget (:class:`~gpulesson.exercises.widgets.ExerciseWidget`) and the site's worker
(:mod:`gpulesson.exercises.browser`). The four steps, in order:

1. **check**: the exercise's own :meth:`~gpulesson.exercises.core.Exercise.check`;
2. **guard**: run by a :class:`~gpulesson.exercises.guard.Runner` (a time budget and
   captured output in Jupyter, a plain call in the browser, whose page keeps the time),
   so that it never raises;
3. **record**: the caller's ``record(exercise, feedback)`` notes the answer (the progress
   file in a notebook, the record the page keeps on the site) and returns what the
   learner must be told once about it, if anything;
4. **notice**: that sentence is added to the feedback's details.

Standard library only (it runs in the browser).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from gpulesson.exercises.core import Exercise, Feedback
from gpulesson.exercises.guard import Runner

__all__ = ["Record", "check_answer", "with_notice"]

#: ``record(exercise, feedback) -> notice``: notes one answer, returns what the learner must
#: be told once (``None`` when nothing).
Record = Callable[[Exercise, Feedback], "str | None"]


def with_notice(feedback: Feedback, notice: str | None) -> Feedback:
    """``feedback`` with ``notice`` added to its details (as it is when ``None``)."""
    return replace(feedback, details=(*feedback.details, notice)) if notice else feedback


def check_answer(exercise: Exercise, answer: Any, *, runner: Runner,
                 record: Record | None = None) -> Feedback:
    """Check ``answer`` to ``exercise`` under ``runner``, note it with ``record`` and add
    its notice: the feedback the learner is shown. Never raises (the runner's contract;
    ``record`` must not raise either)."""
    feedback = runner(exercise, lambda: exercise.check(answer))
    notice = record(exercise, feedback) if record is not None else None
    return with_notice(feedback, notice)
