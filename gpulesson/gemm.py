"""FLOPs, bytes and arithmetic intensity of a matrix multiplication (GEMM).

``C (m x n) = A (m x k) @ B (k x n)``. Each of the ``m*n`` outputs is a dot product of
length ``k``: ``k`` multiplies and ``k`` adds, so a GEMM is ``2*m*k*n`` FLOPs. (Tools such
as fvcore or ptflops count multiply-adds, MACs, and report half this figure.)

The *minimum* memory traffic reads A and B once and writes C once:
``(m*k + k*n + m*n) * bytes_per_element``. BLAS computes ``C = alpha*A@B + beta*C``; when
``beta != 0`` C is also read, adding ``m*n*bytes_per_element`` (``read_c=True``). Real
kernels move more when the operands do not fit in on-chip memory; this is the floor.

Sources: the BLAS GEMM definition (Dongarra et al. 1990, *A set of level 3 basic linear
algebra subprograms*, ACM TOMS 16(1)); NVIDIA, *Matrix Multiplication Background User's
Guide* (Deep Learning Performance docs), which uses the same FLOP and byte counts.

Taught in: ``notebooks/roofline_and_tensor_cores.ipynb``.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpulesson import _validate as v
from gpulesson import roofline

__all__ = ["GemmAnalysis", "analyse", "arithmetic_intensity", "flops", "min_bytes"]


def flops(m: int, k: int, n: int) -> int:
    """FLOPs of an ``(m x k) @ (k x n)`` product: ``2*m*k*n`` (exact ``int``).

    Examples
    --------
    >>> flops(2, 3, 4)
    48
    """
    m = v.positive_int("m", m)
    k = v.positive_int("k", k)
    n = v.positive_int("n", n)
    return 2 * m * k * n


def min_bytes(
    m: int, k: int, n: int, bytes_per_element: float = 2, read_c: bool = False
) -> int:
    """Minimum bytes moved: ``(m*k + k*n + m*n) * b``, plus ``m*n*b`` when C is read.

    Parameters
    ----------
    m, k, n : int
        Matrix sizes.
    bytes_per_element : float
        2 for FP16/BF16, 4 for FP32, 1 for FP8/INT8, 0.5 for INT4 (rounded up to whole
        bytes).
    read_c : bool
        True when the GEMM also reads C (``beta != 0`` in ``C = alpha*A@B + beta*C``).
    """
    m = v.positive_int("m", m)
    k = v.positive_int("k", k)
    n = v.positive_int("n", n)
    b = v.positive_number("bytes_per_element", bytes_per_element)
    v.boolean("read_c", read_c)
    elements = m * k + k * n + m * n + (m * n if read_c else 0)
    return v.tensor_bytes(elements, b)


def arithmetic_intensity(
    m: int, k: int, n: int, bytes_per_element: float = 2, read_c: bool = False
) -> float:
    """FLOPs per byte of minimum traffic: ``flops(m, k, n) / min_bytes(...)``.

    For a square ``N x N`` GEMM in 2-byte precision this is ``2N^3 / (6N^2) = N/3``.
    """
    return flops(m, k, n) / min_bytes(m, k, n, bytes_per_element, read_c)


@dataclass(frozen=True)
class GemmAnalysis:
    """Everything the tensor-core calculator shows for one GEMM on one device.

    Attributes
    ----------
    flops : int
        ``2*m*k*n``.
    bytes : int
        Minimum bytes moved.
    intensity : float
        FLOP per byte.
    ridge_point : float
        ``peak_flops / bandwidth`` of the device, FLOP per byte.
    compute_time, memory_time : float
        ``flops / peak_flops`` and ``bytes / bandwidth``, seconds.
    time : float
        Roofline time, the larger of the two, seconds.
    bound : str
        ``"compute"`` or ``"memory"``.
    """

    flops: int
    bytes: int
    intensity: float
    ridge_point: float
    compute_time: float
    memory_time: float
    time: float
    bound: str


def analyse(
    m: int,
    k: int,
    n: int,
    *,
    peak_flops: float,
    bandwidth: float,
    bytes_per_element: float = 2,
    read_c: bool = False,
) -> GemmAnalysis:
    """FLOPs, bytes, intensity and roofline time of one GEMM on a device.

    Parameters
    ----------
    m, k, n : int
        Matrix sizes of ``(m x k) @ (k x n)``.
    peak_flops : float
        Dense peak FLOP/s for the data type (e.g. ``gpu("H100 SXM").peak_flops["bf16"]``).
    bandwidth : float
        Memory bandwidth, bytes/s.
    bytes_per_element, read_c
        As in :func:`min_bytes`.

    Examples
    --------
    A 4096^3 BF16 GEMM on an H100 SXM: 137.4 GFLOP, 100.7 MB, 1365 FLOP/byte,
    compute-bound, about 139 microseconds at the dense peak.
    """
    f = flops(m, k, n)
    b = min_bytes(m, k, n, bytes_per_element, read_c)
    ridge = roofline.ridge_point(peak_flops, bandwidth)
    compute_time = f / peak_flops
    memory_time = b / bandwidth
    intensity = f / b
    return GemmAnalysis(
        flops=f,
        bytes=b,
        intensity=intensity,
        ridge_point=ridge,
        compute_time=compute_time,
        memory_time=memory_time,
        time=max(compute_time, memory_time),
        bound="compute" if intensity >= ridge else "memory",
    )


v.guard_module(globals())
