"""The runs the fit never sees: later releases (gpulesson/data/heldout_runs.json), another
code base (foundry_runs.json) and papers, READMEs and MLPerf logs outside the fit
(paper_runs.json)."""

from __future__ import annotations

import statistics

import pytest

from gpulesson.planning.heldout import (
    SWITCHES_OFF,
    format_foundry_summary,
    format_held_out_table,
    format_paper_table,
    foundry_cells,
    foundry_entries,
    foundry_rows,
    held_out,
    held_out_rows,
    paper_entries,
    paper_rows,
)
from gpulesson.planning.published import TABLE_WIDTH, Comparison
from gpulesson.planning.runs import _run, load_runs
from gpulesson.planning.training import default_factors, plan_run
from gpulesson.transformer import TransformerConfig, param_count

ENTRIES = held_out()


def test_every_held_out_run_is_sourced_and_none_is_in_the_fit() -> None:
    """Each entry quotes its table row, pinned to the commit that published it, and no
    held-out run is a run of the fitted set: the split is by release, 26.04.01 and later."""
    runs = [_run(e) for e in ENTRIES]
    assert len(runs) >= 30
    for entry, run in zip(ENTRIES, runs, strict=True):
        assert "/blob/" in str(entry["url"]) and len(str(entry["url"]).split("/")[6]) == 40
        assert entry["quote"] and entry["date"] >= "2026-05", run.name
        assert str(entry["source"]).startswith("NVIDIA Megatron-Bridge performance summary")
    fitted = {r.url for r in load_runs()}
    assert not fitted & {r.url for r in runs}
    assert all("NeMo container 26." in r.source for r in runs)
    assert len({r.name for r in runs}) == len(runs)


def test_the_recipes_switches_account_for_the_2026_speed_ups() -> None:
    """Planned as their recipes run them (CUDA graphs, fused expert MLP, FP8 attention,
    all-to-all overlap), the held-out runs are predicted closer than with those switches
    off: the 2026 MoE recipes' speed-ups are the mechanisms the switches count."""
    factors = default_factors()
    on, off = [], []
    for entry in ENTRIES:
        run = _run(entry)
        on.append(abs(Comparison(run, plan_run(run, factors=factors)).error))
        off.append(abs(Comparison(run, plan_run(run, factors=factors,
                                                **SWITCHES_OFF)).error))
    assert statistics.median(on) < statistics.median(off)
    assert sum(e <= 0.25 for e in on) > sum(e <= 0.25 for e in off)


def test_every_held_out_layout_fits_its_gpus() -> None:
    """The runs ran: none of the 30 layouts may be called infeasible. DeepSeek-V3 on 256
    B300s (pp 8, ep 8, micro-batches of 2) fits only once its recipe's recomputation of
    latent attention's up-projections ("mla-up-proj") drops Q, K and V."""
    assert not [r.name for r in held_out_rows() if not r.feasible]


def test_the_held_out_table_has_a_row_per_run_within_the_page() -> None:
    """The table lesson 10 prints: a row per run with its two errors, and lines no wider
    than the site's output column."""
    table = format_held_out_table()
    lines = table.splitlines()
    assert len(lines) == 1 + len(ENTRIES) + 2
    assert max(len(line) for line in lines) <= TABLE_WIDTH
    row = held_out_rows()[0]
    assert lines[1].startswith(row.name) and lines[1].endswith(
        f"{row.error:>+7.0%}{row.plain_error:>+7.0%}")


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e["options"].get("fused_expert_mlp")],
                         ids=lambda e: str(e["name"]))
def test_a_fused_expert_mlp_is_only_stated_for_a_mixture_of_experts(entry: dict) -> None:
    assert _run(entry).is_moe


FOUNDRY = foundry_entries()


def test_llm_foundry_rows_are_every_row_of_its_tables_and_none_is_fitted() -> None:
    """216 rows of five tables (llm-foundry 5e85bd62d, 2024-01-06), each quoting its own
    table row, at a commit pinned in its address; no fitted run comes from that code base."""
    assert len(FOUNDRY) == 216
    assert {e["table"] for e in FOUNDRY} == {
        "H100 BF16, 128-512 GPUs", "H100 BF16, 8-64 GPUs", "H100 FP8, 8 GPUs",
        "A100 80GB BF16", "A100 40GB BF16"}
    assert len({e["name"] for e in FOUNDRY}) == len(FOUNDRY)
    for entry in FOUNDRY:
        assert str(entry["quote"]).startswith("|  ") and "/blob/5e85bd62d" in str(entry["url"])
    assert not {r.code_base for r in load_runs()} & {e["code_base"] for e in FOUNDRY}


def test_every_llm_foundry_model_has_its_published_parameter_count() -> None:
    """llm-foundry prints each run's parameter count (NumParams): the course's count of
    the YAML's shape, with MPT's biases, LayerNorms, tied embeddings and learned position
    embeddings as long as the run's sequence, gives all 216 to the parameter. MPT trains
    without dropout (its three dropout probabilities default to 0.0 and no YAML sets
    them), so the planner counts no dropout kernel."""
    for entry in FOUNDRY:
        cells = foundry_cells(str(entry["quote"]))
        cfg = TransformerConfig(**entry["model"])  # type: ignore[arg-type]
        assert param_count(cfg) == int(cells["params"]), entry["name"]
        assert not cfg.dropout, entry["name"]


def test_llm_foundry_mfu_is_the_courses_convention() -> None:
    """llm-foundry's MFU is 6N plus 12 L d s FLOPs per token over the dense peak, the
    course's convention: the MFU the course derives from the tokens per second per GPU is
    the table's MFU column in BF16, and twice it in FP8, whose column is over the FP8
    peak (Model TFLOP / 1,979), twice the BF16 peak the course divides by."""
    for entry, run in zip(FOUNDRY, (_run(e) for e in FOUNDRY), strict=True):
        cells = foundry_cells(str(entry["quote"]))
        theirs = float(cells["mfu"]) / 100 * (2 if entry["precision"] == "fp8" else 1)
        assert run.published_mfu == pytest.approx(theirs, abs=0.002), entry["name"]


def test_the_code_base_split_fits_and_its_attention_kernel_explains_long_contexts() -> None:
    """Every llm-foundry layout fits. Its benchmark runs FlashAttention in Triton (the
    YAMLs' and submit_benchmarks.py's ``attn_impl: triton``; sweep.sh passes no other):
    planned with that kernel's published slow-down and nothing fitted to this split, the
    median |error| meets issue 31's 10 %, overall and at 16K to 65K tokens, where attention
    is most of a step. With the fitted runs' kernel (``plain_error``) the planner
    is more than 20 % high there: the kernel is that miss."""
    rows = foundry_rows()
    assert len(rows) == len(FOUNDRY) and all(r.feasible for r in rows)
    assert all(e["options"]["attention_kernel"] == "triton" for e in FOUNDRY)
    assert statistics.median(abs(r.error) for r in rows) <= 0.10
    long = [r for e, r in zip(FOUNDRY, rows, strict=True) if e["seq_len"] >= 16384]
    assert len(long) >= 40
    assert statistics.median(abs(r.error) for r in long) <= 0.10
    assert statistics.median(r.plain_error for r in long) > 0.2


def test_the_code_base_summary_is_within_the_page() -> None:
    lines = format_foundry_summary().splitlines()
    assert len(lines) == 1 + 5 + 3 + 1 and lines[0].split()[-1] == "fused"
    assert max(len(line) for line in lines) <= TABLE_WIDTH
    assert lines[-1].split()[:2] == ["all", str(len(FOUNDRY))]
    with pytest.raises(ValueError, match="one row per llm-foundry entry"):
        format_foundry_summary(foundry_rows()[:3])
    with pytest.raises(ValueError, match="row must have 20 cells"):
        foundry_cells("| 7b | 2048 |")


PAPERS = paper_entries()
#: Each paper run's model size as its source names it, in billions of parameters, and how
#: close the course's count must come (relative): BLOOM's model card gives the exact count
#: (176,247,271,424); Korthikanti et al. 2022 (Table 3), the Megatron-LM READMEs and MLPerf
#: round to the digits of the name (22B, 175B, 1T, 8B, 405B); Nemotron-4 states 12.5
#: billion non-embedding parameters, plus its untied 256,000 x 6,144 input and output
#: embeddings. The 2024 README's table labels its GPT sizes loosely (1,754M is "1.7B" and
#: 31,508M "32B" with the shapes it states), hence 3.5 %.
PAPER_SIZES = {"BLOOM 176B": (176.247271424, 1e-9), "Korthikanti 22B": (22, 0.01),
               "Korthikanti 175B": (175, 0.01), "Korthikanti 530B": (530, 0.01),
               "Korthikanti 1T": (1000, 0.01), "Megatron-LM README 175B": (175, 0.01),
               **{f"Megatron-Core README {n}B": (n, 0.035)
                  for n in (1.7, 7.1, 16, 32, 70, 119, 177, 314, 462)},
               "Nemotron-4 15B": (12.5 + 2 * 256_000 * 6_144 / 1e9, 0.01),
               "MLPerf 5.1 Llama 3.1 8B": (8, 0.01), "MLPerf 5.0 Llama 3.1 405B": (405, 0.01)}


def test_every_paper_run_is_sourced_and_none_is_in_the_fit() -> None:
    """Each run outside the fit quotes its source (a paper's arXiv page, or a README or log
    pinned to a commit), and no fitted run shares its source."""
    assert len(PAPERS) >= 23
    for entry in PAPERS:
        url = str(entry["url"])
        assert url.startswith("https://arxiv.org/abs/") or (
            "/blob/" in url and len(url.split("/")[6]) == 40), entry["name"]
        assert entry["quote"] and entry["date"] and entry["assumptions"], entry["name"]
    assert not {r.url for r in load_runs()} & {str(e["url"]) for e in PAPERS}
    assert len({e["name"] for e in PAPERS}) == len(PAPERS)


@pytest.mark.parametrize("entry", PAPERS, ids=lambda e: str(e["name"]))
def test_every_paper_model_has_the_size_its_source_names(entry: dict) -> None:
    """The shapes typed for each run (or the course's preset it names) give the model size
    its source names (:data:`PAPER_SIZES`)."""
    size, close = next(v for k, v in PAPER_SIZES.items()
                       if str(entry["name"]).startswith(k + ","))
    got = param_count(_run(entry).model_view.cfg) / 1e9
    assert got == pytest.approx(size, rel=close)


def test_paper_figures_agree_with_their_sources_iteration_times() -> None:
    """Where a source states its iteration time, the figure the course plans against (an
    MFU, Megatron-LM's eq. 3 TFLOP/s or tokens per second) is that time's tokens per second
    per GPU in the course's convention, within the rounding of the time as printed (1.10 s
    is 0.5 %): the FLOP conventions of each source and the course agree."""
    timed = [e for e in PAPERS if "iteration_time_s" in e["published"]]
    assert len(timed) >= 9
    for entry in timed:
        tps = entry["sequences"] * entry["seq_len"] / entry["published"][
            "iteration_time_s"] / entry["n_gpus"]
        timed_run = _run({**entry, "published": {"kind": "tokens_per_second_per_gpu",
                                                 "value": tps}})
        assert _run(entry).published_mfu == pytest.approx(timed_run.published_mfu,
                                                          rel=0.005), entry["name"]


def test_runs_outside_the_fit_are_predicted_within_the_issue_bar() -> None:
    """Planned with the factors fitted on the published set only, every paper run fits its
    GPUs, the median |error| is within 10 % and every run within 25 %; the table lesson 10
    prints has a row per run within the page's width."""
    rows = paper_rows()
    assert not [r.name for r in rows if not r.feasible]
    errors = [abs(r.error) for r in rows]
    assert statistics.median(errors) <= 0.10 and max(errors) <= 0.25, errors
    lines = format_paper_table().splitlines()
    assert len(lines) == 1 + len(PAPERS) + 1
    assert max(len(line) for line in lines) <= TABLE_WIDTH
