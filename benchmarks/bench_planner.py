"""Time the training planner's layout search, the slowest thing the planning form asks.

Lesson 10's form (and the site's planning calculator, in Pyodide) calls
:func:`gpulesson.planning.plan_training` with ``layout="auto"`` on every change: it plans
every layout of tensor, pipeline, context and expert parallelism, ZeRO stage and
micro-batch that divides the model and the batch, and keeps the fastest that fits. A dense
8B model on 8 GPUs has a few dozen layouts; a mixture-of-experts model on 256 GPUs has
about 1,300 (DeepSeek-V3: 1,270). Each search below is timed over several rounds in this
process (the first call, which fits the model's factors once, is left out) and the median
printed, with the number of layouts planned.

Goal: a mixture-of-experts preset on 256 GPUs planned in well under a second, so that the
form answers while the learner is still looking. In the site's page (Pyodide in Chromium,
the build of 25d3eaf, same machine) choosing DeepSeek-V3, Kimi K2 or Mixtral 8x7B on the
calculators page's planning form showed its plan 0.41, 0.47 and 0.36 s after the choice;
the first plan of a page load took 1.3 s (the model's factors are fitted once).
Measured 2026-12-07 on the 2-core development machine, median of 5: the three MoE
searches below took 0.29 + 0.48 + 0.46 = 1.24 s before the planner kept its per-model FLOPs
and per-micro-batch activations between layouts, 0.24 + 0.40 + 0.36 = 1.00 s after.

Run: ``.venv/bin/python benchmarks/bench_planner.py [--rounds N]``. No assert: a report.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

# the checkout this script sits in, before any installed copy of the package
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpulesson import planning  # noqa: E402
from gpulesson.planning.training import candidate_layouts, model_view  # noqa: E402

CASES = [("qwen3-8b", 8), ("llama-3-70b", 64), ("mixtral-8x7b", 256), ("deepseek-v3", 256),
         ("kimi-k2", 256)]
SEQ, TOKENS, BATCH = 4096, 2e12, 4 * 2**20


def _plan(model: str, n_gpus: int) -> None:
    planning.plan_training(model, "H100 SXM", n_gpus=n_gpus, tokens=TOKENS,
                           global_batch_tokens=BATCH, seq_len=SEQ)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    _plan("qwen3-8b", 8)  # fits the factors once
    print(f"{'model':<16}{'GPUs':>6}{'layouts':>9}{'median s':>10}")
    for model, n_gpus in CASES:
        layouts = len(candidate_layouts(model_view(model), n_gpus=n_gpus, seq_len=SEQ,
                                        domain=8, sequences=BATCH / SEQ))
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            _plan(model, n_gpus)
            times.append(time.perf_counter() - start)
        print(f"{model:<16}{n_gpus:>6}{layouts:>9}{statistics.median(times):>10.3f}")


if __name__ == "__main__":
    main()
