"""The course's plot style, labelled axes with units, a roofline plot and a comparison plot.

Usage::

    import matplotlib.pyplot as plt
    from gpulesson import hardware, plotting
    from gpulesson.machine import this_machine

    plotting.use_style()
    fig, ax = plt.subplots()
    plotting.roofline_plot(
        ax, [this_machine(), hardware.gpu("H100 SXM")], dtype=["fp32", "bf16"],
        points=[plotting.RooflinePoint("layer, batch 1", 1.0, 2e9, kind="predicted")],
    )

Rules the helpers enforce: every axis has a quantity and a unit ("Arithmetic intensity
(FLOP/byte)"), sizes that span decades go on log axes, and tick labels carry SI prefixes
(``1 TFLOP/s``), never bare exponents. Nothing here chooses a matplotlib backend, so it is
safe under ``Agg`` (tests, the book build) and in Jupyter alike.

The roofline is drawn from :func:`gpulesson.roofline.attainable_flops` and
:func:`gpulesson.roofline.ridge_point`; this module never re-derives either.
Taught in: ``parallelism_at_the_core``, ``roofline_and_tensor_cores``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

import matplotlib as mpl
import numpy as np
from matplotlib.ticker import EngFormatter, FixedLocator, FuncFormatter, NullLocator

from gpulesson import roofline

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.lines import Line2D

    from gpulesson.bench import ComparisonTable

__all__ = [
    "PALETTE",
    "STYLE",
    "RooflineArtists",
    "RooflinePoint",
    "comparison_plot",
    "label_axes",
    "roofline_plot",
    "use_style",
]

#: Okabe-Ito colours: distinguishable with the common colour-vision deficiencies.
PALETTE: tuple[str, ...] = (
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000",
)

#: rcParams of the house style (applied by :func:`use_style`).
STYLE: Mapping[str, Any] = {
    "figure.figsize": (6.4, 4.0),
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "savefig.bbox": "tight",
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "axes.grid": True,
    "axes.grid.which": "major",
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.prop_cycle": mpl.cycler(color=list(PALETTE)),
    "lines.linewidth": 1.8,
    "lines.markersize": 6,
    "legend.frameon": False,
    "legend.fontsize": 9,
}


def use_style() -> None:
    """Apply the house style to matplotlib's rcParams (does not touch the backend)."""
    mpl.rcParams.update(STYLE)


def _with_unit(label: str, unit: str | None) -> str:
    return f"{label} ({unit})" if unit else label


def label_axes(
    ax: Axes,
    xlabel: str,
    ylabel: str,
    *,
    xunit: str | None = None,
    yunit: str | None = None,
    logx: bool = False,
    logy: bool = False,
    title: str | None = None,
    si_x: bool = False,
    si_y: bool = False,
) -> Axes:
    """Label both axes as "quantity (unit)" and pick log scales.

    ``si_x``/``si_y`` format tick labels with SI prefixes and the unit (``1 GFLOP/s``,
    ``10 ms``) instead of putting the unit in the label.
    """
    if not xlabel or not ylabel:
        raise ValueError("xlabel and ylabel must name the quantities, got empty text")
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    if si_x and xunit:
        ax.xaxis.set_major_formatter(EngFormatter(unit=xunit))
    if si_y and yunit:
        ax.yaxis.set_major_formatter(EngFormatter(unit=yunit))
    ax.set_xlabel(_with_unit(xlabel, xunit))
    ax.set_ylabel(_with_unit(ylabel, yunit))
    if title:
        ax.set_title(title)
    return ax


# ---------------------------------------------------------------------------------------
# Roofline


class _Spec(Protocol):
    """Anything shaped like ``gpulesson.hardware.GPUSpec`` (or ``machine.MachineSpec``)."""

    name: str
    bandwidth: float
    peak_flops: Mapping[str, float]


@dataclass(frozen=True)
class RooflinePoint:
    """A kernel on the roofline: its arithmetic intensity and its FLOP rate.

    ``kind`` is ``"measured"`` (filled marker) or ``"predicted"`` (hollow marker).
    """

    label: str
    intensity: float
    flops: float
    kind: Literal["measured", "predicted"] = "measured"

    def __post_init__(self) -> None:
        for name in ("intensity", "flops"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                math.isfinite(value) and value > 0
            ):
                raise ValueError(
                    f"RooflinePoint {self.label!r}: {name} must be a positive finite number "
                    f"(a log axis cannot show {value!r})"
                )
        if self.kind not in ("measured", "predicted"):
            raise ValueError(
                f"RooflinePoint {self.label!r}: kind must be 'measured' or 'predicted', "
                f"got {self.kind!r}"
            )


@dataclass(frozen=True)
class RooflineArtists:
    """What :func:`roofline_plot` drew, by device name: roof lines, ridge markers, points."""

    roofs: Mapping[str, Line2D]
    ridges: Mapping[str, Line2D]
    ridge_points: Mapping[str, float]
    points: Sequence[Line2D] = field(default_factory=tuple)


def _as_point(p: RooflinePoint | Mapping[str, Any] | Sequence[Any]) -> RooflinePoint:
    if isinstance(p, RooflinePoint):
        return p
    if isinstance(p, Mapping):
        return RooflinePoint(**p)
    return RooflinePoint(*p)


def _dtypes_for(devices: Sequence[_Spec], dtype: str | Sequence[str]) -> list[str]:
    if isinstance(dtype, str):
        chosen = [dtype] * len(devices)
    else:
        chosen = list(dtype)
        if len(chosen) != len(devices):
            raise ValueError(
                f"dtype must be one precision or one per device ({len(devices)}), got "
                f"{len(chosen)}: {chosen}"
            )
    for spec, dt in zip(devices, chosen, strict=True):
        if dt not in spec.peak_flops:
            raise ValueError(
                f"dtype {dt!r} has no peak for {spec.name}; it has "
                f"{', '.join(spec.peak_flops) or 'none'}"
            )
    return chosen


def roofline_plot(
    ax: Axes,
    devices: Sequence[_Spec] | _Spec,
    points: Iterable[RooflinePoint | Mapping[str, Any] | Sequence[Any]] = (),
    dtype: str | Sequence[str] = "bf16",
    *,
    intensity_range: tuple[float, float] | None = None,
    samples: int = 200,
    title: str | None = None,
) -> RooflineArtists:
    """Draw each device's roofline and the given kernels on log-log axes.

    Parameters
    ----------
    ax:
        the axes to draw on.
    devices:
        one or more specs with ``name``, ``bandwidth`` (bytes/s) and ``peak_flops``
        (precision -> FLOP/s): ``hardware.gpu(...)`` or ``machine.this_machine()``.
    points:
        kernels to place: :class:`RooflinePoint`, or ``(label, intensity, flops[, kind])``
        tuples, or dicts with those keys.
    dtype:
        the precision whose peak is the ceiling: one name for all devices, or one per
        device (``["fp32", "bf16"]`` for a CPU next to an H100).
    intensity_range:
        x-axis span in FLOP/byte; default covers every ridge and point with a decade spare.

    Returns
    -------
    RooflineArtists
        the roof lines, ridge markers (at ``roofline.ridge_point``) and point markers.
    """
    specs: list[_Spec] = [devices] if hasattr(devices, "peak_flops") else list(devices)  # type: ignore[list-item, arg-type]
    if not specs:
        raise ValueError("devices must hold at least one spec, got none")
    dtypes = _dtypes_for(specs, dtype)
    pts = [_as_point(p) for p in points]
    ridges = {
        spec.name: roofline.ridge_point(peak_flops=spec.peak_flops[dt], bandwidth=spec.bandwidth)
        for spec, dt in zip(specs, dtypes, strict=True)
    }
    if intensity_range is None:
        xs = list(ridges.values()) + [p.intensity for p in pts]
        lo = 10 ** math.floor(math.log10(min(min(xs) / 10, 0.1)))
        hi = 10 ** math.ceil(math.log10(max(xs) * 10))
    else:
        lo, hi = intensity_range
        if not (0 < lo < hi and math.isfinite(hi)):
            raise ValueError(
                f"intensity_range must be (low, high) with 0 < low < high, got {intensity_range}"
            )

    roofs: dict[str, Line2D] = {}
    ridge_markers: dict[str, Line2D] = {}
    for i, (spec, dt) in enumerate(zip(specs, dtypes, strict=True)):
        color = PALETTE[i % len(PALETTE)]
        peak = spec.peak_flops[dt]
        ridge = ridges[spec.name]
        grid = np.geomspace(lo, hi, samples)
        # sample the ridge itself, so the drawn corner is exactly the calculator's ridge
        x = np.unique(np.append(grid, ridge if lo <= ridge <= hi else []))
        y = [roofline.attainable_flops(float(v), peak_flops=peak, bandwidth=spec.bandwidth)
             for v in x]
        (roof,) = ax.plot(x, y, color=color, label=f"{spec.name} ({dt})")
        roof.set_gid(f"roof:{spec.name}")
        roofs[spec.name] = roof
        (marker,) = ax.plot([ridge], [peak], marker="o", linestyle="none", color=color,
                            markersize=5)
        marker.set_gid(f"ridge:{spec.name}")
        ridge_markers[spec.name] = marker
        ax.annotate(f"ridge {ridge:,.3g} FLOP/B", (ridge, peak), textcoords="offset points",
                    xytext=(4, -12), fontsize=8, color=color)

    point_artists = []
    for j, p in enumerate(pts):
        color = PALETTE[(len(specs) + j) % len(PALETTE)]
        hollow = p.kind == "predicted"
        (artist,) = ax.plot(
            [p.intensity], [p.flops], marker="D" if hollow else "s", linestyle="none",
            markerfacecolor="none" if hollow else color, markeredgecolor=color,
            label=f"{p.label} ({p.kind})",
        )
        artist.set_gid(f"point:{p.label}")
        point_artists.append(artist)

    label_axes(ax, "Arithmetic intensity", "Attainable performance", xunit="FLOP/byte",
               yunit="FLOP/s", logx=True, logy=True, si_y=True,
               title=title or "Roofline: min(peak, intensity x bandwidth)")
    ax.set_xlim(lo, hi)
    ax.legend(loc="lower right")
    return RooflineArtists(roofs=roofs, ridges=ridge_markers, ridge_points=ridges,
                           points=tuple(point_artists))


# ---------------------------------------------------------------------------------------
# Comparison tables (gpulesson.bench.compare)

_WHAT = {
    "time": ("Median time per call", "s"),
    "speedup": ("Speed-up over the baseline", "×"),
    "flop_rate": ("Achieved performance", "FLOP/s"),
}


def comparison_plot(
    ax: Axes,
    table: ComparisonTable,
    *,
    what: Literal["time", "speedup", "flop_rate"] = "time",
    size_unit: str | None = None,
    title: str | None = None,
) -> list[Line2D]:
    """Plot a :class:`gpulesson.bench.ComparisonTable` against problem size, log-log.

    ``what`` is ``"time"`` (median seconds per call), ``"speedup"`` (over the table's
    baseline) or ``"flop_rate"`` (needs ``flops=`` in ``compare``). Skipped cells are left
    out. Returns one line per implementation.
    """
    if what not in _WHAT:
        raise ValueError(f"what must be one of {', '.join(_WHAT)}, got {what!r}")
    lines = []
    for i, name in enumerate(table.implementations):
        xs, ys = [], []
        for n in table.sizes:
            row = table.row(n, name)
            if row.result is None:
                continue
            value = {"time": row.median, "speedup": row.speedup,
                     "flop_rate": row.result.flop_rate}[what]
            if value is not None and value > 0:
                xs.append(n)
                ys.append(value)
        if not xs:
            continue
        (line,) = ax.plot(xs, ys, marker="o", color=PALETTE[i % len(PALETTE)], label=name)
        line.set_gid(f"impl:{name}")
        lines.append(line)
    if not lines:
        raise ValueError(f"the table has no {what!r} values to plot (was flops= given?)")
    quantity, unit = _WHAT[what]
    if what == "speedup":
        quantity = f"Speed-up over {table.baseline}"
    label_axes(ax, f"Problem size {table.size_label}", quantity, xunit=size_unit,
               yunit=unit, logx=True, logy=True, si_y=what != "speedup",
               title=title or table.title)
    # tick exactly at the measured sizes, written out (1,024 or 1.05 M), not as 2^10 or 10^3
    ax.xaxis.set_major_locator(FixedLocator(list(table.sizes)))
    ax.xaxis.set_minor_locator(NullLocator())
    big = max(table.sizes) >= 100_000
    ax.xaxis.set_major_formatter(EngFormatter(places=1, sep=" ") if big else
                                 FuncFormatter(lambda v, _pos: f"{v:,.0f}"))
    ax.legend()
    return lines
