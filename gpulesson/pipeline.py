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
The ideal time of ``m`` micro-batches on one device is ``m(F + B)`` in all three: every
micro-batch crosses every device once, in DualPipe through one of its two stages.

Taught in: ``notebooks/distributed_math.ipynb``. :mod:`gpulesson.distributed` re-exports
every name here. Standard library only.
"""

from __future__ import annotations

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
    "pipeline_schedule",
]

#: The schedules :func:`pipeline_schedule` simulates.
PIPELINE_SCHEDULES = ("gpipe", "1f1b", "interleaved", "zb-h1")
#: The schedules of DeepSeek-V3's Table 2, whose bubble :func:`pipeline_bubble_time` gives.
BUBBLE_SCHEDULES = ("1f1b", "zb-h1", "dualpipe")
#: The most passes :func:`pipeline_schedule` simulates (2·p·m·v, 3·p·m for ZB-H1): 10^5
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
    DeepSeek-AI 2024, *DeepSeek-V3 Technical Report*, section 3.2.2).

    ``"1f1b"``: ``(PP-1)(F+B)``; ``"zb-h1"`` (Table 2's ZB1P): ``(PP-1)(F+B-2W)``, which
    the simulated schedule (:func:`pipeline_schedule`) reaches exactly when ``W`` is at
    most ``F`` and at most ``B - W`` (a longer weight pass leaves gaps the formula does not
    count, so it is refused); ``"dualpipe"``: ``(PP/2-1)(F&B+B-3W)``, ``PP`` even.

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
    if kind == "zb-h1":
        if w > f or w > b - w:
            raise ValueError(
                f"weight_time must be at most forward_time ({f:g}) and the input-gradient "
                f"part of the backward pass (backward_time - weight_time = {b - w:g}) for "
                f"ZB-H1's closed form, got {w:g}; pipeline_schedule(..., schedule='zb-h1') "
                f"simulates any split")
        return (p - 1) * (f + b - 2 * w)
    if p % 2:
        raise ValueError(f"stages must be even for DualPipe, got {p}")
    return (p / 2 - 1) * (fb + b - 3 * w)


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
    only its input-gradient part in ``"zb-h1"``) or ``"weight"`` (the weight-gradient
    pass that ``"zb-h1"`` splits off), ``chunk`` the model chunk on that device
    (interleaved schedule; 0 otherwise).
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


def _orders(p: int, m: int, schedule: str, k: int) -> list[list[tuple[int, int, int]]]:
    """Per device, the order of (kind, microbatch, chunk) operations."""
    orders = []
    for s in range(p):
        if schedule == "gpipe":
            ops = ([(_FORWARD, i, 0) for i in range(m)]
                   + [(_BACKWARD, i, 0) for i in range(m)])
        elif schedule == "zb-h1":
            ops = _zb_h1_order(p, m, s)
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
        per device, Megatron-LM's order; ``m`` must be a multiple of ``p``) or ``"zb-h1"``
        (1F1B with the backward split into input- and weight-gradient passes, stage ``s``
        holding back ``s`` weight-gradient passes; Qi et al. 2023).
    interleave : int
        Model chunks per device ``v`` (only for ``"interleaved"``).
    forward_time, backward_time : float
        Time of one micro-batch's forward and whole backward pass through one whole stage
        (a chunk takes ``1/v`` of it). Backward is about twice the forward.
    weight_time : float, optional
        Only for ``"zb-h1"``: the weight-gradient part of ``backward_time`` (half of it
        when left out, Qi et al.'s ``T_B = T_W``); the input-gradient pass takes the rest.

    Returns
    -------
    list[PipelineSlot]
        Sorted by start time. The makespan is ``(m + p - 1) * (f + b)`` for GPipe and
        1F1B, ``m*(f + b) + (p - 1)*(f + b)/v`` interleaved (the bubble of
        :func:`pipeline_bubble_fraction`) and ``m*(f + b) + (p - 1)*(f + b - 2w)`` for
        ZB-H1 when ``m >= p``, ``w <= f`` and ``w <= b - w`` (:func:`pipeline_bubble_time`).

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
    if kind != "zb-h1" and weight_time is not None:
        raise ValueError(f"weight_time applies only to schedule 'zb-h1', got {weight_time!r} "
                         f"for schedule {kind!r}")
    tw = tb / 2 if weight_time is None else _passes(tf, tb, weight_time, None)[2]
    per_pass = 3 if kind == "zb-h1" else 2
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
    n_virtual = p * k
    per_kind = m * n_virtual
    # Each pass starts as soon as the previous pass on its device and the pass it
    # depends on (previous stage's forward, next stage's backward; the last stage's
    # backward waits for its own forward; a weight pass for its own backward) have
    # finished: a longest-path computation over the schedule's DAG, resolved with an
    # explicit stack. Passes are numbered (kind * m + microbatch) * n_virtual + stage.
    total = per_pass * per_kind
    prev = [-1] * total
    dep = [-1] * total
    info: list[tuple[int, int, int, int] | None] = [None] * total  # stage, kind, mb, chunk
    sequence: list[int] = []
    for s, ops in enumerate(orders):
        before = -1
        for op, mb, chunk in ops:
            vs = chunk * p + s
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
    if kind == "zb-h1":
        durations: tuple[float, ...] = (tf, tb - tw, tw)
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


v.guard_module(globals())
