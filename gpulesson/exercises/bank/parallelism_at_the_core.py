"""Exercises of lesson 1, *Parallelism at the Core* (``exercises/parallelism_at_the_core.ipynb``).

They turn the lesson's "now change it" practice into checked exercises: loop versus
vectorised (predict, then run), FLOPs of a matrix product, rounds of work for few or
many workers, Amdahl's law, what fits in 24 GB, the training state of a fine-tune,
arithmetic intensity and the ridge point, and the decode ceiling on CPU memory.

Every answer and every figure in a worked solution comes from the calculators
(:mod:`gpulesson.gemm`, :mod:`gpulesson.roofline`, :mod:`gpulesson.memory`,
:mod:`gpulesson.inference`, :mod:`gpulesson.hardware`). Standard library only.
"""

from __future__ import annotations

from typing import Any

from gpulesson import course, gemm, hardware, inference, memory, roofline
from gpulesson.exercises import core, mistakes, wording
from gpulesson.exercises.bank import _common
from gpulesson.exercises.bank._common import CONTEXT_ALLOWANCE, H100, P, drawn_until
from gpulesson.exercises.core import Mistake
from gpulesson.precision import block_format
from gpulesson.units import format_bytes

LESSON = "parallelism_at_the_core"
TITLE = course.title(LESSON)


_gb = wording.size  # to one decimal: '24 GB', '13.5 GB'
_bw = wording.bandwidth  # to two decimals: '3.35 TB/s'


def _slip(answer: Any, chosen: Any) -> Any:
    """A choice mistake's value: the option ``chosen`` by the slip, or ``None`` where that
    option is the right answer (the slip changes nothing there). A mistake that always
    names the same option would otherwise make ``variant()`` reject every draw with that
    answer, and every variant would have the same one."""
    return None if chosen == answer else chosen


# ---------------------------------------------------------------------------------------
# 1. Predict, then run: a Python loop against one vectorised call

loop_vs_vectorised = core.PredictExercise(
    lesson=LESSON, number=1, title="Loop against vectorised: predict, then run",
    question=(
        "The next cells multiply two square matrices twice: once with a plain Python triple "
        "loop that computes one output cell at a time, once with a single vectorised call "
        "(`X @ W`, which hands the whole product to an optimised library).\n\n"
        "Before running them: **how many times faster** do you expect the vectorised call "
        "to be? Commit a number, then run the measurement."
    ),
    hints=(
        "The loop runs every multiply-add as separate Python bytecode, tens of nanoseconds "
        "each; the library runs them in compiled code that uses SIMD lanes and every core.",
        "Think in powers of ten: is it 2×, 20×, 200× or 2,000×?",
    ),
    solution=(
        "On a laptop or a small server the vectorised call is usually hundreds to thousands "
        "of times faster, and the gap grows with the matrix size: the loop pays the Python "
        "interpreter's cost for every single multiply-add, while the library does the same "
        "arithmetic in compiled, vectorised code spread over all cores.\n\n"
        "Both compute the same cells, and each cell is independent of the others: that "
        "independence is what lets the library (and a GPU, with thousands of cores) work on "
        "many cells at once."
    ),
    dimension="count", unit="×", extra_units=wording.TIMES, good_within=3.0,
)


# ---------------------------------------------------------------------------------------
# 2. FLOPs of a small matrix product

def _matmul_derived(p: P) -> dict[str, Any]:
    m, k, n = p["m"], p["k"], p["n"]
    return {"cells": m * n, "flops": core.format_number(gemm.flops(m, k, n)),
            "macs": core.format_number(gemm.flops(m, k, n) // 2),
            "a_left": wording.with_article(f"{m}×{k}"),
            "a_right": wording.with_article(f"{k}×{n}")}


matmul_flops_small = core.NumericExercise(
    lesson=LESSON, number=2, title="FLOPs of a small matrix product",
    question=(
        "How many floating-point operations (FLOPs) does it take to multiply {a_left} "
        "matrix by {a_right} matrix? Use the course convention: one multiply-add counts as "
        "2 FLOPs."
    ),
    hints=(
        "How many cells does the result have, and how long is the dot product behind each?",
        "The result is {m}×{n}; each cell takes {k} multiplies and {k} adds.",
    ),
    solution=(
        "The result has {m} × {n} = {cells} cells. Each is a dot product of length {k}: "
        "{k} multiplies and {k} adds, that is 2 × {k} FLOPs. In total 2·M·K·N = "
        "2 × {m} × {k} × {n} = **{flops} FLOPs** ({macs} multiply-adds).\n\n"
        "Counting strictly, a dot product of length {k} needs only {k} − 1 additions, but "
        "the 2·M·K·N convention counts one multiply-add per term, which is what hardware "
        "executes (a fused multiply-add) and what peak FLOP/s figures assume."
    ),
    answer=lambda p: gemm.flops(p["m"], p["k"], p["n"]),
    derived=_matmul_derived,
    mistakes=(
        mistakes.counted_macs(lambda p: gemm.flops(p["m"], p["k"], p["n"]) / 2),
        Mistake("exact_adds",
                "You counted exactly {k} − 1 additions per cell. Fine arithmetic, but the "
                "convention counts one multiply-add (2 FLOPs) per term: 2·M·K·N.",
                lambda p: p["m"] * p["n"] * (2 * p["k"] - 1)),
        Mistake("counted_cells",
                "That is the number of output cells. Each cell is a dot product of length "
                "{k}, which costs 2 × {k} FLOPs.",
                lambda p: p["m"] * p["n"]),
    ),
    defaults={"m": 2, "k": 3, "n": 4},
    sample=lambda rng: {"m": rng.randint(2, 9), "k": rng.randint(2, 9), "n": rng.randint(2, 9)},
    dimension="flops", unit="FLOP", rtol=0.0, atol=0.0,
)


# ---------------------------------------------------------------------------------------
# 3. Code: matmul_flops

def _matmul_flops_model(m, k, n):
    # one multiply and one add for each of the k terms of each of the m*n output cells
    return 2 * m * k * n


matmul_flops_code = core.CodeExercise(
    lesson=LESSON, number=3, title="Write matmul_flops",
    question=(
        "Write a function `matmul_flops(m, k, n)` that returns the FLOPs of multiplying an "
        "m×k matrix by a k×n matrix (a multiply-add is 2 FLOPs). It is checked on the "
        "lesson's numbers and on random sizes against the course's calculator "
        "`gpulesson.gemm.flops`."
    ),
    hints=(
        "How many output cells are there, and how many multiply-adds does each need?",
        "m·n cells, k multiply-adds each, 2 FLOPs per multiply-add.",
    ),
    solution=(
        "Count cells times work per cell: m·n cells, each k multiply-adds of 2 FLOPs. "
        "For a 32×4096 batch times a 4096×4096 layer that is "
        f"{core.format_number(gemm.flops(32, 4096, 4096))} FLOPs, about 1.1 GFLOP."
    ),
    function_name="matmul_flops", signature="m, k, n",
    reference=lambda m, k, n: gemm.flops(m, k, n),
    sample_input=lambda rng: {"m": rng.randint(1, 4096), "k": rng.randint(2, 8192),
                              "n": rng.randint(1, 4096)},
    examples=({"m": 2, "k": 3, "n": 4}, {"m": 32, "k": 4096, "n": 4096}),
    mistakes=(
        mistakes.counted_macs(lambda i: i["m"] * i["k"] * i["n"]),
        Mistake("exact_adds",
                "Your function counts exactly k − 1 additions per cell; the convention "
                "counts 2 FLOPs for each of the k multiply-adds: 2·m·k·n.",
                lambda i: i["m"] * i["n"] * (2 * i["k"] - 1)),
        Mistake("counted_cells", "That is the number of output cells, m·n; each costs 2·k "
                "FLOPs.", lambda i: i["m"] * i["n"]),
    ),
    model_solution=_matmul_flops_model,
    rtol=0.0,
)


# ---------------------------------------------------------------------------------------
# 4, 5. Rounds of work for few and for many workers

def _rounds_derived(p: P) -> dict[str, Any]:
    cells = p["batch"] * p["d_out"]
    busy = roofline.parallel_occupancy(cells, p["workers"])
    return {"cells": wording.count(cells), "workers_text": wording.count(p['workers']),
            "d_out_text": wording.count(p['d_out']),
            "rounds32": wording.count(roofline.parallel_rounds(32 * p['d_out'], p['workers'])),
            "busy": wording.rounded_percent(busy), "idle": wording.rounded_percent(1 - busy)}


def _rounds_exercise(number: int, title: str, workers: int, machine: str,
                     sample_workers: tuple[int, ...], closing: str) -> core.NumericExercise:
    return core.NumericExercise(
        lesson=LESSON, number=number, title=title,
        question=(
            "The lesson's layer multiplies a batch of inputs by a 4,096×{d_out_text} weight "
            "matrix; each output cell is an independent dot product. Set the batch size to "
            "{batch}, so there are {batch} × {d_out_text} output cells.\n\n"
            f"With {{workers_text}} {machine}, each finishing one cell per round, how many "
            "rounds does the layer take?"
        ),
        hints=("Count the cells first: batch × output width.",
               "Rounds = cells ÷ workers, rounded up (a partly used round is still a round)."),
        solution=(
            "There are {batch} × {d_out_text} = {cells} cells. {workers_text} workers "
            "finish them in ⌈{cells} ÷ {workers_text}⌉ = **{answer}**; at batch 32 it was "
            "{rounds32} rounds.\n\n" + closing
        ),
        answer=lambda p: roofline.parallel_rounds(p["batch"] * p["d_out"], p["workers"]),
        derived=_rounds_derived,
        mistakes=(
            Mistake("kept_batch_32",
                    "That is the answer for the lesson's batch of 32. Set the batch to "
                    "{batch}: there are {cells} cells now.",
                    lambda p: roofline.parallel_rounds(32 * p["d_out"], p["workers"])),
            Mistake("counted_cells",
                    "That is the number of cells. Each round, every one of the "
                    "{workers_text} workers finishes one cell: divide.",
                    lambda p: p["batch"] * p["d_out"]),
        ),
        defaults={"batch": 1, "d_out": 4096, "workers": workers},
        sample=lambda rng: {"batch": rng.choice([1, 2, 4]),
                            "d_out": rng.choice([1024, 2048, 4096, 8192]),
                            "workers": rng.choice(sample_workers)},
        dimension="count", unit="rounds", extra_units={"rounds": 1, "round": 1},
        rtol=0.0, atol=0.0,
    )


rounds_few = _rounds_exercise(
    4, "Rounds at batch {batch}: {workers_text} fast cores", 8, "fast cores", (8, 16, 32, 64),
    "A handful of fast cores must walk through the cells one round after another, so the "
    "time grows with the number of cells.",
)
rounds_many = _rounds_exercise(
    5, "Rounds at batch {batch}: {workers_text} simple cores", 4096, "simple cores",
    (2048, 4096, 8192, 16384),
    "Over the {answer}, {busy} of the worker slots hold a cell and {idle} stay idle. With "
    "so little "
    "work per step the arithmetic is over almost at once; what takes the time is bringing "
    "the weights from memory to the workers, the clerk of the lesson's stadium. That is "
    "why batch-1 work leaves a GPU's cores mostly waiting.",
)


# ---------------------------------------------------------------------------------------
# 6. Amdahl's law with 8 workers

def _amdahl_derived(p: P) -> dict[str, Any]:
    s, n = p["serial"], p["workers"]
    speedup = roofline.amdahl_speedup(s, n)
    return {"serial_pct": wording.rounded_percent(s),
            "parallel_pct": wording.rounded_percent(1 - s),
            "limit": core.format_number(1 / s, 3),
            # time with n workers as a fraction of one worker's time is 1/speedup
            "new_time": core.format_number(1 / speedup, 3),
            "serial_share_after": wording.rounded_percent(s * speedup)}


amdahl_eight = core.NumericExercise(
    lesson=LESSON, number=6, title="Amdahl's law with {workers} workers",
    question=(
        "A job has {serial_pct} strictly serial work; the other {parallel_pct} splits "
        "perfectly. What speed-up do {workers} workers give over one?"
    ),
    hints=(
        "Take one worker's time as 1. Only the parallel part shrinks.",
        "Time with {workers} workers: {serial} + {parallel_pct} ÷ {workers}. The speed-up is "
        "1 divided by that.",
    ),
    solution=(
        "With one worker's time as 1, {workers} workers need {serial} + (1 − {serial}) ÷ "
        "{workers} = {new_time} of it, so the speed-up is 1 ÷ {new_time} = **{answer}**, "
        "short of the {workers}× a perfectly parallel job would get.\n\n"
        "Is the serial part still the main limit? On one worker it was {serial_pct} of the "
        "time; with {workers} workers it is already {serial_share_after}, because only the "
        "parallel part shrank. Each extra worker buys less, and no number of workers beats "
        "1 ÷ {serial} = {limit}×."
    ),
    answer=lambda p: roofline.amdahl_speedup(p["serial"], p["workers"]),
    derived=_amdahl_derived,
    mistakes=(
        Mistake("ignored_serial",
                "That is the speed-up of a perfectly parallel job. The {serial_pct} serial "
                "part does not get faster with more workers.",
                lambda p: roofline.amdahl_speedup(0.0, p["workers"])),
        Mistake("infinite_limit",
                "That is the limit for infinitely many workers (1 ÷ serial share). With "
                "{workers} workers the parallel part still takes {parallel_pct} ÷ {workers}.",
                lambda p: 1 / p["serial"]),
        Mistake("swapped_shares",
                "It looks like you took {parallel_pct} as the serial share. The serial part "
                "is the {serial_pct} that cannot be split.",
                lambda p: roofline.amdahl_speedup(1 - p["serial"], p["workers"])),
    ),
    defaults={"serial": 0.05, "workers": 8},
    sample=lambda rng: {"serial": rng.choice([0.02, 0.05, 0.1, 0.2, 0.25]),
                        "workers": rng.choice([4, 8, 16, 32, 64])},
    dimension="count", unit="×", extra_units=wording.TIMES, rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 7. A faster GPU, the same data loading

def _gpu_job_derived(p: P) -> dict[str, Any]:
    speedup = roofline.amdahl_speedup(p["data_share"], p["gpu_speedup"])
    return {"data_pct": wording.rounded_percent(p["data_share"]),
            "gpu_pct": wording.rounded_percent(1 - p["data_share"]),
            "new_time": core.format_number(1 / speedup, 3),
            "limit": core.format_number(1 / p["data_share"], 3)}


faster_gpu_job = core.NumericExercise(
    lesson=LESSON, number=7,
    title=lambda c: ("Twice the GPU" if c["gpu_speedup"] == 2 else
                     f"A {c['gpu_speedup']}× faster GPU") + ", the same data loading",
    question=(
        "A training job spends {data_pct} of its time loading and preparing data on the CPU "
        "and {gpu_pct} on GPU maths. We swap in a GPU that is {gpu_speedup}× faster and "
        "change nothing else. How much faster is the whole job?"
    ),
    hints=("Which part of the time does the new GPU shrink, and which stays as it was?",
           "This is Amdahl's law: the data part is the serial share, the GPU's speed-up "
           "plays the role of the workers."),
    solution=(
        "The data part stays at {data_share}; the GPU part shrinks from {gpu_pct} to "
        "{gpu_pct} ÷ {gpu_speedup}. The job now takes {new_time} of its old time: a speed-up "
        "of **{answer}**. Even an infinitely fast GPU would give at most {limit}×; speeding "
        "up the data loading pays more than another GPU upgrade."
    ),
    answer=lambda p: roofline.amdahl_speedup(p["data_share"], p["gpu_speedup"]),
    derived=_gpu_job_derived,
    mistakes=(
        Mistake("whole_job_faster",
                "Only the GPU's {gpu_pct} of the time gets faster; the {data_pct} spent on "
                "data loading stays the same.",
                lambda p: roofline.amdahl_speedup(0.0, p["gpu_speedup"])),
        mistakes.inverted_ratio(
            lambda p: 1 / roofline.amdahl_speedup(p["data_share"], p["gpu_speedup"]),
            hint="That is the new time as a fraction of the old one. The speed-up is old "
                 "time ÷ new time, its inverse."),
    ),
    defaults={"data_share": 0.5, "gpu_speedup": 2},
    sample=lambda rng: {"data_share": rng.choice([0.2, 0.3, 0.4, 0.5, 0.6]),
                        "gpu_speedup": rng.choice([2, 3, 4, 10])},
    dimension="count", unit="×", extra_units=wording.TIMES, rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 8. Code: amdahl_speedup

def _amdahl_model(serial_fraction, workers):
    # time on one worker is 1; only the parallel part (1 - s) is divided among the workers
    return 1 / (serial_fraction + (1 - serial_fraction) / workers)


amdahl_code = core.CodeExercise(
    lesson=LESSON, number=8, title="Write amdahl_speedup",
    question=(
        "Write `amdahl_speedup(serial_fraction, workers)`: the speed-up of a job whose "
        "share `serial_fraction` (between 0 and 1) cannot be parallelised, on `workers` "
        "workers. It is checked against `gpulesson.roofline.amdahl_speedup` on the lesson's "
        "numbers and on random inputs."
    ),
    hints=("Take one worker's time as 1 and write the time with `workers` workers.",
           "Speed-up = 1 / (serial + parallel / workers)."),
    solution=(
        "One worker's time is 1; with n workers it is s + (1 − s)/n, and the speed-up is "
        "its inverse. With 5% serial: "
        f"{core.format_number(roofline.amdahl_speedup(0.05, 8), 3)}× on 8 workers, "
        f"{core.format_number(roofline.amdahl_speedup(0.05, 4096), 3)}× on 4,096."
    ),
    function_name="amdahl_speedup", signature="serial_fraction, workers",
    reference=lambda serial_fraction, workers: roofline.amdahl_speedup(serial_fraction, workers),
    sample_input=lambda rng: {"serial_fraction": round(rng.uniform(0.01, 0.9), 3),
                              "workers": rng.randint(2, 4096)},
    examples=({"serial_fraction": 0.05, "workers": 8},
              {"serial_fraction": 0.05, "workers": 4096},
              {"serial_fraction": 0.5, "workers": 4096}),
    mistakes=(
        Mistake("ignored_serial", "Your function returns the worker count: the serial part "
                "does not speed up.", lambda i: float(i["workers"])),
        Mistake("infinite_limit", "That is 1 / serial_fraction, the limit for infinitely "
                "many workers; include the parallel part divided by workers.",
                lambda i: 1 / i["serial_fraction"]),
        Mistake("swapped_shares", "serial_fraction is the part that cannot be split; it "
                "looks like your function treats it as the parallel part.",
                lambda i: 1 / ((1 - i["serial_fraction"]) + i["serial_fraction"] / i["workers"])),
    ),
    model_solution=_amdahl_model,
    rtol=1e-9,
)


# ---------------------------------------------------------------------------------------
# 9. Does a 7B model fit on a 24 GB card?

def _fit_derived(p: P) -> dict[str, Any]:
    n, mem = p["n_params"], p["memory"]
    fp16 = memory.weight_bytes(n, precision="fp16")
    fp32 = memory.weight_bytes(n, precision="fp32")
    spare = memory.headroom(fp16, mem)
    return {"model": wording.billions(n), "mem_gb": _gb(mem), "fp16_gb": _gb(fp16),
            "a_model": wording.with_article(wording.billions(n)),
            "a_mem_gb": wording.with_article(_gb(mem)),
            "fp32_gb": _gb(fp32),
            "spare_text": (f"in FP16, {_gb(spare)} stays free for them" if spare >= 0 else
                           f"in FP16 the card is already {_gb(-spare)} short"),
            "fp16_verdict": "fit" if spare >= 0 else "do not fit",
            "fp32_verdict": "fit" if memory.fits(fp32, mem) else "do not fit",
            "train_gb": _gb(memory.training_memory(n, batch=1, seq_len=1).total)}


def _fit_answer(p: P) -> str:
    fp16 = memory.fits(memory.weight_bytes(p["n_params"], precision="fp16"), p["memory"])
    fp32 = memory.fits(memory.weight_bytes(p["n_params"], precision="fp32"), p["memory"])
    return {(True, True): "both", (True, False): "fp16", (False, False): "neither"}[(fp16, fp32)]


def _fit_with(bytes_fp16: float, bytes_fp32: float, mem: float) -> str:
    fp16, fp32 = memory.fits(bytes_fp16, mem), memory.fits(bytes_fp32, mem)
    return "both" if fp16 and fp32 else ("fp16" if fp16 else "neither")


def _leaves_the_allowance(p: P) -> bool:
    """Whether the FP16 and FP32 weights each either do not fit on the card or leave at
    least the lesson's 2 GB for the CUDA context: no "yes" with (almost) nothing left, such
    as 8B in FP16 (16 GB) on a 16 GB card."""
    spare = [memory.headroom(memory.weight_bytes(p["n_params"], precision=prec), p["memory"])
             for prec in ("fp16", "fp32")]
    return all(s < 0 or s >= CONTEXT_ALLOWANCE for s in spare)


_fit_sample = drawn_until(lambda rng: {"n_params": rng.choice([3e9, 7e9, 8e9, 13e9]),
                                       "memory": rng.choice([16e9, 24e9, 40e9, 48e9, 80e9])},
                          _leaves_the_allowance)


fits_on_24gb = core.ChoiceExercise(
    lesson=LESSON, number=9, title="Will {a_model} model fit on {a_mem_gb} card?",
    question=(
        "Our shop's GPU has {mem_gb} of memory. Can it hold the weights of the {model}-"
        "parameter model for serving in FP16? In FP32?"
    ),
    options=[("both", "Yes in FP16 and yes in FP32"),
             ("fp16", "Yes in FP16, no in FP32"),
             ("neither", "Neither: it does not fit in FP16 or in FP32")],
    hints=("Weights take parameters × bytes per parameter.",
           "FP16 is 2 bytes per parameter, FP32 is 4."),
    solution=(
        "In FP16 the weights take {model} × 2 bytes = {fp16_gb}, in FP32 {model} × 4 bytes "
        "= {fp32_gb}. On {a_mem_gb} card they {fp16_verdict} in FP16 and {fp32_verdict} in "
        "FP32: **{answer}**.\n\n"
        "Serving needs more than weights: the KV cache of every conversation and some "
        "overhead ({spare_text}). Fully fine-tuning "
        "is another matter: the training state alone is {train_gb}."
    ),
    answer=_fit_answer,
    derived=_fit_derived,
    mistakes=(
        Mistake("one_byte_per_param",
                "Check the bytes per parameter: FP16 takes 2 bytes and FP32 4, so the "
                "weights are {fp16_gb} in FP16 and {fp32_gb} in FP32.",
                lambda p: _slip(_fit_answer(p), _fit_with(p["n_params"], 2 * p["n_params"],
                                                          p["memory"]))),
        Mistake("training_state",
                "16 bytes per parameter is the training state (weights, gradients, Adam's "
                "states). To serve the model we need the weights: {fp16_gb} in FP16.",
                lambda p: _slip(_fit_answer(p), _fit_with(
                    memory.training_memory(p["n_params"], batch=1, seq_len=1).total,
                    memory.training_memory(p["n_params"], batch=1, seq_len=1,
                                           precision="fp32").total,
                    p["memory"]))),
    ),
    defaults={"n_params": 7e9, "memory": 24e9},
    sample=_fit_sample,
)


# ---------------------------------------------------------------------------------------
# 10. Memory to fully fine-tune

def _train_derived(p: P) -> dict[str, Any]:
    state = memory.training_memory(p["n_params"], batch=1, seq_len=1)
    per = memory.model_state_bytes("mixed", "adam")
    return {"model": wording.billions(p["n_params"]), "weights_gb": _gb(state.weights),
            "grads_gb": _gb(state.gradients), "opt_gb": _gb(state.optimizer),
            "per_param": per.total, "w_b": per.weights, "g_b": per.gradients,
            "o_b": per.optimizer,
            "cards": _cards_sentence(memory.gpus_needed(state.total, 80e9))}


def _cards_sentence(cards: int) -> str:
    """How many 80 GB GPUs the training state needs, as the solution says it (a small
    model's state fits on one: no "at least 1 80 GB GPUs")."""
    if cards <= 1:
        return "That fits on one 80 GB GPU."
    return (f"That needs at least {cards} GPUs of 80 GB, or tricks such as LoRA, "
            "quantisation or sharding.")


fine_tune_state = core.NumericExercise(
    lesson=LESSON, number=10, title="Memory to fully fine-tune",
    question=(
        "We fully fine-tune the {model}-parameter model with mixed-precision Adam. How much "
        "memory do the weights, gradients and optimizer states take together, in GB "
        "(10^9 bytes)? Leave out activations."
    ),
    hints=("List what training keeps per parameter besides the FP16 weight.",
           "FP16 weight and gradient, an FP32 master copy, and Adam's two FP32 moments."),
    solution=(
        "Mixed-precision Adam keeps {per_param} bytes per parameter: {w_b} for the FP16 "
        "weights, {g_b} for the FP16 gradients and {o_b} for the optimizer (an FP32 master "
        "copy and two FP32 moments). For {model} parameters: weights {weights_gb}, gradients "
        "{grads_gb}, optimizer {opt_gb}, in total **{answer}**, before any activations. "
        "{cards}"
    ),
    answer=lambda p: memory.training_memory(p["n_params"], batch=1, seq_len=1).total,
    derived=_train_derived,
    mistakes=(
        mistakes.forgot_training_state(
            lambda p: memory.weight_bytes(p["n_params"], precision="fp16")),
        Mistake("forgot_optimizer",
                "You counted weights and gradients. Adam also keeps an FP32 master copy and "
                "two FP32 moments per parameter: {o_b} more bytes each.",
                lambda p: (lambda s: s.weights + s.gradients)(
                    memory.training_memory(p["n_params"], batch=1, seq_len=1))),
        _common.gib_as_gb_of(
            lambda p: memory.training_memory(p["n_params"], batch=1, seq_len=1).total),
    ),
    defaults={"n_params": 7e9},
    sample=lambda rng: {"n_params": rng.choice([1e9, 3e9, 7e9, 8e9, 13e9, 70e9])},
    dimension="bytes", unit="GB", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 11. Arithmetic intensity at batch 256 (and 1)

def _layer(p: P) -> tuple[int, int, int]:
    return p["batch"], p["d"], p["d"]


def _intensity(p: P, batch: int | None = None) -> float:
    """The FP16 intensity of a batch of inputs (``p["batch"]`` unless another is named)
    through the ``p["d"]`` × ``p["d"]`` layer of exercises 11 and 12, in FLOP/byte."""
    return gemm.arithmetic_intensity(batch or p["batch"], p["d"], p["d"], bytes_per_element=2)


def _a_square(d: int) -> str:
    """The ``d`` × ``d`` weight matrix of exercises 11 and 12 with its article:
    "an 8,192×8,192"."""
    return wording.with_article(f"{wording.count(d)}×{wording.count(d)}")


def _intensity_derived(p: P) -> dict[str, Any]:
    b, d = p["batch"], p["d"]
    return {
        "d_text": wording.count(d),
        "a_weight": _a_square(d),
        "flops": wording.flop_count(gemm.flops(b, d, d)),
        "bytes": wording.size(gemm.min_bytes(b, d, d, bytes_per_element=2), 2),
        "weight_bytes": wording.size(memory.weight_bytes(d * d, precision="fp16"), 2),
        "i1": core.format_number(_intensity(p, 1), 3),
        "ridge": core.format_number(hardware.gpu(H100).ridge_point("fp16"), 3),
        "verdict": ("at batch {batch} the layer is still memory-bound there."
                    if _bound_key({"gpu": H100, "batch": b, "d": d}) == "memory_both"
                    else "at batch {batch} it crosses into compute-bound territory."
                    ).format(batch=b),
    }


intensity_large_batch = core.NumericExercise(
    lesson=LESSON, number=11, title="Arithmetic intensity of a layer at batch {batch}",
    question=(
        "A layer multiplies a batch of {batch} inputs ({batch}×{d_text}) by "
        "{a_weight} weight matrix, everything in FP16 (2 bytes per number). Reading "
        "the input and the weights once and writing the output once, what is its arithmetic "
        "intensity in FLOP per byte?"
    ),
    hints=("Intensity = FLOPs ÷ bytes moved.",
           "FLOPs = 2·M·K·N; bytes = 2 × (input + weights + output elements)."),
    solution=(
        "FLOPs: 2 × {batch} × {d_text} × {d_text} = {flops}. Bytes: 2 × ({batch}·{d_text} "
        "+ {d_text}·{d_text} + {batch}·{d_text}) = {bytes}. Intensity = **{answer}**.\n\n"
        "At batch 1 the same layer does only {i1} FLOP per byte: each weight is read to be "
        "used once. Batching reuses every weight for all {batch} inputs. Compare both with "
        "an H100's ridge point of about {ridge} FLOP/byte: {verdict}"
    ),
    answer=_intensity,
    derived=_intensity_derived,
    mistakes=_common.intensity_slips(_layer, "fp16", weights_only=(
        "You counted only the weights' bytes ({weight_bytes}). At batch {batch} the input and "
        "output matrices add bytes too.")),
    defaults={"batch": 256, "d": 4096},
    sample=lambda rng: {"batch": rng.choice([64, 128, 256, 512]),
                        "d": rng.choice([1024, 2048, 4096, 8192])},
    dimension="count", unit="FLOP/byte", extra_units=wording.PER_BYTE, rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 12. Compute-bound or memory-bound?

def _bound_key(p: P) -> str:
    g = hardware.gpu(p["gpu"])
    small, large = (roofline.bound(_intensity(p, b), g.peak_flops["fp16"], g.bandwidth)
                    for b in (1, p["batch"]))
    return {("memory", "memory"): "memory_both", ("memory", "compute"): "memory_then_compute",
            ("compute", "compute"): "compute_both"}[(small, large)]


def _bound_derived(p: P) -> dict[str, Any]:
    g = hardware.gpu(p["gpu"])
    return {"peak": wording.tflop_rate(g.peak_flops["fp16"]), "bw": _bw(g.bandwidth),
            "ridge": core.format_number(roofline.ridge_point(g.peak_flops["fp16"], g.bandwidth), 3),
            "i1": core.format_number(_intensity(p, 1), 3),
            "ib": core.format_number(_intensity(p), 4),
            "d_text": wording.count(p['d']),
            "a_weight": _a_square(p["d"]),
            # exercise 11's layer only in the lesson's own numbers: each class variant of
            # exercise 11 draws its own layer
            "same_layer": (", as in the previous exercise" if p.get("after_exercise_11")
                           else "")}


bound_on_gpu = core.ChoiceExercise(
    lesson=LESSON, number=12, title="Compute-bound or memory-bound on the {gpu}?",
    question=(
        "The {gpu} does {peak} of dense FP16 maths and moves {bw}. A layer multiplies a "
        "batch of inputs by {a_weight} weight matrix, all in FP16{same_layer}. Is "
        "it compute-bound or memory-bound on the {gpu} at batch 1, and at batch {batch}?"
    ),
    options=[("memory_both", "Memory-bound at batch 1 and at batch {batch}"),
             ("memory_then_compute", "Memory-bound at batch 1, compute-bound at batch {batch}"),
             ("compute_both", "Compute-bound at both")],
    hints=("Compare each intensity with the ridge point: peak FLOP/s ÷ bandwidth.",
           "The ridge point is {ridge} FLOP/byte; the intensities are {i1} and {ib}."),
    solution=(
        "The ridge point is {peak} ÷ {bw} = {ridge} FLOP/byte. The layer does {i1} FLOP/byte "
        "at batch 1 and {ib} at batch {batch}; below the ridge a kernel waits for memory, "
        "above it for arithmetic."
    ),
    answer=_bound_key,
    derived=_bound_derived,
    mistakes=(
        Mistake("big_batch_means_compute",
                "A large batch raises the intensity, but compare it with the ridge point: "
                "{ib} FLOP/byte at batch {batch} against a ridge of {ridge}.",
                lambda p: _slip(_bound_key(p), "memory_then_compute")),
        Mistake("batch_ignored",
                "Batching reuses every weight for all {batch} inputs: the intensity rises "
                "from {i1} FLOP/byte at batch 1 to {ib} at batch {batch}, above the ridge of "
                "{ridge}.",
                lambda p: _slip(_bound_key(p), "memory_both")),
        Mistake("small_batch_compute",
                "At batch 1 each weight is read to be used once: about {i1} FLOP/byte, far "
                "below the ridge of {ridge}.",
                lambda p: _slip(_bound_key(p), "compute_both")),
    ),
    # after_exercise_11: the lesson's own numbers continue exercise 11's (its defaults);
    # the class variants draw no such key
    defaults={"gpu": "H100 SXM", "batch": 256, "d": 4096, "after_exercise_11": True},
    sample=lambda rng: {"gpu": rng.choice(["A100 80GB", "H100 SXM", "H200", "L4", "L40S",
                                           "RTX 4090", "MI300X"]),
                        "batch": rng.choice([64, 128, 256, 512]),
                        "d": rng.choice([2048, 4096, 8192])},
)


# ---------------------------------------------------------------------------------------
# 13. The ridge point, with the dense peak

def _ridge_derived(p: P) -> dict[str, Any]:
    g = hardware.gpu(p["gpu"])
    return {"peak": wording.tflop_rate(g.peak_flops["fp16"]),
            "sparse": wording.tflop_rate(g.sparse_flops["fp16"]), "bw": _bw(g.bandwidth)}


ridge_point = core.NumericExercise(
    lesson=LESSON, number=13, title="The ridge point of the {gpu}",
    question=(
        "The {gpu}'s datasheet lists FP16 tensor-core rates of {peak} (dense) and {sparse} "
        "(with 2:4 sparsity), and a memory bandwidth of {bw}. How many FLOPs per byte must a "
        "dense FP16 matrix product do to keep its cores busy (the ridge point)?"
    ),
    hints=("The ridge point is where the compute time equals the memory time.",
           "Ridge = peak FLOP/s ÷ bandwidth in bytes/s; use the dense rate."),
    solution=(
        "Ridge = {peak} ÷ {bw} = **{answer}**. A dense matrix product never reaches the "
        "sparse rate, which needs weights pruned to a 2:4 pattern; compare like with like. "
        "Kernels below the ridge (like batch-1 decoding) are limited by memory bandwidth."
    ),
    answer=lambda p: hardware.gpu(p["gpu"]).ridge_point("fp16"),
    derived=_ridge_derived,
    mistakes=(
        mistakes.used_sparse_peak(lambda p: _common.sparse_ridge(p, "fp16")),
        mistakes.inverted_ratio(lambda p: 1 / hardware.gpu(p["gpu"]).ridge_point("fp16"),
                                hint="That is bytes per FLOP: you divided bandwidth by peak. The "
                                     "ridge point is FLOP/s ÷ bytes/s."),
    ),
    defaults={"gpu": "H100 SXM"},
    sample=lambda rng: {"gpu": rng.choice([n for n, g in hardware.GPUS.items()
                                           if "fp16" in g.sparse_flops])},
    dimension="count", unit="FLOP/byte", extra_units=wording.PER_BYTE, rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 14. The decode ceiling on a CPU's memory bandwidth

def _decode_derived(p: P) -> dict[str, Any]:
    weights = memory.weight_bytes(p["n_params"], precision=p["precision"])
    h100 = hardware.gpu(H100)
    return {"model": wording.billions(p["n_params"]),
            "prec": wording.precision_label(p["precision"]),
            "bw": _bw(p["bandwidth"]), "weights_gb": _gb(weights),
            "bpp": wording.value_bytes(memory.precision_bytes(p["precision"])),
            "h100_bw": _bw(h100.bandwidth),
            "h100_ceiling": core.format_number(_decode(p, bandwidth=h100.bandwidth), 3)}


def _decode(p: P, *, bandwidth: float | None = None, precision: str | None = None) -> float:
    return _common.decode_ceiling(p, precision=precision or p["precision"],
                          bandwidth=bandwidth or p["bandwidth"])


decode_on_cpu = core.NumericExercise(
    lesson=LESSON, number=14, title="The decode ceiling at {bw}",
    question=(
        "Generating one token for one user reads every weight once. Run the {model}-"
        "parameter model in {prec} from memory that delivers {bw}, in the range of a "
        "desktop CPU's memory. At most how many tokens per second can one conversation get?"
    ),
    hints=("How many bytes must be read for one token?",
           "Tokens per second = bandwidth ÷ bytes of weights per token."),
    solution=(
        "One token reads the weights once: {model} × {bpp} = {weights_gb}. At {bw} "
        "that allows at most **{answer}**, against about {h100_ceiling} tokens/s on an "
        "H100's {h100_bw}.\n\n"
        "Would a faster CPU help? Hardly: the cores sit waiting for the weights to arrive. "
        "Only more memory bandwidth, or fewer bytes per weight (INT8, INT4), raises this "
        "ceiling."
    ),
    answer=_decode,
    derived=_decode_derived,
    mistakes=(
        Mistake("kept_h100_bandwidth",
                "That is the ceiling at the H100's {h100_bw}. Here the memory delivers {bw}.",
                lambda p: _decode(p, bandwidth=hardware.gpu(H100).bandwidth)),
        Mistake("one_byte_per_param",
                "Check the bytes per parameter: {prec} takes {bpp}, so the weights are "
                "{weights_gb}.",
                lambda p: None if p["precision"] == "int8" else _decode(p, precision="int8")),
        mistakes.inverted_ratio(lambda p: 1 / _decode(p),
                                hint="That is seconds per token (bytes ÷ bandwidth). Tokens per "
                                     "second is its inverse: bandwidth ÷ bytes per token."),
    ),
    defaults={"n_params": 7e9, "precision": "fp16", "bandwidth": 50e9},
    sample=lambda rng: {"n_params": rng.choice([3e9, 7e9, 8e9, 13e9]),
                        "precision": rng.choice(["fp16", "int8", "int4"]),
                        "bandwidth": rng.choice([20e9, 40e9, 50e9, 60e9, 80e9, 100e9])},
    dimension="tokens/s", unit="tokens/s", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 15. The decode ceiling with 4-bit weights

def _fp4_format(p: P) -> str:
    """NVFP4 (one E4M3 scale per 16 elements) is NVIDIA's; AMD's MI355X has no NVFP4
    (gpus.json: "MXFP4; no NVFP4 support"), so its variants use OCP MXFP4 (one 8-bit
    E8M0 scale per 32 elements)."""
    return "nvfp4" if hardware.gpu(p["gpu"]).vendor == "NVIDIA" else "mxfp4"


def _fp4_ceiling(p: P, precision: str | None = None) -> float:
    return _common.decode_ceiling(p, precision=precision or _fp4_format(p),
                                  bandwidth=hardware.gpu(p["gpu"]).bandwidth)


def _sentence_start(text: str) -> str:
    """``text`` with its first letter capital and the rest as it is (``'a 7B'`` ->
    ``'A 7B'``; ``str.capitalize`` would write ``'A 7b'``)."""
    return text[:1].upper() + text[1:]


def _fp4_derived(p: P) -> dict[str, Any]:
    g = hardware.gpu(p["gpu"])
    fmt = _fp4_format(p)
    weights = memory.weight_bytes(p["n_params"], precision=fmt)
    model = f"{p['n_params'] / 1e9:g}B"
    return {"model": model, "a_model": wording.with_article(model),
            "A_model": _sentence_start(wording.with_article(model)),
            "gpu": g.name, "a_gpu": wording.with_article(g.name), "bw": wording.bandwidth(
                g.bandwidth), "bits": f"{8 * memory.precision_bytes(fmt):g}",
            "fmt": wording.precision_label(fmt), "block": block_format(fmt).block_size,
            "weights": format_bytes(weights),
            "fp16": core.format_number(_fp4_ceiling(p, "fp16"), 3)}


fp4_decode_ceiling = core.NumericExercise(
    lesson=LESSON, number=15, title="The decode ceiling of {a_model} model in {fmt}",
    question=(
        "{A_model}-parameter model is served on {a_gpu} ({bw}) with its weights in {fmt}: "
        "4-bit elements with one 8-bit scale per block of {block}. At batch 1, what is the "
        "most tokens per second it can generate (the KV cache left out)?"
    ),
    hints=(
        "Each token reads every weight once. How many bytes is one {fmt} weight, its share "
        "of the block scale included?",
        "(4 + 8/{block}) bits = {bits} bits per weight: {weights} per token.",
    ),
    solution=(
        "Every weight is read once per token: {bits} bits each with its scale, {weights} "
        "in all, so the ceiling is bandwidth ÷ bytes = **{answer}** "
        "(`inference.decode_ceiling_tokens_per_second`). In FP16 it would be {fp16} "
        "tokens/s; the FP4 Tensor Cores do not enter: decode at batch 1 is bound by memory."
    ),
    answer=_fp4_ceiling,
    derived=_fp4_derived,
    mistakes=(
        Mistake("forgot_scales",
                "That counts half a byte per weight. {fmt} stores an 8-bit scale with every "
                "{block} elements: {bits} bits per weight.",
                lambda p: _fp4_ceiling(p, "fp4")),
        Mistake("fp16_weights", "That is the ceiling with 2-byte FP16 weights.",
                lambda p: _fp4_ceiling(p, "fp16")),
        Mistake("compute_roof",
                "That is the arithmetic limit, the {gpu}'s FP4 peak ÷ 2N. At batch 1 the "
                "weights' reads take far longer: divide the bandwidth by the bytes.",
                lambda p: hardware.gpu(p["gpu"]).peak_flops["fp4"]
                / inference.decode_flops(p["n_params"], 1)),
    ),
    defaults={"n_params": 7e9, "gpu": "B300"},
    sample=lambda rng: {"n_params": rng.choice([3e9, 7e9, 8e9, 13e9, 32e9, 70e9]),
                        "gpu": rng.choice(["B200", "B300", "MI355X"])},
    dimension="tokens/s", unit="tokens/s", rtol=0.02,
)


EXERCISES = (
    loop_vs_vectorised,
    matmul_flops_small,
    matmul_flops_code,
    rounds_few,
    rounds_many,
    amdahl_eight,
    faster_gpu_job,
    amdahl_code,
    fits_on_24gb,
    fine_tune_state,
    intensity_large_batch,
    bound_on_gpu,
    ridge_point,
    decode_on_cpu,
    fp4_decode_ceiling,
)

__all__ = ["EXERCISES", "LESSON", "TITLE"]
