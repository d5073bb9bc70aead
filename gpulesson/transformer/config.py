"""The shape of a decoder-only transformer: :class:`TransformerConfig`.

One frozen dataclass describes every model the course counts, from GPT-2 to the
mixture-of-experts and latent-attention models of 2025-26. Its defaults are GPT-2's
(learned positions, LayerNorm, biases everywhere, a 4x MLP, tied embeddings, dropout);
each later idea is one field whose default leaves it out:

* **attention**: grouped-query heads (``kv_heads``), an explicit ``head_dim``, biases on
  q/k/v and on the output projection, norms on the queries and keys (``qk_norm``),
  attention sinks, sliding-window layers and their pattern, chunked local attention
  (Llama 4) and its pattern, and multi-head latent attention (``kv_lora_rank`` ...),
  where the KV cache holds a compressed latent;
* **the MLP**: gated (SwiGLU/GeGLU) or plain, and mixture-of-experts (routed experts,
  experts per token, shared experts, the expert width, leading dense layers, a router
  bias, a shared-expert gate), and MoE layers interleaved with dense ones (Llama 4
  Maverick: every second layer);
* **norms**: LayerNorm (with or without bias, or without any parameter, as in OLMo 1) or
  RMSNorm, how many per layer (Gemma 2 has four, Falcon-7B one), a norm after the
  embedding (BLOOM), none before the head (OPT-350m);
* **the ends**: a bias on the output layer (Phi-2, GPT-J), an embedding narrower than the
  model with projections in and out (OPT's ``word_embed_proj_dim``);
* **training**: whether dropout is applied (it changes the activations kept, not the
  parameters);
* **linear attention** (hybrid models, Qwen3-Next): most layers replace attention by a
  Gated DeltaNet, whose cache per sequence is a fixed-size state (a short-convolution
  window and a ``value_head x key_head`` matrix per head) instead of keys and values that
  grow with the context; every ``full_attention_interval``-th layer keeps full attention.

Taught in: ``notebooks/memory_what_fits.ipynb`` and ``notebooks/inference_and_kv_cache.ipynb``.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpulesson import _validate as v

__all__ = ["LINEAR_ATTENTION", "NORMS", "QK_NORMS", "TransformerConfig", "as_config"]

#: Norm kinds: LayerNorm has a weight and a bias per channel, RMSNorm a weight, a
#: LayerNorm without bias (Cohere's Command R, OLMo 2's ...) a weight, and a
#: non-parametric LayerNorm (OLMo 1) nothing at all.
NORMS = ("layernorm", "rmsnorm", "layernorm_no_bias", "nonparametric")
#: Query/key norms: none; one weight vector of ``head_dim`` shared by the heads (Qwen3,
#: Gemma 3); or one over the whole projection, ``heads*head_dim`` and
#: ``kv_heads*head_dim`` (OLMo 2).
QK_NORMS = ("none", "head", "full")
#: Linear-attention (recurrent) mixers: none, or Qwen3-Next's Gated DeltaNet.
LINEAR_ATTENTION = ("none", "gated_deltanet")


def _fail(field: str, value: object, allowed: str) -> ValueError:
    return ValueError(f"{field} must be {allowed}, got {value!r}")


@dataclass(frozen=True)
class TransformerConfig:
    """Shape of a decoder-only transformer. Validates itself on construction.

    Parameters
    ----------
    hidden : int
        Model width ``d`` (``hidden_size``, ``n_embd``).
    layers : int
        Number of transformer blocks ``L``.
    heads : int
        Number of query heads ``a``.
    vocab : int
        Vocabulary size ``V`` (rows of the embedding matrix).
    ffn : int, optional
        MLP inner width (``intermediate_size``); default ``4*hidden``. In a
        mixture-of-experts model, the width of the dense layers' MLP.
    kv_heads : int, optional
        Key/value heads (GQA/MQA); default ``heads``. Must divide ``heads``.
    head_dim : int, optional
        Size of one query/key head; default ``hidden // heads`` (``hidden`` must then
        divide), or ``qk_nope_head_dim + qk_rope_head_dim`` with latent attention.
    max_positions : int
        Rows of a learned position embedding; 0 for rotary/relative positions.
    tied_embeddings : bool
        Output layer shares the token-embedding matrix.
    gated_mlp : bool
        SwiGLU/GeGLU MLP with three matrices instead of two (experts too).
    norm : str
        ``"layernorm"`` (weight and bias), ``"rmsnorm"`` or ``"layernorm_no_bias"``
        (weight only) or ``"nonparametric"`` (no parameters: OLMo 1).
    linear_bias : bool
        A bias on every linear layer (GPT-2, BLOOM). Implies the next three.
    qkv_bias : bool
        Biases on the q, k and v projections (Qwen2).
    attn_out_bias : bool
        A bias on the attention output projection (gpt-oss; Llama's ``attention_bias``).
    mlp_bias : bool
        Biases on the MLP's (and every expert's) matrices (gpt-oss).
    glu_limit : float
        When > 0, a gated MLP clamps its two halves before the activation: the gate at
        most ``glu_limit``, the linear half within ``±glu_limit`` (gpt-oss: 7.0, Hugging
        Face's ``swiglu_limit``). No parameters; the training model counts the bytes of
        the clamps (:mod:`gpulesson.planning.perf_model`).
    norms_per_layer : int
        Norms in each block: 2 (before attention and MLP, or after them in OLMo 2), 4 in
        Gemma 2 and 3 (before and after each), 1 in Falcon-7B's parallel block.
    qk_norm : str
        ``"none"``, ``"head"`` or ``"full"`` (see :data:`QK_NORMS`).
    embedding_norm : bool
        A norm right after the token embedding (BLOOM's ``word_embeddings_layernorm``).
    final_norm : bool
        A norm before the output layer (default; OPT-350m, a post-norm model, has none).
    lm_head_bias : bool
        A bias of ``vocab`` values on the output layer (Phi-2, GPT-J).
    embedding_dim : int, optional
        Width of the token embedding when it differs from ``hidden`` (OPT-350m: 512 for
        a 1,024-wide model): the model then holds ``project_in`` (``e x d``) and
        ``project_out`` (``d x e``), and the (tied) output layer is ``V x e``. Default
        ``hidden``.
    parallel_attention : bool
        Attention and MLP read the same normalised input and are added together
        (GPT-J, Falcon); changes the activations, not the parameters.
    dropout : bool
        Training applies dropout (GPT-2: 0.1); modern models train without. Changes the
        activations kept for backward.
    context : int
        Longest sequence the model is configured for (``max_position_embeddings``);
        0 when not stated. A sliding window must fit in it.
    sliding_window : int
        Tokens a sliding-window (local) layer attends to; 0 for none.
    sliding_window_pattern : int
        With a window: 0 makes every layer local (Mistral 7B v0.1); ``p >= 2`` makes every
        ``p``-th layer global and the others local (Gemma 2 and gpt-oss: 2, alternating;
        Gemma 3: 6, five local then one global).
    attention_chunk : int
        Chunked local attention (Llama 4's ``attention_chunk_size``, 8,192) when > 0: the
        sequence is cut into fixed chunks of this many tokens and a chunked layer's query
        attends only to the earlier tokens of its own chunk. Unlike a sliding window,
        which holds the last ``window`` tokens once the sequence is past it, a chunked
        layer holds between 1 and ``attention_chunk`` tokens: at length ``L`` the
        ``(L - 1) % chunk + 1`` tokens of the current chunk (transformers
        ``Llama4TextAttention`` with a ``chunked_attention`` layer type; vLLM
        ``ChunkedLocalAttentionManager.get_num_skipped_tokens`` frees every block before
        the current chunk). 0 for none.
    attention_chunk_pattern : int
        With chunks: 0 makes every layer chunked; ``p >= 2`` makes every ``p``-th layer
        (``(i + 1) % p == 0``) global and the others chunked (Llama 4: 4, its NoPE layers
        3, 7, ... 47 global, from ``no_rope_layer_interval``).
    attention_sinks : bool
        A learned sink logit per head and layer (gpt-oss).
    kv_lora_rank : int
        Multi-head latent attention (DeepSeek-V2/V3) when > 0: the width of the
        compressed key/value latent that the KV cache holds.
    q_lora_rank : int
        Latent attention's query compression rank; 0 for a direct query projection.
    qk_rope_head_dim, qk_nope_head_dim, v_head_dim : int
        Latent attention's per-head sizes: the rotary part of a query/key (shared by the
        heads in the cache), the rest of it, and a value head.
    indexer_heads, indexer_head_dim : int
        DeepSeek Sparse Attention (DeepSeek-V3.2's ``index_n_heads`` and
        ``index_head_dim``, 64 and 128) when > 0: beside latent attention each layer has a
        lightning indexer that scores the earlier tokens and keeps the top
        ``index_topk`` for the attention. Its weights: a query projection from the query
        latent (``q_lora_rank x heads*head_dim``), one key head from the hidden state
        (``d x head_dim``) with a LayerNorm (weight and bias), and a head-weight
        projection (``d x heads``). Counted in the parameters, and its key cache (one
        FP8 key of ``head_dim`` a token and layer, with its scales) in the KV cache
        (:func:`gpulesson.inference.indexer_key_bytes`). 0 for none.
    indexer_topk : int
        The tokens each query attends to with DeepSeek Sparse Attention (``index_topk``,
        2,048 in DeepSeek-V3.2 and GLM-5): the indexer scores every cached token, the
        attention reads the latents of the top ``min(context, indexer_topk)`` only, so a
        decode step's KV reads (:func:`gpulesson.inference.decode_kv_read_bytes`) and
        attention FLOPs (:func:`gpulesson.flops.forward_attention_flops_per_token`) stop
        growing with the context but for the indexer's. Needs the indexer; 0 (default):
        every cached token is attended, as before.
    experts : int
        Routed experts per mixture-of-experts layer; 0 for a dense model.
    experts_per_token : int
        Routed experts each token uses (top-k), ``1 <= k <= experts``.
    shared_experts : int
        Experts every token uses besides the routed ones (DeepSeek, Qwen2-MoE).
    expert_ffn : int, optional
        Inner width of a routed expert (``moe_intermediate_size``); default ``ffn``.
    shared_expert_ffn : int, optional
        Inner width of a shared expert; default ``expert_ffn``.
    dense_layers : int
        Leading layers with a dense MLP instead of experts (``first_k_dense_replace``).
    moe_layer_step : int
        After the leading dense layers, every ``moe_layer_step``-th layer has experts and
        the others a dense MLP of width ``ffn`` (Llama 4 Maverick's
        ``interleave_moe_layer_step`` 2, Qwen-MoE's ``decoder_sparse_step``; layer ``i``
        counted from the first non-leading one has experts when ``(i + 1) % step == 0``).
        Default 1: experts in every layer.
    router_bias : bool
        A bias per expert in the router (gpt-oss; DeepSeek-V3's correction bias).
    shared_expert_gate : bool
        A ``d -> 1`` gate on the shared expert's output (Qwen2-MoE).
    mtp_layers : int
        Multi-token-prediction modules stored with the checkpoint but not part of the
        model's count (DeepSeek-V3: 1); see :func:`~gpulesson.transformer.checkpoint_params`.
    routing_groups, routing_group_topk : int
        Group-limited routing: the routed experts fall into ``routing_groups`` equal groups
        of consecutive experts, and each token picks its experts from
        ``routing_group_topk`` of them (Hugging Face's ``n_group`` and ``topk_group``,
        Megatron-LM's ``moe_router_num_groups`` and ``moe_router_group_topk``). DeepSeek-V3:
        8 and 4, each group the experts of one node of its 8-node expert parallelism, so a
        token reaches at most 4 nodes (DeepSeek-AI 2024, section 2.1.2). 0 and 0 (default):
        no limit.
    linear_attention : str
        ``"none"`` (every layer attends) or ``"gated_deltanet"`` (Qwen3-Next): the layers
        that are not full-attention layers run a Gated DeltaNet (Yang et al. 2024) and
        keep a fixed-size recurrent state per sequence, not a KV cache.
    full_attention_interval : int
        With linear attention, layer ``i`` has full attention when ``(i + 1)`` is a
        multiple of it, the others linear attention (Qwen3-Next: 4, three linear layers
        then one full).
    linear_key_heads, linear_value_heads, linear_key_head_dim, linear_value_head_dim : int
        The Gated DeltaNet's key and value heads and their sizes (Qwen3-Next: 16 and 32
        heads of 128); the value heads must be a multiple of the key heads.
    linear_conv_kernel : int
        Width of the causal short convolution over the queries, keys and values (4): the
        state keeps the last ``kernel - 1`` inputs.
    attn_output_gate : bool
        A sigmoid gate on the attention output from a query projection twice as wide
        (Qwen3-Next's gated attention: ``q_proj`` is ``d -> 2 * heads * head_dim``).
    mtp_own_embeddings : bool
        A multi-token-prediction module stores its own embedding and output head
        (DeepSeek-V3, default) or shares the model's (Qwen3-Next).
    name, source : str
        Label and provenance (config file or paper) for presets.

    Raises
    ------
    ValueError
        naming the field, the value and what is allowed (a ``kv_heads`` that does not
        divide ``heads``, ``experts_per_token`` above ``experts``, a window larger than
        the context ...).

    Notes
    -----
    After construction ``ffn``, ``kv_heads``, ``head_dim``, ``embedding_dim``,
    ``expert_ffn`` and ``shared_expert_ffn`` hold their resolved values.
    ``dataclasses.replace(cfg, hidden=...)`` keeps the old resolved ``ffn`` and
    ``embedding_dim``; pass them explicitly when changing
    ``hidden``.
    """

    hidden: int
    layers: int
    heads: int
    vocab: int
    ffn: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    max_positions: int = 0
    tied_embeddings: bool = True
    gated_mlp: bool = False
    norm: str = "layernorm"
    linear_bias: bool = True
    qkv_bias: bool = False
    attn_out_bias: bool = False
    mlp_bias: bool = False
    norms_per_layer: int = 2
    qk_norm: str = "none"
    embedding_norm: bool = False
    final_norm: bool = True
    lm_head_bias: bool = False
    embedding_dim: int | None = None
    parallel_attention: bool = False
    dropout: bool = True
    context: int = 0
    sliding_window: int = 0
    sliding_window_pattern: int = 0
    attention_chunk: int = 0
    attention_chunk_pattern: int = 0
    attention_sinks: bool = False
    kv_lora_rank: int = 0
    q_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    qk_nope_head_dim: int = 0
    v_head_dim: int = 0
    indexer_heads: int = 0
    indexer_head_dim: int = 0
    indexer_topk: int = 0
    experts: int = 0
    experts_per_token: int = 0
    shared_experts: int = 0
    expert_ffn: int | None = None
    shared_expert_ffn: int | None = None
    dense_layers: int = 0
    moe_layer_step: int = 1
    router_bias: bool = False
    shared_expert_gate: bool = False
    mtp_layers: int = 0
    routing_groups: int = 0
    routing_group_topk: int = 0
    linear_attention: str = "none"
    full_attention_interval: int = 0
    linear_key_heads: int = 0
    linear_value_heads: int = 0
    linear_key_head_dim: int = 0
    linear_value_head_dim: int = 0
    linear_conv_kernel: int = 0
    attn_output_gate: bool = False
    mtp_own_embeddings: bool = True
    glu_limit: float = 0.0
    name: str = ""
    source: str = ""

    def __post_init__(self) -> None:
        hidden = v.positive_int("hidden", self.hidden)
        layers = v.positive_int("layers", self.layers)
        heads = v.positive_int("heads", self.heads)
        v.positive_int("vocab", self.vocab)
        ffn = 4 * hidden if self.ffn is None else v.positive_int("ffn", self.ffn)
        v.nonneg_int("max_positions", self.max_positions)
        for flag in ("tied_embeddings", "gated_mlp", "linear_bias", "qkv_bias",
                     "attn_out_bias", "mlp_bias", "embedding_norm", "final_norm",
                     "lm_head_bias", "parallel_attention", "dropout", "attention_sinks",
                     "router_bias", "shared_expert_gate", "attn_output_gate",
                     "mtp_own_embeddings"):
            v.boolean(flag, getattr(self, flag))
        v.choice("norm", self.norm, NORMS)
        v.choice("qk_norm", self.qk_norm, QK_NORMS)
        v.nonneg_int("norms_per_layer", self.norms_per_layer)
        limit = v.nonneg_number("glu_limit", self.glu_limit)
        if limit and not self.gated_mlp:
            raise ValueError(f"glu_limit clamps the two halves of a gated MLP: it needs "
                             f"gated_mlp=True, got glu_limit={limit!r} with gated_mlp=False")
        object.__setattr__(self, "glu_limit", float(limit))
        if not isinstance(self.name, str) or not isinstance(self.source, str):
            raise TypeError("name and source must be strings")
        embedding_dim = hidden if self.embedding_dim is None else v.positive_int(
            "embedding_dim", self.embedding_dim)
        kv_heads, head_dim = self._attention(hidden, heads)
        self._window(layers)
        self._linear(layers)
        expert_ffn, shared_ffn = self._experts(layers, ffn)
        object.__setattr__(self, "ffn", ffn)
        object.__setattr__(self, "embedding_dim", embedding_dim)
        object.__setattr__(self, "kv_heads", kv_heads)
        object.__setattr__(self, "head_dim", head_dim)
        object.__setattr__(self, "expert_ffn", expert_ffn)
        object.__setattr__(self, "shared_expert_ffn", shared_ffn)

    def _attention(self, hidden: int, heads: int) -> tuple[int, int]:
        """Check the attention fields; return the resolved ``(kv_heads, head_dim)``."""
        kv_heads = heads if self.kv_heads is None else v.positive_int("kv_heads", self.kv_heads)
        if kv_heads > heads or heads % kv_heads:
            raise ValueError(f"kv_heads must divide heads ({heads}), got {kv_heads}")
        rank = v.nonneg_int("kv_lora_rank", self.kv_lora_rank)
        latent = {name: v.nonneg_int(name, getattr(self, name)) for name in
                  ("q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim")}
        if rank == 0:
            for name, value in latent.items():
                if value:
                    raise ValueError(f"{name} is a latent-attention size: it needs "
                                     f"kv_lora_rank > 0, got {name}={value} with kv_lora_rank=0")
        else:
            for name in ("qk_rope_head_dim", "v_head_dim"):
                if not latent[name]:
                    raise _fail(name, latent[name], "a positive integer with latent attention "
                                "(kv_lora_rank > 0)")
            if kv_heads != heads:
                raise ValueError(f"kv_heads must equal heads ({heads}) with latent attention: "
                                 f"every head gets its own keys and values, got {kv_heads}")
            for flag in ("linear_bias", "qkv_bias", "attn_out_bias"):
                if getattr(self, flag):
                    raise ValueError(f"{flag} must be False with latent attention (the "
                                     "latent projections have no biases), got True")
            qk = latent["qk_nope_head_dim"] + latent["qk_rope_head_dim"]
            if self.head_dim is not None and self.head_dim != qk:
                raise ValueError(f"head_dim must be qk_nope_head_dim + qk_rope_head_dim ({qk}) "
                                 f"with latent attention, got {self.head_dim!r}")
            self._indexer(latent["q_lora_rank"])
            return kv_heads, qk
        self._indexer(0)
        if self.head_dim is None:
            if hidden % heads:
                raise ValueError(f"hidden ({hidden}) must be divisible by heads ({heads}) "
                                 "when head_dim is not given")
            return kv_heads, hidden // heads
        return kv_heads, v.positive_int("head_dim", self.head_dim)

    def _indexer(self, q_rank: int) -> None:
        """Check the sparse-attention indexer: both sizes or neither, only beside
        latent attention with a query latent (``q_lora_rank > 0``), which it reads, and a
        top-k only with an indexer."""
        heads = v.nonneg_int("indexer_heads", self.indexer_heads)
        dim = v.nonneg_int("indexer_head_dim", self.indexer_head_dim)
        if bool(heads) != bool(dim):
            raise ValueError("indexer_heads and indexer_head_dim are set together, got "
                             f"indexer_heads={heads} and indexer_head_dim={dim}")
        if heads and not q_rank:
            raise ValueError("indexer_heads needs latent attention with a query latent "
                             "(kv_lora_rank > 0 and q_lora_rank > 0), which the indexer "
                             f"reads; got indexer_heads={heads}")
        topk = v.nonneg_int("indexer_topk", self.indexer_topk)
        if topk and not heads:
            raise ValueError("indexer_topk needs the indexer that picks the tokens "
                             f"(indexer_heads > 0), got indexer_topk={topk}")
        if topk and self.sliding_window:
            raise ValueError("indexer_topk cannot be combined with a sliding window here (no "
                             "released model does)")

    def _window(self, layers: int) -> None:
        context = v.nonneg_int("context", self.context)
        window = v.nonneg_int("sliding_window", self.sliding_window)
        pattern = v.nonneg_int("sliding_window_pattern", self.sliding_window_pattern)
        if context and window > context:
            raise ValueError(f"sliding_window must be at most the context ({context} tokens), "
                             f"got {window}")
        if pattern == 1 or pattern > max(layers, 1):
            raise _fail("sliding_window_pattern", pattern,
                        f"0 (every layer local) or between 2 and layers ({layers})")
        if pattern and not window:
            raise ValueError(f"sliding_window_pattern ({pattern}) needs a sliding_window > 0")
        chunk = v.nonneg_int("attention_chunk", self.attention_chunk)
        chunk_pattern = v.nonneg_int("attention_chunk_pattern", self.attention_chunk_pattern)
        if chunk_pattern == 1 or chunk_pattern > max(layers, 1):
            raise _fail("attention_chunk_pattern", chunk_pattern,
                        f"0 (every layer chunked) or between 2 and layers ({layers})")
        if chunk_pattern and not chunk:
            raise ValueError(f"attention_chunk_pattern ({chunk_pattern}) needs an "
                             "attention_chunk > 0")
        if chunk and (window or self.kv_lora_rank):
            raise ValueError("attention_chunk cannot be combined with a sliding window or "
                             "latent attention here (no released model does; vLLM's "
                             "FullAttentionSpec.merge refuses chunks beside windows)")

    _LINEAR_SIZES = ("linear_key_heads", "linear_value_heads", "linear_key_head_dim",
                     "linear_value_head_dim", "linear_conv_kernel")

    def _linear(self, layers: int) -> None:
        """Check the linear-attention fields: all zero without it; with it, positive sizes,
        value heads a multiple of key heads, a full-attention interval from 2 to ``layers``
        and no sliding window or latent attention beside it."""
        kind = v.choice("linear_attention", self.linear_attention, LINEAR_ATTENTION)
        interval = v.nonneg_int("full_attention_interval", self.full_attention_interval)
        sizes = {name: v.nonneg_int(name, getattr(self, name)) for name in self._LINEAR_SIZES}
        if kind == "none":
            for name, value in (("full_attention_interval", interval), *sizes.items()):
                if value:
                    raise ValueError(f"{name} is a linear-attention size: it needs "
                                     f"linear_attention 'gated_deltanet', got {name}={value} "
                                     "with linear_attention 'none'")
            return
        if not 2 <= interval <= layers:
            raise _fail("full_attention_interval", interval,
                        f"between 2 and layers ({layers}) with linear attention, so that "
                        "some layer keeps full attention")
        for name, value in sizes.items():
            if not value:
                raise _fail(name, value, "a positive integer with linear attention")
        if sizes["linear_value_heads"] % sizes["linear_key_heads"]:
            raise ValueError(f"linear_value_heads ({sizes['linear_value_heads']}) must be a "
                             f"multiple of linear_key_heads ({sizes['linear_key_heads']})")
        if self.sliding_window or self.kv_lora_rank or self.attention_chunk:
            raise ValueError("linear attention cannot be combined with a sliding window, "
                             "chunked attention or latent attention here (no released "
                             "model does)")

    def _experts(self, layers: int, ffn: int) -> tuple[int | None, int | None]:
        experts = v.nonneg_int("experts", self.experts)
        k = v.nonneg_int("experts_per_token", self.experts_per_token)
        shared = v.nonneg_int("shared_experts", self.shared_experts)
        dense = v.nonneg_int("dense_layers", self.dense_layers)
        step = v.positive_int("moe_layer_step", self.moe_layer_step)
        v.nonneg_int("mtp_layers", self.mtp_layers)
        groups = v.nonneg_int("routing_groups", self.routing_groups)
        group_topk = v.nonneg_int("routing_group_topk", self.routing_group_topk)
        if experts == 0:
            for name, value in (("experts_per_token", k), ("shared_experts", shared),
                                ("dense_layers", dense), ("routing_groups", groups),
                                ("routing_group_topk", group_topk)):
                if value:
                    raise ValueError(f"{name} needs routed experts (experts > 0), got "
                                     f"{name}={value} with experts=0")
            for name in ("expert_ffn", "shared_expert_ffn"):
                if getattr(self, name) is not None:
                    raise ValueError(f"{name} needs routed experts (experts > 0)")
            if self.router_bias or self.shared_expert_gate:
                raise ValueError("router_bias and shared_expert_gate need routed experts "
                                 "(experts > 0)")
            if step != 1:
                raise ValueError(f"moe_layer_step needs routed experts (experts > 0), got "
                                 f"moe_layer_step={step} with experts=0")
            return None, None
        if not 1 <= k <= experts:
            raise _fail("experts_per_token", k, f"between 1 and experts ({experts})")
        self._groups(experts, k, groups, group_topk)
        if dense >= layers:
            raise _fail("dense_layers", dense, f"below layers ({layers}) in a "
                        "mixture-of-experts model")
        if step > layers - dense:
            raise _fail("moe_layer_step", step, f"between 1 and the layers after the dense "
                        f"ones ({layers - dense}), so that some layer has experts")
        expert_ffn = ffn if self.expert_ffn is None else v.positive_int("expert_ffn",
                                                                        self.expert_ffn)
        if self.shared_expert_ffn is None:
            shared_ffn = expert_ffn
        else:
            shared_ffn = v.positive_int("shared_expert_ffn", self.shared_expert_ffn)
        if self.shared_expert_gate and not shared:
            raise ValueError("shared_expert_gate needs shared_experts > 0")
        return expert_ffn, shared_ffn

    @staticmethod
    def _groups(experts: int, k: int, groups: int, group_topk: int) -> None:
        """Check group-limited routing: groups that divide the experts, a group count to
        pick from them, and enough experts in the picked groups for ``k``."""
        if not groups:
            if group_topk:
                raise ValueError(f"routing_group_topk needs routing_groups > 0, got "
                                 f"routing_group_topk={group_topk} with routing_groups=0")
            return
        if experts % groups:
            raise _fail("routing_groups", groups, f"a divisor of experts ({experts}): the "
                        "groups are equal")
        if not 1 <= group_topk <= groups:
            raise _fail("routing_group_topk", group_topk,
                        f"between 1 and routing_groups ({groups})")
        if group_topk * (experts // groups) < k:
            raise ValueError(f"routing_group_topk ({group_topk}) groups of "
                             f"{experts // groups} experts cannot hold experts_per_token ({k})")

    # --- derived sizes ----------------------------------------------------------------

    @property
    def q_dim(self) -> int:
        """Width of the query projection, ``heads * head_dim``."""
        return self.heads * self.head_dim  # type: ignore[operator]

    @property
    def kv_dim(self) -> int:
        """Width of the key projection, ``kv_heads * head_dim``."""
        return self.kv_heads * self.head_dim  # type: ignore[operator]

    @property
    def value_head_dim(self) -> int:
        """Size of one value head: ``v_head_dim`` with latent attention, else ``head_dim``."""
        return self.v_head_dim if self.kv_lora_rank else self.head_dim  # type: ignore[return-value]

    @property
    def v_dim(self) -> int:
        """Width of the value projection (and of the attention output), all KV heads."""
        return self.kv_heads * self.value_head_dim  # type: ignore[operator]

    @property
    def o_dim(self) -> int:
        """Width of the attention output (the output projection's input), ``heads`` value
        heads."""
        return self.heads * self.value_head_dim

    @property
    def latent_attention(self) -> bool:
        """Whether the model uses multi-head latent attention (``kv_lora_rank > 0``)."""
        return self.kv_lora_rank > 0

    @property
    def moe(self) -> bool:
        """Whether the model has routed experts."""
        return self.experts > 0

    @property
    def moe_layers(self) -> int:
        """Layers whose MLP is a mixture of experts (0 for a dense model):
        ``(layers - dense_layers) // moe_layer_step``."""
        return (self.layers - self.dense_layers) // self.moe_layer_step if self.experts else 0

    def is_moe_layer(self, index: int) -> bool:
        """Whether layer ``index`` (0 to ``layers - 1``) has experts: it follows the
        ``dense_layers`` leading dense layers and ``(index - dense_layers + 1)`` is a
        multiple of ``moe_layer_step`` (Llama 4 Maverick: layers 1, 3, 5 ... 47)."""
        index = v.nonneg_int("index", index)
        if index >= self.layers:
            raise _fail("index", index, f"a layer from 0 to {self.layers - 1}")
        if not self.experts or index < self.dense_layers:
            return False
        return (index - self.dense_layers + 1) % self.moe_layer_step == 0

    @property
    def local_layers(self) -> int:
        """Layers with sliding-window attention (0 without a window)."""
        if not self.sliding_window:
            return 0
        p = self.sliding_window_pattern
        return self.layers - self.layers // p if p else self.layers

    @property
    def chunked_layers(self) -> int:
        """Layers with chunked local attention (0 without chunks): all, or all but every
        ``attention_chunk_pattern``-th (Llama 4: 36 of 48)."""
        if not self.attention_chunk:
            return 0
        p = self.attention_chunk_pattern
        return self.layers - self.layers // p if p else self.layers

    def is_chunked_layer(self, index: int) -> bool:
        """Whether layer ``index`` (0 to ``layers - 1``) attends within its chunk only:
        with chunks, all layers but those where ``index + 1`` is a multiple of
        ``attention_chunk_pattern`` (Llama 4: layer 3 is global, 0-2 chunked)."""
        index = v.nonneg_int("index", index)
        if index >= self.layers:
            raise _fail("index", index, f"a layer from 0 to {self.layers - 1}")
        if not self.attention_chunk:
            return False
        p = self.attention_chunk_pattern
        return not p or (index + 1) % p != 0

    @property
    def recurrent_layers(self) -> int:
        """Layers with linear attention, which keep a fixed-size state instead of a KV
        cache: all but every ``full_attention_interval``-th (0 without linear attention)."""
        if self.linear_attention == "none":
            return 0
        return self.layers - self.layers // self.full_attention_interval

    def is_recurrent_layer(self, index: int) -> bool:
        """Whether layer ``index`` (0 to ``layers - 1``) has linear attention: with it, all
        layers but those where ``index + 1`` is a multiple of ``full_attention_interval``."""
        index = v.nonneg_int("index", index)
        if index >= self.layers:
            raise _fail("index", index, f"a layer from 0 to {self.layers - 1}")
        if self.linear_attention == "none":
            return False
        return (index + 1) % self.full_attention_interval != 0

    @property
    def global_layers(self) -> int:
        """Layers that attend to the whole sequence (and keep its keys and values)."""
        return self.layers - self.local_layers - self.chunked_layers - self.recurrent_layers


def as_config(cfg: object) -> TransformerConfig:
    """``cfg`` itself when it is a :class:`TransformerConfig`; otherwise ``TypeError`` naming
    what it got. The one check every formula module runs on a ``cfg`` argument."""
    if not isinstance(cfg, TransformerConfig):
        raise TypeError(
            f"cfg must be a TransformerConfig (see transformer.preset), got {type(cfg).__name__}"
        )
    return cfg


v.guard_module(globals())
