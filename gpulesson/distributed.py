"""Distributed training: collectives, pipeline bubbles, ZeRO, scaling, and a layout advisor.

Collectives (nccl-tests ``doc/PERFORMANCE.md``)
------------------------------------------------
``algbw = S / t``. The *bus bandwidth* ``busbw = algbw * factor`` is comparable with the
link bandwidth whatever the number of ranks ``n``: all-reduce ``2(n-1)/n``;
reduce-scatter, all-gather and all-to-all ``(n-1)/n``; broadcast and reduce 1. ``S`` is
the size of the whole buffer (for all-gather the gathered output, for reduce-scatter the
input). A ring all-reduce sends and receives ``2(n-1)/n * S`` bytes per rank (Patarasuk &
Yuan 2009), so it takes at least ``2(n-1)/n * S / B`` on links of bandwidth ``B``.

Pipeline schedules (:mod:`gpulesson.pipeline`, re-exported here)
-----------------------------------------------------------------
With ``p`` stages and ``m`` micro-batches, GPipe and 1F1B schedules idle for
``(p-1)/m`` of the ideal time; the interleaved schedule with ``v`` model chunks per
device divides that by ``v``: ``(p-1)/(v*m)``. Splitting the backward pass into input- and
weight-gradient passes (ZB-H1) and running two pipelines in opposite directions (DualPipe)
cut it further; :mod:`gpulesson.pipeline` simulates and counts them.

ZeRO (Rajbhandari et al. 2020, section 5 and Figure 1)
--------------------------------------------------------
Model-state bytes per GPU for ``Psi`` parameters, data-parallel degree ``Nd`` and
``K`` bytes of optimizer state per parameter (12 for mixed-precision Adam):
stage 0 ``(2+2+K)*Psi``; stage 1 (optimizer states partitioned) ``4*Psi + K*Psi/Nd``;
stage 2 (+ gradients) ``2*Psi + (2+K)*Psi/Nd``; stage 3 (+ parameters) ``(4+K)*Psi/Nd``.
The paper's 7.5B example with ``Nd = 64``: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB.

Layouts: what one GPU holds (Narayanan et al. 2021; Korthikanti et al. 2022)
---------------------------------------------------------------------------
A layout ``dp x tp x pp = n_gpus`` splits every weight matrix over ``tp`` GPUs of a node and
the ``L`` layers over ``pp`` pipeline stages. Stages need not hold equal numbers of layers:
Llama 3 405B spread 126 layers over 16 stages (Dubey et al. 2024, section 3.3), so the
largest stage holds ``ceil(L/pp)`` layers, and that stage sets the memory per GPU
(:func:`params_per_gpu`, :func:`layout_memory`). With a 1F1B schedule the first stage keeps
the activations of ``pp`` micro-batches in flight, each over its ``ceil(L/pp)`` layers:
about one micro-batch's activations of the whole model, whatever ``pp``.

The first stage also holds the token embedding and the last one the output layer (and,
with tied embeddings, its own copy of the embedding matrix, whose gradients the two stages
add up; Narayanan et al. 2021, section 2.2). With ``embedding_params`` given,
:func:`stage_params` puts them there and gives the stages' extra layers to the middle
ones, which is how Llama 3 405B balanced its 126 layers on 16 stages: 7 on the first and
the last, 8 on the others (Dubey et al. 2024, section 3.3.2). Context parallelism over
``cp`` GPUs splits each sequence, so ``dp x tp x pp x cp = n_gpus``; the activations are
divided by ``cp`` and ZeRO shards over the ``dp x cp`` ranks that hold the same weights.

The data-parallel roofline (Austin et al. 2025, *How to Scale Your Model*, GPU chapter)
-------------------------------------------------------------------------------------------
The gradient all-reduce moves ``2(n-1)/n * b * N`` bytes per GPU whatever the batch, while
the backward pass it hides behind costs ``4 * N_active`` FLOPs per token. Below
``T* = (n-1)/n * b * C * (N / N_active) / (2 * W)`` tokens per GPU and step (``C`` FLOP/s,
``W`` bus bandwidth, ``b`` bytes per gradient) the exchange outlasts the backward pass
(:func:`data_parallel_critical_tokens`): 2,200 tokens on H100s inside a server (990
TFLOP/s over 450 GB/s), 2,475 across servers; a mixture-of-experts model multiplies it by
its total over active parameters, about ``E/k``.

Achievable bandwidth, in-switch reduction, tiers and overlap
-------------------------------------------------------------
NCCL reaches about 80 % of the NVLink line rate as bus bandwidth (370 of 450 GB/s on H100,
nccl-tests issue #212) and about 94 % of a 400 Gb/s NIC (:func:`achievable_bandwidth`).
NVLink SHARP reduces inside the switch, so an all-reduce is not bound by the ring's
``2(n-1)/n`` (:func:`sharp_allreduce_time`). A collective runs on the tier it crosses
(:func:`group_tier`), and hides only behind the compute it can overlap
(:func:`exposed_time`: gradient buckets are ready only during the backward pass). The bytes
of each parallel dimension are :mod:`gpulesson.traffic`. These live in
:mod:`gpulesson.links` and are re-exported here.

Taught in: ``notebooks/distributed_math.ipynb`` and ``notebooks/planning_dashboard.ipynb``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from gpulesson import _validate as v
from gpulesson import activations, memory, pipeline, units
from gpulesson.links import (
    NETWORK_EFFICIENCY,
    NVLINK_EFFICIENCY,
    NVLS_ALGBW_FRACTION,
    TIERS,
    achievable_bandwidth,
    exposed_time,
    group_tier,
    sharp_allreduce_time,
)
from gpulesson.pipeline import *  # noqa: F403 - re-exported, as pipeline.__all__ lists them
from gpulesson.transformer import TransformerConfig, embedding_params, param_breakdown

__all__ = [
    "COLLECTIVES",
    "NETWORK_EFFICIENCY",
    "NVLINK_EFFICIENCY",
    "NVLS_ALGBW_FRACTION",
    "TIERS",
    "LayoutMemory",
    "LayoutRecommendation",
    "MAX_STAGES",
    "achievable_bandwidth",
    "algorithm_bandwidth",
    "allreduce_bytes_per_rank",
    "bus_bandwidth",
    "bus_bandwidth_factor",
    "collective_time",
    "data_parallel_critical_tokens",
    "data_parallel_sync_time",
    "divisors",
    "effective_speedup",
    "exposed_time",
    "group_tier",
    "layout_memory",
    "params_per_gpu",
    "recommend_layout",
    "scaling_efficiency",
    "sharp_allreduce_time",
    "stage_layer_counts",
    "stage_layers",
    "stage_params",
    "zero_memory_per_gpu",
    *pipeline.__all__,  # re-exported: lesson 7 calls them through this module
]

#: nccl-tests bus-bandwidth factors as functions of the number of ranks.
COLLECTIVES: Mapping[str, str] = MappingProxyType({
    "all_reduce": "2(n-1)/n",
    "reduce_scatter": "(n-1)/n",
    "all_gather": "(n-1)/n",
    "alltoall": "(n-1)/n",
    "broadcast": "1",
    "reduce": "1",
    "sendrecv": "1",
})
_COLLECTIVE_ALIASES = {"all_to_all": "alltoall", "send_recv": "sendrecv", "p2p": "sendrecv"}


def bus_bandwidth_factor(collective: str, n_ranks: int) -> float:
    """nccl-tests factor from algorithm to bus bandwidth for ``collective`` on ``n_ranks``.

    ``all_reduce`` 2(n-1)/n; ``reduce_scatter``, ``all_gather``, ``alltoall`` (n-1)/n;
    ``broadcast``, ``reduce``, ``sendrecv`` 1. Names ignore case, ``_`` and ``-``
    (``"allreduce"``, ``"all-reduce"``).
    """
    name = v.lookup("collective", collective, COLLECTIVES, _COLLECTIVE_ALIASES)[0]
    n = v.positive_int("n_ranks", n_ranks)
    if name == "all_reduce":
        return 2 * (n - 1) / n
    if name in ("reduce_scatter", "all_gather", "alltoall"):
        return (n - 1) / n
    return 1.0


def allreduce_bytes_per_rank(size_bytes: float, n_ranks: int) -> float:
    """Bytes each rank sends (and receives) in a ring all-reduce: ``2(n-1)/n * S``."""
    s = v.nonneg_number("size_bytes", size_bytes)
    return bus_bandwidth_factor("all_reduce", n_ranks) * s


def algorithm_bandwidth(size_bytes: float, seconds: float) -> float:
    """nccl-tests algorithm bandwidth ``S / t`` (bytes/s)."""
    s = v.nonneg_number("size_bytes", size_bytes)
    t = v.positive_number("seconds", seconds)
    return s / t


def bus_bandwidth(collective: str, size_bytes: float, seconds: float, n_ranks: int) -> float:
    """nccl-tests bus bandwidth ``S / t * factor(collective, n)`` (bytes/s)."""
    return algorithm_bandwidth(size_bytes, seconds) * bus_bandwidth_factor(collective, n_ranks)


def collective_time(
    collective: str, size_bytes: float, n_ranks: int, *, bandwidth: float, latency: float = 0
) -> float:
    """Alpha-beta time of a collective: ``latency + factor * size_bytes / bandwidth``.

    ``bandwidth`` is the bus (per-rank link) bandwidth in bytes/s and ``latency`` the
    fixed per-operation overhead alpha in seconds, as nccl-tests describe the time
    ("overhead + size / bw"). With ``bandwidth`` the measured bus bandwidth this inverts
    :func:`bus_bandwidth`.
    """
    factor = bus_bandwidth_factor(collective, n_ranks)
    s = v.nonneg_number("size_bytes", size_bytes)
    bw = v.positive_number("bandwidth", bandwidth)
    alpha = v.nonneg_number("latency", latency)
    return alpha + factor * s / bw


def zero_memory_per_gpu(
    n_params: float, *, stage: int, dp: int, optimizer_bytes: float = 12
) -> float:
    """Model-state bytes per GPU under ZeRO stage 0-3 (Rajbhandari et al. 2020).

    Parameters
    ----------
    n_params : float
        ``Psi``.
    stage : int
        0 (plain data parallel), 1 (optimizer states partitioned), 2 (+ gradients),
        3 (+ parameters).
    dp : int
        Data-parallel degree ``Nd``.
    optimizer_bytes : float
        ``K``, optimizer-state bytes per parameter (12 for mixed-precision Adam: FP32
        master weights, momentum and variance). Weights and gradients are 2 bytes each.

    Returns
    -------
    float
        ``(2+2+K)Psi``, ``4Psi + K Psi/Nd``, ``2Psi + (2+K)Psi/Nd`` or ``(4+K)Psi/Nd``.
    """
    psi = v.positive_number("n_params", n_params)
    if isinstance(stage, bool) or stage not in (0, 1, 2, 3):
        raise ValueError(f"stage must be 0, 1, 2 or 3, got {stage!r}")
    nd = v.positive_int("dp", dp)
    k = v.nonneg_number("optimizer_bytes", optimizer_bytes)
    return _zero_bytes(psi, 2, 2, k, stage, nd)


def _zero_bytes(psi: float, w: float, g: float, k: float, stage: int, nd: int) -> float:
    # psi * (replicated + partitioned / nd): computing the coefficient first keeps the
    # stages exactly ordered in floating point (all equal when nd = 1).
    if stage == 0:
        return psi * (w + g + k)
    if stage == 1:
        return psi * ((w + g) + k / nd)
    if stage == 2:
        return psi * (w + (g + k) / nd)
    return psi * ((w + g + k) / nd)


def scaling_efficiency(compute_time: float, comm_time: float, overlap: float = 0.0) -> float:
    """Fraction of ideal speed when communication is partly hidden behind compute.

    ``compute / (compute + exposed)`` with ``exposed = comm - min(overlap*comm, compute)``:
    ``overlap`` is the fraction of the communication that runs concurrently with compute
    (0 = none, 1 = all of it, as far as there is compute to hide behind).
    """
    c = v.positive_number("compute_time", compute_time)
    comm = v.nonneg_number("comm_time", comm_time)
    o = v.fraction("overlap", overlap)
    exposed = comm - min(o * comm, c)
    return c / (c + exposed)


def effective_speedup(n_gpus: int, efficiency: float) -> float:
    """Speed-up over one GPU: ``n_gpus * efficiency``."""
    n = v.positive_int("n_gpus", n_gpus)
    e = v.fraction("efficiency", efficiency)
    return n * e


#: The most pipeline stages a per-stage list is built for (no run has near this many).
MAX_PIPELINE_STAGES = 10_000


def stage_layers(layers: int, pp: int) -> int:
    """Layers on the largest of ``pp`` pipeline stages: ``ceil(layers / pp)``.

    Stages need not be equal: Llama 3 405B put its 126 layers on 16 stages (Dubey et al.
    2024, section 3.3 and Table 4), at most ``ceil(126/16) = 8`` per stage. Every stage
    needs at least one layer, so ``pp <= layers``.
    """
    n_layers = v.positive_int("layers", layers)
    p = v.positive_int("pp", pp)
    if p > n_layers:
        raise ValueError(f"pp must be at most layers ({n_layers}): every pipeline stage needs "
                         f"a layer, got {p}")
    return -(-n_layers // p)


def stage_layer_counts(layers: int, pp: int) -> list[int]:
    """Layers of each of ``pp`` stages: ``L // pp`` each, the remainder one more each on
    the middle stages (the first and last hold the embedding and the output layer).
    At most :data:`MAX_PIPELINE_STAGES` stages.

    Llama 3 405B, 126 layers on 16 stages: ``[7, 8, ..., 8, 7]`` (Dubey et al. 2024,
    section 3.3.2: one layer fewer on the first and the last stage).
    """
    n_layers = v.positive_int("layers", layers)
    p = v.positive_int("pp", pp)
    if p > MAX_PIPELINE_STAGES:
        raise ValueError(f"pp must be at most {MAX_PIPELINE_STAGES:,} stages (one list entry "
                         f"each), got {p:,}")
    stage_layers(n_layers, p)  # refuses pp > layers
    base, extra = divmod(n_layers, p)
    counts = [base] * p
    order = list(range(1, p - 1)) + [p - 1, 0]  # middle stages first, then the ends
    for i in order[:extra]:
        counts[i] += 1
    return counts


def stage_params(n_params: float, *, layers: int, pp: int, embedding_params: float = 0,
                 output_params: float = 0, tied_embeddings: bool = False) -> list[float]:
    """Parameters of each pipeline stage, with the embedding and output layer at the ends.

    The layers' parameters ``(n_params - embedding - output) / L`` each are spread by
    :func:`stage_layer_counts`; the first stage adds ``embedding_params``, the last
    ``output_params`` and, when ``tied_embeddings``, a copy of the embedding (the shared
    matrix is needed at both ends; ``n_params`` counts it once). With ``pp == 1`` there is
    one stage of ``n_params``.
    """
    psi = v.positive_number("n_params", n_params)
    emb = v.nonneg_number("embedding_params", embedding_params)
    out = v.nonneg_number("output_params", output_params)
    v.boolean("tied_embeddings", tied_embeddings)
    counts = stage_layer_counts(layers, pp)
    body = psi - emb - out
    if body <= 0:
        raise ValueError(f"embedding_params + output_params ({emb + out:g}) must be below "
                         f"n_params ({psi:g})")
    per_layer = body / layers
    stages = [c * per_layer for c in counts]
    if len(stages) == 1:
        return [psi]
    stages[0] += emb
    stages[-1] += out + (emb if tied_embeddings else 0)
    return stages


def params_per_gpu(n_params: float, *, tp: int = 1, pp: int = 1,
                   layers: int | None = None, embedding_params: float = 0,
                   output_params: float = 0, tied_embeddings: bool = False) -> float:
    """Parameters one GPU holds: its ``1/tp`` share of the largest pipeline stage.

    ``n_params / tp * ceil(L/pp) / L`` when the number of layers ``L`` is given (stages of
    whole layers, :func:`stage_layers`), else ``n_params / (tp * pp)`` (layers split evenly).
    Without ``embedding_params`` the embeddings and the output layer are counted as if
    spread like the layers. With them (and ``output_params``, ``tied_embeddings``), they
    sit on the first and last stages (:func:`stage_params`), and the largest stage sets
    the figure; real pipelines balance them by giving those stages fewer layers (Llama 3:
    Dubey et al. 2024, section 3.3). Replicated norm weights are ignored (Narayanan et al.
    2021 shard every weight matrix ``tp`` ways).

    Parameters
    ----------
    n_params : float
        Parameters of the whole model ``Psi``.
    tp, pp : int
        Tensor- and pipeline-parallel degrees.
    layers : int, optional
        Transformer layers ``L``; ``pp`` must then be at most ``L``.
    """
    psi = v.positive_number("n_params", n_params)
    t = v.positive_int("tp", tp)
    p = v.positive_int("pp", pp)
    if embedding_params or output_params or tied_embeddings:
        if layers is None:
            raise ValueError("embedding_params and output_params need layers, to place "
                             "them on the first and last pipeline stages")
        return max(stage_params(psi, layers=layers, pp=p, embedding_params=embedding_params,
                                output_params=output_params,
                                tied_embeddings=tied_embeddings)) / t
    if layers is None:
        return psi / (t * p)
    return psi / t * stage_layers(layers, p) / layers


def data_parallel_sync_time(
    shard_params: float,
    *,
    dp: int,
    zero_stage: int = 0,
    bytes_per_value: float = 2,
    bandwidth: float,
    latency: float = 0,
) -> float:
    """Seconds per step to synchronise gradients across ``dp`` data-parallel ranks.

    Each rank exchanges the gradients of its model-parallel shard, ``S = shard_params *
    bytes_per_value`` bytes (``shard_params`` from :func:`params_per_gpu`). Plain data
    parallelism and ZeRO stages 1 and 2 move what one all-reduce moves (a reduce-scatter
    plus an all-gather, ``2(n-1)/n * S`` per rank); stage 3 also all-gathers the parameters
    once more, ``3(n-1)/n * S``: 1.5x the traffic (Rajbhandari et al. 2020, section 7).
    Times follow :func:`collective_time` (alpha-beta); no exchange is needed when
    ``dp == 1`` (0 s). Tensor- and pipeline-parallel traffic is not counted.

    Parameters
    ----------
    shard_params : float
        Parameters whose gradients one rank synchronises.
    dp : int
        Data-parallel degree.
    zero_stage : int
        0-3.
    bytes_per_value : float
        Bytes per gradient value (2 for BF16/FP16, 4 for FP32).
    bandwidth : float
        Per-GPU (bus) bandwidth of the links the data-parallel group uses, bytes/s.
    latency : float
        Fixed cost alpha of each collective, seconds.
    """
    psi = v.positive_number("shard_params", shard_params)
    nd = v.positive_int("dp", dp)
    if isinstance(zero_stage, bool) or zero_stage not in (0, 1, 2, 3):
        raise ValueError(f"zero_stage must be 0, 1, 2 or 3, got {zero_stage!r}")
    b = v.positive_number("bytes_per_value", bytes_per_value)
    size = psi * b
    t = collective_time("all_reduce", size, nd, bandwidth=bandwidth, latency=latency)
    if nd == 1:
        return 0.0
    if zero_stage == 3:
        t += collective_time("all_gather", size, nd, bandwidth=bandwidth, latency=latency)
    return t


def data_parallel_critical_tokens(
    *,
    flops: float,
    bandwidth: float,
    dp: int | None = None,
    bytes_per_value: float = 2,
    total_params: float = 1,
    active_params: float | None = None,
) -> float:
    """Tokens per GPU and step below which the gradient all-reduce cannot hide behind the
    backward pass (Austin et al. 2025, *How to Scale Your Model*, "Rooflines for LLM
    Scaling on GPUs", data parallelism).

    ``T* = (n-1)/n * b * C * (N / N_active) / (2 * W)``: the backward pass computes
    ``4 * N_active * T / C`` seconds for ``T`` tokens, the ring all-reduce of the ``b * N``
    gradient bytes takes ``2(n-1)/n * b * N / W`` (:func:`collective_time`), and the two are
    equal at ``T*``. At the rates a run really reaches, above it the step is compute-bound
    (with perfect overlap) and below it no overlap can hide the exchange. ``T*`` grows with
    ``C``: at a peak FLOP/s it is the largest it can be at that bandwidth (the worst case,
    above which overlap can always hide the exchange), not a floor. ZeRO's reduce-scatter
    and all-gather move the same bytes, so the bound is the same for ZeRO-1/2 (and FSDP's
    forward gathers overlap the forward).

    Parameters
    ----------
    flops : float
        FLOP/s the backward pass runs at (an achieved rate gives the threshold of a real
        run; a peak gives the largest, worst-case threshold).
    bandwidth : float
        Bus bandwidth of the links the data-parallel group crosses, bytes/s (one way per GPU
        in an NVLink domain; a node's network egress shared by its GPUs across servers).
    dp : int, optional
        Ranks in the all-reduce ``n``; ``(n-1)/n`` is left out (large groups) when omitted.
    bytes_per_value : float
        Bytes per gradient value ``b`` (2 for BF16).
    total_params, active_params : float
        A mixture-of-experts model all-reduces the gradients of all ``N`` parameters but
        computes with the ``N_active`` a token meets: ``T*`` grows by ``N / N_active``, about
        ``E/k`` when the experts dominate. Both left out: a dense model (ratio 1).

    Examples
    --------
    H100 at its 990 TFLOP/s BF16 peak over 450 GB/s of NVLink: 2,200 tokens per GPU; over a
    server's 400 GB/s of network egress: 2,475; gpt-oss (``E/k = 128/4``): 79,200.
    """
    c = v.positive_number("flops", flops)
    w = v.positive_number("bandwidth", bandwidth)
    b = v.positive_number("bytes_per_value", bytes_per_value)
    total = v.positive_number("total_params", total_params)
    active = total if active_params is None else v.positive_number("active_params",
                                                                   active_params)
    if active > total:
        raise ValueError(f"active_params must be at most total_params ({total:g}), got "
                         f"{active:g}")
    share = 1.0 if dp is None else bus_bandwidth_factor("all_reduce", dp) / 2
    return share * b * c * (total / active) / (2 * w)


@dataclass(frozen=True)
class LayoutMemory:
    """Memory of one GPU of a layout ``dp x tp x pp`` (bytes), on its largest stage.

    Attributes
    ----------
    dp, tp, pp, zero_stage : int
        The layout.
    params_per_gpu : float
        Parameters held (:func:`params_per_gpu`).
    model_state : float
        Weights, gradients and optimizer state of those parameters under ZeRO
        ``zero_stage`` across ``dp`` ranks.
    activations : float
        Stored activations (see :func:`layout_memory`).
    total : float
        ``model_state + activations``.
    cp : int
        Context-parallel size.
    """

    dp: int
    tp: int
    pp: int
    zero_stage: int
    params_per_gpu: float
    model_state: float
    activations: float
    total: float
    cp: int = 1


def _activation_inputs(activation_bytes: float, cfg: TransformerConfig | None, batch: int,
                       seq_len: int | None, recompute: str) -> tuple[float, int]:
    """Check the activation inputs of :func:`layout_memory` and :func:`recommend_layout`;
    returns ``(activation_bytes, batch)``."""
    act_given = v.nonneg_number("activation_bytes", activation_bytes)
    b = v.positive_int("batch", batch)
    if seq_len is not None:
        v.positive_int("seq_len", seq_len)
    v.choice("recompute", recompute, memory.RECOMPUTE_MODES)
    if cfg is not None and not isinstance(cfg, TransformerConfig):
        raise TypeError(f"cfg must be a TransformerConfig or None, got {type(cfg).__name__}")
    return act_given, b


@functools.lru_cache(maxsize=4096)
def _every_layer(cfg: TransformerConfig, seq_len: int, batch: int, attention: str,
                 dropout: bool | None, tp: int, recompute: str, cp: int) -> int:
    """:func:`gpulesson.activations.activation_bytes` of the whole model (sequence parallel
    where ``tp > 1``), kept per set of validated inputs: a layout search asks the same
    question for every layout that shares a micro-batch and a tensor-parallel size."""
    return activations.activation_bytes(
        cfg, seq_len=seq_len, batch=batch, attention=attention, dropout=dropout, tp=tp,
        sequence_parallel=tp > 1, recompute=recompute, cp=cp)


def _activations(cfg: TransformerConfig | None, seq_len: int | None, batch: int,
                 recompute: str, activation_bytes: float, tp: int, pp: int,
                 attention: str | None = None, dropout: bool | None = None,
                 cp: int = 1) -> float:
    if cfg is None:
        return activation_bytes / tp / cp if cp > 1 else activation_bytes / tp
    # 1F1B: the first stage holds pp micro-batches in flight over its ceil(L/pp) layers
    held = pp * stage_layers(cfg.layers, pp)
    if seq_len is None:
        whole = activation_bytes / tp * held / cfg.layers
        return whole / cp if cp > 1 else whole
    if attention is None and activations.default_attention(cfg) == "flash":
        attention = "flash"  # a modern model: memory.training_memory's default
    if attention is not None:  # derived per tensor; the mean layer of the model
        every_layer = _every_layer(cfg, seq_len, batch, attention, dropout, tp, recompute, cp)
        return held * every_layer / cfg.layers
    per_layer = memory.activation_bytes_per_layer(
        seq_len=seq_len, batch=batch, hidden=cfg.hidden, heads=cfg.heads, tp=tp,
        sequence_parallel=tp > 1, recompute=recompute)
    return held * per_layer // cp if cp > 1 else held * per_layer


def layout_memory(
    *,
    n_params: float,
    n_gpus: int,
    tp: int = 1,
    pp: int = 1,
    zero_stage: int = 0,
    precision: str = "mixed",
    optimizer: str = "adam",
    activation_bytes: float = 0,
    cfg: TransformerConfig | None = None,
    batch: int = 1,
    seq_len: int | None = None,
    recompute: str = "none",
    cp: int = 1,
    embedding_on_ends: bool = False,
    attention: str | None = None,
    dropout: bool | None = None,
) -> LayoutMemory:
    """Bytes per GPU of a chosen layout: model state plus activations, largest stage.

    ``dp = n_gpus / (tp * pp)`` (it must divide). Model state: the GPU's parameters
    (:func:`params_per_gpu`) times the bytes per parameter of ``precision`` and
    ``optimizer``, partitioned by ZeRO ``zero_stage`` over ``dp`` ranks as in
    :func:`zero_memory_per_gpu`. Activations: with ``cfg`` and ``seq_len``, the model's
    as :func:`gpulesson.memory.training_memory` counts them (Korthikanti et al. 2022 for a
    GPT-2/3 block, FlashAttention derived per tensor for a modern model; sequence
    parallel when ``tp > 1``) for ``pp * ceil(L/pp)`` layers, what the first stage of a
    1F1B schedule holds with at least ``pp`` micro-batches (Korthikanti et al. 2022,
    section 4.2.3); otherwise ``activation_bytes / tp`` (scaled the same way when ``cfg``
    gives the layers).

    Parameters
    ----------
    n_params : float
        Parameters ``Psi``.
    n_gpus : int
        GPUs in the layout.
    tp, pp : int
        Tensor- and pipeline-parallel degrees; ``tp`` must divide the heads and the hidden
        size of ``cfg``, ``pp`` be at most its layers.
    zero_stage : int
        ZeRO stage across the data-parallel group, 0-3.
    precision, optimizer : str
        As in :func:`gpulesson.memory.model_state_bytes`.
    activation_bytes : float
        Activation bytes of one micro-batch for the whole model without tensor
        parallelism, used when ``cfg`` or ``seq_len`` is missing.
    cfg, batch, seq_len, recompute
        The model, micro-batch, sequence length and recomputation mode for activations.
    cp : int
        Context-parallel size: ``dp x tp x pp x cp = n_gpus``; divides the activations,
        and ZeRO shards over ``dp x cp`` ranks.
    embedding_on_ends : bool
        Put ``cfg``'s embedding on the first stage and its output layer on the last
        (:func:`stage_params`) instead of spreading them like the layers.
    attention, dropout
        As in :func:`gpulesson.memory.training_memory`: ``None`` is the model's default
        (the GPT formula for GPT-2/3, FlashAttention for modern models),
        ``"flash"``/``"eager"`` derive the activations from the architecture.
    """
    psi = v.positive_number("n_params", n_params)
    n = v.positive_int("n_gpus", n_gpus)
    t = v.positive_int("tp", tp)
    p = v.positive_int("pp", pp)
    c = v.positive_int("cp", cp)
    v.boolean("embedding_on_ends", embedding_on_ends)
    if isinstance(zero_stage, bool) or zero_stage not in (0, 1, 2, 3):
        raise ValueError(f"zero_stage must be 0, 1, 2 or 3, got {zero_stage!r}")
    if c == 1 and n % (t * p):
        raise ValueError(f"tp x pp ({t} x {p} = {t * p}) must divide n_gpus ({n})")
    if n % (t * p * c):
        raise ValueError(f"tp x pp x cp ({t} x {p} x {c} = {t * p * c}) must divide "
                         f"n_gpus ({n})")
    act_given, b = _activation_inputs(activation_bytes, cfg, batch, seq_len, recompute)
    if seq_len is not None and seq_len % c:
        raise ValueError(f"cp must divide seq_len ({seq_len}), got {c}")
    if (embedding_on_ends or attention is not None) and cfg is None:
        raise ValueError("embedding_on_ends and attention need cfg, the model's shape")
    state = memory.model_state_bytes(precision, optimizer)
    dp = n // (t * p * c)
    if embedding_on_ends and cfg is not None:
        shard = params_per_gpu(psi, tp=t, pp=p, layers=cfg.layers,
                               embedding_params=embedding_params(cfg),
                               output_params=param_breakdown(cfg)["lm_head"],
                               tied_embeddings=cfg.tied_embeddings and p > 1)
    else:
        shard = params_per_gpu(psi, tp=t, pp=p, layers=cfg.layers if cfg else None)
    model_state = _zero_bytes(shard, state.weights, state.gradients, state.optimizer,
                              zero_stage, dp * c)
    held = _activations(cfg, seq_len, b, recompute, act_given, t, p, attention, dropout, c)
    return LayoutMemory(dp=dp, tp=t, pp=p, zero_stage=zero_stage, params_per_gpu=shard,
                        model_state=model_state, activations=held,
                        total=model_state + held, cp=c)


@dataclass(frozen=True)
class LayoutRecommendation:
    """The cheapest parallel layout that fits, and why.

    Attributes
    ----------
    name : str
        e.g. ``"data parallel"``, ``"ZeRO-2"``, ``"tensor parallel + ZeRO-1"``.
    dp, tp, pp : int
        Data-, tensor- and pipeline-parallel degrees (``dp * tp * pp * cp = n_gpus``).
    zero_stage : int
        ZeRO stage used across the data-parallel group (0 = none).
    memory_per_gpu : float
        Bytes per GPU: model state plus activations.
    fits : bool
        Whether ``memory_per_gpu <= gpu_memory``.
    reason : str
        One or two sentences a learner can read.
    params_per_gpu : float
        Parameters one GPU holds (:func:`params_per_gpu`): the shard whose gradients the
        data-parallel group synchronises.
    cp : int
        Context-parallel degree (1: none; then ``dp * tp * pp * cp = n_gpus``).
    """

    name: str
    dp: int
    tp: int
    pp: int
    zero_stage: int
    memory_per_gpu: float
    fits: bool
    reason: str
    params_per_gpu: float
    cp: int = 1


#: Without a cap from the model (its layers), the search tries at most this many stages.
MAX_STAGES = 2**20


def divisors(n: int, limit: int | None = None) -> list[int]:
    """The divisors of ``n`` no larger than ``limit`` (default ``n``), ascending.

    Trial division up to ``min(sqrt(n), limit)``: a divisor ``d > sqrt(n)`` pairs with
    ``n // d < sqrt(n)``, so the work is bounded by the square root (2^40 GPUs: about a
    million steps), and by ``limit`` when that is smaller. Past 2^42 GPUs (more than two
    million steps) give a ``limit`` of at most 2^21.
    """
    n = v.positive_int("n", n)
    top = n if limit is None else v.positive_int("limit", limit)
    root = math.isqrt(n)
    steps = min(root, top)
    if steps > 2**21:
        raise ValueError(f"n = {n:.3g} is too large to search for all its divisors: give a "
                         "limit of at most 2^21 (2,097,152)")
    small, large = [], []
    for k in range(1, steps + 1):
        if n % k == 0:
            small.append(k)
            if n // k != k and n // k <= top:
                large.append(n // k)
    return small + large[::-1]


def _powers_of_two_dividing(n: int, limit: int) -> list[int]:
    out, k = [], 2
    while k <= limit:
        if n % k == 0:
            out.append(k)
        k *= 2
    return out


def recommend_layout(
    *,
    n_params: float,
    gpu_memory: float,
    n_gpus: int,
    gpus_per_node: int = 8,
    precision: str = "mixed",
    optimizer: str = "adam",
    activation_bytes: float = 0,
    cfg: TransformerConfig | None = None,
    batch: int = 1,
    seq_len: int | None = None,
    recompute: str = "none",
) -> LayoutRecommendation:
    """Name the cheapest parallel layout whose memory per GPU fits, and say why.

    Tried in order of communication cost, the first that fits wins:

    1. plain data parallel (every GPU holds the whole training state);
    2. ZeRO-1, ZeRO-2, ZeRO-3 over all ``n_gpus`` (same traffic as data parallel for 1
       and 2, 1.5x for 3; Rajbhandari et al. 2020);
    3. tensor parallel inside a node (``tp`` = 2, 4, ... up to ``gpus_per_node``), with
       ZeRO-1 across the data-parallel groups (Megatron-LM's distributed optimizer); it
       needs fast intra-node links and divides weights and activations by ``tp``;
    4. pipeline parallel across nodes on top of a full node of tensor parallelism, the
       fewest stages first (adds a bubble; first-stage activations do not shrink with
       1F1B, Korthikanti et al.). Any ``pp`` dividing ``n_gpus / tp`` is tried, up to
       the number of layers: stages may hold unequal numbers of layers, and the largest,
       ``ceil(L/pp)`` layers, sets the memory (Llama 3 405B: 126 layers on 16 stages);
    5. the same tensor and pipeline sizes with ZeRO-2, then ZeRO-3, across the
       data-parallel groups (Llama 3 405B ran ZeRO-2 with 16 stages): with gradient
       accumulation their shards move at every micro-batch;
    6. with ``cfg`` and ``seq_len``, context parallelism (``cp`` = 2, 4, ... dividing the
       sequence) beside the node's tensor parallelism, ZeRO-1, 2 then 3 over the
       ``dp x cp`` GPUs holding the same weights: a long sequence's activations, which
       no pipeline depth shrinks, split over ``cp`` GPUs (Llama 3 405B's 128K stage ran
       cp 16, Dubey et al. 2024, Table 4). Traffic at every attention layer, so last.

    Memory per GPU is :func:`layout_memory`.

    Parameters
    ----------
    n_params : float
        Parameters ``Psi``.
    gpu_memory : float
        Bytes per GPU (e.g. ``gpu("H100 SXM").memory_bytes``).
    n_gpus : int
        GPUs available.
    gpus_per_node : int
        GPUs sharing a fast intra-node link (NVLink); the largest tensor-parallel size.
    precision, optimizer : str
        Training precision and optimizer (see :func:`gpulesson.memory.model_state_bytes`).
    activation_bytes : float
        Activation bytes of one micro-batch for the whole model without tensor
        parallelism. Ignored when ``cfg`` and ``seq_len`` are given, which compute them
        as :func:`layout_memory` does (sequence parallel when ``tp > 1``).
    cfg : TransformerConfig, optional
        The model; also restricts ``tp`` to divisors of its heads and ``pp`` to at most
        its layers.
    batch, seq_len, recompute
        Micro-batch size, sequence length and recomputation mode for the activations.
    """
    psi = v.positive_number("n_params", n_params)
    mem = v.positive_number("gpu_memory", gpu_memory)
    n = v.positive_int("n_gpus", n_gpus)
    per_node = v.positive_int("gpus_per_node", gpus_per_node)
    act_given, b = _activation_inputs(activation_bytes, cfg, batch, seq_len, recompute)
    state = memory.model_state_bytes(precision, optimizer)
    w, g, k = state.weights, state.gradients, state.optimizer
    common = dict(n_params=psi, n_gpus=n, precision=precision, optimizer=optimizer,
                  activation_bytes=act_given, cfg=cfg, batch=b, seq_len=seq_len,
                  recompute=recompute)

    fmt = units.format_bytes
    cap = fmt(mem)
    tried: list[LayoutRecommendation] = []

    def candidate(name: str, tp: int, pp: int, stage: int, why: str, cp: int = 1) -> bool:
        lay = layout_memory(tp=tp, pp=pp, zero_stage=stage, cp=cp,  # type: ignore[arg-type]
                            **common)
        ok = lay.total <= mem
        tried.append(LayoutRecommendation(
            name=name, dp=lay.dp, tp=tp, pp=pp, zero_stage=stage, memory_per_gpu=lay.total,
            fits=ok, reason=why.format(need=fmt(lay.total), cap=cap),
            params_per_gpu=lay.params_per_gpu, cp=cp))
        return ok

    full_state = fmt((w + g + k) * psi)
    if candidate("data parallel", 1, 1, 0,
                 "Plain data parallelism fits: every GPU keeps the whole training state "
                 f"({full_state} of model state) plus activations, {{need}} of {{cap}}; it "
                 "has the least communication (one gradient all-reduce per step)."):
        return tried[-1]
    notes = {1: "partitioning the optimizer states",
             2: "partitioning optimizer states and gradients",
             3: "partitioning optimizer states, gradients and parameters"}
    if n > 1:
        for stage in (1, 2, 3):
            traffic = ("the same traffic as data parallelism" if stage < 3
                       else "1.5x the traffic of data parallelism")
            if candidate(f"ZeRO-{stage}", 1, 1, stage,
                         f"Data parallelism does not fit ({full_state} of model state per "
                         f"GPU). ZeRO-{stage} ({notes[stage]} over {n:,} GPUs) needs {{need}} "
                         f"of {{cap}}, with {traffic}."):
                return tried[-1]
    heads_ok = (lambda t: cfg.heads % t == 0 and cfg.hidden % t == 0) if cfg else (
        lambda t: True)
    tps = [t for t in _powers_of_two_dividing(n, min(per_node, n)) if heads_ok(t)]
    for tp in tps:
        dp = n // tp
        zero = " + ZeRO-1" if dp > 1 else ""
        if candidate(f"tensor parallel (tp={tp}){zero}", tp, 1, 1 if dp > 1 else 0,
                     f"Sharding over data parallelism alone does not fit. Tensor parallelism "
                     f"over {tp} GPUs of a node splits weights and activations"
                     + (f", with ZeRO-1 across {dp:,} data-parallel groups" if dp > 1 else "")
                     + ": {need} of {cap}. It needs the "
                     "node's fast links (NVLink)."):
            return tried[-1]
    tp = tps[-1] if tps else 1
    rest = n // tp
    most = min(rest, cfg.layers) if cfg else min(rest, MAX_STAGES)
    for pp in divisors(rest, most)[1:]:
        dp = rest // pp
        zero = " + ZeRO-1" if dp > 1 else ""
        stages = (f"at most {stage_layers(cfg.layers, pp)} of the {cfg.layers} layers per "
                  "stage, " if cfg else "")
        if candidate(f"tensor (tp={tp}) + pipeline (pp={pp}) parallel{zero}", tp, pp,
                     1 if dp > 1 else 0,
                     f"Tensor parallelism within a node is not enough. Adding {pp} pipeline "
                     f"stages across nodes ({stages}tp={tp}, dp={dp}) brings it to {{need}} "
                     "of {cap}; the pipeline costs a bubble of (pp-1)/microbatches."):
            return tried[-1]
    for stage in (2, 3):  # step 5: gradients, then parameters, sharded too
        for pp in (p for p in divisors(rest, most) if rest // p > 1):
            what = f"tensor (tp={tp})" + (f" + pipeline (pp={pp})" if pp > 1 else "")
            if candidate(f"{what} parallel + ZeRO-{stage}", tp, pp, stage,
                         f"With ZeRO-1 no pipeline depth fits. ZeRO-{stage} ({notes[stage]} "
                         f"over {rest // pp:,} data-parallel groups) with tp={tp}, pp={pp} "
                         "brings it to {need} of {cap}; its shards move at every micro-batch."):
                return tried[-1]
    # step 6: long sequences whose activations no depth of pipeline shrinks (1F1B's first
    # stage holds pp micro-batches): context parallelism splits each sequence
    cps = ([c for c in _powers_of_two_dividing(rest, rest) if c > 1 and seq_len % c == 0]
           if cfg is not None and seq_len is not None else [])
    for c in cps:
        for stage in (1, 2, 3):
            dp = rest // c
            if stage > 1 and dp * c == 1:
                break
            if candidate(f"tensor (tp={tp}) + context (cp={c}) parallel + ZeRO-{stage}", tp,
                         1, stage,
                         f"At {seq_len:,} tokens a sequence's activations do not fit even "
                         f"with tensor and pipeline parallelism. Context parallelism over "
                         f"{c} GPUs gives each {seq_len // c:,} of the tokens; with tp={tp} "
                         f"and ZeRO-{stage} ({notes[stage]} over the {dp * c} GPUs that hold "
                         "the same weights) it needs {need} of {cap}. Each attention layer "
                         "then passes keys and values around the context-parallel ring.",
                         cp=c):
                return tried[-1]
    best = min(tried, key=lambda r: r.memory_per_gpu)
    total = (w + g + k) * psi + _activations(cfg, seq_len, b, recompute, act_given, 1, 1)
    short = memory.gpus_needed(total, mem)
    reason = (f"Nothing fits on {n} GPUs of {cap}: the most sharded layout tried ({best.name}, "
              f"dp={best.dp}, tp={best.tp}, pp={best.pp}) still needs {fmt(best.memory_per_gpu)} "
              f"per GPU. The training state totals {fmt(total)}, at least {short} such GPUs "
              "even with perfect sharding; add GPUs, recompute activations or shrink the "
              "micro-batch.")
    return LayoutRecommendation(name=best.name, dp=best.dp, tp=best.tp, pp=best.pp,
                                zero_stage=best.zero_stage, memory_per_gpu=best.memory_per_gpu,
                                fits=False, reason=reason, params_per_gpu=best.params_per_gpu,
                                cp=best.cp)


v.guard_module(globals())
