"""Pipeline schedules: the bubble of each, and a simulator that draws them.

The classic bubble (Huang et al. 2019, GPipe; Narayanan et al. 2021, section 2.2)
---------------------------------------------------------------------------------
With ``p`` stages and ``m`` micro-batches, GPipe and 1F1B schedules idle for
``(p-1)/m`` of the ideal time; the interleaved schedule with ``v`` model chunks per
device divides that by ``v``: ``(p-1)/(v*m)`` (:func:`pipeline_bubble_fraction`).

Splitting the backward pass (Qi et al. 2023, *Zero Bubble Pipeline Parallelism*)
---------------------------------------------------------------------------------
A layer's backward pass is two products: the gradient of its input, which the previous
stage is waiting for, and the gradient of its weights, which nobody waits for until the
optimizer step. Qi et al. call them ``B`` and ``W`` (times ``T_B``, ``T_W``; forward
``T_F``). Running ``W`` later fills the idle slots at the end of the step. Their ZB-H1
schedule keeps 1F1B's peak memory (``p`` micro-batches in flight) and cuts the bubble from
1F1B's ``(p-1)(T_F + T_B + T_W)`` to ``(p-1)(T_F + T_B - T_W)``: a third of it when the
three passes take the same time. :func:`pipeline_schedule` builds it
(``schedule="zb-h1"``): stage ``s`` holds back ``s`` weight-gradient passes, so every stage
keeps at most ``p`` micro-batches' activations, and does them after its last input-gradient
pass. The simulated makespan equals the closed form when ``m >= p`` and ``T_W`` is at most
``T_F`` and ``T_B``.

Trading memory for the rest of the bubble (Qi et al., sections 2.2, 4 and 6)
----------------------------------------------------------------------------
ZB-H2 lets the first stage start ``2p - 1`` micro-batches before its first backward
pass, so no stage waits for one: the bubble becomes ``(p-1)(T_F + T_B - 2T_W)``, zero for
equal passes, for ``2p - 1`` micro-batches' activations instead of ``p`` (their Table 2).
ZB-V cuts the model into ``2p`` chunks laid down the devices and back up, so a
micro-batch's forward and backward passes both start and end on the first device: zero
bubble for equal passes with 1F1B's ``p`` micro-batches' activations (``2p`` chunks of
half a stage), for twice the point-to-point traffic. Both drop the synchronisation
before the optimizer step (section 4): stages start the next step one after another,
and the step lasts as long as the longest stage's own span (:func:`pipeline_stage_span`),
not the makespan. :func:`pipeline_schedule` builds both (``"zb-h2"``, ``"zb-v"``) in the
order they take when every pass lasts one unit, from ``m >= 2p - 1`` micro-batches;
:func:`pipeline_peak_activations` gives each schedule's peak memory,
:func:`pipeline_stage_activations` reads it off a simulated schedule.

One convention for the bubble of every schedule (DeepSeek-AI 2024, Table 2)
----------------------------------------------------------------------------
DeepSeek-V3's report writes ``F`` for a forward chunk, ``B`` for a *full* backward chunk
(input and weight gradients), ``W`` for the weight-gradient part alone and ``F&B`` for a
forward and a backward chunk run overlapped, and gives the bubbles

==========  ===============================  ===========
1F1B        ``(PP - 1)(F + B)``
ZB1P        ``(PP - 1)(F + B - 2W)``          Qi et al.'s ZB-H1, with ``B = T_B + T_W``
DualPipe    ``(PP/2 - 1)(F&B + B - 3W)``      two copies of the parameters
==========  ===============================  ===========

:func:`pipeline_bubble_time` gives these; with unit ``F`` and ``W`` and ``B = 2``
(``F&B = F + B`` when nothing overlaps) they are ``3(PP-1)``, ``PP-1`` and ``PP-2``.
In the same convention ZB-H2's bubble is ``(PP - 1)(F + B - 3W)`` and ZB-V's zero.
The ideal time of ``m`` micro-batches on one device is ``m(F + B)`` in all three: every
micro-batch crosses every device once, in DualPipe through one of its two stages.

Taught in: ``notebooks/distributed_math.ipynb``. :mod:`gpulesson.distributed` re-exports
every name here. Standard library only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpulesson import _validate as v

__all__ = [
    "BUBBLE_SCHEDULES",
    "MAX_PIPELINE_SLOTS",
    "PIPELINE_SCHEDULES",
    "PipelineSlot",
    "dualpipe_bubble_fraction",
    "pipeline_bubble_fraction",
    "pipeline_bubble_time",
    "pipeline_makespan",
    "pipeline_peak_activations",
    "pipeline_schedule",
    "pipeline_stage_activations",
    "pipeline_stage_span",
]

#: The schedules :func:`pipeline_schedule` simulates.
PIPELINE_SCHEDULES = ("gpipe", "1f1b", "interleaved", "zb-h1", "zb-h2", "zb-v")
#: The schedules whose bubble :func:`pipeline_bubble_time` and peak activation memory
#: :func:`pipeline_peak_activations` give: DeepSeek-V3's Table 2 (1F1B, ZB1P = ZB-H1,
#: DualPipe), then Qi et al.'s ZB-H2 and ZB-V.
BUBBLE_SCHEDULES = ("1f1b", "zb-h1", "dualpipe", "zb-h2", "zb-v")
#: The simulated schedules that split the backward pass into input- and weight-gradient
#: passes (the others run the whole backward pass at once).
_SPLIT = ("zb-h1", "zb-h2", "zb-v")
#: The most passes :func:`pipeline_schedule` simulates (2·p·m·v; 3·p·m for ZB-H1 and
#: ZB-H2, 6·p·m for ZB-V): 10^5
#: slots take about a second; beyond, the bubble formula (:func:`pipeline_bubble_fraction`)
#: answers instead.
MAX_PIPELINE_SLOTS = 100_000


def pipeline_bubble_fraction(stages: int, microbatches: int, interleave: int = 1) -> float:
    """Pipeline bubble as a fraction of the ideal time: ``(p - 1) / (v * m)``.

    Narayanan et al. 2021, section 2.2.1 (GPipe/1F1B, ``v = 1``) and 2.2.2 (interleaved).
    As a fraction of the *total* time it is ``(p-1) / (v*m + p - 1)``.
    """
    p = v.positive_int("stages", stages)
    m = v.positive_int("microbatches", microbatches)
    k = v.positive_int("interleave", interleave)
    return (p - 1) / (k * m)


def _passes(forward_time: float, backward_time: float, weight_time: float,
            overlapped_time: float | None) -> tuple[float, float, float, float]:
    f = v.positive_number("forward_time", forward_time)
    b = v.positive_number("backward_time", backward_time)
    w = v.positive_number("weight_time", weight_time)
    if w >= b:
        raise ValueError(f"weight_time must be less than backward_time ({b:g}, the whole "
                         f"backward pass it is part of), got {w:g}")
    fb = f + b if overlapped_time is None else v.positive_number("overlapped_time",
                                                                 overlapped_time)
    if fb > f + b:
        raise ValueError(f"overlapped_time must be at most forward_time + backward_time "
                         f"({f + b:g}: overlapping never adds work), got {fb:g}")
    return f, b, w, fb


def pipeline_bubble_time(schedule: str, stages: int, *, forward_time: float = 1.0,
                         backward_time: float = 2.0, weight_time: float = 1.0,
                         overlapped_time: float | None = None) -> float:
    """Idle time of one device per step, in the units of the pass times (Table 2 of
    DeepSeek-AI 2024, *DeepSeek-V3 Technical Report*, section 3.2.2; Table 2 and
    section 6 of Qi et al. 2023, *Zero Bubble Pipeline Parallelism*).

    ``"1f1b"``: ``(PP-1)(F+B)``; ``"zb-h1"`` (Table 2's ZB1P): ``(PP-1)(F+B-2W)``, which
    the simulated schedule (:func:`pipeline_schedule`) reaches exactly when ``W`` is at
    most ``F`` and at most ``B - W`` (a longer weight pass leaves gaps the formula does not
    count, so it is refused); ``"dualpipe"``: ``(PP/2-1)(F&B+B-3W)``, ``PP`` even.

    ``"zb-h2"``: ``(PP-1)(F+B-3W)``, Qi et al.'s ``(p-1)(T_F+T_B-2T_W)`` with their
    ``T_B = B - W``, under the same condition on ``W`` as ZB-H1 (the simulated schedule
    reaches it from ``m = 2p - 1`` micro-batches): zero when the three passes take the
    same time. ``"zb-v"``: zero, published only for ``T_F = T_B = T_W``
    (``F = W``, ``B = 2W``); any other split is refused, since Qi et al. search the order
    again for other times (:func:`pipeline_schedule` times their equal-time order with
    any split). Both count the idle time inside each device's own busy span: they drop
    the synchronisation before the optimizer step (Qi et al., section 4), so stages
    start the next step one after another and the step lasts as long as the longest
    span (:func:`pipeline_stage_span`).

    Parameters
    ----------
    schedule : str
        One of :data:`BUBBLE_SCHEDULES`.
    stages : int
        Pipeline ranks ``PP``.
    forward_time, backward_time, weight_time : float
        ``F``, the *full* backward ``B`` (input and weight gradients) and its
        weight-gradient part ``W`` (``W < B``). The defaults, 1, 2 and 1, are the split
        Qi et al. assume, ``T_F = T_B = T_W``.
    overlapped_time : float, optional
        ``F&B``, a forward and a backward chunk run overlapped; ``F + B`` (nothing
        hidden) when left out, and never more.
    """
    kind = v.choice("schedule", schedule, BUBBLE_SCHEDULES)
    p = v.positive_int("stages", stages)
    f, b, w, fb = _passes(forward_time, backward_time, weight_time, overlapped_time)
    if kind == "1f1b":
        return (p - 1) * (f + b)
    if kind in ("zb-h1", "zb-h2"):
        if w > f or w > b - w:
            raise ValueError(
                f"weight_time must be at most forward_time ({f:g}) and the input-gradient "
                f"part of the backward pass (backward_time - weight_time = {b - w:g}) for "
                f"{kind.upper()}'s closed form, got {w:g}; pipeline_schedule(..., "
                f"schedule={kind!r}) simulates any split")
        # ZB-H1 fills W passes into the tail; ZB-H2 also into the wait for the first B
        return (p - 1) * (f + b - (2 if kind == "zb-h1" else 3) * w)
    if kind == "zb-v":
        if not (math.isclose(f, w, rel_tol=1e-9) and math.isclose(b, 2 * w, rel_tol=1e-9)):
            raise ValueError(
                f"ZB-V's bubble is published for equal passes only (forward_time = "
                f"weight_time = backward_time / 2), got forward_time={f:g}, "
                f"backward_time={b:g}, weight_time={w:g}; pipeline_schedule(..., "
                f"schedule='zb-v') times its order with any split")
        return 0.0
    if p % 2:
        raise ValueError(f"stages must be even for DualPipe, got {p}")
    return (p / 2 - 1) * (fb + b - 3 * w)


def pipeline_peak_activations(schedule: str, stages: int) -> int:
    """Peak activation memory of the busiest device, in units of ``M_B``: the activations
    one micro-batch leaves on one stage for its backward pass.

    ``p`` for 1F1B, ZB-H1 and ZB-V, ``2p - 1`` for ZB-H2 (Qi et al. 2023, Table 2 and
    section 6) and ``PP + 1`` for DualPipe (DeepSeek-V3, Table 2). Qi et al. count a
    micro-batch whose input gradient is done but whose weight gradient waits as ``M_W``,
    less than ``M_B``; the busiest device (the first) holds ``M_B`` for all of them.
    ZB-V's ``p`` is ``2p`` chunks of half a stage each. Multiply by the bytes of one
    stage's micro-batch (:mod:`gpulesson.activations`) for bytes.
    """
    kind = v.choice("schedule", schedule, BUBBLE_SCHEDULES)
    p = v.positive_int("stages", stages)
    if kind == "dualpipe" and p % 2:
        raise ValueError(f"stages must be even for DualPipe, got {p}")
    if kind == "zb-h2":
        return 2 * p - 1  # Qi et al. Table 2
    return p + 1 if kind == "dualpipe" else p  # DeepSeek-V3 Table 2: PP+1; PP otherwise


def dualpipe_bubble_fraction(stages: int, microbatches: int, *, forward_time: float = 1.0,
                             backward_time: float = 2.0, weight_time: float = 1.0,
                             overlapped_time: float | None = None) -> float:
    """DualPipe's bubble as a fraction of the ideal time (DeepSeek-V3, section 3.2.2).

    ``(PP/2 - 1)(F&B + B - 3W) / (m (F + B))`` with ``B`` the full backward pass, as
    Table 2 of the report defines it (:func:`pipeline_bubble_time`). With ``F = W = 1``,
    ``B = 2`` and nothing overlapped that is ``(PP - 2) / (3m)``, against 1F1B's
    ``(PP - 1) / m``.
    """
    m = v.positive_int("microbatches", microbatches)
    bubble = pipeline_bubble_time("dualpipe", stages, forward_time=forward_time,
                                  backward_time=backward_time, weight_time=weight_time,
                                  overlapped_time=overlapped_time)
    return bubble / (m * (forward_time + backward_time))


@dataclass(frozen=True)
class PipelineSlot:
    """One pass of one micro-batch on one pipeline stage.

    ``stage`` is the device (0-based), ``start`` and ``duration`` are in units of the
    given pass times, ``kind`` is ``"forward"``, ``"backward"`` (the whole backward pass;
    only its input-gradient part in the zero-bubble schedules) or ``"weight"`` (the
    weight-gradient pass they split off), ``chunk`` the model chunk on that device
    (interleaved schedule; ZB-V's chunk 1 is the way back up the V; 0 otherwise).
    """

    stage: int
    start: float
    duration: float
    kind: str
    microbatch: int
    chunk: int = 0

    @classmethod
    def _fast(cls, stage: int, start: float, duration: float, kind: str, microbatch: int,
              chunk: int) -> PipelineSlot:
        """Build without the frozen ``__init__``'s per-field ``object.__setattr__`` (a
        schedule has thousands of slots; the fields are already validated)."""
        slot = object.__new__(cls)
        slot.__dict__.update(stage=stage, start=start, duration=duration, kind=kind,
                             microbatch=microbatch, chunk=chunk)
        return slot


_FORWARD, _BACKWARD, _WEIGHT = 0, 1, 2
_KINDS = ("forward", "backward", "weight")


def _zb_h1_order(p: int, m: int, s: int) -> list[tuple[int, int, int]]:
    """Stage ``s`` of ZB-H1: 1F1B's warm-up and steady phase, holding back ``s``
    weight-gradient passes until after its last input-gradient pass."""
    warmup = min(p - s - 1, m)
    ops = [(_FORWARD, i, 0) for i in range(warmup)]
    forwards, backwards, weights = warmup, 0, 0
    while backwards < m:
        if forwards < m:
            ops.append((_FORWARD, forwards, 0))
            forwards += 1
        ops.append((_BACKWARD, backwards, 0))
        backwards += 1
        held = s if backwards < m else 0
        while backwards - weights > held:
            ops.append((_WEIGHT, weights, 0))
            weights += 1
    return ops


class _UnitClock:
    """Which passes are ready when every pass takes one unit of time, the assumption Qi et
    al. design ZB-H2 and ZB-V under: ``run`` records a pass on virtual stage ``vs`` at
    time ``t`` and returns its micro-batch; passes of one virtual stage run in
    micro-batch order."""

    def __init__(self, n_virtual: int, m: int) -> None:
        self.n, self.m = n_virtual, m
        self.done = [[0] * n_virtual for _ in range(3)]  # per kind, passes run
        self.ends = [[[-1] * m for _ in range(n_virtual)] for _ in range(2)]  # F, B

    def ready(self, op: int, vs: int, t: int) -> bool:
        j = self.done[op][vs]
        if op == _FORWARD:
            return j < self.m and (vs == 0 or 0 <= self.ends[_FORWARD][vs - 1][j] <= t)
        if op == _WEIGHT:
            return j < self.done[_BACKWARD][vs]
        if j >= self.done[_FORWARD][vs]:
            return False
        last = vs == self.n - 1
        before = self.ends[_FORWARD][vs][j] if last else self.ends[_BACKWARD][vs + 1][j]
        return 0 <= before <= t

    def run(self, op: int, vs: int, t: int) -> int:
        j = self.done[op][vs]
        self.done[op][vs] += 1
        if op != _WEIGHT:
            self.ends[op][vs][j] = t + 1
        return j


def _zb_h2_step(clock: _UnitClock, p: int, s: int, t: int) -> tuple[int, int] | None:
    """ZB-H2 on stage ``s`` at time ``t``: an input-gradient pass when one is ready,
    else a forward pass while the stage holds fewer than ``2p - 1`` micro-batches, else
    a held-back weight-gradient pass (Qi et al., section 2.2 and Table 2)."""
    done = clock.done
    if clock.ready(_BACKWARD, s, t):
        return _BACKWARD, 0
    if done[_FORWARD][s] - done[_WEIGHT][s] < 2 * p - 1 and clock.ready(_FORWARD, s, t):
        return _FORWARD, 0
    return (_WEIGHT, 0) if clock.ready(_WEIGHT, s, t) else None


def _zb_v_step(clock: _UnitClock, p: int, d: int, t: int,
               state: list[int]) -> tuple[int, int] | None:
    """ZB-V on device ``d`` at time ``t`` (Qi et al., section 6): chunk 0 is virtual stage
    ``d``, chunk 1 virtual stage ``2p - 1 - d``. Warm-up: ``2p - 1 - d`` forward passes of
    chunk 0 and ``d`` of chunk 1. Then groups of a forward, an input-gradient and a
    weight-gradient pass of one chunk: ``p - 1 - d`` groups of chunk 1, then chunk 1 and
    chunk 0 in turn, until the forward passes run out. Last, input-gradient passes when
    ready, weight-gradient passes in the gaps. ``state`` is [group, next step in group];
    the caller runs the pass returned."""
    m, done = clock.m, clock.done
    vs = (d, 2 * p - 1 - d)
    warm = (min(2 * p - 1 - d, m), min(d, m))
    if done[_FORWARD][vs[0]] < warm[0] or done[_FORWARD][vs[1]] < warm[1]:
        for c in (1, 0):
            if done[_FORWARD][vs[c]] < warm[c] and clock.ready(_FORWARD, vs[c], t):
                return _FORWARD, c
        return None
    while done[_FORWARD][vs[0]] < m or done[_FORWARD][vs[1]] < m:
        group, step = state
        c = 1 if group < p - 1 - d or (group - (p - 1 - d)) % 2 == 0 else 0
        if step == 0 and done[_FORWARD][vs[c]] < m:
            if not clock.ready(_FORWARD, vs[c], t):
                return None
            state[1] = 1
            return _FORWARD, c
        if step <= 1 and done[_BACKWARD][vs[c]] < done[_FORWARD][vs[c]]:
            if not clock.ready(_BACKWARD, vs[c], t):
                state[1] = 1
                return None
            state[1] = 2
            return _BACKWARD, c
        state[0], state[1] = group + 1, 0
        if step == 2:
            return _WEIGHT, c
    for op in (_BACKWARD, _WEIGHT):
        for c in (1, 0):
            if clock.ready(op, vs[c], t):
                return op, c
    return None


def _unit_time_orders(p: int, m: int, schedule: str) -> list[list[tuple[int, int, int]]]:
    """Per device, the order of (kind, microbatch, chunk) of ZB-H2 or ZB-V: the order they
    run in when every pass takes one unit, which :func:`pipeline_schedule` then times
    with the given pass times (a handcrafted schedule keeps its order)."""
    chunks = 2 if schedule == "zb-v" else 1
    clock = _UnitClock(chunks * p, m)
    orders: list[list[tuple[int, int, int]]] = [[] for _ in range(p)]
    states = [[0, 0] for _ in range(p)]
    left, t = 3 * chunks * p * m, 0
    while left:
        if t > 12 * chunks * p * m + 8 * p:  # pragma: no cover - never waits on itself
            raise RuntimeError(f"{schedule} order deadlocked")
        for d in range(p):
            pick = (_zb_h2_step(clock, p, d, t) if chunks == 1
                    else _zb_v_step(clock, p, d, t, states[d]))
            if pick is not None:
                op, c = pick
                vs = d if c == 0 else 2 * p - 1 - d
                orders[d].append((op, clock.run(op, vs, t), c))
                left -= 1
        t += 1
    return orders


def _orders(p: int, m: int, schedule: str, k: int) -> list[list[tuple[int, int, int]]]:
    """Per device, the order of (kind, microbatch, chunk) operations."""
    orders = []
    for s in range(p):
        if schedule == "gpipe":
            ops = ([(_FORWARD, i, 0) for i in range(m)]
                   + [(_BACKWARD, i, 0) for i in range(m)])
        elif schedule == "zb-h1":
            ops = _zb_h1_order(p, m, s)
        elif schedule in ("zb-h2", "zb-v"):
            return _unit_time_orders(p, m, schedule)
        else:
            total = m * k

            def fwd(j: int) -> tuple[int, int, int]:
                return (_FORWARD, (j // (p * k)) * p + j % p, (j // p) % k)

            def bwd(j: int) -> tuple[int, int, int]:
                return (_BACKWARD, (j // (p * k)) * p + j % p, k - 1 - (j // p) % k)

            if schedule == "1f1b":
                warmup = min(p - s - 1, m)
            else:
                warmup = min((p - s - 1) * 2 + (k - 1) * p, total)
            ops = [fwd(j) for j in range(warmup)]
            for j in range(total - warmup):
                ops += [fwd(warmup + j), bwd(j)]
            ops += [bwd(j) for j in range(total - warmup, total)]
        orders.append(ops)
    return orders


def pipeline_schedule(
    stages: int,
    microbatches: int,
    *,
    schedule: str = "gpipe",
    interleave: int = 1,
    forward_time: float = 1.0,
    backward_time: float = 2.0,
    weight_time: float | None = None,
) -> list[PipelineSlot]:
    """Simulate a pipeline schedule: when each stage runs each forward and backward pass.

    Parameters
    ----------
    stages : int
        Pipeline stages (devices) ``p``.
    microbatches : int
        Micro-batches per iteration ``m``.
    schedule : str
        ``"gpipe"`` (all forwards, then all backwards; Huang et al. 2019), ``"1f1b"``
        (PipeDream-Flush: warm up, then alternate one forward and one backward;
        Narayanan et al. 2021), ``"interleaved"`` (1F1B over ``interleave`` model chunks
        per device, Megatron-LM's order; ``m`` must be a multiple of ``p``), ``"zb-h1"``
        (1F1B with the backward split into input- and weight-gradient passes, stage ``s``
        holding back ``s`` weight-gradient passes; Qi et al. 2023, section 2.1),
        ``"zb-h2"`` (up to ``2p - 1`` micro-batches in flight, so the first backward
        finds every stage busy; section 2.2) or ``"zb-v"`` (two chunks per device, the
        model laid down the devices and back up in a V; section 6). ZB-H2 and ZB-V run
        in the order they take when every pass lasts one unit, the assumption they were
        designed under: their bubble is ``pipeline_stage_span(slots) - m*(f + b)``.
    interleave : int
        Model chunks per device ``v`` (only for ``"interleaved"``; ZB-V always has 2).
    forward_time, backward_time : float
        Time of one micro-batch's forward and whole backward pass through one whole stage
        (a chunk takes ``1/v`` of it). Backward is about twice the forward.
    weight_time : float, optional
        Only for the zero-bubble schedules: the weight-gradient part of ``backward_time``
        (half of it when left out, Qi et al.'s ``T_B = T_W``); the input-gradient pass
        takes the rest.

    Returns
    -------
    list[PipelineSlot]
        Sorted by start time. The makespan is ``(m + p - 1) * (f + b)`` for GPipe and
        1F1B, ``m*(f + b) + (p - 1)*(f + b)/v`` interleaved (the bubble of
        :func:`pipeline_bubble_fraction`) and ``m*(f + b) + (p - 1)*(f + b - 2w)`` for
        ZB-H1 when ``m >= p``, ``w <= f`` and ``w <= b - w`` (:func:`pipeline_bubble_time`).
        ZB-H2's longest stage span (:func:`pipeline_stage_span`) is
        ``m*(f + b) + (p - 1)*(f + b - 3w)`` under the same condition on ``w`` when
        ``m >= 2p - 1``; ZB-V's is ``m*(f + b)``, no bubble, when ``m >= 2p - 1`` and
        ``f = w = b/2``. Every stage of ZB-H2 holds at most ``2p - 1`` micro-batches, of
        ZB-V ``2p`` chunks of half a stage (:func:`pipeline_peak_activations`).

    Raises
    ------
    ValueError
        for a schedule of more than :data:`MAX_PIPELINE_SLOTS` passes, naming ``stages``,
        ``microbatches`` and ``interleave``.
    """
    p = v.positive_int("stages", stages)
    m = v.positive_int("microbatches", microbatches)
    kind = v.choice("schedule", schedule, PIPELINE_SCHEDULES)
    k = v.positive_int("interleave", interleave)
    tf = v.positive_number("forward_time", forward_time)
    tb = v.positive_number("backward_time", backward_time)
    if kind != "interleaved" and k != 1:
        raise ValueError(f"interleave must be 1 for schedule {kind!r}, got {k}")
    if kind not in _SPLIT and weight_time is not None:
        raise ValueError(f"weight_time applies only to schedules {', '.join(_SPLIT)}, got "
                         f"{weight_time!r} for schedule {kind!r}")
    tw = tb / 2 if weight_time is None else _passes(tf, tb, weight_time, None)[2]
    chunks = 2 if kind == "zb-v" else k  # ZB-V: two chunks per device, in a V
    per_pass = 3 if kind in _SPLIT else 2
    per_pass *= chunks // k  # passes per micro-batch, stage and unit of interleave
    if per_pass * p * m * k > MAX_PIPELINE_SLOTS:
        raise ValueError(
            f"stages × microbatches × interleave must be at most "
            f"{MAX_PIPELINE_SLOTS // per_pass:,} (a schedule of {MAX_PIPELINE_SLOTS:,} "
            f"passes), got stages={p}, microbatches={m}, interleave={k}; "
            f"pipeline_bubble_fraction gives the bubble of any size"
        )
    if kind == "interleaved" and m % p:
        raise ValueError(
            f"microbatches must be a multiple of stages ({p}) for the interleaved schedule, "
            f"got {m}"
        )
    orders = _orders(p, m, kind, k)
    n_virtual = p * chunks
    per_kind = m * n_virtual
    # Each pass starts as soon as the previous pass on its device and the pass it
    # depends on (previous stage's forward, next stage's backward; the last stage's
    # backward waits for its own forward; a weight pass for its own backward) have
    # finished: a longest-path computation over the schedule's DAG, resolved with an
    # explicit stack. Passes are numbered (kind * m + microbatch) * n_virtual + stage.
    total = (3 if kind in _SPLIT else 2) * per_kind
    prev = [-1] * total
    dep = [-1] * total
    info: list[tuple[int, int, int, int] | None] = [None] * total  # stage, kind, mb, chunk
    sequence: list[int] = []
    for s, ops in enumerate(orders):
        before = -1
        for op, mb, chunk in ops:
            vs = 2 * p - 1 - s if kind == "zb-v" and chunk else chunk * p + s
            ident = (op * m + mb) * n_virtual + vs
            if op == _FORWARD:
                dep[ident] = ident - 1 if vs > 0 else -1
            elif op == _WEIGHT:
                dep[ident] = ident - per_kind
            elif vs < n_virtual - 1:
                dep[ident] = ident + 1
            else:
                dep[ident] = mb * n_virtual + vs
            prev[ident] = before
            info[ident] = (s, op, mb, chunk)
            sequence.append(ident)
            before = ident
    end = [-1.0] * total
    start_at = [0.0] * total
    if kind in _SPLIT:
        durations: tuple[float, ...] = (tf / chunks, (tb - tw) / chunks, tw / chunks)
    else:
        durations = (tf / k, tb / k)
    for root in sequence:
        if end[root] >= 0:
            continue
        stack = [root]
        while stack:
            ident = stack[-1]
            if end[ident] >= 0:
                stack.pop()
                continue
            a, b = prev[ident], dep[ident]
            pending = False
            if a >= 0 and end[a] < 0:
                stack.append(a)
                pending = True
            if b >= 0 and end[b] < 0:
                stack.append(b)
                pending = True
            if pending:
                if len(stack) > 3 * total + 3:  # pragma: no cover - orders are acyclic
                    raise RuntimeError("pipeline schedule deadlocked")
                continue
            begin = max(end[a] if a >= 0 else 0.0, end[b] if b >= 0 else 0.0)
            start_at[ident] = begin
            end[ident] = begin + durations[info[ident][1]]  # type: ignore[index]
            stack.pop()
    slots = []
    for ident in sequence:
        stage_of, op, mb, chunk = info[ident]  # type: ignore[misc]
        slots.append(PipelineSlot._fast(stage_of, start_at[ident],
                                        end[ident] - start_at[ident], _KINDS[op], mb, chunk))
    slots.sort(key=lambda slot: (slot.start, slot.stage))
    return slots


def pipeline_makespan(slots: list[PipelineSlot]) -> float:
    """End time of the last pass of a schedule from :func:`pipeline_schedule`."""
    if not isinstance(slots, (list, tuple)) or not all(
        isinstance(slot, PipelineSlot) for slot in slots
    ):
        raise TypeError(f"slots must be a list of PipelineSlot (from pipeline_schedule), "
                        f"got {v._short_repr(slots)} ({type(slots).__name__})")
    if not slots:
        raise ValueError("slots must not be empty")
    return max(slot.start + slot.duration for slot in slots)



def pipeline_stage_span(slots: list[PipelineSlot]) -> float:
    """The longest time one stage spends on a step, from the start of its first pass to
    the end of its last: the step time once the synchronisation before the optimizer
    step is gone and each stage starts the next step as soon as it is done (Qi et al.
    2023, section 4; their cost ``max_i E(i,m,W) - E(i,1,F) + T(i,1,F)``, Appendix G).
    It equals :func:`pipeline_makespan` for GPipe, 1F1B and ZB-H1, whose first stage runs
    first and last; ZB-H2 and ZB-V reach their bubble only by this measure."""
    pipeline_makespan(slots)  # the same checks
    first: dict[int, float] = {}
    last: dict[int, float] = {}
    for slot in slots:
        first[slot.stage] = min(first.get(slot.stage, slot.start), slot.start)
        last[slot.stage] = max(last.get(slot.stage, 0.0), slot.start + slot.duration)
    return max(last[s] - first[s] for s in first)


def pipeline_stage_activations(slots: list[PipelineSlot], stage: int) -> float:
    """The most activations ``stage`` holds at once in a simulated schedule, in micro-batches
    of a whole stage (the unit of :func:`pipeline_peak_activations`).

    A micro-batch's activations stay from the start of its forward pass to the pass that
    frees them: the weight-gradient pass when the schedule splits it off, else the
    backward pass. A model chunk holds ``1/v`` of a stage's layers when a device runs
    ``v`` chunks (interleaved 1F1B; ZB-V's two halves of the V), so it counts ``1/v``."""
    pipeline_makespan(slots)  # the same checks
    stages = 1 + max(slot.stage for slot in slots)
    if not isinstance(stage, int) or isinstance(stage, bool) or not 0 <= stage < stages:
        raise ValueError(f"stage must be a whole number from 0 to {stages - 1} (the schedule's "
                         f"stages), got {v._short_repr(stage)}")
    chunks = 1 + max(slot.chunk for slot in slots)
    frees = "weight" if any(slot.kind == "weight" for slot in slots) else "backward"
    live = peak = 0
    for slot in sorted((s for s in slots if s.stage == stage), key=lambda s: s.start):
        live += {"forward": 1, frees: -1}.get(slot.kind, 0)
        peak = max(peak, live)
    return peak / chunks


v.guard_module(globals())
