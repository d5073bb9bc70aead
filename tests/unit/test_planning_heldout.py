"""The held-out runs of benchmarks/heldout_runs.json: later releases the fit never sees."""

from __future__ import annotations

import importlib.util
import statistics
from pathlib import Path

import pytest

from gpulesson.planning.published import Comparison
from gpulesson.planning.runs import _run, load_runs
from gpulesson.planning.training import default_factors, plan_run

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_heldout.py"
_SPEC = importlib.util.spec_from_file_location("bench_heldout", _PATH)
assert _SPEC and _SPEC.loader
bench = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench)
ENTRIES = bench.held_out()


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
                                                **bench.SWITCHES_OFF)).error))
    assert statistics.median(on) < statistics.median(off)
    assert sum(e <= 0.25 for e in on) > sum(e <= 0.25 for e in off)


def test_every_held_out_layout_fits_its_gpus() -> None:
    """The runs ran: none of the 30 layouts may be called infeasible. DeepSeek-V3 on 256
    B300s (pp 8, ep 8, micro-batches of 2) fits only once its recipe's recomputation of
    latent attention's up-projections ("mla-up-proj") drops Q, K and V."""
    plans = {e["name"]: plan_run(_run(e), factors=default_factors()) for e in ENTRIES}
    assert not [name for name, plan in plans.items() if not plan.feasible]


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e["options"].get("fused_expert_mlp")],
                         ids=lambda e: str(e["name"]))
def test_a_fused_expert_mlp_is_only_stated_for_a_mixture_of_experts(entry: dict) -> None:
    assert _run(entry).is_moe
