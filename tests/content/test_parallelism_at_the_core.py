"""Lesson 1, *Parallelism at the Core* (``notebooks/parallelism_at_the_core.ipynb``): the
promises its page makes, checked without running it (nbval runs it).

* the skeleton of the house style: label, shared GPU note, what you'll learn / need, key
  takeaways, key terms, the exercises link and the exercise notebook;
* every "Pause and think" has its answer in a collapsed dropdown;
* the explorers are the registry's calculators for this lesson;
* every glossary term and citation it uses exists (the book build would warn);
* every figure of the prose is a claim: the sentence as the page has it, rebuilt here from
  the calculators (``CLAIMS``), or a number that is not a result (``NOT_FIGURES``: the
  lesson's own inputs, published figures it quotes, formula constants, names);
* the figures the lesson teaches as corrections come from their published sources.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from gpulesson import (
    calculators,
    flops,
    gemm,
    hardware,
    inference,
    machine,
    memory,
    precision,
    roofline,
    transformer,
    units,
)

from . import nbtools as nb
from .claims import claim_tests, claims
from .reference import H100, L27, N7

SLUG = "parallelism_at_the_core"
NOTEBOOK = nb.notebook(SLUG)

L4 = hardware.gpu("L4")  # the 24 GB card that stands in for the shop's GPU
PCIE = hardware.gpu("H100 PCIe")  # a PCIe 5.0 x16 card
SEVEN_B = 7e9  # the shop's "7B" model, as the lesson rounds it

# The lesson's chosen inputs (each also listed in NOT_FIGURES where the prose states it).
QUIZZES, PROFESSOR_RATE, CLERK_RATE = 100_000, 1.0, 50.0  # quizzes, per second
PUPILS, SECONDS_PER_QUIZ = 10_000, 20.0
BATCH, D_IN, D_OUT = 32, 4096, 4096  # the dense layer of section 2
SERIAL = 0.05  # Amdahl's worked number
CONTEXT = 1000  # tokens of each conversation in the decode example
SHOP_CONTEXT, SHOP_OVERHEAD_GB = 4096, 2  # the will-it-fit example
TICKETS_TOKENS, TICKETS_MFU = 20e6, 0.40  # the fine-tuning example
WORDS = {2: "two", 3: "three", 7: "seven", 11: "eleven", 50: "fifty"}


# ---------------------------------------------------------------------------------------
# The lesson's calls, as its cells make them


def _gb(n_bytes: float, digits: int = 0) -> str:
    return units.format_bytes(n_bytes, digits=digits)


def _ceiling(precision_: str, gpu: str = "H100 SXM", batch: int = 1,
             kv_gb: float = 0.0) -> float:
    """The notebook's ``ceiling()``: the decode_ceiling calculator for a 7B model."""
    return calculators.compute("decode_ceiling", model="custom", n_params=7,
                               precision=precision_, gpu=gpu, batch=batch,
                               kv_per_sequence=kv_gb)["tokens_per_second"]


def _kv_gb() -> float:
    """The KV cache of one 1,000-token Llama-2-7B conversation, GB (the widget's unit)."""
    return inference.kv_cache_bytes(L27, seq_len=CONTEXT) / 1e9


def _job_time(rate: float) -> float:
    """The clerk picture: ``QUIZZES`` quizzes marked at ``rate`` and delivered by the
    clerk, as the roofline model computes it."""
    return roofline.time(flops=QUIZZES, bytes=QUIZZES, peak_flops=rate,
                         bandwidth=CLERK_RATE)


def _serve_7b(precision_: str, batch: int = 1) -> dict:
    return calculators.compute("will_it_fit", model="llama-2-7b", precision=precision_,
                               gpu="L4", context=SHOP_CONTEXT, batch=batch,
                               overhead=SHOP_OVERHEAD_GB)


def _most_conversations() -> int:
    return max(b for b in range(1, 65) if _serve_7b("fp16", b)["fits"])


def _layer_intensity(batch: int) -> float:
    return gemm.arithmetic_intensity(batch, D_IN, D_OUT, bytes_per_element=2)


def _crossover_batch() -> int:
    """The first doubling of batch 256 at which the BF16 layer is compute-bound."""
    batch = 256
    while roofline.bound(_layer_intensity(batch), H100.dense("bf16"), H100.bandwidth) != \
            "compute":
        batch *= 2
    return batch


def _fine_tune_minutes() -> float:
    work = flops.training_flops(SEVEN_B, TICKETS_TOKENS)
    return flops.training_time(work, 1, H100.dense("bf16"), TICKETS_MFU) / 60


def _w405() -> float:
    n405 = transformer.param_count(transformer.preset("llama-3.1-405b"))
    return memory.weight_bytes(n405, precision="bf16")


def _fp16() -> precision.FloatFormat:
    return precision.float_format("fp16")


def _power_of_two(value: float) -> int:
    exponent = round(math.log2(value))
    assert 2.0 ** exponent == value, value
    return exponent


def _relu_intensity() -> float:
    """One FLOP for a 2-byte read and a 2-byte write (FP16)."""
    return 1 / (2 * memory.precision_bytes("fp16"))


def _relu_rate() -> float:
    return roofline.attainable_flops(_relu_intensity(), H100.dense("bf16"), H100.bandwidth)


def _in_matrices() -> float:
    parts = transformer.param_breakdown(L27)
    return (parts["attention"] + parts["mlp"] + parts["lm_head"]) / N7


def _used_at_ceiling() -> float:
    return inference.decode_flops(SEVEN_B, 1) * _ceiling("fp16")


def _turn() -> float:
    return inference.decode_compute_bound_batch(peak_flops=H100.dense("bf16"),
                                                bandwidth=H100.bandwidth, bytes_per_param=2)


def _comma(n: int) -> str:
    """An integer as the maths of the page writes it: ``1{,}073{,}741{,}824``."""
    return f"{n:,}".replace(",", "{,}")


CLAIMS = claims(
    # 1. What is a GPU? The professor, the stadium and the clerk.
    lambda: f"The professor needs {_job_time(PROFESSOR_RATE):,.0f} seconds",
    lambda: f"The stadium needs {roofline.parallel_rounds(QUIZZES, PUPILS)} rounds of "
     f"{SECONDS_PER_QUIZ:.0f} seconds: "
     f"{roofline.parallel_rounds(QUIZZES, PUPILS) * SECONDS_PER_QUIZ:.0f} seconds",
    lambda: "the stadium can mark no more than "
     f"{roofline.attainable_flops(1, PUPILS / SECONDS_PER_QUIZ, CLERK_RATE):.0f} a second",
    lambda: f"the whole job takes {_job_time(PUPILS / SECONDS_PER_QUIZ):,.0f} seconds, "
     + {10: "ten"}[round(_job_time(PUPILS / SECONDS_PER_QUIZ)
                        / roofline.time(flops=QUIZZES, bytes=0,
                                        peak_flops=PUPILS / SECONDS_PER_QUIZ,
                                        bandwidth=CLERK_RATE))]
     + " times longer than the pupils need",
    # 2. Matrix multiplication.
    lambda: f"A layer with {D_IN:,} inputs and {D_OUT:,} outputs applied to a batch of "
     f"{BATCH} tokens is a ${BATCH}\\times{D_IN}$ by ${D_IN}\\times{D_OUT}$ product: "
     f"$2\\cdot{BATCH}\\cdot{D_IN}\\cdot{D_OUT} = {_comma(gemm.flops(BATCH, D_IN, D_OUT))}$ "
     f"FLOPs, about {units.format_flops(gemm.flops(BATCH, D_IN, D_OUT))}, in "
     f"{BATCH * D_OUT:,} output cells",
    lambda: f"About {100 * _in_matrices():.0f} % of the parameters of Llama 2 7B sit in "
     "weight matrices",
    lambda: f"$2\\cdot2\\cdot3\\cdot4 = "
     f"{gemm.flops(2, 3, 4)}$ FLOPs",
    lambda: f"`gemm.flops(2, 3, 4)` returns "
     f"{gemm.flops(2, 3, 4)}",
    # 3. Serial and parallel work.
    lambda: f"at batch {BATCH}, has {BATCH * D_OUT:,} cells: "
     f"{roofline.parallel_rounds(BATCH * D_OUT, 8):,} rounds against "
     f"{roofline.parallel_rounds(BATCH * D_OUT, 4096)}",
    # 4. Amdahl's law.
    lambda: f"the limit is $1/{SERIAL:g} = {roofline.amdahl_speedup(SERIAL, 1e15):.0f}"
     f"\\times$, however many workers you add; 4,096 workers already give "
     f"${roofline.amdahl_speedup(SERIAL, 4096):.1f}\\times$",
    lambda: (lambda s, t: f"Only ${s:.2f}\\times$. The data half still takes 0.5 of the "
             f"old time and the GPU half shrinks to {t - 0.5:.2f}, so the job takes "
             f"{t:.2f} of the old time: $1/{t:.2f} \\approx {s:.2f}$. This is Amdahl's "
             "law with $s = 0.5$ and $N = 2$")(roofline.amdahl_speedup(0.5, 2),
                                               1 / roofline.amdahl_speedup(0.5, 2)),
    lambda: "Even an infinitely fast GPU would give at most "
     f"${roofline.amdahl_speedup(0.5, 1e15):.0f}\\times$",
    # 5. Memory: capacity and bandwidth.
    lambda: f"An A100 comes with {hardware.gpu('A100 40GB').memory_bytes / 1e9:.0f} or "
     f"{_gb(hardware.gpu('A100 80GB').memory_bytes)}, an H100 SXM with "
     f"{_gb(H100.memory_bytes)}",
    lambda: "An H100 SXM is rated at "
     + units.format_bandwidth(H100.bandwidth),
    # PCIe 5.0 x16: 32 GT/s on 16 lanes is 64 GB/s each way before the 128b/130b encoding
    # and the packet headers; the page names it a rating, not what a transfer reaches
    lambda: "is rated at "
     f"{units.format_bandwidth(PCIE.interconnect_bandwidth / 2, digits=0)} in each "
     "direction (a line rate: transfers reach less), some "
     f"{WORDS[round(H100.bandwidth / PCIE.interconnect_bandwidth * 2, -1)]}"
     f" times less than an H100's HBM. Streaming "
     f"{_gb(memory.weight_bytes(SEVEN_B, precision='fp16'))} of weights over it would cap "
     "generation at under "
     + str(math.ceil(inference.decode_ceiling_tokens_per_second(
        weight_bytes=memory.weight_bytes(SEVEN_B, precision="fp16"),
        bandwidth=PCIE.interconnect_bandwidth / 2)))
     + " tokens per second",
    lambda: f"a 7B model that *runs* in {_gb(memory.weight_bytes(SEVEN_B, precision='fp16'))}"
     f" needs {_gb(SEVEN_B * memory.bytes_per_param('mixed', 'adam'))} of model state to "
     "*fine-tune*",
    # lesson 4 counts the same state for Llama 2 7B's exact parameters
    lambda: f"'s {_gb(N7 * memory.bytes_per_param('mixed', 'adam'), 1)} is the same "
     f"count for Llama 2 7B's exact {N7 / 1e9:.2f} billion parameters",
    lambda: "(plain FP32 with Adam is also "
     f"{memory.bytes_per_param('fp32', 'adam')} bytes)",
    lambda: f"Llama 2 7B keeps $2\\times{L27.layers}\\text{{ layers}}\\times"
     f"{L27.kv_heads * L27.head_dim}$ numbers per token, "
     f"{units.format_bytes(inference.kv_cache_bytes_per_token(L27), binary=True, digits=0)}"
     f" in FP16, so one 4,096-token conversation holds "
     f"{units.format_bytes(inference.kv_cache_bytes(L27, seq_len=4096), binary=True, digits=0)}",
    lambda: "It has one GPU with "
     f"{_gb(L4.memory_bytes)} of memory",
    lambda: "The shop's GPU has "
     f"{_gb(L4.memory_bytes)} of memory",
    lambda: f"The weights take {_gb(memory.weight_bytes(SEVEN_B, precision='fp16'))} "
     f"({_gb(memory.weight_bytes(N7, precision='fp16'), 1)} for Llama 2 7B's "
     f"{N7 / 1e9:.2f} billion parameters), which leaves about "
     f"{_gb(memory.headroom(memory.weight_bytes(SEVEN_B, precision='fp16'), L4.memory_bytes))}"
     f" for the KV cache and working memory. With a {SHOP_OVERHEAD_GB} GB allowance for the "
     f"CUDA context and buffers, {WORDS[_most_conversations()]} full {SHOP_CONTEXT:,}-token "
     "conversations fit at once",
    lambda: f"In FP32 the weights alone take "
     f"{_gb(memory.weight_bytes(SEVEN_B, precision='fp32'))} "
     f"({_gb(_serve_7b('fp32')['weights'])} for Llama 2 7B), more than the card has: "
     + ("no" if not _serve_7b("fp32")["fits"] else "yes"),
    # 6. Arithmetic intensity and the roofline.
    lambda: f"An H100 SXM does {units.format_flop_rate(H100.dense('bf16'))} in dense BF16 "
     f"and moves {units.format_bandwidth(H100.bandwidth)}: $I^\\ast = "
     f"{H100.dense('bf16') / 1e12:.1f}\\times10^{{12}} / {H100.bandwidth / 1e12:.2f}"
     f"\\times10^{{12}} \\approx {H100.ridge_point('bf16'):.0f}$ FLOP per byte. A "
     f"computation must do about {H100.ridge_point('bf16'):.0f} operations",
    lambda: f"the datasheet's headline {H100.sparse_flops['bf16'] / 1e12:,.0f} TFLOP/s, a "
     "*sparse* figure, you would get "
     + {2: "twice"}[round(H100.sparse_flops["bf16"] / H100.dense("bf16"))] + " that",
    lambda: "an H100 can give it at most "
     + units.format_flop_rate(roofline.attainable_flops(_layer_intensity(1),
           H100.dense("bf16"), H100.bandwidth),
                             digits=2),
    lambda: f"At batch 256 each weight serves 256 rows: {_layer_intensity(256):.1f} FLOP "
     "per byte",
    lambda: f"(batch {_crossover_batch()} crosses over)",
    lambda: f"The H100's BF16 roof is {H100.dense('bf16') / H100.dense('fp32'):.0f} times "
     "higher than its FP32 one",
    lambda: f"The ridge moves right, from {H100.ridge_point('fp32'):.0f} to "
     f"{H100.ridge_point('bf16'):.0f} FLOP/byte",
    lambda: f"a {_gb(memory.weight_bytes(D_IN * D_OUT, precision='fp32'))} weight matrix",
    lambda: f"{_relu_intensity():.2f} FLOP/byte, "
     + {True: "more than a thousand"}[H100.ridge_point("bf16") / _relu_intensity() > 1000]
     + f" times below the H100's ridge of {H100.ridge_point('bf16'):.0f}",
    lambda: f"${_relu_intensity():.2f} \\times {H100.bandwidth / 1e12:.2f}$ TB/s $\\approx "
     f"{_relu_rate() / 1e12:.2f}$ TFLOP/s",
    lambda: "the best run of one "
     f"${machine._DEFAULTS['cpu'][0]}\\times{machine._DEFAULTS['cpu'][0]}$ product",
    # 7. Tensor Cores and lower precision.
    lambda: "FP32 numbers are rounded to "
     f"{precision.float_format('tf32').fraction_bits} fraction bits",
    lambda: f"**FP16** has more precision ({_fp16().fraction_bits} fraction bits) but a "
     f"narrow range: nothing above {_fp16().largest:,.0f}, and nothing below "
     f"$2^{{{_power_of_two(_fp16().smallest_subnormal)}}}\\approx"
     f"{_fp16().smallest_subnormal / 1e-8:.0f}\\times10^{{-8}}$",
    lambda: f"FP16's smallest positive value is "
     f"$2^{{{_power_of_two(_fp16().smallest_subnormal)}}}\\approx"
     f"{_fp16().smallest_subnormal / 1e-8:.0f}\\times10^{{-8}}$: anything below half of it, "
     f"$2^{{{_power_of_two(_fp16().smallest_subnormal / 2)}}}\\approx"
     f"{_fp16().smallest_subnormal / 2 / 1e-8:.0f}\\times10^{{-8}}$, rounds to "
     + ("zero" if _fp16().rounds_to_zero(_fp16().smallest_subnormal / 2) else "?"),
    lambda: f"rounds up to $2^{{{_power_of_two(_fp16().smallest_subnormal)}}}$. Between "
     f"${_fp16().smallest_subnormal / 1e-8:.0f}\\times10^{{-8}}$ and the smallest normal "
     f"number, $2^{{{_power_of_two(_fp16().smallest_normal)}}}\\approx"
     f"{_fp16().smallest_normal / 1e-5:.1f}\\times10^{{-5}}$",
    lambda: "rounding FP32 numbers to their "
     f"top {precision.float_format('bf16').bits} bits",
    lambda: f"every one below ${_fp16().smallest_subnormal / 2 / 1e-8:.0f}\\times10^{{-8}}$,"
     " half the smallest value FP16 can hold",
    lambda: "("
     f"{precision.float_format('bf16').fraction_bits} fraction bits against FP16's "
     f"{_fp16().fraction_bits})",
    lambda: "pushes the largest "
     f"gradients past {_fp16().largest:,.0f} to infinity",
    lambda: f'The H100\'s famous "{H100.sparse_flops["fp16"] / 1e12:,.0f} TFLOPS" for FP16 '
     "is the sparse figure; dense FP16 and BF16 is "
     + units.format_flop_rate(H100.dense("fp16") if H100.dense("fp16") == H100.dense("bf16")
                             else float("nan"))
     + f", and {H100.dense('fp8') / 1e12:,.0f} is also the dense **FP8** figure",
    # 9. Training and inference.
    lambda: "the memory holds the training state ("
     f"{memory.bytes_per_param('mixed', 'adam')} bytes per parameter, above)",
    lambda: f"The arithmetic of fine-tuning on {TICKETS_TOKENS / 1e6:.0f} million "
     f"tokens is cheap, about {_fine_tune_minutes():.0f} minutes of one H100",
    lambda: "the 7B weights stay frozen in "
     f"{8 * memory.precision_bytes('bf16'):.0f} bits",
    # 10. Several GPUs.
    lambda: f"405B needs {_gb(_w405())} for its BF16 weights alone, "
     f"{WORDS[memory.gpus_needed(_w405(), H100.memory_bytes)]} {_gb(H100.memory_bytes)} GPUs",
    lambda: f"({units.format_bandwidth(H100.interconnect_bandwidth, digits=0)} per H100 SXM,"
     " both directions together, "
     f"{WORDS[round(H100.interconnect_bandwidth / PCIE.interconnect_bandwidth)]} times a "
     "PCIe 5.0 x16 link)",
    # Going further: the H200 against the H100 (the same GH100 compute)
    lambda: f"The H200's {units.format_flop_rate(hardware.gpu('H200').dense('bf16'))} against "
     f"the H100's {H100.dense('bf16') / 1e12:.1f} is not a faster chip",
    # 13. The decode ceiling.
    lambda: f"on a GPU with {units.format_bandwidth(H100.bandwidth)} of memory bandwidth "
     "(an H100 SXM)",
    lambda: f"In FP16 that is $7\\times10^9 \\times {memory.precision_bytes('fp16'):g}$ bytes"
     f" $= {memory.weight_bytes(SEVEN_B, precision='fp16') / 1e9:.0f}$ GB per token",
    lambda: f"The memory delivers at most {units.format_bandwidth(H100.bandwidth)}, i.e. "
     f"{H100.bandwidth / 1e9:,.0f} GB every second",
    lambda: f"${_comma(round(H100.bandwidth / 1e9))} / "
     f"{memory.weight_bytes(SEVEN_B, precision='fp16') / 1e9:.0f} \\approx "
     f"{_ceiling('fp16'):.0f}$ tokens per second",
    lambda: f"a token costs $2N = {inference.decode_flops(SEVEN_B, 1) / 1e9:.0f}$ GFLOP. At "
     f"{_ceiling('fp16'):.0f} tokens/s that is "
     + units.format_flop_rate(_used_at_ceiling(), digits=2),
    lambda: f"of the H100's dense {units.format_flop_rate(H100.dense('bf16'))}: the Tensor "
     "Cores are idle more than "
     f"{int(100 * (1 - flops.utilization(_used_at_ceiling(), H100.dense('bf16'))))} % of the "
     "time",
    lambda: f"at a batch of about {_turn():.0f} conversations (the ridge point again",
    lambda: "in NVFP4, whose block scales bring a weight to "
     f"{precision.bits_per_element('nvfp4'):g} bits, "
     f"{_gb(memory.weight_bytes(SEVEN_B, precision='nvfp4'), 1)} and "
     f"{_ceiling('nvfp4'):.0f} tokens/s",
    lambda: "one scale per block of "
     f"{precision.block_format('nvfp4').block_size} or "
     f"{precision.block_format('mxfp4').block_size} values",
    lambda: "MXFP4 takes "
     f"{precision.bits_per_element('mxfp4'):g} bits per element and NVFP4 "
     f"{precision.bits_per_element('nvfp4'):g}",
    lambda: (lambda g: "A B300's dense FP4 peak is "
             f"{g.dense('fp4') / 1e12:,.0f} TFLOP/s, "
             + {3: "three times"}[round(g.dense("fp4") / g.dense("fp8"))]
             + " its FP8 rate")(hardware.gpu("B300")),
    lambda: f"In INT8 the weights take {_gb(memory.weight_bytes(SEVEN_B, precision='int8'))}"
     f" and the ceiling "
     + {2: "doubles"}[round(_ceiling("int8") / _ceiling("fp16"))]
     + f" to {_ceiling('int8'):.0f} tokens/s; in INT4, "
     f"{_gb(memory.weight_bytes(SEVEN_B, precision='int4'), 1)} and "
     f"{_ceiling('int4'):.0f} tokens/s",
    lambda: f"the total rises eightfold, to {_ceiling('fp16', batch=8):,.0f} tokens/s, and "
     f"each user keeps {_ceiling('fp16', batch=8) / 8:.0f}",
    lambda: "For a Llama-2-7B-shaped model ("
     f"{units.format_bytes(inference.kv_cache_bytes_per_token(L27), binary=True, digits=0)}"
     f" per token in FP16) with {CONTEXT:,} tokens of context, that is {_kv_gb():.2f} GB per "
     f"conversation per step. With it, the ceiling is {_ceiling('fp16', kv_gb=_kv_gb()):.0f} "
     "tokens/s for one user, and "
     f"{_ceiling('fp16', batch=8, kv_gb=_kv_gb()):,.0f} tokens/s in total for 8, or "
     f"{_ceiling('fp16', batch=8, kv_gb=_kv_gb()) / 8:.0f} each: batching still multiplies "
     "the throughput ("
     f"{_ceiling('fp16', batch=8, kv_gb=_kv_gb()) / _ceiling('fp16', kv_gb=_kv_gb()):.1f} "
     "times)",
    lambda: "no longer fit in the H100's "
     + _gb(H100.memory_bytes),
    lambda: f"until arithmetic takes over at about {_turn():.0f} conversations",
    lambda: f"An L4 has {_gb(L4.memory_bytes)} at "
     f"{units.format_bandwidth(L4.bandwidth, digits=0)}, "
     f"{WORDS[round(H100.bandwidth / L4.bandwidth)]} times less bandwidth than an H100 SXM."
     f" The same arithmetic gives at most {_ceiling('fp16', gpu='L4'):.0f} tokens/s in FP16, "
     f"{_ceiling('int8', gpu='L4'):.0f} in INT8 and {_ceiling('int4', gpu='L4'):.0f} in INT4",
    lambda: f"({_kv_gb():.2f} GB for {CONTEXT:,} tokens of a Llama 2 7B)",
    lambda: f"for {CONTEXT:,}-token contexts the per-user ceiling falls from "
     f"{_ceiling('fp16', kv_gb=_kv_gb()):.0f} to "
     f"{_ceiling('fp16', batch=8, kv_gb=_kv_gb()) / 8:.0f} tokens/s",
    # Exercises and takeaways.
    lambda: "or "
     f"{memory.bytes_per_param('mixed', 'adam')} bytes per parameter of training state",
)

#: Numbers of the prose that are not results.
NOT_FIGURES = (
    # NVIDIA H100 whitepaper (2022), SXM5: 132 SMs of 128 FP32 lanes each
    "132 {term}`streaming multiprocessors", "16,896 FP32 arithmetic lanes",
    # Krizhevsky et al. 2012, ILSVRC-2012 results
    "top-5 error of 15.3 %, against 26.2 %",
    # the professor and the stadium: the picture's inputs
    "Suppose 100,000 one-line", "10,000 pupils", "take 20 seconds per quiz",
    "at 50 a second",
    # illustrations, not results
    "100 plates and 100 people", "token 51 needs token 50", "8 or 16 numbers",
    "groups of 32 (a *warp*)", "two $32\\times32$ matrices", "at 100 % of",
    "smaller cards 8 to 32 GB",
    # the lesson's chosen sizes
    "batch 256", "$4096\\times4096$", "$4096^2$",
    # loss scaling's factor and the made-up gradients' spread (the cell's inputs)
    "$2^{16}=65{,}536$", "from $10^{-10}$ to $10^{-2}$",
    # definitions, names and cross-references
    "$1\\ \\text{GB} = 10^9$", "16-bit", "32-bit", "PCIe 5.0", "Llama 3.1",
    # the horizon of the datasheet table: releases' names (NVIDIA: CUDA 13.5, November 2026,
    # general availability for Rubin; CUDA Toolkit 13.4 release notes, 2026-09-11: preview)
    "CUDA 13.5 (November 2026)", "after 13.4's preview",
)




(test_claim, test_every_figure_is_claimed,
 test_every_listed_non_figure_is_on_the_page) = claim_tests(__name__, NOTEBOOK)


# ---------------------------------------------------------------------------------------
# Structure


def test_skeleton_of_the_house_style() -> None:
    nb.check_skeleton(SLUG, "Parallelism at the Core")
    nb.check_exercise_notebook(SLUG)


def test_every_pause_and_think_hides_its_answer() -> None:
    """The seed's four prompts (FLOPs of 2x3 by 3x4, the 24 GB card, the data-loading job,
    batching 8 users) at least, each followed by a collapsed answer."""
    blocks = nb.check_pauses_hide_answers(nb.markdown(NOTEBOOK), at_least=4)
    joined = " ".join(blocks)
    for seed_prompt in (r"2\\times3", "24 GB", "loading", "8 users"):
        assert re.search(seed_prompt, joined), seed_prompt


def test_explorers_are_this_lessons_registry_calculators() -> None:
    nb.check_registry_widgets(SLUG, {"amdahl", "will_it_fit", "decode_ceiling"})


def test_every_term_is_in_the_glossary() -> None:
    assert len(nb.check_terms_in_glossary(nb.markdown(NOTEBOOK))) > 30


def test_every_citation_is_in_the_bibliography() -> None:
    assert len(nb.check_citations_in_bibliography(nb.markdown(NOTEBOOK))) >= 10


def test_problem_sizes_come_from_sizes_for_and_answers_are_checked() -> None:
    code = "\n".join(nb.code(NOTEBOOK, hidden=False))
    assert 'sizes_for(dev, "loop")' in code and 'sizes_for(dev, "gemm")' in code
    assert "compare(" in code and "reference=matmul_loop" in code


# ---------------------------------------------------------------------------------------
# Published figures the lesson teaches


def test_h100_dense_and_sparse_fp16_as_taught() -> None:
    """NVIDIA H100 whitepaper (2022), SXM5 column: FP16 Tensor Core 989.4 TFLOPS dense,
    1,978.9 TFLOPS with sparsity; FP8 1,978.9 dense. The lesson teaches 989.4 as the peak
    and 1,979 as the sparse headline."""
    assert H100.peak_flops["fp16"] == pytest.approx(989.4e12)
    assert H100.sparse_flops["fp16"] == pytest.approx(1978.9e12)
    assert H100.peak_flops["fp8"] == pytest.approx(1978.9e12)


def test_training_state_of_a_7b_model_as_taught() -> None:
    """ZeRO (Rajbhandari et al. 2020, section 3.1): mixed-precision Adam keeps 2 + 2 + 12
    bytes per parameter; 7e9 parameters need 112 GB of model state."""
    assert memory.bytes_per_param("mixed", "adam") == 16
    assert 7e9 * memory.bytes_per_param("mixed", "adam") == pytest.approx(112e9)


def test_decode_ceiling_with_kv_reads_as_taught() -> None:
    """A 7B FP16 model on 3.35 TB/s (H100 SXM datasheet): 3.35e12 / 14e9 = 239.3 tokens/s.
    With Llama 2 7B's KV cache (32 layers x 32 heads x 128 dims x 2 x 2 bytes = 512 KiB per
    token; Touvron et al. 2023, table of model shapes) at 1,000 tokens, 8 sequences:
    8 x 3.35e12 / (14e9 + 8 x 0.524288e9) = 1,473 tokens/s."""
    assert inference.decode_ceiling_tokens_per_second(
        weight_bytes=14e9, bandwidth=3.35e12) == pytest.approx(239.29, abs=0.01)
    kv = 32 * 32 * 128 * 2 * 2 * 1000
    assert inference.decode_ceiling_tokens_per_second(
        weight_bytes=14e9, bandwidth=3.35e12, batch=8,
        kv_bytes_per_sequence=kv) == pytest.approx(1472.99, abs=0.01)


def test_fp4_exercise_reads_the_scales_too():
    """NVIDIA 2025 (NVFP4): one E4M3 scale per 16 E2M1 elements, 4.5 bits per weight; a
    7B model's decode on a B300 (7.75 TB/s, datasheet) is capped at 7.75e12 / (7e9 x 4.5/8)
    tokens/s at batch 1, and half a byte per weight is the declared mistake."""
    from gpulesson.exercises import lesson_module

    ex = next(e for e in lesson_module(SLUG).EXERCISES if e.number == 15)
    bw = hardware.gpu("B300").bandwidth
    assert ex.answer_value() == pytest.approx(bw / (7e9 * 4.5 / 8))
    assert ex.check(f"{bw / 3.5e9:.0f} tokens/s").mistake == "forgot_scales"


def test_fits_exercise_never_says_yes_without_the_context_allowance():
    """Section 5 keeps 2 GB for the CUDA context and buffers before anything else fits.
    Exercise 9's key says "fits" only where the weights (2 bytes per parameter in FP16, 4 in
    FP32) leave at least that much free, in every variant an instructor may hand out: an 8B
    model in FP16 (16 GB) on a 16 GB card, with 0 B left, is not drawn."""
    from gpulesson.exercises import lesson_module

    ex = next(e for e in lesson_module(SLUG).EXERCISES if e.number == 9)
    fitting = {"both": ("fp16", "fp32"), "fp16": ("fp16",), "neither": ()}
    for seed in range(300):
        variant = ex.variant(seed)
        n, mem = variant.inputs["n_params"], variant.inputs["memory"]
        for prec in fitting[variant.answer_value()]:
            spare = mem - n * {"fp16": 2, "fp32": 4}[prec]
            assert spare >= 2e9, (seed, n, mem, prec, spare)


def test_fp4_exercise_asks_each_gpu_for_a_format_it_has():
    """OCP MX v1.0: MXFP4 keeps one 8-bit E8M0 scale per 32 E2M1 elements, 4.25 bits; NVFP4
    (NVIDIA, 2025) one E4M3 scale per 16, 4.5 bits. The MI355X has no NVFP4 (AMD CDNA 4;
    gpus.json's note), so its variants of exercise 15 ask about MXFP4, with hints to match;
    the B200 and B300 variants keep NVFP4."""
    from gpulesson.exercises import lesson_module

    data = json.loads((Path(hardware.__file__).parent / "data" / "gpus.json").read_text())
    mi355x = next(g for g in data["gpus"] if g["name"] == "MI355X")
    assert "no NVFP4" in mi355x["peak_flops"]["fp4"]["note"]
    ex = next(e for e in lesson_module(SLUG).EXERCISES if e.number == 15)
    seen = set()
    for seed in range(300):
        variant = ex.variant(seed)
        g = hardware.gpu(variant.inputs["gpu"])
        n = variant.inputs["n_params"]
        fmt, other, bits, block = (("NVFP4", "MXFP4", 4.5, 16) if g.vendor == "NVIDIA"
                                   else ("MXFP4", "NVFP4", 4.25, 32))
        seen.add(fmt)
        assert variant.answer_value() == pytest.approx(g.bandwidth / (n * bits / 8))
        question = variant.question_text()
        assert fmt in question and other not in question, (seed, question)
        assert f"block of {block}" in question
        feedback = variant.check(f"{g.bandwidth / (n / 2):.0f} tokens/s")
        assert feedback.mistake == "forgot_scales"
        assert f"{fmt} stores an 8-bit scale with every {block} elements" in feedback.message
    assert seen == {"NVFP4", "MXFP4"}


def test_going_further_counts_its_boxes():
    """The introduction to "Going further" names its boxes with a number word: it must be
    the number of "Going further:" boxes that follow (six, not "Five")."""
    words = {4: "Four", 5: "Five", 6: "Six", 7: "Seven", 8: "Eight"}
    text = nb.markdown(NOTEBOOK)
    boxes = re.findall(r"\{admonition\} Going further:", text)
    assert f"{words[len(boxes)]} optional boxes" in text, len(boxes)


def test_datasheet_capacities_are_read_as_decimal_gb_with_the_undercount_said() -> None:
    # A datasheet's "80 GB" is a label: every driver total in gpus.json is at or above the
    # label read as 10^9 bytes (an H100 SXM reports 81,559 MiB, 85.5e9 bytes), so the
    # lesson may count in decimal GB but must not call the labels decimal bytes.
    reported = [g for g in hardware.GPUS.values() if g.reported_memory_bytes]
    assert reported and all(g.reported_memory_bytes >= g.memory_bytes for g in reported)
    text = " ".join(nb.markdown(NOTEBOOK).split())
    assert "datasheets' decimal gigabytes" not in text
    assert ("GPU capacities are the makers' labels (datasheets or announcements), counted as"
            in text and "undercount" in text)


def test_the_batch_one_expectation_says_it_needs_a_quiet_machine() -> None:
    # The built site's run (a shared machine) put the batch-1 layer at 0.16 of its roof:
    # "near the roof" holds only when nothing else competes for the memory bus.
    text = " ".join(nb.markdown(NOTEBOOK).split())
    assert "On a quiet machine expect the batch-1 point near the roof" in text
