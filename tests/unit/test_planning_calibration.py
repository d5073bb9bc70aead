"""The model's factors fitted on the published runs, tested leave-one-out
(gpulesson.planning.calibration)."""

from __future__ import annotations

import statistics

import pytest

from gpulesson.planning import calibration as cal
from gpulesson.planning import published
from gpulesson.planning.published import PUBLISHED_RUNS, plan_run
from gpulesson.planning.training import default_factors

LOO = published.leave_one_out()


def test_every_published_run_is_predicted_without_itself() -> None:
    assert [r.name for r in LOO] == [r.name for r in PUBLISHED_RUNS]
    assert len(LOO) >= 30


def test_a_run_left_out_by_name_is_predicted_as_its_row() -> None:
    """fitted_without(name) are the factors that run's leave-one-out row was predicted with
    (lesson 10 holds other releases of a job against them)."""
    for i in (0, len(PUBLISHED_RUNS) - 1):
        run = PUBLISHED_RUNS[i]
        factors = published.fitted_without(run.name)
        assert plan_run(run, factors=factors).mfu == pytest.approx(LOO[i].predicted_mfu,
                                                                   rel=1e-12)
    with pytest.raises(ValueError, match="name must be a published run's"):
        published.fitted_without("no such run")


def test_leave_one_out_errors_today() -> None:
    """What the model achieves on runs it was not fitted to (the issue's target is a
    median of 10 % with every run within 25 %; the lesson shows the misses and why)."""
    s = published.summary(LOO)
    assert s["median"] <= 0.10
    assert s["within_25"] >= 37 / 41 - 1e-9
    assert s["infeasible"] == 0


def test_fitting_beats_the_sourced_constants_alone() -> None:
    """The same model with only the sourced figures (the prior) misses by more."""
    prior = [abs(plan_run(r, factors=cal.PRIOR).mfu / r.published_mfu - 1)
             for r in PUBLISHED_RUNS]
    assert statistics.median(abs(r.error) for r in LOO) < statistics.median(prior)


def test_a_run_left_out_changes_the_fit() -> None:
    """Leave-one-out refits: without the only torchao Float8 run (H200), its factor falls
    back to the prior (torchao's own measurement), and the others move with it."""
    h200 = next(i for i, r in enumerate(PUBLISHED_RUNS) if r.gpu == "H200")
    without = cal.fit(PUBLISHED_RUNS[:h200] + PUBLISHED_RUNS[h200 + 1:], plan_run)
    assert without["gemm:Hopper:fp8-tensorwise"] == pytest.approx(1.0)
    assert default_factors()["gemm:Hopper:fp8-tensorwise"] != pytest.approx(1.0, rel=1e-3)
    assert without["memory"] != pytest.approx(default_factors()["memory"], rel=1e-6)


def test_fit_is_linear_in_its_factors() -> None:
    """A plan's step time is its terms' coefficients times the factors plus fixed time."""
    f = default_factors()
    plan = plan_run(PUBLISHED_RUNS[0], factors=f)
    assert sum(c * f[k] for k, c in plan.terms.items()) + plan.fixed_time == pytest.approx(
        plan.step_time, rel=1e-9)


@pytest.mark.parametrize("i", [0, 11, 16, 26, 30])
def test_holding_the_exposed_communication_changes_little(i: int) -> None:
    """Leave-one-out holds the other runs' exposed communication where the full fit put it;
    planning them again without the run (a second iteration) moves its error by less than
    half a point."""
    rows = cal.rows(PUBLISHED_RUNS, default_factors(), plan_run)
    run = PUBLISHED_RUNS[i]
    one, two = (plan_run(run, factors=published._fit_without(i, iterations=k, at_full=rows))
                for k in (1, 2))
    assert one.mfu / run.published_mfu == pytest.approx(two.mfu / run.published_mfu, abs=0.005)


def test_no_fitted_factor_runs_faster_than_the_hardware() -> None:
    """A factor scales a term's time at its sourced rate: a product factor below the
    sourced efficiency would run it faster than the peak (1,350 of 1,979 FP8 TFLOP/s on
    an H100: no factor under 0.682), a memory factor under 1 faster than the HBM. Without
    these bounds the fit sped up Hopper's FP8 products past the peak (0.63) and paid for
    it with slower memory-bound kernels."""
    from gpulesson.planning import perf_model

    assert cal.lower_bound("gemm:Hopper:fp8") == pytest.approx(1350 / 1979)
    assert cal.lower_bound("gemm:Hopper:fp8-block") == cal.lower_bound("gemm:Hopper:fp8")
    assert cal.lower_bound("memory") == 1.0
    assert cal.lower_bound("attention:Hopper") == perf_model.attention_efficiency(
        128, 1 << 20, "Hopper")
    for fitted in (default_factors(), cal.fit(PUBLISHED_RUNS[1:], plan_run)):
        for name, value in fitted.items():
            assert value >= cal.lower_bound(name) - 1e-12, name
    assert default_factors()["gemm:Hopper:fp8"] == pytest.approx(1350 / 1979)
