"""What the hardware would count for a kernel run by the runtime, warp by warp.

A warp executes each load or store for its 32 lanes at once: one *request*. For global
memory the request moves whole 32-byte sectors, so its cost is the number of distinct
sectors the lanes touch (:func:`gpulesson.execution.coalescing` is the same rule for one
stride). For shared memory the request is served by 32 banks of 4-byte words; lanes that
hit different words of one bank are served one after another: the request takes as many
*wavefronts* as the busiest bank has distinct words (a bank conflict when more than one).
A load whose lanes share addresses (a *broadcast*: in a naive matrix product the lanes of
one row of threads all read ``A[row, k]``) is served once per distinct address; when every
address of a request is read by several lanes, the sectors it moves are those of its few
distinct elements, and no change of which thread reads which element makes them
consecutive, so such a site is not reported as uncoalesced. A branch whose lanes disagree
makes the warp run both sides (divergence); it is reported when it splits most of the
warps reaching it and both sides cost work (an ``if`` with an ``else``, or any branch
inside a loop). The occupancy the block size, shared memory and registers allow comes from
:func:`gpulesson.execution.occupancy`.

The runtime records, for the first launch of a check, each access with its warp and the
number of times that thread had reached the same place in the kernel; the lanes' n-th
accesses at one place form the warp's n-th request there (:func:`count`). Each
:class:`SiteTraffic` names the line; :func:`performance_findings` turns the bad ones into
findings with the fix. Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpulesson import execution
from gpulesson.kernelcheck.findings import Finding, Site

__all__ = ["SECTOR_BYTES", "SiteTraffic", "Traffic", "count", "performance_findings"]

#: Bytes per global-memory sector.
SECTOR_BYTES = 32
#: Shared-memory banks and the width of each, in bytes.
BANKS, BANK_BYTES = 32, 4
#: A global site is uncoalesced when its warps move this many times the sectors they need.
UNCOALESCED_RATIO = 1.5
#: A shared site has bank conflicts when its requests average this many wavefronts.
CONFLICT_RATIO = 1.5
#: A branch is divergent when more than this share of the warps reaching it split.
DIVERGENT_SHARE = 0.5


@dataclass(frozen=True)
class SiteTraffic:
    """The requests of one place in the kernel (a load, a store or an update).

    ``cost`` is sectors (global) or wavefronts (shared); ``ideal`` the least the same
    useful data could take (1 wavefront a request; the sectors the useful bytes fill);
    ``useful_bytes`` the distinct bytes the lanes asked for; ``lane_stride`` the usual gap,
    in elements, between neighbouring lanes; ``broadcasts`` the requests in which every
    distinct address was read by at least two lanes."""

    site: Site | None
    space: str
    array: str
    requests: int
    cost: int
    ideal: int
    useful_bytes: int
    lane_stride: int | None
    columns: int
    broadcasts: int = 0

    @property
    def broadcast(self) -> bool:
        """Whether most of the site's requests are broadcasts (several lanes per address)."""
        return self.broadcasts * 2 > self.requests

    @property
    def ratio(self) -> float:
        return self.cost / self.ideal if self.ideal else 1.0


@dataclass(frozen=True)
class Traffic:
    """The counts of one launch."""

    sites: tuple[SiteTraffic, ...]
    branches: tuple[tuple[Site | None, int, int, bool], ...]  # (site, warps split, warps
    #                                        reaching, whether a split costs both sides' work)
    threads_per_block: int
    shared_bytes: int
    occupancy: Any = None  # gpulesson.execution.Occupancy, or None

    def _global(self) -> list[SiteTraffic]:
        return [s for s in self.sites if s.space == "global"]

    @property
    def global_requests(self) -> int:
        return sum(s.requests for s in self._global())

    @property
    def global_sectors(self) -> int:
        return sum(s.cost for s in self._global())

    @property
    def global_bytes(self) -> int:
        """Bytes moved between the SMs and memory (sectors × 32)."""
        return self.global_sectors * SECTOR_BYTES

    @property
    def useful_bytes(self) -> int:
        return sum(s.useful_bytes for s in self._global())

    @property
    def efficiency(self) -> float:
        """Useful bytes over bytes moved, for global memory (1.0 when nothing moved)."""
        return self.useful_bytes / self.global_bytes if self.global_bytes else 1.0

    @property
    def shared_requests(self) -> int:
        return sum(s.requests for s in self.sites if s.space == "shared")

    @property
    def shared_wavefronts(self) -> int:
        return sum(s.cost for s in self.sites if s.space == "shared")

    @property
    def divergent_warps(self) -> int:
        return sum(split for _, split, _, _ in self.branches)

    def summary(self) -> str:
        """One line: global traffic, shared wavefronts, divergence, occupancy."""
        if not self.global_requests:  # not "0 sectors (0 bytes, 100% of them used)"
            parts = ["0 global requests (no global memory touched)"]
        else:
            parts = [f"{self.global_requests:,} global requests moved {self.global_sectors:,} "
                     f"sectors ({self.global_bytes:,} bytes, {self.efficiency:.0%} of them "
                     "used)"]
        if self.shared_requests:
            parts.append(f"{self.shared_requests:,} shared-memory requests took "
                         f"{self.shared_wavefronts:,} wavefronts")
        parts.append(f"{self.divergent_warps:,} divergent warp branches")
        if self.occupancy is not None:
            parts.append(f"occupancy {self.occupancy.occupancy:.0%} on an H100 at "
                         f"{self.threads_per_block} threads per block, "
                         f"{self.shared_bytes:,} bytes of shared memory")
        return "; ".join(parts) + "."


def _site(info: Any) -> Site | None:
    return Site(info.function, info.relative_line, info.text) if info else None


def count(trace: Any, *, registers: int = 32, gpu: str = "H100 SXM") -> Traffic:
    """The counts of a launch run with ``count=True`` (its :attr:`Run.trace`)."""
    per_site: dict[int, list] = {}
    for (_, _, sid, _), addresses in trace.mem.items():
        space, itemsize, name, cols = trace.mem_sites[sid]
        slot = per_site.setdefault(sid, [0, 0, 0, 0, None, space, itemsize, name, cols, 0])
        weight = 2 if trace.sites[sid].kind == "update" else 1
        distinct = sorted(set(addresses))
        useful = len(distinct) * itemsize
        if space == "global":
            cost = len({a // SECTOR_BYTES for a in distinct})
            ideal = -(-useful // SECTOR_BYTES)
        else:
            banks: dict[int, set[int]] = {}
            for a in distinct:
                for word in range(a // BANK_BYTES, -(-(a + itemsize) // BANK_BYTES)):
                    banks.setdefault(word % BANKS, set()).add(word)
            cost = max(len(words) for words in banks.values())
            ideal = -(-useful // (BANKS * BANK_BYTES))
        slot[0] += weight
        slot[1] += cost * weight
        slot[2] += ideal * weight
        slot[3] += useful * weight
        lanes_per_address: dict[int, int] = {}
        for a in addresses:
            lanes_per_address[a] = lanes_per_address.get(a, 0) + 1
        if len(addresses) > 1 and min(lanes_per_address.values()) >= 2:
            slot[9] += weight
        if slot[4] is None and len(addresses) > 1:
            slot[4] = (addresses[1] - addresses[0]) // itemsize
    sites = tuple(SiteTraffic(_site(trace.sites.get(sid)), space, name, requests, cost,
                              ideal, useful, stride, cols, broadcasts)
                  for sid, (requests, cost, ideal, useful, stride, space, _, name, cols,
                            broadcasts)
                  in sorted(per_site.items()))
    split: dict[int, list[int]] = {}
    for (_, _, sid, _), (taken, not_taken) in trace.branches.items():
        slot = split.setdefault(sid, [0, 0])
        slot[1] += 1
        if taken and not_taken:
            slot[0] += 1
    branches = tuple((_site(trace.sites.get(sid)), n_split, n, _costly(trace.sites.get(sid)))
                     for sid, (n_split, n) in sorted(split.items()))
    threads = trace.block_dim[0] * trace.block_dim[1] * trace.block_dim[2]
    limits = execution.gpu_execution(gpu).limits
    occupancy = execution.occupancy(threads, registers_per_thread=registers,
                                    shared_memory_per_block=trace.shared_bytes, arch=limits)
    return Traffic(sites, branches, threads, trace.shared_bytes, occupancy)


def _costly(info: Any) -> bool:
    """Whether splitting a warp at this branch costs work on both sides: an ``if`` with an
    ``else``, or a branch inside a loop (an ``if`` without ``else`` outside loops, such as
    ``if lane == 0: store``, or a conditional expression, costs next to nothing)."""
    if info is None:
        return False
    return info.kind == "branch_else" or (info.kind == "branch" and bool(info.loops))


def _where(site: Site | None) -> str:
    return str(site) if site else "a line of the kernel"


def performance_findings(traffic: Traffic) -> list[Finding]:
    """A finding for each uncoalesced global access, each shared access with bank
    conflicts and each branch that splits most of the warps reaching it. A global site
    whose requests are mostly broadcasts (:attr:`SiteTraffic.broadcast`) is not reported:
    its lanes read few distinct elements, which no mapping of threads makes consecutive."""
    out = []
    for s in traffic.sites:
        if s.space == "global" and s.ratio >= UNCOALESCED_RATIO and not s.broadcast:
            fix = ("make consecutive threads of a warp (threadIdx.x, the first value of "
                   "cuda.grid) touch consecutive elements")
            if s.columns and s.lane_stride == s.columns:
                fix = ("neighbouring threads are a whole row apart: let threadIdx.x run along "
                       "the columns (the last index), or stage the data through a tile in "
                       "shared memory so that both the load and the store run along rows")
            out.append(Finding(
                "uncoalesced", f"{_where(s.site)}: the warps' accesses to {s.array} moved "
                f"{s.cost:,} sectors of 32 bytes, {s.ratio:.1f} times the {s.ideal:,} that "
                f"the elements each request used would fill "
                f"({s.useful_bytes / (s.cost * SECTOR_BYTES):.0%} of the bytes moved were "
                f"used): {fix}",
                array=s.array, site=s.site))
        elif s.space == "shared" and s.requests and s.cost / s.requests >= CONFLICT_RATIO:
            ways = s.cost / s.requests
            fix = ("make the 32 lanes of a warp read 32 different banks (consecutive 4-byte "
                   "words), or the same word")
            if s.columns and s.lane_stride and s.lane_stride % BANKS == 0:
                fix = (f"pad the tile to {s.columns + 1} columns (declare it with "
                       f"{s.columns + 1} columns and keep indexing the first {s.columns}): "
                       "a column then spreads over all 32 banks")
            out.append(Finding(
                "bank_conflict", f"{_where(s.site)}: each warp's access to shared {s.array} "
                f"takes {ways:.1f} wavefronts on average instead of 1, a {round(ways)}-way bank "
                f"conflict: {fix}", array=s.array, site=s.site))
    for site, n_split, n, costly in traffic.branches:
        if costly and n_split >= 2 and n_split > DIVERGENT_SHARE * n:
            out.append(Finding(
                "divergence", f"{_where(site)}: this branch splits {n_split:,} of the {n:,} "
                "warps that reach it, so each runs both sides one after the other: make the "
                "condition the same for the 32 threads of a warp (depend on threadIdx.x // 32, "
                "or give each thread a contiguous stretch of work)", site=site))
    return out


def prediction_text(predicted: int | None, traffic: Traffic) -> str:
    """Predicted against counted global bytes, for a reader."""
    counted = traffic.global_bytes
    if not predicted:
        return f"Counted: {traffic.summary()}"
    return (f"Predicted {predicted:,} bytes of global traffic for a coalesced kernel; "
            f"counted {counted:,} ({counted / predicted:.2f}× the prediction). "
            f"{traffic.summary()}")


def traffic_mapping(traffic: Traffic) -> Mapping[str, Any]:
    """The counts as plain numbers (for the site and the tests)."""
    return {"global_requests": traffic.global_requests,
            "global_sectors": traffic.global_sectors, "global_bytes": traffic.global_bytes,
            "useful_bytes": traffic.useful_bytes, "shared_requests": traffic.shared_requests,
            "shared_wavefronts": traffic.shared_wavefronts,
            "divergent_warps": traffic.divergent_warps,
            "occupancy": traffic.occupancy.occupancy if traffic.occupancy else None}
