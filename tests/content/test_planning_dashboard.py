"""Lesson 10, *Plan It: the GPU Planning Dashboard*: every figure its prose states, as a
claim rebuilt from the calculators (the seed dashboard's figures as the lesson recomputes
them, the frontier layout, the shop's decisions), with the constants and helpers they
need; the figures about the runs the planner is checked against (the leave-one-out table,
the held-out splits) come from ``planning_runs.py``. The lesson's other checks are in
``test_planning_dashboard_planner.py``: the planner's answers to its questions, the
published figures behind its worked examples, learner-style answers to its code exercise
and the wiring of its two notebooks.

The notebooks run under nbval; the calculators it adds are tested with their modules, in
``tests/unit/test_flops.py``, ``test_cost.py``, ``test_distributed.py`` and
``test_memory.py``.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from gpulesson import (
    calculators,
    cost,
    distributed,
    flops,
    hardware,
    inference,
    memory,
    network,
    planning,
    prices,
    transformer,
    units,
)
from gpulesson.planning import bands, heldout, log_checks
from gpulesson.planning import logs as vllm_logs

from . import nbtools as nb
from .claims import claim_tests, claims, page
from .planning_runs import (
    FIXED_QWEN3_30B_B200_MICRO_BATCH,
    FIXED_QWEN3_30B_B200_TOKENS,
    FIXED_QWEN3_30B_TOKENS,
    GPT_OSS_FP8_GPUS,
    GPT_OSS_GB200,
    NUMBERS,
    QWEN3_30B_B200,
    QWEN3_30B_H100,
    QWEN3_235B_B200,
    STILL_SLOW_QWEN3_30B_B200_TOKENS,
    chosen_settings,
    fixed_miss,
    foundry_by_length,
    foundry_month,
    foundry_span,
    gpt_oss_fp8_band,
    gpt_oss_high_on_blackwell,
    held_out_errors,
    loo_error,
    misses,
    mlperf_span,
    nemotron_steps,
    outside_band,
    paper_count,
    paper_span,
    paper_worst,
    pct,
    run,
    token_drop_words,
    triton_speed_ups,
    worst_held_out,
)

SLUG = "planning_dashboard"
LESSON_NB = nb.notebook(SLUG)
EXERCISE_NB = nb.exercise_notebook(SLUG)
PAGE = page(LESSON_NB)
H100 = hardware.gpu("H100 SXM")
A100 = hardware.gpu("A100 80GB")
L4 = hardware.gpu("L4")
LLAMA2_7B = transformer.preset("llama-2-7b")
N_7B = transformer.param_count(LLAMA2_7B)
LLAMA3_405B = transformer.preset("llama-3.1-405b")
N_405B = transformer.param_count(LLAMA3_405B)
PEAK = H100.dense("bf16")
DAY = flops.SECONDS_PER_DAY
PRICE = prices.default_price("H100 SXM").usd_per_gpu_hour  # AWS p5, 2026-09-19
#: What an H100 reports, and what a plan may hold: the course's one usable figure.
REPORTED = H100.memory_total
USABLE = H100.usable_memory()
PLAN = calculators.si_inputs("planning")    # the dashboard's starting point
MFU = 0.40                                  # section 1's assumed MFU (a pilot's figure)
TOTAL_7B = flops.training_flops(N_7B, PLAN["tokens"])
# Section 3: Llama 3.1 405B as Dubey et al. 2024 (Table 4) trained it
RUN_405B = {"n_params": N_405B, "n_gpus": 16_384, "cfg": LLAMA3_405B, "seq_len": 8192}
# Section 7: the shop's chatbot
CONTEXT, OVERHEAD = 4096, 2e9      # tokens per conversation, bytes kept free
TRAFFIC = 2000 * 500 / DAY         # tokens/s: 2,000 conversations a day of 500 tokens
TICKETS = 20e6                     # tokens of support tickets, one pass
FINE_TUNE = {"batch": 1, "seq_len": 2048}
WORDS = {1: "one", 3: "three", 5: "five", 6: "six", 7: "seven", 2: "twice", 0.5: "half"}
SEVEN = {5: "five", 6: "six", 7: "seven", 8: "eight"}


def plan(**inputs) -> dict:
    """The dashboard's outputs (SI units), inputs in its shown units."""
    return calculators.compute("planning", **inputs)


DEFAULT = plan()


def gb(n_bytes: float, digits: int = 1) -> str:
    return units.format_bytes(n_bytes, digits=digits)


def dollars(amount: float) -> str:
    return units.format_usd(amount, cents=False)


def harder_log() -> tuple[float, float]:
    """(the log's KV-cache pool, the planner's) in bytes for vLLM issue #21348's start-up
    log (Qwen3-235B-A22B FP8 on 4 H100s), as planning.log_checks reconciles it."""
    logs = LOGS / "vllm-logs.json"
    runs = json.loads(logs.read_text(encoding="utf-8"))["runs"]
    run = next(r for r in runs if r["id"] == "21348-4xh100-qwen3-235b-fp8")
    check = log_checks.check_vllm_run(run, (LOGS / run["file"]).read_text(
        encoding="utf-8"))
    row = check.row("KV cache pool")
    return row.measured, row.predicted


def nccl_log() -> tuple[float, float, float]:
    """(the non-torch memory vLLM PR #21429's log prints for each of four H200s, the
    planner's default for a four-GPU H200 replica, the part of it that is the group's NCCL
    and all-reduce buffers) in bytes."""
    text = (LOGS / "vllm-21429-4xh200-qwen3-235b-fp8.log").read_text(encoding="utf-8")
    planner = planning.non_torch.vllm_non_torch_bytes("H200", 4)
    buffers = planner - planning.non_torch.vllm_non_torch_bytes("H200", 1)
    return vllm_logs.parse_vllm_log(text)["non_torch"], planner, buffers


def one_gpu_non_torch() -> float:
    """The planner's non-torch memory of one H100 (no NCCL buffers)."""
    return planning.non_torch.vllm_non_torch_bytes("H100 SXM", 1)


#: torchao's published FP8 pre-training gains (pytorch2026torchaotraining, 2026-03-25):
#: up to 1.25x at 8 GPUs and 8B parameters, up to 1.5x at 512 GPUs and 405B.
TORCHAO_8B, TORCHAO_405B = 1.25, 1.5


def fp8_speedup(recipe: str = "current") -> float:
    """The dashboard's starting plan in BF16 over the same layout in FP8 with ``recipe``
    (the planner's default, TransformerEngine's per-tensor current scaling, or torchao's
    per-tensor "tensorwise"). torchao measures its gains in torchtitan, whose attention
    runs FlashAttention-2 on Hopper GPUs: its recipe is planned with that kernel."""
    kernel = "flash-attention-2" if recipe == "tensorwise" else "fused"
    same = dict(n_gpus=PLAN["n_gpus"], tokens=PLAN["tokens"], global_batch_tokens=4 * 2**20,
                seq_len=4096, attention_kernel=kernel)
    base = planning.plan_training("llama-2-7b", "H100 SXM", precision="bf16", **same)
    fp8 = planning.plan_training("llama-2-7b", "H100 SXM", precision="fp8",
                                 fp8_recipe=recipe, layout=base.layout, **same)
    if recipe == "current":  # the dashboard's own FP8 plan is this one
        assert plan(dtype="fp8")["step_time"] == pytest.approx(fp8.step_time)
    return base.step_time / fp8.step_time


def torchao_float8_gain() -> float:
    """torchao's Float8Linear over bfloat16, as the planner's product rates hold it."""
    eff = planning.perf_model.GEMM_EFFICIENCY
    return (eff[("Hopper", "fp8-tensorwise")][0] * H100.dense("fp8")
            / (eff[("Hopper", "bf16")][0] * H100.dense("bf16")))


def days_7b(mfu: float, gpus: int = PLAN["n_gpus"]) -> float:
    return flops.training_days(TOTAL_7B, gpus, PEAK, mfu)


def attention_share() -> float:
    """What attention adds to 6N per token of the dashboard's starting plan: its model FLOPs
    (what its MFU counts) over its 6·N·D."""
    return DEFAULT["model_flops"] / DEFAULT["total_flops"] - 1


def layout(tp: int, pp: int, zero_stage: int, recompute: str = "selective"):
    return distributed.layout_memory(**RUN_405B, recompute=recompute, tp=tp, pp=pp,
                                     zero_stage=zero_stage)


FRONTIER = {"model": "llama-3.1-405b", "n_gpus": 16_384, "seq_len": 8192, "tokens": 15_600,
            "step_tokens": 16 * 2**20 / 1e6}  # billions of tokens, millions per step
CLUSTER = [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16_384]


def sweep() -> dict[int, dict]:
    return dict(zip(CLUSTER, calculators.sweep("planning", "n_gpus", CLUSTER), strict=True))


def most_conversations(gpu: str, precision: str, kv_dtype: str = "bf16") -> int:
    return inference.max_concurrent_sequences(
        LLAMA2_7B, context=CONTEXT, gpu_memory=hardware.gpu(gpu).memory_bytes,
        precision=precision, kv_dtype=kv_dtype, overhead=OVERHEAD)


def served(gpu: str, precision: str, kv_dtype: str = "bf16") -> float:
    """Decode ceiling of all conversations that fit, tokens/s."""
    kv = inference.kv_cache_bytes(LLAMA2_7B, seq_len=CONTEXT,
                                  bytes_per_element=memory.precision_bytes(kv_dtype))
    return inference.decode_ceiling_tokens_per_second(
        weight_bytes=memory.weight_bytes(N_7B, precision=precision),
        bandwidth=hardware.gpu(gpu).bandwidth, batch=most_conversations(gpu, precision, kv_dtype),
        kv_bytes_per_sequence=kv)


def each(gpu: str, precision: str, kv_dtype: str = "bf16") -> float:
    return served(gpu, precision, kv_dtype) / most_conversations(gpu, precision, kv_dtype)


L4_OPTIONS = (("bf16", "bf16"), ("int8", "bf16"), ("int4", "bf16"), ("int8", "fp8"))


def per_1k(usd_per_gpu_hour: float, tokens_per_second: float) -> float:
    return cost.cost_per_1k_tokens(usd_per_gpu_hour=usd_per_gpu_hour, gpus=1,
                                   tokens_per_second=tokens_per_second)


def l4_power_hour() -> float:
    """The shop's L4 at its 72 W for an hour, PUE 1, at the tco calculator's tariff."""
    return cost.power_cost(power_watts=L4.tdp_watts,
                           usd_per_kwh=calculators.si_inputs("tco")["usd_per_kwh"], hours=1,
                           pue=1.0)


def cents_words(usd: float) -> str:
    """A price per 1,000 tokens of a fraction of a cent, as the prose words it."""
    return {0.25: "a quarter of a cent", 0.01: "a hundredth of a cent"}[
        round(100 * usd, 2) if usd < 0.001 else round(400 * usd) / 4]


def fine_tune(recompute: str) -> float:
    return memory.training_memory(LLAMA2_7B, recompute=recompute, **FINE_TUNE).total


def lora(recompute: str, base: str = "bf16") -> memory.LoraMemory:
    return memory.lora_training_memory(LLAMA2_7B, rank=16, targets=("q", "v"),
                                       base_precision=base, recompute=recompute, **FINE_TUNE)


def l4_mfu() -> float:
    """The MFU the planner predicts for Llama 2 7B on one L4 (one 2,048-token sequence a
    step): the same convention as the rented H100s' plans (review P-j)."""
    return plan(model="llama-2-7b", gpu="L4", n_gpus=1, seq_len=2048, tokens=TICKETS / 1e9,
                step_tokens=0.002048)["mfu"]


def lora_hours() -> float:
    """The LoRA fine-tune on the L4: 6N per token at the planner's MFU for the L4."""
    return flops.training_time(flops.training_flops(N_7B, TICKETS), 1, L4.dense("bf16"),
                               l4_mfu()) / 3600


def rented(n_gpus: int) -> dict:
    """A full fine-tune on rented H100s, as the dashboard plans it."""
    return plan(model="llama-2-7b", n_gpus=n_gpus, seq_len=2048, tokens=TICKETS / 1e9,
                step_tokens=0.524288)


def frontier(**change) -> dict:
    return plan(**FRONTIER, **change)


def kept_layout() -> str:
    """The planner's frontier layout in the lesson's words: 'tp 8 × pp 32 with ZeRO-1 and two
    chunks per GPU'."""
    chosen = frontier()["degrees"]
    tp, pp, zero = (int(re.search(rf"{k}(\d+)", chosen)[1]) for k in ("tp ", "pp ", "ZeRO-"))
    found = re.search(r"(\d+) chunks", chosen)
    chunks = int(found[1]) if found else 1
    words = {1: "one chunk", 2: "two chunks", 4: "four chunks"}
    return f"tp {tp} × pp {pp} with ZeRO-{zero} and {words.get(chunks, chunks)} per GPU"


def launch_price() -> float:
    """AWS p5.48xlarge on demand at its launch, July 2023: $98.32 for 8 H100s."""
    [quote] = [q for q in prices.quotes("H100 SXM") if q.date.startswith("2023-07")
               and q.provider == "AWS"]
    return quote.usd_per_gpu_hour


CLAIMS = claims(
    lambda: f"{memory.bytes_per_param('mixed')} bytes per parameter",
    lambda: f"on one {L4.memory_bytes / 1e9:.0f} GB GPU",
    # Section 1: from a model to a bill
    lambda: f"The price is a dated quote, {units.format_usd(PRICE)} per H100-hour (AWS on "
     f"demand, September 2026; it was {units.format_usd(launch_price())} at launch in July "
     "2023)",
    lambda: f"About {days_7b(MFU):.0f} days, {round(chain_hours(), -3):,.0f} GPU-hours and "
     f"{dollars(round(chain_cost(), -3))} at an assumed {pct(MFU)} MFU.",
    lambda: f"at the same MFU, 1,024 GPUs would finish "
     f"{days_7b(MFU) / days_7b(MFU, 1024):.0f} times sooner for the "
     + ("same bill" if math.isclose(chain_cost(1024), chain_cost()) else "a different bill"),
    lambda: f"it predicts {pct(DEFAULT['mfu'], 1)} for "
     "this plan",
    lambda: "that MFU counts attention's FLOPs as well as $6N$, "
     f"{pct(attention_share())} more per token for this model at {PLAN['seq_len']:,} "
     f"tokens, so the plan takes {DEFAULT['time'] / DAY:.1f} days where $6N$ alone at "
     f"{pct(DEFAULT['mfu'], 1)} would say {days_7b(DEFAULT['mfu']):.1f}.",
    lambda: "a run that assumes 50 % where it will reach 30 % is off by "
     + {0.667: "two thirds"}[round(days_7b(0.30) / days_7b(0.50) - 1, 3)],
    lambda: f"half the price at 28/40 = {0.28 / 0.40:.1f} of the utilisation costs 0.5 / "
     f"{0.28 / 0.40:.1f} = {pct(slow_cost() / chain_cost())} as much, about "
     f"{dollars(round(slow_cost(), -3))} instead of {dollars(round(chain_cost(), -3))}. It "
     f"takes {pct(days_7b(0.28) / days_7b(MFU) - 1)} longer, {days_7b(0.28):.1f} days instead "
     f"of {days_7b(MFU):.1f}.",
    # Section 2: the dashboards
    lambda: "memory within "
     f"what a GPU can use ({pct(hardware.USABLE_MEMORY_FRACTION)} of what it reports)",
    lambda: f"beyond {SEQUENCES:,} GPUs tensor or pipeline parallelism must take the rest",
    # the bottleneck's answer: what makes the dashboard say communication, and what does not
    lambda: f"must take the rest: at {first_communication_bound():,} GPUs it says "
     "communication)",
    lambda: "plain data parallelism at 0.1 GB/s per GPU waits mostly for its gradient "
     "synchronisation" if slow_network_waits_for_gradients() else "does not wait",
    lambda: "Left to choose, the planner answers a slow network with pipeline stages and "
     "stays compute-bound" if slow_network_searched() else "does not",
    lambda: "removing the overlap alone leaves this plan computing "
     f"{pct(plan(overlap=0)['efficiency'], 1)} of each step"
     if plan(overlap=0)["bottleneck"].startswith("compute") else "no overlap is enough",
    lambda: "the planner splits the sequence (context parallelism) and still fits "
     f"{LONG_SEQUENCE:,} tokens" if long_sequence_fits() else "does not fit",
    lambda: f"Llama 3 70B serving {SERVE['qps']:.0f} requests per second of "
     f"{SERVE['prompt_tokens']:,} tokens in and {SERVE['output_tokens']} out, within "
     f"{SERVE['ttft_slo'] * 1e3:.0f} ms to the first token and {SERVE['tpot_slo'] * 1e3:.0f} ms "
     "per output token",
    lambda: "What remains becomes blocks of "
     f"{planning.serving.BLOCK_SIZE} tokens",
    lambda: "the activated half and three hidden-width tensors for "
     f"{LOG_20K.budget.activation_peak / LOG_PER_TOKEN:,.0f} tokens "
     f"({LOG_PER_TOKEN / 1024:.0f} KiB per token), and the KV cache is what is left, "
     f"{LOG_20K.budget.kv_bytes_per_token / 1024:.0f} KiB per token",
    lambda: "and "
     f"{int(LOG_29K.measured['max_model_len']):,} tokens "
     + ("no longer fit" if LOG_29K.budget.kv_cache_tokens < LOG_29K.measured["max_model_len"]
       else "fit") + " in it",
    lambda: "the user's "
     f"{int(LOG_29K.measured['max_model_len']):,}-token setting "
     + ("failed" if LOG_29K.budget.kv_cache_tokens < LOG_29K.measured["max_model_len"]
       else "worked"),
    # Section 3: what one GPU holds
    lambda: f"Llama 3.1 405B trains on {RUN_405B['n_gpus']:,} H100s, on sequences of "
     f"{RUN_405B['seq_len']:,} tokens.",
    lambda: f"An H100 reports {REPORTED / 2**20:,.0f} MiB, {gb(REPORTED)} (the "
     f'"{H100.memory_bytes / 1e9:.0f} GB" of its label is {H100.memory_bytes / 1e9:.0f} GiB, '
     + ("less" if REPORTED < H100.memory_bytes / 1e9 * 2**30 else "more") + " what",
    lambda: "and a framework can use "
     f"{pct(hardware.USABLE_MEMORY_FRACTION)} of that, {gb(USABLE)}",
    lambda: f"vLLM measures {non_torch_gib(1):.2f} GiB of it on one H100 and "
     f"{non_torch_gib(2):.2f} GiB with tensor parallelism over two",
    lambda: f"Stages need not be equal: {LLAMA3_405B.layers} layers do not divide into 16, "
     "and the largest of 16 stages holds "
     f"$\\lceil {LLAMA3_405B.layers}/16\\rceil = {largest_stage()}$"
     " layers. (The Llama 3 team gave the first and last stages one layer fewer, since they "
     "also hold the embedding and the output layer {cite:p}`dubey2024llama3`: "
     f"{uneven_stages()}.)",
    lambda: "Those parameters carry "
     f"{state_parts()} = {memory.bytes_per_param('mixed')} bytes each",
    lambda: "of which ZeRO partitions {} (stage 1), {} (stage 2) or all {} (stage 3)".format(
        *zero_partitioned()),
    lambda: "Data parallelism would need "
     f"{gb(layout(1, 1, 0).total)} per GPU",
    lambda: f"one GPU stores "
     f"{layout(1, 1, 3).activations / 1e9:.0f} GB of them",
    lambda: f"which stay near {layout(8, 16, 1).activations / 1e9:.0f} GB; the state shrinks "
     f"to {gb(layout(8, 16, 1).model_state)} at 16 stages and {gb(layout(8, 32, 1).model_state)}"
     f" at 32, where the total finally {fits_word(layout(8, 32, 1).total)}: "
     f"{gb(layout(8, 32, 1).total)}. ZeRO-3 with full recomputation also "
     f"{fits_word(layout(1, 1, 3, 'full').total)}, at {gb(layout(1, 1, 3, 'full').total)}",
    lambda: f"The planner keeps {kept_layout()}, {gb(frontier()['memory_per_gpu'])} at "
     f"{pct(frontier()['mfu'], 1)} MFU",
    lambda: f"{LLAMA3_405B.kv_heads} key-value heads "
     f"instead of {LLAMA3_405B.heads}",
    # Section 4: compute, memory or communication
    lambda: "("
     f"{pct(planning.gpu_view('H100 SXM').matmul_efficiency)} on an H100, Bekman's matmul "
     "benchmark",
    lambda: f"Our count puts that layout at {gb(layout(8, 16, 2).total)}, "
     + ("within" if layout(8, 16, 2).total <= USABLE else "beyond")
     + f" the {gb(frontier()['memory_limit'])} a plan may use; with ZeRO-1 it would need "
     f"{gb(layout(8, 16, 1).total)}, {pct(layout(8, 16, 1).total / USABLE - 1, 1)} "
     + ("over." if layout(8, 16, 1).total > USABLE else "under."),
    lambda: "ZeRO-3 with full "
     f"recomputation fits in {layout(1, 1, 3, 'full').total / 1e9:.0f} GB per GPU",
    lambda: f"(about {10 * round(10 * distributed.NVLINK_EFFICIENCY)} % of the NVLink "
     f"line rate inside a server, {pct(distributed.NETWORK_EFFICIENCY)} of a 400 Gb/s NIC",
    lambda: f"16M tokens of 8,192 are {16 * 2**20 // 8192:,} sequences, and 16,384 "
     "data-parallel GPUs would each need at least one. The planner prices it anyway, each "
     f"GPU computing {MICRO_WORDS[zero3()['micro_batches']]} of a sequence: every GPU would "
     f"send {zero3_traffic()[0] / 1e12:.1f} TB of gradients and parameters per step for all "
     f"{N_405B / 1e9:.0f} billion parameters, "
     f"{zero3_traffic()[0] / zero3_traffic()[1]:.1f} s at the "
     f"{zero3_traffic()[1] / 1e9:.0f} GB/s that a ring leaving each server through its "
     f"eight NICs reaches, against {zero3()['step_compute']:.1f} s of compute; overlapped "
     f"with the forward and backward passes, {zero3()['comm_time']:.2f} s of it stays "
     "exposed (`comm_time`).",
    lambda: ("So the batch rules this layout out, not the traffic: with one sequence per GPU "
             f"({16_384 * 8192 // 2**20}M tokens a step, "
             f"{SEVEN[16_384 * 8192 // (16 * 2**20)]} times Llama 3's) the same "
             f"{zero3_traffic()[0] / zero3_traffic()[1]:.1f} s hides completely behind "
             f"{zero3_whole()['step_compute']:.0f} s of compute, and ZeRO-3 over servers of "
             "tensor parallelism is the layout the planner's own search keeps in section 3.")
     if zero3_whole()["feasible"] and zero3_whole()["comm_time"] == 0
     and "ZeRO-3" in frontier()["degrees"] and "tp 8 " in frontier()["degrees"]
     else "the planner no longer hides ZeRO-3's traffic at one sequence per GPU",
    lambda: "on four H100s (vLLM issue #21348) the planner's pool is "
     f"{harder_log()[1] / 2**30:.2f} GiB against the log's {harder_log()[0] / 2**30:.2f} GiB, "
     f"{pct(harder_log()[1] / harder_log()[0] - 1)} too many",
    lambda: "(vLLM pull request #21429) has "
     f"{nccl_log()[0] / 2**30:.2f} GiB outside PyTorch on each of four H200s, and the planner "
     f"counts {nccl_log()[1] / 2**30:.2f} GiB, {nccl_log()[2] / 2**30:.2f} GiB of them "
     f"buffers, where it counts {one_gpu_non_torch() / 2**30:.2f} GiB for a single H100",
    lambda: "On the dashboard's starting plan FP8 shortens the step "
     f"{fp8_speedup():.2f}× with TransformerEngine's per-tensor current scaling (the "
     f"planner's default) and {fp8_speedup('tensorwise'):.2f}× with torchao's per-tensor "
     "recipe and the FlashAttention-2 that torchtitan runs on Hopper GPUs.",
    lambda: "the planner's torchao figure sits "
     + ("below" if fp8_speedup("tensorwise") < TORCHAO_8B else "above")
     + " torchao's own at this size, and its TransformerEngine figure "
     + ("above" if fp8_speedup() > TORCHAO_8B else "below") + " it, at the top of what "
     "torchao reports for the largest model" if fp8_speedup() <= TORCHAO_405B + 0.005
     else "above everything torchao reports",
    lambda: "the pipeline's bubble, "
     f"{llama3()['bubble']:.1f} s of a {llama3()['step_time']:.1f} s step",
    lambda: "its 4M tokens per step, "
     f"{SEQUENCES:,} sequences",
    lambda: "Beyond "
     f"{last_plain_dp():,} GPUs data parallelism runs out of sequences",
    lambda: f"the MFU falls to {pct(sweep()[4096]['mfu'])} at 4,096 GPUs; at "
     f"{first_communication_bound():,} the GPUs wait longer than they compute",
    lambda: "the bottleneck becomes communication, mostly the bubble of its "
     f"{NUMBERS[largest_wait()[1]]} pipeline stages "
     f"({units.format_seconds(largest_wait()[0]['bubble'])} of a "
     f"{units.format_seconds(largest_wait()[0]['step_time'])} step)",
    # Predicted against published
    lambda: "Megatron-LM's "
     f"{run('Megatron-LM 1T').published.split(' ')[0]} TFLOP/s per A100",
    lambda: "trains the same 8B model at "
     f"{pct(run('torchtitan Llama 3.1 8B, 32 H200, Float8').published_mfu, 1)} MFU where "
     "Megatron-Bridge reaches "
     f"{pct(run('Megatron-Bridge Llama 3 8B, 8 H100, FP8-CS').published_mfu, 1)} on H100s",
    lambda: "without it, it is "
     f"{pct(run('Megatron-LM 1T').published_mfu, 1)} MFU",
    lambda: "counting "
     f"{pct(planning.runs.EFFECTIVE_TRAINING_TIME)} of the hours as training",
    lambda: "Meta reports more than "
     f"{pct(planning.runs.EFFECTIVE_TRAINING_TIME)} effective training time for Llama 3",
    lambda: "the planner counts "
     f"{pct(planning.runs.EFFECTIVE_TRAINING_TIME)} of the GPU-hours of Llama 2's",
    lambda: "torchao's own measurement, "
     f"{torchao_float8_gain():.2f}× BF16 on a large product",
    lambda: "GPT-OSS 120B on B200 servers spreads its experts over "
     f"{run('Megatron-Bridge GPT-OSS 120B, 64 B200, BF16').layout.ep} GPUs",
    lambda: ("All three" if outside_band() == [QWEN3_30B_H100, QWEN3_30B_B200, QWEN3_235B_B200]
             else str(outside_band())) + " runs outside ±25 % are slow releases",
    lambda: f"the\nplanner is {fixed_miss(QWEN3_30B_H100)} for "
     f"{run(QWEN3_30B_H100).n_gpus} H100s ({FIXED_QWEN3_30B_TOKENS:,} tokens/s per GPU",
    lambda: f"and {fixed_miss(QWEN3_235B_B200)} for {run(QWEN3_235B_B200).n_gpus} B200s; for "
     f"{run(QWEN3_30B_B200).n_gpus} B200s release 26.02 still published "
     f"{STILL_SLOW_QWEN3_30B_B200_TOKENS:,} tokens/s per GPU, and 26.02.01's "
     f"{FIXED_QWEN3_30B_B200_TOKENS:,} came with "
     f"{NUMBERS[FIXED_QWEN3_30B_B200_MICRO_BATCH]} sequences to a micro-batch instead of "
     f"{NUMBERS[run(QWEN3_30B_B200).layout.micro_batch]}, where the planner is "
     f"{fixed_miss(QWEN3_30B_B200)}",
    lambda: token_drop_words(),
    lambda: "clamps the two halves of its experts' gated\nactivation at "
     f"{transformer.preset('gpt-oss-120b').glu_limit}",
    lambda: f"{planning.perf_model.GLU_CLAMP_VALUES[0]} more values moved per element of an "
     f"expert's\nwidth forward, {planning.perf_model.GLU_CLAMP_VALUES[1]} backward",
    lambda: "Counted, its GB200 run is "
     f"{'within' if abs(loo_error(GPT_OSS_GB200)) <= 0.25 else 'outside'} the band",
    lambda: chosen_settings(),
    lambda: f"The {len(heldout.held_out())} newest rows of releases",
    lambda: f"with the factors fitted on the {len(planning.published.PUBLISHED_RUNS)} runs",
    lambda: f"they are predicted within {pct(held_out_errors()['median'], 1)} in the median, "
     f"and {held_out_errors()['within_25']} of the {held_out_errors()['runs']} within 25 %",
    lambda: f"with those {NUMBERS[len(heldout.SWITCHES_OFF)]} switches off, the median error "
     f"is {pct(held_out_errors(switches=False)['median'], 1)}",
    lambda: ("Every layout fits" if all(r.feasible for r in heldout.held_out_rows())
             else "some layout does not fit"),
    lambda: worst_held_out(),
    lambda: gpt_oss_high_on_blackwell(),
    lambda: f"MosaicML published {len(heldout.foundry_entries())} runs of its llm-foundry MPT",
    lambda: foundry_span(),
    lambda: f"in {foundry_month()} {{cite:p}}`mosaicml2024foundrybench`",
    lambda: misses(heldout.foundry_rows()),
    lambda: triton_speed_ups()[0],
    lambda: triton_speed_ups()[1],
    lambda: foundry_by_length()[0],
    lambda: foundry_by_length()[1],
    lambda: foundry_by_length()[2],
    lambda: f"{paper_count()} runs come from papers, READMEs and MLPerf's logs",
    lambda: paper_span(),
    lambda: mlperf_span(),
    lambda: misses(heldout.paper_rows()),
    lambda: paper_worst(),
    lambda: nemotron_steps(),
    lambda: f"A plan of GPT-OSS 120B in FP8 on {GPT_OSS_FP8_GPUS} B200s",
    lambda: gpt_oss_fp8_band(),
    lambda: "reports 180K H800 GPU-hours per trillion tokens, which that convention turns "
     f"into {pct(run('DeepSeek-V3').published_mfu, 1)}",
    # Section 5: the seed's dashboard
    lambda: f"a realistic {pct(MFU)} ({days_7b(0.752):.1f} days instead of "
     f"{days_7b(MFU):.1f} for the 7B plan)",
    lambda: f"FlashAttention-3's {pct(fa3())} of the H100's dense FP16 peak",
    lambda: "MegaScale "
     f"{pct(run('MegaScale 175B').published_mfu, 1)} on {run('MegaScale 175B').n_gpus:,} GPUs",
    lambda: f"The planner's own prediction for that plan, {pct(DEFAULT['mfu'], 1)}, is "
     "fitted",
    lambda: "The dense BF16 runs of section 4's published set report "
     f"{dense_bf16_range()[0]:.0f}–{dense_bf16_range()[1]:.0f} %",
    lambda: "Left out of the fit, the "
     f"{WORDS.get(band()[1], band()[1])} published runs nearest this one in size, dense and "
     f"in BF16 like it ({band_runs()}), were predicted within "
     f"{pct(band()[0])}, so read {pct(DEFAULT['mfu'], 1)} as {DEFAULT['mfu_range']}",
    lambda: "a plan that misses as "
     f"{BAND_NAMES[band_worst().name]}'s run did reaches {pct(DEFAULT['mfu'], 1)} ÷ "
     f"{1 + band_worst().error:.2f}, one that errs as far the other way "
     f"{pct(DEFAULT['mfu'], 1)} × {1 + band_worst().error:.2f}",
    lambda: "The largest of those errors is on "
     f"{BAND_NAMES[band_worst().name]}'s own run, which the planner predicts "
     f"{pct(abs(band_worst().error))} too {'high' if band_worst().error > 0 else 'low'}.",
    lambda: f"{len(planning.PUBLISHED_RUNS)} of them, "
     f"from {SEVEN[len({r.code_base for r in planning.PUBLISHED_RUNS})]} code bases",
    lambda: "on runs left out of the fit it errs by "
     f"{pct(planning.published.summary(planning.published.leave_one_out())['median'], 1)} "
     "in the median",
    lambda: "The dashboard's own starting plan uses "
     f"{pct(DEFAULT['memory_per_gpu'] / USABLE, 1)}; Llama 3's layout of section 4, at "
     f"ZeRO-{llama3_zero()} as Meta ran it, uses "
     f"{pct(llama3()['memory_per_gpu'] / USABLE, 1)}."
     if llama3()["fits"] else "Llama 3's layout does not fit",
    lambda: "A 7B model trains at about "
     f"{round(one_h100_tokens(), -2):,.0f} tokens/s on one H100 at {pct(MFU)} MFU; at 342 "
     "tokens/s that GPU would be at "
     f"{pct(flops.mfu(342, flops.flops_per_token(N_7B), 1, PEAK), 1)} MFU.",
    lambda: "cannot exceed "
     f"{decode_ceiling_7b():.0f} tokens/s on an H100",
    lambda: "342 tokens/s cost "
     f"${per_1k(PRICE, 342):.4f} per 1,000 tokens",
    lambda: f'"Scale factor {distributed.effective_speedup(8, 0.85):.1f}×".** Reproducible, '
     "if it means 8 GPUs at 85 % scaling efficiency",
    lambda: f"the dashboard's starting plan gives {PLAN['n_gpus']} GPUs computing "
     f"{pct(DEFAULT['efficiency'], 1)} of each step",
    lambda: f'"{A100.dense("bf16") / A100.dense("fp32"):.0f}× performance improvement"** '
     "matches the A100's dense BF16 tensor-core rate over its FP32 rate "
     f"({A100.dense('bf16') / 1e12:.0f} ÷ {A100.dense('fp32') / 1e12:.1f}), if that is the "
     f"comparison meant; on an H100 it is {PEAK / H100.dense('fp32'):.1f}×.",
    lambda: f'**"{units.format_bandwidth(H100.bandwidth)}"** is the H100 SXM\'s memory '
     "bandwidth, correct.",
    lambda: f'**"{pct(fa3())} max H100 utilization"** is FlashAttention-3\'s kernel figure',
    lambda: f"mixed precision keeps {memory.bytes_per_param('mixed')} bytes per parameter, "
     + ("like FP32 training" if memory.bytes_per_param("fp32") == memory.bytes_per_param(
        "mixed") else "unlike FP32 training"),
    lambda: "Llama 3.1 405B's training state alone needs at least "
     f"{memory.gpus_needed(N_405B * memory.bytes_per_param(), USABLE)} H100s even "
     f"with perfect sharding, and at {pct(MFU)} MFU 128 H100s would train it in about "
     f"{flops.training_days(flops.training_flops(N_405B, 15.6e12), 128, PEAK, MFU) / 365:.0f}"
     " years.",
    # Section 6: this machine
    lambda: "(the matmul efficiency is then "
     f"{calculators.get('planning').input('matmul_efficiency').max:.0f} %)",
    lambda: "more than "
     f"{100 * math.floor(N_7B * memory.bytes_per_param() / 100e9)} GB of training state",
    # Section 7: the shop
    lambda: f"on the datasheet's {L4.memory_bytes / 1e9:.0f} GB, not the planners' one "
     "usable figure (`usable_memory()`, "
     f"{gb(L4.usable_memory())} on the L4), so that the shop's numbers stay those of the first "
     f"lesson, which sized the same card this way; with {gb(L4.usable_memory())} and no "
     "allowance the L4 would hold "
     f"{NUMBERS.get(usable_conversations(), usable_conversations())} BF16 conversations "
     f"instead of {WORDS[most_conversations('L4', 'bf16')]}.",
    lambda: f"It owns one NVIDIA L4 ({L4.memory_bytes / 1e9:.0f} GB at "
     f"{units.format_bandwidth(L4.bandwidth, digits=0)}).",
    lambda: f"In BF16 the weights take {gb(memory.weight_bytes(N_7B, precision='bf16'))} of "
     f"the L4's {L4.memory_bytes / 1e9:.0f} and leave room for only "
     f"{WORDS[most_conversations('L4', 'bf16')]} full conversations. INT8 weights "
     "({term}`quantisation`) free "
     f"{gb(memory.weight_bytes(N_7B) - memory.weight_bytes(N_7B, precision='int8'))}"
     f": {WORDS[most_conversations('L4', 'int8')]} conversations, "
     f"{WORDS[round(served('L4', 'int8') / served('L4', 'bf16'))]} the throughput. INT4 adds "
     f"only {WORDS[most_conversations('L4', 'int4') - most_conversations('L4', 'int8')]} more",
    lambda: "the KV cache, "
     f"{inference.kv_cache_bytes(LLAMA2_7B, seq_len=CONTEXT) / 2**30:.0f} GiB per "
     "conversation,",
    lambda: "an FP8 KV cache "
     + {2: "doubles"}[most_conversations("L4", "int8", "fp8") // most_conversations("L4", "int8")]
     + f" the conversations to {most_conversations('L4', 'int8', 'fp8')}. Per conversation the "
     "speed barely moves, "
     f"{l4_speed_range()} tokens/s at full context",
    lambda: "a 7B model on an L4 becomes compute-bound only past a batch of about "
     f"{round(l4_compute_bound_batch(), -2):.0f}",
    lambda: f"a batch no {L4.memory_bytes / 1e9:.0f} GB "
     "card can hold",
    lambda: "**Decision: INT8 weights, BF16 KV cache, up to "
     f"{most_conversations('L4', 'int8')} conversations at once** on the shop's L4, about "
     f"{served('L4', 'int8'):.0f} tokens/s in all",
    lambda: "a million tokens a day, "
     f"{TRAFFIC:.1f} tokens/s on average",
    lambda: f"at {L4.tdp_watts:.0f} W and the US industrial average of "
     f"{100 * calculators.si_inputs('tco')['usd_per_kwh']:.2f} ¢/kWh",
    lambda: "At full capacity an H100 produces tokens for "
     f"{100 * per_1k(PRICE, served('H100 SXM', 'bf16')):.2f} ¢ per thousand. Rented around "
     "the clock for the shop's traffic it costs "
     f"{per_1k(PRICE, TRAFFIC) / per_1k(PRICE, served('H100 SXM', 'bf16')):.0f} times as much, "
     f"{100 * per_1k(PRICE, TRAFFIC):.0f} cents per thousand, because it sits idle "
     f"{pct(1 - TRAFFIC / served('H100 SXM', 'bf16'))} of the time",
    lambda: "The card the shop already owns costs "
     f"{cents_words(per_1k(l4_power_hour(), TRAFFIC))} per thousand tokens",
    lambda: f"Full fine-tuning needs {fine_tune('selective') / 1e9:.0f} GB, "
     f"{WORDS[memory.gpus_needed(fine_tune('selective'), L4.memory_bytes)]} L4s' worth. LoRA "
     f"with the base in BF16 needs {gb(lora('none').total)} "
     + ({True: "with or without selective recomputation (FlashAttention keeps no scores to "
              "drop; "}[lora("none").total == lora("selective").total])
     + f"just {'over' if not memory.fits(lora('selective').total, ROOM) else 'under'} "
     f"the {ROOM / 1e9:.0f} GB left), and {gb(lora('full').total)} with full recomputation: it "
     f"{fits_word(lora('full').total, ROOM)}. A 4-bit base, the idea behind QLoRA, "
     f"{fits_word(lora('selective', 'int4').total, ROOM)} with selective recomputation, at "
     f"{gb(lora('selective', 'int4').total)}. The adapters are "
     f"{lora('full').trainable_params / 1e6:.1f} million parameters, "
     f"{pct(lora('full').trainable_params / N_7B, 2)} of the model, and "
     f"{gb(lora('full').adapter_weights)} on disk, against "
     f"{gb(memory.weight_bytes(N_7B, precision='bf16'))} for a fully fine-tuned copy.",
    lambda: "The planner calls that layout tight, "
     f"{pct(rented(2)['memory_per_gpu'] / rented(2)['memory_limit'])} of what a GPU can use, "
     f"and names ZeRO-{roomier(2)[1]} as fast with {roomier(2)[0]} % to spare: "
     f"{roomier(2)[2]} (counting its gathers once a step",
    lambda: f"two H100s with ZeRO-{rented_zero(2)}, "
     f"{rented(2)['time'] / 60:.0f} minutes, about {dollars(rented(2)['cost'])} at the dated "
     "price" if rented(2)["fits"] and not rented(1)["fits"] else "does not fit",
    # The plan, decided
    lambda: "(compute would only bind past "
     f"~{round(l4_compute_bound_batch(), -2):.0f})",
    lambda: f"about {served('L4', 'int8'):.0f} tokens/s in all, "
     f"{each('L4', 'int8'):.0f} per conversation at full context",
    lambda: f"electricity: ${per_1k(l4_power_hour(), TRAFFIC):.5f}, plus the "
     "card's price over its life | an idle rented H100 would cost "
     f"${per_1k(PRICE, TRAFFIC):.2f}",
    lambda: f"on the L4: {gb(lora('full').total)}, about {lora_hours():.1f} h | full "
     f"fine-tuning needs {fine_tune('selective') / 1e9:.0f} GB",
    lambda: f"full fine-tune on 2 rented H100s, {rented(2)['time'] / 60:.0f} min, about "
     f"{dollars(rented(2)['cost'])}",
    lambda: f"The average, {3 * TRAFFIC:.0f} tokens/s, is still far below the L4's "
     f"{served('L4', 'int8'):.0f}",
    lambda: "an FP8 cache fits "
     f"{most_conversations('L4', 'int8', 'fp8')} on the L4",
    lambda: f"a fine-tune that needs {fine_tune('selective') / 1e9:.0f} GB into one that fits "
     f"in {L4.memory_bytes / 1e9:.0f}",
)

#: Numbers of the prose that are not results of the calculators.
NOT_FIGURES = (
    # FlashAttention-3's FP8 rate, quoted from its abstract (Shah et al. 2024)
    '"close to 1.2 PFLOPs/s" on an H100',
    # FlashAttention's tile and the head sizes it is compared at (perf_model's constants)
    "each 128 × 128 tile", "(64 against 128)",
    # the rental rate DeepSeek-V3's report assumes for its H800s (DeepSeek-AI 2024, Table 1)
    "$2 per GPU-hour in December 2024",
    # releases and published step times (Megatron-Bridge pull request #1760)
    "NVIDIA's issue 1998", "Qwen3 30B-A3B on H100s and B200s in NeMo 25.11",
    "its pull request\n1760",
    "from 20.1 s to 16.9 s", "summary of release 26.02.01",
    # the releases of the token-drop figures and of the table's dropless runs (planning_runs)
    "NeMo 25.09 had first published", "dropless runs as 25.11 first", "release 26.02 still",
    "26.02.01's",
    # the releases of the held-out table (heldout_runs.json) and of NVIDIA's GPT-OSS note
    "after\nNeMo 25.11", "releases 26.04.01\nto 26.08", "table for release 26.06.01",
    # vLLM's version that takes the CUDA graphs out of the pool (its log: "default since
    # v0.21.0"; test_vllm_sizing_names_the_cuda_graph_estimate)
    "(since 0.21) CUDA graphs",
    # units and formula constants
    "1,000 tokens", "1,000 generated tokens", "{3600\\ \\text{s/h}}", "$34\\,sbh/t$",
    "16-bit", "Llama 3.1", "Llama-3.1-405B on the same 64 GPUs",
    # inputs the lesson chooses (the plans, the shop)
    "64 H100s", "a pilot run reaches 28 % MFU instead of 40 %", "40 % MFU",
    "from 16 to 32", "20 million tokens", "r = 16", "4,096 tokens", "4,096-token",
    "2,048 tokens", "Assume the shop serves 2,000 conversations a day of 500 generated tokens",
    "with peaks of 20 customers", "need 20 KV caches",
    # published: Llama 3 (Dubey et al. 2024, Table 4 and section 3.3), PaLM (Chowdhery et
    # al. 2022), ZeRO (Rajbhandari et al. 2020, sections 3.1 and 7), LoRA (Hu et al. 2022)
    "Llama 3.1 405B on 16,384 H100s", "$p = 16$ on 16,384 GPUs",
    # lesson 9's published FP8 gains (torchao2025float8), checked against the planner below
    "1.25× for an 8B model on 8 GPUs and up to 1.5× for 405B on 512",
    "(PaLM 46.2 %, Llama 3 38–43 %,",
    "Meta used 16,384 GPUs", "Llama 3 kept 41–43 % MFU on 8,192 and 16,384 GPUs",
    "section 3.1", "25 % faster for GPT-3 175B",
    # the seed dashboard's figures, quoted to be checked
    '"GPU efficiency 75.2 %"', '"Memory utilization 68.4 %"', '"Training speed 342 tok/s"',
    '"Cost efficiency $0.045"', '"Overall score 8.4/10"', '"1.2 PFLOPS peak"',
    '"37 % mixed-precision savings"** is 1 − 10/16, from the page\'s 10 bytes per parameter',
    '"128 GPUs required"', '"optimal efficiency at 64–512 GPU clusters"',
)


SEQUENCES = 4 * 2**20 // 4096       # the 7B plan's sequences per step
SERVE = calculators.si_inputs("serving_plan")
LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"
LOG_20K = planning.reconcile_vllm_log(
    (LOGS / "vllm-10517-rtx3090-llama3.1-8b-20k.log").read_text(), "llama-3.1-8b",
    max_num_batched_tokens=20_000, max_num_seqs=256)
LOG_29K = planning.reconcile_vllm_log(
    (LOGS / "vllm-10517-rtx3090-llama3.1-8b-29k.log").read_text(), "llama-3.1-8b",
    max_num_batched_tokens=29_000, max_num_seqs=256)
LOG_PER_TOKEN = LOG_20K.budget.activation_peak / 20_000
def chain_hours(gpus: int = PLAN["n_gpus"]) -> float:
    return cost.gpu_hours(gpus=gpus, seconds=days_7b(MFU, gpus) * DAY)


def chain_cost(gpus: int = PLAN["n_gpus"]) -> float:
    return cost.run_cost(usd_per_gpu_hour=PRICE, gpus=gpus, seconds=days_7b(MFU, gpus) * DAY)


def zero3_traffic() -> tuple[float, float]:
    """(bytes each GPU sends per step, the ring's bus bandwidth) of ZeRO-3 over 16,384
    H100s: the data-parallel ring leaves each server through its eight NICs."""
    plan = planning.plan_training(
        "llama-3.1-405b", "H100 SXM", n_gpus=16_384, tokens=15e12,
        global_batch_tokens=16 * 2**20, seq_len=8192, recompute="full",
        layout=planning.Layout(tp=1, pp=1, zero_stage=3))
    view = planning.gpu_view(H100)
    ring = network.group_bus_bandwidth(stride=1, size=16_384, domain=view.domain,
                                       nvlink_line_rate=view.nvlink_bandwidth,
                                       nic_line_rate=view.scaleout_bandwidth).bus_bandwidth
    return plan.traffic["data"], ring


def non_torch_gib(tp: int) -> float:
    """vLLM's measured non-torch memory on H100s (pull request #10511's logs), GiB."""
    index = json.loads((LOGS / "vllm-logs.json").read_text(encoding="utf-8"))
    run = next(r for r in index["runs"] if r["url"].endswith("/pull/10511") and r["tp"] == tp)
    text = (LOGS / run["file"]).read_text(encoding="utf-8")
    return vllm_logs.parse_vllm_log(text)["non_torch"] / 2**30


def zero3() -> dict:
    return frontier(recompute="full", layout="manual", tp=1, pp=1, zero_stage=3)


def llama3() -> dict:
    """Llama 3 405B as Meta ran it: tp 8, pp 16, 2 chunks, FSDP without resharding (ZeRO-2)."""
    return frontier(layout="manual", tp=8, pp=16, zero_stage=llama3_zero(), interleave=2)


def llama3_zero() -> int:
    """The ZeRO stage of Llama 3's FSDP (optimizer states and gradients sharded, parameters
    not resharded between the passes: Dubey et al. 2024, section 3.3.2), as lesson 7
    counts it."""
    return 2


#: A replica's share of a sequence, as the prose words it.
MICRO_WORDS = {0.125: "an eighth", 0.25: "a quarter", 0.5: "half"}


def zero3_whole() -> dict:
    """ZeRO-3 over all 16,384 GPUs with one sequence per GPU: 128M tokens a step."""
    return plan(**{**FRONTIER, "step_tokens": 16_384 * 8192 / 1e6}, recompute="full",
                layout="manual", tp=1, pp=1, zero_stage=3)


def dense_bf16_range() -> tuple[float, float]:
    """Lowest and highest published MFU (%) of the dense BF16 runs of the validation set."""
    mfus = [100 * r.published_mfu for r in planning.PUBLISHED_RUNS
            if r.precision == "bf16" and not r.is_moe]
    return min(mfus), max(mfus)


def band() -> tuple[float, int]:
    """The dashboard's default plan's band and the number of runs it comes from."""
    return DEFAULT["mfu_band"], int(DEFAULT["band_note"].split(" of the ")[1].split()[0])


#: The published runs as section 1's prose names them.
BAND_NAMES = {"Llama 2 7B": "Llama 2 7B", "Megatron-LM 7.5B": "Megatron-LM 7.5B",
              "torchtitan Llama 3 8B, 64 A100": "torchtitan's Llama 3 8B",
              "Megatron-Core README 7.1B, 96 H100": "Megatron-Core's 7.1B of 2024"}


def band_rows() -> tuple:
    """The leave-one-out rows the default plan's band comes from (bands.similar_runs):
    the dashboard's plan is Llama 2 7B in BF16, held against the dense BF16 runs nearest in
    size, whatever their GPU."""
    rows = bands.similar_runs(planning.plan_training(
        "llama-2-7b", "H100 SXM", n_gpus=PLAN["n_gpus"], tokens=PLAN["tokens"],
        global_batch_tokens=4 * 2**20, seq_len=4096))
    assert max(abs(r.error) for r in rows) == pytest.approx(band()[0])
    return rows


def band_runs() -> str:
    names = [BAND_NAMES[r.name] for r in band_rows()]
    return ", ".join(names[:-1]) + " and " + names[-1]


def band_worst():
    return max(band_rows(), key=lambda r: abs(r.error))


def last_plain_dp() -> int:
    """The largest cluster the planner still runs as plain data parallelism."""
    return max(g for g, r in sweep().items() if r["degrees"].startswith("tp 1 ") and
               " pp 1," in r["degrees"])


def rented_zero(n: int) -> int:
    return int(rented(n)["degrees"].split("ZeRO-")[1][0])


def slow_cost() -> float:
    """The cheaper provider: half the price, 28 % MFU."""
    return cost.run_cost(usd_per_gpu_hour=PRICE / 2, gpus=PLAN["n_gpus"],
                         seconds=days_7b(0.28) * DAY)


def largest_stage() -> int:
    """Layers of the largest of Llama 3's 16 pipeline stages."""
    return distributed.stage_layers(LLAMA3_405B.layers, 16)


def uneven_stages() -> str:
    """Llama 3's pipeline: the first and last of 16 stages one layer short of the largest."""
    largest = largest_stage()
    return (f"{largest - 1} + 14 × {largest} + {largest - 1} = "
            f"{2 * (largest - 1) + 14 * largest}")


def state_parts() -> str:
    s = memory.model_state_bytes("mixed")
    return f"{s.weights} + {s.gradients} + {s.optimizer}"


def zero_partitioned() -> tuple[int, int, int]:
    """Bytes per parameter that ZeRO stages 1, 2 and 3 partition over the replicas."""
    s = memory.model_state_bytes("mixed")
    return s.optimizer, s.optimizer + s.gradients, s.optimizer + s.gradients + s.weights


def fits_word(total: float, room: float = USABLE) -> str:
    return "fits" if memory.fits(total, room) else "does not fit"


ROOM = L4.memory_bytes - OVERHEAD   # the L4 with the serving allowance kept free


def first_communication_bound() -> int:
    return next(g for g, r in sweep().items() if r["bottleneck"].startswith("communication"))


def largest_wait() -> tuple[dict, int]:
    """The first communication-bound plan of the sweep, and its pipeline stages; it fails
    unless the bubble is the largest wait and more than half of all the waiting."""
    r = sweep()[first_communication_bound()]
    waits = ("tensor_comm", "context_comm", "pipeline_comm", "expert_comm", "comm_time")
    assert all(r["bubble"] > r[w] for w in waits), r
    assert r["bubble"] > (r["step_time"] - r["step_compute"]) / 2, r
    assert "most of the wait is the pipeline bubble" in r["bottleneck"], r["bottleneck"]
    return r, int(r["degrees"].split("pp ")[1].split(",")[0])


#: The slow network of section 2's answer: 0.1 GB/s per GPU (a 1 Gb/s port, less).
SLOW = 0.1


def slow_network_waits_for_gradients() -> bool:
    """Plain data parallelism set by hand on the slow network: communication-bound, and
    the dashboard names the gradient synchronisation as the largest wait."""
    r = plan(scaleout=SLOW, layout="manual", tp=1, pp=1, zero_stage=1)
    return (r["bottleneck"].startswith("communication")
            and "most of the wait is the gradient synchronisation" in r["bottleneck"])


def slow_network_searched() -> bool:
    """The planner's own search on the slow network: pipeline stages, compute-bound."""
    r = plan(scaleout=SLOW)
    return " pp 1," not in r["degrees"] and r["bottleneck"].startswith("compute")


LONG_SEQUENCE = 131_072


def long_sequence_fits() -> bool:
    """The starting plan at 131,072 tokens without recomputation: the search splits the
    sequence over GPUs and fits."""
    r = plan(seq_len=LONG_SEQUENCE, recompute="none")
    return r["fits"] and " cp 1 " not in r["degrees"]


def roomier(n_gpus: int) -> tuple[str, int, str]:
    """(spare %, ZeRO stage, memory) of the layout the planner names beside a tight one,
    read from its reason; it fails unless that layout takes no longer (to 0.05 %)."""
    reason = rented(n_gpus)["reason"]
    m = re.search(r"fastest layout with (\d+)% to spare, .*?ZeRO-(\d), .*?needs ([\d.]+ GB) "
                  r"and takes ([\d.]+)% longer", reason)
    assert m and "tight" in reason, reason
    assert float(m.group(4)) < 0.05, reason
    return m.group(1), int(m.group(2)), m.group(3)


def fa3() -> float:
    """FlashAttention-3's 740 TFLOP/s (Shah et al. 2024) of the H100's dense FP16 peak."""
    return flops.utilization(740e12, H100.dense("fp16"))


def one_h100_tokens() -> float:
    return flops.tokens_per_second(n_devices=1, peak_flops=PEAK, mfu=MFU,
                                   flops_per_token=flops.flops_per_token(N_7B))


def decode_ceiling_7b() -> float:
    return inference.decode_ceiling_tokens_per_second(
        weight_bytes=memory.weight_bytes(N_7B, precision="bf16"), bandwidth=H100.bandwidth)


def usable_conversations() -> int:
    """BF16 conversations of 4,096 tokens on the L4 within usable_memory(), no allowance."""
    return inference.max_concurrent_sequences(LLAMA2_7B, context=CONTEXT,
                                              gpu_memory=L4.usable_memory(), overhead=0)


def l4_speed_range() -> str:
    """Tokens/s of each conversation on the L4, over its four options."""
    speeds = sorted({round(each("L4", w, kv)) for w, kv in L4_OPTIONS})
    return f"{speeds[0]}–{speeds[-1]}"


def l4_compute_bound_batch() -> float:
    return inference.decode_compute_bound_batch(peak_flops=L4.dense("bf16"),
                                                bandwidth=L4.bandwidth, bytes_per_param=2)


# ---------------------------------------------------------------------------------------
# The page: every figure a claim


(test_claim, test_every_figure_is_claimed,
 test_every_listed_non_figure_is_on_the_page) = claim_tests(__name__, LESSON_NB)
