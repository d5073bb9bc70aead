"""Lesson 5, ``flops_and_scaling``: training FLOPs, time at an MFU, Chinchilla tokens.

One attention convention: the FLOPs per token, the total, the time and the GPU-hours all
count the attention term (:func:`gpulesson.flops.model_training_flops`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gpulesson import cost, flops, transformer
from gpulesson.calculators import shared
from gpulesson.calculators.spec import Calculator, Choice, Integer, Output, Select

LESSON = "flops_and_scaling"


def _training_flops(**kw: Any) -> dict[str, Any]:
    cfg = shared.config(kw)
    active = transformer.active_params(cfg)
    if kw["count"] == "all":
        n = active
    else:  # Kaplan's N: without the embedding and output matrices
        n = active - transformer.embedding_params(cfg) - transformer.param_breakdown(cfg)[
            "lm_head"]
    seq_len = kw["seq_len"] if kw["attention_term"] == "counted" else None
    total = flops.model_training_flops(cfg, tokens=kw["tokens"], seq_len=seq_len,
                                       n_params=n)
    time = flops.training_time(total, kw["n_devices"], kw["peak_flops"], kw["mfu"])
    return {
        "n_params": n,
        "total_params": transformer.param_count(cfg),
        "flops_per_token": flops.model_flops_per_token(cfg, seq_len=seq_len, n_params=n),
        "attention_per_token": 0 if seq_len is None else
        flops.model_attention_flops_per_token(cfg, seq_len=seq_len),
        "total": total,
        "time": time,
        "gpu_hours": cost.gpu_hours(gpus=kw["n_devices"], seconds=time),
        "chinchilla_tokens": flops.chinchilla_tokens(n),
    }


TRAINING_FLOPS = Calculator(
    name="training_flops",
    title="Training FLOPs calculator",
    description="Training FLOPs per token (6·N, N the active parameters, plus the "
                "attention term) and for the whole run, and the time and GPU-hours a "
                "cluster needs at an assumed model FLOPs utilisation (MFU); one convention "
                "throughout: attention counted in every figure.",
    lesson=LESSON,
    inputs=(
        *shared.model_inputs("llama-2-7b"),
        Select("count", "N counts", default="all",
               choices=(Choice("all", "all parameters (PaLM, Chinchilla, Llama 3)"),
                        Choice("non_embedding", "non-embedding parameters (Kaplan et al.)")),
               help="Which parameters 6N counts; say which when you quote a figure. In "
                    "a mixture-of-experts model N is the active parameters, the ones a "
                    "token is multiplied by."),
        replace(shared.TRAINING_TOKENS, label="Training tokens D",
                help="Llama 2 was trained on 2.0T tokens (Touvron et al. 2023, Table 1)."),
        Select("attention_term", "Attention term", default="counted",
               choices=(Choice("counted", "counted (6N + attention, PaLM's MFU)"),
                        Choice("left_out", "left out (6N only, as GPT-3 and Llama 2 "
                               "report)")),
               help="Counted or not, in every figure below alike: FLOPs per token, the "
                    "total, the time and the GPU-hours."),
        shared.tokens("seq_len", "Sequence length", 4096,
                      help="Only the attention term (12·L·H·Q·T per token for full "
                           "attention) depends on it; sliding-window layers stop at their "
                           "window, chunked layers (Llama 4) at their chunk."),
        shared.dtype_input(),
        *shared.gpu_inputs("A100 80GB", peak=True),
        Integer("n_devices", "GPUs", default=1024, range=(1, 1_000_000)),
        shared.percent("mfu", "MFU (assumed)", default=40, range=(1, 100), step=1,
                       help="Model FLOPs utilisation: large published runs reach 35-55 % "
                            "(Llama 3 405B: 38-43 %, Dubey et al. 2024, Table 4; PaLM: "
                            "46.2 %, Chowdhery et al. 2022, Table 3; MegaScale: 55.2 %, Jiang "
                            "et al. 2024)."),
    ),
    outputs=(
        Output("n_params", "N used (active parameters)", "count"),
        Output("total_params", "Parameters held (all experts)", "count",
               help="What memory holds: equal to N for a dense model, several times N for "
                    "a mixture of experts."),
        Output("flops_per_token", "FLOPs per token (6N, + attention when counted)", "flops"),
        Output("attention_per_token", "of which attention (12·L·H·Q·T)", "flops",
               help="Three times the forward score and value products of every layer "
                    "(PaLM, appendix B); latent attention uses its head sizes, "
                    "sliding-window layers their window, chunked layers their chunk."),
        Output("total", "Training FLOPs (tokens × FLOPs per token)", "flops",
               help="The same convention as the FLOPs per token, attention included, so "
                    "the time and GPU-hours below follow from it."),
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
             "Hoffmann et al. 2022 (Chinchilla)", "Jiang et al. 2024 (Mixtral)"),
)

ENTRIES = (TRAINING_FLOPS,)
