"""Inference: prefill and decode FLOPs, the KV cache, and the bandwidth ceiling.

KV cache
--------
Every layer keeps a key and a value vector per KV head for every token of every
sequence: ``2 * layers * kv_heads * head_dim * seq_len * batch * bytes_per_element``.
With grouped-query attention (``kv_heads < heads``) this is ``heads / kv_heads`` times
smaller than the multi-head formula that uses the hidden size (which is right only when
``kv_heads == heads``). Llama-2-7B in FP16: 512 KiB per token; Llama-3-8B: 128 KiB.

Prefill and decode
------------------
A forward pass costs ``2N`` FLOPs per token for the weights. Attention adds
``4 * L * H * Q`` FLOPs per token per token of context (``QK^T`` and ``AV``; the forward
third of PaLM's ``12LHQT``). Prefill of a ``T``-token prompt is therefore
``2*N*T + 4*L*H*Q*T^2``: linear in ``T`` until ``T`` approaches
``N / (2*L*H*Q)`` (about 26K tokens for Llama-2-7B), quadratic only beyond.

Decode produces one token per sequence per step and must read every weight once per
step plus each sequence's KV cache, so at small batch it is memory-bound: the ceiling
is ``batch * bandwidth / (weight_bytes + batch * kv_bytes_per_sequence)`` tokens/s. It
becomes compute-bound when ``2*N*batch / peak >= weight_bytes / bandwidth``, i.e. at
``batch = peak * bytes_per_param / (2 * bandwidth)`` (ignoring the KV reads).

Taught in: ``notebooks/inference_and_kv_cache.ipynb``.
"""

from __future__ import annotations

from gpulesson import _validate as v
from gpulesson.transformer import TransformerConfig

__all__ = [
    "attention_crossover_tokens",
    "decode_ceiling_tokens_per_second",
    "decode_compute_bound_batch",
    "decode_flops",
    "decode_step_time",
    "kv_cache_bytes",
    "kv_cache_bytes_per_token",
    "prefill_flops",
    "prefill_time",
]


def _cfg(cfg: object) -> TransformerConfig:
    if not isinstance(cfg, TransformerConfig):
        raise TypeError(
            f"cfg must be a TransformerConfig (see transformer.preset), got {type(cfg).__name__}"
        )
    return cfg


def kv_cache_bytes_per_token(cfg: TransformerConfig, *, bytes_per_element: float = 2) -> int:
    """KV-cache bytes for one token of one sequence: ``2 * L * kv_heads * head_dim * b``."""
    cfg = _cfg(cfg)
    b = v.positive_number("bytes_per_element", bytes_per_element)
    return v.tensor_bytes(2 * cfg.layers * cfg.kv_dim, b)


def kv_cache_bytes(
    cfg: TransformerConfig, *, seq_len: int, batch: int = 1, bytes_per_element: float = 2
) -> int:
    """KV-cache bytes: ``2 * layers * kv_heads * head_dim * seq_len * batch * bytes``.

    Parameters
    ----------
    cfg : TransformerConfig
        The model (its ``kv_heads`` and ``head_dim`` are used, not ``hidden``).
    seq_len : int
        Tokens held per sequence (prompt + generated so far).
    batch : int
        Concurrent sequences.
    bytes_per_element : float
        2 for FP16/BF16 caches, 1 for FP8/INT8.
    """
    cfg = _cfg(cfg)
    s = v.positive_int("seq_len", seq_len)
    n = v.positive_int("batch", batch)
    b = v.positive_number("bytes_per_element", bytes_per_element)
    return v.tensor_bytes(2 * cfg.layers * cfg.kv_dim * s * n, b)


def _shape(layers: int | None, heads: int | None, head_dim: int | None) -> int:
    """``layers * heads * head_dim`` or 0 when no shape is given."""
    given = [x is not None for x in (layers, heads, head_dim)]
    if not any(given):
        return 0
    if not all(given):
        raise ValueError(
            "give all of layers, heads and head_dim for the attention term, or none "
            f"(got layers={layers}, heads={heads}, head_dim={head_dim})"
        )
    return (
        v.positive_int("layers", layers)
        * v.positive_int("heads", heads)
        * v.positive_int("head_dim", head_dim)
    )


def prefill_flops(
    n_params: float,
    tokens: int,
    *,
    layers: int | None = None,
    heads: int | None = None,
    head_dim: int | None = None,
    batch: int = 1,
) -> float:
    """Forward FLOPs to process a ``tokens``-long prompt: ``2*N*T`` (+ ``4*L*H*Q*T^2``).

    The attention term is added when ``layers``, ``heads`` and ``head_dim`` are given (full
    score matrix, as PaLM counts it; a causal kernel that skips the masked half does
    about half of it). Multiplied by ``batch`` prompts.
    """
    n = v.positive_number("n_params", n_params)
    t = v.positive_int("tokens", tokens)
    b = v.positive_int("batch", batch)
    lhq = _shape(layers, heads, head_dim)
    return b * (2.0 * n * t + 4.0 * lhq * t * t)


def decode_flops(
    n_params: float,
    new_tokens: int,
    *,
    layers: int | None = None,
    heads: int | None = None,
    head_dim: int | None = None,
    context_len: int = 0,
    batch: int = 1,
) -> float:
    """Forward FLOPs to generate ``new_tokens`` tokens: ``2*N`` per token.

    With the attention shape, each new token also attends to every cached token and
    itself: the ``i``-th new token (1-based) costs ``4*L*H*Q*(context_len + i)`` more.
    """
    n = v.positive_number("n_params", n_params)
    k = v.positive_int("new_tokens", new_tokens)
    c = v.nonneg_int("context_len", context_len)
    b = v.positive_int("batch", batch)
    lhq = _shape(layers, heads, head_dim)
    attended = k * c + k * (k + 1) // 2
    return b * (2.0 * n * k + 4.0 * lhq * attended)


def decode_ceiling_tokens_per_second(
    *,
    weight_bytes: float,
    bandwidth: float,
    batch: int = 1,
    kv_bytes_per_sequence: float = 0,
) -> float:
    """Upper bound on aggregate decode tokens/s when memory bandwidth is the limit.

    Each step reads all weights once and every sequence's KV cache, and yields one token
    per sequence: ``batch * bandwidth / (weight_bytes + batch * kv_bytes_per_sequence)``.
    A 7B model in FP16 (14 GB) on 3.35 TB/s: at most ~239 tokens/s at batch 1.
    """
    w = v.positive_number("weight_bytes", weight_bytes)
    bw = v.positive_number("bandwidth", bandwidth)
    b = v.positive_int("batch", batch)
    kv = v.nonneg_number("kv_bytes_per_sequence", kv_bytes_per_sequence)
    return b * bw / (w + b * kv)


def decode_compute_bound_batch(*, peak_flops: float, bandwidth: float,
                               bytes_per_param: float) -> float:
    """Batch at which a decode step's weight FLOPs take as long as reading the weights.

    ``peak_flops * bytes_per_param / (2 * bandwidth)`` (KV-cache reads ignored; they only
    push the point further out). H100 SXM, BF16 weights: about 295.
    """
    p = v.positive_number("peak_flops", peak_flops)
    bw = v.positive_number("bandwidth", bandwidth)
    bpp = v.positive_number("bytes_per_param", bytes_per_param)
    return p * bpp / (2.0 * bw)


def decode_step_time(
    *,
    n_params: float,
    weight_bytes: float,
    batch: int,
    kv_bytes_per_sequence: float,
    peak_flops: float,
    bandwidth: float,
) -> float:
    """Roofline time of one decode step for ``batch`` sequences (seconds).

    ``max(2*N*batch / peak_flops, (weight_bytes + batch*kv_bytes_per_sequence) / bandwidth)``.
    Attention FLOPs are left out (small next to ``2N`` at moderate context lengths).
    """
    n = v.positive_number("n_params", n_params)
    w = v.positive_number("weight_bytes", weight_bytes)
    b = v.positive_int("batch", batch)
    kv = v.nonneg_number("kv_bytes_per_sequence", kv_bytes_per_sequence)
    p = v.positive_number("peak_flops", peak_flops)
    bw = v.positive_number("bandwidth", bandwidth)
    return max(2.0 * n * b / p, (w + b * kv) / bw)


def prefill_time(
    *,
    n_params: float,
    tokens: int,
    peak_flops: float,
    bandwidth: float,
    weight_bytes: float,
    layers: int | None = None,
    heads: int | None = None,
    head_dim: int | None = None,
    batch: int = 1,
) -> float:
    """Roofline time of a prefill (seconds): ``max(prefill_flops / peak, weights / bw)``.

    The weights are read once for the whole prompt, so prefill is compute-bound for all
    but very short prompts.
    """
    f = prefill_flops(n_params, tokens, layers=layers, heads=heads, head_dim=head_dim,
                      batch=batch)
    p = v.positive_number("peak_flops", peak_flops)
    bw = v.positive_number("bandwidth", bandwidth)
    w = v.positive_number("weight_bytes", weight_bytes)
    return max(f / p, w / bw)


def attention_crossover_tokens(n_params: float, *, layers: int, heads: int,
                               head_dim: int) -> float:
    """Prompt length at which prefill's attention FLOPs equal its weight FLOPs.

    ``4*L*H*Q*T^2 = 2*N*T`` gives ``T = N / (2*L*H*Q)``. Below it prefill cost grows about
    linearly with the prompt; for Llama-2-7B it is about 25,700 tokens.
    """
    n = v.positive_number("n_params", n_params)
    lhq = _shape(layers, heads, head_dim)
    return n / (2.0 * lhq)
