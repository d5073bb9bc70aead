"""What fits: bytes of weights, training state, activations, and the GPUs they need.

Model state per parameter (Rajbhandari et al. 2020, *ZeRO*, section 3.1)
--------------------------------------------------------------------------
Mixed-precision training with Adam keeps, per parameter: 2 bytes of FP16/BF16 weights,
2 bytes of FP16/BF16 gradients, and ``K = 12`` bytes of optimizer state (a 4-byte FP32
master copy of the weights plus two 4-byte FP32 Adam moments): **16 bytes**. Plain FP32
training with Adam keeps 4 + 4 + 4 + 4 = **16 bytes** as well (no master copy needed), so
mixed precision saves no model-state memory with Adam; it saves activation memory and
time. Frameworks that keep FP32 gradients (e.g. Megatron-LM's ``main_grad`` with BF16
weights) need 2 + 4 + 12 = **18 bytes** (``precision="mixed_fp32_grads"``). The default
``"mixed"`` uses the ZeRO paper's 16 because it is the published accounting that the
course's ZeRO figures reproduce.

Activations (Korthikanti et al. 2022, *Reducing Activation Recomputation in Large
Transformer Models*, section 4 and Table 2)
-------------------------------------------------------------------------
Bytes of activations stored per transformer layer for sequence length ``s``, micro-batch
``b``, hidden size ``h``, ``a`` heads and tensor-parallel size ``t``, assuming 16-bit
activations and 1-byte dropout masks, a GPT-style block (multi-head attention, 4h MLP):

==========================================  =========================
no parallelism                              ``s*b*h*(34 + 5*a*s/h)``
tensor parallel                             ``s*b*h*(10 + 24/t + 5*a*s/(h*t))``
tensor + sequence parallel                  ``s*b*h*(34/t + 5*a*s/(h*t))``
tensor parallel + selective recompute       ``s*b*h*(10 + 24/t)``
tensor + sequence parallel + selective      ``s*b*h*34/t``
full recomputation                          ``2*s*b*h``
==========================================  =========================

The ``5*a*s/h`` term is the attention score matrices (``QK^T``, softmax, its dropout mask)
that grow with ``s^2``; selective recomputation recomputes exactly those. For GPT-3
(``a = 96``, ``s = 2048``, ``h = 12288``) it is 80, larger than the 34.

These formulas are a GPT block's, and they stay its published special case.
:mod:`gpulesson.activations` derives the list tensor by tensor from any architecture
(gated MLP, GQA, experts, latent attention, dropout or not, ``attention="flash"`` or
``"eager"``) and gives these formulas for a GPT block with eager attention.
:func:`training_memory` follows the model (:func:`gpulesson.activations.default_attention`):
a GPT-2/GPT-3 block keeps Korthikanti et al.'s formula, a modern model (rotary positions
or a gated MLP) is derived with FlashAttention, which PyTorch and Hugging Face run by
default. Llama-2-7B at 4,096 tokens keeps 17.3 GB, where the GPT formula says 104.2 GB.

LoRA: frozen weights plus low-rank adapters (Hu et al. 2021, *LoRA*, sections 4 and 5)
---------------------------------------------------------------------------------------
LoRA freezes a weight matrix ``W`` (``d_in x d_out``) and trains ``B A`` beside it, with
``A`` of ``d_in x r`` and ``B`` of ``r x d_out``: ``r * (d_in + d_out)`` trainable
parameters per adapted matrix, ``2 * r * d`` for a square one. The paper adapts the query
and value projections; GPT-3 175B (96 layers, d = 12,288) at ``r = 8`` has 37.7M trainable
parameters. The frozen weights need no gradients and no optimizer state: training memory is
the base weights at their storage precision, the adapters' full training state, and the
activations (:func:`lora_params`, :func:`lora_training_memory`).

Taught in: ``notebooks/memory_what_fits.ipynb`` (LoRA: ``notebooks/planning_dashboard.ipynb``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType

from gpulesson import _validate as v
from gpulesson import precision as _precision
from gpulesson.activations import activation_bytes, default_attention
from gpulesson.transformer import TransformerConfig, as_config, param_count
from gpulesson.transformer.params import moe_breakdown

__all__ = [
    "LORA_TARGETS",
    "OPTIMIZERS",
    "PRECISION_BYTES",
    "RECOMPUTE_MODES",
    "TRAINING_PRECISIONS",
    "InferenceMemory",
    "LoraMemory",
    "MemoryBreakdown",
    "ModelStateBytes",
    "activation_bytes_per_layer",
    "bytes_per_param",
    "checkpoint_bytes",
    "fits",
    "gpus_needed",
    "headroom",
    "inference_memory",
    "lora_params",
    "lora_training_memory",
    "model_state_bytes",
    "precision_bytes",
    "training_memory",
    "weight_bytes",
]

def _bytes(name: str) -> float:
    """Bytes per element from :func:`gpulesson.precision.bytes_per_element`, an ``int``
    when whole (2, not 2.0)."""
    b = _precision.bytes_per_element(name)
    return int(b) if b == int(b) else b


#: Bytes per value of each storage precision, block scales included (MXFP4: 4.25 bits =
#: 0.53125 bytes; NVFP4: 4.5 bits = 0.5625 bytes; see :mod:`gpulesson.precision`).
PRECISION_BYTES: Mapping[str, float] = MappingProxyType({
    name: _bytes(name)
    for name in ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "mxfp8", "fp6",
                 "mxfp6", "nvfp4", "mxfp4", "fp4")
})
_PRECISION_ALIASES = {
    "float32": "fp32", "float": "fp32", "bfloat16": "bf16", "float16": "fp16",
    "half": "fp16", "e4m3": "fp8", "e5m2": "fp8", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8",
    "mxfp8_e4m3": "mxfp8", "mxfp8_e5m2": "mxfp8", "fp6_e2m3": "fp6", "fp6_e3m2": "fp6",
    "e2m3": "fp6", "e3m2": "fp6", "mxfp6_e2m3": "mxfp6", "mxfp6_e3m2": "mxfp6",
    "fp4_e2m1": "fp4", "e2m1": "fp4", "mxfp4_e2m1": "mxfp4", "nvfp4_e2m1": "nvfp4",
}

#: Weight-only quantisations :func:`precision_bytes` also knows (:mod:`gpulesson.precision`).
_QUANTISED = frozenset({*_precision.GGUF_QUANTS, "int4_g128"})

#: Training precisions: bytes per parameter of (weights, gradients, master copy) and the
#: bytes of each optimizer-state value.
TRAINING_PRECISIONS: Mapping[str, tuple[int, int, int, int]] = MappingProxyType({
    "mixed": (2, 2, 4, 4),             # FP16/BF16 weights and grads, FP32 master + states
    "mixed_fp32_grads": (2, 4, 4, 4),  # as mixed, but gradients kept in FP32
    "mixed_fp32_grad_accum": (2, 6, 4, 4),  # BF16 gradients and their FP32 accumulator
    "fp8_deepseek_v3": (1, 6, 4, 2),   # FP8 weights, BF16 + FP32 grads, BF16 moments
    "fp32": (4, 4, 0, 4),              # everything FP32, no master copy
    "pure_bf16": (2, 2, 0, 2),         # BF16 weights, grads and optimizer states
})
_TRAINING_ALIASES = {
    "amp": "mixed", "bf16": "mixed", "fp16": "mixed", "mixed_bf16": "mixed",
    "mixed_fp16": "mixed", "float32": "fp32",
}

#: Optimizers and how many values of state they keep per parameter.
OPTIMIZERS: Mapping[str, int] = MappingProxyType({"adam": 2, "sgd_momentum": 1, "sgd": 0})
_OPTIMIZER_ALIASES = {"adamw": "adam", "momentum": "sgd_momentum", "sgdm": "sgd_momentum"}

#: Activation recomputation modes (Korthikanti et al. 2022).
RECOMPUTE_MODES = ("none", "selective", "full")


def precision_bytes(name: str) -> float:
    """Bytes per value of a storage precision (``"bf16"`` -> 2, ``"int4"`` -> 0.5).

    Known: fp32, tf32, bf16, fp16, fp8, int8, int4, and the formats of 2025-26: mxfp8
    (1.03125), fp6 (0.75), mxfp6 (0.78125), nvfp4 (0.5625), mxfp4 (0.53125) and fp4
    (0.5, no scales), with spellings such as ``bfloat16`` or ``mxfp6_e2m3``. Block-scaled
    formats include their scales (OCP MX v1.0: one 8-bit scale per 32 elements; NVFP4:
    one per 16, plus an FP32 scale per tensor that a per-element figure leaves out). TF32
    is a tensor-core compute mode; its values are stored in 4-byte FP32. Every figure
    comes from :func:`gpulesson.precision.bytes_per_element`.

    Weight-only integer quantisations are accepted too, with their scales: AWQ/GPTQ's
    ``"int4_g128"`` (0.5195: FP16 scales and 4-bit zero-points per 128 weights) and the
    GGUF types (``"q4_k"`` 0.5625, ``"q8_0"`` 1.0625 ...). They stay out of
    :data:`PRECISION_BYTES`, the table of storage precisions the calculators offer.
    """
    if isinstance(name, str) and name.lower() in _QUANTISED:
        return _precision.bytes_per_element(name.lower())
    return PRECISION_BYTES[v.lookup("precision", name, PRECISION_BYTES, _PRECISION_ALIASES)[0]]


def checkpoint_bytes(parts: Mapping[str, float]) -> float:
    """Bytes of a checkpoint whose parameters are stored at several precisions:
    ``sum(params x precision_bytes(precision))`` over ``parts`` (``{precision: params}``).

    Quantised releases keep parts in 16 bits: gpt-oss stores its routed experts in MXFP4
    (4.25 bits with the scales) and the rest in BF16; Llama 3.1 405B FP8 keeps attention,
    the first and last layers and the embeddings in BF16. Scales of block formats are in
    :func:`precision_bytes`; per-tensor or per-row scales (a few MB) are left out.
    """
    if not isinstance(parts, Mapping) or not parts:
        raise ValueError(f"parts must be a non-empty mapping of precision to parameters, got "
                         f"{parts!r}")
    return float(sum(v.nonneg_number(f"parts[{name!r}]", n) * precision_bytes(name)
                     for name, n in parts.items()))


@dataclass(frozen=True)
class ModelStateBytes:
    """Bytes per parameter of training state, by part.

    ``optimizer`` includes the FP32 master copy of mixed precision (the ZeRO paper's
    ``K``: master weights + optimizer moments).
    """

    weights: int
    gradients: int
    optimizer: int

    @property
    def total(self) -> int:
        """Sum of the three parts."""
        return self.weights + self.gradients + self.optimizer


def model_state_bytes(precision: str = "mixed", optimizer: str = "adam") -> ModelStateBytes:
    """Bytes per parameter of weights, gradients and optimizer state (incl. master copy).

    Parameters
    ----------
    precision : str
        ``"mixed"`` (default; FP16/BF16 weights and gradients, FP32 master and states),
        ``"mixed_fp32_grads"``, ``"mixed_fp32_grad_accum"`` (20 bytes with Adam),
        ``"fp8_deepseek_v3"`` (15), ``"fp32"`` or ``"pure_bf16"``.
    optimizer : str
        ``"adam"`` (= AdamW, two moments), ``"sgd_momentum"`` (one) or ``"sgd"`` (none).

    Examples
    --------
    Mixed-precision Adam: 2 + 2 + 12 (ZeRO paper, section 3.1).
    """
    p = v.lookup("precision", precision, TRAINING_PRECISIONS, _TRAINING_ALIASES)[1]
    n_states = v.lookup("optimizer", optimizer, OPTIMIZERS, _OPTIMIZER_ALIASES)[1]
    weights, grads, master, state = p
    return ModelStateBytes(weights=weights, gradients=grads, optimizer=master + n_states * state)


def bytes_per_param(precision: str = "mixed", optimizer: str = "adam") -> int:
    """Model-state bytes per parameter: weights + gradients + optimizer states + master.

    ``"mixed"`` + Adam = 16 (2 + 2 + 4 + 4 + 4; ZeRO paper section 3.1); ``"fp32"`` +
    Adam = 16 (4 + 4 + 4 + 4); ``"mixed_fp32_grads"`` + Adam = 18;
    ``"mixed_fp32_grad_accum"`` + Adam = 20 (the Ultra-Scale Playbook's BF16 baseline);
    ``"fp8_deepseek_v3"`` + Adam = 15; ``"mixed"`` + SGD without momentum = 8. See
    :func:`model_state_bytes` for the parts.
    """
    return model_state_bytes(precision, optimizer).total


def weight_bytes(n_params: float, *, precision: str = "bf16") -> float:
    """Bytes of the weights alone: ``n_params * precision_bytes(precision)``."""
    n = v.positive_number("n_params", n_params)
    b = precision_bytes(precision)
    return n * b


@dataclass(frozen=True)
class InferenceMemory:
    """Memory to serve a model: weights, KV cache, overhead and their total (bytes)."""

    weights: float
    kv_cache: float
    overhead: float
    total: float


def inference_memory(
    n_params: float,
    *,
    precision: str = "bf16",
    kv_cache_bytes: float = 0,
    overhead_bytes: float = 0,
    weights_bytes: float | None = None,
) -> InferenceMemory:
    """Weights at ``precision`` plus a KV cache and a fixed overhead (CUDA context ...).

    Compute the KV cache with :func:`gpulesson.inference.kv_cache_bytes`. A checkpoint
    stored at several precisions (gpt-oss: MXFP4 experts, BF16 rest) passes its bytes as
    ``weights_bytes`` (:func:`checkpoint_bytes`), which then replace ``n_params`` at
    ``precision``.
    """
    w = (weight_bytes(n_params, precision=precision) if weights_bytes is None
         else v.positive_number("weights_bytes", weights_bytes))
    kv = v.nonneg_number("kv_cache_bytes", kv_cache_bytes)
    over = v.nonneg_number("overhead_bytes", overhead_bytes)
    return InferenceMemory(weights=w, kv_cache=kv, overhead=over, total=w + kv + over)


def activation_bytes_per_layer(
    *,
    seq_len: int,
    batch: int,
    hidden: int,
    heads: int,
    tp: int = 1,
    sequence_parallel: bool = False,
    recompute: str = "none",
) -> int:
    """Activation bytes one transformer layer stores for backward (Korthikanti et al. 2022).

    Table 2 of the paper, 16-bit activations; see the module docstring for all variants.

    Parameters
    ----------
    seq_len, batch, hidden, heads : int
        ``s``, micro-batch ``b``, ``h`` and ``a``.
    tp : int
        Tensor-parallel size ``t``; must divide ``heads`` and ``hidden``.
    sequence_parallel : bool
        Megatron sequence parallelism (splits the LayerNorm/dropout regions by ``t``).
    recompute : str
        ``"none"``, ``"selective"`` (recompute attention scores) or ``"full"`` (store
        only each layer's input, ``2sbh``, as in the paper's Table 2).

    Returns
    -------
    int
        Bytes per layer per GPU (exact).
    """
    s, b, h, a, t = v.positive_ints(seq_len=seq_len, batch=batch, hidden=hidden, heads=heads,
                                    tp=tp)
    v.boolean("sequence_parallel", sequence_parallel)
    mode = v.choice("recompute", recompute, RECOMPUTE_MODES)
    if a % t:
        raise ValueError(f"tp must divide heads ({a}), got {t}")
    if h % t:
        raise ValueError(f"tp must divide hidden ({h}), got {t}")
    if mode == "full":
        return 2 * s * b * h
    if sequence_parallel:
        linear = 34 * s * b * (h // t)
    else:
        linear = 10 * s * b * h + 24 * s * b * (h // t)
    if mode == "selective":
        return linear
    return linear + 5 * (a // t) * s * s * b


def _model_activations(cfg: TransformerConfig, *, seq_len: int, batch: int,
                       attention: str | None, dropout: bool | None, tp: int,
                       sequence_parallel: bool, recompute: str, cp: int) -> float:
    """All layers' activations of one micro-batch: Korthikanti et al.'s GPT formula for a
    GPT-2/3 block left to its default, otherwise derived per tensor (FlashAttention unless
    ``attention`` says otherwise)."""
    if attention is None:
        attention = default_attention(cfg)
        if attention == "eager" and dropout in (None, cfg.dropout):
            # the published special case, exactly as printed
            per_layer = activation_bytes_per_layer(
                seq_len=seq_len, batch=batch, hidden=cfg.hidden, heads=cfg.heads, tp=tp,
                sequence_parallel=sequence_parallel, recompute=recompute)
            return cfg.layers * per_layer // cp
    return activation_bytes(cfg, seq_len=seq_len, batch=batch, attention=attention,
                            dropout=dropout, tp=tp, sequence_parallel=sequence_parallel,
                            recompute=recompute, cp=cp)


@dataclass(frozen=True)
class MemoryBreakdown:
    """Training memory per GPU of a tensor-parallel group (bytes).

    Attributes
    ----------
    weights, gradients, optimizer : float
        Model state (``optimizer`` includes the FP32 master copy).
    activations : float
        Stored activations of all layers for one micro-batch (0 when only a parameter
        count was given).
    total : float
        Sum of the four.
    gpus_needed : int or None
        With ``memory_per_gpu``: GPUs whose memory adds up to the whole training state
        (model state once + activations), a lower bound reached only with full sharding.
    """

    weights: float
    gradients: float
    optimizer: float
    activations: float
    total: float
    gpus_needed: int | None = None


def training_memory(
    cfg_or_params: TransformerConfig | float,
    *,
    batch: int,
    seq_len: int,
    precision: str = "mixed",
    optimizer: str = "adam",
    recompute: str = "none",
    tp: int = 1,
    sequence_parallel: bool = False,
    memory_per_gpu: float | None = None,
    attention: str | None = None,
    dropout: bool | None = None,
    cp: int = 1,
    ep: int = 1,
) -> MemoryBreakdown:
    """Weights, gradients, optimizer state and activations for training, per GPU.

    Model state is ``n_params * model_state_bytes(precision, optimizer)`` divided by the
    tensor-parallel size ``tp`` (each rank holds ``1/tp`` of every sharded matrix; the few
    replicated norm weights are ignored); ``n_params`` is every parameter, all the experts
    of a mixture-of-experts model included. With expert parallelism the routed experts are
    divided by ``tp * ep``. Activations need the model shape (pass a
    :class:`~gpulesson.transformer.TransformerConfig`; with a bare parameter count they
    are reported as 0):

    * ``attention=None`` (default): the model's own
      (:func:`gpulesson.activations.default_attention`). A GPT-2/GPT-3 block (learned
      positions, plain MLP) keeps ``layers * activation_bytes_per_layer(...)``, the GPT
      block of Korthikanti et al. 2022 as published; a modern model (rotary positions or
      a gated MLP) is derived with FlashAttention, which PyTorch and Hugging Face run by
      default for it;
    * ``attention="flash"`` or ``"eager"``: derived tensor by tensor from the
      architecture (:func:`gpulesson.activations.activation_bytes`): gated MLP, GQA,
      experts, latent attention, ``dropout`` (default: the model's).

    Context parallelism over ``cp`` GPUs divides the activations by ``cp`` (each GPU keeps
    its share of the sequence; with eager attention, its queries' scores against every
    key). The embedding/output-layer activations (a few ``s*b*h`` terms and the logits)
    are left out, as the paper does.

    Parameters
    ----------
    cfg_or_params : TransformerConfig or float
        The model, or just its parameter count.
    batch, seq_len : int
        Micro-batch size and sequence length.
    precision, optimizer : str
        As in :func:`model_state_bytes`.
    recompute, tp, sequence_parallel
        As in :func:`activation_bytes_per_layer`.
    memory_per_gpu : float, optional
        Device memory in bytes; fills ``gpus_needed``.
    attention : str, optional
        ``None`` (the model's default: the GPT formula for GPT-2/3, FlashAttention for
        modern models), ``"flash"`` or ``"eager"`` (derived).
    dropout : bool, optional
        With ``attention``: whether training applies dropout (default ``cfg.dropout``).
    cp : int
        Context-parallel size; must divide ``seq_len``.
    ep : int
        Expert-parallel size; must divide the number of routed experts.
    """
    if isinstance(cfg_or_params, TransformerConfig):
        cfg: TransformerConfig | None = cfg_or_params
        n: float = param_count(cfg_or_params)
    else:
        cfg = None
        n = v.positive_number("cfg_or_params", cfg_or_params)
    b = v.positive_int("batch", batch)
    s = v.positive_int("seq_len", seq_len)
    t = v.positive_int("tp", tp)
    v.boolean("sequence_parallel", sequence_parallel)
    v.choice("recompute", recompute, RECOMPUTE_MODES)
    c = v.positive_int("cp", cp)
    e = v.positive_int("ep", ep)
    if s % c:
        raise ValueError(f"cp must divide seq_len ({s}), got {c}")
    if attention is not None and cfg is None:
        raise ValueError("attention needs the model's shape: pass a TransformerConfig, "
                         "not a parameter count")
    state = model_state_bytes(precision, optimizer)
    shards: float = n / t
    if e > 1:
        if cfg is None or not cfg.moe:
            raise ValueError(f"ep needs a TransformerConfig with routed experts, got ep={e}")
        if cfg.experts % e:
            raise ValueError(f"ep must divide experts ({cfg.experts}), got {e}")
        routed = moe_breakdown(cfg)["routed_experts"]
        shards = (n - routed) / t + routed / (t * e)
    activations: float = 0 if cfg is None else _model_activations(
        cfg, seq_len=s, batch=b, attention=attention, dropout=dropout, tp=t,
        sequence_parallel=sequence_parallel, recompute=recompute, cp=c)
    if e == 1:
        weights = n * state.weights / t
        gradients = n * state.gradients / t
        opt = n * state.optimizer / t
    else:
        weights = shards * state.weights
        gradients = shards * state.gradients
        opt = shards * state.optimizer
    total = weights + gradients + opt + activations
    needed = None
    if memory_per_gpu is not None:
        needed = gpus_needed(total * t, memory_per_gpu)  # the whole state, fully sharded
    return MemoryBreakdown(
        weights=weights, gradients=gradients, optimizer=opt, activations=activations,
        total=total, gpus_needed=needed,
    )


def fits(bytes_needed: float, device_memory: float) -> bool:
    """True when ``bytes_needed <= device_memory``."""
    return headroom(bytes_needed, device_memory) >= 0


def headroom(bytes_needed: float, device_memory: float) -> float:
    """``device_memory - bytes_needed``: spare bytes, negative when short by that much."""
    need = v.nonneg_number("bytes_needed", bytes_needed)
    mem = v.positive_number("device_memory", device_memory)
    return mem - need


def gpus_needed(bytes_needed: float, memory_per_gpu: float) -> int:
    """Fewest GPUs whose memory adds up to ``bytes_needed``: ``ceil(bytes / memory)``.

    A lower bound: it assumes the bytes can be split evenly (ZeRO-3/FSDP-style sharding).
    Computed exactly, so 160e9 bytes on 80e9-byte GPUs is 2, not 3.
    """
    need = v.nonneg_number("bytes_needed", bytes_needed)
    mem = v.positive_number("memory_per_gpu", memory_per_gpu)
    return math.ceil(Fraction(need) / Fraction(mem))


#: Weight matrices LoRA can adapt in each layer: attention q, k, v, o and the MLP's
#: gate (SwiGLU only), up and down projections.
LORA_TARGETS = ("q", "k", "v", "o", "gate", "up", "down")


def _lora_shapes(cfg: TransformerConfig) -> dict[str, tuple[int, int]]:
    """(d_in, d_out) of each adaptable matrix of one layer."""
    d, q, kv, f = cfg.hidden, cfg.q_dim, cfg.kv_dim, cfg.ffn
    shapes = {"q": (d, q), "k": (d, kv), "v": (d, kv), "o": (q, d), "up": (d, f),
              "down": (f, d)}
    if cfg.gated_mlp:
        shapes["gate"] = (d, f)
    return shapes  # type: ignore[return-value]


def lora_params(cfg: TransformerConfig, *, rank: int,
                targets: tuple[str, ...] | list[str] = ("q", "v")) -> int:
    """Trainable parameters of LoRA adapters: ``layers * sum r * (d_in + d_out)``.

    Hu et al. 2021: each adapted matrix ``W`` (``d_in x d_out``) gets ``A`` (``d_in x r``)
    and ``B`` (``r x d_out``); for square matrices that is the paper's
    ``|Theta| = 2 * L_hat * d_model * r`` over ``L_hat`` adapted matrices. With
    grouped-query attention the k and v projections are ``d x kv_heads*head_dim``.
    GPT-3 175B, q and v, ``r = 8``: 37.7M (the paper's Table 4); ``r = 4``: 18.9M.

    Parameters
    ----------
    cfg : TransformerConfig
        The model (``transformer.preset``).
    rank : int
        ``r``, at most the smaller side of every adapted matrix.
    targets : sequence of str
        Matrices adapted in every layer, from :data:`LORA_TARGETS` (``"gate"`` only for
        gated MLPs). Default: the paper's ``("q", "v")``.
    """
    as_config(cfg)
    r = v.positive_int("rank", rank)
    if isinstance(targets, str) or not isinstance(targets, (tuple, list)) or not targets:
        raise TypeError(f"targets must be a non-empty tuple of names from {list(LORA_TARGETS)}, "
                        f"got {targets!r}")
    names = [v.choice("targets", t, LORA_TARGETS) for t in targets]
    if len(set(names)) != len(names):
        raise ValueError(f"targets must not repeat a matrix, got {list(names)}")
    shapes = _lora_shapes(cfg)
    per_layer = 0
    for name in names:
        if name not in shapes:
            raise ValueError("targets: 'gate' exists only in a gated (SwiGLU) MLP; this model's "
                             "MLP has two matrices, 'up' and 'down'")
        d_in, d_out = shapes[name]
        if r > min(d_in, d_out):
            raise ValueError(f"rank must be at most {min(d_in, d_out)} (the smaller side of "
                             f"the {name!r} matrix, {d_in} x {d_out}), got {r}")
        per_layer += r * (d_in + d_out)
    return cfg.layers * per_layer


@dataclass(frozen=True)
class LoraMemory:
    """Memory to fine-tune with LoRA (bytes), one GPU, no sharding.

    Attributes
    ----------
    trainable_params : int
        Adapter parameters (:func:`lora_params`).
    base_weights : float
        The frozen weights at their storage precision.
    adapter_weights, adapter_gradients, adapter_optimizer : float
        The adapters' training state (``optimizer`` includes a master copy, as in
        :func:`model_state_bytes`).
    activations : float
        Stored activations of one micro-batch.
    total : float
        Sum of the five.
    """

    trainable_params: int
    base_weights: float
    adapter_weights: float
    adapter_gradients: float
    adapter_optimizer: float
    activations: float
    total: float


def lora_training_memory(
    cfg: TransformerConfig,
    *,
    rank: int,
    batch: int,
    seq_len: int,
    targets: tuple[str, ...] | list[str] = ("q", "v"),
    base_precision: str = "bf16",
    precision: str = "mixed",
    optimizer: str = "adam",
    recompute: str = "none",
    attention: str | None = None,
) -> LoraMemory:
    """Training memory with LoRA: frozen base weights + adapters' state + activations.

    * Base weights: ``param_count(cfg) * precision_bytes(base_precision)``, no gradients
      and no optimizer state (Hu et al. 2021, section 4.2: GPT-3 175B fine-tunes in
      350 GB of weights instead of 1.2 TB). A 4-bit base (``"int4"``) is the QLoRA idea.
    * Adapters: :func:`lora_params` times :func:`model_state_bytes` of ``precision`` and
      ``optimizer`` (16 bytes for mixed-precision Adam).
    * Activations: as for full training (:func:`training_memory`: Korthikanti et al.'s
      GPT formula for GPT-2/3, FlashAttention derived per tensor for modern models), an
      upper bound: the gradient must still flow back through
      every frozen layer to reach the adapters below, so the nonlinearities keep their
      inputs; a framework may drop the inputs of frozen matrices that have no adapter.
      The adapters' own ``r``-wide activations are negligible and left out.

    Parameters
    ----------
    cfg : TransformerConfig
        The model.
    rank, targets
        As in :func:`lora_params`.
    batch, seq_len : int
        Micro-batch size and sequence length.
    base_precision : str
        Storage of the frozen weights (``"bf16"``, ``"int8"``, ``"int4"`` ...).
    precision, optimizer : str
        Training precision and optimizer of the adapters (:func:`model_state_bytes`).
    recompute : str
        ``"none"``, ``"selective"`` or ``"full"`` (:func:`activation_bytes_per_layer`).
    attention : str, optional
        As in :func:`training_memory` (default: the model's).
    """
    trainable = lora_params(cfg, rank=rank, targets=targets)
    b = v.positive_int("batch", batch)
    s = v.positive_int("seq_len", seq_len)
    base = weight_bytes(param_count(cfg), precision=base_precision)
    state = model_state_bytes(precision, optimizer)
    v.choice("recompute", recompute, RECOMPUTE_MODES)
    activations = _model_activations(cfg, seq_len=s, batch=b, attention=attention,
                                     dropout=None, tp=1, sequence_parallel=False,
                                     recompute=recompute, cp=1)
    w = trainable * state.weights
    g = trainable * state.gradients
    o = trainable * state.optimizer
    return LoraMemory(trainable_params=trainable, base_weights=base, adapter_weights=w,
                      adapter_gradients=g, adapter_optimizer=o, activations=activations,
                      total=base + w + g + o + activations)


v.guard_module(globals())
