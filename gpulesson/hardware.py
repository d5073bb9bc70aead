"""GPU specifications: memory, bandwidth, dense (and, apart, sparse) peak rates, power.

The figures live in ``gpulesson/data/gpus.json`` (loaded once with
:mod:`importlib.resources`); every figure there names its source (a datasheet or
whitepaper) and every source carries a date.

Conventions (see ``book/conventions.md``):

* ``peak_flops`` holds **dense** rates, the ones to use for MFU and the roofline.
  Datasheets often headline the 2:4 structured-sparsity rate, which is twice the dense
  one; those figures live in ``sparse_flops`` and are never mixed in.
* ``fp16``/``bf16`` rates are tensor-core rates with FP32 accumulation (what training
  uses). On GeForce cards the FP16-accumulate rate is twice that; it is kept in
  ``other_flops``.
* ``fp64`` is the highest dense FP64 rate (the FP64 tensor-core rate where there is one);
  the plain vector rate is ``other_flops["fp64_vector"]``.
* ``int8`` figures are integer operations per second (TOPS), stored under the same key.
* ``memory_bytes`` is the datasheet capacity in decimal GB (``80 GB = 80e9 bytes``);
  the physical HBM is often slightly larger (an "80 GB" card has 80 GiB), so this is the
  conservative figure. ``bandwidth`` is the peak memory (HBM/GDDR) bandwidth in bytes/s;
  ``interconnect_bandwidth`` is the total bidirectional GPU-to-GPU link bandwidth.

Efficiency: :func:`flops_per_watt` divides a dense peak by the rated board power.

Taught in: ``notebooks/roofline_and_tensor_cores.ipynb`` and ``book/hardware.md``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from types import MappingProxyType
from typing import Protocol

from gpulesson import _validate as v
from gpulesson import roofline

__all__ = ["DTYPES", "GPUS", "SOURCES", "GPUSpec", "PoweredSpec", "flops_per_watt", "gpu"]

#: Data types a ``peak_flops`` mapping may hold.
DTYPES = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8")


@dataclass(frozen=True)
class GPUSpec:
    """One GPU's specification (SI base units).

    Attributes
    ----------
    name : str
        Canonical name, e.g. ``"H100 SXM"``.
    memory_bytes : int
        Device memory, bytes (datasheet GB x 1e9).
    bandwidth : float
        Peak memory bandwidth, bytes/s.
    peak_flops : Mapping[str, float]
        Dense peak rate per data type, FLOP/s (ops/s for ``int8``).
    tdp_watts : float
        Maximum board power, watts.
    source : str
        The main datasheet and its date.
    sparse_flops : Mapping[str, float]
        2:4 structured-sparsity peak rates, never used for MFU or rooflines.
    other_flops : Mapping[str, float]
        Further rates (``fp64_vector``, ``fp16_fp16_accumulate``, ``fp4``).
    vendor, architecture, memory_type, released, interconnect : str
        Descriptive fields.
    interconnect_bandwidth : float
        Total bidirectional GPU-to-GPU (or PCIe) bandwidth, bytes/s.
    figure_sources : Mapping[str, str]
        For every figure (``"bandwidth"``, ``"peak_flops.bf16"`` ...), its source and date.
    notes : str
        Caveats worth knowing.
    """

    name: str
    memory_bytes: int
    bandwidth: float
    peak_flops: Mapping[str, float]
    tdp_watts: float
    source: str
    sparse_flops: Mapping[str, float] = field(default_factory=dict)
    other_flops: Mapping[str, float] = field(default_factory=dict)
    vendor: str = ""
    architecture: str = ""
    memory_type: str = ""
    released: str = ""
    interconnect: str = ""
    interconnect_bandwidth: float = 0.0
    figure_sources: Mapping[str, str] = field(default_factory=dict)
    notes: str = ""

    def dense(self, dtype: str = "bf16") -> float:
        """Dense peak FLOP/s for ``dtype``; ``KeyError`` listing those this GPU has."""
        return v.lookup(f"{self.name} dtype", dtype, self.peak_flops)[1]

    def ridge_point(self, dtype: str = "bf16") -> float:
        """FLOP per byte where the roofline bends (:func:`gpulesson.roofline.ridge_point`)."""
        return roofline.ridge_point(self.dense(dtype), self.bandwidth)


def _cite(sources: Mapping[str, Mapping[str, str]], key: str) -> str:
    src = sources[key]
    return f"{src['title']}, {src['publisher']}, {src['date']}"


def _load() -> tuple[Mapping[str, GPUSpec], dict[str, str], Mapping[str, Mapping[str, str]]]:
    text = resources.files("gpulesson").joinpath("data/gpus.json").read_text(encoding="utf-8")
    data = json.loads(text)
    sources = data["sources"]
    specs: dict[str, GPUSpec] = {}
    aliases: dict[str, str] = {}
    for entry in data["gpus"]:
        figure_sources: dict[str, str] = {}

        def value(key: str, item: Mapping[str, object], record: dict[str, str]) -> float:
            record[key] = _cite(sources, str(item["source"]))
            return item["value"]  # type: ignore[return-value]

        def table(group: str, items: Mapping[str, Mapping[str, object]],
                  record: dict[str, str]) -> Mapping[str, float]:
            return MappingProxyType(
                {k: value(f"{group}.{k}", item, record) for k, item in items.items()}
            )

        name = entry["name"]
        main_source = entry["memory_bytes"]["source"]
        specs[name] = GPUSpec(
            name=name,
            memory_bytes=int(value("memory_bytes", entry["memory_bytes"], figure_sources)),
            bandwidth=float(value("bandwidth", entry["bandwidth"], figure_sources)),
            peak_flops=table("peak_flops", entry["peak_flops"], figure_sources),
            tdp_watts=float(value("tdp_watts", entry["tdp_watts"], figure_sources)),
            source=_cite(sources, main_source),
            sparse_flops=table("sparse_flops", entry["sparse_flops"], figure_sources),
            other_flops=table("other_flops", entry["other_flops"], figure_sources),
            vendor=entry["vendor"],
            architecture=entry["architecture"],
            memory_type=entry["memory_type"],
            released=entry["released"],
            interconnect=entry["interconnect"],
            interconnect_bandwidth=float(
                value("interconnect_bandwidth", entry["interconnect_bandwidth"], figure_sources)
            ),
            figure_sources=MappingProxyType(figure_sources),
            notes=entry["notes"],
        )
        for alias in entry["aliases"]:
            aliases[alias] = name
    return MappingProxyType(specs), aliases, MappingProxyType(sources)


#: All GPUs of the course by canonical name (read-only).
GPUS: Mapping[str, GPUSpec]
#: The sources of the figures: key -> title, publisher, date, url.
SOURCES: Mapping[str, Mapping[str, str]]
GPUS, _ALIASES, SOURCES = _load()


def gpu(name: str) -> GPUSpec:
    """Look a GPU up by name, ignoring case, spaces and hyphens.

    ``gpu("h100 sxm")``, ``gpu("H100-SXM")`` and the alias ``gpu("H100")`` all return the
    H100 SXM. An unknown name raises ``KeyError`` listing the known names.
    """
    return v.lookup("GPU", name, GPUS, _ALIASES)[1]


class PoweredSpec(Protocol):
    """What :func:`flops_per_watt` reads: a :class:`GPUSpec`, or a measured machine."""

    name: str
    peak_flops: Mapping[str, float]
    sparse_flops: Mapping[str, float]
    tdp_watts: float | None


def flops_per_watt(spec: PoweredSpec, dtype: str = "fp16", *, sparse: bool = False) -> float:
    """Peak FLOP/s per watt of board power: ``peak_flops[dtype] / tdp_watts``.

    A datasheet efficiency (FLOP per joule at full power), not a measurement: real runs
    draw less than the TDP and reach less than the peak. Use the dense peak (the default);
    ``sparse=True`` divides the 2:4-sparse headline instead, twice the dense figure, to
    show what a sparse headline would claim. H100 SXM: 989.4 TFLOP/s dense FP16 at 700 W,
    1.41 TFLOP/s per watt (NVIDIA H100 whitepaper, 2022). Taught in:
    ``roofline_and_tensor_cores`` (the GPU table).

    Parameters
    ----------
    spec:
        a :class:`GPUSpec` (or anything with ``name``, ``peak_flops``, ``tdp_watts`` and,
        for ``sparse=True``, ``sparse_flops``).
    dtype:
        a key of ``spec.peak_flops`` (``"fp16"``, ``"bf16"``, ``"fp32"`` ...).
    sparse:
        use ``spec.sparse_flops`` instead of the dense ``spec.peak_flops``.

    Raises
    ------
    KeyError
        when the datasheet gives no figure for ``dtype`` (lists those it gives).
    ValueError
        when ``tdp_watts`` is missing or not a positive number (a measured machine).
    """
    needed = ("name", "peak_flops", "tdp_watts") + (("sparse_flops",) if sparse else ())
    if not all(hasattr(spec, attribute) for attribute in needed):
        raise TypeError(f"spec must be a GPUSpec (gpu(name)) or a measured machine, got "
                        f"{v._short_repr(spec)} ({type(spec).__name__})")
    if not isinstance(dtype, str):
        raise TypeError(f"dtype must be a name such as 'fp16', got {v._short_repr(dtype)}")
    rates = spec.sparse_flops if sparse else spec.peak_flops
    kind = "sparse" if sparse else "dense"
    if dtype not in rates:
        raise KeyError(f"{spec.name} has no {kind} {dtype!r} figure; it has "
                       f"{', '.join(rates) or 'none'}")
    watts = spec.tdp_watts
    if isinstance(watts, bool) or not isinstance(watts, (int, float)) or not (
        math.isfinite(watts) and watts > 0
    ):
        raise ValueError(f"tdp_watts of {spec.name} must be a positive number of watts, "
                         f"got {watts!r}")
    return rates[dtype] / watts


v.guard_module(globals())
