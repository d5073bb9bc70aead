"""Optimisations that change the math: FlashAttention, checkpointing, mixed precision.

FlashAttention IO complexity (Dao et al. 2022, Algorithms 0 and 1, Theorem 2)
-------------------------------------------------------------------------------
Standard attention writes the ``N x N`` score and probability matrices to HBM and reads
them back: ``Theta(N*d + N^2)`` accesses. FlashAttention tiles ``Q``, ``K``, ``V`` into
on-chip SRAM of ``M`` elements and never materialises them: ``Theta(N^2 * d^2 / M)``
accesses. The functions below count Algorithm 0's and Algorithm 1's HBM reads and writes
line by line (one head, forward pass).

Gradient checkpointing (Chen et al. 2016, *Training Deep Nets with Sublinear Memory
Cost*)
------------------------------------------------------------------------------------------
Split ``L`` layers into ``k`` segments, store only the segment boundaries, and recompute
one segment at a time in the backward pass: memory ``~ k + L/k`` layers, smallest at
``k = sqrt(L)``, ``2*sqrt(L)`` layers (``O(sqrt(L))``), for the cost of one extra forward
pass: about 1/3 more FLOPs (forward 2N of the 6N per token), not the 20 % sometimes
quoted.

Mixed precision (Micikevicius et al. 2018)
------------------------------------------
With Adam it saves no model-state memory (16 bytes per parameter either way; ZeRO
paper section 3.1); it halves activation memory and runs on tensor cores.

Taught in: ``notebooks/optimisations.ipynb``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpulesson import _validate as v
from gpulesson import flops, memory

__all__ = [
    "AttentionOnGPU",
    "MixedPrecisionSavings",
    "activation_memory_without_checkpointing",
    "attention_on_gpu",
    "checkpoint_memory",
    "flash_attention_hbm_bytes",
    "flash_attention_tiles",
    "mixed_precision_savings",
    "optimal_segments",
    "recompute_overhead",
    "standard_attention_hbm_bytes",
]


def standard_attention_hbm_bytes(
    *, seq_len: int, head_dim: int, batch: int = 1, heads: int = 1,
    bytes_per_element: float = 2,
) -> int:
    """HBM bytes read and written by standard attention (Dao et al. 2022, Algorithm 0).

    Per head: read Q, K (``2Nd``), write S (``N^2``); read S, write P (``2N^2``); read P
    and V (``N^2 + Nd``), write O (``Nd``): ``4*N*d + 4*N^2`` elements.
    """
    n = v.positive_int("seq_len", seq_len)
    d = v.positive_int("head_dim", head_dim)
    b = v.positive_int("batch", batch)
    h = v.positive_int("heads", heads)
    e = v.positive_number("bytes_per_element", bytes_per_element)
    return v.tensor_bytes((4 * n * d + 4 * n * n) * b * h, e)


def flash_attention_tiles(*, seq_len: int, head_dim: int, sram_bytes: float,
                          bytes_per_element: float = 2) -> tuple[int, int, int]:
    """Algorithm 1's block sizes and outer-loop count: ``(B_c, B_r, T_c)``.

    ``M = sram_bytes / bytes_per_element`` elements, ``B_c = ceil(M / 4d)``,
    ``B_r = min(B_c, d)``, ``T_c = ceil(N / B_c)``.
    """
    n = v.positive_int("seq_len", seq_len)
    d = v.positive_int("head_dim", head_dim)
    sram = v.positive_number("sram_bytes", sram_bytes)
    e = v.positive_number("bytes_per_element", bytes_per_element)
    m = int(sram // e)
    if m < 1:
        raise ValueError(f"sram_bytes must hold at least one element, got {sram!r}")
    block_c = -(-m // (4 * d))
    block_r = min(block_c, d)
    return block_c, block_r, -(-n // block_c)


def flash_attention_hbm_bytes(
    *, seq_len: int, head_dim: int, sram_bytes: float, batch: int = 1, heads: int = 1,
    bytes_per_element: float = 2,
) -> int:
    """HBM bytes read and written by FlashAttention's forward pass (Algorithm 1).

    Per head: initialise O, l, m in HBM (``Nd + 2N``); each of the ``T_c`` outer
    iterations loads one K and V block (``2Nd`` over all of them) and sweeps all row
    blocks, reading Q, O, l, m and writing O, l, m (``3Nd + 4N``). Total
    ``3Nd + 2N + T_c*(3Nd + 4N)`` elements with ``T_c = ceil(4Nd / M)``: Theorem 2's
    ``Theta(N^2 d^2 / M)``. Statistics are counted at ``bytes_per_element`` like the rest.
    """
    n = v.positive_int("seq_len", seq_len)
    d = v.positive_int("head_dim", head_dim)
    b = v.positive_int("batch", batch)
    h = v.positive_int("heads", heads)
    e = v.positive_number("bytes_per_element", bytes_per_element)
    _, _, t_c = flash_attention_tiles(seq_len=n, head_dim=d, sram_bytes=sram_bytes,
                                      bytes_per_element=e)
    elements = 3 * n * d + 2 * n + t_c * (3 * n * d + 4 * n)
    return v.tensor_bytes(elements * b * h, e)


@dataclass(frozen=True)
class AttentionOnGPU:
    """One attention forward pass, standard (Algorithm 0) and FlashAttention (Algorithm 1),
    on one GPU: FLOPs, HBM bytes, roofline times and the memory kept for backward.

    Attributes
    ----------
    flops : float
        ``4 * N^2 * d`` per head (``QK^T`` and ``PV``), the same for both.
    standard_bytes, flash_bytes : int
        HBM bytes read and written (:func:`standard_attention_hbm_bytes`,
        :func:`flash_attention_hbm_bytes`).
    standard_time, flash_time : float
        Roofline seconds, ``max(flops / peak, bytes / bandwidth)``.
    standard_memory, flash_memory : int
        Bytes kept for the backward pass beyond ``Q``, ``K``, ``V`` and the output: the
        ``N x N`` probabilities per head, or one FP32 log-sum-exp per row (FlashAttention-2
        and PyTorch's SDPA; the first FlashAttention kept two statistics per row).
    """

    flops: float
    standard_bytes: int
    flash_bytes: int
    standard_time: float
    flash_time: float
    standard_memory: int
    flash_memory: int

    @property
    def time_saved(self) -> float:
        """``standard_time - flash_time``, seconds."""
        return self.standard_time - self.flash_time

    @property
    def memory_saved(self) -> int:
        """``standard_memory - flash_memory``, bytes."""
        return self.standard_memory - self.flash_memory


def attention_on_gpu(*, seq_len: int, head_dim: int, sram_bytes: float, peak_flops: float,
                     bandwidth: float, batch: int = 1, heads: int = 1,
                     bytes_per_element: float = 2) -> AttentionOnGPU:
    """Standard attention against FlashAttention on a GPU: time and memory saved.

    Both do the same ``4*N^2*d`` FLOPs per head; standard attention moves
    ``4Nd + 4N^2`` elements through HBM (Algorithm 0) and FlashAttention
    ``Theta(N^2 d^2 / M)`` (Algorithm 1), so on the roofline the standard kernel is
    memory-bound long before FlashAttention is (Dao et al. 2022, section 3.2: "IO-aware").
    For the backward pass, standard attention keeps the ``N x N`` probabilities
    (``bytes_per_element`` each); FlashAttention keeps one FP32 statistic per row and
    recomputes the scores. GPT-2 medium's attention (N = 1,024, d = 64, 16 heads, batch 64,
    FP16) on an A100 40GB (1.555 TB/s): 9.1 GB of HBM traffic, 5.9 ms, and 2.15 GB kept,
    against 1.6 GB, 1.05 ms, and 4.2 MB.

    Parameters
    ----------
    seq_len, head_dim, batch, heads, bytes_per_element
        As in :func:`standard_attention_hbm_bytes`.
    sram_bytes : float
        On-chip SRAM of one SM (:func:`flash_attention_tiles`).
    peak_flops, bandwidth : float
        The GPU's dense peak for the precision, FLOP/s, and its HBM bandwidth, bytes/s.
    """
    shape = dict(seq_len=seq_len, head_dim=head_dim, batch=batch, heads=heads,
                 bytes_per_element=bytes_per_element)
    standard = standard_attention_hbm_bytes(**shape)  # type: ignore[arg-type]
    flash = flash_attention_hbm_bytes(sram_bytes=sram_bytes, **shape)  # type: ignore[arg-type]
    p = v.positive_number("peak_flops", peak_flops)
    bw = v.positive_number("bandwidth", bandwidth)
    n, d, rows = seq_len, head_dim, batch * heads
    f = 4.0 * n * n * d * rows
    return AttentionOnGPU(
        flops=f, standard_bytes=standard, flash_bytes=flash,
        standard_time=max(f / p, standard / bw), flash_time=max(f / p, flash / bw),
        standard_memory=v.tensor_bytes(n * n * rows, bytes_per_element),
        flash_memory=4 * n * rows)


def optimal_segments(layers: int) -> int:
    """Number of segments ``k`` that minimises :func:`checkpoint_memory`, about sqrt(L).

    Chen et al. 2016 (section 4.1) set ``k = sqrt(n)``. Because ``k + ceil(L/k)`` is flat
    near its minimum, several ``k`` often give the same memory (32 layers: 4, 5 and 6 all
    keep 12 layers' worth; 96 layers: 8 to 12 all keep 20); among those this returns the
    one nearest ``sqrt(L)`` (6 for 32 layers, 10 for 96), the paper's choice. Every tied
    ``k`` recomputes the same single forward pass, so the tie costs nothing either way.
    """
    n = v.positive_int("layers", layers)
    root = math.sqrt(n)
    candidates = range(max(1, math.isqrt(n) - 2), min(n, math.isqrt(n) + 3) + 1)
    # |k - sqrt(L)| never ties: sqrt of an integer is never a half-integer
    return min(candidates, key=lambda k: (k + -(-n // k), abs(k - root)))


def activation_memory_without_checkpointing(*, layers: int, per_layer_bytes: float) -> float:
    """Activation memory kept for the backward pass without checkpointing, bytes.

    Every layer's activations stay in memory from the forward pass until the backward
    pass reaches them: ``L * per_layer_bytes`` (Chen et al. 2016, the ``O(n)`` baseline).
    Note that :func:`checkpoint_memory` with ``segments=1`` is *not* this: a single
    segment also keeps its checkpoint (its input), ``L + 1`` layers' worth.
    """
    n = v.positive_int("layers", layers)
    b = v.positive_number("per_layer_bytes", per_layer_bytes)
    return n * b


def checkpoint_memory(*, layers: int, per_layer_bytes: float,
                      segments: int | None = None) -> float:
    """Activation memory with segment checkpointing (Chen et al. 2016), bytes.

    Split ``L`` layers into ``k`` segments, keep one checkpoint (a layer's worth of
    activations) at the start of each segment, and during backward hold the activations
    of the one segment being recomputed, ``ceil(L/k)`` layers:
    ``(k + ceil(L/k)) * per_layer_bytes``, the paper's ``L/k + k``. ``segments=None`` picks
    the best ``k`` (:func:`optimal_segments`, about ``sqrt(L)``), giving about
    ``2*sqrt(L)`` layers instead of the ``L`` stored without checkpointing
    (:func:`activation_memory_without_checkpointing`). ``k = 1`` and ``k = L`` both keep
    ``L + 1`` layers' worth: they save nothing.
    """
    n = v.positive_int("layers", layers)
    b = v.positive_number("per_layer_bytes", per_layer_bytes)
    k = optimal_segments(n) if segments is None else v.positive_int("segments", segments)
    if k > n:
        raise ValueError(f"segments must be at most layers ({n}), got {k}")
    return (k + -(-n // k)) * b


def recompute_overhead(
    *,
    recompute: str = "full",
    n_params: float | None = None,
    layers: int | None = None,
    heads: int | None = None,
    head_dim: int | None = None,
    seq_len: int | None = None,
) -> float:
    """Extra FLOPs of activation recomputation as a fraction of the model FLOPs.

    ``"full"``: one more forward pass, ``8N/6N - 1 = 1/3`` (attention included, it
    scales the same way). With ``n_params`` it needs the attention shape
    (``layers``, ``heads``, ``head_dim``, ``seq_len``) and counts the attention term too.
    ``"selective"`` (Korthikanti et al. 2022) recomputes only the attention score
    products: ``4LHQT / (6N + 12LHQT)``; it needs ``n_params`` and the attention shape.
    ``"none"``: 0.
    """
    mode = v.choice("recompute", recompute, memory.RECOMPUTE_MODES)
    # every argument given is checked, whatever the mode needs of it
    n_params = None if n_params is None else v.positive_number("n_params", n_params)
    layers, heads, head_dim, seq_len = (
        None if value is None else v.positive_int(name, value)
        for name, value in (("layers", layers), ("heads", heads), ("head_dim", head_dim),
                            ("seq_len", seq_len)))
    if mode == "none":
        return 0.0
    if mode == "full" and n_params is None:
        return 1 / 3
    missing = [name for name, value in (("n_params", n_params), ("layers", layers),
                                        ("heads", heads), ("head_dim", head_dim),
                                        ("seq_len", seq_len)) if value is None]
    if missing:
        if mode == "full":
            raise ValueError(
                "recompute='full' with n_params needs the attention shape as well (layers, "
                f"heads, head_dim and seq_len); missing: {', '.join(missing)}. Leave out "
                "n_params for the shape-free 1/3.")
        raise ValueError(f"recompute='selective' needs n_params, layers, heads, head_dim "
                         f"and seq_len; missing: {', '.join(missing)}")
    shape = {"layers": layers, "heads": heads, "head_dim": head_dim, "seq_len": seq_len}
    model = flops.flops_per_token(n_params, **shape)
    hardware = flops.hardware_flops_per_token(n_params, recompute=mode, **shape)
    return hardware / model - 1


@dataclass(frozen=True)
class MixedPrecisionSavings:
    """Training memory in FP32 and in mixed precision, and the difference (bytes)."""

    fp32_bytes: float
    mixed_bytes: float
    saved_bytes: float
    saved_fraction: float


def mixed_precision_savings(
    *, n_params: float, activation_bytes_fp32: float = 0, optimizer: str = "adam"
) -> MixedPrecisionSavings:
    """Memory saved by mixed precision: model state plus activations, FP32 vs mixed.

    Model state uses :func:`gpulesson.memory.bytes_per_param`: 16 bytes per parameter in
    both with Adam (8 and 8 with plain SGD), because mixed precision keeps an FP32 master
    copy, so the saving is all in the activations, which halve (16-bit instead of 32-bit).
    """
    n = v.positive_number("n_params", n_params)
    act = v.nonneg_number("activation_bytes_fp32", activation_bytes_fp32)
    fp32 = n * memory.bytes_per_param("fp32", optimizer) + act
    mixed = n * memory.bytes_per_param("mixed", optimizer) + act / 2
    return MixedPrecisionSavings(fp32_bytes=fp32, mixed_bytes=mixed, saved_bytes=fp32 - mixed,
                                 saved_fraction=(fp32 - mixed) / fp32)


v.guard_module(globals())
