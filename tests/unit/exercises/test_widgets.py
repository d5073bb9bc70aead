"""gpulesson.exercises.widgets without a kernel: set ``.value``, ``.click()``, read the
``HTML`` widgets."""

from __future__ import annotations

import dataclasses

import ipywidgets as w
import pytest

from gpulesson.exercises import PredictExercise, configure
from gpulesson.exercises.widgets import ExerciseWidget

from .demo import fit_exercise, flops_code_exercise, weights_exercise

pytestmark = pytest.mark.usefixtures("clean_session")


class _Lesson:
    """Stands in for a Lesson: keeps what the widget reports."""

    def __init__(self) -> None:
        self.records: list[tuple[int, str]] = []

    def record(self, number, feedback):
        self.records.append((number, feedback.status))


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
    assert ui.hint_button.disabled and ui.hint_button.description == "No more hints"

    ui.answer.value = "14 GB"
    ui.check_button.click()
    assert ui.last.correct and "Correct" in ui.feedback_text
    assert "Worked solution" in ui.solution.value and "14 GB" in ui.solution.value
    assert ui.solved and ui.attempts == 2


def test_errors_show_inline_in_red_never_a_traceback():
    ui = ExerciseWidget(weights_exercise())
    for text in ["abc", "1e999", "-5 GB", "x" * 5000]:
        ui.answer.value = text
        ui.check_button.click()
        assert ui.last.status == "invalid"
        assert "#d32f2f" in ui.feedback.value and 'role="alert"' in ui.feedback.value
        assert "Traceback" not in ui.feedback.value
    assert ui.attempts == 0  # unreadable answers are not attempts


def test_a_broken_definition_shows_a_message_not_a_traceback():
    broken = dataclasses.replace(flops_code_exercise(), reference=lambda **inputs: 1 / 0)
    ui = ExerciseWidget(broken, namespace={"matmul_flops": lambda m, k, n: 2 * m * k * n})
    ui.check_button.click()
    assert ui.last.status == "invalid" and "could not be checked" in ui.feedback_text
    assert "ZeroDivisionError" in ui.feedback_text and "Traceback" not in ui.feedback.value


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


def test_the_session_setting_decides_the_solutions_mode():
    configure(solutions="after-correct")
    assert ExerciseWidget(weights_exercise()).solution_button is None


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


def test_code_widget_reads_the_notebook_namespace_by_default(monkeypatch):
    import __main__

    monkeypatch.setattr(__main__, "matmul_flops", lambda m, k, n: 2 * m * k * n,
                        raising=False)
    ui = ExerciseWidget(flops_code_exercise())
    ui.check_button.click()
    assert ui.last.correct


def test_predict_widget_commits_once():
    ex = PredictExercise(lesson="demo", number=5, title="t", question="q", solution="s",
                         unit="×", hints=("Think of the loop.",))
    ui = ExerciseWidget(ex)
    assert ui.answer.description == "Your prediction (×)"
    ui.answer.value = "fast"
    assert ui.last.status == "invalid" and not ui.answer.disabled
    ui.answer.value = "30x"
    assert ui.last.status == "committed" and ui.answer.disabled and ui.check_button.disabled
    assert ui.check_button.description == "Prediction committed"
    ui.show_comparison(ex.compare(30, 60.0))
    assert "2× too low" in ui.feedback_text and "Worked solution" in ui.solution.value


def test_the_widget_reports_graded_answers_and_predictions_to_its_lesson():
    lesson = _Lesson()
    ui = ExerciseWidget(weights_exercise(), lesson=lesson)
    for text in ("abc", "13.04 GB", "14 GB"):
        ui.answer.value = text
    predict = ExerciseWidget(PredictExercise(lesson="demo", number=5, title="t",
                                             question="q", solution="s"), lesson=lesson)
    predict.answer.value = "12"
    assert lesson.records == [(1, "mistake"), (1, "correct"), (5, "committed")]


def test_every_input_is_labelled_and_buttons_have_tooltips():
    for ex in (weights_exercise(), fit_exercise(), flops_code_exercise()):
        ui = ExerciseWidget(ex)
        if ui.answer is not None:
            assert ui.answer.description
        for button in (ui.check_button, ui.hint_button, ui.solution_button):
            assert button.description and button.tooltip


def test_display_bundle_carries_widget_and_static_html():
    bundle = ExerciseWidget(weights_exercise())._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/html"].startswith(
        '<div class="gl-exercise mathjax_ignore" id="demo-ex1"')


# ---------------------------------------------------------------------------------------
# Learner code under guard: exits, endless loops, floods of output


def test_a_function_that_calls_sys_exit_is_reported_and_the_kernel_lives():
    """``sys.exit()`` in a learner's function used to raise SystemExit out of the Check
    button's handler, which kills a Jupyter kernel and every variable in it."""
    import sys

    def matmul_flops(m, k, n):
        sys.exit(0)

    ui = ExerciseWidget(flops_code_exercise(), namespace={"matmul_flops": matmul_flops})
    ui.check_button.click()  # no SystemExit leaves the handler
    assert ui.last.status == "incorrect" and "sys.exit()" in ui.feedback_text
    assert "Nothing else was stopped" in ui.feedback_text
    ui.namespace["matmul_flops"] = lambda m, k, n: 2 * m * k * n
    ui.check_button.click()
    assert ui.last.correct  # still usable


@pytest.mark.parametrize("error", [SystemExit(3), GeneratorExit(), BaseException("odd")])
def test_every_base_exception_but_an_interrupt_is_reported(error):
    def matmul_flops(m, k, n):
        raise error

    ui = ExerciseWidget(flops_code_exercise(), namespace={"matmul_flops": matmul_flops})
    ui.check_button.click()
    assert ui.last.status == "incorrect" and type(error).__name__ in ui.feedback_text


def test_an_endless_loop_stops_at_the_time_budget_and_the_widget_stays_usable():
    """``while True: pass`` blocked the kernel until it was interrupted, and the feedback
    stayed empty afterwards."""
    import time

    def matmul_flops(m, k, n):
        while True:
            pass

    configure(time_budget=0.3)
    ui = ExerciseWidget(flops_code_exercise(), namespace={"matmul_flops": matmul_flops})
    began = time.monotonic()
    ui.check_button.click()
    assert time.monotonic() - began < 3
    assert ui.last.status == "timeout" and "Stopped after 0.3 s" in ui.feedback_text
    assert "matmul_flops(m=" in ui.feedback_text and 'role="alert"' in ui.feedback.value
    assert not ui.check_button.disabled and ui.attempts == 0
    ui.namespace["matmul_flops"] = lambda m, k, n: 2 * m * k * n
    ui.check_button.click()
    assert ui.last.correct


def test_an_interrupt_stops_the_check_with_a_message():
    def matmul_flops(m, k, n):
        raise KeyboardInterrupt  # what Kernel → Interrupt raises in the running code

    ui = ExerciseWidget(flops_code_exercise(), namespace={"matmul_flops": matmul_flops})
    ui.check_button.click()
    assert ui.last.status == "error" and "interrupted" in ui.feedback_text
    assert not ui.check_button.disabled


def test_printed_output_is_captured_bounded_and_shown():
    """A function printing 200,000 lines streamed 22.9 MB to the front end."""
    calls = []

    def matmul_flops(m, k, n):
        if not calls:  # the first call floods, the others are quiet
            for i in range(200_000):
                print("step", i)
        calls.append(1)
        return 2 * m * k * n

    ui = ExerciseWidget(flops_code_exercise(), namespace={"matmul_flops": matmul_flops})
    ui.check_button.click()
    assert ui.last.correct
    assert len(ui.feedback.value) < 5_000 and "Your code printed" in ui.feedback.value
    assert "step 0" in ui.feedback.value and "more lines" in ui.feedback.value


def test_a_widget_after_a_restart_says_the_exercise_was_solved():
    """Progress survives a kernel restart in the file, but the widgets of the new session
    all started blank: nothing but the summary at the bottom said which exercises were
    done (the site marks them on every page load)."""
    from gpulesson.exercises import load_lesson

    slug = "roofline_and_tensor_cores"
    first = load_lesson(slug)
    assert first.check(2, first.exercise(2).answer_text()).correct
    restarted = load_lesson(slug)  # a new kernel: a new Lesson, the same progress file
    done = restarted.show(2)
    assert "Solved before" in done.feedback_text and done.last is None
    assert done.solution.value == ""  # the note is no answer: nothing else changes
    assert restarted.show(1).feedback.value == ""
    assert load_lesson(slug, 3).show(2).feedback.value == ""  # other numbers: not solved
    done.answer.value = "1 FLOP/byte"
    done.check_button.click()
    assert "Solved before" not in done.feedback_text and done.last.status == "incorrect"
