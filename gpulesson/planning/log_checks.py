"""Real vLLM start-up logs set against the planner, item by item.

A log names what vLLM measured on one GPU: the weights it loaded, the activation peak of
its profiling pass, the memory outside PyTorch, the CUDA graph estimate, the KV-cache pool
left over, the tokens that pool holds, the KV cache one request of ``max_model_len``
needs, and the resulting "maximum concurrency". :func:`check_vllm_run` predicts each from
the model and the run's settings (:func:`~gpulesson.planning.serving.kv_budget`,
:func:`~gpulesson.planning.checkpoints.checkpoint_parts`,
:func:`~gpulesson.inference.kv_cache_bytes_per_token_per_gpu`,
:func:`request_kv_bytes`) and returns one :class:`~gpulesson.planning.logs.LogRow` per
item the log prints. Figures the log prints that are inputs of vLLM's arithmetic (the
device total, ``gpu_memory_utilization``, non-torch memory, the CUDA graph estimate) are
used as inputs, as :func:`~gpulesson.planning.logs.reconcile_vllm_log` does.

A run is a mapping (``tests/data/logs/vllm-logs.json`` holds thirty-seven, each with its public
thread): ``model`` (a preset name) or ``hf_config`` (a config.json mapping), optional
``overrides`` of the config, ``gpu``, ``tp``, ``max_model_len``, ``weight_dtype``,
``kv_dtype``, ``gpu_memory_utilization``, ``max_num_batched_tokens``, ``max_num_seqs``,
``block_size``, ``stage_layers`` and ``stage_kv_cache_gib`` (the layers and the pool of
the pipeline stage that limits the cache), ``attention_dp`` (attention data-parallel:
every GPU keeps whole KV heads), ``cuda_graph_profiled`` (vLLM 0.21 and later take the
CUDA graph estimate out of the pool), ``total_memory_gib`` (the device total as CUDA
reports it, where the log does not print it), ``non_torch_gib`` (a non-torch figure
borrowed from another log), ``expert_padding`` (``{"intermediate": 128, "hidden": 256}``:
a MoE kernel's padding, :func:`~gpulesson.planning.checkpoints.expert_padding_bytes`),
``mxfp4_backend`` (``"triton"``:
:func:`~gpulesson.planning.checkpoints.mxfp4_triton_extra_bytes`), ``sms`` (the streaming
multiprocessors of a GPU the course's GPU table lacks, or of an unnamed one) and
``assumed`` (each setting the log and its thread do not state, and why the value was
taken). :func:`pool_table` predicts every log's KV-cache pool twice, with the log's
non-torch figure and from scratch with the remainder refitted without the log
(leave-one-out, :func:`non_torch_remainder`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from gpulesson import _validate as v
from gpulesson import hardware, inference, memory, transformer

from ._adapt import gpu_view, model_view
from .checkpoints import (
    checkpoint_parts,
    expert_padding_bytes,
    mxfp4_triton_extra_bytes,
    replicated_bytes,
    rotary_table_bytes,
)
from .chunked import vllm_chunked_hybrid
from .hybrid import refuse_recurrent
from .logs import LogRow, parse_vllm_log
from .non_torch import gpu_links, non_torch_accounting, non_torch_bytes
from .serving import (
    CUBLAS_WORKSPACE_DEFAULT,
    GIB,
    NON_TORCH_BYTES,
    cublas_workspace_bytes,
    kv_budget,
    kv_cache_groups,
    pool_blocks,
    vllm_kv_rules,
)
from .sparse import vllm_block_size, vllm_kv_bytes_per_token

__all__ = ["LogCheck", "PoolRow", "check_vllm_run", "fit_non_torch_base",
           "fit_non_torch_per_sm", "non_torch_remainder", "pool_table", "run_sms",
           "request_kv_bytes", "run_accounting", "run_workspace", "sourced_non_torch"]


def request_kv_bytes(cfg: transformer.TransformerConfig, *, max_model_len: int, tp: int = 1,
                     max_num_batched_tokens: int = 8192, block_size: int = 16,
                     bytes_per_element: float = 2) -> float:
    """KV-cache bytes vLLM V1 requires for one request of ``max_model_len`` on one GPU.

    Full-attention layers: ``ceil(max_model_len / block_size)`` blocks; sliding-window
    layers: ``ceil(min(window - 1 + max_num_batched_tokens, max_model_len) / block_size) +
    1`` blocks (a chunk of new tokens may straddle the window); chunked layers (Llama 4):
    ``ceil(min(chunk + max_num_batched_tokens, max_model_len) / block_size)`` blocks, each
    block ``block_size`` tokens of the layer's keys and values (vLLM
    ``v1/kv_cache_interface.py``, ``FullAttentionSpec``, ``SlidingWindowSpec`` and
    ``ChunkedLocalAttentionSpec``, ``max_memory_usage_bytes``). gpt-oss-120b at 131,072 tokens with
    1,024 batched: 4.54 GiB, as vLLM issue #27508 prints. A hybrid model (linear-attention
    layers) is refused (:mod:`~gpulesson.planning.hybrid`).
    """
    per_token = inference.kv_cache_bytes_per_token_per_gpu(
        cfg, tp=tp, bytes_per_element=bytes_per_element)  # refuses a bad cfg by name
    refuse_recurrent(cfg, "request_kv_bytes")
    length = v.positive_int("max_model_len", max_model_len)
    block = v.positive_int("block_size", block_size)
    batched = v.positive_int("max_num_batched_tokens", max_num_batched_tokens)
    layers = max(int(cfg.layers), 1)
    per_layer_block = per_token / layers * block
    full = math.ceil(length / block) * cfg.global_layers
    window = cfg.sliding_window or 0
    local = (math.ceil(min(window - 1 + batched, length) / block) + 1) * cfg.local_layers \
        if window else 0
    chunk = cfg.attention_chunk
    chunked = math.ceil(min(chunk + batched, length) / block) * cfg.chunked_layers \
        if chunk else 0
    return float((full + local + chunked) * per_layer_block)


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


def run_accounting(run: Mapping[str, object]) -> str:
    """What the run's vLLM counts as non-torch memory
    (:func:`~gpulesson.planning.non_torch.non_torch_accounting` of its ``engine`` and
    ``version``)."""
    return non_torch_accounting(str(run.get("engine", "V1")), str(run.get("version", "")))


def sourced_non_torch(run: Mapping[str, object]) -> float:
    """The non-torch bytes of one of the run's GPUs that come from the code, not from a
    fit: its NCCL buffers and custom all-reduce
    (:func:`~gpulesson.planning.non_torch.non_torch_bytes` with ``base=0``). The
    interconnect is the run's ``interconnect`` (``"pcie"`` or ``"nvswitch"``), else the
    GPU's: an NVLink domain of more than one GPU is an NVSwitch, with NVLS where the GPU has
    NVLink SHARP (``nvls`` overrides)."""
    tp = v.positive_int("tp", run.get("tp", 1))
    if tp == 1:
        return 0.0
    link, nvls = run.get("interconnect"), run.get("nvls")
    if link is None or nvls is None:
        if run.get("gpu") is None:
            raise ValueError(f"run {run.get('id', '')!r}: give 'interconnect' ('pcie' or "
                             "'nvswitch') or a known 'gpu' for a tensor-parallel run")
        gpu_link, gpu_nvls = gpu_links(gpu_view(run["gpu"]), tp)
        link = link or gpu_link
        nvls = gpu_nvls if nvls is None else nvls
    return non_torch_bytes(tp, base=0.0, interconnect=str(link), nvls=bool(nvls))


def run_workspace(run: Mapping[str, object]) -> float:
    """The cuBLAS workspace in the run's activation peak
    (:func:`~gpulesson.planning.serving.cublas_workspace_bytes` of its ``gpu``). A GPU the
    course has no datasheet for (the consumer and pre-Ampere cards of the registry) or none
    named takes the default of every architecture before Hopper."""
    gpu = run.get("gpu")
    try:
        return cublas_workspace_bytes(gpu) if gpu is not None else float(
            CUBLAS_WORKSPACE_DEFAULT)
    except ValueError:  # not in gpulesson.hardware: a card older than Hopper
        return float(CUBLAS_WORKSPACE_DEFAULT)


def check_vllm_run(run: Mapping[str, object], text: str, *,
                   non_torch_default: float = NON_TORCH_BYTES,
                   logged_non_torch: bool = True) -> LogCheck:
    """Predict every item of the vLLM log ``text`` from the run's settings ``run``.

    The device total and ``gpu_memory_utilization`` are settings: read from the log, else
    from the run (``total_memory_gib``, ``gpu_memory_utilization``; vLLM's default 0.9).
    Non-torch memory is the log's where it prints it, else the run's ``non_torch_gib`` (a
    figure borrowed from another log), else ``non_torch_default`` (the fitted remainder)
    plus :func:`sourced_non_torch`; with ``logged_non_torch=False`` always the latter (the
    prediction from scratch). The activation peak carries the cuBLAS workspace of the
    run's GPU (:func:`run_workspace`). The KV-cache pool
    is predicted in GiB where the log prints GiB, and as tokens where it prints only
    tokens, blocks or a concurrency.
    """
    if not isinstance(run, Mapping):
        raise TypeError(f"run must be a mapping of the run's settings, got "
                        f"{type(run).__name__}")
    got = parse_vllm_log(text)
    cfg = _config(run)
    mv = model_view(cfg)
    tp = v.positive_int("tp", run.get("tp", 1))
    length = v.positive_int("max_model_len", run.get("max_model_len") or
                            int(got.get("max_model_len", 0)))
    block = vllm_block_size(cfg, run.get("block_size", 16))
    kv_dtype = str(run.get("kv_dtype", "bf16"))
    weight_dtype = str(run.get("weight_dtype", "bf16"))
    kv_b = memory.precision_bytes(kv_dtype)
    kv_tp = 1 if run.get("attention_dp") else tp
    stage = replace(cfg, layers=int(run["stage_layers"])) if run.get("stage_layers") else cfg
    per_token = vllm_kv_bytes_per_token(stage, tp=kv_tp, kv_dtype=kv_dtype)
    batched = int(run.get("max_num_batched_tokens") or 8192)
    engine, version = str(run.get("engine", "V1")), run.get("version")
    hybrid, from_concurrency = vllm_kv_rules(engine, None if version is None else str(version))
    if stage.attention_chunk:  # Llama 4: the manager may be off for chunked models
        hybrid = hybrid and vllm_chunked_hybrid(engine, None if version is None else str(version))
    groups = kv_cache_groups(stage, block_size=block, max_num_batched_tokens=batched) \
        if hybrid else None

    def counted(pool_bytes: float) -> tuple[int, int, float]:
        """(blocks, printed tokens, concurrency) of a pool, as the run's vLLM counts them."""
        return pool_blocks(pool_bytes, per_token, stage.layers, length, groups, block,
                           from_concurrency)

    rows: list[LogRow] = []

    pad = run.get("expert_padding") or {}
    extra = expert_padding_bytes(
        mv, weight_dtype, tp=tp, intermediate_multiple=int(pad.get("intermediate", 1)),  # type: ignore[union-attr]
        hidden_multiple=int(pad.get("hidden", 1))) if pad else 0.0  # type: ignore[union-attr]
    if run.get("mxfp4_backend") == "triton":
        extra += mxfp4_triton_extra_bytes(mv, tp=tp)
    weights = memory.checkpoint_bytes(checkpoint_parts(mv, weight_dtype)) / tp + \
        rotary_table_bytes(mv) + extra + replicated_bytes(mv, weight_dtype, tp=tp)
    if "weights" in got:
        padded = " + the MoE kernel's padding or copies" if extra else ""
        rows.append(LogRow("weights per GPU", got["weights"], weights, "bytes",
                           f"{weight_dtype} checkpoint / tp {tp} + the rotary table{padded}"))

    base = v.nonneg_number("non_torch_default", non_torch_default)
    util = float(got.get("utilization", run.get("gpu_memory_utilization", 0.9)))  # type: ignore[arg-type]
    total = got.get("total_memory")
    if total is None and "requested" in got:
        total = got["requested"] / util
    if total is None and run.get("total_memory_gib") is not None:
        total = v.positive_number("total_memory_gib", run["total_memory_gib"]) * GIB
    if logged_non_torch and "non_torch" in got:
        non_torch = got["non_torch"]
    elif logged_non_torch and run.get("non_torch_gib") is not None:
        non_torch = v.nonneg_number("non_torch_gib", run["non_torch_gib"]) * GIB
    elif total and not run.get("stage_layers"):  # a pool is predicted: it needs the buffers
        non_torch = base + sourced_non_torch(run)
    else:
        non_torch = base
    pool = None
    if total and not run.get("stage_layers"):
        budget = kv_budget(mv, tp=tp, max_model_len=length, kv_dtype=kv_dtype,
                           weight_dtype=weight_dtype, gpu_memory_utilization=util,
                           usable_memory=total,
                           max_num_batched_tokens=run.get("max_num_batched_tokens"),  # type: ignore[arg-type]
                           max_num_seqs=run.get("max_num_seqs"), block_size=block,  # type: ignore[arg-type]
                           non_torch_memory=non_torch, extra_weight_bytes=extra,
                           workspace=run_workspace(run), engine=engine,
                           vllm_version=None if version is None else str(version))
        if "activation_peak" in got:
            which = "sampler" if budget.sampler_peak >= budget.forward_peak else "forward pass"
            rows.append(LogRow("activation peak", got["activation_peak"],
                               budget.activation_peak, "bytes",
                               f"the profiling run's peak: its {which}"))
        if "non_torch" in got:
            rows.append(LogRow("non-torch memory", got["non_torch"],
                               base + sourced_non_torch(run),
                               "bytes", "fitted remainder + NCCL buffers and custom "
                               "all-reduce (from scratch)"))
        pool = budget.kv_cache - got.get("cuda_graph", 0.0) * (
            1.0 if run.get("cuda_graph_profiled") else 0.0)
    measured_tokens = got.get("kv_cache_tokens", got["blocks"] * block
                              if "blocks" in got else None)
    if measured_tokens is None and "max_concurrency" in got:
        measured_tokens = got["max_concurrency"] * length  # two decimals: +-0.005 x length
    if pool is not None:
        if "kv_cache" in got:
            rows.append(LogRow("KV cache pool", got["kv_cache"], pool, "bytes",
                               "requested - weights - activations - non-torch (- graphs)"))
        elif measured_tokens is not None:
            rows.append(LogRow("KV cache pool", float(measured_tokens),
                               float(counted(pool)[1]),
                               "tokens", "the predicted pool in tokens (the log prints "
                               "no GiB figure)"))
    log_pool = got.get("kv_cache")
    if run.get("stage_kv_cache_gib") is not None:  # the stage that limits the cache
        log_pool = v.nonneg_number("stage_kv_cache_gib", run["stage_kv_cache_gib"]) * 2**30
    if log_pool is not None and measured_tokens is not None and "kv_cache_tokens" in got \
            or log_pool is not None and "blocks" in got:
        from_log = counted(log_pool)[1]
        how = (f"the log's pool / {per_token:,.0f} bytes per token" if groups is None else
               f"the log's pool in blocks of {groups.layers} layers' pages, "
               + ("concurrency x max_model_len" if from_concurrency else
                  f"/ {groups.count} groups x {block} tokens"))
        rows.append(LogRow("tokens of the log's pool", measured_tokens, float(from_log),
                           "tokens", how))
    if "kv_needed" in got:
        need = request_kv_bytes(stage, max_model_len=length, tp=kv_tp,
                                max_num_batched_tokens=batched, block_size=block,
                                bytes_per_element=kv_b) if not stage.indexer_heads else \
            math.ceil(length / block) * block * per_token  # one group of full layers
        rows.append(LogRow("KV of one request", got["kv_needed"], need, "bytes",
                           "full layers: max_model_len; windowed layers: window + batch"))
    if "max_concurrency" in got and pool is not None:
        how = (f"predicted KV tokens / {length:,}" if groups is None else
               f"predicted blocks / the {groups.request_blocks(length):,} blocks of one "
               "request (sliding-window groups: their window only)")
        rows.append(LogRow("maximum concurrency", got["max_concurrency"], counted(pool)[2],
                           "x", how))
    if "kv_cache_tokens" in got and "max_concurrency" in got and log_pool is None \
            and not from_concurrency:
        # the log prints no pool in bytes: its token count still fixes its blocks, and so
        # its concurrency (hybrid: tokens = blocks // groups x block, so blocks lie in a
        # range of one group count, taken at its middle)
        count = groups.count if groups is not None else 1
        blocks = got["kv_cache_tokens"] // block * count + (count - 1) / 2
        need = groups.request_blocks(length) if groups is not None else length / block
        rows.append(LogRow("concurrency of the log's tokens", got["max_concurrency"],
                           blocks / need, "x",
                           f"the log's tokens as blocks / the blocks of one request "
                           f"({need:,.0f})"))
    return LogCheck(str(run.get("id", "")), str(run.get("url", "")), tuple(rows))


@dataclass(frozen=True)
class PoolRow:
    """One log's KV-cache pool beside two predictions: ``with_inputs`` takes the non-torch
    memory the log prints (``non_torch`` where it prints none); ``from_scratch`` always
    takes ``non_torch``: the run's NCCL and
    custom all-reduce buffers (:func:`sourced_non_torch`) plus ``non_torch_default``, the
    remainder fitted on the logs of other threads that count non-torch memory the same way
    (:func:`run_accounting`; leave-one-out). ``unit`` is ``"bytes"`` or ``"tokens"``;
    ``assumed`` the settings the log lacks."""

    run: str
    measured: float
    with_inputs: float
    from_scratch: float
    unit: str
    non_torch_default: float
    assumed: tuple[str, ...]
    non_torch: float = 0.0
    accounting: str = ""

    @staticmethod
    def _error(measured: float, predicted: float) -> float:
        if predicted == 0 or (measured < 0) != (predicted < 0):
            return math.inf
        return measured / predicted - 1

    @property
    def error(self) -> float:
        """``measured / with_inputs - 1`` (infinite when the signs differ)."""
        return self._error(self.measured, self.with_inputs)

    @property
    def error_from_scratch(self) -> float:
        """``measured / from_scratch - 1``."""
        return self._error(self.measured, self.from_scratch)


def run_sms(run: Mapping[str, object]) -> int | None:
    """The streaming multiprocessors of the run's GPU: its ``sms`` where the registry gives
    them (a GPU the course's table lacks, or an unnamed one), else the GPU table's
    (:attr:`gpulesson.hardware.GPUSpec.sms`, which the serving planner's default reads
    too), else ``None``. An ``sms`` that is not the table's for a GPU the table knows is
    refused."""
    given = None if run.get("sms") is None else v.positive_int("sms", run["sms"])
    name = run.get("gpu")
    try:
        table = None if name is None else hardware.gpu(str(name)).sms
    except KeyError:
        table = None
    if given is not None and table is not None and given != table:
        raise ValueError(f"run {run.get('id', '')!r}: sms must be the GPU table's {table} "
                         f"for a {name}, got {given}")
    return given if given is not None else table


def _others(runs: Sequence[Mapping[str, object]], texts: Sequence[str],
            leave_out: int | None) -> list[tuple[Mapping[str, object], float]]:
    """(run, printed non-torch less its sourced buffers) of every log that prints a
    non-torch figure, outside ``leave_out``'s thread."""
    if len(runs) != len(texts):
        raise ValueError(f"runs and texts must pair up, got {len(runs)} and {len(texts)}")
    if leave_out is not None and v.nonneg_int("leave_out", leave_out) >= len(runs):
        allowed = f"0 to {len(runs) - 1}" if runs else "None, as runs is empty"
        raise ValueError(f"leave_out must be the index of a run ({allowed}), got {leave_out}")
    skip_url = None if leave_out is None else runs[leave_out].get("url")
    out = []
    for j, (run, text) in enumerate(zip(runs, texts, strict=True)):
        if j == leave_out or (skip_url and run.get("url") == skip_url):
            continue
        printed = parse_vllm_log(text).get("non_torch")
        if printed is not None:
            out.append((run, printed - sourced_non_torch(run)))
    return out


def fit_non_torch_base(runs: Sequence[Mapping[str, object]], texts: Sequence[str], *,
                       leave_out: int | None = None) -> dict[str, float]:
    """The remainder of non-torch memory per accounting (``"device"``, ``"increase"``): the
    median over the logs that print a non-torch figure of that figure less the run's
    :func:`sourced_non_torch`. ``leave_out`` (an index) drops that run and every run of the
    same thread (``url``), so a prediction never sees its own log or its siblings. An
    accounting without a log falls back to the median of all; without any,
    :data:`~gpulesson.planning.non_torch.NON_TORCH_BYTES`."""
    rests: dict[str, list[float]] = {}
    for run, rest in _others(runs, texts, leave_out):
        rests.setdefault(run_accounting(run), []).append(rest)
    every = [x for xs in rests.values() for x in xs]
    fallback = max(statistics.median(every), 0.0) if every else NON_TORCH_BYTES
    return {kind: max(statistics.median(rests[kind]), 0.0) if rests.get(kind) else fallback
            for kind in ("device", "increase")}


def fit_non_torch_per_sm(runs: Sequence[Mapping[str, object]], texts: Sequence[str], *,
                         leave_out: int | None = None) -> float | None:
    """The ``"increase"`` remainder per streaming multiprocessor: the median over the logs
    of that accounting that print a non-torch figure and name their GPU
    (:func:`run_sms`) of that figure less the run's :func:`sourced_non_torch`, over its
    SMs; ``None`` without such a log. ``leave_out`` as in :func:`fit_non_torch_base`. A log
    that names no GPU gives no evidence of a share per SM and is left out."""
    shares = [rest / sms for run, rest in _others(runs, texts, leave_out)
              if run_accounting(run) == "increase" and run.get("gpu") is not None
              and (sms := run_sms(run)) is not None]
    return max(statistics.median(shares), 0.0) if shares else None


def non_torch_remainder(runs: Sequence[Mapping[str, object]], texts: Sequence[str],
                        index: int) -> float:
    """The non-torch bytes of run ``index`` that neither its log nor the code gives,
    fitted on the logs of other threads (leave-one-out). Where vLLM counts what grew
    outside PyTorch since start-up (``"increase"``), it is a share per streaming
    multiprocessor (:func:`fit_non_torch_per_sm`) times the run's SMs: what grows there
    (kernels loaded on first use, library handles, the stacks CUDA reserves for every
    thread the GPU can hold) grows with the GPU, from 0.03 GiB on an RTX 4060's 24 SMs to
    0.13 on an H100's 132 in the registry's logs. The share per SM was chosen over one
    constant (and over a share per resident thread) by the runs it predicts, each choice
    made without the run's thread (benchmarks/bench_non_torch_remainder.py). Elsewhere
    (vLLM's older ``"device"`` accounting, which holds the CUDA context itself, or a GPU
    whose SMs are unknown) the constant of :func:`fit_non_torch_base`."""
    if v.nonneg_int("index", index) >= len(runs):
        allowed = f"0 to {len(runs) - 1}" if runs else "none, as runs is empty"
        raise ValueError(f"index must be the index of a run ({allowed}), got {index}")
    run = runs[index]
    kind, sms = run_accounting(run), run_sms(run)
    if kind == "increase" and sms is not None:
        share = fit_non_torch_per_sm(runs, texts, leave_out=index)
        if share is not None:
            return share * sms
    return fit_non_torch_base(runs, texts, leave_out=index)[kind]


def pool_table(runs: Sequence[Mapping[str, object]], texts: Sequence[str]) -> list[PoolRow]:
    """The KV-cache pool of every run whose log prints one (GiB, tokens, blocks or a
    concurrency) and whose device memory is known, predicted twice (:class:`PoolRow`):
    the only constants fitted on the set, the non-torch remainders
    (:func:`non_torch_remainder`), are refitted without the run's thread."""
    if len(runs) != len(texts):
        raise ValueError(f"runs and texts must pair up, got {len(runs)} and {len(texts)}")
    out: list[PoolRow] = []
    for i, (run, text) in enumerate(zip(runs, texts, strict=True)):
        kind = run_accounting(run)
        default = non_torch_remainder(runs, texts, i)
        inputs = check_vllm_run(run, text, non_torch_default=default).row("KV cache pool")
        if inputs is None or inputs.measured is None:
            continue
        scratch = check_vllm_run(run, text, non_torch_default=default,
                                 logged_non_torch=False).row("KV cache pool")
        assumed = tuple(sorted((run.get("assumed") or {}).keys()))  # type: ignore[union-attr]
        out.append(PoolRow(str(run.get("id", "")), inputs.measured, inputs.predicted,
                           scratch.predicted if scratch else inputs.predicted, inputs.unit,
                           default, assumed, default + sourced_non_torch(run), kind))
    return out


v.guard_module(globals())
