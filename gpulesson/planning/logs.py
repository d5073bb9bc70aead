"""Read a real log and explain it: vLLM's start-up memory lines and nccl-tests tables.

:func:`reconcile_vllm_log` parses the memory figures vLLM prints at start-up (model weights,
the profiled activation peak, non-torch memory, the KV cache in GiB, blocks and tokens,
maximum concurrency; V0 and V1 spellings, and vLLM 0.6.5's summary of one figure per line)
and sets each beside :func:`~gpulesson.planning.serving.kv_budget`'s prediction, term by
term: the difference in KV memory is the sum of the differences above it.

:func:`reconcile_nccl_tests` parses an nccl-tests table (size, count, type, time, algbw,
busbw per row; with or without the ``redop`` and ``root`` columns), fits the alpha-beta
model (:func:`alpha_beta_fit`) and compares the fitted bus bandwidth with what the link
predicts (:func:`gpulesson.distributed.achievable_bandwidth`).

Taught in: ``notebooks/planning_dashboard.ipynb`` (a vLLM log) and
``notebooks/distributed_math.ipynb`` (an nccl-tests log).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpulesson import _validate as v
from gpulesson import distributed, network, units

from ._adapt import model_view
from .serving import GIB, NON_TORCH_BYTES, KVBudget, kv_budget, pool_blocks, vllm_kv_rules

__all__ = ["LogRow", "NCCLReconciliation", "NCCLRow", "VLLMReconciliation", "alpha_beta_fit",
           "parse_nccl_tests", "parse_vllm_log", "reconcile_nccl_tests", "reconcile_vllm_log"]

#: A number as vLLM prints it (``14.9888``, ``1,952``): bounded repeats and no digit after
#: it, so a 50,000-digit number is skipped in linear time instead of read or backtracked.
_NUM_BODY = r"[0-9][0-9,]{0,24}(?:\.[0-9]{0,12})?"
_NUM = rf"({_NUM_BODY})(?![0-9])"
_VLLM_PATTERNS = {
    "weights": [rf"Loading model weights took {_NUM}\s*Gi?B",
                rf"Model loading took:? {_NUM}\s*Gi?B",
                rf"model weights take\s+{_NUM}\s*GiB", rf"; weights memory: {_NUM}\s*GiB"],
    "requested": [rf"requested GPU memory: {_NUM}\s*GiB"],
    "total_memory": [rf"total_gpu_memory=\s*{_NUM}\s*GiB", rf"total_gpu_memory \({_NUM}GiB\)",
                     rf"total_gpu_memory\s+{_NUM}\s*GiB",
                     rf"Free memory on device:? \(?{_NUM}/{_NUM}\s*GiB"],
    "utilization": [rf"gpu_memory_utilization=\s*{_NUM}",
                    rf"x gpu_memory_utilization \({_NUM}\)", rf"gpu_memory_utilization\s+{_NUM}",
                    rf"Desired GPU (?:memory )?utilization(?: is)?:? \(?{_NUM}"],
    "peak_torch": [rf"peak_torch_memory=\s*{_NUM}\s*GiB"],
    "activation_peak": [rf"PyTorch activation peak memory (?:takes )?\s*{_NUM}\s*GiB",
                        rf"torch peak memory increase: {_NUM}\s*GiB",
                        rf"Peak activation memory: {_NUM}\s*GiB",
                        rf"{_NUM}\s*GiB for peak activation"],
    "non_torch": [rf"non_torch_memory=\s*{_NUM}\s*GiB", rf"non_torch_memory takes {_NUM}\s*GiB",
                  rf"non_torch_memory\s+{_NUM}\s*GiB",
                  rf"non-torch forward increase memory: {_NUM}\s*GiB",
                  rf"Non-torch memory: {_NUM}\s*GiB", rf"{_NUM}\s*GiB for non-torch memory"],
    "kv_cache": [rf"kv_cache_size=\s*{_NUM}\s*GiB",
                 rf"reserved for KV Cache is (-?{_NUM_BODY})(?![0-9])\s*GiB",
                 rf"Available KV cache memory: (-?{_NUM_BODY})(?![0-9])\s*GiB",
                 rf"available_kv_cache_memory\s+{_NUM}\s*GiB"],
    "blocks": [rf"# (?:GPU|cuda|CUDA) blocks: {_NUM}", rf"GPU blocks: {_NUM}"],
    "kv_cache_tokens": [rf"GPU KV cache size: {_NUM} tokens",
                        rf"maximum number of tokens that can be stored in KV cache \({_NUM}\)"],
    "concurrency_len": [rf"Maximum concurrency for {_NUM} tokens per request"],
    "max_concurrency": [rf"tokens per request: {_NUM}x"],
    "max_model_len": [rf"max_seq_len=\s*{_NUM}", rf"max seq len \({_NUM}\)"],
    "cuda_graph": [rf"Estimated CUDA graph memory: {_NUM}\s*GiB",
                   rf"Graph capturing finished in {_NUM} secs?, took {_NUM}\s*GiB"],
    "kv_needed": [rf"\({_NUM}\s*GiB KV cache is needed"],
}


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def parse_vllm_log(text: str) -> dict[str, float]:
    """The memory figures of a vLLM start-up log (GiB figures in bytes, counts as numbers).

    Keys, where the log has them: ``weights``, ``total_memory``, ``utilization``,
    ``requested`` (V1's debug line: device total x utilisation), ``peak_torch``,
    ``activation_peak``, ``non_torch``, ``kv_cache``, ``blocks``, ``kv_cache_tokens``,
    ``max_concurrency``, ``max_model_len``, ``cuda_graph`` (V1's estimate, or the memory
    its graph capture took) and ``kv_needed`` (V1's refusal: the KV cache one request of
    ``max_model_len`` needs). The weights line's "GB" is GiB (vLLM divides by 2^30), in
    V0's "Loading model weights took" and early V1's "Model loading took" alike.
    ``ValueError`` when the text has none of them.
    """
    text = _check_text(text)
    found: dict[str, float] = {}
    for key, patterns in _VLLM_PATTERNS.items():
        for pattern in patterns:
            hit = re.search(pattern, text)
            if hit:
                found[key] = _number(hit.group(hit.lastindex or 1))
                break
    for key in ("weights", "total_memory", "requested", "peak_torch", "activation_peak",
                "non_torch", "kv_cache", "cuda_graph", "kv_needed"):
        if key in found:
            found[key] *= GIB
    if "activation_peak" not in found and {"peak_torch", "weights"} <= found.keys():
        found["activation_peak"] = found["peak_torch"] - found["weights"]
    if "max_model_len" not in found and "concurrency_len" in found:
        found["max_model_len"] = found["concurrency_len"]
    found.pop("concurrency_len", None)
    if not found.keys() & {"weights", "kv_cache", "blocks", "kv_cache_tokens",
                           "max_concurrency", "kv_needed"}:
        raise ValueError("text: not a vLLM start-up log (no 'Loading model weights took', "
                         "'KV cache', 'GPU blocks' or 'Maximum concurrency' line found)")
    return found


@dataclass(frozen=True)
class LogRow:
    """One figure of a log beside its prediction: ``difference = measured - predicted``."""

    term: str
    measured: float | None
    predicted: float
    unit: str
    explanation: str

    @property
    def difference(self) -> float | None:
        return None if self.measured is None else self.measured - self.predicted

    @property
    def relative(self) -> float | None:
        """``measured / predicted - 1`` (``None`` without a measurement)."""
        if self.measured is None or self.predicted == 0:
            return None
        return self.measured / self.predicted - 1


@dataclass(frozen=True)
class VLLMReconciliation:
    """A vLLM log read and predicted: ``rows`` term by term, ``budget`` the prediction."""

    measured: dict[str, float]
    budget: KVBudget
    rows: tuple[LogRow, ...]

    def table(self) -> str:
        """The rows as plain text (GiB for memory)."""
        lines = [f"{'term':24s}{'log':>14s}{'predicted':>14s}  why"]
        for row in self.rows:
            lines.append(f"{row.term:24s}{_show(row.measured, row.unit):>14s}"
                         f"{_show(row.predicted, row.unit):>14s}  {row.explanation}")
        return "\n".join(lines)


def _show(x: float | None, unit: str) -> str:
    if x is None:
        return "-"
    if unit == "bytes":
        return f"{x / GIB:.2f} GiB"
    return f"{x:,.2f}" if unit == "x" else f"{x:,.0f}"


def reconcile_vllm_log(text: str, model: object, gpu: object | None = None, *, tp: int = 1,
                       max_model_len: int | None = None, kv_dtype: str = "bf16",
                       weight_dtype: str = "bf16", max_num_batched_tokens: int | None = None,
                       max_num_seqs: int | None = None, block_size: int = 16,
                       usable_memory: float | None = None, engine: str | None = None,
                       vllm_version: str | None = None) -> VLLMReconciliation:
    """Set each memory figure of a vLLM start-up log beside the prediction, and explain.

    The device memory and ``gpu_memory_utilization`` come from the log when it prints them
    (they are inputs of vLLM's arithmetic, not results), else from ``usable_memory`` or the
    GPU; ``max_model_len`` from the log's concurrency line unless given. ``engine`` and
    ``vllm_version`` are the log's vLLM (:func:`~gpulesson.planning.serving.vllm_kv_rules`:
    how sliding-window layers are counted in blocks, tokens and concurrency); by default
    V0 when the log counts "GPU blocks" (V0's line), else the newest V1.
    """
    got = parse_vllm_log(text)
    if engine is None:
        engine = "V0" if "blocks" in got and "kv_cache_tokens" not in got else "V1"
    length = max_model_len or int(got.get("max_model_len", 0))
    if not length:
        raise ValueError("max_model_len: not in the log; give it")
    total = got.get("total_memory", usable_memory)
    util = got.get("utilization", 0.9)
    non_torch = got.get("non_torch", NON_TORCH_BYTES)
    budget = kv_budget(model, gpu, tp=tp, max_model_len=length, kv_dtype=kv_dtype,
                       weight_dtype=weight_dtype, gpu_memory_utilization=util,
                       usable_memory=total, max_num_batched_tokens=max_num_batched_tokens,
                       max_num_seqs=max_num_seqs, block_size=block_size,
                       non_torch_memory=non_torch, engine=engine,
                       vllm_version=vllm_version)
    gib = units.format_bytes

    def gap(key: str, predicted: float) -> str:
        if key not in got:
            return "not in the log"
        return f"{(got[key] - predicted) / GIB:+.2f} GiB"

    w_gap = got.get("weights", budget.weights) - budget.weights
    a_gap = got.get("activation_peak", budget.activation_peak) - budget.activation_peak
    if abs(w_gap) <= 0.02 * budget.weights:
        w_why = "the log adds buffers that are not parameters (rotary tables, padding)"
    elif weight_dtype in ("int4", "int8", "fp8"):
        w_why = ("a quantised checkpoint also stores scales and zero points, and may keep "
                 "more layers in 16 bits than the prediction")
    else:
        w_why = "the checkpoint's dtype or parameter count is not the prediction's"
    if abs(a_gap) <= 0.1 * budget.activation_peak:
        a_why = "the profiling pass's MLP, 3 ffn/tp + 3 h values per token"
    else:
        a_why = ("the profiling pass peaked elsewhere than the MLP: quantised kernels "
                 "dequantise weights into temporary buffers, a sampler over max_num_seqs "
                 "sequences, or a different max_num_batched_tokens")
    from_log = None
    if "kv_cache" in got:
        from_log = pool_blocks(got["kv_cache"], budget.kv_bytes_per_token,
                               model_view(model).cfg.layers, length, budget.groups,
                               block_size, vllm_kv_rules(engine, vllm_version)[1])[1]
    rows = [
        LogRow("usable x utilisation", total * util if total else None, budget.requested,
               "bytes", "an input: the device memory CUDA reports times gpu_memory_utilization"),
        LogRow("model weights", got.get("weights"), budget.weights, "bytes",
               f"{gap('weights', budget.weights)}: parameters x bytes per value / tp; {w_why}"),
        LogRow("activation peak", got.get("activation_peak"), budget.activation_peak, "bytes",
               f"{gap('activation_peak', budget.activation_peak)}: {a_why}"),
        LogRow("non-torch memory", got.get("non_torch"), budget.non_torch, "bytes",
               "taken from the log when it prints it (CUDA context, NCCL)"),
        LogRow("KV cache memory", got.get("kv_cache"), budget.kv_cache, "bytes",
               f"what is left over; the weights ({gib(w_gap, binary=True)} against the "
               f"prediction) and the activations ({gib(a_gap, binary=True)}) account for the "
               "difference"),
        LogRow("KV cache tokens", got.get("kv_cache_tokens", got["blocks"] * block_size
                                           if "blocks" in got else None),
               budget.kv_cache_tokens, "tokens",
               f"KV memory / {budget.kv_bytes_per_token:,.0f} bytes per token, whole blocks "
               f"of {block_size}"),
        LogRow("tokens from the log's KV", got.get("kv_cache_tokens", got["blocks"] * block_size
                                                    if "blocks" in got else None),
               float(from_log) if from_log is not None else budget.kv_cache_tokens, "tokens",
               "the log's own KV memory divided the same way: checks the bytes per token"),
        LogRow("maximum concurrency", got.get("max_concurrency"), budget.max_concurrency, "x",
               f"KV cache tokens / max_model_len ({length:,}): vLLM's definition"
               if budget.groups is None else
               f"KV blocks / the {budget.request_blocks(length):,} blocks one request of "
               f"max_model_len ({length:,}) takes: vLLM V1's definition"),
    ]
    return VLLMReconciliation(measured=got, budget=budget, rows=tuple(rows))


# ---------------------------------------------------------------------------------------
# nccl-tests

@dataclass(frozen=True)
class NCCLRow:
    """One row of an nccl-tests table (out-of-place columns): bytes, s, bytes/s."""

    size_bytes: int
    count: int
    dtype: str
    seconds: float
    algbw: float
    busbw: float


#: One data row, matched line by line (``[ \t]``, never ``\s``: a pattern that may span
#: newlines makes 100,000 blank lines quadratic): size, count, type, optional redop and
#: root, then the out-of-place time, algbw and busbw. Bounded repeats keep every match
#: linear in the line.
_ROW = re.compile(r"[ \t]{0,40}(?:\[\d{1,6}\][ \t]{0,40})?(\d{1,20})[ \t]+(\d{1,20})[ \t]+"
                  r"([a-z0-9_]{1,12})[ \t]+(?:([a-z]{1,8})[ \t]+)?(?:(-?\d{1,6})[ \t]+)?"
                  r"(\d{1,12}(?:\.\d{1,6})?)[ \t]+(\d{1,12}(?:\.\d{1,6})?)[ \t]+"
                  r"(\d{1,12}(?:\.\d{1,6})?)(?:[ \t]|$)")
#: A launcher's tag at the start of a line, left out before reading: Slurm's task label
#: (``srun --label``: ``0: ``) or Open MPI's ``--tag-output`` (``[1,0]<stdout>:``).
_TAG = re.compile(r"^[ \t]{0,40}(?:\d{1,6}:|\[\d{1,9},\d{1,9}\]<std(?:out|err)>:)[ \t]?", re.M)
#: The column header nccl-tests prints above its rows (``#  size  count  type ... busbw``).
_HEADER = re.compile(r"#.{0,200}\bsize\b.{0,200}\bcount\b.{0,200}\bbusbw\b")
_DTYPE_BYTES = {"float": 4, "double": 8, "half": 2, "bfloat16": 2, "int8": 1, "uint8": 1,
                "int32": 4, "uint32": 4, "int64": 8, "uint64": 8}
_COLLECTIVE = re.compile(r"(all_reduce|all_gather|reduce_scatter|alltoall|broadcast|reduce|"
                         r"sendrecv)_perf")
#: Longest text read (a full nccl-tests log with NCCL_DEBUG=INFO of a large job is a few MB).
MAX_LOG_CHARS = 20_000_000


def _check_text(text: object) -> str:
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if len(text) > MAX_LOG_CHARS:
        raise ValueError(f"text must be at most {MAX_LOG_CHARS:,} characters, got "
                         f"{len(text):,}")
    return text


def _untagged(text: object) -> str:
    """An nccl-tests output without its launcher's line tags (:data:`_TAG`)."""
    return _TAG.sub("", _check_text(text))


def _row(number: int, line: str, hit: re.Match[str]) -> NCCLRow | None:
    """The row of a matched line, ``None`` for a zero size or time; ``ValueError`` when its
    columns contradict each other (algbw is not size / time, busbw not a bus factor of
    algbw): a line that only looks like a row is refused, never read."""
    size, count, dtype = int(hit.group(1)), int(hit.group(2)), hit.group(3)
    if dtype not in _DTYPE_BYTES:
        raise ValueError(f"text: line {number} is not an nccl-tests row (unknown type "
                         f"{dtype!r}; known: {', '.join(_DTYPE_BYTES)}): {line[:80]!r}")
    if size != count * _DTYPE_BYTES[dtype]:
        # early nccl-tests runs with -g 2 printed the bytes of all GPUs of the process;
        # the buffer is count elements
        size = count * _DTYPE_BYTES[dtype]
    us, algbw, busbw = float(hit.group(6)), float(hit.group(7)), float(hit.group(8))
    if size == 0 or us <= 0:
        return None
    expected = size / us / 1e3  # GB/s
    printed = int(hit.group(1)) / us / 1e3
    if min(abs(algbw - expected), abs(algbw - printed)) > 0.011 + 0.03 * algbw or not (
            algbw * 0.49 - 0.011 <= busbw <= 2 * algbw + 0.011):
        raise ValueError(f"text: line {number} is not an nccl-tests row (its algbw {algbw:g} "
                         f"GB/s is not size / time = {expected:.3g} GB/s, or its busbw "
                         f"{busbw:g} is not 0.5-2x algbw): {line[:80]!r}")
    return NCCLRow(size, count, dtype, us * 1e-6, algbw * 1e9, busbw * 1e9)


def parse_nccl_tests(text: str) -> tuple[str | None, list[NCCLRow]]:
    """``(collective or None, rows)`` of an nccl-tests output.

    The rows must follow nccl-tests' column header (a ``#`` line naming ``size``, ``count``
    and ``busbw``); ``#`` lines, NCCL INFO lines and anything that does not start like a
    row are skipped, and a launcher's tag before each line (``srun --label``'s ``0: ``,
    Open MPI's ``[1,0]<stdout>:``) is left out. ``ValueError`` without the header, without
    a row, or for a line that starts like a row but whose columns contradict each other.
    Linear in the text.
    """
    return _parse_nccl_tests(_untagged(text))


def _parse_nccl_tests(text: str) -> tuple[str | None, list[NCCLRow]]:
    """:func:`parse_nccl_tests` of a text already checked and untagged."""
    rows: list[NCCLRow] = []
    header = False
    for number, line in enumerate(text.splitlines(), 1):
        if not header:
            header = line.lstrip().startswith("#") and bool(_HEADER.match(line.lstrip()))
            continue
        hit = _ROW.match(line)
        if hit:
            row = _row(number, line, hit)
            if row is not None:
                rows.append(row)
    if not header:
        raise ValueError("text: not an nccl-tests output (no '#  size  count  type ... busbw' "
                         "column header found)")
    if not rows:
        raise ValueError("text: not an nccl-tests table (no 'size count type ... time algbw "
                         "busbw' row found)")
    name = _COLLECTIVE.search(text)
    return (name.group(1) if name else None), rows


def alpha_beta_fit(sizes_bytes: list[float], seconds: list[float], *,
                   collective: str = "all_reduce", n_ranks: int) -> tuple[float, float]:
    """Fit ``t = alpha + factor * S / beta`` to measured times: ``(alpha, beta)``.

    Least squares on residuals relative to each time (weights ``1/t``, so that every size
    counts, not just the largest), refitted through the origin if ``alpha`` comes out
    negative: the fit of :func:`gpulesson.collectives.fit_alpha_beta`, in the standard
    library so that the site can run it. ``beta`` is the bus bandwidth (bytes/s).
    """
    if len(sizes_bytes) != len(seconds) or len(seconds) < 2:
        raise ValueError(f"sizes_bytes and seconds must hold the same number (>= 2) of "
                         f"points, got {len(sizes_bytes)} and {len(seconds)}")
    f = distributed.bus_bandwidth_factor(collective, n_ranks)
    xs = [f * v.positive_number("sizes_bytes", s) for s in sizes_bytes]
    ts = [v.positive_number("seconds", t) for t in seconds]
    if len(set(xs)) < 2:
        raise ValueError("sizes_bytes must hold at least 2 different sizes")
    w2 = [1 / (t * t) for t in ts]
    sw, sx = sum(w2), sum(w * x for w, x in zip(w2, xs, strict=True))
    sxx = sum(w * x * x for w, x in zip(w2, xs, strict=True))
    st_ = sum(w * t for w, t in zip(w2, ts, strict=True))
    sxt = sum(w * x * t for w, x, t in zip(w2, xs, ts, strict=True))
    det = sw * sxx - sx * sx
    alpha, slope = (sxx * st_ - sx * sxt) / det, (sw * sxt - sx * st_) / det
    if alpha < 0:
        alpha, slope = 0.0, sxt / sxx
    if slope <= 0:
        raise ValueError("seconds: the times do not grow with size, no bandwidth can be fitted")
    return alpha, 1 / slope


@dataclass(frozen=True)
class NCCLReconciliation:
    """An nccl-tests log fitted and set beside the link's prediction."""

    collective: str
    n_ranks: int
    rows: tuple[NCCLRow, ...]
    alpha: float
    beta: float
    peak_busbw: float
    predicted_busbw: float
    line_rate: float
    tier: str
    explanation: str

    @property
    def ratio(self) -> float:
        """Fitted bus bandwidth over the predicted achievable one."""
        return self.beta / self.predicted_busbw


#: Most ranks the busbw/algbw ratio can tell apart: its two printed decimals cannot
#: resolve 2(n-1)/n beyond a few hundred ranks.
MAX_INFERRED_RANKS = 128


def _ranks_from(rows: list[NCCLRow], collective: str) -> int:
    """The rank count nccl-tests' busbw/algbw ratio implies (2(n-1)/n or (n-1)/n);
    ``ValueError`` asking for ``n_ranks`` when the ratio cannot tell."""
    big = max(rows, key=lambda r: r.size_bytes)
    ratio = big.busbw / big.algbw if big.algbw else 1.0
    n = 1
    if collective == "all_reduce":
        n = max(round(2 / (2 - ratio)), 1) if ratio < 2 else MAX_INFERRED_RANKS + 1
    elif collective in ("all_gather", "reduce_scatter", "alltoall"):
        n = max(round(1 / (1 - ratio)), 1) if ratio < 1 else MAX_INFERRED_RANKS + 1
    if n > MAX_INFERRED_RANKS:
        raise ValueError(f"n_ranks: the busbw/algbw ratio ({ratio:.4f}) cannot tell a rank "
                         f"count above {MAX_INFERRED_RANKS}; give n_ranks")
    return n


def _ranks_per_host(text: str) -> int | None:
    """GPUs per host from nccl-tests' ``#  Rank  N Group G Pid P on HOST device`` lines
    (``None`` without them, or when hosts hold different numbers of ranks)."""
    counts: dict[str, int] = {}
    for line in text.splitlines():
        hit = _RANK_LINE.match(line)
        if hit:
            counts[hit.group(1)] = counts.get(hit.group(1), 0) + 1
    sizes = set(counts.values())
    return sizes.pop() if len(sizes) == 1 else None


_RANK_LINE = re.compile(r"#\s{0,8}Rank\s{1,8}\d{1,9}\s.{0,80}?\son\s{1,40}(\S{1,200})\s{1,8}device")


def reconcile_nccl_tests(text: str, *, line_rate: float, tier: str = "nvlink",
                         collective: str | None = None, n_ranks: int | None = None,
                         min_size: int = 0, gpus_per_node: int | None = None,
                         nvlink_line_rate: float | None = None) -> NCCLReconciliation:
    """Fit alpha and beta to an nccl-tests table and compare with the link.

    ``line_rate`` is the link's one-way bandwidth per GPU (bytes/s: 450e9 for H100 NVLink,
    50e9 for a 400 Gb/s NIC), ``tier`` ``"nvlink"`` or ``"network"``; the prediction is
    :func:`gpulesson.distributed.achievable_bandwidth`. Across nodes (``tier="network"``)
    every GPU brings its own NIC of ``line_rate``: with ``gpus_per_node`` GPUs per node (from
    the ``# Rank ... on HOST`` lines when not given) the ring leaves each node through that
    many NICs, bounded by the NVLink inside it when ``nvlink_line_rate`` is given
    (:func:`gpulesson.network.ring_bus_bandwidth`). The rank count comes from the
    ``# Rank`` lines, else from the busbw/algbw ratio. Rows below ``min_size`` bytes are left
    out of the fit.
    """
    rate = v.positive_number("line_rate", line_rate)
    kind = v.choice("tier", tier, distributed.TIERS)
    if n_ranks is not None:
        v.positive_int("n_ranks", n_ranks)
    size_floor = v.nonneg_int("min_size", min_size)
    text = _untagged(text)
    found, rows = _parse_nccl_tests(text)
    name = collective or found or "all_reduce"
    distributed.bus_bandwidth_factor(name, 2)  # refuse an unknown collective by name
    name = {"allreduce": "all_reduce"}.get(name, name)
    ranks = len(re.findall(r"^#[ \t]*Rank[ \t]+\d", text, re.M))
    n = n_ranks or ranks or _ranks_from(rows, name)
    used = [r for r in rows if r.size_bytes >= size_floor]
    if not used:
        raise ValueError(f"min_size must be at most the largest size in the table "
                         f"({max(r.size_bytes for r in rows):,} bytes), got {size_floor:,}")
    alpha, beta = alpha_beta_fit([r.size_bytes for r in used], [r.seconds for r in used],
                                 collective=name, n_ranks=n)
    predicted = distributed.achievable_bandwidth(rate, kind)
    per_node = None
    if kind == "network":
        per_node = (v.positive_int("gpus_per_node", gpus_per_node) if gpus_per_node is not None
                    else _ranks_per_host(text))
    if per_node and per_node < n:
        nv = (v.positive_number("nvlink_line_rate", nvlink_line_rate)
              if nvlink_line_rate is not None else None)
        predicted = network.ring_bus_bandwidth(
            n, gpus_per_domain=per_node, nvlink_line_rate=nv, nic_line_rate=rate).bus_bandwidth
        rate = rate * per_node  # the node's NICs together
    peak = max(r.busbw for r in rows)
    ratio = beta / predicted
    if ratio > 1.1 and name == "all_reduce" and kind == "nvlink":
        why = (f"above what a ring can carry on this link ({units.format_bandwidth(predicted)}):"
               " the switches add the data in flight (NVLink SHARP), so each GPU sends its "
               "buffer once instead of 2(n-1)/n times")
    elif peak > 1.1 * predicted and name == "all_reduce":
        # read on the largest size's own bus bandwidth: a ring of many ranks, whose latency
        # is pipelined with its data, can fit a beta above what any of its rows reached
        how = ("on exactly two nodes NCCL's tree (NVLSTree on NVSwitch servers) beats the "
               "ring, whose bus bandwidth the network bounds" if per_node and n == 2 * per_node
               else "the network adds the data in flight (SHARP, NCCL's CollNet), or NCCL "
               "chose a tree")
        why = (f"the largest size reaches {peak / predicted:.0%} of what a ring can carry "
               f"across these nodes ({units.format_bandwidth(predicted)}): {how}; "
               "NCCL_ALGO=Ring measures the ring alone")
    elif peak > 1.1 * predicted:
        why = (f"the largest size reaches {peak / predicted:.0%} of the achievable "
               f"{units.format_bandwidth(predicted)}: faster than the line rate given allows;"
               " check line_rate (one direction, per GPU)")
    elif ratio > 0.85:
        share = predicted / rate
        # rows within the bound, but the line fitted through them above it: the rows are
        # what the log reached
        above = ratio > 1.1
        reached = f"the largest size reaches {peak / predicted:.0%}" if above else f"{ratio:.0%}"
        why = (f"{reached} of the achievable {units.format_bandwidth(predicted)} "
               f"({share:.0%} of the {units.format_bandwidth(rate)} line rate): as the "
               "topology predicts")
        if above:
            why += (f". The fitted beta, {units.format_bandwidth(beta)}, is above what any "
                    "row reached: the straight line through the sizes overstates it")
    else:
        share = beta / rate
        why = (f"only {ratio:.0%} of the achievable {units.format_bandwidth(predicted)}: the "
               f"data moves at {share:.0%} of the stated line rate, as if fewer links were "
               "working (a bridge seated on some links only, or traffic through PCIe): check "
               "nvidia-smi topo -m and nvidia-smi nvlink --status")
    return NCCLReconciliation(collective=name, n_ranks=n, rows=tuple(rows), alpha=alpha,
                              beta=beta, peak_busbw=peak, predicted_busbw=predicted,
                              line_rate=rate, tier=kind, explanation=why)


v.guard_module(globals())
