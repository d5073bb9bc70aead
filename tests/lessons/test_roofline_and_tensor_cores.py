"""Lesson 2, *Rooflines and Tensor Cores*: the seed figures the lesson recomputes, and the
promises every lesson page makes (``nbtools``) that this page keeps.

``hardware.flops_per_watt``, once a helper of this lesson's bank, is tested with the other
datasheet figures in ``tests/calculators/test_sources_hardware.py``.
"""

from __future__ import annotations

from gpulesson import gemm
from gpulesson.exercises.bank.roofline_and_tensor_cores import seed_bytes_precision

from . import nbtools as nb

SLUG = "roofline_and_tensor_cores"


def test_seed_gemm_figures_are_fp32_ones():
    """The seed calculator page: 4096^3 GEMM, '201.3 MB' and '682.7 ops/byte'. Both follow
    from 3·N² elements of 4 bytes (FP32), which exercise 1 asks the learner to find."""
    n = 4096
    assert round(gemm.min_bytes(n, n, n, bytes_per_element=4) / 1e6, 1) == 201.3
    assert round(gemm.arithmetic_intensity(n, n, n, bytes_per_element=4), 1) == 682.7
    assert seed_bytes_precision.answer_value() == "fp32"


def test_calculator_terms_citations_and_exercise_notebook() -> None:
    """The page's shared promises (nbtools): its registry calculator, glossary terms and
    citations that exist, and the exercise notebook showing every exercise once."""
    nb.check_registry_widgets(SLUG, {"gemm"})
    text = nb.markdown(nb.notebook(SLUG))
    assert len(nb.check_terms_in_glossary(text)) >= 10
    assert len(nb.check_citations_in_bibliography(text)) >= 5
    nb.check_exercise_notebook(SLUG)
