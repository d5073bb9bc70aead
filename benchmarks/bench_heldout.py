"""Predict the runs of later releases that the training model was never fitted on.

``gpulesson/data/heldout_runs.json`` holds Megatron-Bridge's 2026 pre-training rows (NeMo
26.04.01 to 26.08). The factors are fitted once, on ``gpulesson/data/training_runs.json``
(releases up to 25.11 and the papers); each held-out run is then planned on its published
layout twice: as its recipe runs it (the switches in its ``options``: CUDA graphs, fused
expert MLP, FP8 attention, all-to-all overlap) and with those switches off, to show what
they account for (:mod:`gpulesson.planning.heldout`, whose table lesson 10 also prints).
A time split: the fit has seen none of these releases. Then a split by code base: the 216
rows of MosaicML llm-foundry's MPT benchmarks (``gpulesson/data/foundry_runs.json``),
summed up by table and by sequence length. Last, a split by source: runs of papers,
READMEs and MLPerf logs whose figures the fit never saw
(``gpulesson/data/paper_runs.json``). No timing and no assert: a report.

Run: ``.venv/bin/python benchmarks/bench_heldout.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

# the checkout this script sits in, before any installed copy of the package
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpulesson.planning.heldout import (  # noqa: E402
    format_foundry_summary,
    format_held_out_table,
    format_paper_table,
    held_out_rows,
)


def main() -> None:
    print(format_held_out_table())
    print()
    print("switches each run's recipe states:")
    for row in held_out_rows():
        print(f"  {row.name:44s} {', '.join(row.switches) or '-'}")
    print()
    print(format_foundry_summary())
    print()
    print(format_paper_table())


if __name__ == "__main__":
    main()
