"""The links a collective crosses: what NCCL achieves on them, in-switch reduction,
which tier a group of ranks uses, how much communication overlap hides, DualPipe's bubble.

NCCL reaches about 80 % of the NVLink line rate as bus bandwidth (370 of 450 GB/s on H100,
nccl-tests issue #212) and about 94 % of a 400 Gb/s NIC (:func:`achievable_bandwidth`).
NVLink SHARP reduces inside the switch, so an all-reduce is not bound by the ring's
``2(n-1)/n`` (:func:`sharp_allreduce_time`). A collective runs on the tier it crosses
(:func:`group_tier`), and hides only behind the compute it can overlap
(:func:`exposed_time`: gradient buckets are ready only during the backward pass).
DualPipe's bubble (:func:`dualpipe_bubble_fraction`) now lives in :mod:`gpulesson.pipeline`
and is re-exported here under its old name.
:mod:`gpulesson.distributed` re-exports every name here; the bytes each parallel
dimension moves are :mod:`gpulesson.traffic`. Standard library only.

Taught in: ``notebooks/distributed_math.ipynb`` and ``notebooks/planning_dashboard.ipynb``.
"""

from __future__ import annotations

from gpulesson import _validate as v
from gpulesson.pipeline import dualpipe_bubble_fraction

__all__ = [
    "NETWORK_EFFICIENCY",
    "NVLINK_EFFICIENCY",
    "NVLS_ALGBW_FRACTION",
    "TIERS",
    "achievable_bandwidth",
    "dualpipe_bubble_fraction",
    "exposed_time",
    "group_tier",
    "sharp_allreduce_time",
]


#: Achievable fraction of the NVLink line rate for NCCL's bus bandwidth: "450GB/s is the
#: line rate. With the protocol overhead (~20%) NCCL can get an effective NVLink bandwidth
#: of 370GB/s" on H100 (NVIDIA/nccl-tests issue #212, S. Jeaugey, 2024): 370/450.
NVLINK_EFFICIENCY = 370 / 450
#: Achievable fraction of a scale-out NIC's line rate: "For NDR @ 400Gbps you should see
#: 46-48GB/s per NIC" (NVIDIA/nccl-tests issue #290, 2025): 47 of 50 GB/s.
NETWORK_EFFICIENCY = 47 / 50
#: NVLink SHARP all-reduce (NCCL's NVLS algorithm): algorithm bandwidth as a fraction of the
#: NVLink line rate. The switch adds the buffers, so each GPU sends and receives its ``S``
#: bytes once, instead of the ring's ``2(n-1)/n * S``; on 8 H100 NCCL reaches "a peak busBw
#: of ~480GB/s (algbw ~275GB/s)" (nccl-tests #212), 8 H200 475 GB/s (nccl-tests #272):
#: 275/450 of the line rate as algbw, more than a ring's bus bandwidth can ever give.
NVLS_ALGBW_FRACTION = 275 / 450
TIERS = ("nvlink", "network")


def achievable_bandwidth(line_rate: float, tier: str = "nvlink") -> float:
    """Bus bandwidth NCCL achieves on a link of ``line_rate`` bytes/s (one way, per GPU).

    ``line_rate * NVLINK_EFFICIENCY`` (370 of 450 GB/s on H100 NVLink) inside an NVLink
    domain, ``line_rate * NETWORK_EFFICIENCY`` (47 of 50 GB/s on 400 Gb/s NDR) over the
    scale-out network. Taught in ``distributed_math`` (achievable bandwidth).
    """
    rate = v.positive_number("line_rate", line_rate)
    kind = v.choice("tier", tier, TIERS)
    return rate * (NVLINK_EFFICIENCY if kind == "nvlink" else NETWORK_EFFICIENCY)


def sharp_allreduce_time(size_bytes: float, *, line_rate: float, latency: float = 0) -> float:
    """All-reduce time with in-switch reduction (NVLink SHARP): ``alpha + S / algbw``.

    ``algbw = NVLS_ALGBW_FRACTION * line_rate`` whatever the number of GPUs in the domain:
    each GPU pushes its buffer into the switch once and reads the sum back once. On 8 H100
    (450 GB/s) that is 275 GB/s of algorithm bandwidth, where a ring at 370 GB/s of bus
    bandwidth gives ``370 / (2 * 7/8) = 211`` GB/s (nccl-tests #212).
    """
    s = v.nonneg_number("size_bytes", size_bytes)
    rate = v.positive_number("line_rate", line_rate)
    return v.nonneg_number("latency", latency) + s / (NVLS_ALGBW_FRACTION * rate)


def group_tier(*, stride: int, size: int, domain: int) -> str:
    """Which link a group of ``size`` ranks spaced ``stride`` apart crosses.

    Ranks are numbered so that GPUs ``0..domain-1`` share one NVLink domain (a server of 8,
    or 72 GPUs of a GB200 NVL72 rack). The group ``{r, r+stride, ..., r+(size-1)*stride}``
    stays inside one domain when ``stride * size <= domain`` (``"nvlink"``), else it crosses
    the scale-out network (``"network"``). Megatron-LM orders the dimensions tensor,
    context, expert, data, pipeline from the fastest-varying, so tensor parallelism is the
    first to get NVLink.
    """
    st_ = v.positive_int("stride", stride)
    n = v.positive_int("size", size)
    d = v.positive_int("domain", domain)
    return "nvlink" if n == 1 or st_ * n <= d else "network"


def exposed_time(comm_time: float, window: float, overlap: float = 1.0) -> float:
    """Communication left on the critical path: ``max(0, comm - overlap * window)``.

    ``window`` is the compute it can run beside. DDP and Megatron's gradient buckets are
    ready only as the backward pass produces them, so the data-parallel window is the
    backward pass of the last micro-batch, not the whole step (PyTorch DDP, Li et al. 2020,
    section 3.2.3).
    """
    c = v.nonneg_number("comm_time", comm_time)
    w = v.nonneg_number("window", window)
    return max(0.0, c - v.fraction("overlap", overlap) * w)


v.guard_module(globals())
