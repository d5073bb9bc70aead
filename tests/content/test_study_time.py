"""The study-time model of ``book/how_to_use.md`` (``study_time.py``): what it counts and
that its pace is fitted. What the page states of it (every lesson's time, the rates, the
leave-one-out error) is a claim of the page, in ``test_book_pages.py``."""

from __future__ import annotations

from gpulesson.course import SLUGS

from .study_time import (
    CALIBRATION,
    EXERCISE_MINUTES,
    MINUTES_FOR_CELLS,
    WORDS_PER_CODE_LINE,
    WORDS_PER_MINUTE,
    Counts,
    core_exercises,
    counts,
    fit_words_per_minute,
    leave_one_out_errors,
    mean_absolute,
    reading_words,
    study_minutes,
)

#: The lessons whose core is kept to one sitting here (issue 32: about 90 minutes); the
#: other lessons' helpers keep theirs.
ONE_SITTING = ("parallelism_at_the_core", "roofline_and_tensor_cores", "memory_what_fits",
               "flops_and_scaling", "inference_and_kv_cache", "distributed_math",
               "cost_economics", "optimisations")


def test_folded_boxes_are_not_counted_but_open_ones_are() -> None:
    text = """Four words of prose.

::::{admonition} Pause and think
:class: tip
Three open words.

:::{admonition} Answer
:class: dropdown
These five words are folded.
:::
::::

:::{admonition} Why above the roof?
:class: dropdown

Folded too.
:::
Two more."""
    assert reading_words(text) == 4 + 3 + 2  # directive lines and folds are not read


def test_a_lesson_costs_its_reading_its_code_its_exercises_and_its_runs() -> None:
    lesson = Counts(words=1900, code_lines=190, exercises={"code": 1, "kernel": 0, "other": 2})
    reading = (1900 + WORDS_PER_CODE_LINE * 190) / WORDS_PER_MINUTE
    assert lesson.minutes(WORDS_PER_MINUTE) == reading + EXERCISE_MINUTES["code"] + \
        2 * EXERCISE_MINUTES["other"] + MINUTES_FOR_CELLS


def test_the_pace_is_fitted_on_the_reviewed_lessons() -> None:
    """The pace is the least-squares fit on the ten reviewed lessons (rounded to 5), each a
    lesson of the course, and each can be left out of the fit (the error that leaves,
    and every lesson's time, are claims of ``book/how_to_use.md`` in
    ``test_book_pages.py``)."""
    fitted = fit_words_per_minute(CALIBRATION)
    assert WORDS_PER_MINUTE == 5 * round(fitted / 5), fitted
    errors = leave_one_out_errors(CALIBRATION)
    assert len(errors) == len(CALIBRATION) == 10 and set(CALIBRATION) <= set(SLUGS)
    assert mean_absolute(errors) > 0


def test_the_fit_refuses_a_calibration_with_no_time_to_read() -> None:
    quick = {"x": (Counts(1000, 10, {"code": 9, "kernel": 0, "other": 0}), (30.0, 30.0))}
    try:
        fit_words_per_minute(quick)
    except ValueError as error:
        assert "no time for reading" in str(error)
    else:
        raise AssertionError("a calibration whose exercises take all the time was fitted")


def test_going_further_exercises_are_left_out_of_the_core() -> None:
    core = core_exercises("parallelism_at_the_core")
    assert core == list(range(1, 12)), core  # 12-15 come under "Going further"
    assert sum(counts("parallelism_at_the_core").exercises.values()) == len(core)


def test_these_lessons_fit_one_sitting() -> None:
    minutes = {slug: study_minutes(slug) for slug in ONE_SITTING}
    assert all(m <= 90 for m in minutes.values()), minutes
