"""Exercises of lesson 5, *FLOPs, MFU and Scaling Laws* (``exercises/flops_and_scaling.ipynb``).

They practise what the lesson teaches: the training FLOPs of a run (6·N·D), the days it
takes on a cluster at an assumed MFU, MFU from a measured throughput, Chinchilla's tokens
per parameter, the two classic slips (counting multiply-adds as FLOPs, dividing by the
sparse peak), the attention term as code and as a crossover length, the GPU-hours of
Llama 3 405B, HFU against MFU, a prediction of the MFU of a numpy training step on the
learner's own machine, and the training FLOPs of a mixture of experts (its active
parameters, not its total).

Every answer and every figure in a worked solution comes from the calculators
(:mod:`gpulesson.flops`, :mod:`gpulesson.gemm`, :mod:`gpulesson.inference`,
:mod:`gpulesson.transformer`, :mod:`gpulesson.hardware`). Standard library only.
"""

from __future__ import annotations

from typing import Any

from gpulesson import cost, course, flops, gemm, hardware, inference, transformer, units
from gpulesson.exercises import core, mistakes, wording
from gpulesson.exercises.bank import _common
from gpulesson.exercises.bank._common import P, config, drawn_until, state_fits
from gpulesson.exercises.core import Mistake

LESSON = "flops_and_scaling"
TITLE = course.title(LESSON)

SECONDS_PER_HOUR = 3600  # a unit conversion: GPU-seconds to GPU-hours


#: Dense BF16 throughputs per GPU that published runs reached (the sparse-peak exercise).
#: Llama 3 405B on H100s (Dubey et al. 2024, Table 4) counts model FLOPs. Megatron-LM on
#: A100s (Narayanan et al. 2021, Table 1 and section 5.1: 137, 140 and 163 TFLOP/s) counts
#: the recomputed forward pass too, its equation 3, so those rates are hardware FLOPs:
#: the model FLOPs are three quarters of them (6N of 8N per token with full recomputation),
#: as lesson 5 converts the 1T model's 163 TFLOP/s (52 % HFU) into 39 % MFU.
_MEGATRON_HARDWARE_RATES = (137e12, 140e12, 163e12)
_ACHIEVED = {"H100 SXM": (380e12, 400e12, 430e12),
             "A100 80GB": tuple(r * flops.flops_per_token(1)
                                / flops.hardware_flops_per_token(1, recompute="full")
                                for r in _MEGATRON_HARDWARE_RATES)}

#: Per-GPU training throughputs (tokens/s) that put each model size near 35-45 % MFU.
_THROUGHPUT = {"A100 80GB": ((1e9, 20_000), (7e9, 3_000), (13e9, 1_600), (70e9, 300)),
               "H100 SXM": ((1e9, 60_000), (7e9, 9_500), (13e9, 5_000), (70e9, 950))}


def _tokens_text(n: float) -> str:
    return wording.trillions(n) if n >= 1e12 else wording.billions(n)


def _days(seconds: float) -> str:
    return f"{core.format_number(seconds / 86_400, 3)} days"


#: The longest training run a class variant asks about: a pretraining run of months, not
#: years (the audit of 2026-12-06 found 70B on 15T tokens on 256 A100s: 2,174 days).
MAX_TRAINING_DAYS = 180



# ---------------------------------------------------------------------------------------
# 1. Training FLOPs of a 7B model on 2T tokens

def _total(p: P) -> float:
    return flops.training_flops(p["n_params"], p["tokens"])


def _total_derived(p: P) -> dict[str, Any]:
    model = wording.billions(p["n_params"])
    return {"model": model, "a_model": wording.with_article(model),
            "data": _tokens_text(p["tokens"]),
            "per_token": wording.scientific(flops.flops_per_token(p["n_params"])),
            "forward": wording.scientific(inference.prefill_flops(p["n_params"], int(p["tokens"]))),
            "total_sci": wording.scientific(_total(p))}


training_flops_7b = core.NumericExercise(
    lesson=LESSON, number=1, title="Training FLOPs of {a_model} model on {data} tokens",
    question=(
        "A team pretrains a model of {model} parameters on {data} tokens. Using the 6N rule "
        "(N counting all parameters), how many FLOPs does the training take? Ignore the "
        "attention term."
    ),
    hints=(
        "How many FLOPs does one token cost in the forward pass, and how many in the "
        "backward pass?",
        "Forward 2N, backward 4N per token: 6N per token, times D tokens.",
    ),
    solution=(
        "Each token costs 6N = {per_token} FLOPs: 2N in the forward pass (one multiply-add "
        "per weight) and 4N in the backward pass (gradients with respect to the activations "
        "and to the weights). Over D = {data} tokens: 6·N·D = **{total_sci} FLOPs**, of "
        "which the forward passes alone are {forward}.\n\n"
        "That is a count, not a rate: divide it by the FLOP/s a cluster sustains to get a "
        "time (next exercise)."
    ),
    answer=_total,
    derived=_total_derived,
    mistakes=(
        Mistake("forward_only",
                "That is the forward pass only (2·N·D). Training also runs the backward "
                "pass, which costs twice the forward: 6·N·D in all.",
                lambda p: inference.prefill_flops(p["n_params"], int(p["tokens"]))),
        mistakes.counted_macs(lambda p: _total(p) / 2,
                              hint="That is half the answer: you counted 3 multiply-adds per "
                                   "weight per token. Each multiply-add is 2 FLOPs, so training "
                                   "is 6 FLOPs per weight per token."),
        Mistake("per_token",
                "That is the cost of one token, 6N. Multiply by the {data} training tokens.",
                lambda p: flops.flops_per_token(p["n_params"])),
    ),
    defaults={"n_params": 7e9, "tokens": 2e12},
    sample=lambda rng: {"n_params": rng.choice([1e9, 3e9, 7e9, 8e9, 13e9, 34e9, 70e9]),
                        "tokens": rng.choice([0.3e12, 1e12, 1.4e12, 2e12, 15e12])},
    dimension="flops", unit="FLOP", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 2. Days on a cluster at 40 % MFU

def _time(p: P, *, peak: float | None = None, gpus: int | None = None,
          mfu: float | None = None) -> float:
    return _common.training_seconds(p, _total(p), gpus=gpus, peak=peak, mfu=mfu)


def _time_derived(p: P) -> dict[str, Any]:
    g = hardware.gpu(p["gpu"])
    model = wording.billions(p["n_params"])
    a_model = wording.with_article(model)
    return {"model": model, "data": _tokens_text(p["tokens"]),
            "subject": (f"The {model}-parameter model of the previous exercise"
                        if p["continues_ex1"]
                        else f"{a_model[0].upper()}{a_model[1:]}-parameter model"),
            "total_sci": wording.scientific(_total(p)), "gpus_text": wording.count(p['gpus']),
            "mfu_pct": wording.percent(p["mfu"]), "dense": wording.tflop_rate(g.dense("bf16"), 4),
            "sparse": wording.tflop_rate(g.sparse_flops["bf16"], 4),
            "sustained": units.format_flop_rate(_total(p) / _time(p)),
            "at_100": _days(_time(p, mfu=1.0))}


days_on_cluster = core.NumericExercise(
    lesson=LESSON, number=2, title="Days on {gpus_text} {gpu} GPUs at {mfu_pct} MFU",
    question=(
        "{subject} is trained on {data} tokens "
        "({total_sci} FLOPs) on {gpus_text} {gpu} GPUs in BF16. The datasheet lists "
        "{sparse} for BF16 with sparsity and {dense} dense. At a model FLOPs utilisation of "
        "{mfu_pct}, how many days does the training take?"
    ),
    hints=(
        "Time = FLOPs ÷ (FLOP/s the whole cluster sustains).",
        "The cluster sustains GPUs × dense peak × MFU.",
    ),
    solution=(
        "The cluster sustains {gpus_text} × {dense} × {mfu_pct} = {sustained}. "
        "{total_sci} FLOPs at that rate take **{answer}**. At 100% MFU it would be "
        "{at_100}: no real run gets there, because of communication, memory-bound "
        "kernels, pipeline bubbles, data loading and restarts.\n\n"
        "Dense training cannot use the 2:4-sparse figure, so the sparse peak would halve "
        "the estimate and be wrong."
    ),
    answer=_time,
    derived=_time_derived,
    mistakes=(
        mistakes.used_sparse_peak(_common.at_sparse_peak(_time)),
        Mistake("forgot_mfu",
                "That is the time at 100% of the peak. The GPUs sustain only {mfu_pct} of "
                "it: divide by the MFU too.",
                lambda p: _time(p, mfu=1.0)),
        Mistake("multiplied_mfu",
                "You multiplied by the MFU. A lower utilisation makes the run *longer*: "
                "divide by it.",
                lambda p: _time(p, mfu=1.0) * p["mfu"]),
        Mistake("forgot_gpus",
                "That is the time on one GPU (the GPU-time). Spread over {gpus_text} GPUs "
                "the run is that many times shorter.",
                lambda p: _time(p, gpus=1)),
    ),
    # continues_ex1: the lesson's version asks about exercise 1's model; a class variant
    # draws its own, so it names its model without pointing back
    defaults={"n_params": 7e9, "tokens": 2e12, "gpu": "H100 SXM", "gpus": 1024, "mfu": 0.40,
              "continues_ex1": True},
    sample=drawn_until(
        lambda rng: {"n_params": rng.choice([7e9, 8e9, 13e9, 34e9, 70e9]),
                     "tokens": rng.choice([1e12, 2e12, 15e12]),
                     "gpu": rng.choice(["A100 80GB", "H100 SXM", "H200", "B200"]),
                     "gpus": rng.choice([256, 512, 1024, 2048, 4096]),
                     "mfu": rng.choice([0.35, 0.38, 0.40, 0.42]), "continues_ex1": False},
        lambda p: _time(p) <= MAX_TRAINING_DAYS * 86_400 and state_fits(p)),
    dimension="seconds", unit="days", rtol=0.02, digits=3,
)


# ---------------------------------------------------------------------------------------
# 3. MFU from a measured throughput

def _tps(p: P) -> float:
    return float(p["per_gpu"] * p["gpus"])


def _mfu(p: P, *, per_token: float | None = None, devices: int | None = None,
         peak: float | None = None) -> float:
    g = hardware.gpu(p["gpu"])
    return flops.mfu(_tps(p), per_token or flops.flops_per_token(p["n_params"]),
                     devices or p["gpus"], peak or g.dense("bf16"))


def _mfu_derived(p: P) -> dict[str, Any]:
    g = hardware.gpu(p["gpu"])
    return {"model": wording.billions(p["n_params"]), "tps": wording.count(_tps(p)),
            "gpus_text": wording.count(p['gpus']), "dense": wording.tflop_rate(g.dense("bf16"), 4),
            "per_token": wording.scientific(flops.flops_per_token(p["n_params"])),
            "achieved": wording.tflop_rate(_mfu(p) * g.dense("bf16"), 4)}


def _throughput_sample(rng: Any) -> dict[str, Any]:
    gpu = rng.choice(sorted(_THROUGHPUT))
    n_params, per_gpu = rng.choice(_THROUGHPUT[gpu])
    return {"gpu": gpu, "n_params": n_params, "per_gpu": per_gpu,
            "gpus": rng.choice([8, 64, 256, 1024])}


mfu_from_throughput = core.NumericExercise(
    lesson=LESSON, number=3, title="MFU from tokens per second",
    question=(
        "A {model}-parameter model trains on {gpus_text} {gpu} GPUs in BF16, and the logs "
        "show {tps} tokens per second for the whole job. What is its model FLOPs "
        "utilisation (MFU)? Count 6N FLOPs per token and leave out the attention term."
    ),
    hints=(
        "MFU = achieved model FLOP/s ÷ peak FLOP/s of all the GPUs.",
        "Achieved = tokens/s × 6N; peak = GPUs × the dense BF16 rate ({dense}).",
    ),
    solution=(
        "Each token needs 6N = {per_token} FLOPs, so the job achieves {tps} × {per_token} "
        "FLOP/s, that is {achieved} per GPU. Against the dense {dense} that is an MFU of "
        "**{answer}**, in the range large published runs report (PaLM 46.2%, Llama 3 405B "
        "38-43%)."
    ),
    answer=_mfu,
    derived=_mfu_derived,
    mistakes=(
        mistakes.used_sparse_peak(_common.at_sparse_peak(_mfu)),
        Mistake("forward_only",
                "You counted 2N FLOPs per token, the forward pass. Training runs the backward "
                "pass too: 6N per token.",
                lambda p: _mfu(p, per_token=inference.decode_flops(p["n_params"], 1))),
        Mistake("forgot_devices",
                "That compares the whole job with the peak of one GPU. Divide by the peak of "
                "all {gpus_text} GPUs.",
                lambda p: None if p["gpus"] == 1 else _mfu(p, devices=1)),
    ),
    defaults={"gpu": "A100 80GB", "n_params": 7e9, "per_gpu": 3_000, "gpus": 64},
    sample=drawn_until(_throughput_sample, state_fits),
    dimension="percent", unit="%", rtol=0.02, digits=3,
)


# ---------------------------------------------------------------------------------------
# 4. Chinchilla-optimal tokens

def _chinchilla_derived(p: P) -> dict[str, Any]:
    n = p["n_params"]
    return {"model": wording.billions(n), "tokens_text": _tokens_text(flops.chinchilla_tokens(n)),
            "ratio": core.format_number(flops.chinchilla_tokens(n) / n),
            "budget": wording.scientific(flops.training_flops(n, flops.chinchilla_tokens(n)))}


chinchilla_70b = core.NumericExercise(
    lesson=LESSON, number=4, title="Chinchilla-optimal data for a {model} model",
    question=(
        "By the Chinchilla rule of thumb, how many training tokens are compute-optimal for a "
        "model with {model} parameters? (Type for example `5e11 tokens` or "
        "`0.5 trillion tokens`.)"
    ),
    hints=(
        "Hoffmann et al. found that parameters and tokens should grow together.",
        "About {ratio} tokens per parameter.",
    ),
    solution=(
        "About {ratio} tokens per parameter: {model} × {ratio} = **{answer}** "
        "({tokens_text}). Training on them costs 6·N·D = {budget} FLOPs.\n\n"
        "Compute-optimal means the lowest loss for a fixed *training* budget. Models that "
        "will serve many requests are often trained on far more tokens (Llama 3 8B saw "
        "15T), because a smaller model is cheaper at every inference."
    ),
    answer=lambda p: flops.chinchilla_tokens(p["n_params"]),
    derived=_chinchilla_derived,
    mistakes=(
        mistakes.inverted_ratio(lambda p: p["n_params"] ** 2
                                / flops.chinchilla_tokens(p["n_params"]),
                                hint="You divided the parameters by 20. The rule is 20 *tokens per "
                                     "parameter*: multiply."),
        Mistake("gave_flops",
                "That is the training compute, 6·N·D in FLOPs. The question asks for the "
                "number of tokens D.",
                lambda p: flops.training_flops(p["n_params"],
                                               flops.chinchilla_tokens(p["n_params"]))),
    ),
    defaults={"n_params": 70e9},
    sample=lambda rng: {"n_params": rng.choice([1e9, 7e9, 13e9, 34e9, 70e9, 175e9, 405e9])},
    dimension="count", unit="tokens", extra_units=wording.TOKENS, rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 5. The MAC-counting mistake

def _layer_total(p: P) -> float:
    return flops.training_flops(p["d_in"] * p["d_out"], p["tokens"])


def _macs(p: P) -> int:
    # what MAC-counting profilers print as "flops" for the forward pass
    return gemm.flops(p["tokens"], p["d_in"], p["d_out"]) // 2


def _mac_derived(p: P) -> dict[str, Any]:
    return {"d_in_text": wording.count(p['d_in']), "d_out_text": wording.count(p['d_out']),
            "tokens_text": wording.count(p['tokens']),
            "reported": f"{core.format_number(_macs(p) / 1e9, 4)} G",
            "forward": wording.scientific(gemm.flops(p["tokens"], p["d_in"], p["d_out"])),
            "total_sci": wording.scientific(_layer_total(p))}


mac_counting = core.NumericExercise(
    lesson=LESSON, number=5, title="A profiler's “flops” are multiply-adds",
    question=(
        "A profiler that counts multiply-accumulates (as fvcore and ptflops do) reports "
        "**{reported} flops** for the forward pass of one {d_in_text}×{d_out_text} linear "
        "layer (no bias) on a batch of {tokens_text} tokens. In the course's convention "
        "(a multiply-add is 2 FLOPs), how many FLOPs does one *training* step of this layer "
        "cost, forward and backward, for that batch?"
    ),
    hints=(
        "First turn the profiler's number into FLOPs of the forward pass.",
        "Forward = 2 × the multiply-adds; training = 3 × forward (the backward pass is "
        "twice the forward).",
    ),
    solution=(
        "The profiler's {reported} are multiply-adds: the forward pass is 2 × that = "
        "{forward} FLOPs (2·M·K·N). The backward pass computes two products of the same "
        "size (the gradients with respect to the input and to the weights), so a training "
        "step costs 3 × {forward} = **{total_sci} FLOPs**, which is 6 FLOPs per weight "
        "per token."
    ),
    answer=_layer_total,
    derived=_mac_derived,
    mistakes=(
        mistakes.counted_macs(lambda p: _layer_total(p) / 2,
                              hint="You tripled the profiler's number, but it counts multiply-adds "
                                   "(MACs), each 2 FLOPs: double it first."),
        Mistake("forward_only",
                "That is the forward pass in FLOPs. Training adds the backward pass, twice "
                "as large: three times the forward in all.",
                lambda p: gemm.flops(p["tokens"], p["d_in"], p["d_out"])),
        Mistake("took_reported",
                "That is the profiler's number as printed: forward multiply-adds. Convert to "
                "FLOPs (×2) and add the backward pass (×3 in all).",
                lambda p: _macs(p)),
    ),
    defaults={"d_in": 4096, "d_out": 4096, "tokens": 2048},
    sample=lambda rng: {"d_in": rng.choice([1024, 2048, 4096, 8192]),
                        "d_out": rng.choice([1024, 4096, 11008, 14336]),
                        "tokens": rng.choice([512, 1024, 2048, 4096])},
    dimension="flops", unit="FLOP", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 6. The sparse-peak mistake

def _sparse_derived(p: P) -> dict[str, Any]:
    g = hardware.gpu(p["gpu"])
    return {"dense": wording.tflop_rate(g.dense("bf16"), 4),
            "sparse": wording.tflop_rate(g.sparse_flops["bf16"], 4),
            "achieved_text": wording.tflop_rate(p["achieved"], 4),
            "sparse_pct": wording.percent(flops.utilization(p["achieved"], g.sparse_flops["bf16"]))}


def _sparse_sample(rng: Any) -> dict[str, Any]:
    gpu = rng.choice(sorted(_ACHIEVED))
    return {"gpu": gpu, "achieved": rng.choice(_ACHIEVED[gpu])}


sparse_peak_mfu = core.NumericExercise(
    lesson=LESSON, number=6, title="MFU against which peak?",
    question=(
        "The {gpu} datasheet headlines **{sparse}** for BF16 tensor-core maths. A dense "
        "training run measures {achieved_text} of model FLOPs per GPU. What is its MFU?"
    ),
    hints=(
        "Is the headline figure the dense rate, or the one with 2:4 structured sparsity?",
        "Datasheets headline the sparse rate, twice the dense one; dense training can only "
        "reach the dense rate, {dense}.",
    ),
    solution=(
        "The headline {sparse} assumes 2:4 structured sparsity, which a dense model does "
        "not have. The dense BF16 peak is {dense}, so the MFU is {achieved_text} ÷ {dense} "
        "= **{answer}**. Against the sparse figure it would look like {sparse_pct}, and the "
        "run would seem twice as wasteful as it is."
    ),
    answer=lambda p: flops.utilization(p["achieved"], hardware.gpu(p["gpu"]).dense("bf16")),
    derived=_sparse_derived,
    mistakes=(
        mistakes.used_sparse_peak(lambda p: flops.utilization(
            p["achieved"], _common.sparse_peak(p))),
        mistakes.inverted_ratio(lambda p: 1 / flops.utilization(
            p["achieved"], hardware.gpu(p["gpu"]).dense("bf16")),
            hint="That is peak ÷ achieved. Utilisation is achieved ÷ peak, at most 100%."),
    ),
    defaults={"gpu": "H100 SXM", "achieved": 400e12},
    sample=_sparse_sample,
    dimension="percent", unit="%", rtol=0.02, digits=3,
)


# ---------------------------------------------------------------------------------------
# 7. Code: flops_per_token with the attention term

def _fpt_model(n_params, layers, heads, head_dim, seq_len):
    # 2N forward + 4N backward for the weights; QK^T and AV cost 4*L*H*Q*T forward,
    # and the backward pass doubles that: 12*L*H*Q*T
    return 6 * n_params + 12 * layers * heads * head_dim * seq_len


def _fpt_reference(n_params, layers, heads, head_dim, seq_len):
    return flops.flops_per_token(n_params, layers=layers, heads=heads, head_dim=head_dim,
                                 seq_len=seq_len)


def _attention(i: P) -> float:
    return flops.attention_flops_per_token(layers=i["layers"], heads=i["heads"],
                                           head_dim=i["head_dim"], seq_len=i["seq_len"])


_LLAMA2 = transformer.preset("llama-2-7b")

flops_per_token_code = core.CodeExercise(
    lesson=LESSON, number=7, title="Write flops_per_token",
    question=(
        "Write `flops_per_token(n_params, layers, heads, head_dim, seq_len)`: the training "
        "FLOPs per token of a Transformer, 6N for the weights plus PaLM's attention term "
        "for the score and value products (full T×T scores, forward and backward). It is "
        "checked against `gpulesson.flops.flops_per_token` on Llama-2-7B, on PaLM 540B "
        "and on random shapes."
    ),
    hints=(
        "Per layer and per token, one query's scores against T keys cost 2·H·Q·T FLOPs, "
        "and weighting the T values costs as much again.",
        "Forward attention is 4·L·H·Q·T; training triples it, as it triples 2N.",
    ),
    solution=(
        "6N for the weights, plus 12·L·H·Q·T for attention: 4·L·H·Q·T in the forward "
        "pass (QKᵀ and AV), twice that in the backward pass. For Llama-2-7B at 4,096 "
        "tokens: "
        + wording.scientific(_fpt_reference(transformer.param_count(_LLAMA2), 32, 32, 128, 4096))
        + " FLOPs per token, of which attention is "
        + wording.scientific(flops.attention_flops_per_token(layers=32, heads=32, head_dim=128,
                                                             seq_len=4096)) + "."
    ),
    function_name="flops_per_token", signature="n_params, layers, heads, head_dim, seq_len",
    reference=_fpt_reference,
    sample_input=lambda rng: {"n_params": rng.randint(10**8, 10**12),
                              "layers": rng.randint(2, 128), "heads": rng.randint(1, 128),
                              "head_dim": rng.choice([64, 80, 128, 256]),
                              "seq_len": rng.choice([512, 2048, 4096, 8192, 32768, 131072])},
    examples=({"n_params": transformer.param_count(_LLAMA2), "layers": 32, "heads": 32,
               "head_dim": 128, "seq_len": 4096},
              {"n_params": 540_350_000_000, "layers": 118, "heads": 48, "head_dim": 256,
               "seq_len": 2048}),
    mistakes=(
        Mistake("no_attention", "Your function returns 6N only; add the attention term "
                "12·L·H·Q·T, which has no parameters but costs FLOPs.",
                lambda i: flops.flops_per_token(i["n_params"])),
        Mistake("forward_only", "That is the forward pass (2N + 4·L·H·Q·T). Training adds "
                "the backward pass, twice the forward: multiply both terms by 3.",
                lambda i: _fpt_reference(**i) / 3),
        Mistake("attention_forward_only", "The weights are counted for training (6N) but "
                "attention only for the forward pass (4·L·H·Q·T). Its backward pass costs "
                "twice as much again: 12·L·H·Q·T.",
                lambda i: flops.flops_per_token(i["n_params"]) + _attention(i) / 3),
        mistakes.counted_macs(lambda i: _fpt_reference(**i) / 2,
                              hint="Your function counts multiply-adds: every term is half. A "
                                   "multiply-add is 2 FLOPs (6N, not 3N)."),
    ),
    model_solution=_fpt_model,
    rtol=1e-9,
)


# ---------------------------------------------------------------------------------------
# 8. When does attention cost as much as the weights?

def _crossover(p: P, *, heads: int | None = None) -> float:
    cfg = config(p)
    return inference.attention_crossover_tokens(
        transformer.param_count(cfg), layers=cfg.layers, heads=heads or cfg.heads,
        head_dim=cfg.head_dim)


def _attention_share(cfg: transformer.TransformerConfig, seq_len: int) -> float:
    """Attention FLOPs per token as a fraction of 6N."""
    n = transformer.param_count(cfg)
    return flops.attention_flops_per_token(layers=cfg.layers, heads=cfg.heads,
                                           head_dim=cfg.head_dim,
                                           seq_len=seq_len) / flops.flops_per_token(n)


#: The solution's two illustrative lengths: a common training length, and the 131,072
#: tokens of a long-context stage (Llama 3's, lesson 5).
_SHORT, _LONG = 4096, 131_072


def _crossover_derived(p: P) -> dict[str, Any]:
    cfg = config(p)
    n = transformer.param_count(cfg)
    context = cfg.context or cfg.max_positions or _LONG
    # the illustrations stay within the model's context (GPT-2 reads 1,024 tokens, GPT-3
    # 2,048); a longer stage is a model of the same shape with a longer context
    short = min(_SHORT, context)
    long_share = wording.percent(_attention_share(cfg, _LONG))
    long_text = (f"a long-context stage at {_LONG:,} tokens adds {long_share}"
                 if _LONG <= context else
                 f"the same shape stretched to a {_LONG:,}-token context, as long-context "
                 f"stages do, would add {long_share}")
    return {"name": wording.model_label(p["model"]), "n_text": wording.count(n),
            "layers": cfg.layers, "heads": cfg.heads,
            "kv_heads": cfg.kv_heads, "head_dim": cfg.head_dim,
            "short": f"{short:,}", "share_short": wording.percent(_attention_share(cfg, short)),
            "long_text": long_text}


attention_crossover = core.NumericExercise(
    lesson=LESSON, number=8, title="When attention costs as much as the weights: {name}",
    question=(
        "{name} has {n_text} parameters, {layers} layers and {heads} query heads of "
        "dimension {head_dim} ({kv_heads} key/value heads). In training, at what sequence "
        "length T does PaLM's attention term 12·L·H·Q·T per token equal the 6N of the "
        "weights?"
    ),
    hints=(
        "Set 12·L·H·Q·T = 6N and solve for T.",
        "T = N / (2·L·H·Q). H counts the query heads: every query head computes its own "
        "scores, even when key/value heads are shared.",
    ),
    solution=(
        "12·L·H·Q·T = 6N gives T = N / (2·L·H·Q) = **{answer}**. "
        "The same length balances the forward pass alone (4·L·H·Q·T against 2N), so "
        "prefill and training cross over together. Below it the weights dominate: at "
        "{short} tokens attention adds {share_short} to the 6N of this model, while "
        "{long_text}."
    ),
    answer=_crossover,
    derived=_crossover_derived,
    mistakes=(
        Mistake("mixed_passes_attention_forward",
                "You compared the forward attention (4·L·H·Q·T) with the training cost of "
                "the weights (6N). Compare like with like: 12·L·H·Q·T with 6N.",
                lambda p: 3 * _crossover(p)),
        Mistake("mixed_passes_weights_forward",
                "You compared the training attention (12·L·H·Q·T) with the forward cost of "
                "the weights (2N). Compare like with like: 12·L·H·Q·T with 6N.",
                lambda p: _crossover(p) / 3),
        Mistake("used_kv_heads",
                "You used the {kv_heads} key/value heads. Scores are computed for every one "
                "of the {heads} query heads; grouped-query attention shrinks the KV cache, "
                "not these FLOPs.",
                lambda p: None if config(p).kv_heads == config(p).heads
                else _crossover(p, heads=config(p).kv_heads)),
    ),
    defaults={"model": "llama-2-7b"},
    sample=lambda rng: {"model": rng.choice(["gpt2", "llama-2-7b", "llama-2-70b",
                                             "llama-3-8b", "llama-3-70b", "mistral-7b",
                                             "gpt3-175b"])},
    dimension="count", unit="tokens", extra_units=wording.TOKENS, rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 9. GPU-hours of Llama 3 405B

REPORTED_LLAMA31_405B_GPU_HOURS = 30.84e6  # Llama 3.1 model card, "Training Energy Use"
LLAMA3_405B_GPUS = 16_384  # the most H100s the run used at once (Dubey et al. 2024, Table 4)


def _gpu_hours(p: P, *, peak: float | None = None, mfu: float | None = None) -> float:
    return cost.gpu_hours(gpus=p["gpus"],
                          seconds=_common.training_seconds(p, p["total"], peak=peak, mfu=mfu))


def _wall_hours(p: P) -> float:
    # the mistake: the wall-clock time in hours, not GPU-hours
    return _common.training_seconds(p, p["total"]) / SECONDS_PER_HOUR


def _hours_derived(p: P) -> dict[str, Any]:
    g = hardware.gpu(p["gpu"])
    at_peak = _gpu_hours(p, mfu=1.0)
    return {"total_sci": wording.scientific(p["total"]), "mfu_pct": wording.percent(p["mfu"]),
            "dense": wording.tflop_rate(g.dense("bf16"), 4), "gpus_text": wording.count(p['gpus']),
            "days": _days(_common.training_seconds(p, p["total"])),
            "reported": f"{core.format_number(REPORTED_LLAMA31_405B_GPU_HOURS / 1e6, 4)}M",
            "implied": wording.percent(at_peak / REPORTED_LLAMA31_405B_GPU_HOURS),
            "setting": _hours_setting(p)}


def _hours_setting(p: P) -> str:
    """The question's first sentences: the run as it was, or on another number of GPUs
    as a supposition (the real run used up to 16,384)."""
    total, dense = wording.scientific(p["total"]), wording.tflop_rate(
        hardware.gpu(p["gpu"]).dense("bf16"), 4)
    mfu, real = wording.percent(p["mfu"]), wording.count(LLAMA3_405B_GPUS)
    if p["gpus"] == LLAMA3_405B_GPUS:
        return (f"Llama 3 405B was pretrained with {total} FLOPs on up to {real} {p['gpu']} "
                f"GPUs in BF16 (dense peak {dense}). At an MFU of {mfu}, how many "
                "**GPU-hours** does that take?")
    return (f"Llama 3 405B was pretrained with {total} FLOPs on up to {real} {p['gpu']} "
            f"GPUs. Had it run on {wording.count(p['gpus'])} of them in BF16 (dense peak "
            f"{dense}) at an MFU of {mfu}, how many **GPU-hours** would it have taken?")


llama3_gpu_hours = core.NumericExercise(
    lesson=LESSON, number=9, title="GPU-hours of Llama 3 405B",
    question=(
        "{setting} (Type for example `3e6 GPU-hours` or `3 million GPU-hours`.)"
    ),
    hints=(
        "GPU-hours do not depend on how many GPUs share the work: they are the time one "
        "GPU alone would need.",
        "FLOPs ÷ (dense peak × MFU) gives GPU-seconds; divide by 3,600.",
    ),
    solution=(
        "One GPU at {mfu_pct} of {dense} would need {total_sci} ÷ (peak × MFU) seconds: "
        "**{answer}**. On {gpus_text} GPUs that is {days} of wall-clock time.\n\n"
        "The Llama 3.1 model card reports {reported} GPU-hours for the 405B model. Against "
        "that, the FLOPs correspond to {implied} of the dense peak on average: lower than "
        "the 38-43% the paper measured in steady training, because the reported hours "
        "also cover interruptions and restarts, the long-context stage and everything "
        "else the GPUs did for this model."
    ),
    answer=_gpu_hours,
    derived=_hours_derived,
    mistakes=(
        mistakes.used_sparse_peak(_common.at_sparse_peak(_gpu_hours)),
        Mistake("wall_clock",
                "That is the wall-clock time in hours on {gpus_text} GPUs. GPU-hours count "
                "every GPU's hours: the time one GPU alone would need.",
                _wall_hours),
        Mistake("forgot_mfu",
                "That is the time at 100% of the peak. At {mfu_pct} MFU the GPUs need "
                "longer: divide by the MFU.",
                lambda p: _gpu_hours(p, mfu=1.0)),
        # review r22, F11: the worked solution cites this figure
        Mistake("reported_hours",
                "That is the figure Meta's model card reports for the whole run, which also "
                "counts restarts, the long-context stage and everything else the GPUs did. "
                "The question asks what the FLOPs alone take at {mfu_pct} MFU: work it out "
                "from the FLOPs, the peak and the MFU.",
                lambda p: REPORTED_LLAMA31_405B_GPU_HOURS),
    ),
    defaults={"total": 3.8e25, "gpu": "H100 SXM", "gpus": LLAMA3_405B_GPUS, "mfu": 0.40},
    sample=lambda rng: {"total": 3.8e25, "gpu": "H100 SXM",
                        "gpus": rng.choice([8_192, LLAMA3_405B_GPUS]),
                        "mfu": rng.choice([0.38, 0.40, 0.41, 0.43])},
    dimension="count", unit="GPU-hours", extra_units=wording.GPU_HOURS, rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 10. Predict, then run: the MFU of a numpy training step here

mlp_mfu_predict = core.PredictExercise(
    lesson=LESSON, number=10, title="MFU of a training step on this machine: predict, then run",
    question=(
        "The next cells train a small MLP with numpy (forward pass, backward pass and an "
        "SGD update) and compare its model FLOP/s (6N per token) with the best FLOP/s this "
        "machine reaches on one large matrix product.\n\n"
        "Before running: **what MFU do you expect**, in per cent of that measured peak?"
    ),
    hints=(
        "Almost all of the step's FLOPs are matrix products, the same kind of work as the "
        "peak measurement.",
        "What else does the step do that is not a matrix product, and is it limited by "
        "arithmetic or by memory?",
    ),
    solution=(
        "On a CPU the step usually reaches a large share of the measured peak, often "
        "60-90%, because nearly every FLOP is in a matrix product. What it loses goes to "
        "element-wise work (ReLU, its derivative, the loss gradient, the SGD update), "
        "which does a few FLOPs per byte and waits for memory, and to matrix shapes and "
        "transposes that the library runs a little less efficiently than one square "
        "product. At small widths fixed per-call costs take a larger share and the MFU "
        "falls (the first row of the lesson's table says how far).\n\n"
        "On a GPU the gap is usually larger: the peak is far higher, so the same "
        "element-wise work and per-kernel launch costs take a bigger share of the step."
    ),
    dimension="percent", unit="%", good_within=1.5,
)


# ---------------------------------------------------------------------------------------
# 11. HFU against MFU

def _model_share() -> float:
    # model FLOPs / executed FLOPs per token with full recomputation: 6N / 8N
    return flops.flops_per_token(1.0) / flops.hardware_flops_per_token(1.0, recompute="full")


def _hfu_derived(p: P) -> dict[str, Any]:
    share = _model_share()
    return {"hfu_pct": wording.rounded_percent(p["hfu"]),
            "low": wording.rounded_percent(p["hfu"] * share),
            "high": wording.rounded_percent(p["hfu"] / share),
            "share": core.format_number(share, 3)}


hfu_to_mfu = core.ChoiceExercise(
    lesson=LESSON, number=11, title="A utilisation figure with recomputation",
    question=(
        "A run uses full activation recomputation and reports {hfu_pct} utilisation, "
        "counting every FLOP the GPUs executed against the dense peak. What is its model "
        "FLOPs utilisation (MFU), leaving attention aside?"
    ),
    options=[("lower", "About {low}: lower"), ("same", "{hfu_pct}: the same"),
             ("higher", "About {high}: higher")],
    hints=(
        "Recomputation runs the forward pass a second time during the backward pass. Does "
        "the model need those FLOPs?",
        "Executed per token: 2N + 2N (again) + 4N = 8N. The model needs 6N.",
    ),
    solution=(
        "Executed FLOPs per token are 8N with full recomputation, the model needs 6N, so "
        "MFU = HFU × {share} = **{low}**. The reported figure is a *hardware* FLOPs "
        "utilisation (HFU): recomputation raises it without making training any faster. "
        "Megatron-LM's 52% for its 1T model, for example, counts the recomputation."
    ),
    answer=lambda p: "lower",
    derived=_hfu_derived,
    mistakes=(
        Mistake("same", "The GPUs executed 8N FLOPs per token but the model needs only 6N; "
                "MFU counts the 6N.", lambda p: "same"),
        Mistake("higher", "Recomputation adds executed FLOPs that the model does not need, "
                "so MFU is *below* the figure that counts them.", lambda p: "higher"),
    ),
    defaults={"hfu": 0.52},
    sample=lambda rng: {"hfu": rng.choice([0.45, 0.50, 0.52, 0.55, 0.58])},
)


# ---------------------------------------------------------------------------------------
# 12. The training FLOPs of a mixture of experts

def _moe_flops(p: P) -> float:
    return flops.model_training_flops(config(p), tokens=p["tokens"])


def _moe_card_flops(p: P) -> float | None:
    """6N with the active count as OpenAI states it, the input embedding left out
    (``active_params(input_embedding=False)``: gpt-oss-120b's 5.13B, OpenAI 2025, Table 1;
    DeepSeek-V3's "37B" fits it too); ``None`` where that is within the exercise's tolerance
    of the key."""
    cfg = config(p)
    card = flops.training_flops(transformer.active_params(cfg, input_embedding=False),
                                p["tokens"])
    return None if abs(card / _moe_flops(p) - 1) <= 0.02 else card


def _moe_derived(p: P) -> dict[str, Any]:
    cfg = config(p)
    total, active = transformer.param_count(cfg), transformer.active_params(cfg)
    card = transformer.active_params(cfg, input_embedding=False)
    return {"label": wording.model_label(p["model"]), "experts": cfg.experts,
            "k": cfg.experts_per_token, "data": _tokens_text(p["tokens"]),
            "total": wording.billions(total), "active": wording.billions(active),
            "card": wording.billions(card),
            "per_token": wording.scientific(flops.model_flops_per_token(cfg)),
            "dense": wording.scientific(flops.training_flops(total, p["tokens"])),
            "times": core.format_number(total / active, 2)}


moe_training_flops = core.NumericExercise(
    lesson=LESSON, number=12, title="Training FLOPs of {label}",
    question=(
        "{label} has {total} parameters; each token is routed to {k} of the {experts} "
        "experts of every mixture-of-experts layer, so it uses {active} of them (counted as "
        "`transformer.active_params` does, with the input embedding). How many FLOPs does "
        "training it on {data} tokens take, by the 6N rule with the attention term left out?"
    ),
    hints=(
        "6N counts the weights a token is multiplied by. Is that every expert?",
        "N is the active parameters, {active} (`transformer.active_params`): the total "
        "minus the routed experts a token skips.",
    ),
    solution=(
        "A token is multiplied only by the experts it is routed to, so N is its {active} "
        "active parameters: 6N = {per_token} FLOPs per token, and over {data} tokens "
        "**{answer}** (`flops.model_training_flops`). Counting all {total} would give {dense}, "
        "{times} times too many: memory holds every expert, the FLOPs use a few. "
        "(Model cards may state {card} active: they leave out the input embedding, whose "
        "row a token looks up without multiplying it. The course counts it, as PaLM and "
        "Chinchilla do for dense models.)"
    ),
    answer=_moe_flops,
    derived=_moe_derived,
    mistakes=(
        Mistake("total_for_flops",
                "That counts every expert, {total}. A token is multiplied only by the {k} "
                "experts it is routed to: use the active parameters, {active}.",
                lambda p: flops.training_flops(transformer.param_count(config(p)),
                                               p["tokens"])),
        Mistake("forward_only",
                "That is the forward pass only, 2N per token. Training adds the backward "
                "pass: 6N.",
                lambda p: _moe_flops(p) / 3),
        Mistake("card_active_count",
                "That is 6N with {card} active, the count without the input embedding "
                "that model cards state. The question counts the embedding, {active}, as "
                "`flops.model_training_flops` does.",
                _moe_card_flops),
    ),
    defaults={"model": "deepseek-v3", "tokens": 14.8e12},
    sample=lambda rng: {"model": rng.choice(["mixtral-8x7b", "qwen3-30b-a3b",
                                             "qwen3-235b-a22b", "deepseek-v3",
                                             "gpt-oss-120b"]),
                        "tokens": rng.choice([1e12, 2e12, 14.8e12, 36e12])},
    dimension="flops", unit="FLOP", rtol=0.02,
)


EXERCISES = (
    training_flops_7b,
    days_on_cluster,
    mfu_from_throughput,
    chinchilla_70b,
    mac_counting,
    sparse_peak_mfu,
    flops_per_token_code,
    attention_crossover,
    llama3_gpu_hours,
    mlp_mfu_predict,
    hfu_to_mfu,
    moe_training_flops,
)

__all__ = ["EXERCISES", "LESSON", "TITLE"]
