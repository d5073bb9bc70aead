"""Lesson 1, *Parallelism at the Core* (``notebooks/parallelism_at_the_core.ipynb``): the
promises its page makes, checked without running it (nbval runs it).

* the skeleton of the house style: label, shared GPU note, what you'll learn / need, key
  takeaways, key terms, the exercises link;
* every "Pause and think" has its answer in a collapsed dropdown;
* the explorers are the registry's calculators for this lesson;
* every glossary term and citation it uses exists (the book build would warn);
* each prose figure that restates a calculator's number is pinned by a hidden assert,
  and the figures below, which the lesson teaches as corrections, come from their
  published sources.
"""

from __future__ import annotations

import re

import pytest

from gpulesson import hardware, inference, memory

from . import nbtools as nb

SLUG = "parallelism_at_the_core"
NOTEBOOK = nb.notebook(SLUG)


def test_skeleton_of_the_house_style() -> None:
    nb.check_skeleton(SLUG, "Parallelism at the Core")


def test_every_pause_and_think_hides_its_answer() -> None:
    """The seed's four prompts (FLOPs of 2x3 by 3x4, the 24 GB card, the data-loading job,
    batching 8 users) at least, each followed by a collapsed answer."""
    blocks = nb.check_pauses_hide_answers(nb.markdown(NOTEBOOK), at_least=4)
    joined = " ".join(blocks)
    for seed_prompt in (r"2\\times3", "24 GB", "loading", "8 users"):
        assert re.search(seed_prompt, joined), seed_prompt


def test_explorers_are_this_lessons_registry_calculators() -> None:
    nb.check_registry_widgets(SLUG, {"amdahl", "will_it_fit", "decode_ceiling"})


def test_every_term_is_in_the_glossary() -> None:
    assert len(nb.check_terms_in_glossary(nb.markdown(NOTEBOOK))) > 30


def test_every_citation_is_in_the_bibliography() -> None:
    assert len(nb.check_citations_in_bibliography(nb.markdown(NOTEBOOK))) >= 10


def test_prose_numbers_are_pinned_by_hidden_asserts() -> None:
    # the lesson's headline figures, each checked against a calculator in a hidden cell
    nb.check_pinned(NOTEBOOK, asserts=40, pinned=(
        "== 239", "[239, 479, 957]", "== 1473", "== 184", "== 295", "(2, 2, 12, 16)",
        "round(i256, 1) == 227.6", "[21, 43, 86]"))


def test_problem_sizes_come_from_sizes_for_and_answers_are_checked() -> None:
    code = "\n".join(nb.code(NOTEBOOK, hidden=False))
    assert 'sizes_for(dev, "loop")' in code and 'sizes_for(dev, "gemm")' in code
    assert "compare(" in code and "reference=matmul_loop" in code


def test_h100_dense_and_sparse_fp16_as_taught() -> None:
    """NVIDIA H100 whitepaper (2022), SXM5 column: FP16 Tensor Core 989.4 TFLOPS dense,
    1,978.9 TFLOPS with sparsity; FP8 1,978.9 dense. The lesson teaches 989.4 as the peak
    and 1,979 as the sparse headline."""
    h100 = hardware.gpu("H100 SXM")
    assert h100.peak_flops["fp16"] == pytest.approx(989.4e12)
    assert h100.sparse_flops["fp16"] == pytest.approx(1978.9e12)
    assert h100.peak_flops["fp8"] == pytest.approx(1978.9e12)
    assert "1,979" in nb.markdown(NOTEBOOK) and "989.4" in nb.markdown(NOTEBOOK)


def test_training_state_of_a_7b_model_as_taught() -> None:
    """ZeRO (Rajbhandari et al. 2020, section 3.1): mixed-precision Adam keeps 2 + 2 + 12
    bytes per parameter; 7e9 parameters need 112 GB of model state."""
    assert memory.bytes_per_param("mixed", "adam") == 16
    assert 7e9 * memory.bytes_per_param("mixed", "adam") == pytest.approx(112e9)
    assert "112 GB" in nb.markdown(NOTEBOOK)


def test_decode_ceiling_with_kv_reads_as_taught() -> None:
    """A 7B FP16 model on 3.35 TB/s (H100 SXM datasheet): 3.35e12 / 14e9 = 239.3 tokens/s.
    With Llama 2 7B's KV cache (32 layers x 32 heads x 128 dims x 2 x 2 bytes = 512 KiB per
    token; Touvron et al. 2023, table of model shapes) at 1,000 tokens, 8 sequences:
    8 x 3.35e12 / (14e9 + 8 x 0.524288e9) = 1,473 tokens/s."""
    assert inference.decode_ceiling_tokens_per_second(
        weight_bytes=14e9, bandwidth=3.35e12) == pytest.approx(239.29, abs=0.01)
    kv = 32 * 32 * 128 * 2 * 2 * 1000
    assert inference.decode_ceiling_tokens_per_second(
        weight_bytes=14e9, bandwidth=3.35e12, batch=8,
        kv_bytes_per_sequence=kv) == pytest.approx(1472.99, abs=0.01)
    text = nb.markdown(NOTEBOOK)
    assert "1,473" in text and "239" in text and "231" in text
