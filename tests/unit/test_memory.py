"""gpulesson.memory: bytes per parameter, activations, training memory and LoRA."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpulesson import memory
from gpulesson.transformer import param_count, preset

from .strategies import finite_nonneg, params

GPT3 = preset("gpt3-175b")


# ---------------------------------------------------------------------------------------
# Published figures


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


# ---------------------------------------------------------------------------------------
# Validation


def test_tp_must_divide_heads() -> None:
    with pytest.raises(ValueError, match=r"tp must divide heads \(12\), got 8"):
        memory.activation_bytes_per_layer(seq_len=8, batch=1, hidden=768, heads=12, tp=8)


def test_training_memory_validates() -> None:
    with pytest.raises(ValueError, match="batch must be a positive integer, got 0"):
        memory.training_memory(7e9, batch=0, seq_len=10)
    with pytest.raises(ValueError, match="cfg_or_params"):
        memory.training_memory(-7e9, batch=1, seq_len=10)
    with pytest.raises(ValueError, match="memory_per_gpu"):
        memory.training_memory(7e9, batch=1, seq_len=10, memory_per_gpu=0)


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


def test_lora_training_memory_needs_a_config() -> None:
    with pytest.raises(TypeError, match="cfg must be a TransformerConfig"):
        memory.lora_training_memory("llama-2-7b", rank=8, batch=1, seq_len=128)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------
# Properties


@given(s=st.integers(1, 65536), b=st.integers(1, 64), heads=st.sampled_from([8, 16, 32, 64]),
       head_dim=st.sampled_from([64, 128]), tp=st.sampled_from([1, 2, 4, 8]))
def test_activation_variants_are_ordered(s: int, b: int, heads: int, head_dim: int,
                                         tp: int) -> None:
    h = heads * head_dim
    kw = {"seq_len": s, "batch": b, "hidden": h, "heads": heads, "tp": tp}
    none = memory.activation_bytes_per_layer(**kw)
    sp = memory.activation_bytes_per_layer(**kw, sequence_parallel=True)
    sel = memory.activation_bytes_per_layer(**kw, recompute="selective")
    sp_sel = memory.activation_bytes_per_layer(**kw, sequence_parallel=True,
                                               recompute="selective")
    full = memory.activation_bytes_per_layer(**kw, recompute="full")
    assert all(isinstance(x, int) and x > 0 for x in (none, sp, sel, sp_sel, full))
    assert sp <= none and sel <= none and sp_sel <= sel and sp_sel <= sp
    assert full <= 2 * s * b * h


@given(n=params, batch=st.integers(1, 64), seq=st.integers(1, 8192),
       precision=st.sampled_from(["mixed", "fp32", "mixed_fp32_grads", "pure_bf16"]),
       optimizer=st.sampled_from(["adam", "sgd", "sgd_momentum"]))
def test_training_memory_finite(n: float, batch: int, seq: int, precision: str,
                                optimizer: str) -> None:
    m = memory.training_memory(n, batch=batch, seq_len=seq, precision=precision,
                               optimizer=optimizer, memory_per_gpu=80e9)
    assert all(finite_nonneg(x) for x in (m.weights, m.gradients, m.optimizer, m.total))
    assert m.gpus_needed is not None and m.gpus_needed * 80e9 >= m.total


@given(need=st.integers(0, 10**15), mem=st.integers(1, 10**12))
def test_gpus_needed_is_the_exact_ceiling(need: int, mem: int) -> None:
    k = memory.gpus_needed(need, mem)
    assert k * mem >= need and (k - 1) * mem < need or (k == 0 and need == 0)


# ---------------------------------------------------------------------------------------
# Behaviour


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


# ---------------------------------------------------------------------------------------
# 2026: every parameter held, 20 bytes per parameter, activations of any architecture


def test_source_playbook_bf16_baseline_is_20_bytes_per_parameter() -> None:
    """Tazi et al. 2025 (The Ultra-Scale Playbook), mixed-precision table: the
    "bfloat16 + fp32 mixed precision baseline" keeps 4 + 4 + 2 + 2 + 4 + 4 = 20 bytes
    (FP32 master weights and accumulated gradients, BF16 weights and gradients, FP32
    Adam states), 16 without FP32 gradient accumulation; DeepSeek-V3's FP8 recipe,
    4 + 4 + 1 + 2 + 2 + 2 = 15. The Playbook's ZeRO section: 2Psi + 6Psi + 12Psi."""
    assert memory.bytes_per_param("mixed_fp32_grad_accum") == 20
    assert memory.model_state_bytes("mixed_fp32_grad_accum").gradients == 6
    assert memory.bytes_per_param("mixed") == 16
    assert memory.bytes_per_param("fp8_deepseek_v3") == 15


def test_moe_training_memory_holds_every_expert() -> None:
    """Mixture-of-experts training holds all 46.7B of Mixtral's parameters, 16 bytes
    each; expert parallelism spreads only the routed experts."""
    from gpulesson import transformer

    cfg = preset("mixtral-8x7b")
    m = memory.training_memory(cfg, batch=1, seq_len=1)
    assert m.weights == 2 * transformer.param_count(cfg)
    ep = memory.training_memory(cfg, batch=1, seq_len=1, ep=8)
    routed = transformer.moe_breakdown(cfg)["routed_experts"]
    assert ep.weights == 2 * (transformer.param_count(cfg) - routed + routed / 8)
    with pytest.raises(ValueError, match=r"ep must divide experts \(8\), got 3"):
        memory.training_memory(cfg, batch=1, seq_len=1, ep=3)


GPT_BLOCK = {"seq_len": 2048, "batch": 1, "hidden": 12288, "heads": 96}


@pytest.mark.parametrize(("name", "attention"), [
    ("gpt2", "eager"), ("gpt3-175b", "eager"), ("llama-2-7b", "flash"),
    ("mistral-7b", "flash"), ("deepseek-v3", "flash"), ("gemma-2-9b", "flash")])
def test_default_attention_keeps_the_published_gpt_case(name: str, attention: str) -> None:
    """GPT-2 and GPT-3 (learned positions, a plain MLP) keep Korthikanti et al. 2022's
    formula, eager attention with dropout, exactly as Table 2 prints it; modern models
    (rotary, gated MLP) are derived with FlashAttention, PyTorch's default since 2.0."""
    from gpulesson import activations

    cfg = preset(name)
    assert activations.default_attention(cfg) == attention
    for tp, sp, recompute in ((1, False, "none"), (8, True, "full")):
        if cfg.heads % tp:
            continue
        got = memory.training_memory(cfg, batch=1, seq_len=1024, tp=tp,
                                     sequence_parallel=sp, recompute=recompute).activations
        if attention == "eager":
            assert got == cfg.layers * memory.activation_bytes_per_layer(
                seq_len=1024, batch=1, hidden=cfg.hidden, heads=cfg.heads, tp=tp,
                sequence_parallel=sp, recompute=recompute)
        else:
            assert got == activations.activation_bytes(
                cfg, seq_len=1024, attention="flash", tp=tp, sequence_parallel=sp,
                recompute=recompute)


@pytest.mark.parametrize(("tp", "sp", "recompute"), [
    (1, False, "none"), (8, False, "none"), (8, True, "none"), (8, False, "selective"),
    (8, True, "selective"), (1, False, "full"), (8, False, "full")])
def test_source_derivation_is_korthikanti_for_a_gpt_block(tp: int, sp: bool,
                                                         recompute: str) -> None:
    """Korthikanti et al. 2022, Table 2 is the special case of the per-tensor derivation:
    a GPT block (multi-head attention, 4h GeLU MLP, dropout, eager attention), here GPT-3."""
    from gpulesson import activations

    derived = activations.layer_activation_bytes(
        GPT3, seq_len=2048, attention="eager", dropout=True, tp=tp, sequence_parallel=sp,
        recompute=recompute)
    assert derived == memory.activation_bytes_per_layer(
        **GPT_BLOCK, tp=tp, sequence_parallel=sp, recompute=recompute)


def test_flash_swiglu_gqa_llama_keeps_a_sixth_of_the_gpt_formula() -> None:
    """Llama-2-7B, one 4,096-token sequence: the GPT formula says 104.2 GB for 32 layers
    (Korthikanti et al. 2022 applied to it); FlashAttention (no score matrix, Dao et al.
    2022), SwiGLU's three 11,008-wide tensors and no dropout keep 17.3 GB, the default
    for a modern model."""
    from gpulesson import activations, units

    cfg = preset("llama-2-7b")
    gpt_formula = 32 * memory.activation_bytes_per_layer(seq_len=4096, batch=1, hidden=4096,
                                                         heads=32)
    derived = memory.training_memory(cfg, batch=1, seq_len=4096)
    assert derived == memory.training_memory(cfg, batch=1, seq_len=4096, attention="flash")
    assert units.format_bytes(gpt_formula) == "104.2 GB"
    assert units.format_bytes(derived.activations) == "17.3 GB"
    assert derived.activations == activations.activation_bytes(cfg, seq_len=4096)
    assert round(gpt_formula / derived.activations) == 6
    # eager attention without dropout keeps 2as^2b of scores per layer, not 5as^2b
    eager = activations.activation_bytes(cfg, seq_len=4096, attention="eager")
    assert eager - derived.activations == 32 * (2 * 32 * 4096 * 4096 - 4 * 32 * 4096)


LLAMA_BLOCK = {"hidden": 64, "layers": 2, "heads": 8, "kv_heads": 2, "vocab": 100,
               "ffn": 176, "gated_mlp": True, "norm": "rmsnorm", "linear_bias": False,
               "dropout": False, "tied_embeddings": False}


@pytest.mark.parametrize("attention", ["flash", "eager"])
@pytest.mark.parametrize("experts", [0, 8])
def test_derivation_equals_a_measured_forward_pass(attention: str, experts: int) -> None:
    """A real forward pass of a Llama-style block in NumPy (RMSNorm, rotary GQA with 8
    query and 2 KV heads, SwiGLU or 8 experts with 2 per token), keeping what its backward
    needs: every tensor's bytes equal the derivation, with the FlashAttention-style pass
    keeping no score matrix; both attentions give the same output."""
    from gpulesson import activations, forward_pass
    from gpulesson.transformer import TransformerConfig

    moe = {"experts": experts, "experts_per_token": 2, "expert_ffn": 48} if experts else {}
    cfg = TransformerConfig(**LLAMA_BLOCK, **moe)
    measured = forward_pass.llama_block_saved_bytes(cfg, seq_len=64, batch=2,
                                                    attention=attention)
    assert measured == activations.activation_tensors(cfg, seq_len=64, batch=2,
                                                      attention=attention)
    assert ("softmax output" in measured) == (attention == "eager")


def test_flash_style_pass_computes_attention() -> None:
    """The block-wise pass gives the eager result (to float32 rounding)."""
    import numpy as np

    from gpulesson import forward_pass
    from gpulesson.transformer import TransformerConfig

    cfg = TransformerConfig(**LLAMA_BLOCK)
    flash, _ = forward_pass.llama_block_saved(cfg, seq_len=48, attention="flash", block=7)
    eager, _ = forward_pass.llama_block_saved(cfg, seq_len=48, attention="eager")
    assert np.abs(flash - eager).max() < 1e-5


def test_context_parallelism_divides_the_activations() -> None:
    cfg = preset("llama-3-8b")
    one = memory.training_memory(cfg, batch=1, seq_len=32768, attention="flash")
    four = memory.training_memory(cfg, batch=1, seq_len=32768, attention="flash", cp=4)
    assert four.activations == one.activations / 4
    legacy = memory.training_memory(cfg, batch=1, seq_len=32768, cp=4)
    assert legacy.activations == memory.training_memory(cfg, batch=1,
                                                        seq_len=32768).activations // 4
    with pytest.raises(ValueError, match=r"cp must divide seq_len \(1000\), got 3"):
        memory.training_memory(cfg, batch=1, seq_len=1000, cp=3)


def test_activation_tensors_validate() -> None:
    from gpulesson import activations

    with pytest.raises(ValueError, match=r"attention must be one of \['flash', 'eager'\]"):
        activations.activation_tensors(preset("gpt2"), seq_len=8, attention="sdpa")
    with pytest.raises(ValueError, match=r"tp must divide heads \(12\), got 8"):
        activations.activation_tensors(preset("gpt2"), seq_len=8, tp=8)
    with pytest.raises(ValueError, match="attention needs the model's shape"):
        memory.training_memory(7e9, batch=1, seq_len=8, attention="flash")


@pytest.mark.parametrize(("name", "gib"), [("gpt-oss-120b", 60.8), ("gpt-oss-20b", 12.8)])
def test_source_gpt_oss_checkpoints_with_mxfp4_experts(name: str, gib: float) -> None:
    """OpenAI 2025 (gpt-oss model card, Table 1): the checkpoints are 60.8 GiB and 12.8 GiB,
    with the MoE weights in MXFP4 (4.25 bits per parameter) and the rest in BF16: the
    routed experts at memory.precision_bytes("mxfp4") plus everything else at 2 bytes."""
    from gpulesson import transformer

    cfg = preset(name)
    routed = transformer.moe_breakdown(cfg)["routed_experts"]
    stored = (memory.weight_bytes(routed, precision="mxfp4")
              + memory.weight_bytes(param_count(cfg) - routed, precision="bf16"))
    assert memory.precision_bytes("mxfp4") * 8 == 4.25
    assert stored / 2**30 == pytest.approx(gib, rel=0.005)


def test_source_weight_only_quantisations_carry_their_scales() -> None:
    """precision_bytes knows the weight-only formats of gpulesson.precision: AWQ/GPTQ INT4
    in groups of 128 keeps an FP16 scale and a 4-bit zero-point per 128 weights (AutoAWQ /
    AutoGPTQ ``scales`` and ``qzeros``), 4.15625 bits; llama.cpp's Q4_K stores 144 bytes per
    256 weights (ggml-common.h ``block_q4_K``), 4.5 bits. The calculators' table of storage
    precisions does not list them."""
    assert memory.precision_bytes("int4_g128") == (4 + 20 / 128) / 8
    assert memory.precision_bytes("Q4_K") == 144 / 256
    assert memory.precision_bytes("q8_0") == 34 / 32
    assert "int4_g128" not in memory.PRECISION_BYTES
    with pytest.raises(ValueError, match="q9_k"):
        memory.precision_bytes("q9_k")


def test_source_deepseek_v3_recipe_recomputes_norms_and_up_projections() -> None:
    """DeepSeek-V3 report (DeepSeek-AI 2024, arXiv 2412.19437), section 3.2.3: every
    RMSNorm and the MLA up-projections are recomputed in the backward pass, so their outputs
    are not stored. A MoE layer of DeepSeek-V3 keeps no Q, K or V, none of the normalised
    tensors (the attention and MLP inputs, the normalised latents), but still the inputs of
    every norm, unchanged."""
    from gpulesson import activations

    cfg = preset("deepseek-v3")
    plain = activations.activation_tensors(cfg, seq_len=4096)
    recipe = activations.activation_tensors(cfg, seq_len=4096, recompute="deepseek-v3")
    for gone in ("Q", "K", "V", "attention input", "MLP input", "query latent",
                 "key/value latent"):
        assert gone in plain and gone not in recipe
    for kept in ("norm inputs", "query latent norm input", "key/value latent norm input"):
        assert recipe[kept] == plain[kept] > 0


def test_source_deepseek_v3_recipe_caches_linear_inputs_in_fp8() -> None:
    """DeepSeek-V3 report, section 3.3.3: activations cached for the linear layers'
    backward pass are FP8, 1 byte a value where BF16 takes 2: the tokens dispatched to the
    experts and the SwiGLU's inputs (gate and up projections), whose output (the down
    projection's input) is recomputed instead; the linear layer after attention takes E5M6,
    12 bits; the combine stays in BF16, so the experts' outputs keep their 2 bytes, and the
    router's FP32 probabilities theirs. A 4,096-token MoE layer keeps less than half of the
    557.5 KiB per token it keeps without the recipe."""
    from gpulesson import activations

    cfg = preset("deepseek-v3")
    plain = activations.activation_tensors(cfg, seq_len=4096)
    recipe = activations.activation_tensors(cfg, seq_len=4096, recompute="deepseek-v3")
    for fp8 in ("routed token copies", "expert gate projection", "expert up projection",
                "shared expert gate projection", "shared expert up projection"):
        assert recipe[fp8] * 2 == plain[fp8]
    assert recipe["attention output"] * 16 == plain["attention output"] * 12
    assert "expert down projection input" not in recipe
    assert "shared expert down projection input" not in recipe
    assert recipe["expert outputs"] == plain["expert outputs"]
    assert recipe["router probabilities"] == plain["router probabilities"]
    assert sum(plain.values()) == 557.5 * 1024 * 4096
    assert sum(recipe.values()) < sum(plain.values()) / 2


def test_source_deepseek_v3_up_projection_weights() -> None:
    """DeepSeek-V3's checkpoint (config.json and modeling_deepseek.py): ``q_b_proj`` maps the
    1,536-wide query latent to 128 heads of 192, ``kv_b_proj`` the 512-wide key/value
    latent to 128 heads of 128 + 128: the weights the recipe runs again per layer."""
    from gpulesson import activations

    q_b_proj, kv_b_proj = 24576 * 1536, 32768 * 512
    assert activations.up_projection_params(preset("deepseek-v3")) == q_b_proj + kv_b_proj


def test_deepseek_v3_recipe_needs_latent_attention() -> None:
    from gpulesson import activations

    with pytest.raises(ValueError, match=r"recompute='deepseek-v3'.*latent_attention=False"):
        activations.activation_tensors(preset("llama-3-8b"), seq_len=8,
                                       recompute="deepseek-v3")
    with pytest.raises(ValueError, match=r"recompute='deepseek-v3'"):
        activations.up_projection_params(preset("llama-3-8b"))
    with pytest.raises(ValueError, match=r"recompute must be one of .*'deepseek-v3'"):
        activations.activation_tensors(preset("gpt2"), seq_len=8, recompute="some")


@pytest.mark.parametrize(("mlp", "rest", "gib"), [
    (114.71e9, 0.96e9 + 1.16e9, 60.8),  # gpt-oss-120b
    (19.12e9, 0.64e9 + 1.16e9, 12.8),   # gpt-oss-20b
])
def test_source_gpt_oss_checkpoint_bytes(mlp: float, rest: float, gib: float) -> None:
    """OpenAI, gpt-oss model card (2025), table 1: MLP, attention and embedding parameters
    and the checkpoint size; the MoE weights are MXFP4 (4.25 bits with their scales), the
    rest BF16."""
    got = memory.checkpoint_bytes({"mxfp4": mlp, "bf16": rest})
    assert got / 2**30 == pytest.approx(gib, rel=0.005)


@pytest.mark.parametrize("parts", [{}, {"bf16": -1}, {"bogus": 1e9}, [("bf16", 1)]])
def test_checkpoint_bytes_refuses_bad_parts(parts: object) -> None:
    with pytest.raises((ValueError, KeyError)):
        memory.checkpoint_bytes(parts)  # type: ignore[arg-type]
