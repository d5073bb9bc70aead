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
The FP6 (E2M3, E3M2) and FP4 (E2M1) elements of the OCP Microscaling formats keep no
special values at all: every code is a number, so the largest is
``(2 - 2**-m) * 2**(2**e - 1 - bias)`` (7.5, 28 and 6).

Block-scaled formats (:class:`BlockFormat`)
-------------------------------------------
Four and six bits cover too little range for a whole tensor, so each block of ``k``
consecutive elements shares one scale, and the value is ``scale * element``:

* **MX** (OCP Microscaling Formats v1.0, 2023): blocks of 32 elements, one 8-bit E8M0
  scale (a power of two, 2**-127 to 2**127). MXFP8 (E4M3 or E5M2 elements), MXFP6 (E2M3
  or E3M2), MXFP4 (E2M1).
* **NVFP4** (NVIDIA, 2025): E2M1 elements in blocks of 16 with an FP8 E4M3 scale (any
  value, not only powers of two), plus one FP32 scale per tensor.

Bits per element include the block scales: ``element bits + scale bits / block size``,
so MXFP4 is 4 + 8/32 = 4.25 bits (0.53125 bytes), NVFP4 4 + 8/16 = 4.5 bits (0.5625
bytes; its per-tensor FP32 scale adds 4 bytes per tensor, which
:meth:`BlockFormat.tensor_bytes` counts and a per-element figure cannot), MXFP6 6.25 and
MXFP8 8.25. :func:`bits_per_element` answers for every format name, plain or scaled; the
memory calculators (:func:`gpulesson.memory.precision_bytes`) read it.

Sources: IEEE 754-2019 (binary64, binary32, binary16); Kalamkar et al. 2019 (BF16: FP32's
8 exponent bits, 7 fraction bits); NVIDIA A100 whitepaper 2020 (TF32: 8 and 10, computed
in Tensor Cores, stored as FP32); OCP 8-bit Floating Point Specification (OFP8) 1.0, 2023,
and Micikevicius et al. 2022, Table 1 (E4M3 and E5M2); OCP Microscaling Formats (MX)
Specification v1.0, 2023, Tables 1-3 and section 5 (MX formats, E8M0 scale, FP6 and FP4
elements); NVIDIA Technical Blog, "Introducing NVFP4 for Efficient and Accurate
Low-Precision Inference", 2025-06 (NVFP4).

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

__all__ = [
    "BLOCK_FORMATS",
    "FORMATS",
    "GGUF_QUANTS",
    "SCALE_FORMATS",
    "BlockFormat",
    "FloatFormat",
    "GGUFQuant",
    "ScaleFormat",
    "bits_per_element",
    "block_format",
    "bytes_per_element",
    "float_format",
    "gguf_quant",
    "groupwise_bits_per_weight",
    "groupwise_tensor_bytes",
]


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format: sign, ``exponent_bits``, ``fraction_bits``.

    ``ieee_special=False`` marks a format that keeps no infinities and uses the all-ones
    exponent for numbers (OCP FP8 E4M3). ``finite_only=True`` marks one with no special
    values at all, every code a number (the OCP MX FP6 and FP4 elements); it implies
    ``ieee_special=False``. ``storage_bits`` is what one value occupies in memory when it
    differs from ``1 + exponent_bits + fraction_bits`` (TF32: 32).
    """

    name: str
    exponent_bits: int
    fraction_bits: int
    ieee_special: bool = True
    storage_bits: int | None = None
    finite_only: bool = False

    def __post_init__(self) -> None:
        v.positive_int("exponent_bits", self.exponent_bits)
        v.positive_int("fraction_bits", self.fraction_bits)
        if self.exponent_bits < 2:
            raise ValueError(f"exponent_bits must be at least 2, got {self.exponent_bits}")
        if self.storage_bits is not None:
            v.positive_int("storage_bits", self.storage_bits)
        v.boolean("finite_only", self.finite_only)
        if self.finite_only and self.ieee_special:
            raise ValueError("finite_only formats keep no infinities: ieee_special must be "
                             "False when finite_only is True")

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
        """Largest finite value: ``(2 - 2**-m) * 2**bias`` (IEEE layout),
        ``(2 - 2**(1-m)) * 2**(bias+1)`` when the top exponent holds numbers but the all-ones
        code is NaN (E4M3), ``(2 - 2**-m) * 2**(2**e - 1 - bias)`` with no special codes
        (FP6, FP4)."""
        m = self.fraction_bits
        if self.finite_only:
            return math.ldexp(2 - math.ldexp(1, -m), 2**self.exponent_bits - 1 - self.bias)
        if self.ieee_special:
            return math.ldexp(2 - math.ldexp(1, -m), self.bias)
        return math.ldexp(2 - math.ldexp(1, 1 - m), self.bias + 1)

    @property
    def values(self) -> tuple[float, ...]:
        """Every non-negative finite value, ascending (small formats only: at most 8 bits).

        FP4 E2M1: 0, 0.5, 1, 1.5, 2, 3, 4, 6 (OCP MX v1.0, section 5.3.3).
        """
        if self.bits > 8:
            raise ValueError(f"values lists formats of at most 8 bits; {self.name} has "
                             f"{self.bits}")
        m = self.fraction_bits
        out = {math.ldexp(f, 1 - self.bias - m) for f in range(2**m)}  # zero and subnormals
        for e in range(1, 2**self.exponent_bits):
            for f in range(2**m):
                out.add(math.ldexp(2**m + f, e - self.bias - m))
        return tuple(x for x in sorted(out) if x <= self.largest)

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
    "fp6_e3m2": FloatFormat("FP6 E3M2", 3, 2, ieee_special=False, finite_only=True),
    "fp6_e2m3": FloatFormat("FP6 E2M3", 2, 3, ieee_special=False, finite_only=True),
    "fp4_e2m1": FloatFormat("FP4 E2M1", 2, 1, ieee_special=False, finite_only=True),
})

_ALIASES = {"float64": "fp64", "double": "fp64", "float32": "fp32", "single": "fp32",
            "float16": "fp16", "half": "fp16", "bfloat16": "bf16", "e5m2": "fp8_e5m2",
            "e4m3": "fp8_e4m3", "e4m3fn": "fp8_e4m3", "float8_e5m2": "fp8_e5m2",
            "float8_e4m3fn": "fp8_e4m3", "e3m2": "fp6_e3m2", "e2m3": "fp6_e2m3",
            "e2m1": "fp4_e2m1", "fp4": "fp4_e2m1", "float4_e2m1fn": "fp4_e2m1",
            "float6_e3m2fn": "fp6_e3m2", "float6_e2m3fn": "fp6_e2m3"}


def float_format(name: str) -> FloatFormat:
    """The :class:`FloatFormat` called ``name`` (``"fp32"``, ``"bf16"``, ``"fp8_e4m3"`` ...).

    Case, spaces and hyphens are ignored (``"FP8 E4M3"``); NumPy-style names work too
    (``"float16"``, ``"bfloat16"``). Plain ``"fp8"`` and ``"fp6"`` are ambiguous and
    refused; ``"fp4"`` is E2M1, the only FP4 element in use.
    """
    return v.lookup("format", name, FORMATS, _ALIASES)[1]


@dataclass(frozen=True)
class ScaleFormat:
    """The format of a block's shared scale: its width and the magnitudes it can hold.

    ``power_of_two`` marks a scale that is an exponent only (E8M0), so multiplying by it
    shifts the element without rounding.
    """

    name: str
    bits: int
    smallest: float
    largest: float
    power_of_two: bool


#: Scale formats of the block-scaled formats (read-only). E8M0: an 8-bit exponent with
#: bias 127, 2**-127 to 2**127, the all-ones code NaN (OCP MX v1.0, section 5.4.1). UE4M3:
#: the positive half of FP8 E4M3, 2**-9 to 448 (NVFP4's block scale).
SCALE_FORMATS: Mapping[str, ScaleFormat] = MappingProxyType({
    "e8m0": ScaleFormat("E8M0", 8, math.ldexp(1, -127), math.ldexp(1, 127), True),
    "ue4m3": ScaleFormat("UE4M3", 8, FORMATS["fp8_e4m3"].smallest_subnormal,
                         FORMATS["fp8_e4m3"].largest, False),
})


@dataclass(frozen=True)
class BlockFormat:
    """A block-scaled format: ``block_size`` elements share one scale.

    Attributes
    ----------
    name : str
        ``"MXFP4"``, ``"NVFP4"`` ...
    element : FloatFormat
        The format of each element (E2M1 for the FP4 formats).
    block_size : int
        Elements per shared scale (32 for MX, 16 for NVFP4).
    scale : ScaleFormat
        The block scale (E8M0 for MX, UE4M3 for NVFP4).
    tensor_scale_bits : int
        Bits of one extra scale per tensor (NVFP4: 32, an FP32 scale; MX: 0).
    """

    name: str
    element: FloatFormat
    block_size: int
    scale: ScaleFormat
    tensor_scale_bits: int = 0

    def __post_init__(self) -> None:
        v.positive_int("block_size", self.block_size)
        v.nonneg_int("tensor_scale_bits", self.tensor_scale_bits)

    @property
    def bits_per_element(self) -> float:
        """``element bits + scale bits / block_size``: MXFP4 4 + 8/32 = 4.25, NVFP4 4.5."""
        return self.element.bits + self.scale.bits / self.block_size

    @property
    def bytes_per_element(self) -> float:
        """:attr:`bits_per_element` / 8 (MXFP4 0.53125, NVFP4 0.5625): exact binary
        fractions, so byte counts stay exact."""
        return self.bits_per_element / 8

    @property
    def largest(self) -> float:
        """Largest magnitude a block can hold: largest element x largest block scale
        (MXFP4: 6 x 2**127; NVFP4: 6 x 448 = 2,688 before its per-tensor FP32 scale)."""
        return self.element.largest * self.scale.largest

    @property
    def block_dynamic_range(self) -> float:
        """Largest over smallest non-zero element inside one block (one scale):
        E2M1 6 / 0.5 = 12, E4M3 448 / 2**-9 = 229,376."""
        return self.element.largest / self.element.smallest_subnormal

    @property
    def epsilon(self) -> float:
        """Relative spacing near 1 inside a block: the element's ``2**-m`` (E2M1: 0.5)."""
        return self.element.epsilon

    def tensor_bytes(self, elements: int) -> int:
        """Exact bytes of a tensor of ``elements`` values: packed elements, one scale per
        started block, and the per-tensor scale.

        ``ceil(n * element_bits / 8) + ceil(n / block_size) * scale_bytes +
        tensor_scale_bits / 8``. A 4,096 x 4,096 NVFP4 weight: 8,388,608 bytes of elements,
        1,048,576 of block scales and 4 of the tensor scale.

        Raises
        ------
        ValueError
            when ``elements`` is not a positive integer.
        """
        n = v.positive_int("elements", elements)
        packed = -(-n * self.element.bits // 8)
        blocks = -(-n // self.block_size)
        return packed + blocks * (self.scale.bits // 8) + self.tensor_scale_bits // 8


_E2M1 = FORMATS["fp4_e2m1"]

#: The block-scaled formats of the course by key (read-only).
BLOCK_FORMATS: Mapping[str, BlockFormat] = MappingProxyType({
    "mxfp8_e4m3": BlockFormat("MXFP8 E4M3", FORMATS["fp8_e4m3"], 32, SCALE_FORMATS["e8m0"]),
    "mxfp8_e5m2": BlockFormat("MXFP8 E5M2", FORMATS["fp8_e5m2"], 32, SCALE_FORMATS["e8m0"]),
    "mxfp6_e3m2": BlockFormat("MXFP6 E3M2", FORMATS["fp6_e3m2"], 32, SCALE_FORMATS["e8m0"]),
    "mxfp6_e2m3": BlockFormat("MXFP6 E2M3", FORMATS["fp6_e2m3"], 32, SCALE_FORMATS["e8m0"]),
    "mxfp4": BlockFormat("MXFP4", _E2M1, 32, SCALE_FORMATS["e8m0"]),
    "nvfp4": BlockFormat("NVFP4", _E2M1, 16, SCALE_FORMATS["ue4m3"], tensor_scale_bits=32),
})

_BLOCK_ALIASES = {"mxfp8": "mxfp8_e4m3", "mxfp4_e2m1": "mxfp4", "nvfp4_e2m1": "nvfp4"}


def block_format(name: str) -> BlockFormat:
    """The :class:`BlockFormat` called ``name`` (``"mxfp4"``, ``"nvfp4"``, ``"mxfp6_e2m3"``).

    ``"mxfp8"`` is MXFP8 E4M3, the element used for weights and activations; plain
    ``"mxfp6"`` is ambiguous (E2M3 or E3M2) and refused, with the known names listed.
    """
    return v.lookup("block format", name, BLOCK_FORMATS, _BLOCK_ALIASES)[1]


# ---------------------------------------------------------------------------------------
# Integer quantisation as inference engines store it: GGUF blocks, group-wise INT4


@dataclass(frozen=True)
class GGUFQuant:
    """A llama.cpp (GGUF) quantisation type: one block struct of ``block_elements`` weights.

    ``fields`` are the struct's members and their bytes, as ``ggml-common.h`` declares them
    (``ggml_half`` is 2 bytes, a super-block ``QK_K`` holds 256 weights, ``K_SCALE_SIZE``
    is 12 bytes of 6-bit scales and mins). Bits per weight are ``8 * sum(fields) /
    block_elements``: Q8_0 ``(2 + 32) * 8 / 32 = 8.5``; Q4_K ``(2 + 2 + 12 + 128) * 8 /
    256 = 4.5``; Q5_K ``(4 + 12 + 32 + 128) * 8 / 256 = 5.5``; Q6_K ``(128 + 64 + 16 + 2)
    * 8 / 256 = 6.5625``.
    """

    name: str
    block_elements: int
    fields: tuple[tuple[str, int], ...]

    @property
    def block_bytes(self) -> int:
        """``sizeof`` the block struct: the sum of its members (ggml asserts no padding)."""
        return sum(size for _, size in self.fields)

    @property
    def bits_per_weight(self) -> float:
        """``8 * block_bytes / block_elements``, scales and minimums included."""
        return 8 * self.block_bytes / self.block_elements

    def tensor_bytes(self, elements: int) -> int:
        """Bytes of a tensor of ``elements`` weights: ``elements / block_elements`` blocks.

        Raises
        ------
        ValueError
            when ``elements`` is not a positive multiple of the block (ggml quantises
            whole blocks: each row's length must be a multiple of it).
        """
        n = v.positive_int("elements", elements)
        if n % self.block_elements:
            raise ValueError(f"elements must be a multiple of {self.name}'s block of "
                             f"{self.block_elements} weights, got {n:,}")
        return n // self.block_elements * self.block_bytes


_HALF, _QK_K, _K_SCALE_SIZE = 2, 256, 12

#: GGUF quantisation types by key (read-only), each from its block struct in llama.cpp's
#: ``ggml/src/ggml-common.h``: the legacy 32-weight blocks (Q4_0 ... Q8_0) and the k-quant
#: super-blocks of 256 (Q2_K ... Q6_K).
GGUF_QUANTS: Mapping[str, GGUFQuant] = MappingProxyType({
    "q4_0": GGUFQuant("Q4_0", 32, (("d", _HALF), ("qs", 16))),
    "q4_1": GGUFQuant("Q4_1", 32, (("d", _HALF), ("m", _HALF), ("qs", 16))),
    "q5_0": GGUFQuant("Q5_0", 32, (("d", _HALF), ("qh", 4), ("qs", 16))),
    "q5_1": GGUFQuant("Q5_1", 32, (("d", _HALF), ("m", _HALF), ("qh", 4), ("qs", 16))),
    "q8_0": GGUFQuant("Q8_0", 32, (("d", _HALF), ("qs", 32))),
    "q2_k": GGUFQuant("Q2_K", _QK_K, (("scales", _QK_K // 16), ("qs", _QK_K // 4),
                                      ("d", _HALF), ("dmin", _HALF))),
    "q3_k": GGUFQuant("Q3_K", _QK_K, (("hmask", _QK_K // 8), ("qs", _QK_K // 4),
                                      ("scales", 12), ("d", _HALF))),
    "q4_k": GGUFQuant("Q4_K", _QK_K, (("d", _HALF), ("dmin", _HALF),
                                      ("scales", _K_SCALE_SIZE), ("qs", _QK_K // 2))),
    "q5_k": GGUFQuant("Q5_K", _QK_K, (("d", _HALF), ("dmin", _HALF),
                                      ("scales", _K_SCALE_SIZE), ("qh", _QK_K // 8),
                                      ("qs", _QK_K // 2))),
    "q6_k": GGUFQuant("Q6_K", _QK_K, (("ql", _QK_K // 2), ("qh", _QK_K // 4),
                                      ("scales", _QK_K // 16), ("d", _HALF))),
})


def gguf_quant(name: str) -> GGUFQuant:
    """The :class:`GGUFQuant` called ``name`` (``"Q4_K"``, ``"q6_k"``, ``"Q8_0"`` ...).

    Case is ignored; the file-type names ``"Q4_K_M"`` and ``"Q5_K_S"`` are mixtures of
    several types across a model's tensors and are refused (their size is not one
    figure per weight).
    """
    return v.lookup("GGUF quantisation type", name, GGUF_QUANTS, {})[1]


def groupwise_bits_per_weight(bits: int = 4, group_size: int = 128, *, scale_bits: int = 16,
                              zero_point_bits: int = 4) -> float:
    """Bits per weight of group-wise integer quantisation, as AWQ and GPTQ store it.

    Each group of ``group_size`` consecutive input weights of an output column shares one
    scale and one zero-point: ``bits + (scale_bits + zero_point_bits) / group_size``.
    AutoAWQ's and AutoGPTQ's INT4 checkpoints keep FP16 scales and 4-bit zero-points
    packed eight to an int32 (``qzeros``): ``4 + 20 / 128 = 4.15625`` bits, 0.5195 bytes,
    where a flat ``"int4"`` counts 0.5. Symmetric schemes store no zero-point
    (``zero_point_bits=0``). GPTQ's optional ``g_idx`` (one int32 per input row) is not
    per weight: :func:`groupwise_tensor_bytes` counts it.
    """
    b = v.positive_int("bits", bits)
    g = v.positive_int("group_size", group_size)
    s = v.nonneg_int("scale_bits", scale_bits)
    z = v.nonneg_int("zero_point_bits", zero_point_bits)
    return b + (s + z) / g


def groupwise_tensor_bytes(in_features: int, out_features: int, *, bits: int = 4,
                           group_size: int = 128, scale_bits: int = 16,
                           zero_point_bits: int = 4, group_index: bool = False) -> int:
    """Exact bytes of one group-wise quantised linear layer (AutoAWQ / AutoGPTQ layout).

    ``in * out * bits / 8`` packed weights (``qweight``), ``in / g * out`` scales
    (``scales``) and zero-points (``qzeros``), and with ``group_index`` GPTQ's ``g_idx``,
    ``4 * in`` bytes. A Llama-2-7B ``q_proj`` (4,096 x 4,096, g = 128): 8,388,608 bytes of
    weights, 262,144 of FP16 scales and 65,536 of zero-points.

    Raises
    ------
    ValueError
        when ``group_size`` does not divide ``in_features`` or the packed sizes are not
        whole bytes.
    """
    n_in, n_out, b, g = v.positive_ints(in_features=in_features, out_features=out_features,
                                        bits=bits, group_size=group_size)
    s = v.nonneg_int("scale_bits", scale_bits)
    z = v.nonneg_int("zero_point_bits", zero_point_bits)
    v.boolean("group_index", group_index)
    if n_in % g:
        raise ValueError(f"group_size ({g}) must divide in_features, got in_features={n_in}")
    groups = n_in // g * n_out
    total_bits = n_in * n_out * b + groups * (s + z)
    if total_bits % 8:
        raise ValueError(f"the packed sizes of a {n_in} x {n_out} layer at {b} bits are not "
                         "whole bytes")
    return total_bits // 8 + (4 * n_in if group_index else 0)


def _quant_bits() -> dict[str, float]:
    """Bits per weight of the integer quantisation names :func:`bits_per_element` knows:
    the GGUF types and AWQ/GPTQ's INT4 in groups of 128 (``"int4_g128"``)."""
    table = {k: q.bits_per_weight for k, q in GGUF_QUANTS.items()}
    table["int4_g128"] = groupwise_bits_per_weight(4, 128)
    return table


#: Storage names that mean "this many bits per element" whatever the exact element
#: layout (the E4M3 and E5M2 variants of one MX format occupy the same memory).
_STORAGE_BITS: Mapping[str, float] = MappingProxyType({
    "fp8": FORMATS["fp8_e4m3"].bits,
    "fp6": FORMATS["fp6_e2m3"].bits,
    "mxfp6": BLOCK_FORMATS["mxfp6_e2m3"].bits_per_element,
    "int8": 8,
    "int4": 4,
})


def bits_per_element(name: str) -> float:
    """Bits one element occupies in memory, block scales included.

    Plain formats give their storage width (TF32: 32, the FP32 it is stored in); block
    formats ``element bits + scale bits / block size`` (MXFP4 4.25, NVFP4 4.5, MXFP6 6.25,
    MXFP8 8.25). The generic names ``"fp8"``, ``"fp6"``, ``"mxfp6"``, ``"int8"`` and
    ``"int4"`` are accepted here, where the variants do not differ in size. NVFP4's
    per-tensor FP32 scale is not per element (:meth:`BlockFormat.tensor_bytes` counts it).
    The GGUF types (``"q4_k"`` 4.5, ``"q8_0"`` 8.5 ...) and ``"int4_g128"`` (AWQ/GPTQ,
    4.15625) give their bits per weight with scales and zero-points.

    Raises
    ------
    KeyError
        for an unknown name, listing the known ones.
    """
    if not isinstance(name, str):
        raise TypeError(f"format must be a name (str), got {name!r}")
    table: dict[str, float] = {k: f.storage_bytes * 8 for k, f in FORMATS.items()}
    table.update({k: f.bits_per_element for k, f in BLOCK_FORMATS.items()})
    table.update(_STORAGE_BITS)
    table.update(_quant_bits())
    aliases = {**_ALIASES, **_BLOCK_ALIASES}
    return table[v.lookup("format", name, table, aliases)[0]]


def bytes_per_element(name: str) -> float:
    """:func:`bits_per_element` / 8: BF16 2, FP8 1, MXFP4 0.53125, NVFP4 0.5625."""
    return bits_per_element(name) / 8


v.guard_module(globals())
