"""What the planners read from a model and a GPU, in one place, with stated fallbacks.

The planners need more than a parameter count and a datasheet: the active parameters of a
mixture-of-experts model, the bytes of its KV cache per token, the memory a framework can
really use, the NVLink bandwidth and domain, a scale-out NIC, a price, and how close large
matrix products get to the peak. Every such figure is read here, by :func:`model_view` and
:func:`gpu_view`, so that the rest of :mod:`gpulesson.planning` never guesses.

Models come from :mod:`gpulesson.transformer` (presets, configs, ``config.json`` files:
active parameters, experts, latent attention). Where :mod:`gpulesson.hardware` carries a
GPU figure (the reported memory, NVLink, the NVLink domain, the scale-out NIC), it is used,
and :mod:`gpulesson.prices` gives the default dated price; where a figure is missing, the
fallback is stated in :attr:`GPUView.notes`.

Achievable matrix-multiply efficiency (:data:`MATMUL_EFFICIENCY`): the best BF16 ``matmul``
rate found by a search over shapes, over the dense peak ("Maximum Achievable Matmul FLOPS
comparison table", S. Bekman, *Machine Learning Engineering*, github.com/stas00/ml-engineering,
``compute/accelerator/README.md``): A100 SXM 267.9 of 312 TFLOP/s (85.9 %), H100 SXM 792.1 of
989 (80.1 %), MI300X 781.9 of 1,300 (60.1 %). A figure measured on your own GPU
(``gpulesson.machine``) replaces it: pass ``matmul_efficiency``. The FP8 efficiency then
moves with it, keeping the ratio of the two sourced figures.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from gpulesson import _validate as v
from gpulesson import flops, hardware, inference, prices, transformer, units
from gpulesson.transformer import TransformerConfig

__all__ = ["ATTENTION_EFFICIENCY", "MATMUL_EFFICIENCY", "GPUView",
           "ModelView", "gpu_view", "model_view"]

_MAMF = "Bekman, ML Engineering, Maximum Achievable Matmul FLOPS table"
#: Achievable fraction of the dense BF16 peak in large matrix products, by architecture:
#: (fraction, source). Measured where the source measured it; assumed (and said) elsewhere.
MATMUL_EFFICIENCY: Mapping[str, tuple[float, str]] = MappingProxyType({
    "Volta": (0.80, "assumed, as Hopper (no measurement in the MAMF table)"),
    "Ampere": (267.9 / 312, f"A100 SXM 267.9 of 312 TFLOP/s ({_MAMF})"),
    "Hopper": (792.1 / 989, f"H100 SXM 792.1 of 989 TFLOP/s ({_MAMF})"),
    "Blackwell": (792.1 / 989, "assumed, as Hopper (no BF16 measurement in the MAMF table)"),
    "Ada Lovelace": (0.75, "assumed (no measurement in the MAMF table)"),
    "CDNA 3": (781.9 / 1300, f"MI300X 781.9 of 1,300 TFLOP/s ({_MAMF})"),
})
_DEFAULT_EFFICIENCY = (0.75, "assumed (no measurement for this architecture)")
#: Achievable fraction of the dense peak in causal attention kernels (forward and backward,
#: FLOPs actually executed): FlashAttention-2 reaches "50-73% of the theoretical maximum
#: FLOPs/s on A100" (Dao 2023, abstract) and "only 35% utilization on H100" (Shah et al.
#: 2024, FlashAttention-3, section 1), where FlashAttention-3 reaches 75 % forward.
ATTENTION_EFFICIENCY: Mapping[str, tuple[float, str]] = MappingProxyType({
    "Ampere": (0.50, "FlashAttention-2 on A100, 50-73 % (Dao 2023): the low end"),
    "Hopper": (0.35, "FlashAttention-2 on H100, 35 % (Shah et al. 2024)"),
    "Blackwell": (0.35, "assumed, as Hopper"),
})
_DEFAULT_ATTENTION = (0.35, "assumed, as FlashAttention-2 on H100 (Shah et al. 2024)")
#: One 400 Gb/s NIC per GPU, the scale-out design of Llama 3's clusters ("both fabrics use
#: 400 Gbps interconnects between GPUs", Dubey et al. 2024, section 3.3.1): 50 GB/s one way.
DEFAULT_SCALEOUT = 50e9
#: GPUs with NVSwitch-based in-switch reduction (NVLink SHARP, third-generation NVSwitch on).
_SHARP_ARCHITECTURES = ("Hopper", "Blackwell")


@functools.lru_cache(maxsize=1024)
def _model_flops_per_token(cfg: TransformerConfig, seq_len: int) -> float:
    """:func:`gpulesson.flops.model_flops_per_token`, kept per model and sequence length: a
    layout search asks it once per layout, always the same."""
    return flops.model_flops_per_token(cfg, seq_len=seq_len)


@dataclass(frozen=True)
class ModelView:
    """A model as the planners see it (SI units, counts as numbers).

    ``cfg`` is the :class:`~gpulesson.transformer.TransformerConfig` the formula modules take.
    ``total_params`` is what memory holds (:func:`gpulesson.transformer.param_count`);
    ``active_params`` what one token's forward pass uses, the FLOPs' ``N``
    (:func:`gpulesson.transformer.active_params`): equal for a dense model.
    ``expert_params`` are all the routed experts (sharded by expert parallelism),
    ``kv_bytes_per_token`` the 16-bit KV cache of one token, all layers
    (:func:`gpulesson.inference.kv_cache_bytes_per_token`: latent attention's cache too).
    """

    name: str
    cfg: TransformerConfig
    total_params: float
    active_params: float
    kv_bytes_per_token: float
    routed_experts: int = 0
    experts_per_token: int = 0
    moe_layers: int = 0
    expert_params: float = 0.0
    notes: tuple[str, ...] = ()

    @property
    def is_moe(self) -> bool:
        """True for a mixture-of-experts model."""
        return self.routed_experts > 0

    @property
    def layers(self) -> int:
        return self.cfg.layers

    @property
    def hidden(self) -> int:
        return self.cfg.hidden

    @property
    def heads(self) -> int:
        return self.cfg.heads

    @property
    def kv_heads(self) -> int:
        return self.cfg.kv_heads  # type: ignore[return-value]

    def model_flops_per_token(self, seq_len: int) -> float:
        """Training FLOPs per token (:func:`gpulesson.flops.model_flops_per_token`): ``6N``
        with the active parameters plus the architecture's attention (windows, latent
        attention), PaLM's full score matrix."""
        return _model_flops_per_token(self.cfg, seq_len)

    def prefill_attention_flops(self, prompt: int) -> float:
        """Forward attention FLOPs of a causal prefill of ``prompt`` tokens: each token
        attends to half the prompt on average (:func:`gpulesson.flops.
        forward_attention_flops_per_token` at the full prompt, halved). With DeepSeek Sparse
        Attention token ``i`` attends to ``min(i, topk)`` keys and its indexer scores ``i``
        (:func:`gpulesson.flops.indexer_flops_per_key`), summed exactly, at the FLOPs a key
        its kernels run: latent attention absorbed for a prompt longer than the top-k
        (:func:`gpulesson.flops.executed_attention_flops_per_key`; vLLM's sparse prefill,
        FlashMLA's MQA-mode kernel), the up-projected heads for one that fits."""
        cfg, top = self.cfg, self.cfg.indexer_topk
        if not top:
            return flops.forward_attention_flops_per_token(cfg, context=prompt) * prompt / 2
        keys = flops.attended_keys(0, prompt, top)
        per_key = flops.executed_attention_flops_per_key(cfg, sequence=prompt)
        scored = flops.indexer_flops_per_key(cfg) * flops.attended_keys(0, prompt)
        return float(cfg.global_layers * (per_key * keys + scored))


def _from_config(cfg: TransformerConfig) -> ModelView:
    experts = cfg.experts if cfg.moe else 0
    return ModelView(
        name=cfg.name or "custom model", cfg=cfg,
        total_params=float(transformer.param_count(cfg)),
        active_params=float(transformer.active_params(cfg)),
        kv_bytes_per_token=float(inference.kv_cache_bytes_per_token(cfg, bytes_per_element=2)),
        routed_experts=experts, experts_per_token=cfg.experts_per_token if experts else 0,
        moe_layers=cfg.moe_layers if experts else 0,
        expert_params=float(transformer.moe_breakdown(cfg)["routed_experts"]))


def model_view(model: object) -> ModelView:
    """The :class:`ModelView` of a preset name, a ``TransformerConfig``, a config.json mapping
    (:func:`gpulesson.transformer.from_hf_config`) or a ``ModelView`` (returned as it is).
    Unknown names and unsupported configs raise the transformer module's errors."""
    if isinstance(model, ModelView):
        return model
    if isinstance(model, str):
        return _from_config(transformer.preset(model))
    if isinstance(model, TransformerConfig):
        return _from_config(model)
    if isinstance(model, Mapping):
        return _from_config(transformer.from_hf_config(model))
    raise TypeError("model must be a preset name, a TransformerConfig, a config.json mapping "
                    f"or a ModelView, got {type(model).__name__}")


@dataclass(frozen=True)
class GPUView:
    """A GPU as the planners see it: memory a framework can use, links, price, efficiency.

    ``usable_memory`` is the memory total the device reports (bytes; vLLM takes its
    ``gpu_memory_utilization`` of it, a training plan :attr:`plan_memory`), ``nvlink_bandwidth``
    one direction per GPU inside an NVLink (or Infinity Fabric) domain of ``domain`` GPUs,
    ``scaleout_bandwidth`` one direction per GPU over the network, ``sharp`` whether the
    switches reduce in-network. ``matmul_efficiency`` is the achievable fraction of the dense
    peak in large matrix products, ``attention_efficiency`` in causal attention kernels
    (FP8 products: :func:`gpulesson.planning.products.products_rate` in serving,
    :data:`gpulesson.planning.perf_model.GEMM_EFFICIENCY` in training); ``price`` USD per
    GPU-hour or ``None``. ``notes`` say which figures are fallbacks.
    """

    name: str
    spec: hardware.GPUSpec
    usable_memory: float
    bandwidth: float
    nvlink_bandwidth: float
    domain: int
    scaleout_bandwidth: float
    sharp: bool
    matmul_efficiency: float
    attention_efficiency: float
    price: float | None
    notes: tuple[str, ...] = field(default=())

    @property
    def plan_memory(self) -> float:
        """What a training plan may use: :data:`gpulesson.hardware.USABLE_MEMORY_FRACTION`
        of the reported total (:meth:`gpulesson.hardware.GPUSpec.usable_memory` of this
        total: 81.2 GB on an H100)."""
        return self.usable_memory * hardware.USABLE_MEMORY_FRACTION

    def peak(self, dtype: str = "bf16") -> float:
        """Dense peak FLOP/s (``GPUSpec.dense``); FP16 stands in where BF16 is missing."""
        rates = self.spec.peak_flops
        if dtype == "bf16" and "bf16" not in rates and "fp16" in rates:
            return rates["fp16"]
        return self.spec.dense(dtype)


def gpu_view(gpu: object, *, usable_memory: float | None = None,
             nvlink_bandwidth: float | None = None, domain: int | None = None,
             scaleout_bandwidth: float | None = None, matmul_efficiency: float | None = None,
             attention_efficiency: float | None = None,
             usd_per_gpu_hour: float | None = None) -> GPUView:
    """The :class:`GPUView` of a GPU name or ``GPUSpec``; keyword arguments override.

    From :mod:`gpulesson.hardware`: the memory the driver reports
    (``GPUSpec.memory_total``: H100 SXM 81,559 MiB), NVLink one way
    (``link_bandwidth_one_way``) and the NVLink domain, the scale-out NIC; from
    :mod:`gpulesson.prices`, the GPU's default dated price. What is missing is a stated
    fallback in :attr:`GPUView.notes`.
    """
    spec = hardware.gpu(gpu) if isinstance(gpu, str) else gpu
    if not isinstance(spec, hardware.GPUSpec):
        raise TypeError(f"gpu must be a GPU name or a GPUSpec, got {type(gpu).__name__}")
    notes: list[str] = []
    arch = spec.architecture
    mem = float(spec.memory_total)
    if spec.memory_basis != "reported":
        notes.append("memory: the datasheet capacity (no reported total on record)")
    nic = spec.scaleout_bandwidth
    if nic is None:
        nic = DEFAULT_SCALEOUT
        notes.append("scale-out: one 400 Gb/s NIC per GPU (50 GB/s), as in Llama 3's clusters")
    link = spec.link_bandwidth_one_way()
    if link <= 0:  # no GPU-to-GPU link on record: the GPUs talk over the network
        link = nic
        notes.append("no GPU-to-GPU link on record: the network's bandwidth is used")
    size = max(int(spec.nvlink_domain), 1)
    eff, eff_source = MATMUL_EFFICIENCY.get(arch, _DEFAULT_EFFICIENCY)
    att, att_source = ATTENTION_EFFICIENCY.get(arch, _DEFAULT_ATTENTION)
    price: float | None = None
    try:
        quote = prices.default_price(spec.name)
        price = quote.usd_per_gpu_hour
        notes.append(f"price: {quote.describe()}")
    except (KeyError, ValueError):
        notes.append(f"price: no dated quote for {spec.name}: give usd_per_gpu_hour")
    view = GPUView(name=spec.name, spec=spec, usable_memory=mem, bandwidth=spec.bandwidth,
                   nvlink_bandwidth=float(link), domain=size, scaleout_bandwidth=float(nic),
                   sharp=arch in _SHARP_ARCHITECTURES and size > 1,
                   matmul_efficiency=eff, attention_efficiency=att,
                   price=price,
                   notes=(*notes, f"matmul efficiency {eff:.1%}: {eff_source}",
                          f"attention efficiency {att:.0%}: {att_source}"))
    over: dict[str, object] = {}
    if usable_memory is not None:
        over["usable_memory"] = v.positive_number("usable_memory", usable_memory)
    if nvlink_bandwidth is not None:
        over["nvlink_bandwidth"] = v.positive_number("nvlink_bandwidth", nvlink_bandwidth)
    if domain is not None:
        over["domain"] = v.positive_int("domain", domain)
    if scaleout_bandwidth is not None:
        over["scaleout_bandwidth"] = v.positive_number("scaleout_bandwidth",
                                                       scaleout_bandwidth)
    if matmul_efficiency is not None:
        # a BF16 figure (measured here, or typed in a form); the FP8 products keep their
        # own measured ratio to it (planning.products.products_rate)
        over["matmul_efficiency"] = v.fraction("matmul_efficiency", matmul_efficiency,
                                               allow_zero=False)
    if attention_efficiency is not None:
        over["attention_efficiency"] = v.fraction("attention_efficiency", attention_efficiency,
                                                  allow_zero=False)

    if usd_per_gpu_hour is not None:
        over["price"] = v.nonneg_number("usd_per_gpu_hour", usd_per_gpu_hour)
    # a figure given in place of the default is the one the notes name
    price_given = "price" in over and over["price"] != view.price
    efficiency_given = ("matmul_efficiency" in over
                        and over["matmul_efficiency"] != view.matmul_efficiency)
    given_notes = {"price": f"price: {units.format_usd(over['price'])} per GPU-hour, as given"
                   if price_given else None,
                   "matmul efficiency": f"matmul efficiency {over['matmul_efficiency']:.1%}, "
                   "as given" if efficiency_given else None}
    if any(given_notes.values()):
        over["notes"] = tuple(next((n for key, n in given_notes.items()
                                    if n and note.startswith(key)), note)
                              for note in view.notes)
    return replace(view, **over) if over else view  # type: ignore[arg-type]


v.guard_module(globals())
