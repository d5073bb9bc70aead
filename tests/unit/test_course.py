"""gpulesson.course: the list of lessons every other part reads, its lookups and errors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gpulesson import course

REPO = Path(__file__).resolve().parents[2]


def test_lessons_are_numbered_from_one_in_course_order() -> None:
    """Lesson n is ``LESSONS[n - 1]``; slugs and titles are not repeated."""
    assert [info.number for info in course.LESSONS] == list(range(1, len(course.LESSONS) + 1))
    assert len(set(course.SLUGS)) == len(course.SLUGS) == len(course.LESSONS)
    assert len({info.title for info in course.LESSONS}) == len(course.LESSONS)


def test_lookups_by_slug() -> None:
    """CONTRIBUTING.md's table of lessons: lesson 3 is ``memory_what_fits``, "Memory: What
    Fits"; lesson 9 is ``planning_dashboard``, lesson 10, the last, ``inside_the_gpu``."""
    assert course.number("memory_what_fits") == 3
    assert course.title("memory_what_fits") == "Memory: What Fits"
    assert course.number("planning_dashboard") == 9
    assert course.number("inside_the_gpu") == 10 == len(course.LESSONS)
    for info in course.LESSONS:
        assert course.lesson(info.slug) is info is course.LESSONS[course.number(info.slug) - 1]
        assert course.title(info.slug) == info.title


def test_each_lesson_names_its_two_notebooks() -> None:
    for info in course.LESSONS:
        assert (REPO / info.notebook).is_file(), info.notebook
        assert (REPO / info.exercises).is_file(), info.exercises
        assert Path(info.notebook).stem == Path(info.exercises).stem == info.slug


@pytest.mark.parametrize("bad", ["roofline", "Memory_What_Fits", "", None, ["optimisations"]])
def test_an_unknown_slug_is_a_key_error_that_lists_the_lessons(bad: object) -> None:
    """Slugs are exact; anything else, even an unhashable value, is a KeyError naming the
    value and every slug."""
    for lookup in (course.lesson, course.number, course.title):
        with pytest.raises(KeyError) as err:
            lookup(bad)  # type: ignore[arg-type]
        message = str(err.value)
        assert f"no lesson {bad!r}" in message
        assert all(slug in message for slug in course.SLUGS)


def test_lesson_info_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        course.LESSONS[0].slug = "elsewhere"  # type: ignore[misc]
