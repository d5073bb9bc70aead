"""``README.md``'s layout names every page of ``book/``: a page added there without a word
in the README fails here (the README listed seven of the eleven on 2026-12-06)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

#: Each page of book/ and the words the README's layout uses for it.
README_NAMES = {
    "intro": "intro",
    "how_to_use": "how to use",
    "conventions": "conventions",
    "seed_corrections": "seed\ncorrections",
    "calculators": "calculators",
    "hardware": "GPU specifications",
    "glossary": "glossary",
    "references": "references",
    "instructors": "for instructors",
    "status": "build status",
    "_gpu_note": "the shared GPU note",
}


def _layout_entry(name: str) -> str:
    """The README layout's entry for ``name`` (its continuation lines joined)."""
    layout = re.search(r"## Layout\n\n```\n(.*?)```", (REPO / "README.md").read_text(
        encoding="utf-8"), flags=re.S).group(1)
    entry = re.search(rf"^{re.escape(name)}\s+(.*?)(?=^\S)", layout, flags=re.M | re.S)
    assert entry, f"no {name} entry in the README's layout"
    return re.sub(r"\s+", " ", entry.group(1))


def test_every_book_page_is_in_the_readme() -> None:
    pages = sorted(p.stem for p in (REPO / "book").glob("*.md"))
    assert pages == sorted(README_NAMES), "a page of book/ has no README name here"
    entry = _layout_entry("book/")
    missing = [stem for stem, words in README_NAMES.items()
               if re.sub(r"\s+", " ", words) not in entry]
    assert not missing, f"README's layout leaves out book/ pages: {missing}: {entry!r}"
