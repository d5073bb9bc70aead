"""The lesson *Skeleton Lesson* (``notebooks/skeleton_lesson.ipynb``): the promises its
page makes, checked without running it (nbval runs it).

Written by ``make lesson`` from ``scripts/lesson_skeleton/``. Keep the checks as the lesson
grows: every figure of the prose is a claim rebuilt from the calculators (``CLAIMS``) or a
number that is not a result (``NOT_FIGURES``); the house-style skeleton, collapsed answers,
the registry calculators, glossary terms and citations (``nbtools``).
"""

from __future__ import annotations

from gpulesson import calculators, course, memory, transformer, units

from . import nbtools as nb
from .claims import claim_tests, claims, page

SLUG = "skeleton_lesson"
NOTEBOOK = nb.notebook(SLUG)
PAGE = page(NOTEBOOK)
#: The worked example: the weights calculator as the page first shows it.
WORKED = calculators.evaluate("skeleton_lesson_weights")["text"]


def _parameters() -> int:
    return transformer.param_count(transformer.preset("llama-2-7b"))


CLAIMS = claims(
    # 1. The bytes of the weights
    lambda: f"has {_parameters():,} parameters; in BF16 its weights take **{WORKED['weights']}**",
    lambda: units.format_bytes(memory.weight_bytes(_parameters(), precision="bf16"),
                               binary=True),
)

#: Numbers of the prose that are not results.
NOT_FIGURES: tuple[str, ...] = ()


(test_claim, test_every_figure_is_claimed,
 test_every_listed_non_figure_is_on_the_page) = claim_tests(__name__, NOTEBOOK)


def test_skeleton_of_the_house_style() -> None:
    text = nb.check_skeleton(SLUG, course.title(SLUG), headings=("## Set-up",))
    nb.check_first_cell_picks_the_device(NOTEBOOK)
    nb.check_pauses_hide_answers(text, at_least=1)
    nb.check_terms_in_glossary(text)
    nb.check_citations_in_bibliography(text)


def test_calculators_and_exercise_notebook() -> None:
    nb.check_registry_widgets(SLUG, {"skeleton_lesson_weights"})
    nb.check_exercise_notebook(SLUG)


def test_no_hidden_cell_asserts() -> None:
    """What the lesson checks, a learner can read: no hidden cell holds an assert."""
    assert not [src for src in nb.code(NOTEBOOK, hidden=True) if "assert" in src]
