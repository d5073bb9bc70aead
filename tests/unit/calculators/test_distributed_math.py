"""Lesson 7's calculators on published figures: ZeRO's memory per GPU, the ring
all-reduce of data parallelism, and the pipeline bubble."""

from __future__ import annotations

import pytest

from gpulesson import calculators as C


def test_zero_figure_1():
    """Rajbhandari et al. 2020 (ZeRO), Figure 1: a 7.5B-parameter model with K = 12 on
    Nd = 64 GPUs keeps 120 GB of model state per GPU, 31.4 GB with the optimizer states
    partitioned, 16.6 GB with the gradients too and 1.9 GB with the parameters too."""
    out = C.compute("zero")
    assert [round(out[f"stage{s}"] / 1e9, 1) for s in range(4)] == [120.0, 31.4, 16.6, 1.9]
    assert out["chosen"] == out["stage3"] and out["fits"] is True


def test_a_ring_all_reduce_at_the_nccl_tests_bus_bandwidth():
    """NVIDIA nccl-tests, doc/PERFORMANCE.md: an all-reduce sends 2(n − 1)/n of the data per
    rank, so 1 GB on 8 GPUs at a bus bandwidth of 175 GB/s takes 1.75 GB / 175 GB/s =
    10 ms. 1 GB is the BF16 gradients of 0.5B parameters; with 10 ms of compute per step
    and no overlap half the time is communication: 50 % efficiency, a 4× speed-up on 8."""
    out = C.compute("scaling_efficiency", model="custom", n_params=0.5, n_gpus=8,
                    bandwidth=175, latency=0, compute_time=0.01)
    assert out["gradient_bytes"] == 1e9
    assert out["volume"] == pytest.approx(1.75e9)
    assert out["comm_time"] == pytest.approx(0.01)
    assert out["efficiency"] == pytest.approx(0.5)
    assert out["speedup"] == pytest.approx(4)


def test_the_all_reduce_latency_adds_once_per_step():
    """The alpha-beta model (Hockney 1994): each collective pays its latency α once."""
    base = dict(model="custom", n_params=0.5, n_gpus=8, bandwidth=175, compute_time=0.01)
    slow = C.compute("scaling_efficiency", latency=1000, **base)["comm_time"]
    assert slow == pytest.approx(0.01 + 1000e-6)


@pytest.mark.parametrize(("inputs", "bubble"), [
    ({"stages": 8, "microbatches": 32, "schedule": "1f1b"}, 7 / 32),
    ({"stages": 8, "microbatches": 32, "schedule": "interleaved", "interleave": 4}, 7 / 128),
], ids=["1f1b", "interleaved"])
def test_pipeline_bubble_of_narayanan_et_al(inputs, bubble):
    """Narayanan et al. 2021, §2.2: the bubble is (p − 1)/m of the ideal time for 1F1B,
    and (1/v)(p − 1)/m with v model chunks per GPU: 7/32 and 7/128 for p = 8, m = 32."""
    assert C.compute("pipeline_bubble", **inputs)["bubble"] == pytest.approx(bubble)


def test_gpipe_schedule_idles_k_minus_1_of_m_plus_k_minus_1():
    """Huang et al. 2019 (GPipe), §2.3: with K stages and M micro-batches each device idles
    (K − 1)/(M + K − 1) of the time: K = 4, M = 16 take 19 slots of a forward (1) and a
    backward (2) each, 57 time units, of which 9 idle."""
    out = C.compute("pipeline_bubble", stages=4, microbatches=16, schedule="gpipe")
    assert out["makespan"] == 57
    assert out["bubble"] == pytest.approx(3 / 16)
    assert (out["makespan"] - 16 * 3) / out["makespan"] == pytest.approx(3 / 19)


def test_parallel_traffic_counts_its_gpus_from_the_layout():
    """Dubey et al. 2024 (Llama 3), Table 4: tp 8, cp 1, pp 16 and dp 128 are 16,384 GPUs;
    the tensor all-reduces stay inside the 8-GPU NVLink server, the gradients cross the
    network."""
    out = C.compute("parallel_traffic")
    assert out["n_gpus"] == 16_384
    assert "tensor: NVLink" in out["links"] and "data: network" in out["links"]


def test_parallel_traffic_moves_the_expert_all_to_all_onto_a_72_gpu_domain():
    """DeepSeek-AI 2024 (DeepSeek-V3), section 3.2: ep 64 over 8-GPU servers sends the
    expert all-to-all across the network; in a GB200 NVL72 rack (72 GPUs on one NVLink
    domain, NVIDIA's specification) the same 64 GPUs exchange it on NVLink, in far less
    exposed time."""
    setting = dict(model="deepseek-v3", tp=1, pp=16, dp=128, ep=64, dtype="fp8")
    h100 = C.compute("parallel_traffic", gpu="H100 SXM", **setting)
    nvl72 = C.compute("parallel_traffic", gpu="GB200 NVL72", **setting)
    assert h100["n_gpus"] == nvl72["n_gpus"] == 2048
    assert "expert: network" in h100["links"] and "expert: NVLink" in nvl72["links"]
    assert nvl72["expert_time"] < h100["expert_time"] / 5


def test_parallel_traffic_sends_deepseek_v3_tokens_once_per_server():
    """DeepSeek-V3 (DeepSeek-AI 2024, §2.1.2 and §3.2.2; its config's n_group 8 and
    topk_group 4): at ep 64 on 8-GPU servers a token reaches at most 4 servers, crossing
    the network once to each, so each GPU sends 4 copies where NVLink (the NVL72 rack)
    carries all 8 (the calculator sent 8 across the network too, 4.48 s a step exposed
    on the H100; now 2.24 s)."""
    setting = dict(model="deepseek-v3", tp=1, pp=16, dp=128, ep=64)
    h100 = C.compute("parallel_traffic", gpu="H100 SXM", **setting)
    nvl72 = C.compute("parallel_traffic", gpu="GB200 NVL72", **setting)
    assert h100["expert_bytes"] == pytest.approx(nvl72["expert_bytes"] / 2)


def test_a_preset_edited_past_its_routing_groups_drops_them():
    """DeepSeek-V3's 4 picked groups of 32 experts hold up to 128 experts per token, and
    its groups are those of 256 experts: another expert count, or more experts per token,
    is a model without them, not a refusal naming fields the form does not show."""
    from gpulesson.calculators import shared
    base = dict(model="deepseek-v3", hidden=7168, layers=61, heads=128, vocab=129280,
                ffn=18432, max_positions=0, norm="rmsnorm", embeddings="untied",
                mlp="gated", biases="none", experts=256, experts_per_token=8)
    kept = shared.config(base)
    assert (kept.routing_groups, kept.routing_group_topk) == (8, 4)
    for edit in ({"experts": 128}, {"experts_per_token": 200}):
        cfg = shared.config({**base, **edit})
        assert (cfg.routing_groups, cfg.routing_group_topk) == (0, 0), edit


def test_parallel_traffic_fits_deepseek_v3_only_with_its_own_recipe():
    """DeepSeek-AI 2024 (DeepSeek-V3): 16-way pipeline, 64-way expert parallelism and ZeRO-1
    on 2,048 H800s of 80 GB (§3.2), 4K-token sequences in pre-training (§4.2), norms and
    latent up-projections recomputed and activations cached in FP8 (§3.2.3, §3.3.3). At the
    calculator's 8K sequences and selective recomputation the layout does not fit an H100;
    with the report's sequence length and recipe it does, at ZeRO-1 as DeepSeek ran it."""
    setting = dict(model="deepseek-v3", tp=1, pp=16, dp=128, ep=64, gpu="H100 SXM")
    assert not C.compute("parallel_traffic", **setting)["fits"]
    short = C.compute("parallel_traffic", seq_len=4096, **setting)
    assert not short["fits"]                       # 4K alone is not enough
    recipe = C.compute("parallel_traffic", seq_len=4096, recompute="deepseek-v3",
                       zero_stage=1, **setting)
    assert recipe["fits"] and recipe["feasible"]
    assert recipe["memory_per_gpu"] < short["memory_per_gpu"] / 1.5


def test_parallel_traffic_refuses_the_deepseek_recipe_for_a_model_without_latent_attention():
    """The recipe recomputes latent up-projections: a model without them gets a clear
    error that names the choices that apply."""
    with pytest.raises(ValueError, match="use 'none', 'selective' or 'full'"):
        C.compute("parallel_traffic", recompute="deepseek-v3")
