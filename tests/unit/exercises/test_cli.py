"""``python -m gpulesson.exercises {export,list,progress}``: what it prints and returns."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpulesson.exercises import available_lessons, load_lesson
from gpulesson.exercises.__main__ import main
from gpulesson.exercises.progress import record

ROOT = Path(__file__).resolve().parents[3]
SLUG = "parallelism_at_the_core"


def test_export_prints_one_line_per_lesson(tmp_path, capsys):
    assert main(["export", "--lesson", SLUG, "--lesson", "memory_what_fits", "--out",
                 str(tmp_path), "--root", str(ROOT)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [SLUG, "memory_what_fits"]
    assert f"answer key {tmp_path / 'answer_key' / (SLUG + '.md')}" in lines[0]
    assert "solution cells removed" in lines[0]
    assert (tmp_path / "students" / f"{SLUG}.ipynb").is_file()


def test_export_never_mode_reaches_the_student_notebook(tmp_path):
    assert main(["export", "--lesson", SLUG, "--solutions", "never", "--out", str(tmp_path),
                 "--root", str(ROOT)]) == 0
    text = (tmp_path / "students" / f"{SLUG}.ipynb").read_text(encoding="utf-8")
    assert "configure(solutions='never', variant=None)" in text


def test_errors_are_reported_without_a_traceback(tmp_path, capsys):
    assert main(["export", "--lesson", "nope", "--out", str(tmp_path)]) == 2
    assert "known" in capsys.readouterr().err
    assert main(["export", "--all", "--variant", "-2", "--out", str(tmp_path)]) == 2
    assert "--variant must be a non-negative integer" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["export", "--out", str(tmp_path)])  # --lesson or --all is required


def test_list_through_the_module_entry_point():
    result = subprocess.run([sys.executable, "-m", "gpulesson.exercises", "list"],
                            capture_output=True, text=True, check=True, cwd=ROOT)
    heads = [line.split(":")[0] for line in result.stdout.splitlines()
             if not line.startswith(" ")]
    assert heads == available_lessons()
    assert f"{SLUG}-ex1" in result.stdout and "predict" in result.stdout
    assert f"Parallelism at the Core ({len(load_lesson(SLUG))} exercises)" in result.stdout


def test_progress_prints_a_summary_per_lesson(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GPULESSON_PROGRESS", raising=False)
    path = tmp_path / "progress.json"
    assert record(f"{SLUG}-ex2", "correct", path=path)
    assert main(["progress", SLUG, "memory_what_fits", "--file", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Parallelism at the Core: 1 of") and "(2)" in lines[0]
    assert lines[1].startswith("Memory: What Fits: 0 of")
    assert main(["progress", "nope", "--file", str(path)]) == 2
    assert "no exercises for lesson 'nope'" in capsys.readouterr().err


def test_progress_from_the_course_folder_reads_the_notebooks_file(tmp_path, capsys,
                                                                  monkeypatch):
    """A notebook's kernel runs in exercises/, so that is where the progress file is
    written; ``progress`` run from the course folder (where make and the instructor
    guide run it) read ./.gpulesson-progress.json instead and said "0 of N done"."""
    monkeypatch.delenv("GPULESSON_PROGRESS", raising=False)
    monkeypatch.delenv("GPULESSON_PROGRESS_FILE", raising=False)
    for folder in ("exercises", "gpulesson"):
        (tmp_path / folder).mkdir()
    notebooks_file = tmp_path / "exercises" / ".gpulesson-progress.json"
    assert record(f"{SLUG}-ex2", "correct", path=notebooks_file)
    monkeypatch.chdir(tmp_path)
    assert main(["progress", SLUG]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("Parallelism at the Core: 1 of") and "(2)" in out.out
    assert str(notebooks_file) in out.err
    notebooks_file.unlink()
    assert main(["progress", SLUG]) == 0
    out = capsys.readouterr()
    assert "0 of" in out.out and "no progress file" in out.err
    assert str(notebooks_file) in out.err and str(tmp_path / ".gpulesson-progress.json") in out.err


def test_the_variant_that_used_to_crash_exports(tmp_path, capsys):
    """``export --variant 8`` of memory_what_fits crashed with a RuntimeError traceback:
    exercise 6 could not build that variant (see test_bank's seeds 0-99)."""
    assert main(["export", "--lesson", "memory_what_fits", "--variant", "8", "--out",
                 str(tmp_path), "--root", str(ROOT)]) == 0
    key = (tmp_path / "answer_key" / "memory_what_fits.md").read_text(encoding="utf-8")
    assert "Variant seed: 8." in key


@pytest.mark.parametrize("error", [RuntimeError("no valid variant in 100 draws"),
                                   OSError(28, "No space left on device"),
                                   AssertionError()])
def test_any_failure_is_one_line_on_stderr(tmp_path, capsys, monkeypatch, error):
    import gpulesson.exercises.__main__ as cli

    def failing(*args, **kwargs):
        raise error

    monkeypatch.setattr(cli, "export", failing)
    assert main(["export", "--all", "--out", str(tmp_path), "--root", str(ROOT)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert type(error).__name__ in err or str(error) in err


@pytest.mark.parametrize(("kind", "says"), [
    ("missing", "does not exist"), ("folder", "is a folder"),
    ("notebook", 'holds no "exercises" record'), ("broken", "not valid JSON")])
def test_progress_refuses_a_file_that_is_not_there(tmp_path, capsys, monkeypatch, kind, says):
    """``progress --file /nonexistent.json`` said "nothing answered there yet" and "0 of N
    exercises done" with status 0: a mistyped path marked a student as having done
    nothing. So did a notebook or a broken file given by mistake (review, 2026-12-07).
    Only the default location (no --file, test above) may be absent."""
    monkeypatch.delenv("GPULESSON_PROGRESS_FILE", raising=False)
    given = {"missing": tmp_path / "nonexistent.json", "folder": tmp_path,
             "notebook": tmp_path / "lesson.ipynb", "broken": tmp_path / "bad.json"}[kind]
    if kind == "notebook":
        given.write_text('{"cells": [], "nbformat": 4}')
    if kind == "broken":
        given.write_text("{bad")
    assert main(["progress", SLUG, "--file", str(given)]) == 2
    out = capsys.readouterr()
    assert out.out == "" and "done" not in out.err
    assert out.err.startswith(f"error: --file {given}: ") and out.err.count("\n") == 1
    assert says in out.err, out.err
