"""Small stand-alone exercises whose right and wrong answers are obvious by construction.

The tests of the core, the rendering and the widgets pin each behaviour on these; the
bank's real exercises are tested in ``test_bank.py``. The references here are stand-ins
(``2 bytes x n``, ``2·m·k·n``), not calculators of the course.
"""

from __future__ import annotations

from typing import Any

from gpulesson.exercises import ChoiceExercise, CodeExercise, Mistake, NumericExercise
from gpulesson.exercises.mistakes import counted_macs, gib_as_gb


def weights_exercise(**overrides: Any) -> NumericExercise:
    """Weights of n parameters at 2 bytes each: 7e9 -> 14 GB."""
    fields: dict[str, Any] = dict(
        lesson="demo", number=1, title="Weights", question="Weights of {n:,.0f} parameters?",
        solution="{n:,.0f} × 2 bytes = {answer}", answer=lambda p: p["n"] * 2,
        dimension="bytes", unit="GB", defaults={"n": 7e9},
        hints=("How many bytes does one FP16 number take?", "Multiply by {n:,.0f}."),
        mistakes=(gib_as_gb(lambda p: p["n"] * 2 * 1e9 / 2**30),
                  Mistake("one_byte", "One byte per parameter is INT8, not FP16.",
                          lambda p: p["n"])),
        sample=lambda rng: {"n": rng.choice([1e9, 3e9, 7e9, 13e9, 70e9])},
    )
    fields.update(overrides)
    return NumericExercise(**fields)


def fit_exercise() -> ChoiceExercise:
    """Does a 14 GB model fit on a 24 GB card? Yes; the declared mistake says no."""
    return ChoiceExercise(
        lesson="demo", number=3, title="Fit", question="Does {gb} GB fit on {mem} GB?",
        solution="s", defaults={"gb": 14, "mem": 24},
        options=[("yes", "Yes, with {mem} GB"), ("no", "No")],
        answer=lambda p: "yes" if p["gb"] <= p["mem"] else "no",
        mistakes=(Mistake("fp32", "FP32 doubles it.", lambda p: "no"),),
    )


def _ref(m: int, k: int, n: int) -> int:
    return 2 * m * k * n


def flops_code_exercise() -> CodeExercise:
    """Write matmul_flops(m, k, n); the first example is (2, 3, 4) -> 48."""
    return CodeExercise(
        lesson="demo", number=6, title="FLOPs", question="Write matmul_flops.", solution="s",
        function_name="matmul_flops", signature="m, k, n", reference=_ref,
        sample_input=lambda rng: {"m": rng.randint(1, 64), "k": rng.randint(1, 64),
                                  "n": rng.randint(1, 64)},
        examples=({"m": 2, "k": 3, "n": 4},),
        mistakes=(counted_macs(lambda i: i["m"] * i["k"] * i["n"]),
                  Mistake("exact_count", "Convention: 2K per cell.",
                          lambda i: i["m"] * i["n"] * (2 * i["k"] - 1))),
        model_solution=lambda m, k, n: 2 * m * k * n,
    )
