"""Exercises of lesson 8, *The Cost of a Model* (``exercises/cost_economics.ipynb``).

They practise what the lesson teaches: the electricity bill of eight H100s with the data
centre's PUE, a cloud bill at a utilisation below 100%, the months until buying a server
pays off, buying or renting at low utilisation, the cost of 1,000 tokens from tokens per
second and a price per GPU-hour, per-GPU against per-server prices, what batching does to
the cost per token on the decode roofline, ``cost_per_1k_tokens`` written as code, and
the cost per token of a GPU that idles part of the hours it is paid for, the traffic at
which a rented GPU matches a hosted API's price per token, and a prediction of what a
token of a 7B model costs on this machine against an H100 (predict, then run).

Prices are inputs: the defaults are the lesson's dated examples (AWS p5.48xlarge at
$55.04 an hour on demand, read 2026-09-19, and the cheapest on-demand H100 SXM of that day
from :mod:`gpulesson.prices`; a GPU a question rents is priced at a current on-demand
quote for the part it names, with whose it is, since an H100 PCIe or NVL card rents for
less than an SXM module; US industrial
electricity 8.06 ¢/kWh in 2023; a DGX H100 at about $270,000, May 2023) or round
assumptions said in the question. Every answer and
every figure in a worked solution comes from the calculators (:mod:`gpulesson.cost`,
:mod:`gpulesson.inference`, :mod:`gpulesson.memory`, :mod:`gpulesson.transformer`,
:mod:`gpulesson.hardware`). Standard library only.
"""

from __future__ import annotations

from typing import Any

from gpulesson import cost, course, hardware, inference, memory, prices, transformer
from gpulesson.exercises import core, mistakes, serving, wording
from gpulesson.exercises.bank._common import (
    H100,
    SERVING_GPUS,
    P,
    config,
    quote_of,
    quoted_prices,
)
from gpulesson.exercises.core import Mistake
from gpulesson.units import format_bytes, format_usd

LESSON = "cost_economics"
TITLE = course.title(LESSON)

#: The lesson's owned server: an NVIDIA DGX H100 (8 GPUs), dated example prices.
_DGX = {"hardware_usd": 270_000, "power_watts": 10_200, "usd_per_kwh": 0.0806, "pue": 1.58}
_GPUS_PER_SERVER = 8
#: AWS's p5.48xlarge (8 x H100) on demand, and the cheapest on-demand H100 SXM, 2026-09-19.
_AWS = prices.default_price(H100)
_AWS_NODE = round(_GPUS_PER_SERVER * _AWS.usd_per_gpu_hour, 2)
_CHEAPEST = quoted_prices(H100)[0]
#: The H100 parts a single-GPU question may rent, each at its own quotes: an H100 PCIe or
#: NVL card rents for less than an SXM module, but it is a different part (lesson §2).
_H100_PARTS = ("H100 PCIe", "H100 NVL", H100)
#: DeepSeek's deepseek-chat, USD per million tokens in and out, from 29 September 2025: a
#: real price pair for Ex 10's unnamed API (the lesson compares DeepSeek's current one).
_DEEPSEEK = prices.api_price("deepseek-chat")


def _usd(amount: float) -> str:
    return format_usd(amount, cents=amount < 100)


def _cents(usd_per_kwh: float) -> str:
    return f"{core.format_number(usd_per_kwh * 100, 3)} ¢"


# ---------------------------------------------------------------------------------------
# 1. The electricity bill of eight H100s

def _gpu_power(p: P, *, pue: float | None = None, gpus: int | None = None) -> float:
    watts = (gpus or p["gpus"]) * hardware.gpu(H100).tdp_watts
    return cost.power_cost(power_watts=watts, usd_per_kwh=p["tariff"],
                           hours=cost.HOURS_PER_YEAR, pue=p["pue"] if pue is None else pue)


def _servers_power(p: P) -> float | None:
    """The bill of the whole servers the GPUs sit in, ``gpus`` ÷ 8 DGX H100s at 10.2 kW
    each (the solution's aside); ``None`` where the GPUs fill no whole number of them."""
    if p["gpus"] % _GPUS_PER_SERVER:
        return None
    return p["gpus"] // _GPUS_PER_SERVER * cost.power_cost(
        power_watts=_DGX["power_watts"], usd_per_kwh=p["tariff"], hours=cost.HOURS_PER_YEAR,
        pue=p["pue"])


def _power_derived(p: P) -> dict[str, Any]:
    watts = p["gpus"] * hardware.gpu(H100).tdp_watts
    # kilowatt-hours: the calculator's bill at $1 per kWh
    it_kwh = cost.power_cost(power_watts=watts, usd_per_kwh=1, hours=cost.HOURS_PER_YEAR,
                             pue=1)
    return {"watts": f"{wording.count(watts)} W",
            "tdp": f"{wording.count(hardware.gpu(H100).tdp_watts)} W",
            "tariff_text": _cents(p["tariff"]), "it_kwh": f"{wording.count(it_kwh)} kWh",
            "facility_kwh": f"{wording.count(cost.power_cost(power_watts=watts, usd_per_kwh=1, hours=cost.HOURS_PER_YEAR, pue=p['pue']))} kWh",  # noqa: E501
            "no_pue": _usd(_gpu_power(p, pue=1.0)),
            "dgx": _usd(cost.power_cost(power_watts=_DGX["power_watts"],
                                        usd_per_kwh=p["tariff"], hours=cost.HOURS_PER_YEAR,
                                        pue=p["pue"]))}


gpu_power_bill = core.NumericExercise(
    lesson=LESSON, number=1, title="A year of electricity for {gpus} H100s",
    question=(
        "{gpus} H100 SXM GPUs run at their full {tdp} around the clock for a year (8,760 "
        "hours) in a data centre with a PUE of {pue}. Electricity costs {tariff_text} per "
        "kWh. What is the year's electricity bill for these GPUs, in US dollars? (Count the "
        "GPUs only, not the rest of the server.)"
    ),
    hints=(
        "Watts × hours gives watt-hours; divide by 1,000 for kilowatt-hours, then multiply "
        "by the price.",
        "The PUE multiplies what the IT equipment uses: the building draws {pue} kWh for "
        "every kWh the GPUs use.",
    ),
    solution=(
        "The GPUs draw {gpus} × {tdp} = {watts}, which is {it_kwh} over a year. The building "
        "draws PUE × that: {facility_kwh}. At {tariff_text} per kWh: **{answer}**. Without "
        "the PUE the bill would come to {no_pue}.\n\n"
        "A real budget counts the whole server too: an 8-GPU DGX H100 is rated at 10.2 kW, "
        "not 5.6 kW, which at these prices is {dgx} a year."
    ),
    answer=_gpu_power,
    derived=_power_derived,
    mistakes=(
        Mistake("forgot_pue",
                "That is the GPUs' own consumption. The data centre draws PUE × as much: "
                "cooling, fans and power conversion come on top. Multiply by {pue}.",
                lambda p: _gpu_power(p, pue=1.0)),
        Mistake("divided_by_pue",
                "You divided by the PUE. It is facility energy ÷ IT energy, at least 1, so "
                "the bill is the GPUs' energy *times* {pue}.",
                lambda p: _gpu_power(p) / p["pue"] ** 2),
        Mistake("one_gpu",
                "That is the bill of one GPU. There are {gpus} of them.",
                lambda p: _gpu_power(p, gpus=1)),
        Mistake("whole_server",
                "That counts the whole server, 10.2 kW for every 8 GPUs with its CPUs, "
                "memory and fans. The question counts the GPUs only, at {tdp} each.",
                _servers_power),
    ),
    defaults={"gpus": 8, "pue": 1.4, "tariff": 0.10},
    sample=lambda rng: {"gpus": rng.choice([4, 8, 16, 32]),
                        "pue": rng.choice([1.2, 1.3, 1.4, 1.5, 1.58]),
                        "tariff": rng.choice([0.06, 0.08, 0.10, 0.12, 0.15, 0.20])},
    dimension="usd", unit="USD", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 2. A cloud bill at a utilisation below 100 %

def _cloud(p: P, *, utilization: float | None = None, per_hour: float | None = None) -> float:
    return cost.cloud_cost(usd_per_hour=per_hour or p["node_price"], years=p["years"],
                           utilization=p["utilization"] if utilization is None else utilization)


def _cloud_derived(p: P) -> dict[str, Any]:
    return {"price": _usd(p["node_price"]), "pct": wording.rounded_percent(p["utilization"]),
            "idle_pct": wording.rounded_percent(1 - p["utilization"]),
            "per_gpu": _usd(p["node_price"] / _GPUS_PER_SERVER),
            "full": _usd(_cloud(p, utilization=1.0)),
            "hours": wording.count(cost.cloud_cost(usd_per_hour=1, years=p['years'], utilization=p['utilization'])),  # noqa: E501
            "years_text": wording.plural(p["years"], "year")}


cloud_bill = core.NumericExercise(
    lesson=LESSON, number=2, title="{years_text} of a cloud server at {pct} utilisation",
    question=(
        "An 8-GPU cloud server (AWS p5.48xlarge, 8 × H100) costs {price} per hour on demand "
        "(AWS's price list, September 2026). A team needs it {pct} of the time and releases "
        "it in between. What does it pay over {years_text}, in US dollars?"
    ),
    hints=(
        "On demand, you pay only for the hours the server runs.",
        "Hours in {years_text}: 8,760 × {years}; of those the server runs {pct}. The "
        "price is already for the whole server.",
    ),
    solution=(
        "The server runs {pct} of 8,760 × {years} hours, {hours} hours, at {price} each: "
        "**{answer}**. Kept around the clock it would cost {full}.\n\n"
        "The price is per server: {price} for 8 GPUs is {per_gpu} per GPU-hour. An owned "
        "server costs its purchase price however little it works; that asymmetry is why "
        "utilisation decides between buying and renting."
    ),
    answer=_cloud,
    derived=_cloud_derived,
    mistakes=(
        Mistake("forgot_utilisation",
                "That is the bill around the clock. The team releases the server when it "
                "does not need it, so it pays for {pct} of the hours.",
                lambda p: _cloud(p, utilization=1.0)),
        Mistake("node_price_times_gpus",
                "That is 8 times too much: {price} is the price of the whole 8-GPU server, "
                "not of one GPU. Per GPU it is {per_gpu}.",
                lambda p: _cloud(p, per_hour=p["node_price"] * _GPUS_PER_SERVER)),
        Mistake("idle_share",
                "You used the share of time the server is idle ({idle_pct}). It is billed "
                "for the {pct} of the hours it runs.",
                lambda p: None if p["utilization"] == 0.5
                else _cloud(p, utilization=1 - p["utilization"])),
    ),
    defaults={"node_price": _AWS_NODE, "utilization": 0.6, "years": 3},
    sample=lambda rng: {"node_price": _AWS_NODE,
                        "utilization": rng.choice([0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9]),
                        "years": rng.choice([1, 2, 3, 4, 5])},
    dimension="usd", unit="USD", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 3. Months until buying pays off

def _breakeven(p: P, *, power_watts: float | None = None, utilization: float | None = None,
               cloud_per_hour: float | None = None) -> float | None:
    try:
        return cost.breakeven_months(
            hardware_usd=p["hardware"],
            power_watts=p["power_watts"] if power_watts is None else power_watts,
            usd_per_kwh=p["tariff"], pue=p["pue"],
            cloud_usd_per_hour=(cloud_per_hour if cloud_per_hour is not None
                                else p["gpu_price"] * _GPUS_PER_SERVER),
            utilization=p["utilization"] if utilization is None else utilization)
    except ValueError:  # renting costs no more than the power: owning never breaks even
        return None


def _breakeven_derived(p: P) -> dict[str, Any]:
    server_hour = p["gpu_price"] * _GPUS_PER_SERVER
    power_hour = cost.power_cost(power_watts=p["power_watts"], usd_per_kwh=p["tariff"],
                                 hours=1, pue=p["pue"])
    month = cost.HOURS_PER_MONTH * p["utilization"]
    return {"hw": _usd(p["hardware"]), "kw": core.format_number(p["power_watts"] / 1000, 3),
            "tariff_text": _cents(p["tariff"]), "gpu_price_text": _usd(p["gpu_price"]),
            "quote": quote_of(H100, p["gpu_price"]),
            "pct": wording.rounded_percent(p["utilization"]), "server_hour": _usd(server_hour),
            "power_hour": _usd(power_hour), "month_hours": wording.count(month),
            "no_power": core.format_number(_breakeven(p, power_watts=0), 3),
            "full_time": core.format_number(_breakeven(p, utilization=1.0), 3),
            "years": (lambda y: f"{y} {'year' if y == '1' else 'years'}")(
                core.format_number(_breakeven(p) / 12, 2))}


breakeven = core.NumericExercise(
    lesson=LESSON, number=3, title="When does buying pay off?",
    question=(
        "A team can buy an 8-GPU H100 SXM server for {hw}. It draws {kw} kW in a data "
        "centre with a PUE of {pue}, at {tariff_text} per kWh. Or it can rent the same 8 "
        "GPUs at {gpu_price_text} per GPU-hour ({quote}). The GPUs will be busy {pct} of "
        "the time; the rented "
        "ones are released in between, and the owned one draws power only while busy. "
        "After how many months is buying cheaper? (A month is 730 hours.)"
    ),
    hints=(
        "Each busy hour, owning saves the rent but pays the electricity. How long until "
        "those savings add up to the hardware price?",
        "Saving per busy hour = {server_hour} − {power_hour}. Busy hours per month = 730 × "
        "{pct}.",
    ),
    solution=(
        "Renting 8 GPUs costs {server_hour} per hour; owning costs {power_hour} of "
        "electricity per busy hour (kW × PUE × price). Each busy hour owning saves the "
        "difference, and a month has 730 × {pct} = {month_hours} busy hours. The hardware "
        "price is recovered after {hw} ÷ (saving per month) = **{answer}**, about {years}.\n\n"
        "Ignoring the electricity gives {no_power} months (the slip behind the 6.8-month "
        "break-even the lesson checks); at 100% utilisation it would be {full_time} "
        "months. Break-even is inversely proportional to utilisation."
    ),
    answer=_breakeven,
    derived=_breakeven_derived,
    mistakes=(
        Mistake("ignored_power",
                "You divided the hardware price by the rent alone. Owning is not free per "
                "hour: subtract the electricity, {power_hour} per busy hour.",
                lambda p: _breakeven(p, power_watts=0)),
        Mistake("forgot_utilisation",
                "That is the break-even at 100% utilisation. The GPUs are busy {pct} of the "
                "time, so each month saves only {month_hours} hours of rent.",
                lambda p: _breakeven(p, utilization=1.0)),
        Mistake("server_price_per_gpu",
                "You took {gpu_price_text} as the price of the whole server. It is per GPU: "
                "the 8 GPUs rent for {server_hour} per hour.",
                lambda p: _breakeven(p, cloud_per_hour=p["gpu_price"])),
        Mistake("answered_in_years",
                "That looks like years. The question asks for months (or type the unit, "
                "e.g. '2.5 years').",
                lambda p: _breakeven(p) / 12),
    ),
    defaults={"hardware": 270_000, "power_watts": 10_200, "pue": 1.5, "tariff": 0.15,
              "gpu_price": _CHEAPEST, "utilization": 0.7},
    sample=lambda rng: {"hardware": rng.choice([200_000, 240_000, 270_000, 300_000]),
                        "power_watts": 10_200,
                        "pue": rng.choice([1.2, 1.4, 1.5, 1.58]),
                        "tariff": rng.choice([0.08, 0.10, 0.15, 0.20]),
                        "gpu_price": rng.choice(quoted_prices(H100)),
                        "utilization": rng.choice([0.5, 0.6, 0.7, 0.8, 0.9])},
    dimension="count", unit="months", extra_units=wording.MONTHS, rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 4. Buy or rent at low utilisation?

def _buy_or_rent(p: P, *, utilization: float | None = None) -> str:
    u = p["utilization"] if utilization is None else utilization
    own = cost.on_prem_tco(years=p["years"], utilization=u, **_DGX)
    rent = cost.cloud_cost(usd_per_hour=p["gpu_price"] * _GPUS_PER_SERVER, years=p["years"],
                           utilization=u)
    return "buy" if own < rent else "rent"


def _buy_or_rent_derived(p: P) -> dict[str, Any]:
    server_hour = p["gpu_price"] * _GPUS_PER_SERVER
    values = {}
    for key, u in (("", p["utilization"]), ("_full", 1.0)):
        values["own" + key] = _usd(cost.on_prem_tco(years=p["years"], utilization=u, **_DGX))
        values["rent" + key] = _usd(cost.cloud_cost(usd_per_hour=server_hour,
                                                    years=p["years"], utilization=u))
    months = cost.breakeven_months(cloud_usd_per_hour=server_hour,
                                   utilization=p["utilization"], **_DGX)
    months_text, life = core.format_number(months, 3), f"{12 * p['years']}"
    pct = wording.rounded_percent(p["utilization"])
    # where buying wins already at this utilisation (5 years at 30% and $3.00), the
    # break-even and the round-the-clock comparison read the other way
    bought = _buy_or_rent(p) == "buy"
    return {**values, "pct": pct, "gpu_price_text": _usd(p["gpu_price"]),
            "quote": quote_of(H100, p["gpu_price"]),
            "server_hour": _usd(server_hour), "months": months_text, "life_months": life,
            "breakeven": (f"Buying breaks even after {months_text} months at {pct}, within "
                          f"the {life} months of the plan." if bought else
                          f"Buying breaks even only after {months_text} months at {pct}, "
                          f"longer than the {life} months of the plan."),
            "full_time": ("Around the clock owning wins by far more" if bought
                          else "Around the clock the verdict flips")}


buy_or_rent = core.ChoiceExercise(
    lesson=LESSON, number=4, title="Buy or rent at {pct} utilisation?",
    question=(
        "The lesson's DGX H100 costs $270,000 and draws 10.2 kW, in a data centre with a "
        "PUE of 1.58 at 8.06 ¢/kWh (the dated examples). The same 8 GPUs rent for "
        "{gpu_price_text} per GPU-hour ({quote}). A team expects to keep them busy {pct} "
        "of the time for {years} years, releasing rented GPUs in between. Counting hardware and "
        "electricity only, which is cheaper over the {years} years?"
    ),
    options=[("buy", "Buying the server"), ("rent", "Renting the GPUs"),
             ("same", "About the same (within 5%)")],
    hints=(
        "The owned server's price is paid whatever the utilisation; the rent is paid only "
        "for the busy hours.",
        "Compare $270,000 plus {years} years of electricity at {pct} with {server_hour} × "
        "8,760 × {years} × {pct}.",
    ),
    solution=(
        "Owning costs {own} (the hardware plus {years} years of electricity while busy); "
        "renting costs {rent}. {breakeven}\n\n"
        "{full_time}: owning {own_full} against renting {rent_full}. "
        "Idle owned hardware still costs its purchase price; rented hours can be given back."
    ),
    answer=_buy_or_rent,
    derived=_buy_or_rent_derived,
    mistakes=(
        Mistake("forgot_utilisation",
                "That is the answer if the GPUs were busy every hour. At {pct} the rent "
                "shrinks to {rent}, while the server still costs its full price.",
                # around the clock buying wins: where it wins at this utilisation too,
                # the slip changes nothing (else every "buy" draw was rejected)
                lambda p: (lambda slip: None if slip == _buy_or_rent(p) else slip)(
                    _buy_or_rent(p, utilization=1.0))),
    ),
    defaults={"utilization": 0.25, "years": 3, "gpu_price": _CHEAPEST},
    sample=lambda rng: {"utilization": rng.choice([0.15, 0.2, 0.25, 0.3]),
                        "years": rng.choice([3, 4, 5]),
                        "gpu_price": rng.choice(quoted_prices(H100))},
)


# ---------------------------------------------------------------------------------------
# 5. The cost of 1,000 tokens

def _per_1k(p: P, *, price: float | None = None, tps: float | None = None) -> float:
    return cost.cost_per_1k_tokens(usd_per_gpu_hour=price or p["gpu_price"], gpus=1,
                                   tokens_per_second=tps or p["tps"])


def _per_1k_derived(p: P) -> dict[str, Any]:
    per_1k = _per_1k(p)
    return {"price": _usd(p["gpu_price"]), "tps_text": wording.count(p['tps']),
            "quote": quote_of(p["gpu"], p["gpu_price"]),
            "per_hour": wording.count(p['tps'] * 3600), "per_million": _usd(1000 * per_1k)}


def _per_1k_sample(rng: Any) -> dict[str, Any]:
    gpu = rng.choice(_H100_PARTS)
    return {"gpu": gpu, "tps": rng.choice([230, 800, 1600, 2400, 4600, 8800]),
            "gpu_price": rng.choice(quoted_prices(gpu))}


cost_per_1k = core.NumericExercise(
    lesson=LESSON, number=5, title="1,000 tokens at {tps_text} tokens/s",
    question=(
        "One {gpu}, rented at {price} per GPU-hour ({quote}), generates {tps_text} tokens "
        "per second in total across the conversations it serves. What do 1,000 generated "
        "tokens cost, in US dollars?"
    ),
    hints=(
        "How many tokens does the GPU make in the hour you pay {price} for?",
        "Tokens per hour = tokens/s × 3,600. Then cost per token × 1,000.",
    ),
    solution=(
        "In one hour the GPU generates {tps_text} × 3,600 = {per_hour} tokens for {price}. "
        "1,000 of them cost {price} × 1,000 ÷ {per_hour} = **{answer}**, that is "
        "{per_million} per million tokens.\n\n"
        "The throughput is that of all conversations together, averaged over every hour "
        "you pay for: a GPU idle half the time makes half the tokens for the same bill."
    ),
    answer=_per_1k,
    derived=_per_1k_derived,
    mistakes=(
        Mistake("forgot_3600",
                "That is 3,600 times too much: you set a price *per hour* against the tokens "
                "of one *second*. Multiply the tokens per second by 3,600 first.",
                lambda p: _per_1k(p) * 3600),
        Mistake("per_minute",
                "That is 60 times too much: an hour has 3,600 seconds, not 60.",
                lambda p: _per_1k(p) * 60),
    ),
    defaults={"gpu": "H100 PCIe", "tps": 2400, "gpu_price": quoted_prices("H100 PCIe")[0]},
    sample=_per_1k_sample,
    dimension="usd", unit="USD", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 6. Per-GPU and per-server prices

def _server_per_1k(p: P, *, usd_per_gpu_hour: float | None = None, gpus: int = 8,
                   tps: float | None = None) -> float:
    return cost.cost_per_1k_tokens(
        usd_per_gpu_hour=(p["node_price"] / _GPUS_PER_SERVER if usd_per_gpu_hour is None
                          else usd_per_gpu_hour),
        gpus=gpus, tokens_per_second=tps if tps is not None else _GPUS_PER_SERVER * p["tps"])


def _server_derived(p: P) -> dict[str, Any]:
    return {"node": _usd(p["node_price"]), "per_gpu": _usd(p["node_price"] / _GPUS_PER_SERVER),
            "tps_text": wording.count(p['tps']),
            "total": wording.count(_GPUS_PER_SERVER * p['tps'])}


server_price = core.NumericExercise(
    lesson=LESSON, number=6, title="Per GPU or per server?",
    question=(
        "An 8-GPU cloud server rents for {node} per hour. Each of its 8 GPUs serves its own "
        "copy of a 7B model and generates {tps_text} tokens per second (all its "
        "conversations together). What do 1,000 tokens cost, in US dollars?"
    ),
    hints=(
        "Use one unit throughout: either the whole server (its price, all 8 GPUs' tokens) "
        "or one GPU (an eighth of the price, one GPU's tokens).",
        "Per GPU: {per_gpu} per hour for {tps_text} tokens/s.",
    ),
    solution=(
        "The server makes 8 × {tps_text} = {total} tokens per second for {node} an hour; "
        "equivalently each GPU makes {tps_text} tokens per second for {per_gpu} an hour. "
        "Either way 1,000 tokens cost **{answer}**.\n\n"
        "Clouds price GPU servers per instance (AWS's p5.48xlarge: 8 H100s), smaller "
        "providers often per GPU. Convert before comparing."
    ),
    answer=_server_per_1k,
    derived=_server_derived,
    mistakes=(
        Mistake("server_price_per_gpu",
                "That is 8 times too much: you paid the server's price for each GPU, or set "
                "the whole server's price against one GPU's tokens. Per GPU the price is "
                "{per_gpu}.",
                lambda p: _server_per_1k(p, usd_per_gpu_hour=p["node_price"])),
        Mistake("gpu_price_server_tokens",
                "That is 8 times too little: you set one GPU's share of the price against "
                "all 8 GPUs' tokens ({total} per second).",
                lambda p: _server_per_1k(p, gpus=1)),
    ),
    defaults={"node_price": _AWS_NODE, "tps": 1600},
    sample=lambda rng: {"node_price": rng.choice([_AWS_NODE, 20.0, 24.0, 40.0]),
                        "tps": rng.choice([230, 800, 1600, 2400, 4600])},
    dimension="usd", unit="USD", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 7. Batching and the cost per token

def _tokens_per_second(p: P, batch: int, *, kv: bool = True) -> float:
    return serving.decode_speed(p["model"], p["gpu"], context=p["context"], batch=batch,
                                kv=kv).tokens_per_second


def _batch_saving(p: P, *, kv: bool = True) -> float:
    # cost per 1,000 tokens at batch 1 divided by the cost at the larger batch, same price
    def per_1k(batch: int) -> float:
        return cost.cost_per_1k_tokens(usd_per_gpu_hour=p["gpu_price"], gpus=1,
                                       tokens_per_second=_tokens_per_second(p, batch, kv=kv))
    return per_1k(1) / per_1k(p["batch"])


def _batch_derived(p: P) -> dict[str, Any]:
    one, many = _tokens_per_second(p, 1), _tokens_per_second(p, p["batch"])
    cfg = config(p)
    per_seq = inference.kv_cache_bytes(cfg, seq_len=p["context"])
    weights = memory.weight_bytes(transformer.param_count(cfg), precision="bf16")

    def per_1k(rate: float) -> str:
        return _usd(cost.cost_per_1k_tokens(usd_per_gpu_hour=p["gpu_price"], gpus=1,
                                            tokens_per_second=rate))

    return {"name": wording.model_label(p["model"]), "ctx_text": wording.count(p['context']),
            "one": wording.count(one), "many": wording.count(many), "cost_one": per_1k(one),
            "cost_many": per_1k(many), "price": _usd(p["gpu_price"]),
            "quote": quote_of(p["gpu"], p["gpu_price"]),
            "weights_gb": format_bytes(weights, digits=1),
            "kv_gb": format_bytes(per_seq, digits=1),
            "batch_kv_gb": format_bytes(p["batch"] * per_seq, digits=1),
            "user_many": wording.count(many / p['batch'])}


def _batch_fits(p: P) -> bool:
    # BF16 weights, the batch's BF16 caches and 2 GB of overhead in the GPU's memory
    return p["batch"] <= inference.max_concurrent_sequences(
        config(p), context=p["context"],
        gpu_memory=hardware.gpu(p["gpu"]).memory_bytes, overhead=2e9)


def _batch_sample(rng: Any) -> dict[str, Any]:
    while True:  # draw until the batch fits on the GPU beside the weights
        p = {"model": rng.choice(["mistral-7b", "llama-3-8b", "llama-2-7b"]),
             "gpu": rng.choice(SERVING_GPUS),
             "context": rng.choice([1024, 2048, 4096]), "batch": rng.choice([8, 16, 32, 64])}
        p["gpu_price"] = quoted_prices(p["gpu"])[0]  # its cheapest on-demand quote
        if _batch_fits(p):
            return p


batching_cost = core.NumericExercise(
    lesson=LESSON, number=7, title="Batch 1 to batch {batch}: the cost per token",
    question=(
        "{name} in BF16 runs on one {gpu} rented at {price} per GPU-hour ({quote}), serving "
        "conversations of {ctx_text} tokens. On the roofline of a decode step (all weights "
        "and every conversation's KV cache read once per step, arithmetic at the dense "
        "peak), how many times cheaper is a generated token at batch {batch} than at "
        "batch 1?"
    ),
    hints=(
        "The price per hour does not change; the tokens per hour do. So the cost ratio is "
        "the ratio of tokens per second.",
        "Tokens/s = batch ÷ step time, and the step reads {weights_gb} of weights once plus "
        "{kv_gb} of KV cache per conversation.",
    ),
    solution=(
        "At batch 1 a step reads {weights_gb} of weights and one {kv_gb} cache: {one} "
        "tokens/s, {cost_one} per 1,000 tokens. At batch {batch} it reads the same weights "
        "once plus {batch_kv_gb} of caches and makes {batch} tokens per step: {many} "
        "tokens/s, {cost_many} per 1,000 tokens. The same hour buys more tokens, so each "
        "is **{answer}** cheaper.\n\n"
        "Not {batch} times: the weight reads are shared, the KV reads are not. And each "
        "conversation now gets {user_many} tokens/s instead of {one}: batching trades each "
        "user's speed for the cost per token."
    ),
    answer=_batch_saving,
    derived=_batch_derived,
    mistakes=(
        Mistake("ignored_kv",
                "That ignores the KV cache: each of the {batch} conversations' caches "
                "({kv_gb} each) is read every step too, so the step gets longer as the batch "
                "grows.",
                lambda p: _batch_saving(p, kv=False)),
        Mistake("no_change",
                "The price per GPU-hour is the same, but the GPU makes far more tokens in "
                "that hour: the weights read once per step serve the whole batch.",
                lambda p: 1.0),
        mistakes.inverted_ratio(lambda p: 1 / _batch_saving(p),
                                hint="That is the cost at batch {batch} divided by the cost at "
                                     "batch 1. The question asks how many times *cheaper*: the "
                                     "inverse."),
    ),
    defaults={"model": "mistral-7b", "gpu": H100, "context": 2048, "batch": 32,
              "gpu_price": _CHEAPEST},
    sample=_batch_sample,
    dimension="count", unit="×", extra_units=wording.TIMES, rtol=0.02, digits=3,
)


# ---------------------------------------------------------------------------------------
# 8. Code: cost_per_1k_tokens

def _cost_model(usd_per_gpu_hour, gpus, tokens_per_second):
    # the hour's price for all GPUs, over the tokens they make in that hour, per 1,000
    tokens_per_hour = tokens_per_second * 3600
    return usd_per_gpu_hour * gpus / tokens_per_hour * 1000


def _cost_reference(usd_per_gpu_hour: float, gpus: int, tokens_per_second: float) -> float:
    return cost.cost_per_1k_tokens(usd_per_gpu_hour=usd_per_gpu_hour, gpus=gpus,
                                   tokens_per_second=tokens_per_second)


cost_code = core.CodeExercise(
    lesson=LESSON, number=8, title="Write cost_per_1k_tokens",
    question=(
        "Write `cost_per_1k_tokens(usd_per_gpu_hour, gpus, tokens_per_second)`: the cost in "
        "US dollars of 1,000 tokens when `gpus` GPUs, each priced `usd_per_gpu_hour` per "
        "hour, generate `tokens_per_second` tokens per second together. It is checked on "
        "the lesson's numbers and on random inputs against the course's calculator "
        "`gpulesson.cost.cost_per_1k_tokens`."
    ),
    hints=(
        "What does one hour of all the GPUs cost, and how many tokens do they make in it?",
        "Price per hour = usd_per_gpu_hour × gpus; tokens per hour = tokens_per_second × "
        "3,600. Divide, then multiply by 1,000.",
    ),
    solution=(
        "One hour of the GPUs costs usd_per_gpu_hour × gpus and yields tokens_per_second × "
        "3,600 tokens; the ratio times 1,000 is the cost of 1,000 tokens. One H100 SXM at "
        f"{_usd(_CHEAPEST)} an hour (the cheapest on-demand quote) making 2,400 tokens/s: "
        f"{_usd(_cost_reference(_CHEAPEST, 1, 2400))} per 1,000 tokens; AWS's 8-GPU p5.48xlarge "
        f"at {_usd(_AWS.usd_per_gpu_hour)} per GPU-hour making 12,800 tokens/s: "
        f"{_usd(_cost_reference(_AWS.usd_per_gpu_hour, _GPUS_PER_SERVER, 12_800))}."
    ),
    function_name="cost_per_1k_tokens",
    signature="usd_per_gpu_hour, gpus, tokens_per_second",
    reference=_cost_reference,
    sample_input=lambda rng: {"usd_per_gpu_hour": round(rng.uniform(0.5, 15.0), 2),
                              "gpus": rng.randint(2, 64),
                              "tokens_per_second": round(rng.uniform(50, 50_000), 1)},
    examples=({"usd_per_gpu_hour": _CHEAPEST, "gpus": 1, "tokens_per_second": 2400},
              {"usd_per_gpu_hour": _AWS.usd_per_gpu_hour, "gpus": _GPUS_PER_SERVER,
               "tokens_per_second": 12_800}),
    mistakes=(
        Mistake("forgot_3600",
                "Your result is 3,600 times too large: the price is per hour, the throughput "
                "per second. Multiply tokens_per_second by 3,600 to get tokens per hour.",
                lambda i: _cost_reference(**i) * 3600),
        Mistake("per_token",
                "Your function returns the cost of one token; the question asks for 1,000 "
                "tokens. Multiply by 1,000.",
                lambda i: _cost_reference(**i) / 1000),
        Mistake("forgot_gpus",
                "You priced one GPU: an hour of `gpus` GPUs costs usd_per_gpu_hour × gpus.",
                lambda i: _cost_reference(**i) / i["gpus"]),
    ),
    model_solution=_cost_model,
    rtol=1e-9,
)


# ---------------------------------------------------------------------------------------
# 9. Idle hours and the cost per token

def _idle_per_1k(p: P, utilization: float | None = None) -> float:
    return cost.cost_per_1k_tokens(
        usd_per_gpu_hour=p["gpu_price"], gpus=1, tokens_per_second=p["tps"],
        utilization=p["utilization"] if utilization is None else utilization)


def _idle_derived(p: P) -> dict[str, Any]:
    return {"price": _usd(p["gpu_price"]), "tps_text": wording.count(p['tps']),
            "quote": quote_of(H100, p["gpu_price"]),
            "pct": wording.rounded_percent(p["utilization"]), "busy": _usd(_idle_per_1k(p, 1.0)),
            "served": wording.count(p['tps'] * p['utilization']),
            "ratio": core.format_number(_idle_per_1k(p) / _idle_per_1k(p, 1.0), 3)}


idle_hours = core.NumericExercise(
    lesson=LESSON, number=9, title="1,000 tokens from a GPU busy {pct} of the time",
    question=(
        "A chatbot rents one H100 SXM around the clock at {price} per GPU-hour ({quote}). "
        "While it has "
        "conversations to serve, the GPU generates {tps_text} tokens per second in total; "
        "but its traffic follows the working day, and it has work only {pct} of the hours. "
        "What do 1,000 generated tokens cost, in US dollars?"
    ),
    hints=(
        "Every rented hour is billed, busy or idle. How many tokens does an *average* "
        "hour produce?",
        "Averaged over all hours the GPU makes {tps_text} × {pct} = {served} tokens/s.",
    ),
    solution=(
        "Averaged over every paid hour the GPU makes {tps_text} × {pct} = {served} tokens "
        "per second, so 1,000 tokens cost **{answer}** "
        "(`cost.cost_per_1k_tokens(..., utilization=...)`). Busy around the clock they "
        "would cost {busy}: the idle hours make each token {ratio} times dearer, the "
        "inverse of the utilisation. Batching more conversations raises the tokens/s "
        "while busy; only more traffic, or giving idle hours back, raises the utilisation."
    ),
    answer=_idle_per_1k,
    derived=_idle_derived,
    mistakes=(
        Mistake("busy_rate",
                "That is the cost if the GPU were busy every hour. It is billed for all of "
                "them but has work only {pct} of the time.",
                lambda p: _idle_per_1k(p, 1.0)),
        Mistake("times_utilisation",
                "That makes idle hours a saving: you multiplied the busy cost by {pct}. The "
                "idle hours are paid for and produce nothing, so divide by it instead.",
                lambda p: _idle_per_1k(p, 1.0) * p["utilization"]),
    ),
    defaults={"gpu_price": _CHEAPEST, "tps": 2400, "utilization": 0.3},
    sample=lambda rng: {"gpu_price": rng.choice(quoted_prices(H100)),
                        "tps": rng.choice([800, 1600, 2400, 4600]),
                        "utilization": rng.choice([0.2, 0.25, 0.3, 0.4, 0.5])},
    dimension="usd", unit="USD", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 10. Self-hosting against a hosted API

def _api_per_conversation(p: P) -> float:
    return p["prompt"] * p["price_in"] / 1e6 + p["output_tokens"] * p["price_out"] / 1e6


def _breakeven_traffic(p: P) -> float:
    """Conversations a day at which one GPU rented around the clock costs what the API does."""
    day = cost.run_cost(usd_per_gpu_hour=p["gpu_hour"], gpus=1, seconds=86_400)
    return day / _api_per_conversation(p)


def _api_derived(p: P) -> dict[str, Any]:
    day = cost.run_cost(usd_per_gpu_hour=p["gpu_hour"], gpus=1, seconds=86_400)
    return {"gpu_hour_text": format_usd(p["gpu_hour"]), "day": format_usd(day, cents=True),
            "per_conv": format_usd(_api_per_conversation(p), digits=3),
            "prompt_text": wording.count(p["prompt"]),
            "output_text": wording.count(p["output_tokens"]),
            "price_in_text": format_usd(p["price_in"]),
            "price_out_text": format_usd(p["price_out"])}


api_breakeven = core.NumericExercise(
    lesson=LESSON, number=10, title="When a rented GPU matches a hosted API",
    question=(
        "A hosted API charges {price_in_text} per million input tokens and {price_out_text} "
        "per million output tokens. Your conversations average {prompt_text} tokens in and "
        "{output_text} out. A GPU rented around the clock costs {gpu_hour_text} an hour, and "
        "it could serve far more than your traffic. From how many **conversations a day** "
        "does the rented GPU cost less per conversation than the API?"
    ),
    hints=(
        "The API's cost of one conversation: input tokens × input price + output tokens × "
        "output price.",
        "The GPU costs the same every day, busy or not: 24 × its hourly price. Divide it by "
        "the API's cost of one conversation.",
    ),
    solution=(
        "One conversation through the API costs {per_conv}. The GPU costs {day} a day "
        "whatever the traffic. They match at {day} ÷ {per_conv} = **{answer}** a "
        "day; below that the API is cheaper, because its provider fills "
        "its GPUs with other customers' traffic. (Self-hosting is a fixed cost, the API a "
        "cost per token: utilisation decides.)"
    ),
    answer=_breakeven_traffic,
    derived=_api_derived,
    mistakes=(
        Mistake("output_only", "You priced only the output tokens. The input tokens are "
                "billed too, at {price_in_text} per million.",
                lambda p: _breakeven_traffic({**p, "price_in": 0.0})),
        Mistake("one_hour", "You compared one hour of the GPU with a day of conversations. "
                "A GPU rented around the clock costs 24 hours a day.",
                lambda p: _breakeven_traffic(p) / 24),
        Mistake("input_only", "You priced only the input tokens. The answer's tokens cost "
                "{price_out_text} per million, usually the larger part.",
                lambda p: _breakeven_traffic({**p, "price_out": 0.0})),
    ),
    defaults={"price_in": _DEEPSEEK.usd_per_m_input, "price_out": _DEEPSEEK.usd_per_m_output,
              "prompt": 1000, "output_tokens": 500, "gpu_hour": _CHEAPEST},
    sample=lambda rng: (lambda api: {
        "price_in": api.usd_per_m_input, "price_out": api.usd_per_m_output,
        "prompt": rng.choice([500, 1000, 2000]),
        "output_tokens": rng.choice([200, 500, 800]),
        "gpu_hour": rng.choice([2.72, _CHEAPEST, 4.0])})(
            # one quote's input and output prices together, as a provider lists them
            rng.choice(prices.API_PRICES)),
    dimension="count", unit="conversations",
    extra_units={"conversations": 1, "conversations a day": 1, "a day": 1}, rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 11. Predict, then run: a token of a 7B model on this machine against an H100

token_here = core.PredictExercise(
    lesson=LESSON, number=11, title="A token here or on an H100: predict, then run",
    question=(
        "The cell after this one measures how fast this machine streams a large stack of "
        "weights (as a decode step at batch 1 does), and from it the tokens per second a "
        "7B model in BF16 could reach here. It prices those tokens at an assumed $0.10 an "
        "hour for a small two-core cloud machine, and sets them against one H100 at batch "
        "1 at the cheapest on-demand H100 SXM quote of September 2026 (about 30 times that "
        "hourly price). Both sides count the weights alone, with no KV cache; the lesson's "
        "section 7 also reads a conversation's cache on the H100, so its H100 token costs "
        "a little more.\n\n"
        "Before running it: **how many times as much** does a token cost here as on the "
        "H100? (Above 1 means the token here is dearer.) Commit a number, then run the "
        "measurement."
    ),
    hints=(
        "At batch 1 each token reads every weight once, so tokens per second = memory "
        "bandwidth ÷ bytes of weights, on both machines.",
        "The ratio of costs per token is (price here ÷ price of the H100) × (H100's "
        "bandwidth ÷ bandwidth here). The H100 streams 3.35 TB/s; a small CPU machine a "
        "few to a few tens of GB/s.",
    ),
    solution=(
        "A token costs price per hour ÷ tokens per hour, and at batch 1, tokens per hour "
        "follow the bandwidth. The H100 costs about 30 times as much per hour but streams "
        "about 100 to 1,000 times faster than a small CPU machine, so a token here "
        "typically costs a few to a few tens of times as much. Batching widens the gap: "
        "an H100 stays memory-bound to a batch of about 295, a CPU only to a few."
    ),
    dimension="count", unit="×", extra_units=wording.TIMES, good_within=3.0,
)


EXERCISES = (
    gpu_power_bill,
    cloud_bill,
    breakeven,
    buy_or_rent,
    cost_per_1k,
    server_price,
    batching_cost,
    cost_code,
    idle_hours,
    api_breakeven,
    token_here,
)

__all__ = ["EXERCISES", "LESSON", "TITLE"]
