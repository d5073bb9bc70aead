"""Lesson 9, ``optimisations``: FlashAttention on a GPU, gradient checkpointing."""

from __future__ import annotations

from typing import Any

from gpulesson import memory
from gpulesson import optimisations as opt
from gpulesson.calculators import shared
from gpulesson.calculators.spec import Calculator, Choice, Integer, Number, Output, Select

LESSON = "optimisations"


def _flash(**kw: Any) -> dict[str, Any]:
    e = memory.precision_bytes(kw["dtype"])
    shape = dict(seq_len=kw["seq_len"], head_dim=kw["head_dim"], batch=kw["batch"],
                 heads=kw["heads"], bytes_per_element=e)
    block_c, block_r, t_c = opt.flash_attention_tiles(
        seq_len=kw["seq_len"], head_dim=kw["head_dim"], sram_bytes=kw["sram_bytes"],
        bytes_per_element=e)
    on_gpu = opt.attention_on_gpu(sram_bytes=kw["sram_bytes"], peak_flops=kw["peak_flops"],
                                  bandwidth=kw["bandwidth"], **shape)
    return {
        "standard": on_gpu.standard_bytes, "flash": on_gpu.flash_bytes,
        "standard_time": on_gpu.standard_time, "flash_time": on_gpu.flash_time,
        "time_saved": on_gpu.time_saved, "speedup": on_gpu.standard_time / on_gpu.flash_time,
        "standard_memory": on_gpu.standard_memory, "flash_memory": on_gpu.flash_memory,
        "memory_saved": on_gpu.memory_saved,
        "block_c": block_c, "block_r": block_r, "passes": t_c,
    }


FLASH_ATTENTION = Calculator(
    name="flash_attention",
    title="FlashAttention: bytes, time and memory on a GPU",
    description="One attention forward pass: standard attention writes and re-reads the "
                "N×N scores through HBM; FlashAttention keeps tiles in on-chip SRAM. "
                "What that saves on the chosen GPU, in HBM bytes, in time on its roofline "
                "and in memory kept for the backward pass.",
    lesson=LESSON,
    inputs=(
        Integer("seq_len", "Sequence length N", default=1024, range=(1, 262_144),
                unit="tokens",
                help="The defaults are GPT-2 medium as in Dao et al. 2022, Figure 2: "
                     "N = 1024, d = 64, 16 heads, batch 64, FP16, on an A100."),
        Integer("head_dim", "Head size d", default=64, range=(1, 1024)),
        Integer("heads", "Heads", default=16, range=(1, 1024)),
        shared.batch("Batch", 64),
        Select("dtype", "Precision", default="fp16",
               choices=(Choice("bf16", "BF16"), Choice("fp16", "FP16"),
                        Choice("fp32", "FP32"))),
        Number("sram_bytes", "On-chip SRAM per SM (M)", default=192, range=(1, 100_000),
               step=1, unit="KiB", scale=1024, dimension="bytes",
               help="A100: 192 KiB of combined L1/shared memory per SM (NVIDIA A100 "
                    "whitepaper); H100: 256 KiB."),
        *shared.gpu_inputs("A100 40GB", peak=True, bandwidth=True),
    ),
    outputs=(
        Output("standard", "Standard attention (4Nd + 4N² per head)", "bytes"),
        Output("flash", "FlashAttention (Algorithm 1)", "bytes"),
        Output("standard_time", "Standard attention on this GPU (roofline)", "seconds",
               help="max(4N²d FLOPs per head ÷ peak, HBM bytes ÷ bandwidth): bound by "
                    "memory unless the heads are very large, since its FLOPs per byte are "
                    "about d ÷ 2 in 16 bits."),
        Output("flash_time", "FlashAttention on this GPU (roofline)", "seconds",
               help="The same FLOPs, far fewer bytes: several times faster, and bound by "
                    "compute once its FLOPs per byte pass the ridge point."),
        Output("time_saved", "Time saved (negative: lost)", "seconds"),
        Output("speedup", "Speed-up", "ratio"),
        Output("standard_memory", "Kept for backward: the N×N probabilities", "bytes"),
        Output("flash_memory", "Kept for backward: one FP32 statistic per row", "bytes",
               help="FlashAttention recomputes the scores in the backward pass "
                    "(FlashAttention-2 and PyTorch's SDPA keep one log-sum-exp per row)."),
        Output("memory_saved", "Memory saved (negative: more used)", "bytes"),
        Output("block_c", "Key/value block B_c", "count"),
        Output("block_r", "Query block B_r", "count"),
        Output("passes", "Outer passes T_c", "count"),
    ),
    function=_flash,
    sources=("Dao et al. 2022, FlashAttention, Algorithms 0 and 1, Theorem 2",
             "Dao 2023, FlashAttention-2", shared.GPU_NOTE),
)


def _checkpointing(**kw: Any) -> dict[str, Any]:
    cfg = shared.config(kw)
    kept = memory.training_memory(cfg, batch=kw["batch"], seq_len=kw["seq_len"],
                                  attention=kw["attention"]).activations
    per_layer = kept / cfg.layers  # the mean layer (a few dense layers differ in MoE)
    segments = kw["segments"] or None  # 0: the best number, about sqrt(L)
    return {
        "per_layer": per_layer,
        "without": opt.activation_memory_without_checkpointing(
            layers=cfg.layers, per_layer_bytes=per_layer),
        "with": opt.checkpoint_memory(layers=cfg.layers, per_layer_bytes=per_layer,
                                      segments=segments),
        "best_segments": opt.optimal_segments(cfg.layers),
        "overhead": opt.recompute_overhead(recompute="full"),
    }


CHECKPOINTING = Calculator(
    name="checkpointing",
    title="Gradient checkpointing trade-off",
    description="Store only segment boundaries and recompute each segment in the backward "
                "pass: activation memory falls to about 2√L layers for one extra forward "
                "pass.",
    lesson=LESSON,
    inputs=(
        *shared.model_inputs("llama-2-7b", training=True),
        shared.MICRO_BATCH,
        shared.SEQ_LEN,
        Integer("segments", "Segments k", default=0, range=(0, 1000),
                help="0 picks the best k (about √L); k = 1 or k = L saves nothing."),
    ),
    outputs=(
        Output("per_layer", "Activations per layer", "bytes",
               help="No recomputation, derived for the architecture and the attention "
                    "implementation (gpulesson.activations; for GPT-2/3 with eager "
                    "attention, Korthikanti et al. 2022)."),
        Output("without", "Activations without checkpointing (L layers)", "bytes"),
        Output("with", "With checkpointing (k + ⌈L/k⌉ layers)", "bytes",
               help="k checkpoints, each counted as one layer's worth (Chen et al. 2016), "
                    "plus the ⌈L/k⌉ layers of the segment being recomputed."),
        Output("best_segments", "Best number of segments", "count",
               help="The k with the least memory; among equally good k, the one nearest "
                    "√L."),
        Output("overhead", "Extra compute (one more forward pass)", "percent"),
    ),
    function=_checkpointing,
    sources=("Chen et al. 2016, Training Deep Nets with Sublinear Memory Cost",
             "Korthikanti et al. 2022", "Dao et al. 2022 (FlashAttention)"),
)

ENTRIES = (FLASH_ATTENTION, CHECKPOINTING)
