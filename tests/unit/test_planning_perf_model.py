"""The step's work term by term (gpulesson.planning.perf_model)."""

from __future__ import annotations

import pytest

from gpulesson import transformer
from gpulesson.planning import gpu_view, model_view
from gpulesson.planning.perf_model import (
    TILE_OVERHEAD_K,
    attention_efficiency,
    attention_kernel_slowdown,
    gemm_seconds,
    step_terms,
)

H100 = gpu_view("H100 SXM")


def _terms(model: str, **kw: object):  # noqa: ANN202
    args = dict(tp=1, cp=1, pp=1, ep=1, micro_batch=1, seq_len=4096, precision="bf16",
                fp8_recipe="current", recompute="none", imbalance=1.0, shard_params=1e9)
    args.update(kw)
    return step_terms(model_view(model), H100, **args)  # type: ignore[arg-type]


@pytest.mark.parametrize("model", ["llama-3-8b", "qwen3-30b-a3b", "deepseek-v3"])
def test_products_at_their_shapes_add_up_to_6n(model: str) -> None:
    """The forward, data-gradient and weight-gradient products of every linear layer at
    their real shapes (experts with the tokens routed to them) do 6 FLOPs per active weight
    and token: 6N of the lessons, less the input embedding (a lookup, no product)."""
    cfg = transformer.preset(model)
    t = _terms(model)
    n = transformer.active_params(cfg) - cfg.vocab * cfg.hidden
    assert t.gemm_flops == pytest.approx(6 * n * 4096, rel=0.02)


def test_tensor_parallelism_slices_the_products() -> None:
    """Each of tp GPUs does 1/tp of the products' FLOPs."""
    assert _terms("llama-3-8b", tp=4).gemm_flops == pytest.approx(
        _terms("llama-3-8b").gemm_flops / 4, rel=1e-6)


def test_one_more_row_can_cost_a_whole_wave() -> None:
    """Wave quantization (the Inside the GPU lesson): 132 SMs run 132 tiles of 256x128 at
    once; a 133rd tile needs a second wave, nearly doubling the time."""
    kw = dict(peak=989e12, efficiency=0.8, sms=132, bandwidth=3.35e12, element_bytes=2)
    full, _ = gemm_seconds(256 * 12, 4096, 128 * 11, **kw)  # 132 tiles
    more, _ = gemm_seconds(256 * 12 + 1, 4096, 128 * 11, **kw)  # 11 more tiles
    assert more / full == pytest.approx(2.0, rel=1e-9)
    assert full == pytest.approx(2 * 256 * 128 * (4096 + TILE_OVERHEAD_K) / (989e12 * 0.8 / 132))


def test_fp8_adds_cast_traffic_and_moe_adds_syncs() -> None:
    """FP8 casts and transposes add memory traffic; a dense model has no MoE syncs."""
    assert _terms("llama-3-8b", precision="fp8").memory > _terms("llama-3-8b").memory
    assert _terms("llama-3-8b").syncs == 0 < _terms("qwen3-30b-a3b").syncs


def test_offload_moves_the_stage_activations() -> None:
    assert _terms("llama-3-8b").offload_bytes == 0
    assert _terms("llama-3-8b", offload_layers=16).offload_bytes == pytest.approx(
        _terms("llama-3-8b", offload_layers=32).offload_bytes / 2)


def test_fp8_keeps_the_products_inputs_in_one_byte() -> None:
    """Between a tenth and a half of a layer's stored activations are linear layers' inputs,
    which FP8 training keeps in 1 byte instead of 2."""
    from gpulesson.planning.perf_model import fp8_activation_saving
    assert 0.1 < fp8_activation_saving(model_view("llama-3-70b")) <= 0.5


def test_uneven_routing_slows_the_experts_in_proportion() -> None:
    """The busiest expert-parallel GPU paces the layer: 1.5 times the mean load takes 1.5
    times the experts' products, or a little more where the extra rows start a wave."""
    even = _terms("qwen3-30b-a3b", ep=8)
    uneven = _terms("qwen3-30b-a3b", ep=8, expert_imbalance=1.5)
    assert 1.5 * even.experts <= uneven.experts <= 1.7 * even.experts
    with pytest.raises(ValueError, match="expert_imbalance"):
        _terms("qwen3-30b-a3b", ep=8, expert_imbalance=0.5)


def test_attention_efficiency_reproduces_flashattention3_on_an_h100() -> None:
    """FlashAttention-3, causal, head dimension 128, 8,192 tokens on an H100 SXM: 630
    TFLOP/s forward and 532 backward (Dao-AILab/flash-attention pull request #1791, 2025;
    FLOPs counted as the kernel's benchmark counts them, half the square for causal).
    Forward and backward (2.5 times the forward's FLOPs) together: 3.5 / (1/630 + 2.5/532)
    = 557 TFLOP/s, 56 % of 989."""
    measured = 3.5 / (1 / 630 + 2.5 / 532) / 989
    assert attention_efficiency(128, 8192, "Hopper") == pytest.approx(measured, rel=0.05)


def test_attention_efficiency_falls_with_the_head_size_and_short_sequences() -> None:
    """FlashAttention-4's causal forward (flash-attention pull request #2605, 2026) runs
    head dimension 64 at 1,011 TFLOP/s and 128 at 1,431 at 4,096 tokens (0.71), and head
    dimension 128 at 829 and 1,172 TFLOP/s at 1,024 and 2,048 tokens (0.58 and 0.82 of
    4,096's): the exponentials weigh more against the products of a smaller head, and a
    short walk of key tiles more against each query tile's fixed cost."""
    at = attention_efficiency
    assert at(64, 4096, "Blackwell") / at(128, 4096, "Blackwell") == pytest.approx(
        1011 / 1431, rel=0.08)
    assert at(128, 1024, "Blackwell") / at(128, 4096, "Blackwell") == pytest.approx(
        829 / 1431, rel=0.03)
    assert at(128, 2048, "Blackwell") / at(128, 4096, "Blackwell") == pytest.approx(
        1172 / 1431, rel=0.03)


def test_a_sliding_window_of_one_tile_runs_two() -> None:
    """A 128-token window (GPT-OSS's) needs one tile of keys per tile of queries and runs
    two, plus the fixed cost: far below a long causal walk."""
    assert (attention_efficiency(64, 128, "Hopper", window=True)
            < 0.3 * attention_efficiency(64, 4096, "Hopper"))


def test_op_checkpointing_recomputes_every_second_product() -> None:
    """torchtitan's selective op checkpointing reruns k, o and the up projection of a
    Llama 3 8B block: 36.5 % of its forward products; attention is not rerun."""
    cfg = transformer.preset("llama-3-8b")
    base, op = _terms("llama-3-8b"), _terms("llama-3-8b", recompute="torchtitan-op")
    layers = cfg.layers * (2 * cfg.hidden * (cfg.q_dim + cfg.kv_dim) + 3 * cfg.hidden * cfg.ffn)
    assert (op.gemm_flops - base.gemm_flops) == pytest.approx(0.365 * 2 * layers * 4096,
                                                              rel=0.01)
    assert op.attention == base.attention
    assert _terms("llama-3-8b", recompute="selective").attention > base.attention


def test_fp8_recipes_cast_their_own_bytes_and_fit_apart() -> None:
    """Current scaling reads each tensor once more to find its largest value
    before it casts; delayed, blockwise and MX scaling cast in one pass. Block-scaled
    recipes (DeepSeek-V3's, MXFP8) run other product kernels: their own fitted factor."""
    from gpulesson.planning import calibration
    mem = {r: _terms("llama-3-8b", precision="fp8", fp8_recipe=r).memory
           for r in ("delayed", "current", "tensorwise", "blockwise", "mxfp8")}
    bf16 = _terms("llama-3-8b").memory
    assert mem["current"] > mem["delayed"] == mem["blockwise"] > bf16
    # torchao's measured rate includes its casts (CASTS_IN_PRODUCT_RATE): none counted again
    assert mem["tensorwise"] == pytest.approx(bf16, rel=0.01)
    # the extra pass reads 2 of the 4 (activations) or 3 (weights) bytes the cast moves
    assert (mem["current"] - bf16) / (mem["delayed"] - bf16) == pytest.approx(1.5, rel=0.1)
    assert calibration.column("gemm", "Blackwell", "fp8", "mxfp8") == "gemm:Blackwell:fp8-block"
    assert calibration.column("gemm", "Hopper", "fp8", "current") == "gemm:Hopper:fp8"


def test_torchao_tensorwise_products_run_at_torchaos_own_rate() -> None:
    """torchao's Float8Linear (tensorwise, compiled) measures 1.39x bfloat16 at M, K, N =
    4096, 8192, 16384 on an H100 (torchao/float8/README.md): its products run at that
    multiple of the BF16 rate, slower than TransformerEngine's (DeepGEMM's 1,350 of 1,979
    TFLOP/s), and have their own fitted factor."""
    from gpulesson.planning import calibration
    tw = _terms("llama-3-8b", precision="fp8", fp8_recipe="tensorwise").gemm
    te = _terms("llama-3-8b", precision="fp8", fp8_recipe="current").gemm
    bf16 = _terms("llama-3-8b").gemm
    assert bf16 > tw > te
    assert calibration.column("gemm", "Hopper", "fp8", "tensorwise") == \
        "gemm:Hopper:fp8-tensorwise"
    # most of a step's product time is the layers' (FP8); the output layer stays BF16
    assert bf16 / tw == pytest.approx(1.39, rel=0.1)


def _sparse_and_dense():  # noqa: ANN202
    import dataclasses
    from pathlib import Path
    hf = Path(__file__).resolve().parents[1] / "data" / "hf_configs"
    v32 = transformer.from_hf_config(hf / "deepseek_v32__DeepSeek-V3.2.json")
    return v32, dataclasses.replace(v32, indexer_heads=0, indexer_head_dim=0, indexer_topk=0)


def test_a_dsa_step_attends_to_the_top_k_and_counts_the_indexer() -> None:
    """DeepSeek-V3.2's sparse training stage (DeepSeek-AI 2025, arXiv 2512.02556: 2,048
    keys a query, sequences of 128K tokens), its attention run in latent attention's MQA
    mode (the DeepSeek-V3.2-Exp report, section 1): every head attends to the 576-wide
    latent and rotary key and the 512-wide latent value, 2 x 128 x (2 x 512 + 64) =
    278,528 FLOPs a key and layer, not the up-projected heads' 2 x 128 x (192 + 128) =
    81,920. One 131,072-token sequence, by hand: the attention 3 x 278,528 x 61 x
    (2,048 x 2,049 / 2 + 129,024 x 2,048) and the indexer 61 x 16,512 x (131,072 x
    131,073 / 2 + 2 x that top-k sum), forward over every earlier key and backward over
    the picked ones: 2.2764e16 FLOPs (1.3181e16 with the up-projected count), against
    3 x 81,920 x 61 x 131,072^2 / 2 = 1.2878e17 for dense attention, which runs
    up-projected."""
    v32, dense = _sparse_and_dense()
    s, top = 131072, 2048
    picked = top * (top + 1) // 2 + (s - top) * top
    absorbed = 2 * 128 * (2 * 512 + 64)
    hand = (3 * absorbed * 61 * picked
            + 61 * 16512 * (s * (s + 1) // 2 + 2 * picked))
    sparse = step_terms(model_view(v32), H100, tp=1, cp=1, pp=1, ep=1, micro_batch=1,
                        seq_len=s, precision="bf16", fp8_recipe="current", recompute="none",
                        imbalance=1.0, shard_params=1e9)
    full = step_terms(model_view(dense), H100, tp=1, cp=1, pp=1, ep=1, micro_batch=1,
                      seq_len=s, precision="bf16", fp8_recipe="current", recompute="none",
                      imbalance=1.0, shard_params=1e9)
    assert sparse.attention_flops == pytest.approx(hand, rel=1e-12)
    assert full.attention_flops == pytest.approx(3 * 81920 * 61 * s * s / 2, rel=1e-12)
    # the time follows: each score tile's products (576 + 512) / 2 = 544 wide in a walk of
    # 2,048 gathered keys, the indexer a causal walk of its 128: 34.8 s against 184 s
    time = (3 * absorbed * 61 * picked / attention_efficiency(544, top, "Hopper", window=True)
            + 61 * 16512 * (s * (s + 1) // 2 + 2 * picked) / attention_efficiency(
                128, s, "Hopper")) / H100.peak("bf16")
    assert sparse.attention == pytest.approx(time, rel=1e-9)
    assert sparse.attention < full.attention / 5


def test_a_dsa_step_within_its_top_k_adds_only_the_indexer() -> None:
    """At 2,048 tokens every query attends to every earlier key, as dense attention: the
    attention's FLOPs and time are the dense model's, and the indexer adds its own
    (forward over every earlier key, backward over the same keys, all picked)."""
    v32, dense = _sparse_and_dense()
    kw = dict(tp=2, cp=1, pp=1, ep=1, micro_batch=1, seq_len=2048, precision="bf16",
              fp8_recipe="current", recompute="none", imbalance=1.0, shard_params=1e9)
    sparse = step_terms(model_view(v32), H100, **kw)  # type: ignore[arg-type]
    full = step_terms(model_view(dense), H100, **kw)  # type: ignore[arg-type]
    indexer = 61 * 16512 * 3 * (2048 * 2049 // 2)  # whole on each of the tp GPUs
    assert sparse.attention_flops == pytest.approx(full.attention_flops + indexer, rel=1e-12)
    walk = attention_efficiency(128, 2048, "Hopper")  # the indexer's head size
    assert sparse.attention - full.attention == pytest.approx(
        indexer / walk / H100.peak("bf16"), rel=1e-9)


def test_a_dsa_indexer_is_whole_on_every_tensor_parallel_gpu() -> None:
    """DeepSeek's reference Indexer (DeepSeek-V3.2-Exp ``inference/model.py``) runs
    ``wq_b``, ``wk`` and ``weights_proj`` as plain ``Linear`` layers over all 64 heads on
    every rank (and checks that every rank picks the same top-k), as
    ``activations.indexer_tensors`` keeps its tensors whole: at 8-way tensor parallelism
    each GPU does all of the indexer's scoring and projections, while the attention's
    heads and the other products are split 8 ways."""
    v32, dense = _sparse_and_dense()
    s = 32768

    def terms(cfg, tp):  # noqa: ANN001, ANN202
        return step_terms(model_view(cfg), H100, tp=tp, cp=1, pp=1, ep=1, micro_batch=1,
                          seq_len=s, precision="bf16", fp8_recipe="current",
                          recompute="none", imbalance=1.0, shard_params=1e9)

    one, eight = terms(v32, 1), terms(v32, 8)
    d1, d8 = terms(dense, 1), terms(dense, 8)
    assert d8.attention_flops == pytest.approx(d1.attention_flops / 8, rel=1e-12)
    index_flops = 61 * 16512 * (s * (s + 1) // 2 + 2 * (2048 * 2049 // 2 + (s - 2048) * 2048))
    # the sparse attention core is split 8 ways, the indexer not: 7/8 of it is left over
    assert eight.attention_flops - one.attention_flops / 8 == pytest.approx(
        index_flops * 7 / 8, rel=1e-9)
    rate = attention_efficiency(128, s, "Hopper") * H100.peak("bf16")
    assert eight.attention - one.attention / 8 == pytest.approx(index_flops * 7 / 8 / rate,
                                                                rel=1e-9)
    # the projections: 1,536 x 64 x 128 + 7,168 x 128 + 2 x 128 + 7,168 x 64 weights a
    # layer, forward and two backward products of 2 FLOPs a weight and token, whole
    weights = 1536 * 64 * 128 + 7168 * 128 + 2 * 128 + 7168 * 64
    projections = 3 * 2 * s * weights * 61
    assert eight.gemm_flops - d8.gemm_flops == pytest.approx(projections, rel=1e-3)
    assert one.gemm_flops - d1.gemm_flops == pytest.approx(projections, rel=1e-3)


def test_dense_attention_flops_are_half_of_palms_count() -> None:
    """Every model without a top-k: the causal half of PaLM's 12 L H Q T per token, three
    passes of 4 L H Q T / 2 (Llama 3 8B, 32 layers of 32 heads of 128, 4,096 tokens)."""
    t = _terms("llama-3-8b")
    assert t.attention_flops == pytest.approx(3 * 4 * 32 * 32 * 128 * 4096 / 2 * 4096,
                                              rel=1e-12)


@pytest.mark.parametrize("recompute, forward_passes", [("none", 1), ("norm-moe-act", 2),
                                                        ("full", 2)])
def test_a_clamped_expert_activation_moves_its_clamps_bytes(recompute: str,
                                                            forward_passes: int) -> None:
    """gpt-oss clamps its experts' gated activation (glu_limit 7.0); Megatron-Core clamps
    the two halves and concatenates them outside its fused kernel: by hand, one 4,096-token
    micro-batch on 8 GPUs of experts moves (8 x forward passes + 10) x 2,880 x 4,096 x 4
    x 36 values of 2 bytes more than the same model unclamped; recomputing the experts'
    activation (or the whole layer) runs the clamps forward again."""
    import dataclasses

    from gpulesson.planning.perf_model import GLU_CLAMP_VALUES

    clamped = transformer.preset("gpt-oss-120b")
    plain = dataclasses.replace(clamped, glu_limit=0.0)
    assert clamped.glu_limit == 7.0
    kw = dict(tp=1, cp=1, pp=1, ep=8, micro_batch=1, seq_len=4096, precision="bf16",
              fp8_recipe="current", recompute=recompute, imbalance=1.0, shard_params=1e9)
    more = (step_terms(model_view(clamped), H100, **kw).memory  # type: ignore[arg-type]
            - step_terms(model_view(plain), H100, **kw).memory)  # type: ignore[arg-type]
    fwd, bwd = GLU_CLAMP_VALUES
    hand = (fwd * forward_passes + bwd) * 2880 * 4096 * 4 * 36 * 2 / H100.bandwidth
    assert (fwd, bwd) == (8, 10)
    assert more == pytest.approx(hand, rel=1e-9)


@pytest.mark.parametrize("preset, kernel, no_kernel, per_token_layer", [
    # GPT-3 175B learns its positions (2,048 rows): no rotary pass. Given rotary positions
    # instead, it reads and writes its queries and keys (12,288 each)
    ("gpt3-175b", {"max_positions": 0}, {}, 2 * (12288 + 12288)),
    # Qwen3 8B's q_norm and k_norm read and write its queries (4,096) and keys (1,024)
    ("qwen3-8b", {}, {"qk_norm": "none"}, 2 * (4096 + 1024)),
    # Gemma 2 9B normalises before and after attention and the MLP: two more norms of
    # 3,584 values than a two-norm block, each read and written
    ("gemma-2-9b", {}, {"norms_per_layer": 2}, 2 * 2 * 3584),
    # DeepSeek-V3 normalises its query latent (1,536) and key-value latent (512); the
    # same model without a query latent projects its queries directly
    ("deepseek-v3", {}, {"q_lora_rank": 0}, 2 * 1536)])
def test_every_norm_and_rotary_pass_moves_its_bytes(preset: str, kernel: dict,
                                                    no_kernel: dict,
                                                    per_token_layer: int) -> None:
    """A norm or a rotary pass is a memory-bound kernel: by hand, one 4,096-token
    micro-batch moves ``per_token_layer`` x 4,096 x layers values of 2 bytes more with it
    than the same model without it, forward once and backward twice."""
    import dataclasses

    from gpulesson.planning.perf_model import ACTIVATION_BYTES

    cfg = dataclasses.replace(transformer.preset(preset), **kernel)
    without = dataclasses.replace(transformer.preset(preset), **no_kernel)
    kw = dict(tp=1, cp=1, pp=1, ep=1, micro_batch=1, seq_len=4096, precision="bf16",
              fp8_recipe="current", recompute="none", imbalance=1.0, shard_params=1e9)
    more = (step_terms(model_view(cfg), H100, **kw).memory  # type: ignore[arg-type]
            - step_terms(model_view(without), H100, **kw).memory)  # type: ignore[arg-type]
    hand = per_token_layer * 4096 * cfg.layers * ACTIVATION_BYTES * 3 / H100.bandwidth
    assert more == pytest.approx(hand, rel=1e-9)


def _attention_as_without_recompute(model: str, recompute: str, **kw: object):  # noqa: ANN202
    """The step terms of ``model`` with no recomputation and with ``recompute``, after
    checking that ``recompute`` keeps the attention core: its attention's time and FLOPs
    are those of no recomputation, a third less than selective recomputation's, which runs
    the attention core's forward again."""
    none = _terms(model, recompute="none", **kw)
    recipe = _terms(model, recompute=recompute, **kw)
    selective = _terms(model, recompute="selective", **kw)
    assert recipe.attention == none.attention
    assert recipe.attention_flops == none.attention_flops
    assert selective.attention == pytest.approx(4 / 3 * none.attention, rel=1e-12)
    return none, recipe


def test_norm_and_expert_activation_recomputation_keeps_the_attention() -> None:
    """Megatron-Core's recompute_modules ["layernorm", "moe_act"] run the norms and the
    experts' activation again, not the attention core ("core_attn" is a module of its
    own)."""
    none, moe_act = _attention_as_without_recompute("gpt-oss-120b", "norm-moe-act", ep=8,
                                                    seq_len=4096)
    assert moe_act.memory > none.memory  # the norms and the activation again


@pytest.mark.parametrize("recipe", ["mla-up-proj", "deepseek-v3"])
def test_up_projection_recomputation_runs_those_products_again(recipe: str) -> None:
    """Megatron-Core's recompute_modules ["mla_up_proj"] and DeepSeek-V3's recipe run latent
    attention's up-projections forward again, not the attention core ("core_attn" is not
    in the list). By hand from DeepSeek-V3's config.json: 1,536 x 128 x 192 + 512 x 128 x
    (128 + 128) = 54.5M weights a layer, 2 FLOPs each per token, over 61 layers and 4,096
    tokens: the products' FLOPs grow by exactly that, and the dense products' time by
    that share of it (the experts' products are not touched)."""
    none, recipe_terms = _attention_as_without_recompute("deepseek-v3", recipe, seq_len=4096)
    up = 1536 * 128 * 192 + 512 * 128 * (128 + 128)
    assert up == 54_525_952
    # (to 1e-4: the product's width is rounded to whole columns)
    assert recipe_terms.gemm_flops - none.gemm_flops == pytest.approx(2 * up * 61 * 4096,
                                                                      rel=1e-4)
    assert recipe_terms.redo_gemm == pytest.approx(recipe_terms.gemm - none.gemm, rel=1e-9)
    assert recipe_terms.redo_gemm > 0.04 * none.gemm
    assert recipe_terms.experts == none.experts and recipe_terms.redo_experts == 0


def test_fp8_saving_counts_only_the_products_inputs_at_any_length() -> None:
    """The bytes FP8 saves a token are the linear layers' inputs, whatever the sequence
    length: with DeepSeek Sparse Attention the indexer's top-k indices and targets grow
    with the length up to 2,048 a token and are not FP8 casts, so the share shrinks."""
    from gpulesson import activations
    from gpulesson.planning.perf_model import fp8_activation_saving
    cfg = transformer.preset("deepseek-v3.2")

    def saved_per_token(s: int) -> float:
        held = activations.activation_bytes(cfg, seq_len=s, recompute="none")
        return fp8_activation_saving(model_view(cfg), seq_len=s) * held / s

    assert saved_per_token(4096) == pytest.approx(saved_per_token(1))
    assert fp8_activation_saving(model_view(cfg), seq_len=4096) < fp8_activation_saving(
        model_view(cfg))
    llama = model_view("llama-3-70b")
    assert fp8_activation_saving(llama, seq_len=8192) == pytest.approx(
        fp8_activation_saving(llama))


def test_recomputation_reruns_the_sparse_attention_not_its_indexer() -> None:
    """DeepSeek-V3.2 at 32,768 tokens: selective recomputation runs the attention core
    forward again (a third more of its training FLOPs) but not the indexer, whose top-k
    indices are kept; full recomputation runs the whole layer forward again, the indexer's
    scoring of every earlier key included."""
    from gpulesson import flops
    cfg = transformer.preset("deepseek-v3.2")
    s = 32768
    scoring = cfg.global_layers * flops.indexer_flops_per_key(cfg) * flops.attended_keys(0, s)
    index = cfg.global_layers * flops.indexer_training_flops(
        cfg, scored=flops.attended_keys(0, s), selected=flops.attended_keys(0, s, 2048))
    none, sel, full = (_terms("deepseek-v3.2", seq_len=s, recompute=rc).attention_flops
                       for rc in ("none", "selective", "full"))
    assert sel - none == pytest.approx((none - index) / 3)
    assert full - sel == pytest.approx(scoring)


def test_fp8_attention_runs_its_products_twice_as_fast_not_its_exponentials() -> None:
    """FlashAttention-3 on an H100, head dimension 128: close to 1,200 TFLOP/s in FP8
    against 740 in BF16, 1.6 times (Shah et al. 2024, abstract). Doubling the products'
    rate and keeping the exponentials' gives 1.5 on Hopper; on Blackwell, whose tensor
    cores doubled again but not its exponentials, 1.33; on Blackwell Ultra, whose
    exponentials doubled too (NVIDIA's softmax note, 2026), 1.5 again."""
    at = attention_efficiency
    hopper = at(128, 8192, "Hopper", fp8=True) / at(128, 8192, "Hopper")
    assert hopper == pytest.approx(1200 / 740, rel=0.10)
    assert hopper == pytest.approx(1.5, rel=1e-12)
    assert at(128, 8192, "Blackwell", fp8=True) / at(128, 8192, "Blackwell") == (
        pytest.approx(4 / 3, rel=1e-12))
    assert at(128, 8192, "Blackwell Ultra", fp8=True) / at(128, 8192, "Blackwell Ultra") == (
        pytest.approx(1.5, rel=1e-12))
    fp8 = _terms("qwen3-30b-a3b", precision="fp8")
    assert _terms("qwen3-30b-a3b", precision="fp8", fp8_attention=True).attention == (
        pytest.approx(fp8.attention / 1.5, rel=1e-12))
    with pytest.raises(ValueError, match="fp8_attention.*'bf16'"):
        _terms("qwen3-30b-a3b", fp8_attention=True)


def test_older_attention_kernels_take_the_newer_kernels_published_speed_ups() -> None:
    """FlashAttention-3 is "1.5-2.0x faster" than FlashAttention-2 forward and "1.5-1.75x"
    backward on an H100 (Shah et al. 2024, section 4.1); FlashAttention-2 is "around
    1.3-1.5x faster" than FlashAttention in Triton forward and "around 2x" backward on an
    A100 (Dao 2023, section 4.1). Each slow-down is the middle of its range; on Hopper the
    Triton kernel takes both. FlashAttention-2 is Ampere's own kernel; a kernel with no
    published speed on a generation is refused by name."""
    assert attention_kernel_slowdown("fused", "Blackwell") == (1.0, 1.0)
    assert attention_kernel_slowdown("flash-attention-2", "Ampere") == (1.0, 1.0)
    fa2 = attention_kernel_slowdown("flash-attention-2", "Hopper")
    assert fa2 == pytest.approx(((1.5 + 2.0) / 2, (1.5 + 1.75) / 2), rel=1e-12)
    triton = attention_kernel_slowdown("triton", "Ampere")
    assert triton == pytest.approx(((1.3 + 1.5) / 2, 2.0), rel=1e-12)
    assert attention_kernel_slowdown("triton", "Hopper") == pytest.approx(
        (fa2[0] * triton[0], fa2[1] * triton[1]), rel=1e-12)
    with pytest.raises(ValueError, match=r"attention_kernel: no published speed of "
                       r"'triton' on Blackwell; known on Ampere, Hopper"):
        attention_kernel_slowdown("triton", "Blackwell")
    with pytest.raises(ValueError, match="attention_kernel.*'xformers'"):
        attention_kernel_slowdown("xformers", "Hopper")


def test_a_fused_expert_mlp_drops_the_activation_and_its_cast() -> None:
    """With the experts' gated activation in the grouped products' epilogue (Megatron-Core's
    TransformerEngine operation fuser), Qwen3 30B-A3B (48 MoE layers, 8 of 128 experts a
    token, expert width 768) on 8 GPUs of experts no longer moves, for one 4,096-token
    micro-batch, its 3 values per expert-width element (two inputs read, one output
    written) forward and twice backward at 2 bytes, nor, in MXFP8, the cast of the down
    projection's input (4 bytes a value)."""
    kw = dict(ep=8, precision="fp8", fp8_recipe="mxfp8")
    plain, fused = _terms("qwen3-30b-a3b", **kw), _terms(
        "qwen3-30b-a3b", fused_expert_mlp=True, **kw)
    values = 768 * 4096 * 8 * 48  # expert width x tokens x experts a token x layers
    hand = (3 * 3 * 2 + 4) * values / H100.bandwidth
    assert plain.memory - fused.memory == pytest.approx(hand, rel=1e-9)
    assert (plain.gemm, plain.experts, plain.attention) == (
        fused.gemm, fused.experts, fused.attention)
