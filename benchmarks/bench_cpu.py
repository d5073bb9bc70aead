"""This machine's CPU, measured: GEMM FLOP/s across sizes, copy bandwidth, loop vs vectorised.

Run: ``.venv/bin/python benchmarks/bench_cpu.py`` (about 10 s on two cores; ``--quick``
for a smaller run). Everything runs on numpy whatever GPU exists; ``make gpu-check``
measures a GPU.

It prints

1. the GEMM rate of ``A @ B`` (n x n, FLOPs from ``gemm.flops``) in fp64 and fp32 at the
   sizes ``sizes_for("cpu", "gemm")`` gives the lessons: median and best run. Small
   matrices are far from the peak (too little work per call to fill the cores and hide
   the call overhead); the rate levels off once n reaches a few hundred;
2. the copy bandwidth ``dst[...] = src`` (bytes read + written per second) across array
   sizes: small arrays fit in cache and copy faster than main memory allows;
3. a pure-Python triple loop against numpy's vectorised matmul, answers checked, with
   the speed-up: the gap between one interpreted multiply-add at a time and BLAS.

Speed goals live here, printed, never in timed asserts: machines differ.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpulesson import gemm, units  # noqa: E402
from gpulesson.bench import compare, sizes_for  # noqa: E402
from gpulesson.device import cpu_device  # noqa: E402
from gpulesson.machine import measure_copy, measure_gemm, this_machine  # noqa: E402


def loop_matmul(a: np.ndarray, b: np.ndarray) -> list[list[float]]:
    """C = A B one multiply-add at a time, in plain Python (lists, no numpy inside)."""
    rows, inner, cols = len(a), len(b), len(b[0])
    a_rows, b_rows = a.tolist(), b.tolist()
    c = [[0.0] * cols for _ in range(rows)]
    for i in range(rows):
        a_i, c_i = a_rows[i], c[i]
        for k in range(inner):
            a_ik, b_k = a_i[k], b_rows[k]
            for j in range(cols):
                c_i[j] += a_ik * b_k[j]
    return c


def square_pair(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n)
    return rng.standard_normal((n, n)), rng.standard_normal((n, n))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer sizes and repeats")
    args = parser.parse_args()
    start = time.perf_counter()
    cpu = cpu_device("numpy on the CPU")
    repeats = 3 if args.quick else 5
    print(cpu.describe())

    print("\n1. GEMM C = A @ B, n x n (2n^3 FLOPs), median and best of", repeats, "runs")
    gemm_sizes = sizes_for(cpu, "gemm")[:-1] if args.quick else sizes_for(cpu, "gemm")
    print(f"{'n':>6} {'fp64 median':>16} {'fp64 best':>16} {'fp32 median':>16} "
          f"{'fp32 best':>16}")
    for n in gemm_sizes:
        cells = []
        for dtype in ("fp64", "fp32"):
            r = measure_gemm(n, dtype, cpu, repeats=repeats, min_time=0.05)
            assert r.flops == gemm.flops(n, n, n) and r.flop_rate is not None
            cells += [units.format_flop_rate(r.flop_rate), units.format_flop_rate(r.flops / r.min)]
        print(f"{n:>6} " + " ".join(f"{c:>16}" for c in cells))

    print("\n2. Copy dst[...] = src (float32), bytes read + written per second")
    print(f"{'array':>12} {'median':>14} {'best':>14}")
    for elements in sizes_for(cpu, "copy"):
        r = measure_copy(elements * 4, cpu, repeats=repeats * 2, min_time=0.05)
        assert r.byte_rate is not None and r.bytes is not None
        print(f"{units.format_bytes(elements * 4, binary=True):>12} "
              f"{units.format_bandwidth(r.byte_rate):>14} "
              f"{units.format_bandwidth(r.bytes / r.min):>14}")

    print("\n3. Python triple loop vs numpy (vectorised BLAS), fp64, answers checked")
    loop_sizes = sizes_for(cpu, "loop")[:-1] if args.quick else sizes_for(cpu, "loop")
    table = compare(
        lambda xp, a, b: a @ b, square_pair, loop_sizes, reference=loop_matmul,
        devices=[cpu], flops=lambda n: gemm.flops(n, n, n), repeats=3,
        title="matmul n x n: Python loop vs numpy",
    )
    print(table.to_text())

    print("\n4. This machine, as the lessons see it (gpulesson.machine.this_machine)")
    print(this_machine().describe())
    print(f"\n(total {units.format_seconds(time.perf_counter() - start)})")


if __name__ == "__main__":
    main()
