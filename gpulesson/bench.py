"""Honest timing: warm-up, repeats, median and spread, device synchronisation.

Time one call::

    import numpy as np
    from gpulesson import gemm
    from gpulesson.bench import benchmark

    a = np.random.default_rng(0).standard_normal((512, 512))
    r = benchmark(lambda: a @ a, flops=gemm.flops(512, 512, 512))
    print(r.describe())            # "median 6.1 ms (IQR 0.2 ms, 5 runs), 44.0 GFLOP/s ..."
    r.fraction_of_peak(peak_flops=100e9)

Compare the same computation on numpy and, where a GPU is usable, cupy, across sizes::

    from gpulesson.bench import compare, sizes_for

    def inputs(n):                       # numpy arrays, copied to each device by compare
        rng = np.random.default_rng(n)
        return rng.standard_normal((n, n)), rng.standard_normal((n, n))

    table = compare(
        lambda xp, a, b: a @ b,          # runs on numpy, and on cupy when a GPU is usable
        inputs,
        sizes_for(kind="gemm"),          # small on CPU, large on GPU
        flops=lambda n: gemm.flops(n, n, n),
    )
    print(table.to_text())               # times, speed-ups, FLOP/s; plotting.comparison_plot

How timing works
----------------
* ``warmup`` untimed calls first (caches, lazy initialisation, kernel compilation).
* At least ``repeats`` timed calls, more until ``min_time`` seconds have been measured
  (at most ``max_repeats``). Each call is timed on its own; the result keeps every time.
* CPU: :func:`time.perf_counter` around each call.
* GPU: ``cupyx.profiler.benchmark``, which records CUDA events before and after each call
  and synchronises, so the time is the device's, not the launch's (a GPU call returns to
  Python before the work is done).
* The median is the headline; the spread is the interquartile range (IQR). The fastest
  run (``min``) is what the hardware can do when nothing interferes.

Speed goals never live in timed asserts (machines differ); ``benchmarks/`` prints them.

``GPULESSON_TIMING=smoke`` makes every :func:`benchmark` a quick smoke run (at most one
warm-up and two timed calls, no ``min_time``): for test runs that exercise code paths,
not timings, such as the notebooks on the GPU stand-in of ``tests/gpu_standin``.
Taught in: ``parallelism_at_the_core`` (loop vs vectorised vs GPU), ``roofline_and_tensor_cores``.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpulesson import units
from gpulesson.device import Device, cpu_device, get_device, to_numpy

#: Environment variable: ``smoke`` turns every benchmark into a quick smoke run.
TIMING_ENV = "GPULESSON_TIMING"

__all__ = [
    "TIMING_ENV",
    "GPU_MEMORY_SHARE",
    "SIZE_FOOTPRINT",
    "SIZE_KINDS",
    "BenchResult",
    "ComparisonRow",
    "ComparisonTable",
    "MismatchError",
    "NOISY_SPREAD",
    "benchmark",
    "compare",
    "sizes_for",
]


# ---------------------------------------------------------------------------------------
# One measurement


@dataclass(frozen=True)
class BenchResult:
    """The times of one benchmarked callable and the rates they imply.

    Attributes
    ----------
    name:
        what was timed.
    times:
        seconds per call, one entry per timed call, in the order measured.
    device_kind, device_name:
        where it ran (``"cpu"``/``"gpu"`` and the processor's name).
    timer:
        how it was timed (``"time.perf_counter"`` or ``"CUDA events (cupyx.profiler.benchmark)"``).
    flops, bytes:
        work per call (FLOPs, bytes moved) when given; enable the rate properties.
    warmup:
        untimed calls made first.
    """

    name: str
    times: tuple[float, ...]
    device_kind: str
    device_name: str
    timer: str
    flops: float | None = None
    bytes: float | None = None
    warmup: int = 0

    def __post_init__(self) -> None:
        if not self.times:
            raise ValueError("times must hold at least one measured time, got none")
        if any((not math.isfinite(t)) or t < 0 for t in self.times):
            raise ValueError(f"times must be finite and non-negative, got {self.times!r}")

    @property
    def repeats(self) -> int:
        """Number of timed calls."""
        return len(self.times)

    @property
    def median(self) -> float:
        """Median time per call (s): the headline figure."""
        return float(np.median(self.times))

    @property
    def min(self) -> float:
        """Fastest call (s)."""
        return float(min(self.times))

    @property
    def max(self) -> float:
        """Slowest call (s)."""
        return float(max(self.times))

    @property
    def mean(self) -> float:
        """Mean time per call (s)."""
        return float(np.mean(self.times))

    @property
    def q1(self) -> float:
        """First quartile of the times (s)."""
        return float(np.percentile(self.times, 25))

    @property
    def q3(self) -> float:
        """Third quartile of the times (s)."""
        return float(np.percentile(self.times, 75))

    @property
    def iqr(self) -> float:
        """Interquartile range q3 - q1 (s): the spread, robust to one-off hiccups."""
        return self.q3 - self.q1

    @property
    def spread(self) -> float:
        """Relative spread: IQR / median (0.05 means the middle half within 5 %)."""
        return self.iqr / self.median if self.median > 0 else 0.0

    @property
    def flop_rate(self) -> float | None:
        """Achieved FLOP/s at the median time, or ``None`` without a FLOP count."""
        if self.flops is None or self.median <= 0:
            return None
        return self.flops / self.median

    @property
    def byte_rate(self) -> float | None:
        """Achieved bytes/s at the median time, or ``None`` without a byte count."""
        if self.bytes is None or self.median <= 0:
            return None
        return self.bytes / self.median

    @property
    def intensity(self) -> float | None:
        """Arithmetic intensity flops / bytes (FLOP/byte) when both counts are known."""
        if self.flops is None or not self.bytes:
            return None
        return self.flops / self.bytes

    def fraction_of_peak(
        self, peak_flops: float | None = None, bandwidth: float | None = None
    ) -> float:
        """The share of the hardware's limit this run achieved (0.42 means 42 %).

        * ``peak_flops`` only: achieved FLOP/s / peak FLOP/s.
        * ``bandwidth`` only: achieved bytes/s / bandwidth.
        * both: achieved FLOP/s / the roofline's attainable FLOP/s at this run's arithmetic
          intensity (:func:`gpulesson.roofline.attainable_flops`), i.e. the fraction of
          what the roofline model allows for this kernel.
        """
        for label, value in (("peak_flops", peak_flops), ("bandwidth", bandwidth)):
            if value is not None and (
                isinstance(value, bool) or not math.isfinite(value) or value <= 0
            ):
                raise ValueError(f"{label} must be a positive finite number, got {value!r}")
        if peak_flops is None and bandwidth is None:
            raise ValueError("fraction_of_peak needs peak_flops (FLOP/s) or bandwidth (bytes/s)")
        if peak_flops is not None and bandwidth is not None:
            if self.flop_rate is None or self.intensity is None:
                raise ValueError(
                    "fraction_of_peak(peak_flops=..., bandwidth=...) needs both counts: pass "
                    "flops= and bytes= to benchmark()"
                )
            from gpulesson import roofline  # the calculator owns the formula

            attainable = roofline.attainable_flops(
                self.intensity, peak_flops=peak_flops, bandwidth=bandwidth
            )
            return self.flop_rate / attainable
        if peak_flops is not None:
            if self.flop_rate is None:
                raise ValueError(
                    "fraction_of_peak(peak_flops=...) needs the FLOP count: pass flops= "
                    "to benchmark()"
                )
            return self.flop_rate / peak_flops
        if self.byte_rate is None:
            raise ValueError(
                "fraction_of_peak(bandwidth=...) needs the byte count: pass bytes= to "
                "benchmark()"
            )
        assert bandwidth is not None
        return self.byte_rate / bandwidth

    def describe(self) -> str:
        """One line with units: median, spread, runs, device and the rates."""
        parts = [
            f"{self.name} on {self.device_kind.upper()} ({self.device_name}): "
            f"median {units.format_seconds(self.median)} "
            f"(IQR {units.format_seconds(self.iqr)}, min {units.format_seconds(self.min)}, "
            f"{self.repeats} runs after {self.warmup} warm-up)"
        ]
        if self.flop_rate is not None:
            parts.append(units.format_flop_rate(self.flop_rate))
        if self.byte_rate is not None:
            parts.append(units.format_bandwidth(self.byte_rate))
        return ", ".join(parts)

    def to_record(self) -> dict[str, Any]:
        """A flat, JSON-ready dict (seconds, FLOP/s, bytes/s)."""
        return {
            "name": self.name,
            "device_kind": self.device_kind,
            "device_name": self.device_name,
            "timer": self.timer,
            "repeats": self.repeats,
            "warmup": self.warmup,
            "median_s": self.median,
            "min_s": self.min,
            "max_s": self.max,
            "iqr_s": self.iqr,
            "flops": self.flops,
            "bytes": self.bytes,
            "flop_rate": self.flop_rate,
            "byte_rate": self.byte_rate,
        }


def _check_count(name: str, value: Any, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_work(name: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number or None, got {type(value).__name__}")
    if not math.isfinite(float(value)) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


def _time_on_cpu(
    fn: Callable[..., Any], args: tuple, warmup: int, repeats: int, min_time: float,
    max_repeats: int,
) -> list[float]:
    for _ in range(warmup):
        fn(*args)
    times: list[float] = []
    total = 0.0
    clock = time.perf_counter
    while len(times) < repeats or (total < min_time and len(times) < max_repeats):
        start = clock()
        fn(*args)
        elapsed = clock() - start
        times.append(elapsed)
        total += elapsed
    return times


def _time_on_gpu(
    fn: Callable[..., Any], args: tuple, warmup: int, repeats: int, min_time: float,
    max_repeats: int,
) -> list[float]:
    from cupyx.profiler import benchmark as cupy_benchmark  # only on a usable GPU

    first = cupy_benchmark(fn, args, n_repeat=repeats, n_warmup=warmup)
    times = [float(t) for t in np.asarray(first.gpu_times)[0]]
    total = sum(times)
    if total < min_time and len(times) < max_repeats:
        per_call = max(float(np.median(times)), 1e-9)
        more = min(max_repeats - len(times), math.ceil((min_time - total) / per_call))
        if more > 0:
            extra = cupy_benchmark(fn, args, n_repeat=more, n_warmup=0)
            times.extend(float(t) for t in np.asarray(extra.gpu_times)[0])
    return times


def benchmark(
    fn: Callable[..., Any],
    *args: Any,
    warmup: int = 1,
    repeats: int = 5,
    min_time: float = 0.02,
    max_repeats: int = 1000,
    flops: float | None = None,
    bytes: float | None = None,  # the natural name; the builtin is not needed here
    device: Device | None = None,
    name: str | None = None,
) -> BenchResult:
    """Time ``fn(*args)`` honestly and return every time plus rates.

    Parameters
    ----------
    fn, args:
        the callable and its positional arguments (arrays already on the device).
    warmup:
        untimed calls first (>= 0).
    repeats:
        minimum number of timed calls (>= 1).
    min_time:
        keep timing until this many seconds were measured (>= 0), up to ``max_repeats``.
    flops, bytes:
        work done by one call: FLOPs (e.g. ``gemm.flops(m, k, n)``) and bytes moved.
    device:
        the device ``fn`` runs on; decides the timer. ``None`` means :func:`get_device`.
        Pass ``cpu_device()`` for numpy code on a GPU machine.
    name:
        a label; defaults to ``fn.__name__``.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    warmup = _check_count("warmup", warmup, minimum=0)
    repeats = _check_count("repeats", repeats, minimum=1)
    max_repeats = _check_count("max_repeats", max_repeats, minimum=repeats)
    if isinstance(min_time, bool) or not isinstance(min_time, (int, float)) or not (
        math.isfinite(min_time) and min_time >= 0
    ):
        raise ValueError(f"min_time must be a finite number of seconds >= 0, got {min_time!r}")
    flops_count = _check_work("flops", flops)
    bytes_count = _check_work("bytes", bytes)
    if os.environ.get(TIMING_ENV, "").strip().lower() == "smoke":  # code paths, not timings
        warmup, repeats, min_time = min(warmup, 1), min(repeats, 2), 0.0
        max_repeats = max(repeats, min(max_repeats, 2))
    dev = device if device is not None else get_device()
    if dev.is_gpu:
        times = _time_on_gpu(fn, args, warmup, repeats, float(min_time), max_repeats)
        timer = "CUDA events (cupyx.profiler.benchmark)"
    else:
        times = _time_on_cpu(fn, args, warmup, repeats, float(min_time), max_repeats)
        timer = "time.perf_counter"
    return BenchResult(
        name=name or getattr(fn, "__name__", "call"),
        times=tuple(times),
        device_kind=dev.kind,
        device_name=dev.name,
        timer=timer,
        flops=flops_count,
        bytes=bytes_count,
        warmup=warmup,
    )


# ---------------------------------------------------------------------------------------
# Problem sizes per device

#: Problem sizes by kind and device kind. CPU sizes keep each lesson under seconds on two
#: cores; GPU sizes are large enough that launch overhead does not dominate the timings.
SIZE_KINDS: Mapping[str, Mapping[str, tuple[int, ...]]] = {
    # n for an n x n x n matrix multiply (2 n^3 FLOPs)
    "gemm": {"cpu": (32, 64, 128, 256, 512, 1024), "gpu": (256, 512, 1024, 2048, 4096, 8192)},
    # n for an n x n matrix times a vector (memory-bound)
    "matvec": {"cpu": (256, 512, 1024, 2048, 4096), "gpu": (1024, 4096, 8192, 16384, 32768)},
    # elements of a 1-D array copied or updated element-wise
    "copy": {"cpu": (2**14, 2**17, 2**20, 2**23), "gpu": (2**20, 2**23, 2**26, 2**28)},
    "elementwise": {"cpu": (2**14, 2**17, 2**20, 2**23), "gpu": (2**20, 2**23, 2**26, 2**28)},
    # n for a pure-Python triple-loop matrix multiply (n^3 Python steps): runs on the CPU
    # whatever the device, so the sizes do not grow on a GPU machine
    "loop": {"cpu": (16, 32, 64, 128), "gpu": (16, 32, 64, 128)},
}


#: Bytes a problem of each kind keeps on the device at size ``n``, in the widest precision
#: the lessons use for it (three FP64 matrices for a GEMM, one FP32 matrix for a
#: matrix-vector product, a float32 source and destination for a copy).
SIZE_FOOTPRINT: Mapping[str, Callable[[int], int]] = {
    "gemm": lambda n: 3 * n * n * 8,
    "matvec": lambda n: n * n * 4,
    "copy": lambda n: 2 * n * 4,
    "elementwise": lambda n: 2 * n * 4,
    "loop": lambda n: 0,  # runs in Python on the host
}
#: On a GPU, a size is used only if its footprint is at most this share of the device's
#: memory: a lesson holds several such problems at once, CuPy's memory pool keeps freed
#: blocks, and a 16 GB laptop GPU must not run out. An 80 GB GPU still gets every size.
GPU_MEMORY_SHARE = 1 / 16


def sizes_for(device: Device | str | None = None, kind: str = "gemm") -> list[int]:
    """Problem sizes for ``kind`` on ``device``: small on CPU, large on GPU.

    On a :class:`Device` that is a GPU with known memory, the GPU sizes whose footprint
    (:data:`SIZE_FOOTPRINT`) exceeds :data:`GPU_MEMORY_SHARE` of its memory are left out
    (the smallest GPU size always stays): an 80 GB H100 gets the whole GPU table, a 16 GB
    card the sizes up to a 4,096-wide GEMM, and a small device the small end of the table.

    Parameters
    ----------
    device:
        a :class:`Device`, ``"cpu"`` or ``"gpu"``; ``None`` means :func:`get_device`.
    kind:
        one of ``gemm``, ``matvec``, ``copy``, ``elementwise``, ``loop`` (see
        :data:`SIZE_KINDS` for what the size means in each).

    Raises
    ------
    ValueError
        an unknown ``kind`` or ``device``, or a size table without sizes for the device's
        kind (every kind needs CPU and GPU sizes).
    """
    if kind not in SIZE_KINDS:
        raise ValueError(f"kind must be one of {', '.join(SIZE_KINDS)}, got {kind!r}")
    if device is None:
        device = get_device()
    memory = None
    if isinstance(device, Device):
        device_kind, memory = device.kind, device.memory_bytes
    elif device in ("cpu", "gpu"):
        device_kind = device
    else:
        raise ValueError(f"device must be a Device, 'cpu' or 'gpu', got {device!r}")
    sizes = SIZE_KINDS[kind].get(device_kind)
    if not sizes:
        raise ValueError(
            f"SIZE_KINDS[{kind!r}] has no {device_kind!r} sizes: every kind needs CPU and "
            f"GPU sizes, got {dict(SIZE_KINDS[kind])!r}")
    if device_kind == "gpu" and memory:
        fits = [n for n in sizes if SIZE_FOOTPRINT[kind](n) <= GPU_MEMORY_SHARE * memory]
        return fits or [min(sizes)]
    return list(sizes)


# ---------------------------------------------------------------------------------------
# Comparing implementations across sizes


#: A time cell is flagged as noisy when IQR / median exceeds this.
NOISY_SPREAD = 0.5


class MismatchError(AssertionError):
    """Two implementations of the same computation gave different answers."""


@dataclass(frozen=True)
class ComparisonRow:
    """One implementation at one size.

    ``result`` is ``None`` when the implementation was skipped at this size (a Python loop
    above ``reference_max_size``). ``speedup`` is baseline median / this median.
    """

    size: int
    implementation: str
    device_kind: str
    result: BenchResult | None
    max_abs_error: float | None
    speedup: float | None

    @property
    def median(self) -> float | None:
        """Median seconds per call, or ``None`` when skipped."""
        return None if self.result is None else self.result.median


@dataclass(frozen=True)
class ComparisonTable:
    """Times and speed-ups of several implementations across problem sizes.

    Print it with :meth:`to_text`, plot it with :func:`gpulesson.plotting.comparison_plot`,
    or turn it into records (one dict per size and implementation) with :meth:`to_records`.
    """

    title: str
    sizes: tuple[int, ...]
    implementations: tuple[str, ...]
    baseline: str
    rows: tuple[ComparisonRow, ...]
    size_label: str = "n"
    notes: tuple[str, ...] = field(default_factory=tuple)

    def row(self, size: int, implementation: str) -> ComparisonRow:
        """The row for ``size`` and ``implementation`` (KeyError naming the known ones)."""
        for r in self.rows:
            if r.size == size and r.implementation == implementation:
                return r
        raise KeyError(
            f"no row for size={size!r}, implementation={implementation!r}; sizes are "
            f"{list(self.sizes)}, implementations {list(self.implementations)}"
        )

    def medians(self, implementation: str) -> list[float | None]:
        """Median seconds per call of ``implementation`` at each size (None = skipped)."""
        return [self.row(n, implementation).median for n in self.sizes]

    def speedups(self, implementation: str) -> list[float | None]:
        """Speed-up of ``implementation`` over the baseline at each size."""
        return [self.row(n, implementation).speedup for n in self.sizes]

    def to_records(self) -> list[dict[str, Any]]:
        """One JSON-ready dict per size and implementation."""
        records = []
        for r in self.rows:
            record: dict[str, Any] = {
                "size": r.size,
                "implementation": r.implementation,
                "device_kind": r.device_kind,
                "median_s": r.median,
                "speedup": r.speedup,
                "baseline": self.baseline,
                "max_abs_error": r.max_abs_error,
            }
            if r.result is not None:
                record.update(
                    min_s=r.result.min, iqr_s=r.result.iqr, repeats=r.result.repeats,
                    flop_rate=r.result.flop_rate, byte_rate=r.result.byte_rate,
                )
            records.append(record)
        return records

    def to_text(self) -> str:
        """A plain-text table: median time per call, then speed-up over the baseline."""
        name_width = max(12, *(len(i) for i in self.implementations)) + 2
        size_width = max(len(self.size_label), *(len(str(n)) for n in self.sizes)) + 2

        def block(heading: str, cell: Callable[[ComparisonRow], str]) -> list[str]:
            lines = [heading]
            lines.append(
                self.size_label.rjust(size_width)
                + "".join(i.rjust(name_width) for i in self.implementations)
            )
            for n in self.sizes:
                cells = "".join(
                    cell(self.row(n, i)).rjust(name_width) for i in self.implementations
                )
                lines.append(str(n).rjust(size_width) + cells)
            return lines

        def time_cell(r: ComparisonRow) -> str:
            if r.result is None:
                return "skipped"
            mark = " *" if r.result.spread > NOISY_SPREAD else ""
            return units.format_seconds(r.result.median) + mark

        def speed_cell(r: ComparisonRow) -> str:
            return "-" if r.speedup is None else _format_speedup(r.speedup)

        lines = [self.title]
        lines += block("median time per call", time_cell)
        if len(self.implementations) > 1:
            lines.append("")
            lines += block(f"speed-up over {self.baseline} (higher is faster)", speed_cell)
        if any(r.result is not None and r.result.flop_rate for r in self.rows):

            def rate_cell(r: ComparisonRow) -> str:
                if r.result is None or r.result.flop_rate is None:
                    return "-"
                return units.format_flop_rate(r.result.flop_rate)

            lines.append("")
            lines += block("achieved FLOP/s at the median time", rate_cell)
        if any(r.result is not None and r.result.spread > NOISY_SPREAD for r in self.rows):
            lines.append("")
            lines.append(
                f"* noisy: the middle half of the runs spans more than {NOISY_SPREAD:.0%} of "
                "the median, usually because another program competed for the cores; the "
                "fastest runs (min_s in to_records()) show what the hardware can do."
            )
        lines += list(self.notes)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()


def _callable_name(fn: Callable[..., Any]) -> str:
    name = getattr(fn, "__name__", "")
    return name if name and not name.startswith("<") else "computation"


#: A speedup's decimals as it grows: ``1234.5 -> '1,234x'``, ``12.34 -> '12.3x'``,
#: ``0.0123 -> '0.0123x'``.
_SPEEDUP_STEPS = ((100, ",.0f"), (10, ".1f"), (0, ".3g"))


def _format_speedup(speedup: float) -> str:
    return units.format_by_size(speedup, _SPEEDUP_STEPS) + "x"


def _to_device(value: Any, device: Device) -> Any:
    if isinstance(value, np.ndarray):
        return device.xp.asarray(value)
    return value


def _default_devices() -> list[Device]:
    devices = [cpu_device("numpy on the CPU: the baseline every machine has")]
    current = get_device()
    if current.is_gpu:
        devices.append(current)
    return devices


def compare(
    fn: Callable[..., Any],
    setup: Callable[[int], Any],
    sizes: Sequence[int],
    *,
    reference: Callable[..., Any] | None = None,
    reference_name: str = "Python loop",
    reference_max_size: int | None = None,
    flops: Callable[[int], float] | None = None,
    bytes: Callable[[int], float] | None = None,
    devices: Sequence[Device] | None = None,
    baseline: str | None = None,
    rtol: float = 1e-5,
    atol: float = 1e-8,
    warmup: int = 1,
    repeats: int = 3,
    min_time: float = 0.0,
    title: str | None = None,
    size_label: str = "n",
) -> ComparisonTable:
    """Run the same computation on numpy and (when usable) cupy across sizes; check answers.

    Parameters
    ----------
    fn:
        the vectorised computation, called ``fn(xp, *args)`` with ``xp`` numpy or cupy.
    setup:
        ``setup(n)`` returns the inputs for size ``n`` as numpy arrays (a tuple, or one
        array); arrays are copied to each device, so every implementation gets the same
        numbers. Seed your generator inside it.
    sizes:
        problem sizes (use :func:`sizes_for`).
    reference:
        optional plain implementation, called ``reference(*args)`` with the numpy inputs
        (a Python loop, say); timed on the CPU and shown as ``reference_name``.
    reference_max_size:
        skip ``reference`` above this size (a triple loop at n = 1024 takes minutes).
    flops, bytes:
        work per call as a function of ``n`` (e.g. ``lambda n: gemm.flops(n, n, n)``).
    devices:
        where ``fn`` runs; default numpy on the CPU plus the GPU when :func:`get_device`
        finds one (``GPULESSON_DEVICE=cpu`` keeps it to numpy).
    baseline:
        the implementation speed-ups are measured against; default ``reference_name``
        when there is a reference, else numpy.
    rtol, atol:
        agreement tolerance against the first implementation's answer at each size.

    Raises
    ------
    MismatchError
        an implementation's answer differs from the first one beyond the tolerance.
    """
    if not callable(fn) or not callable(setup):
        raise TypeError("fn and setup must be callables: fn(xp, *args), setup(n) -> args")
    sizes = tuple(_check_count(f"sizes[{i}]", n, minimum=1) for i, n in enumerate(sizes))
    if not sizes:
        raise ValueError("sizes must hold at least one problem size, got none")
    if reference_max_size is not None:
        _check_count("reference_max_size", reference_max_size, minimum=1)
    devices = list(devices) if devices is not None else _default_devices()
    if not devices:
        raise ValueError("devices must hold at least one Device, got none")

    columns: list[tuple[str, Device, bool]] = []  # (name, device, is_reference)
    if reference is not None:
        columns.append((reference_name, cpu_device("plain Python on the CPU"), True))
    for dev in devices:
        columns.append((f"{dev.xp.__name__} ({dev.kind.upper()})", dev, False))
    names = tuple(c[0] for c in columns)
    if len(set(names)) != len(names):
        raise ValueError(f"implementation names must be distinct, got {names}")
    baseline = baseline or names[0]
    if baseline not in names:
        raise ValueError(f"baseline must be one of {list(names)}, got {baseline!r}")

    results: dict[tuple[int, str], BenchResult | None] = {}
    errors: dict[tuple[int, str], float | None] = {}
    for n in sizes:
        inputs = setup(n)
        args = inputs if isinstance(inputs, tuple) else (inputs,)
        expected: np.ndarray | None = None
        expected_by = ""
        for name, dev, is_reference in columns:
            if is_reference and reference_max_size is not None and n > reference_max_size:
                results[(n, name)], errors[(n, name)] = None, None
                continue
            if is_reference:
                assert reference is not None
                call, call_args = reference, args
            else:
                call_args = (dev.xp, *(_to_device(a, dev) for a in args))
                call = fn
            answer = to_numpy(call(*call_args))
            if expected is None:
                expected, expected_by, err = answer, name, 0.0
            else:
                if answer.shape != expected.shape or not np.allclose(
                    answer, expected, rtol=rtol, atol=atol
                ):
                    diff = (np.max(np.abs(answer - expected))
                            if answer.shape == expected.shape else float("nan"))
                    raise MismatchError(
                        f"{name} and {expected_by} disagree at {size_label}={n}: shapes "
                        f"{answer.shape} vs {expected.shape}, max abs difference {diff:.3g} "
                        f"(rtol={rtol}, atol={atol})"
                    )
                err = float(np.max(np.abs(answer - expected))) if answer.size else 0.0
            errors[(n, name)] = err
            results[(n, name)] = benchmark(
                call, *call_args, warmup=warmup, repeats=repeats, min_time=min_time,
                flops=None if flops is None else flops(n),
                bytes=None if bytes is None else bytes(n),
                device=dev, name=f"{name}, {size_label}={n}",
            )

    rows = []
    for n in sizes:
        base = results[(n, baseline)]
        for name, dev, _ in columns:
            result = results[(n, name)]
            speedup = (base.median / result.median
                       if base is not None and result is not None and result.median > 0
                       else None)
            rows.append(ComparisonRow(n, name, dev.kind, result, errors[(n, name)], speedup))
    return ComparisonTable(
        title=title or f"{_callable_name(fn)} across sizes",
        sizes=sizes,
        implementations=names,
        baseline=baseline,
        rows=tuple(rows),
        size_label=size_label,
    )
