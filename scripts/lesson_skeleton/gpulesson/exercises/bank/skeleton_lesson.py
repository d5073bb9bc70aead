"""Exercises of the lesson *Skeleton Lesson*.

The exercise notebook is ``exercises/skeleton_lesson.ipynb``. Written by ``make lesson``
from ``scripts/lesson_skeleton/``: one exercise, whose answer, hints and worked solution
come from the calculators (:mod:`gpulesson.memory`, :mod:`gpulesson.transformer`). Add the
lesson's own, numbered on; the package docstring of :mod:`gpulesson.exercises` says how.
Standard library only.
"""

from __future__ import annotations

from typing import Any

from gpulesson import course, memory, transformer
from gpulesson.exercises import core, mistakes, wording
from gpulesson.exercises.bank._common import P, config

LESSON = "skeleton_lesson"
TITLE = course.title(LESSON)


def _params(p: P) -> int:
    return transformer.param_count(config(p))


def _weights(p: P) -> float:
    return memory.weight_bytes(_params(p), precision=p["precision"])


def _derived(p: P) -> dict[str, Any]:
    return {"label": wording.model_label(p["model"]), "count": wording.count(_params(p)),
            "format": wording.precision_label(p["precision"]),
            "per_param": core.format_number(memory.precision_bytes(p["precision"]))}


weights = core.NumericExercise(
    lesson=LESSON, number=1, title="The weights of {label} in {format}",
    question="{label} has {count} parameters. How many GB (10^9 bytes) do they take in "
             "{format}?",
    hints=("Weights take parameters × bytes per parameter.",
           "{format} keeps {per_param} bytes per parameter; a GB is 10^9 bytes."),
    solution="{count} × {per_param} bytes = **{answer}**.",
    answer=_weights,
    derived=_derived,
    mistakes=(mistakes.gib_as_gb(lambda p: _weights(p) * 1e9 / 2**30),),
    defaults={"model": "llama-3-8b", "precision": "fp32"},
    sample=lambda rng: {"model": rng.choice(["llama-2-13b", "llama-3-8b", "mistral-7b"]),
                        "precision": rng.choice(["fp32", "bf16", "int8"])},
    dimension="bytes", unit="GB",
)

EXERCISES = (weights,)

__all__ = ["EXERCISES", "LESSON", "TITLE"]
