"""Lesson 2's GEMM calculator on published figures: the GEMM's FLOPs and bytes, and the
datasheet figures its GPU preset fills."""

from __future__ import annotations

import pytest

from gpulesson import calculators as C


def test_gemm_4096_in_fp32():
    """C = A·B of 4096 × 4096 matrices in FP32 (BLAS GEMM, Dongarra et al. 1990): 2·N³ =
    137,438,953,472 FLOPs (the seed lesson's 137.4 GFLOP), at least 3·N²·4 = 201.3 MB of
    traffic and 682.7 FLOP/byte."""
    out = C.compute("gemm", dtype="fp32")
    assert out["flops"] == 137_438_953_472
    assert out["bytes"] == 201_326_592
    assert round(out["intensity"], 1) == 682.7


def test_h100_preset_fills_the_dense_datasheet_peaks():
    """NVIDIA H100 whitepaper (2022), H100 SXM5: 989.4 TFLOP/s dense BF16 (not the 1,979
    of the 2:4-sparse headline), 1,978.9 dense FP8, 3.35 TB/s; the roofline bends at
    989.4 / 3.35 = 295.3 FLOP/byte, so a 4096³ BF16 GEMM (1,365 FLOP/byte) is
    compute-bound and runs at the peak."""
    shown = C.resolve("gemm", gpu="H100 SXM", dtype="bf16")
    assert (shown["peak_flops"], shown["bandwidth"]) == (989.4, 3.35)
    assert C.resolve("gemm", gpu="H100 SXM", dtype="fp8")["peak_flops"] == 1978.9
    out = C.compute("gemm")
    assert out["ridge_point"] == pytest.approx(295.3, abs=0.05)
    assert (out["bound"], out["attainable"]) == ("compute", 989.4e12)


def test_a_matrix_vector_product_is_memory_bound():
    """Williams, Waterman & Patterson 2009: below the ridge point the memory roof limits.
    A BF16 matrix-vector product (M = 1) does about 1 FLOP per byte on an A100 80GB
    (312 TFLOP/s dense BF16, 2.039 TB/s: ridge at 153 FLOP/byte, A100 datasheet 2021)."""
    out = C.compute("gemm", m=1, gpu="A100 80GB")
    assert out["intensity"] == pytest.approx(1.0, rel=1e-3)
    assert out["bound"] == "memory"
    assert out["ridge_point"] == pytest.approx(153.0, abs=0.05)
    assert out["attainable"] < 0.01 * 312e12


def test_a_gpu_without_the_precision_is_an_error_naming_the_gpu_input():
    """The V100 datasheet (2020) has no BF16 tensor-core rate; its dense FP16 is 125 TFLOP/s."""
    with pytest.raises(ValueError, match=r"^gpu: V100 SXM has no dense bf16 figure"):
        C.compute("gemm", gpu="V100 SXM", dtype="bf16")
    assert C.resolve("gemm", gpu="V100 SXM", dtype="fp16")["peak_flops"] == 125


def test_the_largest_gemm_counts_its_flops_exactly():
    """2 · 262,144³ = 2^55 FLOPs: an exact integer beyond 2^53, which reaches the browser
    as text (a JavaScript number would round it)."""
    result = C.evaluate("gemm", {"m": 262_144, "k": 262_144, "n": 262_144})
    assert result["values"]["flops"] == str(2**55)
