"""Exercises of lesson 4, *Memory: What Fits* (``exercises/memory_what_fits.ipynb``).

They practise what the lesson counts: GPT-2's attention parameters (the figure a widely
shared page gets wrong), a GPT-2 and a Llama parameter count written as functions, the
weights of a 13B model in GB (and GiB), the full training state of a 7B model, whether a
fine-tune fits on one GPU, the activations of a layer with selective recomputation, the
activations per GPU with tensor and sequence parallelism, the number of 80 GB GPUs a 70B
model's training state needs, what a Llama layer keeps with FlashAttention, and the weights
of a mixture-of-experts model.

Every answer and every figure in a worked solution comes from the calculators
(:mod:`gpulesson.transformer`, :mod:`gpulesson.memory`); the declared mistakes are the
same calculators with the mistake put in (10 bytes per parameter, GiB written as GB,
gradients and optimizer state forgotten, the wrong recomputation mode, the GPT formula for
a Llama block, active parameters used for memory ...).
Standard library only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from gpulesson import activations, course, memory, transformer
from gpulesson.exercises import core, mistakes, wording
from gpulesson.exercises.bank._common import P, config, gib_as_gb_of, within_context
from gpulesson.exercises.core import Mistake
from gpulesson.units import format_bytes

LESSON = "memory_what_fits"
TITLE = course.title(LESSON)

#: The seed page's figure for mixed precision, wrong with Adam (ZeRO paper, section 3.1).
_CLAIMED_BYTES_PER_PARAM = 10


def _n(p: P) -> int:
    return transformer.param_count(config(p))


def _gb(n_bytes: float, digits: int = 2) -> str:
    return format_bytes(n_bytes, digits=digits)


def _gib(n_bytes: float, digits: int = 2) -> str:
    return format_bytes(n_bytes, binary=True, digits=digits)


def _on_80gb_gpus(n_bytes: float) -> str:
    """How many GPUs of 80 GB the bytes need at the least: "within one GPU of 80 GB",
    "at least 2 GPUs of 80 GB"."""
    gpus = memory.gpus_needed(n_bytes, 80e9)
    return ("within one GPU of 80 GB" if gpus <= 1
            else f"at least {wording.plural(gpus, 'GPU')} of 80 GB")


def _state(p: P, **kw: Any) -> memory.MemoryBreakdown:
    """Model state only (weights, gradients, optimizer): no activations."""
    return memory.training_memory(_n(p), batch=1, seq_len=1, **kw)


def _state_of(n_params: float) -> float:
    """The whole model state of ``n_params`` parameters (mixed precision, Adam), bytes."""
    return memory.training_memory(n_params, batch=1, seq_len=1).total


def _all_layers(per_layer: Callable[[P], float]) -> Mistake:
    """The slip of two exercises that ask for one layer: the whole model's layers."""
    return Mistake("all_layers", "That is all {layers} layers; the question asks for one.",
                   lambda p: config(p).layers * per_layer(p))


def _layer_words(p: P, per_layer: Callable[[P], float]) -> dict[str, Any]:
    """What the two one-layer exercises say of the model's shape, the micro-batch and all
    its layers together (``per_layer(p)`` bytes each)."""
    cfg = config(p)
    return {"label": wording.model_label(p["model"]), "h": wording.count(cfg.hidden),
            "a": cfg.heads, "sequences": wording.plural(p["batch"], "sequence"),
            "seq": wording.count(p["seq_len"]), "layers": cfg.layers,
            "all": _gb(cfg.layers * per_layer(p), 1)}


# ---------------------------------------------------------------------------------------
# 1. GPT-2's attention parameters

def _attention_derived(p: P) -> dict[str, Any]:
    cfg = config(p)
    d, layers = cfg.hidden, cfg.layers
    parts = transformer.param_breakdown(cfg)
    return {"label": wording.model_label(p["model"]), "d": wording.count(d), "layers": layers,
            "per_layer": core.format_number(parts["attention"] // layers),
            "weights_per_layer": core.format_number(4 * d * d),
            "biases_per_layer": core.format_number(4 * d),
            "twelve": core.format_number(12 * d * d * layers),
            "mlp": core.format_number(parts["mlp"])}


gpt2_attention = core.NumericExercise(
    lesson=LESSON, number=1, title="The attention parameters of {label}",
    question=(
        "{label} has width d = {d} and {layers} blocks. How many parameters sit in its "
        "attention sublayers, all blocks together: the Q, K, V and output-projection "
        "weights and their biases (the LayerNorms not included)? Give the exact count."
    ),
    hints=(
        "Per block: one d×3d matrix for Q, K and V, one d×d output projection, and a "
        "bias for each output.",
        "Per block 4d² + 4d; multiply by the number of blocks.",
    ),
    solution=(
        "Each block has {weights_per_layer} weights (4d²: the d×3d QKV matrix and the "
        "d×d output projection) and {biases_per_layer} biases (3d + d): {per_layer} per "
        "block. Over {layers} blocks: **{answer}**.\n\n"
        "A widely shared page calls L·12d² the attention parameters (84.9M for GPT-2 "
        "small); for this model that is {twelve}, the weight matrices of attention *and* "
        "MLP together. The MLP alone has {mlp} (`transformer.param_breakdown`)."
    ),
    answer=lambda p: transformer.param_breakdown(config(p))["attention"],
    derived=_attention_derived,
    mistakes=(
        Mistake("twelve_d_squared",
                "That is L·12d², the weight matrices of attention and MLP together (the "
                "figure a widely shared page calls 'attention'). Attention alone is 4d² "
                "per block, plus biases.",
                lambda p: 12 * config(p).hidden ** 2 * config(p).layers),
        Mistake("counted_mlp",
                "That is the MLP (d×4d and 4d×d, with biases). Attention has a d×3d QKV "
                "matrix and a d×d output projection.",
                lambda p: transformer.param_breakdown(config(p))["mlp"]),
        Mistake("one_block",
                "That is one block. Multiply by the {layers} blocks.",
                lambda p: transformer.param_breakdown(config(p))["attention"] // config(p).layers),
        Mistake("forgot_output_projection",
                "You counted Q, K and V but not the d×d output projection (and its bias) "
                "that follows the attention.",
                lambda p: config(p).layers * (3 * config(p).hidden ** 2 + 3 * config(p).hidden)),
        # review r22, F3: the lesson prints L·4d² as a quantity of its own, 0.13 % below
        Mistake("forgot_biases",
                "That is the weights alone, L·4d². The question counts their biases too: "
                "one per output of Q, K, V and the output projection, in every block.",
                lambda p: config(p).layers * 4 * config(p).hidden ** 2),
    ),
    defaults={"model": "gpt2"},
    sample=lambda rng: {"model": rng.choice(["gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl"])},
    # a parameter count is exact (the weights alone are only 0.13 % short of the key)
    dimension="count", unit="parameters", extra_units=wording.PARAMS, rtol=0.0,
)


# ---------------------------------------------------------------------------------------
# 2. Code: a GPT-2 parameter count

def _gpt2_reference(vocab: int, positions: int, hidden: int, layers: int) -> int:
    return transformer.param_count(transformer.TransformerConfig(
        hidden=hidden, layers=layers, heads=1, vocab=vocab, max_positions=positions))


def gpt2_param_count(vocab, positions, hidden, layers):
    # token and position tables, L blocks of 12d² weights + 13d biases and norms, final norm
    d = hidden
    return vocab * d + positions * d + layers * (12 * d * d + 13 * d) + 2 * d


def _gpt2_sample(rng: Any) -> dict[str, int]:
    return {"vocab": rng.randint(1000, 100_000), "positions": rng.choice([128, 512, 1024,
                                                                          2048, 4096]),
            "hidden": 64 * rng.randint(1, 40), "layers": rng.randint(1, 48)}


gpt2_code = core.CodeExercise(
    lesson=LESSON, number=2, title="Write gpt2_param_count",
    question=(
        "Write `gpt2_param_count(vocab, positions, hidden, layers)`: the exact number of "
        "parameters of a GPT-2 style model (learned position embeddings, biases on every "
        "linear layer, two LayerNorms per block and a final one, an MLP of width "
        "4·hidden, the output layer tied to the token embedding). It is checked against "
        "`gpulesson.transformer.param_count` on GPT-2 small and on random shapes."
    ),
    hints=(
        "Start from the tables (vocab·d and positions·d), then one block, then the final "
        "LayerNorm.",
        "One block: 4d² + 4d for attention, 8d² + 5d for the MLP, 4d for two LayerNorms.",
    ),
    solution=(
        "Tables V·d + P·d; each block 12d² + 13d; a final LayerNorm 2d. GPT-2 small "
        "(50,257, 1,024, 768, 12) gives "
        f"{wording.count(_gpt2_reference(50257, 1024, 768, 12))}, its published count; GPT-2 XL "
        "(width 1,600, 48 blocks) "
        f"{wording.count(_gpt2_reference(50257, 1024, 1600, 48))}."
    ),
    function_name="gpt2_param_count", signature="vocab, positions, hidden, layers",
    reference=_gpt2_reference,
    sample_input=_gpt2_sample,
    examples=({"vocab": 50257, "positions": 1024, "hidden": 768, "layers": 12},
              {"vocab": 50257, "positions": 1024, "hidden": 1600, "layers": 48}),
    mistakes=(
        Mistake("forgot_biases_and_norms",
                "Your count has the weight matrices (12d² per block) but not the 13d of "
                "biases and LayerNorms per block, or the final LayerNorm.",
                lambda i: (i["vocab"] + i["positions"]) * i["hidden"]
                + 12 * i["layers"] * i["hidden"] ** 2),
        Mistake("untied_output",
                "You added an output layer of vocab·d. GPT-2 ties it to the token "
                "embedding: the same matrix, counted once.",
                lambda i: _gpt2_reference(**i) + i["vocab"] * i["hidden"]),
        Mistake("forgot_positions",
                "GPT-2 learns a position table too: positions·d parameters.",
                lambda i: _gpt2_reference(**i) - i["positions"] * i["hidden"]),
        Mistake("forgot_final_norm",
                "Almost: the final LayerNorm after the last block has a scale and a shift, "
                "2d parameters.",
                lambda i: _gpt2_reference(**i) - 2 * i["hidden"]),
    ),
    model_solution=gpt2_param_count,
    rtol=0.0,
)


# ---------------------------------------------------------------------------------------
# 3. Code: a Llama parameter count

def _llama_config(vocab: int, hidden: int, layers: int, ffn: int, heads: int,
                  kv_heads: int) -> transformer.TransformerConfig:
    return transformer.TransformerConfig(
        hidden=hidden, layers=layers, heads=heads, vocab=vocab, ffn=ffn, kv_heads=kv_heads,
        tied_embeddings=False, gated_mlp=True, norm="rmsnorm", linear_bias=False)


def _llama_reference(vocab: int, hidden: int, layers: int, ffn: int, heads: int,
                     kv_heads: int) -> int:
    return transformer.param_count(_llama_config(vocab, hidden, layers, ffn, heads, kv_heads))


def llama_param_count(vocab, hidden, layers, ffn, heads, kv_heads):
    d = hidden
    kv = kv_heads * (hidden // heads)                  # width of K (and of V)
    attention = 2 * d * d + 2 * d * kv                  # q and o projections, k and v
    mlp = 3 * d * ffn                                   # gate, up and down
    norms = 2 * d                                       # two RMSNorm scales
    return 2 * vocab * d + layers * (attention + mlp + norms) + d


def _llama_sample(rng: Any) -> dict[str, int]:
    heads = rng.choice([8, 16, 32, 64])
    return {"vocab": rng.choice([32000, 50257, 128256, 151936]),
            "hidden": heads * 64 * rng.choice([1, 2]), "layers": rng.randint(2, 80),
            "ffn": 256 * rng.randint(4, 64), "heads": heads,
            "kv_heads": rng.choice([d for d in (1, 2, 4, 8) if heads % d == 0])}


def _as_llama(name: str) -> dict[str, int]:
    cfg = transformer.preset(name)
    return {"vocab": cfg.vocab, "hidden": cfg.hidden, "layers": cfg.layers,
            "ffn": cfg.ffn, "heads": cfg.heads, "kv_heads": cfg.kv_heads}  # type: ignore[dict-item]


def _kv_width(i: P) -> int:
    return i["kv_heads"] * (i["hidden"] // i["heads"])


llama_code = core.CodeExercise(
    lesson=LESSON, number=3, title="Write llama_param_count",
    question=(
        "Write `llama_param_count(vocab, hidden, layers, ffn, heads, kv_heads)`: the exact "
        "parameters of a Llama style model: no position table (rotary), no biases, two "
        "RMSNorms per block (a scale of width `hidden` each) and a final one, a SwiGLU MLP "
        "with three `hidden × ffn` matrices, grouped-query attention (K and V have "
        "`kv_heads` heads of size `hidden // heads`) and a separate output layer. It is "
        "checked against `gpulesson.transformer.param_count` on Llama-2-7B, Llama-3-8B "
        "and random shapes."
    ),
    hints=(
        "Per block: Q and the output projection are hidden × hidden; K and V are "
        "hidden × (kv_heads · hidden // heads).",
        "Per block: 2d² + 2d·kv for attention, 3·d·ffn for the MLP, 2d for the norms; "
        "plus vocab·d twice (embedding and output layer) and a final norm d.",
    ),
    solution=(
        "Embedding and output layer 2·V·d; per block 2d² + 2d·kv + 3·d·f + 2d; a final norm "
        f"d. Llama-2-7B gives {wording.count(_llama_reference(**_as_llama('llama-2-7b')))} and "
        f"Llama-3-8B {wording.count(_llama_reference(**_as_llama('llama-3-8b')))}, their published "
        "counts."
    ),
    function_name="llama_param_count", signature="vocab, hidden, layers, ffn, heads, kv_heads",
    reference=_llama_reference,
    sample_input=_llama_sample,
    examples=(_as_llama("llama-2-7b"), _as_llama("llama-3-8b")),
    mistakes=(
        Mistake("ignored_gqa",
                "Your K and V projections are hidden × hidden. With grouped-query attention "
                "they have only kv_heads heads: hidden × (kv_heads · hidden // heads).",
                lambda i: _llama_reference(**{**i, "kv_heads": i["heads"]})),
        Mistake("tied_output",
                "Llama's output layer is a separate vocab × hidden matrix (Llama-3.2-1B is "
                "the exception); count it as well as the embedding.",
                lambda i: _llama_reference(**i) - i["vocab"] * i["hidden"]),
        Mistake("two_matrix_mlp",
                "A SwiGLU MLP has three hidden × ffn matrices (gate, up, down), not two.",
                lambda i: _llama_reference(**i) - i["layers"] * i["hidden"] * i["ffn"]),
        Mistake("layernorm_bias",
                "RMSNorm has a scale only, d parameters; you counted a LayerNorm's scale "
                "and shift (2d).",
                lambda i: _llama_reference(**i) + (2 * i["layers"] + 1) * i["hidden"]),
    ),
    model_solution=llama_param_count,
    rtol=0.0,
)


# ---------------------------------------------------------------------------------------
# 4. The weights of a 13B model

def _other_precision(precision: str) -> str:
    return "fp32" if precision != "fp32" else "bf16"


def _weights_derived(p: P) -> dict[str, Any]:
    n = _n(p)
    w = memory.weight_bytes(n, precision=p["precision"])
    other = _other_precision(p["precision"])
    return {"label": wording.model_label(p["model"]), "count": wording.count(n),
            "prec": wording.precision_label(p["precision"]),
            "bpp": wording.value_bytes(memory.precision_bytes(p["precision"])),
            "other": wording.precision_label(other),
            "other_bpp": wording.value_bytes(memory.precision_bytes(other)),
            "gib": _gib(w), "bytes": wording.count(w),
            "train": _gb(_state({"model": p["model"]}).total, 1)}


weights_13b = core.NumericExercise(
    lesson=LESSON, number=4, title="The weights of {label} in {prec}",
    question=(
        "{label} has {count} parameters. How much memory do its weights take in {prec}, "
        "in GB (10^9 bytes)?"
    ),
    hints=(
        "Weights = parameters × bytes per parameter.",
        "{prec} stores each parameter in {bpp}; 1 GB is 10^9 bytes.",
    ),
    solution=(
        "{count} × {bpp} = {bytes} bytes = **{answer}**, which is {gib} in binary "
        "units (1 GiB = 2^30 bytes, 7.4% more than a GB). Datasheets quote decimal GB; "
        "PyTorch's memory summaries and `nvidia-smi` count in binary units, so say which "
        "one you mean.\n\n"
        "That is enough to serve it, plus the KV cache. Fully fine-tuning it is another "
        "matter: 16 bytes per parameter, {train}."
    ),
    answer=lambda p: memory.weight_bytes(_n(p), precision=p["precision"]),
    derived=_weights_derived,
    mistakes=(
        gib_as_gb_of(lambda p: memory.weight_bytes(_n(p), precision=p["precision"])),
        Mistake("wrong_precision",
                "Check the bytes per parameter: {prec} takes {bpp}, {other} takes "
                "{other_bpp}.",
                lambda p: memory.weight_bytes(_n(p), precision=_other_precision(p["precision"]))),
        Mistake("training_state",
                "16 bytes per parameter is the training state (weights, gradients, Adam's "
                "state and a master copy). The weights alone take {bpp} each in "
                "{prec}.",
                lambda p: _state(p).total),
    ),
    defaults={"model": "llama-2-13b", "precision": "bf16"},
    sample=lambda rng: {"model": rng.choice(["llama-2-7b", "llama-2-13b", "llama-3-8b",
                                             "mistral-7b", "qwen2.5-7b", "llama-2-70b"]),
                        "precision": rng.choice(["bf16", "fp32", "int8"])},
    dimension="bytes", unit="GB", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 5. The full training state of a 7B model

def _training_derived(p: P) -> dict[str, Any]:
    n = _n(p)
    s = _state(p)
    per = memory.model_state_bytes("mixed", "adam")
    return {"label": wording.model_label(p["model"]), "count": wording.count(n), "per": per.total,
            "w": per.weights, "g": per.gradients, "o": per.optimizer,
            "weights": _gb(s.weights), "grads": _gb(s.gradients), "opt": _gb(s.optimizer),
            "gpus": _on_80gb_gpus(s.total), "claimed_text": _claimed_text(p),
            "fp32": memory.bytes_per_param("fp32", "adam"),
            "named": wording.billions(_named_size(p) or n)}


def _named_size(p: P) -> float | None:
    """The round parameter count in the model's name (``llama-2-7b``: 7e9), if any."""
    match = re.search(r"-(\d+(?:\.\d+)?)b$", p["model"])
    return float(match.group(1)) * 1e9 if match else None


def _named_state(p: P, rtol: float = 0.02) -> float | None:
    """The training state of :func:`_named_size` parameters, the slip of a learner who
    takes the size in the name for the count; ``None`` where the name has no size, or
    where that state lies within ``rtol`` of the answer or of the answer in GiB (the
    gib_as_gb slip): there it explains nothing, or less than the other hint."""
    named = _named_size(p)
    if named is None:
        return None
    state, total = _state_of(named), _state(p).total
    if any(abs(state - x) <= rtol * max(state, x) for x in (total, total * 1e9 / 2**30)):
        return None
    return state


def _claimed_text(p: P) -> str:
    """What the circulating 10 bytes per parameter would make of the training state: fewer
    GPUs of 80 GB than it needs, or (where the count is the same) only a short total."""
    claimed = _n(p) * _CLAIMED_BYTES_PER_PARAM
    total = _state(p).total
    start = f"The 10 bytes per parameter a widely shared page claims ({_gb(claimed)}) "
    needed = memory.gpus_needed(claimed, 80e9)
    if needed < memory.gpus_needed(total, 80e9):
        where = "one GPU" if needed == 1 else wording.plural(needed, "GPU")
        return start + f"would wrongly fit it on {where}."
    return start + f"would fall {_gb(total - claimed)} short."


training_state_7b = core.NumericExercise(
    lesson=LESSON, number=5, title="The full training state of {label}",
    question=(
        "We fully fine-tune {label} ({count} parameters) with mixed-precision AdamW "
        "(BF16 weights and gradients). How much memory do the weights, gradients and "
        "optimizer state take together, in GB? Leave out the activations."
    ),
    hints=(
        "List what is kept for every parameter: the 16-bit weight, its gradient, and what "
        "Adam needs.",
        "2 bytes of weights, 2 of gradients, a 4-byte FP32 master copy and two 4-byte FP32 "
        "moments.",
    ),
    solution=(
        "{per} bytes per parameter ({w} + {g} + {o}; ZeRO paper §3.1): weights {weights}, "
        "gradients {grads}, optimizer state and master copy {opt}, together **{answer}**, "
        "{gpus} before any activation. Training in FP32 with Adam needs {fp32} bytes per "
        "parameter as well (4 + 4 + 4 + 4): mixed precision saves time and activation "
        "memory, not model state. {claimed_text}"
    ),
    answer=lambda p: _state(p).total,
    derived=_training_derived,
    mistakes=(
        Mistake("ten_bytes",
                "10 bytes per parameter is a figure that circulates for mixed precision, "
                "but it leaves out part of the state. Count 2 + 2 + 4 + 4 + 4.",
                lambda p: _n(p) * _CLAIMED_BYTES_PER_PARAM),
        mistakes.forgot_training_state(lambda p: _state(p).weights),
        Mistake("forgot_optimizer",
                "You counted weights and gradients. AdamW also keeps an FP32 master copy "
                "and two FP32 moments per parameter: {o} more bytes each.",
                lambda p: _state(p).weights + _state(p).gradients),
        Mistake("forgot_master_copy",
                "Adam's two FP32 moments are there, but mixed precision also keeps an FP32 "
                "master copy of the weights (4 bytes), which the update is applied to.",
                lambda p: _state(p).total - 4 * _n(p)),
        gib_as_gb_of(lambda p: _state(p).total),
        # review r22, F11: lesson 1 works with a round 7e9; 112 GB is not a rounding slip
        Mistake("named_size",
                "That is the state of {named} parameters, the round size in the model's "
                "name that lesson 1's estimates use. The question gives {label}'s own "
                "count, {count}: use it.",
                _named_state),
    ),
    defaults={"model": "llama-2-7b"},
    sample=lambda rng: {"model": rng.choice(["llama-2-7b", "mistral-7b", "qwen2.5-7b",
                                             "llama-3-8b", "llama-3.2-1b", "llama-2-13b"])},
    dimension="bytes", unit="GB", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 6. Does the fine-tune fit on one GPU?

def _fit_key(state: float, activations: float, gpu_memory: float) -> str:
    if not memory.fits(state, gpu_memory):
        return "state"
    return "fits" if memory.fits(state + activations, gpu_memory) else "activations"


def _run(p: P) -> memory.MemoryBreakdown:
    return memory.training_memory(config(p), batch=p["batch"], seq_len=p["seq_len"],
                                  recompute="selective")


def _fit_answer(p: P) -> str:
    m = _run(p)
    return _fit_key(m.weights + m.gradients + m.optimizer, m.activations, p["gpu_memory"])


def _slip(answer: str, chosen: str) -> str | None:
    """A choice mistake's value: the option ``chosen`` by the slip, or ``None`` where that
    is the right one. Both slips below undercount the state, so where the right answer is
    "fits" they pick it too; without this, ``variant()`` rejected every such draw and
    298 of seeds 0-299 answered "state"."""
    return None if chosen == answer else chosen


def _fit_derived(p: P) -> dict[str, Any]:
    m = _run(p)
    state = m.weights + m.gradients + m.optimizer
    how = ("FlashAttention, which stores no scores, derived tensor by tensor"
           if activations.default_attention(config(p)) == "flash"
           else "selective recomputation, 34·s·b·h bytes per layer")
    cfg = config(p)
    flash = activations.default_attention(cfg) == "flash"
    per_layer = m.activations / (cfg.layers * p["seq_len"] * p["batch"] * cfg.hidden)
    return {"label": wording.model_label(p["model"]), "mem": _gb(p["gpu_memory"], 0), "how": how,
            "recompute_note": ("FlashAttention, for a Llama model" if flash else
                               "the attention scores recomputed, for a GPT block"),
            "block_factor": core.format_number(per_layer, 2),
            "sequences": wording.plural(p["batch"], "sequence"),
            "seq": wording.count(p['seq_len']), "state": _gb(state, 1),
            "acts": _gb(m.activations, 1),
            "total": _gb(m.total, 1), "weights": _gb(m.weights, 1),
            "claimed": _gb(_n(p) * _CLAIMED_BYTES_PER_PARAM, 1),
            "spare": _gb(abs(memory.headroom(m.total, p["gpu_memory"])), 1),
            "verdict": ("fits, with {} to spare" if memory.fits(m.total, p["gpu_memory"])
                        else "is short by {}").format(
                            _gb(abs(memory.headroom(m.total, p["gpu_memory"])), 1))}


fits_one_gpu = core.ChoiceExercise(
    lesson=LESSON, number=6, title="Does the {label} fine-tune fit on one {mem} GPU?",
    question=(
        "We want to fully fine-tune {label} with mixed-precision AdamW on one GPU with "
        "{mem} of memory: a micro-batch of {sequences} of {seq} tokens, with "
        "selective activation recomputation ({recompute_note}). Does it fit?"
    ),
    options=[("fits", "Yes: model state and activations fit together"),
             ("activations", "The model state fits, but the activations push it over"),
             ("state", "No: the model state alone is too large")],
    hints=(
        "Model state first: 16 bytes per parameter. Then the activations, none of them "
        "attention scores: 34·s·b·h bytes per layer for a GPT block, about "
        "{block_factor}·s·b·h for {label} (`memory.training_memory` counts the model's "
        "own block).",
        "Model state {state}, activations {acts}, against {mem}.",
    ),
    solution=(
        "Model state: 16 bytes per parameter, {state}. Activations ({how}, all layers): "
        "{acts}. Together {total}; "
        "against the GPU's {mem} it {verdict}.\n\n"
        "Serving needs only the weights ({weights} in BF16), and the 10 bytes per "
        "parameter that circulate for mixed precision would give {claimed} of state: both "
        "underestimate training by far."
    ),
    answer=_fit_answer,
    derived=_fit_derived,
    mistakes=(
        Mistake("weights_only",
                "You counted the weights as the model state. Training keeps 16 bytes per "
                "parameter: {state}.",
                lambda p: _slip(_fit_answer(p), _fit_key(_run(p).weights, _run(p).activations,
                                                         p["gpu_memory"]))),
        Mistake("ten_bytes",
                "With 10 bytes per parameter the state would be {claimed}; with "
                "mixed-precision Adam it is 16 bytes per parameter, {state}.",
                lambda p: _slip(_fit_answer(p), _fit_key(
                    _n(p) * _CLAIMED_BYTES_PER_PARAM, _run(p).activations, p["gpu_memory"]))),
    ),
    defaults={"model": "llama-2-7b", "gpu_memory": 80e9, "batch": 1, "seq_len": 4096},
    sample=lambda rng: (lambda model: {
        "model": model, "gpu_memory": rng.choice([24e9, 40e9, 48e9, 80e9, 141e9, 192e9]),
        "batch": rng.choice([1, 2, 4]),
        "seq_len": within_context(rng, model, [1024, 2048, 4096, 8192])})(
            rng.choice(["llama-3.2-1b", "gpt2-xl", "llama-2-7b", "llama-3-8b"])),
)


# ---------------------------------------------------------------------------------------
# 7. Activations per layer with selective recomputation

def _acts(p: P, *, recompute: str = "selective", tp: int = 1, sp: bool = False) -> int:
    cfg = config(p)
    return memory.activation_bytes_per_layer(
        seq_len=p["seq_len"], batch=p["batch"], hidden=cfg.hidden, heads=cfg.heads, tp=tp,
        sequence_parallel=sp, recompute=recompute)


def _acts_derived(p: P) -> dict[str, Any]:
    cfg = config(p)
    return {**_layer_words(p, _acts),
            "none": _gb(_acts(p, recompute="none")), "full": _gb(_acts(p, recompute="full")),
            "ratio": core.format_number(5 * cfg.heads * p["seq_len"] / cfg.hidden, 3)}


activations_selective = core.NumericExercise(
    lesson=LESSON, number=7, title="Activations of one {label} layer, selective recomputation",
    question=(
        "{label} has width h = {h} and {a} attention heads. Training with a micro-batch of "
        "{sequences} of {seq} tokens, 16-bit activations and **selective** "
        "recomputation, how much activation memory does **one** layer keep for the "
        "backward pass (Korthikanti et al.'s count for a GPT-style block), in GB?"
    ),
    hints=(
        "Without recomputation a layer keeps s·b·h·(34 + 5·a·s/h) bytes. Which term does "
        "selective recomputation drop?",
        "It drops the attention scores, 5·a·s²·b bytes: 34·s·b·h remain.",
    ),
    solution=(
        "Selective recomputation recomputes the attention scores (softmax output, its "
        "dropout mask and output) in the backward pass, so a layer keeps 34·s·b·h bytes: "
        "**{answer}**. Without recomputation it would keep {none} (the score term 5·a·s/h "
        "is {ratio}, against 34); with full recomputation only the layer's input, 2·s·b·h = "
        "{full}. All {layers} layers keep {all}."
    ),
    answer=_acts,
    derived=_acts_derived,
    mistakes=(
        Mistake("no_recompute",
                "That keeps the attention scores, 5·a·s²·b bytes: it is the figure without "
                "recomputation. Selective recomputation drops exactly that term.",
                lambda p: _acts(p, recompute="none")),
        Mistake("full_recompute",
                "That is full recomputation, which keeps only the layer's input (2·s·b·h). "
                "Selective recomputation keeps the 34·s·b·h of everything but the scores.",
                lambda p: _acts(p, recompute="full")),
        _all_layers(_acts),
        gib_as_gb_of(_acts),
    ),
    # A GPT-style block (GeLU MLP of width 4h, dropout masks): the count is Korthikanti et
    # al.'s for exactly such blocks, so the exercise uses GPT shapes, not Llama's.
    defaults={"model": "gpt3-175b", "batch": 1, "seq_len": 2048},
    sample=lambda rng: (lambda model: {
        "model": model, "batch": rng.choice([1, 2, 4, 8]),
        "seq_len": within_context(rng, model, [1024, 2048, 4096])})(
            rng.choice(["gpt2-medium", "gpt2-large", "gpt2-xl", "gpt3-175b"])),
    dimension="bytes", unit="GB", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 8. Activations per GPU with tensor and sequence parallelism

def _tp_derived(p: P) -> dict[str, Any]:
    cfg = config(p)
    layers = cfg.layers
    return {"label": wording.model_label(p["model"]), "layers": layers,
            "seq": wording.count(p['seq_len']),
            "one": _gb(layers * _acts(p)), "tp_only": _gb(layers * _acts(p, tp=p["tp"])),
            "per_layer": _gb(_acts(p, tp=p["tp"], sp=True))}


activations_tp_sp = core.NumericExercise(
    lesson=LESSON, number=8, title="Activations per GPU with tensor and sequence parallelism",
    question=(
        "{label} ({layers} layers) trains on sequences of {seq} tokens, micro-batch 1, with "
        "selective recomputation, split over **{tp} GPUs with tensor parallelism and "
        "sequence parallelism**. How much activation memory does each GPU keep for all "
        "layers, in GB (Korthikanti et al.'s count for a GPT-style block)?"
    ),
    hints=(
        "On one GPU each layer keeps 34·s·b·h bytes with selective recomputation. What "
        "does splitting the layer over t GPUs divide?",
        "Tensor parallelism divides 24 of the 34 by t; sequence parallelism also divides "
        "the other 10: 34·s·b·h / t per layer.",
    ),
    solution=(
        "With tensor *and* sequence parallelism every activation of the layer is split "
        "over the {tp} GPUs: 34·s·b·h / {tp} = {per_layer} per layer, **{answer}** for "
        "{layers} layers. Tensor parallelism alone would leave the LayerNorm and dropout "
        "regions replicated, s·b·h·(10 + 24/{tp}) per layer: {tp_only}. On one GPU it "
        "would be {one}."
    ),
    answer=lambda p: config(p).layers * _acts(p, tp=p["tp"], sp=True),
    derived=_tp_derived,
    mistakes=(
        Mistake("forgot_split",
                "That is the activation memory on a single GPU. Splitting each layer over "
                "{tp} GPUs divides it.",
                lambda p: config(p).layers * _acts(p)),
        Mistake("no_sequence_parallel",
                "That is tensor parallelism alone, s·b·h·(10 + 24/t): the LayerNorm and "
                "dropout activations stay on every GPU. Sequence parallelism splits them "
                "too.",
                lambda p: config(p).layers * _acts(p, tp=p["tp"])),
        Mistake("one_layer",
                "That is one layer; multiply by the {layers} layers.",
                lambda p: _acts(p, tp=p["tp"], sp=True)),
        Mistake("no_recompute",
                "That keeps the attention scores; with selective recomputation they are "
                "recomputed, and 34·s·b·h / t remains per layer.",
                lambda p: config(p).layers * _acts(p, tp=p["tp"], sp=True, recompute="none")),
        gib_as_gb_of(lambda p: config(p).layers * _acts(p, tp=p["tp"], sp=True)),
    ),
    defaults={"model": "gpt3-175b", "seq_len": 2048, "batch": 1, "tp": 8},
    sample=lambda rng: (lambda model: {
        "model": model, "seq_len": within_context(rng, model, [1024, 2048, 4096]),
        "batch": 1, "tp": rng.choice([2, 4, 8])})(
            rng.choice(["gpt2-large", "gpt2-xl", "gpt3-175b"])),
    dimension="bytes", unit="GB", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 9. GPUs for a 70B model's training state

def _gpus_derived(p: P) -> dict[str, Any]:
    state = _state(p).total
    weights = memory.weight_bytes(_n(p), precision="bf16")
    serve = memory.gpus_needed(weights, p["gpu_memory"])
    return {"label": wording.model_label(p["model"]), "count": wording.count(_n(p)),
            "mem": _gb(p["gpu_memory"], 0),
            "state": _gb(state), "ratio": core.format_number(state / p["gpu_memory"], 4),
            "weights": _gb(weights, 1), "serve": f"{serve} GPU{'s' if serve > 1 else ''}"}


gpus_for_state = core.NumericExercise(
    lesson=LESSON, number=9, title="GPUs for the training state of {label}",
    question=(
        "{label} has {count} parameters. With mixed-precision AdamW and the model state "
        "spread evenly over GPUs of {mem} each (ZeRO stage 3 or FSDP), how many GPUs does "
        "the model state need at the very least, before any activations?"
    ),
    hints=(
        "Model state = 16 bytes per parameter.",
        "GPUs = model state ÷ memory per GPU, rounded **up**.",
    ),
    solution=(
        "16 bytes per parameter gives {state} of model state; {state} ÷ {mem} = {ratio}, "
        "rounded up: **{answer}**. It is a lower bound: every GPU must also keep the "
        "activations of its own micro-batch and leave headroom for buffers. Serving the "
        "same model needs its BF16 weights only, {weights}: {serve}."
    ),
    answer=lambda p: memory.gpus_needed(_state(p).total, p["gpu_memory"]),
    derived=_gpus_derived,
    mistakes=(
        Mistake("weights_only",
                "That is enough for the BF16 weights ({weights}), which is what serving "
                "needs. Training keeps 16 bytes per parameter: {state}.",
                lambda p: memory.gpus_needed(memory.weight_bytes(_n(p), precision="bf16"),
                                             p["gpu_memory"])),
        Mistake("ten_bytes",
                "With 10 bytes per parameter, a figure that circulates for mixed "
                "precision, you get too few. Mixed-precision Adam keeps 16.",
                lambda p: memory.gpus_needed(_n(p) * _CLAIMED_BYTES_PER_PARAM,
                                             p["gpu_memory"])),
        Mistake("rounded_down",
                "{state} ÷ {mem} = {ratio}: round up, or the last part of the state has no "
                "GPU to live on.",
                lambda p: math.floor(_state(p).total / p["gpu_memory"])),
    ),
    defaults={"model": "llama-3-70b", "gpu_memory": 80e9},
    sample=lambda rng: {"model": rng.choice(["llama-2-13b", "llama-2-70b", "llama-3-70b",
                                             "gpt3-175b", "llama-3.1-405b"]),
                        "gpu_memory": rng.choice([40e9, 80e9, 141e9, 192e9])},
    dimension="count", unit="GPUs", extra_units=wording.GPUS, rtol=0.0, atol=0.0,
)


# ---------------------------------------------------------------------------------------
# 10. A Llama layer with FlashAttention

def _flash_layer(p: P, attention: str = "flash") -> int:
    return activations.layer_activation_bytes(config(p), seq_len=p["seq_len"],
                                              batch=p["batch"], attention=attention)


def _flash_derived(p: P) -> dict[str, Any]:
    cfg = config(p)
    return {**_layer_words(p, _flash_layer), "kv": cfg.kv_heads, "f": wording.count(cfg.ffn),
            "gpt": _gb(_acts(p, recompute="none")), "eager": _gb(_flash_layer(p, "eager"))}


llama_flash_layer = core.NumericExercise(
    lesson=LESSON, number=10, title="What a {label} layer keeps with FlashAttention",
    question=(
        "{label} has width h = {h}, {a} query heads sharing {kv} key/value heads and a SwiGLU "
        "MLP of width f = {f}, in a fused kernel that recomputes SiLU's output from the gate; "
        "it trains without dropout and with FlashAttention. With a "
        "micro-batch of {sequences} of {seq} tokens and 16-bit activations, how much does "
        "**one** layer keep for the backward pass, in GB?"
    ),
    hints=(
        "List the tensors: two norm inputs, the attention input, Q, K and V (K and V only "
        "n_kv/a as wide), the attention output, the MLP input, and the gate, up and their "
        "product (f wide). FlashAttention keeps no score matrix, only one FP32 log-sum-exp "
        "per head and token.",
        "s·b·h·(12 + 4·n_kv/a + 6·f/h) + 4·a·s·b bytes.",
    ),
    solution=(
        "In units of s·b·h: 4 for the two norm inputs, 2 each for the attention input, Q, "
        "the attention output and the MLP input, 4·n_kv/a for K and V, 6·f/h for the three "
        "MLP tensors; plus 4·a·s·b bytes of softmax statistics: **{answer}** "
        "(`activations.layer_activation_bytes`), {all} for all {layers} layers. Eager "
        "attention would keep the 2·a·s²·b of scores as well, {eager}; Korthikanti et al.'s "
        "formula for a GPT block, s·b·h·(34 + 5·a·s/h), says {gpt}."
    ),
    answer=_flash_layer,
    derived=_flash_derived,
    mistakes=(
        Mistake("gpt_formula",
                "That is Korthikanti et al.'s GPT block, s·b·h·(34 + 5·a·s/h), with dropout "
                "masks and the scores kept. A Llama layer has no dropout, a SwiGLU MLP, "
                "grouped K and V, and FlashAttention keeps no scores.",
                lambda p: _acts(p, recompute="none")),
        Mistake("gpt_selective",
                "That is 34·s·b·h, a GPT block with the scores dropped. Count Llama's own "
                "tensors: the SwiGLU MLP keeps three f-wide tensors, K and V are n_kv/a as "
                "wide, and there are no dropout masks.",
                _acts),
        Mistake("eager_scores",
                "That keeps the 2·a·s²·b bytes of attention scores: eager attention. "
                "FlashAttention recomputes them in the backward pass.",
                lambda p: _flash_layer(p, "eager")),
        _all_layers(_flash_layer),
        gib_as_gb_of(_flash_layer),
    ),
    defaults={"model": "llama-2-7b", "batch": 1, "seq_len": 4096},
    sample=lambda rng: (lambda model: {
        "model": model, "batch": rng.choice([1, 2, 4]),
        "seq_len": within_context(rng, model, [2048, 4096, 8192])})(
            rng.choice(["llama-2-7b", "llama-2-13b", "llama-3-8b", "mistral-7b",
                        "llama-3-70b"])),
    dimension="bytes", unit="GB", rtol=0.02,
)


# ---------------------------------------------------------------------------------------
# 11. The weights of a mixture of experts

def _moe_weights(p: P, n: float | None = None) -> float:
    return memory.weight_bytes(_n(p) if n is None else n, precision=p["precision"])


def _moe_derived(p: P) -> dict[str, Any]:
    cfg = config(p)
    return {"label": wording.model_label(p["model"]), "experts": cfg.experts,
            "k": cfg.experts_per_token, "precision": wording.precision_label(p["precision"]),
            "bytes": wording.value_bytes(memory.precision_bytes(p["precision"])),
            "total": wording.billions(_n(p)),
            "active": wording.billions(transformer.active_params(cfg)),
            "gpus": _on_80gb_gpus(_moe_weights(p))}


moe_weights = core.NumericExercise(
    lesson=LESSON, number=11, title="The weights of {label}",
    question=(
        "{label} has {total} parameters in all. It routes each token to {k} of the "
        "{experts} experts of every mixture-of-experts layer, so a token is multiplied by "
        "{active} of them. How much memory do its weights take in {precision}, in GB?"
    ),
    hints=(
        "A token uses a few experts, but the next token may need any of them: which "
        "parameters must be in memory?",
        "All of them: `transformer.param_count` × {bytes}.",
    ),
    solution=(
        "Any expert may be needed by the next token, so memory holds them all: {total} "
        "parameters × {bytes} = **{answer}**, {gpus} for the weights "
        "alone. A token is multiplied by only {active} of them, its active "
        "parameters (`transformer.active_params`): they set the FLOPs, not the bytes."
    ),
    answer=_moe_weights,
    derived=_moe_derived,
    mistakes=(
        Mistake("active_for_memory",
                "That counts the active parameters, the ones one token uses. Memory must hold "
                "every expert of every layer: count all {total}.",
                lambda p: _moe_weights(p, transformer.active_params(config(p)))),
        gib_as_gb_of(_moe_weights),
    ),
    defaults={"model": "mixtral-8x7b", "precision": "bf16"},
    sample=lambda rng: {"model": rng.choice(["mixtral-8x7b", "qwen3-30b-a3b",
                                             "qwen3-235b-a22b", "gpt-oss-20b",
                                             "deepseek-v3"]),
                        "precision": rng.choice(["bf16", "fp8"])},
    dimension="bytes", unit="GB", rtol=0.02,
)


EXERCISES = (
    gpt2_attention,
    gpt2_code,
    llama_code,
    weights_13b,
    training_state_7b,
    fits_one_gpu,
    activations_selective,
    activations_tp_sp,
    gpus_for_state,
    llama_flash_layer,
    moe_weights,
)

__all__ = ["EXERCISES", "LESSON", "TITLE", "gpt2_param_count", "llama_param_count"]
