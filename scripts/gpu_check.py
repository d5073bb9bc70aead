"""`make gpu-check`: run the course on a CUDA GPU and record what the GPU measured.

Usage (inside the course's virtual environment, with the ``gpu`` extra installed)::

    GPULESSON_DEVICE=gpu python scripts/gpu_check.py            # what `make gpu-check` runs
    python scripts/gpu_check.py --quick --skip-tests            # measurements only, small

Steps:

1. Require a usable GPU (``gpulesson.device.get_device("gpu")``). Without one the script
   stops at once with exit code 2 and the device module's explanation (what was tried,
   why it failed, how to install cupy): that is the correct outcome on a CPU-only machine.
2. Run the unit tests and every lesson and exercise notebook (nbval) with
   ``GPULESSON_DEVICE=gpu``, so each notebook's comparisons really run through cupy.
3. Measure: GEMM FLOP/s at several sizes and precisions (fp64, fp32, tf32, bf16, fp16;
   a precision cupy cannot do here is recorded as unsupported, with the reason), copy
   bandwidth at several sizes, and CPU-vs-GPU speed-ups for a compute-bound (matmul) and a
   memory-bound (element-wise) computation, answers checked.
4. Run the kernel lab's model kernels under Numba's CUDA target (``numba-cuda``, the same
   sources the kernel checker runs), check their results, and set each measured time beside
   its traffic prediction (:func:`collect_kernels`, :mod:`gpulesson.kernelcheck.gpu_timing`).
5. Write ``benchmarks/results/gpu-check-<date>-<device>.json`` and a markdown summary next
   to it; compare with the datasheet when the GPU is in ``gpulesson.hardware``.

Exit codes: 0 all passed; 1 a test or a required measurement (fp32, fp64, copy) failed;
2 no usable GPU. The collection and serialisation functions take a ``Device`` and run on
the CPU too, which is how ``tests/unit/test_gpu_check.py`` checks them.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import platform
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO_ROOT))

from gpulesson import hardware, units  # noqa: E402
from gpulesson.bench import BenchResult, MismatchError, compare  # noqa: E402
from gpulesson.device import ENV_VAR, Device, cpu_device, get_device  # noqa: E402
from gpulesson.machine import measure_copy, measure_gemm  # noqa: E402

DEFAULT_OUTDIR = REPO_ROOT / "benchmarks" / "results"
GEMM_SIZES = (1024, 2048, 4096, 8192)
GEMM_DTYPES = ("fp64", "fp32", "tf32", "bf16", "fp16")
COPY_BYTES = (2**24, 2**27, 2**30)  # 16 MiB (mostly cache), 128 MiB, 1 GiB
SPEEDUP_GEMM_SIZES = (256, 1024, 2048, 4096)
SPEEDUP_ELEMENTWISE_SIZES = (2**20, 2**23, 2**26)
QUICK = {"gemm": (512, 1024), "copy": (2**22, 2**24), "speedup_gemm": (128, 256),
         "speedup_elementwise": (2**16, 2**18)}
#: Measurements whose failure fails the check (the others may be unsupported by cupy).
REQUIRED_DTYPES = ("fp64", "fp32")


# ---------------------------------------------------------------------------------------
# Collecting figures (pure: any Device, numpy included)


def _failure_types(device: Device) -> tuple[type[BaseException], ...]:
    """Errors that mean "this precision is not available here", recorded, not raised."""
    types: list[type[BaseException]] = [ValueError, TypeError, NotImplementedError]
    cuda = getattr(device.xp, "cuda", None)
    for owner, name in (("runtime", "CUDARuntimeError"), ("driver", "CUDADriverError"),
                        ("compiler", "CompileException"), ("cublas", "CUBLASError")):
        error = getattr(getattr(cuda, owner, None), name, None)
        if isinstance(error, type) and issubclass(error, BaseException):
            types.append(error)
    return tuple(types)


def _rate_record(result: BenchResult) -> dict[str, Any]:
    best = None
    if result.flops is not None and result.min > 0:
        best = result.flops / result.min
    best_bw = None
    if result.bytes is not None and result.min > 0:
        best_bw = result.bytes / result.min
    return {
        "status": "ok",
        "median_s": result.median,
        "iqr_s": result.iqr,
        "repeats": result.repeats,
        "flop_rate_median": result.flop_rate,
        "flop_rate_best": best,
        "byte_rate_median": result.byte_rate,
        "byte_rate_best": best_bw,
        "timer": result.timer,
    }


def collect_gemm(
    device: Device,
    sizes: Sequence[int] = GEMM_SIZES,
    dtypes: Sequence[str] = GEMM_DTYPES,
    *,
    repeats: int = 5,
    measure: Callable[..., BenchResult] = measure_gemm,
) -> list[dict[str, Any]]:
    """GEMM FLOP/s per (precision, size); unsupported precisions are recorded with why."""
    failures = _failure_types(device)
    records: list[dict[str, Any]] = []
    for dtype in dtypes:
        for n in sizes:
            base = {"dtype": dtype, "n": int(n)}
            try:
                result = measure(n, dtype, device, repeats=repeats)
            except failures as err:
                records.append({**base, "status": "unsupported",
                                "reason": f"{type(err).__name__}: {err}"})
                continue
            records.append({**base, **_rate_record(result)})
    return records


def collect_copy(
    device: Device,
    sizes: Sequence[int] = COPY_BYTES,
    *,
    repeats: int = 10,
    measure: Callable[..., BenchResult] = measure_copy,
) -> list[dict[str, Any]]:
    """Copy bandwidth (bytes read + written per second) per array size."""
    return [{"nbytes": int(nbytes), "counted_bytes_per_call": 2 * (int(nbytes) // 4) * 4,
             **_rate_record(measure(nbytes, device, repeats=repeats))}
            for nbytes in sizes]


def collect_speedups(
    devices: Sequence[Device],
    gemm_sizes: Sequence[int] = SPEEDUP_GEMM_SIZES,
    elementwise_sizes: Sequence[int] = SPEEDUP_ELEMENTWISE_SIZES,
    *,
    repeats: int = 3,
) -> dict[str, Any]:
    """CPU-vs-GPU speed-ups (answers checked) for a matmul and an element-wise update."""
    from gpulesson import gemm  # the FLOP count comes from the calculator

    def matmul_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(n)
        return (rng.standard_normal((n, n), dtype=np.float32),
                rng.standard_normal((n, n), dtype=np.float32))

    def vector_input(n: int) -> np.ndarray:
        return np.random.default_rng(n).standard_normal(n, dtype=np.float32)

    def matmul(xp: Any, a: Any, b: Any) -> Any:
        return a @ b

    def axpb(xp: Any, x: Any) -> Any:
        return 2.0 * x + 1.0

    tables = {
        "matmul_fp32": compare(
            matmul, matmul_inputs, gemm_sizes, devices=devices, repeats=repeats,
            flops=lambda n: gemm.flops(n, n, n), rtol=1e-3, atol=5e-2,
            title="fp32 matmul n x n, CPU vs GPU",
        ),
        "elementwise_fp32": compare(
            axpb, vector_input, elementwise_sizes, devices=devices, repeats=repeats,
            bytes=lambda n: 2 * 4 * n, rtol=1e-6, atol=1e-6, size_label="elements",
            title="y = 2x + 1 on fp32 vectors, CPU vs GPU (memory-bound)",
        ),
    }
    return {key: {"title": t.title, "baseline": t.baseline, "text": t.to_text(),
                  "records": t.to_records()} for key, t in tables.items()}


# ---------------------------------------------------------------------------------------
# The report


@dataclass
class PytestRun:
    """One pytest invocation made by the check."""

    name: str
    command: list[str]
    returncode: int
    summary: str

    @property
    def passed(self) -> bool:
        return self.returncode == 0


@dataclass
class GpuCheckReport:
    """Everything the check found, ready for JSON and markdown."""

    date: str
    device: dict[str, Any]
    host: dict[str, Any]
    gemm: list[dict[str, Any]] = field(default_factory=list)
    copy: list[dict[str, Any]] = field(default_factory=list)
    speedups: dict[str, Any] = field(default_factory=dict)
    tests: list[PytestRun] = field(default_factory=list)
    datasheet: dict[str, Any] | None = None
    errors: list[str] = field(default_factory=list)
    kernels: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No failed test run, no error, every required precision measured."""
        required_ok = all(
            any(r["dtype"] == dt and r["status"] == "ok" for r in self.gemm)
            for dt in REQUIRED_DTYPES
        ) if self.gemm else False
        copy_ok = bool(self.copy) and all(r["status"] == "ok" for r in self.copy)
        return (required_ok and copy_ok and not self.errors
                and all(t.passed for t in self.tests))

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["ok"] = self.ok
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False, default=_json_default)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GpuCheckReport:
        fields_ = {k: v for k, v in data.items() if k != "ok"}
        fields_["tests"] = [PytestRun(**t) for t in fields_.get("tests", [])]
        return cls(**fields_)

    def to_markdown(self) -> str:
        dev = self.device
        lines = [
            f"# GPU check, {self.date}: {dev.get('name', '?')}",
            "",
            f"- device: {dev.get('name')} ({dev.get('library')}), memory "
            f"{_fmt(dev.get('memory_bytes'), units.format_bytes)}; {dev.get('why')}",
            f"- host: {self.host.get('cpu')}, Python {self.host.get('python')}, "
            f"CUDA driver {self.host.get('cuda_driver')}, runtime {self.host.get('cuda_runtime')}",
            f"- overall: {'PASSED' if self.ok else 'FAILED'}",
            "",
            "## Tests run with GPULESSON_DEVICE=gpu",
            "",
        ]
        if self.tests:
            lines += ["| run | result | summary |", "|---|---|---|"]
            lines += [f"| {t.name} | {'passed' if t.passed else f'FAILED ({t.returncode})'} "
                      f"| {t.summary} |" for t in self.tests]
        else:
            lines.append("(skipped)")
        lines += ["", "## GEMM, best run (median in brackets)", ""]
        sizes = sorted({r["n"] for r in self.gemm})
        dtypes = list(dict.fromkeys(r["dtype"] for r in self.gemm))
        if self.gemm:
            lines.append("| n | " + " | ".join(dtypes) + " |")
            lines.append("|---|" + "---|" * len(dtypes))
            for n in sizes:
                cells = []
                for dt in dtypes:
                    rec = next((r for r in self.gemm if r["n"] == n and r["dtype"] == dt), None)
                    cells.append(_gemm_cell(rec))
                lines.append(f"| {n} | " + " | ".join(cells) + " |")
            reasons = {r["dtype"]: r["reason"] for r in self.gemm if r["status"] != "ok"}
            lines += [f"- {dt} unsupported: {why}" for dt, why in reasons.items()]
        if self.datasheet:
            lines += ["", f"## Against the datasheet ({self.datasheet['name']}, dense)", ""]
            lines += ["| figure | datasheet | measured best | fraction |", "|---|---|---|---|"]
            for row in self.datasheet["rows"]:
                fmt = (units.format_bandwidth if row["figure"] == "bandwidth"
                       else units.format_flop_rate)
                lines.append(f"| {row['figure']} | {fmt(row['datasheet'])} | "
                             f"{fmt(row['measured'])} | {row['fraction']:.0%} |")
        lines += ["", "## Copy bandwidth (bytes read + written)", "",
                  "| array | best | median |", "|---|---|---|"]
        for r in self.copy:
            lines.append(f"| {units.format_bytes(r['nbytes'], binary=True)} | "
                         f"{_fmt(r.get('byte_rate_best'), units.format_bandwidth)} | "
                         f"{_fmt(r.get('byte_rate_median'), units.format_bandwidth)} |")
        for key, table in self.speedups.items():
            lines += ["", f"## Speed-ups: {key}", "", "```", table["text"], "```"]
        if self.kernels:
            from gpulesson.kernelcheck.gpu_timing import KernelTiming, markdown_table

            timings = [KernelTiming(**{k: v for k, v in row.items() if k != "ratio"})
                       for row in self.kernels]
            lines += ["", "## The kernel lab's model kernels: measured against the traffic "
                      "prediction", "", markdown_table(timings)]
        if self.notes:
            lines += ["", "## Notes", ""] + [f"- {n}" for n in self.notes]
        if self.errors:
            lines += ["", "## Errors", ""] + [f"- {e}" for e in self.errors]
        return "\n".join(lines) + "\n"

    def write(self, outdir: Path) -> tuple[Path, Path]:
        """Write ``gpu-check-<date>-<device>.json`` and ``.md`` into ``outdir``."""
        outdir.mkdir(parents=True, exist_ok=True)
        stem = f"gpu-check-{self.date}-{slug(str(self.device.get('name', 'gpu')))}"
        json_path, md_path = outdir / f"{stem}.json", outdir / f"{stem}.md"
        json_path.write_text(self.to_json() + "\n", encoding="utf-8")
        md_path.write_text(self.to_markdown(), encoding="utf-8")
        return json_path, md_path


def collect_kernels(device: Device, bandwidth: float, *, quick: bool = False,
                    cuda: Any = None) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """The kernel lab's model kernels compiled by Numba's CUDA target, checked and timed
    (:func:`gpulesson.kernelcheck.gpu_timing.kernel_timings`); ``bandwidth`` (bytes/s) turns
    each task's compulsory traffic into a predicted time. Returns the rows, the errors (a
    wrong result, a kernel that fails on the GPU) and notes (Numba's CUDA target could not
    be used here: the timings need a real GPU and numba-cuda; ``cuda`` given: used as is,
    as the tests do with Numba's simulator)."""
    from gpulesson import kernelcheck
    from gpulesson.kernelcheck import gpu_timing

    if cuda is None:
        try:
            cuda = kernelcheck.numba_cuda(device)
        except (ImportError, RuntimeError) as err:
            return [], [], [f"kernel timings skipped: {err}"]
        if kernelcheck.simulated():
            return [], [], ["kernel timings skipped: Numba runs its CPU simulator here (no "
                            "CUDA driver), and the timings need the GPU"]
    sizes = gpu_timing.TINY if quick else gpu_timing.TIMED
    try:
        from gpulesson.exercises.bank import inside_the_gpu

        timings = gpu_timing.kernel_timings(device, cuda, bandwidth=bandwidth, sizes=sizes,
                                            models=gpu_timing.models_of(inside_the_gpu.EXERCISES))
    except Exception as err:  # noqa: BLE001 - recorded in the report, never swallowed
        return [], [f"kernel timings failed: {type(err).__name__}: {err}"], []
    errors = [f"{k.task}: the GPU's result differs from the expected one"
              for k in timings if not k.correct]
    return [k.to_dict() for k in timings], errors, []


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _fmt(value: Any, formatter: Callable[[float], str]) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    return formatter(value)


def _gemm_cell(rec: dict[str, Any] | None) -> str:
    if rec is None:
        return "-"
    if rec["status"] != "ok":
        return "unsupported"
    return (f"{units.format_flop_rate(rec['flop_rate_best'])} "
            f"({units.format_flop_rate(rec['flop_rate_median'])})")


def slug(name: str) -> str:
    """``"NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3"`` (safe in a file name)."""
    text = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return text or "device"


def datasheet_for(device_name: str) -> hardware.GPUSpec | None:
    """The course's spec for this GPU when its name contains one (longest match wins)."""
    flat = re.sub(r"[^a-z0-9]", "", device_name.lower())
    matches = [spec for name, spec in hardware.GPUS.items()
               if re.sub(r"[^a-z0-9]", "", name.lower()) in flat]
    return max(matches, key=lambda s: len(s.name)) if matches else None


def compare_with_datasheet(report: GpuCheckReport, spec: hardware.GPUSpec) -> dict[str, Any]:
    """Best measured GEMM rate per precision and copy bandwidth vs the datasheet's dense peaks."""
    rows = []
    for dt in dict.fromkeys(r["dtype"] for r in report.gemm):
        ok = [r["flop_rate_best"] for r in report.gemm
              if r["dtype"] == dt and r["status"] == "ok" and r["flop_rate_best"]]
        if ok and dt in spec.peak_flops:
            rows.append({"figure": dt, "datasheet": spec.peak_flops[dt], "measured": max(ok),
                         "fraction": max(ok) / spec.peak_flops[dt]})
    bws = [r["byte_rate_best"] for r in report.copy if r.get("byte_rate_best")]
    if bws:
        rows.append({"figure": "bandwidth", "datasheet": spec.bandwidth, "measured": max(bws),
                     "fraction": max(bws) / spec.bandwidth})
    return {"name": spec.name, "source": spec.source, "rows": rows}


# ---------------------------------------------------------------------------------------
# Running the tests and notebooks


def run_pytest(name: str, args: Sequence[str], env: dict[str, str]) -> PytestRun:
    """Run pytest with ``args`` in the repository and keep its last summary line."""
    command = [sys.executable, "-m", "pytest", "-q", *args]
    proc = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    tail = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    summary = tail[-1] if tail else "(no output)"
    sys.stdout.write(proc.stdout[-4000:])
    return PytestRun(name=name, command=command, returncode=proc.returncode, summary=summary)


def notebook_paths() -> list[str]:
    return sorted(str(p.relative_to(REPO_ROOT)) for folder in ("notebooks", "exercises")
                  for p in (REPO_ROOT / folder).glob("*.ipynb"))


def host_info(device: Device) -> dict[str, Any]:
    info: dict[str, Any] = {
        "cpu": cpu_device().name,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
    }
    runtime = getattr(getattr(device.xp, "cuda", None), "runtime", None)
    for key, fn in (("cuda_driver", "driverGetVersion"), ("cuda_runtime", "runtimeGetVersion")):
        call = getattr(runtime, fn, None)
        info[key] = call() if callable(call) else None
    return info


def device_info(device: Device) -> dict[str, Any]:
    return {"name": device.name, "kind": device.kind, "library": device.library,
            "memory_bytes": device.memory_bytes, "cores": device.cores, "why": device.why}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--outdir", type=Path, default=DEFAULT_OUTDIR)
    parser.add_argument("--skip-tests", action="store_true", help="measure only")
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    opts = parser.parse_args(argv)

    if os.environ.get(ENV_VAR, "gpu").strip().lower() != "gpu":
        print(f"gpu-check sets {ENV_VAR}=gpu (it was {os.environ[ENV_VAR]!r})", file=sys.stderr)
    os.environ[ENV_VAR] = "gpu"  # for this process and every test run it starts
    try:
        gpu = get_device()
    except RuntimeError as err:
        print(f"gpu-check FAILED: no usable GPU.\n{err}", file=sys.stderr)
        return 2
    print(gpu.describe(), flush=True)

    report = GpuCheckReport(
        date=_dt.date.today().isoformat(), device=device_info(gpu), host=host_info(gpu)
    )
    if not opts.skip_tests:
        env = {**os.environ, "MPLBACKEND": "Agg"}
        report.tests.append(run_pytest(
            "unit tests", ["tests", "-m", "not book and not browser"], env))
        notebooks = notebook_paths()
        if notebooks:
            sanitize = REPO_ROOT / "tests" / "nbval_sanitize.cfg"
            extra = ["--nbval-sanitize-with", str(sanitize)] if sanitize.is_file() else []
            # Tagged cells take their reference from a book build, which needs the site's
            # assets: gpu-check builds no book, so they run here without a comparison.
            report.tests.append(run_pytest(
                "notebooks (nbval)",
                ["--nbval-lax", "--nbval-current-env", "--no-book-reference", *extra,
                 *notebooks], env))

    gemm_sizes = QUICK["gemm"] if opts.quick else GEMM_SIZES
    copy_sizes = QUICK["copy"] if opts.quick else COPY_BYTES
    print("measuring GEMM ...", flush=True)
    report.gemm = collect_gemm(gpu, gemm_sizes)
    print("measuring copy bandwidth ...", flush=True)
    report.copy = collect_copy(gpu, copy_sizes)
    print("measuring CPU vs GPU speed-ups ...", flush=True)
    try:
        report.speedups = collect_speedups(
            [cpu_device("numpy on the host CPU"), gpu],
            QUICK["speedup_gemm"] if opts.quick else SPEEDUP_GEMM_SIZES,
            QUICK["speedup_elementwise"] if opts.quick else SPEEDUP_ELEMENTWISE_SIZES,
        )
    except MismatchError as err:
        report.errors.append(f"CPU and GPU answers disagree: {err}")
    spec = datasheet_for(gpu.name)
    if spec is not None:
        report.datasheet = compare_with_datasheet(report, spec)
    print("running the kernel lab's kernels ...", flush=True)
    best_copy = max((r.get("byte_rate_best") or 0 for r in report.copy), default=0)
    bandwidth = spec.bandwidth if spec is not None else best_copy
    if bandwidth:
        report.kernels, errors, notes = collect_kernels(gpu, bandwidth, quick=opts.quick)
        report.errors.extend(errors)
        report.notes.extend(notes)
    else:
        report.notes.append("kernel timings skipped: no bandwidth to predict with")

    json_path, md_path = report.write(opts.outdir)
    print(report.to_markdown())
    print(f"wrote {json_path} and {md_path}")
    if not report.ok:
        print("gpu-check FAILED (see above)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
