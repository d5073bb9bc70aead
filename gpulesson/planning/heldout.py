"""Runs of later releases that the training model is never fitted on: a time split.

``gpulesson/data/heldout_runs.json`` holds NVIDIA Megatron-Bridge's pre-training rows of
NeMo releases 26.04.01 to 26.08 (2026), each with its recipe read at the commit that
published its table. The factors are fitted on ``gpulesson/data/training_runs.json`` only
(the papers and releases up to 25.11, :func:`~gpulesson.planning.training.default_factors`);
:func:`held_out_rows` plans each held-out run on its published layout twice: as its recipe
runs it (the switches in its ``options``: a whole-step CUDA graph, the experts' fused MLP,
FP8 attention, the all-to-all hidden behind compute) and with those switches off
(:data:`SWITCHES_OFF`), to show what they account for.

Taught in: ``notebooks/planning_dashboard.ipynb`` (predicted against published, "Runs the
fit never saw"); ``benchmarks/bench_heldout.py`` prints the same table.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

from gpulesson import _validate as v

from .published import Comparison, LeaveOneOut, _fit_flag, _table_head, _table_row
from .runs import _run
from .training import default_factors, plan_run

__all__ = ["SWITCHES_OFF", "HeldOut", "format_held_out_table", "held_out", "held_out_rows",
           "held_out_summary"]

#: The options that describe a release's software rather than the run's layout, as
#: :func:`~gpulesson.planning.plan_training` takes them when they are off.
SWITCHES_OFF = {"cuda_graphs": "none", "fused_expert_mlp": False, "fp8_attention": False,
                "overlap": None}


@cache
def held_out() -> tuple[Mapping[str, object], ...]:
    """The held-out entries, as ``training_runs.json`` spells them (read once)."""
    text = resources.files("gpulesson").joinpath("data/heldout_runs.json").read_text(
        encoding="utf-8")
    return tuple(json.loads(text)["runs"])


@dataclass(frozen=True)
class HeldOut(LeaveOneOut):
    """One held-out run, shaped as a leave-one-out row (its published MFU, the MFU
    planned as its recipe runs it, ``error`` = predicted / published - 1, the dominant
    term, whether its layout fits), with the error when the recipe's switches are off
    (``plain_error``) and the switches it states."""

    plain_error: float = 0.0
    switches: tuple[str, ...] = ()


@cache
def held_out_rows() -> tuple[HeldOut, ...]:
    """Every held-out run, planned with the factors fitted on the published set only."""
    factors = default_factors()
    rows = []
    for entry in held_out():
        run = _run(entry)
        plan = plan_run(run, factors=factors)
        plain = plan_run(run, factors=factors, **SWITCHES_OFF)
        rows.append(HeldOut(
            name=run.name, published_mfu=run.published_mfu, predicted_mfu=plan.mfu,
            dominant=plan.dominant_term, feasible=plan.feasible,
            architecture=run.architecture, precision=run.precision, moe=run.is_moe,
            active_params=plan.active_params, plain_error=Comparison(run, plain).error,
            switches=tuple(k for k in SWITCHES_OFF if k in run.options)))
    return tuple(rows)


def held_out_summary(errors: Sequence[float]) -> dict[str, float]:
    """Median and largest |error|, and how many are within 25 %."""
    size = [abs(e) for e in errors]
    return {"runs": len(size), "median": statistics.median(size), "max": max(size),
            "within_25": sum(e <= 0.25 for e in size)}


def format_held_out_table(rows: Sequence[HeldOut] | None = None) -> str:
    """The held-out table as text: run, quoted MFU, the MFU planned as its recipe runs it,
    its error and the error with the switches off; then two summary lines. Within
    :data:`~gpulesson.planning.published.TABLE_WIDTH` characters, as the lesson's other
    table."""
    rows = held_out_rows() if rows is None else rows
    width, head = _table_head(rows)
    lines = [f"{head}{'plain':>7s}"]
    lines += [f"{_table_row(r, width)}{r.plain_error:>+7.0%}{_fit_flag(r)}" for r in rows]
    for label, errors in (("as their recipes run", [r.error for r in rows]),
                          ("switches left off", [r.plain_error for r in rows])):
        s = held_out_summary(errors)
        lines.append(f"{label}: median |error| {s['median']:.1%}, largest {s['max']:.0%}, "
                     f"{s['within_25']} of {s['runs']} within 25 %")
    return "\n".join(lines)


v.guard_module(globals())
