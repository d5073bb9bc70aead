"""Read a Hugging Face ``config.json`` into a :class:`TransformerConfig`.

:func:`from_hf_config` takes the parsed JSON (a mapping) or a path to the file. Each
supported ``model_type`` is one small reader that maps the family's field names onto the
architecture: the reader knows what the family's code does that the file does not say
(Qwen2 always has q/k/v biases, Gemma 2 has four norms per layer, gpt-oss has attention
sinks and biased experts, DeepSeek-V3's router has a correction bias ...), following the
modelling files of Hugging Face ``transformers``. A multimodal config (Gemma 3) is read
through its ``text_config``, whose omitted fields take the defaults of the family's
configuration class, as ``transformers`` does.

A file the readers cannot represent exactly (an unknown ``model_type``, a missing size, a
mixture-of-experts layout other than "leading dense layers, then experts") raises
``ValueError`` naming the field and what is supported, rather than returning a model whose
counts would be wrong.

Taught in: ``notebooks/memory_what_fits.ipynb`` (counting any model's parameters).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from typing import Any

from gpulesson import _validate as v
from gpulesson.transformer.config import TransformerConfig

__all__ = ["SUPPORTED_MODEL_TYPES", "from_hf_config"]

Reader = Callable[["_Fields"], dict[str, Any]]


class _Fields:
    """Access to a config's fields that names the field and the model type on failure."""

    def __init__(self, raw: Mapping[str, Any], model_type: str,
                 defaults: Mapping[str, Any] | None = None) -> None:
        self.raw = dict(defaults or {})
        self.raw.update({k: val for k, val in raw.items() if val is not None
                         or k not in self.raw})
        self.model_type = model_type

    def req(self, *names: str) -> Any:
        """The first of ``names`` present (aliases of one field), or ``ValueError``."""
        for name in names:
            if self.raw.get(name) is not None:
                return self.raw[name]
        raise ValueError(f"config.json of model_type {self.model_type!r} is missing "
                         f"{names[0]!r}, which the {self.model_type} reader needs")

    def get(self, name: str, default: Any = None) -> Any:
        value = self.raw.get(name)
        return default if value is None else value

    def flag(self, name: str, default: bool = False) -> bool:
        value = self.get(name, default)
        if not isinstance(value, bool):
            raise ValueError(f"config.json field {name!r} must be true or false, got {value!r}")
        return value


def _dropout(f: _Fields, *names: str) -> bool:
    return any(float(f.get(name, 0.0)) > 0 for name in names)


def _window(f: _Fields, layers: int, context: int, *, pattern: int = 0) -> dict[str, Any]:
    """Sliding window and pattern from ``sliding_window`` and ``layer_types`` (or a fixed
    pattern); a window that covers the whole context is no window at all."""
    window = f.get("sliding_window") or 0
    if not window or (context and window >= context):
        return {}
    types = f.get("layer_types")
    if types is not None:
        pattern = _pattern_of(types, layers)
        if pattern is None:
            return {}
    return {"sliding_window": int(window), "sliding_window_pattern": pattern}


def _pattern_of(types: Any, layers: int) -> int | None:
    """The ``sliding_window_pattern`` that ``layer_types`` spells out, or ``None`` when no
    layer is local; ``ValueError`` for a layout no pattern describes."""
    if not isinstance(types, list) or len(types) != layers:
        raise ValueError(f"config.json field 'layer_types' must list one type per layer "
                         f"({layers}), got {types!r}")
    local = [t == "sliding_attention" for t in types]
    if not any(local):
        return None
    if all(local):
        return 0
    first_global = local.index(False) + 1
    expected = [(i + 1) % first_global != 0 for i in range(layers)]
    if first_global < 2 or local != expected:
        raise ValueError("config.json field 'layer_types' must repeat one pattern (some "
                         "local layers, then one global layer); got a layout "
                         "sliding_window_pattern cannot describe")
    return first_global


def _common(f: _Fields, *, hidden: tuple[str, ...] = ("hidden_size",),
            layers: tuple[str, ...] = ("num_hidden_layers",),
            heads: tuple[str, ...] = ("num_attention_heads",)) -> dict[str, Any]:
    n_heads = int(f.req(*heads))
    return {
        "hidden": int(f.req(*hidden)),
        "layers": int(f.req(*layers)),
        "heads": n_heads,
        "vocab": int(f.req("vocab_size")),
        "kv_heads": int(f.get("num_key_value_heads", n_heads)),
        "context": int(f.get("max_position_embeddings", 0)),
    }


def _llama_like(f: _Fields, *, tied: bool = False) -> dict[str, Any]:
    """Rotary positions, RMSNorm, a gated MLP, no biases unless the file says so."""
    out = _common(f)
    out.update(ffn=int(f.req("intermediate_size")), norm="rmsnorm", gated_mlp=True,
               linear_bias=False, tied_embeddings=f.flag("tie_word_embeddings", tied),
               dropout=_dropout(f, "attention_dropout", "hidden_dropout", "resid_pdrop",
                                "embd_pdrop"))
    if f.get("head_dim") is not None:
        out["head_dim"] = int(f.get("head_dim"))
    bias = f.flag("attention_bias")
    out.update(qkv_bias=bias, attn_out_bias=bias, mlp_bias=f.flag("mlp_bias"))
    return out


def _llama(f: _Fields) -> dict[str, Any]:
    return _llama_like(f)


def _mistral(f: _Fields) -> dict[str, Any]:
    out = _llama_like(f)
    out.update(_window(f, out["layers"], out["context"]))
    return out


def _mixtral(f: _Fields) -> dict[str, Any]:
    out = _mistral(f)
    out.update(experts=int(f.req("num_local_experts")),
               experts_per_token=int(f.req("num_experts_per_tok")))
    return out


def _qwen_windows(f: _Fields) -> None:
    if f.flag("use_sliding_window"):
        raise ValueError("config.json sets use_sliding_window: true; the qwen readers "
                         "support only full attention (every released Qwen2/Qwen3 model)")


def _qwen_moe_layout(f: _Fields, layers: int) -> None:
    if int(f.get("decoder_sparse_step", 1)) != 1 or f.get("mlp_only_layers"):
        raise ValueError("config.json field 'decoder_sparse_step' must be 1 and "
                         "'mlp_only_layers' empty: supported are experts in every layer, "
                         f"got decoder_sparse_step={f.get('decoder_sparse_step')!r}, "
                         f"mlp_only_layers={f.get('mlp_only_layers')!r}")


def _qwen2(f: _Fields) -> dict[str, Any]:
    _qwen_windows(f)
    out = _llama_like(f)
    out.update(qkv_bias=True, attn_out_bias=False)  # Qwen2Attention: bias on q, k, v only
    return out


def _qwen2_moe(f: _Fields) -> dict[str, Any]:
    out = _qwen2(f)
    _qwen_moe_layout(f, out["layers"])
    out.update(experts=int(f.req("num_experts")),
               experts_per_token=int(f.req("num_experts_per_tok")),
               expert_ffn=int(f.req("moe_intermediate_size")))
    shared = int(f.get("shared_expert_intermediate_size", 0))
    if shared:
        out.update(shared_experts=1, shared_expert_ffn=shared, shared_expert_gate=True)
    return out


def _qwen3(f: _Fields) -> dict[str, Any]:
    _qwen_windows(f)
    out = _llama_like(f)
    out["qk_norm"] = "head"
    return out


def _qwen3_moe(f: _Fields) -> dict[str, Any]:
    out = _qwen3(f)
    _qwen_moe_layout(f, out["layers"])
    out.update(experts=int(f.req("num_experts")),
               experts_per_token=int(f.req("num_experts_per_tok")),
               expert_ffn=int(f.req("moe_intermediate_size")))
    return out


def _gemma(f: _Fields) -> dict[str, Any]:
    return _llama_like(f, tied=True)  # GeGLU: three matrices, like SwiGLU


def _gemma2(f: _Fields) -> dict[str, Any]:
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


def _gemma3_text(f: _Fields) -> dict[str, Any]:
    out = _gemma2(f)
    out["qk_norm"] = "head"
    if f.get("layer_types") is None and "sliding_window" in out:
        out["sliding_window_pattern"] = int(f.get("sliding_window_pattern", 6))
    return out


def _phi3(f: _Fields) -> dict[str, Any]:
    out = _llama_like(f)  # fused qkv_proj and gate_up_proj: the same counts
    out.update(_window(f, out["layers"], out["context"]))
    return out


def _deepseek(f: _Fields, *, correction_bias: bool) -> dict[str, Any]:
    out = _llama_like(f)
    out.pop("head_dim", None)
    out.update(qkv_bias=False, attn_out_bias=False)
    if int(f.get("moe_layer_freq", 1)) != 1:
        raise ValueError("config.json field 'moe_layer_freq' must be 1 (experts in every "
                         f"layer after the dense ones), got {f.get('moe_layer_freq')!r}")
    out.update(
        kv_heads=out["heads"],
        kv_lora_rank=int(f.req("kv_lora_rank")), q_lora_rank=int(f.get("q_lora_rank", 0)),
        qk_rope_head_dim=int(f.req("qk_rope_head_dim")),
        qk_nope_head_dim=int(f.req("qk_nope_head_dim")), v_head_dim=int(f.req("v_head_dim")),
        experts=int(f.req("n_routed_experts")),
        experts_per_token=int(f.req("num_experts_per_tok")),
        shared_experts=int(f.get("n_shared_experts", 0)),
        expert_ffn=int(f.req("moe_intermediate_size")),
        dense_layers=int(f.get("first_k_dense_replace", 0)),
        router_bias=correction_bias, mtp_layers=int(f.get("num_nextn_predict_layers", 0)),
    )
    return out


def _deepseek_v2(f: _Fields) -> dict[str, Any]:
    return _deepseek(f, correction_bias=False)


def _deepseek_v3(f: _Fields) -> dict[str, Any]:
    # topk_method "noaux_tc": each MoE gate stores e_score_correction_bias, one per expert
    return _deepseek(f, correction_bias=f.get("topk_method", "noaux_tc") == "noaux_tc")


def _gpt_oss(f: _Fields) -> dict[str, Any]:
    out = _llama_like(f)
    out.update(experts=int(f.req("num_local_experts")),
               experts_per_token=int(f.req("num_experts_per_tok", "experts_per_token")),
               mlp_bias=True, router_bias=True, attention_sinks=True)
    out.update(_window(f, out["layers"], out["context"], pattern=2))
    return out


def _olmo2(f: _Fields) -> dict[str, Any]:
    out = _llama_like(f)
    out["qk_norm"] = "full"  # q_norm over heads*head_dim, k_norm over kv_heads*head_dim
    return out  # two norms per layer, after attention and after the MLP


def _gpt2(f: _Fields) -> dict[str, Any]:
    out = _common(f, hidden=("n_embd", "hidden_size"), layers=("n_layer", "num_hidden_layers"),
                  heads=("n_head", "num_attention_heads"))
    positions = int(f.req("n_positions"))
    out.update(ffn=int(f.get("n_inner", 4 * out["hidden"])), max_positions=positions,
               context=positions, tied_embeddings=f.flag("tie_word_embeddings", True),
               dropout=_dropout(f, "resid_pdrop", "attn_pdrop", "embd_pdrop"))
    return out


def _falcon(f: _Fields) -> dict[str, Any]:
    out = _common(f, layers=("num_hidden_layers", "n_layer"))
    new_arch = f.flag("new_decoder_architecture")
    if new_arch:
        out["kv_heads"] = int(f.req("num_kv_heads"))
        norms = 2 if int(f.get("num_ln_in_parallel_attn", 2)) == 2 else 1
    else:
        out["kv_heads"] = 1 if f.flag("multi_query", True) else out["heads"]
        norms = 1 if f.flag("parallel_attn", True) else 2
    parallel = new_arch or f.flag("parallel_attn", True)
    out.update(ffn=int(f.get("ffn_hidden_size", 4 * out["hidden"])), norms_per_layer=norms,
               linear_bias=f.flag("bias"), parallel_attention=parallel,
               tied_embeddings=f.flag("tie_word_embeddings", True),
               dropout=_dropout(f, "attention_dropout", "hidden_dropout"))
    return out


def _bloom(f: _Fields) -> dict[str, Any]:
    out = _common(f, hidden=("hidden_size", "n_embed"), layers=("num_hidden_layers", "n_layer"),
                  heads=("num_attention_heads", "n_head"))
    out.update(embedding_norm=True, tied_embeddings=f.flag("tie_word_embeddings", True),
               dropout=_dropout(f, "attention_dropout", "hidden_dropout"))
    return out


_READERS: dict[str, tuple[Reader, Mapping[str, Any]]] = {
    "gpt2": (_gpt2, {}),
    "llama": (_llama, {}),
    "mistral": (_mistral, {}),
    "mixtral": (_mixtral, {}),
    "qwen2": (_qwen2, {}),
    "qwen2_moe": (_qwen2_moe, {}),
    "qwen3": (_qwen3, {}),
    "qwen3_moe": (_qwen3_moe, {}),
    "gemma": (_gemma, {}),
    "gemma2": (_gemma2, {}),
    "gemma3_text": (_gemma3_text, _GEMMA3_TEXT_DEFAULTS),
    "phi3": (_phi3, {}),
    "deepseek_v2": (_deepseek_v2, {}),
    "deepseek_v3": (_deepseek_v3, {}),
    "gpt_oss": (_gpt_oss, {}),
    "olmo2": (_olmo2, {}),
    "falcon": (_falcon, {}),
    "bloom": (_bloom, {}),
}
#: Multimodal model types whose language model is their ``text_config``.
_MULTIMODAL = {"gemma3": "gemma3_text"}

#: Every ``model_type`` :func:`from_hf_config` reads.
SUPPORTED_MODEL_TYPES = tuple(sorted([*_READERS, *_MULTIMODAL]))


def _load(config: object) -> Mapping[str, Any]:
    if isinstance(config, Mapping):
        return config
    if isinstance(config, (str, os.PathLike)):
        with open(config, encoding="utf-8") as handle:
            loaded = json.load(handle)
        if not isinstance(loaded, Mapping):
            raise ValueError(f"config file {os.fspath(config)!r} must hold a JSON object")
        return loaded
    raise TypeError("config must be a parsed config.json (a mapping) or a path to one, got "
                    f"{type(config).__name__}")


def from_hf_config(config: Mapping[str, Any] | str | os.PathLike[str], *,
                   name: str = "", source: str = "") -> TransformerConfig:
    """The :class:`TransformerConfig` of a Hugging Face ``config.json``.

    Parameters
    ----------
    config : mapping or path
        The parsed JSON, or the path of the file.
    name, source : str
        Label and provenance to store in the result (default: the config's
        ``_name_or_path``, if any, and ``"config.json (model_type ...)"``).

    Returns
    -------
    TransformerConfig
        Whose :func:`~gpulesson.transformer.param_count` is the checkpoint's count: for
        every supported family the tests compare it with a published exact count (the
        safetensors index or the model card).

    Raises
    ------
    ValueError
        for an unknown or missing ``model_type`` (the message lists
        :data:`SUPPORTED_MODEL_TYPES`), a missing size (``num_attention_heads`` ...), or
        a layout the configuration cannot represent.
    TypeError
        when ``config`` is neither a mapping nor a path.

    Examples
    --------
    >>> from_hf_config({"model_type": "llama", "hidden_size": 4096, ...})  # doctest: +SKIP
    """
    raw = _load(config)
    model_type = raw.get("model_type")
    supported = ", ".join(SUPPORTED_MODEL_TYPES)
    if not isinstance(model_type, str) or not model_type:
        raise ValueError(f"config.json has no 'model_type'; supported model types: {supported}")
    top_name = raw.get("_name_or_path") or ""
    if model_type in _MULTIMODAL:
        text = raw.get("text_config")
        if not isinstance(text, Mapping):
            raise ValueError(f"config.json of model_type {model_type!r} is missing "
                             "'text_config', which holds its language model")
        raw, model_type = text, str(text.get("model_type") or _MULTIMODAL[model_type])
    if model_type not in _READERS:
        raise ValueError(f"unknown model_type {model_type!r}; supported model types: "
                         f"{supported}")
    reader, defaults = _READERS[model_type]
    fields = reader(_Fields(raw, model_type, defaults))
    fields["name"] = name or str(top_name)
    fields["source"] = source or f"config.json (model_type {model_type})"
    return TransformerConfig(**fields)


v.guard_module(globals())
