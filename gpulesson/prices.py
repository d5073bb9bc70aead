"""Cloud prices per GPU-hour: a dated, sourced table, and the default price for a GPU.

The quotes live in ``gpulesson/data/prices.json``. Each is one provider's list price for
one instance type on one date, with its source: the whole instance's hourly price and
the number of GPUs in it, so the price per GPU-hour is
``usd_per_instance_hour / gpus`` (:attr:`PriceQuote.usd_per_gpu_hour`).

Who charges it (``kind``): a **hyperscaler** (AWS, Microsoft Azure, Google Cloud, Oracle
Cloud Infrastructure) or a **specialist** GPU cloud (CoreWeave, Lambda, Nebius, RunPod,
Hyperstack, Crusoe, DigitalOcean). All quotes are on-demand: no commitment, billed by the
hour or second. Reserved terms, spot capacity and negotiated contracts cost less and are
left out, so these are the prices a newcomer pays, not the prices a large buyer pays.

The default price of a GPU (:func:`default_price`) is the lowest current hyperscaler
on-demand quote, or, where no hyperscaler rents that GPU, the lowest current specialist
quote; the quote says which it is. "Current" is the latest quote of each provider and
instance type: older quotes stay in the table as history (AWS's p5.48xlarge, 8 x H100,
cost $98.32 an hour at its launch in July 2023 and $55.04 after the cut of June 2025,
a cut reported as "up to 45%").

Prices change faster than datasheets: check a current quote before planning real money.
Standard library only. Taught in: ``notebooks/cost_economics.ipynb`` and
``book/hardware.md``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType

from gpulesson import _validate as v
from gpulesson import hardware

__all__ = ["KINDS", "QUOTES", "SOURCES", "PriceQuote", "current_quotes", "default_price",
           "quotes"]

#: Who charges a quote: the four hyperscalers, or a specialist GPU cloud.
KINDS = ("hyperscaler", "specialist")


@dataclass(frozen=True)
class PriceQuote:
    """One provider's on-demand list price for one instance type on one date.

    Attributes
    ----------
    gpu : str
        Canonical GPU name of :data:`gpulesson.hardware.GPUS`.
    provider, kind, offer : str
        ``"AWS"``, ``"hyperscaler"`` or ``"specialist"``, ``"on-demand"``.
    instance : str
        The instance type (``"p5.48xlarge"``) or the provider's product name.
    gpus : int
        GPUs in the instance.
    usd_per_instance_hour : float
        The whole instance's price, USD per hour.
    region, date : str
        Where the price applies (empty when the provider prices all regions alike) and the
        date it was read (ISO 8601).
    source : str
        The price sheet or page, with its publisher and date.
    url, note : str
        Where to check it; what to know about it.
    """

    gpu: str
    provider: str
    kind: str
    offer: str
    instance: str
    gpus: int
    usd_per_instance_hour: float
    region: str
    date: str
    source: str
    url: str
    note: str = ""

    @property
    def usd_per_gpu_hour(self) -> float:
        """``usd_per_instance_hour / gpus``: p5.48xlarge, $55.04 / 8 = $6.88."""
        return self.usd_per_instance_hour / self.gpus

    def describe(self) -> str:
        """One line: price, provider, instance, kind and date."""
        where = f", {self.region}" if self.region else ""
        return (f"${self.usd_per_gpu_hour:,.2f} per GPU-hour: {self.provider} "
                f"{self.instance} ({self.gpus} x {self.gpu}{where}), {self.kind} "
                f"{self.offer}, {self.date}")


def _load() -> tuple[tuple[PriceQuote, ...], Mapping[str, Mapping[str, str]]]:
    text = resources.files("gpulesson").joinpath("data/prices.json").read_text(
        encoding="utf-8")
    data = json.loads(text)
    sources = data["sources"]
    out = []
    for q in data["quotes"]:
        src = sources[q["source"]]
        out.append(PriceQuote(
            gpu=hardware.gpu(q["gpu"]).name, provider=q["provider"], kind=q["kind"],
            offer=q["offer"], instance=q["instance"], gpus=int(q["gpus"]),
            usd_per_instance_hour=float(q["usd_per_instance_hour"]), region=q["region"],
            date=q["date"], source=f"{src['title']}, {src['publisher']}, {src['date']}",
            url=src["url"], note=q["note"]))
    return tuple(out), MappingProxyType(sources)


#: Every quote, history included, in the order of the data file.
QUOTES: tuple[PriceQuote, ...]
#: The price sheets and pages the quotes come from: key -> title, publisher, date, url.
SOURCES: Mapping[str, Mapping[str, str]]
QUOTES, SOURCES = _load()


def quotes(gpu: str | None = None, *, kind: str | None = None) -> tuple[PriceQuote, ...]:
    """All quotes (history included) for ``gpu`` and ``kind``; ``None`` means any.

    Raises
    ------
    KeyError
        for an unknown GPU (listing the known ones).
    ValueError
        for a ``kind`` other than ``"hyperscaler"`` or ``"specialist"``.
    """
    name = None if gpu is None else hardware.gpu(gpu).name
    k = None if kind is None else v.choice("kind", kind, KINDS)
    return tuple(q for q in QUOTES
                 if (name is None or q.gpu == name) and (k is None or q.kind == k))


def current_quotes(gpu: str | None = None, *,
                   kind: str | None = None) -> tuple[PriceQuote, ...]:
    """The latest quote of each provider and instance type, cheapest first.

    Ties keep the data file's order.
    """
    latest: dict[tuple[str, str, str], PriceQuote] = {}
    for q in quotes(gpu, kind=kind):
        key = (q.gpu, q.provider, q.instance)
        if key not in latest or q.date > latest[key].date:
            latest[key] = q
    return tuple(sorted(latest.values(), key=lambda q: q.usd_per_gpu_hour))


def default_price(gpu: str) -> PriceQuote:
    """The quote calculators default to for ``gpu``.

    The cheapest current hyperscaler on-demand quote; where no hyperscaler rents the GPU,
    the cheapest current specialist quote (``quote.kind`` says which). H100 SXM: AWS
    p5.48xlarge, $6.88 per GPU-hour (2026-09-19); RTX 5090: RunPod, $0.99.

    Raises
    ------
    KeyError
        for an unknown GPU, or one no quote covers (naming the GPUs that have prices).
    """
    name = hardware.gpu(gpu).name
    for kind in KINDS:
        found = current_quotes(name, kind=kind)
        if found:
            return found[0]
    priced = sorted({q.gpu for q in QUOTES})
    raise v.UnknownNameError(
        f"no price quote for GPU {name!r}; GPUs with prices: {', '.join(priced)}")


v.guard_module(globals())
