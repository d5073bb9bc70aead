"""What limits a training run: memory, communication or compute.

A plan answers a composite question (will this run fit, how long will it take, what holds
it back) by combining figures that the formula modules compute: memory per GPU from
:mod:`gpulesson.distributed`, step times from :mod:`gpulesson.flops`, the synchronisation
time and the scaling efficiency from :mod:`gpulesson.distributed`. This module adds only
the rules that read those figures, so every number of a plan can be traced to one
formula.

Taught in: ``planning_dashboard`` (the planning calculator of
:mod:`gpulesson.calculators`).

Standard library only: this module runs in the browser (Pyodide).
"""

from __future__ import annotations

from gpulesson import _validate as v

__all__ = ["COMMUNICATION_BOUND_BELOW", "bottleneck"]

#: Scaling efficiency under which communication, not compute, sets the pace.
COMMUNICATION_BOUND_BELOW = 0.5


def bottleneck(*, fits: bool, efficiency: float, layout_set: bool = False) -> str:
    """What limits a training run, in words: memory, communication or compute.

    The rule, in order:

    1. **memory** when the model state and activations do not fit on the GPUs
       (``fits`` is false): nothing else matters until they do;
    2. **communication** when the scaling efficiency is below one half. With
       ``efficiency = compute / (compute + exposed communication)``
       (:func:`gpulesson.distributed.scaling_efficiency`), ``efficiency < 1/2`` means
       that the waiting left exposed each step (any dimension's traffic, the pipeline
       bubble) takes longer than the compute; :attr:`gpulesson.planning.TrainingPlan.
       bottleneck` adds which part of the wait is largest;
    3. **compute** otherwise: the GPUs' arithmetic sets the pace.

    Parameters
    ----------
    fits:
        whether the layout fits in GPU memory (:func:`gpulesson.memory.fits`, or the
        ``fits`` of :func:`gpulesson.distributed.recommend_layout`).
    efficiency:
        the scaling efficiency of one step, in (0, 1].
    layout_set:
        ``True`` when the reader chose the layout, ``False`` when the advisor searched
        every layout (which changes what "does not fit" means).

    Returns
    -------
    str
        ``"memory: ..."``, ``"communication: ..."`` or ``"compute: ..."``, with the reason.

    Raises
    ------
    TypeError
        when ``fits`` or ``layout_set`` is not a ``bool``.
    ValueError
        when ``efficiency`` is not in (0, 1].
    """
    fits = v.boolean("fits", fits)
    layout_set = v.boolean("layout_set", layout_set)
    efficiency = v.fraction("efficiency", efficiency, allow_zero=False)
    if not fits:
        return ("memory: this layout does not fit on these GPUs" if layout_set
                else "memory: no layout fits on these GPUs")
    if efficiency < COMMUNICATION_BOUND_BELOW:
        return ("communication: the GPUs wait (exposed traffic, pipeline bubble) longer than "
                "they compute")
    return "compute: the GPUs' arithmetic sets the pace"


v.guard_module(globals())
