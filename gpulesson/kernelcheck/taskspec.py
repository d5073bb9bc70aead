"""A kernel task's specification (:class:`KernelTask`) and the helpers that build its
arguments: what :mod:`gpulesson.kernelcheck.catalogue` declares and
:func:`gpulesson.kernelcheck.tasks.check_kernel` runs. Standard library only."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from gpulesson.kernelcheck.arrays import DeviceArray, from_values
from gpulesson.kernelcheck.findings import PERFORMANCE_KINDS

__all__ = ["KernelTask", "blocks", "floats", "ints", "nan"]


@dataclass(frozen=True)
class KernelTask:
    """A kernel to write: its parameters, shapes, launch and expected result.

    Attributes
    ----------
    name:
        the function name the learner defines, e.g. ``"vector_add"``.
    title:
        what it computes, in a few words.
    signature:
        parameter names, in order.
    inputs, outputs:
        the array parameters only read, and those compared with the expected result.
    shapes:
        ``(label, sizes)`` pairs: the label names the shape for a reader ("n = 100, the
        last block ragged"); the first shape fills whole blocks (the traffic is counted on
        it).
    arguments:
        ``arguments(sizes, rng) -> {name: DeviceArray or scalar}`` (``rng``: a
        ``random.Random``).
    launch:
        ``launch(sizes) -> (grid, block)``.
    expected:
        ``expected(arguments) -> {output name: flat list of values, C order}``.
    fills_outputs:
        every element of the outputs must be written (``False`` for an accumulator).
    launch_text:
        how the kernel is launched, for a reader.
    performance:
        the performance kinds (:data:`PERFORMANCE_KINDS`) that fail the check; the others
        are reported as notes.
    predicted_bytes:
        ``predicted_bytes(sizes)``: the global traffic of a coalesced kernel on a shape
        (each input read once, each output written once), or ``None``.
    rtol, atol:
        the tolerance of the comparison (exact for integer-valued results).
    registers:
        registers per thread assumed for the occupancy.
    """

    name: str
    title: str
    signature: tuple[str, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    shapes: tuple[tuple[str, Mapping[str, int]], ...]
    arguments: Callable[[Mapping[str, int], Any], dict[str, Any]]
    launch: Callable[[Mapping[str, int]], tuple[Any, Any]]
    expected: Callable[[Mapping[str, Any]], dict[str, list[float]]]
    fills_outputs: bool = True
    launch_text: str = ""
    performance: tuple[str, ...] = ()
    predicted_bytes: Callable[[Mapping[str, int]], int] | None = None
    rtol: float = 1e-5
    atol: float = 1e-6
    registers: int = 32

    def __post_init__(self) -> None:
        unknown = set(self.performance) - set(PERFORMANCE_KINDS)
        if unknown:
            raise ValueError(f"performance must hold kinds of {PERFORMANCE_KINDS}, got "
                             f"{sorted(unknown)}")


def blocks(n: int, per_block: int) -> int:
    """Blocks of ``per_block`` threads that cover ``n`` elements: ⌈n / per_block⌉."""
    return -(-n // per_block)


def ints(rng: random.Random, shape: Any, low: int = -8, high: int = 8,
         dtype: str = "float32") -> DeviceArray:
    """Small integers (exact in any order of addition), as ``dtype``."""
    dims = shape if isinstance(shape, tuple) else (shape,)
    return from_values([rng.randint(low, high) for _ in range(math.prod(dims))], dims, dtype)


def floats(rng: random.Random, shape: Any, low: float = -2.0, high: float = 2.0
           ) -> DeviceArray:
    """Uniform float32 values."""
    dims = shape if isinstance(shape, tuple) else (shape,)
    return from_values([rng.uniform(low, high) for _ in range(math.prod(dims))], dims)


def nan(shape: Any) -> DeviceArray:
    """A float32 output that starts as NaN (an element never written stays NaN)."""
    return DeviceArray.full(shape, math.nan, "float32")
