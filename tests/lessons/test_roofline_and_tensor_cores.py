"""Lesson 2, *Rooflines and Tensor Cores*: the helper its bank adds, and the seed figures the
lesson recomputes.

``flops_per_watt`` divides a datasheet's dense peak by its rated board power; the expected
values below are computed by hand from the datasheets' printed figures, not by the function.
"""

from __future__ import annotations

import pytest

from gpulesson import gemm, hardware
from gpulesson.exercises.bank.roofline_and_tensor_cores import flops_per_watt, seed_bytes_precision


def test_h100_sxm_dense_fp16_per_watt():
    """NVIDIA H100 whitepaper (2022), SXM5: 989.4 TFLOP/s dense FP16 at 700 W max TDP,
    i.e. 1.4134 TFLOP/s per watt."""
    assert flops_per_watt(hardware.gpu("H100 SXM"), "fp16") == pytest.approx(1.4134e12,
                                                                             rel=1e-4)


def test_l4_dense_fp16_per_watt():
    """NVIDIA L4 datasheet (2023): 242 TFLOPS FP16 *with sparsity*, 121 dense, at 72 W:
    1.68 TFLOP/s per watt dense (the sparse headline would claim 3.36)."""
    value = flops_per_watt(hardware.gpu("L4"), "fp16")
    assert value == pytest.approx(121e12 / 72, rel=1e-3)
    assert value < hardware.gpu("L4").sparse_flops["fp16"] / 72 / 1.9


def test_a100_fp32_per_watt():
    """NVIDIA A100 datasheet (2021), SXM: 19.5 TFLOP/s FP32 at 400 W: 48.75 GFLOP/s per W."""
    assert flops_per_watt(hardware.gpu("A100 80GB"), "fp32") == pytest.approx(48.75e9)


def test_missing_dtype_names_what_exists():
    with pytest.raises(KeyError, match="V100 SXM has no dense 'bf16' figure.*fp16"):
        flops_per_watt(hardware.gpu("V100 SXM"), "bf16")


@pytest.mark.parametrize("watts", [None, 0, -5.0, float("nan"), True])
def test_missing_or_bad_power_is_refused(watts):
    class Measured:
        name = "This machine"
        peak_flops = {"fp32": 1e11}
        tdp_watts = watts

    with pytest.raises(ValueError, match="tdp_watts of This machine must be a positive"):
        flops_per_watt(Measured(), "fp32")


def test_seed_gemm_figures_are_fp32_ones():
    """The seed calculator page: 4096^3 GEMM, '201.3 MB' and '682.7 ops/byte'. Both follow
    from 3·N² elements of 4 bytes (FP32), which exercise 1 asks the learner to find."""
    n = 4096
    assert round(gemm.min_bytes(n, n, n, bytes_per_element=4) / 1e6, 1) == 201.3
    assert round(gemm.arithmetic_intensity(n, n, n, bytes_per_element=4), 1) == 682.7
    assert seed_bytes_precision.answer_value() == "fp32"
