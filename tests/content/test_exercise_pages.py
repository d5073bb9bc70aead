"""Every exercise notebook says what is true both in Jupyter and on the site.

On the site each exercise is checked in the browser (``scripts/gl_exercises.py``), so the
cells only a kernel needs are hidden there while the notebook keeps them: the
``load_lesson`` set-up and the progress printout (``remove-cell``), the stub of a code
exercise (``remove-cell``: the page's editor holds it), and the input of each
``lesson.show(N)`` cell (``remove-input``: the exercise is its output). An exercise whose
checker needs a library the browser lacks (a CUDA kernel) stays static on the site, so its
stub stays visible. No text may say
that the site's exercises are static, or tell a reader of the site to run a cell without
saying where. Read from the notebooks, for every lesson with exercises, so a new lesson's
notebook is held to the same rules.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from pathlib import Path

import pytest

from gpulesson.exercises.catalogue import available_lessons, lesson_module

REPO_ROOT = Path(__file__).resolve().parents[2]
SLUGS = available_lessons()


@functools.cache
def _jupyter_only() -> set[str]:
    """Exercises the browser cannot check (their checker needs a library Pyodide lacks):
    on the site they stay static, so their stub stays on the page for the reader."""
    sys.path.insert(0, str(REPO_ROOT / "scripts"))
    import gl_exercises

    return set(gl_exercises.browser_unavailable(gl_exercises.exercise_pack()))


def _cells(slug: str) -> list[dict]:
    notebook = REPO_ROOT / "exercises" / f"{slug}.ipynb"
    return json.loads(notebook.read_text(encoding="utf-8"))["cells"]


def _tags(cell: dict) -> set[str]:
    return set(cell.get("metadata", {}).get("tags", []))


def _source(cell: dict) -> str:
    return "".join(cell["source"])


@pytest.mark.parametrize("slug", SLUGS)
def test_kernel_only_cells_are_hidden_on_the_site(slug: str) -> None:
    functions = {ex.function_name for ex in lesson_module(slug).EXERCISES
                 if ex.kind == "code" and f"{slug}:{ex.number}" not in _jupyter_only()}
    kept = {ex.function_name for ex in lesson_module(slug).EXERCISES
            if ex.kind == "code" and f"{slug}:{ex.number}" in _jupyter_only()}
    wrong = []
    shown = []
    for cell in _cells(slug):
        if cell["cell_type"] != "code":
            continue
        source, tags = _source(cell).strip(), _tags(cell)
        if match := re.fullmatch(r"lesson\.show\((\d+)\)", source):
            shown.append(int(match.group(1)))
            if "remove-input" not in tags:
                wrong.append(f"{cell['id']}: {source} needs remove-input")
        elif "load_lesson(" in source and "reveal" not in source and "remove-cell" not in tags:
            wrong.append(f"{cell['id']}: the load_lesson set-up needs remove-cell")
        elif "lesson.summary()" in source and "remove-cell" not in tags:
            wrong.append(f"{cell['id']}: the progress printout needs remove-cell")
        elif any(re.search(rf"^def {name}\(", source, re.M) for name in functions) and \
                "lesson." not in source and "remove-cell" not in tags:
            wrong.append(f"{cell['id']}: the stub of a code exercise needs remove-cell")
        elif any(re.search(rf"^def {name}\(", source, re.M) for name in kept) and \
                "remove-cell" in tags:
            wrong.append(f"{cell['id']}: the stub of an exercise checked in Jupyter only "
                         "must stay on the page")
    assert not wrong, "\n".join(wrong)
    numbers = [ex.number for ex in lesson_module(slug).EXERCISES]
    assert shown == numbers == list(range(1, len(numbers) + 1)), \
        f"exercises/{slug}.ipynb shows exercises {shown}; the bank has {numbers}: each " \
        "once, in order, numbered from 1"


@pytest.mark.parametrize("slug", SLUGS)
def test_no_text_says_the_site_is_static(slug: str) -> None:
    for cell in _cells(slug):
        if cell["cell_type"] != "markdown" or "remove-cell" in _tags(cell):
            continue
        text = " ".join(_source(cell).split())
        for stale in ("shown without a kernel", "folded away", "answer them interactively",
                      "run the cell, then press"):
            assert stale not in text, f"{cell['id']}: {stale!r} is not true on the site"
        if re.search(r"\bNow run the measurement\b", text):
            assert "website" in text, f"{cell['id']}: says to run a cell, not what the site shows"
