"""DeepSeek Sparse Attention in vLLM's KV-cache pool (gpulesson.planning.sparse).

Hand counts from vLLM's code: the MLA latent in ``fp8_ds_mla`` is 512 FP8 values + 4 FP32
scales + 64 BF16 rotary values = 656 bytes a token (``vllm/v1/attention/backends/mla/
flashmla_sparse.py``, layout note; ``vllm/v1/kv_cache_interface.py``,
``MLAAttentionSpec.real_page_size_bytes``), the indexer key 128 + 128 // 128 x 4 = 132
(``vllm/model_executor/models/deepseek_v2.py``, ``Indexer.__init__``,
``DeepseekV32IndexerCache.get_kv_cache_spec``), both one head a layer and copied on every
tensor-parallel rank, both in one group (``UniformTypeKVCacheSpecs``) of 64-token blocks
(``vllm/platforms/cuda.py``: "Forcing kv cache block size to 64 for FlashMLASparse").
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gpulesson import transformer
from gpulesson.planning import kv_budget
from gpulesson.planning.checkpoints import replicated_indexer_bytes
from gpulesson.planning.serving import kv_cache_groups
from gpulesson.planning.sparse import (
    FP8_DS_MLA_BYTES,
    SPARSE_BLOCK_SIZE,
    has_indexer,
    vllm_block_size,
    vllm_kv_bytes_per_token,
)

HF = Path(__file__).resolve().parents[1] / "data" / "hf_configs"
V32 = transformer.from_hf_config(HF / "deepseek_v32__DeepSeek-V3.2.json")
V3 = transformer.from_hf_config(HF / "deepseek_v3__DeepSeek-V3.json")
GLM5 = transformer.from_hf_config(HF / "glm_moe_dsa__GLM-5.1.json")
#: One layer's indexer weights (tests/unit/test_transformer_hf.py): wq_b 1,536 x 64 x 128,
#: wk 7,168 x 128, its LayerNorm 2 x 128, weights_proj 7,168 x 64.
INDEXER = 1536 * 64 * 128 + 7168 * 128 + 2 * 128 + 7168 * 64


def test_source_fp8_ds_mla_record_and_indexer_key_by_hand() -> None:
    assert FP8_DS_MLA_BYTES == 512 * 1 + 512 // 128 * 4 + 64 * 2
    assert SPARSE_BLOCK_SIZE == 64
    assert has_indexer(V32) and has_indexer(GLM5) and not has_indexer(V3)


@pytest.mark.parametrize(("cfg", "kv_dtype", "tp", "expected"), [
    (V32, "fp8", 8, 61 * (656 + 132)),          # 48,068
    (V32, "fp8_e4m3", 1, 61 * (656 + 132)),
    (V32, "fp8_ds_mla", 4, 61 * (656 + 132)),
    (V32, "bf16", 8, 61 * (576 * 2 + 132)),     # 78,324
    (GLM5, "fp8", 8, 78 * (656 + 132)),         # 61,464
    (V3, "fp8", 8, 61 * 576),                   # no indexer: DeepSeek-V3 as before
    (V3, "bf16", 8, 61 * 576 * 2),
])
def test_source_vllm_bytes_per_token_per_gpu(cfg: transformer.TransformerConfig,
                                             kv_dtype: str, tp: int, expected: int) -> None:
    assert vllm_kv_bytes_per_token(cfg, tp=tp, kv_dtype=kv_dtype) == expected


def test_indexer_models_refuse_a_cache_vllm_has_no_layout_for() -> None:
    with pytest.raises(ValueError, match="kv_dtype: got 'int8'"):
        vllm_kv_bytes_per_token(V32, kv_dtype="int8")
    with pytest.raises(ValueError, match="kv_dtype: got 'fp4'"):
        vllm_kv_bytes_per_token(V32, kv_dtype="fp4")
    odd = transformer.TransformerConfig(hidden=64, layers=2, heads=4, vocab=10,
                                        kv_lora_rank=32, q_lora_rank=16, qk_rope_head_dim=8,
                                        qk_nope_head_dim=8, v_head_dim=8, indexer_heads=4,
                                        indexer_head_dim=16, linear_bias=False)
    with pytest.raises(ValueError, match="512 \\+ 64"):
        vllm_kv_bytes_per_token(odd, kv_dtype="fp8")
    assert vllm_kv_bytes_per_token(odd, kv_dtype="bf16") == 2 * (40 * 2 + 16 + 4)


def test_sparse_models_run_in_blocks_of_64() -> None:
    assert vllm_block_size(V32, 16) == vllm_block_size(GLM5, 128) == 64
    assert vllm_block_size(V3, 16) == 16
    with pytest.raises(ValueError, match="block_size"):
        vllm_block_size(V3, 0)


def test_source_indexer_weights_are_copied_on_every_rank() -> None:
    """vLLM's Indexer: "no tensor parallel, just replicated": each of 8 GPUs holds 7/8 of
    the 61 indexers beyond its share, 61 x 13,959,424 x 7/8 bytes in FP8."""
    assert INDEXER == 13_959_424
    assert replicated_indexer_bytes(V32, "fp8", tp=8) == 61 * INDEXER * 7 / 8
    assert replicated_indexer_bytes(V32, "bf16", tp=8) == 61 * INDEXER * 2 * 7 / 8
    assert replicated_indexer_bytes(V32, "mxfp4_experts", tp=2) == 61 * INDEXER * 2 / 2
    assert replicated_indexer_bytes(V32, "fp8", tp=1) == 0
    assert replicated_indexer_bytes(V3, "fp8", tp=8) == 0


def test_source_deepseek_v32_fp8_on_8_h200s() -> None:
    """DeepSeek-V3.2 in FP8 with an FP8 cache on 8 H200s (TP 8, 163,840 tokens): every GPU
    holds all 61 indexers (DeepSeek-V3's budget less 61 x 13,959,424 bytes), and the pool
    is cut in blocks of 64 tokens x 61 layers x (656 + 132) bytes, one group."""
    args = dict(tp=8, max_model_len=163_840, kv_dtype="fp8", weight_dtype="fp8")
    b32, b3 = kv_budget(V32, "H200", **args), kv_budget(V3, "H200", **args)
    assert b32.weights - b3.weights == pytest.approx(61 * INDEXER)
    assert b32.kv_cache == pytest.approx(b3.kv_cache - 61 * INDEXER)
    assert b32.kv_bytes_per_token == 48_068
    assert b32.block_size == 64 and b32.groups is not None and b32.groups.count == 1
    assert b32.blocks == int(b32.kv_cache // (64 * 61 * 788))
    assert b32.kv_cache_tokens == b32.blocks * 64   # 163,840 = 2,560 blocks exactly
    assert b32.max_concurrency == pytest.approx(b32.blocks / 2560)
    # the figures the course prints (H200: 140.40 GiB usable, the routers, norms and
    # latent down-projections whole on every rank, 2.02 GiB outside PyTorch on each of the
    # eight): 39.42 GiB, 880,512 tokens
    assert b32.non_torch / 2**30 == pytest.approx(2.02, abs=0.01)
    assert b32.kv_cache / 2**30 == pytest.approx(39.42, abs=0.01)
    assert b32.kv_cache_tokens == 880_512
    # counting the latent alone in plain FP8 (576 bytes) would claim 37 % more tokens
    assert b32.kv_cache / 35_136 / b32.kv_cache_tokens == pytest.approx(1.37, abs=0.01)
    # the same groups whatever the engine version (one full-attention group)
    assert kv_cache_groups(V32, block_size=64).count == 1
    old = kv_budget(V32, "H200", vllm_version="0.11.0", **args)
    assert (old.blocks, old.kv_cache_tokens) == (b32.blocks, b32.kv_cache_tokens)


def test_sparse_models_refuse_the_v0_engine() -> None:
    with pytest.raises(ValueError, match="engine"):
        kv_budget(V32, "H200", tp=8, max_model_len=4096, kv_dtype="fp8", weight_dtype="fp8",
                  engine="V0")


def test_log_checks_count_a_sparse_model_as_vllm_pages_it() -> None:
    """check_vllm_run on lines written by hand in vLLM's format (no public start-up log
    of DeepSeek-V3.2 with its settings was found): the pool a log prints is cut in blocks
    of 64 tokens x 61 x 788 bytes, and one request of 163,840 tokens needs 2,560 such
    blocks (vLLM's "... GiB KV cache is needed" line)."""
    import json

    from gpulesson.planning.log_checks import check_vllm_run

    run = {"hf_config": json.loads((HF / "deepseek_v32__DeepSeek-V3.2.json").read_text()),
           "tp": 8, "max_model_len": 163_840, "kv_dtype": "fp8", "weight_dtype": "fp8",
           "gpu": "H200", "block_size": 16}
    text = ("INFO Available KV cache memory: 42.03 GiB\n"
            "INFO GPU KV cache size: 938,752 tokens\n"
            "ERROR (7.33 GiB KV cache is needed, which is larger than the available\n")
    rows = {r.term: r for r in check_vllm_run(run, text).rows}
    page = 64 * 61 * (656 + 132)
    assert rows["tokens of the log's pool"].predicted == int(42.03 * 2**30 // page) * 64
    assert rows["KV of one request"].predicted == 2560 * page


def test_source_sparse_decode_step_reads_the_top_k() -> None:
    """A decode step of DeepSeek-V3.2 at 131,072 tokens reads, per sequence and GPU, the
    latents of the 2,048 tokens its indexer picks and all 131,072 indexer keys
    (gpulesson.inference.decode_kv_read_bytes): in BF16 61 x (2,048 x 1,152 + 131,072 x
    132) = 1,199,308,800 bytes, not the whole 10,266,083,328-byte cache; in vLLM's FP8
    pool (656-byte latents) 61 x (2,048 x 656 + 131,072 x 132) = 1,137,344,512 of
    6,300,368,896. Weights, FLOPs and all-reduces are the top-k's alone, so the step
    time differs from the dense model's by the KV bytes over the bandwidth."""
    from gpulesson.planning._adapt import gpu_view, model_view
    from gpulesson.planning.serving import _Speed, decode_step_time
    dense = dataclasses.replace(V32, indexer_topk=0)
    bw = gpu_view("H200").bandwidth
    for batch in (1, 64):
        args = dict(tp=8, batch=batch, context=131072)
        gap = decode_step_time(dense, "H200", **args) - decode_step_time(V32, "H200", **args)
        assert gap == pytest.approx(batch * (10_266_083_328 - 1_199_308_800) / bw, rel=1e-9)
    speed = _Speed(model_view(V32), gpu_view("H200"), 8, "fp8", 48_068.0, 131072)
    assert speed.kv_read == pytest.approx(8 * 1_137_344_512, rel=1e-12)
    whole = _Speed(model_view(dense), gpu_view("H200"), 8, "fp8", 48_068.0, 131072)
    assert whole.kv_read == pytest.approx(8 * 6_300_368_896, rel=1e-12)
    # below the top-k the step reads the whole cache either way
    short = [_Speed(model_view(m), gpu_view("H200"), 8, "fp8", 48_068.0, 2000).kv_read
             for m in (V32, dense)]
    assert short[0] == pytest.approx(short[1], rel=1e-12)


def test_source_sparse_prefill_attends_to_the_top_k_causally() -> None:
    """A causal prefill of DeepSeek-V3.2: token i attends to min(i, 2,048) keys and its
    indexer scores i keys at 16,512 FLOPs each, 61 layers. Past the top-k vLLM prefills
    with FlashMLA's sparse kernel, latent attention absorbed ("MQA mode", the
    DeepSeek-V3.2-Exp report, section 1): 2 x 128 x (2 x 512 + 64) = 278,528 FLOPs a
    key; a prompt within the top-k runs the dense up-projected kernel (vLLM's
    ``use_dense_mha``), 2 x 128 x (192 + 128) = 81,920. By hand, 4,096 tokens:
    2,048 x 2,049 / 2 + 2,048 x 2,048 = 6,292,480 attended keys and 4,096 x 4,097 / 2 =
    8,390,656 scored; 1,000 and 2,048 tokens, within the top-k: every earlier key,
    attended and scored; 2,049 tokens: 2,048 x 2,049 / 2 + 2,048 attended, 2,049 x
    2,050 / 2 scored. Without a top-k the planner keeps its halved full-prompt count."""
    from gpulesson.planning._adapt import model_view
    mv = model_view(V32)
    absorbed = 2 * 128 * (2 * 512 + 64)
    assert mv.prefill_attention_flops(4096) == 61 * (absorbed * 6_292_480
                                                     + 16512 * 8_390_656)
    assert mv.prefill_attention_flops(1000) == 61 * (81920 + 16512) * 1000 * 1001 // 2
    assert mv.prefill_attention_flops(2048) == 61 * (81920 + 16512) * 2048 * 2049 // 2
    assert mv.prefill_attention_flops(2049) == 61 * (
        absorbed * (2048 * 2049 // 2 + 2048) + 16512 * 2049 * 2050 // 2)
    dense = model_view(dataclasses.replace(V32, indexer_topk=0))
    assert dense.prefill_attention_flops(4096) == 61 * 81920 * 4096 * 4096 / 2


def test_the_training_planner_steps_a_sparse_model_at_its_top_k() -> None:
    """DeepSeek-V3.2's sparse training stage (DeepSeek-AI 2025, arXiv 2512.02556: 480
    sequences of 128K tokens a step, 2,048 keys a query), planned on 2,048 H100s with a
    fixed layout: the step's attention follows the top-k and the indexer, so its compute
    is well under the same model's with dense attention (21.8 s against 68.9 s; 17.7 s if
    the picked keys ran the up-projected heads' 81,920 FLOPs a key rather than the
    absorbed 278,528 of DeepSeek's MQA-mode kernels); the MFU numerator is the sparse
    model count (flops.model_flops_per_token, up-projected), whatever the kernels run."""
    from gpulesson import flops
    from gpulesson.planning import Layout, plan_training
    dense = dataclasses.replace(V32, indexer_heads=0, indexer_head_dim=0, indexer_topk=0)
    plans = [plan_training(m, "H100 SXM", n_gpus=2048, tokens=943.7e9,
                           global_batch_tokens=480 * 131072, seq_len=131072,
                           layout=Layout(dp=128, pp=16, ep=64), recompute="full")
             for m in (V32, dense)]
    assert plans[0].breakdown["compute"] < plans[1].breakdown["compute"] / 3
    assert plans[0].step_time < plans[1].step_time
    for plan, m in zip(plans, (V32, dense), strict=True):
        assert plan.mfu == pytest.approx(
            plan.tokens_per_second * flops.model_flops_per_token(m, seq_len=131072)
            / (2048 * 989.4e12), rel=1e-6)
