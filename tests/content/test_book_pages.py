"""The figures of the narrative pages in ``book/``, each held against the call that
computes it (:mod:`tests.content.claims`), so the pages cannot drift from the code.

Each page's figures are a list of claims: the text as the page's markdown has it and a
call of the calculators (``gpulesson.*``; FP16's limits from NumPy; the Python version
from the repository's own configuration) that must return exactly that text. Every number
in a page's prose must lie inside a claim or inside one of the page's listed non-figures
(``*_NOT_FIGURES``), which are only: inputs the page chooses, the seed pages' quoted
figures that a page corrects, formula constants, and published inputs taken from a paper
or a datasheet (each with its source in a comment); ``NAMES`` holds the numbers inside
names (Llama 3.1, PCIe 5.0, RTX 4090, "16-bit"). The blocks of calculator calls on
book/seed_corrections.md are run as printed.

Pages whose figures are generated hold no hand-written figures and so no claims; the
coverage test still reads their prose. ``book/hardware.md``'s tables are written at build
time by the ``{gpu-table}`` directive (``scripts/gl_calculators.py``) from
``gpulesson/data/gpus.json`` through ``gpulesson.hardware``; ``book/status.md``'s by the
``{machine-status}`` directive (``scripts/gl_status.py``) and MyST-NB's
``{nb-exec-table}``; ``book/calculators.md``'s values by the ``{calculator}`` directives
from the calculator registry.

Sources of the published inputs and figures: the seed pages themselves (their figures,
quoted as the claims under test); GPT-3 (Brown et al. 2020: 174.6B parameters, 300B
tokens, 3.14e23 FLOPs, 3.2M-token batch); the ZeRO paper (Rajbhandari et al. 2020, section
3.1 and Figure 1: 16 bytes per parameter, the 7.5B model on 64 GPUs); Korthikanti et al.
2022 (activation bytes per layer); the NVIDIA and AMD datasheets of
``gpulesson/data/gpus.json``; the Llama 3 paper (Dubey et al. 2024: 16,384 H100s, TP 8 x
PP 16, 15.6T tokens); FlashAttention-3 (Shah et al. 2024: 740 TFLOP/s FP16); Chen et al.
2016 (sqrt(n) checkpointing); the cost lesson's dated inputs (DGX H100 10.2 kW, EIA 2023
industrial tariff, Uptime 2023 PUE, AWS p5 July 2023).
"""

from __future__ import annotations

import functools
import math
import re
from pathlib import Path

import numpy as np
import pytest

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
    precision,
    prices,
    roofline,
    transformer,
    units,
)
from gpulesson.course import SLUGS
from gpulesson.hardware import gpu
from gpulesson.precision import float_format
from gpulesson.transformer import non_embedding_params, param_count, preset

from .claims import (
    REPO,
    Claim,
    claims,
    markdown_of,
    page,
    parametrize,
    rendered,
    uncovered_figures,
)
from .study_time import study_minutes

BOOK = REPO / "book"
H100 = gpu("H100 SXM")
A100 = gpu("A100 80GB")
RTX = gpu("RTX 4090")
L27 = preset("llama-2-7b")
L38 = preset("llama-3-8b")
L370 = preset("llama-3-70b")
L405 = preset("llama-3.1-405b")
L270 = preset("llama-2-70b")
GPT3 = preset("gpt3-175b")
N7 = param_count(L27)
W7_FP16 = memory.weight_bytes(7e9, precision="fp16")  # the seed's "7B in FP16", 14 GB
PEAK = H100.dense("bf16")
KIB = 1024
FP16 = np.finfo(np.float16)
GPU_MEMORY = 80e9
N4096 = (4096, 4096, 4096)


def _pct(x: float, digits: int = 0) -> str:
    return f"{100 * x:.{digits}f}%"


def _int(x: float) -> str:
    return f"{x:,.0f}"


def _usd(x: float) -> str:
    return units.format_usd(x, cents=False)


def _gb(n_bytes: float) -> str:
    return units.format_bytes(n_bytes)


def _gemm_time(dtype: str, bytes_per_element: int) -> str:
    a = gemm.analyse(*N4096, peak_flops=H100.dense(dtype), bandwidth=H100.bandwidth,
                     bytes_per_element=bytes_per_element)
    return units.format_seconds(a.time)


def _gemm_time_us() -> str:
    a = gemm.analyse(*N4096, peak_flops=H100.peak_flops["bf16"], bandwidth=H100.bandwidth)
    return f"{a.time * 1e6:.1f} µs"


def _gpt3_activations() -> float:
    return 96 * memory.activation_bytes_per_layer(seq_len=2048, batch=1, hidden=12288,
                                                  heads=96)


def _seed_activation_formula(b: int, s: int, h: int, layers: int, p: float = 1) -> float:
    """The seed page's formula as printed, B·S·H·L·(16 + 2/p) bytes (p undefined there)."""
    return b * s * h * layers * (16 + 2 / p)


def _long_llama_ratio() -> float:
    """Korthikanti et al.'s count over the seed formula, Llama-2-7B at 32,768 tokens."""
    ours = L27.layers * memory.activation_bytes_per_layer(seq_len=32768, batch=1,
                                                          hidden=L27.hidden, heads=L27.heads)
    return ours / _seed_activation_formula(1, 32768, L27.hidden, L27.layers)


def _crossover(cfg: transformer.TransformerConfig) -> float:
    return inference.attention_crossover_tokens(param_count(cfg), layers=cfg.layers,
                                                heads=cfg.heads, head_dim=cfg.head_dim)


def _attention_share_405b() -> float:
    att = flops.attention_flops_per_token(layers=L405.layers, heads=L405.heads,
                                          head_dim=L405.head_dim, seq_len=8192)
    return att / flops.flops_per_token(param_count(L405))


def _decode_ceiling(weight_bytes: float, bandwidth: float) -> float:
    return inference.decode_ceiling_tokens_per_second(weight_bytes=weight_bytes,
                                                      bandwidth=bandwidth)


def _zero(stage: int) -> float:
    return distributed.zero_memory_per_gpu(7.5e9, stage=stage, dp=64)


def _hidden_size_kv(cfg: transformer.TransformerConfig, seq_len: int) -> int:
    """The seed's KV formula B·S·H·L·2·bytes with H the hidden size (FP16, batch 1)."""
    return 1 * seq_len * cfg.hidden * cfg.layers * 2 * 2


def _gpt3_fp32_state() -> memory.MemoryBreakdown:
    return memory.training_memory(GPT3, batch=1, seq_len=2048, precision="fp32",
                                  memory_per_gpu=GPU_MEMORY)


def _llama8b_prefill() -> tuple[float, float]:
    n = param_count(L38)
    shape = {"layers": L38.layers, "heads": L38.heads, "head_dim": L38.head_dim}
    work = inference.prefill_flops(n, 2048, **shape)
    seconds = inference.prefill_time(n_params=n, tokens=2048, peak_flops=PEAK,
                                     bandwidth=H100.bandwidth,
                                     weight_bytes=memory.weight_bytes(n), **shape)
    return work, seconds


def _pcie5_each_way() -> float:
    return gpu("H100 PCIe").interconnect_bandwidth / 2


def _compute_per_step(n_params: float, batch_tokens: float, n_gpus: int) -> float:
    """Seconds of compute per step when ``n_gpus`` H100s at 40% MFU share a batch."""
    return flops.training_time(flops.training_flops(n_params, batch_tokens), n_gpus, PEAK,
                               0.40)


#: The inputs that reproduce the seed's scaling figures, as lesson 7 names them (with 175B
#: FP16 gradients): GPUs, bandwidth in bytes/s, seconds of compute per step.
SEED_SCALING = {"gpus": 8, "bandwidth": 50e9, "compute": 0.1}


def _seed_scaling() -> tuple[float, float, float, float]:
    """The seed's scaling figures from the inputs lesson 7 names (175B FP16, 8 GPUs,
    50 GB/s, 0.1 s of compute)."""
    gpus, bandwidth = SEED_SCALING["gpus"], SEED_SCALING["bandwidth"]
    volume = distributed.allreduce_bytes_per_rank(memory.weight_bytes(175e9,
                                                                      precision="fp16"), gpus)
    comm = distributed.data_parallel_sync_time(175e9, dp=gpus, bandwidth=bandwidth)
    efficiency = distributed.scaling_efficiency(SEED_SCALING["compute"], comm)
    return volume, comm, efficiency, distributed.effective_speedup(gpus, efficiency)


def _gpt3_batch_efficiency(layout: str) -> float:
    gpt3_batch = 3.2e6  # tokens per step (Brown et al. 2020, Table 2.1)
    if layout == "dp8":
        comm = distributed.data_parallel_sync_time(175e9, dp=8, bandwidth=50e9)
        return distributed.scaling_efficiency(_compute_per_step(175e9, gpt3_batch, 8), comm)
    compute = _compute_per_step(175e9, gpt3_batch, 1024)
    if layout == "zero3":
        comm = distributed.data_parallel_sync_time(175e9, dp=1024, zero_stage=3,
                                                   bandwidth=50e9)
    else:
        shard = distributed.params_per_gpu(175e9, tp=8, pp=8)
        comm = distributed.data_parallel_sync_time(shard, dp=16, zero_stage=1,
                                                   bandwidth=50e9)
    return distributed.scaling_efficiency(compute, comm)


#: The inputs that reproduce the seed's TCO figures, as lesson 8 names them (and $48 an
#: hour of cloud, ``SEED_CLOUD_USD_PER_HOUR``).
SEED_TCO = {"hardware_usd": 240_000, "power_watts": 30_000, "usd_per_kwh": 0.10, "pue": 1.4}
SEED_CLOUD_USD_PER_HOUR = 48


def _seed_tco() -> dict[str, float]:
    """The seed's TCO figures from the inputs lesson 8 names."""
    seed, rent = SEED_TCO, SEED_CLOUD_USD_PER_HOUR
    return {
        "power": cost.on_prem_breakdown(years=1, **seed).power,
        "hourly power": cost.power_cost(power_watts=seed["power_watts"],
                                        usd_per_kwh=seed["usd_per_kwh"], hours=1,
                                        pue=seed["pue"]),
        "own": cost.on_prem_tco(years=5, **seed),
        "cloud": cost.cloud_cost(usd_per_hour=rent, years=5),
        "no power": cost.breakeven_months(**{**seed, "power_watts": 0},
                                          cloud_usd_per_hour=rent),
        "with power": cost.breakeven_months(cloud_usd_per_hour=rent, **seed),
        "half busy": cost.breakeven_months(cloud_usd_per_hour=rent, utilization=0.5, **seed),
    }


def _dgx_year() -> float:
    ex = calculators.si_inputs("tco")  # DGX H100, EIA 2023 average, Uptime 2023 PUE
    return cost.on_prem_breakdown(hardware_usd=ex["hardware_usd"],
                                  power_watts=ex["power_watts"],
                                  usd_per_kwh=ex["usd_per_kwh"], years=1,
                                  pue=ex["pue"]).power


def _mistral_batch_gain(batch: int) -> float:
    """How many times cheaper a token of Mistral 7B is at ``batch`` than at batch 1."""
    cfg = preset("mistral-7b")
    n = param_count(cfg)
    kv = inference.kv_cache_bytes(cfg, seq_len=2048)

    def per_1k(b: int) -> float:
        step = inference.decode_step_time(n_params=n, weight_bytes=memory.weight_bytes(n),
                                          batch=b, kv_bytes_per_sequence=kv,
                                          peak_flops=PEAK, bandwidth=H100.bandwidth)
        return cost.cost_per_1k_tokens(usd_per_gpu_hour=2.5, gpus=1,
                                       tokens_per_second=b / step)

    return per_1k(1) / per_1k(batch)


def _seed_per_1k(utilization: float = 1.0) -> float:
    """The seed's $0.083 per 1K tokens: 288,000 tokens/h on 4 GPUs at $6 per GPU-hour,
    with the GPUs busy ``utilization`` of the paid hours."""
    return cost.cost_per_1k_tokens(usd_per_gpu_hour=6, gpus=4,
                                   tokens_per_second=288_000 / 3600 * utilization)


def _parts(precision: str) -> str:
    s = memory.model_state_bytes(precision)
    return f"{s.weights} + {s.gradients} + {s.optimizer}"


def _days(n_params: float, tokens: float, n_gpus: int, mfu: float) -> float:
    """Days to train on ``n_gpus`` H100s at ``mfu`` of the dense BF16 peak."""
    return flops.training_days(flops.training_flops(n_params, tokens), n_gpus, PEAK, mfu)


def _plan_days(mfu: float) -> float:
    return _days(N7, 2e12, 64, mfu)


def _h100_tokens_per_second(n_params: float) -> float:
    """Training tokens/s of one H100 at 40% MFU."""
    return flops.tokens_per_second(n_devices=1, peak_flops=PEAK, mfu=0.4,
                                   flops_per_token=flops.flops_per_token(n_params))


def _one_h100_tokens() -> float:
    return _h100_tokens_per_second(N7)


def _dashboard_price() -> float:
    return calculators.si_inputs("cost_per_token")["usd_per_gpu_hour"]


def _planner_price() -> float:
    """The planning dashboard's H100 price: the GPU's dated default quote (gpulesson.prices)."""
    return calculators.si_inputs("planning")["usd_per_gpu_hour"]


def _per_1k_at(usd_per_gpu_hour: float, tokens_per_second: float) -> float:
    return cost.cost_per_1k_tokens(usd_per_gpu_hour=usd_per_gpu_hour, gpus=1,
                                   tokens_per_second=tokens_per_second)


def _ratio(name: str) -> str:
    g = gpu(name)
    return f"{g.dense('fp16') / g.dense('fp32'):.1f}×"


def _tflops(rate: float) -> str:
    return f"{rate / 1e12:,.1f}"


def _this_test() -> str:
    """The pages' pointer to this file."""
    return f"A test (`{Path(__file__).resolve().relative_to(REPO).as_posix()}`)"


def _mixed_state_parts() -> str:
    """Mixed precision's bytes per parameter, part by part: 16-bit weights and gradients,
    an FP32 master copy and Adam's two FP32 moments (the ZeRO paper's K = 12, section 3.1)."""
    s = memory.model_state_bytes("mixed")
    fp32 = float_format("fp32").storage_bytes
    moment = (s.optimizer - fp32) / 2
    return (f"keeps {s.weights} bytes of {8 * s.weights}-bit weights, {s.gradients} bytes of "
            f"{8 * s.gradients}-bit gradients, a {fp32:.0f}-byte FP32 master copy and two "
            f"{moment:.0f}-byte Adam moments: **{memory.bytes_per_param('mixed')} bytes per "
            "parameter**")


def _fp32_state_parts() -> str:
    """FP32 training's bytes per parameter: weights, gradients and Adam's two moments."""
    s = memory.model_state_bytes("fp32")
    return (f"also needs {memory.bytes_per_param('fp32')} ({s.weights} + {s.gradients} + "
            f"{s.optimizer // 2} + {s.optimizer // 2}, no master copy)")


def _llama7b_state_vs_gpu() -> str:
    """Llama-2-7B's model state against one H100's memory."""
    state = memory.training_memory(L27, batch=1, seq_len=1)
    state_bytes = state.total - state.activations
    word = "more" if state_bytes > H100.memory_bytes else "less"
    return f"{word} than one {H100.memory_bytes / 1e9:.0f} GB GPU holds"


def _gpt3_layers_store() -> str:
    per_layer = memory.activation_bytes_per_layer(seq_len=2048, batch=1, hidden=GPT3.hidden,
                                                  heads=GPT3.heads)
    return f"the {GPT3.layers} layers store {_gb(GPT3.layers * per_layer)} per sequence"


CONVENTIONS = claims(
    ("48 FLOPs", lambda: f"{gemm.flops(2, 3, 4)} FLOPs"),
    ("137.4 GFLOP", lambda: units.format_flops(gemm.flops(*N4096), digits=1)),
    ("989.4 TFLOP/s", lambda: units.format_flop_rate(H100.peak_flops["bf16"])),
    ("138.9 µs", _gemm_time_us),
    ("100.7 MB", lambda: _gb(gemm.min_bytes(*N4096, 2))),
    ("1,978.9 TFLOP/s", lambda: f"{H100.sparse_flops['bf16'] / 1e12:,.1f} TFLOP/s"),
    ("43% MFU", lambda: _pct(flops.utilization(430e12, H100.peak_flops["bf16"])) + " MFU"),
    ("look like 22%", lambda: "look like " + _pct(flops.utilization(
        430e12, H100.sparse_flops["bf16"]))),
    ("6,738,415,616 parameters", lambda: _int(param_count(L27)) + " parameters"),
    ("13,476,831,232 bytes", lambda: _int(memory.weight_bytes(param_count(L27))) + " bytes"),
    ("13.5 GB or 12.6 GiB", lambda: _gb(memory.weight_bytes(param_count(L27)))
     + " or " + units.format_bytes(memory.weight_bytes(param_count(L27)), binary=True)),
    ("3.35 TB/s", lambda: units.format_bandwidth(H100.bandwidth)),
    ("900 GB/s both ways", lambda: units.format_bandwidth(H100.interconnect_bandwidth, digits=0)
     + " both ways"),
    ("450 GB/s each way", lambda: units.format_bandwidth(H100.interconnect_bandwidth / 2,
                                                         digits=0) + " each way"),
    ('`memory.bytes_per_param("mixed")` is 16',
     lambda: f'`memory.bytes_per_param("mixed")` is {memory.bytes_per_param("mixed")}'),
    ('`memory.bytes_per_param("fp32")` is 16',
     lambda: f'`memory.bytes_per_param("fp32")` is {memory.bytes_per_param("fp32")}'),
    ("is 18", lambda: f'is {memory.bytes_per_param("mixed_fp32_grads")}'),
    ("107.8 GB", lambda: _gb(memory.training_memory(L27, batch=1, seq_len=1).total
                             - memory.training_memory(L27, batch=1, seq_len=1).activations)),
    ("`5·a·s/h` is 80", lambda: f"`5·a·s/h` is {5 * 96 * 2048 // 12288}"),
    ("275.4 GB", lambda: _gb(_gpt3_activations())),
    ("512 KiB per token", lambda: f"{inference.kv_cache_bytes_per_token(L27) // KIB} KiB per "
                                  "token"),
    ("needs 128 KiB", lambda: f"needs {inference.kv_cache_bytes_per_token(L38) // KIB} KiB"),
    ("536,870,912 bytes (512.0 MiB)", lambda: _int(inference.kv_cache_bytes(L38, seq_len=4096))
     + " bytes (" + units.format_bytes(inference.kv_cache_bytes(L38, seq_len=4096),
                                       binary=True) + ")"),
    ("124,439,808 parameters", lambda: _int(param_count(preset("gpt2"))) + " parameters"),
    ("85,056,000 are not", lambda: _int(non_embedding_params(preset("gpt2"))) + " are not"),
    ("3.14e23", lambda: f"{flops.training_flops(param_count(GPT3), 300e9):.2e}"
     .replace("e+", "e")),
    ("174.6B", lambda: f"{param_count(GPT3) / 1e9:.1f}B"),
    ("adds 8.3%", lambda: "adds " + _pct(_attention_share_405b(), 1)),
    ("on demand in July 2023: $98.32 an hour, $12.29 per GPU-hour",
     lambda: "on demand in July 2023: "
     f"{units.format_usd(calculators.si_inputs('tco')['cloud_usd_per_hour'])} an hour, "
     f"{units.format_usd(_dashboard_price())} per GPU-hour"),
    ("2,400 tokens per second at $12.29 an hour costs $0.00142 per 1,000 tokens",
     lambda: f"2,400 tokens per second at ${_dashboard_price()} an hour costs "
     f"${_per_1k_at(_dashboard_price(), 2400):.5f} per 1,000 tokens"),
    ("at $2.50 an hour, $0.000289", lambda: f"at $2.50 an hour, ${_per_1k_at(2.5, 2400):.6f}"),
    # The page's pointer to this file, and the figures around the worked examples.
    ("A test (`tests/content/test_book_pages.py`)", _this_test),
    ('datasheet\'s "1,979 teraFLOPS" for BF16', lambda: "datasheet's \""
     f"{H100.sparse_flops['bf16'] / 1e12:,.0f} teraFLOPS\" for BF16"),
    ("1 GiB is 1.074 GB", lambda: "1 GiB is "
     + units.format_bytes(units.parse_quantity("1 GiB", "bytes"), digits=3)),
    ("keeps 2 bytes of 16-bit weights, 2 bytes of 16-bit gradients, a 4-byte FP32 master copy "
     "and two 4-byte Adam moments: **16 bytes per parameter**", _mixed_state_parts),
    ("also needs 16 (4 + 4 + 4 + 4, no master copy)", _fp32_state_parts),
    ("makes it 18", lambda: f"makes it {memory.bytes_per_param('mixed_fp32_grads')}"),
    ("more than one 80 GB GPU holds", _llama7b_state_vs_gpu),
    ("the 96 layers store 275.4 GB per sequence", _gpt3_layers_store),
    ("Llama-2-7B at 4,096 tokens keeps 17.3 GB, where the GPT formula says 104.2 GB",
     lambda: "Llama-2-7B at 4,096 tokens keeps "
     f"{_gb(memory.training_memory(L27, batch=1, seq_len=4096).activations)}, where the GPT "
     f"formula says {_gb(_gpt_block_activations(L27))}"),
    ("Llama-2-7B (32 KV heads)", lambda: f"Llama-2-7B ({L27.kv_heads} KV heads)"),
    ("Llama-3-8B (8 KV heads)", lambda: f"Llama-3-8B ({L38.kv_heads} KV heads)"),
    ("`cost.cost_per_1k_tokens(usd_per_gpu_hour=12.29, gpus=1, tokens_per_second=2400)`",
     lambda: f"`cost.cost_per_1k_tokens(usd_per_gpu_hour={_dashboard_price()}, gpus=1, "
     "tokens_per_second=2400)`"),
)

#: Numbers of book/conventions.md's prose that are not results.
CONVENTIONS_NOT_FIGURES = (
    # Inputs the page chooses for its worked examples.
    "A 4,096-token Llama-3-8B sequence",
    "Llama 3.1 405B at 8,192 tokens",
    # Formula constants.
    "powers of 10",
    "the 34 of everything else",  # Korthikanti et al. 2022, eq. 2: s·b·h·(34 + 5·a·s/h)
    # Published inputs.
    "430 TFLOP/s per GPU",  # Dubey et al. 2024 (Llama 3), Table 4
)

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


def _latent_values() -> str:
    """DeepSeek-V3's cached values per layer and token, latent and multi-head."""
    cfg = transformer.preset("deepseek-v3")
    mha = inference.multi_head_equivalent(cfg)

    def per_layer(c: transformer.TransformerConfig) -> int:
        return inference.kv_cache_bytes_per_token(c, bytes_per_element=1) // c.layers

    return (f"DeepSeek-V3 caches {per_layer(cfg)} values per layer and token, where its "
            f"{mha.kv_heads} heads of {mha.head_dim} would keep {per_layer(mha):,}")


def _gpt_block_activations(cfg: transformer.TransformerConfig, **kw: str) -> int:
    """All layers counted as GPT blocks (Korthikanti et al. 2022), one 4,096-token
    sequence."""
    return cfg.layers * memory.activation_bytes_per_layer(
        seq_len=4096, batch=1, hidden=cfg.hidden, heads=cfg.heads, **kw)


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
    quotes = sorted((q for q in prices.QUOTES if q.gpu == "H100 SXM" and q.provider == "AWS"),
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
    ("an H100 SXM holds 270,336 resident threads (132 SMs of 2,048), a B200 303,104 (148 of "
     "2,048)",
     lambda: "an H100 SXM holds {:,} resident threads ({} SMs of {:,}), a B200 {:,} ({} of "
     "{:,})".format(*_resident("H100 SXM"), *_resident("B200"))),
    ("6,738,415,616 parameters", lambda: _int(N7) + " parameters"),
    ("dense BF16 rate, 989.4 TFLOP/s", lambda: "dense BF16 rate, "
     + units.format_flop_rate(PEAK)),
    ("A test (`tests/content/test_book_pages.py`)", _this_test),
    # Lesson 1: the seed lesson's worked numbers.
    ("2·M·K·N = 48 FLOPs | Right: 48 FLOPs", lambda: f"2·M·K·N = {gemm.flops(2, 3, 4)} FLOPs "
     f"| Right: {gemm.flops(2, 3, 4)} FLOPs"),
    ("4,096 workers give 19.9×", lambda: f"4,096 workers give "
     f"{roofline.amdahl_speedup(0.05, 4096):.1f}×"),
    ("no number of cores gives more than 20×", lambda: "no number of cores gives more than "
     f"{roofline.amdahl_speedup(0.05, 1e12):.0f}×"),
    ("one user: 239.3 tokens/s", lambda: f"one user: {_decode_ceiling(14e9, 3.35e12):.1f} "
     "tokens/s"),
    ("112.0 GB for 7e9 parameters", lambda: f"{_gb(7e9 * memory.bytes_per_param('mixed'))} "
     "for 7e9 parameters"),
    ("A 7B model in FP16 (14 GB) decodes at most about 239 tokens/s on 3.35 TB/s",
     lambda: f"A 7B model in FP16 ({units.format_bytes(W7_FP16, digits=0)}) decodes at most "
     f"about {_decode_ceiling(W7_FP16, H100.bandwidth):.0f} tokens/s on "
     + units.format_bandwidth(H100.bandwidth)),
    ("Full training of a 7B model needs about 16 bytes per parameter, 112 GB",
     lambda: "Full training of a 7B model needs about "
     f"{memory.bytes_per_param('mixed')} bytes per parameter, "
     + units.format_bytes(7e9 * memory.bytes_per_param("mixed"), digits=0)),
    # Lesson 2: the GEMM calculator and the GPU table.
    ("137.4 GFLOP, not a rate", lambda: units.format_flops(gemm.flops(*N4096), digits=1)
     + ", not a rate"),
    ("201.3 MB and 682.7 FLOP per byte", lambda: f"{_gb(gemm.min_bytes(*N4096, 4))} and "
     f"{gemm.arithmetic_intensity(*N4096, 4):.1f} FLOP per byte"),
    ("(β ≠ 0), 268.4 MB", lambda: "(β ≠ 0), " + _gb(gemm.min_bytes(*N4096, 4, read_c=True))),
    ("In BF16, 100.7 MB and 1,365.3 FLOP per byte", lambda: "In BF16, "
     f"{_gb(gemm.min_bytes(*N4096, 2))} and {gemm.arithmetic_intensity(*N4096, 2):,.1f} "
     "FLOP per byte"),
    ("Would need 4.0 PFLOP/s", lambda: "Would need "
     + units.format_flop_rate(gemm.flops(*N4096) / 0.034e-3)),
    ("2.05 ms on the FP32 cores", lambda: _gemm_time("fp32", 4) + " on the FP32 cores"),
    ("278 µs on the tensor cores in TF32", lambda: _gemm_time("tf32", 4)
     + " on the tensor cores in TF32"),
    ("stored in BF16, 139 µs", lambda: "stored in BF16, " + _gemm_time("bf16", 2)),
    ("dense FP16 and BF16 is 989.4 TFLOP/s", lambda: "dense FP16 and BF16 is "
     + units.format_flop_rate(H100.dense("fp16"))),
    ('H100 SXM FP16 "1,979"', lambda: f'H100 SXM FP16 "{H100.sparse_flops["fp16"] / 1e12:,.0f}"'),
    ("dense 312 the table suggests 6.3 times; dense against dense it is 3.2 times",
     lambda: f"dense {A100.dense('fp16') / 1e12:.0f} the table suggests "
     f"{H100.sparse_flops['fp16'] / A100.dense('fp16'):.1f} times; dense against dense it is "
     f"{H100.dense('fp16') / A100.dense('fp16'):.1f} times"),
    ("165.2 TFLOP/s with FP32 accumulation, 330.3 with FP16 accumulation",
     lambda: f"{units.format_flop_rate(RTX.dense('fp16'))} with FP32 accumulation, "
     f"{_tflops(RTX.other_flops['fp16_fp16_accumulate'])} with FP16 accumulation"),
    ("bandwidth 1,008 GB/s", lambda: f"bandwidth {RTX.bandwidth / 1e9:,.0f} GB/s"),
    ('FP32 "35" TFLOPS | 82.6 TFLOP/s', lambda: 'FP32 "35" TFLOPS | '
     + units.format_flop_rate(RTX.dense("fp32"))),
    ("ceiling 14.8 times over FP32", lambda: "ceiling "
     f"{H100.dense('bf16') / H100.dense('fp32'):.1f} times over FP32"),
    ('"137.4 GFLOPS" | Right, as a count', lambda: f'"{gemm.flops(*N4096) / 1e9:.1f} GFLOPS" '
     "| Right, as a count"),
    ('"201.3 MB", "682.7 ops/byte" | Right as the minimum traffic, for 4-byte (FP32) elements',
     lambda: f'"{_gb(gemm.min_bytes(*N4096, 4))}", '
     f'"{gemm.arithmetic_intensity(*N4096, 4):.1f} ops/byte" | Right as the minimum traffic, '
     f"for {float_format('fp32').storage_bytes:.0f}-byte (FP32) elements"),
    ('RTX 4090 FP16 "165" TFLOPS, "1.0 TB/s"', lambda: f'{RTX.name} FP16 '
     f'"{RTX.dense("fp16") / 1e12:.0f}" TFLOPS, '
     f'"{units.format_bandwidth(RTX.bandwidth, digits=1)}"'),
    # Lesson 4: memory.
    ("124,439,808 parameters. The parts are 39.4M, 28.3M and 56.7M",
     lambda: _int(param_count(preset("gpt2"))) + " parameters. The parts are "
     + ", ".join(f"{transformer.param_breakdown(preset('gpt2'))[k] / 1e6:.1f}M"
                 for k in ("embedding", "attention")) + " and "
     + f"{transformer.param_breakdown(preset('gpt2'))['mlp'] / 1e6:.1f}M"),
    ("84.9M is L·12d²", lambda: f"{12 * 768**2 * 12 / 1e6:.1f}M is L·12d²"),
    ("add up to 180.5M", lambda: f"add up to {39.0 + 84.9 + 56.6:.1f}M"),
    ("With Adam both are 16", lambda: "With Adam both are "
     + " and ".join(sorted({str(memory.bytes_per_param(p)) for p in ("mixed", "fp32")}))),
    ("2 + 2 + 12 in mixed precision", lambda: _parts("mixed") + " in mixed precision"),
    ("4 + 4 + 8 in FP32", lambda: _parts("fp32") + " in FP32"),
    ("18 with FP32 gradients", lambda: f"{memory.bytes_per_param('mixed_fp32_grads')} with "
     "FP32 gradients"),
    ("in 67.4 GB on one 80 GB GPU; the real 107.8 GB does not fit",
     lambda: f"in {_gb(10 * N7)} on one {GPU_MEMORY / 1e9:.0f} GB GPU; the real "
     f"{_gb(N7 * memory.bytes_per_param())} does "
     + ("not fit" if not memory.fits(N7 * memory.bytes_per_param(), GPU_MEMORY)
        and memory.fits(10 * N7, GPU_MEMORY) else "fit")),
    ("stores 275.4 GB, 6.3 times the formula's 43.5 GB (p = 1)",
     lambda: f"stores {_gb(_gpt3_activations())}, "
     f"{_gpt3_activations() / _seed_activation_formula(1, 2048, 12288, 96):.1f} times the "
     f"formula's {_gb(_seed_activation_formula(1, 2048, 12288, 96))} (p = 1)"),
    ("at 32,768 tokens, 73 times", lambda: f"at 32,768 tokens, {_long_llama_ratio():.0f} times"),
    ("cuts GPT-3's activations by 70%", lambda: "cuts GPT-3's activations by " + _pct(
        1 - memory.activation_bytes_per_layer(
            seq_len=2048, batch=1, hidden=12288, heads=96, tp=8, sequence_parallel=True,
            recompute="selective") / memory.activation_bytes_per_layer(
            seq_len=2048, batch=1, hidden=12288, heads=96, tp=8, sequence_parallel=True))),
    ("698.4 GB + 698.4 GB + 1.4 TB", lambda: " + ".join(
        _gb(getattr(_gpt3_fp32_state(), k)) for k in ("weights", "gradients", "optimizer"))),
    ("(275.4 GB of activations) it needs at least 39 GPUs",
     lambda: f"({_gb(_gpt3_fp32_state().activations)} of activations) it needs at least "
     f"{_gpt3_fp32_state().gpus_needed} GPUs"),
    ("5.2 TB, 65 GPUs of 80 GB", lambda: f"5.2 TB, {math.ceil(5.2e12 / GPU_MEMORY)} GPUs of "
     "80 GB"),
    ("124.4M in total | The total is right", lambda: f"{param_count(preset('gpt2')) / 1e6:.1f}M "
     "in total | The total is right"),
    ("vs FP32: 16 bytes/param", lambda: f"vs FP32: {memory.bytes_per_param('fp32')} bytes/param"),
    ("700 GB parameters, 700 GB gradients, 1,400 GB optimizer", _seed_gpt3_state),
    # Lesson 5: FLOPs.
    ("GPT-3: 3.14e23 FLOPs with its 174.6B parameters",
     lambda: f"GPT-3: {flops.training_flops(param_count(GPT3), 300e9):.2e}".replace("e+", "e")
     + f" FLOPs with its {param_count(GPT3) / 1e9:.1f}B parameters"),
    ("attention adds 8.3%", lambda: "attention adds " + _pct(_attention_share_405b(), 1)),
    ("1.05e12 FLOPs per token, a count", lambda: f"{flops.flops_per_token(175e9):.2e}"
     .replace("e+", "e") + " FLOPs per token, a count"),
    ("3.15 × 10²³ | Right for exactly 175B parameters; GPT-3's own figure is 3.14e23",
     lambda: f"{flops.training_flops(175e9, 300e9) / 1e23:.2f} × 10²³ | Right for exactly "
     f"175B parameters; GPT-3's own figure is "
     + f"{flops.training_flops(param_count(GPT3), 300e9):.2e}".replace("e+", "e")),
    ("reproduce 3.0 days only at 60.6% of the 2:4-sparse peak",
     lambda: f"reproduce {flops.training_days(3.15e23, 1024, H100.sparse_flops['bf16'], 0.606):.1f}"
     " days only at 60.6% of the 2:4-sparse peak"),
    ("the same MFU means 5.9 days, and at 40% MFU 9.0 days",
     lambda: f"the same MFU means {flops.training_days(3.15e23, 1024, PEAK, 0.606):.1f} days,"
     f" and at 40% MFU {flops.training_days(3.15e23, 1024, PEAK, 0.40):.1f} days"),
    ('FLOPS per token "1.05 TFLOPS"', lambda: "FLOPS per token "
     f'"{flops.flops_per_token(175e9) / 1e12:.2f} TFLOPS"'),
    # Lesson 6: inference.
    ("formula gives 2,147,483,648 bytes", lambda: "formula gives "
     + _int(_hidden_size_kv(L38, 4096)) + " bytes"),
    ("need 536,870,912, four times less (eight times less for Llama-3-70B)",
     lambda: "need " + _int(inference.kv_cache_bytes(L38, seq_len=4096)) + ", "
     + {4: "four", 8: "eight"}[_hidden_size_kv(L38, 4096)
                               // inference.kv_cache_bytes(L38, seq_len=4096)]
     + " times less (" + {4: "four", 8: "eight"}[_hidden_size_kv(L370, 4096)
                                                 // inference.kv_cache_bytes(L370, seq_len=4096)]
     + " times less for Llama-3-70B)"),
    ("25,705 tokens for Llama-2-7B (53,828 for Llama-3-70B)",
     lambda: f"{_crossover(L27):,.0f} tokens for Llama-2-7B ({_crossover(L370):,.0f} for "
     "Llama-3-70B)"),
    ("At 2,048 tokens attention adds 8.0%", lambda: "At 2,048 tokens attention adds "
     + _pct(2048 / _crossover(L27), 1)),
    ("35.09 TFLOP of work, which takes 35.5 ms at 989.4 TFLOP/s",
     lambda: f"{_llama8b_prefill()[0] / 1e12:.2f} TFLOP of work, which takes "
     f"{_llama8b_prefill()[1] * 1e3:.1f} ms at {units.format_flop_rate(PEAK)}"),
    ("from 4.6 tokens/s with its weights streamed over PCIe 5.0 (64 GB/s each way) to "
     "239.3 tokens/s",
     lambda: f"from {_decode_ceiling(W7_FP16, _pcie5_each_way()):.1f} tokens/s with its "
     f"weights streamed over PCIe 5.0 ({_pcie5_each_way() / 1e9:.0f} GB/s each way) to "
     f"{_decode_ceiling(W7_FP16, H100.bandwidth):.1f} tokens/s"),
    # Lesson 7: distributed.
    ("each of 8 ranks 24.5 GB", lambda: "each of 8 ranks "
     + _gb(distributed.allreduce_bytes_per_rank(14e9, 8))),
    ("32 micro-batches idle 21.9%", lambda: "32 micro-batches idle "
     + _pct(distributed.pipeline_bubble_fraction(8, 32), 1)),
    ("cut it to 5.5%", lambda: "cut it to " + _pct(distributed.pipeline_bubble_fraction(8, 32, 4),
                                                   1)),
    ("120.0 GB, 31.4 GB, 16.6 GB and 1.9 GB per GPU for stages 0 to 3, savings of 3.8×, "
     "7.2× and 64×",
     lambda: f"{_gb(_zero(0))}, {_gb(_zero(1))}, {_gb(_zero(2))} and {_gb(_zero(3))} per GPU "
     f"for stages 0 to 3, savings of {_zero(0) / _zero(1):.1f}×, {_zero(0) / _zero(2):.1f}× "
     f"and {_zero(0) / _zero(3):.0f}×"),
    ("Communication volume 612.5 GB, time 12.25 s, scaling efficiency 0.8%, effective "
     "speed-up 0.06×",
     lambda: f"Communication volume {_gb(_seed_scaling()[0])}, time {_seed_scaling()[1]} s, "
     f"scaling efficiency {_pct(_seed_scaling()[2], 1)}, effective speed-up "
     f"{_seed_scaling()[3]:.2f}×"),
    ("175B FP16 gradients (350 GB)", lambda: "175B FP16 gradients ("
     + units.format_bytes(memory.weight_bytes(175e9, precision="fp16"), digits=0) + ")"),
    ("trains a 175B model on 38 tokens", lambda: "trains a 175B model on "
     f"{0.1 * _h100_tokens_per_second(175e9):.0f} tokens"),
    ("8 GPUs compute 1,061 s per step and the same exchange leaves them 98.9% efficient",
     lambda: f"8 GPUs compute {_compute_per_step(175e9, 3.2e6, 8):,.0f} s per step and the "
     f"same exchange leaves them {_pct(_gpt3_batch_efficiency('dp8'), 1)} efficient"),
    ("175B's 2.8 TB of training state: at least 35 GPUs",
     lambda: f"175B's {_gb(175e9 * memory.bytes_per_param())} of training state: at least "
     f"{memory.gpus_needed(175e9 * memory.bytes_per_param(), GPU_MEMORY)} GPUs"),
    ("ZeRO-3 alone is 28.3% efficient", lambda: "ZeRO-3 alone is "
     + _pct(_gpt3_batch_efficiency("zero3"), 1) + " efficient"),
    ("over the remaining 16, 97.6%", lambda: "over the remaining "
     f"{1024 // (8 * 8)}, {_pct(_gpt3_batch_efficiency('3d'), 1)}"),
    ("tensor 8 × pipeline 16 = 128 GPUs", lambda: f"tensor 8 × pipeline 16 = {8 * 16} GPUs"),
    ("the run used 64 to 128 replicas", lambda: f"the run used {8_192 // 128} to "
     f"{16_384 // 128} replicas"),
    ("needs at least 82 H100s", lambda: "needs at least "
     f"{memory.gpus_needed(param_count(L405) * memory.bytes_per_param(), H100.memory_bytes)}"
     " H100s"),
    ("would need about 24 years", lambda: "would need about "
     f"{_days(param_count(L405), 15.6e12, 128, 0.4) / 365:.0f} years"),
    ("The 14 GB of BF16 gradients of a 7B model", lambda: "The "
     + units.format_bytes(memory.weight_bytes(7e9, precision="bf16"), digits=0)
     + " of BF16 gradients of a 7B model"),
    ("on 8 GPUs at 50 GB/s with 0.1 s of compute per step. But 0.1 s of an H100",
     lambda: f"on {SEED_SCALING['gpus']} GPUs at "
     f"{units.format_bandwidth(SEED_SCALING['bandwidth'], digits=0)} with "
     f"{SEED_SCALING['compute']} s of compute per step. But {SEED_SCALING['compute']} s of an "
     "H100"),
    ("No layout of 8 GPUs of 80 GB holds", lambda: (
        "No" if 8 * H100.memory_bytes < 175e9 * memory.bytes_per_param() else "A")
     + f" layout of 8 GPUs of {H100.memory_bytes / 1e9:.0f} GB holds"),
    # Lesson 8: cost.
    ("Eight GPUs at the $30,000", lambda: f"Eight GPUs at the {_usd(240_000 / 8)}"),
    ("estimated at about $270,000", lambda: "estimated at about "
     + _usd(calculators.si_inputs("tco")["hardware_usd"])),
    ("Annual power cost $36,792 | $4.20 of electricity an hour",
     lambda: f"Annual power cost {_usd(_seed_tco()['power'])} | "
     f"{units.format_usd(_seed_tco()['hourly power'], cents=True)} of electricity an hour"),
    ("three DGX H100s' worth of power", lambda: {3: "three"}[
        round(30_000 / calculators.si_inputs("tco")["power_watts"])]
     + " DGX H100s' worth of power"),
    ("One DGX H100 (10.2 kW) at the 2023 US industrial average (8.06 ¢/kWh) and PUE (1.58) "
     "costs $11,379 a year",
     lambda: f"One DGX H100 ({calculators.si_inputs('tco')['power_watts'] / 1e3:.1f} kW) at "
     f"the 2023 US industrial average ({100 * calculators.si_inputs('tco')['usd_per_kwh']:.2f}"
     f" ¢/kWh) and PUE ({calculators.si_inputs('tco')['pue']}) costs {_usd(_dgx_year())} a "
     "year"),
    ("TCO $423,960", lambda: "TCO " + _usd(_seed_tco()["own"])),
    ("5-year cloud cost $2,102,400, savings $1,678,440",
     lambda: f"5-year cloud cost {_usd(_seed_tco()['cloud'])}, savings "
     f"{_usd(_seed_tco()['cloud'] - _seed_tco()['own'])}"),
    ("Follow from $48 an hour ($6 per GPU-hour)", lambda: "Follow from "
     + f"{_usd(_seed_tco()['cloud'] / (5 * cost.HOURS_PER_YEAR))} an hour "
     + f"({_usd(_seed_tco()['cloud'] / (5 * cost.HOURS_PER_YEAR) / 8)} per GPU-hour)"),
    ("Breakeven point 6.8 months", lambda: f"Breakeven point {_seed_tco()['no power']:.1f} "
     "months"),
    ("owning breaks even after 7.5 months; at 50% utilisation, after 15.0 months",
     lambda: f"owning breaks even after {_seed_tco()['with power']:.1f} months; at 50% "
     f"utilisation, after {_seed_tco()['half busy']:.1f} months"),
    ("the 2023 average was 1.58", lambda: "the 2023 average was "
     f"{calculators.si_inputs('tco')['pue']}"),
    ("288,000 at $0.083 per 1K tokens | 80 tokens/s",
     lambda: f"288,000 at ${_seed_per_1k():.3f} per 1K tokens | {288_000 / 3600:.0f} tokens/s"),
    ("that is $24 an hour: four GPUs at $6 per GPU-hour",
     lambda: f"that is {_usd(_seed_per_1k() * 288_000 / 1000)} an hour: four GPUs at $6 per "
     "GPU-hour"),
    ("a ceiling of 97 tokens/s", lambda: "a ceiling of "
     f"{_decode_ceiling(memory.weight_bytes(param_count(L270)), 4 * H100.bandwidth):.0f} "
     "tokens/s"),
    ("costs $576; $5,760 would need a price of 83 cents per 1,000 tokens and buyers for 6.9 "
     "million tokens a day",
     lambda: f"costs {_usd(cost.cloud_cost(usd_per_hour=4 * 6, years=1 / 365))}; $5,760 would"
     f" need a price of {100 * 5760 / (288_000 * 24 / 1000):.0f} cents per 1,000 tokens and "
     f"buyers for {288_000 * 24 / 1e6:.1f} million tokens a day"),
    ("(80% to 40% doubles it)", lambda: "(80% to 40% "
     + {2.0: "doubles"}[_seed_per_1k(0.4) / _seed_per_1k(0.8)] + " it)"),
    ("costs 20.5 times less per token at batch 32", lambda: "costs "
     f"{_mistral_batch_gain(32):.1f} times less per token at batch 32"),
    ("$240,000 of hardware, 30 kW at a PUE of 1.4 and $0.10 per kWh, and $48 an hour of cloud",
     lambda: f"{_usd(SEED_TCO['hardware_usd'])} of hardware, {_seed_power_inputs()}, and "
     f"{_usd(SEED_CLOUD_USD_PER_HOUR)} an hour of cloud"),
    ("Hardware cost $240,000", lambda: "Hardware cost " + _usd(SEED_TCO["hardware_usd"])),
    ("of electricity an hour: 30 kW at a PUE of 1.4 and $0.10 per kWh",
     lambda: "of electricity an hour: " + _seed_power_inputs()),
    ("the comparison assumes 100% utilisation", lambda: "the comparison assumes " + _pct(
        2_102_400 / cost.cloud_cost(usd_per_hour=SEED_CLOUD_USD_PER_HOUR, years=5))
     + " utilisation"),
    ('"Power includes 30–50% cooling overhead" | A PUE of 1.3 to 1.5',
     lambda: f'"Power includes {100 * 0.30:.0f}–{100 * 0.50:.0f}% cooling overhead" | A PUE of '
     f"{_pue(0.30)} to {_pue(0.50)}"),
    ("At $0.083 per 1,000 tokens that is $24 an hour", lambda: f"At ${_seed_per_1k():.3f} per "
     f"1,000 tokens that is {_usd(_seed_per_1k() * 288_000 / 1000)} an hour"),
    ('the page\'s own $0.083 lies above its "poor" tier',
     lambda: f"the page's own ${_seed_per_1k():.3f} lies "
     + ("above" if _seed_per_1k() > 0.01 else "below") + ' its "poor" tier'),
    # Lesson 9: optimisations.
    ("activations of 20 layers", lambda: "activations of "
     f"{optimisations.checkpoint_memory(layers=96, per_layer_bytes=1):.0f} layers"),
    ("2N on top of 6N per token, about 33% more FLOPs", lambda: "2N on top of 6N per token, "
     f"about {_pct(optimisations.recompute_overhead())} more FLOPs"),
    ("17.3 GB of activations with FlashAttention, its default (104.2 GB counted as GPT blocks "
     "with eager attention, 18.3 GB with selective recomputation, 4.6% more FLOPs), 1.07 GB "
     "with a checkpoint at every layer (33% more)",
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
     + _pct(optimisations.recompute_overhead(recompute="full")) + " more)"),
    ("740 TFLOP/s in FP16 is 75% of the dense 989.4",
     lambda: f"740 TFLOP/s in FP16 is {_pct(flops.utilization(740e12, H100.dense('fp16')))} of"
     f" the dense {_tflops(H100.dense('fp16'))}"),
    ("1 − 10/16", lambda: f"1 − 10/{memory.bytes_per_param('fp32')}"),
    ("12.1% for Llama-2-7B at 4,096 tokens",
     lambda: _pct(optimisations.mixed_precision_savings(
         n_params=N7,
         activation_bytes_fp32=2 * memory.training_memory(L27, batch=1, seq_len=4096)
         .activations).saved_fraction, 1) + " for Llama-2-7B at 4,096 tokens"),
    ("8.0× on a V100, 16.0× on an A100, 14.8× on an H100 and 30.0× on a B200",
     lambda: f"{_ratio('V100 SXM')} on a V100, {_ratio('A100 80GB')} on an A100, "
     f"{_ratio('H100 SXM')} on an H100 and {_ratio('B200')} on a B200"),
    ("96 layers keep the activations of 20 layers", lambda: "96 layers keep the activations of "
     f"{optimisations.checkpoint_memory(layers=96, per_layer_bytes=1):.0f} layers"),
    ("FlashAttention-3: 75% of the H100's maximum", lambda: f"FlashAttention-3: {_fa3_share()} "
     "of the H100's maximum"),
    ("Mixed precision savings 37% | 1 − 10/16", lambda: "Mixed precision savings "
     f"{math.floor(100 * (1 - 10 / memory.bytes_per_param('fp32')))}% | 1 − 10/"
     f"{memory.bytes_per_param('fp32')}"),
    ("keeps the model state at 16 bytes per parameter", lambda: "keeps the model state at "
     f"{memory.bytes_per_param('mixed')} bytes per parameter"),
    # Lesson 10: the dashboard.
    ("19.7 days instead of 36.9 at 40%", lambda: f"{_plan_days(0.752):.1f} days instead of "
     f"{_plan_days(0.40):.1f} at 40%"),
    ("uses 77.2% of the 81.2 GB a plan may use on an H100", lambda: "uses "
     + _pct(calculators.compute("planning")["memory_per_gpu"]
            / calculators.compute("planning")["memory_limit"], 1)
     + f" of the {units.format_bytes(calculators.compute('planning')['memory_limit'])} a "
     "plan may use on an H100"),
    ("9,789 tokens/s on one H100 at 40% MFU; 342 tokens/s would be 1.4% MFU",
     lambda: f"{_one_h100_tokens():,.0f} tokens/s on one H100 at 40% MFU; 342 tokens/s would "
     f"be {_pct(flops.mfu(342, flops.flops_per_token(N7), 1, PEAK), 1)} MFU"),
    ("cannot exceed 249 tokens/s", lambda: "cannot exceed "
     f"{_decode_ceiling(memory.weight_bytes(N7, precision='bf16'), H100.bandwidth):.0f} "
     "tokens/s"),
    ("($6.88 per H100-hour, AWS on demand, September 2026), 342 tokens/s cost $0.0056 per "
     "1,000 tokens", lambda: f"(${_planner_price():.2f} per H100-hour, AWS on demand, "
     f"September 2026), 342 tokens/s cost ${_per_1k_at(_planner_price(), 342):.4f} per "
     "1,000 tokens"),
    ("Scale factor 6.8× | Reproducible as 8 GPUs at 85% scaling efficiency",
     lambda: f"Scale factor {distributed.effective_speedup(8, 0.85):.1f}× | Reproducible as 8 "
     "GPUs at 85% scaling efficiency"),
    ("64 GPUs computing 97.9% of each step", lambda: "64 GPUs computing "
     + _pct(calculators.compute("planning")["efficiency"], 1) + " of each step"),
    ("its FP32 rate, 16.0×; on an H100 it is 14.8×",
     lambda: f"its FP32 rate, {A100.dense('bf16') / A100.dense('fp32'):.1f}×; on an H100 it "
     f"is {H100.dense('bf16') / H100.dense('fp32'):.1f}×"),
    ("989.4 TFLOP/s for an H100 SXM, 1,307.4 for an MI300X, 2,250.0 for a B200",
     lambda: f"{units.format_flop_rate(PEAK)} for an H100 SXM, "
     f"{_tflops(gpu('MI300X').dense('bf16'))} for an MI300X, "
     f"{_tflops(gpu('B200').dense('bf16'))} for a B200"),
    ("HBM bandwidth, 3.35 TB/s", lambda: "HBM bandwidth, "
     + units.format_bandwidth(H100.bandwidth)),
    ("Llama-2-7B on 2T tokens, 64 H100s", _starting_plan),
    ("FlashAttention-3's 75%", lambda: f"FlashAttention-3's {_fa3_share()}"),
    ("16× performance improvement | Matches an A100's dense BF16 rate over its FP32 rate",
     lambda: f"{A100.dense('bf16') / A100.dense('fp32'):.0f}× performance improvement | "
     "Matches an A100's dense BF16 rate over its FP32 rate"),
    ("3.35 TB/s memory; 75% max H100 utilization | Right",
     lambda: f"{units.format_bandwidth(H100.bandwidth)} memory; {_fa3_share()} max H100 "
     "utilization | Right"),
    # The 2026 models and formats
    ("Its own blocks with FlashAttention keep no s² term either, and still 138.1 GB, 1.8 "
     "times the formula", lambda: "Its own blocks with FlashAttention keep no s² term either, "
     f"and still {_seed_2026()['flash_32k']}, {_seed_2026()['flash_ratio']} times the "
     "formula"),
    ("DeepSeek-V3 trains at 37.6B of its 671.0B", lambda: "DeepSeek-V3 trains at "
     f"{_seed_2026()['active']} of its {_seed_2026()['total']}"),
    ("DeepSeek-V3 keeps 70,272 bytes per token, 57 times less than its 128 heads would",
     lambda: f"DeepSeek-V3 keeps {_seed_2026()['kv']} bytes per token, "
     f"{_seed_2026()['kv_ratio']} times less than its {_seed_2026()['mha_heads']} heads "
     "would"),
    ("5.6 times less time on the roofline and 2.1 GB less kept for the backward pass",
     lambda: f"{_seed_2026()['fa_speedup']} times less time on the roofline and "
     f"{_seed_2026()['fa_saved']} less kept for the backward pass"),
    ("where the dense FP8 peak is 1,978.9 TFLOP/s", lambda: "where the dense FP8 peak is "
     f"{_seed_2026()['fp8_peak']} TFLOP/s"),
    ("13.7% of them for Llama-2-7B at 4,096 tokens", lambda: f"{_seed_2026()['attention_share']}"
     " of them for Llama-2-7B at 4,096 tokens"),
    ("give an H100 21.2 times the tokens per second of one", lambda: "give an H100 "
     f"{_seed_2026()['batching']} times the tokens per second of one"),
    ("from 239 tokens/s in FP16 to 851 in NVFP4, 3.6×", lambda: "from "
     f"{_seed_2026()['fp16']} tokens/s in FP16 to {_seed_2026()['nvfp4']} in NVFP4, "
     f"{_seed_2026()['quant']}×"),
    ("fell from $12.29 in 2023 to $6.88, 1.8×", lambda: f"fell from "
     f"${_seed_2026()['old_price']} in 2023 to ${_seed_2026()['new_price']}, "
     f"{_seed_2026()['price_ratio']}×"),
    ("(50% utilisation doubles the cost per token)", lambda: "("
     f"{_pct(0.5)} utilisation "
     + {2: "doubles"}[round(cost.cost_per_1k_tokens(usd_per_gpu_hour=1, gpus=1,
                                                    tokens_per_second=1, utilization=0.5)
                            / cost.cost_per_1k_tokens(usd_per_gpu_hour=1, gpus=1,
                                                      tokens_per_second=1))]
     + " the cost per token)"),
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
    "(PaLM 46.2%, Llama 3 38–43%)",  # the same
    "the ZeRO paper's 7.5B model on 64 GPUs",  # Rajbhandari et al. 2020, Figure 1
    "Up to 16,384 H100s",  # Dubey et al. 2024 (Llama 3), section 3.3.1
    "it reports 38–43% MFU on 8,192 and 16,384 GPUs",  # Dubey et al. 2024, Table 4
    "over 90% effective training time, 466 job interruptions in a 54-day period",  # ibid. 3.3.4
    "its 15.6T tokens",  # Dubey et al. 2024, section 3
    "Chen et al. measured 30% more time",  # Chen et al. 2016, section 5
    "1.5–2× over FlashAttention-2",  # Shah et al. 2024, abstract
)



def _pue(cooling_overhead: float) -> str:
    """The PUE that adds ``cooling_overhead`` to the IT power, as the cost calculator
    applies it (a multiplier on the energy bill)."""
    def bill(pue: float) -> float:
        return cost.power_cost(power_watts=1000, usd_per_kwh=1, hours=1, pue=pue)
    pue = 1 + cooling_overhead
    assert math.isclose(bill(pue) / bill(1.0), pue)
    return f"{pue:.1f}"


def _gqa_ratio(*cfgs: transformer.TransformerConfig) -> int:
    """Query heads per key/value head, the same for every model given."""
    (ratio,) = {cfg.heads // cfg.kv_heads for cfg in cfgs}
    return ratio


def _fp16_exponent(what: str) -> int:
    """The powers of two the glossary names for FP16, read off NumPy's float16: the
    smallest normal and subnormal numbers, and the largest value that rounds to zero."""
    if what == "normal":
        value = float(FP16.smallest_normal)
    elif what == "subnormal":
        value = float(FP16.smallest_subnormal)
    else:
        value = float(FP16.smallest_subnormal) / 2
        # exactly half rounds to zero (ties to even), anything above it rounds up
        assert float(np.float16(value)) == 0
        assert float(np.float16(np.nextafter(value, 1.0))) == float(FP16.smallest_subnormal)
    exponent = int(np.log2(value))
    assert 2.0**exponent == value
    return exponent


def _fp16_power(exponent: int) -> str:
    """``2^{e}\approx m\times10^{x}`` as the glossary writes it (LaTeX in a math role)."""
    mantissa, power = f"{2.0**exponent:.2e}".split("e")
    return rf"2^{{{exponent}}}\approx {mantissa}\times10^{{{int(power)}}}"


#: Small counts as the glossary spells them.
_WORDS = {2: "two", 3: "three", 7: "seven"}


def _bit_layout(key: str) -> tuple[int, int, int]:
    """Total, exponent and fraction bits of a format of :mod:`gpulesson.precision`."""
    fmt = float_format(key)
    return fmt.bits, fmt.exponent_bits, fmt.fraction_bits


def _about_digits(key: str) -> str:
    """'about three' significant decimal digits, from the fraction bits."""
    return "about " + _WORDS[round(float_format(key).decimal_digits)]


def _power_of_ten(x: float) -> str:
    """``3.4\\times10^{38}`` for 3.39e38, as the glossary writes a number in maths."""
    mantissa, power = f"{x:.1e}".split("e")
    return rf"{mantissa}\times10^{{{int(power)}}}"


def _bf16_entry() -> str:
    bits, exponent, fraction = _bit_layout("bf16")
    same = exponent == float_format("fp32").exponent_bits
    digits = float_format("bf16").decimal_digits
    return (f"a {bits}-bit floating-point format with the {'same' if same else 'different'} "
            f"{exponent} exponent bits as FP32 (so the same range, up to about "
            f"{{math}}`{_power_of_ten(float_format('bf16').largest)}`) but only {fraction} "
            f"fraction bits ({_WORDS[math.floor(digits)]} to {_WORDS[math.ceil(digits)]} "
            "significant decimal digits)")


def _normal_floor(*keys: str) -> str:
    """The power of ten of the smallest normal number, the same for every format given."""
    (power,) = {math.floor(math.log10(float_format(k).smallest_normal)) for k in keys}
    return f"{{math}}`10^{{{power}}}`"


def _rounds_back_to_one() -> str:
    """A master weight's reason to exist: in FP16, 1 + 1e-4 is 1 again (NumPy's rounding)."""
    verb = "rounds back to 1" if float(np.float16(1 + 1e-4)) == 1.0 else "survives"
    return f"in FP16, {{math}}`1 + 10^{{-4}}` {verb}"


def _gpu_hours_alike(n: int = 1024) -> str:
    week = 7 * 24 * 3600
    same = cost.gpu_hours(gpus=n, seconds=week) == cost.gpu_hours(gpus=1, seconds=n * week)
    return (f"a week on {n:,} GPUs and {n:,} weeks on one GPU are "
            f"{'the same' if same else 'not the same'} number of GPU-hours")


def _sm_count(name: str) -> int:
    """Streaming multiprocessors of a GPU, from its datasheet note in ``gpus.json``."""
    (count,) = re.findall(r"(\d+) SMs", gpu(name).notes)
    return int(count)


def _tied_embeddings() -> str:
    llamas = [k for k in transformer.MODEL_LABELS if k.startswith("llama")]
    untied = sum(not preset(k).tied_embeddings for k in llamas)
    if (preset("gpt2").tied_embeddings and preset("llama-3.2-1b").tied_embeddings
            and 2 * untied > len(llamas)):
        return "GPT-2 and Llama 3.2 1B tie them; most Llama models keep a separate"
    return "the presets say otherwise"


def _ndr_port() -> str:
    """The calculators' network default: one 400 Gb/s InfiniBand NDR port per GPU."""
    one_way = calculators.si_inputs("scaling_efficiency")["bandwidth"]
    return (f"a {8 * one_way / 1e9:.0f} Gb/s (NDR) port moves "
            f"{units.format_bandwidth(one_way, digits=0)} in each direction")


GLOSSARY = claims(
    ("largest value is 65,504", lambda: f"largest value is {float(FP16.max):,.0f}"),
    ("smallest normal number {math}`2^{-14}\\approx 6.10\\times10^{-5}`",
     lambda: f"smallest normal number {{math}}`{_fp16_power(_fp16_exponent('normal'))}`"),
    ("reach down to {math}`2^{-24}\\approx 5.96\\times10^{-8}`",
     lambda: f"reach down to {{math}}`{_fp16_power(_fp16_exponent('subnormal'))}`"),
    ("below {math}`2^{-25}\\approx 2.98\\times10^{-8}` round to zero",
     lambda: f"below {{math}}`{_fp16_power(_fp16_exponent('zero'))}` round to zero"),
    ("5 % serial work no number of workers gives more than 20 times",
     lambda: "5 % serial work no number of workers gives more than "
     f"{roofline.amdahl_speedup(0.05, 1e12):.0f} times"),
    ("{math}`989.4\\times10^{12} / 3.35\\times10^{12} \\approx 295` FLOP per byte",
     lambda: f"{{math}}`{_tflops(PEAK)}\\times10^{{12}} / {H100.bandwidth / 1e12}\\times10^{{12}}"
     f" \\approx {roofline.ridge_point(PEAK, H100.bandwidth):.0f}` FLOP per byte"),
    ("(3.35 TB/s on an H100 SXM)", lambda: f"({units.format_bandwidth(H100.bandwidth)} on an "
     "H100 SXM)"),
    ("about 3.35 TB/s for an H100 SXM's", lambda: f"about {units.format_bandwidth(H100.bandwidth)}"
     " for an H100 SXM's"),
    ("an H100 SXM has 900 GB/s", lambda: "an H100 SXM has "
     + units.format_bandwidth(H100.interconnect_bandwidth, digits=0)),
    ("about 64 GB/s in each direction, some fifty times less than an H100's HBM",
     lambda: f"about {_pcie5_each_way() / 1e9:.0f} GB/s in each direction, some "
     + {50: "fifty"}[round(H100.bandwidth / _pcie5_each_way(), -1)]
     + " times less than an H100's HBM"),
    ("GPT-2 small has 124,439,808", lambda: "GPT-2 small has "
     + _int(param_count(preset("gpt2")))),
    ("reaches about 75 % of an H100's dense FP16 peak", lambda: "reaches about "
     f"{100 * flops.utilization(740e12, H100.dense('fp16')):.0f} % of an H100's dense FP16 peak"),
    ("still needs 16 bytes of model state per parameter, as many as FP32",
     lambda: f"still needs {memory.bytes_per_param('mixed')} bytes of model state per "
     "parameter, as many as FP32"
     if memory.bytes_per_param("fp32") == memory.bytes_per_param("mixed") else "differs"),
    ("(2 + 2 for 16-bit weights and gradients, 12 for the FP32 master copy and two moments)",
     lambda: "({} + {} for 16-bit weights and gradients, {} for the FP32 master copy and two "
     "moments)".format(*(getattr(memory.model_state_bytes("mixed"), k)
                         for k in ("weights", "gradients", "optimizer")))),
    ("paper's {math}`K = 12` bytes per parameter", lambda: "paper's {math}`K = "
     f"{memory.model_state_bytes('mixed').optimizer}` bytes per parameter"),
    ("(700 W for an H100 SXM)", lambda: f"({H100.tdp_watts:.0f} W for an H100 SXM)"),
    ("a PUE of 1.3–1.5", lambda: f"a PUE of {_pue(0.30)}–{_pue(0.50)}"),
    ("was 1.58 in 2023", lambda: f"was {calculators.si_inputs('tco')['pue']} in 2023"),
    ("(8 in Llama 2 70B and Llama 3 70B, 4 in Llama 3 8B)",
     lambda: f"({_gqa_ratio(L270, L370)} in Llama 2 70B and Llama 3 70B, {_gqa_ratio(L38)} "
     "in Llama 3 8B)"),
    # Number formats, from their bit layouts (gpulesson.precision).
    ("16 bits with 5 exponent and 10 fraction bits (about three significant decimal digits)",
     lambda: "{} bits with {} exponent and {} fraction bits".format(*_bit_layout("fp16"))
     + f" ({_about_digits('fp16')} significant decimal digits)"),
    ("32 bits, 8 exponent and 23 fraction bits (about seven significant decimal digits)",
     lambda: "{} bits, {} exponent and {} fraction bits".format(*_bit_layout("fp32"))
     + f" ({_about_digits('fp32')} significant decimal digits)"),
    ("a 16-bit floating-point format with the same 8 exponent bits as FP32 (so the same range,"
     " up to about {math}`3.4\\times10^{38}`) but only 7 fraction bits (two to three "
     "significant decimal digits)", _bf16_entry),
    ("keeping FP32's 8 exponent bits but only 10 fraction bits",
     lambda: "keeping FP32's {1} exponent bits but only {2} fraction bits".format(
         *_bit_layout("tf32")) if _bit_layout("tf32")[1] == _bit_layout("fp32")[1] else "no"),
    ("E4M3 (more precision, largest value 448)", lambda: "E4M3 (more precision, largest value "
     f"{float_format('fp8_e4m3').largest:.0f})"),
    ("{term}`BF16` and FP32 reach down to about {math}`10^{-38}` as normal numbers",
     lambda: f"{{term}}`BF16` and FP32 reach down to about {_normal_floor('bf16', 'fp32')} as "
     "normal numbers"),
    ("in FP16, {math}`1 + 10^{-4}` rounds back to 1", _rounds_back_to_one),
    # Other entries.
    ("about 20 tokens per parameter", lambda: f"about {flops.CHINCHILLA_TOKENS_PER_PARAM} "
     "tokens per parameter"),
    ("a week on 1,024 GPUs and 1,024 weeks on one GPU are the same number of GPU-hours",
     _gpu_hours_alike),
    ("1.0 would mean no overhead", lambda: f"{_pue(0.0)} would mean no overhead"),
    ('"30–50 % cooling overhead" is a PUE of 1.3–1.5',
     lambda: f'"{100 * 0.30:.0f}–{100 * 0.50:.0f} % cooling overhead" is a PUE of '
     f"{_pue(0.30)}–{_pue(0.50)}"),
    ("An H100 SXM has 132.", lambda: f"An H100 SXM has {_sm_count('H100 SXM')}."),
    ("2 in BF16 to serve, 16 to train with {term}`Adam`",
     lambda: f"{memory.weight_bytes(1, precision='bf16'):.0f} in BF16 to serve, "
     f"{memory.bytes_per_param('mixed')} to train with {{term}}`Adam`"),
    ("GPT-2 and Llama 3.2 1B tie them; most Llama models keep a separate", _tied_embeddings),
    ("(192 KiB of combined L1 cache and shared memory on an A100",
     lambda: f"({calculators.si_inputs('flash_attention')['sram_bytes'] // KIB} KiB of combined "
     "L1 cache and shared memory on an A100"),
    ("a 400 Gb/s (NDR) port moves 50 GB/s in each direction", _ndr_port),
    ("100 % when {math}`n` GPUs are {math}`n` times faster than one",
     lambda: f"{100 * distributed.scaling_efficiency(1.0, 0.0):.0f} % when {{math}}`n` GPUs "
     "are {math}`n` times faster than one"),
    ("DeepSeek-V3 caches 576 values per layer and token, where its 128 heads of 128 would "
     "keep 32,768", _latent_values),
    ("({math}`w` = 4,096)", lambda: "({math}`w` = "
     f"{transformer.preset('mistral-7b').sliding_window:,})"),
    ("one 8-bit power of two per 32 elements", lambda: "one "
     f"{precision.block_format('mxfp4').scale.bits}-bit power of two per "
     f"{precision.block_format('mxfp4').block_size} elements"),
    ("scale per 16 elements", lambda: "scale per "
     f"{precision.block_format('nvfp4').block_size} elements"),
    ("MXFP4 takes 4.25 bits per element, NVFP4 4.5", lambda: "MXFP4 takes "
     f"{precision.bits_per_element('mxfp4'):g} bits per element, NVFP4 "
     f"{precision.bits_per_element('nvfp4'):g}"),
    ("(Mixtral 8x7B: 12.9B of 46.7B", lambda: "(Mixtral 8x7B: "
     f"{transformer.active_params(transformer.preset('mixtral-8x7b')) / 1e9:.1f}B of "
     f"{transformer.param_count(transformer.preset('mixtral-8x7b')) / 1e9:.1f}B"),
    # The execution model (gpulesson.execution).
    ("Memory moves in 32-byte sectors",
     lambda: f"Memory moves in {execution.coalescing().sector_bytes}-byte sectors"),
    ("(9.0 for the H100, 10.0 for the B200)",
     lambda: f"({execution.gpu_execution('H100 SXM').compute_capability} for the H100, "
     f"{execution.gpu_execution('B200').compute_capability} for the B200)"),
    ("(65,536 32-bit registers on recent NVIDIA GPUs)",
     lambda: f"({execution.sm_limits('9.0').registers_per_sm:,} 32-bit registers on recent "
     "NVIDIA GPUs)"),
    ("up to 228 KiB per SM on an H100",
     lambda: f"up to {execution.sm_limits('H100 SXM').shared_memory_per_sm // KIB} KiB per SM "
     "on an H100"),
    ("A group of up to 1,024 threads",
     lambda: f"A group of up to {execution.sm_limits('9.0').max_threads_per_block:,} threads"),
    ("A group of 32 consecutive threads",
     lambda: f"A group of {execution.sm_limits('9.0').warp_size} consecutive threads"),
    ("a wave of a large GEMM is 132 tiles, one per SM",
     lambda: "a wave of a large GEMM is "
     f"{execution.gemm_waves(4096, 4096, sms=execution.gpu_execution('H100 SXM').sms).wave_size}"
     " tiles, one per SM"),
)

#: Numbers of book/glossary.md's prose that are not results: published figures.
GLOSSARY_NOT_FIGURES = (
    # Chowdhery et al. 2022 (PaLM), Table 3; Dubey et al. 2024 (Llama 3), Table 4.
    "report about 40 %: PaLM 46.2 %, Llama 3 38–43 %",
    # Uptime Institute, Global Data Center Survey 2023.
    "report about 1.1",
    # NVIDIA 2023, Matrix Multiplication Background User's Guide (tile and wave sizes).
    "multiples of 8 to 64 elements",
    # NVIDIA 2022, H100 Tensor Core GPU architecture: 256 KB of L1/shared memory per SM.
    "256 KiB on an H100",
)

#: Numbers inside names, which are not figures: model and bus versions, a GPU's model
#: number, and the widths that name number formats ("16-bit weights").
NAMES = ("Llama 3.1", "Llama 3.2", "PCIe 5.0", "RTX 4090", "TensorFloat-32", "16-bit", "32-bit")


def _python_versions() -> tuple[str, str]:
    """The Python the course is built and published with (Binder's ``runtime.txt``, which
    the deploy workflow and the Makefile must match) and the oldest it supports
    (``requires-python`` of ``pyproject.toml``)."""
    def read(*parts: str) -> str:
        return REPO.joinpath(*parts).read_text(encoding="utf-8")

    built = read("binder", "runtime.txt").strip().removeprefix("python-")
    others = (re.findall(r'python-version:\s*"([\d.]+)"', read(".github", "workflows",
                                                               "deploy.yml"))
              + re.findall(r"command -v python(\d+\.\d+)", read("Makefile")))
    oldest = re.findall(r'^requires-python\s*=\s*">=([\d.]+)"', read("pyproject.toml"), re.M)
    if set(others) != {built} or len(oldest) != 1:
        return f"{built} (but {others} elsewhere)", f"{oldest}"
    return built, oldest[0]


def _study_row(slug: str) -> str:
    """A lesson's row of the study-time table: its time from the lesson itself."""
    return f"| {{doc}}`/notebooks/{slug}` | about {study_minutes(slug)} min |"


HOW_TO_USE = claims(
    ("You need Python 3.11 (3.10 or newer works)", lambda: "You need Python {} ({} or newer "
     "works)".format(*_python_versions())),
    # the study times: reading outside dropdowns, exercises and cells (study_time.py)
    *((f"| {{doc}}`/notebooks/{slug}` | about {study_minutes(slug)} min |",
       functools.partial(_study_row, slug)) for slug in SLUGS),
)

INSTRUCTORS = claims(
    ("with `make` and Python 3.11", lambda: f"with `make` and Python {_python_versions()[0]}"),
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


@functools.cache
def _page(name: str) -> str:
    """``book/<name>`` as :func:`~tests.content.claims.page` text."""
    return page(BOOK / name)


@parametrize(CONVENTIONS)
def test_conventions_page_numbers(claim: Claim) -> None:
    claim.check(_page("conventions.md"), "book/conventions.md")


@parametrize(SEED_CORRECTIONS)
def test_seed_corrections_page_numbers(claim: Claim) -> None:
    claim.check(_page("seed_corrections.md"), "book/seed_corrections.md")


@parametrize(GLOSSARY)
def test_glossary_numbers(claim: Claim) -> None:
    claim.check(_page("glossary.md"), "book/glossary.md")


@parametrize(HOW_TO_USE)
def test_how_to_use_numbers(claim: Claim) -> None:
    claim.check(_page("how_to_use.md"), "book/how_to_use.md")


@parametrize(INSTRUCTORS)
def test_instructors_numbers(claim: Claim) -> None:
    claim.check(_page("instructors.md"), "book/instructors.md")


#: Every page in ``book/``: its claims and the numbers of its prose that are not figures.
#: Pages without figures of their own (or whose figures are generated, see the module
#: docstring) have neither.
PAGES: dict[str, tuple[list[Claim], tuple[str, ...]]] = {
    "_gpu_note.md": ([], ()),
    "calculators.md": ([], ()),
    "conventions.md": (CONVENTIONS, CONVENTIONS_NOT_FIGURES),
    "glossary.md": (GLOSSARY, GLOSSARY_NOT_FIGURES),
    "hardware.md": ([], ()),
    "how_to_use.md": (HOW_TO_USE, ()),
    "instructors.md": (INSTRUCTORS, ()),
    "intro.md": ([], ("10. {doc}`/notebooks/planning_dashboard`",)),  # a list item's number
    "references.md": ([], ()),
    "seed_corrections.md": (SEED_CORRECTIONS, SEED_CORRECTIONS_NOT_FIGURES),
    "status.md": ([], ()),
}


def test_every_page_is_listed() -> None:
    assert sorted(PAGES) == sorted(p.name for p in BOOK.glob("*.md"))


@pytest.mark.parametrize("name", sorted(PAGES))
def test_every_figure_is_claimed(name: str) -> None:
    """Every number of the page's prose lies in a claim's text, a listed non-figure of the
    page or a name (``NAMES``)."""
    claimed, not_figures = PAGES[name]
    covered = [c.text for c in claimed] + list(not_figures) + list(NAMES)
    missing = uncovered_figures(markdown_of(BOOK / name), covered)
    assert not missing, f"book/{name} states figures no claim covers:\n" + "\n".join(missing)


@pytest.mark.parametrize("name", [n for n, (_, listed) in PAGES.items() if listed])
def test_listed_non_figures_are_on_their_page(name: str) -> None:
    """A listed non-figure that left the page would cover nothing but could hide a figure
    added later; each must still be there."""
    text = _page(name)
    gone = [item for item in PAGES[name][1] if rendered(item) not in text]
    assert not gone, f"no longer on book/{name}: {gone}"


def test_names_are_on_some_page() -> None:
    text = " ".join(_page(name) for name in PAGES)
    assert [name for name in NAMES if name not in text] == []


def test_generated_pages_hold_their_directives() -> None:
    """The pages whose figures are generated at build time still generate them."""
    for name, directives in (("hardware.md", ["gpu-table"]),
                             ("status.md", ["machine-status", "nb-exec-table"]),
                             ("calculators.md", ["calculator"])):
        markdown = markdown_of(BOOK / name)
        for directive in directives:
            assert re.search(rf"^```\{{{directive}\}}", markdown, flags=re.M), (name, directive)


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


def test_rendered_strips_escapes_and_wrapping() -> None:
    assert rendered("costs \\$576;\n  \\$5,760 would") == "costs $576; $5,760 would"


def test_pages_start_with_their_labels() -> None:
    assert (BOOK / "conventions.md").read_text(encoding="utf-8").startswith("(conventions)=")
    assert (BOOK / "seed_corrections.md").read_text(encoding="utf-8").startswith(
        "(seed_corrections)=")


def test_cited_keys_exist() -> None:
    bib = (BOOK / "references.bib").read_text(encoding="utf-8")
    keys = set(re.findall(r"^@\w+\{([^,]+),", bib, flags=re.M))
    for name in ("conventions.md", "seed_corrections.md"):
        text = (BOOK / name).read_text(encoding="utf-8")
        for group in re.findall(r"\{cite(?::[pt])?\}`([^`]+)`", text):
            for key in group.split(","):
                assert key.strip() in keys, f"{name} cites unknown key {key!r}"


def test_the_bibliography_parses_as_the_book_build_reads_it() -> None:
    """sphinxcontrib-bibtex reads book/references.bib with pybtex's strict parser; an entry
    left without its closing brace stops the whole book build, so parse it here first."""
    from pybtex.database import parse_string

    bib = (BOOK / "references.bib").read_text(encoding="utf-8")
    entries = parse_string(bib, "bibtex").entries
    assert len(entries) == len(re.findall(r"^@\w+\{", bib, flags=re.M))
