"""What the exercise banks share besides their wording (:mod:`gpulesson.exercises.wording`).

The type of one variant's parameters, the course's reference GPU and the GPU menu several
lessons draw their variants from, and the model preset a variant names; the figures and
slips several banks work out the same way (the sparse peak and its ridge, a decode ceiling,
a training run's wall time, the slips of a layer's arithmetic intensity). GPU names are
:data:`gpulesson.hardware.GPUS` keys and model names :data:`gpulesson.transformer.PRESETS`
keys, so a menu here is checked by every bank test that builds the variants; a sequence
length drawn for a model stays within its context (:func:`within_context`).
Standard library only.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gpulesson import (
    flops,
    gemm,
    hardware,
    inference,
    memory,
    prices,
    roofline,
    transformer,
)
from gpulesson.exercises import mistakes
from gpulesson.exercises.core import Mistake

__all__ = ["CONTEXT_ALLOWANCE", "H100", "P", "SERVING_GPUS", "Shape", "at_sparse_peak",
           "config", "decode_ceiling", "drawn_until", "gib_as_gb_of", "intensity_slips",
           "quote_of", "quoted_prices", "slip_to", "sparse_peak", "sparse_ridge", "state_fits",
           "training_seconds", "within_context"]

#: The parameters of one variant of an exercise (its ``defaults`` or a ``sample``).
P = Mapping[str, Any]

#: A layer's matrix product, an M × K input times a K × N weight matrix: ``shape(p)`` gives
#: (M, K, N).
Shape = Callable[[P], tuple[int, int, int]]

#: The GPU the lessons' worked numbers use unless a question names another.
H100 = "H100 SXM"
#: Three data-centre GPUs a variant may serve or train on (the order the variants draw from).
SERVING_GPUS = (H100, "A100 80GB", "H200")
#: The lessons' allowance beside the weights for the CUDA context and working buffers
#: (lesson 1's 24 GB pause and will_it_fit calculator, lesson 6's "How many conversations
#: fit on one GPU?"): 2 GB.
CONTEXT_ALLOWANCE = 2e9


@functools.cache
def quoted_prices(gpu: str) -> tuple[float, ...]:
    """The on-demand prices per GPU-hour, to the cent, that providers quote now for
    ``gpu`` (``prices.current_quotes``), cheapest first: a class variant rents a GPU at a
    price it is rented at."""
    return tuple(sorted({round(q.usd_per_gpu_hour, 2) for q in prices.current_quotes(gpu)}))


def quote_of(gpu: str, usd_per_gpu_hour: float) -> str:
    """Who rents ``gpu`` on demand at ``usd_per_gpu_hour`` (one of :func:`quoted_prices`),
    and when, as a question cites it: "Hyperstack's on-demand price, September 2026"."""
    for quote in prices.current_quotes(gpu):
        if round(quote.usd_per_gpu_hour, 2) == round(usd_per_gpu_hour, 2):
            month = datetime.date.fromisoformat(quote.date).strftime("%B %Y")
            return f"{quote.provider}'s on-demand price, {month}"
    raise ValueError(f"no current on-demand quote of ${usd_per_gpu_hour:.2f} per GPU-hour "
                     f"for {gpu}; quoted: {quoted_prices(gpu)}")


def drawn_until(draw: Callable[[Any], P], ok: Callable[[P], bool]
                ) -> Callable[[Any], dict[str, Any]]:
    """A ``sample`` that draws with ``draw`` until ``ok`` accepts the variant: a class
    variant never asks about a configuration that cannot run (one that does not fit)."""
    def sample(rng: Any) -> dict[str, Any]:
        for _ in range(1000):
            p = draw(rng)
            if ok(p):
                return dict(p)
        raise RuntimeError("no acceptable variant in 1,000 draws: widen the choices")
    return sample


def state_fits(p: P) -> bool:
    """Whether the model state of mixed-precision Adam (``memory.bytes_per_param()``, 16
    bytes per parameter) of ``p["n_params"]`` fits in the usable memory of all
    ``p["gpus"]`` ``p["gpu"]`` GPUs together, the least any layout (ZeRO-3 over every GPU)
    needs."""
    return (p["n_params"] * memory.bytes_per_param()
            <= p["gpus"] * hardware.gpu(p["gpu"]).usable_memory())


def config(p: P) -> transformer.TransformerConfig:
    """The configuration of the model preset a variant names (``p["model"]``)."""
    return transformer.preset(p["model"])


def within_context(rng: Any, model: str, choices: Sequence[int]) -> int:
    """A sequence length drawn from ``choices``, at most ``model``'s context (its
    ``context``, else ``max_positions``): GPT-2 reads 1,024 tokens, Llama 2 4,096 and
    Llama 3 8,192, so a class variant never asks about a sequence the model cannot take
    in."""
    cfg = transformer.preset(model)
    limit = cfg.context or cfg.max_positions or max(choices)
    fitting = [s for s in choices if s <= limit]
    if not fitting:
        raise ValueError(f"no sequence length of {list(choices)} fits {model}'s context of "
                         f"{limit:,} tokens")
    return rng.choice(fitting)


def decode_ceiling(p: P, *, precision: str, bandwidth: float) -> float:
    """The batch-1 decode ceiling, in tokens/s, of the variant's model (``p["n_params"]``)
    with its weights in ``precision`` read at ``bandwidth`` (bytes/s): every weight is read
    once per token. The lessons' slips change the precision or the bandwidth."""
    return inference.decode_ceiling_tokens_per_second(
        weight_bytes=memory.weight_bytes(p["n_params"], precision=precision),
        bandwidth=bandwidth)


def training_seconds(p: P, total: float, *, gpus: int | None = None,
                     peak: float | None = None, mfu: float | None = None) -> float:
    """The wall time, in seconds, of a training run of ``total`` FLOPs on the variant's
    cluster: ``p["gpus"]`` GPUs at ``p["gpu"]``'s dense BF16 peak and an MFU of
    ``p["mfu"]``. A slip puts in another GPU count, peak or MFU."""
    return flops.training_time(total, gpus or p["gpus"],
                               peak or hardware.gpu(p["gpu"]).dense("bf16"), mfu or p["mfu"])


def sparse_peak(p: P, dtype: str = "bf16") -> float:
    """The 2:4-sparse tensor-core peak of the variant's GPU (``p["gpu"]``), in FLOP/s: the
    figure a learner who makes the :func:`~gpulesson.exercises.mistakes.used_sparse_peak`
    slip divides by."""
    return hardware.gpu(p["gpu"]).sparse_flops[dtype]


def sparse_ridge(p: P, dtype: str) -> float:
    """The ridge point of the variant's GPU at its 2:4-sparse peak, in FLOP/byte: where a
    learner who makes the ``used_sparse_peak`` slip puts the roofline's bend."""
    return roofline.ridge_point(sparse_peak(p, dtype), hardware.gpu(p["gpu"]).bandwidth)


def at_sparse_peak(answer: Callable[..., float],
                   dtype: str = "bf16") -> Callable[[P], float | None]:
    """The value of the ``used_sparse_peak`` slip for an answer worked out from a peak:
    ``answer(p, peak=...)`` at the variant GPU's 2:4-sparse figure, ``None`` (the slip does
    not apply) for a GPU that publishes none."""

    def value(p: P) -> float | None:
        rates = hardware.gpu(p["gpu"]).sparse_flops
        return answer(p, peak=rates[dtype]) if dtype in rates else None

    return value


def gib_as_gb_of(answer: Callable[[P], float], *others: Callable[[P], float | None],
                 rtol: float = 0.02) -> Mistake:
    """The ``gib_as_gb`` mistake of an answer in bytes asked in GB: ``answer(p)`` in GiB
    written as GB (``answer(p) x 10^9 / 2^30``), standing aside (``None``) where it lies
    within ``rtol`` of one of ``others``, another mistake's figure whose own hint then
    answers. Without that, ``variant()`` would redraw every such variant and leave whole
    corners of the inputs out of the class's numbers."""

    def value(p: P) -> float | None:
        gib = answer(p) * 1e9 / 2**30
        for other in others:
            figure = other(p)
            if figure is not None and abs(gib - figure) <= rtol * max(abs(gib), abs(figure)):
                return None
        return gib

    return mistakes.gib_as_gb(value)


def slip_to(answer: Callable[[P], str], choice: str) -> Callable[[P], str | None]:
    """The value of a choice exercise's mistake that picks ``choice``: ``choice``, standing
    aside (``None``) in the variants whose answer it is (a class variant may draw them)."""
    return lambda p: None if answer(p) == choice else choice


def intensity_slips(shape: Shape, precision: str, *,
                    weights_only: str) -> tuple[Mistake, Mistake]:
    """The two slips of a question on the arithmetic intensity of a layer's matrix product
    in ``precision``: multiply-adds counted (half the FLOPs per byte), and the weight
    matrix's bytes alone counted (``weights_only`` is that slip's hint, in the lesson's
    words)."""

    def intensity(p: P) -> float:
        m, k, n = shape(p)
        return gemm.arithmetic_intensity(m, k, n,
                                         bytes_per_element=memory.precision_bytes(precision))

    def over_weights(p: P) -> float:
        m, k, n = shape(p)
        return gemm.flops(m, k, n) / memory.weight_bytes(k * n, precision=precision)

    return (mistakes.counted_macs(lambda p: intensity(p) / 2),
            Mistake("weights_only", weights_only, over_weights))
