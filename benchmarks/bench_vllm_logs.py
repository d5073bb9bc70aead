"""Real vLLM start-up logs set against the planner, item by item, and the KV-cache pool
leave-one-out.

Run: ``.venv/bin/python benchmarks/bench_vllm_logs.py``. Reads ``tests/data/logs/
vllm-logs.json`` (each run with its public thread and the settings it lacks, stated) and
prints, for every run, each item its log prints (weights per GPU, activation peak,
non-torch memory, KV-cache pool, the tokens the log's pool holds, the KV cache of one
request, maximum concurrency) beside the prediction of
:func:`gpulesson.planning.log_checks.check_vllm_run`, the median and the largest error of
each item, then the KV-cache pool table of :func:`gpulesson.planning.log_checks.pool_table`:
with the log's own non-torch figure, and from scratch: the non-torch memory is the run's
NCCL and custom all-reduce buffers (from NCCL's and vLLM's code,
:mod:`gpulesson.planning.non_torch`) plus the remainder of its accounting ("device": the
CUDA context counted, one constant; "increase": only what grew since start-up, a share per
streaming multiprocessor times the run's SMs) refitted without the run's thread
(leave-one-out; the only constants fitted on the set). Nothing is timed; the
tables are deterministic.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gpulesson.planning.log_checks import (  # noqa: E402
    LogCheck,
    PoolRow,
    check_vllm_run,
    non_torch_remainder,
    pool_table,
)

LOGS = ROOT / "tests" / "data" / "logs"


def runs_and_texts() -> tuple[list[dict], list[str]]:
    """The registry's runs and their log texts."""
    runs = json.loads((LOGS / "vllm-logs.json").read_text())["runs"]
    return runs, [(LOGS / run["file"]).read_text() for run in runs]


def checks() -> list[LogCheck]:
    """Every run of the registry, checked; the non-torch remainder of each is fitted without
    the run's thread."""
    runs, texts = runs_and_texts()
    return [check_vllm_run(run, text, non_torch_default=non_torch_remainder(runs, texts, i))
            for i, (run, text) in enumerate(zip(runs, texts, strict=True))]


def pools() -> list[PoolRow]:
    """The KV-cache pool rows, leave-one-out."""
    return pool_table(*runs_and_texts())


def _show(x: float | None, unit: str) -> str:
    if x is None:
        return "-"
    return f"{x / 2**30:.2f} GiB" if unit == "bytes" else f"{x:,.2f}"


def _pct(x: float) -> str:
    return "signs differ" if math.isinf(x) else f"{x:+.1%}"


def main() -> None:
    results = checks()
    print(f"{'run':38s}{'item':27s}{'log':>14s}{'predicted':>14s}{'error':>9s}")
    errors: dict[str, list[float]] = {}
    for check in results:
        for row in check.rows:
            rel = row.relative
            text = "-" if rel is None else f"{rel:+.1%}"
            print(f"{check.run:38s}{row.term:27s}{_show(row.measured, row.unit):>14s}"
                  f"{_show(row.predicted, row.unit):>14s}{text:>9s}")
            if rel is not None and row.measured and row.measured > 0:
                errors.setdefault(row.term, []).append(abs(rel))
    print(f"\n{len(results)} runs")
    for term, errs in errors.items():
        print(f"{term:27s} {len(errs):2d} logs  median |error| {statistics.median(errs):6.1%}"
              f"  largest {max(errs):6.1%}")

    rows = pools()
    print("\nKV-cache pool, leave-one-out (non-torch memory: NCCL and all-reduce buffers + "
          "the remainder refitted without the run's thread)")
    print(f"{'run':38s}{'log':>16s}{'with inputs':>16s}{'error':>9s}{'non-torch':>16s}"
          f"{'from scratch':>16s}{'error':>9s}  settings assumed")
    for r in rows:
        print(f"{r.run:38s}{_show(r.measured, r.unit):>16s}{_show(r.with_inputs, r.unit):>16s}"
              f"{_pct(r.error):>9s}{r.accounting[:3] + ' ' + _show(r.non_torch, 'bytes'):>16s}"
              f"{_show(r.from_scratch, r.unit):>16s}"
              f"{_pct(r.error_from_scratch):>9s}  {', '.join(r.assumed) or '-'}")
    for name, errs in (("with the log's non-torch", [abs(r.error) for r in rows]),
                       ("from scratch (LOO)", [abs(r.error_from_scratch) for r in rows])):
        print(f"{name:27s} {len(errs):2d} logs  median |error| {statistics.median(errs):6.1%}"
              f"  largest {max(errs):6.1%}")


if __name__ == "__main__":
    main()
