"""Every number stated on book/conventions.md and book/seed_corrections.md is recomputed
here by the calculators, so the pages cannot drift from the code.

Each claim is (page, text on the page, calculator call that must produce that text).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from gpulesson import cost, distributed, flops, gemm, inference, memory, optimisations, units
from gpulesson.hardware import gpu
from gpulesson.transformer import non_embedding_params, param_count, preset

BOOK = Path(__file__).resolve().parents[2] / "book"
H100 = gpu("H100 SXM")
L27 = preset("llama-2-7b")
L38 = preset("llama-3-8b")
L405 = preset("llama-3.1-405b")
KIB = 1024


def _gemm_time_us() -> str:
    a = gemm.analyse(4096, 4096, 4096, peak_flops=H100.peak_flops["bf16"],
                     bandwidth=H100.bandwidth)
    return f"{a.time * 1e6:.1f} µs"


def _pct(x: float, digits: int = 0) -> str:
    return f"{100 * x:.{digits}f}%"


def _int(x: float) -> str:
    return f"{x:,.0f}"


def _gpt3_activations() -> str:
    per_layer = memory.activation_bytes_per_layer(seq_len=2048, batch=1, hidden=12288,
                                                  heads=96)
    return units.format_bytes(96 * per_layer)


def _crossover() -> float:
    return inference.attention_crossover_tokens(param_count(L27), layers=L27.layers,
                                                heads=L27.heads, head_dim=L27.head_dim)


def _attention_share_405b() -> float:
    att = flops.attention_flops_per_token(layers=L405.layers, heads=L405.heads,
                                          head_dim=L405.head_dim, seq_len=8192)
    return att / flops.flops_per_token(param_count(L405))


def _decode_ceiling() -> float:
    return inference.decode_ceiling_tokens_per_second(weight_bytes=14e9, bandwidth=3.35e12)


def _breakeven() -> float:
    return cost.breakeven_months(hardware_usd=240_000, power_watts=30_000, usd_per_kwh=0.10,
                                 cloud_usd_per_hour=48)


def _zero(stage: int) -> str:
    return units.format_bytes(distributed.zero_memory_per_gpu(7.5e9, stage=stage, dp=64))


CONVENTIONS: list[tuple[str, Callable[[], str]]] = [
    ("48 FLOPs", lambda: f"{gemm.flops(2, 3, 4)} FLOPs"),
    ("137.4 GFLOP", lambda: units.format_flops(gemm.flops(4096, 4096, 4096), digits=1)),
    ("989.4 TFLOP/s", lambda: units.format_flop_rate(H100.peak_flops["bf16"])),
    ("138.9 µs", _gemm_time_us),
    ("100.7 MB", lambda: units.format_bytes(gemm.min_bytes(4096, 4096, 4096, 2))),
    ("1,978.9 TFLOP/s", lambda: f"{H100.sparse_flops['bf16'] / 1e12:,.1f} TFLOP/s"),
    ("43% MFU", lambda: _pct(flops.utilization(430e12, H100.peak_flops["bf16"])) + " MFU"),
    ("look like 22%", lambda: "look like " + _pct(flops.utilization(
        430e12, H100.sparse_flops["bf16"]))),
    ("6,738,415,616 parameters", lambda: _int(param_count(L27)) + " parameters"),
    ("13,476,831,232 bytes", lambda: _int(memory.weight_bytes(param_count(L27))) + " bytes"),
    ("13.5 GB or 12.6 GiB", lambda: units.format_bytes(memory.weight_bytes(param_count(L27)))
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
    ("107.8 GB", lambda: units.format_bytes(memory.training_memory(L27, batch=1,
                                                                   seq_len=1).total
                                            - memory.training_memory(L27, batch=1,
                                                                     seq_len=1).activations)),
    ("`5·a·s/h` is 80", lambda: f"`5·a·s/h` is {5 * 96 * 2048 // 12288}"),
    ("275.4 GB", _gpt3_activations),
    ("512 KiB per token", lambda: f"{inference.kv_cache_bytes_per_token(L27) // KIB} KiB per "
                                  "token"),
    ("needs 128 KiB", lambda: f"needs {inference.kv_cache_bytes_per_token(L38) // KIB} KiB"),
    ("536,870,912 bytes (512.0 MiB)", lambda: _int(inference.kv_cache_bytes(L38, seq_len=4096))
     + " bytes (" + units.format_bytes(inference.kv_cache_bytes(L38, seq_len=4096),
                                       binary=True) + ")"),
    ("124,439,808 parameters", lambda: _int(param_count(preset("gpt2"))) + " parameters"),
    ("85,056,000 are not", lambda: _int(non_embedding_params(preset("gpt2"))) + " are not"),
    ("3.14e23", lambda: f"{flops.training_flops(param_count(preset('gpt3-175b')), 300e9):.2e}"
     .replace("e+", "e")),
    ("174.6B", lambda: f"{param_count(preset('gpt3-175b')) / 1e9:.1f}B"),
    ("adds 8.3%", lambda: "adds " + _pct(_attention_share_405b(), 1)),
]

SEED_CORRECTIONS: list[tuple[str, Callable[[], str]]] = [
    ("137.4 GFLOP", lambda: units.format_flops(gemm.flops(4096, 4096, 4096), digits=1)),
    ("201.3 MB", lambda: units.format_bytes(gemm.min_bytes(4096, 4096, 4096, 4))),
    ("682.7 FLOP per byte", lambda: f"{gemm.arithmetic_intensity(4096, 4096, 4096, 4):.1f} "
                                    "FLOP per byte"),
    ("268.4 MB", lambda: units.format_bytes(gemm.min_bytes(4096, 4096, 4096, 4, read_c=True))),
    ("would need 4 PFLOP/s", lambda: "would need "
     f"{gemm.flops(4096, 4096, 4096) / 0.034e-3 / 1e15:.0f} PFLOP/s"),
    ("138.9 µs", _gemm_time_us),
    ('`memory.bytes_per_param("mixed")` = 16',
     lambda: f'`memory.bytes_per_param("mixed")` = {memory.bytes_per_param("mixed")}'),
    ('`memory.bytes_per_param("fp32")` = 16',
     lambda: f'`memory.bytes_per_param("fp32")` = {memory.bytes_per_param("fp32")}'),
    ('`memory.bytes_per_param("mixed_fp32_grads")` = 18',
     lambda: '`memory.bytes_per_param("mixed_fp32_grads")` = '
             f'{memory.bytes_per_param("mixed_fp32_grads")}'),
    ("is 80", lambda: f"is {5 * 96 * 2048 // 12288}"),
    ("275.4 GB", _gpt3_activations),
    ("by 70%", lambda: "by " + _pct(1 - memory.activation_bytes_per_layer(
        seq_len=2048, batch=1, hidden=12288, heads=96, tp=8, sequence_parallel=True,
        recompute="selective") / memory.activation_bytes_per_layer(
        seq_len=2048, batch=1, hidden=12288, heads=96, tp=8, sequence_parallel=True))),
    ("120.0 GB, 31.4 GB, 16.6 GB\nand 1.9 GB",
     lambda: f"{_zero(0)}, {_zero(1)}, {_zero(2)}\nand {_zero(3)}"),
    ("24.5 GB", lambda: units.format_bytes(distributed.allreduce_bytes_per_rank(14e9, 8))),
    ("idle 21.9%", lambda: "idle " + _pct(distributed.pipeline_bubble_fraction(8, 32), 1)),
    ("to 5.5%", lambda: "to " + _pct(distributed.pipeline_bubble_fraction(8, 32, 4), 1)),
    ("3.14e23", lambda: f"{flops.training_flops(param_count(preset('gpt3-175b')), 300e9):.2e}"
     .replace("e+", "e")),
    ("formula gives 2,147,483,648 bytes", lambda: "formula gives "
     + _int(2 * L38.hidden * L38.layers * 4096 * 2) + " bytes"),
    ("need 536,870,912", lambda: "need " + _int(inference.kv_cache_bytes(L38, seq_len=4096))),
    ("four times less", lambda: {4: "four"}[2 * L38.hidden * L38.layers * 4096 * 2
                                          // inference.kv_cache_bytes(L38, seq_len=4096)]
     + " times less"),
    ("25,705 tokens", lambda: f"{_crossover():,.0f} tokens"),
    ("adds 8.0%", lambda: "adds " + _pct(2048 / _crossover(), 1)),
    ("239.3 tokens/s", lambda: f"{_decode_ceiling():.1f} tokens/s"),
    ("989.4 TFLOP/s", lambda: units.format_flop_rate(H100.peak_flops["fp16"])),
    ("165.2 TFLOP/s", lambda: units.format_flop_rate(gpu("RTX 4090").peak_flops["fp16"])),
    ("it is 330.3", lambda: f"it is {gpu('RTX 4090').other_flops['fp16_fp16_accumulate'] / 1e12}"),
    ("1,008 GB/s", lambda: f"{gpu('RTX 4090').bandwidth / 1e9:,.0f} GB/s"),
    ("activations of 20 layers", lambda: "activations of "
     f"{optimisations.checkpoint_memory(layers=96, per_layer_bytes=1):.0f} layers"),
    ("about 33% more FLOPs", lambda: "about " + _pct(optimisations.recompute_overhead())
     + " more FLOPs"),
    ("is 75% of", lambda: "is " + _pct(flops.utilization(740e12, H100.peak_flops["fp16"]))
     + " of"),
    ("$36,792 a year of power", lambda: units.format_usd(cost.on_prem_breakdown(
        hardware_usd=240_000, power_watts=30_000, usd_per_kwh=0.10, years=1, pue=1.4).power,
        cents=False) + " a year of power"),
    ("after 7.5 months", lambda: f"after {_breakeven():.1f} months"),
    ("6.8 months", lambda: f"{240_000 / cost.cloud_cost(usd_per_hour=48, years=1 / 12):.1f} "
                           "months"),
]


@pytest.mark.parametrize(("text", "compute"), CONVENTIONS, ids=[c[0] for c in CONVENTIONS])
def test_conventions_page_numbers(text: str, compute: Callable[[], str]) -> None:
    page = (BOOK / "conventions.md").read_text(encoding="utf-8")
    assert compute() == text
    assert text in page, f"{text!r} is no longer on book/conventions.md"


@pytest.mark.parametrize(("text", "compute"), SEED_CORRECTIONS,
                         ids=[c[0] for c in SEED_CORRECTIONS])
def test_seed_corrections_page_numbers(text: str, compute: Callable[[], str]) -> None:
    page = (BOOK / "seed_corrections.md").read_text(encoding="utf-8")
    assert compute() == text
    assert text in page, f"{text!r} is no longer on book/seed_corrections.md"


def test_pages_start_with_their_labels() -> None:
    assert (BOOK / "conventions.md").read_text(encoding="utf-8").startswith("(conventions)=")
    assert (BOOK / "seed_corrections.md").read_text(encoding="utf-8").startswith(
        "(seed_corrections)=")


def test_cited_keys_exist() -> None:
    import re

    bib = (BOOK / "references.bib").read_text(encoding="utf-8")
    keys = set(re.findall(r"^@\w+\{([^,]+),", bib, flags=re.M))
    for name in ("conventions.md", "seed_corrections.md"):
        text = (BOOK / name).read_text(encoding="utf-8")
        for group in re.findall(r"\{cite(?::[pt])?\}`([^`]+)`", text):
            for key in group.split(","):
                assert key.strip() in keys, f"{name} cites unknown key {key!r}"
