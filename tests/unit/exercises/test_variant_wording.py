"""How the questions of every lesson read in every class variant: an article before
a number ("an 8,192-token prompt", "an 8B model"), one token in the singular, and a run's
FLOPs written as the answer is (audit of the learner's and instructor's workflows,
2026-12-06)."""

from __future__ import annotations

import re

import pytest

from gpulesson.course import SLUGS
from gpulesson.exercises import lesson_module

SEEDS = [None, *range(60)]
LESSONS = SLUGS

#: "a" before a number read aloud with a vowel first (eight, eleven, eighteen ...).
A_BEFORE_VOWEL_NUMBER = re.compile(r"\b[Aa] (8|11,|18,|11\b|18\b|11B|18B)")
#: A count of one with a plural noun ("1 tokens"; "γ + 1 tokens" is a formula).
ONE_PLURAL = re.compile(r"(?<![\d.,])(?<!\+ )1 (tokens|GPUs|sequences|conversations|users)\b")
#: A figure with a thousands separator and three decimals ("80,860.987 EFLOP"), or a
#: bandwidth padded with zeros ("864.00 GB/s").
OVERPRECISE = re.compile(r"\d{1,3}(,\d{3})+\.\d{3}|\d\.\d*0 [GT]B/s")
#: A model size with a lower-case b ("A 7b-parameter model": str.capitalize lowers the
#: rest of a sentence; lesson 1, exercise 15). Model names such as gpt-oss-20b are not sizes.
LOWER_B_SIZE = re.compile(r"(?<![-\w.])\d+(\.\d+)?b-parameter")
#: Two numbers in a row before a unit ("at least 2 80 GB GPUs", "at least 1 80 GB GPUs").
STACKED_NUMBERS = re.compile(r"(?<![\d.,])\d[\d,]* \d[\d,.]* (GB|TB) GPUs?\b")


def _texts(slug: str):
    for ex in lesson_module(slug).EXERCISES:
        for seed in SEEDS:
            variant = ex.variant(seed)
            for text in (variant.title_text(), variant.question_text(),
                         variant.solution_text(), *variant.hint_texts()):
                yield f"{ex.id} seed {seed}", text


@pytest.mark.parametrize("slug", LESSONS)
def test_questions_read_right_in_every_variant(slug):
    found = []
    for where, text in _texts(slug):
        for pattern in (A_BEFORE_VOWEL_NUMBER, ONE_PLURAL, OVERPRECISE, LOWER_B_SIZE,
                        STACKED_NUMBERS):
            match = pattern.search(text)
            if match:
                found.append(f"{where}: ...{text[max(0, match.start() - 30):match.end() + 20]}")
    assert not found, "\n".join(found[:10])


def test_the_run_flops_are_written_as_the_answer_is():
    ex = lesson_module("optimisations").EXERCISES[4]
    assert "6·N·D = 8.086e+22 FLOP." in ex.question_text()
    assert ex.answer_text() == "2.695e+22 FLOP"
