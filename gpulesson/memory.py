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

Taught in: ``notebooks/memory_what_fits.ipynb``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType

from gpulesson import _validate as v
from gpulesson.transformer import TransformerConfig, param_count

__all__ = [
    "OPTIMIZERS",
    "PRECISION_BYTES",
    "RECOMPUTE_MODES",
    "TRAINING_PRECISIONS",
    "InferenceMemory",
    "MemoryBreakdown",
    "ModelStateBytes",
    "activation_bytes_per_layer",
    "bytes_per_param",
    "fits",
    "gpus_needed",
    "headroom",
    "inference_memory",
    "model_state_bytes",
    "precision_bytes",
    "training_memory",
    "weight_bytes",
]

#: Bytes per value of each storage precision.
PRECISION_BYTES: Mapping[str, float] = MappingProxyType(
    {"fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5}
)
_PRECISION_ALIASES = {
    "float32": "fp32", "float": "fp32", "bfloat16": "bf16", "float16": "fp16",
    "half": "fp16", "e4m3": "fp8", "e5m2": "fp8", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8",
}

#: Training precisions: bytes per parameter of (weights, gradients, master copy) and the
#: bytes of each optimizer-state value.
TRAINING_PRECISIONS: Mapping[str, tuple[int, int, int, int]] = MappingProxyType({
    "mixed": (2, 2, 4, 4),             # FP16/BF16 weights and grads, FP32 master + states
    "mixed_fp32_grads": (2, 4, 4, 4),  # as mixed, but gradients kept in FP32
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

    Known: fp32, tf32, bf16, fp16, fp8, int8, int4 (and spellings such as ``bfloat16``).
    TF32 is a tensor-core compute mode; its values are stored in 4-byte FP32.
    """
    return PRECISION_BYTES[v.lookup("precision", name, PRECISION_BYTES, _PRECISION_ALIASES)[0]]


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
        ``"mixed_fp32_grads"``, ``"fp32"`` or ``"pure_bf16"``.
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
    Adam = 16 (4 + 4 + 4 + 4); ``"mixed_fp32_grads"`` + Adam = 18; ``"mixed"`` + SGD
    without momentum = 8. See :func:`model_state_bytes` for the parts.
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
) -> InferenceMemory:
    """Weights at ``precision`` plus a KV cache and a fixed overhead (CUDA context ...).

    Compute the KV cache with :func:`gpulesson.inference.kv_cache_bytes`.
    """
    w = weight_bytes(n_params, precision=precision)
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
    s = v.positive_int("seq_len", seq_len)
    b = v.positive_int("batch", batch)
    h = v.positive_int("hidden", hidden)
    a = v.positive_int("heads", heads)
    t = v.positive_int("tp", tp)
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
) -> MemoryBreakdown:
    """Weights, gradients, optimizer state and activations for training, per GPU.

    Model state is ``n_params * model_state_bytes(precision, optimizer)`` divided by the
    tensor-parallel size ``tp`` (each rank holds ``1/tp`` of every sharded matrix; the few
    replicated norm weights are ignored). Activations are
    ``layers * activation_bytes_per_layer(...)`` (Korthikanti et al. 2022), which needs
    the model shape: pass a :class:`~gpulesson.transformer.TransformerConfig`. With a
    bare parameter count activations are reported as 0. The embedding/output-layer
    activations (a few ``s*b*h`` terms) are left out, as the paper does.

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
    state = model_state_bytes(precision, optimizer)
    if cfg is not None:
        per_layer = activation_bytes_per_layer(
            seq_len=s, batch=b, hidden=cfg.hidden, heads=cfg.heads, tp=t,
            sequence_parallel=sequence_parallel, recompute=recompute,
        )
        activations: float = cfg.layers * per_layer
    else:
        activations = 0
    weights = n * state.weights / t
    gradients = n * state.gradients / t
    opt = n * state.optimizer / t
    total = weights + gradients + opt + activations
    needed = None
    if memory_per_gpu is not None:
        needed = gpus_needed(total * t, memory_per_gpu)
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
