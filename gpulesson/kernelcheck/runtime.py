"""A pure-Python CUDA runtime: a kernel's own source, run thread by thread, checked at every
array access. Standard library only, so it runs in Jupyter without Numba and in the site's
Pyodide worker alike.

:func:`run_kernel` rewrites the kernel (:mod:`gpulesson.kernelcheck.transform`), gives it a
``cuda`` of its own (:class:`DeviceCuda`: ``grid``, ``gridsize``, ``threadIdx``,
``blockIdx``, ``blockDim``, ``gridDim``, ``laneid``, ``shared.array``, ``local.array``,
``syncthreads`` and its votes, ``atomic.*``, the warp shuffles and votes) and runs every
CUDA thread as a generator. A block runs its threads in order (or in reverse), each to its
next barrier; when all of them wait there the block goes on. The lanes of a warp meet at a
shuffle the same way. Blocks run one after another. The run is deterministic.

What it finds, naming the thread, the element and the line:

* **bounds**: an index outside its array (negative ones too: on a device they reach the
  memory before it) stops the thread;
* **races**: each thread counts the barriers it passed (its *epoch*). Two accesses to one
  element by different threads, one of them a plain write, race when the threads are in
  different blocks or in the same block and epoch. Atomics do not race with atomics (the
  rule of ``compute-sanitizer --tool racecheck``). A race between two iterations of a loop
  says so;
* **uninitialized shared memory**, **barrier divergence** (threads of a block at different
  barriers, or returned before one) and **exceptions**, ``BaseException`` included.

Budgets: at most :data:`MAX_THREADS` threads a launch, refused at once; a time budget
(:class:`Budget`) checked at every array access and loop step, so a kernel that loops
forever, even one that catches every exception, stops with a ``timeout`` finding. The kernel
sees only ``math``, ``cmath``, ``operator``, numpy and numba (the shims), and a ``time``
whose ``sleep`` counts against the budget; any other module is refused when used.

It also records, per warp, what the counters of :mod:`gpulesson.kernelcheck.counters` read:
the addresses of each warp-wide memory request and the sides each branch took.
"""

from __future__ import annotations

import linecache
import math
import sys
import time
import types
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from gpulesson.kernelcheck import arrays
from gpulesson.kernelcheck.arrays import DTYPES, DeviceArray, dtype_name
from gpulesson.kernelcheck.findings import Finding, Site, ThreadId, out_of_bounds, show_index
from gpulesson.kernelcheck.transform import SiteInfo

__all__ = ["MAX_THREADS", "SCHEDULES", "TIME_BUDGET", "Budget", "DeviceCuda", "Launch", "Run",
           "launch_shape", "python_function"]

T = TypeVar("T")

#: Thread orders a run can use.
SCHEDULES = ("sequential", "reverse")
#: The most threads one launch may have.
MAX_THREADS = 65_536
#: Seconds a check may run, all launches together, before it stops the kernel.
TIME_BUDGET = 4.0
#: Findings of one kind kept per run (the others only counted).
MAX_FINDINGS = 20
#: A ``range`` longer than this in a kernel is refused (it could only be a runaway).
MAX_RANGE = 10_000_000
#: Alignment of global arrays, as ``cudaMalloc`` gives (bytes).
GLOBAL_ALIGNMENT = 256
_ALLOWED_MODULES = ("math", "cmath", "operator", "numpy", "numba", "numba.cuda", "time",
                    "gpulesson.kernelcheck", "gpulesson.kernelcheck.shim")


class _Stop(BaseException):
    """Ends the running CUDA thread (an out-of-bounds access, an unsupported operation)."""


class _Expired(BaseException):
    """The run has used its time budget: every thread stops."""


@dataclass(frozen=True)
class Run:
    """The result of a run (:func:`gpulesson.kernelcheck.scheduler.run_kernel`, or the
    simulator's cross-check): the arrays after the kernel (by parameter name), what was
    found, and who wrote each output element last; ``trace``, where one was kept, the
    scheduler's record of the run."""

    arrays: Mapping[str, Any]
    findings: tuple[Finding, ...]
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    schedule: str
    writers: Mapping[str, Mapping[int, tuple[ThreadId, Site | None]]]
    trace: Any = field(default=None, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return not self.findings

    def writer(self, name: str, flat: int) -> tuple[ThreadId, Site | None] | None:
        """The thread that last wrote element ``flat`` (C order) of array ``name``."""
        return self.writers.get(name, {}).get(flat)


@dataclass
class Budget:
    """The time and thread budget of a check: ``seconds`` for all its launches together,
    counted from the first; ``max_threads`` per launch."""

    seconds: float = TIME_BUDGET
    max_threads: int = MAX_THREADS
    deadline: float | None = None
    expired: bool = False

    def start(self) -> None:
        if self.deadline is None:
            self.deadline = time.perf_counter() + self.seconds

    def left(self) -> float:
        self.start()
        return max(0.0, self.deadline - time.perf_counter())


def python_function(kernel: Any) -> types.FunctionType:
    """The Python function of ``kernel``: a ``@cuda.jit`` kernel (the course's shim, Numba's
    simulator or Numba's CUDA target) or a plain function. ``TypeError`` for anything else."""
    fn = getattr(kernel, "py_func", kernel)
    if isinstance(fn, types.FunctionType):
        return fn
    raise TypeError(f"kernel must be a @cuda.jit kernel or a Python function, got "
                    f"{type(kernel).__name__}")


def launch_shape(name: str, value: Any) -> tuple[int, int, int]:
    """A grid or block shape as ``(x, y, z)``: an int or a tuple of 1 to 3 positive ints."""
    parts = value if isinstance(value, tuple) else (value,)
    if not 1 <= len(parts) <= 3 or any(isinstance(p, bool) or not isinstance(p, int) or p < 1
                                       for p in parts):
        raise ValueError(f"{name} must be a positive int or a tuple of 1 to 3 positive ints, "
                         f"got {value!r}")
    return (*parts, 1, 1)[:3]  # type: ignore[return-value]


def _safe_text(error: BaseException, limit: int = 200) -> str:
    try:
        text = " ".join(str(error).split())
    except BaseException:  # noqa: BLE001 - an exception whose __str__ raises
        return "(its message could not be shown)"
    return text[:limit] if text else "no message"


def _safe_name(error: BaseException) -> str:
    try:
        return str(type(error).__name__)[:80]
    except BaseException:  # noqa: BLE001
        return "an exception"


class Dim3:
    """``threadIdx``, ``blockIdx``, ``blockDim`` or ``gridDim``."""

    __slots__ = ("x", "y", "z")

    def __init__(self, x: int, y: int, z: int) -> None:
        self.x, self.y, self.z = x, y, z

    def __iter__(self) -> Any:
        return iter((self.x, self.y, self.z))

    def __repr__(self) -> str:
        return f"({self.x}, {self.y}, {self.z})"


class _Thread:
    """One CUDA thread and where it stands."""

    __slots__ = ("block", "thread", "bidx", "tid", "lane", "warp", "epoch", "gen", "status",
                 "event", "send", "iters", "occ", "threadIdx", "blockIdx", "gidx", "launch",
                 "skipped")

    def __init__(self, launch: Launch, block: tuple[int, int, int],
                 thread: tuple[int, int, int], bidx: int) -> None:
        bx, by, bz = launch.block_dim
        self.launch, self.block, self.thread, self.bidx = launch, block, thread, bidx
        self.tid = thread[0] + bx * (thread[1] + by * thread[2])
        self.lane, self.warp = self.tid % 32, self.tid // 32
        self.epoch, self.gen, self.status, self.event, self.send = 0, None, "new", None, None
        self.iters: dict[int, int] = {}
        self.occ: dict[int, int] = {}
        self.skipped: set[int] = set()  # the branch sites whose test it found false
        self.threadIdx, self.blockIdx = Dim3(*thread), Dim3(*block)
        self.gidx = (block[0] * bx + thread[0], block[1] * by + thread[1],
                     block[2] * bz + thread[2])

    @property
    def ident(self) -> ThreadId:
        return ThreadId(self.block, self.thread, self.launch.grid, self.launch.block_dim)


# ---------------------------------------------------------------------------------------
# The cuda module the kernel sees


class _Blocked:
    """A module a kernel may not use: any use stops the thread with a finding."""

    def __init__(self, launch: Launch, name: str) -> None:
        self._launch, self._name = launch, name

    def __getattr__(self, attr: str) -> Any:
        self._launch.unsupported(f"a kernel cannot use the module {self._name} "
                                 f"({self._name}.{attr}): a GPU thread has only math, cuda "
                                 "and its arrays")


class _Time:
    """``time`` as a kernel sees it: ``sleep`` counts against the run's budget."""

    def __init__(self, launch: Launch) -> None:
        self._launch = launch
        self.perf_counter, self.time, self.monotonic = time.perf_counter, time.time, \
            time.monotonic

    def sleep(self, seconds: Any) -> None:
        launch = self._launch
        seconds = float(seconds)
        if not seconds <= launch.budget.left():
            launch.expire(f"{launch.current.ident} called time.sleep({seconds:g}), longer than "
                          f"the {launch.budget.seconds:g} s the checker allows a run")
        time.sleep(max(0.0, seconds))

    def __getattr__(self, attr: str) -> Any:
        self._launch.unsupported(f"a kernel cannot use time.{attr}")


class _Atomic:
    def __init__(self, launch: Launch) -> None:
        self._launch = launch

    def __getattr__(self, op: str) -> Any:
        if op.startswith("_"):
            raise AttributeError(op)
        return lambda *args: self._launch.atomic(op, None, *args)


class _Space:
    def __init__(self, launch: Launch, space: str) -> None:
        self._launch, self._space = launch, space

    def array(self, shape: Any, dtype: Any = "float32", **kw: Any) -> DeviceArray:
        return self._launch.allocate(self._space, None, shape, dtype)


class _Const:
    @staticmethod
    def array_like(values: Any) -> Any:
        return values


class DeviceCuda:
    """``cuda`` inside a kernel run by the runtime."""

    warpsize = 32
    const = _Const()

    def __init__(self, launch: Launch) -> None:
        self._launch = launch
        self.blockDim, self.gridDim = Dim3(*launch.block_dim), Dim3(*launch.grid)
        self.atomic = _Atomic(launch)
        self.shared, self.local = _Space(launch, "shared"), _Space(launch, "local")

    @property
    def threadIdx(self) -> Dim3:  # noqa: N802 - CUDA's name
        return self._launch.current.threadIdx

    @property
    def blockIdx(self) -> Dim3:  # noqa: N802
        return self._launch.current.blockIdx

    @property
    def laneid(self) -> int:
        return self._launch.current.lane

    def grid(self, ndim: int) -> Any:
        g = self._launch.current.gidx
        return g[0] if ndim == 1 else g[:ndim]

    def gridsize(self, ndim: int) -> Any:
        (gx, gy, gz), (bx, by, bz) = self._launch.grid, self._launch.block_dim
        sizes = (gx * bx, gy * by, gz * bz)
        return sizes[0] if ndim == 1 else sizes[:ndim]

    def _nested(self, *args: Any) -> None:
        self._launch.unsupported("a barrier or warp operation inside a nested function or "
                                 "lambda is not followed by the checker: call it in the "
                                 "kernel or in a device function")

    syncthreads = syncthreads_count = syncthreads_and = syncthreads_or = _nested
    syncwarp = shfl_sync = shfl_up_sync = shfl_down_sync = shfl_xor_sync = _nested
    all_sync = any_sync = ballot_sync = eq_sync = _nested

    def threadfence(self) -> None:
        pass

    threadfence_block = threadfence_system = threadfence

    @staticmethod
    def fma(a: Any, b: Any, c: Any) -> Any:
        return a * b + c

    @staticmethod
    def selp(cond: Any, a: Any, b: Any) -> Any:
        return a if cond else b

    @staticmethod
    def jit(*args: Any, **kw: Any) -> Any:
        if args and callable(args[0]):
            return args[0]
        return lambda fn: fn


def _numba_namespace(device: DeviceCuda) -> types.SimpleNamespace:
    names = {name: getattr(arrays, name) for name in ("float32", "float64", "int32", "int64",
                                                      "uint32")}
    return types.SimpleNamespace(cuda=device, **names)


# ---------------------------------------------------------------------------------------
# A launch


class FindingLog:
    """The findings of one run: each kind at most :data:`MAX_FINDINGS` times, each once per
    key with its repeats counted."""

    def __init__(self) -> None:
        self.found: dict[tuple, list] = {}  # (kind, key) -> [Finding, count]

    def report(self, kind: str, key: Any, make: Callable[[], Finding] | Finding) -> None:
        """Record a finding of ``kind`` once per ``key`` (``make``: the finding, or a function
        that makes it); count the repeats."""
        slot = self.found.get((kind, key))
        if slot is not None:
            slot[1] += 1
        elif sum(1 for k, _ in self.found if k == kind) < MAX_FINDINGS:
            self.found[(kind, key)] = [make if isinstance(make, Finding) else make(), 1]

    def findings(self) -> tuple[Finding, ...]:
        return tuple(f if n == 1 else replace(f, count=n) for f, n in self.found.values())


def kernel_site(files: Container[str], cache: dict[tuple[str, int], T],
                make: Callable[[types.CodeType, int], T]) -> T | None:
    """What ``make(code, line)`` says of the kernel's line that runs now, made once per line
    and kept in ``cache``; ``None`` outside the kernel. The line is that of the innermost
    frame of the kernel's own code (a file of ``files``), seen from the caller of the
    method that calls this."""
    frame: types.FrameType | None = sys._getframe(3)
    while frame is not None and frame.f_code.co_filename not in files:
        frame = frame.f_back
    if frame is None:
        return None
    key = (frame.f_code.co_filename, frame.f_lineno)
    hit = cache.get(key)
    if hit is None:
        hit = cache[key] = make(frame.f_code, frame.f_lineno)
    return hit


class Launch(FindingLog):
    """One run of a kernel: the threads, the one running now, what was found, what the
    counters need."""

    def __init__(self, grid: tuple[int, int, int], block_dim: tuple[int, int, int],
                 schedule: str, budget: Budget, count: bool) -> None:
        super().__init__()
        self.grid, self.block_dim, self.schedule = grid, block_dim, schedule
        self.budget, self.count = budget, count
        self.current: _Thread | None = None
        self.sites: dict[int, SiteInfo] = {}
        self.extra_sites: dict[tuple[str, int], int] = {}
        self.accesses = 0
        self.mem: dict[tuple, list[int]] = {}     # (block, warp, site, occurrence) -> addresses
        self.mem_sites: dict[int, tuple[str, int, str, int]] = {}  # site -> space, item, name, cols
        self.branches: dict[tuple, list[int]] = {}  # (block, warp, site, occurrence) -> [T, F]
        self.shared_bytes = 0
        self.shared: dict[tuple[int, int], DeviceArray] = {}
        self.shared_offsets: dict[int, int] = {}
        self.barrier_sites: set[int] = set()
        self.exited_blocks: set[int] = set()

    # findings -------------------------------------------------------------------
    def site(self, sid: int | None) -> Site | None:
        if sid is None:
            sid = self.frame_site()
        info = self.sites.get(sid) if sid is not None else None
        if info is None:
            return None
        return Site(info.function, info.relative_line, info.text)

    def frame_site(self) -> int | None:
        """A site for the kernel's line running now (for a call the rewrite did not see)."""
        return kernel_site(self._files, self.extra_sites, self._new_site)

    def _new_site(self, code: types.CodeType, lineno: int) -> int:
        """A site number (negative: the rewrite did not number it) for line ``lineno``."""
        sid = -1 - len(self.extra_sites)
        text = linecache.getline(code.co_filename, lineno).strip()
        name = code.co_name
        self.sites[sid] = SiteInfo(lineno, 0, "call", (), text, name,
                                   self.def_lines.get(name, code.co_firstlineno))
        return sid

    _files: tuple[str, ...] = ()
    def_lines: dict[str, int] = {}  # noqa: RUF012 - set per launch

    def unsupported(self, text: str) -> None:
        t, site = self.current, self.site(None)
        self.report("unsupported", text, lambda: Finding(
            "unsupported", f"{t.ident}: {text}" + (f" ({site})" if site else ""),
            thread=t.ident, site=site))
        raise _Stop

    def expire(self, text: str) -> None:
        """The budget is spent: record why, and stop every thread."""
        self.budget.expired = True
        t = self.current
        self.report("timeout", "budget", lambda: Finding(
            "timeout", text, thread=t.ident if t else None))
        raise _Expired

    def _check_time(self) -> None:
        if self.budget.expired:
            raise _Expired
        if time.perf_counter() > self.budget.deadline:
            t = self.current
            self.expire(f"the kernel ran past the checker's budget of {self.budget.seconds:g} s "
                        f"(stopped in {t.ident}): an endless loop, or a loop that never "
                        "reaches its end condition?")

    # hooks the rewritten kernel calls ---------------------------------------------------
    def tick(self, loop: int) -> None:
        t = self.current
        if loop >= 0:
            t.iters[loop] = t.iters.get(loop, 0) + 1
        self.accesses += 1
        if self.budget.expired or not self.accesses & 0xFF:
            self._check_time()

    def branch(self, value: Any, sid: int) -> bool:
        taken = bool(value)
        if not taken and self.current is not None:
            self.current.skipped.add(sid)
        if self.count:
            t = self.current
            occ = t.occ.get(sid, 0)
            t.occ[sid] = occ + 1
            sides = self.branches.get((t.bidx, t.warp, sid, occ))
            if sides is None:
                sides = self.branches[(t.bidx, t.warp, sid, occ)] = [0, 0]
            sides[0 if taken else 1] += 1
        return taken

    def _locate(self, a: DeviceArray, index: Any, verb: str, sid: int | None) -> int:
        if index.__class__ is int and a.ndim == 1:
            if 0 <= index < a.size:
                return index
            return self._out_of_bounds(a, (index,), 0, verb, sid)
        parts = index if isinstance(index, tuple) else (index,)
        idx = []
        for part in parts:
            if isinstance(part, bool) or not hasattr(part, "__index__"):
                self.unsupported(f"{verb} {a.name}[{show_index(index)}]: the checker follows "
                                 "integer indexes only (a[i] or a[i, j]), not slices or "
                                 "floats")
            idx.append(part.__index__())
        if len(idx) != a.ndim:
            t = self.current
            site = self.site(sid)
            self.report("exception", (a.name, "dims"), lambda: Finding(
                "exception", f"{t.ident} indexed {a.name} with {len(idx)} index(es), but "
                f"{a.name} has {a.ndim} dimension(s), shape {a.shape}"
                + (f" ({site})" if site else ""), array=a.name, thread=t.ident, site=site))
            raise _Stop
        flat = 0
        for axis, (i, n, stride) in enumerate(zip(idx, a.shape, a.strides, strict=True)):
            if not 0 <= i < n:
                return self._out_of_bounds(a, tuple(idx), axis, verb, sid)
            flat += i * stride
        return flat

    def _out_of_bounds(self, a: DeviceArray, idx: tuple[int, ...], axis: int, verb: str,
                       sid: int | None) -> int:
        t, site = self.current, self.site(sid)
        self.report("out_of_bounds", (a.name, verb, site), lambda: out_of_bounds(
            t.ident, verb, a.name, a.shape, idx, axis, site,
            "a negative index, which on a GPU reaches the memory before the array"))
        raise _Stop

    def ld(self, a: Any, index: Any, sid: int) -> Any:
        if a.__class__ is not DeviceArray:
            return a[index]
        flat = self._locate(a, index, "read", sid)
        self._access(a, flat, "read", sid)
        return a.data[flat]

    def st(self, a: Any, index: Any, value: Any, sid: int) -> None:
        if a.__class__ is not DeviceArray:
            a[index] = value
            return
        flat = self._locate(a, index, "wrote", sid)
        self._access(a, flat, "write", sid)
        self._store(a, flat, value, sid)

    def aug(self, a: Any, index: Any, op: str, value: Any, sid: int) -> None:
        if a.__class__ is not DeviceArray:
            a[index] = _OPS[op](a[index], value)
            return
        flat = self._locate(a, index, "updated", sid)
        self._access(a, flat, "read", sid)
        old = a.data[flat]
        self._access(a, flat, "write", sid, count=False)
        self._store(a, flat, _OPS[op](old, value), sid)

    def _store(self, a: DeviceArray, flat: int, value: Any, sid: int | None) -> None:
        try:
            a.data[flat] = value
        except (TypeError, OverflowError) as error:
            t, site, why = self.current, self.site(sid), _safe_text(error)
            self.report("exception", (a.name, "store", site), lambda: Finding(
                "exception", f"{t.ident} stored {_short_value(value)} in {a.name}, an array of "
                f"{a.dtype}: {why}" + (f" ({site})" if site else ""),
                array=a.name, thread=t.ident, site=site))
            raise _Stop from None

    def atomic(self, op: str, sid: int | None, a: Any = None, index: Any = None,
               *values: Any) -> Any:
        if sid is None:
            sid = self.frame_site()
        update = _ATOMICS.get(op)
        if update is None:
            self.unsupported(f"cuda.atomic.{op} is not one the checker knows (add, sub, max, "
                             f"min, exch, inc, dec, and_, or_, xor, cas)")
        if not isinstance(a, DeviceArray):
            self.unsupported(f"cuda.atomic.{op} works on arrays, got {type(a).__name__}")
        if op == "compare_and_swap":
            values, index = (index, *values), (0,) * a.ndim
        flat = self._locate(a, index, "updated", sid)
        self._access(a, flat, "atomic", sid)
        old = a.data[flat]
        try:
            new = update(old, *values)
        except TypeError as error:
            self.unsupported(f"cuda.atomic.{op}: {_safe_text(error)}")
        self._store(a, flat, new, sid)
        return old

    def allocate(self, space: str, sid: int | None, shape: Any = None, dtype: Any = "float32",
                 **kw: Any) -> DeviceArray:
        if sid is None:
            sid = self.frame_site()
        t = self.current
        try:
            kind = dtype_name(dtype)
            dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
            if any(isinstance(d, bool) or not hasattr(d, "__index__") for d in dims):
                raise ValueError(f"shape must be ints known before the launch, got {shape!r}")
            dims = tuple(d.__index__() for d in dims)
        except ValueError as error:
            self.unsupported(f"cuda.{space}.array: {_safe_text(error)}")
        if math.prod(dims) == 0:
            self.unsupported(f"cuda.{space}.array with size 0 (dynamic shared memory) is not "
                             "followed by the checker: give the array its size")
        if math.prod(dims) > 1 << 16:
            self.unsupported(f"cuda.{space}.array of {math.prod(dims):,} elements is more than "
                             "a block can hold")
        info = self.sites.get(sid)
        name = _target_name(info.text) if info else None
        if space == "local":
            return DeviceArray.full(dims, 0, kind, name=name or "a local array", space="local")
        key = (t.bidx, sid)
        found = self.shared.get(key)
        if found is None:
            offset = self.shared_offsets.get(sid)
            if offset is None:
                offset = _round_up(self.shared_bytes, 16)
                self.shared_offsets[sid] = offset
                self.shared_bytes = offset + math.prod(dims) * DTYPES[kind][1]
            fill = math.nan if kind.startswith("float") else 0
            found = DeviceArray.full(dims, fill, kind, name=name or "a shared array",
                                     space="shared", base=offset)
            found.written = [False] * found.size
            found.block = t.bidx
            self.shared[key] = found
        return found

    # recording ------------------------------------------------------------------------
    def _access(self, a: DeviceArray, flat: int, kind: str, sid: int | None,
                count: bool = True) -> None:
        t = self.current
        self.accesses += 1
        if not self.accesses & 0x3FF or self.budget.expired:
            self._check_time()
        space = a.space
        if space == "local":
            return
        if self.count and count and sid is not None:
            occ = t.occ.get(sid, 0)
            t.occ[sid] = occ + 1
            key = (t.bidx, t.warp, sid, occ)
            group = self.mem.get(key)
            if group is None:
                group = self.mem[key] = []
                if sid not in self.mem_sites:
                    cols = a.shape[-1] if a.ndim > 1 else 0
                    self.mem_sites[sid] = (space, a.itemsize, a.name, cols)
            group.append(a.base + flat * a.itemsize)
        if a.read_only:
            if kind != "read":
                site = self.site(sid)
                self.report("input_written", a.name, lambda: Finding(
                    "input_written", f"{t.ident} wrote {a.name}[{_flat_show(a, flat)}] "
                    f"({site}), but {a.name} is an input: write the result to the output array",
                    array=a.name, thread=t.ident, site=site))
            return
        if space == "shared" and kind == "read" and not a.written[flat]:
            site = self.site(sid)
            self.report("uninitialized", (a.name, site), lambda: Finding(
                "uninitialized", f"{t.ident} read shared {a.name}[{_flat_show(a, flat)}] "
                f"({site}) before any thread of its block wrote it", array=a.name,
                index=_flat_index(a, flat), thread=t.ident, site=site))
        race = race_with(kind, t, t.bidx, a.writes.get(flat), a.atomics.get(flat),
                         a.reads.get(flat))
        if race:
            self._race(a, flat, t, kind, sid, *race)
        table = a.reads if kind == "read" else a.writes if kind == "write" else a.atomics
        entries = table.setdefault(flat, {}).setdefault(t.bidx, {}).setdefault(t.epoch, [])
        if len(entries) < 2 and all(e[0] is not t for e in entries):
            info = self.sites.get(sid) if sid is not None else None
            iters = tuple(t.iters.get(loop, 0) for loop in info.loops) if info else ()
            entries.append((t, sid, iters))
        if kind != "read":
            a.last_writer[flat] = (t, sid)
            if a.written is not None:
                a.written[flat] = True

    def _race(self, a: DeviceArray, flat: int, t: _Thread, kind: str, sid: int | None,
              other: tuple, other_kind: str) -> None:
        o_thread, o_sid, o_iters = other
        site, o_site = self.site(sid), self.site(o_sid)
        same_block = o_thread.bidx == t.bidx
        across = ""
        verbs = {"read": "read", "write": "wrote", "atomic": "updated atomically"}
        nouns = {"read": "read", "write": "write", "atomic": "atomic update"}
        if same_block:
            info, o_info = self.sites.get(sid), self.sites.get(o_sid)
            if info and o_info:
                mine = tuple(t.iters.get(loop, 0) for loop in info.loops)
                for loop, (k, j) in zip(info.loops, zip(mine, _pad(o_iters, len(mine)),
                                                        strict=True), strict=True):
                    if loop in o_info.loops and k != j:
                        line = self.sites[loop].relative_line
                        across = (f"; the race is across iterations of the loop at line "
                                  f"{line}: the {nouns[other_kind]} was in iteration {j}, the "
                                  f"{nouns[kind]} in iteration {k}, so a barrier at the end of "
                                  "the loop body is missing (it keeps one iteration from "
                                  "overlapping the next)")
                        break
        why = ("with no cuda.syncthreads() between them" if same_block else
               "and their blocks run in no fixed order, with no way to wait for each other")
        self.report("race", (a.name, o_sid, sid), lambda: Finding(
            "race", f"race on {a.space} {a.name}[{_flat_show(a, flat)}]: {o_thread.ident} "
            f"{verbs[other_kind]} it ({o_site}) and {t.ident} {verbs[kind]} it ({site}), "
            f"{why}{across}", array=a.name, index=_flat_index(a, flat), thread=t.ident,
            site=site))


def _pad(values: tuple[int, ...], n: int) -> tuple[int, ...]:
    return (*values, *(0,) * n)[:n]


def race_with(kind: str, t: Any, block: int, writes: dict | None, atomics: dict | None,
              reads: dict | None) -> tuple[tuple, str] | None:
    """The earlier access to one element that races with thread ``t`` (of ``block``) making
    a ``kind`` access now, and that access's kind: a write, an atomic update (unless this
    is one too) or, for a write, a read, that no barrier orders with this one. Each table
    holds one kind of access to the element, block -> epoch -> entries (thread first)."""
    if writes and (other := _unordered(writes, t, block)):
        return other, "write"
    if kind != "atomic" and atomics and (other := _unordered(atomics, t, block)):
        return other, "atomic"
    if kind != "read" and reads and (other := _unordered(reads, t, block)):
        return other, "read"
    return None


def _unordered(table: dict, t: Any, block: int) -> tuple | None:
    """An access in ``table`` (block -> epoch -> entries) by another thread that no barrier
    orders with the access thread ``t`` of ``block`` makes now, if any."""
    for other_block, epochs in table.items():
        if other_block != block:
            for entries in epochs.values():
                return entries[0]
        else:
            for other in epochs.get(t.epoch, ()):
                if other[0] is not t:
                    return other
    return None


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def _target_name(text: str) -> str | None:
    head = text.split("=", 1)[0].strip() if "=" in text else ""
    return head if head.isidentifier() else None


def _flat_index(a: DeviceArray, flat: int) -> tuple[int, ...]:
    idx = []
    for stride in a.strides:
        idx.append(flat // stride)
        flat %= stride
    return tuple(idx)


def _flat_show(a: DeviceArray, flat: int) -> str:
    return ", ".join(str(i) for i in _flat_index(a, flat))


def _short_value(value: Any) -> str:
    try:
        text = repr(value)
    except BaseException:  # noqa: BLE001
        return "a value"
    return text if len(text) <= 40 else text[:39] + "…"


_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: a / b, "//": lambda a, b: a // b, "%": lambda a, b: a % b,
    "**": lambda a, b: a ** b, "&": lambda a, b: a & b, "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b, "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b,
    "@": lambda a, b: a @ b}
_ATOMICS: dict[str, Callable[..., Any]] = {
    "add": lambda old, v: old + v, "sub": lambda old, v: old - v,
    "max": lambda old, v: v if v > old or old != old else old,
    "min": lambda old, v: v if v < old or old != old else old,
    "exch": lambda old, v: v, "and_": lambda old, v: old & v, "or_": lambda old, v: old | v,
    "xor": lambda old, v: old ^ v, "inc": lambda old, v: 0 if old >= v else old + 1,
    "dec": lambda old, v: v if old == 0 or old > v else old - 1,
    "cas": lambda cur, old, v: v if cur == old else cur,
    "compare_and_swap": lambda cur, old, v: v if cur == old else cur}
