"""Lesson 5, ``inference_and_kv_cache``: the KV cache, prefill and decode on a GPU."""

from __future__ import annotations

from typing import Any

from gpulesson import inference, memory, transformer
from gpulesson.calculators import shared
from gpulesson.calculators.spec import Calculator, Output

LESSON = "inference_and_kv_cache"


def _kv_cache(**kw: Any) -> dict[str, Any]:
    cfg = shared.config(kw)
    b = memory.precision_bytes(kw["kv_dtype"])
    # the same model with one KV head per query head (multi-head attention)
    mha = transformer.TransformerConfig(
        hidden=cfg.hidden, layers=cfg.layers, heads=cfg.heads, vocab=cfg.vocab,
        ffn=cfg.ffn, kv_heads=cfg.heads, head_dim=cfg.head_dim)
    return {
        "per_token": inference.kv_cache_bytes_per_token(cfg, bytes_per_element=b),
        "total": inference.kv_cache_bytes(cfg, seq_len=kw["seq_len"], batch=kw["batch"],
                                          bytes_per_element=b),
        "total_mha": inference.kv_cache_bytes(mha, seq_len=kw["seq_len"],
                                              batch=kw["batch"], bytes_per_element=b),
    }


KV_CACHE = Calculator(
    name="kv_cache",
    title="KV-cache calculator",
    description="Bytes of keys and values a model keeps for every token in flight, with "
                "grouped-query attention counted right.",
    lesson=LESSON,
    inputs=(
        *shared.model_inputs("llama-3-8b"),
        shared.tokens("seq_len", "Context length", 8192),
        shared.batch("Concurrent sequences"),
        shared.storage_input("kv_dtype", "KV-cache precision"),
    ),
    outputs=(
        Output("per_token", "Per token (2·L·kv_heads·head_dim·bytes)", "bytes",
               binary=True),
        Output("total", "KV cache", "bytes", binary=True),
        Output("total_mha", "Same model with one KV head per query head", "bytes",
               binary=True),
    ),
    function=_kv_cache,
    sources=("Ainslie et al. 2023 (GQA)", "the models' config.json files"),
)


def _inference_calc(**kw: Any) -> dict[str, Any]:
    cfg = shared.config(kw)
    n = transformer.param_count(cfg)
    shape = {"layers": cfg.layers, "heads": cfg.heads, "head_dim": cfg.head_dim}
    weights = memory.weight_bytes(n, precision=kw["precision"])
    kv_b = memory.precision_bytes(kw["kv_dtype"])
    context = kw["prompt"] + kw["new_tokens"]  # the sequence at the end of generation
    kv_seq = inference.kv_cache_bytes(cfg, seq_len=context, batch=1, bytes_per_element=kv_b)
    speed = inference.decode_speed(
        n_params=n, weight_bytes=weights, batch=kw["batch"], kv_bytes_per_sequence=kv_seq,
        peak_flops=kw["peak_flops"], bandwidth=kw["bandwidth"])
    return {
        "n_params": n,
        "prefill_flops": inference.prefill_flops(n, kw["prompt"], batch=kw["batch"],
                                                 **shape),
        "decode_flops": inference.decode_flops(n, kw["new_tokens"], context_len=kw["prompt"],
                                               batch=kw["batch"], **shape),
        "weights": weights,
        "kv_cache": inference.kv_cache_bytes(cfg, seq_len=context, batch=kw["batch"],
                                             bytes_per_element=kv_b),
        "prefill_time": inference.prefill_time(
            n_params=n, tokens=kw["prompt"], peak_flops=kw["peak_flops"],
            bandwidth=kw["bandwidth"], weight_bytes=weights, batch=kw["batch"], **shape),
        "step_time": speed.step_time,
        "decode_total": speed.tokens_per_second,
        "decode_per_user": speed.per_sequence,
        "ceiling": inference.decode_ceiling_tokens_per_second(
            weight_bytes=weights, bandwidth=kw["bandwidth"], batch=kw["batch"],
            kv_bytes_per_sequence=kv_seq),
        "compute_bound_batch": inference.decode_compute_bound_batch(
            peak_flops=kw["peak_flops"], bandwidth=kw["bandwidth"],
            bytes_per_param=memory.precision_bytes(kw["precision"])),
        "crossover": inference.attention_crossover_tokens(n, **shape),
    }


INFERENCE = Calculator(
    name="inference",
    title="Inference FLOPs and KV cache",
    description="Prefill and decode FLOPs, the KV cache, and the memory-bandwidth ceiling "
                "on decode speed for a model on a GPU.",
    lesson=LESSON,
    inputs=(
        *shared.model_inputs("llama-3-8b"),
        shared.tokens("prompt", "Prompt tokens", 8192),
        shared.tokens("new_tokens", "Generated tokens", 512),
        shared.batch("Batch (sequences)"),
        shared.storage_input("precision", "Weights precision"),
        shared.storage_input("kv_dtype", "KV-cache precision"),
        shared.dtype_input("dtype", "Compute precision"),
        *shared.gpu_inputs("H100 SXM", peak=True, bandwidth=True),
    ),
    outputs=(
        shared.N_PARAMS_OUT,
        Output("prefill_flops", "Prefill FLOPs (2·N·T + attention)", "flops"),
        Output("decode_flops", "Decode FLOPs (2·N per token + attention)", "flops"),
        shared.WEIGHTS_OUT,
        Output("kv_cache", "KV cache at the end", "bytes"),
        Output("prefill_time", "Prefill time (roofline)", "seconds"),
        Output("step_time", "Decode step time at the end (roofline)", "seconds"),
        Output("decode_total", "Decode speed at the end, all sequences", "tokens/s",
               help="batch ÷ step time: what the GPU produces for all users together."),
        Output("decode_per_user", "Decode speed at the end, each sequence", "tokens/s",
               help="1 ÷ step time: what one user sees; batching lowers it."),
        Output("ceiling", "Decode ceiling, all sequences", "tokens/s"),
        Output("compute_bound_batch", "Batch where decode turns compute-bound", "number",
               unit="sequences"),
        Output("crossover", "Prompt length where attention FLOPs equal weight FLOPs",
               "number", unit="tokens"),
    ),
    function=_inference_calc,
    sources=("Pope et al. 2022 (Efficiently scaling transformer inference)",
             "Chowdhery et al. 2022 (PaLM), appendix B", shared.GPU_NOTE),
)

ENTRIES = (KV_CACHE, INFERENCE)
