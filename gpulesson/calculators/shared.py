"""Inputs and outputs that several lessons' calculators declare alike.

Groups: a model preset and the shape it fills (:func:`model_inputs`, read back into a
:class:`~gpulesson.transformer.TransformerConfig` by :func:`config`), a model preset that
fills only the parameter count (:func:`params_inputs`), a GPU preset and the datasheet
figures it fills (:func:`gpu_inputs`, with the GPU's dated price from
:func:`gpulesson.prices.default_price` where asked), precisions (:func:`dtype_input`,
:func:`storage_input`), and the training and cluster inputs that the distributed-training
and planning calculators share. Every figure a preset fills comes from
:data:`gpulesson.transformer.PRESETS`, :data:`gpulesson.hardware.GPUS` or
:data:`gpulesson.prices.QUOTES`. :func:`input_warnings` names the spec-sheet mistakes a
form shows beside its outputs (a 2:4-sparse peak typed as dense).

Standard library only: this module runs in the browser (Pyodide).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from gpulesson import activations, execution, flops, hardware, prices, transformer
from gpulesson.calculators.spec import (
    CUSTOM,
    Choice,
    Input,
    Integer,
    Keyed,
    Number,
    Output,
    Preset,
    Select,
)

# ---------------------------------------------------------------------------------------
# Models

_CUSTOM_MODEL = Choice(CUSTOM, "Custom (edit the shape)")

#: The choices of a model preset: every gpulesson.transformer.PRESETS name, then custom.
MODEL_CHOICES = tuple(Choice(k, transformer.MODEL_LABELS.get(k, k))
                      for k in transformer.PRESETS) + (_CUSTOM_MODEL,)


def _model_fill(cfg: transformer.TransformerConfig) -> dict[str, Any]:
    """The form fields of a model's shape (the inverse of :func:`config` for the fields a
    form shows)."""
    biases = "all" if cfg.linear_bias else ("qkv" if cfg.qkv_bias else "none")
    return {
        "hidden": cfg.hidden, "layers": cfg.layers, "heads": cfg.heads,
        "kv_heads": cfg.kv_heads, "head_dim": cfg.head_dim, "ffn": cfg.ffn,
        "vocab": cfg.vocab, "max_positions": cfg.max_positions,
        "embeddings": "tied" if cfg.tied_embeddings else "untied",
        "mlp": "gated" if cfg.gated_mlp else "plain", "norm": cfg.norm, "biases": biases,
        "experts": cfg.experts, "experts_per_token": cfg.experts_per_token,
        "expert_ffn": cfg.expert_ffn or 0, "sliding_window": cfg.sliding_window,
        "sliding_window_pattern": cfg.sliding_window_pattern,
    }


def _training_fill(cfg: transformer.TransformerConfig) -> dict[str, Any]:
    """How a model trains: its attention implementation and whether it uses dropout."""
    return {"attention": activations.default_attention(cfg),
            "dropout": "yes" if cfg.dropout else "no"}


#: What a form shows of a preset's configuration, beyond its shape.
_NOT_SHOWN = ("latent attention, sparse attention's indexer and top-k, chunked attention, "
              "shared experts, leading dense layers, "
              "experts on alternate layers only, extra norms, q/k norms, sinks and the "
              "output-projection and MLP biases")


def model_inputs(default: str = "llama-2-7b", *, advanced: bool = True,
                 training: bool = False) -> tuple[Input, ...]:
    """The model preset and the fields it fills (``advanced``: folded away).

    The preset carries the model's whole configuration (:func:`config`); the fields show
    its shape, its experts and its sliding window. ``training`` adds how it trains: the
    attention implementation (``attention``: FlashAttention for modern models, eager for
    GPT-2/3 as Korthikanti et al. publish them) and ``dropout``.
    """
    fills = {k: _model_fill(cfg) | (_training_fill(cfg) if training else {})
             for k, cfg in transformer.PRESETS.items()}

    def shape(name: str, label: str, high: int, help: str, low: int = 1,
              fold: bool = advanced) -> Input:
        # an architecture field (low 0) means "none" at 0, the custom model's default
        return Integer(name, label, range=(low, high), help=help, advanced=fold,
                       default=0 if fold and not low else None)

    inputs = (
        Preset("model", "Model", default=default, choices=MODEL_CHOICES, fills=fills,
               help="A published model, with its whole configuration from its config "
                    "file (gpulesson.transformer.PRESETS): the fields below and what "
                    f"they do not show ({_NOT_SHOWN}). Edit a field and the model "
                    "becomes custom: the fields below describe it alone."),
        shape("hidden", "Hidden size d", 65536, "Model width (hidden_size, n_embd)."),
        shape("layers", "Layers L", 1000, "Number of transformer blocks."),
        shape("heads", "Attention heads", 1024, "Query heads."),
        shape("kv_heads", "KV heads", 1024,
              "Key/value heads: equal to heads for multi-head attention, fewer with "
              "grouped-query attention (must divide heads)."),
        shape("head_dim", "Head size", 1024, "Size of one head, usually hidden ÷ heads."),
        shape("ffn", "MLP inner size", 262144,
              "intermediate_size; 4·d in GPT-2. In a mixture-of-experts model, the width "
              "of its dense layers."),
        shape("vocab", "Vocabulary", 1_000_000, "Rows of the token-embedding matrix."),
        shape("max_positions", "Learned positions", 1_000_000,
              "Rows of a learned position embedding (GPT-2: 1024); 0 for rotary.", low=0),
        Select("embeddings", "Output layer",
               choices=(Choice("tied", "tied to the embedding"),
                        Choice("untied", "separate matrix")),
               help="Whether the output layer reuses the token-embedding matrix.",
               advanced=True),
        Select("mlp", "MLP",
               choices=(Choice("plain", "2 matrices (GELU)"),
                        Choice("gated", "3 matrices (SwiGLU)")),
               help="GPT-2 uses two matrices; Llama's SwiGLU uses three.", advanced=True),
        Select("norm", "Norm",
               choices=(Choice("layernorm", "LayerNorm (weight + bias)"),
                        Choice("rmsnorm", "RMSNorm (weight)")),
               help="Each norm has d or 2·d parameters.", advanced=True),
        Select("biases", "Biases",
               choices=(Choice("all", "on every linear layer"),
                        Choice("qkv", "on q, k, v only"), Choice("none", "none")),
               help="GPT-2 has biases everywhere, Llama none, Qwen2 on q, k, v.",
               advanced=True),
        shape("experts", "Routed experts", 4096,
              "Experts per mixture-of-experts layer (num_local_experts, n_routed_experts); "
              "0 for a dense model. Memory holds them all.", low=0, fold=True),
        shape("experts_per_token", "Experts per token", 4096,
              "Routed experts each token uses (top-k; Mixtral 2, DeepSeek-V3 8): what the "
              "FLOPs count. 0 for a dense model.", low=0, fold=True),
        shape("expert_ffn", "Expert inner size", 262144,
              "Inner width of one routed expert (moe_intermediate_size); 0: the MLP inner "
              "size.", low=0, fold=True),
        shape("sliding_window", "Sliding window", 1_048_576,
              "Tokens a local (sliding-window) layer attends to and caches; 0 for none.",
              low=0, fold=True),
        shape("sliding_window_pattern", "Global layer every", 1000,
              "With a window: 0 makes every layer local (Mistral 7B v0.1), p makes every "
              "p-th layer global (Gemma 2, gpt-oss: 2; Gemma 3: 6).", low=0, fold=True),
    )
    if not training:
        return inputs
    return (*inputs, ATTENTION, yes_no(
        "dropout", "Dropout in training", "no",
        "GPT-2 and GPT-3 train with dropout (masks kept for backward); modern models "
        "without."))


#: How attention runs in training (the model preset fills it).
ATTENTION = Select(
    "attention", "Attention implementation", default="flash",
    choices=(Choice("flash", "FlashAttention / SDPA (no score matrix kept)"),
             Choice("eager", "eager (score matrices kept)")),
    help="FlashAttention is PyTorch's and Hugging Face's default for modern models; "
         "GPT-2 and GPT-3 are counted eager, as Korthikanti et al. 2022 publish them.")

#: The config fields read from the form as they are (the rest are translated).
_DIRECT = ("hidden", "layers", "heads", "vocab", "ffn", "kv_heads", "head_dim",
           "max_positions", "norm", "experts", "experts_per_token", "sliding_window",
           "sliding_window_pattern")


def _fields(kw: Mapping[str, Any]) -> dict[str, Any]:
    """The TransformerConfig fields a form's model inputs give."""
    fields = {name: kw[name] for name in _DIRECT if name in kw}
    fields.update(
        tied_embeddings=kw["embeddings"] == "tied", gated_mlp=kw["mlp"] == "gated",
        linear_bias=kw["biases"] == "all", qkv_bias=kw["biases"] == "qkv")
    if "expert_ffn" in kw:
        fields["expert_ffn"] = kw["expert_ffn"] or None
    if "dropout" in kw:
        fields["dropout"] = kw["dropout"] == "yes"
    return fields


def config(kw: Mapping[str, Any]) -> transformer.TransformerConfig:
    """The TransformerConfig the model inputs describe (it validates itself).

    With a preset chosen, the preset's whole configuration, with any field given
    otherwise than the preset fills it replaced (``dataclasses.replace``): DeepSeek-V3
    keeps its latent attention and shared expert, Gemma 2 its four norms per layer
    (DeepSeek-V3 loses its routing groups with another expert count, or more experts
    per token than its 4 picked groups hold). With
    ``custom``, the fields alone (a dense model unless ``experts`` says otherwise).
    """
    fields = _fields(kw)
    base = transformer.PRESETS.get(kw.get("model", CUSTOM))
    if base is None:
        return transformer.TransformerConfig(**fields)
    changed = {name: value for name, value in fields.items()
               if getattr(base, name) != value
               and not (name == "expert_ffn" and value is None and not base.moe)}
    if base.routing_groups and ("experts" in changed or changed.get(
            "experts_per_token", 0) > base.routing_group_topk * base.experts
            // base.routing_groups):
        # the groups were the trained model's: another expert count, or more experts per
        # token than its picked groups hold, has none of them
        changed.update(routing_groups=0, routing_group_topk=0)
    return replace(base, **changed) if changed else base


def preset_config(kw: Mapping[str, Any]) -> transformer.TransformerConfig | None:
    """The whole configuration of the model preset a :func:`params_inputs` form names,
    while its parameter count is still the preset's; ``None`` for custom or an edited
    count (the form then knows the count only)."""
    cfg = transformer.PRESETS.get(kw.get("model", CUSTOM))
    n = kw.get("n_params")
    count = transformer.param_count(cfg) if cfg is not None else 0
    if cfg is None or n is None or abs(n - count) > 1e-9 * count:  # shown to 12 digits
        return None
    return cfg


def params_inputs(default: str = "llama-2-7b", n_params: float | None = None
                  ) -> tuple[Input, Input]:
    """A model preset that fills only the parameter count, and that count (billions).

    ``n_params`` is the count's own default, for a preset that is custom by default.
    """
    return (
        Preset("model", "Model", default=default, choices=MODEL_CHOICES,
               fills={k: {"n_params": transformer.param_count(cfg)}
                      for k, cfg in transformer.PRESETS.items()},
               help="Fills the parameter count (gpulesson.transformer.param_count)."),
        Number("n_params", "Parameters", default=n_params, range=(0.001, 10_000), step=0.1,
               unit="billion", scale=1e9, dimension="count"),
    )


# ---------------------------------------------------------------------------------------
# GPUs

#: Where a GPU preset's figures come from (the first sentence of GPU_NOTE).
GPU_FIGURES_NOTE = ("Figures from gpulesson.hardware (datasheets, dense tensor-core peaks; "
                    "sparse figures are never used).")
GPU_NOTE = (f"{GPU_FIGURES_NOTE} The {hardware.TEACHING_BASELINE} is the "
            "course's teaching baseline; the newest GPUs in the table are "
            f"{', '.join(hardware.CURRENT_GENERATION)} "
            f"(as of {hardware.CURRENT_GENERATION_AS_OF}); the generation after them, NVIDIA's "
            "Rubin and AMD's MI400, is not in the table as of that date.")
_CUSTOM_GPU = Choice(CUSTOM, "Custom (edit the figures)")


#: The choices of a GPU preset: every gpulesson.hardware.GPUS name (the teaching baseline
#: and the newest GPUs in the table among them, as the help says), then custom.
GPU_CHOICES = tuple(Choice(k, k) for k in hardware.GPUS) + (_CUSTOM_GPU,)
#: What a GPU preset says when the chosen GPU has no dense peak at the chosen precision.
MISSING_PEAK = "{choice} has no dense {key} figure on its datasheet"

#: The GPUs the price table quotes (gpulesson.prices).
_PRICED = frozenset(q.gpu for q in prices.QUOTES)

#: The figures a GPU preset fills (their defaults come from the preset).
GPU_MEMORY = Number("gpu_memory", "GPU memory", range=(1, 10000), step=1, unit="GB",
                    scale=1e9, dimension="bytes",
                    help="Device memory, decimal GB (10⁹ bytes).")
PEAK = Number("peak_flops", "Peak compute (dense)", range=(0.1, 100_000), step=0.1,
              unit="TFLOP/s", scale=1e12, dimension="flop/s",
              help="Dense peak for the chosen precision (not the 2:4-sparse headline).")
BANDWIDTH = Number("bandwidth", "Memory bandwidth", range=(0.01, 100), step=0.01,
                   unit="TB/s", scale=1e12, dimension="bytes/s",
                   help="Peak HBM/GDDR bandwidth, decimal TB/s.")
SMS = Integer("sms", "Streaming multiprocessors (SMs)", range=(1, 1000),
              help="SMs the GPU runs blocks on.")
#: Where the SM counts and per-SM limits come from.
EXECUTION_NOTE = ("SM counts from the architecture whitepapers, per-SM limits from the CUDA "
                  "C++ Programming Guide (gpulesson.execution).")
#: Which GPUs the execution calculators' menus hold, and why the table's others are not in
#: them (review r22 F10: the help named B300, GB300 NVL72 and MI355X, which they lack).
EXECUTION_COVERAGE = (
    f"The menu holds the GPUs whose SM count and per-SM limits have a source here: "
    f"{', '.join(execution.GPU_EXECUTION)}. The course's GPU table also holds "
    f"{', '.join(execution.NOT_COVERED)}, left out for want of a sourced SM count or "
    "limits (gpulesson.execution.NOT_COVERED), and AMD's "
    + ", ".join(k for k, g in hardware.GPUS.items()
                if k not in execution.GPU_EXECUTION and k not in execution.NOT_COVERED)
    + ", whose compute units follow other rules.")


def gpu_inputs(default: str, *, memory: bool = False, peak: bool | Input = False,
               bandwidth: bool = False, price: bool = False,
               sms: bool = False) -> tuple[Input, ...]:
    """A GPU preset (``gpu``) and the figures it fills from gpulesson.hardware.GPUS.

    The figures follow the preset in this order: ``sms`` (the SM count; the menu then
    offers only the GPUs :data:`gpulesson.execution.GPU_EXECUTION` counts SMs for),
    ``gpu_memory`` (GB), ``peak_flops`` (dense TFLOP/s, keyed by the ``dtype`` input) and
    ``bandwidth`` (TB/s). ``peak`` may be the peak input to use instead of :data:`PEAK`
    (another range or help). ``price`` also fills the calculator's ``usd_per_gpu_hour``
    (declare it with :func:`gpu_hour_price`) with the GPU's dated default quote
    (:func:`gpulesson.prices.default_price`), for the GPUs the price table covers; a GPU
    without a quote leaves the price as typed, and a price typed over a quote keeps the GPU
    (a quote is not a property of the GPU).
    """
    fills: dict[str, dict[str, Any]] = {}
    for key, spec in hardware.GPUS.items():
        fill: dict[str, Any] = {}
        if sms:
            if key not in execution.GPU_EXECUTION:
                continue
            fill["sms"] = execution.GPU_EXECUTION[key].sms
        if memory:
            fill["gpu_memory"] = spec.memory_bytes
        if bandwidth:
            fill["bandwidth"] = spec.bandwidth
        if peak:
            fill["peak_flops"] = Keyed(by="dtype", values=dict(spec.peak_flops),
                                       missing=MISSING_PEAK)
        if price and key in _PRICED:
            fill["usd_per_gpu_hour"] = prices.default_price(key).usd_per_gpu_hour
        fills[key] = fill
    choices = tuple(c for c in GPU_CHOICES if c.value in fills or c.value == CUSTOM)
    figures = (SMS if sms else None, GPU_MEMORY if memory else None,
               (peak if isinstance(peak, Input) else PEAK) if peak else None,
               BANDWIDTH if bandwidth else None)
    return (Preset("gpu", "GPU", default=default, choices=choices, fills=fills,
                   help=(f"{EXECUTION_NOTE} {EXECUTION_COVERAGE} {GPU_FIGURES_NOTE}" if sms
                         else GPU_NOTE),
                   suggests=("usd_per_gpu_hour",) if price else ()),
            *(figure for figure in figures if figure is not None))


# ---------------------------------------------------------------------------------------
# Precisions and other small inputs

_COMPUTE_DTYPES = (Choice("bf16", "BF16"), Choice("fp16", "FP16"), Choice("fp8", "FP8"),
                   Choice("tf32", "TF32 (FP32 storage)"), Choice("fp32", "FP32"))
STORAGE_CHOICES = (Choice("fp32", "FP32 (4 bytes)"), Choice("bf16", "BF16 (2 bytes)"),
                   Choice("fp16", "FP16 (2 bytes)"), Choice("fp8", "FP8 (1 byte)"),
                   Choice("int8", "INT8 (1 byte)"), Choice("int4", "INT4 (0.5 byte)"),
                   Choice("nvfp4", "NVFP4 (4.5 bits with its scales)"),
                   Choice("mxfp4", "MXFP4 (4.25 bits with its scales)"))


def dtype_input(name: str = "dtype", label: str = "Precision",
                default: str = "bf16") -> Input:
    """The precision of the tensor-core math (it keys a GPU preset's peak)."""
    return Select(name, label, default=default, choices=_COMPUTE_DTYPES,
                  help="Data type of the tensor-core math; sets the peak and the bytes "
                       "per element.")


def storage_input(name: str, label: str, default: str = "bf16", help: str = "") -> Input:
    """The precision values are stored in (weights, a KV cache)."""
    return Select(name, label, default=default, choices=STORAGE_CHOICES,
                  help=help or "Bytes per stored value (gpulesson.memory.PRECISION_BYTES).")


def yes_no(name: str, label: str, default: str, help: str) -> Input:
    """A switch: ``"no"`` or ``"yes"``."""
    return Select(name, label, default=default,
                  choices=(Choice("no", "no"), Choice("yes", "yes")), help=help)


def matrix_dimension(name: str, label: str, default: int = 4096) -> Input:
    """One dimension (M, N or K) of a matrix product."""
    return Integer(name, label, default=default, range=(1, 262_144))


def tokens(name: str, label: str, default: int, help: str = "") -> Input:
    """Tokens of one sequence (a context, a prompt): 1 to 1,048,576."""
    return Integer(name, label, default=default, range=(1, 1_048_576), unit="tokens",
                   help=help)


def batch(label: str, default: int = 1, *, unit: str = "", help: str = "") -> Input:
    """``batch``: sequences processed together, 1 to 4096."""
    return Integer("batch", label, default=default, range=(1, 4096), unit=unit, help=help)


def percent(name: str, label: str, *, default: float, range: tuple[float, float],
            step: float, help: str = "") -> Input:
    """A share entered in percent on a slider, passed on as a fraction."""
    return Number(name, label, default=default, range=range, step=step, unit="%",
                  scale=0.01, dimension="percent", slider=True, help=help)


def overhead(advice: str = "") -> Input:
    """``overhead``: the working memory a served model needs beside its weights and caches,
    a fixed assumption in GB; ``advice`` ends the help (``"; measure yours"``)."""
    return Number("overhead", "Overhead", default=2, range=(0, 1000), step=0.5, unit="GB",
                  scale=1e9, dimension="bytes",
                  help="CUDA context, framework and activation buffers: an assumption, "
                       f"about 1-2 GB in practice{advice}.")


#: The precisions of a model served: its weights, its KV cache and its tensor-core math.
#: The storage choices for a model's weights: each applies to every parameter, which the
#: MXFP4 label says (gpt-oss keeps all but its experts in BF16: review r22 F7).
WEIGHT_STORAGE_CHOICES = tuple(
    Choice("mxfp4", "MXFP4 on all weights (4.25 bits with its scales)") if c.value == "mxfp4"
    else c for c in STORAGE_CHOICES)
WEIGHTS_PRECISION = Select("precision", "Weights precision", default="bf16",
                           choices=WEIGHT_STORAGE_CHOICES,
                           help="Bytes per stored value (gpulesson.memory.PRECISION_BYTES), "
                                "the same for every parameter.")
KV_PRECISION = storage_input("kv_dtype", "KV-cache precision")
COMPUTE_PRECISION = dtype_input("dtype", "Compute precision")
#: Sequences served together, and the prompt of a request.
CONCURRENT_SEQUENCES = batch("Concurrent sequences")
DECODE_BATCH = batch("Batch (sequences)")
PROMPT = tokens("prompt", "Prompt tokens", 8192)
#: The sequences and tokens of a training step.
MICRO_BATCH = batch("Micro-batch", unit="sequences")
SEQ_LEN = tokens("seq_len", "Sequence length", 4096)


# ---------------------------------------------------------------------------------------
# Training (memory, FLOPs and the planning dashboard)

TRAINING_PRECISION = Select(
    "precision", "Training precision", default="mixed",
    choices=(Choice("mixed", "mixed BF16/FP16 + FP32 master (16 B/param with Adam)"),
             Choice("mixed_fp32_grads", "mixed, FP32 gradients (18 B/param)"),
             Choice("fp32", "FP32 (16 B/param with Adam)"),
             Choice("pure_bf16", "pure BF16, no master copy")))
OPTIMIZER = Select(
    "optimizer", "Optimizer", default="adam",
    choices=(Choice("adam", "Adam / AdamW (2 states)"),
             Choice("sgd_momentum", "SGD with momentum (1 state)"),
             Choice("sgd", "plain SGD (no state)")))
RECOMPUTE = Select(
    "recompute", "Activation recomputation", default="none",
    choices=(Choice("none", "none (store everything)"),
             Choice("selective", "selective (attention scores)"),
             Choice("full", "full (store layer inputs only)")))
TRAINING_TOKENS = Number("tokens", "Training tokens", default=2000,
                         range=(0.001, 1_000_000), step=1, unit="billion", scale=1e9,
                         dimension="count")


def training_run(n_params: int, tokens: float, gpus: int,
                 kw: Mapping[str, Any]) -> tuple[float, float]:
    """``(FLOPs, seconds)``: 6·N·D over ``tokens``, and ``gpus`` at the entry's peak and MFU."""
    total = flops.training_flops(n_params, tokens)
    return total, flops.training_time(total, gpus, kw["peak_flops"], kw["mfu"])


# ---------------------------------------------------------------------------------------
# The cluster of a data-parallel run (distributed training and the planning dashboard)

GRAD_DTYPE = Select("grad_dtype", "Gradient precision", default="bf16",
                    choices=(Choice("bf16", "BF16 (2 bytes)"), Choice("fp16", "FP16 (2 bytes)"),
                             Choice("fp32", "FP32 (4 bytes)")))
N_GPUS = Integer("n_gpus", "GPUs", default=64, range=(1, 100_000))
GPUS_PER_NODE = Integer(
    "gpus_per_node", "GPUs per node", default=8, range=(1, 72),
    help="GPUs sharing NVLink: the largest tensor-parallel size considered.")
NETWORK = Number("bandwidth", "Network bandwidth per GPU", default=50, range=(0.1, 10_000),
                 step=1, unit="GB/s", scale=1e9, dimension="bytes/s")
LATENCY = Number("latency", "Latency per all-reduce (α)", default=10, range=(0, 100_000),
                 step=1, unit="µs", scale=1e-6, dimension="seconds")


#: The degrees of a layout (what gpulesson.calculators.planner_inputs.layout reads, and dp):
#: label and range.
_DEGREES = {
    "tp": ("Tensor-parallel size", (1, 1024)),
    "cp": ("Context-parallel size", (1, 1024)),
    "ep": ("Expert-parallel size", (1, 1024)),
    "pp": ("Pipeline stages", (1, 1024)),
    "dp": ("Data-parallel size", (1, 1_000_000)),
    "zero_stage": ("ZeRO stage", (0, 3)),
    "interleave": ("Model chunks per pipeline GPU", (1, 64)),
}


def degree(name: str, default: int, *, help: str = "", if_set: bool = False) -> Input:
    """One degree of a layout (``tp``, ``cp``, ``ep``, ``pp``, ``dp``, ``zero_stage`` or
    ``interleave``) with its label and range; ``if_set`` says in the label that the planner
    reads it only when the layout is set by hand."""
    label, allowed = _DEGREES[name]
    return Integer(name, f"{label} (if set)" if if_set else label, default=default,
                   range=allowed, help=help)


def overlap(default: float, help: str = "") -> Input:
    """The share of the communication hidden behind compute."""
    return percent("overlap", "Overlap of communication with compute", default=default,
                   range=(0, 100), step=5, help=help)


# ---------------------------------------------------------------------------------------
# Prices (the cost lesson and the planning dashboard)

PRICE_NOTE = "Example price, dated; prices change: use a current quote for real plans."


_H100_NOW = prices.default_price(hardware.TEACHING_BASELINE)


def gpu_hour_price(others: str) -> Input:
    """The price of a GPU-hour: the H100's dated default quote, and what ``others`` charged.

    A calculator whose GPU preset is declared with ``gpu_inputs(..., price=True)`` fills it
    with the chosen GPU's dated quote; otherwise its default is the H100's
    (:func:`gpulesson.prices.default_price`).
    """
    return Number("usd_per_gpu_hour", "Price per GPU-hour",
                  default=round(_H100_NOW.usd_per_gpu_hour, 2), range=(0, 1000),
                  step=0.01, smallest=0.001, unit="$/h", dimension="usd",
                  help=f"Example: ${_H100_NOW.usd_per_gpu_hour:.2f} per GPU-hour, "
                       f"{_H100_NOW.provider} {_H100_NOW.instance} (8× H100) on demand, read "
                       f"{_H100_NOW.date} ($12.29 at its launch in July 2023); " + others
                       + " Each GPU's dated quotes are in gpulesson.prices. " + PRICE_NOTE)


# ---------------------------------------------------------------------------------------
# Warnings a form shows beside its outputs


def input_warnings(calc: Any, kw: Mapping[str, Any]) -> list[dict[str, str]]:
    """The spec-sheet mistakes in a calculator's SI inputs ``kw``, as ``{"input",
    "message"}`` items (an empty list when there are none).

    A calculator with a GPU preset, a ``dtype`` and a ``peak_flops`` input is checked with
    :func:`gpulesson.hardware.peak_warning`: a peak that is the chosen GPU's (or, for a
    custom GPU, any GPU's) 2:4-sparse or FP16-accumulate figure is named, and the dense
    peak given. The outputs are still computed: a warning is not an error.
    """
    names = {spec.name for spec in calc.inputs}
    if not {"gpu", "dtype", "peak_flops"} <= names:
        return []
    try:
        text = hardware.peak_warning(kw["gpu"], kw["dtype"], kw["peak_flops"])
    except (ValueError, KeyError):  # a precision the spec sheet does not tabulate
        return []
    return [] if text is None else [{"input": "peak_flops", "message": text}]


# ---------------------------------------------------------------------------------------
# Outputs several entries show

N_PARAMS_OUT = Output("n_params", "Parameters", "count")
#: The parameters memory holds: every expert of a mixture-of-experts model.
N_PARAMS_HELD_OUT = Output("n_params", "Parameters held (all experts)", "count")
#: The parameters one token's forward pass uses (transformer.active_params).
ACTIVE_OUT = Output("active", "Active per token (what the FLOPs count)", "count")
WEIGHTS_OUT = Output("weights", "Weights", "bytes")
TRAINING_TIME_OUT = Output("time", "Training time at that MFU", "seconds")
GPU_HOURS_OUT = Output("gpu_hours", "GPU-hours", "number", unit="GPU-hours")
EFFICIENCY_OUT = Output("efficiency", "Scaling efficiency", "percent")
