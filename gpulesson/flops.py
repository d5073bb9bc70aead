"""Training FLOPs, model and hardware FLOPs utilisation, training time, Chinchilla.

6N per token
------------
A forward pass costs about 2 FLOPs per parameter per token (one multiply-add per weight)
and the backward pass twice that, so training costs ``6 * N * D`` FLOPs for ``N``
parameters and ``D`` tokens (Kaplan et al. 2020, section 2.1). Say what ``N`` counts:
Kaplan et al. exclude embeddings (``transformer.non_embedding_params``); PaLM,
Chinchilla and the Llama 3 report use all parameters (``transformer.param_count``).
GPT-3's 3.14e23 FLOPs is ``6 x 174.6e9 x 300e9``.

The attention term
------------------
The ``6N`` count leaves out the attention score and value products, which have no
parameters. PaLM (Chowdhery et al. 2022, appendix B) adds ``12 * L * H * Q * T`` FLOPs
per token (layers ``L``, heads ``H``, head size ``Q``, sequence length ``T``: forward
``QK^T`` and ``AV`` are ``4*L*H*Q*T``, times 3 for forward + backward). It matters when
``T`` is comparable to ``6N / (12 L H Q)``; for 7B-class models at T = 2048 it adds ~5 %.

Mixture-of-experts, latent attention, sliding windows
-----------------------------------------------------
:func:`model_flops_per_token` takes the model itself. Its ``N`` is the *active*
parameters (:func:`gpulesson.transformer.active_params`): a token is multiplied only by
the experts it is routed to, while memory holds them all. Its attention term follows each
layer: ``2*H*(d_qk + d_v)*T`` forward FLOPs per token per layer, with the query/key head
size ``d_qk`` and the value head size ``d_v`` (both ``Q`` in PaLM's count, 192 and 128 in
DeepSeek-V3's latent attention), and ``T`` capped at the window in sliding-window layers.
Training is three times the forward pass, so a dense model with full attention gives
PaLM's ``12*L*H*Q*T`` exactly. With DeepSeek Sparse Attention ``T`` is capped at the
top-k, and the indexer that picks the keys scores all ``T`` of them forward and only the
picked ones backward (:func:`indexer_training_flops`). :func:`model_training_flops`
multiplies by the tokens, with the same attention term, so that per-token figures,
totals, days and GPU-hours agree.

MFU and HFU
-----------
*Model FLOPs utilisation* = achieved model FLOP/s / peak FLOP/s, where model FLOPs are
the ones the model needs (``6N + 12LHQT`` per token) whatever the implementation does
(PaLM appendix B). *Hardware FLOPs utilisation* counts the FLOPs actually executed,
including activation recomputation: a full recomputation adds one forward pass
(``8N`` instead of ``6N``; Narayanan et al. 2021, eq. 3), which is why HFU > MFU.
Kernels that compute the same attention another way do not change the model FLOPs either:
DeepSeek Sparse Attention runs latent attention absorbed, 3.4 times the model's FLOPs per
key for DeepSeek-V3.2 (:func:`executed_attention_flops_per_key`), work that counts in HFU
and in the time it takes, not in MFU.

Chinchilla: a heuristic and the fits
------------------------------------
"20 tokens per parameter" (:func:`chinchilla_tokens`, :func:`chinchilla_optimal`) is a
rule of thumb read off Hoffmann et al. 2022. The paper's own projections
(:func:`chinchilla_fitted_optimal`, Table 3) give a smaller model at large budgets: 67B
parameters for Gopher's 5.76e23 FLOPs, where ``D = 20N`` gives 69B. A power law fitted to
those rows (:func:`power_law_fit`) recovers approach 1's exponent, ``N_opt ~ C^0.50``.

Approach 3 fits a loss surface instead, ``L(N, D) = E + A/N^alpha + B/D^beta``
(:func:`chinchilla_loss`), whose minimum under ``C = 6ND`` has a closed form (the paper's
eq. 4, :func:`chinchilla_loss_optimal`): ``N_opt = G (C/6)^a``, ``D_opt = (C/6)^b / G``
with ``G = (alpha A / (beta B))^(1/(alpha+beta))``, ``a = beta/(alpha+beta)``,
``b = alpha/(alpha+beta)``. The constants (:data:`CHINCHILLA_FITS`) matter: the paper's
(E = 1.69, A = 406.4, B = 410.7, alpha = 0.34, beta = 0.28, unrounded 0.3392 and 0.2849)
give ``a = 0.46`` and 40B parameters at Gopher's budget; Besiroglu et al.'s 2024 refit of
the same data gives ``a = 0.51`` and 72B, close to the 70B Chinchilla was.

Taught in: ``notebooks/flops_and_scaling.ipynb``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from gpulesson import _validate as v
from gpulesson.transformer import TransformerConfig, active_params, as_config

__all__ = [
    "CHINCHILLA_FITS",
    "CHINCHILLA_TABLE_3",
    "ChinchillaFit",
    "ChinchillaPoint",
    "absorbed_attention_flops_per_key",
    "attended_keys",
    "attention_flops_per_key",
    "attention_flops_per_token",
    "chinchilla_fitted_optimal",
    "chinchilla_loss",
    "chinchilla_loss_optimal",
    "chinchilla_optimal",
    "chinchilla_tokens",
    "executed_attention_flops_per_key",
    "executed_forward_attention_flops_per_token",
    "flops_per_token",
    "forward_attention_flops_per_token",
    "model_flops_per_token",
    "model_training_flops",
    "hardware_flops_per_token",
    "hfu",
    "indexer_flops_per_key",
    "indexer_training_flops",
    "megatron_flops_per_iteration",
    "mfu",
    "model_attention_flops_per_token",
    "power_law_fit",
    "training_days",
    "training_flops",
    "tokens_per_second",
    "training_time",
    "utilization",
]

SECONDS_PER_DAY = 86_400
#: Chinchilla's compute-optimal ratio of training tokens to parameters (Hoffmann et al.
#: 2022): about 20 tokens per parameter.
CHINCHILLA_TOKENS_PER_PARAM = 20


def training_flops(n_params: float, tokens: float) -> float:
    """Training FLOPs ``6 * N * D`` (forward 2N + backward 4N per token).

    Parameters
    ----------
    n_params : float
        ``N`` (state whether embeddings are included; see the module docstring).
    tokens : float
        ``D``, training tokens.
    """
    n = v.positive_number("n_params", n_params)
    d = v.positive_number("tokens", tokens)
    return 6.0 * n * d


def attention_flops_per_token(*, layers: int, heads: int, head_dim: int, seq_len: int) -> float:
    """PaLM's attention term ``12 * L * H * Q * T`` FLOPs per token (training).

    Chowdhery et al. 2022, appendix B. Counts the full ``T x T`` score matrix (no saving
    for causal masking), forward + backward.
    """
    layers = v.positive_int("layers", layers)
    heads = v.positive_int("heads", heads)
    head_dim = v.positive_int("head_dim", head_dim)
    seq_len = v.positive_int("seq_len", seq_len)
    return float(12 * layers * heads * head_dim * seq_len)


def _attention_or_zero(
    layers: int | None, heads: int | None, head_dim: int | None, seq_len: int | None
) -> float:
    given = [x is not None for x in (layers, heads, head_dim, seq_len)]
    if not any(given):
        return 0.0
    if not all(given):
        raise ValueError(
            "give all of layers, heads, head_dim and seq_len for the attention term, or none "
            f"(got layers={layers}, heads={heads}, head_dim={head_dim}, seq_len={seq_len})"
        )
    return attention_flops_per_token(
        layers=layers, heads=heads, head_dim=head_dim, seq_len=seq_len  # type: ignore[arg-type]
    )


def flops_per_token(
    n_params: float,
    *,
    layers: int | None = None,
    heads: int | None = None,
    head_dim: int | None = None,
    seq_len: int | None = None,
) -> float:
    """Model training FLOPs per token: ``6N``, plus ``12*L*H*Q*T`` when the shape is given.

    This is the numerator of MFU in PaLM's appendix B.
    """
    n = v.positive_number("n_params", n_params)
    return 6.0 * n + _attention_or_zero(layers, heads, head_dim, seq_len)


def hardware_flops_per_token(
    n_params: float,
    *,
    recompute: str = "none",
    layers: int | None = None,
    heads: int | None = None,
    head_dim: int | None = None,
    seq_len: int | None = None,
) -> float:
    """FLOPs executed per token, including activation recomputation (for HFU).

    * ``"none"``: ``6N + 12LHQT`` (same as :func:`flops_per_token`).
    * ``"selective"``: the attention score products are recomputed in the backward pass
      (Korthikanti et al. 2022): ``6N + 16LHQT``.
    * ``"full"``: one more forward pass of everything: ``8N + 16LHQT`` (Narayanan et al.
      2021, eq. 3 counts ``8N`` for the weights).
    """
    n = v.positive_number("n_params", n_params)
    mode = v.choice("recompute", recompute, ("none", "selective", "full"))
    attention = _attention_or_zero(layers, heads, head_dim, seq_len)
    weights = 8.0 * n if mode == "full" else 6.0 * n
    return weights + (attention * 4 / 3 if mode != "none" else attention)


def attention_flops_per_key(cfg: TransformerConfig) -> int:
    """Forward FLOPs one query spends on one key in one attention layer, over all heads:
    ``2 * heads * (d_qk + d_v)``, the ``QK^T`` score (``2*d_qk`` per head) and the weighted
    value (``2*d_v``). Llama-2-7B: ``2 * 32 * (128 + 128)`` = 16,384; DeepSeek-V3's latent
    attention as its heads attend after up-projection: ``2 * 128 * (192 + 128)`` = 81,920."""
    cfg = as_config(cfg)
    return 2 * cfg.heads * (cfg.head_dim + cfg.value_head_dim)  # type: ignore[operator]


def absorbed_attention_flops_per_key(cfg: TransformerConfig) -> int:
    """Forward FLOPs one query spends on one key in one latent-attention layer run
    absorbed ("MQA mode"): ``2 * heads * (2 * kv_lora_rank + qk_rope_head_dim)``.

    With the key and value up-projections folded into the query and the output, every
    head attends to the cached latent itself, ``kv_lora_rank + qk_rope_head_dim`` values
    as the key and ``kv_lora_rank`` as the value (DeepSeek-AI, DeepSeek-V3.2-Exp report,
    29 September 2025, ``DeepSeek_V3_2.pdf`` in github.com/deepseek-ai/DeepSeek-V3.2-Exp,
    appendix A, "MHA and MQA Modes of MLA"; FlashMLA's README, support matrix: "MQA stands
    for Multi-Query Attention mode (i.e. ``head_dim_k`` = 576 with ``head_dim_v`` = 512)").
    DeepSeek-V3 and V3.2: 2 x 128 x (576 + 512) = 278,528, 3.4 times the 81,920 of the
    up-projected heads (:func:`attention_flops_per_key`); GLM-5.1: 2 x 64 x (576 + 512) =
    139,264 against 65,536. The folded projections run once per token, weights counted in
    ``2N``.

    Raises
    ------
    ValueError
        for a model without latent attention, which has no absorbed form.
    """
    cfg = as_config(cfg)
    if not cfg.latent_attention:
        raise ValueError(f"{cfg.name or 'this model'} has no latent attention "
                         "(kv_lora_rank), so no absorbed form: use attention_flops_per_key")
    return 2 * cfg.heads * (2 * cfg.kv_lora_rank + cfg.qk_rope_head_dim)  # type: ignore[operator]


def executed_attention_flops_per_key(cfg: TransformerConfig, *, sequence: int) -> int:
    """Forward FLOPs per query, key and layer that the attention kernels execute when
    training on or prefilling sequences of ``sequence`` tokens.

    :func:`attention_flops_per_key` (the up-projected heads, "MHA mode"), except for
    DeepSeek Sparse Attention over latent attention (``indexer_topk`` with
    ``kv_lora_rank``) when ``sequence`` is longer than the top-k: its sparse kernels run
    latent attention absorbed, :func:`absorbed_attention_flops_per_key`. The
    DeepSeek-V3.2-Exp report (DeepSeek-AI, 29 September 2025, section 1, "Instantiate DSA
    Under MLA"; DeepSeek-V3.2, arXiv 2512.02556, keeps its architecture): "each key-value
    entry must be shared across multiple queries for computational efficiency. Therefore,
    we implement DSA based on the MQA [...] mode of MLA, where each latent vector (the
    key-value entry of MLA) will be shared across all query heads of the query token", the
    mode its continued training ran in; FlashMLA's sparse prefill and sparse decode kernels
    are MQA mode only (README, support matrix). Sequences that fit in the top-k attend to
    every key: for "short-sequence prefilling" the report runs "a masked MHA mode to
    simulate DSA", and vLLM's sparse MLA backends (``sparse_mla_attention.py``,
    ``use_dense_mha``: ``prefill_max_seq_len <= self.topk_tokens``) prefill them with the
    dense up-projected kernel; training sequences that short are counted the same way.

    Model FLOPs (MFU's numerator, :func:`model_flops_per_token`) keep
    :func:`attention_flops_per_key` whatever the kernels do; the absorbed extra is hardware
    work (HFU's, with :func:`hfu`). Decode runs absorbed at every length
    (:func:`gpulesson.inference.decode_attention_flops`). DeepSeek-V3.2 at 131,072 tokens:
    278,528 x 2,048 = 570,425,344 forward FLOPs a token and layer over its picked keys,
    where the model count is 81,920 x 2,048 = 167,772,160.
    """
    cfg = as_config(cfg)
    t = v.positive_int("sequence", sequence)
    if cfg.indexer_topk and cfg.latent_attention and t > cfg.indexer_topk:
        return absorbed_attention_flops_per_key(cfg)
    return attention_flops_per_key(cfg)


def indexer_flops_per_key(cfg: TransformerConfig) -> int:
    """Forward FLOPs a DeepSeek Sparse Attention indexer spends on one cached token in
    one layer: ``2 * H_I * (d_I + 1)``; 0 without an indexer or a top-k.

    The lightning indexer scores a cached token ``s`` for the query ``t`` as
    ``sum_j w_{t,j} * ReLU(q_{t,j} . k_s)`` over its ``H_I`` heads
    (deepseek-ai/DeepSeek-V3.2-Exp ``inference/model.py``, ``Indexer.forward``: one key
    ``k_cache`` of ``index_head_dim`` a token, ``fp8_index(q_fp8, weights, k_cache,
    k_scale_cache)`` with ``weights`` from ``weights_proj``, one a head): a dot product
    of ``d_I`` values per head (``2 * d_I`` FLOPs) and the head's weight and sum (2).
    Its projections (``wq_b``, ``wk``, ``weights_proj``) are weights, counted in ``2N``.
    DeepSeek-V3.2 (64 heads of 128): 16,512, against latent attention's 81,920 per key
    (``2 * 128 * (192 + 128)``).
    """
    cfg = as_config(cfg)
    if not cfg.indexer_topk:
        return 0
    return 2 * cfg.indexer_heads * (cfg.indexer_head_dim + 1)


def attended_keys(context: int, new_tokens: int, window: int = 0) -> int:
    """Keys ``new_tokens`` tokens attend to, summed, when the first comes after ``context``
    earlier tokens and each sees at most ``window`` (0: no cap) of the tokens up to and
    including itself: ``sum_{i=1..k} min(context + i, window)``.

    Causal attention over a ``T``-token sequence is ``attended_keys(0, T)`` =
    ``T(T+1)/2``; with DeepSeek Sparse Attention's top-k as the cap, ``attended_keys(0, T,
    2048)`` = ``2048 x 2049 / 2 + (T - 2048) x 2048`` keys for ``T > 2048``.
    """
    c = v.nonneg_int("context", context)
    k = v.nonneg_int("new_tokens", new_tokens)
    w = v.nonneg_int("window", window or 0)  # None: no window
    if not w:
        return k * c + k * (k + 1) // 2
    m = min(max(w - c, 0), k)  # tokens whose keys still fit inside the cap
    return m * c + m * (m + 1) // 2 + (k - m) * w


def indexer_training_flops(cfg: TransformerConfig, *, scored: int, selected: int) -> int:
    """Training FLOPs (forward and backward) of one layer's sparse-attention indexer that
    scores ``scored`` keys and picks ``selected`` of them:
    ``indexer_flops_per_key * (scored + 2 * selected)``; 0 without a top-k.

    The forward pass scores every key (:func:`indexer_flops_per_key`); the backward pass,
    twice the forward's work (the gradients of the indexer's queries and keys), runs on
    the picked keys alone. In DeepSeek-V3.2's sparse training stage the indexer's loss is
    the KL divergence between the main attention's distribution and the indexer's
    softmax over the selected set ``S_t`` only, and the indexer's input is detached from
    the main model (DeepSeek-AI 2025, "DeepSeek-V3.2: Pushing the Frontier of Open Large
    Language Models", arXiv 2512.02556, continued pre-training; 2,048 keys a query, 480
    sequences of 128K tokens a step). DeepSeek-V3.2, one query at 131,072 tokens:
    16,512 x (131,072 + 2 x 2,048) = 2,231,894,016 FLOPs a layer, where three forward
    passes would be 6,492,782,592.
    """
    cfg = as_config(cfg)
    s = v.nonneg_int("scored", scored)
    k = v.nonneg_int("selected", selected)
    if k > s:
        raise ValueError(f"selected ({k}) cannot exceed scored ({s}): the indexer picks "
                         "among the keys it scores")
    return indexer_flops_per_key(cfg) * (s + 2 * k)


def forward_attention_flops_per_token(cfg: TransformerConfig, *, context: int) -> int:
    """Forward attention FLOPs of one token that attends to ``context`` tokens.

    ``sum over layers of 2 * heads * (d_qk + d_v) * min(context, window)``: the
    ``QK^T`` scores (``2*d_qk`` per head and key) and the weighted values (``2*d_v``),
    with the window only in sliding-window layers and ``min(context, chunk)`` in chunked
    ones (Llama 4). Counts every key as PaLM does (no
    saving for causal masking). Llama-2-7B at 4,096 tokens: ``4*32*32*128*4096`` =
    2.1 GFLOP. With DeepSeek Sparse Attention (``indexer_topk``) each layer attends to
    ``min(context, topk)`` keys and its indexer scores all ``context``
    (:func:`indexer_flops_per_key`): DeepSeek-V3.2 at 131,072 tokens, 61 x (81,920 x
    2,048 + 16,512 x 131,072) = 142.3 GFLOP against 655.0 attending to every token.

    Parameters
    ----------
    cfg : TransformerConfig
        The model: heads, head sizes (latent attention's ``d_qk = 192``, ``d_v = 128``
        for DeepSeek-V3), windows.
    context : int
        Keys each query sees: the sequence length for training and prefill (full score
        matrix), the cache length in decode.
    """
    cfg = as_config(cfg)
    t = v.positive_int("context", context)
    per_key = attention_flops_per_key(cfg)
    local = min(t, cfg.sliding_window) if cfg.sliding_window else t
    chunked = min(t, cfg.attention_chunk) if cfg.attention_chunk else t
    top = min(t, cfg.indexer_topk) if cfg.indexer_topk else t  # no window beside a top-k
    return (per_key * (cfg.global_layers * top + cfg.local_layers * local
                       + cfg.chunked_layers * chunked)
            + indexer_flops_per_key(cfg) * cfg.global_layers * t)


def executed_forward_attention_flops_per_token(cfg: TransformerConfig, *, context: int,
                                               sequence: int | None = None) -> int:
    """:func:`forward_attention_flops_per_token` with the top-k's keys at the FLOPs its
    kernels execute (:func:`executed_attention_flops_per_key`) in a prefill of
    ``sequence`` tokens (default ``context``): for time, not for MFU.

    The same for every model but DeepSeek Sparse Attention over latent attention past its
    top-k, whose picked keys run absorbed: DeepSeek-V3.2 at 131,072 tokens, 61 x (278,528
    x 2,048 + 16,512 x 131,072) = 166.8 GFLOP, against the model's 142.3.
    """
    cfg = as_config(cfg)
    model = forward_attention_flops_per_token(cfg, context=context)
    if not cfg.indexer_topk:
        return model
    s = context if sequence is None else sequence
    extra = executed_attention_flops_per_key(cfg, sequence=s) - attention_flops_per_key(cfg)
    return model + extra * cfg.global_layers * min(int(context), cfg.indexer_topk)


def model_attention_flops_per_token(cfg: TransformerConfig, *, seq_len: int) -> int:
    """Training attention FLOPs per token of any architecture: three times
    :func:`forward_attention_flops_per_token` at ``seq_len`` (forward + backward).

    For a dense model with full attention this is PaLM's ``12*L*H*Q*T``
    (:func:`attention_flops_per_token`); latent attention uses its head sizes and
    sliding-window layers their window. The attention term of :func:`model_flops_per_token`.
    With DeepSeek Sparse Attention the attention over the ``min(seq_len, topk)`` picked keys
    is three times its forward pass, and the indexer's scoring of all ``seq_len`` keys runs
    forward only, its backward pass on the picked keys (:func:`indexer_training_flops`):
    DeepSeek-V3.2 at 131,072 tokens, 61 x (3 x 81,920 x 2,048 + 16,512 x (131,072 + 2 x
    2,048)) = 166.8 GFLOP, against 426.8 with three forward passes of the indexer and
    1,964.9 attending to every key.
    """
    cfg = as_config(cfg)
    forward = forward_attention_flops_per_token(cfg, context=seq_len)
    if not cfg.indexer_topk:
        return 3 * forward
    t, layers = int(seq_len), cfg.global_layers  # a top-k has no window or chunk beside it
    scoring = indexer_flops_per_key(cfg) * layers * t
    return 3 * (forward - scoring) + layers * indexer_training_flops(
        cfg, scored=t, selected=min(t, cfg.indexer_topk))


def model_flops_per_token(cfg: TransformerConfig, *, seq_len: int | None = None,
                          n_params: float | None = None) -> float:
    """Model training FLOPs per token of any architecture: ``6 * N_active`` + attention.

    ``N_active`` is :func:`gpulesson.transformer.active_params` (all parameters for a
    dense model, embeddings included as PaLM and Chinchilla count them); the attention
    term, when ``seq_len`` is given, is three times :func:`forward_attention_flops_per_token`
    (forward + backward). For a dense model with full attention this is
    :func:`flops_per_token` with the model's shape, PaLM's ``6N + 12*L*H*Q*T``.

    Parameters
    ----------
    cfg : TransformerConfig
        The model.
    seq_len : int, optional
        Training sequence length; without it, ``6 * N_active`` only.
    n_params : float, optional
        Override ``N`` (e.g. ``transformer.non_embedding_params`` for Kaplan's count).
    """
    cfg = as_config(cfg)
    n = active_params(cfg) if n_params is None else v.positive_number("n_params", n_params)
    attention = 0 if seq_len is None else model_attention_flops_per_token(cfg,
                                                                          seq_len=seq_len)
    return 6.0 * n + attention


def model_training_flops(cfg: TransformerConfig, *, tokens: float,
                         seq_len: int | None = None,
                         n_params: float | None = None) -> float:
    """Training FLOPs of ``tokens`` tokens: ``tokens * model_flops_per_token(...)``.

    The same convention as the per-token figure, attention included when ``seq_len`` is
    given, so totals, days and GPU-hours match the FLOPs per token a calculator shows.
    A mixture-of-experts model costs its active parameters: Mixtral 8x7B trains like a
    12.9B dense model, not a 46.7B one.
    """
    d = v.positive_number("tokens", tokens)
    return d * model_flops_per_token(cfg, seq_len=seq_len, n_params=n_params)


def _utilisation(tokens_per_second: float, per_token: float, n_devices: int, peak: float,
                 label: str) -> float:
    tps = v.positive_number("tokens_per_second", tokens_per_second)
    f = v.positive_number(label, per_token)
    n = v.positive_int("n_devices", n_devices)
    p = v.positive_number("peak_flops", peak)
    return tps * f / (n * p)


def mfu(tokens_per_second: float, flops_per_token: float, n_devices: int,
        peak_flops: float) -> float:
    """Model FLOPs utilisation: ``tokens/s * model FLOPs per token / (devices * peak)``.

    PaLM appendix B. Use the dense peak of the data type (e.g. 989.4e12 for H100 BF16).
    """
    return _utilisation(tokens_per_second, flops_per_token, n_devices, peak_flops,
                        "flops_per_token")


def hfu(tokens_per_second: float, hardware_flops_per_token: float, n_devices: int,
        peak_flops: float) -> float:
    """Hardware FLOPs utilisation: as :func:`mfu` with the FLOPs actually executed."""
    return _utilisation(tokens_per_second, hardware_flops_per_token, n_devices, peak_flops,
                        "hardware_flops_per_token")


def utilization(achieved_flops: float, peak_flops: float) -> float:
    """Achieved FLOP/s per device over its peak FLOP/s (a fraction).

    For papers that report achieved TFLOP/s per GPU rather than tokens/s (Megatron-LM,
    Llama 3, FlashAttention-3).
    """
    a = v.positive_number("achieved_flops", achieved_flops)
    p = v.positive_number("peak_flops", peak_flops)
    return a / p


def megatron_flops_per_iteration(
    *, batch: int, seq_len: int, layers: int, hidden: int, vocab: int, recompute: bool = True
) -> float:
    """FLOPs of one training iteration of a GPT model (Narayanan et al. 2021, eq. 3).

    With full activation recomputation (``recompute=True``, the paper's setting)::

        F = 96 * B * s * l * h^2 * (1 + s / (6h) + V / (16 * l * h))

    Without recomputation the weights cost 3 passes instead of 4 (72 instead of 96) and
    the logit layer is unchanged: ``72*B*s*l*h^2*(1 + s/(6h) + V/(12*l*h))``.

    Parameters
    ----------
    batch : int
        Global batch size ``B`` in sequences.
    seq_len, layers, hidden, vocab : int
        ``s``, ``l``, ``h``, ``V``.
    recompute : bool
        Full activation recomputation.
    """
    b, s, layers, h, vocab = v.positive_ints(batch=batch, seq_len=seq_len, layers=layers,
                                             hidden=hidden, vocab=vocab)
    v.boolean("recompute", recompute)
    if recompute:
        return 96.0 * b * s * layers * h * h * (1 + s / (6 * h) + vocab / (16 * layers * h))
    return 72.0 * b * s * layers * h * h * (1 + s / (6 * h) + vocab / (12 * layers * h))


def training_time(total_flops: float, n_devices: int, peak_flops: float, mfu: float) -> float:
    """Seconds to spend ``total_flops`` on ``n_devices`` running at ``mfu`` of peak.

    ``total_flops / (n_devices * peak_flops * mfu)``. With hardware FLOPs (``8N`` per token
    for full recomputation) pass the HFU instead, as Narayanan et al. 2021 (eq. 4) do.
    """
    f = v.positive_number("total_flops", total_flops)
    n = v.positive_int("n_devices", n_devices)
    p = v.positive_number("peak_flops", peak_flops)
    u = v.fraction("mfu", mfu, allow_zero=False)
    return f / (n * p * u)


def tokens_per_second(*, n_devices: int, peak_flops: float, mfu: float,
                      flops_per_token: float) -> float:
    """Training throughput implied by an MFU: ``n_devices * peak_flops * mfu / flops_per_token``.

    :func:`mfu` solved for the tokens per second (PaLM, Chowdhery et al. 2022, appendix B):
    PaLM 540B's 46.2 % MFU on 6,144 TPU v4 chips of 275 TFLOP/s, at
    ``6N + 12LHQT`` = 3.27e12 FLOPs per token, is 238.3K tokens/s, the throughput the paper
    reports. Use the dense peak and the model FLOPs per token (:func:`flops_per_token`).

    Parameters
    ----------
    n_devices : int
        GPUs (or accelerators) training together.
    peak_flops : float
        Dense peak FLOP/s of one device in the training precision.
    mfu : float
        Model FLOPs utilisation, in (0, 1]: an assumption unless measured.
    flops_per_token : float
        Model training FLOPs per token (``6N``, plus the attention term if counted).
    """
    n = v.positive_int("n_devices", n_devices)
    p = v.positive_number("peak_flops", peak_flops)
    u = v.fraction("mfu", mfu, allow_zero=False)
    f = v.positive_number("flops_per_token", flops_per_token)
    return n * p * u / f


def training_days(total_flops: float, n_devices: int, peak_flops: float, mfu: float) -> float:
    """:func:`training_time` in days (86,400 s)."""
    return training_time(total_flops, n_devices, peak_flops, mfu) / SECONDS_PER_DAY


def chinchilla_tokens(n_params: float) -> float:
    """Compute-optimal training tokens by the rule of thumb ``20 * N``.

    A heuristic read off Hoffmann et al. 2022 (70B parameters, 1.4T tokens for
    Chinchilla), not the paper's fit: :func:`chinchilla_fitted_optimal` gives the fitted
    projection, which needs fewer parameters than ``D = 20N`` at large budgets.
    """
    n = v.positive_number("n_params", n_params)
    return float(CHINCHILLA_TOKENS_PER_PARAM * n)


@dataclass(frozen=True)
class ChinchillaPoint:
    """A compute-optimal model size and token count for a FLOP budget."""

    params: float
    tokens: float


def chinchilla_optimal(total_flops: float) -> ChinchillaPoint:
    """Parameters and tokens that spend ``total_flops`` with ``D = 20N`` and ``C = 6ND``.

    ``N = sqrt(C / 120)``, ``D = 20N``: the 20-tokens-per-parameter **heuristic**. Gopher's
    budget of 5.76e23 FLOPs gives about 69B parameters and 1.4T tokens, close to the 70B
    Chinchilla model (Hoffmann et al. 2022) but not the paper's fitted optimum, 67B
    (:func:`chinchilla_fitted_optimal`).
    """
    c = v.positive_number("total_flops", total_flops)
    n = math.sqrt(c / (6 * CHINCHILLA_TOKENS_PER_PARAM))
    return ChinchillaPoint(params=n, tokens=CHINCHILLA_TOKENS_PER_PARAM * n)


#: Hoffmann et al. 2022, Table 3 (approach 1): compute-optimal parameters, FLOPs and
#: training tokens, as printed.
CHINCHILLA_TABLE_3: tuple[tuple[float, float, float], ...] = (
    (400e6, 1.92e19, 8.0e9),
    (1e9, 1.21e20, 20.2e9),
    (10e9, 1.23e22, 205.1e9),
    (67e9, 5.76e23, 1.5e12),
    (175e9, 3.85e24, 3.7e12),
    (280e9, 9.90e24, 5.9e12),
    (520e9, 3.43e25, 11.0e12),
    (1e12, 1.27e26, 21.2e12),
    (10e12, 1.30e28, 216.2e12),
)


def chinchilla_fitted_optimal(total_flops: float) -> ChinchillaPoint:
    """The paper's compute-optimal size and tokens for a FLOP budget (its fit, not 20N).

    Hoffmann et al. 2022 fit the loss-optimal model size as a power law of compute
    (approach 1: ``N_opt ~ C^0.50``, ``D_opt ~ C^0.50``) and print its projections in
    Table 3 (:data:`CHINCHILLA_TABLE_3`). This function interpolates that table on log-log
    axes, so it returns the printed rows exactly: 67B parameters and 1.5T tokens at
    Gopher's 5.76e23 FLOPs, where the heuristic ``D = 20N`` (:func:`chinchilla_optimal`)
    gives 69B and 1.4T. Below 1B parameters the two agree; above, the fit wants fewer
    parameters and more tokens per parameter (22 at 67B, 22 at 10T).

    Raises
    ------
    ValueError
        outside the table, 1.92e19 to 1.30e28 FLOPs.
    """
    c = v.positive_number("total_flops", total_flops)
    low, high = CHINCHILLA_TABLE_3[0][1], CHINCHILLA_TABLE_3[-1][1]
    if not low <= c <= high:
        raise ValueError(f"total_flops must be within Hoffmann et al.'s Table 3, {low:.3g} "
                         f"to {high:.3g} FLOPs, got {c:.3g}")
    for (n0, c0, d0), (n1, c1, d1) in zip(CHINCHILLA_TABLE_3, CHINCHILLA_TABLE_3[1:], strict=False):
        if c0 <= c <= c1:
            f = math.log(c / c0) / math.log(c1 / c0)
            return ChinchillaPoint(params=n0 * (n1 / n0) ** f, tokens=d0 * (d1 / d0) ** f)
    raise AssertionError("unreachable: c lies in the table")  # pragma: no cover


@dataclass(frozen=True)
class ChinchillaFit:
    """Constants of the loss surface ``L(N, D) = E + A/N^alpha + B/D^beta`` (Hoffmann et
    al. 2022, approach 3) and where they were published.

    ``a`` and ``b`` are the exponents of the compute-optimal allocation it implies,
    ``N_opt ~ C^a``, ``D_opt ~ C^b``.
    """

    E: float
    A: float
    B: float
    alpha: float
    beta: float
    source: str

    @property
    def a(self) -> float:
        """Exponent of the optimal parameters in compute: ``beta / (alpha + beta)``."""
        return self.beta / (self.alpha + self.beta)

    @property
    def b(self) -> float:
        """Exponent of the optimal tokens in compute: ``alpha / (alpha + beta)``."""
        return self.alpha / (self.alpha + self.beta)


#: Published constants of the approach-3 loss surface. ``"hoffmann"``: as printed in
#: Hoffmann et al. 2022, section 3.3; ``"hoffmann_unrounded"``: the same fit before
#: rounding, from the paper's TeX source as Besiroglu et al. 2024 (arXiv 2404.10102) report
#: it; ``"besiroglu"``: their refit of data extracted from the paper's Figure 4.
CHINCHILLA_FITS: Mapping[str, ChinchillaFit] = MappingProxyType({
    "hoffmann": ChinchillaFit(1.69, 406.4, 410.7, 0.34, 0.28,
                              "Hoffmann et al. 2022, section 3.3, as printed"),
    "hoffmann_unrounded": ChinchillaFit(1.6934, 406.4, 410.7, 0.3392, 0.2849,
                                        "Hoffmann et al. 2022 TeX source, per Besiroglu "
                                        "et al. 2024"),
    "besiroglu": ChinchillaFit(1.8172, 482.01, 2085.43, 0.3478, 0.3658,
                               "Besiroglu et al. 2024, Chinchilla Scaling: A replication "
                               "attempt"),
})


def _chinchilla_fit(fit: str) -> ChinchillaFit:
    return CHINCHILLA_FITS[v.lookup("fit", fit, CHINCHILLA_FITS)[0]]


def chinchilla_loss(n_params: float, tokens: float, *, fit: str = "hoffmann") -> float:
    """Predicted loss of ``n_params`` parameters trained on ``tokens`` tokens:
    ``E + A / N^alpha + B / D^beta`` (Hoffmann et al. 2022, eq. 2 with the constants of
    :data:`CHINCHILLA_FITS`). With the printed constants Chinchilla (70B, 1.4T) gets 1.94,
    Gopher (280B, 300B tokens) 1.99: more data beat more parameters at equal compute.
    """
    n = v.positive_number("n_params", n_params)
    d = v.positive_number("tokens", tokens)
    f = _chinchilla_fit(fit)
    return f.E + f.A / n ** f.alpha + f.B / d ** f.beta


def chinchilla_loss_optimal(total_flops: float, *, fit: str = "hoffmann") -> ChinchillaPoint:
    """Parameters and tokens that minimise :func:`chinchilla_loss` for ``C = 6ND`` FLOPs.

    The paper's eq. 4: ``N_opt = G (C/6)^a``, ``D_opt = G^-1 (C/6)^b``,
    ``G = (alpha A / (beta B))^(1 / (alpha + beta))``, ``a = beta / (alpha + beta)``,
    ``b = alpha / (alpha + beta)``. ``E`` does not move the optimum. At Gopher's 5.76e23
    FLOPs the printed constants give 32B parameters, the unrounded ones 40B, Besiroglu et
    al.'s refit 72B and 1.3T tokens.
    """
    c = v.positive_number("total_flops", total_flops)
    f = _chinchilla_fit(fit)
    g = (f.alpha * f.A / (f.beta * f.B)) ** (1 / (f.alpha + f.beta))
    return ChinchillaPoint(params=g * (c / 6) ** f.a, tokens=(c / 6) ** f.b / g)


def power_law_fit(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """Least-squares fit of ``y = k * x^p`` on log-log axes: returns ``(p, k)``.

    Fitted to Hoffmann et al.'s Table 3 (parameters against FLOPs) it gives the exponent of
    their approach 1, ``a = 0.50`` (their Table 2). At least two points, all positive, not
    all with the same ``x``.
    """
    if not isinstance(x, Sequence) or not isinstance(y, Sequence) or len(x) != len(y):
        raise ValueError(f"x and y must be sequences of the same length, got "
                         f"{v._short_repr(x)} and {v._short_repr(y)}")
    if len(x) < 2:
        raise ValueError(f"x and y must hold at least 2 points, got {len(x)}")
    lx = [math.log(v.positive_number(f"x[{i}]", xi)) for i, xi in enumerate(x)]
    ly = [math.log(v.positive_number(f"y[{i}]", yi)) for i, yi in enumerate(y)]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    sxx = sum((a - mx) ** 2 for a in lx)
    if sxx == 0:
        raise ValueError("x must hold at least two different values")
    slope = sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True)) / sxx
    return slope, math.exp(my - slope * mx)


v.guard_module(globals())
