"""How long a lesson takes to study: its reading, its code, its exercises, its runs.

``book/how_to_use.md`` states a time per lesson; these helpers compute it from the lesson
itself, so the page follows the lessons (its figures are claims, ``test_book_pages.py``).
A lesson's *core* is what a learner must go through:

* reading: the words of the lesson's markdown outside folded dropdowns (answers to "Pause
  and think", asides, "Going further" boxes), at :data:`WORDS_PER_MINUTE`;
* code: the non-blank lines of the code cells a learner sees (not those folded or hidden
  by the tags ``hide-input``, ``hide-cell``, ``remove-input``, ``remove-cell``), each read
  as :data:`WORDS_PER_CODE_LINE` words;
* exercises: the exercises the exercise notebook shows before its "Going further" heading
  (all of them when it has none), :data:`EXERCISE_MINUTES` each by kind;
* running: :data:`MINUTES_FOR_CELLS` for running the cells and reading their output.

The total is rounded to the nearest 5 minutes.

Where the rates come from. The exercise minutes are the two reviewers' own per-exercise
times (``shared/reviews/lessons-1-5.md`` S1 and ``lessons-6-10.md`` "Study time per
lesson": 8-10 minutes for a code exercise, 10-15 for a kernel, 3-4 for the others); a line
of code as ten words is review 1's ratio (150 words against 15 code lines a minute). The
reading pace is *fitted*: :func:`fit_words_per_minute` finds the pace that best explains
the reviewers' minutes for the ten lessons as they reviewed them (:data:`CALIBRATION`),
and :func:`leave_one_out_errors` says how far each lesson's time lands when the pace is
fitted on the nine others. Over the ten lessons that error is about 18 minutes on average:
the two reviewers differ (review 2 took about a quarter longer for lessons of the same
size), which no count of the page explains, so the stated times carry that uncertainty.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpulesson.exercises import lesson_module

from .nbtools import cells, exercise_notebook, markdown, notebook

#: A line of visible code reads like this many words of prose (review 1: 150 words and
#: 15 lines of code a minute).
WORDS_PER_CODE_LINE = 10
#: Minutes per exercise by kind: write a function (``code``), a Numba kernel (``kernel``),
#: or anything else (compute a number, pick a choice, predict then run).
EXERCISE_MINUTES = {"code": 9.0, "kernel": 12.5, "other": 3.5}
#: Running a lesson's cells and reading their output, once through.
MINUTES_FOR_CELLS = 10
#: Code cells with these tags are not read: folded (``hide-input``, ``hide-cell``) or
#: left off the page.
HIDDEN_TAGS = frozenset({"hide-input", "hide-cell", "remove-input", "remove-cell"})

_FENCE = re.compile(r"^(`{3,}|:{3,})\s*(\S*)")
_SHOW = re.compile(r"lesson\.show\((\d+)\)")
_GOING_FURTHER = re.compile(r"^#+ Going further", re.M)


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


def visible_code_lines(slug: str) -> int:
    """Non-blank lines of the lesson's code cells that the page shows."""
    return sum(1 for cell in cells(notebook(slug)) if cell["cell_type"] == "code"
               and not HIDDEN_TAGS & set(cell.get("metadata", {}).get("tags", []))
               for line in "".join(cell["source"]).split("\n") if line.strip())


def core_exercises(slug: str) -> list[int]:
    """Numbers of the exercises the exercise notebook shows before "Going further"."""
    shown = []
    for cell in cells(exercise_notebook(slug)):
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown" and _GOING_FURTHER.search(source):
            break
        if cell["cell_type"] == "code":
            shown += [int(n) for n in _SHOW.findall(source)]
    return shown


def exercise_kind(exercise: object) -> str:
    """``"kernel"``, ``"code"`` or ``"other"``: the kind :data:`EXERCISE_MINUTES` prices."""
    if type(exercise).__name__ == "KernelExercise":
        return "kernel"
    return "code" if getattr(exercise, "kind", "") == "code" else "other"


@dataclass(frozen=True)
class Counts:
    """What a lesson's core holds: the model's inputs."""

    words: int
    code_lines: int
    exercises: dict[str, int]

    def fixed_minutes(self) -> float:
        """Exercises and running the cells: the minutes that do not depend on the pace."""
        return MINUTES_FOR_CELLS + sum(EXERCISE_MINUTES[k] * n
                                       for k, n in self.exercises.items())

    def word_equivalents(self) -> int:
        return self.words + WORDS_PER_CODE_LINE * self.code_lines

    def minutes(self, words_per_minute: float) -> float:
        return self.word_equivalents() / words_per_minute + self.fixed_minutes()


def counts(slug: str) -> Counts:
    """The lesson's core as it is now."""
    by_number = {ex.number: ex for ex in lesson_module(slug).EXERCISES}
    kinds = {"code": 0, "kernel": 0, "other": 0}
    for number in core_exercises(slug):
        kinds[exercise_kind(by_number[number])] += 1
    return Counts(reading_words(markdown(notebook(slug))), visible_code_lines(slug), kinds)


# ---------------------------------------------------------------------------------------
# Calibration: the reviewers' minutes for the lessons they reviewed


#: The ten lessons as the two reviews of 2026-12-06 saw them (counted with :func:`counts`
#: at main commit 2aed72d, the state both reviews describe), and each reviewer's estimate
#: of the time with exercises, in minutes (low, high): ``lessons-1-5.md`` "Study time"
#: (lesson 3: in Jupyter, with its kernels) and ``lessons-6-10.md`` "Study time per
#: lesson".
CALIBRATION: dict[str, tuple[Counts, tuple[float, float]]] = {
    "parallelism_at_the_core": (Counts(5469, 433, {"code": 2, "kernel": 0, "other": 13}),
                                (90, 105)),
    "roofline_and_tensor_cores": (Counts(4078, 251, {"code": 1, "kernel": 0, "other": 9}),
                                  (66, 75)),
    "inside_the_gpu": (Counts(3386, 308, {"code": 0, "kernel": 4, "other": 6}), (105, 120)),
    "memory_what_fits": (Counts(3807, 425, {"code": 2, "kernel": 0, "other": 9}), (75, 84)),
    "flops_and_scaling": (Counts(3507, 274, {"code": 1, "kernel": 0, "other": 11}), (66, 75)),
    "inference_and_kv_cache": (Counts(4230, 320, {"code": 1, "kernel": 0, "other": 11}),
                               (105, 120)),
    "distributed_math": (Counts(5989, 500, {"code": 1, "kernel": 0, "other": 10}),
                         (120, 150)),
    "cost_economics": (Counts(4214, 284, {"code": 1, "kernel": 0, "other": 9}), (90, 90)),
    "optimisations": (Counts(4813, 382, {"code": 1, "kernel": 0, "other": 9}), (105, 105)),
    "planning_dashboard": (Counts(4868, 366, {"code": 1, "kernel": 0, "other": 9}),
                           (120, 120)),
}


def fit_words_per_minute(calibration: dict[str, tuple[Counts, tuple[float, float]]]) -> float:
    """The reading pace that best explains the reviewers' minutes (least squares on the
    middle of each reviewer's range, after the fixed minutes of exercises and cells)."""
    xs = [c.word_equivalents() for c, _ in calibration.values()]
    ys = [(low + high) / 2 - c.fixed_minutes() for c, (low, high) in calibration.values()]
    minutes_per_word = sum(x * y for x, y in zip(xs, ys, strict=True)) / sum(x * x for x in xs)
    if not minutes_per_word > 0:
        raise ValueError("the calibration leaves no time for reading: check its counts")
    return 1 / minutes_per_word


def leave_one_out_errors(calibration: dict[str, tuple[Counts, tuple[float, float]]]
                         ) -> dict[str, float]:
    """Each lesson's predicted minus reviewed minutes, the pace fitted on the others."""
    errors = {}
    for slug, (c, (low, high)) in calibration.items():
        others = {s: v for s, v in calibration.items() if s != slug}
        errors[slug] = c.minutes(fit_words_per_minute(others)) - (low + high) / 2
    return errors


#: The fitted reading pace, rounded to 5 words a minute (``test_study_time.py`` checks
#: that it is :func:`fit_words_per_minute` of :data:`CALIBRATION`).
WORDS_PER_MINUTE = 190


def study_minutes(slug: str) -> int:
    """The lesson core's study time in minutes, rounded to 5."""
    return int(5 * round(counts(slug).minutes(WORDS_PER_MINUTE) / 5))


def mean_absolute(errors: dict[str, float]) -> float:
    return sum(abs(e) for e in errors.values()) / len(errors)


__all__ = ["CALIBRATION", "EXERCISE_MINUTES", "MINUTES_FOR_CELLS", "WORDS_PER_CODE_LINE",
           "WORDS_PER_MINUTE", "Counts", "core_exercises", "counts", "fit_words_per_minute",
           "leave_one_out_errors", "mean_absolute", "reading_words", "study_minutes",
           "visible_code_lines"]
