"""The widget layer without a kernel: set ``.value``, ``.click()``, read the HTML widgets."""

from __future__ import annotations

import ipywidgets as w
import pytest

from gpulesson.exercises import configure, settings
from gpulesson.exercises.widgets import ExerciseWidget

from .test_exercise_core import fit_exercise, flops_code_exercise, weights_exercise


@pytest.fixture(autouse=True)
def _no_progress_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    saved = (settings.solutions, settings.variant, settings.progress, settings.progress_path)
    yield
    (settings.solutions, settings.variant, settings.progress, settings.progress_path) = saved


def test_numeric_widget_answer_fail_hint_succeed_solution():
    ui = ExerciseWidget(weights_exercise())
    assert isinstance(ui.answer, w.Text) and ui.answer.description.startswith("Your answer")
    assert ui.feedback.value == "" and ui.solution.value == ""

    ui.answer.value = "13.04 GB"
    ui.check_button.click()
    assert "GiB" in ui.feedback_text and ui.last.mistake == "gib_as_gb"
    assert ui.solution.value == ""            # no solution after a wrong answer

    ui.hint_button.click()
    assert "How many bytes" in ui.hints.value and "Multiply" not in ui.hints.value
    assert ui.hint_button.description == "Hint (2 of 2)"
    ui.hint_button.click()
    assert "Multiply by 7,000,000,000" in ui.hints.value
    assert ui.hint_button.disabled

    ui.answer.value = "14 GB"
    ui.check_button.click()
    assert ui.last.correct and "Correct" in ui.feedback_text
    assert "Worked solution" in ui.solution.value and "14 GB" in ui.solution.value
    assert ui.solved


def test_errors_show_inline_in_red_never_a_traceback():
    ui = ExerciseWidget(weights_exercise())
    for text in ["abc", "1e999", "-5 GB", "x" * 5000]:
        ui.answer.value = text
        ui.check_button.click()
        assert ui.last.status == "invalid"
        assert "#d32f2f" in ui.feedback.value and 'role="alert"' in ui.feedback.value
        assert "Traceback" not in ui.feedback.value
    assert ui.attempts == 0  # unreadable answers are not attempts


def test_enter_in_the_field_checks_once():
    ui = ExerciseWidget(weights_exercise())
    ui.answer.value = "100 GB"          # what Enter does with continuous_update=False
    assert ui.last is not None and ui.last.status == "incorrect"
    ui.check_button.click()             # same answer again: not a second attempt
    assert ui.attempts == 1


def test_solution_on_request_and_student_modes():
    ui = ExerciseWidget(weights_exercise())
    ui.solution_button.click()
    assert "14 GB" in ui.solution.value and ui.solution_button.disabled
    assert '<details class="gl-solution">' in ui.static_html

    student = ExerciseWidget(weights_exercise(), solutions="after-correct")
    assert student.solution_button is None
    assert "gl-solution\"" not in student.static_html and "14 GB" not in student.static_html
    student.answer.value = "14 GB"
    student.check_button.click()
    assert "14 GB" in student.solution.value

    never = ExerciseWidget(weights_exercise(), solutions="never")
    never.answer.value = "14 GB"
    never.check_button.click()
    assert never.last.correct and never.solution.value == ""


def test_choice_widget():
    ui = ExerciseWidget(fit_exercise())
    assert isinstance(ui.answer, w.RadioButtons) and ui.answer.value is None
    ui.check_button.click()
    assert ui.last.status == "invalid" and "choose" in ui.feedback_text.lower()
    ui.answer.value = "no"
    ui.check_button.click()
    assert ui.last.mistake == "fp32" and "FP32" in ui.feedback_text
    ui.answer.value = "yes"
    ui.check_button.click()
    assert ui.last.correct


def test_code_widget_looks_the_function_up_by_name():
    namespace: dict = {}
    ui = ExerciseWidget(flops_code_exercise(), namespace=namespace)
    assert ui.answer is None and "matmul_flops" in ui.check_button.description
    ui.check_button.click()
    assert ui.last.status == "invalid" and "define" in ui.feedback_text.lower()
    namespace["matmul_flops"] = 3
    ui.check_button.click()
    assert "not a function" in ui.feedback_text
    namespace["matmul_flops"] = lambda m, k, n: m * k * n
    ui.check_button.click()
    assert ui.last.mistake == "counted_macs" and "MAC" in ui.feedback_text
    namespace["matmul_flops"] = lambda m, k, n: 2 * m * k * n
    ui.check_button.click()
    assert ui.last.correct and "<pre><code>" in ui.solution.value


def test_every_input_is_labelled_and_buttons_have_tooltips():
    for ex in (weights_exercise(), fit_exercise(), flops_code_exercise()):
        ui = ExerciseWidget(ex)
        if ui.answer is not None:
            assert ui.answer.description
        for button in (ui.check_button, ui.hint_button, ui.solution_button):
            assert button.description and button.tooltip


def test_display_bundle_carries_widget_and_static_html():
    ui = ExerciseWidget(weights_exercise())
    bundle = ui._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/html"].startswith(
        '<div class="gl-exercise mathjax_ignore" id="demo-ex1"')


def test_configure_validates():
    with pytest.raises(ValueError, match="solutions"):
        configure(solutions="sometimes")
    with pytest.raises(ValueError, match="variant"):
        configure(variant=-3)
    configure(solutions="after-correct")
    assert ExerciseWidget(weights_exercise()).solution_button is None
