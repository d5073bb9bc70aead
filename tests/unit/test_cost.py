"""gpulesson.cost: GPU-hours, the cost of a run, power, ownership against the cloud."""

from __future__ import annotations

import math

import pytest

from gpulesson import cost

# ---------------------------------------------------------------------------------------
# Published figures


def test_source_deepseek_v3_cost_at_2_dollars() -> None:
    """DeepSeek-AI 2024 (DeepSeek-V3 technical report), Table 1: 2.788M H800 GPU-hours on
    2,048 GPUs, "assuming the rental price of the H800 GPU is $2 per GPU hour", $5.576M."""
    seconds = 2.788e6 / 2048 * 3600
    assert cost.run_cost(usd_per_gpu_hour=2, gpus=2048, seconds=seconds) == pytest.approx(
        5.576e6, rel=1e-9)


def test_source_deepseek_v3_gpu_hours_per_trillion_tokens() -> None:
    """DeepSeek-AI 2024, section 1: 180K H800 GPU-hours per trillion tokens, "3.7 days on
    our cluster with 2048 H800 GPUs" (3.7 is rounded to 0.1 day: within 2 %)."""
    assert cost.gpu_hours(gpus=2048, seconds=3.7 * 86_400) == pytest.approx(180e3, rel=0.02)


def test_source_llama2_7b_gpu_hours() -> None:
    """Touvron et al. 2023 (Llama 2), Table 2: 184,320 A100 GPU-hours for 7B; on the
    1,024 A100s of lesson 5's example that is 7.5 days of wall-clock time."""
    seconds = 184_320 / 1024 * 3600
    assert cost.gpu_hours(gpus=1024, seconds=seconds) == pytest.approx(184_320)
    assert round(seconds / 86_400, 1) == 7.5


# ---------------------------------------------------------------------------------------
# Validation


def test_bad_arguments_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="pue must be a finite number >= 1"):
        cost.power_cost(power_watts=1, usd_per_kwh=1, hours=1, pue=0.9)
    with pytest.raises(ValueError, match="utilization"):
        cost.cloud_cost(usd_per_hour=1, years=1, utilization=1.5)
    with pytest.raises(ValueError, match="years"):
        cost.on_prem_tco(hardware_usd=1, power_watts=1, usd_per_kwh=1, years=math.inf)
    with pytest.raises(ValueError, match="gpus must be a positive integer, got 0"):
        cost.cost_per_1k_tokens(usd_per_gpu_hour=1, gpus=0, tokens_per_second=1)
    with pytest.raises(ValueError, match="usd_per_gpu_hour must be a finite non-negative"):
        cost.run_cost(usd_per_gpu_hour=-1, gpus=8, seconds=3600)
    with pytest.raises(ValueError, match="seconds must be a finite non-negative"):
        cost.gpu_hours(gpus=8, seconds=float("nan"))


# ---------------------------------------------------------------------------------------
# Behaviour


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


def test_the_break_even_refusal_writes_extreme_amounts_shortly() -> None:
    """1e300 W of power was a 300-digit dollar figure with commas (issue 35, item 11)."""
    with pytest.raises(ValueError, match="never breaks even") as refused:
        cost.breakeven_months(hardware_usd=1, cloud_usd_per_hour=1e-300, power_watts=1e300,
                              usd_per_kwh=1)
    assert len(str(refused.value)) < 200 and "$1.02e+300" in str(refused.value)
