"""Dollar amounts render as text in the book and in JupyterLab.

Two renderers read a notebook's ``$`` signs. MyST (``dollarmath``) makes math of any
unescaped ``$...$`` pair, so an amount is written ``\\$12.29``. JupyterLab's MathJax
then pairs *any* two ``$`` of one paragraph, escaped or not, and typesets the text between
them, unless the paragraph sits in a ``<div class="mathjax_ignore">`` (which also stops
real math there from being typeset). So, in every notebook's markdown, paragraph by
paragraph (blank-line separated, outside backtick fences and code spans):

* two or more amounts, or an amount next to inline math, need the ``mathjax_ignore`` div;
* a paragraph inside that div holds no inline math (it would show as raw TeX);
* an inline-math span that reads as prose ("$2 per GPU-hour and $3$") is an unescaped
  amount that MyST turned into math.

Lesson 8 (``cost_economics``) introduced the convention; this test holds every notebook to it.
The exercise banks' texts are protected as a whole (``gl-exercise mathjax_ignore``, see
``gpulesson/exercises/render.py``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gpulesson.exercises import load_lesson
from gpulesson.exercises.render import static_html

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted([*REPO.glob("notebooks/*.ipynb"), *REPO.glob("exercises/*.ipynb")])
OPEN_DIV = '<div class="mathjax_ignore">'

_CODE_SPAN = re.compile(r"``.*?``|`[^`]*`", re.S)
_DISPLAY_MATH = re.compile(r"\$\$.*?\$\$", re.S)
_INLINE_MATH = re.compile(r"\$([^$]+)\$")
# three words in a row without a TeX command: prose, not maths
_PROSE = re.compile(r"(?<![\\a-zA-Z])[a-zA-Z]{2,}(?:[ ,-]+[a-zA-Z]{2,}){2,}")


def paragraphs(markdown: str) -> list[tuple[str, bool]]:
    """(paragraph, inside a mathjax_ignore div) for the blank-line separated blocks of a
    markdown cell, backtick fences (code, or directives JupyterLab shows as code) left out."""
    blocks: list[str] = []
    current: list[str] = []
    fence = False
    for line in markdown.split("\n"):
        if line.strip().startswith("```"):
            fence = not fence
        if not line.strip() and not fence:
            if current:
                blocks.append("\n".join(current))
            current = []
            continue
        current.append(line)
    if current:
        blocks.append("\n".join(current))
    out, inside = [], False
    for block in blocks:
        if block.strip() == OPEN_DIV:
            inside = True
        elif block.strip() == "</div>":
            inside = False
        elif not block.lstrip().startswith("```"):
            out.append((block, inside))
    return out


def problems(markdown: str) -> list[str]:
    found = []
    for block, inside in paragraphs(markdown):
        text = _DISPLAY_MATH.sub("", _CODE_SPAN.sub("", block))
        amounts = text.count("\\$")
        bare = text.replace("\\$", "")
        math = bare.count("$")
        start = block.strip()[:70]
        if (amounts >= 2 or (amounts and math)) and not inside:
            found.append(f"dollar amounts outside a mathjax_ignore div: {start!r}")
        if inside and math:
            found.append(f"inline math inside a mathjax_ignore div: {start!r}")
        if math % 2:
            found.append(f"an unescaped, unpaired $ (write \\$): {start!r}")
        for span in _INLINE_MATH.findall(bare):
            if "\\" not in span and _PROSE.search(span):
                found.append(f"prose typeset as math (escape the amounts): ${span[:40]}$")
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[f"{p.parent.name}/{p.stem}" for p in NOTEBOOKS])
def test_dollar_amounts_are_safe_from_both_renderers(path: Path) -> None:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    found = [f"cell {i}: {problem}" for i, cell in enumerate(cells)
             if cell["cell_type"] == "markdown"
             for problem in problems("".join(cell["source"]))]
    assert not found, "\n".join(found)


def test_the_checks_catch_what_they_should() -> None:
    assert problems("About \\$498,000 instead of \\$698,000.")
    assert problems("Lesson 5's $6N$ per token at \\$12.29 an hour.")
    assert problems(f"{OPEN_DIV}\n\nCosts \\$2 and takes $6N$ FLOPs.\n\n</div>")
    assert problems("at an assumed $2 per GPU-hour, change it")
    assert problems("from $0.045 per GPU-hour to $3 per hour")
    assert not problems(f"{OPEN_DIV}\n\nAbout \\$498,000 instead of \\$698,000.\n\n</div>")
    assert not problems("One price, \\$12.29 per hour.\n\nThen $6N$ FLOPs and $2MKN$.")
    assert not problems("```{admonition} Prices\nAbout \\$270,000 and \\$98.32.\n```")
    assert not problems("Code: `cost = price * 2` and `$HOME` are not maths.")


def test_exercise_texts_are_kept_from_mathjax() -> None:
    """Exercise texts quote prices (often two in a solution); their static rendering (what
    a front end without the widget shows) is marked for MathJax to skip as a whole."""
    lesson = load_lesson("cost_economics")
    shown = [static_html(ex) for ex in lesson]
    assert any(html.count("$") >= 2 for html in shown)
    assert all(html.startswith('<div class="gl-exercise mathjax_ignore"') for html in shown)
