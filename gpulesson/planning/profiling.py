"""What vLLM's profiling run holds at its activation peak: the forward pass, the sampler and
PyTorch's cuBLAS workspace.

Before it sizes the KV cache, vLLM runs one forward pass over ``max_num_batched_tokens``
tokens and samples ``min(max_num_seqs, tokens)`` rows; the memory that pass takes at its
peak is held back from the cache. :func:`profile_peak_bytes` is the larger of the pass
(:func:`forward_peak_bytes`) and the sampler's moment (:func:`sampler_peak_bytes`), plus the
cuBLAS workspace (:func:`cublas_workspace_bytes`). :func:`gpulesson.planning.serving.
kv_budget` subtracts it; ``gpulesson.planning.serving`` re-exports every name here.

Taught in: ``notebooks/planning_dashboard.ipynb`` (serving).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from gpulesson import _validate as v

from ._adapt import gpu_view, model_view

__all__ = ["CUBLAS_WORKSPACE_BYTES", "CUBLAS_WORKSPACE_DEFAULT", "SAMPLER_BYTES_PER_LOGIT",
           "cublas_workspace_bytes", "forward_peak_bytes", "profile_peak_bytes",
           "sampler_moment_bytes", "sampler_peak_bytes"]

#: Bytes the profiling run's sampler holds per logit (``rows x vocab``) at its peak, counted
#: from the code, in units of one FP32 logit (4 bytes): the model's BF16 logits (0.5) and
#: their FP32 copy (1) stay alive while the top-k/top-p step sorts them (vLLM V0
#: ``model_executor/layers/sampler.py`` ``_apply_top_k_top_p``; V1
#: ``v1/sample/ops/topk_topp_sampler.py`` ``apply_top_k_top_p``; both profile with top-k and
#: top-p set), and the sort returns the sorted values (1) and their int64 positions (2).
#: PyTorch sorts 128 or more rows with cub's segmented radix sort
#: (``aten/src/ATen/native/cuda/SortStable.cu``, ``segmented_sort_pairs``), which first
#: writes the int64 positions 0..vocab-1 of every row (2) and, not sorting in place, keeps a
#: second buffer of keys (1) and of positions (2): 0.5 + 1 + 1 + 2 + 2 + 1 + 2 = 9.5 logits
#: = 38 bytes. Later steps (softmax, cumulative sum, masks, the re-sorted logits) hold at
#: most 8 units. Checked on logs whose peak is the sampler's: Llama 3 8B, 256 rows of
#: 128,256 logits, 1.22 GiB against vLLM's 1.26 (PR #10511); Qwen3-235B, 1,024 rows of
#: 151,936, 5.57 GiB against 5.62 (PR #21429).
SAMPLER_BYTES_PER_LOGIT = 38


def sampler_peak_bytes(rows: int, vocab: int) -> float:
    """Bytes the sampler of vLLM's profiling run holds for ``rows`` rows of ``vocab``
    logits: ``rows * vocab *`` :data:`SAMPLER_BYTES_PER_LOGIT`."""
    return float(v.positive_int("rows", rows) * v.positive_int("vocab", vocab)
                 * SAMPLER_BYTES_PER_LOGIT)


#: PyTorch's cuBLAS workspace by GPU architecture (bytes): the first matrix product on a
#: stream allocates it through the caching allocator and keeps it, so vLLM's profiling run
#: counts it in its activation peak. ``aten/src/ATen/cuda/CublasHandlePool.cpp``
#: (``parseChosenWorkspaceSize``): 32 MiB (":4096:8") on Hopper, and on Blackwell in later
#: releases; elsewhere the default ":4096:2:16:8", 8 MiB + 128 KiB
#: (:data:`CUBLAS_WORKSPACE_DEFAULT`).
CUBLAS_WORKSPACE_BYTES: Mapping[str, int] = MappingProxyType({
    "Hopper": 4096 * 8 * 1024, "Blackwell": 4096 * 8 * 1024})
#: The cuBLAS workspace of every other architecture (":4096:2:16:8").
CUBLAS_WORKSPACE_DEFAULT = 4096 * 2 * 1024 + 16 * 8 * 1024


def cublas_workspace_bytes(gpu: object | None = None) -> float:
    """PyTorch's cuBLAS workspace on ``gpu`` (:data:`CUBLAS_WORKSPACE_BYTES` by its
    architecture); :data:`CUBLAS_WORKSPACE_DEFAULT` for other architectures and without a
    GPU."""
    if gpu is None:
        return float(CUBLAS_WORKSPACE_DEFAULT)
    arch = gpu_view(gpu).spec.architecture
    return float(CUBLAS_WORKSPACE_BYTES.get(arch, CUBLAS_WORKSPACE_DEFAULT))


def forward_peak_bytes(model: object, tokens: int, *, tp: int = 1,
                       moe_tp: int | None = None) -> float:
    """Peak activation bytes of one forward pass over ``tokens`` tokens on one of ``tp``
    GPUs: the MLP (dense) or the fused MoE workspace, beside three hidden-width tensors
    (module docstring). Values are 2 bytes (BF16). ``moe_tp``: the routed experts'
    tensor-parallel size where it differs from ``tp`` (1 with expert parallelism,
    :mod:`~gpulesson.planning.moe_serving`)."""
    mv = model_view(model)
    t = v.positive_int("tp", tp)
    m = t if moe_tp is None else v.positive_int("moe_tp", moe_tp)
    n = v.positive_int("tokens", tokens)
    cfg = mv.cfg
    h = cfg.hidden
    if not mv.is_moe:
        up = 3 if cfg.gated_mlp else 2  # gate_up and its activated half, or fc1 and its
        return float(n * (up * cfg.ffn / t + 3 * h) * 2)  # activation
    inter = cfg.expert_ffn / m
    k = mv.experts_per_token
    per_token = k * max(2 * inter, h) + k * inter + 3 * h
    shared = cfg.shared_experts * (cfg.shared_expert_ffn or 0) / t
    return float(n * (per_token + 3 * shared) * 2)


def sampler_moment_bytes(model: object, tokens: int, rows: int) -> float:
    """The sampler's moment: its sort (:func:`sampler_peak_bytes`) beside the pass's
    ``tokens x hidden`` BF16 output and the ``rows x hidden`` copy of the sampled rows the
    logits are computed from (V1 ``gpu_model_runner.py`` ``_dummy_run`` returns
    ``hidden_states[logit_indices]``; V0 ``LogitsProcessor`` ``_prune_hidden_states``,
    ``index_select``)."""
    mv = model_view(model)
    n = v.positive_int("tokens", tokens)
    r = v.positive_int("rows", rows)
    return sampler_peak_bytes(r, mv.cfg.vocab) + (n + r) * mv.hidden * 2


def profile_peak_bytes(model: object, tokens: int, seqs: int, *, tp: int = 1,
                       workspace: float = 0.0) -> float:
    """The activation peak vLLM's profiling run measures: the larger of the forward pass
    (:func:`forward_peak_bytes`) and the sampler on ``min(seqs, tokens)`` rows
    (:func:`sampler_peak_bytes`, beside the pass's ``tokens x hidden`` BF16 output and the
    ``rows x hidden`` sampled rows), plus ``workspace``, the cuBLAS workspace the pass
    allocates (:func:`cublas_workspace_bytes`)."""
    mv = model_view(model)
    rows = min(v.positive_int("seqs", seqs), v.positive_int("tokens", tokens))
    return max(forward_peak_bytes(mv, tokens, tp=tp), sampler_moment_bytes(mv, tokens, rows)) + \
        v.nonneg_number("workspace", workspace)


v.guard_module(globals())
