"""What the kernel checker found: one :class:`Finding` per problem, with the thread, the
array element and the line of the kernel, gathered in a :class:`Report`.

Plain data and text (standard library only): a report prints as a few sentences and shows
as HTML in a notebook.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

__all__ = ["KINDS", "PERFORMANCE_KINDS", "CaseResult", "Finding", "Report", "Site", "ThreadId"]

#: Kinds of finding, most serious first: a report names the first kind it holds.
KINDS = (
    "exception",           # the kernel raised (a Python error in its code)
    "out_of_bounds",       # an index outside its array
    "barrier_divergence",  # threads of a block at different barriers, or gone
    "race",                # two threads, one writing, on one element, unordered
    "uninitialized",       # a shared-memory element read before its block wrote it
    "input_written",       # the kernel changed an array that is only an input
    "order_dependent",     # two thread orders gave different results
    "missing_value",       # an output element no thread wrote
    "wrong_value",         # an output element that differs from the expected one
    "timeout",             # the run used its time budget (an endless loop, a long sleep)
    "unsupported",         # something the checker cannot follow (slices, dynamic memory)
    "uncoalesced",         # a warp's global accesses move far more sectors than they use
    "bank_conflict",       # a warp's shared-memory access takes several wavefronts
    "divergence",          # a branch splits most of the warps that reach it
)
#: The kinds about speed, not correctness: a task asks for the ones it grades.
PERFORMANCE_KINDS = ("uncoalesced", "bank_conflict", "divergence")


@dataclass(frozen=True)
class ThreadId:
    """A CUDA thread: its block and its thread index within the block, and the launch
    shape, for a readable name."""

    block: tuple[int, int, int]
    thread: tuple[int, int, int]
    grid_dim: tuple[int, int, int]
    block_dim: tuple[int, int, int]

    @property
    def global_index(self) -> tuple[int, int, int]:
        """``cuda.grid(3)`` of this thread."""
        return tuple(b * d + t for b, d, t in zip(self.block, self.block_dim, self.thread,
                                                 strict=True))

    def __str__(self) -> str:
        dims = 1 + (self.grid_dim[1] > 1 or self.block_dim[1] > 1) + (
            self.grid_dim[2] > 1 or self.block_dim[2] > 1)
        if dims == 1:
            return (f"thread {self.global_index[0]} (block {self.block[0]}, threadIdx.x "
                    f"{self.thread[0]})")
        n = 2 if dims == 2 else 3
        return (f"the thread at cuda.grid({n}) = {_tuple(self.global_index[:n])} (block "
                f"{_tuple(self.block[:n])}, threadIdx {_tuple(self.thread[:n])})")


def _tuple(values: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(v) for v in values) + ")"


@dataclass(frozen=True)
class Site:
    """A line of the kernel: its number within the kernel's source (1 = the ``def`` line)
    and its text."""

    function: str
    line: int
    text: str

    def __str__(self) -> str:
        code = self.text.split("  #", 1)[0].rstrip()  # the code, without a trailing comment
        shown = f": `{code}`" if code else ""
        return f"line {self.line} of {self.function}{shown}"


@dataclass(frozen=True)
class Finding:
    """One problem the checker found.

    Attributes
    ----------
    kind:
        one of :data:`KINDS`.
    message:
        one or two plain sentences, naming the thread, the element and the line.
    array, index:
        the array (kernel argument or shared array) and element concerned, if any.
    thread:
        the thread at fault (the second one, for a race), if any.
    site:
        the line of the kernel, if known.
    count:
        how many times the same problem occurred (threads or elements).
    """

    kind: str
    message: str
    array: str | None = None
    index: tuple[int, ...] | None = None
    thread: ThreadId | None = None
    site: Site | None = None
    count: int = 1

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")

    def __str__(self) -> str:
        more = (f" ({self.count - 1} more time{'s' if self.count > 2 else ''})"
                if self.count > 1 else "")
        return f"{self.message}{more}"


def show_index(index: Any) -> str:
    """An index as it stands between brackets: ``3`` or ``1, 2``."""
    if isinstance(index, tuple):
        return ", ".join(str(i) for i in index)
    return str(index)


def out_of_bounds(thread: ThreadId, verb: str, name: str, shape: tuple[int, ...],
                  idx: tuple[int, ...], axis: int, site: Site | None,
                  negative: str) -> Finding:
    """The finding for ``thread`` reading or writing (``verb``) ``name[idx]`` outside its
    ``shape`` at ``axis``: the elements a one-dimensional array has, or the bound of the
    axis; ``negative`` says where a negative index of a one-dimensional array goes."""
    i, n = idx[axis], shape[axis]
    if len(shape) == 1:
        where = f"{name} has {n} elements, 0 to {n - 1}" if i >= 0 else negative
    else:
        where = (f"{name} has shape {shape}, so index {axis} must be "
                 + (f"below {n}" if i >= 0 else "at least 0"))
    return Finding("out_of_bounds", f"{thread} {verb} {name}[{show_index(idx)}] but {where}"
                   + (f" ({site})" if site else ""), array=name, index=idx, thread=thread,
                   site=site)


@dataclass(frozen=True)
class CaseResult:
    """One launch of a check: the shape it ran, the schedule, and what it found."""

    label: str
    grid: tuple[int, ...]
    block: tuple[int, ...]
    findings: tuple[Finding, ...]
    schedule: str = "sequential"

    @property
    def ok(self) -> bool:
        return not self.findings


#: How :meth:`Report.tally` names one finding of each kind; several take an "s", except
#: those of :data:`_PLURALS`.
_LABELS = {"exception": "exception", "out_of_bounds": "out-of-bounds access",
           "barrier_divergence": "divergent barrier", "race": "race",
           "uninitialized": "read of uninitialized shared memory",
           "input_written": "write to an input", "order_dependent": "order-dependent result",
           "missing_value": "missing element", "wrong_value": "wrong element",
           "timeout": "timeout", "unsupported": "unsupported operation",
           "uncoalesced": "uncoalesced access", "bank_conflict": "bank conflict",
           "divergence": "divergent branch"}
_PLURALS = {"out_of_bounds": "out-of-bounds accesses", "uncoalesced": "uncoalesced accesses",
            "uninitialized": "reads of uninitialized shared memory",
            "input_written": "writes to inputs", "divergence": "divergent branches"}


def _rank(finding: Finding) -> int:
    return KINDS.index(finding.kind)


@dataclass(frozen=True)
class Report:
    """Everything one check found, over several shapes and thread orders.

    ``ok`` is true when no launch found anything. :attr:`findings` lists the problems most
    serious first; :attr:`first` is the one to fix first.
    """

    kernel: str
    task: str
    cases: tuple[CaseResult, ...]
    notes: tuple[str, ...] = field(default=())
    traffic: Any = None  # gpulesson.kernelcheck.counters.Traffic of the first launch
    predicted_bytes: int | None = None

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Every finding of every case, most serious first, each problem once."""
        seen: dict[tuple, Finding] = {}
        for case in self.cases:
            for finding in case.findings:
                key = (finding.kind, finding.array, finding.site)
                seen.setdefault(key, finding)
        return tuple(sorted(seen.values(), key=_rank))

    @property
    def ok(self) -> bool:
        return all(case.ok for case in self.cases)

    @property
    def kinds(self) -> tuple[str, ...]:
        """The kinds found, most serious first."""
        return tuple(dict.fromkeys(f.kind for f in self.findings))

    def has(self, kind: str) -> bool:
        """Whether any case found a problem of ``kind``."""
        return kind in self.kinds

    @property
    def first(self) -> Finding | None:
        """The most serious finding, or ``None``."""
        found = self.findings
        return found[0] if found else None

    @property
    def first_case(self) -> CaseResult | None:
        """The first case that found something."""
        return next((case for case in self.cases if not case.ok), None)

    def summary(self) -> str:
        """One sentence, ended: passed on which shapes, or the first problem. (The task's
        title is a formula or a phrase of its own, "the softmax of every row": it goes in
        brackets, never after "the".)"""
        shapes = "; ".join(dict.fromkeys(case.label for case in self.cases))
        if self.ok:
            return f"{self.kernel} passed every check ({self.task}) on {shapes}."
        first = self.first
        case = next((c for c in self.cases if first in c.findings), self.first_case)
        text = f"{self.kernel} failed on {case.label}: {first}".rstrip()
        return text if text.endswith((".", "!", "?")) else text + "."

    def tally(self) -> str:
        """One line counting the problems by kind: ``2 races (1 across loop iterations), 1
        out-of-bounds access``."""
        counts: dict[str, int] = {}
        across = 0
        for finding in self.findings:
            counts[finding.kind] = counts.get(finding.kind, 0) + 1
            across += finding.kind == "race" and "across iterations" in finding.message
        parts = []
        for kind, n in counts.items():
            one = _LABELS[kind]
            text = f"{n} {_PLURALS.get(kind, one + 's') if n > 1 else one}"
            if kind == "race" and across:
                text += f" ({across} across loop iterations)"
            parts.append(text)
        return "Found: " + ", ".join(parts) + "." if parts else "Found nothing."

    def lines(self, limit: int = 4) -> list[str]:
        """The summary and the tally, then up to ``limit`` findings, one per line."""
        out = [self.summary()]
        if not self.ok:
            out.append(self.tally())
        for finding in self.findings[1:limit]:
            out.append(f"- {finding}")
        out.extend(self.notes)
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.ok else "#b3261e"
        items = "".join(f"<li>{html.escape(str(f))}</li>" for f in self.findings[:8])
        notes = "".join(f"<p>{html.escape(note)}</p>" for note in self.notes)
        listing = f"<ul>{items}</ul>" if items and not self.ok else ""
        return (f'<div class="gl-kernel-report" role="status"><p style="color: {colour}">'
                f"<strong>{'Passed' if self.ok else 'Problem found'}:</strong> "
                f"{html.escape(self.summary())}</p>{listing}{notes}</div>")
