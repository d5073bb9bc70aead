"""The held-out runs of gpulesson/data/heldout_runs.json: later releases the fit never sees."""

from __future__ import annotations

import statistics

import pytest

from gpulesson.planning.heldout import SWITCHES_OFF, format_held_out_table, held_out, held_out_rows
from gpulesson.planning.published import TABLE_WIDTH, Comparison
from gpulesson.planning.runs import _run, load_runs
from gpulesson.planning.training import default_factors, plan_run

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
