"""gpulesson.hardware: datasheet figures (dense and sparse kept apart), their sources,
memory as reported and as usable, links and NICs, FLOP/s per watt, and the spec-sheet
mistakes a calculator warns about.

The 2024-26 parts are read from their vendors' pages: NVIDIA's HGX table (HGX B300 8-GPU
totals; FP4 printed "sparse | dense", the other tensor rates sparse with "dense is 1/2
sparse spec shown"), its GB200 NVL72 and GB300 NVL72 rack tables (72-GPU totals), the H100
and H200 datasheets (NVL columns, sparse only), the RTX Blackwell whitepaper (RTX 5090),
and AMD's MI325X and MI355X pages (dense rates, sparse rows apart).
"""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest

from gpulesson import _validate as v
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
    ("MI325X", "fp8", 2614.9e12, "AMD Instinct MI325X specifications, 2024"),
    ("MI355X", "bf16", 2.5e15, "AMD Instinct MI355X specifications: BF16 matrix 2.5 PFLOPs"),
    ("MI355X", "fp4", 10.1e15, "AMD MI355X: MXFP4 matrix 10.1 PFLOPs, no sparsity row"),
    ("MI355X", "fp6", 10.1e15, "AMD MI355X: MXFP6 matrix 10.1 PFLOPs, at the MXFP4 rate"),
    ("B300", "fp4", 13.5e15, "NVIDIA HGX B300: FP4 144 | 108 PFLOPS per 8 GPUs"),
    ("B300", "bf16", 2.25e15, "NVIDIA HGX B300: FP16/BF16 36 PFLOPS sparse per 8 GPUs"),
    ("B300", "int8", 153.5e12, "NVIDIA Blackwell Ultra datasheet, HGX B300: INT8 307 TOPS sparse"),
    ("B200", "fp4", 9e15, "NVIDIA HGX B200: FP4 144 | 72 PFLOPS per 8 GPUs"),
    ("GB200 NVL72", "fp4", 10e15, "NVIDIA GB200 NVL72: FP4 1,440 | 720 PFLOPS per 72 GPUs"),
    ("GB200 NVL72", "bf16", 2.5e15, "NVIDIA GB200 NVL72: FP16/BF16 360 PFLOPS sparse"),
    ("GB300 NVL72", "fp4", 15e15, "NVIDIA GB300 NVL72: FP4 1,440 | 1,080 PFLOPS per 72 GPUs"),
    ("GB300 NVL72", "fp8", 5e15, "NVIDIA GB300 NVL72: FP8/FP6 720 PFLOPS sparse"),
    ("H100 NVL", "bf16", 835.5e12, "NVIDIA H100 datasheet, NVL: 1,671 TFLOPS sparse"),
    ("H200 NVL", "fp8", 1670.5e12, "NVIDIA H200 datasheet, NVL: 3,341 TFLOPS sparse"),
    ("RTX 5090", "fp16", 209.5e12, "NVIDIA RTX Blackwell whitepaper, FP32 accumulate"),
    ("RTX 5090", "fp4", 1676e12, "NVIDIA RTX Blackwell whitepaper: 3,352 AI TOPS sparse"),
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
    ("MI300X", 192e9, 5.3e12), ("B200", 180e9, 7.75e12),
    ("B300", 288e9, 7.75e12), ("GB200 NVL72", 186e9, 8e12), ("GB300 NVL72", 288e9, 8e12),
    ("H100 NVL", 94e9, 3.9e12), ("H200 NVL", 141e9, 4.8e12), ("RTX 5090", 32e9, 1792e9),
    ("MI325X", 256e9, 6e12), ("MI355X", 288e9, 8e12),
]


@pytest.mark.parametrize(("name", "memory", "bandwidth"), MEMORY, ids=[r[0] for r in MEMORY])
def test_source_datasheet_memory_and_bandwidth(name: str, memory: float,
                                               bandwidth: float) -> None:
    """Memory capacity (GB as printed) and peak memory bandwidth from each datasheet:
    NVIDIA V100/A100/H100/H200/L4/L40S datasheets, HGX B200 specifications (1.4 TB per 8
    GPUs; bandwidth from NVIDIA's Blackwell datasheet, up to 62 TB/s per HGX B200), the Ada
    whitepaper (RTX 4090: 1,008 GB/s) and AMD's MI300X data sheet (5.3 TB/s); for 2025-26
    NVIDIA's Blackwell Ultra pages (288 GB per GPU; the HGX B300's 62 TB/s per 8 GPUs),
    the NVL72 racks (13.4 TB and 576 TB/s per 72 GPUs for the GB200), the H100/H200 NVL
    columns (94 GB at 3.9 TB/s; 141 GB at 4.8 TB/s), the RTX Blackwell whitepaper (32 GB
    at 1,792 GB/s) and AMD's MI325X (256 GB, 6 TB/s) and MI355X (288 GB, 8 TB/s) pages."""
    spec = gpu(name)
    assert spec.memory_bytes == memory
    assert spec.bandwidth == pytest.approx(bandwidth)


def test_source_hgx_b200_and_b300_share_the_62_tb_s_board() -> None:
    """NVIDIA Blackwell datasheet (HGX B200 column): total memory bandwidth up to 62 TB/s,
    180 GB HBM3E | 7.7 TB/s per GPU; NVIDIA Blackwell Ultra datasheet (HGX B300 column):
    7.7 TB/s per GPU, 62 TB/s per 8. The two HGX boards have the same HBM bandwidth; only
    the GB200/GB300 parts of an NVL72 rack run 8 TB/s (576 TB/s per 72). The DGX B200
    page's 64 TB/s per 8 GPUs is the one NVIDIA figure that says otherwise."""
    assert gpu("B200").bandwidth == gpu("B300").bandwidth == pytest.approx(62e12 / 8)
    assert gpu("B200").figure_sources["bandwidth"].startswith("NVIDIA Blackwell datasheet")
    assert gpu("GB200 NVL72").bandwidth == gpu("GB300 NVL72").bandwidth == 8e12


@pytest.mark.parametrize(("name", "dtype", "dense", "sparse"), [
    ("GB300 NVL72", "fp64", 1.3e12, None), ("GB300 NVL72", "fp32", 80e12, None),
    ("GB300 NVL72", "int8", 165e12, 330e12), ("B300", "int8", 153.5e12, 307e12),
])
def test_source_blackwell_ultra_per_gpu_figures_not_rounded_rack_totals(
        name: str, dtype: str, dense: float, sparse: float | None) -> None:
    """NVIDIA Blackwell Ultra datasheet, individual GPU specifications: GB300 FP64 1.3
    TFLOPS, FP32 80 TFLOPS, INT8 330 TOPS sparse; HGX B300 INT8 307 TOPS sparse. The GB300
    NVL72 rack page prints 72 times these rounded (100 TFLOPS, 6 PFLOPS, 24 POPS), and
    dividing those by 72 gave 1.39, 83.3 and 333 per GPU, figures NVIDIA prints nowhere.
    The HGX page's INT8 3 POPS per 8 GPUs would give the 1,100 W B300 more INT8 (375) than
    the 1,400 W GB300 (330)."""
    spec = gpu(name)
    assert spec.dense(dtype) == pytest.approx(dense)
    if sparse is not None:
        assert spec.sparse_flops[dtype] == pytest.approx(sparse)
    assert gpu("B300").sparse_flops["int8"] < gpu("GB300 NVL72").sparse_flops["int8"]


@pytest.mark.parametrize(("name", "watts", "source"), [
    ("GB200 NVL72", 1200, "NVIDIA Blackwell datasheet"),
    ("B300", 1100, "NVIDIA Blackwell Ultra datasheet"),
    ("GB300 NVL72", 1400, "NVIDIA Blackwell Ultra datasheet"),
])
def test_source_blackwell_power_from_the_datasheets(name: str, watts: int, source: str) -> None:
    """NVIDIA's Blackwell datasheet: GB200 configurable up to 1,200 W per GPU; its Blackwell
    Ultra datasheet: HGX B300 up to 1,100 W, GB300 up to 1,400 W (the GB200 and B300
    figures cited NVIDIA's aiconfigurator YAML files, a tool's inputs, not a datasheet)."""
    assert gpu(name).tdp_watts == watts
    assert gpu(name).figure_sources["tdp_watts"].startswith(source)


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
        keys = {"memory_bytes", "bandwidth", "tdp_watts", "interconnect_bandwidth",
                "nvlink_domain"}
        keys |= {f"peak_flops.{k}" for k in spec.peak_flops}
        keys |= {f"sparse_flops.{k}" for k in spec.sparse_flops}
        keys |= {"reported_memory_bytes"} if spec.reported_memory_bytes else set()
        keys |= {"scaleout_bandwidth"} if spec.scaleout_bandwidth else set()
        assert keys <= set(spec.figure_sources), spec.name
        assert set(spec.peak_flops) <= set(hardware.DTYPES), spec.name
    for key, source in hardware.SOURCES.items():
        assert re.fullmatch(r"20\d\d(-\d\d){0,2}", source["date"]), (key, source["date"])
        assert source.get("title") and source.get("publisher"), key
        assert source.get("url", "").startswith("https://"), (key, source.get("url"))


def test_every_name_and_alias_picks_one_gpu() -> None:
    """gpus.json: no spelling (name or alias, as :func:`gpu` compares them: ignoring case,
    spaces, '-', '_' and '.') belongs to two GPUs. The loader maps aliases in a dict, so a
    new GPU that repeats another's alias would silently take that GPU's name over."""
    data = json.loads(resources.files("gpulesson").joinpath("data/gpus.json")
                      .read_text(encoding="utf-8"))
    owner: dict[str, str] = {}
    for entry in data["gpus"]:
        for spelling in (entry["name"], *entry["aliases"]):
            first = owner.setdefault(v._normalise(spelling), entry["name"])
            assert first == entry["name"], f"{spelling!r} names both {first} and {entry['name']}"
    for entry in data["gpus"]:
        assert gpu(entry["name"]).name == entry["name"]
        assert all(gpu(alias).name == entry["name"] for alias in entry["aliases"])


def test_memory_is_in_decimal_bytes_as_datasheets_print_it() -> None:
    """``memory_bytes`` is the datasheet's GB figure in decimal bytes (80 GB = 80e9): a
    whole number of tenths of a GB. A capacity typed in GiB (32 GiB = 34,359,738,368
    bytes) is not one; what the driver reports in MiB goes in ``reported_memory``."""
    for spec in hardware.GPUS.values():
        assert spec.memory_bytes % 10**8 == 0, (spec.name, spec.memory_bytes)


def test_source_titles_survive_the_sites_smart_quotes() -> None:
    """The hardware page prints every source's title, and the built-site test finds each
    one there verbatim; Sphinx's smart quotes would curl a straight quote or turn "..." and
    "--" into other characters, so a title holds none of them."""
    for key, source in hardware.SOURCES.items():
        for mark in ("'", '"', "...", "--"):
            assert mark not in source["title"], (key, mark)


def test_sparse_figures_are_printed_apart_and_never_dense() -> None:
    """Every sparse figure exceeds the dense one of its precision: twice it where the
    datasheet prints only sparse rates, 4/3 for the Blackwell Ultra FP4 rows NVIDIA prints
    both ways (HGX B300 144 | 108, GB300 NVL72 1,440 | 1,080 PFLOPS); AMD rounds its
    MI355X FP8 to 5 and the sparse double to 10.1; NVIDIA's L40S sheet prints 362.05
    dense and 733 sparse."""
    for spec in hardware.GPUS.values():
        for dtype, sparse in spec.sparse_flops.items():
            ratio = sparse / spec.peak_flops[dtype]
            assert 4 / 3 - 1e-3 <= ratio <= 2.03, (spec.name, dtype, ratio)
    assert gpu("B300").sparse_flops["fp4"] / gpu("B300").dense("fp4") == pytest.approx(4 / 3)
    assert gpu("MI355X").sparse_flops["fp8"] == 10.1e15 and "fp4" not in \
        gpu("MI355X").sparse_flops  # AMD prints no sparse MXFP4 row
    assert "tf32" not in gpu("MI355X").peak_flops  # "TF32 support through software emulation"


# ---------------------------------------------------------------------------------------
# Memory as reported and as usable


# (GPU, MiB nvidia-smi reports, source)
REPORTED_MIB = [
    ("H100 SXM", 81_559, "modal-client PR 2797 (2025-01-23); NVIDIA/nccl issue 1264"),
    ("A100 80GB", 81_920, "modal-client PR 2797"),
    ("A100 40GB", 40_960, "modal-client PR 2797"),
    ("L40S", 46_068, "modal-client PR 2797"),
    ("L4", 23_034, "modal-client PR 2797"),
    ("B200", 183_359, "NVIDIA/TensorRT-LLM issue 10278 (2025-12-24)"),
    ("B300", 275_040, "NVIDIA aiconfigurator systems/b300_sxm.yaml: 275040MiB by nvidia-smi"),
    ("GB200 NVL72", 189_471, "NVIDIA aiconfigurator systems/gb200.yaml"),
    ("GB300 NVL72", 284_208, "NVIDIA aiconfigurator systems/gb300.yaml"),
    ("RTX 4090", 24_564, "RLinf issue 255 (2025-11-12)"),
    ("RTX 5090", 32_607, "club-3090 issue 617 (2026-07-06)"),
]


@pytest.mark.parametrize(("name", "mib", "source"), REPORTED_MIB,
                         ids=[r[0] for r in REPORTED_MIB])
def test_source_reported_memory_from_nvidia_smi(name: str, mib: int, source: str) -> None:
    """The memory.total nvidia-smi prints, quoted in public issue threads and NVIDIA's own
    aiconfigurator (see ``source``), in bytes: MiB x 2^20."""
    spec = gpu(name)
    assert spec.reported_memory_bytes == mib * 2**20, source
    assert spec.memory_basis == "reported"


def test_source_h100_reports_81559_mib_not_80e9_bytes() -> None:
    """An "80 GB" H100 SXM reports 81,559 MiB (modal-client PR 2797): 85.52e9 bytes, more
    than the label's 80e9; a framework plans with 0.95 of it, 81.24e9 bytes or 75.67 GiB:
    the 3.98 GiB left covers the non-torch memory vLLM measures on H100s, 1.79 GiB on one
    and 3.58 GiB with tensor parallelism over two (vLLM pull request #10511)."""
    h100 = gpu("H100 SXM")
    assert h100.reported_memory_bytes == 85_520_809_984 > h100.memory_bytes == 80e9
    assert h100.usable_memory() == pytest.approx(81.244769e9)
    assert round(h100.usable_memory() / 2**30, 2) == 75.67
    reserve = h100.reported_memory_bytes - h100.usable_memory()
    assert 3.58 * 2**30 < reserve < 4 * 2**30
    assert hardware.USABLE_MEMORY_FRACTION == 0.95 and "10511" in hardware.USABLE_MEMORY_SOURCE
    assert h100.usable_memory(0.9) == pytest.approx(0.9 * 85_520_809_984)
    with pytest.raises(ValueError, match="fraction must be"):
        h100.usable_memory(0)


def test_rocm_totals_are_gib_with_gb_labels() -> None:
    """PyTorch on gfx950 (MI350X/MI355X) reports a total capacity of 287.98 GiB (ROCm
    TheRock issue 2118, 2025-11-14) for AMD's "288 GB"; an MI300X 191.98 GiB for "192 GB"."""
    assert gpu("MI355X").reported_memory_bytes / 2**30 == pytest.approx(287.98, abs=5e-3)
    assert gpu("MI300X").reported_memory_bytes / 2**30 == pytest.approx(191.98, abs=5e-3)


@pytest.mark.parametrize(("name", "gib"), [("MI300X", 192), ("MI325X", 256), ("MI355X", 288)])
def test_source_rocm_table_amd_capacities_are_gib(name: str, gib: int) -> None:
    """AMD ROCm documentation, "AMD GPU specifications", Instinct table, column "VRAM
    (GiB)": MI300X 192, MI325X 256, MI355X 288 (rocm.docs.amd.com/en/latest/reference/
    gpu-specs.html, 2026): the datasheets' "GB" are GiB. The total plans start from is
    within 0.02 % of the table (drivers report 0.02 GiB less), not 7 % low."""
    spec = gpu(name)
    assert spec.memory_total == pytest.approx(gib * 2**30, rel=2e-4)
    assert spec.memory_total / spec.memory_bytes == pytest.approx(2**30 / 1e9, rel=2e-4)


def test_without_a_report_usable_memory_starts_from_the_datasheet() -> None:
    """No public report of an H200 NVL's memory total was found: plans use 0.9 of the
    datasheet capacity, and say so."""
    for name in ("H200 NVL", "V100 SXM", "H100 PCIe"):
        spec = gpu(name)
        assert spec.reported_memory_bytes is None and spec.memory_basis == "datasheet"
        assert spec.usable_memory() == pytest.approx(0.95 * spec.memory_bytes)


# ---------------------------------------------------------------------------------------
# Links, domains, NICs


# (GPU, NVLink/IF bandwidth both ways, domain, NIC one way bytes/s or None, source)
LINKS = [
    ("H100 SXM", 900e9, 8, 50e9, "H100 datasheet; DGX H100: 8 x 400 Gb/s ConnectX-7"),
    ("B200", 1.8e12, 8, 50e9, "HGX B200: 1.8 TB/s per GPU, networking 0.8 TB/s per 8"),
    ("B300", 1.8e12, 8, 100e9, "HGX B300: 1.8 TB/s per GPU, networking 1.6 TB/s per 8"),
    ("GB200 NVL72", 1.8e12, 72, 50e9, "GB200 NVL72: 130 TB/s per 72 GPUs"),
    ("GB300 NVL72", 1.8e12, 72, 100e9, "GB300 NVL72: ConnectX-8 800 Gb/s per GPU"),
    ("H100 NVL", 600e9, 2, 25e9, "H100 datasheet NVL: NVLink bridge 600 GB/s"),
    ("H200 NVL", 900e9, 4, 25e9, "H200 datasheet NVL: 2- or 4-way bridge, 900 GB/s"),
    ("MI300X", 896e9, 8, 50e9, "MI300X: 7 x 128 GB/s Infinity Fabric"),
    ("MI355X", 1075.2e9, 8, 50e9, "ROCm MI350 architecture: 7 links of 153.6 GB/s"),
    ("RTX 5090", 128e9, 1, None, "PCIe Gen5 x16, no NVLink"),
    ("A100 80GB", 600e9, 8, 25e9, "A100 datasheet; DGX A100: 8 x 200 Gb/s HDR"),
]


@pytest.mark.parametrize(("name", "link", "domain", "nic", "source"), LINKS,
                         ids=[r[0] for r in LINKS])
def test_source_links_domains_and_nics(name: str, link: float, domain: int,
                                       nic: float | None, source: str) -> None:
    """GPU-to-GPU bandwidth per GPU (both directions together), the size of the NVLink or
    Infinity Fabric domain, and a typical scale-out NIC per GPU (one direction)."""
    spec = gpu(name)
    assert spec.interconnect_bandwidth == pytest.approx(link), source
    assert spec.nvlink_domain == domain, source
    assert spec.scaleout_bandwidth == (None if nic is None else pytest.approx(nic)), source
    assert spec.link_bandwidth_one_way() == pytest.approx(link / 2)


def test_nvlink5_one_way_is_900_gb_per_second() -> None:
    """NVLink 5: 1.8 TB/s per GPU, 900 GB/s each way (NVIDIA HGX and NVL72 pages); an NVL72
    rack's 130 TB/s is 72 of them (1.806 TB/s, printed rounded)."""
    assert gpu("GB300 NVL72").link_bandwidth_one_way() == 900e9
    assert round(130e12 / 72 / 1e12, 1) == gpu("GB300 NVL72").interconnect_bandwidth / 1e12


def test_teaching_baseline_and_current_generation() -> None:
    """The lessons' worked examples use the H100 SXM (Hopper, 2022); Blackwell (B200,
    GB200) and Blackwell Ultra (B300, GB300) followed, with AMD's MI355X beside them."""
    assert hardware.TEACHING_BASELINE == "H100 SXM" and gpu("H100").is_teaching_baseline
    assert hardware.CURRENT_GENERATION == ("B300", "GB300 NVL72", "MI355X")
    assert all(gpu(n).is_current_generation and gpu(n).released == "2025"
               for n in hardware.CURRENT_GENERATION)
    assert not gpu("H100 SXM").is_current_generation
    assert hardware.CURRENT_GENERATION_AS_OF == "2026-12"
    assert gpu("GB300").name == "GB300 NVL72" and gpu("HGX B300").name == "B300"


# ---------------------------------------------------------------------------------------
# The spec-sheet mistakes a calculator warns about


def test_source_sparse_headline_typed_as_a_peak_is_named() -> None:
    """The seed page's "H100 SXM FP16 1,979 TFLOPS" is the 2:4-sparse figure (NVIDIA H100
    datasheet footnote "with sparsity"); the dense peak is 989.4 (H100 whitepaper)."""
    h100 = gpu("H100 SXM")
    text = hardware.peak_mismatch(h100, "bf16", 1979e12)
    assert text == ("1,979 TFLOP/s is the H100 SXM's 2:4-sparse BF16 figure, twice the "
                    "dense rate; the dense BF16 peak is 989.4 TFLOP/s.")
    assert hardware.peak_mismatch(h100, "bf16", 989.4e12) is None  # the dense peak
    assert hardware.peak_mismatch(h100, "fp8", 1979e12) is None  # dense FP8 is 1,978.9
    assert hardware.peak_mismatch(h100, "bf16", 700e12) is None  # an MFU-style guess
    assert "sparse FP8 figure" in hardware.peak_mismatch(h100, "bf16", 3958e12)


def test_source_fp16_accumulate_rate_is_named() -> None:
    """Ada whitepaper (RTX 4090): 330.3 TFLOPS FP16 with FP16 accumulate, 165.2 with FP32
    accumulate (and 330.4 sparse); RTX Blackwell whitepaper (RTX 5090): FP8 838 with FP16
    accumulate, 419 with FP32."""
    text = hardware.peak_mismatch(gpu("RTX 4090"), "fp16", 330.3e12)
    assert "FP16 figure with FP16 accumulation" in text and "165.2 TFLOP/s" in text
    assert "2:4-sparse FP16" in text
    text = hardware.peak_mismatch(gpu("RTX 5090"), "fp8", 838e12)
    assert "FP16 accumulation" in text and "419 TFLOP/s" in text


def test_peak_mismatch_names_ratios_other_than_two() -> None:
    """NVIDIA's HGX B300 row "FP4 144 | 108 PFLOPS": sparse is 4/3 of dense, not twice."""
    text = hardware.peak_mismatch(gpu("B300"), "fp4", 18e15)
    assert "1.33 times the dense rate" in text and "13,500 TFLOP/s" in text
    # AMD's MI355X has no TF32 rate; its sparse BF16 5 PFLOPs typed as TF32 is still named
    text = hardware.peak_mismatch(gpu("MI355X"), "tf32", 5e15)
    assert text.endswith("the datasheet gives no dense TF32 figure.")


def test_peak_mismatch_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="peak_flops must be a finite positive number"):
        hardware.peak_mismatch(gpu("H100"), "bf16", -1)
    with pytest.raises(KeyError, match="unknown dtype 'fp7'"):
        hardware.peak_mismatch(gpu("H100"), "fp7", 1e12)
    with pytest.raises(ValueError, match="rtol must be"):
        hardware.peak_mismatch(gpu("H100"), "bf16", 1e12, rtol=2)


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


def test_peak_warning_for_a_custom_gpu_checks_every_gpu() -> None:
    """With the GPU custom, 1,979 TFLOP/s BF16 is still named (the H100 SXM's and the
    H200's sparse figure, NVIDIA datasheets), while 2,250 (the B200's and B300's dense
    BF16, HGX pages) is a real peak and draws no warning."""
    text = hardware.peak_warning("custom", "bf16", 1979e12)
    assert text.startswith("1,979 TFLOP/s is the H100 SXM's 2:4-sparse BF16 figure")
    assert text.endswith("The same figure belongs to the H200.")
    assert hardware.peak_warning("custom", "bf16", 2250e12) is None
    assert hardware.peak_warning("H100 SXM", "bf16", 1979e12) == \
        hardware.peak_mismatch(gpu("H100 SXM"), "bf16", 1979e12)


@pytest.mark.parametrize("bad", [-1, "H100 SXM", None, {"peak_flops": {}}])
def test_flops_per_watt_refuses_what_is_not_a_spec(bad: object) -> None:
    """``flops_per_watt(-1)`` raised AttributeError; a GPU name is looked up with ``gpu``."""
    with pytest.raises(TypeError, match="spec must be a GPUSpec"):
        hardware.flops_per_watt(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="dtype must be a name"):
        hardware.flops_per_watt(gpu("H100 SXM"), ["fp16"])  # type: ignore[arg-type]


@pytest.mark.parametrize("change", ["drop", "unknown"])
def test_a_figure_without_a_listed_source_is_refused_with_its_gpu(change: str) -> None:
    """A contributor's GPU whose bandwidth lacks its source (or cites one the file does not
    list) stopped test collection with a bare KeyError: 'source' that named no GPU (recipe
    audit of 2026-12-06)."""
    text = resources.files("gpulesson").joinpath("data/gpus.json").read_text(encoding="utf-8")
    data = json.loads(text)
    entry = data["gpus"][3]
    if change == "drop":
        del entry["bandwidth"]["source"]
    else:
        entry["bandwidth"]["source"] = "no-such-source"
    with pytest.raises(ValueError, match=rf"{re.escape(entry['name'])}'s figure bandwidth"):
        hardware._load(json.dumps(data))
    assert hardware._load(text)[0].keys() == hardware.GPUS.keys()
