"""Exercise definitions, one module per lesson: ``bank/<lesson_slug>.py``.

A bank module defines ``LESSON`` (the slug), ``TITLE`` (the lesson's title) and
``EXERCISES`` (a tuple of exercises numbered 1, 2, ...). See the package docstring of
:mod:`gpulesson.exercises` for how to write one. Standard library and the calculator
modules only.
"""

#: Lesson slugs in course order (CONTRIBUTING.md); bank modules are listed in this order.
COURSE_ORDER = [
    "parallelism_at_the_core",
    "roofline_and_tensor_cores",
    "memory_what_fits",
    "flops_and_scaling",
    "inference_and_kv_cache",
    "distributed_math",
    "cost_economics",
    "optimisations",
    "planning_dashboard",
]
