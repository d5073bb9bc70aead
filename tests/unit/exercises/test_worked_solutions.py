"""Every code exercise's worked solution, as a learner meets it, passes its own check.

One test for every code exercise of every bank (issue 32, item 7): the worked solution a
learner reads (in the notebook's widget, on the site and in the answer key, all
``model_solution_source``) must define the function the exercise asks for, by that name,
and pasting it where the learner writes code must be marked correct:

* on the site, through :func:`gpulesson.exercises.browser.check_code`, with the pasteable
  text the page offers (:func:`~gpulesson.exercises.browser.learner_solution`);
* a kernel exercise (written for Numba's ``cuda``) through the notebook's path instead:
  the exercise notebook's set-up defines ``cuda`` (:func:`gpulesson.kernelcheck.numba_cuda`)
  and the kernel's constants, the learner's cell defines the kernel, and
  :meth:`Lesson.check <gpulesson.exercises.lesson.Lesson.check>` looks at it.

Lesson 1's exercise 3 once showed ``def _matmul_flops_model(...)`` for ``matmul_flops``:
pasted on the site, it was answered "Your code defines no function matmul_flops".
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nbformat
import pytest

from gpulesson.exercises import browser, lesson_module
from gpulesson.exercises.catalogue import available_lessons
from gpulesson.exercises.core import CodeExercise
from gpulesson.exercises.kernel import KernelExercise
from gpulesson.exercises.lesson import Lesson
from gpulesson.exercises.render import answer_key_markdown

REPO = Path(__file__).resolve().parents[3]
CODE_EXERCISES = [ex for slug in available_lessons()
                  for ex in lesson_module(slug).EXERCISES if isinstance(ex, CodeExercise)]


def _defines(source: str, name: str) -> bool:
    return re.search(rf"^def {re.escape(name)}\(", source, re.M) is not None


def _notebook_check(ex: KernelExercise, source: str) -> Any:
    """The kernel as the exercise notebook runs it: its set-up cell (which defines ``cuda``
    and ``float32``), the kernel's constants, then the learner's cell; checked by name."""
    setup = next(cell for cell in nbformat.read(REPO / "exercises" / f"{ex.lesson}.ipynb",
                                                as_version=4).cells
                 if cell.cell_type == "code" and "numba_cuda()" in cell.source)
    namespace: dict[str, Any] = {}
    exec(compile(setup.source, "the set-up cell", "exec"), namespace)  # the course's own
    namespace.update(getattr(ex.model_solution, "constants", {}))
    exec(compile(source, "the learner's cell", "exec"), namespace)
    return Lesson(ex.lesson, variant=None).check(ex.number, namespace[ex.function_name])


@pytest.mark.parametrize("ex", CODE_EXERCISES, ids=lambda e: e.id)
def test_the_worked_solution_defines_the_asked_function_and_passes(
        ex: CodeExercise, clean_session: Any) -> None:
    shown = ex.model_solution_source()
    assert _defines(shown, ex.function_name), (
        f"{ex.id}: the worked solution must define {ex.function_name}(...), it shows:\n"
        f"{shown[:200]}")
    key = answer_key_markdown([ex], title="key")
    assert _defines(key, ex.function_name), f"{ex.id}: the answer key shows another name"
    if isinstance(ex, KernelExercise):
        feedback = _notebook_check(ex, shown)
        assert feedback.status == "correct", feedback.message
        return
    answer = browser.check_code(f"{ex.lesson}:{ex.number}", browser.learner_solution(ex))
    assert answer["status"] == "correct", answer["message"]
