"""Exact parameter counts: total, by part, active per token, and the checkpoint's.

Per layer, with ``q = heads*head_dim``, ``kv = kv_heads*head_dim`` and width ``d``:

* **attention** ``d*q + 2*d*kv + q*d``, plus biases (q, k, v and/or the output) and one
  sink logit per head (gpt-oss). Latent attention (DeepSeek-V2/V3, with ``c`` the KV rank
  and ``c_q`` the query rank, ``r``/``n``/``v`` the rope, no-rope and value head sizes)
  replaces it by ``d*c_q + c_q*a*(n+r)`` (or ``d*a*(n+r)`` without query compression)
  ``+ d*(c+r) + c*a*(n+v) + a*v*d``;
* **MLP** ``2*d*f`` or ``3*d*f`` (gated) plus biases; a mixture-of-experts layer has a
  router ``d*E`` (+ ``E`` biases), ``E`` routed experts of width ``f_e``, its shared
  experts and, in Qwen2-MoE, a ``d -> 1`` gate on the shared expert;
* **norms** ``norms_per_layer`` of ``2d`` (LayerNorm) or ``d`` (RMSNorm), plus the q/k
  norms and latent attention's two latent norms;

then a final norm (and BLOOM's norm after the embedding), the embeddings and, when untied,
an output matrix ``V*d`` (plus a bias of ``V`` in Phi-2 and GPT-J). A mixture-of-experts
model has ``(L - dense_layers) // moe_layer_step`` expert layers and dense MLPs in the
others (Llama 4 Maverick: 24 of 48). OPT's narrow embedding (width ``e``) adds the
projections ``2*e*d`` and makes the embedding ``V*e``. :func:`param_count` equals each
model's own count to the parameter (``llama-2-7b``: 6,738,415,616; ``deepseek-v3``:
671,026,419,200).

Taught in: ``notebooks/memory_what_fits.ipynb`` and ``notebooks/flops_and_scaling.ipynb``.
"""

from __future__ import annotations

from gpulesson import _validate as v
from gpulesson.transformer.config import TransformerConfig, as_config

__all__ = [
    "active_params",
    "checkpoint_params",
    "embedding_params",
    "expert_params",
    "indexer_params",
    "moe_breakdown",
    "non_embedding_params",
    "param_breakdown",
    "param_count",
]


def _norm_size(cfg: TransformerConfig, width: int) -> int:
    """Parameters of one norm over ``width`` channels: LayerNorm a weight and a bias,
    RMSNorm and a LayerNorm without bias a weight, a non-parametric LayerNorm none."""
    return {"layernorm": 2, "nonparametric": 0}.get(cfg.norm, 1) * width


def _attention(cfg: TransformerConfig) -> int:
    """One layer's attention weights, biases and sinks (norms excluded)."""
    d, a = cfg.hidden, cfg.heads
    if cfg.latent_attention:
        qk = cfg.head_dim  # nope + rope
        if cfg.q_lora_rank:
            q = d * cfg.q_lora_rank + cfg.q_lora_rank * a * qk
        else:
            q = d * a * qk
        kv = (d * (cfg.kv_lora_rank + cfg.qk_rope_head_dim)
              + cfg.kv_lora_rank * a * (cfg.qk_nope_head_dim + cfg.v_head_dim))
        weights = q + kv + cfg.o_dim * d + indexer_params(cfg)
        biases = 0
    else:
        weights = d * cfg.q_dim + d * cfg.kv_dim + d * cfg.v_dim + cfg.o_dim * d
        if cfg.attn_output_gate:
            weights += d * cfg.q_dim  # q_proj also yields the output gate
        biases = 0
        if cfg.linear_bias or cfg.qkv_bias:
            biases += cfg.q_dim + cfg.kv_dim + cfg.v_dim
        if cfg.linear_bias or cfg.attn_out_bias:
            biases += d
    return weights + biases + (a if cfg.attention_sinks else 0)


def indexer_params(cfg: TransformerConfig) -> int:
    """One layer's sparse-attention indexer (DeepSeek-V3.2): ``wq_b`` from the query
    latent, ``wk`` and its LayerNorm (weight and bias), ``weights_proj``; 0 without."""
    h, dim = cfg.indexer_heads, cfg.indexer_head_dim
    if not h:
        return 0
    return cfg.q_lora_rank * h * dim + cfg.hidden * dim + 2 * dim + cfg.hidden * h


def _linear_mixer(cfg: TransformerConfig) -> int:
    """One Gated DeltaNet layer's weights (Qwen3-Next; its gated output norm excluded).

    With ``k`` and ``v`` the key and value widths (heads x head size) and ``h`` the value
    heads: ``in_proj_qkvz`` ``d x (2k + 2v)`` (queries, keys, values, output gate),
    ``in_proj_ba`` ``d x 2h`` (the delta rule's beta and decay inputs), a depthwise causal
    convolution over the ``2k + v`` query, key and value channels (``kernel`` weights
    each, no bias), ``dt_bias`` and ``A_log`` (``h`` each) and ``out_proj`` ``v x d``.
    """
    d = cfg.hidden
    k = cfg.linear_key_heads * cfg.linear_key_head_dim
    val = cfg.linear_value_heads * cfg.linear_value_head_dim
    h = cfg.linear_value_heads
    return (d * (2 * k + 2 * val) + d * 2 * h + (2 * k + val) * cfg.linear_conv_kernel
            + 2 * h + val * d)


def _mixers(cfg: TransformerConfig) -> int:
    """All layers' token mixers: attention in the attention layers, Gated DeltaNet in the
    linear ones."""
    attention = cfg.layers - cfg.recurrent_layers
    return attention * _attention(cfg) + cfg.recurrent_layers * _linear_mixer(cfg)


def _qk_norms(cfg: TransformerConfig) -> int:
    if cfg.qk_norm == "head":
        return 2 * _norm_size(cfg, cfg.head_dim)  # type: ignore[arg-type]
    if cfg.qk_norm == "full":
        return _norm_size(cfg, cfg.q_dim) + _norm_size(cfg, cfg.kv_dim)
    return 0


def _all_layer_norms(cfg: TransformerConfig) -> int:
    """Every layer's norms: q/k norms only in attention layers, and a linear layer's
    gated output norm (one weight per value-head channel, shared by the heads)."""
    recurrent = cfg.recurrent_layers
    return (cfg.layers * _layer_norms(cfg) - recurrent * _qk_norms(cfg)
            + recurrent * _norm_size(cfg, cfg.linear_value_head_dim))


def _layer_norms(cfg: TransformerConfig) -> int:
    """One attention layer's norms: the block's, the q/k norms and the latent norms."""
    total = cfg.norms_per_layer * _norm_size(cfg, cfg.hidden)
    total += _qk_norms(cfg)
    if cfg.latent_attention:
        total += _norm_size(cfg, cfg.kv_lora_rank)
        if cfg.q_lora_rank:
            total += _norm_size(cfg, cfg.q_lora_rank)
    return total


def _mlp(cfg: TransformerConfig, width: int) -> int:
    """One MLP (or expert) of inner width ``width``, with its biases."""
    d = cfg.hidden
    matrices = 3 if cfg.gated_mlp else 2
    total = matrices * d * width
    if cfg.linear_bias or cfg.mlp_bias:
        total += (matrices - 1) * width + d
    return total


def expert_params(cfg: TransformerConfig) -> int:
    """Parameters of one routed expert (an MLP of width ``expert_ffn``); 0 for dense."""
    cfg = as_config(cfg)
    return _mlp(cfg, cfg.expert_ffn) if cfg.moe else 0  # type: ignore[arg-type]


def moe_breakdown(cfg: TransformerConfig) -> dict[str, int]:
    """The MLP parameters of all layers by kind (they sum to ``param_breakdown()['mlp']``).

    Returns
    -------
    dict[str, int]
        ``dense`` (the MLPs of dense layers), ``router`` (router weights and biases),
        ``routed_experts`` (every routed expert of every layer), ``shared_experts`` (and
        their gate). A dense model has everything in ``dense``.
    """
    cfg = as_config(cfg)
    dense_layers = cfg.layers - cfg.moe_layers
    out = {"dense": dense_layers * _mlp(cfg, cfg.ffn), "router": 0,  # type: ignore[arg-type]
           "routed_experts": 0, "shared_experts": 0}
    if cfg.moe:
        n = cfg.moe_layers
        router = cfg.hidden * cfg.experts + (cfg.experts if cfg.router_bias else 0)
        shared = cfg.shared_experts * _mlp(cfg, cfg.shared_expert_ffn)  # type: ignore[arg-type]
        if cfg.shared_expert_gate:
            shared += cfg.hidden
        out["router"] = n * router
        out["routed_experts"] = n * cfg.experts * expert_params(cfg)
        out["shared_experts"] = n * shared
    return out


def param_breakdown(cfg: TransformerConfig) -> dict[str, int]:
    """Exact parameter count by part.

    Returns
    -------
    dict[str, int]
        ``embedding`` (token + learned position embeddings), ``attention`` (the q, k, v
        and output projections with their biases, latent projections and sinks, all
        layers; a linear-attention layer's Gated DeltaNet), ``mlp`` (all layers' MLPs, or
        routers and experts), ``norm`` (every norm, including the q/k norms, the final one
        and one after the embedding), ``lm_head`` (0 when tied, but for a bias). Sums to
        :func:`param_count`. OPT's projections between a narrow embedding and the model
        count as ``embedding``.
    """
    cfg = as_config(cfg)
    norm = _all_layer_norms(cfg)
    if cfg.final_norm:
        norm += _norm_size(cfg, cfg.hidden)
    if cfg.embedding_norm:
        norm += _norm_size(cfg, cfg.hidden)
    head = 0 if cfg.tied_embeddings else cfg.vocab * cfg.embedding_dim  # type: ignore[operator]
    return {
        "embedding": embedding_params(cfg),
        "attention": _mixers(cfg),
        "mlp": sum(moe_breakdown(cfg).values()),
        "norm": norm,
        "lm_head": head + (cfg.vocab if cfg.lm_head_bias else 0),
    }


def param_count(cfg: TransformerConfig) -> int:
    """Exact total number of parameters (each tied matrix counted once).

    For a mixture-of-experts model this is every expert: what memory must hold.
    DeepSeek-V3's checkpoint also stores a multi-token-prediction module that is not part
    of the model's published count; :func:`checkpoint_params` adds it.
    """
    return sum(param_breakdown(cfg).values())


def embedding_params(cfg: TransformerConfig) -> int:
    """Token embedding ``V*d`` plus learned position embedding ``P*d``.

    With an embedding narrower than the model (OPT-350m: ``e`` = 512, ``d`` = 1,024) the
    token embedding is ``V*e`` and the projections in and out add ``2*e*d``.
    """
    cfg = as_config(cfg)
    e, d = cfg.embedding_dim, cfg.hidden
    projections = 0 if e == d else 2 * e * d  # type: ignore[operator]
    return cfg.vocab * e + cfg.max_positions * d + projections  # type: ignore[operator]


def non_embedding_params(cfg: TransformerConfig) -> int:
    """Parameters without the vocabulary and position matrices (Kaplan et al. 2020's N).

    Excludes the token embedding, a learned position embedding and, when untied, the
    output (unembedding) matrix, as the Qwen2.5 report does for its "non-embedding
    parameters" (7B: 6.53B). Kaplan et al.'s approximation is ``12 * layers * hidden^2``.
    """
    return param_count(cfg) - embedding_params(cfg) - param_breakdown(cfg)["lm_head"]


def active_params(cfg: TransformerConfig, *, input_embedding: bool = True) -> int:
    """Parameters one token's forward pass uses: the total minus the routed experts it skips.

    ``param_count - moe_layers * (experts - experts_per_token) * expert_params``; equal to
    :func:`param_count` for a dense model. Mixtral 8x7B: 12.9B of 46.7B (Jiang et al. 2024);
    Qwen3-30B-A3B: 3.3B of 30.5B.

    Parameters
    ----------
    cfg : TransformerConfig
        The model.
    input_embedding : bool
        Count the input embedding lookup (default). ``False`` leaves out the rows that a
        token only looks up and never multiplies: the learned position embedding and, when
        untied, the token embedding. OpenAI states active parameters this way:
        gpt-oss-120b's 5.13B and gpt-oss-20b's 3.61B (OpenAI 2025, Table 1). DeepSeek-V3's
        "37B activated" (DeepSeek-AI 2024, section 1) fits it (36.6B; 37.6B with the input
        embedding), though the report does not say what it counts.

    Notes
    -----
    Training and inference FLOPs per token use the active parameters; memory holds all of
    them (:func:`param_count`).
    """
    cfg = as_config(cfg)
    if not isinstance(input_embedding, bool):
        raise TypeError(f"input_embedding must be True or False, got {input_embedding!r}")
    skipped = cfg.moe_layers * (cfg.experts - cfg.experts_per_token) * expert_params(cfg)
    total = param_count(cfg) - skipped
    if not input_embedding:
        total -= cfg.max_positions * cfg.hidden
        if not cfg.tied_embeddings:
            total -= cfg.vocab * cfg.embedding_dim  # type: ignore[operator]
    return total


def _mtp_module(cfg: TransformerConfig) -> int:
    """One DeepSeek-V3 multi-token-prediction module as its checkpoint stores it.

    Its own copies of the embedding and the output head (``2*V*d``), two input norms and
    the head's norm, the ``2d -> d`` projection ``eh_proj`` and one decoder layer like the
    model's last (DeepSeek-AI 2024, section 2.2 and Figure 3). Qwen3-Next's module
    (``mtp_own_embeddings`` False) shares the model's embedding and head and its layer
    has full attention, as the model's last layer does.
    """
    d = cfg.hidden
    last = _attention(cfg) + _layer_norms(cfg)
    if cfg.moe:
        per_layer = moe_breakdown(cfg)
        last += sum(per_layer[k] for k in ("router", "routed_experts", "shared_experts")
                    ) // cfg.moe_layers
    else:
        last += _mlp(cfg, cfg.ffn)  # type: ignore[arg-type]
    own = 2 * cfg.vocab * d if cfg.mtp_own_embeddings else 0
    return own + 3 * _norm_size(cfg, d) + 2 * d * d + last


def checkpoint_params(cfg: TransformerConfig) -> int:
    """Parameters the released checkpoint stores: :func:`param_count` plus the
    multi-token-prediction modules (``mtp_layers``) some models ship for speculative
    decoding. DeepSeek-V3: 671.03B + 13.46B = 684.49B, the BF16 and FP8 tensors of its
    safetensors; the model card's "685B" (the Hub's 684.53B) also counts the FP32 block
    scales of the FP8 weights. Equal to :func:`param_count` when ``mtp_layers == 0``.
    """
    cfg = as_config(cfg)
    return param_count(cfg) + cfg.mtp_layers * _mtp_module(cfg)


v.guard_module(globals())
