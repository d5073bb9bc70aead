"""Exercises of lesson 10, *Plan It: the GPU Planning Dashboard*
(``exercises/planning_dashboard.ipynb``).

They practise each link of a training plan: the throughput an assumed MFU implies, the
cost of a run, the model state per GPU of a layout with uneven pipeline stages, reading the
bottleneck of a plan, LoRA's trainable parameters and training memory, the cost of a token
at the traffic actually served, a plan written as code, and a prediction of what the
learner's own machine would take for a 7B fine-tune, and a layout to design for a 70B run
that the planner checks.

Every answer and every figure in a worked solution comes from the calculators
(:mod:`gpulesson.flops`, :mod:`gpulesson.cost`, :mod:`gpulesson.distributed`,
:mod:`gpulesson.memory`, the registry entry ``planning``). Standard library only.
"""

from __future__ import annotations

import functools
from typing import Any

from gpulesson import (
    calculators,
    cost,
    course,
    distributed,
    flops,
    hardware,
    inference,
    memory,
    prices,
    transformer,
    units,
)
from gpulesson.exercises import core, mistakes, wording
from gpulesson.exercises.bank import _common
from gpulesson.exercises.bank._common import H100, P, config, drawn_until, state_fits
from gpulesson.exercises.core import Mistake

LESSON = "planning_dashboard"
TITLE = course.title(LESSON)

SECONDS_PER_DAY = 86_400  # a unit conversion: traffic per day to tokens per second


#: The H100's dated default price, the lesson's (AWS p5.48xlarge on demand, 2026-09-19).
_H100_PRICE = prices.default_price(H100).usd_per_gpu_hour


def _peak(p: P) -> float:
    return hardware.gpu(p["gpu"]).dense("bf16")


def _usd(amount: float) -> str:
    return units.format_usd(amount)


#: The longest training run a class variant asks about: months, not years (the audit of
#: 2026-12-06 found 70B on 15T tokens on 256 A100s at 35 % MFU: 2,608 days).
MAX_TRAINING_DAYS = 180


# ---------------------------------------------------------------------------------------
# 1. Throughput from an assumed MFU

def _tps(p: P, *, per_token: float | None = None, gpus: int | None = None,
         mfu: float | None = None, peak: float | None = None) -> float:
    return flops.tokens_per_second(
        n_devices=gpus or p["gpus"], peak_flops=peak or _peak(p), mfu=mfu or p["mfu"],
        flops_per_token=per_token or flops.flops_per_token(p["n_params"]))


def _tps_derived(p: P) -> dict[str, Any]:
    return {"model": wording.billions(p["n_params"]),
            "a_model": wording.with_article(wording.billions(p["n_params"])),
            "gpus_text": wording.count(p['gpus']),
            "mfu_pct": wording.percent(p["mfu"]), "dense": wording.tflop_rate(_peak(p)),
            "sustained": units.format_flop_rate(p["gpus"] * _peak(p) * p["mfu"]),
            "per_token": wording.scientific(flops.flops_per_token(p["n_params"])),
            "per_gpu": wording.count(_tps(p) / p['gpus'])}


throughput_from_mfu = core.NumericExercise(
    lesson=LESSON, number=1, title="Throughput at an assumed MFU",
    question=(
        "A plan trains {a_model}-parameter model on {gpus_text} {gpu} GPUs in BF16 (dense "
        "peak {dense} each) and assumes {mfu_pct} MFU. How many tokens per second does the "
        "whole cluster process? Count 6N FLOPs per token."
    ),
    hints=(
        "MFU = tokens/s × FLOPs per token ÷ (GPUs × peak). Solve it for tokens/s.",
        "The cluster sustains GPUs × dense peak × MFU FLOP/s; each token needs 6N of them.",
    ),
    solution=(
        "The cluster sustains {gpus_text} × {dense} × {mfu_pct} = {sustained}. Each token "
        "needs 6N = {per_token} FLOPs, so it processes **{answer}**, {per_gpu} tokens/s per "
        "GPU (`flops.tokens_per_second`)."
    ),
    answer=_tps,
    derived=_tps_derived,
    mistakes=(
        Mistake("forgot_mfu", "That is the throughput at 100% of the peak. The plan assumes "
                "{mfu_pct}: multiply by it.", lambda p: _tps(p, mfu=1.0)),
        Mistake("inference_flops", "You counted 2N FLOPs per token, the forward pass only. "
                "Training also runs the backward pass: 6N per token.",
                lambda p: _tps(p, per_token=inference.decode_flops(p["n_params"], 1))),
        Mistake("per_gpu", "That is one GPU's share. The question asks for the whole "
                "cluster: multiply by the {gpus_text} GPUs.", lambda p: _tps(p, gpus=1)),
        Mistake("tripled_6n", "You tripled the 6N for training, but 6N already is "
                "training: 2N forward plus 4N backward. Use 6N FLOPs per token as it is.",
                lambda p: _tps(p, per_token=3 * flops.flops_per_token(p["n_params"]))),
        mistakes.used_sparse_peak(_common.at_sparse_peak(_tps)),
    ),
    defaults={"n_params": 7e9, "gpu": "H100 SXM", "gpus": 64, "mfu": 0.40},
    sample=drawn_until(
        lambda rng: {"n_params": rng.choice([1e9, 7e9, 8e9, 13e9, 70e9]),
                     "gpu": rng.choice(["A100 80GB", "H100 SXM", "B200"]),
                     "gpus": rng.choice([8, 64, 256, 512, 2048]),
                     "mfu": rng.choice([0.35, 0.38, 0.40, 0.42, 0.45])},
        state_fits),
    dimension="tokens/s", unit="tokens/s", extra_units=wording.TOKENS_PER_SECOND, rtol=0.02,
    digits=3,
)


# ---------------------------------------------------------------------------------------
# 2. The cost of a training run

def _seconds(p: P, *, mfu: float | None = None, peak: float | None = None) -> float:
    return _common.training_seconds(p, flops.training_flops(p["n_params"], p["tokens"]), mfu=mfu,
                            peak=peak)


def _run_cost(p: P, *, gpus: int | None = None, seconds: float | None = None) -> float:
    return cost.run_cost(usd_per_gpu_hour=p["price"], gpus=gpus or p["gpus"],
                         seconds=seconds if seconds is not None else _seconds(p))


def _cost_derived(p: P) -> dict[str, Any]:
    s = _seconds(p)
    return {"model": wording.billions(p["n_params"]),
            "a_model": wording.with_article(wording.billions(p["n_params"])),
            "data": wording.trillions(p["tokens"]),
            "gpus_text": wording.count(p['gpus']), "mfu_pct": wording.percent(p["mfu"]),
            "price_text": _usd(p["price"]),
            "flops_text": wording.scientific(flops.training_flops(p["n_params"], p["tokens"])),
            "days": core.format_number(s / SECONDS_PER_DAY, 3),
            "gpu_hours": wording.count(cost.gpu_hours(gpus=p['gpus'], seconds=s))}


def _run_cost_sample(rng: Any) -> dict[str, Any]:
    gpu = rng.choice(["A100 80GB", "H100 SXM"])
    return {"n_params": rng.choice([7e9, 8e9, 13e9, 70e9]),
            "tokens": rng.choice([1e12, 2e12, 15e12]), "gpu": gpu,
            "gpus": rng.choice([256, 512, 2048, 4096]),
            "mfu": rng.choice([0.35, 0.40, 0.45]), "price": rng.choice(_common.quoted_prices(gpu))}


run_cost_exercise = core.NumericExercise(
    lesson=LESSON, number=2, title="What the run costs",
    question=(
        "The team pretrains {a_model}-parameter model on {data} tokens on {gpus_text} {gpu} "
        "GPUs (BF16) at an assumed {mfu_pct} MFU, renting them at {price_text} per "
        "GPU-hour. What does the run cost, in dollars?"
    ),
    hints=(
        "First the time: 6·N·D FLOPs ÷ (GPUs × dense peak × MFU).",
        "Then GPU-hours = GPUs × hours, and cost = price × GPU-hours.",
    ),
    solution=(
        "6·N·D = {flops_text} FLOPs take {days} days on {gpus_text} GPUs at {mfu_pct} MFU: "
        "{gpu_hours} GPU-hours (`cost.gpu_hours`), at {price_text} each **{answer}** "
        "(`cost.run_cost`). At a fixed MFU the number of GPUs changes the days, not the "
        "GPU-hours or the bill."
    ),
    answer=_run_cost,
    derived=_cost_derived,
    mistakes=(
        Mistake("forgot_gpus", "That is the price of one GPU for the run's wall-clock time. "
                "You rent {gpus_text} GPUs: multiply by them (GPU-hours = GPUs × hours).",
                lambda p: _run_cost(p, gpus=1)),
        Mistake("forgot_mfu", "That is the cost at 100% of the peak. At {mfu_pct} MFU the "
                "run takes longer and costs more: divide by the MFU.",
                lambda p: _run_cost(p, seconds=_seconds(p, mfu=1.0))),
        Mistake("days_as_hours", "You multiplied the price per hour by the number of "
                "*days*. Convert to hours first (× 24).",
                lambda p: _run_cost(p, seconds=_seconds(p) / 24)),
        mistakes.used_sparse_peak(lambda p: _run_cost(
            p, seconds=_seconds(p, peak=_common.sparse_peak(p)))),
    ),
    defaults={"n_params": 7e9, "tokens": 2e12, "gpu": "H100 SXM", "gpus": 512,
              "mfu": 0.40, "price": _common.quoted_prices(H100)[0]},
    sample=drawn_until(_run_cost_sample,
                       lambda p: _seconds(p) <= MAX_TRAINING_DAYS * SECONDS_PER_DAY),
    dimension="usd", unit="USD", rtol=0.02, digits=3,
)


# ---------------------------------------------------------------------------------------
# 3. Model state per GPU with uneven pipeline stages

#: (model, tp, pp, dp): pipeline sizes that do not divide the layers, so the largest
#: stage holds noticeably more than layers / pp.
_UNEVEN = (("llama-3.1-405b", 8, 20, 8), ("llama-3.1-405b", 8, 24, 4),
           ("llama-3.1-405b", 8, 40, 4), ("llama-2-70b", 8, 24, 8),
           ("llama-3-70b", 8, 48, 4), ("gpt3-175b", 8, 40, 8), ("gpt3-175b", 8, 64, 16))


def _state(p: P, *, stage: int = 1, layers: bool = True, tp: int | None = None) -> float:
    cfg = config(p)
    t = tp or p["tp"]
    if layers:
        return distributed.layout_memory(
            n_params=transformer.param_count(cfg), n_gpus=t * p["pp"] * p["dp"], tp=t,
            pp=p["pp"], zero_stage=stage, cfg=cfg).model_state
    # the same layout with the layers split evenly (no cfg): N / (tp * pp) per GPU
    return distributed.layout_memory(n_params=transformer.param_count(cfg),
                                     n_gpus=t * p["pp"] * p["dp"], tp=t, pp=p["pp"],
                                     zero_stage=stage).model_state


def _state_derived(p: P) -> dict[str, Any]:
    cfg = config(p)
    n = transformer.param_count(cfg)
    share = distributed.params_per_gpu(n, tp=p["tp"], pp=p["pp"], layers=cfg.layers)
    return {"model_label": wording.model_label(p["model"]), "layers": cfg.layers,
            "n_text": wording.billions(n), "gpus_text": wording.count(p['tp'] * p['pp'] * p['dp']),
            "largest": distributed.stage_layers(cfg.layers, p["pp"]),
            "even": core.format_number(cfg.layers / p["pp"], 3),
            "share": wording.billions(share),
            "per_param": core.format_number(
                distributed.zero_memory_per_gpu(1.0, stage=1, dp=p["dp"]), 4)}


uneven_stages = core.NumericExercise(
    lesson=LESSON, number=3, title="Model state per GPU with uneven pipeline stages",
    question=(
        "{model_label} ({n_text} parameters, {layers} layers) trains on {gpus_text} GPUs as "
        "tp = {tp}, pp = {pp}, dp = {dp}, with ZeRO-1 across the data-parallel replicas and "
        "mixed-precision Adam (16 bytes per parameter: 2 weights, 2 gradients, 12 optimizer). "
        "The {pp} stages hold whole layers. How much model state (no activations) does one "
        "GPU of the largest stage hold?"
    ),
    hints=(
        "How many layers does the largest stage hold when {layers} layers go to {pp} "
        "stages?",
        "Parameters per GPU = N ÷ tp × (layers of the largest stage ÷ {layers}). ZeRO-1 "
        "keeps the 2 + 2 bytes of weights and gradients and splits the 12 optimizer bytes "
        "over the dp replicas.",
    ),
    solution=(
        "{layers} layers on {pp} stages: the largest holds ⌈{layers}/{pp}⌉ = {largest} "
        "layers, not {even}. One GPU holds its 1/{tp} slice of them: {share} parameters "
        "(`distributed.params_per_gpu`). ZeRO-1 over dp = {dp} leaves 4 + 12/{dp} = "
        "{per_param} bytes per parameter, so **{answer}** (`distributed.layout_memory`)."
    ),
    answer=_state,
    derived=_state_derived,
    mistakes=(
        Mistake("even_split", "That splits the layers evenly, {layers}/{pp} = {even} per "
                "stage. Stages hold whole layers: the largest has ⌈{layers}/{pp}⌉ = {largest},"
                " and it sets the memory.", lambda p: _state(p, layers=False)),
        Mistake("no_zero", "That keeps all 16 bytes per parameter on every GPU. ZeRO-1 "
                "splits the 12 bytes of optimizer state over the {dp} data-parallel "
                "replicas.", lambda p: _state(p, stage=0)),
        Mistake("zero3", "That splits all 16 bytes over the replicas (ZeRO-3). ZeRO-1 "
                "splits only the optimizer's 12; weights and gradients stay whole.",
                lambda p: _state(p, stage=3)),
        Mistake("forgot_tp", "Tensor parallelism also splits every matrix of the stage "
                "over tp = {tp} GPUs: divide by it.", lambda p: _state(p, tp=1)),
        _common.gib_as_gb_of(_state),
    ),
    defaults={"model": "llama-3.1-405b", "tp": 8, "pp": 20, "dp": 8},
    sample=lambda rng: dict(zip(("model", "tp", "pp", "dp"), rng.choice(_UNEVEN), strict=True)),
    dimension="bytes", unit="GB", rtol=0.02, digits=3,
)


# ---------------------------------------------------------------------------------------
# 4. Reading the bottleneck

def _plan(p: P) -> dict[str, Any]:
    return _planned(p["model"], p["gpus"], p["step_tokens"], p["bandwidth"])


@functools.lru_cache(maxsize=64)
def _planned(model: str, gpus: int, step_tokens: float, bandwidth: float) -> dict[str, Any]:
    """One plan per exercise variant: a check reads it for the answer, the wording and each
    mistake, and the planner's layout search is the slow part."""
    return calculators.compute("planning", model=model, n_gpus=gpus,
                               step_tokens=step_tokens * 1.048576, scaleout=bandwidth)


def _word(p: P) -> str:
    return _plan(p)["bottleneck"].split(":")[0]


def _other(p: P) -> str | None:
    word = _word(p)
    return {"compute": "communication", "communication": "compute"}.get(word)


def _bottleneck_derived(p: P) -> dict[str, Any]:
    r = _plan(p)
    return {"model_label": wording.model_label(p["model"]),
            "gpus_text": wording.count(p["gpus"]), "layout": r["degrees"],
            "memory": units.format_bytes(r["memory_per_gpu"]),
            "limit": units.format_bytes(r["memory_limit"]),
            "sequences": wording.count(round(p["step_tokens"] * 1.048576e6 / 4096)),
            "compute": units.format_seconds(r["step_compute"]),
            "waiting": units.format_seconds(r["step_time"] - r["step_compute"]),
            "efficiency": wording.percent(r["efficiency"]), "word": _word(p)}


bottleneck = core.ChoiceExercise(
    lesson=LESSON, number=4, title="Compute, memory or communication?",
    question=(
        "The dashboard plans {model_label} on {gpus_text} H100s: {step_tokens} × 2²⁰ tokens "
        "per step, that is {sequences} sequences of 4,096 tokens, and {bandwidth} GB/s of "
        "network per GPU. Its layout search keeps {layout}, which needs {memory} per GPU of "
        "the {limit} a GPU can use. What limits this plan?"
    ),
    options=[("compute", "Compute: the GPUs' arithmetic sets the pace"),
             ("memory", "Memory: the layout does not fit"),
             ("communication", "Communication: the GPUs wait longer than they compute")],
    hints=(
        "Memory first: does the layout fit in what a GPU can use?",
        "Then compare the step's computing with the rest of the step (exposed traffic, "
        "pipeline bubble): is the share of the step spent computing below 50%?",
    ),
    solution=(
        "The plan needs {memory} per GPU of {limit}. Each step computes for {compute} and "
        "waits {waiting} more (exposed communication and the pipeline bubble): "
        "{efficiency} of the step is computing, so the bottleneck is **{word}**. With a "
        "fixed global batch, each GPU's share of a step shrinks as GPUs are added, while "
        "the gradients it synchronises do not; and no layout may give a GPU less than a "
        "whole sequence, so beyond {sequences} GPUs the rest must go to tensor or pipeline "
        "parallelism."
    ),
    answer=_word,
    derived=_bottleneck_derived,
    mistakes=(
        Mistake("memory", "The layout fits: {memory} per GPU of {limit}. Memory decides "
                "what *can* run; here the question is how fast.",
                lambda p: "memory"),
        Mistake("compute_vs_communication", "Compare the two parts of a step: {compute} of "
                "computing against {waiting} of waiting. {efficiency} of the step is "
                "computing.", _other),
    ),
    defaults={"model": "llama-2-7b", "gpus": 256, "step_tokens": 4, "bandwidth": 1},
    sample=lambda rng: {"model": rng.choice(["llama-2-7b", "llama-3-8b", "mistral-7b"]),
                        "gpus": rng.choice([64, 256, 1024]),
                        "step_tokens": rng.choice([2, 4, 8]),
                        "bandwidth": rng.choice([1, 5, 50])},
)


# ---------------------------------------------------------------------------------------
# 5. LoRA's trainable parameters

_LORA_MODELS = ("llama-2-7b", "llama-3-8b", "mistral-7b", "llama-2-13b")


def _lora(p: P) -> int:
    return memory.lora_params(config(p), rank=p["rank"], targets=("q", "v"))


def _lora_gqa_as_mha(p: P) -> int | None:
    cfg = config(p)
    if cfg.kv_dim == cfg.hidden:
        return None  # no grouped-query attention: the mistake gives the right answer
    return cfg.layers * 2 * p["rank"] * (cfg.hidden + cfg.q_dim)


def _lora_derived(p: P) -> dict[str, Any]:
    cfg = config(p)
    per_layer = _lora(p) // cfg.layers
    return {"model_label": wording.model_label(p["model"]), "layers": cfg.layers,
            "hidden": wording.count(cfg.hidden), "q_dim": wording.count(cfg.q_dim),
            "kv_dim": wording.count(cfg.kv_dim),
            "per_layer": wording.count(per_layer),
            "share": wording.percent(_lora(p) / transformer.param_count(cfg)),
            "gqa": ("" if cfg.kv_dim == cfg.hidden else
                    " With grouped-query attention the value projection is narrower than the "
                    f"model: {wording.count(cfg.hidden)} × {wording.count(cfg.kv_dim)}.")}


lora_parameters = core.NumericExercise(
    lesson=LESSON, number=5, title="LoRA's trainable parameters",
    question=(
        "LoRA adapters of rank r = {rank} are added to the query and value projections of "
        "every layer of {model_label} (hidden size {hidden}, query projection {hidden} × "
        "{q_dim}, value projection {hidden} × {kv_dim}, {layers} layers). How many "
        "parameters are trained?"
    ),
    hints=(
        "An adapter for a d_in × d_out matrix is A (d_in × r) and B (r × d_out).",
        "r × (d_in + d_out) per adapted matrix, two matrices per layer, times the layers.",
    ),
    solution=(
        "Per layer: r × ({hidden} + {q_dim}) for the queries plus r × ({hidden} + {kv_dim}) "
        "for the values = {per_layer}. Over {layers} layers: **{answer}** in all "
        "(`memory.lora_params`), {share} of the model.{gqa}"
    ),
    answer=lambda p: float(_lora(p)),
    derived=_lora_derived,
    mistakes=(
        Mistake("one_factor", "That counts only one of the two thin matrices. Each "
                "adapter is A (d_in × r) *and* B (r × d_out).",
                lambda p: float(config(p).layers * p["rank"] * 2 * config(p).hidden)),
        Mistake("one_layer", "That is one layer's adapters. Every one of the {layers} "
                "layers gets its own.", lambda p: float(_lora(p) // config(p).layers)),
        Mistake("gqa_as_mha", "That treats the value projection as {hidden} × {hidden}. "
                "With grouped-query attention it is {hidden} × {kv_dim}: use the KV heads × "
                "head size.", _lora_gqa_as_mha),
        Mistake("frozen_matrix", "That is the size of the frozen matrices themselves. LoRA "
                "trains only the thin factors: r × (d_in + d_out) each.",
                lambda p: float(config(p).layers * config(p).hidden
                                * (config(p).q_dim + config(p).kv_dim))),
    ),
    defaults={"model": "llama-2-7b", "rank": 16},
    sample=lambda rng: {"model": rng.choice(_LORA_MODELS), "rank": rng.choice([8, 16, 32, 64])},
    dimension="count", unit="parameters", extra_units=wording.PARAMS_IN_MILLIONS, rtol=0.01,
    digits=4,
)


# ---------------------------------------------------------------------------------------
# 6. LoRA training memory

def _lora_memory(p: P, **overrides: Any) -> memory.LoraMemory:
    kw = {"rank": p["rank"], "targets": ("q", "v"), "batch": 1, "seq_len": p["seq_len"],
          "recompute": p["recompute"], "base_precision": "bf16"}
    kw.update(overrides)
    return memory.lora_training_memory(config(p), **kw)


def _full_finetune(p: P) -> float:
    """Full fine-tuning's memory with the same activations: the ``full_finetune`` slip."""
    return memory.training_memory(config(p), batch=1, seq_len=p["seq_len"],
                                  recompute=p["recompute"]).total


def _lora_mem_derived(p: P) -> dict[str, Any]:
    m = _lora_memory(p)
    return {"model_label": wording.model_label(p["model"]),
            "base": units.format_bytes(m.base_weights),
            "adapters": units.format_bytes(m.adapter_weights + m.adapter_gradients
                                           + m.adapter_optimizer),
            "trainable": wording.count(m.trainable_params),
            "activations": units.format_bytes(m.activations),
            "full": units.format_bytes(_full_finetune(p)),
            "seq_text": wording.count(p['seq_len'])}


lora_memory = core.NumericExercise(
    lesson=LESSON, number=6, title="Does the LoRA fine-tune fit?",
    question=(
        "The shop fine-tunes {model_label} with LoRA: rank {rank} on the query and value "
        "projections, base weights frozen in BF16, adapters trained with mixed-precision "
        "Adam (16 bytes per trainable parameter), micro-batch 1 of {seq_text} tokens, "
        "{recompute} activation recomputation (activations as in full training). How much "
        "memory does training need, in GB?"
    ),
    hints=(
        "Three parts: the frozen weights (2 bytes each, no gradients, no optimizer), the "
        "adapters' full training state, and the activations.",
        "The activations are those of full training for the same recomputation "
        "(`memory.training_memory` counts them: FlashAttention for a Llama block).",
    ),
    solution=(
        "Frozen BF16 weights {base}; {trainable} adapter parameters × 16 bytes = {adapters};"
        " activations {activations}. In all **{answer}** (`memory.lora_training_memory`), "
        "against {full} for full fine-tuning with the same activations."
    ),
    answer=lambda p: _lora_memory(p).total,
    derived=_lora_mem_derived,
    mistakes=(
        Mistake("full_finetune", "That is full fine-tuning: 16 bytes for *every* parameter. "
                "LoRA freezes the base weights: 2 bytes each, no gradients, no optimizer "
                "state.", _full_finetune),
        Mistake("forgot_activations", "That leaves out the activations. The backward pass "
                "still runs through every frozen layer to reach the adapters, so the "
                "activations are stored as in full training.",
                lambda p: _lora_memory(p).total - _lora_memory(p).activations),
        Mistake("fp32_base", "That stores the frozen weights in FP32. They are kept in "
                "BF16, 2 bytes each.",
                lambda p: _lora_memory(p, base_precision="fp32").total),
        # with full recomputation at 4,096 tokens the activations are about 7% of the total
        _common.gib_as_gb_of(
            lambda p: _lora_memory(p).total,
            lambda p: _lora_memory(p).total - _lora_memory(p).activations),
    ),
    defaults={"model": "llama-2-7b", "rank": 16, "seq_len": 2048, "recompute": "full"},
    sample=lambda rng: {"model": rng.choice(_LORA_MODELS), "rank": rng.choice([8, 16, 64]),
                        "seq_len": rng.choice([1024, 2048, 4096]),
                        "recompute": rng.choice(["selective", "full"])},
    dimension="bytes", unit="GB", rtol=0.02, digits=3,
)


# ---------------------------------------------------------------------------------------
# 7. The cost of a token at the traffic actually served

def _per_1k(p: P, rate: float | None = None) -> float:
    served = rate if rate is not None else p["per_day"] / SECONDS_PER_DAY
    return cost.cost_per_1k_tokens(usd_per_gpu_hour=p["price"], gpus=1,
                                   tokens_per_second=served)


def _per_1k_derived(p: P) -> dict[str, Any]:
    return {"per_day_text": wording.count(p['per_day']),
            "rate": core.format_number(p["per_day"] / SECONDS_PER_DAY, 3),
            "capacity_text": wording.count(p['capacity']),
            "price_text": f"${core.format_number(p['price'], 4)}",
            "at_capacity": f"${core.format_number(_per_1k(p, p['capacity']), 3)}",
            "ratio": core.format_number(_per_1k(p) / _per_1k(p, p["capacity"]), 3)}


token_cost = core.NumericExercise(
    lesson=LESSON, number=7, title="What 1,000 tokens cost at real traffic",
    question=(
        "A shop rents one GPU around the clock at {price_text} per hour to serve its "
        "chatbot. The GPU could generate up to {capacity_text} tokens/s, but the shop's "
        "customers ask for {per_day_text} tokens a day. What does the shop pay per 1,000 "
        "tokens served?"
    ),
    hints=(
        "Cost per 1,000 tokens = price per hour ÷ tokens served per hour × 1,000.",
        "The GPU is billed for every hour, busy or idle: use the tokens actually served "
        "({per_day_text} a day), not the capacity.",
    ),
    solution=(
        "{per_day_text} tokens a day is {rate} tokens/s on average. At {price_text} an hour "
        "that is **{answer}** per 1,000 tokens (`cost.cost_per_1k_tokens`). At full capacity "
        "it would be {at_capacity}: the idle hours make tokens {ratio} times dearer."
    ),
    answer=_per_1k,
    derived=_per_1k_derived,
    mistakes=(
        Mistake("used_capacity", "That assumes the GPU generates {capacity_text} tokens/s "
                "all day. It is billed for every hour but serves only {per_day_text} tokens "
                "a day.", lambda p: _per_1k(p, p["capacity"])),
        Mistake("hours_not_day", "You spread a day's tokens over one hour. A day has 24 of "
                "them: {per_day_text} tokens a day is {rate} tokens/s.",
                lambda p: _per_1k(p, p["per_day"] / 3600)),
    ),
    defaults={"price": _H100_PRICE, "capacity": 1290, "per_day": 1_000_000},
    sample=lambda rng: {"price": rng.choice([2.0, 4.0, _H100_PRICE, 12.29]),
                        "capacity": rng.choice([300, 1290, 2500]),
                        "per_day": rng.choice([200_000, 1_000_000, 5_000_000])},
    dimension="usd", unit="USD", rtol=0.02, digits=3,
)


# ---------------------------------------------------------------------------------------
# 8. A plan as code

def _plan_cost(n_params: float, tokens: float, gpus: int, peak_flops: float, mfu: float,
               usd_per_gpu_hour: float) -> float:
    seconds = flops.training_time(flops.training_flops(n_params, tokens), gpus, peak_flops,
                                  mfu)
    return cost.run_cost(usd_per_gpu_hour=usd_per_gpu_hour, gpus=gpus, seconds=seconds)


def training_cost(n_params, tokens, gpus, peak_flops, mfu, usd_per_gpu_hour):
    """Dollars to train n_params on tokens: 6ND FLOPs at gpus x peak x mfu, all GPUs billed."""
    seconds = 6 * n_params * tokens / (gpus * peak_flops * mfu)
    gpu_hours = gpus * seconds / 3600
    return usd_per_gpu_hour * gpu_hours


_H100_BF16 = hardware.gpu(H100).dense("bf16")
_N_7B = transformer.param_count(transformer.preset("llama-2-7b"))

plan_as_code = core.CodeExercise(
    lesson=LESSON, number=8, title="Write training_cost",
    question=(
        "Write `training_cost(n_params, tokens, gpus, peak_flops, mfu, usd_per_gpu_hour)`: "
        "the dollars a training run costs when it needs 6·N·D FLOPs, runs on `gpus` GPUs of "
        "dense peak `peak_flops` (FLOP/s) at utilisation `mfu` (a fraction), and every GPU "
        "is billed `usd_per_gpu_hour` for the whole run. It is checked against "
        "`cost.run_cost` with `flops.training_time` on the lesson's 7B plan and on random "
        "plans."
    ),
    hints=(
        "Time in seconds = 6·N·D ÷ (gpus × peak × mfu).",
        "GPU-hours = gpus × seconds ÷ 3600; cost = price × GPU-hours.",
    ),
    solution=(
        "Time = 6·N·D ÷ (GPUs × peak × MFU), GPU-hours = GPUs × time ÷ 3600 s/h, cost = "
        "price × GPU-hours. The GPUs cancel: at a fixed MFU the bill does not depend on "
        "how many GPUs share the work. The lesson's 7B plan, Llama-2-7B "
        f"({wording.count(_N_7B)} parameters) on 2T tokens on 64 H100s "
        f"({units.format_flop_rate(_H100_BF16)} dense), 40% MFU, ${_H100_PRICE:.2f}/h, costs "
        f"{_usd(_plan_cost(_N_7B, 2e12, 64, _H100_BF16, 0.4, _H100_PRICE))}."
    ),
    function_name="training_cost",
    signature="n_params, tokens, gpus, peak_flops, mfu, usd_per_gpu_hour",
    reference=_plan_cost,
    sample_input=lambda rng: {"n_params": rng.choice([1e9, 7e9, 13e9, 70e9, 405e9]),
                              "tokens": rng.choice([2e11, 1e12, 2e12, 15e12]),
                              "gpus": rng.choice([8, 64, 512, 2048, 16384]),
                              "peak_flops": rng.choice([312e12, 989.4e12, 2250e12]),
                              "mfu": rng.choice([0.3, 0.38, 0.4, 0.45]),
                              "usd_per_gpu_hour": rng.choice([1.5, 2.0, 4.0, 12.29])},
    examples=({"n_params": _N_7B, "tokens": 2e12, "gpus": 64,
               "peak_flops": _H100_BF16, "mfu": 0.4, "usd_per_gpu_hour": _H100_PRICE},),
    model_solution=training_cost,
    mistakes=(
        Mistake("forgot_gpus", "Your cost is the price of one GPU for the run's duration. "
                "Every one of the GPUs is billed: GPU-hours = GPUs × hours.",
                lambda i: _plan_cost(**i) / i["gpus"]),
        Mistake("inference_flops", "Your run needs 2·N·D FLOPs, the forward pass only. "
                "Training costs 6·N·D.", lambda i: _plan_cost(**i) / 3),
        Mistake("forgot_mfu", "Your cost assumes the GPUs run at 100% of their peak. At the "
                "MFU they are slower: time = FLOPs ÷ (GPUs × peak × MFU).",
                lambda i: _plan_cost(**i) * i["mfu"]),
        Mistake("seconds_as_hours", "You billed seconds as hours. Divide the GPU-seconds by "
                "3600.", lambda i: _plan_cost(**i) * 3600),
    ),
)


# ---------------------------------------------------------------------------------------
# 9. Predict, then run: a 7B fine-tune on this machine

def _days_at(tflops: float) -> float:
    """The days the notebook's cell prints for a machine whose best GEMM runs at ``tflops``."""
    result = calculators.compute(
        "planning", model="llama-2-7b", gpu="custom", gpu_memory=16, peak_flops=tflops,
        dtype="fp32", matmul_efficiency=100, bandwidth=0.05, gpus_per_node=1, scaleout=1,
        usd_per_gpu_hour=0, n_gpus=1, seq_len=2048, tokens=0.02, step_tokens=0.524288)
    return result["time"] / 86_400


def _predict_derived() -> dict[str, Any]:
    llama = transformer.preset("llama-2-7b")  # 6N plus the attention scores, as the dashboard
    work = flops.flops_per_token(_N_7B, layers=llama.layers, heads=llama.heads,
                                 head_dim=llama.head_dim, seq_len=2048) * 20e6
    fine_tune = calculators.compute("planning", model="llama-2-7b", n_gpus=1, seq_len=2048,
                                    tokens=0.02, step_tokens=0.524288)
    return {"work": wording.scientific(work, 2), "h100_peak": units.format_flop_rate(_H100_BF16),
            "h100_minutes": core.format_number(fine_tune["time"] / 60, 2),
            "h100_mfu": wording.percent(fine_tune["mfu"]),
            "at_100g": core.format_number(_days_at(0.1), 2),
            "state": units.format_bytes(fine_tune["memory_per_gpu"])}


predict_this_machine = core.PredictExercise(
    lesson=LESSON, number=9, title="A 7B fine-tune on this machine: predict, then run",
    question=(
        "The next cell measures this machine's best matrix-product rate (FP32 on a CPU, "
        "FP16 on a GPU) and feeds it to the dashboard as the achievable rate of a one-GPU "
        "cluster: a full fine-tune of Llama 2 7B, one pass over 20 million tokens.\n\n"
        "Before running: **how many days** do you expect it to take? (The dashboard plans "
        "an H100 at {h100_mfu} MFU: {h100_minutes} minutes.)"
    ),
    hints=(
        "The FLOPs are the same on every machine: 6·N·D plus the attention scores of "
        "2,048-token sequences, {work} FLOPs. Only the rate changes.",
        "A laptop CPU reaches tens to a few hundred GFLOP/s in FP32; an H100 reaches "
        "{h100_peak} dense in BF16.",
    ),
    solution=(
        "Days ≈ FLOPs ÷ (the measured rate × the share of it the step reaches) ÷ 86,400 "
        "s. At 100 GFLOP/s the dashboard says {at_100g} days: the ratio to the H100's "
        "{h100_minutes} minutes is about the ratio of the rates. The memory would not fit a "
        "laptop either: {state} of training state and activations. LoRA, not a faster "
        "CPU, is what makes small machines useful here."
    ),
    derived=lambda p: _predict_derived(),
    dimension="seconds", unit="days", good_within=2.0,
)


# ---------------------------------------------------------------------------------------
# 10. Design a layout: the planner says what breaks

_DESIGNS = {
    "dp": (dict(tp=1, pp=1), "data parallel over all of them (ZeRO-1)"),
    "tp16": (dict(tp=16, pp=1), "tp 16 (two servers per tensor group) × dp 16"),
    "pp128": (dict(tp=2, pp=128), "tp 2 × pp 128"),
    "tp8": (dict(tp=8, pp=1), "tp 8 (one server) × dp 32"),
    "tp8pp4": (dict(tp=8, pp=4), "tp 8 × pp 4 × dp 8"),
}


def _design(p: P, key: str) -> dict[str, Any]:
    return _designed(p["seq_len"], key)


@functools.lru_cache(maxsize=64)
def _designed(seq_len: int, key: str) -> dict[str, Any]:
    """One plan per layout and sequence length: the answer, the wording and each mistake
    read the same five plans."""
    degrees = _DESIGNS[key][0]
    return calculators.compute("planning", model="llama-3-70b", n_gpus=256,
                               step_tokens=4.194304, seq_len=seq_len, layout="manual",
                               zero_stage=1, cp=1, batch=1, interleave=1, **degrees)


def _best_design(p: P) -> str:
    fits = {k: _design(p, k)["step_time"] for k in _DESIGNS if _design(p, k)["feasible"]}
    return min(fits, key=fits.__getitem__)


def _design_derived(p: P) -> dict[str, Any]:
    out: dict[str, Any] = {"sequences": wording.count(4 * 2**20 // p["seq_len"])}
    best = _best_design(p)
    for key in _DESIGNS:
        r = _design(p, key)
        out[f"why_{key}"] = r["problems"] if not r["feasible"] else (
            f"it fits ({units.format_bytes(r['memory_per_gpu'])} per GPU) but a step takes "
            f"{units.format_seconds(r['step_time'])} against "
            f"{units.format_seconds(_design(p, best)['step_time'])}: the pipeline bubble "
            f"costs {units.format_seconds(r['bubble'])}")
        out[f"step_{key}"] = units.format_seconds(r["step_time"])
    return out


def _wrong(key: str) -> Mistake:
    return Mistake(f"design_{key}", "That layout breaks or loses: {why_" + key + "}.",
                   lambda p, k=key: k if _best_design(p) != k else None)


design_layout = core.ChoiceExercise(
    lesson=LESSON, number=10, title="Design a layout: 70B on 256 GPUs",
    question=(
        "You are to train Llama 3 70B on 256 H100s (32 servers of 8, NVLink inside a "
        "server, 50 GB/s of network per GPU), 4 × 2²⁰ tokens per step in {seq_len}-token "
        "sequences ({sequences} of them), selective recomputation. Which of these layouts "
        "fits and runs fastest? Choose one: the checker plans it and says what breaks."
    ),
    options=[(key, label) for key, (_, label) in _DESIGNS.items()],
    hints=(
        "Memory first: 70B parameters carry 16 bytes each of Adam state, 1.1 TB; how many "
        "GPUs must share them before activations even count?",
        "Tensor parallelism must divide the 8 KV heads and is fast only inside a server; a "
        "pipeline needs at least one layer per stage and costs a bubble.",
    ),
    solution=(
        "Data parallelism alone: {why_dp}. tp 16: {why_tp16}. pp 128: {why_pp128}. Of the "
        "two that fit, tp 8 × dp 32 takes {step_tp8} per step and tp 8 × pp 4 {step_tp8pp4}: "
        "the pipeline's bubble costs more than the memory it saves buys. The planner's own "
        "search (layout 'auto') also tries interleaving and other degrees."
    ),
    answer=_best_design,
    derived=_design_derived,
    mistakes=tuple(_wrong(key) for key in _DESIGNS if key != "tp8"),
    defaults={"seq_len": 8192},
    sample=lambda rng: {"seq_len": rng.choice([4096, 8192])},
)


EXERCISES = (
    throughput_from_mfu,
    run_cost_exercise,
    uneven_stages,
    bottleneck,
    lora_parameters,
    lora_memory,
    token_cost,
    plan_as_code,
    predict_this_machine,
    design_layout,
)

__all__ = ["EXERCISES", "LESSON", "TITLE", "training_cost"]
