"""gpulesson.transformer: parameter counts of the model presets and of any configuration.

Published figures: each test names its primary source. Exact counts are compared exactly;
figures that a paper rounds are compared within the rounding of the printed digits. The
argument rules every calculator shares (counts are ints, names are looked up ignoring
case) are checked in ``test_validate.py``.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpulesson import transformer
from gpulesson.transformer import TransformerConfig, param_count, preset

from .strategies import configs
from .test_transformer_hf import HF_DIR  # noqa: F401 - other tests import it from here

# ---------------------------------------------------------------------------------------
# Published figures


# (preset, exact count from the model's Hugging Face config.json arithmetic, source).
# The counts are those the model repositories report (e.g. `model.num_parameters()`,
# and the safetensors index total_size / 2 for the 16-bit checkpoints).
EXACT_COUNTS = [
    ("gpt2", 124_439_808, "openai-community/gpt2 config.json (GPT2LMHeadModel, tied)"),
    ("gpt2-medium", 354_823_168, "openai-community/gpt2-medium config.json"),
    ("gpt2-large", 774_030_080, "openai-community/gpt2-large config.json"),
    ("gpt2-xl", 1_557_611_200, "openai-community/gpt2-xl config.json"),
    ("llama-2-7b", 6_738_415_616, "meta-llama/Llama-2-7b-hf config.json"),
    ("llama-2-13b", 13_015_864_320, "meta-llama/Llama-2-13b-hf config.json"),
    ("llama-2-70b", 68_976_648_192, "meta-llama/Llama-2-70b-hf config.json (GQA, 8 KV heads)"),
    ("llama-3-8b", 8_030_261_248, "meta-llama/Meta-Llama-3-8B config.json"),
    ("llama-3-70b", 70_553_706_496, "meta-llama/Meta-Llama-3-70B config.json"),
    ("llama-3.1-405b", 405_853_388_800, "meta-llama/Llama-3.1-405B config.json"),
    ("llama-3.2-1b", 1_235_814_400, "meta-llama/Llama-3.2-1B config.json (tied)"),
    ("mistral-7b", 7_241_732_096, "mistralai/Mistral-7B-v0.1 config.json"),
    ("qwen2.5-7b", 7_615_616_512, "Qwen/Qwen2.5-7B config.json (qkv biases)"),
]


@pytest.mark.parametrize(("name", "expected", "source"), EXACT_COUNTS,
                         ids=[row[0] for row in EXACT_COUNTS])
def test_source_hf_config_exact_parameter_count(name: str, expected: int, source: str) -> None:
    """Source: the model's own config.json; the count is the model's reported total."""
    assert param_count(preset(name)) == expected, source


@pytest.mark.parametrize(
    ("name", "reported_billions", "tolerance"),
    [
        ("llama-2-7b", 7, 0.5), ("llama-2-13b", 13, 0.5),
        ("llama-3-8b", 8, 0.5), ("llama-3-70b", 70, 1), ("llama-3.1-405b", 405, 1),
        ("qwen2.5-7b", 7.61, 0.01), ("llama-3.2-1b", 1.23, 0.01),
    ],
)
def test_source_model_card_headline_size(name: str, reported_billions: float,
                                         tolerance: float) -> None:
    """Sources: model cards / papers: Llama 2 (Touvron et al. 2023, Table 1: 7B, 13B;
    its "70B" is 69.0B and is checked exactly above), Llama 3 herd (Dubey et al. 2024,
    Table 3: 8B, 70B, 405B), Qwen2.5 technical report (Qwen Team 2024, Table 1: 7.61B),
    Llama 3.2 1B model card (1.23B).
    The tolerance is the rounding of the printed headline."""
    count = param_count(preset(name)) / 1e9
    assert count == pytest.approx(reported_billions, abs=tolerance)


def test_source_gpt3_175b_parameter_count() -> None:
    """Brown et al. 2020 (GPT-3), Table 2.1: 175.0B parameters for d_model 12288, 96 layers."""
    assert param_count(preset("gpt3-175b")) / 1e9 == pytest.approx(175.0, abs=0.5)


# Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters
# Using Megatron-LM", Table 1: GPT models with vocabulary 51,200 and sequence length 2048.
MEGATRON_TABLE_1 = [
    # (billions as printed, heads, hidden, layers)
    (1.7, 24, 2304, 24), (3.6, 32, 3072, 30), (7.5, 32, 4096, 36), (18.4, 48, 6144, 40),
    (39.1, 64, 8192, 48), (76.1, 80, 10240, 60), (145.6, 96, 12288, 80),
    (310.1, 128, 16384, 96), (529.6, 128, 20480, 105), (1008.0, 160, 25600, 128),
]


@pytest.mark.parametrize(("billions", "heads", "hidden", "layers"), MEGATRON_TABLE_1,
                         ids=[f"{row[0]}B" for row in MEGATRON_TABLE_1])
def test_source_megatron_table1_parameter_counts(billions: float, heads: int, hidden: int,
                                                 layers: int) -> None:
    """Narayanan et al. 2021, Table 1 (their eq. 2 is the GPT-2-style count)."""
    cfg = TransformerConfig(hidden=hidden, layers=layers, heads=heads, vocab=51200,
                            max_positions=2048)
    assert round(param_count(cfg) / 1e9, 1) == pytest.approx(billions)


def test_source_seed_gpt2_formula_and_breakdown() -> None:
    """The GPT-2 count C = E(V+P) + L(12E^2 + 13E) + 2E (Radford et al. 2019 architecture;
    the seed formula, which is right) for GPT-2 small: 124.4M. The MLP is 56.7M and
    attention 28.3M (the seed's 84.9M for attention is all non-embedding weights)."""
    cfg = preset("gpt2")
    e, v, p, layers = 768, 50257, 1024, 12
    assert param_count(cfg) == e * (v + p) + layers * (12 * e * e + 13 * e) + 2 * e
    parts = transformer.param_breakdown(cfg)
    assert round(parts["mlp"] / 1e6, 1) == 56.7
    assert round(parts["attention"] / 1e6, 1) == 28.3
    assert round(parts["embedding"] / 1e6, 1) == 39.4


def test_source_kaplan_non_embedding_approximation() -> None:
    """Kaplan et al. 2020, section 2.1: N ~= 12 * n_layer * d_model^2 excluding embeddings
    (biases and norms make the exact count slightly larger)."""
    for name in ("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl"):
        cfg = preset(name)
        approx = 12 * cfg.layers * cfg.hidden**2
        assert transformer.non_embedding_params(cfg) == pytest.approx(approx, rel=2e-3)


def test_source_qwen_report_non_embedding_params() -> None:
    """Qwen Team 2024, Qwen2.5 technical report, Table 1: Qwen2.5-7B has 6.53B
    non-embedding parameters (the untied output matrix is excluded too)."""
    count = transformer.non_embedding_params(preset("qwen2.5-7b")) / 1e9
    assert round(count, 2) == 6.53


# ---------------------------------------------------------------------------------------
# Validation


def test_kv_heads_must_divide_heads() -> None:
    with pytest.raises(ValueError, match=r"kv_heads must divide heads \(32\), got 5"):
        TransformerConfig(hidden=4096, layers=2, heads=32, kv_heads=5, vocab=100)


def test_hidden_must_divide_by_heads_without_head_dim() -> None:
    with pytest.raises(ValueError, match="divisible by heads"):
        TransformerConfig(hidden=100, layers=2, heads=3, vocab=100)


@pytest.mark.parametrize(("fields", "match"), [
    ({"experts": 8, "experts_per_token": 9}, r"experts_per_token must be between 1 and "
     r"experts \(8\), got 9"),
    ({"experts": 8, "experts_per_token": 0}, r"experts_per_token must be between 1"),
    ({"experts_per_token": 2}, r"experts_per_token needs routed experts"),
    ({"experts": 8, "experts_per_token": 2, "dense_layers": 4},
     r"dense_layers must be below layers \(4\)"),
    ({"expert_ffn": 64}, r"expert_ffn needs routed experts"),
    ({"context": 1024, "sliding_window": 4096},
     r"sliding_window must be at most the context \(1024 tokens\), got 4096"),
    ({"sliding_window": 128, "sliding_window_pattern": 1},
     r"sliding_window_pattern must be 0 \(every layer local\) or between 2 and layers"),
    ({"sliding_window_pattern": 2}, r"needs a sliding_window > 0"),
    ({"v_head_dim": 64}, r"v_head_dim is a latent-attention size"),
    ({"kv_lora_rank": 64, "linear_bias": False}, r"qk_rope_head_dim must be a positive"),
    ({"kv_lora_rank": 64, "qk_rope_head_dim": 16, "v_head_dim": 32, "kv_heads": 2,
      "linear_bias": False}, r"kv_heads must equal heads \(4\) with latent attention"),
    ({"kv_lora_rank": 64, "qk_rope_head_dim": 16, "v_head_dim": 32},
     r"linear_bias must be False with latent attention"),
    ({"qk_norm": "both"}, r"qk_norm must be one of \['none', 'head', 'full'\]"),
    ({"norms_per_layer": -1}, r"norms_per_layer must be a non-negative integer, got -1"),
    ({"glu_limit": -7.0}, r"glu_limit must be a finite non-negative number, got -7.0"),
    ({"glu_limit": 7.0}, r"glu_limit clamps the two halves of a gated MLP: it needs "
     r"gated_mlp=True"),
])
def test_architecture_fields_are_validated(fields: dict, match: str) -> None:
    """Each error names the field, the value and what is allowed."""
    with pytest.raises(ValueError, match=match):
        TransformerConfig(hidden=256, layers=4, heads=4, vocab=100, **fields)


def test_cfg_must_be_a_config() -> None:
    with pytest.raises(TypeError, match="TransformerConfig"):
        transformer.param_count({"hidden": 1})  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------
# Properties


@given(cfg=configs())
def test_breakdown_sums_and_is_nonnegative(cfg: TransformerConfig) -> None:
    parts = transformer.param_breakdown(cfg)
    assert set(parts) >= {"embedding", "attention", "mlp", "norm", "lm_head"}
    assert all(isinstance(x, int) and x >= 0 for x in parts.values())
    assert sum(parts.values()) == transformer.param_count(cfg)
    assert 0 <= transformer.non_embedding_params(cfg) <= transformer.param_count(cfg)


@st.composite
def moe_configs(draw: st.DrawFn) -> TransformerConfig:
    """Small mixture-of-experts models, with or without shared and dense layers."""
    layers = draw(st.integers(2, 16))
    experts = draw(st.integers(1, 64))
    shared = draw(st.integers(0, 2))
    return TransformerConfig(
        hidden=64, layers=layers, heads=4, vocab=draw(st.integers(1, 5000)),
        ffn=draw(st.integers(1, 512)), experts=experts,
        experts_per_token=draw(st.integers(1, experts)), shared_experts=shared,
        expert_ffn=draw(st.integers(1, 256)), dense_layers=draw(st.integers(0, layers - 1)),
        gated_mlp=draw(st.booleans()), router_bias=draw(st.booleans()),
        shared_expert_gate=shared > 0 and draw(st.booleans()), linear_bias=False,
        tied_embeddings=draw(st.booleans()))


@given(cfg=moe_configs())
def test_moe_counts_add_up(cfg: TransformerConfig) -> None:
    parts = transformer.param_breakdown(cfg)
    assert sum(transformer.moe_breakdown(cfg).values()) == parts["mlp"]
    active = transformer.active_params(cfg)
    assert transformer.active_params(cfg, input_embedding=False) <= active
    assert 0 < active <= param_count(cfg)
    everything = dataclasses.replace(cfg, experts_per_token=cfg.experts)
    assert transformer.active_params(everything) == param_count(cfg)


@given(cfg=configs(), extra=st.integers(1, 10))
def test_more_layers_never_fewer_parameters(cfg: TransformerConfig, extra: int) -> None:

    deeper = dataclasses.replace(cfg, layers=cfg.layers + extra)
    assert transformer.param_count(deeper) > transformer.param_count(cfg)


@pytest.mark.parametrize("name", [-1, None, "", "  ", 7.5, ["llama-2-7b"]])
def test_model_label_refuses_what_is_no_name(name: object) -> None:
    from gpulesson.transformer.presets import model_label

    with pytest.raises(TypeError, match=r"name must be a model's name .* got"):
        model_label(name)  # type: ignore[arg-type]
    assert model_label("llama-2-7b") == "Llama-2-7B" and model_label("my-model") == "my-model"


def test_routing_groups_are_checked() -> None:
    """Group-limited routing: equal groups of the routed experts, 1 to all of them picked,
    holding at least experts_per_token experts; none on a dense model."""
    moe = dict(hidden=64, layers=2, heads=4, vocab=100, experts=16, experts_per_token=4)
    cfg = TransformerConfig(**moe, routing_groups=4, routing_group_topk=2)
    assert (cfg.routing_groups, cfg.routing_group_topk) == (4, 2)
    for bad, match in (({"routing_groups": 3, "routing_group_topk": 1}, "routing_groups"),
                       ({"routing_groups": 4, "routing_group_topk": 5}, "routing_group_topk"),
                       ({"routing_groups": 4, "routing_group_topk": 0}, "routing_group_topk"),
                       ({"routing_group_topk": 2}, "routing_group_topk needs routing_groups"),
                       ({"routing_groups": 8, "routing_group_topk": 1}, "cannot hold"),
                       ({"routing_groups": -1}, "routing_groups")):
        with pytest.raises(ValueError, match=match):
            TransformerConfig(**moe, **bad)
    with pytest.raises(ValueError, match="routing_groups needs routed experts"):
        TransformerConfig(hidden=64, layers=2, heads=4, vocab=100, routing_groups=2,
                          routing_group_topk=1)
