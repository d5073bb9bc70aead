"""Lesson 5, *FLOPs, MFU and Scaling Laws*: every figure its prose states, computed from the
calculators; published figures behind its worked examples and exercises; learner-style
answers to its code exercise; and the wiring of its two notebooks.

Each claim is the text exactly as the lesson's markdown has it and the calculator calls
that must produce it (``tests/content/claims.py``), so a changed formula or an edited
sentence fails the claim that names it, and a number added to the prose without a claim
fails ``test_every_figure_is_claimed``.

Sources of the published inputs: Touvron et al. 2023 (Llama 2: 2.0T tokens, 4,096-token
context, 184,320 A100 GPU-hours for 7B), Chowdhery et al. 2022 (PaLM appendix B: 540.35B
parameters, L = 118, H = 48, Q = 256, T = 2,048, 238.3K tokens/s on 6,144 TPU v4 chips of
275 TFLOP/s, 57.8 % HFU), Narayanan et al. 2021 (Megatron-LM Table 1: the 1T model on
3,072 A100s at 163 TFLOP/s; GPT-3 on 1,024 A100s at 140 TFLOP/s), Brown et al. 2020
(GPT-3: 300B tokens, 3.64e3 PFLOP/s-days), Dubey et al. 2024 (Llama 3: 15.6T tokens,
380-430 TFLOP/s per H100 in Table 4, 8,192 to 16,384 GPUs, 466 interruptions in 54 days),
the Llama 3.1 model card (30.84M H100 GPU-hours for 405B, 15T tokens for 8B), Hoffmann et
al. 2022 (Chinchilla: Gopher's 5.76e23 FLOPs) and the seed calculator page's figures.
"""

from __future__ import annotations

import json
import math
import re
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from gpulesson import calculators, cost, flops, hardware, inference, planning, prices, transformer
from gpulesson.exercises import lesson_module

from . import nbtools as nb
from .claims import claim_test, claim_tests, claims, page
from .reference import A100, GPT3, H100, L27, L38, L405, N7, N405, pct

SLUG = "flops_and_scaling"
BANK = lesson_module(SLUG)
LESSON_NB = nb.notebook(SLUG)
EXERCISE_NB = nb.exercise_notebook(SLUG)

A100_PEAK = A100.dense("bf16")
H100_PEAK = H100.dense("bf16")

SHAPE7 = {"layers": L27.layers, "heads": L27.heads, "head_dim": L27.head_dim}

# Inputs the lesson chooses, and published inputs (sources in the module docstring).
MLP_DIMS, MLP_TOKENS = (512, 2048, 512), 1024   # section 1's network and batch
LLAMA2_CONTEXT = 4096                           # Llama 2's training length
LLAMA2_TOKENS = 2.0e12
LLAMA2_GPUS, MFU = 1024, 0.40                   # the running example's quote and MFU
LLAMA2_REPORTED_HOURS = 184_320
PALM = {"n": 540.35e9, "tps": 238.3e3, "chips": 6144, "peak": 275e12,
        "shape": {"layers": 118, "heads": 48, "head_dim": 256, "seq_len": 2048}}
MEGATRON_1T_RATE = 163e12
GPT3_TOKENS = 300e9
GPT3_MEGATRON_RATE, GPT3_MEGATRON_GPUS = 140e12, 1024
LLAMA3_RATES = (380e12, 400e12, 430e12)         # TFLOP/s per GPU, Table 4
L405_TOKENS = 15.6e12
L405_REPORTED_HOURS = 30.84e6
L38_TOKENS = 15e12
FRAMEWORK_MFU = 0.55                            # the Pause and think's printed "MFU 55 %"
SEED = {"n": 175e9, "mfu": 0.606}               # the seed page's GPT-3 inputs
GOPHER_BUDGET = 5.76e23
H100_OFFER = 256                                # the Pause and think's other quote

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _sci(x: float, digits: int = 3) -> str:
    """A count as the lesson writes it in prose: ``3.14 × 10²³``."""
    mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def _tex(x: float, digits: int = 3, *, spaced: bool = False) -> str:
    """The same in the lesson's maths: ``6.44\\times10^9``, ``4.04\\times10^{10}``, or
    spaced ``3.15 \\times 10^{23}``."""
    mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
    power = str(int(exponent))
    times = r" \times " if spaced else r"\times"
    return f"{mantissa}{times}10^{power if len(power) == 1 else '{' + power + '}'}"


def _v3_mfu(fmt: str, *, attention: bool = True) -> float:
    """DeepSeek-V3's pre-training MFU against the dense ``fmt`` peak of an H800 (the H100
    SXM's Tensor Core peaks) over all 2,664K reported GPU-hours (DeepSeek-AI 2024, Table 1)
    for 14.8T tokens: model FLOPs at 37.6B active with the attention term at the 4,096-token
    pre-training length, or 6N alone."""
    per_token = flops.model_flops_per_token(V3, seq_len=V3_CONTEXT if attention else None)
    return flops.mfu(V3_TOKENS / (V3_HOURS * 3600), per_token, 1,
                     hardware.gpu("H100 SXM").dense(fmt))


def _v3_attention_share() -> float:
    return (flops.model_flops_per_token(V3, seq_len=V3_CONTEXT)
            / flops.model_flops_per_token(V3) - 1)


def _v3_while_training() -> str:
    """The same hours with Meta's effective training time taken out: the quoted MFU of the
    DeepSeek-V3 row in lesson 10's table of published runs (180K GPU-hours per trillion
    tokens, the report's own rate, is 2,664K for 14.8T)."""
    share = planning.runs.EFFECTIVE_TRAINING_TIME
    while_training = _v3_mfu("bf16") / share
    row = next(r for r in planning.runs.load_runs() if r.name == "DeepSeek-V3")
    assert row.seq_len == V3_CONTEXT
    assert pct(row.published_mfu, 1) == pct(while_training, 1)
    return (f"counting {pct(share)} of them as training, as section 6 does for Llama 2, "
            f"gives the {pct(while_training, 1)} of [lesson 10](planning_dashboard.ipynb)'s "
            "table")


def _attention_share_at_8k(cfg: transformer.TransformerConfig) -> float:
    """12LHQT over 6N at the Llama 3 pretraining length, 8,192 tokens."""
    return (flops.attention_flops_per_token(layers=cfg.layers, heads=cfg.heads,
                                            head_dim=cfg.head_dim, seq_len=8192)
            / flops.flops_per_token(transformer.param_count(cfg)))


def _llama3_range() -> str:
    """Table 4's lowest and highest TFLOP/s per H100 as MFU against the dense peak."""
    low, high = (flops.utilization(r, H100_PEAK) for r in (min(LLAMA3_RATES),
                                                           max(LLAMA3_RATES)))
    return f"{100 * low:.0f}–{100 * high:.0f} %"


def _attention_coefficient() -> str:
    """PaLM's 12 in 12·L·H·Q·T: the attention FLOPs per token of a unit shape."""
    return f"{flops.attention_flops_per_token(layers=1, heads=1, head_dim=1, seq_len=1):.0f}"


def _attention_7b() -> float:
    """Llama 2 7B's attention FLOPs per token at its training length."""
    return flops.attention_flops_per_token(**SHAPE7, seq_len=LLAMA2_CONTEXT)


def _non_embedding_share(name: str) -> float:
    cfg = transformer.preset(name)
    return 1 - transformer.non_embedding_params(cfg) / transformer.param_count(cfg)


def _palm(per_token: float) -> float:
    return flops.mfu(PALM["tps"], per_token, PALM["chips"], PALM["peak"])


def _palm_mfu() -> str:
    return pct(_palm(flops.flops_per_token(PALM["n"], **PALM["shape"])), 1)


def _palm_hfu_full() -> str:
    return pct(_palm(flops.hardware_flops_per_token(PALM["n"], recompute="full",
                                                     **PALM["shape"])), 1)


def _llama2_total() -> float:
    return flops.training_flops(N7, LLAMA2_TOKENS)


def _llama2_hours() -> float:
    return cost.gpu_hours(gpus=LLAMA2_GPUS, seconds=flops.training_time(
        _llama2_total(), LLAMA2_GPUS, A100_PEAK, MFU))


def _llama2_implied(per_token: float) -> float:
    """The MFU the reported GPU-hours imply, for a count of FLOPs per token."""
    return flops.mfu(LLAMA2_TOKENS / (LLAMA2_REPORTED_HOURS * 3600), per_token, 1, A100_PEAK)


def _llama2_while_training() -> str:
    """The same hours with Meta's effective training time taken out: the quoted MFU of the
    Llama 2 7B row in lesson 10's table of published runs."""
    share = planning.runs.EFFECTIVE_TRAINING_TIME
    while_training = _llama2_implied(
        flops.flops_per_token(N7, **SHAPE7, seq_len=LLAMA2_CONTEXT)) / share
    row = next(r for r in planning.runs.load_runs() if r.name == "Llama 2 7B")
    assert pct(row.published_mfu) == pct(while_training)
    return (f"above {pct(share)} of the hours; at {pct(share)} the 7B run trained at "
            f"{pct(while_training)} MFU while it ran")


def _gpt3_days(per_token: float) -> float:
    """Days on Megatron-LM's 1,024 A100s at 140 TFLOP/s, counting ``per_token``."""
    return flops.training_days(per_token * GPT3_TOKENS, GPT3_MEGATRON_GPUS, A100_PEAK,
                               flops.utilization(GPT3_MEGATRON_RATE, A100_PEAK))


def _gpt3_pf_days() -> float:
    return flops.training_flops(transformer.param_count(GPT3), GPT3_TOKENS) / (1e15 * 86400)


def _l405_average() -> float:
    return flops.mfu(L405_TOKENS / (L405_REPORTED_HOURS * 3600), flops.flops_per_token(N405),
                     1, H100_PEAK)


def _seed_days(peak: float, mfu: float) -> str:
    total = flops.training_flops(SEED["n"], GPT3_TOKENS)
    return f"{flops.training_days(total, 1024, peak, mfu):.1f} days"


def _quote_days(n_gpus: int, gpu: hardware.GPUSpec) -> str:
    total = flops.training_flops(N7, LLAMA2_TOKENS)
    return f"{flops.training_days(total, n_gpus, gpu.dense('bf16'), MFU):.1f} days"


V3 = transformer.preset("deepseek-v3")
V3_TOKENS = 14.8e12                              # DeepSeek-AI 2024, section 4.1
V3_CONTEXT = 4096                                # its pre-training length (DeepSeek-AI 2024)
V3_HOURS = 2.664e6                               # pre-training H800 GPU-hours, Table 1


def _current_days() -> dict[str, str]:
    """Llama 3 405B's 6ND on 16,384 GPUs of each kind at 40 % MFU, in whole days."""
    total = flops.training_flops(N405, L405_TOKENS)
    return {g: f"{flops.training_days(total, 16_384, hardware.gpu(g).dense('bf16'), 0.40):.0f}"
            for g in ("H100 SXM", *hardware.CURRENT_GENERATION)}


def _dims() -> str:
    return f"{MLP_DIMS[0]}, hidden width {MLP_DIMS[1]:,}"


def _step_flops() -> str:
    n = sum(k * m for k, m in zip(MLP_DIMS[:-1], MLP_DIMS[1:], strict=True))
    return f"{flops.training_flops(n, MLP_TOKENS):,.0f} FLOPs for the step"


def _calculator_defaults() -> str:
    """The training_flops calculator's defaults, as section 6's calculator names them."""
    d = calculators.si_inputs("training_flops")
    label = transformer.model_label(d["model"]).replace("-", " ")
    return (f"({label}, {d['tokens'] / 1e12:.0f}T tokens, {d['n_devices']:,} "
            f"{d['gpu'].split()[0]}s, {pct(d['mfu'])})")


def _ten_times() -> str:
    """Chinchilla's model for Llama 3 8B's training budget, in the Pause and think's words."""
    n = transformer.param_count(L38)
    point = flops.chinchilla_optimal(flops.training_flops(n, L38_TOKENS))
    bigger, fewer = point.params / n, L38_TOKENS / point.tokens
    if round(bigger) == round(fewer) == 10:
        return "about ten times larger on a tenth of the tokens"
    return f"about {bigger:.1f} times larger on 1/{fewer:.1f} of the tokens"


def _predict_exercise() -> str:
    (number,) = (ex.number for ex in BANK.EXERCISES if ex.kind == "predict")
    return f"Exercise {number} asks you to commit a number"


def _exercise_2_cluster() -> str:
    ex = BANK.EXERCISES[1]
    return f"its days on {ex.inputs['gpus']:,} {ex.inputs['gpu'].split()[0]}s"


TRAINING_RUNS = Path(__file__).resolve().parents[2] / "gpulesson" / "data" / "training_runs.json"


def _runs_publishing_an_mfu() -> dict[str, tuple[float, int, str]]:
    """The runs of ``training_runs.json`` (lesson 10's table) whose source publishes an MFU:
    name -> (MFU, GPUs, GPU)."""
    runs = json.loads(TRAINING_RUNS.read_text(encoding="utf-8"))["runs"]
    return {r["name"]: (r["published"]["value"], r["n_gpus"], r["gpu"]) for r in runs
            if r["published"]["kind"] == "mfu"}


def _published_mfus() -> list[float]:
    """Every MFU of a large published run the course quotes: those of lesson 10's table, PaLM's
    (section 4) and DeepSeek-V3's against its BF16 peak (section 4)."""
    return [mfu for mfu, _, _ in _runs_publishing_an_mfu().values()] + [
        _palm(flops.flops_per_token(PALM["n"], **PALM["shape"])), _v3_mfu("bf16")]


CLAIMS = claims(
    # In short, and section 7: Chinchilla's ratio
    lambda: f"about {flops.chinchilla_tokens(1):.0f} tokens "
     "per parameter",
    lambda: f"about **{flops.chinchilla_tokens(1):.0f} "
     "tokens per parameter**",
    lambda: "far beyond "
     f"{flops.chinchilla_tokens(1):.0f} tokens per parameter",
    lambda: rf"N_\text{{opt}} = \sqrt{{C/"
     f"{flops.training_flops(1, flops.chinchilla_tokens(1)):.0f}}}"
     rf", \qquad D_\text{{opt}} = {flops.chinchilla_tokens(1):.0f}\,N_\text{{opt}}",
    # 1. Where 6N comes from
    lambda: f"(width {_dims()}, as in",
    _step_flops,
    # 2. What N counts
    lambda: f"For GPT-3 the two counts differ by {pct(_non_embedding_share('gpt3-175b'), 1)}, "
     "for GPT-2 small by "
     + ("almost a third" if 0.3 < _non_embedding_share("gpt2") < 1 / 3 else
       pct(_non_embedding_share("gpt2"))) + ", and for Llama 3 8B, whose "
     f"{L38.vocab:,}-token vocabulary needs two large matrices, by "
     f"{pct(_non_embedding_share('llama-3-8b'))}.",
    # 3. The attention term
    lambda: _attention_coefficient() + r"\,L\,H\,Q\,T",
    lambda: rf"C_\text{{token}} = "
     f"{flops.flops_per_token(1):.0f}N + {_attention_coefficient()}" r"\,L\,H\,Q\,T",
    lambda: f"Llama 2 7B ($L = {L27.layers}$, $H = {L27.heads}$, $Q = {L27.head_dim}$) at its "
     f"training length of {LLAMA2_CONTEXT:,} tokens: "
     rf"$12\cdot{L27.layers}\cdot{L27.heads}\cdot{L27.head_dim}\cdot{LLAMA2_CONTEXT} = "
     f"{_tex(_attention_7b())}$ FLOPs per token, against "
     f"$6N = {_tex(flops.flops_per_token(N7))}$. Attention adds "
     f"{pct(_attention_7b() / flops.flops_per_token(N7), 1)}. The two are equal at "
     "$T = N/(2LHQ)$, "
     f"{inference.attention_crossover_tokens(N7, **SHAPE7):,.0f} tokens.",
    lambda: "at 131,072 tokens attention "
     + ("dominates" if flops.attention_flops_per_token(
        layers=L405.layers, heads=L405.heads, head_dim=L405.head_dim, seq_len=131_072)
       > flops.flops_per_token(N405) else "does not dominate")
     + " even for the largest models",
    # 4. MFU and HFU
    lambda: f"This is PaLM's published {_palm_mfu()} "
     "MFU",
    lambda: f"and the {_palm_hfu_full()} that recomputing the whole forward pass would give",
    lambda: f"at {MEGATRON_1T_RATE / 1e12:.0f} "
     f'TFLOP/s per GPU, "{pct(flops.utilization(MEGATRON_1T_RATE, A100_PEAK))} of peak"',
    lambda: "so "
     f"{pct(flops.utilization(MEGATRON_1T_RATE, A100_PEAK))} is a hardware utilisation",
    lambda: f"reports {min(LLAMA3_RATES) / 1e12:.0f}–{max(LLAMA3_RATES) / 1e12:.0f} TFLOP/s "
     f"per H100 in BF16, {_llama3_range()} MFU",
    lambda: f"That is against the dense {H100_PEAK / 1e12:.1f} TFLOP/s. Against "
     f"the {H100.sparse_flops['bf16'] / 1e12:,.0f} TFLOP/s a datasheet headlines",
    lambda: f"comparing it with Llama 3's "
     f"{_llama3_range()}",
    lambda: "about three quarters of it, "
     + pct(FRAMEWORK_MFU * flops.flops_per_token(1)
           / flops.hardware_flops_per_token(1, recompute="full")),
    lambda: "the dense BF16 "
     f"{H100_PEAK / 1e12:.1f} TFLOP/s, the sparse {H100.sparse_flops['bf16'] / 1e12:,.0f},",
    # 5. The measurement
    _predict_exercise,
    # 6. How long, and what does it cost?
    lambda: f"The estimate, {_sci(_llama2_total())} FLOPs and about "
     f"{round(_llama2_hours(), -4):,.0f} GPU-hours ("
     f"{flops.training_days(_llama2_total(), LLAMA2_GPUS, A100_PEAK, MFU):.1f} days on "
     f"{LLAMA2_GPUS:,} GPUs), is within "
     f"{math.ceil(100 * (1 - _llama2_hours() / LLAMA2_REPORTED_HOURS))} % of the "
     f"{LLAMA2_REPORTED_HOURS:,} A100 GPU-hours Meta reports",
    lambda: f"the reported hours average {pct(_llama2_implied(flops.flops_per_token(N7)))} MFU "
     "counting "
     "$6N$, or "
     f"{pct(_llama2_implied(flops.flops_per_token(N7, **SHAPE7, seq_len=LLAMA2_CONTEXT)))}"
     f" with the attention term: at {LLAMA2_CONTEXT:,} tokens attention is worth "
     f"{pct(_attention_7b() / flops.flops_per_token(N7))} for a 7B model",
    _llama2_while_training,
    lambda: "Brown et al. give "
     f"{_sci(flops.training_flops(transformer.param_count(GPT3), GPT3_TOKENS))} FLOPs for "
     f"{GPT3_TOKENS / 1e9:.0f}B tokens",
    lambda: "which is $6ND$ with all "
     f"{transformer.param_count(GPT3) / 1e9:.1f}B parameters",
    lambda: f"would need {_gpt3_days(flops.hardware_flops_per_token(175e9, recompute='full')):.0f}"
     f" days on {GPT3_MEGATRON_GPUS:,} A100s at the {GPT3_MEGATRON_RATE / 1e12:.0f} TFLOP/s "
     "per GPU",
    lambda: f"The {_gpt3_pf_days():,.0f} PFLOP/s-days are the "
     f"{_sci(_gpt3_pf_days())} of the GPT-3 paper's table D.1. The "
     f"{_gpt3_days(flops.hardware_flops_per_token(175e9, recompute='full')):.0f} days match "
     f"Megatron-LM's estimate; had we taken {GPT3_MEGATRON_RATE / 1e12:.0f} TFLOP/s as *model* "
     f"FLOP/s we would have said {_gpt3_days(flops.flops_per_token(175e9)):.0f} days",
    lambda: f"$6ND$ with all {N405 / 1e9:.1f}B parameters and {L405_TOKENS / 1e12:.1f}T tokens "
     f"is {_sci(flops.training_flops(N405, L405_TOKENS), 2)} FLOPs",
    lambda: f"It reports {_llama3_range()} "
     "MFU on 8,192 to 16,384 H100s",
    lambda: f"The reported GPU-hours correspond to {pct(_l405_average())} of the dense peak, "
     f"below the {_llama3_range()} measured",
    # Reading a calculator's output: the seed page
    lambda: f'"FLOPS per Token {flops.flops_per_token(SEED["n"]) / 1e12:.2f} TFLOPS", '
     f'"Total Training FLOPS {_sci(flops.training_flops(SEED["n"], GPT3_TOKENS))}"',
    lambda: f'"Training Time '
     f'{_seed_days(H100.sparse_flops["bf16"], SEED["mfu"])}"',
    lambda: f'"{flops.flops_per_token(SEED["n"]) / 1e12:.2f} TFLOPS per token" is $6N$ for '
     rf"$N = {SEED['n'] / 1e9:.0f} \times 10^9$: ${_tex(flops.flops_per_token(SEED['n']))}$ "
     "FLOPs",
    lambda: f"${_tex(flops.training_flops(SEED['n'], GPT3_TOKENS), spaced=True)}$ is that "
     f"count times {GPT3_TOKENS / 1e9:.0f}B tokens. GPT-3's own figure is "
     f"${_tex(flops.training_flops(transformer.param_count(GPT3), GPT3_TOKENS), spaced=True)}$"
     f" because the model has {transformer.param_count(GPT3) / 1e9:.1f}B parameters, not "
     f"{SEED['n'] / 1e9:.0f}B.",
    lambda: f"1,024 H100s with the 2:4-*sparse* BF16 peak: "
     f"{_seed_days(H100.sparse_flops['bf16'], SEED['mfu'])}. With the dense peak the same "
     f"{pct(SEED['mfu'], 1)} means {_seed_days(H100_PEAK, SEED['mfu'])}, and at "
     f"{pct(MFU)} MFU, a typical figure for large runs, {_seed_days(H100_PEAK, MFU)}.",
    # FP8 training (section 4): the same DeepSeek-V3 run against two peaks
    lambda: f"{pct(_v3_mfu('bf16'), 1)} of the BF16 peak, {pct(_v3_mfu('fp8'), 1)} of the "
     f"FP8 one: the same run. At {V3_CONTEXT:,} tokens attention adds "
     f"{pct(_v3_attention_share())} to $6N$ for DeepSeek-V3's {V3.heads} heads; $6N$ alone "
     f"would give {pct(_v3_mfu('bf16', attention=False), 1)} and "
     f"{pct(_v3_mfu('fp8', attention=False), 1)}",
    _v3_while_training,
    lambda: "against the FP4 peak, "
     + {3: "three"}[round(hardware.gpu("B300").dense("fp4") / hardware.gpu("B300").dense("fp8"))]
     + " times the FP8 one on a B300",
    lambda: f"count attention at its {V3_CONTEXT:,}-token training length",
    lambda: f"PaLM {_palm_mfu()}, Llama 3 {_llama3_range()}, DeepSeek-V3 "
     f"{pct(_v3_mfu('bf16'), 1)} of its BF16 peak and {pct(_v3_mfu('fp8'), 1)} of its FP8 "
     "one",
    lambda: f"At 8,192 tokens it adds {pct(_attention_share_at_8k(L405))} (Llama 3.1 405B) "
     f"to {pct(_attention_share_at_8k(L38))} (Llama-3-8B).",
    lambda: f"(PaLM {_palm_mfu()}, Llama 3 "
     f"{_llama3_range()}, MegaScale",
    _calculator_defaults,
    # Section 6's rent: the cheapest on-demand A100 of the course's price table, dated
    lambda: (lambda q: "at the cheapest on-demand A100 80GB of the course's price table "
             f"({date.fromisoformat(q.date):%B %Y})")(prices.current_quotes("A100 80GB")[0]),
    lambda: f"{LLAMA2_GPUS:,} × {A100_PEAK / 1e12:.0f} TFLOP/s is "
     f"{LLAMA2_GPUS * A100_PEAK / 1e15:.0f} PFLOP/s of dense BF16 peak; {H100_OFFER} × "
     f"{H100_PEAK / 1e12:.1f} TFLOP/s is {H100_OFFER * H100_PEAK / 1e15:.0f} PFLOP/s. At the "
     f"same MFU the run takes {_quote_days(LLAMA2_GPUS, A100)} on the A100s and "
     f"{_quote_days(H100_OFFER, H100)} on the H100s.",
    # 2b. Mixture of experts
    lambda: f"DeepSeek-V3's {V3_TOKENS / 1e12:.1f}T training tokens cost "
     f"{_sci(flops.model_training_flops(V3, tokens=V3_TOKENS))} FLOPs at its active "
     f"parameters; counted with all {transformer.param_count(V3) / 1e9:.1f}B they would be "
     f"{transformer.param_count(V3) / transformer.active_params(V3):.0f} times more",
    # 6. The current generation
    lambda: (lambda d: f"16,384 H100s take {d['H100 SXM']} days, B300s "
             f"({hardware.gpu('B300').dense('bf16') / 1e12:,.0f} TFLOP/s dense BF16) "
             f"{d['B300']} days, and GB300s or MI355Xs "
             f"({hardware.gpu('MI355X').dense('bf16') / 1e12:,.0f}) "
             + {1: d["MI355X"]}[len({d["GB300 NVL72"], d["MI355X"]})] + " days")(
                 _current_days()),
    # 7. Chinchilla
    lambda: f"{_sci(GOPHER_BUDGET)} FLOPs, is compute-optimal for a "
     f"{flops.chinchilla_optimal(GOPHER_BUDGET).params / 1e9:.0f}B model on "
     f"{flops.chinchilla_optimal(GOPHER_BUDGET).tokens / 1e12:.1f}T tokens",
    lambda: "puts this budget at "
     f"{flops.chinchilla_fitted_optimal(GOPHER_BUDGET).params / 1e9:.0f}B parameters and "
     f"{flops.chinchilla_fitted_optimal(GOPHER_BUDGET).tokens / 1e12:.1f}T tokens",
    lambda: f"Llama 3 8B saw {L38_TOKENS / 1e12:.0f} trillion tokens, almost "
     f"{round(L38_TOKENS / transformer.param_count(L38), -2):,.0f} per parameter",
    _ten_times,
    _exercise_2_cluster,
    # Reading a calculator's output: the highest MFU a large published run reports
    lambda: (lambda mfu, gpus, gpu: f"MegaScale {100 * mfu:.1f} % on {gpus:,} "
             f"{gpu.split()[0]}s")(*_runs_publishing_an_mfu()["MegaScale 175B"]),
)

NOT_FIGURES = (
    # FP8 training: Meta, "The Llama 4 herd" (2025-04-05): 390 TFLOPs/GPU in FP8 on 32K GPUs;
    # DeepSeek-AI 2024 (DeepSeek-V3), Table 1: pre-training 2,664K H800 GPU-hours
    "Behemoth at 390 TFLOP/s per GPU, April 2025", "took 2.664 million H800 GPU-hours for "
    "14.8T tokens",
    # NVIDIA 2025, "Pretraining Large Language Models with NVFP4" (arXiv:2509.25149,
    # 2025-09-29), abstract: a 12B model on 10T tokens
    "pre-trained a 12B model on 10T tokens mostly in NVFP4",
    # the range of MFU published large runs report (its low end is section 6's 35 %),
    # held against every published MFU by test_the_mfu_range_holds_every_published_run
    "published runs reach 35–55 %", "Large runs reach 35–55 %",
    # formula constants
    r"N \approx 12\,L\,d^2",
    "falls short of 100 %",
    "(100 % minus the last column)",
    "rather than 100 %",
    r"\times 3600\ \text{s/h}",
    # the Llama 3 team's pretraining context (Dubey et al. 2024)
    "trains most tokens at 8,192",
    # published inputs of the worked examples (sources in the module docstring)
    "PaLM trained at 238.3K tokens per second on 6,144 TPU v4 chips of 275 TFLOP/s (BF16) "
    "each, with $L = 118$ layers, $H = 48$ heads of $Q = 256$ and sequences of "
    "$T = 2{,}048$ tokens",
    "an HFU of 57.8 %",
    "($L = 128$, $h = 25{,}600$, vocabulary 51,200, sequences of 2,048, batch 3,072) on "
    "3,072 A100s",
    "140 TFLOP/s includes the recomputed FLOPs",
    "the Llama 3.1 model card reports 30.84 million H100 GPU-hours",
    "466 job interruptions in one 54-day period",
    # the seed page's inputs and quoted figure
    '"Model FLOPS Utilization 60.6 %"',
    "for 60.6 % and 3.0 days",
    "And 60.6 % would be above",
    # a cross-reference
    "the figure that [lesson 10](planning_dashboard.ipynb)'s table",
    # inputs the lesson chooses
    "a quote for 1,024 A100 80GB GPUs", "at the same 40 % MFU", "its Table 3",
    "The 20 is a rule of thumb",
    "That is why 40 % MFU on thousands of GPUs",
    'A framework prints "MFU 55 %"',
    "Llama 2 7B on 2T tokens, 1,024 A100s, 40 % MFU.",
    "The team's quote is for 1,024 A100s. Another provider offers 256 H100s for the same "
    "monthly price. At 40 % MFU",
)


def _code_cell(cell_id: str) -> str:
    (cell,) = (c for c in json.loads(LESSON_NB.read_text(encoding="utf-8"))["cells"]
               if c.get("id") == cell_id)
    return "".join(cell["source"])


# ---------------------------------------------------------------------------------------
# The figures of the prose


(test_claim, test_every_figure_is_claimed,
 test_every_listed_non_figure_is_on_the_page) = claim_tests(__name__, LESSON_NB)


def test_the_lessons_training_step_computes_the_true_gradients() -> None:
    """Section 1's ``train_step`` (the notebook's own code, run here) against central
    differences in float64: the weight updates at lr = 1 are the gradients, and the value
    returned is d(loss)/dx. ``make_mlp`` keeps everything in float32, the precision of the
    measured peak."""
    namespace: dict[str, object] = {"np": np}   # what the set-up cell imported
    exec(compile(_code_cell("c005"), "flops_and_scaling.ipynb:c005", "exec"), namespace)
    make_mlp, train_step = namespace["make_mlp"], namespace["train_step"]
    assert namespace["n_params"] == 2 * 512 * 2048
    assert all(a.dtype == np.float32 for a in (*namespace["weights"], namespace["x"],
                                               namespace["y"], namespace["grad_x"]))

    def loss(ws, x, y):
        h = x
        for i, w in enumerate(ws):
            h = h @ w
            if i < len(ws) - 1:
                h = np.maximum(h, 0)
        return float(np.mean((h - y) ** 2))

    ws, x, y = make_mlp([5, 7, 3], 4, seed=1)
    ws, x, y = [w.astype(np.float64) for w in ws], x.astype(np.float64), y.astype(np.float64)
    before = [w.copy() for w in ws]
    grad_x = train_step(ws, x, y, lr=1.0)
    eps = 1e-6

    def central(f, a):
        out = np.zeros_like(a)
        for j in np.ndindex(a.shape):
            plus, minus = a.copy(), a.copy()
            plus[j] += eps
            minus[j] -= eps
            out[j] = (f(plus) - f(minus)) / (2 * eps)
        return out

    for i, w in enumerate(before):
        numeric = central(lambda wi, i=i: loss([*before[:i], wi, *before[i + 1:]], x, y), w)
        assert np.allclose(w - ws[i], numeric, atol=1e-7)
    assert np.allclose(grad_x, central(lambda xi: loss(before, xi, y), x), atol=1e-7)


def test_the_attention_crossover_is_where_attention_equals_6n() -> None:
    """Section 3: inference's crossover T = N/(2LHQ) is the training one too, since
    12LHQT = 6N there."""
    t = inference.attention_crossover_tokens(N7, **SHAPE7)
    assert flops.attention_flops_per_token(**SHAPE7, seq_len=round(t)) == pytest.approx(
        flops.flops_per_token(N7), rel=1e-4)


# ---------------------------------------------------------------------------------------
# Published figures behind the lesson's estimates


def test_llama2_7b_estimate_is_within_3_percent_of_the_reported_gpu_hours():
    """Touvron et al. 2023 (Llama 2), Tables 1 and 2: the 7B model, 2.0T tokens, took
    184,320 A100-80GB GPU-hours. 6·N·D at an assumed 40 % MFU of the dense 312 TFLOP/s
    gives about 180,000: the lesson's running example lands within 3 % of the report."""
    n = transformer.param_count(transformer.preset("llama-2-7b"))
    hours = flops.training_time(flops.training_flops(n, 2.0e12), 1,
                                hardware.gpu("A100 80GB").dense("bf16"), 0.40) / 3600
    assert hours == pytest.approx(184_320, rel=0.03)
    assert hours < 184_320  # the report includes what an MFU estimate leaves out


def test_the_mfu_range_holds_every_published_run() -> None:
    """"published runs reach 35–55 %": no published large run the course quotes lies outside
    (MegaScale's 55.2 % on 12,288 GPUs, in lesson 10's table, once did)."""
    text = page(LESSON_NB)
    for lead in ("published runs reach", "Large runs reach"):
        low, high = (int(x) for x in re.search(lead + r" (\d+)–(\d+) %", text).groups())
        mfus = _published_mfus()
        assert low <= round(100 * min(mfus)) and round(100 * max(mfus)) <= high, (
            lead, low, high, sorted(round(100 * m, 1) for m in mfus))




def test_the_rent_is_the_dated_quote_the_prose_names() -> None:
    """Section 6 prices the GPU-hours at a quote of the price table, not an undated guess
    (it once assumed \\$2, below every A100 quote the table holds: \\$2.70 to \\$4.00)."""
    namespace: dict[str, object] = {"prices": prices}
    exec(compile(_code_cell("c040").split("\n")[0], "flops_and_scaling.ipynb:c040", "exec"),
         namespace)
    assert namespace["usd_per_gpu_hour"] == prices.current_quotes("A100 80GB")[0].usd_per_gpu_hour


def test_llama31_405b_reported_hours_mean_about_35_percent_of_peak():
    """Llama 3.1 model card: 30.84M H100 GPU-hours for 405B; Dubey et al. 2024: 3.8e25
    FLOPs. Averaged over the reported hours the GPUs sustained about 35 % of the dense
    989.4 TFLOP/s, below the 38-43 % of steady training (Table 4): exercise 9's solution
    says so, and must keep its figure in that range."""
    ex = BANK.EXERCISES[8]
    assert ex.inputs["total"] == 3.8e25
    assert BANK.REPORTED_LLAMA31_405B_GPU_HOURS == 30.84e6
    at_peak = flops.training_time(3.8e25, 1, hardware.gpu("H100 SXM").dense("bf16"), 1.0)
    average = at_peak / 3600 / 30.84e6
    assert 0.34 < average < 0.36
    assert "34.6%" in ex.solution_text() and "30.84M" in ex.solution_text()


def test_seed_calculator_figures_are_reproduced_only_with_the_sparse_peak():
    """The seed calculator page: GPT-3 (175B, 300B tokens) "1.05 TFLOPS" per token,
    "3.15 × 10²³" in total, "60.6 %" MFU and "3.0 days". 1,024 H100s at the 2:4-sparse
    BF16 peak reproduce the 3.0 days; the dense peak doubles them."""
    assert flops.flops_per_token(175e9) == 1.05e12
    assert flops.training_flops(175e9, 300e9) == 3.15e23
    h100 = hardware.gpu("H100 SXM")
    sparse = flops.training_days(3.15e23, 1024, h100.sparse_flops["bf16"], 0.606)
    dense = flops.training_days(3.15e23, 1024, h100.dense("bf16"), 0.606)
    assert round(sparse, 1) == 3.0
    assert dense == pytest.approx(2 * sparse, rel=1e-3)


# ---------------------------------------------------------------------------------------
# The code exercise, answered the way learners answer it


def test_code_reference_reproduces_palm_mfu():
    """Chowdhery et al. 2022 (PaLM), appendix B: 540.35B parameters, L=118, H=48, Q=256,
    T=2048, 238.3K tokens/s on 6,144 TPU v4 chips of 275 TFLOP/s: 46.2 % MFU."""
    per_token = BANK.EXERCISES[6].reference(n_params=540.35e9, layers=118, heads=48,
                                            head_dim=256, seq_len=2048)
    assert round(100 * flops.mfu(238.3e3, per_token, 6144, 275e12), 1) == 46.2


def _learner(body):
    def flops_per_token(n_params, layers, heads, head_dim, seq_len):
        return body(n_params, layers * heads * head_dim * seq_len)
    return flops_per_token


@pytest.mark.parametrize(("body", "mistake"), [
    (lambda n, lhqt: 6 * n, "no_attention"),
    (lambda n, lhqt: 2 * n + 4 * lhqt, "forward_only"),
    (lambda n, lhqt: 6 * n + 4 * lhqt, "attention_forward_only"),
    (lambda n, lhqt: 3 * n + 6 * lhqt, "counted_macs"),
])
def test_code_exercise_names_each_learner_mistake(body, mistake):
    feedback = BANK.EXERCISES[6].check(_learner(body))
    assert feedback.status == "mistake" and feedback.mistake == mistake


def test_code_exercise_accepts_a_correct_learner_function_and_rejects_a_stub():
    assert BANK.EXERCISES[6].check(_learner(lambda n, lhqt: 6 * n + 12 * lhqt)).correct
    stub = BANK.EXERCISES[6].check(lambda n_params, layers, heads, head_dim, seq_len: None)
    assert not stub.correct and "return" in stub.message


# ---------------------------------------------------------------------------------------
# Wiring of the two notebooks


def test_exercise_notebook_shows_every_exercise_once_in_order():
    sources = nb.check_exercise_notebook(SLUG)
    assert any("lesson.reveal(10, measured)" in s for s in sources)


def test_lesson_notebook_skeleton():
    text = nb.check_skeleton(SLUG, "FLOPs, MFU and Scaling Laws")
    nb.check_pauses_hide_answers(text, at_least=1)
    nb.check_registry_widgets(SLUG, {"training_flops"})


def test_lesson_notebook_hides_no_asserts():
    """The lesson's checks are the claims above and the tests of this file; what a learner
    should see checked is printed by a visible cell."""
    assert not any("assert" in src for src in nb.code(LESSON_NB, hidden=True))


@pytest.mark.parametrize("path", [LESSON_NB, EXERCISE_NB], ids=["lesson", "exercises"])
def test_cited_keys_and_glossary_terms_exist(path: Path):
    text = nb.markdown(path)
    nb.check_citations_in_bibliography(text)
    nb.check_terms_in_glossary(text)


def test_moe_exercise_counts_the_active_parameters():
    """DeepSeek-AI 2024 (DeepSeek-V3, section 1): 37B activated of 671B; its 14.8T tokens
    cost 6 x 37.6B x 14.8T (input embedding included, attention aside), and counting all
    671B is the declared mistake."""
    ex = next(e for e in BANK.EXERCISES if e.number == 12)
    assert ex.answer_value() == pytest.approx(6 * transformer.active_params(V3) * V3_TOKENS)
    assert round(transformer.active_params(V3) / 1e9) in (37, 38)
    wrong = flops.training_flops(transformer.param_count(V3), V3_TOKENS)
    assert ex.check(f"{wrong:.3e} FLOP").mistake == "total_for_flops"


# ---------------------------------------------------------------------------------------
# Going further: Chinchilla's fits (Hoffmann et al. 2022, Tables 2-3 and approach 3;
# Besiroglu et al. 2024's refit)


def _table3_exponent() -> float:
    table = flops.CHINCHILLA_TABLE_3
    return flops.power_law_fit([r[1] for r in table], [r[0] for r in table])[0]


def _worst_left_out_error() -> float:
    table = flops.CHINCHILLA_TABLE_3
    worst = 0.0
    for i, (n, c, _) in enumerate(table):
        rest = [r for j, r in enumerate(table) if j != i]
        p, k = flops.power_law_fit([r[1] for r in rest], [r[0] for r in rest])
        worst = max(worst, abs(k * c ** p / n - 1))
    return worst


def _optimum(fit: str) -> flops.ChinchillaPoint:
    return flops.chinchilla_loss_optimal(5.76e23, fit=fit)


GOING_FURTHER = claims(
    lambda: "grows the parameters as "
     f"$C^{{{_table3_exponent():.2f}}}$",
    lambda: f"within {math.ceil(100 * _worst_left_out_error()):.0f} %",
    lambda: "($\\alpha$ = "
     f"{flops.CHINCHILLA_FITS['hoffmann'].alpha:.2f}, $\\beta$ = "
     f"{flops.CHINCHILLA_FITS['hoffmann'].beta:.2f})",
    lambda: f"the optimum at {_optimum('hoffmann').params / 1e9:.0f}B parameters, the same "
     f"fit before rounding at {_optimum('hoffmann_unrounded').params / 1e9:.0f}B",
    lambda: f"at {_optimum('besiroglu').params / 1e9:.0f}B on "
     f"{_optimum('besiroglu').tokens / 1e12:.2f}T\ntokens",
)
# test_every_figure_is_claimed counts these texts as covered; test_going_further_claim
# checks them
NOT_FIGURES += tuple(c.text for c in GOING_FURTHER)


test_going_further_claim = claim_test(GOING_FURTHER, page(LESSON_NB), LESSON_NB.name)


def test_sparse_peak_variants_quote_model_flops_as_the_lesson_counts_them():
    """Exercise 6 says "of model FLOPs". Megatron-LM's A100 rates (Narayanan et al. 2021:
    137, 140 and 163 TFLOP/s) count the recomputed forward pass (their equation 3), so each
    A100 variant must quote three quarters of one, and its key must be the MFU the lesson
    gives for the 1T run (39 %, not the 52 % HFU); H100 variants quote Llama 3's model
    FLOP/s (Table 4)."""
    ex = BANK.EXERCISES[5]
    needed = (flops.megatron_flops_per_iteration(batch=3072, seq_len=2048, layers=128,
                                                 hidden=25600, vocab=51200, recompute=False)
              / flops.megatron_flops_per_iteration(batch=3072, seq_len=2048, layers=128,
                                                   hidden=25600, vocab=51200, recompute=True))
    megatron = {137e12, 140e12, MEGATRON_1T_RATE, GPT3_MEGATRON_RATE}
    seen = set()
    for seed in range(300):
        v = ex.variant(seed)
        gpu, achieved = v.inputs["gpu"], v.inputs["achieved"]
        seen.add(gpu)
        if gpu == "A100 80GB":
            assert any(achieved == pytest.approx(r * needed, rel=1e-3) for r in megatron), v
            if achieved == pytest.approx(MEGATRON_1T_RATE * needed, rel=1e-3):
                assert pct(v.answer_value()) == pct(flops.utilization(
                    MEGATRON_1T_RATE * needed, A100_PEAK)) == "39 %"
        else:
            assert achieved in LLAMA3_RATES, v
        assert v.answer_value() < 0.45, v
    assert seen == {"A100 80GB", "H100 SXM"}


def test_moe_variants_state_the_active_count_their_key_uses():
    """OpenAI 2025 (gpt-oss model card, Table 1): gpt-oss-120b has 5.13B active parameters,
    the input embedding left out; ``active_params`` counts it, 5.71B, 11 % more. Every
    variant of exercise 12 must state the count its key uses, and an answer from the card's
    count must be told why it differs, not marked merely wrong."""
    ex = BANK.EXERCISES[11]
    models = set()
    for seed in range(300):
        v = ex.variant(seed)
        cfg = transformer.preset(v.inputs["model"])
        models.add(v.inputs["model"])
        active = transformer.active_params(cfg)
        assert f"{active / 1e9:.3g}B" in v.question_text(), v.question_text()
        assert v.answer_value() == pytest.approx(6 * active * v.inputs["tokens"])
        card = 6 * transformer.active_params(cfg, input_embedding=False) * v.inputs["tokens"]
        feedback = v.check(card)
        if abs(card / v.answer_value() - 1) > ex.rtol:
            assert not feedback.correct and "input embedding" in feedback.message
    assert "gpt-oss-120b" in models
    gpt_oss = transformer.preset("gpt-oss-120b")
    assert round(transformer.active_params(gpt_oss, input_embedding=False) / 1e9, 2) == 5.13
