"""Lesson 6, ``inference_and_kv_cache``: the KV cache, prefill and decode on a GPU, and the
serving techniques of 2026 (:mod:`gpulesson.serving_techniques`): prefix caching, chunked
prefill, disaggregated prefill and decode, speculative decoding.

The model calculators take the preset's whole configuration (:func:`~gpulesson.calculators.
shared.config`): a latent-attention cache holds its latent, a sliding-window layer its
window, and a mixture-of-experts model computes with its active parameters while a decode
step reads the experts its batch routes to (uniform routing assumed).
"""

from __future__ import annotations

from typing import Any

from gpulesson import inference, memory, serving_techniques, transformer
from gpulesson.calculators import shared
from gpulesson.calculators.spec import Calculator, Integer, Number, Output

LESSON = "inference_and_kv_cache"


def _kv_cache(**kw: Any) -> dict[str, Any]:
    cfg = shared.config(kw)
    b = inference.kv_bytes_per_element(cfg, kw["kv_dtype"])
    size = dict(seq_len=kw["seq_len"], batch=kw["batch"], bytes_per_element=b)
    return {
        "per_token": inference.kv_cache_bytes_per_token(cfg, bytes_per_element=b),
        "total": inference.kv_cache_bytes(cfg, **size),
        "total_mha": inference.kv_cache_bytes(inference.multi_head_equivalent(cfg), **size),
        "total_uncapped": inference.kv_cache_bytes(cfg, cap_windows=False, **size),
        "read": kw["batch"] * inference.decode_kv_read_bytes(cfg, context=kw["seq_len"],
                                                             bytes_per_element=b),
    }


KV_CACHE = Calculator(
    name="kv_cache",
    title="KV-cache calculator",
    description="Bytes of keys and values a model keeps for every token in flight, with "
                "grouped-query attention, latent attention, sliding windows and Llama 4's "
                "chunks counted right.",
    lesson=LESSON,
    inputs=(
        *shared.model_inputs("llama-3-8b"),
        shared.tokens("seq_len", "Context length", 8192),
        shared.CONCURRENT_SEQUENCES,
        shared.KV_PRECISION,
    ),
    outputs=(
        Output("per_token", "Per token (2·L·kv_heads·head_dim·bytes)", "bytes",
               binary=True,
               help="Every layer's key and value of one token; latent attention caches "
                    "its latent and rotary key instead, (d_c + d_R)·L values, plus a "
                    "sparse-attention indexer's FP8 key where it has one (DeepSeek-V3.2, "
                    "GLM-5: 132 bytes a layer). Such a model's FP8 latent is a 656-byte "
                    "record (FP8 values, their scales and a BF16 rotary key), as its "
                    "kernels and vLLM store it."),
        Output("total", "KV cache", "bytes", binary=True,
               help="Sliding-window layers keep at most their window of tokens, chunked "
                    "layers (Llama 4) at most one chunk."),
        Output("total_mha", "Same model with one KV head per query head", "bytes",
               binary=True,
               help="Multi-head attention (latent attention: heads of the value size, as "
                    "DeepSeek-V2's Table 1 compares)."),
        Output("total_uncapped", "Same model, every layer caching every token", "bytes",
               binary=True,
               help="Without the sliding-window or chunk cap: what a server that "
                    "allocates the whole context for every layer reserves."),
        Output("read", "Read by one decode step", "bytes", binary=True,
               help="What each new token's attention reads of the cache held: all of it "
                    "(windows and chunks capped as above), but with sparse attention "
                    "(DeepSeek-V3.2, GLM-5) the latents of the 2,048 tokens the indexer "
                    "picks and the indexer keys of every token "
                    "(inference.decode_kv_read_bytes)."),
    ),
    function=_kv_cache,
    sources=("Ainslie et al. 2023 (GQA)", "DeepSeek-AI 2024 (DeepSeek-V2, Table 1: MLA)",
             "Jiang et al. 2023 (Mistral 7B: sliding window)", "the models' config.json files"),
)


def _caches(kw: dict[str, Any], *, batch: int, context: int) -> float:
    """Bytes of the KV caches of ``batch`` sequences of ``context`` tokens, at the cache
    precision the inputs set."""
    cfg = shared.config(kw)
    return inference.kv_cache_bytes(cfg, seq_len=context, batch=batch,
                                    bytes_per_element=inference.kv_bytes_per_element(
                                        cfg, kw["kv_dtype"]))


def _fits_text(kw: dict[str, Any], caches: float) -> str:
    """Whether one GPU holds the weights at their precision and ``caches`` bytes of KV
    caches, and how many GPUs at least would."""
    held = memory.inference_memory(transformer.param_count(shared.config(kw)),
                                   precision=kw["precision"], kv_cache_bytes=caches).total
    if memory.fits(held, kw["gpu_memory"]):
        return "yes"
    return (f"no: at least {memory.gpus_needed(held, kw['gpu_memory'])} GPUs for the weights "
            "and caches; the times and speeds below assume one GPU holds them")


def _inference_calc(**kw: Any) -> dict[str, Any]:
    cfg = shared.config(kw)
    n = transformer.param_count(cfg)
    bpp = memory.precision_bytes(kw["precision"])
    kv_b = inference.kv_bytes_per_element(cfg, kw["kv_dtype"])
    gpu = dict(peak_flops=kw["peak_flops"], bandwidth=kw["bandwidth"])
    context = kw["prompt"] + kw["new_tokens"]  # the sequence at the end of generation
    kv_seq = inference.decode_kv_read_bytes(cfg, context=context, bytes_per_element=kv_b)
    read = inference.decode_weight_bytes(cfg, batch=kw["batch"], bytes_per_param=bpp)
    speed = inference.model_decode_speed(cfg, batch=kw["batch"], context=context,
                                         bytes_per_param=bpp, kv_bytes_per_element=kv_b,
                                         **gpu)
    crossover = inference.model_attention_crossover_tokens(cfg)
    kv_all = _caches(kw, batch=kw["batch"], context=context)
    return {
        "fits": _fits_text(kw, kv_all),
        "n_params": n,
        "active": transformer.active_params(cfg),
        "prefill_flops": inference.model_prefill_flops(cfg, kw["prompt"], batch=kw["batch"]),
        "decode_flops": inference.model_decode_flops(cfg, kw["new_tokens"],
                                                     context_len=kw["prompt"],
                                                     batch=kw["batch"]),
        "weights": memory.weight_bytes(n, precision=kw["precision"]),
        "decode_weights": read,
        "kv_cache": kv_all,
        "prefill_time": inference.model_prefill_time(cfg, kw["prompt"], batch=kw["batch"],
                                                     bytes_per_param=bpp, **gpu),
        "step_time": speed.step_time,
        "decode_total": speed.tokens_per_second,
        "decode_per_user": speed.per_sequence,
        "ceiling": inference.decode_ceiling_tokens_per_second(
            weight_bytes=read, bandwidth=kw["bandwidth"], batch=kw["batch"],
            kv_bytes_per_sequence=kv_seq),
        "compute_bound_batch": inference.model_compute_bound_batch(
            cfg, bytes_per_param=bpp, **gpu),
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
        shared.PROMPT,
        shared.tokens("new_tokens", "Generated tokens", 512),
        shared.DECODE_BATCH,
        shared.WEIGHTS_PRECISION,
        shared.KV_PRECISION,
        shared.COMPUTE_PRECISION,
        *shared.gpu_inputs("H100 SXM", memory=True, peak=True, bandwidth=True),
    ),
    outputs=(
        Output("fits", "Weights and KV caches fit on one GPU", "text",
               help="Weights at their precision plus the KV caches of the batch at the end, "
                    "against the GPU's memory (no working memory counted). When they do "
                    "not fit, the figures below describe a GPU that does not exist: split "
                    "the model over several (lesson 7) or quantise it."),
        shared.N_PARAMS_HELD_OUT,
        shared.ACTIVE_OUT,
        Output("prefill_flops", "Prefill FLOPs (2·N·T + attention)", "flops"),
        Output("decode_flops", "Decode FLOPs (2·N per token + attention)", "flops"),
        shared.WEIGHTS_OUT,
        Output("decode_weights", "Weights read per decode step", "bytes",
               help="All of them for a dense model. A mixture of experts reads the "
                    "experts its batch routes to: E·(1 − (1 − k/E)^batch) per layer, "
                    "assuming uniform routing (real routers are skewed and touch fewer)."),
        Output("kv_cache", "KV cache at the end", "bytes"),
        Output("prefill_time", "Prefill time (roofline)", "seconds",
               help="max(FLOPs ÷ peak, weights read ÷ bandwidth), with the prefill FLOPs "
                    "above, except that a sparse-attention model (DeepSeek-V3.2, GLM-5) "
                    "past its top-k runs its picked keys with latent attention absorbed, "
                    "as its kernels do: 278,528 FLOPs a key and layer for DeepSeek-V3.2 "
                    "where the model count has 81,920."),
        Output("step_time", "Decode step time at the end (roofline)", "seconds",
               help="max(FLOPs ÷ peak, bytes ÷ bandwidth), with the attention FLOPs of "
                    "the decode FLOPs above, except that latent attention (DeepSeek-V3, "
                    "Kimi K2) is counted absorbed, as serving engines decode it: 278,528 "
                    "FLOPs a key and layer for DeepSeek-V3 where the model count has "
                    "81,920."),
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

# ---------------------------------------------------------------------------------------
# Serving in 2026


def _roofline(kw: dict[str, Any]) -> dict[str, Any]:
    """The GPU and precisions a serving calculator passes to its formula (a cached value's
    bytes as :func:`gpulesson.inference.kv_bytes_per_element` counts them)."""
    return dict(peak_flops=kw["peak_flops"], bandwidth=kw["bandwidth"],
                bytes_per_param=memory.precision_bytes(kw["precision"]),
                kv_bytes_per_element=inference.kv_bytes_per_element(shared.config(kw),
                                                                    kw["kv_dtype"]))


def _serving_inputs(default_model: str = "llama-3-8b", *,
                    memory: bool = False) -> tuple[Any, ...]:
    return (*shared.model_inputs(default_model),
            shared.WEIGHTS_PRECISION,
            shared.KV_PRECISION,
            shared.COMPUTE_PRECISION,
            *shared.gpu_inputs("H100 SXM", memory=memory, peak=True, bandwidth=True))


def _prefix_caching(**kw: Any) -> dict[str, Any]:
    cfg = shared.config(kw)
    r = serving_techniques.prefix_cache_saving(cfg, kw["prompt"], hit_rate=kw["hit_rate"],
                                               **_roofline(kw))
    fit = dict(context=kw["prompt"], gpu_memory=kw["gpu_memory"], precision=kw["precision"],
               kv_dtype=kw["kv_dtype"], overhead=kw["overhead"])
    return {"cached_tokens": r.cached_tokens, "flops_without": r.flops_without,
            "flops": r.flops, "flops_saved": r.flops_saved, "ttft_without": r.ttft_without,
            "ttft": r.ttft, "ttft_saved": r.ttft_saved,
            "fit_without": serving_techniques.conversations_with_shared_prefix(
                cfg, shared_tokens=0, **fit),
            "fit_shared": serving_techniques.conversations_with_shared_prefix(
                cfg, shared_tokens=r.cached_tokens, **fit)}


PREFIX_CACHING = Calculator(
    name="prefix_caching",
    title="Prefix caching: prefill skipped",
    description="The prefill FLOPs and the time to the first token a prefix-cache hit saves: "
                "the cached tokens are not recomputed, the new ones still attend to the "
                "whole prompt.",
    lesson=LESSON,
    inputs=(
        shared.PROMPT,
        shared.percent("hit_rate", "Prefix-cache hit rate", default=75, range=(0, 100),
                       step=1, help="Share of the prompt's tokens found in the cache (a "
                                    "shared system prompt, documents, earlier turns)."),
        *_serving_inputs(memory=True),
        shared.overhead(),
    ),
    outputs=(
        Output("cached_tokens", "Tokens served from the cache", "number", unit="tokens",
               help="floor(hit rate × prompt), at most prompt − 1: the last token is "
                    "always computed."),
        Output("flops_without", "Prefill FLOPs without the cache", "flops"),
        Output("flops", "Prefill FLOPs with the cache", "flops",
               help="(T − P)·(2·N_active + attention to all T tokens)."),
        Output("flops_saved", "FLOPs saved", "percent"),
        Output("ttft_without", "Time to first token without the cache (roofline)",
               "seconds"),
        Output("ttft", "Time to first token with the cache (roofline)", "seconds",
               help="max(FLOPs ÷ peak, (weights + cached KV) ÷ bandwidth): a full hit "
                    "costs about one decode step."),
        Output("ttft_saved", "Time to first token saved (negative: lost)", "seconds"),
        Output("fit_without", "Conversations that fit, nothing shared", "number",
               unit="conversations",
               help="Weights, every conversation's whole KV cache and the overhead within "
                    "the GPU's memory."),
        Output("fit_shared", "Conversations that fit, the cached prefix shared", "number",
               unit="conversations",
               help="The cached prefix's keys and values stored once for all "
                    "conversations; each keeps only its own tokens."),
    ),
    function=_prefix_caching,
    sources=("Kwon et al. 2023 (vLLM: shared prefixes)",
             "Zheng et al. 2024 (SGLang: RadixAttention)",
             "DeepSeek-AI 2025 (V3/R1 inference system: 56.3 % of input tokens hit the cache)",
             shared.GPU_NOTE),
)


def _chunked_prefill(**kw: Any) -> dict[str, Any]:
    r = serving_techniques.chunked_prefill(
        shared.config(kw), prompt_tokens=kw["prompt"], token_budget=kw["token_budget"],
        decode_batch=kw["decode_batch"], context=kw["context"], **_roofline(kw))
    return {"fits": _fits_text(kw, _caches(kw, batch=kw["decode_batch"], context=kw["context"])
                               + _caches(kw, batch=1, context=kw["prompt"])),
            "decode_step": r.decode_step, "gap_unchunked": r.gap_unchunked,
            "gap_chunked": r.gap_chunked, "chunk": r.chunk, "steps": r.steps,
            "ttft_unchunked": r.ttft_unchunked, "ttft_chunked": r.ttft_chunked}


CHUNKED_PREFILL = Calculator(
    name="chunked_prefill",
    title="Chunked prefill: the longest wait between two tokens",
    description="A newcomer's prompt arrives while other conversations decode: the longest "
                "gap between two of their tokens with the prompt as one step, and with a "
                "token budget per step that mixes decode tokens and a chunk of the prompt.",
    lesson=LESSON,
    inputs=(
        shared.tokens("prompt", "Newcomer's prompt", 8192),
        Integer("token_budget", "Token budget per step", default=2048, range=(2, 1_048_576),
                unit="tokens", help="vLLM's max_num_batched_tokens: decode tokens first, the "
                                    "rest of the budget for a chunk of the prompt."),
        Integer("decode_batch", "Conversations decoding", default=32, range=(1, 4096),
                help="Each adds one token to every step."),
        shared.tokens("context", "Context of each decoding conversation", 8192),
        *_serving_inputs(memory=True),
    ),
    outputs=(
        Output("fits", "Weights and KV caches fit on one GPU", "text",
               help="Weights plus the decoding conversations' caches and the newcomer's "
                    "prompt, against the GPU's memory (no working memory counted). When they "
                    "do not fit, the times below describe a GPU that does not exist."),
        Output("decode_step", "Decode step alone (TPOT)", "seconds"),
        Output("gap_unchunked", "Longest gap, prompt in one step", "seconds",
               help="A decode step plus the whole prefill: every decoding user waits."),
        Output("gap_chunked", "Longest gap, chunked", "seconds",
               help="One step holding the decode tokens and a chunk of the prompt."),
        Output("chunk", "Prompt tokens per step", "number", unit="tokens"),
        Output("steps", "Steps the prompt takes", "number", unit="steps"),
        Output("ttft_unchunked", "Newcomer's time to first token, one step", "seconds"),
        Output("ttft_chunked", "Newcomer's time to first token, chunked", "seconds",
               help="Chunking trades a longer wait for the newcomer's first token for an "
                    "even pace for everyone else."),
    ),
    function=_chunked_prefill,
    sources=("Agrawal et al. 2024 (Sarathi-Serve: chunked prefills, stall-free batching)",
             shared.GPU_NOTE),
)


def _disaggregation(**kw: Any) -> dict[str, Any]:
    cfg = shared.config(kw)
    gpu = _roofline(kw)
    prefill_rate = kw["prompt"] / inference.model_prefill_time(
        cfg, kw["prompt"], peak_flops=gpu["peak_flops"], bandwidth=gpu["bandwidth"],
        bytes_per_param=gpu["bytes_per_param"])
    speed = inference.model_decode_speed(cfg, batch=kw["decode_batch"],
                                         context=kw["prompt"] + kw["new_tokens"], **gpu)
    pools = serving_techniques.disaggregated_gpus(
        request_rate=kw["request_rate"], input_tokens=kw["prompt"],
        output_tokens=kw["new_tokens"], prefill_tokens_per_second=prefill_rate,
        decode_tokens_per_second=speed.tokens_per_second)
    return {"fits": _fits_text(kw, _caches(kw, batch=kw["decode_batch"],
                                           context=kw["prompt"] + kw["new_tokens"])),
            "prefill_rate": prefill_rate, "decode_rate": speed.tokens_per_second,
            "per_user": speed.per_sequence, "prefill_gpus": pools.prefill_gpus,
            "decode_gpus": pools.decode_gpus, "ratio": pools.ratio}


DISAGGREGATION = Calculator(
    name="disaggregation",
    title="Disaggregated prefill and decode: how many GPUs each",
    description="Prefill on some GPUs, decode on others: the GPUs each pool needs for a "
                "request rate, from the roofline rate of one GPU in each phase.",
    lesson=LESSON,
    inputs=(
        Number("request_rate", "Requests per second", default=10, range=(0.001, 1_000_000),
               step=1, unit="requests/s"),
        shared.tokens("prompt", "Input tokens per request", 8192),
        shared.tokens("new_tokens", "Output tokens per request", 512),
        Integer("decode_batch", "Decode batch per GPU", default=32, range=(1, 4096),
                help="Conversations each decode GPU carries: a larger batch raises its "
                     "tokens/s and lowers each user's; the per-user speed shows the cost."),
        *_serving_inputs(memory=True),
    ),
    outputs=(
        Output("fits", "Weights and the decode batch's KV caches fit on one GPU", "text",
               help="Weights plus the caches of the decode batch at the end of its "
                    "requests (input and output tokens), against the GPU's memory (no "
                    "working memory counted). When they do not fit, the decode figures "
                    "describe a GPU that does not exist: a smaller batch, or a model split "
                    "over several GPUs."),
        Output("prefill_rate", "Prefill tokens/s per GPU (roofline)", "tokens/s"),
        Output("decode_rate", "Decode tokens/s per GPU (roofline, at the end)", "tokens/s"),
        Output("per_user", "Decode speed each user sees", "tokens/s"),
        Output("prefill_gpus", "Prefill GPUs", "number", unit="GPUs",
               help="requests/s × input tokens ÷ prefill tokens/s per GPU; round up."),
        Output("decode_gpus", "Decode GPUs", "number", unit="GPUs",
               help="requests/s × output tokens ÷ decode tokens/s per GPU; round up."),
        Output("ratio", "Prefill GPUs per decode GPU", "number"),
    ),
    function=_disaggregation,
    sources=("Zhong et al. 2024 (DistServe)", "Qin et al. 2024 (Mooncake)",
             "DeepSeek-AI 2025 (V3/R1 inference system overview)", shared.GPU_NOTE),
)


#: The longest draft the speculative-decoding form takes, and the longest its "best draft
#: length" compares (so that the best is never worse than the length entered).
_MAX_DRAFT_TOKENS = 64


def _speculative(**kw: Any) -> dict[str, Any]:
    cfg = shared.config(kw)
    spec = dict(acceptance_rate=kw["acceptance_rate"], draft_tokens=kw["draft_tokens"])
    best = serving_techniques.best_draft_length(acceptance_rate=kw["acceptance_rate"],
                                                draft_cost=kw["draft_cost"],
                                                max_draft_tokens=_MAX_DRAFT_TOKENS)
    n = transformer.active_params(cfg)
    bpp = memory.precision_bytes(kw["precision"])
    kv = {g: inference.decode_kv_read_bytes(  # g tokens of a sequence in one step
        cfg, context=kw["context"], new_tokens=g,
        bytes_per_element=inference.kv_bytes_per_element(cfg, kw["kv_dtype"]))
        for g in (1, kw["draft_tokens"] + 1)}
    return {
        "fits": _fits_text(kw, _caches(kw, batch=kw["batch"],
                                       context=kw["context"] + kw["draft_tokens"])),
        "tokens_per_step": serving_techniques.expected_tokens_per_step(**spec),
        "speedup": serving_techniques.speculative_speedup(draft_cost=kw["draft_cost"], **spec),
        "best_gamma": best,
        "best_speedup": serving_techniques.speculative_speedup(
            acceptance_rate=kw["acceptance_rate"], draft_tokens=best,
            draft_cost=kw["draft_cost"]),
        "speedup_at_batch": serving_techniques.speculative_speedup_at_batch(
            draft_cost=kw["draft_cost"], n_params=n,
            weight_bytes=inference.decode_weight_bytes(cfg, batch=kw["batch"],
                                                       bytes_per_param=bpp),
            batch=kw["batch"], kv_bytes_per_sequence=kv[1],
            verify_kv_bytes_per_sequence=kv[kw["draft_tokens"] + 1],
            peak_flops=kw["peak_flops"], bandwidth=kw["bandwidth"], **spec),
    }


SPECULATIVE = Calculator(
    name="speculative_decoding",
    title="Speculative decoding: tokens per step and the speed-up",
    description="A draft proposes tokens, the target checks them in one step: tokens per "
                "step from the acceptance rate and the draft length (Leviathan et al. "
                "2023), the speed-up with the draft's cost, and what is left of it at a "
                "batch size.",
    lesson=LESSON,
    inputs=(
        shared.percent("acceptance_rate", "Acceptance rate α", default=80, range=(0, 100),
                       step=1, help="Chance the target accepts a draft token (DeepSeek-V3's "
                                    "multi-token prediction: 85-90 %)."),
        Integer("draft_tokens", "Draft length γ", default=4, range=(0, _MAX_DRAFT_TOKENS),
                unit="tokens",
                help="Tokens the draft proposes per step (multi-token prediction: 1)."),
        shared.percent("draft_cost", "Draft cost c", default=5, range=(0, 100), step=0.5,
                       help="Time of one draft step over one target step."),
        shared.DECODE_BATCH,
        shared.tokens("context", "Context per sequence", 8192),
        *_serving_inputs(memory=True),
    ),
    outputs=(
        Output("fits", "Weights and KV caches fit on one GPU", "text",
               help="The target's weights plus the batch's caches with the draft tokens, "
                    "against the GPU's memory (no working memory, no draft model counted). "
                    "When they do not fit, the speed-up at this batch describes a GPU that "
                    "does not exist."),
        Output("tokens_per_step", "Tokens per verification step", "number", unit="tokens",
               help="(1 − α^(γ+1)) ÷ (1 − α)."),
        Output("speedup", "Speed-up while memory-bound", "ratio",
               help="tokens per step ÷ (γ·c + 1) (Leviathan et al. 2023, Theorem 3.8)."),
        Output("best_gamma", "Best draft length", "number", unit="tokens",
               help="The best of 0 to 64; 0: no draft length pays (α ≤ c)."),
        Output("best_speedup", "Speed-up at the best draft length", "ratio"),
        Output("speedup_at_batch", "Speed-up at this batch (roofline)", "ratio",
               help="The verification step checks γ + 1 tokens per sequence: free while "
                    "the step is memory-bound, up to γ + 1 times the arithmetic once it "
                    "is compute-bound. With sparse attention (DeepSeek-V3.2, GLM-5) each "
                    "of them reads its own top-k of the cache, up to γ + 1 times the "
                    "latents."),
    ),
    function=_speculative,
    sources=("Leviathan et al. 2023 (speculative decoding)",
             "DeepSeek-AI 2024 (DeepSeek-V3: multi-token prediction)", shared.GPU_NOTE),
)

ENTRIES = (KV_CACHE, INFERENCE, PREFIX_CACHING, CHUNKED_PREFILL, DISAGGREGATION, SPECULATIVE)
