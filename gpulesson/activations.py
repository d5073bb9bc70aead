"""Activations a training step keeps for backward, tensor by tensor, for any architecture.

The backward pass needs, for each layer, the inputs of its matrix products and of its
non-linear functions. This module lists them for a layer of a given
:class:`~gpulesson.transformer.TransformerConfig`, in 16-bit values (``bytes_per_value``)
with 1-byte dropout masks, as Korthikanti et al. 2022 (section 4.1) count a GPT block, and
follows the architecture:

* **norms**: each norm keeps its input (``2sbh``): two per layer, four in Gemma 2, one in
  Falcon-7B's parallel block, whose attention and MLP then share one input;
* **attention**: the input of the q, k, v projections, ``Q`` (``heads*head_dim`` wide),
  ``K`` and ``V`` (only ``kv_heads*head_dim`` with grouped-query attention), the inputs
  of q/k norms, and the output projection's input. ``attention="eager"`` materialises the
  scores: the softmax output ``2as^2b`` and, with dropout, its mask ``as^2b`` and the
  dropped-out probabilities ``2as^2b``. ``attention="flash"`` (FlashAttention, PyTorch's
  SDPA) keeps no score matrix, only the softmax statistics, one FP32 log-sum-exp per head
  and token (``4asb``), and recomputes the scores in backward (Dao et al. 2022,
  section 3.1); its output is the output projection's input, counted once. Latent
  attention (DeepSeek-V2/V3) adds its compressed query and key/value latents and their
  norms;
* **MLP**: its input, then the two ``f``-wide tensors around the activation (plain), or
  the gate and up projections and their product (gated: SwiGLU/GeGLU, three ``f``-wide
  tensors; the SiLU output is recomputed from the gate); a mixture-of-experts layer keeps
  the router's FP32 probabilities, for each of the ``k`` experts a token uses its copy of
  the token, the expert's tensors and the expert's output (to weight it), and the shared
  experts' tensors;
* **dropout** (GPT-2 trains with it, Llama without): a mask after attention and after the
  MLP, ``sbh`` bytes each.

For a GPT block (``attention="eager"``, dropout, plain 4h MLP, multi-head attention) the
list is exactly Korthikanti et al.'s ``sbh(34 + 5as/h)`` and its tensor- and
sequence-parallel variants (:func:`gpulesson.memory.activation_bytes_per_layer`), the
published special case. For Llama-2-7B at 4,096 tokens, FlashAttention, SwiGLU and no
dropout keep 17.3 GB for 32 layers where the GPT formula gives 104.2 GB.

Parallelism: tensor parallelism over ``t`` GPUs splits every tensor inside attention and
the MLP by ``t``; sequence parallelism also splits the rest (norm inputs, the block inputs,
dropout masks). Context parallelism over ``cp`` GPUs splits the sequence: each GPU keeps
its ``s/cp`` tokens and, with eager attention, their scores against all ``s`` keys.

Recomputation: ``"selective"`` drops the score tensors (Korthikanti et al. 2022), which
FlashAttention never stores; ``"full"`` keeps each layer's input only.

Left out, as in the paper: the embedding, the final norm and the logits (``s*b*V``
values, large with a big vocabulary).

Taught in: ``notebooks/memory_what_fits.ipynb``; checked against a real forward pass by
:func:`gpulesson.forward_pass.llama_block_saved_bytes`.
"""

from __future__ import annotations

from gpulesson import _validate as v
from gpulesson.transformer import TransformerConfig

__all__ = [
    "ATTENTION_IMPLEMENTATIONS",
    "RECOMPUTE_MODES",
    "SCORE_TENSORS",
    "activation_bytes",
    "activation_tensors",
    "default_attention",
    "layer_activation_bytes",
]

#: How attention is computed: FlashAttention (and PyTorch's SDPA) or eager PyTorch ops.
ATTENTION_IMPLEMENTATIONS = ("flash", "eager")
#: Activation recomputation modes (Korthikanti et al. 2022).
RECOMPUTE_MODES = ("none", "selective", "full")
#: The tensors that grow with ``s^2`` and that selective recomputation drops.
SCORE_TENSORS = ("softmax output", "softmax dropout mask", "softmax dropout output")


def _ceil_div(x: int, t: int) -> int:
    return -(-x // t)


def default_attention(cfg: TransformerConfig) -> str:
    """How a model's attention is computed in training unless told otherwise.

    ``"eager"`` for a GPT-2/GPT-3 block (learned position embeddings and a plain MLP), the
    block Korthikanti et al. 2022 count with its score matrices materialised, so that
    their published figures stay the special case; ``"flash"`` for every modern model
    (rotary or relative positions, or a gated MLP), since FlashAttention/SDPA is what
    PyTorch and Hugging Face run by default (Dao et al. 2022; PyTorch 2.0's
    ``scaled_dot_product_attention``, 2023).

    Examples
    --------
    GPT-2 and GPT-3 175B: ``"eager"``; Llama, Mistral, Qwen, Gemma, DeepSeek-V3:
    ``"flash"``.
    """
    if not isinstance(cfg, TransformerConfig):
        raise TypeError(f"cfg must be a TransformerConfig (see transformer.preset), got "
                        f"{type(cfg).__name__}")
    return "eager" if cfg.max_positions and not cfg.gated_mlp else "flash"


def activation_tensors(
    cfg: TransformerConfig,
    *,
    seq_len: int,
    batch: int = 1,
    attention: str = "flash",
    dropout: bool | None = None,
    tp: int = 1,
    sequence_parallel: bool = False,
    cp: int = 1,
    recompute: str = "none",
    moe_layer: bool | None = None,
    bytes_per_value: int = 2,
) -> dict[str, int]:
    """Bytes of every tensor one layer keeps for backward, per GPU, by name.

    Parameters
    ----------
    cfg : TransformerConfig
        The model.
    seq_len, batch : int
        Sequence length ``s`` and micro-batch ``b``.
    attention : str
        ``"flash"`` (no score matrix) or ``"eager"`` (scores materialised).
    dropout : bool, optional
        Whether training applies dropout; default ``cfg.dropout``.
    tp : int
        Tensor-parallel size; must divide ``heads``.
    sequence_parallel : bool
        Megatron sequence parallelism (splits the rest of the layer by ``tp``).
    cp : int
        Context-parallel size; must divide ``seq_len``.
    recompute : str
        ``"none"``, ``"selective"`` or ``"full"``.
    moe_layer : bool, optional
        Count a mixture-of-experts layer (default: whether the model has experts) or a
        dense one (a DeepSeek-V3 leading layer).
    bytes_per_value : int
        Bytes of one activation value (2 for BF16/FP16).

    Returns
    -------
    dict[str, int]
        Tensor name -> bytes; tensors of width 0 are left out.

    Raises
    ------
    ValueError
        naming the argument (``tp`` that does not divide ``heads``, ``cp`` that does not
        divide ``seq_len``, an unknown attention implementation ...).
    """
    if not isinstance(cfg, TransformerConfig):
        raise TypeError(f"cfg must be a TransformerConfig (see transformer.preset), got "
                        f"{type(cfg).__name__}")
    s = v.positive_int("seq_len", seq_len)
    b = v.positive_int("batch", batch)
    v.choice("attention", attention, ATTENTION_IMPLEMENTATIONS)
    drop = cfg.dropout if dropout is None else v.boolean("dropout", dropout)
    t = v.positive_int("tp", tp)
    v.boolean("sequence_parallel", sequence_parallel)
    c = v.positive_int("cp", cp)
    mode = v.choice("recompute", recompute, RECOMPUTE_MODES)
    moe = cfg.moe if moe_layer is None else v.boolean("moe_layer", moe_layer)
    if moe and not cfg.moe:
        raise ValueError("moe_layer=True needs a model with routed experts (experts > 0)")
    val = v.positive_int("bytes_per_value", bytes_per_value)
    if cfg.heads % t:
        raise ValueError(f"tp must divide heads ({cfg.heads}), got {t}")
    if s % c:
        raise ValueError(f"cp must divide seq_len ({s}), got {c}")
    tokens = s // c * b  # tokens this GPU holds
    rest = t if sequence_parallel else 1  # what the layer's "rest" is split by

    def whole(width: int, nbytes: int = val) -> int:
        """A tensor outside attention/MLP (norm inputs, masks): split by SP only."""
        return _ceil_div(tokens * width * nbytes, rest)

    def split(width: int, nbytes: int = val) -> int:
        """A tensor inside attention or the MLP: split by tensor parallelism."""
        return _ceil_div(tokens * width * nbytes, t)

    h = cfg.hidden
    if mode == "full":
        return {"layer input": whole(h)}
    out: dict[str, int] = {}
    distinct_inputs = 1 if cfg.parallel_attention else cfg.norms_per_layer
    out["norm inputs"] = distinct_inputs * whole(h)
    out["attention input"] = whole(h)
    _attention(cfg, out, whole, split, tokens, s, t, attention, drop, val)
    if drop:
        out["attention dropout mask"] = whole(h, 1)
    if not (cfg.parallel_attention and cfg.norms_per_layer <= 1):
        out["MLP input"] = whole(h)
    if moe:
        _moe(cfg, out, whole, split)
    else:
        _mlp(cfg, out, split, cfg.ffn, "MLP")  # type: ignore[arg-type]
    if drop:
        out["MLP dropout mask"] = whole(h, 1)
    if mode == "selective":
        for name in SCORE_TENSORS:
            out.pop(name, None)
    return {name: size for name, size in out.items() if size}


def _attention(cfg, out, whole, split, tokens, s, t, attention, drop, val) -> None:  # noqa: ANN001, PLR0913
    heads = cfg.heads
    if cfg.latent_attention:
        if cfg.q_lora_rank:
            out["query latent norm input"] = whole(cfg.q_lora_rank)
            out["query latent"] = whole(cfg.q_lora_rank)
        out["key/value latent norm input"] = whole(cfg.kv_lora_rank)
        out["key/value latent"] = whole(cfg.kv_lora_rank)
        out["Q"] = split(heads * cfg.head_dim)
        out["K"] = split(heads * cfg.head_dim)
        out["V"] = split(heads * cfg.v_head_dim)
    else:
        kv_per_gpu = _ceil_div(cfg.kv_heads, t) * t  # a KV head is copied when kv_heads < t
        if cfg.qk_norm != "none":
            out["q/k norm inputs"] = split(cfg.q_dim + kv_per_gpu * cfg.head_dim)
        out["Q"] = split(cfg.q_dim)
        out["K"] = split(kv_per_gpu * cfg.head_dim)
        out["V"] = split(kv_per_gpu * cfg.value_head_dim)
    if attention == "eager":
        scores = tokens * s * heads // t  # this GPU's queries against all s keys
        out["softmax output"] = val * scores
        if drop:
            out["softmax dropout mask"] = scores
            out["softmax dropout output"] = val * scores
    else:
        out["softmax statistics"] = split(heads, 4)  # FP32 log-sum-exp per head and token
    out["attention output"] = split(cfg.o_dim)


def _mlp(cfg: TransformerConfig, out: dict[str, int], split, width: int, label: str,  # noqa: ANN001
         copies: int = 1) -> None:
    if cfg.gated_mlp:
        names = ("gate projection", "up projection", "down projection input")
    else:
        names = ("activation input", "activation output")
    for name in names:
        key = f"{label} {name}"
        out[key] = out.get(key, 0) + copies * split(width)


def _moe(cfg: TransformerConfig, out: dict[str, int], whole, split) -> None:  # noqa: ANN001
    k, h = cfg.experts_per_token, cfg.hidden
    out["router probabilities"] = whole(cfg.experts, 4)  # FP32
    out["routed token copies"] = k * whole(h)
    _mlp(cfg, out, split, cfg.expert_ffn, "expert", copies=k)  # type: ignore[arg-type]
    out["expert outputs"] = k * whole(h)
    if cfg.shared_experts:
        _mlp(cfg, out, split, cfg.shared_expert_ffn, "shared expert",  # type: ignore[arg-type]
             copies=cfg.shared_experts)


def layer_activation_bytes(cfg: TransformerConfig, **kw: object) -> int:
    """Sum of :func:`activation_tensors` for one layer (same arguments)."""
    return sum(activation_tensors(cfg, **kw).values())  # type: ignore[arg-type]


def activation_bytes(cfg: TransformerConfig, **kw: object) -> int:
    """Activations of every layer of the model for one micro-batch, per GPU (bytes).

    The dense layers and the mixture-of-experts layers each counted with
    :func:`activation_tensors` (same keyword arguments, except ``moe_layer``). Llama-2-7B,
    one 4,096-token sequence, FlashAttention, no dropout: 17.3 GB.
    """
    if "moe_layer" in kw:
        raise TypeError("activation_bytes counts every layer; moe_layer is chosen per layer")
    dense = cfg.layers - cfg.moe_layers
    total = dense * layer_activation_bytes(cfg, moe_layer=False, **kw) if dense else 0
    if cfg.moe_layers:
        total += cfg.moe_layers * layer_activation_bytes(cfg, moe_layer=True, **kw)
    return total


v.guard_module(globals())
