"""Instructor export: student notebooks without solutions that still execute, answer keys."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup
from nbclient import NotebookClient

from gpulesson.exercises import load_lesson
from gpulesson.exercises.__main__ import main
from gpulesson.exercises.export import SOLUTION_TAG, export, find_root, student_notebook

ROOT = Path(__file__).resolve().parents[2]
SLUG = "parallelism_at_the_core"
SOURCE = ROOT / "exercises" / f"{SLUG}.ipynb"


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
    text = json.dumps(student)
    assert "the answer is 42" not in text
    assert "widgets" not in student["metadata"]
    for cell in student["cells"]:
        assert SOLUTION_TAG not in cell.get("metadata", {}).get("tags", [])
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None
    # the set-up cell comes right after the title and sets student mode and the variant
    assert "".join(student["cells"][0]["source"]) == "# Title"
    setup = "".join(student["cells"][2]["source"])
    assert "configure(solutions='after-correct', variant=4)" in setup
    nbformat.validate(nbformat.reads(json.dumps(student), as_version=4))


@pytest.mark.parametrize("kwargs, words", [({"solutions": "on-request"}, "solutions"),
                                           ({"variant": -1}, "variant"),
                                           ({"variant": True}, "variant")])
def test_student_notebook_refuses_bad_options(kwargs, words):
    with pytest.raises(ValueError, match=words):
        student_notebook(_tiny_notebook(), **kwargs)


def test_export_unknown_lesson_names_the_known_ones(tmp_path):
    with pytest.raises(KeyError, match=SLUG):
        export(["no_such_lesson"], tmp_path, root=ROOT)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("export")
    code = main(["export", "--lesson", SLUG, "--variant", "3", "--out", str(out),
                 "--root", str(ROOT)])
    assert code == 0
    return out


def test_export_writes_a_student_notebook_without_solutions(exported):
    path = exported / "students" / f"{SLUG}.ipynb"
    nb = nbformat.read(path, as_version=4)
    assert not [c for c in nb.cells if SOLUTION_TAG in c.metadata.get("tags", [])]
    source = nbformat.read(SOURCE, as_version=4)
    tagged = [c for c in source.cells if SOLUTION_TAG in c.metadata.get("tags", [])]
    assert tagged, "the lesson notebook has reference-solution cells"
    text = path.read_text(encoding="utf-8")
    for cell in tagged:
        assert cell.source not in text
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


def test_cli_reports_errors_without_a_traceback(tmp_path, capsys):
    assert main(["export", "--lesson", "nope", "--out", str(tmp_path)]) == 2
    assert "known" in capsys.readouterr().err
    assert main(["export", "--all", "--variant", "-2", "--out", str(tmp_path)]) == 2
    with pytest.raises(SystemExit):
        main(["export", "--out", str(tmp_path)])  # --lesson or --all is required


def test_cli_list_and_module_entry_point():
    result = subprocess.run([sys.executable, "-m", "gpulesson.exercises", "list"],
                            capture_output=True, text=True, check=True, cwd=ROOT)
    assert f"{SLUG}-ex1" in result.stdout and "predict" in result.stdout


def test_find_root_finds_the_repository(tmp_path):
    assert find_root(ROOT / "exercises") == ROOT
    assert (find_root(tmp_path) / "gpulesson").is_dir()
