"""Fit the performance model's factors on the published runs, and test it leave-one-out.

The step time of a plan is linear in a handful of factors, one per term of
:mod:`gpulesson.planning.perf_model` and GPU generation (:func:`column`):

* ``gemm:<architecture>:<bf16|fp8>``: the matrix products' time over the time at the
  sourced efficiency (:data:`~gpulesson.planning.perf_model.GEMM_EFFICIENCY`); 1 means
  "as fast as the best square product of a sweep";
* ``attention:<architecture>``: one over the FlashAttention kernels' share of the BF16
  peak;
* ``memory``: one over the share of the HBM bandwidth the memory-bound kernels reach;
* ``kernels``: seconds lost between two kernels;
* ``syncs``: seconds a mixture-of-experts layer's host synchronisation costs.

Each run's plan gives the coefficient of every factor (:attr:`TrainingPlan.terms`) and the
seconds that do not scale with them (exposed communication). :func:`fit` finds the factors
that minimise the squared relative error of the predicted step times, pulled towards the
sourced values (:data:`PRIOR`, with weight :data:`PRIOR_WEIGHT`) so that a generation with
few runs keeps its sourced figures. :func:`leave_one_out` refits without each run in turn
and predicts it: the only errors this course quotes for its model.

Standard library only (the site runs it in the browser).

Taught in: ``notebooks/planning_dashboard.ipynb`` (the leave-one-out table).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType

from gpulesson import _validate as v

__all__ = ["FITTED_ARCHITECTURES", "PRIOR", "PRIOR_WEIGHT", "Factors", "LeaveOneOut",
           "column", "default_factors", "fit", "format_table", "leave_one_out", "summary",
           "uncertainty"]

#: Generations with published runs in the set: their factors are fitted.
FITTED_ARCHITECTURES = ("Ampere", "Hopper", "Blackwell")
#: The sourced starting values: products at the sourced efficiency (1); FlashAttention-2
#: at 50 % of the A100's peak, "50-73 %" (Dao 2023, abstract); FlashAttention-3 and cuDNN's
#: fused attention on Hopper and Blackwell at 50 % forward and backward (Shah et al. 2024:
#: 75 % forward, the backward slower); memory-bound kernels at 80 % of the HBM bandwidth
#: (STREAM-like copies reach 80-90 %); 4 us between kernels (the order of a launch);
#: 100 us per host synchronisation (a round trip to the CPU and a queue refilled).
PRIOR: Mapping[str, float] = MappingProxyType({
    **{f"gemm:{a}:{p}": 1.0 for a in FITTED_ARCHITECTURES for p in ("bf16", "fp8")},
    "attention:Ampere": 1 / 0.50, "attention:Hopper": 1 / 0.50,
    "attention:Blackwell": 1 / 0.50, "memory": 1 / 0.80, "kernels": 4e-6, "syncs": 100e-6,
})
#: Weight of the prior against one run's squared relative error.
PRIOR_WEIGHT = 0.05
_ITERATIONS = 3

Factors = Mapping[str, float]


def column(term: str, architecture: str, precision: str) -> str:
    """The factor a term of a plan on ``architecture`` in ``precision`` belongs to."""
    if term in ("memory", "kernels", "syncs"):
        return term
    arch = architecture if architecture in FITTED_ARCHITECTURES else "other"
    if term == "attention":
        return f"attention:{arch}"
    return f"gemm:{arch}:{'fp8' if precision == 'fp8' else 'bf16'}"


def factor(factors: Factors, name: str) -> float:
    """The value of factor ``name`` (the prior's for a generation never fitted)."""
    if name in factors:
        return factors[name]
    if name.startswith("gemm:other"):
        return 1.0
    if name.startswith("attention:other"):
        return PRIOR["attention:Hopper"]
    return PRIOR[name]


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (a small dense system)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[piv] = m[piv], m[col]
        if abs(m[col][col]) < 1e-300:
            continue
        for r in range(n):
            if r != col:
                f = m[r][col] / m[col][col]
                if f:
                    m[r] = [x - f * y for x, y in zip(m[r], m[col], strict=True)]
    return [m[i][n] / m[i][i] if m[i][i] else 0.0 for i in range(n)]


def _rows(runs: Sequence[object], factors: Factors) -> list[tuple[dict[str, float], float,
                                                                   float]]:
    """(coefficients, fixed seconds, published step seconds) of each run at ``factors``."""
    from .published import plan_run
    out = []
    for run in runs:
        plan = plan_run(run, factors=factors)  # type: ignore[arg-type]
        target = plan.step_time * plan.mfu / run.published_mfu  # type: ignore[attr-defined]
        out.append((dict(plan.terms), plan.fixed_time, target))
    return out


def fit(runs: Iterable[object], *, prior_weight: float = PRIOR_WEIGHT) -> Factors:
    """The factors that best predict ``runs`` (published runs), starting from the prior.

    Minimises ``sum((predicted / published step time - 1)^2) + prior_weight * sum((f /
    prior - 1)^2)`` over the factors: a linear least-squares problem once the exposed
    communication is held at its value, repeated a few times as it moves."""
    runs = list(runs)
    w = v.nonneg_number("prior_weight", prior_weight)
    factors: dict[str, float] = dict(PRIOR)
    names = list(PRIOR)
    for _ in range(_ITERATIONS):
        rows = _rows(runs, factors)
        n = len(names)
        ata = [[0.0] * n for _ in range(n)]
        atb = [0.0] * n
        for coef, fixed, target in rows:
            a = [coef.get(name, 0.0) / target for name in names]
            b = 1 - fixed / target
            for i in range(n):
                if a[i]:
                    atb[i] += a[i] * b
                    for j in range(n):
                        ata[i][j] += a[i] * a[j]
        for i, name in enumerate(names):
            d = 1 / PRIOR[name]
            ata[i][i] += w * d * d
            atb[i] += w * d * d * PRIOR[name]
        solved = _solve(ata, atb)
        factors = {name: max(x, PRIOR[name] * 0.25) for name, x in zip(names, solved,
                                                                          strict=True)}
    return MappingProxyType(factors)


@cache
def default_factors() -> Factors:
    """The factors fitted on every run of :data:`~gpulesson.planning.PUBLISHED_RUNS`."""
    from .published import PUBLISHED_RUNS
    return fit(PUBLISHED_RUNS)


@dataclass(frozen=True)
class LeaveOneOut:
    """One run predicted by factors fitted without it: ``error`` = predicted / published
    MFU - 1; ``dominant`` the largest term of its step; ``feasible`` whether it fits."""

    name: str
    published_mfu: float
    predicted_mfu: float
    dominant: str
    feasible: bool
    architecture: str
    precision: str
    moe: bool

    @property
    def error(self) -> float:
        return self.predicted_mfu / self.published_mfu - 1


@cache
def leave_one_out() -> tuple[LeaveOneOut, ...]:
    """Every published run, predicted by the factors fitted on all the others."""
    from .published import PUBLISHED_RUNS, plan_run
    out = []
    for i, run in enumerate(PUBLISHED_RUNS):
        others = PUBLISHED_RUNS[:i] + PUBLISHED_RUNS[i + 1:]
        plan = plan_run(run, factors=fit(others))
        out.append(LeaveOneOut(run.name, run.published_mfu, plan.mfu, plan.dominant_term,
                               plan.feasible, run.architecture, run.precision, run.is_moe))
    return tuple(out)


def summary(rows: Sequence[LeaveOneOut]) -> dict[str, float]:
    """Median and largest |error|, the share within 25 %, and the infeasible runs."""
    errors = [abs(r.error) for r in rows]
    return {"runs": len(rows), "median": statistics.median(errors), "max": max(errors),
            "within_25": sum(e <= 0.25 for e in errors) / len(errors),
            "infeasible": sum(not r.feasible for r in rows)}


def format_table(rows: Sequence[LeaveOneOut] | None = None) -> str:
    """The leave-one-out table as text: run, published and predicted MFU, error, the
    dominant term; then the summary line (the lesson and ``benchmarks/bench_validation.py``
    print this)."""
    rows = leave_one_out() if rows is None else rows
    lines = [f"{'run':54s}{'published':>10s}{'predicted':>10s}{'error':>8s}  dominant term"]
    for r in rows:
        flag = "" if r.feasible else "  (does not fit)"
        lines.append(f"{r.name[:53]:54s}{r.published_mfu:>10.1%}{r.predicted_mfu:>10.1%}"
                     f"{r.error:>+8.0%}  {r.dominant}{flag}")
    s = summary(rows)
    lines.append(f"{s['runs']} runs, each predicted by factors fitted without it: median "
                 f"|error| {s['median']:.1%}, largest {s['max']:.0%}, "
                 f"{s['within_25']:.0%} within 25 %, {s['infeasible']} called infeasible")
    return "\n".join(lines)


def uncertainty(*, architecture: str, precision: str, moe: bool) -> tuple[float, int]:
    """(band, runs): the largest leave-one-out |error| among the published runs most like
    this plan (same generation, precision and dense/MoE; failing that, the same
    generation; failing that, all), so a plan reads "MFU x, within +-band"."""
    rows = leave_one_out()
    for keep in (lambda r: (r.architecture, r.precision, r.moe) == (architecture, precision,
                                                                     moe),
                 lambda r: r.architecture == architecture, lambda r: True):
        like = [r for r in rows if keep(r)]
        if len(like) >= 2:
            return max(abs(r.error) for r in like), len(like)
    return max(abs(r.error) for r in rows), len(rows)


v.guard_module(globals())
