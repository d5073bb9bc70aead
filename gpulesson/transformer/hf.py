"""Read a Hugging Face ``config.json`` into a :class:`TransformerConfig`.

:func:`from_hf_config` takes the parsed JSON (a mapping) or a path to the file. Each
supported ``model_type`` is one small reader that maps the family's key names onto the
architecture: the reader knows what the family's code does that the file does not say
(Qwen2 always has q/k/v biases, Gemma 2 has four norms per layer, gpt-oss has attention
sinks and biased experts, Phi-2 and GPT-J a biased output layer, OPT two extra position
rows, OLMo 1 norms without parameters ...), following the modelling files of Hugging Face
``transformers``. A multimodal config (Gemma 3, Llama 4, Qwen3-VL) is read through its
``text_config``, whose omitted keys take the defaults of the family's configuration class,
as ``transformers`` does (but ``tie_word_embeddings``, which Qwen3-VL states at the top
level); the vision tower is not counted.

Every value is checked (:mod:`gpulesson.transformer.hf_fields`): a size must be a JSON
integer, a flag ``true`` or ``false``, and each refusal names the key and the field. A file
the readers cannot represent exactly (an unknown ``model_type``, a missing size, experts
placed in a way no ``dense_layers``/``moe_layer_step`` describes) raises ``ValueError``
naming the key and what is supported, rather than returning a model whose counts would be
wrong.

Taught in: ``notebooks/memory_what_fits.ipynb`` (counting any model's parameters).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from gpulesson import _validate as v
from gpulesson.transformer.config import TransformerConfig
from gpulesson.transformer.hf_fields import Fields, load, located, shown

__all__ = ["SUPPORTED_MODEL_TYPES", "from_hf_config"]

Reader = Callable[[Fields], dict[str, Any]]

# ---------------------------------------------------------------------------------------
# Pieces the readers share


def _dropout(f: Fields, *keys: str) -> bool:
    return any(f.rate("dropout", key) > 0 for key in keys)


def _pattern_of(types: list[str], layers: int) -> int | None:
    """The ``sliding_window_pattern`` that ``layer_types`` spells out, or ``None`` when no
    layer is local; ``ValueError`` for a layout no pattern describes."""
    local = [t == "sliding_attention" for t in types]
    if not any(local):
        return None
    if all(local):
        return 0
    first_global = local.index(False) + 1
    expected = [(i + 1) % first_global != 0 for i in range(layers)]
    if first_global < 2 or local != expected:
        raise ValueError("config.json key 'layer_types' (TransformerConfig field "
                         "'sliding_window_pattern') must repeat one pattern (some local "
                         "layers, then one global layer); got a layout "
                         "sliding_window_pattern cannot describe")
    return first_global


def _window(f: Fields, layers: int, context: int, *, pattern: int = 0) -> dict[str, Any]:
    """Sliding window and pattern from ``sliding_window`` and ``layer_types`` (or a fixed
    pattern); a window that covers the whole context is no window at all."""
    window = f.int("sliding_window", "sliding_window", default=0, low=0)
    if not window or (context and window >= context):
        return {}
    types = f.str_list("sliding_window_pattern", "layer_types", length=layers)
    if types is not None:
        found = _pattern_of(types, layers)
        if found is None:
            return {}
        pattern = found
    return {"sliding_window": window, "sliding_window_pattern": pattern}


def _common(f: Fields, *, hidden: tuple[str, ...] = ("hidden_size",),
            layers: tuple[str, ...] = ("num_hidden_layers",),
            heads: tuple[str, ...] = ("num_attention_heads",),
            kv_heads: tuple[str, ...] = ("num_key_value_heads",)) -> dict[str, Any]:
    n_heads = f.int("heads", *heads)
    return {
        "hidden": f.int("hidden", *hidden),
        "layers": f.int("layers", *layers),
        "heads": n_heads,
        "vocab": f.int("vocab", "vocab_size"),
        "kv_heads": f.int("kv_heads", *kv_heads, default=n_heads),
        "context": f.int("context", "max_position_embeddings", "n_positions", default=0,
                         low=0),
    }


def _llama_like(f: Fields, *, tied: bool = False, layers: tuple[str, ...] = (
        "num_hidden_layers",)) -> dict[str, Any]:
    """Rotary positions, RMSNorm, a gated MLP, no biases unless the file says so."""
    out = _common(f, layers=layers)
    out.update(ffn=f.int("ffn", "intermediate_size"), norm="rmsnorm", gated_mlp=True,
               linear_bias=False, tied_embeddings=f.flag("tied_embeddings",
                                                         "tie_word_embeddings", tied),
               dropout=_dropout(f, "attention_dropout", "hidden_dropout", "resid_pdrop",
                                "embd_pdrop"))
    if f.has("head_dim"):
        out["head_dim"] = f.int("head_dim", "head_dim")
    bias = f.flag("qkv_bias", "attention_bias")
    out.update(qkv_bias=bias, attn_out_bias=bias, mlp_bias=f.flag("mlp_bias", "mlp_bias"))
    return out


def _experts(f: Fields, *, experts: str, width: str | None = None) -> dict[str, Any]:
    out = {"experts": f.int("experts", experts),
           "experts_per_token": f.int("experts_per_token", "num_experts_per_tok",
                                      "experts_per_token")}
    if width:
        out["expert_ffn"] = f.int("expert_ffn", width)
    return out


def _routing_groups(f: Fields, *, groups: int | None = None,
                    topk: int | None = None) -> dict[str, Any]:
    """Group-limited routing from ``n_group`` and ``topk_group`` (the defaults: the family's
    configuration class; ``None`` makes both keys required)."""
    return {"routing_groups": f.int("routing_groups", "n_group", default=groups),
            "routing_group_topk": f.int("routing_group_topk", "topk_group", default=topk)}


# ---------------------------------------------------------------------------------------
# Llama and its close relatives


def _llama(f: Fields) -> dict[str, Any]:
    return _llama_like(f)


def _mistral(f: Fields) -> dict[str, Any]:
    out = _llama_like(f)
    out.update(_window(f, out["layers"], out["context"]))
    return out


def _mixtral(f: Fields) -> dict[str, Any]:
    out = _mistral(f)
    out.update(_experts(f, experts="num_local_experts"))
    return out


def _granitemoe(f: Fields) -> dict[str, Any]:
    """Granite MoE: every layer's MLP is ``num_local_experts`` experts of width
    ``intermediate_size`` (no dense MLP); the multipliers it adds have no parameters."""
    out = _llama_like(f)
    out.update(_experts(f, experts="num_local_experts", width="intermediate_size"))
    return out


#: transformers ``Llama4TextConfig`` defaults for the chunking keys a file may omit.
_LLAMA4_CHUNK, _LLAMA4_NOPE_INTERVAL = 8192, 4


def _llama4_chunks(f: Fields, layers: int, context: int) -> dict[str, Any]:
    """Chunked local attention from ``attention_chunk_size`` (absent: 8,192; ``null``:
    none) and which layers it applies to: ``layer_types`` (``"chunked_attention"``) if
    given, else ``no_rope_layers`` (1: a RoPE layer, which is chunked; 0: a NoPE layer,
    global), else a NoPE layer every ``no_rope_layer_interval`` (4), as transformers'
    ``Llama4TextConfig`` fills them in. A chunk that covers the context is no chunk."""
    if "attention_chunk_size" in f.raw and f.raw["attention_chunk_size"] is None:
        return {}
    chunk = f.int("attention_chunk", "attention_chunk_size", default=_LLAMA4_CHUNK)
    if context and chunk >= context:
        return {}
    types = f.str_list("attention_chunk_pattern", "layer_types", length=layers)
    rope = f.int_list("attention_chunk_pattern", "no_rope_layers")
    if types is not None:
        chunked, key = [t == "chunked_attention" for t in types], "layer_types"
    elif rope:
        chunked, key = [bool(x) for x in rope[:layers]], "no_rope_layers"
    else:
        every = f.int("attention_chunk_pattern", "no_rope_layer_interval",
                      default=_LLAMA4_NOPE_INTERVAL)
        chunked, key = [(i + 1) % every != 0 for i in range(layers)], "no_rope_layer_interval"
    if len(chunked) < layers:
        raise ValueError(f"config.json key {key!r} (TransformerConfig field "
                         f"'attention_chunk_pattern') must name all {layers} layers")
    if not any(chunked):
        return {}
    pattern = 0 if all(chunked) else chunked.index(False) + 1
    if pattern == 1 or (pattern and chunked != [(i + 1) % pattern != 0
                                                for i in range(layers)]):
        raise ValueError(f"config.json key {key!r} (TransformerConfig field "
                         "'attention_chunk_pattern') must repeat one pattern (some chunked "
                         "layers, then one global layer)")
    return {"attention_chunk": chunk, "attention_chunk_pattern": pattern}


def _llama4_text(f: Fields) -> dict[str, Any]:
    """Llama 4: routed experts and one shared expert, both of width ``intermediate_size``,
    in every ``interleave_moe_layer_step``-th layer; the other layers have a dense MLP of
    ``intermediate_size_mlp``. Its q/k norm is a parameter-free L2 norm. Three of every
    four layers attend within chunks of ``attention_chunk_size`` tokens
    (:func:`_llama4_chunks`)."""
    out = _llama_like(f)
    out.update(_llama4_chunks(f, out["layers"], out["context"]))
    step = f.int("moe_layer_step", "interleave_moe_layer_step", default=1)
    layers = out["layers"]
    listed = f.int_list("moe_layer_step", "moe_layers")
    if listed and listed != list(range(step - 1, layers, step)):
        raise ValueError("config.json key 'moe_layers' (TransformerConfig field "
                         f"'moe_layer_step') must be every {step}-th layer "
                         f"({list(range(step - 1, layers, step))[:4]} ...), got "
                         f"{shown(listed)}")
    width = f.int("expert_ffn", "intermediate_size")
    out.update(_experts(f, experts="num_local_experts"), expert_ffn=width,
               shared_experts=1, shared_expert_ffn=width, moe_layer_step=step,
               ffn=f.int("ffn", "intermediate_size_mlp", default=width))
    return out


def _smollm3(f: Fields) -> dict[str, Any]:
    """SmolLM3: Llama's layers, tied by default (``SmolLM3Config``), with rotary positions
    left out of every ``no_rope_layer_interval``-th layer (NoPE layers have no parameters
    of their own). A sliding window, which transformers gives the NoPE layers when
    ``use_sliding_window`` is set, is refused: no released SmolLM3 uses one."""
    if f.flag("sliding_window", "use_sliding_window") and f.has("sliding_window"):
        raise ValueError("config.json key 'use_sliding_window' (TransformerConfig field "
                         "'sliding_window') must be false: the smollm3 reader supports "
                         "only full attention (every released SmolLM3 model)")
    return _llama_like(f, tied=True)


def _exaone(f: Fields) -> dict[str, Any]:
    """EXAONE 3.0 and 3.5 (``exaone``): Llama's layout under GPT-2-like key names
    (``num_layers``, ``activation_function``), tied unless the file says otherwise."""
    out = _common(f, layers=("num_layers", "num_hidden_layers"))
    out.update(ffn=f.int("ffn", "intermediate_size", default=4 * out["hidden"]),
               norm="rmsnorm", gated_mlp=True, linear_bias=False,
               tied_embeddings=f.flag("tied_embeddings", "tie_word_embeddings", True),
               dropout=_dropout(f, "attention_dropout", "embed_dropout"))
    if f.has("head_dim"):
        out["head_dim"] = f.int("head_dim", "head_dim")
    return out


def _exaone4(f: Fields) -> dict[str, Any]:
    """EXAONE 4: q/k norms per head, norms after attention and after the MLP, local and
    global layers (``sliding_window_pattern`` as a count or a string like ``"LLLG"``)."""
    out = _llama_like(f, tied=False)
    out["qk_norm"] = "head"
    raw = f.raw.get("sliding_window_pattern")
    pattern = 0
    if isinstance(raw, str) and raw and set(raw) <= {"L", "G"} and len(raw) <= 100:
        if raw.count("G") != 1 or not raw.endswith("G"):
            raise ValueError("config.json key 'sliding_window_pattern' (TransformerConfig "
                             "field 'sliding_window_pattern') must be local layers then one "
                             f"global one ('LLLG'), got {shown(raw)}")
        pattern = len(raw)
    elif raw is not None:
        pattern = f.int("sliding_window_pattern", "sliding_window_pattern", low=0)
    out.update(_window(f, out["layers"], out["context"], pattern=pattern))
    return out


# ---------------------------------------------------------------------------------------
# Qwen


def _qwen_windows(f: Fields) -> None:
    if f.flag("sliding_window", "use_sliding_window"):
        raise ValueError("config.json key 'use_sliding_window' (TransformerConfig field "
                         "'sliding_window') must be false: the qwen readers support only "
                         "full attention (every released Qwen2/Qwen3 model)")


def _qwen_moe_layout(f: Fields, layers: int) -> dict[str, Any]:
    """Experts in every ``decoder_sparse_step``-th layer, but those in ``mlp_only_layers``:
    leading dense layers are representable, others not."""
    step = f.int("moe_layer_step", "decoder_sparse_step", default=1)
    dense = f.int_list("dense_layers", "mlp_only_layers")
    if dense and (dense != list(range(len(dense))) or step != 1):
        raise ValueError("config.json key 'mlp_only_layers' (TransformerConfig field "
                         "'dense_layers') must list leading layers (0, 1, ...) with "
                         f"decoder_sparse_step 1, got {shown(dense)} with step {step}")
    return {"moe_layer_step": step, "dense_layers": len(dense)}


def _qwen2(f: Fields) -> dict[str, Any]:
    _qwen_windows(f)
    out = _llama_like(f)
    out.update(qkv_bias=True, attn_out_bias=False)  # Qwen2Attention: bias on q, k, v only
    return out


def _qwen2_moe(f: Fields) -> dict[str, Any]:
    out = _qwen2(f)
    out.update(_qwen_moe_layout(f, out["layers"]))
    out.update(_experts(f, experts="num_experts", width="moe_intermediate_size"))
    shared = f.int("shared_expert_ffn", "shared_expert_intermediate_size", default=0, low=0)
    if shared:
        out.update(shared_experts=1, shared_expert_ffn=shared, shared_expert_gate=True)
    return out


def _qwen3(f: Fields) -> dict[str, Any]:
    _qwen_windows(f)
    out = _llama_like(f)
    out["qk_norm"] = "head"
    return out


def _qwen3_moe(f: Fields) -> dict[str, Any]:
    out = _qwen3(f)
    out.update(_qwen_moe_layout(f, out["layers"]))
    out.update(_experts(f, experts="num_experts", width="moe_intermediate_size"))
    return out


def _qwen3_next(f: Fields) -> dict[str, Any]:
    """Qwen3-Next: Qwen3-MoE's experts with a gated shared expert, and a hybrid stack in
    which every ``full_attention_interval``-th layer has gated full attention (a query
    projection twice as wide, half of it a sigmoid gate on the output) and the others a
    Gated DeltaNet (``linear_*`` keys; omitted ones take ``Qwen3NextConfig``'s defaults,
    as ``transformers`` does). Its multi-token-prediction layer, when the checkpoint
    stores one, shares the model's embedding and head."""
    out = _qwen2_moe(f)
    out.update(qkv_bias=False, attn_out_bias=False, qk_norm="head", attn_output_gate=True,
               linear_attention="gated_deltanet", mtp_own_embeddings=False)
    layers = out["layers"]
    interval = f.int("full_attention_interval", "full_attention_interval", default=4)
    types = f.str_list("full_attention_interval", "layer_types", length=layers)
    if types is not None:
        full = [i for i, t in enumerate(types) if t == "full_attention"]
        if not full or any(t not in ("full_attention", "linear_attention") for t in types):
            raise ValueError("config.json key 'layer_types' (TransformerConfig field "
                             "'full_attention_interval') must hold 'linear_attention' and "
                             "'full_attention' layers, some of them full")
        interval = full[0] + 1
        if full != list(range(interval - 1, layers, interval)):
            raise ValueError("config.json key 'layer_types' (TransformerConfig field "
                             "'full_attention_interval') must repeat one pattern (linear "
                             "layers, then one full-attention layer); got full attention in "
                             f"layers {shown(full[:8])}")
    out.update(
        full_attention_interval=interval,
        linear_key_heads=f.int("linear_key_heads", "linear_num_key_heads", default=16),
        linear_value_heads=f.int("linear_value_heads", "linear_num_value_heads", default=32),
        linear_key_head_dim=f.int("linear_key_head_dim", "linear_key_head_dim", default=128),
        linear_value_head_dim=f.int("linear_value_head_dim", "linear_value_head_dim",
                                    default=128),
        linear_conv_kernel=f.int("linear_conv_kernel", "linear_conv_kernel_dim", default=4),
        mtp_layers=f.int("mtp_layers", "num_nextn_predict_layers", "mtp_num_hidden_layers",
                         default=0, low=0))
    return out


def _qwen(f: Fields) -> dict[str, Any]:
    """Qwen (1.0, ``trust_remote_code``): a fused biased ``c_attn``, an MLP whose two
    input matrices are each ``intermediate_size / 2`` wide, ``no_bias`` elsewhere."""
    out = _common(f)
    width = f.int("ffn", "intermediate_size")
    if width % 2:
        raise ValueError("config.json key 'intermediate_size' (TransformerConfig field "
                         f"'ffn') must be even in Qwen (two halves), got {shown(width)}")
    bias = not f.flag("linear_bias", "no_bias", True)
    out.update(ffn=width // 2, norm="rmsnorm", gated_mlp=True, linear_bias=False,
               qkv_bias=True, attn_out_bias=bias, mlp_bias=bias,
               tied_embeddings=f.flag("tied_embeddings", "tie_word_embeddings", False),
               dropout=_dropout(f, "attn_dropout_prob", "emb_dropout_prob"))
    return out


# ---------------------------------------------------------------------------------------
# Gemma, Phi, Cohere, OLMo


def _gemma(f: Fields) -> dict[str, Any]:
    return _llama_like(f, tied=True)  # GeGLU: three matrices, like SwiGLU


def _gemma2(f: Fields) -> dict[str, Any]:
    out = _llama_like(f, tied=True)
    out["norms_per_layer"] = 4  # before and after attention, before and after the MLP
    out.update(_window(f, out["layers"], out["context"], pattern=2))
    return out


#: Gemma3TextConfig's defaults (transformers), which a Gemma 3 ``text_config`` omits.
_GEMMA3_TEXT_DEFAULTS = {
    "vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216,
    "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4,
    "head_dim": 256, "max_position_embeddings": 131072, "sliding_window": 4096,
    "sliding_window_pattern": 6, "tie_word_embeddings": True,
}


def _gemma3_text(f: Fields) -> dict[str, Any]:
    out = _gemma2(f)
    out["qk_norm"] = "head"
    if not f.has("layer_types") and "sliding_window" in out:
        out["sliding_window_pattern"] = f.int("sliding_window_pattern",
                                              "sliding_window_pattern", default=6, low=0)
    return out


def _phi3(f: Fields) -> dict[str, Any]:
    out = _llama_like(f)  # fused qkv_proj and gate_up_proj: the same counts
    out.update(_window(f, out["layers"], out["context"]))
    return out


def _phi(f: Fields) -> dict[str, Any]:
    """Phi-1, 1.5 and 2: one LayerNorm per block feeding attention and the MLP in
    parallel, biases everywhere (the output layer too), a plain GELU MLP, rotary on
    ``partial_rotary_factor`` of each head (no parameters); optional per-head q/k
    LayerNorms."""
    out = _common(f)
    out.update(ffn=f.int("ffn", "intermediate_size"), norms_per_layer=1,
               parallel_attention=True, lm_head_bias=True,
               qk_norm="head" if f.flag("qk_norm", "qk_layernorm") else "none",
               tied_embeddings=f.flag("tied_embeddings", "tie_word_embeddings", False),
               dropout=_dropout(f, "resid_pdrop", "embd_pdrop", "attention_dropout"))
    return out


def _gptj(f: Fields) -> dict[str, Any]:
    """GPT-J: parallel attention and MLP after one LayerNorm, unbiased q/k/v/out
    projections, a biased MLP and output layer, rotary positions."""
    out = _common(f, hidden=("n_embd",), layers=("n_layer",), heads=("n_head",))
    out.update(ffn=f.int("ffn", "n_inner", default=4 * out["hidden"]), linear_bias=False,
               mlp_bias=True, norms_per_layer=1, parallel_attention=True,
               lm_head_bias=True,
               tied_embeddings=f.flag("tied_embeddings", "tie_word_embeddings", False),
               dropout=_dropout(f, "resid_pdrop", "embd_pdrop", "attn_pdrop"))
    return out


def _cohere(f: Fields) -> dict[str, Any]:
    """Command R / Aya (``cohere``): one LayerNorm without bias per block feeding
    attention and the MLP in parallel; optional q/k norms over (heads, head_dim)."""
    out = _llama_like(f, tied=True)
    out.update(norm="layernorm_no_bias", norms_per_layer=1, parallel_attention=True,
               qk_norm="full" if f.flag("qk_norm", "use_qk_norm") else "none")
    return out


def _olmo(f: Fields) -> dict[str, Any]:
    """OLMo 1 (``olmo``): LayerNorms without any parameter, SwiGLU, no biases."""
    out = _llama_like(f)
    out["norm"] = "nonparametric"
    return out


def _olmo2(f: Fields) -> dict[str, Any]:
    out = _llama_like(f)
    out["qk_norm"] = "full"  # q_norm over heads*head_dim, k_norm over kv_heads*head_dim
    return out  # two norms per layer, after attention and after the MLP


def _glm4_moe(f: Fields) -> dict[str, Any]:
    """GLM-4.5/4.6/4.7 (``glm4_moe``): grouped-query attention with biases on q, k and v
    (not the output), optional per-head q/k norms, DeepSeek-V3's expert layout (shared
    experts, leading dense layers, a router correction bias) and its multi-token-
    prediction layer, stored with its own embedding and head (:func:`checkpoint_params`)."""
    out = _llama_like(f)
    out.update(attn_out_bias=False,
               qk_norm="head" if f.flag("qk_norm", "use_qk_norm") else "none",
               **_experts(f, experts="n_routed_experts", width="moe_intermediate_size"),
               shared_experts=f.int("shared_experts", "n_shared_experts", default=0, low=0),
               dense_layers=f.int("dense_layers", "first_k_dense_replace", default=0, low=0),
               router_bias=True,
               mtp_layers=f.int("mtp_layers", "num_nextn_predict_layers", default=0, low=0),
               # its router is DeepSeek-V3's, groups included (Glm4MoeConfig: 1 and 1)
               **_routing_groups(f, groups=1, topk=1))
    return out


# ---------------------------------------------------------------------------------------
# Latent attention and the MoE models of 2025


def _deepseek(f: Fields, *, correction_bias: bool) -> dict[str, Any]:
    out = _llama_like(f)
    out.pop("head_dim", None)
    out.update(qkv_bias=False, attn_out_bias=False)
    freq = f.int("moe_layer_step", "moe_layer_freq", default=1)
    if freq != 1:
        raise ValueError("config.json key 'moe_layer_freq' (TransformerConfig field "
                         "'moe_layer_step') must be 1 (experts in every layer after the "
                         f"dense ones), got {shown(freq)}")
    out.update(
        kv_heads=out["heads"],
        kv_lora_rank=f.int("kv_lora_rank", "kv_lora_rank"),
        q_lora_rank=f.int("q_lora_rank", "q_lora_rank", default=0, low=0),
        qk_rope_head_dim=f.int("qk_rope_head_dim", "qk_rope_head_dim"),
        qk_nope_head_dim=f.int("qk_nope_head_dim", "qk_nope_head_dim"),
        v_head_dim=f.int("v_head_dim", "v_head_dim"),
        **_experts(f, experts="n_routed_experts", width="moe_intermediate_size"),
        shared_experts=f.int("shared_experts", "n_shared_experts", default=0, low=0),
        dense_layers=f.int("dense_layers", "first_k_dense_replace", default=0, low=0),
        router_bias=correction_bias,
        mtp_layers=f.int("mtp_layers", "num_nextn_predict_layers", default=0, low=0),
    )
    return out


def _deepseek_v2(f: Fields) -> dict[str, Any]:
    """DeepSeek-V2: its router reads ``n_group`` and ``topk_group`` only with
    ``topk_method`` ``"group_limited_greedy"`` (device-limited routing); ``"greedy"``
    (V2-Lite) picks from all experts."""
    out = _deepseek(f, correction_bias=False)
    if f.text("routing_groups", "topk_method", "greedy") == "group_limited_greedy":
        out.update(_routing_groups(f))
    return out


def _deepseek_v3(f: Fields) -> dict[str, Any]:
    """DeepSeek-V3: every method groups the experts (DeepseekV3Config: 8 groups, 4 picked:
    node-limited routing)."""
    # topk_method "noaux_tc": each MoE gate stores e_score_correction_bias, one per expert
    method = f.text("router_bias", "topk_method", "noaux_tc")
    return {**_deepseek(f, correction_bias=method == "noaux_tc"),
            **_routing_groups(f, groups=8, topk=4)}


def _deepseek_v32(f: Fields) -> dict[str, Any]:
    """DeepSeek-V3.2 (``deepseek_v32``): DeepSeek-V3 plus DeepSeek Sparse Attention, a
    lightning indexer in every layer (the multi-token-prediction layer too) of
    ``index_n_heads`` heads of ``index_head_dim`` (``DeepseekV32Config``: 64 and 128)
    that picks the ``index_topk`` tokens each query attends to (2,048 by default)."""
    return {**_deepseek_v3(f),
            "indexer_heads": f.int("indexer_heads", "index_n_heads", default=64),
            "indexer_head_dim": f.int("indexer_head_dim", "index_head_dim", default=128),
            "indexer_topk": f.int("indexer_topk", "index_topk", default=2048)}


def _glm_moe_dsa(f: Fields) -> dict[str, Any]:
    """GLM-5 (``glm_moe_dsa``): DeepSeek-V3.2's layers (latent attention with a sparse-
    attention indexer, shared and routed experts after leading dense layers) whose
    multi-token-prediction layer shares the model's embedding and output head (its
    checkpoint stores ``shared_head.norm`` but no ``embed_tokens`` or ``head``). Every
    layer has its own indexer; ``indexer_types`` naming any other kind (GLM-5.2 shares
    indexers between layers) is refused."""
    kinds = f.raw.get("indexer_types")
    if kinds is not None and (not isinstance(kinds, list) or any(k != "full" for k in kinds)):
        raise ValueError("config.json key 'indexer_types' (TransformerConfig field "
                         "'indexer_heads') must be 'full' for every layer: the glm_moe_dsa "
                         "reader counts one indexer per layer, got "
                         f"{shown(kinds)}")
    return {**_deepseek_v32(f), "mtp_own_embeddings": False}


def _minimax_m2(f: Fields) -> dict[str, Any]:
    """MiniMax-M2 (M2, M2.1, M2.5, M2.7): grouped-query attention with q/k RMSNorms over
    the whole projection (``qk_norm_type`` ``"per_layer"``; ``"per_head"``: one per head
    size), every layer's MLP ``num_local_experts`` experts of width
    ``intermediate_size`` (no dense MLP), a router correction bias per expert
    (``use_routing_bias``; transformers' ``MiniMaxM2Attention`` and
    ``MiniMaxM2SparseMoeBlock`` always have both). Its multi-token-prediction modules
    (``use_mtp``) are not in the published checkpoints; a shared expert or a
    linear-attention layer (``attn_type_list`` 0, MiniMax-M1's lightning attention) is
    refused."""
    out = _llama_like(f)
    kinds = f.int_list("linear_attention", "attn_type_list")
    if any(kind != 1 for kind in kinds):
        raise ValueError("config.json key 'attn_type_list' (TransformerConfig field "
                         "'linear_attention') must be 1 (softmax attention) for every "
                         "layer: the minimax_m2 reader has no lightning attention")
    if f.int("shared_expert_ffn", "shared_intermediate_size", default=0, low=0):
        raise ValueError("config.json key 'shared_intermediate_size' (TransformerConfig "
                         "field 'shared_expert_ffn') must be 0: no released MiniMax-M2 "
                         "has a shared expert")
    norm = f.text("qk_norm", "qk_norm_type", "per_layer")
    if norm not in ("per_layer", "per_head"):
        raise ValueError("config.json key 'qk_norm_type' (TransformerConfig field "
                         f"'qk_norm') must be 'per_layer' or 'per_head', got {shown(norm)}")
    out.update(_experts(f, experts="num_local_experts", width="intermediate_size"),
               router_bias=f.flag("router_bias", "use_routing_bias", True),
               qk_norm=("full" if norm == "per_layer" else "head")
               if f.flag("qk_norm", "use_qk_norm", True) else "none")
    return out


def _gpt_oss(f: Fields) -> dict[str, Any]:
    out = _llama_like(f)
    out.update(_experts(f, experts="num_local_experts"),
               mlp_bias=True, router_bias=True, attention_sinks=True,
               glu_limit=f.number("glu_limit", "swiglu_limit"))
    out.update(_window(f, out["layers"], out["context"], pattern=2))
    return out


# ---------------------------------------------------------------------------------------
# The GPT-2 lineage: learned positions, LayerNorm, biases


def _gpt2(f: Fields) -> dict[str, Any]:
    out = _common(f, hidden=("n_embd", "hidden_size"), layers=("n_layer", "num_hidden_layers"),
                  heads=("n_head", "num_attention_heads"))
    positions = f.int("max_positions", "n_positions")
    out.update(ffn=f.int("ffn", "n_inner", default=4 * out["hidden"]),
               max_positions=positions, context=positions,
               tied_embeddings=f.flag("tied_embeddings", "tie_word_embeddings", True),
               dropout=_dropout(f, "resid_pdrop", "attn_pdrop", "embd_pdrop"))
    return out


def _opt(f: Fields) -> dict[str, Any]:
    """OPT: learned positions with two extra rows (``OPTLearnedPositionalEmbedding``'s
    offset of 2), pre- or post-LayerNorm (``do_layer_norm_before``; a post-norm model has
    no final norm), an embedding of ``word_embed_proj_dim`` projected in and out when it
    differs from the model width."""
    out = _common(f)
    positions = f.int("max_positions", "max_position_embeddings")
    pre_norm = f.flag("final_norm", "do_layer_norm_before", True)
    removed = f.flag("final_norm", "_remove_final_layer_norm", False)
    affine = f.flag("norm", "layer_norm_elementwise_affine", True)
    out.update(ffn=f.int("ffn", "ffn_dim"), max_positions=positions + 2,
               embedding_dim=f.int("embedding_dim", "word_embed_proj_dim",
                                   default=out["hidden"]),
               linear_bias=f.flag("linear_bias", "enable_bias", True),
               norm="layernorm" if affine else "nonparametric",
               final_norm=pre_norm and not removed,
               tied_embeddings=f.flag("tied_embeddings", "tie_word_embeddings", True),
               dropout=_dropout(f, "dropout", "attention_dropout"))
    return out


def _gpt_neox(f: Fields) -> dict[str, Any]:
    """GPT-NeoX and Pythia: two LayerNorms per block (attention and MLP in parallel by
    default), biases on every projection (``attention_bias``), rotary positions, an
    untied output layer without bias."""
    out = _common(f)
    bias = f.flag("linear_bias", "attention_bias", True)
    out.update(ffn=f.int("ffn", "intermediate_size"), linear_bias=False, qkv_bias=bias,
               attn_out_bias=bias, mlp_bias=True,
               parallel_attention=f.flag("parallel_attention", "use_parallel_residual", True),
               tied_embeddings=f.flag("tied_embeddings", "tie_word_embeddings", False),
               dropout=_dropout(f, "attention_dropout", "hidden_dropout"))
    return out


def _starcoder2(f: Fields) -> dict[str, Any]:
    """StarCoder2: LayerNorm, a plain GELU MLP, biases everywhere (``use_bias``),
    grouped-query attention, rotary positions, a sliding window on every layer."""
    out = _common(f)
    out.update(ffn=f.int("ffn", "intermediate_size"),
               linear_bias=f.flag("linear_bias", "use_bias", True),
               tied_embeddings=f.flag("tied_embeddings", "tie_word_embeddings", True),
               dropout=_dropout(f, "attention_dropout", "residual_dropout",
                                "embedding_dropout"))
    out.update(_window(f, out["layers"], out["context"]))
    return out


def _falcon(f: Fields) -> dict[str, Any]:
    out = _common(f, layers=("num_hidden_layers", "n_layer"), kv_heads=("num_kv_heads",))
    new_arch = f.flag("parallel_attention", "new_decoder_architecture")
    if new_arch:
        out["kv_heads"] = f.int("kv_heads", "num_kv_heads")
        ln = f.int("norms_per_layer", "num_ln_in_parallel_attn", default=2)
        norms = 2 if ln == 2 else 1
    else:
        out["kv_heads"] = 1 if f.flag("kv_heads", "multi_query", True) else out["heads"]
        norms = 1 if f.flag("norms_per_layer", "parallel_attn", True) else 2
    parallel = new_arch or f.flag("parallel_attention", "parallel_attn", True)
    out.update(ffn=f.int("ffn", "ffn_hidden_size", default=4 * out["hidden"]),
               norms_per_layer=norms, linear_bias=f.flag("linear_bias", "bias"),
               parallel_attention=parallel,
               tied_embeddings=f.flag("tied_embeddings", "tie_word_embeddings", True),
               dropout=_dropout(f, "attention_dropout", "hidden_dropout"))
    return out


def _bloom(f: Fields) -> dict[str, Any]:
    out = _common(f, hidden=("hidden_size", "n_embed"), layers=("num_hidden_layers", "n_layer"),
                  heads=("num_attention_heads", "n_head"))
    out.update(embedding_norm=True,
               tied_embeddings=f.flag("tied_embeddings", "tie_word_embeddings", True),
               dropout=_dropout(f, "attention_dropout", "hidden_dropout"))
    return out


_READERS: dict[str, tuple[Reader, Mapping[str, Any]]] = {
    "bloom": (_bloom, {}),
    "cohere": (_cohere, {}),
    "deepseek_v2": (_deepseek_v2, {}),
    "deepseek_v3": (_deepseek_v3, {}),
    "deepseek_v32": (_deepseek_v32, {}),
    "exaone": (_exaone, {}),
    "exaone4": (_exaone4, {}),
    "falcon": (_falcon, {}),
    "gemma": (_gemma, {}),
    "gemma2": (_gemma2, {}),
    "gemma3_text": (_gemma3_text, _GEMMA3_TEXT_DEFAULTS),
    "glm4_moe": (_glm4_moe, {}),
    "glm_moe_dsa": (_glm_moe_dsa, {}),
    "gpt2": (_gpt2, {}),
    "gpt_neox": (_gpt_neox, {}),
    "gpt_oss": (_gpt_oss, {}),
    "gptj": (_gptj, {}),
    "granite": (_llama, {}),  # Llama's layout; its four multipliers have no parameters
    "granitemoe": (_granitemoe, {}),
    # Kimi K2: DeepSeek-V3's architecture and code under its own model_type
    "kimi_k2": (_deepseek_v3, {}),
    "llama": (_llama, {}),
    "llama4_text": (_llama4_text, {}),
    "minimax_m2": (_minimax_m2, {}),
    "mistral": (_mistral, {}),
    "mixtral": (_mixtral, {}),
    "olmo": (_olmo, {}),
    "olmo2": (_olmo2, {}),
    "opt": (_opt, {}),
    "phi": (_phi, {}),
    "phi3": (_phi3, {}),
    "qwen": (_qwen, {}),
    "qwen2": (_qwen2, {}),
    "qwen2_moe": (_qwen2_moe, {}),
    "qwen3": (_qwen3, {}),
    "qwen3_moe": (_qwen3_moe, {}),
    "qwen3_next": (_qwen3_next, {"intermediate_size": 5632, "head_dim": 256}),
    "qwen3_vl_text": (_qwen3, {}),  # Qwen3's layers; M-RoPE has no parameters
    "qwen3_vl_moe_text": (_qwen3_moe, {}),
    "smollm3": (_smollm3, {}),
    "starcoder2": (_starcoder2, {}),
}
#: Multimodal model types whose language model is their ``text_config``.
_MULTIMODAL = {"gemma3": "gemma3_text", "llama4": "llama4_text", "qwen3_vl": "qwen3_vl_text",
               "qwen3_vl_moe": "qwen3_vl_moe_text"}

#: Every ``model_type`` :func:`from_hf_config` reads.
SUPPORTED_MODEL_TYPES = tuple(sorted([*_READERS, *_MULTIMODAL]))

#: What every reader needs, for the message about an unknown type.
_NEEDED = ("hidden_size", "num_hidden_layers", "num_attention_heads",
           "num_key_value_heads", "intermediate_size", "vocab_size", "tie_word_embeddings")


def from_hf_config(config: Mapping[str, Any] | str | os.PathLike[str], *,
                   name: str = "", source: str = "") -> TransformerConfig:
    """The :class:`TransformerConfig` of a Hugging Face ``config.json``.

    Parameters
    ----------
    config : mapping or path
        The parsed JSON, or the path of the file (read up to 4 MiB).
    name, source : str
        Label and provenance to store in the result (default: the config's
        ``_name_or_path``, if any, and ``"config.json (model_type ...)"``).

    Returns
    -------
    TransformerConfig
        Whose :func:`~gpulesson.transformer.param_count` is the checkpoint's count: the
        tests compare it with published exact counts (safetensors index totals, model
        cards) for 53 real files of 33 model types, and with rounded figures for others.

    Raises
    ------
    ValueError
        for an unknown or missing ``model_type`` (the message lists
        :data:`SUPPORTED_MODEL_TYPES` and the keys a reader needs), a missing size, a
        value of the wrong kind or out of range (the message names the key, the
        :class:`TransformerConfig` field and the value), a layout the configuration
        cannot represent, or a file that is too large, not JSON or nested too deeply.
    TypeError
        when ``config`` is neither a mapping nor a path.

    Examples
    --------
    >>> from_hf_config({"model_type": "llama", "hidden_size": 4096, ...})  # doctest: +SKIP
    """
    for label, text in (("name", name), ("source", source)):
        if not isinstance(text, str):
            raise TypeError(f"{label} must be a string, got {type(text).__name__}")
    raw = load(config)
    model_type = raw.get("model_type")
    supported = ", ".join(SUPPORTED_MODEL_TYPES)
    if not isinstance(model_type, str) or not model_type:
        raise ValueError("config.json key 'model_type' must name the architecture, got "
                         f"{shown(model_type)}; supported model types: {supported}")
    top_name = raw.get("_name_or_path")
    if model_type in _MULTIMODAL:
        text = raw.get("text_config")
        if not isinstance(text, Mapping):
            raise ValueError(f"config.json of model_type {model_type!r} is missing "
                             "'text_config', which holds its language model")
        inner = text.get("model_type") or _MULTIMODAL[model_type]
        if "tie_word_embeddings" in raw and "tie_word_embeddings" not in text:
            # Qwen3-VL states the tie once, for the whole model, at the top level
            text = {**text, "tie_word_embeddings": raw["tie_word_embeddings"]}
        raw, model_type = text, inner if isinstance(inner, str) else _MULTIMODAL[model_type]
    if model_type not in _READERS:
        raise ValueError(f"unknown model_type {model_type[:60]!r}; supported model types: "
                         f"{supported}. Another decoder can be described by hand with "
                         f"TransformerConfig, from its keys {', '.join(_NEEDED)} and what "
                         "its modelling code adds (biases, norms, experts)")
    reader, defaults = _READERS[model_type]
    fields = Fields(raw, model_type, defaults)
    out = reader(fields)
    out["name"] = name or (top_name[:200] if isinstance(top_name, str) else "")
    out["source"] = source or f"config.json (model_type {model_type})"
    try:
        return TransformerConfig(**out)
    except (ValueError, TypeError) as error:
        raise located(error, fields) from None


v.guard_module(globals())
