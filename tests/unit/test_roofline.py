"""gpulesson.roofline: the ridge point, Amdahl's law and rounds of parallel work.

The rule that rates are finite positive numbers is checked in ``test_validate.py``.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpulesson import roofline
from gpulesson.hardware import gpu

# ---------------------------------------------------------------------------------------
# Published figures


def test_source_h100_ridge_point() -> None:
    """H100 SXM datasheet figures (989.4 TFLOP/s dense BF16, 3.35 TB/s): the roofline
    bends at about 295 FLOP/byte (the seed lesson's 'roughly 300 FLOPs per byte')."""
    spec = gpu("H100 SXM")
    assert roofline.ridge_point(spec.peak_flops["bf16"], spec.bandwidth) == pytest.approx(
        295.3, abs=0.05)


# ---------------------------------------------------------------------------------------
# Validation


def test_amdahl_serial_fraction_range() -> None:
    with pytest.raises(ValueError, match=r"serial_fraction must be a number in \[0, 1\]"):
        roofline.amdahl_speedup(1.2, 8)
    with pytest.raises(ValueError, match="workers"):
        roofline.amdahl_speedup(0.1, 0.5)


# ---------------------------------------------------------------------------------------
# Properties


@given(s=st.floats(0, 1), n=st.floats(1, 1e9))
def test_amdahl_bounded(s: float, n: float) -> None:
    speedup = roofline.amdahl_speedup(s, n)
    assert 1 - 1e-12 <= speedup <= n * (1 + 1e-12)
    if s > 0:
        assert speedup <= 1 / s * (1 + 1e-12)


@given(cells=st.integers(1, 10**9), workers=st.integers(1, 10**6))
def test_parallel_rounds_is_the_smallest_count_that_covers_the_cells(cells: int,
                                                                     workers: int) -> None:
    """r rounds of w workers cover r * w cells; one round fewer does not."""
    r = roofline.parallel_rounds(cells, workers)
    assert r * workers >= cells > (r - 1) * workers
    occupancy = roofline.parallel_occupancy(cells, workers)
    assert 0 < occupancy <= 1 and (occupancy == 1) == (cells % workers == 0)


# ---------------------------------------------------------------------------------------
# Behaviour


def test_parallel_rounds_of_the_lessons_layer() -> None:
    """Lesson 1: a batch of 32 through a 4,096-wide layer is 131,072 output cells, 16,384
    rounds on 8 cores and 32 on 4,096 lanes; 4,097 cells on 4,096 lanes take 2 rounds with
    the lanes busy 4,097 / 8,192 = 50.01 % of the time; exact beyond 2^53."""
    assert roofline.parallel_rounds(32 * 4096, 8) == 16_384
    assert roofline.parallel_rounds(32 * 4096, 4096) == 32
    assert roofline.parallel_rounds(4097, 4096) == 2
    assert roofline.parallel_occupancy(4097, 4096) == 4097 / 8192
    assert roofline.parallel_rounds(2**60 + 1, 2) == 2**59 + 1
    for bad in (0, -1, 1.5, True):
        with pytest.raises((ValueError, TypeError), match="cells"):
            roofline.parallel_rounds(bad, 8)  # type: ignore[arg-type]
