"""Local progress and the Lesson object a notebook uses (predict-then-run across cells)."""

from __future__ import annotations

import json

import pytest

from gpulesson.exercises import configure, load_lesson, progress_summary, settings
from gpulesson.exercises.progress import PROGRESS_FILE, load_progress, record

SLUG = "parallelism_at_the_core"


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GPULESSON_PROGRESS", raising=False)
    monkeypatch.delenv("GPULESSON_PROGRESS_FILE", raising=False)
    saved = (settings.solutions, settings.variant, settings.progress, settings.progress_path)
    yield
    (settings.solutions, settings.variant, settings.progress, settings.progress_path) = saved


def test_summary_without_a_file():
    n = len(load_lesson(SLUG))
    assert progress_summary(SLUG) == (f"Parallelism at the Core: 0 of {n} exercises done; "
                                      "next: exercise 1.")


def test_correct_answers_are_recorded_next_to_the_notebook(tmp_path):
    lesson = load_lesson(SLUG)
    assert not lesson.check(2, "24 FLOP").correct
    assert lesson.check(2, "48 FLOP").correct
    assert lesson.check(4, lesson.exercise(4).answer_text()).correct
    assert lesson.check(6, "abc").status == "invalid"
    data = json.loads((tmp_path / PROGRESS_FILE).read_text())
    entry = data["exercises"][f"{SLUG}-ex2"]
    assert entry["done"] is True and entry["attempts"] == 2
    assert f"{SLUG}-ex6" not in data["exercises"]  # unreadable answers are not attempts
    n = len(lesson)
    assert lesson.summary() == (f"Parallelism at the Core: 2 of {n} exercises done (2, 4); "
                                "next: exercise 1.")


def test_predict_then_run_across_cells():
    lesson = load_lesson(SLUG)
    ui = lesson.show(1)
    ui.answer.value = "100x"
    ui.check_button.click()
    assert ui.last.status == "committed" and ui.answer.disabled
    assert lesson.prediction(1) == 100
    feedback = lesson.reveal(1, 400.0)
    assert "4× too low" in feedback.message
    assert "4× too low" in ui.feedback_text          # the widget above is updated in place
    assert "Worked solution" in ui.solution.value
    assert "Parallelism at the Core: 1 of" in lesson.summary()


def test_reveal_without_prediction_is_not_progress(tmp_path):
    lesson = load_lesson(SLUG)
    feedback = lesson.reveal(1, 250.0)
    assert feedback.value is None and "Commit a prediction" in feedback.message
    assert not (tmp_path / PROGRESS_FILE).exists()
    with pytest.raises(TypeError):
        lesson.reveal(2, 1.0)


def test_code_exercise_through_the_lesson():
    lesson = load_lesson(SLUG)

    def matmul_flops(m, k, n):
        return 2 * m * k * n

    assert lesson.check(3, matmul_flops).correct
    assert "(3)" in lesson.summary()


def test_unwritable_location_is_tolerated(tmp_path):
    target = tmp_path / "missing-dir" / "sub" / PROGRESS_FILE
    assert record(f"{SLUG}-ex2", "correct", path=target) is False
    configure(progress_path=str(target))
    assert load_lesson(SLUG).check(2, "48").correct  # works the same, only forgets
    assert "0 of" in progress_summary(SLUG)


def test_a_file_in_the_way_is_tolerated(tmp_path):
    """Even root cannot create a file below a regular file: the write fails quietly."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    assert record(f"{SLUG}-ex2", "correct", path=blocker / PROGRESS_FILE) is False
    assert load_progress(blocker / PROGRESS_FILE)["exercises"] == {}


@pytest.mark.parametrize("content", ["{not json", "[]", '{"exercises": 3}', "\x00\xff"])
def test_corrupt_file_is_ignored_and_replaced(tmp_path, content):
    (tmp_path / PROGRESS_FILE).write_text(content, encoding="latin-1")
    assert load_progress()["exercises"] == {}
    assert record(f"{SLUG}-ex2", "correct") is True
    assert load_progress()["exercises"][f"{SLUG}-ex2"]["done"]


def test_progress_can_be_switched_off(tmp_path, monkeypatch):
    monkeypatch.setenv("GPULESSON_PROGRESS", "off")
    assert load_lesson(SLUG).check(2, "48").correct
    assert not (tmp_path / PROGRESS_FILE).exists()
    monkeypatch.delenv("GPULESSON_PROGRESS")
    configure(progress=False)
    assert record(f"{SLUG}-ex2", "correct") is False


def test_deleting_the_file_loses_nothing_else(tmp_path):
    lesson = load_lesson(SLUG)
    lesson.check(2, "48")
    (tmp_path / PROGRESS_FILE).unlink()
    assert "0 of" in lesson.summary()
    assert lesson.check(2, "48").correct


def test_variant_from_settings_and_unknown_lesson():
    configure(variant=5)
    assert load_lesson(SLUG).variant == 5
    assert load_lesson(SLUG, variant=None).exercise(2).inputs == {"m": 2, "k": 3, "n": 4}
    with pytest.raises(KeyError, match=SLUG):
        load_lesson("no_such_lesson")
    with pytest.raises(KeyError, match="no exercise 99"):
        load_lesson(SLUG).exercise(99)
