"""Plan a training run that respects physics: memory, batch, bubble, recompute, links.

:func:`plan_training` predicts the step time of a layout from first principles and the
MFU follows from it (an output, never an input):

* **compute**: every matrix product at its real shape, with tile and wave quantization, and
  attention at FlashAttention's rate (:func:`gpulesson.planning.perf_model.step_terms`);
  FP8 speeds up the layers' products (attention, the router and the output layer stay
  BF16) and MFU is quoted against the BF16 peak, as the papers that report it do (Llama
  3's "BF16 MFU");
* **recompute**: what recomputation repeats: the forward products again (``full``, ``8N``
  instead of ``6N``), the attention core again (``selective`` and ``full``); DeepSeek-V3's
  recipe (``recompute="deepseek-v3"``) and Megatron-Core's ``"mla-up-proj"`` run one more
  forward pass of latent attention's up-projections
  (:func:`gpulesson.activations.up_projection_params`) and keep the attention core's output
  (:data:`~gpulesson.planning.perf_model.ATTENTION_KEPT`);
* **memory-bound** work: norms, adds, rotary, activations, token permutation, dropout,
  cross-entropy and FP8 casts as bytes at the HBM bandwidth, and the optimizer step
  (``optimizer``, once a step); **launch**: the gaps between kernels and the host
  synchronisations of mixture-of-experts layers; **offload**: the activations copied to
  the host and back, where they do not hide behind compute;
* **exposed communication** of each dimension (:mod:`gpulesson.traffic`), on the tier it
  crosses at NCCL's achievable bandwidth (:func:`gpulesson.distributed.achievable_bandwidth`,
  NVLink SHARP for all-reduces where the switches reduce); tensor, context, expert and
  pipeline traffic is on the critical path unless an overlap fraction says otherwise, the
  gradient synchronisation hides only behind the backward pass of the last micro-batch
  (and the parameter all-gather behind the next forward);
* **bubble**: ``(p - 1)/(v m)`` of that work
  (:func:`gpulesson.distributed.pipeline_bubble_fraction`), or DualPipe's.

Each term is scaled by a factor fitted on the published runs
(:func:`default_factors`, :mod:`gpulesson.planning.calibration`); a plan keeps the
coefficient of every factor (:attr:`TrainingPlan.terms`) so that the fit and its
leave-one-out test (:func:`gpulesson.planning.published.leave_one_out`) are linear algebra.

Memory per GPU is :func:`gpulesson.distributed.layout_memory` with FlashAttention's
activations (or DeepSeek-V3's recipe, :data:`gpulesson.activations.DEEPSEEK_V3_RECIPE`),
context parallelism splitting the sequence and, with pipeline stages, the embedding and
output layer on the end stages; expert parallelism divides the routed experts; FP8 keeps
the linear layers' saved inputs in one byte; offloaded layers keep their activations in
host memory. It is held against the GPU's usable memory
(:meth:`gpulesson.hardware.GPUSpec.usable_memory`, the course's one figure: 81.2 GB on
an H100), less an optional reserve.

Taught in: ``notebooks/planning_dashboard.ipynb``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType
from typing import Any

from gpulesson import _validate as v
from gpulesson import (
    activations,
    cost,
    distributed,
    flops,
    hardware,
    memory,
    network,
    traffic,
    units,
)

from . import calibration, perf_model
from ._adapt import (
    ATTENTION_EFFICIENCY,
    MATMUL_EFFICIENCY,
    GPUView,
    ModelView,
    gpu_view,
    model_view,
)
from .layout import Layout, batch_split, candidate_layouts, layout_problems
from .runs import PublishedRun, load_runs

__all__ = ["CUDA_GRAPHS", "FP8_MEMORY_BOUND_EXTRA", "TrainingPlan", "TrainingSettings",
           "default_factors", "plan_run", "plan_training"]

#: Start-up cost alpha of one collective, by tier: the order of what nccl-tests shows for
#: small messages (about 10 us on an NVLink pair, nccl-tests issue #44; more across a network).
LATENCY = MappingProxyType({"nvlink": 10e-6, "network": 20e-6})
#: Share of the usable memory (:meth:`gpulesson.hardware.GPUSpec.usable_memory`, which
#: already leaves the runtime's context and work spaces out) kept free on top by default:
#: none. Where your allocator fragments more, measure it (``torch.cuda.max_memory_reserved``
#: against ``max_memory_allocated``) and pass ``memory_reserve``.
MEMORY_RESERVE = 0.0
#: How much of a step runs from captured CUDA graphs: ``"none"`` (kernels launched one by
#: one, or graphs of parts of a layer, as TransformerEngine captures them) or ``"full"``
#: (the whole iteration, Megatron-Core's ``full_iteration``).
CUDA_GRAPHS = ("none", "full")
#: Share of the usable memory above which a kept layout is called tight: the memory count
#: rests on stated assumptions (activations as counted, nothing freed early, the runtime's
#: 5 % as vLLM measured it), so a figure within a few per cent of the limit is "measure
#: before you commit", not "fits" (the lesson's reading of Llama 3's layout).
TIGHT_MEMORY = 0.95
#: The headroom of the alternative a tight plan's reason names: 10 % of the usable memory.
ROOMY_MEMORY = 0.90
#: Memory-bound time FP8 adds, as a share of the other memory-bound kernels (kept for the
#: lessons that quote DeepSeek-V3's trace; the planner now counts the casts' bytes,
#: :mod:`gpulesson.planning.perf_model`): casting,
#: quantizing and transposing activations and gradients to FP8 with their scales. In
#: DeepSeek-V3's training trace (DeepSeek-AI, profile-data, ``train.json``, commit
#: 449602428a1b, captured 2025-02-25 on an H800: one DualPipe forward and backward chunk of
#: 4 MoE layers, one 4,096-token micro-batch) the FP8 cast, quantize and transpose kernels
#: take 18,226 us, the norms, SwiGLU, token permutation, RoPE, copies and other elementwise
#: kernels 14,300 us (on the main compute stream): 1.27x as long again.
FP8_MEMORY_BOUND_EXTRA = 18_226 / (4_415 + 3_448 + 3_062 + 1_863 + 1_512)
_DIMENSIONS = ("tensor", "context", "expert", "pipeline", "data")
#: The parts of a step spent waiting rather than computing, as a bottleneck names them.
_WAITS = MappingProxyType({
    "bubble": "the pipeline bubble", "tensor": "tensor-parallel traffic",
    "context": "context-parallel traffic", "expert": "the expert-parallel all-to-all",
    "pipeline": "the pipeline sends", "data": "the gradient synchronisation",
    "offload": "the activation offload"})
#: Collectives NCCL runs as rings, whose bus bandwidth grows with the NICs a group holds.
_RINGS = ("all_reduce", "reduce_scatter", "all_gather")
_PRECISIONS = ("bf16", "fp16", "fp8")
FP8_RECIPES = perf_model.FP8_RECIPES


@dataclass(frozen=True)
class TrainingSettings:
    """Everything :func:`plan_training` was asked, in SI units (for the record)."""

    n_gpus: int
    tokens: float
    global_batch_tokens: int
    seq_len: int
    precision: str
    recompute: str
    memory_reserve: float
    grad_bytes: float
    overlap: Mapping[str, float]
    schedule: str
    comm_sm_fraction: float = 0.0
    max_nodes_per_token: int | None = None
    fp8_recipe: str = "current"
    offload_layers: int = 0
    expert_imbalance: float = 1.0
    mtp_layers: int = 0
    cuda_graphs: str = "none"
    fused_expert_mlp: bool = False
    fp8_attention: bool = False
    attention_kernel: str = "fused"


@dataclass(frozen=True)
class TrainingPlan:
    """A training plan: feasible or not, and every figure behind it.

    ``breakdown`` holds seconds per step: ``compute``, ``recompute``, ``memory_bound``,
    ``optimizer``, ``launch`` (kernel gaps and MoE host syncs), ``offload``, ``bubble`` and
    the exposed communication of ``tensor``, ``context``, ``expert``, ``pipeline`` and
    ``data`` parallelism; they add up to ``step_time``. ``tiers`` say which link each
    dimension crosses, ``traffic`` the bytes each GPU sends per step. ``mfu`` is predicted
    (model FLOPs over the BF16 dense peak). ``cost_usd`` is ``None`` without a price.
    ``problems`` name the input at fault and a fix; ``notes`` the assumptions. ``terms``
    holds the coefficient (seconds per unit) of every calibrated factor and ``fixed_time``
    the seconds that do not scale with them: ``step_time = sum(terms[k] * factors[k]) +
    fixed_time``. ``architecture``, ``moe`` and ``active_params`` place the plan among the
    published runs (:func:`gpulesson.planning.bands.uncertainty`).
    """

    feasible: bool
    problems: tuple[str, ...]
    layout: Layout
    memory_per_gpu: float
    memory_limit: float
    step_time: float
    breakdown: Mapping[str, float]
    mfu: float
    tokens_per_second: float
    days: float
    gpu_hours: float
    cost_usd: float | None
    micro_batches: float
    sequences: float
    tiers: Mapping[str, str]
    traffic: Mapping[str, float]
    model: str
    gpu: str
    settings: TrainingSettings
    reason: str = ""
    notes: tuple[str, ...] = field(default=())
    searched: bool = False
    terms: Mapping[str, float] = field(default_factory=dict)
    fixed_time: float = 0.0
    architecture: str = ""
    moe: bool = False
    active_params: float = 0.0

    @property
    def dominant_term(self) -> str:
        """The largest entry of :attr:`breakdown`: the term that sets the step time."""
        return max(self.breakdown, key=lambda k: self.breakdown[k])


    @property
    def memory_fits(self) -> bool:
        """Whether the memory per GPU is within the limit."""
        return self.memory_per_gpu <= self.memory_limit

    @property
    def efficiency(self) -> float:
        """Share of the step spent computing (compute, recompute, memory-bound work)."""
        b = self.breakdown
        return (b["compute"] + b["recompute"] + b["memory_bound"] + b["launch"]
                ) / self.step_time

    @property
    def bottleneck(self) -> str:
        """:func:`gpulesson.planning.rules.bottleneck` of this plan: memory first, then
        communication and bubble when they outlast the compute, else compute."""
        from .rules import bottleneck
        text = bottleneck(fits=self.memory_fits, efficiency=self.efficiency,
                          layout_set=not self.searched)
        if text.startswith("communication"):
            waits = {k: self.breakdown[k] for k in _WAITS}
            most = max(waits, key=lambda k: waits[k])
            text += (f"; most of the wait is {_WAITS[most]} "
                     f"({units.format_seconds(waits[most])} of a "
                     f"{units.format_seconds(self.step_time)} step)")
        return text

    @property
    def hfu(self) -> float:
        """Hardware FLOPs utilisation: as :attr:`mfu` with the recomputed FLOPs counted."""
        work = self.breakdown["compute"]
        return self.mfu * (work + self.breakdown["recompute"]) / work if work else 0.0


def _peak(gpu: GPUView, precision: str) -> tuple[float, list[str]]:
    if precision == "fp8" and "fp8" not in gpu.spec.peak_flops:
        return gpu.peak("bf16"), [f"precision: {gpu.name} has no FP8 tensor cores; use "
                                  "bf16"]
    if precision == "bf16" and "bf16" not in gpu.spec.peak_flops:  # a V100: FP16 only
        return gpu.peak("bf16"), [f"precision: {gpu.name} has no BF16 tensor cores; use "
                                  "fp16 (with loss scaling)"]
    return gpu.peak("bf16" if precision == "bf16" else precision), []


def _memory(model: ModelView, lay: Layout, seq_len: int, recompute: str,
            offload_layers: int = 0, fp8: bool = False) -> tuple[float, float]:
    """(bytes per GPU, parameters per GPU) from distributed.layout_memory.

    A recipe (DeepSeek-V3's, Megatron-Core's norm and expert-activation recomputation,
    torchtitan's op checkpointing: :data:`gpulesson.activations.RECIPES`) is not one of
    the layout's own modes: its activations are counted here for the whole model and one
    micro-batch, and the layout divides them as it does
    a given ``activation_bytes`` (by ``tp`` and ``cp``, over the layers a stage holds)."""
    n_eff = model.total_params - model.expert_params + model.expert_params / lay.ep
    tp = lay.tp if model.heads % lay.tp == 0 and model.hidden % lay.tp == 0 else 1
    pp = min(lay.pp, model.layers)
    cp = lay.cp if seq_len % lay.cp == 0 else 1
    if recompute in activations.RECIPES:
        # counted on the layout's tensor-parallel GPUs (sequence parallel), times tp, as
        # layout_memory divides a given figure by tp: a tensor no GPU splits (a sparse
        # attention indexer's) stays whole
        given = tp * activations.activation_bytes(model.cfg, seq_len=seq_len,
                                                  batch=lay.micro_batch, attention="flash",
                                                  recompute=recompute, tp=tp,
                                                  sequence_parallel=tp > 1)
        shape = {"activation_bytes": given, "recompute": "none"}
    else:
        shape = {"seq_len": seq_len, "recompute": recompute, "attention": "flash"}
    mem = distributed.layout_memory(
        n_params=n_eff, n_gpus=tp * pp * cp * (lay.dp or 1), tp=tp, pp=pp, cp=cp,
        zero_stage=lay.zero_stage, cfg=model.cfg, batch=lay.micro_batch,
        embedding_on_ends=pp > 1, **shape)  # type: ignore[arg-type]
    total = mem.total
    if fp8:  # TransformerEngine keeps each product's input for the backward pass in FP8
        share = perf_model.fp8_activation_saving(model, seq_len=seq_len)
        if recompute == "mla-up-proj":  # it drops none of the inputs that share counts: the
            # same bytes saved as without it, a larger share of what is left
            share *= (activations.activation_bytes(model.cfg, seq_len=seq_len,
                                                   attention="flash", recompute="none")
                      / activations.activation_bytes(model.cfg, seq_len=seq_len,
                                                     attention="flash", recompute=recompute))
        total -= mem.activations * share
    if offload_layers:  # activations of that many of the stage's layers wait in host memory
        total -= mem.activations * min(offload_layers, -(-model.layers // pp)) / -(
            -model.layers // pp)
    return total * tp / lay.tp, mem.params_per_gpu * tp / lay.tp


class _Links:
    """Bandwidth and latency of the two tiers for one GPU and its overrides.

    A ring collective (all-reduce, reduce-scatter, all-gather) of a group that spans
    servers runs at :func:`gpulesson.network.group_bus_bandwidth`: the network as built,
    one NIC per GPU, so the ring leaves each server through as many NICs as the group has
    GPUs there (bounded by NVLink); point-to-point sends and all-to-alls use each GPU's
    own NIC."""

    def __init__(self, gpu: GPUView, latency: Mapping[str, float], sharp: bool) -> None:
        self.bw = {"nvlink": distributed.achievable_bandwidth(gpu.nvlink_bandwidth, "nvlink")
                   if gpu.domain > 1 else distributed.achievable_bandwidth(
                       gpu.nvlink_bandwidth, "network"),
                   "network": distributed.achievable_bandwidth(gpu.scaleout_bandwidth,
                                                               "network")}
        self.latency, self.domain = latency, gpu.domain
        self.nvlink_line, self.nic_line = gpu.nvlink_bandwidth, gpu.scaleout_bandwidth
        self.sharp_rate = gpu.nvlink_bandwidth if sharp and gpu.sharp else 0.0

    def tier(self, stride: int, size: int) -> str:
        return distributed.group_tier(stride=stride, size=size, domain=self.domain)

    def ring_bandwidth(self, stride: int, size: int) -> float:
        """Bus bandwidth of a ring over a group of ``size`` ranks ``stride`` apart: NVLink's
        inside one domain, :func:`gpulesson.network.group_bus_bandwidth` across domains
        (one NIC's where the group's ranks do not fill the domains evenly)."""
        if self.tier(stride, size) == "nvlink":
            return self.bw["nvlink"]
        try:
            return network.group_bus_bandwidth(
                stride=stride, size=size, domain=self.domain,
                nvlink_line_rate=self.nvlink_line, nic_line_rate=self.nic_line).bus_bandwidth
        except ValueError:
            return self.bw["network"]

    def time(self, item: traffic.Traffic, tier: str, group: tuple[int, int] | None = None
             ) -> float:
        """Seconds of ``item`` on ``tier``; ``group`` (stride, size) lets a ring collective
        across servers use every NIC the group holds (:meth:`ring_bandwidth`)."""
        bw = self.bw[tier]
        if tier == "network" and group is not None and item.collective in _RINGS:
            bw = self.ring_bandwidth(*group)
        return item.time(bandwidth=bw, latency=self.latency[tier],
                         sharp_line_rate=self.sharp_rate if tier == "nvlink" else 0.0)

    def ranks_per_domain(self, stride: int, size: int) -> int:
        """Members of a group of ``size`` ranks ``stride`` apart that share a domain."""
        return max(min(self.domain // max(stride, 1), size), 1)

    def all_to_all_time(self, item: traffic.Traffic, stride: int, size: int,
                        every_copy: traffic.Traffic | None = None) -> float:
        """An all-to-all over a group that spans NVLink domains: each GPU's bytes to the
        peers inside its own domain cross NVLink, the rest the network, at the same time;
        the slower share sets the time (the group's ``stride`` says how many of its
        members share a domain).

        ``every_copy``: ``item`` sends each token once per node it visits (node-limited
        routing, :func:`gpulesson.traffic.routed_node_limit`) and NVLink then carries
        ``every_copy``, each of a token's copies to its expert's GPU in the node, all but
        the ``1/inside`` already there (DeepSeek-V3, section 3.2.2)."""
        inside = self.ranks_per_domain(stride, size)
        if self.tier(stride, size) == "nvlink" or inside == 1:
            return self.time(item, self.tier(stride, size))
        near = (inside - 1) / (size - 1)
        nvlink, share = item, near
        if every_copy is not None:  # the bus factor (size-1)/size becomes (inside-1)/inside
            nvlink, share = every_copy, (inside - 1) / inside * size / (size - 1)
        return max(nvlink.time(bandwidth=self.bw["nvlink"] / share,
                               latency=self.latency["nvlink"]),
                   item.time(bandwidth=self.bw["network"] / (1 - near),
                             latency=self.latency["network"]))


def _nodes_per_token(model: ModelView, lay: Layout, links: _Links,
                     st: TrainingSettings) -> int | None:
    """The most nodes a token's routed experts sit on across the network: the plan's
    ``max_nodes_per_token`` where given, else the model's group-limited routing on this
    layout (:func:`gpulesson.traffic.routed_node_limit`; ``None``: no limit)."""
    if st.max_nodes_per_token is not None:
        return st.max_nodes_per_token
    cfg = model.cfg
    if not cfg.routing_groups or model.routed_experts % lay.ep:
        return None
    return traffic.routed_node_limit(
        experts=model.routed_experts, routing_groups=cfg.routing_groups,
        routing_group_topk=cfg.routing_group_topk, ep=lay.ep,
        ranks_per_node=links.ranks_per_domain(*lay.strides["expert"]))


def _imbalance(model: ModelView, pp: int, mtp_layers: int = 0, paired: bool = False) -> float:
    """Work of the busiest pipeline stage over the mean: it paces the pipeline.

    Stages hold ``ceil(L/pp)`` or fewer whole layers, and the last one also the output layer
    (``V*h`` weights, when untied; the embedding lookup of the first costs no FLOPs).
    Counted in weight FLOPs per token, ``6 * params``. Each multi-token prediction module
    (DeepSeek-V3, section 2.2) adds to the last stage one more layer, a ``2h x h``
    projection and another pass through the output layer: work the model FLOPs do not
    count, so it shows as imbalance even without pipeline stages. ``paired`` (DualPipe):
    the model is cut into ``2 pp`` chunks and each GPU holds chunk ``i`` and its mirror
    ``2 pp - 1 - i``; DeepSeek-V3 does not publish where its prediction module sits, so
    its work is taken as spread evenly over the GPUs (the schedule's stages balanced).
    """
    L = model.layers
    head = model.hidden * model.cfg.vocab
    per_layer = max(model.active_params - head * (1 if model.cfg.tied_embeddings else 2), 1) / L
    extra = mtp_layers * (per_layer + 2 * model.hidden ** 2 + head)
    total = model.active_params + extra
    if pp == 1:
        return total / model.active_params
    chunks = 2 * pp if paired else pp
    size = -(-L // chunks)
    layers = [min(size, max(L - size * i, 0)) for i in range(chunks)]
    work = [n * per_layer for n in layers]
    work[-1] += head
    if paired:
        work = [work[i] + work[chunks - 1 - i] + extra / pp for i in range(pp)]
    else:
        work[-1] += extra
    return max(work) * pp / model.active_params


def _memory_fix(model: ModelView, n_gpus: int, limit: float) -> str:
    """What can bring a plan within ``limit`` bytes per GPU. Where the weights, gradients
    and Adam state alone, spread over every GPU (ZeRO-3), exceed it, no layout, recomputation
    or micro-batch can: the fix is more GPUs or fewer trained parameters; on one GPU there
    is nothing to shard over."""
    state = model.total_params * memory.bytes_per_param()
    if state / n_gpus > limit:
        where = (f"even spread over all {n_gpus:,} GPUs (ZeRO-3) the" if n_gpus > 1
                 else "on one GPU the")
        return (f"{where} weights, gradients and Adam state alone take "
                f"{units.format_bytes(state / n_gpus)} per GPU: use at least "
                f"{math.ceil(state / limit):,} GPUs, or train fewer parameters "
                "(LoRA: gpulesson.memory.lora_training_memory)")
    if n_gpus == 1:
        return "try recompute='full' or a smaller micro_batch (one GPU: nothing to shard over)"
    return ("try recompute='full', more tensor or pipeline parallelism, a higher zero_stage or "
            "a smaller micro_batch")


def _evaluate(model: ModelView, gpu: GPUView, lay: Layout, st: TrainingSettings,
              links: _Links, factors: Mapping[str, float]) -> TrainingPlan:
    L, s, rc = model.layers, st.seq_len, st.recompute
    problems = layout_problems(lay, model, seq_len=s)
    sequences, micro, batch_problems = batch_split(
        lay, global_batch_tokens=st.global_batch_tokens, seq_len=s)
    problems += batch_problems
    peak, peak_problems = _peak(gpu, st.precision)
    problems += peak_problems
    s_gpu = max(s // lay.cp, 1)
    pp = min(lay.pp, L)
    stage = -(-L // pp)
    imbalance = _imbalance(model, pp, st.mtp_layers,
                           paired=st.schedule == "dualpipe" and pp % 2 == 0)
    model_fpt = model.model_flops_per_token(s)
    m = max(micro, 1e-9)
    tp_ok = lay.tp if model.heads % lay.tp == 0 and model.hidden % lay.tp == 0 else 1
    # full recomputation keeps each layer's BF16 input only, no product's FP8 input
    mem, shard = _memory(model, lay, s, rc, st.offload_layers,
                         st.precision == "fp8" and not peak_problems
                         and rc not in ("deepseek-v3", "full"))
    dp_group = (lay.dp or 1) * lay.cp
    zero_shard = shard / dp_group if lay.zero_stage >= 1 else shard
    terms = perf_model.step_terms(
        model, gpu, tp=tp_ok, cp=lay.cp if s % lay.cp == 0 else 1, pp=pp, ep=lay.ep,
        micro_batch=lay.micro_batch, seq_len=s, precision=st.precision if not peak_problems
        else "bf16", fp8_recipe=st.fp8_recipe, recompute=rc, imbalance=imbalance,
        shard_params=zero_shard, offload_layers=st.offload_layers,
        expert_imbalance=st.expert_imbalance, fused_expert_mlp=st.fused_expert_mlp,
        fp8_attention=st.fp8_attention and not peak_problems)
    arch = gpu.spec.architecture
    prec = st.precision if not peak_problems else "bf16"
    cols = {t: calibration.column(t, arch, prec, st.fp8_recipe) for t in perf_model.TERMS}
    f = {t: calibration.factor(factors, cols[t]) for t in perf_model.TERMS}
    # a matmul or attention efficiency measured by the reader scales the fitted factor by
    # how far it is from the sourced figure (passing the sourced figure changes nothing)
    f["gemm"] *= MATMUL_EFFICIENCY.get(arch, (gpu.matmul_efficiency,))[0] / gpu.matmul_efficiency
    f["attention"] *= (ATTENTION_EFFICIENCY.get(arch, (gpu.attention_efficiency,))[0]
                       / gpu.attention_efficiency)
    sms = 1 - st.comm_sm_fraction  # SMs left to compute beside communication kernels
    # the attention as the run's kernel runs it (an older one than the generation's own
    # is slower by its published speed-ups)
    attn_base, redo_base = perf_model.kernel_attention_seconds(
        terms.attention, terms.redo_attention, st.attention_kernel, arch)
    gemm_mb, attn_mb = terms.gemm / sms, attn_base / sms
    experts_mb = terms.experts / sms
    # recomputation's share: the forward products again (full), the attention core again
    redo_gemm = terms.redo_gemm / sms
    redo_attn = redo_base / sms
    redo_experts = terms.redo_experts / sms
    compute = m * (f["gemm"] * (gemm_mb - redo_gemm) + f["experts"] * (experts_mb - redo_experts)
                   + f["attention"] * (attn_mb - redo_attn))
    recompute = m * (f["gemm"] * redo_gemm + f["experts"] * redo_experts
                     + f["attention"] * redo_attn)
    memory_bound = m * f["memory"] * terms.memory / sms
    # a whole step captured as one CUDA graph cannot wait for the host: the experts' token
    # counts stay on the GPU, and no host synchronisation is left
    syncs = 0.0 if st.cuda_graphs == "full" else terms.syncs
    launch = m * (f["kernels"] * terms.kernels + f["syncs"] * syncs)
    optimizer = f["memory"] * terms.optimizer_bytes / gpu.bandwidth
    # the traffic's view: only full recomputation runs a layer's communication again
    moved = rc if rc in ("none", "full") else "selective"
    ov = st.overlap
    items: dict[str, tuple[traffic.Traffic, str]] = {}
    strides = lay.strides
    items["tensor"] = (traffic.tensor_parallel_traffic(
        micro_batch=lay.micro_batch, seq_len=s_gpu, hidden=model.hidden, layers=stage,
        tp=lay.tp, recompute=moved, sequence_parallel=lay.tp > 1),
        links.tier(*strides["tensor"]))
    kv_width = max(int(model.kv_bytes_per_token // (4 * L)), 1)
    items["context"] = (traffic.context_parallel_traffic(
        micro_batch=lay.micro_batch, seq_len=s, kv_dim=kv_width, layers=stage, cp=lay.cp,
        tp=min(lay.tp, max(model.kv_heads, 1)), recompute=moved),
        links.tier(*strides["context"]))
    every_copy: traffic.Traffic | None = None
    if model.is_moe and lay.ep > 1:
        tier = links.tier(*strides["expert"])
        expert_kw = dict(
            # sequence parallelism splits the micro-batch's tokens over the tensor-parallel
            # GPUs before the router: each dispatches its own share (as the products count)
            tokens=max(lay.micro_batch * s_gpu // lay.tp, 1), hidden=model.hidden,
            experts_per_token=model.experts_per_token, moe_layers=-(-model.moe_layers // pp),
            ep=lay.ep, dispatch_bytes_per_value=1 if st.precision == "fp8" else None)
        dispatch = traffic.expert_parallel_traffic(**expert_kw)  # type: ignore[arg-type]
        nodes = _nodes_per_token(model, lay, links, st) if tier == "network" else None
        if nodes is not None and nodes < model.experts_per_token:
            # one copy per node crosses the network, NVLink forwards it to the experts
            every_copy = dispatch
            dispatch = traffic.expert_parallel_traffic(
                **expert_kw, node_limit=nodes)  # type: ignore[arg-type]
        items["expert"] = (dispatch, tier)
    pipe_stride = strides["pipeline"][0]
    items["pipeline"] = (traffic.pipeline_traffic(
        micro_batch=lay.micro_batch, seq_len=s_gpu, hidden=model.hidden, tp=lay.tp,
        interleave=lay.interleave, pp=pp), links.tier(pipe_stride, 2) if pp > 1 else "nvlink")
    # each dimension hides behind the compute of its micro-batch, as far as there is some
    window = (compute + recompute + memory_bound + launch) / m
    def seconds(dim: str, item: traffic.Traffic, tier: str) -> float:
        if dim == "expert" and item.collective == "alltoall":
            return links.all_to_all_time(item, *strides["expert"], every_copy=every_copy)
        return links.time(item, tier, strides[dim])

    exposed = {dim: distributed.exposed_time(seconds(dim, item, tier), window, ov[dim]) * m
               for dim, (item, tier) in items.items()}
    offload = distributed.exposed_time(terms.offload_bytes / perf_model.host_link_bandwidth(
        gpu), window, 1.0) * m
    work = compute + recompute + memory_bound + launch + sum(exposed.values()) + offload
    if pp > 1:
        whole = max(round(micro), 1)
        fraction = (distributed.dualpipe_bubble_fraction(pp, whole)
                    if st.schedule == "dualpipe" and pp % 2 == 0
                    else distributed.pipeline_bubble_fraction(pp, whole, lay.interleave))
    else:
        fraction = 0.0
    bubble = fraction * work
    data_tier = links.tier(lay.tp, dp_group)
    # the compute the synchronisation can hide behind: one micro-batch's, or, where a
    # replica gets less than one micro-batch (an infeasible split), the step's own
    per_micro = work / max(m, 1.0)
    data = 0.0
    sent = {dim: item.bytes_per_rank * m for dim, (item, _) in items.items()}
    sent["data"] = 0.0
    if dp_group > 1:
        # the routed experts' gradients are reduced over the expert-data-parallel group
        # (the GPUs holding the same experts: tp x cp x dp / ep of them, ep apart), the
        # rest over the data-parallel group; each collective of the one follows the same
        # collective of the other, and the pair hides behind the same window
        expert_held = (model.expert_params / lay.ep * min(stage / L, 1.0)
                       if model.is_moe else 0.0)
        edp = max(dp_group * lay.tp // lay.ep, 1) if model.is_moe else 1
        groups = [(shard - expert_held, dp_group, (lay.tp, dp_group))]
        if model.is_moe and edp > 1:
            groups.append((expert_held, edp, (strides["expert"][0] * lay.ep, edp)))
        paired = [traffic.data_parallel_traffic(max(params, 1.0), dp=size,
                                                zero_stage=lay.zero_stage,
                                                grad_bytes=st.grad_bytes)
                  for params, size, _ in groups]
        for items_i in zip(*paired, strict=True):
            seconds_i = 0.0
            for item, (_, size, group) in zip(items_i, groups, strict=True):
                tier = links.tier(*group) if size > 1 else "nvlink"
                seconds_i += links.time(item, tier, group)
                sent["data"] += item.bytes_per_rank
            window = (per_micro / 3 if items_i[0].collective == "all_gather"
                      else per_micro * 2 / 3)
            data += distributed.exposed_time(seconds_i, window, ov["data"])
    exposed["data"] = data
    step = work + bubble + data + optimizer
    breakdown = {"compute": compute, "recompute": recompute,
                 "memory_bound": memory_bound, "optimizer": optimizer, "launch": launch,
                 "offload": offload, "bubble": bubble,
                 **{d: exposed.get(d, 0.0) for d in _DIMENSIONS}}
    # the coefficient of every calibrated factor in the step time, and what is left over
    scale = (1 + fraction) * m
    coef = {cols["gemm"]: scale * gemm_mb, cols["attention"]: scale * attn_mb}
    if experts_mb:
        coef[cols["experts"]] = scale * experts_mb
    coef[cols["memory"]] = scale * terms.memory / sms + terms.optimizer_bytes / gpu.bandwidth
    coef[cols["kernels"]] = scale * terms.kernels
    coef[cols["syncs"]] = scale * syncs
    fixed = (1 + fraction) * (sum(t for d, t in exposed.items() if d != "data") + offload) + data
    limit = gpu.plan_memory * (1 - st.memory_reserve)
    if mem > limit:
        problems.append(
            f"memory: {units.format_bytes(mem)} per GPU exceeds the {units.format_bytes(limit)} "
            f"usable on the {gpu.name} ({units.format_bytes(gpu.usable_memory)} reported, "
            f"less the runtime's {1 - hardware.USABLE_MEMORY_FRACTION:.0%}"
            + (f" and a {st.memory_reserve:.0%} reserve" if st.memory_reserve else "")
            + "); " + _memory_fix(model, st.n_gpus, limit))
    tps = st.global_batch_tokens / step
    seconds = st.tokens / tps
    hours = cost.gpu_hours(gpus=st.n_gpus, seconds=seconds)
    bill = (cost.run_cost(usd_per_gpu_hour=gpu.price, gpus=st.n_gpus, seconds=seconds)
            if gpu.price is not None else None)
    tiers = {d: t for d, (_, t) in items.items()}
    tiers["data"] = data_tier
    return TrainingPlan(
        feasible=not problems, problems=tuple(problems), layout=lay, memory_per_gpu=mem,
        memory_limit=limit, step_time=step, breakdown=MappingProxyType(breakdown),
        mfu=flops.mfu(tps, model_fpt, st.n_gpus, gpu.peak("bf16")), tokens_per_second=tps,
        days=seconds / flops.SECONDS_PER_DAY, gpu_hours=hours, cost_usd=bill,
        micro_batches=micro, sequences=sequences, tiers=MappingProxyType(tiers),
        traffic=MappingProxyType(sent), model=model.name, gpu=gpu.name, settings=st,
        notes=(*model.notes, *gpu.notes), terms=MappingProxyType(coef), fixed_time=fixed,
        architecture=arch, moe=model.is_moe, active_params=model.active_params)


def _comparison(best: TrainingPlan, ranked: list[TrainingPlan], fitting: int, tried: int,
                fastest: TrainingPlan | None) -> str:
    text = (f"Fastest of the {fitting} layouts that fit, of {tried} valid ones compared: "
            f"{best.layout.describe()}, {units.format_seconds(best.step_time)} per step at "
            f"{best.mfu:.1%} MFU.")
    others = [p for p in ranked[1:] if p.layout.degrees != best.layout.degrees]
    if others:
        second = others[0]
        worse = max(best.breakdown, key=lambda k: second.breakdown[k] - best.breakdown[k])
        gap = second.step_time / best.step_time - 1
        text += (f" The runner-up, {second.layout.describe()}, takes {gap:.1%} longer, most "
                 f"of it in {worse.replace('_', '-')} time "
                 f"({units.format_seconds(second.breakdown[worse])} against "
                 f"{units.format_seconds(best.breakdown[worse])}).")
    if fastest is not None and fastest is not best and fastest.step_time < best.step_time:
        text += (f" {fastest.layout.describe()} would be faster "
                 f"({units.format_seconds(fastest.step_time)}) but needs "
                 f"{units.format_bytes(fastest.memory_per_gpu)} per GPU.")
    share = best.memory_per_gpu / best.memory_limit
    if share > TIGHT_MEMORY:
        text += (f" It holds {share:.1%} of the usable memory: tight, since the count rests on "
                 "stated assumptions; measure before you commit")
        roomy = next((p for p in ranked if p.memory_per_gpu <= ROOMY_MEMORY * p.memory_limit),
                     None)
        if roomy is not None:
            text += (f". The fastest layout with {1 - ROOMY_MEMORY:.0%} to spare, "
                     f"{roomy.layout.describe()}, needs "
                     f"{units.format_bytes(roomy.memory_per_gpu)} and takes "
                     f"{roomy.step_time / best.step_time - 1:.1%} longer")
        text += "."
    return text


def _settings_map(name: str, value: object, example: str) -> Mapping[str, Any]:
    """``value`` as a mapping of settings (``None``: none); anything else, ``0`` and
    ``False`` included, is refused naming ``name``."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping such as {example} (or None), got "
                        f"{v._short_repr(value)} ({type(value).__name__})")
    return value


def plan_training(
    model: object,
    gpu: object,
    *,
    n_gpus: int,
    tokens: float,
    global_batch_tokens: int,
    seq_len: int,
    precision: str = "bf16",
    layout: Layout | str = "auto",
    recompute: str = "selective",
    scaleout_bandwidth: float | None = None,
    nvlink_bandwidth: float | None = None,
    nvlink_domain: int | None = None,
    usable_memory: float | None = None,
    memory_reserve: float = MEMORY_RESERVE,
    matmul_efficiency: float | None = None,
    attention_efficiency: float | None = None,
    usd_per_gpu_hour: float | None = None,
    grad_bytes: float = 2,
    overlap: Mapping[str, float] | None = None,
    sharp: bool = True,
    latency: Mapping[str, float] | None = None,
    pipeline_schedule: str = "1f1b",
    comm_sm_fraction: float = 0.0,
    max_nodes_per_token: int | None = None,
    fp8_recipe: str = "current",
    offload_layers: int = 0,
    expert_imbalance: float = 1.0,
    mtp_layers: int = 0,
    cuda_graphs: str = "none",
    fused_expert_mlp: bool = False,
    fp8_attention: bool = False,
    attention_kernel: str = "fused",
    factors: Mapping[str, float] | None = None,
) -> TrainingPlan:
    """Plan pretraining ``model`` on ``n_gpus`` GPUs: memory, step time, MFU, days, cost.

    Parameters
    ----------
    model : str, TransformerConfig, mapping or ModelView
        A preset name, a config, a parsed config.json, or a :class:`ModelView`.
    gpu : str or GPUSpec
        The GPU (``"H100 SXM"``).
    n_gpus : int
        GPUs training together.
    tokens : float
        Training tokens ``D``: at least one step, ``global_batch_tokens``.
    global_batch_tokens : int
        Tokens per optimizer step (Llama 3 405B: 16M, Dubey et al. 2024, Table 4).
    seq_len : int
        Tokens per sequence.
    precision : str
        Matrix-multiply precision: ``"bf16"``, ``"fp16"`` or ``"fp8"`` (weights' matmuls
        only; MFU stays against the BF16 peak).
    layout : Layout or "auto"
        The degrees of parallelism, or ``"auto"``: the fastest that fits among
        :func:`~gpulesson.planning.layout.candidate_layouts`, with a comparison as reason.
    recompute : str
        ``"none"``, ``"selective"`` (attention recomputed: FlashAttention's default),
        ``"full"`` or ``"deepseek-v3"`` (DeepSeek-V3's recipe, for a model with latent
        attention and a gated MLP: norms and up-projections recomputed, most activations
        in FP8; :data:`gpulesson.activations.DEEPSEEK_V3_RECIPE`); the other recipes of
        :data:`gpulesson.activations.RECOMPUTE_MODES`: Megatron-Core's ``"norm-moe-act"``
        and ``"mla-up-proj"`` (latent attention's up-projections only), torchtitan's
        ``"torchtitan-op"``.
    scaleout_bandwidth, nvlink_bandwidth, nvlink_domain, usable_memory, matmul_efficiency,
    attention_efficiency, usd_per_gpu_hour
        Override the GPU's figures (bytes/s one way per GPU, GPUs, bytes, fraction, USD):
        for example alpha and beta measured on your machine (lesson 7) or a quote.
    usable_memory
        is the memory total the device reports (``nvidia-smi``); a plan may use
        :data:`gpulesson.hardware.USABLE_MEMORY_FRACTION` of it, the course's one usable
        figure (:meth:`gpulesson.hardware.GPUSpec.usable_memory`: 81.2 GB on an H100).
    memory_reserve : float
        Share of the usable memory kept free on top (default 0).
    grad_bytes : float
        Bytes per gradient value reduced across data-parallel GPUs (4: FP32, as Llama 3).
    overlap : mapping
        Share of each dimension's communication hidden behind compute, ``{"tensor": 0,
        "context": 0, "expert": 0, "pipeline": 0, "data": 1}`` by default. Each hides only
        behind the compute of its micro-batch; the gradient synchronisation only behind the
        backward pass of the last micro-batch (the parameter all-gather behind a forward).
    sharp : bool
        Use NVLink SHARP for all-reduces inside the NVLink domain where the GPU has it.
    latency : mapping
        Seconds of start-up per collective, ``{"nvlink": ..., "network": ...}``.
    pipeline_schedule : str
        ``"1f1b"`` (interleaved when ``layout.interleave > 1``) or ``"dualpipe"``.
    comm_sm_fraction : float
        Share of the streaming multiprocessors that communication kernels keep while they
        overlap compute (DeepSeek-V3 gives 20 of the H800's 132 to its all-to-alls, section
        3.2.2): compute runs that much slower.
    fp8_recipe : str
        ``"current"`` (TransformerEngine's current scaling, default), ``"delayed"``,
        ``"tensorwise"`` (torchao), ``"blockwise"`` (DeepSeek-V3) or ``"mxfp8"``
        (Blackwell): the casts it adds (:data:`~gpulesson.planning.perf_model.FP8_RECIPES`).
    offload_layers : int
        Layers (of each pipeline stage) whose activations wait in host memory between the
        forward and the backward pass (Megatron-Core's ``cpu_offloading_num_layers``):
        their memory leaves the GPU, their copies cross the host link
        (:func:`~gpulesson.planning.perf_model.host_link_bandwidth`) behind the compute.
    expert_imbalance : float
        Tokens of the busiest expert-parallel GPU over the mean (1: balanced routing).
    mtp_layers : int
        Multi-token prediction modules trained beside the model (DeepSeek-V3: 1, section
        2.2): each runs one more layer, a projection and the output layer again on the last
        pipeline stage, work that the MFU (model FLOPs) does not count.
    cuda_graphs : str
        ``"none"`` or ``"full"``: the whole step captured as one CUDA graph and replayed
        (Megatron-Core's ``cuda_graph_impl="full_iteration"``, with its experts' buffers
        sized ahead, ``moe_paged_stash``): a mixture of experts' host synchronisations go.
    fused_expert_mlp : bool
        The routed experts' activation (and in FP8 its output's cast) fused into their
        grouped products (Megatron-Core's ``use_transformer_engine_op_fuser``, which
        Megatron-Bridge's ``cutedsl_fused_grouped_mlp`` turns on): that traffic goes.
    fp8_attention : bool
        The attention's products in FP8 (TransformerEngine's ``fp8_dot_product_attention``;
        needs ``precision="fp8"``, :func:`~gpulesson.planning.perf_model.attention_efficiency`).
    attention_kernel : str
        ``"fused"`` (the generation's own kernel: FlashAttention-2 on Ampere,
        FlashAttention-3 or cuDNN's on Hopper), ``"flash-attention-2"`` (on a Hopper GPU,
        without its new instructions) or ``"triton"`` (FlashAttention in Triton, 2022, as
        llm-foundry's ``attn_impl: triton``): the published speed-ups of the newer kernels
        (:data:`~gpulesson.planning.perf_model.ATTENTION_KERNELS`) slow the attention down.
    factors : mapping, optional
        The model's calibrated factors (:func:`default_factors`, fitted on the published
        runs, by default); the calibration passes its own.
    max_nodes_per_token : int, optional
        Node-limited routing: each token's activations cross the network to at most this
        many nodes, once to each, then NVLink fans them out to its experts there
        (DeepSeek-V3: 4, section 3.2.2). Default: the model's group-limited routing on the
        layout (``routing_groups`` and ``routing_group_topk`` of its config,
        :func:`gpulesson.traffic.routed_node_limit`: DeepSeek-V3's 8 groups, 4 picked, on
        64 expert-parallel GPUs over 8 nodes give 4); none for a model without it. Pass
        the model's ``experts_per_token`` to price a dispatcher that sends every copy.

    Returns
    -------
    TrainingPlan
        ``feasible=False`` with ``problems`` for a plan that cannot run; ``ValueError`` only
        for bad arguments (zero GPUs, a layout whose product is not ``n_gpus`` ...).
    """
    n = v.positive_int("n_gpus", n_gpus)
    d = v.positive_number("tokens", tokens)
    batch = v.positive_int("global_batch_tokens", global_batch_tokens)
    if d < batch:
        raise ValueError(f"tokens must be at least global_batch_tokens ({batch:,}): a run "
                         f"takes at least one optimizer step, got {d:,.0f}")
    s = v.positive_int("seq_len", seq_len)
    prec = v.choice("precision", precision, _PRECISIONS)
    rc = v.choice("recompute", recompute, activations.RECOMPUTE_MODES)
    schedule = v.choice("pipeline_schedule", pipeline_schedule, ("1f1b", "dualpipe"))
    shares = {"tensor": 0.0, "context": 0.0, "expert": 0.0, "pipeline": 0.0, "data": 1.0}
    for key, value in _settings_map("overlap", overlap, "{'data': 1.0}").items():
        if key not in shares:
            raise ValueError(f"overlap: unknown dimension {key!r}; known: {', '.join(shares)}")
        shares[key] = v.fraction(f"overlap[{key!r}]", value)
    alpha = dict(LATENCY)
    for key, value in _settings_map("latency", latency, "{'network': 5e-6}").items():
        if key not in alpha:
            raise ValueError(f"latency: unknown tier {key!r}; known: nvlink, network")
        alpha[key] = v.nonneg_number(f"latency[{key!r}]", value)
    mv = model_view(model)
    if rc in activations.RECIPES:  # refuses a model the recipe does not fit
        activations.activation_tensors(mv.cfg, seq_len=1, recompute=rc)
    gv = gpu_view(gpu, usable_memory=usable_memory, nvlink_bandwidth=nvlink_bandwidth,
                  domain=nvlink_domain, scaleout_bandwidth=scaleout_bandwidth,
                  matmul_efficiency=matmul_efficiency,
                  attention_efficiency=attention_efficiency, usd_per_gpu_hour=usd_per_gpu_hour)
    st = TrainingSettings(
        n_gpus=n, tokens=d, global_batch_tokens=batch, seq_len=s, precision=prec,
        recompute=rc, memory_reserve=v.fraction("memory_reserve", memory_reserve,
                                                allow_one=False),
        grad_bytes=v.positive_number("grad_bytes", grad_bytes),
        overlap=MappingProxyType(shares), schedule=schedule,
        comm_sm_fraction=v.fraction("comm_sm_fraction", comm_sm_fraction, allow_one=False),
        max_nodes_per_token=None if max_nodes_per_token is None else v.positive_int(
            "max_nodes_per_token", max_nodes_per_token),
        fp8_recipe=v.choice("fp8_recipe", fp8_recipe, FP8_RECIPES),
        offload_layers=v.nonneg_int("offload_layers", offload_layers),
        expert_imbalance=v.positive_number("expert_imbalance", expert_imbalance),
        mtp_layers=v.nonneg_int("mtp_layers", mtp_layers),
        cuda_graphs=v.choice("cuda_graphs", cuda_graphs, CUDA_GRAPHS),
        fused_expert_mlp=v.boolean("fused_expert_mlp", fused_expert_mlp),
        fp8_attention=v.boolean("fp8_attention", fp8_attention),
        attention_kernel=attention_kernel)
    # refuses an unknown kernel, or one with no published speed on this GPU, by name
    perf_model.attention_kernel_slowdown(attention_kernel, gv.spec.architecture)
    if st.fp8_attention and prec != "fp8":
        raise ValueError(f"fp8_attention: FP8 attention needs precision 'fp8', got {prec!r}")
    if st.fp8_attention and st.attention_kernel != "fused":
        raise ValueError(f"attention_kernel: FP8 attention runs in the fused kernel "
                         f"(fp8_attention=True), got {st.attention_kernel!r}")
    if factors is None:
        factors = default_factors()
    links = _Links(gv, alpha, v.boolean("sharp", sharp))
    fit = dict(factors)
    if isinstance(layout, Layout):
        return _evaluate(mv, gv, layout.resolve(n), st, links, fit)
    if layout != "auto":
        raise ValueError(f"layout must be a Layout or 'auto', got {layout!r}")
    candidates = candidate_layouts(mv, n_gpus=n, seq_len=s, domain=gv.domain,
                                   sequences=batch / s)
    plans = [_evaluate(mv, gv, lay, st, links, fit) for lay in candidates
             if not layout_problems(lay, mv, seq_len=s)]
    if not plans:
        fallback = _evaluate(mv, gv, Layout().resolve(n), st, links, fit)
        return _with(fallback, reason="No layout of tp, cp and pp dividing the model and the "
                     "batch was found; shown: plain data parallelism.")
    # equal times (to 4 digits): the simpler layout, lower ZeRO stage and micro-batch first
    ranked = sorted((p for p in plans if p.feasible), key=lambda p: (
        float(f"{p.step_time:.4g}"), p.layout.zero_stage, p.layout.micro_batch,
        p.layout.interleave, p.memory_per_gpu))
    # the fastest layout turned down only for its memory (the reason names what it needs)
    fastest = min((p for p in plans if all(x.startswith("memory") for x in p.problems)),
                  key=lambda p: p.step_time, default=None)
    if ranked:
        return _with(ranked[0], reason=_comparison(ranked[0], ranked, len(ranked), len(plans),
                                                    fastest))
    fitting = [p for p in plans if p.memory_fits]
    if fitting:  # memory is not what stops them: the batch is (or the precision)
        shown = min(fitting, key=lambda p: (len(p.problems), p.step_time))
        others = [x for x in shown.problems if not x.startswith("memory")]
        return _with(shown, reason=(
            f"None of the {len(plans)} valid layouts can run, though {len(fitting)} fit in "
            f"memory: {'; '.join(others)}. Shown: the fastest of those with the fewest "
            f"problems, {shown.layout.describe()}."))
    leanest = min(plans, key=lambda p: p.memory_per_gpu)
    why = (f"None of the {len(plans)} valid layouts fits: the leanest, "
           f"{leanest.layout.describe()}, needs {units.format_bytes(leanest.memory_per_gpu)} "
           f"per GPU of the {units.format_bytes(leanest.memory_limit)} usable.")
    return _with(leanest, reason=why)


def plan_run(run: PublishedRun, **overrides: object) -> TrainingPlan:
    """:func:`plan_training` of a published ``run`` on its published layout, with its
    options (``overrides`` replace them: ``factors=...``, ``precision=...``)."""
    options = {**run.options, **overrides}
    return plan_training(run.model(), run.gpu, n_gpus=run.n_gpus, tokens=run.tokens,
                         global_batch_tokens=run.global_batch_tokens, seq_len=run.seq_len,
                         layout=run.layout, **options)  # type: ignore[arg-type]


@cache
def default_factors() -> Mapping[str, float]:
    """The model's factors fitted on every published run
    (:func:`gpulesson.planning.calibration.fit` of :func:`~gpulesson.planning.runs.load_runs`)."""
    return calibration.fit(load_runs(), plan_run)


def _with(plan: TrainingPlan, *, reason: str) -> TrainingPlan:
    from dataclasses import replace
    return replace(plan, reason=reason, searched=True)


v.guard_module(globals())
