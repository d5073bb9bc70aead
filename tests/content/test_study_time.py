"""The study-time estimate of ``book/how_to_use.md`` (``study_time.py``): what it counts."""

from __future__ import annotations

from .study_time import WORDS_PER_MINUTE, reading_words, study_minutes


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


def test_every_lesson_is_estimated_at_whole_five_minutes() -> None:
    from gpulesson.course import SLUGS

    for slug in SLUGS:
        minutes = study_minutes(slug)
        assert minutes % 5 == 0 and 30 <= minutes <= 120, (slug, minutes)
    assert WORDS_PER_MINUTE == 150
