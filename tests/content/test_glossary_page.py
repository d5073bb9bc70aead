"""The figures of ``book/glossary.md``, each held against the call that computes it
(:mod:`tests.content.claims`): number formats' limits from NumPy and
:mod:`gpulesson.precision`, the hardware of ``gpulesson/data/gpus.json``, the models'
configurations. Shared figures and helpers: :mod:`tests.content.book_figures`; the coverage
of every number on the page: ``test_book_pages.py``.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np

from gpulesson import (
    calculators,
    cost,
    distributed,
    execution,
    flops,
    memory,
    planning,
    precision,
    roofline,
    transformer,
    units,
)
from gpulesson.hardware import gpu
from gpulesson.precision import float_format
from gpulesson.transformer import param_count, preset

from .book_figures import (
    FP16,
    KIB,
    PEAK,
    _int,
    _latent_values,
    _pcie5_each_way,
    _pue,
    _tflops,
    book_page,
)
from .claims import (
    Claim,
    claims,
    parametrize,
)
from .reference import H100, L38, L270, L370


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


#: The course's copies of the published config.json files (tests/data/hf_configs).
HF_CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"


def _hf_config(name: str) -> dict:
    return json.loads((HF_CONFIGS / name).read_text(encoding="utf-8"))


GLOSSARY = claims(
    lambda: f"largest value is {float(FP16.max):,.0f}",
    lambda: "Llama 4 Scout and Maverick attend in chunks of\n  "
     f"{transformer.from_hf_config(_hf_config('llama4__Llama-4-Maverick-17B-128E.json')).attention_chunk:,}"
     " tokens in three of every four layers",
    lambda: "attention reads only the "
     f"{_hf_config('deepseek_v32__DeepSeek-V3.2.json')['index_topk']:,} tokens that score highest",
    lambda: f"smallest normal number {{math}}`{_fp16_power(_fp16_exponent('normal'))}`",
    lambda: f"reach down to {{math}}`{_fp16_power(_fp16_exponent('subnormal'))}`",
    lambda: f"below {{math}}`{_fp16_power(_fp16_exponent('zero'))}` round to zero",
    lambda: "5 % serial work no number of workers gives more than "
     f"{roofline.amdahl_speedup(0.05, 1e12):.0f} times",
    lambda: f"{{math}}`{_tflops(PEAK)}\\times10^{{12}} / {H100.bandwidth / 1e12}\\times10^{{12}}"
     f" \\approx {roofline.ridge_point(PEAK, H100.bandwidth):.0f}` FLOP per byte",
    lambda: f"({units.format_bandwidth(H100.bandwidth)} on an "
     "H100 SXM)",
    lambda: f"about {units.format_bandwidth(H100.bandwidth)}"
     " for an H100 SXM's",
    lambda: "an H100 SXM has "
     + units.format_bandwidth(H100.interconnect_bandwidth, digits=0),
    lambda: f"about {_pcie5_each_way() / 1e9:.0f} GB/s in each direction, some "
     + {50: "fifty"}[round(H100.bandwidth / _pcie5_each_way(), -1)]
     + " times less than an H100's HBM",
    lambda: "GPT-2 small has "
     + _int(param_count(preset("gpt2"))),
    lambda: "reaches about "
     f"{100 * flops.utilization(740e12, H100.dense('fp16')):.0f} % of an H100's dense FP16 peak",
    lambda: f"still needs {memory.bytes_per_param('mixed')} bytes of model state per "
     "parameter, as many as FP32"
     if memory.bytes_per_param("fp32") == memory.bytes_per_param("mixed") else "differs",
    lambda: "({} + {} for 16-bit weights and gradients, {} for the FP32 master copy and two "
     "moments)".format(*(getattr(memory.model_state_bytes("mixed"), k)
                        for k in ("weights", "gradients", "optimizer"))),
    lambda: "paper's {math}`K = "
     f"{memory.model_state_bytes('mixed').optimizer}` bytes per parameter",
    lambda: f"({H100.tdp_watts:.0f} W for an H100 SXM)",
    lambda: f"a PUE of {_pue(0.30)}–{_pue(0.50)}",
    lambda: f"was {calculators.si_inputs('tco')['pue']} in 2023",
    lambda: f"({_gqa_ratio(L270, L370)} in Llama 2 70B and Llama 3 70B, {_gqa_ratio(L38)} "
     "in Llama 3 8B)",
    # Number formats, from their bit layouts (gpulesson.precision).
    lambda: "{} bits with {} exponent and {} fraction bits".format(*_bit_layout("fp16"))
     + f" ({_about_digits('fp16')} significant decimal digits)",
    lambda: "{} bits, {} exponent and {} fraction bits".format(*_bit_layout("fp32"))
     + f" ({_about_digits('fp32')} significant decimal digits)",
    _bf16_entry,
    lambda: "keeping FP32's {1} exponent bits but only {2} fraction bits".format(
        *_bit_layout("tf32")) if _bit_layout("tf32")[1] == _bit_layout("fp32")[1] else "no",
    lambda: "E4M3 (more precision, largest value "
     f"{float_format('fp8_e4m3').largest:.0f})",
    lambda: f"{{term}}`BF16` and FP32 reach down to about {_normal_floor('bf16', 'fp32')} as "
     "normal numbers",
    _rounds_back_to_one,
    # Other entries.
    lambda: f"about {flops.CHINCHILLA_TOKENS_PER_PARAM} "
     "tokens per parameter",
    _gpu_hours_alike,
    lambda: f"{_pue(0.0)} would mean no overhead",
    lambda: f'"{100 * 0.30:.0f}–{100 * 0.50:.0f} % cooling overhead" is a PUE of '
     f"{_pue(0.30)}–{_pue(0.50)}",
    lambda: f"An H100 SXM has {_sm_count('H100 SXM')}.",
    lambda: f"{memory.weight_bytes(1, precision='bf16'):.0f} in BF16 to serve, "
     f"{memory.bytes_per_param('mixed')} to train with {{term}}`Adam`",
    _tied_embeddings,
    lambda: f"({calculators.si_inputs('flash_attention')['sram_bytes'] // KIB} KiB of combined "
     "L1 cache and shared memory on an A100",
    _ndr_port,
    lambda: f"{100 * distributed.scaling_efficiency(1.0, 0.0):.0f} % when {{math}}`n` GPUs "
     "are {math}`n` times faster than one",
    _latent_values,
    lambda: "({math}`w` = "
     f"{transformer.preset('mistral-7b').sliding_window:,})",
    lambda: "one "
     f"{precision.block_format('mxfp4').scale.bits}-bit power of two per "
     f"{precision.block_format('mxfp4').block_size} elements",
    lambda: "scale per "
     f"{precision.block_format('nvfp4').block_size} elements",
    lambda: "MXFP4 takes "
     f"{precision.bits_per_element('mxfp4'):g} bits per element, NVFP4 "
     f"{precision.bits_per_element('nvfp4'):g}",
    lambda: "(Mixtral 8x7B: "
     f"{transformer.active_params(transformer.preset('mixtral-8x7b')) / 1e9:.1f}B of "
     f"{transformer.param_count(transformer.preset('mixtral-8x7b')) / 1e9:.1f}B",
    # The execution model (gpulesson.execution).
    lambda: f"Memory moves in {execution.coalescing().sector_bytes}-byte sectors",
    lambda: f"({execution.gpu_execution('H100 SXM').compute_capability} for the H100, "
     f"{execution.gpu_execution('B200').compute_capability} for the B200)",
    lambda: f"({execution.sm_limits('9.0').registers_per_sm:,} 32-bit registers on recent "
     "NVIDIA GPUs)",
    lambda: f"up to {execution.sm_limits('H100 SXM').shared_memory_per_sm // KIB} KiB per SM "
     "on an H100",
    lambda: f"A group of up to {execution.sm_limits('9.0').max_threads_per_block:,} threads",
    lambda: f"A group of {execution.sm_limits('9.0').warp_size} consecutive threads",
    lambda: "a wave of a large GEMM is "
     f"{execution.gemm_waves(4096, 4096, sms=execution.gpu_execution('H100 SXM').sms).wave_size}"
     " tiles, one per SM",
)

#: Numbers of book/glossary.md's prose that are not results: published figures.
GLOSSARY_NOT_FIGURES = (
    # Chowdhery et al. 2022 (PaLM), Table 3; Dubey et al. 2024 (Llama 3), Table 4; Jiang et
    # al. 2024 (MegaScale), abstract. The range: test_mfu_entry_spans_the_large_published_bf16_runs.
    "report about 35–55 %: PaLM 46.2 %, Llama 3 38–43 %, MegaScale 55.2 %",
    # Uptime Institute, Global Data Center Survey 2023.
    "report about 1.1",
    # NVIDIA 2022, H100 Tensor Core GPU architecture: 256 KB of L1/shared memory per SM.
    "256 KiB on an H100",
)


@parametrize(GLOSSARY)
def test_glossary_numbers(claim: Claim) -> None:
    claim.check(book_page("glossary.md"), "book/glossary.md")


#: PaLM's published MFU (Chowdhery et al. 2022, Table 3), a large run outside lesson 10's
#: table of runs.
PALM_MFU = 0.462


def test_mfu_entry_spans_the_large_published_bf16_runs() -> None:
    """The MFU entry's "large published BF16 runs report about X–Y %" holds every large
    (1,000 accelerators or more) BF16 run the course quotes: lesson 10's table and PaLM,
    each within the two points "about" allows. It once said "about 40 %" while the table
    held MegaScale's 55.2 % on 12,288 GPUs."""
    entry = book_page("glossary.md").split("Model FLOPs utilisation:", 1)[1][:800]
    found = re.search(r"report about (\d+)(?:–(\d+))? %", entry)
    assert found, "the MFU entry states no range"
    low, high = int(found[1]), int(found[2] or found[1])
    mfus = [r.published_mfu for r in planning.PUBLISHED_RUNS
            if r.precision == "bf16" and r.n_gpus >= 1000] + [PALM_MFU]
    assert low - 2 <= 100 * min(mfus) and 100 * max(mfus) <= high + 2, (
        low, high, sorted(round(100 * m, 1) for m in mfus))
