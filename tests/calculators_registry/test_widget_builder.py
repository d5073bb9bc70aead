"""The widget builder, without a kernel: build, set ``.value``, read the output widgets.

Uses the toy calculator of ``conftest.py`` (which only echoes its inputs), so what is
checked is the builder's behaviour: recompute on change, presets filling inputs, custom
on manual edits, inline errors, and the static markup of CONTRIBUTING.md.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from gpulesson import calculators as C
from gpulesson.display import Interactive
from gpulesson.widgets import ERROR_COLOR, calculator_widget, static_html


def test_outputs_show_the_worked_example_and_follow_every_change(toy):
    w = calculator_widget(toy)
    assert isinstance(w, Interactive)
    assert w.outputs["n_out"].value == "8"
    assert w.error.value == ""
    w.controls["n"].value = 100
    assert w.outputs["n_out"].value == "100"
    w.controls["rate"].value = 2.0
    assert w.outputs["rate_out"].value == "2.00 TB/s"


def test_overrides_set_the_initial_state(toy):
    w = calculator_widget(toy, n=3, precision="fp32")
    assert w.values()["n"] == 3
    assert w.values()["peak"] == 60
    assert w.outputs["peak_out"].value == "60.0 TFLOP/s"


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
