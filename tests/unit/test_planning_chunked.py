"""Serving Llama 4's chunked layers as vLLM V1 does (gpulesson.planning.chunked).

vLLM's ``ChunkedLocalAttentionSpec.max_memory_usage_bytes`` (``vllm/v1/kv_cache_interface.py``)
reserves ``ceil(min(chunk + max_num_batched_tokens, max_model_len) / block)`` blocks a
chunked layer, with no extra block (a sliding window gets one more, since it need not
start on a block); the hybrid manager groups Llama 4's 12 full and 36 chunked layers as
1 + 3 groups of 12 (vLLM PR #21761's description).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpulesson import inference, transformer
from gpulesson.planning import kv_budget
from gpulesson.planning.chunked import vllm_chunked_hybrid
from gpulesson.planning.log_checks import request_kv_bytes
from gpulesson.planning.serving import kv_cache_groups, pool_blocks

from .test_transformer_chunks import SCOUT_TEXT_CONFIG

MAVERICK = transformer.from_hf_config(
    Path(__file__).resolve().parents[1] / "data" / "hf_configs"
    / "llama4__Llama-4-Maverick-17B-128E.json")
GIB = 2**30


@pytest.mark.parametrize(("engine", "version", "env", "on"), [
    ("V0", "0.8.5", None, False),
    ("V1", "0.9.2", None, False),   # no hybrid manager yet in the course's rules
    ("V1", "0.10.0", None, True),   # PR #19351, on by default
    ("V1", "0.10.0", False, True),  # the variable did not exist yet
    ("V1", "0.10.1", None, False),  # PR #21761: off unless the variable is set
    ("V1", "0.11.0", None, False),
    ("V1", "0.11.0", True, True),
    ("V1", "0.12.0", None, False),  # the assumed bound (module docstring)
    ("V1", "0.13.0", None, True),   # PR #29627: the variable defaults to 1
    ("V1", "0.13.0", False, False),
    ("V1", None, None, True),
])
def test_chunked_hybrid_by_version(engine: str, version: str | None, env: bool | None,
                                   on: bool) -> None:
    assert vllm_chunked_hybrid(engine, version, allow_env=env) is on


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="engine"):
        vllm_chunked_hybrid("V2")
    with pytest.raises(ValueError, match="version"):
        vllm_chunked_hybrid("V1", "latest")


def test_maverick_groups_one_full_and_three_chunked() -> None:
    groups = kv_cache_groups(MAVERICK, block_size=16, max_num_batched_tokens=8192)
    assert (groups.full, groups.local, groups.layers, groups.chunked) == (1, 3, 12, True)
    assert groups.window_tokens == 8192 + 8192
    # a request of 1,048,576 tokens: 65,536 blocks of the full group, 1,024 of each
    # chunked one (16,384 tokens, no extra block)
    assert groups.request_blocks(1048576) == 65536 + 3 * 1024
    assert groups.request_blocks(8000) == 4 * 500  # shorter than a chunk: all alike
    sliding = kv_cache_groups(transformer.preset("gpt-oss-20b"), max_num_batched_tokens=8192)
    assert not sliding.chunked and sliding.request_blocks(131072) == 8192 + (
        -(-(128 - 1 + 8192) // 16) + 1)


def test_request_bytes_count_chunks_as_the_groups_do() -> None:
    """log_checks.request_kv_bytes (per layer) and the groups (per group of 12 layers)
    give the same bytes for one request."""
    per_token = inference.kv_cache_bytes_per_token_per_gpu(MAVERICK, tp=8)
    for length in (4096, 131072, 1048576):
        groups = kv_cache_groups(MAVERICK, max_num_batched_tokens=8192)
        by_groups = groups.request_blocks(length) * 16 * per_token / 48 * 12
        assert request_kv_bytes(MAVERICK, max_model_len=length, tp=8) == pytest.approx(
            by_groups)


def test_hybrid_manager_holds_about_four_times_the_requests() -> None:
    """Maverick in FP8 on 8 H100s at 1,048,576 tokens: with the hybrid manager (newest
    vLLM) a request takes 68,608 blocks of 12 layers where without it (0.11) it takes
    65,536 blocks of 48, so about 4 x 65,536 / 68,608 = 3.8 times as many fit."""
    common = {"tp": 8, "max_model_len": 1048576, "weight_dtype": "fp8",
              "usable_memory": 79.19 * GIB}
    new = kv_budget(MAVERICK, **common)
    old = kv_budget(MAVERICK, **common, vllm_version="0.11.0")
    assert old.groups is None and new.groups is not None and new.groups.chunked
    assert new.kv_cache == old.kv_cache
    assert new.max_concurrency / old.max_concurrency == pytest.approx(
        4 * 65536 / 68608, rel=1e-3)
    assert kv_budget(MAVERICK, **common, vllm_version="0.10.0").groups is not None


def test_source_scout_8xh200_vllm_0_12_pool_and_concurrency() -> None:
    """A public vLLM v0.12.0 run of Llama-4-Scout-17B-16E-Instruct on 8 H200s (tp 8,
    gpu_memory_utilization 0.9; repository fuhengwu2021/coderepo, extra/README.md, which
    reports the start-up figures rather than quoting the log): "Available KV cache
    memory: 89.71 GiB", "GPU KV cache size: 3,919,664 tokens (per GPU)" and "Max
    concurrency: 1.86x (for 8M tokens per request)" at max_model_len 8,388,608 with the
    hybrid manager enabled by VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1; at a
    5M max_model_len, 2.96x with it and 0.75x with it "disabled" (the version's default).

    From the pool: 89.71 GiB / (16 tokens x 512 bytes x 12 layers) = 979,872 blocks of
    four groups; printed tokens 979,872 // 4 x 16 = 3,919,488 (log 3,919,664: -0.005 %,
    the pool's rounding to 0.01 GiB); a request of 8,388,608 tokens takes 524,288 + 3 x
    1,024 blocks: 1.858x (log 1.86x). At 5,242,880 tokens: 2.963x (2.96x); without the
    manager 3,919,488 / 5,242,880 = 0.748x (0.75x). Every layer at full length would
    give 0.47x at 8M: the log's 1.86x needs the chunked groups. The pool itself (from the
    weights and activations) is not predicted here: the README prints neither. Scout's
    KV shape: transformers' Llama4TextConfig defaults (see test_transformer_chunks).
    The default max_num_batched_tokens (8,192 on a GPU of 70 GiB or more) is assumed;
    2,048 would give 2.97x at 5M.
    """
    scout = transformer.from_hf_config(SCOUT_TEXT_CONFIG)
    per_token = inference.kv_cache_bytes_per_token_per_gpu(scout, tp=8)
    assert per_token == 48 * 2 * 1 * 128 * 2
    pool = 89.71 * GIB
    assert not vllm_chunked_hybrid("V1", "0.12.0")  # the run had to set the variable
    assert vllm_chunked_hybrid("V1", "0.12.0", allow_env=True)
    groups = kv_cache_groups(scout, block_size=16, max_num_batched_tokens=8192)
    blocks, tokens, at_8m = pool_blocks(pool, per_token, 48, 8388608, groups)
    assert tokens == pytest.approx(3919664, rel=1e-4)
    assert round(at_8m, 2) == 1.86
    assert round(pool_blocks(pool, per_token, 48, 5242880, groups)[2], 2) == 2.96
    assert round(pool_blocks(pool, per_token, 48, 5242880, None)[2], 2) == 0.75
    assert round(pool_blocks(pool, per_token, 48, 8388608, None)[2], 2) == 0.47
