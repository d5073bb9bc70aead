"""Instructor export: student notebooks without solutions, and answer keys.

``python -m gpulesson.exercises export --all --out export/`` (or ``make student``) writes

* ``export/students/<slug>.ipynb``: each lesson's exercise notebook without the cells
  tagged ``solution`` (reference solutions and the hidden checks that use them), without
  outputs, and with a first code cell that switches the exercises to student mode
  (solutions only after a correct answer, and none in the static rendering), for the
  chosen class variant. The notebooks still execute top to bottom. Their Markdown is
  made plain (:mod:`gpulesson.exercises.myst`: no MyST labels or roles, no links to
  lesson notebooks the folder does not hold), and the introduction's "the worked
  solution appears after a correct answer, or when you ask for it" is told the edition's
  mode instead.
* ``export/answer_key/<slug>.md``: questions, answers with their tolerance, worked
  solutions, hints and the recognised mistakes, computed for the same variant.

Standard library only (notebooks are JSON, nbformat 4).
"""

from __future__ import annotations

import copy
import json
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpulesson.exercises.catalogue import available_lessons
from gpulesson.exercises.lesson import Lesson
from gpulesson.exercises.myst import plain_markdown
from gpulesson.exercises.render import answer_key_markdown
from gpulesson.exercises.session import SOLUTION_MODES

__all__ = ["ExportResult", "SOLUTION_TAG", "export", "find_root", "student_notebook"]

#: Cells with this tag are left out of student editions.
SOLUTION_TAG = "solution"
#: Tag of the set-up cell the export adds.
STUDENT_SETUP_TAG = "student-setup"


@dataclass(frozen=True)
class ExportResult:
    """What :func:`export` wrote for one lesson."""

    lesson: str
    student_notebook: Path | None
    answer_key: Path
    removed_cells: int


def find_root(start: Path | None = None) -> Path:
    """The course repository: the first folder from ``start`` upwards with ``exercises/``
    and ``gpulesson/``; the package's own checkout otherwise."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "exercises").is_dir() and (folder / "gpulesson").is_dir():
            return folder
    return Path(__file__).resolve().parents[2]


#: The exercise notebooks' account of the repository's on-request mode.
_ON_REQUEST = re.compile(r"\b([Tt])he\s+worked\s+solution\s+appears\s+after\s+a\s+correct\s+"
                         r"answer,\s+or\s+when\s+you\s+ask\s+for\s+it")
#: What the introduction says instead in a student edition, by mode.
_IN_THIS_EDITION = {"after-correct": "he worked solution appears after a correct answer",
                    "never": "he worked solution is not shown in this edition"}


def _tags(cell: dict[str, Any]) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def _student_markdown(source: str | list[str], solutions: str) -> list[str]:
    """A Markdown cell of a student edition: plain Markdown, its account of when worked
    solutions appear told for ``solutions``."""
    text = source if isinstance(source, str) else "".join(source)
    text = _ON_REQUEST.sub(lambda m: m[1] + _IN_THIS_EDITION[solutions], text)
    return plain_markdown(text).splitlines(keepends=True)


def student_notebook(notebook: dict[str, Any], *, variant: int | None = None,
                     solutions: str = "after-correct") -> tuple[dict[str, Any], int]:
    """A student edition of an exercise notebook (nbformat 4 as a dict).

    Returns the new notebook and how many ``solution`` cells were removed. Outputs,
    execution counts and widget state are cleared; a set-up cell calling
    :func:`gpulesson.exercises.configure` is inserted after the title cell.
    """
    if solutions not in SOLUTION_MODES or solutions == "on-request":
        raise ValueError(f"solutions must be 'after-correct' or 'never' for a student "
                         f"edition, got {solutions!r}")
    if variant is not None and (isinstance(variant, bool) or not isinstance(variant, int)
                                or variant < 0):
        raise ValueError(f"variant must be a non-negative integer or None, got {variant!r}")
    nb = copy.deepcopy(notebook)
    if nb.get("nbformat") != 4 or not isinstance(nb.get("cells"), list):
        raise ValueError("notebook must be nbformat 4 JSON with a list of cells")
    kept = [c for c in nb["cells"] if SOLUTION_TAG not in _tags(c)]
    removed = len(nb["cells"]) - len(kept)
    for cell in kept:
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        elif cell.get("cell_type") == "markdown":
            cell["source"] = _student_markdown(cell.get("source", ""), solutions)
    nb["metadata"].pop("widgets", None)
    which = "the lesson's own numbers" if variant is None else f"class variant {variant}"
    # The repository's notebooks open a solution "when you ask for it" (the on-request
    # mode); a student edition has no such button, and says so here as well as in the
    # introduction (_ON_REQUEST).
    when = ("appear only after a correct answer, not on request"
            if solutions == "after-correct" else "stay hidden, even after a correct answer")
    note = {
        "cell_type": "markdown", "id": _new_id(), "metadata": {"tags": [STUDENT_SETUP_TAG]},
        "source": (f"**Student edition** ({which}). In this edition worked solutions {when}; "
                   "hints are always there. Run the next cell first."),
    }
    setup = {
        "cell_type": "code", "id": _new_id(), "metadata": {"tags": [STUDENT_SETUP_TAG]},
        "execution_count": None, "outputs": [],
        "source": ("# Set by your instructor's export: student mode and the class variant.\n"
                   "from gpulesson.exercises import configure\n"
                   f"configure(solutions={solutions!r}, variant={variant!r})"),
    }
    first_md = next((i for i, c in enumerate(kept) if c.get("cell_type") == "markdown"), -1)
    kept[first_md + 1:first_md + 1] = [note, setup]
    nb["cells"] = kept
    return nb, removed


def _new_id() -> str:
    return uuid.uuid4().hex[:8]


def export(lessons: Iterable[str] | None, out: str | Path, *, root: str | Path | None = None,
           variant: int | None = None, solutions: str = "after-correct") -> list[ExportResult]:
    """Write student notebooks and answer keys for ``lessons`` (``None``: all) into ``out``.

    Raises
    ------
    KeyError
        for a lesson without exercises (the message lists the known ones).
    ValueError
        for a bad ``variant`` or ``solutions``.
    """
    root_path = Path(root) if root is not None else find_root()
    out_path = Path(out)
    slugs = list(lessons) if lessons is not None else available_lessons()
    known = available_lessons()
    for slug in slugs:
        if slug not in known:
            raise KeyError(f"no exercises for lesson {slug!r}; known: {known}")
    results = []
    for slug in slugs:
        lesson = Lesson(slug, variant)
        key_dir = out_path / "answer_key"
        key_dir.mkdir(parents=True, exist_ok=True)
        key = key_dir / f"{slug}.md"
        key.write_text(answer_key_markdown(lesson.exercises, title=lesson.title),
                       encoding="utf-8")
        source = root_path / "exercises" / f"{slug}.ipynb"
        written: Path | None = None
        removed = 0
        if source.is_file():
            notebook = json.loads(source.read_text(encoding="utf-8"))
            student, removed = student_notebook(notebook, variant=variant, solutions=solutions)
            student_dir = out_path / "students"
            student_dir.mkdir(parents=True, exist_ok=True)
            written = student_dir / f"{slug}.ipynb"
            written.write_text(json.dumps(student, indent=1, ensure_ascii=False) + "\n",
                               encoding="utf-8")
        results.append(ExportResult(slug, written, key, removed))
    return results
