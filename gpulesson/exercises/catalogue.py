"""The lessons that have exercises: their bank modules, in course order.

A lesson has exercises when ``gpulesson/exercises/bank/<slug>.py`` exists; the course
order is :data:`gpulesson.course.SLUGS`. Standard library only; imports no other module
of the package than the bank it lists.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from gpulesson import course
from gpulesson.exercises import bank

__all__ = ["available_lessons", "lesson_module"]


def available_lessons() -> list[str]:
    """Slugs of every lesson with a bank module, in course order where known (others
    after them, alphabetically)."""
    found = [m.name for m in pkgutil.iter_modules(bank.__path__) if not m.name.startswith("_")]
    order = course.SLUGS
    return sorted(found, key=lambda s: (order.index(s) if s in order else len(order), s))


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
        return importlib.import_module(f"{bank.__name__}.{slug}")
    except ModuleNotFoundError as error:
        if error.name != f"{bank.__name__}.{slug}":
            raise
        raise KeyError(f"no exercises for lesson {slug!r}; known: {available_lessons()}") \
            from None
