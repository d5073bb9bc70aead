"""ipywidgets calculators built from the registry :mod:`gpulesson.calculators`.

One generic builder, no per-calculator widget code: :func:`calculator_widget` reads a
registry entry and lays out

* one labelled control per input (a text box or slider with its unit, a dropdown for
  choices and presets; choosing a preset fills the inputs it covers, editing a filled
  input by hand turns the preset to "custom", but for one it only suggests (a GPU's
  price): the rules of
  :func:`gpulesson.calculators.apply_changes`, which the site's calculators call too);
* one ``HTML`` widget per output, recomputed on every change by
  :func:`gpulesson.calculators.evaluate` (which calls the calculator functions);
* an ``HTML`` widget that shows an invalid combination inline, in red: never a
  traceback, never ``print``.

It returns a :class:`gpulesson.display.Interactive` whose static ``text/html`` rendering
(the worked example, computed now) follows the markup of ``CONTRIBUTING.md`` ("Two
renderings"), so the static site shows real numbers and can upgrade the form in place.

Taught in: every lesson that embeds a calculator (see each entry's ``lesson``).
"""

from __future__ import annotations

import itertools
import textwrap
from collections.abc import Mapping
from typing import Any

from gpulesson import calculators as _calc
from gpulesson.display import Interactive, escape
from gpulesson.units import keep_percent

__all__ = ["CalculatorWidget", "calculator_widget", "explorer", "static_html"]

#: Red for errors on a light background (5.5:1 on white). Themes may override it: the
#: widget uses JupyterLab's ``--jp-error-color1`` (light and dark variants) and the static
#: markup ``--gl-error-color``, which the site's stylesheet can set per theme.
ERROR_COLOR = "#d32f2f"
_MISSING = "—"
_ids = itertools.count(1)

# Minimal inline layout for the static rendering, neutral in light and dark themes (the
# site's stylesheet may refine it through the gl-calc-* classes).
_BOX = ("border: 1px solid rgba(127, 127, 127, 0.45); border-radius: 8px; "
        "padding: 0.8em 1em; margin: 1em 0")
_FIELD = "display: flex; flex-wrap: wrap; gap: 0.2em 0.6em; align-items: baseline; margin: 0.3em 0"
_HELP = "flex-basis: 100%; opacity: 0.75"
_GRID = ("display: grid; grid-template-columns: minmax(12em, max-content) auto; "
         "gap: 0.25em 1em; margin: 0.8em 0 0.4em")


def _value_attr(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


#: Calculators with more inputs than this (the dashboards) show their outputs beside the
#: inputs, so that the verdict stays in view while the reader changes a figure.
_SIDE_BY_SIDE = 16


def static_html(name: str, values: Mapping[str, Any] | None = None,
                uid: str | None = None) -> str:
    """The static rendering of calculator ``name`` with ``values`` (shown units).

    Markup (relied on by the site's JavaScript and the browser tests):
    ``<div class="gl-calculator" data-calculator="NAME">``, one labelled ``<input>`` or
    ``<select>`` per input with ``name="INPUT"``, one ``<output data-output="OUTPUT">`` per
    output holding the value computed now, an element ``class="gl-calc-error"
    role="alert"`` and an ``aria-live="polite"`` region around the outputs.
    """
    calc = _calc.get(name)
    shown = _calc.resolve(name, **dict(values or {}))
    result = _calc.evaluate(name, shown)
    uid = uid or f"gl-calc-{next(_ids)}"
    parts = [
        f'<div class="gl-calculator" data-calculator="{escape(name)}" '
        f'data-lesson="{escape(calc.lesson)}" id="{escape(uid)}" style="{_BOX}">',
        f'<p class="gl-calc-title" style="margin: 0 0 0.3em"><strong>{escape(calc.title)}'
        "</strong></p>",
        f'<p class="gl-calc-description" style="margin: 0 0 0.6em">'
        f"{escape(calc.description)}</p>",
    ]
    basic = [s for s in calc.inputs if not s.advanced]
    advanced = [s for s in calc.inputs if s.advanced]
    parts.append('<div class="gl-calc-inputs">')
    parts.extend(_field_html(spec, shown[spec.name], uid) for spec in basic)
    if advanced:
        parts.append('<details class="gl-calc-advanced"><summary>More inputs</summary>')
        parts.extend(_field_html(spec, shown[spec.name], uid) for spec in advanced)
        parts.append("</details>")
    parts.append("</div>")
    parts.append(f'<div class="gl-calc-outputs" aria-live="polite"><dl style="{_GRID}">')
    for out in calc.outputs:
        text = result["text"][out.name] if result["ok"] else _MISSING
        help_attr = f' title="{escape(out.help)}"' if out.help else ""
        parts.append(
            f'<dt id="{escape(uid)}-out-{escape(out.name)}"{help_attr}>'
            f'{escape(keep_percent(out.label))}</dt>'
            f'<dd style="margin: 0; font-weight: 600">'
            f'<output data-output="{escape(out.name)}" name="{escape(out.name)}" '
            f'aria-labelledby="{escape(uid)}-out-{escape(out.name)}">{escape(text)}</output></dd>'
        )
    parts.append("</dl></div>")
    error = _message(result)
    parts.append(
        f'<p class="gl-calc-error" role="alert" '
        f'style="color: var(--gl-error-color, {ERROR_COLOR})">'
        f"{escape(error)}</p>"
    )
    parts.append("</div>")
    return "\n".join(parts)


def _field_html(spec: _calc.Input, value: Any, uid: str) -> str:
    fid = f"{uid}-{spec.name}"
    unit = f' <span class="gl-calc-unit">{escape(spec.unit)}</span>' if spec.unit else ""
    described = f' aria-describedby="{escape(fid)}-help"' if spec.help else ""
    label = f'<label for="{escape(fid)}" style="min-width: 14em">{escape(spec.label)}</label>'
    if spec.kind in ("choice", "preset"):
        options = "".join(
            f'<option value="{escape(c.value)}"{" selected" if c.value == value else ""}>'
            f"{escape(c.label)}</option>"
            for c in spec.choices
        )
        control = (f'<select id="{escape(fid)}" name="{escape(spec.name)}" '
                   f'data-kind="{spec.kind}"{described}>{options}</select>')
    else:
        # a number's step is only a hint (preset figures such as 0.864 TB/s are off any
        # grid): "any" keeps the browser from flagging them; data-step keeps the hint
        step = 1 if spec.kind == "integer" else "any"
        hint = f' data-step="{escape(_value_attr(spec.step))}"' if spec.step else ""
        control = (
            f'<input type="number" id="{escape(fid)}" name="{escape(spec.name)}" '
            f'data-kind="{spec.kind}" value="{escape(_value_attr(value))}" '
            f'min="{escape(_value_attr(spec.min))}" max="{escape(_value_attr(spec.max))}" '
            f'step="{step}"{hint}{described}>'
        )
    help_text = (f'<small class="gl-calc-help" id="{escape(fid)}-help" style="{_HELP}">'
                 f"{escape(keep_percent(spec.help))}</small>" if spec.help else "")
    return f'<div class="gl-calc-field" style="{_FIELD}">{label} {control}{unit} {help_text}</div>'


class CalculatorWidget(Interactive):
    """A live calculator: :class:`Interactive` plus handles for code and tests.

    Attributes
    ----------
    name:
        the registry entry.
    controls:
        input name -> ipywidget (set ``.value`` to change an input).
    outputs:
        output name -> ``HTML`` widget holding the formatted value.
    error:
        ``HTML`` widget: empty, or the message for an invalid combination (in red).
    """

    def __init__(self, name: str, widget: Any, static: str, controls: dict[str, Any],
                 outputs: dict[str, Any], error: Any) -> None:
        super().__init__(widget, static)
        self.name = name
        self.controls = controls
        self.outputs = outputs
        self.error = error
        self.last: dict[str, Any] = {}

    def values(self) -> dict[str, Any]:
        """The current inputs, in shown units."""
        return {key: control.value for key, control in self.controls.items()}

    @property
    def error_text(self) -> str:
        """The current error message as plain text ('' when the inputs are valid)."""
        from gpulesson.display import _plain

        return _plain(self.error.value)


def _control(spec: _calc.Input, value: Any) -> Any:
    import ipywidgets as w

    layout = w.Layout(width="auto", min_width="9em")
    if spec.kind in ("choice", "preset"):
        return w.Dropdown(options=[(c.label, c.value) for c in spec.choices], value=value,
                          layout=layout, tooltip=spec.help or None)
    if spec.kind == "integer":
        if spec.slider:
            return w.IntSlider(value=value, min=int(spec.min), max=int(spec.max),
                               step=int(spec.step or 1), continuous_update=False,
                               layout=layout, tooltip=spec.help or None)
        return w.IntText(value=value, step=int(spec.step or 1), layout=layout,
                         tooltip=spec.help or None)
    if spec.slider:
        return w.FloatSlider(value=value, min=spec.min, max=spec.max,
                             step=spec.step or (spec.max - spec.min) / 100,
                             continuous_update=False, readout_format=".3g",
                             layout=layout, tooltip=spec.help or None)
    # an unbounded box: a value outside the range is explained inline, never clamped
    return w.FloatText(value=value, step=spec.step, layout=layout, tooltip=spec.help or None)


def _row(spec: _calc.Input, control: Any) -> Any:
    import ipywidgets as w

    label = w.HTML(f"<b>{escape(spec.label)}</b>", layout=w.Layout(width="16em"))
    unit = w.HTML(escape(spec.unit), layout=w.Layout(min_width="4em"))
    children = [label, control, unit]
    if spec.help:
        children.append(w.HTML(f'<span style="opacity: 0.75">{escape(spec.help)}</span>',
                               layout=w.Layout(flex="1 1 auto")))
    return w.HBox(children)


def _message(result: Mapping[str, Any]) -> str:
    """What the alert line of a form says: the error, or the warnings of a result that
    computed (a 2:4-sparse peak typed as dense); empty when there is neither."""
    if not result["ok"]:
        return result["error"]
    return " ".join(w["message"] for w in result.get("warnings", ()))


def _error_html(message: str) -> str:
    return (f'<div role="alert" style="color: var(--jp-error-color1, {ERROR_COLOR}); '
            'font-weight: 600">'
            f"{escape(message)}</div>") if message else ""


def calculator_widget(name: str, **overrides: Any) -> CalculatorWidget:
    """An ipywidgets calculator for registry entry ``name``, with a static rendering.

    Parameters
    ----------
    name:
        a key of :data:`gpulesson.calculators.CALCULATORS`.
    **overrides:
        initial inputs in shown units (a preset choice fills what it covers).

    Returns
    -------
    CalculatorWidget
        display it in Jupyter (the live widget) or on the site (static HTML of the
        initial state). ``.controls``, ``.outputs`` and ``.error`` give the widgets.

    Raises
    ------
    ValueError
        when ``overrides`` names an unknown input. An invalid value is not raised: it is
        shown inline, as a learner would see it.
    """
    import ipywidgets as w

    calc = _calc.get(name)
    initial = _calc.resolve(name, **overrides)
    controls = {spec.name: _control(spec, initial[spec.name]) for spec in calc.inputs}
    outputs = {o.name: w.HTML(_MISSING) for o in calc.outputs}
    error = w.HTML("")

    busy = {"on": False}
    widget_box: dict[str, CalculatorWidget] = {}

    def set_quietly(updates: Mapping[str, Any]) -> None:
        busy["on"] = True
        try:
            for key, value in updates.items():
                controls[key].value = value
        finally:
            busy["on"] = False

    def show(changed: list[str]) -> None:
        """The preset rules and the result (gpulesson.calculators.apply_changes), shown."""
        answer = _calc.apply_changes(
            name, {key: control.value for key, control in controls.items()}, changed)
        set_quietly(answer["updates"])
        result = answer["result"]
        for key, out in outputs.items():
            out.value = escape(result["text"][key]) if result["ok"] else _MISSING
        error.value = _error_html(_message(result))
        widget_box["w"].last = result

    def on_change(change: Mapping[str, Any]) -> None:
        if not busy["on"]:
            show([change["owner"]._gl_input])

    rows = []
    advanced_rows = []
    for spec in calc.inputs:
        control = controls[spec.name]
        control._gl_input = spec.name
        control.observe(on_change, names="value")
        (advanced_rows if spec.advanced else rows).append(_row(spec, control))
    if advanced_rows:
        more = w.Accordion(children=[w.VBox(advanced_rows)], selected_index=None)
        more.set_title(0, "More inputs")
        rows.append(more)

    out_rows = [
        w.HBox([w.HTML(f"{escape(o.label)}", layout=w.Layout(width="16em")), outputs[o.name]])
        for o in calc.outputs
    ]
    title = w.HTML(f"<h4 style='margin: 0.3em 0'>{escape(calc.title)}</h4>"
                   f"<p style='margin: 0'>{escape(calc.description)}</p>")
    if len(calc.inputs) > _SIDE_BY_SIDE:  # a dashboard: outputs beside the inputs, in view
        box = w.VBox([title, w.HBox([
            w.VBox(rows, layout=w.Layout(flex="1 1 55%")),
            w.VBox([*out_rows, error], layout=w.Layout(flex="1 1 45%", margin="0 0 0 1em")),
        ])])
    else:
        box = w.VBox([title, w.VBox(rows), w.HTML("<hr style='margin: 0.4em 0'>"),
                      w.VBox(out_rows), error])
    widget = CalculatorWidget(name, box, static_html(name, initial), controls, outputs, error)
    widget_box["w"] = widget
    show([])
    return widget


# ---------------------------------------------------------------------------------------
# Explorers: a calculator with a plot of one output against one input

#: Axis unit of each output format (SI, prefixes come from the tick formatter).
_AXIS_UNITS = {"bytes": "B", "flops": "FLOP", "flop/s": "FLOP/s", "bytes/s": "B/s",
               "seconds": "s", "usd": "$", "tokens/s": "tokens/s", "count": "",
               "ratio": "×", "intensity": "FLOP/byte", "number": ""}


def _sweep_figure(name: str, x: str, y: str, values: Any, current: dict[str, Any],
                  log_x: bool, log_y: bool) -> Any:
    """A matplotlib figure of output ``y`` against input ``x`` at the current inputs."""
    from matplotlib.figure import Figure

    from gpulesson import plotting

    calc = _calc.get(name)
    x_spec, y_spec = calc.input(x), calc.output(y)
    others = {k: v for k, v in current.items() if k != x}
    points = _calc.sweep(name, x, values, **others)
    plotting.use_style()
    fig = Figure(figsize=(5.5, 3.2))
    ax = fig.add_subplot()
    ax.plot(list(values), [p[y] for p in points], marker="o", markersize=3)
    here = _calc.evaluate(name, current)
    if here["ok"]:
        ax.plot([current[x]], [_calc.compute(name, **current)[y]], marker="o", markersize=8,
                linestyle="none", label="current inputs")
        ax.legend(loc="best")
    # SI prefixes on the ticks carry a prefixable unit (1 GB, 10 ms, 60 ktokens/s); a plain
    # number's own unit ("sequences", "GPU-hours") goes into the label instead
    unit = _AXIS_UNITS.get(y_spec.format, "")
    label_unit = None if unit else (y_spec.unit or None)
    # long labels wrap rather than run off the figure (the y label has its height to fill)
    plotting.label_axes(ax, textwrap.fill(x_spec.label, 60),
                        textwrap.fill(y_spec.label, 34 if label_unit is None else 28),
                        xunit=x_spec.unit or None, yunit=label_unit, logx=log_x, logy=log_y)
    _format_ticks(ax.xaxis, "", log_x)
    _format_ticks(ax.yaxis, unit, log_y)
    fig.tight_layout()
    return fig


def _format_ticks(axis: Any, unit: str, log: bool) -> None:
    """One style for every labelled tick of ``axis``: SI prefixes with ``unit`` where there
    is one (1 GB, 10 ms, 60 ktokens/s), else plain numbers on a log scale (1, 10, 1,000).

    On a log axis matplotlib also labels minor ticks when the data span less than about a
    decade, in its own ``6×10¹⁰`` notation; they get the major ticks' style then, and no
    labels once the axis spans a decade or more (the major ticks suffice).
    """
    import math

    from matplotlib.ticker import EngFormatter, FuncFormatter, NullFormatter

    def style() -> Any:
        if unit:
            return EngFormatter(unit=unit)
        return FuncFormatter(lambda value, _pos: f"{value:,.12g}")

    if unit or log:
        axis.set_major_formatter(style())
    if log:
        low, high = axis.get_view_interval()
        low, high = min(low, high), max(low, high)
        decades = math.log10(high / low) if low > 0 else 0.0
        axis.set_minor_formatter(NullFormatter() if decades >= 1 else style())


def explorer(name: str, x: str, y: str, values: Any, *, log_x: bool = False,
             log_y: bool = False, **overrides: Any) -> CalculatorWidget:
    """A calculator widget with a plot of output ``y`` against input ``x``.

    The curve is computed with :func:`gpulesson.calculators.sweep` over ``values`` (in the
    input's shown unit) at the other inputs' current values and redrawn on every change;
    the current point is marked. The static rendering adds the plot as inline SVG.

    Example: ``explorer("decode_ceiling", "batch", "tokens_per_second", [1, 2, 4, 8, 16,
    32, 64, 128], log_x=True)``.
    """
    import io

    import ipywidgets as w

    calc = _calc.get(name)
    x_spec, y_spec = calc.input(x), calc.output(y)
    if x_spec.kind not in ("number", "integer"):
        raise ValueError(f"x must be a number input of {name}, got {x!r} ({x_spec.kind})")
    if y_spec.format not in _AXIS_UNITS:
        raise ValueError(f"y must be a numeric output of {name}, got {y!r} ({y_spec.format})")
    values = list(values)
    base = calculator_widget(name, **overrides)
    plot = w.Output()

    def draw(*_: Any) -> None:
        import matplotlib.pyplot as plt
        from IPython.display import display

        plot.clear_output(wait=True)
        if base.error.value:  # the error is already shown in red above
            return
        fig = _sweep_figure(name, x, y, values, base.values(), log_x, log_y)
        with plot:
            display(fig)
        plt.close("all")

    for control in base.controls.values():
        control.observe(draw, names="value")
    draw()
    svg = io.StringIO()
    _sweep_figure(name, x, y, values, _calc.resolve(name, **overrides), log_x,
                  log_y).savefig(svg, format="svg")
    figure = svg.getvalue()
    figure = figure[figure.index("<svg"):]  # drop the XML prolog: inline SVG in HTML
    static = base.static_html.rsplit("</div>", 1)
    static_html_ = (static[0] + f'<figure class="gl-calc-plot" style="margin: 0.5em 0">'
                    f"{figure}<figcaption>{escape(y_spec.label)} against "
                    f"{escape(x_spec.label.lower())}</figcaption></figure></div>" + static[1])
    box = w.VBox([base.widget, plot])
    result = CalculatorWidget(name, box, static_html_, base.controls, base.outputs,
                              base.error)
    result.plot = plot
    return result
