"""Lesson 4, ``memory_what_fits``: parameters part by part, and the memory of training."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gpulesson import memory, transformer
from gpulesson.calculators import shared
from gpulesson.calculators.spec import Calculator, Integer, Output

LESSON = "memory_what_fits"


def _param_count(**kw: Any) -> dict[str, Any]:
    cfg = shared.config(kw)
    return {
        "total": transformer.param_count(cfg),
        "active": transformer.active_params(cfg),
        **transformer.param_breakdown(cfg),  # embedding, attention, mlp, norm, lm_head
        "routed_experts": transformer.moe_breakdown(cfg)["routed_experts"],
        "non_embedding": transformer.non_embedding_params(cfg),
    }


PARAM_COUNT = Calculator(
    name="param_count",
    title="Parameter counting for transformers",
    description="Exact parameters of a decoder (GPT-2, Llama, mixture-of-experts and "
                "latent-attention models), part by part, and the active parameters one "
                "token uses; the presets match the models' published counts.",
    lesson=LESSON,
    inputs=shared.model_inputs("gpt2", advanced=False),
    outputs=(
        Output("total", "Total parameters (what memory holds)", "count"),
        replace(shared.ACTIVE_OUT,
                help="The total minus the routed experts a token skips "
                     "(transformer.active_params); equal to the total for a dense model."),
        Output("embedding", "Embeddings (token + position)", "count"),
        Output("attention", "Attention (all layers)", "count"),
        Output("mlp", "MLP (all layers)", "count"),
        Output("routed_experts", "of which routed experts", "count"),
        Output("norm", "Norms", "count"),
        Output("lm_head", "Output layer (0 when tied)", "count"),
        Output("non_embedding", "Non-embedding (Kaplan's N)", "count"),
    ),
    function=_param_count,
    sources=("Radford et al. 2019 (GPT-2); Touvron et al. 2023 (Llama 2); Jiang et al. "
             "2024 (Mixtral); DeepSeek-AI 2024 (DeepSeek-V3); the models' config.json "
             "files",),
)


def _training_memory(**kw: Any) -> dict[str, Any]:
    cfg = shared.config(kw)
    m = memory.training_memory(
        cfg, batch=kw["batch"], seq_len=kw["seq_len"], precision=kw["precision"],
        optimizer=kw["optimizer"], recompute=kw["recompute"], tp=kw["tp"],
        sequence_parallel=kw["sequence_parallel"] == "yes", memory_per_gpu=kw["gpu_memory"],
        attention=kw["attention"])
    return {
        "n_params": transformer.param_count(cfg),
        "bytes_per_param": memory.bytes_per_param(kw["precision"], kw["optimizer"]),
        "weights": m.weights, "gradients": m.gradients, "optimizer_state": m.optimizer,
        "activations": m.activations, "total": m.total,
        # a plan that splits every layer over tp GPUs needs them all (review r22 F9)
        "fits": memory.fits(m.total, kw["gpu_memory"]),
        # whole TP groups: a layer split over tp GPUs takes them tp at a time
        "gpus_needed": kw["tp"] * -(-m.gpus_needed // kw["tp"]),
    }


TRAINING_MEMORY = Calculator(
    name="training_memory",
    title="Training memory calculator",
    description="Weights, gradients, optimizer state and activations per GPU of a "
                "tensor-parallel group, and how many GPUs the whole state needs. Every "
                "parameter is held, all the experts of a mixture-of-experts model.",
    lesson=LESSON,
    inputs=(
        *shared.model_inputs("llama-2-7b", training=True),
        shared.MICRO_BATCH,
        shared.SEQ_LEN,
        replace(shared.TRAINING_PRECISION,
                help="What each parameter keeps: ZeRO paper §3.1 counts 2 + 2 + 12 bytes."),
        shared.OPTIMIZER,
        replace(shared.RECOMPUTE,
                help="Korthikanti et al. 2022: selective drops the attention scores, full "
                     "keeps only each layer's input."),
        Integer("tp", "Tensor-parallel size", default=1, range=(1, 512),
                help="GPUs sharing each layer; must divide heads and hidden."),
        shared.yes_no("sequence_parallel", "Sequence parallel", "no",
                      "Megatron sequence parallelism: also splits norms and dropout by the "
                      "TP size."),
        *shared.gpu_inputs("H100 SXM", memory=True),
    ),
    outputs=(
        shared.N_PARAMS_HELD_OUT,
        Output("bytes_per_param", "Model-state bytes per parameter", "number", unit="B"),
        Output("weights", "Weights per GPU", "bytes"),
        Output("gradients", "Gradients per GPU", "bytes"),
        Output("optimizer_state", "Optimizer state + master weights per GPU", "bytes"),
        Output("activations", "Activations per GPU", "bytes",
               help="Derived tensor by tensor for the architecture and the attention "
                    "implementation (gpulesson.activations, 16-bit): FlashAttention keeps "
                    "no score matrix. For a GPT block with eager attention and dropout it is "
                    "Korthikanti et al. 2022, Table 2."),
        Output("total", "Total per GPU", "bytes"),
        Output("fits", "Fits on the chosen GPU", "bool"),
        Output("gpus_needed", "GPUs needed at least (whole TP groups holding the whole "
               "state fully sharded)", "count",
               help="The whole training state divided by one GPU's memory, as if it were "
                    "sharded evenly at no cost (memory.training_memory's gpus_needed), "
                    "rounded up to whole tensor-parallel groups: every layer is split over "
                    "the tp GPUs of a group."),
    ),
    function=_training_memory,
    sources=("Rajbhandari et al. 2020 (ZeRO) §3.1", "Korthikanti et al. 2022, Table 2",
             "Dao et al. 2022 (FlashAttention)"),
)

ENTRIES = (PARAM_COUNT, TRAINING_MEMORY)
