"""The inputs the planning calculators share: a model preset planned with its whole
config, and a GPU preset filling what :func:`gpulesson.planning.gpu_view` reads of it.

Used by the lesson entries that hand their inputs to :mod:`gpulesson.planning`: lesson 10's
``planning`` and ``serving_plan``, lesson 7's ``parallel_traffic``. :func:`config` keeps a
preset's experts, latent attention and the rest of its ``config.json`` (the form shows only
the shape); :func:`gpu_inputs` fills the reported memory, the dense peak, the achievable
matmul efficiency, the NVLink domain, the network and a dated price; :func:`spec` is the
GPU the inputs describe.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from gpulesson import hardware, planning, prices, transformer
from gpulesson.calculators import shared
from gpulesson.calculators.spec import CUSTOM, Choice, Input, Keyed, Number, Output, Preset

__all__ = ["FITS_OUT", "LAYOUT_OUT", "MEMORY_PER_GPU_OUT", "MFU_OUT", "NO_PRICE_NOTE",
           "STEP_TIME_OUT", "VERDICT_OUT", "config", "gpu_inputs", "layout", "plan_training",
           "precision", "price_note", "problems_text", "spec", "step_tokens"]

_NO_PRICE = 0.0

#: Whether the planner found a plan, and the problems of one that does not work.
VERDICT_OUT = (Output("feasible", "Feasible", "bool"), Output("problems", "Problems", "text"))


def problems_text(problems: Sequence[str]) -> str:
    """A plan's problems as the ``problems`` output writes them: ``"none"``, the one
    problem, or several numbered (``"(1) ...; (2) ..."``), since a problem may hold a
    semicolon of its own and none ends with a full stop."""
    if len(problems) <= 1:
        return problems[0] if problems else "none"
    return "; ".join(f"({i}) {p}" for i, p in enumerate(problems, 1))


#: What both training planners show of a plan: its layout, MFU, step and memory.
LAYOUT_OUT = Output("degrees", "Layout", "text")
MFU_OUT = Output("mfu", "MFU (predicted)", "percent")
STEP_TIME_OUT = Output("step_time", "Step time", "seconds")
MEMORY_PER_GPU_OUT = Output("memory_per_gpu", "Memory per GPU", "bytes")
FITS_OUT = Output("fits", "Fits", "bool")


#: The fields of a model's shape the form shows (gpulesson.calculators.shared.config).
_SHAPE = ("hidden", "layers", "heads", "kv_heads", "head_dim", "ffn", "vocab", "max_positions",
          "tied_embeddings", "gated_mlp", "norm", "linear_bias", "qkv_bias")


def config(kw: dict[str, Any]) -> transformer.TransformerConfig:
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
                            missing=shared.MISSING_PEAK),
        "usd_per_gpu_hour": view.price if view.price is not None else _NO_PRICE,
        "matmul_efficiency": view.matmul_efficiency}
    if not serving:
        fill.update(gpus_per_node=max(view.domain, 1), scaleout=view.scaleout_bandwidth)
    return fill


def gpu_inputs(default: str, *, serving: bool = False) -> tuple[Any, ...]:
    """A GPU preset filling what the planners read of it (gpulesson.planning.gpu_view)."""
    fills = {k: _gpu_fill(k, serving=serving) for k in hardware.GPUS}
    choices = tuple(Choice(k, k) for k in hardware.GPUS) + (
        Choice(CUSTOM, "Custom (edit the figures)"),)
    out = [
        # a price typed over the dated quote keeps the GPU: turned custom, it would lose the
        # links and the fitted factors the plan reads of it (gpulesson.planning.gpu_view)
        Preset("gpu", "GPU", default=default, choices=choices, fills=fills,
               help=shared.GPU_NOTE + " The planners read the reported memory, links and "
                    "a dated price through gpulesson.planning.gpu_view.",
               suggests=("usd_per_gpu_hour",)),
        Number("gpu_memory", "Memory per GPU (reported)", range=(0.001, 10_000), step=1,
               unit="GB", scale=1e9, dimension="bytes",
               help="The total the driver reports, decimal GB (nvidia-smi: H100 SXM 81,559 "
                    "MiB = 85.5 GB); a training plan may use 95 % of it (the rest is the "
                    "runtime's context and work spaces), a serving plan the utilization "
                    "share."),
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
                      smallest=0.001, unit="$/h", dimension="usd",
                      help="The GPU's dated default quote (gpulesson.prices.default_price: the "
                           "cheapest hyperscaler on demand, or a specialist cloud's where no "
                           "hyperscaler rents the GPU; the Price output names it) where it has "
                           "one (0 = none known: enter a quote). Compare GPUs at one "
                           "provider's prices. " + shared.PRICE_NOTE))
    return tuple(out)


def spec(kw: dict[str, Any], precision: str) -> hardware.GPUSpec:
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


def precision(kw: dict[str, Any]) -> str:
    """The matrix-multiply precision the planner takes: the chosen dtype, BF16 for others."""
    return kw["dtype"] if kw["dtype"] in ("bf16", "fp16", "fp8") else "bf16"


def layout(kw: dict[str, Any]) -> planning.Layout:
    """The layout the inputs set (dp is left to the planner: the GPUs that remain)."""
    return planning.Layout(tp=kw["tp"], pp=kw["pp"], cp=kw["cp"], ep=kw["ep"],
                           zero_stage=kw["zero_stage"], micro_batch=kw["batch"],
                           interleave=kw["interleave"])


def step_tokens(default: float, help: str) -> Input:
    """The global batch, in millions of tokens as typed (``step_tokens``, which
    :func:`plan_training` reads)."""
    return Number("step_tokens", "Tokens per step (global batch)", default=default,
                  range=(0.001, 1000), step=0.5, unit="million", scale=1e6, dimension="count",
                  help=help)


def plan_training(kw: dict[str, Any], *, n_gpus: int, tokens: float,
                  plan_layout: planning.Layout | str,
                  usd_per_gpu_hour: float | None = None) -> planning.TrainingPlan:
    """:func:`gpulesson.planning.plan_training` on the model, GPU, batch, recomputation,
    links and gradient settings the form's inputs describe."""
    chosen = precision(kw)
    return planning.plan_training(
        config(kw), spec(kw, chosen), n_gpus=n_gpus, tokens=tokens,
        global_batch_tokens=int(round(kw["step_tokens"])), seq_len=kw["seq_len"],
        precision=chosen, layout=plan_layout, recompute=kw["recompute"],
        scaleout_bandwidth=kw["scaleout"], nvlink_domain=kw["gpus_per_node"],
        usable_memory=kw["gpu_memory"], matmul_efficiency=kw["matmul_efficiency"],
        usd_per_gpu_hour=usd_per_gpu_hour, grad_bytes=4 if kw["grad_dtype"] == "fp32" else 2,
        overlap={"data": kw["overlap"]}, attention_kernel=kw.get("attention_kernel", "fused"))


#: What a plan's cost says when the GPU has no dated price.
NO_PRICE_NOTE = "no dated price for this GPU: enter a quote (cost shown as 0)"


def price_note(plan_cost: float | None, price: float, gpu: str = CUSTOM) -> str:
    """The price a cost was computed at, in cents (never ``$3.43088``), and, when it is the
    GPU's dated default quote (:func:`gpulesson.prices.default_price`), whose quote and
    when: a specialist cloud's price beside another GPU's hyperscaler price would
    otherwise read as the cheaper GPU."""
    if plan_cost is None or price <= 0:
        return NO_PRICE_NOTE
    note = f"at ${price:,.2f} per GPU-hour"
    try:
        quote = None if gpu == CUSTOM else prices.default_price(gpu)
    except KeyError:
        quote = None
    # the form fills the quote's exact price; anything else was typed
    if quote is None or abs(quote.usd_per_gpu_hour - price) > 1e-9 * price:
        return note + " (as entered)"
    return (f"{note}: {quote.provider} {quote.instance}, {quote.kind} cloud, "
            f"{quote.offer}, {quote.date}")
