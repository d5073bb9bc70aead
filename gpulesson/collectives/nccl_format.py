"""nccl-tests' text format: write measurements as its rows, and read its rows back.

nccl-tests (``all_reduce_perf``) prints one row per size: ``size count type redop root``,
then ``time algbw busbw #wrong`` for the out-of-place and then the in-place all-reduce,
time in microseconds and bandwidths in GB/s (10^9 bytes/s), after a three-line ``#``
header, and closes with ``# Out of bounds values`` and ``# Avg bus bandwidth``. The
course's benchmarks (MPI and torch.distributed) print the same text, so a parser written
for nccl-tests logs reads them, and :func:`parse_nccl_tests` reads both.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from gpulesson import units
from gpulesson.collectives.model import DTYPES, AllReduceMeasurement

HEADER = (
    "#                                                              out-of-place"
    "                       in-place          \n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong"
    "     time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)       "
    "     (us)  (GB/s)  (GB/s)       "
)


#: nccl-tests' time column (us): 2 decimals below 100 us, 1 below 10,000, none above.
_TIME_STEPS = ((10000, "7.0f"), (100, "7.1f"), (0, "7.2f"))


def _pass(m: AllReduceMeasurement | None) -> str:
    if m is None:  # a pass that was not measured
        return f"  {'N/A':>7s}  {'N/A':>6s}  {'N/A':>6s}  {'N/A':>5s}"
    time = units.format_by_size(m.time_seconds * 1e6, _TIME_STEPS)
    return (f"  {time}  {m.algorithm_bandwidth / 1e9:6.2f}  "
            f"{m.bus_bandwidth / 1e9:6.2f}  {m.wrong:5d}")


def nccl_tests_rows(measurements: Sequence[AllReduceMeasurement], *,
                    header: bool = True, footer: bool = True) -> str:
    """nccl-tests rows for ``measurements``: per size the out-of-place and the in-place
    measurement (``N/A`` where one was not measured), with nccl-tests' header and footer.
    The average bus bandwidth is over every measured pass, as nccl-tests averages."""
    by_size: dict[int, dict[bool, AllReduceMeasurement]] = {}
    for m in measurements:
        by_size.setdefault(m.size_bytes, {})[m.in_place] = m
    lines = [HEADER] if header else []
    for size, passes in by_size.items():
        first = next(iter(passes.values()))
        lines.append(f"{size:12d}  {first.count:12d}  {DTYPES[first.dtype]:>8s}  "
                     f"{'sum':>6s}  {-1:6d}{_pass(passes.get(False))}{_pass(passes.get(True))}")
    if footer:
        wrong = sum(m.wrong for m in measurements)
        avg = sum(m.bus_bandwidth for m in measurements) / max(1, len(measurements)) / 1e9
        lines.append(f"# Out of bounds values : {wrong} {'OK' if wrong == 0 else 'FAILED'}")
        lines.append(f"# Avg bus bandwidth    : {avg:g} ")
    return "\n".join(lines)


@dataclass(frozen=True)
class NcclTestsRow:
    """One data row of nccl-tests output (times in us, bandwidths in GB/s; ``None``
    where a pass printed ``N/A``)."""

    size_bytes: int
    count: int
    type: str
    redop: str
    root: int
    out_of_place_us: float | None
    out_of_place_algbw: float | None
    out_of_place_busbw: float | None
    out_of_place_wrong: int | None
    in_place_us: float | None
    in_place_algbw: float | None
    in_place_busbw: float | None
    in_place_wrong: int | None


#: A value column: a number (time, bandwidth, #wrong, or an error like ``2e-07``) or N/A.
_VALUE = r"(?:N/A|-?\d{1,15}(?:\.\d{1,9})?(?:e[+-]?\d{1,3})?)"
#: One row, matched line by line with bounded repeats (linear in the line).
_ROW = re.compile(r"[ \t]{0,40}(\d{1,20})[ \t]+(\d{1,20})[ \t]+(\w{1,12})[ \t]+(\w{1,8})"
                  r"[ \t]+(-?\d{1,6})((?:[ \t]+" + _VALUE + r"){8})[ \t]*$")
#: Something that starts like a row (two numbers and a type, or a number too long for a
#: size), to refuse when it is not one.
_ROW_START = re.compile(r"[ \t]{0,40}\d{1,20}(?:\d|[ \t]+\d{1,20}(?:\d|[ \t]+[a-z]))")
#: nccl-tests' column header, required above the rows.
_COLUMNS = re.compile(r"#.{0,200}\bsize\b.{0,200}\bcount\b.{0,200}\bbusbw\b")
#: Longest text read.
MAX_TEXT_CHARS = 20_000_000


def _number(text: str, kind: type) -> float | int | None:
    return None if text == "N/A" else kind(float(text))


def parse_nccl_tests(text: str) -> list[NcclTestsRow]:
    """The data rows of an nccl-tests log, below its column header (``#`` lines, NCCL INFO
    lines and anything else skipped). Reads rows with a ``root`` column (nccl-tests 2.10 and
    later). ``ValueError`` without the column header, or for a line that starts like a row
    but is not one (naming the line). Linear in the text."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if len(text) > MAX_TEXT_CHARS:
        raise ValueError(f"text must be at most {MAX_TEXT_CHARS:,} characters, got "
                         f"{len(text):,}")
    rows: list[NcclTestsRow] = []
    header = False
    for number, line in enumerate(text.splitlines(), 1):
        if not header:
            header = bool(_COLUMNS.match(line.lstrip()))
            continue
        m = _ROW.match(line)
        if not m:
            if _ROW_START.match(line):
                raise ValueError(f"text: line {number} starts like an nccl-tests row but is "
                                 f"not one (size count type redop root, then 8 values): "
                                 f"{line[:80]!r}")
            continue
        v = m.group(6).split()
        rows.append(NcclTestsRow(
            int(m.group(1)), int(m.group(2)), m.group(3), m.group(4), int(m.group(5)),
            _number(v[0], float), _number(v[1], float), _number(v[2], float),
            _number(v[3], int), _number(v[4], float), _number(v[5], float),
            _number(v[6], float), _number(v[7], int)))
    if not header:
        raise ValueError("text: not an nccl-tests output (no '#  size  count  type ... busbw' "
                         "column header found)")
    return rows


def format_table(measurements: Sequence[AllReduceMeasurement]) -> str:
    """A compact nccl-tests style table, one line per measurement: size, count, type,
    redop, time (us), algbw and busbw (GB/s), #wrong, and the algorithm that ran."""
    lines = [
        f"{'size':>12} {'count':>12} {'type':>7} {'redop':>6} {'time':>10} "
        f"{'algbw':>7} {'busbw':>7} {'#wrong':>6}  algorithm",
        f"{'(B)':>12} {'(elements)':>12} {'':>7} {'':>6} {'(us)':>10} "
        f"{'(GB/s)':>7} {'(GB/s)':>7} {'':>6}",
    ]
    for m in measurements:
        lines.append(
            f"{m.size_bytes:>12d} {m.count:>12d} {DTYPES[m.dtype]:>7} {'sum':>6} "
            f"{m.time_seconds * 1e6:>10.1f} {m.algorithm_bandwidth / 1e9:>7.2f} "
            f"{m.bus_bandwidth / 1e9:>7.2f} {m.wrong:>6d}  {m.algorithm_ran}")
    return "\n".join(lines)
