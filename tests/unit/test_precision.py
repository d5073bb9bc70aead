"""gpulesson.precision: float formats from their bit layouts, against the specifications.

IEEE 754-2019 binary64/32/16 as NumPy's ``finfo`` reports them; BF16 (Kalamkar et al. 2019)
and TF32 (NVIDIA A100 whitepaper, 2020) from their widths; FP8 E4M3 and E5M2 from the OCP
8-bit Floating Point Specification (OFP8) 1.0 (2023), Table 1, which Micikevicius et al.
2022 (Table 1) also print; the FP6 and FP4 elements, the E8M0 scale and the MX formats from
the OCP Microscaling Formats (MX) Specification v1.0 (2023); NVFP4 from NVIDIA's
"Introducing NVFP4 for Efficient and Accurate Low-Precision Inference" (Technical Blog,
2025-06).
"""

from __future__ import annotations

import numpy as np
import pytest

from gpulesson import inference, memory, precision, transformer
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


# ---------------------------------------------------------------------------------------
# The OCP Microscaling (MX) elements and scales, NVFP4


@pytest.mark.parametrize(("name", "e", "m", "largest", "normal", "subnormal"), [
    ("fp6_e3m2", 3, 2, 28.0, 0.25, 0.0625),
    ("fp6_e2m3", 2, 3, 7.5, 1.0, 0.125),
    ("fp4_e2m1", 2, 1, 6.0, 1.0, 0.5),
])
def test_ocp_mx_element_limits(name: str, e: int, m: int, largest: float, normal: float,
                               subnormal: float) -> None:
    """OCP MX v1.0, section 5.3 (Tables 2 and 3): FP6 E3M2 max normal 28.0, min normal
    2^-2, min subnormal 2^-4; FP6 E2M3 7.5, 2^0, 2^-3; FP4 E2M1 6.0, 2^0, 2^-1. No
    infinities and no NaN: every code is a number."""
    spec = float_format(name)
    assert (spec.exponent_bits, spec.fraction_bits, spec.bits) == (e, m, 1 + e + m)
    assert spec.largest == largest
    assert spec.smallest_normal == normal and spec.smallest_subnormal == subnormal
    assert spec.finite_only and not spec.ieee_special


def test_fp4_e2m1_has_eight_magnitudes() -> None:
    """OCP MX v1.0, section 5.3.3: E2M1 represents +-{0, 0.5, 1, 1.5, 2, 3, 4, 6}."""
    assert float_format("fp4").values == (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
    assert len(float_format("fp6_e2m3").values) == 32  # 5 bits of magnitude, all numbers
    assert float_format("fp8_e4m3").values[-1] == 448.0  # S.1111.111 (480) is NaN
    with pytest.raises(ValueError, match="at most 8 bits; BF16 has 16"):
        float_format("bf16").values  # noqa: B018


def test_e8m0_scale_range() -> None:
    """OCP MX v1.0, section 5.4.1: E8M0 is an unsigned exponent with bias 127, from 2^-127
    to 2^127 (0xFF is NaN), so an MX scale only ever shifts by a power of two."""
    e8m0 = precision.SCALE_FORMATS["e8m0"]
    assert (e8m0.bits, e8m0.smallest, e8m0.largest) == (8, 2.0**-127, 2.0**127)
    assert e8m0.power_of_two
    ue4m3 = precision.SCALE_FORMATS["ue4m3"]  # NVFP4's block scale: positive E4M3
    assert (ue4m3.largest, ue4m3.smallest) == (448.0, 2.0**-9) and not ue4m3.power_of_two


@pytest.mark.parametrize(("name", "bits", "block", "element"), [
    ("mxfp8_e4m3", 8.25, 32, "FP8 E4M3"), ("mxfp8_e5m2", 8.25, 32, "FP8 E5M2"),
    ("mxfp6_e3m2", 6.25, 32, "FP6 E3M2"), ("mxfp6_e2m3", 6.25, 32, "FP6 E2M3"),
    ("mxfp4", 4.25, 32, "FP4 E2M1"), ("nvfp4", 4.5, 16, "FP4 E2M1"),
])
def test_block_formats_bits_include_the_scales(name: str, bits: float, block: int,
                                               element: str) -> None:
    """OCP MX v1.0, Table 1: every MX format shares one 8-bit E8M0 scale among k = 32
    elements, so MXFP4 takes 4 + 8/32 = 4.25 bits per element, MXFP6 6.25 and MXFP8 8.25.
    NVIDIA (2025): NVFP4 shares one FP8 E4M3 scale among 16 E2M1 values, 4 + 8/16 = 4.5
    bits ("4.5 bits per value"), and adds one FP32 scale per tensor."""
    fmt = precision.block_format(name)
    assert fmt.bits_per_element == bits == precision.bits_per_element(name)
    assert (fmt.block_size, fmt.element.name) == (block, element)
    assert fmt.bytes_per_element == bits / 8 == memory.precision_bytes(name.split("_")[0])
    assert fmt.tensor_scale_bits == (32 if name == "nvfp4" else 0)


def test_nvfp4_tensor_bytes_count_the_per_tensor_scale() -> None:
    """NVFP4 (NVIDIA, 2025): a 4,096 x 4,096 weight holds 16,777,216 values of 4 bits
    (8,388,608 bytes), 1,048,576 one-byte E4M3 block scales and one 4-byte FP32 tensor
    scale; MXFP4 (OCP MX v1.0) holds 524,288 E8M0 scales and no tensor scale."""
    n = 4096 * 4096
    assert precision.block_format("nvfp4").tensor_bytes(n) == 8_388_608 + 1_048_576 + 4
    assert precision.block_format("mxfp4").tensor_bytes(n) == 8_388_608 + 524_288
    # a partial block still carries its scale; odd counts pad to whole bytes
    assert precision.block_format("mxfp4").tensor_bytes(33) == 17 + 2
    with pytest.raises(ValueError, match="elements must be a positive integer"):
        precision.block_format("mxfp4").tensor_bytes(0)


def test_block_format_range_and_precision() -> None:
    """OCP MX v1.0: with E8M0 scales, an MXFP4 block spans 2^-127 x 0.5 to 2^127 x 6; inside
    one block the E2M1 elements span 6 / 0.5 = 12 with a step of 0.5 near 1. NVFP4's E4M3
    block scale reaches 448, so a block holds at most 6 x 448 = 2,688 before the per-tensor
    FP32 scale (NVIDIA, 2025)."""
    mx, nv = precision.block_format("mxfp4"), precision.block_format("nvfp4")
    assert mx.largest == 6.0 * 2.0**127 and nv.largest == 2688.0
    assert mx.block_dynamic_range == nv.block_dynamic_range == 12.0
    assert mx.epsilon == nv.epsilon == 0.5
    assert precision.block_format("mxfp8").element is float_format("fp8_e4m3")


def test_storage_names_and_refusals() -> None:
    """Generic names whose variants take the same memory are accepted for sizes; an
    ambiguous name is refused where the layout matters."""
    assert precision.bits_per_element("fp8") == 8 == precision.bits_per_element("e5m2")
    assert precision.bits_per_element("mxfp6") == 6.25
    assert precision.bytes_per_element("tf32") == 4  # stored as FP32
    assert precision.bytes_per_element("nvfp4") == 0.5625
    with pytest.raises(KeyError, match="known block formats: mxfp8_e4m3"):
        precision.block_format("mxfp6")  # E2M3 or E3M2
    with pytest.raises(KeyError, match="unknown format 'fp5'"):
        precision.bits_per_element("fp5")
    with pytest.raises(ValueError, match="ieee_special must be False"):
        precision.FloatFormat("odd", 2, 1, finite_only=True)


def test_nvfp4_memory_saving_matches_nvidias_figures() -> None:
    """NVIDIA (2025): NVFP4 "reduces model memory footprint by approximately 3.5x relative
    to FP16 and 1.8x compared to FP8" (16 / 4.5 = 3.56, 8 / 4.5 = 1.78). The weight and
    decode calculators take the block formats by name, scales included."""
    n = 8_030_261_248  # Llama 3 8B (transformer.preset("llama-3-8b"))
    nv = memory.weight_bytes(n, precision="nvfp4")
    assert round(memory.weight_bytes(n, precision="fp16") / nv, 1) == 3.6  # "about 3.5x"
    assert round(memory.weight_bytes(n, precision="fp8") / nv, 1) == 1.8
    assert nv == n * 0.5625 and memory.weight_bytes(n, precision="mxfp4") == n * 0.53125
    ceiling = inference.decode_ceiling_tokens_per_second(weight_bytes=nv, bandwidth=8e12)
    assert ceiling == pytest.approx(8e12 / (n * 0.5625))


def test_kv_cache_in_block_formats_is_exact() -> None:
    """A KV cache stored in NVFP4 or MXFP4 keeps an exact byte count: 0.5625 and 0.53125
    are binary fractions. Llama 3 8B at 8,192 tokens: 2 x 32 x 1,024 x 8,192 = 536,870,912
    values (1 GiB in BF16, OCP/NVIDIA sizes times that count)."""
    cfg = transformer.preset("llama-3-8b")
    values = 2 * cfg.layers * cfg.kv_heads * cfg.head_dim * 8192
    assert values == 536_870_912
    for name, b in (("bf16", 2), ("fp8", 1), ("nvfp4", 0.5625), ("mxfp4", 0.53125)):
        got = inference.kv_cache_bytes(cfg, seq_len=8192,
                                       bytes_per_element=memory.precision_bytes(name))
        assert got == int(values * b) and isinstance(got, int), name
    assert inference.max_concurrent_sequences(cfg, context=8192, gpu_memory=80e9,
                                              kv_dtype="nvfp4") > \
        inference.max_concurrent_sequences(cfg, context=8192, gpu_memory=80e9,
                                           kv_dtype="fp8")


# ---------------------------------------------------------------------------------------
# Integer quantisation as engines store it: GGUF blocks and group-wise INT4


@pytest.mark.parametrize(("name", "block_bytes", "bpw"), [
    ("Q4_K", 144, 4.5), ("Q5_K", 176, 5.5), ("Q6_K", 210, 6.5625), ("Q8_0", 34, 8.5),
    ("Q2_K", 84, 2.625), ("Q3_K", 110, 3.4375), ("Q4_0", 18, 4.5),
])
def test_source_gguf_block_layouts(name: str, block_bytes: int, bpw: float) -> None:
    """llama.cpp, ggml/src/ggml-common.h: each block struct with its static_assert on
    sizeof (e.g. ``sizeof(block_q6_K) == sizeof(ggml_half) + QK_K / 16 + 3*QK_K/4``) and
    the comments "Effectively 4.5 bits per weight" (Q4_K), 5.5 (Q5_K), 6.5625 (Q6_K),
    2.625 (Q2_K), 3.4375 (Q3_K); Q8_0 is a half scale and 32 int8 quants."""
    quant = precision.gguf_quant(name)
    assert quant.block_bytes == block_bytes
    assert quant.bits_per_weight == bpw == precision.bits_per_element(name.lower())


def test_source_gguf_file_size_of_tinyllama_q4_0() -> None:
    """llama.cpp's own report of ggml-model-tinyllama-1.1b-chat-v1.0-q4_0.gguf, printed by
    public llama.cpp benchmark apps: model_size 635,990,016 bytes, model_n_params
    1,100,048,384. The Q4_0 file type keeps the output matrix in Q6_K (llama.cpp's
    quantiser) and the norms in F32; every other matrix is Q4_0."""
    cfg = transformer.from_hf_config({
        "model_type": "llama", "hidden_size": 2048, "intermediate_size": 5632,
        "num_hidden_layers": 22, "num_attention_heads": 32, "num_key_value_heads": 4,
        "vocab_size": 32000, "tie_word_embeddings": False})
    n = transformer.param_count(cfg)
    assert n == 1_100_048_384
    parts = transformer.param_breakdown(cfg)
    q4_0, q6_k = precision.gguf_quant("q4_0"), precision.gguf_quant("q6_k")
    size = (q4_0.tensor_bytes(n - parts["lm_head"] - parts["norm"])
            + q6_k.tensor_bytes(parts["lm_head"]) + 4 * parts["norm"])
    assert size == 635_990_016


def test_gguf_file_types_that_mix_quants_are_refused() -> None:
    with pytest.raises(KeyError, match=r"Q4_K_M"):
        precision.gguf_quant("Q4_K_M")
    with pytest.raises(ValueError, match=r"multiple of Q4_K's block of 256 weights, got 100"):
        precision.gguf_quant("q4_k").tensor_bytes(100)


def test_source_awq_int4_group_of_128() -> None:
    """AutoAWQ (casper-hansen/AutoAWQ, awq/modules/linear/gemm.py, WQLinear_GEMM): buffers
    qweight (in, out // 8) int32, qzeros (in // 128, out // 8) int32 and scales
    (in // 128, out) float16: 4 + (16 + 4) / 128 = 4.15625 bits per weight, not a flat
    0.5 byte."""
    n_in, n_out, g = 4096, 11008, 128
    buffers = n_in * (n_out // 8) * 4 + (n_in // g) * (n_out // 8) * 4 + (n_in // g) * n_out * 2
    assert precision.groupwise_tensor_bytes(n_in, n_out) == buffers
    assert precision.groupwise_bits_per_weight(4, 128) == 4.15625
    assert precision.bits_per_element("int4_g128") == 4.15625 > precision.bits_per_element("int4")
    # GPTQ's act-order index adds one int32 per input row
    assert precision.groupwise_tensor_bytes(n_in, n_out, group_index=True) == buffers + 4 * n_in
    # symmetric INT8 per channel-group: no zero-point
    assert precision.groupwise_bits_per_weight(8, 128, zero_point_bits=0) == 8.125


def test_groupwise_refuses_groups_that_do_not_divide() -> None:
    with pytest.raises(ValueError, match=r"group_size \(128\) must divide in_features, got "
                       r"in_features=100"):
        precision.groupwise_tensor_bytes(100, 64)
