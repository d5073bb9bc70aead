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
  norms; DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5.1) adds its indexer's query, key,
  head weights, the top-k indices and the indexer loss's target (:func:`indexer_tensors`);
* **MLP**: its input, then the two ``f``-wide tensors around the activation (plain), or
  the gate and up projections and their product (gated: SwiGLU/GeGLU, three ``f``-wide
  tensors; the SiLU output is recomputed from the gate, as fused kernels do: Megatron-Core's
  ``SwiGLUFunction`` and Liger's ``LigerSiLUMulFunction`` save only the gate and up
  projections. Unfused PyTorch, Hugging Face's ``LlamaMLP`` for one, also keeps the SiLU
  output, a fourth ``f``-wide tensor); a mixture-of-experts layer keeps
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
FlashAttention never stores; ``"full"`` keeps each layer's input only; ``"deepseek-v3"``
is the recipe DeepSeek-V3 was trained with (DeepSeek-AI 2024, sections 3.2.3 and 3.3.3):
on top of ``"selective"``, norm outputs and latent attention's up-projections are
recomputed and most matrix-product inputs are kept in FP8 (:data:`DEEPSEEK_V3_RECIPE` says
what happens to each tensor; :func:`up_projection_params` the weights recomputed);
``"norm-moe-act"`` is Megatron-Core's recomputation of the block norms and the experts'
activation function (:data:`NORM_MOE_ACT_RECIPE`), ``"mla-up-proj"`` its recomputation of
latent attention's up-projections (:data:`MLA_UP_PROJ_RECIPE`), ``"torchtitan-op"`` torchtitan's
selective op checkpointing, every second matrix product of a block recomputed
(:data:`TORCHTITAN_OP_RECIPE`, :func:`op_recomputed_products`).

Left out, as in the paper: the embedding, the final norm and the logits (``s*b*V``
values, large with a big vocabulary).

Taught in: ``notebooks/memory_what_fits.ipynb``; checked against a real forward pass by
:func:`gpulesson.forward_pass.llama_block_saved_bytes`.
"""

from __future__ import annotations

from types import MappingProxyType

from gpulesson import _validate as v
from gpulesson.transformer import TransformerConfig, as_config

__all__ = [
    "ATTENTION_IMPLEMENTATIONS",
    "DEEPSEEK_V3_RECIPE",
    "KERNELS",
    "MLA_UP_PROJ_RECIPE",
    "NORM_MOE_ACT_RECIPE",
    "RECIPES",
    "RECOMPUTE_MODES",
    "TORCHTITAN_OP_RECIPE",
    "SCORE_TENSORS",
    "activation_bytes",
    "activation_tensors",
    "default_attention",
    "indexer_tensors",
    "layer_activation_bytes",
    "op_recomputed_products",
    "up_projection_params",
]

#: How attention is computed: FlashAttention (and PyTorch's SDPA) or eager PyTorch ops.
ATTENTION_IMPLEMENTATIONS = ("flash", "eager")
#: Which kernels run the MLP and the norms: ``"fused"`` (a SwiGLU that recomputes its SiLU
#: output, 16-bit norm inputs: Megatron-Core, Transformer Engine's norms, Liger),
#: ``"unfused"`` (PyTorch op by op: a gated MLP also keeps the SiLU output) and
#: ``"hugging-face"`` (unfused, and Hugging Face's ``LlamaRMSNorm``, which keeps its input
#: in FP32, its normalised output in 16 bits and one FP32 reciprocal RMS per token).
KERNELS = ("fused", "unfused", "hugging-face")
#: Activation recomputation modes: Korthikanti et al. 2022's three, DeepSeek-V3's recipe,
#: Megatron-Core's ``recompute_modules=["layernorm", "moe_act"]`` (:data:`NORM_MOE_ACT_RECIPE`)
#: and ``["mla_up_proj"]`` (:data:`MLA_UP_PROJ_RECIPE`), and torchtitan's selective op
#: checkpointing (:data:`TORCHTITAN_OP_RECIPE`).
RECOMPUTE_MODES = ("none", "selective", "full", "deepseek-v3", "norm-moe-act", "mla-up-proj",
                   "torchtitan-op")
#: The tensors that grow with ``s^2`` and that selective recomputation drops.
SCORE_TENSORS = ("softmax output", "softmax dropout mask", "softmax dropout output")
#: How DeepSeek-V3's recipe keeps each tensor of :func:`activation_tensors`
#: (DeepSeek-AI 2024, arXiv 2412.19437): ``"recomputed"`` (not stored), ``"fp8"`` (1 byte
#: per value), ``"e5m6"`` (12 bits, 1.5 bytes per value) or ``"kept"`` (as counted, 16-bit;
#: FP32 where the tensor is FP32). A tensor not named here is kept as counted.
#:
#: * Section 3.2.3 recomputes every RMSNorm and the MLA up-projections in the backward pass,
#:   so no norm output and none of Q, K, V is stored; the norms' inputs are: the two block
#:   norm inputs (the residual stream), and the outputs of the query and key/value
#:   down-projections, which are the inputs of the latent norms. The normalised latents
#:   (``"query latent"``, ``"key/value latent"``) are norm outputs, so they go too; so do
#:   ``"attention input"`` and ``"MLP input"``, the outputs of the block's two norms.
#: * Section 3.3.3 caches the inputs of the linear layers in FP8, with two exceptions. The
#:   input of the linear layer after attention (``"attention output"``, which attention's
#:   backward also reads) is kept in a custom E5M6 format: 1 sign, 5 exponent and 6
#:   mantissa bits, counted here as 12 bits, 1.5 bytes, as if packed. And in the MoE the
#:   SwiGLU's inputs (the gate and up projections of the routed and shared experts) are
#:   cached in FP8 while its output, the down projection's input, is recomputed. The tokens
#:   dispatched to the experts (``"routed token copies"``, the experts' linear input) are
#:   FP8; the combine stays BF16, so ``"expert outputs"`` are kept as counted.
#: * Kept as counted: the softmax statistics (attention runs in BF16/FP32, section 3.3.1),
#:   the router's FP32 probabilities (the gating module stays in higher precision, section
#:   3.3.1) and the dense layers' gate and up projections: the report states the SwiGLU
#:   trick for the MoE only, so in the three dense layers only the down projection's input,
#:   a linear input, is FP8.
DEEPSEEK_V3_RECIPE = MappingProxyType({
    "norm inputs": "kept",
    "attention input": "recomputed",
    "query latent norm input": "kept",
    "query latent": "recomputed",
    "key/value latent norm input": "kept",
    "key/value latent": "recomputed",
    "Q": "recomputed",
    "K": "recomputed",
    "V": "recomputed",
    "softmax statistics": "kept",
    "attention output": "e5m6",
    "MLP input": "recomputed",
    "MLP gate projection": "kept",
    "MLP up projection": "kept",
    "MLP down projection input": "fp8",
    "router probabilities": "kept",
    "routed token copies": "fp8",
    "expert gate projection": "fp8",
    "expert up projection": "fp8",
    "expert down projection input": "recomputed",
    "expert outputs": "kept",
    "shared expert gate projection": "fp8",
    "shared expert up projection": "fp8",
    "shared expert down projection input": "recomputed",
})

#: Megatron-Core's selective recomputation of the two block norms and the experts'
#: activation function (``recompute_modules=["layernorm", "moe_act"]``, NVIDIA
#: Megatron-Bridge's GPT-OSS recipes, ``scripts/performance/configs/gpt_oss``; in effect from
#: release 26.02, v0.3.0: in 25.11 the list was set without the "selective" granularity that
#: makes Megatron-Core read it, which its pull request 1653, commit c9dd0586, added): the
#: norms' outputs (the inputs of attention and of the MLP) and the routed experts'
#: activation output (their down projection's input) are not stored but computed again in
#: the backward pass from what is (the residual stream, the gate and up projections).
NORM_MOE_ACT_RECIPE = MappingProxyType({
    "attention input": "recomputed",
    "MLP input": "recomputed",
    "expert down projection input": "recomputed",
})
#: Megatron-Core's selective recomputation of latent attention's up-projections
#: (``recompute_modules=["mla_up_proj"]``, "the MLA up projection and RoPE applying parts":
#: megatron/core/transformer/transformer_config.py; NVIDIA Megatron-Bridge's DeepSeek-V3 and
#: Kimi K2 recipes). ``MLASelfAttention`` runs the latents' norms, the up-projections and
#: rotary inside one ``CheckpointWithoutOutput`` whose inputs are the two down-projections'
#: outputs (megatron/core/transformer/multi_latent_attention.py, ``qkv_up_proj_and_rope_apply``):
#: those, the latent norms' inputs, are stored; the normalised latents and the queries, keys
#: and values it returns are dropped once the attention kernel has run and made again in
#: the backward pass. The attention core itself is not recomputed, and nothing else is.
MLA_UP_PROJ_RECIPE = MappingProxyType({
    "query latent": "recomputed",
    "key/value latent": "recomputed",
    "Q": "recomputed",
    "K": "recomputed",
    "V": "recomputed",
})
#: torchtitan's selective *op* checkpointing (``selective_ac_option = "op"``,
#: ``torchtitan/models/llama3/parallelize_llama.py``, commit e7c0cae, 2025-06): inside
#: each block it keeps the outputs of the matrix products, of attention and of a few
#: reductions, "except every second mm", and recomputes every other operation. In a Llama
#: block the products run q, k, v, o, w1 (gate), w3 (up), w2 (down), so k, o and the up
#: projection are recomputed, with the norms, rotary, SiLU and the gating product; the
#: attention kernel's output and statistics are kept (attention is not run again).
#: Stored: the block input and the down projection's output (counted as the two norm
#: inputs), Q, V, the attention output and statistics, the gate projection.
TORCHTITAN_OP_RECIPE = MappingProxyType({
    "attention input": "recomputed",
    "K": "recomputed",
    "MLP input": "recomputed",
    "MLP up projection": "recomputed",
    "MLP down projection input": "recomputed",
})
#: The recipes beyond Korthikanti et al.'s modes, by recompute mode.
RECIPES = MappingProxyType({"deepseek-v3": DEEPSEEK_V3_RECIPE,
                            "norm-moe-act": NORM_MOE_ACT_RECIPE,
                            "mla-up-proj": MLA_UP_PROJ_RECIPE,
                            "torchtitan-op": TORCHTITAN_OP_RECIPE})


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
    as_config(cfg)
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
    kernels: str = "fused",
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
        ``"none"``, ``"selective"``, ``"full"``, ``"deepseek-v3"`` (DeepSeek-V3's recipe,
        :data:`DEEPSEEK_V3_RECIPE`: needs latent attention and a gated MLP),
        ``"norm-moe-act"`` (:data:`NORM_MOE_ACT_RECIPE`), ``"mla-up-proj"``
        (:data:`MLA_UP_PROJ_RECIPE`: needs latent attention) or ``"torchtitan-op"``
        (:data:`TORCHTITAN_OP_RECIPE`); the last four drop the score tensors as
        ``"selective"`` does.
    moe_layer : bool, optional
        Count a mixture-of-experts layer (default: whether the model has experts) or a
        dense one (a DeepSeek-V3 leading layer).
    bytes_per_value : int
        Bytes of one activation value (2 for BF16/FP16).
    kernels : str
        ``"fused"`` (default), ``"unfused"`` or ``"hugging-face"`` (:data:`KERNELS`; the
        last needs ``norm="rmsnorm"``). Llama-2-7B at 4,096 tokens: 17.3, 20.1 and 24.4 GB
        (Megatron-Core's ``fused_bias_swiglu.py``, Liger's ``swiglu.py``, Hugging Face's
        ``modeling_llama.py``).

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
    as_config(cfg)
    s = v.positive_int("seq_len", seq_len)
    b = v.positive_int("batch", batch)
    v.choice("attention", attention, ATTENTION_IMPLEMENTATIONS)
    drop = cfg.dropout if dropout is None else v.boolean("dropout", dropout)
    t = v.positive_int("tp", tp)
    v.boolean("sequence_parallel", sequence_parallel)
    c = v.positive_int("cp", cp)
    mode = v.choice("recompute", recompute, RECOMPUTE_MODES)
    if mode == "deepseek-v3":
        _check_recipe(cfg)
    if mode == "mla-up-proj" and not cfg.latent_attention:
        raise ValueError(f"recompute='mla-up-proj' recomputes latent attention's "
                         f"up-projections; {cfg.name or 'this model'} has no latent attention: "
                         f"use 'none', 'selective' or 'full'")
    moe = cfg.moe if moe_layer is None else v.boolean("moe_layer", moe_layer)
    if moe and not cfg.moe:
        raise ValueError("moe_layer=True needs a model with routed experts (experts > 0)")
    val = v.positive_int("bytes_per_value", bytes_per_value)
    how = v.choice("kernels", kernels, KERNELS)
    if how == "hugging-face" and cfg.norm != "rmsnorm":
        raise ValueError(f"kernels='hugging-face' counts Hugging Face's LlamaRMSNorm: it "
                         f"needs norm='rmsnorm', got norm={cfg.norm!r}")
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
    if how == "hugging-face":  # FP32 input, 16-bit output, FP32 1/rms per token
        out["norm inputs"] = distinct_inputs * (whole(h, 4) + whole(h) + whole(1, 4))
    else:
        out["norm inputs"] = distinct_inputs * whole(h)
    out["attention input"] = whole(h)
    _attention(cfg, out, whole, split, tokens, s, t, attention, drop, val)
    if drop:
        out["attention dropout mask"] = whole(h, 1)
    if not (cfg.parallel_attention and cfg.norms_per_layer <= 1):
        out["MLP input"] = whole(h)
    unfused = how != "fused"
    if moe:
        _moe(cfg, out, whole, split, unfused)
    else:
        _mlp(cfg, out, split, cfg.ffn, "MLP", unfused=unfused)  # type: ignore[arg-type]
    if drop:
        out["MLP dropout mask"] = whole(h, 1)
    if mode != "none":
        for name in SCORE_TENSORS:
            out.pop(name, None)
    if mode in RECIPES:
        out = {name: _recipe_bytes(RECIPES[mode].get(name, "kept"), size, val)
               for name, size in out.items()}
    return {name: size for name, size in out.items() if size}


def _check_recipe(cfg: TransformerConfig) -> None:
    if not (cfg.latent_attention and cfg.gated_mlp):
        raise ValueError(f"recompute='deepseek-v3' is DeepSeek-V3's recipe for latent "
                         f"attention and a gated MLP; {cfg.name or 'this model'} has "
                         f"latent_attention={cfg.latent_attention}, "
                         f"gated_mlp={cfg.gated_mlp}: use 'none', 'selective' or 'full'")


def _recipe_bytes(how: str, size: int, val: int) -> int:
    """Bytes of a tensor counted at ``val`` bytes per value once the recipe stores it."""
    if how == "recomputed":
        return 0
    if how == "fp8":
        return _ceil_div(size, val)
    if how == "e5m6":
        return _ceil_div(3 * size, 2 * val)
    return size


def up_projection_params(cfg: TransformerConfig) -> int:
    """Weights of one layer that DeepSeek-V3's recipe runs again in the backward pass.

    Latent attention's up-projections, from the query latent to the queries
    (``c_q*a*(n+r)``) and from the key/value latent to the keys and values
    (``c*a*(n+v)``), with ``a`` heads, ``c_q``/``c`` the query and key/value ranks and
    ``n``/``r``/``v`` the no-rope, rope and value head sizes. Without a query latent the
    queries come straight from the normalised input (``h*a*(n+r)``), and that projection is
    what is recomputed. Recomputing them costs ``2 *`` these weights in FLOPs per token
    and layer (DeepSeek-AI 2024, section 3.2.3: "a minor overhead"); the RMSNorms it also
    recomputes are memory-bound and cost next to nothing.

    DeepSeek-V3: 1,536 x 128 x 192 + 512 x 128 x 256 = 54.5M per layer.

    Raises
    ------
    ValueError
        for a model without latent attention or a gated MLP.
    """
    as_config(cfg)
    _check_recipe(cfg)
    q_in = cfg.q_lora_rank or cfg.hidden
    return (q_in * cfg.heads * cfg.head_dim
            + cfg.kv_lora_rank * cfg.heads * (cfg.qk_nope_head_dim + cfg.v_head_dim))


def op_recomputed_products(cfg: TransformerConfig) -> dict[str, float]:
    """Share of each of a block's linear layers that torchtitan's selective op
    checkpointing runs forward again in the backward pass (:data:`TORCHTITAN_OP_RECIPE`).

    The block's matrix products are counted in the order they run and every second one is
    recomputed: q, **k**, v, **o**, then a gated MLP's gate, **up**, down (a plain MLP's
    up, **down**). Returned per linear layer of the block, as the planner groups them:
    ``"qkv"`` (the share of the fused q, k, v projection that is k's), ``"o"``,
    ``"mlp in"`` (gate and up together: half; a plain MLP's up: none) and ``"mlp out"``.
    A mixture-of-experts block's experts run as grouped products, which the policy does
    not count: only its attention products are recomputed.

    Llama 3 8B: k is 1,024 of the 6,144 q, k, v columns (1/6), o all of it, the up
    projection half of the gate and up pair: 36.5 % of the block's forward product FLOPs.
    """
    as_config(cfg)
    qkv = cfg.q_dim + 2 * cfg.kv_dim
    shares = {"qkv": cfg.kv_dim / qkv, "o": 1.0, "mlp in": 0.0, "mlp out": 0.0}
    if not cfg.moe:
        shares["mlp in" if cfg.gated_mlp else "mlp out"] = 0.5 if cfg.gated_mlp else 1.0
    return shares


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
    if cfg.indexer_topk:
        out.update(indexer_tensors(cfg, tokens=tokens, seq_len=s, bytes_per_value=val))


def indexer_tensors(cfg: TransformerConfig, *, tokens: int, seq_len: int,
                    bytes_per_value: int = 2) -> dict[str, int]:
    """Bytes a DeepSeek Sparse Attention indexer keeps for backward in one layer, for
    ``tokens`` queries of sequences of ``seq_len`` tokens (one GPU's share); empty without
    a top-k.

    Per query token, with ``H_I`` indexer heads of ``d_I`` and ``k = min(seq_len, topk)``
    picked keys: its query (``H_I * d_I`` values), its key (``d_I``), its FP32 head weights
    (``H_I``), the picked keys' int32 indices (``k``, which the sparse attention's backward
    reads too; FlashMLA's sparse kernels take int32 indices) and the indexer loss's target
    over them (``k`` FP32 values): DeepSeek-V3.2 at 4,096 tokens keeps 64 x 128 x 2 + 128 x
    2 + 64 x 4 + 2,048 x 8 = 33,280 bytes a token and layer, 8.3 GB over 61 layers.

    What is assumed, since DeepSeek's training code is not public: the indexer's input is
    detached and its loss is the KL divergence to the main attention's head-summed
    distribution over the selected set only (DeepSeek-V3.2-Exp report, DeepSeek-AI,
    29 September 2025, section 2.1, "Sparse Training Stage"), so its backward needs the
    scores over the ``k`` picked keys alone and recomputes them from the kept query, key
    and weights (as FlashAttention recomputes its scores); the target cannot be recomputed
    without running attention again, so it is kept. The full score matrix over all
    ``seq_len`` keys (``4 * seq_len`` bytes a query in FP32: 512 KB at 131,072 tokens,
    16 times the rest) is used for the top-k in the forward pass and not kept. The
    indexer's inputs, the block's normalised input and the query latent, are the
    attention's own, counted there. Its products are plain ``Linear`` layers in the
    reference code (``inference/model.py``), the same on every tensor-parallel GPU, so
    nothing here is split by ``tp``; context parallelism splits the queries (``tokens``).
    """
    as_config(cfg)
    n = v.positive_int("tokens", tokens)
    s = v.positive_int("seq_len", seq_len)
    val = v.positive_int("bytes_per_value", bytes_per_value)
    if not cfg.indexer_topk:
        return {}
    picked = min(s, cfg.indexer_topk)
    return {"indexer query": n * cfg.indexer_heads * cfg.indexer_head_dim * val,
            "indexer key": n * cfg.indexer_head_dim * val,
            "indexer head weights": n * cfg.indexer_heads * 4,
            "top-k indices": n * picked * 4,
            "indexer target": n * picked * 4}


def _mlp(cfg: TransformerConfig, out: dict[str, int], split, width: int, label: str,  # noqa: ANN001
         copies: int = 1, *, unfused: bool = False) -> None:
    if cfg.gated_mlp:
        names = ("gate projection", "up projection", "down projection input")
        if unfused:  # autograd also keeps the SiLU (or GELU) output of the gate
            names += ("activation output",)
    else:
        names = ("activation input", "activation output")
    for name in names:
        key = f"{label} {name}"
        out[key] = out.get(key, 0) + copies * split(width)


def _moe(cfg: TransformerConfig, out: dict[str, int], whole, split,  # noqa: ANN001
         unfused: bool = False) -> None:
    k, h = cfg.experts_per_token, cfg.hidden
    out["router probabilities"] = whole(cfg.experts, 4)  # FP32
    out["routed token copies"] = k * whole(h)
    _mlp(cfg, out, split, cfg.expert_ffn, "expert", copies=k,  # type: ignore[arg-type]
         unfused=unfused)
    out["expert outputs"] = k * whole(h)
    if cfg.shared_experts:
        _mlp(cfg, out, split, cfg.shared_expert_ffn, "shared expert",  # type: ignore[arg-type]
             copies=cfg.shared_experts, unfused=unfused)


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
