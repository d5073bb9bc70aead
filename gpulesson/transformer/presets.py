"""The model presets of the course, each from its published configuration.

Every preset names its source: the model's Hugging Face ``config.json`` (whose fields it
copies) or, for GPT-3, the paper. :func:`gpulesson.transformer.from_hf_config` reads the
same files; the tests check that both give the same model and the published counts.

Taught in: ``notebooks/memory_what_fits.ipynb`` and the lessons that follow it.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from gpulesson import _validate as v
from gpulesson.transformer.config import TransformerConfig

__all__ = ["MODEL_LABELS", "PRESETS", "model_label", "preset"]


def _gpt2(name: str, hidden: int, layers: int, heads: int, source: str) -> TransformerConfig:
    return TransformerConfig(
        hidden=hidden, layers=layers, heads=heads, vocab=50257, max_positions=1024,
        context=1024, name=name, source=source,
    )


def _llama(name: str, source: str, **kw: object) -> TransformerConfig:
    """A Llama-style model: rotary positions, RMSNorm, no biases, SwiGLU, untied, no
    dropout."""
    base: dict[str, object] = {
        "max_positions": 0, "tied_embeddings": False, "gated_mlp": True,
        "norm": "rmsnorm", "linear_bias": False, "dropout": False,
    }
    base.update(kw)
    return TransformerConfig(name=name, source=source, **base)  # type: ignore[arg-type]


_HF = "Hugging Face config.json of "
#: DeepSeek-V3's shape (its config.json): the latent-attention MoE that Kimi K2 and
#: DeepSeek-V3.2 reuse, their presets naming only the fields that differ.
_DEEPSEEK_V3_SHAPE: Mapping[str, object] = MappingProxyType(dict(
    hidden=7168, layers=61, heads=128, vocab=129280, ffn=18432,
    kv_lora_rank=512, q_lora_rank=1536, qk_rope_head_dim=64, qk_nope_head_dim=128,
    v_head_dim=128, experts=256, experts_per_token=8, shared_experts=1,
    expert_ffn=2048, dense_layers=3, router_bias=True, mtp_layers=1, context=163840,
    routing_groups=8, routing_group_topk=4))


def _shaped(shape: Mapping[str, object], name: str, source: str,
            **changes: object) -> TransformerConfig:
    """A Llama-style model of another preset's ``shape`` with ``changes``."""
    return _llama(name, source, **{**shape, **changes})


#: gpt-oss-20b's shape (its config.json); gpt-oss-120b differs in its layers and experts.
_GPT_OSS_SHAPE: Mapping[str, object] = MappingProxyType(dict(
    hidden=2880, layers=24, heads=64, kv_heads=8, head_dim=64, vocab=201088,
    ffn=2880, qkv_bias=True, attn_out_bias=True, mlp_bias=True, attention_sinks=True,
    sliding_window=128, sliding_window_pattern=2, experts=32, experts_per_token=4,
    router_bias=True, glu_limit=7.0, context=131072))


_PRESET_LIST = [
    _gpt2("gpt2", 768, 12, 12, _HF + "openai-community/gpt2 (124,439,808 parameters)"),
    _gpt2("gpt2-medium", 1024, 24, 16, _HF + "openai-community/gpt2-medium"),
    _gpt2("gpt2-large", 1280, 36, 20, _HF + "openai-community/gpt2-large"),
    _gpt2("gpt2-xl", 1600, 48, 25, _HF + "openai-community/gpt2-xl"),
    TransformerConfig(
        hidden=12288, layers=96, heads=96, vocab=50257, max_positions=2048, context=2048,
        name="gpt3-175b",
        source="Brown et al. 2020, Table 2.1 (d_model 12288, 96 layers, 96 heads of 128, "
        "context 2048; GPT-2 tokenizer and architecture)",
    ),
    _llama("llama-2-7b", _HF + "meta-llama/Llama-2-7b-hf (Touvron et al. 2023)",
           hidden=4096, layers=32, heads=32, vocab=32000, ffn=11008, context=4096),
    _llama("llama-2-13b", _HF + "meta-llama/Llama-2-13b-hf",
           hidden=5120, layers=40, heads=40, vocab=32000, ffn=13824, context=4096),
    _llama("llama-2-70b", _HF + "meta-llama/Llama-2-70b-hf",
           hidden=8192, layers=80, heads=64, kv_heads=8, vocab=32000, ffn=28672, context=4096),
    _llama("llama-3-8b", _HF + "meta-llama/Meta-Llama-3-8B",
           hidden=4096, layers=32, heads=32, kv_heads=8, vocab=128256, ffn=14336, context=8192),
    _llama("llama-3-70b", _HF + "meta-llama/Meta-Llama-3-70B",
           hidden=8192, layers=80, heads=64, kv_heads=8, vocab=128256, ffn=28672, context=8192),
    _llama("llama-3.1-8b", _HF + "meta-llama/Llama-3.1-8B (Llama 3 8B's shape, 131,072 "
           "positions)",
           hidden=4096, layers=32, heads=32, kv_heads=8, vocab=128256, ffn=14336,
           context=131072),
    _llama("llama-3.1-70b", _HF + "meta-llama/Llama-3.1-70B (Llama 3 70B's shape, 131,072 "
           "positions)",
           hidden=8192, layers=80, heads=64, kv_heads=8, vocab=128256, ffn=28672,
           context=131072),
    _llama("llama-3.1-405b", _HF + "meta-llama/Llama-3.1-405B (Dubey et al. 2024, Table 3)",
           hidden=16384, layers=126, heads=128, kv_heads=8, vocab=128256, ffn=53248,
           context=131072),
    _llama("llama-3.2-1b", _HF + "meta-llama/Llama-3.2-1B (tied embeddings)",
           hidden=2048, layers=16, heads=32, kv_heads=8, head_dim=64, vocab=128256,
           ffn=8192, tied_embeddings=True, context=131072),
    _llama("mistral-7b", _HF + "mistralai/Mistral-7B-v0.1 (Jiang et al. 2023: a "
           "4,096-token sliding window on every layer)",
           hidden=4096, layers=32, heads=32, kv_heads=8, vocab=32000, ffn=14336,
           sliding_window=4096, context=32768),
    _llama("qwen2.5-7b", _HF + "Qwen/Qwen2.5-7B (biases on q, k, v)",
           hidden=3584, layers=28, heads=28, kv_heads=4, vocab=152064, ffn=18944,
           qkv_bias=True, context=131072),
    # --- the models of 2024-26 ------------------------------------------------------------
    _llama("mixtral-8x7b", _HF + "mistralai/Mixtral-8x7B-v0.1 (Jiang et al. 2024: 46.7B "
           "parameters, 12.9B active; 8 experts, 2 per token)",
           hidden=4096, layers=32, heads=32, kv_heads=8, vocab=32000, ffn=14336,
           experts=8, experts_per_token=2, context=32768),
    _shaped(
        _DEEPSEEK_V3_SHAPE,
        "deepseek-v3", _HF + "deepseek-ai/DeepSeek-V3 (DeepSeek-AI 2024: 671B parameters, "
        "37B activated; latent attention, 256 routed + 1 shared expert, 8 per token, 3 dense "
        "layers; the checkpoint adds a 14B multi-token-prediction module)"),
    _llama("qwen3-8b", _HF + "Qwen/Qwen3-8B (Qwen Team 2025; q/k norms, head_dim 128)",
           hidden=4096, layers=36, heads=32, kv_heads=8, head_dim=128, vocab=151936,
           ffn=12288, qk_norm="head", context=40960),
    _llama("qwen3-30b-a3b", _HF + "Qwen/Qwen3-30B-A3B (30.5B parameters, 3.3B activated; "
           "128 experts, 8 per token)",
           hidden=2048, layers=48, heads=32, kv_heads=4, head_dim=128, vocab=151936,
           ffn=6144, qk_norm="head", experts=128, experts_per_token=8, expert_ffn=768,
           context=40960),
    _llama("qwen3-235b-a22b", _HF + "Qwen/Qwen3-235B-A22B (235B parameters, 22B activated; "
           "128 experts, 8 per token)",
           hidden=4096, layers=94, heads=64, kv_heads=4, head_dim=128, vocab=151936,
           ffn=12288, qk_norm="head", experts=128, experts_per_token=8, expert_ffn=1536,
           context=40960),
    _llama("gemma-2-9b", _HF + "google/gemma-2-9b (Gemma Team 2024: GeGLU, four norms per "
           "layer, 4,096-token sliding window on every other layer, tied embeddings)",
           hidden=3584, layers=42, heads=16, kv_heads=8, head_dim=256, vocab=256000,
           ffn=14336, norms_per_layer=4, tied_embeddings=True, sliding_window=4096,
           sliding_window_pattern=2, context=8192),
    _llama("phi-3-mini", _HF + "microsoft/Phi-3-mini-4k-instruct (Abdin et al. 2024: 3.8B; "
           "fused qkv and gate/up matrices, a 2,047-token sliding window)",
           hidden=3072, layers=32, heads=32, vocab=32064, ffn=8192, sliding_window=2047,
           context=4096),
    _shaped(
        _GPT_OSS_SHAPE,
        "gpt-oss-20b", _HF + "openai/gpt-oss-20b (OpenAI 2025, Table 1: 20.91B total, 3.61B "
        "active; 32 experts, 4 per token; 128-token window on alternate layers; attention "
        "sinks; biases)"),
    _shaped(
        _GPT_OSS_SHAPE,
        "gpt-oss-120b", _HF + "openai/gpt-oss-120b (OpenAI 2025, Table 1: 116.83B total, "
        "5.13B active; 128 experts, 4 per token)",
        layers=36, experts=128),
    _llama("llama-4-maverick", _HF + "meta-llama/Llama-4-Maverick-17B-128E, its text_config "
           "(Meta 2025, model card: 17B active, 400B total; 128 experts, 1 per token, and a "
           "shared expert on every other layer; 8,192-token chunked attention on three "
           "layers in four; the checkpoint adds a vision encoder)",
           hidden=5120, layers=48, heads=40, kv_heads=8, head_dim=128, vocab=202048,
           ffn=16384, experts=128, experts_per_token=1, shared_experts=1, expert_ffn=8192,
           moe_layer_step=2, attention_chunk=8192, attention_chunk_pattern=4,
           context=1048576),
    _shaped(
        _DEEPSEEK_V3_SHAPE,
        "kimi-k2", _HF + "moonshotai/Kimi-K2-Instruct (Moonshot AI 2025, model card: 1T "
        "total, 32B activated; DeepSeek-V3's latent attention with 64 heads, 384 routed + 1 "
        "shared expert, 8 per token, 1 dense layer)",
        heads=64, vocab=163840, experts=384, dense_layers=1, mtp_layers=0, context=131072,
        routing_groups=1, routing_group_topk=1),
    _llama("minimax-m2.7", _HF + "MiniMaxAI/MiniMax-M2.7 (the shape of MiniMax-M2, whose "
           "model card gives 230B total, 10B active; 256 experts, 8 per token; q/k norms "
           "over the whole projections)",
           hidden=3072, layers=62, heads=48, kv_heads=8, head_dim=128, vocab=200064,
           ffn=1536, qk_norm="full", experts=256, experts_per_token=8, router_bias=True,
           context=204800),
    _shaped(
        _DEEPSEEK_V3_SHAPE,
        "deepseek-v3.2", _HF + "deepseek-ai/DeepSeek-V3.2 (DeepSeek-AI 2025: 671B total, 37B "
        "activated, DeepSeek-V3's counts; the config gives 671,877,944,064, DeepSeek-V3's "
        "671,026,419,200 plus a lightning indexer of 13,959,424 in each of 61 layers: "
        "DeepSeek Sparse Attention, 64 indexer heads of 128 picking 2,048 keys per query; "
        "the checkpoint adds a multi-token-prediction layer)",
        indexer_heads=64, indexer_head_dim=128, indexer_topk=2048),
    _llama("glm-5.1", _HF + "zai-org/GLM-5.1 (the shapes of GLM-5, whose report, GLM-5 "
           "Team 2026, arXiv 2602.15763, gives 744B total, 40B activated; the checkpoint "
           "holds 753,864,139,008 with its multi-token-prediction layer; DeepSeek Sparse "
           "Attention over latent attention with 64 heads, an indexer of 32 heads of 128 "
           "picking 2,048 keys; 256 routed + 1 shared expert, 8 per token, 3 dense layers)",
           hidden=6144, layers=78, heads=64, vocab=154880, ffn=12288,
           kv_lora_rank=512, q_lora_rank=2048, qk_rope_head_dim=64, qk_nope_head_dim=192,
           v_head_dim=256, indexer_heads=32, indexer_head_dim=128, indexer_topk=2048,
           experts=256, experts_per_token=8, shared_experts=1, expert_ffn=2048,
           dense_layers=3, router_bias=True, mtp_layers=1, mtp_own_embeddings=False,
           context=202752, routing_groups=1, routing_group_topk=1),
]

#: The model presets of the course by name (read-only).
PRESETS: Mapping[str, TransformerConfig] = MappingProxyType({p.name: p for p in _PRESET_LIST})


#: How the presets are named for a reader (keys are :data:`PRESETS` names).
MODEL_LABELS: Mapping[str, str] = MappingProxyType({
    "gpt2": "GPT-2 (124M)", "gpt2-medium": "GPT-2 Medium (355M)",
    "gpt2-large": "GPT-2 Large (774M)", "gpt2-xl": "GPT-2 XL (1.5B)",
    "gpt3-175b": "GPT-3 175B", "llama-2-7b": "Llama-2-7B", "llama-2-13b": "Llama-2-13B",
    "llama-2-70b": "Llama-2-70B", "llama-3-8b": "Llama-3-8B", "llama-3-70b": "Llama-3-70B",
    "llama-3.1-8b": "Llama-3.1-8B", "llama-3.1-70b": "Llama-3.1-70B",
    "llama-3.1-405b": "Llama-3.1-405B", "llama-3.2-1b": "Llama-3.2-1B",
    "mistral-7b": "Mistral-7B v0.1", "qwen2.5-7b": "Qwen2.5-7B",
    "mixtral-8x7b": "Mixtral 8x7B (MoE)", "deepseek-v3": "DeepSeek-V3 (MoE, MLA)",
    "qwen3-8b": "Qwen3-8B", "qwen3-30b-a3b": "Qwen3-30B-A3B (MoE)",
    "qwen3-235b-a22b": "Qwen3-235B-A22B (MoE)", "gemma-2-9b": "Gemma-2-9B",
    "phi-3-mini": "Phi-3-mini (3.8B)", "gpt-oss-20b": "gpt-oss-20b (MoE)",
    "gpt-oss-120b": "gpt-oss-120b (MoE)", "llama-4-maverick": "Llama 4 Maverick (MoE)",
    "kimi-k2": "Kimi K2 (MoE, MLA)", "minimax-m2.7": "MiniMax-M2.7 (MoE)",
    "deepseek-v3.2": "DeepSeek-V3.2 (MoE, sparse MLA)", "glm-5.1": "GLM-5.1 (MoE, sparse MLA)",
})


def model_label(name: str) -> str:
    """The reader's name of a preset (``'llama-2-7b' -> 'Llama-2-7B'``); other names as
    given."""
    if not isinstance(name, str) or not name.strip():
        raise TypeError(f"name must be a model's name (a preset such as 'llama-2-7b', or any "
                        f"text), got {name!r:.60} ({type(name).__name__})")
    return MODEL_LABELS.get(name, name)


def preset(name: str) -> TransformerConfig:
    """The configuration of a named model; ``KeyError`` lists the known names.

    Names: ``gpt2``, ``gpt2-medium``, ``gpt2-large``, ``gpt2-xl``, ``gpt3-175b``,
    ``llama-2-7b``, ``llama-2-13b``, ``llama-2-70b``, ``llama-3-8b``, ``llama-3-70b``,
    ``llama-3.1-8b``, ``llama-3.1-70b``, ``llama-3.1-405b``, ``llama-3.2-1b``,
    ``mistral-7b``, ``qwen2.5-7b``, and the models
    of 2024-26: ``mixtral-8x7b``, ``deepseek-v3``, ``qwen3-8b``, ``qwen3-30b-a3b``,
    ``qwen3-235b-a22b``, ``gemma-2-9b``, ``phi-3-mini``, ``gpt-oss-20b``,
    ``gpt-oss-120b``, ``llama-4-maverick``, ``kimi-k2``, ``minimax-m2.7``,
    ``deepseek-v3.2``, ``glm-5.1``. Lookup ignores case and spaces. Each preset's
    ``source`` names its config file or paper.
    """
    if not isinstance(name, str):
        raise TypeError(f"preset name must be a str, got {type(name).__name__}")
    key = name.strip().lower().replace(" ", "-").replace("_", "-")
    if key not in PRESETS:
        raise v.UnknownNameError(
            f"unknown preset {name!r}; known presets: {', '.join(PRESETS)}"
        )
    return PRESETS[key]


v.guard_module(globals())
