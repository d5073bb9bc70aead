"""The same all-reduce measurement on ``torch.distributed``: gloo on CPUs, NCCL on GPUs.

PyTorch is not a dependency of the course (its CPU build is a 754 MB download); where it
is installed, one command runs the measurement of :mod:`gpulesson.collectives.mpi` with
PyTorch's collectives and prints nccl-tests rows from rank 0::

    torchrun --standalone --nproc-per-node=2 -m gpulesson.collectives.torch_dist \\
        --backend gloo --sizes 4096,65536,1048576          # CPU processes, gloo
    torchrun --standalone --nproc-per-node=8 -m gpulesson.collectives.torch_dist \\
        --backend nccl --sizes 4096,1048576,1073741824     # one process per GPU, NCCL

Across machines, the same worker under torchrun's rendezvous (run on every node)::

    torchrun --nnodes=2 --nproc-per-node=8 --rdzv-backend=c10d \\
        --rdzv-endpoint=HOST0:29500 -m gpulesson.collectives.torch_dist --backend nccl

What is timed is what the MPI worker times: a checked call (``#wrong``), warm-up calls,
then blocks of timed calls after a barrier, the slowest rank's time per call, the median
block. On GPUs every block ends with ``torch.cuda.synchronize()``: a collective call only
queues work on the GPU. ``torch.distributed.all_reduce`` works in place, so only
nccl-tests' in-place column is measured (the out-of-place one reads ``N/A``). The
algorithm is the backend's (gloo's ring variants; NCCL's ring or tree, shown with
``NCCL_DEBUG=INFO``, pinned with ``NCCL_ALGO=Ring``).

:func:`run_torch_allreduce` starts the first command from Python and returns
:class:`~gpulesson.collectives.model.AllReduceMeasurement` rows.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from gpulesson.collectives.model import (
    DTYPES,
    AllReduceMeasurement,
    check_dtype,
    check_int,
    check_seconds,
    check_sizes,
)
from gpulesson.collectives.mpi import (
    _JSON_MARK,
    _RESULT_FORMAT,
    MPIRunError,
    _measurements,
    expected_sum,
    input_values,
)
from gpulesson.collectives.nccl_format import nccl_tests_rows

#: The backends: gloo runs on CPUs, NCCL on NVIDIA GPUs.
BACKENDS = ("gloo", "nccl")
INSTALL_HINT = ("torch.distributed needs PyTorch, which the course does not install: "
                "pip install torch (the CPU build is enough for gloo)")


def torch_available() -> bool:
    """Whether PyTorch is importable here (nothing is imported)."""
    return importlib.util.find_spec("torch") is not None


def torch_command(n_ranks: int, sizes_bytes: Sequence[int], *, backend: str = "gloo",
                  iterations: int = 20, warmup: int = 5, repeats: int = 5,
                  dtype: str = "float32", max_seconds_per_size: float = 0.0,
                  python: str | None = None, json_output: bool = False) -> list[str]:
    """The one command that runs the measurement on one machine (``torchrun``, as
    ``python -m torch.distributed.run``)."""
    command = [python or sys.executable, "-m", "torch.distributed.run", "--standalone",
               f"--nproc-per-node={n_ranks}", "-m", "gpulesson.collectives.torch_dist",
               "--backend", backend, "--sizes", ",".join(str(int(s)) for s in sizes_bytes),
               "--iterations", str(iterations), "--warmup", str(warmup),
               "--repeats", str(repeats), "--dtype", dtype,
               "--max-seconds-per-size", repr(float(max_seconds_per_size))]
    return command + (["--json"] if json_output else [])


def run_torch_allreduce(n_ranks: int, sizes_bytes: Sequence[int], *, backend: str = "gloo",
                        iterations: int = 20, warmup: int = 5, repeats: int = 5,
                        dtype: str = "float32", max_seconds_per_size: float = 0.0,
                        timeout: float = 300.0) -> list[AllReduceMeasurement]:
    """Measure ``torch.distributed.all_reduce`` (sum, in place) between ``n_ranks``
    local processes with ``backend`` (``"gloo"`` on CPUs, ``"nccl"``: one GPU each).

    Raises
    ------
    RuntimeError
        PyTorch is not installed (:data:`INSTALL_HINT`).
    MPIRunError
        torchrun failed, or a rank found a wrong sum.
    """
    n_ranks = check_int("n_ranks", n_ranks, 2, 64)
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    dtype = check_dtype(dtype)
    sizes = check_sizes(sizes_bytes, np.dtype(dtype).itemsize)
    check_seconds("max_seconds_per_size", max_seconds_per_size, allow_zero=True)
    timeout = check_seconds("timeout", timeout)
    if not torch_available():
        raise RuntimeError(INSTALL_HINT)
    command = torch_command(n_ranks, sizes, backend=backend, iterations=iterations,
                            warmup=warmup, repeats=repeats, dtype=dtype,
                            max_seconds_per_size=max_seconds_per_size, json_output=True)
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    env.setdefault("OMP_NUM_THREADS", "1")
    with tempfile.TemporaryDirectory(prefix="gpulesson-torch-") as tmp:
        proc = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp,
                              timeout=timeout, stdin=subprocess.DEVNULL)
    marked = [line[len(_JSON_MARK):] for line in proc.stdout.splitlines()
              if line.startswith(_JSON_MARK)]
    if proc.returncode != 0 or not marked:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-25:])
        raise MPIRunError(f"torchrun exited with status {proc.returncode}.\n"
                          f"command: {' '.join(command)}\n{tail}")
    return _measurements(json.loads(marked[-1]))


def _worker(argv: Sequence[str] | None = None) -> None:
    """Run on every rank under torchrun; rank 0 reports."""
    parser = argparse.ArgumentParser(prog="python -m gpulesson.collectives.torch_dist")
    parser.add_argument("--backend", default="gloo", choices=BACKENDS)
    parser.add_argument("--sizes", required=True, help="comma-separated sizes in bytes")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dtype", default="float32", choices=sorted(DTYPES))
    parser.add_argument("--max-seconds-per-size", type=float, default=0.0)
    parser.add_argument("--json", action="store_true", help="print the JSON results")
    args = parser.parse_args(argv)

    import torch  # only inside the ranks: the course does not depend on PyTorch
    import torch.distributed as dist

    dist.init_process_group(backend=args.backend)
    rank, n_ranks = dist.get_rank(), dist.get_world_size()
    if args.backend == "nccl":
        local = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)

        def sync() -> None:
            torch.cuda.synchronize()  # a collective call only queues work on the GPU
    else:
        device = torch.device("cpu")

        def sync() -> None:
            pass

    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        count = size // np.dtype(args.dtype).itemsize
        x = torch.from_numpy(input_values(rank, count, args.dtype)).to(device)
        dist.all_reduce(x)  # 1. one checked call
        sync()
        got = x.cpu().numpy()
        wrong = torch.tensor([int(np.count_nonzero(got != expected_sum(n_ranks, count,
                                                                       args.dtype)))],
                             device=device)
        dist.all_reduce(wrong)
        head, total = got[:16].tolist(), float(got.sum(dtype=np.float64))
        dist.barrier()
        start = time.perf_counter()
        for _ in range(args.warmup):  # 2. warm-up
            dist.all_reduce(x)
        sync()
        per_call = [None] * n_ranks
        dist.all_gather_object(per_call, (time.perf_counter() - start) / max(args.warmup, 1))
        slowest = max(per_call)
        calls = args.iterations
        if args.max_seconds_per_size > 0 and slowest > 0:
            calls = max(1, min(calls, math.floor(args.max_seconds_per_size / slowest)))
        repeats = min(args.repeats, calls)
        iterations = math.ceil(calls / repeats)
        blocks = []
        for _ in range(repeats):  # 3. timed blocks after a barrier
            dist.barrier()
            start = time.perf_counter()
            for _ in range(iterations):
                dist.all_reduce(x)
            sync()
            blocks.append((time.perf_counter() - start) / iterations)
        every = [None] * n_ranks
        dist.all_gather_object(every, blocks)
        results.append({"size_bytes": size, "count": count, "in_place": True,
                        "iterations": iterations, "warmup_seconds": slowest,
                        "rank_seconds": every, "wrong": int(wrong.item()),
                        "result_head": head, "result_sum": total})
    hosts = [None] * n_ranks
    dist.all_gather_object(hosts, os.uname().nodename)
    if rank == 0:
        library = f"PyTorch {torch.__version__} torch.distributed, backend {args.backend}"
        if args.backend == "nccl":
            library += " (NCCL {})".format(".".join(map(str, torch.cuda.nccl.version())))
        payload = {"format": _RESULT_FORMAT, "backend": args.backend, "n_ranks": n_ranks,
                   "hosts": len(set(hosts)), "dtype": args.dtype, "warmup": args.warmup,
                   "algorithm": "default",
                   "algorithm_check": f"the {args.backend} backend's own choice",
                   "library": library, "results": results}
        if args.json:
            print(_JSON_MARK + json.dumps(payload), flush=True)
        else:
            print(f"# gpulesson all_reduce ({library}): {n_ranks} ranks on "
                  f"{len(set(hosts))} host(s); in place only (torch.distributed)")
            print(nccl_tests_rows(_measurements(payload)), flush=True)
    dist.destroy_process_group()


def torch_nccl_recipe() -> str:
    """The commands that run the measurement with torch.distributed (text, for the
    lesson: it needs PyTorch, and NCCL needs GPUs)."""
    return _RECIPE


_RECIPE = """\
The same measurement with torch.distributed: gloo on CPUs, NCCL on GPUs
======================================================================

With PyTorch installed (pip install torch; this course does not install it), one command
per backend, from the course folder; rank 0 prints nccl-tests rows:

    # CPU processes, gloo (works on a laptop)
    torchrun --standalone --nproc-per-node=2 -m gpulesson.collectives.torch_dist \\
        --backend gloo --sizes 4096,65536,1048576,16777216

    # one process per GPU, NCCL
    torchrun --standalone --nproc-per-node=8 -m gpulesson.collectives.torch_dist \\
        --backend nccl --sizes 4096,1048576,67108864,1073741824

    # two nodes with 8 GPUs each (run the same line on every node; HOST0 is the first)
    torchrun --nnodes=2 --nproc-per-node=8 --rdzv-backend=c10d \\
        --rdzv-endpoint=HOST0:29500 -m gpulesson.collectives.torch_dist --backend nccl \\
        --sizes 4096,1048576,67108864,1073741824

Each GPU block ends with torch.cuda.synchronize(): a collective call only queues work on
the GPU. NCCL_DEBUG=INFO in front shows the transport (NVLink/P2P, shared memory,
InfiniBand, sockets) and the algorithm (ring or tree); NCCL_ALGO=Ring pins the ring.

The MPI measurement of this lesson runs across machines unchanged:

    mpirun -H node1:4,node2:4 --mca btl self,sm,tcp \\
        python -m gpulesson.collectives --sizes 4096,1048576,67108864

The reference tool, nccl-tests (NVIDIA/nccl-tests on GitHub), prints the same columns:

    ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 8
        # sizes 8 B to 8 GiB, doubling (-f 2), one process driving 8 GPUs (-g 8)
    mpirun -np 16 -N 8 --hostfile hosts ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 1
        # two nodes listed in the file hosts, 8 ranks per node, one GPU per rank

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


if __name__ == "__main__":
    _worker()
