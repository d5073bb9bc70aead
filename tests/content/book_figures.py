"""The figures the narrative pages of ``book/`` share: the GPUs and models they quote, the
formatting of a figure as a page prints it, and the calls behind the figures that more
than one page states. The pages' claims live in ``test_book_pages.py`` (conventions, how
to use, instructors, and the coverage of every page), ``test_seed_corrections_page.py``
and ``test_glossary_page.py``; the sources of their published inputs are listed there.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np

from gpulesson import (
    calculators,
    cost,
    distributed,
    flops,
    gemm,
    inference,
    memory,
    transformer,
    units,
)
from gpulesson.hardware import gpu
from gpulesson.precision import float_format
from gpulesson.transformer import param_count, preset

from .claims import (
    REPO,
    page,
)
from .reference import GPT3, H100, L27, L38, L405, N7
from .reference import gb as _gb

BOOK = REPO / "book"
W7_FP16 = memory.weight_bytes(7e9, precision="fp16")  # the seed's "7B in FP16", 14 GB
PEAK = H100.dense("bf16")
KIB = 1024
FP16 = np.finfo(np.float16)
GPU_MEMORY = 80e9
N4096 = (4096, 4096, 4096)


def _int(x: float) -> str:
    return f"{x:,.0f}"


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


def naming_test(path: str) -> str:
    """How a page names the test module at ``path`` that checks its figures."""
    return f"A test (`{Path(path).resolve().relative_to(REPO).as_posix()}`)"


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


def _gpt_block_activations(cfg: transformer.TransformerConfig, **kw: str) -> int:
    """All layers counted as GPT blocks (Korthikanti et al. 2022), one 4,096-token
    sequence."""
    return cfg.layers * memory.activation_bytes_per_layer(
        seq_len=4096, batch=1, hidden=cfg.hidden, heads=cfg.heads, **kw)


def _latent_values() -> str:
    """DeepSeek-V3's cached values per layer and token, latent and multi-head."""
    cfg = transformer.preset("deepseek-v3")
    mha = inference.multi_head_equivalent(cfg)

    def per_layer(c: transformer.TransformerConfig) -> int:
        return inference.kv_cache_bytes_per_token(c, bytes_per_element=1) // c.layers

    return (f"DeepSeek-V3 caches {per_layer(cfg)} values per layer and token, where its "
            f"{mha.kv_heads} heads of {mha.head_dim} would keep {per_layer(mha):,}")


def _pue(cooling_overhead: float) -> str:
    """The PUE that adds ``cooling_overhead`` to the IT power, as the cost calculator
    applies it (a multiplier on the energy bill)."""
    def bill(pue: float) -> float:
        return cost.power_cost(power_watts=1000, usd_per_kwh=1, hours=1, pue=pue)
    pue = 1 + cooling_overhead
    assert math.isclose(bill(pue) / bill(1.0), pue)
    return f"{pue:.1f}"


@functools.cache
def book_page(name: str) -> str:
    """``book/<name>`` as :func:`~tests.content.claims.page` text."""
    return page(BOOK / name)
