"""Sphinx extension: a figure and its percent sign stay on one line.

The course writes a share with a space before its sign ("6.7 %", as SI writes it). A
browser may break a line at that space, and in a phone's narrow column it often does,
leaving a lone "%" at the start of the next line. This extension turns every space between
a digit and a following "%" in a page's prose (paragraphs, lists, tables, admonitions,
captions, headings) into a no-break space, U+00A0 (:func:`gpulesson.units.keep_percent`),
once the page is read, so that its titles in the navigation and the page's <title> are
joined too, and again once it is resolved, for the text references add. Code, program
output, maths, comments and raw HTML keep their characters: what a reader copies from them
is what the source says. The calculators' and exercises' markup is raw HTML: the Python
that writes it (:mod:`gpulesson.widgets`, :mod:`gpulesson.exercises.render`) joins its
figures itself, on the site and in Jupyter alike.

Loaded by ``_config.yml`` (``sphinx: local_extensions``).
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx

from gpulesson.units import keep_percent

#: Nodes whose text is shown as written.
VERBATIM = (nodes.literal, nodes.literal_block, nodes.doctest_block, nodes.math,
            nodes.math_block, nodes.raw, nodes.comment)


def _verbatim(node: nodes.Node) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, VERBATIM):
            return True
        parent = parent.parent
    return False


def join_figures(doctree: nodes.document) -> None:
    """Every figure of ``doctree``'s prose kept on one line with its "%"."""
    for node in list(doctree.findall(nodes.Text)):
        joined = keep_percent(node.astext())
        # a text node without a parent is not on the page (nothing to join)
        if joined != node.astext() and node.parent is not None and not _verbatim(node):
            node.parent.replace(node, nodes.Text(joined))


def _on_doctree_read(app: Sphinx, doctree: nodes.document) -> None:
    join_figures(doctree)


def _on_doctree_resolved(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    join_figures(doctree)


def setup(app: Sphinx) -> dict[str, Any]:
    # once read, before Sphinx keeps the page's titles for its <title>, the navigation and
    # the table of contents (collectors at the default priority, 500); once resolved, for
    # the text that references and citations add
    app.connect("doctree-read", _on_doctree_read, priority=400)
    app.connect("doctree-resolved", _on_doctree_resolved)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
