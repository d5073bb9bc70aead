"""Lesson 4, *Memory: What Fits* (``notebooks/memory_what_fits.ipynb``): the promises its
page and its exercises make, checked without running the notebook (nbval runs it).

* the skeleton of the house style, the collapsed "Pause and think" answers, the two
  calculators of the lesson, glossary terms and citations that exist;
* every figure of the prose is a claim: the sentence as the page has it, rebuilt here from
  the calculators (``CLAIMS``), or a number that is not a result (``NOT_FIGURES``: the
  earlier page's figures as it printed them, the lesson's chosen inputs, published formula
  constants, names);
* the counts and corrections the lesson teaches reproduce their published sources: the
  parameter counts of GPT-2 and Llama checkpoints, 16 bytes per parameter for Adam in
  mixed precision and in FP32 (ZeRO, section 3.1), Korthikanti et al.'s attention term for
  GPT-3;
* the exercise bank has the kinds and the common mistakes the lesson promises, and its
  model solutions give the published counts.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

import numpy as np
import pytest

from gpulesson import (
    calculators,
    flops,
    hardware,
    inference,
    memory,
    optimisations,
    precision,
    transformer,
    units,
)
from gpulesson.activations import activation_tensors, layer_activation_bytes
from gpulesson.exercises import lesson_module
from gpulesson.precision import float_format

from . import nbtools as nb
from .claims import claim_tests, claims
from .reference import GPT3, H100, L27, L38, L370, N7, gb

SLUG = "memory_what_fits"
NOTEBOOK = nb.notebook(SLUG)

GPU_MEMORY = H100.memory_bytes  # the team's 80 GB GPUs
GPT2 = transformer.preset("gpt2")
N70 = transformer.param_count(L370)

#: Exact parameter counts of the published checkpoints (PyTorch's count of the Hugging Face
#: weights; each model card's config.json gives the shape): GPT-2 (Radford et al. 2019),
#: Llama 2 (Touvron et al. 2023), Llama 3 (Dubey et al. 2024), Mistral 7B.
PUBLISHED = {
    "gpt2": 124_439_808,
    "gpt2-medium": 354_823_168,
    "gpt2-large": 774_030_080,
    "gpt2-xl": 1_557_611_200,
    "llama-2-7b": 6_738_415_616,
    "llama-2-13b": 13_015_864_320,
    "llama-2-70b": 68_976_648_192,
    "llama-3-8b": 8_030_261_248,
    "llama-3-70b": 70_553_706_496,
    "mistral-7b": 7_241_732_096,
}

# The lesson's chosen inputs.
SMALL_GPT = transformer.TransformerConfig(hidden=256, layers=4, heads=8, vocab=8192,
                                          max_positions=512)  # section 2's model
UPDATE, UPDATES = 1e-4, 1000  # section 5's thousand small updates
SEED_PARTS = (39.0e6, 84.9e6, 56.6e6)  # the earlier page's GPT-2 parts, as printed there
WORDS = {2: "two", 6: "six", 8: "eight", 10: "Ten"}


def _comma(n: int) -> str:
    """An integer as the maths of the page writes it: ``6{,}738{,}415{,}616``."""
    return f"{n:,}".replace(",", "{,}")


# ---------------------------------------------------------------------------------------
# The calculators' numbers, as the lesson's cells ask for them


def _activations(cfg: transformer.TransformerConfig, seq_len: int, *, batch: int = 1,
                 **kw) -> float:
    """All layers' activations of one micro-batch (the lesson's ``activations()``)."""
    return memory.training_memory(cfg, batch=batch, seq_len=seq_len, **kw).activations


def _per_layer(cfg: transformer.TransformerConfig, seq_len: int, **kw) -> int:
    return memory.activation_bytes_per_layer(seq_len=seq_len, batch=1, hidden=cfg.hidden,
                                             heads=cfg.heads, **kw)


def _gpt_formula(cfg: transformer.TransformerConfig, seq_len: int, **kw) -> int:
    """All layers counted as GPT blocks (the lesson's ``activations()``)."""
    return cfg.layers * _per_layer(cfg, seq_len, **kw)


def _llama_coefficients() -> dict[str, float]:
    """The constants of the Llama derivation, sbh(12 + 4 n_kv/a + 6f/h) + 4asb, read off
    ``activation_tensors`` of Llama-2-7B (the calculators' per-tensor list)."""
    s, b, cfg = 4096, 1, L27
    t = activation_tensors(cfg, seq_len=s, batch=b)
    f_part = sum(t[k] for k in t if k.startswith("MLP") and k != "MLP input")
    kv_part = t["K"] + t["V"]
    rest = sum(t.values()) - f_part - kv_part - t["softmax statistics"]
    return {"const": rest / (s * b * cfg.hidden), "kv": kv_part / (s * b * cfg.kv_dim),
            "f": f_part / (s * b * cfg.ffn),
            "stats": t["softmax statistics"] / (cfg.heads * s * b)}


def _l7_flash(seq_len: int = 4096, **kw) -> float:
    return _activations(L27, seq_len, **kw)


def _per_sbh(cfg: transformer.TransformerConfig = GPT3, seq_len: int = 2048, **kw) -> float:
    """Activation bytes per layer per s·b·h: Korthikanti et al.'s coefficients."""
    return _per_layer(cfg, seq_len, **kw) / (seq_len * cfg.hidden)


def _score_term(cfg: transformer.TransformerConfig, seq_len: int) -> float:
    """The attention scores' share, 5as/h: what selective recomputation drops."""
    return _per_sbh(cfg, seq_len) - _per_sbh(cfg, seq_len, recompute="selective")


def _score_coefficient() -> float:
    """The 5 of 5as/h."""
    return _score_term(GPT3, 2048) / (GPT3.heads * 2048 / GPT3.hidden)


def _kept() -> int:
    """The 34 of sbh(34 + 5as/h)."""
    return round(_per_sbh(recompute="selective"))


def _split_by_tp() -> tuple[int, int]:
    """Of the 34, the part tensor parallelism divides by t and the part it leaves."""
    split = round(2 * (_per_sbh(recompute="selective")
                       - _per_sbh(recompute="selective", tp=2)))
    return split, _kept() - split


def _seed_activation_formula(b: int, s: int, h: int, layers: int, p: float = 1) -> float:
    """The earlier page's formula as printed, B·S·H·L·(16 + 2/p) bytes (p undefined there)."""
    return b * s * h * layers * (16 + 2 / p)


def _unfused_llama(seq_len: int = 4096) -> tuple[float, float, float]:
    """Llama-2-7B's activations with fused SwiGLU and RMSNorm (the derivation), with SiLU's
    output kept as well (an unfused MLP: a fourth s*b*f tensor) and, on top, Hugging Face's
    LlamaRMSNorm (an FP32 copy of the input, the BF16 normalised values and an FP32 rsqrt
    per token, 6sbh + 4sb, against the 2sbh input the derivation counts). The audit
    measured the same with torch's saved-tensor hooks: 17.26, 20.15 and 24.45 GB."""
    s, h, f, layers = seq_len, L27.hidden, L27.ffn, L27.layers
    fused = _l7_flash(seq_len)
    silu = fused + layers * 2 * s * f
    norms = silu + layers * 2 * ((6 * s * h + 4 * s) - 2 * s * h)
    return fused, silu, norms


def _state(cfg_or_params, **kw) -> float:
    """Weights, gradients and optimizer state: everything but the activations."""
    m = memory.training_memory(cfg_or_params, batch=1, seq_len=1, **kw)
    return m.weights + m.gradients + m.optimizer


def _parts(precision: str) -> memory.ModelStateBytes:
    return memory.model_state_bytes(precision, "adam")


def _optimizer_in_fp32_words(precision: str) -> str:
    """Adam's optimizer bytes as FP32 words: (4 + 4 + 4) with a master copy, (4 + 4)
    without."""
    words, rest = divmod(_parts(precision).optimizer, memory.precision_bytes("fp32"))
    assert rest == 0
    return " + ".join([f"{memory.precision_bytes('fp32'):g}"] * int(words))


def _mlp_share_words() -> str:
    """The MLPs' share of the parameters of the large models of section 3's figure."""
    shares = []
    for name in ("llama-2-7b", "gpt3-175b", "llama-3-70b", "llama-3.1-405b"):
        parts = transformer.param_breakdown(transformer.preset(name))
        shares.append(parts["mlp"] / sum(parts.values()))
    return {True: "two thirds to four fifths"}[0.64 < min(shares) and max(shares) < 0.82]


def _untied() -> int:
    """GPT-2 small with an output layer of its own."""
    return transformer.param_count(replace(GPT2, tied_embeddings=False))


def _selective_overhead() -> float:
    """Extra FLOPs of selective recomputation, Llama-2-7B at 4,096 tokens."""
    return optimisations.recompute_overhead(recompute="selective", n_params=N7,
                                            layers=L27.layers, heads=L27.heads,
                                            head_dim=L27.head_dim, seq_len=4096)


def _flash_overhead() -> float:
    """Extra FLOPs of FlashAttention's backward pass, Llama-2-7B at 4,096 tokens: it
    recomputes S = QK^T (Dao et al. 2022, Algorithm 4, line 11: one 2*s^2*h product per
    layer, 2LHQT per token), where selective recomputation (Korthikanti et al. 2022) also
    redoes P V: 4LHQT. Over the model FLOPs 6N + 12LHQT, half of selective's overhead."""
    attention = flops.flops_per_token(N7, layers=L27.layers, heads=L27.heads,
                                      head_dim=L27.head_dim, seq_len=4096) - 6 * N7
    return (attention / 6) / (6 * N7 + attention)


def _breakdown_change() -> dict[str, int]:
    a = transformer.param_breakdown(L27)
    b = transformer.param_breakdown(L38)
    return {"vocab": b["embedding"] + b["lm_head"] - a["embedding"] - a["lm_head"],
            "mlp": b["mlp"] - a["mlp"], "attention": a["attention"] - b["attention"],
            "net": sum(b.values()) - sum(a.values())}


def _moe(name: str) -> tuple[transformer.TransformerConfig, int, int]:
    cfg = transformer.preset(name)
    return cfg, transformer.param_count(cfg), transformer.active_params(cfg)


def _routed_share(name: str) -> float:
    cfg, total, _ = _moe(name)
    return transformer.moe_breakdown(cfg)["routed_experts"] / total


def _gpt_oss_checkpoint() -> float:
    """gpt-oss-120b as shipped (its experts' matrices in MXFP4, their biases and the rest
    in BF16), as the will-it-fit calculator and the serving planner price it."""
    return calculators.compute("will_it_fit", model="gpt-oss-120b",
                               precision="mxfp4_experts")["weights"]


def _state_gpus(name: str) -> int:
    return memory.gpus_needed(_state(L370), hardware.gpu(name).usable_memory())


def _fp8_70b() -> tuple[float, float]:
    weights = memory.weight_bytes(N70, precision="fp8")
    return weights, memory.headroom(weights, GPU_MEMORY)


def _tp8_sp(cfg: transformer.TransformerConfig, **kw) -> float:
    return _activations(cfg, 4096, tp=8, sequence_parallel=True, recompute="selective", **kw)


def _micro_batch_of_four(recompute: str) -> memory.MemoryBreakdown:
    return memory.training_memory(L27, batch=4, seq_len=4096, recompute=recompute,
                                  memory_per_gpu=GPU_MEMORY)


def _gpus_each_keeping_its_batch(recompute: str) -> int:
    m = _micro_batch_of_four(recompute)
    return memory.gpus_needed(m.weights + m.gradients + m.optimizer,
                              GPU_MEMORY - m.activations)


def _bits(name: str) -> str:
    return f"{8 * memory.precision_bytes(name):.2f}"


def _groupwise() -> str:
    bits = precision.groupwise_bits_per_weight(4, 128, scale_bits=16, zero_point_bits=4)
    assert f"{bits:.2f}" == _bits("int4_g128")  # the table and the formula agree
    return ("keep a 16-bit scale and a 4-bit zero point for every group of 128 weights: "
            f"{bits:.2f} bits a weight")


CLAIMS = claims(
    # The promise and the running example.
    lambda: f"{memory.bytes_per_param('mixed', 'adam')} bytes per "
     "parameter",
    lambda: f"{gb(GPU_MEMORY, 0)} GPU",
    lambda: f"A team rents GPUs with {gb(GPU_MEMORY, 0)} of memory each ({H100.name}, the "
     "course's teaching baseline" if H100.name == hardware.TEACHING_BASELINE else "?",
    lambda: f"$sbh({_kept()} + {_score_coefficient():.0f}as/h)$",
    # 1. GPT-2's parameters.
    lambda: f"($V = {_comma(GPT2.vocab)}$, $P = {_comma(GPT2.max_positions)}$, "
     f"$d = {GPT2.hidden}$, $L = {GPT2.layers}$)",
    lambda: "Exactly "
     f"{transformer.param_count(GPT2):,}, the count PyTorch reports",
    lambda: f"{GPT2.layers * 12 * GPT2.hidden**2 / 1e6:.1f}M is "
     "$L\\cdot12d^2$",
    lambda: "its three parts add up to "
     f"{sum(SEED_PARTS) / 1e6:.1f}M",
    lambda: f"{_untied():,}: another "
     f"$V\\cdot d = {_comma(_untied() - transformer.param_count(GPT2))}$ parameters",
    # 3. Llama.
    lambda: f"Llama-2-7B is {L27.hidden:,} wide and {L27.layers} blocks deep. Where do its "
     f"{N7 / 1e9:.1f} billion parameters sit?",
    lambda: f"with $f = {_comma(L27.ffn)}$ for "
     "Llama-2-7B",
    lambda: f"Llama-3-8B has the same width ({L38.hidden:,}) and depth ({L38.layers} blocks) "
     "as Llama-2-7B, yet "
     f"{(transformer.param_count(L38) - N7) / 1e9:.2f} billion more parameters"
     if (L38.hidden, L38.layers) == (L27.hidden, L27.layers) else "?",
    lambda: (lambda c: f"The vocabulary grew from {L27.vocab:,} to {L38.vocab:,} tokens, "
             f"which adds {c['vocab'] / 1e6:.1f}M to the embedding and output matrices "
             f"together. The MLP widened from {L27.ffn:,} to {L38.ffn:,}, adding "
             f"{c['mlp'] / 1e9:.2f}B. Grouped-query attention with {L38.kv_heads} key/value"
             f" heads instead of {L27.kv_heads} removes {c['attention'] / 1e6:.1f}M from "
             f"the $K$ and $V$ projections. Net: +{c['net']:,}")(_breakdown_change()),
    lambda: _mlp_share_words() + " in the MLPs",
    # 3b. Mixture of experts.
    lambda: (lambda c, n, a: f"Mixtral 8x7B holds {n / 1e9:.1f}B parameters, "
             f"{gb(memory.weight_bytes(n))} in BF16, "
             + ("more" if not memory.fits(memory.weight_bytes(n), GPU_MEMORY) else "less")
             + f" than one {gb(GPU_MEMORY, 0)} GPU, though each token uses {a / 1e9:.1f}B "
             "of them")(*_moe("mixtral-8x7b")),
    # DeepSeek released V3 in FP8 (deepseek-ai/DeepSeek-V3 on Hugging Face, December 2024:
    # "FP8 weights"); eight H200s (141 GB each) or B200s (180 GB) per server
    lambda: (lambda n, w: "DeepSeek-V3's weights in FP8, one byte a parameter: "
             f"{gb(w)}, within one server of eight H200s "
             f"({8 * hardware.gpu('H200').memory_bytes / 1e9:,.0f} GB) or eight B200s "
             f"({8 * hardware.gpu('B200').memory_bytes / 1e9:,.0f} GB)"
             if w < 8 * hardware.gpu("H200").memory_bytes else "does not fit")(
        *(lambda n: (n, memory.weight_bytes(n, precision="fp8")))(
            transformer.param_count(transformer.preset("deepseek-v3")))),
    lambda: (lambda c: f"DeepSeek-V3 has {c.dense_layers} dense layers and {c.moe_layers} "
             f"mixture-of-experts layers of {c.experts} routed experts "
             f"({c.experts_per_token} per token) and "
             + {1: "one"}[c.shared_experts] + " shared expert")(
                 transformer.preset("deepseek-v3")),
    lambda: "routed experts hold "
     f"{100 * _routed_share('deepseek-v3'):.1f} % of the "
     f"{_moe('deepseek-v3')[1] / 1e9:.1f}B",
    lambda: "fits that count ("
     f"{transformer.active_params(_moe('deepseek-v3')[0], input_embedding=False) / 1e9:.1f}B; "
     f"with the embedding, {_moe('deepseek-v3')[2] / 1e9:.1f}B)",
    lambda: f"gpt-oss-120b keeps {100 * _routed_share('gpt-oss-120b'):.1f} % of its "
     "parameters in its experts and ships their matrices in MXFP4, "
     f"{8 * memory.precision_bytes('mxfp4'):g} bits with the block scales",
    lambda: "its checkpoint comes to "
     f"{units.format_bytes(_gpt_oss_checkpoint(), binary=True, digits=2)}",
    lambda: ("fits" if memory.fits(_gpt_oss_checkpoint(), GPU_MEMORY) else "does not fit")
     + f" on one {gb(GPU_MEMORY, 0)} GPU where BF16 would need "
     f"{gb(memory.weight_bytes(_moe('gpt-oss-120b')[1]))}",
    # 4. Bytes to serve.
    lambda: f"${_comma(N7)} \\times {memory.precision_bytes('bf16'):g}$ bytes $= "
     f"{memory.weight_bytes(N7) / 1e9:.2f}$ GB in BF16. The same bytes are "
     f"{units.format_bytes(memory.weight_bytes(N7), binary=True, digits=2).split()[0]} "
     "**GiB**",
    lambda: f"bandwidths are decimal (an H100's {H100.bandwidth / 1e12:.2f} TB/s is "
     f"${H100.bandwidth / 1e12:.2f}\\times10^{{12}}$ bytes a second)",
    # Datasheet "80 GB" of HBM is 80 GiB of chips: the A100 80GB's driver reports exactly
    # 80 GiB, the H100's a little less (gpus.json, reported_memory, from nvidia-smi).
    lambda: (lambda a100: f'a datasheet\'s "{GPU_MEMORY / 1e9:.0f} GB" of HBM is in practice '
             f"{a100.reported_memory_bytes / 2**30:.0f} GiB"
             if a100.memory_bytes == GPU_MEMORY and a100.reported_memory_bytes == 80 * 2**30
             else "?")(hardware.gpu("A100 80GB")),
    lambda: (lambda a100: "The driver reports exactly "
             f"{a100.reported_memory_bytes / 2**20:,.0f} MiB, "
             f"{a100.reported_memory_bytes / 2**30:g} GiB, for an A100 80GB; "
             f"{H100.reported_memory_bytes / 2**20:,.0f} MiB ({gb(H100.reported_memory_bytes)})"
             " for an H100, a little "
             + ("less" if H100.reported_memory_bytes < a100.reported_memory_bytes else "more"))(
                 hardware.gpu("A100 80GB")),
    lambda: "This lesson takes the datasheet's figure as "
     f"${GPU_MEMORY / 1e9:.0f}\\times10^9$ bytes",
    lambda: "$2^{30}$ bytes to a GiB, "
     f"{100 * (units.parse_quantity('1 GiB', 'bytes') / 1e9 - 1):.1f} % more",
    lambda: "In FP8, Llama-3-70B's weights "
     + ("fit" if memory.fits(_fp8_70b()[0], GPU_MEMORY) else "do not fit")
     + f" on one {gb(GPU_MEMORY, 0)} GPU",
    lambda: f"The weights take {gb(_fp8_70b()[0])} and leave {gb(_fp8_70b()[1])} for the "
     "KV cache",
    lambda: "Llama-3-70B's BF16 KV cache takes "
     f"{inference.kv_cache_bytes_per_token(L370):,} bytes per token",
    lambda: f"so {gb(_fp8_70b()[1])} hold about "
     f"{round(_fp8_70b()[1] / inference.kv_cache_bytes_per_token(L370), -2):,.0f} tokens",
    # 5. Bytes to train.
    lambda: f"That is ${_parts('mixed').weights} + {_parts('mixed').gradients} + "
     f"({_optimizer_in_fp32_words('mixed')}) = {_parts('mixed').total}$ bytes per parameter, "
     f"the accounting of the ZeRO paper (§3.1), which calls the last three $K = "
     f"{_parts('mixed').optimizer}$",
    lambda: f"${_parts('fp32').weights} + {_parts('fp32').gradients} + "
     f"({_optimizer_in_fp32_words('fp32')}) = {_parts('fp32').total}$ as well. Frameworks "
     "that keep FP32 gradients with BF16 weights need "
     f"{memory.bytes_per_param('mixed_fp32_grads', 'adam')}",
    lambda: f"Llama-2-7B: ${N7 / 1e9:.2f}\\times10^9 \\times "
     f"{memory.bytes_per_param('mixed', 'adam')}$ bytes $= {_state(L27) / 1e9:.1f}$ GB of "
     "model state before a single activation is stored: "
     + ("more than" if not memory.fits(_state(L27), GPU_MEMORY) else "less than")
     + f" one {gb(GPU_MEMORY, 0)} GPU holds",
    lambda: (lambda f: f"FP16 has {f.fraction_bits} fraction bits, so next to 1.0 the "
             f"next number up is $1 + 2^{{-{f.fraction_bits}}} \\approx "
             f"{1 + f.epsilon:.3f}$")(float_format("fp16")),
    lambda: "the FP32 copy moves by "
     f"{UPDATES * UPDATE:g} as it should",
    lambda: "With Adam both need "
     + {1: str(memory.bytes_per_param("mixed", "adam"))}[
        len({memory.bytes_per_param(p, "adam") for p in ("mixed", "fp32")})],
    lambda: WORDS[round(memory.precision_bytes("bf16") + 2 * memory.precision_bytes("fp32"))]
     + " is what 16-bit weights and Adam's two FP32 moments make on their own",
    lambda: "the wrong figure "
     + ("fits" if memory.fits(10 * N7, GPU_MEMORY) else "does not fit")
     + f" Llama-2-7B on one {gb(GPU_MEMORY, 0)} GPU, and the right one "
     + ("does not" if not memory.fits(_state(L27), GPU_MEMORY) else "does too"),
    # 6. Measured: the training state of a small model.
    lambda: f"For the small GPT-2 of section 2 ({transformer.param_count(SMALL_GPT):,} "
     "parameters)",
    lambda: "in both precisions: "
     + {1: str(memory.bytes_per_param("mixed"))}[
        len({memory.bytes_per_param(p) for p in ("mixed", "fp32")})]
     + " per parameter either way",
    # 7. Activations.
    lambda: f"s\\,b\\,h\\left({_kept()} + {_score_coefficient():.0f}\\,\\frac{{a\\,s}}{{h}}"
     "\\right)",
    lambda: f"The {_kept()} collects the "
     "$sbh$-sized tensors",
    lambda: f"at 4,096 tokens ($a = {L27.heads}$, $h = {_comma(L27.hidden)}$) $5as/h = "
     f"{_score_term(L27, 4096):.0f}$, almost five times the {_kept()}, and each layer would "
     f"keep {gb(_per_layer(L27, 4096), 2)}; {L27.layers} layers would keep "
     f"{gb(_gpt_formula(L27, 4096))}",
    lambda: "For GPT-3 at 2,048 tokens, one sequence per micro-batch, the attention term is "
     f"{_score_term(GPT3, 2048):.0f} and one sequence keeps {gb(_activations(GPT3, 2048))} "
     f"across {GPT3.layers} layers",
    lambda: (lambda c: f"s\\,b\\,h\\left({c['const']:.0f} + \\frac{{{c['kv']:.0f}\\,"
             f"n_\\text{{kv}}}}{{a}} + \\frac{{{c['f']:.0f}f}}{{h}}\\right) + "
             f"{c['stats']:.0f}\\,a\\,s\\,b")(_llama_coefficients()),
    lambda: f"the derivation keeps {gb(layer_activation_bytes(L27, seq_len=4096))} per "
     f"layer, {gb(_l7_flash())} for {L27.layers} layers, where the GPT formula says "
     f"{gb(_gpt_formula(L27, 4096))}: "
     + WORDS[round(_gpt_formula(L27, 4096) / _l7_flash())] + " times less",
    lambda: (lambda fused, silu, hf: "An unfused MLP keeps a "
             + {6: "sixth"}[round(fused / (silu - fused))] + " more, and Hugging Face's "
             f"stock Llama {100 * (hf / fused - 1):.0f} % more")(*_unfused_llama()),
    lambda: "normalised values cast back to BF16 and one FP32 $1/\\text{rms}$ per token: "
     "$6sbh + 4sb$ bytes where the derivation counts a $2sbh$ input"
     if memory.precision_bytes("fp32") == 4 and memory.precision_bytes("bf16") == 2 else "?",
    lambda: f"the {_kept()} of the published count. With $p = 1$ it gives "
     f"{_seed_activation_formula(1, 1, 1, 1):.0f} bytes per $sbh$",
    lambda: "The page's formula is about "
     + WORDS[round(_activations(GPT3, 2048)
                  / _seed_activation_formula(1, 2048, GPT3.hidden, GPT3.layers))]
     + " times too low for GPT-3 without recomputation, and it misses the quadratic growth "
     "entirely: for Llama-2-7B at 32,768 tokens it is "
     f"{_gpt_formula(L27, 32768) / _seed_activation_formula(1, 32768, L27.hidden, L27.layers):.0f}"
     " times below the GPT count. Even against FlashAttention, which has no $s^2$ term "
     "either, it is "
     f"{_l7_flash(32768) / _seed_activation_formula(1, 32768, L27.hidden, L27.layers):.1f}"
     " times too low",
    # 8. Recomputation, tensor and sequence parallelism.
    lambda: f"What stays is ${_kept()}\\,sbh$",
    lambda: f"{_split_by_tp()[0]} of the {_kept()} and the whole score term are divided by "
     f"$t$. The other {_split_by_tp()[1]}",
    lambda: f"$sbh\\,({_split_by_tp()[1]} + "
     f"{_split_by_tp()[0]}/t + {_score_coefficient():.0f}as/(ht))$",
    lambda: f"$sbh\\,({_kept()}/t + "
     f"{_score_coefficient():.0f}as/(ht))$",
    lambda: f"$sbh\\,({_split_by_tp()[1]} + "
     f"{_split_by_tp()[0]}/t)$ or ${_kept()}\\,sbh/t$",
    lambda: f"all {L370.layers} layers",
    lambda: "With eager attention one sequence of Llama-3-70B keeps "
     f"{gb(_activations(L370, 4096, attention='eager'))} of activations. FlashAttention "
     f"brings it to {gb(_activations(L370, 4096))}, still "
     + ("more" if _activations(L370, 4096) > GPU_MEMORY else "less")
     + " than a GPU holds; spread over 8 GPUs with tensor and sequence parallelism it is "
     f"{gb(_tp8_sp(L370))} each",
    lambda: f"The model state is flat at {gb(_state(L27))}. With eager attention the "
     "activations reach "
     + {True: "nearly half"}[0.4 < _l7_flash(attention="eager") / _state(L27) < 0.5]
     + f" of it at 4,096 tokens ({gb(_l7_flash(attention='eager'))}) and at 8,192 tokens "
     f"{gb(_l7_flash(8192, attention='eager'))}, "
     f"{_l7_flash(8192, attention='eager') / _state(L27):.1f} times the model state and "
     f"{_l7_flash(8192, attention='eager') / _l7_flash(attention='eager'):.1f} times the "
     "4,096-token figure: twice the tokens, "
     + {True: "more than three times"}[3 < _l7_flash(8192, attention="eager")
                                       / _l7_flash(attention="eager") < 4]
     + " the bytes",
    lambda: f"{gb(_l7_flash())} at 4,096 tokens, {gb(_l7_flash(32768))} at 32,768",
    lambda: f"from {gb(_l7_flash(batch=2, attention='eager'))} to "
     f"{gb(_l7_flash(attention='eager'))} at 4,096 tokens. FlashAttention at 2 sequences "
     f"brings them to {gb(_l7_flash(batch=2))}, better than halving the batch; it recomputes "
     "the scores $QK^\\top$ in the backward pass, about "
     f"{100 * _flash_overhead():.1f} % more FLOPs (half the "
     f"{100 * _selective_overhead():.1f} % of selective recomputation",
    lambda: f"Both together: {gb(_l7_flash())}. Neither fixes the {gb(_state(L27))} of "
     "model state",
    # 9. How many 80 GB GPUs?
    lambda: "Training needs "
     + WORDS[round(memory.bytes_per_param() / memory.precision_bytes("bf16"))]
     + f" times the memory of serving, {memory.bytes_per_param()} bytes per parameter against"
     f" the {memory.precision_bytes('bf16'):g} of BF16 weights",
    lambda: "serves from one GPU with "
     f"{gb(memory.headroom(memory.weight_bytes(N7), GPU_MEMORY))} to spare for the KV "
     "cache, and trains on no fewer than "
     + str(memory.training_memory(L27, batch=1, seq_len=4096, recompute="selective",
                                 memory_per_gpu=GPU_MEMORY).gpus_needed)
     + f": {gb(_state(L27))} of state plus "
     f"{gb(_activations(L27, 4096, recompute='selective'))} of activations",
    lambda: f"has {gb(_state(L370), 2)} of model state: at least "
     f"{memory.gpus_needed(_state(L370), GPU_MEMORY)} GPUs before activations. And one "
     "4,096-token sequence keeps "
     f"{gb(_activations(L370, 4096, recompute='selective'))} of activations even with "
     "FlashAttention",
    lambda: f"over 8 GPUs each keeps {gb(_tp8_sp(L370))}, and "
     f"{gb(GPU_MEMORY - _tp8_sp(L370))} remain on each for its share of the state. That "
     f"makes at least {memory.gpus_needed(_state(L370), GPU_MEMORY - _tp8_sp(L370))} GPUs",
    lambda: f"A framework plans with about {100 * hardware.USABLE_MEMORY_FRACTION:.0f} % of "
     "what the driver reports",
    lambda: f"the same {gb(_state(L370), 2)} of Llama-3-70B state needs "
     f"{_state_gpus('H100 SXM')} H100s against {_state_gpus('B300')} B300s\nand "
     + {1: str(_state_gpus("GB300 NVL72"))}[len({_state_gpus(g) for g in ("GB300 NVL72",
                                                                           "MI355X")})]
     + " of a GB300 or an MI355X. The table above found "
     f"{memory.gpus_needed(_state(L370), GPU_MEMORY)} H100s because it divided by the "
     f"datasheet's ${GPU_MEMORY / 1e9:.0f}\\times10^9$ bytes; "
     f"{100 * hardware.USABLE_MEMORY_FRACTION:.0f} % of the "
     f"{gb(H100.reported_memory_bytes)} an H100's driver reports is "
     f"{gb(H100.usable_memory())}, a little "
     + ("more" if H100.usable_memory() > GPU_MEMORY else "less")
     + ". The three newer GPUs are sold as "
     + {1: gb(hardware.gpu("B300").memory_bytes, 0)}[len({hardware.gpu(g).memory_bytes for g in (
        "B300", "GB300 NVL72", "MI355X")})] + " parts",
    _groupwise,
    lambda: f"a Q4_K block spends {_bits('q4_k')} bits a weight, Q6_K {_bits('q6_k')} and "
     f"Q8_0 {_bits('q8_0')}",
    lambda: f"No. {gb(memory.weight_bytes(7e9), 0)} is the BF16 weights; training keeps "
     f"{memory.bytes_per_param()} bytes per parameter, {gb(_state(L27))} for Llama-2-7B",
    lambda: f"{gb(_micro_batch_of_four('none').activations)} for 4 sequences of 4,096 "
     "tokens even with FlashAttention, which leaves each GPU only "
     f"{gb(GPU_MEMORY - _micro_batch_of_four('none').activations)} for its share of the"
     f" state: {_gpus_each_keeping_its_batch('none')} GPUs would be needed "
     f"(`memory.gpus_needed({_state(L27) / 1e9:.1f}e9, "
     f"{(GPU_MEMORY - _micro_batch_of_four('none').activations) / 1e9:.1f}e9)`)",
    lambda: "state plus *one* micro-batch, says "
     f"{_micro_batch_of_four('none').gpus_needed}",
    lambda: "With full recomputation the activations take "
     f"{gb(_micro_batch_of_four('full').activations)} per GPU and "
     f"{WORDS[_gpus_each_keeping_its_batch('full')]} GPUs do hold it all",
    # Key takeaways.
    lambda: (lambda c: f"$sbh({c['const']:.0f} + {c['kv']:.0f}n_\\text{{kv}}/a + "
             f"{c['f']:.0f}f/h) + {c['stats']:.0f}asb$, {gb(_l7_flash())} for Llama-2-7B at "
             f"4,096 tokens against the GPT formula's {gb(_gpt_formula(L27, 4096))}")(
                 _llama_coefficients()),
    lambda: f"$Vd + Pd + L(12d^2 + 13d) + 2d = {_comma(transformer.param_count(GPT2))}$",
    lambda: "Training with Adam keeps "
     + {1: str(memory.bytes_per_param("mixed", "adam"))}[
        len({memory.bytes_per_param(p, "adam") for p in ("mixed", "fp32")})]
     + " bytes per parameter in mixed precision *and* in FP32",
)

#: Numbers of the prose that are not results.
NOT_FIGURES = (
    # the earlier calculator page's figures, quoted as it printed them
    "39.0M embedding, 84.9M attention and 56.6M MLP parameters, 124.4M in total",
    "needs 10 bytes per parameter against 16 for FP32",
    "its 16 is not",
    "700 GB of parameters, 700 GB of gradients, 1,400 GB of optimizer state and 2.4 TB of "
    'activations: 5.2 TB, "65 GPUs of 80 GB"', "The 2.4 TB of activations",
    # a colleague's claim, corrected in the answer below it
    '"a 7B model needs 14 GB, so two 80 GB GPUs are plenty to fine-tune it at 4,096 tokens '
    'with a micro-batch of 4."',
    # the lesson's chosen inputs
    "width 256, 4 blocks, 8 heads, a vocabulary of 8,192 and 512 positions",
    "an MLP width of 688", "4,096 tokens", "4,096-token", "2,048-token",
    "8 query heads sharing 2 KV heads", "over blocks of 16 keys", "one FP32 log-sum-exp",
    "2 sequences", "($2as^2b$, not $5as^2b$)",
    "an update of $10^{-4}$",
    # GPT-2's formula, its constants (Radford et al. 2019, as counted in section 1)
    "\\underbrace{12 d^2}", "\\underbrace{13 d}",
    # Korthikanti et al. 2022, section 4.1: where the 34 sbh come from
    "11 in attention", "19 in the MLP",
    # CuPy's allocation granularity
    "a multiple of 512 bytes",
    # the published figures the lesson holds its counts against
    '"37B activated"', "OpenAI's model card gives 60.8 GiB",
    # definitions, names and cross-references
    "$10^9$", "$2^{30}$", "32-bit", "16-bit", "§3.1",
)




(test_claim, test_every_figure_is_claimed,
 test_every_listed_non_figure_is_on_the_page) = claim_tests(__name__, NOTEBOOK)


# ---------------------------------------------------------------------------------------
# Structure


def test_skeleton_of_the_house_style() -> None:
    nb.check_skeleton(SLUG, "Memory: What Fits", set_up=True)


def test_every_pause_and_think_hides_its_answer() -> None:
    nb.check_pauses_hide_answers(nb.markdown(NOTEBOOK), at_least=5)


def test_the_seed_corrections_are_taught_side_by_side() -> None:
    """The earlier page's GPT-2 breakdown, its 10 bytes/param, its activation formula and
    its 5.2 TB / 65 GPUs: each gets a warning box and a cell that computes both figures."""
    boxes = re.findall(r"```\{admonition\} A figure that circulates:(.*?)\n```",
                       nb.markdown(NOTEBOOK), flags=re.S)
    assert len(boxes) == 4
    joined = " ".join(boxes)
    for claim in ("84.9M", "10 bytes", "16 + 2/p", "5.2 TB"):
        assert claim in joined, claim
    code = "\n".join(nb.code(NOTEBOOK, hidden=False))
    assert "seed_figures" in code and "seed_activation_formula" in code
    assert "n7 * 10" in code


def test_calculators_are_this_lessons_registry_entries() -> None:
    nb.check_registry_widgets(SLUG, {"param_count", "training_memory"})


def test_counts_are_checked_against_arrays_and_bytes_measured() -> None:
    """Section 2 builds real arrays (on the lesson's device) and shows that their element
    count equals param_count; section 6 compares nbytes and the allocator with
    training_memory; section 7 measures a forward pass with tracemalloc and shows that the
    tensors it keeps add up to activation_bytes_per_layer, and a Llama block's forward pass
    (eager and FlashAttention-style) that its tensors add up to the derivation."""
    code = "\n".join(nb.code(NOTEBOOK, hidden=False))
    for needed in ("build_weights(gpt2_shapes(small_gpt))",
                   "build_weights(llama_shapes(small_llama))",
                   "int(a.size)", "a.nbytes", "tracemalloc.get_traced_memory()",
                   "get_default_memory_pool()",
                   "counted == transformer.param_count(small_gpt)",
                   "counted == transformer.param_count(small_llama)",
                   "kept_bytes == formula", "llama_block_saved(small_block",
                   "measured == derived"):
        assert needed in code, needed
    assert re.search(r"memory\.training_memory\(\s*n_small", code)


def test_every_term_is_in_the_glossary() -> None:
    assert len(nb.check_terms_in_glossary(nb.markdown(NOTEBOOK))) >= 20


def test_every_citation_is_in_the_bibliography() -> None:
    assert len(nb.check_citations_in_bibliography(nb.markdown(NOTEBOOK))) >= 10


# ---------------------------------------------------------------------------------------
# Published figures the lesson teaches, and its exercises


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_parameter_counts_match_the_published_checkpoints(name: str) -> None:
    """param_count and the exercise's model solutions give each checkpoint's exact count."""
    cfg = transformer.preset(name)
    assert transformer.param_count(cfg) == PUBLISHED[name]
    bank = lesson_module(SLUG)
    if name.startswith("gpt2"):
        got = bank.gpt2_param_count(vocab=cfg.vocab, positions=cfg.max_positions,
                                    hidden=cfg.hidden, layers=cfg.layers)
    else:
        got = bank.llama_param_count(vocab=cfg.vocab, hidden=cfg.hidden, layers=cfg.layers,
                                     ffn=cfg.ffn, heads=cfg.heads, kv_heads=cfg.kv_heads)
    assert got == PUBLISHED[name]


def test_gpt2_small_breakdown_against_the_seed_figures() -> None:
    """GPT-2 small (V = 50,257, P = 1,024, d = 768, L = 12): attention 4d² + 4d and MLP
    8d² + 5d per block. The earlier page's "84.9M attention" is L·12d² = 84,934,656, the
    weight matrices of attention and MLP together."""
    parts = transformer.param_breakdown(transformer.preset("gpt2"))
    assert parts["attention"] == 12 * (4 * 768**2 + 4 * 768) == 28_348_416
    assert parts["mlp"] == 12 * (8 * 768**2 + 5 * 768) == 56_669_184
    assert round(12 * 12 * 768**2 / 1e6, 1) == 84.9
    assert "28,348,416" in lesson_module(SLUG).EXERCISES[0].answer_text()


def test_sixteen_bytes_per_parameter_in_both_precisions() -> None:
    """ZeRO (Rajbhandari et al. 2020), section 3.1: mixed-precision Adam keeps 2 + 2 + K
    bytes with K = 12; FP32 Adam keeps 4 + 4 + 8. The seed's "10 vs 16" is wrong."""
    assert memory.model_state_bytes("mixed", "adam") == memory.ModelStateBytes(2, 2, 12)
    assert memory.model_state_bytes("fp32", "adam") == memory.ModelStateBytes(4, 4, 8)
    ex = next(e for e in lesson_module(SLUG).EXERCISES if e.number == 5)
    assert ex.answer_value() == 16 * PUBLISHED["llama-2-7b"]
    assert ex.check(f"{10 * PUBLISHED['llama-2-7b'] / 1e9:.2f} GB").mistake == "ten_bytes"


def test_gpt3_attention_term_as_in_korthikanti() -> None:
    """Korthikanti et al. 2022, section 4.1: for GPT-3 (a = 96, s = 2048, h = 12288) the
    attention term 5as/h is 80, against 34 for the rest; selective recomputation keeps
    the 34."""
    s, h, a = 2048, 12288, 96
    assert 5 * a * s // h == 80
    full = memory.activation_bytes_per_layer(seq_len=s, batch=1, hidden=h, heads=a)
    selective = memory.activation_bytes_per_layer(seq_len=s, batch=1, hidden=h, heads=a,
                                                  recompute="selective")
    assert full == s * h * (34 + 80) and selective == 34 * s * h


def test_moe_and_llama_exercises_reproduce_published_figures() -> None:
    """Jiang et al. 2024 (Mixtral, section 2.1): 47B parameters, 13B active, so its BF16
    weights are 2 bytes x 46.7B, and the declared mistake is 2 bytes x 12.9B. A Llama-2-7B
    layer at 4,096 tokens with FlashAttention keeps what the measured forward pass keeps
    (tests/unit/test_memory.py), a sixth of the GPT formula."""
    bank = lesson_module(SLUG)
    moe = next(e for e in bank.EXERCISES if e.number == 11)
    assert round(moe.answer_value() / 1e9, 1) == round(2 * 46.7, 1)
    assert moe.check(f"{2 * 12.88:.1f} GB").mistake == "active_for_memory"
    flash = next(e for e in bank.EXERCISES if e.number == 10)
    assert round(_gpt_formula(L27, 4096) / (L27.layers * flash.answer_value())) == 6
    assert flash.check(f"{_per_layer(L27, 4096) / 1e9:.2f} GB").mistake == "gpt_formula"


def test_exercise_bank_promises() -> None:
    exercises = lesson_module(SLUG).EXERCISES
    assert len(exercises) >= 5
    assert {ex.kind for ex in exercises} >= {"numeric", "choice", "code"}
    keys = {m.key for ex in exercises for m in ex.mistakes}
    for mistake in ("ten_bytes", "gib_as_gb", "forgot_training_state", "forgot_optimizer",
                    "no_recompute", "no_sequence_parallel", "rounded_down", "gpt_formula",
                    "eager_scores", "active_for_memory"):
        assert mistake in keys, mistake
    nb.check_exercise_notebook(SLUG)


def test_the_fp16_neighbour_of_one_is_the_one_above():
    """Section 5: 1 + 2^-10 is the next FP16 number *above* 1.0, not its nearest one: below
    1.0 the spacing halves, so 1 - 2^-11 is closer. An update of 10^-4 rounds away on either
    side (it is less than half of either gap), so the argument stands; the wording names
    the neighbour that a positive update would have to reach."""
    one = np.float16(1)
    up = float(np.nextafter(one, np.float16(2))) - 1
    down = 1 - float(np.nextafter(one, np.float16(0)))
    assert down == up / 2 and UPDATE < down / 2
    text = " ".join(nb.markdown(NOTEBOOK).split())
    assert "the nearest other number is $1 + 2^{-10}" not in text
    assert f"next number up is $1 + 2^{{-{round(-math.log2(up))}}}" in text
