"""Lesson 4, ``flops_and_scaling``: training FLOPs, time at an MFU, Chinchilla tokens."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gpulesson import cost, flops, transformer
from gpulesson.calculators import shared
from gpulesson.calculators.spec import Calculator, Choice, Integer, Output, Select

LESSON = "flops_and_scaling"


def _training_flops(**kw: Any) -> dict[str, Any]:
    cfg = shared.config(kw)
    n = (transformer.param_count(cfg) if kw["count"] == "all"
         else transformer.non_embedding_params(cfg))
    total, time = shared.training_run(n, kw["tokens"], kw["n_devices"], kw)
    return {
        "n_params": n,
        "flops_per_token": flops.flops_per_token(
            n, layers=cfg.layers, heads=cfg.heads, head_dim=cfg.head_dim,
            seq_len=kw["seq_len"]),
        "attention_per_token": flops.attention_flops_per_token(
            layers=cfg.layers, heads=cfg.heads, head_dim=cfg.head_dim,
            seq_len=kw["seq_len"]),
        "total": total,
        "time": time,
        "gpu_hours": cost.gpu_hours(gpus=kw["n_devices"], seconds=time),
        "chinchilla_tokens": flops.chinchilla_tokens(n),
    }


TRAINING_FLOPS = Calculator(
    name="training_flops",
    title="Training FLOPs calculator",
    description="6·N·D training FLOPs, the attention term per token, and the days a "
                "cluster needs at an assumed model FLOPs utilisation (MFU).",
    lesson=LESSON,
    inputs=(
        *shared.model_inputs("llama-2-7b"),
        Select("count", "N counts", default="all",
               choices=(Choice("all", "all parameters (PaLM, Chinchilla, Llama 3)"),
                        Choice("non_embedding", "non-embedding parameters (Kaplan et al.)")),
               help="Which parameters 6N counts; say which when you quote a figure."),
        replace(shared.TRAINING_TOKENS, label="Training tokens D",
                help="Llama 2 was trained on 2.0T tokens (Touvron et al. 2023, Table 1)."),
        shared.tokens("seq_len", "Sequence length", 4096,
                      help="Only the attention term (12·L·H·Q·T per token) depends on it."),
        shared.dtype_input(),
        *shared.gpu_inputs("A100 80GB", peak=True),
        Integer("n_devices", "GPUs", default=1024, range=(1, 1_000_000)),
        shared.percent("mfu", "MFU (assumed)", default=40, range=(1, 100), step=1,
                       help="Model FLOPs utilisation: 35-45 % is typical of large published "
                            "runs (e.g. Llama 3 405B: 38-43 %, Dubey et al. 2024, Table 4)."),
    ),
    outputs=(
        Output("n_params", "N used", "count"),
        Output("flops_per_token", "FLOPs per token (6N + attention)", "flops"),
        Output("attention_per_token", "of which attention (12·L·H·Q·T)", "flops"),
        Output("total", "Training FLOPs (6·N·D)", "flops"),
        shared.TRAINING_TIME_OUT,
        replace(shared.GPU_HOURS_OUT, label="GPU-hours (GPUs × time)",
                help="What papers report and clouds bill: the time one GPU alone would "
                     "need. Llama 2 7B reports 184,320 A100 GPU-hours (Touvron et al. 2023, "
                     "Table 2)."),
        Output("chinchilla_tokens", "Chinchilla-optimal tokens (20·N)", "words",
               unit="tokens"),
    ),
    function=_training_flops,
    sources=("Kaplan et al. 2020 §2.1", "Chowdhery et al. 2022 (PaLM), appendix B",
             "Hoffmann et al. 2022 (Chinchilla)"),
)

ENTRIES = (TRAINING_FLOPS,)
