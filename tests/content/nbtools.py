"""Reading a lesson's notebooks without running them, and the checks every lesson shares.

Each ``tests/content/test_<slug>.py`` uses these for what the house style asks of every
lesson page (``CONTRIBUTING.md``, "Notebooks") and keeps only its own figures and
expectations: which headings, terms, citations and calculators, how many prompts and
hidden asserts, which pinned figures. The checks raise ``AssertionError`` naming what is
missing, so a test that calls one fails where the page breaks its promise.

The table of contents (every notebook listed, in course order, exercises right after their
lesson) is checked once for all lessons in ``tests/site/test_site_config.py``, and clean
notebooks (no outputs, execution counts or widget state) in
``tests/content/test_notebook_hygiene.py``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import ModuleType

from gpulesson import calculators
from gpulesson.exercises import lesson_module

REPO = Path(__file__).resolve().parents[2]

#: The headings every lesson page has (the house style's skeleton).
SKELETON_HEADINGS = ("## What you'll learn", "## What you need", "## Key takeaways",
                     "## Key terms", "## Exercises")
GPU_NOTE = "```{include} ../book/_gpu_note.md\n```"

_PAUSE = re.compile(r"::::\{admonition\} Pause and think\n(.*?)\n::::", re.S)
_ANSWER = re.compile(r"^:::\{admonition\} Answer\n:class: dropdown\n(.*?)^:::$", re.S | re.M)
_TERM = re.compile(r"\{term\}`([^`<]+?)(?:\s*<([^>]+)>)?`")
_CITE = re.compile(r"\{cite(?::[a-z]+)?\}`([^`]+)`")
_BIB_KEY = re.compile(r"^@\w+\{([^,]+),", re.M)
_WIDGET = re.compile(r'calculator_widget\("([a-z_]+)"')
_SHOW = re.compile(r"lesson\.show\((\d+)\)")


# ---------------------------------------------------------------------------------------
# Reading


def notebook(slug: str) -> Path:
    """The lesson notebook ``notebooks/<slug>.ipynb``."""
    return REPO / "notebooks" / f"{slug}.ipynb"


def exercise_notebook(slug: str) -> Path:
    """The lesson's exercise notebook ``exercises/<slug>.ipynb``."""
    return REPO / "exercises" / f"{slug}.ipynb"


def cells(path: Path) -> list[dict]:
    """The cells of a notebook file, as stored."""
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def markdown(path: Path) -> str:
    """Every markdown cell's source, in order, separated by a blank line."""
    return "\n\n".join("".join(c["source"]) for c in cells(path) if c["cell_type"] == "markdown")


def code_cells(path: Path) -> list[tuple[str, list[str]]]:
    """(source, tags) of every code cell, in order."""
    return [("".join(c["source"]), c.get("metadata", {}).get("tags", []))
            for c in cells(path) if c["cell_type"] == "code"]


def code(path: Path, *, hidden: bool | None = None) -> list[str]:
    """The code cells' sources: all of them, only the hidden ones (tagged ``remove-cell``,
    ``hidden=True``) or only the visible ones (``hidden=False``)."""
    return [src for src, tags in code_cells(path)
            if hidden is None or hidden == ("remove-cell" in tags)]


def pause_and_think(text: str) -> list[str]:
    """The body of every "Pause and think" admonition of a page's markdown."""
    return _PAUSE.findall(text)


def terms_used(text: str) -> set[str]:
    """The glossary entries that ``{term}`` roles point at (the target of ``text <target>``)."""
    return {m.group(2) or m.group(1) for m in _TERM.finditer(text)}


def glossary_terms() -> set[str]:
    """The terms ``book/glossary.md`` defines, lower-cased: the unindented lines of its
    ``{glossary}`` block, directive options and MyST comments left out."""
    text = (REPO / "book" / "glossary.md").read_text(encoding="utf-8")
    block = text.split("```{glossary}", 1)[1]
    return {line.strip().lower() for line in block.splitlines()
            if line and not line.startswith((" ", ":", "`", "%"))}


def cited_keys(text: str) -> set[str]:
    """The bibliography keys that ``{cite}``, ``{cite:p}`` or ``{cite:t}`` roles name."""
    return {key.strip() for group in _CITE.findall(text) for key in group.split(",")}


def bib_keys() -> set[str]:
    """The entry keys of ``book/references.bib``."""
    return set(_BIB_KEY.findall((REPO / "book" / "references.bib").read_text(encoding="utf-8")))


def widgets_used(path: Path) -> set[str]:
    """The registry calculators a notebook shows with ``calculator_widget("NAME")``."""
    return set(_WIDGET.findall("\n".join(code(path))))


# ---------------------------------------------------------------------------------------
# Checks


def check_skeleton(slug: str, title: str, *, headings: tuple[str, ...] = (),
                   path: Path | None = None, set_up: bool = False) -> str:
    """The house-style skeleton: label and title first, the shared GPU note included, the
    skeleton's headings (and ``headings``), the link to the exercise notebook, which
    exists. With ``set_up``, a lesson that measures: a ``## Set-up`` section, and a first
    code cell that picks the device (:func:`check_first_cell_picks_the_device`). Returns
    the page's markdown."""
    page = path or notebook(slug)
    text = markdown(page)
    assert text.startswith(f"({slug})=\n# {title}\n"), text[:80]
    assert GPU_NOTE in text, "the shared GPU note is not included"
    for heading in (*SKELETON_HEADINGS, *(("## Set-up",) if set_up else ()), *headings):
        assert heading in text, heading
    assert f"(../exercises/{slug}.ipynb)" in text, "no link to the exercise notebook"
    assert exercise_notebook(slug).is_file()
    if set_up:
        check_first_cell_picks_the_device(page)
    return text


def check_first_cell_picks_the_device(path: Path) -> None:
    """The first code cell picks the device and says which it is."""
    first = code(path)[0]
    assert "get_device()" in first and "dev.describe()" in first, first[:80]


def check_pauses_hide_answers(text: str, *, at_least: int) -> list[str]:
    """At least ``at_least`` "Pause and think" prompts, each with a non-empty answer in a
    collapsed ``Answer`` dropdown. Returns the prompts."""
    blocks = pause_and_think(text)
    assert len(blocks) >= at_least, f"{len(blocks)} Pause and think prompts"
    for block in blocks:
        answer = _ANSWER.search(block)
        assert answer, f"no collapsed answer: {block[:80]}"
        assert answer.group(1).strip(), f"empty answer: {block[:80]}"
    return blocks


def check_registry_widgets(slug: str, expected: set[str], *, path: Path | None = None) -> None:
    """The page's calculator widgets are exactly ``expected``, registry entries of this
    lesson, in cells whose output nbval does not compare."""
    path = path or notebook(slug)
    used = widgets_used(path)
    assert used == expected, used
    for name in used:
        assert calculators.get(name).lesson == slug, name
    for src, tags in code_cells(path):
        if "calculator_widget(" in src:
            assert "nbval-ignore-output" in tags, src[:60]


def check_terms_in_glossary(text: str) -> set[str]:
    """Every ``{term}`` of ``text`` is defined in ``book/glossary.md``; returns the terms."""
    terms = terms_used(text)
    defined = glossary_terms()
    missing = sorted(t for t in terms if t.strip().lower() not in defined)
    assert not missing, f"add to book/glossary.md: {missing}"
    return terms


def check_citations_in_bibliography(text: str) -> set[str]:
    """Every key ``text`` cites is in ``book/references.bib``; returns the cited keys."""
    cited = cited_keys(text)
    missing = sorted(cited - bib_keys())
    assert not missing, f"add to book/references.bib: {missing}"
    return cited


def check_exercise_notebook(slug: str, *, path: Path | None = None) -> list[str]:
    """The exercise notebook: labelled ``(<slug>_exercises)=``, loads the lesson's bank and
    shows every exercise once, in order. Returns its code cells' sources."""
    path = path or exercise_notebook(slug)
    bank: ModuleType = lesson_module(slug)
    sources = code(path)
    shown = [int(n) for n in _SHOW.findall("\n".join(sources))]
    numbers = [ex.number for ex in bank.EXERCISES]
    assert shown == numbers == list(range(1, len(numbers) + 1)), shown
    assert markdown(path).startswith(f"({slug}_exercises)=")
    assert any(f'load_lesson("{slug}")' in src for src in sources)
    return sources
