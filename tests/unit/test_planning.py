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
        "communication: the GPUs wait (exposed traffic, pipeline bubble) longer than they " \
        "compute"
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


def test_a_communication_bound_plan_names_the_largest_wait():
    """Llama 2 7B on 16,384 H100s with 4M tokens a step (the lesson's sweep) waits longer
    than it computes, mostly in its pipeline bubble, more than in its gradient
    synchronisation: the verdict said "the gradient synchronisation outlasts the
    compute"."""
    plan = planning.plan_training("llama-2-7b", "H100 SXM", n_gpus=16_384, tokens=2e12,
                                  global_batch_tokens=4 * 2**20, seq_len=4096)
    b = plan.breakdown
    waits = ("bubble", "tensor", "context", "expert", "pipeline", "data", "offload")
    largest = max(waits, key=lambda k: b[k])
    assert plan.efficiency < 0.5 and largest != "data"
    text = plan.bottleneck
    assert text.startswith("communication: the GPUs wait")
    assert "gradient synchronisation" not in text
    assert {"bubble": "pipeline bubble (", "tensor": "tensor-parallel traffic ("}[
        largest] in text
