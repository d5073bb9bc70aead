"""Real vLLM start-up logs set against the planner, item by item.

A log names what vLLM measured on one GPU: the weights it loaded, the activation peak of
its profiling pass, the memory outside PyTorch, the CUDA graph estimate, the KV-cache pool
left over, the tokens that pool holds, the KV cache one request of ``max_model_len``
needs, and the resulting "maximum concurrency". :func:`check_vllm_run` predicts each from
the model and the run's settings (:func:`~gpulesson.planning.serving.kv_budget`,
:func:`~gpulesson.planning.serving.checkpoint_parts`,
:func:`~gpulesson.inference.kv_cache_bytes_per_token_per_gpu`,
:func:`request_kv_bytes`) and returns one :class:`~gpulesson.planning.logs.LogRow` per
item the log prints. Figures the log prints that are inputs of vLLM's arithmetic (the
device total, ``gpu_memory_utilization``, non-torch memory, the CUDA graph estimate) are
used as inputs, as :func:`~gpulesson.planning.logs.reconcile_vllm_log` does.

A run is a mapping (``tests/data/logs/vllm-logs.json`` holds twenty, each with its public
thread): ``model`` (a preset name) or ``hf_config`` (a config.json mapping), optional
``overrides`` of the config, ``gpu``, ``tp``, ``max_model_len``, ``weight_dtype``,
``kv_dtype``, ``gpu_memory_utilization``, ``max_num_batched_tokens``, ``max_num_seqs``,
``block_size``, ``stage_layers`` and ``stage_kv_cache_gib`` (the layers and the pool of
the pipeline stage that limits the cache), ``attention_dp`` (attention data-parallel:
every GPU keeps whole KV heads) and ``cuda_graph_profiled`` (vLLM 0.21 and later take the
CUDA graph estimate out of the pool).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

from gpulesson import _validate as v
from gpulesson import inference, memory, transformer

from ._adapt import model_view
from .logs import LogRow, parse_vllm_log
from .serving import NON_TORCH_BYTES, checkpoint_parts, kv_budget

__all__ = ["LogCheck", "check_vllm_run", "request_kv_bytes"]


def request_kv_bytes(cfg: transformer.TransformerConfig, *, max_model_len: int, tp: int = 1,
                     max_num_batched_tokens: int = 8192, block_size: int = 16,
                     bytes_per_element: float = 2) -> float:
    """KV-cache bytes vLLM V1 requires for one request of ``max_model_len`` on one GPU.

    Full-attention layers: ``ceil(max_model_len / block_size)`` blocks; sliding-window
    layers: ``ceil(min(window - 1 + max_num_batched_tokens, max_model_len) / block_size) +
    1`` blocks (a chunk of new tokens may straddle the window), each block ``block_size``
    tokens of the layer's keys and values (vLLM ``v1/kv_cache_interface.py``,
    ``FullAttentionSpec`` and ``SlidingWindowSpec``). gpt-oss-120b at 131,072 tokens with
    1,024 batched: 4.54 GiB, as vLLM issue #27508 prints.
    """
    per_token = inference.kv_cache_bytes_per_token_per_gpu(
        cfg, tp=tp, bytes_per_element=bytes_per_element)  # refuses a bad cfg by name
    length = v.positive_int("max_model_len", max_model_len)
    block = v.positive_int("block_size", block_size)
    batched = v.positive_int("max_num_batched_tokens", max_num_batched_tokens)
    layers = max(int(cfg.layers), 1)
    per_layer_block = per_token / layers * block
    full = math.ceil(length / block) * cfg.global_layers
    window = cfg.sliding_window or 0
    local = (math.ceil(min(window - 1 + batched, length) / block) + 1) * cfg.local_layers \
        if window else 0
    return float((full + local) * per_layer_block)


@dataclass(frozen=True)
class LogCheck:
    """One run's items: ``rows`` (measured beside predicted), in the order of vLLM's
    arithmetic."""

    run: str
    url: str
    rows: tuple[LogRow, ...]

    def row(self, term: str) -> LogRow | None:
        """The row named ``term`` (``None`` when the log does not print it)."""
        return next((r for r in self.rows if r.term == term), None)

    def error(self, term: str) -> float | None:
        """``measured / predicted - 1`` of ``term`` (``None`` without a measurement)."""
        found = self.row(term)
        return None if found is None else found.relative


def _config(run: Mapping[str, object]) -> transformer.TransformerConfig:
    if "hf_config" not in run and "model" not in run:
        raise ValueError("run: give 'model' (a preset name) or 'hf_config' (a config.json "
                         "mapping)")
    if "hf_config" in run:
        cfg = transformer.from_hf_config(run["hf_config"])  # type: ignore[arg-type]
    else:
        cfg = transformer.preset(str(run["model"]))
    overrides = run.get("overrides") or {}
    return replace(cfg, **overrides) if overrides else cfg  # type: ignore[arg-type]


def check_vllm_run(run: Mapping[str, object], text: str) -> LogCheck:
    """Predict every item of the vLLM log ``text`` from the run's settings ``run``."""
    if not isinstance(run, Mapping):
        raise TypeError(f"run must be a mapping of the run's settings, got "
                        f"{type(run).__name__}")
    got = parse_vllm_log(text)
    cfg = _config(run)
    mv = model_view(cfg)
    tp = v.positive_int("tp", run.get("tp", 1))
    length = v.positive_int("max_model_len", run.get("max_model_len") or
                            int(got.get("max_model_len", 0)))
    block = v.positive_int("block_size", run.get("block_size", 16))
    kv_dtype = str(run.get("kv_dtype", "bf16"))
    weight_dtype = str(run.get("weight_dtype", "bf16"))
    kv_b = memory.precision_bytes(kv_dtype)
    kv_tp = 1 if run.get("attention_dp") else tp
    stage = replace(cfg, layers=int(run["stage_layers"])) if run.get("stage_layers") else cfg
    per_token = inference.kv_cache_bytes_per_token_per_gpu(stage, tp=kv_tp,
                                                          bytes_per_element=kv_b)
    batched = int(run.get("max_num_batched_tokens") or 8192)
    rows: list[LogRow] = []

    weights = memory.checkpoint_bytes(checkpoint_parts(mv, weight_dtype)) / tp + \
        inference.rotary_cache_bytes(cfg)
    if "weights" in got:
        rows.append(LogRow("weights per GPU", got["weights"], weights, "bytes",
                           f"{weight_dtype} checkpoint / tp {tp} + the rotary table"))

    total = got.get("total_memory")
    gpu = run.get("gpu")
    util = got.get("utilization", run.get("gpu_memory_utilization", 0.9))
    pool = None
    if (total or gpu) and not run.get("stage_layers"):
        budget = kv_budget(mv, None if total else gpu, tp=tp, max_model_len=length,
                           kv_dtype=kv_dtype, weight_dtype=weight_dtype,
                           gpu_memory_utilization=float(util), usable_memory=total,
                           max_num_batched_tokens=run.get("max_num_batched_tokens"),
                           max_num_seqs=run.get("max_num_seqs"), block_size=block,
                           non_torch_memory=got.get("non_torch", NON_TORCH_BYTES))
        if "activation_peak" in got:
            rows.append(LogRow("activation peak", got["activation_peak"],
                               budget.activation_peak, "bytes",
                               "MLP of the profiling batch, or the sampler's logits"))
        pool = budget.kv_cache - got.get("cuda_graph", 0.0) * (
            1.0 if run.get("cuda_graph_profiled") else 0.0)
        if "kv_cache" in got:
            rows.append(LogRow("KV cache pool", got["kv_cache"], pool, "bytes",
                               "requested - weights - activations - non-torch (- graphs)"))
    measured_tokens = got.get("kv_cache_tokens", got["blocks"] * block
                              if "blocks" in got else None)
    log_pool = got.get("kv_cache")
    if run.get("stage_kv_cache_gib") is not None:  # the stage that limits the cache
        log_pool = v.nonneg_number("stage_kv_cache_gib", run["stage_kv_cache_gib"]) * 2**30
    if log_pool is not None and measured_tokens is not None:
        from_log = max(int(log_pool // (block * per_token)), 0) * block
        rows.append(LogRow("tokens of the log's pool", measured_tokens, float(from_log),
                           "tokens", f"the log's pool / {per_token:,.0f} bytes per token"))
    if "kv_needed" in got:
        need = request_kv_bytes(stage, max_model_len=length, tp=kv_tp,
                                max_num_batched_tokens=batched, block_size=block,
                                bytes_per_element=kv_b)
        rows.append(LogRow("KV of one request", got["kv_needed"], need, "bytes",
                           "full layers: max_model_len; windowed layers: window + batch"))
    if "max_concurrency" in got and pool is not None:
        tokens = max(int(pool // (block * per_token)), 0) * block
        rows.append(LogRow("maximum concurrency", got["max_concurrency"], tokens / length,
                           "x", f"predicted KV tokens / {length:,}"))
    return LogCheck(str(run.get("id", "")), str(run.get("url", "")), tuple(rows))


v.guard_module(globals())
