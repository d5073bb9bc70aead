"""Lesson 4's calculators on published figures: parameter counts, and the memory of
training (model state and activations)."""

from __future__ import annotations

import pytest

from gpulesson import calculators as C


@pytest.mark.parametrize(("model", "count"), [
    ("gpt2", 124_439_808),         # openai-community/gpt2 (GPT2LMHeadModel, tied)
    ("llama-2-7b", 6_738_415_616),  # meta-llama/Llama-2-7b-hf, safetensors index / 2 bytes
    ("llama-3-70b", 70_553_706_496),  # meta-llama/Meta-Llama-3-70B
])
def test_model_presets_give_the_published_parameter_counts(model, count):
    """The counts the models' Hugging Face repositories report (``num_parameters()``, or
    the safetensors index ``total_size`` divided by 2 bytes for the 16-bit checkpoints)."""
    out = C.compute("param_count", model=model)
    assert out["total"] == count
    parts = ("embedding", "attention", "mlp", "norm", "lm_head")
    assert sum(out[p] for p in parts) == count


def test_gpt2_embeddings_and_kaplans_non_embedding_count():
    """GPT-2 small, config.json: 50,257 × 768 token embeddings and 1,024 × 768 learned
    positions = 39,383,808 parameters, the output layer tied to them; Kaplan et al. 2020
    (§2.1) count N without them: 124,439,808 − 39,383,808 = 85,056,000."""
    out = C.compute("param_count", model="gpt2")
    assert (out["embedding"], out["lm_head"]) == (39_383_808, 0)
    assert out["non_embedding"] == 85_056_000


def test_a_custom_shape_reproduces_megatrons_table_1():
    """Narayanan et al. 2021, Table 1: the GPT model of 24 layers, hidden size 2,304 and 24
    heads (vocabulary 51,200, sequence length 2,048) has 1.7 billion parameters."""
    shape = dict(model="custom", hidden=2304, layers=24, heads=24, kv_heads=24,
                 head_dim=96, ffn=4 * 2304, vocab=51200, max_positions=2048,
                 embeddings="tied", mlp="plain", norm="layernorm", biases="all")
    assert round(C.compute("param_count", **shape)["total"] / 1e9, 1) == 1.7


def test_model_state_of_mixed_precision_adam_is_16_bytes_per_parameter():
    """Rajbhandari et al. 2020 (ZeRO), §3.1: mixed-precision Adam keeps 2 + 2 + 12 bytes per
    parameter, so a GPT-2 of 1.5B parameters needs at least 24 GB for its model states
    though its FP16 weights are 3 GB (GPT-2 XL: 1,557,611,200 parameters)."""
    out = C.compute("training_memory", model="gpt2-xl")
    assert out["bytes_per_param"] == 16
    assert (out["weights"], out["gradients"], out["optimizer_state"]) == (
        2 * 1_557_611_200, 2 * 1_557_611_200, 12 * 1_557_611_200)
    state = out["weights"] + out["gradients"] + out["optimizer_state"]
    assert state == 16 * 1_557_611_200 >= 24e9
    assert round(out["weights"] / 1e9) == 3


GPT3 = {"model": "gpt3-175b", "seq_len": 2048}


@pytest.mark.parametrize(("inputs", "per_layer"), [
    ({"recompute": "none"}, 2048 * 12288 * (34 + 5 * 96 * 2048 / 12288)),
    ({"recompute": "selective"}, 34 * 2048 * 12288),
    ({"recompute": "full"}, 2 * 2048 * 12288),
    ({"recompute": "none", "tp": 8, "sequence_parallel": "yes"},
     2048 * 12288 * (34 + 5 * 96 * 2048 / 12288) / 8),
    ({"recompute": "selective", "tp": 8}, 2048 * 12288 * (10 + 24 / 8)),
], ids=["none", "selective", "full", "tp8-sp", "tp8-selective"])
def test_gpt3_activations_follow_korthikanti_table_2(inputs, per_layer):
    """Korthikanti et al. 2022, Table 2, bytes of activations per layer of a GPT block in
    16-bit (eager attention, dropout: GPT-3 as the preset trains it): s·b·h·(34 + 5·a·s/h)
    without recomputation, 34·s·b·h with selective recomputation, 2·s·b·h with full
    recomputation, everything divided by t with tensor and sequence parallelism, and
    s·b·h·(10 + 24/t) with tensor parallelism alone. GPT-3 (h = 12,288, a = 96, 96 layers)
    at s = 2,048: the attention term 5as/h = 80."""
    out = C.compute("training_memory", **GPT3, **inputs)
    assert C.resolve("training_memory", **GPT3)["attention"] == "eager"
    assert out["activations"] == 96 * per_layer


def test_llama2_7b_trains_with_flashattention_by_default():
    """Dao et al. 2022 (FlashAttention, section 3.1): the N×N scores are never stored, only
    one statistic per row, and PyTorch's SDPA and Hugging Face run it for Llama by default.
    So Llama-2-7B at 4,096 tokens (no dropout, SwiGLU) keeps no 2·a·s²·b score tensor per
    layer: the eager count minus 32 layers × (2 × 32 × 4,096² − 4 × 32 × 4,096 bytes of
    FP32 log-sum-exp)."""
    flash = C.compute("training_memory")
    eager = C.compute("training_memory", attention="eager")
    assert C.resolve("training_memory")["attention"] == "flash"
    assert eager["activations"] - flash["activations"] == 32 * (
        2 * 32 * 4096**2 - 4 * 32 * 4096)
    assert C.evaluate("training_memory")["text"]["activations"] == "17.3 GB"


def test_moe_presets_hold_every_expert_and_compute_with_the_active_ones():
    """Jiang et al. 2024 (Mixtral of Experts, section 2.1): Mixtral 8x7B has 47B parameters
    and uses 13B active parameters per token (46,702,792,704 and 12,879,925,248 from its
    config.json); DeepSeek-AI 2024 (DeepSeek-V3 technical report, section 1): 671B in total,
    37B activated per token, counted without the input embedding."""
    mixtral = C.compute("param_count", model="mixtral-8x7b")
    assert (round(mixtral["total"] / 1e9), round(mixtral["active"] / 1e9)) == (47, 13)
    assert mixtral["routed_experts"] == mixtral["mlp"] - 32 * 4096 * 8  # routers aside
    v3 = C.compute("param_count", model="deepseek-v3")
    assert round(v3["total"] / 1e9) == 671
    assert round((v3["active"] - v3["embedding"]) / 1e9) == 37
    memory = C.compute("training_memory", model="mixtral-8x7b")
    assert memory["weights"] == 2 * mixtral["total"]


def test_a_preset_keeps_what_the_form_does_not_show():
    """Gemma 2 (Gemma Team 2024): four RMSNorms per layer, where the form shows one norm
    kind only; the preset keeps them, so its count is the checkpoint's 9,241,705,984
    (google/gemma-2-9b; KerasHub's gemma2_9b_en metadata and the Hugging Face safetensors
    total agree). The same fields typed as a custom
    model describe a two-norm block, 42 × 2 × 3,584 parameters fewer."""
    preset = C.compute("param_count", model="gemma-2-9b")
    assert preset["total"] == 9_241_705_984
    fields = dict(C.resolve("param_count", model="gemma-2-9b"), model="custom")
    assert preset["total"] - C.compute("param_count", **fields)["total"] == 42 * 2 * 3584


def test_tensor_parallelism_must_divide_the_heads():
    """Llama-2-7B has 32 attention heads: 3 GPUs cannot share them out."""
    result = C.evaluate("training_memory", {"tp": 3})
    assert result == {"ok": False, "error": "tp must divide heads (32), got 3", "input": "tp"}


def test_gpus_needed_is_never_fewer_than_the_tensor_parallel_group():
    """Review r22 F9: Llama-2-7B with TP = 8 and sequence parallelism showed "GPUs needed
    2" (its 15.6 GB per GPU × 8, fully sharded, over 80 GB) beside a plan that splits every
    layer over 8 GPUs. The output is now at least the TP size; without TP it is still the
    whole state fully sharded."""
    tp8 = C.evaluate("training_memory", {"tp": 8, "sequence_parallel": "yes"})
    assert tp8["ok"] and tp8["text"]["total"] == "15.6 GB"
    assert tp8["values"]["fits"] is True and tp8["values"]["gpus_needed"] == 8
    alone = C.evaluate("training_memory")  # TP = 1: 125.1 GB over 80 GB GPUs
    assert (alone["text"]["total"], alone["values"]["gpus_needed"]) == ("125.1 GB", 2)
    # a diff review the same day: Llama-3-70B at TP 8 (171.1 GB per GPU, 18 GPUs of
    # state) read 18, no whole number of TP groups; 3 groups of 8 hold it
    big = C.evaluate("training_memory", {"model": "llama-3-70b", "tp": 8})
    assert big["ok"] and big["values"]["gpus_needed"] == 24, big["values"]
