"""Twenty real vLLM start-up logs set against the planner, item by item.

Run: ``.venv/bin/python benchmarks/bench_vllm_logs.py``. Reads ``tests/data/logs/
vllm-logs.json`` (each run with its public thread) and prints, for every run, each item its
log prints (weights per GPU, activation peak, KV-cache pool, the tokens the log's pool
holds, the KV cache of one request, maximum concurrency) beside the prediction of
:func:`gpulesson.planning.log_checks.check_vllm_run`, then the median and the largest
error of each item over the runs. Nothing is timed; the table is deterministic.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gpulesson.planning.log_checks import LogCheck, check_vllm_run  # noqa: E402

LOGS = ROOT / "tests" / "data" / "logs"


def checks() -> list[LogCheck]:
    """Every run of the registry, checked."""
    runs = json.loads((LOGS / "vllm-logs.json").read_text())["runs"]
    return [check_vllm_run(run, (LOGS / run["file"]).read_text()) for run in runs]


def _show(x: float | None, unit: str) -> str:
    if x is None:
        return "-"
    return f"{x / 2**30:.2f} GiB" if unit == "bytes" else f"{x:,.2f}"


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


if __name__ == "__main__":
    main()
