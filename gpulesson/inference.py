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
``batch = peak * bytes_per_param / (2 * bandwidth)`` (ignoring the KV reads). Each step
yields one token per sequence: ``batch / step_time`` tokens/s in all, ``1 / step_time`` for
each user (:func:`decode_speed`): batching raises the first and lowers the second.

How many users fit
------------------
:func:`max_concurrent_sequences`: the largest batch whose KV caches fit beside the
weights in a GPU's memory (:func:`gpulesson.memory.inference_memory` and
:func:`gpulesson.memory.fits`).

Taught in: ``notebooks/inference_and_kv_cache.ipynb``.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpulesson import _validate as v
from gpulesson import memory
from gpulesson.transformer import TransformerConfig, param_count

__all__ = [
    "DecodeSpeed",
    "attention_crossover_tokens",
    "decode_ceiling_tokens_per_second",
    "decode_compute_bound_batch",
    "decode_flops",
    "decode_speed",
    "decode_step_time",
    "kv_cache_bytes",
    "kv_cache_bytes_per_token",
    "max_concurrent_sequences",
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


def _step_bytes(weight_bytes: float, batch: int,
                kv_bytes_per_sequence: float) -> tuple[int, float]:
    """``(batch, bytes one decode step reads)``: every weight once and each sequence's KV
    cache, ``weight_bytes + batch * kv_bytes_per_sequence``."""
    w = v.positive_number("weight_bytes", weight_bytes)
    b = v.positive_int("batch", batch)
    kv = v.nonneg_number("kv_bytes_per_sequence", kv_bytes_per_sequence)
    return b, w + b * kv


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
    b, read = _step_bytes(weight_bytes, batch, kv_bytes_per_sequence)
    bw = v.positive_number("bandwidth", bandwidth)
    return b * bw / read


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
    b, read = _step_bytes(weight_bytes, batch, kv_bytes_per_sequence)
    p = v.positive_number("peak_flops", peak_flops)
    bw = v.positive_number("bandwidth", bandwidth)
    return max(2.0 * n * b / p, read / bw)


@dataclass(frozen=True)
class DecodeSpeed:
    """One decode step on the roofline and the speeds it gives.

    ``step_time`` in seconds; ``tokens_per_second`` for all sequences together
    (``batch / step_time``, the throughput a server sells); ``per_sequence`` for each one
    (``1 / step_time``, the speed one user sees).
    """

    step_time: float
    tokens_per_second: float
    per_sequence: float


def decode_speed(
    *,
    n_params: float,
    weight_bytes: float,
    batch: int,
    kv_bytes_per_sequence: float,
    peak_flops: float,
    bandwidth: float,
) -> DecodeSpeed:
    """Total and per-sequence decode tokens/s from :func:`decode_step_time`.

    Every step yields one token for each of the ``batch`` sequences:
    ``tokens_per_second = batch / t_step`` and ``per_sequence = 1 / t_step``. Llama 3 8B
    in BF16 on an H100 SXM with 8,192-token contexts: 209 tokens/s alone without a cache
    read, about 43 per user once the memory is full of caches. Taught in
    ``inference_and_kv_cache`` and ``cost_economics``.
    """
    b = v.positive_int("batch", batch)
    step = decode_step_time(n_params=n_params, weight_bytes=weight_bytes, batch=b,
                            kv_bytes_per_sequence=kv_bytes_per_sequence,
                            peak_flops=peak_flops, bandwidth=bandwidth)
    return DecodeSpeed(step_time=step, tokens_per_second=b / step, per_sequence=1 / step)


def max_concurrent_sequences(cfg: TransformerConfig, *, context: int, gpu_memory: float,
                             precision: str = "bf16", kv_dtype: str = "bf16",
                             overhead: float = 2e9) -> int:
    """Most sequences of ``context`` tokens whose KV caches fit beside the weights.

    The largest ``batch`` for which :func:`gpulesson.memory.inference_memory` (weights at
    ``precision`` + :func:`kv_cache_bytes` of the batch at ``kv_dtype`` + ``overhead``
    bytes) :func:`fits <gpulesson.memory.fits>` in ``gpu_memory`` bytes; 0 when not even one
    sequence does. No formula of its own: doubling, then bisection, on the calculators'
    verdict. Llama 3 8B in BF16 on an 80 GB H100 with 8,192-token contexts and 2 GB of
    overhead: 57. Taught in ``inference_and_kv_cache`` ("How many users fit?").

    Raises
    ------
    ValueError
        naming the argument (a non-positive context or memory, an unknown precision ...).
    """
    cfg = _cfg(cfg)
    ctx = v.positive_int("context", context)
    mem = v.positive_number("gpu_memory", gpu_memory)
    n = param_count(cfg)
    kv_bytes = memory.precision_bytes(kv_dtype)
    memory.precision_bytes(precision)  # refuse an unknown name before searching

    def fits(batch: int) -> bool:
        kv = kv_cache_bytes(cfg, seq_len=ctx, batch=batch, bytes_per_element=kv_bytes)
        need = memory.inference_memory(n, precision=precision, kv_cache_bytes=kv,
                                       overhead_bytes=overhead).total
        return memory.fits(need, mem)

    if not fits(1):
        return 0
    low, high = 1, 2
    while fits(high):
        low, high = high, high * 2
    while high - low > 1:  # fits(low) and not fits(high)
        mid = (low + high) // 2
        low, high = (mid, high) if fits(mid) else (low, mid)
    return low


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


v.guard_module(globals())
