"""The book's reference pages, checked without building the book.

* ``book/seed_corrections.md``: one section per lesson that corrects a seed claim (every
  lesson that links the page), in course order, each linking its lesson, every
  table row with the seed's claim, the course's figure and a source column, and under
  every table a folded block of the calculator calls behind it; the numbers themselves
  are recomputed, and the calls run, by ``tests/content/test_seed_corrections_page.py``.
* ``book/conventions.md``: a section with a worked example for each convention of the
  accuracy brief, naming the lessons that use it and linking the corrections.
* ``book/intro.md`` lists the lessons in course order, each with its question;
  ``book/how_to_use.md`` covers self-study, classes, GPUs, Binder and Colab.
* ``book/glossary.md`` defines every ``{term}`` the course links.
* Dollar signs are escaped on every reference page: MyST pairs bare ``$`` into inline
  maths, which turns a sentence with two prices into a formula. ``{doc}`` links point at
  files that exist.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gpulesson import course

REPO = Path(__file__).resolve().parents[2]
BOOK = REPO / "book"
PAGES = ("seed_corrections", "conventions", "glossary", "intro", "how_to_use")


SLUGS = list(course.SLUGS)


def page(name: str) -> str:
    return (BOOK / f"{name}.md").read_text(encoding="utf-8")


def prose(markdown: str) -> str:
    """The page without fenced code blocks and inline code, where ``$`` is literal."""
    without_fences = re.sub(r"^(```|~~~).*?^\1", "", markdown, flags=re.M | re.S)
    return re.sub(r"`[^`\n]*`", "", without_fences)


def sections(markdown: str) -> dict[str, str]:
    """``## `` heading -> the text up to the next one."""
    parts = re.split(r"^## (.+)$", markdown, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def table_rows(markdown: str) -> list[list[str]]:
    """The body rows of the pipe tables in ``markdown``, split into cells."""
    rows = []
    for line in markdown.splitlines():
        if line.startswith("|") and not re.match(r"^\|\s*-{3}", line):
            cells = [c.strip() for c in re.split(r"(?<![\\`])\|", line.strip())[1:-1]]
            rows.append(cells)
    return [r for r in rows if r[0] != "The seed says"]


@pytest.mark.parametrize("name", PAGES)
def test_dollar_signs_are_escaped(name: str) -> None:
    text = prose(page(name))
    bare = [m.start() for m in re.finditer(r"(?<!\\)\$", text)]
    assert not bare, (
        f"book/{name}.md has unescaped $ (write \\$): "
        + "; ".join(text[max(0, i - 20):i + 20].replace("\n", " ") for i in bare[:5]))


def test_prose_helper_keeps_text_and_drops_code() -> None:
    assert prose("a \\$1 `x = $2` b\n```python\ny = '$3'\n```\n") == "a \\$1  b\n\n"


def _seed_correction_lessons() -> list[str]:
    """The lesson each section of ``book/seed_corrections.md`` links, in page order."""
    linked = [re.search(r"\{doc\}`/notebooks/([a-z0-9_]+)`", body)
              for body in sections(page("seed_corrections")).values()]
    return [m.group(1) for m in linked if m]


def test_seed_corrections_has_one_section_per_lesson_in_order() -> None:
    """One section per lesson that corrects a seed claim, in course order, headed with the
    lesson's number; every lesson that links the page has its section (a lesson the seed
    pages never covered, such as a new one, needs none)."""
    text = page("seed_corrections")
    lessons = _seed_correction_lessons()
    assert len(lessons) == len(sections(text))
    assert lessons == [slug for slug in SLUGS if slug in lessons]
    assert [int(re.match(r"Lesson (\d+):", h).group(1)) for h in sections(text)] == \
        [course.number(slug) for slug in lessons]
    linking = [slug for slug in SLUGS if re.search(
        r"\{ref\}`(?:[^`<]*<)?seed_corrections", (REPO / course.lesson(slug).notebook)
        .read_text(encoding="utf-8"))]
    assert set(linking) <= set(lessons), "a lesson links seed_corrections but has no section"


def test_seed_corrections_rows_name_claim_value_and_source() -> None:
    rows = table_rows(page("seed_corrections"))
    assert len(rows) >= 50, "every seed claim the lessons correct belongs on the page"
    for cells in rows:
        assert len(cells) == 3, cells
        claim, course, source = cells
        assert claim and len(course) > 10, cells
        assert source == "–" or "{cite" in source or "datasheets" in source, cells


def test_seed_corrections_each_table_has_its_calculator_calls() -> None:
    """Under every table, a folded admonition with the calls that compute its figures
    (``tests/content/test_seed_corrections_page.py`` runs them)."""
    for heading, body in sections(page("seed_corrections")).items():
        assert body.count("| The seed says |") == 1, heading
        calls = re.search(r"```\{admonition\} Calculator calls\n:class: dropdown\n\n"
                          r"~~~python\n(.+?)~~~\n```", body, flags=re.S)
        assert calls and "(" in calls.group(1), f"no calculator calls under {heading!r}"
        assert body.index("| The seed says |") < calls.start(), heading


def test_seed_corrections_groups_each_have_a_label() -> None:
    text = page("seed_corrections")
    labels = re.findall(r"^\((seed_corrections_[a-z]+)\)=\n## ", text, flags=re.M)
    assert len(labels) == len(_seed_correction_lessons()) == len(set(labels))


def test_conventions_cover_accuracy_md_and_link_lessons_and_corrections() -> None:
    """Each convention of the accuracy brief has a section with a worked example, the
    lessons that use it and, where the seed pages broke it, the corrections."""
    text = page("conventions")
    body = sections(text)
    topics = ("FLOPs are a count", "Dense, not sparse", "GB is 10⁹ bytes", "Bandwidth",
              "Bytes per parameter", "KV cache", "6N per token")
    for topic in topics:
        assert any(topic in heading for heading in body), f"no section on {topic!r}"
    for heading, section in body.items():
        assert "**Worked example.**" in section, heading
        used = re.search(r"\*\*Used in\*\* (.+?)\.(?:\s|$)", section, flags=re.S)
        assert used, f"{heading!r} does not say which lessons use it"
        lessons = re.findall(r"\{doc\}`/notebooks/([a-z0-9_]+)`", used.group(1))
        assert lessons and set(lessons) <= set(SLUGS), heading
    assert "{ref}`seed_corrections`" in text


def test_cross_links_to_seed_corrections_resolve() -> None:
    labels = set(re.findall(r"^\(([a-z_]+)\)=", page("seed_corrections"), flags=re.M))
    for name in PAGES:
        for target in re.findall(r"<(seed_corrections[a-z_]*)>`", page(name)):
            assert target in labels, f"book/{name}.md links to missing label {target!r}"


def test_intro_lists_the_lessons_each_with_its_question() -> None:
    items = re.findall(r"^(\d+)\. \{doc\}`/notebooks/([a-z0-9_]+)`: (.+?)(?=^\d+\. |^\n|\Z)",
                       page("intro"), flags=re.M | re.S)
    assert [slug for _, slug, _ in items] == SLUGS
    assert [int(n) for n, _, _ in items] == list(range(1, len(SLUGS) + 1))
    for _, slug, question in items:
        assert question.rstrip().endswith("?"), f"{slug}: say which question it answers"
        assert len(" ".join(question.split())) < 150, f"{slug}: one line each"


def test_how_to_use_covers_each_way_of_taking_the_course() -> None:
    headings = " | ".join(sections(page("how_to_use")))
    for topic in ("your own computer", "on your own", "class", "GPU", "Binder and Colab"):
        assert topic in headings, f"how_to_use has no section on {topic!r}"
    text = page("how_to_use")
    assert "GPULESSON_DEVICE" in text and "make student" in text


@pytest.mark.parametrize("name", PAGES)
def test_doc_links_point_at_files_that_exist(name: str) -> None:
    """A ``{doc}`` link to a page that is not in the repository breaks the build (-n):
    link a page only once it exists (the instructors' page, for example)."""
    for target in re.findall(r"\{doc\}`(?:[^`<]*<)?([^`>]+)>?`", page(name)):
        path = REPO / target.lstrip("/") if target.startswith("/") else BOOK / target
        assert any(path.with_suffix(s).is_file() for s in (".md", ".ipynb")), (name, target)


def _glossary_entries() -> set[str]:
    block = page("glossary").split("```{glossary}", 1)[1].split("\n```", 1)[0]
    return {line.strip().lower() for line in block.splitlines()
            if line and not line.startswith((" ", ":"))}


def test_every_term_the_course_links_is_in_the_glossary() -> None:
    """``{term}`` roles in lessons, exercise notebooks, banks and book pages all resolve
    (a missing term fails the book build)."""
    sources = list((REPO / "notebooks").glob("*.ipynb"))
    sources += list((REPO / "exercises").glob("*.ipynb"))
    sources += list((REPO / "gpulesson" / "exercises").rglob("*.py"))
    sources += list(BOOK.glob("*.md"))
    entries = _glossary_entries()
    missing = set()
    for source in sources:
        text = source.read_text(encoding="utf-8")
        if source.suffix == ".ipynb":
            text = "\n".join("".join(c["source"]) for c in json.loads(text)["cells"])
        for role in re.findall(r"\{term\}`([^`]+)`", text):
            explicit = re.match(r".*<(.+)>\s*$", role, flags=re.S)
            term = " ".join((explicit.group(1) if explicit else role).split()).lower()
            if term not in entries:
                missing.add((source.relative_to(REPO).as_posix(), term))
    assert not missing, f"add to book/glossary.md: {sorted(missing)}"
    assert "scaling efficiency" in entries and "subnormal number" in entries
