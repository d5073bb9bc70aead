"""The roofline model and Amdahl's law.

The roofline model (Williams, Waterman & Patterson, 2009, *Roofline: an insightful visual
performance model for multicore architectures*, CACM 52(4)) bounds the speed of a kernel
by the slower of two limits: the arithmetic it does at the peak FLOP rate, and the bytes
it moves at the memory bandwidth. The *arithmetic intensity* ``I`` (FLOPs per byte moved)
decides which limit binds; the *ridge point* ``peak / bandwidth`` is the intensity at
which both take the same time.

All quantities are SI base units: FLOPs, bytes, seconds, FLOP/s, bytes/s. Use dense
peaks (see :mod:`gpulesson.hardware`) unless a lesson is about sparsity.

Rounds of parallel work: ``cells`` independent pieces of work on ``workers`` that each
finish one piece per round take ``ceil(cells / workers)`` rounds (:func:`parallel_rounds`);
the last round may leave workers idle (:func:`parallel_occupancy`).

Taught in: ``notebooks/roofline_and_tensor_cores.ipynb`` (roofline) and
``notebooks/parallelism_at_the_core.ipynb`` (Amdahl's law, rounds of work).
"""

from __future__ import annotations

from fractions import Fraction

from gpulesson import _validate as v

__all__ = ["amdahl_speedup", "attainable_flops", "bound", "parallel_occupancy",
           "parallel_rounds", "ridge_point", "time"]


def ridge_point(peak_flops: float, bandwidth: float) -> float:
    """Arithmetic intensity (FLOP/byte) at which compute time equals memory time.

    ``ridge = peak_flops / bandwidth``. Kernels with a lower intensity are memory-bound.

    Parameters
    ----------
    peak_flops : float
        Peak rate, FLOP/s (dense, for the data type used).
    bandwidth : float
        Memory bandwidth, bytes/s.

    Examples
    --------
    H100 SXM, dense BF16 989.4 TFLOP/s and 3.35 TB/s: about 295 FLOP/byte.
    """
    peak = v.positive_number("peak_flops", peak_flops)
    bw = v.positive_number("bandwidth", bandwidth)
    return peak / bw


def attainable_flops(intensity: float, peak_flops: float, bandwidth: float) -> float:
    """The roofline: attainable FLOP/s = ``min(peak_flops, intensity * bandwidth)``.

    Parameters
    ----------
    intensity : float
        Arithmetic intensity of the kernel, FLOP per byte moved (> 0).
    peak_flops, bandwidth : float
        FLOP/s and bytes/s of the device.
    """
    i = v.positive_number("intensity", intensity)
    peak = v.positive_number("peak_flops", peak_flops)
    bw = v.positive_number("bandwidth", bandwidth)
    return min(peak, i * bw)


def bound(intensity: float, peak_flops: float, bandwidth: float) -> str:
    """``"compute"`` if ``intensity >= ridge_point`` else ``"memory"``."""
    i = v.positive_number("intensity", intensity)
    return "compute" if i >= ridge_point(peak_flops, bandwidth) else "memory"


def time(flops: float, bytes: float, peak_flops: float, bandwidth: float) -> float:
    """Roofline time in seconds: ``max(flops / peak_flops, bytes / bandwidth)``.

    Assumes compute and memory traffic overlap perfectly (the optimistic bound); a real
    kernel is slower. Either ``flops`` or ``bytes`` may be 0, not both negative.

    Parameters
    ----------
    flops : float
        FLOPs of the kernel (a count; a multiply-add is 2 FLOPs).
    bytes : float
        Bytes moved to and from memory.
    peak_flops : float
        FLOP/s.
    bandwidth : float
        bytes/s.
    """
    f = v.nonneg_number("flops", flops)
    b = v.nonneg_number("bytes", bytes)
    peak = v.positive_number("peak_flops", peak_flops)
    bw = v.positive_number("bandwidth", bandwidth)
    return max(f / peak, b / bw)


def amdahl_speedup(serial_fraction: float, workers: float) -> float:
    """Amdahl's law: speed-up ``1 / (s + (1 - s) / n)`` on ``n`` workers.

    Amdahl (1967), *Validity of the single processor approach to achieving large scale
    computing capabilities*, AFIPS. The limit for ``n -> inf`` is ``1 / s``: with 5 %
    serial work no number of cores gives more than 20x.

    Parameters
    ----------
    serial_fraction : float
        Fraction ``s`` of the single-worker run time that cannot be parallelised, in [0, 1].
    workers : float
        Number of workers ``n`` (>= 1; a float is allowed to draw curves).
    """
    s = v.fraction("serial_fraction", serial_fraction)
    n = v.number_at_least("workers", workers, 1)
    return 1.0 / (s + (1.0 - s) / n)


def parallel_rounds(cells: int, workers: int) -> int:
    """Rounds of work when each of ``workers`` finishes one of ``cells`` per round.

    ``ceil(cells / workers)``, exact for integers: a partly used round is still a round.
    The lesson's picture of parallel work, a stadium of workers each computing one
    independent output cell at a time: a 32 x 4,096 layer output (131,072 cells) takes
    16,384 rounds on 8 cores and 32 on 4,096 GPU lanes. Taught in:
    ``parallelism_at_the_core`` ("Serial work vs parallel work").

    Raises
    ------
    ValueError
        when ``cells`` or ``workers`` is not a positive integer.
    """
    c = v.positive_int("cells", cells)
    w = v.positive_int("workers", workers)
    return -(-c // w)


def parallel_occupancy(cells: int, workers: int) -> float:
    """Share of worker-rounds that do work: ``cells / (parallel_rounds * workers)``.

    1 when ``workers`` divides ``cells``; 4,097 cells on 4,096 lanes take 2 rounds and
    keep the lanes busy 50.01 % of the time. Taught in: ``parallelism_at_the_core``.
    """
    r = parallel_rounds(cells, workers)
    return float(Fraction(cells, r * workers))


v.guard_module(globals())
