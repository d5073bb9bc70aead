"""gpulesson.fp8_training: FP8 training recipes and their bytes per parameter."""

from __future__ import annotations

import pytest

from gpulesson import fp8_training, memory

# ---------------------------------------------------------------------------------------
# Published figures

#: Tazi et al. 2025, *The Ultra-Scale Playbook* (huggingface.co/spaces/nanotron/
#: ultrascale-playbook), section "FP8 pretraining", the table of known approaches: total
#: memory per parameter and its reduction against the BF16 + FP32 baseline, as printed
#: ("4 + 4 + 2 + 2 + 4 + 4 = 20 bytes", "... = 16 bytes (20% reduction)", "... = 9 bytes
#: (55% reduction)", "... = 15 (25% reduction)", "... = 10 bytes (50% reduction)").
PLAYBOOK_TOTALS = [
    ("bf16_fp32_accum", None, 20, 0),
    ("bf16", None, 16, 20),
    ("transformer_engine", None, 16, 20),
    ("fp8lm_o3", "fp16", 9, 55),
    ("deepseek_v3", None, 15, 25),
    ("nanotron_fp8", None, 10, 50),
]


@pytest.mark.parametrize(("name", "accumulate_in", "total", "reduction"), PLAYBOOK_TOTALS,
                         ids=[row[0] for row in PLAYBOOK_TOTALS])
def test_source_playbook_fp8_table(name: str, accumulate_in: str | None, total: int,
                                   reduction: int) -> None:
    got = fp8_training.recipe_bytes_per_param(name, accumulate_in=accumulate_in)
    assert got == total
    baseline = fp8_training.recipe_bytes_per_param("bf16_fp32_accum")
    assert round(100 * (1 - got / baseline)) == reduction


def test_source_msamp_levels_bytes_and_optimizer_saving() -> None:
    """MS-AMP (FP8-LM's release), docs/user-tutorial/optimization-level.md: the table of
    levels (FP16 AMP: FP32 weight, gradient and moments; O1: FP16 weights, FP8 weight
    gradients, FP32+FP32 moments; O2: FP8+FP16 moments; O3: FP8 weights, FP16 master
    weights) and "This optimization has the potential to save up to 62.5% of GPU memory
    for the optimizer" (O2). Totals 16, 11, 6 and 7 bytes per parameter; O2's moments are
    3 bytes against 8."""
    totals = {name: fp8_training.recipe_bytes_per_param(name)
              for name in ("fp16_amp", "fp8lm_o1", "fp8lm_o2", "fp8lm_o3")}
    assert totals == {"fp16_amp": 16, "fp8lm_o1": 11, "fp8lm_o2": 6, "fp8lm_o3": 7}
    saved = 1 - (fp8_training.optimizer_state_bytes("msamp_o2")
                 / fp8_training.optimizer_state_bytes("msamp_o1"))
    assert saved == pytest.approx(0.625)


def test_source_nanotron_code_recipe_is_fp8lm_o3() -> None:
    """huggingface/nanotron, src/nanotron/fp8/constants.py, ``FP8LM_RECIPE`` ("the
    training recipe of the FP8-LM paper"): weights and weight gradients FP8E4M3,
    ``master_weight_dtype=DTypes.KFLOAT16``, ``exp_avg_dtype=DTypes.FP8E4M3``,
    ``exp_avg_sq_dtype=DTypes.KFLOAT16``: the same stored formats as MS-AMP's O3 row, an
    independent source, so 7 bytes per parameter."""
    nanotron_code = {"weights": "fp8_e4m3", "gradients": "fp8_e4m3",
                     "master_weights": "fp16", "first_moment": "fp8_e4m3",
                     "second_moment": "fp16"}
    o3 = fp8_training.recipe_bytes("fp8lm_o3")
    assert set(o3) == set(nanotron_code)
    from gpulesson import precision
    assert sum(precision.bytes_per_element(f) for f in nanotron_code.values()) == sum(
        o3.values()) == 7


def test_source_deepseek_v3_keeps_fp32_master_and_bf16_moments() -> None:
    """DeepSeek-AI 2024, DeepSeek-V3 Technical Report, section 3.3.3: "We adopt the BF16
    data format instead of FP32 to track the first and second moments in the AdamW
    optimizer ... the master weights (stored by the optimizer) and gradients (used for
    batch size accumulation) are still retained in FP32". The moments take 4 bytes
    instead of 8; master and accumulation 4 each."""
    parts = fp8_training.recipe_bytes("deepseek_v3")
    assert parts["first_moment"] + parts["second_moment"] == 4
    assert parts["master_weights"] == parts["accumulated_gradients"] == 4
    assert fp8_training.recipe("deepseek_v3").gemm == "fp8"


def test_memory_module_agrees_with_the_recipes() -> None:
    """gpulesson.memory's training precisions (used by the planners) give the same totals
    as the recipes for the three it shares: 16, 20 and 15 bytes with Adam."""
    for name in ("mixed", "mixed_fp32_grad_accum", "fp8_deepseek_v3"):
        assert memory.bytes_per_param(name) == fp8_training.recipe_bytes_per_param(name)


# ---------------------------------------------------------------------------------------
# Behaviour


def test_state_memory_of_a_70b_model() -> None:
    """70e9 parameters with DeepSeek-V3's recipe keep 1.05 TB of model state (15 bytes
    each), FP8-LM O2 420 GB (6 bytes)."""
    assert fp8_training.recipe_state_memory(70e9, "deepseek_v3") == pytest.approx(1.05e12)
    assert fp8_training.recipe_state_memory(70e9, "fp8lm_o2") == pytest.approx(420e9)


def test_accumulation_buffer_can_be_removed() -> None:
    assert fp8_training.recipe_bytes_per_param("deepseek_v3", accumulate_in="none") == 11
    assert "accumulated_gradients" not in fp8_training.recipe_bytes("bf16")


def test_bad_input_names_the_argument() -> None:
    with pytest.raises(KeyError, match="recipe"):
        fp8_training.recipe_bytes_per_param("fp4_magic")
    with pytest.raises(KeyError, match="format"):
        fp8_training.recipe_bytes_per_param("bf16", accumulate_in="fp7")
    with pytest.raises(TypeError, match="accumulate_in"):
        fp8_training.recipe_bytes_per_param("bf16", accumulate_in=4)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n_params"):
        fp8_training.recipe_state_memory(-1, "bf16")
