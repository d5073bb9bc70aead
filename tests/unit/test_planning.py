"""gpulesson.planning: the rule that names what limits a training run."""

from __future__ import annotations

import pytest

from gpulesson import distributed, planning


def test_memory_comes_first():
    """Nothing else matters until the run fits: even a perfectly efficient step."""
    assert planning.bottleneck(fits=False, efficiency=1.0) == \
        "memory: no layout fits on these GPUs"
    assert planning.bottleneck(fits=False, efficiency=0.1, layout_set=True) == \
        "memory: this layout does not fit on these GPUs"


def test_communication_when_the_exposed_communication_outlasts_the_compute():
    """efficiency = compute / (compute + exposed) < 1/2 exactly when exposed > compute
    (gpulesson.distributed.scaling_efficiency): 1.0 s of compute against 1.1 s of
    unhidden communication is communication-bound, against 0.9 s it is compute-bound, and
    equal times are not yet communication-bound."""
    for comm, verdict in ((1.1, "communication"), (0.9, "compute"), (1.0, "compute")):
        efficiency = distributed.scaling_efficiency(1.0, comm)
        text = planning.bottleneck(fits=True, efficiency=efficiency)
        assert text.split(":")[0] == verdict, (comm, efficiency)
    assert planning.bottleneck(fits=True, efficiency=0.49) == \
        "communication: the gradient synchronisation outlasts the compute"
    assert planning.bottleneck(fits=True, efficiency=0.96) == \
        "compute: the GPUs' arithmetic sets the pace"


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"fits": 1, "efficiency": 0.5}, TypeError, "fits must be True or False, got 1"),
    ({"fits": True, "efficiency": 0.5, "layout_set": "yes"}, TypeError, "layout_set must be"),
    ({"fits": True, "efficiency": 0.0}, ValueError, r"efficiency must be a number in \(0, 1\]"),
    ({"fits": True, "efficiency": 1.5}, ValueError, "efficiency must be .*, got 1.5"),
    ({"fits": True, "efficiency": float("nan")}, ValueError, "efficiency must be"),
])
def test_bad_arguments_are_named(kwargs, error, message):
    with pytest.raises(error, match=message):
        planning.bottleneck(**kwargs)
