"""Serving techniques of 2026: prefix caching, chunked prefill, disaggregated prefill and
decode, and speculative decoding (multi-token prediction included).

Every serving engine of 2026 (vLLM, SGLang, TensorRT-LLM, Dynamo) applies all four by
default or with one flag. Each changes one term of the roofline of
:mod:`gpulesson.inference`; none changes the physics.

Prefix caching
--------------
Requests that share the start of their prompt (a system prompt, the same retrieved
documents, the earlier turns of a chat) share its keys and values: the engine keeps the
KV blocks of a prefix it has computed and skips its prefill the next time. With ``P`` of
a ``T``-token prompt found in the cache, only the ``T - P`` new tokens pass through the
weights and each of them still attends to all ``T``:
``(T - P) * (2 * N_active + attention(T))`` FLOPs (:func:`prefill_flops_with_prefix`),
a share ``P / T`` less than :func:`gpulesson.inference.model_prefill_flops` counts. The
time to the first token (TTFT) falls in proportion until the step is short enough for
the weight read to set it (:func:`prefix_cache_saving`). The prefix's keys and values are
also stored once for every conversation that shares it, so more conversations fit
(:func:`conversations_with_shared_prefix`). DeepSeek reported that 56.3 % of
its API's input tokens hit its on-disk KV cache (342B of 608B in 24 hours, February
2025).

Chunked prefill
---------------
Without chunking a newcomer's prompt runs as a step of its own, and every conversation
already decoding waits for it: the gap between two of their tokens grows from one decode
step to a decode step plus the whole prefill. With a token budget ``C`` per step
(vLLM's ``max_num_batched_tokens``) the engine puts the ``B`` decode tokens first and
fills the rest with a chunk of ``C - B`` prompt tokens, so the worst gap is one hybrid
step (:func:`chunked_prefill`; Agrawal et al. 2024, Sarathi-Serve, arXiv 2403.02310).
The prompt then takes ``ceil(T / (C - B))`` steps: chunking trades a little TTFT for a
steady time per output token (TPOT).

Disaggregated prefill and decode
--------------------------------
Prefill is compute-bound and decode memory-bound; on separate pools of GPUs neither
stalls the other and each can be sized, parallelised and batched for its own bound
(Zhong et al. 2024, DistServe, arXiv 2401.09670; Qin et al. 2024, Mooncake). The pools
must carry the same requests per second, so for ``R`` requests per second of ``I`` input
and ``O`` output tokens: ``prefill GPUs = R * I / prefill tokens/s per GPU`` and
``decode GPUs = R * O / decode tokens/s per GPU`` (:func:`disaggregated_gpus`).

Speculative decoding
--------------------
A cheap draft proposes ``gamma`` tokens; the target model checks them all in one step and
keeps the longest prefix it agrees with, plus one token of its own. If each draft token is
accepted with probability ``alpha`` (independently), a step yields
``(1 - alpha^(gamma + 1)) / (1 - alpha)`` tokens on average
(:func:`expected_tokens_per_step`; Leviathan, Kalman and Matias 2023, "Fast Inference
from Transformers via Speculative Decoding", ICML, arXiv 2211.17192, equation 1). With a
draft step costing ``c`` target steps, the speed-up is that count over ``gamma * c + 1``
(:func:`speculative_speedup`, their Theorem 3.8), and some draft length pays exactly when
``alpha > c`` (their Corollary 3.9; :func:`best_draft_length`). The verification step is
only "free" while the target step is memory-bound: at a batch where it is compute-bound,
checking ``gamma + 1`` tokens per sequence costs ``gamma + 1`` times the arithmetic
(:func:`speculative_speedup_at_batch`). DeepSeek-V3's multi-token prediction is the case
``gamma = 1`` with a one-layer draft built into the model: 85-90 % acceptance of the
second token, 1.8 times the tokens per second (DeepSeek-AI 2024, arXiv 2412.19437,
section 5.4.3).

Taught in: ``notebooks/inference_and_kv_cache.ipynb`` (section 9, "Serving in 2026").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpulesson import _validate as v
from gpulesson import inference, memory
from gpulesson.transformer import TransformerConfig, active_params, as_config, param_count

__all__ = [
    "ChunkedPrefill",
    "DisaggregatedPools",
    "PrefixCacheSaving",
    "best_draft_length",
    "chunked_prefill",
    "conversations_with_shared_prefix",
    "disaggregated_gpus",
    "expected_tokens_per_step",
    "prefill_flops_with_prefix",
    "prefill_time_with_prefix",
    "prefix_cache_saving",
    "speculative_speedup",
    "speculative_speedup_at_batch",
]


# ---------------------------------------------------------------------------------------
# Prefix caching

def _cached(prompt_tokens: object, cached_tokens: object) -> tuple[int, int]:
    t = v.positive_int("prompt_tokens", prompt_tokens)
    p = v.nonneg_int("cached_tokens", cached_tokens)
    if p >= t:
        raise ValueError(
            f"cached_tokens must be between 0 and prompt_tokens - 1 ({t - 1}): the last "
            f"prompt token is always computed, to produce the first new token; got {p}")
    return t, p


def prefill_flops_with_prefix(cfg: TransformerConfig, prompt_tokens: int, *,
                              cached_tokens: int, batch: int = 1) -> float:
    """Prefill FLOPs of a prompt whose first ``cached_tokens`` tokens are in the prefix cache.

    ``(T - P) * (2 * N_active + attention(T))``: the ``T - P`` new tokens pass through the
    weights and each attends to the whole prompt, cached part included (the full score
    matrix, as :func:`gpulesson.inference.model_prefill_flops` counts it, which this is at
    ``P = 0``). The saving is therefore exactly the cached share ``P / T``. Times ``batch``
    prompts.

    Raises
    ------
    ValueError
        when ``cached_tokens`` is not between 0 and ``prompt_tokens - 1``.
    """
    cfg = as_config(cfg)
    t, p = _cached(prompt_tokens, cached_tokens)
    b = v.positive_int("batch", batch)
    return b * (t - p) * inference.prompt_token_flops(cfg, t)


def prefill_time_with_prefix(cfg: TransformerConfig, prompt_tokens: int, *,
                             cached_tokens: int, peak_flops: float, bandwidth: float,
                             bytes_per_param: float = 2,
                             kv_bytes_per_element: float = 2) -> float:
    """Roofline time to the first token with ``cached_tokens`` of the prompt cached (s).

    ``max(prefill_flops_with_prefix / peak, (weights read + cached KV) / bandwidth)``: the
    new tokens' FLOPs (DeepSeek Sparse Attention's picked keys past the top-k as its
    kernels run them, latent attention absorbed, as
    :func:`gpulesson.inference.model_prefill_time` counts them), against the weights they
    route to
    (:func:`gpulesson.inference.decode_weight_bytes`) plus the cached prefix's keys and
    values, which their attention reads (:func:`gpulesson.inference.decode_kv_read_bytes`:
    a sparse-attention model's indexer keys and the latents its new tokens pick, at most
    ``topk`` each). With nothing cached it is
    :func:`gpulesson.inference.model_prefill_time`; with all but the last token cached it
    is about one decode step.
    """
    cfg = as_config(cfg)
    t, p = _cached(prompt_tokens, cached_tokens)
    peak = v.positive_number("peak_flops", peak_flops)
    bw = v.positive_number("bandwidth", bandwidth)
    # prefill_flops_with_prefix's tokens, as the kernels run them
    flops = (t - p) * inference.prompt_token_flops(cfg, t, as_run=True)
    read = inference.decode_weight_bytes(cfg, batch=t - p, bytes_per_param=bytes_per_param)
    if p:
        read += inference.decode_kv_read_bytes(cfg, context=p, new_tokens=t - p,
                                               bytes_per_element=kv_bytes_per_element)
    return max(flops / peak, read / bw)


@dataclass(frozen=True)
class PrefixCacheSaving:
    """What a prefix-cache hit saves on one prompt.

    ``cached_tokens`` of the prompt found in the cache; ``flops`` and ``flops_without``
    the prefill FLOPs with and without the cache, ``flops_saved`` the share saved;
    ``ttft`` and ``ttft_without`` the roofline times to the first token (seconds),
    ``ttft_saved`` their difference.
    """

    cached_tokens: int
    flops: float
    flops_without: float
    flops_saved: float
    ttft: float
    ttft_without: float
    ttft_saved: float


def prefix_cache_saving(cfg: TransformerConfig, prompt_tokens: int, *, hit_rate: float,
                        peak_flops: float, bandwidth: float, bytes_per_param: float = 2,
                        kv_bytes_per_element: float = 2) -> PrefixCacheSaving:
    """Prefill FLOPs and time to the first token saved when a share ``hit_rate`` of the
    prompt's tokens is found in the prefix cache.

    The cached tokens are ``floor(hit_rate * T)``, at most ``T - 1`` (the last token is
    always computed); the FLOPs come from :func:`prefill_flops_with_prefix` and the times
    from :func:`prefill_time_with_prefix`. A hit rate is a share of *tokens*, as vLLM's
    "prefix cache hit rate" and DeepSeek's "56.3 % of input tokens hit the on-disk KV
    cache" count it.
    """
    cfg = as_config(cfg)
    t = v.positive_int("prompt_tokens", prompt_tokens)
    h = v.fraction("hit_rate", hit_rate)
    p = min(math.floor(h * t), t - 1)
    gpu = dict(peak_flops=peak_flops, bandwidth=bandwidth, bytes_per_param=bytes_per_param,
               kv_bytes_per_element=kv_bytes_per_element)
    flops = prefill_flops_with_prefix(cfg, t, cached_tokens=p)
    without = prefill_flops_with_prefix(cfg, t, cached_tokens=0)
    ttft = prefill_time_with_prefix(cfg, t, cached_tokens=p, **gpu)
    ttft_without = prefill_time_with_prefix(cfg, t, cached_tokens=0, **gpu)
    return PrefixCacheSaving(cached_tokens=p, flops=flops, flops_without=without,
                             flops_saved=1.0 - flops / without, ttft=ttft,
                             ttft_without=ttft_without, ttft_saved=ttft_without - ttft)


def conversations_with_shared_prefix(cfg: TransformerConfig, *, context: int,
                                     shared_tokens: int, gpu_memory: float,
                                     precision: str = "bf16", kv_dtype: str = "bf16",
                                     overhead: float = 2e9) -> int:
    """Most conversations of ``context`` tokens that fit when their first ``shared_tokens``
    tokens are one cached prefix, stored once.

    The largest ``B`` with
    ``weights + (KV(T) - KV(T - P)) + B * KV(T - P) + overhead <= gpu_memory``
    (:func:`gpulesson.memory.inference_memory`, :func:`gpulesson.memory.fits`), where
    ``KV(n)`` is :func:`gpulesson.inference.kv_cache_bytes` of ``n`` tokens: each
    conversation holds its own ``T - P`` tokens, and the prefix is stored once. In a
    sliding-window layer a conversation keeps at most its window, so once its own tokens
    fill the window the prefix drops out of that layer: ``KV(T) - KV(T - P)`` counts only
    the part still in use (all ``P`` tokens without windows). At ``B = 1`` the total is
    ``KV(T)``; with no shared tokens it is
    :func:`gpulesson.inference.max_concurrent_sequences`. Servers share the prefix's KV
    blocks between requests (vLLM's automatic prefix caching, SGLang's RadixAttention).

    Raises
    ------
    ValueError
        when ``shared_tokens`` is not between 0 and ``context - 1``, or for an unknown
        precision or a non-positive size.
    """
    cfg = as_config(cfg)
    t = v.positive_int("context", context)
    p = v.nonneg_int("shared_tokens", shared_tokens)
    if p >= t:
        raise ValueError(f"shared_tokens must be between 0 and context - 1 ({t - 1}), got {p}")
    mem = v.positive_number("gpu_memory", gpu_memory)
    if not p:
        return inference.max_concurrent_sequences(cfg, context=t, gpu_memory=mem,
                                                  precision=precision, kv_dtype=kv_dtype,
                                                  overhead=overhead)
    b = inference.kv_bytes_per_element(cfg, kv_dtype)
    n = param_count(cfg)
    own = inference.kv_cache_bytes(cfg, seq_len=t - p, bytes_per_element=b)
    shared = inference.kv_cache_bytes(cfg, seq_len=t, bytes_per_element=b) - own

    def fits(batch: int) -> bool:
        need = memory.inference_memory(n, precision=precision, overhead_bytes=overhead,
                                       kv_cache_bytes=shared + batch * own).total
        return memory.fits(need, mem)

    if not fits(1):
        return 0
    free = mem - memory.inference_memory(n, precision=precision, overhead_bytes=overhead,
                                         kv_cache_bytes=shared).total
    batch = max(1, math.floor(free / own))
    while not fits(batch):       # the closed form, corrected for rounding
        batch -= 1
    while fits(batch + 1):
        batch += 1
    return batch


# ---------------------------------------------------------------------------------------
# Chunked prefill

@dataclass(frozen=True)
class ChunkedPrefill:
    """A newcomer's prompt arriving while ``decode_batch`` conversations decode.

    ``decode_step``: one decode step alone (the steady time per output token);
    ``gap_unchunked``: the longest gap between two tokens of a decoding conversation when
    the prompt runs as a step of its own (a decode step plus the whole prefill);
    ``gap_chunked``: the same gap with chunking (one hybrid step: the decode tokens plus a
    chunk of the prompt); ``ttft_unchunked`` and ``ttft_chunked``: the newcomer's time to
    its first token; ``chunk`` the prompt tokens per step and ``steps`` how many steps the
    prompt takes when chunked. Seconds.
    """

    decode_step: float
    gap_unchunked: float
    gap_chunked: float
    ttft_unchunked: float
    ttft_chunked: float
    chunk: int
    steps: int


def chunked_prefill(cfg: TransformerConfig, *, prompt_tokens: int, token_budget: int,
                    decode_batch: int, context: int, peak_flops: float, bandwidth: float,
                    bytes_per_param: float = 2,
                    kv_bytes_per_element: float = 2) -> ChunkedPrefill:
    """Worst gap between two output tokens with and without a chunk budget (roofline).

    A step that carries ``B`` decode tokens (each with a ``context``-token cache) and ``c``
    prompt tokens takes

    ``max((B * f_dec + c * f_pre) / peak, (W(B + c) + B * KV(context)) / bandwidth)``

    with ``f_dec`` a decode token's FLOPs (``2 N_active`` and attention to its context),
    ``f_pre`` a prompt token's (``2 N_active`` and attention to the whole prompt, the full
    score matrix as :func:`gpulesson.inference.model_prefill_time` counts it: DeepSeek
    Sparse Attention's picked keys absorbed past the top-k) and
    ``W(n)`` the weights ``n`` tokens read (:func:`gpulesson.inference.decode_weight_bytes`).
    The prompt's own keys and values, read by its later chunks, are left out: prefill is
    compute-bound.

    * Unchunked, the prompt is a step of its own (``c = T``, ``B = 0``): a decoding
      conversation waits ``step(B, 0) + step(0, T)`` between two tokens, and the newcomer's
      TTFT is the prefill, :func:`gpulesson.inference.model_prefill_time`.
    * Chunked with ``token_budget`` ``C`` (vLLM's ``max_num_batched_tokens``), decode
      tokens go first and each step takes ``c = min(C - B, T)`` prompt tokens: the gap is
      ``step(B, c)`` and the prompt needs ``ceil(T / c)`` steps, its TTFT their sum.

    Agrawal et al. 2024 (Sarathi-Serve, OSDI, arXiv 2403.02310): chunked prefills and
    "stall-free" hybrid batches; vLLM enables chunked prefill by default from its V1
    engine.

    Raises
    ------
    ValueError
        when ``token_budget`` is not larger than ``decode_batch`` (a step must carry at
        least one prompt token), or for any non-positive size.
    """
    cfg = as_config(cfg)
    t, budget, b, ctx = v.positive_ints(prompt_tokens=prompt_tokens, token_budget=token_budget,
                                        decode_batch=decode_batch, context=context)
    peak = v.positive_number("peak_flops", peak_flops)
    bw = v.positive_number("bandwidth", bandwidth)
    bpp = v.positive_number("bytes_per_param", bytes_per_param)
    if budget <= b:
        raise ValueError(f"token_budget must be larger than decode_batch ({b}), so that a "
                         f"step carries at least one prompt token; got {budget}")
    # a decoding token attends to its ctx - 1 cached tokens and itself, as the engines
    # decode (latent attention absorbed, a chunked layer's current chunk)
    f_dec = 2.0 * active_params(cfg) + inference.decode_attention_flops(
        cfg, context_len=ctx - 1)
    f_pre = inference.prompt_token_flops(cfg, t, as_run=True)
    kv = inference.decode_kv_read_bytes(cfg, context=ctx,
                                        bytes_per_element=kv_bytes_per_element)

    def step(decoding: int, prompt: int) -> float:
        flops = decoding * f_dec + prompt * f_pre
        read = (inference.decode_weight_bytes(cfg, batch=decoding + prompt,
                                              bytes_per_param=bpp) + decoding * kv)
        return max(flops / peak, read / bw)

    chunk = min(budget - b, t)
    steps = -(-t // chunk)
    last = t - (steps - 1) * chunk
    decode_alone, prefill = step(b, 0), step(0, t)
    return ChunkedPrefill(
        decode_step=decode_alone, gap_unchunked=decode_alone + prefill,
        gap_chunked=step(b, chunk), ttft_unchunked=prefill,
        ttft_chunked=(steps - 1) * step(b, chunk) + step(b, last), chunk=chunk, steps=steps)


# ---------------------------------------------------------------------------------------
# Disaggregated prefill and decode

@dataclass(frozen=True)
class DisaggregatedPools:
    """GPUs (or nodes: the unit of the throughputs given) each pool needs, and
    ``ratio``, prefill GPUs per decode GPU."""

    prefill_gpus: float
    decode_gpus: float
    ratio: float


def disaggregated_gpus(*, request_rate: float, input_tokens: float, output_tokens: float,
                       prefill_tokens_per_second: float,
                       decode_tokens_per_second: float) -> DisaggregatedPools:
    """Prefill and decode pools that keep up with a workload.

    ``prefill = R * I / prefill_rate`` and ``decode = R * O / decode_rate``, with ``R``
    requests per second of ``I`` input and ``O`` output tokens (averages), and each pool's
    tokens per second per GPU (or per node) at its own operating point: prefill at its
    compute-bound rate, decode at the batch its TPOT target allows. Fractional: round up
    for a deployment. Input tokens served from a prefix cache need no prefill; count them
    in the rate (as DeepSeek's 73.7k tokens/s per node does) or leave them out of ``I``.

    DeepSeek's V3/R1 service over 24 hours from 27 February 2025 (DeepSeek-AI,
    "DeepSeek-V3/R1 Inference System Overview", open-infra-index, Day 6): 608B input and
    168B output tokens at 73.7k input tokens/s per H800 node in prefill and 14.8k output
    tokens/s per node in decode, an average of 226.75 nodes in service.
    """
    r = v.positive_number("request_rate", request_rate)
    i = v.positive_number("input_tokens", input_tokens)
    o = v.positive_number("output_tokens", output_tokens)
    pre = v.positive_number("prefill_tokens_per_second", prefill_tokens_per_second)
    dec = v.positive_number("decode_tokens_per_second", decode_tokens_per_second)
    prefill, decode = r * i / pre, r * o / dec
    return DisaggregatedPools(prefill_gpus=prefill, decode_gpus=decode,
                              ratio=prefill / decode)


# ---------------------------------------------------------------------------------------
# Speculative decoding

def _alpha_gamma(acceptance_rate: object, draft_tokens: object) -> tuple[float, int]:
    return (v.fraction("acceptance_rate", acceptance_rate),
            v.nonneg_int("draft_tokens", draft_tokens))


def expected_tokens_per_step(*, acceptance_rate: float, draft_tokens: int) -> float:
    """Tokens one verification step yields on average: ``(1 - a^(g+1)) / (1 - a)``.

    The draft proposes ``g`` tokens; each is accepted with probability ``a``
    (independently) until the first rejection, and the target adds one token of its own
    (the correction, or the next token when all ``g`` pass): ``1 + a + ... + a^g``.
    ``g + 1`` when ``a = 1``; 1 when ``g = 0`` (plain decoding). Leviathan et al. 2023,
    equation 1. DeepSeek-V3's multi-token prediction (``g = 1``, ``a`` = 0.85 to 0.9):
    1.85 to 1.9 tokens per step.
    """
    a, g = _alpha_gamma(acceptance_rate, draft_tokens)
    if a == 1.0:
        return float(g + 1)
    return (1.0 - a ** (g + 1)) / (1.0 - a)


def speculative_speedup(*, acceptance_rate: float, draft_tokens: int,
                        draft_cost: float) -> float:
    """Speed-up of speculative decoding while verification costs one target step:
    ``(1 - a^(g+1)) / ((1 - a) * (g*c + 1))``.

    ``c`` (``draft_cost``) is the time of one draft step over one target step. Leviathan et
    al. 2023, Theorem 3.8 (the expected improvement in walltime), which assumes the
    target checks ``g + 1`` tokens in the time of one: true while a step is memory-bound
    (:func:`speculative_speedup_at_batch` drops the assumption). At ``g = 1``:
    ``(1 + a) / (1 + c)`` (their Corollary 3.9).
    """
    g = v.nonneg_int("draft_tokens", draft_tokens)
    c = v.nonneg_number("draft_cost", draft_cost)
    tokens = expected_tokens_per_step(acceptance_rate=acceptance_rate, draft_tokens=g)
    return tokens / (g * c + 1.0)


def best_draft_length(*, acceptance_rate: float, draft_cost: float,
                      max_draft_tokens: int = 16) -> int:
    """The draft length ``g`` in ``0 .. max_draft_tokens`` with the largest
    :func:`speculative_speedup`; 0 when no draft pays (the smallest ``g`` on a tie).

    Leviathan et al. 2023, Corollary 3.9 and Figure 3: some ``g`` gives a speed-up exactly
    when the acceptance rate exceeds the draft's cost, ``a > c``; the best ``g`` grows as
    ``a`` rises and ``c`` falls.
    """
    v.fraction("acceptance_rate", acceptance_rate)
    v.nonneg_number("draft_cost", draft_cost)
    top = v.positive_int("max_draft_tokens", max_draft_tokens)
    if top > 1024:
        raise ValueError(f"max_draft_tokens must be at most 1024, got {top}")
    speed = [speculative_speedup(acceptance_rate=acceptance_rate, draft_tokens=g,
                                 draft_cost=draft_cost) for g in range(top + 1)]
    return max(range(top + 1), key=lambda g: (speed[g], -g))


def speculative_speedup_at_batch(*, acceptance_rate: float, draft_tokens: int,
                                 draft_cost: float, n_params: float, weight_bytes: float,
                                 batch: int, kv_bytes_per_sequence: float,
                                 peak_flops: float, bandwidth: float,
                                 verify_kv_bytes_per_sequence: float | None = None) -> float:
    """Speed-up of speculative decoding for ``batch`` sequences on the roofline.

    ``E * t(B) / (t_verify(B) + g * c * t(B))``: ``E`` the tokens per step
    (:func:`expected_tokens_per_step`), ``t(B)`` a plain decode step
    (:func:`gpulesson.inference.decode_step_time`), ``t_verify(B)`` the step that checks
    ``g + 1`` tokens of each sequence (``2 N (g + 1) B`` FLOPs, the same weights and KV
    reads), and the draft's ``g`` steps at ``c`` target steps each. While the step is
    memory-bound ``t_verify = t`` and this is :func:`speculative_speedup`; once the
    verification is compute-bound it costs up to ``g + 1`` times a step and the
    speed-up falls below 1. Speculation pays at small batches and costs at large ones
    (Liu et al. 2024, "Optimizing Speculative Decoding for Serving Large Language Models
    Using Goodput", arXiv 2406.14066).

    ``verify_kv_bytes_per_sequence`` is the KV bytes the verification step reads per
    sequence, by default the plain step's ``kv_bytes_per_sequence``. They differ with
    sparse attention, where each of the ``g + 1`` tokens reads the latents of its own
    top-k: :func:`gpulesson.inference.decode_kv_read_bytes` with ``new_tokens=g + 1``.
    """
    g = v.nonneg_int("draft_tokens", draft_tokens)
    c = v.nonneg_number("draft_cost", draft_cost)
    n = v.positive_number("n_params", n_params)
    tokens = expected_tokens_per_step(acceptance_rate=acceptance_rate, draft_tokens=g)
    gpu = dict(weight_bytes=weight_bytes, batch=batch,
               kv_bytes_per_sequence=kv_bytes_per_sequence, peak_flops=peak_flops,
               bandwidth=bandwidth)
    plain = inference.decode_step_time(n_params=n, **gpu)
    if verify_kv_bytes_per_sequence is not None:
        gpu["kv_bytes_per_sequence"] = v.nonneg_number("verify_kv_bytes_per_sequence",
                                                       verify_kv_bytes_per_sequence)
    verify = inference.decode_step_time(n_params=n * (g + 1), **gpu)  # g + 1 tokens each
    return tokens * plain / (verify + g * c * plain)


v.guard_module(globals())
