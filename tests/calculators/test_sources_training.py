"""Published training figures: FLOPs, MFU, training time, memory per parameter, activations."""

from __future__ import annotations

import pytest

from gpulesson import flops, memory
from gpulesson.hardware import gpu
from gpulesson.transformer import param_count, preset


def test_source_gpt3_training_compute() -> None:
    """Brown et al. 2020 (GPT-3), Table D.1: 175B trained on 300B tokens takes 3.14e23
    FLOPs (= 3.64e3 PF-days), i.e. 6 N D with N = 174.6B."""
    total = flops.training_flops(param_count(preset("gpt3-175b")), 300e9)
    assert round(total / 1e23, 2) == 3.14
    assert round(total / (1e15 * 86400) / 1e3, 2) == pytest.approx(3.64, abs=0.01)


def test_source_llama3_405b_training_compute() -> None:
    """Dubey et al. 2024 (The Llama 3 Herd of Models), section 3.1: 405B trained on 15.6T
    tokens with 3.8e25 FLOPs."""
    total = flops.training_flops(param_count(preset("llama-3.1-405b")), 15.6e12)
    assert round(total / 1e25, 1) == 3.8


@pytest.mark.parametrize(("tflops_per_gpu", "reported_mfu"), [(430, 0.43), (400, 0.41),
                                                              (380, 0.38)])
def test_source_llama3_table4_bf16_mfu(tflops_per_gpu: float, reported_mfu: float) -> None:
    """Dubey et al. 2024, Table 4: 405B training on 8K-16K H100s at 430/400/380 TFLOP/s per
    GPU is 43%/41%/38% BF16 MFU against the dense 989 TFLOP/s peak. (400/989.4 is 40.4%;
    the table rounds its TFLOP/s, so the tolerance is one point.)"""
    peak = gpu("H100 SXM").peak_flops["bf16"]
    assert flops.utilization(tflops_per_gpu * 1e12, peak) == pytest.approx(reported_mfu,
                                                                            abs=0.01)


def test_source_palm_540b_mfu() -> None:
    """Chowdhery et al. 2022 (PaLM), appendix B: 540B (L=118, H=48, Q=256, T=2048) at
    238.3K tokens/s on 6144 TPU v4 chips (275 TFLOP/s bf16 each) is 46.2% MFU, counting
    6N + 12LHQT FLOPs per token."""
    per_token = flops.flops_per_token(540.35e9, layers=118, heads=48, head_dim=256,
                                      seq_len=2048)
    value = flops.mfu(238.3e3, per_token, 6144, 275e12)
    assert round(value * 100, 1) == 46.2


def test_source_palm_attention_term() -> None:
    """PaLM appendix B: the attention term is 12 L H Q T FLOPs per token."""
    assert flops.attention_flops_per_token(layers=118, heads=48, head_dim=256,
                                           seq_len=2048) == 12 * 118 * 48 * 256 * 2048


@pytest.mark.parametrize(
    ("n_params", "tokens", "gpus", "tflops", "days"),
    [(175e9, 300e9, 1024, 140, 34), (1e12, 450e9, 3072, 163, 84)],
    ids=["gpt3-175b", "1T"],
)
def test_source_megatron_training_days(n_params: float, tokens: float, gpus: int,
                                       tflops: float, days: int) -> None:
    """Narayanan et al. 2021, section 5.1 (eq. 4): GPT-3 175B on 300B tokens with 1024 A100s
    at 140 TFLOP/s takes about 34 days; a 1T model on 450B tokens with 3072 A100s at 163
    TFLOP/s about 84 days. Their estimate counts 8 N T FLOPs (full recomputation)."""
    total = flops.hardware_flops_per_token(n_params, recompute="full") * tokens
    peak = gpu("A100 80GB").peak_flops["bf16"]
    value = flops.training_days(total, gpus, peak, tflops * 1e12 / peak)
    assert value == pytest.approx(days, abs=1)


def test_source_megatron_table1_percent_of_peak() -> None:
    """Narayanan et al. 2021, Table 1: 163 TFLOP/s per GPU is 52% of the A100's 312
    TFLOP/s peak (the 1T model); 137 TFLOP/s is 44% (1.7B)."""
    peak = gpu("A100 80GB").peak_flops["bf16"]
    assert round(flops.utilization(163e12, peak) * 100) == 52
    assert round(flops.utilization(137e12, peak) * 100) == 44


def test_source_megatron_eq3_flops_per_iteration() -> None:
    """Narayanan et al. 2021, eq. 3: F = 96 B s l h^2 (1 + s/6h + V/16lh) with
    recomputation; this is 4 passes of the 72 B s l h^2 (...) model FLOPs of Korthikanti
    et al. 2022 (appendix) for the weight matrices, with the logit layer unchanged."""
    kw = {"batch": 1536, "seq_len": 2048, "layers": 96, "hidden": 12288, "vocab": 51200}
    b, s, layer, h, v = 1536, 2048, 96, 12288, 51200
    with_recompute = flops.megatron_flops_per_iteration(**kw, recompute=True)
    assert with_recompute == pytest.approx(
        96 * b * s * layer * h**2 * (1 + s / (6 * h) + v / (16 * layer * h)))
    without = flops.megatron_flops_per_iteration(**kw, recompute=False)
    assert with_recompute - without == pytest.approx(24 * b * s * layer * h**2 *
                                                     (1 + s / (6 * h)))


def test_source_chinchilla_tokens_and_budget() -> None:
    """Hoffmann et al. 2022 (Chinchilla): 70B parameters trained on 1.4T tokens, the
    compute-optimal split of Gopher's 5.76e23 FLOP budget (about 20 tokens/parameter)."""
    assert flops.chinchilla_tokens(70e9) == pytest.approx(1.4e12)
    point = flops.chinchilla_optimal(5.76e23)
    assert point.params == pytest.approx(70e9, rel=0.02)
    assert point.tokens == pytest.approx(1.4e12, rel=0.02)


@pytest.mark.parametrize(("n_params", "tokens"), [(400e6, 8.0e9), (1e9, 20.2e9)])
def test_source_chinchilla_table3(n_params: float, tokens: float) -> None:
    """Hoffmann et al. 2022, Table 3: 400M -> 8.0B tokens, 1B -> 20.2B tokens."""
    assert flops.chinchilla_tokens(n_params) == pytest.approx(tokens, rel=0.011)


def test_source_flashattention3_fraction_of_peak() -> None:
    """Shah et al. 2024 (FlashAttention-3): 740 TFLOP/s FP16 on H100 is 75% of peak."""
    assert round(flops.utilization(740e12, gpu("H100 SXM").peak_flops["fp16"]) * 100) == 75


def test_source_zero_bytes_per_param() -> None:
    """Rajbhandari et al. 2020 (ZeRO), section 3.1: mixed-precision Adam keeps 2 + 2 + 12
    bytes per parameter (K = 12: fp32 master, momentum, variance)."""
    state = memory.model_state_bytes("mixed", "adam")
    assert (state.weights, state.gradients, state.optimizer) == (2, 2, 12)
    assert memory.bytes_per_param("mixed", "adam") == 16


def test_source_zero_gpt2_1_5b_model_states() -> None:
    """ZeRO section 3.1: a 1.5B-parameter GPT-2 needs 24 GB for its model states with
    mixed-precision Adam, though its fp16 weights are only 3 GB."""
    assert 1.5e9 * memory.bytes_per_param() == 24e9
    assert memory.weight_bytes(1.5e9, precision="fp16") == 3e9


def test_source_korthikanti_gpt3_attention_term() -> None:
    """Korthikanti et al. 2022, section 4: for GPT-3 (a=96, s=2048, h=12288) the 5as/h
    term is 80, against 34 for the rest of the layer."""
    s, b, h, a = 2048, 1, 12288, 96
    full = memory.activation_bytes_per_layer(seq_len=s, batch=b, hidden=h, heads=a)
    selective = memory.activation_bytes_per_layer(seq_len=s, batch=b, hidden=h, heads=a,
                                                  recompute="selective")
    assert selective == 34 * s * b * h
    assert (full - selective) / (s * b * h) == 80


@pytest.mark.parametrize(("name", "heads", "hidden", "saving"),
                         [("GPT-3", 96, 12288, 70), ("MT-NLG", 128, 20480, 65)])
def test_source_korthikanti_selective_saving(name: str, heads: int, hidden: int,
                                             saving: int) -> None:
    """Korthikanti et al. 2022, section 4.2: selective recomputation cuts activation
    memory by 70% for GPT-3 and 65% for MT-NLG 530B (s = 2048)."""
    kw = {"seq_len": 2048, "batch": 1, "hidden": hidden, "heads": heads, "tp": 8}
    none = memory.activation_bytes_per_layer(**kw, sequence_parallel=True)
    selective = memory.activation_bytes_per_layer(**kw, sequence_parallel=True,
                                                  recompute="selective")
    assert round(100 * (1 - selective / none)) == saving, name


KORTHIKANTI_TABLE_2 = [
    # (tp, sequence_parallel, recompute, coefficient function of (s, h, a, t))
    (1, False, "none", lambda s, h, a, t: 34 + 5 * a * s / h),
    (8, False, "none", lambda s, h, a, t: 10 + 24 / t + 5 * a * s / (h * t)),
    (8, True, "none", lambda s, h, a, t: 34 / t + 5 * a * s / (h * t)),
    (8, False, "selective", lambda s, h, a, t: 10 + 24 / t),
    (8, True, "selective", lambda s, h, a, t: 34 / t),
    (8, False, "full", lambda s, h, a, t: 2),
]


@pytest.mark.parametrize(("tp", "sp", "recompute", "coefficient"), KORTHIKANTI_TABLE_2,
                         ids=["no-parallelism", "tensor", "tensor+sequence", "selective",
                              "sequence+selective", "full"])
def test_source_korthikanti_table2(tp: int, sp: bool, recompute: str, coefficient) -> None:
    """Korthikanti et al. 2022, Table 2: activation bytes per layer, s*b*h*(coefficient),
    on the paper's 530B configuration (a=128, h=20480, s=2048, t=8, b=1)."""
    s, b, h, a = 2048, 1, 20480, 128
    got = memory.activation_bytes_per_layer(seq_len=s, batch=b, hidden=h, heads=a, tp=tp,
                                            sequence_parallel=sp, recompute=recompute)
    assert got == pytest.approx(s * b * h * coefficient(s, h, a, tp), rel=1e-12)
