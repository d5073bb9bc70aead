"""The session settings of the exercises: solutions mode, class variant, progress file.

One :class:`Settings` object per Python session, :data:`settings`, read by
:class:`~gpulesson.exercises.lesson.Lesson`, the widgets and the progress file; an
instructor's student edition changes it with :func:`configure` in its first code cell.

Standard library only; imports nothing else of the package.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["SOLUTION_MODES", "Settings", "UNSET", "configure", "settings"]

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
    """

    solutions: str = "on-request"
    variant: int | None = None
    progress: bool = True
    progress_path: str | None = None


settings = Settings()


def configure(*, solutions: str | None = None, variant: int | None = UNSET,
              progress: bool | None = None, progress_path: str | None = UNSET) -> Settings:
    """Change the session settings (an instructor's student edition calls this first).

    Arguments left out keep their value. Returns :data:`settings`.

    Raises
    ------
    ValueError
        for an unknown ``solutions`` mode or a negative ``variant``.
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
        settings.progress = bool(progress)
    if progress_path is not UNSET:
        settings.progress_path = None if progress_path is None else str(progress_path)
    return settings
