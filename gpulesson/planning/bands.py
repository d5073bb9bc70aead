"""How far to trust a training plan: its band, from the runs most like it.

A plan's MFU is a prediction; the course states beside it how far the planner missed on
the published runs most like the plan, each predicted by factors that never saw it. Two
kinds of run qualify: every run of the validation set, predicted by the factors fitted
on all the others (:func:`gpulesson.planning.published.leave_one_out`), and every run
held out of the fit altogether: the later releases
(:func:`gpulesson.planning.heldout.held_out_rows`, as its recipe runs it) and the runs of
papers, READMEs and MLPerf logs outside the fit
(:func:`gpulesson.planning.heldout.paper_rows`).
:func:`validation_rows` holds them all; :func:`similar_runs` picks the nearest,
:func:`uncertainty` gives the band and :func:`mfu_range` the MFU range it implies.

Taught in: ``notebooks/planning_dashboard.ipynb`` (the dashboard's "MFU uncertainty").
"""

from __future__ import annotations

import math
from functools import cache

from gpulesson import _validate as v

from .heldout import held_out_rows, paper_rows
from .published import LeaveOneOut, leave_one_out
from .training import TrainingPlan

__all__ = ["NEAREST", "mfu_range", "similar_runs", "uncertainty", "validation_rows"]

#: How many runs a plan's band is taken from (:func:`similar_runs`).
NEAREST = 3


@cache
def validation_rows() -> tuple[LeaveOneOut, ...]:
    """Every run the planner predicted without having been fitted on it: the validation
    set left out one at a time, then the held-out releases and the papers' runs."""
    return leave_one_out() + held_out_rows() + paper_rows()


def similar_runs(plan: TrainingPlan) -> tuple[LeaveOneOut, ...]:
    """The runs most like ``plan`` (:func:`validation_rows`): of the runs with the same
    precision and the same kind of model (dense or mixture-of-experts), or all runs where
    fewer than :data:`NEAREST` are, the :data:`NEAREST` closest in active parameters (by
    their ratio, so that 7B is as far from 14B as 200B from 400B); at equal size, those on
    the plan's GPU generation first. A 7B plan on H100s is thus held against the 7B and 8B
    runs, not against 405B runs that share its GPU."""
    if not isinstance(plan, TrainingPlan):
        raise TypeError(f"plan must be a TrainingPlan, got {type(plan).__name__}")
    rows = validation_rows()
    like = [r for r in rows if (r.precision, r.moe) == (plan.settings.precision, plan.moe)]
    if len(like) < NEAREST:
        like = list(rows)
    size = max(plan.active_params, 1.0)

    def distance(r: LeaveOneOut) -> tuple[float, bool]:
        return abs(math.log(max(r.active_params, 1.0) / size)), r.architecture != plan.architecture

    return tuple(sorted(like, key=distance)[:NEAREST])


def uncertainty(plan: TrainingPlan) -> tuple[float, int]:
    """(band, runs): the largest |error| among the runs most like ``plan``
    (:func:`similar_runs`: same precision and kind of model, nearest in size), so that a
    plan reads "MFU x, within +-band"."""
    like = similar_runs(plan)
    return max(abs(r.error) for r in like), len(like)


def mfu_range(plan: TrainingPlan) -> tuple[float, float]:
    """(low, high): the MFU ``plan`` may reach, given how far its prediction missed the
    runs most like it (:func:`similar_runs`).

    An error is predicted / published - 1, so it says what the *published* figure was,
    not the prediction's spread: a run predicted 25 % too high reached ``mfu / 1.25``, and
    one predicted 100 % too high (Qwen3 30B-A3B on H100s) half the prediction, not zero.
    The range divides and multiplies the plan's MFU by the largest ratio between
    prediction and publication among those runs, ``max(1 + e, 1 / (1 + e))``: 56.9 %
    within 25 % reads 45.5-71.1 %, never below zero whatever the error. (``mfu * (1 -
    band)`` with :func:`uncertainty`'s band reaches 0 % at a band of 100 %.)"""
    like = similar_runs(plan)
    factor = max(max(1 + r.error, 1 / (1 + r.error)) for r in like)
    return plan.mfu / factor, plan.mfu * factor


v.guard_module(globals())
