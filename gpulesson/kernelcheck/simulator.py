"""An instrumented run of a CUDA kernel on the CPU, built on Numba's CUDA simulator.

Numba's simulator (``NUMBA_ENABLE_CUDASIM=1``) runs a ``@cuda.jit`` kernel as Python, one
OS thread per CUDA thread of a block. That finds Python errors, but a kernel with a race or
a missing ``cuda.syncthreads()`` usually gives the right answer there, because the threads
happen to run one after the other. :func:`run_kernel` runs the kernel's Python function with
the simulator's ``cuda`` module (``numba.cuda.simulator.kernelapi.FakeCUDAModule``),
extended so that every access to an array goes through a recording proxy:

* **bounds**: an index outside its array (negative ones too: Numba wraps them around to the
  end, which at an edge is a missing bounds check) stops that thread with a finding;
* **races**: each thread counts the barriers it has passed (its *epoch*). Two accesses to
  one element by different threads, at least one of them a plain write, are unordered when
  the threads are in different blocks (blocks never wait for each other) or in the same
  block and epoch (no barrier between them). Atomics do not race with atomics. This is the
  rule of ``compute-sanitizer --tool racecheck``, applied to shared and global memory;
* **uninitialized shared memory**: a shared element read before any thread of its block
  wrote it (on a GPU it holds garbage; here it starts as NaN);
* **barriers**: threads of a block waiting at different ``syncthreads`` calls, or waiting
  while others of the block have already returned.

The CUDA threads run one at a time under a scheduler, so a run is deterministic and its
order can be chosen (:data:`SCHEDULES`): ``"sequential"`` (blocks in order, each thread
until its next barrier), ``"reverse"`` (the same, backwards) or ``"interleaved"`` (every
thread of every block advances one array access at a time, as a GPU may run them: a race
then shows as a wrong value). A kernel that never calls ``syncthreads`` runs without OS
threads.

numpy and Numba are imported when a kernel runs, not when this module is imported: the
choice between Numba's real CUDA target and its simulator is made once per process, by the
first import of ``numba.cuda`` (see :func:`gpulesson.kernelcheck.numba_cuda`).
"""

from __future__ import annotations

import ctypes
import inspect
import linecache
import math
import re
import sys
import threading
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from gpulesson.kernelcheck.findings import Finding, Site, ThreadId, out_of_bounds, show_index
from gpulesson.kernelcheck.runtime import (
    FindingLog,
    Run,
    kernel_site,
    launch_shape,
    python_function,
    race_with,
)

__all__ = ["SCHEDULES", "Run", "launch_shape", "python_function", "run_kernel"]

#: Thread orders a run can use.
SCHEDULES = ("sequential", "reverse", "interleaved")
#: Array accesses one thread may make before it is stopped as a runaway.
MAX_ACCESSES = 200_000
#: Seconds the scheduler waits for one thread to reach a barrier or finish.
STEP_TIMEOUT = 20.0
#: The most threads an interleaved run takes: each is an OS thread, alive all run long.
MAX_INTERLEAVED_THREADS = 4096


class _NeedsThreads(BaseException):
    """A run without OS threads met ``syncthreads``: start again with threads."""


class _Stop(BaseException):
    """Ends the running CUDA thread (an out-of-bounds access, a timeout, the end of a run)."""


def _is_device_function(value: Any) -> bool:
    if not hasattr(value, "py_func"):
        return False
    if getattr(value, "_device", False):  # the simulator's FakeCUDAKernel
        return True
    options = getattr(value, "targetoptions", None)  # numba-cuda's CUDADispatcher
    return isinstance(options, Mapping) and bool(options.get("device"))


# ---------------------------------------------------------------------------------------
# Threads and the launch


class _Thread:
    """One CUDA thread of the launch and where it stands."""

    __slots__ = ("block", "thread", "block_index", "tid", "lane", "epoch", "status",
                 "barrier_site", "accesses", "worker", "threadIdx", "blockIdx", "launch")

    def __init__(self, launch: _Launch, block: tuple[int, int, int],
                 thread: tuple[int, int, int], block_index: int, tid: int, dim3: Any) -> None:
        bx, by, _ = launch.block_dim
        self.launch = launch
        self.block, self.thread = block, thread
        self.block_index, self.tid = block_index, tid
        self.lane = (thread[0] + bx * (thread[1] + by * thread[2])) % 32
        self.epoch, self.status, self.accesses = 0, "new", 0
        self.barrier_site: Site | None = None
        self.worker: _Worker | None = None
        self.threadIdx, self.blockIdx = dim3(*thread), dim3(*block)

    @property
    def ident(self) -> ThreadId:
        return ThreadId(self.block, self.thread, self.launch.grid, self.launch.block_dim)


class _Worker(threading.Thread):
    """An OS thread that runs the CUDA threads handed to it, one after the other."""

    def __init__(self, launch: _Launch) -> None:
        super().__init__(daemon=True, name="kernelcheck")
        self.launch = launch
        self.go = threading.Lock()
        self.go.acquire()
        self.job: _Thread | None = None

    def run(self) -> None:
        while True:
            self.go.acquire()
            job = self.job
            if job is None:
                return
            try:
                self.launch.body(job)
            except BaseException:  # noqa: S110 - a stop or an interrupt ends this thread
                job.status = "stopped"
            finally:
                self.launch.back.release()

    def pause(self) -> None:
        """Hand control back to the scheduler; return when resumed."""
        self.launch.back.release()
        self.go.acquire()
        if self.launch.aborting:
            raise _Stop


class _Launch(FindingLog):
    """The state of one run: the threads, the one running now, what was found."""

    def __init__(self, fn: types.FunctionType, grid: tuple[int, int, int],
                 block_dim: tuple[int, int, int], schedule: str, threaded: bool) -> None:
        super().__init__()
        self.fn, self.grid, self.block_dim = fn, grid, block_dim
        self.schedule, self.threaded = schedule, threaded
        self.preempt = schedule == "interleaved"
        self.current: _Thread | None = None
        self.back = threading.Lock()
        self.back.acquire()
        self.aborting = False
        self.args: tuple[Any, ...] = ()
        self._sites: dict[tuple[str, int], Site] = {}
        self.votes: dict[tuple[int, int], dict[int, Any]] = {}
        self.exited: set[int] = set()
        self.files: set[str] = set()

    # findings ---------------------------------------------------------------
    def site(self) -> Site | None:
        """The line of the kernel (or of a device function) that is running now."""
        return kernel_site(self.files, self._sites, _site)

    # running ----------------------------------------------------------------
    def body(self, t: _Thread) -> None:
        """Run the kernel as thread ``t`` to its end, recording what stops it."""
        self.current = t
        try:
            self.fn(*self.args)
        except _Stop:
            t.status = "stopped"
            return
        except _NeedsThreads:
            raise
        except Exception as error:  # the learner's code: reported, never propagated
            t.status = "stopped"
            caught, where = error, _error_site(self.files, error)
            self.report("exception", (type(caught).__name__, where), lambda: Finding(
                "exception", f"{t.ident} raised {type(caught).__name__}: {caught}"
                + (f" at {where}" if where else ""), thread=t.ident, site=where))
            return
        t.status = "done"

    def step(self) -> _Thread:
        """Before an array access: count it; in an interleaved run, let the others go."""
        t = self.current
        t.accesses += 1
        if t.accesses > MAX_ACCESSES:
            self.report("timeout", "accesses", lambda: Finding(
                "timeout", f"{t.ident} made over {MAX_ACCESSES:,} array accesses without "
                "finishing: an endless loop?", thread=t.ident))
            raise _Stop
        if self.preempt:
            t.status = "ready"
            t.worker.pause()
            self.current = t
        return t

    def barrier(self) -> None:
        if not self.threaded:
            raise _NeedsThreads
        t = self.current
        t.barrier_site = self.site()
        t.status = "barrier"
        t.worker.pause()
        self.current = t


def _site(code: types.CodeType, lineno: int) -> Site:
    """Line ``lineno`` of the function of ``code``, counted from its ``def`` line (1)."""
    first = code.co_firstlineno  # the first decorator's line, when there is one
    for number in range(first, lineno + 1):
        if linecache.getline(code.co_filename, number).lstrip().startswith(("def ",
                                                                             "async def ")):
            first = number
            break
    text = linecache.getline(code.co_filename, lineno).strip()
    return Site(code.co_name, lineno - first + 1, text)


def _error_site(files: set[str], error: BaseException) -> Site | None:
    tb, site = error.__traceback__, None
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename in files:
            site = _site(code, tb.tb_lineno)
        tb = tb.tb_next
    return site


# ---------------------------------------------------------------------------------------
# Arrays seen through the checker


def _remember(table: dict, t: _Thread, site: Site | None) -> None:
    entries = table.setdefault(t.block_index, {}).setdefault(t.epoch, [])
    if len(entries) < 2 and all(e[0] is not t for e in entries):
        entries.append((t, site))


class TracedArray:
    """A kernel argument or a shared array as the kernel sees it in the checker: indexing
    is checked and recorded; ``shape``, ``size``, ``ndim``, ``dtype`` and ``len`` work."""

    def __init__(self, data: Any, name: str, space: str, launch: _Launch, *,
                 read_only: bool = False) -> None:
        self.data, self.name, self.space, self.launch = data, name, space, launch
        self.shape, self.size, self.ndim, self.dtype = data.shape, data.size, data.ndim, data.dtype
        self.read_only = read_only
        self._strides = [int(s // data.itemsize) for s in data.strides]
        self.reads: dict[int, dict] = {}
        self.writes: dict[int, dict] = {}
        self.atomics: dict[int, dict] = {}
        self.written = [False] * data.size if space == "shared" else None
        self.last_writer: dict[int, tuple[_Thread, Site | None]] = {}

    def __len__(self) -> int:
        return self.shape[0]

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.data, attr)

    def __repr__(self) -> str:
        return f"<{self.space} array {self.name} {self.shape} {self.dtype}>"

    # indexing ---------------------------------------------------------------
    def _locate(self, index: Any, verb: str) -> tuple[int, tuple[int, ...]]:
        parts = index if isinstance(index, tuple) else (index,)
        idx = []
        for part in parts:
            if isinstance(part, bool) or not hasattr(part, "__index__"):
                self._unsupported(f"{verb} {self.name}[{show_index(index)}]: the checker follows "
                                  "integer indexes only (a[i] or a[i, j]), not slices")
            idx.append(part.__index__())
        if len(idx) != self.ndim:
            t = self.launch.current
            self.launch.report("exception", (self.name, "dims"), lambda: Finding(
                "exception", f"{t.ident} indexed {self.name} with {len(idx)} index(es), but "
                f"{self.name} has {self.ndim} dimension(s), shape {self.shape}",
                array=self.name, thread=t.ident, site=self.launch.site()))
            raise _Stop
        for axis, (i, n) in enumerate(zip(idx, self.shape, strict=True)):
            if not 0 <= i < n:
                self._out_of_bounds(tuple(idx), axis, verb)
        if self.ndim == 1:
            return idx[0], (idx[0],)
        return sum(i * s for i, s in zip(idx, self._strides, strict=True)), tuple(idx)

    def _out_of_bounds(self, idx: tuple[int, ...], axis: int, verb: str) -> None:
        t, launch = self.launch.current, self.launch
        site = launch.site()
        launch.report("out_of_bounds", (self.name, verb, site), lambda: out_of_bounds(
            t.ident, verb, self.name, self.shape, idx, axis, site,
            "a negative index, which Numba wraps around to the end of the array"))
        raise _Stop

    def _unsupported(self, text: str) -> None:
        t = self.launch.current
        self.launch.report("unsupported", (self.name, text), lambda: Finding(
            "unsupported", f"{t.ident} {text}", array=self.name, thread=t.ident,
            site=self.launch.site()))
        raise _Stop

    # recording ----------------------------------------------------------------
    def _race(self, t: _Thread, verb: str, other: tuple, other_verb: str, idx: tuple) -> None:
        launch, site = self.launch, self.launch.site()
        o_thread, o_site = other
        same_block = o_thread.block_index == t.block_index
        why = ("with no cuda.syncthreads() between them" if same_block else
               "and their blocks run in no fixed order, with no way to wait for each other")
        launch.report("race", (self.name, o_site, site), lambda: Finding(
            "race", f"race on {self.space} {self.name}[{show_index(idx)}]: {o_thread.ident} "
            f"{other_verb} it ({o_site}) and {t.ident} {verb} it ({site}), {why}",
            array=self.name, index=idx, thread=t.ident, site=site))

    def _record(self, flat: int, idx: tuple, t: _Thread, kind: str) -> None:
        site = None
        if self.space == "shared" and kind == "read" and not self.written[flat]:
            site = self.launch.site()
            self.launch.report("uninitialized", (self.name, site), lambda: Finding(
                "uninitialized", f"{t.ident} read shared {self.name}[{show_index(idx)}] ({site}) "
                "before any thread of its block wrote it", array=self.name, index=idx,
                thread=t.ident, site=site))
        if self.read_only:
            if kind != "read":
                site = site or self.launch.site()
                self.launch.report("input_written", self.name, lambda: Finding(
                    "input_written", f"{t.ident} wrote {self.name}[{show_index(idx)}] ({site}), "
                    f"but {self.name} is an input: write the result to the output array",
                    array=self.name, index=idx, thread=t.ident, site=site))
            return
        site = site or self.launch.site()
        race = race_with(kind, t, t.block_index, self.writes.get(flat), self.atomics.get(flat),
                         self.reads.get(flat))
        if race:
            other, other_kind = race
            self._race(t, _VERBS[kind], other, _VERBS[other_kind], idx)
        table = {"read": self.reads, "write": self.writes, "atomic": self.atomics}[kind]
        _remember(table.setdefault(flat, {}), t, site)
        if kind != "read":
            self.last_writer[flat] = (t, site)
            if self.written is not None:
                self.written[flat] = True

    # the kernel's view ----------------------------------------------------------
    def __getitem__(self, index: Any) -> Any:
        flat, idx = self._locate(index, "read")
        t = self.launch.step()
        self._record(flat, idx, t, "read")
        return self.data[idx]

    def __setitem__(self, index: Any, value: Any) -> None:
        flat, idx = self._locate(index, "wrote")
        t = self.launch.step()
        self._record(flat, idx, t, "write")
        self.data[idx] = value

    def atomic(self, index: Any, update: Callable[[Any], Any]) -> Any:
        """An indivisible read-modify-write (``cuda.atomic.*``); returns the old value."""
        flat, idx = self._locate(index, "updated")
        t = self.launch.step()
        self._record(flat, idx, t, "atomic")
        old = self.data[idx]
        self.data[idx] = update(old)
        return old


_VERBS = {"read": "read", "write": "wrote", "atomic": "updated atomically"}


# ---------------------------------------------------------------------------------------
# The cuda module the kernel sees

_SHARED_NAME = re.compile(r"^(\w+)\s*=")


class _Shared:
    """``cuda.shared``: one array per block and per call site, starting as NaN."""

    def __init__(self, launch: _Launch, np: Any) -> None:
        self.launch, self.np = launch, np
        self.arrays: dict[tuple[int, Any], TracedArray] = {}

    def array(self, shape: Any, dtype: Any, alignment: Any = None) -> TracedArray:
        launch, np = self.launch, self.np
        t, site = launch.current, launch.site()
        if shape == 0 or shape == (0,):
            launch.report("unsupported", "dynamic shared memory", lambda: Finding(
                "unsupported", "dynamic shared memory (cuda.shared.array(0, ...)) is not "
                "followed by the checker: give the array its size", site=site))
            raise _Stop
        key = (t.block_index, site)
        found = self.arrays.get(key)
        if found is None:
            kind = np.dtype(dtype if isinstance(dtype, (type, np.dtype, str)) else str(dtype))
            data = np.full(shape, np.nan if kind.kind in "fc" else 0, dtype=kind)
            match = _SHARED_NAME.match(site.text) if site else None
            name = match.group(1) if match else "a shared array"
            found = self.arrays[key] = TracedArray(data, name, "shared", launch)
        return found


class _Atomic:
    """``cuda.atomic``: indivisible updates, recorded as atomic accesses."""

    @staticmethod
    def _on(array: Any, index: Any, update: Callable[[Any], Any]) -> Any:
        if not isinstance(array, TracedArray):
            raise TypeError(f"cuda.atomic works on arrays, got {type(array).__name__}")
        return array.atomic(index, update)

    def add(self, a: Any, i: Any, v: Any) -> Any:
        return self._on(a, i, lambda old: old + v)

    def sub(self, a: Any, i: Any, v: Any) -> Any:
        return self._on(a, i, lambda old: old - v)

    def max(self, a: Any, i: Any, v: Any) -> Any:
        return self._on(a, i, lambda old: max(old, v))

    def min(self, a: Any, i: Any, v: Any) -> Any:
        return self._on(a, i, lambda old: min(old, v))

    def exch(self, a: Any, i: Any, v: Any) -> Any:
        return self._on(a, i, lambda old: v)

    def and_(self, a: Any, i: Any, v: Any) -> Any:
        return self._on(a, i, lambda old: old & v)

    def or_(self, a: Any, i: Any, v: Any) -> Any:
        return self._on(a, i, lambda old: old | v)

    def xor(self, a: Any, i: Any, v: Any) -> Any:
        return self._on(a, i, lambda old: old ^ v)

    def inc(self, a: Any, i: Any, v: Any) -> Any:
        return self._on(a, i, lambda old: 0 if old >= v else old + 1)

    def dec(self, a: Any, i: Any, v: Any) -> Any:
        return self._on(a, i, lambda old: v if old == 0 or old > v else old - 1)

    def cas(self, a: Any, i: Any, old: Any, v: Any) -> Any:
        return self._on(a, i, lambda cur: v if cur == old else cur)

    def compare_and_swap(self, a: Any, old: Any, v: Any) -> Any:
        return self.cas(a, (0,) * a.ndim, old, v)


def _fake_cuda(launch: _Launch, kernelapi: Any, np: Any) -> Any:
    shared, atomic = _Shared(launch, np), _Atomic()

    class CheckedCUDA(kernelapi.FakeCUDAModule):
        threadIdx = property(lambda self: launch.current.threadIdx)
        blockIdx = property(lambda self: launch.current.blockIdx)
        laneid = property(lambda self: launch.current.lane)
        shared = property(lambda self: shared)
        atomic = property(lambda self: atomic)

        def syncthreads(self) -> None:
            launch.barrier()

        def _vote(self, value: Any) -> list[Any]:
            t = launch.current
            votes = launch.votes.setdefault((t.block_index, t.epoch), {})
            votes[t.tid] = value
            launch.barrier()
            return list(votes.values())

        def syncthreads_count(self, value: Any) -> int:
            return sum(1 for v in self._vote(value) if v)

        def syncthreads_and(self, value: Any) -> int:
            return int(all(self._vote(value)))

        def syncthreads_or(self, value: Any) -> int:
            return int(any(self._vote(value)))

    return CheckedCUDA(launch.grid, launch.block_dim, 0)


def _bind(fn: types.FunctionType, fake: Any, done: dict[int, types.FunctionType],
          files: set[str]) -> types.FunctionType:
    """A copy of ``fn`` whose ``cuda`` is the checker's, and so are its device functions'."""
    if id(fn) in done:
        return done[id(fn)]
    real = sys.modules.get("numba.cuda")
    scope = dict(fn.__globals__)
    copy = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    done[id(fn)] = copy
    files.add(fn.__code__.co_filename)
    for key, value in list(scope.items()):
        if value is real and real is not None:
            scope[key] = fake
        elif _is_device_function(value):
            scope[key] = _bind(python_function(value), fake, done, files)
    scope.setdefault("cuda", fake)
    return copy


# ---------------------------------------------------------------------------------------
# Running


def _threads(launch: _Launch, dim3: Any, blocks: Sequence[tuple[int, int, int]]
             ) -> list[list[_Thread]]:
    bx, by, bz = launch.block_dim
    gx, gy, _ = launch.grid
    per_block = bx * by * bz
    out = []
    for block in blocks:
        index = block[0] + gx * (block[1] + gy * block[2])
        out.append([_Thread(launch, block, (x, y, z), index, index * per_block + x + bx * (
            y + by * z), dim3) for z in range(bz) for y in range(by) for x in range(bx)])
    return out


def _resume(launch: _Launch, t: _Thread, pool: list[_Worker]) -> None:
    if t.worker is None:
        t.worker = pool.pop() if pool else _Worker(launch)
        t.worker.job = t
        if not t.worker.is_alive():
            t.worker.start()
    launch.current = t
    t.status = "running"
    t.worker.go.release()
    if not launch.back.acquire(timeout=STEP_TIMEOUT):
        launch.report("timeout", "step", lambda: Finding(
            "timeout", f"{t.ident} ran for {STEP_TIMEOUT:g} s without reaching a barrier or "
            "finishing: an endless loop?", thread=t.ident))
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(t.worker.ident),
                                                   ctypes.py_object(_Stop))
        launch.back.acquire(timeout=STEP_TIMEOUT)
        t.status = "stopped"
    if t.status in ("done", "stopped"):
        worker, t.worker = t.worker, None
        worker.job = None
        pool.append(worker)


def _release(launch: _Launch, members: list[_Thread], block: list[_Thread]) -> None:
    """All live threads of a block wait at a barrier: check them, then let them on."""
    sites = list(dict.fromkeys(m.barrier_site for m in members))
    if len(sites) > 1:
        t = members[-1]
        launch.report("barrier_divergence", tuple(sites), lambda: Finding(
            "barrier_divergence", f"threads of block {t.block} wait at different "
            f"cuda.syncthreads() calls ({'; '.join(str(s) for s in sites)}): a barrier must be "
            "reached by every thread of the block, in the same place", thread=t.ident,
            site=sites[0]))
    gone = [u for u in block if u.status == "done"]
    if gone and members[0].block_index not in launch.exited:
        launch.exited.add(members[0].block_index)
        u = gone[0]
        launch.report("barrier_divergence", "returned", lambda: Finding(
            "barrier_divergence", f"{u.ident} had returned when the other threads of its "
            f"block reached cuda.syncthreads() ({sites[0]}): every thread of a block must "
            "reach each barrier, so keep the threads past the edge running and guard only "
            "their loads and stores", thread=u.ident, site=sites[0]))
    for m in members:
        m.epoch += 1
        m.status = "ready"
        m.barrier_site = None


def _drive(launch: _Launch, groups: list[list[_Thread]], pool: list[_Worker]) -> None:
    """Run ``groups`` of threads (blocks, or all blocks at once) to their end."""
    blocks: dict[int, list[_Thread]] = {}
    for group in groups:
        for t in group:
            blocks.setdefault(t.block_index, []).append(t)
    live = [t for group in groups for t in group]
    while live:
        for t in live:
            if t.status in ("new", "ready"):
                _resume(launch, t, pool)
        live = [t for t in live if t.status not in ("done", "stopped")]
        waiting: dict[int, list[_Thread]] = {}
        for t in live:
            waiting.setdefault(t.block_index, []).append(t)
        for index, members in waiting.items():
            if all(m.status == "barrier" for m in members):
                _release(launch, members, blocks[index])


def _abort(launch: _Launch, pool: list[_Worker], threads: Iterable[_Thread]) -> None:
    launch.aborting = True
    for t in threads:
        if t.worker is not None and t.status not in ("done", "stopped"):
            launch.current = t
            t.worker.go.release()
            launch.back.acquire(timeout=STEP_TIMEOUT)
            pool.append(t.worker)
    for worker in pool:
        worker.job = None
        if worker.is_alive():
            worker.go.release()


def _run_once(fn: types.FunctionType, grid: tuple[int, int, int],
              block: tuple[int, int, int], args: Sequence[Any], names: Sequence[str],
              read_only: set[str], schedule: str, threaded: bool, np: Any,
              kernelapi: Any) -> tuple[_Launch, list[Any]]:
    launch = _Launch(fn, grid, block, schedule, threaded)
    traced = [TracedArray(np.array(a, copy=True), name, "global", launch,
                          read_only=name in read_only) if isinstance(a, np.ndarray) else a
              for a, name in zip(args, names, strict=True)]
    files: set[str] = set()
    launch.fn = _bind(fn, _fake_cuda(launch, kernelapi, np), {}, files)
    launch.files = files
    launch.args = tuple(traced)
    gx, gy, gz = grid
    order = [(x, y, z) for z in range(gz) for y in range(gy) for x in range(gx)]
    groups = _threads(launch, kernelapi.Dim3, order)
    if schedule == "reverse":
        groups = [list(reversed(g)) for g in reversed(groups)]
    if not threaded:
        for group in groups:
            for t in group:
                launch.body(t)
        return launch, traced
    pool: list[_Worker] = []
    everything = [t for g in groups for t in g]
    try:
        if schedule == "interleaved":
            _drive(launch, [everything], pool)
        else:
            for group in groups:
                _drive(launch, [group], pool)
    finally:
        _abort(launch, pool, everything)
    return launch, traced


def run_kernel(kernel: Any, grid: Any, block: Any, *args: Any,
               names: Sequence[str] | None = None, inputs: Iterable[str] = (),
               schedule: str = "sequential") -> Run:
    """Run ``kernel[grid, block](*args)`` in the instrumented simulator.

    The arguments are numpy arrays (copied: the originals are left alone) and scalars; the
    arrays after the run are in :attr:`Run.arrays`, by parameter name.

    Parameters
    ----------
    kernel:
        a ``@cuda.jit`` kernel, or the same function undecorated.
    grid, block:
        blocks per grid and threads per block, ints or tuples of up to 3 ints.
    args:
        the kernel's arguments.
    names:
        the parameter names (default: read from the function).
    inputs:
        the names of arrays the kernel must only read: a write to one is a finding, and
        their reads are not recorded (faster).
    schedule:
        one of :data:`SCHEDULES`.
    """
    import numpy as np
    from numba.cuda.simulator import kernelapi

    fn = python_function(kernel)
    grid3, block3 = launch_shape("grid", grid), launch_shape("block", block)
    if block3[0] * block3[1] * block3[2] > 1024:
        raise ValueError(f"block must have at most 1,024 threads, got {block3}")
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    threads = math.prod(grid3) * math.prod(block3)
    if schedule == "interleaved" and threads > MAX_INTERLEAVED_THREADS:
        raise ValueError(f"an interleaved run keeps every thread alive at once: at most "
                         f"{MAX_INTERLEAVED_THREADS:,} threads, got {threads:,} (grid {grid3}, "
                         f"block {block3}); try a smaller size")
    params = list(names) if names is not None else list(inspect.signature(fn).parameters)
    if len(params) != len(args):
        raise ValueError(f"{fn.__name__} takes {len(params)} arguments ({', '.join(params)}), "
                         f"got {len(args)}")
    read_only = set(inputs)
    try:
        launch, traced = _run_once(fn, grid3, block3, args, params, read_only, schedule,
                                   schedule == "interleaved", np, kernelapi)
    except _NeedsThreads:
        launch, traced = _run_once(fn, grid3, block3, args, params, read_only, schedule,
                                   True, np, kernelapi)
    arrays = dict(_traced(params, traced))
    writers = {name: {flat: (t.ident, site) for flat, (t, site) in a.last_writer.items()}
               for name, a in _traced(params, traced)}
    return Run(arrays={name: a.data for name, a in arrays.items()}, findings=launch.findings(),
               grid=grid3, block=block3, schedule=schedule, writers=writers)


def _traced(names: Sequence[str], values: Sequence[Any]) -> list[tuple[str, TracedArray]]:
    return [(name, a) for name, a in zip(names, values, strict=True)
            if isinstance(a, TracedArray)]
