"""Exercises of lesson 6, *Inference: Prefill, Decode and the KV Cache*.

The exercise notebook is ``exercises/inference_and_kv_cache.ipynb``.

They practise what the lesson teaches: prefill FLOPs of a prompt (and how little the
attention term adds), the time to the first token, the KV cache of a long-context batch,
``kv_cache_bytes`` written as code, how many long conversations fit beside the weights,
the decode ceiling of a 13B model, the per-user speed once KV reads are counted, the batch
where decode turns compute-bound, what batching does to latency and throughput, a
predict-then-run of this machine's decode-like loop, the cache of latent attention and
sliding windows, the weights a mixture-of-experts decode step reads, and the serving
techniques of 2026 (:mod:`gpulesson.serving_techniques`): the time to the first token with
a prefix-cache hit, the longest wait between two tokens with chunked prefill, the ratio of
prefill to decode GPUs, and the speed-up of speculative decoding.

Every answer and every figure in a worked solution comes from the calculators
(:mod:`gpulesson.inference`, among them ``max_concurrent_sequences``,
:mod:`gpulesson.memory`, :mod:`gpulesson.transformer`, :mod:`gpulesson.hardware`).
Standard library only.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from gpulesson import course, hardware, inference, memory, transformer
from gpulesson.exercises import core, mistakes, serving, wording
from gpulesson.exercises.bank import _common
from gpulesson.exercises.bank._common import (
    H100,
    SERVING_GPUS,
    P,
    config,
    drawn_until,
    within_context,
)
from gpulesson.exercises.bank._inference_serving import (
    chunked_prefill_gap,
    conversations_fit,
    disaggregation_ratio,
    prefix_cache_ttft,
    speculative_speedup,
    weights_fit,
)
from gpulesson.exercises.core import Mistake
from gpulesson.transformer import TransformerConfig
from gpulesson.units import format_bytes, format_flops, format_seconds

LESSON = "inference_and_kv_cache"
TITLE = course.title(LESSON)


#: Models with grouped-query attention (fewer KV heads than query heads) whose query heads
#: times head size equal the hidden size, so "the hidden-size formula" and "one KV head per
#: query head" give the same (wrong) number; none has a sliding window (exercise 11 has).
_GQA_MODELS = ("llama-3-8b", "qwen3-8b", "qwen2.5-7b", "llama-2-70b", "llama-3-70b",
               "llama-3.1-405b")
_SMALL_MODELS = ("llama-3-8b", "qwen3-8b", "qwen2.5-7b", "llama-2-7b", "llama-2-13b")


def _mha(cfg: TransformerConfig) -> TransformerConfig:
    """The same model with one KV head per query head (the hidden-size KV formula)."""
    return dataclasses.replace(cfg, kv_heads=cfg.heads)


def _gb(n_bytes: float, digits: int = 1) -> str:
    return format_bytes(n_bytes, digits=digits)


def _gib(n_bytes: float, digits: int = 1) -> str:
    return format_bytes(n_bytes, binary=True, digits=digits)


def _shape(cfg: TransformerConfig) -> dict[str, int]:
    return {"layers": cfg.layers, "heads": cfg.heads, "head_dim": cfg.head_dim}


# ---------------------------------------------------------------------------------------
# 1. Prefill FLOPs of a prompt

def _prefill(p: P, *, attention: bool = True) -> float:
    cfg = config(p)
    shape = _shape(cfg) if attention else {}
    return inference.prefill_flops(transformer.param_count(cfg), p["tokens"], **shape)


def _prefill_derived(p: P) -> dict[str, Any]:
    cfg = config(p)
    n = transformer.param_count(cfg)
    linear, total = _prefill(p, attention=False), _prefill(p)
    return {
        "name": wording.model_label(p["model"]), "tokens_text": wording.count(p['tokens']),
        "a_tokens": wording.with_article(wording.count(p['tokens'])),
        "n_text": wording.count(n), "L": cfg.layers, "H": cfg.heads, "Q": cfg.head_dim,
        "linear": format_flops(linear), "attention": format_flops(total - linear),
        "share": wording.rounded_percent((total - linear) / total, 1),
        "crossover": wording.count(inference.attention_crossover_tokens(n, **_shape(cfg))),
    }


prefill_flops_2k = core.NumericExercise(
    lesson=LESSON, number=1, title="Prefill FLOPs of {a_tokens}-token prompt",
    question=(
        "{name} has {n_text} parameters, {L} layers and {H} query heads of size {Q}. How "
        "many FLOPs does the prefill of one {tokens_text}-token prompt take? Count 2 FLOPs "
        "per parameter per token for the weights, and the attention scores over the full "
        "T×T matrix (QKᵀ and the product with V, as PaLM counts them)."
    ),
    hints=(
        "Two parts: the weights, which every token passes through once, and attention, "
        "where every token meets every other token.",
        "Weights: 2·N·T. Attention: 4·L·H·Q·T² (2·L·H·Q·T² for QKᵀ, as much again for the "
        "product with V).",
    ),
    solution=(
        "Weights: 2 × {n_text} × {tokens_text} = {linear}. Attention: 4 × {L} × {H} × {Q} × "
        "{tokens_text}² = {attention}. Total **{answer}**, of which attention is only "
        "{share}.\n\n"
        "The attention part grows with T², the weight part with T; they are equal at "
        "T = N ÷ (2·L·H·Q) = {crossover} tokens. Below that, prefill cost grows almost "
        "linearly with the prompt, which is why \"prefill scales with the square of the "
        "sequence length\" is mostly wrong for prompts of a few thousand tokens. (A causal "
        "kernel skips the masked half of the scores and does about half the attention "
        "FLOPs.)"
    ),
    answer=_prefill,
    derived=_prefill_derived,
    mistakes=(
        Mistake("forgot_attention",
                "That is the weight part alone, 2·N·T = {linear}. Add the attention scores: "
                "4·L·H·Q·T² = {attention} more.",
                lambda p: _prefill(p, attention=False)),
        Mistake("causal_half",
                "You counted only the causal half of the score matrix. A real causal kernel "
                "does about that, but this question counts the full T×T matrix, as PaLM "
                "does: 4·L·H·Q·T².",
                lambda p: (_prefill(p) + _prefill(p, attention=False)) / 2),
        mistakes.counted_macs(lambda p: _prefill(p) / 2),
        Mistake("training_6n",
                "6 FLOPs per parameter per token is training (forward 2N + backward 4N). "
                "Prefill is a forward pass only: 2N per token.",
                lambda p: 3 * _prefill(p, attention=False)),
        Mistake("squared_everything",
                "That scales the whole cost with T². Only the attention scores grow with "
                "T²; the weights cost 2·N per token, linear in T.",
                lambda p: _prefill(p, attention=False) * p["tokens"]),
    ),
    defaults={"model": "llama-2-7b", "tokens": 2048},
    sample=lambda rng: (lambda model: {
        "model": model, "tokens": within_context(rng, model, [2048, 4096, 8192])})(
            rng.choice(_SMALL_MODELS)),
    dimension="flops", unit="TFLOP", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 2. Time to the first token (the prefill on a GPU's roofline)

def _ttft(p: P, *, peak: float | None = None, attention: bool = True) -> float:
    cfg = config(p)
    g = hardware.gpu(p["gpu"])
    n = transformer.param_count(cfg)
    shape = _shape(cfg) if attention else {}
    return inference.prefill_time(
        n_params=n, tokens=p["tokens"], peak_flops=peak or g.dense("bf16"),
        bandwidth=g.bandwidth, weight_bytes=memory.weight_bytes(n, precision="bf16"),
        **shape)


def _ttft_derived(p: P) -> dict[str, Any]:
    cfg = config(p)
    g = hardware.gpu(p["gpu"])
    n = transformer.param_count(cfg)
    weights = memory.weight_bytes(n, precision="bf16")
    return {
        "name": wording.model_label(p["model"]), "tokens_text": wording.count(p['tokens']),
        "flops": format_flops(inference.prefill_flops(n, p["tokens"], **_shape(cfg))),
        "peak": wording.tflop_rate(g.dense("bf16")),
        "bw": wording.bandwidth(g.bandwidth), "weights": _gb(weights),
        "read_time": format_seconds(weights / g.bandwidth),
        "decode_step": format_seconds(serving.decode_speed(
            p["model"], p["gpu"], context=p["tokens"], batch=1).step_time),
    }


time_to_first_token = core.NumericExercise(
    lesson=LESSON, number=2, title="Time to the first token on the {gpu}",
    question=(
        "A user sends a prompt of {tokens_text} tokens to {name} in BF16 on one {gpu} "
        "({peak} dense BF16, {bw}). On the roofline (no overheads, attention counted over "
        "the full score matrix), how long does the prefill take, that is the time to the "
        "first token? Answer in milliseconds."
    ),
    hints=(
        "Is prefill limited by reading the weights once, or by its arithmetic? Compute both "
        "times and take the larger.",
        "Prefill FLOPs (2·N·T + 4·L·H·Q·T²) ÷ dense peak, against weight bytes ÷ bandwidth.",
    ),
    solution=(
        "The prefill does {flops}; at {peak} that takes **{answer}**. Reading the {weights} "
        "of weights once takes only {read_time}, so prefill is compute-bound: every weight "
        "read is used for all {tokens_text} tokens.\n\n"
        "Each later token (decode) then takes at least {decode_step} on its own, almost all "
        "of it reading weights and KV cache: per token, decode is far slower than prefill."
    ),
    answer=_ttft,
    derived=_ttft_derived,
    mistakes=(
        Mistake("memory_bound_prefill",
                "That is the time to read the weights once ({read_time}). Prefill uses each "
                "weight for every prompt token, so its arithmetic takes much longer: "
                "compute-bound.",
                lambda p: (lambda cfg: memory.weight_bytes(transformer.param_count(cfg),
                                                           precision="bf16")
                           / hardware.gpu(p["gpu"]).bandwidth)(config(p))),
        mistakes.used_sparse_peak(_common.at_sparse_peak(_ttft)),
        Mistake("forgot_attention",
                "You left out the attention scores (4·L·H·Q·T² FLOPs); at {tokens_text} "
                "tokens they add a noticeable share.",
                lambda p: _ttft(p, attention=False)),
    ),
    defaults={"model": "llama-3-8b", "tokens": 8192, "gpu": "H100 SXM"},
    sample=lambda rng: (lambda model: {
        "model": model, "tokens": within_context(rng, model, [4096, 8192, 16384]),
        "gpu": rng.choice(["H100 SXM", "A100 80GB", "H200", "L40S"])})(
            rng.choice(_SMALL_MODELS)),
    dimension="seconds", unit="ms", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 3. KV cache of a long-context batch

def _kv_total(p: P, *, mha: bool = False, batch: int | None = None) -> int:
    cfg = config(p)
    return inference.kv_cache_bytes(
        _mha(cfg) if mha else cfg, seq_len=p["seq_len"],
        batch=p["batch"] if batch is None else batch,
        bytes_per_element=memory.precision_bytes(p["kv_dtype"]))


def _kv_derived(p: P) -> dict[str, Any]:
    cfg = config(p)
    b = memory.precision_bytes(p["kv_dtype"])
    per_token = inference.kv_cache_bytes_per_token(cfg, bytes_per_element=b)
    return {
        "name": wording.model_label(p["model"]), "L": cfg.layers, "H": cfg.heads,
        "KV": cfg.kv_heads, "Q": cfg.head_dim, "hidden": wording.count(cfg.hidden),
        "seq_text": wording.count(p['seq_len']),
        "prec": wording.precision_label(p["kv_dtype"]), "bpe": wording.value_bytes(b),
        "per_token": _gib(per_token, 0) if per_token >= 2**20 else f"{per_token // 1024} KiB",
        "per_seq": _gib(_kv_total(p, batch=1)), "gib": _gib(_kv_total(p)),
        "mha": _gb(_kv_total(p, mha=True)), "ratio": core.format_number(cfg.heads / cfg.kv_heads),
        "h100s": _h100s_text(p),
    }


def _h100s_text(p: P) -> str:
    """The closing remark on how many H100s the cache alone fills, only where it is more
    than one ("needs 1 H100s' worth" said nothing for a cache of a few GB)."""
    h100s = memory.gpus_needed(_kv_total(p), hardware.gpu(H100).memory_bytes)
    return (f" Even the right figure needs {h100s} H100s' worth of memory for the cache alone."
            if h100s >= 2 else "")


kv_cache_long_context = core.NumericExercise(
    lesson=LESSON, number=3, title="KV cache of {name} at {seq_text} tokens",
    question=(
        "{name} has {L} layers, {H} query heads and {KV} key/value heads of size {Q} "
        "(hidden size {hidden}). It serves {batch} conversations at once, each holding "
        "{seq_text} tokens, with the KV cache in {prec} ({bpe} per value). How large "
        "is the KV cache in GB (10⁹ bytes)?"
    ),
    hints=(
        "Per token and layer the cache holds one key and one value vector for each KV "
        "head, not for each query head.",
        "2 × layers × kv_heads × head_dim × bytes per value, per token; times tokens, times "
        "conversations.",
    ),
    solution=(
        "Per token: 2 × {L} × {KV} × {Q} × {bpe} = {per_token}. One conversation of "
        "{seq_text} tokens: {per_seq}. {batch} of them: {gib}, that is **{answer}**.\n\n"
        "With one KV head per query head (the hidden-size formula, right only for "
        "multi-head attention) you would get {mha}, {ratio} times too much.{h100s}"
    ),
    answer=_kv_total,
    derived=_kv_derived,
    mistakes=(
        mistakes.hidden_instead_of_kv(lambda p: _kv_total(p, mha=True)),
        Mistake("keys_only",
                "That is half the cache: every layer keeps a key *and* a value vector per "
                "KV head, the factor 2.",
                lambda p: _kv_total(p) / 2),
        Mistake("forgot_batch",
                "That is one conversation's cache ({per_seq}). The question has {batch} of "
                "them in flight.",
                lambda p: _kv_total(p, batch=1)),
        _common.gib_as_gb_of(_kv_total),
    ),
    defaults={"model": "llama-3-70b", "seq_len": 32768, "batch": 8, "kv_dtype": "bf16"},
    sample=lambda rng: (lambda model: {
        "model": model,
        "seq_len": within_context(rng, model, [4096, 8192, 16384, 32768, 65536, 131072]),
        "batch": rng.choice([2, 4, 8, 16, 32]),
        "kv_dtype": rng.choice(["bf16", "bf16", "fp8"])})(rng.choice(_GQA_MODELS)),
    dimension="bytes", unit="GB", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 4. Code: kv_cache_bytes

def _kv_reference(layers: int, heads: int, kv_heads: int, head_dim: int, seq_len: int,
                  batch: int, bytes_per_element: float) -> int:
    cfg = TransformerConfig(hidden=heads * head_dim, layers=layers, heads=heads, vocab=1000,
                            kv_heads=kv_heads, head_dim=head_dim)
    return inference.kv_cache_bytes(cfg, seq_len=seq_len, batch=batch,
                                    bytes_per_element=bytes_per_element)


def _kv_model(layers, heads, kv_heads, head_dim, seq_len, batch, bytes_per_element):
    # a key and a value vector per KV head, per layer, per token, per sequence
    return 2 * layers * kv_heads * head_dim * seq_len * batch * bytes_per_element


def _kv_sample(rng: Any) -> dict[str, Any]:
    heads = rng.choice([8, 16, 32, 40, 64, 128])
    return {"layers": rng.choice([16, 24, 28, 32, 40, 48, 60, 80, 126]), "heads": heads,
            "kv_heads": rng.choice([k for k in (1, 2, 4, 8) if k < heads]),
            "head_dim": rng.choice([64, 128, 256]), "seq_len": rng.randint(1, 131072),
            "batch": rng.choice([1, 3, 4, 8, 12]),
            "bytes_per_element": rng.choice([0.5, 1, 2, 4])}


kv_cache_code = core.CodeExercise(
    lesson=LESSON, number=4, title="Write kv_cache_bytes",
    question=(
        "Write `kv_cache_bytes(layers, heads, kv_heads, head_dim, seq_len, batch, "
        "bytes_per_element)`: the bytes of keys and values a model with `heads` query heads "
        "and `kv_heads` key/value heads keeps for `batch` sequences of `seq_len` tokens. It "
        "is checked on the lesson's models and on random shapes against the course's "
        "calculator `gpulesson.inference.kv_cache_bytes`."
    ),
    hints=(
        "Which heads have keys and values: the query heads or the KV heads?",
        "Per token and layer: a key and a value vector (the 2) for each KV head, each "
        "head_dim numbers long. Then multiply by layers, tokens, sequences and bytes.",
    ),
    solution=(
        "2 × layers × kv_heads × head_dim × seq_len × batch × bytes_per_element. For "
        "Llama-3-8B (32 layers, 8 KV heads of 128) at 8,192 tokens in BF16: "
        f"{_gib(_kv_reference(32, 32, 8, 128, 8192, 1, 2))}; for Llama-2-7B (32 KV heads) "
        f"{_gib(_kv_reference(32, 32, 32, 128, 8192, 1, 2))}. The query-head count does not "
        "appear: it is the argument the hidden-size formula wrongly uses."
    ),
    function_name="kv_cache_bytes",
    signature="layers, heads, kv_heads, head_dim, seq_len, batch, bytes_per_element",
    reference=_kv_reference,
    sample_input=_kv_sample,
    examples=(
        {"layers": 32, "heads": 32, "kv_heads": 8, "head_dim": 128, "seq_len": 8192,
         "batch": 1, "bytes_per_element": 2},
        {"layers": 80, "heads": 64, "kv_heads": 8, "head_dim": 128, "seq_len": 32768,
         "batch": 8, "bytes_per_element": 2},
        {"layers": 32, "heads": 32, "kv_heads": 32, "head_dim": 128, "seq_len": 4096,
         "batch": 1, "bytes_per_element": 2},
    ),
    mistakes=(
        mistakes.hidden_instead_of_kv(lambda i: _kv_reference(**{**i, "kv_heads": i["heads"]})),
        Mistake("keys_only", "Your function counts keys only: every layer stores a key *and* "
                "a value vector per KV head (the factor 2).",
                lambda i: _kv_reference(**i) / 2),
        Mistake("forgot_layers", "Every layer keeps its own keys and values: multiply by "
                "`layers`.", lambda i: _kv_reference(**{**i, "layers": 1})),
        Mistake("forgot_batch", "Each of the `batch` sequences has its own cache: multiply "
                "by `batch`.", lambda i: _kv_reference(**{**i, "batch": 1})),
    ),
    model_solution=_kv_model,
    rtol=1e-12,
)


# ---------------------------------------------------------------------------------------
# 5. How many long conversations fit beside the weights?

def _fit(p: P, *, mha: bool = False, overhead: float | None = None,
         weights_free: bool = False) -> int:
    cfg = config(p)
    memory_bytes = hardware.gpu(p["gpu"]).memory_bytes
    if weights_free:  # the mistake: as if the weights took no memory
        memory_bytes += memory.weight_bytes(transformer.param_count(cfg), precision="bf16")
    return inference.max_concurrent_sequences(
        _mha(cfg) if mha else cfg, context=p["context"], gpu_memory=memory_bytes,
        overhead=p["overhead"] if overhead is None else overhead)


def _fit_derived(p: P) -> dict[str, Any]:
    cfg = config(p)
    n = transformer.param_count(cfg)
    g = hardware.gpu(p["gpu"])
    weights = memory.weight_bytes(n, precision="bf16")
    per_seq = inference.kv_cache_bytes(cfg, seq_len=p["context"])
    users = _fit(p)
    used = memory.inference_memory(
        n, precision="bf16", overhead_bytes=p["overhead"],
        kv_cache_bytes=inference.kv_cache_bytes(cfg, seq_len=p["context"], batch=max(users, 1)))
    return {
        "name": wording.model_label(p["model"]), "ctx_text": wording.count(p['context']),
        "mem": _gb(g.memory_bytes, 0), "over": _gb(p["overhead"], 0),
        "weights": _gb(weights, 2), "per_seq": _gb(per_seq, 3),
        "free": _gb(memory.headroom(weights + p["overhead"], g.memory_bytes), 2),
        "total": _gb(used.total, 2), "mha_users": _fit(p, mha=True),
        "KV": cfg.kv_heads, "H": cfg.heads,
    }


sequences_that_fit = core.NumericExercise(
    lesson=LESSON, number=5, title="How many {ctx_text}-token conversations fit?",
    question=(
        "{name} is served in BF16 on one {gpu} ({mem}). Allow {over} for the CUDA context "
        "and buffers. How many conversations of {ctx_text} tokens each can be kept in "
        "flight at once, with their whole KV cache (BF16) in memory?"
    ),
    hints=(
        "What is left after the weights and the overhead? Then divide by one "
        "conversation's KV cache.",
        "Weights: parameters × 2 bytes. One conversation: 2 × layers × kv_heads × head_dim "
        "× tokens × 2 bytes. Round down.",
    ),
    solution=(
        "Weights {weights} + overhead {over} leave {free}. One {ctx_text}-token "
        "conversation keeps {per_seq} of keys and values ({KV} KV heads, not {H}), so "
        "**{answer}** fit (using {total} in all).\n\n"
        "With the hidden-size formula, one KV head per query head, only {mha_users} would "
        "seem to fit. Grouped-query attention is what lets one GPU serve this many long "
        "conversations."
    ),
    answer=_fit,
    derived=_fit_derived,
    mistakes=(
        mistakes.hidden_instead_of_kv(lambda p: None if _fit(p, mha=True) == _fit(p)
                                      else _fit(p, mha=True)),
        Mistake("forgot_weights",
                "You gave the whole memory to the KV cache. The {weights} of weights come "
                "first.",
                lambda p: _fit(p, weights_free=True)),
        Mistake("forgot_overhead",
                "You left out the {over} of overhead the question allows for.",
                lambda p: _fit(p, overhead=0)),
    ),
    defaults={"model": "llama-3-8b", "context": 8192, "gpu": "H100 SXM", "overhead": 2e9},
    sample=lambda rng: (lambda model: {
        "model": model, "context": within_context(rng, model, [4096, 8192, 16384, 32768]),
        "gpu": rng.choice(["H100 SXM", "A100 80GB", "H200", "L40S"]),
        "overhead": rng.choice([1e9, 2e9, 3e9])})(
            rng.choice(["llama-3-8b", "qwen3-8b", "qwen2.5-7b"])),
    dimension="count", unit="conversations", extra_units=wording.CONVERSATIONS, rtol=0.0, atol=0.0,
)


# ---------------------------------------------------------------------------------------
# 6. The decode ceiling of a 13B model

def _ceiling(p: P, *, precision: str | None = None) -> float:
    return _common.decode_ceiling(p, precision=precision or p["precision"],
                          bandwidth=hardware.gpu(p["gpu"]).bandwidth)


def _capital(text: str) -> str:
    """``text`` with its first letter a capital (``'an 8B' -> 'An 8B'``)."""
    return text[:1].upper() + text[1:]


def _ceiling_derived(p: P) -> dict[str, Any]:
    g = hardware.gpu(p["gpu"])
    weights = memory.weight_bytes(p["n_params"], precision=p["precision"])
    per_token = inference.decode_flops(p["n_params"], 1)
    return {
        "model": wording.billions(p["n_params"]), "prec": wording.precision_label(p["precision"]),
        "a_model": wording.with_article(wording.billions(p["n_params"])),
        "A_model": _capital(wording.with_article(wording.billions(p["n_params"]))),
        "bpp": wording.value_bytes(memory.precision_bytes(p["precision"])),
        "bw": wording.bandwidth(g.bandwidth), "weights": _gb(weights),
        "step": format_seconds(weights / g.bandwidth),
        "per_token": format_flops(per_token),
        "peak": wording.tflop_rate(g.dense("bf16")),
        "busy": wording.rounded_percent(per_token * _ceiling(p) / g.dense("bf16"), 2),
    }


decode_ceiling_13b = core.NumericExercise(
    lesson=LESSON, number=6, title="Decode ceiling of {a_model} model on the {gpu}",
    question=(
        "{A_model}-parameter model runs in {prec} on one {gpu} ({bw}). One user, batch 1; "
        "ignore the KV cache. At most how many tokens per second can decode produce?"
    ),
    hints=(
        "What must be read from memory for every new token?",
        "Every weight, once per step: tokens/s ≤ bandwidth ÷ weight bytes.",
    ),
    solution=(
        "Each step reads the {weights} of weights ({model} × {bpp}). At {bw} that "
        "takes {step}, so decode gives at most **{answer}**.\n\n"
        "The arithmetic is no limit: {per_token} per token at that rate keeps the "
        "{peak} Tensor Cores busy only {busy} of the time."
    ),
    answer=_ceiling,
    derived=_ceiling_derived,
    mistakes=(
        Mistake("one_byte_per_param",
                "Check the bytes per parameter: {prec} takes {bpp}, so a step reads "
                "{weights}.",
                lambda p: None if p["precision"] == "int8" else _ceiling(p, precision="int8")),
        Mistake("compute_ceiling",
                "That is the dense peak divided by 2·N FLOPs per token: the limit if "
                "arithmetic were the bottleneck. At batch 1 the weights' bytes are.",
                lambda p: hardware.gpu(p["gpu"]).dense("bf16")
                / inference.decode_flops(p["n_params"], 1)),
        mistakes.inverted_ratio(lambda p: 1 / _ceiling(p),
                                hint="That is seconds per token (bytes ÷ bandwidth). Tokens per "
                                     "second is its inverse."),
    ),
    defaults={"n_params": 13e9, "precision": "fp16", "gpu": "H100 SXM"},
    # a model whose weights do not fit on the GPU has no decode speed there
    sample=drawn_until(
        lambda rng: {"n_params": rng.choice([7e9, 8e9, 13e9, 34e9, 70e9]),
                     "precision": rng.choice(["fp16", "bf16", "int4"]),
                     "gpu": rng.choice(["H100 SXM", "A100 80GB", "H200", "MI300X"])},
        lambda p: weights_fit(p["gpu"], p["n_params"], p["precision"])),
    dimension="tokens/s", unit="tokens/s", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 7. Per-user speed once the KV cache is read too

def _per_user(p: P, *, kv: bool = True, mha: bool = False, aggregate: bool = False) -> float:
    cfg = config(p)
    g = hardware.gpu(p["gpu"])
    kv_seq = inference.kv_cache_bytes(_mha(cfg) if mha else cfg, seq_len=p["context"])
    total = inference.decode_ceiling_tokens_per_second(
        weight_bytes=memory.weight_bytes(transformer.param_count(cfg), precision="bf16"),
        bandwidth=g.bandwidth, batch=p["batch"], kv_bytes_per_sequence=kv_seq if kv else 0)
    return total if aggregate else total / p["batch"]


def _per_user_derived(p: P) -> dict[str, Any]:
    cfg = config(p)
    g = hardware.gpu(p["gpu"])
    weights = memory.weight_bytes(transformer.param_count(cfg), precision="bf16")
    kv_all = inference.kv_cache_bytes(cfg, seq_len=p["context"], batch=p["batch"])
    return {
        "name": wording.model_label(p["model"]), "ctx_text": wording.count(p['context']),
        "bw": wording.bandwidth(g.bandwidth), "weights": _gb(weights, 2),
        "kv_seq": _gb(inference.kv_cache_bytes(cfg, seq_len=p["context"]), 1),
        "kv_all": _gb(kv_all, 2), "read": _gb(weights + kv_all, 2),
        "aggregate": wording.token_rate(_per_user(p, aggregate=True)),
        "no_kv": wording.token_rate(_per_user(p, kv=False)),
    }


per_user_with_kv = core.NumericExercise(
    lesson=LESSON, number=7, title="Per-user speed with {batch} users and their KV caches",
    question=(
        "{name} in BF16 on one {gpu} ({bw}) decodes for {batch} users at once, each with "
        "{ctx_text} tokens of context in a BF16 KV cache. Every step reads the weights once "
        "and every user's KV cache. On this memory-bound ceiling, how many tokens per "
        "second does *each* user get?"
    ),
    hints=(
        "Add up the bytes one decode step reads: the weights once, plus each user's KV "
        "cache.",
        "Steps per second = bandwidth ÷ bytes per step; each step gives every user one "
        "token.",
    ),
    solution=(
        "One step reads {weights} of weights plus {batch} × {kv_seq} = {kv_all} of KV "
        "cache: {read}. At {bw} that is **{answer}** per user, {aggregate} in all.\n\n"
        "Ignoring the KV cache would promise {no_kv} per user: at long contexts the KV "
        "reads, not the weights, start to set the pace, and each extra user slows the "
        "others."
    ),
    answer=_per_user,
    derived=_per_user_derived,
    mistakes=(
        Mistake("ignored_kv",
                "That ignores the KV cache: each step also reads {kv_all} of keys and "
                "values, on top of the {weights} of weights.",
                lambda p: _per_user(p, kv=False)),
        Mistake("aggregate",
                "That is the total over all {batch} users ({aggregate}). The question asks "
                "what each of them gets.",
                lambda p: _per_user(p, aggregate=True)),
        mistakes.hidden_instead_of_kv(lambda p: _per_user(p, mha=True)),
    ),
    defaults={"model": "llama-3-8b", "gpu": "H100 SXM", "batch": 16, "context": 4096},
    sample=lambda rng: {"model": rng.choice(["llama-3-8b", "qwen3-8b", "qwen2.5-7b"]),
                        "gpu": rng.choice(SERVING_GPUS),
                        "batch": rng.choice([8, 16, 32]),
                        "context": rng.choice([2048, 4096, 8192])},
    dimension="tokens/s", unit="tokens/s", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 8. The batch at which decode turns compute-bound

def _bound_batch(p: P, *, peak: float | None = None, bytes_per_param: float | None = None
                 ) -> float:
    g = hardware.gpu(p["gpu"])
    return inference.decode_compute_bound_batch(
        peak_flops=peak or g.dense("bf16"), bandwidth=g.bandwidth,
        bytes_per_param=bytes_per_param or memory.precision_bytes("bf16"))


def _bound_derived(p: P) -> dict[str, Any]:
    g = hardware.gpu(p["gpu"])
    return {"peak": wording.tflop_rate(g.dense("bf16")),
            "bw": wording.bandwidth(g.bandwidth),
            "ridge": core.format_number(g.ridge_point("bf16"), 4)}


compute_bound_batch = core.NumericExercise(
    lesson=LESSON, number=8, title="When does decode turn compute-bound on the {gpu}?",
    question=(
        "The {gpu} does {peak} of dense BF16 arithmetic and reads {bw}. A model with BF16 "
        "weights (2 bytes per parameter) decodes a batch of sequences: each step reads every "
        "weight once and does 2 FLOPs per parameter per sequence. Ignoring the KV cache, "
        "from what batch size does the arithmetic take longer than reading the weights?"
    ),
    hints=(
        "Write both times for a model of N parameters at batch B: arithmetic 2·N·B ÷ peak, "
        "weights 2·N bytes ÷ bandwidth.",
        "Set them equal: N cancels, leaving B = peak × bytes per parameter ÷ (2 × "
        "bandwidth).",
    ),
    solution=(
        "2·N·B ÷ {peak} = 2·N ÷ {bw} gives B = {peak} × 2 bytes ÷ (2 × {bw}) = "
        "**{answer}**. With BF16 weights this equals the ridge point, {ridge} FLOP/byte, "
        "because each 2-byte parameter brings 2 FLOPs per sequence.\n\n"
        "Below this batch, adding sequences is almost free; above it, each sequence adds "
        "its arithmetic. Counting KV reads moves the point further out, and for long "
        "contexts decode never gets there."
    ),
    answer=_bound_batch,
    derived=_bound_derived,
    mistakes=(
        mistakes.used_sparse_peak(_common.at_sparse_peak(_bound_batch)),
        Mistake("one_byte_per_param",
                "BF16 weights take 2 bytes per parameter: a step reads 2·N bytes, so the "
                "arithmetic catches up with the read at twice the batch you found.",
                lambda p: _bound_batch(p, bytes_per_param=1)),
        Mistake("fp32_peak",
                "That uses the FP32 (CUDA-core) peak. BF16 matrix products run on the "
                "Tensor Cores: {peak}.",
                lambda p: _bound_batch(p, peak=hardware.gpu(p["gpu"]).dense("fp32"))),
        mistakes.inverted_ratio(lambda p: 1 / _bound_batch(p),
                                hint="You divided the wrong way round: the batch is peak × bytes "
                                     "per parameter ÷ (2 × bandwidth)."),
    ),
    defaults={"gpu": "A100 80GB"},
    sample=lambda rng: {"gpu": rng.choice(["A100 40GB", "A100 80GB", "H100 SXM", "H100 PCIe",
                                           "H200", "L40S", "MI300X"])},
    dimension="count", unit="sequences", extra_units=wording.SEQUENCES, rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 9. Batching: latency against throughput

def _rates(p: P, batch: int, *, kv: bool = True) -> tuple[float, float]:
    """(per-user, aggregate) tokens/s from the roofline step time."""
    speed = serving.decode_speed(p["model"], p["gpu"], context=p["context"], batch=batch, kv=kv)
    return speed.per_sequence, speed.tokens_per_second


def _batching_key(p: P, *, kv: bool = True) -> str:
    one, many = _rates(p, 1, kv=kv), _rates(p, p["batch"], kv=kv)
    user, total = many[0] / one[0], many[1] / one[1]
    if user > 0.98:
        return "user_same"
    if total > 1.02:
        return "user_slower"
    return "total_same"


def _batching_derived(p: P) -> dict[str, Any]:
    one, many = _rates(p, 1), _rates(p, p["batch"])
    return {"name": wording.model_label(p["model"]), "ctx_text": wording.count(p['context']),
            "user1": wording.token_rate(one[0]), "userb": wording.token_rate(many[0]),
            "totalb": wording.token_rate(many[1]),
            "gain": core.format_number(many[1] / one[1], 3),
            "loss": wording.rounded_percent(1 - many[0] / one[0])}


batching_tradeoff = core.ChoiceExercise(
    lesson=LESSON, number=9, title="Batch 1 to batch {batch}: who gains, who pays?",
    question=(
        "{name} in BF16 on one {gpu} serves conversations of {ctx_text} tokens each. We go "
        "from decoding one conversation at a time to {batch} at once. On the roofline of a "
        "decode step (weights and every KV cache read, arithmetic at the dense peak), what "
        "happens?"
    ),
    options=[("user_same", "Total tokens/s rises {batch}-fold; each user is as fast as before"),
             ("user_slower", "Total tokens/s rises, but less than {batch}-fold; each user "
                             "gets slower"),
             ("total_same", "Total tokens/s stays the same; each user gets {batch} times "
                            "slower")],
    hints=(
        "What does one decode step read at batch 1, and what at batch {batch}?",
        "The weights are read once per step whatever the batch; every user's KV cache is "
        "read as well.",
    ),
    solution=(
        "One user alone gets {user1}. With {batch} users each gets {userb} ({loss} less) "
        "and all together {totalb}, {gain} times as much: **{answer}**. The weight read is "
        "shared, which is why batching pays; the KV reads are not, which is why each user "
        "slows down as contexts grow."
    ),
    answer=_batching_key,
    derived=_batching_derived,
    mistakes=(
        Mistake("ignored_kv",
                "That holds only if the KV cache is ignored. Every user's {ctx_text}-token "
                "cache is read at every step too, so the step gets longer as users join.",
                lambda p: _batching_key(p, kv=False)),
        Mistake("bandwidth_split",
                "Batching does not split the bandwidth between users: one read of the "
                "weights serves every user in the batch.",
                lambda p: "total_same"),
    ),
    defaults={"model": "llama-3-8b", "gpu": "H100 SXM", "context": 8192, "batch": 32},
    # every conversation's cache must fit beside the weights (section 4)
    sample=drawn_until(
        lambda rng: (lambda model: {
            "model": model, "gpu": rng.choice(SERVING_GPUS),
            "context": within_context(rng, model, [2048, 4096, 8192]),
            "batch": rng.choice([4, 8, 16, 32])})(
                rng.choice(["llama-3-8b", "qwen3-8b", "llama-2-7b"])),
        lambda p: conversations_fit(p["model"], p["gpu"], context=p["context"],
                                    batch=p["batch"])),
)


# ---------------------------------------------------------------------------------------
# 10. Predict, then run: batching on this machine

batching_here = core.PredictExercise(
    lesson=LESSON, number=10, title="Batching on this machine: predict, then run",
    question=(
        "The cell after this one times a decode-like step on this machine: a batch of "
        "vectors multiplied by weight matrices too large for the CPU's caches, first for "
        "one sequence, then for 32 at once.\n\n"
        "Before running it: **how many times more tokens per second** (sequences × steps "
        "per second) do you expect at batch 32 than at batch 1? Commit a number, then run "
        "the measurement."
    ),
    hints=(
        "At batch 1 the step is limited by reading the weights. How much longer does the "
        "read take for 32 vectors?",
        "If the step time stayed the same, batch 32 would give 32×. It stops doing so once "
        "the arithmetic (2 FLOPs per weight per sequence) takes longer than the read: on a "
        "CPU that happens at a batch of roughly 5 to 50.",
    ),
    solution=(
        "While the step is memory-bound, 32 sequences cost about as much as one and the "
        "gain approaches 32×. A CPU's ridge point is low (a few to a few tens of FLOP per "
        "byte), so by batch 32 many CPUs are already compute-bound and the gain is smaller, "
        "typically 5 to 30×. A GPU, whose ridge point is far higher, gets nearly the full "
        "32× in the same experiment."
    ),
    dimension="count", unit="×", extra_units=wording.TIMES, good_within=2.0,
)


# ---------------------------------------------------------------------------------------
# 11. The cache of latent attention and sliding windows

def _arch_kv(p: P, *, mha: bool = False, cap_windows: bool = True) -> int:
    cfg = config(p)
    return inference.kv_cache_bytes(inference.multi_head_equivalent(cfg) if mha else cfg,
                                    seq_len=p["seq_len"], cap_windows=cap_windows)


def _arch_kv_derived(p: P) -> dict[str, Any]:
    cfg = config(p)
    if cfg.latent_attention:
        design = (f"latent attention: per layer and token it caches a {cfg.kv_lora_rank}-"
                  f"value latent and a {cfg.qk_rope_head_dim}-value rotary key, "
                  f"({cfg.kv_lora_rank} + {cfg.qk_rope_head_dim}) × {cfg.layers} values per "
                  "token")
    elif cfg.sliding_window_pattern:
        design = (f"{cfg.local_layers} of its {cfg.layers} layers keep only the last "
                  f"{wording.count(cfg.sliding_window)} tokens, the other {cfg.global_layers} "
                  f"every token; {cfg.kv_heads} KV heads of {cfg.head_dim}")
    else:
        design = (f"every one of its {cfg.layers} layers keeps only the last "
                  f"{wording.count(cfg.sliding_window)} tokens; {cfg.kv_heads} KV heads of "
                  f"{cfg.head_dim}")
    name = wording.model_label(p["model"])
    if p["model"] == "mistral-7b":  # the preset is v0.1; v0.2 and v0.3 have no window
        design += " (Mistral-7B v0.2 and v0.3 dropped the window)"
    return {"name": name, "seq_text": wording.count(p["seq_len"]),
            "design": design, "mha": format_bytes(_arch_kv(p, mha=True)),
            "others": _arch_others(p)}


def _arch_others(p: P) -> str:
    """What the cache would be without the design's savings: without the sliding window
    (for a model that has one) and with multi-head attention."""
    mha = format_bytes(_arch_kv(p, mha=True))
    if not config(p).sliding_window:
        return ("With one key and one value per query head (multi-head attention) it would "
                f"be {mha}.")
    return ("Without the window every layer would hold every token, "
            f"{format_bytes(_arch_kv(p, cap_windows=False))}; with one key and one value per "
            f"query head (multi-head attention) {mha}.")


arch_kv_cache = core.NumericExercise(
    lesson=LESSON, number=11, title="The KV cache of {name} at {seq_text} tokens",
    question=(
        "{name} holds one conversation of {seq_text} tokens, its KV cache in BF16. How large "
        "is the cache, in GB? Read its design from the lesson (or "
        "`transformer.preset(...)`): {design}."
    ),
    hints=(
        "Latent attention caches a latent and a rotary key per layer, not a key and a value "
        "per head; a sliding-window layer keeps at most its window.",
        "Count per layer: how many tokens it holds, times the values per token, times 2 "
        "bytes.",
    ),
    solution=(
        "Following the design, {design}: **{answer}** (`inference.kv_cache_bytes`). {others}"
    ),
    answer=_arch_kv,
    derived=_arch_kv_derived,
    mistakes=(
        Mistake("mha_for_latent",
                "That is the multi-head formula, 2 × layers × heads × head size: latent "
                "attention caches only its latent and rotary key per layer.",
                lambda p: _arch_kv(p, mha=True) if transformer.preset(
                    p["model"]).latent_attention else None),
        Mistake("window_ignored",
                "That lets every layer keep every token. A sliding-window layer keeps at "
                "most its window.",
                lambda p: _arch_kv(p, cap_windows=False) if transformer.preset(
                    p["model"]).sliding_window else None),
        mistakes.hidden_instead_of_kv(lambda p: None if transformer.preset(
            p["model"]).latent_attention else _arch_kv(p, mha=True)),
        _common.gib_as_gb_of(_arch_kv),
    ),
    defaults={"model": "deepseek-v3", "seq_len": 32768},
    sample=lambda rng: (lambda model: {
        "model": model, "seq_len": within_context(rng, model, [8192, 16384, 32768])})(
            rng.choice(["deepseek-v3", "mistral-7b", "gemma-2-9b", "gpt-oss-20b",
                        "gpt-oss-120b"])),
    dimension="bytes", unit="GB", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 12. What a mixture-of-experts decode step reads

def _moe_read(p: P) -> float:
    return inference.decode_weight_bytes(config(p), batch=p["batch"])


def _moe_no_sharing(p: P) -> float | None:
    """k experts per token with no expert shared between tokens (at most all E)."""
    cfg = config(p)
    if p["batch"] == 1 or p["batch"] * cfg.experts_per_token >= cfg.experts:
        return None  # the same as one expert per token, or as every expert
    extra = (p["batch"] - 1) * cfg.experts_per_token
    return (inference.decode_weight_bytes(cfg, batch=1)
            + 2 * cfg.moe_layers * extra * transformer.expert_params(cfg))


def _moe_read_derived(p: P) -> dict[str, Any]:
    cfg = config(p)
    used = inference.expected_experts_used(experts=cfg.experts,
                                           experts_per_token=cfg.experts_per_token,
                                           tokens=p["batch"])
    return {"name": wording.model_label(p["model"]), "E": cfg.experts, "k": cfg.experts_per_token,
            "layers": cfg.moe_layers, "used": core.format_number(used, 3),
            "active": wording.billions(transformer.active_params(cfg)),
            "total": wording.billions(transformer.param_count(cfg)),
            "shared": wording.billions(transformer.param_count(cfg) - cfg.moe_layers
                                       * cfg.experts * transformer.expert_params(cfg)),
            "expert": wording.count(transformer.expert_params(cfg))}


moe_decode_read = core.NumericExercise(
    lesson=LESSON, number=12, title="What a decode step of {name} reads at batch {batch}",
    question=(
        "{name} routes each token to {k} of the {E} experts of each of its {layers} "
        "expert layers. Of its {total} parameters, {shared} lie outside the experts, and "
        "each expert of a layer has {expert} parameters. A decode step of {batch} "
        "conversations reads the BF16 weights once. Assuming uniform routing, how many GB "
        "of weights does the step read?"
    ),
    hints=(
        "The attention and shared weights are read once; in each expert layer, only the "
        "experts at least one of the {batch} tokens is routed to.",
        "Expected experts per layer: E × (1 − (1 − k/E)^B) = {used}.",
    ),
    solution=(
        "Each layer touches {used} of its {E} experts on average "
        "(`inference.expected_experts_used`), so the step reads the non-expert weights "
        "and {used} experts per layer: **{answer}** (`inference.decode_weight_bytes`). At "
        "batch 1 it would be the active parameters, counted with the input embedding as "
        "the lesson's W does ({active}, × 2 bytes); at a large batch "
        "nearly all {total}."
    ),
    answer=_moe_read,
    derived=_moe_read_derived,
    mistakes=(
        Mistake("active_at_any_batch",
                "That is the active parameters, what one token reads. The batch's tokens "
                "are routed to different experts, so a step reads more of them.",
                lambda p: None if p["batch"] == 1 else 2 * transformer.active_params(
                    config(p))),
        Mistake("every_expert",
                "That reads every expert. Under uniform routing some experts get no token of "
                "this batch: E × (1 − (1 − k/E)^B) are touched.",
                lambda p: 2 * transformer.param_count(config(p))),
        Mistake("k_times_batch",
                "That counts k experts per token as if no two tokens shared one. Expected "
                "distinct experts are E × (1 − (1 − k/E)^B), at most E.",
                _moe_no_sharing),
        _common.gib_as_gb_of(_moe_read),
    ),
    defaults={"model": "qwen3-30b-a3b", "batch": 4},
    sample=lambda rng: {"model": rng.choice(["mixtral-8x7b", "qwen3-30b-a3b",
                                             "deepseek-v3", "gpt-oss-120b"]),
                        "batch": rng.choice([2, 4, 8, 16])},
    dimension="bytes", unit="GB", rtol=0.02,
)


EXERCISES = (
    prefill_flops_2k,
    time_to_first_token,
    kv_cache_long_context,
    kv_cache_code,
    sequences_that_fit,
    decode_ceiling_13b,
    per_user_with_kv,
    compute_bound_batch,
    batching_tradeoff,
    batching_here,
    arch_kv_cache,
    moe_decode_read,
    prefix_cache_ttft,
    chunked_prefill_gap,
    disaggregation_ratio,
    speculative_speedup,
)

__all__ = ["EXERCISES", "LESSON", "TITLE"]
