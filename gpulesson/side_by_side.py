"""This machine beside a datasheet GPU, and one dense layer timed on it (lesson 1).

Lesson 1 sets the computer it runs on next to an H100's datasheet, then times a
``d × d`` layer at a small and a large batch and places both on this machine's roofline.
The code lives here so that the lesson shows what it computes, not how it prints (numpy
and the benchmark are imported only by :func:`time_layer`, which times):

* :func:`side_by_side` tabulates measured against datasheet figures and says how the
  arithmetic advantage compares with the bandwidth advantage;
* :func:`time_layer` times ``X @ W`` at each batch, reading the weights from main memory at
  batch 1 (on a CPU it cycles through copies of ``W`` that together are twice the
  last-level cache, so each copy has left the cache before it comes round again).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpulesson import gemm, units

#: Ratios within this factor of each other are "of the same order".
SAME_ORDER = 3.0


def _ratio(big: float, small: float) -> str:
    return f"{big / small:,.0f}x"


def _bytes_both(n_bytes: float) -> str:
    """Decimal and binary together, so that "25.3 GB" and "23.5 GiB" never meet apart.

    Only for a measured byte count: a datasheet's capacity is a label (see
    :func:`side_by_side`)."""
    return (f"{units.format_bytes(n_bytes, digits=1)} "
            f"({units.format_bytes(n_bytes, binary=True, digits=1)})")


def side_by_side(mine: Any, gpu: Any) -> str:
    """A table of this machine's measured figures against ``gpu``'s datasheet, and two
    lines on how its arithmetic and bandwidth advantages compare.

    ``mine`` is a :class:`~gpulesson.machine.MachineSpec` (FP32 measured), ``gpu`` a
    :class:`~gpulesson.hardware.GPUSpec` (dense peaks).
    """
    rows = [
        ("FP32 arithmetic", units.format_flop_rate(mine.dense("fp32")),
         units.format_flop_rate(gpu.dense("fp32")),
         _ratio(gpu.dense("fp32"), mine.dense("fp32"))),
        ("16-bit matrix, dense", "(not in numpy)",
         units.format_flop_rate(gpu.dense("bf16")),
         _ratio(gpu.dense("bf16"), mine.dense("fp32"))),
        # a measured figure to one decimal, like the FP32 rate: "48.8 GB/s", not "48.80"
        ("memory bandwidth", units.format_bandwidth(mine.bandwidth, digits=1),
         units.format_bandwidth(gpu.bandwidth),
         _ratio(gpu.bandwidth, mine.bandwidth)),
    ]
    if mine.memory_bytes:
        # the GPU's figure as its datasheet prints it ("80 GB"): a label, not 80e9 bytes
        # (an H100 SXM's driver reports 81,559 MiB, 79.6 GiB), so no GiB beside it
        rows.append(("memory capacity", _bytes_both(mine.memory_bytes),
                     units.format_bytes(gpu.memory_bytes, digits=0),
                     _ratio(gpu.memory_bytes, mine.memory_bytes)))
    lines = [f"{'':21s}{'this machine':>22s}{gpu.name:>22s}{'ratio':>8s}",
             f"{'':21s}{'(measured)':>22s}{'(datasheet)':>22s}"]
    lines += [f"{what:21s}{here:>22s}{there:>22s}{r:>8s}" for what, here, there, r in rows]
    arithmetic = gpu.dense("fp32") / mine.dense("fp32")
    tensor = gpu.dense("bf16") / mine.dense("fp32")
    delivery = gpu.bandwidth / mine.bandwidth
    if max(arithmetic, delivery) / min(arithmetic, delivery) < SAME_ORDER:
        verdict = "of the same order"
    else:
        verdict = "arithmetic far ahead" if arithmetic > delivery else "bandwidth far ahead"
    lines += ["", f"FP32: arithmetic {arithmetic:,.0f}x, bandwidth {delivery:,.0f}x: {verdict}",
              f"16-bit Tensor Cores: arithmetic {tensor:,.0f}x, "
              f"{tensor / delivery:,.0f} times the bandwidth advantage"]
    return "\n".join(lines)


@dataclass(frozen=True)
class LayerTiming:
    """The timings of :func:`time_layer`: one :class:`BenchResult` per batch, each over
    ``copies[batch]`` weight matrices (FLOPs and bytes counted for all of them)."""

    d: int
    runs: dict[int, Any]   # gpulesson.bench.BenchResult
    copies: dict[int, int]

    def best_rate(self, batch: int) -> float:
        """FLOP/s of the fastest run: like the machine's peaks, what the hardware did
        when nothing else competed for it."""
        run = self.runs[batch]
        return run.flops / run.min


def weight_copies(d: int, *, on_gpu: bool, cache_bytes: int | None = None,
                  bytes_per_element: int = 4) -> int:
    """How many ``d × d`` weight matrices batch 1 cycles through so that each is read
    from main memory: on a CPU, enough to fill twice the last-level cache (at most 1 GiB,
    at least 2); on a GPU one (its L2 cache is far smaller than one matrix)."""
    if d < 1:
        raise ValueError(f"d must be a positive matrix size, got {d!r}")
    if on_gpu:
        return 1
    if cache_bytes is None:
        from gpulesson.machine import last_level_cache_bytes  # numpy: imported when used

        cache_bytes = last_level_cache_bytes()
    llc = cache_bytes or 32 * 2**20
    one = bytes_per_element * d * d
    return max(2, -(-min(2 * llc, 2**30) // one))   # rounded up


def time_layer(device: Any, d: int = 4096, batches: tuple[int, ...] = (1, 256), *,
               seed: int = 42, repeats: int = 3, min_time: float = 0.03) -> LayerTiming:
    """Time a float32 ``(batch × d) @ (d × d)`` layer at each batch on ``device``.

    Batch 1 reads its weights from main memory (:func:`weight_copies`); larger batches use
    one matrix, which they reuse for every row.
    """
    import numpy as np  # this module stays importable without numpy (test_package.py)

    from gpulesson.bench import benchmark

    xp = device.xp
    rng = np.random.default_rng(seed)
    w = xp.asarray(rng.standard_normal((d, d), dtype=np.float32))
    stack_size = weight_copies(d, on_gpu=device.is_gpu)
    stack = [w] + [w.copy() for _ in range(stack_size - 1)]
    runs, copies = {}, {}
    for batch in batches:
        weights = stack if batch == 1 else [w]
        x = xp.asarray(rng.standard_normal((batch, d), dtype=np.float32))
        runs[batch] = benchmark(
            lambda x=x, ws=weights: [x @ m for m in ws], repeats=repeats, min_time=min_time,
            device=device, flops=len(weights) * gemm.flops(batch, d, d),
            bytes=len(weights) * gemm.min_bytes(batch, d, d, bytes_per_element=4),
            name=f"layer {batch}x{d} @ {d}x{d} (float32), {len(weights)} cop(ies)")
        copies[batch] = len(weights)
    return LayerTiming(d, runs, copies)


__all__ = ["SAME_ORDER", "LayerTiming", "side_by_side", "time_layer", "weight_copies"]
