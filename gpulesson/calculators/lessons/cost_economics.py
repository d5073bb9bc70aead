"""Lesson 8, ``cost_economics``: buy or rent, and the cost of 1,000 tokens.

Prices are dated examples with a source, never current facts.
"""

from __future__ import annotations

from typing import Any

from gpulesson import cost, hardware, inference, memory, prices, transformer, units
from gpulesson.calculators import shared
from gpulesson.calculators.spec import Calculator, Input, Integer, Number, Output

LESSON = "cost_economics"


# The H100's default quote (the cheapest current hyperscaler on-demand price, AWS's
# p5.48xlarge read 2026-09-19), for the eight GPUs of the server the TCO compares.
_H100_QUOTE = prices.default_price("H100 SXM")
_H100_NODE = 8 * _H100_QUOTE.usd_per_gpu_hour


def _utilization(help: str) -> Input:
    return shared.percent("utilization", "Utilisation", default=100, range=(1, 100), step=1,
                          help=help)


def _usd(value: float) -> str:
    """Dollars as the outputs write them: cents below $1,000, whole dollars above."""
    return units.format_usd(value, cents=abs(value) < 1000)


def _tco(**kw: Any) -> dict[str, Any]:
    power = dict(power_watts=kw["power_watts"], usd_per_kwh=kw["usd_per_kwh"],
                 pue=kw["pue"], utilization=kw["utilization"])
    owned = cost.on_prem_breakdown(hardware_usd=kw["hardware_usd"], years=kw["years"],
                                   **power)
    # the power bill of one year: the breakdown of a free machine kept for a year
    annual_power = cost.on_prem_breakdown(hardware_usd=0, years=1, **power).power
    annual_cloud = cost.cloud_cost(usd_per_hour=kw["cloud_usd_per_hour"], years=1,
                                   utilization=kw["utilization"])
    period = 12 * kw["years"]
    try:
        months: float | None = cost.breakeven_months(
            hardware_usd=kw["hardware_usd"], cloud_usd_per_hour=kw["cloud_usd_per_hour"],
            **power)
    except ValueError:
        if annual_cloud > annual_power * (1 + 1e-9):
            raise  # not the case of a rent no higher than the power bill
        months = None  # the power alone costs the rent or more: owning never catches up
    if months is None:
        verdict = ("renting: owning never breaks even, its power alone costs "
                   f"{_usd(annual_power)} a year against {_usd(annual_cloud)} of cloud rent")
    # the break-even as the output above it shows it (3 significant digits), not a second
    # rounding of the same figure (6.88 above, 6.9 here: review of 2026-12-07)
    elif months < period:
        verdict = f"owning, from month {units.format_significant(months, 3)} of {period:g}"
    else:
        verdict = (f"renting: the break-even, {units.format_significant(months, 3)} months, "
                   f"lies beyond the {period:g} months of the period")
    return {
        "annual_power": annual_power,
        "power": owned.power,
        "on_prem": owned.total,
        "cloud": cost.cloud_cost(usd_per_hour=kw["cloud_usd_per_hour"], years=kw["years"],
                                 utilization=kw["utilization"]),
        "breakeven": months,
        "verdict": verdict,
    }


TCO = Calculator(
    name="tco",
    title="Total cost of ownership: buy or rent",
    description="An 8-GPU server bought and powered for some years, against renting the "
                "same in the cloud by the hour. Hardware and power only: staff, network, "
                "space and financing come on top.",
    lesson=LESSON,
    inputs=(
        Number("hardware_usd", "Hardware price", default=270_000, range=(0, 1e9), step=1000,
               smallest=1, unit="$", dimension="usd",
               help="Example: about $270,000 for an NVIDIA DGX H100 (8 GPUs), "
                    "SemiAnalysis's estimate of May 2023 as cited by Epoch AI. "
                    + shared.PRICE_NOTE),
        Number("power_watts", "Power draw", default=10_200, range=(0, 1e8), step=100,
               smallest=1, unit="W", dimension="count",
               help="DGX H100: about 10.2 kW maximum system power (NVIDIA DGX H100 "
                    "datasheet, 2023)."),
        Number("pue", "PUE", default=1.58, range=(1, 3), step=0.01,
               help="Facility power ÷ IT power: industry average 1.58 in the Uptime "
                    "Institute Global Data Center Survey 2023; about 1.1 for the best "
                    "hyperscale halls."),
        Number("usd_per_kwh", "Electricity price", default=0.0806, range=(0, 10), step=0.001,
               smallest=0.0001, unit="$/kWh", dimension="usd",
               help="Example: US average industrial price in 2023, 8.06 ¢/kWh (EIA). "
                    + shared.PRICE_NOTE),
        Number("cloud_usd_per_hour", "Cloud price (same 8 GPUs)", default=round(_H100_NODE, 2),
               range=(0, 1e6), step=0.01, smallest=0.001, unit="$/h", dimension="usd",
               help=f"Example: {_H100_QUOTE.provider} {_H100_QUOTE.instance} (8× H100) on "
                    f"demand, {_H100_QUOTE.region}, read {_H100_QUOTE.date} "
                    "(gpulesson.prices); $98.32 at its launch in July 2023. Specialist "
                    "clouds and committed terms cost less. " + shared.PRICE_NOTE),
        Number("years", "Years", default=5, range=(0.1, 20), step=0.5, unit="years",
               dimension="count"),
        _utilization("Share of hours the machine works: the cloud bills only those hours, "
                     "the owned machine draws power only then (idle power ignored)."),
    ),
    outputs=(
        Output("annual_power", "Power per year", "usd"),
        Output("power", "Power over the period", "usd"),
        Output("on_prem", "On-premises total (hardware + power)", "usd"),
        Output("cloud", "Cloud total", "usd"),
        Output("breakeven", "Owning is cheaper after", "number", unit="months",
               missing="never"),
        Output("verdict", "Cheaper over the period", "text"),
    ),
    function=_tco,
    sources=("The Green Grid 2007 (PUE)", "Uptime Institute Global Data Center Survey 2023",
             "EIA Electric Power Annual 2023", "NVIDIA DGX H100 datasheet"),
)


def _cost_per_token(**kw: Any) -> dict[str, Any]:
    return {"per_1k": cost.cost_per_1k_tokens(
        usd_per_gpu_hour=kw["usd_per_gpu_hour"], gpus=kw["gpus"],
        tokens_per_second=kw["tokens_per_second"], utilization=kw["utilization"])}


# Llama 2 7B's BF16 weights read once per token from one H100 SXM: the batch-1 ceiling
# quoted in the help text below, from the calculators rather than typed in.
_CEILING_7B_H100 = inference.decode_ceiling_tokens_per_second(
    weight_bytes=memory.weight_bytes(
        transformer.param_count(transformer.preset("llama-2-7b")), precision="bf16"),
    bandwidth=hardware.gpu("H100 SXM").bandwidth)


COST_PER_TOKEN = Calculator(
    name="cost_per_token",
    title="Inference cost per token",
    description="What 1,000 generated tokens cost from the price of a GPU-hour and the "
                "throughput the GPUs actually sustain.",
    lesson=LESSON,
    inputs=(
        shared.gpu_hour_price("specialist clouds charged $3.20-6.16 in September 2026."),
        Integer("gpus", "GPUs serving", default=1, range=(1, 100_000)),
        Number("tokens_per_second", "Throughput, all sequences", default=1000,
               range=(0.001, 1e9), step=10, unit="tokens/s", dimension="tokens/s",
               help="Aggregate tokens/s of all the GPUs while they work. Llama 2 7B in BF16 "
                    f"on one H100 SXM is capped at {_CEILING_7B_H100:,.0f} tokens/s at batch "
                    "1 (the decode-ceiling calculator); batching raises it."),
        _utilization("Share of the paid hours the GPUs have work: idle hours are billed "
                     "too, so 50 % doubles the cost per token. Leave 100 % if the throughput "
                     "is already averaged over every paid hour."),
    ),
    outputs=(Output("per_1k", "Cost per 1,000 tokens", "usd"),),
    function=_cost_per_token,
)

ENTRIES = (TCO, COST_PER_TOKEN)
