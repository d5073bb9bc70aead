"""How long a lesson takes to study: its reading, its exercises, its runs.

``book/how_to_use.md`` states a time per lesson; these helpers compute it from the
lesson itself, so the page follows the lessons (see ``test_study_time.py``):

* reading: the words of the lesson's markdown outside folded dropdowns (answers to
  "Pause and think", asides), at :data:`WORDS_PER_MINUTE`, a careful pace for technical
  prose with formulas and tables (unfolding an aside is optional);
* exercises: :data:`MINUTES_PER_EXERCISE` for each exercise of the lesson's bank;
* running: :data:`MINUTES_FOR_CELLS` for running the cells and reading their output.

The total is rounded to the nearest 5 minutes.
"""

from __future__ import annotations

import re

from gpulesson.exercises import lesson_module

from .nbtools import markdown, notebook

#: Reading pace for technical prose, words per minute.
WORDS_PER_MINUTE = 150
#: Time per exercise: read, predict or compute, check, read the feedback.
MINUTES_PER_EXERCISE = 2
#: Running a lesson's cells and reading their output.
MINUTES_FOR_CELLS = 10

_FENCE = re.compile(r"^(`{3,}|:{3,})\s*(\S*)")


def reading_words(text: str) -> int:
    """Words of ``text`` outside dropdowns: an admonition or directive whose options say
    ``:class: dropdown`` is left out with everything nested in it."""
    words, stack = 0, []  # stack: (fence, folded) of open directives
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = _FENCE.match(line)
        if m and m.group(2):   # a directive opens; folded if its options say dropdown
            options = []
            for following in lines[i + 1:]:
                if not following.startswith(":"):
                    break
                options.append(following)
            stack.append((m.group(1), any("dropdown" in o for o in options)))
            continue
        if m and stack and m.group(1)[0] == stack[-1][0][0] and \
                len(m.group(1)) >= len(stack[-1][0]):
            stack.pop()
            continue
        if any(folded for _, folded in stack) or line.startswith(":"):
            continue
        words += len(line.split())
    return words


def study_minutes(slug: str) -> int:
    """The lesson's study time in minutes, rounded to 5."""
    text = markdown(notebook(slug))
    total = (reading_words(text) / WORDS_PER_MINUTE
             + MINUTES_PER_EXERCISE * len(lesson_module(slug).EXERCISES)
             + MINUTES_FOR_CELLS)
    return int(5 * round(total / 5))
