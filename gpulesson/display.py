"""One object, two renderings: a live ipywidget in Jupyter, static HTML on the site.

Every interactive element of the course (calculator, explorer, exercise) is shown through
:class:`Interactive`. Its MIME bundle carries both

* ``application/vnd.jupyter.widget-view+json``: the live widget, which JupyterLab, Notebook,
  VS Code and Colab prefer; and
* ``text/html``: a static rendering computed at build time (the worked example's values,
  the question with its collapsed solution ...), which the book's HTML builder prefers
  (``nb_mime_priority_overrides`` in ``_config.yml``). On the site, pages with calculators
  then upgrade that HTML in place with the same Python running in the browser.

So a page never shows an empty box, and no number is computed twice in two languages.
"""

from __future__ import annotations

import html as _html
from typing import Any

__all__ = ["Interactive", "escape"]


def escape(text: object) -> str:
    """HTML-escape any value for safe inclusion in static markup."""
    return _html.escape(str(text), quote=True)


class Interactive:
    """Display ``widget`` in Jupyter and ``static_html`` on the static site.

    Parameters
    ----------
    widget:
        any ipywidgets widget (usually a ``VBox``).
    static_html:
        self-contained HTML (no script) that shows the same content without a kernel.
    """

    def __init__(self, widget: Any, static_html: str) -> None:
        self.widget = widget
        self.static_html = static_html

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle: dict[str, Any] = {}
        widget_bundle = getattr(self.widget, "_repr_mimebundle_", None)
        if widget_bundle is not None:
            produced = widget_bundle(include=include, exclude=exclude)
            if isinstance(produced, tuple):  # (data, metadata) form
                produced = produced[0]
            bundle.update(produced or {})
        bundle["text/html"] = self.static_html
        bundle["text/plain"] = _plain(self.static_html)
        return bundle


def _plain(markup: str) -> str:
    import re

    text = re.sub(r"<[^>]+>", " ", markup)
    return re.sub(r"\s+", " ", _html.unescape(text)).strip()[:500]
