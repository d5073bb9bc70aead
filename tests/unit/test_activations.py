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
