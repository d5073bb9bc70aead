"""Lesson 9, ``planning_dashboard``: plan a training run, every figure from a formula."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gpulesson import cost, distributed, flops, memory, planning, transformer
from gpulesson.calculators import shared
from gpulesson.calculators.spec import Calculator, Choice, Integer, Number, Output, Select

LESSON = "planning_dashboard"


def _planning(**kw: Any) -> dict[str, Any]:
    cfg = shared.config(kw)
    n = transformer.param_count(cfg)
    n_gpus = kw["n_gpus"]
    layout_set = kw["layout"] == "manual"
    advised = distributed.recommend_layout(
        n_params=n, gpu_memory=kw["gpu_memory"], n_gpus=n_gpus,
        gpus_per_node=kw["gpus_per_node"], precision=kw["precision"],
        optimizer=kw["optimizer"], cfg=cfg, batch=kw["batch"], seq_len=kw["seq_len"],
        recompute=kw["recompute"])
    if layout_set:
        chosen = distributed.layout_memory(
            n_params=n, n_gpus=n_gpus, tp=kw["tp"], pp=kw["pp"],
            zero_stage=kw["zero_stage"], precision=kw["precision"],
            optimizer=kw["optimizer"], cfg=cfg, batch=kw["batch"], seq_len=kw["seq_len"],
            recompute=kw["recompute"])
        dp, tp, pp, stage = chosen.dp, chosen.tp, chosen.pp, chosen.zero_stage
        need, shard = chosen.total, chosen.params_per_gpu
        fits = memory.fits(need, kw["gpu_memory"])
    else:
        dp, tp, pp, stage = advised.dp, advised.tp, advised.pp, advised.zero_stage
        need, shard, fits = advised.memory_per_gpu, advised.params_per_gpu, advised.fits
    total, time = shared.training_run(n, kw["tokens"], n_gpus, kw)
    step = shared.training_run(n, kw["step_tokens"], n_gpus, kw)[1]  # one global batch
    # each data-parallel rank synchronises the gradients of its model-parallel shard
    comm = distributed.data_parallel_sync_time(
        shard, dp=dp, zero_stage=stage,
        bytes_per_value=memory.precision_bytes(kw["grad_dtype"]),
        bandwidth=kw["bandwidth"], latency=kw["latency"])
    efficiency = distributed.scaling_efficiency(step, comm, kw["overlap"])
    return {
        "n_params": n, "layout": advised.name,
        "degrees": f"dp {dp} × tp {tp} × pp {pp}, ZeRO stage {stage}",
        "memory_per_gpu": need, "fits": fits,
        "reason": advised.reason, "total_flops": total,
        "tokens_per_second": flops.tokens_per_second(
            n_devices=n_gpus, peak_flops=kw["peak_flops"], mfu=kw["mfu"],
            flops_per_token=flops.flops_per_token(n)),
        "step_compute": step, "comm_time": comm, "efficiency": efficiency,
        "bottleneck": planning.bottleneck(fits=fits, efficiency=efficiency,
                                          layout_set=layout_set),
        "time": time,
        "gpu_hours": cost.gpu_hours(gpus=n_gpus, seconds=time),
        "cost": cost.run_cost(usd_per_gpu_hour=kw["usd_per_gpu_hour"], gpus=n_gpus,
                              seconds=time),
    }


PLANNING = Calculator(
    name="planning",
    title="Plan a training run",
    description="Choose a model, a GPU, a cluster, a precision, a batch and a layout (or let "
                "the advisor pick one): memory per GPU, throughput, step time, communication, "
                "bottleneck, training days and cost, every figure from the calculators with "
                "its inputs in view.",
    lesson=LESSON,
    inputs=(
        *shared.model_inputs("llama-2-7b"),
        shared.dtype_input(),
        # down to 1 GFLOP/s: a CPU's measured rate (gpulesson.machine) is a valid "GPU" here
        *shared.gpu_inputs("H100 SXM", memory=True, peak=replace(
            shared.PEAK, min=0.001,
            help="Dense peak for the chosen precision (not the 2:4-sparse headline), or a "
                 "measured rate: gpulesson.machine.this_machine() for this computer.")),
        shared.N_GPUS,
        shared.GPUS_PER_NODE,
        Select("layout", "Parallel layout", default="recommended",
               choices=(Choice("recommended", "recommended (cheapest that fits)"),
                        Choice("manual", "as set below (tp, pp, ZeRO stage)")),
               help="The advisor tries data parallel, ZeRO-1/2/3, tensor parallel in a "
                    "node, then pipeline stages, and takes the first that fits; or set your "
                    "own."),
        Integer("tp", "Tensor-parallel size (if set)", default=1, range=(1, 1024),
                help="Used when the layout is set: splits every weight matrix; must divide "
                     "the heads. tp × pp must divide the GPUs; dp is the rest."),
        Integer("pp", "Pipeline stages (if set)", default=1, range=(1, 1024),
                help="Used when the layout is set: at most the number of layers; the "
                     "largest stage holds ⌈layers ÷ pp⌉ layers."),
        Integer("zero_stage", "ZeRO stage (if set)", default=1, range=(0, 3),
                help="Used when the layout is set: 0 none, 1 optimizer states, 2 + "
                     "gradients, 3 + parameters, partitioned across the data-parallel GPUs."),
        shared.TRAINING_PRECISION,
        shared.OPTIMIZER,
        shared.batch("Micro-batch per GPU", unit="sequences"),
        shared.tokens("seq_len", "Sequence length", 4096),
        replace(shared.RECOMPUTE, default="selective"),
        shared.TRAINING_TOKENS,
        Number("step_tokens", "Tokens per step (global batch)", default=4,
               range=(0.001, 1000), step=0.5, unit="million", scale=1e6, dimension="count",
               help="Llama 2 used 4M tokens per step (Touvron et al. 2023, §2.2)."),
        shared.percent("mfu", "MFU (assumed)", default=40, range=(1, 100), step=1,
                       help="Model FLOPs utilisation of the whole run: an assumption, shown "
                            "so you can question it (large published runs report 35-45 %)."),
        shared.GRAD_DTYPE,
        replace(shared.NETWORK, help="One-way, per GPU: 400 Gb/s InfiniBand NDR is 50 GB/s."),
        shared.LATENCY,
        shared.overlap(50),
        shared.gpu_hour_price("reserved clusters and smaller providers charged a fraction "
                              "of that."),
    ),
    outputs=(
        shared.N_PARAMS_OUT,
        Output("layout", "Recommended layout", "text"),
        Output("degrees", "Layout used", "text"),
        Output("memory_per_gpu", "Memory per GPU", "bytes",
               help="Model state after ZeRO plus stored activations, on the GPUs of the "
                    "largest pipeline stage."),
        Output("fits", "Fits", "bool"),
        Output("reason", "Why the recommended layout", "text"),
        Output("total_flops", "Training FLOPs (6·N·D)", "flops"),
        Output("tokens_per_second", "Throughput at that MFU (all GPUs)", "tokens/s"),
        Output("step_compute", "Compute time per step at that MFU", "seconds"),
        Output("comm_time", "Gradient synchronisation per step", "seconds"),
        shared.EFFICIENCY_OUT,
        Output("bottleneck", "Bottleneck", "text"),
        shared.TRAINING_TIME_OUT,
        shared.GPU_HOURS_OUT,
        Output("cost", "Cost at that price", "usd"),
    ),
    function=_planning,
    sources=("Narayanan et al. 2021 (Megatron-LM at scale)", "Rajbhandari et al. 2020",
             "Korthikanti et al. 2022", "Chowdhery et al. 2022, appendix B",
             "Dubey et al. 2024 (Llama 3), section 3.3"),
)

ENTRIES = (PLANNING,)
