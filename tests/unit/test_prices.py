"""gpulesson.prices: the dated table of cloud prices per GPU-hour and the default quote.

Sources, each read on the date its quote carries: AWS's EC2 on-demand price list
(us-east-1, 2026-09-19; p6-b300 from us-west-2), The Next Platform on the p5 launch price
(2023-07-27), AWS's own announcement of its June 2025 cut of P5 on-demand prices "by up
to 45%" (AWS News Blog, 2025-06-05), Oracle's OCI price list API, Azure's Retail
Prices API, and the CoreWeave, Lambda, Nebius, RunPod, Hyperstack, Crusoe and DigitalOcean
pricing pages (all 2026-09-19, as recorded by the public survey the data file names).
Committed prices: Azure's Retail Prices API reservation meters, Vantage's p5.48xlarge page,
Google Cloud's accelerator price sheet, Hyperstack's and DigitalOcean's reserved columns
(2026-09-19). API prices: DeepSeek's pricing page and API news (5 and 29 September 2025),
OpenAI (GPT-4o mini, 18 July 2024; GPT-5 mini, 7 August 2025), Together AI (Llama 3.1 8B
Turbo, 23 July 2024).
"""

from __future__ import annotations

import datetime

import pytest

from gpulesson import cost, hardware, prices


def _quote(provider: str, instance: str, date: str) -> prices.PriceQuote:
    [q] = [q for q in prices.quotes()   # on-demand
           if (q.provider, q.instance, q.date) == (provider, instance, date)]
    return q


def test_source_aws_p5_price_cut_of_june_2025() -> None:
    """p5.48xlarge (8 x H100), us-east-1 on demand: $98.32 an hour at launch (The Next
    Platform, 2023-07-27: $12.29 per GPU-hour), $55.04 after AWS's June 2025 cut ($6.88
    per GPU-hour, AWS price list 2026-09-19): 44 % lower, AWS's "up to 45 %"."""
    before = _quote("AWS", "p5.48xlarge", "2023-07-27")
    after = _quote("AWS", "p5.48xlarge", "2026-09-19")
    assert before.usd_per_gpu_hour == pytest.approx(12.29)
    assert after.usd_per_gpu_hour == pytest.approx(6.88)
    assert round(100 * (1 - after.usd_per_instance_hour / before.usd_per_instance_hour)) == 44
    cut = prices.SOURCES["aws-price-cut-2025"]
    assert "45%" in cut["title"]
    assert cut["publisher"].startswith("AWS") and cut["url"].startswith("https://aws.amazon.com/")


# (GPU, provider, instance, $ per GPU-hour as the provider prints it)
PRINTED = [
    ("B300", "AWS", "p6-b300.48xlarge", 17.802),       # $142.416 for 8
    ("B200", "AWS", "p6-b200.48xlarge", 14.2416),      # $113.9328 for 8
    ("H200", "AWS", "p5en.48xlarge", 7.912),           # $63.296 for 8
    ("A100 40GB", "AWS", "p4d.24xlarge", 2.7447),      # $21.9576 for 8
    ("GB300 NVL72", "Oracle OCI", "BM.GPU.GB300.4", 18.00),
    ("B300", "Oracle OCI", "BM.GPU.B300.8", 15.00),
    ("MI355X", "Oracle OCI", "BM.GPU.MI355X.8", 8.60),
    ("GB200 NVL72", "Microsoft Azure", "ND128isr_NDR_GB200_v6", 27.04),  # $108.16 for 4
    ("H100 SXM", "Microsoft Azure", "ND96isr_H100_v5", 12.29),          # $98.32 for 8
    ("GB200 NVL72", "CoreWeave", "GB200 NVL72 slice", 10.50),           # $42.00 for 4
    ("H100 SXM", "CoreWeave", "HGX H100", 6.155),                       # $49.24 for 8
    ("RTX 5090", "RunPod", "RTX 5090 (Secure Cloud)", 0.99),
    ("MI325X", "DigitalOcean", "MI325X GPU Droplet", 3.80),
]


@pytest.mark.parametrize(("name", "provider", "instance", "per_gpu"), PRINTED,
                         ids=[f"{r[1]}-{r[2]}" for r in PRINTED])
def test_source_per_gpu_prices(name: str, provider: str, instance: str,
                               per_gpu: float) -> None:
    """Instance price / GPUs in it = the per-GPU-hour price the provider prints or the
    survey's quotient (see the module docstring for the sheets)."""
    q = _quote(provider, instance, "2026-09-19")
    assert q.gpu == name
    assert q.usd_per_gpu_hour == pytest.approx(per_gpu, abs=5e-4)


def test_every_quote_is_dated_sourced_and_classified() -> None:
    """Each quote: a GPU of the spec sheet, a kind, an ISO date no later than today, a dated
    source with a URL."""
    assert len(prices.QUOTES) >= 40
    for q in prices.QUOTES:
        assert q.gpu in hardware.GPUS and q.kind in prices.KINDS and q.offer in prices.OFFERS
        assert bool(q.term) == (q.offer == "committed")   # a commitment says its term
        assert q.date[:2] == "20" and len(q.date) == 10 and q.url.startswith("https://")
        # the day it was read: a real day, and not after today (a later date would also
        # make it supersede the quotes it is compared with)
        assert datetime.date.fromisoformat(q.date) <= datetime.date.today(), (q.gpu, q.date)
        assert q.gpus >= 1 and q.usd_per_instance_hour > 0
    hyperscalers = {q.provider for q in prices.QUOTES if q.kind == "hyperscaler"}
    assert hyperscalers == {"AWS", "Microsoft Azure", "Oracle OCI", "Google Cloud"}
    assert not hyperscalers & {q.provider for q in prices.QUOTES if q.kind == "specialist"}
    for source in prices.SOURCES.values():
        assert source["date"][:2] == "20" and source["title"] and source["url"]


def test_default_price_is_the_cheapest_current_hyperscaler_quote() -> None:
    """H100 SXM: AWS ($6.88) under OCI ($10.00) and Azure ($12.29); the 2023 AWS quote is
    history, not current. B300: OCI $15.00 under AWS $17.80. RTX 5090: no hyperscaler
    rents it, so RunPod's specialist $0.99."""
    h100 = prices.default_price("H100 SXM")
    assert (h100.provider, h100.kind, h100.date) == ("AWS", "hyperscaler", "2026-09-19")
    assert h100.usd_per_gpu_hour == pytest.approx(6.88)
    assert prices.default_price("b300").provider == "Oracle OCI"
    rtx = prices.default_price("RTX 5090")
    assert (rtx.kind, rtx.provider, rtx.usd_per_gpu_hour) == ("specialist", "RunPod", 0.99)
    current = prices.current_quotes("H100 SXM")
    assert [q.usd_per_gpu_hour for q in current] == sorted(q.usd_per_gpu_hour for q in current)
    assert all(q.date == "2026-09-19" for q in current)
    assert len(prices.quotes("H100 SXM")) == len(current) + 1  # the 2023 launch price


def test_source_committed_prices_of_2026() -> None:
    """Azure ND96isr_H100_v5 (8 x H100), eastus reservation meters read 2026-09-19:
    $551,221 for one year and $1,134,310 for three, i.e. $7.866 and $5.395 per GPU-hour over
    every hour of the term; AWS's 3-year p5.48xlarge reserved instance $2.972 (Vantage);
    Hyperstack's reserved B200 $5.10; Google's 3-year B200 commitment $7.088."""
    az = {q.term: q for q in prices.current_quotes("H100 SXM", offer="committed")
          if q.provider == "Microsoft Azure"}
    assert az["1 year"].usd_per_gpu_hour * 8 * cost.HOURS_PER_YEAR == pytest.approx(551_221,
                                                                                  abs=1)
    assert az["3 years"].usd_per_gpu_hour * 8 * 3 * cost.HOURS_PER_YEAR == pytest.approx(
        1_134_310, abs=3)
    assert round(az["3 years"].usd_per_gpu_hour, 3) == 5.395
    aws = next(q for q in prices.current_quotes("H100 SXM", offer="committed")
               if q.provider == "AWS")
    assert (aws.term, round(aws.usd_per_gpu_hour, 3)) == ("3 years", 2.972)
    b200 = prices.current_quotes("B200", offer="committed")
    assert (b200[0].provider, b200[0].usd_per_gpu_hour) == ("Hyperstack", 5.10)
    assert {q.term: round(q.usd_per_gpu_hour, 3) for q in b200
            if q.provider == "Google Cloud"} == {"1 year": 11.116, "3 years": 7.088}
    # lookups stay on-demand unless asked: every default is an on-demand quote
    assert all(q.offer == "on-demand" for q in prices.current_quotes())
    assert len(prices.quotes(offer=None)) == len(prices.quotes()) + len(
        prices.quotes(offer="committed"))
    assert "committed (term 3 years)" in aws.describe()


def test_source_deepseek_flash_off_peak_and_peak() -> None:
    """DeepSeek's pricing page, late 2026: deepseek-flash (DeepSeek-V4.1-Flash, from
    10 September 2026) off-peak $0.15 per million input tokens (cache miss), $0.003 (hit),
    $0.60 output; peak rates twice the off-peak ones (01:00-04:00 and 06:00-10:00 UTC on
    weekdays). A conversation of 1,000 tokens in and 500 out: 1,000 x 0.15e-6 +
    500 x 0.60e-6 = $0.00045 off-peak, $0.0009 at peak."""
    flash = prices.api_price("deepseek-flash")
    assert (flash.usd_per_m_input, flash.usd_per_m_cached_input, flash.usd_per_m_output,
            flash.date, flash.peak_factor) == (0.15, 0.003, 0.6, "2026-09-10", 2.0)
    assert flash.per_request(1000, 500) == pytest.approx(0.00045)
    assert flash.per_request(1000, 500, peak=True) == pytest.approx(0.0009)
    assert "01:00-04:00 and 06:00-10:00 UTC" in flash.source
    # a price without peak hours is the same at any hour
    mini = prices.api_price("gpt-5-mini")
    assert mini.peak_factor == 1 and mini.per_request(1000, 500, peak=True) == \
        mini.per_request(1000, 500)
    with pytest.raises(TypeError, match="peak"):
        flash.per_request(1000, 500, peak="yes")


def test_source_api_prices_after_september_2025() -> None:
    """DeepSeek's deepseek-chat: $0.27 in / $1.10 out per million tokens (February 2025),
    $0.56 / $1.68 from 5 September 2025 (cache hit $0.07), $0.28 / $0.42 from 29 September
    2025 (cache hit $0.028, "50%+" cheaper). OpenAI GPT-5 mini $0.25 / $2.00 (7 August
    2025). A conversation of 1,000 tokens in and 500 out at today's DeepSeek price:
    1,000 x 0.28e-6 + 500 x 0.42e-6 = $0.00049."""
    assert [(a.date, a.usd_per_m_input, a.usd_per_m_output) for a in prices.API_PRICES
            if a.model == "deepseek-chat"] == [("2025-02-26", 0.27, 1.10),
                                               ("2025-09-05", 0.56, 1.68),
                                               ("2025-09-29", 0.28, 0.42)]
    now = prices.api_price("deepseek-chat")
    assert now.date == "2025-09-29" and now.usd_per_m_cached_input == 0.028
    assert prices.api_price("deepseek-chat", on="2025-09-10").usd_per_m_input == 0.56
    assert now.per_request(1000, 500) == pytest.approx(0.00049)
    assert now.per_request(1000, 0, cached_share=1) == pytest.approx(0.000028)
    mini = prices.api_price("gpt-5-mini")
    assert (mini.usd_per_m_input, mini.usd_per_m_output, mini.date) == (0.25, 2.0,
                                                                        "2025-08-07")
    # a reasoning model (OpenAI's reasoning guide): its reasoning tokens bill as output
    assert [a.model for a in prices.API_PRICES if a.reasoning] == ["gpt-5-mini"]
    with pytest.raises(KeyError, match="no API price for model 'gpt-9'"):
        prices.api_price("gpt-9")
    with pytest.raises(KeyError, match="the first took effect on 2025-08-07"):
        prices.api_price("gpt-5-mini", on="2025-01-01")
    with pytest.raises(ValueError, match="cached_share"):
        now.per_request(1000, 500, cached_share=1.5)


def test_specialists_undercut_hyperscalers_for_the_teaching_baseline() -> None:
    """2026-09-19: Hyperstack rents an H100 SXM for $3.20 per GPU-hour, under half of AWS's
    $6.88 and about a quarter of Azure's $12.29."""
    cheapest = prices.current_quotes("H100 SXM", kind="specialist")[0]
    assert (cheapest.provider, cheapest.usd_per_gpu_hour) == ("Hyperstack", 3.20)
    assert cheapest.usd_per_gpu_hour < prices.default_price("H100 SXM").usd_per_gpu_hour / 2


def test_a_default_quote_feeds_the_cost_calculators() -> None:
    """DeepSeek-V3's 2.788M H800 GPU-hours at its paper's assumed $2: $5.576M (DeepSeek-AI
    2024, Table 1); the same hours at the H100's default quote cost 3.44 times as much."""
    hours = 2.788e6
    assert cost.run_cost(usd_per_gpu_hour=2, gpus=1, seconds=hours * 3600) == \
        pytest.approx(5.576e6)
    default = prices.default_price("H100 SXM").usd_per_gpu_hour
    assert round(cost.run_cost(usd_per_gpu_hour=default, gpus=1, seconds=hours * 3600)
                 / 5.576e6, 2) == 3.44


def test_describe_and_refusals() -> None:
    assert prices.default_price("H100 SXM").describe().startswith(
        "$6.88 per GPU-hour: AWS p5.48xlarge (8 x H100 SXM, us-east-1), hyperscaler")
    with pytest.raises(KeyError, match="no price quote for GPU 'V100 SXM'; GPUs with "
                                       "prices: A100 40GB"):
        prices.default_price("V100")
    with pytest.raises(KeyError, match="unknown GPU 'H900'"):
        prices.quotes("H900")
    with pytest.raises(ValueError, match="kind must be one of"):
        prices.quotes(kind="neocloud")
    with pytest.raises(ValueError, match="offer must be one of"):
        prices.quotes(offer="spot")


def test_source_azure_rows_the_survey_did_not_reconfirm_say_so() -> None:
    """callgideon/model-inference, research/cross-cutting/cloud-pricing.md (2026-09-19),
    section 3.3: its re-pull corrected both Azure H100 pay-as-you-go rows (each had been
    $4.416 an hour too high) and left the H200, GB200 and MI300X rows unconfirmed. The
    quotes taken from those rows carry that caveat; the H100 rows, re-pulled, do not."""
    azure = [q for q in prices.QUOTES
             if q.provider == "Microsoft Azure" and q.offer == "on-demand"]
    for quote in azure:
        flagged = "not re-confirmed" in quote.note
        assert flagged == (quote.gpu in {"H200", "GB200 NVL72", "MI300X"}), quote
    assert {q.gpu for q in azure} >= {"H100 SXM", "H200", "GB200 NVL72", "MI300X"}
