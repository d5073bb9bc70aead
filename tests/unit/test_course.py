"""gpulesson.course: the list of lessons every other part reads, its lookups and errors."""

from __future__ import annotations

import dataclasses
import json
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
    """Each lesson is found by its slug, numbered by its place, and titled as its notebook's
    first heading reads; the first lesson is ``parallelism_at_the_core``."""
    assert course.number("parallelism_at_the_core") == 1
    for info in course.LESSONS:
        assert course.lesson(info.slug) is info is course.LESSONS[course.number(info.slug) - 1]
        heading = json.loads((REPO / info.notebook).read_text(encoding="utf-8"))["cells"][0]
        assert f"# {course.title(info.slug)}\n" in "".join(heading["source"]), info.slug


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
