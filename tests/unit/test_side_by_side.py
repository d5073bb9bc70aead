"""``gpulesson.side_by_side``: lesson 1's machine-against-datasheet table and layer timing."""

from __future__ import annotations

import dataclasses

import pytest

from gpulesson import gemm, hardware
from gpulesson.device import cpu_device
from gpulesson.machine import MachineSpec
from gpulesson.side_by_side import side_by_side, time_layer, weight_copies

H100 = hardware.gpu("H100 SXM")


def _laptop(fp32: float, bandwidth: float, memory: int | None = 16 * 2**30) -> MachineSpec:
    return MachineSpec(name="a laptop", memory_bytes=memory, bandwidth=bandwidth,
                       peak_flops={"fp32": fp32})


def test_the_ratios_are_the_datasheet_over_the_measurement() -> None:
    # NVIDIA H100 whitepaper (2022), SXM5: 66.9 TFLOP/s FP32, 989.4 dense BF16, 3.35 TB/s
    table = side_by_side(_laptop(fp32=66.9e9, bandwidth=33.5e9), H100)
    assert "1,000x" in table and "100x" in table  # arithmetic and bandwidth ratios
    assert "FP32: arithmetic 1,000x, bandwidth 100x: arithmetic far ahead" in table
    assert "16-bit Tensor Cores: arithmetic 14,789x, 148 times the bandwidth advantage" in table
    # review 3, 1.6: no padded digits on a measured figure ("33.5 GB/s", not "33.50 GB/s")
    assert "33.5 GB/s" in table and "33.50" not in table and "3.35 TB/s" in table


def test_ratios_within_three_times_are_of_the_same_order() -> None:
    table = side_by_side(_laptop(fp32=66.9e12 / 200, bandwidth=3.35e12 / 150), H100)
    assert "FP32: arithmetic 200x, bandwidth 150x: of the same order" in table
    slow_memory = side_by_side(_laptop(fp32=669e9, bandwidth=3.35e9), H100)
    assert "arithmetic 100x, bandwidth 1,000x: bandwidth far ahead" in slow_memory


def test_memory_is_stated_in_gb_and_gib_together_or_not_at_all() -> None:
    table = side_by_side(_laptop(1e10, 1e10, memory=25_300_000_000), H100)
    assert "25.3 GB (23.6 GiB)" in table
    # The datasheet's "80 GB" is a label, not 80e9 bytes: the H100 SXM's driver reports
    # 81,559 MiB (79.6 GiB; gpus.json reported_memory, book/conventions.md), so converting
    # the label to "74.5 GiB" would state a capacity the card does not have.
    row = next(line for line in table.splitlines() if line.startswith("memory capacity"))
    assert " 80 GB " in row and "74.5 GiB" not in row and row.count("GiB") == 1
    assert "memory capacity" not in side_by_side(_laptop(1e10, 1e10, memory=None), H100)


def test_batch_one_reads_enough_copies_to_leave_the_cache() -> None:
    one = 4 * 4096 * 4096  # a float32 4096 x 4096 matrix: 64 MiB
    assert weight_copies(4096, on_gpu=False, cache_bytes=128 * 2**20) == 4  # 256 MiB
    assert weight_copies(4096, on_gpu=False, cache_bytes=2**20) == 2  # never fewer than 2
    assert weight_copies(4096, on_gpu=False, cache_bytes=2**40) == 2**30 // one  # capped
    assert weight_copies(4096, on_gpu=True) == 1
    with pytest.raises(ValueError, match="d must be"):
        weight_copies(0, on_gpu=False)


def test_a_timed_layer_counts_the_work_of_every_copy() -> None:
    timing = time_layer(cpu_device(), d=64, batches=(1, 8), repeats=1, min_time=0.0)
    copies = timing.copies[1]
    assert copies >= 2 and timing.copies[8] == 1
    assert timing.runs[1].flops == copies * gemm.flops(1, 64, 64)
    assert timing.runs[1].bytes == copies * gemm.min_bytes(1, 64, 64, bytes_per_element=4)
    assert timing.best_rate(8) == timing.runs[8].flops / timing.runs[8].min
    assert dataclasses.is_dataclass(timing)
