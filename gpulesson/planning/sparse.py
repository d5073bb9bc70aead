"""DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5) in vLLM's KV-cache pool.

A model with a lightning indexer (:attr:`~gpulesson.transformer.TransformerConfig.indexer_heads`)
keeps two caches a layer in vLLM V1, each of one head, neither split over tensor-parallel
ranks:

* the MLA latent (``MLAAttentionSpec``, ``vllm/v1/kv_cache_interface.py``). With an FP8
  cache (``--kv-cache-dtype fp8``) the sparse backend stores DeepSeek's own ``fp8_ds_mla``
  record, not 576 FP8 values: 512 FP8 latent values, 4 FP32 scales (one per 128 values)
  and the 64 rotary values left in BF16, 512 + 16 + 128 = :data:`FP8_DS_MLA_BYTES` = 656
  bytes a token (``vllm/v1/attention/backends/mla/flashmla_sparse.py``, the layout note
  and ``FlashMLASparseBackend``: ``"fp8"`` is an alias of ``"fp8_ds_mla"``;
  ``MLAAttentionSpec.real_page_size_bytes``: ``block_size * 656``). In BF16, 576 x 2 =
  1,152;
* the indexer's key (``DeepseekV32IndexerCache.get_kv_cache_spec`` in
  ``vllm/model_executor/models/deepseek_v2.py``: an ``MLAAttentionSpec`` of one head of
  ``head_dim + head_dim // 128 * 4`` = 132 ``uint8``), FP8 with its scales whatever the
  latent's dtype (:func:`gpulesson.inference.indexer_key_bytes`).

Both are full-attention specs of one block size, so vLLM puts every layer's two caches in
one KV-cache group (``UniformTypeKVCacheSpecs``: "same types means always need the same
number of token slots"; its page is the sum of the layers' pages): a block of ``b`` tokens
takes ``b x layers x (latent + 132)`` bytes, the pool is cut by that sum, and a token costs
DeepSeek-V3.2 61 x (656 + 132) = 48,068 bytes on every GPU with an FP8 cache, 78,324 in
BF16 (:func:`vllm_kv_bytes_per_token`). The sparse backend takes blocks of
:data:`SPARSE_BLOCK_SIZE` tokens only: ``vllm/platforms/cuda.py`` forces
``block_size = 64`` ("Forcing kv cache block size to 64 for FlashMLASparse backend"),
whatever ``--block-size`` says (:func:`vllm_block_size`).

The indexer's weights are replicated too (``Indexer``: "no tensor parallel, just
replicated"; ``wq_b`` a ``ReplicatedLinear``, ``wk_weights_proj`` with ``disable_tp``):
:func:`~gpulesson.planning.checkpoints.replicated_indexer_bytes`. The layouts above are
the same in every vLLM snapshot read (the earlier with ``DeepseekV32ForCausalLM`` turning
``fp8`` into ``fp8_ds_mla`` in ``vllm/model_executor/models/config.py``, the later with
the backend's alias), so no version switch; no public start-up log of such a model was
found to reconcile (searched December 2026).

Standard library only (the site runs it).
"""

from __future__ import annotations

from gpulesson import _validate as v
from gpulesson import inference, memory

from ._adapt import model_view

__all__ = ["FP8_DS_MLA_BYTES", "SPARSE_BLOCK_SIZE", "VLLM_KV_DTYPES", "has_indexer",
           "vllm_block_size", "vllm_kv_bytes_per_token", "vllm_kv_dtype"]

#: Bytes of one token's latent in vLLM's ``fp8_ds_mla`` layout (DeepSeek-V3.2's sizes;
#: :data:`gpulesson.inference.FP8_SPARSE_LATENT_BYTES`, which the lessons' calculators use).
FP8_DS_MLA_BYTES = inference.FP8_SPARSE_LATENT_BYTES
#: The only block size of vLLM's FlashMLA sparse backend (``get_supported_kernel_block_sizes``).
SPARSE_BLOCK_SIZE = 64
_FP8_DS_MLA_DIMS = inference.FP8_SPARSE_LATENT_DIMS  # head size 576 only


def has_indexer(model: object) -> bool:
    """Whether ``model`` has DeepSeek Sparse Attention's lightning indexer."""
    return bool(model_view(model).cfg.indexer_heads)


def vllm_block_size(model: object, block_size: int = 16) -> int:
    """The block size vLLM runs ``model`` with: :data:`SPARSE_BLOCK_SIZE` for a model
    with an indexer (the sparse backend forces it), else ``block_size``."""
    block = v.positive_int("block_size", block_size)
    return SPARSE_BLOCK_SIZE if has_indexer(model) else block


#: ``--kv-cache-dtype`` values of vLLM the planner counts, in vLLM's spelling and the
#: course's (``bf16`` for ``bfloat16``): vLLM's ``CacheDType`` (``vllm/config/cache.py``)
#: has ``auto`` (its default), ``float16``, ``bfloat16``, ``fp8`` (= ``fp8_e4m3``),
#: ``fp8_e5m2`` and ``fp8_ds_mla`` (DeepSeek-V3.2's sparse-MLA record), besides Intel
#: Gaudi's ``fp8_inc`` and per-head or 4-bit layouts of later versions whose pages the
#: planner does not model; no plain ``int4``, ``fp4`` or ``int8``.
VLLM_KV_DTYPES: tuple[str, ...] = ("auto", "bf16", "bfloat16", "fp16", "float16", "fp8",
                                   "fp8_e4m3", "fp8_e5m2", "fp8_ds_mla")


def vllm_kv_dtype(model: object, kv_dtype: str) -> str:
    """``kv_dtype`` as vLLM resolves ``--kv-cache-dtype`` for ``model``, lower case.

    ``"auto"`` is the model's dtype (vLLM: ``kv_cache_dtype = model_config.dtype``, the
    16-bit type the weights run in, ``"bf16"`` here, FP8 checkpoints included) but for an
    indexer model, where vLLM turns ``auto`` and every ``fp8*`` into ``"fp8_ds_mla"``
    (``DeepseekV32ForCausalLM.verify_and_update_config`` in
    ``vllm/model_executor/models/config.py``).

    Raises
    ------
    ValueError
        naming ``kv_dtype``, the value and :data:`VLLM_KV_DTYPES` for any other name
        (``"int4"``, ``"fp4"``: storage what-ifs of :mod:`gpulesson.inference`, not vLLM
        caches).
    """
    name = kv_dtype.lower() if isinstance(kv_dtype, str) else kv_dtype
    if name not in VLLM_KV_DTYPES:
        raise ValueError(f"kv_dtype: got {kv_dtype!r}, not a vLLM --kv-cache-dtype the "
                         f"planner counts: {', '.join(VLLM_KV_DTYPES)}")
    if name == "auto":
        return "fp8_ds_mla" if has_indexer(model) else "bf16"
    return name


def vllm_kv_bytes_per_token(model: object, *, tp: int = 1, kv_dtype: str = "bf16") -> float:
    """KV-cache bytes a token takes on each of ``tp`` GPUs in vLLM's pool.

    Without an indexer, :func:`gpulesson.inference.kv_cache_bytes_per_token_per_gpu` at
    ``kv_dtype``. With one (module docstring), every attention layer's latent,
    :data:`FP8_DS_MLA_BYTES` in FP8 or ``(d_c + d_R) x 2`` in BF16/FP16, plus its indexer
    key (132 bytes), on every GPU: DeepSeek-V3.2 with ``--kv-cache-dtype fp8`` on 8 GPUs,
    61 x 788 = 48,068 bytes (the 576-value FP8 latent alone would be 35,136).

    Raises
    ------
    ValueError
        for an indexer model with a ``kv_dtype`` other than FP8 or 16 bits, or whose
        latent is not DeepSeek-V3.2's 512 + 64 values in FP8 (the layouts vLLM has).
    """
    mv = model_view(model)
    cfg = mv.cfg
    t = v.positive_int("tp", tp)
    kv_dtype = vllm_kv_dtype(mv, kv_dtype)
    ds_mla = kv_dtype == "fp8_ds_mla"
    b = 1 if ds_mla else memory.precision_bytes(kv_dtype)
    if not cfg.indexer_heads:
        return inference.kv_cache_bytes_per_token_per_gpu(cfg, tp=t, bytes_per_element=b)
    dims = (cfg.kv_lora_rank, cfg.qk_rope_head_dim)
    fp8 = ds_mla or (b == 1 and kv_dtype.lower().startswith("fp8"))
    if b == 2:
        latent = float(sum(dims) * 2)
    elif fp8 and dims == _FP8_DS_MLA_DIMS:
        latent = float(FP8_DS_MLA_BYTES)
    elif fp8:
        raise ValueError(f"kv_dtype {kv_dtype!r}: vLLM's FP8 sparse-MLA cache (fp8_ds_mla) "
                         f"holds a latent of {_FP8_DS_MLA_DIMS[0]} + {_FP8_DS_MLA_DIMS[1]} "
                         f"values; {mv.name} has {dims[0]} + {dims[1]}")
    else:
        raise ValueError(f"kv_dtype {kv_dtype!r}: vLLM's sparse-MLA backend keeps the cache of "
                         f"{mv.name} (an indexer model) in fp8 (fp8_ds_mla) or bf16")
    layers = cfg.layers - cfg.recurrent_layers
    return layers * (latent + inference.indexer_key_bytes(cfg))


v.guard_module(globals())
