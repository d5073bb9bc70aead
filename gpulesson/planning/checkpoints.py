"""What a checkpoint's weights take on one serving GPU, by storage precision.

A checkpoint stores its parameters at one precision (``"bf16"``), quantised with the
embedding and output layer kept in 16 bits (``"fp8"``, ``"int8"``, ``"int4"``), or mixed as
:data:`MIXED_CHECKPOINTS` lists (:func:`checkpoint_parts`); a serving engine adds what its
kernels pad (:func:`expert_padding_bytes`, :func:`mxfp4_triton_extra_bytes`) and its
rotary table (:func:`rotary_table_bytes`). :func:`gpu_weight_bytes` is one GPU's share,
over tensor parallelism or an MoE layout (:mod:`~gpulesson.planning.moe_serving`).
:mod:`~gpulesson.planning.serving` (the KV budget and the plans) reads them all.

Standard library only (the site runs it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType

from gpulesson import _validate as v
from gpulesson import inference, memory, transformer

from ._adapt import ModelView, model_view
from .moe_serving import MoEParallel, sequence_parallel, weight_bytes_per_gpu

__all__ = ["FP32_ROTARY_TABLES", "MIXED_CHECKPOINTS", "MXFP4_BLOCK", "checkpoint_parts",
           "expert_bias_params", "expert_padding_bytes", "gpu_weight_bytes",
           "mxfp4_triton_extra_bytes", "REPLICATED_PARTS", "replicated_bytes",
           "replicated_indexer_bytes", "replicated_params", "rotary_table_bytes",
           "routed_bytes", "shared_expert_bytes", "weight_bytes"]


#: Checkpoints that keep parts in 16 bits, by ``weight_dtype`` name: what each stores at
#: low precision (the rest is BF16), and the source.
MIXED_CHECKPOINTS: Mapping[str, str] = MappingProxyType({
    "fp8_ffn": "Llama 3.1 405B FP8 (Meta): the feed-forward weights in FP8, except in the "
               "first and last layers; attention, norms and embeddings in BF16 (Dubey et al. "
               "2024, The Llama 3 Herd of Models, section 6.2)",
    "mxfp4_experts": "gpt-oss: the routed experts' matrices in MXFP4, everything else (their "
                     "biases included) in BF16 (OpenAI, gpt-oss-120b and gpt-oss-20b model "
                     "card, 2025: 60.8 and 12.8 GiB; the checkpoint's *_proj_bias tensors "
                     "are BF16)",
})


def _fp8_ffn_share(layers: int) -> float:
    """The share of the feed-forward weights ``"fp8_ffn"`` stores in FP8: all layers but
    the first and the last (:data:`MIXED_CHECKPOINTS`)."""
    return (layers - 2) / layers


def checkpoint_parts(model: object, weight_dtype: str) -> dict[str, float]:
    """Parameters by storage precision, ``{precision: params}``, of ``model`` stored as
    ``weight_dtype``: one precision for all (``"bf16"``), a quantised checkpoint that keeps
    the embedding and the output layer in 16 bits (``"fp8"``, ``"int8"``, ``"int4"``), or a
    mixed one of :data:`MIXED_CHECKPOINTS`. :func:`gpulesson.memory.checkpoint_bytes`
    turns it into bytes."""
    mv = model_view(model)
    cfg = mv.cfg
    total = mv.total_params
    if weight_dtype == "mxfp4_experts":
        experts = transformer.moe_breakdown(cfg)["routed_experts"]
        if not experts:
            raise ValueError("weight_dtype 'mxfp4_experts' needs a mixture-of-experts model; "
                             f"{mv.name} has no routed experts")
        matrices = experts - expert_bias_params(mv)
        return {"mxfp4": float(matrices), "bf16": total - matrices}
    if weight_dtype == "fp8_ffn":
        mlp = transformer.param_breakdown(cfg)["mlp"]
        if cfg.layers < 3:
            raise ValueError(f"weight_dtype 'fp8_ffn' keeps the first and last layers in BF16; "
                             f"{mv.name} has {cfg.layers} layers")
        fp8 = mlp * _fp8_ffn_share(cfg.layers)
        return {"fp8": fp8, "bf16": total - fp8}
    size = memory.precision_bytes(weight_dtype)
    if size >= 2:
        return {weight_dtype: total}
    table = mv.hidden * cfg.vocab * (1 if cfg.tied_embeddings else 2)
    return {weight_dtype: total - table, "bf16": float(table)}


def _round_up(x: float, multiple: int) -> float:
    return -(-x // multiple) * multiple


def expert_bias_params(model: object) -> int:
    """The biases of all routed experts (0 without MLP biases): per expert and MoE layer,
    one per output of its gate/up and down projections, the difference between
    :func:`gpulesson.transformer.expert_params` with and without biases (gpt-oss-120b:
    36 x 128 x (2 x 2,880 + 2,880) = 39.8 M)."""
    cfg = model_view(model).cfg
    if not cfg.moe:
        return 0
    bare = replace(cfg, linear_bias=False, mlp_bias=False)
    per = transformer.expert_params(cfg) - transformer.expert_params(bare)
    return int(cfg.moe_layers * cfg.experts * per)


def expert_padding_bytes(model: object, weight_dtype: str, *, tp: int = 1,
                         intermediate_multiple: int = 1, hidden_multiple: int = 1) -> float:
    """Bytes per GPU a serving kernel adds to the routed experts by padding their shapes:
    each expert's ``I/tp x h`` matrices are stored ``round_up(I/tp) x round_up(h)``, and
    its biases (BF16) ``round_up(I/tp)`` per gate/up output and ``round_up(h)`` per down
    output.

    vLLM's MXFP4 MoE through the Marlin kernel (``quantization/mxfp4.py``,
    ``Mxfp4MoEMethod.create_weights``: "n % 256 == 0 and k % 128 == 0") pads the
    intermediate size to a multiple of 128 and the hidden size to 256, the BF16 biases
    ``w13_bias`` and ``w2_bias`` with them: gpt-oss's 2,880 x 2,880 experts become 2,944 x
    3,072, 9.0 % more bytes, 5.1 GiB on gpt-oss-120b (vLLM 0.10.1 prints 65.97 GiB of
    weights, issue #23278; the checkpoint holds 60.8)."""
    mv = model_view(model)
    t = v.positive_int("tp", tp)
    a = v.positive_int("intermediate_multiple", intermediate_multiple)
    b = v.positive_int("hidden_multiple", hidden_multiple)
    parts = checkpoint_parts(mv, weight_dtype)
    experts = transformer.moe_breakdown(mv.cfg)["routed_experts"]
    if not experts:
        return 0.0
    cfg = mv.cfg
    biases = expert_bias_params(mv)
    dtype = "mxfp4" if "mxfp4" in parts else next(iter(parts))
    inter, h = cfg.expert_ffn / t, mv.hidden
    ratio = _round_up(inter, a) * _round_up(h, b) / (inter * h)
    out = memory.checkpoint_bytes({dtype: float(experts - biases)}) / t * (ratio - 1)
    if biases:
        ups = 2 if cfg.gated_mlp else 1
        grown = ups * (_round_up(inter, a) - inter) + _round_up(h, b) - h
        out += cfg.moe_layers * cfg.experts * grown * memory.precision_bytes("bf16")
    return float(out)


#: Values per MXFP4 scale byte (one E8M0 exponent per block of 32 values, OCP MX spec).
MXFP4_BLOCK = 32


def mxfp4_triton_extra_bytes(model: object, *, tp: int = 1) -> float:
    """Bytes per GPU vLLM's Triton MXFP4 MoE path adds to the routed experts' checkpoint.

    On Hopper with PyTorch 2.8 and ``triton_kernels`` (vLLM 0.10.2 and later, unless a
    FlashInfer backend is asked for), ``quantization/mxfp4.py``
    (``process_weights_after_loading``) swizzles the expert weights and scales into new
    tensors and deletes the original weights but not the original scales, and turns the
    expert biases from BF16 into FP32: one more byte per :data:`MXFP4_BLOCK` expert values,
    and 2 more bytes per bias value (:func:`expert_bias_params`). gpt-oss-120b: 3.41 GiB
    (vLLM 0.14.1 prints 64.38 GiB of weights, issue #33155; the checkpoint and rotary table
    hold 60.79)."""
    mv = model_view(model)
    t = v.positive_int("tp", tp)
    experts = transformer.moe_breakdown(mv.cfg)["routed_experts"]
    if not experts:
        return 0.0
    biases = expert_bias_params(mv)
    return float(((experts - biases) / MXFP4_BLOCK + 2 * biases) / t)


#: Models whose vLLM model file builds the rotary cos/sin table in FP32, not in the model's
#: dtype, matched in the model's name: gpt-oss (``model_executor/models/gpt_oss.py``,
#: ``OAIAttention`` calls ``get_rope(..., dtype=torch.float32)``).
FP32_ROTARY_TABLES = ("gpt-oss", "gpt_oss")


def rotary_table_bytes(model: object) -> float:
    """The rotary table vLLM keeps beside the weights
    (:func:`gpulesson.inference.rotary_cache_bytes`): 4 bytes a value for the models of
    :data:`FP32_ROTARY_TABLES` (gpt-oss-120b: 131,072 x 64 x 4 = 32 MiB), else 2."""
    mv = model_view(model)
    fp32 = any(key in mv.name.lower() for key in FP32_ROTARY_TABLES)
    return inference.rotary_cache_bytes(mv.cfg, bytes_per_element=4 if fp32 else 2)


def weight_bytes(mv: ModelView, dtype: str) -> float:
    """Weights at ``dtype`` (:func:`checkpoint_parts`)."""
    return memory.checkpoint_bytes(checkpoint_parts(mv, dtype))


def routed_bytes(mv: ModelView, dtype: str) -> float:
    """The routed experts' bytes at ``dtype``, as :func:`checkpoint_parts` stores them."""
    mv = model_view(mv)
    routed = mv.expert_params
    if dtype == "mxfp4_experts":
        biases = expert_bias_params(mv)
        return memory.checkpoint_bytes({"mxfp4": routed - biases, "bf16": float(biases)})
    if dtype == "fp8_ffn":
        low = routed * _fp8_ffn_share(mv.layers)
        return memory.checkpoint_bytes({"fp8": low, "bf16": routed - low})
    return memory.checkpoint_bytes({dtype: routed})


#: What :func:`replicated_params` counts, by kind.
REPLICATED_PARTS = ("router", "latent_down", "norms", "indexer")


def replicated_params(model: object) -> dict[str, int]:
    """Parameters vLLM keeps whole on every tensor-parallel rank, by kind (0 where a model
    has none):

    * ``router``: the MoE gates (:func:`gpulesson.transformer.moe_breakdown`), each a
      ``ReplicatedLinear(hidden, experts, quant_config=None)`` (vLLM
      ``model_executor/models/deepseek_v2.py`` ``DeepseekV2MoE``; ``qwen3_moe.py``,
      ``gpt_oss.py`` likewise);
    * ``latent_down``: latent attention's down-projections ``q_a_proj`` and
      ``kv_a_proj_with_mqa``, ``ReplicatedLinear`` (or fused with ``disable_tp``) in
      ``DeepseekV2MLAAttention``: every rank needs the whole latent;
    * ``norms``: every RMSNorm or LayerNorm (``layernorm.py`` holds the full width);
    * ``indexer``: DeepSeek Sparse Attention's indexers (``Indexer``: "no tensor parallel,
      just replicated").

    DeepSeek-V3: 106.4 M router, 61 x (7,168 x 1,536 + 7,168 x 576) = 923.5 M latent
    down-projections, 1.0 M norms."""
    cfg = model_view(model).cfg
    latent = 0
    if cfg.latent_attention:
        per_layer = cfg.hidden * (cfg.q_lora_rank + cfg.kv_lora_rank + cfg.qk_rope_head_dim)
        latent = (cfg.layers - cfg.recurrent_layers) * per_layer
    indexer = 0
    if cfg.indexer_heads:
        bare = replace(cfg, indexer_heads=0, indexer_head_dim=0, indexer_topk=0)
        indexer = transformer.param_count(cfg) - transformer.param_count(bare)
    return {"router": transformer.moe_breakdown(cfg)["router"], "latent_down": latent,
            "norms": transformer.param_breakdown(cfg)["norm"], "indexer": indexer}


def replicated_bytes(model: object, weight_dtype: str, *, tp: int = 1,
                     parts: tuple[str, ...] = REPLICATED_PARTS) -> float:
    """Weight bytes each of ``tp`` GPUs holds beyond the ``1/tp`` share of
    :func:`weight_bytes` for the ``parts`` of :func:`replicated_params`: each part whole,
    less the ``1/tp`` of it already in the share. :func:`weight_bytes` counts them at
    the checkpoint's precision (BF16 in a mixed checkpoint); vLLM holds the routers and
    norms in 16 bits at least (the gates are built without a quantisation config; FP8
    checkpoints store both in BF16), the rest as stored. So even one GPU (``tp = 1``)
    holds more than :func:`weight_bytes` for an FP8 MoE model: its routers' second byte.
    DeepSeek-V3 in FP8 on 8 GPUs: 106.4 M x (2 - 1/8) + 923.5 M x 7/8 + 1.0 M x 15/8 =
    1.01 GB."""
    mv = model_view(model)
    t = v.positive_int("tp", tp)
    counts = replicated_params(mv)
    if not isinstance(parts, (tuple, list)) or not all(isinstance(p, str) for p in parts):
        raise TypeError(f"parts must be a tuple of kinds of {', '.join(REPLICATED_PARTS)}, "
                        f"got {parts!r} ({type(parts).__name__})")
    unknown = [p for p in parts if p not in counts]
    if unknown:
        raise ValueError(f"parts must name kinds of {', '.join(REPLICATED_PARTS)}, "
                         f"got {unknown[0]!r}")
    stored = memory.precision_bytes("bf16" if weight_dtype in MIXED_CHECKPOINTS
                                    else weight_dtype)
    extra = 0.0
    for part in parts:
        held = max(stored, 2.0) if part in ("router", "norms") else stored
        extra += counts[part] * (held - stored / t)
    return extra


def replicated_indexer_bytes(model: object, weight_dtype: str, *, tp: int = 1) -> float:
    """:func:`replicated_bytes` of the sparse-attention indexers alone: ``(1 - 1/tp)`` of
    their bytes at the checkpoint's precision (BF16 in a mixed checkpoint); vLLM's upcast
    of ``wk`` to BF16 on loading (about 0.06 GB on DeepSeek-V3.2 in FP8) is left out.
    DeepSeek-V3.2 in FP8 on 8 GPUs: 61 x 13,959,424 x 7/8 = 0.745 GB."""
    return replicated_bytes(model, weight_dtype, tp=tp, parts=("indexer",))


def shared_expert_bytes(mv: ModelView, dtype: str) -> float:
    """The shared experts' bytes at ``dtype``, as :func:`checkpoint_parts` stores them (BF16
    in ``"mxfp4_experts"``, whose MXFP4 is the routed experts'; all but the first and last
    layers' in FP8 in ``"fp8_ffn"``)."""
    mv = model_view(mv)
    shared = transformer.moe_breakdown(mv.cfg)["shared_experts"]
    if dtype == "mxfp4_experts":
        return memory.checkpoint_bytes({"bf16": float(shared)})
    if dtype == "fp8_ffn":
        low = shared * _fp8_ffn_share(mv.layers)
        return memory.checkpoint_bytes({"fp8": low, "bf16": shared - low})
    return memory.checkpoint_bytes({dtype: float(shared)})


def gpu_weight_bytes(mv: ModelView, dtype: str, par: MoEParallel) -> float:
    """Weight bytes on one GPU: all over ``tp``, or by
    :func:`~gpulesson.planning.moe_serving.weight_bytes_per_gpu` for an MoE layout; plus
    what vLLM copies whole onto every rank of an engine (:func:`replicated_bytes`).

    With expert parallelism, ``tp > 1`` and ``dp > 1``, vLLM runs the MoE layers
    sequence-parallel (``vllm/config/parallel.py``, ``use_sequence_parallel_moe``): each
    of an engine's GPUs takes its share of the tokens, and the shared experts are built
    whole on each (``DeepseekV2MLP``, Llama 4's ``shared_expert``:
    ``disable_tp=is_sequence_parallel``), so the ``1 - 1/tp`` of them the cut leaves out
    is added (:func:`shared_expert_bytes`)."""
    copies = replicated_bytes(mv, dtype, tp=par.tp)
    if par.dp == 1 and not par.expert_parallel:
        return weight_bytes(mv, dtype) / par.tp + copies
    if sequence_parallel(par):
        copies += shared_expert_bytes(mv, dtype) * (1 - 1 / par.tp)
    return weight_bytes_per_gpu(mv, par, weight_bytes(mv, dtype), routed_bytes(mv, dtype)) + \
        copies


v.guard_module(globals())
