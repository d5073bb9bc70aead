"""Lesson 3, *Memory: What Fits* (``notebooks/memory_what_fits.ipynb``): the promises its
page and its exercises make, checked without running the notebook (nbval runs it).

* the skeleton of the house style, the collapsed "Pause and think" answers, the two
  calculators of the lesson, glossary terms and citations that exist;
* the prose figures are pinned by hidden asserts against the calculators;
* the counts and corrections the lesson teaches reproduce their published sources: the
  parameter counts of GPT-2 and Llama checkpoints, 16 bytes per parameter for Adam in
  mixed precision and in FP32 (ZeRO, section 3.1), Korthikanti et al.'s attention term for
  GPT-3;
* the exercise bank has the kinds and the common mistakes the lesson promises, and its
  model solutions give the published counts.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gpulesson import calculators, memory, transformer
from gpulesson.exercises import lesson_module

REPO = Path(__file__).resolve().parents[2]
SLUG = "memory_what_fits"
NOTEBOOK = REPO / "notebooks" / f"{SLUG}.ipynb"
EXERCISES = REPO / "exercises" / f"{SLUG}.ipynb"

#: Exact parameter counts of the published checkpoints (PyTorch's count of the Hugging Face
#: weights; each model card's config.json gives the shape): GPT-2 (Radford et al. 2019),
#: Llama 2 (Touvron et al. 2023), Llama 3 (Dubey et al. 2024), Mistral 7B.
PUBLISHED = {
    "gpt2": 124_439_808,
    "gpt2-medium": 354_823_168,
    "gpt2-large": 774_030_080,
    "gpt2-xl": 1_557_611_200,
    "llama-2-7b": 6_738_415_616,
    "llama-2-13b": 13_015_864_320,
    "llama-2-70b": 68_976_648_192,
    "llama-3-8b": 8_030_261_248,
    "llama-3-70b": 70_553_706_496,
    "mistral-7b": 7_241_732_096,
}


def _cells(path: Path = NOTEBOOK) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _markdown() -> str:
    return "\n\n".join("".join(c["source"]) for c in _cells() if c["cell_type"] == "markdown")


def _code(*, hidden: bool | None = None, path: Path = NOTEBOOK) -> list[str]:
    out = []
    for cell in _cells(path):
        if cell["cell_type"] != "code":
            continue
        is_hidden = "remove-cell" in cell.get("metadata", {}).get("tags", [])
        if hidden is None or hidden == is_hidden:
            out.append("".join(cell["source"]))
    return out


def test_skeleton_of_the_house_style() -> None:
    text = _markdown()
    assert text.startswith(f"({SLUG})=\n# Memory: What Fits")
    assert "```{include} ../book/_gpu_note.md\n```" in text
    for heading in ("## What you'll learn", "## What you need", "## Set-up",
                    "## Key takeaways", "## Key terms", "## Exercises"):
        assert heading in text, heading
    assert f"(../exercises/{SLUG}.ipynb)" in text
    assert EXERCISES.is_file()
    first_code = _code()[0]
    assert "get_device()" in first_code and "dev.describe()" in first_code


def test_every_pause_and_think_hides_its_answer() -> None:
    blocks = re.findall(
        r"::::\{admonition\} Pause and think\n(.*?)\n::::", _markdown(), flags=re.S
    )
    assert len(blocks) >= 5
    for block in blocks:
        assert re.search(r":::\{admonition\} Answer\n:class: dropdown\n\S", block), block


def test_the_seed_corrections_are_taught_side_by_side() -> None:
    """The earlier page's GPT-2 breakdown, its 10 bytes/param, its activation formula and
    its 5.2 TB / 65 GPUs: each gets a warning box and a cell that computes both figures."""
    boxes = re.findall(r"```\{admonition\} A figure that circulates:(.*?)\n```",
                       _markdown(), flags=re.S)
    assert len(boxes) == 4
    joined = " ".join(boxes)
    for claim in ("84.9M", "10 bytes", "16 + 2/p", "5.2 TB"):
        assert claim in joined, claim
    code = "\n".join(_code(hidden=False))
    assert "seed_figures" in code and "seed_activation_formula" in code
    assert "n7 * 10" in code


def test_calculators_are_this_lessons_registry_entries() -> None:
    used = set(re.findall(r'calculator_widget\("([a-z_]+)"', "\n".join(_code())))
    assert used == {"param_count", "training_memory"}
    for name in used:
        assert calculators.get(name).lesson == SLUG


def test_counts_are_checked_against_arrays_and_bytes_measured() -> None:
    """Section 2 builds real arrays (on the lesson's device) and compares their element count
    with param_count; section 6 compares nbytes and the allocator with training_memory;
    section 7 measures a forward pass with tracemalloc."""
    code = "\n".join(_code(hidden=False))
    for needed in ("build_weights(gpt2_shapes(small_gpt))",
                   "build_weights(llama_shapes(small_llama))",
                   "int(a.size)", "a.nbytes", "tracemalloc.get_traced_memory()",
                   "get_default_memory_pool()"):
        assert needed in code, needed
    assert re.search(r"memory\.training_memory\(\s*n_small", code)
    hidden = "\n".join(_code(hidden=True))
    assert "counted == transformer.param_count(small_gpt)" in hidden
    assert "counted == transformer.param_count(small_llama)" in hidden
    assert "kept_bytes == memory.activation_bytes_per_layer(" in hidden


def _glossary_terms() -> set[str]:
    text = (REPO / "book" / "glossary.md").read_text(encoding="utf-8")
    block = text.split("```{glossary}", 1)[1]
    return {line.strip().lower() for line in block.splitlines()
            if line and not line.startswith((" ", ":", "`", "%"))}


def test_every_term_is_in_the_glossary() -> None:
    terms = {m.group(2) or m.group(1)
             for m in re.finditer(r"\{term\}`([^`<]+?)(?:\s*<([^>]+)>)?`", _markdown())}
    assert len(terms) >= 20
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
    assert hidden.count("assert") >= 50
    for pinned in ("124_439_808", "163_037_184", "6_738_415_616", "1_291_845_632",
                   '"12.55 GiB"', '"107.8 GB"', '"67.4 GB"', '"104.2 GB"', '"275.4 GB"',
                   '"91.3 GB"', '"11.4 GB"', '"68.6 GB"', "== 17", "(2, 15, 16)", "== 73"):
        assert pinned in hidden, pinned


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_parameter_counts_match_the_published_checkpoints(name: str) -> None:
    """param_count and the exercise's model solutions give each checkpoint's exact count."""
    cfg = transformer.preset(name)
    assert transformer.param_count(cfg) == PUBLISHED[name]
    bank = lesson_module(SLUG)
    if name.startswith("gpt2"):
        got = bank.gpt2_param_count(vocab=cfg.vocab, positions=cfg.max_positions,
                                    hidden=cfg.hidden, layers=cfg.layers)
    else:
        got = bank.llama_param_count(vocab=cfg.vocab, hidden=cfg.hidden, layers=cfg.layers,
                                     ffn=cfg.ffn, heads=cfg.heads, kv_heads=cfg.kv_heads)
    assert got == PUBLISHED[name]


def test_gpt2_small_breakdown_against_the_seed_figures() -> None:
    """GPT-2 small (V = 50,257, P = 1,024, d = 768, L = 12): attention 4d² + 4d and MLP
    8d² + 5d per block. The earlier page's "84.9M attention" is L·12d² = 84,934,656, the
    weight matrices of attention and MLP together."""
    parts = transformer.param_breakdown(transformer.preset("gpt2"))
    assert parts["attention"] == 12 * (4 * 768**2 + 4 * 768) == 28_348_416
    assert parts["mlp"] == 12 * (8 * 768**2 + 5 * 768) == 56_669_184
    assert round(12 * 12 * 768**2 / 1e6, 1) == 84.9
    assert "28,348,416" in lesson_module(SLUG).EXERCISES[0].answer_text()


def test_sixteen_bytes_per_parameter_in_both_precisions() -> None:
    """ZeRO (Rajbhandari et al. 2020), section 3.1: mixed-precision Adam keeps 2 + 2 + K
    bytes with K = 12; FP32 Adam keeps 4 + 4 + 8. The seed's "10 vs 16" is wrong."""
    assert memory.model_state_bytes("mixed", "adam") == memory.ModelStateBytes(2, 2, 12)
    assert memory.model_state_bytes("fp32", "adam") == memory.ModelStateBytes(4, 4, 8)
    ex = next(e for e in lesson_module(SLUG).EXERCISES if e.number == 5)
    assert ex.answer_value() == 16 * PUBLISHED["llama-2-7b"]
    assert ex.check(f"{10 * PUBLISHED['llama-2-7b'] / 1e9:.2f} GB").mistake == "ten_bytes"


def test_gpt3_attention_term_as_in_korthikanti() -> None:
    """Korthikanti et al. 2022, section 4.1: for GPT-3 (a = 96, s = 2048, h = 12288) the
    attention term 5as/h is 80, against 34 for the rest; selective recomputation keeps
    the 34."""
    s, h, a = 2048, 12288, 96
    assert 5 * a * s // h == 80
    full = memory.activation_bytes_per_layer(seq_len=s, batch=1, hidden=h, heads=a)
    selective = memory.activation_bytes_per_layer(seq_len=s, batch=1, hidden=h, heads=a,
                                                  recompute="selective")
    assert full == s * h * (34 + 80) and selective == 34 * s * h
    assert "80" in _markdown() and "275.4 GB" in _markdown()


def test_exercise_bank_promises() -> None:
    exercises = lesson_module(SLUG).EXERCISES
    assert len(exercises) >= 5
    assert {ex.kind for ex in exercises} >= {"numeric", "choice", "code"}
    keys = {m.key for ex in exercises for m in ex.mistakes}
    for mistake in ("ten_bytes", "gib_as_gb", "forgot_training_state", "forgot_optimizer",
                    "no_recompute", "no_sequence_parallel", "rounded_down"):
        assert mistake in keys, mistake
    shown = {int(n) for n in re.findall(r"lesson\.show\((\d+)\)",
                                        "\n".join(_code(path=EXERCISES)))}
    assert shown == {ex.number for ex in exercises}
