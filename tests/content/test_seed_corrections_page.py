"""The figures of ``book/seed_corrections.md``, each held against the call that computes
it (:mod:`tests.content.claims`): the seed pages' figures that the course corrects, the
course's own figure beside each, and the blocks of calculator calls the page prints, run as
printed. Shared figures and helpers: :mod:`tests.content.book_figures`; the coverage of
every number on the page: ``test_book_pages.py``.

Sources of the published inputs: the seed pages themselves (their figures, quoted as the
claims under test); GPT-3 (Brown et al. 2020); the ZeRO paper (Rajbhandari et al. 2020,
section 3.1 and Figure 1); Korthikanti et al. 2022 (activation bytes per layer); the NVIDIA
and AMD datasheets of ``gpulesson/data/gpus.json``; the Llama 3 paper (Dubey et al. 2024);
FlashAttention-3 (Shah et al. 2024); Chen et al. 2016 (sqrt(n) checkpointing); the cost
lesson's dated inputs (DGX H100 10.2 kW, EIA 2023 industrial tariff, Uptime 2023 PUE, AWS
p5 July 2023). Each non-figure carries its source in a comment.
"""

from __future__ import annotations

import math
import re

from gpulesson import (
    calculators,
    cost,
    distributed,
    execution,
    flops,
    gemm,
    inference,
    memory,
    optimisations,
    prices,
    roofline,
    transformer,
    units,
)
from gpulesson.hardware import gpu
from gpulesson.precision import float_format
from gpulesson.transformer import param_count, preset

from .book_figures import (
    BOOK,
    GPU_MEMORY,
    N4096,
    PEAK,
    SEED_CLOUD_USD_PER_HOUR,
    SEED_SCALING,
    SEED_TCO,
    W7_FP16,
    _attention_share_405b,
    _compute_per_step,
    _crossover,
    _days,
    _decode_ceiling,
    _dgx_year,
    _gemm_time,
    _gpt3_activations,
    _gpt3_batch_efficiency,
    _gpt3_fp32_state,
    _gpt_block_activations,
    _h100_tokens_per_second,
    _hidden_size_kv,
    _int,
    _llama8b_prefill,
    _long_llama_ratio,
    _mistral_batch_gain,
    _one_h100_tokens,
    _parts,
    _pcie5_each_way,
    _per_1k_at,
    _plan_days,
    _planner_price,
    _pue,
    _ratio,
    _seed_activation_formula,
    _seed_per_1k,
    _seed_scaling,
    _seed_tco,
    _tflops,
    _zero,
    book_page,
    naming_test,
)
from .claims import (
    Claim,
    claims,
    parametrize,
)
from .reference import A100, GPT3, H100, L27, L38, L270, L370, L405, N7, RTX
from .reference import dollars as _usd
from .reference import gb as _gb
from .reference import pct_unspaced as _pct


def _seed_gpt3_state() -> str:
    """GPT-3 175B's FP32 model state rounded to 100 GB, as the seed prints it."""
    state = _gpt3_fp32_state()

    def hundreds(n_bytes: float) -> str:
        return f"{round(n_bytes / 1e11) * 100:,} GB"

    return (f"{hundreds(state.weights)} parameters, {hundreds(state.gradients)} gradients, "
            f"{hundreds(state.optimizer)} optimizer")


def _seed_power_inputs() -> str:
    return (f"{SEED_TCO['power_watts'] / 1e3:.0f} kW at a PUE of {SEED_TCO['pue']} and "
            f"${SEED_TCO['usd_per_kwh']:.2f} per kWh")


def _starting_plan() -> str:
    """The dashboard's starting plan, from the planning calculator's inputs."""
    plan = calculators.si_inputs("planning")
    short = {"H100 SXM": "H100"}[plan["gpu"]]
    return (f"{transformer.model_label(plan['model'])} on {plan['tokens'] / 1e12:.0f}T tokens, "
            f"{plan['n_gpus']} {short}s")


def _resident(name: str) -> tuple[int, int, int]:
    """Threads a GPU keeps in flight, its SMs and the threads of one SM."""
    sms = execution.gpu_execution(name).sms
    per_sm = execution.sm_limits(name).max_threads_per_sm
    return sms * per_sm, sms, per_sm


def _fa3_share() -> str:
    """FlashAttention-3's 740 TFLOP/s in FP16 (Shah et al. 2024) as a share of the dense peak."""
    return _pct(flops.utilization(740e12, H100.dense("fp16")))






def _seed_2026() -> dict[str, str]:
    """The corrections' figures that the 2026 models and formats bring."""
    l27, v3 = transformer.preset("llama-2-7b"), transformer.preset("deepseek-v3")
    flash_32k = memory.training_memory(l27, batch=1, seq_len=32768).activations
    seed_32k = 1 * 32768 * l27.hidden * l27.layers * (16 + 2 / 1)
    kv = inference.kv_cache_bytes_per_token(v3)
    kv_mha = inference.kv_cache_bytes_per_token(inference.multi_head_equivalent(v3))
    fa = calculators.compute("flash_attention")
    attention = flops.attention_flops_per_token(layers=32, heads=32, head_dim=128,
                                                seq_len=4096)
    batch = [calculators.compute("inference", model="llama-3-8b", prompt=2048,
                                 new_tokens=1, batch=b)["decode_total"] for b in (1, 32)]
    ceiling = [inference.decode_ceiling_tokens_per_second(
        weight_bytes=memory.weight_bytes(7e9, precision=p), bandwidth=H100.bandwidth)
        for p in ("fp16", "nvfp4")]
    quotes = sorted((q for q in prices.quotes("H100 SXM") if q.provider == "AWS"),
                    key=lambda q: q.date)
    return {
        "flash_32k": _gb(flash_32k), "flash_ratio": f"{flash_32k / seed_32k:.1f}",
        "active": f"{transformer.active_params(v3) / 1e9:.1f}B",
        "total": f"{transformer.param_count(v3) / 1e9:.1f}B",
        "kv": f"{kv:,}", "kv_ratio": f"{kv_mha / kv:.0f}",
        "mha_heads": f"{inference.multi_head_equivalent(v3).kv_heads}",
        "fa_speedup": f"{fa['speedup']:.1f}", "fa_saved": _gb(fa["memory_saved"]),
        "fp8_peak": f"{H100.dense('fp8') / 1e12:,.1f}",
        "attention_share": _pct(attention / flops.model_flops_per_token(l27, seq_len=4096), 1),
        "batching": f"{batch[1] / batch[0]:.1f}",
        "fp16": f"{ceiling[0]:.0f}", "nvfp4": f"{ceiling[1]:.0f}",
        "quant": f"{ceiling[1] / ceiling[0]:.1f}",
        "old_price": f"{quotes[0].usd_per_gpu_hour:.2f}",
        "new_price": f"{quotes[-1].usd_per_gpu_hour:.2f}",
        "price_ratio": f"{quotes[0].usd_per_gpu_hour / quotes[-1].usd_per_gpu_hour:.1f}",
    }


SEED_CORRECTIONS = claims(
    # Lesson 3: threads in flight (gpulesson.execution).
    lambda: "an H100 SXM holds {:,} resident threads ({} SMs of {:,}), a B200 {:,} ({} of "
     "{:,})".format(*_resident("H100 SXM"), *_resident("B200")),
    lambda: _int(N7) + " parameters",
    lambda: "dense BF16 rate, "
     + units.format_flop_rate(PEAK),
    lambda: naming_test(__file__),
    # Lesson 1: the seed lesson's worked numbers.
    lambda: f"2·M·K·N = {gemm.flops(2, 3, 4)} FLOPs "
     f"| Right: {gemm.flops(2, 3, 4)} FLOPs",
    lambda: f"4,096 workers give "
     f"{roofline.amdahl_speedup(0.05, 4096):.1f}×",
    lambda: "no number of cores gives more than "
     f"{roofline.amdahl_speedup(0.05, 1e12):.0f}×",
    lambda: f"one user: {_decode_ceiling(14e9, 3.35e12):.1f} "
     "tokens/s",
    lambda: f"{_gb(7e9 * memory.bytes_per_param('mixed'))} "
     "for 7e9 parameters",
    lambda: f"A 7B model in FP16 ({units.format_bytes(W7_FP16, digits=0)}) decodes at most "
     f"about {_decode_ceiling(W7_FP16, H100.bandwidth):.0f} tokens/s on "
     + units.format_bandwidth(H100.bandwidth),
    lambda: "Full training of a 7B model needs about "
     f"{memory.bytes_per_param('mixed')} bytes per parameter, "
     + units.format_bytes(7e9 * memory.bytes_per_param("mixed"), digits=0),
    # Lesson 2: the GEMM calculator and the GPU table.
    lambda: units.format_flops(gemm.flops(*N4096), digits=1)
     + ", not a rate",
    lambda: f"{_gb(gemm.min_bytes(*N4096, 4))} and "
     f"{gemm.arithmetic_intensity(*N4096, 4):.1f} FLOP per byte",
    lambda: "(β ≠ 0), " + _gb(gemm.min_bytes(*N4096, 4, read_c=True)),
    lambda: "In BF16, "
     f"{_gb(gemm.min_bytes(*N4096, 2))} and {gemm.arithmetic_intensity(*N4096, 2):,.1f} "
     "FLOP per byte",
    lambda: "Would need "
     + units.format_flop_rate(gemm.flops(*N4096) / 0.034e-3),
    lambda: _gemm_time("fp32", 4) + " on the FP32 cores",
    lambda: _gemm_time("tf32", 4)
     + " on the tensor cores in TF32",
    lambda: "stored in BF16, " + _gemm_time("bf16", 2),
    lambda: "dense FP16 and BF16 is "
     + units.format_flop_rate(H100.dense("fp16")),
    lambda: f'H100 SXM FP16 "{H100.sparse_flops["fp16"] / 1e12:,.0f}"',
    lambda: f"dense {A100.dense('fp16') / 1e12:.0f} the table suggests "
     f"{H100.sparse_flops['fp16'] / A100.dense('fp16'):.1f} times; dense against dense it is "
     f"{H100.dense('fp16') / A100.dense('fp16'):.1f} times",
    lambda: f"{units.format_flop_rate(RTX.dense('fp16'))} with FP32 accumulation, "
     f"{_tflops(RTX.other_flops['fp16_fp16_accumulate'])} with FP16 accumulation",
    lambda: f"bandwidth {RTX.bandwidth / 1e9:,.0f} GB/s",
    lambda: 'FP32 "35" TFLOPS | '
     + units.format_flop_rate(RTX.dense("fp32")),
    lambda: "ceiling "
     f"{H100.dense('bf16') / H100.dense('fp32'):.1f} times over FP32",
    lambda: f'"{gemm.flops(*N4096) / 1e9:.1f} GFLOPS" '
     "| Right, as a count",
    lambda: f'"{_gb(gemm.min_bytes(*N4096, 4))}", '
     f'"{gemm.arithmetic_intensity(*N4096, 4):.1f} ops/byte" | Right as the minimum traffic, '
     f"for {float_format('fp32').storage_bytes:.0f}-byte (FP32) elements",
    lambda: f'{RTX.name} FP16 '
     f'"{RTX.dense("fp16") / 1e12:.0f}" TFLOPS, '
     f'"{units.format_bandwidth(RTX.bandwidth, digits=1)}"',
    # Lesson 4: memory.
    lambda: _int(param_count(preset("gpt2"))) + " parameters. The parts are "
     + ", ".join(f"{transformer.param_breakdown(preset('gpt2'))[k] / 1e6:.1f}M"
                for k in ("embedding", "attention")) + " and "
     + f"{transformer.param_breakdown(preset('gpt2'))['mlp'] / 1e6:.1f}M",
    lambda: f"{12 * 768**2 * 12 / 1e6:.1f}M is L·12d²",
    lambda: f"add up to {39.0 + 84.9 + 56.6:.1f}M",
    lambda: "With Adam both are "
     + " and ".join(sorted({str(memory.bytes_per_param(p)) for p in ("mixed", "fp32")})),
    lambda: _parts("mixed") + " in mixed precision",
    lambda: _parts("fp32") + " in FP32",
    lambda: f"{memory.bytes_per_param('mixed_fp32_grads')} with "
     "FP32 gradients",
    lambda: f"in {_gb(10 * N7)} on one {GPU_MEMORY / 1e9:.0f} GB GPU; the real "
     f"{_gb(N7 * memory.bytes_per_param())} does "
     + ("not fit" if not memory.fits(N7 * memory.bytes_per_param(), GPU_MEMORY)
       and memory.fits(10 * N7, GPU_MEMORY) else "fit"),
    lambda: f"stores {_gb(_gpt3_activations())}, "
     f"{_gpt3_activations() / _seed_activation_formula(1, 2048, 12288, 96):.1f} times the "
     f"formula's {_gb(_seed_activation_formula(1, 2048, 12288, 96))} (p = 1)",
    lambda: f"at 32,768 tokens, {_long_llama_ratio():.0f} times",
    lambda: "cuts GPT-3's activations by " + _pct(
       1 - memory.activation_bytes_per_layer(
           seq_len=2048, batch=1, hidden=12288, heads=96, tp=8, sequence_parallel=True,
           recompute="selective") / memory.activation_bytes_per_layer(
           seq_len=2048, batch=1, hidden=12288, heads=96, tp=8, sequence_parallel=True)),
    lambda: " + ".join(
       _gb(getattr(_gpt3_fp32_state(), k)) for k in ("weights", "gradients", "optimizer")),
    lambda: f"({_gb(_gpt3_fp32_state().activations)} of activations) it needs at least "
     f"{_gpt3_fp32_state().gpus_needed} GPUs",
    lambda: f"5.2 TB, {math.ceil(5.2e12 / GPU_MEMORY)} GPUs of "
     "80 GB",
    lambda: f"{param_count(preset('gpt2')) / 1e6:.1f}M "
     "in total | The total is right",
    lambda: f"vs FP32: {memory.bytes_per_param('fp32')} bytes/param",
    _seed_gpt3_state,
    # Lesson 5: FLOPs.
    lambda: f"GPT-3: {flops.training_flops(param_count(GPT3), 300e9):.2e}".replace("e+", "e")
     + f" FLOPs with its {param_count(GPT3) / 1e9:.1f}B parameters",
    lambda: "attention adds " + _pct(_attention_share_405b(), 1),
    lambda: f"{flops.flops_per_token(175e9):.2e}"
     .replace("e+", "e") + " FLOPs per token, a count",
    lambda: f"{flops.training_flops(175e9, 300e9) / 1e23:.2f} × 10²³ | Right for exactly "
     f"175B parameters; GPT-3's own figure is "
     + f"{flops.training_flops(param_count(GPT3), 300e9):.2e}".replace("e+", "e"),
    lambda: f"reproduce {flops.training_days(3.15e23, 1024, H100.sparse_flops['bf16'], 0.606):.1f}"
     " days only at 60.6% of the 2:4-sparse peak",
    lambda: f"the same MFU means {flops.training_days(3.15e23, 1024, PEAK, 0.606):.1f} days,"
     f" and at 40% MFU {flops.training_days(3.15e23, 1024, PEAK, 0.40):.1f} days",
    lambda: "FLOPS per token "
     f'"{flops.flops_per_token(175e9) / 1e12:.2f} TFLOPS"',
    # Lesson 6: inference.
    lambda: "formula gives "
     + _int(_hidden_size_kv(L38, 4096)) + " bytes",
    lambda: "need " + _int(inference.kv_cache_bytes(L38, seq_len=4096)) + ", "
     + {4: "four", 8: "eight"}[_hidden_size_kv(L38, 4096)
                              // inference.kv_cache_bytes(L38, seq_len=4096)]
     + " times less (" + {4: "four", 8: "eight"}[_hidden_size_kv(L370, 4096)
                                                // inference.kv_cache_bytes(L370, seq_len=4096)]
     + " times less for Llama-3-70B)",
    lambda: f"{_crossover(L27):,.0f} tokens for Llama-2-7B ({_crossover(L370):,.0f} for "
     "Llama-3-70B)",
    lambda: "At 2,048 tokens attention adds "
     + _pct(2048 / _crossover(L27), 1),
    lambda: f"{_llama8b_prefill()[0] / 1e12:.2f} TFLOP of work, which takes "
     f"{_llama8b_prefill()[1] * 1e3:.1f} ms at {units.format_flop_rate(PEAK)}",
    lambda: f"from {_decode_ceiling(W7_FP16, _pcie5_each_way()):.1f} tokens/s with its "
     f"weights streamed over PCIe 5.0 ({_pcie5_each_way() / 1e9:.0f} GB/s each way) to "
     f"{_decode_ceiling(W7_FP16, H100.bandwidth):.1f} tokens/s",
    # Lesson 7: distributed.
    lambda: "each of 8 ranks "
     + _gb(distributed.allreduce_bytes_per_rank(14e9, 8)),
    lambda: "32 micro-batches idle "
     + _pct(distributed.pipeline_bubble_fraction(8, 32), 1),
    lambda: "cut it to " + _pct(distributed.pipeline_bubble_fraction(8, 32, 4),
                                1),
    lambda: f"{_gb(_zero(0))}, {_gb(_zero(1))}, {_gb(_zero(2))} and {_gb(_zero(3))} per GPU "
     f"for stages 0 to 3, savings of {_zero(0) / _zero(1):.1f}×, {_zero(0) / _zero(2):.1f}× "
     f"and {_zero(0) / _zero(3):.0f}×",
    lambda: f"Communication volume {_gb(_seed_scaling()[0])}, time {_seed_scaling()[1]} s, "
     f"scaling efficiency {_pct(_seed_scaling()[2], 1)}, effective speed-up "
     f"{_seed_scaling()[3]:.2f}×",
    lambda: "175B FP16 gradients ("
     + units.format_bytes(memory.weight_bytes(175e9, precision="fp16"), digits=0) + ")",
    lambda: "trains a 175B model on "
     f"{0.1 * _h100_tokens_per_second(175e9):.0f} tokens",
    lambda: f"8 GPUs compute {_compute_per_step(175e9, 3.2e6, 8):,.0f} s per step and the "
     f"same exchange leaves them {_pct(_gpt3_batch_efficiency('dp8'), 1)} efficient",
    lambda: f"175B's {_gb(175e9 * memory.bytes_per_param())} of training state: at least "
     f"{memory.gpus_needed(175e9 * memory.bytes_per_param(), GPU_MEMORY)} GPUs",
    lambda: "ZeRO-3 alone is "
     + _pct(_gpt3_batch_efficiency("zero3"), 1) + " efficient",
    lambda: "over the remaining "
     f"{1024 // (8 * 8)}, {_pct(_gpt3_batch_efficiency('3d'), 1)}",
    lambda: f"tensor 8 × pipeline 16 = {8 * 16} GPUs",
    lambda: f"the run used {8_192 // 128} to "
     f"{16_384 // 128} replicas",
    lambda: "needs at least "
     f"{memory.gpus_needed(param_count(L405) * memory.bytes_per_param(), H100.usable_memory())}"
     f" H100s ({H100.usable_memory() / 1e9:.1f} GB usable each)",
    lambda: "would need about "
     f"{_days(param_count(L405), 15.6e12, 128, 0.4) / 365:.0f} years",
    lambda: "The "
     + units.format_bytes(memory.weight_bytes(7e9, precision="bf16"), digits=0)
     + " of BF16 gradients of a 7B model",
    lambda: f"on {SEED_SCALING['gpus']} GPUs at "
     f"{units.format_bandwidth(SEED_SCALING['bandwidth'], digits=0)} with "
     f"{SEED_SCALING['compute']} s of compute per step. But {SEED_SCALING['compute']} s of an "
     "H100",
    lambda: (
       "No" if 8 * H100.memory_bytes < 175e9 * memory.bytes_per_param() else "A")
     + f" layout of 8 GPUs of {H100.memory_bytes / 1e9:.0f} GB holds",
    # Lesson 8: cost.
    lambda: f"Eight GPUs at the {_usd(240_000 / 8)}",
    lambda: "estimated at about "
     + _usd(calculators.si_inputs("tco")["hardware_usd"]),
    lambda: f"Annual power cost {_usd(_seed_tco()['power'])} | "
     f"{units.format_usd(_seed_tco()['hourly power'], cents=True)} of electricity an hour",
    lambda: {3: "three"}[
       round(30_000 / calculators.si_inputs("tco")["power_watts"])]
     + " DGX H100s' worth of power",
    lambda: f"One DGX H100 ({calculators.si_inputs('tco')['power_watts'] / 1e3:.1f} kW) at "
     f"the 2023 US industrial average ({100 * calculators.si_inputs('tco')['usd_per_kwh']:.2f}"
     f" ¢/kWh) and PUE ({calculators.si_inputs('tco')['pue']}) costs {_usd(_dgx_year())} a "
     "year",
    lambda: "TCO " + _usd(_seed_tco()["own"]),
    lambda: f"5-year cloud cost {_usd(_seed_tco()['cloud'])}, savings "
     f"{_usd(_seed_tco()['cloud'] - _seed_tco()['own'])}",
    lambda: "Follow from "
     + f"{_usd(_seed_tco()['cloud'] / (5 * cost.HOURS_PER_YEAR))} an hour "
     + f"({_usd(_seed_tco()['cloud'] / (5 * cost.HOURS_PER_YEAR) / 8)} per GPU-hour)",
    lambda: f"Breakeven point {_seed_tco()['no power']:.1f} "
     "months",
    lambda: f"owning breaks even after {_seed_tco()['with power']:.1f} months; at 50% "
     f"utilisation, after {_seed_tco()['half busy']:.1f} months",
    lambda: "the 2023 average was "
     f"{calculators.si_inputs('tco')['pue']}",
    lambda: f"288,000 at ${_seed_per_1k():.3f} per 1K tokens | {288_000 / 3600:.0f} tokens/s",
    lambda: f"that is {_usd(_seed_per_1k() * 288_000 / 1000)} an hour: four GPUs at $6 per "
     "GPU-hour",
    lambda: "a ceiling of "
     f"{_decode_ceiling(memory.weight_bytes(param_count(L270)), 4 * H100.bandwidth):.0f} "
     "tokens/s",
    lambda: f"costs {_usd(cost.cloud_cost(usd_per_hour=4 * 6, years=1 / 365))}; $5,760 would"
     f" need a price of {100 * 5760 / (288_000 * 24 / 1000):.0f} cents per 1,000 tokens and "
     f"buyers for {288_000 * 24 / 1e6:.1f} million tokens a day",
    lambda: "(80% to 40% "
     + {2.0: "doubles"}[_seed_per_1k(0.4) / _seed_per_1k(0.8)] + " it)",
    lambda: "costs "
     f"{_mistral_batch_gain(32):.1f} times less per token at batch 32",
    lambda: f"{_usd(SEED_TCO['hardware_usd'])} of hardware, {_seed_power_inputs()}, and "
     f"{_usd(SEED_CLOUD_USD_PER_HOUR)} an hour of cloud",
    lambda: "Hardware cost " + _usd(SEED_TCO["hardware_usd"]),
    lambda: "of electricity an hour: " + _seed_power_inputs(),
    lambda: "the comparison assumes " + _pct(
       2_102_400 / cost.cloud_cost(usd_per_hour=SEED_CLOUD_USD_PER_HOUR, years=5))
     + " utilisation",
    lambda: f'"Power includes {100 * 0.30:.0f}–{100 * 0.50:.0f}% cooling overhead" | A PUE of '
     f"{_pue(0.30)} to {_pue(0.50)}",
    lambda: f"At ${_seed_per_1k():.3f} per "
     f"1,000 tokens that is {_usd(_seed_per_1k() * 288_000 / 1000)} an hour",
    lambda: f"the page's own ${_seed_per_1k():.3f} lies "
     + ("above" if _seed_per_1k() > 0.01 else "below") + ' its "poor" tier',
    # Lesson 9: optimisations.
    lambda: "activations of "
     f"{optimisations.checkpoint_memory(layers=96, per_layer_bytes=1):.0f} layers",
    lambda: "2N on top of 6N per token, "
     f"about {_pct(optimisations.recompute_overhead())} more FLOPs",
    lambda: f"{_gb(memory.training_memory(L27, batch=1, seq_len=4096).activations)} of "
     "activations with FlashAttention, its default ("
     f"{_gb(_gpt_block_activations(L27))} counted as GPT blocks with eager attention, "
     f"{_gb(_gpt_block_activations(L27, recompute='selective'))} with selective "
     "recomputation, "
     + _pct(optimisations.recompute_overhead(recompute="selective", n_params=N7,
                                            layers=L27.layers, heads=L27.heads,
                                            head_dim=L27.head_dim, seq_len=4096), 1)
     + " more FLOPs), "
     + units.format_bytes(memory.training_memory(L27, batch=1, seq_len=4096,
                                                recompute="full").activations, digits=2)
     + " with a checkpoint at every layer ("
     + _pct(optimisations.recompute_overhead(recompute="full")) + " more)",
    lambda: f"740 TFLOP/s in FP16 is {_pct(flops.utilization(740e12, H100.dense('fp16')))} of"
     f" the dense {_tflops(H100.dense('fp16'))}",
    lambda: f"1 − 10/{memory.bytes_per_param('fp32')}",
    lambda: _pct(optimisations.mixed_precision_savings(
        n_params=N7,
        activation_bytes_fp32=2 * memory.training_memory(L27, batch=1, seq_len=4096)
        .activations).saved_fraction, 1) + " for Llama-2-7B at 4,096 tokens",
    lambda: f"{_ratio('V100 SXM')} on a V100, {_ratio('A100 80GB')} on an A100, "
     f"{_ratio('H100 SXM')} on an H100 and {_ratio('B200')} on a B200",
    lambda: "96 layers keep the activations of "
     f"{optimisations.checkpoint_memory(layers=96, per_layer_bytes=1):.0f} layers",
    lambda: f"FlashAttention-3: {_fa3_share()} "
     "of the H100's maximum",
    lambda: "Mixed precision savings "
     f"{math.floor(100 * (1 - 10 / memory.bytes_per_param('fp32')))}% | 1 − 10/"
     f"{memory.bytes_per_param('fp32')}",
    lambda: "keeps the model state at "
     f"{memory.bytes_per_param('mixed')} bytes per parameter",
    # Lesson 10: the dashboard.
    lambda: f"{_plan_days(0.752):.1f} days instead of "
     f"{_plan_days(0.40):.1f} at 40%",
    lambda: "uses "
     + _pct(calculators.compute("planning")["memory_per_gpu"]
           / calculators.compute("planning")["memory_limit"], 1)
     + f" of the {units.format_bytes(calculators.compute('planning')['memory_limit'])} a "
     "plan may use on an H100",
    lambda: f"{_one_h100_tokens():,.0f} tokens/s on one H100 at 40% MFU; 342 tokens/s would "
     f"be {_pct(flops.mfu(342, flops.flops_per_token(N7), 1, PEAK), 1)} MFU",
    lambda: "cannot exceed "
     f"{_decode_ceiling(memory.weight_bytes(N7, precision='bf16'), H100.bandwidth):.0f} "
     "tokens/s",
    lambda: f"(${_planner_price():.2f} per H100-hour, AWS on demand, "
     f"September 2026), 342 tokens/s cost ${_per_1k_at(_planner_price(), 342):.4f} per "
     "1,000 tokens",
    lambda: f"Scale factor {distributed.effective_speedup(8, 0.85):.1f}× | Reproducible as 8 "
     "GPUs at 85% scaling efficiency",
    lambda: "64 GPUs computing "
     + _pct(calculators.compute("planning")["efficiency"], 1) + " of each step",
    lambda: f"its FP32 rate, {A100.dense('bf16') / A100.dense('fp32'):.1f}×; on an H100 it "
     f"is {H100.dense('bf16') / H100.dense('fp32'):.1f}×",
    lambda: f"{units.format_flop_rate(PEAK)} for an H100 SXM, "
     f"{_tflops(gpu('MI300X').dense('bf16'))} for an MI300X, "
     f"{_tflops(gpu('B200').dense('bf16'))} for a B200",
    lambda: "HBM bandwidth, "
     + units.format_bandwidth(H100.bandwidth),
    _starting_plan,
    lambda: f"FlashAttention-3's {_fa3_share()}",
    lambda: f"{A100.dense('bf16') / A100.dense('fp32'):.0f}× performance improvement | "
     "Matches an A100's dense BF16 rate over its FP32 rate",
    lambda: f"{units.format_bandwidth(H100.bandwidth)} memory; {_fa3_share()} max H100 "
     "utilization | Right",
    # The 2026 models and formats
    lambda: "Its own blocks with FlashAttention keep no s² term either, "
     f"and still {_seed_2026()['flash_32k']}, {_seed_2026()['flash_ratio']} times the "
     "formula",
    lambda: "DeepSeek-V3 trains at "
     f"{_seed_2026()['active']} of its {_seed_2026()['total']}",
    lambda: f"DeepSeek-V3 keeps {_seed_2026()['kv']} bytes per token, "
     f"{_seed_2026()['kv_ratio']} times less than its {_seed_2026()['mha_heads']} heads "
     "would",
    lambda: f"{_seed_2026()['fa_speedup']} times less time on the roofline and "
     f"{_seed_2026()['fa_saved']} less kept for the backward pass",
    lambda: "where the dense FP8 peak is "
     f"{_seed_2026()['fp8_peak']} TFLOP/s",
    lambda: f"{_seed_2026()['attention_share']}"
     " of them for Llama-2-7B at 4,096 tokens",
    lambda: "give an H100 "
     f"{_seed_2026()['batching']} times the tokens per second of one",
    lambda: "from "
     f"{_seed_2026()['fp16']} tokens/s in FP16 to {_seed_2026()['nvfp4']} in NVFP4, "
     f"{_seed_2026()['quant']}×",
    lambda: f"fell from "
     f"${_seed_2026()['old_price']} in 2023 to ${_seed_2026()['new_price']}, "
     f"{_seed_2026()['price_ratio']}×",
    lambda: "("
     f"{_pct(0.5)} utilisation "
     + {2: "doubles"}[round(cost.cost_per_1k_tokens(usd_per_gpu_hour=1, gpus=1,
                                                   tokens_per_second=1, utilization=0.5)
                           / cost.cost_per_1k_tokens(usd_per_gpu_hour=1, gpus=1,
     tokens_per_second=1))]
     + " the cost per token)",
)

#: Numbers of book/seed_corrections.md's prose that are not results.
SEED_CORRECTIONS_NOT_FIGURES = (
    # the seed's headline figures and FlashAttention-3's FP8 result (Shah et al. 2024)
    "| 1.2 PFLOPS peak |", "close to 1.2 PFLOP/s on an H100",
    "No GPU's dense BF16 figure is 1.2 PFLOP/s", "| 95% matrix operations |",
    "| 10× cost reduction possible |", "Together they can exceed 10×",
    # the lever's inputs: PaLM's attention term, a batch of the course's examples
    "12·L·H·Q·T", "(32 conversations of 2,048 tokens",
    "## Lesson 10:",  # a heading's lesson number
    # The seed pages' figures that the page corrects (or finds no way to check), quoted.
    'Execution time "0.034 ms"',
    '"Performance score" 9.8/10, 8.5/10, 6.8/10, 7.2/10',
    "Prices $30,000, $15,000, $8,000, $1,600",
    "Transformers 70–85% utilisation with an 8× Tensor Core benefit, CNNs 80–95% with 4×, "
    "RNNs 10–40%, GNNs 10–30%",
    "GPT-2 small: 39.0M embedding, 84.9M attention, 56.6M MLP",
    "Mixed precision: 10 bytes/param",
    "(16 + 2/p)",
    "2.4 TB activations",
    "The 2.4 TB of activations",
    "Model FLOPS utilization 60.6%, training time 3.0 days",
    'Prefill FLOPS "35 TFLOPS", generation "17.5 TFLOPS"',
    '"4.5 tok/s"',
    '"16,000+ H100 GPUs across multiple datacenters"',
    '"Optimal efficiency achieved at 64–512 GPU clusters"',
    "Total GPUs required: 128",
    "Daily revenue potential $5,760",
    "$0.001 per 1K tokens at 80%+ utilisation, $0.005 at 40–60%, $0.01+ below 30%",
    "Compute overhead ≈ 20%",
    'Memory reduction "√L ≈ 75%", effective memory 125 GB, batch size 4×, "2–4× larger batch '
    'sizes"',
    "FlashAttention: memory usage 2.1 GB, speed-up 2.8×, memory reduction 65%",
    "from the 10 bytes per parameter above",
    "Tensor Core speedup 3.5×",
    "Current GPU efficiency 75.2%",
    "Memory utilization 68.4%",
    "Training speed 342 tok/s",
    "Cost efficiency $0.045",
    "Overall score 8.4/10",
    "1.2 PFLOPS peak",
    "37% mixed precision savings; 3.5× Tensor Core speedup",
    # Inputs the page chooses, or infers from the seed's figures.
    "the seed calculator's default 4096×4096 GEMM",
    "1,024 H100s reproduce",
    "GPT-3 175B at 2,048 tokens",
    "With one 2,048-token sequence",
    "For one 4,096-token Llama-3-8B sequence",
    "a 2,048-token Llama-3-8B prompt",
    "Llama 3.1 405B at 8,192 tokens",
    "at 40% MFU",
    "On 1,024 GPUs",
    "and 128 H100s",
    "For Llama-2-7B at 4,096 tokens",
    # Formula constants.
    "s·b·h·(34 + 5·a·s/h)",  # Korthikanti et al. 2022, eq. 2
    "PaLM's 12·L·H·Q·T attention term",  # Chowdhery et al. 2022, appendix B
    # Published figures.
    "Large published runs report PaLM 46.2% and Llama 3 38–43%",  # PaLM Table 3; Llama 3 Table 4
    # the same; MegaScale: Jiang et al. 2024, abstract
    "(PaLM 46.2%, Llama 3 38–43%, MegaScale 55.2%)",
    "the ZeRO paper's 7.5B model on 64 GPUs",  # Rajbhandari et al. 2020, Figure 1
    "Up to 16,384 H100s",  # Dubey et al. 2024 (Llama 3), section 3.3.1
    "it reports 38–43% MFU on 8,192 and 16,384 GPUs",  # Dubey et al. 2024, Table 4
    "over 90% effective training time, 466 job interruptions in a 54-day period",  # ibid. 3.3.4
    "its 15.6T tokens",  # Dubey et al. 2024, section 3
    "Chen et al. measured 30% more time",  # Chen et al. 2016, section 5
    "1.5–2× over FlashAttention-2",  # Shah et al. 2024, abstract
)


def test_seed_claims_that_no_gpu_peak_reproduces() -> None:
    """'1.2 PFLOPS' is no GPU's dense BF16 rate; 0.034 ms no GPU's dense or sparse rate
    (the lesson finds 0.0347 ms at best)."""
    from gpulesson.hardware import GPUS

    dense_bf16 = [g.dense("bf16") for g in GPUS.values() if "bf16" in g.peak_flops]
    assert all(round(rate / 1e15, 1) != 1.2 for rate in dense_bf16)
    for spec in GPUS.values():
        for table in (spec.peak_flops, spec.sparse_flops):
            for rate in table.values():
                t = roofline.time(flops=gemm.flops(*N4096), bytes=0, peak_flops=rate,
                                  bandwidth=spec.bandwidth)
                assert round(t * 1e3, 3) != 0.034, (spec.name, rate)


def test_seed_gpt2_parts_exceed_the_total() -> None:
    """The seed's 84.9M 'attention' is L·12d² for GPT-2 small (attention + MLP weights)."""
    cfg = preset("gpt2")
    assert round(cfg.layers * 12 * cfg.hidden**2 / 1e6, 1) == 84.9
    assert 39.0e6 + 84.9e6 + 56.6e6 > param_count(cfg)


def test_seed_dashboard_mixed_precision_saving_is_ten_sixteenths() -> None:
    """'37%' = 1 - 10/16; with Adam the model state saves nothing (ZeRO paper, 3.1)."""
    assert math.floor(100 * (1 - 10 / memory.bytes_per_param("fp32"))) == 37
    assert optimisations.mixed_precision_savings(n_params=N7).saved_fraction == 0


@parametrize(SEED_CORRECTIONS)
def test_seed_corrections_page_numbers(claim: Claim) -> None:
    claim.check(book_page("seed_corrections.md"), "book/seed_corrections.md")


def python_blocks(markdown: str) -> list[str]:
    """The ``python`` code blocks of a page (fenced with backticks or tildes), in order."""
    return [m.group(2) for m in re.finditer(r"^(```|~~~)python\n(.*?)^\1", markdown,
                                            flags=re.M | re.S)]


def test_seed_corrections_calls_run() -> None:
    """The set-up block and each table's folded block of calls run as printed (in one
    namespace, in page order, as a reader pasting them into a notebook would)."""
    blocks = python_blocks((BOOK / "seed_corrections.md").read_text(encoding="utf-8"))
    assert len(blocks) == 11 and "import" in blocks[0]
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, "book/seed_corrections.md", "exec"), namespace)
    assert namespace["N7"] == N7
