"""Static renderings of exercises: HTML for the site and Markdown for the answer key.

Standard library only. The site's markup (``CONTRIBUTING.md``, "Two renderings")::

    <div class="gl-exercise mathjax_ignore" id="SLUG-exN" data-kind="numeric">
      <h3 class="gl-exercise-title">Exercise N: title</h3>
      <div class="gl-question">...</div>
      <p class="gl-answer-format">...</p>          (how to answer: unit, options, signature)
      <details class="gl-hints">...</details>          (progressive hints, collapsed)
      <details class="gl-solution">                    (collapsed by default)
        <summary>Answer and worked solution</summary>
        <p class="gl-answer">...</p> <div class="gl-worked">...</div>
      </details>
    </div>

Texts use a tiny markup, the same in the widget, on the site and in the answer key:
blank lines separate paragraphs, lines starting with ``- `` form a list, ```code```,
``**bold**``, ``*emphasis*`` and powers (``10^9``, ``2^-14``, ``2^(e−1)``) work inline.
Everything else is escaped. There is no maths in it, and
``mathjax_ignore`` keeps MathJax away: JupyterLab's (used when a front end shows the
static rendering) pairs any two ``$`` of a paragraph, and prices often come in pairs.

The course stylesheet for this markup is ``book/_static/gpulesson.css``; the notebook
rendering uses inline styles so it looks right without it.
"""

from __future__ import annotations

import html
import re
from dataclasses import fields

from gpulesson.exercises import core
from gpulesson.exercises.core import Exercise, Feedback
from gpulesson.units import keep_percent

__all__ = ["RenderedFeedback", "STATUS_STYLE", "answer_key_markdown", "feedback_html",
           "markup", "rendered", "static_html"]

#: Colours with at least 4.5:1 contrast on white and on JupyterLab's dark theme
#: background for the bold text used (the red matches :mod:`gpulesson.widgets`).
STATUS_STYLE = {
    "correct": ("#2e7d32", "✔"),
    "mistake": ("#b45309", "✘"),
    "incorrect": ("#b45309", "✘"),
    "invalid": ("var(--jp-error-color1, #d32f2f)", "⚠"),
    "committed": ("#1565c0", "✎"),
    "compared": ("#1565c0", "↔"),
    "timeout": ("var(--jp-error-color1, #d32f2f)", "⏱"),
    "error": ("var(--jp-error-color1, #d32f2f)", "⚠"),
}

_OTHER_UNITS = {
    "bytes": " (other units such as MB, GiB or bytes are converted)",
    "flops": " (other units such as GFLOP or TFLOP are converted)",
    "flop/s": " (other units such as TFLOP/s are converted)",
    "bytes/s": " (other units such as GB/s or TB/s are converted)",
    "seconds": " (other units such as ms, s or h are converted)",
}
_INLINE_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*([^*]+)\*\*")
#: ``*emphasis*``: one star each side, touching a word (``2 * 3`` and ``a*b`` stay as they are).
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*]*?[^\s*])\*(?![\w*])")
#: A power ``10^9``, ``2^-14``, ``2^(e−1)``: the exponent is a signed number or word, or a
#: bracketed expression (shown without its brackets).
_POWER = re.compile(r"(?<=[\w)])\^(?:\(([^()]{1,24})\)|([+\-\u2212]?[\w.]*\w))")


def _power(match: re.Match[str]) -> str:
    exponent = match.group(1) if match.group(1) is not None else match.group(2)
    return "<sup>" + exponent.replace("-", "\u2212") + "</sup>"


def _prose(escaped: str) -> str:
    """Bold, emphasis and powers in text already escaped for HTML, each figure kept on one
    line with its "%" (:func:`gpulesson.units.keep_percent`)."""
    escaped = _BOLD.sub(r"<strong>\1</strong>", keep_percent(escaped))
    escaped = _EMPHASIS.sub(r"<em>\1</em>", escaped)
    return _POWER.sub(_power, escaped)


def _inline(text: str) -> str:
    out = []
    pos = 0
    for match in _INLINE_CODE.finditer(text):
        out.append(_prose(html.escape(text[pos:match.start()])))
        out.append(f"<code>{html.escape(match.group(1))}</code>")
        pos = match.end()
    out.append(_prose(html.escape(text[pos:])))
    return "".join(out)


def markup(text: str) -> str:
    """Render the exercise mini-markup (paragraphs, ``- `` lists, code, bold, emphasis,
    powers) as HTML."""
    blocks = re.split(r"\n\s*\n", text.strip())
    out = []
    for block in blocks:
        lines = [line.rstrip() for line in block.splitlines() if line.strip()]
        if not lines:
            continue
        if lines[0].startswith("```"):
            body = "\n".join(ln for ln in lines if not ln.startswith("```"))
            out.append(f"<pre><code>{html.escape(body)}</code></pre>")
        elif all(line.lstrip().startswith("- ") for line in lines):
            items = "".join(f"<li>{_inline(line.lstrip()[2:])}</li>" for line in lines)
            out.append(f"<ul>{items}</ul>")
        else:
            out.append(f"<p>{_inline(' '.join(line.strip() for line in lines))}</p>")
    return "\n".join(out)


def feedback_html(feedback: Feedback) -> str:
    """Inline-styled feedback (the notebook has no course CSS), safe to show anywhere:
    colour plus a symbol and a word, never colour alone; the message is escaped."""
    colour, symbol = STATUS_STYLE[feedback.status]
    role = "alert" if feedback.is_error else "status"
    details = "".join(f"<br><small>{html.escape(line)}</small>" for line in feedback.details)
    printed = ""
    if feedback.output:
        printed = ('<div class="gl-printed" style="color: inherit; font-weight: normal">'
                   "<small>Your code printed:</small>"
                   '<pre style="max-height: 12em; overflow: auto; margin: 0.2em 0">'
                   f"{html.escape(feedback.output)}</pre></div>")
    return (
        f'<div class="gl-feedback gl-feedback-{feedback.status}" role="{role}" '
        f'data-status="{feedback.status}" aria-live="polite" '
        f'style="color: {colour}; font-weight: 600; margin: 0.3em 0">'
        f'<span aria-hidden="true">{symbol}</span> {html.escape(feedback.message)}{details}'
        f"{printed}</div>"
    )


class RenderedFeedback(Feedback):
    """A :class:`~gpulesson.exercises.core.Feedback` that Jupyter (and the site's build)
    shows as :func:`feedback_html`: what :class:`~gpulesson.exercises.lesson.Lesson`
    returns from ``check``, ``predict`` and ``reveal``, so that a cell ending in
    ``lesson.reveal(10, measured)`` displays the feedback."""

    def to_html(self) -> str:
        """The feedback's HTML (:func:`feedback_html`)."""
        return feedback_html(self)

    def _repr_html_(self) -> str:
        return feedback_html(self)


def rendered(feedback: Feedback) -> RenderedFeedback:
    """The same feedback, as a :class:`RenderedFeedback`."""
    if isinstance(feedback, RenderedFeedback):
        return feedback
    return RenderedFeedback(*(getattr(feedback, f.name) for f in fields(Feedback)))


def answer_format_html(exercise: Exercise) -> str:
    """How to answer, for the static page (the widget shows its own controls)."""
    if isinstance(exercise, core.ChoiceExercise):
        items = "".join(f'<li data-option="{html.escape(key)}">{_inline(label)}</li>'
                        for key, label in exercise.option_pairs())
        return (f'<p class="gl-answer-format">Choose one:</p>'
                f'<ol class="gl-options" type="A">{items}</ol>')
    if isinstance(exercise, core.CodeExercise):
        return ('<p class="gl-answer-format">Write a function:</p>'
                f'<pre class="gl-signature"><code>def {html.escape(exercise.function_name)}'
                f"({html.escape(exercise.signature)}):\n    ...</code></pre>")
    if isinstance(exercise, (core.NumericExercise, core.PredictExercise)):
        if exercise.unit in ("×", "x"):
            unit = " with a number of times (for example 3 or 3×)"
        else:
            unit = f" in {html.escape(exercise.unit)}" if exercise.unit else " with a number"
        verb = "Predict" if isinstance(exercise, core.PredictExercise) else "Answer"
        other = _OTHER_UNITS.get(exercise.dimension, "")
        return f'<p class="gl-answer-format">{verb}{unit}{other}.</p>'
    return ""


def static_html(exercise: Exercise, *, solution: bool = True) -> str:
    """The static rendering of ``exercise`` for the site.

    Parameters
    ----------
    exercise:
        any exercise kind, bound to its inputs.
    solution:
        include the answer and worked solution (collapsed). ``False`` for student editions:
        the answer must not sit in a notebook's saved outputs.
    """
    eid = html.escape(exercise.id)
    heading_id = f"{eid}-title"
    parts = [
        f'<div class="gl-exercise mathjax_ignore" id="{eid}" data-kind="{exercise.kind}" '
        f'role="region" aria-labelledby="{heading_id}">',
        f'<h3 class="gl-exercise-title" id="{heading_id}">Exercise {exercise.number}: '
        f"{html.escape(keep_percent(exercise.title_text()))}</h3>",
        f'<div class="gl-question">{markup(exercise.question_text())}</div>',
        answer_format_html(exercise),
    ]
    hints = exercise.hint_texts()
    if hints:
        items = "".join(f"<li>{markup(h)}</li>" for h in hints)
        parts.append(f'<details class="gl-hints"><summary>Hints ({len(hints)})</summary>'
                     f"<ol>{items}</ol></details>")
    if solution:
        parts.append(
            '<details class="gl-solution"><summary>Answer and worked solution</summary>'
            f'<p class="gl-answer"><strong>Answer:</strong> {_inline(exercise.answer_text())}'
            f"</p>{_worked_html(exercise)}</details>"
        )
    else:
        parts.append('<p class="gl-solution-withheld"><em>Solutions are not included in this '
                     "edition; your instructor has them.</em></p>")
    parts.append("</div>")
    return "\n".join(p for p in parts if p)


def _worked_html(exercise: Exercise) -> str:
    body = markup(exercise.solution_text())
    if isinstance(exercise, core.CodeExercise) and exercise.model_solution is not None:
        body += (f'<pre class="gl-model-solution"><code>'
                 f"{html.escape(exercise.model_solution_source())}</code></pre>")
    return f'<div class="gl-worked">{body}</div>'


def answer_key_markdown(exercises: list[Exercise], *, title: str) -> str:
    """The instructor's answer key: questions, answers, tolerances, solutions, mistakes."""
    lines = [f"# Answer key: {title}", ""]
    seeds = {e.variant_seed for e in exercises}
    if seeds == {None}:
        lines += ["Variant: the lesson's own numbers.", ""]
    else:
        lines += [f"Variant seed: {', '.join(str(s) for s in sorted(seeds, key=str))}.", ""]
    lines += ["Every answer below was computed by the course's calculators "
              "(`gpulesson`), not typed by hand.", ""]
    for ex in exercises:
        lines += [f"## Exercise {ex.number}: {ex.title_text()}", "", f"`{ex.id}` ({ex.kind})", ""]
        lines += [ex.question_text(), ""]
        if isinstance(ex, core.ChoiceExercise):
            for key, label in ex.option_pairs():
                mark = " **(correct)**" if key == ex.answer_value() else ""
                lines.append(f"- `{key}`: {label}{mark}")
            lines.append("")
        if isinstance(ex, core.NumericExercise):
            tolerance = ex.tolerance_text()
            accepted = "exact" if tolerance == "exact" else f"accepted within {tolerance}"
            lines += [f"**Answer:** {ex.answer_text()} ({accepted})", ""]
        elif isinstance(ex, core.PredictExercise):
            lines += ["**Answer:** no fixed value: the notebook measures it on the learner's "
                      "machine and compares it with the committed prediction.", ""]
        elif isinstance(ex, core.CodeExercise):
            lines += [f"**Answer:** `{ex.function_name}({ex.signature})`, checked against the "
                      f"calculator on {len(ex.trial_inputs())} inputs.", ""]
            if ex.model_solution is not None:
                lines += ["```python", ex.model_solution_source(), "```", ""]
        else:
            lines += [f"**Answer:** {ex.answer_text()}", ""]
        lines += ["**Worked solution.**", "", ex.solution_text(), ""]
        hints = ex.hint_texts()
        if hints:
            lines += ["**Hints, in order:**", ""]
            lines += [f"{i}. {h}" for i, h in enumerate(hints, 1)]
            lines.append("")
        if ex.mistakes:
            examples = ex.example_answers()
            lines += ["**Common mistakes recognised:**", "",
                      "| mistake | gives | hint shown |", "|---|---|---|"]
            for mistake in ex.mistakes:
                gives = _mistake_gives(ex, mistake, examples)
                hint = ex.mistake_hint(mistake.key).replace("|", "\\|").replace("\n", " ")
                lines.append(f"| `{mistake.key}` | {gives} | {hint} |")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _mistake_gives(ex: Exercise, mistake: core.Mistake, examples: dict) -> str:
    """What a learner making ``mistake`` answers, as the answer key's "gives" column shows
    it: the answer; for a code exercise, what the slipped function returns on the first
    input where it differs; or that the mistake does not arise with these numbers (its
    hint is then never shown)."""
    if getattr(mistake, "kernel", None) is not None:  # a kernel bug: found by running it
        return "a kernel with this bug (run by the checker)"
    if isinstance(ex, core.CodeExercise):
        for inputs in ex.trial_inputs():
            wrong = mistake.value(inputs)
            if wrong is not None and float(wrong) != float(ex.reference(**inputs)):
                call = ", ".join(f"{k}={v!r}" for k, v in inputs.items())
                return (f"`{ex.function_name}({call})` returns {core.format_number(wrong)}, "
                        f"not {core.format_number(ex.reference(**inputs))}")
        return "does not arise on the inputs checked"
    if mistake.key in examples:
        return str(examples[mistake.key])
    return "does not arise with these numbers"
