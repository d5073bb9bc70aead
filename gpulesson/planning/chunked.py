"""Which vLLM versions keep only a chunk's blocks in Llama 4's chunked layers.

Llama 4 Scout and Maverick attend within chunks of 8,192 tokens in 36 of their 48 layers
(:attr:`~gpulesson.transformer.TransformerConfig.attention_chunk`). vLLM V1 gives those
layers a ``ChunkedLocalAttentionSpec`` (``vllm/v1/kv_cache_interface.py``): under the Hybrid
KV Cache Manager they form groups of their own whose blocks before the current chunk are
freed (``vllm/v1/core/single_type_kv_cache_manager.py``,
``ChunkedLocalAttentionManager.get_num_skipped_tokens``: ``chunk * (computed // chunk)``
tokens skipped), and the pool is sized for ``min(chunk + max_num_batched_tokens,
max_model_len)`` tokens a chunked layer (``ChunkedLocalAttentionSpec.max_memory_usage_bytes``,
which ``vllm/v1/core/kv_cache_utils.py`` ``get_max_concurrency_for_kv_cache_config`` sums
over the groups). With the manager off, every layer is a ``FullAttentionSpec`` of
``max_model_len`` tokens, as before 0.10.

Whether the manager is on for a chunked model has changed twice (the pull requests of
vllm-project/vllm):

* #19351 (merged June 2025) added chunked groups to the hybrid manager, on by default:
  first released in 0.10.0, where the course's :data:`~gpulesson.planning.serving.HYBRID_KV_FROM`
  starts;
* #21761 (merged 2025-07-28, after 0.10.0) turned it off for chunked models unless
  ``VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1`` (``vllm/config``: "There is a
  latency regression when using chunked local attention with the hybrid KV cache
  manager. Disabling it, by default."): 0.10.1 onwards;
* #29627 (opened 2025-11-27) made that variable default to 1 again. **Assumption**: its
  first release is 0.13.0; the release tag was not checked, so 0.12.x is the uncertain
  one. A run that sets the variable should pass ``allow_env=True``. One public v0.12.0
  run of Llama 4 Scout on 8 H200s (repository fuhengwu2021/coderepo, ``extra/README.md``)
  reports the manager off by default and 1.86x concurrency at 8,388,608 tokens once the
  variable is set, which the chunked groups reproduce (1.858x; every layer at full
  length would give 0.47x): ``tests/unit/test_planning_chunked.py``.
"""

from __future__ import annotations

from gpulesson import _validate as v

from .non_torch import parse_version

__all__ = ["CHUNKED_HYBRID_OFF", "vllm_chunked_hybrid"]

#: vLLM V1 versions ``[from, to)`` in which a chunked model's hybrid manager is off by
#: default (#21761 to #29627; the upper bound is the assumption in the module docstring).
CHUNKED_HYBRID_OFF = ((0, 10, 1), (0, 13, 0))


def vllm_chunked_hybrid(engine: str = "V1", version: str | None = None, *,
                        allow_env: bool | None = None) -> bool:
    """Whether vLLM ``engine``/``version`` (``None``: the newest) runs a model with chunked
    local attention under the Hybrid KV Cache Manager, so that its chunked layers keep
    only a chunk's blocks. ``allow_env``: the value of
    ``VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE`` where the run sets it (it
    matters from 0.10.1; ``None``: the version's default). V0 and V1 before 0.10 never do.
    """
    eng = v.choice("engine", engine, ("V0", "V1"))
    if allow_env is not None:
        v.boolean("allow_env", allow_env)
    if eng == "V0":
        return False
    ver = None if version is None else parse_version(version)
    if ver is not None and ver < (0, 10, 0):
        return False
    if ver is not None and ver < CHUNKED_HYBRID_OFF[0]:
        return True  # 0.10.0: before the variable existed
    if allow_env is not None:
        return allow_env
    return ver is None or not CHUNKED_HYBRID_OFF[0] <= ver < CHUNKED_HYBRID_OFF[1]


v.guard_module(globals())
