"""Binary floating-point formats: what their bits give in range and precision.

A format has a sign bit, ``e`` exponent bits and ``m`` fraction bits. With IEEE 754's
layout (the all-ones exponent reserved for infinities and NaNs) every limit follows from
the two widths:

* exponent bias ``2**(e-1) - 1``;
* largest finite value ``(2 - 2**-m) * 2**bias``;
* smallest normal value ``2**(1 - bias)``, smallest subnormal ``2**(1 - bias - m)``;
* machine epsilon, the gap between 1 and the next number, ``2**-m``;
* about ``(m + 1) * log10(2)`` significant decimal digits.

FP8 E4M3 as the OCP specification defines it ("E4M3FN": no infinities, only
``S.1111.111`` is NaN) uses the top exponent for ordinary numbers, so its largest finite
value is ``(2 - 2**(1-m)) * 2**(bias + 1)`` = 448; E5M2 keeps IEEE's layout (57,344).

Sources: IEEE 754-2019 (binary64, binary32, binary16); Kalamkar et al. 2019 (BF16: FP32's
8 exponent bits, 7 fraction bits); NVIDIA A100 whitepaper 2020 (TF32: 8 and 10, computed
in Tensor Cores, stored as FP32); OCP 8-bit Floating Point Specification (OFP8) 1.0, 2023,
and Micikevicius et al. 2022, Table 1 (E4M3 and E5M2).

Rounding to zero: with round-to-nearest, ties to even, everything up to half the smallest
subnormal becomes 0 (:meth:`FloatFormat.rounds_to_zero`), the underflow that loss scaling
guards against in FP16 training.

Standard library only. Taught in: ``notebooks/roofline_and_tensor_cores.ipynb`` (the
format table) and ``notebooks/optimisations.ipynb`` (mixed precision, underflow).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from gpulesson import _validate as v

__all__ = ["FORMATS", "FloatFormat", "float_format"]


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format: sign, ``exponent_bits``, ``fraction_bits``.

    ``ieee_special=False`` marks a format that keeps no infinities and uses the all-ones
    exponent for numbers (OCP FP8 E4M3). ``storage_bits`` is what one value occupies in
    memory when it differs from ``1 + exponent_bits + fraction_bits`` (TF32: 32).
    """

    name: str
    exponent_bits: int
    fraction_bits: int
    ieee_special: bool = True
    storage_bits: int | None = None

    def __post_init__(self) -> None:
        v.positive_int("exponent_bits", self.exponent_bits)
        v.positive_int("fraction_bits", self.fraction_bits)
        if self.exponent_bits < 2:
            raise ValueError(f"exponent_bits must be at least 2, got {self.exponent_bits}")
        if self.storage_bits is not None:
            v.positive_int("storage_bits", self.storage_bits)

    @property
    def bits(self) -> int:
        """Sign + exponent + fraction bits."""
        return 1 + self.exponent_bits + self.fraction_bits

    @property
    def storage_bytes(self) -> float:
        """Bytes one value occupies in memory (TF32 lives in 4-byte FP32 storage)."""
        return (self.storage_bits or self.bits) / 8

    @property
    def bias(self) -> int:
        """Exponent bias ``2**(e-1) - 1``."""
        return 2 ** (self.exponent_bits - 1) - 1

    @property
    def largest(self) -> float:
        """Largest finite value: ``(2 - 2**-m) * 2**bias`` (IEEE layout), or
        ``(2 - 2**(1-m)) * 2**(bias+1)`` when the top exponent holds numbers (E4M3)."""
        m = self.fraction_bits
        if self.ieee_special:
            return math.ldexp(2 - math.ldexp(1, -m), self.bias)
        return math.ldexp(2 - math.ldexp(1, 1 - m), self.bias + 1)

    @property
    def smallest_normal(self) -> float:
        """Smallest positive normal value ``2**(1 - bias)``."""
        return math.ldexp(1, 1 - self.bias)

    @property
    def smallest_subnormal(self) -> float:
        """Smallest positive value ``2**(1 - bias - m)``."""
        return math.ldexp(1, 1 - self.bias - self.fraction_bits)

    @property
    def epsilon(self) -> float:
        """Gap between 1 and the next larger number, ``2**-m``."""
        return math.ldexp(1, -self.fraction_bits)

    @property
    def decimal_digits(self) -> float:
        """Significant decimal digits, ``(m + 1) * log10(2)``."""
        return (self.fraction_bits + 1) * math.log10(2)

    def rounds_to_zero(self, value: float) -> bool:
        """True when rounding ``value`` to this format (to nearest, ties to even) gives 0.

        Everything up to half the smallest subnormal rounds to zero (the tie at exactly
        half goes to the even neighbour, zero).
        """
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(
            value
        ):
            raise ValueError(f"value must be a finite number, got {value!r}")
        return abs(value) <= self.smallest_subnormal / 2


#: The formats of the course by key, widest first (read-only).
FORMATS: Mapping[str, FloatFormat] = MappingProxyType({
    "fp64": FloatFormat("FP64", 11, 52),
    "fp32": FloatFormat("FP32", 8, 23),
    "tf32": FloatFormat("TF32", 8, 10, storage_bits=32),
    "bf16": FloatFormat("BF16", 8, 7),
    "fp16": FloatFormat("FP16", 5, 10),
    "fp8_e5m2": FloatFormat("FP8 E5M2", 5, 2),
    "fp8_e4m3": FloatFormat("FP8 E4M3", 4, 3, ieee_special=False),
})

_ALIASES = {"float64": "fp64", "double": "fp64", "float32": "fp32", "single": "fp32",
            "float16": "fp16", "half": "fp16", "bfloat16": "bf16", "e5m2": "fp8_e5m2",
            "e4m3": "fp8_e4m3", "e4m3fn": "fp8_e4m3", "float8_e5m2": "fp8_e5m2",
            "float8_e4m3fn": "fp8_e4m3"}


def float_format(name: str) -> FloatFormat:
    """The :class:`FloatFormat` called ``name`` (``"fp32"``, ``"bf16"``, ``"fp8_e4m3"`` ...).

    Case, spaces and hyphens are ignored (``"FP8 E4M3"``); NumPy-style names work too
    (``"float16"``, ``"bfloat16"``). Plain ``"fp8"`` is ambiguous and refused.
    """
    return v.lookup("format", name, FORMATS, _ALIASES)[1]


v.guard_module(globals())
