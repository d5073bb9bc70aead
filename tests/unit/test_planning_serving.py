"""gpulesson.planning.plan_serving and kv_budget: vLLM's start-up arithmetic and SLOs.

The real logs under tests/data/logs/ name the public thread each comes from.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gpulesson import transformer
from gpulesson.distributed import achievable_bandwidth
from gpulesson.planning import gpu_view, model_view, perf_model, plan_serving, serving
from gpulesson.planning.logs import parse_vllm_log
from gpulesson.planning.serving import (
    CUBLAS_WORKSPACE_DEFAULT,
    DECODE_BANDWIDTH_EFFICIENCY,
    DECODE_MEASUREMENTS,
    GIB,
    checkpoint_parts,
    cublas_workspace_bytes,
    decode_step_time,
    expert_bias_params,
    expert_padding_bytes,
    fit_decode_efficiency,
    forward_peak_bytes,
    implied_bandwidth_efficiency,
    kv_budget,
    mxfp4_triton_extra_bytes,
    profile_peak_bytes,
    rotary_table_bytes,
    sampler_peak_bytes,
)

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"


@pytest.mark.parametrize("name", ["vllm-10517-rtx3090-llama3.1-8b-20k.log",
                                  "vllm-10517-rtx3090-llama3.1-8b-29k.log"])
def test_source_vllm_10517_kv_cache_within_10_percent(name: str) -> None:
    """vLLM issue #10517: Llama 3.1 8B on an RTX 3090 (23.58 GiB as CUDA reports it,
    utilisation 0.90, vLLM 0.6 profiling max_model_len tokens at once). The prediction
    reproduces the KV cache memory, tokens and maximum concurrency within 10 %."""
    log = parse_vllm_log((LOGS / name).read_text())
    length = int(log["max_model_len"])
    budget = kv_budget("llama-3-8b", usable_memory=log["total_memory"], max_model_len=length,
                       gpu_memory_utilization=log["utilization"],
                       max_num_batched_tokens=length, max_num_seqs=256)
    assert budget.kv_cache == pytest.approx(log["kv_cache"], rel=0.10)
    assert budget.kv_cache_tokens == pytest.approx(log["blocks"] * 16, rel=0.10)
    assert budget.max_concurrency == pytest.approx(log["max_concurrency"], rel=0.10)
    assert budget.weights == pytest.approx(log["weights"], rel=0.01)


def test_source_vllm_15815_qwen2_5_32b_on_two_l40s_within_10_percent() -> None:
    """vLLM issue #15815: Qwen2.5-32B-Instruct in BF16 on 2 L40S (44.42 GiB as CUDA reports
    it), tp 2, utilisation 0.90, max_model_len 10,000 and no chunked prefill (vLLM 0.7.1
    V0, so the profiling pass batches max_model_len tokens). The model is its config.json
    (64 layers, 8 KV heads of 128, ffn 27,648, vocab 152,064, q/k/v biases). The log
    prints 7.71 GiB of KV cache and 3,947 blocks; the prediction is within 10 %, and so
    is the maximum concurrency (blocks x 16 / max_model_len, vLLM's definition: the
    quoted log stops before that line's figure). Weights within 1 %."""
    from gpulesson.transformer import TransformerConfig
    qwen = TransformerConfig(hidden=5120, layers=64, heads=40, kv_heads=8, vocab=152064,
                             ffn=27648, gated_mlp=True, norm="rmsnorm", linear_bias=False,
                             qkv_bias=True, tied_embeddings=False, max_positions=0,
                             dropout=False)
    log = parse_vllm_log((LOGS / "vllm-15815-2xl40s-qwen2.5-32b-tp2.log").read_text())
    length = int(log["max_model_len"])
    budget = kv_budget(qwen, tp=2, usable_memory=log["total_memory"], max_model_len=length,
                       gpu_memory_utilization=log["utilization"],
                       max_num_batched_tokens=length, max_num_seqs=256)
    assert budget.kv_bytes_per_token == 64 * 4 * 128 * 2 * 2  # 4 of the 8 KV heads per GPU
    assert budget.kv_cache == pytest.approx(log["kv_cache"], rel=0.10)
    assert budget.kv_cache_tokens == pytest.approx(log["blocks"] * 16, rel=0.10)
    assert budget.max_concurrency == pytest.approx(log["blocks"] * 16 / length, rel=0.10)
    assert budget.weights == pytest.approx(log["weights"], rel=0.01)


def test_source_vllm_10511_llama3_8b_on_an_h100_within_10_percent() -> None:
    """vLLM pull request #10511: `vllm serve meta-llama/Meta-Llama-3-8B` with its defaults
    on one H100 (79.22 GiB as CUDA reports it, utilisation 0.90, max_model_len 8,192, no
    chunked prefill: 8,192 tokens profiled). The log prints 53.29 GiB available for the KV
    cache; the prediction is within 10 %, and so are the tokens and the concurrency those
    53.29 GiB hold at 128 KiB per token (the quoted summary has no block count). Weights
    within 1 %."""
    log = parse_vllm_log((LOGS / "vllm-10511-h100-llama3-8b.log").read_text())
    budget = kv_budget("llama-3-8b", usable_memory=log["total_memory"], max_model_len=8192,
                       gpu_memory_utilization=log["utilization"],
                       max_num_batched_tokens=8192, max_num_seqs=256)
    assert budget.kv_cache == pytest.approx(log["kv_cache"], rel=0.10)
    logged_tokens = log["kv_cache"] // (16 * budget.kv_bytes_per_token) * 16
    assert budget.kv_cache_tokens == pytest.approx(logged_tokens, rel=0.10)
    assert budget.max_concurrency == pytest.approx(logged_tokens / 8192, rel=0.10)
    assert budget.weights == pytest.approx(log["weights"], rel=0.01)


def test_source_vllm_13882_no_room_for_a_kv_cache() -> None:
    """vLLM issue #13882: a 4-bit Qwen2.5-7B on an 8 GB RTX 4060 at utilisation 0.70 has
    no memory left for the KV cache ("# cuda blocks: 0", "0.00x"); the prediction, with
    the 16-bit embedding and output layer AWQ keeps, finds none either."""
    log = parse_vllm_log((LOGS / "vllm-13882-rtx4060-qwen2.5-7b-awq.log").read_text())
    budget = kv_budget("qwen2.5-7b", usable_memory=log["total_memory"], max_model_len=4096,
                       gpu_memory_utilization=0.70, weight_dtype="int4",
                       max_num_batched_tokens=4096, max_num_seqs=256,
                       non_torch_memory=log["non_torch"])
    assert log["blocks"] == 0 and log["max_concurrency"] == 0
    assert budget.kv_cache <= 0 and budget.blocks == 0 and budget.max_concurrency == 0
    assert budget.weights == pytest.approx(log["weights"], rel=0.05)
    plan = plan_serving("qwen2.5-7b", "L4", max_model_len=4096, weight_dtype="int4",
                        usable_memory=log["total_memory"], gpu_memory_utilization=0.70,
                        max_num_batched_tokens=4096, max_num_seqs=256,
                        non_torch_memory=log["non_torch"])
    assert not plan.feasible and "KV cache" in plan.problems[0]


def test_source_vllm_21348_tokens_per_gib_of_a_4_way_split() -> None:
    """vLLM issue #21348: Qwen3-235B-A22B on 4 H100 (tp 4) prints "Available KV cache
    memory: 8.11 GiB" and "GPU KV cache size: 178,880 tokens". With 94 layers of 4 KV heads
    of 128 (its config.json), one KV head per GPU: 48,128 bytes per token, 8.11 GiB hold
    about 181K tokens, within 2 %."""
    from gpulesson.transformer import TransformerConfig
    skeleton = TransformerConfig(hidden=4096, layers=94, heads=64, kv_heads=4, head_dim=128,
                                 vocab=151936, ffn=12288, gated_mlp=True, norm="rmsnorm",
                                 linear_bias=False, tied_embeddings=False)
    log = parse_vllm_log((LOGS / "vllm-21348-4xh100-qwen3-235b-fp8.log").read_text())
    budget = kv_budget(skeleton, "H100 SXM", tp=4, max_model_len=40960)
    assert budget.kv_bytes_per_token == 48_128
    tokens = log["kv_cache"] // budget.kv_bytes_per_token
    assert tokens == pytest.approx(log["kv_cache_tokens"], rel=0.02)


def test_max_concurrency_is_vllms_definition() -> None:
    """"Maximum concurrency for N tokens per request" = KV cache tokens / max_model_len
    (vLLM PR #13596)."""
    plan = plan_serving("llama-3-8b", "H100 SXM", max_model_len=8192)
    assert plan.max_concurrency == pytest.approx(plan.kv_cache_tokens / 8192)
    assert plan.kv_cache_tokens % 16 == 0


def test_utilisation_moves_the_kv_cache_not_the_weights() -> None:
    """Each 1 % of utilisation on an 80 GB card is 0.8 GB more KV cache, nothing else."""
    a = kv_budget("llama-3-8b", "H100 SXM", max_model_len=8192, gpu_memory_utilization=0.90)
    b = kv_budget("llama-3-8b", "H100 SXM", max_model_len=8192, gpu_memory_utilization=0.91)
    assert b.weights == a.weights and b.activation_peak == a.activation_peak
    assert b.kv_cache - a.kv_cache == pytest.approx(0.01 * a.requested / 0.90)


def test_decode_step_is_weights_plus_kv_reads() -> None:
    """At batch 1 a decode step reads every weight once: 16 GB at 3.35 TB/s is 4.8 ms for
    Llama 3 8B in BF16 on an H100, at the datasheet bandwidth; the planner reads at the
    fitted DECODE_BANDWIDTH_EFFICIENCY, and the KV reads come on top."""
    plan = plan_serving("llama-3-8b", "H100 SXM", max_model_len=8192, qps=0.01,
                        prompt_tokens=128, output_tokens=16)
    assert plan.tpot == pytest.approx(16.06e9 / 3.35e12 / DECODE_BANDWIDTH_EFFICIENCY,
                                      rel=0.05)
    bare = plan_serving("llama-3-8b", "H100 SXM", max_model_len=8192, qps=0.01,
                        prompt_tokens=128, output_tokens=16, bandwidth_efficiency=1.0)
    assert bare.tpot == pytest.approx(16.06e9 / 3.35e12, rel=0.05)
    longer = plan_serving("llama-3-8b", "H100 SXM", max_model_len=8192, qps=0.01,
                          prompt_tokens=6000, output_tokens=16)
    assert longer.tpot > plan.tpot


def test_source_decode_bandwidth_efficiency_leave_one_out() -> None:
    """Published single-sequence decode times on H100 (vLLM PRs #10933 and #11000, SGLang PR
    #1401: Llama 3 8B, 7.4-7.6 ms; NVIDIA NIM: Llama 3.3 70B FP8 on two H100, 18.6-18.9 ms)
    imply 63-65 % of the datasheet HBM bandwidth. Refitted without each one, the efficiency
    predicts it within 4 %; the serving plan's time per output token at batch 1 matches the
    NIM measurement within 5 %."""
    ms = list(DECODE_MEASUREMENTS)
    assert len(ms) >= 5 and {m.model for m in ms} == {"llama-3-8b", "llama-3-70b"}
    for i, m in enumerate(ms):
        eff = fit_decode_efficiency(ms[:i] + ms[i + 1:])
        predicted = decode_step_time(m.model, m.gpu, tp=m.tp, context=m.context,
                                     weight_dtype=m.weight_dtype, bandwidth_efficiency=eff)
        assert predicted == pytest.approx(m.tpot, rel=0.04), m.source
        assert 0.55 < implied_bandwidth_efficiency(m) < 0.75
    nim = next(m for m in ms if m.context == 1500)
    nim_plan = plan_serving("llama-3-70b", "H100 SXM", tp=2, max_model_len=8192,
                            weight_dtype="fp8", qps=0.001, prompt_tokens=500,
                            output_tokens=2000)
    assert nim_plan.tpot == pytest.approx(nim.tpot, rel=0.05)
    with pytest.raises(ValueError, match="measurements"):
        fit_decode_efficiency([])


def test_slo_search_finds_replicas_and_tp() -> None:
    """20 requests/s of 2,000 tokens in and 300 out within 200 ms to the first token and
    50 ms per token: the planner returns the fewest GPUs that meet both."""
    plan = plan_serving("llama-3-70b", "H100 SXM", tp=None, max_model_len=8192, qps=20,
                        prompt_tokens=2000, output_tokens=300, ttft_slo=0.2, tpot_slo=0.05)
    assert plan.feasible
    assert plan.ttft <= 0.2 and plan.tpot <= 0.05
    assert plan.gpus == plan.tp * plan.replicas
    fewer = plan_serving("llama-3-70b", "H100 SXM", tp=plan.tp, max_model_len=8192, qps=20,
                         prompt_tokens=2000, output_tokens=300)
    assert fewer.replicas <= plan.replicas
    assert "Compared" in plan.reason


def test_impossible_slo_says_which_and_why() -> None:
    """A 10 ms TTFT for a 32K-token prompt of a 70B model cannot be met on any tp."""
    plan = plan_serving("llama-3-70b", "H100 SXM", tp=None, max_model_len=40000, qps=1,
                        prompt_tokens=32000, output_tokens=100, ttft_slo=0.01)
    assert not plan.feasible
    assert any(p.startswith("ttft_slo") and "prefill alone" in p for p in plan.problems)
    plan = plan_serving("llama-3-70b", "H100 SXM", tp=4, max_model_len=8192, qps=1,
                        tpot_slo=0.001)
    assert any(p.startswith("tpot_slo") for p in plan.problems)
    one = plan_serving("llama-3-70b", "H100 SXM", tp=3, max_model_len=8192, qps=20)
    assert any(p.startswith("qps: 20 requests/s overload 1 replica of tp = 3;")
               for p in one.problems), one.problems


def test_cost_per_million_tokens_at_the_traffic() -> None:
    """Cost = GPUs x price / output tokens per hour: at 20 requests/s of 300 tokens."""
    plan = plan_serving("llama-3-70b", "H100 SXM", tp=8, max_model_len=8192, qps=20,
                        prompt_tokens=2000, output_tokens=300)
    assert plan.throughput == pytest.approx(20 * 300)
    assert plan.cost_per_million_tokens == pytest.approx(
        6.88 * plan.gpus / (3600 * 6000) * 1e6)  # AWS p5.48xlarge, 2026-09-19


@pytest.mark.parametrize(("kwargs", "name"), [
    (dict(max_model_len=0), "max_model_len"), (dict(qps=-1.0), "qps"),
    (dict(gpu_memory_utilization=1.5), "gpu_memory_utilization"), (dict(tp=0), "tp"),
])
def test_bad_arguments(kwargs: dict, name: str) -> None:
    args = dict(max_model_len=8192)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        plan_serving("llama-3-8b", "H100 SXM", **args)
    assert GIB == 2**30


# --------------------------------------------------------------------------- issue 31, serving


def test_mla_latent_is_replicated_on_every_tp_rank() -> None:
    """vLLM and SGLang keep DeepSeek's whole latent on every rank (MLA's "KV cache can't be
    sharded along the head dimension", Ray Serve LLM docs): 61 x 576 x 2 = 70,272 bytes
    per token on each of 8 GPUs, not 8,784 (issue 31: 8x too many KV tokens)."""
    budget = kv_budget("deepseek-v3", "H200 SXM", tp=8, max_model_len=32768)
    assert budget.kv_bytes_per_token == 61 * 576 * 2
    gqa = kv_budget("llama-3-70b", "H100 SXM", tp=8, max_model_len=8192)
    assert gqa.kv_bytes_per_token == 80 * 2 * 8 * 128 * 2 / 8  # one of 8 KV heads per GPU


@pytest.mark.parametrize(("model", "gib"), [("gpt-oss-120b", 60.8), ("gpt-oss-20b", 12.8)])
def test_source_gpt_oss_checkpoint_sizes(model: str, gib: float) -> None:
    """OpenAI's gpt-oss model card (2025, table 1): checkpoint sizes 60.8 GiB and 12.8 GiB,
    the routed experts' matrices in MXFP4 and the rest in BF16, the experts' biases too
    (the checkpoint's gate_up_proj_bias and down_proj_bias tensors are BF16): within
    0.15 %."""
    from gpulesson import memory
    got = memory.checkpoint_bytes(checkpoint_parts(model, "mxfp4_experts")) / 2**30
    assert got == pytest.approx(gib, rel=0.0015)


def test_source_vllm_gpt_oss_keeps_its_rotary_table_in_fp32() -> None:
    """vLLM model_executor/models/gpt_oss.py (OAIAttention) asks get_rope for an FP32 table:
    131,072 positions x 64 values x 4 bytes = 32 MiB on gpt-oss, where a model built in its
    own dtype (Llama 3.1 8B, BF16: 131,072 x 128 x 2) keeps the 32 MiB issue #10517 shows.
    A config.json named after the checkpoint is matched too."""
    from dataclasses import replace

    from gpulesson import transformer
    assert rotary_table_bytes("gpt-oss-120b") == 131072 * 64 * 4
    assert rotary_table_bytes("gpt-oss-20b") == 131072 * 64 * 4
    llama31 = replace(transformer.preset("llama-3-8b"), context=131072, name="llama-3.1-8b")
    assert rotary_table_bytes(llama31) == 131072 * 128 * 2
    named = replace(transformer.preset("gpt-oss-20b"), name="openai/gpt-oss-20b")
    assert rotary_table_bytes(named) == 131072 * 64 * 4
    budget = kv_budget("gpt-oss-120b", usable_memory=79.22 * GIB, max_model_len=131072,
                       weight_dtype="mxfp4_experts")
    from gpulesson import memory
    assert budget.weights == memory.checkpoint_bytes(
        checkpoint_parts("gpt-oss-120b", "mxfp4_experts")) + 32 * 2**20


def test_expert_biases_are_counted_apart() -> None:
    """gpt-oss-120b: 36 MoE layers x 128 experts x (2 x 2,880 gate/up + 2,880 down) biases
    = 39,813,120 (gpt-oss-20b: 24 x 32 x 8,640); a MoE without MLP biases has none. They
    are the BF16 share of the routed experts in an 'mxfp4_experts' checkpoint."""
    assert expert_bias_params("gpt-oss-120b") == 36 * 128 * 3 * 2880 == 39_813_120
    assert expert_bias_params("gpt-oss-20b") == 24 * 32 * 3 * 2880
    assert expert_bias_params("qwen3-30b-a3b") == 0
    assert expert_bias_params("llama-3-8b") == 0
    from gpulesson import transformer
    parts = checkpoint_parts("gpt-oss-120b", "mxfp4_experts")
    routed = transformer.moe_breakdown(transformer.preset("gpt-oss-120b"))["routed_experts"]
    assert parts["mxfp4"] == routed - 39_813_120


def test_source_vllm_6746_llama_405b_fp8_weights_per_gpu() -> None:
    """vLLM issue #6746: Meta's Llama 3.1 405B FP8 on 8 H100 loads 57.752 GiB per GPU. Meta
    quantises the feed-forward weights of all but the first and last layers (Dubey et al.
    2024, section 6.2); attention, those two layers and the embeddings stay in BF16. The
    mixed checkpoint comes within 2 % of the log; calling it all FP8 is 17 % low (issue 31:
    weights per GPU 17 % low)."""
    log = 57.752 * 2**30
    mixed = kv_budget("llama-3.1-405b", "H100 SXM", tp=8, max_model_len=8192,
                      weight_dtype="fp8_ffn").weights
    flat = kv_budget("llama-3.1-405b", "H100 SXM", tp=8, max_model_len=8192,
                     weight_dtype="fp8").weights
    assert mixed / log - 1 == pytest.approx(0, abs=0.02)
    assert flat / log - 1 == pytest.approx(-0.17, abs=0.01)


def test_source_vllm_20665_mla_latent_on_every_tp_rank() -> None:
    """vLLM pull request #20665: DeepSeek-V2-Lite on 4 L4, tp 2 x pp 2. The first stage (14
    of 27 layers, 12.13 GiB of KV cache per GPU) limits the cache to 807,792 tokens: 14 x
    576 x 2 bytes per token on each of its two tensor-parallel GPUs, the whole latent. Split
    over the two ranks (the old planner) it would hold twice as many."""
    from dataclasses import replace

    from gpulesson import inference, transformer
    stage = replace(transformer.preset("deepseek-v3"), layers=14)  # same 512 + 64 latent
    per_gpu = inference.kv_cache_bytes_per_token_per_gpu(stage, tp=2)
    tokens = int(12.13 * 2**30 // (16 * per_gpu)) * 16
    assert per_gpu == 14 * 576 * 2
    assert tokens / 807_792 - 1 == pytest.approx(0, abs=0.002)


def test_source_vllm_15871_mla_cache_of_one_request() -> None:
    """vLLM issue #15871: DeepSeek-V2-Lite needs "0.95 GiB KV cache" for one 32,768-token
    request: 27 layers of one 576-value latent per token."""
    from dataclasses import replace

    from gpulesson import inference, transformer
    lite = replace(transformer.preset("deepseek-v3"), layers=27)
    need = inference.kv_cache_bytes_per_token_per_gpu(lite, tp=2) * 32768
    assert round(need / 2**30, 2) == 0.95


def test_source_lmcache_3430_qwen3_8b_tokens_and_concurrency() -> None:
    """LMCache issue #3430 (vLLM >= 0.21): 6.37 GiB of KV cache hold 46,368 tokens of
    Qwen3-8B, 2.83 requests of 16,384 tokens: 147,456 bytes per token in BF16."""
    budget = kv_budget("qwen3-8b", "H100 SXM", max_model_len=16384)
    tokens = int(6.37 * 2**30 // (16 * budget.kv_bytes_per_token)) * 16
    assert tokens / 46_368 - 1 == pytest.approx(0, abs=0.002)
    assert round(46_368 / 16384, 2) == 2.83


def test_serving_across_nodes_uses_every_nic() -> None:
    """tp = 16 on 8-GPU H100 servers: the all-reduces leave each server through its eight
    NICs (the network as built), not over one NIC nor at NVLink speed."""
    from gpulesson.planning._adapt import gpu_view, model_view
    from gpulesson.planning.serving import _Speed
    speed = _Speed(model_view("llama-3.1-405b"), gpu_view("H100 SXM"), 16, "bf16", 1.0, 1.0)
    assert speed.link == pytest.approx(370e9)


def test_source_vllm_10511_sampler_peak_of_the_profiling_run() -> None:
    """vLLM PR #10511 (0.6.5): Llama 3 8B profiles 8,192 tokens in 256 sequences and prints
    an activation peak of 1.26 GiB, on one GPU and on two alike, more than its MLP (0.84 GiB
    at tp 1): the peak is the sampler's sort over 256 x 128,256 logits, 38 bytes each, beside
    the 8,192 x 4,096 BF16 output of the pass and the 256 rows gathered from it, plus the
    H100's 32 MiB cuBLAS workspace: 1.258 GiB, within 0.5 %."""
    log = parse_vllm_log((LOGS / "vllm-10511-h100-llama3-8b.log").read_text())
    assert sampler_peak_bytes(256, 128256) == 256 * 128256 * 38
    blas = cublas_workspace_bytes("H100 SXM")
    for tp in (1, 2):
        peak = profile_peak_bytes("llama-3-8b", 8192, 256, tp=tp, workspace=blas)
        assert peak == sampler_peak_bytes(256, 128256) + (8192 + 256) * 4096 * 2 + blas
        assert peak == pytest.approx(log["activation_peak"], rel=0.005)
        assert forward_peak_bytes("llama-3-8b", 8192, tp=tp) < peak


def test_source_vllm_21429_moe_profiling_peak_is_the_sampler() -> None:
    """vLLM PR #21429 (V1, July 2025): Qwen3-235B-A22B-FP8 on 4 H200 prints a torch peak
    of 5.62 GiB. vLLM V1 profiles 8,192 tokens, then samples 1,024 rows of 151,936 logits,
    beside the H200's 32 MiB cuBLAS workspace: 5.61 GiB, within 0.5 %; the fused-MoE
    workspace of the pass (8 experts x max(2 x 1,536/4, 4,096) values a token) is far below
    it."""
    log = parse_vllm_log((LOGS / "vllm-21429-4xh200-qwen3-235b-fp8.log").read_text())
    peak = profile_peak_bytes("qwen3-235b-a22b", 8192, 1024, tp=4,
                              workspace=cublas_workspace_bytes("H200"))
    assert peak == pytest.approx(log["activation_peak"], rel=0.005)
    assert forward_peak_bytes("qwen3-235b-a22b", 8192, tp=4) < peak / 4


def test_source_pytorch_cublas_workspace_by_architecture() -> None:
    """PyTorch aten/src/ATen/cuda/CublasHandlePool.cpp (parseChosenWorkspaceSize): the
    cuBLAS workspace defaults to ":4096:8", 32 MiB, on Hopper ("32MiB for Hopper"), else to
    ":4096:2:16:8", 4,096 KiB x 2 + 16 KiB x 8. It is allocated through the caching
    allocator at the first matrix product, so vLLM's profiling peak carries it: kv_budget
    adds it by the GPU's architecture."""
    assert cublas_workspace_bytes("H100 SXM") == cublas_workspace_bytes("H200") == 32 * 2**20
    assert cublas_workspace_bytes("A100 80GB") == CUBLAS_WORKSPACE_DEFAULT == 8 * 2**20 + 2**17
    assert cublas_workspace_bytes("L40S") == cublas_workspace_bytes() == CUBLAS_WORKSPACE_DEFAULT
    hopper = kv_budget("llama-3-8b", "H100 SXM", max_model_len=8192)
    assert hopper.workspace == 32 * 2**20
    assert hopper.activation_peak == max(hopper.forward_peak, hopper.sampler_peak) + 32 * 2**20
    bare = kv_budget("llama-3-8b", "H100 SXM", max_model_len=8192, workspace=0)
    assert hopper.kv_cache == bare.kv_cache - 32 * 2**20
    with pytest.raises(ValueError, match="workspace"):
        profile_peak_bytes("llama-3-8b", 8192, 256, workspace=-1)
    with pytest.raises(ValueError, match="unknown GPU"):
        cublas_workspace_bytes("RTX 9999")


def test_source_vllm_10517_forward_peak_slope() -> None:
    """vLLM issue #10517: between 20,000 and 29,000 profiled tokens the peak grows by 0.92
    GiB on Llama 3.1 8B, 110,592 bytes per token: 3 x 14,336 + 3 x 4,096 values of 2 bytes
    (the forward pass is the peak at these lengths, not the sampler)."""
    a = parse_vllm_log((LOGS / "vllm-10517-rtx3090-llama3.1-8b-20k.log").read_text())
    b = parse_vllm_log((LOGS / "vllm-10517-rtx3090-llama3.1-8b-29k.log").read_text())
    slope = (b["activation_peak"] - a["activation_peak"]) / 9000
    per_token = forward_peak_bytes("llama-3-8b", 1)
    assert per_token == (3 * 14336 + 3 * 4096) * 2
    assert slope == pytest.approx(per_token, rel=0.02)
    assert profile_peak_bytes("llama-3-8b", 20000, 256) == forward_peak_bytes("llama-3-8b",
                                                                             20000)


def test_source_vllm_23278_marlin_pads_gpt_oss_experts() -> None:
    """vLLM issue #23278 (0.10.1, Marlin MXFP4 kernel): gpt-oss-120b takes 65.97 GiB, not
    the checkpoint's 60.8: Marlin wants n % 256 and k % 128, so each 2,880 x 2,880 expert
    is stored 2,944 x 3,072 and its BF16 biases with it (vLLM quantization/mxfp4.py). The
    padding adds 5.13 GiB and the sum is within 0.1 %."""
    log = parse_vllm_log((LOGS / "vllm-23278-h100-gpt-oss-120b-v0.10.1.log").read_text())
    pad = expert_padding_bytes("gpt-oss-120b", "mxfp4_experts", intermediate_multiple=128,
                               hidden_multiple=256)
    budget = kv_budget("gpt-oss-120b", usable_memory=79.22 * GIB, max_model_len=131072,
                       weight_dtype="mxfp4_experts", extra_weight_bytes=pad)
    assert pad / GIB == pytest.approx(5.13, abs=0.01)
    assert budget.weights == pytest.approx(log["weights"], rel=0.001)
    assert expert_padding_bytes("llama-3-8b", "bf16", intermediate_multiple=128) == 0
    with pytest.raises(ValueError, match="hidden_multiple"):
        expert_padding_bytes("gpt-oss-120b", "mxfp4_experts", hidden_multiple=0)


def test_source_vllm_33155_triton_keeps_the_mxfp4_scales_twice() -> None:
    """vLLM issue #33155 (0.14.1, Triton MXFP4 backend on an H100): gpt-oss-120b takes 64.38
    GiB. The Triton path (vLLM quantization/mxfp4.py) swizzles weights and scales into new
    tensors, deletes the old weights but not the old scales (one byte per 32 expert values,
    3.34 GiB) and upcasts the expert biases to FP32 (0.07 GiB): within 0.5 %. Split over
    tensor parallelism, each GPU keeps its share."""
    log = parse_vllm_log((LOGS / "vllm-33155-h100-gpt-oss-120b-v0.14.1.log").read_text())
    extra = mxfp4_triton_extra_bytes("gpt-oss-120b")
    budget = kv_budget("gpt-oss-120b", usable_memory=79.22 * GIB, max_model_len=131072,
                       weight_dtype="mxfp4_experts", extra_weight_bytes=extra)
    assert extra / GIB == pytest.approx(3.41, abs=0.01)
    assert budget.weights == pytest.approx(log["weights"], rel=0.005)
    assert mxfp4_triton_extra_bytes("gpt-oss-120b", tp=2) == extra / 2
    assert mxfp4_triton_extra_bytes("llama-3-8b") == 0
    with pytest.raises(ValueError, match="tp"):
        mxfp4_triton_extra_bytes("gpt-oss-120b", tp=0)


def test_full_load_is_a_throughput_the_traffic_can_reach() -> None:
    """Without a traffic the plan runs one replica at full load. Its throughput counted
    decode steps only (Llama 3 8B on an H100, 1,024 tokens in and 256 out: 10,912 output
    tokens/s), while the same replica overloads beyond about 5,800 output tokens/s of
    traffic, because every 256 tokens out bring a 1,024-token prompt to prefill. The
    full-load step now prefills the prompts that replace the sequences it finishes: the
    two agree within a few per cent."""
    def replica_holds(qps: float) -> bool:
        plan = plan_serving("llama-3-8b", "H100 SXM", max_model_len=8192, qps=qps)
        return plan.feasible and plan.replicas == 1

    low, high = 1.0, 1000.0
    while high / low > 1.001:
        mid = (low * high) ** 0.5
        low, high = (mid, high) if replica_holds(mid) else (low, mid)
    sustained = low * 256
    full = plan_serving("llama-3-8b", "H100 SXM", max_model_len=8192)
    assert full.throughput == pytest.approx(full.batch / full.tpot)
    assert full.throughput == pytest.approx(sustained, rel=0.1)


def test_latency_limits_are_met_at_full_load_by_fewer_sequences() -> None:
    """Walk of 2026-12-07: without a traffic the plan ignored ttft_slo and tpot_slo and
    read "Feasible: yes" beside 104 ms per token against a 50 ms limit (Llama 3 70B in FP8
    on 2 H100s). With limits the full replica now runs the most sequences that still meet
    them (vLLM's max_num_seqs lowered to that), a smaller throughput than the cache allows;
    a limit even one sequence misses is a problem naming it."""
    kw = dict(tp=2, weight_dtype="fp8", kv_dtype="fp8", max_model_len=8192,
              prompt_tokens=2000, output_tokens=300)
    free = plan_serving("llama-3-70b", "H100 SXM", **kw)
    assert free.feasible and free.tpot > 0.05
    bound = plan_serving("llama-3-70b", "H100 SXM", tpot_slo=0.05, ttft_slo=0.2, **kw)
    assert bound.feasible, bound.problems
    assert bound.tpot <= 0.05 and bound.ttft <= 0.2
    assert 1 <= bound.batch < free.batch and bound.batch == int(bound.batch)
    assert bound.throughput < free.throughput
    tighter = plan_serving("llama-3-70b", "H100 SXM", tpot_slo=0.9 * bound.tpot, **kw)
    assert tighter.batch < bound.batch and tighter.tpot <= 0.9 * bound.tpot
    tight = plan_serving("llama-3-70b", "H100 SXM", tpot_slo=0.001, **kw)
    assert not tight.feasible and tight.batch == 1
    assert any(p.startswith("tpot_slo (1.00 ms) cannot be met on tp = 2") and
               "even for one sequence" in p for p in tight.problems), tight.problems


def test_a_decoding_request_is_never_faster_than_one_sequences_step() -> None:
    """Walk of 2026-12-07: at 0.01 requests/s of 120,000-token prompts (Llama 3 8B, one
    H100) the plan read 9.0 ms per output token while saying that one sequence's step takes
    14.6 ms: the step read the KV cache of the time-averaged batch, 0.16 sequences, though
    a request that decodes is itself in the batch. A request now decodes beside itself and,
    on average, the time-averaged batch of others (Poisson arrivals see time averages):
    never faster than the step of one sequence, and equal to it as the traffic vanishes."""
    cfg = dataclasses.replace(transformer.preset("llama-3-8b"), context=0)
    kw = dict(max_model_len=131072, prompt_tokens=120_000, output_tokens=1000)
    quiet = plan_serving(cfg, "H100 SXM", qps=0.01, **kw)
    alone = decode_step_time(cfg, "H100 SXM", batch=1.0, context=120_500,
                             bandwidth_efficiency=DECODE_BANDWIDTH_EFFICIENCY)
    assert quiet.feasible, quiet.problems
    assert quiet.tpot >= alone and quiet.batch < 1
    vanishing = plan_serving(cfg, "H100 SXM", qps=1e-6, **kw)
    assert vanishing.tpot == pytest.approx(alone, rel=0.02)


def test_a_context_the_cache_cannot_hold_names_the_fixes_that_work() -> None:
    """Walk of 2026-12-07: Llama 3.1 70B in BF16 on tp 2 cannot hold one 131,072-token
    request, and the only fixes offered were a shorter max_model_len or a higher
    gpu_memory_utilization, which adds about 4 GB where one request needs 20 GiB per GPU.
    The message names the fixes that make room, and one of them (tp 4) does."""
    kw = dict(max_model_len=131072, prompt_tokens=100_000, output_tokens=1000)
    short = plan_serving("llama-3.1-70b", "H100 SXM", tp=2, **kw)
    problem = next(p for p in short.problems if p.startswith("max_model_len"))
    for fix in ("more tp", "FP8 KV cache", "lighter weights", "gpu_memory_utilization"):
        assert fix in problem, (fix, problem)
    # only the fixes these settings leave open
    fp8 = plan_serving("llama-3.1-70b", "H100 SXM", tp=2, kv_dtype="fp8", **kw)
    problem = next(p for p in fp8.problems if p.startswith("max_model_len"))
    assert "FP8 KV cache" not in problem and "more tp" in problem, problem
    assert not plan_serving("llama-3.1-70b", "H100 SXM", tp=2, gpu_memory_utilization=0.95,
                            **kw).feasible
    assert plan_serving("llama-3.1-70b", "H100 SXM", tp=4, **kw).feasible


def test_requests_longer_than_max_model_len_are_not_served() -> None:
    """A 10,000-token prompt with 1,000 tokens out does not fit a max_model_len of 8,192:
    vLLM rejects the request, yet the plan was feasible. Nor does vLLM start with a
    max_model_len beyond the model's positions (Llama 3 8B: 8,192) unless told to."""
    long = plan_serving("llama-3-8b", "H100 SXM", max_model_len=8192, qps=1,
                        prompt_tokens=10_000, output_tokens=1000)
    assert not long.feasible
    assert any("prompt_tokens + output_tokens (10,000 + 1,000 = 11,000) exceed max_model_len "
               "(8,192)" in x for x in long.problems)
    beyond = plan_serving("llama-3-8b", "H100 SXM", max_model_len=32_768)
    assert not beyond.feasible
    assert any("max_model_len (32,768) exceeds the 8,192 positions" in x
               for x in beyond.problems)
    assert plan_serving("llama-3-8b", "H100 SXM", max_model_len=8192, qps=1,
                        prompt_tokens=7000, output_tokens=1192).feasible


def test_tp_must_split_or_copy_the_kv_heads() -> None:
    """vLLM splits the KV heads over the tensor-parallel GPUs, or copies each over
    tp / kv_heads of them (its Llama attention asserts one or the other): 24 heads with 8
    KV heads cannot run on tp 6, though 6 divides the heads. On a 72-GPU NVLink domain the
    planner chose among tp 1, 2, 3, 4, 6, ..."""
    from gpulesson.transformer import TransformerConfig
    cfg = TransformerConfig(hidden=3072, layers=28, heads=24, kv_heads=8, head_dim=128,
                            vocab=128256, ffn=8192, gated_mlp=True, norm="rmsnorm",
                            linear_bias=False, tied_embeddings=True, name="custom 24/8")
    six = plan_serving(cfg, "H100 SXM", tp=6, max_model_len=8192)
    assert not six.feasible
    assert any("tp = 6 must divide the 8 KV heads, or be a multiple of them" in p
               for p in six.problems)
    chosen = plan_serving(cfg, "GB200 NVL72", tp=None, max_model_len=8192, qps=50)
    assert chosen.tp in (1, 2, 4, 8, 24)
    assert all(f"tp {t}:" not in chosen.reason for t in (3, 6, 12))


def test_pcie_cards_of_one_server_can_split_a_model() -> None:
    """Llama 3 70B in INT4 on four L4s (one g6.12xlarge) is a common small deployment: vLLM
    runs tp 4 over PCIe. The planner refused any tp above 1 on cards without NVLink ("its
    all-reduces would cross the network"), so no layout served the model at all; tp 16
    still spans more than one server."""
    four = plan_serving("llama-3-70b", "L4", tp=4, max_model_len=8192, weight_dtype="int4",
                        qps=0.5)
    assert four.feasible and four.gpus == 4
    chosen = plan_serving("llama-3-70b", "L4", tp=None, max_model_len=8192,
                          weight_dtype="int4", qps=0.5)
    assert chosen.feasible and chosen.tp == 4
    # the all-reduces run at the card's PCIe link, not at the assumed network NIC
    pcie = gpu_view("L4").nvlink_bandwidth
    speed = serving._Speed(model_view("llama-3-70b"), gpu_view("L4"), 4, "int4", 0.0, 0)
    assert speed.link == pytest.approx(achievable_bandwidth(pcie, "network"))
    sixteen = plan_serving("llama-3-70b", "L40S", tp=16, max_model_len=8192)
    assert any("tp = 16 spans more than a server of 8 L40S cards" in p
               for p in sixteen.problems)


def test_a_sliding_window_layer_reads_only_its_window_each_step() -> None:
    """Gemma 2 9B keeps 4,096 tokens in half its layers (21 local, 21 global). At 6,000
    tokens in and 1,000 out a decode step reads those layers' windows, not the whole
    context: its time per token falls below the same model's without windows, at about the
    same batch (the audit of 2026-12-06 found every layer read at full length)."""
    gemma = transformer.preset("gemma-2-9b")
    without = dataclasses.replace(gemma, sliding_window=0, sliding_window_pattern=0)
    kwargs = dict(max_model_len=8192, prompt_tokens=6000, output_tokens=1000)
    windowed, full = (plan_serving(m, "H100 SXM", **kwargs) for m in (gemma, without))
    assert windowed.batch == pytest.approx(full.batch, rel=0.01)
    assert windowed.tpot < 0.95 * full.tpot


def test_the_notes_name_the_price_and_efficiency_given_not_the_defaults() -> None:
    """Lesson 8 plans a rented H100 at $3.20 an hour: the plan's notes said "price: $6.88
    per GPU-hour: AWS p5.48xlarge" while its cost used $3.20 (audit of 2026-12-06)."""
    plan = plan_serving("llama-3-8b", "H100 SXM", max_model_len=4096, usd_per_gpu_hour=3.20)
    assert [n for n in plan.notes if n.startswith("price")] == [
        "price: $3.20 per GPU-hour, as given"]
    view = gpu_view("H100 SXM", matmul_efficiency=0.7)
    assert "matmul efficiency 70.0%, as given" in view.notes
    assert any(n.startswith("price: $6.88") for n in gpu_view("H100 SXM").notes)


def test_a_hybrid_model_is_refused_with_its_name_not_sized_wrongly() -> None:
    """Qwen3-Next keeps a fixed Gated DeltaNet state in 36 of its 48 layers; vLLM V1 pages
    it beside the KV cache with its own block size and padding, which the planners do not
    model: kv_budget, plan_serving and decode_step_time refuse it, naming the model."""
    path = (Path(__file__).resolve().parents[1] / "data" / "hf_configs"
            / "qwen3_next__Qwen3-Next-80B-A3B-Instruct.json")
    cfg = transformer.from_hf_config(path, name="Qwen3-Next-80B-A3B")
    match = r"Qwen3-Next-80B-A3B has 36 linear-attention layers of 48"
    with pytest.raises(ValueError, match="kv_budget: " + match):
        kv_budget(cfg, "H200", max_model_len=32768)
    with pytest.raises(ValueError, match="plan_serving: " + match):
        plan_serving(cfg, "H200", tp=2, max_model_len=32768)
    with pytest.raises(ValueError, match="decode_step_time: " + match):
        decode_step_time(cfg, "H200", tp=2)


def test_the_kv_layout_helpers_refuse_a_hybrid_model_too() -> None:
    """Audit (2026-12): kv_cache_groups and log_checks.request_kv_bytes, public helpers of
    the same planners, sized Qwen3-Next silently: one group of 48 full-attention layers,
    and 50.3 MB for a request of 8,192 tokens, a quarter of its 12 attention layers'
    201.3 MB (the 36 Gated DeltaNet layers' state left out). They now refuse it as
    kv_budget does."""
    from gpulesson.planning.log_checks import request_kv_bytes

    path = (Path(__file__).resolve().parents[1] / "data" / "hf_configs"
            / "qwen3_next__Qwen3-Next-80B-A3B-Instruct.json")
    cfg = transformer.from_hf_config(path, name="Qwen3-Next-80B-A3B")
    match = r"Qwen3-Next-80B-A3B has 36 linear-attention layers of 48"
    with pytest.raises(ValueError, match="kv_cache_groups: " + match):
        serving.kv_cache_groups(cfg)
    with pytest.raises(ValueError, match="request_kv_bytes: " + match):
        request_kv_bytes(cfg, max_model_len=8192)


def test_source_latent_attention_decode_counts_its_absorbed_arithmetic() -> None:
    """A decode step's attention is a roofline of its own: the cache it reads or its FLOPs
    (inference.decode_attention_flops, latent attention absorbed as vLLM runs it), at the
    matmul rate. DeepSeek-V3 on one H200 with an FP8 cache does about 484 FLOPs a byte
    (FlashMLA's h_q (d_k + d_v) / d_k at one byte), past the ridge: doubling every context
    from 65,536 to 131,072 tokens at batch 128 adds the FLOPs, not the bytes. On tp = 8
    each GPU keeps the whole latent and runs 16 heads: 60 FLOPs a byte, memory-bound,
    the bytes set it. Grouped-query attention (8 FLOPs a byte) is left as it was."""
    from gpulesson import inference
    from gpulesson.planning.serving import _Speed
    v3, h200 = transformer.preset("deepseek-v3"), gpu_view("H200")
    args = {"weight_dtype": "fp8", "kv_dtype": "fp8", "batch": 128}
    rate = h200.peak("bf16") * h200.matmul_efficiency
    grow = (decode_step_time(v3, "H200", context=131072, **args)
            - decode_step_time(v3, "H200", context=65536, **args))
    flops = 128 * (inference.decode_attention_flops(v3, context_len=131072)
                   - inference.decode_attention_flops(v3, context_len=65536))
    assert grow == pytest.approx(flops / rate, rel=1e-9)
    read = 128 * (inference.decode_kv_read_bytes(v3, context=131072, bytes_per_element=1)
                  - inference.decode_kv_read_bytes(v3, context=65536, bytes_per_element=1))
    assert grow > 2 * read / h200.bandwidth  # the bytes alone: half the time or less
    wide = (decode_step_time(v3, "H200", tp=8, context=131072, **args)
            - decode_step_time(v3, "H200", tp=8, context=65536, **args))
    assert wide == pytest.approx(8 * read / (8 * h200.bandwidth), rel=1e-9)
    # grouped-query attention: the step is weights + cache reads, as before
    llama, h100 = model_view("llama-3-70b"), gpu_view("H100 SXM")
    for context in (1024, 32768, 131072):
        per = inference.kv_cache_bytes_per_token_per_gpu(llama.cfg, tp=2)
        speed = _Speed(llama, h100, 2, "fp8", per, context)
        reads = (speed._experts_read(64) + 64 * speed.kv_read) / speed.bw
        assert speed.step(64) == pytest.approx(reads + speed.comm(64), rel=1e-12)


def test_a_mixed_step_counts_the_prefill_chunks_attention() -> None:
    """A step that also prefills ``prefill_tokens`` of prompts of ``prompt`` tokens does
    their attention too (ModelView.prefill_attention_flops per prompt token), as prefill()
    does: Llama 3 8B, 8,192 tokens of 32,768-token prompts on one H100."""
    from gpulesson.planning.serving import _Speed
    mv, gv = model_view("llama-3-8b"), gpu_view("H100 SXM")
    speed = _Speed(mv, gv, 1, "bf16", 131072.0, 33000, prompt=32768)
    rate = gv.peak("bf16") * gv.matmul_efficiency
    attention = mv.prefill_attention_flops(32768) / 32768 * 8192 / rate
    gemm = 2 * mv.active_params * 8192 / rate  # compute-bound with the chunk, read-bound without
    assert 2 * mv.active_params / rate < speed.weights / speed.bw < gemm
    added = speed.step(1, 8192) - speed.step(1)
    assert added == pytest.approx(gemm + 2 * mv.active_params / rate - speed.weights / speed.bw
                                  + attention, rel=1e-9)
    assert attention > 0.2 * gemm  # no small term at this prompt length
    # the whole prompt in one step and prefill() agree where compute sets both
    assert speed.step(0.0, 32768) == pytest.approx(speed.prefill(32768), rel=1e-9)


@pytest.mark.parametrize("model", ["deepseek-v3.2", "glm-5.1"])
def test_decode_step_time_reads_a_sparse_models_cache_as_plan_serving_pages_it(model):
    """decode_step_time and plan_serving describe one vLLM step: a sparse-attention
    model's FP8 cache is the 656-byte fp8_ds_mla record a layer plus its 132-byte indexer
    key (DeepSeek-V3.2 61 x 788 = 48,068 bytes a token, not 61 x (576 + 132) = 43,188),
    and ``kv_dtype="fp8_ds_mla"``, which kv_budget and plan_serving take, means the same.
    At 100,000 tokens of context and batch 64 on 8 H200s the step is the planner's own
    step of that cache."""
    from gpulesson.planning.sparse import vllm_kv_bytes_per_token
    mv, gv = model_view(model), gpu_view("H200")
    per_token = vllm_kv_bytes_per_token(mv, tp=8, kv_dtype="fp8")
    planner = serving._Speed(mv, gv, 8, "fp8", per_token, 100_000).step(64)
    for kv in ("fp8", "fp8_ds_mla"):
        got = decode_step_time(model, "H200", tp=8, batch=64, context=100_000,
                               weight_dtype="fp8", kv_dtype=kv)
        assert got == pytest.approx(planner, rel=1e-12)


def test_vllm_v1_defaults_keep_the_a100_small():
    """vLLM V1's vllm serve takes 8,192 batched tokens and 1,024 sequences on a GPU of 70
    GiB or more, but not on an A100 (vLLM PR #17885; tests/engine/test_arg_utils.py:
    ``device_memory >= 70 * GiB_bytes and "a100" not in device_name``): an A100 80GB
    profiles 2,048 tokens and samples 256 rows, an H100 8,192 and 1,024."""
    for gpu, tokens, rows in (("A100 80GB", 2048, 256), ("H100 SXM", 8192, 1024),
                              ("MI300X", 8192, 1024), ("A100 40GB", 2048, 256)):
        b = kv_budget("llama-3-8b", gpu, max_model_len=8192)
        assert b.forward_peak == serving.forward_peak_bytes("llama-3-8b", tokens), gpu
        mv = model_view("llama-3-8b")
        assert b.sampler_peak == serving.sampler_moment_bytes(mv, tokens, rows), gpu
    # the reported memory alone (no GPU named) follows the memory rule
    total = gpu_view("A100 80GB").usable_memory
    b = kv_budget("llama-3-8b", max_model_len=8192, usable_memory=total)
    assert b.forward_peak == serving.forward_peak_bytes("llama-3-8b", 8192)


def test_full_load_batch_stops_at_vllms_default_max_num_seqs():
    """Without max_num_seqs a replica at full load runs at most vLLM's default sequences,
    the same default kv_budget profiles with: 256 on an L40S (48 GB) or an A100, 1,024 on
    an H100. Llama 3.2 1B's cache on an L40S holds about 1.2 M tokens, room for far more
    than 256 requests of 768 tokens, so the batch is the cap; set explicitly, the cap is
    the setting."""
    kw = dict(max_model_len=4096, prompt_tokens=512, output_tokens=256)
    for gpu, cap in (("L40S", 256), ("A100 80GB", 256), ("H100 SXM", 1024)):
        plan = plan_serving("llama-3.2-1b", gpu, **kw)
        assert plan.budget.sequences(768) > cap
        assert plan.batch == cap, gpu
    assert plan_serving("llama-3.2-1b", "L40S", max_num_seqs=512, **kw).batch == 512


def test_traffic_plan_keeps_each_replica_within_max_num_seqs():
    """Under a traffic, a replica runs at most max_num_seqs sequences (vLLM queues the
    rest): Llama 3.2 1B on L40S cards, 20 requests/s of 100 tokens in and 1,000 out, would
    keep about 295 sequences in flight on one card, past vLLM's default of 256 there
    (its cache holds about 1,088), so one card cannot serve it; every replica stays within
    the cap, and with max_num_seqs=512 one card does."""
    kw = dict(max_model_len=2048, prompt_tokens=100, output_tokens=1000, qps=20)
    plan = plan_serving("llama-3.2-1b", "L40S", **kw)
    assert plan.feasible and plan.batch <= 256 and plan.replicas >= 2
    wide = plan_serving("llama-3.2-1b", "L40S", max_num_seqs=512, **kw)
    assert wide.feasible and wide.replicas == 1 and 256 < wide.batch <= 512


#: Llama 3 70B on 8 H100s at full load, the lesson 10 dashboard's prompt and output.
_FULL_LOAD = dict(tp=8, max_model_len=8192, qps=None, prompt_tokens=2000, output_tokens=300)


def test_fp8_checkpoints_run_their_products_on_fp8_tensor_cores():
    """Audit (2026-12-06): the serving planner ran every checkpoint's matrix products at
    the BF16 peak, so Llama 3 70B in FP8 on 8 H100s served 3,212 tokens/s at full load,
    no more than in BF16 (3,208), while vLLM runs FP8 checkpoints as W8A8 on FP8 tensor
    cores (compute capability 8.9 and later). The compute-bound prefill (and the step's
    products) now run at the FP8 rate: faster than BF16, by at most the measured FP8
    GEMM rate over the BF16 one (the training planner's table)."""
    bf16 = plan_serving("llama-3-70b", "H100 SXM", weight_dtype="bf16", **_FULL_LOAD)
    fp8 = plan_serving("llama-3-70b", "H100 SXM", weight_dtype="fp8", **_FULL_LOAD)
    assert fp8.throughput > 1.05 * bf16.throughput
    view = gpu_view("H100 SXM")
    table = perf_model.GEMM_EFFICIENCY  # the training planner's sourced GEMM rates
    ratio = (view.peak("fp8") * table[("Hopper", "fp8")][0]
             / (view.peak("bf16") * table[("Hopper", "bf16")][0]))
    mv, per_token = model_view("llama-3-70b"), 0.0
    prefill = {w: serving._Speed(mv, view, 8, w, per_token, 2000).prefill(2000)
               for w in ("bf16", "fp8")}
    assert prefill["fp8"] < prefill["bf16"] / 1.1
    assert prefill["bf16"] / prefill["fp8"] <= ratio
    assert serving._Speed(mv, view, 8, "fp8", 0.0, 2000).gemm_rate <= 8 * ratio * view.peak(
        "bf16") * view.matmul_efficiency
    assert serving.serving_matmul_dtype("fp8", "H100 SXM") == "fp8"
    assert serving.serving_matmul_dtype("fp8", "L40S") == "fp8"
    assert serving.serving_matmul_dtype("fp8", "MI300X") == "fp8"
    assert serving.serving_matmul_dtype("nvfp4", "B200") == "fp4"
    assert serving.serving_matmul_dtype("nvfp4", "H100 SXM") == "bf16"
    assert serving.serving_matmul_dtype("mxfp4_experts", "H100 SXM") == "bf16"
    assert serving.serving_matmul_dtype("bf16", "H100 SXM") == "bf16"


def test_fp8_on_ampere_stays_weight_only():
    """vLLM runs an FP8 checkpoint on an A100 (no FP8 tensor cores) weight-only, through
    FP8 Marlin: BF16 arithmetic on FP8 weights. Its products stay at the BF16 rate; only
    the lighter weights change the plan."""
    assert serving.serving_matmul_dtype("fp8", "A100 80GB") == "bf16"
    view = gpu_view("A100 80GB")
    mv = model_view("llama-3-70b")
    assert (serving._Speed(mv, view, 4, "fp8", 0.0, 2000).gemm_rate
            == serving._Speed(mv, view, 4, "bf16", 0.0, 2000).gemm_rate
            == view.peak("bf16") * view.matmul_efficiency * 4)


def test_unknown_weight_dtypes_are_still_refused():
    with pytest.raises(ValueError, match="fp7"):
        plan_serving("llama-3-70b", "H100 SXM", weight_dtype="fp7", **_FULL_LOAD)
    with pytest.raises(ValueError, match="fp7"):
        serving.serving_matmul_dtype("fp7", "H100 SXM")
    with pytest.raises(TypeError, match="weight_dtype"):
        serving.serving_matmul_dtype(8, "H100 SXM")


def test_kv_dtype_takes_vllms_names_and_auto() -> None:
    """Audit (2026-12-06): kv_budget and plan_serving took "int4" and "fp4" for the KV
    cache, which vLLM's --kv-cache-dtype does not offer (CacheDType in
    vllm/config/cache.py: auto, float16, bfloat16, fp8, fp8_e4m3, fp8_e5m2, fp8_ds_mla
    ...), and refused "auto", its default: the model's dtype (kv_cache_dtype =
    model_config.dtype), BF16 for Llama 3 70B, and fp8_ds_mla for DeepSeek-V3.2
    (DeepseekV32ForCausalLM.verify_and_update_config). Now "auto" is that, and any other
    name is refused, naming the argument, the value and the names taken."""
    kw = dict(tp=8, max_model_len=8192)
    auto = serving.kv_budget("llama-3-70b", "H100 SXM", kv_dtype="auto", **kw)  # type: ignore[arg-type]
    bf16 = serving.kv_budget("llama-3-70b", "H100 SXM", kv_dtype="bf16", **kw)  # type: ignore[arg-type]
    fp8 = serving.kv_budget("llama-3-70b", "H100 SXM", kv_dtype="fp8", **kw)  # type: ignore[arg-type]
    assert auto == bf16 and fp8.kv_cache_tokens > auto.kv_cache_tokens

    from gpulesson.planning.sparse import VLLM_KV_DTYPES, vllm_kv_bytes_per_token
    # 80 layers x 8 KV heads x 128 x 2 (K and V) x 2 bytes, one KV head a GPU at tp 8
    assert vllm_kv_bytes_per_token("llama-3-70b", tp=8, kv_dtype="auto") == 80 * 128 * 2 * 2
    assert vllm_kv_bytes_per_token("deepseek-v3.2", kv_dtype="auto") == \
        vllm_kv_bytes_per_token("deepseek-v3.2", kv_dtype="fp8") == 61 * (656 + 132)
    for name in ("int4", "fp4", "int8", "fp32"):
        with pytest.raises(ValueError, match=f"kv_dtype: got '{name}'.*auto, bf16") as err:
            serving.kv_budget("llama-3-70b", "H100 SXM", kv_dtype=name, **kw)  # type: ignore[arg-type]
        assert all(n in str(err.value) for n in VLLM_KV_DTYPES)
        with pytest.raises(ValueError, match=f"kv_dtype: got '{name}'"):
            plan_serving("llama-3-70b", "H100 SXM", tp=8, max_model_len=8192, kv_dtype=name)
    assert plan_serving("llama-3-70b", "H100 SXM", tp=8, max_model_len=8192,
                        kv_dtype="auto").kv_cache_tokens == bf16.kv_cache_tokens
