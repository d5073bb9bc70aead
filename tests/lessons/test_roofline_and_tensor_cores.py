"""Lesson 2, *Rooflines and Tensor Cores*: the seed figures the lesson recomputes.

``hardware.flops_per_watt``, once a helper of this lesson's bank, is tested with the other
datasheet figures in ``tests/calculators/test_sources_hardware.py``.
"""

from __future__ import annotations

from gpulesson import gemm
from gpulesson.exercises.bank.roofline_and_tensor_cores import seed_bytes_precision


def test_seed_gemm_figures_are_fp32_ones():
    """The seed calculator page: 4096^3 GEMM, '201.3 MB' and '682.7 ops/byte'. Both follow
    from 3·N² elements of 4 bytes (FP32), which exercise 1 asks the learner to find."""
    n = 4096
    assert round(gemm.min_bytes(n, n, n, bytes_per_element=4) / 1e6, 1) == 201.3
    assert round(gemm.arithmetic_intensity(n, n, n, bytes_per_element=4), 1) == 682.7
    assert seed_bytes_precision.answer_value() == "fp32"
