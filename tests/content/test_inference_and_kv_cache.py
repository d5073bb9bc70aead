"""Lesson 6, *Inference: Prefill, Decode and the KV Cache*: every figure its prose states,
computed from the calculators; the serving calculator it adds
(``inference.max_concurrent_sequences``) and the lesson's own code; and the wiring of its
two notebooks. Its exercise bank's checks (published figures, defaults, drawn variants)
are in ``test_inference_and_kv_cache_exercises.py``.

Each claim is the text exactly as the lesson's markdown has it and the calculator calls
that must produce it (``tests/content/claims.py``), so a changed formula or an edited
sentence fails the claim that names it, and a number added to the prose without a claim
fails ``test_every_figure_is_claimed``. The lesson's running example is Llama-3-8B in
BF16 on an H100 SXM with 8,192-token conversations and 2 GB of working memory; its
inputs are the module's constants, the models' shapes come from ``gpulesson.transformer``
and the GPUs' figures from ``gpulesson.hardware``.
"""

from __future__ import annotations

import ast
import json
import re

import pytest

from gpulesson import (
    calculators,
    distributed,
    hardware,
    inference,
    memory,
    roofline,
    transformer,
    units,
)
from gpulesson.bench import sizes_for

from . import nbtools as nb
from .claims import claim_tests, claims
from .reference import A100, H100, gb, pct

SLUG = "inference_and_kv_cache"
NOTEBOOK = nb.notebook(SLUG)

PEAK = H100.dense("bf16")
MODELS = {name: transformer.preset(name) for name in ("llama-2-7b", "llama-3-8b",
                                                      "llama-3-70b")}
PARAMS = {name: transformer.param_count(cfg) for name, cfg in MODELS.items()}

# Inputs the lesson chooses
CONTEXT = 8192          # tokens per conversation
NEW_TOKENS = 512        # tokens generated in section 1
OVERHEAD = 2e9          # working memory beside weights and cache, bytes
SHORT_PROMPT = 2048     # the prompt of the units note and of section 2
LONG_BATCH = (8, 32768)  # section 3's long-context batch of Llama-3-70B
TARGET = 50.0           # tokens/s each user should see (section 7)
SHORT_CONTEXT, LONG_CONTEXT = 1024, 32768   # section 7's other curves
H100_7B_FP16 = memory.weight_bytes(7e9, precision="fp16")   # the "4.5 tokens/s" box


def _ms(seconds: float, digits: int = 1) -> str:
    return f"{seconds * 1e3:.{digits}f} ms"


def _kib(n_bytes: float) -> str:
    return units.format_bytes(n_bytes, binary=True, digits=0)


def _shape(name: str) -> dict[str, int]:
    cfg = MODELS[name]
    return {"layers": cfg.layers, "heads": cfg.heads, "head_dim": cfg.head_dim}


def _weights(name: str, precision: str = "bf16") -> float:
    return memory.weight_bytes(PARAMS[name], precision=precision)


def _worked() -> dict[str, float]:
    """Section 1's worked example, from the registry's ``inference`` calculator."""
    return calculators.compute("inference", model="llama-3-8b", prompt=CONTEXT,
                               new_tokens=NEW_TOKENS, batch=1, gpu="H100 SXM")


def _prefill(name: str, tokens: int) -> float:
    return inference.prefill_time(n_params=PARAMS[name], tokens=tokens, peak_flops=PEAK,
                                  bandwidth=H100.bandwidth, weight_bytes=_weights(name),
                                  **_shape(name))


def _weight_read(name: str = "llama-3-8b") -> float:
    return _weights(name) / H100.bandwidth


def _flat_prefill() -> str:
    """Up to which prompt the prefill costs one weight read: about the ridge point."""
    tokens = 1
    while _prefill("llama-3-8b", tokens + 1) == _weight_read():
        tokens += 1
    ridge = H100.ridge_point("bf16")
    return f"about {ridge:.0f}" if abs(tokens / ridge - 1) < 0.02 else f"{tokens}"


def _attention_share(name: str, tokens: int) -> float:
    """Attention's part of prefill FLOPs over the weight part."""
    linear = inference.prefill_flops(PARAMS[name], tokens)
    return inference.prefill_flops(PARAMS[name], tokens, **_shape(name)) / linear - 1


def _attention_of_prefill(name: str, tokens: int) -> float:
    """Attention's share of the whole prefill's FLOPs."""
    return 1 - 1 / (1 + _attention_share(name, tokens))


def _crossover(name: str) -> float:
    return inference.attention_crossover_tokens(PARAMS[name], **_shape(name))


def _kv(name: str, context: int = CONTEXT, batch: int = 1) -> float:
    return inference.kv_cache_bytes(MODELS[name], seq_len=context, batch=batch) if context \
        else 0


def _fit(name: str, **kw) -> int:
    return inference.max_concurrent_sequences(transformer.preset(name), context=CONTEXT,
                                              gpu_memory=H100.memory_bytes, overhead=OVERHEAD,
                                              **kw)


def _ceiling(name: str, *, kv: bool = True, batch: int = 1) -> float:
    return inference.decode_ceiling_tokens_per_second(
        weight_bytes=_weights(name), bandwidth=H100.bandwidth, batch=batch,
        kv_bytes_per_sequence=_kv(name) if kv else 0)


def _step(name: str, batch: int, context: int) -> float:
    """Section 7's roofline decode step on an H100, BF16 weights and cache."""
    return inference.decode_step_time(n_params=PARAMS[name], weight_bytes=_weights(name),
                                      batch=batch, kv_bytes_per_sequence=_kv(name, context),
                                      peak_flops=PEAK, bandwidth=H100.bandwidth)


def _fits_on_h100(name: str, batch: int, context: int) -> bool:
    need = memory.inference_memory(PARAMS[name], precision="bf16", overhead_bytes=OVERHEAD,
                                   kv_cache_bytes=_kv(name, context, batch))
    return memory.fits(need.total, H100.memory_bytes)


def _full(name: str, context: int) -> int:
    """The largest batch that fits on the H100 (section 7's crosses)."""
    return max(b for b in range(1, 1000) if _fits_on_h100(name, b, context))


def _per_user(name: str, batch: int, context: int) -> float:
    return 1 / _step(name, batch, context)


def _turn(gpu: hardware.GPUSpec, dtype: str = "bf16") -> float:
    return inference.decode_compute_bound_batch(
        peak_flops=gpu.dense(dtype), bandwidth=gpu.bandwidth,
        bytes_per_param=memory.precision_bytes(dtype))


def _kv_flops_per_byte(name: str) -> float:
    """Decode attention's FLOPs per byte of KV cache read, at the lesson's context."""
    attention = inference.decode_flops(PARAMS[name], 1, context_len=CONTEXT - 1,
                                       **_shape(name)) - inference.decode_flops(PARAMS[name], 1)
    return attention / _kv(name)


_WORDS = {2: "twice", 4: "four times", 8: "eight times", 9: "nine times", 20: "twenty times"}


def _times(ratio: float) -> str:
    return _WORDS.get(round(ratio), f"{ratio:.1f} times")


def _section_1() -> str:
    r = _worked()
    return (f"The prompt takes about {r['prefill_time'] * 1e3:.0f} ms: this is the pause before "
            "the first word (the {term}`time to first token`). Each later token takes at least "
            f"{_ms(r['step_time'])} (the {{term}}`time per output token`), which is "
            f"{r['step_time'] / (r['prefill_time'] / CONTEXT):.0f} times more than a prompt "
            "token cost.")


def _bound() -> str:
    r = _worked()
    read = _weight_read()
    return (f"Reading {r['weights'] / 1e9:.0f} GB of BF16 weights once takes "
            f"${r['weights'] / 1e9:.2f}\\ \\text{{GB}} / {H100.bandwidth / 1e12:.2f}\\ "
            f"\\text{{TB/s}} = {read * 1e3:.1f}$ ms. The prefill does "
            f"{r['prefill_flops'] / 1e12:.2f} TFLOP, which at {PEAK / 1e12:.1f} TFLOP/s takes "
            f"{r['prefill_time'] * 1e3:.0f} ms, {r['prefill_time'] / read:.0f} times longer")


def _units_note() -> str:
    work = inference.prefill_flops(PARAMS["llama-3-8b"], SHORT_PROMPT, **_shape("llama-3-8b"))
    return (f"the prefill of a {SHORT_PROMPT:,}-token prompt of Llama-3-8B is "
            f"{work / 1e12:.2f} TFLOP, and at {PEAK / 1e12:.1f} TFLOP/s it takes "
            f"{_ms(_prefill('llama-3-8b', SHORT_PROMPT))}")


def _cache_sizes() -> str:
    old, new = (inference.kv_cache_bytes_per_token(MODELS[n]) for n in ("llama-2-7b",
                                                                         "llama-3-8b"))
    cfg = MODELS["llama-3-8b"]
    return (f"Llama-2-7B keeps {_kib(old)} per token, Llama-3-8B {_kib(new)[:-4]} KiB: the newer "
            f"model is larger, yet its cache is {_times(old / new)} smaller, because its "
            f"{cfg.heads} query heads share {cfg.kv_heads} key/value heads. One "
            f"{CONTEXT:,}-token conversation holds {_kib(_kv('llama-2-7b'))[:-4]} GiB with "
            f"Llama-2-7B and {_kib(_kv('llama-3-8b'))[:-4]} GiB with Llama-3-8B.")


def _long_batch() -> str:
    batch, tokens = LONG_BATCH
    kv = _kv("llama-3-70b", tokens, batch)
    more = "more" if kv > H100.memory_bytes else "less"
    return (f"Llama-3-70B serving {batch} conversations of {tokens:,} tokens each keeps "
            f"{units.format_bytes(kv, binary=True, digits=0)} ({gb(kv, 1)}) of keys and "
            f"values: {more} than an H100's entire memory")


def _nine_times() -> str:
    ratio = PARAMS["llama-3-70b"] / PARAMS["llama-3-8b"]
    almost = "almost nine times" if 8.5 < ratio < 9 else f"{ratio:.1f} times"
    per = {n: inference.kv_cache_bytes_per_token(MODELS[n]) for n in ("llama-3-8b",
                                                                       "llama-3-70b")}
    return (f"Llama-3-70B has {almost} the parameters of Llama-3-8B, yet only "
            f"{per['llama-3-70b'] / per['llama-3-8b']:g} times the KV cache per token.")


def _nine_times_answer() -> str:
    small, large = MODELS["llama-3-8b"], MODELS["llama-3-70b"]
    assert small.kv_heads == large.kv_heads and small.head_dim == large.head_dim
    per = [inference.kv_cache_bytes_per_token(c) for c in (large, small)]
    return (f"Both models have {large.kv_heads} KV heads of size {large.head_dim}; the 70B model "
            f"has {large.layers} layers instead of {small.layers}, hence "
            f"${large.layers}/{small.layers} = {large.layers / small.layers:g}$ times the cache "
            f"({_kib(per[0])} against {_kib(per[1])} per token). Its extra width went into more "
            f"query heads ({large.heads} instead of {small.heads})")


def _fit_worked() -> str:
    left = memory.headroom(_weights("llama-3-8b") + OVERHEAD, H100.memory_bytes)
    return (f"Llama-3-8B's weights take {gb(_weights('llama-3-8b'), 2)}, which with "
            f"{OVERHEAD / 1e9:.0f} GB of overhead leaves {gb(left, 2)}; each conversation "
            f"takes {gb(_kv('llama-3-8b'), 3)}, so {_fit('llama-3-8b')} fit. Llama-2-7B's "
            f"weights are smaller, but its conversations take {gb(_kv('llama-2-7b'), 3)} each: "
            f"only {_fit('llama-2-7b')} fit.")


def _gqa_and_fp8() -> str:
    gqa = _fit("llama-3-8b") / _fit("llama-2-7b")
    fp8 = _fit("llama-3-8b", kv_dtype="fp8") / _fit("llama-3-8b")
    first = "nearly quadruples" if 3.5 < gqa < 4 else f"multiplies by {gqa:.1f}"
    second = "roughly doubles" if 1.8 < fp8 < 2.2 else f"multiplies by {fp8:.1f}"
    return (f"Grouped-query attention {first} the number of long conversations a GPU can hold, "
            f"and storing the cache in FP8 {second} it again.")


def _seventy_b() -> str:
    fp8 = calculators.compute("will_it_fit", model="llama-3-70b", precision="fp8",
                              context=CONTEXT, batch=1, gpu="H100 SXM")
    return (f"Llama-3-70B's weights alone take {gb(_weights('llama-3-70b'), 0)} in BF16, more "
            f"than one H100. Quantised to FP8 they take {gb(fp8['weights'], 2)}, which leaves "
            f"room for just {_fit('llama-3-70b', precision='fp8')} conversations of "
            f"{CONTEXT:,} tokens, each holding {gb(fp8['kv_cache'], 2)} of cache.")


def _ceilings() -> str:
    new, old = "llama-3-8b", "llama-2-7b"
    return (f"for one conversation of {CONTEXT:,} tokens on an H100: Llama-3-8B decodes at most "
            f"{_ceiling(new):.1f} tokens/s ({_ceiling(new, kv=False):.1f} if the cache were "
            f"free); Llama-2-7B at most {_ceiling(old):.1f} ({_ceiling(old, kv=False):.1f} "
            "without the cache). The KV reads cost as much as the weight reads once about "
            f"{_weights(new) / _kv(new):.0f} Llama-3-8B conversations share a step, but only "
            f"{_weights(old) / _kv(old):.1f} Llama-2-7B ones.")


def _embedding_lookup() -> str:
    """The box "What W counts": the untied input embedding is looked up, not streamed."""
    new, old = "llama-3-8b", "llama-2-7b"

    def looked_up(name: str) -> tuple[float, float]:
        read = memory.weight_bytes(transformer.active_params(MODELS[name], input_embedding=False),
                                   precision="bf16")
        ceiling = inference.decode_ceiling_tokens_per_second(
            weight_bytes=read, bandwidth=H100.bandwidth, kv_bytes_per_sequence=_kv(name))
        return read, ceiling

    read, ceiling = looked_up(new)
    gain = {n: looked_up(n)[1] / _ceiling(n) - 1 for n in (new, old)}
    return (f"{gb(_weights(new), 2)} for Llama-3-8B in BF16. One of its matrices is not "
            "streamed. The input embedding is a lookup, so a step fetches only the $B$ rows, "
            f"of {MODELS[new].vocab:,}, that the batch's tokens select. Leaving it out makes "
            f"$W$ {gb(read, 2)} and the ceiling at {CONTEXT:,} tokens {ceiling:.1f} tokens/s "
            f"instead of {_ceiling(new):.1f} (+{pct(gain[new], 1)}); Llama-2-7B's smaller "
            f"vocabulary of {MODELS[old].vocab:,} moves it +{pct(gain[old], 1)}.")


def _card_counts() -> str:
    """The same box: which convention the model cards' active counts follow. gpt-oss's
    card (OpenAI 2025, Table 1) gives 5.13B for gpt-oss-120b; DeepSeek-V3's report says
    "37B activated" (DeepSeek-AI 2024, section 1) without saying what it counts."""
    gpt_oss, v3 = (transformer.preset(n) for n in ("gpt-oss-120b", "deepseek-v3"))
    assert not gpt_oss.tied_embeddings and not v3.tied_embeddings, "the output layer is apart"
    card = transformer.active_params(gpt_oss, input_embedding=False) / 1e9
    without, with_embedding = (transformer.active_params(v3, input_embedding=e) / 1e9
                               for e in (False, True))
    fits = ("fits the same count" if round(without) == 37 != round(with_embedding)
            else "does not settle the count")
    return (f"gpt-oss-120b's {card:.2f}B active parameters are its total less the experts a "
            "token skips and the input embedding, with the output layer counted "
            "{cite:p}`openai2025gptoss`; DeepSeek-V3's \"37B activated\" "
            f"{fits} ({without:.1f}B, against {with_embedding:.1f}B with the embedding)")


def _qwen3_next() -> transformer.TransformerConfig:
    """Qwen3-Next-80B-A3B as the folded cell of "a cache that stops growing" builds it:
    the sizes of its config.json (tests/data/hf_configs, whose exact parameter count
    tests/unit/test_transformer_hf.py checks)."""
    from pathlib import Path
    path = (Path(__file__).resolve().parents[1] / "data" / "hf_configs"
            / "qwen3_next__Qwen3-Next-80B-A3B-Instruct.json")
    return transformer.from_hf_config(path)


def _hybrid_layers() -> str:
    cfg = _qwen3_next()
    return f"keeps full attention in {cfg.global_layers} of its {cfg.layers} layers"


def _hybrid_state() -> str:
    """The box "a cache that stops growing": the fixed Gated DeltaNet state of one
    conversation (inference.recurrent_state_bytes, vLLM's shapes in BF16) beside the KV of
    the full-attention layers, at 4,096 and 131,072 tokens."""
    cfg = _qwen3_next()
    state = inference.recurrent_state_bytes(cfg)
    per_token = inference.kv_cache_bytes_per_token(cfg)

    def share(tokens: int, digits: int) -> str:
        return pct(state / (state + inference.kv_cache_bytes(cfg, seq_len=tokens)), digits)
    return (f"in the other {cfg.recurrent_layers}, each holding a short convolution window "
            f"and one {cfg.linear_value_head_dim} × {cfg.linear_key_head_dim} matrix per "
            "head. A conversation of $L$ tokens holds "
            f"{units.format_bytes(state, binary=True)} of state plus $L$ × "
            f"{units.format_bytes(per_token, binary=True)} of KV: the state weighs as much as "
            f"{state / per_token:,.0f} tokens of cache, {share(4096, 0)} of a 4,096-token "
            f"conversation and {share(131072, 1)} of a 131,072-token one.")


def _vllm_window() -> str:
    """The box "Windows in numbers": what vLLM V1 budgets for Mistral-7B v0.1's windowed
    layers (``planning.kv_budget``, its defaults: ``vllm serve``'s step of tokens, 90 %
    of the memory), against the same pool counted at full length (the V0 rule)."""
    import inspect

    from gpulesson.planning import serving

    cfg = transformer.preset("mistral-7b")
    groups = serving.kv_cache_groups(cfg)
    assert (groups.full, groups.local) == (0, 1), "every layer of Mistral-7B v0.1 slides"
    step = groups.window_tokens - (cfg.sliding_window - 1)

    def room(tokens: int, engine: str = "V1") -> int:
        return int(serving.kv_budget(cfg, "H100 SXM", max_model_len=tokens,
                                     engine=engine).max_concurrency)

    util = inspect.signature(serving.kv_budget).parameters["gpu_memory_utilization"].default
    same = "as without the window" if room(CONTEXT) == room(CONTEXT, "V0") else \
        f"against {room(CONTEXT, 'V0')} without the window"
    return (f"{cfg.sliding_window - 1:,} + {step:,} tokens with `vllm serve`'s defaults, "
            "since a chunk of new tokens may straddle the window "
            f"{{cite:p}}`vllm2025hybridkv`. At {CONTEXT:,} tokens that is the whole "
            "conversation, so the concurrency it reports shows no saving: room for "
            f"{room(CONTEXT)} conversations on an H100 at {pct(util, 0)} of its memory "
            f"(`planning.kv_budget`), {same}, not {_fit('mistral-7b')}. The window counts "
            f"beyond {groups.window_tokens:,} tokens: {room(LONG_CONTEXT)} conversations of "
            f"{LONG_CONTEXT:,} tokens instead of {room(LONG_CONTEXT, 'V0')}.")


def _gpu_full() -> str:
    new, old = "llama-3-8b", "llama-2-7b"
    total = {n: _ceiling(n, batch=_fit(n)) for n in (new, old)}
    each = {n: total[n] / _fit(n) for n in (new, old)}
    either = (f"about {each[new]:.0f} tokens/s with *either* model"
              if round(each[new]) == round(each[old]) else f"{each[new]:.0f} and {each[old]:.0f}")
    return (f"Fill the H100 with conversations ({_fit(new)} for Llama-3-8B, {_fit(old)} for "
            f"Llama-2-7B): Llama-3-8B then decodes at most {total[new]:,.0f} tokens/s in all, "
            f"Llama-2-7B {total[old]:,.0f}. Each user gets {either}")


def _kv_against_arithmetic() -> str:
    read = _kv("llama-3-8b") / H100.bandwidth
    arithmetic = inference.decode_flops(PARAMS["llama-3-8b"], 1) / PEAK
    return (f"For Llama-3-8B at {CONTEXT:,} tokens, reading one conversation's cache takes "
            f"{read * 1e6:.0f} µs on an H100, while its share of the weight arithmetic takes "
            f"{arithmetic * 1e6:.0f} µs. Every conversation added to a batch therefore costs "
            f"{_times(read / arithmetic)} more in reading than in arithmetic: at long contexts, "
            "decode stays memory-bound at *any* batch, and memory fills up "
            f"({_fit('llama-3-8b')} conversations) long before batch {_turn(H100):.0f}.")


def _kv_intensity() -> str:
    cfg = MODELS["llama-3-8b"]
    return (f"A decode step of Llama-3-8B spends {_kv_flops_per_byte('llama-3-8b'):.0f} FLOPs "
            f"on each byte of KV cache it reads ({cfg.heads // cfg.kv_heads} query heads share "
            f"each KV head), Llama-2-7B only {_kv_flops_per_byte('llama-2-7b'):.0f}: far below "
            f"the ridge point of {H100.ridge_point('bf16'):.0f}.")


def _latent_intensity() -> tuple[str, str]:
    """The box on latent attention: decode_attention_flops (absorbed, as vLLM runs it) over
    decode_kv_read_bytes, on one GPU and, with 8-way tensor parallelism, per GPU."""
    cfg, tp = transformer.preset("deepseek-v3"), 8
    d_k, d_v = cfg.kv_lora_rank + cfg.qk_rope_head_dim, cfg.kv_lora_rank
    per_key = inference.decode_attention_flops(cfg, context_len=CONTEXT - 1) / (
        cfg.global_layers * CONTEXT)
    assert per_key == 2 * cfg.heads * (d_k + d_v)

    def per_byte(kv_bytes: float) -> float:
        return (inference.decode_attention_flops(cfg, context_len=CONTEXT - 1)
                / inference.decode_kv_read_bytes(cfg, context=CONTEXT,
                                                 bytes_per_element=kv_bytes))
    one_gpu = (f"Each of DeepSeek-V3's {cfg.heads} heads then spends 2 × ({d_k} + {d_v}) "
               f"FLOPs on a cached token, and a decode step does {per_byte(2):.0f} FLOPs on "
               f"each byte of a BF16 cache it reads, {per_byte(1):.0f} on an FP8 one: near or "
               "past the ridge point.")
    split = (f"Tensor parallelism over {tp} GPUs copies the latent onto each GPU for only "
             f"{cfg.heads // tp} heads, and the step is back to {per_byte(2) / tp:.0f} FLOPs "
             "a byte of BF16 cache.")
    # FlashMLA's measured roofs on an H800 (its README, deepseek2025flashmla): the ridge a
    # real kernel sees, against which the BF16 cache's intensity is compared
    ridge = FLASHMLA_TFLOPS * 1e12 / (FLASHMLA_GBPS * 1e9)
    measured = (f"a ridge of {ridge:.0f} FLOPs a byte, "
                f"{'below' if ridge < per_byte(2) else 'above'} the BF16 cache's "
                f"{per_byte(2):.0f}")
    return one_gpu, split, measured


#: FlashMLA's README (DeepSeek-AI 2025): dense MLA decoding on an H800 SXM5, up to 660
#: TFLOPS compute-bound and up to 3000 GB/s memory-bound.
FLASHMLA_TFLOPS, FLASHMLA_GBPS = 660, 3000


def _no_cache_curve() -> str:
    first, last = (_per_user("llama-3-8b", b, 0) for b in (1, round(_turn(H100))))
    assert round(first) == round(last), "each user no longer keeps the same speed"
    return (f"until the arithmetic catches up at batch {_turn(H100):.0f} (the thin vertical "
            f"line), and until then each user keeps about {first:.0f} tokens/s.")


def _short_context_curve() -> str:
    name, turn = "llama-3-8b", round(_turn(H100))
    full = _full(name, SHORT_CONTEXT)
    bound = ("before the step ever turns compute-bound"
             if _step(name, full, SHORT_CONTEXT) > inference.decode_flops(
                 PARAMS[name], 1, batch=full) / PEAK else "after the step turns compute-bound")
    speeds = [_per_user(name, b, SHORT_CONTEXT) for b in (1, _fit(name), turn)]
    return (f"With {SHORT_CONTEXT:,} tokens each, throughput still grows almost in proportion "
            f"for the first few dozen conversations, but per-user speed slides from "
            f"{speeds[0]:.0f} tokens/s to {speeds[1]:.0f} at batch {_fit(name)} and to "
            f"{speeds[2]:.0f} at batch {turn}, and {full} conversations fill the memory {bound}")


def _long_context_curve() -> str:
    batch = _fit("llama-3-8b")
    steeper = _per_user("llama-3-8b", batch, CONTEXT) < _per_user("llama-3-8b", batch,
                                                                   SHORT_CONTEXT)
    return (f"With {CONTEXT:,} tokens the slide is {'steeper' if steeper else 'gentler'}; "
            f"at {LONG_CONTEXT:,} tokens only {_full('llama-3-8b', LONG_CONTEXT)} conversations "
            f"fit, and Llama-2-7B (dashed) is full at {_full('llama-2-7b', CONTEXT)}.")


CURVES = (("llama-3-8b", SHORT_CONTEXT), ("llama-3-8b", CONTEXT), ("llama-3-8b", LONG_CONTEXT),
          ("llama-2-7b", CONTEXT))


def _crosses() -> str:
    speeds = [_per_user(n, _full(n, c), c) for n, c in CURVES]
    return (f"a full GPU gives each user {min(speeds):.0f} to {max(speeds):.0f} tokens/s. A step "
            f"then reads nearly the whole memory, {gb(H100.memory_bytes - OVERHEAD, 0)} at "
            f"{units.format_bandwidth(H100.bandwidth)}.")


def _target() -> str:
    name = "llama-3-8b"
    best = max(b for b in range(1, 1024) if _fits_on_h100(name, b, CONTEXT)
               and _per_user(name, b, CONTEXT) >= TARGET)
    return (f"{best} conversations at {TARGET:.0f} tokens/s each give the GPU "
            f"{best / _step(name, best, CONTEXT):,.0f} tokens/s; relaxing the target to "
            f"{_per_user(name, _fit(name), CONTEXT):.0f} tokens/s would allow the {_fit(name)} "
            "conversations that fit.")


def _sizes() -> str:
    cpu, gpu = (sizes_for(kind, "matvec")[-1] for kind in ("cpu", "gpu"))
    return f'`sizes_for(dev, "matvec")` ({cpu:,} on a CPU, {gpu:,} on a GPU)'


def _fp32_h100() -> str:
    return (f"({H100.dense('fp32') / 1e12:.1f} TFLOP/s on CUDA cores, "
            f"{units.format_bandwidth(H100.bandwidth)})")


def _fp32_answer() -> str:
    return (f"On an H100 in FP32 the same formula gives a batch of {_turn(H100, 'fp32'):.0f}; "
            f"with 2-byte weights on the BF16 Tensor Cores, {_turn(H100):.0f}.")


def _pcie_box() -> str:
    pcie = hardware.gpu("H100 PCIe").interconnect_bandwidth / 2    # PCIe 5.0 x16, each way
    low, high = (inference.decode_ceiling_tokens_per_second(weight_bytes=H100_7B_FP16,
                                                            bandwidth=bw)
                 for bw in (pcie, H100.bandwidth))
    return (f"the ceiling ranges from {low:.1f} tokens/s with the weights streamed over PCIe 5.0 "
            f"to {high:.0f} tokens/s from an H100's HBM")


def _kvc(name: str, seq_len: int) -> dict[str, float]:
    """The registry's KV-cache calculator, one BF16 conversation."""
    return calculators.compute("kv_cache", model=name, seq_len=seq_len, batch=1)


def _contexts() -> str:
    c = {name: f"{transformer.preset(name).context:,}" for name in (
        "llama-3-8b", "gemma-2-9b", "mistral-7b", "gpt-oss-120b", "deepseek-v3")}
    same = {1: c["llama-3-8b"]}[len({c["llama-3-8b"], c["gemma-2-9b"]})]
    return (f"({same} tokens for Llama-3-8B and Gemma 2, {c['mistral-7b']} for Mistral-7B v0.1, "
            f"{c['gpt-oss-120b']} for gpt-oss, {c['deepseek-v3']} for DeepSeek-V3)")


def _mixtral_turn() -> float:
    return inference.model_compute_bound_batch(transformer.preset("mixtral-8x7b"),
                                               peak_flops=PEAK, bandwidth=H100.bandwidth)


def _mixtral_read(batch: int) -> float:
    return inference.decode_weight_bytes(transformer.preset("mixtral-8x7b"), batch=batch)


# Section 9: the serving calculators on the running example
HIT = 75                      # percent of each prompt found in the prefix cache
BUDGET, DECODING = 2048, 32   # chunked prefill: tokens per step, conversations decoding
SMALL_BUDGET = 256
SPEC = {"acceptance_rate": 80, "draft_tokens": 4, "draft_cost": 5}   # percent, tokens
SHORT_SPEC_BATCH, SHORT_SPEC_CONTEXT = 1024, 128


def _serving(name: str, **inputs) -> dict[str, float]:
    return calculators.compute(name, model="llama-3-8b", gpu="H100 SXM", **inputs)


def _prefix(hit: float = HIT) -> dict[str, float]:
    return _serving("prefix_caching", prompt=CONTEXT, hit_rate=hit)


def _chunks(budget: int = BUDGET) -> dict[str, float]:
    return _serving("chunked_prefill", prompt=CONTEXT, token_budget=budget,
                    decode_batch=DECODING, context=CONTEXT)


def _pools() -> dict[str, float]:
    return _serving("disaggregation", prompt=CONTEXT, new_tokens=NEW_TOKENS,
                    decode_batch=DECODING)


def _spec(batch: int = 1, context: int = CONTEXT) -> dict[str, float]:
    return _serving("speculative_decoding", batch=batch, context=context, **SPEC)


def _serving_worked() -> str:
    p, c, d, s = _prefix(), _chunks(), _pools(), _spec()
    return (f"A prefix-cache hit of {HIT} % cuts the wait for the first token from "
            f"{p['ttft_without'] * 1e3:.0f} ms to {p['ttft'] * 1e3:.0f} ms. Chunks of {BUDGET:,} "
            f"tokens cap the gap between two tokens of {DECODING} conversations decoding at "
            f"{CONTEXT:,} tokens of context at {c['gap_chunked'] * 1e3:.0f} ms, against "
            f"{c['gap_unchunked'] * 1e3:.0f} ms when the newcomer's prompt runs as one step; the "
            f"newcomer pays, {c['ttft_chunked'] * 1e3:.0f} ms to its first token instead of "
            f"{c['ttft_unchunked'] * 1e3:.0f}. On separate GPUs one request takes "
            f"{CONTEXT / d['prefill_rate']:.2f} s of a prefill GPU and "
            f"{NEW_TOKENS / d['decode_rate']:.2f} s of a decode GPU decoding {DECODING} "
            f"conversations: {d['ratio']:.2f} prefill GPUs per decode GPU. A draft of "
            f"{SPEC['draft_tokens']} tokens accepted {SPEC['acceptance_rate']} % of the time "
            f"yields {s['tokens_per_step']:.2f} tokens per step; at a cost of "
            f"{SPEC['draft_cost']} % of a step per draft token, decoding runs "
            f"{s['speedup']:.2f} times faster.")


def _deepseek_pools() -> str:
    from gpulesson import serving_techniques

    pools = serving_techniques.disaggregated_gpus(
        request_rate=1 / 86400, input_tokens=608e9, output_tokens=168e9,
        prefill_tokens_per_second=73.7e3, decode_tokens_per_second=14.8e3)
    return (f"need {pools.prefill_gpus:.1f} prefill and {pools.decode_gpus:.1f} decode nodes, "
            f"{pools.prefill_gpus + pools.decode_gpus:.1f} in all")


def _usable() -> str:
    usable = H100.usable_memory()
    fit = {n: inference.max_concurrent_sequences(MODELS[n], context=CONTEXT,
                                                 gpu_memory=usable, overhead=OVERHEAD)
           for n in ("llama-3-8b", "llama-2-7b")}
    llama2 = (f"stays at {fit['llama-2-7b']}" if fit["llama-2-7b"] == _fit("llama-2-7b")
              else f"goes from {_fit('llama-2-7b')} to {fit['llama-2-7b']}")
    import inspect

    from gpulesson.planning import serving

    # a serving engine budgets its own share: vLLM's gpu_memory_utilization default
    util = inspect.signature(serving.kv_budget).parameters["gpu_memory_utilization"].default
    return (f"`hardware.gpu(\"H100 SXM\").usable_memory()` is {gb(usable, 1)}; a serving "
            f"engine sets its own share, such as vLLM's default {pct(util, 0)} (the box "
            f"*Windows in numbers*). With {gb(usable, 1)} and "
            f"the same {OVERHEAD / 1e9:.0f} GB, {fit['llama-3-8b']} conversations of Llama-3-8B "
            f"fit instead of {_fit('llama-3-8b')}, and Llama-2-7B's count {llama2}")


def _mtp() -> str:
    from gpulesson import serving_techniques

    low, high = (serving_techniques.expected_tokens_per_step(acceptance_rate=a, draft_tokens=1)
                 for a in (0.85, 0.90))
    return f"$1 + \\alpha$ gives {low:.2f} to {high:.2f} tokens per step"


def _expert_batch() -> str:
    ds = transformer.preset("deepseek-v3")
    b = inference.expert_compute_bound_batch(peak_flops=H100.dense("fp8"),
                                             bandwidth=H100.bandwidth, bytes_per_param=1,
                                             experts=ds.experts,
                                             experts_per_token=ds.experts_per_token)
    return (f"about {round(b, -1):,.0f} tokens for DeepSeek-V3 ({ds.experts} experts, "
            f"{ds.experts_per_token} per token) on an H100 in FP8")


CLAIMS = claims(
    # What you'll learn, the running example
    lambda: "NVIDIA H100 SXM GPUs "
     f"({gb(H100.memory_bytes, 0)}, {units.format_bandwidth(H100.bandwidth)})",
    # 1. Two phases
    lambda: f"an {CONTEXT:,}-token prompt, "
     f"then {NEW_TOKENS} generated tokens",
    _section_1,
    _bound,
    lambda: "A decode step for one conversation does only "
     f"{inference.decode_flops(PARAMS['llama-3-8b'], 1) / 1e9:.0f} GFLOP in the same "
     f"{_ms(_weight_read())} of reading",
    lambda: "the H100's {term}`ridge "
     f"point` of {H100.ridge_point('bf16'):.0f} FLOP per byte",
    lambda: f"up to {_flat_prefill()} prompt tokens, the prefill costs the same "
     f"{_ms(_weight_read())} whatever its length",
    lambda: f'"{_worked()["prefill_flops"] / 1e12:.2f} TFLOP" is a *count* of operations; '
     f'"{units.format_flop_rate(PEAK)}" is a *rate*.',
    _units_note,
    lambda: "A prompt token costs "
     f"{_worked()['prefill_time'] / CONTEXT * 1e6:.1f} µs and a generated token "
     f"{_ms(_worked()['step_time'])}",
    lambda: f"({NEW_TOKENS} "
     f"tokens × {_ms(_worked()['step_time'])} is {NEW_TOKENS * _worked()['step_time']:.1f} s, "
     f"against {_worked()['prefill_time']:.2f} s of prefill)",
    # 2. Does prefill grow with the square of the prompt?
    lambda: f"For Llama-2-7B, $T^\\ast$ is {_crossover('llama-2-7b'):,.0f} tokens; for "
     f"Llama-3-70B, {_crossover('llama-3-70b'):,.0f}. At a {SHORT_PROMPT:,}-token prompt, "
     f"attention is {pct(_attention_of_prefill('llama-2-7b', SHORT_PROMPT), 1)} of "
     "Llama-2-7B's prefill FLOPs.",
    lambda: "attention is "
     f"{pct(_attention_of_prefill('llama-2-7b', SHORT_PROMPT), 1)} of a "
     f"{SHORT_PROMPT:,}-token prefill of Llama-2-7B. The square takes over only beyond about "
     f"{round(_crossover('llama-2-7b'), -3):,.0f} tokens for Llama-2-7B and "
     f"{round(_crossover('llama-3-70b'), -3):,.0f} for Llama-3-70B.",
    # 3. The KV cache
    lambda: "Llama-3-8B has "
     f"{MODELS['llama-3-8b'].heads} query heads and {MODELS['llama-3-8b'].kv_heads} KV heads",
    _cache_sizes,
    lambda: ", ".join(
       f"{_times(MODELS[n].heads / MODELS[n].kv_heads)} for {transformer.model_label(n)}"
       for n in ("llama-3-8b", "llama-3-70b")),
    _long_batch,
    _nine_times,
    _nine_times_answer,
    # 4. How many conversations fit?
    lambda: f"How many "
     f"{CONTEXT:,}-token conversations can one {gb(H100.memory_bytes, 0)} H100 keep",
    _fit_worked,
    _gqa_and_fp8,
    _seventy_b,
    # 5. The bandwidth ceiling
    _ceilings,
    _embedding_lookup,
    _card_counts,
    _gpu_full,
    # 6. Batching
    lambda: "the GPU's ridge point: "
     f"{_turn(H100):.0f} on an H100 SXM, {_turn(A100):.0f} on an A100 80GB.",
    _kv_against_arithmetic,
    _kv_intensity,
    lambda: f"Decode attention on an {CONTEXT:,}-token context runs at about "
     f"{_kv_flops_per_byte('llama-3-8b'):.0f} FLOP per byte",
    lambda: _latent_intensity()[0],
    lambda: _latent_intensity()[1],
    lambda: _latent_intensity()[2],
    # 7. Latency against throughput
    _no_cache_curve,
    _short_context_curve,
    _long_context_curve,
    _crosses,
    _target,
    lambda: f"an {CONTEXT:,}-token "
     f"prompt takes {_worked()['prefill_time'] * 1e3:.0f} ms, which would stall",
    # 8. The measurement
    _sizes,
    lambda: "H100, with "
     f"BF16 Tensor Cores, that bend comes at a batch of {_turn(H100):.0f};",
    _fp32_h100,
    _fp32_answer,
    # 9. What this model leaves out
    _pcie_box,
    # Exercises, key takeaways
    lambda: r"$T^\ast = N/(2LHQ)$, "
     f"{_crossover('llama-2-7b'):,.0f} tokens for Llama-2-7B",
    lambda: f"{_fit('llama-3-8b')} "
     f"against {_fit('llama-2-7b')} conversations of {CONTEXT // 1024}K tokens on one H100",
    lambda: f"({_turn(H100):.0f} on an H100 in BF16)",
    # 3b. Latent attention and sliding windows
    lambda: '"Longest" is each model\'s configured context ' + _contexts(),
    # review of 2026-12-07 (lessons 6-10, F12): the MHA column keeps the window
    lambda: (lambda m: "Mistral-7B v0.1's MHA cache, still capped at "
             f"{m.sliding_window:,} tokens, comes out below its uncapped GQA cache"
             if _kvc("mistral-7b", m.context)["total_mha"]
             < _kvc("mistral-7b", m.context)["total_uncapped"] else "?")(
                 transformer.preset("mistral-7b")),
    lambda: "DeepSeek-V3 keeps "
     f"{units.format_bytes(_kvc('deepseek-v3', 8192)['total'], binary=True, digits=0)} per "
     "8,192-token conversation, "
     f"{_kvc('deepseek-v3', 8192)['total_mha'] / _kvc('deepseek-v3', 8192)['total']:.0f} "
     "times less than multi-head attention",
    lambda: (lambda m: f"Mistral-7B v0.1's window caps every layer at {m.sliding_window:,} "
             "tokens: its cache stays at "
             f"{units.format_bytes(_kvc('mistral-7b', m.context)['total'], binary=True, digits=0)}"
             " however long the conversation, "
             + {8: "an eighth"}[round(_kvc("mistral-7b", m.context)["total_uncapped"]
                                      / _kvc("mistral-7b", m.context)["total"])]
             + f" of the uncapped cache at {m.context:,} tokens, so "
             f"{_fit('mistral-7b')} of its 8K conversations fit on an H100 beside the "
             f"weights, against {_fit('llama-3-8b')} for Llama-3-8B")(
                 transformer.preset("mistral-7b")),
    _vllm_window,
    _hybrid_layers,
    _hybrid_state,
    # 6b. A mixture of experts
    lambda: "At batch 1 Mixtral 8x7B reads its "
     f"{transformer.active_params(transformer.preset('mixtral-8x7b')) / 1e9:.1f}B active "
     f"parameters, {gb(_mixtral_read(1), 1)}",
    lambda: "by batch 16 it reads "
     f"{inference.expected_experts_used(experts=8, experts_per_token=2, tokens=16):.2f} of its "
     f"8 experts per layer, {gb(_mixtral_read(16), 1)}, nearly the whole "
     f"{gb(_mixtral_read(10_000), 1)}",
    lambda: "the arithmetic catches up with the reads at batch "
     f"{_mixtral_turn():,.0f}, not {_turn(H100):.0f}",
    # 9. Serving in 2026
    _serving_worked,
    lambda: "With all but the last token cached, the first token takes "
     f"{_ms(_prefix(100)['ttft'], 2)}",
    lambda: (lambda p: f"with {p['cached_tokens']:,} of their {CONTEXT:,} "
             f"tokens one shared prefix, {p['fit_shared']} conversations "
             f"fit on an H100 instead of {p['fit_without']}.")(_prefix()),
    lambda: (lambda c: f"with a budget of {SMALL_BUDGET} tokens the longest gap is the decode "
             f"step {'alone' if c['gap_chunked'] == c['decode_step'] else 'and more'}, "
             f"{_ms(c['gap_chunked'])}, but the newcomer's prompt then takes {c['steps']} "
             f"steps, {c['ttft_chunked'] * 1e3:.0f} ms to its first token")(
                 _chunks(SMALL_BUDGET)),
    # the KV transfer at the rate a 400 Gb/s port achieves (lesson 7), and at its line rate
    lambda: (lambda line, got: f"{gb(_kv('llama-3-8b'), 2)} for an {CONTEXT:,}-token prompt of "
             f"Llama-3-8B, {_kv('llama-3-8b') / got * 1e3:.0f} ms at the {got / 1e9:.0f} GB/s "
             f"a {line * 8 / 1e9:.0f} Gb/s network port achieves "
             f"({_kv('llama-3-8b') / line * 1e3:.0f} ms at its line rate)")(
                 H100.scaleout_bandwidth,
                 distributed.achievable_bandwidth(H100.scaleout_bandwidth, "network")),
    _deepseek_pools,
    lambda: "here the best is "
     f"{_spec()['best_gamma']} drafted tokens, {_spec()['best_speedup']:.2f} times",
    _mtp,
    lambda: f"with the {_fit('llama-3-8b')} conversations that fit at {CONTEXT:,} "
     f"tokens, speculation still runs {_spec(_fit('llama-3-8b'))['speedup_at_batch']:.2f} "
     "times faster",
    lambda: f"at {SHORT_SPEC_BATCH:,} conversations of {SHORT_SPEC_CONTEXT} tokens, it costs "
     f"{SPEC['draft_tokens'] + 1} times the arithmetic, and speculation makes decoding "
     + (lambda x: f"{'slower' if x < 1 else 'faster'}, {x:.2f} times the speed")(
        _spec(SHORT_SPEC_BATCH, SHORT_SPEC_CONTEXT)['speedup_at_batch']),
    # section 4's note on the three memory figures
    lambda: "what the driver reports "
     f"({gb(H100.reported_memory_bytes, 1)} on an H100 SXM)",
    _usable,
    # 6b: experts
    _expert_batch,
    # the current generation beside the baseline
    lambda: (lambda b, g, m: f"a B300 reads {b.bandwidth / 1e12:g} TB/s and a GB300 or an "
             f"MI355X {({1: m.bandwidth}[len({g.bandwidth, m.bandwidth})]) / 1e12:g}"
             f" TB/s, {b.bandwidth / H100.bandwidth:.1f} to "
             f"{m.bandwidth / H100.bandwidth:.1f} times an H100")(
       hardware.gpu("B300"), hardware.gpu("GB300 NVL72"), hardware.gpu("MI355X")),
    lambda: "to "
     f"{_turn(hardware.gpu('B300')):.0f} for a B300 and {_turn(hardware.gpu('MI355X')):.0f} "
     "for an MI355X",
    # the H200's peak: the same GH100 rate as the H100's, from another NVIDIA document
    lambda: (lambda h200: f"its {h200.dense('bf16') / 1e12:.1f} TFLOP/s against the H100's "
             f"{H100.dense('bf16') / 1e12:.1f} is the same rate, the H200 datasheet's\nsparse "
             f"{h200.sparse_flops['bf16'] / 1e12:,.0f} halved"
             if h200.dense("bf16") == h200.sparse_flops["bf16"] / 2 else "?")(
       hardware.gpu("H200")),
)

NOT_FIGURES = (
    # sections 3b and 6b: what the configurations say (names and the assumed routing)
    "with its 128 heads would", "of its 8 experts per layer",
    # inputs the lesson chooses
    "about 8,000 tokens",
    "receives an 8,192-token conversation",
    "per token and per 8,192-token conversation",
    "This count reserves the full 8,192 tokens",
    "at least 50 tokens/s",
    "The target of 50 tokens/s per user, for 8,192-token conversations",
    "for $B$ from 1 to 256",
    "no bend up to 256",                       # the largest batch the loop times
    "first takes 1.5 times as long as at batch 2",   # the threshold the check cell uses
    "at least 256 MiB",
    "at batches 2 to 32",
    "a square 1,024 × 1,024 product",
    # section 4's note and section 9: inputs the lesson chooses
    "the datasheet's 80 GB and sets 2 GB aside",
    "for the running example: 8,192-token prompts and 512-token answers",
    "the 32 KV caches",
    "30,000-token prompts", "300-token answers", "500-token prompts and writes 8,000 tokens",
    # the box on latent attention: FlashMLA's README (DeepSeek-AI 2025), quoted
    "reads up to 3,000 GB/s and computes up to 660 TFLOP/s on an H800",
    # figures quoted from their sources (DeepSeek-AI 2025 and 2024; reproduced in
    # tests/unit/test_serving_techniques.py)
    "of the 608B input tokens", "342B, 56.3 %, hit its on-disk KV cache",
    "608B input tokens a day at 73.7k tokens/s per 8-GPU node",
    "168B output tokens at 14.8k", "against the 226.75 nodes",
    "accepted 85 to 90 % of the time", "report as 1.8 times",
    # the box "What W counts": DeepSeek-AI 2024's own words, beside the count that fits them
    'DeepSeek-V3\'s "37B activated"',
    # a figure quoted from calculator pages, corrected in the box
    'as "35 TFLOPS"',
)


def _fits(cfg, batch: int, *, context: int, gpu_memory: float, overhead: float) -> bool:
    kv = inference.kv_cache_bytes(cfg, seq_len=context, batch=batch)
    need = memory.inference_memory(transformer.param_count(cfg), precision="bf16",
                                   kv_cache_bytes=kv, overhead_bytes=overhead)
    return need.total <= gpu_memory


@pytest.mark.parametrize("model", ["llama-2-7b", "llama-3-8b", "mistral-7b", "qwen2.5-7b"])
@pytest.mark.parametrize("context", [1, 2048, 8192, 131072])
@pytest.mark.parametrize("gpu", ["L4", "A100 40GB", "H100 SXM", "MI300X"])
def test_max_sequences_is_the_largest_batch_that_fits(model, context, gpu):
    cfg = transformer.preset(model)
    mem = hardware.gpu(gpu).memory_bytes
    n = inference.max_concurrent_sequences(cfg, context=context, gpu_memory=mem,
                                           overhead=2e9)
    if n:
        assert _fits(cfg, n, context=context, gpu_memory=mem, overhead=2e9)
    assert not _fits(cfg, n + 1, context=context, gpu_memory=mem, overhead=2e9)


def test_max_sequences_is_zero_when_the_weights_do_not_fit():
    """Llama-3-70B in BF16 (141 GB of weights) on one 80 GB H100."""
    cfg = transformer.preset("llama-3-70b")
    assert inference.max_concurrent_sequences(cfg, context=8192, gpu_memory=80e9) == 0
    assert inference.max_concurrent_sequences(cfg, context=8192, gpu_memory=80e9,
                                              precision="fp8") == 2


def test_max_sequences_refuses_bad_input_naming_it():
    with pytest.raises(ValueError, match="context must be a positive integer"):
        inference.max_concurrent_sequences(transformer.preset("llama-3-8b"), context=0,
                                           gpu_memory=80e9)
    with pytest.raises(ValueError, match="gpu_memory"):
        inference.max_concurrent_sequences(transformer.preset("llama-3-8b"), context=8,
                                           gpu_memory=-1)
    with pytest.raises(ValueError, match="precision"):
        inference.max_concurrent_sequences(transformer.preset("llama-3-8b"), context=8,
                                           gpu_memory=80e9, precision="fp7")


def test_lesson_embeds_the_inference_calculators_and_links_its_exercises():
    text = nb.check_skeleton(SLUG, "Inference: Prefill, Decode and the KV Cache")
    nb.check_pauses_hide_answers(text, at_least=3)
    assert {"inference", "kv_cache"} <= nb.widgets_used(NOTEBOOK)
    for src, tags in nb.code_cells(NOTEBOOK):
        if "calculator_widget(" in src:
            assert "nbval-ignore-output" in tags, src[:60]


@pytest.mark.parametrize("path", [NOTEBOOK, nb.exercise_notebook(SLUG)],
                         ids=["lesson", "exercises"])
def test_cited_keys_and_glossary_terms_exist(path):
    text = nb.markdown(path)
    nb.check_citations_in_bibliography(text)
    nb.check_terms_in_glossary(text)


# ---------------------------------------------------------------------------------------
# The figures of the prose


(test_claim, test_every_figure_is_claimed,
 test_every_listed_non_figure_is_on_the_page) = claim_tests(__name__, NOTEBOOK)


def test_lesson_notebook_hides_no_asserts():
    """The lesson's checks are the claims above and the tests of this file; what a learner
    should see checked is printed by a visible cell."""
    assert not any("assert" in src for src in nb.code(NOTEBOOK, hidden=True))


def _cell(cell_id: str) -> str:
    (cell,) = (c for c in json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
               if c.get("id") == cell_id)
    return "".join(cell["source"])


def test_the_shape_written_in_section_1_is_llama_3_8bs():
    """Section 1's prefill table spells Llama-3-8B's attention shape out by hand."""
    written = re.search(r"^shape_8b = (\{.*?\})", _cell("ik011"), re.M)
    assert ast.literal_eval(written.group(1)) == _shape("llama-3-8b")


@pytest.mark.parametrize("name", ["llama-2-7b", "llama-3-8b", "mistral-7b"])
def test_the_will_it_fit_calculator_takes_exactly_the_batch_that_fits(name):
    """Section 4: the registry's will_it_fit accepts the largest batch
    max_concurrent_sequences finds, and refuses one more."""
    n = inference.max_concurrent_sequences(transformer.preset(name), context=CONTEXT,
                                           gpu_memory=H100.memory_bytes, overhead=OVERHEAD)
    for batch, fits in ((n, True), (n + 1, False)):
        out = calculators.compute("will_it_fit", model=name, precision="bf16", context=CONTEXT,
                                  batch=batch, gpu="H100 SXM", overhead=OVERHEAD / 1e9)
        assert out["fits"] is fits


@pytest.mark.parametrize(("name", "context"), CURVES)
def test_a_full_gpu_is_still_memory_bound(name, context):
    """Section 7: at every cross (memory full) the step still takes longer than its
    arithmetic, so memory, not compute, ends the growth."""
    full = _full(name, context)
    assert _step(name, full, context) > inference.decode_flops(PARAMS[name], 1,
                                                                batch=full) / PEAK


def test_the_ridge_point_is_the_compute_bound_batch_with_2_byte_weights():
    """Section 6: B* = peak x b / (2 x bandwidth) equals the ridge point when b = 2."""
    assert _turn(H100) == pytest.approx(roofline.ridge_point(PEAK, H100.bandwidth))
