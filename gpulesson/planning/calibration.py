"""Fit the performance model's factors on the published runs, and test it leave-one-out.

The step time of a plan is linear in a handful of factors, one per term of
:mod:`gpulesson.planning.perf_model` and GPU generation (:func:`column`):

* ``gemm:<architecture>:<bf16|fp8|fp8-block|fp8-tensorwise>``: the matrix products' time
  over the time at the sourced efficiency
  (:data:`~gpulesson.planning.perf_model.GEMM_EFFICIENCY`); 1 means "as fast as the best
  square product of a sweep"; FP8 with TransformerEngine's per-tensor scales (delayed,
  current), with block scales (DeepSeek-V3's blockwise, MXFP8) and torchao's tensorwise
  Float8 apart (other kernels, other software);
* ``experts:<architecture>``: the same for the routed experts' grouped products;
* ``attention:<architecture>``: the attention kernels' time over the time at the
  efficiency :func:`~gpulesson.planning.perf_model.attention_efficiency` gives (head size,
  keys, tiles);
* ``memory``: one over the share of the HBM bandwidth the memory-bound kernels reach;
* ``kernels``: seconds lost between two kernels;
* ``syncs``: seconds a mixture-of-experts layer's host synchronisation costs.

Each run's plan gives the coefficient of every factor (:attr:`TrainingPlan.terms`) and the
seconds that do not scale with them (exposed communication). :func:`fit` finds the factors
that minimise the squared relative error of the predicted step times, pulled towards the
sourced values (:data:`PRIOR`, with weight :data:`PRIOR_WEIGHT`) so that a generation with
few runs keeps its sourced figures, and held within what the hardware allows
(:func:`lower_bound`: no product or attention kernel faster than the peak, no memory-bound
kernel faster than the HBM bandwidth), so that one term cannot buy another's error.
:func:`gpulesson.planning.published.leave_one_out` refits without each run in turn and
predicts it: the only errors this course quotes for its model.

Standard library only (the site runs it in the browser).

Taught in: ``notebooks/planning_dashboard.ipynb`` (the leave-one-out table).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType

from gpulesson import _validate as v

from . import perf_model

__all__ = ["FITTED_ARCHITECTURES", "ITERATIONS", "PRIOR", "PRIOR_WEIGHT", "column", "factor",
           "fit", "lower_bound", "rows"]

#: Generations with published runs in the set: their factors are fitted.
FITTED_ARCHITECTURES = ("Ampere", "Hopper", "Blackwell")
#: The sourced starting values: products at the sourced efficiency (1); attention at the
#: efficiency :func:`~gpulesson.planning.perf_model.attention_efficiency` gives for its
#: head size and keys (1); memory-bound kernels at 80 % of the HBM bandwidth
#: (STREAM-like copies reach 80-90 %); 4 us between kernels (the order of a launch);
#: 100 us per host synchronisation (a round trip to the CPU and a queue refilled).
PRIOR: Mapping[str, float] = MappingProxyType({
    **{f"gemm:{a}:{p}": 1.0 for a in FITTED_ARCHITECTURES
       for p in ("bf16", "fp8", "fp8-block", "fp8-tensorwise")},
    **{f"experts:{a}": 1.0 for a in FITTED_ARCHITECTURES},
    "attention:Ampere": 1.0, "attention:Hopper": 1.0,
    "attention:Blackwell": 1.0, "memory": 1 / 0.80, "kernels": 4e-6, "syncs": 100e-6,
})
#: Weight of the prior against one run's squared relative error. Not sourced: of 0 to 1, the
#: value with the smallest median leave-one-out error on the published runs
#: (benchmarks/bench_chosen_settings.py sweeps it; lesson 10 states what it moves).
PRIOR_WEIGHT = 0.05
#: Solves of the linearised problem, each at the factors the last one found.
ITERATIONS = 3

def column(term: str, architecture: str, precision: str, recipe: str = "current") -> str:
    """The factor a term of a plan on ``architecture`` in ``precision`` (FP8 by
    ``recipe``) belongs to."""
    if term in ("memory", "kernels", "syncs"):
        return term
    arch = architecture if architecture in FITTED_ARCHITECTURES else "other"
    if term in ("attention", "experts"):
        return f"{term}:{arch}"
    if precision != "fp8":
        return f"gemm:{arch}:bf16"
    if recipe in ("blockwise", "mxfp8"):
        return f"gemm:{arch}:fp8-block"
    return f"gemm:{arch}:fp8-tensorwise" if recipe == "tensorwise" else f"gemm:{arch}:fp8"


def factor(factors: Mapping[str, float], name: str) -> float:
    """The value of factor ``name`` (the prior's for a generation never fitted)."""
    if name in factors:
        return factors[name]
    if name.startswith("gemm:other"):
        return 1.0
    if name.startswith("experts:other"):
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


def rows(runs: Sequence[object], factors: Mapping[str, float],
         planner: Callable[..., object]) -> list[tuple[dict[str, float], float, float]]:
    """(coefficients, fixed seconds, published step seconds) of each run planned at
    ``factors``: the rows of the least-squares problem :func:`fit` solves."""
    out = []
    for run in runs:
        plan: object = planner(run, factors=factors)
        target = plan.step_time * plan.mfu / run.published_mfu  # type: ignore[attr-defined]
        out.append((dict(plan.terms), plan.fixed_time, target))  # type: ignore[attr-defined]
    return out


def fit(runs: Iterable[object], planner: Callable[..., object], *,
        prior_weight: float = PRIOR_WEIGHT, start: Mapping[str, float] | None = None,
        iterations: int = ITERATIONS,
        first_rows: Sequence[tuple[dict[str, float], float, float]] | None = None
        ) -> Mapping[str, float]:
    """The factors that best predict ``runs`` (published runs) when ``planner(run,
    factors=...)`` plans them (:func:`gpulesson.planning.training.plan_run`).

    Minimises ``sum((predicted / published step time - 1)^2) + prior_weight * sum((f /
    prior - 1)^2)`` over the factors: a linear least-squares problem once the exposed
    communication (and which products are memory-bound) is held where the current factors
    put it, solved ``iterations`` times from ``start`` (the prior by default) as it moves.
    ``first_rows`` (:func:`rows` of these runs at ``start``) saves the first planning."""
    runs = list(runs)
    w = v.nonneg_number("prior_weight", prior_weight)
    factors: dict[str, float] = dict(start or PRIOR)
    for i in range(v.positive_int("iterations", iterations)):
        found = (list(first_rows) if i == 0 and first_rows is not None
                 else rows(runs, factors, planner))
        factors = _least_squares(found, w)
    return MappingProxyType(factors)


def _least_squares(found: Sequence[tuple[dict[str, float], float, float]], w: float
                   ) -> dict[str, float]:
    names = list(PRIOR)
    n = len(names)
    ata = [[0.0] * n for _ in range(n)]
    atb = [0.0] * n
    for coef, fixed, target in found:
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
    low = [lower_bound(name) for name in names]
    fixed_at: dict[int, float] = {}
    while True:
        free = [i for i in range(n) if i not in fixed_at]
        sub = [[ata[i][j] for j in free] for i in free]
        rhs = [atb[i] - sum(ata[i][j] * x for j, x in fixed_at.items()) for i in free]
        solved = dict(zip(free, _solve(sub, rhs), strict=True))
        below = [i for i, x in solved.items() if x < low[i]]
        if not below:
            break
        worst = min(below, key=lambda i: solved[i] / low[i])
        fixed_at[worst] = low[worst]
    values = {**solved, **fixed_at}
    return {name: values[i] for i, name in enumerate(names)}


def lower_bound(name: str) -> float:
    """The least value factor ``name`` may take: a product or an attention kernel no faster
    than the peak (the factor scales the time at the sourced efficiency, so it is at least
    that efficiency), memory-bound kernels no faster than the HBM bandwidth; launch gaps and
    host synchronisations at least a quarter of their sourced order."""
    term, _, rest = name.partition(":")
    if term == "memory":
        return 1.0
    if term in ("kernels", "syncs"):
        return PRIOR[name] * 0.25
    arch, _, prec = rest.partition(":")
    if term == "attention":
        return perf_model.attention_efficiency(128, 1 << 20, arch)
    if term == "experts":
        return min(perf_model.gemm_efficiency(arch, "bf16"),
                   perf_model.gemm_efficiency(arch, "fp8"))
    if prec == "fp8-block":
        prec = "fp8"
    return perf_model.gemm_efficiency(arch, prec)


v.guard_module(globals())
