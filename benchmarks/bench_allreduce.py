"""A real MPI all-reduce between local processes, printed like nccl-tests, with the alpha-beta fit.

Run: ``.venv/bin/python benchmarks/bench_allreduce.py`` (needs the ``dist`` extra:
``pip install -e '.[dist]'``). Options: ``--ranks 2,4``, ``--min-bytes 4096``,
``--max-bytes 67108864``, ``--factor 4``, ``--iterations 20``, ``--warmup 5``,
``--repeats 5``, ``--min-seconds-per-size 0.02``, ``--max-seconds-per-size 2``,
``--in-place``, ``--dtype float32``.

For every rank count it prints the measured table (size, count, type, redop, time,
algbw, busbw, #wrong; time in microseconds, bandwidths in GB/s = 10^9 bytes/s), the fitted
latency alpha and bandwidth beta of ``t = alpha + 2(n-1)/n * S / beta``, and the model's
prediction next to each measurement. A time is the average per call of a block of calls,
for the slowest rank, median over ``--repeats`` blocks (see :mod:`gpulesson.collectives`);
it depends on the machine and on what else runs on it, so the load average is printed.
"""

from __future__ import annotations

import argparse
import os
import time

from gpulesson import collectives
from gpulesson.units import format_bandwidth, format_seconds


def _load() -> float:
    """1-minute load average (runnable processes): above the CPU count, times get noisy."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", default="2,4", help="comma-separated rank counts")
    parser.add_argument("--min-bytes", type=int, default=4 * 2**10)
    parser.add_argument("--max-bytes", type=int, default=64 * 2**20)
    parser.add_argument("--factor", type=int, default=4, help="size step, like nccl-tests -f")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5, help="timed blocks; median reported")
    parser.add_argument("--min-seconds-per-size", type=float, default=0.02)
    parser.add_argument("--max-seconds-per-size", type=float, default=2.0)
    parser.add_argument("--dtype", default="float32", choices=sorted(collectives.DTYPES))
    parser.add_argument("--in-place", action="store_true")
    args = parser.parse_args()
    if args.factor < 2:
        parser.error(f"--factor must be an integer >= 2, got {args.factor}")

    sizes = []
    size = args.min_bytes
    while size <= args.max_bytes:
        sizes.append(size)
        size *= args.factor

    start = time.perf_counter()
    for n_ranks in (int(n) for n in args.ranks.split(",")):
        load_before = _load()
        t0 = time.perf_counter()
        rows = collectives.run_allreduce_benchmark(
            n_ranks,
            sizes,
            iterations=args.iterations,
            warmup=args.warmup,
            repeats=args.repeats,
            dtype=args.dtype,
            in_place=args.in_place,
            min_seconds_per_size=args.min_seconds_per_size,
            max_seconds_per_size=args.max_seconds_per_size,
        )
        wall = time.perf_counter() - t0
        place = "in-place" if args.in_place else "out-of-place"
        print(f"# all_reduce, {n_ranks} ranks, {place}, {rows[0].library}")
        calls = [m.iterations * m.repeats for m in rows]
        print(f"# time = mean per call, slowest rank, median of {rows[0].repeats} blocks; "
              f"{min(calls)} to {max(calls)} timed calls per size after {args.warmup} "
              f"warm-up calls; "
              f"run took {wall:.1f} s; load average before/after {load_before:.2f}/"
              f"{_load():.2f} on {os.cpu_count()} CPUs")  # fmt: skip
        print(collectives.format_table(rows))
        fit = collectives.fit_alpha_beta(rows)
        print(
            f"# alpha-beta fit: alpha = {format_seconds(fit.alpha_seconds)}, "
            f"beta = {format_bandwidth(fit.beta_bytes_per_second)}, "
            f"R^2 (log t) = {fit.r2:.4f}"
        )
        print(f"# {'size (B)':>10} {'measured (us)':>14} {'model (us)':>11} {'model/meas':>10}")
        for row, predicted in zip(rows, collectives.predict_times(fit, sizes), strict=True):
            print(
                f"# {row.size_bytes:>10d} {row.time_seconds * 1e6:>14.1f} "
                f"{predicted * 1e6:>11.1f} {predicted / row.time_seconds:>10.2f}"
            )
        print()
    print(f"# total {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
