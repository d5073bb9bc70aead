"""Print how the two settings of the training model chosen on the validation set fare.

Two settings of the step-time model are neither sourced nor fitted by the calibration's
least squares. The fixed cost of every output tile of a matrix product,
``TILE_OVERHEAD_K`` steps of its K loop (:data:`gpulesson.planning.perf_model.TILE_OVERHEAD_K`:
the loads that fill the tile's pipeline and the epilogue that writes it), which no published
measurement gives and which sits inside the products' time, not in front of a term; and the
weight that holds each factor to its sourced value (:data:`gpulesson.planning.calibration.
PRIOR_WEIGHT`). Each was chosen where the median leave-one-out error on the published runs
was smallest, on the set as it stood before :data:`ADDED_SINCE_CHOSEN` joined it (the last
line of this report checks it), so the lesson's table, which saw them, flatters the model by
a little. This report
sweeps each over its range (the other at the planner's value), and makes the tile's choice
again for each run from the other runs' leave-one-out errors alone (each of those itself
predicted by factors fitted without that other run, as the lesson's table is), predicting
the run with the value chosen. Nothing is timed; the tables are deterministic.

Run: ``.venv/bin/python benchmarks/bench_chosen_settings.py``.
"""

from __future__ import annotations

import functools
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpulesson import planning  # noqa: E402
from gpulesson.planning import bands, heldout  # noqa: E402

#: The values of ``TILE_OVERHEAD_K`` tried: none to 1,024 steps of K, every 64.
GRID = tuple(range(0, 1025, 64))
#: The prior weights tried, from none (plain least squares) to one.
WEIGHTS = (0.0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
#: Runs the set took in after the two settings were chosen (lesson 10 says so).
ADDED_SINCE_CHOSEN = ("Megatron-Bridge Qwen3 30B-A3B, 8 B200, FP8-MX",)
#: The caches whose contents depend on the two settings (the products' terms, the fitted
#: factors and every table planned with them).
_CACHED = (planning.perf_model._terms, planning.training.default_factors,
           planning.published.leave_one_out, bands.validation_rows, heldout.held_out_rows,
           heldout.paper_rows, heldout.foundry_rows)


def _clear() -> None:
    for cached in _CACHED:
        cached.cache_clear()


@contextmanager
def _patched(*changes: tuple[object, str, object]) -> Iterator[None]:
    """Each ``(module, name, value)`` set inside the block and put back after it, every
    cache that holds a figure planned with them emptied on the way in and out."""
    kept = [(module, name, getattr(module, name)) for module, name, _ in changes]
    for module, name, value in changes:
        setattr(module, name, value)
    _clear()
    try:
        yield
    finally:
        for module, name, value in kept:
            setattr(module, name, value)
        _clear()


@contextmanager
def settings(tile: int | None = None, prior_weight: float | None = None) -> Iterator[None]:
    """The model with ``TILE_OVERHEAD_K = tile`` and the calibration's prior weight
    ``prior_weight`` inside the block (``None``: the planner's), the planner's own after it."""
    changes: list[tuple[object, str, object]] = []
    if tile is not None:
        changes.append((planning.perf_model, "TILE_OVERHEAD_K", tile))
    if prior_weight is not None:
        changes.append((planning.calibration, "fit", functools.partial(
            planning.calibration.fit, prior_weight=prior_weight)))
    with _patched(*changes):
        yield


@contextmanager
def without(names: Sequence[str]) -> Iterator[None]:
    """The published runs but ``names`` inside the block, as the set stood before they
    joined it (fit, leave-one-out table and every cache built on them), all of them after."""
    runs = tuple(r for r in planning.published.PUBLISHED_RUNS if r.name not in names)
    assert len(runs) == len(planning.published.PUBLISHED_RUNS) - len(set(names)), names
    with _patched((planning.published, "PUBLISHED_RUNS", runs),
                  (planning.training, "load_runs", lambda: runs)):
        yield


def best_weight(weights: dict[float, Sequence[planning.published.LeaveOneOut]]) -> float:
    """The prior weight whose leave-one-out rows have the smallest median."""
    return min(weights, key=lambda w: median(weights[w]))


def loo_rows(tile: int | None = None, prior_weight: float | None = None
             ) -> tuple[planning.published.LeaveOneOut, ...]:
    """Every published run predicted without itself, with the settings given
    (:func:`settings`)."""
    with settings(tile, prior_weight):
        return planning.published.leave_one_out()


def median(rows: Sequence[planning.published.LeaveOneOut]) -> float:
    """The median |error| of ``rows``, as the lesson's table states it."""
    return planning.published.summary(rows)["median"]


@dataclass(frozen=True)
class Selection:
    """``by_value``: each value's leave-one-out rows; ``chosen``: the value picked on every
    run (the smallest median); ``picks`` and ``nested``: for each run, the value picked on
    the other runs' errors and the run's row with it."""

    by_value: dict[int, tuple[planning.published.LeaveOneOut, ...]]
    chosen: int
    picks: tuple[int, ...]
    nested: tuple[planning.published.LeaveOneOut, ...]


def select(grid: Sequence[int] = GRID) -> Selection:
    """The constant chosen on all runs, and chosen again without each run."""
    by_value = {k: loo_rows(tile=k) for k in grid}
    chosen = min(grid, key=lambda k: median(by_value[k]))
    picks = []
    for i in range(len(by_value[chosen])):
        picks.append(min(grid, key=lambda k: median(by_value[k][:i] + by_value[k][i + 1:])))
    nested = tuple(by_value[k][i] for i, k in enumerate(picks))
    return Selection(by_value, chosen, tuple(picks), nested)


def weight_sweep(weights: Sequence[float] = WEIGHTS
                 ) -> dict[float, tuple[planning.published.LeaveOneOut, ...]]:
    """Each prior weight's leave-one-out rows, the tile's cost at the planner's."""
    return {w: loo_rows(prior_weight=w) for w in weights}


def within_25(rows: Sequence[planning.published.LeaveOneOut]) -> int:
    """How many of ``rows`` are predicted within 25 %."""
    return sum(abs(r.error) <= 0.25 for r in rows)


def _row(label: object, rows: Sequence[planning.published.LeaveOneOut]) -> str:
    s = planning.published.summary(rows)
    return (f"{label!s:>15} {s['median']:7.1%} {s['max']:8.0%} {within_25(rows):6d} of "
            f"{s['runs']}")


def main() -> None:
    found = select()
    print(f"TILE_OVERHEAD_K  median  largest  within 25 %   (planner: "
          f"{planning.perf_model.TILE_OVERHEAD_K})")
    for k, rows in found.by_value.items():
        print(_row(k, rows))
    s = planning.published.summary(found.nested)
    print(f"chosen on all runs: {found.chosen}; chosen without each run: median "
          f"{s['median']:.1%}, largest {s['max']:.0%}, {within_25(found.nested)} of "
          f"{s['runs']} within 25 %")
    print("values chosen:", ", ".join(f"{k} for {n}" for k, n in
                                      Counter(found.picks).most_common()))
    print()
    print(f"prior weight     median  largest  within 25 %   (planner: "
          f"{planning.calibration.PRIOR_WEIGHT})")
    for w, rows in weight_sweep().items():
        print(_row(w, rows))
    print()
    with without(ADDED_SINCE_CHOSEN):
        runs = len(planning.published.PUBLISHED_RUNS)
        tile, weight = select().chosen, best_weight(weight_sweep())
    print(f"on the {runs} runs before {', '.join(ADDED_SINCE_CHOSEN)} joined: least median "
          f"at {tile} steps and a prior weight of {weight:g}")


if __name__ == "__main__":
    main()
