"""gpulesson.pipeline: the bubble of each schedule, and the simulated schedules."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpulesson import distributed, links, pipeline


def _in_flight(slots: list[pipeline.PipelineSlot], stage: int) -> float:
    """Most micro-batches whose activations a stage holds at once
    (:func:`pipeline.pipeline_stage_activations`)."""
    return pipeline.pipeline_stage_activations(slots, stage)


# ---------------------------------------------------------------------------------------
# Published figures: GPipe, 1F1B, interleaved


def test_source_narayanan_bubble_fractions() -> None:
    """Narayanan et al. 2021, sections 2.2.1-2.2.2: the pipeline bubble is (p-1)/m of the
    ideal time for GPipe/1F1B and (1/v)(p-1)/m for the interleaved schedule."""
    assert pipeline.pipeline_bubble_fraction(8, 32) == pytest.approx(7 / 32)
    assert pipeline.pipeline_bubble_fraction(8, 32, 4) == pytest.approx(7 / 128)


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_source_gpipe_bubble_overhead_in_simulated_schedule(schedule: str) -> None:
    """Huang et al. 2019 (GPipe), section 2.3: with K stages and M micro-batches each
    device idles (K-1)/(M+K-1) of the time, the ratio to ideal being (K-1)/M; the
    simulated schedule reproduces it."""
    p, m = 4, 16
    slots = pipeline.pipeline_schedule(p, m, schedule=schedule)
    makespan = pipeline.pipeline_makespan(slots)
    busy = sum(s.duration for s in slots if s.stage == 0)
    assert (makespan - busy) / makespan == pytest.approx((p - 1) / (m + p - 1))
    assert makespan / busy - 1 == pytest.approx(
        pipeline.pipeline_bubble_fraction(p, m))


def test_source_narayanan_interleaved_schedule_bubble() -> None:
    """Narayanan et al. 2021, section 2.2.2: with v model chunks per device the bubble
    time drops to (p-1)(t_f+t_b)/v; the simulated interleaved schedule matches."""
    p, m, v = 4, 8, 2
    slots = pipeline.pipeline_schedule(p, m, schedule="interleaved", interleave=v)
    makespan = pipeline.pipeline_makespan(slots)
    ideal = m * (1.0 + 2.0)
    assert makespan - ideal == pytest.approx((p - 1) * 3.0 / v)
    assert (makespan - ideal) / ideal == pytest.approx(
        pipeline.pipeline_bubble_fraction(p, m, v))


@given(p=st.integers(1, 8), m=st.integers(1, 24),
       schedule=st.sampled_from(["gpipe", "1f1b"]))
def test_schedule_makespan_matches_bubble(p: int, m: int, schedule: str) -> None:
    slots = pipeline.pipeline_schedule(p, m, schedule=schedule)
    assert len(slots) == 2 * p * m
    assert pipeline.pipeline_makespan(slots) == pytest.approx((m + p - 1) * 3.0)
    for stage in range(p):  # no overlap on a device
        mine = sorted((s.start, s.start + s.duration) for s in slots if s.stage == stage)
        assert all(a[1] <= b[0] + 1e-12 for a, b in zip(mine, mine[1:], strict=False))


@given(p=st.integers(2, 6), groups=st.integers(1, 4), v=st.integers(1, 4))
def test_interleaved_makespan(p: int, groups: int, v: int) -> None:
    m = p * groups
    slots = pipeline.pipeline_schedule(p, m, schedule="interleaved", interleave=v)
    assert len(slots) == 2 * p * m * v
    assert pipeline.pipeline_makespan(slots) == pytest.approx(m * 3.0 + (p - 1) * 3.0 / v)


def test_1f1b_limits_in_flight_microbatches() -> None:
    """1F1B keeps at most p micro-batches in flight on the first stage (GPipe keeps m)."""
    def max_in_flight(schedule: str) -> float:
        slots = pipeline.pipeline_schedule(4, 12, schedule=schedule)
        return pipeline.pipeline_stage_activations(slots, 0)
    assert max_in_flight("1f1b") == 4 and max_in_flight("gpipe") == 12


def test_a_schedule_beyond_the_cap_is_refused_at_once(monkeypatch) -> None:
    """``pipeline_schedule(4, 10**6)`` used to run 20 s and then fail with MemoryError; it is
    refused before any work, naming the three sizes (the bubble formula answers any size)."""
    import time

    assert pipeline.MAX_PIPELINE_SLOTS == 100_000
    began = time.perf_counter()
    with pytest.raises(ValueError, match=r"stages=4, microbatches=1000000, interleave=1"):
        pipeline.pipeline_schedule(4, 10**6)
    assert time.perf_counter() - began < 5  # it was 20 s; 5 s leaves room for a loaded CI
    assert pipeline.pipeline_bubble_fraction(4, 10**6) == pytest.approx(3e-6)
    monkeypatch.setattr(pipeline, "MAX_PIPELINE_SLOTS", 1_000)  # the same rule, smaller
    assert len(pipeline.pipeline_schedule(5, 100)) == 1_000  # the cap itself runs
    with pytest.raises(ValueError, match="at most 500 "):
        pipeline.pipeline_schedule(5, 101)


@pytest.mark.parametrize("bad", ["abc", 3, None, [1, 2], ("x",)])
def test_makespan_refuses_what_is_not_a_schedule(bad: object) -> None:
    """``pipeline_makespan("abc")`` raised AttributeError."""
    with pytest.raises(TypeError, match="slots must be a list of PipelineSlot"):
        pipeline.pipeline_makespan(bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------
# Zero-bubble schedules (Qi et al. 2023) and DeepSeek-V3's Table 2


def test_source_qi_zb_h1_bubble_is_a_third_of_1f1b() -> None:
    """Qi et al. 2023, *Zero Bubble Pipeline Parallelism* (arXiv 2401.10241), section 3.1:
    1F1B idles (p-1)(T_F + T_B + T_W) per step, ZB-H1 (p-1)(T_F + T_B - T_W), a third of
    it when T_F = T_B = T_W. Simulated with 4 stages and 8 micro-batches of unit passes:
    1F1B takes 24 + 9 units, ZB-H1 24 + 3."""
    p, m = 4, 8
    one_f_one_b = pipeline.pipeline_makespan(pipeline.pipeline_schedule(p, m, schedule="1f1b"))
    zb = pipeline.pipeline_makespan(pipeline.pipeline_schedule(p, m, schedule="zb-h1"))
    assert one_f_one_b - 3 * m == pytest.approx(9)
    assert zb - 3 * m == pytest.approx(3)
    assert (zb - 3 * m) / (one_f_one_b - 3 * m) == pytest.approx(1 / 3)


@pytest.mark.parametrize(("p", "m"), [(4, 8), (8, 32), (6, 6)])
def test_source_zero_bubble_readme_bubble_rates(p: int, m: int) -> None:
    """sail-sg/zero-bubble-pipeline-parallelism, README.md, "Comparision of Schedules"
    (assuming T_F = T_B = T_W): bubble rate 1F1B (p-1)/m, ZB1P (p-1)/3m, activation
    memory 1x for both. The simulated schedules idle exactly those shares of the ideal
    3m units and hold the same peak of micro-batches."""
    one = pipeline.pipeline_schedule(p, m, schedule="1f1b")
    zb = pipeline.pipeline_schedule(p, m, schedule="zb-h1")
    ideal = 3.0 * m
    assert pipeline.pipeline_makespan(one) / ideal - 1 == pytest.approx((p - 1) / m)
    assert pipeline.pipeline_makespan(zb) / ideal - 1 == pytest.approx((p - 1) / (3 * m))
    assert max(_in_flight(zb, s) for s in range(p)) == max(_in_flight(one, s)
                                                            for s in range(p))


def test_source_qi_zb_h1_keeps_the_memory_of_1f1b() -> None:
    """Qi et al. 2023, section 3.1: ZB-H1's peak memory does not exceed 1F1B's, p
    micro-batches' activations: the simulated ZB-H1 keeps at most p in flight on every
    stage (1F1B's first stage keeps p, its last one)."""
    p, m = 6, 18
    zb = pipeline.pipeline_schedule(p, m, schedule="zb-h1")
    plain = pipeline.pipeline_schedule(p, m, schedule="1f1b")
    assert max(_in_flight(zb, s) for s in range(p)) == p
    assert [_in_flight(plain, s) for s in (0, p - 1)] == [p, 1]
    weights = [s for s in zb if s.kind == "weight"]
    assert len(weights) == p * m and all(s.duration == 1.0 for s in weights)


def test_zb_h1_closed_form_refuses_a_long_weight_pass() -> None:
    """A weight-gradient pass longer than the forward pass leaves idle gaps the formula
    does not count: with F = 1, input gradient 1, W = 1.5 and 4 stages the simulation
    idles 3 units where (p-1)(F+B-2W) says 1.5, so the closed form refuses and points to
    the simulation."""
    p, m = 4, 8
    slots = pipeline.pipeline_schedule(p, m, schedule="zb-h1", forward_time=1.0,
                                       backward_time=2.5, weight_time=1.5)
    assert pipeline.pipeline_makespan(slots) - m * 3.5 == pytest.approx(3.0)
    with pytest.raises(ValueError, match="weight_time must be at most forward_time"):
        pipeline.pipeline_bubble_time("zb-h1", p, forward_time=1.0, backward_time=2.5,
                                      weight_time=1.5)


@pytest.mark.parametrize(("schedule", "units"), [("1f1b", 45), ("zb-h1", 15),
                                                 ("dualpipe", 14)])
def test_source_deepseek_v3_table2_bubbles(schedule: str, units: float) -> None:
    """DeepSeek-AI 2024, *DeepSeek-V3 Technical Report* (arXiv 2412.19437), Table 2:
    bubbles 1F1B (PP-1)(F+B), ZB1P (PP-1)(F+B-2W), DualPipe (PP/2-1)(F&B+B-3W), where
    "B denotes the execution time of a full backward chunk, W ... a 'backward for
    weights' chunk". With F = W = 1, B = 2 and nothing overlapped (F&B = 3), PP = 16:
    15 x 3 = 45, 15 x 1 = 15 and 7 x 2 = 14 units."""
    assert pipeline.pipeline_bubble_time(schedule, 16) == pytest.approx(units)


def test_source_deepseek_v3_dualpipe_bubble_fraction_uses_the_full_backward() -> None:
    """DeepSeek-V3 Table 2 with B the full backward: DualPipe's bubble is 14 units of the
    ideal 3m for PP = 16, 14/45 of 1F1B's. The function used to read B as the input
    gradient alone (F&B + B - 3W = 3 + 1 - 3 = 1 unit per rank pair) and gave 7/45."""
    dual = distributed.dualpipe_bubble_fraction(16, 20)
    plain = distributed.pipeline_bubble_fraction(16, 20)
    assert dual == pytest.approx(14 / 60)
    assert dual / plain == pytest.approx(14 / 45)
    # overlapping the forward and backward chunks (F&B < F + B) is what DualPipe is for
    hidden = pipeline.dualpipe_bubble_fraction(16, 20, overlapped_time=2.0)
    assert hidden == pytest.approx(7 / 60)
    with pytest.raises(ValueError, match="stages must be even"):
        distributed.dualpipe_bubble_fraction(15, 20)


def test_zb1p_row_is_the_simulated_zb_h1() -> None:
    """Two sources, one schedule: DeepSeek-V3's ZB1P row, (PP-1)(F+B-2W) with B the full
    backward, is what the simulated ZB-H1 of Qi et al. idles (F = 1, B = 2.4, W = 0.9)."""
    p, m = 8, 16
    slots = pipeline.pipeline_schedule(p, m, schedule="zb-h1", forward_time=1.0,
                                       backward_time=2.4, weight_time=0.9)
    assert pipeline.pipeline_makespan(slots) - m * 3.4 == pytest.approx(7 * (1 + 2.4 - 1.8))


def test_the_old_homes_still_answer() -> None:
    """Every name moved out of gpulesson.distributed (and links) still works there."""
    for name in pipeline.__all__:
        assert getattr(distributed, name) is getattr(pipeline, name)
    assert links.dualpipe_bubble_fraction is pipeline.dualpipe_bubble_fraction


def test_split_backward_validation() -> None:
    with pytest.raises(ValueError, match="weight_time applies only to schedules zb-h1, "
                                         "zb-h2, zb-v"):
        pipeline.pipeline_schedule(4, 8, schedule="1f1b", weight_time=1.0)
    with pytest.raises(ValueError, match=r"weight_time must be less than backward_time \(2"):
        pipeline.pipeline_schedule(4, 8, schedule="zb-h1", weight_time=2.0)
    with pytest.raises(ValueError, match="overlapped_time must be at most"):
        pipeline.pipeline_bubble_time("dualpipe", 8, overlapped_time=4.0)
    with pytest.raises(ValueError, match="schedule must be one of"):
        pipeline.pipeline_bubble_time("zb-h3", 8)
    with pytest.raises(ValueError, match="multiple of stages"):
        pipeline.pipeline_schedule(4, 6, schedule="interleaved", interleave=2)
    with pytest.raises(ValueError, match="interleave must be 1"):
        pipeline.pipeline_schedule(4, 8, schedule="1f1b", interleave=2)


# ---------------------------------------------------------------------------------------
# ZB-H2 and ZB-V (Qi et al. 2023, sections 2.2, 2.3 and 6)

QI = "https://arxiv.org/abs/2401.10241"
README = "https://github.com/sail-sg/zero-bubble-pipeline-parallelism (README.md)"


def _check_order(slots: list[pipeline.PipelineSlot], p: int, m: int, chunks: int) -> None:
    """Every pass once, no two at a time on a device, and each after the pass it needs:
    the forward on the virtual stage before, the input gradient on the one after (the
    last: its own forward), the weight gradient after its own input gradient."""
    virtual = ({(s, 0): s for s in range(p)} if chunks == 1 else
               {**{(s, 0): s for s in range(p)}, **{(s, 1): 2 * p - 1 - s for s in range(p)}})
    end = {(s.kind, s.microbatch, virtual[s.stage, s.chunk]): s.start + s.duration
           for s in slots}
    assert len(end) == len(slots) == 3 * chunks * p * m
    last = chunks * p - 1
    for s in slots:
        vs = virtual[s.stage, s.chunk]
        need = {"forward": ("forward", s.microbatch, vs - 1) if vs else None,
                "backward": (("backward", s.microbatch, vs + 1) if vs < last
                             else ("forward", s.microbatch, vs)),
                "weight": ("backward", s.microbatch, vs)}[s.kind]
        assert need is None or end[need] <= s.start + 1e-9
    for stage in range(p):
        mine = sorted((s.start, s.start + s.duration) for s in slots if s.stage == stage)
        assert all(a[1] <= c[0] + 1e-9 for a, c in zip(mine, mine[1:], strict=False))


@pytest.mark.parametrize(("p", "m"), [(4, 8), (4, 16), (8, 24)])
def test_source_qi_table2_zb_h2_bubble_and_memory(p: int, m: int) -> None:
    """Qi et al. 2023 (arXiv 2401.10241), section 2.3, Table 2, "Comparison between 1F1B
    and our handcrafted schedules": bubble size / peak activations memory
    1F1B (p-1)(T_F+T_B+T_W) / pM_B, ZB-H1 (p-1)(T_F+T_B-T_W) / pM_B,
    ZB-H2 (p-1)(T_F+T_B-2T_W) / (2p-1)M_B. With T_F = 1, T_B = 1.3 and T_W = 0.6 the
    simulated ZB-H2 idles (p-1) x 1.1 inside each stage's span and holds 2p-1
    micro-batches; the closed form gives the same."""
    f, b_in, w = 1.0, 1.3, 0.6
    zb = pipeline.pipeline_schedule(p, m, schedule="zb-h2", forward_time=f,
                                    backward_time=b_in + w, weight_time=w)
    idle = pipeline.pipeline_stage_span(zb) - m * (f + b_in + w)
    assert idle == pytest.approx((p - 1) * 1.1)
    assert pipeline.pipeline_bubble_time("zb-h2", p, forward_time=f, backward_time=b_in + w,
                                         weight_time=w) == pytest.approx(idle)
    assert max(_in_flight(zb, s) for s in range(p)) == 2 * p - 1
    assert [pipeline.pipeline_peak_activations(s, p) for s in ("1f1b", "zb-h1", "zb-h2")] \
        == [p, p, 2 * p - 1]


@pytest.mark.parametrize(("p", "m"), [(4, 8), (6, 18), (8, 32)])
def test_source_zero_bubble_readme_zb2p_and_zbv(p: int, m: int) -> None:
    """sail-sg/zero-bubble-pipeline-parallelism, README.md, "Comparision of Schedules"
    (assuming T_F = T_B = T_W): bubble rate ZB2P 0, ZBV 0; activation memory compared
    to 1F1B 2x and 1x. Qi et al. section 6: "Under the condition T_F = T_B = T_W, ZB-V
    achieves zero bubble with a peak activations memory of pM_B". Simulated with unit
    passes: no stage idles inside its span; ZB-H2 holds 2p-1 micro-batches (the README
    rounds it to 2x), ZB-V 2p half-stage chunks, p micro-batches, as 1F1B."""
    one = pipeline.pipeline_schedule(p, m, schedule="1f1b")
    for kind, peak in (("zb-h2", 2 * p - 1), ("zb-v", p)):
        slots = pipeline.pipeline_schedule(p, m, schedule=kind)
        assert pipeline.pipeline_stage_span(slots) == pytest.approx(3.0 * m)
        assert pipeline.pipeline_bubble_time(kind, p) == 0
        assert max(_in_flight(slots, s) for s in range(p)) == peak
        assert pipeline.pipeline_peak_activations(kind, p) == peak
    assert max(_in_flight(one, s) for s in range(p)) == p


def test_source_qi_section6_zb_v_layout_and_warm_up() -> None:
    """Qi et al. section 6: "in partitioning a 16-layer transformer model for a 4-stage
    pipeline, we allocate layers 1-2 and layers 15-16 to worker 1, layers 3-4 and layers
    13-14 to worker 2"; "each worker (denoted as i) performs a total of 2p - 1 forward
    passes, comprising 2p - i passes for the first chunk and i - 1 passes for the second
    chunk"; then "a repetitive 1F-1B-1W pattern", which "initiates with the execution of
    p - i groups for the second chunk" (then alternates, so every worker starts with the
    second chunk). The simulated ZB-V: micro-batch 0 goes down the devices and back up;
    worker i runs those warm-up passes, then a forward, an input-gradient and a
    weight-gradient pass of the second chunk."""
    p, m = 4, 8
    slots = pipeline.pipeline_schedule(p, m, schedule="zb-v")
    first = sorted((s for s in slots if s.microbatch == 0 and s.kind == "forward"),
                   key=lambda s: s.start)
    assert [(s.stage, s.chunk) for s in first] == [(0, 0), (1, 0), (2, 0), (3, 0),
                                                   (3, 1), (2, 1), (1, 1), (0, 1)]
    for i in range(1, p + 1):
        mine = sorted((s for s in slots if s.stage == i - 1), key=lambda s: s.start)
        warm, group = mine[:2 * p - 1], mine[2 * p - 1:2 * p + 2]
        assert all(s.kind == "forward" for s in warm)
        assert sum(s.chunk == 0 for s in warm) == 2 * p - i
        assert sum(s.chunk == 1 for s in warm) == i - 1
        assert [(s.kind, s.chunk) for s in group] == [("forward", 1), ("backward", 1),
                                                      ("weight", 1)]
    _check_order(slots, p, m, 2)


def test_source_deepseek_v3_table2_activation_column() -> None:
    """DeepSeek-AI 2024, DeepSeek-V3 report, Table 2 (and deepseek-ai/DualPipe
    README.md, "Pipeline Bubbles and Memory Usage Comparison"): activation 1F1B "PP",
    ZB1P "PP", DualPipe "PP+1"; parameters 1x, 1x, 2x. The simulated 1F1B and ZB-H1
    hold PP micro-batches on their first stage."""
    assert [pipeline.pipeline_peak_activations(s, 16) for s in ("1f1b", "zb-h1", "dualpipe")] \
        == [16, 16, 17]
    for kind in ("1f1b", "zb-h1"):
        slots = pipeline.pipeline_schedule(16, 32, schedule=kind)
        assert _in_flight(slots, 0) == 16
    with pytest.raises(ValueError, match="stages must be even for DualPipe, got 15"):
        pipeline.pipeline_peak_activations("dualpipe", 15)


@given(p=st.integers(1, 8), extra=st.integers(0, 10), kind=st.sampled_from(["zb-h1", "zb-h2"]),
       f=st.floats(0.5, 2.0), b_in=st.floats(0.5, 2.0), w_share=st.floats(0.05, 1.0))
def test_zb_h1_and_h2_simulated_span_is_the_closed_form(p: int, extra: int, kind: str,
                                                        f: float, b_in: float,
                                                        w_share: float) -> None:
    """Whatever the pass times, as long as the weight-gradient pass is no longer than the
    forward and the input-gradient passes, and m >= p (ZB-H1) or m >= 2p - 1 (ZB-H2,
    the warm-up's forward passes), the longest stage span of the simulated schedule is
    m(F + B) + :func:`pipeline_bubble_time`, B the full backward: Qi et al.'s Table 2,
    (p-1)(T_F + T_B - T_W) and (p-1)(T_F + T_B - 2T_W) with T_B the input gradient alone.
    For ZB-H1 that span is the makespan."""
    m = (p if kind == "zb-h1" else 2 * p - 1) + extra
    w = min(f, b_in) * w_share
    slots = pipeline.pipeline_schedule(p, m, schedule=kind, forward_time=f,
                                       backward_time=b_in + w, weight_time=w)
    bubble = pipeline.pipeline_bubble_time(kind, p, forward_time=f,
                                           backward_time=b_in + w, weight_time=w)
    assert pipeline.pipeline_stage_span(slots) == pytest.approx(m * (f + b_in + w) + bubble)
    held = 1 if kind == "zb-h1" else 2
    assert bubble == pytest.approx((p - 1) * (f + b_in - held * w))
    if kind == "zb-h1":
        assert pipeline.pipeline_makespan(slots) == pytest.approx(m * (f + b_in + w) + bubble)
    _check_order(slots, p, m, 1)


@given(p=st.integers(1, 8), m=st.integers(1, 24), f=st.floats(0.5, 2.0),
       b_in=st.floats(0.5, 2.0), w=st.floats(0.1, 2.0))
def test_zb_v_order_is_valid_for_any_size_and_times(p: int, m: int, f: float, b_in: float,
                                                    w: float) -> None:
    """Few micro-batches or unequal passes: ZB-V still runs every pass once, in
    dependency order, one at a time per device, within 2p chunks per device; with unit
    passes and m >= 2p - 1 no stage idles."""
    slots = pipeline.pipeline_schedule(p, m, schedule="zb-v", forward_time=f,
                                       backward_time=b_in + w, weight_time=w)
    _check_order(slots, p, m, 2)
    assert max(_in_flight(slots, s) for s in range(p)) <= p
    unit = pipeline.pipeline_schedule(p, m, schedule="zb-v")
    idle = pipeline.pipeline_stage_span(unit) - 3.0 * m
    assert idle == pytest.approx(0.0) if m >= 2 * p - 1 else idle > 0


@given(p=st.integers(1, 6), m=st.integers(1, 16),
       kind=st.sampled_from(["gpipe", "1f1b", "zb-h1"]))
def test_stage_span_is_the_makespan_when_the_first_stage_runs_first_and_last(
        p: int, m: int, kind: str) -> None:
    slots = pipeline.pipeline_schedule(p, m, schedule=kind)
    assert pipeline.pipeline_stage_span(slots) == pytest.approx(
        pipeline.pipeline_makespan(slots))


@pytest.mark.parametrize("p", [3, 4, 6])
def test_zero_bubble_needs_2p_minus_1_microbatches_and_the_sync_gone(p: int) -> None:
    """The first stage must start 2p - 1 forward passes before the first input gradient
    comes back; each one missing (p <= m < 2p - 1) is a forward pass of idle time: ZB-H2
    idles 2p - 1 - m units with unit passes, ZB-V, whose chunks take half a unit, half
    that. And the makespan, which waits for the last stage, is p - 1 forward passes
    longer than a stage's span: zero bubble needs the stages to start the next step one
    by one."""
    for m in range(p, 2 * p - 1):
        h2 = pipeline.pipeline_schedule(p, m, schedule="zb-h2")
        zv = pipeline.pipeline_schedule(p, m, schedule="zb-v")
        assert pipeline.pipeline_stage_span(h2) - 3 * m == pytest.approx(2 * p - 1 - m)
        assert pipeline.pipeline_stage_span(zv) - 3 * m == pytest.approx((2 * p - 1 - m) / 2)
    full = pipeline.pipeline_schedule(p, 2 * p, schedule="zb-h2")
    assert pipeline.pipeline_makespan(full) - pipeline.pipeline_stage_span(full) \
        == pytest.approx(p - 1)


def test_zero_bubble_closed_forms_refuse_what_they_do_not_cover(monkeypatch) -> None:
    with pytest.raises(ValueError, match="ZB-H2's closed form, got 1.5"):
        pipeline.pipeline_bubble_time("zb-h2", 4, forward_time=1.0, backward_time=2.5,
                                      weight_time=1.5)
    with pytest.raises(ValueError, match=r"ZB-V's bubble is published for equal passes "
                                         r"only .* got forward_time=1, backward_time=2.4"):
        pipeline.pipeline_bubble_time("zb-v", 4, backward_time=2.4)
    with pytest.raises(ValueError, match="interleave must be 1 for schedule 'zb-v'"):
        pipeline.pipeline_schedule(4, 8, schedule="zb-v", interleave=2)
    monkeypatch.setattr(pipeline, "MAX_PIPELINE_SLOTS", 600)  # ZB-V: 6 passes per (s, m)
    assert len(pipeline.pipeline_schedule(4, 25, schedule="zb-v")) == 600
    with pytest.raises(ValueError, match="at most 100 "):
        pipeline.pipeline_schedule(4, 26, schedule="zb-v")
    with pytest.raises(ValueError, match="at most 200 "):
        pipeline.pipeline_schedule(4, 51, schedule="zb-h2")
    with pytest.raises(TypeError, match="slots must be a list of PipelineSlot"):
        pipeline.pipeline_stage_span("abc")  # type: ignore[arg-type]
    slots = pipeline.pipeline_schedule(4, 8, schedule="1f1b")
    for stage in (4, -1, 1.0, True):
        with pytest.raises(ValueError, match=r"stage must be a whole number from 0 to 3"):
            pipeline.pipeline_stage_activations(slots, stage)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="slots must be a list of PipelineSlot"):
        pipeline.pipeline_stage_activations("abc", 0)  # type: ignore[arg-type]
