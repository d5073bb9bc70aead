"""The 16-bit GEMM ceiling of this GPU, measured the way practitioners measure it, and how
close the course's own timing comes to it.

Usage (on a machine with a CUDA GPU)::

    python scripts/gpu_ceiling.py --out benchmarks/results/ceiling.json

1. **The ceiling.** A sweep of GEMM shapes (square and the skinny-but-large shapes of
   transformer layers) in BF16 and FP16, each timed back to back with CUDA events over
   enough iterations to last about a second; the best sustained rate over the sweep is the
   ceiling. It uses PyTorch's ``torch.matmul`` (cuBLAS/cuBLASLt) where PyTorch is
   installed, else CuPy's ``matmul`` (cuBLAS), and records which.
2. **The course's timing.** ``gpulesson.machine.measure_gemm`` (through
   ``gpulesson.bench.benchmark``) on the largest square size, as a fraction of the ceiling
   (the goal: at least 85 % at large sizes).
3. **The harness's overhead.** The same CuPy call timed by ``bench.benchmark`` and by a bare
   pair of CUDA events around a loop; the difference is what the harness adds (the goal:
   at most 5 %).

Without a usable GPU it exits with code 2 and says why. The arithmetic of the report
(rates, the best sustained rate, fractions) is pure and tested on the CPU.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO_ROOT))

from gpulesson import gemm  # noqa: E402

#: (m, k, n) shapes of the sweep: squares, and the projections of a 4,096- and an
#: 8,192-wide transformer layer at 8,192 and 16,384 tokens (MLP up and down, attention).
SHAPES: tuple[tuple[int, int, int], ...] = (
    (4096, 4096, 4096), (8192, 8192, 8192), (12288, 12288, 12288), (16384, 16384, 16384),
    (8192, 4096, 14336), (8192, 14336, 4096), (16384, 8192, 28672), (16384, 28672, 8192),
    (16384, 8192, 8192), (8192, 8192, 1024),
)
DTYPES = ("bf16", "fp16")
#: Seconds of back-to-back GEMMs per shape (enough to reach the sustained clock).
SECONDS_PER_SHAPE = 1.0


@dataclass(frozen=True)
class ShapeRate:
    """One shape's measurement: best and median FLOP/s over the timed batches."""

    dtype: str
    m: int
    k: int
    n: int
    iterations: int
    best_seconds: float
    median_seconds: float

    @property
    def flops(self) -> int:
        return gemm.flops(self.m, self.k, self.n)

    @property
    def best_rate(self) -> float:
        return self.flops / self.best_seconds

    @property
    def median_rate(self) -> float:
        return self.flops / self.median_seconds

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "flops": self.flops, "best_rate": self.best_rate,
                "median_rate": self.median_rate}


def ceiling(rates: Sequence[ShapeRate], dtype: str) -> ShapeRate:
    """The shape with the best *sustained* (median) rate for ``dtype``."""
    rows = [r for r in rates if r.dtype == dtype]
    if not rows:
        raise ValueError(f"no measurement for dtype {dtype!r}")
    return max(rows, key=lambda r: r.median_rate)


def fraction(measured_rate: float, reference_rate: float) -> float:
    """``measured / reference``; both positive FLOP/s."""
    if not (measured_rate > 0 and reference_rate > 0):
        raise ValueError(f"rates must be positive, got {measured_rate!r} and {reference_rate!r}")
    return measured_rate / reference_rate


def overhead(harness_seconds: float, bare_seconds: float) -> float:
    """What the harness adds to a bare CUDA-event timing of the same call, as a fraction."""
    if not (harness_seconds > 0 and bare_seconds > 0):
        raise ValueError("times must be positive")
    return harness_seconds / bare_seconds - 1


# ---------------------------------------------------------------------------------------
# Measuring (GPU only)


def _events_timer(sync: Callable[[], None], event: Callable[[], Any],
                  elapsed_ms: Callable[[Any, Any], float]) -> Callable[..., list[float]]:
    def time_batches(call: Callable[[], None], iterations: int, batches: int) -> list[float]:
        out = []
        for _ in range(batches):
            start, stop = event(), event()
            start.record()
            for _ in range(iterations):
                call()
            stop.record()
            stop.synchronize()
            out.append(elapsed_ms(start, stop) / 1e3 / iterations)
        sync()
        return out
    return time_batches


def _torch_backend() -> tuple[str, Callable[..., Any]] | None:
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    timer = _events_timer(torch.cuda.synchronize,
                          lambda: torch.cuda.Event(enable_timing=True),
                          lambda a, b: a.elapsed_time(b))
    kinds = {"bf16": torch.bfloat16, "fp16": torch.float16}

    def run(dtype: str, m: int, k: int, n: int) -> ShapeRate:
        a = torch.randn(m, k, device="cuda", dtype=kinds[dtype])
        b = torch.randn(k, n, device="cuda", dtype=kinds[dtype])
        c = torch.empty(m, n, device="cuda", dtype=kinds[dtype])
        return _measure(lambda: torch.matmul(a, b, out=c), timer, dtype, m, k, n)

    return f"torch {torch.__version__} (cuBLAS)", run


def _cupy_backend() -> tuple[str, Callable[..., Any]] | None:
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001 - any failure means: no CuPy GPU here
        return None
    timer = _events_timer(cupy.cuda.Device().synchronize, cupy.cuda.Event,
                          cupy.cuda.get_elapsed_time)
    from gpulesson.machine import _resolve_dtype

    def run(dtype: str, m: int, k: int, n: int) -> ShapeRate:
        dt = _resolve_dtype(cupy, dtype)
        a = cupy.random.random_sample((m, k)).astype(dt)
        b = cupy.random.random_sample((k, n)).astype(dt)
        c = cupy.empty((m, n), dtype=dt)
        return _measure(lambda: cupy.matmul(a, b, out=c), timer, dtype, m, k, n)

    return f"cupy {cupy.__version__} (cuBLAS)", run


def _measure(call: Callable[[], Any], timer: Callable[..., list[float]], dtype: str,
             m: int, k: int, n: int) -> ShapeRate:
    first = timer(call, 3, 1)[0]  # warm-up and a first estimate
    iterations = max(3, int(SECONDS_PER_SHAPE / 5 / max(first, 1e-6)))
    times = sorted(timer(call, iterations, 5))
    return ShapeRate(dtype, m, k, n, iterations, times[0], times[len(times) // 2])


def harness_against_bare(n: int = 8192, dtype: str = "fp16") -> dict[str, Any]:
    """The course's benchmark() against bare CUDA events, on the same CuPy GEMM."""
    import cupy

    from gpulesson.bench import benchmark
    from gpulesson.device import get_device
    from gpulesson.machine import _resolve_dtype

    dev = get_device("gpu")
    dt = _resolve_dtype(cupy, dtype)
    a = cupy.random.random_sample((n, n)).astype(dt)
    b = cupy.random.random_sample((n, n)).astype(dt)
    c = cupy.empty((n, n), dtype=dt)

    def call() -> None:
        cupy.matmul(a, b, out=c)

    result = benchmark(call, warmup=3, repeats=20, min_time=1.0, device=dev,
                       flops=gemm.flops(n, n, n))
    timer = _events_timer(cupy.cuda.Device().synchronize, cupy.cuda.Event,
                          cupy.cuda.get_elapsed_time)
    bare = sorted(timer(call, 20, 5))
    return {"n": n, "dtype": dtype, "harness_median_s": result.median,
            "bare_median_s": bare[len(bare) // 2],
            "overhead": overhead(result.median, bare[len(bare) // 2])}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--quick", action="store_true", help="two shapes only")
    opts = parser.parse_args(argv)
    backend = _torch_backend() or _cupy_backend()
    if backend is None:
        print("gpu-ceiling: no usable CUDA GPU (neither torch.cuda nor cupy found one)",
              file=sys.stderr)
        return 2
    name, run = backend
    shapes = SHAPES[:2] if opts.quick else SHAPES
    rates = []
    for dtype in DTYPES:
        for shape in shapes:
            try:
                rates.append(run(dtype, *shape))
                r = rates[-1]
                print(f"{dtype} {shape}: best {r.best_rate / 1e12:,.1f} TFLOP/s, "
                      f"median {r.median_rate / 1e12:,.1f}", flush=True)
            except Exception as err:  # noqa: BLE001 - record and go on (e.g. out of memory)
                print(f"{dtype} {shape}: failed: {err}", flush=True)
    report: dict[str, Any] = {"date": _dt.date.today().isoformat(), "backend": name,
                              "rates": [r.to_dict() for r in rates], "ceiling": {}}
    for dtype in DTYPES:
        if any(r.dtype == dtype for r in rates):
            report["ceiling"][dtype] = ceiling(rates, dtype).to_dict()
    try:
        from gpulesson.device import get_device
        from gpulesson.machine import measure_gemm

        n = max(s[0] for s in shapes if s[0] == s[1] == s[2])
        for dtype in DTYPES:
            if dtype not in report["ceiling"]:
                continue
            ours = measure_gemm(n, dtype, get_device("gpu"), warmup=3, repeats=10, min_time=1.0)
            top = report["ceiling"][dtype]["median_rate"]
            report.setdefault("course_timing", {})[dtype] = {
                "n": n, "median_rate": ours.flops / ours.median,
                "fraction_of_ceiling": fraction(ours.flops / ours.median, top)}
        report["harness_overhead"] = harness_against_bare()
    except Exception as err:  # noqa: BLE001 - the ceiling itself is still worth keeping
        report["course_timing_error"] = repr(err)
    opts.out.parent.mkdir(parents=True, exist_ok=True)
    opts.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: report[k] for k in report if k != "rates"}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
