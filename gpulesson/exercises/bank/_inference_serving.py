"""Exercises 13 to 16 of lesson 6 (*Inference: Prefill, Decode and the KV Cache*): the
serving techniques of 2026, from :mod:`gpulesson.serving_techniques`.

The time to the first token after a prefix-cache hit, the longest wait between two tokens
with chunked prefill, the ratio of prefill to decode GPUs when the two phases run apart,
and the speed-up of speculative decoding. The lesson's bank
(:mod:`gpulesson.exercises.bank.inference_and_kv_cache`) lists them after its first
twelve; they live here to keep each module short. Every answer comes from the
calculators; the running example is a preset model in BF16 on one GPU of the catalogue.
Standard library only.
"""

from __future__ import annotations

from typing import Any

from gpulesson import hardware, inference, memory, serving_techniques, transformer
from gpulesson.exercises import core, mistakes, wording
from gpulesson.exercises.bank._common import (
    CONTEXT_ALLOWANCE,
    P,
    config,
    drawn_until,
    within_context,
)
from gpulesson.exercises.core import Mistake
from gpulesson.units import format_flops, format_seconds

LESSON = "inference_and_kv_cache"
#: A count of prefill GPUs per decode GPU: GPUs, or a ratio.
_PREFILL_GPUS = {**wording.GPUS, "prefill GPUs": 1, **wording.TIMES}


__all__ = ["chunked_prefill_gap", "conversations_fit", "disaggregation_ratio",
           "prefix_cache_ttft", "speculative_speedup", "weights_fit"]


def weights_fit(gpu: str, n_params: float, precision: str) -> bool:
    """Whether ``n_params`` weights at ``precision`` and the lesson's overhead fit in one
    ``gpu`` (:func:`gpulesson.memory.inference_memory`, :func:`gpulesson.memory.fits`)."""
    need = memory.inference_memory(n_params, precision=precision,
                                   overhead_bytes=CONTEXT_ALLOWANCE).total
    return memory.fits(need, hardware.gpu(gpu).memory_bytes)


def conversations_fit(model: str, gpu: str, *, context: int, batch: int) -> bool:
    """Whether ``batch`` conversations of ``context`` tokens fit in one ``gpu`` beside the
    model's BF16 weights and the lesson's overhead, KV caches in BF16
    (:func:`gpulesson.inference.max_concurrent_sequences`)."""
    return inference.max_concurrent_sequences(
        transformer.preset(model), context=context,
        gpu_memory=hardware.gpu(gpu).memory_bytes, overhead=CONTEXT_ALLOWANCE) >= batch



def _gpu(p: P) -> dict[str, float]:
    g = hardware.gpu(p["gpu"])
    return {"peak_flops": g.dense("bf16"), "bandwidth": g.bandwidth}


# 13. The time to the first token with a prefix-cache hit

def _prefix(p: P) -> serving_techniques.PrefixCacheSaving:
    return serving_techniques.prefix_cache_saving(
        config(p), p["prompt"], hit_rate=p["hit_rate"], **_gpu(p))


def _prefix_fresh(p: P) -> float:
    """The new tokens prefilled as a prompt of their own (their attention to the cached
    tokens forgotten)."""
    cfg = config(p)
    return inference.model_prefill_time(cfg, p["prompt"] - _prefix(p).cached_tokens,
                                        **_gpu(p))


def _prefix_derived(p: P) -> dict[str, Any]:
    r = _prefix(p)
    return {"name": wording.model_label(p["model"]), "prompt_text": wording.count(p["prompt"]),
            "hit": wording.rounded_percent(p["hit_rate"]), "cached": wording.count(r.cached_tokens),
            "new": wording.count(p["prompt"] - r.cached_tokens),
            "without": format_seconds(r.ttft_without), "flops": format_flops(r.flops),
            "peak": wording.tflop_rate(_gpu(p)["peak_flops"]),
            "saved": format_seconds(r.ttft_saved)}


prefix_cache_ttft = core.NumericExercise(
    lesson=LESSON, number=13, title="The first token after a prefix-cache hit",
    question=(
        "The assistant's {prompt_text}-token prompts start with the same system prompt and "
        "documents, and the server keeps their KV cache: {hit} of each prompt's tokens are "
        "found in the prefix cache. {name} in BF16 on one {gpu} takes {without} to prefill "
        "a whole prompt (roofline). What is the time to the first token with the cache, on "
        "the same roofline?"
    ),
    hints=(
        "Only the tokens not in the cache pass through the weights, and each of them still "
        "attends to all {prompt_text} tokens of the prompt, cached ones included.",
        "{cached} tokens are cached and {new} are new: the FLOPs, and with them a "
        "compute-bound prefill's time, fall in the same proportion.",
    ),
    solution=(
        "The {new} new tokens cost {flops}: at {peak} that is **{answer}**, {saved} less "
        "than without the cache (`serving_techniques.prefix_cache_saving`). Each new token "
        "still attends to the whole prompt, so in the lesson's count, every query scored "
        "against every key, the saving is exactly the cached share as long as the step "
        "stays compute-bound (a causal kernel saves a little less: the uncached last "
        "tokens attend to the most keys); with nearly everything cached the time floors at "
        "one read of the weights, about a decode step."
    ),
    answer=lambda p: _prefix(p).ttft,
    derived=_prefix_derived,
    mistakes=(
        Mistake("hit_share_kept",
                "That keeps the cached share of the time. The cache *removes* the work of "
                "the {cached} cached tokens; the {new} new tokens remain.",
                lambda p: p["hit_rate"] * _prefix(p).ttft_without),
        Mistake("fresh_prompt",
                "That prefills the {new} new tokens as a prompt of their own. They attend "
                "to the cached tokens too: each token's attention spans all "
                "{prompt_text}.",
                _prefix_fresh),
        Mistake("no_saving",
                "That is the prefill without the cache. The {cached} cached tokens need no "
                "prefill at all.",
                lambda p: _prefix(p).ttft_without),
    ),
    defaults={"model": "llama-3-8b", "gpu": "H100 SXM", "prompt": 8192, "hit_rate": 0.75},
    sample=lambda rng: (lambda model: {
        "model": model, "gpu": rng.choice(["H100 SXM", "H200", "A100 80GB"]),
        "prompt": within_context(rng, model, [4096, 8192, 16384]),
        "hit_rate": rng.choice([0.5, 0.75, 0.9])})(
            rng.choice(["llama-3-8b", "qwen3-8b", "llama-2-7b"])),
    dimension="seconds", unit="ms", rtol=0.02,
)


# 14. Chunked prefill: the longest wait between two tokens

def _chunked(p: P, budget: int | None = None) -> serving_techniques.ChunkedPrefill:
    return serving_techniques.chunked_prefill(
        config(p), prompt_tokens=p["prompt"],
        token_budget=budget or p["budget"], decode_batch=p["batch"], context=p["context"],
        **_gpu(p))


def _chunked_derived(p: P) -> dict[str, Any]:
    r = _chunked(p)
    cfg = config(p)
    return {"name": wording.model_label(p["model"]), "prompt_text": wording.count(p["prompt"]),
            "ctx_text": wording.count(p["context"]), "budget_text": wording.count(p["budget"]),
            "chunk": wording.count(r.chunk), "steps": r.steps,
            "alone": format_seconds(r.decode_step),
            "unchunked": format_seconds(r.gap_unchunked),
            "ttft": format_seconds(r.ttft_chunked),
            "prefill": format_seconds(r.ttft_unchunked),
            "peak": wording.tflop_rate(_gpu(p)["peak_flops"]),
            "bw": wording.bandwidth(_gpu(p)["bandwidth"]),
            "n_text": wording.billions(transformer.active_params(cfg))}


chunked_prefill_gap = core.NumericExercise(
    lesson=LESSON, number=14, title="Chunked prefill: the longest wait between two tokens",
    question=(
        "{batch} conversations of {ctx_text} tokens decode with {name} in BF16 on one {gpu} "
        "({peak}, {bw}) when a newcomer's {prompt_text}-token prompt arrives. The server "
        "allows {budget_text} tokens per step: the {batch} decode tokens first, then a "
        "chunk of the prompt. On the roofline, how long is the longest gap between two "
        "tokens of a decoding conversation while the prompt is being prefilled?"
    ),
    hints=(
        "Each step now carries {batch} decode tokens and {chunk} prompt tokens. Its time "
        "is the larger of its arithmetic and its reads.",
        "Arithmetic: every token costs 2·N plus its attention (to its context, or to the "
        "whole prompt). Reads: the weights once and the {batch} KV caches.",
    ),
    solution=(
        "A step holds {batch} decode tokens and a chunk of {chunk} prompt tokens; its "
        "arithmetic outlasts its reads, so it takes **{answer}** "
        "(`serving_techniques.chunked_prefill`). Without chunking the prompt would run as "
        "one step of {prefill} and the conversations would wait {unchunked} between two "
        "tokens, against {alone} for a decode step alone. The price is the newcomer's: its "
        "prompt now takes {steps} steps, {ttft} to its first token instead of {prefill}."
    ),
    answer=lambda p: _chunked(p).gap_chunked,
    derived=_chunked_derived,
    mistakes=(
        Mistake("unchunked",
                "That is the gap without chunking: a decode step plus the whole prefill. "
                "With a budget of {budget_text} tokens a step carries only a chunk of "
                "{chunk} prompt tokens.",
                lambda p: _chunked(p).gap_unchunked),
        Mistake("decode_alone",
                "That is a decode step alone ({alone}). The chunk of {chunk} prompt tokens "
                "rides in the same step and adds its arithmetic.",
                lambda p: _chunked(p).decode_step),
        Mistake("prefill_over_steps",
                "That spreads the prefill evenly over the steps but forgets the decode "
                "tokens each step also carries, and their reads.",
                lambda p: _chunked(p).ttft_unchunked / _chunked(p).steps),
    ),
    defaults={"model": "llama-3-8b", "gpu": "H100 SXM", "prompt": 8192, "context": 8192,
              "batch": 32, "budget": 2048},
    sample=lambda rng: (lambda model: {
        "model": model, "gpu": rng.choice(["H100 SXM", "H200"]),
        "prompt": within_context(rng, model, [8192, 16384]),
        "context": within_context(rng, model, [2048, 8192]),
        "batch": rng.choice([16, 32]), "budget": rng.choice([1024, 2048])})(
            rng.choice(["llama-3-8b", "qwen3-8b"])),
    dimension="seconds", unit="ms", rtol=0.02,
)


# 15. Disaggregated prefill and decode: GPUs per pool

def _pd_rates(p: P) -> tuple[float, float]:
    """(prefill tokens/s, decode tokens/s) of one GPU on the roofline."""
    cfg = config(p)
    prefill = p["input"] / inference.model_prefill_time(cfg, p["input"], **_gpu(p))
    decode = inference.model_decode_speed(cfg, batch=p["batch"],
                                          context=p["input"] + p["output"], **_gpu(p))
    return prefill, decode.tokens_per_second


def _pd(p: P, *, swap: bool = False) -> float:
    prefill, decode = _pd_rates(p)
    pools = serving_techniques.disaggregated_gpus(
        request_rate=1, input_tokens=p["input"], output_tokens=p["output"],
        prefill_tokens_per_second=decode if swap else prefill,
        decode_tokens_per_second=prefill if swap else decode)
    return pools.ratio


def _pd_derived(p: P) -> dict[str, Any]:
    prefill, decode = _pd_rates(p)
    return {"name": wording.model_label(p["model"]), "in_text": wording.count(p["input"]),
            "out_text": wording.count(p["output"]), "prefill": wording.token_rate(prefill),
            "decode": wording.token_rate(decode),
            "pre_s": format_seconds(p["input"] / prefill),
            "dec_s": format_seconds(p["output"] / decode)}


disaggregation_ratio = core.NumericExercise(
    lesson=LESSON, number=15, title="Prefill GPUs per decode GPU",
    question=(
        "A service runs {name} with prefill and decode on separate {gpu}s. Requests carry "
        "{in_text} input and {out_text} output tokens. On the roofline a prefill GPU "
        "processes {prefill} of prompts; a decode GPU, with {batch} conversations per "
        "step, produces {decode}. How many prefill GPUs does the service need per decode "
        "GPU?"
    ),
    hints=(
        "Both pools serve the same requests per second. Work out the GPU-seconds one "
        "request needs in each pool.",
        "Prefill: input tokens ÷ prefill tokens/s. Decode: output tokens ÷ decode tokens/s. "
        "The ratio of the two is the ratio of the pools.",
    ),
    solution=(
        "One request takes {in_text} ÷ {prefill} = {pre_s} of a prefill GPU and {out_text} "
        "÷ {decode} = {dec_s} of a decode GPU, so the service needs **{answer}** of "
        "prefill per decode GPU (`serving_techniques.disaggregated_gpus`). Long prompts and "
        "short answers (retrieval, summaries) shift GPUs to prefill; long answers "
        "(reasoning) to decode."
    ),
    answer=_pd,
    derived=_pd_derived,
    mistakes=(
        mistakes.inverted_ratio(lambda p: 1 / _pd(p),
                                hint="That is decode GPUs per prefill GPU: the question asks the "
                                     "other way round."),
        Mistake("rates_swapped",
                "That divides each pool's tokens by the other pool's rate. Prompts go "
                "through prefill at {prefill}; output tokens through decode at {decode}.",
                lambda p: _pd(p, swap=True)),
        Mistake("tokens_only",
                "That compares the tokens alone. A prefill GPU processes far more tokens "
                "per second than a decode GPU: divide each by its pool's rate.",
                lambda p: p["input"] / p["output"]),
    ),
    defaults={"model": "llama-3-8b", "gpu": "H100 SXM", "input": 8192, "output": 512,
              "batch": 32},
    # the decode GPU holds each conversation's cache, input and output tokens
    sample=drawn_until(
        lambda rng: {"model": rng.choice(["llama-3-8b", "qwen3-8b", "llama-2-13b"]),
                     "gpu": rng.choice(["H100 SXM", "H200"]),
                     "input": rng.choice([2048, 8192]),
                     "output": rng.choice([256, 512, 2048]),
                     "batch": rng.choice([16, 32])},
        lambda p: conversations_fit(p["model"], p["gpu"], context=p["input"] + p["output"],
                                    batch=p["batch"])),
    dimension="count", unit="GPUs", extra_units=_PREFILL_GPUS, rtol=0.02, digits=3,
)


# 16. Speculative decoding: the speed-up with the draft's cost

def _spec(p: P, *, cost: bool = True) -> float:
    return serving_techniques.speculative_speedup(
        acceptance_rate=p["alpha"], draft_tokens=p["gamma"],
        draft_cost=p["cost"] if cost else 0)


def _spec_derived(p: P) -> dict[str, Any]:
    tokens = serving_techniques.expected_tokens_per_step(acceptance_rate=p["alpha"],
                                                         draft_tokens=p["gamma"])
    return {"alpha_text": wording.rounded_percent(p["alpha"]),
            "cost_text": wording.rounded_percent(p["cost"]),
            "tokens": core.format_number(tokens, 3),
            "denominator": core.format_number(p["gamma"] * p["cost"] + 1, 3),
            "best": serving_techniques.best_draft_length(acceptance_rate=p["alpha"],
                                                         draft_cost=p["cost"])}


speculative_speedup = core.NumericExercise(
    lesson=LESSON, number=16, title="What speculative decoding gains",
    question=(
        "A draft model proposes {gamma} tokens per step; the target accepts each with "
        "probability {alpha_text} until the first rejection, then adds one token of its "
        "own. A draft step costs {cost_text} of a target step, and the target checks all "
        "the proposals in the time of one step (decode is memory-bound). How many times "
        "faster than plain decoding is generation?"
    ),
    hints=(
        "Tokens per step: the accepted run plus the target's own token, "
        "1 + α + α² + … + α^γ = (1 − α^(γ+1)) ÷ (1 − α).",
        "Time per step: the target's step plus γ draft steps, (γ·c + 1) target steps.",
    ),
    solution=(
        "A step yields (1 − α^(γ+1)) ÷ (1 − α) = {tokens} tokens and costs "
        "{gamma} × {cost_text} + 1 = {denominator} target steps: **{answer}** "
        "(`serving_techniques.speculative_speedup`; Leviathan et al. 2023, Theorem 3.8). "
        "The best draft length here is {best}. At a batch where the target step is "
        "compute-bound, checking γ + 1 tokens per sequence costs up to γ + 1 times the "
        "arithmetic and the gain shrinks or turns into a loss "
        "(`serving_techniques.speculative_speedup_at_batch`)."
    ),
    answer=_spec,
    derived=_spec_derived,
    mistakes=(
        Mistake("draft_free",
                "That is the tokens per step, {tokens}: the draft's {gamma} steps cost "
                "time too, {gamma} × {cost_text} of a target step.",
                lambda p: _spec(p, cost=False)),
        Mistake("all_accepted",
                "That assumes every proposal is accepted. A rejection ends the run: the "
                "expected tokens are 1 + α + … + α^γ.",
                lambda p: (p["gamma"] + 1) / (p["gamma"] * p["cost"] + 1)),
        Mistake("linear_acceptance",
                "That counts γ·α accepted tokens, as if a rejection did not discard the "
                "proposals after it.",
                lambda p: (1 + p["gamma"] * p["alpha"]) / (p["gamma"] * p["cost"] + 1)),
    ),
    defaults={"alpha": 0.8, "gamma": 4, "cost": 0.05},
    sample=lambda rng: {"alpha": rng.choice([0.6, 0.7, 0.8, 0.9]),
                        "gamma": rng.choice([1, 3, 4, 5]),
                        "cost": rng.choice([0.02, 0.05, 0.1])},
    dimension="count", unit="×", extra_units=wording.TIMES, rtol=0.02, digits=3,
)
