"""gpulesson.plotting: the roofline goes through the calculator's ridge; axes carry units."""

from __future__ import annotations

from types import MappingProxyType

import matplotlib as mpl
import numpy as np
import pytest
from matplotlib.figure import Figure

from gpulesson import hardware, plotting, roofline
from gpulesson.bench import compare
from gpulesson.device import cpu_device
from gpulesson.machine import MachineSpec
from gpulesson.plotting import RooflinePoint, comparison_plot, label_axes, roofline_plot


def new_axes():
    return Figure().subplots()  # no pyplot, no backend state


def laptop() -> MachineSpec:
    """A machine with round figures: 100 GFLOP/s fp32, 20 GB/s -> ridge 5 FLOP/B."""
    return MachineSpec(name="laptop", memory_bytes=16 * 10**9, bandwidth=20e9,
                       peak_flops=MappingProxyType({"fp32": 100e9, "fp64": 50e9}))


def test_h100_roof_bends_at_the_published_ridge_point() -> None:
    """H100 SXM dense BF16 989.4 TFLOP/s over 3.35 TB/s (NVIDIA H100 datasheet): the ridge
    is at about 295 FLOP/byte, and the roof passes through (ridge, peak)."""
    h100 = hardware.gpu("H100 SXM")
    ax = new_axes()
    art = roofline_plot(ax, [h100], dtype="bf16")
    ridge = art.ridge_points[h100.name]
    assert ridge == roofline.ridge_point(h100.peak_flops["bf16"], h100.bandwidth)
    assert ridge == pytest.approx(295, abs=1)
    marker = art.ridges[h100.name]
    assert marker.get_xdata()[0] == ridge
    assert marker.get_ydata()[0] == pytest.approx(989.4e12, rel=1e-3)
    x = np.asarray(art.roofs[h100.name].get_xdata())
    y = np.asarray(art.roofs[h100.name].get_ydata())
    at_ridge = np.flatnonzero(x == ridge)
    assert at_ridge.size == 1 and y[at_ridge[0]] == pytest.approx(989.4e12, rel=1e-3)
    below, above = x < ridge, x > ridge
    # memory-bound side: slope = bandwidth (3.35 TB/s); compute-bound side: flat at peak
    assert np.allclose(y[below] / x[below], 3.35e12, rtol=1e-3)
    assert np.allclose(y[above], 989.4e12, rtol=1e-3)


def test_each_device_gets_its_own_roof_and_precision() -> None:
    ax = new_axes()
    h100 = hardware.gpu("H100 SXM")
    art = roofline_plot(ax, [laptop(), h100], dtype=["fp32", "bf16"])
    assert art.ridge_points["laptop"] == pytest.approx(5.0)
    assert art.ridges["laptop"].get_ydata()[0] == 100e9
    labels = [line.get_label() for line in art.roofs.values()]
    assert labels == ["laptop (fp32)", f"{h100.name} (bf16)"]
    lo, hi = ax.get_xlim()
    assert lo <= 0.1 and hi >= 10 * art.ridge_points[h100.name]


def test_axes_are_log_and_labelled_with_units() -> None:
    ax = new_axes()
    roofline_plot(ax, laptop(), dtype="fp32")
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_xlabel() == "Arithmetic intensity (FLOP/byte)"
    assert ax.get_ylabel() == "Attainable performance (FLOP/s)"
    assert "FLOP/s" in ax.yaxis.get_major_formatter()(1e12, 0)  # ticks "1 TFLOP/s"


def test_points_are_placed_measured_filled_predicted_hollow() -> None:
    ax = new_axes()
    art = roofline_plot(
        ax, [laptop()], dtype="fp32",
        points=[RooflinePoint("matmul", 50.0, 80e9),
                ("layer, batch 1", 1.0, 20e9, "predicted"),
                {"label": "copy", "intensity": 0.1, "flops": 1e9}],
    )
    assert [p.get_label() for p in art.points] == [
        "matmul (measured)", "layer, batch 1 (predicted)", "copy (measured)"]
    assert (art.points[0].get_xdata()[0], art.points[0].get_ydata()[0]) == (50.0, 80e9)
    assert art.points[1].get_markerfacecolor() == "none"
    assert art.points[0].get_markerfacecolor() != "none"


def test_bad_inputs_name_the_problem() -> None:
    ax = new_axes()
    with pytest.raises(ValueError, match="dtype 'bf16' has no peak for laptop; it has fp32"):
        roofline_plot(ax, [laptop()], dtype="bf16")
    with pytest.raises(ValueError, match="one per device"):
        roofline_plot(ax, [laptop()], dtype=["fp32", "fp64"])
    with pytest.raises(ValueError, match="intensity must be a positive"):
        RooflinePoint("bad", 0.0, 1e9)
    with pytest.raises(ValueError, match="kind must be"):
        RooflinePoint("bad", 1.0, 1e9, kind="guessed")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="intensity_range"):
        roofline_plot(ax, [laptop()], dtype="fp32", intensity_range=(10, 1))
    with pytest.raises(ValueError, match="at least one"):
        roofline_plot(ax, [], dtype="fp32")


def test_comparison_plot_draws_each_implementation_against_size() -> None:
    table = compare(lambda xp, a: a * 2.0, lambda n: np.arange(float(n)), [64, 256],
                    reference=lambda a: [2.0 * v for v in a], devices=[cpu_device()],
                    repeats=2, flops=lambda n: n)
    ax = new_axes()
    lines = comparison_plot(ax, table, size_unit="elements")
    assert [line.get_label() for line in lines] == ["Python loop", "numpy (CPU)"]
    assert list(lines[1].get_xdata()) == [64, 256]
    assert list(lines[1].get_ydata()) == table.medians("numpy (CPU)")
    assert ax.get_xlabel() == "Problem size n (elements)"
    assert ax.get_ylabel() == "Median time per call (s)"
    assert ax.get_xscale() == ax.get_yscale() == "log"
    ax2 = new_axes()
    comparison_plot(ax2, table, what="speedup")
    assert ax2.get_ylabel() == "Speed-up over Python loop (×)"
    with pytest.raises(ValueError, match="what must be one of"):
        comparison_plot(new_axes(), table, what="energy")  # type: ignore[arg-type]


def test_use_style_sets_the_house_style_without_touching_the_backend() -> None:
    backend = mpl.get_backend()
    with mpl.rc_context():
        plotting.use_style()
        assert mpl.rcParams["axes.spines.top"] is False
        assert mpl.rcParams["axes.grid"] is True
        assert mpl.get_backend() == backend


def test_label_axes_refuses_unlabelled_axes() -> None:
    ax = new_axes()
    label_axes(ax, "Bytes moved", "Time", xunit="B", yunit="s", logx=True)
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_xscale()) == ("Bytes moved (B)",
                                                                   "Time (s)", "log")
    with pytest.raises(ValueError, match="must name the quantities"):
        label_axes(ax, "", "Time")
