"""A new lesson in one command: ``make lesson SLUG=<slug> TITLE="<title>"``.

Copies the skeleton lesson of ``scripts/lesson_skeleton/`` (itself a minimal lesson of the
house style: label, GPU note, what you'll learn and need, one section whose worked number
is a claim, one calculator, one exercise, key takeaways and key terms) under the new slug
and title, and lists the lesson everywhere the course lists its lessons:

* ``notebooks/<slug>.ipynb`` and ``exercises/<slug>.ipynb``;
* ``gpulesson/exercises/bank/<slug>.py`` and ``gpulesson/calculators/lessons/<slug>.py``
  (its calculator is ``<slug>_weights``);
* ``tests/content/test_<slug>.py``, the content test every lesson must have;
* the lesson's entry at the end of :data:`gpulesson.course.LESSONS`, its two lines in
  ``_toc.yml``, its line in ``book/intro.md``'s list (``--question``: the question it
  answers) and its study-time row in ``book/how_to_use.md``, computed from the new lesson
  by ``tests/content/study_time.py``.

Nothing is overwritten: a slug, title or calculator name the course already has, or a file
that exists, stops the command before it writes anything. ``--root`` writes into another
copy of the repository (the tests do).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKELETON = Path(__file__).resolve().parent / "lesson_skeleton"
#: The skeleton's own slug and title, replaced by the new lesson's.
SKELETON_SLUG = "skeleton_lesson"
SKELETON_TITLE = "Skeleton Lesson"
#: The question the skeleton answers, for ``book/intro.md`` unless ``--question`` says.
SKELETON_QUESTION = "how much memory do a model's weights take?"
#: What the study-time table of ``book/how_to_use.md`` says of the skeleton's measurements.
SKELETON_MEASURES = "it counts bytes: no figure varies from run to run"
_SLUG = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
_LESSONS_END = "    ), start=1)\n)"
_LESSON_ITEM = re.compile(r"^\d+\. \{doc\}`/notebooks/[a-z0-9_]+`", re.M)
_STUDY_ROW = re.compile(r"^\| \{doc\}`/notebooks/[a-z0-9_]+` \| about \d+ min \|.*$", re.M)


def skeleton_files() -> list[Path]:
    """The skeleton's files, relative to ``scripts/lesson_skeleton/`` (the repository's
    layout)."""
    return sorted(p.relative_to(SKELETON) for p in SKELETON.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts)


def _target(relative: Path, slug: str) -> Path:
    return relative.with_name(relative.name.replace(SKELETON_SLUG, slug))


def _renamed(text: str, slug: str, title: str, suffix: str) -> str:
    """The skeleton's ``text`` under the new slug and title (the cells' text of a
    notebook; in a ``.py`` file the title stands only in prose: a bank reads it with
    ``course.title``)."""
    if suffix == ".ipynb":
        notebook = json.loads(text)
        for cell in notebook["cells"]:
            source = "".join(cell["source"]).replace(SKELETON_SLUG, slug)
            cell["source"] = source.replace(SKELETON_TITLE, title).splitlines(keepends=True)
        return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"
    return text.replace(SKELETON_SLUG, slug).replace(SKELETON_TITLE, title)


def refuse(root: Path, slug: str, title: str, question: str) -> list[str]:
    """Why the lesson cannot be added as asked; empty when it can."""
    sys.path.insert(0, str(root))
    from gpulesson import calculators, course

    problems = []
    if not _SLUG.fullmatch(slug):
        problems.append(f"SLUG {slug!r} must be lower-case words joined by '_' (a file name "
                        "and a Python module), e.g. kv_offload")
    if slug in course.SLUGS:
        problems.append(f"SLUG {slug!r} is already lesson {course.number(slug)}")
    if f"{slug}_weights" in calculators.CALCULATORS:
        problems.append(f"the calculator {slug}_weights exists already")
    if not title.strip() or "\n" in title:
        problems.append(f"TITLE {title!r} must be one non-empty line")
    if title in {info.title for info in course.LESSONS}:
        problems.append(f"TITLE {title!r} is another lesson's")
    if not question.endswith("?") or "\n" in question:
        problems.append(f"QUESTION {question!r} must be one line ending with '?'")
    first = question.split(" ", 1)[0]
    if first[:1].isupper() and first[1:].islower():
        problems.append(f"QUESTION {question!r} must start in lower case: book/intro.md lists "
                        "each lesson as '<n>. <lesson>: how ...?' (a name such as GPU or "
                        "FlashAttention may start it)")
    problems += [f"{path} exists already" for path in
                 (_target(p, slug) for p in skeleton_files()) if (root / path).exists()]
    return problems


def add_to_course(text: str, slug: str, title: str) -> str:
    """``gpulesson/course.py`` with the lesson appended to ``LESSONS``."""
    if text.count(_LESSONS_END) != 1:
        raise ValueError("gpulesson/course.py: LESSONS no longer ends with "
                         f"{_LESSONS_END!r}; add the entry by hand")
    entry = f"        ({json.dumps(slug)}, {json.dumps(title, ensure_ascii=False)}),\n"
    return text.replace(_LESSONS_END, entry + _LESSONS_END)


def add_to_toc(text: str, slug: str) -> str:
    """``_toc.yml`` with the lesson and its exercises after the last lesson's exercises."""
    last = list(re.finditer(r"^( +)- file: exercises/[a-z0-9_]+\n", text, re.M))
    if not last:
        raise ValueError("_toc.yml lists no exercise notebook to add the lesson after")
    indent, end = last[-1].group(1), last[-1].end()
    lines = f"{indent}- file: notebooks/{slug}\n{indent}- file: exercises/{slug}\n"
    return text[:end] + lines + text[end:]


def add_to_intro(text: str, slug: str, number: int, question: str) -> str:
    """``book/intro.md`` with the lesson's item at the end of the list of lessons."""
    items = list(_LESSON_ITEM.finditer(text))
    if not items:
        raise ValueError("book/intro.md has no list of lessons to add to")
    end = text.find("\n\n", items[-1].start())
    marker = f"{number}. "
    item = textwrap.fill(f"{marker}{{doc}}`/notebooks/{slug}`: {question}", width=92,
                         subsequent_indent=" " * len(marker), break_on_hyphens=False)
    return text[:end] + "\n" + item + text[end:]


def add_study_row(text: str, slug: str, minutes: int) -> str:
    """``book/how_to_use.md`` with the lesson's row at the end of the study-time table."""
    rows = list(_STUDY_ROW.finditer(text))
    if not rows:
        raise ValueError("book/how_to_use.md has no study-time table to add to")
    row = f"| {{doc}}`/notebooks/{slug}` | about {minutes} min | {SKELETON_MEASURES} |"
    return text[:rows[-1].end()] + "\n" + row + text[rows[-1].end():]


def study_minutes(root: Path, slug: str) -> int:
    """The new lesson's study time, as ``tests/content/study_time.py`` computes it (in a
    process of its own, which imports the course as it is now written)."""
    code = ("from tests.content.study_time import study_minutes; "
            f"print(study_minutes({slug!r}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=root, check=True,
                         capture_output=True, text=True)
    return int(out.stdout.strip())


def _edit(path: Path, change) -> None:
    path.write_text(change(path.read_text(encoding="utf-8")), encoding="utf-8")


def new_lesson(root: Path, slug: str, title: str, question: str) -> list[Path]:
    """Write the lesson into the repository at ``root``; the paths written, relative."""
    problems = refuse(root, slug, title, question)
    if problems:
        raise SystemExit("make lesson: " + "; ".join(problems))
    from gpulesson import course

    number = len(course.LESSONS) + 1
    written = []
    for relative in skeleton_files():
        target = _target(relative, slug)
        text = (SKELETON / relative).read_text(encoding="utf-8")
        (root / target).parent.mkdir(parents=True, exist_ok=True)
        (root / target).write_text(_renamed(text, slug, title, relative.suffix),
                                   encoding="utf-8")
        written.append(target)
    edits = {
        Path("gpulesson/course.py"): lambda t: add_to_course(t, slug, title),
        Path("_toc.yml"): lambda t: add_to_toc(t, slug),
        Path("book/intro.md"): lambda t: add_to_intro(t, slug, number, question),
    }
    for relative, change in edits.items():
        _edit(root / relative, change)
    minutes = study_minutes(root, slug)
    _edit(root / "book/how_to_use.md", lambda t: add_study_row(t, slug, minutes))
    return written + [*edits, Path("book/how_to_use.md")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("slug", help="the lesson's file name, e.g. kv_offload")
    parser.add_argument("title", help="the lesson's title, as its page heading reads")
    parser.add_argument("--question", default=SKELETON_QUESTION,
                        help="the question the lesson answers, for book/intro.md's list: "
                             "lower case, ending with '?'")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository to write to")
    args = parser.parse_args(argv)
    for path in new_lesson(args.root.resolve(), args.slug, args.title, args.question):
        print(f"wrote {path}")
    print(f"Lesson {args.slug!r} added. Grow it from the skeleton, and keep "
          f"tests/content/test_{args.slug}.py passing: every figure its prose states is a "
          "claim.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
