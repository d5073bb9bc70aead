"""Lesson 8, *The Cost of a Model* (``notebooks/cost_economics.ipynb``), and its exercises:
the promises the pages make, checked without running them (nbval runs them).

* the skeleton of the house style, hidden answers, the lesson's registry widgets, glossary
  terms and citations that exist, and the exercise notebook wired to the bank;
* every figure the prose states is a claim (:mod:`tests.content.claims`): the text as the
  page has it, rebuilt from the calculators with the inputs the lesson names, and every
  other number of the prose is listed below as an input, a formula's constant or a figure
  quoted from the earlier calculator page or a source;
* the dated example prices as the sources publish them;
* dollar amounts that render as text in JupyterLab too (its MathJax pairs any two "$" of a
  paragraph into inline math unless the paragraph is marked ``mathjax_ignore``).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from gpulesson import (
    calculators,
    cost,
    hardware,
    inference,
    memory,
    planning,
    prices,
    transformer,
    units,
)
from gpulesson.exercises import lesson_module

from . import nbtools as nb
from .claims import claim_tests, claims
from .reference import H100, dollars
from .reference import pct_unspaced as pct
from .test_dollar_signs import paragraphs

SLUG = "cost_economics"
NOTEBOOK = nb.notebook(SLUG)
EXERCISES = nb.exercise_notebook(SLUG)
BANK = lesson_module(SLUG)

# The lesson's inputs, as its set-up cell takes them: the dated example prices are the
# registry's defaults (sources in test_example_prices_are_the_published_ones), the
# cheaper rental price the cheapest on-demand H100 quote of gpulesson.prices.
EXAMPLE = calculators.si_inputs("tco")
SERVER = {k: EXAMPLE[k] for k in ("hardware_usd", "power_watts", "usd_per_kwh", "pue")}
AWS_NODE = EXAMPLE["cloud_usd_per_hour"]
AWS_GPU = calculators.si_inputs("cost_per_token")["usd_per_gpu_hour"]
CHEAPEST = prices.current_quotes("H100 SXM")[0]
RENT_GPU = CHEAPEST.usd_per_gpu_hour
RENT_NODE = 8 * RENT_GPU
B200_SERVER = {**SERVER, "hardware_usd": 515_000, "power_watts": 14_300}  # DGX B200
YEAR = cost.on_prem_breakdown(years=1, **SERVER)
LIFE = cost.on_prem_breakdown(years=5, **SERVER)
CONTEXT, OVERHEAD = 2048, 2e9      # section 6: tokens per conversation, bytes kept free
# The earlier calculator page's TCO example, from the inputs section 4 finds for it.
SEED = {"hardware_usd": 240_000, "power_watts": 30_000, "usd_per_kwh": 0.10, "pue": 1.4}
SEED_CLOUD = 2_102_400             # the page's five-year cloud bill, USD
SEED_TOKENS_PER_HOUR = 288_000     # the page's serving figures
SEED_REVENUE = 5_760               # USD a day


def per_m(usd: float) -> str:
    """A price per million tokens as price lists print it: "$0.28", "$2.00"."""
    return f"${usd:.2f}"


def cents(usd: float) -> str:
    return f"{100 * usd:.0f} cents"


def tariff(usd_per_kwh: float) -> str:
    return f"{100 * usd_per_kwh:.2f} ¢/kWh"


def yearly_power(**change: float) -> float:
    """A year of the DGX H100's electricity, with ``change`` to the example inputs."""
    return cost.power_cost(**{"power_watts": SERVER["power_watts"],
                              "usd_per_kwh": SERVER["usd_per_kwh"], "pue": SERVER["pue"],
                              "hours": cost.HOURS_PER_YEAR, **change})


def gpus_only() -> float:
    """A year of the eight GPUs' TDP alone, with the PUE."""
    return yearly_power(power_watts=8 * H100.tdp_watts)


def breakeven(rate: float, utilization: float = 1.0, **server: float) -> float:
    return cost.breakeven_months(cloud_usd_per_hour=rate, utilization=utilization,
                                 **{**SERVER, **server})


def lowest_paying_utilisation(years: int, rate: float) -> float:
    """The utilisation at which owning for ``years`` costs as much as renting: the
    break-even time grows as 1/u, so it is where the break-even at full use, stretched by
    1/u, equals the server's life (the lesson finds it by bisection instead)."""
    return breakeven(rate) / (12 * years)


def per_1k(price: float, tokens_per_second: float, utilization: float = 1.0) -> float:
    return cost.cost_per_1k_tokens(usd_per_gpu_hour=price, gpus=1,
                                   tokens_per_second=tokens_per_second,
                                   utilization=utilization)


def serving(name: str, batch: int) -> inference.DecodeSpeed:
    """Section 6: a 7B model in BF16 on one H100, ``batch`` conversations of 2,048 tokens."""
    cfg = transformer.preset(name)
    n = transformer.param_count(cfg)
    return inference.decode_speed(
        n_params=n, weight_bytes=memory.weight_bytes(n, precision="bf16"), batch=batch,
        kv_bytes_per_sequence=inference.kv_cache_bytes(cfg, seq_len=CONTEXT),
        peak_flops=H100.dense("bf16"), bandwidth=H100.bandwidth)


def most_conversations(name: str) -> int:
    return inference.max_concurrent_sequences(
        transformer.preset(name), context=CONTEXT, gpu_memory=H100.memory_bytes,
        overhead=OVERHEAD)


def mistral(batch: int) -> float:
    """Tokens per second of Mistral 7B at ``batch``."""
    return serving("mistral-7b", batch).tokens_per_second


def h100_now() -> tuple[prices.PriceQuote, ...]:
    """The current on-demand quotes for an H100 (gpulesson.prices), cheapest first."""
    return prices.current_quotes("H100 SXM")


def _cheapest_other_h100() -> float:
    """The cheapest current on-demand H100 that is not an SXM part (PCIe, NVL): cheaper
    than the SXM quote the lesson uses, which is why the lesson names the part."""
    other = min(q.usd_per_gpu_hour for gpu in ("H100 PCIe", "H100 NVL")
                for q in prices.current_quotes(gpu))
    assert other < RENT_GPU
    return other


def aws_now() -> prices.PriceQuote:
    """AWS's p5.48xlarge at its latest quote (after the cut of June 2025)."""
    return next(q for q in h100_now() if q.provider == "AWS")


def gpu_power_hour() -> float:
    """One H100 at 700 W for an hour, with the building, at the example tariff."""
    return cost.power_cost(power_watts=H100.tdp_watts, usd_per_kwh=SERVER["usd_per_kwh"],
                           hours=1, pue=SERVER["pue"])


def tco(**inputs: float) -> dict[str, float]:
    """The lesson's ``tco`` widget with ``inputs`` changed (in its shown units)."""
    return calculators.compute("tco", **inputs)


def seed_own() -> float:
    return cost.on_prem_tco(years=5, **SEED)


def seed_rate() -> float:
    """The seed's 288,000 tokens per hour, per second."""
    return SEED_TOKENS_PER_HOUR / cost.SECONDS_PER_HOUR


def seed_per_1k(usd_per_gpu_hour: float = 6, gpus: int = 4, utilization: float = 1.0) -> float:
    return cost.cost_per_1k_tokens(usd_per_gpu_hour=usd_per_gpu_hour, gpus=gpus,
                                   tokens_per_second=seed_rate(), utilization=utilization)


def seed_hourly() -> float:
    """The hourly bill of the four GPUs at $6 per GPU-hour."""
    return cost.run_cost(usd_per_gpu_hour=6, gpus=4, seconds=cost.SECONDS_PER_HOUR)


def ceiling_70b() -> float:
    """Llama 2 70B in BF16, batch 1, its weights split over four H100s."""
    n = transformer.param_count(transformer.preset("llama-2-70b"))
    return inference.decode_ceiling_tokens_per_second(
        weight_bytes=memory.weight_bytes(n, precision="bf16"), bandwidth=4 * H100.bandwidth)


def seed_day() -> float:
    """A day of the four GPUs at $6 per GPU-hour."""
    return cost.run_cost(usd_per_gpu_hour=6, gpus=4, seconds=24 * cost.SECONDS_PER_HOUR)


def times(ratio: float) -> str:
    """A ratio as the prose words it: "ten times", "twentyfold"."""
    return {2: "doubles", 5: "fivefold", 10: "ten times", 20: "twentyfold"}[round(ratio)]


WORDS = {3: "three"}


def memory_bound_up_to() -> float:
    """The batch at which an H100's BF16 decode step turns compute-bound (lesson 6)."""
    return inference.decode_compute_bound_batch(peak_flops=H100.dense("bf16"),
                                                bandwidth=H100.bandwidth, bytes_per_param=2)


def mistral_gain(batch: int) -> float:
    return per_1k(RENT_GPU, mistral(1)) / per_1k(RENT_GPU, mistral(batch))



# Self-hosting beside a hosted API: the chain's traffic, dated API prices (gpulesson.prices)
CONVERSATIONS, PROMPT, ANSWER = 50_000, 1000, 500
REASONING = 500        # the lesson's assumed allowance of GPT-5 mini's hidden reasoning tokens
HOSTED_8B = prices.api_price("Meta-Llama-3.1-8B-Instruct-Turbo")
#: DeepSeek's current model through its API: off-peak prices, twice them at peak hours.
DEEPSEEK = prices.api_price("deepseek-flash")


#: Small counts as the lesson writes them.
_COUNT = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}


def _hosted(times: int) -> planning.ServingPlan:
    return planning.plan_serving("mistral-7b", "H100 SXM", max_model_len=4096,
                                 qps=times * CONVERSATIONS / 86_400, prompt_tokens=PROMPT,
                                 output_tokens=ANSWER, usd_per_gpu_hour=RENT_GPU)


def _per_conversation(times: int) -> float:
    return _hosted(times).cost_per_million_tokens * ANSWER / 1e6


def _api_breakeven() -> float:
    return 24 * RENT_GPU / HOSTED_8B.per_request(PROMPT, ANSWER)


def _api(model: str) -> float:
    return prices.api_price(model).per_request(PROMPT, ANSWER)


def _gpt5_mini_reasoning() -> float:
    """GPT-5 mini with the lesson's reasoning allowance, billed as output (prices.json's
    note on it: a reasoning model)."""
    api = prices.api_price("gpt-5-mini")
    assert "reasoning" in api.note
    return api.per_request(PROMPT, ANSWER + REASONING)


def _committed(gpu: str, server: dict[str, float]) -> dict[tuple[str, str], float]:
    """Months until owning ``server`` beats each committed quote for ``gpu``, at full use."""
    return {(q.provider, q.term): breakeven(8 * q.usd_per_gpu_hour, **server)
            for q in prices.current_quotes(gpu, offer="committed")}

CLAIMS = claims(
    # The dated example prices (the registry's defaults) and section 1
    lambda: f"an NVIDIA DGX H100 at about {dollars(SERVER['hardware_usd'])}",
    lambda: f"its {SERVER['power_watts'] / 1e3:.1f} kW maximum "
     "power",
    lambda: f"a PUE of {SERVER['pue']} (the industry "
     "average",
    lambda: f"electricity at {tariff(SERVER['usd_per_kwh'])}",
    lambda: f"AWS's p5.48xlarge (8 × H100) at {units.format_usd(AWS_NODE)} an hour on demand",
    lambda: "(it cost "
     f"{units.format_usd(prices.quotes('H100 SXM', kind='hyperscaler')[0].usd_per_instance_hour)}"
     " at its launch",
    # the cheapest of the providers the course's table keeps (prices.json: eleven clouds'
    # list prices, spot and negotiated prices left out), not of the whole market
    lambda: f"the cheapest on-demand H100 SXM in that table, {CHEAPEST.provider}'s "
     f"{units.format_usd(RENT_GPU)} per GPU-hour",
    lambda: f"A PUE of {SERVER['pue']} means that for every kilowatt-hour the "
     f"server uses, the building draws {SERVER['pue']}.",
    lambda: f"A year is {cost.HOURS_PER_YEAR:,} hours.",
    lambda: f"A year of power costs about {dollars(round(YEAR.power, -2))}, so five years of "
     f"it add {dollars(LIFE.power)} to the {dollars(LIFE.hardware)} of hardware: the "
     f"purchase is {pct(LIFE.hardware / LIFE.total)} of this TCO.",
    lambda: f"8 × {H100.tdp_watts:.0f} W = {8 * H100.tdp_watts / 1e3:.1f} kW, but the "
     f"server is rated at {SERVER['power_watts'] / 1e3:.1f} kW",
    lambda: f"alone gives {dollars(gpus_only())} a year, "
     f"{pct(1 - gpus_only() / YEAR.power)} too little",
    lambda: f"Without the PUE the bill would be {dollars(yearly_power(pue=1.0))} a year "
     f"(next cell): forgetting it underestimates power by "
     f"{pct(1 - yearly_power(pue=1.0) / YEAR.power)}.",
    lambda: f'the power of a 64-GPU cluster as "64 × {H100.tdp_watts:.0f} W',
    lambda: f"a DGX H100 is rated at {SERVER['power_watts'] / 1e3:.1f} kW for "
     f"{8 * H100.tdp_watts / 1e3:.1f} kW of GPUs, so the servers draw up to "
     f"{SERVER['power_watts'] / (8 * H100.tdp_watts):.1f} times",
    lambda: f"at a PUE of {SERVER['pue']}, another {pct(SERVER['pue'] - 1)}. Together about "
     f"{SERVER['power_watts'] / (8 * H100.tdp_watts):.1f} × {SERVER['pue']} ≈ "
     f"{YEAR.power / yearly_power(power_watts=8 * H100.tdp_watts, pue=1.0):.1f} times",
    # Section 2
    lambda: f"AWS's p5.48xlarge is eight H100s for {units.format_usd(AWS_NODE)} an hour, "
     f"that is {units.format_usd(AWS_NODE / 8)} per GPU-hour",
    lambda: f"the cheapest on-demand H100 SXM in the course's table of September 2026 was "
     f"{CHEAPEST.provider}'s "
     f"{units.format_usd(RENT_GPU)} (an H100 PCIe or NVL card rents for less, from "
     f"{units.format_usd(_cheapest_other_h100())}",
    lambda: "on-demand AWS costs "
     f"${cost.cloud_cost(usd_per_hour=AWS_NODE, years=5) / 1e6:.1f} million and the cheapest "
     f"quote {dollars(cost.cloud_cost(usd_per_hour=RENT_NODE, years=5))}, against "
     f"{dollars(LIFE.total)} for owning",
    # Section 3
    lambda: f"with {cost.HOURS_PER_MONTH:.0f} hours in a month",
    lambda: f"{{{cost.HOURS_PER_MONTH:.0f}\\,u\\,",
    lambda: f"a fully busy server pays for itself in {breakeven(AWS_NODE):.1f} "
     f"months (at AWS's launch price of 2023 it took {breakeven(98.32):.1f}). Against "
     f"{units.format_usd(RENT_GPU)} per GPU-hour it takes {breakeven(RENT_NODE):.1f} months, "
     f"and at 25% utilisation {breakeven(RENT_NODE, 0.25):.0f} months",
    lambda: f"if it is renting at {units.format_usd(RENT_GPU)} per GPU-hour and "
     "plans over three years, it should "
     + ("keep renting" if lowest_paying_utilisation(3, RENT_NODE) > 1 / 3 else "buy"),
    lambda: "Over five years owning costs "
     f"{dollars(tco(cloud_usd_per_hour=20, utilization=40)['on_prem'])} and renting "
     f"{dollars(tco(cloud_usd_per_hour=20, utilization=40)['cloud'])}: owning is cheaper, "
     "and it breaks even after "
     f"{tco(cloud_usd_per_hour=20, utilization=40)['breakeven']:.1f} months. Over three "
     "years, owning costs "
     f"{dollars(tco(cloud_usd_per_hour=20, utilization=40, years=3)['on_prem'])} and "
     f"renting {dollars(tco(cloud_usd_per_hour=20, utilization=40, years=3)['cloud'])}",
    # Section 4: the earlier page's TCO example, from the inputs the lesson finds
    lambda: "was estimated at about "
     f"{dollars(SERVER['hardware_usd'])}",
    lambda: f"**Power, {dollars(cost.on_prem_breakdown(years=1, **SEED).power)} a year**, is "
     f"{units.format_usd(cost.on_prem_breakdown(years=1, **SEED).power / cost.HOURS_PER_YEAR)}"
     " of electricity per hour",
    lambda: "which is "
     f"{WORDS[round(SEED['power_watts'] / SERVER['power_watts'])]} DGX H100 "
     f"servers' worth of power, or the eight GPUs' {8 * H100.tdp_watts / 1e3:.1f} kW",
    lambda: f"One 8-GPU server at the 2023 averages costs {dollars(YEAR.power)} a year",
    lambda: "they imply a cloud price of "
     f"${SEED_CLOUD / cost.cloud_cost(usd_per_hour=1, years=5):.0f} per hour for eight GPUs, "
     f"${SEED_CLOUD / cost.cloud_cost(usd_per_hour=8, years=5):.0f} per GPU-hour",
    lambda: f"**The {breakeven(48, **{**SEED, 'power_watts': 0}):.1f}-month break-even** "
     "divides the hardware price by the rent alone. Subtracting the page's own power bill "
     f"gives {breakeven(48, **SEED):.1f} months; at 50% utilisation, "
     f"{breakeven(48, 0.5, **SEED):.1f} months.",
    lambda: f"(the 2023 average was {SERVER['pue']}",
    # Section 5
    lambda: f"At {units.format_usd(RENT_GPU)} per GPU-hour that is "
     f"{units.format_usd(per_1k(RENT_GPU, 2400))} per 1,000 tokens, about "
     f"{cents(1000 * per_1k(RENT_GPU, 2400))} per million; at AWS's on-demand rate, "
     f"{cents(1000 * per_1k(AWS_GPU, 2400))} per million.",
    lambda: "Half the hours idle "
     f"{times(per_1k(RENT_GPU, 2400, 0.5) / per_1k(RENT_GPU, 2400))} the cost per token, "
     f"{cents(1000 * per_1k(RENT_GPU, 2400, 0.5))} per million instead of "
     f"{100_000 * per_1k(RENT_GPU, 2400):.0f}; busy 30% of the time, each token costs "
     f"{per_1k(RENT_GPU, 2400, 0.3) / per_1k(RENT_GPU, 2400):.1f} times as much, "
     f"{cents(1000 * per_1k(RENT_GPU, 2400, 0.3))} per million.",
    # The earlier page's serving figures
    lambda: f"**{SEED_TOKENS_PER_HOUR:,} tokens per hour** is {seed_rate():.0f} tokens per "
     f"second. At **${seed_per_1k():.3f}** per 1,000 tokens that is "
     f"{dollars(seed_hourly())} an hour: four GPUs at the {dollars(seed_hourly() / 4)} per "
     f"GPU-hour of the TCO example (or eight at {dollars(seed_hourly() / 8)}). "
     f"{seed_rate():.0f} tokens per second on four H100s",
    lambda: "has a bandwidth ceiling of "
     f"{ceiling_70b():.0f} tokens/s",
    lambda: f"A day of those four GPUs costs {dollars(seed_day())}; "
     f"${SEED_REVENUE:,} is {times(SEED_REVENUE / seed_day())} that, and would need a "
     "selling price of "
     f"{cents(seed_per_1k(SEED_REVENUE / 24, 1))} per 1,000 tokens and enough customers to "
     f"buy {SEED_TOKENS_PER_HOUR * 24 / 1e6:.1f} million tokens a day.",
    lambda: "so going from 80% to 40% "
     f"{times(seed_per_1k(utilization=0.4) / seed_per_1k(utilization=0.8))} it",
    # Section 6
    lambda: f"At batch 1 the GPU makes {mistral(1):.0f} tokens per second and 1,000 tokens "
     f"cost {units.format_usd(per_1k(RENT_GPU, mistral(1)))} at "
     f"{units.format_usd(RENT_GPU)} per GPU-hour. At batch "
     f"32 it makes {mistral(32):,.0f} per second: the same hour now buys "
     f"{mistral(32) / mistral(1):.1f} times as many tokens, and each costs "
     f"{mistral_gain(32):.1f} times less, {units.format_usd(per_1k(RENT_GPU, mistral(32)))} "
     "per 1,000.",
    lambda: "runs out of memory after "
     f"{most_conversations('llama-2-7b')} conversations of 2,048 tokens; its cost per token "
     f"stops there. Mistral 7B fits {most_conversations('mistral-7b')}.",
    lambda: f"shifted up {AWS_GPU / RENT_GPU:.1f} times",
    lambda: f"{serving('mistral-7b', 1).per_sequence:.0f} tokens/s alone, "
     f"{serving('mistral-7b', 32).per_sequence:.0f} at batch 32, "
     f"{serving('mistral-7b', 128).per_sequence:.0f} at batch 128",
    lambda: f"An H100 at its full {H100.tdp_watts:.0f} W",
    lambda: f"Under {math.ceil(100 * gpu_power_hour())} cents an hour, "
     f"{pct(gpu_power_hour() / RENT_GPU, 1)} of even the cheapest rental price",
    lambda: f"({mistral(2):.0f} instead of {mistral(1):.0f} tokens/s for Mistral 7B)",
    lambda: "For an owned server "
     f"that is {pct(LIFE.power / LIFE.total)} of the five-year TCO",
    lambda: "worth at most "
     f"{pct(gpu_power_hour() / RENT_GPU, 1)} of a {units.format_usd(RENT_GPU)} GPU-hour",
    # Section 7 and the closing admonition
    lambda: f"Although the machine costs {RENT_GPU / 0.10:.0f} times less per\nhour than "
     "the H100",
    lambda: "memory-bound up to a batch of about "
     f"{memory_bound_up_to():.0f}",
    lambda: f"{breakeven(48, **{**SEED, 'power_watts': 0}):.1f} months becomes "
     f"{breakeven(48, **SEED):.1f} with the power bill and "
     f"{breakeven(48, 0.5, **SEED):.0f} at half utilisation; a cost per token moves "
     f"{times(mistral_gain(32))} with the batch and "
     f"{ {2: 'twofold', 3: 'threefold'}[round(AWS_GPU / RENT_GPU)]} between two",
    # Key takeaways
    lambda: f"({SERVER['power_watts'] / 1e3:.1f} kW for a DGX H100, not the GPUs' "
     f"{8 * H100.tdp_watts / 1e3:.1f} kW) and the building (PUE {SERVER['pue']} on average in "
     f"2023). Even so, power was {pct(LIFE.power / LIFE.total)} of a five-year TCO",
    lambda: f"({units.format_usd(AWS_NODE)} against {units.format_usd(AWS_GPU)} for a "
     "p5.48xlarge in 2026)",
    lambda: f"({pct(lowest_paying_utilisation(5, RENT_NODE))} over five years against "
     f"{units.format_usd(RENT_GPU)} per GPU-hour, "
     f"{pct(lowest_paying_utilisation(3, RENT_NODE))} over three)",
    lambda: "so 30% utilisation makes each token "
     f"{per_1k(RENT_GPU, 2400, 0.3) / per_1k(RENT_GPU, 2400):.1f} times dearer",
    lambda: f"batch 32 cuts the cost per token {mistral_gain(32):.1f}-fold against batch 1",
    # section 7: the H100's batch-32 line over its batch-1 line is the batching gain
    lambda: f"the\nsecond figure is always {mistral_gain(32):.1f} times the first, since batch 32 "
     f"is the H100's {mistral_gain(32):.1f}-fold gain of section 6",
    # self-hosting beside a hosted API
    lambda: "DeepSeek's API, {} per million input tokens and {} per million output tokens "
     "off-peak since {}, and {} that at its peak hours, 01:00 to 04:00 and 06:00 to 10:00 UTC "
     "on weekdays".format(
        per_m(DEEPSEEK.usd_per_m_input), per_m(DEEPSEEK.usd_per_m_output),
        "10 September 2026" if DEEPSEEK.date == "2026-09-10" else "?",
        "twice" if DEEPSEEK.peak_factor == 2 else "?"),
    lambda: "(its V3.2 had cost {} and {} around the clock from 29 September 2025".format(
        *(per_m(getattr(prices.api_price("deepseek-chat", on="2025-09-29"), f"usd_per_m_{io}"))
          for io in ("input", "output"))),
    lambda: "OpenAI's GPT-5 mini, "
     f"{per_m(prices.api_price('gpt-5-mini').usd_per_m_input)} and "
     f"{per_m(prices.api_price('gpt-5-mini').usd_per_m_output)} since "
     "August 2025",
    lambda: "Llama 3.1 8B on Together AI "
     f"at {per_m(HOSTED_8B.usd_per_m_input)} for either"
     if HOSTED_8B.usd_per_m_input == HOSTED_8B.usd_per_m_output else "?",
    lambda: "Mistral 7B on one H100 at "
     f"{units.format_usd(RENT_GPU)} per GPU-hour",
    lambda: "we use the cheapest "
     f"H100 SXM quote above, {units.format_usd(RENT_GPU)} per GPU-hour",
    lambda: f"At the chain's own traffic, {CONVERSATIONS / 86_400:.2f} requests per second, "
     f"the rented H100 holds about {_COUNT.get(round(_hosted(1).batch), 'many')} "
     f"conversation{'' if round(_hosted(1).batch) == 1 else 's'} at a time and idles between "
     "them: "
     f"{units.format_usd(_per_conversation(1), digits=2)} a conversation, "
     + ("more than any of the three APIs charges" if _per_conversation(1) > max(
        _api(m) for m in (DEEPSEEK.model, "gpt-5-mini", HOSTED_8B.model)) else "?"),
    lambda: "with the assumed "
     f"{REASONING} reasoning tokens it costs "
     f"{units.format_usd(_gpt5_mini_reasoning())} a conversation, "
     + ("more than the rented GPU" if _gpt5_mini_reasoning() > _per_conversation(1) else "?"),
    lambda: "The cell prices the "
     f"{ANSWER} tokens of the answer alone for every API, then DeepSeek at its peak hours "
     f"and GPT-5 mini with an assumed allowance of {REASONING} reasoning tokens",
    lambda: "a conversation costs a quarter as much, "
     f"{units.format_usd(_per_conversation(4), digits=2)}, "
     + ("below DeepSeek's off-peak price and GPT-5 mini's but not the hosted 8B's"
       if _api(HOSTED_8B.model) < _per_conversation(4) < min(
           _api(DEEPSEEK.model), _api("gpt-5-mini")) else "?")
     + f"; at 16 times, still {'one GPU' if _hosted(16).gpus == 1 else 'more GPUs'}, "
     f"{units.format_usd(_per_conversation(16), digits=2)}; only at 64 times does it take "
     + (f"more ({_COUNT.get(_hosted(64).gpus, 'many')})" if _hosted(64).gpus > 1
       and _hosted(16).gpus == 1 else "one still"),
    lambda: "A GPU rented around the clock for "
     f"${24 * RENT_GPU:.0f} a day matches the hosted 8B's price at about "
     f"{round(_api_breakeven(), -4):,.0f} conversations a day, "
     f"{_api_breakeven() / CONVERSATIONS:.1f} times the chain's traffic",
    lambda: "one H100 carries "
     f"{max(t for t in (1, 4, 16, 64) if _hosted(t).gpus == 1)} times the chain's traffic",
    # Section 3: committed prices and a server of 2026 (gpulesson.prices, read 2026-09-19)
    lambda: "a complete DGX B200 (eight B200 GPUs) was quoted at about "
     f"{dollars(B200_SERVER['hardware_usd'])} in February 2026",
    lambda: "it draws up to "
     f"{B200_SERVER['power_watts'] / 1e3:.1f} kW",
    lambda: "the cheapest one, {}'s reserved {}, after {:.1f} months".format(
        prices.current_quotes("H100 SXM", offer="committed")[0].provider,
        units.format_usd(prices.current_quotes("H100 SXM", offer="committed")[0]
                         .usd_per_gpu_hour),
        max(_committed("H100 SXM", SERVER).values())),
    lambda: "Azure's three-year reservation at {} is caught up after {:.1f} months".format(
        units.format_usd(next(q.usd_per_gpu_hour for q in prices.current_quotes(
            "H100 SXM", offer="committed") if q.provider == "Microsoft Azure"
            and q.term == "3 years")),
        _committed("H100 SXM", SERVER)[("Microsoft Azure", "3 years")]),
    lambda: f"{breakeven(8 * prices.default_price('B200').usd_per_gpu_hour, **B200_SERVER):.1f}"
     " months against Oracle's on-demand B200, "
     f"{max(_committed('B200', B200_SERVER).values()):.1f} against the cheapest committed "
     "quote",
    lambda: "(DigitalOcean's 12 months at "
     "{} against {:.1f})".format(units.format_usd(next(
        q.usd_per_gpu_hour for q in prices.current_quotes("H100 SXM", offer="committed")
        if q.provider == "DigitalOcean")), _committed("H100 SXM", SERVER)[
            ("DigitalOcean", "12 months")]),
)

#: Numbers of the prose that are not results of the calculators.
NOT_FIGURES = (
    # dates and exercise numbers
    "(read on 2026-09-19", "(exercise 11 of the",
    # the chain's traffic and the dated API prices (DeepSeek API docs, Feb 2025; OpenAI,
    # July 2024), inputs of the self-hosting comparison
    "about 50,000 conversations a day, each with some 1,000 tokens of question and context and "
    "500 tokens of answer",
    "At four times the traffic",
    "only at 64 times",
    # units of the cost figures and formula constants
    "1,000 tokens", "per 1,000", "1,000 generated tokens", "\\frac{P}{1000}",
    "8760\\cdot \\text{years}", "in 3,600 seconds", "{3600 \\times", "}\\times 1000",
    "÷ (3,600 × tokens/s × utilisation) × 1,000",
    # inputs the lesson chooses
    "2,400 tokens per second", "at 25% the dashed line",
    "set the cloud price to $20 per hour and the utilisation to 40%",
    "1, 8 or 128 conversations", "of 2,048 tokens", "less than 32-fold",
    "up to batch 128", "at batches 1, 8 and 32", "We assume $0.10 per hour",
    "batch-32 tokens per second",
    "under 32 times the batch-1 figure",
    "16 GB of memory or more",  # a common RAM size above 14.5 GB
    # tariffs of 2023 by state (EIA, Electric Power Annual 2023, table 2.10)
    "from 5.75 ¢/kWh (New Mexico) to 35.28 ¢/kWh (Hawaii), with California at 18.64",
    "Hawaii's 35.28 ¢",
    # the earlier calculator page's figures, quoted to be checked, and the inputs that
    # reproduce them (section 4 searches for them)
    "**Hardware, $240,000**, is eight GPUs at the $30,000",
    "It matches 30 kW at a PUE of 1.4 and 10 ¢/kWh", "at a PUE of 1.5 and 50 ¢/kWh",
    "assumes 100% utilisation", '"Power includes 30–50% cooling overhead"** is a PUE of 1.3 '
    "to 1.5", "It shows 288,000 tokens per hour at $0.083 per 1,000 tokens and a daily "
    "revenue potential of $5,760", '"Daily revenue potential $5,760"',
    "($0.001 per 1,000 tokens at 80% utilisation, $0.005 at 40–60%, $0.01 and up below 30%)",
    "the tiers step by 5 to 10 times", "at $0.083, sits far above",
    '"$0.083 per 1,000 tokens" and "break-even after 6.8 months"',
    # published: the best hyperscale data centres' PUE (Uptime Institute 2023 survey)
    "report about 1.1)",
)


# ---------------------------------------------------------------------------------------
# The page


def test_skeleton_of_the_house_style() -> None:
    nb.check_skeleton(SLUG, "The Cost of a Model")


(test_claim, test_every_figure_is_claimed,
 test_every_listed_non_figure_is_on_the_page) = claim_tests(__name__, NOTEBOOK)


def test_the_earlier_pages_power_bill_has_a_second_set_of_inputs() -> None:
    """The seed's $36,792 a year follows from 30 kW at PUE 1.4 and $0.10/kWh (a claim
    above), and equally from the eight GPUs' 5.6 kW at PUE 1.5 and $0.50/kWh."""
    alt = cost.power_cost(power_watts=8 * H100.tdp_watts, usd_per_kwh=0.50,
                          hours=cost.HOURS_PER_YEAR, pue=1.5)
    assert dollars(alt) == dollars(cost.on_prem_breakdown(years=1, **SEED).power)


def test_the_lowest_paying_utilisation_is_a_break_even_at_the_end_of_the_life() -> None:
    """Just above the threshold owning is cheaper over the life, just below it renting is
    (the lesson finds the threshold by bisection on the two bills)."""
    for years, rate in ((3, AWS_NODE), (5, RENT_NODE), (3, RENT_NODE)):
        u = lowest_paying_utilisation(years, rate)
        for side, cheaper in ((1.001, True), (0.999, False)):
            own = cost.on_prem_tco(years=years, utilization=u * side, **SERVER)
            rent = cost.cloud_cost(usd_per_hour=rate, years=years, utilization=u * side)
            assert (own < rent) is cheaper, (years, rate, side)


def test_prices_are_flagged_as_dated_examples() -> None:
    """Prices are inputs with dated defaults and a source, never current facts."""
    text = nb.markdown(NOTEBOOK)
    block = text.split("```{admonition} Prices here are dated examples, not current facts", 1)
    assert len(block) == 2
    warning = block[1].split("```", 1)[0]
    for dated in ("May 2023", "2023 survey", "for 2023", "July 2023", "current quote"):
        assert dated in warning, dated


def test_the_deepseek_price_is_the_current_one_with_its_peak_hours() -> None:
    """Review of 2026-12-07 (lessons 6-10, F1): the comparison used DeepSeek-V3.2's price of
    late 2025 ($0.28 / $0.42), which DeepSeek's V4 models replaced in 2026, and at today's
    price one of its conclusions would not have held. It now uses the latest DeepSeek
    price in prices.json, from 2026, prints it at the peak hours too (its list prices
    are the off-peak ones since August 2026), and keeps V3.2's only as history."""
    text = " ".join(nb.markdown(NOTEBOOK).split())
    assert DEEPSEEK.date.startswith("2026-") and DEEPSEEK.peak_factor > 1, DEEPSEEK
    assert DEEPSEEK.date == max(a.date for a in prices.API_PRICES if a.provider == "DeepSeek")
    assert "{cite:p}`deepseek2026pricing`" in text and "output tokens since" not in text
    assert any('"deepseek-flash"' in cell for cell in nb.code(NOTEBOOK))


def test_every_pause_and_think_hides_its_answer() -> None:
    nb.check_pauses_hide_answers(nb.markdown(NOTEBOOK), at_least=4)


def test_widgets_are_this_lessons_registry_calculators() -> None:
    nb.check_registry_widgets(SLUG, {"tco", "cost_per_token"})


def test_every_term_is_in_the_glossary() -> None:
    terms = nb.check_terms_in_glossary(nb.markdown(NOTEBOOK))
    assert {"TCO", "PUE", "utilisation", "break-even point", "GPU-hour"} <= terms


def test_every_citation_is_in_the_bibliography() -> None:
    cited = nb.check_citations_in_bibliography(nb.markdown(NOTEBOOK))
    assert {"nextplatform2023p5", "eia2024electricity", "uptime2023survey",
            "nvidia2023dgxh100", "semianalysis2023servercost"} <= cited


def test_measurement_sizes_come_from_sizes_for_and_say_the_device() -> None:
    code = "\n".join(nb.code(NOTEBOOK, hidden=False))
    assert 'sizes_for(dev, "matvec")' in code and "benchmark(" in code
    assert "dev.describe()" in code and "dev.kind.upper()" in code


@pytest.mark.parametrize("path", [NOTEBOOK, EXERCISES], ids=["lesson", "exercises"])
def test_dollar_amounts_are_protected_from_jupyterlab_mathjax(path: Path) -> None:
    """Every markdown block with a dollar amount sits in a mathjax_ignore div and holds no
    inline math (which the div would leave untypeset in JupyterLab). Stricter than the
    book-wide rule of ``tests/content/test_dollar_signs.py`` (two amounts, or an amount beside
    maths), whose paragraph splitting it shares: here one amount is enough."""
    for cell in nb.cells(path):
        if cell["cell_type"] != "markdown":
            continue
        for block, inside in paragraphs("".join(cell["source"])):
            if "\\$" not in block:
                continue
            assert inside, block[:80]
            assert not re.search(r"(?<!\\)\$", block.replace("\\$", "")), block[:80]


# ---------------------------------------------------------------------------------------
# Sources


def test_example_prices_are_the_published_ones() -> None:
    """The registry's dated defaults, as published: DGX H100 about $270,000 (SemiAnalysis,
    May 2023, via Epoch AI) and 10.2 kW maximum (NVIDIA DGX H100 datasheet); PUE 1.58
    (Uptime Institute survey 2023); 8.06 cents/kWh (EIA Electric Power Annual 2023, US
    industrial average); AWS p5.48xlarge $55.04 per hour on demand (AWS's price list read
    2026-09-19; $98.32 at launch, The Next Platform, 2023-07-27), i.e. $6.88 for each of its
    8 H100s; the cheapest on-demand H100 the same day, Hyperstack's $3.20 per GPU-hour."""
    tco_inputs = calculators.si_inputs("tco")
    assert (tco_inputs["hardware_usd"], tco_inputs["power_watts"], tco_inputs["pue"],
            tco_inputs["usd_per_kwh"], tco_inputs["cloud_usd_per_hour"]) == (
        270_000, 10_200, 1.58, 0.0806, 55.04)
    assert calculators.si_inputs("cost_per_token")["usd_per_gpu_hour"] * 8 == \
        pytest.approx(55.04)
    assert (CHEAPEST.provider, CHEAPEST.usd_per_gpu_hour) == ("Hyperstack", 3.20)
    assert hardware.gpu("H100 SXM").tdp_watts == 700


# ---------------------------------------------------------------------------------------
# Exercises


def test_exercise_answers_and_mistakes_on_the_lessons_numbers() -> None:
    """8 H100s at 700 W, PUE 1.4, $0.10/kWh: 5.6 kW x 1.4 x 8,760 h = 68,678.4 kWh, so
    $6,867.84 a year; 3 years of $55.04/h at 60%: 15,768 h, $867,870.72; 2,400 tokens/s
    at $2.50 per GPU-hour (an H100 PCIe): 8,640,000 tokens for $2.50, $0.000289 per 1,000;
    buying the 10.2 kW server for $270,000 at PUE 1.5 and 15 cents/kWh against 8 H100 SXMs
    at $3.20 each, busy 70%: $270,000 / (($25.60 - $2.295) x 511 h) = 22.67 months
    (20.64 ignoring the power); DeepSeek's $0.28/$0.42 per million against a $3.20
    GPU-hour: 1,000 + 500 tokens cost $0.00049, 76.80 / 0.00049 = 156,735 conversations a
    day."""
    by_number = {ex.number: ex for ex in BANK.EXERCISES}
    assert len(by_number) >= 5
    assert by_number[1].answer_value() == pytest.approx(6_867.84)
    assert by_number[1].check("$4,905.60").mistake == "forgot_pue"
    assert by_number[2].answer_value() == pytest.approx(867_870.72)
    assert by_number[2].check("1,446,451.20 USD").mistake == "forgot_utilisation"
    assert by_number[2].check("$6,942,966").mistake == "node_price_times_gpus"
    assert by_number[10].answer_value() == pytest.approx(76.80 / 0.00049)
    assert by_number[11].kind == "predict"
    assert by_number[5].answer_value() == pytest.approx(2.5 / 8_640_000 * 1000)
    assert by_number[3].check("1.889 years").correct       # 22.67 months, in years
    assert by_number[3].check("20.64").mistake == "ignored_power"
    kinds = {ex.kind for ex in BANK.EXERCISES}
    assert {"numeric", "choice", "code"} <= kinds
    assert all(ex.mistakes for ex in BANK.EXERCISES if ex.kind != "predict")


def test_exercise_notebook_shows_every_exercise_once() -> None:
    sources = nb.check_exercise_notebook(SLUG)
    assert any("def cost_per_1k_tokens(" in s for s in sources)
    assert any("lesson.reveal(11," in s for s in sources)  # the predict-then-run result


def test_the_lesson_asks_for_a_prediction_before_its_measurement() -> None:
    """Section 7 asks for a number before the measuring cell runs, and names the exercise
    that records it (issue 32: predict, then measure, in every lesson)."""
    text = nb.markdown(NOTEBOOK)
    ask = text.index("**Predict first.**")
    assert ask < text.index("**How to read it.** On a small CPU machine")
    assert "exercise 11" in text[ask:ask + 400] and BANK.EXERCISES[10].kind == "predict"
