"""Time every calculator of gpulesson once per call and print microseconds per call.

The calculators run on every keystroke of the course's widgets and in the browser
(Pyodide), so the whole API must be cheap: calling every calculator once should take well
under a millisecond in CPython. Each call is repeated (``--repeat``, default 2000) and the
median of several rounds is reported; the total is the sum of the per-call figures.

Run: ``.venv/bin/python benchmarks/bench_calculators.py``. Speed goals live here, never in
timed asserts in the test suite.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from gpulesson import (
    cost,
    distributed,
    flops,
    gemm,
    hardware,
    inference,
    memory,
    optimisations,
    roofline,
    transformer,
)

H100 = hardware.gpu("H100 SXM")
CFG = transformer.preset("llama-2-7b")
N = transformer.param_count(CFG)
PEAK, BW = H100.peak_flops["bf16"], H100.bandwidth

CALLS: dict[str, Callable[[], object]] = {
    "gemm.flops": lambda: gemm.flops(4096, 4096, 4096),
    "gemm.min_bytes": lambda: gemm.min_bytes(4096, 4096, 4096, 2, read_c=True),
    "gemm.arithmetic_intensity": lambda: gemm.arithmetic_intensity(4096, 4096, 4096),
    "gemm.analyse": lambda: gemm.analyse(4096, 4096, 4096, peak_flops=PEAK, bandwidth=BW),
    "roofline.ridge_point": lambda: roofline.ridge_point(PEAK, BW),
    "roofline.attainable_flops": lambda: roofline.attainable_flops(100.0, PEAK, BW),
    "roofline.bound": lambda: roofline.bound(100.0, PEAK, BW),
    "roofline.time": lambda: roofline.time(1e12, 1e9, PEAK, BW),
    "roofline.amdahl_speedup": lambda: roofline.amdahl_speedup(0.05, 64),
    "transformer.TransformerConfig": lambda: transformer.TransformerConfig(
        hidden=4096, layers=32, heads=32, kv_heads=8, vocab=128256, ffn=14336,
        tied_embeddings=False, gated_mlp=True, norm="rmsnorm", linear_bias=False),
    "transformer.preset": lambda: transformer.preset("llama-2-7b"),
    "transformer.param_count": lambda: transformer.param_count(CFG),
    "transformer.param_breakdown": lambda: transformer.param_breakdown(CFG),
    "transformer.non_embedding_params": lambda: transformer.non_embedding_params(CFG),
    "memory.precision_bytes": lambda: memory.precision_bytes("bf16"),
    "memory.bytes_per_param": lambda: memory.bytes_per_param("mixed", "adam"),
    "memory.weight_bytes": lambda: memory.weight_bytes(N, precision="bf16"),
    "memory.inference_memory": lambda: memory.inference_memory(N, kv_cache_bytes=2e9),
    "memory.activation_bytes_per_layer": lambda: memory.activation_bytes_per_layer(
        seq_len=4096, batch=1, hidden=4096, heads=32, tp=8, sequence_parallel=True),
    "memory.training_memory": lambda: memory.training_memory(
        CFG, batch=1, seq_len=4096, recompute="selective", memory_per_gpu=80e9),
    "memory.fits": lambda: memory.fits(100e9, 80e9),
    "memory.headroom": lambda: memory.headroom(100e9, 80e9),
    "memory.gpus_needed": lambda: memory.gpus_needed(1.2e12, 80e9),
    "flops.training_flops": lambda: flops.training_flops(N, 2e12),
    "flops.flops_per_token": lambda: flops.flops_per_token(N, layers=32, heads=32,
                                                           head_dim=128, seq_len=4096),
    "flops.attention_flops_per_token": lambda: flops.attention_flops_per_token(
        layers=32, heads=32, head_dim=128, seq_len=4096),
    "flops.hardware_flops_per_token": lambda: flops.hardware_flops_per_token(
        N, recompute="full"),
    "flops.mfu": lambda: flops.mfu(3000.0, 6 * N, 8, PEAK),
    "flops.hfu": lambda: flops.hfu(3000.0, 8 * N, 8, PEAK),
    "flops.utilization": lambda: flops.utilization(430e12, PEAK),
    "flops.megatron_flops_per_iteration": lambda: flops.megatron_flops_per_iteration(
        batch=1536, seq_len=2048, layers=96, hidden=12288, vocab=51200),
    "flops.training_time": lambda: flops.training_time(3.14e23, 1024, PEAK, 0.4),
    "flops.tokens_per_second": lambda: flops.tokens_per_second(
        n_devices=1024, peak_flops=PEAK, mfu=0.4, flops_per_token=6 * N),
    "flops.training_days": lambda: flops.training_days(3.14e23, 1024, PEAK, 0.4),
    "flops.chinchilla_tokens": lambda: flops.chinchilla_tokens(70e9),
    "flops.chinchilla_optimal": lambda: flops.chinchilla_optimal(5.76e23),
    "inference.kv_cache_bytes": lambda: inference.kv_cache_bytes(CFG, seq_len=4096, batch=8),
    "inference.kv_cache_bytes_per_token": lambda: inference.kv_cache_bytes_per_token(CFG),
    "inference.prefill_flops": lambda: inference.prefill_flops(N, 2048, layers=32, heads=32,
                                                               head_dim=128),
    "inference.decode_flops": lambda: inference.decode_flops(N, 256),
    "inference.decode_ceiling_tokens_per_second":
        lambda: inference.decode_ceiling_tokens_per_second(
            weight_bytes=2 * N, bandwidth=BW, batch=8, kv_bytes_per_sequence=2e9),
    "inference.decode_compute_bound_batch": lambda: inference.decode_compute_bound_batch(
        peak_flops=PEAK, bandwidth=BW, bytes_per_param=2),
    "inference.decode_step_time": lambda: inference.decode_step_time(
        n_params=N, weight_bytes=2 * N, batch=8, kv_bytes_per_sequence=2e9, peak_flops=PEAK,
        bandwidth=BW),
    "inference.prefill_time": lambda: inference.prefill_time(
        n_params=N, tokens=2048, peak_flops=PEAK, bandwidth=BW, weight_bytes=2 * N),
    "inference.attention_crossover_tokens": lambda: inference.attention_crossover_tokens(
        N, layers=32, heads=32, head_dim=128),
    "distributed.bus_bandwidth_factor": lambda: distributed.bus_bandwidth_factor(
        "all_reduce", 8),
    "distributed.allreduce_bytes_per_rank": lambda: distributed.allreduce_bytes_per_rank(
        14e9, 8),
    "distributed.algorithm_bandwidth": lambda: distributed.algorithm_bandwidth(1e9, 0.01),
    "distributed.bus_bandwidth": lambda: distributed.bus_bandwidth("all_reduce", 1e9, 0.01, 8),
    "distributed.collective_time": lambda: distributed.collective_time(
        "all_reduce", 14e9, 8, bandwidth=450e9, latency=20e-6),
    "distributed.pipeline_bubble_fraction": lambda: distributed.pipeline_bubble_fraction(
        8, 32, 4),
    "distributed.pipeline_schedule": lambda: distributed.pipeline_schedule(
        4, 8, schedule="1f1b"),
    "distributed.zero_memory_per_gpu": lambda: distributed.zero_memory_per_gpu(
        7.5e9, stage=2, dp=64),
    "distributed.scaling_efficiency": lambda: distributed.scaling_efficiency(1.0, 0.3, 0.5),
    "distributed.effective_speedup": lambda: distributed.effective_speedup(64, 0.9),
    "distributed.recommend_layout": lambda: distributed.recommend_layout(
        n_params=N, gpu_memory=80e9, n_gpus=8),
    "cost.power_cost": lambda: cost.power_cost(power_watts=5600, usd_per_kwh=0.1, hours=8760),
    "cost.on_prem_tco": lambda: cost.on_prem_tco(hardware_usd=240_000, power_watts=30_000,
                                                 usd_per_kwh=0.1, years=5),
    "cost.cloud_cost": lambda: cost.cloud_cost(usd_per_hour=48, years=5),
    "cost.breakeven_months": lambda: cost.breakeven_months(
        hardware_usd=240_000, power_watts=30_000, usd_per_kwh=0.1, cloud_usd_per_hour=48),
    "cost.run_cost": lambda: cost.run_cost(usd_per_gpu_hour=2, gpus=2048, seconds=3e5),
    "distributed.layout_memory": lambda: distributed.layout_memory(
        n_params=N, n_gpus=64, tp=8, pp=2, zero_stage=1, cfg=CFG, seq_len=4096),
    "distributed.data_parallel_sync_time": lambda: distributed.data_parallel_sync_time(
        N / 8, dp=64, zero_stage=1, bandwidth=50e9),
    "memory.lora_training_memory": lambda: memory.lora_training_memory(
        CFG, rank=16, batch=1, seq_len=2048),
    "cost.cost_per_1k_tokens": lambda: cost.cost_per_1k_tokens(
        usd_per_gpu_hour=3, gpus=8, tokens_per_second=80),
    "optimisations.standard_attention_hbm_bytes":
        lambda: optimisations.standard_attention_hbm_bytes(seq_len=4096, head_dim=128),
    "optimisations.flash_attention_hbm_bytes":
        lambda: optimisations.flash_attention_hbm_bytes(seq_len=4096, head_dim=128,
                                                        sram_bytes=192 * 1024),
    "optimisations.checkpoint_memory": lambda: optimisations.checkpoint_memory(
        layers=96, per_layer_bytes=1e9),
    "optimisations.recompute_overhead": lambda: optimisations.recompute_overhead(),
    "optimisations.mixed_precision_savings": lambda: optimisations.mixed_precision_savings(
        n_params=N, activation_bytes_fp32=50e9),
    "hardware.gpu": lambda: hardware.gpu("h100 sxm"),
}


def time_call(fn: Callable[[], object], repeat: int, rounds: int) -> float:
    """Median over ``rounds`` of the mean seconds per call over ``repeat`` calls."""
    fn()  # warm-up
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        samples.append((time.perf_counter() - start) / repeat)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2000, help="calls per round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (median is reported)")
    args = parser.parse_args()
    # Cheap calls get the full repeat count; the slow ones are scaled down to keep the run
    # short on two shared cores.
    results = []
    for name, fn in CALLS.items():
        probe = time_call(fn, 10, 1)
        repeat = max(10, min(args.repeat, int(0.02 / max(probe, 1e-9))))
        results.append((name, time_call(fn, repeat, args.rounds)))
    width = max(len(name) for name, _ in results)
    for name, seconds in results:
        print(f"{name:<{width}}  {seconds * 1e6:8.2f} µs")
    total = sum(seconds for _, seconds in results)
    print(f"{'TOTAL (' + str(len(results)) + ' calculators, one call each)':<{width}}  "
          f"{total * 1e6:8.2f} µs")
    slowest = max(results, key=lambda r: r[1])
    print(f"slowest: {slowest[0]} ({slowest[1] * 1e6:.1f} µs); goal: total well under 1000 µs")


if __name__ == "__main__":
    main()
