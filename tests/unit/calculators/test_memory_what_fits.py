"""Lesson 3's calculators on published figures: parameter counts, and the memory of
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


@pytest.mark.parametrize(("inputs", "per_layer"), [
    ({"recompute": "none"}, 4096 * 4096 * (34 + 5 * 32 * 4096 / 4096)),
    ({"recompute": "selective"}, 34 * 4096 * 4096),
    ({"recompute": "full"}, 2 * 4096 * 4096),
    ({"recompute": "none", "tp": 8, "sequence_parallel": "yes"},
     4096 * 4096 * (34 + 5 * 32 * 4096 / 4096) / 8),
], ids=["none", "selective", "full", "tp8-sp"])
def test_activations_follow_korthikanti_table_2(inputs, per_layer):
    """Korthikanti et al. 2022, Table 2, bytes of activations per layer of a GPT-style block
    in 16-bit: s·b·h·(34 + 5·a·s/h) without recomputation, 34·s·b·h with selective
    recomputation, 2·s·b·h (the layer input) with full recomputation, and all of it
    divided by t with tensor and sequence parallelism. Llama-2-7B's shape (h = 4,096,
    a = 32, 32 layers) at s = 4,096, b = 1: 104.15 GB, 18.25 GB and 1.07 GB in all."""
    assert C.compute("training_memory", **inputs)["activations"] == 32 * per_layer


def test_tensor_parallelism_must_divide_the_heads():
    """Llama-2-7B has 32 attention heads: 3 GPUs cannot share them out."""
    result = C.evaluate("training_memory", {"tp": 3})
    assert result == {"ok": False, "error": "tp must divide heads (32), got 3", "input": "tp"}
