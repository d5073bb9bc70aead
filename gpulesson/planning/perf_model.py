"""The work of one training step, term by term, as the lessons' own formulas count it.

:func:`step_terms` takes a model, a GPU and a layout and returns the *base* seconds of each
kind of work one GPU does in one micro-batch of its pipeline stage, each at the rate a
source gives (or at the peak, where the rate is what the calibration fits):

* ``gemm``: every matrix product at its real shape: the weights sliced by tensor (and
  expert) parallelism, the rows a micro-batch's tokens (divided by context parallelism),
  the forward product and the two of the backward pass (data and weight gradients), each
  rounded up to whole tiles and whole waves of tiles over the GPU's SMs
  (:func:`gpulesson.execution.gemm_waves`, the Inside the GPU lesson) at the achievable
  fraction of the dense peak of its precision (:data:`GEMM_EFFICIENCY`). A product whose
  bytes take longer than its FLOPs (the roofline lesson) counts as memory traffic instead.
  Mixture-of-experts layers: the router, the routed experts' products with the tokens each
  expert receives (``tokens x experts_per_token x ep / experts``), and the shared experts.
  Where the run computes in FP8, the layers' products use the FP8 peak; the output layer
  and the router stay in BF16;
* ``experts``: the routed experts' products, apart: they run as grouped products of as
  many rows as tokens reach each expert, and their own factor says how far from the dense
  products' rate;
* ``attention``: the attention FLOPs a causal kernel must do (half of PaLM's ``12LHQT``;
  a sliding window's keys in full; more with recomputation) at the share of the dense
  BF16 peak :func:`attention_efficiency` gives for the head size and the keys a kernel
  call walks (tiles of 128, the exponentials' cost against the products', the diagonal
  tile and each query tile's fixed cost); the calibration's factor scales it, and a
  kernel older than the generation's own takes the newer kernels' published speed-ups over
  it (:func:`attention_kernel_slowdown`, applied by the planner). With
  DeepSeek Sparse Attention (``indexer_topk``, past the top-k) each query attends to its
  ``min(i, topk)`` picked keys (:func:`gpulesson.flops.attended_keys`), a gathered walk of
  ``topk`` keys with latent attention run absorbed, as DeepSeek's sparse kernels run it
  (:func:`gpulesson.flops.executed_attention_flops_per_key`: 278,528 FLOPs a key and
  layer for DeepSeek-V3.2 against the model's 81,920, each score tile's products
  ``(576 + 512) / 2`` = 544 wide in the exponentials' cost), and the indexer scores every
  earlier key forward and the picked ones backward
  (:func:`gpulesson.flops.indexer_training_flops`; DeepSeek-V3.2's sparse training stage,
  arXiv 2512.02556) at the rate of a causal walk of its head size: no
  rate of its FP8 kernel is published, so it runs at the BF16 attention's. The indexer is
  whole on every tensor-parallel GPU (plain ``Linear`` layers over all its heads in
  DeepSeek's reference ``Indexer``, replicated in vLLM): its scoring and its projections
  are not divided by ``tp``, as its activations are not
  (:func:`gpulesson.activations.indexer_tensors`);
* ``memory``: every kernel that is not a matrix product, as bytes at the HBM bandwidth:
  norms (the block's, a norm on the queries and keys where the model has one, latent
  attention's on its latents), residual adds, rotary embeddings (not for learned
  positions), the MLP's activation function, dropout (where the model trains with it),
  token permutation for the experts, softmax and cross-entropy over the vocabulary, FP8
  casts and transposes (by recipe), the optimizer step (:data:`OPTIMIZER_BYTES`), and
  products too small to be compute-bound. Forward traffic is counted once, the backward
  pass twice (it reads the saved input and the incoming gradient and writes the outgoing
  one). A clamped gated activation (gpt-oss's ``glu_limit``) adds the kernels Megatron-Core
  runs beside its fused one in the experts (:data:`GLU_CLAMP_VALUES`);
* ``kernels``: the number of kernels launched; the calibration's factor is the seconds lost
  between two kernels (launch, ramp-up and tail);
* ``syncs``: the host synchronisations a dropless mixture-of-experts layer makes (the CPU
  waits for the tokens each expert receives before it can size the next kernels, so the
  GPU's queue runs dry), one per MoE layer forward and one backward; the factor is the
  seconds each costs.

The calibration (:mod:`gpulesson.planning.calibration`) fits one factor per term and GPU
generation on the published runs, leave-one-out. Standard library only (the site runs the
planner in the browser).

Taught in: ``notebooks/planning_dashboard.ipynb`` (where the model misses, and why).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType

from gpulesson import _validate as v
from gpulesson import activations, execution, flops, transformer

from ._adapt import GPUView, ModelView, gpu_view, model_view

__all__ = ["ACTIVATION_BYTES", "ATTENTION_KEPT", "ATTENTION_KERNELS", "ATTENTION_TILE",
           "ATTENTION_TILE_OVERHEAD",
           "BLOCK_SCALED",
           "CASTS_IN_PRODUCT_RATE",
           "EXP_PER_CLOCK", "FP8_CAST_BYTES", "FP8_RECIPES", "GEMM_EFFICIENCY",
           "GLU_CLAMP_VALUES", "HOST_LINK",
           "OPTIMIZER_BYTES",
           "TENSOR_FLOPS_PER_CLOCK", "TERMS", "UP_PROJECTIONS_AGAIN", "StepTerms",
           "attention_efficiency", "attention_kernel_slowdown",
           "fp8_activation_saving", "gemm_efficiency", "gemm_seconds", "host_link_bandwidth",
           "kernel_attention_seconds", "step_terms"]

#: The work terms of a step, each with one calibrated factor.
TERMS = ("gemm", "experts", "attention", "memory", "kernels", "syncs")
#: Bytes of one activation value (BF16).
ACTIVATION_BYTES = 2
#: Achievable fraction of the dense peak in large matrix products, by architecture and
#: precision class: (fraction, source). The BF16 figures are the best rates of a search
#: over shapes (S. Bekman, *Machine Learning Engineering*, "Maximum Achievable Matmul FLOPS
#: comparison table": A100 SXM 267.9 of 312, H100 SXM 792.1 of 989 TFLOP/s); FP8 on Hopper
#: is DeepGEMM's "1350+ FP8 TFLOPS" on large shapes (deepseek-ai/DeepGEMM README, 2025)
#: of the 1,979 peak. torchao's Float8 training (recipe ``tensorwise``) runs other kernels
#: than TransformerEngine's: ``torch._scaled_mm`` (cuBLAS) with scaling and casting kernels
#: that ``torch.compile`` generates, which its authors say do not yet fuse as they could
#: (torchao/float8/README.md, "torch.compile behavior vs speedup"); its figure is torchao's
#: own measurement of a whole Float8Linear (products and casts, forward and backward)
#: against bfloat16, so its casts are in this rate and not counted again
#: (:data:`CASTS_IN_PRODUCT_RATE`).
#: Blackwell has no published sweep: the Hopper fractions are assumed,
#: and the calibration corrects them from the Blackwell runs.
GEMM_EFFICIENCY: Mapping[tuple[str, str], tuple[float, str]] = MappingProxyType({
    ("Ampere", "bf16"): (267.9 / 312, "A100 SXM 267.9 of 312 TFLOP/s (Bekman, MAMF table)"),
    ("Hopper", "bf16"): (792.1 / 989, "H100 SXM 792.1 of 989 TFLOP/s (Bekman, MAMF table)"),
    ("Hopper", "fp8"): (1350 / 1979, "DeepGEMM: 1,350+ of 1,979 FP8 TFLOP/s"),
    ("Hopper", "fp8-tensorwise"): (
        1.39 * 792.1 / 1979, "torchao Float8Linear, tensorwise scaling, compiled: 1.39x "
        "bfloat16 at M, K, N = 4096, 8192, 16384 on an H100 (torchao/float8/README.md), "
        "times the BF16 rate"),
    ("Blackwell", "bf16"): (792.1 / 989, "assumed, as Hopper BF16"),
    ("Blackwell", "fp8"): (1350 / 1979, "assumed, as Hopper FP8"),
})
_DEFAULT_GEMM = (0.75, "assumed (no measurement for this architecture)")
#: Recomputation modes that keep the attention core's output, so that it does not run
#: again in the backward pass: none, torchtitan's op checkpointing (it saves the
#: attention's output), and Megatron-Core's norm and expert-activation recomputation
#: (recompute_modules ["layernorm", "moe_act"]; its "core_attn" module is apart and not
#: in that list: megatron/core/transformer/transformer_config.py, recompute_modules), and
#: DeepSeek-V3's recipe, which recomputes the norms and latent attention's up-projections
#: only (DeepSeek-AI 2024, section 3.2.3), and Megatron-Core's recomputation of those
#: up-projections (``["mla_up_proj"]``: :data:`gpulesson.activations.MLA_UP_PROJ_RECIPE`).
ATTENTION_KEPT = ("none", "torchtitan-op", "norm-moe-act", "deepseek-v3", "mla-up-proj")
#: Recomputation modes that run latent attention's up-projections forward again in the
#: backward pass (:func:`gpulesson.activations.up_projection_params`), at the rate of the
#: attention's input products they belong to.
UP_PROJECTIONS_AGAIN = ("deepseek-v3", "mla-up-proj")
#: Values moved per element of an expert's width by the clamp of a gated activation
#: (``glu_limit``), (forward, backward), as Megatron-Core runs it in its experts: with
#: the fused activation on (``bias_activation_fusion``, gpt-oss's Megatron-Bridge
#: recipe), ``weighted_bias_quick_geglu_impl`` (megatron/core/fusions/fused_bias_geglu.py,
#: Megatron-LM commit 92c8482e, the one Megatron-Bridge pins for its NeMo 25.11 and later
#: recipes) splits the first product's output in two, clamps each half and concatenates
#: them before the fused kernel, in eager PyTorch: forward, two clamps read and write one
#: half each (2 x 2) and the concatenation both halves (4): 8; backward, each clamp's
#: gradient reads the gradient and the input and writes one half (2 x 3) and the split's
#: gradient concatenates both halves again (4): 10.
GLU_CLAMP_VALUES = (8, 10)
#: Optimizer step, bytes per parameter a GPU updates: Adam reads the FP32 master weight,
#: both moments and the FP32 gradient (16 bytes), writes the weight and the moments back
#: (12) and the BF16 copy (2).
OPTIMIZER_BYTES = 30
#: Host link one way per GPU for CPU activation offload: Grace-Blackwell's NVLink-C2C,
#: 900 GB/s both ways (NVIDIA GB200 NVL72 datasheet, 2024), else PCIe Gen5 x16, 64 GB/s.
HOST_LINK: Mapping[str, float] = MappingProxyType({"grace": 450e9, "pcie5": 64e9})
#: Kernels one layer launches per micro-batch, forward and backward (norms, products,
#: rotary, attention, activation, adds; backward about twice): dense, and what an MoE
#: layer adds (router, top-k, permutation, grouped products, unpermutation, all-to-alls),
#: and what FP8 casts add.
_KERNELS_DENSE, _KERNELS_MOE, _KERNELS_FP8 = 33, 24, 18
#: The output tile every product's waves are counted in (``execution.gemm_waves``): 256 x
#: 128, the largest of the tiles Hopper's and Blackwell's GEMM kernels usually run. An
#: assumption, neither sourced nor fitted.
_TILE = (256, 128)
#: FP8 recipes: per-tensor scaling, delayed (TransformerEngine's first) or current (computed
#: from the tensor being cast; torchao's "tensorwise" is the same), DeepSeek-V3's blockwise
#: (1x128 activations, 128x128 weights) and Blackwell's MXFP8 (32-element blocks, scales in
#: hardware). Their casts differ (:data:`FP8_CAST_BYTES`), and the block-scaled recipes'
#: products have their own fitted factor (:data:`BLOCK_SCALED`).
FP8_RECIPES = ("delayed", "current", "tensorwise", "blockwise", "mxfp8")
#: Recipes whose scales belong to blocks of a tensor, not to the whole tensor: their
#: products run other kernels (DeepGEMM's, or Blackwell's block-scaled MMA), fitted apart.
BLOCK_SCALED = ("blockwise", "mxfp8")
#: Bytes an FP8 cast moves per value, (activation or gradient, weight), by recipe. Every
#: recipe reads the 16-bit value (2) and writes its FP8 copy (1); activations and gradients
#: need a second, transposed copy for the other product of the backward pass (1 more;
#: MXFP8 quantizes the columns apart, as many bytes). Delayed scaling uses the scale of
#: earlier steps, so the cast is one pass; current (tensorwise) scaling must first find
#: the tensor's largest value, one more read (2); blockwise and MX scales are found inside
#: the cast kernel, each block at a time (their scales, one byte per 32 or 128 values,
#: are left out).
FP8_CAST_BYTES: Mapping[str, tuple[float, float]] = MappingProxyType({
    "delayed": (4, 3), "current": (6, 5), "tensorwise": (6, 5), "blockwise": (4, 3),
    "mxfp8": (4, 3)})
#: Recipes whose products' sourced rate (:data:`GEMM_EFFICIENCY`) was measured with their
#: casts included (torchao's Float8Linear against bfloat16): their cast bytes are not
#: counted again as memory traffic.
CASTS_IN_PRODUCT_RATE = ("tensorwise",)
_PRECISIONS = ("bf16", "fp16", "fp8")
#: Fixed cost of one output tile, in steps of the K loop: filling the tile's pipeline of
#: loads before the first multiply and writing the tile out after the last (its epilogue).
#: A product with a short K (small experts, narrow tensor-parallel slices) spends a larger
#: share of its time there: ``time = 2 tm tn (k + TILE_OVERHEAD_K) / rate`` per tile. No
#: published measurement gives it, and inside the products' time the calibration's least
#: squares cannot fit it: it is the value of 0 to 1,024 (every 64) with the smallest median
#: leave-one-out error on the published runs (benchmarks/bench_chosen_settings.py makes the
#: choice again without each run; lesson 10 states what that costs the table).
TILE_OVERHEAD_K = 512
#: FlashAttention's tile: 128 queries against 128 keys at a time (FlashAttention-2/3/4's
#: block sizes for head dimensions 64 to 128).
ATTENTION_TILE = 128
#: Fixed work of one tile of queries, in key tiles: loading the queries, the epilogue
#: that scales and writes the output, the pipeline's fill. Least squares on FlashAttention-4's
#: causal forward, head dimension 128, at 1,024, 2,048 and 4,096 tokens (829, 1,172 and
#: 1,431 TFLOP/s; Dao-AILab/flash-attention pull request #2605, 2026): their ratios 0.58,
#: 0.82, 1 are 0.58, 0.81, 1 at 4.6 key tiles.
ATTENTION_TILE_OVERHEAD = 4.6
#: Exponentials per clock per SM (the special-function units: 16 for compute capability
#: 8.0 to 10.0, CUDA C++ Programming Guide, arithmetic instruction throughput): the H100
#: SXM's "989 TFLOPS of FP16 matmul but only 3.9 TFLOPS of special functions" (Shah et al.
#: 2024, FlashAttention-3, section 3).
EXP_PER_CLOCK = 16
#: Blackwell Ultra (B300, GB300) doubles the special-function units' exponential rate over
#: Blackwell (J. Li, "Making Softmax More Efficient with NVIDIA Blackwell Ultra", NVIDIA
#: Technical Blog, 2026): 32 per clock per SM. Every other architecture has
#: :data:`EXP_PER_CLOCK`.
EXP_PER_CLOCK_BY_ARCHITECTURE: Mapping[str, int] = MappingProxyType({"Blackwell Ultra": 32})
#: Dense BF16 (Volta: FP16) tensor-core FLOPs per clock per SM: A100 1,024 FMA (NVIDIA
#: A100 whitepaper, 2020), twice that per SM on Hopper (H100 whitepaper, 2022) and again on
#: Blackwell (2,250 TFLOP/s on 148 SMs, B200 datasheet, 2024); V100 (125 TFLOP/s on 80 SMs
#: at 1.53 GHz) and the L4 (121 TFLOP/s dense on 58 SMs at 2.04 GHz) about 1,024; Blackwell
#: Ultra keeps Blackwell's BF16 tensor cores (2,250 dense TFLOP/s per B300 as per B200,
#: HGX B300 page). Another architecture is taken as Hopper.
TENSOR_FLOPS_PER_CLOCK: Mapping[str, int] = MappingProxyType({
    "Volta": 1024, "Ada Lovelace": 1024, "Ampere": 2048, "Hopper": 4096,
    "Blackwell": 8192, "Blackwell Ultra": 8192})


@dataclass(frozen=True)
class StepTerms:
    """Base seconds of one micro-batch on the busiest stage, per term (:data:`TERMS`);
    ``kernels`` is a count, ``optimizer_bytes`` the bytes of one optimizer step (once per
    step, not per micro-batch) and ``offload_bytes`` the activations sent to the host and
    back per micro-batch. ``redo_gemm`` and ``redo_experts`` are the parts of ``gemm`` and
    ``experts`` that recomputation adds (forward products run again), ``redo_attention``
    the part of ``attention`` (the attention core, and with full recomputation a sparse
    attention indexer's scoring, run forward again);
    ``attention_flops`` the FLOPs behind ``attention`` (the indexer's included)."""

    gemm: float
    experts: float
    attention: float
    memory: float
    kernels: float
    syncs: float
    optimizer_bytes: float
    offload_bytes: float
    gemm_flops: float
    redo_gemm: float = 0.0
    redo_experts: float = 0.0
    attention_flops: float = 0.0
    redo_attention: float = 0.0

    def as_dict(self) -> dict[str, float]:
        return {t: getattr(self, t) for t in TERMS}


def _sms(gpu: GPUView) -> int:
    for name in (gpu.name, gpu.name.removeprefix("G").split(" ")[0]):
        try:
            return execution.gpu_execution(name).sms
        except (KeyError, ValueError):
            continue
    return 132


def host_link_bandwidth(gpu: object) -> float:
    """One-way bytes/s between a GPU (a name or a :class:`GPUView`) and its host's memory
    (:data:`HOST_LINK`)."""
    gpu = gpu if isinstance(gpu, GPUView) else gpu_view(gpu)
    return HOST_LINK["grace" if gpu.name.startswith("GB") else "pcie5"]


def gemm_seconds(m: int, k: int, n: int, *, peak: float, efficiency: float, sms: int,
                 bandwidth: float, element_bytes: float) -> tuple[float, float]:
    """(compute seconds, memory seconds) of an ``m x k`` by ``k x n`` product: whole waves of
    whole tiles at ``efficiency`` of ``peak``, and its three matrices' bytes at
    ``bandwidth``. The larger sets the time (the roofline)."""
    m, k, n = (v.positive_int(name, x) for name, x in (("m", m), ("k", k), ("n", n)))
    return _gemm_seconds(m, k, n, v.positive_number("peak", peak),
                         v.fraction("efficiency", efficiency, allow_zero=False),
                         v.positive_int("sms", sms), v.positive_number("bandwidth", bandwidth),
                         v.positive_number("element_bytes", element_bytes))


def _gemm_seconds(m: int, k: int, n: int, peak: float, efficiency: float, sms: int,
                  bandwidth: float, element_bytes: float) -> tuple[float, float]:
    waves = execution.gemm_waves(max(int(m), 1), max(int(n), 1), sms=sms, tile_m=_TILE[0],
                                 tile_n=_TILE[1])
    compute = 2 * m * (k + TILE_OVERHEAD_K) * n / (peak * efficiency * waves.efficiency)
    memory = (m * k + k * n + m * n) * element_bytes / bandwidth
    return compute, memory


def gemm_efficiency(arch: str, precision: str) -> float:
    """The sourced fraction of the peak for ``precision`` (``"bf16"``, ``"fp8"``,
    ``"fp8-tensorwise"``) on ``arch`` (:data:`GEMM_EFFICIENCY`)."""
    if precision.startswith("fp8-"):
        return _efficiency(arch, "fp8", precision[4:])
    return _efficiency(arch, precision)


def _efficiency(arch: str, precision: str, recipe: str = "") -> float:
    """The sourced fraction of the peak (:data:`GEMM_EFFICIENCY`); an FP8 ``recipe`` with a
    figure of its own (torchao's ``tensorwise``) uses it."""
    if precision == "fp8" and (arch, f"fp8-{recipe}") in GEMM_EFFICIENCY:
        return GEMM_EFFICIENCY[(arch, f"fp8-{recipe}")][0]
    return GEMM_EFFICIENCY.get((arch, precision), _DEFAULT_GEMM)[0]


def attention_efficiency(head_dim: float, keys: int, architecture: str, *,
                         window: bool = False, fp8: bool = False) -> float:
    """Share of the dense BF16 peak a FlashAttention kernel reaches on the work it must do.

    Two losses, each the lessons' tile arithmetic. Every 128 x 128 tile of scores costs
    ``4 x 128 x 128 x d`` tensor-core FLOPs and ``128 x 128`` exponentials, which the
    special-function units compute ``EXP_PER_CLOCK`` at a time per SM against
    ``TENSOR_FLOPS_PER_CLOCK`` for the products: ``1 / (1 + R / (4 d))`` with ``R`` their
    ratio (H100: 4,096 / 16 = 256, so 0.67 at head dimension 128 and 0.50 at 64; FlashAttention-4
    measures 1,011 against 1,431 TFLOP/s for 64 and 128 at 4,096 tokens, 0.71). And each
    tile of queries walks its key tiles with a fixed cost of
    :data:`ATTENTION_TILE_OVERHEAD` tiles: a causal query tile among ``n = keys / 128``
    needs ``n/2`` tiles of work on average but runs ``(n+1)/2`` (the diagonal tile in
    full), so ``n / (n + 1 + 2 x overhead)``; a sliding window of ``keys`` needs
    ``keys/128`` and runs one more. FlashAttention-3 causal at head dimension 128 and
    8,192 tokens on an H100: this gives 0.67 x 0.86 = 0.58 of 989 TFLOP/s, 570; measured
    630 forward and 532 backward (Dao-AILab/flash-attention pull request #1791, 2025).

    ``fp8``: the two products of each tile in FP8 (TransformerEngine's
    ``fp8_dot_product_attention``, cuDNN's FP8 attention) at twice the tensor cores' rate,
    the exponentials as before: ``1 / (1/2 + R / (4 d))``, still a share of the BF16 peak.
    At head dimension 128 that is 1.5 times the BF16 kernel on Hopper (FlashAttention-3
    measures its FP8 forward near 1,200 TFLOP/s against 740 in BF16, 1.6 times; Shah et
    al. 2024) and 1.33 on Blackwell, where the exponentials weigh twice as much; Blackwell
    Ultra's doubled exponential rate brings it back to Hopper's balance (1.5).
    """
    d = v.positive_number("head_dim", head_dim)
    n = v.positive_int("keys", keys) / ATTENTION_TILE
    ratio = (TENSOR_FLOPS_PER_CLOCK.get(architecture, TENSOR_FLOPS_PER_CLOCK["Hopper"])
             / EXP_PER_CLOCK_BY_ARCHITECTURE.get(architecture, EXP_PER_CLOCK))
    per_tile = 1 / ((0.5 if v.boolean("fp8", fp8) else 1.0) + ratio / (4 * d))
    if window:
        walk = n / (n + 1 + ATTENTION_TILE_OVERHEAD)
    else:
        walk = n / (n + 1 + 2 * ATTENTION_TILE_OVERHEAD)
    return per_tile * walk


#: FlashAttention-3's speed-up over FlashAttention-2 on an H100, (forward, backward), and
#: FlashAttention-2's over the Triton kernel on an A100: the sources are cited below.
_FA3_OVER_FA2 = (1.75, 1.625)
_FA2_OVER_TRITON = (1.4, 2.0)

#: Attention kernels slower than the one :func:`attention_efficiency` describes for a
#: generation (FlashAttention-2 on Ampere and Ada, FlashAttention-3 or cuDNN's on Hopper):
#: the newer kernel's published speed-up over each, (forward, backward), by architecture,
#: the middle of each published range. ``"fused"`` is the generation's own kernel.
#: FlashAttention-2 uses none of Hopper's new instructions: FlashAttention-3 is "1.5-2.0x
#: faster" forward and "1.5-1.75x" backward in 16 bits on an H100 SXM5 (Shah et al. 2024,
#: section 4.1). ``"triton"`` is FlashAttention written in Triton in 2022 (llm-foundry's
#: ``attn_impl: triton``): FlashAttention-2 is "around 1.3-1.5x faster" forward and
#: "around 2x faster" backward on an A100 (Dao 2023, section 4.1); on Hopper both speed-ups
#: are taken, since neither older kernel uses Hopper's instructions (an assumption: no
#: measurement of that kernel on an H100 is published).
ATTENTION_KERNELS: Mapping[str, Mapping[str, tuple[float, float]]] = MappingProxyType({
    "fused": MappingProxyType({}),
    "flash-attention-2": MappingProxyType({
        "Ampere": (1.0, 1.0), "Ada Lovelace": (1.0, 1.0), "Hopper": _FA3_OVER_FA2}),
    "triton": MappingProxyType({
        "Ampere": _FA2_OVER_TRITON,
        "Hopper": (_FA3_OVER_FA2[0] * _FA2_OVER_TRITON[0],
                   _FA3_OVER_FA2[1] * _FA2_OVER_TRITON[1])}),
})


def attention_kernel_slowdown(kernel: str, architecture: str) -> tuple[float, float]:
    """How many times longer ``kernel`` takes than the kernel :func:`attention_efficiency`
    describes on ``architecture``, (forward, backward) (:data:`ATTENTION_KERNELS`):
    ``(1, 1)`` for ``"fused"``; ``ValueError`` naming the architectures where another
    kernel's speed is published."""
    name = v.choice("attention_kernel", kernel, tuple(ATTENTION_KERNELS))
    if name == "fused":
        return (1.0, 1.0)
    known = ATTENTION_KERNELS[name]
    if architecture not in known:
        raise ValueError(f"attention_kernel: no published speed of {name!r} on "
                         f"{architecture}; known on {', '.join(known)} (or use 'fused', the "
                         f"generation's own kernel)")
    return known[architecture]


def kernel_attention_seconds(attention: float, redo: float, kernel: str,
                             architecture: str) -> tuple[float, float]:
    """The attention seconds of :func:`step_terms` (``attention``, of which ``redo`` is the
    recomputed forward) as ``kernel`` runs them: the forward and backward slow-downs of
    :func:`attention_kernel_slowdown`, the backward weighing twice the forward as the
    model counts its FLOPs, the recomputed forward at the forward's. Returns (attention,
    redo)."""
    fwd, bwd = attention_kernel_slowdown(kernel, architecture)
    return (attention - redo) * (fwd + 2 * bwd) / 3 + redo * fwd, redo * fwd


def step_terms(model: object, gpu: object, *, tp: int, cp: int, pp: int, ep: int,
               micro_batch: int, seq_len: int, precision: str, fp8_recipe: str,
               recompute: str, imbalance: float, shard_params: float,
               offload_layers: int = 0, memory_factor: float = 1.25,
               expert_imbalance: float = 1.0, fused_expert_mlp: bool = False,
               fp8_attention: bool = False) -> StepTerms:
    """The base terms of one micro-batch on the busiest pipeline stage (module docstring).

    ``imbalance`` is the busiest stage's work over the mean (the output layer's extra);
    ``expert_imbalance`` the tokens of the busiest expert-parallel GPU over the mean (1:
    balanced routing, as the published benchmarks force it; the others wait for it);
    ``shard_params`` the parameters this GPU's optimizer updates; ``memory_factor`` the
    current estimate of one over the achievable share of the HBM bandwidth, used only to
    decide whether a product is compute- or memory-bound. ``fused_expert_mlp``: the routed
    experts' gated activation, and in FP8 the cast of its output, run inside the grouped
    products' epilogues (TransformerEngine's operation fuser, Megatron-Core's
    ``use_transformer_engine_op_fuser``), so their memory traffic goes; ``fp8_attention``:
    the attention's products in FP8 (:func:`attention_efficiency`).
    """
    model = model if isinstance(model, ModelView) else model_view(model)
    gpu = gpu if isinstance(gpu, GPUView) else gpu_view(gpu)
    tp, cp, pp, ep, micro_batch, seq_len = (v.positive_int(name, x) for name, x in (
        ("tp", tp), ("cp", cp), ("pp", pp), ("ep", ep), ("micro_batch", micro_batch),
        ("seq_len", seq_len)))
    precision = v.choice("precision", precision, _PRECISIONS)
    fp8_recipe = v.choice("fp8_recipe", fp8_recipe, FP8_RECIPES)
    recompute = v.choice("recompute", recompute, activations.RECOMPUTE_MODES)
    imbalance = v.positive_number("imbalance", imbalance)
    shard_params = v.nonneg_number("shard_params", shard_params)
    offload_layers = v.nonneg_int("offload_layers", offload_layers)
    memory_factor = v.positive_number("memory_factor", memory_factor)
    expert_imbalance = v.positive_number("expert_imbalance", expert_imbalance)
    fused_expert_mlp = v.boolean("fused_expert_mlp", fused_expert_mlp)
    fp8_attention = v.boolean("fp8_attention", fp8_attention)
    if expert_imbalance < 1:
        raise ValueError(f"expert_imbalance must be at least 1 (the busiest GPU over the "
                         f"mean), got {expert_imbalance!r}")
    fp8 = precision == "fp8"
    if fp8 and "fp8" not in gpu.spec.peak_flops:
        raise ValueError(f"precision: the {gpu.name} has no FP8 tensor cores; use 'bf16'")
    if fp8_attention and not fp8:
        raise ValueError("fp8_attention: FP8 attention needs precision 'fp8', got "
                         f"{precision!r}")
    chip = _Chip(gpu.name, gpu.spec.architecture, gpu.bandwidth, gpu.peak("bf16"),
                 gpu.peak("fp8") if fp8 else gpu.peak("bf16"), _sms(gpu))
    return _terms(model, chip, tp, cp, pp, ep, micro_batch, seq_len, precision, fp8_recipe,
                  recompute, imbalance, shard_params, offload_layers, memory_factor,
                  expert_imbalance, fused_expert_mlp, fp8_attention)


@dataclass(frozen=True)
class _Chip:
    """What :func:`step_terms` reads of a GPU (hashable, so that terms can be cached)."""

    name: str
    architecture: str
    bandwidth: float
    peak_bf16: float
    peak_low: float
    sms: int

    def peak(self, precision: str) -> float:
        return self.peak_low if precision == "fp8" else self.peak_bf16


@lru_cache(maxsize=4096)
def _terms(model: ModelView, gpu: _Chip, tp: int, cp: int, pp: int, ep: int,
           micro_batch: int, seq_len: int, precision: str, fp8_recipe: str, recompute: str,
           imbalance: float, shard_params: float, offload_layers: int,
           memory_factor: float, expert_imbalance: float = 1.0,
           fused_expert_mlp: bool = False, fp8_attention: bool = False) -> StepTerms:
    """:func:`step_terms` once its arguments are checked (cached: the calibration plans
    the same runs many times)."""
    cfg = model.cfg
    arch = gpu.architecture
    fp8 = precision == "fp8"
    prec = "fp8" if fp8 else "bf16"
    peak = gpu.peak(prec)
    eff, eff16 = _efficiency(arch, prec, fp8_recipe), _efficiency(arch, "bf16")
    sms = gpu.sms
    bw = gpu.bandwidth / memory_factor
    t = max(micro_batch * seq_len // cp, 1)  # tokens of the micro-batch on this GPU
    h, L = model.hidden, model.layers
    mem_bytes = 0.0
    gemm = 0.0
    experts = 0.0
    gemm_flops = 0.0
    cast_bytes = 0.0
    redo_gemm = redo_experts = 0.0
    full = recompute == "full"
    op_shares = (activations.op_recomputed_products(cfg) if recompute == "torchtitan-op"
                 else {})

    def product(m: float, k: float, n: float, count: float = 1.0, *, low: bool = True,
                grouped: bool = False, name: str = "", fused_input: bool = False) -> None:
        """Forward, data-gradient and weight-gradient products of one linear layer
        (``grouped``: the routed experts', run as grouped products; ``name``: which of the
        block's layers, for torchtitan's op checkpointing; ``fused_input``: its FP8 input
        is written by the kernel before it, fused, and needs no cast of its own)."""
        nonlocal gemm, experts, mem_bytes, gemm_flops, cast_bytes, redo_gemm, redo_experts
        m, k, n = int(round(m)), int(round(k)), int(round(n))
        if min(m, k, n) <= 0 or count <= 0:
            return
        use_fp8 = fp8 and low
        pk, ef = (peak, eff) if use_fp8 else (gpu.peak_bf16, eff16)
        width = 1 if use_fp8 else ACTIVATION_BYTES
        # the share of the forward product run again in the backward pass
        redo = 1.0 if full else op_shares.get(name, 0.0)
        for i, (a, b, c) in enumerate(((m, k, n), (m, n, k), (k, m, n))):
            comp, mem = _gemm_seconds(a, b, c, pk, ef, sms, bw, width)
            reps = (1 + redo) if i == 0 else 1
            if comp >= mem and grouped:
                experts += comp * count * reps
                redo_experts += comp * count * (reps - 1)
            elif comp >= mem:
                gemm += comp * count * reps
                redo_gemm += comp * count * (reps - 1)
            else:
                mem_bytes += mem * bw * count * reps
            gemm_flops += 2 * a * b * c * count * reps
        if use_fp8 and fp8_recipe not in CASTS_IN_PRODUCT_RATE:
            # cast (and transpose) the input forward and the output gradient backward, and
            # the weights once per micro-batch, as the recipe casts (FP8_CAST_BYTES)
            act_b, weight_b = FP8_CAST_BYTES[fp8_recipe]
            cast_bytes += (act_b * ((0 if fused_input else m * k) + m * n) * count
                           + weight_b * k * n * count)

    # attention projections (any kind: the weights a layer holds, in and out)
    o_dim = cfg.o_dim
    attn_weights = _attention_weights(cfg)
    # a sparse-attention indexer's projections (wq_b, wk, weights_proj) are plain layers,
    # whole on every tensor-parallel GPU (see the indexer's scoring below)
    index_weights = float(transformer.indexer_params(cfg))  # type: ignore[arg-type]
    qkv_weights = attn_weights - index_weights - o_dim * h
    if recompute in UP_PROJECTIONS_AGAIN:  # the up-projections' share of them, again
        op_shares = {"qkv": activations.up_projection_params(cfg) / qkv_weights}
    product(t, h, qkv_weights / h / tp, L, name="qkv")
    product(t, h, index_weights / h, L, name="indexer")
    product(t, o_dim / tp, h, L, name="o")
    dense_layers = L - model.moe_layers
    gate = 2 if cfg.gated_mlp else 1
    product(t, h, gate * cfg.ffn / tp, dense_layers, name="mlp in")  # type: ignore[operator]
    product(t, cfg.ffn / tp, h, dense_layers, name="mlp out")  # type: ignore[operator]
    if model.is_moe:
        moe_l = model.moe_layers
        e_ffn = cfg.expert_ffn
        local = model.routed_experts / ep
        per_expert = ((t / tp) * model.experts_per_token * ep / model.routed_experts
                      * expert_imbalance)
        product(per_expert, h, gate * e_ffn, moe_l * local,  # type: ignore[operator]
                grouped=True)
        product(per_expert, e_ffn, h, moe_l * local, grouped=True,  # type: ignore[arg-type]
                fused_input=fused_expert_mlp)
        product(t / tp, h, model.routed_experts, moe_l, low=False)  # the router
        if cfg.shared_experts:
            s_ffn = cfg.shared_experts * cfg.shared_expert_ffn  # type: ignore[operator]
            product(t, h, gate * s_ffn / tp, moe_l)
            product(t, s_ffn / tp, h, moe_l)
    product(t, h, cfg.vocab / tp, 1, low=False)  # the output layer
    # memory-bound kernels, per token on this GPU (sequence parallel: norms on t/tp)
    tok = t / tp
    # the block's norms (two; Gemma's four), each read and written, and two residual adds
    per_layer = (2 * cfg.norms_per_layer * h + 6 * h) * tok
    if cfg.dropout:
        per_layer += 2 * 3 * h * tok  # two dropouts: read, write, mask
    # passes that read and write the queries and keys: rotary (learned positions have
    # none) and a norm on them (Qwen3's q_norm and k_norm)
    qk_passes = (not cfg.max_positions) + (cfg.qk_norm != "none")
    per_layer += 2 * qk_passes * (cfg.q_dim + cfg.kv_dim) * tok
    # latent attention normalises its compressed query and key-value latents (DeepSeek-V3's
    # q_a_layernorm and kv_a_layernorm; Megatron-Core runs each in its up-projection's
    # LayerNormLinear, as the block's norms run in the layers after them)
    per_layer += 2 * (cfg.q_lora_rank + cfg.kv_lora_rank) * tok
    per_layer_dense = (3 if cfg.gated_mlp else 2) * cfg.ffn * t / tp  # type: ignore[operator]
    act = per_layer * L + per_layer_dense * dense_layers
    if model.is_moe:
        k_tok = tok * model.experts_per_token
        # the experts' activation (unless fused into their products), then permuting and
        # unpermuting the tokens' copies
        act += model.moe_layers * (
            (0 if fused_expert_mlp else (3 if cfg.gated_mlp else 2))
            * cfg.expert_ffn * k_tok  # type: ignore[operator]
            + 4 * h * k_tok)
        if cfg.shared_experts:
            act += model.moe_layers * 3 * cfg.shared_experts * cfg.shared_expert_ffn * t / tp  # type: ignore[operator]
    # full and op checkpointing run the layer's element-wise kernels forward again
    fwd_passes = 2 if recompute in ("full", "torchtitan-op") else 1
    mem_bytes += act * ACTIVATION_BYTES * (fwd_passes + 2)
    if model.is_moe and cfg.glu_limit and cfg.gated_mlp and not fused_expert_mlp:
        # the experts' clamps, outside the fused activation (GLU_CLAMP_VALUES; inside the
        # products' epilogue when the experts' activation is fused there); recomputing
        # the experts' activation ("norm-moe-act") runs them forward again
        clamped = cfg.expert_ffn * tok * model.experts_per_token * model.moe_layers  # type: ignore[operator]
        fwd, bwd = GLU_CLAMP_VALUES
        again_fwd = fwd_passes + (1 if recompute == "norm-moe-act" else 0)
        mem_bytes += (fwd * again_fwd + bwd) * clamped * ACTIVATION_BYTES
    if recompute == "norm-moe-act":  # the block's norms and the experts' activation again
        again = 2 * cfg.norms_per_layer * h * tok * L
        if model.is_moe:
            again += ((3 if cfg.gated_mlp else 2) * cfg.expert_ffn  # type: ignore[operator]
                      * tok * model.experts_per_token * model.moe_layers)
        mem_bytes += again * ACTIVATION_BYTES
    # cross-entropy over the vocabulary slice: FP32 logits read and written, forward and back
    mem_bytes += 4 * 4 * cfg.vocab / tp * t
    mem_bytes += cast_bytes
    # attention: the FLOPs a causal kernel must do (half of PaLM's count; a sliding
    # window's keys in full), at FlashAttention's efficiency for the head size and the
    # keys each layer's queries see; recomputed too
    per_key = flops.attention_flops_per_key(cfg)
    d_head = (cfg.head_dim + cfg.value_head_dim) / 2  # type: ignore[operator]
    # each query sees the whole sequence; with context parallelism a kernel call sees one
    # GPU's chunk of keys at a time (the ring passes the chunks round), which sets its walk
    s_kv, top = seq_len, cfg.indexer_topk
    if top and s_kv > top:  # DeepSeek Sparse Attention: each query its top-k, gathered,
        # latent attention absorbed (every head attends to the shared latent, "MQA mode"),
        # its per-tile products as wide as the mean of its key and value widths
        run = flops.executed_attention_flops_per_key(cfg, sequence=s_kv)
        keys = flops.attended_keys(0, s_kv, top) / s_kv  # per query, causal
        attn_flops = 3 * run * cfg.global_layers * keys
        attn = attn_flops / attention_efficiency(run / (4 * cfg.heads), top, arch,
                                                 window=True, fp8=fp8_attention)
    else:
        attn_flops = 3 * per_key * cfg.global_layers * s_kv / 2
        attn = attn_flops / attention_efficiency(d_head, max(s_kv // cp, 1), arch,
                                                 fp8=fp8_attention)
    index_flops = index_time = index_redo = 0.0
    if top:  # its indexer scores every earlier key, backward only the picked ones
        scoring = cfg.global_layers * flops.indexer_flops_per_key(cfg) * flops.attended_keys(
            0, s_kv) / s_kv
        index_flops = cfg.global_layers * flops.indexer_training_flops(
            cfg, scored=flops.attended_keys(0, s_kv), selected=flops.attended_keys(
                0, s_kv, top)) / s_kv
        # selective recomputation reruns the attention core, not the indexer: its top-k
        # indices are kept (gpulesson.activations.indexer_tensors); full recomputation
        # runs the layer's forward again, the indexer's scoring with it
        index_redo = scoring if recompute == "full" else 0.0
        index_flops += index_redo
        rate = attention_efficiency(cfg.indexer_head_dim, max(s_kv // cp, 1), arch)
        index_time, index_redo = index_flops / rate, index_redo / rate
    if cfg.local_layers or cfg.chunked_layers:  # a chunk's keys counted like a window's
        w = min(cfg.sliding_window or cfg.attention_chunk, s_kv)
        local = 3 * per_key * (cfg.local_layers + cfg.chunked_layers) * w
        attn_flops += local
        attn += local / attention_efficiency(d_head, max(w, 1), arch, window=True,
                                             fp8=fp8_attention)
    redo_attn = attn / 3 if recompute not in ATTENTION_KEPT else 0.0
    if recompute not in ATTENTION_KEPT:  # the attention core runs again
        attn *= 4 / 3
        attn_flops *= 4 / 3
    # the attention's heads are split by tp, a sparse-attention indexer is not (module
    # docstring: whole on every tensor-parallel GPU); context parallelism splits its queries
    redo_attn = redo_attn * t / tp + index_redo * t
    attn = attn * t / tp + index_time * t
    attn_flops = attn_flops * t / tp + index_flops * t
    kernels = L * (_KERNELS_DENSE + (_KERNELS_FP8 if fp8 else 0)) + model.moe_layers * _KERNELS_MOE
    offload = 0.0
    if offload_layers:
        stored = activations.activation_bytes(cfg, seq_len=seq_len, batch=micro_batch,
                                              attention="flash", tp=tp,
                                              sequence_parallel=tp > 1, cp=cp) / L
        offload = 2 * stored * min(offload_layers, L)
    share = imbalance / pp
    return StepTerms(gemm=gemm * share, experts=experts * share,
                     attention=attn * share / gpu.peak_bf16,
                     memory=mem_bytes * share / gpu.bandwidth, kernels=kernels / pp,
                     syncs=2 * model.moe_layers / pp,
                     optimizer_bytes=OPTIMIZER_BYTES * shard_params,
                     offload_bytes=offload / pp, gemm_flops=gemm_flops * share,
                     redo_gemm=redo_gemm * share, redo_experts=redo_experts * share,
                     attention_flops=attn_flops * share,
                     redo_attention=redo_attn * share / gpu.peak_bf16)


def fp8_activation_saving(model: object, *, seq_len: int = 1) -> float:
    """Share of a layer's stored activations FP8 training saves: the inputs of the linear
    layers (attention in and out, the MLP's or experts' in and out) are kept for the
    backward pass as their FP8 casts, 1 byte instead of 2 (TransformerEngine saves the
    quantized input). Measured against :func:`gpulesson.activations.activation_bytes` of
    one token of a ``seq_len``-token sequence (FlashAttention, no recomputation): the
    same share at every length but with DeepSeek Sparse Attention, whose indexer keeps
    ``min(seq_len, topk)`` indices and targets a token that stay as they are
    (:func:`gpulesson.activations.indexer_tensors`)."""
    model = model if isinstance(model, ModelView) else model_view(model)
    cfg = model.cfg
    s = v.positive_int("seq_len", seq_len)
    per_token = activations.activation_bytes(cfg, seq_len=s, batch=1, attention="flash",
                                             recompute="none") / model.layers / s
    dense = model.layers - model.moe_layers
    inputs = dense * (2 * model.hidden + cfg.o_dim + cfg.ffn)  # type: ignore[operator]
    if model.is_moe:
        k = model.experts_per_token
        inputs += model.moe_layers * (2 * model.hidden + cfg.o_dim
                                      + k * (model.hidden + cfg.expert_ffn))  # type: ignore[operator]
    return min(inputs / model.layers / per_token, 0.5)  # 1 byte saved per value


def _attention_weights(cfg: object) -> float:
    """One layer's attention weights (any kind: grouped-query or latent), from
    :func:`gpulesson.transformer.param_breakdown`."""
    return transformer.param_breakdown(cfg)["attention"] / cfg.layers  # type: ignore[arg-type, attr-defined]


v.guard_module(globals())
