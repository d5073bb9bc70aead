"""Lesson 10, ``planning_dashboard``: plan a training run and a deployment.

Both entries hand their inputs to :mod:`gpulesson.planning` and show what it returns:
``planning`` is :func:`gpulesson.planning.plan_training` (memory per GPU, step time and its
parts, the predicted MFU, days and cost; the layout set or searched), ``serving_plan`` is
:func:`gpulesson.planning.plan_serving` (vLLM's KV cache and concurrency, TTFT, TPOT,
replicas and cost for a traffic). Inputs come in the dashboard's groups: model and data,
hardware, layout; outputs follow, the verdict first.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from gpulesson import flops, planning, transformer
from gpulesson.calculators import planner_inputs, shared
from gpulesson.calculators.spec import (
    Calculator,
    Choice,
    Integer,
    Number,
    Output,
    Select,
)
from gpulesson.planning import bands

LESSON = "planning_dashboard"


#: The parts of a step the planning entry shows after its step time: output name, key of
#: gpulesson.planning's breakdown, label. Computing comes first (its parts summed).
_STEP_PARTS = (
    ("bubble", "bubble", "… pipeline bubble"),
    ("tensor_comm", "tensor", "… tensor-parallel traffic"),
    ("context_comm", "context", "… context-parallel traffic"),
    ("pipeline_comm", "pipeline", "… pipeline sends"),
    ("expert_comm", "expert", "… expert-parallel all-to-all"),
    ("comm_time", "data", "… gradient synchronisation, exposed"),
)
_COMPUTING = ("compute", "recompute", "memory_bound", "optimizer", "launch")


#: A short label for each attention kernel the planner knows (perf_model.ATTENTION_KERNELS).
_KERNEL_LABELS = {"fused": "the GPU's own (FA3, cuDNN)", "flash-attention-2": "FlashAttention-2",
                  "triton": "Triton FlashAttention (2022)"}
#: The matrix-multiply precisions a training plan takes (gpulesson.planning.plan_training).
_TRAINING_DTYPES = ("bf16", "fp16", "fp8")


def _rounded_up(value: float, digits: int = 3) -> float:
    """``value`` (above 0) rounded up to ``digits`` significant digits: a least amount that
    still suffices once typed."""
    scale = 10.0 ** (math.floor(math.log10(value)) - digits + 1)
    return math.ceil(round(value / scale, 9)) * scale


def _check_split(kw: dict[str, Any]) -> None:
    """Refuse a hand-set layout whose tp x cp x pp does not divide the GPUs, naming the
    first degree at which the product stops dividing them (the field to change), not the
    layout menu."""
    n, product = kw["n_gpus"], 1
    for name in ("tp", "cp", "pp"):
        product *= kw[name]
        if n % product:
            raise ValueError(
                f"{name}: tp × cp × pp = {kw['tp']} × {kw['cp']} × {kw['pp']} = "
                f"{kw['tp'] * kw['cp'] * kw['pp']:,} must divide the {n:,} GPUs (the "
                "data-parallel size takes the rest); change it or the GPUs")


def _planning(**kw: Any) -> dict[str, Any]:
    if kw["dtype"] not in _TRAINING_DTYPES and kw["gpu"] != planner_inputs.CUSTOM:
        # its peak would take the BF16 peak's place, and the MFU be quoted against it
        raise ValueError(
            f"dtype: the training planner plans bf16, fp16 or fp8 on a GPU's datasheet, got "
            f"{kw['dtype']!r}; {kw['dtype'].upper()} only on a custom GPU whose peak is a "
            "measured rate (section 6)")
    if kw["tokens"] < kw["step_tokens"]:
        # a run takes at least one step: fewer tokens than one global batch would take less
        # time than the step it needs
        raise ValueError(
            f"tokens: {kw['tokens']:,.0f} training tokens are less than one step, the global "
            f"batch of {kw['step_tokens']:,.0f} tokens; enter at least "
            f"{_rounded_up(kw['step_tokens'] / 1e9):g} billion, or fewer "
            "tokens per step")
    if kw["layout"] == "manual":
        _check_split(kw)
    cfg = planner_inputs.config(kw)
    price = kw["usd_per_gpu_hour"]
    plan = planner_inputs.plan_training(
        kw, n_gpus=kw["n_gpus"], tokens=kw["tokens"],
        plan_layout=planner_inputs.layout(kw) if kw["layout"] == "manual" else "auto",
        usd_per_gpu_hour=price if price > 0 else None)
    n = transformer.param_count(cfg)
    active = transformer.active_params(cfg)
    b = plan.breakdown
    band, like = bands.uncertainty(plan)
    low, high = bands.mfu_range(plan)
    nearest = bands.similar_runs(plan)
    # a plan that cannot run is not priced; its MFU, step and days are the leanest
    # layout's as if it fitted (lesson 10's exercise 9 reads them for a machine too small)
    runs = plan.feasible
    return {
        "feasible": plan.feasible,
        "problems": planner_inputs.problems_text(plan.problems),
        "degrees": plan.layout.describe(),
        "reason": plan.reason or "the layout as set",
        "bottleneck": plan.bottleneck,
        "mfu": plan.mfu, "mfu_band": band,
        "mfu_range": f"{100 * low:.0f}–{100 * high:.0f} %",
        "band_note": f"the largest error of the {like} published runs most like this plan "
                     "(same precision, dense or MoE, nearest in size), each predicted by "
                     "factors fitted without it: "
                     + "; ".join(f"{r.name} {r.error:+.0%}" for r in nearest),
        "dominant": plan.dominant_term.replace("_", "-"),
        "time": plan.days * flops.SECONDS_PER_DAY,
        "gpu_hours": plan.gpu_hours,
        "cost": (plan.cost_usd or 0.0) if runs else None,
        "price_note": (planner_inputs.price_note(plan.cost_usd, price, kw["gpu"]) if runs
                       else _NOT_RUN_PRICE),
        "memory_per_gpu": plan.memory_per_gpu, "memory_limit": plan.memory_limit,
        "fits": plan.memory_fits,
        "tokens_per_second": plan.tokens_per_second, "step_time": plan.step_time,
        "micro_batches": plan.micro_batches,
        "step_compute": sum(b[part] for part in _COMPUTING),
        **{name: b[key] for name, key, _ in _STEP_PARTS},
        "efficiency": plan.efficiency,
        "n_params": n, "active_params": active,
        "total_flops": flops.training_flops(active, kw["tokens"]),
        "model_flops": flops.model_flops_per_token(cfg, seq_len=kw["seq_len"]) * kw["tokens"],
    }


_SECONDS = "seconds"
#: What the cost output and the price note say for a plan (training or serving) that
#: cannot run.
_NO_COST = "none: no cost for a plan that cannot run"
_NOT_RUN_PRICE = "not priced: the plan cannot run"
#: The price a plan's cost was computed at (or why there is none).
_PRICE_OUT = Output("price_note", "Price", "text")
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
        planner_inputs.step_tokens(4.194304, help="Llama 2 used 4M (4,194,304) tokens per "
                                   "step (Touvron et al. 2023, §2.2); a whole number of "
                                   "sequences."),
        shared.SEQ_LEN,
        # hardware
        *planner_inputs.gpu_inputs("H100 SXM"),
        replace(shared.dtype_input(), help="Matrix-multiply precision: FP8 speeds up the "
                "layers' products (attention and the output layer stay BF16) and adds its "
                "casts; MFU stays against the BF16 peak."),
        shared.N_GPUS,
        # layout
        Select("layout", "Parallel layout", default="auto",
               choices=(Choice("auto", "fastest that fits (compared)"),
                        Choice("manual", "as set below")),
               help="The planner compares the valid layouts and keeps the fastest that fits; "
                    "or set tp, pp, cp, ZeRO stage and micro-batch yourself (dp is the rest)."),
        shared.degree("tp", 1, if_set=True,
                      help="Must divide the heads and KV heads; beyond the NVLink domain its "
                           "all-reduces cross the network."),
        shared.degree("pp", 1, if_set=True,
                      help="At most the number of layers; adds a bubble of (pp − 1)/(v·m)."),
        shared.degree("cp", 1, if_set=True, help="Splits each sequence; must divide it."),
        shared.degree("ep", 1, if_set=True,
                      help="Mixture-of-experts models only: splits the experts over ep GPUs "
                           "(the data-parallel ones, or tp x cp x dp refolded); must divide "
                           "tp x cp x dp and the experts."),
        shared.degree("zero_stage", 1, if_set=True,
                      help="0 none, 1 optimizer states (Megatron's distributed optimizer), 2 + "
                           "gradients, 3 + parameters."),
        shared.batch("Micro-batch (if set)", unit="sequences"),
        shared.degree("interleave", 1, if_set=True,
                      help="Interleaved schedule: divides the bubble."),
        replace(shared.RECOMPUTE, default="selective",
                choices=(*shared.RECOMPUTE.choices,
                         Choice("deepseek-v3", "DeepSeek-V3's recipe (latent attention)"),
                         Choice("norm-moe-act", "Norms and expert activations (Megatron)"),
                         Choice("mla-up-proj", "Latent up-projections (Megatron)"),
                         Choice("torchtitan-op", "Every second product (torchtitan's op)")),
                help="Selective: the attention core is recomputed (FlashAttention's way); "
                     "full: every layer's forward again, 8N instead of 6N; DeepSeek-V3's "
                     "recipe (its report, §3.2.3 and §3.3.3): norms and latent "
                     "up-projections recomputed, activations kept in FP8, for models with "
                     "latent attention only; Megatron-Core's norms and experts' activation "
                     "function recomputed (GPT-OSS's recipe), or latent attention's "
                     "up-projections only (DeepSeek-V3's and Kimi K2's); torchtitan's op "
                     "checkpointing, "
                     "every second product of a block run again, attention kept."),
        Select("attention_kernel", "Attention kernel", default="fused",
               choices=tuple(Choice(k, _KERNEL_LABELS[k])
                             for k in planning.perf_model.ATTENTION_KERNELS),
               help="The GPU generation's own kernel (FlashAttention-3 or cuDNN's on Hopper), "
                    "FlashAttention-2, or llm-foundry's FlashAttention in Triton. "
                    "An older kernel runs the attention slower by the newer kernels' "
                    "published speed-ups over it, forward and backward (the FlashAttention-2 "
                    "and FlashAttention-3 papers); none is published on Blackwell."),
        shared.GRAD_DTYPE,
        shared.overlap(100, help="Share of the gradient synchronisation hidden behind the "
                               "backward pass of the last micro-batch (a once-a-step "
                               "synchronisation, as DDP's and Megatron's, has its buckets "
                               "ready only then; the planner counts every stage so)."),
    ),
    outputs=(
        *planner_inputs.VERDICT_OUT,
        planner_inputs.LAYOUT_OUT,
        Output("reason", "Why this layout", "text"),
        Output("bottleneck", "Bottleneck", "text"),
        replace(planner_inputs.MFU_OUT,
                help="Model FLOPs over the BF16 dense peak: an output of the step time, whose "
                     "terms are fitted on published runs. Like the published runs' MFU it "
                     "counts attention's FLOPs as well as 6N (the model FLOPs below), and "
                     "it is against the dense BF16 peak whatever the precision planned, so "
                     "time = model FLOPs ÷ (GPUs × BF16 peak × MFU)."),
        Output("mfu_band", "MFU uncertainty (±, relative)", "percent",
               help="The largest error (predicted over published MFU, less 1), on runs left "
                    "out of the fit, among the published runs most like this plan (same "
                    "precision, dense or MoE, nearest in active parameters)."),
        Output("mfu_range", "MFU range", "text",
               help="The predicted MFU divided and multiplied by the largest ratio between "
                    "prediction and publication among those runs: where a run was predicted "
                    "25 % too high it reached the prediction ÷ 1.25 "
                    "(gpulesson.planning.bands.mfu_range)."),
        Output("band_note", "Uncertainty from", "text"),
        Output("dominant", "Largest part of a step", "text"),
        Output("time", "Training time", _SECONDS,
               help="Steady training: the predicted step times the steps. A whole run also "
                    "loses time to failures, restarts, checkpoints and evaluations (Meta "
                    "reports more than 90 % effective training time for Llama 3, Dubey et "
                    "al. 2024) and may add stages, such as long-context training: budget "
                    "above this figure. For a plan that cannot run, the time its leanest "
                    "layout would take if it fitted (it is not priced)."),
        shared.GPU_HOURS_OUT,
        Output("cost", "Cost", "usd", missing=_NO_COST),
        _PRICE_OUT,
        replace(planner_inputs.MEMORY_PER_GPU_OUT,
                help="Model state after ZeRO plus stored activations, on the largest "
                     "pipeline stage."),
        Output("memory_limit", "Memory a GPU can use (95 % of the reported total)", "bytes"),
        planner_inputs.FITS_OUT,
        Output("tokens_per_second", "Throughput (all GPUs)", "tokens/s"),
        planner_inputs.STEP_TIME_OUT,
        Output("micro_batches", "Micro-batches per step", "number"),
        Output("step_compute", "… computing (incl. recompute)", _SECONDS),
        *(Output(name, label, _SECONDS) for name, _, label in _STEP_PARTS),
        Output("efficiency", "Share of the step computing", "percent"),
        shared.N_PARAMS_OUT,
        Output("active_params", "Active parameters per token", "count",
               help="All parameters for a dense model; the routed experts a token uses, "
                    "plus the rest, for a mixture of experts."),
        Output("total_flops", "Training FLOPs (6·N·D, N active)", "flops"),
        Output("model_flops", "Model FLOPs (6·N·D + attention), what the MFU counts", "flops",
               help="The FLOPs per token of gpulesson.flops.model_flops_per_token at the "
                    "sequence length (PaLM's 6N + 12·L·H·Q·T for full attention; windows "
                    "and latent attention as the model has them), times the tokens."),
    ),
    function=_planning,
    sources=("Narayanan et al. 2021 (Megatron-LM at scale)", "Korthikanti et al. 2022",
             "Rajbhandari et al. 2020", "Dubey et al. 2024 (Llama 3), Table 4",
             "nccl-tests issue #212 (achievable NVLink bandwidth)",
             "Bekman, ML Engineering: Maximum Achievable Matmul FLOPS"),
)


def _serving_reason(plan: planning.ServingPlan, tp: int) -> str:
    """Why a plan without the planner's own reason has its tp: the reader's, or, with tp
    left to the planner (0), the one size it tried, or none that serves the traffic."""
    if tp:
        return "tp as set"
    if plan.feasible:
        return f"tp {plan.tp}, the only size the planner tried"
    return (f"No tensor-parallel size the planner tried serves this; shown: tp {plan.tp}, "
            "the one with the fewest problems (the largest of those)")


def _check_moe_layers(cfg: transformer.TransformerConfig, kw: dict[str, Any]) -> None:
    """Refuse expert-parallel MoE layers the planner would refuse, naming the form's inputs
    (plan_serving names its argument ``expert_parallel``): a dense model (MoE layers), or
    more GPUs than routed experts even at the smallest tp (dp)."""
    if kw["moe_layers"] != "ep":
        return
    mv = planning.model_view(cfg)
    if not mv.is_moe:
        raise ValueError(f"moe_layers (MoE layers): {mv.name} is a dense model, it has no "
                         "experts to spread; choose tensor-parallel")
    gpus = max(int(kw["tp"]), 1) * int(kw["dp"])
    if gpus > mv.routed_experts:
        raise ValueError(f"dp (Data-parallel attention engines): tp x dp = {gpus} GPUs "
                         f"exceed the {mv.routed_experts} routed experts of {mv.name}; a "
                         "GPU would hold none")


#: Weights as one precision, or as a published mixed checkpoint
#: (gpulesson.planning.MIXED_CHECKPOINTS: gpt-oss, Llama 3.1 405B FP8).
_SERVING_WEIGHTS = (*shared.STORAGE_CHOICES,
                    Choice("mxfp4_experts", "MXFP4 experts, BF16 rest (gpt-oss checkpoints)"),
                    Choice("fp8_ffn", "FP8 feed-forward but first and last layers, BF16 rest "
                                      "(Llama 3.1 405B FP8's recipe)"))

#: The KV-cache types vLLM's --kv-cache-dtype offers for these models
#: (gpulesson.planning.sparse.VLLM_KV_DTYPES, in the course's spelling).
_VLLM_KV_CHOICES = (
    Choice("auto", "auto: the model's 16-bit type (FP8 for DeepSeek-V3.2, GLM-5.1)"),
    Choice("bf16", "BF16 (2 bytes)"), Choice("fp16", "FP16 (2 bytes)"),
    Choice("fp8", "FP8 (1 byte)"))


#: What the throughput output says for a serving plan that cannot run.
_NOT_SERVED = "none: this plan cannot serve as asked (see Problems)"


def _serving(**kw: Any) -> dict[str, Any]:
    cfg = planner_inputs.config(kw)
    # the peak as entered takes its precision's place; the planner picks the precision of
    # the products from the weights and the GPU (planning.serving.serving_matmul_dtype)
    spec = planner_inputs.spec(kw, planner_inputs.precision(kw))
    if kw["dtype"] == "fp8" and planning.serving_matmul_dtype(kw["weight_dtype"],
                                                              spec) != "fp8":
        raise ValueError(
            f"dtype (Precision): vLLM runs the products in FP8 only for FP8 weights (W8A8), "
            f"got weights {kw['weight_dtype']!r}: set Weights to FP8, or Precision to BF16")
    price = kw["usd_per_gpu_hour"]
    domain, tp = spec.nvlink_domain, kw["tp"]
    if domain > 1 and tp > domain and tp % domain:
        # a replica spanning NVLink domains fills whole ones (the planner's network model)
        raise ValueError(
            f"tp (Tensor-parallel size) must be at most {domain}, the GPUs of one NVLink "
            f"domain of the {spec.name}, or a multiple of {domain}, got {tp}")
    _check_moe_layers(cfg, kw)
    plan = planning.plan_serving(
        cfg, spec, tp=kw["tp"] or None, max_model_len=kw["max_model_len"],
        kv_dtype=kw["kv_dtype"], weight_dtype=kw["weight_dtype"],
        gpu_memory_utilization=kw["utilization"], qps=kw["qps"] or None,
        prompt_tokens=kw["prompt_tokens"], output_tokens=kw["output_tokens"],
        ttft_slo=kw["ttft_slo"] or None, tpot_slo=kw["tpot_slo"] or None,
        usable_memory=kw["gpu_memory"], matmul_efficiency=kw["matmul_efficiency"],
        usd_per_gpu_hour=price if price > 0 else None, dp=kw["dp"],
        expert_parallel=kw["moe_layers"] == "ep")
    per_m = plan.cost_per_million_tokens
    if plan.feasible:
        throughput: float | None = plan.throughput
        cost: float | None = per_m or 0.0
        load = "at the traffic" if kw["qps"] else "at full load"
        price_note = (f"per million output tokens {load}, "
                      + planner_inputs.price_note(per_m, price, kw["gpu"])
                      if per_m is not None else planner_inputs.NO_PRICE_NOTE)
    else:
        # the planner's throughput is the traffic asked for and its price that traffic's,
        # neither of which a plan that cannot run (no room, SLO missed, overloaded) delivers
        throughput = cost = None
        price_note = _NOT_RUN_PRICE
    engines = f" × dp {plan.dp}" if plan.dp > 1 else ""
    return {
        "feasible": plan.feasible, "problems": planner_inputs.problems_text(plan.problems),
        "layout": f"tp {plan.tp}{engines} × {plan.replicas:,} "
                  f"replica{'s' if plan.replicas > 1 else ''}"
                  f" = {plan.gpus:,} GPU{'s' if plan.gpus > 1 else ''}",
        "reason": plan.reason or _serving_reason(plan, tp),
        "kv_cache_tokens": plan.kv_cache_tokens * plan.dp,
        "max_concurrency": plan.max_concurrency * plan.dp,
        "batch": plan.batch, "ttft": plan.ttft, "tpot": plan.tpot,
        "throughput": throughput, "cost": cost, "price_note": price_note,
        "kv_memory": max(plan.budget.kv_cache, 0.0), "weights": plan.budget.weights,
        "activation_peak": plan.budget.activation_peak, "non_torch": plan.budget.non_torch,
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
        *planner_inputs.gpu_inputs("H100 SXM", serving=True),
        replace(shared.dtype_input(), help="The peak above follows it. The products run "
                "in FP8 for FP8 weights on a GPU with FP8 tensor cores (vLLM's W8A8), in "
                "BF16 otherwise; attention stays BF16."),
        Integer("tp", "Tensor-parallel size (0 = choose)", default=0, range=(0, 64),
                help="GPUs per replica; 0 lets the planner compare the sizes that divide the "
                     "heads within one NVLink domain, or one server of PCIe cards (1, 2, 4 "
                     "and 8 on an 8-GPU server)."),
        Integer("dp", "Data-parallel attention engines (MoE)", default=1, range=(1, 64),
                help="Mixture-of-experts models: dp engines of tp GPUs each run attention "
                     "for their own requests, each with its own KV cache, and share the MoE "
                     "layers over tp × dp GPUs (vLLM --data-parallel-size, SGLang --dp with "
                     "--enable-dp-attention). A latent (MLA) cache is copied only over an "
                     "engine's tp GPUs, not all tp × dp; the non-expert weights are copied "
                     "once per engine."),
        Select("moe_layers", "MoE layers", default="tp",
               choices=(Choice("tp", "tensor-parallel: every expert cut over tp × dp"),
                        Choice("ep", "expert-parallel: whole experts on each GPU")),
               help="vLLM --enable-expert-parallel puts whole experts on the tp × dp GPUs "
                    "and dispatches each token to them (vLLM's default all-gather backend); "
                    "with tp and dp both above 1 the MoE layers run sequence-parallel and "
                    "every GPU holds the shared experts whole. Dense models take tp only."),
        Select("weight_dtype", "Weights", default="bf16", choices=_SERVING_WEIGHTS,
               help="Bytes per stored value (gpulesson.memory.PRECISION_BYTES); the two "
                    "mixed checkpoints keep their other parts in BF16 "
                    "(gpulesson.planning.MIXED_CHECKPOINTS). On Hopper GPUs vLLM's Triton "
                    "MXFP4 kernels keep copies of the experts' scales (3.4 GiB for "
                    "gpt-oss-120b, vLLM issue 33155), which the plan counts; the older "
                    "Marlin kernels pad more (5.1 GiB, issue 23278)."),
        Select("kv_dtype", "KV cache", default="bf16", choices=_VLLM_KV_CHOICES,
               help="vLLM's --kv-cache-dtype; auto, its default, is the model's 16-bit "
                    "type, or FP8 (fp8_ds_mla) for the sparse-attention models."),
        shared.tokens("max_model_len", "max_model_len", 8192,
                      help="The longest request vLLM must admit; its KV cache must fit."),
        shared.percent("utilization", "gpu_memory_utilization", default=90, range=(10, 100),
                       step=1, help="vLLM's share of the memory (default 0.9)."),
        Number("qps", "Traffic (0 = one replica at full load)", default=20, range=(0, 1e6),
               step=1, smallest=0.001, unit="requests/s",
               help="Arrivals per second, all replicas. At 0 the plan is one replica as full "
                    "as its KV cache allows, and the latency limits below are checked "
                    "against it."),
        shared.tokens("prompt_tokens", "Prompt", 2000),
        shared.tokens("output_tokens", "Output", 300),
        Number("ttft_slo", "Time to first token, at most (0 = any)", default=200,
               range=(0, 1e6), step=10, smallest=0.001, unit="ms", scale=1e-3,
               dimension="seconds"),
        Number("tpot_slo", "Time per output token, at most (0 = any)", default=50,
               range=(0, 1e6), step=5, smallest=0.001, unit="ms", scale=1e-3,
               dimension="seconds"),
    ),
    outputs=(
        *planner_inputs.VERDICT_OUT,
        Output("layout", "GPUs", "text"),
        Output("reason", "Why", "text"),
        Output("kv_cache_tokens", "KV cache per replica (vLLM's 'GPU KV cache size')",
               "count", help="Tokens of KV cache the budget leaves, in blocks of 16 tokens (64 "
               "for DeepSeek-V3.2 and GLM-5.1, whose sparse kernels take no other); with "
               "data-parallel engines, the sum of their pools (vLLM prints each engine's)."),
        Output("max_concurrency", "Maximum concurrency at max_model_len", "ratio",
               help="Summed over the data-parallel engines."),
        Output("batch", "Sequences in flight per replica", "number",
               help="The average over time (Little's law: traffic × time in the system); "
                    "without a traffic, the most the cache, max_num_seqs and the latency "
                    "limits allow. A decoding request's step holds the request itself and, "
                    "on average, this many others."),
        Output("ttft", "Time to first token", _SECONDS),
        Output("tpot", "Time per output token", _SECONDS),
        Output("throughput", "Output tokens/s, all replicas", "tokens/s",
               missing=_NOT_SERVED,
               help="The traffic's output tokens, served; none for a plan that cannot "
                    "run (its weights do not fit, an SLO is missed or the replicas are "
                    "overloaded)."),
        Output("cost", "Cost per million output tokens", "usd", missing=_NO_COST),
        _PRICE_OUT,
        Output("kv_memory", "KV cache memory per GPU", "bytes", binary=True),
        Output("weights", "Weights per GPU", "bytes", binary=True),
        Output("activation_peak", "Profiled activation peak per GPU", "bytes", binary=True),
        Output("non_torch", "Memory outside PyTorch per GPU", "bytes", binary=True,
               help="What vLLM holds outside PyTorch's allocator: the NCCL buffers of the "
                    "tensor-parallel group (and vLLM's custom all-reduce on NVLink), plus "
                    "what grows at start-up, a share per SM fitted on real vLLM logs, or "
                    f"{planning.non_torch.NON_TORCH_BYTES / 2**30:.2f} GiB from one log "
                    "where the GPU's SMs are not on record (other vendors: that figure "
                    "alone; gpulesson.planning.non_torch)."),
    ),
    function=_serving,
    sources=("vLLM issue #10517 (start-up memory arithmetic)", "vLLM PR #13596 (maximum "
             "concurrency)", "Bekman, ML Engineering: Maximum Achievable Matmul FLOPS"),
)

ENTRIES = (PLANNING, SERVING)
