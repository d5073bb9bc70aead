"""The GPU stand-in: gpulesson sees a usable GPU through it, and it refuses what real CuPy
refuses (implicit host copies) or silently gets wrong (a clock read with queued work).
Then ``scripts/gpu_check.py``'s collection code and the benchmarks run on it.

Every check runs in a subprocess with :func:`tests.gpu_standin.plugin.standin_environment`:
the stand-in patches the clock when imported, which must never happen inside the test
process itself.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .plugin import REPO, standin_environment


def run(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """Run ``code`` from a file (course code, so the clock guard applies) on the stand-in."""
    script = tmp_path / "check.py"
    script.write_text(textwrap.dedent(code), encoding="utf-8")
    return subprocess.run([sys.executable, str(script)], cwd=REPO, env=standin_environment(),
                          capture_output=True, text=True, timeout=120)


def test_gpulesson_sees_one_small_usable_gpu(tmp_path: Path) -> None:
    proc = run("""
        import json
        from gpulesson.bench import sizes_for
        from gpulesson.device import get_device, to_numpy
        dev = get_device()
        x = dev.xp.ones(4, dtype=dev.xp.float32)
        print(json.dumps({"kind": dev.kind, "name": dev.name, "memory": dev.memory_bytes,
                          "gemm": sizes_for(dev, "gemm"), "sum": float(to_numpy(x).sum())}))
    """, tmp_path)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert found["kind"] == "gpu" and "stand-in" in found["name"]
    assert found["memory"] == 2**30 and found["sum"] == 4.0
    assert found["gemm"] == [256, 512, 1024]  # the small end of the GPU table


@pytest.mark.parametrize("misuse, message", [
    ("import numpy as np; np.asarray(xp.ones(3))", "Implicit conversion to a NumPy array"),
    ("import matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot as plt\n"
     "plt.plot(xp.arange(3))", "Implicit conversion to a NumPy array"),
    ("import numpy as np; xp.ones(3) + np.ones(3)", "Unsupported type"),
    ("import numpy as np; xp.matmul(xp.ones((2, 2)), np.ones((2, 2)))", "Unsupported type"),
    ("import time\na = xp.ones((64, 64)); xp.cuda.runtime.deviceSynchronize()\n"
     "t0 = time.perf_counter(); b = a @ a; t1 = time.perf_counter()", "still queued"),
    ("from gpulesson.bench import benchmark; from gpulesson.device import cpu_device\n"
     "a = xp.ones((64, 64)); xp.cuda.runtime.deviceSynchronize()\n"
     "benchmark(lambda: a @ a, device=cpu_device())", "still queued"),
    ("xp.zeros((2**16, 2**14), dtype=xp.float32)", "Out of memory"),
])
def test_misuse_fails_as_on_a_real_gpu(misuse: str, message: str, tmp_path: Path) -> None:
    proc = run(f"import cupy as xp\n{misuse}\n", tmp_path)
    assert proc.returncode != 0
    assert message in proc.stderr, proc.stderr[-2000:]


def test_correct_use_passes_and_synchronised_timing_is_allowed(tmp_path: Path) -> None:
    proc = run("""
        import time
        import numpy as np
        import cupy as xp
        from gpulesson.bench import benchmark
        from gpulesson.device import get_device, synchronize, to_numpy
        dev = get_device()
        a = xp.asarray(np.eye(64, dtype=np.float16))  # a host copy: synchronous
        t0 = time.perf_counter()
        b = a @ a
        synchronize(dev)
        t1 = time.perf_counter()
        assert b.dtype == np.float16 and np.array_equal(to_numpy(b), np.eye(64))
        assert np.sum(b).shape == () and isinstance(np.sum(b), xp.ndarray)  # NEP 18
        r = benchmark(lambda: a @ a, device=dev, repeats=3)
        assert r.timer.startswith("CUDA events") and r.repeats == 2  # GPULESSON_TIMING=smoke
        pool = xp.get_default_memory_pool()
        before = pool.used_bytes()
        kept = xp.empty(1, dtype=xp.float32)
        assert pool.used_bytes() - before == 512  # rounded up, as CuPy's pool does
        print(f"{float(b.sum()):.0f} {t1 >= t0}")
    """, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["64", "True"]


def test_gpu_check_collects_every_figure_on_the_standin(tmp_path: Path) -> None:
    """``make gpu-check``'s measurements (``--skip-tests``: the notebooks run on the
    stand-in in nbval already) write a passing report: fp64, fp32 and copy measured,
    tf32 through cuBLAS's compute type, bf16 unsupported without ml_dtypes."""
    proc = subprocess.run(
        [sys.executable, "scripts/gpu_check.py", "--quick", "--skip-tests", "--outdir",
         str(tmp_path)], cwd=REPO, env=standin_environment(), capture_output=True,
        text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (report,) = tmp_path.glob("*.json")
    data = json.loads(report.read_text())
    assert data["ok"] and data["device"]["kind"] == "gpu"
    status = {(r["dtype"], r["n"]): r["status"] for r in data["gemm"]}
    assert all(status[(dt, n)] == "ok" for dt in ("fp64", "fp32", "tf32", "fp16")
               for n in (512, 1024))
    assert all(r["timer"].startswith("CUDA events") for r in data["copy"])
    assert {"matmul_fp32", "elementwise_fp32"} <= set(data["speedups"])


@pytest.mark.parametrize("script, args", [
    ("benchmarks/bench_cpu.py", ["--quick"]),
    ("benchmarks/bench_calculators.py", ["--repeat", "20", "--rounds", "2"]),
    ("benchmarks/bench_allreduce.py", ["--ranks", "2", "--max-bytes", "65536",
                                       "--max-seconds-per-size", "0.2"]),
])
def test_benchmarks_run_with_gpulesson_device_gpu(script: str, args: list[str]) -> None:
    if script.endswith("allreduce.py"):
        from gpulesson import collectives

        if not collectives.mpi_available():
            pytest.skip(collectives.INSTALL_HINT)
    proc = subprocess.run([sys.executable, script, *args], cwd=REPO,
                          env=standin_environment(), capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stdout.strip()
