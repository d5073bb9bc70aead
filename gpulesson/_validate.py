"""Argument checks shared by every calculator module (standard library only).

One place for the checks that the contract (``shared/design/api.md``) asks of every
function: bad input raises an error whose message names the argument, the value and
what is allowed, for example ``ValueError: layers must be a positive integer, got 0``.

* ``bool`` is never accepted as a number (``True`` is not ``1`` here).
* NaN and infinities are refused.
* An integer argument (a count such as ``layers``) must be an ``int`` (or a NumPy
  integer); ``32.0`` is refused with a ``TypeError`` so that counts stay exact.
* A name looked up in a table (precision, preset, GPU, collective, recompute mode)
  that is unknown raises :class:`UnknownNameError`, which is both a ``KeyError`` and a
  ``ValueError`` and lists the known names.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from typing import TypeVar

__all__ = [
    "UnknownNameError",
    "boolean",
    "choice",
    "fraction",
    "lookup",
    "nonneg_int",
    "nonneg_number",
    "number_at_least",
    "positive_int",
    "positive_number",
    "tensor_bytes",
]

T = TypeVar("T")


class UnknownNameError(KeyError, ValueError):
    """An unknown name (preset, GPU, precision, collective ...): lists the known ones.

    It derives from both ``KeyError`` (a failed lookup) and ``ValueError`` (a bad
    argument value), so either ``except`` clause catches it.
    """

    def __str__(self) -> str:  # KeyError would print the message in quotes
        return str(self.args[0]) if self.args else ""


def _type_name(value: object) -> str:
    return type(value).__name__


def _is_real(value: object) -> bool:
    if type(value) is int or type(value) is float:  # fast path for the common case
        return True
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and not (
        type(value).__name__ == "bool_"
    )


def _is_int(value: object) -> bool:
    if type(value) is int:  # fast path for the common case
        return True
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and not (
        type(value).__name__ == "bool_"
    )


def positive_int(name: str, value: object) -> int:
    """Return ``value`` as an ``int`` if it is an integer >= 1, else raise."""
    if type(value) is int and value >= 1:  # fast path
        return value
    if not _is_int(value):
        raise TypeError(
            f"{name} must be a positive integer, got {value!r} ({_type_name(value)})"
        )
    result = int(value)  # type: ignore[call-overload]
    if result < 1:
        raise ValueError(f"{name} must be a positive integer, got {result}")
    return result


def nonneg_int(name: str, value: object) -> int:
    """Return ``value`` as an ``int`` if it is an integer >= 0, else raise."""
    if not _is_int(value):
        raise TypeError(
            f"{name} must be a non-negative integer, got {value!r} ({_type_name(value)})"
        )
    result = int(value)  # type: ignore[call-overload]
    if result < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {result}")
    return result


def _finite(name: str, value: object, what: str) -> int | float:
    if type(value) is float and value - value == 0.0:  # finite float fast path
        return value
    if type(value) is int:
        return value
    if not _is_real(value):
        raise TypeError(f"{name} must be {what}, got {value!r} ({_type_name(value)})")
    if _is_int(value):
        return int(value)  # type: ignore[call-overload]
    result = float(value)  # type: ignore[arg-type]
    if not math.isfinite(result):
        raise ValueError(f"{name} must be {what}, got {result!r}")
    return result


def positive_number(name: str, value: object) -> int | float:
    """Return a finite number > 0 (ints stay ints), else raise."""
    result = _finite(name, value, "a finite positive number")
    if result <= 0:
        raise ValueError(f"{name} must be a finite positive number, got {result!r}")
    return result


def nonneg_number(name: str, value: object) -> int | float:
    """Return a finite number >= 0 (ints stay ints), else raise."""
    result = _finite(name, value, "a finite non-negative number")
    if result < 0:
        raise ValueError(f"{name} must be a finite non-negative number, got {result!r}")
    return result


def number_at_least(name: str, value: object, low: float) -> int | float:
    """Return a finite number >= ``low``, else raise."""
    result = _finite(name, value, f"a finite number >= {low:g}")
    if result < low:
        raise ValueError(f"{name} must be a finite number >= {low:g}, got {result!r}")
    return result


def fraction(
    name: str,
    value: object,
    *,
    allow_zero: bool = True,
    allow_one: bool = True,
) -> float:
    """Return a number in [0, 1] (ends included or not as asked), else raise."""
    low = "[" if allow_zero else "("
    high = "]" if allow_one else ")"
    what = f"a number in {low}0, 1{high}"
    result = float(_finite(name, value, what))
    if result < 0 or result > 1 or (result == 0 and not allow_zero) or (
        result == 1 and not allow_one
    ):
        raise ValueError(f"{name} must be {what}, got {result!r}")
    return result


def boolean(name: str, value: object) -> bool:
    """Return ``value`` if it is a ``bool``, else raise ``TypeError``."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r} ({_type_name(value)})")
    return value


def _normalise(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch not in " -_.")


def choice(name: str, value: object, choices: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``choices`` (exact strings), else raise."""
    options = list(choices)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {options}, got {value!r} ({_type_name(value)})")
    if value not in options:
        raise UnknownNameError(f"{name} must be one of {options}, got {value!r}")
    return value


_INDEXES: dict[tuple[int, int], tuple[object, object, dict[str, str]]] = {}


def _index(table: Mapping[str, object], aliases: Mapping[str, str] | None) -> dict[str, str]:
    """Normalised spelling -> canonical key, built once per (table, aliases) pair."""
    cache_key = (id(table), id(aliases))
    hit = _INDEXES.get(cache_key)
    if hit is not None and hit[0] is table and hit[1] is aliases:
        return hit[2]
    index = {_normalise(key): key for key in table}
    for alias, target in (aliases or {}).items():
        index.setdefault(_normalise(alias), target)
    _INDEXES[cache_key] = (table, aliases, index)  # keeps both alive: ids stay unique
    return index


def lookup(
    name: str,
    value: object,
    table: Mapping[str, T],
    aliases: Mapping[str, str] | None = None,
) -> tuple[str, T]:
    """Look ``value`` up in ``table`` ignoring case, spaces, '-', '_' and '.'.

    Returns ``(canonical_name, entry)``. ``aliases`` maps extra spellings to canonical
    names. An unknown name raises :class:`UnknownNameError` listing the known names.
    """
    if not isinstance(value, str):
        raise TypeError(
            f"{name} must be a name (str), got {value!r} ({_type_name(value)}); "
            f"known: {', '.join(table)}"
        )
    index = _index(table, aliases)
    key = index.get(value)
    if key is None:
        key = index.get(_normalise(value))
    if key is None:
        raise UnknownNameError(
            f"unknown {name} {value!r}; known {name}s: {', '.join(table)}"
        )
    return key, table[key]


def tensor_bytes(elements: int, bytes_per_element: int | float) -> int:
    """Exact byte count of ``elements`` values of ``bytes_per_element`` bytes each.

    Integers stay exact; a fractional size (``0.5`` byte for int4) is multiplied exactly
    (as a binary fraction) and rounded up to whole bytes, the way packed storage pads.
    """
    if isinstance(bytes_per_element, int):
        return elements * bytes_per_element
    numerator, denominator = float(bytes_per_element).as_integer_ratio()
    return -((-elements * numerator) // denominator)
