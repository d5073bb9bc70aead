"""Exact parameter counts of decoder-only transformers, and the model presets.

Two families are covered by one configuration:

* **GPT-2 style** (the defaults): learned position embeddings, LayerNorm (weight and
  bias), a bias on every linear layer, a 4x MLP with one activation, token embedding
  tied to the output layer. Count (Radford et al. 2019; the seed formula):
  ``V*d + P*d + L*(12*d^2 + 13*d) + 2*d``.
* **Llama style**: rotary positions (``max_positions=0``), RMSNorm (weight only), no
  biases, a gated SwiGLU MLP (three ``d x ffn`` matrices), grouped-query attention
  (``kv_heads < heads``) and an untied output layer (Touvron et al. 2023; the Hugging
  Face ``config.json`` of each model). Qwen2.5 adds biases on q, k and v only.

Per layer, with ``q = heads*head_dim`` and ``kv = kv_heads*head_dim``:
attention ``d*q + 2*d*kv + q*d`` (+ biases), MLP ``2*d*ffn`` or ``3*d*ffn`` (gated)
(+ biases), norms ``2 x (2d or d)``; plus a final norm, the embeddings and, when untied,
an output matrix ``V*d``. :func:`param_count` equals the models' own counts to the
parameter (``llama-2-7b``: 6,738,415,616).

Taught in: ``notebooks/memory_what_fits.ipynb`` and ``notebooks/flops_and_scaling.ipynb``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from gpulesson import _validate as v

__all__ = [
    "MODEL_LABELS",
    "PRESETS",
    "TransformerConfig",
    "model_label",
    "embedding_params",
    "non_embedding_params",
    "param_breakdown",
    "param_count",
    "preset",
]

_NORMS = ("layernorm", "rmsnorm")


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
        MLP inner width (``intermediate_size``); default ``4*hidden``.
    kv_heads : int, optional
        Key/value heads (GQA/MQA); default ``heads``. Must divide ``heads``.
    head_dim : int, optional
        Size of one head; default ``hidden // heads`` (``hidden`` must then divide).
    max_positions : int
        Rows of a learned position embedding; 0 for rotary/relative positions.
    tied_embeddings : bool
        Output layer shares the token-embedding matrix.
    gated_mlp : bool
        SwiGLU/GeGLU MLP with three matrices instead of two.
    norm : str
        ``"layernorm"`` (weight and bias) or ``"rmsnorm"`` (weight only).
    linear_bias : bool
        A bias on every linear layer (GPT-2).
    qkv_bias : bool
        Biases on the q, k and v projections only (Qwen2). Ignored if ``linear_bias``.
    name, source : str
        Label and provenance (config file or paper) for presets.

    Notes
    -----
    After construction ``ffn``, ``kv_heads`` and ``head_dim`` hold their resolved
    values. ``dataclasses.replace(cfg, hidden=...)`` keeps the old resolved ``ffn``;
    pass ``ffn`` explicitly when changing ``hidden``.
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
    name: str = ""
    source: str = ""

    def __post_init__(self) -> None:
        hidden = v.positive_int("hidden", self.hidden)
        v.positive_int("layers", self.layers)
        heads = v.positive_int("heads", self.heads)
        v.positive_int("vocab", self.vocab)
        ffn = 4 * hidden if self.ffn is None else v.positive_int("ffn", self.ffn)
        kv_heads = heads if self.kv_heads is None else v.positive_int("kv_heads", self.kv_heads)
        if kv_heads > heads or heads % kv_heads:
            raise ValueError(
                f"kv_heads must divide heads ({heads}), got {kv_heads}"
            )
        if self.head_dim is None:
            if hidden % heads:
                raise ValueError(
                    f"hidden ({hidden}) must be divisible by heads ({heads}) "
                    "when head_dim is not given"
                )
            head_dim = hidden // heads
        else:
            head_dim = v.positive_int("head_dim", self.head_dim)
        v.nonneg_int("max_positions", self.max_positions)
        for flag in ("tied_embeddings", "gated_mlp", "linear_bias", "qkv_bias"):
            v.boolean(flag, getattr(self, flag))
        v.choice("norm", self.norm, _NORMS)
        if not isinstance(self.name, str) or not isinstance(self.source, str):
            raise TypeError("name and source must be strings")
        object.__setattr__(self, "ffn", ffn)
        object.__setattr__(self, "kv_heads", kv_heads)
        object.__setattr__(self, "head_dim", head_dim)

    @property
    def q_dim(self) -> int:
        """Width of the query projection, ``heads * head_dim``."""
        return self.heads * self.head_dim  # type: ignore[operator]

    @property
    def kv_dim(self) -> int:
        """Width of the key (or value) projection, ``kv_heads * head_dim``."""
        return self.kv_heads * self.head_dim  # type: ignore[operator]


def _check(cfg: object) -> TransformerConfig:
    if not isinstance(cfg, TransformerConfig):
        raise TypeError(
            f"cfg must be a TransformerConfig (see transformer.preset), got {type(cfg).__name__}"
        )
    return cfg


def param_breakdown(cfg: TransformerConfig) -> dict[str, int]:
    """Exact parameter count by part.

    Returns
    -------
    dict[str, int]
        ``embedding`` (token + learned position embeddings), ``attention`` (q, k, v, o
        weights and biases, all layers), ``mlp`` (all layers), ``norm`` (every norm
        including the final one), ``lm_head`` (0 when tied). Sums to :func:`param_count`.
    """
    cfg = _check(cfg)
    d, q, kv, f, layers = cfg.hidden, cfg.q_dim, cfg.kv_dim, cfg.ffn, cfg.layers
    attention = d * q + 2 * d * kv + q * d
    if cfg.linear_bias:
        attention += q + 2 * kv + d
    elif cfg.qkv_bias:
        attention += q + 2 * kv
    mlp = (3 if cfg.gated_mlp else 2) * d * f  # type: ignore[operator]
    if cfg.linear_bias:
        mlp += (2 if cfg.gated_mlp else 1) * f + d  # type: ignore[operator]
    norm_size = 2 * d if cfg.norm == "layernorm" else d
    return {
        "embedding": embedding_params(cfg),
        "attention": layers * attention,
        "mlp": layers * mlp,
        "norm": (2 * layers + 1) * norm_size,
        "lm_head": 0 if cfg.tied_embeddings else cfg.vocab * d,
    }


def param_count(cfg: TransformerConfig) -> int:
    """Exact total number of parameters (each tied matrix counted once)."""
    return sum(param_breakdown(cfg).values())


def embedding_params(cfg: TransformerConfig) -> int:
    """Token embedding ``V*d`` plus learned position embedding ``P*d``."""
    cfg = _check(cfg)
    return (cfg.vocab + cfg.max_positions) * cfg.hidden


def non_embedding_params(cfg: TransformerConfig) -> int:
    """Parameters without the vocabulary and position matrices (Kaplan et al. 2020's N).

    Excludes the token embedding, a learned position embedding and, when untied, the
    output (unembedding) matrix, as the Qwen2.5 report does for its "non-embedding
    parameters" (7B: 6.53B). Kaplan et al.'s approximation is ``12 * layers * hidden^2``.
    """
    return param_count(cfg) - embedding_params(cfg) - param_breakdown(cfg)["lm_head"]


def _gpt2(name: str, hidden: int, layers: int, heads: int, source: str) -> TransformerConfig:
    return TransformerConfig(
        hidden=hidden, layers=layers, heads=heads, vocab=50257, max_positions=1024,
        name=name, source=source,
    )


def _llama(name: str, source: str, **kw: object) -> TransformerConfig:
    base: dict[str, object] = {
        "max_positions": 0, "tied_embeddings": False, "gated_mlp": True,
        "norm": "rmsnorm", "linear_bias": False,
    }
    base.update(kw)
    return TransformerConfig(name=name, source=source, **base)  # type: ignore[arg-type]


_HF = "Hugging Face config.json of "
_PRESET_LIST = [
    _gpt2("gpt2", 768, 12, 12, _HF + "openai-community/gpt2 (124,439,808 parameters)"),
    _gpt2("gpt2-medium", 1024, 24, 16, _HF + "openai-community/gpt2-medium"),
    _gpt2("gpt2-large", 1280, 36, 20, _HF + "openai-community/gpt2-large"),
    _gpt2("gpt2-xl", 1600, 48, 25, _HF + "openai-community/gpt2-xl"),
    TransformerConfig(
        hidden=12288, layers=96, heads=96, vocab=50257, max_positions=2048, name="gpt3-175b",
        source="Brown et al. 2020, Table 2.1 (d_model 12288, 96 layers, 96 heads of 128, "
        "context 2048; GPT-2 tokenizer and architecture)",
    ),
    _llama("llama-2-7b", _HF + "meta-llama/Llama-2-7b-hf (Touvron et al. 2023)",
           hidden=4096, layers=32, heads=32, vocab=32000, ffn=11008),
    _llama("llama-2-13b", _HF + "meta-llama/Llama-2-13b-hf",
           hidden=5120, layers=40, heads=40, vocab=32000, ffn=13824),
    _llama("llama-2-70b", _HF + "meta-llama/Llama-2-70b-hf",
           hidden=8192, layers=80, heads=64, kv_heads=8, vocab=32000, ffn=28672),
    _llama("llama-3-8b", _HF + "meta-llama/Meta-Llama-3-8B",
           hidden=4096, layers=32, heads=32, kv_heads=8, vocab=128256, ffn=14336),
    _llama("llama-3-70b", _HF + "meta-llama/Meta-Llama-3-70B",
           hidden=8192, layers=80, heads=64, kv_heads=8, vocab=128256, ffn=28672),
    _llama("llama-3.1-405b", _HF + "meta-llama/Llama-3.1-405B (Dubey et al. 2024, Table 3)",
           hidden=16384, layers=126, heads=128, kv_heads=8, vocab=128256, ffn=53248),
    _llama("llama-3.2-1b", _HF + "meta-llama/Llama-3.2-1B (tied embeddings)",
           hidden=2048, layers=16, heads=32, kv_heads=8, head_dim=64, vocab=128256,
           ffn=8192, tied_embeddings=True),
    _llama("mistral-7b", _HF + "mistralai/Mistral-7B-v0.1 (Jiang et al. 2023)",
           hidden=4096, layers=32, heads=32, kv_heads=8, vocab=32000, ffn=14336),
    _llama("qwen2.5-7b", _HF + "Qwen/Qwen2.5-7B (biases on q, k, v)",
           hidden=3584, layers=28, heads=28, kv_heads=4, vocab=152064, ffn=18944,
           qkv_bias=True),
]

#: The model presets of the course by name (read-only).
PRESETS: Mapping[str, TransformerConfig] = MappingProxyType({p.name: p for p in _PRESET_LIST})


#: How the presets are named for a reader (keys are :data:`PRESETS` names).
MODEL_LABELS: Mapping[str, str] = MappingProxyType({
    "gpt2": "GPT-2 (124M)", "gpt2-medium": "GPT-2 Medium (355M)",
    "gpt2-large": "GPT-2 Large (774M)", "gpt2-xl": "GPT-2 XL (1.5B)",
    "gpt3-175b": "GPT-3 175B", "llama-2-7b": "Llama-2-7B", "llama-2-13b": "Llama-2-13B",
    "llama-2-70b": "Llama-2-70B", "llama-3-8b": "Llama-3-8B", "llama-3-70b": "Llama-3-70B",
    "llama-3.1-405b": "Llama-3.1-405B", "llama-3.2-1b": "Llama-3.2-1B",
    "mistral-7b": "Mistral-7B", "qwen2.5-7b": "Qwen2.5-7B",
})


def model_label(name: str) -> str:
    """The reader's name of a preset (``'llama-2-7b' -> 'Llama-2-7B'``); other names as
    given."""
    return MODEL_LABELS.get(name, name)


def preset(name: str) -> TransformerConfig:
    """The configuration of a named model; ``KeyError`` lists the known names.

    Names: ``gpt2``, ``gpt2-medium``, ``gpt2-large``, ``gpt2-xl``, ``gpt3-175b``,
    ``llama-2-7b``, ``llama-2-13b``, ``llama-2-70b``, ``llama-3-8b``, ``llama-3-70b``,
    ``llama-3.1-405b``, ``llama-3.2-1b``, ``mistral-7b``, ``qwen2.5-7b``. Lookup ignores
    case and spaces. Each preset's ``source`` names its config file or paper.
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
