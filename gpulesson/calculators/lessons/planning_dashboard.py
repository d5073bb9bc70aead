"""Lesson 9, ``planning_dashboard``: plan a training run and a deployment.

Both entries hand their inputs to :mod:`gpulesson.planning` and show what it returns:
``planning`` is :func:`gpulesson.planning.plan_training` (memory per GPU, step time and its
parts, the predicted MFU, days and cost; the layout set or searched), ``serving_plan`` is
:func:`gpulesson.planning.plan_serving` (vLLM's KV cache and concurrency, TTFT, TPOT,
replicas and cost for a traffic). Inputs come in the dashboard's groups: model and data,
hardware, layout; outputs follow, the verdict first.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gpulesson import flops, hardware, planning, transformer
from gpulesson.calculators import shared
from gpulesson.calculators.spec import (
    CUSTOM,
    Calculator,
    Choice,
    Integer,
    Keyed,
    Number,
    Output,
    Preset,
    Select,
)

LESSON = "planning_dashboard"
_NO_PRICE = 0.0


#: The fields of a model's shape the form shows (gpulesson.calculators.shared.config).
_SHAPE = ("hidden", "layers", "heads", "kv_heads", "head_dim", "ffn", "vocab", "max_positions",
          "tied_embeddings", "gated_mlp", "norm", "linear_bias", "qkv_bias")


def _config(kw: dict[str, Any]) -> transformer.TransformerConfig:
    """The model the inputs describe: a preset's whole config (its experts, latent attention,
    sliding windows), with the shape as entered; the shape alone for a custom model."""
    shown = shared.config(kw)
    base = transformer.PRESETS.get(kw.get("model", CUSTOM))
    if base is None:
        return shown
    edits = {f: getattr(shown, f) for f in _SHAPE if getattr(shown, f) != getattr(base, f)}
    return replace(base, **edits, name=f"{base.name}, edited") if edits else base


def _gpu_fill(name: str, *, serving: bool = False) -> dict[str, Any]:
    view = planning.gpu_view(name)
    fill: dict[str, Any] = {
        "gpu_memory": view.usable_memory, "bandwidth": view.bandwidth,
        "peak_flops": Keyed(by="dtype", values=dict(view.spec.peak_flops),
                            missing="{choice} has no dense {key} figure on its datasheet"),
        "usd_per_gpu_hour": view.price if view.price is not None else _NO_PRICE,
        "matmul_efficiency": view.matmul_efficiency}
    if not serving:
        fill.update(gpus_per_node=max(view.domain, 1), scaleout=view.scaleout_bandwidth)
    return fill


def _gpu_inputs(default: str, *, serving: bool = False) -> tuple[Any, ...]:
    """A GPU preset filling what the planners read of it (gpulesson.planning.gpu_view)."""
    fills = {k: _gpu_fill(k, serving=serving) for k in hardware.GPUS}
    choices = tuple(Choice(k, k) for k in hardware.GPUS) + (
        Choice(CUSTOM, "Custom (edit the figures)"),)
    out = [
        Preset("gpu", "GPU", default=default, choices=choices, fills=fills,
               help=shared.GPU_NOTE + " The planners read the reported memory, links and "
                    "a dated price through gpulesson.planning.gpu_view."),
        Number("gpu_memory", "Memory per GPU (reported)", range=(0.001, 10_000), step=1,
               unit="GB", scale=1e9, dimension="bytes",
               help="The total the driver reports, decimal GB (nvidia-smi: H100 SXM 81,559 "
                    "MiB = 85.5 GB); a training plan keeps 5 % of it free, a serving plan "
                    "uses the utilization share."),
        Number("bandwidth", "Memory bandwidth", range=(0.001, 100), step=0.01, unit="TB/s",
               scale=1e12, dimension="bytes/s"),
        replace(shared.PEAK, min=0.001,
                help="Dense peak for the chosen precision (never the 2:4-sparse headline), "
                     "or a measured rate: gpulesson.machine.this_machine()."),
        shared.percent("matmul_efficiency", "Achievable matmul efficiency", default=None,
                       range=(1, 100), step=1,
                       help="Best large-GEMM rate over the dense peak (Bekman's MAMF table: "
                            "H100 80 %, A100 86 %), or 100 % for a measured peak."),
    ]
    if not serving:
        out += [
            replace(shared.GPUS_PER_NODE, label="GPUs per NVLink domain", default=None,
                    help="GPUs sharing NVLink: 8 in an HGX server, 72 in an NVL72 rack."),
            Number("scaleout", "Network bandwidth per GPU", range=(0.1, 10_000), step=1,
                   unit="GB/s", scale=1e9, dimension="bytes/s",
                   help="One way, per GPU: 400 Gb/s InfiniBand NDR is 50 GB/s; NCCL reaches "
                        "about 94 % of it."),
        ]
    out.append(Number("usd_per_gpu_hour", "Price per GPU-hour", range=(0, 1000), step=0.01,
                      unit="$/h", dimension="usd",
                      help="The GPU's dated default quote (gpulesson.prices.default_price: the "
                           "cheapest hyperscaler on demand) where it has one (0 = none known: "
                           "enter a quote). " + shared.PRICE_NOTE))
    return tuple(out)


def _spec(kw: dict[str, Any], precision: str) -> hardware.GPUSpec:
    """The GPU the inputs describe: the preset's datasheet with the figures as entered."""
    base = hardware.gpu(kw["gpu"]) if kw["gpu"] != CUSTOM else None
    peaks = dict(base.peak_flops) if base else {}
    peak = kw["peak_flops"]
    if precision == "fp8":
        peaks["fp8"] = peak
        peaks.setdefault("bf16", peak / 2)
    else:
        peaks["bf16"] = peaks["fp16"] = peak
    if base is not None:
        return replace(base, memory_bytes=int(kw["gpu_memory"]), bandwidth=kw["bandwidth"],
                       peak_flops=peaks)
    return hardware.GPUSpec(name="custom GPU", memory_bytes=int(kw["gpu_memory"]),
                            bandwidth=kw["bandwidth"], peak_flops=peaks, tdp_watts=1.0,
                            source="the reader's figures")


def _price_note(plan_cost: float | None, price: float) -> str:
    if plan_cost is None or price <= 0:
        return "no dated price for this GPU: enter a quote (cost shown as 0)"
    return f"at ${price:g} per GPU-hour"


def _planning(**kw: Any) -> dict[str, Any]:
    cfg = _config(kw)
    dtype = kw["dtype"]
    precision = dtype if dtype in ("bf16", "fp16", "fp8") else "bf16"
    layout: planning.Layout | str = "auto"
    if kw["layout"] == "manual":
        layout = planning.Layout(tp=kw["tp"], pp=kw["pp"], cp=kw["cp"],
                                 zero_stage=kw["zero_stage"], micro_batch=kw["batch"],
                                 interleave=kw["interleave"])
    price = kw["usd_per_gpu_hour"]
    plan = planning.plan_training(
        cfg, _spec(kw, precision), n_gpus=kw["n_gpus"], tokens=kw["tokens"],
        global_batch_tokens=int(round(kw["step_tokens"])), seq_len=kw["seq_len"],
        precision=precision, layout=layout, recompute=kw["recompute"],
        scaleout_bandwidth=kw["scaleout"], nvlink_domain=kw["gpus_per_node"],
        usable_memory=kw["gpu_memory"], matmul_efficiency=kw["matmul_efficiency"],
        usd_per_gpu_hour=price if price > 0 else None,
        grad_bytes=4 if kw["grad_dtype"] == "fp32" else 2,
        overlap={"data": kw["overlap"]})
    n = transformer.param_count(cfg)
    b = plan.breakdown
    return {
        "feasible": plan.feasible,
        "problems": " ".join(plan.problems) or "none",
        "degrees": plan.layout.describe(),
        "reason": plan.reason or "the layout as set",
        "bottleneck": plan.bottleneck,
        "mfu": plan.mfu,
        "time": plan.days * flops.SECONDS_PER_DAY,
        "gpu_hours": plan.gpu_hours,
        "cost": plan.cost_usd or 0.0, "price_note": _price_note(plan.cost_usd, price),
        "memory_per_gpu": plan.memory_per_gpu, "memory_limit": plan.memory_limit,
        "fits": plan.memory_fits,
        "tokens_per_second": plan.tokens_per_second, "step_time": plan.step_time,
        "micro_batches": plan.micro_batches,
        "step_compute": b["compute"] + b["recompute"] + b["memory_bound"],
        "bubble": b["bubble"], "tensor_comm": b["tensor"], "context_comm": b["context"],
        "pipeline_comm": b["pipeline"], "comm_time": b["data"],
        "efficiency": plan.efficiency,
        "n_params": n, "total_flops": flops.training_flops(n, kw["tokens"]),
    }


_SECONDS = "seconds"
PLANNING = Calculator(
    name="planning",
    title="Plan a training run",
    description="Choose a model and its data, a GPU and a cluster, and a layout (or let the "
                "planner compare them): memory per GPU, the step time and where it goes, "
                "the predicted MFU, days, GPU-hours and cost, every figure from "
                "gpulesson.planning with its inputs in view.",
    lesson=LESSON,
    inputs=(
        # model and data
        *shared.model_inputs("llama-2-7b"),
        shared.TRAINING_TOKENS,
        Number("step_tokens", "Tokens per step (global batch)", default=4.194304,
               range=(0.001, 1000), step=0.5, unit="million", scale=1e6, dimension="count",
               help="Llama 2 used 4M (4,194,304) tokens per step (Touvron et al. 2023, §2.2); "
                    "a whole number of sequences."),
        shared.tokens("seq_len", "Sequence length", 4096),
        # hardware
        *_gpu_inputs("H100 SXM"),
        replace(shared.dtype_input(), help="Matrix-multiply precision: FP8 speeds up the "
                "weight matrices only; MFU stays against the BF16 peak."),
        shared.N_GPUS,
        # layout
        Select("layout", "Parallel layout", default="auto",
               choices=(Choice("auto", "fastest that fits (compared)"),
                        Choice("manual", "as set below")),
               help="The planner compares the valid layouts and keeps the fastest that fits; "
                    "or set tp, pp, cp, ZeRO stage and micro-batch yourself (dp is the rest)."),
        Integer("tp", "Tensor-parallel size (if set)", default=1, range=(1, 1024),
                help="Must divide the heads and KV heads; beyond the NVLink domain its "
                     "all-reduces cross the network."),
        Integer("pp", "Pipeline stages (if set)", default=1, range=(1, 1024),
                help="At most the number of layers; adds a bubble of (pp − 1)/(v·m)."),
        Integer("cp", "Context-parallel size (if set)", default=1, range=(1, 1024),
                help="Splits each sequence; must divide it."),
        Integer("zero_stage", "ZeRO stage (if set)", default=1, range=(0, 3),
                help="0 none, 1 optimizer states (Megatron's distributed optimizer), 2 + "
                     "gradients, 3 + parameters."),
        shared.batch("Micro-batch (if set)", unit="sequences"),
        Integer("interleave", "Model chunks per pipeline GPU (if set)", default=1,
                range=(1, 64), help="Interleaved schedule: divides the bubble."),
        replace(shared.RECOMPUTE, default="selective",
                help="Selective: the attention core is recomputed (FlashAttention's way); "
                     "full: every layer's forward again, 8N instead of 6N."),
        shared.GRAD_DTYPE,
        shared.overlap(100, help="Share of the gradient synchronisation hidden behind the "
                               "backward pass of the last micro-batch (buckets are ready "
                               "only then)."),
    ),
    outputs=(
        Output("feasible", "Feasible", "bool"),
        Output("problems", "Problems", "text"),
        Output("degrees", "Layout", "text"),
        Output("reason", "Why this layout", "text"),
        Output("bottleneck", "Bottleneck", "text"),
        Output("mfu", "MFU (predicted)", "percent",
               help="Model FLOPs over the BF16 dense peak: an output of the step time."),
        Output("time", "Training time", _SECONDS),
        shared.GPU_HOURS_OUT,
        Output("cost", "Cost", "usd"),
        Output("price_note", "Price", "text"),
        Output("memory_per_gpu", "Memory per GPU", "bytes",
               help="Model state after ZeRO plus stored activations, on the largest "
                    "pipeline stage."),
        Output("memory_limit", "Memory a GPU can use (5 % kept free)", "bytes"),
        Output("fits", "Fits", "bool"),
        Output("tokens_per_second", "Throughput (all GPUs)", "tokens/s"),
        Output("step_time", "Step time", _SECONDS),
        Output("micro_batches", "Micro-batches per step", "number"),
        Output("step_compute", "… computing (incl. recompute)", _SECONDS),
        Output("bubble", "… pipeline bubble", _SECONDS),
        Output("tensor_comm", "… tensor-parallel traffic", _SECONDS),
        Output("context_comm", "… context-parallel traffic", _SECONDS),
        Output("pipeline_comm", "… pipeline sends", _SECONDS),
        Output("comm_time", "… gradient synchronisation, exposed", _SECONDS),
        Output("efficiency", "Share of the step computing", "percent"),
        shared.N_PARAMS_OUT,
        Output("total_flops", "Training FLOPs (6·N·D)", "flops"),
    ),
    function=_planning,
    sources=("Narayanan et al. 2021 (Megatron-LM at scale)", "Korthikanti et al. 2022",
             "Rajbhandari et al. 2020", "Dubey et al. 2024 (Llama 3), Table 4",
             "nccl-tests issue #212 (achievable NVLink bandwidth)",
             "Bekman, ML Engineering: Maximum Achievable Matmul FLOPS"),
)


def _serving(**kw: Any) -> dict[str, Any]:
    cfg = _config(kw)
    base = hardware.gpu(kw["gpu"]) if kw["gpu"] != CUSTOM else None
    peaks = dict(base.peak_flops) if base else {}
    peaks["bf16"] = kw["peak_flops"]
    spec = (replace(base, memory_bytes=int(kw["gpu_memory"]), bandwidth=kw["bandwidth"],
                    peak_flops=peaks) if base else hardware.GPUSpec(
        name="custom GPU", memory_bytes=int(kw["gpu_memory"]), bandwidth=kw["bandwidth"],
        peak_flops=peaks, tdp_watts=1.0, source="the reader's figures"))
    price = kw["usd_per_gpu_hour"]
    plan = planning.plan_serving(
        cfg, spec, tp=kw["tp"] or None, max_model_len=kw["max_model_len"],
        kv_dtype=kw["kv_dtype"], weight_dtype=kw["weight_dtype"],
        gpu_memory_utilization=kw["utilization"], qps=kw["qps"] or None,
        prompt_tokens=kw["prompt_tokens"], output_tokens=kw["output_tokens"],
        ttft_slo=kw["ttft_slo"] or None, tpot_slo=kw["tpot_slo"] or None,
        usable_memory=kw["gpu_memory"], matmul_efficiency=kw["matmul_efficiency"],
        usd_per_gpu_hour=price if price > 0 else None)
    per_m = plan.cost_per_million_tokens
    return {
        "feasible": plan.feasible, "problems": " ".join(plan.problems) or "none",
        "layout": f"tp {plan.tp} × {plan.replicas} replica{'s' if plan.replicas > 1 else ''}"
                  f" = {plan.gpus} GPU{'s' if plan.gpus > 1 else ''}",
        "reason": plan.reason or "tp as set",
        "kv_cache_tokens": plan.kv_cache_tokens, "max_concurrency": plan.max_concurrency,
        "batch": plan.batch, "ttft": plan.ttft, "tpot": plan.tpot,
        "throughput": plan.throughput, "cost": per_m or 0.0,
        "price_note": ("per million output tokens at the traffic" if per_m is not None
                       else "no dated price for this GPU: enter a quote (cost shown as 0)"),
        "kv_memory": max(plan.budget.kv_cache, 0.0), "weights": plan.budget.weights,
        "activation_peak": plan.budget.activation_peak,
    }


SERVING = Calculator(
    name="serving_plan",
    title="Plan a deployment",
    description="A model on a GPU with vLLM: the KV cache it allocates at start-up and its "
                "maximum concurrency, then for a traffic and its SLOs the tensor-parallel "
                "size and replicas that meet them, time to first token, time per output "
                "token and cost, from gpulesson.planning.plan_serving.",
    lesson=LESSON,
    inputs=(
        *shared.model_inputs("llama-3-70b"),
        *_gpu_inputs("H100 SXM", serving=True),
        replace(shared.dtype_input(), help="Precision of the matrix products (the peak "
                "above follows it)."),
        Integer("tp", "Tensor-parallel size (0 = choose)", default=0, range=(0, 64),
                help="GPUs per replica; 0 lets the planner compare 1, 2, 4 and 8."),
        shared.storage_input("weight_dtype", "Weights", "bf16"),
        shared.storage_input("kv_dtype", "KV cache", "bf16"),
        shared.tokens("max_model_len", "max_model_len", 8192,
                      help="The longest request vLLM must admit; its KV cache must fit."),
        shared.percent("utilization", "gpu_memory_utilization", default=90, range=(10, 100),
                       step=1, help="vLLM's share of the memory (default 0.9)."),
        Number("qps", "Traffic (0 = one replica at full load)", default=20, range=(0, 1e6),
               step=1, unit="requests/s", help="Arrivals per second, all replicas."),
        shared.tokens("prompt_tokens", "Prompt", 2000),
        shared.tokens("output_tokens", "Output", 300),
        Number("ttft_slo", "Time to first token, at most (0 = any)", default=200,
               range=(0, 1e6), step=10, unit="ms", scale=1e-3, dimension="seconds"),
        Number("tpot_slo", "Time per output token, at most (0 = any)", default=50,
               range=(0, 1e6), step=5, unit="ms", scale=1e-3, dimension="seconds"),
    ),
    outputs=(
        Output("feasible", "Feasible", "bool"),
        Output("problems", "Problems", "text"),
        Output("layout", "GPUs", "text"),
        Output("reason", "Why", "text"),
        Output("kv_cache_tokens", "KV cache per replica (vLLM's 'GPU KV cache size')",
               "count", help="Tokens of KV cache the budget leaves, in 16-token blocks."),
        Output("max_concurrency", "Maximum concurrency at max_model_len", "ratio"),
        Output("batch", "Sequences in flight per replica", "number"),
        Output("ttft", "Time to first token", _SECONDS),
        Output("tpot", "Time per output token", _SECONDS),
        Output("throughput", "Output tokens/s, all replicas", "tokens/s"),
        Output("cost", "Cost per million output tokens", "usd"),
        Output("price_note", "Price", "text"),
        Output("kv_memory", "KV cache memory per GPU", "bytes", binary=True),
        Output("weights", "Weights per GPU", "bytes", binary=True),
        Output("activation_peak", "Profiled activation peak per GPU", "bytes", binary=True),
    ),
    function=_serving,
    sources=("vLLM issue #10517 (start-up memory arithmetic)", "vLLM PR #13596 (maximum "
             "concurrency)", "Bekman, ML Engineering: Maximum Achievable Matmul FLOPS"),
)

ENTRIES = (PLANNING, SERVING)
