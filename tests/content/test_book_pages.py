"""The figures of the narrative pages in ``book/``, each held against the call that
computes it (:mod:`tests.content.claims`), so the pages cannot drift from the code.

Each page's figures are a list of claims: the text as the page's markdown has it and a
call of the calculators (``gpulesson.*``; FP16's limits from NumPy; the Python version
from the repository's own configuration) that must return exactly that text. Every number
in a page's prose must lie inside a claim or inside one of the page's listed non-figures
(``*_NOT_FIGURES``), which are only: inputs the page chooses, the seed pages' quoted
figures that a page corrects, formula constants, and published inputs taken from a paper
or a datasheet (each with its source in a comment); ``NAMES`` holds the numbers inside
names (Llama 3.1, PCIe 5.0, RTX 4090, "16-bit").

This module holds the claims of ``conventions.md``, ``how_to_use.md`` and
``instructors.md``, and the coverage of every page (:data:`PAGES`). The two pages with the
most figures have modules of their own: ``test_seed_corrections_page.py`` (whose blocks of
calculator calls are also run as printed) and ``test_glossary_page.py``; the figures and
helpers the pages share are in ``book_figures.py``.

Pages whose figures are generated hold no hand-written figures and so no claims; the
coverage test still reads their prose. ``book/hardware.md``'s tables are written at build
time by the ``{gpu-table}`` directive (``scripts/gl_calculators.py``) from
``gpulesson/data/gpus.json`` through ``gpulesson.hardware``; ``book/status.md``'s by the
``{machine-status}`` directive (``scripts/gl_status.py``) and MyST-NB's
``{nb-exec-table}``; ``book/calculators.md``'s values by the ``{calculator}`` directives
from the calculator registry.

Sources of the published inputs and figures: the seed pages themselves (their figures,
quoted as the claims under test); GPT-3 (Brown et al. 2020: 174.6B parameters, 300B
tokens, 3.14e23 FLOPs, 3.2M-token batch); the ZeRO paper (Rajbhandari et al. 2020, section
3.1 and Figure 1: 16 bytes per parameter, the 7.5B model on 64 GPUs); Korthikanti et al.
2022 (activation bytes per layer); the NVIDIA and AMD datasheets of
``gpulesson/data/gpus.json``; the Llama 3 paper (Dubey et al. 2024: 16,384 H100s, TP 8 x
PP 16, 15.6T tokens); FlashAttention-3 (Shah et al. 2024: 740 TFLOP/s FP16); Chen et al.
2016 (sqrt(n) checkpointing); the cost lesson's dated inputs (DGX H100 10.2 kW, EIA 2023
industrial tariff, Uptime 2023 PUE, AWS p5 July 2023).
"""

from __future__ import annotations

import calendar
import functools
import re

import pytest

from gpulesson import (
    calculators,
    flops,
    gemm,
    hardware,
    inference,
    memory,
    prices,
    units,
)
from gpulesson.course import SLUGS
from gpulesson.transformer import non_embedding_params, param_count, preset

from . import study_time
from .book_figures import (
    BOOK,
    KIB,
    N4096,
    _attention_share_405b,
    _dashboard_price,
    _fp32_state_parts,
    _gemm_time_us,
    _gpt3_activations,
    _gpt3_layers_store,
    _gpt_block_activations,
    _int,
    _llama7b_state_vs_gpu,
    _mixed_state_parts,
    _per_1k_at,
    book_page,
    naming_test,
)
from .claims import (
    REPO,
    Claim,
    claims,
    markdown_of,
    rendered,
    uncovered_figures,
)
from .reference import GPT3, H100, L27, L38
from .reference import gb as _gb
from .reference import pct_unspaced as _pct
from .study_time import study_minutes
from .test_glossary_page import GLOSSARY, GLOSSARY_NOT_FIGURES
from .test_seed_corrections_page import SEED_CORRECTIONS, SEED_CORRECTIONS_NOT_FIGURES

CONVENTIONS = claims(
    lambda: f"{gemm.flops(2, 3, 4)} FLOPs",
    lambda: units.format_flops(gemm.flops(*N4096), digits=1),
    lambda: units.format_flop_rate(H100.peak_flops["bf16"]),
    _gemm_time_us,
    lambda: _gb(gemm.min_bytes(*N4096, 2)),
    lambda: f"{H100.sparse_flops['bf16'] / 1e12:,.1f} TFLOP/s",
    lambda: _pct(flops.utilization(430e12, H100.peak_flops["bf16"])) + " MFU",
    lambda: "look like " + _pct(flops.utilization(
       430e12, H100.sparse_flops["bf16"])),
    lambda: _int(param_count(L27)) + " parameters",
    lambda: _int(memory.weight_bytes(param_count(L27))) + " bytes",
    lambda: _gb(memory.weight_bytes(param_count(L27)))
     + " or " + units.format_bytes(memory.weight_bytes(param_count(L27)), binary=True),
    lambda: units.format_bandwidth(H100.bandwidth),
    lambda: units.format_bandwidth(H100.interconnect_bandwidth, digits=0)
     + " both ways",
    lambda: units.format_bandwidth(H100.interconnect_bandwidth / 2,
                                   digits=0) + " each way",
    lambda: f'`memory.bytes_per_param("mixed")` is {memory.bytes_per_param("mixed")}',
    lambda: f'`memory.bytes_per_param("fp32")` is {memory.bytes_per_param("fp32")}',
    lambda: f'is {memory.bytes_per_param("mixed_fp32_grads")}',
    lambda: _gb(memory.training_memory(L27, batch=1, seq_len=1).total
                - memory.training_memory(L27, batch=1, seq_len=1).activations),
    lambda: f"`5·a·s/h` is {5 * 96 * 2048 // 12288}",
    lambda: _gb(_gpt3_activations()),
    lambda: f"{inference.kv_cache_bytes_per_token(L27) // KIB} KiB per "
            "token",
    lambda: f"needs {inference.kv_cache_bytes_per_token(L38) // KIB} KiB",
    lambda: _int(inference.kv_cache_bytes(L38, seq_len=4096))
     + " bytes (" + units.format_bytes(inference.kv_cache_bytes(L38, seq_len=4096),
     binary=True) + ")",
    lambda: _int(param_count(preset("gpt2"))) + " parameters",
    lambda: _int(non_embedding_params(preset("gpt2"))) + " are not",
    lambda: f"{flops.training_flops(param_count(GPT3), 300e9):.2e}"
     .replace("e+", "e"),
    lambda: f"{param_count(GPT3) / 1e9:.1f}B",
    lambda: "adds " + _pct(_attention_share_405b(), 1),
    lambda: "on demand in September 2026: "
     f"{units.format_usd(calculators.si_inputs('tco')['cloud_usd_per_hour'])}\nan hour, "
     f"{units.format_usd(_dashboard_price())} per GPU-hour",
    lambda: f"2,400 tokens per second at ${_dashboard_price()} an hour costs "
     f"${_per_1k_at(_dashboard_price(), 2400):.5f} per 1,000 tokens",
    lambda: (lambda q: f"an H100 PCIe at {q.provider}'s ${q.usd_per_gpu_hour:.2f} an hour, "
             f"making as many tokens, ${_per_1k_at(q.usd_per_gpu_hour, 2400):.6f}")(
                 prices.current_quotes("H100 PCIe")[0]),
    # The page's pointer to this file, and the figures around the worked examples.
    lambda: naming_test(__file__),
    lambda: "datasheet's \""
     f"{H100.sparse_flops['bf16'] / 1e12:,.0f} teraFLOPS\" for BF16",
    lambda: "1 GiB is "
     + units.format_bytes(units.parse_quantity("1 GiB", "bytes"), digits=3),
    # gpus.json: the A100 80GB's reported total (nvidia-smi memory.total) is exactly 80 GiB
    lambda: (lambda a100: f"reports {a100.reported_memory_bytes / 2**20:,.0f} MiB for an A100 "
             "80GB" if a100.reported_memory_bytes == 80 * 2**30 else "?")(
        hardware.gpu("A100 80GB")),
    _mixed_state_parts,
    _fp32_state_parts,
    lambda: f"makes it {memory.bytes_per_param('mixed_fp32_grads')}",
    _llama7b_state_vs_gpu,
    _gpt3_layers_store,
    lambda: "Llama-2-7B at 4,096 tokens keeps "
     f"{_gb(memory.training_memory(L27, batch=1, seq_len=4096).activations)}, where the GPT "
     f"formula says {_gb(_gpt_block_activations(L27))}",
    lambda: f"Llama-2-7B ({L27.kv_heads} KV heads)",
    lambda: f"Llama-3-8B ({L38.kv_heads} KV heads)",
    lambda: f"`cost.cost_per_1k_tokens(usd_per_gpu_hour={_dashboard_price()}, gpus=1, "
     "tokens_per_second=2400)`",
)

#: Numbers of book/conventions.md's prose that are not results.
CONVENTIONS_NOT_FIGURES = (
    # A dated price quoted as history (The Next Platform, 2023-07-27; gpulesson.prices).
    "($98.32 at its launch in July",
    # Inputs the page chooses for its worked examples.
    "A 4,096-token Llama-3-8B sequence",
    "Llama 3.1 405B at 8,192 tokens",
    # Formula constants.
    "powers of 10",
    "an \"80 GB\" GPU holds about 80 GiB",  # the datasheet's figure, read as binary
    "the 34 of everything else",  # Korthikanti et al. 2022, eq. 2: s·b·h·(34 + 5·a·s/h)
    # Published inputs.
    "430 TFLOP/s per GPU",  # Dubey et al. 2024 (Llama 3), Table 4
)


#: Numbers inside names, which are not figures: model and bus versions, a GPU's model
#: number, and the widths that name number formats ("16-bit weights").
NAMES = ("Llama 3.1", "Llama 3.2", "PCIe 5.0", "RTX 4090", "TensorFloat-32", "16-bit", "32-bit")


def _python_versions() -> tuple[str, str]:
    """The Python the course is built and published with (Binder's ``runtime.txt``, which
    the deploy workflow and the Makefile must match) and the oldest it supports
    (``requires-python`` of ``pyproject.toml``)."""
    def read(*parts: str) -> str:
        return REPO.joinpath(*parts).read_text(encoding="utf-8")

    built = read("binder", "runtime.txt").strip().removeprefix("python-")
    others = (re.findall(r'python-version:\s*"([\d.]+)"', read(".github", "workflows",
                                                               "deploy.yml"))
              + re.findall(r"command -v python(\d+\.\d+)", read("Makefile")))
    oldest = re.findall(r'^requires-python\s*=\s*">=([\d.]+)"', read("pyproject.toml"), re.M)
    if set(others) != {built} or len(oldest) != 1:
        return f"{built} (but {others} elsewhere)", f"{oldest}"
    return built, oldest[0]


def _study_rates() -> str:
    m = study_time.EXERCISE_MINUTES
    return (f"prose outside the folded boxes at {study_time.WORDS_PER_MINUTE} words a "
            f"minute, each line of code you see as {study_time.WORDS_PER_CODE_LINE} words, "
            f"{m['code']:g} minutes per code exercise, {m['kernel']:g} per kernel exercise "
            f"and {m['other']:g} per other exercise, and {study_time.MINUTES_FOR_CELLS} "
            "minutes for running the cells")


def _study_error() -> str:
    errors = study_time.leave_one_out_errors(study_time.CALIBRATION)
    return (f"the tenth lands within {round(study_time.mean_absolute(errors))} minutes on "
            f"average (up to {round(max(abs(e) for e in errors.values()))})")


def _study_row(slug: str) -> str:
    """A lesson's row of the study-time table: its time from the lesson itself."""
    return f"| {{doc}}`/notebooks/{slug}` | about {study_minutes(slug)} min |"


HOW_TO_USE = claims(
    lambda: "You need Python {} ({} or newer "
     "works)".format(*_python_versions()),
    # the study times: reading outside dropdowns, exercises and cells (study_time.py)
    *(functools.partial(_study_row, slug) for slug in SLUGS),
    # the model's rates, and its leave-one-out error (test_study_time.py)
    _study_rates,
    _study_error,
)

INSTRUCTORS = claims(
    lambda: f"with `make` and Python {_python_versions()[0]}",
)


def _p5_hourly(*, after: bool = False) -> float:
    """AWS's on-demand p5.48xlarge (8 x H100) price an hour: the last quote dated before
    the June 2025 cut (the date of its source in prices.json), or the first after it."""
    cut = prices.SOURCES["aws-price-cut-2025"]["date"]
    p5 = sorted((q for q in prices.quotes("H100 SXM", offer="on-demand")
                 if q.provider == "AWS" and q.instance == "p5.48xlarge"),
                key=lambda q: q.date)
    side = [q for q in p5 if (q.date > cut) == after]
    return (side[0] if after else side[-1]).usd_per_instance_hour


#: book/hardware.md's prose: the one usable-memory figure every planner uses.
HARDWARE = claims(
    lambda: "what a framework can plan with, "
     f"{hardware.USABLE_MEMORY_FRACTION:.0%}".replace("%", " %") + " of the reported\ntotal "
     "(`usable_memory()`, the course's one usable figure",
    # AWS's June 2025 cut (aws-price-cut-2025): p5.48xlarge on demand at launch and after
    lambda: f"price by {100 * (1 - _p5_hourly(after=True) / _p5_hourly()):.0f} % in June "
     f"2025 (p5.48xlarge on demand, ${_p5_hourly():.2f} an hour at its launch in July 2023, "
     f"${_p5_hourly(after=True):.2f} since)",
    # the next generation is missing as of the table's own date (gpus.json's as_of)
    lambda: "not in the tables as of their date ({} {})".format(
        calendar.month_name[int(hardware.CURRENT_GENERATION_AS_OF.split("-")[1])],
        hardware.CURRENT_GENERATION_AS_OF.split("-")[0]),
)
#: vLLM's engine arguments (gpus.json source "vllm-engine-args"): a setting, not a figure;
#: CUDA 13.5 (nvidia2026cuda135) and 13.4 (nvidia2026cuda134): published versions and dates.
HARDWARE_NOT_FIGURES = ("`gpu_memory_utilization` (0.9 by default)",
                        "CUDA 13.5 (November 2026)", "(13.4, in September, had a preview)")


#: Every page in ``book/``: its claims and the numbers of its prose that are not figures.
#: Pages without figures of their own (or whose figures are generated, see the module
#: docstring) have neither.
PAGES: dict[str, tuple[list[Claim], tuple[str, ...]]] = {
    "_gpu_note.md": ([], ()),
    "calculators.md": ([], ()),
    "conventions.md": (CONVENTIONS, CONVENTIONS_NOT_FIGURES),
    "glossary.md": (GLOSSARY, GLOSSARY_NOT_FIGURES),
    "hardware.md": (HARDWARE, HARDWARE_NOT_FIGURES),
    "how_to_use.md": (HOW_TO_USE, ()),
    "instructors.md": (INSTRUCTORS, ()),
    "intro.md": ([], ()),
    "references.md": ([], ()),
    "seed_corrections.md": (SEED_CORRECTIONS, SEED_CORRECTIONS_NOT_FIGURES),
    "status.md": ([], ()),
}


#: The pages whose claims this module checks (the others have modules of their own).
_OWN = ("conventions.md", "how_to_use.md", "hardware.md", "instructors.md")


@pytest.mark.parametrize(("name", "claim"), [(n, c) for n in _OWN for c in PAGES[n][0]],
                         ids=[f"{n}-{i}" for n in _OWN for i in range(len(PAGES[n][0]))])
def test_page_numbers(name: str, claim: Claim) -> None:
    """Each claim of the page holds: its text is on the page and its call returns it."""
    claim.check(book_page(name), f"book/{name}")


def test_every_page_is_listed() -> None:
    assert sorted(PAGES) == sorted(p.name for p in BOOK.glob("*.md"))


@pytest.mark.parametrize("name", sorted(PAGES))
def test_every_figure_is_claimed(name: str) -> None:
    """Every number of the page's prose lies in a claim's text, a listed non-figure of the
    page or a name (``NAMES``)."""
    claimed, not_figures = PAGES[name]
    covered = [c.text for c in claimed] + list(not_figures) + list(NAMES)
    missing = uncovered_figures(markdown_of(BOOK / name), covered)
    assert not missing, f"book/{name} states figures no claim covers:\n" + "\n".join(missing)


@pytest.mark.parametrize("name", [n for n, (_, listed) in PAGES.items() if listed])
def test_listed_non_figures_are_on_theirbook_page(name: str) -> None:
    """A listed non-figure that left the page would cover nothing but could hide a figure
    added later; each must still be there."""
    text = book_page(name)
    gone = [item for item in PAGES[name][1] if rendered(item) not in text]
    assert not gone, f"no longer on book/{name}: {gone}"


def test_names_are_on_somebook_page() -> None:
    text = " ".join(book_page(name) for name in PAGES)
    assert [name for name in NAMES if name not in text] == []


def test_generated_pages_hold_their_directives() -> None:
    """The pages whose figures are generated at build time still generate them."""
    for name, directives in (("hardware.md", ["gpu-table"]),
                             ("status.md", ["machine-status", "nb-exec-table"]),
                             ("calculators.md", ["calculator"])):
        markdown = markdown_of(BOOK / name)
        for directive in directives:
            assert re.search(rf"^```\{{{directive}\}}", markdown, flags=re.M), (name, directive)


def test_rendered_strips_escapes_and_wrapping() -> None:
    assert rendered("costs \\$576;\n  \\$5,760 would") == "costs $576; $5,760 would"


def test_pages_start_with_their_labels() -> None:
    assert (BOOK / "conventions.md").read_text(encoding="utf-8").startswith("(conventions)=")
    assert (BOOK / "seed_corrections.md").read_text(encoding="utf-8").startswith(
        "(seed_corrections)=")


def test_cited_keys_exist() -> None:
    bib = (BOOK / "references.bib").read_text(encoding="utf-8")
    keys = set(re.findall(r"^@\w+\{([^,]+),", bib, flags=re.M))
    for name in ("conventions.md", "seed_corrections.md"):
        text = (BOOK / name).read_text(encoding="utf-8")
        for group in re.findall(r"\{cite(?::[pt])?\}`([^`]+)`", text):
            for key in group.split(","):
                assert key.strip() in keys, f"{name} cites unknown key {key!r}"


def test_the_bibliography_parses_as_the_book_build_reads_it() -> None:
    """sphinxcontrib-bibtex reads book/references.bib with pybtex's strict parser; an entry
    left without its closing brace stops the whole book build, so parse it here first."""
    from pybtex.database import parse_string

    bib = (BOOK / "references.bib").read_text(encoding="utf-8")
    entries = parse_string(bib, "bibtex").entries
    assert len(entries) == len(re.findall(r"^@\w+\{", bib, flags=re.M))
