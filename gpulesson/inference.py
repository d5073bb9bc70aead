"""Inference: prefill and decode FLOPs, the KV cache, and the bandwidth ceiling.

KV cache
--------
Every layer keeps a key and a value vector per KV head for every token of every
sequence: ``2 * layers * kv_heads * head_dim * seq_len * batch * bytes_per_element``.
With grouped-query attention (``kv_heads < heads``) this is ``heads / kv_heads`` times
smaller than the multi-head formula that uses the hidden size (which is right only when
``kv_heads == heads``). Llama-2-7B in FP16: 512 KiB per token; Llama-3-8B: 128 KiB.

Two architectures change the count (:func:`kv_cache_bytes` follows the config):

* **Multi-head latent attention** (DeepSeek-V2/V3) caches, per layer and token, one
  compressed latent of ``kv_lora_rank`` values and the shared rotary key of
  ``qk_rope_head_dim``: ``(d_c + d_R) * layers``, 576 values per layer for DeepSeek-V3
  where multi-head attention with its 128 heads of 128 would keep 32,768 (DeepSeek-AI
  2024a, Table 1: ``(d_c + d_R) * l``, about ``4.5 * d_h * l``);
* **sliding-window layers** (Mistral 7B v0.1, Gemma 2 and 3, gpt-oss) keep at most the
  window: ``min(seq_len, window)`` tokens, so the cache of a local layer stops growing;
* **chunked layers** (Llama 4 Scout and Maverick: 36 of 48 layers, chunks of 8,192
  tokens) attend only within the current chunk, so they hold ``(seq_len - 1) % chunk + 1``
  tokens: back to 1 at each chunk's first token, a whole chunk at its last. A sequence
  that has reached ``seq_len`` has held ``min(seq_len, chunk)`` (its peak), which is what
  an allocator must reserve and what :func:`kv_cache_bytes` counts by default; at 131,072
  tokens Llama 4 keeps 12 x 131,072 + 36 x 8,192 token-layers, 0.30 of every layer's;
* **linear-attention layers** (Qwen3-Next's Gated DeltaNet in 36 of its 48 layers) keep
  no keys or values at all but a state of fixed size per sequence
  (:func:`recurrent_state_bytes`): a sequence of ``L`` tokens holds that state plus
  ``L`` times the KV bytes per token of the full-attention layers only.
* **DeepSeek Sparse Attention** (DeepSeek-V3.2, GLM-5) keeps, beside each layer's
  latent, the key of its lightning indexer, one head of ``indexer_head_dim`` (128) values
  that every later token's indexer scores: FP8 with an FP32 scale per 128 values, 132
  bytes per layer and token whatever the latent's dtype (:func:`indexer_key_bytes`).
  DeepSeek-V3.2 in BF16: 61 x (576 x 2 + 132) = 78,324 bytes per token, 11 % more than
  the latent alone.

Mixture-of-experts decode
-------------------------
A decode step reads the attention and shared weights once, and in each MoE layer only
the experts that the batch's tokens are routed to. If each of ``B`` tokens picks ``k`` of
``E`` experts uniformly at random (the **assumption**: real routers are not uniform, and
skew lowers the count), the expected number of experts touched is
``E * (1 - (1 - k/E)^B)`` (:func:`expected_experts_used`): ``k`` at ``B = 1``, all ``E``
as ``B`` grows. Mixtral 8x7B at batch 1 reads its 12.9B active parameters; at batch 16,
99.0 % of its experts. Each expert sees about ``B * k / E`` of the batch's tokens, so its
weights turn compute-bound only at ``E / k`` times the dense batch
(:func:`expert_compute_bound_batch`).

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

import math
from dataclasses import dataclass, replace

from gpulesson import _validate as v
from gpulesson import memory
from gpulesson.flops import (
    absorbed_attention_flops_per_key,
    attended_keys,
    attention_flops_per_key,
    executed_forward_attention_flops_per_token,
    forward_attention_flops_per_token,
    indexer_flops_per_key,
)
from gpulesson.transformer import TransformerConfig, active_params, as_config, param_count
from gpulesson.transformer.params import expert_params, moe_breakdown

__all__ = [
    "DecodeSpeed",
    "attention_crossover_tokens",
    "chunk_tokens",
    "decode_ceiling_tokens_per_second",
    "decode_attention_flops",
    "decode_compute_bound_batch",
    "decode_flops",
    "decode_kv_read_bytes",
    "decode_speed",
    "decode_step_time",
    "decode_weight_bytes",
    "expected_experts_used",
    "expert_compute_bound_batch",
    "indexer_key_bytes",
    "kv_cache_bytes",
    "kv_cache_bytes_per_token",
    "kv_cache_bytes_per_token_per_gpu",
    "kv_bytes_per_element",
    "rotary_cache_bytes",
    "max_concurrent_sequences",
    "model_attention_crossover_tokens",
    "model_compute_bound_batch",
    "model_decode_flops",
    "model_decode_speed",
    "model_prefill_flops",
    "model_prefill_time",
    "multi_head_equivalent",
    "prefill_flops",
    "prefill_time",
    "prompt_token_flops",
    "recurrent_state_bytes",
]


def _kv_values_per_layer(cfg: TransformerConfig) -> int:
    """Cached values per token and layer: a key and a value per KV head, or latent
    attention's latent plus its rotary key."""
    if cfg.latent_attention:
        return cfg.kv_lora_rank + cfg.qk_rope_head_dim
    return cfg.kv_dim + cfg.v_dim


#: Values per FP32 scale of the indexer's FP8 key cache, and the bytes of a scale:
#: DeepSeek's inference code keeps ``k_cache`` in ``float8_e4m3fn`` and ``k_scale_cache`` in
#: ``float32``, ``head_dim // block_size`` scales a token with ``block_size`` 128
#: (deepseek-ai/DeepSeek-V3.2-Exp ``inference/model.py``, ``Indexer.__init__``); vLLM packs
#: the same bytes, ``head_dim + head_dim // quant_block_size * 4`` = 132 ``uint8`` a token
#: (``vllm/model_executor/models/deepseek_v2.py``, ``Indexer.__init__`` and
#: ``DeepseekV32IndexerCache.get_kv_cache_spec``: one head, ``num_kv_heads=1``).
INDEXER_QUANT_BLOCK = 128
INDEXER_SCALE_BYTES = 4


def indexer_key_bytes(cfg: TransformerConfig, *, bytes_per_element: float = 1) -> int:
    """Bytes one token's lightning-indexer key takes in one layer (DeepSeek Sparse
    Attention); 0 for a model without an indexer.

    One key head of ``indexer_head_dim`` values a token and layer, shared by the indexer's
    query heads (DeepSeek's inference code: ``wk`` projects the hidden state to one key of
    ``index_head_dim``, cached for every earlier token). In FP8
    (``bytes_per_element`` 1, DeepSeek's and vLLM's layout) each block of
    :data:`INDEXER_QUANT_BLOCK` values carries an FP32 scale: DeepSeek-V3.2 and GLM-5,
    128 + 4 = 132 bytes. Any other width stores the values alone (``2``: a BF16 key,
    256 bytes).
    """
    cfg = as_config(cfg)
    b = v.positive_number("bytes_per_element", bytes_per_element)
    dim = int(cfg.indexer_head_dim)
    if not cfg.indexer_heads or not dim:
        return 0
    scales = -(-dim // INDEXER_QUANT_BLOCK) * INDEXER_SCALE_BYTES if b == 1 else 0
    return v.tensor_bytes(dim, b) + scales


#: Bytes of one token's latent in one layer of a sparse-attention model's FP8 cache: the
#: ``fp8_ds_mla`` record of DeepSeek's FlashMLA sparse kernels, which vLLM and SGLang
#: store, 512 FP8 latent values, 4 FP32 scales (one per 128) and the 64 rotary values in
#: BF16, 512 + 16 + 128 = 656 bytes, not 576 (:mod:`gpulesson.planning.sparse`).
FP8_SPARSE_LATENT_BYTES = 656
#: The latent that record holds: (kv_lora_rank, qk_rope_head_dim), DeepSeek-V3.2's.
FP8_SPARSE_LATENT_DIMS = (512, 64)


def kv_bytes_per_element(cfg: TransformerConfig, kv_dtype: str) -> float:
    """Bytes a cached value takes in a ``kv_dtype`` cache, as the ``bytes_per_element`` of
    :func:`kv_cache_bytes` and :func:`decode_kv_read_bytes`: the precision's bytes
    (:func:`gpulesson.memory.precision_bytes`), except for a DeepSeek Sparse Attention
    model (an indexer; latent of 512 + 64 values) in FP8, whose latent is the
    :data:`FP8_SPARSE_LATENT_BYTES`-byte record, 656 / 576 a value: DeepSeek-V3.2 then
    holds 61 x (656 + 132) = 48,068 bytes a token, as the serving planner counts it."""
    cfg = as_config(cfg)
    b = memory.precision_bytes(kv_dtype)
    dims = (cfg.kv_lora_rank, cfg.qk_rope_head_dim)
    if (cfg.indexer_heads and b == 1 and kv_dtype.strip().lower().startswith("fp8")
            and dims == FP8_SPARSE_LATENT_DIMS):
        # 656/576 as a float is a hair below the exact ratio, so tensor_bytes' rounding
        # up gives exactly 656 bytes for every whole latent (tests/unit/test_inference.py)
        return FP8_SPARSE_LATENT_BYTES / sum(dims)
    return b


def kv_cache_bytes_per_token(cfg: TransformerConfig, *, bytes_per_element: float = 2,
                             indexer_bytes_per_element: float = 1) -> int:
    """KV-cache bytes one token adds to one sequence while every layer still keeps it:
    ``2 * L * kv_heads * head_dim * b`` (latent attention: ``L * (d_c + d_R) * b``; with
    DeepSeek Sparse Attention each layer adds its indexer key, :func:`indexer_key_bytes`
    at ``indexer_bytes_per_element``, FP8 by default whatever ``bytes_per_element`` is).

    ``L`` counts the attention layers only: a linear-attention layer keeps a fixed state
    instead (:func:`recurrent_state_bytes`; Qwen3-Next: 12 of 48 layers, 24,576 bytes per
    token in BF16). A sliding-window layer stops adding once the sequence passes its
    window, a chunked layer (Llama 4) drops its chunk at every chunk boundary; use
    :func:`kv_cache_bytes` for a whole sequence. DeepSeek-V3 in BF16: 70,272 bytes;
    DeepSeek-V3.2: 78,324 (61 x (1,152 + 132)).
    """
    cfg = as_config(cfg)
    b = v.positive_number("bytes_per_element", bytes_per_element)
    attention = cfg.layers - cfg.recurrent_layers
    index = indexer_key_bytes(cfg, bytes_per_element=v.positive_number(
        "indexer_bytes_per_element", indexer_bytes_per_element))
    return v.tensor_bytes(attention * _kv_values_per_layer(cfg), b) + attention * index


def recurrent_state_bytes(cfg: TransformerConfig, *, tp: int = 1,
                          bytes_per_element: float = 2,
                          ssm_bytes_per_element: float | None = None) -> int:
    """Bytes of the fixed-size state one sequence keeps in the linear-attention layers, on
    each of ``tp`` tensor-parallel GPUs; 0 for a model without them.

    A Gated DeltaNet layer keeps, whatever the sequence's length, the last ``kernel - 1``
    inputs of its short convolution over the ``2*k + v`` query, key and value channels
    (``k``, ``v``: key and value widths) and one ``value_head x key_head`` matrix per
    value head: ``(kernel - 1) * (2k + v) * b + heads * d_v * d_k * b_ssm``. vLLM sizes
    them so (``MambaStateShapeCalculator.gated_delta_net_state_shape`` in
    ``vllm/model_executor/layers/mamba/mamba_utils.py``: channels and heads split over
    ``tp``) in the model's dtype unless ``--mamba-cache-dtype`` or
    ``--mamba-ssm-cache-dtype`` says otherwise (``MambaStateDtypeCalculator``: both
    ``auto``). Qwen3-Next-80B-A3B in BF16: 36 layers x (49,152 + 1,048,576) bytes =
    39,518,208 bytes (37.7 MiB), as much as 1,608 tokens of its KV cache.

    Parameters
    ----------
    cfg : TransformerConfig
        The model.
    tp : int
        Tensor-parallel GPUs; must divide the value heads and the key heads.
    bytes_per_element : float
        Bytes of the convolution state (2: BF16, vLLM's default for a BF16 model).
    ssm_bytes_per_element : float, optional
        Bytes of the recurrent matrices; default ``bytes_per_element`` (4 with
        ``--mamba-ssm-cache-dtype float32``).
    """
    cfg = as_config(cfg)
    t = v.positive_int("tp", tp)
    b = v.positive_number("bytes_per_element", bytes_per_element)
    b_ssm = b if ssm_bytes_per_element is None else v.positive_number(
        "ssm_bytes_per_element", ssm_bytes_per_element)
    if not cfg.recurrent_layers:
        return 0
    for name in ("linear_key_heads", "linear_value_heads"):
        if getattr(cfg, name) % t:
            raise ValueError(f"tp ({t}) must divide {name} ({getattr(cfg, name)}): vLLM "
                             "splits the linear-attention heads over the GPUs")
    k = cfg.linear_key_heads * cfg.linear_key_head_dim
    val = cfg.linear_value_heads * cfg.linear_value_head_dim
    conv = v.tensor_bytes((cfg.linear_conv_kernel - 1) * (2 * k + val) // t, b)
    matrices = v.tensor_bytes(cfg.linear_value_heads // t * cfg.linear_value_head_dim
                              * cfg.linear_key_head_dim, b_ssm)
    return cfg.recurrent_layers * (conv + matrices)


def kv_cache_bytes_per_token_per_gpu(cfg: TransformerConfig, *, tp: int = 1,
                                     bytes_per_element: float = 2,
                                     indexer_bytes_per_element: float = 1) -> float:
    """KV-cache bytes one token adds on each of ``tp`` tensor-parallel GPUs.

    Grouped-query attention splits its ``kv_heads`` over the ranks, one head at least per
    rank (a head is copied when ``tp > kv_heads``): ``ceil(kv_heads / tp) / kv_heads`` of
    :func:`kv_cache_bytes_per_token`. Latent attention (DeepSeek-V2/V3) caches one latent
    per token that every head reads, so it cannot be split by head: vLLM and SGLang keep
    the whole latent on every rank ("MLA ... where KV cache can't be sharded along the head
    dimension", Ray Serve LLM docs, data parallel attention, 2025). DeepSeek-V3 on 8 GPUs:
    70,272 bytes per token on each GPU, not 8,784. A sparse-attention indexer's key is
    copied too (vLLM: "no tensor parallel, just replicated", one cache head a layer):
    DeepSeek-V3.2, 78,324 bytes on each GPU in BF16.
    """
    cfg = as_config(cfg)
    t = v.positive_int("tp", tp)
    whole = kv_cache_bytes_per_token(cfg, bytes_per_element=bytes_per_element,
                                     indexer_bytes_per_element=indexer_bytes_per_element)
    if cfg.latent_attention:
        return float(whole)
    heads = max(int(cfg.kv_heads or cfg.heads), 1)
    return whole * math.ceil(heads / t) / heads


def rotary_cache_bytes(cfg: TransformerConfig, *, bytes_per_element: float = 2) -> float:
    """Bytes of the rotary embedding's cos/sin table a serving engine keeps beside the
    weights: one row of ``rotary_dim`` values per position up to ``context``
    (``max_position_embeddings``), copied on every GPU. vLLM builds it in the model's dtype:
    Llama 3.1 8B (131,072 positions x 128) holds 32 MiB, the difference between its 8.03 B
    parameters (14.96 GiB in BF16) and the 14.9888 GiB vLLM reports (issue #10517)."""
    cfg = as_config(cfg)
    b = v.positive_number("bytes_per_element", bytes_per_element)
    rotary = cfg.qk_rope_head_dim if cfg.latent_attention else (cfg.head_dim or 0)
    return float(int(cfg.context or 0) * int(rotary) * b)


def chunk_tokens(cfg: TransformerConfig, seq_len: int, *, current: bool = False) -> int:
    """Tokens one chunked layer of ``cfg`` holds for a sequence of ``seq_len`` tokens
    (``seq_len`` itself without chunks).

    ``current=False`` (the default): ``min(seq_len, chunk)``, the most it has held on the
    way to ``seq_len`` and what an allocator must reserve for it. ``current=True``: what it
    holds at ``seq_len``, the tokens of the current chunk, ``(seq_len - 1) % chunk + 1``,
    1 to ``chunk`` (a layer keeps ``seq_len mod chunk`` tokens of earlier positions plus
    the newest one; vLLM's ``ChunkedLocalAttentionManager`` frees the blocks before
    ``chunk * (computed // chunk)``). Llama 4 at 8,193 tokens: 8,192 and 1.
    """
    cfg = as_config(cfg)
    s = v.positive_int("seq_len", seq_len)
    v.boolean("current", current)
    c = cfg.attention_chunk
    if not c:
        return s
    return (s - 1) % c + 1 if current else min(s, c)


def kv_cache_bytes(
    cfg: TransformerConfig, *, seq_len: int, batch: int = 1, bytes_per_element: float = 2,
    cap_windows: bool = True, current_chunk: bool = False,
    indexer_bytes_per_element: float = 1,
) -> int:
    """KV-cache bytes: ``2 * layers * kv_heads * head_dim * seq_len * batch * bytes``.

    Per layer and token the cache holds ``kv_heads`` keys and values (GQA/MQA), or, with
    latent attention, ``kv_lora_rank + qk_rope_head_dim`` values. A sliding-window layer
    holds ``min(seq_len, window)`` tokens, a chunked layer :func:`chunk_tokens` (at most
    one chunk), a linear-attention layer none (its fixed state is
    :func:`recurrent_state_bytes`). DeepSeek-V3 in BF16: 70,272 bytes per token
    (61 x 576 x 2); Gemma-2-9B at 8,192 tokens: 21 global layers of 8,192 tokens and 21
    local ones of 4,096; Llama 4 Maverick at 1,048,576 tokens: 12 global layers of
    1,048,576 and 36 chunked ones of 8,192, 49.1 GiB where every layer global would be 192.

    Parameters
    ----------
    cfg : TransformerConfig
        The model (its ``kv_heads``, head sizes, latent rank and windows are used, not
        ``hidden``).
    seq_len : int
        Tokens held per sequence (prompt + generated so far).
    batch : int
        Concurrent sequences.
    bytes_per_element : float
        2 for FP16/BF16 caches, 1 for FP8/INT8.
    cap_windows : bool
        Keep only the window in sliding-window layers and at most a chunk in chunked ones
        (default). ``False`` counts every token in every layer, as a server that
        allocates the whole context does (vLLM with its hybrid manager off).
    current_chunk : bool
        Count a chunked layer's current chunk, ``(seq_len - 1) % chunk + 1`` tokens,
        instead of the peak ``min(seq_len, chunk)`` (:func:`chunk_tokens`).
    indexer_bytes_per_element : float
        Bytes of a value of a sparse-attention indexer's key, which every layer of
        DeepSeek-V3.2 and GLM-5 keeps beside its latent (:func:`indexer_key_bytes`;
        1: FP8 with its scales, the default in DeepSeek's code and vLLM).
    """
    cfg = as_config(cfg)
    s = v.positive_int("seq_len", seq_len)
    n = v.positive_int("batch", batch)
    b = v.positive_number("bytes_per_element", bytes_per_element)
    v.boolean("cap_windows", cap_windows)
    local = min(s, cfg.sliding_window) if cfg.sliding_window and cap_windows else s
    chunked = chunk_tokens(cfg, s, current=current_chunk) if cap_windows else s
    tokens = cfg.global_layers * s + cfg.local_layers * local + cfg.chunked_layers * chunked
    index = indexer_key_bytes(cfg, bytes_per_element=v.positive_number(
        "indexer_bytes_per_element", indexer_bytes_per_element))
    return v.tensor_bytes(_kv_values_per_layer(cfg) * tokens * n, b) + index * tokens * n


def decode_kv_read_bytes(cfg: TransformerConfig, *, context: int, bytes_per_element: float = 2,
                         indexer_bytes_per_element: float = 1, new_tokens: int = 1) -> int:
    """KV-cache bytes one decode step reads for one sequence of ``context`` cached tokens.

    What each layer's attention reads: the tokens :func:`kv_cache_bytes` holds (a
    window's or a chunk's in local layers, all of them in global ones). With DeepSeek
    Sparse Attention (``indexer_topk``) a layer reads the indexer keys of all ``context``
    tokens, which its indexer scores, and the latents of the ``min(context, topk)`` it
    picks (DeepSeek-V3.2-Exp ``inference/model.py``: ``Indexer.forward`` scores
    ``k_cache[:bsz, :end_pos]`` and returns ``topk(min(index_topk, end_pos))``, the
    indices the sparse attention reads). DeepSeek-V3.2 in BF16 at 131,072 tokens: 61 x
    (2,048 x 1,152 + 131,072 x 132) = 1,199,308,800 bytes, not the whole 10.27 GB cache.

    ``new_tokens`` tokens of the sequence in one step (the uncached part of a prompt whose
    prefix is cached) each pick their own top-k: the latents of at most
    ``min(context, new_tokens * topk)`` cached tokens are read, counted at that bound
    (exact for one token; the whole cache once the picks could cover it).
    """
    cfg = as_config(cfg)
    s = v.positive_int("context", context)
    n = v.positive_int("new_tokens", new_tokens)
    topk = cfg.indexer_topk
    if not topk:
        return kv_cache_bytes(cfg, seq_len=s, bytes_per_element=bytes_per_element,
                              indexer_bytes_per_element=indexer_bytes_per_element)
    b = v.positive_number("bytes_per_element", bytes_per_element)
    index = indexer_key_bytes(cfg, bytes_per_element=v.positive_number(
        "indexer_bytes_per_element", indexer_bytes_per_element))
    layers = cfg.global_layers  # a top-k has no window or chunk beside it
    return (v.tensor_bytes(_kv_values_per_layer(cfg) * min(s, n * topk) * layers, b)
            + index * s * layers)


def expected_experts_used(*, experts: int, experts_per_token: int, tokens: int) -> float:
    """Expected number of distinct experts that ``tokens`` tokens route to in one layer.

    ``E * (1 - (1 - k/E)^tokens)``, **assuming uniform routing**: each token picks its
    ``k`` experts uniformly at random, independently of the others, so one expert is
    missed by one token with probability ``1 - k/E``. ``k`` at one token; approaching
    ``E`` as tokens grow (Mixtral, ``k = 2`` of 8: 3.5 at 2 tokens, 7.92 at 16). Real
    routers are skewed towards popular experts, which touches fewer.
    """
    e = v.positive_int("experts", experts)
    k = v.positive_int("experts_per_token", experts_per_token)
    if k > e:
        raise ValueError(f"experts_per_token must be between 1 and experts ({e}), got {k}")
    t = v.positive_int("tokens", tokens)
    return e * (1.0 - (1.0 - k / e) ** t)


def decode_weight_bytes(cfg: TransformerConfig, *, batch: int = 1,
                        bytes_per_param: float = 2) -> float:
    """Weight bytes one decode step reads: everything but the routed experts once, plus
    the experts the batch routes to.

    ``(param_count - routed + moe_layers * expected_experts_used * expert) * bytes``,
    with :func:`expected_experts_used` under uniform routing. For a dense model it is all
    the weights (``param_count * bytes``). Mixtral 8x7B in BF16: 25.8 GB at batch 1 (its
    12.9B active parameters), 92.5 GB at batch 16, of 93.4 GB in all.
    """
    cfg = as_config(cfg)
    b = v.positive_int("batch", batch)
    bpp = v.positive_number("bytes_per_param", bytes_per_param)
    total = param_count(cfg)
    if not cfg.moe:
        return total * bpp
    routed = moe_breakdown(cfg)["routed_experts"]
    used = expected_experts_used(experts=cfg.experts, experts_per_token=cfg.experts_per_token,
                                 tokens=b)
    return (total - routed + cfg.moe_layers * used * expert_params(cfg)) * bpp


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


def prompt_token_flops(cfg: TransformerConfig, prompt_tokens: int, *,
                       as_run: bool = False) -> float:
    """Forward FLOPs of one token of a ``prompt_tokens``-long prompt: ``2 * N_active`` and
    its attention to the whole prompt (the full score matrix, as
    :func:`model_prefill_flops` counts it). ``as_run``: the attention as the kernels run
    it, for time (:func:`gpulesson.flops.executed_forward_attention_flops_per_token`:
    DeepSeek Sparse Attention's picked keys past its top-k absorbed); the same for every
    other model."""
    cfg = as_config(cfg)
    count = (executed_forward_attention_flops_per_token if v.boolean("as_run", as_run)
             else forward_attention_flops_per_token)
    return 2.0 * active_params(cfg) + count(cfg, context=prompt_tokens)


def model_prefill_flops(cfg: TransformerConfig, tokens: int, *, batch: int = 1) -> float:
    """Forward FLOPs of a ``tokens``-long prompt for any architecture.

    ``2 * N_active * T + T * attention(T)``, with the active parameters
    (:func:`gpulesson.transformer.active_params`) and the forward attention of every
    layer at context ``T`` (:func:`gpulesson.flops.forward_attention_flops_per_token`:
    latent attention's head sizes, windows capped). A dense model with full attention
    gives :func:`prefill_flops` with its shape. Times ``batch`` prompts.
    """
    cfg = as_config(cfg)
    t = v.positive_int("tokens", tokens)
    b = v.positive_int("batch", batch)
    attention = t * forward_attention_flops_per_token(cfg, context=t)
    return b * (2.0 * active_params(cfg) * t + attention)


def _attended_chunks(context: int, new_tokens: int, chunk: int) -> int:
    """``sum_{p=c..c+k-1} (p % chunk + 1)``: keys the tokens at positions ``c`` to
    ``c + k - 1`` see in a chunked layer (each its own chunk's earlier tokens and
    itself)."""
    def upto(n: int) -> int:  # sum over positions 0 .. n-1
        whole, rest = divmod(n, chunk)
        return whole * chunk * (chunk + 1) // 2 + rest * (rest + 1) // 2
    return upto(context + new_tokens) - upto(context)


def model_decode_flops(cfg: TransformerConfig, new_tokens: int, *, context_len: int = 0,
                       batch: int = 1) -> float:
    """Forward FLOPs to generate ``new_tokens`` after ``context_len`` cached tokens.

    ``2 * N_active`` per token, plus attention to the cache and itself: the ``i``-th new
    token attends to ``context_len + i`` tokens in global layers, at most the window in
    local ones and its own chunk's tokens in chunked ones, at ``2 * heads * (d_qk + d_v)``
    FLOPs per key and layer; with DeepSeek Sparse Attention at most ``indexer_topk`` of
    them, and its indexer scores all ``context_len + i``
    (:func:`gpulesson.flops.indexer_flops_per_key`). A dense model
    with full attention gives :func:`decode_flops` with its shape. Latent attention is
    counted as its heads attend after up-projection; kernels that absorb the up-projection
    into the query do other work for the same result (:func:`decode_attention_flops`).
    """
    cfg = as_config(cfg)
    k = v.positive_int("new_tokens", new_tokens)
    b = v.positive_int("batch", batch)
    attention = decode_attention_flops(cfg, k, context_len=context_len, absorbed=False)
    return b * (2.0 * active_params(cfg) * k + attention)


def decode_attention_flops(cfg: TransformerConfig, new_tokens: int = 1, *,
                           context_len: int = 0, batch: int = 1,
                           absorbed: bool = True) -> float:
    """Attention FLOPs of ``new_tokens`` decoded after ``context_len`` cached tokens, as
    the serving engines run them (the weights' ``2 * N_active`` left out).

    The keys are counted as :func:`model_decode_flops` counts them (each new token attends
    to the cache and itself; windows, chunks and a sparse-attention top-k cap them; an
    indexer scores every key). Per key and layer, ``2 * heads * (d_qk + d_v)``
    (:func:`gpulesson.flops.attention_flops_per_key`), except latent attention with
    ``absorbed`` (the default): vLLM and SGLang decode it with the up-projections folded
    into the query and the output, so that every head attends to the cached latent itself,
    ``kv_lora_rank + qk_rope_head_dim`` values as the key and ``kv_lora_rank`` as the
    value (vLLM ``vllm/v1/attention/backends/mla/common.py``, module docstring: "MQA with
    QK headdim = Lkv + R, V headdim = Lkv"; FlashMLA's dense and sparse decode kernels,
    576 and 512): ``2 * heads * (2 * kv_lora_rank + qk_rope_head_dim)``
    (:func:`gpulesson.flops.absorbed_attention_flops_per_key`). DeepSeek-V3:
    2 x 128 x (576 + 512) = 278,528 per key, 3.4 times the 81,920 of its up-projected
    heads, and about 242 FLOPs per BF16 byte of cache it reads (FlashMLA's ``h_q (d_k +
    d_v) / d_k``), past an H100's ridge, where grouped-query attention does its group
    size (Llama 3 70B: 8). The folded projections run once per token, weights counted in
    ``2N``. ``absorbed=False`` gives the up-projected count (the model FLOPs, and what
    latent attention without a top-k runs in prefill and training; DeepSeek Sparse
    Attention's past the top-k run absorbed too,
    :func:`gpulesson.flops.executed_attention_flops_per_key`).
    Times ``batch`` sequences.
    """
    cfg = as_config(cfg)
    k = v.positive_int("new_tokens", new_tokens)
    c = v.nonneg_int("context_len", context_len)
    b = v.positive_int("batch", batch)
    if v.boolean("absorbed", absorbed) and cfg.latent_attention:
        per_key = absorbed_attention_flops_per_key(cfg)
    else:
        per_key = attention_flops_per_key(cfg)
    keys = (cfg.global_layers * attended_keys(c, k, cfg.indexer_topk)
            + cfg.local_layers * attended_keys(c, k, cfg.sliding_window)
            + (cfg.chunked_layers * _attended_chunks(c, k, cfg.attention_chunk)
               if cfg.attention_chunk else 0))
    scored = indexer_flops_per_key(cfg) * cfg.global_layers * attended_keys(c, k, 0)
    return float(b * (per_key * keys + scored))


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


def expert_compute_bound_batch(*, peak_flops: float, bandwidth: float, bytes_per_param: float,
                               experts: int, experts_per_token: int) -> float:
    """Decode batch at which a routed expert's weights turn compute-bound: ``B* * E / k``.

    ``B`` tokens routed to ``k`` of ``E`` experts give each expert ``B * k / E`` tokens on
    average, so an expert's weight read serves that many tokens, not ``B``: it reaches the
    dense turning point :func:`decode_compute_bound_batch`, ``B* = peak * b / (2 *
    bandwidth)``, only at a batch ``E / k`` times larger. DeepSeek-V3 (256 experts, 8 per
    token) on an H800 in FP8 (1,979 TFLOP/s dense, 3.35 TB/s): 295 tokens per expert, a
    batch of about 9,450 tokens, which is why its decode spreads the experts over many
    GPUs (expert parallelism) and batches thousands of sequences; DeepSeek-AI 2024
    (arXiv 2412.19437, section 3.4.2): "the batch size per expert is relatively small
    (usually within 256 tokens), and the bottleneck is memory access rather than
    computation". :func:`model_compute_bound_batch` counts the whole model (attention and
    shared weights too, routing under the uniform assumption), which turns at about
    ``N_total / N_active`` times ``B*``.
    """
    dense = decode_compute_bound_batch(peak_flops=peak_flops, bandwidth=bandwidth,
                                       bytes_per_param=bytes_per_param)
    e = v.positive_int("experts", experts)
    k = v.positive_int("experts_per_token", experts_per_token)
    if k > e:
        raise ValueError(f"experts_per_token must be between 1 and experts ({e}), got {k}")
    return dense * e / k


def decode_step_time(
    *,
    n_params: float,
    weight_bytes: float,
    batch: int,
    kv_bytes_per_sequence: float,
    peak_flops: float,
    bandwidth: float,
    attention_flops_per_sequence: float = 0,
) -> float:
    """Roofline time of one decode step for ``batch`` sequences (seconds).

    ``max((2*N + A)*batch / peak_flops, (weight_bytes + batch*kv_bytes_per_sequence) /
    bandwidth)``, with ``A`` the attention FLOPs of one new token
    (``attention_flops_per_sequence``; by default 0, left out as small next to ``2N`` at
    moderate context lengths; :func:`model_decode_speed` counts them).
    """
    n = v.positive_number("n_params", n_params)
    b, read = _step_bytes(weight_bytes, batch, kv_bytes_per_sequence)
    p = v.positive_number("peak_flops", peak_flops)
    bw = v.positive_number("bandwidth", bandwidth)
    a = v.nonneg_number("attention_flops_per_sequence", attention_flops_per_sequence)
    return max((2.0 * n + a) * b / p, read / bw)


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
    attention_flops_per_sequence: float = 0,
) -> DecodeSpeed:
    """Total and per-sequence decode tokens/s from :func:`decode_step_time` (same
    arguments).

    Every step yields one token for each of the ``batch`` sequences:
    ``tokens_per_second = batch / t_step`` and ``per_sequence = 1 / t_step``. Llama 3 8B
    in BF16 on an H100 SXM with 8,192-token contexts: 209 tokens/s alone without a cache
    read, about 43 per user once the memory is full of caches. Taught in
    ``inference_and_kv_cache`` and ``cost_economics``.
    """
    b = v.positive_int("batch", batch)
    step = decode_step_time(n_params=n_params, weight_bytes=weight_bytes, batch=b,
                            kv_bytes_per_sequence=kv_bytes_per_sequence,
                            peak_flops=peak_flops, bandwidth=bandwidth,
                            attention_flops_per_sequence=attention_flops_per_sequence)
    return DecodeSpeed(step_time=step, tokens_per_second=b / step, per_sequence=1 / step)


def model_decode_speed(cfg: TransformerConfig, *, batch: int, context: int,
                       peak_flops: float, bandwidth: float, bytes_per_param: float = 2,
                       kv_bytes_per_element: float = 2) -> DecodeSpeed:
    """:func:`decode_speed` of a model from its config: active parameters for the FLOPs,
    the weights the batch reads (:func:`decode_weight_bytes`, routed experts under
    uniform routing) and the KV bytes each sequence's step reads at ``context`` tokens
    (:func:`decode_kv_read_bytes`: the cache of :func:`kv_cache_bytes`, latent and
    windowed caches included; a sparse-attention model's top-k latents and every indexer
    key). The compute side also
    counts each new token's attention to its ``context`` cached tokens as the serving
    engines run it (:func:`decode_attention_flops`: latent attention absorbed, a chunked
    layer's current chunk).

    For a dense model at batch sizes where the weights' reads set the pace it is
    :func:`decode_speed` with ``n_params = param_count`` and the weights at
    ``bytes_per_param``. Mixtral 8x7B on an H100 SXM (3.35 TB/s) in BF16 at batch 1: about
    130 tokens/s, the speed of a 12.9B dense model, not of a 46.7B one.
    """
    cfg = as_config(cfg)
    ctx = v.positive_int("context", context)
    kv = decode_kv_read_bytes(cfg, context=ctx, bytes_per_element=kv_bytes_per_element)
    return decode_speed(n_params=active_params(cfg),
                        weight_bytes=decode_weight_bytes(cfg, batch=batch,
                                                         bytes_per_param=bytes_per_param),
                        batch=batch, kv_bytes_per_sequence=kv, peak_flops=peak_flops,
                        bandwidth=bandwidth,
                        attention_flops_per_sequence=decode_attention_flops(
                            cfg, context_len=ctx - 1))


def model_prefill_time(cfg: TransformerConfig, tokens: int, *, peak_flops: float,
                       bandwidth: float, bytes_per_param: float = 2, batch: int = 1) -> float:
    """Roofline time of a prefill for any architecture (seconds).

    ``max(prefill FLOPs / peak, weights read / bandwidth)``: the FLOPs of
    :func:`model_prefill_flops` (active parameters, the model's attention) and the weights
    the prompt's ``batch * tokens`` tokens route to (:func:`decode_weight_bytes`: every
    weight of a dense model; the experts they reach, under uniform routing). A dense
    model with full attention gives :func:`prefill_time`. DeepSeek Sparse Attention past
    its top-k counts its picked keys as its kernels run them, latent attention absorbed
    (:func:`gpulesson.flops.executed_forward_attention_flops_per_token`: 278,528 FLOPs a
    key for DeepSeek-V3.2 where the model count has 81,920).
    """
    cfg = as_config(cfg)
    t = v.positive_int("tokens", tokens)
    b = v.positive_int("batch", batch)
    p = v.positive_number("peak_flops", peak_flops)
    bw = v.positive_number("bandwidth", bandwidth)
    weights = decode_weight_bytes(cfg, batch=t * b, bytes_per_param=bytes_per_param)
    run = b * t * prompt_token_flops(cfg, t, as_run=True)
    return max(run / p, weights / bw)


def model_compute_bound_batch(cfg: TransformerConfig, *, peak_flops: float, bandwidth: float,
                              bytes_per_param: float = 2) -> float:
    """Batch at which a decode step's weight FLOPs take as long as its weight reads.

    A dense model: :func:`decode_compute_bound_batch`, ``peak * bytes_per_param / (2 *
    bandwidth)``. A mixture-of-experts model does ``2 * N_active`` FLOPs per sequence but
    reads the experts its batch routes to (:func:`decode_weight_bytes`), nearly all of them
    at large batch, so it turns compute-bound only at the smallest whole batch ``B`` with
    ``2 * N_active * B / peak >= decode_weight_bytes(B) / bandwidth``: about
    ``N_total / N_active`` times later (Mixtral 8x7B on an H100 SXM: 1,071 sequences
    against 295). KV-cache reads are ignored, as in :func:`decode_compute_bound_batch`.
    """
    cfg = as_config(cfg)
    dense = decode_compute_bound_batch(peak_flops=peak_flops, bandwidth=bandwidth,
                                       bytes_per_param=bytes_per_param)
    if not cfg.moe:
        return dense
    n = active_params(cfg)

    def compute_bound(batch: int) -> bool:
        return (2.0 * n * batch / peak_flops
                >= decode_weight_bytes(cfg, batch=batch, bytes_per_param=bytes_per_param)
                / bandwidth)

    low, high = 0, max(1, int(dense))  # not compute-bound at low (or low is 0)
    while not compute_bound(high):
        low, high = high, 2 * high
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if compute_bound(mid) else (mid, high)
    return float(high)


def model_attention_crossover_tokens(cfg: TransformerConfig) -> float | None:
    """Prompt length at which prefill's attention FLOPs equal its weight FLOPs, any model.

    The ``T`` with ``forward_attention_flops_per_token(cfg, context=T) = 2 * N_active``:
    ``T = N_active / (L * H * (d_qk + d_v))`` with full attention, which for a dense model
    (``d_qk = d_v = Q``) is :func:`attention_crossover_tokens`, ``N / (2*L*H*Q)``. Sliding-window
    layers stop adding attention beyond their window (chunked ones beyond their chunk, as
    :func:`~gpulesson.flops.forward_attention_flops_per_token` counts them), so with them
    the crossover comes later, and never (``None``) when every layer is local and the
    window is too short for attention to catch up (Mistral 7B v0.1: 4,096 tokens, where
    27,620 would be needed). With DeepSeek Sparse Attention the attention stops at
    ``indexer_topk`` keys and only the indexer's scoring keeps growing, so the crossover
    comes later than with full attention.
    """
    cfg = as_config(cfg)
    per_key = attention_flops_per_key(cfg)
    index = indexer_flops_per_key(cfg)
    if index:  # per layer: per_key * min(T, topk) + index * T (every layer global)
        per_layer, top = 2.0 * active_params(cfg) / cfg.global_layers, cfg.indexer_topk
        if per_layer <= (per_key + index) * top:
            return per_layer / (per_key + index)
        return (per_layer - per_key * top) / index
    target = 2.0 * active_params(cfg) / per_key  # keys per token, summed over layers
    span = cfg.sliding_window or cfg.attention_chunk  # the model has one or the other
    if not span or target <= cfg.layers * span:
        return target / cfg.layers
    if not cfg.global_layers:
        return None
    return (target - (cfg.layers - cfg.global_layers) * span) / cfg.global_layers


def multi_head_equivalent(cfg: TransformerConfig) -> TransformerConfig:
    """The same model with one key and one value head per query head (multi-head
    attention), to hold its KV cache against: ``kv_heads = heads``; latent attention
    replaced by heads of the value size ``d_h`` (DeepSeek-AI 2024a, Table 1 compares MLA's
    ``(d_c + d_R) * l`` with ``2 * n_h * d_h * l``). Windows are kept."""
    cfg = as_config(cfg)
    if not cfg.latent_attention:
        return replace(cfg, kv_heads=cfg.heads, name=cfg.name + " (MHA)")
    return replace(cfg, kv_lora_rank=0, q_lora_rank=0, qk_rope_head_dim=0,
                   qk_nope_head_dim=0, v_head_dim=0, indexer_heads=0, indexer_head_dim=0,
                   indexer_topk=0, head_dim=cfg.v_head_dim,
                   kv_heads=cfg.heads, name=cfg.name + " (MHA)")


def max_concurrent_sequences(cfg: TransformerConfig, *, context: int, gpu_memory: float,
                             precision: str = "bf16", kv_dtype: str = "bf16",
                             overhead: float = 2e9) -> int:
    """Most sequences of ``context`` tokens whose KV caches fit beside the weights.

    The largest ``batch`` for which :func:`gpulesson.memory.inference_memory` (weights at
    ``precision`` + :func:`kv_cache_bytes` of the batch at ``kv_dtype``, plus each
    sequence's linear-attention state in BF16 (:func:`recurrent_state_bytes`) + ``overhead``
    bytes) :func:`fits <gpulesson.memory.fits>` in ``gpu_memory`` bytes; 0 when not even one
    sequence does. No formula of its own: doubling, then bisection, on the calculators'
    verdict. Llama 3 8B in BF16 on an 80 GB H100 with 8,192-token contexts and 2 GB of
    overhead: 57. Taught in ``inference_and_kv_cache`` ("How many users fit?").

    Raises
    ------
    ValueError
        naming the argument (a non-positive context or memory, an unknown precision ...).
    """
    cfg = as_config(cfg)
    ctx = v.positive_int("context", context)
    mem = v.positive_number("gpu_memory", gpu_memory)
    n = param_count(cfg)
    kv_bytes = kv_bytes_per_element(cfg, kv_dtype)
    memory.precision_bytes(precision)  # refuse an unknown name before searching

    state = recurrent_state_bytes(cfg)

    def fits(batch: int) -> bool:
        kv = kv_cache_bytes(cfg, seq_len=ctx, batch=batch, bytes_per_element=kv_bytes) + \
            batch * state
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
