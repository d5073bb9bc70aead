"""gpulesson.transformer.hf: real config.json files read into exact parameter counts.

Every file of ``tests/data/hf_configs`` is a model's real ``config.json``; its entry in
``index.json`` names the repository, how the file was obtained and the model's published
count with its source (a safetensors index ``total_size`` / bytes per parameter, the Hub's
safetensors metadata, a model card or report). Exact counts are compared exactly; figures
printed rounded are compared within the rounding of their digits. Hostile files (wrong
types, huge values, deep nesting, endless devices) are refused with the key and the field
named (issue 35, item 8).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from gpulesson import inference, transformer
from gpulesson.transformer import TransformerConfig, param_count, preset

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
    text_models = {transformer.hf._MULTIMODAL.get(f) for f in families} - {None}
    assert families | text_models == set(transformer.SUPPORTED_MODEL_TYPES)


def test_published_exact_counts_cover_40_files_of_25_model_types() -> None:
    """Issue 34's bar: from_hf_config gives the published exact count for at least 40
    real config.json files of at least 25 model types (each checked below)."""
    assert len(EXACT_FILES) >= 40
    assert len({f.split("__")[0] for f in EXACT_FILES}) >= 25


@pytest.mark.parametrize("name", EXACT_FILES)
def test_source_hf_config_exact_checkpoint_count(name: str) -> None:
    """Sources: each file's entry in tests/data/hf_configs/index.json (the safetensors
    index total_size / bytes per parameter, the Hub's safetensors metadata, GGUF
    parameter counts or KerasHub's preset metadata). Exact: no tolerance."""
    assert transformer.param_count(hf(name)) == HF_INDEX[name]["params"], (
        HF_INDEX[name]["params_source"])


CHECKPOINT_FILES = sorted(f for f, e in HF_INDEX.items() if e.get("checkpoint"))


@pytest.mark.parametrize("name", CHECKPOINT_FILES)
def test_source_hf_config_exact_checkpoint_with_mtp_layers(name: str) -> None:
    """GLM-4.5-Air and GLM-4.5/4.6 publish only their checkpoints' totals, which hold a
    multi-token-prediction layer with its own embedding and head as DeepSeek-V3's does:
    checkpoint_params reproduces them exactly (each entry's checkpoint_source)."""
    assert transformer.checkpoint_params(hf(name)) == HF_INDEX[name]["checkpoint"], (
        HF_INDEX[name]["checkpoint_source"])


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
    "llama-3.1-8b": "llama__Llama-3.1-8B.json",
    "llama-3.1-70b": "llama__Llama-3.1-70B.json",
    "mixtral-8x7b": "mixtral__Mixtral-8x7B-v0.1.json",
    "deepseek-v3": "deepseek_v3__DeepSeek-V3.json",
    "qwen3-8b": "qwen3__Qwen3-8B.json",
    "qwen3-30b-a3b": "qwen3_moe__Qwen3-30B-A3B.json",
    "qwen3-235b-a22b": "qwen3_moe__Qwen3-235B-A22B.json",
    "gemma-2-9b": "gemma2__gemma-2-9b.json",
    "gpt-oss-20b": "gpt_oss__gpt-oss-20b.json",
    "gpt-oss-120b": "gpt_oss__gpt-oss-120b.json",
    "qwen2.5-7b": "qwen2__Qwen2.5-7B.json",
    "llama-4-maverick": "llama4__Llama-4-Maverick-17B-128E.json",
    "kimi-k2": "kimi_k2__Kimi-K2-Instruct.json",
    "minimax-m2.7": "minimax_m2__MiniMax-M2.7.json",
    "deepseek-v3.2": "deepseek_v32__DeepSeek-V3.2.json",
    "glm-5.1": "glm_moe_dsa__GLM-5.1.json",
}


@pytest.mark.parametrize("name", sorted(PRESET_FILES))
def test_preset_is_its_config_file(name: str) -> None:
    """Each preset copies its model's config.json: from_hf_config gives the same model,
    and the preset's source names that file's repository."""
    from_file = dataclasses.replace(hf(PRESET_FILES[name]), name=name,
                                    source=preset(name).source)
    assert from_file == preset(name)
    repository = HF_INDEX[PRESET_FILES[name]]["repository"]
    assert repository in preset(name).source, (repository, preset(name).source)


def test_presets_of_2025_26_are_their_published_totals() -> None:
    """Kimi K2 and MiniMax-M2.7: the exact totals of their checkpoints' tensor tables
    (index.json); Llama 4 Maverick publishes only "400B total" (Meta 2025, model card),
    which its text model's 400.7B rounds to (the checkpoint adds a vision encoder)."""
    for name in ("kimi-k2", "minimax-m2.7"):
        assert param_count(preset(name)) == HF_INDEX[PRESET_FILES[name]]["params"]
    assert round(param_count(preset("llama-4-maverick")) / 1e11) == 4


def test_sparse_attention_presets_are_their_checkpoints() -> None:
    """DeepSeek-V3.2 and GLM-5.1 publish only their checkpoints' totals, their
    multi-token-prediction layers included (index.json: 685,355,329,792 and
    753,864,139,008); without that layer DeepSeek-V3.2 is DeepSeek-V3's 671,026,419,200
    plus 61 indexers of 13,959,424 (671.9B; the report keeps "671B") and GLM-5.1
    743,911,218,432 (GLM-5's report: 744B). Both attend to 2,048 picked keys."""
    for name in ("deepseek-v3.2", "glm-5.1"):
        cfg = preset(name)
        assert transformer.checkpoint_params(cfg) == HF_INDEX[PRESET_FILES[name]]["checkpoint"]
        assert cfg.indexer_topk == 2048
    assert param_count(preset("deepseek-v3.2")) == \
        param_count(preset("deepseek-v3")) + 61 * 13_959_424 == 671_877_944_064
    assert round(param_count(preset("glm-5.1")) / 1e9) == 744


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


#: The presets tied to no file of ``PRESET_FILES`` that are not in ``EXACT_COUNTS`` of
#: test_transformer.py either, each with what holds it instead.
PRESETS_WITHOUT_FILE = {
    "gpt3-175b": "no config.json was published; Brown et al. 2020, Table 2.1 (its source)",
    "phi-3-mini": "counted as Phi-3.5-mini's file (test_presets_that_differ_from_their_file"
                  "_only_where_stated)",
}


def test_every_preset_is_its_config_file_or_its_published_count() -> None:
    """The recipe's line of ``PRESET_FILES`` cannot be forgotten: a preset is tied to its
    config file here, or to its exact count in test_transformer.py's ``EXACT_COUNTS``, or
    named in ``PRESETS_WITHOUT_FILE`` with the reason."""
    from .test_transformer import EXACT_COUNTS

    tied = set(PRESET_FILES) | {row[0] for row in EXACT_COUNTS} | set(PRESETS_WITHOUT_FILE)
    untied = sorted(set(transformer.PRESETS) - tied)
    assert not untied, (f"presets tied to no config file: {untied}; add the file to "
                        "tests/data/hf_configs/ and its line to PRESET_FILES")
    assert set(PRESETS_WITHOUT_FILE) <= set(transformer.PRESETS)


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
    ("llama-4-maverick", 16.5e9, 17.5e9, True, "Meta 2025, Llama 4 card: 17B active"),
    ("kimi-k2", 31.5e9, 32.5e9, False, "Kimi-K2-Instruct card: 32B activated"),
    ("minimax-m2.7", 9.5e9, 10.5e9, False, "MiniMax-M2 card: 10B active"),
    ("deepseek-v3.2", 36.5e9, 37.5e9, False, "DeepSeek-AI 2025: 37B activated"),
    ("glm-5.1", 39.5e9, 41.0e9, False, "GLM-5 report: 40B activated (40.83B; 39.88B "
     "without the output head too)"),
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
    assert oss.glu_limit == 7.0  # swiglu_limit: the gated activation's clamp
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


def test_hf_config_architectures_of_the_new_families() -> None:
    """What the modelling files of transformers do that the config.json does not say:
    Phi-2 one LayerNorm per parallel block and a biased output layer; OPT two extra
    position rows; OLMo 1 norms without parameters; Qwen 1.0 MLP halves; Llama 4 Maverick
    experts in every second layer (24 of 48) with one shared expert, its dense layers of
    intermediate_size_mlp; Command R one bias-free LayerNorm per parallel block."""
    phi = hf("phi__phi-2.json")
    assert (phi.norms_per_layer, phi.parallel_attention, phi.lm_head_bias) == (1, True, True)
    opt = hf("opt__opt-125m.json")
    assert (opt.max_positions, opt.embedding_dim, opt.final_norm) == (2050, 768, True)
    assert hf("olmo__OLMo-1B-hf.json").norm == "nonparametric"
    assert hf("qwen__Qwen-72B.json").ffn == 24576  # intermediate_size 49152, two halves
    maverick = hf("llama4__Llama-4-Maverick-17B-128E.json")
    assert (maverick.moe_layers, maverick.moe_layer_step, maverick.ffn,
            maverick.expert_ffn, maverick.shared_experts) == (24, 2, 16384, 8192, 1)
    assert [maverick.is_moe_layer(i) for i in range(4)] == [False, True, False, True]
    parts = transformer.moe_breakdown(maverick)
    assert parts["dense"] == 24 * 3 * 5120 * 16384
    assert parts["routed_experts"] == 24 * 128 * 3 * 5120 * 8192
    cohere = hf("cohere__aya-23-8B.json")
    assert (cohere.norm, cohere.norms_per_layer, cohere.parallel_attention) == (
        "layernorm_no_bias", 1, True)


# Biderman et al. 2023 (Pythia), Table 1, and the EleutherAI/pythia README's model table:
# (total parameters, non-embedding parameters, layers, d_model, heads); the vocabulary of
# each model's config.json is padded to 50,304 (6.9B: 50,432; 12B: 50,688).
PYTHIA = [
    (70_426_624, 18_915_328, 6, 512, 8, 50304),
    (162_322_944, 85_056_000, 12, 768, 12, 50304),
    (405_334_016, 302_311_424, 24, 1024, 16, 50304),
    (1_011_781_632, 805_736_448, 16, 2048, 8, 50304),
    (1_414_647_808, 1_208_602_624, 24, 2048, 16, 50304),
    (2_775_208_960, 2_517_652_480, 32, 2560, 32, 50304),
    (6_857_302_016, 6_444_163_072, 32, 4096, 32, 50432),
    (11_846_072_320, 11_327_027_200, 36, 5120, 40, 50688),
]


@pytest.mark.parametrize(("total", "non_embedding", "layers", "hidden", "heads", "vocab"),
                         PYTHIA, ids=[f"{row[0] / 1e9:.2g}B" for row in PYTHIA])
def test_source_pythia_suite(total: int, non_embedding: int, layers: int, hidden: int,
                             heads: int, vocab: int) -> None:
    """The whole Pythia suite (gpt_neox), both columns of its published table, exactly:
    parallel attention and MLP, two LayerNorms per block, biases on every projection,
    an untied output layer, rotary positions on a quarter of each head."""
    cfg = transformer.from_hf_config({
        "model_type": "gpt_neox", "hidden_size": hidden, "num_hidden_layers": layers,
        "num_attention_heads": heads, "intermediate_size": 4 * hidden, "vocab_size": vocab,
        "max_position_embeddings": 2048, "rotary_pct": 0.25, "use_parallel_residual": True,
        "tie_word_embeddings": False})
    assert param_count(cfg) == total
    assert transformer.non_embedding_params(cfg) == non_embedding


def test_source_opt_350m_narrow_embedding_and_post_norm() -> None:
    """facebook/opt-350m embeds in 512 dimensions, projects in and out of its 1,024-wide
    layers and normalises after each sub-layer (no final norm): 331,196,416 parameters,
    the 662,392,832 bytes of FP16 weights a public inference-profiling test records for
    it (its opt-125m row, 250,478,592 bytes, is the 125,239,296 of AMD Quark's tutorial)."""
    raw = {"model_type": "opt", "hidden_size": 1024, "num_hidden_layers": 24,
           "num_attention_heads": 16, "ffn_dim": 4096, "max_position_embeddings": 2048,
           "vocab_size": 50272, "word_embed_proj_dim": 512, "do_layer_norm_before": False}
    cfg = transformer.from_hf_config(raw)
    assert not cfg.final_norm and cfg.embedding_dim == 512
    assert transformer.embedding_params(cfg) == 50272 * 512 + 2050 * 1024 + 2 * 512 * 1024
    assert 2 * param_count(cfg) == 662_392_832


@pytest.mark.parametrize(("raw", "match"), [
    ({"model_type": "mamba"}, r"unknown model_type 'mamba'; supported model types: .*llama"),
    ({"hidden_size": 8}, r"key 'model_type' must name the architecture, got None \(null\); "
     r"supported model types: .*gpt_oss"),
    ({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 10,
      "intermediate_size": 128}, r"missing 'num_attention_heads'"),
    ({"model_type": "gemma3"}, r"missing 'text_config'"),
    ({"model_type": "mixtral", "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 128,
      "num_local_experts": 4, "num_experts_per_tok": 5},
     r"experts_per_token must be between 1 and experts \(4\), got 5"),
    ({"model_type": "qwen3_moe", "hidden_size": 64, "num_hidden_layers": 4,
      "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 128,
      "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
      "mlp_only_layers": [1, 3]}, r"'mlp_only_layers' \(TransformerConfig field "
     r"'dense_layers'\) must list leading layers"),
    ({"model_type": "gpt_oss", "hidden_size": 64, "num_hidden_layers": 3,
      "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 128,
      "num_local_experts": 4, "num_experts_per_tok": 2, "sliding_window": 8,
      "layer_types": ["sliding_attention", "full_attention", "full_attention"]},
     r"'layer_types' \(TransformerConfig field 'sliding_window_pattern'\) must repeat one "
     r"pattern"),
])
def test_hf_config_refuses_what_it_cannot_represent(raw: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        transformer.from_hf_config(raw)


def test_source_deepseek_v32_counts_the_sparse_attention_indexer() -> None:
    """DeepSeek-V3.2 is DeepSeek-V3 plus a lightning indexer in each of its 62 layers
    (61 and the MTP layer): wq_b 1,536 x (64 x 128), wk 7,168 x 128, a LayerNorm of 128
    with bias, weights_proj 7,168 x 64 (the checkpoint's tensors, listed in a public
    report). Without them the count would be V3's, 13,959,424 per layer short."""
    v32, v3 = hf("deepseek_v32__DeepSeek-V3.2.json"), hf("deepseek_v3__DeepSeek-V3.json")
    indexer = 1536 * 64 * 128 + 7168 * 128 + 2 * 128 + 7168 * 64
    assert indexer == 13_959_424
    assert param_count(v32) - param_count(v3) == 61 * indexer
    assert transformer.checkpoint_params(v32) - transformer.checkpoint_params(v3) == \
        62 * indexer
    assert dataclasses.replace(v32, indexer_heads=0, indexer_head_dim=0,
                               indexer_topk=0) == \
        dataclasses.replace(v3, name=v32.name, source=v32.source)
    assert inference.multi_head_equivalent(v32).kv_dim == 128 * 128
    with pytest.raises(ValueError, match="set together"):
        dataclasses.replace(v32, indexer_head_dim=0)
    with pytest.raises(ValueError, match="needs latent attention with a query latent"):
        TransformerConfig(hidden=64, layers=2, heads=4, vocab=10, indexer_heads=4,
                          indexer_head_dim=16)


def test_source_dsa_models_read_their_top_k() -> None:
    """DeepSeek-V3.2 and GLM-5.1 attend to the index_topk = 2,048 tokens their indexer
    picks (both config.json files); a file without the key gets DeepseekV32Config's
    default, 2,048. A top-k needs an indexer, and is a whole number."""
    for name in ("deepseek_v32__DeepSeek-V3.2.json", "glm_moe_dsa__GLM-5.1.json"):
        raw = json.loads((HF_DIR / name).read_text())
        assert hf(name).indexer_topk == raw["index_topk"] == 2048
        assert transformer.from_hf_config({**raw, "index_topk": 512}).indexer_topk == 512
        del raw["index_topk"]
        assert transformer.from_hf_config(raw).indexer_topk == 2048
        with pytest.raises(ValueError, match="index_topk"):
            transformer.from_hf_config({**raw, "index_topk": 0})
    assert hf("deepseek_v3__DeepSeek-V3.json").indexer_topk == 0
    v32 = hf("deepseek_v32__DeepSeek-V3.2.json")
    assert dataclasses.replace(v32, indexer_topk=0).indexer_topk == 0  # dense, allowed
    with pytest.raises(ValueError, match="indexer_topk needs the indexer"):
        dataclasses.replace(v32, indexer_heads=0, indexer_head_dim=0)
    with pytest.raises(ValueError, match="indexer_topk"):
        dataclasses.replace(v32, indexer_topk=-1)


def test_source_qwen3_vl_text_model_and_its_top_level_tie() -> None:
    """Qwen3-VL-8B's language model is Qwen3-8B's shapes (8,190,735,360, the tensor table
    less its 576M-parameter vision tower). Its text_config has no tie_word_embeddings:
    the file states it once, at the top level, and that value counts (Qwen3-VL-2B and
    4B tie there)."""
    cfg = hf("qwen3_vl__Qwen3-VL-8B-Instruct.json")
    assert param_count(cfg) == param_count(hf("qwen3__Qwen3-8B.json"))
    raw = json.loads((HF_DIR / "qwen3_vl__Qwen3-VL-8B-Instruct.json").read_text())
    tied = transformer.from_hf_config({**raw, "tie_word_embeddings": True})
    assert tied.tied_embeddings and not cfg.tied_embeddings
    assert param_count(cfg) - param_count(tied) == 151936 * 4096
    inner = {**raw, "text_config": {**raw["text_config"], "tie_word_embeddings": True}}
    assert transformer.from_hf_config(inner).tied_embeddings
    moe = hf("qwen3_vl_moe__Qwen3-VL-30B-A3B-Instruct.json")
    assert moe == dataclasses.replace(hf("qwen3_moe__Qwen3-30B-A3B.json"), name=moe.name,
                                      source=moe.source, context=262144)


def test_source_glm5_mtp_layer_shares_the_embedding_and_head() -> None:
    """GLM-5.1 (glm_moe_dsa): DeepSeek-V3.2's layer kinds at other sizes (64 heads of
    192 + 64, values of 256, q_lora_rank 2,048, indexers of 32 heads), and an MTP layer
    whose tensors (eh_proj, enorm, hnorm, shared_head.norm) share the model's embedding
    and head: counted with their own copies, the checkpoint would be 2 x 154,880 x
    6,144 larger than its 753,864,139,008. Layers sharing an indexer are refused."""
    cfg = hf("glm_moe_dsa__GLM-5.1.json")
    assert (cfg.head_dim, cfg.value_head_dim, cfg.indexer_heads) == (256, 256, 32)
    own = dataclasses.replace(cfg, mtp_own_embeddings=True)
    assert transformer.checkpoint_params(own) - transformer.checkpoint_params(cfg) == \
        2 * 154880 * 6144
    raw = json.loads((HF_DIR / "glm_moe_dsa__GLM-5.1.json").read_text())
    assert transformer.from_hf_config({**raw, "indexer_types": ["full"] * 78}) == cfg
    with pytest.raises(ValueError, match=r"'indexer_types' .* must be 'full'"):
        transformer.from_hf_config({**raw, "indexer_types": ["full", "shared"] * 39})


def test_source_kimi_k2_is_deepseek_v3_with_384_experts() -> None:
    """Kimi K2 (model_type kimi_k2) runs DeepSeek-V3's code: latent attention with 64
    heads, one dense layer, 60 MoE layers of 384 routed experts and one shared, one
    router correction bias per expert, no MTP layer, no routing groups (n_group 1).
    Its checkpoint, less FP8 block scales and rotary buffers: 1,026,408,232,448."""
    cfg = hf("kimi_k2__Kimi-K2-Instruct.json")
    assert (cfg.heads, cfg.experts, cfg.moe_layers, cfg.mtp_layers) == (64, 384, 60, 0)
    assert (cfg.routing_groups, cfg.router_bias) == (1, True)
    raw = json.loads((HF_DIR / "kimi_k2__Kimi-K2-Instruct.json").read_text())
    as_v3 = transformer.from_hf_config({**raw, "model_type": "deepseek_v3"})
    assert param_count(as_v3) == param_count(cfg)
    routed = 60 * 384 * 3 * 7168 * 2048
    assert transformer.moe_breakdown(cfg)["routed_experts"] == routed


def test_source_minimax_m2_full_qk_norms_and_experts_in_every_layer() -> None:
    """MiniMax-M2.7 (minimax_m2): q_norm over 48 x 128 and k_norm over 8 x 128 values
    per layer, 256 experts of width 1,536 in all 62 layers, no dense MLP, a correction
    bias per expert. A lightning-attention layer (attn_type_list 0, MiniMax-M1) or a
    shared expert is refused rather than miscounted."""
    cfg = hf("minimax_m2__MiniMax-M2.7.json")
    assert (cfg.qk_norm, cfg.moe_layers, cfg.expert_ffn, cfg.router_bias) == (
        "full", 62, 1536, True)
    raw = json.loads((HF_DIR / "minimax_m2__MiniMax-M2.7.json").read_text())
    per_head = transformer.from_hf_config({**raw, "qk_norm_type": "per_head"})
    assert param_count(cfg) - param_count(per_head) == 62 * (6144 + 1024 - 2 * 128)
    with pytest.raises(ValueError, match=r"'attn_type_list' \(TransformerConfig field "
                       r"'linear_attention'\) must be 1"):
        transformer.from_hf_config({**raw, "attn_type_list": [0] + [1] * 61})
    with pytest.raises(ValueError, match=r"'shared_intermediate_size'.* must be 0"):
        transformer.from_hf_config({**raw, "shared_intermediate_size": 1536})


def test_source_smollm3_is_tied_and_refuses_a_sliding_window() -> None:
    """SmolLM3-3B's file names no tie_word_embeddings: SmolLM3Config's default (True)
    applies, and its safetensors index has no lm_head.weight. Its NoPE layers (every
    fourth: no_rope_layers) have no parameters; a sliding window on them is refused."""
    cfg = hf("smollm3__SmolLM3-3B.json")
    assert cfg.tied_embeddings and cfg.global_layers == 36
    raw = json.loads((HF_DIR / "smollm3__SmolLM3-3B.json").read_text())
    untied = transformer.from_hf_config({**raw, "tie_word_embeddings": False})
    assert param_count(untied) - param_count(cfg) == 128256 * 2048
    with pytest.raises(ValueError, match=r"'use_sliding_window' \(TransformerConfig "
                       r"field 'sliding_window'\) must be false"):
        transformer.from_hf_config({**raw, "use_sliding_window": True,
                                    "sliding_window": 4096})


def test_hf_config_needs_a_mapping_or_a_path() -> None:
    with pytest.raises(TypeError, match="parsed config.json"):
        transformer.from_hf_config(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="name must be a string, got int"):
        transformer.from_hf_config(HF_DIR / "gpt2__gpt2.json", name=3)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------
# Hostile files (issue 35, item 8): every refusal names the key and the field

SMALL_LLAMA = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
               "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
               "intermediate_size": 128}


@pytest.mark.parametrize("value", [32.9, 32.0, True, "32", 1e308, -3, 0, 2**31, 10**400,
                                   [32], {"n": 32}, float("nan"), float("inf")],
                         ids=repr)
def test_a_size_must_be_a_json_integer_in_range(value: object) -> None:
    """``num_hidden_layers: 32.9`` was read as 32, ``true`` as 1, ``"32"`` parsed and
    ``1e308`` became a 309-digit size; now each is refused, naming the key and the field
    and showing the value short."""
    raw = {**SMALL_LLAMA, "num_hidden_layers": value}
    with pytest.raises(ValueError, match=r"config.json key 'num_hidden_layers' "
                       r"\(TransformerConfig field 'layers'\) must be an integer from 1 to "
                       r"2,147,483,647, got ") as caught:
        transformer.from_hf_config(raw)
    assert len(str(caught.value)) < 300


@pytest.mark.parametrize(("key", "value", "field", "allowed"), [
    ("tie_word_embeddings", "yes", "tied_embeddings", "true or false"),
    ("attention_bias", 1, "qkv_bias", "true or false"),
    ("attention_dropout", 2.5, "dropout", "a number from 0 to 1"),
    ("attention_dropout", "0.1", "dropout", "a number from 0 to 1"),
    ("head_dim", 64.5, "head_dim", "an integer from 1"),
    ("max_position_embeddings", -1, "context", "an integer from 0"),
])
def test_every_kind_of_value_is_checked(key: str, value: object, field: str,
                                        allowed: str) -> None:
    raw = {**SMALL_LLAMA, key: value}
    with pytest.raises(ValueError, match=rf"key '{key}' \(TransformerConfig field "
                       rf"'{field}'\) must be {allowed}"):
        transformer.from_hf_config(raw)


@pytest.mark.parametrize("value", [10**400, float("inf"), -1, "7"], ids=repr)
def test_a_clamp_limit_must_be_a_finite_float(value: object) -> None:
    """gpt-oss's ``swiglu_limit``: an integer beyond the float range passed the check and
    failed converting (found by fuzzing), as a message naming no key; now it is refused
    like an infinity, naming the key and the field."""
    raw = json.loads((HF_DIR / "gpt_oss__gpt-oss-120b.json").read_text())
    raw["swiglu_limit"] = value
    with pytest.raises(ValueError, match=r"key 'swiglu_limit' \(TransformerConfig field "
                       r"'glu_limit'\) must be a finite non-negative number"):
        transformer.from_hf_config(raw)


@pytest.mark.parametrize(("change", "key", "field"), [
    ({"num_key_value_heads": 3}, "num_key_value_heads", "kv_heads"),
    ({"hidden_size": 66, "num_attention_heads": 4}, "hidden_size", "hidden"),
    ({"model_type": "mixtral", "num_local_experts": 4, "num_experts_per_tok": 5},
     "num_experts_per_tok", "experts_per_token"),
])
def test_a_refusal_of_the_model_names_the_key_that_set_it(change: dict, key: str,
                                                          field: str) -> None:
    """The configuration's own checks (a kv_heads that does not divide heads ...) come
    back led by the key of the file that set the field."""
    with pytest.raises(ValueError, match=rf"^config.json key '{key}' \(TransformerConfig "
                       rf"field '{field}'\): "):
        transformer.from_hf_config({**SMALL_LLAMA, **change})


def test_deep_nesting_is_refused_not_a_recursion_error(tmp_path: Path) -> None:
    """100,000 nested arrays, in a file or in a mapping: a clear error, no RecursionError."""
    deep_text = '{"model_type": "llama", "hidden_size": ' + "[" * 100_000 + "]" * 100_000 + "}"
    path = tmp_path / "config.json"
    path.write_text(deep_text)
    with pytest.raises(ValueError, match=r"nests its JSON too deeply"):
        transformer.from_hf_config(path)
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(ValueError, match=r"key 'hidden_size' \(TransformerConfig field "
                       r"'hidden'\) must be an integer"):
        transformer.from_hf_config({**SMALL_LLAMA, "hidden_size": deep})
    with pytest.raises(ValueError, match=r"key 'model_type' must name the architecture"):
        transformer.from_hf_config({"model_type": deep})


def test_reading_a_file_has_a_size_cap(tmp_path: Path) -> None:
    """``/dev/zero`` (an endless device) and a 5 MiB file are refused after 4 MiB."""
    if Path("/dev/zero").exists():
        with pytest.raises(ValueError, match=r"larger than 4,194,304 bytes"):
            transformer.from_hf_config("/dev/zero")
    big = tmp_path / "config.json"
    big.write_text('{"model_type": "llama", "pad": "' + "x" * 5 * 2**20 + '"}')
    with pytest.raises(ValueError, match=r"larger than 4,194,304 bytes"):
        transformer.from_hf_config(big)


@pytest.mark.parametrize("text", ["{", "[1, 2]", '"llama"', "\xff\xfe", "1" * 5000])
def test_a_file_that_is_no_json_object_is_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(ValueError, match=r"config file .* (is not valid UTF-8 JSON|must hold "
                       r"a JSON object)"):
        transformer.from_hf_config(path)


def test_an_unknown_model_type_names_the_keys_a_reader_needs() -> None:
    with pytest.raises(ValueError, match=r"unknown model_type 'rwkv'.*TransformerConfig, "
                       r"from its keys hidden_size, num_hidden_layers, num_attention_heads"):
        transformer.from_hf_config({"model_type": "rwkv"})


def test_source_group_limited_routing_is_read_where_the_router_uses_it() -> None:
    """n_group and topk_group become routing_groups and routing_group_topk (Megatron-Bridge
    maps them to moe_router_num_groups and moe_router_group_topk). DeepSeek-V3's file: 8
    and 4, its node-limited routing (report section 2.1.2), also the defaults of
    transformers' DeepseekV3Config when the keys are absent. GLM-4.5's router is
    DeepSeek-V3's with 1 group of 1 (no limit). DeepSeek-V2's router reads them only with
    topk_method "group_limited_greedy" (V2: 8 and 3, device-limited routing); V2-Lite's
    "greedy" ignores its n_group 1. Qwen3-MoE, gpt-oss and Mixtral have none."""
    def groups(cfg: TransformerConfig) -> tuple[int, int]:
        return cfg.routing_groups, cfg.routing_group_topk
    assert groups(hf("deepseek_v3__DeepSeek-V3.json")) == (8, 4)
    raw = json.loads((HF_DIR / "deepseek_v3__DeepSeek-V3.json").read_text())
    bare = {k: v for k, v in raw.items() if k not in ("n_group", "topk_group")}
    assert groups(transformer.from_hf_config(bare)) == (8, 4)
    assert groups(hf("glm4_moe__GLM-4.5-Air.json")) == (1, 1)
    assert groups(hf("deepseek_v2__DeepSeek-V2-Lite.json")) == (0, 0)
    lite = json.loads((HF_DIR / "deepseek_v2__DeepSeek-V2-Lite.json").read_text())
    v2_like = {**lite, "topk_method": "group_limited_greedy", "n_group": 8, "topk_group": 3}
    assert groups(transformer.from_hf_config(v2_like)) == (8, 3)
    for name in ("qwen3_moe__Qwen3-235B-A22B.json", "gpt_oss__gpt-oss-120b.json",
                 "mixtral__Mixtral-8x7B-v0.1.json"):
        assert groups(hf(name)) == (0, 0)
    with pytest.raises(ValueError, match=r"^config.json key 'n_group' \(TransformerConfig "
                       r"field 'routing_groups'\): "):
        transformer.from_hf_config({**raw, "n_group": 7})


# ---------------------------------------------------------------------------------------
# A hybrid model: Qwen3-Next's Gated DeltaNet layers beside full attention

QWEN3_NEXT = "qwen3_next__Qwen3-Next-80B-A3B-Instruct.json"


def test_source_qwen3_next_total_with_and_without_its_mtp_layer() -> None:
    """Qwen3-Next-80B-A3B: the Hub's safetensors total of Qwen/Qwen3-Next-80B-A3B-Instruct
    (and -Thinking) is 81,324,862,720, multi-token-prediction layer included; that of
    Qwen/Qwen3-Coder-Next, the same shapes without the layer, 79,674,391,296 (both as
    recorded in public model tables). 36 of 48 layers are Gated DeltaNet, 12 gated full
    attention; the MTP layer shares the embedding and head."""
    cfg = hf(QWEN3_NEXT)
    assert (cfg.recurrent_layers, cfg.global_layers) == (36, 12)
    assert [cfg.is_recurrent_layer(i) for i in range(4)] == [True, True, True, False]
    assert param_count(cfg) == 79_674_391_296
    assert transformer.checkpoint_params(dataclasses.replace(cfg, mtp_layers=1)) == \
        81_324_862_720
    # one layer of each kind, by hand from transformers' modelling code
    d, k, val = 2048, 16 * 128, 32 * 128
    deltanet = d * (2 * k + 2 * val) + d * 64 + (2 * k + val) * 4 + 2 * 32 + val * d + 128
    attention = d * 2 * 4096 + 2 * d * 512 + 4096 * d + 2 * 256
    stages = transformer.layer_params
    assert stages(cfg, 0) - stages(cfg, 3) == deltanet - attention


def test_qwen3_next_layer_types_must_repeat_one_pattern() -> None:
    raw = json.loads((HF_DIR / QWEN3_NEXT).read_text())
    four = ["linear_attention"] * 3 + ["full_attention"]
    assert transformer.from_hf_config({**raw, "layer_types": four * 12}) == hf(QWEN3_NEXT)
    two = transformer.from_hf_config({**raw, "layer_types": four[2:] * 24})
    assert two.recurrent_layers == 24
    bad = four * 11 + ["full_attention"] * 4
    with pytest.raises(ValueError, match="layer_types.*full_attention_interval"):
        transformer.from_hf_config({**raw, "layer_types": bad})
    with pytest.raises(ValueError, match="linear_num_value_heads"):
        transformer.from_hf_config({**raw, "linear_num_value_heads": 24.5})


def test_linear_attention_fields_are_checked() -> None:
    cfg = hf(QWEN3_NEXT)
    with pytest.raises(ValueError, match="full_attention_interval"):
        dataclasses.replace(cfg, full_attention_interval=1)
    with pytest.raises(ValueError, match="multiple of linear_key_heads"):
        dataclasses.replace(cfg, linear_value_heads=24)
    with pytest.raises(ValueError, match="needs linear_attention"):
        TransformerConfig(hidden=64, layers=2, heads=4, vocab=10, linear_key_heads=2)
    with pytest.raises(ValueError, match="sliding window"):
        dataclasses.replace(cfg, sliding_window=4096)
