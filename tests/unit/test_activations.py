"""gpulesson.activations: the recomputation recipes beyond Korthikanti et al.'s modes."""

from __future__ import annotations

import pytest

from gpulesson import activations, transformer


def test_norm_moe_act_drops_the_norm_outputs_and_the_experts_activation() -> None:
    """Megatron-Core's recompute_modules=["layernorm", "moe_act"] (Megatron-Bridge's
    GPT-OSS recipes from 26.02) stores neither block norm's output nor the routed experts'
    activation output; everything else is kept as selective recomputation keeps it."""
    cfg = transformer.preset("gpt-oss-120b")
    sel = activations.activation_tensors(cfg, seq_len=4096, recompute="selective")
    rec = activations.activation_tensors(cfg, seq_len=4096, recompute="norm-moe-act")
    assert set(sel) - set(rec) == {"attention input", "MLP input",
                                   "expert down projection input"}
    assert all(rec[name] == sel[name] for name in rec)


def test_mla_up_proj_drops_the_up_projections_outputs() -> None:
    """Megatron-Core's recompute_modules=["mla_up_proj"] (Megatron-Bridge's DeepSeek-V3 and
    Kimi K2 recipes) checkpoints the latents' norms, the up-projections and rotary: of a
    DeepSeek-V3 layer it drops the normalised latents (1,536 + 512 wide) and Q, K, V (128
    heads of 192, 192 and 128: config.json of deepseek-ai/DeepSeek-V3), 2 bytes a value,
    and keeps the latents' norm inputs and the attention output."""
    cfg = transformer.preset("deepseek-v3")
    sel = activations.activation_tensors(cfg, seq_len=4096, recompute="selective")
    rec = activations.activation_tensors(cfg, seq_len=4096, recompute="mla-up-proj")
    dropped = set(sel) - set(rec)
    assert dropped == {"query latent", "key/value latent", "Q", "K", "V"}
    assert sum(sel[n] for n in dropped) == 4096 * (1536 + 512 + 128 * (192 + 192 + 128)) * 2
    assert {"query latent norm input", "key/value latent norm input",
            "attention output"} <= set(rec)
    assert all(rec[name] == sel[name] for name in rec)


def test_mla_up_proj_needs_latent_attention() -> None:
    with pytest.raises(ValueError, match="recompute='mla-up-proj'.*no latent attention"):
        activations.activation_tensors(transformer.preset("llama-3-8b"), seq_len=128,
                                       recompute="mla-up-proj")


def test_torchtitan_op_keeps_only_the_saved_products() -> None:
    """torchtitan's op checkpointing recomputes k, o, the up projection and every
    element-wise op: of a Llama 3 8B layer it keeps less than half of what selective
    recomputation keeps, and no K or up projection."""
    cfg = transformer.preset("llama-3-8b")
    op = activations.activation_tensors(cfg, seq_len=8192, recompute="torchtitan-op")
    sel = activations.layer_activation_bytes(cfg, seq_len=8192, recompute="selective")
    assert "K" not in op and "MLP up projection" not in op and "Q" in op
    assert sum(op.values()) < 0.5 * sel


@pytest.mark.parametrize(("model", "share"), [("llama-3-8b", (1024 / 6144, 1.0, 0.5, 0.0)),
                                              ("gpt2", (1 / 3, 1.0, 0.0, 1.0))])
def test_op_checkpointing_recomputes_every_second_product(model: str,
                                                          share: tuple[float, ...]) -> None:
    """In running order q, k, v, o, gate, up, down (a plain MLP: up, down) the second,
    fourth and sixth products are recomputed: k's share of the fused q, k, v projection,
    o, and half the gated MLP's input pair (a plain MLP's down projection)."""
    got = activations.op_recomputed_products(transformer.preset(model))
    assert tuple(got[k] for k in ("qkv", "o", "mlp in", "mlp out")) == pytest.approx(share)


def test_kernels_count_what_unfused_and_hugging_face_code_keep() -> None:
    """Llama-2-7B, one 4,096-token sequence, FlashAttention: fused SwiGLU and 16-bit norm
    inputs keep 17.26 GB (Megatron-Core's fused_bias_swiglu.py and Liger's swiglu.py save
    only the gate and up projections); PyTorch op by op also keeps the SiLU output, s·b·f
    per layer more (20.15 GB); Hugging Face's LlamaRMSNorm keeps its input in FP32, its
    output in BF16 and one FP32 1/rms per token, 6sbh + 4sb for each of the two norms
    where the fused count has 2sbh (24.45 GB: modeling_llama.py; torch's saved tensors
    counted the same in the audit of 2026-12-06)."""
    cfg = transformer.preset("llama-2-7b")
    held = {k: activations.activation_bytes(cfg, seq_len=4096, attention="flash", kernels=k)
            for k in activations.KERNELS}
    assert held == {"fused": 17_263_755_264, "unfused": 20_149_436_416,
                    "hugging-face": 24_445_452_288}
    tensors = activations.activation_tensors
    assert "MLP activation output" not in tensors(cfg, seq_len=8)
    assert "MLP activation output" in tensors(cfg, seq_len=8, kernels="unfused")
    with pytest.raises(ValueError, match="kernels"):
        tensors(cfg, seq_len=8, kernels="triton")
    with pytest.raises(ValueError, match="norm='rmsnorm'"):
        tensors(transformer.preset("gpt2"), seq_len=8, kernels="hugging-face")


def test_sparse_attention_indexer_activations_by_hand() -> None:
    """DeepSeek-V3.2's lightning indexer (64 heads of 128, top 2,048) keeps, per query token
    and layer, its BF16 query 64 x 128 x 2, its key 128 x 2, FP32 head weights 64 x 4, the
    int32 indices of the 2,048 picked keys and the FP32 target over them: 33,280 bytes.
    Not split by tensor parallelism (plain Linear layers in the reference code), split by
    context parallelism; a sequence shorter than the top-k picks every key; full
    recomputation keeps none of it; a model without the indexer has none."""
    cfg = transformer.preset("deepseek-v3.2")
    per_token = 64 * 128 * 2 + 128 * 2 + 64 * 4 + 2048 * 4 + 2048 * 4
    assert per_token == 33_280
    sel = activations.activation_tensors(cfg, seq_len=4096, recompute="selective")
    names = ("indexer query", "indexer key", "indexer head weights", "top-k indices",
             "indexer target")
    assert sum(sel[n] for n in names) == 4096 * per_token
    dense = activations.activation_tensors(transformer.preset("deepseek-v3"), seq_len=4096,
                                           recompute="selective")
    assert sum(sel.values()) - sum(dense.values()) == 4096 * per_token  # V3's shape + DSA
    tp2 = activations.activation_tensors(cfg, seq_len=4096, tp=2, recompute="selective")
    assert all(tp2[n] == sel[n] for n in names)
    cp2 = activations.activation_tensors(cfg, seq_len=4096, cp=2, recompute="selective")
    assert all(2 * cp2[n] == sel[n] for n in names)
    short = activations.activation_tensors(cfg, seq_len=1024, recompute="selective")
    assert short["top-k indices"] == short["indexer target"] == 1024 * 1024 * 4
    assert not set(names) & set(activations.activation_tensors(cfg, seq_len=4096,
                                                                recompute="full"))
    assert activations.indexer_tensors(transformer.preset("deepseek-v3"), tokens=8,
                                       seq_len=8) == {}
    whole = activations.activation_bytes(cfg, seq_len=4096, recompute="selective")
    assert whole - activations.activation_bytes(
        transformer.preset("deepseek-v3"), seq_len=4096, recompute="selective") == (
        61 * 4096 * per_token)
