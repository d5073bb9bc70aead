"""gpulesson.transformer: parameter counts of the model presets and of any configuration.

Published figures: each test names its primary source. Exact counts are compared exactly;
figures that a paper rounds are compared within the rounding of the printed digits. The
argument rules every calculator shares (counts are ints, names are looked up ignoring
case) are checked in ``test_validate.py``.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpulesson import transformer
from gpulesson.transformer import TransformerConfig, param_count, preset

from .strategies import configs

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
# Any config.json: real files, each with its exact count and source (tests/data/hf_configs)

HF_DIR = Path(__file__).resolve().parents[1] / "data" / "hf_configs"
HF_INDEX = json.loads((HF_DIR / "index.json").read_text())["files"]
EXACT_FILES = sorted(f for f, e in HF_INDEX.items() if e["params"] is not None)
ROUNDED = sorted((f, what) for f, e in HF_INDEX.items() for what in e.get("rounded", {})
                 if what != "source")


def hf(name: str) -> TransformerConfig:
    return transformer.from_hf_config(HF_DIR / name)


def test_every_config_file_is_indexed_and_every_family_is_covered() -> None:
    """Each file of tests/data/hf_configs has an index entry naming its repository and
    count source; together they cover every model type from_hf_config supports."""
    files = {p.name for p in HF_DIR.glob("*.json")} - {"index.json"}
    assert files == set(HF_INDEX)
    assert all(e["repository"] and e["obtained"] and e["params_source"]
               for e in HF_INDEX.values())
    families = {f.split("__")[0] for f in files}
    assert families == set(transformer.SUPPORTED_MODEL_TYPES)


@pytest.mark.parametrize("name", EXACT_FILES)
def test_source_hf_config_exact_checkpoint_count(name: str) -> None:
    """Sources: each file's entry in tests/data/hf_configs/index.json (the safetensors
    index total_size / bytes per parameter, the Hub's safetensors metadata, GGUF
    parameter counts or KerasHub's preset metadata). Exact: no tolerance."""
    assert transformer.param_count(hf(name)) == HF_INDEX[name]["params"], (
        HF_INDEX[name]["params_source"])


@pytest.mark.parametrize(("name", "what"), ROUNDED, ids=[f"{f}-{w}" for f, w in ROUNDED])
def test_source_hf_config_published_rounded_figures(name: str, what: str) -> None:
    """Sources: model cards and reports (each entry's ``rounded.source``): Mixtral 46.7B
    total and 12.9B active (Jiang et al. 2024); DeepSeek-V3 671B, 37B activated without
    the input embedding, 685B with the MTP module (DeepSeek-AI 2024); gpt-oss-120b
    116.83B / 5.13B and gpt-oss-20b 20.91B / 3.61B active (OpenAI 2025, Table 1); Gemma 3
    27B's 25,600M non-embedding parameters (Gemma Team 2025, Table 1) ... The interval is
    what the printed digits allow."""
    cfg = hf(name)
    value = {
        "params": transformer.param_count,
        "active": transformer.active_params,
        "active_without_input_embedding":
            lambda c: transformer.active_params(c, input_embedding=False),
        "non_embedding": transformer.non_embedding_params,
        "checkpoint": transformer.checkpoint_params,
    }[what](cfg)
    low, high = HF_INDEX[name]["rounded"][what]
    assert low <= value <= high, (value, HF_INDEX[name]["rounded"]["source"])


def test_source_deepseek_v3_checkpoint_holds_the_mtp_module() -> None:
    """DeepSeek-V3's safetensors (Hugging Face metadata): BF16 3,918,786,560 + F8_E4M3
    680,571,043,840 parameters = the 671B main model and the multi-token-prediction module
    with its own copies of the embedding and head (README_WEIGHTS.md). The F32 entries are
    the FP8 block scales and the 59 MoE layers' 256 router correction biases."""
    cfg = hf("deepseek_v3__DeepSeek-V3.json")
    moe_layers_with_mtp = cfg.moe_layers + cfg.mtp_layers
    stored_16_and_8_bit = transformer.checkpoint_params(cfg) - moe_layers_with_mtp * 256
    assert stored_16_and_8_bit == HF_INDEX["deepseek_v3__DeepSeek-V3.json"][
        "checkpoint_bf16_fp8"] == 3_918_786_560 + 680_571_043_840


# The presets of 2024-26 and the file each copies (all fields but name and source).
PRESET_FILES = {
    "mixtral-8x7b": "mixtral__Mixtral-8x7B-v0.1.json",
    "deepseek-v3": "deepseek_v3__DeepSeek-V3.json",
    "qwen3-8b": "qwen3__Qwen3-8B.json",
    "qwen3-30b-a3b": "qwen3_moe__Qwen3-30B-A3B.json",
    "qwen3-235b-a22b": "qwen3_moe__Qwen3-235B-A22B.json",
    "gemma-2-9b": "gemma2__gemma-2-9b.json",
    "gpt-oss-20b": "gpt_oss__gpt-oss-20b.json",
    "gpt-oss-120b": "gpt_oss__gpt-oss-120b.json",
    "qwen2.5-7b": "qwen2__Qwen2.5-7B.json",
}


@pytest.mark.parametrize("name", sorted(PRESET_FILES))
def test_preset_is_its_config_file(name: str) -> None:
    """Each preset copies its model's config.json: from_hf_config gives the same model."""
    from_file = dataclasses.replace(hf(PRESET_FILES[name]), name=name,
                                    source=preset(name).source)
    assert from_file == preset(name)


def test_presets_that_differ_from_their_file_only_where_stated() -> None:
    """mistral-7b is its config.json, 4,096-token sliding window included (Jiang et al.
    2023, section 2); Phi-3-mini (4k) and Phi-3.5-mini share every matrix; both counts
    match."""
    mistral = hf("mistral__Mistral-7B-v0.1.json")
    assert mistral.sliding_window == 4096
    assert dataclasses.replace(mistral, name="mistral-7b",
                               source=preset("mistral-7b").source) == preset("mistral-7b")
    assert param_count(preset("phi-3-mini")) == HF_INDEX[
        "phi3__Phi-3.5-mini-instruct.json"]["params"]


def test_every_preset_has_a_label_and_a_source() -> None:
    assert set(transformer.MODEL_LABELS) == set(transformer.PRESETS)
    assert all(cfg.source for cfg in transformer.PRESETS.values())


@pytest.mark.parametrize(("name", "low", "high", "input_embedding", "source"), [
    ("mixtral-8x7b", 12.85e9, 12.95e9, True, "Mistral AI 2023: 12.9B per token"),
    ("deepseek-v3", 36.5e9, 37.5e9, False, "DeepSeek-AI 2024: 37B activated"),
    ("deepseek-v3", 37.5e9, 37.6e9, True, "37B is about 37.5B with the input embedding"),
    ("qwen3-30b-a3b", 3.3e9, 3.4e9, True, "Qwen3 card: 3.3B activated"),
    ("qwen3-235b-a22b", 21.5e9, 22.5e9, True, "Qwen3 card: 22B activated"),
    ("gpt-oss-20b", 3.605e9, 3.615e9, False, "OpenAI 2025, Table 1: 3.61B active"),
    ("gpt-oss-120b", 5.125e9, 5.135e9, False, "OpenAI 2025, Table 1: 5.13B active"),
])
def test_source_active_parameters_of_the_moe_presets(name: str, low: float, high: float,
                                                     input_embedding: bool,
                                                     source: str) -> None:
    """Published active (activated) parameters per token; DeepSeek and OpenAI state them
    without the input embedding, a lookup that costs no multiplication."""
    active = transformer.active_params(preset(name), input_embedding=input_embedding)
    assert low <= active <= high, source


def test_active_parameters_skip_exactly_the_unrouted_experts() -> None:
    """Mixtral: each of 32 layers skips 6 of its 8 experts of 3 x 4096 x 14336 weights."""
    cfg = preset("mixtral-8x7b")
    expert = transformer.expert_params(cfg)
    assert expert == 3 * 4096 * 14336
    assert param_count(cfg) - transformer.active_params(cfg) == 32 * 6 * expert
    assert transformer.active_params(preset("llama-3-8b")) == param_count(preset("llama-3-8b"))


def test_hf_config_reads_a_mapping_or_a_path_alike() -> None:
    path = HF_DIR / "mixtral__Mixtral-8x7B-v0.1.json"
    from_path = transformer.from_hf_config(path)
    from_str = transformer.from_hf_config(str(path))
    from_mapping = transformer.from_hf_config(json.loads(path.read_text()))
    assert from_path == from_str == from_mapping
    assert from_path.experts == 8 and from_path.experts_per_token == 2


def test_hf_config_architecture_details() -> None:
    """What each family's modelling code does that its config.json does not spell out
    (transformers' modelling files): Qwen2 biases q, k, v; Gemma 2 has four norms and a
    window on every other layer; Gemma 3 five local layers per global one and q/k norms;
    gpt-oss sinks, biased experts and alternating 128-token windows; OLMo 2 norms over the
    whole q and k projections; Falcon-7B one norm per parallel block and one KV head;
    DeepSeek-V3 latent attention with 3 dense layers; a multimodal Gemma 3 reads its
    text_config."""
    qwen = hf("qwen2__Qwen2.5-7B.json")
    assert qwen.qkv_bias and not qwen.attn_out_bias and not qwen.sliding_window
    gemma2 = hf("gemma2__gemma-2-9b.json")
    assert (gemma2.norms_per_layer, gemma2.sliding_window, gemma2.local_layers) == (4, 4096, 21)
    gemma3 = hf("gemma3__gemma-3-27b-it.json")
    assert (gemma3.vocab, gemma3.qk_norm, gemma3.local_layers, gemma3.global_layers) == (
        262208, "head", 52, 10)
    oss = hf("gpt_oss__gpt-oss-20b.json")
    assert oss.attention_sinks and oss.mlp_bias and oss.router_bias
    assert (oss.sliding_window, oss.local_layers) == (128, 12)
    assert hf("olmo2__OLMo-2-1124-7B.json").qk_norm == "full"
    falcon = hf("falcon__falcon-7b.json")
    assert (falcon.kv_heads, falcon.norms_per_layer, falcon.parallel_attention) == (1, 1, True)
    ds = hf("deepseek_v3__DeepSeek-V3.json")
    assert (ds.kv_lora_rank, ds.head_dim, ds.value_head_dim, ds.dense_layers) == (
        512, 192, 128, 3)
    assert hf("bloom__bloom-560m.json").embedding_norm
    # a window as long as the context is no window (Phi-3.5: 262,144 > 131,072)
    assert hf("phi3__Phi-3.5-mini-instruct.json").sliding_window == 0


@pytest.mark.parametrize(("raw", "match"), [
    ({"model_type": "mamba"}, r"unknown model_type 'mamba'; supported model types: .*llama"),
    ({"hidden_size": 8}, r"no 'model_type'; supported model types: .*gpt_oss"),
    ({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 10,
      "intermediate_size": 128}, r"missing 'num_attention_heads'"),
    ({"model_type": "gemma3"}, r"missing 'text_config'"),
    ({"model_type": "mixtral", "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 128,
      "num_local_experts": 4, "num_experts_per_tok": 5},
     r"experts_per_token must be between 1 and experts \(4\), got 5"),
    ({"model_type": "qwen3_moe", "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 128,
      "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
      "decoder_sparse_step": 2}, r"'decoder_sparse_step' must be 1"),
    ({"model_type": "gpt_oss", "hidden_size": 64, "num_hidden_layers": 3,
      "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 128,
      "num_local_experts": 4, "num_experts_per_tok": 2, "sliding_window": 8,
      "layer_types": ["sliding_attention", "full_attention", "full_attention"]},
     r"'layer_types' must repeat one pattern"),
])
def test_hf_config_refuses_what_it_cannot_represent(raw: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        transformer.from_hf_config(raw)


def test_hf_config_needs_a_mapping_or_a_path() -> None:
    with pytest.raises(TypeError, match="parsed config.json"):
        transformer.from_hf_config(42)  # type: ignore[arg-type]


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
