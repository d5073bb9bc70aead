"""Lesson 7, *The Cost of a Model* (``notebooks/cost_economics.ipynb``), and its exercises:
the promises the pages make, checked without running them (nbval runs them).

* the skeleton of the house style, hidden answers, the lesson's registry widgets, glossary
  terms and citations that exist, and the exercise notebook wired to the bank;
* the dated example prices as the sources publish them, and the earlier calculator page's
  TCO and serving figures reproduced from the inputs the lesson names;
* dollar amounts that render as text in JupyterLab too (its MathJax pairs any two "$" of a
  paragraph into inline math unless the paragraph is marked ``mathjax_ignore``).

The bank itself (reference accepted, each mistake its own hint, variants) is covered for
every lesson by ``tests/exercises/test_bank.py``; here are the checks specific to this one.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpulesson import calculators, cost, hardware
from gpulesson.exercises import lesson_module

from . import nbtools as nb
from .test_dollar_signs import paragraphs

SLUG = "cost_economics"
NOTEBOOK = nb.notebook(SLUG)
EXERCISES = nb.exercise_notebook(SLUG)
BANK = lesson_module(SLUG)


# ---------------------------------------------------------------------------------------
# The page


def test_skeleton_of_the_house_style() -> None:
    nb.check_skeleton(SLUG, "The Cost of a Model")


def test_prices_are_flagged_as_dated_examples() -> None:
    """The brief: prices are inputs with dated defaults and a source, never current facts."""
    text = nb.markdown(NOTEBOOK)
    block = text.split("```{admonition} Prices here are dated examples, not current facts", 1)
    assert len(block) == 2
    warning = block[1].split("```", 1)[0]
    for dated in ("May 2023", "2023 survey", "for 2023", "July 2023", "current quote"):
        assert dated in warning, dated


def test_every_pause_and_think_hides_its_answer() -> None:
    nb.check_pauses_hide_answers(nb.markdown(NOTEBOOK), at_least=4)


def test_widgets_are_this_lessons_registry_calculators() -> None:
    nb.check_registry_widgets(SLUG, {"tco", "cost_per_token"})


def test_every_term_is_in_the_glossary() -> None:
    terms = nb.check_terms_in_glossary(nb.markdown(NOTEBOOK))
    assert {"TCO", "PUE", "utilisation", "break-even point", "GPU-hour"} <= terms


def test_every_citation_is_in_the_bibliography() -> None:
    cited = nb.check_citations_in_bibliography(nb.markdown(NOTEBOOK))
    assert {"nextplatform2023p5", "eia2024electricity", "uptime2023survey",
            "nvidia2023dgxh100", "semianalysis2023servercost"} <= cited


def test_prose_numbers_are_pinned_by_hidden_asserts() -> None:
    nb.check_pinned(NOTEBOOK, asserts=30, pinned=(
        "round(year.power) == 11_379", "== 326_894", "[3.8, 7.6, 15.2]",
        "[19.8, 39.6, 79.1]", "[10.6, 54.9, 6.4, 33.0]", "== 36_792", "== 423_960",
        "(6.85, 7.51, 15.01)", "== 0.000289", "== 20.5",
        '{"mistral-7b": 236, "llama-2-7b": 60}'))


def test_measurement_sizes_come_from_sizes_for_and_say_the_device() -> None:
    code = "\n".join(nb.code(NOTEBOOK, hidden=False))
    assert 'sizes_for(dev, "matvec")' in code and "benchmark(" in code
    assert "dev.describe()" in code and "dev.kind.upper()" in code


@pytest.mark.parametrize("path", [NOTEBOOK, EXERCISES], ids=["lesson", "exercises"])
def test_dollar_amounts_are_protected_from_jupyterlab_mathjax(path: Path) -> None:
    """Every markdown block with a dollar amount sits in a mathjax_ignore div and holds no
    inline math (which the div would leave untypeset in JupyterLab). Stricter than the
    book-wide rule of ``tests/content/test_dollar_signs.py`` (two amounts, or an amount beside
    maths), whose paragraph splitting it shares: here one amount is enough."""
    for cell in nb.cells(path):
        if cell["cell_type"] != "markdown":
            continue
        for block, inside in paragraphs("".join(cell["source"])):
            if "\\$" not in block:
                continue
            assert inside, block[:80]
            assert not re.search(r"(?<!\\)\$", block.replace("\\$", "")), block[:80]


# ---------------------------------------------------------------------------------------
# Sources and the earlier page's figures


def test_example_prices_are_the_published_ones() -> None:
    """The registry's dated defaults, as published: DGX H100 about $270,000 (SemiAnalysis,
    May 2023, via Epoch AI) and 10.2 kW maximum (NVIDIA DGX H100 datasheet); PUE 1.58
    (Uptime Institute survey 2023); 8.06 cents/kWh (EIA Electric Power Annual 2023, US
    industrial average); AWS p5.48xlarge $98.32 per hour on demand (The Next Platform,
    2023-07-27), i.e. $12.29 for each of its 8 H100s."""
    tco = calculators.si_inputs("tco")
    assert (tco["hardware_usd"], tco["power_watts"], tco["pue"], tco["usd_per_kwh"],
            tco["cloud_usd_per_hour"]) == (270_000, 10_200, 1.58, 0.0806, 98.32)
    assert calculators.si_inputs("cost_per_token")["usd_per_gpu_hour"] * 8 == \
        pytest.approx(98.32)
    assert hardware.gpu("H100 SXM").tdp_watts == 700


def test_the_earlier_pages_tco_figures_follow_from_the_inputs_the_lesson_names() -> None:
    """The seed calculator page prints $36,792 a year of power, $423,960 over five years on
    premises, $2,102,400 of cloud, $1,678,440 of savings and a 6.8-month break-even. The
    lesson reproduces them from $240,000 of hardware (8 x $30,000), 30 kW at PUE 1.4 and
    $0.10/kWh (or 5.6 kW at PUE 1.5 and $0.50/kWh) and $48 per hour, and shows that the
    break-even left out the power."""
    seed = {"hardware_usd": 240_000, "power_watts": 30_000, "usd_per_kwh": 0.10, "pue": 1.4}
    assert round(cost.on_prem_breakdown(years=1, **seed).power) == 36_792
    assert round(cost.power_cost(power_watts=5_600, usd_per_kwh=0.50, hours=8760,
                                 pue=1.5)) == 36_792
    own = cost.on_prem_tco(years=5, **seed)
    cloud = cost.cloud_cost(usd_per_hour=48, years=5)
    assert (round(own), round(cloud), round(cloud - own)) == (423_960, 2_102_400, 1_678_440)
    no_power = cost.breakeven_months(hardware_usd=240_000, power_watts=0, usd_per_kwh=0.10,
                                     cloud_usd_per_hour=48)
    assert f"{no_power:.1f}" == "6.8"
    assert round(cost.breakeven_months(cloud_usd_per_hour=48, **seed), 1) == 7.5


def test_the_earlier_pages_serving_figures() -> None:
    """288,000 tokens per hour at $0.083 per 1,000 tokens: 80 tokens/s for $24 an hour, the
    TCO example's $6 per GPU-hour times 4 GPUs. Its "daily revenue" of $5,760 is ten times
    the $576 that 24 such hours cost."""
    per_1k = cost.cost_per_1k_tokens(usd_per_gpu_hour=6, gpus=4, tokens_per_second=80)
    assert f"{per_1k:.3f}" == "0.083"
    assert cost.cloud_cost(usd_per_hour=24, years=1 / 365) == pytest.approx(576)
    assert "\\$5,760 is ten times that" in nb.markdown(NOTEBOOK)


# ---------------------------------------------------------------------------------------
# Exercises


def test_exercise_defaults_match_the_brief() -> None:
    """8 H100s at 700 W, PUE 1.4, $0.10/kWh: 5.6 kW x 1.4 x 8,760 h = 68,678.4 kWh, so
    $6,867.84 a year; 3 years of $98.32/h at 60%: 15,768 h, $1,550,309.76; 2,400 tokens/s
    at $2.50 per GPU-hour: 8,640,000 tokens for $2.50, $0.000289 per 1,000."""
    by_number = {ex.number: ex for ex in BANK.EXERCISES}
    assert len(by_number) >= 5
    assert by_number[1].answer_value() == pytest.approx(6_867.84)
    assert by_number[1].check("$4,905.60").mistake == "forgot_pue"
    assert by_number[2].answer_value() == pytest.approx(1_550_309.76)
    assert by_number[2].check("2,583,849.60 USD").mistake == "forgot_utilisation"
    assert by_number[2].check("$12,402,478").mistake == "node_price_times_gpus"
    assert by_number[5].answer_value() == pytest.approx(2.5 / 8_640_000 * 1000)
    assert by_number[3].check("2.487 years").correct       # 29.84 months, in years
    assert by_number[3].check("26.42").mistake == "ignored_power"
    kinds = {ex.kind for ex in BANK.EXERCISES}
    assert {"numeric", "choice", "code"} <= kinds
    assert all(ex.mistakes for ex in BANK.EXERCISES)


def test_exercise_notebook_shows_every_exercise_once() -> None:
    sources = nb.check_exercise_notebook(SLUG)
    assert any("def cost_per_1k_tokens(" in s for s in sources)
