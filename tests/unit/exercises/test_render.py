"""gpulesson.exercises.render: the feedback's HTML, the static rendering of an exercise for
the site, the mini-markup of the texts, and the answer key."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from gpulesson.exercises import (
    Feedback,
    Mistake,
    PredictExercise,
    answer_key_markdown,
    static_html,
)
from gpulesson.exercises.core import STATUSES
from gpulesson.exercises.render import (
    STATUS_STYLE,
    RenderedFeedback,
    feedback_html,
    markup,
    rendered,
)

from .demo import fit_exercise, flops_code_exercise, weights_exercise


# ---------------------------------------------------------------- feedback
def test_feedback_html_is_escaped_and_coloured():
    html = feedback_html(Feedback("demo-ex1", "invalid", "<script>alert(1)</script>",
                                  details=("a < b",)))
    assert "<script>" not in html and "&lt;script&gt;" in html and "a &lt; b" in html
    assert 'role="alert"' in html and "color:" in html and "#d32f2f" in html


@pytest.mark.parametrize("status", STATUSES)
def test_every_status_has_a_colour_and_a_symbol_never_colour_alone(status):
    colour, symbol = STATUS_STYLE[status]
    soup = BeautifulSoup(feedback_html(Feedback("demo-ex1", status, "Message.")),
                         "html.parser")
    block = soup.find("div", class_=f"gl-feedback-{status}")
    assert colour in block["style"] and block["aria-live"] == "polite"
    assert block["role"] == ("alert" if status in ("invalid", "timeout", "error") else "status")
    assert block.find("span", attrs={"aria-hidden": "true"}).get_text() == symbol
    assert "Message." in block.get_text()


def test_rendered_feedback_is_the_same_data_and_displays_as_html():
    plain = weights_exercise().check("13.04 GB")
    shown = rendered(plain)
    assert isinstance(shown, RenderedFeedback) and isinstance(shown, Feedback)
    assert (shown.status, shown.message, shown.mistake, shown.value, shown.details) == (
        plain.status, plain.message, plain.mistake, plain.value, plain.details)
    assert shown._repr_html_() == shown.to_html() == feedback_html(plain)
    assert rendered(shown) is shown
    assert not hasattr(plain, "_repr_html_")     # the core's Feedback carries no HTML


# ---------------------------------------------------------------- mini-markup
def test_markup_paragraphs_lists_code_and_bold_everything_else_escaped():
    html = markup("First **bold** and `a<b`.\nSame paragraph.\n\n- one\n- two <i>\n\n"
                  "```\nx = 1 < 2\n```")
    assert html.split("\n") == [
        "<p>First <strong>bold</strong> and <code>a&lt;b</code>. Same paragraph.</p>",
        "<ul><li>one</li><li>two &lt;i&gt;</li></ul>",
        "<pre><code>x = 1 &lt; 2</code></pre>"]
    assert markup("$5 and $6") == "<p>$5 and $6</p>"   # no maths: dollars stay dollars


# ---------------------------------------------------------------- static rendering
def test_static_html_of_a_numeric_exercise():
    soup = BeautifulSoup(static_html(weights_exercise()), "html.parser")
    block = soup.find("div", class_="gl-exercise")
    assert block["id"] == "demo-ex1" and block["data-kind"] == "numeric"
    assert "mathjax_ignore" in block["class"] and block["role"] == "region"
    assert block["aria-labelledby"] == block.find("h3")["id"]
    assert block.find("h3").get_text() == "Exercise 1: Weights"
    assert block.find(class_="gl-answer-format").get_text() == (
        "Answer in GB (other units such as MB, GiB or bytes are converted).")
    assert [li.get_text() for li in block.select("details.gl-hints li")] == [
        "How many bytes does one FP16 number take?", "Multiply by 7,000,000,000."]
    solution = block.find("details", class_="gl-solution")
    assert not solution.has_attr("open")
    assert solution.find(class_="gl-answer").get_text() == "Answer: 14 GB"


def test_static_html_says_how_to_answer_each_kind():
    choice = BeautifulSoup(static_html(fit_exercise()), "html.parser")
    assert [(li["data-option"], li.get_text()) for li in choice.select("ol.gl-options li")] \
        == [("yes", "Yes, with 24 GB"), ("no", "No")]
    code = BeautifulSoup(static_html(flops_code_exercise()), "html.parser")
    assert code.find(class_="gl-signature").get_text() == "def matmul_flops(m, k, n):\n    ..."
    assert "2 * m * k * n" in code.find(class_="gl-model-solution").get_text()
    predict = PredictExercise(lesson="demo", number=5, title="t", question="q", solution="s",
                              unit="×")
    soup = BeautifulSoup(static_html(predict), "html.parser")
    assert soup.find(class_="gl-answer-format").get_text() == (
        "Predict with a number of times (for example 3 or 3×).")


def test_student_rendering_withholds_the_answer():
    html = static_html(flops_code_exercise(), solution=False)
    soup = BeautifulSoup(html, "html.parser")
    assert soup.find(class_="gl-solution") is None and soup.find(class_="gl-answer") is None
    assert soup.find(class_="gl-solution-withheld") is not None
    assert flops_code_exercise().model_solution_source() not in html


# ---------------------------------------------------------------- answer key
def test_answer_key_lists_answer_tolerance_hints_and_mistakes():
    key = answer_key_markdown([weights_exercise(), fit_exercise(), flops_code_exercise()],
                              title="Demo")
    assert key.startswith("# Answer key: Demo\n\nVariant: the lesson's own numbers.")
    assert "**Answer:** 14 GB (accepted within ±2%)" in key
    assert "1. How many bytes does one FP16 number take?" in key
    assert "| `one_byte` | 7 GB | One byte per parameter is INT8, not FP16. |" in key
    assert "- `yes`: Yes, with 24 GB **(correct)**" in key and "- `no`: No\n" in key
    assert "checked against the calculator on 9 inputs" in key
    assert "```python\n" + flops_code_exercise().model_solution_source() + "\n```" in key
    assert key.endswith("\n") and not key.endswith("\n\n")


def test_answer_key_says_what_each_mistake_gives_or_that_it_cannot_arise():
    """The "gives" column said "(see hint)" for a mistake that does not apply to a
    variant's numbers (its hint is never shown there) and for every mistake of a code
    exercise, which left an instructor marking by hand with nothing to compare."""
    never = Mistake("never", "Not with these numbers.", lambda p: None)
    ex = weights_exercise(mistakes=(never,))
    key = answer_key_markdown([ex, flops_code_exercise()], title="Demo")
    assert "(see hint)" not in key
    assert "| `never` | does not arise with these numbers | Not with these numbers. |" in key
    assert "| `counted_macs` | `matmul_flops(m=2, k=3, n=4)` returns 24, not 48 |" in key


def test_answer_key_names_the_variant_and_escapes_table_cells():
    ex = weights_exercise(mistakes=(Mistake("pipe", "A | B", lambda p: p["n"]),)).variant(3)
    key = answer_key_markdown([ex], title="Demo")
    assert "Variant seed: 3." in key
    assert "A \\| B" in key
