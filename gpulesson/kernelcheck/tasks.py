"""What a kernel must compute, on which shapes, launched how: the checker's tasks, and
:func:`check_kernel`.

A :class:`KernelTask` names the kernel's parameters, which of them are inputs and outputs,
the shapes to try (always one that is a multiple of the block and one with a *ragged* edge,
where the last block hangs over the end of the data), how the kernel is launched for each
shape, the expected result, the performance counts it grades (coalescing, bank conflicts,
divergence) and the global traffic a good kernel moves. :func:`check_kernel` runs a kernel
on every shape, in two thread orders, within one time budget, and gathers what the runtime
found, plus wrong or missing output elements, into a
:class:`~gpulesson.kernelcheck.findings.Report`. The catalogue of tasks is
:mod:`gpulesson.kernelcheck.catalogue`.

Inputs are mostly small integers stored as float32, so sums and products are exact
whatever the order of the additions. Standard library only.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from gpulesson.kernelcheck import catalogue, counters
from gpulesson.kernelcheck.catalogue import TASKS, task
from gpulesson.kernelcheck.findings import CaseResult, Finding, Report
from gpulesson.kernelcheck.runtime import Budget, python_function
from gpulesson.kernelcheck.scheduler import Run, run_kernel
from gpulesson.kernelcheck.taskspec import KernelTask, blocks, floats, ints, nan

__all__ = ["TASKS", "KernelTask", "blocks", "check_kernel", "floats", "ints", "nan", "task"]

#: Findings after which the outputs are not compared: they would only repeat the problem.
_STOPPERS = ("exception", "out_of_bounds", "timeout", "unsupported")


def _isclose(got: float, want: float, rtol: float, atol: float) -> bool:
    if got != got or want != want:
        return got != got and want != want
    return abs(got - want) <= atol + rtol * abs(want)


def _num(value: Any) -> str:
    value = float(value)
    return "NaN" if value != value else f"{value:g}"


def _unflat(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    idx = []
    for n in reversed(shape):
        idx.append(flat % n)
        flat //= n
    return tuple(reversed(idx))


def _compare(t: KernelTask, run: Run, expected: Mapping[str, list[float]]) -> list[Finding]:
    found = []
    for name in t.outputs:
        got_array = run.arrays[name]
        got, want = got_array.data, expected[name]
        bad = [i for i, (g, w) in enumerate(zip(got, want, strict=True))
               if not _isclose(g, w, t.rtol, t.atol)]
        if not bad:
            continue
        flat = bad[0]
        idx = _unflat(flat, got_array.shape)
        shown = ", ".join(str(i) for i in idx)
        total = len(want)
        share = f"{len(bad)} of {total} elements differ" if total > 1 else "it differs"
        writer = run.writer(name, flat)
        if writer is None and t.fills_outputs:
            unwritten = sum(1 for i in range(total) if run.writer(name, i) is None)
            if unwritten == total:
                found.append(Finding(
                    "missing_value", f"no thread wrote any element of {name}: the kernel must "
                    f"store its results in {name}", array=name))
                continue
            found.append(Finding(
                "missing_value", f"no thread wrote {name}[{shown}] ({unwritten} of {total} "
                f"elements were never written): the grid covers them, so a condition in the "
                "kernel skips them, or the indexes mix up rows and columns",
                array=name, index=idx))
            continue
        who = (f": {writer[0]} wrote it last" + (f" ({writer[1]})" if writer[1] else "")
               if writer else "")
        found.append(Finding(
            "wrong_value", f"{name}[{shown}] is {_num(got[flat])}, expected {_num(want[flat])} "
            f"({share}){who}", array=name, index=idx,
            thread=writer[0] if writer else None, site=writer[1] if writer else None))
    return found


def _order(t: KernelTask, one: Run, other: Run) -> list[Finding]:
    for name in t.outputs:
        a, b = one.arrays[name], other.arrays[name]
        for flat, (x, y) in enumerate(zip(a.data, b.data, strict=True)):
            if x != y and not (x != x and y != y):
                idx = ", ".join(str(i) for i in _unflat(flat, a.shape))
                return [Finding(
                    "order_dependent", f"{name}[{idx}] is {_num(x)} when the threads run in "
                    f"{one.schedule} order and {_num(y)} in {other.schedule} order: the result "
                    "depends on which thread runs first, a race", array=name,
                    index=_unflat(flat, a.shape))]
    return []


def check_kernel(kernel: Any, kernel_task: KernelTask | str, *,
                 schedules: tuple[str, ...] = ("sequential", "reverse"), seed: int = 0,
                 budget: Budget | None = None) -> Report:
    """Run ``kernel`` on every shape of the task, in each thread order of ``schedules``, and
    report what went wrong (nothing, for a correct kernel).

    Each shape runs in the first order; if that found nothing, it runs again in the next
    order and the two results are compared (a difference means the result depends on the
    order the threads run in: a race). The first launch also counts the warps' memory
    traffic, bank conflicts and divergent branches (:mod:`gpulesson.kernelcheck.counters`):
    the kinds the task grades are findings, the others notes. All launches share one time
    budget (``budget``, default :class:`~gpulesson.kernelcheck.runtime.Budget`): a kernel
    that runs past it gets a ``timeout`` finding and the check ends.
    """
    t = task(kernel_task) if isinstance(kernel_task, str) else kernel_task
    fn = python_function(kernel)
    budget = budget or Budget()
    cases: list[CaseResult] = []
    notes: list[str] = []
    traffic = None
    for number, (label, sizes) in enumerate(t.shapes):
        args = t.arguments(sizes, random.Random(f"{seed}:{number}"))
        grid, block = t.launch(sizes)
        expected = t.expected(args)
        first: Run | None = None
        for schedule in schedules:
            counting = traffic is None and number == 0
            run = run_kernel(fn, grid, block, *(args[n] for n in t.signature),
                             names=t.signature, inputs=t.inputs, schedule=schedule,
                             budget=budget, count=counting)
            findings = list(run.findings)
            if not any(f.kind in _STOPPERS for f in findings):
                findings += _compare(t, run, expected)
            if counting and run.trace is not None:
                traffic = counters.count(run.trace, registers=t.registers)
                for finding in counters.performance_findings(traffic):
                    if finding.kind in t.performance:
                        findings.append(finding)
                    else:
                        notes.append(f"Note (speed, not graded here): {finding}")
            if first is not None and not findings:
                findings += _order(t, first, run)
            cases.append(CaseResult(label, run.grid, run.block, tuple(findings), schedule))
            if findings or budget.expired:
                break
            first = run
        if budget.expired:
            break
    predicted = t.predicted_bytes(t.shapes[0][1]) if t.predicted_bytes else None
    return Report(kernel=fn.__name__, task=t.title, cases=tuple(cases), notes=tuple(notes),
                  traffic=traffic, predicted_bytes=predicted)



def __getattr__(name: str) -> Any:
    """The catalogue's constants (``TILE``, ``SUM_BLOCK``, ...), where they used to be."""
    if name in catalogue.__all__:
        return getattr(catalogue, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
