"""gpulesson.exercises.catalogue: which lessons have exercises, in course order."""

from __future__ import annotations

import pytest

from gpulesson import course
from gpulesson.exercises import available_lessons, lesson_module


def test_every_lesson_of_the_course_has_exercises_in_course_order():
    assert available_lessons() == list(course.SLUGS)


def test_lessons_missing_from_the_course_order_come_last(monkeypatch):
    first, *others = course.SLUGS
    order = tuple(reversed(others))
    monkeypatch.setattr(course, "SLUGS", order)
    assert available_lessons() == [*order, first]


def test_lesson_module_is_the_bank_module():
    module = lesson_module("parallelism_at_the_core")
    assert module.__name__ == "gpulesson.exercises.bank.parallelism_at_the_core"
    assert module.LESSON == "parallelism_at_the_core"


@pytest.mark.parametrize("slug", ["no_such_lesson", "not a slug", 3, "../core"])
def test_unknown_lessons_name_the_known_ones(slug):
    with pytest.raises(KeyError, match="parallelism_at_the_core"):
        lesson_module(slug)
