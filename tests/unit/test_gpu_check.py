"""scripts/gpu_check.py: fails loudly without a GPU; its figure collection and report
serialisation run on the CPU (numpy) exactly as they do on a GPU (cupy)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest

from gpulesson import hardware
from gpulesson.device import Device, cpu_device

from .fake_cupyx import install_profiler

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "gpu_check.py"


def load_script():
    spec = importlib.util.spec_from_file_location("gpu_check", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpu_check"] = module  # dataclasses look their module up while building
    spec.loader.exec_module(module)
    return module


gc = load_script()
CPU = cpu_device("test")


def test_without_a_gpu_the_check_fails_loudly_and_writes_nothing(tmp_path: Path) -> None:
    env = {**os.environ, "GPULESSON_DEVICE": "gpu"}
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--outdir", str(tmp_path), "--skip-tests"],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=120,
    )
    if proc.returncode == 0:  # pragma: no cover - only on a machine with a GPU
        pytest.skip("this machine has a usable GPU")
    assert proc.returncode == 2, proc.stderr
    assert "gpu-check FAILED: no usable GPU" in proc.stderr
    assert "cupy-cuda12x" in proc.stderr and "cupy-cuda13x" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_gemm_figures_are_collected_and_unsupported_precisions_explained() -> None:
    records = gc.collect_gemm(CPU, sizes=(32, 64), dtypes=("fp64", "fp32", "tf32"), repeats=2)
    assert [(r["dtype"], r["n"]) for r in records] == [
        ("fp64", 32), ("fp64", 64), ("fp32", 32), ("fp32", 64), ("tf32", 32), ("tf32", 64)]
    for r in records[:4]:
        assert r["status"] == "ok" and r["flop_rate_best"] >= r["flop_rate_median"] > 0
        assert r["repeats"] == 2 and r["timer"] == "time.perf_counter"
    assert records[4]["status"] == "unsupported" and "GPU" in records[4]["reason"]


def test_copy_and_speedup_figures() -> None:
    copies = gc.collect_copy(CPU, sizes=(2**16, 2**18), repeats=2)
    assert [c["nbytes"] for c in copies] == [2**16, 2**18]
    assert all(c["counted_bytes_per_call"] == 2 * c["nbytes"] for c in copies)
    assert all(c["byte_rate_best"] >= c["byte_rate_median"] > 0 for c in copies)
    speedups = gc.collect_speedups([CPU], gemm_sizes=(32,), elementwise_sizes=(1024,),
                                   repeats=2)
    assert set(speedups) == {"matmul_fp32", "elementwise_fp32"}
    matmul = speedups["matmul_fp32"]
    assert matmul["records"][0]["size"] == 32 and matmul["records"][0]["speedup"] == 1.0
    assert "numpy (CPU)" in matmul["text"]


def small_report():
    report = gc.GpuCheckReport(
        date="2026-01-02", device=gc.device_info(CPU), host=gc.host_info(CPU),
        gemm=gc.collect_gemm(CPU, sizes=(32,), dtypes=("fp64", "fp32", "tf32"), repeats=1),
        copy=gc.collect_copy(CPU, sizes=(2**16,), repeats=1),
        tests=[gc.PytestRun("unit tests", ["pytest"], 0, "3 passed in 0.1s")],
    )
    return report


def test_report_round_trips_through_json_and_writes_both_files(tmp_path: Path) -> None:
    report = small_report()
    assert report.ok
    data = json.loads(report.to_json())
    assert data["ok"] is True and data["date"] == "2026-01-02"
    assert gc.GpuCheckReport.from_dict(data).to_dict() == report.to_dict()
    json_path, md_path = report.write(tmp_path)
    assert json_path.name == f"gpu-check-2026-01-02-{gc.slug(CPU.name)}.json"
    assert md_path.with_suffix(".json") == json_path
    assert json.loads(json_path.read_text())["gemm"] == data["gemm"]
    md = md_path.read_text()
    assert "| 32 |" in md and "FLOP/s" in md and "unsupported" in md and "PASSED" in md
    assert "Copy bandwidth (bytes read + written)" in md


def test_a_failed_run_or_a_missing_required_precision_fails_the_check() -> None:
    report = small_report()
    report.tests.append(gc.PytestRun("notebooks (nbval)", ["pytest"], 1, "1 failed"))
    assert not report.ok and "FAILED (1)" in report.to_markdown()
    report = small_report()
    report.gemm = [r for r in report.gemm if r["dtype"] != "fp32"]
    assert not report.ok
    report = small_report()
    report.errors.append("CPU and GPU answers disagree")
    assert not report.ok


def test_slug_and_datasheet_lookup() -> None:
    assert gc.slug("NVIDIA H100 80GB HBM3") == "nvidia-h100-80gb-hbm3"
    assert gc.slug("???") == "device"
    spec = gc.datasheet_for("NVIDIA H200")
    assert spec is not None and spec.name == hardware.gpu("H200").name
    assert gc.datasheet_for("Quantum Toaster 9000") is None


def test_datasheet_comparison_uses_dense_peaks() -> None:
    """Half of the H100 SXM's dense BF16 peak (989.4 TFLOP/s, NVIDIA datasheet) is 50 %."""
    h100 = hardware.gpu("H100 SXM")
    report = gc.GpuCheckReport(date="d", device={"name": "x"}, host={})
    report.gemm = [{"dtype": "bf16", "n": 8192, "status": "ok",
                    "flop_rate_best": 989.4e12 / 2, "flop_rate_median": 4e14}]
    report.copy = [{"nbytes": 2**30, "status": "ok", "byte_rate_best": 3.35e12 * 0.9}]
    rows = {r["figure"]: r for r in gc.compare_with_datasheet(report, h100)["rows"]}
    assert rows["bf16"]["fraction"] == pytest.approx(0.5, rel=1e-3)
    assert rows["bandwidth"]["fraction"] == pytest.approx(0.9, rel=1e-3)


def test_failure_types_are_specific() -> None:
    assert gc._failure_types(CPU) == (ValueError, TypeError, NotImplementedError)
    assert isinstance(CPU, Device)


def test_main_end_to_end_with_a_simulated_gpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole check (minus the pytest runs) against a stand-in GPU: numpy arrays timed by
    a fake cupyx.profiler.benchmark. Proves the orchestration writes a complete report."""

    def fake_benchmark(fn, args=(), n_repeat=10000, *, n_warmup=10, **_kwargs):
        for _ in range(n_warmup):
            fn(*args)
        times = []
        for _ in range(n_repeat):
            start = time.perf_counter()
            fn(*args)
            times.append(time.perf_counter() - start)
        return types.SimpleNamespace(gpu_times=np.array([times]))

    install_profiler(monkeypatch, fake_benchmark)
    fake = Device(xp=np, kind="gpu", name="NVIDIA H200 (simulated)", why="test double")
    monkeypatch.setattr(gc, "get_device", lambda *a: fake)
    monkeypatch.setattr(gc, "QUICK", {"gemm": (64,), "copy": (2**16,), "speedup_gemm": (32,),
                                      "speedup_elementwise": (1024,)})
    monkeypatch.setenv("GPULESSON_DEVICE", "gpu")

    assert gc.main(["--outdir", str(tmp_path), "--quick", "--skip-tests"]) == 0
    (json_path,) = tmp_path.glob("gpu-check-*-nvidia-h200-simulated.json")
    data = json.loads(json_path.read_text())
    assert data["ok"] is True and data["device"]["kind"] == "gpu"
    statuses = {r["dtype"]: r["status"] for r in data["gemm"]}
    assert statuses["fp64"] == statuses["fp32"] == "ok"
    assert data["copy"][0]["byte_rate_best"] > 0
    impls = {r["implementation"] for r in data["speedups"]["matmul_fp32"]["records"]}
    assert impls == {"numpy (CPU)", "numpy (GPU)"}
    assert data["datasheet"]["name"] == hardware.gpu("H200").name  # matched by name
    assert json_path.with_suffix(".md").is_file()
