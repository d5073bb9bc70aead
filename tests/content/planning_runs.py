"""Lesson 10's figures about the runs its planner is checked against, as its prose words
them: the leave-one-out table of the published runs, the held-out splits (newer releases,
MosaicML's llm-foundry tables, papers and MLPerf result logs) and the three runs NVIDIA
files as regressions. ``test_planning_dashboard.py`` claims each one on the page; this
module holds them so that the lesson's content test stays one readable module.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import statistics
from collections.abc import Mapping, Sequence

from gpulesson import planning, transformer
from gpulesson.planning import bands, heldout

from ..benchmark_scripts import benchmark_module

NUMBERS = {1: "one", 2: "two", 3: "three", 4: "four"}


def pct(fraction: float, digits: int = 0) -> str:
    """A share as this lesson writes it, with a space: "40 %"."""
    return f"{100 * fraction:.{digits}f} %"


def off(error: float) -> str:
    """How far a prediction is off, as this lesson words it: "9 % high", "15 % low"."""
    return f"{pct(abs(error))} {'high' if error > 0 else 'low'}"


COMPARED = {c.run.name: c for c in planning.published_comparison()}


def run(name: str) -> planning.published.PublishedRun:
    return COMPARED[name].run


def outside_band() -> list[str]:
    """The runs of the leave-one-out table predicted more than 25 % off."""
    return [r.name for r in planning.published.leave_one_out() if abs(r.error) > 0.25]


def loo_error(name: str) -> float:
    """The leave-one-out error of the table's run ``name``."""
    return next(r.error for r in planning.published.leave_one_out() if r.name == name)


#: The run the model missed until it counted gpt-oss's clamped activation.
GPT_OSS_GB200 = "Megatron-Bridge GPT-OSS 120B, 64 GB200, BF16"


#: The three runs NVIDIA's tracker files as NeMo 25.11 regressions, and their fixed figures.
#: Megatron-Bridge issue #1998 (Qwen3 30B-A3B on H100 and B200, dropless, half of 25.09);
#: the 26.02.01 performance summary (docs/performance-summary.md at commit cfeddcd94):
#: DGX-H100, 16 GPUs, FP8, GBS 1024, MBS 1, PP 2, VP 12, EP 8: 9,058 tokens/s per GPU;
#: DGX-B200, 8 GPUs, MXFP8, GBS 512, MBS 4, EP 8: 26,695 tokens/s per GPU.
#: Pull request #1760 (commit a6e92de5f, Qwen3 235B-A22B on 64 B200s, MXFP8, GBS 1024):
#: the virtual pipeline off, a step of 16.9 s instead of 20.1 s.
QWEN3_30B_H100 = "Megatron-Bridge Qwen3 30B-A3B, 16 H100, FP8-CS"
QWEN3_30B_B200 = "Megatron-Bridge Qwen3 30B-A3B, 8 B200, FP8-MX"
QWEN3_235B_B200 = "Megatron-Bridge Qwen3 235B-A22B, 64 B200, FP8-MX"
FIXED_QWEN3_30B_TOKENS = 9_058
FIXED_QWEN3_30B_B200_TOKENS = 26_695
FIXED_QWEN3_30B_B200_MICRO_BATCH = 4
FIXED_QWEN3_235B_STEP = 16.9
#: The same three layouts as NeMo 25.09 first published them, with token dropping (each
#: expert's tokens capped at its share, inputs padded to it), tokens/s per GPU, and the FP8
#: recipe each is planned with. The summary at commit fa0315ae2 names none for its
#: unbracketed FP8 figures; the Qwen3 performance configs at that commit
#: (scripts/performance/configs/qwen3/*.yaml) list only fp8_cs and fp8_mx runs, the H100
#: row's micro-batch 2 is their fp8_cs entry's, and the 25.11 summary labels the same
#: pattern "FP8-CS (FP8-MX)": per-tensor current scaling. The bracketed 4,275 of the 235B
#: row is its 32 x 32 block-scaled figure, MXFP8, as the 25.11 run.
TOKEN_DROP = {QWEN3_30B_H100: (10_494, "current"), QWEN3_30B_B200: (18_066, "current"),
              QWEN3_235B_B200: (4_275, "mxfp8")}
#: The regressed B200 layout of Qwen3 30B-A3B as release 26.02 still published it (MBS 1,
#: docs/performance-summary.md at cfeddcd94, section "26.02 NeMo Container"), tokens/s per
#: GPU: the fix of 26.02.01 came with four sequences to a micro-batch.
STILL_SLOW_QWEN3_30B_B200_TOKENS = 9_691


def held_out_errors(switches: bool = True) -> dict[str, float]:
    """|error| of the held-out summary: as the recipes run, or with the switches off."""
    rows = heldout.held_out_rows()
    return heldout.held_out_summary(
        [r.error if switches else r.plain_error for r in rows])


#: The held-out run the planner misses most, as the lesson names it.
WORST_HELD_OUT = "MB 26.04.01 GPT-OSS 120B, 64 B300, BF16"


def largest_miss(rows: Sequence, expected: str, words: str) -> str:
    """"The largest miss is <words>, x % high" while the run the planner misses most among
    ``rows`` is ``expected``; otherwise that run's name, so that the claim fails naming it."""
    worst = max(rows, key=lambda r: abs(r.error))
    return (f"The largest miss is {words}, {off(worst.error)}" if worst.name == expected
            else worst.name)


def worst_held_out() -> str:
    return largest_miss(heldout.held_out_rows(), WORST_HELD_OUT,
                        "GPT-OSS 120B on 64 B300s in BF16")


def gpt_oss_high_on_blackwell() -> str:
    """Whether every GPT-OSS 120B run on a Blackwell GPU (B200, B300, GB200, GB300), of
    the leave-one-out table and the held-out one, is predicted high."""
    rows = [(r.name, r.error) for r in planning.published.leave_one_out()]
    rows += [(r.name, r.error) for r in heldout.held_out_rows()]
    gpt = [e for name, e in rows if "GPT-OSS" in name and ("B200" in name or "B300" in name)]
    return ("the planner is high for GPT-OSS 120B on every Blackwell system of both tables"
            if len(gpt) >= 7 and min(gpt) > 0 else f"GPT-OSS on Blackwell: {gpt}")


def foundry_span() -> str:
    """The llm-foundry models' sizes (the course's parameter count of each YAML's shape,
    the table's NumParams) and sequence lengths."""
    entries = heldout.foundry_entries()
    size = [transformer.param_count(transformer.TransformerConfig(**e["model"]))
            for e in entries]
    seq = [e["seq_len"] for e in entries]
    return (f"models ({min(size) / 1e6:.0f}M to {max(size) / 1e9:.0f}B parameters, "
            f"{min(seq)} to {max(seq):,} tokens")


def foundry_month() -> str:
    return datetime.date.fromisoformat(str(heldout.foundry_entries()[0]["date"])).strftime(
        "%B %Y")


def misses(rows: Sequence) -> str:
    """A held-out split's summary as the lesson words it: median |error|, how many within
    25 %, whether every layout fits."""
    s = heldout.held_out_summary([r.error for r in rows])
    fits = "every layout fits" if all(r.feasible for r in rows) else "some layout does not fit"
    return (f"The planner misses them by {pct(s['median'], 1)} in the median, "
            f"{s['within_25']} of the {s['runs']} within 25 %, and {fits}")


def triton_speed_ups() -> tuple[str, str]:
    """The newer kernels' speed-ups over the older ones, as the planner takes them."""
    kernels = planning.perf_model.ATTENTION_KERNELS
    triton, fa2 = kernels["triton"]["Ampere"], kernels["flash-attention-2"]["Hopper"]
    return (f"FlashAttention-2 is about {triton[0]:.1f} times as fast forward and "
            f"{triton[1]:.0f} times\nbackward on an A100",
            f"FlashAttention-3 about {fa2[0]:.2f} and\n{fa2[1]:.1f} times as fast as "
            "FlashAttention-2 on an H100")


def foundry_by_length() -> tuple[str, str, str]:
    """The median |error| at 16,384 tokens and longer with the Triton kernel, the median
    error there with the fitted runs' kernel, and the A100 runs' median error."""
    groups = heldout.foundry_groups()
    long = groups["16,384 to 65,536"]
    near = statistics.median(abs(r.error) for r in long)
    fused = statistics.median(r.plain_error for r in long)
    a100 = statistics.median(r.error for label, rows in groups.items()
                             if label.startswith("A100") for r in rows)
    if near > 0.10 or fused <= 0.2 or a100 >= 0:
        return (f"llm-foundry: {near:.1%} at 16K and longer", f"fused: {fused:+.1%}",
                f"A100: {a100:+.1%}")
    return (f"At\n16,384 tokens and longer, where attention takes most of a step, the median "
            f"miss is {pct(near, 1)}",
            f"planned with the fitted runs' kernel, those runs come out {pct(fused)} high",
            f"The A100 runs are {pct(-a100)} low in the median.")


def paper_count() -> str:
    size = len(heldout.paper_entries())
    return {33: "Thirty-three"}.get(size, str(size))


def paper_span() -> str:
    """The sizes of Korthikanti et al.'s runs and the most GPUs of a 2024 README run."""
    rows = heldout.paper_entries()
    sizes = [transformer.param_count(transformer.TransformerConfig(**e["model"]))
             for e in rows if str(e["name"]).startswith("Korthikanti")]
    core = max(e["n_gpus"] for e in rows if str(e["name"]).startswith("Megatron-Core"))
    return (f"from {min(sizes) / 1e9:.0f}B to {max(sizes) / 1e12:.0f}T parameters "
            f"{{cite:p}}`korthikanti2022reducing`, the Megatron-LM READMEs' runs of 2021 on "
            f"A100s {{cite:p}}`nvidia2021megatronreadme` and of 2024 on up to {core:,} H100s")


def mlperf_span() -> str:
    """The MLPerf runs of the papers' split: every v5.0 submission of Llama 3.1 405B, by
    GPU (their GPU counts), and the v5.1 8B run's AMD GPUs."""
    rows = [e for e in heldout.paper_entries() if str(e["name"]).startswith("MLPerf")]
    large = [e for e in rows if e["model"] == "llama-3.1-405b"]
    small = [e for e in rows if e["model"] == "llama-3-8b"]

    def counts(gpu: str) -> str:
        sizes = sorted(e["n_gpus"] for e in large if e["gpu"] == gpu)
        joint = " and " if len(set(sizes)) == 2 else " to "
        return f"{sizes[0]:,}{joint}{sizes[-1]:,}"

    def version(entry: dict) -> str:  # "MLPerf 5.0 Llama ..."
        return str(entry["name"]).split()[1]

    assert {version(e) for e in large} == {version(large[0])}
    return (f"Training's result logs of every v{version(large[0])} submission of Llama 3.1 "
            f"405B, on {counts('H100 SXM')} H100s, {counts('H200')} H200s and "
            f"{counts('GB200 NVL72')} GB200s, and of Llama 3.1 8B on {small[0]['n_gpus']} of "
            f"AMD's {small[0]['gpu']}s (v{version(small[0])})")


#: The paper run the planner misses most, as the lesson names it.
WORST_PAPER = "Nemotron-4 15B, 2304 H100"


def paper_worst() -> str:
    return largest_miss(heldout.paper_rows(), WORST_PAPER, "Nemotron-4 15B on 2,304 H100s")


def nemotron_steps() -> str:
    """Nemotron-4 15B's two iteration times as the paper states them, and the step the
    planner predicts for each (within 1 % of each other, or the page must change)."""
    runs = [e for e in heldout.paper_entries() if str(e["name"]).startswith("Nemotron")]
    times = [e["published"]["iteration_time_s"] for e in runs]
    factors = planning.training.default_factors()
    steps = [planning.training.plan_run(planning.runs._run(e), factors=factors).step_time
             for e in runs]
    grows = runs[-1]["n_gpus"] // runs[0]["n_gpus"]
    said = (f"predicts {steps[0]:.3f} s and {steps[-1]:.3f} s" if abs(steps[-1] / steps[0] - 1)
            < 0.01 else f"predicts steps {steps[-1] / steps[0] - 1:+.0%} apart")
    return (f"its step grows from {times[0]} s to {times[-1]} s when the data-parallel size "
            f"{ {3: 'triples'}.get(grows, f'grows {grows}-fold')} at the same work per "
            f"replica, while the planner's gradient reduction moves about the same bytes per "
            f"GPU at any data-parallel size (a ring's 2(n − 1)/n of the gradients), so it "
            f"{said}")


#: The GPT-OSS plan whose band the held-out box names: the GPUs of NVIDIA's GPT-OSS runs.
GPT_OSS_FP8_GPUS = 64


def gpt_oss_fp8_band() -> str:
    """The runs the band of GPT-OSS 120B in FP8 on 64 B200s comes from
    (bands.similar_runs): its MXFP8 runs of the held-out table, whose errors the prose
    gives as a range; the set has no FP8 run of GPT-OSS."""
    plan = planning.plan_training("gpt-oss-120b", "B200", n_gpus=GPT_OSS_FP8_GPUS, tokens=1e12,
                                  global_batch_tokens=8 * 2**20, seq_len=4096,
                                  precision="fp8")
    like = bands.similar_runs(plan)
    held = {r.name for r in heldout.held_out_rows() if "GPT-OSS" in r.name and "MXFP8" in r.name}
    errors = sorted(r.error for r in like)
    in_set = [r.name for r in planning.published.PUBLISHED_RUNS
              if "GPT-OSS" in r.name and r.precision == "fp8"]
    if {r.name for r in like} != held or in_set:
        return f"GPT-OSS FP8 band from {[r.name for r in like]}; in the set {in_set}"
    return (f"is held against its {NUMBERS[len(like)]} held-out MXFP8 runs, predicted "
            f"{100 * errors[0]:.0f} to {pct(errors[-1])} high")


@functools.cache
def factors_without(name: str) -> Mapping[str, float]:
    """:func:`gpulesson.planning.published.fitted_without`, once per run for this module."""
    return planning.published.fitted_without(name)


def fixed_error(name: str) -> float:
    """The planner's MFU (factors fitted without run ``name``) over the fixed figure's, for
    the same job at the fixed recipe's batch and layout."""
    r = run(name)
    if name == QWEN3_30B_H100:
        sequences, tokens, layout = 1024, FIXED_QWEN3_30B_TOKENS, {"micro_batch": 1,
                                                                   "interleave": 12}
    elif name == QWEN3_30B_B200:
        sequences, tokens = 512, FIXED_QWEN3_30B_B200_TOKENS
        layout = {"micro_batch": FIXED_QWEN3_30B_B200_MICRO_BATCH}
    elif name == QWEN3_235B_B200:
        sequences, layout = 1024, {"interleave": 1}
        tokens = sequences * r.seq_len / (r.n_gpus * FIXED_QWEN3_235B_STEP)
    else:
        raise ValueError(f"no fixed figure of {name!r}")
    again = dataclasses.replace(r, layout=dataclasses.replace(r.layout, **layout),
                                global_batch_tokens=sequences * r.seq_len)
    planned = planning.published.plan_run(again, factors=factors_without(name))
    return planned.mfu / quoted_mfu(r, tokens) - 1


def quoted_mfu(r: planning.published.PublishedRun, tokens: float) -> float:
    """``tokens`` per second per GPU of run ``r``'s job in the table's MFU convention, as
    the run data turn a published figure."""
    return planning.runs._published_mfu(
        {"published": {"kind": "tokens_per_second_per_gpu", "value": tokens},
         "seq_len": r.seq_len}, r.model(), r.gpu)


def token_drop_errors() -> list[float]:
    """The planner's MFU over each :data:`TOKEN_DROP` figure's: the run's layout planned with
    that figure's FP8 recipe and the factors fitted without the run's own dropless figure."""
    errors = []
    for name, (tokens, recipe) in TOKEN_DROP.items():
        r = run(name)
        planned = planning.published.plan_run(r, factors=factors_without(name),
                                              fp8_recipe=recipe)
        errors.append(planned.mfu / quoted_mfu(r, tokens) - 1)
    return errors


def token_drop_words() -> str:
    """The lesson's sentence on :func:`token_drop_errors`: the figures and how far off."""
    errors = token_drop_errors()
    figures = ", ".join(f"{tokens:,}" for tokens, _ in TOKEN_DROP.values())
    each = ", ".join(off(e) for e in errors)
    return (f"({figures} tokens/s per GPU), each planned with the factors fitted without its "
            "own dropless run, the planner predicts within "
            f"{pct(max(abs(e) for e in errors))} ({each})")


def fixed_miss(name: str) -> str:
    """"x % high" or "x % low": the planner against run ``name``'s fixed figure."""
    return off(fixed_error(name))


def _gap(kept: float, least: float) -> str:
    """Points between two medians as the page prints them (two decimals each)."""
    return f"{round(100 * kept, 2) - round(100 * least, 2):.2f}"


def chosen_settings() -> str:
    """How lesson 10 words the two settings chosen on the published runs
    (``TILE_OVERHEAD_K`` and the calibration's prior weight), from the report's figures:
    where the least median error is on the table, and, if the planner's values are not
    there, that they were on the table before the report's ``ADDED_SINCE_CHOSEN`` joined
    it (or a text that fails the claim, naming the values)."""
    report = benchmark_module("bench_chosen_settings")
    tile, weight = planning.perf_model.TILE_OVERHEAD_K, planning.calibration.PRIOR_WEIGHT
    with report.without(report.ADDED_SINCE_CHOSEN):
        before = len(planning.published.PUBLISHED_RUNS)
        then = report.select().chosen, report.best_weight(report.weight_sweep())
    found, weights = report.select(), report.weight_sweep()
    best = report.best_weight(weights)
    runs = len(planning.published.PUBLISHED_RUNS)
    # where the least median is now, for each setting no longer at it, and by how much
    tiles = {k: report.median(rows) for k, rows in found.by_value.items()}
    medians = {w: report.median(rows) for w, rows in weights.items()}
    moved, gaps = [], []
    if found.chosen != tile:
        moved.append(f"at {found.chosen} steps ({pct(tiles[found.chosen], 2)} against "
                     f"{pct(tiles[tile], 2)} at {tile})")
        gaps.append(_gap(tiles[tile], tiles[found.chosen]))
    if best != weight:
        moved.append(f"at a weight of {best:g} ({pct(medians[best], 2)} against "
                     f"{pct(medians[weight], 2)})")
        gaps.append(_gap(medians[weight], medians[best]))
    if not moved:
        where = ("Each sits where the median error of this table is smallest, so each saw "
                 "every run: tried")
    elif then == (tile, weight):
        where = ("Each was chosen where the median error of this table was smallest when it "
                 f"held {before} runs, so each saw those. On all {runs}, the least median is "
                 + " and ".join(moved) + "; the two stay as chosen rather than move every "
                 f"plan for {' and '.join(gaps)} points of median error. Tried")
    else:
        where = f"Chosen on neither table: on {before} runs the least median is at {then}"

    def span(rows: dict) -> str:
        medians = [report.median(r) for r in rows.values()]
        return f"{100 * min(medians):.1f} to {pct(max(medians), 1)}"

    nested = found.nested
    return (f"output tile, {tile} steps of its K loop, which no published measurement gives, "
            f"and the weight that holds each factor to its sourced value, {weight}. {where} "
            f"every {report.GRID[1] - report.GRID[0]} steps from {report.GRID[0]} to "
            f"{report.GRID[-1]:,}, the median is {span(found.by_value)}, and with weights "
            f"tried from {min(weights):g} to {max(weights):g}, {span(weights)}. "
            "Chosen again without each run, from the other runs' errors alone, the tile's "
            f"cost leaves a median of {pct(report.median(nested), 1)} instead of the "
            f"{pct(report.median(planning.published.leave_one_out()), 1)} of the table below, "
            f"and {report.within_25(nested)} of the {len(nested)} runs still within 25 %")
