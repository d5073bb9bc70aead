"""Sphinx extension: a figure and its percent sign stay on one line.

The course writes a share with a space before its sign ("6.7 %", as SI writes it). A
browser may break a line at that space, and in a phone's narrow column it often does,
leaving a lone "%" at the start of the next line. Once a page's doctree is resolved, this
extension turns every space between a digit and a following "%" in the page's prose
(paragraphs, lists, tables, admonitions, captions) into a no-break space, U+00A0. Code,
program output, maths, comments and raw HTML keep their characters: what a reader copies
from them is what the source says. The calculators' and exercises' markup is raw HTML that
the course's Python writes (and rewrites once they go live), so it is left as written too.

Loaded by ``_config.yml`` (``sphinx: local_extensions``).
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx

#: The space a line must not break at: after a digit, before a percent sign.
BREAKABLE = re.compile(r"(?<=\d) (?=%)")
NO_BREAK = "\u00a0"
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


def keep_together(text: str) -> str:
    """``text`` with a no-break space between each digit and the "%" after it."""
    return BREAKABLE.sub(NO_BREAK, text)


def _on_doctree_resolved(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    for node in list(doctree.findall(nodes.Text)):
        joined = keep_together(node.astext())
        # a text node without a parent is not on the page (nothing to join)
        if joined != node.astext() and node.parent is not None and not _verbatim(node):
            node.parent.replace(node, nodes.Text(joined))


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("doctree-resolved", _on_doctree_resolved)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
