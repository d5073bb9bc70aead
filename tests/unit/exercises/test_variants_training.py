"""Class variants of the training banks (lessons 5, 7 and 10) ask sensible questions.

The audit of 2026-12-06 drew seeds 0-299 of every exercise and found, in these banks:
70B models trained on 8 GPUs that cannot hold their model state, ZeRO states and plain
data parallelism larger than any GPU, a B200 peak printed as 2.2 PFLOP/s where the answer
uses 2.25, "the previous exercise" pointing at a model the previous exercise did not draw,
training runs of years, an A100 rented at an H100's price, a false count of Llama 3's
GPUs, and illustrative sequence lengths beyond the model's context. Each test here checks
one of those over the same 300 seeds, and that the variants still vary.
"""

from __future__ import annotations

import functools
import re

import pytest

from gpulesson import flops, hardware, memory, prices, transformer
from gpulesson.exercises import lesson_module, wording

SEEDS = range(300)
DAY = 86_400
MAX_DAYS = 180


def _exercise(slug: str, number: int):
    return lesson_module(slug).EXERCISES[number - 1]


@functools.cache
def _variants(slug: str, number: int) -> tuple:
    ex = _exercise(slug, number)
    return tuple(ex.variant(seed) for seed in SEEDS)


def _state_fits(p) -> bool:
    return (p["n_params"] * memory.bytes_per_param()
            <= p["gpus"] * hardware.gpu(p["gpu"]).usable_memory())


@pytest.mark.parametrize(("slug", "number"), [("flops_and_scaling", 3),
                                              ("flops_and_scaling", 2),
                                              ("planning_dashboard", 1)])
def test_the_model_state_fits_the_cluster(slug, number):
    """Finding 2: mixed-precision Adam's 16 bytes per parameter fit in the GPUs' usable
    memory together (70B on 8 GPUs of 80 GB needs 1.13 TB of 650 GB); 70B still trains."""
    variants = _variants(slug, number)
    for v in variants:
        assert _state_fits(v.inputs), (v.id, v.variant_seed, v.inputs)
    assert any(v.inputs["n_params"] >= 70e9 for v in variants)


def test_zero_state_per_gpu_fits_an_h100():
    """Finding 3: the question names no GPU, so each GPU's ZeRO state fits an H100's
    usable memory (81.2 GB); 70B and every stage still appear."""
    variants = _variants("distributed_math", 5)
    limit = hardware.gpu("H100 SXM").usable_memory()
    for v in variants:
        assert v.answer_value() <= limit, (v.variant_seed, v.inputs, v.answer_value())
    assert {v.inputs["stage"] for v in variants} == {1, 2, 3}
    assert any(v.inputs["n_params"] >= 70e9 for v in variants)


def test_plain_data_parallelism_fits_some_gpu():
    """Finding 4: all-reducing the full BF16 gradients means each GPU holds the BF16
    weights and gradients (4 bytes per parameter), plus at least ZeRO-1's share of the
    optimizer (12 / n): that fits the largest usable memory in the catalogue."""
    largest = max(hardware.gpu(name).usable_memory() for name in hardware.GPUS)
    variants = _variants("distributed_math", 1)
    for v in variants:
        n, gpus = v.inputs["n_params"], v.inputs["n"]
        assert 4 * n + 12 * n / gpus <= largest, (v.variant_seed, v.inputs)
    assert len({v.inputs["n_params"] for v in variants}) >= 4


@pytest.mark.parametrize("name", [n for n in hardware.GPUS
                                  if "bf16" in hardware.gpu(n).peak_flops])
def test_every_gpus_printed_peak_is_its_peak(name):
    """Finding 5: the peak as the planning exercise prints it reads back as the peak the
    answer uses (B200: 2,250 TFLOP/s, not 2.2 PFLOP/s)."""
    peak = hardware.gpu(name).dense("bf16")
    ex = _exercise("planning_dashboard", 1)
    text = ex.derived(dict(ex.defaults, gpu=name))["dense"]
    value = float(re.fullmatch(r"([\d,.]+) TFLOP/s", text).group(1).replace(",", "")) * 1e12
    assert value == pytest.approx(peak, rel=1e-4), text


def test_a_learner_using_the_printed_peak_is_correct():
    """Finding 5: tokens/s worked out from the figures printed in the question are marked
    correct, for every GPU the variants draw (the B200 among them)."""
    variants = _variants("planning_dashboard", 1)
    for v in variants:
        q = v.question_text()
        peak = float(re.search(r"dense peak ([\d,.]+) TFLOP/s", q).group(1).replace(",", ""))
        mfu = float(re.search(r"assumes ([\d.]+)% MFU", q).group(1)) / 100
        p = v.inputs
        tps = p["gpus"] * peak * 1e12 * mfu / (6 * p["n_params"])
        assert v.check(f"{tps:.6g} tokens/s").status == "correct", (v.variant_seed, q)
    assert any(v.inputs["gpu"] == "B200" for v in variants)


def test_only_the_lessons_version_points_to_the_previous_exercise():
    """Finding 6: a class variant draws its own model, so it names it; the lesson's
    version asks about exercise 1's model and says so."""
    ex2 = _exercise("flops_and_scaling", 2)
    ex1 = _exercise("flops_and_scaling", 1)
    lesson = ex2.question_text()
    assert "of the previous exercise" in lesson
    assert {k: ex2.defaults[k] for k in ("n_params", "tokens")} == dict(ex1.defaults)
    for v in _variants("flops_and_scaling", 2):
        q = v.question_text()
        assert "previous exercise" not in q, (v.variant_seed, q)
        model = wording.billions(v.inputs["n_params"])
        article = "An" if model.startswith("8") else "A"
        assert q.startswith(f"{article} {model}-parameter model"), q


@pytest.mark.parametrize(("slug", "number"), [("flops_and_scaling", 2),
                                              ("planning_dashboard", 2)])
def test_training_takes_months_not_years(slug, number):
    """Finding 7: at most 180 days (the audit found 2,174 and 2,608), and still from a few
    days to months."""
    days = []
    for v in _variants(slug, number):
        p = v.inputs
        seconds = flops.training_time(flops.training_flops(p["n_params"], p["tokens"]),
                                      p["gpus"], hardware.gpu(p["gpu"]).dense("bf16"),
                                      p["mfu"])
        assert seconds <= MAX_DAYS * DAY, (v.variant_seed, p, seconds / DAY)
        days.append(seconds / DAY)
    assert min(days) < 10 and max(days) > 60


def test_a_gpu_is_rented_at_a_price_quoted_for_it():
    """Finding 9: the price is a current quote for the drawn GPU (no A100 at the $12.29 an
    H100 costs), printed as it is used."""
    variants = _variants("planning_dashboard", 2)
    for v in variants:
        p = v.inputs
        quoted = {round(q.usd_per_gpu_hour, 2) for q in prices.current_quotes(p["gpu"])}
        assert p["price"] in quoted, (v.variant_seed, p)
        assert f"${p['price']:.2f} per GPU-hour" in v.question_text()
        seconds = flops.training_time(flops.training_flops(p["n_params"], p["tokens"]),
                                      p["gpus"], hardware.gpu(p["gpu"]).dense("bf16"),
                                      p["mfu"])
        assert v.answer_value() == pytest.approx(p["price"] * p["gpus"] * seconds / 3600)
    assert len({(v.inputs["gpu"], v.inputs["price"]) for v in variants}) >= 6


def test_llama3_is_said_to_have_run_on_the_gpus_it_used():
    """Finding 10: the run used up to 16,384 H100s; another count is a supposition."""
    variants = _variants("flops_and_scaling", 9)
    for v in variants:
        q = v.question_text()
        assert re.search(r"on up to ([\d,]+)", q).group(1) == "16,384", q
        if v.inputs["gpus"] != 16_384:
            assert f"Had it run on {v.inputs['gpus']:,} of them" in q, q
    assert {v.inputs["gpus"] for v in variants} == {8_192, 16_384}


def test_the_crossover_solution_stays_within_the_models_context():
    """Finding 14: a length the solution says the model runs at is within its context
    (GPT-2: 1,024 tokens); a longer one is a model of the same shape with that context."""
    variants = _variants("flops_and_scaling", 8)
    for v in variants:
        cfg = transformer.preset(v.inputs["model"])
        limit = cfg.context or cfg.max_positions
        solution = v.solution_text()
        for length in re.findall(r"at ([\d,]+) tokens", solution):
            assert int(length.replace(",", "")) <= limit, (v.inputs, solution)
    assert len({v.inputs["model"] for v in variants}) >= 5
