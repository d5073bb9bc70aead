"""Published training runs, and the MFU the planner predicts for each.

:data:`PUBLISHED_RUNS` is the validation set of the training performance model: every run
in ``gpulesson/data/training_runs.json`` as its source states it (model, GPUs, full layout,
batch, sequence, precision, recomputation), with a short quote of the figure, the source's
address and its date, and the assumptions where the source leaves a setting out. The
published figure (tokens per second per GPU, an MFU, Megatron-LM's eq. 3 TFLOP/s, or
GPU-hours for a number of tokens) is converted to one convention: model FLOPs (``6N`` with
the active parameters plus PaLM's ``12LHQT``, :func:`gpulesson.flops.model_flops_per_token`)
over the dense BF16 peak, whatever precision the run computed in.

:func:`published_comparison` plans each run with :func:`~gpulesson.planning.plan_training`
on its published layout and sets the predicted MFU beside the published one;
:mod:`gpulesson.planning.calibration` fits the model's constants on the set.

:func:`leave_one_out` predicts every run with the factors fitted on all the others
(:func:`gpulesson.planning.calibration.fit`): :func:`format_table` prints the table the
lesson and ``benchmarks/bench_validation.py`` show, and :mod:`gpulesson.planning.bands`
takes the band a plan states from these rows and the held-out ones. Sources (seven code
bases): Narayanan et al. 2021 Table 1 (Megatron-LM, ten A100 runs); Dubey et al. 2024
Table 4 (Llama 3 405B); Touvron et al. 2023 Table 2 (Llama 2 GPU-hours);
Jiang et al. 2024 (MegaScale); DeepSeek-AI 2024 (DeepSeek-V3); torchtitan's published
benchmarks (A100, H200); NVIDIA Megatron-Bridge's performance summary (NeMo 25.11: every
row of its H100, B200 and GB200 tables in the precision it lists first, BF16, FP8 and MXFP8,
dense and MoE, the three its tracker files as regressions included; not its GB300 table,
whose layouts none of the recipes at the summary's commit runs, so that their other settings
would be guesses; later releases' GB300 rows are in the held-out split).

Taught in: ``notebooks/planning_dashboard.ipynb`` (predicted against published).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType

from gpulesson import _validate as v
from gpulesson.transformer import TransformerConfig

from . import calibration
from ._adapt import ModelView, model_view
from .runs import PublishedRun, load_runs
from .training import TrainingPlan, default_factors, plan_run

__all__ = ["PUBLISHED_RUNS", "Comparison", "LeaveOneOut", "PublishedRun", "fitted_without",
           "format_table", "leave_one_out", "load_runs", "plan_run", "published_comparison",
           "summary"]

#: The H800: an H100's compute with NVLink cut back. "NVLink offers a bandwidth of 160 GB/s,
#: roughly 3.2 times that of IB (50 GB/s)" (DeepSeek-AI 2024, section 3.2.2).
H800_NVLINK = 160e9


def megatron_1t() -> TransformerConfig:
    """The 1T GPT of Narayanan et al. 2021, Table 1: 128 layers, h 25,600, 160 heads."""
    return TransformerConfig(hidden=25600, layers=128, heads=160, vocab=51200,
                             max_positions=2048, name="megatron-1t",
                             source="Narayanan et al. 2021, Table 1")


def deepseek_v3() -> ModelView:
    """DeepSeek-V3 (``transformer.preset("deepseek-v3")``): 671B parameters, 37B activated
    per token, 61 layers of multi-head latent attention, 58 of them with 256 routed experts
    (8 per token) and a shared one (DeepSeek-AI 2024, section 4.2)."""
    return model_view("deepseek-v3")


PUBLISHED_RUNS: tuple[PublishedRun, ...] = load_runs()


@dataclass(frozen=True)
class Comparison:
    """A published run beside its plan: ``error`` = predicted / published MFU - 1."""

    run: PublishedRun
    plan: TrainingPlan

    @property
    def predicted_mfu(self) -> float:
        return self.plan.mfu

    @property
    def error(self) -> float:
        return self.plan.mfu / self.run.published_mfu - 1


def published_comparison(runs: tuple[PublishedRun, ...] = PUBLISHED_RUNS
                         ) -> tuple[Comparison, ...]:
    """Plan every run on its published layout; the predicted MFU beside the published."""
    return tuple(Comparison(run, plan_run(run)) for run in runs)


#: Short labels of the runs, for tables.
LABELS: Mapping[str, str] = MappingProxyType({run.name: run.name for run in PUBLISHED_RUNS})


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
    active_params: float = 0.0

    @property
    def error(self) -> float:
        return self.predicted_mfu / self.published_mfu - 1

    @classmethod
    def planned(cls, run: PublishedRun, plan: TrainingPlan, **more: object) -> LeaveOneOut:
        """The row of ``run`` as ``plan`` predicts it (``more``: a subclass's fields)."""
        return cls(name=run.name, published_mfu=run.published_mfu, predicted_mfu=plan.mfu,
                   dominant=plan.dominant_term, feasible=plan.feasible,
                   architecture=run.architecture, precision=run.precision, moe=run.is_moe,
                   active_params=plan.active_params, **more)  # type: ignore[arg-type]


def _fit_without(i: int, *, iterations: int, at_full: list[tuple[dict[str, float], float,
                                                                 float]]
                 ) -> Mapping[str, float]:
    """The factors fitted on every published run but the ``i``-th.

    The least-squares rows of the other runs are the full fit's; what in them depends on
    the factors (the communication left exposed, which hides behind the compute) is held
    where the full fit put it for ``iterations=1``, and planned again at the new factors
    for each further iteration. One iteration changes no run's error by more than half a
    point against two (tests/unit/test_planning_calibration.py)."""
    others = PUBLISHED_RUNS[:i] + PUBLISHED_RUNS[i + 1:]
    return calibration.fit(others, plan_run, start=default_factors(), iterations=iterations,
                           first_rows=at_full[:i] + at_full[i + 1:])


def fitted_without(name: str) -> Mapping[str, float]:
    """The factors fitted on every published run but the one named ``name``, as its row of
    :func:`leave_one_out` is predicted: what a figure of the same job (a later or an earlier
    release of it) is held against, by a fit that never saw the run."""
    names = [run.name for run in PUBLISHED_RUNS]
    if name not in names:
        raise ValueError(f"name must be a published run's, got {name!r}")
    at_full = calibration.rows(PUBLISHED_RUNS, default_factors(), plan_run)
    return _fit_without(names.index(name), iterations=1, at_full=at_full)


@cache
def leave_one_out() -> tuple[LeaveOneOut, ...]:
    """Every published run, predicted by the factors fitted on all the others."""
    full = default_factors()
    at_full = calibration.rows(PUBLISHED_RUNS, full, plan_run)
    out = []
    for i, run in enumerate(PUBLISHED_RUNS):
        fitted = _fit_without(i, iterations=1, at_full=at_full)
        plan = plan_run(run, factors=fitted)
        out.append(LeaveOneOut.planned(run, plan))
    return tuple(out)


def summary(rows: Sequence[LeaveOneOut]) -> dict[str, float]:
    """Median and largest |error|, the share within 25 %, and the infeasible runs."""
    errors = [abs(r.error) for r in rows]
    return {"runs": len(rows), "median": statistics.median(errors), "max": max(errors),
            "within_25": sum(e <= 0.25 for e in errors) / len(errors),
            "infeasible": sum(not r.feasible for r in rows)}


def format_table(rows: Sequence[LeaveOneOut] | None = None) -> str:
    """The leave-one-out table as text: run, quoted and predicted MFU, error, the
    dominant term; then the summary line (the lesson and ``benchmarks/bench_validation.py``
    print this). The rows stay within :data:`TABLE_WIDTH` characters, the width of the
    site's output column, so that none wraps."""
    rows = leave_one_out() if rows is None else rows
    width, head = _table_head(rows)
    lines = [f"{head}  term"]
    lines += [f"{_table_row(r, width)}  {_TERM_LABELS.get(r.dominant, r.dominant)}"
              f"{_fit_flag(r)}" for r in rows]
    s = summary(rows)
    lines.append(f"{s['runs']} runs, each predicted by factors fitted without it: median "
                 f"|error| {s['median']:.1%},\nlargest {s['max']:.0%}, "
                 f"{s['within_25']:.0%} within 25 %, {s['infeasible']} called infeasible")
    return "\n".join(lines)


#: Characters a line of :func:`format_table` may take (the site's output column).
TABLE_WIDTH = 80
#: The term column's words where a breakdown key is too long for it: memory-bound work is
#: the calibration's "memory" factor.
_TERM_LABELS = MappingProxyType({"memory_bound": "memory"})


def _table_head(rows: Sequence[object]) -> tuple[int, str]:
    """The width of the run column and the heading of the columns every table of
    predicted runs starts with (:func:`format_table`,
    :func:`gpulesson.planning.heldout.format_held_out_table`)."""
    width = max([len("run"), *(len(r.name) for r in rows)])  # type: ignore[attr-defined]
    return width, f"{'run':{width}s}{'quoted':>8s}{'model':>7s}{'error':>7s}"


def _table_row(row: object, width: int) -> str:
    """A predicted run's first columns: its name, quoted and predicted MFU and error."""
    return (f"{row.name:{width}s}{row.published_mfu:>8.1%}"  # type: ignore[attr-defined]
            f"{row.predicted_mfu:>7.1%}{row.error:>+7.0%}")  # type: ignore[attr-defined]


def _fit_flag(row: object) -> str:
    return "" if row.feasible else " (does not fit)"  # type: ignore[attr-defined]


v.guard_module(globals())
