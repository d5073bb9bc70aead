"""Cloud prices per GPU-hour: a dated, sourced table, and the default price for a GPU.

The quotes live in ``gpulesson/data/prices.json``. Each is one provider's list price for
one instance type on one date, with its source: the whole instance's hourly price and
the number of GPUs in it, so the price per GPU-hour is
``usd_per_instance_hour / gpus`` (:attr:`PriceQuote.usd_per_gpu_hour`).

Who charges it (``kind``): a **hyperscaler** (AWS, Microsoft Azure, Google Cloud, Oracle
Cloud Infrastructure) or a **specialist** GPU cloud (CoreWeave, Lambda, Nebius, RunPod,
Hyperstack, Crusoe, DigitalOcean). How (``offer``): **on-demand**, no commitment, billed by
the hour or second, the price a newcomer pays; or **committed**, a reservation for a term
(``term``: "1 year", "3 years", "12 months", or "not stated" where the rate card does not
say), billed for every hour of the term whether the GPUs work or not, like an owned
server. Lookups return on-demand quotes unless asked for ``offer="committed"``. Spot
capacity and negotiated contracts cost less still and are left out.

Hosted models' prices per million tokens (:data:`API_PRICES`, :func:`api_price`) live in
the same file, each with the date it took effect: input and output are billed apart, and
input that hits the provider's prompt cache costs less.

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

__all__ = ["API_PRICES", "KINDS", "OFFERS", "QUOTES", "SOURCES", "ApiPrice", "PriceQuote",
           "api_price", "current_quotes", "default_price", "quotes"]

#: Who charges a quote: the four hyperscalers, or a specialist GPU cloud.
KINDS = ("hyperscaler", "specialist")
#: How it is sold: by the hour with no commitment, or committed for a term.
OFFERS = ("on-demand", "committed")


@dataclass(frozen=True)
class PriceQuote:
    """One provider's on-demand list price for one instance type on one date.

    Attributes
    ----------
    gpu : str
        Canonical GPU name of :data:`gpulesson.hardware.GPUS`.
    provider, kind, offer : str
        ``"AWS"``, ``"hyperscaler"`` or ``"specialist"``, ``"on-demand"`` or
        ``"committed"``.
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
    term : str
        A committed quote's term ("1 year", "3 years", "12 months", "not stated"); empty
        for on-demand. Its ``usd_per_instance_hour`` is the term's price over its hours.
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
    term: str = ""

    @property
    def usd_per_gpu_hour(self) -> float:
        """``usd_per_instance_hour / gpus``: p5.48xlarge, $55.04 / 8 = $6.88."""
        return self.usd_per_instance_hour / self.gpus

    def describe(self) -> str:
        """One line: price, provider, instance, kind and date."""
        where = f", {self.region}" if self.region else ""
        offer = self.offer if not self.term else f"{self.offer} (term {self.term})"
        return (f"${self.usd_per_gpu_hour:,.2f} per GPU-hour: {self.provider} "
                f"{self.instance} ({self.gpus} x {self.gpu}{where}), {self.kind} "
                f"{offer}, {self.date}")


@dataclass(frozen=True)
class ApiPrice:
    """A hosted model's list price per million tokens, from the date it took effect.

    Attributes
    ----------
    provider, model, label : str
        ``"DeepSeek"``, the API's model name (``"deepseek-chat"``), and what to call it.
    usd_per_m_input, usd_per_m_cached_input, usd_per_m_output : float
        USD per million input tokens (prompt-cache miss), cached input tokens (hit) and
        output tokens.
    date, source, url, note : str
        When the price took effect (ISO 8601), the page that states it, where to check it.
    reasoning : bool
        A reasoning model: its hidden reasoning tokens are billed as output tokens, on top
        of the answer's.
    peak_factor : float
        What the prices above are multiplied by at the provider's peak hours (``note``
        says which): 2 for DeepSeek since 16 August 2026, whose list prices above are the
        off-peak ones; 1 for a price that holds around the clock.
    """

    provider: str
    model: str
    label: str
    usd_per_m_input: float
    usd_per_m_cached_input: float
    usd_per_m_output: float
    date: str
    source: str
    url: str
    note: str = ""
    reasoning: bool = False
    peak_factor: float = 1.0

    def per_request(self, input_tokens: float, output_tokens: float,
                    cached_share: float = 0.0, *, peak: bool = False) -> float:
        """USD for one request: ``input_tokens`` (``cached_share`` of them from the
        provider's prompt cache) and ``output_tokens``; at the provider's peak hours
        (``peak``) the prices times :attr:`peak_factor`."""
        n_in = v.nonneg_number("input_tokens", input_tokens)
        n_out = v.nonneg_number("output_tokens", output_tokens)
        hit = v.fraction("cached_share", cached_share)
        factor = self.peak_factor if v.boolean("peak", peak) else 1.0
        return factor * (n_in * ((1 - hit) * self.usd_per_m_input
                                 + hit * self.usd_per_m_cached_input)
                         + n_out * self.usd_per_m_output) / 1e6


def _load() -> tuple[tuple[PriceQuote, ...], Mapping[str, Mapping[str, str]],
                    tuple[ApiPrice, ...]]:
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
            url=src["url"], note=q["note"], term=q["term"]))
    api = []
    for a in data["api"]:
        src = sources[a["source"]]
        api.append(ApiPrice(
            provider=a["provider"], model=a["model"], label=a["label"],
            usd_per_m_input=float(a["usd_per_m_input"]),
            usd_per_m_cached_input=float(a["usd_per_m_cached_input"]),
            usd_per_m_output=float(a["usd_per_m_output"]), date=a["date"],
            source=f"{src['title']}, {src['publisher']}, {src['date']}", url=src["url"],
            note=a["note"], reasoning=v.boolean("reasoning", a.get("reasoning", False)),
            peak_factor=float(v.number_at_least("peak_factor", a.get("peak_factor", 1.0), 1.0))))
    return tuple(out), MappingProxyType(sources), tuple(api)


#: Every quote, history included, in the order of the data file.
QUOTES: tuple[PriceQuote, ...]
#: The price sheets and pages the quotes come from: key -> title, publisher, date, url.
SOURCES: Mapping[str, Mapping[str, str]]
#: Hosted models' prices per million tokens, history included, oldest first per model.
API_PRICES: tuple[ApiPrice, ...]
QUOTES, SOURCES, API_PRICES = _load()


def api_price(model: str, *, on: str | None = None) -> ApiPrice:
    """The price of hosted ``model`` (its API name) in effect on date ``on`` (ISO 8601;
    ``None``: the latest). DeepSeek's ``"deepseek-flash"``: $0.15 in, $0.60 out per million
    tokens off-peak since 2026-09-10 (twice that at peak hours); its ``"deepseek-chat"``,
    history: $0.28 in, $0.42 out from 2025-09-29.

    Raises
    ------
    KeyError
        for a model with no price (naming those that have one), or a date before its first.
    """
    found = sorted((a for a in API_PRICES if a.model == model), key=lambda a: a.date)
    if not found:
        known = ", ".join(sorted({a.model for a in API_PRICES}))
        raise v.UnknownNameError(f"no API price for model {model!r}; models with prices: "
                                 f"{known}")
    if on is not None:
        found = [a for a in found if a.date <= on]
        if not found:
            first = min(a.date for a in API_PRICES if a.model == model)
            raise v.UnknownNameError(f"no API price for model {model!r} on {on}; the first "
                                     f"took effect on {first}")
    return found[-1]


def quotes(gpu: str | None = None, *, kind: str | None = None,
           offer: str | None = "on-demand") -> tuple[PriceQuote, ...]:
    """All quotes (history included) for ``gpu``, ``kind`` and ``offer``; ``None`` means
    any (``offer`` defaults to on-demand).

    Raises
    ------
    KeyError
        for an unknown GPU (listing the known ones).
    ValueError
        for a ``kind`` other than ``"hyperscaler"`` or ``"specialist"``, or an ``offer``
        other than ``"on-demand"`` or ``"committed"``.
    """
    name = None if gpu is None else hardware.gpu(gpu).name
    k = None if kind is None else v.choice("kind", kind, KINDS)
    o = None if offer is None else v.choice("offer", offer, OFFERS)
    return tuple(q for q in QUOTES
                 if (name is None or q.gpu == name) and (k is None or q.kind == k)
                 and (o is None or q.offer == o))


def current_quotes(gpu: str | None = None, *, kind: str | None = None,
                   offer: str | None = "on-demand") -> tuple[PriceQuote, ...]:
    """The latest quote of each provider, instance type, offer and term, cheapest first.

    On-demand quotes unless ``offer`` says otherwise. Ties keep the data file's order.
    """
    latest: dict[tuple[str, str, str, str, str], PriceQuote] = {}
    for q in quotes(gpu, kind=kind, offer=offer):
        key = (q.gpu, q.provider, q.instance, q.offer, q.term)
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
