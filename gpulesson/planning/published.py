"""Published training runs, and the MFU the planner predicts for each.

Each :class:`PublishedRun` records a run as its paper states it (model, GPUs, layout,
batch, sequence) and the utilisation it reports, converted to one convention: model FLOPs
(``6N`` with the active parameters plus PaLM's ``12LHQT``) over the dense BF16 peak.
:func:`published_comparison` plans each run with :func:`~gpulesson.planning.plan_training`
on the published layout and sets the predicted MFU beside the published one. Where a paper
leaves a setting out, the planner's default is used and the entry says so.

* Llama 3 405B, Table 4 of Dubey et al. 2024 (*The Llama 3 Herd of Models*): 43 %, 41 %
  and 38 % "BF16 MFU" (430, 400 and 380 TFLOP/s per H100).
* Megatron-LM's 1T model, Table 1 of Narayanan et al. 2021 (*Efficient Large-Scale
  Language Model Training on GPU Clusters*): 163 TFLOP/s per A100, 52 % of peak, counting
  the recomputed forward pass (their eq. 3); without it (``72`` instead of ``96`` in eq. 3)
  that is 39.2 % MFU.
* MegaScale's 175B run, Jiang et al. 2024 (*MegaScale*, NSDI): 55.2 % MFU on 12,288 GPUs
  (abstract), batch 6,144 (Table 2).
* DeepSeek-V3, DeepSeek-AI 2024 (technical report): "180K H800 GPU hours" per trillion
  tokens (section 1, Table 1: 2,664K for 14.8T); the MFU that figure implies. The planner
  takes its FP8 matrix-product rate and the cost of its FP8 casts from DeepSeek's own
  training trace (DeepSeek-AI, profile-data, ``train.json``, commit 449602428a1b:
  :data:`~gpulesson.planning._adapt.FP8_MATMUL_EFFICIENCY`,
  :data:`~gpulesson.planning.training.FP8_MEMORY_BOUND_EXTRA`), the H800's NVLink from
  the report (section 3.2.2) and the report's way of saving activation memory (norms and
  up-projections recomputed, section 3.2.3; activations cached in FP8, section 3.3.3:
  ``recompute="deepseek-v3"``), without which the published layout would not fit. It does
  not model what no primary source quantifies: pipeline stages made uneven by the
  embedding, the output head and the multi-token-prediction module, the pipeline's own
  communication (left out of the trace), real routing imbalance (the trace forces balanced
  routing), the optimizer step and downtime.

Taught in: ``notebooks/planning_dashboard.ipynb`` (predicted against published).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from gpulesson import _validate as v
from gpulesson import flops
from gpulesson.transformer import TransformerConfig

from ._adapt import ModelView, model_view
from .layout import Layout
from .training import TrainingPlan, plan_training

__all__ = ["PUBLISHED_RUNS", "Comparison", "PublishedRun", "published_comparison"]

#: The H800: an H100's compute with NVLink cut back. "NVLink offers a bandwidth of 160 GB/s,
#: roughly 3.2 times that of IB (50 GB/s)" (DeepSeek-AI 2024, section 3.2.2).
H800_NVLINK = 160e9


@dataclass(frozen=True)
class PublishedRun:
    """A run as published, and what the planner needs to plan it again."""

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


def megatron_1t() -> TransformerConfig:
    """The 1T GPT of Narayanan et al. 2021, Table 1: 128 layers, h 25,600, 160 heads."""
    return TransformerConfig(hidden=25600, layers=128, heads=160, vocab=51200,
                             max_positions=2048, name="megatron-1t",
                             source="Narayanan et al. 2021, Table 1")


def deepseek_v3() -> ModelView:
    """DeepSeek-V3 (``transformer.preset("deepseek-v3")``): 671B parameters, 37B activated
    per token, 61 layers of multi-head latent attention, 58 of them with 256 routed experts
    (8 per token) and a shared one (DeepSeek-AI 2024, section 4.2)."""
    return model_view("deepseek-v3")


def _megatron_mfu() -> float:
    """163 TFLOP/s of 312 counted with recomputation, without it (eq. 3, 96 -> 72)."""
    shape = dict(batch=3072, seq_len=2048, layers=128, hidden=25600, vocab=51200)
    ratio = (flops.megatron_flops_per_iteration(**shape, recompute=False)
             / flops.megatron_flops_per_iteration(**shape, recompute=True))
    return 163e12 * ratio / 312e12


def _deepseek_mfu() -> float:
    """The MFU 180K H800 GPU-hours per trillion tokens implies (BF16 dense peak 989.4)."""
    per_token = deepseek_v3().model_flops_per_token(4096)
    return per_token * 1e12 / (180e3 * 3600 * 989.4e12)


_LLAMA = "Dubey et al. 2024, Table 4"
_LLAMA_NOTE = ("Interleaved schedule with 2 chunks per GPU, as the paper's Figure 6 draws it "
               "(its text does not give the number); gradients reduce-scattered in FP32 "
               "(section 3.3.4).")
PUBLISHED_RUNS: tuple[PublishedRun, ...] = (
    PublishedRun("Llama 3 405B, 8,192 GPUs", _LLAMA, lambda: "llama-3.1-405b", "H100 SXM",
                 8192, 16 * 2**20, 8192, Layout(tp=8, pp=16, cp=1, dp=64, interleave=2), 0.43,
                 "43 % BF16 MFU (430 TFLOP/s per GPU)", options={"grad_bytes": 4},
                 assumptions=_LLAMA_NOTE),
    PublishedRun("Llama 3 405B, 16,384 GPUs", _LLAMA, lambda: "llama-3.1-405b", "H100 SXM",
                 16384, 16 * 2**20, 8192, Layout(tp=8, pp=16, cp=1, dp=128, interleave=2), 0.41,
                 "41 % BF16 MFU (400 TFLOP/s per GPU)", options={"grad_bytes": 4},
                 assumptions=_LLAMA_NOTE),
    PublishedRun("Llama 3 405B, 16,384 GPUs, 128K context", _LLAMA, lambda: "llama-3.1-405b",
                 "H100 SXM", 16384, 8 * 16 * 131072, 131072,
                 Layout(tp=8, pp=16, cp=16, dp=8, interleave=2), 0.38,
                 "38 % BF16 MFU (380 TFLOP/s per GPU)", options={"grad_bytes": 4},
                 assumptions=_LLAMA_NOTE),
    PublishedRun("Megatron-LM 1T", "Narayanan et al. 2021, Table 1", megatron_1t,
                 "A100 80GB", 3072, 3072 * 2048, 2048, Layout(tp=8, pp=64, dp=6),
                 _megatron_mfu(), "163 TFLOP/s per GPU with recomputation, 52 % of peak",
                 options={"recompute": "full", "scaleout_bandwidth": 25e9},
                 assumptions="Full recomputation and eight 200 Gb/s HDR InfiniBand links per "
                             "8-GPU node (25 GB/s per GPU), as the paper (section 5); 1 chunk "
                             "per GPU assumed."),
    PublishedRun("MegaScale 175B", "Jiang et al. 2024, abstract and Table 2",
                 lambda: "gpt3-175b", "A100 80GB", 12288, 6144 * 2048, 2048,
                 Layout(tp=8, pp=8, dp=192), 0.552, "55.2 % MFU on 12,288 GPUs",
                 options={"overlap": {"tensor": 1.0, "pipeline": 1.0, "data": 1.0}},
                 assumptions="Tensor, pipeline and data communication overlapped with "
                             "compute (section 3.2); 1 chunk per GPU assumed."),
    PublishedRun("DeepSeek-V3", "DeepSeek-AI 2024, section 1 and Table 1", deepseek_v3,
                 "H100 SXM", 2048, 15360 * 4096, 4096, Layout(tp=1, pp=16, dp=128, ep=64),
                 _deepseek_mfu(), "180K H800 GPU-hours per trillion tokens",
                 options={"precision": "fp8", "pipeline_schedule": "dualpipe",
                          "recompute": "deepseek-v3",
                          "nvlink_bandwidth": H800_NVLINK, "comm_sm_fraction": 20 / 132,
                          "max_nodes_per_token": 4,
                          "overlap": {"expert": 1.0, "pipeline": 1.0, "data": 1.0}},
                 assumptions="H800 as an H100 SXM with 160 GB/s NVLink (section 3.2.2); FP8 "
                             "matmuls at the rate, and FP8 casts at the cost, of DeepSeek's "
                             "training trace (profile-data, train.json); DualPipe overlapping "
                             "the all-to-alls (section 3.2); 20 of 132 SMs kept by the "
                             "all-to-all kernels and tokens sent to at most 4 nodes (section "
                             "3.2.2); RMSNorms and MLA up-projections recomputed in the "
                             "backward pass (section 3.2.3), activations cached in FP8, the "
                             "attention output in E5M6 (1.5 bytes) and the MoE SwiGLU's output "
                             "recomputed (section 3.3.3); the final batch of 15,360 "
                             "sequences. Not modelled: "
                             "pipeline stages made uneven by the embedding, output head and "
                             "MTP module, pipeline communication, real routing imbalance, "
                             "the optimizer step and downtime."),
)


@dataclass(frozen=True)
class Comparison:
    """A published run beside its plan: ``error`` = predicted / published MFU - 1."""

    run: PublishedRun
    plan: TrainingPlan

    @property
    def predicted_mfu(self) -> float:
        return self.plan.mfu

    @property
    def error(self) -> float:
        return self.plan.mfu / self.run.published_mfu - 1


def published_comparison(runs: tuple[PublishedRun, ...] = PUBLISHED_RUNS
                         ) -> tuple[Comparison, ...]:
    """Plan every run on its published layout; the predicted MFU beside the published."""
    out = []
    for run in runs:
        plan = plan_training(run.model(), run.gpu, n_gpus=run.n_gpus, tokens=run.tokens,
                             global_batch_tokens=run.global_batch_tokens, seq_len=run.seq_len,
                             layout=run.layout, **run.options)  # type: ignore[arg-type]
        out.append(Comparison(run, plan))
    return tuple(out)


#: Short labels of the runs, for tables.
LABELS: Mapping[str, str] = MappingProxyType({run.name: run.name for run in PUBLISHED_RUNS})


v.guard_module(globals())
