"""The serving set-up several exercise banks ask about: a preset model with BF16 weights
decoding on one GPU of the catalogue.

Lesson 6 (``inference_and_kv_cache``: time to the first token against one decode step,
batching's latency against its throughput) and lesson 8 (``cost_economics``: what batching
does to the cost per token) put the same questions to the same roofline of a decode step.
This module assembles that call once from :mod:`gpulesson.transformer`,
:mod:`gpulesson.memory`, :mod:`gpulesson.hardware` and :func:`gpulesson.inference.decode_speed`;
it computes nothing of its own. Standard library only.
"""

from __future__ import annotations

from gpulesson import _validate as v
from gpulesson import hardware, inference, memory, transformer

__all__ = ["decode_speed"]


def decode_speed(model: str, gpu: str, *, context: int, batch: int,
                 kv: bool = True) -> inference.DecodeSpeed:
    """One decode step of ``batch`` sequences of preset ``model`` on catalogue ``gpu``.

    BF16 weights, arithmetic at the GPU's dense BF16 peak; each sequence's KV cache of
    ``context`` tokens (BF16) is read every step too, or not at all with ``kv=False`` (the
    "ignored the KV cache" mistake): the bytes a step reads,
    :func:`gpulesson.inference.decode_kv_read_bytes` (the whole cache, but a
    sparse-attention model's top-k latents and indexer keys). See
    :func:`gpulesson.inference.decode_speed`.

    Parameters
    ----------
    model:
        a preset name of :func:`gpulesson.transformer.preset` (``"llama-3-8b"``).
    gpu:
        a GPU of :func:`gpulesson.hardware.gpu` (``"H100 SXM"``).
    context:
        tokens held in each sequence's KV cache.
    batch:
        sequences decoded together.
    kv:
        read the KV caches (``True``) or leave them out (``False``).

    Raises
    ------
    KeyError
        for an unknown model or GPU, naming the known ones (also a ``ValueError``).
    TypeError, ValueError
        for a ``context`` or ``batch`` that is not a positive integer, naming it.
    """
    context = v.positive_int("context", context)
    cfg = transformer.preset(model)
    n = transformer.param_count(cfg)
    g = hardware.gpu(gpu)
    return inference.decode_speed(
        n_params=n, weight_bytes=memory.weight_bytes(n, precision="bf16"), batch=batch,
        kv_bytes_per_sequence=inference.decode_kv_read_bytes(cfg, context=context)
        if kv else 0,
        peak_flops=g.dense("bf16"), bandwidth=g.bandwidth)
