"""Sphinx extension: the Jupyter widget manager only on pages that show a widget.

When the book executes a notebook, nbclient saves the state of every ipywidget the notebook
made into its metadata, and myst-nb then gives the page that state (a ``<script
type="application/vnd.jupyter.widget-state+json">``) plus the scripts of ``_config.yml``'s
``nb_ipywidgets_js`` (RequireJS, the course's set-up and the embed manager), which rebuild
the widgets in the browser.

The course's calculators and exercises are :class:`gpulesson.display.Interactive` objects:
the site shows their static HTML (``nb_mime_priority_overrides``), never their widget view,
so on a lesson page that state describes widgets nothing shows. It is large (about 1,200
models on the distributed-training lesson), and the embed manager still builds every one of
them: about a second of a reader's CPU on each lesson page, for nothing.

On a page whose HTML holds no widget view (``application/vnd.jupyter.widget-view+json``),
this extension removes the saved state and the widget manager's scripts. A page that does
show a plain widget keeps both, and that widget renders from its state as before
(``tests/site/test_book_config_in_browser.py``).

Loaded by ``_config.yml`` (``sphinx: local_extensions``).
"""

from __future__ import annotations

import posixpath
from typing import Any

from sphinx.application import Sphinx

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: After myst-nb's own handler (Sphinx's default priority, 500) has added the page's files.
PRIORITY = 900


def manager_scripts(app: Sphinx) -> set[str]:
    """The widget manager's scripts as Sphinx names them (``nb_ipywidgets_js``, local paths
    under ``_static/``, as ``add_js_file`` stores them)."""
    paths = app.config.nb_ipywidgets_js or {}
    return {path if "://" in path else posixpath.join("_static", path) for path in paths}


def _on_html_page_context(app: Sphinx, pagename: str, templatename: str,
                          context: dict[str, Any], doctree: Any) -> None:
    if WIDGET_VIEW in (context.get("body") or ""):
        return
    scripts = context.get("script_files")
    if not isinstance(scripts, list):
        return
    manager = manager_scripts(app)
    scripts[:] = [js for js in scripts
                  if js.attributes.get("type") != WIDGET_STATE and js.filename not in manager]


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("html-page-context", _on_html_page_context, priority=PRIORITY)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
