"""The cost of a model: power, on-premises TCO, cloud cost, break-even, cost per token.

Prices are inputs, never constants here: dated, sourced cloud prices per GPU-hour live in
:mod:`gpulesson.prices` (``prices.default_price("H100 SXM")``), and the calculator
registry defaults its price inputs to them. A year is 8,760 hours (365 days) and a month
730 hours (a twelfth of that).

* Power cost: ``power_watts / 1000 * pue * hours * usd_per_kwh``. The *power usage
  effectiveness* (PUE = facility power / IT power; The Green Grid 2007) adds cooling and
  distribution: about 1.1 for the best hyperscale halls, 1.4-1.6 for typical data
  centres (Uptime Institute surveys report an industry average near 1.55).
* A training run rents ``gpus`` for ``seconds``: ``gpus * seconds / 3600`` GPU-hours, the
  unit papers report (:func:`gpu_hours`), at a price per GPU-hour (:func:`run_cost`).
* Utilisation scales the hours that draw power (on-premises) or are billed (cloud);
  idle power of an owned machine is ignored. For serving, the idle share of paid hours
  divides the tokens that share the price (:func:`cost_per_1k_tokens`).

Taught in: ``notebooks/cost_economics.ipynb`` and ``notebooks/planning_dashboard.ipynb``.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpulesson import _validate as v
from gpulesson import units

__all__ = [
    "HOURS_PER_MONTH",
    "HOURS_PER_YEAR",
    "TCOBreakdown",
    "breakeven_months",
    "cloud_cost",
    "cost_per_1k_tokens",
    "gpu_hours",
    "on_prem_breakdown",
    "on_prem_tco",
    "power_cost",
    "run_cost",
]

HOURS_PER_YEAR = 8760
HOURS_PER_MONTH = HOURS_PER_YEAR / 12
SECONDS_PER_HOUR = 3600


def power_cost(*, power_watts: float, usd_per_kwh: float, hours: float,
               pue: float = 1.4) -> float:
    """Electricity cost: ``power_watts / 1000 * pue * hours * usd_per_kwh`` (USD).

    Parameters
    ----------
    power_watts : float
        IT power drawn (all GPUs and their servers), watts.
    usd_per_kwh : float
        Electricity price.
    hours : float
        Hours of operation.
    pue : float
        Power usage effectiveness, >= 1.
    """
    w = v.nonneg_number("power_watts", power_watts)
    price = v.nonneg_number("usd_per_kwh", usd_per_kwh)
    h = v.nonneg_number("hours", hours)
    p = v.number_at_least("pue", pue, 1)
    return w / 1000 * p * h * price


def _hours_used(years: float, utilization: float, per_hour: float = 1.0) -> float:
    """``per_hour`` times the hours used in ``years`` at ``utilization``:
    ``per_hour * 8760 * years * utilization`` (the hours themselves by default)."""
    y = v.positive_number("years", years)
    u = v.fraction("utilization", utilization)
    return per_hour * HOURS_PER_YEAR * y * u


@dataclass(frozen=True)
class TCOBreakdown:
    """On-premises total cost of ownership: hardware, power and their sum (USD)."""

    hardware: float
    power: float
    total: float


def on_prem_breakdown(
    *,
    hardware_usd: float,
    power_watts: float,
    usd_per_kwh: float,
    years: float,
    pue: float = 1.4,
    utilization: float = 1.0,
) -> TCOBreakdown:
    """Hardware plus ``years`` of power at ``utilization`` (see :func:`on_prem_tco`)."""
    hw = v.nonneg_number("hardware_usd", hardware_usd)
    power = power_cost(power_watts=power_watts, usd_per_kwh=usd_per_kwh,
                       hours=_hours_used(years, utilization), pue=pue)
    return TCOBreakdown(hardware=hw, power=power, total=hw + power)


def on_prem_tco(
    *,
    hardware_usd: float,
    power_watts: float,
    usd_per_kwh: float,
    years: float,
    pue: float = 1.4,
    utilization: float = 1.0,
) -> float:
    """On-premises TCO: ``hardware_usd + power_cost(hours = 8760 * years * utilization)``.

    Leaves out staff, networking, space and financing, which a real plan adds.
    """
    return on_prem_breakdown(hardware_usd=hardware_usd, power_watts=power_watts,
                             usd_per_kwh=usd_per_kwh, years=years, pue=pue,
                             utilization=utilization).total


def cloud_cost(*, usd_per_hour: float, years: float, utilization: float = 1.0) -> float:
    """Cloud cost when paying only for used hours: ``usd_per_hour * 8760 * years * u``."""
    rate = v.nonneg_number("usd_per_hour", usd_per_hour)
    return _hours_used(years, utilization, per_hour=rate)


def breakeven_months(
    *,
    hardware_usd: float,
    power_watts: float,
    usd_per_kwh: float,
    cloud_usd_per_hour: float,
    pue: float = 1.4,
    utilization: float = 1.0,
) -> float:
    """Months after which owning is cheaper than renting.

    ``hardware_usd / (cloud per month - power per month)`` with 730-hour months, both at
    the same utilisation. Raises ``ValueError`` when the cloud costs no more per hour
    than the power, since then owning never breaks even.
    """
    hw = v.nonneg_number("hardware_usd", hardware_usd)
    cloud = v.nonneg_number("cloud_usd_per_hour", cloud_usd_per_hour)
    u = v.fraction("utilization", utilization, allow_zero=False)
    hours = HOURS_PER_MONTH * u
    power_month = power_cost(power_watts=power_watts, usd_per_kwh=usd_per_kwh, hours=hours,
                             pue=pue)
    saving = cloud * hours - power_month
    if saving <= 0:
        raise ValueError(
            f"owning never breaks even: the cloud costs {units.format_usd(cloud * hours)} per "
            f"month and the power alone {units.format_usd(power_month)}; cloud_usd_per_hour "
            "must exceed the "
            "hourly power cost"
        )
    return hw / saving


def cost_per_1k_tokens(*, usd_per_gpu_hour: float, gpus: int, tokens_per_second: float,
                       utilization: float = 1.0) -> float:
    """Serving cost per 1,000 tokens, USD.

    ``usd_per_gpu_hour * gpus / (3600 * tokens_per_second * utilization) * 1000``.

    Every paid hour is billed, busy or idle, so the tokens that share an hour's price are
    the aggregate throughput of the ``gpus`` (all sequences of a batch together) *averaged
    over the paid hours*. Give either that average as ``tokens_per_second`` (and leave
    ``utilization=1``), or the throughput while busy together with the share of paid
    hours that are busy: a GPU busy half the time (``utilization=0.5``) doubles the cost
    per token. Taught in ``cost_economics`` (section 5).

    Parameters
    ----------
    usd_per_gpu_hour : float
        Price of one GPU for one hour, USD.
    gpus : int
        GPUs serving together.
    tokens_per_second : float
        Aggregate tokens/s of the ``gpus`` while they work.
    utilization : float
        Share of the paid hours with work, in (0, 1].
    """
    rate = v.nonneg_number("usd_per_gpu_hour", usd_per_gpu_hour)
    n = v.positive_int("gpus", gpus)
    tps = v.positive_number("tokens_per_second", tokens_per_second)
    u = v.fraction("utilization", utilization, allow_zero=False)
    return rate * n / (SECONDS_PER_HOUR * tps * u) * 1000


def gpu_hours(*, gpus: int, seconds: float) -> float:
    """GPU-hours of ``gpus`` GPUs busy for ``seconds``: ``gpus * seconds / 3600``.

    The unit training reports use (Llama 2: 184,320 A100 GPU-hours for the 7B model,
    Touvron et al. 2023, Table 2). DeepSeek-V3 reports 180K H800 GPU-hours per trillion
    tokens, "3.7 days" on its 2,048 GPUs (DeepSeek-AI 2024, section 1).
    """
    n = v.positive_int("gpus", gpus)
    s = v.nonneg_number("seconds", seconds)
    return n * s / SECONDS_PER_HOUR


def run_cost(*, usd_per_gpu_hour: float, gpus: int, seconds: float) -> float:
    """Cost of renting ``gpus`` GPUs for ``seconds``: ``usd_per_gpu_hour * gpus * seconds / 3600``.

    Every GPU-hour of the run is billed, busy or not (a reserved cluster). DeepSeek-V3:
    2.788M H800 GPU-hours at an assumed $2 per GPU-hour is $5.576M (DeepSeek-AI 2024,
    Table 1). Prices are inputs: use a dated quote (see the module docstring).

    Parameters
    ----------
    usd_per_gpu_hour : float
        Price of one GPU for one hour, USD.
    gpus : int
        GPUs rented.
    seconds : float
        Wall-clock duration of the run.
    """
    rate = v.nonneg_number("usd_per_gpu_hour", usd_per_gpu_hour)
    return rate * gpu_hours(gpus=gpus, seconds=seconds)


v.guard_module(globals())
