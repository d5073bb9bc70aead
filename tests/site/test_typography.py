"""The site's typography extension (``scripts/gl_typography.py``) on a doctree of its own:
no book build. That the built pages come out joined is
``test_site_truth.test_no_figure_in_prose_is_parted_from_its_percent_sign``."""

from __future__ import annotations

from docutils import nodes

from .building import script_module

EXT = script_module("gl_typography")
NO_BREAK = "\u00a0"


def test_prose_is_joined_and_verbatim_text_is_not() -> None:
    doc = nodes.document(None, None)  # type: ignore[arg-type]
    section = nodes.section("", nodes.title("", "A 70 % step"))
    prose = nodes.paragraph("", "about 80 % of NVLink, 94 % of the network, 50% unspaced")
    code = nodes.paragraph("", "", nodes.literal("", "x = 5 %"))
    shown = [nodes.literal_block("", "print('6.7 %')"), nodes.math("", "3 %"),
             nodes.raw("", "<b>4 %</b>", format="html"), nodes.comment("", "9 %")]
    section += [prose, code, *shown]
    doc += section
    EXT.join_figures(doc)
    assert section[0].astext() == f"A 70{NO_BREAK}% step"
    assert prose.astext() == (f"about 80{NO_BREAK}% of NVLink, 94{NO_BREAK}% of the network, "
                              "50% unspaced")
    assert code.astext() == "x = 5 %"
    assert [n.astext() for n in shown] == ["print('6.7 %')", "3 %", "<b>4 %</b>", "9 %"]
