"""GPU specifications: memory, bandwidth, dense (and, apart, sparse) peak rates, power, links.

The figures live in ``gpulesson/data/gpus.json`` (loaded once with
:mod:`importlib.resources`); every figure there names its source (a datasheet,
whitepaper, vendor page or a public report of what a driver prints) and every source
carries a date.

Conventions (see ``book/conventions.md``):

* ``peak_flops`` holds **dense** rates, the ones to use for MFU and the roofline.
  Datasheets often headline the 2:4 structured-sparsity rate, which is twice the dense
  one; those figures live in ``sparse_flops`` and are never mixed in. Where a datasheet
  prints only the sparse rate (NVIDIA's HGX, NVL72 and NVL tables, for all but FP4), the
  dense figure is half of it, and the figure's note says so. NVIDIA prints FP4 both ways
  (the GB300's dense FP4 is three quarters of its sparse FP4, not half).
* ``fp16``/``bf16`` rates are tensor-core rates with FP32 accumulation (what training
  uses). On GeForce cards the FP16-accumulate rate is twice that; it is kept in
  ``other_flops``.
* ``fp8``, ``fp6`` and ``fp4`` are the tensor-core rates of those element widths, whatever
  the block scaling (NVIDIA's FP8/FP6 row and its FP4 row cover MXFP8/MXFP6/MXFP4 and
  NVFP4 alike; AMD's MI355X runs MXFP6 at its MXFP4 rate and has no NVFP4).
* ``fp64`` is the highest dense FP64 rate (the FP64 tensor-core rate where there is one);
  the plain vector rate is ``other_flops["fp64_vector"]``.
* ``int8`` figures are integer operations per second (TOPS), stored under the same key.

Memory, three numbers (``book/conventions.md``):

* ``memory_bytes`` is the datasheet capacity in decimal GB (``80 GB = 80e9 bytes``);
* ``reported_memory_bytes`` is what the driver reports (an H100 SXM: 81,559 MiB in
  ``nvidia-smi``, 85.5e9 bytes; on ROCm the total PyTorch reports), ``None`` where no
  public report was found;
* :meth:`GPUSpec.usable_memory` is what a framework can plan with, the course's one
  usable-memory figure: the reported total (or, failing that, the datasheet capacity)
  times :data:`USABLE_MEMORY_FRACTION`, 0.95. The other 5 % is the stated reserve for
  what the runtime holds outside the framework's allocator: the CUDA/ROCm context, cuBLAS
  and NCCL work spaces, 1.79 GiB on one H100 and 3.58 GiB with tensor parallelism over
  two as vLLM measures them (pull request #10511). A serving engine's own share (vLLM's
  ``gpu_memory_utilization``, 0.9 by default) is a setting of the engine, applied to the
  reported total by :func:`gpulesson.planning.serving.kv_budget`.

Links: ``interconnect_bandwidth`` is the GPU-to-GPU (NVLink, Infinity Fabric or, failing
those, PCIe) bandwidth **per GPU, both directions together**;
:meth:`GPUSpec.link_bandwidth_one_way` halves it. ``nvlink_domain`` is how many GPUs
share that fabric (8 on an HGX board or an MI300-series baseboard, 72 in an NVL72 rack, 2
or 4 for bridged PCIe cards, 1 with no GPU link). ``scaleout_bandwidth`` is a typical
scale-out NIC per GPU, **one direction** (400 Gb/s = 50e9 bytes/s), ``None`` for cards no
reference system networks.

The course's worked examples use :data:`TEACHING_BASELINE` (the H100 SXM, two
generations old by 2026) and set :data:`CURRENT_GENERATION` beside it.

Efficiency: :func:`flops_per_watt` divides a dense peak by the rated board power.
Spec-sheet mistakes: :func:`peak_mismatch` recognises a typed peak that is a sparse or
FP16-accumulate figure of the GPU.

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

__all__ = [
    "COMPUTE_CAPABILITIES",
    "CURRENT_GENERATION",
    "DTYPES",
    "GPUS",
    "SOURCES",
    "TEACHING_BASELINE",
    "USABLE_MEMORY_FRACTION",
    "GPUSpec",
    "PoweredSpec",
    "SpecSheet",
    "flops_per_watt",
    "gpu",
    "peak_mismatch",
]

#: Data types a ``peak_flops`` mapping may hold.
DTYPES = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "fp6", "fp4", "int8")


@dataclass(frozen=True)
class SpecSheet:
    """The attributes every spec has, a datasheet's (:class:`GPUSpec`) or one measured on
    this machine (:class:`gpulesson.machine.MachineSpec`), so either stands in the same
    table or plot. :class:`GPUSpec` documents each; ``None`` or empty where unknown."""

    name: str
    memory_bytes: int | None
    bandwidth: float
    peak_flops: Mapping[str, float]
    tdp_watts: float | None = None
    source: str = ""
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
    reported_memory_bytes: int | None = None
    nvlink_domain: int = 1
    scaleout_bandwidth: float | None = None
    compute_capability: str | None = None
    sms: int | None = None
    execution_note: str = ""


@dataclass(frozen=True)
class GPUSpec(SpecSheet):
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
        GPU-to-GPU (NVLink, Infinity Fabric or PCIe) bandwidth per GPU, both directions
        together, bytes/s.
    figure_sources : Mapping[str, str]
        For every figure (``"bandwidth"``, ``"peak_flops.bf16"`` ...), its source and date.
    notes : str
        Caveats worth knowing.
    reported_memory_bytes : int or None
        Memory total the driver reports (``nvidia-smi``; PyTorch on ROCm), bytes; ``None``
        when no public report was found.
    nvlink_domain : int
        GPUs in one NVLink (or Infinity Fabric) domain: 8 (HGX), 72 (NVL72), 1 (none).
    scaleout_bandwidth : float or None
        Typical scale-out NIC bandwidth per GPU, one direction, bytes/s; ``None`` where no
        reference system gives one.
    compute_capability : str or None
        NVIDIA's compute capability (``"9.0"``), whose per-SM limits are
        :data:`COMPUTE_CAPABILITIES`; ``None`` for other vendors and for GPUs whose SM
        count no primary source gives (:attr:`execution_note` says why).
    sms : int or None
        Streaming multiprocessors, with the compute capability.
    execution_note : str
        Why a GPU of NVIDIA's has no SM count here, or ``""``.
    """

    # a datasheet gives these: never None, and required (field() takes no default)
    memory_bytes: int = field()
    tdp_watts: float = field()
    source: str = field()

    def dense(self, dtype: str = "bf16") -> float:
        """Dense peak FLOP/s for ``dtype``; ``KeyError`` listing those this GPU has."""
        return v.lookup(f"{self.name} dtype", dtype, self.peak_flops)[1]

    def ridge_point(self, dtype: str = "bf16") -> float:
        """FLOP per byte where the roofline bends (:func:`gpulesson.roofline.ridge_point`)."""
        return roofline.ridge_point(self.dense(dtype), self.bandwidth)

    def usable_memory(self, fraction: float | None = None) -> float:
        """Bytes a framework can plan with: ``reported total * fraction``.

        The reported total is :attr:`reported_memory_bytes` (what ``nvidia-smi`` prints),
        or the datasheet :attr:`memory_bytes` where no report was found
        (:attr:`memory_basis` says which). ``fraction`` defaults to
        :data:`USABLE_MEMORY_FRACTION` (0.95); the rest is the reserve for the runtime
        context and the cuBLAS and NCCL work spaces (module docstring). H100 SXM: 81,559
        MiB x 0.95 = 81.24e9 bytes (75.7 GiB), above the "80 GB" label in GB and below it
        in GiB. The training planner holds every plan against it.
        Taught in: ``memory_what_fits``, ``planning_dashboard`` and ``book/hardware.md``.

        Raises
        ------
        ValueError
            when ``fraction`` is not in (0, 1].
        """
        share = USABLE_MEMORY_FRACTION if fraction is None else v.fraction(
            "fraction", fraction, allow_zero=False)
        return self.memory_total * share

    @property
    def memory_total(self) -> int:
        """The reported memory total, or the datasheet capacity when none is known."""
        if self.reported_memory_bytes is not None:
            return self.reported_memory_bytes
        return self.memory_bytes

    @property
    def memory_basis(self) -> str:
        """Which total :meth:`usable_memory` starts from: ``"reported"`` or ``"datasheet"``."""
        return "reported" if self.reported_memory_bytes is not None else "datasheet"

    def link_bandwidth_one_way(self) -> float:
        """GPU-to-GPU bandwidth per GPU in one direction: ``interconnect_bandwidth / 2``
        (NVLink 5: 1.8 TB/s both ways, 900 GB/s each way)."""
        return self.interconnect_bandwidth / 2

    @property
    def is_teaching_baseline(self) -> bool:
        """True for the GPU the lessons' worked examples use (:data:`TEACHING_BASELINE`)."""
        return self.name == TEACHING_BASELINE

    @property
    def is_current_generation(self) -> bool:
        """True for the newest parts of the table (:data:`CURRENT_GENERATION`)."""
        return self.name in CURRENT_GENERATION


def _cite(sources: Mapping[str, Mapping[str, str]], key: str) -> str:
    src = sources[key]
    return f"{src['title']}, {src['publisher']}, {src['date']}"


def _load(text: str | None = None) -> tuple[
        Mapping[str, GPUSpec], dict[str, str], Mapping[str, Mapping[str, str]],
        Mapping[str, object], Mapping[str, Mapping[str, object]]]:
    """The GPU table of ``data/gpus.json`` (or of ``text``, its JSON)."""
    if text is None:
        text = resources.files("gpulesson").joinpath("data/gpus.json").read_text(
            encoding="utf-8")
    data = json.loads(text)
    sources = data["sources"]
    specs: dict[str, GPUSpec] = {}
    aliases: dict[str, str] = {}
    for entry in data["gpus"]:
        figure_sources: dict[str, str] = {}

        def value(key: str, item: Mapping[str, object], record: dict[str, str],
                  gpu: str = str(entry.get("name", "?"))) -> float:
            # a figure without its value or source, or citing a source the file does not
            # list, is named with its GPU (docs/recipes.md, "Add a GPU")
            if ("value" not in item or "source" not in item
                    or str(item["source"]) not in sources):
                raise ValueError(
                    f"gpus.json: {gpu}'s figure {key} needs a 'value' "
                    f"and a 'source' naming an entry of 'sources', got {dict(item)!r:.200}")
            record[key] = _cite(sources, str(item["source"]))
            return item["value"]  # type: ignore[return-value]

        def optional(key: str, item: Mapping[str, object] | None,
                     record: dict[str, str]) -> float | None:
            return None if item is None else value(key, item, record)

        def table(group: str, items: Mapping[str, Mapping[str, object]],
                  record: dict[str, str]) -> Mapping[str, float]:
            return MappingProxyType(
                {k: value(f"{group}.{k}", item, record) for k, item in items.items()}
            )

        name = entry["name"]
        main_source = entry["memory_bytes"]["source"]
        reported = optional("reported_memory_bytes", entry["reported_memory"], figure_sources)
        scaleout = optional("scaleout_bandwidth", entry["scaleout_bandwidth"], figure_sources)
        execution = entry.get("execution", {})
        sms = optional("sms", execution.get("sms"), figure_sources)
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
            reported_memory_bytes=None if reported is None else int(reported),
            nvlink_domain=int(value("nvlink_domain", entry["nvlink_domain"], figure_sources)),
            scaleout_bandwidth=None if scaleout is None else float(scaleout),
            compute_capability=execution.get("compute_capability"),
            sms=None if sms is None else int(sms),
            execution_note=execution.get("not_covered", ""),
        )
        for alias in entry["aliases"]:
            aliases[alias] = name
    meta = {key: data[key] for key in ("teaching_baseline", "current_generation",
                                       "usable_memory")}
    rows = dict(data["compute_capabilities"])
    del rows["about"]
    every = {key: value for key, value in rows.pop("every").items() if key != "sources"}
    capabilities = {
        cc: MappingProxyType({**every, **row, "source": "; ".join(_cite(sources, key)
                                                                  for key in row["sources"])})
        for cc, row in rows.items()}
    return (MappingProxyType(specs), aliases, MappingProxyType(sources), meta,
            MappingProxyType(capabilities))


#: All GPUs of the course by canonical name (read-only).
GPUS: Mapping[str, GPUSpec]
#: The sources of the figures: key -> title, publisher, date, url.
SOURCES: Mapping[str, Mapping[str, str]]
#: NVIDIA's per-SM limits of each compute capability, as ``gpus.json`` states them (KiB
#: fields in KiB, the limits every architecture shares filled in from the row ``every``, a
#: ``source`` citing each row); :mod:`gpulesson.execution` reads them.
COMPUTE_CAPABILITIES: Mapping[str, Mapping[str, object]]
GPUS, _ALIASES, SOURCES, _META, COMPUTE_CAPABILITIES = _load()

#: The GPU the lessons work their examples on (the H100 SXM: Hopper, two generations
#: before the Blackwell Ultra parts of 2026).
TEACHING_BASELINE: str = _META["teaching_baseline"]["gpu"]  # type: ignore[index]
#: The newest parts in the table, as of :data:`CURRENT_GENERATION_AS_OF`.
CURRENT_GENERATION: tuple[str, ...] = tuple(
    _META["current_generation"]["gpus"])  # type: ignore[index]
#: The month :data:`CURRENT_GENERATION` was last revised.
CURRENT_GENERATION_AS_OF: str = _META["current_generation"]["as_of"]  # type: ignore[index]
#: Share of the reported memory a framework plans with: the rest is the runtime's
#: context and work spaces (vLLM's measured non-torch memory, module docstring).
USABLE_MEMORY_FRACTION: float = float(_META["usable_memory"]["fraction"])  # type: ignore[index]
#: The source of :data:`USABLE_MEMORY_FRACTION`, with its date.
USABLE_MEMORY_SOURCE: str = _cite(SOURCES, _META["usable_memory"]["source"])  # type: ignore[index]


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


def _tflops(rate: float) -> str:
    text = f"{rate / 1e12:,.1f}"
    return text[:-2] if text.endswith(".0") else text


def peak_mismatch(spec: GPUSpec, dtype: str, peak_flops: float, *,
                  rtol: float = 0.01) -> str | None:
    """A warning when a typed peak is one of the GPU's non-dense figures, else ``None``.

    The most common spec-sheet mistake is to take a datasheet's headline, which for
    tensor cores is the 2:4 structured-sparsity rate (twice the dense one), or, on GeForce
    cards, the FP16-accumulate rate (twice the FP32-accumulate one training uses). When
    ``peak_flops`` lies within ``rtol`` of such a figure of ``spec`` and not of the dense
    ``dtype`` peak, this returns one sentence naming the figure and the dense peak to use
    instead. H100 SXM, BF16, 1,979 TFLOP/s: "1,979 TFLOP/s is the H100 SXM's 2:4-sparse BF16
    figure, twice the dense rate; the dense BF16 peak is 989.4 TFLOP/s." A figure of another
    precision is named too (3,958 TFLOP/s for BF16 is the sparse FP8 figure). A warning, not an
    error: a learner may mean it (the sparsity lesson does). Taught in:
    ``roofline_and_tensor_cores`` and ``book/seed_corrections.md``.

    Parameters
    ----------
    spec:
        the chosen GPU.
    dtype:
        the precision the peak is meant for (a key of :data:`DTYPES`).
    peak_flops:
        the typed peak, FLOP/s.
    rtol:
        relative tolerance of the match (datasheets round: 1,979 for 1,978.9).

    Raises
    ------
    ValueError
        when ``peak_flops`` is not a positive number or ``rtol`` not in (0, 1].
    KeyError
        when ``dtype`` is not one of :data:`DTYPES`.
    """
    value = v.positive_number("peak_flops", peak_flops)
    tol = v.fraction("rtol", rtol, allow_zero=False)
    kind = v.lookup("dtype", dtype, {d: d for d in DTYPES})[0]

    def near(figure: float) -> bool:
        return abs(value - figure) <= tol * figure

    dense = spec.peak_flops.get(kind)
    if dense is not None and near(dense):
        return None
    found: list[tuple[str, str]] = []  # (precision, description)
    for name, rate in spec.sparse_flops.items():
        if near(rate):
            base = spec.peak_flops.get(name)
            ratio = "" if base is None else (
                ", twice the dense rate" if abs(rate / base - 2) < 0.01
                else f", {rate / base:.2f} times the dense rate")
            found.append((name, f"2:4-sparse {name.upper()} figure{ratio}"))
    for key, rate in spec.other_flops.items():
        if key.endswith("_fp16_accumulate") and near(rate):
            name = key.split("_", 1)[0]
            found.append((name, f"{name.upper()} figure with FP16 accumulation (training "
                                "accumulates in FP32, at half that rate)"))
    if not found:
        return None
    first = kind if any(name == kind for name, _ in found) else found[0][0]
    what = " and its ".join(text for name, text in found if name == first)
    sentence = f"{_tflops(value)} TFLOP/s is the {spec.name}'s {what}; "
    if dense is None:
        return sentence + f"the datasheet gives no dense {kind.upper()} figure."
    return sentence + f"the dense {kind.upper()} peak is {_tflops(dense)} TFLOP/s."


def peak_warning(gpu_name: str, dtype: str, peak_flops: float) -> str | None:
    """:func:`peak_mismatch` for a calculator's GPU choice, ``"custom"`` included.

    With a GPU of :data:`GPUS` chosen, its own figures are checked. With ``"custom"``
    (the reader has edited the preset's figures), every GPU is: no warning when the typed
    peak is some GPU's dense ``dtype`` peak, otherwise the first GPU whose sparse or
    FP16-accumulate figure it matches, and how many others share it. Taught in:
    ``roofline_and_tensor_cores``.
    """
    if gpu_name in GPUS:
        return peak_mismatch(GPUS[gpu_name], dtype, peak_flops)
    value = v.positive_number("peak_flops", peak_flops)
    kind = v.lookup("dtype", dtype, {d: d for d in DTYPES})[0]
    if any(kind in g.peak_flops and abs(value - g.peak_flops[kind]) <= 0.01 * g.peak_flops[kind]
           for g in GPUS.values()):
        return None
    found = [(g, text) for g in GPUS.values()
             if (text := peak_mismatch(g, kind, value)) is not None]
    if not found:
        return None
    first, text = found[0]
    if len(found) > 1:
        others = ", ".join(g.name for g, _ in found[1:])
        text += f" The same figure belongs to the {others}."
    return text


v.guard_module(globals())
