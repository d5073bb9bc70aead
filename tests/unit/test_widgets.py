"""The widget builder (:mod:`gpulesson.widgets`), without a kernel: build, set ``.value``,
read the output widgets.

On the toy calculator of ``calculators/toy.py`` (which only echoes its inputs) the
builder's behaviour is checked: recompute on change, presets filling inputs, custom on
manual edits, inline errors, and the static markup of CONTRIBUTING.md. Then every registry
entry as a widget: its static markup, its live outputs, and the explorers' plots.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import pytest

from gpulesson import calculators as C
from gpulesson.display import Interactive
from gpulesson.widgets import ERROR_COLOR, calculator_widget, static_html

from .calculators.toy import registered

NAMES = list(C.CALCULATORS)


@pytest.fixture()
def toy():
    """The toy calculator of ``calculators/toy.py``, registered for one test; its name."""
    with registered() as name:
        yield name


def test_outputs_show_the_worked_example_and_follow_every_change(toy):
    w = calculator_widget(toy)
    assert isinstance(w, Interactive)
    assert w.outputs["n_out"].value == "8"
    assert w.error.value == ""
    w.controls["n"].value = 100
    assert w.outputs["n_out"].value == "100"
    w.controls["rate"].value = 2.0
    assert w.outputs["rate_out"].value == "2.00 TB/s"


def test_overrides_set_the_initial_state_in_both_renderings(toy):
    w = calculator_widget(toy, n=3, precision="fp32")
    assert w.values()["n"] == 3
    assert w.values()["peak"] == 60
    assert w.outputs["peak_out"].value == "60.0 TFLOP/s"
    assert parse(w.static_html).text["peak_out"] == "60.0 TFLOP/s"
    assert 'name="n" data-kind="integer" value="3"' in w.static_html


def test_a_preset_fills_its_inputs_and_a_key_change_refills_them(toy):
    w = calculator_widget(toy, precision="fp32")
    w.controls["gpu"].value = "old"
    assert w.values()["peak"] == 15.7 and w.values()["rate"] == 0.9
    assert w.outputs["peak_out"].value == "15.7 TFLOP/s"
    w.controls["gpu"].value = "fast"
    w.controls["precision"].value = "bf16"
    assert w.values()["peak"] == 1000
    assert w.outputs["peak_out"].value == "1.0 PFLOP/s"


def test_editing_a_filled_input_makes_the_preset_custom(toy):
    w = calculator_widget(toy)
    w.controls["rate"].value = 1.5
    assert w.controls["gpu"].value == C.CUSTOM
    assert w.values()["rate"] == 1.5
    assert w.outputs["rate_out"].value == "1.50 TB/s"
    # a key change no longer touches a custom preset's inputs
    w.controls["precision"].value = "fp32"
    assert w.values()["peak"] == 1000


def test_setting_a_filled_input_to_the_preset_value_keeps_the_preset(toy):
    w = calculator_widget(toy)
    w.controls["rate"].value = 3.35
    assert w.controls["gpu"].value == "fast"


def _is_red_alert(markup: str) -> bool:
    return ERROR_COLOR in markup and 'role="alert"' in markup


def test_out_of_range_input_shows_inline_red_message_and_no_stale_numbers(toy):
    w = calculator_widget(toy)
    w.controls["n"].value = 5000
    assert w.error_text.startswith("n (Count) must be a whole number between 1 and 1024, got 5000")
    assert _is_red_alert(w.error.value)
    assert all(out.value == "—" for out in w.outputs.values())
    w.controls["n"].value = 4
    assert w.error.value == ""
    assert w.outputs["n_out"].value == "4"


def test_invalid_combination_shows_inline_and_recovers(toy):
    w = calculator_widget(toy)  # BF16 on the fast GPU
    w.controls["gpu"].value = "old"  # the old GPU has no BF16 figure
    assert w.error_text.startswith("gpu:")
    assert "bf16" in w.error_text
    assert _is_red_alert(w.error.value)
    assert w.outputs["peak_out"].value == "—"
    assert w.last["ok"] is False and w.last["input"] == "gpu"  # what is shown, not stale
    w.controls["precision"].value = "fp32"
    assert w.error.value == ""
    assert w.outputs["peak_out"].value == "15.7 TFLOP/s"
    assert w.last["ok"] and w.last["text"]["peak_out"] == "15.7 TFLOP/s"


def test_invalid_override_is_shown_not_raised(toy):
    w = calculator_widget(toy, n=0)
    assert w.error_text.startswith("n (Count)")
    assert 'class="gl-calc-error" role="alert"' in w.static_html


def test_unknown_override_is_a_programming_error(toy):
    with pytest.raises(ValueError, match="bogus"):
        calculator_widget(toy, bogus=1)


class _Markup(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: dict[str, str] = {}
        self._output: str | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "output":
            self._output = dict(attrs)["data-output"]
            self.text[self._output] = ""

    def handle_endtag(self, tag):
        if tag == "output":
            self._output = None

    def handle_data(self, data):
        if self._output:
            self.text[self._output] += data


def parse(markup: str) -> _Markup:
    parser = _Markup()
    parser.feed(markup)
    return parser


def test_static_html_has_the_contract_markup(toy):
    w = calculator_widget(toy)
    bundle = w._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    markup = bundle["text/html"]
    doc = parse(markup)
    tag, root = doc.tags[0]
    assert tag == "div"
    assert (root["class"], root["data-calculator"], root["data-lesson"]) == (
        "gl-calculator", toy, "parallelism_at_the_core")
    labels = {a["for"] for t, a in doc.tags if t == "label"}
    controls = [(t, a) for t, a in doc.tags if t in ("input", "select")]
    assert sorted(a["name"] for _, a in controls) == sorted(i.name for i in C.get(toy).inputs)
    assert all(a["id"] in labels for _, a in controls)
    assert doc.text == {"n_out": "8", "rate_out": "3.35 TB/s", "peak_out": "1.0 PFLOP/s",
                        "big": f"{2**60 + 8:,}", "precision_out": "bf16"}
    assert any(a.get("class") == "gl-calc-error" and a.get("role") == "alert"
               for _, a in doc.tags)
    assert any(a.get("aria-live") == "polite" for _, a in doc.tags)
    selected = re.search(r'<option value="fast" selected>', markup)
    assert selected is not None


def test_static_html_ids_are_unique_per_instance(toy):
    first, second = static_html(toy), static_html(toy)
    ids = re.findall(r' id="([^"]+)"', first + second)
    assert len(ids) == len(set(ids))


# --------------------------------------------------------------------------------------
# Every registry entry as a widget


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
    fig, ax = _drawn_sweep("inference", "bandwidth", "compute_bound_batch", [1, 2, 4])
    label = ax.yaxis.label
    assert "\n" in label.get_text()  # "Batch where decode turns compute-bound"
    box, frame = label.get_window_extent(fig.canvas.get_renderer()), fig.bbox
    assert frame.y0 <= box.y0 and box.y1 <= frame.y1 and frame.x0 <= box.x0
    # a plain number's own unit goes into the label, not onto SI-prefixed ticks
    assert label.get_text().replace("\n", " ").endswith("(sequences)")
