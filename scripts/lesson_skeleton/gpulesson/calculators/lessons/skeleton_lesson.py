"""The calculators of the lesson ``skeleton_lesson``: the bytes of a model's weights.

Written by ``make lesson`` from ``scripts/lesson_skeleton/``: replace the entry with the
lesson's own (the package docstring of :mod:`gpulesson.calculators.lessons` says how).
"""

from __future__ import annotations

from typing import Any

from gpulesson import memory
from gpulesson.calculators import shared
from gpulesson.calculators.spec import Calculator

LESSON = "skeleton_lesson"


def _weights(**kw: Any) -> dict[str, Any]:
    return {"weights": memory.weight_bytes(kw["n_params"], precision=kw["precision"])}


WEIGHTS = Calculator(
    name="skeleton_lesson_weights",
    title="The bytes of a model's weights",
    description="Parameters times the bytes of the number format they are stored in.",
    lesson=LESSON,
    inputs=(*shared.params_inputs(), shared.storage_input("precision", "Weights precision")),
    outputs=(shared.WEIGHTS_OUT,),
    function=_weights,
)

ENTRIES = (WEIGHTS,)
