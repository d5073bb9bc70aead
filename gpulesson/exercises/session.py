"""The session settings of the exercises: solutions mode, class variant, progress file.

One :class:`Settings` object per Python session, :data:`settings`, read by
:class:`~gpulesson.exercises.lesson.Lesson`, the widgets and the progress file; an
instructor's student edition changes it with :func:`configure` in its first code cell.

Standard library only; imports nothing else of the package.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["SOLUTION_MODES", "Settings", "UNSET", "check_time_budget", "configure",
           "settings"]

#: When a learner sees worked solutions (see :class:`Settings`).
SOLUTION_MODES = ("on-request", "after-correct", "never")

#: The default of an argument that falls back to the session settings (``None`` is a
#: value of its own: "the lesson's own numbers", "the default file").
UNSET: Any = object()


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
        the class variant seed used by :func:`~gpulesson.exercises.lesson.load_lesson`
        (``None``: the lesson's own numbers).
    progress:
        keep the local progress file (see :mod:`gpulesson.exercises.progress`).
    progress_path:
        where to keep it (default ``./.gpulesson-progress.json``).
    time_budget:
        seconds one check of a code exercise may run in Jupyter before it is stopped
        (:class:`~gpulesson.exercises.guard.GuardedRunner`).
    """

    solutions: str = "on-request"
    variant: int | None = None
    progress: bool = True
    progress_path: str | None = None
    time_budget: float = 10.0


settings = Settings()


def configure(*, solutions: str | None = None, variant: int | None = UNSET,
              progress: bool | None = None, progress_path: str | None = UNSET,
              time_budget: float | None = None) -> Settings:
    """Change the session settings (an instructor's student edition calls this first).

    Arguments left out keep their value. Returns :data:`settings`.

    Raises
    ------
    ValueError
        for an unknown ``solutions`` mode, a negative ``variant`` or a ``time_budget``
        that is not a number of seconds in (0, 86400).
    """
    if solutions is not None:
        if solutions not in SOLUTION_MODES:
            raise ValueError(f"solutions must be one of {SOLUTION_MODES}, got {solutions!r}")
        settings.solutions = solutions
    if variant is not UNSET:
        if variant is not None and (isinstance(variant, bool) or not isinstance(variant, int)
                                    or variant < 0):
            raise ValueError(f"variant must be a non-negative integer or None, got {variant!r}")
        settings.variant = variant
    if progress is not None:
        if not isinstance(progress, bool):
            raise TypeError(f"progress must be True or False, got {progress!r}")
        settings.progress = progress
    if progress_path is not UNSET:
        settings.progress_path = None if progress_path is None else str(progress_path)
    if time_budget is not None:
        settings.time_budget = check_time_budget(time_budget)
    return settings


def check_time_budget(seconds: object) -> float:
    """``seconds`` as a float if it is a number of seconds in (0, 86400), else raise."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not (
        0 < seconds < 86_400
    ):
        raise ValueError(f"time_budget must be a number of seconds in (0, 86400), "
                         f"got {seconds!r}")
    return float(seconds)
