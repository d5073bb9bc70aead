"""Predict the runs of later releases that the training model was never fitted on.

``benchmarks/heldout_runs.json`` holds Megatron-Bridge's 2026 pre-training rows (NeMo
26.04.01 to 26.08). The factors are fitted once, on ``gpulesson/data/training_runs.json``
(releases up to 25.11 and the papers); each held-out run is then planned on its published
layout twice: as its recipe runs it (the switches in its ``options``: CUDA graphs, fused
expert MLP, FP8 attention, all-to-all overlap) and with those switches off, to show what
they account for. A time split: the fit has seen none of these releases. No timing and no
assert: a report.

Run: ``.venv/bin/python benchmarks/bench_heldout.py``.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

# the checkout this script sits in, before any installed copy of the package
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpulesson.planning.published import Comparison  # noqa: E402
from gpulesson.planning.runs import _run  # noqa: E402
from gpulesson.planning.training import default_factors, plan_run  # noqa: E402

HELD_OUT = Path(__file__).with_name("heldout_runs.json")
#: The options that describe a release's software rather than the run's layout, as
#: :func:`~gpulesson.planning.plan_training` takes them when they are off.
SWITCHES_OFF = {"cuda_graphs": "none", "fused_expert_mlp": False, "fp8_attention": False,
                "overlap": None}


def held_out() -> list[dict[str, object]]:
    """The held-out entries, as ``training_runs.json`` spells them."""
    return json.loads(HELD_OUT.read_text(encoding="utf-8"))["runs"]


def _summary(errors: list[float]) -> str:
    size = [abs(e) for e in errors]
    within = sum(e <= 0.25 for e in size)
    return (f"median |error| {statistics.median(size):.1%}, largest {max(size):.0%}, "
            f"{within} of {len(size)} within 25 %")


def main() -> None:
    factors = default_factors()
    print(f"{'run':44s} {'published':>9s} {'recipe':>7s} {'error':>6s} {'plain':>6s} switches")
    with_, without = [], []
    for entry in held_out():
        run = _run(entry)
        plan = plan_run(run, factors=factors)
        e1 = Comparison(run, plan).error
        e0 = Comparison(run, plan_run(run, factors=factors, **SWITCHES_OFF)).error
        on = [k for k in SWITCHES_OFF if k in run.options]
        with_.append(e1)
        without.append(e0)
        flag = "" if plan.feasible else " (does not fit)"
        print(f"{run.name:44s} {run.published_mfu:9.1%} {plan.mfu:7.1%} {e1:+6.0%} {e0:+6.0%} "
              f"{', '.join(on) or '-'}{flag}")
    print()
    print(f"{len(with_)} held-out runs, factors fitted on the published set only")
    print(f"  as their recipes run:  {_summary(with_)}")
    print(f"  switches left off:     {_summary(without)}")


if __name__ == "__main__":
    main()
