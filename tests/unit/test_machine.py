"""gpulesson.machine: this machine measured at run time, shaped like hardware.GPUSpec."""

from __future__ import annotations

import dataclasses
import datetime
import math
import sys
from collections.abc import Mapping

import pytest

from gpulesson import gemm, hardware, roofline
from gpulesson.device import cpu_device
from gpulesson.machine import (
    GEMM_DTYPES,
    LLC_FALLBACK_BYTES,
    LLC_MULTIPLE,
    MachineSpec,
    clear_cache,
    copy_bytes_for,
    last_level_cache_bytes,
    measure_copy,
    measure_gemm,
    this_machine,
)

SMALL = {"gemm_size": 128, "copy_bytes": 2**20}


@pytest.fixture(autouse=True)
def fresh() -> None:
    clear_cache()


def test_default_measurement_gives_sane_positive_figures() -> None:
    before = datetime.date.today().isoformat()
    me = this_machine()
    assert me.kind == "cpu" and me.cores is not None and me.cores >= 1
    assert set(me.peak_flops) == {"fp64", "fp32"}
    for dtype, rate in me.peak_flops.items():
        # between 100 MFLOP/s (any BLAS) and 100 TFLOP/s (no CPU socket comes close)
        assert 1e8 < rate < 1e14, (dtype, rate)
    assert 1e8 < me.bandwidth < 1e13  # 100 MB/s .. 10 TB/s
    assert me.memory_bytes is None or me.memory_bytes > 2**28
    assert me.tdp_watts is None
    after = datetime.date.today().isoformat()  # a run across midnight has either date
    assert "measured on this machine" in me.source
    assert before in me.source or after in me.source, me.source
    assert me.figure_sources["bandwidth"].startswith("measured")
    assert set(me.measurements) == {"gemm_fp64", "gemm_fp32", "copy"}
    # the peak is the best run, so it is at least the median rate
    assert me.peak_flops["fp32"] >= me.measurements["gemm_fp32"].flop_rate
    assert "FLOP/s" in me.describe() and "GB/s" in me.describe()


def test_same_attribute_names_as_gpuspec() -> None:
    gpu_fields = {f.name for f in dataclasses.fields(hardware.GPUSpec)}
    machine_fields = {f.name for f in dataclasses.fields(MachineSpec)}
    assert gpu_fields <= machine_fields, gpu_fields - machine_fields
    me = this_machine(**SMALL)
    h100 = hardware.gpu("H100 SXM")
    for name in gpu_fields:  # the same kind of value under each name
        ours, theirs = getattr(me, name), getattr(h100, name)
        if name in ("tdp_watts", "compute_capability", "sms"):
            assert ours is None  # power is not measured; SM limits are a datasheet's
        elif isinstance(theirs, Mapping):
            assert isinstance(ours, Mapping), name
        elif isinstance(theirs, str):
            assert isinstance(ours, str), name
        else:
            assert isinstance(ours, int | float), name
    assert set(me.peak_flops) <= set(hardware.DTYPES)
    assert me.dense("fp64") == me.peak_flops["fp64"]
    assert me.ridge_point("fp32") == roofline.ridge_point(me.peak_flops["fp32"], me.bandwidth)
    with pytest.raises(KeyError, match="not measured"):
        me.dense("bf16")


def test_cached_per_process_until_refreshed() -> None:
    first = this_machine(**SMALL)
    assert this_machine(**SMALL) is first
    assert this_machine(**SMALL, refresh=True) is not first
    clear_cache()
    assert this_machine(**SMALL) is not first


def test_gemm_measurement_counts_come_from_the_calculator() -> None:
    r = measure_gemm(96, "fp64", repeats=2)
    assert r.flops == gemm.flops(96, 96, 96) == 2 * 96**3
    assert r.bytes == gemm.min_bytes(96, 96, 96, bytes_per_element=8)
    assert r.flop_rate == pytest.approx(r.flops / r.median)
    r32 = measure_gemm(96, "fp32", repeats=2)
    assert r32.bytes == gemm.min_bytes(96, 96, 96, bytes_per_element=4)


def test_copy_counts_bytes_read_and_written() -> None:
    r = measure_copy(4 * 2**20, repeats=3)
    assert r.bytes == 2 * 4 * 2**20
    assert r.byte_rate is not None and r.byte_rate > 1e8
    assert "read + write" in r.name


def test_bad_precisions_and_sizes_are_explained() -> None:
    with pytest.raises(ValueError, match="tf32.*GPU"):
        measure_gemm(16, "tf32")
    with pytest.raises(ValueError) as info:
        measure_gemm(16, "fp12")
    assert all(d in str(info.value) for d in GEMM_DTYPES)
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        measure_gemm(0)
    with pytest.raises(ValueError, match="nbytes must be an integer >= 4"):
        measure_copy(2)
    with pytest.raises(ValueError, match="dtypes must be drawn from"):
        this_machine(dtypes=("fp64", "fp99"), **SMALL)


def test_bf16_without_ml_dtypes_says_what_is_missing(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)  # as if it were not installed
    with pytest.raises(ValueError, match="ml_dtypes"):
        measure_gemm(16, "bf16")


def test_bf16_is_measured_with_ml_dtypes() -> None:
    """A dependency of the course: numpy's bfloat16 from ml_dtypes, 2 bytes an element."""
    result = measure_gemm(32, "bf16", repeats=1, warmup=0)
    assert result.bytes == gemm.min_bytes(32, 32, 32, bytes_per_element=2)


def test_an_explicit_cpu_device_and_fp16_work() -> None:
    """fp16 on numpy is not done by BLAS; it is still measured, with 2-byte elements."""
    dev = cpu_device("test")
    half = measure_gemm(64, "fp16", dev, repeats=1, warmup=0)
    assert half.flop_rate is not None and math.isfinite(half.flop_rate)
    assert half.bytes == gemm.min_bytes(64, 64, 64, bytes_per_element=2)


# ---------------------------------------------------------------------------------------
# The copy is sized from the last-level cache, so that it measures memory, not the cache


def _fake_sysfs(root, caches: list[tuple[str, str]]):
    for i, (kind, size) in enumerate(caches):
        entry = root / f"index{i}"
        entry.mkdir()
        (entry / "type").write_text(kind + "\n")
        (entry / "size").write_text(size + "\n")
    return root


def test_last_level_cache_is_the_largest_data_or_unified_cache(tmp_path) -> None:
    """sysfs of a Xeon with 48K L1d, 32K L1i, 2048K L2 and 266240K L3: 260 MiB."""
    root = _fake_sysfs(tmp_path, [("Data", "48K"), ("Instruction", "32K"),
                                  ("Unified", "2048K"), ("Unified", "266240K")])
    assert last_level_cache_bytes(root) == 266_240 * 1024 == 260 * 2**20


def test_last_level_cache_skips_instruction_caches_and_garbage(tmp_path) -> None:
    root = _fake_sysfs(tmp_path, [("Data", "32K"), ("Instruction", "64M"), ("Unified", "8M"),
                                  ("Unified", "lots"), ("Unified", "0K")])
    assert last_level_cache_bytes(root) == 8 * 2**20
    assert last_level_cache_bytes(tmp_path / "missing") is None
    empty = tmp_path / "empty"
    empty.mkdir()
    assert last_level_cache_bytes(empty) is None


def test_cpu_copy_is_twice_the_cache_within_bounds() -> None:
    """2 x LLC per array (source + destination: 4 x LLC), at least 64 MiB, at most 512 MiB
    and 1/16 of the RAM: 260 MiB -> 512 MiB (capped), 100 MiB -> 200 MiB, 32 MiB -> 64 MiB,
    8 MiB -> 64 MiB; with 2 GiB of RAM at most 128 MiB."""
    cpu = cpu_device("test")
    big = dataclasses.replace(cpu, memory_bytes=64 * 2**30)
    mib = 2**20
    assert LLC_MULTIPLE == 2
    assert [copy_bytes_for(big, cache_bytes=c * mib) // mib for c in (260, 100, 32, 8)] == \
        [512, 200, 64, 64]
    small = dataclasses.replace(cpu, memory_bytes=2 * 2**30)
    assert copy_bytes_for(small, cache_bytes=100 * mib) == 128 * mib
    # a GPU copies the largest array its size table allows: 1 GiB on an 80 GB H100
    gpu_like = dataclasses.replace(cpu, kind="gpu", memory_bytes=80 * 10**9)
    assert copy_bytes_for(gpu_like) == 2**30
    assert copy_bytes_for(dataclasses.replace(gpu_like, memory_bytes=24 * 10**9)) == 2**28
    with pytest.raises(ValueError, match="cache_bytes"):
        copy_bytes_for(big, cache_bytes=0)


def test_default_copy_size_and_cache_are_recorded() -> None:
    me = this_machine(gemm_size=64)
    llc = last_level_cache_bytes()
    assert me.cache_bytes == llc
    assert me.copy_bytes == copy_bytes_for(cache_bytes=llc or LLC_FALLBACK_BYTES)
    assert me.copy_bytes >= 64 * 2**20
    if llc:
        assert me.copy_bytes >= min(2 * llc, 512 * 2**20, (me.memory_bytes or 2**40) // 16)
        assert "last-level cache the OS reports" in me.figure_sources["bandwidth"]
    assert me.measurements["copy"].bytes == 2 * me.copy_bytes
    explicit = this_machine(**SMALL)
    assert explicit.copy_bytes == SMALL["copy_bytes"]
