"""Serve a mixture-of-experts model with expert parallelism and data-parallel attention.

vLLM and SGLang offer two layouts beside plain tensor parallelism for MoE models; a
:class:`MoEParallel` describes one, and :func:`gpulesson.planning.plan_serving` takes it as
``dp`` and ``expert_parallel``:

* **Expert parallelism** (vLLM ``--enable-expert-parallel``): the MoE layers' ``tp x dp``
  GPUs hold whole experts, ``E / ep`` each, and no expert is cut (vLLM
  ``model_executor/layers/fused_moe/config.py``, ``FusedMoEParallelConfig.make``: ``ep_size``
  is the tensor-parallel size flattened across the data-parallel ranks, ``tp_size`` 1).
  Without it, the MoE layers are tensor-parallel over all ``tp x dp`` GPUs (the same
  function, ``flatten_tp_across_dp_and_pcp``), so ``tp x dp`` must divide each expert's
  intermediate size (``FusedMoEConfig.__post_init__`` asserts it). Experts that do not divide
  evenly go one more to the first ranks (``determine_expert_map``): the busiest GPU holds
  ``ceil(E / ep)``. That is the rule since vLLM pull request #21497 (merged 2025-07-24);
  before it the last rank took the whole remainder (30 experts on 8 GPUs: 9 on the last,
  not 4), which the planner does not model.
* **Data-parallel attention** (vLLM ``--data-parallel-size`` with expert parallelism; SGLang
  ``--enable-dp-attention``, whose ``--tp 8 --dp 8`` is ``tp=1, dp=8`` here): ``dp`` engines
  each run attention, the dense layers and the shared experts for their own requests on
  ``tp`` GPUs, a whole copy of those weights per engine, and each keeps its own KV cache,
  printed per engine. Latent attention's cache, which tensor parallelism copies onto every
  GPU (:func:`gpulesson.inference.kv_cache_bytes_per_token_per_gpu`), is then held once per
  engine: ``dp`` times the distinct tokens in the same bytes per token, less what the
  copied non-expert weights take.

A decode step of the ``tp x dp`` GPUs (:func:`decode_read_bytes`, :func:`dispatch_time`):
each GPU reads its engine's non-expert weights and its share of the experts the whole
group's batch routes to (:func:`gpulesson.inference.decode_weight_bytes`, uniform routing);
each MoE layer dispatches the tokens to the experts' GPUs and combines the results, two
all-to-alls (:func:`gpulesson.traffic.expert_parallel_traffic`, ``backward=False``). vLLM's
default backend ``allgather_reducescatter`` (``vllm/config/parallel.py``,
``ParallelConfig.all2all_backend``) gathers every token onto every GPU and reduce-scatters
the results: ``ep`` copies of each token. DeepEP (vLLM ``deepep_low_latency`` and
``deepep_high_throughput``, SGLang ``--moe-a2a-backend deepep``) sends a token only to the
GPUs of its ``k`` experts, ``min(k, ep)`` copies, and with node-limited routing at most
:func:`gpulesson.traffic.routed_node_limit` of them cross the network. With ``tp > 1`` and
``dp > 1`` the model spreads the group's tokens evenly over its GPUs: vLLM runs such MoE
layers sequence-parallel (:func:`sequence_parallel`), and each GPU holds and reads the
shared experts whole (:func:`gpulesson.planning.checkpoints.gpu_weight_bytes`). Expert
load imbalance is not modelled (uniform routing): no engine publishes a figure for it at
serving.

Standard library only (the site runs it).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gpulesson import _validate as v
from gpulesson import distributed, inference, network, traffic

from ._adapt import GPUView, ModelView

__all__ = ["ALL2ALL_BACKENDS", "MoEParallel", "check_domains", "decode_read_bytes",
           "dispatch_time", "sequence_parallel",
           "group_link_bandwidth", "moe_parallel", "moe_problems", "weight_bytes_per_gpu"]

#: Token dispatch backends: vLLM's default (every token to every GPU of the group) and
#: DeepEP (each token to the GPUs of its experts). As in vLLM
#: (``FusedMoEParallelConfig.use_all2all_kernels``: ``dp_size > 1 and use_ep``), the
#: choice matters only with expert parallelism and ``dp > 1``; otherwise every token is
#: gathered (``dp > 1``) or the tensor-parallel all-reduce combines (``dp = 1``).
ALL2ALL_BACKENDS = ("allgather_reducescatter", "deepep")
#: Cards without NVLink (L4, L40S, RTX 4090, RTX 5090) that one server holds, joined by
#: PCIe: up to 8 in a cloud instance (AWS Batch user guide, "Run GPU jobs": g5.48xlarge
#: with 8 A10G, g6.12xlarge with 4 L4). A group may span them; its collectives run at the
#: card's PCIe link (``GPUSpec.link_bandwidth_one_way``).
PCIE_SERVER_GPUS = 8


@dataclass(frozen=True)
class MoEParallel:
    """``dp`` engines of ``tp`` GPUs; MoE layers by expert (``expert_parallel``) or by
    tensor over all ``tp x dp`` GPUs; tokens dispatched by ``all2all``."""

    tp: int
    dp: int = 1
    expert_parallel: bool = False
    all2all: str = "allgather_reducescatter"

    def __post_init__(self) -> None:
        v.positive_int("tp", self.tp)
        v.positive_int("dp", self.dp)
        v.boolean("expert_parallel", self.expert_parallel)
        v.choice("all2all", self.all2all, ALL2ALL_BACKENDS)

    @property
    def gpus(self) -> int:
        """GPUs of one group: ``tp x dp``."""
        return self.tp * self.dp

    @property
    def ep(self) -> int:
        """Expert-parallel size: ``tp x dp`` with expert parallelism, else 1."""
        return self.gpus if self.expert_parallel else 1


def moe_parallel(model: ModelView, *, tp: int, dp: int = 1, expert_parallel: bool = False,
                 all2all: str = "allgather_reducescatter") -> MoEParallel:
    """A checked :class:`MoEParallel`: ``ValueError`` for expert parallelism or ``dp > 1``
    on a dense model (its data-parallel engines are independent replicas, which the
    planner already counts) and for more expert-parallel GPUs than experts."""
    t, d = v.positive_int("tp", tp), v.positive_int("dp", dp)
    ep = v.boolean("expert_parallel", expert_parallel)
    a2a = v.choice("all2all_backend", all2all, ALL2ALL_BACKENDS)
    if (ep or d > 1) and not model.is_moe:
        what = "expert_parallel" if ep else f"dp = {d}"
        raise ValueError(f"{what}: {model.name} is a dense model, it has no experts to "
                         "spread; serve more requests with replicas (qps) instead")
    if ep and t * d > model.routed_experts:
        raise ValueError(f"expert_parallel: tp x dp = {t * d} GPUs exceed the "
                         f"{model.routed_experts} routed experts of {model.name}; a GPU "
                         "would hold none")
    return MoEParallel(t, d, ep, a2a)


def moe_problems(model: ModelView, par: MoEParallel) -> list[str]:
    """Why vLLM would refuse the layout: without expert parallelism the MoE layers cut each
    expert's intermediate size over all ``tp x dp`` GPUs, which must divide it."""
    inter = int(model.cfg.expert_ffn or 0)
    if par.gpus > 1 and not par.expert_parallel and inter % par.gpus:
        return [f"tp x dp = {par.gpus} must divide the experts' intermediate size ({inter:,}) "
                "when the MoE layers are tensor-parallel (vLLM asserts it); use "
                "expert_parallel or other degrees"]
    return []


def _expert_share(model: ModelView, par: MoEParallel) -> float:
    """Share of the routed experts on the busiest GPU: ``ceil(E / ep) / E`` with expert
    parallelism, else ``1 / (tp x dp)``."""
    if par.expert_parallel:
        e = model.routed_experts
        return -(-e // par.ep) / e
    return 1 / par.gpus


def weight_bytes_per_gpu(model: ModelView, par: MoEParallel, weights: float,
                         routed: float) -> float:
    """Weight bytes on the busiest GPU: the non-expert ``weights - routed`` cut over the
    engine's ``tp`` GPUs (copied on every engine) plus its share of the ``routed`` expert
    bytes. DeepSeek-V3 in FP8 on 8 GPUs, ``dp=8`` with experts whole: the 17.1 B
    non-expert parameters on each plus 32 of the 256 experts."""
    other = _non_expert(weights, routed)
    return other / par.tp + routed * _expert_share(model, par)


def _non_expert(weights: float, routed: float) -> float:
    """``weights - routed``, each checked: ``routed`` (the routed experts' bytes) is a part
    of ``weights``."""
    w, r = v.nonneg_number("weights", weights), v.nonneg_number("routed", routed)
    if r > w:
        raise ValueError(f"routed ({r:g}) must be at most weights ({w:g}): the routed "
                         "experts' bytes are a part of the weights")
    return w - r


def sequence_parallel(par: MoEParallel) -> bool:
    """Whether vLLM runs ``par``'s MoE layers sequence-parallel: expert parallelism with
    ``tp > 1`` and ``dp > 1`` (``vllm/config/parallel.py``,
    ``ParallelConfig.use_sequence_parallel_moe``, both backends here). Each of an engine's
    GPUs then takes ``1/tp`` of its tokens into the MoE layers and holds the shared
    experts whole (``DeepseekV2MLP``: ``disable_tp=is_sequence_parallel``)."""
    return par.expert_parallel and par.tp > 1 and par.dp > 1


def decode_read_bytes(model: ModelView, par: MoEParallel, weights: float, routed: float,
                      batch: float, *, shared: float = 0.0) -> float:
    """Weight bytes one GPU reads in a decode step of ``batch`` sequences over the whole
    group: its engine's non-expert weights and its share of the experts the batch routes
    to (:func:`gpulesson.inference.decode_weight_bytes`, uniform routing). ``shared``: the
    shared experts' bytes (a part of ``weights - routed``), read whole on every GPU when
    the MoE layers are :func:`sequence_parallel`, else cut over ``tp`` as the rest."""
    other = _non_expert(weights, routed)
    whole = v.nonneg_number("shared", shared) * (1 - 1 / par.tp) \
        if sequence_parallel(par) else 0.0
    seqs = v.positive_number("batch", batch)
    if not model.expert_params:
        raise ValueError(f"model: {model.name} is a dense model; decode_read_bytes splits "
                         "the routed experts' reads (inference.decode_weight_bytes for all)")
    params = model.total_params
    touched = inference.decode_weight_bytes(model.cfg, batch=max(int(seqs), 1),
                                            bytes_per_param=1)
    used = (touched - (params - model.expert_params)) / model.expert_params
    return other / par.tp + whole + routed * used * _expert_share(model, par)


def check_domains(par: MoEParallel, gpu: GPUView) -> MoEParallel:
    """``par`` if its ``tp x dp`` GPUs fit one NVLink domain or fill whole ones (the
    network model, :func:`gpulesson.network.group_bus_bandwidth`, counts whole domains);
    else ``ValueError`` naming ``dp``."""
    n, d = par.gpus, gpu.domain
    if par.dp > 1 and d > 1 and n > d and n % d:
        raise ValueError(f"dp: tp x dp = {n} GPUs must fit one {d}-GPU NVLink domain of "
                         f"the {gpu.name} or fill whole ones (a multiple of {d})")
    return par


def group_link_bandwidth(gpu: GPUView, size: int) -> float:
    """Bus bandwidth of a group of ``size`` consecutive GPUs: NVLink inside a domain, PCIe
    between the cards of one server without NVLink, else every GPU's own NIC
    (:func:`gpulesson.network.group_bus_bandwidth`). 1 for a group of one."""
    n = v.positive_int("size", size)
    if n == 1:
        return 1.0
    if gpu.domain >= n:
        return distributed.achievable_bandwidth(gpu.nvlink_bandwidth, "nvlink")
    if gpu.domain <= 1 and n <= PCIE_SERVER_GPUS:  # cards of one server, over PCIe
        return distributed.achievable_bandwidth(gpu.nvlink_bandwidth, "network")
    return network.group_bus_bandwidth(
        stride=1, size=n, domain=max(gpu.domain, 1),
        nvlink_line_rate=gpu.nvlink_bandwidth if gpu.domain > 1 else None,
        nic_line_rate=gpu.scaleout_bandwidth).bus_bandwidth


#: Latency of one collective in the serving step (as the tensor-parallel all-reduces).
LATENCY = 10e-6


def dispatch_time(model: ModelView, par: MoEParallel, gpu: GPUView, tokens: float,
                  bytes_per_value: float = 2) -> float:
    """Seconds of one step's dispatches and combines (two all-to-alls per MoE layer) for
    ``tokens`` tokens over the whole group, spread evenly over its GPUs: each token sent
    ``ep`` times (``allgather_reducescatter``) or ``min(k, ep)`` times (``deepep``, at
    most :func:`gpulesson.traffic.routed_node_limit` nodes when the group spans several).
    Without expert parallelism the tensor-parallel MoE layers of ``dp`` engines gather
    every token too (``ep`` copies, over the ``tp x dp`` GPUs). 0 for one engine
    (``dp = 1``: the tensor-parallel all-reduce combines)."""
    if par.dp == 1:
        return 0.0
    n, k = par.gpus, model.experts_per_token
    deepep = par.all2all == "deepep" and par.expert_parallel
    copies = min(k, n) if deepep else n
    limit = None
    cfg = model.cfg
    if (deepep and n > max(gpu.domain, 1) and cfg.routing_groups
            and model.routed_experts % n == 0):
        limit = traffic.routed_node_limit(
            experts=model.routed_experts, routing_groups=cfg.routing_groups,
            routing_group_topk=cfg.routing_group_topk, ep=n,
            ranks_per_node=max(gpu.domain, 1))
    one = traffic.expert_parallel_traffic(
        tokens=1, hidden=model.hidden, experts_per_token=copies, moe_layers=model.moe_layers,
        ep=n, bytes_per_value=bytes_per_value, node_limit=limit, backward=False)
    each = replace(one, size_bytes=one.size_bytes * v.nonneg_number("tokens", tokens) / n)
    return each.time(bandwidth=group_link_bandwidth(gpu, n), latency=LATENCY)


v.guard_module(globals())
