"""Calculators added for lesson 9 (planning_dashboard): throughput from an MFU, the cost of
a run, what one GPU of a layout holds (uneven pipeline stages included), the data-parallel
synchronisation time, and LoRA's trainable parameters and memory.

Each published figure is reproduced from its source's own inputs, with the source named in
the test's docstring and a tolerance the source's rounding allows.
"""

from __future__ import annotations

import pytest

from gpulesson import cost, distributed, flops, memory
from gpulesson.hardware import gpu
from gpulesson.transformer import param_count, preset

LLAMA_405B = preset("llama-3.1-405b")
GPT3 = preset("gpt3-175b")

# ---------------------------------------------------------------------------------------
# flops.tokens_per_second


def test_source_palm_throughput_from_its_mfu() -> None:
    """Chowdhery et al. 2022 (PaLM), appendix B: 540.35B parameters, L=118, H=48, Q=256,
    T=2048, on 6,144 TPU v4 chips of 275 TFLOP/s at 46.2 % MFU: 238.3K tokens/s. The MFU
    is rounded to 0.1 %, so the throughput agrees to within 0.1 %."""
    per_token = flops.flops_per_token(540.35e9, layers=118, heads=48, head_dim=256,
                                      seq_len=2048)
    tps = flops.tokens_per_second(n_devices=6144, peak_flops=275e12, mfu=0.462,
                                  flops_per_token=per_token)
    assert tps == pytest.approx(238.3e3, rel=1e-3)


def test_source_llama3_405b_throughput_and_days() -> None:
    """Dubey et al. 2024 (Llama 3), Table 4 and section 3: 16,384 H100s at 400 TFLOP/s per
    GPU (BF16), 3.8e25 FLOPs for 15.6T tokens with 6N per token. The tokens per second
    implied by that utilisation give the same time as the FLOP count does, and the
    GPU-hours stay below the 30.84M of the Llama 3.1 model card (which also counts
    restarts and the long-context stage) by less than 15 %."""
    n = param_count(LLAMA_405B)
    peak = gpu("H100 SXM").dense("bf16")
    u = flops.utilization(400e12, peak)
    tps = flops.tokens_per_second(n_devices=16_384, peak_flops=peak, mfu=u,
                                  flops_per_token=flops.flops_per_token(n))
    total = flops.training_flops(n, 15.6e12)
    assert round(total / 1e25, 1) == 3.8
    seconds = flops.training_time(total, 16_384, peak, u)
    assert 15.6e12 / tps == pytest.approx(seconds, rel=1e-12)
    hours = cost.gpu_hours(gpus=16_384, seconds=seconds)
    assert 0.85 * 30.84e6 < hours < 30.84e6


def test_tokens_per_second_inverts_mfu() -> None:
    tps = flops.tokens_per_second(n_devices=64, peak_flops=989.4e12, mfu=0.4,
                                  flops_per_token=6 * 7e9)
    assert flops.mfu(tps, 6 * 7e9, 64, 989.4e12) == pytest.approx(0.4, rel=1e-12)


# ---------------------------------------------------------------------------------------
# cost.gpu_hours and cost.run_cost


def test_source_deepseek_v3_cost_at_2_dollars() -> None:
    """DeepSeek-AI 2024 (DeepSeek-V3 technical report), Table 1: 2.788M H800 GPU-hours on
    2,048 GPUs, "assuming the rental price of the H800 GPU is $2 per GPU hour", $5.576M."""
    seconds = 2.788e6 / 2048 * 3600
    assert cost.run_cost(usd_per_gpu_hour=2, gpus=2048, seconds=seconds) == pytest.approx(
        5.576e6, rel=1e-9)


def test_source_deepseek_v3_gpu_hours_per_trillion_tokens() -> None:
    """DeepSeek-AI 2024, section 1: 180K H800 GPU-hours per trillion tokens, "3.7 days on
    our cluster with 2048 H800 GPUs" (3.7 is rounded to 0.1 day: within 2 %)."""
    assert cost.gpu_hours(gpus=2048, seconds=3.7 * 86_400) == pytest.approx(180e3, rel=0.02)


def test_source_llama2_7b_gpu_hours() -> None:
    """Touvron et al. 2023 (Llama 2), Table 2: 184,320 A100 GPU-hours for 7B; on the
    1,024 A100s of lesson 4's example that is 7.5 days of wall-clock time."""
    seconds = 184_320 / 1024 * 3600
    assert cost.gpu_hours(gpus=1024, seconds=seconds) == pytest.approx(184_320)
    assert round(seconds / 86_400, 1) == 7.5


# ---------------------------------------------------------------------------------------
# distributed: uneven pipeline stages, params per GPU, layout memory, the advisor


def test_source_llama3_stages_hold_at_most_8_layers() -> None:
    """Dubey et al. 2024, section 3.3: 126 layers on 16 pipeline stages, the first and
    last holding one layer fewer (7 + 14 x 8 + 7 = 126): the largest stage has 8."""
    assert distributed.stage_layers(126, 16) == 8
    assert 7 + 14 * 8 + 7 == 126
    n = param_count(LLAMA_405B)
    assert distributed.params_per_gpu(n, tp=8, pp=16, layers=126) == pytest.approx(
        n / 8 * 8 / 126)
    assert distributed.params_per_gpu(n, tp=8, pp=16) == pytest.approx(n / 128)


def test_stage_layers_refuses_more_stages_than_layers() -> None:
    with pytest.raises(ValueError, match=r"pp must be at most layers \(126\)"):
        distributed.stage_layers(126, 127)


@pytest.mark.parametrize(("stage", "gb"), [(0, 120), (1, 31.4), (2, 16.6), (3, 1.9)])
def test_source_zero_figure1_through_layout_memory(stage: int, gb: float) -> None:
    """Rajbhandari et al. 2020 (ZeRO), Figure 1: 7.5B parameters, Nd = 64, K = 12:
    120, 31.4, 16.6 and 1.9 GB per GPU; layout_memory without activations agrees."""
    m = distributed.layout_memory(n_params=7.5e9, n_gpus=64, zero_stage=stage)
    assert (m.dp, m.tp, m.pp) == (64, 1, 1)
    assert m.activations == 0 and m.total == m.model_state
    assert round(m.total / 1e9, 1) == gb


def test_layout_memory_needs_dividing_degrees() -> None:
    with pytest.raises(ValueError, match=r"tp x pp \(8 x 3 = 24\) must divide n_gpus \(64\)"):
        distributed.layout_memory(n_params=7e9, n_gpus=64, tp=8, pp=3)
    with pytest.raises(ValueError, match="zero_stage must be 0, 1, 2 or 3"):
        distributed.layout_memory(n_params=7e9, n_gpus=64, zero_stage=4)
    with pytest.raises(ValueError, match=r"tp must divide heads \(32\)"):
        distributed.layout_memory(n_params=7e9, n_gpus=48, tp=3, cfg=preset("llama-2-7b"),
                                  seq_len=4096)


def test_first_stage_activations_do_not_shrink_with_pipeline() -> None:
    """Korthikanti et al. 2022, section 4.2.3: with 1F1B the first stage holds pp
    micro-batches over L/pp layers, the activations of the whole model for one micro-batch.
    With uneven stages it holds pp * ceil(L/pp) layers' worth."""
    cfg = LLAMA_405B
    kw = dict(n_params=param_count(cfg), n_gpus=16_384, tp=8, zero_stage=1, cfg=cfg,
              seq_len=8192, recompute="selective")
    per_layer = memory.activation_bytes_per_layer(seq_len=8192, batch=1, hidden=cfg.hidden,
                                                  heads=cfg.heads, tp=8,
                                                  sequence_parallel=True,
                                                  recompute="selective")
    for pp in (2, 16, 32, 64):
        m = distributed.layout_memory(pp=pp, **kw)
        assert m.activations == pp * distributed.stage_layers(126, pp) * per_layer
        assert m.activations >= 126 * per_layer


def test_advisor_finds_a_layout_for_llama3_405b_on_16k_h100() -> None:
    """Llama 3.1 405B, 16,384 H100s of 80 GB, 8K sequences, selective recomputation: the
    advisor used to try only pipeline sizes dividing the 126 layers (2 here) and found
    nothing. With uneven stages it finds tp = 8 and pp = 32 (126 layers on 32 stages, at
    most 4 each), which fits. Llama 3 itself ran tp = 8, pp = 16 (Dubey et al. 2024,
    Table 4); with the Korthikanti GPT-block activations that needs about 86 GB, a little
    more than its lighter Llama blocks (grouped-query attention, no dropout) store."""
    cfg = LLAMA_405B
    n = param_count(cfg)
    h100 = gpu("H100 SXM").memory_bytes
    r = distributed.recommend_layout(n_params=n, gpu_memory=h100, n_gpus=16_384, cfg=cfg,
                                     seq_len=8192, recompute="selective")
    assert r.fits and (r.tp, r.pp, r.dp, r.zero_stage) == (8, 32, 64, 1)
    assert 126 % r.pp != 0
    assert "at most 4 of the 126 layers" in r.reason
    assert r.params_per_gpu == pytest.approx(distributed.params_per_gpu(n, tp=8, pp=32,
                                                                        layers=126))
    llama3 = distributed.layout_memory(n_params=n, n_gpus=16_384, tp=8, pp=16,
                                       zero_stage=1, cfg=cfg, seq_len=8192,
                                       recompute="selective")
    assert llama3.dp == 128 and 80e9 < llama3.total < 90e9
    # at 4K tokens fewer stages suffice, again a size that does not divide 126
    r4 = distributed.recommend_layout(n_params=n, gpu_memory=h100, n_gpus=16_384, cfg=cfg,
                                      seq_len=4096, recompute="selective")
    assert r4.fits and (r4.tp, r4.pp) == (8, 8)


def test_source_zero_stage3_moves_one_and_a_half_times_the_data() -> None:
    """Rajbhandari et al. 2020, section 7: ZeRO-1 and ZeRO-2 communicate 2 Psi per step,
    like an all-reduce; ZeRO-3 3 Psi, 1.5x. Ring volumes from nccl-tests: all-reduce
    2(n-1)/n S, all-gather (n-1)/n S."""
    base = dict(dp=64, bytes_per_value=2, bandwidth=50e9)
    plain = distributed.data_parallel_sync_time(7e9, zero_stage=0, **base)
    assert plain == pytest.approx(2 * 63 / 64 * 14e9 / 50e9)
    for stage in (1, 2):
        assert distributed.data_parallel_sync_time(7e9, zero_stage=stage, **base) == plain
    assert distributed.data_parallel_sync_time(7e9, zero_stage=3, **base) == pytest.approx(
        1.5 * plain)
    assert distributed.data_parallel_sync_time(7e9, dp=1, bandwidth=50e9, latency=1e-3) == 0


# ---------------------------------------------------------------------------------------
# memory.lora_params and memory.lora_training_memory


@pytest.mark.parametrize(("rank", "targets", "millions"), [
    (8, ("q", "v"), 37.7),   # Table 4, "LoRA 37.7M"
    (1, ("q", "v"), 4.7),    # Table 4, "LoRA 4.7M"
])
def test_source_lora_gpt3_trainable_parameters(rank: int, targets: tuple[str, ...],
                                               millions: float) -> None:
    """Hu et al. 2021 (LoRA), Table 4: GPT-3 175B (96 layers, d = 12,288) with adapters
    on W_q and W_v: 4.7M and 37.7M trainable parameters, 2 * L_hat * d * r."""
    assert round(memory.lora_params(GPT3, rank=rank, targets=targets) / 1e6, 1) == millions


def test_source_lora_gpt3_equal_budgets_of_table5() -> None:
    """Hu et al. 2021, Table 5: the same budget of "18M" trainable parameters buys W_q at
    r = 8, W_q and W_v at r = 4, or all four attention matrices at r = 2."""
    budgets = {memory.lora_params(GPT3, rank=8, targets=("q",)),
               memory.lora_params(GPT3, rank=4, targets=("q", "v")),
               memory.lora_params(GPT3, rank=2, targets=("q", "k", "v", "o"))}
    assert len(budgets) == 1 and 18e6 < budgets.pop() < 19e6


def test_source_lora_gpt3_memory_and_checkpoint() -> None:
    """Hu et al. 2021, section 4.2: on GPT-3 175B, LoRA (r = 4, W_q and W_v) trains with
    350 GB of frozen weights instead of 1.2 TB, and the checkpoint shrinks from 350 GB to
    35 MB. The frozen FP16 weights are 349 GB; the adapters in 16 bits 37.7 MB, 36 MiB."""
    m = memory.lora_training_memory(GPT3, rank=4, batch=1, seq_len=2048)
    assert round(m.base_weights / 1e9, -1) == 350
    assert m.adapter_weights == 2 * m.trainable_params
    assert m.adapter_weights / 2**20 == pytest.approx(35, rel=0.05)
    # the adapters' full state is 16 bytes per trainable parameter, far below the base
    assert m.adapter_weights + m.adapter_gradients + m.adapter_optimizer == (
        16 * m.trainable_params)
    assert m.total == (m.base_weights + m.adapter_weights + m.adapter_gradients
                       + m.adapter_optimizer + m.activations)


def test_lora_activations_equal_full_training() -> None:
    """The activations of the frozen layers are kept as in full training (an upper bound)."""
    cfg = preset("llama-2-7b")
    lora = memory.lora_training_memory(cfg, rank=16, batch=2, seq_len=2048,
                                       recompute="selective")
    full = memory.training_memory(cfg, batch=2, seq_len=2048, recompute="selective")
    assert lora.activations == full.activations
    assert lora.total < full.total / 3


def test_lora_gqa_and_mlp_shapes() -> None:
    """With grouped-query attention k and v are d x (kv_heads * head_dim): Llama 3 8B has
    4,096 x 1,024 projections, so r * (4096 + 1024) per layer for each."""
    cfg = preset("llama-3-8b")
    assert memory.lora_params(cfg, rank=8, targets=("k",)) == 32 * 8 * (4096 + 1024)
    assert memory.lora_params(cfg, rank=8, targets=("gate",)) == 32 * 8 * (4096 + 14336)
    with pytest.raises(ValueError, match="'gate' exists only in a gated"):
        memory.lora_params(preset("gpt2"), rank=8, targets=("gate",))


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"rank": 0}, ValueError, "rank must be a positive integer, got 0"),
    ({"rank": 8, "targets": ("q", "q")}, ValueError, "targets must not repeat"),
    ({"rank": 8, "targets": ("x",)}, ValueError, "targets must be one of"),
    ({"rank": 8, "targets": "qv"}, TypeError, "targets must be a non-empty tuple"),
    ({"rank": 8, "targets": ()}, TypeError, "targets must be a non-empty tuple"),
    ({"rank": 5000}, ValueError, r"rank must be at most 4096"),
])
def test_lora_params_validates(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        memory.lora_params(preset("llama-2-7b"), **kwargs)


def test_new_functions_validate_their_arguments() -> None:
    with pytest.raises(ValueError, match="mfu must be a number in"):
        flops.tokens_per_second(n_devices=8, peak_flops=1e15, mfu=0, flops_per_token=1e10)
    with pytest.raises(TypeError, match="n_devices must be a positive integer"):
        flops.tokens_per_second(n_devices=8.0, peak_flops=1e15, mfu=0.4,
                                flops_per_token=1e10)
    with pytest.raises(ValueError, match="usd_per_gpu_hour must be a finite non-negative"):
        cost.run_cost(usd_per_gpu_hour=-1, gpus=8, seconds=3600)
    with pytest.raises(ValueError, match="seconds must be a finite non-negative"):
        cost.gpu_hours(gpus=8, seconds=float("nan"))
    with pytest.raises(ValueError, match="zero_stage must be 0, 1, 2 or 3"):
        distributed.data_parallel_sync_time(1e9, dp=8, zero_stage=5, bandwidth=50e9)
    with pytest.raises(TypeError, match="cfg must be a TransformerConfig"):
        memory.lora_training_memory("llama-2-7b", rank=8, batch=1, seq_len=128)  # type: ignore[arg-type]
