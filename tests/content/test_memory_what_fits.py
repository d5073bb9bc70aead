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

import re

import pytest

from gpulesson import memory, transformer
from gpulesson.exercises import lesson_module

from . import nbtools as nb

SLUG = "memory_what_fits"
NOTEBOOK = nb.notebook(SLUG)

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


def test_skeleton_of_the_house_style() -> None:
    nb.check_skeleton(SLUG, "Memory: What Fits", headings=("## Set-up",))
    nb.check_first_cell_picks_the_device(NOTEBOOK)


def test_every_pause_and_think_hides_its_answer() -> None:
    nb.check_pauses_hide_answers(nb.markdown(NOTEBOOK), at_least=5)


def test_the_seed_corrections_are_taught_side_by_side() -> None:
    """The earlier page's GPT-2 breakdown, its 10 bytes/param, its activation formula and
    its 5.2 TB / 65 GPUs: each gets a warning box and a cell that computes both figures."""
    boxes = re.findall(r"```\{admonition\} A figure that circulates:(.*?)\n```",
                       nb.markdown(NOTEBOOK), flags=re.S)
    assert len(boxes) == 4
    joined = " ".join(boxes)
    for claim in ("84.9M", "10 bytes", "16 + 2/p", "5.2 TB"):
        assert claim in joined, claim
    code = "\n".join(nb.code(NOTEBOOK, hidden=False))
    assert "seed_figures" in code and "seed_activation_formula" in code
    assert "n7 * 10" in code


def test_calculators_are_this_lessons_registry_entries() -> None:
    nb.check_registry_widgets(SLUG, {"param_count", "training_memory"})


def test_counts_are_checked_against_arrays_and_bytes_measured() -> None:
    """Section 2 builds real arrays (on the lesson's device) and compares their element count
    with param_count; section 6 compares nbytes and the allocator with training_memory;
    section 7 measures a forward pass with tracemalloc."""
    code = "\n".join(nb.code(NOTEBOOK, hidden=False))
    for needed in ("build_weights(gpt2_shapes(small_gpt))",
                   "build_weights(llama_shapes(small_llama))",
                   "int(a.size)", "a.nbytes", "tracemalloc.get_traced_memory()",
                   "get_default_memory_pool()"):
        assert needed in code, needed
    assert re.search(r"memory\.training_memory\(\s*n_small", code)
    hidden = "\n".join(nb.code(NOTEBOOK, hidden=True))
    assert "counted == transformer.param_count(small_gpt)" in hidden
    assert "counted == transformer.param_count(small_llama)" in hidden
    assert "kept_bytes == memory.activation_bytes_per_layer(" in hidden


def test_every_term_is_in_the_glossary() -> None:
    assert len(nb.check_terms_in_glossary(nb.markdown(NOTEBOOK))) >= 20


def test_every_citation_is_in_the_bibliography() -> None:
    assert len(nb.check_citations_in_bibliography(nb.markdown(NOTEBOOK))) >= 10


def test_prose_numbers_are_pinned_by_hidden_asserts() -> None:
    nb.check_pinned(NOTEBOOK, asserts=50, pinned=(
        "124_439_808", "163_037_184", "6_738_415_616", "1_291_845_632", '"12.55 GiB"',
        '"107.8 GB"', '"67.4 GB"', '"104.2 GB"', '"275.4 GB"', '"91.3 GB"', '"11.4 GB"',
        '"68.6 GB"', "== 17", "(2, 15, 16)", "== 73"))


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
    assert "80" in nb.markdown(NOTEBOOK) and "275.4 GB" in nb.markdown(NOTEBOOK)


def test_exercise_bank_promises() -> None:
    exercises = lesson_module(SLUG).EXERCISES
    assert len(exercises) >= 5
    assert {ex.kind for ex in exercises} >= {"numeric", "choice", "code"}
    keys = {m.key for ex in exercises for m in ex.mistakes}
    for mistake in ("ten_bytes", "gib_as_gb", "forgot_training_state", "forgot_optimizer",
                    "no_recompute", "no_sequence_parallel", "rounded_down"):
        assert mistake in keys, mistake
    nb.check_exercise_notebook(SLUG)
