"""Chunked local attention (Llama 4): the config, the Hugging Face reader and the KV cache.

Llama 4 Scout and Maverick attend within chunks of ``attention_chunk_size`` (8,192) tokens
in three of every four layers; every fourth layer (the NoPE layers, ``no_rope_layers``)
attends globally (transformers ``Llama4TextConfig``: ``layer_types`` is
``"chunked_attention"`` where ``no_rope_layers`` is 1, a NoPE layer every
``no_rope_layer_interval`` = 4 by default).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from gpulesson import flops, inference, transformer
from gpulesson.transformer import PRESETS, TransformerConfig, preset

HF_DIR = Path(__file__).resolve().parents[1] / "data" / "hf_configs"
MAVERICK_FILE = HF_DIR / "llama4__Llama-4-Maverick-17B-128E.json"
#: Bytes one token adds to one Llama 4 layer in BF16: a key and a value of 8 KV heads of 128.
PER_TOKEN_LAYER = 2 * 8 * 128 * 2
GIB = 2**30


def maverick() -> TransformerConfig:
    return transformer.from_hf_config(MAVERICK_FILE)


#: Llama 4 Scout's text model as transformers' ``Llama4TextConfig`` defaults describe it (the
#: class's docstring names meta-llama/Llama-4-Scout-17B-16E); no primary copy of Scout's
#: config.json was found. test_planning_chunked reads it too.
SCOUT_TEXT_CONFIG: dict[str, object] = {
    "model_type": "llama4_text", "hidden_size": 5120, "num_hidden_layers": 48,
    "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
    "intermediate_size": 8192, "intermediate_size_mlp": 16384, "vocab_size": 202048,
    "num_local_experts": 16, "num_experts_per_tok": 1,
    "max_position_embeddings": 10485760}


def text_config(**changes: object) -> dict[str, object]:
    """Maverick's ``text_config`` with ``changes`` (``None`` removes a key)."""
    raw = json.loads(MAVERICK_FILE.read_text())["text_config"]
    for key, value in changes.items():
        if value is None:
            raw.pop(key, None)
        else:
            raw[key] = value
    return raw


# ---------------------------------------------------------------------------------------
# The config


def test_only_llama_4_presets_have_chunks() -> None:
    """The new fields default to none: every preset but Llama 4 Maverick keeps its global
    layers; Maverick's 36 chunked layers and 12 global ones add up to its 48."""
    for name in PRESETS:
        cfg = preset(name)
        if name.startswith("llama-4"):
            assert (cfg.attention_chunk, cfg.chunked_layers, cfg.global_layers) == (
                8192, 36, 12)
            assert cfg.global_layers + cfg.chunked_layers == cfg.layers
            continue
        assert (cfg.attention_chunk, cfg.chunked_layers) == (0, 0)
        assert cfg.global_layers == cfg.layers - cfg.local_layers - cfg.recurrent_layers


def test_pattern_places_the_global_layers() -> None:
    cfg = TransformerConfig(hidden=64, layers=8, heads=4, vocab=100, attention_chunk=16,
                            attention_chunk_pattern=4)
    assert [cfg.is_chunked_layer(i) for i in range(8)] == [True, True, True, False] * 2
    assert (cfg.chunked_layers, cfg.global_layers) == (6, 2)
    every = dataclasses.replace(cfg, attention_chunk_pattern=0)
    assert (every.chunked_layers, every.global_layers) == (8, 0)


@pytest.mark.parametrize(("fields", "match"), [
    ({"attention_chunk": 16, "attention_chunk_pattern": 1}, "attention_chunk_pattern"),
    ({"attention_chunk_pattern": 4}, "needs an attention_chunk"),
    ({"attention_chunk": 16, "sliding_window": 8}, "sliding window"),
    ({"attention_chunk": -1}, "attention_chunk"),
])
def test_bad_chunk_fields_are_refused(fields: dict[str, int], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        TransformerConfig(hidden=64, layers=8, heads=4, vocab=100, **fields)


# ---------------------------------------------------------------------------------------
# Reading Llama 4's config.json


def test_maverick_chunks_three_layers_of_four() -> None:
    """The course's Maverick file omits ``no_rope_layers``: the default interval of 4
    makes layers 3, 7, ... 47 global (NoPE) and the other 36 chunked."""
    cfg = maverick()
    assert (cfg.attention_chunk, cfg.attention_chunk_pattern) == (8192, 4)
    assert (cfg.chunked_layers, cfg.global_layers) == (36, 12)
    assert [i for i in range(48) if not cfg.is_chunked_layer(i)] == list(range(3, 48, 4))


def test_layer_types_and_no_rope_layers_say_the_same() -> None:
    """Explicit ``no_rope_layers`` (1 = RoPE = chunked) or ``layer_types`` read as the
    default interval does; ``attention_chunk_size: null`` turns chunking off."""
    rope = [int((i + 1) % 4 != 0) for i in range(48)]
    types = ["chunked_attention" if r else "full_attention" for r in rope]
    for changes in ({"no_rope_layers": rope}, {"layer_types": types},
                    {"no_rope_layers": [], "no_rope_layer_interval": 4}):
        cfg = transformer.from_hf_config(text_config(**changes))
        assert (cfg.attention_chunk, cfg.attention_chunk_pattern) == (8192, 4)
    raw = text_config()
    raw["attention_chunk_size"] = None
    assert transformer.from_hf_config(raw).chunked_layers == 0
    assert transformer.from_hf_config(text_config(attention_chunk_size=None)).attention_chunk \
        == 8192  # absent: transformers' default


def test_a_chunk_covering_the_context_is_no_chunk() -> None:
    cfg = transformer.from_hf_config(text_config(max_position_embeddings=8192))
    assert cfg.chunked_layers == 0


def test_an_irregular_layout_is_refused() -> None:
    rope = [1] * 48
    rope[5] = 0
    with pytest.raises(ValueError, match="no_rope_layers"):
        transformer.from_hf_config(text_config(no_rope_layers=rope))


def test_transformers_defaults_give_the_scout_shape() -> None:
    """``Llama4TextConfig``'s defaults (its docstring's checkpoint is
    meta-llama/Llama-4-Scout-17B-16E): 48 layers, 8 KV heads of 128, 16 experts in every
    layer, chunks of 8,192 every layer but each fourth. Scout's KV cache is therefore
    Maverick's; only the experts differ."""
    scout = transformer.from_hf_config(SCOUT_TEXT_CONFIG)
    assert (scout.experts, scout.moe_layer_step) == (16, 1)
    assert (scout.attention_chunk, scout.chunked_layers, scout.global_layers) == (8192, 36, 12)
    for length in (8192, 131072, 1048576):
        assert inference.kv_cache_bytes(scout, seq_len=length) == inference.kv_cache_bytes(
            maverick(), seq_len=length)


# ---------------------------------------------------------------------------------------
# The KV cache


@pytest.mark.parametrize(("length", "token_layers", "gib"), [
    (8192, 48 * 8192, 1.5),                      # one chunk: every layer holds it all
    (131072, 12 * 131072 + 36 * 8192, 7.125),    # was 24 GiB, all layers global
    (1048576, 12 * 1048576 + 36 * 8192, 49.125),  # was 192 GiB
])
def test_maverick_kv_by_hand(length: int, token_layers: int, gib: float) -> None:
    """Hand count: 12 global layers hold every token, 36 chunked ones at most 8,192;
    4,096 bytes a token and layer in BF16."""
    cfg = maverick()
    assert inference.kv_cache_bytes(cfg, seq_len=length) == token_layers * PER_TOKEN_LAYER
    assert token_layers * PER_TOKEN_LAYER / GIB == gib
    full = inference.kv_cache_bytes(cfg, seq_len=length, cap_windows=False)
    assert full == 48 * length * PER_TOKEN_LAYER
    assert full / inference.kv_cache_bytes(cfg, seq_len=length) == pytest.approx(
        48 * length / token_layers)


def test_chunk_tokens_peak_and_current() -> None:
    """At 8,193 tokens a chunked layer has held 8,192 (what must be reserved) but holds
    only the new chunk's first token; at a chunk boundary both are a whole chunk."""
    cfg = maverick()
    assert [inference.chunk_tokens(cfg, n) for n in (1, 8191, 8192, 8193, 20000)] == [
        1, 8191, 8192, 8192, 8192]
    assert [inference.chunk_tokens(cfg, n, current=True) for n in (1, 8192, 8193, 20000)] == [
        1, 8192, 1, 20000 - 2 * 8192]
    held = inference.kv_cache_bytes(cfg, seq_len=8193, current_chunk=True)
    assert held == (12 * 8193 + 36 * 1) * PER_TOKEN_LAYER
    assert inference.chunk_tokens(preset("llama-3-8b"), 9000) == 9000


def test_decode_flops_count_each_tokens_own_chunk() -> None:
    """A decode token at position p sees p % chunk + 1 keys in a chunked layer: the closed
    form equals the sum, across a chunk boundary."""
    cfg = TransformerConfig(hidden=64, layers=4, heads=4, vocab=100, attention_chunk=8,
                            attention_chunk_pattern=4, context=64)
    plain = dataclasses.replace(cfg, attention_chunk=0, attention_chunk_pattern=0)
    per_key = 2 * cfg.heads * 2 * cfg.head_dim
    for context, new in ((0, 1), (5, 7), (8, 8), (13, 20)):
        chunked = sum(p % 8 + 1 for p in range(context, context + new))
        full = sum(p + 1 for p in range(context, context + new))
        saved = inference.model_decode_flops(plain, new, context_len=context) \
            - inference.model_decode_flops(cfg, new, context_len=context)
        assert saved == per_key * 3 * (full - chunked)


def test_attention_flops_cap_chunked_layers() -> None:
    cfg = maverick()
    per_key = 2 * 40 * 2 * 128
    assert flops.forward_attention_flops_per_token(cfg, context=131072) == per_key * (
        12 * 131072 + 36 * 8192)
    crossover = inference.model_attention_crossover_tokens(cfg)
    assert crossover is not None
    assert flops.forward_attention_flops_per_token(cfg, context=round(crossover)) \
        == pytest.approx(2 * transformer.active_params(cfg), rel=1e-4)
