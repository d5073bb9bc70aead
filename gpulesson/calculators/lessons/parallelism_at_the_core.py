"""Lesson 1, ``parallelism_at_the_core``: Amdahl's law, will a model fit, the decode ceiling."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gpulesson import inference, memory, roofline, transformer
from gpulesson.calculators import shared
from gpulesson.calculators.spec import Calculator, Choice, Integer, Number, Output
from gpulesson.planning import checkpoints

LESSON = "parallelism_at_the_core"


def _amdahl(*, serial_fraction: float, workers: int) -> dict[str, Any]:
    return {"speedup": roofline.amdahl_speedup(serial_fraction, workers)}


AMDAHL = Calculator(
    name="amdahl",
    title="Amdahl's law",
    description="How much faster N workers finish a job of which a share must run "
                "serially.",
    lesson=LESSON,
    inputs=(
        shared.percent("serial_fraction", "Serial share", default=5, range=(0, 100),
                       step=0.5, help="Share of the one-worker run time that cannot be split."),
        Integer("workers", "Workers", default=64, range=(1, 1_000_000),
                help="Cores, GPUs or people working in parallel."),
    ),
    outputs=(Output("speedup", "Speed-up over one worker", "ratio"),),
    function=_amdahl,
    sources=("Amdahl 1967, AFIPS Spring Joint Computer Conference",),
)


def _fit(total: float, gpu_memory: float) -> dict[str, Any]:
    """Whether ``total`` bytes fit one GPU of ``gpu_memory`` bytes, the spare bytes, and the
    fewest such GPUs that hold them split evenly: the one test of both calculators."""
    return {"fits": memory.fits(total, gpu_memory),
            "headroom": memory.headroom(total, gpu_memory),
            "gpus_needed": memory.gpus_needed(total, gpu_memory)}


#: The weights' storage: one precision for all, or gpt-oss's published mix, priced by the
#: serving planner's own function (gpulesson.planning.checkpoints.weight_bytes).
_MIXED = "mxfp4_experts"
_FIT_WEIGHTS = replace(
    shared.WEIGHTS_PRECISION,
    choices=(*shared.WEIGHT_STORAGE_CHOICES,
             Choice(_MIXED, "MXFP4 experts, BF16 rest (gpt-oss checkpoints)")),
    help="Bytes per stored value (gpulesson.memory.PRECISION_BYTES): one precision for "
         "every parameter, or gpt-oss's checkpoint, its routed experts' matrices in MXFP4 "
         "and everything else in BF16 (gpulesson.planning.MIXED_CHECKPOINTS).")


def _will_it_fit(**kw: Any) -> dict[str, Any]:
    cfg = shared.config(kw)
    n = transformer.param_count(cfg)
    kv = inference.kv_cache_bytes(cfg, seq_len=kw["context"], batch=kw["batch"],
                                  bytes_per_element=memory.precision_bytes(kw["kv_dtype"]))
    mixed = None
    if kw["precision"] == _MIXED:
        if not cfg.moe:
            raise ValueError("precision: 'MXFP4 experts, BF16 rest' needs a "
                             "mixture-of-experts model (gpt-oss); this one has no routed "
                             "experts, so choose one precision for all its weights")
        mixed = checkpoints.weight_bytes(cfg, _MIXED)
    mem = memory.inference_memory(n, precision="bf16" if mixed is not None else kw["precision"],
                                  kv_cache_bytes=kv, overhead_bytes=kw["overhead"],
                                  weights_bytes=mixed)
    return {"n_params": n, "weights": mem.weights, "kv_cache": mem.kv_cache,
            "total": mem.total, **_fit(mem.total, kw["gpu_memory"])}


WILL_IT_FIT = Calculator(
    name="will_it_fit",
    title="Will it fit? Serving a model on one GPU",
    description="Weights at a precision, plus the KV cache of the sequences in flight and "
                "a fixed overhead, against the memory of a GPU.",
    lesson=LESSON,
    inputs=(
        *shared.model_inputs("llama-3-8b"),
        _FIT_WEIGHTS,
        shared.tokens("context", "Context length", 8192,
                      help="Tokens held per sequence (prompt + generated)."),
        shared.CONCURRENT_SEQUENCES,
        shared.KV_PRECISION,
        shared.overhead("; measure yours"),
        *shared.gpu_inputs("H100 SXM", memory=True),
    ),
    outputs=(
        shared.N_PARAMS_HELD_OUT,
        shared.WEIGHTS_OUT,
        Output("kv_cache", "KV cache", "bytes"),
        Output("total", "Total", "bytes"),
        Output("fits", "Fits on one GPU", "bool"),
        Output("headroom", "Headroom (negative: short by)", "bytes"),
        Output("gpus_needed", "GPUs needed (evenly split)", "count",
               help="A lower bound: the total divided by one GPU's memory, as if the split "
                    "cost nothing. A serving engine holds more on each GPU (vLLM keeps "
                    "10 % of the memory back by default, plus activations and buffers "
                    "outside PyTorch); the deployment planner of the planning lesson "
                    "counts them."),
    ),
    function=_will_it_fit,
)


def _decode_ceiling(**kw: Any) -> dict[str, Any]:
    cfg = shared.preset_config(kw)
    stored = memory.weight_bytes(kw["n_params"], precision=kw["precision"])  # every weight
    if cfg is not None and cfg.moe:  # a mixture of experts reads the experts it routes to
        weights = inference.decode_weight_bytes(
            cfg, batch=kw["batch"], bytes_per_param=memory.precision_bytes(kw["precision"]))
    else:
        weights = stored
    # every parameter (all the experts of an MoE model) and every sequence's KV cache
    held = _fit(stored + kw["batch"] * kw["kv_per_sequence"], kw["gpu_memory"])
    return {
        "weights": weights,
        "tokens_per_second": inference.decode_ceiling_tokens_per_second(
            weight_bytes=weights, bandwidth=kw["bandwidth"], batch=kw["batch"],
            kv_bytes_per_sequence=kw["kv_per_sequence"]),
        "fits_one_gpu": held["fits"], "gpus_needed": held["gpus_needed"],
    }


DECODE_CEILING = Calculator(
    name="decode_ceiling",
    title="The decode ceiling",
    description="Generating a token reads every weight once: memory bandwidth caps the "
                "tokens per second, and batching shares each read.",
    lesson=LESSON,
    inputs=(
        *shared.params_inputs(),
        shared.WEIGHTS_PRECISION,
        *shared.gpu_inputs("H100 SXM", memory=True, bandwidth=True),
        replace(shared.DECODE_BATCH,
                help="Sequences decoded together: one weight read serves them all."),
        Number("kv_per_sequence", "KV cache per sequence", default=0, range=(0, 10_000),
               step=0.1, unit="GB", scale=1e9, dimension="bytes",
               help="The cache bytes each sequence's step reads; 0 ignores them. The "
                    "KV-cache calculator's 'Read by one decode step': the whole cache, "
                    "or with sparse attention (DeepSeek-V3.2, GLM-5) far less of it."),
    ),
    outputs=(
        Output("weights", "Weights read per step", "bytes",
               help="Every weight of a dense model. A mixture-of-experts preset reads only "
                    "the experts its batch routes to (its active parameters at batch 1, "
                    "nearly all at a large batch; uniform routing assumed)."),
        Output("tokens_per_second", "Ceiling, all sequences", "tokens/s",
               help="One GPU's bandwidth over the bytes a step reads: it assumes the "
                    "weights and the caches fit that GPU (see 'Weights and KV caches fit "
                    "on one GPU'). Split over several, each reads its share, and the links "
                    "between them cost time."),
        Output("fits_one_gpu", "Weights and KV caches fit on one GPU (the ceiling assumes "
               "so)", "bool",
               help="All the weights (every expert of a mixture of experts) and the batch's "
                    "KV caches against the GPU's memory, as the will-it-fit calculator tests "
                    "them; the runtime's overhead needs room too."),
        Output("gpus_needed", "GPUs the weights and caches need at least", "count",
               help="Weights and caches divided by one GPU's memory, rounded up, as if the "
                    "split cost nothing (the will-it-fit calculator's 'GPUs needed')."),
    ),
    function=_decode_ceiling,
)

ENTRIES = (AMDAHL, WILL_IT_FIT, DECODE_CEILING)
