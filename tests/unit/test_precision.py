"""gpulesson.precision: float formats from their bit layouts, against the specifications.

IEEE 754-2019 binary64/32/16 as NumPy's ``finfo`` reports them; BF16 (Kalamkar et al. 2019)
and TF32 (NVIDIA A100 whitepaper, 2020) from their widths; FP8 E4M3 and E5M2 from the OCP
8-bit Floating Point Specification (OFP8) 1.0 (2023), Table 1, which Micikevicius et al.
2022 (Table 1) also print.
"""

from __future__ import annotations

import numpy as np
import pytest

from gpulesson import memory, precision
from gpulesson.precision import float_format


@pytest.mark.parametrize(("name", "dtype"), [("fp64", np.float64), ("fp32", np.float32),
                                             ("fp16", np.float16)])
def test_ieee_formats_match_numpy_finfo(name: str, dtype: type) -> None:
    spec, info = float_format(name), np.finfo(dtype)
    assert (spec.exponent_bits, spec.fraction_bits, spec.bits) == (info.nexp, info.nmant,
                                                                   info.bits)
    assert spec.largest == float(info.max)
    assert spec.smallest_normal == float(info.smallest_normal)
    assert spec.smallest_subnormal == float(info.smallest_subnormal)
    assert spec.epsilon == float(info.eps)
    # finfo's precision is the whole decimal digits eps guarantees: floor(m log10 2)
    assert int(spec.decimal_digits) in (info.precision, info.precision + 1)


def test_decimal_digits_by_hand() -> None:
    """A 24-bit significand (23 fraction bits + the hidden 1) holds 24 x log10(2) = 7.22
    decimal digits; FP16's 11 bits hold 3.31, BF16's 8 bits 2.41."""
    assert float_format("fp32").decimal_digits == pytest.approx(7.2247, abs=1e-4)
    assert float_format("fp16").decimal_digits == pytest.approx(3.3113, abs=1e-4)
    assert float_format("bf16").decimal_digits == pytest.approx(2.4082, abs=1e-4)


def test_ocp_fp8_e4m3() -> None:
    """OFP8 Table 1, E4M3: bias 7, max normal S.1111.110 = 1.75 x 2^8 = 448 (no infinities;
    S.1111.111 is NaN), min normal 2^-6, min subnormal 2^-9."""
    e4m3 = float_format("fp8_e4m3")
    assert (e4m3.exponent_bits, e4m3.fraction_bits, e4m3.bias) == (4, 3, 7)
    assert e4m3.largest == 448.0 == 1.75 * 2**8
    assert e4m3.smallest_normal == 2.0**-6 and e4m3.smallest_subnormal == 2.0**-9
    assert not e4m3.ieee_special and e4m3.epsilon == 0.125


def test_ocp_fp8_e5m2() -> None:
    """OFP8 Table 1, E5M2: bias 15, max normal S.11110.11 = 1.75 x 2^15 = 57,344 (IEEE-style
    infinities and NaNs), min normal 2^-14, min subnormal 2^-16."""
    e5m2 = float_format("E5M2")
    assert (e5m2.exponent_bits, e5m2.fraction_bits, e5m2.bias) == (5, 2, 15)
    assert e5m2.largest == 57_344.0 == 1.75 * 2**15
    assert e5m2.smallest_normal == 2.0**-14 and e5m2.smallest_subnormal == 2.0**-16
    assert e5m2.ieee_special


def test_bf16_and_tf32_share_fp32s_range() -> None:
    """BF16 (1 + 8 + 7) and TF32 (1 + 8 + 10) keep FP32's exponent: the same smallest
    normal, 2^-126; TF32 has FP16's precision (2^-10) and is stored in 4 bytes; BF16's
    largest value is 0x7F7F = (2 - 2^-7) x 2^127 = 3.3895e38."""
    fp32, bf16, tf32 = (float_format(n) for n in ("fp32", "bf16", "tf32"))
    assert bf16.smallest_normal == tf32.smallest_normal == fp32.smallest_normal == 2.0**-126
    assert tf32.epsilon == float_format("fp16").epsilon == 2.0**-10 and tf32.bits == 19
    assert tf32.storage_bytes == memory.precision_bytes("tf32") == 4
    assert bf16.largest == pytest.approx(3.3895e38, rel=1e-4)
    assert bf16.storage_bytes == memory.precision_bytes("bf16") == 2


def test_rounds_to_zero_below_half_the_smallest_subnormal() -> None:
    """Round to nearest even: FP16 flushes 2^-25 (the tie) and below, E4M3 2^-10."""
    fp16, e4m3 = float_format("fp16"), float_format("fp8_e4m3")
    assert fp16.rounds_to_zero(2.0**-25) and not fp16.rounds_to_zero(2.0**-25 * 1.0001)
    assert float(np.float16(2.0**-25)) == 0.0 and float(np.float16(2.0**-25 * 1.0001)) > 0
    assert e4m3.rounds_to_zero(2.0**-10) and not e4m3.rounds_to_zero(2.0**-10 * 1.01)


def test_lookup_names_and_refusals() -> None:
    assert float_format("FP8 E4M3") is precision.FORMATS["fp8_e4m3"]
    assert float_format("bfloat16") is precision.FORMATS["bf16"]
    assert float_format("half") is precision.FORMATS["fp16"]
    with pytest.raises(KeyError, match="known formats: fp64, fp32"):
        float_format("fp8")  # ambiguous: E4M3 or E5M2
    with pytest.raises(ValueError, match="value must be a finite number"):
        float_format("fp16").rounds_to_zero(float("inf"))
    with pytest.raises(ValueError, match="exponent_bits must be at least 2"):
        precision.FloatFormat("odd", 1, 3)
