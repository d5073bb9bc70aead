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

from gpulesson.collectives.model import DTYPES, AllReduceMeasurement

HEADER = (
    "#                                                              out-of-place"
    "                       in-place          \n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong"
    "     time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)       "
    "     (us)  (GB/s)  (GB/s)       "
)


def _time(us: float) -> str:
    """nccl-tests' time column: 2 decimals below 100 us, 1 below 10,000, none above."""
    if us >= 10000:
        return f"{us:7.0f}"
    if us >= 100:
        return f"{us:7.1f}"
    return f"{us:7.2f}"


def _pass(m: AllReduceMeasurement | None) -> str:
    if m is None:  # a pass that was not measured
        return f"  {'N/A':>7s}  {'N/A':>6s}  {'N/A':>6s}  {'N/A':>5s}"
    return (f"  {_time(m.time_seconds * 1e6)}  {m.algorithm_bandwidth / 1e9:6.2f}  "
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


_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\w+)\s+(\w+)\s+(-?\d+)((?:\s+\S+){8})\s*$")


def _number(text: str, kind: type) -> float | int | None:
    return None if text == "N/A" else kind(float(text))


def parse_nccl_tests(text: str) -> list[NcclTestsRow]:
    """The data rows of an nccl-tests log (``#`` lines, NCCL INFO lines and anything else
    skipped). Reads rows with a ``root`` column (nccl-tests 2.10 and later)."""
    rows = []
    for line in text.splitlines():
        m = _ROW.match(line)
        if not m:
            continue
        v = m.group(6).split()
        rows.append(NcclTestsRow(
            int(m.group(1)), int(m.group(2)), m.group(3), m.group(4), int(m.group(5)),
            _number(v[0], float), _number(v[1], float), _number(v[2], float),
            _number(v[3], int), _number(v[4], float), _number(v[5], float),
            _number(v[6], float), _number(v[7], int)))
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
