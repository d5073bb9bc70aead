"""Common mistakes of GPU arithmetic, ready to declare on an exercise.

Each factory takes a function of the exercise's inputs that returns the answer a learner
*making that mistake* would give (computed with the calculators, with the mistake put in
on purpose) and returns a :class:`~gpulesson.exercises.core.Mistake` with a hint that
names the mistake and the convention it breaks (see ``book/conventions.md``). Pass
``hint=`` to say it in a lesson's own words.

Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from gpulesson.exercises.core import Mistake, Text

__all__ = [
    "counted_macs",
    "forgot_training_state",
    "gib_as_gb",
    "hidden_instead_of_kv",
    "inverted_ratio",
    "used_sparse_peak",
]

Value = Callable[[Mapping[str, Any]], Any]
Factory = Callable[..., Mistake]


def _common_mistake(key: str, summary: str, default_hint: str) -> Factory:
    """The factory of the common mistake ``key`` (also its name):
    ``factory(value, *, hint=None)`` declares it with ``default_hint``, or with a lesson's
    own ``hint``. ``summary`` is its docstring."""

    def factory(value: Value, *, hint: Text | None = None) -> Mistake:
        return Mistake(key, hint or default_hint, value)

    factory.__name__ = factory.__qualname__ = key
    factory.__doc__ = summary
    return factory


counted_macs = _common_mistake(
    "counted_macs",
    "Counted multiply-accumulates (MACs) or forgot the factor 2: half the FLOPs.",
    "That is half the answer: you counted multiply-adds (MACs) or forgot the factor 2. Each "
    "multiply-add is 2 FLOPs, so a matrix product costs 2·M·K·N FLOPs. Tools such as fvcore "
    "report MACs and call them “flops”.")

gib_as_gb = _common_mistake(
    "gib_as_gb", "Divided by 2^30 (GiB) but wrote GB, so the number is about 7% too small.",
    "Your number is about 7% low: it looks like GiB (2^30 bytes) written as GB (10^9 bytes). "
    "The question asks for GB; type the unit you used (for example '13.04 GiB') or convert: "
    "1 GiB = 1.0737 GB.")

hidden_instead_of_kv = _common_mistake(
    "hidden_instead_of_kv",
    "Used the hidden size where the KV cache needs KV heads × head dimension (GQA/MQA).",
    "It looks like you used the hidden size. The KV cache stores keys and values for the KV "
    "heads only: use n_kv_heads × head_dim, which is smaller than the hidden size for "
    "grouped-query attention.")

forgot_training_state = _common_mistake(
    "forgot_training_state", "Counted the weights only, forgetting gradients and optimizer states.",
    "That is the weights alone. Training also keeps gradients and the optimizer's states: "
    "mixed-precision Adam needs 16 bytes per parameter (2 weights + 2 gradients + 4 master "
    "weights + 4 + 4 for Adam's two moments).")

used_sparse_peak = _common_mistake(
    "used_sparse_peak", "Used the 2:4-sparse tensor-core peak (twice the dense one).",
    "That uses the sparse peak: datasheets often headline the 2:4-sparsity figure, twice the "
    "dense one. Dense matrix products only reach the dense peak.")


def inverted_ratio(value: Value, *, hint: Text) -> Mistake:
    """Divided the wrong way round (seconds per token instead of tokens per second ...)."""
    return Mistake("inverted_ratio", hint, value)
