"""Lesson 7, ``distributed_math``: data-parallel scaling, ZeRO stages, the pipeline bubble,
and the traffic of every parallel dimension of a layout."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gpulesson import distributed, memory, units
from gpulesson.calculators import planner_inputs, shared
from gpulesson.calculators.spec import CUSTOM, Calculator, Choice, Integer, Number, Output, Select

LESSON = "distributed_math"


def _scaling(**kw: Any) -> dict[str, Any]:
    grads = memory.weight_bytes(kw["n_params"], precision=kw["grad_dtype"])
    comm = distributed.collective_time("all_reduce", grads, kw["n_gpus"],
                                       bandwidth=kw["bandwidth"], latency=kw["latency"])
    efficiency = distributed.scaling_efficiency(kw["compute_time"], comm, kw["overlap"])
    layout = distributed.recommend_layout(
        n_params=kw["n_params"], gpu_memory=kw["gpu_memory"], n_gpus=kw["n_gpus"],
        gpus_per_node=kw["gpus_per_node"])
    return {
        "gradient_bytes": grads,
        "volume": distributed.allreduce_bytes_per_rank(grads, kw["n_gpus"]),
        "comm_time": comm,
        "efficiency": efficiency,
        "speedup": distributed.effective_speedup(kw["n_gpus"], efficiency),
        "layout": layout.name,
        "layout_memory": layout.memory_per_gpu,
        "reason": layout.reason,
    }


SCALING_EFFICIENCY = Calculator(
    name="scaling_efficiency",
    title="Scaling efficiency calculator",
    description="Data-parallel training: the gradient all-reduce each step (ring, "
                "alpha-beta model), how much of it compute hides, and the resulting "
                "speed-up; plus the cheapest layout whose model state fits.",
    lesson=LESSON,
    inputs=(
        *shared.params_inputs(),
        replace(shared.GRAD_DTYPE, help="Bytes per gradient value in the all-reduce."),
        shared.N_GPUS,
        shared.GPUS_PER_NODE,
        replace(shared.NETWORK, label="Bus bandwidth per GPU",
                help="One-way network bandwidth per GPU: 400 Gb/s InfiniBand NDR is 50 GB/s "
                     "(one NIC per GPU, as in NVIDIA DGX H100). That is the line rate, a "
                     "bound: NCCL achieves about 94 % of it, 47 GB/s (nccl-tests issue "
                     "#290); enter that for a plan, as lesson 7 section 7 does."),
        replace(shared.LATENCY, help="Fixed cost of one collective; fit it to measurements "
                                     "(lesson 7)."),
        Number("compute_time", "Compute time per step", default=5, range=(0.001, 100_000),
               step=0.1, unit="s", dimension="seconds",
               help="Forward + backward of one step on one GPU: measure it, or compute "
                    "6·N·tokens ÷ (peak·MFU) with the training-FLOPs calculator."),
        shared.overlap(0, help="Share of the all-reduce hidden behind the backward pass "
                               "(bucketed gradients overlap a large part of it)."),
        *shared.gpu_inputs("H100 SXM", memory=True),
    ),
    outputs=(
        Output("gradient_bytes", "Gradients to all-reduce", "bytes"),
        Output("volume", "Sent per GPU (2(N−1)/N × size)", "bytes"),
        Output("comm_time", "Communication time (α + volume ÷ bandwidth)", "seconds"),
        shared.EFFICIENCY_OUT,
        Output("speedup", "Effective speed-up", "ratio"),
        Output("layout", "Recommended layout (model state only)", "text"),
        Output("layout_memory", "Memory per GPU in that layout", "bytes"),
        Output("reason", "Why", "text"),
    ),
    function=_scaling,
    sources=("Patarasuk & Yuan 2009 (ring all-reduce)", "nccl-tests doc/PERFORMANCE.md",
             "Rajbhandari et al. 2020 (ZeRO)"),
)


#: ZeRO's model-state memory per GPU at each stage (Rajbhandari et al. 2020, Figure 1).
_ZERO_STAGES = ("(2+2+K)Ψ", "4Ψ + KΨ/Nd", "2Ψ + (2+K)Ψ/Nd", "(4+K)Ψ/Nd")


def _zero(**kw: Any) -> dict[str, Any]:
    per_stage = {f"stage{s}": distributed.zero_memory_per_gpu(
        kw["n_params"], stage=s, dp=kw["dp"], optimizer_bytes=kw["optimizer_bytes"])
        for s in range(len(_ZERO_STAGES))}
    chosen = per_stage[f"stage{kw['stage']}"]
    return {
        **per_stage, "chosen": chosen,
        "fits": memory.fits(chosen, kw["gpu_memory"]),
        "headroom": memory.headroom(chosen, kw["gpu_memory"]),
    }


ZERO = Calculator(
    name="zero",
    title="ZeRO optimizer analysis",
    description="Model-state memory per GPU for ZeRO stages 0-3: partitioning optimizer "
                "states, then gradients, then parameters over the data-parallel GPUs.",
    lesson=LESSON,
    inputs=(
        *shared.params_inputs(CUSTOM, n_params=7.5),
        Integer("dp", "Data-parallel GPUs (Nd)", default=64, range=(1, 100_000)),
        Number("optimizer_bytes", "Optimizer bytes per parameter (K)", default=12,
               range=(0, 64), step=1, unit="bytes", dimension="bytes",
               help="12 for mixed-precision Adam: FP32 master weights, momentum and "
                    "variance (ZeRO paper §3.1)."),
        Select("stage", "ZeRO stage", default="3",
               choices=(Choice("0", "0: plain data parallel"),
                        Choice("1", "1: optimizer states partitioned"),
                        Choice("2", "2: + gradients"), Choice("3", "3: + parameters"))),
        *shared.gpu_inputs("A100 80GB", memory=True),
    ),
    outputs=(
        *(Output(f"stage{s}", f"Stage {s}: {formula}", "bytes")
          for s, formula in enumerate(_ZERO_STAGES)),
        Output("chosen", "Chosen stage, per GPU", "bytes"),
        Output("fits", "Fits on the chosen GPU (model state only)", "bool"),
        Output("headroom", "Left for activations (negative: short by)", "bytes"),
    ),
    function=_zero,
    sources=("Rajbhandari et al. 2020, ZeRO, Figure 1 (7.5B parameters, Nd = 64, K = 12)",),
)


def _pipeline(**kw: Any) -> dict[str, Any]:
    slots = distributed.pipeline_schedule(kw["stages"], kw["microbatches"],
                                          schedule=kw["schedule"],
                                          interleave=kw["interleave"])
    return {
        "bubble": distributed.pipeline_bubble_fraction(kw["stages"], kw["microbatches"],
                                                       kw["interleave"]),
        "makespan": distributed.pipeline_makespan(slots),
    }


PIPELINE_BUBBLE = Calculator(
    name="pipeline_bubble",
    title="Pipeline bubble",
    description="Idle time of pipeline parallelism: (p − 1)/(v·m) of the ideal time, and "
                "the length of the simulated schedule.",
    lesson=LESSON,
    inputs=(
        Integer("stages", "Pipeline stages p", default=4, range=(1, 16), slider=True),
        Integer("microbatches", "Micro-batches m", default=8, range=(1, 64), slider=True),
        Select("schedule", "Schedule", default="1f1b",
               choices=(Choice("gpipe", "GPipe (all forwards, then backwards)"),
                        Choice("1f1b", "1F1B (one forward, one backward)"),
                        Choice("interleaved", "interleaved 1F1B (v chunks per GPU)"))),
        Integer("interleave", "Model chunks per GPU v", default=1, range=(1, 4),
                help="Only the interleaved schedule uses v > 1; it needs m to be a multiple "
                     "of p."),
    ),
    outputs=(
        Output("bubble", "Bubble, as a share of the ideal time", "percent"),
        Output("makespan", "Iteration length (forward = 1, backward = 2)", "number",
               unit="time units"),
    ),
    function=_pipeline,
    sources=("Huang et al. 2019 (GPipe)", "Narayanan et al. 2021 §2.2"),
)


#: The parallel dimensions in the order shown, named for the bytes each sends and for the
#: time each leaves exposed.
_SENT = {"tensor": "Tensor parallel", "context": "Context parallel",
         "expert": "Expert parallel (all-to-all)", "pipeline": "Pipeline",
         "data": "Data parallel"}
_EXPOSED = {"tensor": "Tensor parallel", "context": "Context parallel",
            "expert": "Expert parallel", "pipeline": "Pipeline sends",
            "data": "Gradient synchronisation"}
_DIMENSIONS = tuple(_SENT)
_LINKS = {"nvlink": "NVLink", "network": "network"}


def _parallel_traffic(**kw: Any) -> dict[str, Any]:
    n_gpus = kw["tp"] * kw["cp"] * kw["pp"] * kw["dp"]
    plan = planner_inputs.plan_training(kw, n_gpus=n_gpus, tokens=1e12,
                                        plan_layout=planner_inputs.layout(kw))
    b, sent, tiers = plan.breakdown, plan.traffic, plan.tiers
    out: dict[str, Any] = {
        "degrees": plan.layout.describe(), "n_gpus": n_gpus, "feasible": plan.feasible,
        "problems": planner_inputs.problems_text(plan.problems),
        "links": "; ".join(f"{d}: {_LINKS[tiers[d]]}" for d in _DIMENSIONS
                           if sent.get(d, 0) > 0) or "no traffic (one GPU)",
    }
    for d in _DIMENSIONS:
        out[f"{d}_bytes"] = sent.get(d, 0.0)
        out[f"{d}_time"] = b.get(d, 0.0)
    largest = max(_DIMENSIONS, key=lambda d: b.get(d, 0.0))
    out["largest"] = (f"{largest}: {units.format_seconds(b[largest])} exposed per step"
                      if b.get(largest, 0) > 0 else "nothing exposed")
    out.update(step_compute=b["compute"] + b["recompute"] + b["memory_bound"],
               bubble=b["bubble"], step_time=plan.step_time, mfu=plan.mfu,
               memory_per_gpu=plan.memory_per_gpu, fits=plan.memory_fits)
    return out


_S = "seconds"
PARALLEL_TRAFFIC = Calculator(
    name="parallel_traffic",
    title="Traffic of every parallel dimension",
    description="A layout tp × cp × pp × dp (and ep for a mixture of experts; the GPU count "
                "follows from it): "
                "the bytes each GPU sends per step in each dimension, the link it crosses "
                "(NVLink inside the domain, the network beyond it, at the bandwidth NCCL "
                "achieves) and the seconds it leaves exposed, from "
                "gpulesson.planning.plan_training.",
    lesson=LESSON,
    inputs=(
        *shared.model_inputs("llama-3.1-405b"),
        shared.tokens("seq_len", "Sequence length", 8192),
        planner_inputs.step_tokens(16.777216, help="Llama 3 405B: 16M tokens per step "
                                   "(Dubey et al. 2024, Table 4)."),
        *planner_inputs.gpu_inputs("H100 SXM"),
        replace(shared.dtype_input(), help="FP8 also sends an expert all-to-all's dispatch "
                "in FP8, as DeepSeek-V3 does."),
        shared.degree("tp", 8, help="Innermost: consecutive GPUs, inside the NVLink domain "
                                    "when it fits."),
        shared.degree("cp", 1, help="Splits each sequence; must divide it."),
        shared.degree("ep", 1, help="Mixture-of-experts models: the experts split over ep of "
                                    "the dp GPUs. A model with group-limited routing sends a "
                                    "token across the network once to each server it "
                                    "reaches, and NVLink takes it on to the experts there: "
                                    "DeepSeek-V3 picks 4 of 8 groups of experts, so at ep 64 "
                                    "(a group per server) at most 4 copies cross, not 8 "
                                    "(DeepSeek-V3 report, §2.1.2 and §3.2.2)."),
        shared.degree("pp", 16, help="Outermost: consecutive stages sit on different servers."),
        shared.degree("dp", 128, help="Copies of the model; the GPU count is tp · cp · pp · dp. "
                                      "Llama 3 405B: 8 · 1 · 16 · 128 = 16,384 GPUs."),
        shared.degree("zero_stage", 2,
                      help="1: Megatron's distributed optimizer (gradients reduce-scattered, "
                           "weights all-gathered); 2 also shards the gradients, as Llama 3's "
                           "FSDP did (it re-shards no weights after the forward pass; Dubey et "
                           "al. 2024, §3.3.2); 3 also shards the weights and gathers them "
                           "for the passes. Counted once per step at every stage, as with "
                           "one micro-batch: FSDP and DeepSpeed's stage 2 send more with "
                           "gradient accumulation (lesson 7, \"What each stage sends\")."),
        shared.MICRO_BATCH,
        shared.degree("interleave", 2),
        replace(shared.RECOMPUTE, default="selective",
                choices=(*shared.RECOMPUTE.choices,
                         Choice("deepseek-v3", "DeepSeek-V3's recipe (latent attention)")),
                help="Selective: the attention core is recomputed; full: every layer's "
                     "forward again; DeepSeek-V3's recipe (its report, §3.2.3 and §3.3.3): "
                     "norms and latent up-projections recomputed, activations kept in FP8, "
                     "for models with latent attention only. DeepSeek-V3 trained on 4,096-"
                     "token sequences (§4.2): with them and its recipe, its layout fits."),
        replace(shared.GRAD_DTYPE, default="fp32",
                help="Llama 3 reduce-scatters its gradients in FP32 (Dubey et al. 2024, "
                     "§3.3.4), twice the bytes of BF16."),
        shared.overlap(100, help="Share of the gradient synchronisation hidden behind the "
                                 "backward pass of the last micro-batch, where a once-a-step "
                                 "synchronisation (DDP, Megatron's distributed optimizer) "
                                 "waits."),
    ),
    outputs=(
        planner_inputs.LAYOUT_OUT,
        Output("n_gpus", "GPUs (tp · cp · pp · dp)", "count"),
        *planner_inputs.VERDICT_OUT,
        Output("links", "Link each dimension crosses", "text"),
        *(Output(f"{d}_bytes", f"{label}: sent per GPU per step", "bytes")
          for d, label in _SENT.items()),
        *(Output(f"{d}_time", f"{label}, exposed", _S) for d, label in _EXPOSED.items()),
        Output("largest", "Largest exposed traffic", "text"),
        Output("step_compute", "Computing per step (incl. recompute)", _S),
        Output("bubble", "Pipeline bubble per step", _S),
        planner_inputs.STEP_TIME_OUT,
        planner_inputs.MFU_OUT,
        planner_inputs.MEMORY_PER_GPU_OUT,
        planner_inputs.FITS_OUT,
    ),
    function=_parallel_traffic,
    sources=("Korthikanti et al. 2022 (tensor and sequence parallelism)",
             "Dubey et al. 2024 (Llama 3), Table 4", "DeepSeek-AI 2024 (DeepSeek-V3), §3.2",
             "nccl-tests issues #212 and #290 (achievable bandwidth)"),
)

ENTRIES = (SCALING_EFFICIENCY, ZERO, PIPELINE_BUBBLE, PARALLEL_TRAFFIC)
