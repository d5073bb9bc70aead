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

import json
import re
from pathlib import Path

import pytest

from gpulesson import calculators, hardware, inference, memory

REPO = Path(__file__).resolve().parents[2]
SLUG = "parallelism_at_the_core"
NOTEBOOK = REPO / "notebooks" / f"{SLUG}.ipynb"


def _cells() -> list[dict]:
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]


def _markdown() -> str:
    return "\n\n".join("".join(c["source"]) for c in _cells() if c["cell_type"] == "markdown")


def _code(*, hidden: bool | None = None) -> list[str]:
    out = []
    for cell in _cells():
        if cell["cell_type"] != "code":
            continue
        is_hidden = "remove-cell" in cell.get("metadata", {}).get("tags", [])
        if hidden is None or hidden == is_hidden:
            out.append("".join(cell["source"]))
    return out


def test_skeleton_of_the_house_style() -> None:
    text = _markdown()
    assert text.startswith(f"({SLUG})=\n# Parallelism at the Core")
    assert "```{include} ../book/_gpu_note.md\n```" in text
    for heading in ("## What you'll learn", "## What you need", "## Key takeaways",
                    "## Key terms", "## Exercises"):
        assert heading in text, heading
    assert f"(../exercises/{SLUG}.ipynb)" in text
    assert (REPO / "exercises" / f"{SLUG}.ipynb").is_file()


def test_every_pause_and_think_hides_its_answer() -> None:
    """The seed's four prompts (FLOPs of 2x3 by 3x4, the 24 GB card, the data-loading job,
    batching 8 users) at least, each followed by a collapsed answer."""
    blocks = re.findall(
        r"::::\{admonition\} Pause and think\n(.*?)\n::::", _markdown(), flags=re.S
    )
    assert len(blocks) >= 4
    for block in blocks:
        assert re.search(r":::\{admonition\} Answer\n:class: dropdown\n\S", block), block
    joined = " ".join(blocks)
    for seed_prompt in (r"2\\times3", "24 GB", "loading", "8 users"):
        assert re.search(seed_prompt, joined), seed_prompt


def test_explorers_are_this_lessons_registry_calculators() -> None:
    used = set(re.findall(r'calculator_widget\("([a-z_]+)"', "\n".join(_code())))
    assert used == {"amdahl", "will_it_fit", "decode_ceiling"}
    for name in used:
        assert calculators.get(name).lesson == SLUG


def _glossary_terms() -> set[str]:
    text = (REPO / "book" / "glossary.md").read_text(encoding="utf-8")
    block = text.split("```{glossary}", 1)[1]
    return {line.strip().lower() for line in block.splitlines()
            if line and not line.startswith((" ", ":", "`"))}


def test_every_term_is_in_the_glossary() -> None:
    terms = {m.group(2) or m.group(1)
             for m in re.finditer(r"\{term\}`([^`<]+?)(?:\s*<([^>]+)>)?`", _markdown())}
    assert len(terms) > 30
    missing = sorted(t for t in terms if t.strip().lower() not in _glossary_terms())
    assert not missing, f"add to book/glossary.md: {missing}"


def test_every_citation_is_in_the_bibliography() -> None:
    bib = (REPO / "book" / "references.bib").read_text(encoding="utf-8")
    keys = set(re.findall(r"^@\w+\{([^,]+),", bib, flags=re.M))
    cited = {k.strip() for group in re.findall(r"\{cite(?::[pt])?\}`([^`]+)`", _markdown())
             for k in group.split(",")}
    assert len(cited) >= 10
    assert cited <= keys, f"add to book/references.bib: {sorted(cited - keys)}"


def test_prose_numbers_are_pinned_by_hidden_asserts() -> None:
    hidden = "\n".join(_code(hidden=True))
    assert hidden.count("assert") >= 40
    # the lesson's headline figures, each checked against a calculator in a hidden cell
    for pinned in ("== 239", "[239, 479, 957]", "== 1473", "== 184", "== 295",
                   "(2, 2, 12, 16)", "round(i256, 1) == 227.6", "[21, 43, 86]"):
        assert pinned in hidden, pinned


def test_problem_sizes_come_from_sizes_for_and_answers_are_checked() -> None:
    code = "\n".join(_code(hidden=False))
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
    assert "1,979" in _markdown() and "989.4" in _markdown()


def test_training_state_of_a_7b_model_as_taught() -> None:
    """ZeRO (Rajbhandari et al. 2020, section 3.1): mixed-precision Adam keeps 2 + 2 + 12
    bytes per parameter; 7e9 parameters need 112 GB of model state."""
    assert memory.bytes_per_param("mixed", "adam") == 16
    assert 7e9 * memory.bytes_per_param("mixed", "adam") == pytest.approx(112e9)
    assert "112 GB" in _markdown()


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
    text = _markdown()
    assert "1,473" in text and "239" in text and "231" in text
