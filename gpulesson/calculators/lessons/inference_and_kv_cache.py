"""Lesson 6, ``inference_and_kv_cache``: the KV cache, prefill and decode on a GPU.

Both calculators take the preset's whole configuration (:func:`~gpulesson.calculators.
shared.config`): a latent-attention cache holds its latent, a sliding-window layer its
window, and a mixture-of-experts model computes with its active parameters while a decode
step reads the experts its batch routes to (uniform routing assumed).
"""

from __future__ import annotations

from typing import Any

from gpulesson import inference, memory, transformer
from gpulesson.calculators import shared
from gpulesson.calculators.spec import Calculator, Output

LESSON = "inference_and_kv_cache"


def _kv_cache(**kw: Any) -> dict[str, Any]:
    cfg = shared.config(kw)
    b = memory.precision_bytes(kw["kv_dtype"])
    size = dict(seq_len=kw["seq_len"], batch=kw["batch"], bytes_per_element=b)
    return {
        "per_token": inference.kv_cache_bytes_per_token(cfg, bytes_per_element=b),
        "total": inference.kv_cache_bytes(cfg, **size),
        "total_mha": inference.kv_cache_bytes(inference.multi_head_equivalent(cfg), **size),
        "total_uncapped": inference.kv_cache_bytes(cfg, cap_windows=False, **size),
    }


KV_CACHE = Calculator(
    name="kv_cache",
    title="KV-cache calculator",
    description="Bytes of keys and values a model keeps for every token in flight, with "
                "grouped-query attention, latent attention and sliding windows counted "
                "right.",
    lesson=LESSON,
    inputs=(
        *shared.model_inputs("llama-3-8b"),
        shared.tokens("seq_len", "Context length", 8192),
        shared.batch("Concurrent sequences"),
        shared.storage_input("kv_dtype", "KV-cache precision"),
    ),
    outputs=(
        Output("per_token", "Per token (2·L·kv_heads·head_dim·bytes)", "bytes",
               binary=True,
               help="Every layer's key and value of one token; latent attention caches "
                    "its latent and rotary key instead, (d_c + d_R)·L values."),
        Output("total", "KV cache", "bytes", binary=True,
               help="Sliding-window layers keep at most their window of tokens."),
        Output("total_mha", "Same model with one KV head per query head", "bytes",
               binary=True,
               help="Multi-head attention (latent attention: heads of the value size, as "
                    "DeepSeek-V2's Table 1 compares)."),
        Output("total_uncapped", "Same model, every layer caching every token", "bytes",
               binary=True,
               help="Without the sliding-window cap: what a server that allocates the "
                    "whole context for every layer reserves."),
    ),
    function=_kv_cache,
    sources=("Ainslie et al. 2023 (GQA)", "DeepSeek-AI 2024 (DeepSeek-V2, Table 1: MLA)",
             "Jiang et al. 2023 (Mistral 7B: sliding window)", "the models' config.json files"),
)


def _inference_calc(**kw: Any) -> dict[str, Any]:
    cfg = shared.config(kw)
    n = transformer.param_count(cfg)
    bpp = memory.precision_bytes(kw["precision"])
    kv_b = memory.precision_bytes(kw["kv_dtype"])
    gpu = dict(peak_flops=kw["peak_flops"], bandwidth=kw["bandwidth"])
    context = kw["prompt"] + kw["new_tokens"]  # the sequence at the end of generation
    kv_seq = inference.kv_cache_bytes(cfg, seq_len=context, batch=1, bytes_per_element=kv_b)
    read = inference.decode_weight_bytes(cfg, batch=kw["batch"], bytes_per_param=bpp)
    speed = inference.model_decode_speed(cfg, batch=kw["batch"], context=context,
                                         bytes_per_param=bpp, kv_bytes_per_element=kv_b,
                                         **gpu)
    crossover = inference.model_attention_crossover_tokens(cfg)
    return {
        "n_params": n,
        "active": transformer.active_params(cfg),
        "prefill_flops": inference.model_prefill_flops(cfg, kw["prompt"], batch=kw["batch"]),
        "decode_flops": inference.model_decode_flops(cfg, kw["new_tokens"],
                                                     context_len=kw["prompt"],
                                                     batch=kw["batch"]),
        "weights": memory.weight_bytes(n, precision=kw["precision"]),
        "decode_weights": read,
        "kv_cache": inference.kv_cache_bytes(cfg, seq_len=context, batch=kw["batch"],
                                             bytes_per_element=kv_b),
        "prefill_time": inference.model_prefill_time(cfg, kw["prompt"], batch=kw["batch"],
                                                     bytes_per_param=bpp, **gpu),
        "step_time": speed.step_time,
        "decode_total": speed.tokens_per_second,
        "decode_per_user": speed.per_sequence,
        "ceiling": inference.decode_ceiling_tokens_per_second(
            weight_bytes=read, bandwidth=kw["bandwidth"], batch=kw["batch"],
            kv_bytes_per_sequence=kv_seq),
        "compute_bound_batch": inference.model_compute_bound_batch(
            cfg, bytes_per_param=memory.precision_bytes(kw["precision"]), **gpu),
        "crossover": "never: its sliding windows cap attention" if crossover is None
        else f"{crossover:,.0f} tokens",
    }


INFERENCE = Calculator(
    name="inference",
    title="Inference FLOPs and KV cache",
    description="Prefill and decode FLOPs, the KV cache, and the memory-bandwidth ceiling "
                "on decode speed for a model on a GPU; a mixture-of-experts model "
                "computes with its active parameters and reads the experts its batch "
                "routes to.",
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
        Output("n_params", "Parameters held (all experts)", "count"),
        Output("active", "Active per token (what the FLOPs count)", "count"),
        Output("prefill_flops", "Prefill FLOPs (2·N·T + attention)", "flops"),
        Output("decode_flops", "Decode FLOPs (2·N per token + attention)", "flops"),
        shared.WEIGHTS_OUT,
        Output("decode_weights", "Weights read per decode step", "bytes",
               help="All of them for a dense model. A mixture of experts reads the "
                    "experts its batch routes to: E·(1 − (1 − k/E)^batch) per layer, "
                    "assuming uniform routing (real routers are skewed and touch fewer)."),
        Output("kv_cache", "KV cache at the end", "bytes"),
        Output("prefill_time", "Prefill time (roofline)", "seconds"),
        Output("step_time", "Decode step time at the end (roofline)", "seconds",
               help="max(FLOPs ÷ peak, bytes ÷ bandwidth), with the same attention FLOPs "
                    "as the decode FLOPs above."),
        Output("decode_total", "Decode speed at the end, all sequences", "tokens/s",
               help="batch ÷ step time: what the GPU produces for all users together."),
        Output("decode_per_user", "Decode speed at the end, each sequence", "tokens/s",
               help="1 ÷ step time: what one user sees; batching lowers it."),
        Output("ceiling", "Decode ceiling, all sequences", "tokens/s"),
        Output("compute_bound_batch", "Batch where decode turns compute-bound", "number",
               unit="sequences",
               help="Where the weights' FLOPs outlast their reads (KV-cache reads "
                    "ignored); later for a mixture of experts, whose batch reads more "
                    "experts as it grows."),
        Output("crossover", "Prompt length where attention FLOPs equal weight FLOPs",
               "text"),
    ),
    function=_inference_calc,
    sources=("Pope et al. 2022 (Efficiently scaling transformer inference)",
             "Chowdhery et al. 2022 (PaLM), appendix B", shared.GPU_NOTE),
)

ENTRIES = (KV_CACHE, INFERENCE)
