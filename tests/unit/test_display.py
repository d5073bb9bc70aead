"""gpulesson.display: one object shown as a live widget in Jupyter and as static HTML on the
site (the book's HTML builder prefers ``text/html``; Jupyter prefers the widget view)."""

from __future__ import annotations

from gpulesson.display import Interactive, escape

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


class FakeWidget:
    """Stands in for an ipywidget: ``_repr_mimebundle_`` returns what it is given."""

    def __init__(self, produced: object) -> None:
        self.produced = produced
        self.calls: list[tuple[object, object]] = []

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> object:
        self.calls.append((include, exclude))
        return self.produced


def test_the_bundle_carries_the_widget_view_and_the_static_html() -> None:
    view = {"version_major": 2, "version_minor": 0, "model_id": "abc"}
    widget = FakeWidget({WIDGET_VIEW: view, "text/plain": "VBox(children=(...))"})
    static = "<p>Peak: <b>989.4 TFLOP/s</b></p>"
    bundle = Interactive(widget, static)._repr_mimebundle_(include=["a"], exclude=["b"])
    assert bundle == {WIDGET_VIEW: view, "text/html": static,
                      "text/plain": "Peak: 989.4 TFLOP/s"}
    assert widget.calls == [(["a"], ["b"])]


def test_the_static_html_replaces_any_html_of_the_widget() -> None:
    """The site shows ``text/html``: it is the build-time rendering, never the widget's."""
    widget = FakeWidget({WIDGET_VIEW: {"model_id": "m"}, "text/html": "<p>Loading...</p>"})
    assert Interactive(widget, "<p>static</p>")._repr_mimebundle_()["text/html"] == (
        "<p>static</p>")


def test_a_data_and_metadata_pair_and_objects_without_a_view() -> None:
    pair = FakeWidget(({WIDGET_VIEW: {"model_id": "m"}}, {"isolated": True}))
    assert set(Interactive(pair, "<p>x</p>")._repr_mimebundle_()) == {
        WIDGET_VIEW, "text/html", "text/plain"}
    for no_view in (object(), FakeWidget(None)):
        assert Interactive(no_view, "<p>x</p>")._repr_mimebundle_() == {
            "text/html": "<p>x</p>", "text/plain": "x"}


def test_the_plain_text_is_unescaped_collapsed_and_at_most_500_characters() -> None:
    bundle = Interactive(object(), "<p>GB &amp; GiB</p>\n\n  <p>differ</p>")._repr_mimebundle_()
    assert bundle["text/plain"] == "GB & GiB differ"
    long = Interactive(object(), "<p>" + "word " * 200 + "</p>")._repr_mimebundle_()
    assert len(long["text/plain"]) == 500 and long["text/plain"].startswith("word word")


def test_escape_makes_any_value_safe_in_markup() -> None:
    assert escape('<a href="x">AT&T</a>') == "&lt;a href=&quot;x&quot;&gt;AT&amp;T&lt;/a&gt;"
    assert escape("it's") == "it&#x27;s"
    assert escape(2**60 + 1) == "1152921504606846977"
