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

MFU and HFU
-----------
*Model FLOPs utilisation* = achieved model FLOP/s / peak FLOP/s, where model FLOPs are
the ones the model needs (``6N + 12LHQT`` per token) whatever the implementation does
(PaLM appendix B). *Hardware FLOPs utilisation* counts the FLOPs actually executed,
including activation recomputation: a full recomputation adds one forward pass
(``8N`` instead of ``6N``; Narayanan et al. 2021, eq. 3), which is why HFU > MFU.

Taught in: ``notebooks/flops_and_scaling.ipynb``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpulesson import _validate as v

__all__ = [
    "ChinchillaPoint",
    "attention_flops_per_token",
    "chinchilla_optimal",
    "chinchilla_tokens",
    "flops_per_token",
    "hardware_flops_per_token",
    "hfu",
    "megatron_flops_per_iteration",
    "mfu",
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
    b = v.positive_int("batch", batch)
    s = v.positive_int("seq_len", seq_len)
    layers = v.positive_int("layers", layers)
    h = v.positive_int("hidden", hidden)
    vocab = v.positive_int("vocab", vocab)
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
    """Compute-optimal training tokens, ``20 * N`` (Hoffmann et al. 2022)."""
    n = v.positive_number("n_params", n_params)
    return float(CHINCHILLA_TOKENS_PER_PARAM * n)


@dataclass(frozen=True)
class ChinchillaPoint:
    """A compute-optimal model size and token count for a FLOP budget."""

    params: float
    tokens: float


def chinchilla_optimal(total_flops: float) -> ChinchillaPoint:
    """Parameters and tokens that spend ``total_flops`` with ``D = 20N`` and ``C = 6ND``.

    ``N = sqrt(C / 120)``, ``D = 20N``. Gopher's budget of 5.76e23 FLOPs gives about
    69B parameters and 1.4T tokens, the Chinchilla model (Hoffmann et al. 2022).
    """
    c = v.positive_number("total_flops", total_flops)
    n = math.sqrt(c / (6 * CHINCHILLA_TOKENS_PER_PARAM))
    return ChinchillaPoint(params=n, tokens=CHINCHILLA_TOKENS_PER_PARAM * n)


v.guard_module(globals())
