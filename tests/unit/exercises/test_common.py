"""gpulesson/exercises/bank/_common.py: what the banks share besides their wording."""

from __future__ import annotations

import pytest

from gpulesson import hardware
from gpulesson.exercises.bank import _common


def test_the_sparse_peak_is_the_datasheets_sparsity_figure() -> None:
    """NVIDIA H100 SXM datasheet: BF16 Tensor Core 1,979 TFLOPS "with sparsity", twice the
    dense 989.4 TFLOPS (the slip ``used_sparse_peak`` names)."""
    assert _common.sparse_peak({"gpu": "H100 SXM"}) == pytest.approx(1979e12, rel=1e-3)
    assert _common.sparse_peak({"gpu": "H100 SXM"}, "fp16") == pytest.approx(
        2 * hardware.gpu("H100 SXM").dense("fp16"), rel=1e-3)


def test_the_serving_menu_names_gpus_the_hardware_table_has() -> None:
    assert _common.SERVING_GPUS[0] == _common.H100
    assert all(hardware.gpu(name).name == name for name in _common.SERVING_GPUS)


def test_an_answer_at_the_sparse_peak_or_none_without_one() -> None:
    """Dividing 1e18 FLOPs by the H100's sparse 1,979 TFLOP/s instead of the dense 989.4
    halves the time; the V100 has no BF16 (nor 2:4 sparsity), so the slip does not apply."""
    def seconds(p: dict, *, peak: float | None = None) -> float:
        return 1e18 / (peak or hardware.gpu(p["gpu"]).dense("bf16"))

    slip = _common.at_sparse_peak(seconds)
    assert slip({"gpu": "H100 SXM"}) == pytest.approx(seconds({"gpu": "H100 SXM"}) / 2, rel=1e-3)
    assert slip({"gpu": "V100 SXM"}) is None


def test_the_decode_ceiling_reads_every_weight_once_per_token() -> None:
    """A 7B model in FP16 is 14 GB of weights; at the H100 SXM's 3.35 TB/s (NVIDIA H100
    datasheet) batch-1 decode reads them once per token: at most 3.35e12 / 14e9 = 239
    tokens/s. INT8 halves the bytes and doubles the ceiling."""
    p = {"n_params": 7e9}
    fp16 = _common.decode_ceiling(p, precision="fp16", bandwidth=3.35e12)
    assert fp16 == pytest.approx(239.3, rel=1e-3)
    assert _common.decode_ceiling(p, precision="int8", bandwidth=3.35e12) == pytest.approx(
        2 * fp16)


def test_the_sparse_ridge_is_twice_the_dense_one() -> None:
    """H100 SXM datasheet: FP16 Tensor Core 1,979 TFLOPS with sparsity, 3.35 TB/s of HBM3, so
    the roofline of the sparse figure bends at 1979e12 / 3.35e12 = 591 FLOP/byte, twice the
    dense ridge (the slip the ridge-point exercises name)."""
    p = {"gpu": "H100 SXM"}
    assert _common.sparse_ridge(p, "fp16") == pytest.approx(591, rel=2e-3)
    assert _common.sparse_ridge(p, "fp16") == pytest.approx(
        2 * hardware.gpu("H100 SXM").ridge_point("fp16"), rel=1e-3)


def test_training_seconds_at_the_clusters_sustained_rate() -> None:
    """Llama 3 405B: 3.8e25 FLOPs ("The Llama 3 Herd of Models", 2024) on 16,384 H100 SXM at the
    dense 989.4 TFLOP/s (NVIDIA datasheet) and 40% MFU take 3.8e25 / (16,384 x 989.4e12 x
    0.4) s, about 68 days; a slip at 100% MFU gives 40% of that."""
    p = {"gpus": 16_384, "gpu": "H100 SXM", "mfu": 0.40}
    seconds = _common.training_seconds(p, 3.8e25)
    assert seconds / 86_400 == pytest.approx(67.8, rel=5e-3)
    assert _common.training_seconds(p, 3.8e25, mfu=1.0) == pytest.approx(0.4 * seconds)


def test_the_intensity_slips_of_a_layer() -> None:
    """A batch of 1 through a 4096 x 4096 FP16 layer: 2 x 4096² FLOPs over the 2 x 4096²
    weight bytes is 1 FLOP/byte (the weights-only slip); with the input and output read and
    written too it is a little under 1, and counting multiply-adds halves it."""
    macs, weights_only = _common.intensity_slips(lambda p: (1, 4096, 4096), "fp16",
                                                 weights_only="Only the weights.")
    assert (macs.key, weights_only.key) == ("counted_macs", "weights_only")
    assert weights_only.hint == "Only the weights." and weights_only.value({}) == 1.0
    assert macs.value({}) == pytest.approx(0.5 * 4096**2 / (4096**2 + 2 * 4096))
