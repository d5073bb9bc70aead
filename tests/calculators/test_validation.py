"""Bad input is refused with a message naming the argument and what is allowed."""

from __future__ import annotations

import math

import pytest

from gpulesson import flops, gemm, hardware, inference, memory, roofline, transformer
from gpulesson.transformer import TransformerConfig, preset

BAD_COUNTS = [0, -1, True, 2.5, "3", None, math.nan]


@pytest.mark.parametrize("bad", BAD_COUNTS)
def test_gemm_sizes_must_be_positive_integers(bad: object) -> None:
    with pytest.raises((TypeError, ValueError), match="m must be a positive integer"):
        gemm.flops(bad, 2, 3)  # type: ignore[arg-type]


def test_message_names_argument_and_value() -> None:
    with pytest.raises(ValueError, match=r"^layers must be a positive integer, got 0$"):
        TransformerConfig(hidden=64, layers=0, heads=4, vocab=100)


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf, -math.inf, True, "1e12"])
def test_rates_must_be_finite_positive(bad: object) -> None:
    with pytest.raises((TypeError, ValueError), match="peak_flops"):
        roofline.ridge_point(bad, 1e12)  # type: ignore[arg-type]
    with pytest.raises((TypeError, ValueError), match="bandwidth"):
        roofline.time(1.0, 1.0, 1e12, bad)  # type: ignore[arg-type]


def test_float_count_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="heads must be a positive integer, got 32.0"):
        TransformerConfig(hidden=4096, layers=32, heads=32.0, vocab=32000)  # type: ignore


def test_kv_heads_must_divide_heads() -> None:
    with pytest.raises(ValueError, match=r"kv_heads must divide heads \(32\), got 5"):
        TransformerConfig(hidden=4096, layers=2, heads=32, kv_heads=5, vocab=100)


def test_hidden_must_divide_by_heads_without_head_dim() -> None:
    with pytest.raises(ValueError, match="divisible by heads"):
        TransformerConfig(hidden=100, layers=2, heads=3, vocab=100)


def test_tp_must_divide_heads() -> None:
    with pytest.raises(ValueError, match=r"tp must divide heads \(12\), got 8"):
        memory.activation_bytes_per_layer(seq_len=8, batch=1, hidden=768, heads=12, tp=8)


def test_unknown_names_list_the_known_ones() -> None:
    with pytest.raises(KeyError, match="llama-2-7b"):
        preset("llama-9")
    with pytest.raises(KeyError, match="H100 SXM"):
        hardware.gpu("Z9000")
    with pytest.raises(KeyError, match="bf16"):
        memory.precision_bytes("fp12")
    with pytest.raises(ValueError, match="bf16"):  # also a ValueError
        memory.precision_bytes("fp12")
    with pytest.raises(KeyError, match="adam"):
        memory.bytes_per_param("mixed", "lion")
    with pytest.raises(ValueError, match="'none', 'selective', 'full'"):
        memory.activation_bytes_per_layer(seq_len=8, batch=1, hidden=64, heads=4,
                                          recompute="some")
    with pytest.raises(KeyError, match="fp16"):
        hardware.gpu("V100").dense("bf16")


def test_lookup_ignores_case_and_spaces() -> None:
    assert hardware.gpu("h100 sxm") is hardware.gpu("H100-SXM") is hardware.gpu("H100SXM")
    assert preset("Llama-2-7B") is preset("llama 2 7b")
    assert memory.precision_bytes("BFloat16") == 2


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.5, math.nan])
def test_mfu_must_be_a_fraction(bad: float) -> None:
    with pytest.raises(ValueError, match=r"mfu must be a number in \(0, 1\]"):
        flops.training_time(1e20, 8, 1e15, bad)


def test_partial_attention_shape_is_refused() -> None:
    with pytest.raises(ValueError, match="give all of layers, heads, head_dim and seq_len"):
        flops.flops_per_token(7e9, layers=32)
    with pytest.raises(ValueError, match="give all of layers, heads and head_dim"):
        inference.prefill_flops(7e9, 100, heads=32)


def test_cfg_must_be_a_config() -> None:
    with pytest.raises(TypeError, match="TransformerConfig"):
        inference.kv_cache_bytes("llama-2-7b", seq_len=10)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="TransformerConfig"):
        transformer.param_count({"hidden": 1})  # type: ignore[arg-type]


def test_bool_flags_must_be_bool() -> None:
    with pytest.raises(TypeError, match="read_c must be True or False"):
        gemm.min_bytes(2, 2, 2, read_c=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="tied_embeddings"):
        TransformerConfig(hidden=64, layers=1, heads=4, vocab=10, tied_embeddings="yes")


def test_training_memory_validates() -> None:
    with pytest.raises(ValueError, match="batch must be a positive integer, got 0"):
        memory.training_memory(7e9, batch=0, seq_len=10)
    with pytest.raises(ValueError, match="cfg_or_params"):
        memory.training_memory(-7e9, batch=1, seq_len=10)
    with pytest.raises(ValueError, match="memory_per_gpu"):
        memory.training_memory(7e9, batch=1, seq_len=10, memory_per_gpu=0)


def test_amdahl_serial_fraction_range() -> None:
    with pytest.raises(ValueError, match=r"serial_fraction must be a number in \[0, 1\]"):
        roofline.amdahl_speedup(1.2, 8)
    with pytest.raises(ValueError, match="workers"):
        roofline.amdahl_speedup(0.1, 0.5)


def test_distributed_cost_optimisations_validate() -> None:
    from gpulesson import cost, distributed, optimisations

    with pytest.raises(ValueError, match="stage must be 0, 1, 2 or 3, got 4"):
        distributed.zero_memory_per_gpu(1e9, stage=4, dp=8)
    with pytest.raises(ValueError, match="dp must be a positive integer, got 0"):
        distributed.zero_memory_per_gpu(1e9, stage=1, dp=0)
    with pytest.raises(TypeError, match="n_ranks must be a positive integer"):
        distributed.bus_bandwidth_factor("all_reduce", 8.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="latency"):
        distributed.collective_time("all_reduce", 1e9, 8, bandwidth=1e11, latency=-1)
    with pytest.raises(ValueError, match="overlap"):
        distributed.scaling_efficiency(1.0, 1.0, overlap=2)
    with pytest.raises(ValueError, match="pue must be a finite number >= 1"):
        cost.power_cost(power_watts=1, usd_per_kwh=1, hours=1, pue=0.9)
    with pytest.raises(ValueError, match="utilization"):
        cost.cloud_cost(usd_per_hour=1, years=1, utilization=1.5)
    with pytest.raises(ValueError, match="years"):
        cost.on_prem_tco(hardware_usd=1, power_watts=1, usd_per_kwh=1, years=math.inf)
    with pytest.raises(ValueError, match="gpus must be a positive integer, got 0"):
        cost.cost_per_1k_tokens(usd_per_gpu_hour=1, gpus=0, tokens_per_second=1)
    with pytest.raises(ValueError, match="sram_bytes"):
        optimisations.flash_attention_hbm_bytes(seq_len=8, head_dim=8, sram_bytes=0)
    with pytest.raises(ValueError, match="recompute must be one of"):
        optimisations.recompute_overhead(recompute="half")
    with pytest.raises(ValueError, match="gpu_memory"):
        distributed.recommend_layout(n_params=1e9, gpu_memory=math.nan, n_gpus=8)
