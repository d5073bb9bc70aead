"""Property-based tests: no valid input gives NaN, inf or a negative size, and obvious
monotonicities hold."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpulesson import flops, gemm, inference, memory, roofline, transformer
from gpulesson.transformer import TransformerConfig

sizes = st.integers(min_value=1, max_value=10**6)
rates = st.floats(min_value=1e6, max_value=1e18, allow_nan=False, allow_infinity=False)
params = st.floats(min_value=1e3, max_value=1e13, allow_nan=False, allow_infinity=False)
bytes_per = st.sampled_from([0.5, 1, 2, 4])


def finite_nonneg(x: float) -> bool:
    return math.isfinite(x) and x >= 0


@st.composite
def configs(draw: st.DrawFn) -> TransformerConfig:
    kv_heads = draw(st.integers(1, 8))
    heads = kv_heads * draw(st.integers(1, 8))
    head_dim = draw(st.integers(1, 128))
    return TransformerConfig(
        hidden=heads * head_dim,
        layers=draw(st.integers(1, 128)),
        heads=heads,
        kv_heads=kv_heads,
        vocab=draw(st.integers(1, 300_000)),
        ffn=draw(st.integers(1, 60_000)),
        max_positions=draw(st.integers(0, 8192)),
        tied_embeddings=draw(st.booleans()),
        gated_mlp=draw(st.booleans()),
        norm=draw(st.sampled_from(["layernorm", "rmsnorm"])),
        linear_bias=draw(st.booleans()),
        qkv_bias=draw(st.booleans()),
    )


@given(m=sizes, k=sizes, n=sizes, b=bytes_per, read_c=st.booleans())
def test_gemm_counts_are_exact_and_positive(m: int, k: int, n: int, b: float,
                                            read_c: bool) -> None:
    f = gemm.flops(m, k, n)
    assert isinstance(f, int) and f == 2 * m * k * n
    nbytes = gemm.min_bytes(m, k, n, b, read_c)
    assert isinstance(nbytes, int) and nbytes > 0
    assert gemm.min_bytes(m, k, n, b, True) >= gemm.min_bytes(m, k, n, b, False)


@given(m=sizes, k=sizes, n=sizes, peak=rates, bw=rates)
def test_gemm_analysis_is_consistent(m: int, k: int, n: int, peak: float, bw: float) -> None:
    a = gemm.analyse(m, k, n, peak_flops=peak, bandwidth=bw)
    assert finite_nonneg(a.time) and a.time == max(a.compute_time, a.memory_time)
    assert a.bound == roofline.bound(a.intensity, peak, bw)
    attainable = roofline.attainable_flops(a.intensity, peak, bw)
    assert attainable <= peak * (1 + 1e-12)
    assert math.isclose(a.flops / a.time, attainable, rel_tol=1e-9)


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


@given(cfg=configs())
def test_breakdown_sums_and_is_nonnegative(cfg: TransformerConfig) -> None:
    parts = transformer.param_breakdown(cfg)
    assert set(parts) >= {"embedding", "attention", "mlp", "norm", "lm_head"}
    assert all(isinstance(x, int) and x >= 0 for x in parts.values())
    assert sum(parts.values()) == transformer.param_count(cfg)
    assert 0 <= transformer.non_embedding_params(cfg) <= transformer.param_count(cfg)


@given(cfg=configs(), extra=st.integers(1, 10))
def test_more_layers_never_fewer_parameters(cfg: TransformerConfig, extra: int) -> None:
    import dataclasses

    deeper = dataclasses.replace(cfg, layers=cfg.layers + extra)
    assert transformer.param_count(deeper) > transformer.param_count(cfg)


@given(cfg=configs(), seq=st.integers(1, 10**6), batch=st.integers(1, 1024), b=bytes_per)
def test_kv_cache_is_exact_and_gqa_aware(cfg: TransformerConfig, seq: int, batch: int,
                                         b: float) -> None:
    kv = inference.kv_cache_bytes(cfg, seq_len=seq, batch=batch, bytes_per_element=b)
    assert isinstance(kv, int) and kv > 0
    assert kv == math.ceil(2 * cfg.layers * cfg.kv_heads * cfg.head_dim * seq * batch * b)


@given(s=st.integers(1, 65536), b=st.integers(1, 64), heads=st.sampled_from([8, 16, 32, 64]),
       head_dim=st.sampled_from([64, 128]), tp=st.sampled_from([1, 2, 4, 8]))
def test_activation_variants_are_ordered(s: int, b: int, heads: int, head_dim: int,
                                         tp: int) -> None:
    h = heads * head_dim
    kw = {"seq_len": s, "batch": b, "hidden": h, "heads": heads, "tp": tp}
    none = memory.activation_bytes_per_layer(**kw)
    sp = memory.activation_bytes_per_layer(**kw, sequence_parallel=True)
    sel = memory.activation_bytes_per_layer(**kw, recompute="selective")
    sp_sel = memory.activation_bytes_per_layer(**kw, sequence_parallel=True,
                                               recompute="selective")
    full = memory.activation_bytes_per_layer(**kw, recompute="full")
    assert all(isinstance(x, int) and x > 0 for x in (none, sp, sel, sp_sel, full))
    assert sp <= none and sel <= none and sp_sel <= sel and sp_sel <= sp
    assert full <= 2 * s * b * h


@given(n=params, batch=st.integers(1, 64), seq=st.integers(1, 8192),
       precision=st.sampled_from(["mixed", "fp32", "mixed_fp32_grads", "pure_bf16"]),
       optimizer=st.sampled_from(["adam", "sgd", "sgd_momentum"]))
def test_training_memory_finite(n: float, batch: int, seq: int, precision: str,
                                optimizer: str) -> None:
    m = memory.training_memory(n, batch=batch, seq_len=seq, precision=precision,
                               optimizer=optimizer, memory_per_gpu=80e9)
    assert all(finite_nonneg(x) for x in (m.weights, m.gradients, m.optimizer, m.total))
    assert m.gpus_needed is not None and m.gpus_needed * 80e9 >= m.total


@given(need=st.integers(0, 10**15), mem=st.integers(1, 10**12))
def test_gpus_needed_is_the_exact_ceiling(need: int, mem: int) -> None:
    k = memory.gpus_needed(need, mem)
    assert k * mem >= need and (k - 1) * mem < need or (k == 0 and need == 0)


@given(n=params, tokens=st.integers(1, 10**6), peak=rates, bw=rates, b=st.integers(1, 4096))
@settings(max_examples=50)
def test_inference_outputs_finite(n: float, tokens: int, peak: float, bw: float,
                                  b: int) -> None:
    assert inference.prefill_flops(n, tokens) == 2 * n * tokens
    w = 2 * n
    assert finite_nonneg(inference.prefill_time(n_params=n, tokens=tokens, peak_flops=peak,
                                                bandwidth=bw, weight_bytes=w))
    one = inference.decode_ceiling_tokens_per_second(weight_bytes=w, bandwidth=bw, batch=1,
                                                     kv_bytes_per_sequence=1e6)
    many = inference.decode_ceiling_tokens_per_second(weight_bytes=w, bandwidth=bw, batch=b,
                                                      kv_bytes_per_sequence=1e6)
    assert finite_nonneg(one) and many >= one * (1 - 1e-12)


@given(n=params, tokens=params)
def test_flops_finite(n: float, tokens: float) -> None:
    total = flops.training_flops(n, tokens)
    assert finite_nonneg(total)
    assert flops.hardware_flops_per_token(n, recompute="full") >= flops.flops_per_token(n)
    assert finite_nonneg(flops.chinchilla_optimal(total).params)
