"""A lesson that mentions another lesson links to it.

"Lesson 6" or "the first lesson" in a notebook's markdown is a link
(``[lesson 6](inference_and_kv_cache.ipynb)``), which works both in JupyterLab (a
relative link opens the notebook) and in the book (MyST turns it into a document
reference that ``-W -n`` checks). A lesson's mention of its own number is left alone, and
every relative link to a notebook must point at one that exists.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gpulesson import course

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted([*REPO.glob("notebooks/*.ipynb"), *REPO.glob("exercises/*.ipynb")])
SLUGS = course.SLUGS

_SKIP = re.compile(r"\{[a-z:]+\}`[^`]*`|`[^`]*`|\[[^\]]*\]\([^)]*\)|\$[^$\n]*\$|<[^>]+>")
_MENTION = re.compile(r"\b[Ll]esson ([1-9])\b|\b[Tt]he first lesson\b")
_LINK = re.compile(r"\[[^\]]*\]\(([^)#\s]+\.ipynb)(?:#[^)]*)?\)")


def _markdown_lines(path: Path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [line for cell in cells if cell["cell_type"] == "markdown"
            for line in "".join(cell["source"]).splitlines()
            if not line.lstrip().startswith("```")]


def unlinked_mentions(lines: list[str], own: int | None) -> list[str]:
    found = []
    for line in lines:
        for match in _MENTION.finditer(_SKIP.sub(lambda m: " " * len(m.group(0)), line)):
            number = int(match.group(1)) if match.group(1) else 1
            if number != own:
                found.append(line.strip()[:90])
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[f"{p.parent.name}/{p.stem}" for p in NOTEBOOKS])
def test_mentions_of_other_lessons_are_links(path: Path) -> None:
    own = SLUGS.index(path.stem) + 1 if path.parent.name == "notebooks" else None
    lines = _markdown_lines(path)
    assert not unlinked_mentions(lines, own), unlinked_mentions(lines, own)
    for line in lines:
        for target in _LINK.findall(line):
            if "://" not in target:
                assert (path.parent / target).resolve().is_file(), (path.name, target)


def test_the_check_sees_plain_and_linked_mentions() -> None:
    assert unlinked_mentions(["the decode step of lesson 6, shortened"], own=7)
    assert unlinked_mentions(["the chatbot of the first lesson"], own=9)
    assert not unlinked_mentions(["of [lesson 6](inference_and_kv_cache.ipynb), shortened"], 7)
    assert not unlinked_mentions(["as in lesson 6 earlier"], own=6)
    assert not unlinked_mentions(["see `lesson 6` in code", "{ref}`lesson 6 <x>`"], own=7)
