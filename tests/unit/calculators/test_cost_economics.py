"""Lesson 8's calculators on their dated, sourced example prices: buying or renting an
8-GPU server, and the cost of 1,000 tokens."""

from __future__ import annotations

import pytest

from gpulesson import calculators as C


def test_dgx_h100_power_bill_and_cloud_rent():
    """An NVIDIA DGX H100 draws about 10.2 kW at most (DGX H100 datasheet, 2023); at the
    industry-average PUE of 1.58 (Uptime Institute Global Data Center Survey 2023) and the
    2023 US average industrial price of 8.06 ¢/kWh (EIA), a year of full use costs
    10.2 kW × 1.58 × 8,760 h × $0.0806 = $11,378.80. Renting the same 8 H100s as an AWS
    p5.48xlarge at $55.04 per hour (on demand, AWS's price list read 2026-09-19; $98.32 at
    its launch in July 2023) costs $55.04 × 8,760 h × 5 = $2,410,752 over five years."""
    out = C.compute("tco")
    assert out["annual_power"] == pytest.approx(11_378.80, abs=0.005)
    assert out["power"] == pytest.approx(5 * 11_378.80, abs=0.05)
    assert out["cloud"] == pytest.approx(2_410_752)
    assert C.compute("tco", cloud_usd_per_hour=98.32)["cloud"] == pytest.approx(4_306_416)
    assert out["on_prem"] == pytest.approx(270_000 + out["power"])


def test_owning_breaks_even_within_seven_months_at_full_use():
    """At full use the rent of a month (730 h × $55.04 = $40,179.20) less its power bill
    ($948.23) repays SemiAnalysis's $270,000 estimate for a DGX H100 (May 2023, as cited
    by Epoch AI) in 270,000 / 39,230.97 = 6.88 months; at the 2023 launch price of $98.32
    (730 h × $98.32 = $71,773.60) it took 3.81."""
    assert C.compute("tco")["breakeven"] == pytest.approx(6.882, abs=0.001)
    assert C.evaluate("tco")["text"]["breakeven"] == "6.88 months"
    assert C.compute("tco", cloud_usd_per_hour=98.32)["breakeven"] == pytest.approx(
        3.812, abs=0.001)


def test_the_verdict_says_when_the_break_even_lies_beyond_the_period():
    """Review C-f: at $20 an hour and 40 % use owning breaks even after 49.4 months, inside
    five years (60 months) but not three (36): the widget says which is cheaper over the
    period instead of leaving a 49.4-month break-even beside a 3-year horizon unflagged."""
    five = C.compute("tco", cloud_usd_per_hour=20, utilization=40)
    three = C.compute("tco", cloud_usd_per_hour=20, utilization=40, years=3)
    assert five["verdict"] == "owning, from month 49.4 of 60"
    assert three["verdict"] == ("renting: the break-even, 49.4 months, lies beyond the 36 "
                                "months of the period")
    assert (three["on_prem"] > three["cloud"]) and (five["on_prem"] < five["cloud"])


def test_the_verdict_shows_the_break_even_as_its_output_does():
    """Review of 2026-12-07 (lessons 6-10, F7): "Owning is cheaper after 6.88 months" stood
    directly above "owning, from month 6.9 of 60": one figure, two roundings."""
    for inputs in ({}, {"years": 0.5}):
        text = C.evaluate("tco", inputs)["text"]
        shown = text["breakeven"].removesuffix(" months")
        assert f" {shown} " in f" {text['verdict']} ", text


def test_cost_per_1k_tokens_at_the_aws_p5_price():
    """$55.04 per hour for 8 H100s (AWS, 2026-09-19) is $6.88 per GPU-hour; a GPU producing
    1,000 tokens/s makes 3.6M tokens an hour: $0.00191 per 1,000 tokens, and twice that
    when it has work only half of the paid hours."""
    out = C.compute("cost_per_token")
    assert out["per_1k"] == pytest.approx(6.88 / 3600)
    assert C.compute("cost_per_token", utilization=50)["per_1k"] == pytest.approx(
        2 * out["per_1k"])


def test_the_throughput_help_quotes_the_decode_ceiling_calculator():
    """The throughput's help text quotes Llama 2 7B's batch-1 ceiling on one H100 SXM as
    the decode-ceiling calculator computes it (249 tokens/s), not as typed in."""
    ceiling = C.evaluate("decode_ceiling")["text"]["tokens_per_second"]
    assert ceiling == "249 tokens/s"
    assert f"capped at {ceiling} at batch 1" in C.get("cost_per_token").input(
        "tokens_per_second").help


@pytest.mark.parametrize("inputs", [{"usd_per_kwh": 7}, {"cloud_usd_per_hour": 0},
                                    {"cloud_usd_per_hour": 0.5, "power_watts": 1e6}])
def test_when_the_power_costs_more_than_the_cloud_renting_is_the_answer(inputs):
    """Audit of the site's calculators (2026-12): at 7 $/kWh the DGX H100's power bill
    ($82,352.76 a month at full use) exceeds the AWS rent ($40,179.20), and a free cloud
    is cheaper still. Both are legal inputs whose answer is "rent, owning never breaks
    even"; the calculator showed an error blaming cloud_usd_per_hour and no outputs."""
    result = C.evaluate("tco", inputs)
    assert result["ok"], result
    out = C.compute("tco", **inputs)
    assert out["power"] > out["cloud"] - 1e-9  # the power alone costs the cloud's price or more
    assert out["breakeven"] is None
    assert result["text"]["breakeven"] == "never"
    assert result["text"]["verdict"].startswith("renting: ")
    assert "never" in result["text"]["verdict"]
