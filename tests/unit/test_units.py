"""gpulesson.units: counts stay exact, money reads as money."""

from __future__ import annotations

import pytest

from gpulesson import units


def test_integer_counts_are_exact_beyond_2_53() -> None:
    """2^60 + 1 = 1,152,921,504,606,846,977: a float keeps 53 bits and would print ...976."""
    assert units.format_quantity(2**60 + 1, "count") == "1,152,921,504,606,846,977"
    assert units.format_quantity(405_853_388_800, "count") == "405,853,388,800"
    assert units.format_quantity(12.0, "count") == "12"


@pytest.mark.parametrize(("amount", "text"), [(6_867.84, "$6,867.84"), (0.000289352, "$0.000289"),
                                              (1_550_309.76, "$1,550,310"),
                                              (5.576e6, "$5,576,000")])
def test_format_usd(amount: float, text: str) -> None:
    assert units.format_usd(amount) == text


@pytest.mark.parametrize(("amount", "digits", "text"),
                         [(6_867.84, 4, "$6,868"), (0.0017528, 4, "$0.001753"),
                          (2.5, 4, "$2.50"), (12.29, 4, "$12.29"), (12.0, 3, "$12"),
                          (1_550_309.76, 4, "$1,550,310"), (-3.14159, 3, "-$3.14")])
def test_format_usd_to_significant_digits(amount: float, digits: int, text: str) -> None:
    assert units.format_usd(amount, digits=digits) == text


def test_format_usd_refuses_bad_digits() -> None:
    with pytest.raises(ValueError, match="digits must be a positive integer"):
        units.format_usd(1.0, digits=0)


@pytest.mark.parametrize(("value", "digits", "text"),
                         [(1234.5, 3, "1,234"), (0.012345, 3, "0.0123"), (12, 3, "12"),
                          (12.0, 3, "12.0"), (2**60 + 1, 3, "1,152,921,504,606,846,977"),
                          (0, 3, "0"), (-3.14159, 3, "-3.14")])
def test_format_significant(value: float, digits: int, text: str) -> None:
    """One helper for significant figures (units, the registry's outputs)."""
    assert units.format_significant(value, digits) == text
