"""Plan serving: the KV cache vLLM will allocate, the speed it gives, and the GPUs a traffic needs.

KV budget (vLLM's start-up arithmetic, ``vllm/worker`` memory profiling)::

    usable memory x gpu_memory_utilization
      - weights (per GPU: / tp; plus the rotary cos/sin table every GPU keeps)
      - activation peak of the profiling forward pass (max_num_batched_tokens tokens)
      - non-torch memory (CUDA context, cuBLAS and NCCL workspaces)
    = KV cache memory  ->  blocks of block_size tokens  ->  KV cache tokens

``max_concurrency`` is vLLM's own "Maximum concurrency for N tokens per request". Without
sliding windows it is KV cache tokens / ``max_model_len``. With them (gpt-oss, Gemma 2 and
3), vLLM V1's Hybrid KV Cache Manager (0.10 and later, :func:`kv_cache_groups`) splits the
layers into groups of ``g`` layers of one attention type that share one page size, cuts
the pool into blocks of ``g`` layers' pages, and gives a sliding-window group only the blocks
of its window (``window - 1 + max_num_batched_tokens`` tokens, plus one): the concurrency
is blocks / the blocks one request of ``max_model_len`` takes, about twice the full-length
count for gpt-oss, whose layers alternate full and 128-token windows. vLLM before 0.21
prints the pool as blocks / groups x block_size tokens, the same figure as a full-length
count; 0.21 and later print concurrency x ``max_model_len`` (vLLM issue #43308).

The activation peak is the larger of two moments of vLLM's profiling run (V0
``worker/model_runner.py`` ``profile_run``; V1 ``v1/worker/gpu_model_runner.py``
``profile_run``: one forward pass of
``max_num_batched_tokens`` dummy tokens, then the sampler on ``min(max_num_seqs, tokens)``
rows of logits), :func:`profile_peak_bytes`:

- the forward pass (:func:`forward_peak_bytes`): a dense MLP holds its ``gate_up`` output
  (``2*ffn/tp`` values per token), the activated half (``ffn/tp``) and three hidden-width
  tensors (the residual, the normalised input, the down projection's output):
  ``T * (3*ffn/tp + 3*h) * 2`` bytes for ``T`` batched tokens (an ungated MLP: its
  ``fc1`` output and the activation, ``2*ffn/tp``); on Llama 3.1 8B this is
  108 KiB per token, the slope between two of vLLM's own logs (issue #10517). A MoE layer
  (vLLM's ``fused_moe``) holds, per token, ``top_k`` rows of its gate_up/down workspace
  (``max(2*I/tp, h)`` values, one buffer shared by both products), ``top_k`` rows of the
  activated half (``I/tp``) and the same three hidden-width tensors;
- the sampler (:func:`sampler_peak_bytes`): the top-k/top-p sort over the vocabulary holds
  :data:`SAMPLER_BYTES_PER_LOGIT` bytes per logit, beside the forward pass's ``T * h``
  output and the copy of the sampled rows' hidden states the logits are computed from.

Either moment also holds PyTorch's cuBLAS workspace (:func:`cublas_workspace_bytes`), which
the pass's first matrix product allocates and keeps.

Decode step (the minimum-step-time model)::

    t_step = max(2 * N_active * (B + P) / (peak * eff * tp), weight bytes / (tp * HBM bandwidth))
             + max(B * context * KV bytes per token / (tp * HBM bandwidth),
                   B * A_decode / (peak * eff * tp))
             + P * A_prefill / (peak * eff * tp)
             + tensor-parallel all-reduces (2 per layer of (B + P) * h values)

the matrix products against the weight reads (``peak * eff`` at the precision vLLM runs
them in, :func:`serving_matmul_dtype`: FP8 for an FP8 checkpoint on FP8 tensor cores), and
attention as kernels of their own on top (at the BF16 rate):
the decode attention reads the cache or does its FLOPs ``A_decode`` a sequence, whichever is
slower (:func:`gpulesson.inference.decode_attention_flops`: latent attention absorbed, as vLLM
and SGLang decode it, about 242 FLOPs a BF16 byte for DeepSeek-V3's 128 heads on one GPU,
past the ridge, but 30 on tp = 8, where every GPU reads the whole latent for 16 heads;
grouped-query attention does its group size, 4 to 16), and the ``P``
prompt tokens of the step their share ``A_prefill`` of their prompt's attention
(:meth:`~gpulesson.planning._adapt.ModelView.prefill_attention_flops`: up-projected, but
absorbed for DeepSeek Sparse Attention past its top-k). With a
traffic of ``qps`` requests/s, Little's law gives the sequences in flight on average,
``B = qps * (ttft + output_tokens * t_step)``; a request that decodes shares its steps with
itself and, on average, ``B`` others (requests arriving at random see the time average), so
its step is that of ``1 + B`` sequences, and the prefill tokens arriving during a step join
it (chunked prefill); the step time is the fixed point of both. Time to first token is the
prefill of one prompt plus the step it waits for. Without a traffic the replica runs as many
sequences as its cache and ``max_num_seqs`` hold, or, with latency limits, the most that
still meet them (vLLM's ``max_num_seqs`` lowered to that).

What the weights take per GPU: :mod:`~gpulesson.planning.checkpoints`. Expert parallelism and
data-parallel attention for MoE models (``dp``, ``expert_parallel``):
:mod:`~gpulesson.planning.moe_serving`.

Taught in: ``notebooks/planning_dashboard.ipynb`` (serving) and
``notebooks/inference_and_kv_cache.ipynb`` (the KV cache).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from gpulesson import _validate as v
from gpulesson import cost, distributed, inference, units

from ._adapt import GPUView, ModelView, gpu_view, model_view
from .checkpoints import (
    FP32_ROTARY_TABLES,
    MIXED_CHECKPOINTS,
    checkpoint_parts,
    expert_bias_params,
    expert_padding_bytes,
    gpu_weight_bytes,
    mxfp4_triton_extra_bytes,
    rotary_table_bytes,
    routed_bytes,
    shared_expert_bytes,
    weight_bytes,
)
from .chunked import vllm_chunked_hybrid
from .hybrid import refuse_recurrent
from .layout import divisors
from .moe_serving import (
    PCIE_SERVER_GPUS,
    MoEParallel,
    check_domains,
    decode_read_bytes,
    dispatch_time,
    group_link_bandwidth,
    moe_parallel,
    moe_problems,
)
from .non_torch import NON_TORCH_BYTES, parse_version, vllm_non_torch_bytes
from .products import products_rate, serving_matmul_dtype
from .profiling import (
    CUBLAS_WORKSPACE_BYTES,
    CUBLAS_WORKSPACE_DEFAULT,
    SAMPLER_BYTES_PER_LOGIT,
    cublas_workspace_bytes,
    forward_peak_bytes,
    profile_peak_bytes,
    sampler_moment_bytes,
    sampler_peak_bytes,
)
from .sparse import has_indexer, vllm_block_size, vllm_kv_bytes_per_token, vllm_kv_dtype

__all__ = ["CUBLAS_WORKSPACE_DEFAULT", "DECODE_BANDWIDTH_EFFICIENCY", "DECODE_MEASUREMENTS",
           "MIXED_CHECKPOINTS",
           "SAMPLER_BYTES_PER_LOGIT", "CUBLAS_WORKSPACE_BYTES", "DecodeMeasurement",
           "KVGroups", "ServingPlan", "checkpoint_parts", "cublas_workspace_bytes",
           "decode_step_time", "expert_padding_bytes", "expert_bias_params",
           "FP32_ROTARY_TABLES", "fit_decode_efficiency",
           "forward_peak_bytes", "implied_bandwidth_efficiency", "kv_budget",
           "kv_cache_groups", "pool_blocks", "vllm_kv_rules",
           "mxfp4_triton_extra_bytes", "plan_serving", "rotary_table_bytes",
           "serving_matmul_dtype",
           "profile_peak_bytes", "sampler_peak_bytes"]

GIB = 2**30
#: vLLM V1's ``vllm serve`` defaults: (max_num_batched_tokens, max_num_seqs) for GPUs with
#: at least 70 GiB, and for smaller ones (``vllm/engine/arg_utils.py``; the memory rule
#: since PR #17073, April 2025). The A100 takes the smaller ones whatever its memory:
#: PR #17885 (May 2025) found its throughput better with them (Llama 70B on two A100s,
#: +36 %), and vLLM's own test (``tests/engine/test_arg_utils.py``,
#: ``test_defaults_with_usage_context``) checks ``memory >= 70 GiB and "a100" not in
#: the device name``.
_V1_DEFAULTS = ((8192, 1024), (2048, 256))
#: GPUs (lower-case name fragments) that keep vLLM's smaller defaults however much memory.
_SMALL_DEFAULT_GPUS = ("a100",)


def _v1_defaults(total: float, gpu: object | None) -> tuple[int, int]:
    """vLLM V1's ``vllm serve`` (max_num_batched_tokens, max_num_seqs) on a device of
    ``total`` bytes (:data:`_V1_DEFAULTS`): the larger ones from 70 GiB, except on an
    A100."""
    name = "" if gpu is None else gpu_view(gpu).name.lower()
    small = total < 70 * GIB or any(part in name for part in _SMALL_DEFAULT_GPUS)
    return _V1_DEFAULTS[1 if small else 0]


def _both_bytes(n: float) -> str:
    """Bytes in decimal GB (as a GPU's memory is entered) and in GiB (as vLLM logs them)."""
    return f"{units.format_bytes(n, digits=2)} ({units.format_bytes(n, binary=True, digits=2)})"


@dataclass(frozen=True)
class KVBudget:
    """vLLM's start-up memory arithmetic on one GPU (bytes); ``kv_cache`` may be negative."""

    requested: float
    weights: float
    activation_peak: float
    non_torch: float
    kv_cache: float
    kv_bytes_per_token: float
    blocks: int
    kv_cache_tokens: int
    max_concurrency: float
    forward_peak: float = 0.0
    sampler_peak: float = 0.0
    workspace: float = 0.0
    groups: KVGroups | None = None
    block_size: int = 16

    def request_blocks(self, tokens: int) -> int:
        """Blocks one request of ``tokens`` tokens takes (:meth:`KVGroups.request_blocks`;
        without groups, a full-length count of ``block_size`` tokens a block)."""
        n = v.positive_int("tokens", tokens)
        if self.groups is None:
            return -(-n // self.block_size)
        return self.groups.request_blocks(n)

    def sequences(self, tokens: int) -> float:
        """Requests of ``tokens`` tokens the pool holds at once: blocks / request blocks
        under the hybrid manager, else KV cache tokens / ``tokens``."""
        if self.groups is None:
            return self.kv_cache_tokens / v.positive_int("tokens", tokens)
        return self.blocks / self.request_blocks(tokens)


@dataclass(frozen=True)
class KVGroups:
    """The KV cache groups of vLLM V1's Hybrid KV Cache Manager
    (``vllm/v1/core/kv_cache_utils.py``, ``_get_kv_cache_groups_uniform_page_size``):
    ``full`` groups of full-attention layers and ``local`` groups of sliding-window layers,
    ``layers`` layers each (the last group of a type padded), so every group has one page
    size; a block is one page of each of ``layers`` layers. ``window_tokens`` is what a
    sliding-window layer must keep for one request, ``window - 1 + max_num_batched_tokens``
    (``SlidingWindowSpec.max_memory_usage_bytes``: a chunk of new tokens may straddle the
    window). ``chunked``: the local groups are Llama 4's chunked layers, which keep
    ``chunk + max_num_batched_tokens`` tokens and no extra block
    (``ChunkedLocalAttentionSpec``; :mod:`~gpulesson.planning.chunked`)."""

    full: int
    local: int
    layers: int
    block_size: int
    window_tokens: int = 0
    chunked: bool = False

    @property
    def count(self) -> int:
        """Groups in all."""
        return self.full + self.local

    def request_blocks(self, tokens: int) -> int:
        """Blocks one request of ``tokens`` tokens takes: ``ceil(tokens / block)`` in each
        full group, ``ceil(min(window_tokens, tokens) / block) + 1`` in each sliding-window
        group (vLLM's ``get_max_concurrency_for_kv_cache_config``)."""
        n, b = v.positive_int("tokens", tokens), self.block_size
        extra = 0 if self.chunked else 1
        local = -(-min(self.window_tokens, n) // b) + extra if self.local else 0
        return self.full * -(-n // b) + self.local * local


def kv_cache_groups(model: object, *, block_size: int = 16,
                    max_num_batched_tokens: int = 8192) -> KVGroups:
    """How vLLM V1's Hybrid KV Cache Manager groups ``model``'s layers (:class:`KVGroups`).

    One group of every layer without sliding windows, or when every layer is local. With
    both kinds, the group size is the smaller count of layers, or the larger one when it is
    below 1.5 times the smaller (vLLM's heuristic against padding); each kind fills
    ``ceil(count / size)`` groups. gpt-oss-120b (18 full, 18 sliding layers): 2 groups of
    18; Gemma 3 27B (10 full, 52 sliding): 1 + 6 groups of 10, the last padded by 8 layers
    (the design note ``docs/design/hybrid_kv_cache_manager.md``). Chunked layers group
    the same way: Llama 4 (12 full, 36 chunked): 1 + 3 groups of 12 (vLLM PR #21761).
    A hybrid model (linear-attention layers) is refused (:mod:`~gpulesson.planning.hybrid`).
    """
    cfg = model_view(model).cfg
    refuse_recurrent(cfg, "kv_cache_groups")
    block = v.positive_int("block_size", block_size)
    batched = v.positive_int("max_num_batched_tokens", max_num_batched_tokens)
    layers = max(int(cfg.layers), 1)
    full, local = cfg.global_layers, cfg.local_layers + cfg.chunked_layers
    chunked = bool(cfg.chunked_layers)
    window = (cfg.attention_chunk if chunked else cfg.sliding_window - 1) + batched
    if not local:
        return KVGroups(1, 0, layers, block)
    if not full:
        return KVGroups(0, 1, layers, block, window, chunked)
    size = min(full, local)
    if max(full, local) < 1.5 * size:
        size = max(full, local)
    return KVGroups(-(-full // size), -(-local // size), size, block, window, chunked)


#: vLLM V1 versions from which the Hybrid KV Cache Manager keeps only a window's blocks in
#: sliding-window layers (0.10.0; the design note above), and from which "GPU KV cache
#: size" is printed as concurrency x max_model_len (0.21.0: vLLM issue #43308, where
#: Gemma 4's logged pool grew about ten times from 0.20 to 0.21 at the same GiB).
HYBRID_KV_FROM = (0, 10, 0)
TOKENS_FROM_CONCURRENCY_FROM = (0, 21, 0)


def vllm_kv_rules(engine: str = "V1", version: str | None = None) -> tuple[bool, bool]:
    """``(hybrid, tokens_from_concurrency)`` for a vLLM ``engine`` (``"V0"`` or ``"V1"``)
    and ``version`` (``None``: the newest). V0 and V1 before 0.10 keep every layer at full
    length and print the pool as blocks x block_size tokens. A model with chunked layers
    (Llama 4) also needs :func:`~gpulesson.planning.chunked.vllm_chunked_hybrid`."""
    eng = v.choice("engine", engine, ("V0", "V1"))
    if eng == "V0":
        return False, False
    if version is None:
        return True, True
    ver = parse_version(version)
    return ver >= HYBRID_KV_FROM, ver >= TOKENS_FROM_CONCURRENCY_FROM


def kv_budget(model: object, gpu: object | None = None, *, tp: int = 1, max_model_len: int,
              kv_dtype: str = "bf16", weight_dtype: str = "bf16",
              gpu_memory_utilization: float = 0.9, usable_memory: float | None = None,
              max_num_batched_tokens: int | None = None, max_num_seqs: int | None = None,
              block_size: int = 16, non_torch_memory: float | None = None,
              extra_weight_bytes: float = 0.0, workspace: float | None = None,
              engine: str = "V1", vllm_version: str | None = None, dp: int = 1,
              expert_parallel: bool = False) -> KVBudget:
    """The KV cache vLLM allocates per GPU, term by term (module docstring).

    ``usable_memory`` is what CUDA reports as the device's total (vLLM's
    ``total_gpu_memory``); by default the GPU's usable memory. ``max_num_batched_tokens``
    and ``max_num_seqs`` default to vLLM V1's ``vllm serve`` values (8,192 and 1,024 on GPUs
    of 70 GiB or more but an A100, else 2,048 and 256). ``extra_weight_bytes`` are weight
    bytes per GPU the checkpoint does not hold (:func:`expert_padding_bytes`).
    ``workspace`` is the cuBLAS workspace in the activation peak; by default
    :func:`cublas_workspace_bytes` of ``gpu``.
    ``engine`` and ``vllm_version`` choose the block accounting (:func:`vllm_kv_rules`; by
    default the newest V1: sliding-window layers keep only their window's blocks, the pool
    is printed as concurrency x ``max_model_len``; Llama 4's chunked layers keep a chunk
    in the versions :func:`~gpulesson.planning.chunked.vllm_chunked_hybrid` names);
    ``groups`` of the result is ``None`` where every layer is kept at full length. ``dp``
    and ``expert_parallel``: one of ``dp`` data-parallel engines of ``tp`` GPUs, the MoE
    layers over all ``tp x dp``
    (:mod:`~gpulesson.planning.moe_serving`); the result is per engine, as vLLM prints it.
    A model with DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5) is counted as vLLM pages
    it (:mod:`~gpulesson.planning.sparse`): blocks of 64 tokens whatever ``block_size``,
    an FP8 latent in the 656-byte ``fp8_ds_mla`` record and each layer's indexer key.
    ``non_torch_memory`` (bytes per GPU outside PyTorch) defaults to what a current vLLM
    holds on each GPU of ``gpu`` in a ``tp``-GPU group
    (:func:`~gpulesson.planning.non_torch.vllm_non_torch_bytes`), without a ``gpu`` to
    :data:`~gpulesson.planning.non_torch.NON_TORCH_BYTES`.
    """
    mv = model_view(model)
    refuse_recurrent(mv.cfg, "kv_budget")
    t = v.positive_int("tp", tp)
    par = moe_parallel(mv, tp=t, dp=dp, expert_parallel=expert_parallel)
    length = v.positive_int("max_model_len", max_model_len)
    util = v.fraction("gpu_memory_utilization", gpu_memory_utilization, allow_zero=False)
    if usable_memory is None:
        if gpu is None:
            raise ValueError("usable_memory: give a gpu or the device memory in bytes")
        total = gpu_view(gpu).usable_memory
    else:
        total = v.positive_number("usable_memory", usable_memory)
    big = _v1_defaults(total, gpu)
    tokens = big[0] if max_num_batched_tokens is None else v.positive_int(
        "max_num_batched_tokens", max_num_batched_tokens)
    seqs = big[1] if max_num_seqs is None else v.positive_int("max_num_seqs", max_num_seqs)
    block = vllm_block_size(mv, block_size)
    if has_indexer(mv) and v.choice("engine", engine, ("V0", "V1")) == "V0":
        raise ValueError(f"engine: vLLM runs {mv.name}'s sparse attention in V1 only")
    weights = (gpu_weight_bytes(mv, weight_dtype, par) + rotary_table_bytes(mv)
               + v.nonneg_number("extra_weight_bytes", extra_weight_bytes))
    forward = forward_peak_bytes(mv, tokens, tp=t, moe_tp=par.gpus // par.ep)
    sampler = sampler_moment_bytes(mv, tokens, min(seqs, tokens))
    blas = cublas_workspace_bytes(gpu) if workspace is None else v.nonneg_number(
        "workspace", workspace)
    act = max(forward, sampler) + blas
    if non_torch_memory is not None:
        other = v.nonneg_number("non_torch_memory", non_torch_memory)
    else:
        other = NON_TORCH_BYTES if gpu is None else vllm_non_torch_bytes(gpu, t)
    requested = total * util
    kv = requested - weights - act - other
    per_token = vllm_kv_bytes_per_token(mv, tp=t, kv_dtype=kv_dtype)
    hybrid, from_concurrency = vllm_kv_rules(engine, vllm_version)
    hybrid = hybrid and (not mv.cfg.attention_chunk or vllm_chunked_hybrid(engine, vllm_version))
    groups = kv_cache_groups(mv, block_size=block, max_num_batched_tokens=tokens) \
        if hybrid else None
    blocks, kv_tokens, concurrency = pool_blocks(kv, per_token, mv.cfg.layers, length, groups,
                                                 block, from_concurrency)
    return KVBudget(requested=requested, weights=weights, activation_peak=act, non_torch=other,
                    kv_cache=kv, kv_bytes_per_token=per_token, blocks=blocks,
                    kv_cache_tokens=kv_tokens, max_concurrency=concurrency,
                    forward_peak=forward, sampler_peak=sampler, workspace=blas,
                    groups=groups, block_size=block)


def pool_blocks(pool: float, per_token: float, layers: int, max_model_len: int,
                groups: KVGroups | None, block_size: int = 16,
                tokens_from_concurrency: bool = False) -> tuple[int, int, float]:
    """``(blocks, printed tokens, maximum concurrency)`` of a KV-cache pool of ``pool``
    bytes, ``per_token`` bytes per token over all ``layers`` layers, as vLLM counts them.

    Full length (``groups`` ``None``): ``pool // (block x per_token)`` blocks, blocks x
    block tokens, tokens / ``max_model_len``. Hybrid manager (``groups``): a block is one
    page of ``groups.layers`` layers, so ``pool // (block x per_token / layers x
    groups.layers)`` blocks; tokens ``blocks // groups.count x block`` (before 0.21) or
    ``int(concurrency x max_model_len)`` (``tokens_from_concurrency``); concurrency
    blocks / :meth:`KVGroups.request_blocks` of ``max_model_len`` (``kv_cache_utils.py``,
    ``get_num_blocks``, ``_report_kv_cache_config``).
    """
    block = v.positive_int("block_size", block_size)
    length = v.positive_int("max_model_len", max_model_len)
    if groups is None:
        blocks = max(int(pool // (block * per_token)), 0)
        return blocks, blocks * block, blocks * block / length
    page = block * per_token / max(int(layers), 1) * groups.layers
    blocks = max(int(pool // page), 0)
    concurrency = blocks / groups.request_blocks(length)
    tokens = int(concurrency * length) if tokens_from_concurrency else \
        blocks // groups.count * block
    return blocks, tokens, concurrency


@dataclass(frozen=True)
class ServingPlan:
    """A serving plan: ``tp`` GPUs per replica, ``replicas`` of them.

    ``kv_cache_tokens`` and ``max_concurrency`` per replica as vLLM prints them; ``ttft``
    and ``tpot`` in seconds under the traffic; ``throughput`` output tokens/s of all replicas;
    ``batch`` sequences in flight per replica; ``cost_per_million_tokens`` USD per million
    output tokens at that throughput (``None`` without a price). ``budget`` is the KV
    arithmetic; ``problems`` name the input at fault. With ``dp`` data-parallel engines a
    replica is ``tp x dp`` GPUs and ``kv_cache_tokens``, ``max_concurrency`` are each
    engine's (vLLM prints one line per engine).
    """

    feasible: bool
    problems: tuple[str, ...]
    tp: int
    replicas: int
    gpus: int
    kv_cache_tokens: int
    max_concurrency: float
    batch: float
    ttft: float
    tpot: float
    throughput: float
    cost_per_million_tokens: float | None
    budget: KVBudget
    model: str
    gpu: str
    reason: str = ""
    notes: tuple[str, ...] = field(default=())
    dp: int = 1
    expert_parallel: bool = False


@dataclass(frozen=True)
class DecodeMeasurement:
    """A published time per output token of one sequence (batch 1), seconds; ``context`` the
    mean tokens in its KV cache during decode; ``assumed`` what the source does not state."""

    source: str
    model: str
    gpu: str
    tp: int
    weight_dtype: str
    context: int
    tpot: float
    assumed: str = ""


#: Single-sequence decode times of optimised engines (CUDA graphs on), all on H100 SXM.
DECODE_MEASUREMENTS: tuple[DecodeMeasurement, ...] = (
    DecodeMeasurement("vLLM PR #10933 (youkaichao, 2024-12-05): benchmark_latency.py "
                      "--model meta-llama/Meta-Llama-3-8B --batch-size 1 (32 tokens in, 128 "
                      "out), main branch: 0.9704 s", "llama-3-8b", "H100 SXM", 1, "bf16", 96,
                      0.9704 / 128, "GPU not printed: H100, as the author's measurements of "
                      "the same week (PR #11078); an A100 could not go under its 7.9 ms floor"),
    DecodeMeasurement("vLLM PR #11000 (youkaichao, 2024-12-09): the same benchmark on the V1 "
                      "engine: 0.9447 s", "llama-3-8b", "H100 SXM", 1, "bf16", 96,
                      0.9447 / 128, "GPU not printed: as PR #10933"),
    DecodeMeasurement("SGLang PR #1401 (merrymercy, 2024-09-12): bench_latency "
                      "Meta-Llama-3-8B --batch-size 1 --input 128 --output 8, FlashInfer with "
                      "CUDA graphs: decode median 7.35 ms", "llama-3-8b", "H100 SXM", 1,
                      "bf16", 132, 7.35e-3, "GPU not printed: H100 assumed (an A100 could not "
                      "go under its 7.9 ms floor)"),
    DecodeMeasurement("NVIDIA NIM LLM benchmarking 1.0.0, Performance: Llama-3.3-70B-Instruct "
                      "NIM 1.8.0, 2 x H100 80G, fp8 TP2, 5,000 tokens in / 500 out, "
                      "concurrency 1: ITL 18.58 ms", "llama-3-70b", "H100 SXM", 2, "fp8",
                      5250, 18.58e-3, "Llama 3.3 70B has the llama-3-70b preset's shape"),
    DecodeMeasurement("the same page: 500 tokens in / 2,000 out, concurrency 1: ITL 18.91 ms",
                      "llama-3-70b", "H100 SXM", 2, "fp8", 1500, 18.91e-3,
                      "Llama 3.3 70B has the llama-3-70b preset's shape"),
)


def decode_step_time(model: object, gpu: object, *, tp: int = 1, batch: float = 1.0,
                     context: int = 1024, weight_dtype: str = "bf16", kv_dtype: str = "bf16",
                     bandwidth_efficiency: float = 1.0) -> float:
    """Seconds of one decode step of ``batch`` sequences holding ``context`` tokens each, on
    ``tp`` GPUs (module docstring): the weights (or the matrix products, if slower), the
    attention (its KV-cache reads or, if slower, its FLOPs: latent attention absorbed) with
    the reads at ``bandwidth_efficiency`` of the datasheet HBM bandwidth, plus the
    tensor-parallel all-reduces. The cache is counted as :func:`kv_budget` pages it
    (:func:`~gpulesson.planning.sparse.vllm_kv_bytes_per_token`: DeepSeek-V3.2's FP8
    latent in the 656-byte ``fp8_ds_mla`` record)."""
    mv = model_view(model)
    refuse_recurrent(mv.cfg, "decode_step_time")
    gv = gpu_view(gpu)
    t = v.positive_int("tp", tp)
    eff = v.fraction("bandwidth_efficiency", bandwidth_efficiency, allow_zero=False)
    # the cache as vLLM pages it, as kv_budget and plan_serving count it (a sparse-attention
    # model's FP8 latent in the 656-byte fp8_ds_mla record)
    per_token = vllm_kv_bytes_per_token(mv, tp=t, kv_dtype=kv_dtype)
    speed = _Speed(mv, gv, t, weight_dtype, per_token, v.nonneg_int("context", context), eff)
    return speed.step(v.positive_number("batch", batch))


def implied_bandwidth_efficiency(m: DecodeMeasurement) -> float:
    """The HBM efficiency at which :func:`decode_step_time` equals the measurement: the
    bytes a step reads over the datasheet bandwidth, divided by the measured time less the
    all-reduces (which do not read HBM)."""
    ideal = decode_step_time(m.model, m.gpu, tp=m.tp, context=m.context,
                             weight_dtype=m.weight_dtype)
    comm = _Speed(model_view(m.model), gpu_view(m.gpu), m.tp, m.weight_dtype, 0.0, 0).comm(1.0)
    if m.tpot <= comm:
        raise ValueError(f"tpot: {m.tpot:g} s is not more than the all-reduces ({comm:g} s)")
    return (ideal - comm) / (m.tpot - comm)


def fit_decode_efficiency(measurements: tuple[DecodeMeasurement, ...] | list[DecodeMeasurement]
                          ) -> float:
    """The median of the measurements' implied efficiencies
    (:func:`implied_bandwidth_efficiency`)."""
    if not measurements:
        raise ValueError("measurements: give at least one DecodeMeasurement")
    effs = sorted(implied_bandwidth_efficiency(m) for m in measurements)
    mid = len(effs) // 2
    return effs[mid] if len(effs) % 2 else (effs[mid - 1] + effs[mid]) / 2


def _server_gpus(gv: GPUView) -> int:
    """GPUs a replica's tensor parallelism may span without the network: the NVLink
    domain, or a server of :data:`PCIE_SERVER_GPUS` cards that have none."""
    return PCIE_SERVER_GPUS if gv.domain <= 1 else gv.domain


class _Speed:
    """Step and prefill times of one replica of ``tp`` GPUs (``tp x dp`` with ``par``)."""

    def __init__(self, mv: ModelView, gv: GPUView, tp: int, weight_dtype: str, per_token: float,
                 context: float, bandwidth_efficiency: float = 1.0,
                 par: MoEParallel | None = None, *, prompt: int | None = None) -> None:
        self.mv, self.tp, self.gv = mv, tp, gv
        self.par = par if par is not None and (par.dp > 1 or par.expert_parallel) else None
        gpus = tp if self.par is None else self.par.gpus
        # attention (its own kernels, BF16) at the BF16 rate; the weights' matrix products
        # at the rate of the precision vLLM runs them in (serving_matmul_dtype), the
        # checkpoint's 16-bit parts (embedding, output layer, fp8_ffn's attention) at BF16
        self.rate = gv.peak("bf16") * gv.matmul_efficiency * gpus
        self.gemm_rate = products_rate(mv, gv, weight_dtype, gpus)
        self.bw = gv.bandwidth * gpus * bandwidth_efficiency
        self.weights = weight_bytes(mv, weight_dtype)
        self.routed = routed_bytes(mv, weight_dtype) if self.par else 0.0
        self.shared = shared_expert_bytes(mv, weight_dtype) if self.par else 0.0
        # per sequence per step, all GPUs: the share of the cache a step reads
        # (inference.decode_kv_read_bytes: a sliding window's tokens, a sparse-attention
        # model's top-k latents and every indexer key), with a sparse model's latent at the
        # pool's bytes a value (fp8_ds_mla: 656 / 576), its indexer key at 132 bytes
        held, cfg, b = max(round(context), 1), mv.cfg, 2
        if cfg.indexer_topk and per_token:
            b = ((per_token / cfg.global_layers - inference.indexer_key_bytes(cfg))
                 / (cfg.kv_lora_rank + cfg.qk_rope_head_dim))
        read_share = (inference.decode_kv_read_bytes(cfg, context=held, bytes_per_element=b)
                      / inference.kv_cache_bytes(cfg, seq_len=held, cap_windows=False,
                                                 bytes_per_element=b))
        # tp, not tp x dp: an engine's GPUs read only its own sequences' cache
        self.kv_read = context * per_token * tp * read_share
        # and the FLOPs a sequence's new token spends on that cache, latent attention
        # absorbed as vLLM and SGLang decode it (inference.decode_attention_flops), split
        # over the GPUs by head (tp) or by sequence (dp)
        self.attention = inference.decode_attention_flops(cfg, context_len=held)
        # a prefilled prompt token's share of its prompt's attention, as prefill() counts it
        # (the up-projected form, vLLM's "compute friendly" prefill; a sparse-attention
        # prompt past the top-k absorbed, as vLLM's sparse backends prefill it)
        whole = held if prompt is None else v.positive_int("prompt", prompt)
        self.prefill_attention = mv.prefill_attention_flops(whole) / whole
        self.link, self.layers = group_link_bandwidth(gv, tp), mv.layers

    def _experts_read(self, batch: float) -> float:
        """Weight bytes one step reads (:func:`gpulesson.inference.decode_weight_bytes`): all
        of a dense model; for MoE the experts the batch routes to, under uniform routing
        (with ``par``, the busiest GPU's bytes times the GPUs,
        :func:`~gpulesson.planning.moe_serving.decode_read_bytes`)."""
        if self.par is not None:
            return self.par.gpus * decode_read_bytes(self.mv, self.par, self.weights,
                                                     self.routed, batch, shared=self.shared)
        if not self.mv.is_moe:
            return self.weights
        share = inference.decode_weight_bytes(self.mv.cfg, batch=max(int(batch), 1),
                                              bytes_per_param=1) / self.mv.total_params
        return self.weights * share

    def comm(self, tokens: float) -> float:
        """Tensor-parallel all-reduces, 2 a layer; over ``dp`` engines each all-reduces its
        own tokens, once in an MoE layer, whose dispatch and combine replace the other
        (:func:`~gpulesson.planning.moe_serving.dispatch_time`)."""
        par, runs = self.par, 2 * self.layers
        a2a = 0.0
        if par is not None and par.dp > 1:
            a2a = dispatch_time(self.mv, par, self.gv, tokens)
            tokens, runs = tokens / par.dp, runs - self.mv.moe_layers
        if self.tp == 1:
            return a2a
        size = tokens * self.mv.hidden * 2
        return a2a + runs * distributed.collective_time(
            "all_reduce", size, self.tp, bandwidth=self.link, latency=10e-6)

    def step(self, batch: float, prefill_tokens: float = 0.0) -> float:
        """One step of ``batch`` decoding sequences and ``prefill_tokens`` prompt tokens:
        the weights' products or reads, whichever is slower; the decode attention, its
        cache reads or its FLOPs (compute-bound for latent attention on few GPUs at long
        context, :func:`gpulesson.inference.decode_attention_flops`); the prompt tokens'
        attention; the all-reduces. Attention runs at the matmul rate, as in
        :meth:`prefill` (FlashMLA's decode kernel, 660 of an H800's 989 TFLOP/s, is
        nearer the matmul efficiency than the FlashAttention-2 figure of
        ``GPUView.attention_efficiency``)."""
        flop = 2 * self.mv.active_params * (batch + prefill_tokens)
        attention = max(batch * self.kv_read / self.bw, batch * self.attention / self.rate)
        return (max(flop / self.gemm_rate, self._experts_read(batch) / self.bw) + attention
                + prefill_tokens * self.prefill_attention / self.rate
                + self.comm(batch + prefill_tokens))

    def prefill(self, prompt: int) -> float:
        products = inference.prefill_flops(self.mv.active_params, prompt)  # 2 N T
        attention = self.mv.prefill_attention_flops(prompt)
        if self.par is not None:  # one engine's tp GPUs run all but the routed experts
            mv, par = self.mv, self.par
            experts = inference.prefill_flops(
                mv.expert_params * mv.experts_per_token / mv.routed_experts, prompt)
            share = self.tp / par.gpus
            return (max((products - experts) / (self.gemm_rate * share)
                        + attention / (self.rate * share) + experts / self.gemm_rate,
                        self._experts_read(prompt) / self.bw) + self.comm(prompt * par.dp))
        return (max(products / self.gemm_rate + attention / self.rate, self.weights / self.bw)
                + self.comm(prompt))


def _steady(speed: _Speed, qps: float, prompt: int, output: int) -> tuple[float, float, float]:
    """(t_step, ttft, batch) at ``qps`` requests/s on one replica; inf when overloaded.

    ``batch`` is the sequences in flight on average (Little's law). The steps a request
    decodes in hold the request itself and, on average, ``batch`` others (requests that
    arrive at random see the time average): ``t_step`` is a step of ``1 + batch``
    sequences, never faster than one sequence's step however light the traffic."""
    prefill = speed.prefill(prompt)
    t = speed.step(1.0)
    for _ in range(200):
        ttft = prefill + t
        batch = qps * (ttft + output * t)
        new = speed.step(1.0 + batch, qps * prompt * t)
        if new > 1e3 or batch > 1e7:
            return float("inf"), float("inf"), float("inf")
        if abs(new - t) <= 1e-9 + 1e-7 * t:
            t = new
            break
        t = 0.5 * (t + new)
    else:
        return float("inf"), float("inf"), float("inf")
    return t, prefill + t, qps * (prefill + t + output * t)


def plan_serving(
    model: object,
    gpu: object,
    *,
    tp: int | None = 1,
    max_model_len: int,
    kv_dtype: str = "bf16",
    weight_dtype: str = "bf16",
    gpu_memory_utilization: float = 0.9,
    qps: float | None = None,
    prompt_tokens: int = 1024,
    output_tokens: int = 256,
    ttft_slo: float | None = None,
    tpot_slo: float | None = None,
    usable_memory: float | None = None,
    max_num_batched_tokens: int | None = None,
    max_num_seqs: int | None = None,
    block_size: int = 16,
    non_torch_memory: float | None = None,
    matmul_efficiency: float | None = None,
    usd_per_gpu_hour: float | None = None,
    bandwidth_efficiency: float | None = None,
    dp: int = 1,
    expert_parallel: bool = False,
    all2all_backend: str = "allgather_reducescatter",
) -> ServingPlan:
    """Plan serving ``model`` on ``gpu`` with vLLM: KV cache, speed, replicas and cost.

    Without ``qps``: one replica of ``tp`` GPUs running as many sequences as its KV cache
    (and ``max_num_seqs``) holds, each step also prefilling the prompts of the sequences that
    replace those it finishes (``batch * prompt_tokens / output_tokens`` tokens, chunked
    prefill): the throughput it can sustain, not a decode-only ceiling. With ``qps``
    (requests/s of ``prompt_tokens`` in and ``output_tokens`` out) and optional SLOs: the
    fewest GPUs (``tp`` x replicas) that serve the traffic within ``ttft_slo`` (seconds to
    the first token) and ``tpot_slo`` (seconds per output token; without ``qps`` the
    replica runs the most sequences that meet them); ``tp=None`` lets the
    planner choose ``tp`` too. When no choice meets an SLO, the plan says which and why
    (``feasible=False``). Memory-bound steps read HBM at ``bandwidth_efficiency`` of the
    datasheet bandwidth (default
    :data:`DECODE_BANDWIDTH_EFFICIENCY`, fitted on published decode times). An MoE model
    may run ``dp`` data-parallel attention engines of ``tp`` GPUs per replica, its experts
    whole on the ``tp x dp`` GPUs (``expert_parallel``) and its tokens dispatched by
    ``all2all_backend`` (:mod:`~gpulesson.planning.moe_serving`; DeepEP only with both,
    as vLLM: :data:`~gpulesson.planning.moe_serving.ALL2ALL_BACKENDS`). With ``tp=None``
    a size whose ``tp x dp`` GPUs straddle NVLink domains, or outnumber the routed
    experts, is left out of the comparison (its reason says so). ``non_torch_memory``
    (bytes per GPU outside PyTorch) defaults to what a current vLLM holds on each GPU of a
    ``tp``-GPU replica (:func:`~gpulesson.planning.non_torch.vllm_non_torch_bytes`: 0.14
    GiB on one H100, about 2 GiB on each of eight, whose NCCL buffers it counts).
    """
    mv = model_view(model)
    refuse_recurrent(mv.cfg, "plan_serving")
    gv = gpu_view(gpu, usable_memory=usable_memory, matmul_efficiency=matmul_efficiency,
                  usd_per_gpu_hour=usd_per_gpu_hour)
    p = v.positive_int("prompt_tokens", prompt_tokens)
    o = v.positive_int("output_tokens", output_tokens)
    length = v.positive_int("max_model_len", max_model_len)
    rate = None if qps is None else v.positive_number("qps", qps)
    slo_ttft = None if ttft_slo is None else v.positive_number("ttft_slo", ttft_slo)
    slo_tpot = None if tpot_slo is None else v.positive_number("tpot_slo", tpot_slo)
    eff = (DECODE_BANDWIDTH_EFFICIENCY if bandwidth_efficiency is None else
           v.fraction("bandwidth_efficiency", bandwidth_efficiency, allow_zero=False))
    tps = ([v.positive_int("tp", tp)] if tp is not None else
           [t for t in divisors(_server_gpus(gv)) if mv.heads % t == 0
            and (mv.cfg.latent_attention or ((mv.kv_heads or mv.heads) % t == 0
                                             or t % (mv.kv_heads or mv.heads) == 0))])
    moe_parallel(mv, tp=tps[0], dp=dp, expert_parallel=expert_parallel, all2all=all2all_backend)
    moe = dict(dp=dp, expert_parallel=expert_parallel)
    common = dict(max_model_len=length, kv_dtype=kv_dtype, weight_dtype=weight_dtype,
                  gpu_memory_utilization=gpu_memory_utilization, usable_memory=gv.usable_memory,
                  max_num_batched_tokens=max_num_batched_tokens, max_num_seqs=max_num_seqs,
                  block_size=block_size, non_torch_memory=non_torch_memory, **moe)
    candidates: list[ServingPlan] = []
    unfit: ValueError | None = None
    left_out: list[tuple[int, str]] = []
    for t in tps:
        try:
            par = check_domains(moe_parallel(mv, tp=t, all2all=all2all_backend, **moe), gv)  # type: ignore[arg-type]
        except ValueError as exc:
            # tp chosen by the planner: a size whose tp x dp GPUs straddle NVLink domains,
            # or outnumber the experts, is left out of the comparison; refused only if
            # every size is
            if tp is not None:
                raise
            unfit = unfit or exc
            left_out.append((t, f"tp {t}: left out, {exc}"))
            continue
        candidates.append(_plan_tp(mv, gv, t, common, rate, p, o, slo_ttft, slo_tpot, eff, par))
    if not candidates and unfit is not None:
        raise unfit
    good = [c for c in candidates if c.feasible]
    if good:
        best = min(good, key=lambda c: (c.gpus, c.tpot))
        if len(candidates) > 1 or left_out:
            best = _reason(best, candidates, left_out,
                           "meet the traffic" if rate is not None else "run a full replica")
        return best
    # none serves: the fewest problems, and among those the largest tp, the nearest to
    # serving (more memory for the weights and the cache, faster steps)
    return min(candidates, key=lambda c: (len(c.problems), -c.tp))


def _reason(best: ServingPlan, plans: list[ServingPlan],
            left_out: list[tuple[int, str]] | None = None,
            goal: str = "meet the traffic") -> ServingPlan:
    """``best`` with the comparison in its reason: each size tried, and each left out
    (``(tp, why)``), by tp; ``goal``, what the fewest GPUs do."""
    dp = f" x dp {best.dp}" if best.dp > 1 else ""
    tried = [(c.tp, f"tp {c.tp}: {c.gpus:,} GPUs" if c.feasible else
              f"tp {c.tp}: {c.problems[0]}") for c in plans]
    parts = [text for _, text in sorted(tried + list(left_out or ()), key=lambda x: x[0])]
    replicas = f"{best.replicas:,} replica{'s' if best.replicas != 1 else ''}"
    return replace(best, reason=f"Fewest GPUs that {goal}: tp {best.tp}{dp} x "
                   f"{replicas}. Compared: " + "; ".join(parts) + ".")


def _plan_tp(mv: ModelView, gv: GPUView, t: int, common: Mapping[str, object],
             rate: float | None, p: int, o: int, slo_ttft: float | None,
             slo_tpot: float | None, eff: float = 1.0,
             par: MoEParallel | None = None) -> ServingPlan:
    par = par or MoEParallel(t)
    problems: list[str] = moe_problems(mv, par)
    length = int(common["max_model_len"])  # type: ignore[call-overload]
    context = int(mv.cfg.context or 0)
    if context and length > context:
        problems.append(
            f"max_model_len ({length:,}) exceeds the {context:,} positions {mv.name} was "
            "trained for (max_position_embeddings): vLLM refuses to start unless "
            "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1; lower max_model_len")
    if p + o > length:
        problems.append(
            f"prompt_tokens + output_tokens ({p:,} + {o:,} = {p + o:,}) exceed max_model_len "
            f"({length:,}): vLLM rejects such requests; raise max_model_len or shorten them")
    if mv.heads % t:
        problems.append(f"tp = {t} must divide the {mv.heads} attention heads")
    kv = mv.kv_heads or mv.heads
    if not mv.cfg.latent_attention and (kv % t if kv >= t else t % kv):
        # vLLM's attention layers: KV heads split over tp, or copied when tp is a multiple
        problems.append(f"tp = {t} must divide the {kv} KV heads, or be a multiple of them "
                        "(vLLM copies a KV head over tp / kv_heads GPUs)")
    if gv.domain <= 1 and t > 1:
        if t > PCIE_SERVER_GPUS:
            problems.append(f"tp = {t} spans more than a server of {PCIE_SERVER_GPUS} "
                            f"{gv.name} cards: its all-reduces would cross the network")
    elif t > gv.domain and gv.domain >= 1:
        problems.append(f"tp = {t} spans more than the {gv.domain}-GPU NVLink domain of a "
                        f"{gv.name}: its all-reduces would cross the network")
    extra = (mxfp4_triton_extra_bytes(mv, tp=t)
             if common["weight_dtype"] in ("mxfp4", "mxfp4_experts")
             and gv.spec.architecture == "Hopper" and mv.is_moe else 0.0)
    budget = kv_budget(mv, gv.spec, tp=t, extra_weight_bytes=extra, **common)  # type: ignore[arg-type]
    if budget.kv_cache <= 0:
        # in the GB the reader types, with vLLM's GiB beside, and no negative "left"
        taken = budget.requested - budget.kv_cache  # weights + activations + non-torch
        problems.append(
            f"memory: no room for a KV cache: the weights, activations and non-torch memory "
            f"take {_both_bytes(taken)}, {'all of' if budget.kv_cache == 0 else 'more than'} "
            f"the {_both_bytes(budget.requested)} vLLM may use (gpu_memory_utilization of "
            "the GPU's memory)"
            + (f", {_both_bytes(-budget.kv_cache)} short" if budget.kv_cache < 0 else "")
            + "; raise gpu_memory_utilization, use more tp, "
            "lighter weights (weight_dtype) or fewer max_num_batched_tokens")
    elif budget.sequences(length) < 1:
        held = (f"the {budget.kv_cache_tokens:,} tokens the KV cache can store"
                if budget.groups is None else
                f"what the KV cache can hold ({budget.blocks:,} blocks; one request of "
                f"max_model_len takes {budget.request_blocks(length):,})")
        problems.append(
            f"max_model_len ({length:,}) is larger than {held}, so vLLM refuses to start: "
            "lower max_model_len" + _room_fixes(mv, gv, t, common))
    speed = _Speed(mv, gv, t, str(common["weight_dtype"]), budget.kv_bytes_per_token, p + o / 2,
                   eff, par, prompt=p)
    seqs_cap = budget.sequences(p + o) * par.dp  # sequences of real length the caches hold
    replicas = 1
    # vLLM's max_num_seqs: as set, or its default on this GPU (the one kv_budget profiles)
    max_seqs = int(common["max_num_seqs"] or _v1_defaults(gv.usable_memory, gv.spec)[1])  # type: ignore[call-overload]
    if rate is None:
        # at full load each step also prefills the prompts that replace the sequences it
        # finishes (batch / o of them, chunked prefill): the rate the replica can sustain;
        # with latency limits, the most sequences that still meet them (a lower
        # max_num_seqs), found by bisection since a step grows with its batch
        def meets(b: float) -> bool:
            step = speed.step(b, b * p / o)
            return ((slo_tpot is None or step <= slo_tpot)
                    and (slo_ttft is None or speed.prefill(p) + step <= slo_ttft))

        batch = max(min(seqs_cap, float(max_seqs * par.dp)), 1.0)
        if not meets(batch):  # none at all when even one sequence misses (said below)
            low, high = 1.0, batch
            while high - low > 0.5:
                mid = (low + high) / 2
                low, high = (mid, high) if meets(mid) else (low, mid)
            batch = float(math.floor(low))
        step = speed.step(batch, batch * p / o)
        ttft, tpot = speed.prefill(p) + step, step
        throughput = batch / step
        for name, slo, value in (("ttft_slo", slo_ttft, ttft), ("tpot_slo", slo_tpot, tpot)):
            if slo is not None and value > slo:  # even one sequence misses it
                problems.append(
                    f"{name} ({units.format_seconds(slo)}) cannot be met on tp = {t}: "
                    f"{units.format_seconds(value)} even for one sequence at a time")
    else:
        alone = speed.prefill(p) + speed.step(1.0)
        if slo_ttft is not None and alone > slo_ttft:
            problems.append(f"ttft_slo ({units.format_seconds(slo_ttft)}) cannot be met on tp "
                            f"= {t}: a {p:,}-token prefill alone takes "
                            f"{units.format_seconds(alone)}")
        if slo_tpot is not None and speed.step(1.0) > slo_tpot:
            problems.append(f"tpot_slo ({units.format_seconds(slo_tpot)}) cannot be met on "
                            f"tp = {t}: one decode step reads the weights and the "
                            f"sequence's KV cache in {units.format_seconds(speed.step(1.0))} "
                            "even for one sequence")
        # a replica holds what its caches hold and runs at most max_num_seqs of them
        replicas, (step, ttft, batch) = _replicas(speed, rate, p, o, slo_ttft, slo_tpot,
                                                  min(seqs_cap, max_seqs * par.dp),
                                                  problems)
        if step == float("inf"):  # overloaded: show the idle figures, say why
            several = "" if replicas == 1 else "s"
            problems.append(f"qps: {rate:g} requests/s overload {replicas} replica{several} "
                            f"of tp = {t}; the step time grows without bound")
            step, ttft, batch = speed.step(1.0), alone, 1.0
        tpot, throughput = step, rate * o
    gpus = t * par.dp * replicas
    price = gv.price
    per_m = (cost.cost_per_1k_tokens(usd_per_gpu_hour=price, gpus=gpus,
                                     tokens_per_second=throughput) * 1000
             if price is not None and throughput > 0 else None)
    return ServingPlan(
        feasible=not problems, problems=tuple(problems), tp=t, replicas=replicas, gpus=gpus,
        kv_cache_tokens=budget.kv_cache_tokens, max_concurrency=budget.max_concurrency,
        batch=batch, ttft=ttft, tpot=tpot, throughput=throughput,
        cost_per_million_tokens=per_m, budget=budget, model=mv.name, gpu=gv.name,
        notes=(*mv.notes, *gv.notes), dp=par.dp, expert_parallel=par.expert_parallel)


def _room_fixes(mv: ModelView, gv: GPUView, t: int, common: Mapping[str, object]) -> str:
    """The ways to a larger KV cache these settings leave open, as a clause."""
    kv = vllm_kv_dtype(mv, str(common["kv_dtype"]))  # "auto" as vLLM resolves it
    fixes = [
        "more tp" if t < _server_gpus(gv) else "",
        "an FP8 KV cache (kv_dtype)" if not kv.startswith("fp8") else "",
        "lighter weights (weight_dtype)" if common["weight_dtype"] in ("fp32", "bf16", "fp16")
        else "",
        "a higher gpu_memory_utilization"
        if float(common["gpu_memory_utilization"]) < 0.95 else "",  # type: ignore[arg-type]
    ]
    named = [f for f in fixes if f]
    if not named:
        return ""
    return ", or make room with " + (", ".join(named[:-1]) + " or " + named[-1]
                                     if len(named) > 1 else named[0])


def _replicas(speed: _Speed, qps: float, p: int, o: int, slo_ttft: float | None,
              slo_tpot: float | None, seqs_cap: float, problems: list[str]
              ) -> tuple[int, tuple[float, float, float]]:
    """Fewest replicas whose steady state meets the SLOs and fits the KV cache."""
    if problems:
        return 1, _steady(speed, qps, p, o)

    def ok(r: int) -> tuple[bool, tuple[float, float, float]]:
        state = _steady(speed, qps / r, p, o)
        step, ttft, batch = state
        good = (step != float("inf") and batch <= seqs_cap
                and (slo_ttft is None or ttft <= slo_ttft)
                and (slo_tpot is None or step <= slo_tpot))
        return good, state

    high = 1
    while not ok(high)[0]:
        high *= 2
        if high > 1 << 20:
            problems.append("qps: no number of replicas up to a million meets the SLOs")
            return high, ok(high)[1]
    low = high // 2
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if ok(mid)[0] else (mid, high)
    return high, ok(high)[1]


#: Fraction of the datasheet HBM bandwidth a memory-bound decode step reaches, fitted on
#: :data:`DECODE_MEASUREMENTS` (the median of their implied efficiencies; evaluated
#: leave-one-out in ``tests/unit/test_planning_serving.py``): about 0.64 on H100 with
#: vLLM, SGLang and NIM alike, where the bare roofline assumed 1.
DECODE_BANDWIDTH_EFFICIENCY = fit_decode_efficiency(DECODE_MEASUREMENTS)

#: Default vLLM block size (tokens per KV block).
BLOCK_SIZE = 16


v.guard_module(globals())
