"""Decoder-only transformers: their shape, exact parameter counts, presets, any config.json.

One configuration (:class:`TransformerConfig`) covers the models the course counts:

* **GPT-2 style** (the defaults): learned position embeddings, LayerNorm (weight and
  bias), a bias on every linear layer, a 4x MLP with one activation, token embedding
  tied to the output layer. Count (Radford et al. 2019; the seed formula):
  ``V*d + P*d + L*(12*d^2 + 13*d) + 2*d``.
* **Llama style**: rotary positions (``max_positions=0``), RMSNorm (weight only), no
  biases, a gated SwiGLU MLP (three ``d x ffn`` matrices), grouped-query attention
  (``kv_heads < heads``) and an untied output layer (Touvron et al. 2023; the Hugging
  Face ``config.json`` of each model). Qwen2.5 adds biases on q, k and v only.
* **The models of 2024-26**: mixture-of-experts (Mixtral, Qwen3-MoE, DeepSeek-V3,
  gpt-oss, Kimi K2, MiniMax-M2, GLM-5), multi-head latent attention (DeepSeek-V2/V3, Kimi
  K2), DeepSeek Sparse Attention's indexer and top-k (DeepSeek-V3.2, GLM-5),
  sliding-window layers (Gemma 2 and 3, gpt-oss), chunked attention (Llama 4), q/k norms
  (Qwen3, OLMo 2), four norms per layer (Gemma 2), attention sinks (gpt-oss), a norm
  after the embedding (BLOOM), MoE layers interleaved with dense ones (Llama 4
  Maverick), multi-token-prediction layers (DeepSeek-V3, GLM-4.5).
* **The older lineages** ``from_hf_config`` also reads: Phi-2 and GPT-J (one norm per
  parallel block, a biased output layer), OPT (two extra position rows, a narrow
  embedding projected in and out), GPT-NeoX/Pythia, OLMo 1 (norms without parameters),
  Command R (bias-free LayerNorm), Qwen 1.0, Granite, EXAONE.

The package is split by subject, and every name is importable from here:

* :mod:`~gpulesson.transformer.config`: :class:`TransformerConfig`;
* :mod:`~gpulesson.transformer.params`: :func:`param_count`, :func:`param_breakdown`,
  :func:`active_params` (what one token uses), :func:`checkpoint_params` ...;
* :mod:`~gpulesson.transformer.presets`: :func:`preset`, :data:`PRESETS`,
  :data:`MODEL_LABELS`;
* :mod:`~gpulesson.transformer.hf`: :func:`from_hf_config` for any supported
  ``config.json``;
* :mod:`~gpulesson.transformer.stages`: :func:`pipeline_stage_params` (exact parameters
  of each pipeline stage, embedding and head at the ends) and
  :func:`balanced_stage_layers`.

Taught in: ``notebooks/memory_what_fits.ipynb`` and ``notebooks/flops_and_scaling.ipynb``.
"""

from __future__ import annotations

from gpulesson.transformer.config import NORMS, QK_NORMS, TransformerConfig, as_config
from gpulesson.transformer.hf import SUPPORTED_MODEL_TYPES, from_hf_config
from gpulesson.transformer.params import (
    active_params,
    checkpoint_params,
    embedding_params,
    expert_params,
    indexer_params,
    moe_breakdown,
    non_embedding_params,
    param_breakdown,
    param_count,
)
from gpulesson.transformer.presets import MODEL_LABELS, PRESETS, model_label, preset
from gpulesson.transformer.stages import (
    balanced_stage_layers,
    layer_params,
    pipeline_stage_params,
)

__all__ = [
    "MODEL_LABELS",
    "NORMS",
    "PRESETS",
    "QK_NORMS",
    "SUPPORTED_MODEL_TYPES",
    "TransformerConfig",
    "active_params",
    "as_config",
    "balanced_stage_layers",
    "checkpoint_params",
    "embedding_params",
    "expert_params",
    "indexer_params",
    "from_hf_config",
    "layer_params",
    "model_label",
    "moe_breakdown",
    "non_embedding_params",
    "param_breakdown",
    "param_count",
    "pipeline_stage_params",
    "preset",
]
