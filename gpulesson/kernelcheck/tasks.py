"""What a kernel must compute, on which shapes, launched how: the checker's tasks.

A :class:`KernelTask` names the kernel's parameters, which of them are inputs and outputs,
the shapes to try (always one that is a multiple of the block and one with a *ragged* edge,
where the last block hangs over the end of the data), how the kernel is launched for each
shape, and the expected result (computed with numpy). :func:`check_kernel` runs a kernel
on every shape, in two thread orders, and gathers what the simulator found, plus wrong or
missing output elements, into a :class:`~gpulesson.kernelcheck.findings.Report`.

Inputs are small integers stored as float32, so sums and products are exact whatever the
order of the additions: a correct kernel gives exactly the expected numbers in any thread
order, and any difference is a finding.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from gpulesson.kernelcheck.findings import CaseResult, Finding, Report
from gpulesson.kernelcheck.simulator import Run, python_function, run_kernel

__all__ = ["TASKS", "KernelTask", "check_kernel", "task"]

#: Findings after which the outputs are not compared: they would only repeat the problem.
_STOPPERS = ("exception", "out_of_bounds", "timeout", "unsupported")


@dataclass(frozen=True)
class KernelTask:
    """A kernel to write: its parameters, shapes, launch and expected result.

    Attributes
    ----------
    name:
        the function name the learner defines, e.g. ``"vector_add"``.
    title:
        what it computes, in a few words.
    signature:
        parameter names, in order.
    inputs, outputs:
        the array parameters only read, and those compared with the expected result.
    shapes:
        ``(label, sizes)`` pairs: the label names the shape for a reader ("n = 100, the
        last block ragged"), ``sizes`` is passed to ``arguments`` and ``launch``.
    arguments:
        ``arguments(sizes, rng) -> {name: array or scalar}``, the kernel's arguments.
    launch:
        ``launch(sizes) -> (grid, block)``.
    expected:
        ``expected(arguments) -> {output name: array}``.
    fills_outputs:
        every element of the outputs must be written (``False`` for an accumulator such as
        a sum's ``out[0]``, which starts at 0).
    launch_text:
        how the kernel is launched, for a reader.
    """

    name: str
    title: str
    signature: tuple[str, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    shapes: tuple[tuple[str, Mapping[str, int]], ...]
    arguments: Callable[[Mapping[str, int], Any], dict[str, Any]]
    launch: Callable[[Mapping[str, int]], tuple[Any, Any]]
    expected: Callable[[Mapping[str, Any]], dict[str, Any]]
    fills_outputs: bool = True
    launch_text: str = ""


def _blocks(n: int, per_block: int) -> int:
    return -(-n // per_block)


def _ints(rng: Any, shape: Any) -> Any:
    """Small integers as float32: exact in any order of addition."""
    return rng.integers(-8, 9, size=shape).astype("float32")


def _nan(np: Any, shape: Any) -> Any:
    return np.full(shape, np.nan, dtype="float32")


def _np() -> Any:
    import numpy

    return numpy


VECTOR_BLOCK = 32
MAP_BLOCK = (8, 8)
TILE = 8
SUM_BLOCK = 64

_VECTOR_ADD = KernelTask(
    name="vector_add", title="out = a + b, element by element",
    signature=("a", "b", "out"), inputs=("a", "b"), outputs=("out",),
    shapes=(("n = 64 (2 full blocks)", {"n": 64}),
            ("n = 100 (4 blocks, the last one ragged)", {"n": 100})),
    arguments=lambda s, rng: {"a": _ints(rng, s["n"]), "b": _ints(rng, s["n"]),
                              "out": _nan(_np(), s["n"])},
    launch=lambda s: (_blocks(s["n"], VECTOR_BLOCK), VECTOR_BLOCK),
    expected=lambda a: {"out": a["a"] + a["b"]},
    launch_text=f"{VECTOR_BLOCK} threads per block, ⌈n / {VECTOR_BLOCK}⌉ blocks",
)

_ADD_BIAS = KernelTask(
    name="add_bias", title="out[row, col] = x[row, col] + bias[col]",
    signature=("x", "bias", "out"), inputs=("x", "bias"), outputs=("out",),
    shapes=(("16 × 16 (2 × 2 full blocks)", {"rows": 16, "cols": 16}),
            ("13 rows × 21 columns (ragged in both directions)", {"rows": 13, "cols": 21})),
    arguments=lambda s, rng: {"x": _ints(rng, (s["rows"], s["cols"])),
                              "bias": _ints(rng, s["cols"]),
                              "out": _nan(_np(), (s["rows"], s["cols"]))},
    launch=lambda s: ((_blocks(s["cols"], MAP_BLOCK[0]), _blocks(s["rows"], MAP_BLOCK[1])),
                      MAP_BLOCK),
    expected=lambda a: {"out": a["x"] + a["bias"][None, :]},
    launch_text=(f"blocks of {MAP_BLOCK[0]} × {MAP_BLOCK[1]} threads; x (threadIdx.x, and "
                 "the first value of cuda.grid(2)) runs along the columns, y along the rows"),
)

_MATMUL = KernelTask(
    name="matmul_tiled", title=f"C = A @ B with {TILE} × {TILE} tiles in shared memory",
    signature=("A", "B", "C"), inputs=("A", "B"), outputs=("C",),
    shapes=(("M = K = N = 16 (whole tiles)", {"m": 16, "k": 16, "n": 16}),
            ("M = 13, K = 20, N = 11 (ragged tiles)", {"m": 13, "k": 20, "n": 11})),
    arguments=lambda s, rng: {"A": _ints(rng, (s["m"], s["k"])),
                              "B": _ints(rng, (s["k"], s["n"])),
                              "C": _nan(_np(), (s["m"], s["n"]))},
    launch=lambda s: ((_blocks(s["n"], TILE), _blocks(s["m"], TILE)), (TILE, TILE)),
    expected=lambda a: {"C": a["A"] @ a["B"]},
    launch_text=(f"TILE = {TILE}: blocks of {TILE} × {TILE} threads, one per element of a "
                 "tile of C; x runs along the columns of C, y along its rows"),
)

_SUM = KernelTask(
    name="sum_kernel", title="out[0] = the sum of x",
    signature=("x", "out"), inputs=("x",), outputs=("out",),
    shapes=(("n = 128 (2 full blocks)", {"n": 128}),
            ("n = 200 (4 blocks, the last one ragged)", {"n": 200})),
    arguments=lambda s, rng: {"x": _ints(rng, s["n"]),
                              "out": _np().zeros(1, dtype="float32")},
    launch=lambda s: (_blocks(s["n"], SUM_BLOCK), SUM_BLOCK),
    expected=lambda a: {"out": a["x"].sum(keepdims=True)},
    fills_outputs=False,
    launch_text=(f"{SUM_BLOCK} threads per block, ⌈n / {SUM_BLOCK}⌉ blocks; out holds one "
                 "zero when the kernel starts"),
)

#: The checker's tasks, by the kernel's name.
TASKS: Mapping[str, KernelTask] = MappingProxyType(
    {t.name: t for t in (_VECTOR_ADD, _ADD_BIAS, _MATMUL, _SUM)})


def task(name: str) -> KernelTask:
    """The task ``name``; ``KeyError`` listing the known ones."""
    try:
        return TASKS[name]
    except KeyError:
        raise KeyError(f"no kernel task {name!r}; the tasks are: {', '.join(TASKS)}") from None


def _compare(t: KernelTask, run: Run, expected: Mapping[str, Any], np: Any) -> list[Finding]:
    found = []
    for name in t.outputs:
        got, want = run.arrays[name], expected[name]
        bad = ~np.isclose(got, want, rtol=1e-5, atol=1e-6)
        if not bad.any():
            continue
        flat = int(np.flatnonzero(bad)[0])
        idx = np.unravel_index(flat, want.shape)
        shown = ", ".join(str(int(i)) for i in idx)
        wrong, total = int(bad.sum()), want.size
        share = f"{wrong} of {total} elements differ" if total > 1 else "it differs"
        writer = run.writer(name, flat)
        if writer is None and t.fills_outputs:
            unwritten = sum(1 for i in range(total) if run.writer(name, i) is None)
            if unwritten == total:  # no element at all: index None
                found.append(Finding(
                    "missing_value", f"no thread wrote any element of {name}: the kernel must "
                    f"store its results in {name}", array=name))
                continue
            found.append(Finding(
                "missing_value", f"no thread wrote {name}[{shown}] ({unwritten} of {total} "
                f"elements were never written): the grid covers them, so a condition in the "
                "kernel skips them, or the indexes mix up rows and columns",
                array=name, index=tuple(int(i) for i in idx)))
            continue
        who = (f": {writer[0]} wrote it last" + (f" ({writer[1]})" if writer[1] else "")
               if writer else "")
        found.append(Finding(
            "wrong_value", f"{name}[{shown}] is {_num(got[idx])}, expected {_num(want[idx])} "
            f"({share}){who}", array=name, index=tuple(int(i) for i in idx),
            thread=writer[0] if writer else None, site=writer[1] if writer else None))
    return found


def _num(value: Any) -> str:
    value = float(value)
    return "NaN" if value != value else f"{value:g}"


def check_kernel(kernel: Any, kernel_task: KernelTask | str, *,
                 schedules: tuple[str, ...] = ("sequential", "reverse"),
                 seed: int = 0) -> Report:
    """Run ``kernel`` on every shape of the task, in each thread order of ``schedules``, and
    report what went wrong (nothing, for a correct kernel).

    Each shape runs in the first order; if that found nothing, it runs again in the next
    order and the two results are compared (a difference means the result depends on the
    order the threads run in: a race). Outputs are compared with the expected result unless
    the kernel crashed or went out of bounds.
    """
    import numpy as np

    t = task(kernel_task) if isinstance(kernel_task, str) else kernel_task
    fn = python_function(kernel)
    cases = []
    for number, (label, sizes) in enumerate(t.shapes):
        args = t.arguments(sizes, np.random.default_rng([seed, number]))
        grid, block = t.launch(sizes)
        expected = t.expected(args)
        first: Run | None = None
        for schedule in schedules:
            run = run_kernel(fn, grid, block, *(args[n] for n in t.signature),
                             names=t.signature, inputs=t.inputs, schedule=schedule)
            findings = list(run.findings)
            if not any(f.kind in _STOPPERS for f in findings):
                findings += _compare(t, run, expected, np)
            if first is not None and not findings:
                findings += _order(t, first, run, np)
            cases.append(CaseResult(label, run.grid, run.block, tuple(findings), schedule))
            if findings:
                break
            first = run
    return Report(kernel=fn.__name__, task=t.title, cases=tuple(cases))


def _order(t: KernelTask, one: Run, other: Run, np: Any) -> list[Finding]:
    for name in t.outputs:
        a, b = one.arrays[name], other.arrays[name]
        differ = ~((a == b) | (np.isnan(a) & np.isnan(b)))
        if differ.any():
            flat = int(np.flatnonzero(differ)[0])
            idx = np.unravel_index(flat, a.shape)
            shown = ", ".join(str(int(i)) for i in idx)
            return [Finding(
                "order_dependent", f"{name}[{shown}] is {_num(a[idx])} when the threads run "
                f"in {one.schedule} order and {_num(b[idx])} in {other.schedule} order: the "
                "result depends on which thread runs first, a race", array=name,
                index=tuple(int(i) for i in idx))]
    return []
