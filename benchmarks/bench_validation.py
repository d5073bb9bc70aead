"""Print the training model's leave-one-out table on the published runs.

Every run of ``gpulesson/data/training_runs.json`` is predicted by the factors fitted on
all the others (:func:`gpulesson.planning.published.leave_one_out`): the same table the
planning lesson shows, then the fitted factors. No timing and no assert: a report.

Run: ``.venv/bin/python benchmarks/bench_validation.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

# the checkout this script sits in, before any installed copy of the package
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpulesson.planning import calibration, published  # noqa: E402
from gpulesson.planning.training import default_factors  # noqa: E402


def main() -> None:
    print(published.format_table())
    print()
    print("factors fitted on every run (prior in brackets):")
    for name, value in default_factors().items():
        print(f"  {name:22s} {value:10.4g}  ({calibration.PRIOR[name]:.4g})")


if __name__ == "__main__":
    main()
