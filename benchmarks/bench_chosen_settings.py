"""Print how the two settings of the training model chosen on the validation set fare.

Two settings of the step-time model are neither sourced nor fitted by the calibration's
least squares. The fixed cost of every output tile of a matrix product,
``TILE_OVERHEAD_K`` steps of its K loop (:data:`gpulesson.planning.perf_model.TILE_OVERHEAD_K`:
the loads that fill the tile's pipeline and the epilogue that writes it), which no published
measurement gives and which sits inside the products' time, not in front of a term; and the
weight that holds each factor to its sourced value (:data:`gpulesson.planning.calibration.
PRIOR_WEIGHT`). Each sits where the median leave-one-out error on the 41 published runs is
smallest, so the lesson's table, which saw them, flatters the model by a little. This report
sweeps each over its range (the other at the planner's value), and makes the tile's choice
again for each run from the other runs' leave-one-out errors alone (each of those itself
predicted by factors fitted without that other run, as the lesson's table is), predicting
the run with the value chosen. Nothing is timed; the tables are deterministic.

Run: ``.venv/bin/python benchmarks/bench_chosen_settings.py``.
"""

from __future__ import annotations

import functools
import statistics
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
#: The caches whose contents depend on the two settings (the products' terms, the fitted
#: factors and every table planned with them).
_CACHED = (planning.perf_model._terms, planning.training.default_factors,
           planning.published.leave_one_out, bands.validation_rows, heldout.held_out_rows,
           heldout.paper_rows, heldout.foundry_rows)


def _clear() -> None:
    for cached in _CACHED:
        cached.cache_clear()


@contextmanager
def settings(tile: int | None = None, prior_weight: float | None = None) -> Iterator[None]:
    """The model with ``TILE_OVERHEAD_K = tile`` and the calibration's prior weight
    ``prior_weight`` inside the block (``None``: the planner's), the planner's own after it
    (every cache that holds a figure planned with them emptied on the way in and out)."""
    kept = planning.perf_model.TILE_OVERHEAD_K, planning.calibration.fit
    if tile is not None:
        planning.perf_model.TILE_OVERHEAD_K = tile
    if prior_weight is not None:
        planning.calibration.fit = functools.partial(kept[1], prior_weight=prior_weight)
    _clear()
    try:
        yield
    finally:
        planning.perf_model.TILE_OVERHEAD_K, planning.calibration.fit = kept
        _clear()


def loo_errors(tile: int | None = None, prior_weight: float | None = None
               ) -> tuple[float, ...]:
    """Every published run's leave-one-out error (predicted / published MFU - 1) with the
    settings given (:func:`settings`)."""
    with settings(tile, prior_weight):
        return tuple(row.error for row in planning.published.leave_one_out())


def _median(errors: Sequence[float]) -> float:
    return statistics.median(abs(e) for e in errors)


@dataclass(frozen=True)
class Selection:
    """``by_value``: each value's leave-one-out errors; ``chosen``: the value picked on
    every run (the smallest median); ``picks`` and ``nested``: for each run, the value
    picked on the other runs' errors and the run's error with it."""

    by_value: dict[int, tuple[float, ...]]
    chosen: int
    picks: tuple[int, ...]
    nested: tuple[float, ...]


def select(grid: Sequence[int] = GRID) -> Selection:
    """The constant chosen on all runs, and chosen again without each run."""
    by_value = {k: loo_errors(tile=k) for k in grid}
    chosen = min(grid, key=lambda k: _median(by_value[k]))
    picks = []
    for i in range(len(by_value[chosen])):
        picks.append(min(grid, key=lambda k: _median(by_value[k][:i] + by_value[k][i + 1:])))
    nested = tuple(by_value[k][i] for i, k in enumerate(picks))
    return Selection(by_value, chosen, tuple(picks), nested)


def summary(errors: Sequence[float]) -> dict[str, float]:
    """Median |error|, the largest, and how many runs are within 25 %."""
    return {"median": _median(errors), "largest": max(abs(e) for e in errors),
            "within_25": sum(abs(e) <= 0.25 for e in errors), "runs": len(errors)}


def weight_sweep(weights: Sequence[float] = WEIGHTS) -> dict[float, tuple[float, ...]]:
    """Each prior weight's leave-one-out errors, the tile's cost at the planner's."""
    return {w: loo_errors(prior_weight=w) for w in weights}


def _row(label: object, errors: Sequence[float]) -> str:
    s = summary(errors)
    return (f"{label!s:>15} {s['median']:7.1%} {s['largest']:8.0%} {s['within_25']:6d} of "
            f"{s['runs']}")


def main() -> None:
    found = select()
    print(f"TILE_OVERHEAD_K  median  largest  within 25 %   (planner: "
          f"{planning.perf_model.TILE_OVERHEAD_K})")
    for k, errors in found.by_value.items():
        print(_row(k, errors))
    s = summary(found.nested)
    print(f"chosen on all runs: {found.chosen}; chosen without each run: median "
          f"{s['median']:.1%}, largest {s['largest']:.0%}, {s['within_25']} of {s['runs']} "
          "within 25 %")
    print("values chosen:", ", ".join(f"{k} for {n}" for k, n in
                                      Counter(found.picks).most_common()))
    print()
    print(f"prior weight     median  largest  within 25 %   (planner: "
          f"{planning.calibration.PRIOR_WEIGHT})")
    for w, errors in weight_sweep().items():
        print(_row(w, errors))


if __name__ == "__main__":
    main()
