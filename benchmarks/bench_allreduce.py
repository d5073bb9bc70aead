"""A real all-reduce between processes, printed as nccl-tests prints it, with the fits.

Run: ``.venv/bin/python benchmarks/bench_allreduce.py`` (MPI: the ``dist`` extra,
``pip install -e '.[dist]'``). Options: ``--ranks 2,4,8`` (default: the counts with a
core for every rank), ``--min-bytes 4096``, ``--max-bytes 67108864``, ``--factor 2``,
``--iterations 20``, ``--warmup 5``, ``--repeats 5``, ``--max-seconds-per-size 1``,
``--algorithm ring`` (or ``recursive_doubling``, ``rabenseifner``, ``default``),
``--hosts node1:4,node2:4`` (across machines, ``mpirun -H``), ``--backend gloo`` or
``nccl`` (torch.distributed instead of MPI, where PyTorch is installed).

For every rank count it prints the nccl-tests rows (out-of-place and in-place: size,
count, type, redop, root, time in us, algbw and busbw in GB/s, #wrong), which algorithm
ran and how the library confirmed it, the one-line alpha-beta fit and the separate
latency and bandwidth regimes, and whether each size lies within its spread. A time is
the slowest rank's average per call, median over ``--repeats`` blocks; it depends on the
machine and what else runs on it, so the load average is printed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpulesson import collectives  # noqa: E402
from gpulesson.units import format_bandwidth, format_seconds  # noqa: E402


def _load() -> float:
    """1-minute load average (runnable processes): above the core count, times get noisy."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", default=None, help="comma-separated rank counts")
    parser.add_argument("--min-bytes", type=int, default=4 * 2**10)
    parser.add_argument("--max-bytes", type=int, default=64 * 2**20)
    parser.add_argument("--factor", type=int, default=2, help="size step, like nccl-tests -f")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5, help="timed blocks; median reported")
    parser.add_argument("--min-seconds-per-size", type=float, default=0.02)
    parser.add_argument("--max-seconds-per-size", type=float, default=1.0)
    parser.add_argument("--dtype", default="float32", choices=sorted(collectives.DTYPES))
    parser.add_argument("--algorithm", default="ring", choices=sorted(collectives.ALGORITHMS))
    parser.add_argument("--hosts", default=None, help="mpirun -H list: node1:4,node2:4")
    parser.add_argument("--backend", default="mpi", choices=("mpi", "gloo", "nccl"))
    args = parser.parse_args()
    if args.factor < 2:
        parser.error(f"--factor must be an integer >= 2, got {args.factor}")
    sizes = []
    size = args.min_bytes
    while size <= args.max_bytes:
        sizes.append(size)
        size *= args.factor
    if args.ranks:
        ranks = [int(n) for n in args.ranks.split(",")]
    elif args.hosts:
        ranks = [sum(int(h.split(":")[1]) if ":" in h else 1 for h in args.hosts.split(","))]
    else:
        ranks, skipped = collectives.ranks_for_this_machine()
        if skipped:
            print(f"# {collectives.usable_cores()} cores here: skipping "
                  f"{', '.join(map(str, skipped))} ranks (more ranks than cores measure the "
                  "scheduler; --ranks runs them anyway)")

    start = time.perf_counter()
    for n_ranks in ranks:
        load_before, t0 = _load(), time.perf_counter()
        if args.backend == "mpi":
            rows = collectives.run_allreduce_benchmark(
                n_ranks, sizes, iterations=args.iterations, warmup=args.warmup,
                repeats=args.repeats, dtype=args.dtype, passes="both",
                algorithm=args.algorithm, min_seconds_per_size=args.min_seconds_per_size,
                max_seconds_per_size=args.max_seconds_per_size, hosts=args.hosts,
                timeout=600)
        else:
            rows = collectives.run_torch_allreduce(
                n_ranks, sizes, backend=args.backend, iterations=args.iterations,
                warmup=args.warmup, repeats=args.repeats, dtype=args.dtype,
                max_seconds_per_size=args.max_seconds_per_size, timeout=600)
        print(f"# all_reduce, {n_ranks} ranks on {rows[0].hosts} host(s), {rows[0].library}")
        print(f"# algorithm: {collectives.ALGORITHMS[rows[0].algorithm].label}; "
              f"{rows[0].algorithm_check}")
        print(f"# time = mean per call, slowest rank, median of {rows[0].repeats} blocks; "
              f"run took {time.perf_counter() - t0:.1f} s; load average before/after "
              f"{load_before:.2f}/{_load():.2f} on {os.cpu_count()} CPUs")
        print(collectives.nccl_tests_rows(rows))
        measured = [m for m in rows if m.in_place == (args.backend != "mpi")]
        try:
            line = collectives.fit_alpha_beta(measured)
        except ValueError as error:  # e.g. a loaded machine: times that do not grow
            print(f"# no alpha-beta fit for these rows: {error}")
            print()
            continue
        print(f"# one line: alpha = {format_seconds(line.alpha_seconds)}, beta = "
              f"{format_bandwidth(line.beta_bytes_per_second)}, R^2 (log t) = {line.r2:.4f}")
        if len(measured) >= 6:
            fit = collectives.fit_regimes(measured)
            for r in fit.regimes:
                beta = "" if r.beta_bytes_per_second is None else \
                    f", beta {format_bandwidth(r.beta_bytes_per_second)}"
                print(f"# {r.kind} regime {r.first_bytes}-{r.last_bytes} B: alpha "
                      f"{format_seconds(r.alpha_seconds)}{beta}")
            print(f"# {'size (B)':>10} {'measured/model':>15} {'spread':>7} {'within':>7}")
            for s, ratio, spread, ok in zip(fit.sizes, fit.ratios, fit.spreads,
                                            fit.within_spread, strict=True):
                print(f"# {int(s):>10d} {ratio:>15.2f} {spread:>7.2f} {'yes' if ok else 'no':>7}")
        print()
    print(f"# total {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
