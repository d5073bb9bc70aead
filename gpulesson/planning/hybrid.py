"""Hybrid models (linear attention beside full attention) in the serving planners.

A model whose layers mostly keep a fixed-size recurrent state (Qwen3-Next's Gated DeltaNet,
Mamba-2 hybrids) is served by vLLM V1's hybrid KV-cache manager, which pools pages of two
kinds. Each linear layer's state for one sequence is one page (``MambaSpec.page_size_bytes``
in ``vllm/v1/kv_cache_interface.py``: the sum of its convolution and recurrent states),
however long the sequence; the attention layers' pages hold ``block_size`` tokens. To share
one pool, vLLM raises the attention block size until an attention page is at least a state
page and pads the state page to the same size
(``HybridAttentionMambaModelConfig.verify_and_update_config`` in
``vllm/model_executor/models/config.py``), then groups the layers so that every group
draws equal pages from one pool. That block size (hundreds of tokens for Qwen3-Next), the
padding and the grouping have changed between vLLM releases and with prefix caching
(``mamba_cache_mode``; vLLM issue #54458, 2026, reports blocks of 1,600 and 7,808 tokens
for two such models), and no start-up log of such a model has been reconciled here, so
the planners refuse such a model (:func:`refuse_recurrent`) rather than size a pool whose
block count and concurrency would be wrong. The memory one sequence needs is
:func:`gpulesson.inference.recurrent_state_bytes` plus its KV cache
(:func:`gpulesson.inference.kv_cache_bytes`).
"""

from __future__ import annotations

from gpulesson import _validate as v
from gpulesson.transformer import TransformerConfig, as_config

__all__ = ["refuse_recurrent"]


def refuse_recurrent(cfg: TransformerConfig, what: str) -> None:
    """Raise ``ValueError`` naming the model when it has linear-attention layers, which
    ``what`` (a planner's name) cannot size; return quietly otherwise."""
    cfg = as_config(cfg)
    if not isinstance(what, str):
        raise TypeError(f"what must be a string naming the planner, got {type(what).__name__}")
    if not cfg.recurrent_layers:
        return
    name = cfg.name or "this model"
    raise ValueError(
        f"{what}: {name} has {cfg.recurrent_layers} linear-attention layers of "
        f"{cfg.layers} (linear_attention {cfg.linear_attention!r}), which keep a fixed "
        "state per sequence that vLLM V1 pages beside the KV cache with its own block "
        "size and padding (module gpulesson.planning.hybrid); this planner models only "
        "attention caches and would size the pool wrongly. Per sequence: "
        "inference.recurrent_state_bytes + inference.kv_cache_bytes")


v.guard_module(globals())
