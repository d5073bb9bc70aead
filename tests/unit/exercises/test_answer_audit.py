"""Findings of the answer audit (December 2026): each test recomputes what a learner sees
from the figures the question or the solution states, or from the calculators."""

from __future__ import annotations

import re

import pytest

from gpulesson.exercises import core, load_lesson
from gpulesson.exercises.catalogue import available_lessons
from gpulesson.units import parse_quantity


def _numeric_exercises():
    for slug in available_lessons():
        for ex in load_lesson(slug).exercises:
            if isinstance(ex, core.NumericExercise):
                yield ex


@pytest.mark.parametrize("ex", list(_numeric_exercises()), ids=lambda e: e.id)
def test_tolerance_text_states_the_tolerance_the_check_applies(ex):
    # "±0%" was printed for rtol = 0.5%, and for rtol = 1e-9 (float noise): a learner or an
    # instructor reading the answer key took the tolerance for zero, or for something else.
    text = ex.tolerance_text()
    if ex.rtol < 1e-6 and not ex.atol:
        assert text == "exact"
        return
    if ex.rtol >= 1e-6:
        shown = float(re.match(r"±([0-9.]+)%", text).group(1)) / 100
        assert shown == pytest.approx(ex.rtol, rel=0.01), (ex.id, text)


@pytest.mark.parametrize("number", [7, 8])
@pytest.mark.parametrize("seed", [None, *range(12)])
def test_occupancy_questions_state_the_warp_slots_the_answer_is_a_share_of(number, seed):
    # An L4 (compute capability 8.9) has 48 warp slots, not the H100's 64 the lesson
    # states; the variant's question named neither, so 40 warps read as 62.5%, not 83.3%.
    ex = load_lesson("inside_the_gpu").exercises[number - 1].variant(seed)
    match = re.search(r"at most (\d+) warps and (\d+) blocks", ex.question_text())
    assert match, ex.question_text()
    slots = int(match.group(1))
    warps = ex.answer_value() * slots
    assert warps == pytest.approx(round(warps)) and 0 < round(warps) <= slots


@pytest.mark.parametrize("seed", [None, *range(12)])
def test_moe_weights_question_states_the_parameter_count_the_answer_needs(seed):
    # The question named the model and its routing but no parameter count, so "Mixtral
    # 8x7B" invited 56B (8 x 7B) and the answer, 46.7B x 2 bytes, could not be worked out.
    from gpulesson import memory

    ex = load_lesson("memory_what_fits").exercises[10].variant(seed)
    match = re.search(r"has ([0-9.]+)B parameters in all", ex.question_text())
    assert match, ex.question_text()
    worked = float(match.group(1)) * 1e9 * memory.precision_bytes(ex.inputs["precision"])
    assert worked == pytest.approx(ex.answer_value(), rel=ex.rtol / 2)


@pytest.mark.parametrize("seed", [None, *range(12)])
def test_moe_decode_question_states_the_sizes_the_answer_needs(seed):
    # The question gave the routing but neither the weights outside the experts nor the
    # size of an expert: the 16.27 GB could not be worked out from it.
    ex = load_lesson("inference_and_kv_cache").exercises[11].variant(seed)
    q = ex.question_text()
    shared = re.search(r"([0-9.]+)B lie outside the experts", q)
    expert = re.search(r"each expert of a layer has ([0-9,]+)", q)
    k, experts, layers = map(int, re.search(
        r"to (\d+) of the (\d+) experts of each of its (\d+) expert layers", q).groups())
    assert shared and expert, q
    batch = ex.inputs["batch"]
    used = experts * (1 - (1 - k / experts) ** batch)
    worked = 2 * (float(shared.group(1)) * 1e9
                  + layers * used * int(expert.group(1).replace(",", "")))
    assert worked == pytest.approx(ex.answer_value(), rel=ex.rtol / 2)


def test_naive_matmul_solution_counts_the_tiled_traffic_for_any_shape():
    # The solution gave the tiled kernel's requests as (M·K + K·N)·N/TILE, which holds only
    # for M = N: A is read N/TILE times but B is read M/TILE times.
    ex = load_lesson("inside_the_gpu").exercises[21]
    text = ex.solution_text()
    assert "(M·K + K·N)·N/TILE" not in text
    assert "M·K·N/TILE + K·N·M/TILE" in text and "2·M·N·K/TILE" in text


def test_training_cost_solution_figure_follows_from_the_plan_it_states():
    # "The lesson's 7B plan ... costs $390,474.86" priced Llama-2-7B's 6.74B parameters;
    # a learner checking it with the 7B the text named got $405,631.
    text = load_lesson("planning_dashboard").exercises[7].solution_text()
    n = float(re.search(r"\(([0-9,]+) parameters\)", text).group(1).replace(",", ""))
    peak = parse_quantity(re.search(r"H100s \(([0-9.,]+ TFLOP/s) dense\)", text).group(1),
                          "flop/s")
    price = float(re.search(r"\$([0-9.]+)/h", text).group(1))
    stated = float(re.search(r"costs \$([0-9,]+\.[0-9]+)", text).group(1).replace(",", ""))
    worked = 6 * n * 2e12 / (peak * 0.4) / 3600 * price
    assert worked == pytest.approx(stated, rel=1e-3)


@pytest.mark.parametrize("number", [4, 5, 6, 7])
@pytest.mark.parametrize("seed", range(8))
def test_parallelism_titles_name_the_variant_s_own_numbers(number, seed):
    # "Rounds at batch 1: 8 fast cores" stood over a question with batch 4 and 16 cores,
    # "Twice the GPU" over a 3× faster one. The lesson's own numbers keep the old names.
    base = load_lesson("parallelism_at_the_core").exercises[number - 1]
    ex = base.variant(seed)
    p = ex.inputs
    title = ex.title_text()
    if number in (4, 5):
        assert f"batch {p['batch']}:" in title and f"{p['workers']:,} " in title
    elif number == 6:
        assert f"with {p['workers']} workers" in title
    else:
        assert ("Twice" in title) == (p["gpu_speedup"] == 2)
        assert p["gpu_speedup"] == 2 or f"{p['gpu_speedup']}×" in title


@pytest.mark.parametrize("seed", [None, *range(16)])
def test_fine_tune_fit_words_the_activations_of_the_model_it_names(seed):
    # The question said "FlashAttention, for a Llama model" and the hint "about 32·s·b·h
    # for Llama-2-7B's" whatever the model: GPT-2 XL and Llama-3-8B variants too.
    from gpulesson import activations, memory, transformer

    ex = load_lesson("memory_what_fits").exercises[5].variant(seed)
    p = ex.inputs
    cfg = transformer.preset(p["model"])
    assert ("FlashAttention" in ex.question_text()) == (
        activations.default_attention(cfg) == "flash")
    factor = float(re.search(r"about ([0-9.]+)·s·b·h for ", ex.hint_texts()[0]).group(1))
    acts = memory.training_memory(cfg, batch=p["batch"], seq_len=p["seq_len"],
                                  recompute="selective").activations
    assert factor * cfg.layers * p["seq_len"] * p["batch"] * cfg.hidden == pytest.approx(
        acts, rel=0.01)


@pytest.mark.parametrize("seed", [None, 1, 2, 3])
def test_fp4_mistake_hints_read_their_articles_aloud(seed):
    # "stores a 8-bit scale", "with a E8M0 scale": the article of a number or a letter name
    # follows how it is read ("an eight-bit", "an E8M0"), as wording.with_article does.
    from gpulesson import precision
    from gpulesson.exercises import wording

    ex = load_lesson("roofline_and_tensor_cores").exercises[9].variant(seed)
    scale = precision.block_format(ex.inputs["format"]).scale
    assert wording.with_article(f"{scale.bits}-bit") in ex.mistake_hint("forgot_scales")
    assert wording.with_article(scale.name) + " scale" in ex.mistake_hint("other_block")


def test_fine_tune_prediction_figures_agree_with_the_dashboard_they_quote():
    # The hint counted 6·N·D = 8.1e17 FLOPs, but the dashboard's 28 minutes (and the days
    # the cell prints) also count the attention scores, 8.7e17; and "at 100 GFLOP/s, 94
    # days" was 6·N·D at the full rate, where the notebook's dashboard prints 157.
    from gpulesson import calculators

    ex = load_lesson("planning_dashboard").exercises[8]
    q, hints, sol = ex.question_text(), ex.hint_texts(), ex.solution_text()
    work = float(re.search(r"([0-9.]+e[0-9]+) FLOPs", hints[0]).group(1))
    mfu = float(re.search(r"at ([0-9.]+)% MFU", q).group(1)) / 100
    minutes = float(re.search(r"MFU: ([0-9.]+) minutes", q).group(1))
    peak = parse_quantity(re.search(r"reaches ([0-9.,]+ TFLOP/s)", hints[1]).group(1),
                          "flop/s")
    assert work / (peak * mfu) / 60 == pytest.approx(minutes, rel=0.03)
    days = float(re.search(r"At 100 GFLOP/s the dashboard says ([0-9.,]+) days", sol)
                 .group(1).replace(",", ""))
    printed = calculators.compute(
        "planning", model="llama-2-7b", gpu="custom", gpu_memory=16, peak_flops=0.1,
        dtype="fp32", matmul_efficiency=100, bandwidth=0.05, gpus_per_node=1, scaleout=1,
        usd_per_gpu_hour=0, n_gpus=1, seq_len=2048, tokens=0.02,
        step_tokens=0.524288)["time"] / 86_400
    assert days == pytest.approx(printed, rel=0.01)


def _gb_exercises():
    return [ex for ex in _numeric_exercises() if ex.dimension == "bytes" and ex.unit == "GB"]


@pytest.mark.parametrize("ex", _gb_exercises(), ids=lambda e: e.id)
def test_every_gb_answer_recognises_gib_written_as_gb(ex):
    # Eight of the seventeen questions answered in GB gave a learner who divided by 2^30 a
    # bare "about 7% off" instead of the GiB hint the other nine give (audit of 2026-12-06).
    for seed in [None, *range(40)]:
        variant = ex.variant(seed)
        gib = variant.answer_value() / 2**30
        feedback = variant.check(f"{gib:.6g}")
        assert feedback.status == "mistake", (seed, f"{gib:.6g}", feedback.message)
        declared = next(m for m in variant.mistakes if m.key == "gib_as_gb")
        if declared.value(variant.inputs) is not None:  # None: another mistake's figure
            assert feedback.mistake == "gib_as_gb", (seed, f"{gib:.6g}", feedback.message)


def _intro_examples(slug):
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "exercises" / f"{slug}.ipynb"
    intro = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"])
    return re.findall(r"`([^`\n]+)`", intro)


@pytest.mark.parametrize("slug", available_lessons())
def test_the_how_to_answer_examples_are_no_exercise_s_answer(slug):
    # The "How they work" paragraph showed how to type an answer with the answer itself:
    # `$6,868` (cost ex1), `24.5 GB` and `18.75%` (distributed ex1, ex3), `2.4 days`
    # (flops ex2), `85.9 GB` (inference ex3), `15.5 GB` (planning ex3). A student edition
    # of the lesson's own numbers gave those away (audit of 2026-12-06).
    given = []
    for ex in load_lesson(slug).exercises:
        if not isinstance(ex, core.NumericExercise):
            continue
        answer = ex.answer_value()
        for example in _intro_examples(slug):
            if not re.search(r"\d", example) or re.fullmatch(r"[\d.,_]+", example):
                continue  # a bare number is read in each exercise's own unit: no example
            try:
                value = ex.parse(example)
            except ValueError:
                continue
            if abs(value - answer) <= max(ex.rtol, 0.005) * abs(answer):
                given.append((ex.id, example))
    assert given == []
