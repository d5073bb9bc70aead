"""Exercises of lesson 9, *Optimisations that Change the Math*.

The exercise notebook is ``exercises/optimisations.ipynb``.

They practise what the lesson teaches: the HBM bytes of standard attention, merging two
partial softmax states (the heart of FlashAttention's online softmax, as code), how the
tiled NumPy attention compares with the standard one on a CPU (predict, then run), the
best checkpointing schedule for a deep model and its memory, the FLOPs of full activation
recomputation, the smallest normal number of a 16-bit format, which format keeps a tiny
gradient, what mixed precision saves with Adam, and the Tensor Core speed-up from a GPU's
published specifications.

Every answer and every figure in a worked solution comes from the calculators
(:mod:`gpulesson.optimisations`, :mod:`gpulesson.memory`, :mod:`gpulesson.flops`,
:mod:`gpulesson.hardware`, :mod:`gpulesson.transformer`, :mod:`gpulesson.precision` for
the limits of FP32, FP16 and BF16) or from the small helper defined here,
:func:`merged_softmax_sum` (the online-softmax update), which the lesson checks against
NumPy. Standard library only.
"""

from __future__ import annotations

import math
from typing import Any

from gpulesson import course, flops, hardware, memory, optimisations, roofline, transformer
from gpulesson.exercises import core, mistakes, wording
from gpulesson.exercises.bank import _common
from gpulesson.exercises.bank._common import H100, P, config
from gpulesson.exercises.core import Mistake
from gpulesson.precision import FloatFormat, float_format
from gpulesson.units import format_bytes

LESSON = "optimisations"
TITLE = course.title(LESSON)


# ---------------------------------------------------------------------------------------
# Helper: the online-softmax update (float formats: gpulesson.precision)

def merged_softmax_sum(m_a: float, l_a: float, m_b: float, l_b: float) -> float:
    """Merge two partial softmax statistics: the sum relative to the common maximum.

    A part of a row of scores is summarised by its maximum ``m`` and ``l = sum(exp(x - m))``.
    Two parts combine into ``m = max(m_a, m_b)`` and
    ``l = l_a * exp(m_a - m) + l_b * exp(m_b - m)`` (Milakov and Gimelshein 2018;
    FlashAttention's online softmax, Dao et al. 2022, Algorithm 1). Taught in:
    ``optimisations`` (FlashAttention).
    """
    values = []
    for label, x in (("m_a", m_a), ("l_a", l_a), ("m_b", m_b), ("l_b", l_b)):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            raise ValueError(f"{label} must be a finite number, got {x!r}")
        values.append(float(x))
    ma, la, mb, lb = values
    if la < 0 or lb < 0:
        raise ValueError(f"l_a and l_b must be non-negative sums, got {la!r} and {lb!r}")
    m = max(ma, mb)
    return la * math.exp(ma - m) + lb * math.exp(mb - m)


# ---------------------------------------------------------------------------------------
# 1. HBM bytes of standard attention

def _bytes_text(x: float) -> str:
    return format_bytes(x, digits=1)


def _std_bytes(p: P, element_bytes: float | None = None) -> int:
    e = memory.precision_bytes(p["dtype"]) if element_bytes is None else element_bytes
    return optimisations.standard_attention_hbm_bytes(seq_len=p["n"], head_dim=p["d"],
                                                      bytes_per_element=e)


def _square_bytes(p: P) -> float:
    """Bytes of one N x N matrix in the question's precision."""
    return memory.weight_bytes(p["n"] * p["n"], precision=p["dtype"])


def _std_derived(p: P) -> dict[str, Any]:
    n, d = p["n"], p["d"]
    e = memory.precision_bytes(p["dtype"])
    return {"n_text": wording.count(n), "d_text": wording.count(d),
            "prec": wording.precision_label(p["dtype"]),
            "e": core.format_number(e),
            "elements": wording.count(_std_bytes(p, 1)),
            "square": wording.count(n * n), "nd": wording.count(n * d),
            "scores": _bytes_text(_square_bytes(p)),
            "flash": _bytes_text(optimisations.flash_attention_hbm_bytes(
                seq_len=n, head_dim=d, sram_bytes=192 * 1024, bytes_per_element=e))}


standard_attention_bytes = core.NumericExercise(
    lesson=LESSON, number=1, title="HBM traffic of standard attention at N = {n_text}",
    question=(
        "One attention head with N = {n_text} tokens and head size d = {d_text}, in {prec} "
        "({e} bytes per number). The standard implementation runs three kernels: S = QKᵀ "
        "(read Q and K, write S), P = softmax(S) (read S, write P), O = PV (read P and V, "
        "write O). How many bytes does its forward pass read from and write to HBM?"
    ),
    hints=("Count numbers first: each N×d matrix is N·d numbers, each N×N matrix N².",
           "Kernel 1 moves 2Nd + N², kernel 2 moves 2N², kernel 3 moves N² + 2Nd. Then "
           "multiply by {e} bytes."),
    solution=(
        "Kernel 1: 2Nd + N²; kernel 2: 2N²; kernel 3: N² + 2Nd. In all 4Nd + 4N² = "
        "4 × {nd} + 4 × {square} = {elements} numbers, at {e} bytes each **{answer}**.\n\n"
        "The N×N matrices are almost all of it: each is {scores}, and it goes through "
        "memory four times. FlashAttention never writes them; with an A100's 192 KiB of "
        "SRAM per SM it moves {flash} for the same head "
        "(`optimisations.flash_attention_hbm_bytes`)."
    ),
    answer=_std_bytes,
    derived=_std_derived,
    mistakes=(
        Mistake("counted_numbers",
                "That is the number of values moved, not bytes: multiply by {e} bytes per "
                "{prec} number.",
                lambda p: _std_bytes(p, 1)),
        Mistake("four_byte_numbers",
                "You used 4 bytes per number (FP32); {prec} numbers take {e} bytes.",
                lambda p: None if memory.precision_bytes(p["dtype"]) == 4
                else _std_bytes(p, 4)),
        Mistake("scores_once",
                "You counted the N×N matrices once. S is written and read back, then P is "
                "written and read back: 4N² numbers in all, plus 4Nd for Q, K, V and O.",
                lambda p: _std_bytes(p) - 3 * _square_bytes(p)),
        Mistake("inputs_and_output_only",
                "That is only Q, K, V and O (4Nd numbers), the minimum any attention must "
                "move. The standard implementation also writes S and P to HBM and reads "
                "them back.",
                lambda p: _std_bytes(p) - 4 * _square_bytes(p)),
    ),
    defaults={"n": 4096, "d": 128, "dtype": "bf16"},
    sample=lambda rng: {"n": rng.choice([1024, 2048, 4096, 8192, 16384, 32768]),
                        "d": rng.choice([64, 80, 128]),
                        "dtype": rng.choice(["bf16", "fp16"])},
    dimension="bytes", unit="MB", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 2. Code: merge two partial softmax states

def _merge_model(m_a, l_a, m_b, l_b):
    # Re-express both sums relative to the larger maximum, then add them.
    m = max(m_a, m_b)
    return l_a * math.exp(m_a - m) + l_b * math.exp(m_b - m)


def _row_state(values: list[float]) -> dict[str, float]:
    """Maximum and sum of exp(x - max) of a list of scores (example inputs)."""
    m = max(values)
    return {"m": m, "l": sum(math.exp(x - m) for x in values)}


_LEFT, _RIGHT = _row_state([1.0, 3.0, -2.0]), _row_state([7.5, 0.5, 7.0, -1.0, 2.0])


def _merge_sample(rng) -> dict[str, float]:
    return {"m_a": round(rng.uniform(-40, 40), 3), "l_a": round(rng.uniform(1, 500), 3),
            "m_b": round(rng.uniform(-40, 40), 3), "l_b": round(rng.uniform(1, 500), 3)}


merge_softmax_states = core.CodeExercise(
    lesson=LESSON, number=2, title="Write merge_sums: combine two partial softmax states",
    question=(
        "FlashAttention (and split-KV decoding) computes the softmax of a row of scores in "
        "parts. A part is summarised by its maximum `m` and its sum `l = Σ exp(x − m)`. "
        "Write `merge_sums(m_a, l_a, m_b, l_b)` that returns the sum `l` of the two parts "
        "together, relative to their common maximum `max(m_a, m_b)`. It is checked "
        "against the lesson's update on the lesson's row and on random inputs with scores "
        "up to ±40, so `exp` of a raw score would overflow."
    ),
    hints=("Both sums must be expressed relative to the same maximum before you add them.",
           "exp(x − m_a) = exp(x − m) · exp(m_a − m): multiply l_a by exp(m_a − m), and "
           "the same for b."),
    solution=(
        "Let `m = max(m_a, m_b)`. Every term of `l_a` is `exp(x − m_a)`; relative to `m` it "
        "is `exp(x − m_a) · exp(m_a − m)`, so `l_a` becomes `l_a · exp(m_a − m)`, a factor "
        "at most 1, and the same for `l_b`. Adding them gives the merged sum. The lesson's "
        "row [1, 3, −2 | 7.5, 0.5, 7, −1, 2] in two parts: m = 7.5 and l = "
        + core.format_number(merged_softmax_sum(_LEFT["m"], _LEFT["l"], _RIGHT["m"], _RIGHT["l"]),
                             6)
        + ". Because every exponent is ≤ 0, nothing overflows, which is why the maximum is "
        "carried along at all."
    ),
    function_name="merge_sums", signature="m_a, l_a, m_b, l_b",
    reference=merged_softmax_sum,
    sample_input=_merge_sample,
    examples=({"m_a": _LEFT["m"], "l_a": _LEFT["l"], "m_b": _RIGHT["m"], "l_b": _RIGHT["l"]},
              {"m_a": _RIGHT["m"], "l_a": _RIGHT["l"], "m_b": _LEFT["m"], "l_b": _LEFT["l"]}),
    mistakes=(
        Mistake("no_rescaling",
                "Your function adds the two sums as they are. They are relative to different "
                "maxima: rescale each by exp(its maximum − the common maximum) first.",
                lambda i: i["l_a"] + i["l_b"]),
        Mistake("inverted_factor",
                "Your rescaling factor is upside down: exp(m − m_a) instead of exp(m_a − m). "
                "Moving to a larger maximum makes the old sum smaller, never larger.",
                lambda i: (lambda m: i["l_a"] * math.exp(m - i["m_a"])
                           + i["l_b"] * math.exp(m - i["m_b"]))(max(i["m_a"], i["m_b"]))),
        Mistake("smaller_maximum",
                "You rescaled both sums to the **smaller** of the two maxima. Use the larger "
                "one, m = max(m_a, m_b), so that every factor exp(m_part − m) is at most 1 "
                "and nothing can overflow.",
                lambda i: (lambda m: i["l_a"] * math.exp(i["m_a"] - m)
                           + i["l_b"] * math.exp(i["m_b"] - m))(min(i["m_a"], i["m_b"]))),
    ),
    model_solution=_merge_model,
    rtol=1e-9,
)


# ---------------------------------------------------------------------------------------
# 3. Predict, then run: tiled attention against standard attention on a CPU

def _tiled_derived(p: P) -> dict[str, Any]:
    e = memory.precision_bytes("fp32")
    shape = {"seq_len": p["n"], "head_dim": 64, "bytes_per_element": e}
    return {"fewer": core.format_number(
        optimisations.standard_attention_hbm_bytes(**shape)
        / optimisations.flash_attention_hbm_bytes(sram_bytes=192 * 1024, **shape), 2)}


tiled_on_cpu = core.PredictExercise(
    lesson=LESSON, number=3, title="Tiled attention on a CPU: predict, then run",
    question=(
        "The next cells time the lesson's two NumPy attentions on this machine's CPU for "
        "N = {n} tokens and d = 64: the standard one (three large array operations, with "
        "the N×N matrix in memory) and the tiled FlashAttention loop (tiles of 192 keys and "
        "64 queries, the online softmax, never an N×N matrix).\n\n"
        "Before running them: **how many times longer** do you expect the tiled version to "
        "take than the standard one? (Below 1 means you expect it to be faster. By the "
        "lesson's byte count the tiled version moves {fewer}× fewer bytes at this size.)"
    ),
    hints=("The tiled version moves fewer bytes. On this CPU, is attention limited by "
           "memory or by arithmetic? Compare its intensity, about 15 FLOP/byte in FP32, "
           "with a CPU's ridge point of a few to a few tens of FLOP/byte.",
           "Count the NumPy calls: the standard version makes a handful of large ones; the "
           "tiled one makes about a dozen small ones per tile, each with microseconds of "
           "overhead. But its tiles stay in the CPU's cache."),
    solution=(
        "On a CPU the two usually take about the same time, within a factor of two either "
        "way, although the tiled version moves several times fewer bytes. A CPU's ridge "
        "point is a few FLOP per byte, so attention in FP32 (about 15 FLOP/byte) is limited "
        "by arithmetic there, and saving bytes saves no time. On top of that the Python loop "
        "pays overhead on every small call (which hurts at small N), while the tiles stay in "
        "cache (which helps a little at large N). On a GPU, with a ridge point of a few "
        "hundred FLOP/byte, attention is memory-bound and the byte saving is the speed-up, "
        "but only inside one fused kernel that keeps the tiles in shared memory: that is "
        "what the FlashAttention library provides."
    ),
    derived=_tiled_derived,
    defaults={"n": 512},
    dimension="count", unit="×", extra_units=wording.TIMES, good_within=3.0,
)


# ---------------------------------------------------------------------------------------
# 4. Best checkpointing for a deep model

def _ckpt_bytes(p: P, segments: int | None = None) -> float:
    return optimisations.checkpoint_memory(layers=p["layers"], per_layer_bytes=p["gb"] * 1e9,
                                           segments=segments)


def _no_ckpt_bytes(p: P) -> float:
    return optimisations.activation_memory_without_checkpointing(
        layers=p["layers"], per_layer_bytes=p["gb"] * 1e9)


def _ckpt_parts(p: P) -> tuple[int, int]:
    k = optimisations.optimal_segments(p["layers"])
    return k, -(-p["layers"] // k)


def _neighbour_k_bytes(p: P) -> float | None:
    """The peak with the best k's neighbour, k − 1 or k + 1, that keeps less (the solution
    names both); ``None`` where it ties with the best k (a flat minimum)."""
    k = _ckpt_parts(p)[0]
    near = min(_ckpt_bytes(p, j) for j in (k - 1, k + 1) if j >= 1)
    return None if near == _ckpt_bytes(p) else near


def _ckpt_derived(p: P) -> dict[str, Any]:
    k, seg = _ckpt_parts(p)
    return {"k": k, "seg": seg, "root": core.format_number(math.sqrt(p["layers"]), 3),
            "gb_text": core.format_number(p["gb"]),
            "without": _bytes_text(_no_ckpt_bytes(p)),
            "units": k + seg,
            "k_less": core.format_number(k - 1), "k_more": core.format_number(k + 1),
            "mem_less": _bytes_text(_ckpt_bytes(p, k - 1)) if k > 1 else "—",
            "mem_more": _bytes_text(_ckpt_bytes(p, k + 1))}


checkpoint_64_layers = core.NumericExercise(
    lesson=LESSON, number=4, title="Checkpointing {layers} layers",
    question=(
        "A model has {layers} layers, and each stores {gb_text} GB of activations for the "
        "backward pass. You split it into k segments, keep a checkpoint (counted as one "
        "layer's worth) at the start of each segment, and recompute one segment at a time "
        "in the backward pass, as Chen et al. do. With the best k, what is the peak "
        "activation memory, in GB?"
    ),
    hints=("At the worst moment memory holds every checkpoint plus the activations of one "
           "recomputed segment: k + ⌈L/k⌉ layers' worth.",
           "Try k near √{layers} ≈ {root}, and its neighbours."),
    solution=(
        "Memory is (k + ⌈{layers}/k⌉) layers' worth. The best is k = {k}: {k} checkpoints "
        "plus a segment of {seg} layers, {units} layers × {gb_text} GB = **{answer}** "
        "(`optimisations.checkpoint_memory`), instead of {without} without checkpointing. "
        "Neighbouring k are no better: k = {k_less} gives {mem_less}, k = {k_more} gives "
        "{mem_more}. The price is one extra forward pass, about a third more FLOPs, "
        "whatever k is."
    ),
    answer=_ckpt_bytes,
    derived=_ckpt_derived,
    mistakes=(
        Mistake("no_checkpointing",
                "That is all {layers} layers, the memory without checkpointing. Checkpointing "
                "keeps only the segment boundaries plus one segment at a time.",
                _no_ckpt_bytes),
        Mistake("segment_only",
                "You counted the recomputed segment ({seg} layers) but not the {k} "
                "checkpoints, which stay in memory through the backward pass.",
                lambda p: _ckpt_parts(p)[1] * p["gb"] * 1e9),
        Mistake("checkpoints_only",
                "You counted the {k} checkpoints but not the segment being recomputed "
                "({seg} layers), which is in memory at the same time.",
                lambda p: None if _ckpt_parts(p)[0] == _ckpt_parts(p)[1]
                else _ckpt_parts(p)[0] * p["gb"] * 1e9),
        Mistake("last_segment_kept",
                "That is one checkpoint less: PyTorch's checkpoint_sequential keeps the last "
                "segment's activations instead of checkpointing it. The question's schedule "
                "checkpoints all k segments, as Chen et al. do.",
                lambda p: (sum(_ckpt_parts(p)) - 1) * p["gb"] * 1e9),
        Mistake("neighbour_k",
                "Close, but that k is not the best one: k + ⌈{layers}/k⌉ is flat near "
                "√{layers} without being the same for every k there. Work it out for the k "
                "on either side of yours too.",
                _neighbour_k_bytes),
        # the lesson's 24 GB in GiB (22.35) is the one-checkpoint-less 22.5 GB
        _common.gib_as_gb_of(
            _ckpt_bytes, lambda p: (sum(_ckpt_parts(p)) - 1) * p["gb"] * 1e9),
    ),
    defaults={"layers": 64, "gb": 1.5},
    sample=lambda rng: {"layers": rng.choice([16, 24, 32, 40, 48, 60, 64, 80, 96, 100, 126]),
                        "gb": rng.choice([0.5, 1.5, 2, 3.25])},
    dimension="bytes", unit="GB", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 5. Extra FLOPs of full activation recomputation

def _model_params(p: P) -> int:
    return transformer.param_count(config(p))


def _extra_flops(p: P) -> float:
    n = _model_params(p)
    return (flops.hardware_flops_per_token(n, recompute="full") - flops.flops_per_token(n)) \
        * p["tokens"]


def _run_flops(count: float) -> str:
    """A whole run's FLOPs as the answer is written, four figures in e-notation
    (``'8.086e+22 FLOP'``), not ``format_flops``'s exa-prefixed '80,860.987 EFLOP'."""
    return f"{core.format_number(count, 4)} FLOP"


def _recompute_derived(p: P) -> dict[str, Any]:
    n = _model_params(p)
    return {"model_name": wording.model_label(p["model"]),
            "params": wording.billions(n, 4, long=True),
            "tokens_text": wording.trillions(p["tokens"], long=True),
            "step": _run_flops(flops.training_flops(n, p["tokens"])),
            "with": _run_flops(flops.hardware_flops_per_token(n, recompute="full")
                               * p["tokens"]),
            "share": wording.rounded_percent(optimisations.recompute_overhead(), 1)}


recompute_flops = core.NumericExercise(
    lesson=LESSON, number=5, title="The price of full recomputation for {model_name}",
    question=(
        "Training {model_name} ({params} parameters) on {tokens_text} tokens costs about "
        "6·N·D = {step}. With full activation recomputation (every layer's activations "
        "recomputed once in the backward pass), how many **extra** FLOPs does the run "
        "execute? Ignore the attention-score term."
    ),
    hints=("Of the 6N FLOPs per token, how many are the forward pass?",
           "The forward pass is 2N per token (one multiply-add per parameter); recomputing "
           "it once adds that again."),
    solution=(
        "A training step is forward 2N plus backward 4N per token. Full recomputation runs "
        "the forward pass once more: 2N per token, 8N in all (`flops.hardware_flops_per_"
        "token(N, recompute='full')`). Over the run that is {with} instead of {step}: "
        "**{answer}** extra, {share} more (`optimisations.recompute_overhead()`), not the "
        "20 % sometimes quoted."
    ),
    answer=_extra_flops,
    derived=_recompute_derived,
    mistakes=(
        Mistake("twenty_percent",
                "That is 20 % of the training FLOPs. Recomputing the forward pass costs 2N of "
                "the 6N per token: a third, not a fifth.",
                lambda p: 0.2 * flops.training_flops(_model_params(p), p["tokens"])),
        Mistake("whole_step_again",
                "That repeats the whole training step (6N per token). Only the forward pass "
                "is recomputed; the backward pass runs once, as before.",
                lambda p: flops.training_flops(_model_params(p), p["tokens"])),
        Mistake("backward_recomputed",
                "That is the backward pass (4N per token). What is recomputed is the forward "
                "pass, which is half as expensive: 2N per token.",
                lambda p: 2 * _extra_flops(p)),
        Mistake("total_not_extra",
                "That is everything the run executes with recomputation. The question asks "
                "for the extra FLOPs only: what recomputing adds on top of the {step}.",
                lambda p: flops.hardware_flops_per_token(_model_params(p), recompute="full")
                * p["tokens"]),
    ),
    defaults={"model": "llama-2-7b", "tokens": 2e12},
    sample=lambda rng: {"model": rng.choice(["llama-2-7b", "llama-3-8b", "mistral-7b",
                                             "llama-2-13b", "llama-2-70b", "qwen2.5-7b"]),
                        "tokens": rng.choice([3e11, 1e12, 2e12, 1.5e13])},
    dimension="flops", unit="FLOP", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 6. The smallest normal number of a format

def _other_format(p: P) -> FloatFormat:
    """The 16-bit format the ``other_format`` slip takes for the variant's: BF16 for FP16,
    FP16 otherwise."""
    return float_format("bf16" if p["fmt"] == "fp16" else "fp16")


def _fmt_derived(p: P) -> dict[str, Any]:
    f = float_format(p["fmt"])
    other = _other_format(p)
    return {"prec": f.name, "e_bits": f.exponent_bits, "f_bits": f.fraction_bits,
            "bias": f.bias, "emin": 1 - f.bias,
            "sub": core.format_number(f.smallest_subnormal, 4),
            "eps": core.format_number(f.epsilon, 4), "other": other.name,
            "other_normal": core.format_number(other.smallest_normal, 4)}


smallest_normal = core.NumericExercise(
    lesson=LESSON, number=6, title="The smallest positive normal {prec} number",
    question=(
        "{prec} has {e_bits} exponent bits and {f_bits} fraction bits (IEEE 754 layout: the "
        "exponent field's all-zeros and all-ones patterns are reserved for zero/subnormals "
        "and infinity/NaN). What is the smallest positive **normal** {prec} number?"
    ),
    hints=("The exponent bias is 2^(e−1) − 1 = {bias}; the smallest usable stored exponent "
           "is 1.",
           "Smallest normal = 1.000…₂ × 2^(1 − bias)."),
    solution=(
        "With bias {bias} and the smallest stored exponent 1, the smallest normal number is "
        "2^{emin} = **{answer}**. Below it come the subnormal numbers, with fewer "
        "significant bits, down to {sub}; anything smaller than half of that rounds to "
        "zero. The spacing just above 1 (machine epsilon) is a different limit, {eps}: it "
        "sets the precision, the exponent bits set the range."
    ),
    answer=lambda p: float_format(p["fmt"]).smallest_normal,
    derived=_fmt_derived,
    mistakes=(
        Mistake("subnormal",
                "That is the smallest **subnormal** number ({sub}). Normal numbers stop at "
                "2^(1 − bias), where the leading 1 bit is still implicit.",
                lambda p: float_format(p["fmt"]).smallest_subnormal),
        Mistake("epsilon",
                "That is machine epsilon ({eps}), the spacing of numbers just above 1: the "
                "precision, not the range.",
                lambda p: float_format(p["fmt"]).epsilon),
        Mistake("bias_off_by_one",
                "You used 2^(−bias) = 2^−{bias}. The smallest stored exponent of a normal "
                "number is 1, so the smallest normal is 2^(1 − bias) = 2^{emin}.",
                lambda p: math.ldexp(1, -float_format(p["fmt"]).bias)),
        Mistake("other_format",
                "That is {other}'s smallest normal number ({other_normal}). Use {prec}'s "
                "{e_bits} exponent bits.",
                lambda p: None if float_format(p["fmt"]).exponent_bits
                == _other_format(p).exponent_bits else _other_format(p).smallest_normal),
    ),
    defaults={"fmt": "fp16"},
    sample=lambda rng: {"fmt": rng.choice(["fp16", "bf16", "fp32"])},
    dimension="count", unit="", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 7. Which format keeps a tiny gradient?

_KEEPS = (("both", "Both keep it (it does not become zero)"),
          ("bf16", "Only BF16 keeps it"),
          ("fp16", "Only FP16 keeps it"),
          ("neither", "Neither: both round it to zero"))


def _keeps(p: P) -> str:
    fp16 = not float_format("fp16").rounds_to_zero(p["value"])
    bf16 = not float_format("bf16").rounds_to_zero(p["value"])
    return {(True, True): "both", (False, True): "bf16", (True, False): "fp16",
            (False, False): "neither"}[(fp16, bf16)]


def _keeps_derived(p: P) -> dict[str, Any]:
    f16, b16 = float_format("fp16"), float_format("bf16")
    return {"value_text": f"{p['value']:.0e}".replace("e-0", "e-"),
            "fp16_sub": core.format_number(f16.smallest_subnormal, 3),
            "fp16_half": core.format_number(f16.smallest_subnormal / 2, 3),
            "fp16_normal": core.format_number(f16.smallest_normal, 3),
            "bf16_normal": core.format_number(b16.smallest_normal, 3),
            "bf16_sub": core.format_number(b16.smallest_subnormal, 3)}


_KEEPS_TAIL = (" This is why FP16 training needs loss scaling and BF16 training usually "
               "does not.")


def _keeps_solution(ctx: Any) -> str:
    """The worked solution for the variant's value: kept by both, by BF16 only, or by
    neither (a class variant draws all three; the lesson's 1e-8 is BF16 only)."""
    kept = _keeps(ctx)
    if kept == "both":
        how = ("as a normal number" if ctx["value"] >= float_format("fp16").smallest_normal
               else "as a subnormal, with fewer significant bits")
        text = ("FP16's smallest subnormal is {fp16_sub} and its smallest normal "
                "number {fp16_normal}: FP16 keeps {value_text} " + how + ". BF16 has FP32's 8 "
                "exponent bits and reaches down to {bf16_normal}: it keeps it too. Values "
                "below half FP16's smallest subnormal, {fp16_half}, are where the two part.")
    elif kept == "neither":
        text = ("FP16's smallest subnormal is {fp16_sub}, far above "
                "{value_text}. BF16 has FP32's 8 exponent bits, so it reaches much lower, "
                "normal numbers to {bf16_normal} and subnormals to {bf16_sub}, but everything "
                "up to half of that rounds to zero, and {value_text} is below it too.")
    else:
        text = ("FP16's smallest subnormal is {fp16_sub}, so everything up to "
                "half of it, {fp16_half}, rounds to zero, and {value_text} is below that. "
                "BF16 has FP32's 8 exponent bits: its normal numbers reach down to "
                "{bf16_normal} (subnormals to {bf16_sub}), so {value_text} survives, with "
                "BF16's coarse precision.")
    return text.format(**ctx) + _KEEPS_TAIL


tiny_gradient = core.ChoiceExercise(
    lesson=LESSON, number=7, title="A gradient of {value_text} in FP16 and BF16",
    question=(
        "A gradient has the value {value_text}. It is stored in FP16 and, separately, in "
        "BF16 (round to nearest). In which format does it stay non-zero?"
    ),
    options=_KEEPS,
    hints=("FP16's numbers (with subnormals) reach down to about {fp16_sub}; BF16 has "
           "FP32's exponent range.",
           "A value below half the smallest subnormal rounds to zero; BF16's smallest "
           "normal number is {bf16_normal}."),
    solution=_keeps_solution,
    answer=_keeps,
    derived=_keeps_derived,
    mistakes=(
        Mistake("precision_for_range",
                "FP16 has more fraction bits than BF16, so it is more **precise**, but "
                "precision is not range: with 5 exponent bits FP16 cannot go below about "
                "{fp16_sub}, while BF16 reaches {bf16_normal}.",
                lambda p: "fp16"),
        Mistake("same_range",
                "BF16 is not FP16 with different rounding: it has FP32's 8 exponent bits, so "
                "its range reaches {bf16_normal}, far below this value.",
                _common.slip_to(_keeps, "neither")),
        Mistake("any_float_keeps_it",
                "FP16 cannot: its smallest positive number is {fp16_sub}, and values below "
                "{fp16_half} round to zero. That is the underflow loss scaling fixes.",
                _common.slip_to(_keeps, "both")),
    ),
    defaults={"value": 1e-8},
    # mostly values only BF16 keeps, as in the lesson, but also some both keep and some
    # neither does: with only the first kind every student's answer was BF16
    sample=lambda rng: {"value": rng.choice([1e-8, 2e-8, 5e-9, 1e-9, 1e-12, 1e-20, 1e-30,
                                             1e-4, 1e-6, 1e-42])},
)


# ---------------------------------------------------------------------------------------
# 8. What mixed precision saves with Adam

_SAVINGS = (("none", "Nothing: 16 bytes per parameter either way"),
            ("thirty_seven", "About 37 %"),
            ("six_bytes", "6 bytes per parameter: 10 instead of 16"),
            ("half", "Half: 16-bit numbers take half the bytes of 32-bit ones"))


def _model_state_saving(p: P) -> str:
    saved = memory.bytes_per_param("fp32") - memory.bytes_per_param("mixed")
    if saved == 0:
        return "none"
    if saved * 2 == memory.bytes_per_param("fp32"):
        return "half"
    return "six_bytes" if saved == 6 else "thirty_seven"


def _state_derived(p: P) -> dict[str, Any]:
    mixed, fp32 = memory.model_state_bytes("mixed"), memory.model_state_bytes("fp32")
    return {"m_w": mixed.weights, "m_g": mixed.gradients, "m_o": mixed.optimizer,
            "f_w": fp32.weights, "f_g": fp32.gradients, "f_o": fp32.optimizer,
            "m_total": mixed.total, "f_total": fp32.total,
            "fp32_grads": memory.bytes_per_param("mixed_fp32_grads")}


model_state_saving = core.ChoiceExercise(
    lesson=LESSON, number=8, title="What mixed precision saves of Adam's model state",
    question=(
        "Training with Adam, you switch from FP32 to mixed precision (BF16 weights and "
        "gradients for the arithmetic, FP32 master weights and Adam moments). How much "
        "**model-state** memory (weights, gradients, optimiser state; not activations) does "
        "that save per parameter?"
    ),
    options=_SAVINGS,
    hints=("List what each keeps per parameter: weights, gradients, master copy, two Adam "
           "moments.",
           "Mixed precision keeps a 4-byte master copy that FP32 training does not need."),
    solution=(
        "FP32: {f_w} + {f_g} + {f_o} = {f_total} bytes (weights, gradients, two "
        "moments). Mixed: {m_w} + {m_g} + {m_o} = {m_total} bytes (16-bit weights and "
        "gradients, then 4-byte master weights and two 4-byte moments; ZeRO paper, section "
        "3.1). Frameworks that keep FP32 gradients need {fp32_grads}. Mixed precision saves "
        "activation memory and, above all, time on Tensor Cores; a fixed percentage such as "
        "37 % depends on how large the activations are."
    ),
    answer=_model_state_saving,
    derived=_state_derived,
    mistakes=(
        Mistake("quoted_percentage",
                "A fixed 37 % cannot hold: the model state is {m_total} bytes per parameter in "
                "both cases. Any saving comes from activations, and its share depends on the "
                "batch and sequence length.",
                lambda p: "thirty_seven"),
        Mistake("forgot_master_copy",
                "10 bytes forgets the FP32 master copy (4 bytes) that mixed precision keeps "
                "so that small updates are not lost: {m_w} + {m_g} + {m_o} = {m_total}.",
                lambda p: "six_bytes"),
        Mistake("halved_everything",
                "Only the weights and gradients used in the arithmetic become 16-bit. The "
                "master weights and Adam's moments stay FP32, and the master copy is extra.",
                lambda p: "half"),
    ),
)


# ---------------------------------------------------------------------------------------
# 9. The Tensor Core speed-up on a datasheet

def _tc_derived(p: P) -> dict[str, Any]:
    g = hardware.gpu(p["gpu"])
    return {"bf16": wording.tflop_rate(g.dense("bf16")),
            "fp32": wording.tflop_rate(g.dense("fp32")),
            "tf32": wording.tflop_rate(g.dense("tf32")),
            "sparse": wording.tflop_rate(g.sparse_flops["bf16"]),
            "vs_tf32": core.format_number(g.dense("bf16") / g.dense("tf32"), 3)}


tensor_core_ratio = core.NumericExercise(
    lesson=LESSON, number=9, title="BF16 against FP32 on the {gpu}",
    question=(
        "The {gpu}'s published specifications (NVIDIA's datasheet or architecture "
        "whitepaper) list {fp32} for FP32, {tf32} for TF32 and {bf16} for BF16 "
        "Tensor Core math, all dense, and {sparse} for BF16 with 2:4 sparsity. For a large "
        "dense matrix product, how many times higher is the BF16 peak than the plain FP32 "
        "peak?"
    ),
    hints=("Use dense figures for a dense matrix product.",
           "Divide the dense BF16 peak by the FP32 peak."),
    solution=(
        "{bf16} ÷ {fp32} = **{answer}**. Against TF32, the Tensor Core mode frameworks may "
        "use for FP32 matrix products, it is {vs_tf32}×. A whole training step gains less: "
        "only the matrix products run at this rate, and memory-bound operations gain at "
        "most the factor 2 of halved bytes."
    ),
    answer=lambda p: hardware.gpu(p["gpu"]).dense("bf16") / hardware.gpu(p["gpu"]).dense("fp32"),
    derived=_tc_derived,
    mistakes=(
        mistakes.used_sparse_peak(lambda p: _common.sparse_peak(p)
                                  / hardware.gpu(p["gpu"]).dense("fp32")),
        Mistake("against_tf32",
                "That compares BF16 with TF32 ({tf32}). The question asks about plain FP32, "
                "{fp32}.",
                lambda p: hardware.gpu(p["gpu"]).dense("bf16") / hardware.gpu(p["gpu"]).dense(
                    "tf32")),
        mistakes.inverted_ratio(lambda p: hardware.gpu(p["gpu"]).dense("fp32")
                                / hardware.gpu(p["gpu"]).dense("bf16"),
                                hint="That is FP32 ÷ BF16, below 1. Divide the BF16 peak by the "
                                     "FP32 peak."),
    ),
    defaults={"gpu": "H100 SXM"},
    sample=lambda rng: {"gpu": rng.choice(["A100 40GB", "A100 80GB", "H100 SXM", "H100 PCIe",
                                           "H200", "B200", "L40S"])},
    dimension="count", unit="×", extra_units=wording.TIMES, rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 10. What FP8 does to a whole training step

def _fp8_step(p: P) -> float:
    return roofline.amdahl_speedup(1 - p["share"], 2)


def _fp8_derived(p: P) -> dict[str, Any]:
    h100 = hardware.gpu(H100)
    return {"share_pct": f"{100 * p['share']:.0f} %", "rest": f"{100 * (1 - p['share']):.0f} %",
            "ratio": core.format_number(h100.dense("fp8") / h100.dense("bf16"), 3),
            "time": core.format_number(1 - p["share"] + p["share"] / 2, 3)}


fp8_step = core.NumericExercise(
    lesson=LESSON, number=10, title="FP8 on a training step that is {share_pct} matrix products",
    question=(
        "Profiling a BF16 training step on H100s shows that {share_pct} of its time is in "
        "matrix products that FP8 can take over (the linear layers); the rest (attention, "
        "norms, the optimizer, communication) stays as it is. The H100's dense FP8 peak is "
        "{ratio} times its BF16 peak. At best, how many times faster is the whole step in "
        "FP8?"
    ),
    hints=(
        "Only the {share_pct} gets faster. What is left of the step's time?",
        "Amdahl's law: the time becomes (1 − f) + f/2 of the original.",
    ),
    solution=(
        "The FP8-able {share_pct} runs twice as fast, the other {rest} does not: the step "
        "takes {rest} + {share_pct}/2 = {time} of its BF16 time, **{answer}** faster at best "
        "(`roofline.amdahl_speedup(1 - f, 2)`), before the scaling kernels take their share. "
        "torchao publishes FP8 pre-training gains of up to 1.25× for an 8B model on 8 GPUs "
        "and up to 1.5× for 405B on 512, not 2×."
    ),
    answer=_fp8_step,
    derived=_fp8_derived,
    mistakes=(
        Mistake("peak_ratio", "That is the ratio of the peaks. Only the matrix products get "
                "the faster rate: the rest of the step takes as long as before.",
                lambda p: 2.0),
        Mistake("added_the_gain", "That adds the share to 1, as if the speed-up were 1 + f. "
                "Add the times instead: (1 − f) + f/2, then invert.",
                lambda p: 1 + p["share"]),
    ),
    defaults={"share": 0.7},
    sample=lambda rng: {"share": rng.choice([0.5, 0.6, 0.7, 0.8, 0.9])},
    dimension="count", unit="×", extra_units=wording.TIMES, rtol=0.01,
)


EXERCISES = (
    standard_attention_bytes,
    merge_softmax_states,
    tiled_on_cpu,
    checkpoint_64_layers,
    recompute_flops,
    smallest_normal,
    tiny_gradient,
    model_state_saving,
    tensor_core_ratio,
    fp8_step,
)

__all__ = ["EXERCISES", "LESSON", "TITLE", "merged_softmax_sum"]
