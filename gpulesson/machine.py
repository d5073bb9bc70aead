"""This machine, measured at run time: cores, GEMM FLOP/s and copy bandwidth.

Datasheets give a GPU's peaks; a laptop has no datasheet a lesson can trust, so the course
measures it. The result has the same attribute names as :class:`gpulesson.hardware.GPUSpec`
(``name``, ``memory_bytes``, ``bandwidth``, ``peak_flops``, ``tdp_watts``, ``source``), so a
lesson can put "this machine" in the same table or roofline plot as an H100::

    from gpulesson.machine import this_machine
    from gpulesson import hardware, units

    me = this_machine()            # about a second on two CPU cores; cached per process
    print(me.describe())
    for spec in (me, hardware.gpu("H100 SXM")):
        print(spec.name, units.format_flop_rate(spec.peak_flops["fp32"]),
              units.format_bandwidth(spec.bandwidth))

What is measured, and how it is counted
---------------------------------------
* GEMM: ``C = A @ B`` with square ``n x n`` matrices, FLOPs from :func:`gpulesson.gemm.flops`
  (2·n³). ``peak_flops[dtype]`` is the *best* of the timed runs (the ceiling this machine
  reached), the median is kept in ``measurements``. fp64 and fp32 on the CPU; on a GPU
  also fp16 and tf32 (cuBLAS tensor-core mode for float32 inputs), and bf16 where cupy
  supports it.
* Copy bandwidth (STREAM-like "copy"): ``dst[...] = src`` on one large array; each call
  counts ``2 x nbytes`` (every byte read once and written once), as STREAM does. Caches
  can make the hardware move more (write-allocate reads the destination first), so the
  figure is what the program achieves, a lower bound on what the memory did. On a CPU the
  array is sized from the last-level cache the OS reports (:func:`last_level_cache_bytes`,
  Linux sysfs; :data:`LLC_FALLBACK_BYTES` elsewhere): twice its size, so source and
  destination together are four times the cache and the copy streams from main memory
  rather than from the cache (:func:`copy_bytes_for`). The size used is recorded
  (``MachineSpec.copy_bytes``, ``cache_bytes``).
* ``memory_bytes`` is the RAM size (CPU) or GPU memory, read from the OS/driver.

Taught in: ``parallelism_at_the_core`` (this machine vs datacenter GPUs),
``roofline_and_tensor_cores``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import math
import platform
import types
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gpulesson import gemm, roofline, units
from gpulesson.bench import BenchResult, benchmark, sizes_for
from gpulesson.device import Device, cpu_device
from gpulesson.hardware import SpecSheet

__all__ = [
    "GEMM_DTYPES",
    "LLC_FALLBACK_BYTES",
    "LLC_MULTIPLE",
    "MachineSpec",
    "clear_cache",
    "copy_bytes_for",
    "last_level_cache_bytes",
    "measure_copy",
    "measure_gemm",
    "this_machine",
]

#: Precision names (as in ``GPUSpec.peak_flops``) and the array dtype each GEMM uses.
#: tf32 is float32 data multiplied on tensor cores with a 10-bit mantissa (GPU only).
GEMM_DTYPES: Mapping[str, str] = types.MappingProxyType({
    "fp64": "float64",
    "fp32": "float32",
    "tf32": "float32",
    "bf16": "bfloat16",
    "fp16": "float16",
})

_DEFAULTS = {
    # (GEMM n, bytes per copied array). On a CPU the copy is sized from the last-level
    # cache (copy_bytes_for), so only the GEMM size is fixed here (~1 s on two cores). On a
    # GPU both are the largest of the device's size tables (gpulesson.bench.sizes_for),
    # large enough that launch overhead is a small fraction of each call: 8,192 and 1 GiB
    # on an 80 GB GPU, less on a smaller one.
    "cpu": (1024, None),
    "gpu": (None, None),
}

#: Last-level cache assumed when the OS does not report one (no Linux sysfs): as large as
#: the L3 of most laptop and desktop processors, so a copy sized from it still leaves them.
LLC_FALLBACK_BYTES = 32 * 2**20
#: The CPU copy: ``LLC_MULTIPLE`` x the last-level cache per array (source and
#: destination together twice that), between these bounds, and at most 1/16 of the RAM.
LLC_MULTIPLE = 2
_CPU_COPY_MIN = 64 * 2**20
_CPU_COPY_MAX = 512 * 2**20  # about 0.5 s of allocating and copying on two busy cores
_SYSFS_CACHES = Path("/sys/devices/system/cpu/cpu0/cache")
_SIZE_SUFFIX = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}


def last_level_cache_bytes(caches: Path | str | None = None) -> int | None:
    """Size of the largest data or unified CPU cache the OS reports, bytes; ``None`` if unknown.

    Reads Linux sysfs, ``/sys/devices/system/cpu/cpu0/cache/index*/{type,size}`` (sizes
    such as ``"266240K"``); instruction caches are skipped. Other systems, or an unreadable
    sysfs, give ``None`` (callers fall back to :data:`LLC_FALLBACK_BYTES`). ``caches``
    points at another directory of ``index*`` folders (for tests).
    """
    root = Path(caches) if caches is not None else _SYSFS_CACHES
    sizes = []
    try:
        entries = sorted(root.glob("index*"))
    except OSError:
        return None
    for entry in entries:
        try:
            kind = (entry / "type").read_text().strip().lower()
            text = (entry / "size").read_text().strip().upper()
        except OSError:
            continue
        if kind == "instruction":
            continue
        number, suffix = text.rstrip("KMG"), text[len(text.rstrip("KMG")):]
        if number.isdigit() and suffix in _SIZE_SUFFIX and int(number) > 0:
            sizes.append(int(number) * _SIZE_SUFFIX[suffix])
    return max(sizes, default=None)


def copy_bytes_for(device: Device | None = None, *, cache_bytes: int | None = None) -> int:
    """Bytes per array of the default copy measurement on ``device`` (None: the CPU).

    GPU: the largest copy of ``sizes_for(device, "copy")`` (1 GiB on an 80 GB GPU,
    far beyond any GPU's L2 cache). CPU: :data:`LLC_MULTIPLE` times the
    last-level cache (``cache_bytes``, else :func:`last_level_cache_bytes`, else
    :data:`LLC_FALLBACK_BYTES`), so that source and destination together are four times
    the cache and the copy measures main memory, not the cache; at least 64 MiB, at most
    512 MiB and 1/16 of the machine's RAM, rounded down to whole MiB. A 260 MiB cache
    gives 512 MiB; a 32 MiB one 64 MiB.
    """
    dev = device if device is not None else cpu_device()
    if dev.is_gpu:
        return 4 * sizes_for(dev, "copy")[-1]  # float32 elements
    llc = cache_bytes if cache_bytes is not None else (
        last_level_cache_bytes() or LLC_FALLBACK_BYTES)
    llc = _check_size("cache_bytes", llc, 1)
    wanted = max(_CPU_COPY_MIN, LLC_MULTIPLE * llc)
    cap = _CPU_COPY_MAX
    if dev.memory_bytes:
        cap = min(cap, max(_CPU_COPY_MIN, dev.memory_bytes // 16))
    return min(wanted, cap) // 2**20 * 2**20


@dataclass(frozen=True)
class MachineSpec(SpecSheet):
    """Measured figures of one machine, with the attribute names of ``hardware.GPUSpec``
    (both are a :class:`gpulesson.hardware.SpecSheet`).

    Attributes
    ----------
    name : str
        "This machine (<processor>)".
    memory_bytes : int or None
        RAM (CPU) or device memory (GPU), bytes; ``None`` when unknown.
    bandwidth : float
        Measured copy bandwidth, bytes/s (bytes read + bytes written per second).
    peak_flops : Mapping[str, float]
        Precision -> best measured dense GEMM FLOP/s.
    tdp_watts : None
        Power is not measured.
    source : str
        How and when it was measured.
    sparse_flops, other_flops : Mapping[str, float]
        Empty: kept so code written for ``GPUSpec`` works unchanged.
    vendor, architecture, memory_type, released, interconnect : str
        What is known cheaply (vendor from the processor name, ``platform.machine()``).
    interconnect_bandwidth : float
        0.0: not measured.
    reported_memory_bytes : int or None
        The memory the OS or driver reports (the same as ``memory_bytes``).
    nvlink_domain : int
        1: a single device.
    scaleout_bandwidth : float
        0.0: not measured.
    figure_sources : Mapping[str, str]
        For every figure (``"bandwidth"``, ``"peak_flops.fp32"`` ...), how it was measured.
    notes : str
        Caveats.
    kind, cores : str, int or None
        ``"cpu"``/``"gpu"`` and the core (or streaming multiprocessor) count.
    copy_bytes : int
        Bytes of each array of the copy measurement (source and destination alike).
    cache_bytes : int or None
        Last-level cache the OS reports, which sizes the default CPU copy (``None`` on a
        GPU, or when the OS does not say).
    measurements : Mapping[str, BenchResult]
        The timings behind each figure (``"gemm_fp64"``, ``"gemm_fp32"``, ``"copy"`` ...),
        with medians and spreads.
    """

    scaleout_bandwidth: float = 0.0
    kind: str = "cpu"
    cores: int | None = None
    measurements: Mapping[str, BenchResult] = field(default_factory=dict)
    copy_bytes: int = 0
    cache_bytes: int | None = None

    def dense(self, dtype: str = "fp32") -> float:
        """Best measured GEMM FLOP/s for ``dtype``; ``KeyError`` listing those measured."""
        if dtype not in self.peak_flops:
            raise KeyError(
                f"{self.name} dtype {dtype!r} was not measured; measured: "
                f"{', '.join(self.peak_flops)}"
            )
        return self.peak_flops[dtype]

    def ridge_point(self, dtype: str = "fp32") -> float:
        """FLOP per byte where this machine's roofline bends (``roofline.ridge_point``)."""
        return roofline.ridge_point(peak_flops=self.dense(dtype), bandwidth=self.bandwidth)

    def describe(self) -> str:
        """A few lines with units: what was measured, and how."""
        rates = ", ".join(
            f"{dtype} {units.format_flop_rate(rate)}" for dtype, rate in self.peak_flops.items()
        )
        memory = ("unknown" if self.memory_bytes is None
                  else units.format_bytes(self.memory_bytes, binary=True))
        return (
            f"{self.name}: {self.cores} cores, memory {memory}\n"
            f"  GEMM (best run): {rates}\n"
            f"  copy bandwidth: {units.format_bandwidth(self.bandwidth)} "
            f"(bytes read + written)\n"
            f"  source: {self.source}"
        )


def _vendor(name: str) -> str:
    lowered = name.lower()
    for needle, vendor in (("nvidia", "NVIDIA"), ("intel", "Intel"), ("amd", "AMD"),
                           ("apple", "Apple"), ("arm", "Arm")):
        if needle in lowered:
            return vendor
    return ""


# ---------------------------------------------------------------------------------------
# Single measurements


def _resolve_dtype(xp: Any, precision: str) -> Any:
    if precision not in GEMM_DTYPES:
        raise ValueError(
            f"dtype must be one of {', '.join(GEMM_DTYPES)}, got {precision!r}"
        )
    is_gpu = xp is not np
    if precision == "tf32" and not is_gpu:
        raise ValueError(
            "dtype 'tf32' is a GPU tensor-core mode (float32 data, 10-bit mantissa products); "
            "numpy has no TF32: measure 'fp32' on the CPU"
        )
    if precision == "bf16":
        try:
            import ml_dtypes  # bfloat16 for numpy (and cupy >= 14), when installed
        except ImportError as err:
            raise ValueError(
                "dtype 'bf16' needs the ml_dtypes package (numpy has no bfloat16; cupy >= 14 "
                f"uses ml_dtypes for it): {err}"
            ) from err
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(GEMM_DTYPES[precision])


@contextlib.contextmanager
def _gemm_math_mode(xp: Any, precision: str) -> Iterator[None]:
    """On cupy, pick cuBLAS's float32 compute type for the GEMM: TF32 for ``tf32``, the
    default (full FP32) for ``fp32`` even if ``CUPY_TF32=1`` is set; restore it after."""
    core = getattr(xp, "_core", None)
    if xp is np or precision not in ("fp32", "tf32") or not hasattr(core, "set_compute_type"):
        yield
        return
    from cupy._core import _routines_linalg as linalg  # GPU only

    wanted = linalg.COMPUTE_TYPE_TF32 if precision == "tf32" else linalg.COMPUTE_TYPE_DEFAULT
    previous = core.get_compute_type(np.float32)
    core.set_compute_type(np.float32, wanted)
    try:
        yield
    finally:
        core.set_compute_type(np.float32, previous)


def _check_size(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def measure_gemm(
    n: int,
    dtype: str = "fp32",
    device: Device | None = None,
    *,
    warmup: int = 1,
    repeats: int = 3,
    min_time: float = 0.0,
) -> BenchResult:
    """Time ``A @ B`` for ``n x n`` matrices in precision ``dtype`` on ``device``.

    Parameters
    ----------
    n:
        matrix size (>= 1).
    dtype:
        ``fp64``, ``fp32``, ``tf32`` (GPU), ``bf16`` (needs ``ml_dtypes``) or ``fp16``.
        On numpy, fp16 is not done by BLAS and is slow: an honest measurement, not a peak.
    device:
        where to run; ``None`` means numpy on the CPU.

    Returns
    -------
    BenchResult
        with ``flops = gemm.flops(n, n, n)`` and ``bytes = gemm.min_bytes(...)``.
    """
    n = _check_size("n", n, 1)
    dev = device if device is not None else cpu_device()
    xp = dev.xp
    dt = _resolve_dtype(xp, dtype)
    rs = xp.random.RandomState(n)
    a = (rs.random_sample((n, n)) - 0.5).astype(dt)
    b = (rs.random_sample((n, n)) - 0.5).astype(dt)
    out = xp.empty((n, n), dtype=dt)

    def matmul() -> None:
        xp.matmul(a, b, out=out)

    with _gemm_math_mode(xp, dtype):
        return benchmark(
            matmul, warmup=warmup, repeats=repeats, min_time=min_time,
            flops=gemm.flops(n, n, n),
            bytes=gemm.min_bytes(n, n, n, bytes_per_element=dt.itemsize),
            device=dev, name=f"GEMM {dtype} n={n}",
        )


def measure_copy(
    nbytes: int,
    device: Device | None = None,
    *,
    warmup: int = 1,
    repeats: int = 5,
    min_time: float = 0.0,
) -> BenchResult:
    """Time ``dst[...] = src`` for one array of ``nbytes`` bytes (float32 elements).

    ``bytes`` of the result is ``2 * nbytes``: each byte is read once and written once.
    """
    nbytes = _check_size("nbytes", nbytes, 4)
    dev = device if device is not None else cpu_device()
    xp = dev.xp
    count = nbytes // 4
    src = xp.arange(count, dtype=xp.float32)
    dst = xp.empty_like(src)

    def copy() -> None:
        xp.copyto(dst, src)

    return benchmark(
        copy, warmup=warmup, repeats=repeats, min_time=min_time,
        bytes=2 * count * 4, device=dev,
        name=f"copy {units.format_bytes(count * 4, binary=True)} (read + write counted)",
    )


# ---------------------------------------------------------------------------------------
# The whole machine

_CACHE: dict[tuple[Any, ...], MachineSpec] = {}


def clear_cache() -> None:
    """Forget measured machines (the next :func:`this_machine` measures again)."""
    _CACHE.clear()


def this_machine(
    device: Device | None = None,
    *,
    dtypes: Sequence[str] | None = None,
    gemm_size: int | None = None,
    copy_bytes: int | None = None,
    refresh: bool = False,
) -> MachineSpec:
    """Measure this machine once per process: peak GEMM FLOP/s per precision and copy bandwidth.

    Parameters
    ----------
    device:
        ``None`` (default): the CPU with numpy, whatever GPU exists. Pass
        ``gpulesson.device.get_device()`` to measure the GPU instead.
    dtypes:
        precisions to measure; default ``("fp64", "fp32")`` on the CPU and
        ``("fp64", "fp32", "tf32", "fp16")`` on a GPU.
    gemm_size, copy_bytes:
        matrix size and bytes per copied array; defaults keep the CPU measurement near one
        to two seconds (n = 1024; :func:`copy_bytes_for`: twice the last-level cache, 64 to
        512 MiB) and make the GPU one meaningful (the largest sizes of
        :func:`gpulesson.bench.sizes_for`: n = 8192, 1 GiB on an 80 GB GPU).
    refresh:
        measure again even if a result is cached.
    """
    dev = device if device is not None else cpu_device("numpy on the CPU: this machine")
    default_n = _DEFAULTS[dev.kind][0] or sizes_for(dev, "gemm")[-1]
    n = _check_size("gemm_size", gemm_size if gemm_size is not None else default_n, 1)
    llc = None if dev.is_gpu else last_level_cache_bytes()
    if copy_bytes is None:
        copy_bytes = copy_bytes_for(dev, cache_bytes=llc or LLC_FALLBACK_BYTES)
    nbytes = _check_size("copy_bytes", copy_bytes, 4)
    if dtypes is None:
        dtypes = ("fp64", "fp32", "tf32", "fp16") if dev.is_gpu else ("fp64", "fp32")
    dtypes = tuple(dtypes)
    if not dtypes:
        raise ValueError("dtypes must name at least one precision, got none")
    for dt in dtypes:
        if dt not in GEMM_DTYPES:
            raise ValueError(f"dtypes must be drawn from {', '.join(GEMM_DTYPES)}, got {dt!r}")
    key = (dev.kind, dev.name, dtypes, n, nbytes)
    if not refresh and key in _CACHE:
        return _CACHE[key]

    measurements: dict[str, BenchResult] = {}
    peaks: dict[str, float] = {}
    for dt in dtypes:
        # best of several runs: on a shared machine one run can lose its cores
        result = measure_gemm(n, dt, dev, repeats=5, min_time=0.1)
        measurements[f"gemm_{dt}"] = result
        assert result.flops is not None
        peaks[dt] = result.flops / result.min  # the best run: the ceiling reached
    # a copy larger than the caches takes tens of ms: 3 timed runs keep the total near 1 s
    copy = measure_copy(nbytes, dev, repeats=3, min_time=0.1)
    measurements["copy"] = copy
    assert copy.bytes is not None
    bandwidth = copy.bytes / copy.min
    if not (math.isfinite(bandwidth) and bandwidth > 0):
        raise RuntimeError(f"copy bandwidth measurement failed: {copy.describe()}")

    when = _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z").strip()

    def how_gemm(dt: str) -> str:
        runs = len(measurements[f"gemm_{dt}"].times)
        return f"best of {runs} runs of a {n}x{n} {dt} GEMM (2n^3 FLOPs) with {dev.library}"

    if dev.is_gpu:
        sized = ""
    elif llc:
        sized = (f" ({nbytes / llc:.2g}x the {units.format_bytes(llc, binary=True)} "
                 "last-level cache the OS reports)")
    else:
        sized = (" (the OS reports no cache size; sized for a "
                 f"{units.format_bytes(LLC_FALLBACK_BYTES, binary=True)} one)")
    how_copy = (f"best of {len(copy.times)} copies of {units.format_bytes(nbytes, binary=True)}"
                f"{sized}, bytes read + written counted")
    figure_sources = {"bandwidth": f"measured {when}: {how_copy}"}
    for dt in dtypes:
        figure_sources[f"peak_flops.{dt}"] = f"measured {when}: {how_gemm(dt)}"
    spec = MachineSpec(
        name=f"This machine ({dev.name})",
        memory_bytes=dev.memory_bytes,
        bandwidth=bandwidth,
        peak_flops=types.MappingProxyType(peaks),
        tdp_watts=None,
        source=(f"measured on this machine {when} ({copy.timer}): "
                f"{'; '.join(how_gemm(dt) for dt in dtypes)}; {how_copy}"),
        sparse_flops=types.MappingProxyType({}),
        other_flops=types.MappingProxyType({}),
        vendor=_vendor(dev.name),
        architecture="" if dev.is_gpu else platform.machine(),
        memory_type="GPU device memory" if dev.is_gpu else "system RAM",
        figure_sources=types.MappingProxyType(figure_sources),
        notes=(
            "Measured, not a datasheet: a best run on a possibly shared machine. The GEMM "
            "figure is what the BLAS library reached, the copy figure a lower bound on "
            "the memory traffic (write-allocate is not counted)."
        ),
        kind=dev.kind,
        cores=dev.cores,
        measurements=types.MappingProxyType(measurements),
        copy_bytes=nbytes,
        cache_bytes=llc,
        reported_memory_bytes=dev.memory_bytes,
    )
    _CACHE[key] = spec
    return spec
