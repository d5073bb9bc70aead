"""Lesson 9, *Optimisations that Change the Math* (``notebooks/optimisations.ipynb``): the
promises its page and its exercises make, checked without running the notebook (nbval
runs it).

* the skeleton of the house style, collapsed "Pause and think" answers, the lesson's two
  registry calculators, glossary terms and citations that exist;
* every figure the prose states is a claim (:mod:`tests.content.claims`), rebuilt from
  ``gpulesson.optimisations``, ``memory``, ``flops``, ``hardware`` and ``precision`` with
  the inputs the lesson names; the other numbers of the prose (inputs, published
  measurements, quoted figures, number formats' widths) are listed as non-figures;
* the NumPy attentions' byte counters and the checkpointing simulation are compared with
  the calculators in cells the learner sees;
* the floating-point limits the bank computes from bit layouts are BF16's (Kalamkar et al.
  2019: FP32's 8 exponent bits, 7 fraction bits; the IEEE 754 formats are checked against
  NumPy in ``tests/unit/test_precision.py``); the online-softmax merge equals a direct
  log-sum-exp;
* the exercise bank has the kinds and common mistakes the lesson promises.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpulesson import (
    flops,
    gemm,
    hardware,
    memory,
    optimisations,
    planning,
    roofline,
    transformer,
    units,
)
from gpulesson.exercises import lesson_module
from gpulesson.fp8_training import recipe, recipe_bytes
from gpulesson.precision import float_format

from . import nbtools as nb
from .claims import claim_test, claim_tests, claims, page
from .reference import GPT3, H100, gb, pct

SLUG = "optimisations"
NOTEBOOK = nb.notebook(SLUG)
BANK = lesson_module(SLUG)

A100 = hardware.gpu("A100 40GB")   # the FlashAttention paper's GPU
# Dao et al. 2022, Figure 2: GPT-2 medium's attention, FP16
FIG2 = {"seq_len": 1024, "head_dim": 64, "heads": 16, "batch": 64}
FP16_BYTES = memory.precision_bytes("fp16")
SRAM = 192 * 1024                  # bytes: an A100 SM's shared memory, the lesson's tile budget
ATTN_FLOPS = (gemm.flops(FIG2["seq_len"], FIG2["head_dim"], FIG2["seq_len"])
              + gemm.flops(FIG2["seq_len"], FIG2["seq_len"], FIG2["head_dim"])
              ) * FIG2["heads"] * FIG2["batch"]
STD_BYTES = optimisations.standard_attention_hbm_bytes(**FIG2, bytes_per_element=FP16_BYTES)
FLASH_BYTES = optimisations.flash_attention_hbm_bytes(**FIG2, sram_bytes=SRAM,
                                                      bytes_per_element=FP16_BYTES)
PEAK, BW = A100.dense("fp16"), A100.bandwidth
# Section 2: fine-tuning Llama 2 7B on 4,096-token sequences, one at a time
LLAMA = transformer.preset("llama-2-7b")
N_PARAMS = transformer.param_count(LLAMA)
CTX = {"seq_len": 4096, "batch": 1}
STATE = memory.training_memory(LLAMA, **CTX)  # FlashAttention, Llama's default
PER_LAYER = STATE.activations / LLAMA.layers
FULL = memory.training_memory(LLAMA, **CTX, recompute="full").activations
CHECKPOINT = FULL / LLAMA.layers
GPT = {**CTX, "hidden": LLAMA.hidden, "heads": LLAMA.heads}
GPT_PER_LAYER = memory.activation_bytes_per_layer(**GPT)  # as a GPT block, eager
GPT_FORMULA = LLAMA.layers * GPT_PER_LAYER
SELECTIVE = LLAMA.layers * memory.activation_bytes_per_layer(**GPT, recompute="selective")
SHAPE = {"layers": LLAMA.layers, "heads": LLAMA.heads, "head_dim": LLAMA.head_dim,
         "seq_len": 4096}
SELECTIVE_EXTRA = optimisations.recompute_overhead(recompute="selective", n_params=N_PARAMS,
                                                   **SHAPE)
#: FlashAttention's backward pass recomputes S = QK^T only (2*s*h per layer and token, of
#: the forward's 4*s*h attention FLOPs), from the Q and K it keeps (Dao et al. 2022,
#: Algorithm 4): half of selective recomputation's QK^T and PV.
FLASH_EXTRA = (2 * LLAMA.layers * LLAMA.heads * LLAMA.head_dim * 4096
               / flops.flops_per_token(N_PARAMS, **SHAPE))
CHECKPOINT_EXTRA = FLASH_EXTRA + optimisations.recompute_overhead(
    recompute="full", n_params=N_PARAMS, **SHAPE)
CHEN_K = optimisations.optimal_segments(LLAMA.layers)
GPT3_LAYERS = GPT3.layers
FP16, BF16 = float_format("fp16"), float_format("bf16")
WORDS = {3: "three", 7: "seven"}


def _to_bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 to the nearest bfloat16 (ties to even), as float32: the top 16 bits."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32)
    rounded = bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))
    return (rounded & np.uint32(0xFFFF0000)).view(np.float32)


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


def sci(x: float) -> str:
    """``6.1\\times10^{-5}``, as the lesson's maths writes a small number."""
    mantissa, exponent = f"{x:.1e}".split("e")
    return f"{mantissa}\\times10^{{{int(exponent)}}}"


def roofline_time(hbm_bytes: float) -> float:
    """The Figure 2 forward pass on the A100's roofline, moving ``hbm_bytes``."""
    return roofline.time(ATTN_FLOPS, hbm_bytes, PEAK, BW)


def fp32_intensity(seq_len: int) -> float:
    """FLOP per byte of standard attention in FP32, one head of 64."""
    work = gemm.flops(seq_len, 64, seq_len) + gemm.flops(seq_len, seq_len, 64)
    return work / optimisations.standard_attention_hbm_bytes(seq_len=seq_len, head_dim=64,
                                                            bytes_per_element=4)


def flash_ratio(seq_len: int, head_dim: int) -> float:
    """How many times fewer bytes FlashAttention moves (FP16, the lesson's SRAM)."""
    return (optimisations.standard_attention_hbm_bytes(seq_len=seq_len, head_dim=head_dim,
                                                       bytes_per_element=FP16_BYTES)
            / optimisations.flash_attention_hbm_bytes(seq_len=seq_len, head_dim=head_dim,
                                                      sram_bytes=SRAM,
                                                      bytes_per_element=FP16_BYTES))


LONG = (4096, 8192, 16_384, 32_768, 65_536, 131_072)   # "long sequences" of the plot


def ratio_range(head_dim: int) -> str:
    ratios = [flash_ratio(n, head_dim) for n in LONG]
    low, high = round(min(ratios)), round(max(ratios))
    return f"{low} to {high}" if low != high else f"{low}"


def checkpointed(segments: int) -> float:
    """Peak activation bytes of Llama 2 7B in ``segments`` checkpointed segments, with real
    sizes: the checkpoints (each layer's input) plus the longest segment being rebuilt."""
    return segments * CHECKPOINT + math.ceil(LLAMA.layers / segments) * PER_LAYER


def chen(layers: int, segments: int) -> float:
    """Chen et al.'s peak, in layers' worth, of ``layers`` layers in ``segments``."""
    return optimisations.checkpoint_memory(layers=layers, per_layer_bytes=1, segments=segments)


def segments_within(layers: int, extra: float) -> list[int]:
    best = min(chen(layers, k) for k in range(1, layers + 1))
    return [k for k in range(1, layers + 1) if chen(layers, k) <= best + extra]


def span(ks: list[int]) -> str:
    assert ks == list(range(ks[0], ks[-1] + 1)), ks
    return f"{ks[0]} to {ks[-1]}"


def fp32_rate_ratio(name: str, against: str = "fp32") -> float:
    g = hardware.gpu(name)
    half = "bf16" if "bf16" in g.peak_flops else "fp16"
    return g.dense(half) / g.dense(against)


def tf32_ratio() -> str:
    """The 16-bit peak over TF32's, the same on every GPU that has TF32."""
    ratios = {fp32_rate_ratio(g, "tf32") for g in ("A100 80GB", "H100 SXM", "B200")}
    return " or ".join(f"{r:g}" for r in sorted(ratios))


def model_state(precision: str) -> str:
    s = memory.model_state_bytes(precision)
    return f"{s.weights} + {s.gradients} + {s.optimizer}"


def fp8_share(rate: float, dtype: str) -> str:
    return pct(flops.utilization(rate, H100.dense(dtype)))


def deepseek_v3_rate() -> float:
    """DeepSeek-V3's pre-training FLOP/s per H800: 6 N_active x 14.8T tokens over 2.664M
    GPU-hours (DeepSeek-AI 2024, Table 1)."""
    v3 = transformer.preset("deepseek-v3")
    return flops.model_training_flops(v3, tokens=14.8e12) / (2.664e6 * 3600)


def mixed_saving() -> float:
    """Section 3's example: FP32 activations taken as twice the 16-bit count."""
    return optimisations.mixed_precision_savings(
        n_params=N_PARAMS, activation_bytes_fp32=2 * STATE.activations).saved_fraction


def _fig2_forward_flops() -> float:
    """Dao et al. 2022, Figure 2's setting: 4 N^2 d FLOPs per head, 16 heads, batch 64."""
    n, d = 1024, 64
    return (gemm.flops(n, d, n) + gemm.flops(n, n, d)) * 16 * 64


def _served_fp8(gpu: str, qps: float | None) -> tuple[float, float]:
    """Lesson 10's serving planner: Llama 3 70B on 8 ``gpu`` (its dashboard's prompt and
    output), FP8 weights against BF16 weights: (tokens per second, FP8 over BF16; how many
    times sooner each token comes, BF16's time per output token over FP8's)."""
    runs = {w: planning.plan_serving("llama-3-70b", gpu, tp=8, weight_dtype=w,
                                     max_model_len=8192, qps=qps, prompt_tokens=2000,
                                     output_tokens=300) for w in ("bf16", "fp8")}
    return (runs["fp8"].throughput / runs["bf16"].throughput,
            runs["bf16"].tpot / runs["fp8"].tpot)


def served_fp8_speedup(gpu: str = "H100 SXM") -> float:
    """Tokens per second at full load, FP8 weights over BF16 weights."""
    return _served_fp8(gpu, None)[0]


#: The light load of the paragraph on FP8 serving: one request every ten seconds.
LIGHT_QPS = 0.1


def served_fp8_sooner(gpu: str) -> float:
    """At light load the decode step is bound by its reads: how many times sooner each
    token comes with FP8 weights (half the weight bytes) than with BF16 ones."""
    return _served_fp8(gpu, LIGHT_QPS)[1]


CLAIMS = claims(
    lambda: f"{memory.bytes_per_param('mixed')} "
     "bytes per parameter with mixed-precision",
    # the serving planner's FP8 checkpoint (vLLM's W8A8 products, vllm2026fp8)
    lambda: f"at one request every {({10: 'ten'})[round(1 / LIGHT_QPS)]} seconds",
    lambda: "gives Llama 3 70B on eight H100s each token "
     f"{served_fp8_sooner('H100 SXM'):.2f}× sooner in FP8 than in BF16",
    lambda: f"multiply the FP8 weights in BF16, {served_fp8_sooner('A100 80GB'):.2f}×",
    lambda: f"the eight H100s give {served_fp8_speedup():.2f}× the tokens per second of BF16, "
     f"the A100s {served_fp8_speedup('A100 80GB'):.2f}×",
    # Section 1: the paper's Figure 2 setting on the roofline
    lambda: f"The forward pass does {units.format_flops(ATTN_FLOPS, digits=1)} and standard "
     f"attention moves {gb(STD_BYTES, 2)}. On an A100 "
     f"({units.format_flop_rate(PEAK, digits=0)} dense FP16, "
     f"{units.format_bandwidth(BW, digits=3)}) the arithmetic needs {ms(ATTN_FLOPS / PEAK)} "
     f"and the traffic {ms(STD_BYTES / BW)}: a {{term}}`roofline` bound of "
     f"{ms(roofline_time(STD_BYTES))}, {roofline.bound(ATTN_FLOPS / STD_BYTES, PEAK, BW)}-bound "
     f"by a factor of almost {WORDS[math.ceil(STD_BYTES / BW / (ATTN_FLOPS / PEAK))]}. The "
     f"{{term}}`arithmetic intensity` is {ATTN_FLOPS / STD_BYTES:.0f} FLOP/byte, far below "
     f"the A100's {{term}}`ridge point` of {A100.ridge_point('fp16'):.0f}.",
    lambda: "The pretend SRAM is the A100's "
     f"{SRAM // 1024} KiB, and the arrays are float32 "
     f"({memory.precision_bytes('fp32'):.0f} bytes), so the tiles hold "
     "{} keys and {} queries.".format(*optimisations.flash_attention_tiles(
        seq_len=1024, head_dim=64, sram_bytes=SRAM, bytes_per_element=4)[:2]),
    lambda: "at $d = 64$ FlashAttention moves about "
     f"{ratio_range(64)} times fewer bytes at long sequences, at $d = 128$ only about "
     f"{ratio_range(128)} times fewer",
    lambda: "The roofline predicts a forward pass up to "
     f"{roofline_time(STD_BYTES) / roofline_time(FLASH_BYTES):.1f} "
     "times faster",
    lambda: "attention in FP32 does about "
     f"{fp32_intensity(1024):.0f} "
     "FLOP per byte even in its standard form",
    lambda: f"sits far below a ridge point of about {round(A100.ridge_point('fp16'), -2):.0f} "
     "FLOP/byte",
    lambda: "Against the H100 SXM's dense FP16\npeak the 740 TFLOP/s are "
     f"{pct(flops.utilization(740e12, H100.dense('fp16')))}",
    lambda: "they are about {} of section 1's {} for the\nforward pass alone".format(
        "a quarter" if round(4 * 66.6e9 / _fig2_forward_flops()) == 1 else "?",
        units.format_flops(_fig2_forward_flops(), digits=1)),
    lambda: f"FlashAttention does {pct(75.2 / 66.6 - 1)}\nmore arithmetic and takes "
     + ("under a fifth" if 7.3 / 41.7 < 0.2 else "?") + " of the time",
    lambda: f"its intensity is about {ATTN_FLOPS / STD_BYTES:.0f} FLOP/byte against an A100 "
     f"ridge point of about {round(A100.ridge_point('fp16'), -2):.0f}",
    # Section 2: checkpointing
    lambda: f"About {STATE.activations / 1e9:.0f} GB of "
     "activations",
    lambda: "Korthikanti et al.'s count would "
     f"say {GPT_FORMULA / 1e9:.0f} GB",
    lambda: "while the layer keeps about "
     f"${PER_LAYER / (4096 * LLAMA.hidden):.0f}\\,sbh$",
    lambda: "memory climbs to all "
     f"{optimisations.activation_memory_without_checkpointing(layers=16, per_layer_bytes=1):.0f}"
     " layers at the end of the forward pass. With 4 segments the forward pass leaves only 4 "
     "checkpoints, and the backward pass rebuilds one segment at a time: the peak is "
     f"4 + {math.ceil(16 / 4)} = {chen(16, 4):.0f} layers, and the step takes longer (the "
     f"curve is wider: {optimisations.recompute_overhead() * 3 * 16:.0f} more layer "
     "forwards).",
    lambda: f"For GPT-3's {GPT3_LAYERS} layers",
    lambda: "Anything from about "
     f"{span(segments_within(GPT3_LAYERS, 1))} segments keeps about "
     f"{optimisations.checkpoint_memory(layers=GPT3_LAYERS, per_layer_bytes=1):.0f} layers' "
     f"worth instead of {GPT3_LAYERS}; {span(segments_within(GPT3_LAYERS, 0))} segments all "
     f"keep exactly {optimisations.checkpoint_memory(layers=GPT3_LAYERS, per_layer_bytes=1):.0f}"
     ", and the calculator picks the one nearest "
     f"$\\sqrt{{{GPT3_LAYERS}}} \\approx {math.sqrt(GPT3_LAYERS):.1f}$",
    lambda: "With checkpoints "
     f"{PER_LAYER / CHECKPOINT:.0f} times smaller than a layer",
    lambda: f"{LLAMA.layers} layer inputs plus "
     f"one layer being rebuilt, {gb(FULL + PER_LAYER)} instead of "
     f"{STATE.activations / 1e9:.0f} GB. Korthikanti et al.'s table counts the "
     f"{LLAMA.layers} inputs, {gb(FULL)}",
    lambda: "most of a GPT-style layer's "
     f"{gb(GPT_PER_LAYER, 2)}",
    lambda: "Selective recomputation cuts the GPT formula's activations from "
     f"{GPT_FORMULA / 1e9:.0f} GB to {gb(SELECTIVE)}, "
     f"{GPT_FORMULA / SELECTIVE:.1f} times less, for {pct(SELECTIVE_EXTRA, 1)} more "
     "FLOPs: it repeats both of attention's products, $QK^\\top$ and $PV$. FlashAttention "
     f"lands at {gb(STATE.activations)} for "
     + {0.5: "half"}[round(FLASH_EXTRA / SELECTIVE_EXTRA, 3)]
     + f" of that, {pct(FLASH_EXTRA, 1)}",
    lambda: "Counted with the same real sizes, checkpointing goes down to "
     f"{gb(checkpointed(CHEN_K))} with Chen et al.'s $k = {CHEN_K}$ segments and to "
     f"{gb(checkpointed(LLAMA.layers))} with a checkpoint at every layer ({LLAMA.layers} "
     "layer inputs and the layer being rebuilt), both for one more forward pass on top of "
     f"FlashAttention's share, {pct(CHECKPOINT_EXTRA, 1)} in all.",
    lambda: f"about {pct(optimisations.recompute_overhead())} "
     "*slower* per token",
    # Section 3: the number formats (gpulesson.precision), the model state, the peaks
    lambda: f"({FP16.fraction_bits} fraction bits, about "
     f"{WORDS[math.floor(FP16.decimal_digits)]} decimal digits) and has little range: nothing "
     f"above {FP16.largest:,.0f}, and below its smallest *normal* number, "
     f"${sci(FP16.smallest_normal)}$, it keeps going only with *subnormal* numbers that lose a "
     f"bit of precision for every halving, down to ${sci(FP16.smallest_subnormal)}$. Anything "
     f"smaller than half of that, $2^{{{round(math.log2(FP16.smallest_subnormal / 2))}}}"
     f"\\approx {sci(FP16.smallest_subnormal / 2)}$, rounds to zero.",
    lambda: f"a relative step of $2^{{-{BF16.fraction_bits}}}\\approx "
     f"{100 * BF16.epsilon:.1f}\\,\\%$",
    lambda: f"past {FP16.largest:,.0f} to infinity",
    lambda: "its smallest normal number is FP32's, "
     f"${sci(float_format('fp32').smallest_normal)}$",
    lambda: "the spacing of numbers near 1 is "
     f"$2^{{{round(math.log2(FP16.epsilon))}}}\\approx 10^{{{round(math.log10(FP16.epsilon))}}}$"
     f" in FP16 and $2^{{{round(math.log2(BF16.epsilon))}}}$ in BF16",
    lambda: f"{model_state('mixed')} = {memory.bytes_per_param('mixed')} bytes per parameter, "
     f"the same {memory.bytes_per_param('fp32')} as FP32's {model_state('fp32')}",
    lambda: f"Our example lands at {pct(mixed_saving())}",
    lambda: "the 16-bit Tensor Core peak is "
     f"{fp32_rate_ratio('V100 SXM'):.0f} times higher on a V100 (which has no BF16 and no "
     "TF32; its FP16 figure is shown), about "
     f"{fp32_rate_ratio('H100 SXM'):.0f} to {fp32_rate_ratio('A100 80GB'):.0f} times on an "
     f"A100 or H100 and {fp32_rate_ratio('B200'):.0f} times on a B200; against TF32, the "
     "Tensor Core mode that frameworks may use for FP32 matrix products, it is exactly "
     f"{tf32_ratio()} times",
    # Key takeaways
    lambda: f"about {pct(optimisations.recompute_overhead())} more "
     "FLOPs",
    lambda: f"mixed precision keeps {memory.bytes_per_param('mixed')} bytes of model state per "
     "parameter, as FP32 does" if memory.bytes_per_param("fp32") == memory.bytes_per_param(
        "mixed") else "differs from FP32",
    # Section 3b: FP8 training
    lambda: f"An H100's dense FP8 peak, {H100.dense('fp8') / 1e12:,.1f} TFLOP/s, is "
     + {2: "twice"}[round(H100.dense("fp8") / H100.dense("bf16"))] + " its BF16 peak",
    lambda: "ran at "
     f"{fp8_share(390e12, 'bf16')} of the H100's dense BF16 peak",
    lambda: f"and at {fp8_share(390e12, 'fp8')} of its FP8 "
     "peak",
    lambda: "make at least "
     f"{pct(math.floor(100 * flops.utilization(deepseek_v3_rate(), H100.dense('bf16'))) / 100)}"
     " of the BF16 peak",
    # the parts the box names are the recipe's parts, so that they add up to its bytes
    lambda: "DeepSeek-V3 keeps {weights} weights for the products, {gradients} gradients, "
     "{master_weights} master weights and gradient accumulators, and {first_moment} Adam "
     "moments: {total:g} bytes per parameter".format(
        **{k: v.upper() for k, v in recipe("deepseek_v3").parts.items()},
        total=sum(recipe_bytes("deepseek_v3").values())) if (
        recipe("deepseek_v3").parts["accumulated_gradients"]
        == recipe("deepseek_v3").parts["master_weights"]
        and sum(recipe_bytes("deepseek_v3").values())
        == memory.bytes_per_param("fp8_deepseek_v3")) else "recipes disagree",
    lambda: f"{memory.bytes_per_param('fp8_deepseek_v3')} bytes "
     "per parameter",
    lambda: f"against {memory.bytes_per_param('mixed')}"
     " for BF16 mixed precision",
    lambda: f"(Llama 4 Behemoth: {fp8_share(390e12, 'bf16')})",
)

#: Numbers of the prose that are not results of the calculators.
NOT_FIGURES = (
    # number formats' widths and powers of ten in the maths
    "16-bit", "32-bit", "16 bits instead of 32", "10^{-",
    # Dao et al. 2022 (FlashAttention), Figure 2 and section 4: the setting and its
    # measurements on an A100
    "ran GPT-2 medium's attention 5.7 times faster than the standard implementation on an "
    "A100: 7.3 ms against 41.7 ms for forward and backward, while reading and writing 4.4 GB "
    "of HBM instead of 40.3 GB",
    "$N = 1024$, $d = 64$, 16 heads, batch 64", "the same size as the 5.7 measured",
    "The paper's 40.3 GB and 4.4 GB", "(5.7× in Figure 2)",
    "the paper reports 75.2 against 66.6 GFLOPs, and 7.3 against 41.7 ms",
    # Shah et al. 2024 (FlashAttention-3), abstract: FP8 "close to 1.2 PFLOPs/s"
    "close to\n1.2 PFLOP/s in FP8", 'quote as "1.2 PFLOPS"',
    # shared memory per SM (NVIDIA A100 and H100 architecture whitepapers)
    "(192 KiB per SM on an A100, 256 KiB on an H100)", "or an H100 with its 256 KiB",
    # published figures of FP8 training: DeepSeek-AI 2024 (section 3.3 and Table 1), PyTorch
    # torchao's float8 pre-training page, Meta's Llama 4 announcement, Llama 3 (Table 4)
    "tiles of 1 × 128 activations and blocks of 128 × 128 weights",
    # pytorch2026torchaotraining (torchao's quantized-training page, 2026-03-25)
    "up to 1.25× for FP8 pre-training of an\n8B model on 8 GPUs and up to 1.5× for a 405B "
    "model on 512 GPUs", "1.34 to 1.43× on 2,048 H200s",
    "on 32,768 GPUs at 390 TFLOP/s each", "BF16 runs did (38–43 %)",
    "14.8T tokens in 2.664M H800 GPU-hours",
    "(torchao publishes up to 1.25× for an 8B model on 8 GPUs, up to 1.5× for\n405B on 512)",
    # a lesson's number in a link
    "[lesson 10](planning_dashboard.ipynb)",
    # inputs the lesson chooses
    "also at $N = 1000$", "from 256 to 131,072 tokens", "try $d = 128$",
    "on 4,096-token sequences", "Llama 2 7B at 4,096 tokens", "training step of 16 layers",
    "for 64 layers",
    # Shah et al. 2024 (FlashAttention-3), abstract
    "FlashAttention-2 reached about 35 % of an H100's peak",
    "runs 1.5 to 2.0 times faster, up to 740 TFLOP/s in FP16",
    # Zadouri et al. 2026 (FlashAttention-4), abstract
    "up to 1,613 TFLOP/s in BF16 on a B200 (71 % utilization, by its authors' count)",
    # figures that circulate, quoted to be checked
    '"memory usage 2.1 GB, speed-up 2.8×, memory reduction 65 %"', 'The "+20 %" that '
    "circulates", '"mixed precision saves 37 %" (or "10 bytes per parameter instead of 16")',
    "the figure of 37 % that circulates", 'A "Tensor Core speed-up of 3.5×"', "not 20 %",
    # Chen et al. 2016, section 5: their measurement
    "Chen et al. report 30 % more running time for a 1,000-layer network whose memory fell "
    "from 48 GB to 7 GB",
    # Korthikanti et al. 2022's activation formula
    "$sbh(34 + 5as/h)$",
    # read off the seeded loss-scaling experiment's plot (its table is pinned by
    # nbval-check-output); PyTorch's GradScaler defaults (torch.amp documentation)
    "Between roughly $S = 2^{12}$ and $2^{20}$",
    "starts at $2^{16}$, skips the step and halves $S$ whenever a gradient is infinite or "
    "NaN, and doubles $S$ after 2,000 steps",
    "to a weight of 1.0 a thousand times",
)


# ---------------------------------------------------------------------------------------
# The page


def test_skeleton_of_the_house_style() -> None:
    nb.check_skeleton(SLUG, "Optimisations that Change the Math", set_up=True, headings=(
        "## 1. FlashAttention", "## 2. Gradient checkpointing", "## 3. Mixed precision"))


(test_claim, test_every_figure_is_claimed,
 test_every_listed_non_figure_is_on_the_page) = claim_tests(__name__, NOTEBOOK)


def test_every_pause_and_think_hides_its_answer() -> None:
    nb.check_pauses_hide_answers(nb.markdown(NOTEBOOK), at_least=3)


def test_calculators_are_this_lessons_registry_entries() -> None:
    nb.check_registry_widgets(SLUG, {"flash_attention", "checkpointing"})


def test_every_term_is_in_the_glossary() -> None:
    assert len(nb.check_terms_in_glossary(nb.markdown(NOTEBOOK))) >= 20


def test_every_citation_is_in_the_bibliography() -> None:
    cited = nb.check_citations_in_bibliography(nb.markdown(NOTEBOOK))
    assert {"dao2022flashattention", "shah2024flashattention3", "chen2016sublinear",
            "korthikanti2022reducing", "micikevicius2018mixed"} <= cited


def test_implementations_are_checked_against_the_calculators_in_view() -> None:
    """The byte counters of both attentions are compared with the calculator's counts and
    the outputs with each other; the simulated schedule's peak with checkpoint_memory for
    every k at many depths, its best k with optimal_segments, and its peak in bytes with
    training_memory. Each check prints in a visible cell whose output nbval compares with
    the book build's."""
    cells = [(src, tags) for src, tags in nb.code_cells(NOTEBOOK) if "remove-cell" not in tags]
    checks = {
        "np.testing.assert_allclose(out_flash, out_std": "standard_attention(Q, K, V, hbm_std)",
        "matches.append(counted[n] == (calc_std, calc_flash))": "all(matches)",
        "peak == optimisations.checkpoint_memory(": "simulate_checkpointing(n, k)",
        "== optimisations.optimal_segments(n)": "abs(k - math.sqrt(n))",
        'recompute="full").activations': "peak_bytes ==",
    }
    for check, beside in checks.items():
        holder = [tags for src, tags in cells if check in src and beside in src]
        assert len(holder) == 1, check
        assert "nbval-check-output" in holder[0], check
    visible = "\n".join(src for src, _ in cells)
    # timings are measured with the course's benchmark on the lesson's device, one BLAS thread
    assert "benchmark(standard_attention" in visible and "threadpool_limits(1" in visible
    assert 'sizes_for(dev, "gemm")' in visible


# ---------------------------------------------------------------------------------------
# The float formats (gpulesson.precision) and the bank's helper against NumPy


def test_bf16_limits_from_its_bit_patterns() -> None:
    """BF16 (Kalamkar et al. 2019) is the top half of FP32: 0x7F7F is its largest finite
    value, 0x0080 its smallest normal (FP32's), 0x0001 its smallest subnormal, and the next
    number after 1.0 (0x3F80) is 0x3F81."""
    def from_bits(pattern: int) -> float:
        return float(np.uint32(pattern << 16).view(np.float32))

    spec = float_format("bf16")
    assert spec.largest == from_bits(0x7F7F)
    assert spec.smallest_normal == from_bits(0x0080) == float(np.finfo(np.float32).tiny)
    assert spec.smallest_subnormal == from_bits(0x0001)
    assert spec.epsilon == from_bits(0x3F81) - 1.0


def test_bf16_limits_match_ml_dtypes_where_installed() -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    spec, info = float_format("bf16"), ml_dtypes.finfo(ml_dtypes.bfloat16)
    assert spec.largest == float(info.max) and spec.epsilon == float(info.eps)
    assert spec.smallest_normal == float(info.smallest_normal)


def test_rounds_to_zero_matches_numpy_casts() -> None:
    """Round-to-nearest-even: FP16 turns everything up to 2^-25 into zero, nothing above."""
    fp16, bf16 = float_format("fp16"), float_format("bf16")
    values = np.geomspace(1e-44, 1e-4, 4001)
    for x in values:
        assert fp16.rounds_to_zero(float(x)) == (float(np.float16(x)) == 0.0), x
        assert bf16.rounds_to_zero(float(x)) == (float(_to_bf16(np.float32(x))) == 0.0), x
    assert fp16.rounds_to_zero(2.0**-25) and not fp16.rounds_to_zero(2.0**-25 * 1.0001)
    with pytest.raises(ValueError, match="value"):
        fp16.rounds_to_zero(float("nan"))
    with pytest.raises(KeyError, match="fp16"):
        float_format("fp8")


def test_merged_softmax_sum_equals_a_direct_log_sum_exp() -> None:
    """Milakov and Gimelshein 2018: merging two parts' (max, sum) gives the whole row's."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        row = rng.normal(0, 30, size=rng.integers(2, 50))
        cut = int(rng.integers(1, len(row)))
        a, b = row[:cut], row[cut:]
        m = row.max()
        merged = BANK.merged_softmax_sum(a.max(), np.exp(a - a.max()).sum(),
                                         b.max(), np.exp(b - b.max()).sum())
        assert math.isclose(merged, np.exp(row - m).sum(), rel_tol=1e-12)
    with pytest.raises(ValueError, match="l_a"):
        BANK.merged_softmax_sum(0.0, -1.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="m_b"):
        BANK.merged_softmax_sum(0.0, 1.0, float("inf"), 1.0)


# ---------------------------------------------------------------------------------------
# The exercises


def test_exercise_bank_promises() -> None:
    exercises = BANK.EXERCISES
    assert len(exercises) >= 5
    assert {ex.kind for ex in exercises} == {"numeric", "choice", "predict", "code"}
    keys = {m.key for ex in exercises for m in ex.mistakes}
    for mistake in ("counted_numbers", "scores_once", "no_rescaling", "no_checkpointing",
                    "segment_only", "twenty_percent", "whole_step_again", "subnormal",
                    "precision_for_range", "quoted_percentage", "forgot_master_copy",
                    "used_sparse_peak"):
        assert mistake in keys, mistake
    sources = nb.check_exercise_notebook(SLUG)
    assert "lesson.reveal(3, ratio)" in "\n".join(sources)


def test_exercise_answers_agree_with_numpy() -> None:
    """The lesson's own numbers: standard attention at N = 4096, d = 128 in BF16 moves
    (4Nd + 4N^2) x 2 bytes (Dao et al. 2022, Algorithm 0); FP16's smallest normal is
    2^-14; a gradient of 1e-8 survives only in BF16; 64 layers need 16 layers' worth."""
    by_number = {ex.number: ex for ex in BANK.EXERCISES}
    assert by_number[1].answer_value() == (4 * 4096 * 128 + 4 * 4096**2) * 2
    assert by_number[4].answer_value() == 16 * 1.5e9
    assert by_number[6].answer_value() == float(np.finfo(np.float16).smallest_normal)
    for seed in (None, 0, 1, 2, 3, 7, 42):
        ex = by_number[7].variant(seed)
        value = ex.inputs["value"]
        fp16_keeps = float(np.float16(value)) != 0
        bf16_keeps = float(_to_bf16(np.float32(value))) != 0
        expected = {(True, True): "both", (False, True): "bf16", (True, False): "fp16",
                    (False, False): "neither"}[(fp16_keeps, bf16_keeps)]
        assert ex.answer_value() == expected
    assert by_number[8].answer_value() == "none"
    code = by_number[2]
    assert code.check(code.model_solution).correct
    assert code.check(lambda m_a, l_a, m_b, l_b: l_a + l_b).mistake == "no_rescaling"


def test_fp8_exercise_is_amdahls_law():
    """PyTorch torchao's float8 pre-training reports 1.34-1.5x, not the 2x of the H100's
    FP8 peak over BF16 (datasheet): with 70 % of the step in FP8-able products Amdahl's law
    allows 1/(0.3 + 0.35) = 1.54x; the peak ratio is the declared mistake."""
    ex = next(e for e in BANK.EXERCISES if e.number == 10)
    assert ex.answer_value() == pytest.approx(1 / (0.3 + 0.7 / 2))
    assert ex.check("2").mistake == "peak_ratio"
    assert 1.34 <= ex.answer_value() <= 1.6


# ---------------------------------------------------------------------------------------
# Going further: FP8 recipes, tensor by tensor (MS-AMP's level table for FP8-LM; the
# Ultra-Scale Playbook's FP8 table; DeepSeek-AI 2024, section 3.3)


def _recipe_bytes(name: str) -> str:
    from gpulesson import fp8_training

    return f"{fp8_training.recipe_bytes_per_param(name):g} bytes"


def _moments() -> str:
    from gpulesson import fp8_training

    o1, o2 = (fp8_training.optimizer_state_bytes(f"fp8lm_{lv}") for lv in ("o1", "o2"))
    return f"the\nmoments falling from {o1:g} bytes to {o2:g} ({1 - o2 / o1:.1%} less)"


def _state(name: str) -> str:
    from gpulesson import fp8_training

    return units.format_bytes(fp8_training.recipe_state_memory(70e9, name))


GOING_FURTHER = claims(
    lambda: "BF16 mixed precision keeps {} with an FP32 accumulation buffer, {} without"
     .format(_recipe_bytes("bf16_fp32_accum"), _recipe_bytes("bf16").split()[0]),
    lambda: "stores everything in FP32, also\n"
     + _recipe_bytes("transformer_engine"),
    lambda: "FP8 gradients,\n" + _recipe_bytes("fp8lm_o1"),
    lambda: "its second in FP16, " + _recipe_bytes("fp8lm_o2"),
    _moments,
    lambda: "master weights, for ZeRO, "
     + _recipe_bytes("fp8lm_o3"),
    lambda: "FP32 master weights and "
     "accumulation: " + _recipe_bytes("deepseek_v3"),
    lambda: "BF16 master weights and "
     "FP32 accumulation, " + _recipe_bytes("nanotron_fp8"),
    lambda: f"For a 70B model that is {_state('bf16_fp32_accum')} of model state with BF16 "
     f"and FP32 accumulation against\n{_state('fp8lm_o2')} with FP8-LM's O2",
)
# test_every_figure_is_claimed counts these texts as covered; test_going_further_claim
# checks them
NOT_FIGURES += tuple(c.text for c in GOING_FURTHER)


test_going_further_claim = claim_test(GOING_FURTHER, page(NOTEBOOK), NOTEBOOK.name)
