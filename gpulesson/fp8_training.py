"""FP8 training recipes: which tensors each keeps in which format, and the bytes per parameter.

Model state per parameter, tensor by tensor
-------------------------------------------
Training keeps, per parameter, up to six tensors: the master weights the optimizer updates,
a gradient-accumulation buffer (summing micro-batches), the working weights the products
read, the gradients, and Adam's first and second moments. A recipe names the format of
each; its bytes per parameter are the sum of their widths
(:func:`recipe_bytes_per_param`):

``bytes = sum(bytes_per_element(format of part) for each part the recipe keeps)``

The products' (GEMMs') format is a separate choice: NVIDIA's Transformer Engine runs the
products in FP8 while storing everything in FP32, so it saves time but no state.

The recipes (:data:`RECIPES`)
-----------------------------
* ``"bf16_fp32_accum"``, ``"bf16"``: BF16 mixed precision with and without an FP32
  accumulation buffer, 20 and 16 bytes (Tazi et al. 2025, *The Ultra-Scale Playbook*,
  mixed-precision table).
* ``"fp16_amp"``, ``"transformer_engine"``: FP32 weights, gradients and moments, 16 bytes
  (MS-AMP's optimisation-level table; the Playbook agrees for Transformer Engine).
* ``"fp8lm_o1"``, ``"fp8lm_o2"``, ``"fp8lm_o3"``: FP8-LM's levels (Peng et al. 2023,
  arXiv 2310.18313, released as MS-AMP): O1 stores FP16 weights and FP8 gradients (11
  bytes), O2 also keeps the first moment in FP8 and the second in FP16 (6 bytes), O3 keeps
  FP8 working weights beside FP16 master weights for ZeRO (7 bytes).
* ``"deepseek_v3"``: FP8 products and working weights, BF16 gradients, FP32 master weights
  and accumulation, BF16 moments (DeepSeek-AI 2024, section 3.3; 15 bytes in the Playbook).
* ``"nanotron_fp8"``: Nanotron's FP8 run in the Playbook: BF16 master weights, FP32
  accumulation, FP8 weights, gradients and moments (10 bytes).

The Playbook counts FP8-LM's O3 with an FP16 accumulation buffer (9 bytes); MS-AMP's table
has none (7): ``recipe_bytes_per_param("fp8lm_o3", accumulate_in="fp16")`` is the
Playbook's row. :mod:`gpulesson.memory` keeps the recipes its planners use
(``"fp8_deepseek_v3"``: 15 bytes) and must agree with these.

Taught in: ``notebooks/optimisations.ipynb`` (Going further: FP8 recipes, tensor by tensor).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from gpulesson import _validate as v
from gpulesson import precision

__all__ = [
    "RECIPES",
    "STATE_PARTS",
    "TrainingRecipe",
    "optimizer_state_bytes",
    "recipe",
    "recipe_bytes",
    "recipe_bytes_per_param",
    "recipe_state_memory",
]

#: The tensors training keeps per parameter, in the order the Playbook's table lists them.
STATE_PARTS = ("master_weights", "accumulated_gradients", "weights", "gradients",
               "first_moment", "second_moment")


@dataclass(frozen=True)
class TrainingRecipe:
    """A training recipe: the format of the products and of each stored tensor.

    ``parts`` maps each of :data:`STATE_PARTS` to a format name understood by
    :func:`gpulesson.precision.bytes_per_element`, or ``None`` where the recipe keeps no
    such tensor (no master copy when the weights are FP32, no separate accumulation
    buffer). ``source`` names the publication the formats come from.
    """

    name: str
    gemm: str
    parts: Mapping[str, str | None]
    source: str


def _recipe(name: str, gemm: str, formats: tuple[str | None, ...], source: str
            ) -> TrainingRecipe:
    return TrainingRecipe(name=name, gemm=gemm,
                          parts=MappingProxyType(dict(zip(STATE_PARTS, formats, strict=True))),
                          source=source)


_PLAYBOOK = "Tazi et al. 2025, The Ultra-Scale Playbook, mixed-precision table"
_MSAMP = ("Peng et al. 2023 (FP8-LM), MS-AMP docs/user-tutorial/optimization-level.md "
          "(github.com/Azure/MS-AMP)")

#: The recipes, by name. Formats per part: master weights, accumulated gradients,
#: weights, gradients, first moment, second moment.
RECIPES: Mapping[str, TrainingRecipe] = MappingProxyType({r.name: r for r in (
    _recipe("bf16_fp32_accum", "bf16", ("fp32", "fp32", "bf16", "bf16", "fp32", "fp32"),
            _PLAYBOOK),
    _recipe("bf16", "bf16", ("fp32", None, "bf16", "bf16", "fp32", "fp32"), _PLAYBOOK),
    _recipe("fp16_amp", "fp16", (None, None, "fp32", "fp32", "fp32", "fp32"), _MSAMP),
    _recipe("transformer_engine", "fp8", (None, None, "fp32", "fp32", "fp32", "fp32"),
            _MSAMP + "; " + _PLAYBOOK),
    _recipe("fp8lm_o1", "fp8", (None, None, "fp16", "fp8", "fp32", "fp32"), _MSAMP),
    _recipe("fp8lm_o2", "fp8", (None, None, "fp16", "fp8", "fp8", "fp16"), _MSAMP),
    _recipe("fp8lm_o3", "fp8", ("fp16", None, "fp8", "fp8", "fp8", "fp16"), _MSAMP),
    _recipe("deepseek_v3", "fp8", ("fp32", "fp32", "fp8", "bf16", "bf16", "bf16"),
            "DeepSeek-AI 2024, DeepSeek-V3 Technical Report, section 3.3; " + _PLAYBOOK),
    _recipe("nanotron_fp8", "fp8", ("bf16", "fp32", "fp8", "fp8", "fp8", "fp8"), _PLAYBOOK),
)})
_ALIASES = {"fp8_lm_o1": "fp8lm_o1", "fp8_lm_o2": "fp8lm_o2", "fp8_lm_o3": "fp8lm_o3",
            "msamp_o1": "fp8lm_o1", "msamp_o2": "fp8lm_o2", "msamp_o3": "fp8lm_o3",
            "te": "transformer_engine", "deepseek": "deepseek_v3",
            "fp8_deepseek_v3": "deepseek_v3", "nanotron": "nanotron_fp8",
            "mixed": "bf16", "mixed_fp32_grad_accum": "bf16_fp32_accum"}


def recipe(name: str) -> TrainingRecipe:
    """The recipe called ``name`` (see :data:`RECIPES`; ``"msamp_o2"``, ``"deepseek"``
    and the :mod:`gpulesson.memory` names ``"mixed"``, ``"fp8_deepseek_v3"`` also work)."""
    return RECIPES[v.lookup("recipe", name, RECIPES, _ALIASES)[0]]


def recipe_bytes(name: str, *, accumulate_in: str | None = None) -> dict[str, float]:
    """Bytes per parameter of each tensor the recipe keeps, by part (absent parts left out).

    ``accumulate_in`` adds (or replaces) a gradient-accumulation buffer of that format,
    ``"none"`` removes it.
    """
    r = recipe(name)
    parts = dict(r.parts)
    if accumulate_in is not None:
        if not isinstance(accumulate_in, str):
            raise TypeError(f"accumulate_in must be a format name or 'none', got "
                            f"{accumulate_in!r}")
        parts["accumulated_gradients"] = (None if accumulate_in.strip().lower() == "none"
                                          else accumulate_in)
    return {part: precision.bytes_per_element(fmt) for part, fmt in parts.items()
            if fmt is not None}


def recipe_bytes_per_param(name: str, *, accumulate_in: str | None = None) -> float:
    """Model-state bytes per parameter of a recipe: the sum of :func:`recipe_bytes`.

    BF16 mixed precision with FP32 accumulation 20, without 16; FP8-LM O1 11, O2 6, O3 7
    (9 with an FP16 accumulation buffer, as the Playbook counts it); DeepSeek-V3 15;
    Nanotron's FP8 10.
    """
    return float(sum(recipe_bytes(name, accumulate_in=accumulate_in).values()))


def optimizer_state_bytes(name: str) -> float:
    """Bytes per parameter of Adam's two moments alone in a recipe (FP32 + FP32 = 8; FP8-LM
    O2's FP8 + FP16 = 3, the "up to 62.5 %" of optimizer memory MS-AMP says O2 saves)."""
    parts = recipe_bytes(name)
    return float(parts.get("first_moment", 0.0) + parts.get("second_moment", 0.0))


def recipe_state_memory(n_params: float, name: str, *, accumulate_in: str | None = None
                        ) -> float:
    """Bytes of model state for ``n_params`` parameters trained with a recipe:
    ``n_params * recipe_bytes_per_param(name)`` (no sharding; divide the sharded parts by
    the data-parallel degree for ZeRO, :func:`gpulesson.distributed.zero_memory_per_gpu`)."""
    n = v.positive_number("n_params", n_params)
    return n * recipe_bytes_per_param(name, accumulate_in=accumulate_in)


v.guard_module(globals())
