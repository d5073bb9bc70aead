"""Launching a kernel in the pure-Python runtime: its namespace, the scheduler that steps
the CUDA threads to their barriers and warp operations, and :func:`run_kernel`.

The kernel runs in a namespace of its own, a copy of its globals in which ``cuda`` (Numba's
module, or the course's shim :mod:`gpulesson.kernelcheck.shim`) is the run's
:class:`~gpulesson.kernelcheck.runtime.DeviceCuda`, device functions are rewritten like the
kernel, and modules other than ``math``, ``cmath``, ``operator`` and numpy are refused;
``from numba import cuda`` inside it gets the run's ``cuda`` too. A real Numba imported by
the notebook is never touched. Standard library only.
"""

from __future__ import annotations

import builtins
import linecache
import math
import sys
import types
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from gpulesson.kernelcheck.arrays import DTYPES, DeviceArray, Scalar, as_device
from gpulesson.kernelcheck.findings import Finding, Site
from gpulesson.kernelcheck.runtime import (
    GLOBAL_ALIGNMENT,
    MAX_RANGE,
    SCHEDULES,
    Budget,
    DeviceCuda,
    Launch,
    Run,
    _Blocked,
    _Expired,
    _numba_namespace,
    _safe_name,
    _safe_text,
    _Stop,
    _Thread,
    _Time,
    launch_shape,
    python_function,
)
from gpulesson.kernelcheck.transform import Instrumented, instrument

__all__ = ["Run", "is_device_function", "run_kernel"]

_SAFE_MODULES = ("math", "cmath", "operator", "numpy")
_CUDA_MODULES = ("numba.cuda", "gpulesson.kernelcheck.shim")
_NUMBA_MODULES = ("numba", "gpulesson.kernelcheck.numba_shim")
_BLOCKED_BUILTINS = ("open", "input", "breakpoint", "exec", "eval", "compile", "help",
                     "globals", "locals", "vars", "memoryview", "exit", "quit")
#: Rewritten kernels, by their code object (the newest 64).
_CACHE: dict[int, tuple[types.CodeType, Instrumented]] = {}


def is_device_function(value: Any) -> bool:
    """Whether ``value`` is a ``@cuda.jit(device=True)`` function (the shim's or Numba's)."""
    if not hasattr(value, "py_func"):
        return False
    if getattr(value, "device", False) is True or getattr(value, "_device", False):
        return True
    options = getattr(value, "targetoptions", None)  # numba-cuda's CUDADispatcher
    return isinstance(options, Mapping) and bool(options.get("device"))


def _instrumented(fn: types.FunctionType) -> Instrumented:
    key = id(fn.__code__)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is fn.__code__:
        return hit[1]

    def resolve(name: str) -> Any:
        value = fn.__globals__.get(name)
        if name in fn.__code__.co_freevars and fn.__closure__:
            cell = fn.__closure__[fn.__code__.co_freevars.index(name)]
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                value = None
        return python_function(value) if is_device_function(value) else None

    done = instrument(fn, resolve=resolve)
    if len(_CACHE) >= 64:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = (fn.__code__, done)
    return done


def _module_name(value: Any) -> str | None:
    if isinstance(value, types.ModuleType):
        return value.__name__
    return None


class _Namespaces:
    """The globals each rewritten function of one launch runs with."""

    def __init__(self, launch: Launch) -> None:
        self.launch = launch
        self.cuda = DeviceCuda(launch)
        self.numba = _numba_namespace(self.cuda)
        self.time = _Time(launch)
        self.builtins = self._builtins()
        self.helpers = {"__gl_ld": launch.ld, "__gl_st": launch.st, "__gl_aug": launch.aug,
                        "__gl_br": launch.branch, "__gl_tick": launch.tick,
                        "__gl_atomic": launch.atomic,
                        "__gl_shared": lambda sid, *a, **k: launch.allocate("shared", sid, *a,
                                                                            **k),
                        "__gl_local": lambda sid, *a, **k: launch.allocate("local", sid, *a,
                                                                           **k)}

    def replace(self, value: Any) -> Any:
        name = _module_name(value)
        if name is not None:
            if name in _CUDA_MODULES:
                return self.cuda
            if name in _NUMBA_MODULES:
                return self.numba
            if name == "time":
                return self.time
            if name in _SAFE_MODULES:
                return value
            return _Blocked(self.launch, name)
        if getattr(value, "_gl_cuda_shim", False):
            return self.cuda
        if type(value).__module__.startswith("numba") and str(value) in DTYPES:
            return Scalar(str(value))
        return value

    def _import(self, name: str, globals: Any = None, locals: Any = None,  # noqa: A002
                fromlist: Any = (), level: int = 0) -> Any:
        if level:
            return _Blocked(self.launch, name)
        if name in ("numba", "numba.cuda"):
            return self.numba
        if name in ("gpulesson.kernelcheck", "gpulesson.kernelcheck.shim"):
            return types.SimpleNamespace(cuda=self.cuda, **vars(self.numba))
        if name == "time":
            return self.time
        if name.partition(".")[0] in _SAFE_MODULES:
            return __import__(name, globals, locals, fromlist, level)
        return _Blocked(self.launch, name)

    def _builtins(self) -> dict[str, Any]:
        launch = self.launch
        space = dict(vars(builtins))
        space["__import__"] = self._import

        def blocked(name: str) -> Any:
            return lambda *a, **k: launch.unsupported(f"a kernel cannot call {name}()")

        for name in _BLOCKED_BUILTINS:
            space[name] = blocked(name)

        def checked_range(*args: Any) -> range:
            made = range(*args)
            if len(made) > MAX_RANGE:
                launch.unsupported(f"range of {len(made):,} steps: a GPU thread never loops "
                                   f"that long (the checker allows {MAX_RANGE:,})")
            return made

        space["range"] = checked_range
        return space

    def define(self, done: Instrumented, fn: types.FunctionType | None = None
               ) -> types.FunctionType:
        fn = fn or done.origin
        space = {key: self.replace(value) for key, value in fn.__globals__.items()}
        space["__builtins__"] = self.builtins
        space.update(self.helpers)
        space["__name__"] = fn.__globals__.get("__name__", "kernel")
        devices = {name: self.define(device) for name, device in done.devices.items()}
        space.update(devices)
        return done.define(space, fn.__closure__ or (),
                           lambda name, value: devices.get(name) or self.replace(value))


def _files(done: Instrumented) -> set[str]:
    out = {done.filename}
    for device in done.devices.values():
        out |= _files(device)
    return out


def _def_lines(done: Instrumented) -> dict[str, int]:
    out = {done.name: done.def_line}
    for device in done.devices.values():
        out.update(_def_lines(device))
    return out


# ---------------------------------------------------------------------------------------
# The scheduler


def _advance(launch: Launch, fn: Any, args: tuple, t: _Thread, generator: bool) -> None:
    launch.current = t
    try:
        if t.gen is None:
            if generator:
                t.gen = fn(*args)
                event = next(t.gen)
            else:
                fn(*args)
                t.status = "done"
                return
        else:
            event = t.gen.send(t.send)
    except StopIteration:
        t.status = "done"
        return
    except _Stop:
        t.status = "stopped"
        return
    except _Expired:
        t.status = "stopped"
        raise
    except BaseException as error:  # noqa: BLE001 - the learner's code: a finding, never raised
        t.status = "stopped"
        if launch.budget.expired:
            raise _Expired from None
        _exception(launch, t, error)
        return
    t.status, t.event, t.send = "waiting", event, None


def _exception(launch: Launch, t: _Thread, error: BaseException) -> None:
    name, text = _safe_name(error), _safe_text(error)
    tb, site = error.__traceback__, None
    files = launch._files
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename in files:
            first = launch.def_lines.get(code.co_name, code.co_firstlineno)
            line = linecache.getline(code.co_filename, tb.tb_lineno).strip()
            site = Site(code.co_name, tb.tb_lineno - first + 1, line)
        tb = tb.tb_next
    hint = ""
    if name in ("SystemExit", "KeyboardInterrupt", "GeneratorExit"):
        hint = (": a kernel cannot stop the program; the checker stopped this thread and "
                "went on")
    launch.report("exception", (name, site), lambda: Finding(
        "exception", f"{t.ident} raised {name}: {text}" + (f" at {site}" if site else "")
        + hint, thread=t.ident, site=site))


def _warp_ops(launch: Launch, block: list[_Thread], warps: dict[int, list[_Thread]]) -> bool:
    """Complete the warp operations that every lane of its warp has reached."""
    progressed = False
    for warp, members in warps.items():
        waiting = [m for m in members if m.status == "waiting" and m.event[0] == "warp"]
        if not waiting:
            continue
        if any(m.status == "waiting" and m.event[0] == "barrier" for m in members):
            continue  # lanes split between a barrier and a warp operation: stuck
        if any(m.status in ("new", "ready") for m in members):
            continue
        gone = [m for m in members if m.status == "done"]
        first = waiting[0]
        if gone:
            u = gone[0]
            site = launch.site(first.event[1])
            launch.report("barrier_divergence", ("warp-gone", site), Finding(
                "barrier_divergence", f"{u.ident} had returned when the other lanes of its "
                f"warp reached cuda.{first.event[2]} ({site}): every lane named in the mask "
                "must take part, so keep the lanes past the edge running with a neutral "
                "value (0 for a sum)", thread=u.ident, site=site))
        if len({m.event[1] for m in waiting}) > 1:
            site = launch.site(first.event[1])
            launch.report("barrier_divergence", ("warp-sites", site), Finding(
                "barrier_divergence", f"lanes of warp {warp} of block {first.block} wait at "
                "different warp operations: a shuffle must be reached by every lane of its "
                "mask at the same place", thread=first.ident, site=site))
        lanes = {m.lane: m for m in waiting}
        for m in waiting:
            launch.current = m
            try:
                m.send = _warp_result(m, lanes)
            except (TypeError, ValueError, IndexError) as error:
                m.send = None
                _exception(launch, m, error)
        for m in waiting:
            m.status = "ready"
        progressed = True
    return progressed


def _warp_result(m: _Thread, lanes: dict[int, _Thread]) -> Any:
    _, _, name, args = m.event
    if name == "syncwarp":
        return None
    mask = int(args[0]) if args else 0xFFFFFFFF
    members = [t for lane, t in lanes.items() if mask >> lane & 1]
    if name in ("all_sync", "any_sync", "ballot_sync", "eq_sync"):
        preds = {t.lane: t.event[3][1] for t in members}
        if name == "all_sync":
            return int(all(preds.values()))
        if name == "any_sync":
            return int(any(preds.values()))
        if name == "eq_sync":
            return int(len({bool(v) for v in preds.values()}) <= 1)
        return sum(1 << lane for lane, v in preds.items() if v)
    value, k = args[1], int(args[2])
    width = int(args[3]) if len(args) > 3 else 32
    base = m.lane - m.lane % width
    if name == "shfl_sync":
        src = base + k % width
    elif name == "shfl_down_sync":
        src = m.lane + k if m.lane % width + k < width else m.lane
    elif name == "shfl_up_sync":
        src = m.lane - k if m.lane % width - k >= 0 else m.lane
    else:  # shfl_xor_sync
        src = m.lane ^ k if (m.lane ^ k) - base < width else m.lane
    other = lanes.get(src)
    if other is None or not mask >> src & 1 or other.event[2] != name:
        return value
    return other.event[3][1]


def _release(launch: Launch, members: list[_Thread], block: list[_Thread]) -> None:
    """All live threads of a block wait at a barrier: check them, then let them on."""
    sids = list(dict.fromkeys(m.event[1] for m in members))
    if len(sids) > 1:
        t = members[-1]
        shown = "; ".join(str(launch.site(s)) for s in sids)
        launch.report("barrier_divergence", tuple(sids), lambda: Finding(
            "barrier_divergence", f"threads of block {t.block} wait at different "
            f"cuda.syncthreads() calls ({shown}): a barrier must be reached by every thread "
            "of the block at the same place, so take it out of the if (and out of loops whose "
            "length differs between threads)", thread=t.ident, site=launch.site(sids[0])))
    gone = [u for u in block if u.status == "done"]
    if gone and members[0].bidx not in launch.exited_blocks:
        launch.exited_blocks.add(members[0].bidx)
        u, site = gone[0], launch.site(sids[0])
        info = launch.sites.get(sids[0])
        skipped = {launch.sites[b].line for b in u.skipped if b in launch.sites}
        if info is not None and info.ifs and info.ifs[-1] in skipped:
            # the barrier sits in the body of an if whose test this thread found false
            branch = info.ifs[-1] - info.def_line + 1
            text = (f"{u.ident} had finished without reaching the cuda.syncthreads() where "
                    f"the other threads of its block wait ({site}): that barrier sits inside "
                    f"the if at line {branch}, which this thread did not enter, so take it out "
                    "of the if and put it after the branch, where every thread of the block "
                    "reaches it")
        else:
            text = (f"{u.ident} had returned when the other threads of its block reached "
                    f"cuda.syncthreads() ({site}): every thread of a block must reach each "
                    "barrier, so keep the threads past the edge running and guard only their "
                    "loads and stores")
        launch.report("barrier_divergence", ("returned", site), lambda: Finding(
            "barrier_divergence", text, thread=u.ident, site=site))
    name = members[0].event[2]
    result = None
    if name != "syncthreads":
        preds = []
        for m in members:
            args = m.event[3]
            preds.append(bool(args[0]) if args else False)
        result = (sum(preds) if name == "syncthreads_count" else
                  int(all(preds)) if name == "syncthreads_and" else int(any(preds)))
    for m in members:
        m.epoch += 1
        m.status = "ready"
        m.send = result


def _run_block(launch: Launch, fn: Any, args: tuple, threads: list[_Thread],
               generator: bool) -> None:
    warps: dict[int, list[_Thread]] = {}
    for t in threads:
        warps.setdefault(t.warp, []).append(t)
    live = threads
    while True:
        for t in live:
            if t.status in ("new", "ready"):
                _advance(launch, fn, args, t, generator)
        live = [t for t in live if t.status == "waiting"]
        if not live:
            return
        if _warp_ops(launch, threads, warps):
            continue
        at_barrier = [t for t in live if t.event[0] == "barrier"]
        if len(at_barrier) == len(live):
            _release(launch, at_barrier, threads)
            continue
        stuck = next(t for t in live if t.event[0] == "warp")
        site = launch.site(stuck.event[1])
        launch.report("barrier_divergence", ("stuck", site), Finding(
            "barrier_divergence", f"{stuck.ident} waits at cuda.{stuck.event[2]} ({site}) "
            "while other lanes of its warp wait at cuda.syncthreads(): neither can go on, a "
            "deadlock on a GPU", thread=stuck.ident, site=site))
        return


def _close(launch: Launch, threads: Iterable[_Thread]) -> None:
    """End the generators left at a barrier, with the budget marked spent so that a kernel
    catching GeneratorExit cannot loop."""
    was = launch.budget.expired
    launch.budget.expired = True
    try:
        for t in threads:
            if t.gen is not None:
                launch.current = t
                try:
                    t.gen.close()
                except BaseException:  # noqa: BLE001, S110 - a kernel refusing to close
                    pass
                t.gen = None
    finally:
        launch.budget.expired = was


# ---------------------------------------------------------------------------------------
# Running


def run_kernel(kernel: Any, grid: Any, block: Any, *args: Any,
               names: Sequence[str] | None = None, inputs: Iterable[str] = (),
               schedule: str = "sequential", budget: Budget | None = None,
               count: bool = False) -> Run:
    """Run ``kernel[grid, block](*args)`` in the pure-Python runtime.

    The array arguments (numpy arrays, nested lists or
    :class:`~gpulesson.kernelcheck.arrays.DeviceArray`) are copied; the arrays after the
    run are in :attr:`Run.arrays`, by parameter name (``.tolist()`` or
    ``.copy_to_host()``). Scalars pass as they are.

    Parameters
    ----------
    kernel:
        a ``@cuda.jit`` kernel (the course's shim or Numba's), or the same function
        undecorated; its source must be readable (a file, a notebook cell, the page's
        editor).
    grid, block:
        blocks per grid and threads per block, ints or tuples of up to 3 ints; at most
        1,024 threads per block and :data:`~gpulesson.kernelcheck.runtime.MAX_THREADS` in
        all (``budget.max_threads``).
    names:
        the parameter names (default: read from the function).
    inputs:
        arrays the kernel must only read: a write to one is a finding.
    schedule:
        one of :data:`~gpulesson.kernelcheck.runtime.SCHEDULES`.
    budget:
        the time budget, shared by the runs of one check (default: a fresh one).
    count:
        record the warp-level traffic for :mod:`gpulesson.kernelcheck.counters`.
    """
    import inspect

    fn = python_function(kernel)
    grid3, block3 = launch_shape("grid", grid), launch_shape("block", block)
    budget = budget or Budget()
    per_block = math.prod(block3)
    if per_block > 1024:
        raise ValueError(f"block must have at most 1,024 threads, got {per_block:,} "
                         f"{block3}")
    threads = math.prod(grid3) * per_block
    if threads > budget.max_threads:
        raise ValueError(f"grid × block must be at most {budget.max_threads:,} threads for the "
                         f"checker, got {threads:.3g} (grid {grid3}, block {block3}): it runs "
                         "every thread in Python, so check a small size; the same kernel "
                         "runs any size on a GPU")
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    params = list(names) if names is not None else list(inspect.signature(fn).parameters)
    if len(params) != len(args):
        raise ValueError(f"{fn.__name__} takes {len(params)} arguments ({', '.join(params)}), "
                         f"got {len(args)}")
    done = _instrumented(fn)
    launch = Launch(grid3, block3, schedule, budget, count)
    launch.sites = dict(done.sites)
    launch._files = tuple(_files(done))
    launch.def_lines = _def_lines(done)
    read_only = set(inputs)
    values, address = [], 0
    for value, name in zip(args, params, strict=True):
        if isinstance(value, DeviceArray) or hasattr(value, "__array_interface__") or \
                isinstance(value, list):
            value = as_device(value, name=name)
            value.base = address
            value.read_only = name in read_only
            address += -(-value.size * value.itemsize // GLOBAL_ALIGNMENT) * GLOBAL_ALIGNMENT \
                or GLOBAL_ALIGNMENT
        elif hasattr(value, "item") and not isinstance(value, (int, float)):
            value = value.item()  # a numpy scalar
        values.append(value)
    spaces = _Namespaces(launch)
    kernel_fn = spaces.define(done, fn)
    budget.start()
    everything: list[_Thread] = []
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(min(limit, _depth() + 200))
    try:
        gx, gy, gz = grid3
        bx, by, bz = block3
        order = [(x, y, z) for z in range(gz) for y in range(gy) for x in range(gx)]
        if schedule == "reverse":
            order.reverse()
        for b in order:
            if budget.expired:
                break
            bidx = b[0] + gx * (b[1] + gy * b[2])
            threads_of = [_Thread(launch, b, (x, y, z), bidx) for z in range(bz)
                          for y in range(by) for x in range(bx)]
            if schedule == "reverse":
                threads_of.reverse()
            everything = threads_of
            try:
                _run_block(launch, kernel_fn, tuple(values), threads_of, done.generator)
            finally:
                _close(launch, threads_of)
    except _Expired:
        _close(launch, everything)
        if not any(kind == "timeout" for kind, _ in launch.found):
            launch.report("timeout", "budget", lambda: Finding(
                "timeout", f"the checker's budget of {budget.seconds:g} s was spent before "
                "the kernel finished: an endless loop?"))
    finally:
        sys.setrecursionlimit(limit)
        launch.current = None
    arrays = {name: v for name, v in zip(params, values, strict=True)
              if isinstance(v, DeviceArray)}
    writers = {name: {flat: (t.ident, launch.site(sid)) for flat, (t, sid) in
                      a.last_writer.items()} for name, a in arrays.items()}
    for a in arrays.values():  # the tables only served this run
        a.reads, a.writes, a.atomics, a.last_writer = {}, {}, {}, {}
    return Run(arrays=arrays, findings=launch.findings(), grid=grid3, block=block3,
               schedule=schedule, writers=writers, trace=launch if count else None)


def _depth() -> int:
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return depth
