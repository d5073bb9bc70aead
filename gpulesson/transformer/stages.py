"""Pipeline stages of a real model: exact parameters per stage, and the balanced split.

A pipeline of ``p`` stages gives each stage a run of consecutive layers. The first stage
also holds the input embedding (and BLOOM's norm after it, OPT's projection in), the last
one the final norm and the output layer (and OPT's projection out). With tied embeddings
the last stage keeps its own copy of the embedding matrix, whose gradients the two ends
add up (Narayanan et al. 2021, section 2.2), so the stages together hold ``V x d`` more
than the model.

Per stage ``s`` with layers ``i`` in it:

``P_s = [s = 0] * E_in + sum_i (attention + norms + MLP_i) + [s = p-1] * (N_final + H)``

where ``MLP_i`` is a dense MLP or a mixture-of-experts layer as
:meth:`~gpulesson.transformer.TransformerConfig.is_moe_layer` says (Llama 4 Maverick
alternates them). :func:`balanced_stage_layers` finds the split whose heaviest stage is
the lightest (a binary search on the heaviest stage's size with a greedy fill); for Llama
3.1 405B on 16 stages it is 7 layers on the first and last stages and 8 on the others,
the layout Meta trained with (Dubey et al. 2024, section 3.3.2).

Taught in: ``notebooks/distributed_math.ipynb`` (pipeline parallelism).
"""

from __future__ import annotations

from collections.abc import Sequence

from gpulesson import _validate as v
from gpulesson.transformer.config import TransformerConfig, as_config
from gpulesson.transformer.params import (
    _attention,
    _layer_norms,
    _linear_mixer,
    _mlp,
    _norm_size,
    _qk_norms,
    embedding_params,
    moe_breakdown,
    param_breakdown,
)

__all__ = ["balanced_stage_layers", "layer_params", "pipeline_stage_params"]

#: Most pipeline stages a split is computed for (one list entry each).
MAX_STAGES = 4096


def layer_params(cfg: TransformerConfig, index: int) -> int:
    """Parameters of layer ``index`` (0-based): attention (or a linear-attention layer's
    Gated DeltaNet), its norms and its MLP, which is a mixture of experts (router, routed
    and shared experts) or a dense MLP."""
    cfg = as_config(cfg)
    moe = cfg.is_moe_layer(index)
    if cfg.is_recurrent_layer(index):
        total = (_linear_mixer(cfg) + _layer_norms(cfg) - _qk_norms(cfg)
                 + _norm_size(cfg, cfg.linear_value_head_dim))
    else:
        total = _attention(cfg) + _layer_norms(cfg)
    if moe:
        parts = moe_breakdown(cfg)
        return total + sum(parts[k] for k in ("router", "routed_experts", "shared_experts")
                           ) // cfg.moe_layers
    return total + _mlp(cfg, cfg.ffn)  # type: ignore[arg-type]


def _ends(cfg: TransformerConfig, stages: int) -> tuple[int, int]:
    """Parameters the first stage adds (input side) and the last one (output side)."""
    e, d = cfg.embedding_dim, cfg.hidden
    projection = 0 if e == d else e * d  # type: ignore[operator]
    first = embedding_params(cfg) - projection  # token (+ position) embedding, proj. in
    if cfg.embedding_norm:
        first += _norm_size(cfg, d)
    last = param_breakdown(cfg)["lm_head"] + projection
    if cfg.final_norm:
        last += _norm_size(cfg, d)
    if cfg.tied_embeddings and stages > 1:
        last += cfg.vocab * e  # type: ignore[operator]  # the last stage's own copy
    return first, last


def pipeline_stage_params(cfg: TransformerConfig, layers_per_stage: Sequence[int]) -> list[int]:
    """Exact parameters each pipeline stage holds, for the given split of the layers.

    Parameters
    ----------
    cfg : TransformerConfig
        The model.
    layers_per_stage : sequence of int
        Layers of each stage, first to last; each at least 1, summing to ``cfg.layers``.

    Returns
    -------
    list of int
        One count per stage. They add up to :func:`~gpulesson.transformer.param_count`,
        plus ``V x e`` when the embeddings are tied and there is more than one stage (the
        last stage's copy of the embedding).

    Raises
    ------
    ValueError
        when a stage has no layer or the counts do not add up to ``cfg.layers``.
    """
    cfg = as_config(cfg)
    if isinstance(layers_per_stage, (str, bytes)) or not isinstance(layers_per_stage,
                                                                    Sequence):
        raise TypeError("layers_per_stage must be a sequence of layer counts, got "
                        f"{type(layers_per_stage).__name__}")
    counts = [v.positive_int("layers_per_stage", c) for c in layers_per_stage]
    if not counts or len(counts) > MAX_STAGES or sum(counts) != cfg.layers:
        raise ValueError(f"layers_per_stage must be 1 to {MAX_STAGES} stages whose layers add "
                         f"up to the model's {cfg.layers}, got {len(counts)} stages with "
                         f"{sum(counts)} layers")
    first, last = _ends(cfg, len(counts))
    out, start = [], 0
    for count in counts:
        out.append(sum(layer_params(cfg, i) for i in range(start, start + count)))
        start += count
    out[0] += first
    out[-1] += last
    return out


def _split(weights: list[int], first: int, last: int, stages: int, cap: int) -> list[int] | None:
    """Layers per stage, filling each stage up to ``cap`` from the left while leaving a
    layer for every later stage; ``None`` when ``cap`` cannot be met."""
    n, counts, i = len(weights), [], 0
    for s in range(stages):
        load = first if s == 0 else 0
        extra = last if s == stages - 1 else 0
        taken = 0
        while i < n and n - i > stages - 1 - s and load + weights[i] + extra <= cap:
            load += weights[i]
            i += 1
            taken += 1
        if taken == 0 or (s == stages - 1 and i < n):
            return None
        counts.append(taken)
    return counts


def balanced_stage_layers(cfg: TransformerConfig, pp: int) -> list[int]:
    """Layers per stage that make the heaviest of ``pp`` pipeline stages as light as it
    can be, the embedding on the first stage and the output layer on the last.

    Llama 3.1 405B (126 layers, 16 stages): ``[7, 8, ..., 8, 7]``, one layer fewer at each
    end, as Dubey et al. 2024 (section 3.3.2) balanced it. Ties go to the split that
    fills the early stages first.

    Raises
    ------
    ValueError
        when ``pp`` exceeds the number of layers (or :data:`MAX_STAGES`).
    """
    cfg = as_config(cfg)
    p = v.positive_int("pp", pp)
    if p > min(cfg.layers, MAX_STAGES):
        raise ValueError(f"pp must be at most the model's {cfg.layers} layers (and "
                         f"{MAX_STAGES}), got {p}")
    weights = [layer_params(cfg, i) for i in range(cfg.layers)]
    first, last = _ends(cfg, p)
    low = max(max(weights), first + weights[0], last + weights[-1])
    high = first + last + sum(weights)
    while low < high:  # the smallest heaviest stage a split can achieve
        mid = (low + high) // 2
        if _split(weights, first, last, p, mid) is None:
            low = mid + 1
        else:
            high = mid
    split = _split(weights, first, last, p, low)
    assert split is not None  # noqa: S101 - low is feasible by construction
    return split


v.guard_module(globals())
