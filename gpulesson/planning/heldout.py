"""Runs of later releases that the training model is never fitted on: a time split.

``gpulesson/data/heldout_runs.json`` holds NVIDIA Megatron-Bridge's pre-training rows of
NeMo releases 26.04.01 to 26.08 (2026), each with its recipe read at the commit that
published its table. The factors are fitted on ``gpulesson/data/training_runs.json`` only
(the papers and releases up to 25.11, :func:`~gpulesson.planning.training.default_factors`);
:func:`held_out_rows` plans each held-out run on its published layout twice: as its recipe
runs it (the switches in its ``options``: a whole-step CUDA graph, the experts' fused MLP,
FP8 attention, the all-to-all hidden behind compute) and with those switches off
(:data:`SWITCHES_OFF`), to show what they account for.

A second split, by code base: ``gpulesson/data/foundry_runs.json`` holds every row of
MosaicML llm-foundry's MPT training benchmarks (2024-01; PyTorch FSDP, 124M to 65B
parameters, 512 to 65,536 tokens, A100 and H100), a code base none of the fitted runs comes
from. :func:`foundry_rows` plans each on its published layout with the same factors and
the attention kernel its benchmark ran, FlashAttention in Triton (2022), slowed down from
the fitted runs' kernels by the newer kernels' published speed-ups
(:data:`~gpulesson.planning.perf_model.ATTENTION_KERNELS`: nothing is fitted to this
split), and again as if it ran the fitted runs' kernel (``plain_error``);
:func:`foundry_groups` sorts them by table and by sequence length and
:func:`format_foundry_summary` sums the groups up. With the fitted runs' kernel the planner
is high at long sequences, where attention is most of a step.

A third split, by source: ``gpulesson/data/paper_runs.json`` holds runs published in papers,
READMEs and MLPerf Training result logs whose figures the fit never saw (BigScience's BLOOM
on Megatron-DeepSpeed, Korthikanti et al. 2022's sequence-parallel runs, the Megatron-LM
READMEs of 2021 and 2024, NVIDIA's Nemotron-4 15B, MLPerf's Llama 3.1 405B on H100, H200
and GB200 and 8B on AMD's MI355X); :func:`paper_rows` plans each with the same factors and
:func:`format_paper_table` prints them.

Taught in: ``notebooks/planning_dashboard.ipynb`` (predicted against published, "Runs the
fit never saw"); ``benchmarks/bench_heldout.py`` prints the same tables: the time split's,
the code-base split's summary and the sources' split.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from types import MappingProxyType
from typing import Any

from gpulesson import _validate as v

from .published import Comparison, LeaveOneOut, _fit_flag, _table_head, _table_row
from .runs import _run
from .training import default_factors, plan_run

__all__ = ["SWITCHES_OFF", "HeldOut", "foundry_cells", "foundry_entries", "foundry_groups",
           "foundry_rows", "format_foundry_summary", "format_held_out_table",
           "format_paper_table", "held_out", "held_out_rows", "held_out_summary",
           "paper_entries", "paper_rows"]

#: The options that describe a release's software rather than the run's layout, as
#: :func:`~gpulesson.planning.plan_training` takes them when they are off.
SWITCHES_OFF = {"cuda_graphs": "none", "fused_expert_mlp": False, "fp8_attention": False,
                "overlap": None}


def _data(name: str) -> Mapping[str, Any]:
    """A data file of ``gpulesson/data``, parsed."""
    text = resources.files("gpulesson").joinpath(f"data/{name}").read_text(encoding="utf-8")
    return json.loads(text)


@cache
def held_out() -> tuple[Mapping[str, object], ...]:
    """The held-out entries, as ``training_runs.json`` spells them (read once)."""
    return tuple(_data("heldout_runs.json")["runs"])


@cache
def paper_entries() -> tuple[Mapping[str, object], ...]:
    """The runs of papers, READMEs and MLPerf logs outside the fit (``paper_runs.json``),
    as ``training_runs.json`` spells them (read once)."""
    return tuple(_data("paper_runs.json")["runs"])


@dataclass(frozen=True)
class HeldOut(LeaveOneOut):
    """One held-out run, shaped as a leave-one-out row (its published MFU, the MFU
    planned as its recipe runs it, ``error`` = predicted / published - 1, the dominant
    term, whether its layout fits), with the error when the recipe's switches are off
    (``plain_error``) and the switches it states."""

    plain_error: float = 0.0
    switches: tuple[str, ...] = ()


def _planned(entry: Mapping[str, object], factors: Mapping[str, float],
             off: Mapping[str, object] = SWITCHES_OFF) -> HeldOut:
    """One entry planned on its published layout as its recipe runs it, and with the
    recipe's switches (``off``: :data:`SWITCHES_OFF`) off where it states any."""
    run = _run(entry)
    plan = plan_run(run, factors=factors)
    switches = tuple(k for k in off if k in run.options)
    plain = plan_run(run, factors=factors, **off) if switches else plan
    return HeldOut.planned(run, plan, plain_error=Comparison(run, plain).error,
                           switches=switches)


@cache
def held_out_rows() -> tuple[HeldOut, ...]:
    """Every held-out run, planned with the factors fitted on the published set only."""
    factors = default_factors()
    return tuple(_planned(entry, factors) for entry in held_out())


@cache
def paper_rows() -> tuple[HeldOut, ...]:
    """Every run of :func:`paper_entries`, planned with the factors fitted on the
    published set only."""
    factors = default_factors()
    return tuple(_planned(entry, factors) for entry in paper_entries())


@cache
def _foundry() -> Mapping[str, Any]:
    return _data("foundry_runs.json")


#: The columns of llm-foundry's tables, in order (the row's cells by these names).
_FOUNDRY_COLUMNS = ("model", "seq_len", "n_gpus", "gpu", "mfu", "hfu", "model_tflop",
                    "micro_batch", "grad_accum", "sequences", "samples_per_second",
                    "tokens_per_second", "tokens_per_second_per_gpu", "batch_tokens",
                    "precision", "mp_mode", "sharding", "checkpointing", "cpu_offload",
                    "params")


def foundry_cells(row: str) -> dict[str, str]:
    """One table row of llm-foundry's README, cell by cell (:data:`_FOUNDRY_COLUMNS`)."""
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    if len(cells) != len(_FOUNDRY_COLUMNS):
        raise ValueError(f"row must have {len(_FOUNDRY_COLUMNS)} cells, got {len(cells)}: "
                         f"{row!r:.200}")
    return dict(zip(_FOUNDRY_COLUMNS, cells, strict=True))


@cache
def foundry_entries() -> tuple[Mapping[str, object], ...]:
    """llm-foundry's rows as entries of ``training_runs.json``: the model's shape from its
    YAML with MPT's defaults (``model_defaults``: no dropout), the layout (FULL_SHARD as
    ZeRO-3, SHARD_GRAD_OP as ZeRO-2, checkpointing as full recomputation) and the tokens
    per second per GPU as published."""
    doc = _foundry()
    entries = []
    for item in doc["rows"]:
        c = foundry_cells(item["row"])
        table = doc["tables"][item["table"]]
        seq, shape = int(c["seq_len"]), doc["models"][c["model"]]
        fp8 = "fp8" in c["precision"]
        checkpointing = c["checkpointing"] == "True"
        entries.append({
            "name": (f"MPT-{c['model']}, {seq:,} tokens, {c['n_gpus']} {table['gpu']}"
                     f"{', FP8' if fp8 else ''}, micro-batch {c['micro_batch']}"
                     f"{', recompute' if checkpointing else ''}"),
            "code_base": doc["code_base"], "source": doc["source"], "url": doc["url"],
            "date": doc["date"], "quote": item["row"], "assumptions": doc["assumptions"],
            "model": {"name": f"mpt-{c['model']}", "hidden": shape["hidden"],
                      "layers": shape["layers"], "heads": shape["heads"],
                      "vocab": doc["vocab"], "max_positions": seq, **doc["model_defaults"]},
            "gpu": table["gpu"], "n_gpus": int(c["n_gpus"]), "seq_len": seq,
            "sequences": int(c["sequences"]),
            "layout": {"tp": 1, "pp": 1, "zero_stage": 3 if c["sharding"] == "FULL_SHARD"
                       else 2, "micro_batch": int(c["micro_batch"])},
            "precision": "fp8" if fp8 else "bf16", "fp8_recipe": "delayed" if fp8 else "",
            "recompute": "full" if checkpointing else "none",
            "published": {"kind": "tokens_per_second_per_gpu",
                          "value": float(c["tokens_per_second_per_gpu"])},
            "options": {**doc["options"], **({"scaleout_bandwidth": table["scaleout_bandwidth"]}
                                             if "scaleout_bandwidth" in table else {})},
            "table": table["label"]})
    return tuple(entries)


#: The attention kernel of the fitted runs, the code-base split's "plain" comparison.
_FITTED_KERNEL = MappingProxyType({"attention_kernel": "fused"})


@cache
def foundry_rows() -> tuple[HeldOut, ...]:
    """Every llm-foundry row, planned with the factors fitted on the published set, with
    its Triton attention kernel and (``plain_error``) with the fitted runs' kernel."""
    factors = default_factors()
    return tuple(_planned(entry, factors, _FITTED_KERNEL) for entry in foundry_entries())


#: Sequence lengths of the code-base split's summary, (label, shortest, longest).
_SEQUENCE_GROUPS = (("512 to 2,048 tokens", 0, 2048), ("4,096 to 8,192", 4096, 8192),
                    ("16,384 to 65,536", 16384, 1 << 30))


def foundry_groups(rows: Sequence[HeldOut] | None = None) -> dict[str, list[HeldOut]]:
    """The llm-foundry rows by table, then by sequence length (:data:`_SEQUENCE_GROUPS`),
    then ``"all"``; ``rows`` one per :func:`foundry_entries` entry, in order."""
    rows = foundry_rows() if rows is None else rows
    entries = foundry_entries()
    if len(rows) != len(entries):
        raise ValueError(f"rows must hold one row per llm-foundry entry ({len(entries)}), "
                         f"got {len(rows)}")
    groups: dict[str, list[HeldOut]] = {}
    for entry, row in zip(entries, rows, strict=True):
        groups.setdefault(str(entry["table"]), []).append(row)
    for label, low, high in _SEQUENCE_GROUPS:
        groups[label] = [row for entry, row in zip(entries, rows, strict=True)
                         if low <= int(entry["seq_len"]) <= high]  # type: ignore[call-overload]
    groups["all"] = list(rows)
    return groups


def format_foundry_summary(rows: Sequence[HeldOut] | None = None) -> str:
    """The code-base split by table and by sequence length (:func:`foundry_groups`): runs,
    median |error|, median error (its sign says high or low), how many within 25 %, how
    many do not fit, and the median |error| with the fitted runs' attention kernel
    (``plain_error``)."""
    groups = foundry_groups(rows)
    lines = [f"{'llm-foundry rows':26s}{'runs':>5s}{'|error|':>9s}{'error':>8s}"
             f"{'within 25 %':>13s}{'no fit':>8s}{'fused':>8s}"]
    for label, members in groups.items():
        s = held_out_summary([r.error for r in members])
        lines.append(f"{label:26s}{s['runs']:>5d}{s['median']:>9.1%}"
                     f"{statistics.median(r.error for r in members):>+8.1%}"
                     f"{s['within_25']:>13d}{sum(not r.feasible for r in members):>8d}"
                     f"{held_out_summary([r.plain_error for r in members])['median']:>8.1%}")
    return "\n".join(lines)


def held_out_summary(errors: Sequence[float]) -> dict[str, float]:
    """Median and largest |error|, and how many are within 25 %."""
    size = [abs(e) for e in errors]
    return {"runs": len(size), "median": statistics.median(size), "max": max(size),
            "within_25": sum(e <= 0.25 for e in size)}


def format_held_out_table(rows: Sequence[HeldOut] | None = None) -> str:
    """The held-out table as text: run, quoted MFU, the MFU planned as its recipe runs it,
    its error and the error with the switches off; then two summary lines. Within
    :data:`~gpulesson.planning.published.TABLE_WIDTH` characters, as the lesson's other
    table."""
    rows = held_out_rows() if rows is None else rows
    width, head = _table_head(rows)
    lines = [f"{head}{'plain':>7s}"]
    lines += [f"{_table_row(r, width)}{r.plain_error:>+7.0%}{_fit_flag(r)}" for r in rows]
    lines += [_summary_line("as their recipes run", [r.error for r in rows]),
              _summary_line("switches left off", [r.plain_error for r in rows])]
    return "\n".join(lines)


def format_paper_table(rows: Sequence[HeldOut] | None = None) -> str:
    """The runs of papers, READMEs and MLPerf logs outside the fit (:func:`paper_rows`) as
    text: run, quoted MFU, planned MFU and error, then a summary line."""
    rows = paper_rows() if rows is None else rows
    width, head = _table_head(rows)
    lines = [head, *(f"{_table_row(r, width)}{_fit_flag(r)}" for r in rows),
             _summary_line("all", [r.error for r in rows])]
    return "\n".join(lines)


def _summary_line(label: str, errors: Sequence[float]) -> str:
    s = held_out_summary(errors)
    return (f"{label}: median |error| {s['median']:.1%}, largest {s['max']:.0%}, "
            f"{s['within_25']} of {s['runs']} within 25 %")


v.guard_module(globals())
