"""The published training runs of ``gpulesson/data/training_runs.json``, as the planner reads them.

Each :class:`PublishedRun` records a run as its source states it (model, GPUs, full
layout, batch, sequence, precision, recomputation), a short quote of the figure, the
source's address and its date, and the assumptions where the source leaves a setting out.
The published figure (tokens per second per GPU, an MFU, Megatron-LM's eq. 3 TFLOP/s, or
GPU-hours for a number of tokens) is converted to one convention: model FLOPs (``6N`` with
the active parameters plus PaLM's ``12LHQT``, :func:`gpulesson.flops.model_flops_per_token`)
over the dense BF16 peak, whatever precision the run computed in. GPU-hours of a whole run
count only their effective share as training (:data:`EFFECTIVE_TRAINING_TIME`).

Standard library only (the site reads the runs in the browser).

Taught in: ``notebooks/planning_dashboard.ipynb`` (predicted against published).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from types import MappingProxyType

from gpulesson import _validate as v
from gpulesson import flops
from gpulesson.transformer import TransformerConfig

from ._adapt import ModelView, gpu_view, model_view
from .layout import Layout

__all__ = ["EFFECTIVE_TRAINING_TIME", "PublishedRun", "load_runs"]

_KINDS = ("mfu", "tokens_per_second_per_gpu", "megatron_eq3_tflops", "gpu_hours")
#: Share of a whole run's GPU-hours spent training: the rest goes to interruptions, restarts
#: from the last checkpoint, checkpoint writes and evaluation. Meta states "higher than 90%"
#: effective training time (useful training over elapsed time) for Llama 3 405B through 466
#: interruptions in 54 days (Dubey et al. 2024, section 3.3.4); the course takes 90 % for
#: every figure given as GPU-hours of a whole run (Meta's Llama 2 runs, which state none).
EFFECTIVE_TRAINING_TIME = 0.90


@dataclass(frozen=True)
class PublishedRun:
    """A run as published, and what the planner needs to plan it again.

    ``options`` are :func:`~gpulesson.planning.plan_training`'s keyword arguments beyond the
    layout (precision, recomputation, links ...); ``published_mfu`` is the source's figure in
    the course's convention (module docstring), ``published`` the figure as the source
    gives it (``quote`` its words, ``url`` and ``date`` where and when)."""

    name: str
    source: str
    model: Callable[[], object]
    gpu: str
    n_gpus: int
    global_batch_tokens: int
    seq_len: int
    layout: Layout
    published_mfu: float
    published: str
    tokens: float = 1e12
    options: Mapping[str, object] = field(default_factory=dict)
    assumptions: str = ""
    code_base: str = ""
    url: str = ""
    date: str = ""
    quote: str = ""

    @property
    def precision(self) -> str:
        return str(self.options.get("precision", "bf16"))

    @property
    def model_view(self) -> ModelView:
        return model_view(self.model())

    @property
    def is_moe(self) -> bool:
        return self.model_view.is_moe

    @property
    def architecture(self) -> str:
        return gpu_view(self.gpu).spec.architecture


def _model(spec: object, source: str) -> Callable[[], object]:
    if isinstance(spec, str):
        return lambda: spec
    if not isinstance(spec, Mapping):
        raise ValueError(f"model must be a preset name or a mapping, got {spec!r}")
    fields = dict(spec)
    return lambda: TransformerConfig(**fields, source=source)  # type: ignore[arg-type]


def _published_mfu(entry: Mapping[str, object], cfg: object, gpu: str) -> float:
    """The source's figure as model FLOPs over the dense BF16 peak (module docstring)."""
    fig = entry["published"]
    assert isinstance(fig, Mapping)
    kind, value = fig["kind"], float(fig["value"])  # type: ignore[arg-type]
    if kind not in _KINDS:
        raise ValueError(f"published kind must be one of {_KINDS}, got {kind!r}")
    if kind == "mfu":
        return value
    seq = int(entry["seq_len"])  # type: ignore[arg-type]
    view = model_view(cfg)
    if kind == "tokens_per_second_per_gpu":
        tps = value
    elif kind == "gpu_hours":
        # the tokens were trained in the effective share of the hours
        tps = float(fig["tokens"]) / (value * 3600 * EFFECTIVE_TRAINING_TIME)  # type: ignore[arg-type]
    else:  # Megatron-LM's eq. 3 with the recomputed pass: FLOPs per token it counted
        batch = int(entry["sequences"])  # type: ignore[arg-type]
        counted = flops.megatron_flops_per_iteration(
            batch=batch, seq_len=seq, layers=view.layers, hidden=view.hidden,
            vocab=view.cfg.vocab, recompute=True) / (batch * seq)
        tps = value / counted
    return flops.mfu(tps, view.model_flops_per_token(seq), 1, gpu_view(gpu).peak("bf16"))


def _figure(fig: Mapping[str, object]) -> str:
    """The published figure in words: ``'163 TFLOP/s per GPU with recomputation'``."""
    value = float(fig["value"])  # type: ignore[arg-type]
    kind = fig["kind"]
    if kind == "mfu":
        return f"{value:.1%} MFU"
    if kind == "tokens_per_second_per_gpu":
        return f"{value:,.0f} tokens/s per GPU"
    if kind == "gpu_hours":
        return (f"{value:,.0f} GPU-hours for {float(fig['tokens']) / 1e12:.1f}T "  # type: ignore[arg-type]
                "tokens")
    return f"{value / 1e12:.0f} TFLOP/s per GPU with recomputation (eq. 3)"


def _run(entry: Mapping[str, object]) -> PublishedRun:
    lay = dict(entry["layout"])  # type: ignore[call-overload]
    options = dict(entry.get("options") or {})  # type: ignore[call-overload]
    options["precision"] = entry.get("precision", "bf16")
    options["recompute"] = entry.get("recompute", "selective")
    if entry.get("fp8_recipe"):
        options["fp8_recipe"] = entry["fp8_recipe"]
    model = _model(entry["model"], str(entry["source"]))
    seq = int(entry["seq_len"])  # type: ignore[arg-type]
    fig = entry["published"]
    assert isinstance(fig, Mapping)
    return PublishedRun(
        name=str(entry["name"]), source=str(entry["source"]), model=model,
        gpu=str(entry["gpu"]), n_gpus=int(entry["n_gpus"]),  # type: ignore[arg-type]
        global_batch_tokens=int(entry["sequences"]) * seq, seq_len=seq,  # type: ignore[arg-type]
        layout=Layout(**lay), published_mfu=_published_mfu(entry, model(), str(entry["gpu"])),
        published=_figure(fig),
        options=MappingProxyType(options), assumptions=str(entry.get("assumptions", "")),
        code_base=str(entry.get("code_base", "")), url=str(entry.get("url", "")),
        date=str(entry.get("date", "")), quote=str(entry.get("quote", "")))


@cache
def load_runs() -> tuple[PublishedRun, ...]:
    """Every run of ``gpulesson/data/training_runs.json`` (read once)."""
    text = resources.files("gpulesson").joinpath("data/training_runs.json").read_text(
        encoding="utf-8")
    return tuple(_run(entry) for entry in json.loads(text)["runs"])



v.guard_module(globals())
