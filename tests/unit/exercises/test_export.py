"""gpulesson.exercises.export: student notebooks without solutions that still execute, and
answer keys."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup
from nbclient import NotebookClient

from gpulesson import course
from gpulesson.exercises import load_lesson
from gpulesson.exercises.export import (
    SOLUTION_TAG,
    STUDENT_SETUP_TAG,
    export,
    find_root,
    student_notebook,
)
from gpulesson.exercises.myst import plain_markdown

ROOT = Path(__file__).resolve().parents[3]
SLUG = "parallelism_at_the_core"
SECRET = "# reference solution: the student edition must not contain this cell"


def _tiny_notebook() -> dict:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Title"),
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_code_cell("secret = 'the answer is 42'"),
        nbformat.v4.new_code_cell("y = x + 1"),
    ]
    nb.cells[2].metadata["tags"] = [SOLUTION_TAG, "remove-cell"]
    nb.cells[3].outputs = [nbformat.v4.new_output("stream", text="2\n")]
    nb.cells[3].execution_count = 3
    nb.metadata["widgets"] = {"state": {}}
    return json.loads(nbformat.writes(nb))


def test_student_notebook_drops_solution_cells_outputs_and_widget_state():
    student, removed = student_notebook(_tiny_notebook(), variant=4)
    assert removed == 1
    assert "the answer is 42" not in json.dumps(student)
    assert "widgets" not in student["metadata"]
    for cell in student["cells"]:
        assert SOLUTION_TAG not in cell.get("metadata", {}).get("tags", [])
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None
    # a note and a set-up cell come right after the title: student mode and the variant
    assert "".join(student["cells"][0]["source"]) == "# Title"
    assert [c["metadata"]["tags"] for c in student["cells"][1:3]] == [[STUDENT_SETUP_TAG]] * 2
    assert "class variant 4" in student["cells"][1]["source"]
    assert "configure(solutions='after-correct', variant=4)" in student["cells"][2]["source"]
    nbformat.validate(nbformat.reads(json.dumps(student), as_version=4))


@pytest.mark.parametrize(("solutions", "says", "never_says"), [
    ("after-correct", "only after a correct answer, not on request", "ask"),
    ("never", "stay hidden, even after a correct answer", "not at all")])
def test_student_note_overrides_the_on_request_introduction(solutions, says, never_says):
    # Every exercise notebook's introduction says the worked solution appears "after a
    # correct answer, or when you ask for it"; a student edition has no button to ask, and
    # with --solutions never the note read "Worked solutions appear not at all".
    intro = "".join(json.loads((ROOT / "exercises" / f"{SLUG}.ipynb").read_text())
                    ["cells"][0]["source"])
    assert "when you ask for it" in intro.replace("\n", " ")
    student, _ = student_notebook(_tiny_notebook(), solutions=solutions)
    note = student["cells"][1]["source"]
    assert "In this edition" in note and says in note, note
    assert never_says not in note, note


@pytest.mark.parametrize("kwargs, words", [({"solutions": "on-request"}, "solutions"),
                                           ({"variant": -1}, "variant"),
                                           ({"variant": True}, "variant")])
def test_student_notebook_refuses_bad_options(kwargs, words):
    with pytest.raises(ValueError, match=words):
        student_notebook(_tiny_notebook(), **kwargs)


def test_student_notebook_refuses_what_is_not_nbformat_4():
    with pytest.raises(ValueError, match="nbformat 4"):
        student_notebook({"nbformat": 3, "cells": [], "metadata": {}})


def test_export_unknown_lesson_names_the_known_ones(tmp_path):
    with pytest.raises(KeyError, match=SLUG):
        export(["no_such_lesson"], tmp_path, root=ROOT)


@pytest.fixture(scope="module")
def course_root(tmp_path_factory) -> Path:
    """A copy of the course's exercise notebook with a reference-solution cell added."""
    root = tmp_path_factory.mktemp("course")
    (root / "exercises").mkdir()
    nb = nbformat.read(ROOT / "exercises" / f"{SLUG}.ipynb", as_version=4)
    cell = nbformat.v4.new_code_cell(f"{SECRET}\ndef matmul_flops(m, k, n):\n"
                                     "    return 2 * m * k * n")
    cell.metadata["tags"] = [SOLUTION_TAG, "remove-cell"]
    nb.cells.append(cell)
    nbformat.write(nb, root / "exercises" / f"{SLUG}.ipynb")
    return root


@pytest.fixture(scope="module")
def exported(course_root, tmp_path_factory):
    out = tmp_path_factory.mktemp("export")
    source = nbformat.read(course_root / "exercises" / f"{SLUG}.ipynb", as_version=4)
    tagged = [c for c in source.cells if SOLUTION_TAG in c.metadata.get("tags", [])]
    results = export([SLUG], out, root=course_root, variant=3)
    assert [(r.lesson, r.removed_cells) for r in results] == [(SLUG, len(tagged))]
    assert results[0].student_notebook == out / "students" / f"{SLUG}.ipynb"
    assert results[0].answer_key == out / "answer_key" / f"{SLUG}.md"
    return out


def test_export_writes_a_student_notebook_without_solutions(exported):
    text = (exported / "students" / f"{SLUG}.ipynb").read_text(encoding="utf-8")
    nb = nbformat.reads(text, as_version=4)
    assert not [c for c in nb.cells if SOLUTION_TAG in c.metadata.get("tags", [])]
    assert SECRET not in text
    for ex in load_lesson(SLUG).code_exercises():
        assert ex.model_solution_source() not in text
    assert "variant=3" in text


def test_exported_student_notebook_executes_and_shows_no_solutions(exported, tmp_path):
    nb = nbformat.read(exported / "students" / f"{SLUG}.ipynb", as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    shown = [o.get("data", {}).get("text/html", "") for c in nb.cells if c.cell_type == "code"
             for o in c.get("outputs", [])]
    exercises = [h for h in shown if 'class="gl-exercise ' in h]
    assert len(exercises) == len(load_lesson(SLUG))
    for markup in exercises:
        soup = BeautifulSoup(markup, "html.parser")
        assert soup.find(class_="gl-solution") is None and soup.find(class_="gl-answer") is None
        assert soup.find(class_="gl-solution-withheld") is not None
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
    assert not (tmp_path / ".gpulesson-progress.json").exists()  # nothing was answered


def test_answer_key_has_every_answer_for_the_variant(exported):
    key = (exported / "answer_key" / f"{SLUG}.md").read_text(encoding="utf-8")
    lesson = load_lesson(SLUG, variant=3)
    assert key.startswith("# Answer key: Parallelism at the Core")
    assert "Variant seed: 3" in key
    for ex in lesson:
        assert f"## Exercise {ex.number}: {ex.title_text()}" in key
        if ex.kind in ("numeric", "choice"):
            assert ex.answer_text() in key
        for mistake in ex.mistakes:
            assert f"`{mistake.key}`" in key
    for ex in lesson.code_exercises():
        assert ex.model_solution_source() in key


def test_a_lesson_without_an_exercise_notebook_gets_its_answer_key(tmp_path):
    (tmp_path / "course").mkdir()
    [result] = export([SLUG], tmp_path / "out", root=tmp_path / "course")
    assert result.student_notebook is None and result.removed_cells == 0
    assert result.answer_key.read_text(encoding="utf-8").startswith("# Answer key:")


def test_find_root_finds_the_repository(tmp_path):
    assert find_root(ROOT / "exercises") == ROOT
    assert (find_root(tmp_path) / "gpulesson").is_dir()


# --- the Markdown of a student edition: consistent with its mode, plain for plain Jupyter

NOTEBOOKS = sorted((ROOT / "exercises").glob("*.ipynb"))
#: MyST that plain Jupyter shows as raw text: a target label line, a role.
MYST = re.compile(r"^\s*\([\w.:-]+\)=\s*$|\{[a-z][\w:+-]*\}`", re.M)
#: A link to a file by a relative path: nothing of the course is beside a student edition.
RELATIVE_LINK = re.compile(r"(?<!!)\[[^\]]*\]\((?![a-z][\w+.-]*:|#)[^)]*\)")


def _markdown(nb: dict) -> list[str]:
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
@pytest.mark.parametrize(("solutions", "intro_says"), [
    ("after-correct", "the worked solution appears after a correct answer."),
    ("never", "the worked solution is not shown in this edition.")])
def test_exported_introduction_agrees_with_its_mode(path, solutions, intro_says):
    """The introduction said "the worked solution appears after a correct answer, or when
    you ask for it" while the note under it said "not on request" (or "stay hidden, even
    after a correct answer")."""
    original = json.loads(path.read_text(encoding="utf-8"))
    assert "when you ask for it" in " ".join(_markdown(original)[0].split())
    student, _ = student_notebook(original, solutions=solutions)
    for text in _markdown(student):
        flat = " ".join(text.split())
        assert "ask for it" not in flat and "on request," not in flat, flat
    intro = " ".join(_markdown(student)[0].split())
    assert intro_says in intro, intro
    nbformat.validate(nbformat.reads(json.dumps(student), as_version=4))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_exported_markdown_is_plain_and_links_nothing_absent(path):
    """Plain Jupyter showed the book's ``(label)=`` and ``{ref}`...``` as raw text, and the
    introduction linked ``../notebooks/<lesson>.ipynb``, which the export folder does not
    hold: it now names the lesson and its number instead."""
    original = json.loads(path.read_text(encoding="utf-8"))
    assert MYST.search(_markdown(original)[0])
    student, _ = student_notebook(original)
    for text in _markdown(student):
        assert not MYST.search(text), MYST.search(text)
        assert not RELATIVE_LINK.search(text), RELATIVE_LINK.search(text)
    intro = " ".join(_markdown(student)[0].split())
    assert intro.startswith("# Exercises: "), intro
    assert f"(lesson {course.number(path.stem)} of the course)" in intro, intro
    assert course.title(path.stem).split(":")[0] in intro


@pytest.mark.parametrize(("myst", "plain"), [
    ("(a_label)=\n# Title\n", "# Title\n"),
    ("the lesson [Memory: What Fits](../notebooks/memory_what_fits.ipynb): count",
     f"the lesson *Memory: What Fits* (lesson {course.number('memory_what_fits')} of the "
     "course): count"),
    ("*Optimisations* ({ref}`optimisations`)",
     f"*Optimisations* (lesson {course.number('optimisations')} of the course)"),
    ("see {ref}`the glossary <glossary>`", "see the glossary"),
    ("see {doc}`../book/how_to_use`", "see how to use"),
    ("as measured {cite:p}`a2020, b2021`; {cite:t}`k2019` found", "as measured (a2020, "
     "b2021); k2019 found"),
    ("{term}`HBM` and {math}`x^2`", "HBM and $x^2$"),
    ("[glossary](../book/glossary.md)", "glossary"),
    ("[paper](https://arxiv.org/abs/1) [up](#top) ![fig](fig.png)",
     "[paper](https://arxiv.org/abs/1) [up](#top) ![fig](fig.png)"),
    ("```python\n{ref}`kept`\n(kept)=\n```\n(gone)=\nend", "```python\n{ref}`kept`\n(kept)=\n"
     "```\nend"),
])
def test_plain_markdown(myst, plain):
    assert plain_markdown(myst) == plain
