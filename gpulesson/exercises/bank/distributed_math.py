"""Exercises of lesson 7, *Distributed Math* (``exercises/distributed_math.ipynb``).

They practise what the lesson teaches: the bytes each rank sends in a ring all-reduce,
bus bandwidth from a measured time (and the algorithm-bandwidth mistake), the pipeline
bubble with and without interleaving, ZeRO's model state per GPU, the alpha-beta time of
an all-reduce, scaling efficiency with overlap, the ring all-reduce volume written as
code, a prediction checked against a real MPI all-reduce on this machine, and the bytes a
mixture-of-experts layer's all-to-all sends.

Every answer and every figure in a worked solution comes from the calculators
(:mod:`gpulesson.distributed`, :mod:`gpulesson.traffic`, :mod:`gpulesson.memory`,
:mod:`gpulesson.hardware`).
Standard library only.
"""

from __future__ import annotations

import functools
from typing import Any

from gpulesson import course, distributed, hardware, memory, traffic
from gpulesson.exercises import core, wording
from gpulesson.exercises.bank._common import H100, SERVING_GPUS, P, drawn_until, gib_as_gb_of
from gpulesson.exercises.core import Mistake
from gpulesson.units import format_seconds

LESSON = "distributed_math"
TITLE = course.title(LESSON)


_gb = functools.partial(wording.size, digits=2)
_bw = functools.partial(wording.bandwidth, digits=1)
#: Sizes nccl-tests prints: powers of two shown in MiB or GiB.
_binary = functools.partial(wording.size, digits=0, binary=True)


# ---------------------------------------------------------------------------------------
# 1. Bytes each rank sends in a ring all-reduce

def _grad_bytes(p: P) -> float:
    return memory.weight_bytes(p["n_params"], precision="bf16")


def _ring(p: P, *, factor: float | None = None) -> float:
    size = _grad_bytes(p)
    if factor is None:
        return distributed.allreduce_bytes_per_rank(size, p["n"])
    return factor * size


def _ring_derived(p: P) -> dict[str, Any]:
    size = _grad_bytes(p)
    half = distributed.bus_bandwidth_factor("reduce_scatter", p["n"]) * size
    return {"size": _gb(size), "model": wording.billions(p["n_params"]), "half": _gb(half),
            "chunk": _gb(size / p["n"]), "steps": f"{p['n'] - 1}",
            "factor": core.format_number(distributed.bus_bandwidth_factor("all_reduce", p["n"]), 4),
            "naive": _gb((p["n"] - 1) * size)}


ring_bytes = core.NumericExercise(
    lesson=LESSON, number=1, title="Bytes per GPU in a ring all-reduce",
    question=(
        "Data-parallel training of a {model}-parameter model all-reduces its BF16 "
        "gradients, {size}, across {n} GPUs after every step, with the ring algorithm. "
        "How many bytes does **each GPU send** in one all-reduce, in GB?"
    ),
    hints=(
        "A ring all-reduce is a reduce-scatter followed by an all-gather. The buffer is cut "
        "into {n} chunks of {chunk}.",
        "In each of the two phases every GPU sends one chunk per step, for {steps} steps.",
    ),
    solution=(
        "The buffer is cut into {n} chunks of {chunk}. The reduce-scatter takes {steps} "
        "steps, each sending one chunk: {half} per GPU, after which each GPU holds one fully "
        "summed chunk. The all-gather passes those chunks round the ring in another {steps} "
        "steps: {half} again. In all 2(n−1)/n × {size} = {factor} × {size} = **{answer}**, "
        "and each GPU receives as much.\n\n"
        "The per-GPU traffic barely grows with n: it tends to twice the buffer, which is why "
        "the ring scales to thousands of GPUs (its latency does grow with n). Sending the "
        "whole buffer to every other GPU would cost {naive}."
    ),
    answer=_ring,
    derived=_ring_derived,
    mistakes=(
        Mistake("reduce_scatter_only",
                "That is one phase, the reduce-scatter ({half}). Each GPU then holds only "
                "its own summed chunk; the all-gather sends as much again so that every GPU "
                "gets the whole sum.",
                lambda p: _ring(p, factor=distributed.bus_bandwidth_factor("reduce_scatter",
                                                                           p["n"]))),
        Mistake("twice_the_buffer",
                "2 × the buffer is the limit for very many GPUs. In each phase a GPU sends "
                "{steps} of the {n} chunks, not all {n}: the factor is 2(n−1)/n.",
                lambda p: _ring(p, factor=2)),
        Mistake("naive_broadcast",
                "That is the whole buffer sent to each of the other {steps} GPUs, the naive "
                "exchange. The ring sends each GPU's share only, in chunks.",
                lambda p: _ring(p, factor=p["n"] - 1)),
        gib_as_gb_of(_ring),
    ),
    defaults={"n_params": 7e9, "n": 8},
    # no 70B: all-reducing its full gradients means every GPU holds the BF16 weights and
    # gradients, 280 GB, and with ZeRO-1 at most 306 GB for n <= 32 (audit of 2026-12-06)
    sample=lambda rng: {"n_params": rng.choice([1.3e9, 3e9, 7e9, 13e9, 34e9]),
                        "n": rng.choice([4, 8, 16, 32, 64])},
    dimension="bytes", unit="GB", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 2. Bus bandwidth from a measured time

def _busbw(p: P, *, collective: str = "all_reduce", size: float | None = None) -> float:
    return distributed.bus_bandwidth(collective, p["size"] if size is None else size,
                                     p["time_us"] * 1e-6, p["n"])


def _busbw_derived(p: P) -> dict[str, Any]:
    algbw = distributed.algorithm_bandwidth(p["size"], p["time_us"] * 1e-6)
    return {"size_text": _binary(p["size"]), "size_bytes": wording.count(p['size']),
            "time_text": format_seconds(p["time_us"] * 1e-6, digits=3),
            "algbw": _bw(algbw),
            "factor": core.format_number(distributed.bus_bandwidth_factor("all_reduce", p["n"]), 4)}


def _busbw_sample(rng: Any) -> dict[str, Any]:
    n = rng.choice([4, 8, 16])
    size = rng.choice([2**26, 2**28, 2**30, 2**32])
    link = rng.choice([150e9, 200e9, 300e9, 360e9, 400e9])
    seconds = distributed.collective_time("all_reduce", size, n, bandwidth=link)
    return {"n": n, "size": size, "time_us": float(f"{seconds * 1e6:.3g}")}


busbw_from_time = core.NumericExercise(
    lesson=LESSON, number=2, title="Bus bandwidth from a measured time",
    question=(
        "nccl-tests' all_reduce_perf on {n} GPUs reports that an all-reduce of {size_text} "
        "({size_bytes} bytes) of floats took {time_text}. What **bus bandwidth** (busbw) "
        "does it print, in GB/s?"
    ),
    hints=(
        "First the algorithm bandwidth: size ÷ time.",
        "nccl-tests multiplies it by the bytes each rank moves per byte of buffer: "
        "2(n−1)/n for an all-reduce.",
    ),
    solution=(
        "Algorithm bandwidth = {size_bytes} B ÷ {time_text} = {algbw}. An all-reduce makes "
        "each rank send 2(n−1)/n = {factor} times the buffer, so the bus bandwidth is "
        "{factor} × {algbw} = **{answer}**.\n\n"
        "The bus bandwidth is the figure to compare with the speed of one GPU's link, "
        "whatever the number of GPUs; the algorithm bandwidth is not."
    ),
    answer=_busbw,
    derived=_busbw_derived,
    mistakes=(
        Mistake("algbw",
                "That is the algorithm bandwidth, size ÷ time ({algbw}). The bus bandwidth "
                "multiplies it by 2(n−1)/n = {factor}, the bytes each rank moves per byte "
                "of buffer in an all-reduce.",
                lambda p: distributed.algorithm_bandwidth(p["size"], p["time_us"] * 1e-6)),
        Mistake("gather_factor",
                "You used (n−1)/n, the factor of an all-gather or reduce-scatter. An "
                "all-reduce is both, one after the other: 2(n−1)/n.",
                lambda p: _busbw(p, collective="all_gather")),
        Mistake("gib_as_gb",
                "You took {size_text} as 10^9 bytes. nccl-tests' sizes are powers of two: "
                "{size_text} is {size_bytes} bytes.",
                lambda p: _busbw(p, size=p["size"] / 2**30 * 1e9)),
    ),
    defaults={"n": 8, "size": 2**30, "time_us": 5220.0},
    sample=_busbw_sample,
    dimension="bytes/s", unit="GB/s", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 3 and 4. The pipeline bubble, then interleaved

def _bubble(p: P, *, interleave: int | None = None) -> float:
    v = p.get("v", 1) if interleave is None else interleave
    return distributed.pipeline_bubble_fraction(p["p"], p["m"], v)


def _share_of_total(p: P, *, interleave: int | None = None) -> float:
    v = p.get("v", 1) if interleave is None else interleave
    return _idle_share(p["p"], p["m"], v)


@functools.lru_cache(maxsize=64)
def _idle_share(stages: int, micro_batches: int, v: int) -> float:
    """Idle share of the whole iteration, read off the simulated schedule (once per shape:
    the answer, the wording and each mistake read it)."""
    slots = distributed.pipeline_schedule(stages, micro_batches,
                                          schedule="interleaved" if v > 1 else "1f1b",
                                          interleave=v)
    makespan = distributed.pipeline_makespan(slots)
    busy = sum(s.duration for s in slots if s.stage == 0)
    return (makespan - busy) / makespan


def _bubble_derived(p: P) -> dict[str, Any]:
    v = p.get("v", 1)
    return {"p_minus_1": f"{p['p'] - 1}", "plain": wording.percent(_bubble(p, interleave=1), 4),
            "total": wording.percent(_share_of_total(p), 4), "vm": f"{v * p['m']}",
            "doubled_m": wording.percent(
                distributed.pipeline_bubble_fraction(p["p"], 2 * p["m"]), 4) if v == 1 else "",
            "chunks": f"{v * p['p']}"}


def _bubble_sample(rng: Any) -> dict[str, Any]:
    p = rng.choice([2, 4, 8, 16])
    return {"p": p, "m": p * rng.choice([2, 3, 4, 8])}


pipeline_bubble = core.NumericExercise(
    lesson=LESSON, number=3, title="The bubble of {p} stages and {m} micro-batches",
    question=(
        "A model is split into {p} pipeline stages, and every batch into {m} micro-batches, "
        "with a GPipe or 1F1B schedule. What is the pipeline bubble, as a percentage of the "
        "ideal (bubble-free) time of an iteration?"
    ),
    hints=(
        "The last stage starts work only after the first micro-batch has crossed the "
        "{p_minus_1} stages before it; the pipeline drains the same way at the end.",
        "Idle time ÷ ideal time = (p − 1) ÷ m.",
    ),
    solution=(
        "Filling and draining the pipeline costs (p − 1) forward-and-backward slots of one "
        "micro-batch, while the useful work is m such slots. The bubble is (p − 1)/m = "
        "{p_minus_1}/{m} = **{answer}** of the ideal time. As a share of the whole "
        "iteration, which includes the bubble, it is {total}.\n\n"
        "More micro-batches shrink it: with {m} doubled it would be {doubled_m}. 1F1B has the "
        "same bubble as GPipe; what it saves is memory (at most p micro-batches in flight "
        "instead of m)."
    ),
    answer=_bubble,
    derived=_bubble_derived,
    mistakes=(
        Mistake("p_over_m",
                "That is p/m. The first stage is busy from the start; only the p − 1 stages "
                "after it wait for the pipeline to fill: (p − 1)/m.",
                lambda p: distributed.pipeline_bubble_fraction(p["p"] + 1, p["m"])),
        Mistake("share_of_total",
                "That is the bubble as a share of the *whole* iteration, (p − 1)/(m + p − 1). "
                "The question asks for a share of the ideal time, (p − 1)/m.",
                _share_of_total),
    ),
    defaults={"p": 4, "m": 16},
    sample=_bubble_sample,
    dimension="percent", unit="%", rtol=0.02, digits=4,
)


def _interleaved_sample(rng: Any) -> dict[str, Any]:
    p = rng.choice([4, 8, 16])
    return {"p": p, "m": p * rng.choice([2, 4, 8]), "v": rng.choice([2, 4])}


interleaved_bubble = core.NumericExercise(
    lesson=LESSON, number=4, title="Interleaving: {v} model chunks per GPU",
    question=(
        "The same kind of pipeline, {p} GPUs and {m} micro-batches, now runs Megatron-LM's "
        "interleaved schedule: each GPU holds {v} non-consecutive chunks of layers instead "
        "of one block ({chunks} chunks in all). What is the bubble now, as a percentage of "
        "the ideal time?"
    ),
    hints=(
        "Each chunk is 1/{v} of a stage, so filling and draining the pipeline takes 1/{v} "
        "of the time it took before.",
        "(p − 1)/(v·m).",
    ),
    solution=(
        "Without interleaving the bubble is (p − 1)/m = {plain}. With {v} chunks per GPU "
        "each fill or drain step is a chunk, 1/{v} of a stage, so the bubble is "
        "(p − 1)/(v·m) = {p_minus_1}/{vm} = **{answer}**.\n\n"
        "The price: a micro-batch now crosses the GPUs {v} times, so there are {v} times "
        "as many point-to-point sends of activations."
    ),
    answer=_bubble,
    derived=_bubble_derived,
    mistakes=(
        Mistake("forgot_v",
                "That is the bubble without interleaving, {plain}. Interleaving {v} chunks "
                "per GPU divides it by {v}.",
                lambda p: _bubble(p, interleave=1)),
        Mistake("times_v",
                "Interleaving shrinks the bubble: divide by v = {v}, do not multiply.",
                lambda p: _bubble(p, interleave=1) * p["v"]),
        Mistake("share_of_total",
                "That is a share of the whole iteration. The question asks for a share of "
                "the ideal time: (p − 1)/(v·m).",
                _share_of_total),
    ),
    defaults={"p": 4, "m": 16, "v": 2},
    sample=_interleaved_sample,
    dimension="percent", unit="%", rtol=0.02, digits=4,
)


# ---------------------------------------------------------------------------------------
# 5. ZeRO: model state per GPU

def _zero(p: P, *, stage: int | None = None, optimizer_bytes: float = 12) -> float:
    return distributed.zero_memory_per_gpu(p["n_params"], stage=p["stage"] if stage is None
                                           else stage, dp=p["dp"],
                                           optimizer_bytes=optimizer_bytes)


def _zero_derived(p: P) -> dict[str, Any]:
    return {"model": wording.billions(p["n_params"]),
            "plain": _gb(_zero(p, stage=0)),
            "stages": ", ".join(f"stage {s}: {_gb(_zero(p, stage=s))}" for s in range(4)),
            "gpu_mem": _gb(hardware.gpu(H100).memory_bytes)}


def _other_stage(stage: int) -> Any:
    return lambda p: None if p["stage"] == stage else _zero(p, stage=stage)


_STAGE_HINTS = {
    0: "That is plain data parallelism: 16 bytes per parameter on every GPU. ZeRO stage "
       "{stage} divides part of it by the {dp} GPUs.",
    1: "That is stage 1, where only the optimizer states (12 bytes per parameter) are "
       "partitioned; weights and gradients (2 + 2 bytes) stay whole on every GPU.",
    2: "That is stage 2, where weights (2 bytes per parameter) stay whole on every GPU.",
    3: "That is stage 3, where everything is partitioned: (2 + 2 + 12) × Ψ ÷ Nd.",
}


zero_memory = core.NumericExercise(
    lesson=LESSON, number=5, title="ZeRO-{stage}: a {model} model on {dp} GPUs",
    question=(
        "A {model}-parameter model trains with mixed-precision Adam (2 bytes of weights, "
        "2 of gradients and 12 of optimizer state per parameter) on {dp} data-parallel "
        "GPUs with ZeRO stage {stage}. How much model state (weights, gradients and "
        "optimizer states, no activations) does each GPU hold, in GB?"
    ),
    hints=(
        "Stage 1 partitions the optimizer states over the Nd GPUs, stage 2 also the "
        "gradients, stage 3 also the weights.",
        "Stage 1: 4Ψ + 12Ψ/Nd; stage 2: 2Ψ + 14Ψ/Nd; stage 3: 16Ψ/Nd bytes.",
    ),
    solution=(
        "Plain data parallelism keeps 16 bytes per parameter on each GPU: {plain}. "
        "Partitioning over Nd = {dp} GPUs gives {stages}. For stage {stage}: **{answer}** "
        "per GPU.\n\n"
        "The ZeRO paper's \"4× / 8× / Nd×\" are the limits of these savings for large Nd. "
        "Activations come on top, and ZeRO does not divide them."
    ),
    answer=_zero,
    derived=_zero_derived,
    mistakes=tuple(
        Mistake(f"stage_{s}", _STAGE_HINTS[s], _other_stage(s)) for s in range(4)
    ) + (
        Mistake("optimizer_only",
                "You partitioned the optimizer states (12 bytes per parameter) but left out "
                "the weights and gradients (2 + 2 bytes).",
                lambda p: None if p["stage"] != 3 else _zero(p) - _zero(p, optimizer_bytes=0)),
        gib_as_gb_of(_zero),
    ),
    defaults={"n_params": 7e9, "dp": 64, "stage": 3},
    # the per-GPU state fits an H100's usable memory (the question names no GPU): 70B at
    # stage 1 on 8 GPUs would hold 385 GB (audit of 2026-12-06)
    sample=drawn_until(
        lambda rng: {"n_params": rng.choice([1.3e9, 7e9, 13e9, 70e9]),
                     "dp": rng.choice([8, 16, 64, 256]), "stage": rng.choice([1, 2, 3])},
        lambda p: _zero(p) <= hardware.gpu(H100).usable_memory()),
    dimension="bytes", unit="GB", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 6. The alpha-beta time of one gradient bucket

def _ab_time(p: P, *, collective: str = "all_reduce", latency: float | None = None,
             n: int | None = None) -> float:
    return distributed.collective_time(
        collective, p["size"], p["n"] if n is None else n, bandwidth=p["bw"],
        latency=p["alpha_us"] * 1e-6 if latency is None else latency)


def _ab_derived(p: P) -> dict[str, Any]:
    volume = distributed.allreduce_bytes_per_rank(p["size"], p["n"])
    return {"size_text": _binary(p["size"]), "bw_text": _bw(p["bw"]),
            "alpha_text": f"{core.format_number(p['alpha_us'], 3)} µs",
            "volume": _gb(volume),
            "wire": format_seconds(_ab_time(p, latency=0), digits=3),
            "factor": core.format_number(distributed.bus_bandwidth_factor("all_reduce", p["n"]), 4)}


def _forgot_alpha(p: P) -> float | None:
    wire = _ab_time(p, latency=0)
    # only a recognisable mistake when the latency is a visible part of the time
    return wire if p["alpha_us"] * 1e-6 > 0.03 * _ab_time(p) else None


alpha_beta_time = core.NumericExercise(
    lesson=LESSON, number=6, title="One gradient bucket over {n} GPUs",
    question=(
        "PyTorch's DistributedDataParallel all-reduces gradients in buckets (25 MiB by "
        "default) while the backward pass runs. One bucket of {size_text} is all-reduced "
        "over {n} GPUs whose links give a bus bandwidth of {bw_text}, with a fixed cost "
        "(alpha) of {alpha_text} per all-reduce. With the alpha-beta model, how long does "
        "it take, in milliseconds?"
    ),
    hints=(
        "Time = alpha + (bytes each GPU sends) ÷ bandwidth.",
        "Each GPU sends 2(n−1)/n = {factor} times the bucket.",
    ),
    solution=(
        "Each GPU sends 2(n−1)/n × {size_text} = {volume}, which takes {wire} at "
        "{bw_text}. Adding alpha, {alpha_text}: **{answer}**.\n\n"
        "For small messages alpha dominates; that is why frameworks group gradients into "
        "buckets instead of all-reducing every tensor on its own."
    ),
    answer=_ab_time,
    derived=_ab_derived,
    mistakes=(
        Mistake("no_ring_factor",
                "That sends the bucket once. In a ring all-reduce each GPU sends "
                "2(n−1)/n = {factor} times the bucket.",
                lambda p: _ab_time(p, n=2)),
        Mistake("gather_factor",
                "(n−1)/n is one phase (reduce-scatter or all-gather). An all-reduce is "
                "both: 2(n−1)/n.",
                lambda p: _ab_time(p, collective="all_gather")),
        Mistake("forgot_alpha",
                "You left out alpha, the fixed {alpha_text} every collective costs "
                "(launch, synchronisation, the first byte's trip).",
                _forgot_alpha),
    ),
    defaults={"size": 25 * 2**20, "n": 16, "bw": 50e9, "alpha_us": 50.0},
    sample=lambda rng: {"size": rng.choice([4, 16, 25]) * 2**20,
                        "n": rng.choice([8, 16, 32, 64]),
                        "bw": rng.choice([25e9, 50e9, 100e9]),
                        "alpha_us": rng.choice([30.0, 50.0, 100.0])},
    dimension="seconds", unit="ms", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 7. Algorithm bandwidth against bus bandwidth

def _link(p: P) -> float:
    # one direction of the GPU's NVLink (the datasheet figure counts both)
    return hardware.gpu(p["gpu"]).interconnect_bandwidth / 2


def _bw_seconds(p: P) -> float:
    return distributed.collective_time("all_reduce", 2**30, p["n"],
                                       bandwidth=p["share"] * _link(p))


def _bw_choice_derived(p: P) -> dict[str, Any]:
    t = _bw_seconds(p)
    algbw = distributed.algorithm_bandwidth(2**30, t)
    busbw = distributed.bus_bandwidth("all_reduce", 2**30, t, p["n"])
    link = _link(p)
    return {"algbw": _bw(algbw), "busbw": _bw(busbw), "link": _bw(link),
            "pct": wording.rounded_percent(algbw / link),
            "bus_pct": wording.rounded_percent(busbw / link),
            "bidir": _bw(2 * link), "bidir_pct": wording.rounded_percent(algbw / (2 * link)),
            "factor": core.format_number(distributed.bus_bandwidth_factor("all_reduce", p["n"]), 4)}


def _bw_choice_answer(p: P) -> str:
    t = _bw_seconds(p)
    busbw = distributed.bus_bandwidth("all_reduce", 2**30, t, p["n"])
    return "busbw" if busbw >= 0.75 * _link(p) else "slow"


algbw_vs_busbw = core.ChoiceExercise(
    lesson=LESSON, number=7, title="Is NVLink underused?",
    question=(
        "On one server of {n} {gpu} GPUs (NVLink, {link} per GPU in each direction), "
        "nccl-tests' all_reduce_perf prints for 1 GiB: algbw {algbw}, busbw {busbw}. A "
        "colleague reports: \"the all-reduce reaches only {pct} of the NVLink bandwidth "
        "(algbw ÷ link)\". What do you reply?"
    ),
    options=[
        ("busbw", "Compare the bus bandwidth instead: {busbw} is {bus_pct} of the link, "
                  "so the links are well used."),
        ("slow", "Agreed: the all-reduce uses only {pct} of what NVLink can do; something "
                 "is misconfigured."),
        ("bidir", "It is even worse: NVLink moves {bidir} counting both directions, so it "
                  "is {bidir_pct}."),
        ("times_n", "Multiply algbw by the {n} GPUs to get the traffic on the links."),
    ],
    hints=(
        "algbw = size ÷ time. How many bytes does each GPU actually send per byte of "
        "buffer in an all-reduce?",
        "nccl-tests' busbw = algbw × 2(n−1)/n: the rate at which each GPU's link carries "
        "data, comparable with the link's speed whatever n.",
    ),
    solution=(
        "In an all-reduce each GPU sends (and receives) 2(n−1)/n = {factor} times the "
        "buffer, so its link carries algbw × {factor} = {busbw}, {bus_pct} of the {link} "
        "one direction of NVLink offers.\n\n"
        "algbw answers \"how long does my all-reduce of S bytes take\"; busbw answers "
        "\"how well are the links used\". Comparing algbw with the link speed "
        "underestimates the use by the factor 2(n−1)/n.\n\n"
        "One more check on an H100 or H200 server: there NCCL adds inside the NVSwitch "
        "by default (NVLink SHARP, NVLS), which reaches a busbw of about 480 GB/s, above "
        "the ring's best. A ring's figure like this one, on such a server, means NVLS was "
        "off or unavailable: well used for a ring, not the best the server can do."
    ),
    answer=_bw_choice_answer,
    derived=_bw_choice_derived,
    mistakes=(
        Mistake("slow",
                "algbw is size ÷ time, but each GPU moves 2(n−1)/n = {factor} bytes per byte "
                "of buffer. Its link carries the bus bandwidth, {busbw}.",
                lambda p: "slow"),
        Mistake("bidir",
                "Each direction of a link carries its own traffic: a GPU sends and receives "
                "at the same time. Compare with one direction, {link}, and use busbw.",
                lambda p: "bidir"),
        Mistake("times_n",
                "Multiplying by n counts every GPU's traffic together; it is not comparable "
                "with one GPU's link. The per-link rate is algbw × 2(n−1)/n.",
                lambda p: "times_n"),
    ),
    defaults={"gpu": H100, "n": 8, "share": 0.82},
    sample=lambda rng: {"gpu": rng.choice(SERVING_GPUS),
                        "n": rng.choice([4, 8]), "share": rng.choice([0.8, 0.85, 0.9])},
)


# ---------------------------------------------------------------------------------------
# 8. Speed-up with overlap

def _speedup(p: P, *, overlap: float | None = None) -> float:
    eff = distributed.scaling_efficiency(p["compute"], p["comm"],
                                         p["overlap"] if overlap is None else overlap)
    return distributed.effective_speedup(p["gpus"], eff)


def _speedup_derived(p: P) -> dict[str, Any]:
    hidden = min(p["overlap"] * p["comm"], p["compute"])
    eff = distributed.scaling_efficiency(p["compute"], p["comm"], p["overlap"])
    return {"pct": wording.rounded_percent(p["overlap"]),
            "hidden": core.format_number(hidden, 3),
            "exposed": core.format_number(p["comm"] - hidden, 3),
            "eff": wording.rounded_percent(eff, 1),
            "none": core.format_number(_speedup(p, overlap=0), 3)}


scaling_speedup = core.NumericExercise(
    lesson=LESSON, number=8, title="Speed-up on {gpus} GPUs with overlap",
    question=(
        "A data-parallel job on {gpus} GPUs computes for {compute} s per step, and its "
        "gradient all-reduce takes {comm} s. {pct} of the all-reduce runs while the "
        "backward pass is still computing. What speed-up over one GPU does it reach?"
    ),
    hints=(
        "Only the communication that is not hidden behind compute makes the step longer.",
        "Efficiency = compute ÷ (compute + exposed communication); speed-up = GPUs × "
        "efficiency.",
    ),
    solution=(
        "{hidden} s of the {comm} s all-reduce is hidden behind the backward pass, so the "
        "step takes {compute} + {exposed} s. The efficiency is {compute} ÷ ({compute} + "
        "{exposed}) = {eff}, and the speed-up {gpus} × {eff} = **{answer}**. Without any "
        "overlap it would be {none}×."
    ),
    answer=_speedup,
    derived=_speedup_derived,
    mistakes=(
        Mistake("no_overlap",
                "That counts the whole all-reduce as added time. {pct} of it runs during the "
                "backward pass and costs nothing extra.",
                lambda p: _speedup(p, overlap=0)),
        Mistake("perfect_scaling",
                "That assumes all the communication is hidden. Only {pct} of it is; the rest "
                "({exposed} s) lengthens every step.",
                lambda p: float(p["gpus"])),
        Mistake("efficiency_only",
                "That is the efficiency ({eff}) as a number. The speed-up is the number of "
                "GPUs times the efficiency.",
                lambda p: distributed.scaling_efficiency(p["compute"], p["comm"],
                                                         p["overlap"])),
    ),
    defaults={"gpus": 64, "compute": 1.2, "comm": 0.4, "overlap": 0.5},
    sample=lambda rng: {"gpus": rng.choice([16, 64, 256]),
                        "compute": rng.choice([0.8, 1.2, 2.0]),
                        "comm": rng.choice([0.3, 0.4, 0.6]),
                        "overlap": rng.choice([0.25, 0.5, 0.75])},
    dimension="count", unit="×", extra_units=wording.TIMES, rtol=0.02, digits=3,
)


# ---------------------------------------------------------------------------------------
# 9. Code: the ring all-reduce volume

def _ring_model(size_bytes, n_ranks):
    # two phases (reduce-scatter, then all-gather) of n - 1 steps, one chunk of
    # size_bytes / n_ranks sent per step
    chunk = size_bytes / n_ranks
    return 2 * (n_ranks - 1) * chunk


def _ring_reference(size_bytes: float, n_ranks: int) -> float:
    return distributed.allreduce_bytes_per_rank(size_bytes, n_ranks)


ring_code = core.CodeExercise(
    lesson=LESSON, number=9, title="Write ring_allreduce_bytes",
    question=(
        "Write `ring_allreduce_bytes(size_bytes, n_ranks)`: the bytes each of `n_ranks` "
        "ranks sends in a ring all-reduce of a buffer of `size_bytes` bytes. It is checked "
        "on the lesson's numbers and on random inputs against the course's calculator "
        "`gpulesson.distributed.allreduce_bytes_per_rank`."
    ),
    hints=(
        "Cut the buffer into n_ranks chunks. How many chunks does a rank send in the "
        "reduce-scatter, and how many in the all-gather?",
        "n_ranks − 1 chunks in each phase.",
    ),
    solution=(
        "A rank sends one chunk of size_bytes / n_ranks per step, n_ranks − 1 steps in the "
        "reduce-scatter and n_ranks − 1 in the all-gather: 2(n − 1)/n × size_bytes. For "
        "14 GB of gradients over 8 GPUs that is "
        f"{_gb(_ring_reference(14e9, 8))}; for 1 GiB over 4 ranks "
        f"{wording.size(_ring_reference(2**30, 4), 2, binary=True)}."
    ),
    function_name="ring_allreduce_bytes",
    signature="size_bytes, n_ranks",
    reference=_ring_reference,
    sample_input=lambda rng: {"size_bytes": rng.randint(1, 10**12),
                              "n_ranks": rng.randint(3, 1024)},
    examples=({"size_bytes": 14e9, "n_ranks": 8}, {"size_bytes": 2**30, "n_ranks": 4}),
    mistakes=(
        Mistake("one_phase",
                "Your function counts one phase, (n − 1)/n × size. The all-gather after the "
                "reduce-scatter sends as much again.",
                lambda i: distributed.bus_bandwidth_factor("reduce_scatter", i["n_ranks"])
                * i["size_bytes"]),
        Mistake("twice_the_buffer",
                "2 × size is only the limit for large n: in each phase a rank sends n − 1 "
                "chunks of size/n, not n.",
                lambda i: 2 * i["size_bytes"]),
        Mistake("whole_buffer_per_step",
                "Each step sends one chunk, size / n_ranks, not the whole buffer.",
                lambda i: 2 * (i["n_ranks"] - 1) * i["size_bytes"]),
    ),
    model_solution=_ring_model,
    rtol=1e-9,
)


# ---------------------------------------------------------------------------------------
# 10. Predict, then run: 4 processes against 2 on this machine

more_ranks_here = core.PredictExercise(
    lesson=LESSON, number=10, title="Four processes or two: predict, then run",
    question=(
        "The cell after this one runs a real MPI all-reduce of 4 MiB on this machine, first "
        "between 2 processes, then between 4, and divides the two times.\n\n"
        "Before running it: **how many times longer** do you expect the 4-process "
        "all-reduce to take? Mind the cores: the measurement prints how many this machine "
        "has, and with fewer than 4 the processes must take turns on them (the lesson "
        "skips such runs when it measures the library; here they are part of the "
        "question). Commit a number, then run the measurement."
    ),
    hints=(
        "In a ring each rank sends 2(n−1)/n times the buffer: 1× for 2 ranks, 1.5× for 4.",
        "How many cores does this machine have? If there are fewer cores than processes, "
        "the processes take turns.",
    ),
    solution=(
        "With links of equal speed the ring model predicts 1.5×: each rank sends 1.5 times "
        "the buffer instead of once, and alpha grows with the number of steps. Here the "
        "'links' are copies through shared memory, which all processes share, and on a "
        "2-core machine 4 processes share 2 cores, so every step waits for a process to be "
        "scheduled: measured ratios of 2 to 6 are common, and more on a busy machine. On a "
        "GPU server each GPU has its "
        "own NVLink ports and the bus bandwidth stays nearly constant as GPUs are added."
    ),
    dimension="count", unit="×", extra_units=wording.TIMES, good_within=2.0,
)


# ---------------------------------------------------------------------------------------
# 11. The bytes of an expert-parallel all-to-all

def _a2a(p: P, *, k: int | None = None, ep: int | None = None) -> float:
    """Bytes one GPU sends to dispatch its tokens forward (one all-to-all, BF16)."""
    item = traffic.expert_parallel_traffic(
        tokens=p["tokens"], hidden=p["hidden"], experts_per_token=k or p["k"], moe_layers=1,
        ep=ep or p["ep"])
    return item.bytes_per_rank / item.count


def _a2a_derived(p: P) -> dict[str, Any]:
    buffer = p["tokens"] * p["k"] * p["hidden"] * 2
    return {"tokens_text": wording.count(p["tokens"]), "hidden_text": wording.count(p["hidden"]),
            "buffer": _gb(buffer), "share": f"{p['ep'] - 1}/{p['ep']}",
            "all_four": _gb(4 * _a2a(p))}


expert_all_to_all = core.NumericExercise(
    lesson=LESSON, number=11, title="The all-to-all of a mixture-of-experts layer",
    question=(
        "A mixture-of-experts layer of hidden size {hidden_text} sends each token to {k} "
        "experts. Experts are spread over {ep} GPUs (expert parallelism), and each GPU holds "
        "{tokens_text} tokens of the micro-batch. Tokens travel in BF16. How many bytes does "
        "**one GPU send** to dispatch its tokens to their experts, one all-to-all, forward "
        "only, in GB?"
    ),
    hints=(
        "Each token's h values go to each of its k experts: the GPU's buffer holds "
        "tokens × k × h values of 2 bytes.",
        "With experts spread evenly, the part addressed to experts on this same GPU stays "
        "home: (ep − 1)/ep of the buffer leaves.",
    ),
    solution=(
        "The dispatch buffer is {tokens_text} × {k} × {hidden_text} × 2 bytes = {buffer}. "
        "An all-to-all keeps the 1/{ep} meant for the GPU's own experts, so {share} of it "
        "leaves: **{answer}**. The combine sends as much back, and the backward pass both "
        "again: {all_four} per layer per micro-batch, every MoE layer. DeepSeek-V3 "
        "dispatches in FP8 to halve the first of the four."
    ),
    answer=_a2a,
    derived=_a2a_derived,
    mistakes=(
        Mistake("one_expert", "You sent each token once. It goes to each of its {k} "
                "experts: k copies of its h values.", lambda p: _a2a(p, k=1)),
        Mistake("all_leaves", "You counted the whole buffer. The 1/{ep} addressed to this "
                "GPU's own experts never leaves it.",
                lambda p: p["tokens"] * p["k"] * p["hidden"] * 2),
        Mistake("four_exchanges", "That is all four all-to-alls of the layer (dispatch and "
                "combine, forward and backward). The question asks for one dispatch.",
                lambda p: 4 * _a2a(p)),
        gib_as_gb_of(_a2a),
    ),
    defaults={"tokens": 4096, "hidden": 7168, "k": 8, "ep": 8},
    sample=lambda rng: {"tokens": rng.choice([2048, 4096, 8192]),
                        "hidden": rng.choice([4096, 5120, 7168]),
                        "k": rng.choice([2, 4, 8]), "ep": rng.choice([4, 8, 16])},
    dimension="bytes", unit="GB", rtol=0.02,
)


EXERCISES = (
    ring_bytes,
    busbw_from_time,
    pipeline_bubble,
    interleaved_bubble,
    zero_memory,
    alpha_beta_time,
    algbw_vs_busbw,
    scaling_speedup,
    ring_code,
    more_ranks_here,
    expert_all_to_all,
)

__all__ = ["EXERCISES", "LESSON", "TITLE"]
