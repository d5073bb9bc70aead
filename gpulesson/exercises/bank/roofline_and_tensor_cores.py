"""Exercises of lesson 2, *Rooflines and Tensor Cores*.

The exercise notebook is ``exercises/roofline_and_tensor_cores.ipynb``.

They practise what the lesson teaches: which precision a GEMM's bytes imply, the arithmetic
intensity of a real layer's shape, the roofline time of a GEMM on an H100 (by hand and as a
function), the ridge point of a GPU from its datasheet, the batch at which a layer turns
compute-bound on an A100, how slow half precision is on a CPU (predict, then run), the
sparse-peak mistake of comparing GPUs, dense FLOP/s per watt, and the bytes of weights in a
block-scaled 4-bit format (its scales included).

Every answer and every figure in a worked solution comes from the calculators
(:mod:`gpulesson.gemm`, :mod:`gpulesson.roofline`, :mod:`gpulesson.hardware`,
:mod:`gpulesson.memory`, :mod:`gpulesson.transformer`), among them
:func:`gpulesson.hardware.flops_per_watt`. Standard library only.
"""

from __future__ import annotations

import functools
from typing import Any

from gpulesson import course, gemm, hardware, memory, precision, roofline, transformer
from gpulesson.exercises import core, mistakes, wording
from gpulesson.exercises.bank import _common
from gpulesson.exercises.bank._common import H100, P, config
from gpulesson.exercises.core import Mistake
from gpulesson.units import format_bytes, format_seconds

LESSON = "roofline_and_tensor_cores"
TITLE = course.title(LESSON)

_BF16 = memory.precision_bytes("bf16")


_bw = functools.partial(wording.bandwidth, digits=3)


def _analysis(p: P, *, bytes_per_element: float | None = None,
              peak: float | None = None) -> gemm.GemmAnalysis:
    g = hardware.gpu(p["gpu"])
    return gemm.analyse(
        p["m"], p["k"], p["n"],
        peak_flops=g.dense(p["dtype"]) if peak is None else peak,
        bandwidth=g.bandwidth,
        bytes_per_element=(memory.precision_bytes(p["dtype"]) if bytes_per_element is None
                           else bytes_per_element))


# ---------------------------------------------------------------------------------------
# 1. Which precision do the seed's bytes imply?

_SEED_PRECISIONS = (("fp64", "FP64: 8 bytes per element"),
                    ("fp32", "FP32 or TF32: 4 bytes per element"),
                    ("bf16", "BF16 or FP16: 2 bytes per element"),
                    ("fp8", "FP8: 1 byte per element"))
_ELEMENT_BYTES = {"fp64": 8, "fp32": memory.precision_bytes("fp32"),
                  "bf16": memory.precision_bytes("bf16"), "fp8": memory.precision_bytes("fp8")}


def _gemm_mb(p: P, key: str) -> float:
    """Minimum bytes of the question's square GEMM with ``key``'s element size, in MB."""
    return gemm.min_bytes(p["size"], p["size"], p["size"],
                          bytes_per_element=_ELEMENT_BYTES[key]) / 1e6


def _seed_precision(p: P) -> str:
    """The precision whose minimum bytes round to the quoted figure (one decimal, MB)."""
    for key, _ in _SEED_PRECISIONS:
        if round(_gemm_mb(p, key), 1) == round(p["quoted_mb"], 1):
            return key
    raise ValueError(f"no precision gives {p['quoted_mb']} MB for size {p['size']}")


#: How a format's traffic compares with the quoted one's, as a hint says it.
_TIMES = {0.125: "an eighth of", 0.25: "a quarter of", 0.5: "half", 1: "exactly", 2: "twice",
          4: "four times", 8: "eight times"}


def _seed_derived(p: P) -> dict[str, Any]:
    n = p["size"]
    return {"size_text": wording.count(n), "elements": wording.count(3 * n * n),
            "a_shape": wording.with_article(f"{wording.count(n)}×{wording.count(n)}"),
            **{f"mb_{key}": wording.size(_gemm_mb(p, key) * 1e6)
               for key, _ in _SEED_PRECISIONS},
            "quoted": f"{p['quoted_mb']:.1f} MB",
            **{f"vs_{key}": _TIMES[_ELEMENT_BYTES[key] / _ELEMENT_BYTES[_seed_precision(p)]]
               for key, _ in _SEED_PRECISIONS},
            "intensity": core.format_number(gemm.arithmetic_intensity(
                n, n, n, bytes_per_element=_ELEMENT_BYTES[_seed_precision(p)]), 4)}


seed_bytes_precision = core.ChoiceExercise(
    lesson=LESSON, number=1, title="Which precision do {quoted} imply?",
    question=(
        "A calculator page reports that {a_shape} by {size_text}×{size_text} "
        "matrix multiplication needs **{quoted}** of memory traffic, counting A and B read "
        "once and C written once. Which number format must it have assumed?"
    ),
    options=_SEED_PRECISIONS,
    hints=("The traffic is 3·N² elements times the bytes per element.",
           "3 × {size_text}² = {elements} elements; divide the bytes by that."),
    solution=(
        "Three matrices of {size_text}² elements are {elements} elements. At 8, 4, 2 and 1 "
        "byte per element that is {mb_fp64}, {mb_fp32}, {mb_bf16} and {mb_fp8}: the quoted "
        "{quoted} is **{answer}**; the intensity at that size is {intensity} FLOP/byte.\n\n"
        "A time quoted next to these bytes must use the peak of the same format to be "
        "consistent: mixing the bytes of one format with the peak FLOP/s of another "
        "describes no real computation."
    ),
    answer=_seed_precision,
    derived=_seed_derived,
    mistakes=(
        Mistake("tensor_cores_mean_half",
                "Tensor cores do suggest 16-bit data, but at 2 bytes per element the traffic "
                "would be {mb_bf16}, {vs_bf16} the quoted figure.",
                _common.slip_to(_seed_precision, "bf16")),
        Mistake("double_precision",
                "At 8 bytes per element (FP64) the traffic would be {mb_fp64}, {vs_fp64} the "
                "quoted figure.",
                _common.slip_to(_seed_precision, "fp64")),
    ),
    # the lesson's own figure is the seed page's FP32 one; a class variant draws the format
    # too, so that not every student's answer is FP32 (it was in 300 of 300 variants)
    defaults={"size": 4096, "quoted_mb": 201.3},
    sample=lambda rng: (lambda n, key: {"size": n, "quoted_mb": round(
        _gemm_mb({"size": n}, key), 1)})(rng.choice([1024, 2048, 4096, 8192, 16384]),
                                         rng.choice([k for k, _ in _SEED_PRECISIONS])),
)


# ---------------------------------------------------------------------------------------
# 2. Arithmetic intensity of a real layer's shape

def _mlp_shape(p: P) -> tuple[int, int, int]:
    cfg = config(p)
    return p["tokens"], cfg.hidden, cfg.ffn


def _mlp_intensity(p: P) -> float:
    m, k, n = _mlp_shape(p)
    return gemm.arithmetic_intensity(m, k, n, bytes_per_element=memory.precision_bytes("bf16"))


def _distinct(value: float, answer: float, margin: float = 0.05) -> float | None:
    """``value``, or ``None`` when it lies within ``margin`` of ``answer`` (then a learner
    making this mistake would be marked right, and the mistake cannot be told apart)."""
    return None if abs(value - answer) <= margin * abs(answer) else value


def _mlp_derived(p: P) -> dict[str, Any]:
    m, k, n = _mlp_shape(p)
    b = memory.precision_bytes("bf16")
    h100 = hardware.gpu(H100)
    intensity = _mlp_intensity(p)
    return {
        "model_name": wording.model_label(p["model"]),
        "tokens_text": wording.count(m), "hidden": wording.count(k), "ffn": wording.count(n),
        "a_weight": wording.with_article(f"{wording.count(k)}×{wording.count(n)}"),
        "flops": wording.flop_count(gemm.flops(m, k, n)),
        "bytes": wording.size(gemm.min_bytes(m, k, n, bytes_per_element=b)),
        "square": core.format_number(gemm.arithmetic_intensity(k, k, k, bytes_per_element=b), 4),
        "ridge": core.format_number(h100.ridge_point("bf16"), 3),
        "verdict": ("above the ridge: compute-bound there"
                    if roofline.bound(intensity, h100.dense("bf16"), h100.bandwidth)
                    == "compute" else "below the ridge: memory-bound there"),
    }


mlp_intensity = core.NumericExercise(
    lesson=LESSON, number=2, title="Arithmetic intensity of a {model_name} MLP layer",
    question=(
        "In {model_name} the MLP's up-projection multiplies the activations of the tokens in a "
        "batch ({tokens_text}×{hidden}) by {a_weight} weight matrix, all in BF16 "
        "(2 bytes per number). Reading both inputs once and writing the output once, what is "
        "its arithmetic intensity, in FLOP per byte?"
    ),
    hints=("Intensity = FLOPs ÷ bytes moved; the matrices are not square.",
           "FLOPs = 2·M·K·N with M = {tokens_text}, K = {hidden}, N = {ffn}; bytes = 2 × "
           "(M·K + K·N + M·N)."),
    solution=(
        "FLOPs: 2 × {tokens_text} × {hidden} × {ffn} = {flops}. Bytes: 2 × ({tokens_text}·"
        "{hidden} + {hidden}·{ffn} + {tokens_text}·{ffn}) = {bytes}. Intensity = "
        "**{answer}**, {verdict} (an H100's BF16 ridge is about {ridge} FLOP/byte).\n\n"
        "The square-matrix shortcut N/3 would give {square}: with unequal sides, the "
        "smallest one (here the number of tokens) limits the reuse."
    ),
    answer=_mlp_intensity,
    derived=_mlp_derived,
    mistakes=(
        *_common.intensity_slips(_mlp_shape, "bf16", weights_only=(
            "You counted only the weight matrix's bytes. The activations read and the output "
            "written ({tokens_text} rows each) are traffic too.")),
        Mistake("forgot_output",
                "You left out the output: the {tokens_text}×{ffn} result is written to "
                "memory once.",
                lambda p: (lambda m, k, n: gemm.flops(m, k, n)
                           / (gemm.min_bytes(m, k, n, bytes_per_element=_BF16)
                              - memory.weight_bytes(m * n, precision="bf16")))(
                    *_mlp_shape(p))),
        Mistake("square_shortcut",
                "That is the square-matrix shortcut N/3 with N = {hidden}. This GEMM is not "
                "square: count 2·M·K·N and the three matrices' bytes.",
                lambda p: _distinct(gemm.arithmetic_intensity(
                    _mlp_shape(p)[1], _mlp_shape(p)[1], _mlp_shape(p)[1],
                    bytes_per_element=_BF16), _mlp_intensity(p))),
    ),
    defaults={"model": "llama-3-8b", "tokens": 2048},
    sample=lambda rng: {"model": rng.choice(["llama-2-7b", "llama-3-8b", "mistral-7b",
                                             "llama-2-70b", "qwen2.5-7b"]),
                        "tokens": rng.choice([256, 512, 1024, 2048, 4096])},
    dimension="count", unit="FLOP/byte", extra_units=wording.PER_BYTE, rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 3. Roofline time of a GEMM on an H100

def _time_derived(p: P) -> dict[str, Any]:
    a = _analysis(p)
    g = hardware.gpu(p["gpu"])
    return {
        "m_text": wording.count(p['m']), "k_text": wording.count(p['k']),
        "tokens": wording.plural(p["m"], "token"),
        "activations": ("one token's activations" if p["m"] == 1
                        else f"{wording.count(p['m'])} tokens' activations"),
        "n_text": wording.count(p['n']), "prec": wording.precision_label(p["dtype"]),
        "peak": wording.tflop_rate(g.dense(p["dtype"])),
        "bw": _bw(g.bandwidth), "flops": wording.flop_count(a.flops),
        "bytes": wording.size(a.bytes),
        "compute_time": format_seconds(a.compute_time),
        "memory_time": format_seconds(a.memory_time),
        "bound": a.bound, "intensity": core.format_number(a.intensity, 3),
        "ridge": core.format_number(a.ridge_point, 3),
    }


def _unless_same(value: float, p: P) -> float | None:
    """``value`` unless it is within 5 % of the answer (then the mistake cannot be told)."""
    return _distinct(value, _analysis(p).time)


gemm_time_h100 = core.NumericExercise(
    lesson=LESSON, number=3, title="How long on the {gpu}? ({tokens})",
    question=(
        "A layer multiplies {activations} ({m_text}×{k_text}) by its "
        "{k_text}×{n_text} weight matrix in {prec} on an {gpu}: {peak} dense, {bw}. By the "
        "roofline model (compute and memory traffic overlap perfectly, minimum traffic), "
        "what is the shortest time it can take, in microseconds?"
    ),
    hints=("Work out both times: FLOPs ÷ peak and bytes ÷ bandwidth.",
           "The roofline time is the larger of the two: the other one hides under it."),
    solution=(
        "FLOPs: {flops}; at {peak} that is {compute_time}. Bytes: {bytes}; at {bw} that is "
        "{memory_time}. The larger one sets the pace: **{answer}**, {bound}-bound (intensity "
        "{intensity} FLOP/byte against a ridge of {ridge}).\n\n"
        "A real kernel is slower than this bound: it never overlaps the two perfectly, "
        "nor runs at the full datasheet peak."
    ),
    answer=lambda p: _analysis(p).time,
    derived=_time_derived,
    mistakes=(
        Mistake("other_limit",
                "That is the time of the limit that does *not* bind. Compare {compute_time} "
                "(compute) with {memory_time} (memory): the larger one is the roofline time.",
                lambda p: (lambda a: min(a.compute_time, a.memory_time))(_analysis(p))),
        Mistake("summed",
                "You added the compute and the memory time. The roofline assumes they "
                "overlap: the time is the larger of the two, not their sum.",
                lambda p: _unless_same(_analysis(p).compute_time + _analysis(p).memory_time,
                                       p)),
        mistakes.used_sparse_peak(lambda p: _unless_same(
            _analysis(p, peak=_common.sparse_peak(p, p["dtype"])).time, p)),
        Mistake("four_byte_elements",
                "You used 4 bytes per element; {prec} numbers take "
                "2 bytes each.",
                lambda p: _unless_same(_analysis(p, bytes_per_element=4).time, p)),
    ),
    defaults={"gpu": "H100 SXM", "dtype": "bf16", "m": 8, "k": 8192, "n": 8192},
    sample=lambda rng: {"gpu": "H100 SXM", "dtype": rng.choice(["bf16", "fp16"]),
                        "m": rng.choice([1, 8, 32, 128, 1024, 4096, 16384]),
                        "k": rng.choice([4096, 8192]), "n": rng.choice([4096, 8192, 14336])},
    dimension="seconds", unit="µs", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 4. Code: roofline_time

def _roofline_time_model(flops, bytes, peak_flops, bandwidth):
    # compute and memory traffic overlap: the slower of the two sets the time
    return max(flops / peak_flops, bytes / bandwidth)


def _time_example(m: int, k: int, n: int) -> dict[str, float]:
    g = hardware.gpu(H100)
    return {"flops": gemm.flops(m, k, n), "bytes": gemm.min_bytes(m, k, n),
            "peak_flops": g.dense("bf16"), "bandwidth": g.bandwidth}


roofline_time_code = core.CodeExercise(
    lesson=LESSON, number=4, title="Write roofline_time",
    question=(
        "Write `roofline_time(flops, bytes, peak_flops, bandwidth)` that returns the roofline "
        "model's time in seconds for a kernel doing `flops` FLOPs and moving `bytes` bytes on "
        "a device with `peak_flops` FLOP/s and `bandwidth` bytes/s. It is checked against the "
        "course's `gpulesson.roofline.time` on the lesson's GEMMs and on random inputs."
    ),
    hints=("Two limits: the arithmetic at the peak rate, the traffic at the bandwidth.",
           "Compute and memory work overlap, so the slower of the two decides."),
    solution=(
        "Both limits apply at once and overlap, so the kernel takes as long as the slower "
        "one: `max(flops / peak_flops, bytes / bandwidth)`. For the lesson's 4096³ BF16 GEMM "
        "on an H100 SXM that is "
        + format_seconds(roofline.time(**_time_example(4096, 4096, 4096)))
        + " (compute-bound); for one token through an 8192×8192 layer it is "
        + format_seconds(roofline.time(**_time_example(1, 8192, 8192)))
        + " (memory-bound)."
    ),
    function_name="roofline_time", signature="flops, bytes, peak_flops, bandwidth",
    reference=lambda flops, bytes, peak_flops, bandwidth: roofline.time(
        flops, bytes, peak_flops, bandwidth),
    sample_input=lambda rng: {"flops": float(rng.randint(10**6, 10**15)),
                              "bytes": float(rng.randint(10**5, 10**12)),
                              "peak_flops": rng.choice([19.5e12, 312e12, 989.4e12, 82.6e12]),
                              "bandwidth": rng.choice([1.555e12, 2.039e12, 3.35e12, 1.008e12])},
    examples=(_time_example(4096, 4096, 4096), _time_example(1, 8192, 8192)),
    mistakes=(
        Mistake("summed", "Your function adds the two times. The roofline assumes compute and "
                "memory traffic overlap: take the larger one.",
                lambda i: i["flops"] / i["peak_flops"] + i["bytes"] / i["bandwidth"]),
        Mistake("smaller_limit", "Your function returns the smaller time. The slower limit "
                "decides: use max, not min.",
                lambda i: min(i["flops"] / i["peak_flops"], i["bytes"] / i["bandwidth"])),
        Mistake("swapped_rates", "Your function divides the FLOPs by the bandwidth (and the "
                "bytes by the peak). FLOPs go with FLOP/s, bytes with bytes/s.",
                lambda i: max(i["flops"] / i["bandwidth"], i["bytes"] / i["peak_flops"])),
    ),
    model_solution=_roofline_time_model,
    rtol=1e-9,
)


# ---------------------------------------------------------------------------------------
# 5. The ridge point, in a chosen precision

def _ridge_derived(p: P) -> dict[str, Any]:
    g = hardware.gpu(p["gpu"])
    return {"prec": wording.precision_label(p["dtype"]),
            "peak": wording.tflop_rate(g.dense(p["dtype"])),
            "sparse": wording.tflop_rate(g.sparse_flops[p["dtype"]]), "bw": _bw(g.bandwidth),
            "bf16_ridge": core.format_number(g.ridge_point("bf16"), 3),
            "contrast": (f"in FP32, without tensor cores, it is "
                         f"{core.format_number(g.ridge_point('fp32'), 3)} FLOP/byte"
                         if p["dtype"] == "bf16" else
                         f"in BF16 it is {core.format_number(g.ridge_point('bf16'), 3)} FLOP/byte")}


ridge_in_precision = core.NumericExercise(
    lesson=LESSON, number=5, title="The {prec} ridge point of the {gpu}",
    question=(
        "The {gpu}'s datasheet lists {prec} tensor-core rates of {peak} (dense) and {sparse} "
        "(with 2:4 sparsity), and {bw} of memory bandwidth. What arithmetic intensity must a "
        "dense {prec} matrix product reach before the arithmetic, not the memory, limits it?"
    ),
    hints=("That intensity is the ridge point: where compute time equals memory time.",
           "Ridge = dense peak (FLOP/s) ÷ bandwidth (bytes/s). Watch the prefixes: tera "
           "over tera."),
    solution=(
        "Ridge = {peak} ÷ {bw} = **{answer}**. Lower precision raises the peak but not the "
        "bandwidth, so the ridge moves right: {contrast}. A kernel "
        "needs more reuse of each byte to profit from a faster number format."
    ),
    answer=lambda p: hardware.gpu(p["gpu"]).ridge_point(p["dtype"]),
    derived=_ridge_derived,
    mistakes=(
        mistakes.used_sparse_peak(lambda p: _common.sparse_ridge(p, p["dtype"])),
        mistakes.inverted_ratio(lambda p: 1 / hardware.gpu(p["gpu"]).ridge_point(p["dtype"]),
                                hint="That is bytes per FLOP: you divided the bandwidth by the "
                                     "peak. The ridge point is FLOP/s ÷ bytes/s."),
        Mistake("bf16_ridge",
                "That is the BF16 ridge ({bf16_ridge} FLOP/byte). The question is about "
                "{prec}, whose dense peak is {peak}.",
                lambda p: (None if p["dtype"] == "bf16"
                           else hardware.gpu(p["gpu"]).ridge_point("bf16"))),
    ),
    defaults={"gpu": "H100 SXM", "dtype": "fp8"},
    sample=lambda rng: (lambda dt: {
        "dtype": dt,
        "gpu": rng.choice([n for n, g in hardware.GPUS.items()
                           if dt in g.sparse_flops and dt in g.peak_flops])})(
        rng.choice(["fp8", "bf16", "tf32"])),
    dimension="count", unit="FLOP/byte", extra_units=wording.PER_BYTE, rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 6. From which batch on is a layer compute-bound on an A100?

_BATCHES = (16, 32, 64, 128, 192, 256, 384, 512, 1024, 2048)


def _first_compute_bound(p: P, peak: float) -> str | None:
    g = hardware.gpu(p["gpu"])
    d = p["d"]
    for t in _BATCHES:
        intensity = gemm.arithmetic_intensity(t, d, d, bytes_per_element=_BF16)
        if roofline.bound(intensity, peak, g.bandwidth) == "compute":
            return str(t)
    return None


def _last_memory_bound(p: P) -> str | None:
    """The option before the answer: the largest batch still memory-bound (``None`` where
    the answer is the first option)."""
    answer = _first_compute_bound(p, hardware.gpu(p["gpu"]).dense("bf16"))
    if answer is None or answer == str(_BATCHES[0]):
        return None
    return str(_BATCHES[_BATCHES.index(int(answer)) - 1])


def _batch_derived(p: P) -> dict[str, Any]:
    g = hardware.gpu(p["gpu"])
    answer = int(_first_compute_bound(p, g.dense("bf16")) or _BATCHES[-1])
    before = _BATCHES[_BATCHES.index(answer) - 1] if answer != _BATCHES[0] else answer
    return {"d_text": wording.count(p['d']), "peak": wording.tflop_rate(g.dense("bf16")),
            "bw": _bw(g.bandwidth),
            "ridge": core.format_number(g.ridge_point("bf16"), 3),
            "sparse_ridge": core.format_number(_common.sparse_ridge(p, "bf16"), 3),
            "before": before,
            "i_before": core.format_number(gemm.arithmetic_intensity(before, p["d"], p["d"]), 3),
            "i_answer": core.format_number(gemm.arithmetic_intensity(answer, p["d"], p["d"]), 3)}


batch_turns_compute_bound = core.ChoiceExercise(
    lesson=LESSON, number=6, title="When does a layer turn compute-bound on the {gpu}?",
    question=(
        "On an {gpu} ({peak} dense BF16, {bw}), a layer multiplies a batch of tokens by its "
        "{d_text}×{d_text} BF16 weight matrix. What is the smallest of these batch sizes "
        "at which the layer is compute-bound rather than memory-bound?"
    ),
    options=[(str(t), wording.plural(t, "token")) for t in _BATCHES],
    hints=("Find the GPU's ridge point, then the batch whose intensity first reaches it.",
           "Intensity of a t×{d_text} by {d_text}×{d_text} BF16 GEMM: 2·t·d² FLOPs over "
           "2·(2·t·d + d²) bytes. The ridge is {ridge} FLOP/byte."),
    solution=(
        "The ridge point is {peak} ÷ {bw} = {ridge} FLOP/byte. At {before} tokens the layer "
        "does {i_before} FLOP/byte (memory-bound); at **{answer}** it does {i_answer}, past "
        "the ridge. Below that batch the GPU waits for the weights; above it the arithmetic "
        "sets the pace and more tokens cost proportionally more time."
    ),
    answer=lambda p: _first_compute_bound(p, hardware.gpu(p["gpu"]).dense("bf16")),
    derived=_batch_derived,
    mistakes=(
        mistakes.used_sparse_peak(lambda p: _first_compute_bound(p, _common.sparse_peak(p)),
            hint="That batch reaches the ridge of the 2:4-sparse peak ({sparse_ridge} "
                 "FLOP/byte). A dense layer only gets the dense peak: its ridge is {ridge}."),
        Mistake("fp32_peak",
                "That uses the FP32 peak, whose ridge is tiny. BF16 matrix products run on "
                "the tensor cores at the much higher BF16 rate: ridge {ridge} FLOP/byte.",
                lambda p: _first_compute_bound(p, hardware.gpu(p["gpu"]).dense("fp32"))),
        # review r22, F11: the near miss, the last batch still below the ridge
        Mistake("last_memory_bound",
                "At {before} tokens the layer does {i_before} FLOP/byte, close to the ridge "
                "of {ridge} FLOP/byte but still below it: memory-bound. Which batch is the "
                "first past the ridge?",
                _last_memory_bound),
    ),
    defaults={"gpu": "A100 80GB", "d": 8192},
    sample=lambda rng: {"gpu": rng.choice(["A100 40GB", "A100 80GB"]),
                        "d": rng.choice([4096, 5120, 8192])},
)


# ---------------------------------------------------------------------------------------
# 7. Predict, then run: half precision on a CPU

half_precision_on_cpu = core.PredictExercise(
    lesson=LESSON, number=7, title="Half precision on a CPU: predict, then run",
    question=(
        "A GPU's tensor cores multiply FP16 matrices many times faster than FP32 ones. The "
        "next cell times numpy's `A @ B` for {n}×{n} matrices in float32 and in float16 on "
        "this machine's CPU.\n\n"
        "Before running it: **how many times slower** (or, below 1, faster) do you expect "
        "float16 to be than float32?"
    ),
    hints=(
        "float32 matrix products go to an optimised BLAS library; is there a BLAS routine "
        "for float16?",
        "When numpy has no library routine for a type, it uses a generic loop, and float16 "
        "needs a conversion for every operation.",
    ),
    solution=(
        "On most CPUs numpy's float16 product is hundreds of times slower than float32: "
        "BLAS has no half-precision GEMM, so numpy falls back to a plain loop that converts "
        "every operand. Half precision halves the bytes, but speed needs hardware (and a "
        "library) that multiplies it natively, as tensor cores do. Some recent server CPUs "
        "have such instructions (AMX, AVX-512 FP16) that specialised libraries use; numpy's "
        "`@` does not."
    ),
    defaults={"n": 256},
    dimension="count", unit="×", extra_units=wording.TIMES, good_within=3.0,
)


# ---------------------------------------------------------------------------------------
# 8. The sparse-peak mistake in a comparison

def _speed_ratio(p: P, *, fast_peak: str = "dense") -> float:
    fast, slow = hardware.gpu(p["fast"]), hardware.gpu(p["slow"])
    table = fast.peak_flops if fast_peak == "dense" else fast.sparse_flops
    return table[p["dtype"]] / slow.dense(p["dtype"])


def _ratio_derived(p: P) -> dict[str, Any]:
    fast, slow = hardware.gpu(p["fast"]), hardware.gpu(p["slow"])
    return {"prec": wording.precision_label(p["dtype"]),
            "fast_dense": wording.tflop_rate(fast.dense(p["dtype"])),
            "fast_sparse": wording.tflop_rate(fast.sparse_flops[p["dtype"]]),
            "slow_dense": wording.tflop_rate(slow.dense(p["dtype"])),
            "fast_bw": _bw(fast.bandwidth), "slow_bw": _bw(slow.bandwidth),
            "mixed": core.format_number(_speed_ratio(p, fast_peak="sparse"), 3),
            "bw_ratio": core.format_number(fast.bandwidth / slow.bandwidth, 3)}


sparse_mixup = core.NumericExercise(
    lesson=LESSON, number=8, title="{fast} against {slow}: compare like with like",
    question=(
        "A comparison table lists the {fast} at {fast_sparse} and the {slow} at {slow_dense} "
        "in {prec}. The first is the {fast}'s 2:4-sparse figure; its dense {prec} rate is "
        "{fast_dense}. For a large, dense {prec} matrix multiplication (compute-bound on "
        "both), how many times faster should the {fast} be?"
    ),
    hints=("A dense matrix product cannot use the sparse rate.",
           "Divide the two dense peaks."),
    solution=(
        "Dense against dense: {fast_dense} ÷ {slow_dense} = **{answer}**. Dividing the sparse "
        "headline by the other card's dense figure gives {mixed}×, twice the truth, which is "
        "the mistake in a table that mixes the two kinds of figure. (For a memory-bound "
        "kernel the ratio of bandwidths, {fast_bw} ÷ {slow_bw} = {bw_ratio}×, would matter "
        "instead.)"
    ),
    answer=_speed_ratio,
    derived=_ratio_derived,
    mistakes=(
        mistakes.used_sparse_peak(lambda p: _speed_ratio(p, fast_peak="sparse"),
                                  hint="That divides the 2:4-sparse figure by a dense one: "
                                       "{mixed}×. A dense GEMM runs at the dense rate on both "
                                       "cards."),
        Mistake("bandwidth_ratio",
                "That is the ratio of memory bandwidths ({fast_bw} ÷ {slow_bw}), which sets "
                "the speed of memory-bound kernels. A large matrix product is compute-bound: "
                "compare the dense peaks.",
                lambda p: hardware.gpu(p["fast"]).bandwidth / hardware.gpu(p["slow"]).bandwidth),
        mistakes.inverted_ratio(lambda p: 1 / _speed_ratio(p),
                                hint="That is how much *slower* the {slow} is. Divide the {fast}'s "
                                     "dense peak by the {slow}'s."),
    ),
    defaults={"fast": "H100 SXM", "slow": "A100 80GB", "dtype": "fp16"},
    sample=lambda rng: dict(zip(("fast", "slow"), rng.choice(
        [("H100 SXM", "A100 80GB"), ("H100 SXM", "V100 SXM"), ("H200", "A100 40GB"),
         ("B200", "H100 SXM"), ("H100 PCIe", "A100 40GB"), ("L40S", "L4"),
         ("A100 80GB", "V100 SXM")]), strict=True)) | {"dtype": "fp16"},
    dimension="count", unit="×", extra_units=wording.TIMES, rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 9. FLOP/s per watt

def _watt_derived(p: P) -> dict[str, Any]:
    g = hardware.gpu(p["gpu"])
    return {"peak": wording.tflop_rate(g.dense("fp16")),
            "sparse": wording.tflop_rate(g.sparse_flops["fp16"]),
            "watts": core.format_number(g.tdp_watts), "fp32": wording.tflop_rate(g.dense("fp32")),
            "other": "H100 SXM" if p["gpu"] == "L4" else "L4",
            "other_rate": core.format_number(hardware.flops_per_watt(
                hardware.gpu("H100 SXM" if p["gpu"] == "L4" else "L4")) / 1e9, 4)}


per_watt = core.NumericExercise(
    lesson=LESSON, number=9, title="Dense FP16 FLOP/s per watt of the {gpu}",
    question=(
        "The {gpu} is rated at {watts} W. Its datasheet gives {peak} of dense FP16 "
        "tensor-core math ({sparse} with 2:4 sparsity) and {fp32} in plain FP32. How many "
        "GFLOP/s of dense FP16 does it deliver per watt at full power?"
    ),
    hints=("Efficiency = peak FLOP/s ÷ power in watts.",
           "Use the dense FP16 figure; 1 TFLOP/s = 1,000 GFLOP/s."),
    solution=(
        "{peak} ÷ {watts} W = **{answer}** (FLOP per joule, in other words). For comparison "
        "the {other} reaches {other_rate} GFLOP/s/W. These are datasheet ceilings: "
        "real work draws less power than the rating and reaches less than the peak, so "
        "measure both when efficiency matters."
    ),
    answer=lambda p: hardware.flops_per_watt(hardware.gpu(p["gpu"]), "fp16"),
    derived=_watt_derived,
    mistakes=(
        mistakes.used_sparse_peak(lambda p: hardware.flops_per_watt(hardware.gpu(p["gpu"]), "fp16",
                                                                    sparse=True)),
        Mistake("fp32_rate",
                "That uses the plain FP32 rate ({fp32}). The question asks about dense FP16 "
                "on the tensor cores: {peak}.",
                lambda p: hardware.flops_per_watt(hardware.gpu(p["gpu"]), "fp32")),
    ),
    defaults={"gpu": "H100 SXM"},
    sample=lambda rng: {"gpu": rng.choice([n for n, g in hardware.GPUS.items()
                                           if "fp16" in g.sparse_flops
                                           and "fp32" in g.peak_flops])},
    dimension="count", unit="GFLOP/s/W", extra_units=wording.PER_WATT, rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 10. Weights in a block-scaled 4-bit format

def _fp4_weights(p: P, bytes_per_param: float | None = None) -> float:
    n = transformer.param_count(config(p))
    if bytes_per_param is None:
        return memory.weight_bytes(n, precision=p["format"])
    return n * bytes_per_param


def _fp4_derived(p: P) -> dict[str, Any]:
    block = precision.block_format(p["format"])
    other = precision.block_format("nvfp4" if p["format"] == "mxfp4" else "mxfp4")
    return {"label": wording.model_label(p["model"]), "fmt": block.name, "elem": block.element.bits,
            "block": block.block_size, "scale": block.scale.name,
            "scale_bits": block.scale.bits, "bits": core.format_number(block.bits_per_element),
            "a_scale_bits": wording.with_article(f"{block.scale.bits}-bit"),
            "a_scale": wording.with_article(block.scale.name),
            "n": wording.count(transformer.param_count(config(p))),
            "bare": format_bytes(_fp4_weights(p, 0.5)), "other": other.name,
            "other_gb": format_bytes(_fp4_weights(p, other.bytes_per_element))}


fp4_weights = core.NumericExercise(
    lesson=LESSON, number=10, title="The weights of {label} in {fmt}",
    question=(
        "{label} is stored in {fmt}: {elem}-bit E2M1 elements in blocks of {block}, each "
        "block with one {scale_bits}-bit {scale} scale. How many GB do its {n} weights take "
        "(leave out any per-tensor scale)?"
    ),
    hints=(
        "Every block of {block} elements carries its scale: how many bits is that per "
        "element?",
        "{elem} + {scale_bits}/{block} = {bits} bits per element.",
    ),
    solution=(
        "Each element costs its {elem} bits plus a share of its block's scale, "
        "{scale_bits}/{block} bits: {bits} bits, so the weights take **{answer}** "
        "(`memory.weight_bytes(n, precision=...)`, which reads "
        "`precision.bits_per_element`). A bare half byte per weight would say {bare}; "
        "{other} would take {other_gb}."
    ),
    answer=_fp4_weights,
    derived=_fp4_derived,
    mistakes=(
        Mistake("forgot_scales",
                "That is 4 bits per weight, the elements alone. Every block of {block} also "
                "stores {a_scale_bits} scale: {bits} bits per weight.",
                lambda p: _fp4_weights(p, 0.5)),
        Mistake("other_block",
                "That is {other}'s size: {fmt} uses blocks of {block} with {a_scale} scale.",
                lambda p: _fp4_weights(p, precision.block_format(
                    "nvfp4" if p["format"] == "mxfp4" else "mxfp4").bytes_per_element)),
        Mistake("fp8_bytes", "That is one byte per weight, FP8. FP4 elements take half a "
                "byte before their scales.", lambda p: _fp4_weights(p, 1.0)),
        _common.gib_as_gb_of(_fp4_weights),
    ),
    defaults={"model": "llama-3-70b", "format": "mxfp4"},
    sample=lambda rng: {"model": rng.choice(["llama-3-8b", "llama-3-70b", "qwen3-8b",
                                             "llama-3.1-405b", "mixtral-8x7b"]),
                        "format": rng.choice(["mxfp4", "nvfp4"])},
    dimension="bytes", unit="GB", rtol=0.005,
)


EXERCISES = (
    seed_bytes_precision,
    mlp_intensity,
    gemm_time_h100,
    roofline_time_code,
    ridge_in_precision,
    batch_turns_compute_bound,
    half_precision_on_cpu,
    sparse_mixup,
    per_watt,
    fp4_weights,
)

__all__ = ["EXERCISES", "LESSON", "TITLE"]
