"""Lesson 2, *Rooflines and Tensor Cores* (``notebooks/roofline_and_tensor_cores.ipynb``):
the promises its page makes, checked without running it (nbval runs it).

* the skeleton of the house style (``nbtools``): label, shared GPU note, what you'll learn /
  need, set-up, key takeaways, key terms, the link to the exercise notebook;
* every "Pause and think" has its answer in a collapsed dropdown, among them the three the
  lesson turns on (a square GEMM compute-bound but one token memory-bound, the sparse
  headline, a recurrent step far below the roof);
* its calculator is the registry's, its glossary terms and citations exist;
* the prose figures are pinned by hidden asserts against the calculators, and the seed
  figures the lesson recomputes come out as the seed printed them.

``hardware.flops_per_watt``, once a helper of this lesson's bank, is tested with the other
datasheet figures in ``tests/unit/test_hardware.py``.
"""

from __future__ import annotations

import pytest

from gpulesson import gemm, hardware
from gpulesson.exercises.bank.roofline_and_tensor_cores import seed_bytes_precision

from . import nbtools as nb

SLUG = "roofline_and_tensor_cores"
NOTEBOOK = nb.notebook(SLUG)


def test_skeleton_of_the_house_style() -> None:
    nb.check_skeleton(SLUG, "Rooflines and Tensor Cores", headings=("## Set-up",))
    nb.check_first_cell_picks_the_device(NOTEBOOK)


def test_every_pause_and_think_hides_its_answer() -> None:
    """Seven prompts at least, each with a collapsed answer; three of them ask why a 4096³
    GEMM is compute-bound where one token is memory-bound, why the 1,979 TFLOP/s headline
    does not apply to a dense model, and why a recurrent step sits far below the roof."""
    blocks = nb.check_pauses_hide_answers(nb.markdown(NOTEBOOK), at_least=7)
    prompts = [block.split(":::{admonition} Answer", 1)[0] for block in blocks]
    for topic in ("one-token layer", "1,979 TFLOP/s", "recurrent step"):
        assert any(topic in prompt for prompt in prompts), topic


def test_seed_gemm_figures_are_fp32_ones():
    """The seed calculator page: 4096^3 GEMM, '201.3 MB' and '682.7 ops/byte'. Both follow
    from 3·N² elements of 4 bytes (FP32), which exercise 1 asks the learner to find."""
    n = 4096
    assert round(gemm.min_bytes(n, n, n, bytes_per_element=4) / 1e6, 1) == 201.3
    assert round(gemm.arithmetic_intensity(n, n, n, bytes_per_element=4), 1) == 682.7
    assert seed_bytes_precision.answer_value() == "fp32"


def test_prose_numbers_are_pinned_by_hidden_asserts() -> None:
    # the worked example, the answers' figures and the seed corrections, each checked
    # against a calculator in a hidden cell
    nb.check_pinned(NOTEBOOK, asserts=60, pinned=(
        '"137.44 GFLOP"', '"1,365 FLOP/byte"', '"295"', '"153"', '"2.05 ms"', '"278 µs"',
        '"35.1 µs"', '"0.34%"', '"69.5 µs"', "== 67e12", "== 134e12", '"15.06"', '"85.3"',
        '"6.3"', '"3.2"'))


def test_h100_dense_and_sparse_as_taught() -> None:
    """NVIDIA H100 whitepaper (2022), SXM5 column: FP16/BF16 Tensor Core 989.4 TFLOPS dense,
    1,978.9 TFLOPS with 2:4 sparsity. A 4096³ BF16 GEMM (2·4096³ = 137.4 GFLOP) then takes
    at least 138.9 µs at the dense rate; the sparse headline would claim 69.5 µs."""
    h100 = hardware.gpu("H100 SXM")
    assert h100.peak_flops["bf16"] == pytest.approx(989.4e12)
    assert h100.sparse_flops["bf16"] == pytest.approx(1978.9e12)
    assert gemm.flops(4096, 4096, 4096) / 989.4e12 == pytest.approx(138.9e-6, abs=0.05e-6)
    text = nb.markdown(NOTEBOOK)
    for figure in ("1,979", "989.4", "139 µs", "69.5 µs"):
        assert figure in text, figure


def test_calculator_terms_citations_and_exercise_notebook() -> None:
    """The page's shared promises (nbtools): its registry calculator, glossary terms and
    citations that exist, and the exercise notebook showing every exercise once."""
    nb.check_registry_widgets(SLUG, {"gemm"})
    text = nb.markdown(NOTEBOOK)
    assert len(nb.check_terms_in_glossary(text)) >= 20
    assert len(nb.check_citations_in_bibliography(text)) >= 10
    nb.check_exercise_notebook(SLUG)
