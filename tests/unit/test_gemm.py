"""gpulesson.gemm: the FLOPs, the minimum bytes and the roofline analysis of one GEMM.

The argument rules every calculator shares (sizes are positive integers, flags are bools)
are checked in ``test_validate.py``.
"""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from gpulesson import gemm, roofline

from .strategies import bytes_per, finite_nonneg, rates, sizes

# ---------------------------------------------------------------------------------------
# Published figures


def test_source_seed_gemm_4096_fp32_figures() -> None:
    """Seed tensor-core calculator for N = 4096 in FP32: 137.4 GFLOP, 201.3 MB,
    682.7 FLOP/byte (right for 2N^3 and the 3N^2 minimum; BLAS definition of GEMM)."""
    assert round(gemm.flops(4096, 4096, 4096) / 1e9, 1) == 137.4
    assert round(gemm.min_bytes(4096, 4096, 4096, 4) / 1e6, 1) == 201.3
    assert round(gemm.arithmetic_intensity(4096, 4096, 4096, 4), 1) == 682.7


# ---------------------------------------------------------------------------------------
# Properties


@given(m=sizes, k=sizes, n=sizes, b=bytes_per, read_c=st.booleans())
def test_gemm_counts_are_exact_and_positive(m: int, k: int, n: int, b: float,
                                            read_c: bool) -> None:
    f = gemm.flops(m, k, n)
    assert isinstance(f, int) and f == 2 * m * k * n
    nbytes = gemm.min_bytes(m, k, n, b, read_c)
    assert isinstance(nbytes, int) and nbytes > 0
    assert gemm.min_bytes(m, k, n, b, True) >= gemm.min_bytes(m, k, n, b, False)


@given(m=sizes, k=sizes, n=sizes, peak=rates, bw=rates)
def test_gemm_analysis_is_consistent(m: int, k: int, n: int, peak: float, bw: float) -> None:
    a = gemm.analyse(m, k, n, peak_flops=peak, bandwidth=bw)
    assert finite_nonneg(a.time) and a.time == max(a.compute_time, a.memory_time)
    assert a.bound == roofline.bound(a.intensity, peak, bw)
    attainable = roofline.attainable_flops(a.intensity, peak, bw)
    assert attainable <= peak * (1 + 1e-12)
    assert math.isclose(a.flops / a.time, attainable, rel_tol=1e-9)
