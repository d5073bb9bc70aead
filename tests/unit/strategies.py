"""Hypothesis strategies and checks shared by the property tests of the calculators."""

from __future__ import annotations

import math

from hypothesis import strategies as st

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
