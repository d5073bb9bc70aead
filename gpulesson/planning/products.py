"""At which precision a serving engine runs a checkpoint's matrix products, and how fast.

vLLM multiplies an FP8 checkpoint's weights in FP8 where the GPU has FP8 tensor cores (W8A8)
and in BF16 elsewhere (weight-only); NVFP4 in FP4 on Blackwell (:func:`serving_matmul_dtype`).
:func:`products_rate` turns that into the FLOP/s of the weights' products that the serving
planner (:mod:`gpulesson.planning.serving`) divides their FLOPs by.
"""

from __future__ import annotations

from gpulesson import _validate as v
from gpulesson import memory

from ._adapt import GPUView, ModelView, gpu_view
from .checkpoints import MIXED_CHECKPOINTS, checkpoint_parts
from .perf_model import GEMM_EFFICIENCY

__all__ = ["products_rate", "serving_matmul_dtype"]


#: Checkpoints whose quantised matrix products vLLM runs in FP8 (W8A8) where the GPU has
#: FP8 tensor cores: an FP8 checkpoint, and Llama 3.1 405B's FP8 feed-forward layers.
_FP8_CHECKPOINTS = ("fp8", "fp8_ffn")


def serving_matmul_dtype(weight_dtype: str, gpu: object) -> str:
    """The precision at which vLLM runs the quantised matrix products of a ``weight_dtype``
    checkpoint on ``gpu``: ``"fp8"``, ``"fp4"`` or ``"bf16"`` (the peak
    :meth:`GPUView.peak` then reads).

    * FP8 (``"fp8"``, and the FP8 layers of ``"fp8_ffn"``): W8A8, activations quantised to
      FP8 on the fly, on GPUs with FP8 tensor cores (a datasheet FP8 peak: Ada, Hopper,
      Blackwell, MI300 and later); elsewhere (Ampere, Volta) weight-only W8A16 through the
      FP8 Marlin kernel, BF16 arithmetic. vLLM documentation, "FP8 W8A8"
      (docs.vllm.ai, features/quantization/fp8, 2025-26): "FP8 computation is supported
      on NVIDIA GPUs with compute capability >= 8.9 (Ada Lovelace, Hopper, Blackwell). FP8
      models will run on compute capability >= 7.5 (Turing) as weight-only W8A16,
      utilizing FP8 Marlin", and "hardware acceleration on GPUs such as Nvidia H100 and
      AMD MI300x"; ``quantization/fp8.py`` and ``fbgemm_fp8.py``: ``use_marlin = not
      current_platform.has_device_capability(89)``; vLLM PR #5975 (2024-07-03) added FP8
      Marlin for Ampere.
    * NVFP4 (``"nvfp4"``): W4A4, the CUTLASS FP4 GEMM, on NVIDIA Blackwell
      (``quantization/modelopt.py``, ``ModelOptNvFp4LinearMethod``:
      ``cutlass_fp4_supported()``, CUDA only, ``cutlass_scaled_mm_supports_fp4`` of the
      compute capability); elsewhere a weight-only Marlin fallback, BF16 arithmetic.
    * Everything else is BF16 arithmetic: 16-bit checkpoints, the weight-only integer
      formats (``"int8"``, ``"int4"``: GPTQ/AWQ Marlin), and MXFP4 (gpt-oss's
      ``"mxfp4_experts"``, ``"mxfp4"``), which vLLM's ``quantization/mxfp4.py`` runs
      weight-only on Hopper (Marlin or Triton kernels, BF16 activations); its Blackwell
      FlashInfer MXFP4 x MXFP8 path is kept at the BF16 rate here, as its selection
      depends on the build and environment and no published rate for it is on record.

    Raises for a ``weight_dtype`` :func:`~gpulesson.memory.precision_bytes` does not know
    (or a mixed checkpoint not in :data:`MIXED_CHECKPOINTS`)."""
    if not isinstance(weight_dtype, str):
        raise TypeError(f"weight_dtype must be a string, got {type(weight_dtype).__name__}")
    if weight_dtype not in MIXED_CHECKPOINTS:
        memory.precision_bytes(weight_dtype)  # refuses what it does not know
    spec = gpu.spec if isinstance(gpu, GPUView) else gpu_view(gpu).spec
    peaks = spec.peak_flops
    name = weight_dtype.lower()
    if name in _FP8_CHECKPOINTS and "fp8" in peaks:
        return "fp8"
    if name == "nvfp4" and "fp4" in peaks and spec.architecture.startswith("Blackwell"):
        return "fp4"
    return "bf16"


def products_rate(mv: ModelView, gv: GPUView, weight_dtype: str, gpus: int) -> float:
    """FLOP/s of the weights' matrix products on ``gpus`` GPUs: the checkpoint's quantised
    parameters (:func:`checkpoint_parts`) at :func:`serving_matmul_dtype`'s peak, the rest
    at BF16's, each share of the FLOPs in proportion to its parameters.

    The FP8 efficiency is the training planner's (:data:`~gpulesson.planning.perf_model.
    GEMM_EFFICIENCY`: DeepGEMM's 1,350 of 1,979 FP8 TFLOP/s on Hopper, forward products of
    inference shapes, assumed for Blackwell), as its ratio to the BF16 figure of the same
    table (Bekman's 792.1 of 989), times ``GPUView.matmul_efficiency``: 1.70x the BF16
    rate on an H100, and a given BF16 efficiency moves it. Not the fitted training factors
    (fitted on whole training steps) nor DeepSeek-V3's training trace (forward and backward
    products, 49.1 % of the FP8 peak). Elsewhere, and for FP4, the BF16 efficiency
    (no measurement on record)."""
    dtype = serving_matmul_dtype(weight_dtype, gv)
    bf16 = gv.peak("bf16") * gv.matmul_efficiency
    if dtype == "bf16":
        return bf16 * gpus
    arch = gv.spec.architecture
    table = GEMM_EFFICIENCY
    ratio = (table[(arch, "fp8")][0] / table[(arch, "bf16")][0]
             if dtype == "fp8" and (arch, "fp8") in table and (arch, "bf16") in table
             else 1.0)
    fast = gv.peak(dtype) * min(gv.matmul_efficiency * ratio, 1.0)
    parts = checkpoint_parts(mv, weight_dtype)
    total = sum(parts.values())
    low = sum(n for name, n in parts.items() if name != "bf16") / total
    return gpus / (low / fast + (1 - low) / bf16)


v.guard_module(globals())
