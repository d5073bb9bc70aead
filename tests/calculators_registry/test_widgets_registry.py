"""Every registry entry as a widget (no kernel): static markup, live outputs, errors."""

from __future__ import annotations

import html

import pytest

from gpulesson import calculators as C
from gpulesson import hardware
from gpulesson.widgets import ERROR_COLOR, calculator_widget

from .test_widget_builder import parse

NAMES = list(C.CALCULATORS)


def shown(w) -> dict[str, str]:
    """What the output widgets display, as text."""
    return {k: html.unescape(o.value) for k, o in w.outputs.items()}


@pytest.mark.parametrize("name", NAMES)
def test_static_html_labels_every_input_and_shows_every_output(name):
    calc = C.get(name)
    w = calculator_widget(name)
    doc = parse(w.static_html)
    root_tag, root = doc.tags[0]
    assert (root_tag, root["class"], root["data-calculator"]) == ("div", "gl-calculator",
                                                                 name)
    labels = {a["for"] for t, a in doc.tags if t == "label"}
    controls = {a["name"]: a for t, a in doc.tags if t in ("input", "select")}
    assert set(controls) == {i.name for i in calc.inputs}
    assert all(a["id"] in labels for a in controls.values())
    example = C.evaluate(name)
    assert doc.text == example["text"]  # the build-time worked example, every output
    assert sum(1 for t, a in doc.tags if a.get("class") == "gl-calc-error"
               and a.get("role") == "alert") == 1
    assert any(a.get("aria-live") == "polite" for _, a in doc.tags)


@pytest.mark.parametrize("name", NAMES)
def test_live_outputs_match_the_registry_and_follow_a_change(name):
    calc = C.get(name)
    w = calculator_widget(name)
    assert w.error.value == ""
    assert shown(w) == C.evaluate(name)["text"]
    # change the first number input to another valid value and compare with the registry
    spec = next(i for i in calc.inputs if i.kind in ("number", "integer"))
    new = spec.max if w.values()[spec.name] != spec.max else spec.min
    w.controls[spec.name].value = new
    expected = C.evaluate(name, w.values())
    if expected["ok"]:
        assert w.error.value == ""
        assert shown(w) == expected["text"]
    else:
        assert w.error_text == expected["error"]


def test_invalid_combination_is_shown_inline_in_red():
    """Tensor parallelism over 3 GPUs cannot split Llama-2-7B's 32 heads."""
    w = calculator_widget("training_memory")
    w.controls["tp"].value = 3
    assert w.error_text == "tp must divide heads (32), got 3"
    assert ERROR_COLOR in w.error.value and 'role="alert"' in w.error.value
    assert all(o.value == "—" for o in w.outputs.values())
    w.controls["tp"].value = 4
    assert w.error.value == ""
    assert w.outputs["total"].value == C.evaluate("training_memory", {"tp": 4})["text"]["total"]


def test_gpu_preset_fills_figures_and_manual_edit_makes_it_custom():
    w = calculator_widget("gemm")
    w.controls["gpu"].value = "A100 80GB"
    assert w.values()["peak_flops"] == hardware.gpu("A100 80GB").peak_flops["bf16"] / 1e12
    assert w.outputs["ridge_point"].value == C.evaluate("gemm", {"gpu": "A100 80GB"})[
        "text"]["ridge_point"]
    w.controls["dtype"].value = "fp32"  # the preset follows the precision
    assert w.values()["peak_flops"] == 19.5
    w.controls["bandwidth"].value = 1.0
    assert w.controls["gpu"].value == C.CUSTOM
    w.controls["gpu"].value = "V100 SXM"
    w.controls["dtype"].value = "bf16"  # the V100 has no BF16 tensor cores
    assert w.error_text.startswith("gpu: V100 SXM has no dense bf16 figure")


def test_model_preset_fills_the_shape():
    w = calculator_widget("param_count")
    w.controls["model"].value = "llama-2-7b"
    assert w.outputs["total"].value == "6,738,415,616"
    w.controls["layers"].value = 33
    assert w.controls["model"].value == C.CUSTOM
    assert w.outputs["total"].value == C.evaluate("param_count", w.values())["text"]["total"]


def test_overrides_set_the_static_worked_example():
    w = calculator_widget("kv_cache", model="llama-2-7b", seq_len=4096)
    doc = parse(w.static_html)
    assert doc.text["total"] == C.evaluate("kv_cache", {"model": "llama-2-7b",
                                                        "seq_len": 4096})["text"]["total"]
    assert 'value="4096"' in w.static_html


def test_sweep_is_compute_at_each_value():
    points = C.sweep("decode_ceiling", "batch", [1, 8, 64])
    assert points == [C.compute("decode_ceiling", batch=b) for b in (1, 8, 64)]
    with pytest.raises(ValueError, match=r"^batch \("):
        C.sweep("decode_ceiling", "batch", [1, 0])


def test_explorer_adds_a_plot_to_both_renderings(capsys):
    from gpulesson.widgets import explorer

    e = explorer("decode_ceiling", "batch", "tokens_per_second", [1, 4, 16, 64], log_x=True)
    assert "<svg" in e.static_html and "<?xml" not in e.static_html
    assert 'class="gl-calc-plot"' in e.static_html
    assert parse(e.static_html).text == C.evaluate("decode_ceiling")["text"]
    e.controls["precision"].value = "int4"  # redraws; outputs follow as in any calculator
    assert shown(e) == C.evaluate("decode_ceiling", e.values())["text"]
    e.controls["batch"].value = 0
    assert e.error_text.startswith("batch (")
    with pytest.raises(ValueError, match="x must be a number input"):
        explorer("gemm", "dtype", "time", ["bf16"])
    capsys.readouterr()  # without a kernel, the figure's repr goes to stdout


def _drawn_sweep(name, x, y, values, *, log_x=False, log_y=False):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from gpulesson.widgets import _sweep_figure

    fig = _sweep_figure(name, x, y, values, C.resolve(name), log_x, log_y)
    FigureCanvasAgg(fig).draw()
    return fig, fig.axes[0]


def _labels(ticks):
    return [t.get_text() for t in ticks if t.get_text()]


def test_sweep_plot_log_ticks_share_one_style():
    """Less than a decade on a log y axis: the minor ticks carry the labels, in the major
    ticks' SI style ("150 tokens/s"), never matplotlib's "6×10¹⁰"; x ticks read "2", "4".
    Over more than a decade only the major ticks are labelled."""
    fig, ax = _drawn_sweep("inference", "batch", "decode_per_user", [1, 2, 4, 8],
                           log_x=True, log_y=True)
    minor = _labels(ax.yaxis.get_minorticklabels())
    assert minor and all(t.endswith("tokens/s") for t in minor), minor
    texts = minor + _labels(ax.xaxis.get_minorticklabels()) + _labels(
        ax.xaxis.get_majorticklabels())
    assert not any("10^" in t or "×10" in t or "times10" in t for t in texts), texts
    assert {"2", "4"} <= set(_labels(ax.xaxis.get_majorticklabels())
                             + _labels(ax.xaxis.get_minorticklabels()))
    fig, ax = _drawn_sweep("decode_ceiling", "batch", "tokens_per_second",
                           [1, 4, 16, 64, 256, 1024], log_x=True, log_y=True)
    assert _labels(ax.yaxis.get_minorticklabels()) == []
    assert "1 ktokens/s" in _labels(ax.yaxis.get_majorticklabels())


def test_sweep_plot_long_labels_wrap_inside_the_figure():
    fig, ax = _drawn_sweep("inference", "prompt", "crossover", [1024, 4096, 16384])
    label = ax.yaxis.label
    assert "\n" in label.get_text()  # "Prompt length where attention FLOPs equal ..."
    box, frame = label.get_window_extent(fig.canvas.get_renderer()), fig.bbox
    assert frame.y0 <= box.y0 and box.y1 <= frame.y1 and frame.x0 <= box.x0
    # a plain number's own unit goes into the label, not onto SI-prefixed ticks
    assert label.get_text().replace("\n", " ").endswith("(tokens)")
