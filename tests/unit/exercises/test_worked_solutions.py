"""Every code exercise's worked solution, as a learner meets it, passes its own check.

One test for every code exercise of every bank (issue 32, item 7): the worked solution a
learner reads (in the notebook's widget, on the site and in the answer key, all
``model_solution_source``) must define the function the exercise asks for, by that name,
and pasting it where the learner writes code must be marked correct:

* on the site, through :func:`gpulesson.exercises.browser.check_code`, with the pasteable
  text the page offers (:func:`~gpulesson.exercises.browser.learner_solution`);
* a kernel exercise (written for Numba's ``cuda``) through the notebook's path instead:
  the exercise notebook's set-up cell (``load_lesson``, and ``cuda`` from the course's
  runtime), then the worked solution pasted in place of the cell that holds the kernel's
  stub (its own ``from numba import cuda`` and constants included), then the exercise's
  widget looks the kernel up by name and its **Check** button checks it.

Lesson 1's exercise 3 once showed ``def _matmul_flops_model(...)`` for ``matmul_flops``:
pasted on the site, it was answered "Your code defines no function matmul_flops".
"""

from __future__ import annotations

import linecache
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest

from gpulesson.exercises import browser, lesson_module
from gpulesson.exercises.catalogue import available_lessons
from gpulesson.exercises.core import CodeExercise
from gpulesson.exercises.kernel import KernelExercise
from gpulesson.exercises.render import answer_key_markdown
from gpulesson.kernelcheck import numba_cuda

REPO = Path(__file__).resolve().parents[3]
CODE_EXERCISES = [ex for slug in available_lessons()
                  for ex in lesson_module(slug).EXERCISES if isinstance(ex, CodeExercise)]


def _defines(source: str, name: str) -> bool:
    return re.search(rf"^def {re.escape(name)}\(", source, re.M) is not None


def _notebook_check(ex: KernelExercise, source: str) -> Any:
    """The kernel as the exercise notebook runs it: its set-up cell (the one that loads the
    lesson), then ``source`` where the notebook has the kernel's stub; the widget's Check
    button looks the kernel up by its name and checks it."""
    code = [cell.source for cell in nbformat.read(
        REPO / "exercises" / f"{ex.lesson}.ipynb", as_version=4).cells if cell.cell_type == "code"]
    setup = [src for src in code if "load_lesson(" in src]
    stub = [src for src in code if _defines(src, ex.function_name)]
    assert len(setup) == 1, f"{ex.lesson}: expected one set-up cell, found {len(setup)}"
    assert stub, f"{ex.id}: the exercise notebook has no cell defining {ex.function_name}"
    assert f"lesson.show({ex.number})" in "\n".join(code), f"{ex.id} is not shown"
    # the learner's cell imports Numba, which picks its target once per process: let it
    # pick as the course does (the simulator without a GPU), so that the Numba tests run
    # later in this process find that target. The checker runs the kernel in the course's
    # runtime whichever target ``numba.cuda`` is.
    numba_cuda()
    namespace: dict[str, Any] = {"__name__": "__main__"}
    for name, text in (("set-up", setup[0]), ("learner", source)):
        filename = f"<cell: {ex.id} {name}>"  # Jupyter keeps each cell's text like this,
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        exec(compile(text, filename, "exec"), namespace)  # so the checker can read it
    ui = namespace["lesson"].show(ex.number, namespace=namespace)
    ui.check_button.click()
    return ui.last


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
