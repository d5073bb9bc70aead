"""gpulesson.exercises.lesson: a lesson's exercises as a notebook uses them (checking,
predict-then-run across cells, progress, the widget it shows)."""

from __future__ import annotations

import json

import pytest

from gpulesson.exercises import Lesson, configure, feedback_html, load_lesson
from gpulesson.exercises.progress import PROGRESS_FILE
from gpulesson.exercises.render import RenderedFeedback

pytestmark = pytest.mark.usefixtures("clean_session")

SLUG = "parallelism_at_the_core"


def _progress(folder):
    return json.loads((folder / PROGRESS_FILE).read_text())["exercises"]


def test_a_lesson_holds_its_bank_bound_to_a_variant():
    lesson = load_lesson(SLUG)
    assert isinstance(lesson, Lesson) and lesson.title == "Parallelism at the Core"
    assert [ex.number for ex in lesson] == list(range(1, len(lesson) + 1))
    assert repr(lesson) == f"Lesson({SLUG!r}, variant=None, {len(lesson)} exercises)"
    assert lesson.exercise(2).inputs == {"m": 2, "k": 3, "n": 4}
    assert all(ex.variant_seed == 7 for ex in load_lesson(SLUG, 7))
    assert [ex.number for ex in lesson.code_exercises()] == [3, 8]
    with pytest.raises(KeyError, match="no exercise 99"):
        lesson.exercise(99)
    with pytest.raises(KeyError, match=SLUG):
        load_lesson("no_such_lesson")


def test_the_variant_comes_from_the_session_unless_given():
    configure(variant=5)
    assert load_lesson(SLUG).variant == 5
    assert load_lesson(SLUG, variant=None).exercise(2).inputs == {"m": 2, "k": 3, "n": 4}


def test_check_notes_graded_answers_in_the_progress_file(clean_session):
    lesson = load_lesson(SLUG)
    assert not lesson.check(2, "24 FLOP").correct
    assert lesson.check(2, "48 FLOP").correct
    assert lesson.check(4, lesson.exercise(4).answer_text()).correct
    assert lesson.check(6, "abc").status == "invalid"
    entries = _progress(clean_session)
    assert entries[f"{SLUG}-ex2"]["done"] is True and entries[f"{SLUG}-ex2"]["attempts"] == 2
    assert f"{SLUG}-ex6" not in entries   # unreadable answers are not attempts
    assert lesson.summary() == (f"Parallelism at the Core: 2 of {len(lesson)} exercises "
                                "done (2, 4); next: exercise 1.")


def test_what_a_notebook_displays_is_the_feedback_html():
    feedback = load_lesson(SLUG).check(2, "24 FLOP")
    assert isinstance(feedback, RenderedFeedback)
    assert feedback._repr_html_() == feedback_html(feedback)
    assert feedback.mistake == "counted_macs"


def test_a_code_exercise_through_the_lesson():
    lesson = load_lesson(SLUG)

    def matmul_flops(m, k, n):
        return 2 * m * k * n

    assert lesson.check(3, matmul_flops).correct
    assert "(3)" in lesson.summary()


def test_predict_then_reveal_without_a_widget(clean_session):
    lesson = load_lesson(SLUG)
    committed = lesson.predict(1, "100x")
    assert committed.status == "committed" and lesson.prediction(1) == 100
    assert not (clean_session / PROGRESS_FILE).exists()   # a prediction is not an answer
    revealed = lesson.reveal(1, 400.0)
    assert isinstance(revealed, RenderedFeedback) and "4× too low" in revealed.message
    assert _progress(clean_session)[f"{SLUG}-ex1"]["done"] is True
    with pytest.raises(TypeError, match="predict-then-run"):
        lesson.predict(2, "10")
    with pytest.raises(TypeError, match="predict-then-run"):
        lesson.reveal(2, 1.0)


def test_reveal_without_a_prediction_is_not_progress(clean_session):
    feedback = load_lesson(SLUG).reveal(1, 250.0)
    assert feedback.value is None and "Commit a prediction" in feedback.message
    assert not (clean_session / PROGRESS_FILE).exists()


def test_predict_in_the_widget_then_reveal_in_a_later_cell():
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


def test_answers_in_the_widget_are_progress(clean_session):
    lesson = load_lesson(SLUG)
    ui = lesson.show(2)
    ui.answer.value = "48 FLOP"
    assert ui.last.correct
    assert _progress(clean_session)[f"{SLUG}-ex2"]["done"] is True


def test_record_keeps_predictions_and_skips_unreadable_answers(clean_session):
    lesson = load_lesson(SLUG)
    lesson.record(1, lesson.exercise(1).check("abc"))
    lesson.record(1, lesson.exercise(1).check("30x"))
    assert lesson.prediction(1) == 30
    assert not (clean_session / PROGRESS_FILE).exists()
    lesson.record(2, lesson.exercise(2).check("24"))
    entry = _progress(clean_session)[f"{SLUG}-ex2"]
    assert entry["attempts"] == 1 and entry["done"] is False


def test_progress_off_changes_nothing_else(clean_session, monkeypatch):
    monkeypatch.setenv("GPULESSON_PROGRESS", "off")
    lesson = load_lesson(SLUG)
    assert lesson.check(2, "48").correct
    assert not (clean_session / PROGRESS_FILE).exists()
    assert "0 of" in lesson.summary()


def test_a_lost_or_unwritable_progress_file_changes_nothing_else(clean_session):
    lesson = load_lesson(SLUG)
    lesson.check(2, "48")
    (clean_session / PROGRESS_FILE).unlink()
    assert "0 of" in lesson.summary()
    assert lesson.check(2, "48").correct
    configure(progress_path=str(clean_session / "missing-dir" / PROGRESS_FILE))
    assert lesson.check(2, "48").correct           # works the same, only forgets
    assert "0 of" in lesson.summary()
