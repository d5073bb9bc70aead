"""Lesson 6, ``distributed_math``: data-parallel scaling, ZeRO stages, the pipeline bubble."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gpulesson import distributed, memory
from gpulesson.calculators import shared
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
                     "(one NIC per GPU, as in NVIDIA DGX H100)."),
        replace(shared.LATENCY, help="Fixed cost of one collective; fit it to measurements "
                                     "(lesson 6)."),
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


def _zero(**kw: Any) -> dict[str, Any]:
    per_stage = {s: distributed.zero_memory_per_gpu(
        kw["n_params"], stage=s, dp=kw["dp"], optimizer_bytes=kw["optimizer_bytes"])
        for s in range(4)}
    chosen = per_stage[int(kw["stage"])]
    return {
        "stage0": per_stage[0], "stage1": per_stage[1], "stage2": per_stage[2],
        "stage3": per_stage[3], "chosen": chosen,
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
        Output("stage0", "Stage 0: (2+2+K)Ψ", "bytes"),
        Output("stage1", "Stage 1: 4Ψ + KΨ/Nd", "bytes"),
        Output("stage2", "Stage 2: 2Ψ + (2+K)Ψ/Nd", "bytes"),
        Output("stage3", "Stage 3: (4+K)Ψ/Nd", "bytes"),
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

ENTRIES = (SCALING_EFFICIENCY, ZERO, PIPELINE_BUBBLE)
