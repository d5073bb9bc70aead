"""The thin ipywidgets layer over :mod:`gpulesson.exercises.core`.

Everything a learner sees in Jupyter is written into ``HTML`` widgets: feedback in place
(errors in red, with a symbol, never a traceback and never ``print`` into an ``Output``),
progressive hints, and the worked solution. Every input has a label (its ``description``)
and every action is a button, so the exercise works from the keyboard alone (Tab to the
field, type, Enter; Tab to a button, Enter or Space).

The logic lives in the core; this module only wires buttons to :meth:`Exercise.check`,
so it is tested without a kernel: build the widget, set ``.value``, call ``.click()``,
and read the ``HTML`` widget's ``.value``.

Every check runs under the lesson's runner (:class:`~gpulesson.exercises.guard.GuardedRunner`
by default): a learner's function that loops for ever is stopped after the time budget,
one that calls ``sys.exit()`` is reported, what it prints is shown below the feedback (cut
short), and an interrupt only stops the check. The widget stays usable whatever happened:
press Check again.
"""

from __future__ import annotations

import html
import re
import sys
from typing import Any

import ipywidgets as w
from IPython import get_ipython

from gpulesson.display import Interactive
from gpulesson.exercises import core
from gpulesson.exercises.checking import check_answer
from gpulesson.exercises.core import Exercise, Feedback
from gpulesson.exercises.feedback import short, text_of
from gpulesson.exercises.guard import Runner, default_runner
from gpulesson.exercises.render import feedback_html, markup, static_html
from gpulesson.exercises.session import settings

__all__ = ["ExerciseWidget"]

_LABEL_STYLE = {"description_width": "initial"}


class ExerciseWidget(Interactive):
    """A live exercise (an :class:`~gpulesson.display.Interactive`).

    Attributes
    ----------
    exercise:
        the bound exercise.
    lesson:
        the :class:`~gpulesson.exercises.lesson.Lesson` it was shown from (told of every
        graded answer and committed prediction through its ``record`` method), or ``None``.
    answer:
        the input widget (``Text`` or ``RadioButtons``; ``None`` for a code exercise).
    check_button, hint_button, solution_button:
        the buttons (``solution_button`` is ``None`` unless solutions are on request).
    feedback, hints, solution:
        ``HTML`` widgets holding what the learner is shown.
    last:
        the last :class:`Feedback`, or ``None``.
    runner:
        how checks run: ``runner``, else the lesson's, else
        :func:`~gpulesson.exercises.guard.default_runner`.
    """

    def __init__(self, exercise: Exercise, *, lesson: Any = None,
                 namespace: dict[str, Any] | None = None,
                 solutions: str | None = None, runner: Runner | None = None) -> None:
        self.exercise = exercise
        self.lesson = lesson
        self.runner: Runner = runner or getattr(lesson, "runner", None) or default_runner()
        self.namespace = namespace
        self.solutions = solutions or settings.solutions
        self.last: Feedback | None = None
        self.hints_shown = 0
        self.attempts = 0
        self.solved = False
        self._last_checked: Any = None

        ex = exercise
        header = w.HTML(
            f'<h4 style="margin: 0.2em 0">Exercise {ex.number}: {html.escape(ex.title_text())}</h4>'
            f"{markup(ex.question_text())}"
        )
        self.answer: Any = None
        self.feedback = w.HTML("")
        self.hints = w.HTML("")
        self.solution = w.HTML("")
        n_hints = len(ex.hints)
        self.hint_button = w.Button(
            description=f"Hint (1 of {n_hints})" if n_hints else "No hints",
            disabled=not n_hints, icon="lightbulb-o",
            tooltip="Show the next hint, one at a time")
        self.hint_button.on_click(self._on_hint)
        self.solution_button: w.Button | None = None
        if self.solutions == "on-request":
            self.solution_button = w.Button(description="Show solution", icon="eye",
                                            tooltip="Show the answer and the worked solution")
            self.solution_button.on_click(self._on_solution)

        if isinstance(ex, core.ChoiceExercise):
            self.answer = w.RadioButtons(options=[(label, key) for key, label in
                                                  ex.option_pairs()],
                                         value=None, description="Your answer",
                                         style=_LABEL_STYLE, layout=w.Layout(width="auto"))
            self.check_button = w.Button(description="Check", button_style="primary",
                                         icon="check", tooltip="Check the chosen option")
        elif isinstance(ex, core.PredictExercise):
            unit = f" ({ex.unit})" if ex.unit else ""
            self.answer = w.Text(description=f"Your prediction{unit}",
                                 placeholder="a number, for example 10",
                                 continuous_update=False, style=_LABEL_STYLE)
            self.check_button = w.Button(description="Commit prediction", button_style="primary",
                                         icon="lock",
                                         tooltip="Lock in your prediction before measuring")
        elif isinstance(ex, core.CodeExercise):
            self.check_button = w.Button(description=f"Check {ex.function_name}",
                                         button_style="primary", icon="check",
                                         tooltip=f"Check the function {ex.function_name} "
                                                 "defined in this notebook")
        elif isinstance(ex, core.NumericExercise):
            unit = f" ({ex.unit})" if ex.unit else ""
            self.answer = w.Text(description=f"Your answer{unit}",
                                 placeholder=f"a number{', in ' + ex.unit if ex.unit else ''}",
                                 continuous_update=False, style=_LABEL_STYLE)
            self.check_button = w.Button(description="Check", button_style="primary",
                                         icon="check", tooltip="Check your answer")
        else:  # pragma: no cover - every kind is handled above
            raise TypeError(f"no widget for exercise kind {type(ex).__name__}")
        self.check_button.on_click(self._on_check)
        if isinstance(self.answer, w.Text):
            # Enter in the field checks too (value syncs on Enter with continuous_update off)
            self.answer.observe(self._on_enter, names="value")

        controls = [c for c in (self.answer, self.check_button) if c is not None]
        buttons = [b for b in (self.hint_button, self.solution_button) if b is not None]
        box = w.VBox([header, w.HBox(controls), self.feedback, w.HBox(buttons), self.hints,
                      self.solution], layout=w.Layout(border="1px solid #8884",
                                                      padding="0.4em 0.8em", margin="0.5em 0"))
        box.add_class("gl-exercise-widget")
        super().__init__(box, static_html(ex, solution=self.solutions == "on-request"))
        self._note_solved_before()

    def _note_solved_before(self) -> None:
        """Say so when the progress file has this exercise solved (a kernel restarted since,
        or the notebook was closed); the first check replaces the note."""
        solved = getattr(self.lesson, "solved_before", None)
        try:
            when = solved(self.exercise.number) if callable(solved) else None
        except Exception:  # noqa: BLE001 - a note, never a reason for a widget to fail
            when = None
        if when is None:
            return
        on = f" on {when.replace('T', ' at ')[:19]}" if when else ""
        self.feedback.value = (
            '<div class="gl-solved-before" role="status" style="color: #1a7f37">'
            f"\u2714 Solved before{html.escape(on)} (your progress file keeps it). "
            "Answer again any time.</div>")

    # ---------------------------------------------------------------- actions
    def _on_enter(self, change: dict[str, Any]) -> None:
        if change.get("new", "").strip():
            self._on_check()

    def _on_check(self, _button: Any = None) -> None:
        try:
            self._check()
        except Exception as error:  # noqa: BLE001 - never a traceback, the widget stays usable
            self._show(Feedback(self.exercise.id, "error", "Sorry, this answer could not be "
                                f"checked ({type(error).__name__}: {short(text_of(error))})."))

    def _check(self) -> None:
        ex = self.exercise
        if isinstance(ex, core.CodeExercise):
            submitted = self._lookup_function()
            if isinstance(submitted, Feedback):
                self._show(submitted)
                return
        else:
            submitted = self.answer.value
            if submitted == self._last_checked and self.last is not None:
                return  # the same answer again (Enter, then the button): nothing new
        feedback = check_answer(ex, submitted, runner=self.runner, record=self._noted)
        if not isinstance(ex, core.CodeExercise) and feedback.status not in ("timeout", "error"):
            self._last_checked = submitted
        self._show(feedback)
        if not feedback.graded and feedback.status != "committed":
            return  # unreadable, stopped or interrupted: nothing to note, try again
        self.attempts += 1
        if isinstance(ex, core.PredictExercise):
            self.answer.disabled = True
            self.check_button.disabled = True
            self.check_button.description = "Prediction committed"
        if feedback.correct:
            self.solved = True
            if self.solutions != "never":
                self._show_solution()

    def _noted(self, exercise: Exercise, feedback: Feedback) -> str | None:
        """Tell the lesson of a graded answer or a committed prediction (its notice back)."""
        if self.lesson is None or (not feedback.graded and feedback.status != "committed"):
            return None
        return self.lesson.record(exercise.number, feedback)

    def _lookup_function(self) -> Any:
        ex = self.exercise
        namespace = self.namespace if self.namespace is not None else _user_namespace()
        func = namespace.get(ex.function_name)
        if func is None:
            return Feedback(ex.id, "invalid", f"No function {ex.function_name} yet: define "
                            f"def {ex.function_name}({ex.signature}): ... in a cell, run that "
                            "cell, then press Check.")
        if not callable(func):
            return Feedback(ex.id, "invalid", f"{ex.function_name} is a "
                            f"{type(func).__name__}, not a function; define it with def.")
        return func

    def _on_hint(self, _button: Any = None) -> None:
        texts = self.exercise.hint_texts()
        if self.hints_shown >= len(texts):
            return
        self.hints_shown += 1
        items = "".join(f"<li>{markup(t)}</li>" for t in texts[: self.hints_shown])
        self.hints.value = (f'<div class="gl-hints-shown" role="status" aria-live="polite">'
                            f'<strong>Hints</strong><ol style="margin: 0.2em 0">{items}</ol></div>')
        if self.hints_shown >= len(texts):
            self.hint_button.description = "No more hints"
            self.hint_button.disabled = True
        else:
            self.hint_button.description = f"Hint ({self.hints_shown + 1} of {len(texts)})"

    def _on_solution(self, _button: Any = None) -> None:
        self._show_solution()

    def _show_solution(self) -> None:
        ex = self.exercise
        code = ""
        if isinstance(ex, core.CodeExercise) and ex.model_solution is not None:
            code = (f"<pre><code>{html.escape(ex.model_solution_source())}</code></pre>")
        answer = "" if isinstance(ex, core.PredictExercise) else (
            f"<p><strong>Answer:</strong> {html.escape(ex.answer_text())}</p>")
        self.solution.value = (
            '<div class="gl-solution-shown" style="border-left: 3px solid #8888; '
            'padding-left: 0.6em"><strong>Worked solution</strong>'
            f"{answer}{markup(ex.solution_text())}{code}</div>"
        )
        if self.solution_button is not None:
            self.solution_button.disabled = True

    def _show(self, feedback: Feedback) -> None:
        self.last = feedback
        self.feedback.value = feedback_html(feedback)

    def show_comparison(self, feedback: Feedback) -> None:
        """Show the prediction-versus-measurement feedback (predict-then-run exercises)."""
        self._show(feedback)
        if feedback.status == "compared" and self.solutions != "never":
            self._show_solution()

    @property
    def feedback_text(self) -> str:
        """The feedback as plain text."""
        return _plain(self.feedback.value)


def _plain(markup_text: str) -> str:
    text = re.sub(r"<[^>]+>", " ", markup_text)
    return re.sub(r"\s+", " ", html.unescape(text)).strip()


def _user_namespace() -> dict[str, Any]:
    """The notebook's namespace: IPython's ``user_ns``, else ``__main__``'s."""
    shell = get_ipython()
    if shell is not None:
        return shell.user_ns
    return vars(sys.modules["__main__"])
