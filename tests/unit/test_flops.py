"""gpulesson.flops: training FLOPs, MFU, throughput, training time and Chinchilla."""

from __future__ import annotations

import math

import pytest
from hypothesis import given

from gpulesson import cost, flops
from gpulesson.hardware import gpu
from gpulesson.transformer import param_count, preset

from .strategies import finite_nonneg, params

LLAMA_405B = preset("llama-3.1-405b")


# ---------------------------------------------------------------------------------------
# Published figures


def test_source_gpt3_training_compute() -> None:
    """Brown et al. 2020 (GPT-3), Table D.1: 175B trained on 300B tokens takes 3.14e23
    FLOPs (= 3.64e3 PF-days), i.e. 6 N D with N = 174.6B."""
    total = flops.training_flops(param_count(preset("gpt3-175b")), 300e9)
    assert round(total / 1e23, 2) == 3.14
    assert round(total / (1e15 * 86400) / 1e3, 2) == pytest.approx(3.64, abs=0.01)


def test_source_llama3_405b_throughput_and_days() -> None:
    """Dubey et al. 2024 (The Llama 3 Herd of Models), Table 4 and section 3: 16,384 H100s
    at 400 TFLOP/s per GPU (BF16); section 3.1: 405B trained on 15.6T tokens with 3.8e25
    FLOPs, 6N per token. The tokens per second implied by that utilisation give the same
    time as the FLOP count does, and the GPU-hours stay below the 30.84M of the Llama 3.1
    model card (which also counts restarts and the long-context stage) by less than 15 %."""
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


def test_source_palm_throughput_from_its_mfu() -> None:
    """Chowdhery et al. 2022 (PaLM), appendix B: 540.35B parameters, L=118, H=48, Q=256,
    T=2048, on 6,144 TPU v4 chips of 275 TFLOP/s at 46.2 % MFU: 238.3K tokens/s. The MFU
    is rounded to 0.1 %, so the throughput agrees to within 0.1 %."""
    per_token = flops.flops_per_token(540.35e9, layers=118, heads=48, head_dim=256,
                                      seq_len=2048)
    tps = flops.tokens_per_second(n_devices=6144, peak_flops=275e12, mfu=0.462,
                                  flops_per_token=per_token)
    assert tps == pytest.approx(238.3e3, rel=1e-3)


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


# ---------------------------------------------------------------------------------------
# Validation


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.5, math.nan])
def test_mfu_must_be_a_fraction(bad: float) -> None:
    with pytest.raises(ValueError, match=r"mfu must be a number in \(0, 1\]"):
        flops.training_time(1e20, 8, 1e15, bad)


def test_partial_attention_shape_is_refused() -> None:
    with pytest.raises(ValueError, match="give all of layers, heads, head_dim and seq_len"):
        flops.flops_per_token(7e9, layers=32)


def test_tokens_per_second_validates() -> None:
    with pytest.raises(ValueError, match="mfu must be a number in"):
        flops.tokens_per_second(n_devices=8, peak_flops=1e15, mfu=0, flops_per_token=1e10)
    with pytest.raises(TypeError, match="n_devices must be a positive integer"):
        flops.tokens_per_second(n_devices=8.0, peak_flops=1e15, mfu=0.4,
                                flops_per_token=1e10)


# ---------------------------------------------------------------------------------------
# Properties


@given(n=params, tokens=params)
def test_flops_finite(n: float, tokens: float) -> None:
    total = flops.training_flops(n, tokens)
    assert finite_nonneg(total)
    assert flops.hardware_flops_per_token(n, recompute="full") >= flops.flops_per_token(n)
    assert finite_nonneg(flops.chinchilla_optimal(total).params)


# ---------------------------------------------------------------------------------------
# Behaviour


def test_tokens_per_second_inverts_mfu() -> None:
    tps = flops.tokens_per_second(n_devices=64, peak_flops=989.4e12, mfu=0.4,
                                  flops_per_token=6 * 7e9)
    assert flops.mfu(tps, 6 * 7e9, 64, 989.4e12) == pytest.approx(0.4, rel=1e-12)


# ---------------------------------------------------------------------------------------
# Any architecture: active parameters, latent attention, windows; Chinchilla's fit


def test_model_flops_per_token_is_palm_for_a_dense_model() -> None:
    """For a dense model with full attention, 6N + 3 x forward attention is PaLM's
    6N + 12LHQT (Chowdhery et al. 2022, appendix B), the figure flops_per_token gives."""
    cfg = preset("llama-2-7b")
    shape = {"layers": 32, "heads": 32, "head_dim": 128, "seq_len": 4096}
    assert flops.model_flops_per_token(cfg, seq_len=4096) == flops.flops_per_token(
        param_count(cfg), **shape)
    assert flops.model_flops_per_token(cfg) == 6 * param_count(cfg)


def test_source_mixtral_trains_at_the_cost_of_its_active_parameters() -> None:
    """Mixtral 8x7B "uses only 13B active parameters for each token" (Jiang et al. 2024,
    section 1): 6 x 12.9B FLOPs per token, not 6 x 46.7B."""
    cfg = preset("mixtral-8x7b")
    per_token = flops.model_flops_per_token(cfg)
    assert round(per_token / 6 / 1e9, 1) == 12.9
    assert flops.model_training_flops(cfg, tokens=1e12) == pytest.approx(1e12 * per_token)
    assert flops.model_training_flops(cfg, tokens=1e12, seq_len=4096) > 1e12 * per_token


def test_latent_attention_and_windows_in_the_attention_term() -> None:
    """DeepSeek-V3's heads score with 192-wide queries and keys and mix 128-wide values:
    2 x 128 x (192 + 128) FLOPs per key and layer (DeepSeek-AI 2024, section 2.1.1).
    Gemma-2-9B at 8,192 tokens: 21 global layers see 8,192 keys, 21 local ones 4,096."""
    ds = preset("deepseek-v3")
    assert flops.attention_flops_per_key(ds) == 2 * 128 * 320
    assert flops.forward_attention_flops_per_token(ds, context=1) == 61 * 2 * 128 * 320
    gemma = preset("gemma-2-9b")
    per_key = 2 * 16 * (256 + 256)
    assert flops.attention_flops_per_key(gemma) == per_key
    assert flops.forward_attention_flops_per_token(gemma, context=8192) == per_key * (
        21 * 8192 + 21 * 4096)
    assert flops.forward_attention_flops_per_token(gemma, context=1000) == (
        per_key * 42 * 1000)


@pytest.mark.parametrize(("params", "total_flops", "tokens"), flops.CHINCHILLA_TABLE_3)
def test_source_chinchilla_fitted_optimum_table3(params: float, total_flops: float,
                                                 tokens: float) -> None:
    """Hoffmann et al. 2022, Table 3 (approach 1): the fitted compute-optimal size and
    tokens for each budget, e.g. 67B and 1.5T tokens at Gopher's 5.76e23 FLOPs."""
    point = flops.chinchilla_fitted_optimal(total_flops)
    assert point.params == pytest.approx(params, rel=1e-12)
    assert point.tokens == pytest.approx(tokens, rel=1e-12)


def test_source_chinchilla_heuristic_differs_from_the_fit_at_gopher_scale() -> None:
    """20 tokens per parameter is a heuristic: at 5.76e23 FLOPs it gives 69B, the paper's
    fit 67B (Hoffmann et al. 2022, Table 3); between rows the fit is a power law."""
    assert round(flops.chinchilla_optimal(5.76e23).params / 1e9) == 69
    assert round(flops.chinchilla_fitted_optimal(5.76e23).params / 1e9) == 67
    between = flops.chinchilla_fitted_optimal(1e24)
    assert 67e9 < between.params < 175e9 and 1.5e12 < between.tokens < 3.7e12
    with pytest.raises(ValueError, match=r"total_flops must be within Hoffmann et al.'s "
                                         r"Table 3, 1.92e\+19 to 1.3e\+28 FLOPs, got 1e\+30"):
        flops.chinchilla_fitted_optimal(1e30)


def test_model_flops_need_a_config() -> None:
    with pytest.raises(TypeError, match="cfg must be a TransformerConfig"):
        flops.model_flops_per_token(7e9)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="context must be a positive integer, got 0"):
        flops.forward_attention_flops_per_token(preset("gpt2"), context=0)


def test_model_attention_term_is_palms_for_full_attention() -> None:
    """Chowdhery et al. 2022 (PaLM), appendix B: 12 L H Q T training FLOPs of attention
    per token; a sliding window caps T in its local layers (Mistral 7B's 4,096)."""
    from dataclasses import replace

    cfg = preset("llama-2-7b")
    assert flops.model_attention_flops_per_token(cfg, seq_len=4096) == (
        flops.attention_flops_per_token(layers=32, heads=32, head_dim=128, seq_len=4096))
    windowed = replace(cfg, sliding_window=4096)
    assert flops.model_attention_flops_per_token(windowed, seq_len=32768) == (
        flops.attention_flops_per_token(layers=32, heads=32, head_dim=128, seq_len=4096))


# ---------------------------------------------------------------------------------------
# Chinchilla's exponents and its parametric loss (approach 3)


def test_source_chinchilla_table3_gives_approach1_exponents() -> None:
    """Hoffmann et al. 2022, Table 2: approach 1 finds N_opt ~ C^a and D_opt ~ C^b with
    a = 0.50 and b = 0.50. A power law fitted to the nine rows of their Table 3 (that
    approach's projections) recovers both to two decimals."""
    table = flops.CHINCHILLA_TABLE_3
    compute = [row[1] for row in table]
    a, _ = flops.power_law_fit(compute, [row[0] for row in table])
    b, _ = flops.power_law_fit(compute, [row[2] for row in table])
    assert round(a, 2) == 0.50 and round(b, 2) == 0.50


@pytest.mark.parametrize("left_out", range(len(flops.CHINCHILLA_TABLE_3)))
def test_chinchilla_power_law_predicts_each_table3_row_left_out(left_out: int) -> None:
    """Leave-one-out on Hoffmann et al.'s Table 3: the power law fitted to the other eight
    rows predicts the left-out row's parameters within 2 % and tokens within 6 % (the
    printed 1.5T at Gopher's budget is rounded to two digits)."""
    rest = [row for i, row in enumerate(flops.CHINCHILLA_TABLE_3) if i != left_out]
    n, c, d = flops.CHINCHILLA_TABLE_3[left_out]
    p, k = flops.power_law_fit([r[1] for r in rest], [r[0] for r in rest])
    q, j = flops.power_law_fit([r[1] for r in rest], [r[2] for r in rest])
    assert k * c ** p == pytest.approx(n, rel=0.02)
    assert j * c ** q == pytest.approx(d, rel=0.06)


def test_source_chinchilla_approach3_exponents_need_the_unrounded_fit() -> None:
    """Hoffmann et al. 2022, Table 2: approach 3 gives a = 0.46, b = 0.54, from its fit
    E = 1.69, A = 406.4, B = 410.7, alpha = 0.34, beta = 0.28 (section 3.3). Besiroglu et
    al. 2024 (arXiv 2404.10102) point out that these are rounded: the TeX source's
    alpha = 0.3392, beta = 0.2849 give 0.46 and 0.54, the printed ones 0.45 and 0.55."""
    unrounded = flops.CHINCHILLA_FITS["hoffmann_unrounded"]
    assert (round(unrounded.a, 2), round(unrounded.b, 2)) == (0.46, 0.54)
    printed = flops.CHINCHILLA_FITS["hoffmann"]
    assert (round(printed.a, 2), round(printed.b, 2)) == (0.45, 0.55)


def test_source_besiroglu_refit_allocates_like_chinchilla() -> None:
    """Besiroglu et al. 2024: refitting approach 3 (E = 1.8172, A = 482.01, B = 2085.43,
    alpha = 0.3478, beta = 0.3658) gives a = 0.5126, "compatible with the findings from
    the first two estimation procedures". At Gopher's budget, 5.76e23 FLOPs, its optimum
    is within 5 % of the Chinchilla model itself, 70B parameters on 1.4T tokens (Hoffmann
    et al. 2022), where the printed constants would put 32B on 3.0T (40B unrounded)."""
    refit = flops.CHINCHILLA_FITS["besiroglu"]
    assert round(refit.a, 4) == 0.5126
    point = flops.chinchilla_loss_optimal(5.76e23, fit="besiroglu")
    assert point.params == pytest.approx(70e9, rel=0.05)
    assert point.tokens == pytest.approx(1.4e12, rel=0.06)
    assert 6 * point.params * point.tokens == pytest.approx(5.76e23)
    printed = flops.chinchilla_loss_optimal(5.76e23)
    assert round(printed.params / 1e9) == 32
    unrounded = flops.chinchilla_loss_optimal(5.76e23, fit="hoffmann_unrounded")
    assert round(unrounded.params / 1e9) == 40


def test_chinchilla_loss_optimum_is_the_minimum_of_the_loss() -> None:
    """The closed form sits at the minimum of L along C = 6ND: 5 % more or fewer
    parameters (tokens adjusted to keep the budget) both give a higher predicted loss; and
    Chinchilla's allocation predicts a lower loss than Gopher's at about the same compute."""
    c = 1e24
    for fit in flops.CHINCHILLA_FITS:
        best = flops.chinchilla_loss_optimal(c, fit=fit)
        at = flops.chinchilla_loss(best.params, best.tokens, fit=fit)
        for scale in (0.95, 1.05):
            n = best.params * scale
            assert flops.chinchilla_loss(n, c / (6 * n), fit=fit) > at
    assert flops.chinchilla_loss(70e9, 1.4e12) < flops.chinchilla_loss(280e9, 300e9)
    with pytest.raises(KeyError, match="fit"):
        flops.chinchilla_loss(1e9, 1e10, fit="kaplan")
    with pytest.raises(ValueError, match="at least 2 points"):
        flops.power_law_fit([1.0], [2.0])
    with pytest.raises(ValueError, match="two different values"):
        flops.power_law_fit([1.0, 1.0], [2.0, 3.0])


def test_dsa_attention_flops_are_top_k_attention_plus_the_indexer() -> None:
    """DeepSeek-V3.2's indexer (deepseek-ai/DeepSeek-V3.2-Exp inference/model.py,
    Indexer.forward: 64 heads of 128 score each cached key, weighted and summed over the
    heads) costs 2 x 64 x (128 + 1) = 16,512 FLOPs a key and layer; the attention, 2 x
    128 x (192 + 128) = 81,920 a key, over at most 2,048 keys. By hand, one query at
    4,096 tokens: 61 x (81,920 x 2,048 + 16,512 x 4,096) = 14,359,724,032; at 131,072:
    61 x (81,920 x 2,048 + 16,512 x 131,072) = 142,254,014,464 (dense: 654,982,512,640).
    GLM-5.1 (32 indexer heads): 2 x 32 x 129 = 8,256. Training: see the next test."""
    import dataclasses
    from pathlib import Path

    from gpulesson.transformer import from_hf_config
    hf = Path(__file__).resolve().parents[1] / "data" / "hf_configs"
    v32 = from_hf_config(hf / "deepseek_v32__DeepSeek-V3.2.json")
    v3 = from_hf_config(hf / "deepseek_v3__DeepSeek-V3.json")
    glm = from_hf_config(hf / "glm_moe_dsa__GLM-5.1.json")
    assert flops.indexer_flops_per_key(v32) == 16_512
    assert flops.indexer_flops_per_key(glm) == 8_256
    assert flops.indexer_flops_per_key(v3) == 0
    dense = dataclasses.replace(v32, indexer_topk=0)
    assert flops.indexer_flops_per_key(dense) == 0  # no top-k: attends to everything
    f = flops.forward_attention_flops_per_token
    assert f(v32, context=4096) == 14_359_724_032
    assert f(v32, context=131072) == 142_254_014_464
    assert f(dense, context=131072) == f(v3, context=131072) == 654_982_512_640
    assert f(v32, context=1000) == f(v3, context=1000) + 61 * 16_512 * 1000
    # every other model is unchanged: no top-k, no indexer term
    assert f(preset("llama-2-7b"), context=4096) == 4 * 32 * 32 * 128 * 4096


def test_dsa_training_attention_runs_the_indexer_backward_on_the_picked_keys_only() -> None:
    """DeepSeek-V3.2's sparse training stage (DeepSeek-AI 2025, arXiv 2512.02556): the
    indexer's KL loss covers only the selected set S_t and its input is detached, so its
    backward pass (twice the forward) runs on the picked keys; the attention is three
    times its forward over them. By hand at 131,072 tokens: 61 x (3 x 81,920 x 2,048 +
    16,512 x (131,072 + 2 x 2,048)) = 166,847,840,256 (three forward passes:
    426,762,043,392; dense: 1,964,947,537,920). At 2,048 tokens (the top-k) the attention
    is the dense count and the indexer adds 61 x 16,512 x 3 x 2,048."""
    import dataclasses
    from pathlib import Path

    from gpulesson.transformer import from_hf_config
    hf = Path(__file__).resolve().parents[1] / "data" / "hf_configs"
    v32 = from_hf_config(hf / "deepseek_v32__DeepSeek-V3.2.json")
    dense = dataclasses.replace(v32, indexer_heads=0, indexer_head_dim=0, indexer_topk=0)
    m = flops.model_attention_flops_per_token
    assert m(v32, seq_len=131072) == 166_847_840_256
    assert m(dense, seq_len=131072) == 1_964_947_537_920
    assert m(v32, seq_len=2048) == m(dense, seq_len=2048) + 61 * 16_512 * 3 * 2048
    assert flops.indexer_training_flops(v32, scored=131072, selected=2048) == 2_231_894_016
    assert flops.indexer_training_flops(dense, scored=10, selected=5) == 0
    with pytest.raises(ValueError, match="selected"):
        flops.indexer_training_flops(v32, scored=10, selected=11)
    # the training total follows: 6 N_active + the attention above
    assert flops.model_flops_per_token(v32, seq_len=131072) == pytest.approx(
        6 * flops.active_params(v32) + 166_847_840_256, rel=1e-12)
    # dense models are unchanged: three forward passes
    llama = preset("llama-2-7b")
    assert m(llama, seq_len=4096) == 3 * flops.forward_attention_flops_per_token(
        llama, context=4096) == 12 * 32 * 32 * 128 * 4096


def test_attended_keys_sums_causal_keys_under_a_cap() -> None:
    """sum_{i=1..k} min(c + i, w): causal T(T+1)/2 without a cap; with DeepSeek-V3.2's
    top-k of 2,048 over 131,072 tokens, 2,048 x 2,049 / 2 + 129,024 x 2,048."""
    assert flops.attended_keys(0, 131072) == 131072 * 131073 // 2
    assert flops.attended_keys(0, 131072, 2048) == 2048 * 2049 // 2 + 129_024 * 2048
    assert flops.attended_keys(0, 1000, 2048) == flops.attended_keys(0, 1000)
    assert flops.attended_keys(10, 3) == 11 + 12 + 13
    assert flops.attended_keys(10, 3, 12) == 11 + 12 + 12
    assert flops.attended_keys(10, 3, None) == 36  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="new_tokens"):
        flops.attended_keys(0, -1)


def test_dsa_kernels_run_latent_attention_absorbed_past_the_top_k() -> None:
    """The DeepSeek-V3.2-Exp report (section 1, "Instantiate DSA Under MLA") implements
    DSA in the MQA mode of MLA: every head attends to the 576-wide latent and rotary key
    and the 512-wide latent value, 2 x 128 x (2 x 512 + 64) = 278,528 FLOPs a key and
    layer (FlashMLA's sparse kernels count 2 h_q (d_qk + d_v) with 576 and 512), where
    the up-projected heads (MHA mode, the model count) do 2 x 128 x (192 + 128) = 81,920.
    GLM-5.1 (64 heads): 2 x 64 x 1,088 = 139,264 against 2 x 64 x (256 + 256) = 65,536.
    A sequence within the top-k runs the dense up-projected kernel (vLLM's
    use_dense_mha), as does latent attention without a top-k (DeepSeek-V3) and every
    other model. At 131,072 tokens a DeepSeek-V3.2 token's forward attention over its
    picked keys is 278,528 x 2,048 = 570,425,344 FLOPs a layer; the model FLOPs stay
    81,920 x 2,048."""
    import dataclasses
    from pathlib import Path

    from gpulesson.transformer import from_hf_config
    hf = Path(__file__).resolve().parents[1] / "data" / "hf_configs"
    v32 = from_hf_config(hf / "deepseek_v32__DeepSeek-V3.2.json")
    v3 = from_hf_config(hf / "deepseek_v3__DeepSeek-V3.json")
    glm = from_hf_config(hf / "glm_moe_dsa__GLM-5.1.json")
    absorbed, run = flops.absorbed_attention_flops_per_key, flops.executed_attention_flops_per_key
    assert absorbed(v32) == absorbed(v3) == 278_528
    assert absorbed(glm) == 139_264 and flops.attention_flops_per_key(glm) == 65_536
    assert run(v32, sequence=131072) == run(v32, sequence=2049) == 278_528
    assert run(v32, sequence=2048) == run(v32, sequence=1) == 81_920
    assert run(glm, sequence=131072) == 139_264
    assert run(v3, sequence=131072) == 81_920  # no top-k: prefill and training up-projected
    llama = preset("llama-2-7b")
    assert run(llama, sequence=131072) == flops.attention_flops_per_key(llama) == 16_384
    assert run(v32, sequence=131072) * 2048 == 570_425_344
    # the model count (MFU's numerator) is unchanged
    assert flops.forward_attention_flops_per_token(v32, context=131072) == 142_254_014_464
    # the decode helper uses the same count
    from gpulesson import inference
    assert inference.decode_attention_flops(v32, context_len=131071) == 61 * (
        278_528 * 2048 + 16_512 * 131072)
    with pytest.raises(ValueError, match="no latent attention"):
        absorbed(llama)
    with pytest.raises(ValueError, match="sequence"):
        run(v32, sequence=0)
    nodsa = dataclasses.replace(v32, indexer_heads=0, indexer_head_dim=0, indexer_topk=0)
    assert run(nodsa, sequence=131072) == 81_920
