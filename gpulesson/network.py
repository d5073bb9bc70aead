"""The network as built: an all-reduce across nodes, on every NIC of every node.

HGX and DGX servers (A100, H100, H200, B200) carry one scale-out NIC per GPU, and a GB200
NVL72 compute tray one per GPU too: each GPU has its own "rail" into the network. NCCL's
ring enters and leaves each node once per channel and spreads its channels over all the
node's NICs, so every byte of the ring crosses the network through one of ``m`` NICs, where
``m`` is the number of the group's GPUs in one NVLink domain. Its bus bandwidth is therefore
bounded twice (:func:`ring_bus_bandwidth`)::

    busbw = min(NVLink achievable bandwidth, m x NIC line rate x network efficiency)

not by one NIC: on two 8-GPU H100 servers with eight 400 Gb/s NICs each, about 370 GB/s
(NVIDIA: "With 8 400 Gbps NICs your peak would be at 400 GB/s", nccl-tests issue #309,
2025), where one NIC per node would give 47. A data-parallel group that holds one GPU per
server (``tp = 8``) has ``m = 1``: its ring crosses one NIC per node, and the eight such
groups of a server run side by side, each on its own rail (:func:`group_bus_bandwidth`).

Inside one NVLink domain the ring runs at the NVLink's achievable bandwidth; NVLink SHARP
(NVLS, Hopper and later) adds the buffers in the switch and beats the ring
(:func:`gpulesson.links.sharp_allreduce_time`). Across nodes NCCL can also run trees: on
exactly two nodes a tree exceeds the ring (it "can go beyond the network bottleneck",
nccl-tests issue #196), which is why NVIDIA asks for ``NCCL_ALGO=Ring`` when two nodes are
benchmarked (issue #309). The model here is the ring that three or more nodes run.

Line rate and achievable bandwidth are named apart: the ``*_line_rate`` arguments are the
link's signalling rate, one way (a 400 Gb/s NIC is 50 GB/s); what NCCL reaches on it is the
line rate times an efficiency (:data:`gpulesson.links.NETWORK_EFFICIENCY`, 47 of 50 GB/s,
and :data:`gpulesson.links.NVLINK_EFFICIENCY`, 370 of 450 GB/s), which
:func:`fit_network_efficiency` refits on a set of multi-node logs, leave-one-out.

Taught in: ``notebooks/distributed_math.ipynb`` (achievable bandwidth, tiers).
Standard library only (the site runs it).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from gpulesson import _validate as v
from gpulesson.links import NETWORK_EFFICIENCY, NVLINK_EFFICIENCY

__all__ = ["RingEstimate", "fit_network_efficiency", "group_bus_bandwidth",
           "ring_bus_bandwidth", "ranks_per_domain"]


@dataclass(frozen=True)
class RingEstimate:
    """The bus bandwidth of a ring all-reduce (bytes/s) and the link that bounds it.

    ``bound`` is ``"nvlink"`` or ``"network"``; ``nvlink`` and ``network`` are the two
    bounds (``math.inf`` where a bound does not apply: no NVLink hop with one GPU per
    domain, no network inside one domain); ``ranks_per_domain`` is ``m``, the NICs that
    carry the ring out of each domain.
    """

    bus_bandwidth: float
    bound: str
    nvlink: float | None
    network: float | None
    ranks_per_domain: int
    domains: int


def ranks_per_domain(n_ranks: int, gpus_per_domain: int) -> int:
    """``m``: the ranks of a group of ``n_ranks`` (filled domain by domain) in one NVLink
    domain of ``gpus_per_domain`` GPUs; ``ValueError`` unless whole domains or one partial
    domain are used."""
    n = v.positive_int("n_ranks", n_ranks)
    d = v.positive_int("gpus_per_domain", gpus_per_domain)
    if n <= d:
        return n
    if n % d:
        raise ValueError(f"n_ranks must be a multiple of gpus_per_domain ({d}) when it spans "
                         f"several domains, got {n}")
    return d


def ring_bus_bandwidth(n_ranks: int, *, gpus_per_domain: int,
                       nvlink_line_rate: float | None, nic_line_rate: float,
                       nvlink_efficiency: float = NVLINK_EFFICIENCY,
                       network_efficiency: float = NETWORK_EFFICIENCY) -> RingEstimate:
    """Bus bandwidth of NCCL's ring all-reduce over ``n_ranks`` GPUs filled
    ``gpus_per_domain`` to an NVLink domain (a server of 8, an NVL72 rack or a partition of
    it), each GPU with its own NIC of ``nic_line_rate`` bytes/s one way.

    ``min(nvlink_efficiency x nvlink_line_rate, network_efficiency x m x nic_line_rate)``
    with ``m`` ranks per domain (:func:`ranks_per_domain`): the ring leaves each domain
    through ``m`` NICs at once. Inside one domain only the NVLink bound applies; with one
    GPU per domain only the network's; ``nvlink_line_rate=None`` leaves the NVLink bound
    out (a domain whose inside is not known).
    """
    n = v.positive_int("n_ranks", n_ranks)
    m = ranks_per_domain(n, gpus_per_domain)
    nv = (math.inf if nvlink_line_rate is None
          else v.positive_number("nvlink_line_rate", nvlink_line_rate))
    nic = v.positive_number("nic_line_rate", nic_line_rate)
    nv_eff = v.fraction("nvlink_efficiency", nvlink_efficiency, allow_zero=False)
    net_eff = v.fraction("network_efficiency", network_efficiency, allow_zero=False)
    domains = n // m
    if n == 1:
        raise ValueError("n_ranks must be at least 2 for an all-reduce to move data, got 1")
    nvlink = nv_eff * nv if m > 1 and math.isfinite(nv) else None
    network = net_eff * m * nic if domains > 1 else None
    bounds = {k: b for k, b in (("nvlink", nvlink), ("network", network)) if b is not None}
    if not bounds:
        raise ValueError("nvlink_line_rate: give it for a group inside one NVLink domain")
    bound = min(bounds, key=bounds.__getitem__)
    return RingEstimate(bounds[bound], bound, nvlink, network, m, domains)


def group_bus_bandwidth(*, stride: int, size: int, domain: int, nvlink_line_rate: float,
                        nic_line_rate: float, nvlink_efficiency: float = NVLINK_EFFICIENCY,
                        network_efficiency: float = NETWORK_EFFICIENCY) -> RingEstimate:
    """Bus bandwidth of one parallel group: ``size`` ranks spaced ``stride`` apart, GPUs
    numbered domain by domain (as :func:`gpulesson.links.group_tier`).

    The group holds ``m = clamp(domain // stride, 1, size)`` GPUs in each domain it
    touches, and each of them brings its own NIC: a data-parallel group of a ``tp = 8``
    layout (stride 8) on 8-GPU servers has one GPU, so one NIC, per server, and the
    server's eight such groups use its eight NICs side by side.
    """
    st_ = v.positive_int("stride", stride)
    n = v.positive_int("size", size)
    d = v.positive_int("domain", domain)
    m = max(1, min(n, d // st_)) if st_ * n > d else n
    if n % m:
        raise ValueError(f"size ({n}) must be a multiple of the {m} ranks the group holds in "
                         f"each {d}-GPU domain at stride {st_}")
    return ring_bus_bandwidth(n, gpus_per_domain=m, nvlink_line_rate=nvlink_line_rate,
                              nic_line_rate=nic_line_rate, nvlink_efficiency=nvlink_efficiency,
                              network_efficiency=network_efficiency)


def fit_network_efficiency(measured: Sequence[float], nic_bandwidth: Sequence[float]) -> float:
    """The network efficiency that best predicts network-bound runs: the median of
    ``measured busbw / (m x NIC line rate)`` (a median, so one bad fabric does not drag
    it). ``measured`` and ``nic_bandwidth`` pair up run by run (bytes/s)."""
    if len(measured) != len(nic_bandwidth) or not measured:
        raise ValueError(f"measured and nic_bandwidth must pair up, at least one run each; got "
                         f"{len(measured)} and {len(nic_bandwidth)}")
    ratios = [v.positive_number("measured", b) / v.positive_number("nic_bandwidth", r)
              for b, r in zip(measured, nic_bandwidth, strict=True)]
    return float(statistics.median(ratios))


v.guard_module(globals())
