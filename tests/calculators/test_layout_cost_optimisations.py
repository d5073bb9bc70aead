"""Behaviour of the layout advisor, the pipeline simulator, cost and optimisation helpers."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpulesson import cost, distributed, optimisations
from gpulesson.hardware import gpu
from gpulesson.transformer import param_count, preset


def test_small_model_gets_plain_data_parallel() -> None:
    """GPT-2 small: 124M x 16 bytes = 2 GB fits an 80 GB GPU without any sharding."""
    r = distributed.recommend_layout(n_params=param_count(preset("gpt2")), gpu_memory=80e9,
                                     n_gpus=8)
    assert (r.name, r.dp, r.tp, r.pp, r.zero_stage, r.fits) == ("data parallel", 8, 1, 1, 0,
                                                                 True)
    assert "least communication" in r.reason


def test_7b_on_8_h100_needs_zero() -> None:
    """7B x 16 bytes = 112 GB > 80 GB, but ZeRO-1 over 8 GPUs is 4*7 + 12*7/8 = 38.5 GB."""
    r = distributed.recommend_layout(n_params=7e9, gpu_memory=gpu("H100 SXM").memory_bytes,
                                     n_gpus=8)
    assert r.name == "ZeRO-1" and r.fits
    assert r.memory_per_gpu == pytest.approx(38.5e9)
    assert "112.0 GB" in r.reason and "ZeRO-1" in r.reason


def test_activations_push_to_tensor_parallel() -> None:
    """Large activations that ZeRO cannot shard call for tensor parallelism in a node."""
    r = distributed.recommend_layout(n_params=7e9, gpu_memory=80e9, n_gpus=8,
                                     activation_bytes=120e9)
    assert r.tp > 1 and r.pp == 1 and r.fits
    assert r.dp * r.tp * r.pp == 8
    assert "NVLink" in r.reason


def test_pipeline_across_nodes_for_70b_with_activations() -> None:
    """Llama-2-70B, 4K tokens, selective recomputation on 64 x 80 GB: tensor parallelism
    alone does not fit, a pipeline across nodes is added."""
    cfg = preset("llama-2-70b")
    r = distributed.recommend_layout(n_params=param_count(cfg), gpu_memory=80e9, n_gpus=64,
                                     cfg=cfg, seq_len=4096, recompute="none")
    assert not r.fits or r.pp > 1
    r2 = distributed.recommend_layout(n_params=param_count(cfg), gpu_memory=80e9, n_gpus=64,
                                      cfg=cfg, seq_len=4096, recompute="selective")
    assert r2.fits and r2.dp * r2.tp * r2.pp == 64 and cfg.heads % r2.tp == 0


def test_nothing_fits_says_how_many_gpus() -> None:
    r = distributed.recommend_layout(n_params=1e12, gpu_memory=80e9, n_gpus=8)
    assert not r.fits
    assert "at least 200 such GPUs" in r.reason


def test_single_gpu_no_zero() -> None:
    r = distributed.recommend_layout(n_params=7e9, gpu_memory=80e9, n_gpus=1)
    assert not r.fits and r.dp == 1 and r.zero_stage == 0


@given(p=st.integers(1, 8), m=st.integers(1, 24),
       schedule=st.sampled_from(["gpipe", "1f1b"]))
def test_schedule_makespan_matches_bubble(p: int, m: int, schedule: str) -> None:
    slots = distributed.pipeline_schedule(p, m, schedule=schedule)
    assert len(slots) == 2 * p * m
    assert distributed.pipeline_makespan(slots) == pytest.approx((m + p - 1) * 3.0)
    for stage in range(p):  # no overlap on a device
        mine = sorted((s.start, s.start + s.duration) for s in slots if s.stage == stage)
        assert all(a[1] <= b[0] + 1e-12 for a, b in zip(mine, mine[1:], strict=False))


@given(p=st.integers(2, 6), groups=st.integers(1, 4), v=st.integers(1, 4))
def test_interleaved_makespan(p: int, groups: int, v: int) -> None:
    m = p * groups
    slots = distributed.pipeline_schedule(p, m, schedule="interleaved", interleave=v)
    assert len(slots) == 2 * p * m * v
    assert distributed.pipeline_makespan(slots) == pytest.approx(m * 3.0 + (p - 1) * 3.0 / v)


def test_1f1b_limits_in_flight_microbatches() -> None:
    """1F1B keeps at most p micro-batches in flight on the first stage (GPipe keeps m)."""
    def max_in_flight(schedule: str) -> int:
        slots = distributed.pipeline_schedule(4, 12, schedule=schedule)
        live, peak = 0, 0
        for s in sorted((s for s in slots if s.stage == 0), key=lambda s: s.start):
            live += 1 if s.kind == "forward" else -1
            peak = max(peak, live)
        return peak
    assert max_in_flight("1f1b") == 4 and max_in_flight("gpipe") == 12


def test_schedule_validation() -> None:
    with pytest.raises(ValueError, match="multiple of stages"):
        distributed.pipeline_schedule(4, 6, schedule="interleaved", interleave=2)
    with pytest.raises(ValueError, match="interleave must be 1"):
        distributed.pipeline_schedule(4, 8, schedule="1f1b", interleave=2)
    with pytest.raises(KeyError, match="all_reduce"):
        distributed.bus_bandwidth_factor("gossip", 4)


def test_scaling_efficiency_and_speedup() -> None:
    assert distributed.scaling_efficiency(1.0, 1.0) == 0.5
    assert distributed.scaling_efficiency(1.0, 1.0, overlap=1.0) == 1.0
    assert distributed.scaling_efficiency(1.0, 3.0, overlap=1.0) == pytest.approx(1 / 3)
    assert distributed.effective_speedup(64, 0.5) == 32


def test_power_cost_definition() -> None:
    """1 kW for 1,000 h at PUE 1.5 and $0.10/kWh: 1,500 kWh, $150."""
    assert cost.power_cost(power_watts=1000, usd_per_kwh=0.10, hours=1000, pue=1.5) == \
        pytest.approx(150)


def test_tco_cloud_breakeven() -> None:
    tco = cost.on_prem_breakdown(hardware_usd=240_000, power_watts=30_000, usd_per_kwh=0.10,
                                 years=5, pue=1.4)
    assert tco.power == pytest.approx(5 * 36_792)
    assert tco.total == pytest.approx(423_960)
    assert cost.cloud_cost(usd_per_hour=48, years=5) == pytest.approx(2_102_400)
    months = cost.breakeven_months(hardware_usd=240_000, power_watts=30_000,
                                   usd_per_kwh=0.10, cloud_usd_per_hour=48)
    assert months == pytest.approx(240_000 / (48 * 730 - 36_792 / 12))
    half = cost.breakeven_months(hardware_usd=240_000, power_watts=30_000, usd_per_kwh=0.10,
                                 cloud_usd_per_hour=48, utilization=0.5)
    assert half == pytest.approx(2 * months)
    with pytest.raises(ValueError, match="never breaks even"):
        cost.breakeven_months(hardware_usd=1, power_watts=30_000, usd_per_kwh=0.10,
                              cloud_usd_per_hour=1)


def test_cost_per_1k_tokens() -> None:
    """$3/GPU-hour x 8 GPUs at 80 tokens/s = $24 per 288,000 tokens = $0.0833 per 1K."""
    assert cost.cost_per_1k_tokens(usd_per_gpu_hour=3, gpus=8,
                                   tokens_per_second=80) == pytest.approx(24 / 288)


def test_cost_per_1k_tokens_at_a_utilisation() -> None:
    """A GPU billed every hour but busy a quarter of them: $2 per hour buys 0.25 * 3,600 s
    * 1,000 tokens/s = 900,000 tokens, $2 / 900 = $0.00222 per 1K, four times the busy
    figure; utilisation 1 is the old signature's result, and 0 or above 1 is refused."""
    busy = cost.cost_per_1k_tokens(usd_per_gpu_hour=2, gpus=1, tokens_per_second=1000)
    quarter = cost.cost_per_1k_tokens(usd_per_gpu_hour=2, gpus=1, tokens_per_second=1000,
                                      utilization=0.25)
    assert quarter == pytest.approx(2 / 900) and quarter == pytest.approx(4 * busy)
    assert cost.cost_per_1k_tokens(usd_per_gpu_hour=2, gpus=1, tokens_per_second=1000,
                                   utilization=1.0) == busy
    for bad in (0, 1.5, float("nan")):
        with pytest.raises(ValueError, match="utilization"):
            cost.cost_per_1k_tokens(usd_per_gpu_hour=2, gpus=1, tokens_per_second=1000,
                                    utilization=bad)


def test_checkpoint_memory_edges() -> None:
    """k + ceil(L/k): one segment keeps its input and all 12 layers; 12 segments keep 12
    checkpoints and a one-layer segment; 4 segments of 3 layers: 4 + 3."""
    assert optimisations.checkpoint_memory(layers=12, per_layer_bytes=1.0, segments=1) == 13
    assert optimisations.checkpoint_memory(layers=12, per_layer_bytes=1.0, segments=12) == 13
    assert optimisations.checkpoint_memory(layers=12, per_layer_bytes=2.0, segments=4) == 14
    with pytest.raises(ValueError, match="segments must be at most layers"):
        optimisations.checkpoint_memory(layers=4, per_layer_bytes=1.0, segments=5)


@given(layers=st.integers(1, 2000))
def test_optimal_segments_is_optimal(layers: int) -> None:
    best = optimisations.checkpoint_memory(layers=layers, per_layer_bytes=1.0)
    assert best <= layers + 1
    for k in range(1, min(layers, 80) + 1):
        assert best <= optimisations.checkpoint_memory(layers=layers, per_layer_bytes=1.0,
                                                       segments=k)
    assert best <= 2 * math.sqrt(layers) + 2


def test_selective_recompute_overhead_is_small() -> None:
    """Selective recomputation costs a few percent (Korthikanti et al. 2022), full a third."""
    cfg = preset("llama-2-7b")
    shape = {"layers": cfg.layers, "heads": cfg.heads, "head_dim": cfg.head_dim,
             "seq_len": 4096}
    sel = optimisations.recompute_overhead(recompute="selective",
                                           n_params=param_count(cfg), **shape)
    full = optimisations.recompute_overhead(recompute="full", n_params=param_count(cfg),
                                            **shape)
    assert 0.01 < sel < 0.1 and full == pytest.approx(1 / 3)
    assert optimisations.recompute_overhead(recompute="none") == 0
    with pytest.raises(ValueError, match="needs n_params"):
        optimisations.recompute_overhead(recompute="selective")
    # 'full' with a parameter count but no attention shape names what is missing, and
    # does not talk about 'selective'
    with pytest.raises(ValueError, match="recompute='full'.*missing: layers, heads") as err:
        optimisations.recompute_overhead(recompute="full", n_params=param_count(cfg))
    assert "selective" not in str(err.value)


def test_mixed_precision_saves_only_activations_with_adam() -> None:
    s = optimisations.mixed_precision_savings(n_params=7e9)
    assert s.saved_bytes == 0 and s.fp32_bytes == 112e9
    s = optimisations.mixed_precision_savings(n_params=7e9, activation_bytes_fp32=100e9)
    assert s.saved_bytes == pytest.approx(50e9)


@given(n=st.integers(1, 20000), d=st.sampled_from([32, 64, 128, 256]),
       sram=st.integers(4096, 256 * 1024))
def test_flash_attention_monotone_in_sram(n: int, d: int, sram: int) -> None:
    small = optimisations.flash_attention_hbm_bytes(seq_len=n, head_dim=d, sram_bytes=sram)
    large = optimisations.flash_attention_hbm_bytes(seq_len=n, head_dim=d,
                                                    sram_bytes=2 * sram)
    assert 0 < large <= small


@given(psi=st.floats(1e6, 1e13), dp=st.integers(1, 4096), k=st.sampled_from([4, 8, 12, 14]))
def test_zero_monotone(psi: float, dp: int, k: float) -> None:
    """Stage k+1 never needs more than stage k; more ranks never more under ZeRO-3."""
    values = [distributed.zero_memory_per_gpu(psi, stage=s, dp=dp, optimizer_bytes=k)
              for s in range(4)]
    assert all(math.isfinite(x) and x > 0 for x in values)
    assert values[0] >= values[1] >= values[2] >= values[3]
    more = distributed.zero_memory_per_gpu(psi, stage=3, dp=dp + 1, optimizer_bytes=k)
    assert more <= values[3]
