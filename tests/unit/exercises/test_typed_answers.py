"""Answers a reviewer typed into the exercises of lessons 1-5 (review r22, 2026-12-07):
each test types what the learner typed and checks what the learner is told. Every figure
typed comes from the calculators, as a learner following the lesson would get it.

That each declared mistake is recognised at all, for every variant, is
``test_bank.test_each_declared_mistake_produces_its_own_hint``; these tests pin the
particular slips the review found answered wrongly or generically.
"""

from __future__ import annotations

import pytest

from gpulesson import transformer
from gpulesson.exercises import load_lesson


def _exercise(slug: str, number: int, seed: int | None = None):
    ex = load_lesson(slug).exercises[number - 1]
    return ex if seed is None else ex.variant(seed)


@pytest.mark.parametrize("seed", [None, 0, 1, 2, 3])
def test_the_weights_alone_are_not_the_attention_parameters(seed):
    """Review r22, F3: "the Q, K, V and output-projection weights and their biases" accepted
    28,311,552, the weights alone (L·4d²), 0.13 % below the key and inside its 0.5 %
    tolerance. A parameter count is exact, and the missing biases are named."""
    ex = _exercise("memory_what_fits", 1, seed)
    cfg = transformer.preset(ex.inputs["model"])
    weights_only = cfg.layers * 4 * cfg.hidden ** 2
    feedback = ex.check(f"{weights_only:,}")
    assert feedback.status == "mistake" and feedback.mistake == "forgot_biases", \
        feedback.message
    assert "biases" in feedback.message
    assert ex.tolerance_text() == "exact"
    key = transformer.param_breakdown(cfg)["attention"]
    assert ex.check(f"{key:,}").correct
    assert not ex.check(f"{key + 1:,}").correct


def test_a_gb_answer_a_tenth_too_high_is_not_a_tib_read_as_a_tb():
    """Review r22, F4: memory ex 8 (GPT-3, TP = 8 + SP, 10.27 GB): 11.3, typed in GB, was
    "1.100× too high, the ratio of a TiB (2^40 bytes) to a TB (10^12 bytes)"."""
    ex = _exercise("memory_what_fits", 8)
    for typed in ("11.3", "11.3 GB"):
        feedback = ex.check(typed)
        assert "TiB" not in feedback.message and "TB" not in feedback.message, \
            feedback.message
