"""gpulesson.hardware: datasheet figures (dense and sparse kept apart), their sources, and
FLOP/s per watt."""

from __future__ import annotations

import pytest

from gpulesson import hardware
from gpulesson.hardware import gpu

# ---------------------------------------------------------------------------------------
# Published figures


# (GPU, field, expected, source)
DATASHEET = [
    ("H100 SXM", "bf16", 989.4e12, "NVIDIA H100 Tensor Core GPU Architecture whitepaper, 2022"),
    ("H100 SXM", "fp16", 989.4e12, "NVIDIA H100 whitepaper, FP16 with FP32 accumulate"),
    ("H100 SXM", "fp8", 1978.9e12, "NVIDIA H100 whitepaper"),
    ("RTX 4090", "fp16", 165.2e12, "NVIDIA Ada GPU Architecture whitepaper, FP32 accumulate"),
    ("A100 80GB", "bf16", 312e12, "NVIDIA A100 datasheet"),
    ("A100 40GB", "tf32", 156e12, "NVIDIA A100 datasheet"),
    ("V100 SXM", "fp16", 125e12, "NVIDIA V100 datasheet, Tensor Performance"),
    ("L40S", "bf16", 362.05e12, "NVIDIA L40S datasheet"),
    ("MI300X", "bf16", 1307.4e12, "AMD Instinct MI300X data sheet"),
]


@pytest.mark.parametrize(("name", "dtype", "expected", "source"), DATASHEET,
                         ids=[f"{r[0]}-{r[1]}" for r in DATASHEET])
def test_source_datasheet_dense_peak(name: str, dtype: str, expected: float,
                                     source: str) -> None:
    """Dense tensor-core peaks from the vendors' datasheets/whitepapers (see ``source``)."""
    assert gpu(name).peak_flops[dtype] == pytest.approx(expected, rel=1e-9), source


# (GPU, memory bytes, bandwidth bytes/s)
MEMORY = [
    ("H100 SXM", 80e9, 3.35e12), ("H100 PCIe", 80e9, 2.0e12), ("H200", 141e9, 4.8e12),
    ("A100 40GB", 40e9, 1555e9), ("A100 80GB", 80e9, 2039e9), ("V100 SXM", 32e9, 900e9),
    ("RTX 4090", 24e9, 1008e9), ("L4", 24e9, 300e9), ("L40S", 48e9, 864e9),
    ("MI300X", 192e9, 5.3e12), ("B200", 180e9, 8e12),
]


@pytest.mark.parametrize(("name", "memory", "bandwidth"), MEMORY, ids=[r[0] for r in MEMORY])
def test_source_datasheet_memory_and_bandwidth(name: str, memory: float,
                                               bandwidth: float) -> None:
    """Memory capacity (GB as printed) and peak memory bandwidth from each datasheet:
    NVIDIA V100/A100/H100/H200/L4/L40S datasheets, HGX B200 specifications, the Ada
    whitepaper (RTX 4090: 1,008 GB/s) and AMD's MI300X data sheet (5.3 TB/s)."""
    spec = gpu(name)
    assert spec.memory_bytes == memory
    assert spec.bandwidth == pytest.approx(bandwidth)


def test_source_h100_datasheet_headline_is_sparse() -> None:
    """NVIDIA H100 datasheet: '1,979 teraFLOPS' FP16/BF16 carries the footnote 'with
    sparsity'; the dense figure is half (989.4, H100 whitepaper)."""
    spec = gpu("H100 SXM")
    assert round(spec.sparse_flops["fp16"] / 1e12) == 1979
    assert spec.sparse_flops["fp16"] == pytest.approx(2 * spec.peak_flops["fp16"], rel=1e-4)
    assert "fp16" in spec.peak_flops and spec.peak_flops["fp16"] < spec.sparse_flops["fp16"]


def test_source_rtx4090_fp16_accumulate_rate_is_double() -> None:
    """Ada whitepaper, RTX 4090: 165.2 TFLOPS FP16 with FP32 accumulate, 330.3 with FP16
    accumulate (the figure the seed's '165 TFLOPS' leaves ambiguous)."""
    spec = gpu("RTX 4090")
    assert spec.other_flops["fp16_fp16_accumulate"] == pytest.approx(330.3e12)
    assert spec.peak_flops["fp16"] == pytest.approx(165.2e12)


def test_every_figure_has_a_dated_source() -> None:
    """gpus.json: each figure names a source, and each source has a date."""
    for spec in hardware.GPUS.values():
        keys = {"memory_bytes", "bandwidth", "tdp_watts", "interconnect_bandwidth"}
        keys |= {f"peak_flops.{k}" for k in spec.peak_flops}
        keys |= {f"sparse_flops.{k}" for k in spec.sparse_flops}
        assert keys <= set(spec.figure_sources), spec.name
    for source in hardware.SOURCES.values():
        assert source["date"][:2] == "20" and source["title"]


# FLOP/s per watt: dense peak over rated board power; expected values by hand from the
# datasheets' printed figures, not by the function.


def test_h100_sxm_dense_fp16_per_watt() -> None:
    """NVIDIA H100 whitepaper (2022), SXM5: 989.4 TFLOP/s dense FP16 at 700 W max TDP,
    i.e. 1.4134 TFLOP/s per watt."""
    assert hardware.flops_per_watt(hardware.gpu("H100 SXM"), "fp16") == \
        pytest.approx(1.4134e12, rel=1e-4)


def test_l4_dense_fp16_per_watt() -> None:
    """NVIDIA L4 datasheet (2023): 242 TFLOPS FP16 *with sparsity*, 121 dense, at 72 W:
    1.68 TFLOP/s per watt dense (the sparse headline would claim 3.36)."""
    value = hardware.flops_per_watt(hardware.gpu("L4"), "fp16")
    assert value == pytest.approx(121e12 / 72, rel=1e-3)
    assert hardware.flops_per_watt(hardware.gpu("L4"), "fp16", sparse=True) == \
        pytest.approx(242e12 / 72, rel=1e-3)


def test_a100_fp32_per_watt() -> None:
    """NVIDIA A100 datasheet (2021), SXM: 19.5 TFLOP/s FP32 at 400 W: 48.75 GFLOP/s per W."""
    assert hardware.flops_per_watt(hardware.gpu("A100 80GB"), "fp32") == \
        pytest.approx(48.75e9)


# ---------------------------------------------------------------------------------------
# Validation


def test_flops_per_watt_missing_dtype_names_what_exists() -> None:
    with pytest.raises(KeyError, match="V100 SXM has no dense 'bf16' figure.*fp16"):
        hardware.flops_per_watt(hardware.gpu("V100 SXM"), "bf16")


@pytest.mark.parametrize("watts", [None, 0, -5.0, float("nan"), True])
def test_flops_per_watt_refuses_missing_or_bad_power(watts: object) -> None:
    class Measured:
        name = "This machine"
        peak_flops = {"fp32": 1e11}
        tdp_watts = watts

    with pytest.raises(ValueError, match="tdp_watts of This machine must be a positive"):
        hardware.flops_per_watt(Measured(), "fp32")


@pytest.mark.parametrize("bad", [-1, "H100 SXM", None, {"peak_flops": {}}])
def test_flops_per_watt_refuses_what_is_not_a_spec(bad: object) -> None:
    """``flops_per_watt(-1)`` raised AttributeError; a GPU name is looked up with ``gpu``."""
    with pytest.raises(TypeError, match="spec must be a GPUSpec"):
        hardware.flops_per_watt(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="dtype must be a name"):
        hardware.flops_per_watt(gpu("H100 SXM"), ["fp16"])  # type: ignore[arg-type]
