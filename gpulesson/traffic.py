"""The bytes every parallel dimension moves, as collectives a calculator can time.

Lesson 7's "5D parallelism": each dimension of a layout sends something different, over a
group of a different size, on a link of a different speed
(:func:`gpulesson.distributed.group_tier`):

======================  =====================================  ==========================
dimension               what moves, per micro-batch             collective
======================  =====================================  ==========================
tensor (``tp``)         ``b*s*h`` activations, 4 per layer      all-reduce (or reduce-
                                                                scatter + all-gather)
pipeline (``pp``)       ``b*s*h/tp`` across each stage          send/receive
                        boundary, forward and backward
context (``cp``)        K and V of the whole sequence,          all-gather, reduce-scatter
                        every layer
expert (``ep``)         each token's ``h`` values to its        all-to-all, 4 per MoE
                        ``k`` experts and back                  layer
data (``dp``)           the gradients of the GPU's shard,       reduce-scatter + all-gather
                        once per step                           (or all-reduce)
======================  =====================================  ==========================

A :class:`Traffic` holds ``count`` collectives of ``size_bytes`` each (nccl-tests' ``S``)
over ``group`` ranks; :meth:`Traffic.time` prices them with
:func:`gpulesson.distributed.collective_time` (or NVLink SHARP,
:func:`gpulesson.distributed.sharp_allreduce_time`) at the bandwidth of the tier they cross.
Standard library only (the site runs it).

Taught in: ``notebooks/distributed_math.ipynb`` (bytes of every dimension) and
``notebooks/planning_dashboard.ipynb`` (the planner's breakdown).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpulesson import _validate as v
from gpulesson import memory
from gpulesson.distributed import bus_bandwidth_factor, collective_time, sharp_allreduce_time

__all__ = [
    "Traffic",
    "context_parallel_traffic",
    "data_parallel_traffic",
    "expert_parallel_traffic",
    "pipeline_traffic",
    "routed_node_limit",
    "tensor_parallel_traffic",
]


@dataclass(frozen=True)
class Traffic:
    """``count`` collectives of ``size_bytes`` each (nccl-tests' ``S``) over ``group`` ranks.

    ``dimension`` names the parallel dimension (``"tensor"``, ``"pipeline"``, ``"context"``,
    ``"expert"``, ``"data"``), ``collective`` a key of :data:`COLLECTIVES`, ``what`` the
    tensor that moves. :attr:`bytes_per_rank` is what one rank sends (and receives).
    """

    dimension: str
    collective: str
    size_bytes: float
    count: float
    group: int
    what: str

    @property
    def bytes_per_rank(self) -> float:
        """``count * factor(collective, group) * size_bytes`` (0 for a group of one)."""
        return self.count * bus_bandwidth_factor(self.collective, self.group) * self.size_bytes

    def time(self, *, bandwidth: float, latency: float = 0, sharp_line_rate: float = 0
             ) -> float:
        """Seconds for all ``count`` collectives at bus ``bandwidth`` (alpha-beta model).

        ``sharp_line_rate`` > 0: all-reduces run in the switch
        (:func:`sharp_allreduce_time` at that NVLink line rate). A group of one costs 0.
        """
        if self.group == 1 or self.count == 0:
            return 0.0
        if sharp_line_rate and self.collective == "all_reduce":
            each = sharp_allreduce_time(self.size_bytes, line_rate=sharp_line_rate,
                                        latency=latency)
        else:
            each = collective_time(self.collective, self.size_bytes, self.group,
                                   bandwidth=bandwidth, latency=latency)
        return self.count * each


def _traffic(dimension: str, collective: str, size: float, count: float, group: int,
             what: str) -> Traffic:
    v.positive_int("group size", group)
    return Traffic(dimension, collective, float(size), float(count), group, what)


def tensor_parallel_traffic(*, micro_batch: int, seq_len: int, hidden: int, layers: int,
                            tp: int, bytes_per_value: float = 2, recompute: str = "none",
                            sequence_parallel: bool = True) -> Traffic:
    """Tensor-parallel traffic of one micro-batch through ``layers`` layers (Megatron-LM).

    Each layer all-reduces its ``b*s*h`` output twice forward (after attention and after the
    MLP) and twice backward: "four all-reduce operations in a single forward and backward
    pass" (Korthikanti et al. 2022, section 4.2.2). Sequence parallelism turns each into a
    reduce-scatter plus an all-gather of the same bytes; full recomputation repeats the
    forward pair (6 per layer). ``seq_len`` is the tokens one GPU holds (``s / cp``).
    """
    b, s = v.positive_int("micro_batch", micro_batch), v.positive_int("seq_len", seq_len)
    h, n_layers = v.positive_int("hidden", hidden), v.positive_int("layers", layers)
    per_layer = 6 if v.choice("recompute", recompute, memory.RECOMPUTE_MODES) == "full" else 4
    size = b * s * h * v.positive_number("bytes_per_value", bytes_per_value)
    if v.boolean("sequence_parallel", sequence_parallel):
        # reduce-scatter + all-gather move what one all-reduce moves: count them as that
        return _traffic("tensor", "all_reduce", size, per_layer * n_layers, tp,
                        "b·s·h activations: reduce-scatter + all-gather (sequence parallel)")
    return _traffic("tensor", "all_reduce", size, per_layer * n_layers, tp,
                    "b·s·h activations: all-reduce")


def pipeline_traffic(*, micro_batch: int, seq_len: int, hidden: int, tp: int = 1,
                     interleave: int = 1, bytes_per_value: float = 2,
                     pp: int = 2) -> Traffic:
    """Point-to-point traffic of one micro-batch across one stage boundary.

    Forward sends the ``b*s*h`` activations to the next stage, backward their gradient back:
    2 transfers, ``2 * v`` with ``v`` model chunks per GPU (interleaved schedule, Narayanan
    et al. 2021, section 2.2.2). Megatron's scatter/gather optimisation splits each transfer
    over the ``tp`` GPUs of a stage (section 4.1): ``b*s*h/tp`` bytes per GPU. ``pp == 1``
    sends nothing.
    """
    b, s = v.positive_int("micro_batch", micro_batch), v.positive_int("seq_len", seq_len)
    h, t = v.positive_int("hidden", hidden), v.positive_int("tp", tp)
    k, p = v.positive_int("interleave", interleave), v.positive_int("pp", pp)
    size = b * s * h * v.positive_number("bytes_per_value", bytes_per_value) / t
    return _traffic("pipeline", "sendrecv", size, 2 * k if p > 1 else 0, max(p, 1),
                    "b·s·h/tp activations forward, their gradient backward")


def context_parallel_traffic(*, micro_batch: int, seq_len: int, kv_dim: int, layers: int,
                             cp: int, tp: int = 1, bytes_per_value: float = 2,
                             recompute: str = "none") -> Traffic:
    """Context-parallel traffic of one micro-batch: the keys and values of every layer.

    Each of the ``cp`` GPUs holds ``s/cp`` tokens; attention needs every earlier token's K
    and V, so each layer all-gathers K and V (``2*b*s*kv_dim`` values for the full sequence,
    ``kv_dim = kv_heads * head_dim``, split over ``tp``) forward and reduce-scatters their
    gradients backward (Llama 3 all-gathers K and V: Dubey et al. 2024, section 3.3.2; ring
    attention passes the same bytes in ``cp - 1`` steps). Full recomputation gathers again.
    ``seq_len`` is the whole sequence.
    """
    b, s = v.positive_int("micro_batch", micro_batch), v.positive_int("seq_len", seq_len)
    kv, n_layers = v.positive_int("kv_dim", kv_dim), v.positive_int("layers", layers)
    t = v.positive_int("tp", tp)
    per_layer = 3 if v.choice("recompute", recompute, memory.RECOMPUTE_MODES) == "full" else 2
    size = 2 * b * s * kv / t * v.positive_number("bytes_per_value", bytes_per_value)
    return _traffic("context", "all_gather", size, per_layer * n_layers, cp,
                    "K and V of the whole sequence: all-gather forward, reduce-scatter of "
                    "their gradients backward")


def expert_parallel_traffic(*, tokens: int, hidden: int, experts_per_token: int,
                            moe_layers: int, ep: int, bytes_per_value: float = 2,
                            dispatch_bytes_per_value: float | None = None,
                            node_limit: int | None = None, backward: bool = True) -> Traffic:
    """Expert-parallel traffic of ``tokens`` tokens on one GPU through ``moe_layers`` layers.

    Every MoE layer sends each token's ``h`` activations to its ``k`` routed experts and
    brings the ``k`` results back: an all-to-all to dispatch and one to combine, forward and
    again backward, 4 per layer, of ``tokens * k * h`` values each (Lepikhin et al. 2020,
    GShard; DeepSeek-AI 2024, DeepSeek-V3 section 3.2.2). ``(ep-1)/ep`` of it leaves the GPU.
    ``dispatch_bytes_per_value`` = 1 models DeepSeek-V3's FP8 dispatch (combine stays BF16);
    the count is then scaled so the total bytes are right.

    ``node_limit`` = M models node-limited routing, the network share of it: DeepSeek-V3
    sends each token to experts on at most M = 4 nodes, once per node over InfiniBand, and
    forwards it to that node's chosen experts over NVLink (section 3.2.2), so the network
    carries ``min(k, M)`` copies of each token instead of ``k`` (an upper bound: the token's
    own node may be one of the M). :func:`routed_node_limit` gives M from a model's
    group-limited routing and a layout.

    ``backward=False`` counts the forward pass only, 2 per layer (inference: a dispatch
    and a combine per MoE layer, :mod:`gpulesson.planning.moe_serving`).
    """
    n_tok, h = v.positive_int("tokens", tokens), v.positive_int("hidden", hidden)
    k, n_layers = v.positive_int("experts_per_token", experts_per_token), v.nonneg_int(
        "moe_layers", moe_layers)
    if node_limit is not None:
        k = min(k, v.positive_int("node_limit", node_limit))
    b = v.positive_number("bytes_per_value", bytes_per_value)
    d = b if dispatch_bytes_per_value is None else v.positive_number(
        "dispatch_bytes_per_value", dispatch_bytes_per_value)
    size = n_tok * k * h * b
    passes = 4 if v.boolean("backward", backward) else 2
    return _traffic("expert", "alltoall", size, passes * n_layers * (d + b) / (2 * b), ep,
                    f"each token's h activations to its k experts and back: {passes} "
                    "all-to-alls per MoE layer")


def routed_node_limit(*, experts: int, routing_groups: int, routing_group_topk: int,
                      ep: int, ranks_per_node: int) -> int | None:
    """The most nodes one token's routed experts can sit on under group-limited routing;
    ``None`` for a model without it (no groups, or every group picked).

    The router picks ``routing_group_topk`` of ``routing_groups`` equal groups of
    consecutive experts, and each token's experts come from those groups (Megatron-LM's
    ``moe_router_num_groups`` and ``moe_router_group_topk``, Hugging Face's ``n_group`` and
    ``topk_group``). Expert parallelism gives each of its ``ep`` ranks ``experts / ep``
    consecutive experts, ``ranks_per_node`` consecutive ranks to a node (an NVLink
    domain). A group spans the nodes its experts' ranks sit on, so a token visits at most
    ``routing_group_topk`` times that many, and never more than the group's nodes.
    DeepSeek-V3 (256 experts, 8 groups, 4 picked) on its 64 ranks, 8 to a node: a group is
    one node, so at most 4 of the 8 nodes (DeepSeek-AI 2024, sections 2.1.2 and 3.2.2;
    Megatron-LM sets the groups to the nodes of the expert-parallel group for this
    "node-limited routing"). On 128 ranks a group spans 2 nodes, and the bound, 8 of 16
    nodes, is no tighter than its 8 experts per token.

    Exact where ``ranks_per_node`` divides ``ep``; with a last node only partly in the
    group, an upper bound. ``ValueError`` for ranks that do not divide the experts (no
    placement to count).
    """
    e, g = v.positive_int("experts", experts), v.nonneg_int("routing_groups", routing_groups)
    n, r = v.positive_int("ep", ep), v.positive_int("ranks_per_node", ranks_per_node)
    topk = v.nonneg_int("routing_group_topk", routing_group_topk)
    if e % n:
        raise ValueError(f"ep ({n}) must divide experts ({e}): each rank holds whole experts")
    if g and e % g:
        raise ValueError(f"routing_groups ({g}) must divide experts ({e})")
    if g and not 1 <= topk <= g:
        raise ValueError(f"routing_group_topk must be between 1 and routing_groups ({g}), "
                         f"got {topk}")
    if g == 0 or topk == g:
        return None
    # a group of L consecutive experts starting o experts into a node of N experts spans
    # (o + L - 1) // N + 1 nodes; the starts i*L (mod N) reach every multiple of gcd(L, N)
    # below N when the nodes are whole (r divides ep), so the latest is N - gcd(L, N)
    group, node = e // g, e // n * r
    spans = (node - math.gcd(group, node) + group - 1) // node + 1
    return min(topk * spans, -(-n // r))


def data_parallel_traffic(shard_params: float, *, dp: int, zero_stage: int = 1,
                          grad_bytes: float = 2, param_bytes: float = 2) -> tuple[Traffic, ...]:
    """The gradient synchronisation of one step, as collectives (same volumes as
    :func:`data_parallel_sync_time`).

    Stage 0: one all-reduce of the gradients. Stages 1-2 (and Megatron's distributed
    optimizer): a reduce-scatter of the gradients and an all-gather of the updated
    parameters. Stage 3 gathers the parameters once more for the backward pass
    (Rajbhandari et al. 2020, section 7). ``grad_bytes`` 4 for FP32 reductions (Llama 3
    reduce-scatters gradients in FP32: Dubey et al. 2024, section 3.3.4).
    """
    psi = v.positive_number("shard_params", shard_params)
    nd = v.positive_int("dp", dp)
    if isinstance(zero_stage, bool) or zero_stage not in (0, 1, 2, 3):
        raise ValueError(f"zero_stage must be 0, 1, 2 or 3, got {zero_stage!r}")
    g = psi * v.positive_number("grad_bytes", grad_bytes)
    w = psi * v.positive_number("param_bytes", param_bytes)
    if zero_stage == 0:
        return (_traffic("data", "all_reduce", g, 1, nd, "gradients: all-reduce"),)
    out = [_traffic("data", "reduce_scatter", g, 1, nd, "gradients: reduce-scatter"),
           _traffic("data", "all_gather", w, 1, nd, "updated parameters: all-gather")]
    if zero_stage == 3:
        out.append(_traffic("data", "all_gather", w, 1, nd,
                            "parameters gathered again for the backward pass"))
    return tuple(out)


v.guard_module(globals())
