"""Plans you can trust: training and serving plans built only from the course's formulas.

* :func:`plan_training` -> :class:`TrainingPlan`: memory per GPU, step time and its
  breakdown (compute at the products' real shapes, recompute, memory-bound kernels, the
  optimizer step, kernel gaps, offload, bubble, and the exposed communication of every
  parallel dimension on the link it crosses), the predicted MFU, days, GPU-hours and
  cost, for a :class:`Layout` or the fastest layout that fits (``layout="auto"``); every
  term's factor fitted on the published runs (:mod:`~gpulesson.planning.calibration`).
* :func:`plan_serving` -> :class:`ServingPlan`: the KV cache vLLM would allocate, its
  maximum concurrency, time to first token, time per output token, throughput, replicas
  and the cost per million tokens; with a traffic and SLOs, the tp, batch and replicas that
  meet them; for MoE models, data-parallel attention engines and expert parallelism
  (:mod:`~gpulesson.planning.moe_serving`).
* :func:`reconcile_vllm_log`, :func:`reconcile_nccl_tests`: read a real log and set each
  figure beside the prediction, term by term.
* :func:`bottleneck`: the plain rule that names what limits a run (memory first, then
  communication when the exposed communication outlasts the compute, else compute).
* :data:`PUBLISHED_RUNS` and :func:`published_comparison`: predicted MFU against 42
  published runs (``gpulesson/data/training_runs.json``);
  :func:`~gpulesson.planning.published.leave_one_out` predicts each with the factors
  fitted without it; :func:`~gpulesson.planning.bands.uncertainty` gives a plan its band
  from those errors and the held-out releases' (:mod:`~gpulesson.planning.heldout`), and
  :func:`~gpulesson.planning.bands.mfu_range` the MFU range it implies.

A plan that cannot run is not an error: ``feasible`` is ``False`` and ``problems`` name the
input at fault and a fix. Bad arguments (zero GPUs, a layout whose product is not
``n_gpus``, a negative bandwidth, a log in an unknown format) raise ``ValueError`` naming
the argument; so does a hybrid model with linear-attention layers (Qwen3-Next), whose
state pages vLLM sizes in a way the serving planners do not model
(:mod:`~gpulesson.planning.hybrid`). Standard library only: the site runs the planners in
the browser.

Taught in: ``notebooks/planning_dashboard.ipynb`` (and the logs in
``notebooks/distributed_math.ipynb``).
"""

from __future__ import annotations

from ._adapt import MATMUL_EFFICIENCY, GPUView, ModelView, gpu_view, model_view
from .layout import Layout
from .logs import reconcile_nccl_tests, reconcile_vllm_log
from .published import PUBLISHED_RUNS, published_comparison
from .rules import COMMUNICATION_BOUND_BELOW, bottleneck
from .serving import ServingPlan, kv_budget, plan_serving, serving_matmul_dtype
from .training import MEMORY_RESERVE, TrainingPlan, plan_training

__all__ = [
    "COMMUNICATION_BOUND_BELOW",
    "MATMUL_EFFICIENCY",
    "MEMORY_RESERVE",
    "PUBLISHED_RUNS",
    "GPUView",
    "Layout",
    "ModelView",
    "ServingPlan",
    "TrainingPlan",
    "bottleneck",
    "gpu_view",
    "kv_budget",
    "model_view",
    "plan_serving",
    "serving_matmul_dtype",
    "plan_training",
    "published_comparison",
    "reconcile_nccl_tests",
    "reconcile_vllm_log",
]
