"""The memory a vLLM process holds outside PyTorch's allocator, term by term.

vLLM subtracts it from the KV-cache budget (:func:`~gpulesson.planning.serving.kv_budget`'s
``non_torch_memory``). What it counts depends on the version (:func:`non_torch_accounting`):

- ``"device"``: vLLM V0 up to 0.6.4 and V1 up to 0.9.1 measure everything the device has in
  use after the profiling run less what PyTorch has allocated (``worker.py``
  ``determine_num_available_blocks``; V1 ``gpu_worker.py`` ``determine_available_memory``),
  so the process's own CUDA context is in it;
- ``"increase"``: V0 from 0.6.5 (``vllm/utils.py`` ``memory_profiling``, vLLM PR #10511) and
  V1 from 0.9.2 (PR #19312) count only what grew outside PyTorch since the worker's start-up
  snapshot, taken after the CUDA context exists.

With tensor parallelism every GPU also holds the buffers of its NCCL communicators
(:func:`nccl_buffer_bytes`): vLLM opens two per tensor-parallel group (its PyNccl
communicator for all-reduces, torch.distributed's device group for gathers and
broadcasts), each with, per channel and per peer it receives from, one buffer per NCCL
protocol (:data:`NCCL_CONNECTION_BYTES`), and on an NVSwitch with NVLink SHARP (NVLS) a
multicast buffer rounded up to the granularity CUDA recommends (NCCL turns NVLS off for a
group of two GPUs or fewer); and vLLM's custom
all-reduce keeps two IPC buffers of 8 MiB (:data:`CUSTOM_ALL_REDUCE_BYTES`). What remains
(kernels loaded on first use, library handles, the CUDA context where it is counted),
``base``, is fitted on the logs that print it and evaluated leave-one-out
(:func:`gpulesson.planning.log_checks.non_torch_remainder`): a share per streaming
multiprocessor where only the increase is counted, one constant where the device's whole
use is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

from gpulesson import _validate as v

from ._adapt import GPUView, gpu_view

__all__ = ["CUSTOM_ALL_REDUCE_BYTES", "MULTICAST_GRANULARITY", "NCCL_CHANNELS",
           "NCCL_CONNECTION_BYTES", "NON_TORCH_BYTES", "NON_TORCH_PER_SM", "NVLS_BUFFER_BYTES",
           "NVLS_CHANNELS", "NVLS_MIN_GPUS", "VLLM_NCCL_COMMUNICATORS", "gpu_links",
           "nccl_buffer_bytes", "non_torch_accounting", "non_torch_bytes", "parse_version",
           "vllm_non_torch_bytes"]

MIB = 2**20
#: Bytes NCCL keeps for one connection (one peer on one channel), its three protocols'
#: buffers at their defaults (NCCL ``src/init.cc``): ``DEFAULT_BUFFSIZE`` 4 MiB (Simple),
#: ``DEFAULT_LL_BUFFSIZE`` = 8 lines x 512 threads x 8 steps x 16 bytes = 512 KiB (LL) and
#: ``DEFAULT_LL128_BUFFSIZE`` = 120 elements x 640 threads x 8 steps x 8 bytes = 4,915,200
#: bytes (LL128): 9.19 MiB.
NCCL_CONNECTION_BYTES = 4 * MIB + 8 * 512 * 8 * 16 + 120 * 640 * 8 * 8
#: NCCL's collective channels by interconnect, as its ``NCCL INFO <n> coll channels`` line
#: prints them: 2 through PCIe ("2 coll channels, 2 collnet channels, 0 nvls channels",
#: NCCL 2.2x logs of PCIe machines), 24 on an NVSwitch node of H100s ("24 coll channels, 24
#: collnet channels, 16 nvls channels").
NCCL_CHANNELS: Mapping[str, int] = MappingProxyType({"pcie": 2, "nvswitch": 24})
#: NVLS channels on an NVSwitch with NVLink SHARP (the same NCCL lines: 16).
NVLS_CHANNELS = 16
#: The fewest GPUs for which NCCL sets NVLS up: ``ncclNvlsInit`` (NCCL ``src/transport/
#: nvls.cc``, every release from 2.18 to 2.28) returns without NVLS when ``gpuCount <= 2``,
#: so a pair of H100s on an NVSwitch holds no multicast buffer.
NVLS_MIN_GPUS = 3
#: Bytes of one NVLS step buffer: ``nvlsChunkSize`` 128 KiB x ``NCCL_STEPS`` 8 (NCCL
#: ``src/transport/nvls.cc``, ``ncclNvlsBufferSetup``; its INFO line prints ``buffSize
#: 1048576``).
NVLS_BUFFER_BYTES = 128 * 1024 * 8
#: The multicast granularity CUDA recommends on an H100 (``cuMulticastGetGranularity`` with
#: ``CU_MULTICAST_GRANULARITY_RECOMMENDED``): NCCL rounds its NVLS buffer up to it.
MULTICAST_GRANULARITY = 512 * MIB
#: NCCL communicators a vLLM tensor-parallel group opens on every GPU: PyNccl's
#: (``pynccl.py``, warmed up with an all-reduce at start-up) and torch.distributed's device
#: group (``parallel_state.py``: gathers of the logits, broadcasts).
VLLM_NCCL_COMMUNICATORS = 2
#: vLLM's custom all-reduce (``custom_all_reduce.py``, ``max_size = 8192 * 1024``): a
#: metadata-and-signal buffer and a data buffer of ``max_size`` each, allocated with
#: ``cudaMalloc`` for IPC, outside PyTorch.
CUSTOM_ALL_REDUCE_BYTES = 2 * 8192 * 1024
#: Non-torch memory of one vLLM process, as its logs print it for one GPU: 0.35 GiB
#: (Llama 3.1 8B on an RTX 3090, vLLM issue #10517, which counts the CUDA context).
NON_TORCH_BYTES = 0.35 * 2**30
#: What else grows outside PyTorch during a vLLM start-up (kernels loaded on first use,
#: library handles, stacks) per streaming multiprocessor, where vLLM counts only the
#: increase since start-up (:func:`non_torch_accounting`: V0 from 0.6.5, V1 from 0.9.2):
#: 0.14 GiB on an H100's 132 SMs, the median share of the registry's logs that print it
#: (tests/data/logs/vllm-logs.json: 0.03 GiB on an RTX 4060's 24 SMs, 0.04 on an RTX
#: 2060's 34, 0.10 to 0.16 on most 132-SM H100s and H200s, where the two logs of vLLM
#: 0.6.5 itself leave 1.79 and 3.13 GiB beside their NCCL buffers), as
#: :func:`gpulesson.planning.log_checks.fit_non_torch_per_sm` fits it on every log; the
#: share per SM was chosen over one constant by the logs themselves, leave-one-out
#: (:func:`gpulesson.planning.log_checks.non_torch_remainder`).
NON_TORCH_PER_SM = 0.14 * 2**30 / 132
#: Versions from which vLLM counts only the increase since start-up: V0 0.6.5 (PR #10511),
#: V1 0.9.2 (PR #19312).
_INCREASE_FROM = MappingProxyType({"V0": (0, 6, 5), "V1": (0, 9, 2)})


def parse_version(version: str) -> tuple[int, int, int]:
    """The first ``major.minor[.patch]`` in ``version`` as a tuple: ``"0.6.4.post1"`` ->
    ``(0, 6, 4)``; an unknown patch (``"0.9.x"``) reads as the last of its minor version
    (``(0, 9, 99)``); ``">=0.21"`` -> ``(0, 21, 0)``. ``ValueError`` without one."""
    if not isinstance(version, str):
        raise TypeError(f"version must be a str, got {type(version).__name__}")
    hit = re.search(r"(\d{1,4})\.(\d{1,4})(?:\.(\d{1,4}|x))?", version[:200])
    if hit is None:
        raise ValueError(f"version: no 'major.minor' version in {version[:80]!r}")
    patch = hit.group(3)
    return (int(hit.group(1)), int(hit.group(2)),
            99 if patch == "x" else int(patch or 0))


def non_torch_accounting(engine: str, version: str) -> str:
    """``"device"`` when the version's non-torch figure includes the process's CUDA context,
    ``"increase"`` when it counts only what grew since start-up (module docstring)."""
    eng = v.choice("engine", engine, ("V0", "V1"))
    return "increase" if parse_version(version) >= _INCREASE_FROM[eng] else "device"


def nccl_buffer_bytes(tp: int, *, interconnect: str = "pcie", nvls: bool = False,
                      communicators: int = VLLM_NCCL_COMMUNICATORS) -> float:
    """Bytes of NCCL buffers one GPU of a ``tp``-GPU group holds: per communicator,
    ``channels x peers x`` :data:`NCCL_CONNECTION_BYTES` (a ring receives from one peer, a
    chain of three or more GPUs adds the tree's second), plus with ``nvls`` (an NVSwitch with
    NVLink SHARP) and at least :data:`NVLS_MIN_GPUS` GPUs ``NVLS_CHANNELS x 2 x
    NVLS_BUFFER_BYTES x tp`` rounded up to :data:`MULTICAST_GRANULARITY`. None for one
    GPU."""
    t = v.positive_int("tp", tp)
    link = v.choice("interconnect", interconnect, tuple(NCCL_CHANNELS))
    n = v.positive_int("communicators", communicators)
    if t == 1:
        return 0.0
    peers = min(t - 1, 2)
    per = NCCL_CHANNELS[link] * peers * NCCL_CONNECTION_BYTES
    if nvls and link != "nvswitch":
        raise ValueError(f"nvls: NVLink SHARP needs an NVSwitch, got interconnect {link!r}")
    if nvls and t >= NVLS_MIN_GPUS:
        need = NVLS_CHANNELS * 2 * NVLS_BUFFER_BYTES * t
        per += -(-need // MULTICAST_GRANULARITY) * MULTICAST_GRANULARITY
    return float(n * per)


def non_torch_bytes(tp: int = 1, *, base: float, interconnect: str = "pcie",
                    nvls: bool = False) -> float:
    """Non-torch memory of one GPU: ``base`` (the fitted remainder of its accounting), plus
    for ``tp`` > 1 the NCCL buffers (:func:`nccl_buffer_bytes`) and, on an NVSwitch, vLLM's
    custom all-reduce (:data:`CUSTOM_ALL_REDUCE_BYTES`)."""
    rest = v.nonneg_number("base", base)
    t = v.positive_int("tp", tp)
    extra = nccl_buffer_bytes(t, interconnect=interconnect, nvls=nvls)
    if t > 1 and interconnect == "nvswitch":
        extra += CUSTOM_ALL_REDUCE_BYTES
    return float(rest + extra)


def gpu_links(gpu: GPUView, tp: int = 1) -> tuple[str, bool]:
    """How the ``tp`` GPUs of one tensor-parallel group talk, as NCCL sees them:
    ``"nvswitch"`` when the group fits inside an NVLink domain of more than one GPU, else
    ``"pcie"`` (a group larger than the domain talks over PCIe or the network, with NCCL's
    PCIe channel count); and whether NCCL sets up NVLink SHARP (NVLS) there (an NVSwitch
    whose switches reduce)."""
    t = v.positive_int("tp", tp)
    switch = 1 < gpu.domain and t <= gpu.domain
    return ("nvswitch" if switch else "pcie"), bool(gpu.sharp and switch)


def vllm_non_torch_bytes(gpu: object, tp: int = 1) -> float:
    """The non-torch memory a current vLLM counts on each GPU of a ``tp``-GPU replica of
    ``gpu`` (a name or a :class:`~gpulesson.planning._adapt.GPUView`), by
    :func:`non_torch_bytes`: the remainder per SM (:data:`NON_TORCH_PER_SM`) times the
    GPU's SMs, plus the group's NCCL buffers and custom all-reduce (:func:`gpu_links`):
    0.14 GiB on one H100, 0.59 GiB on each of two, 2.02 GiB on each of four or eight
    (NVLS). An NVIDIA GPU without an SM count on record (B300, GB200, RTX 5090 ...) takes
    the one-GPU figure of a vLLM log, :data:`NON_TORCH_BYTES` (0.35 GiB), as its remainder,
    with the same buffers; another vendor's GPU (RCCL's buffers are not modelled) takes
    :data:`NON_TORCH_BYTES` whatever ``tp``. Only the tensor-parallel group's buffers are
    counted: the data- and expert-parallel groups of a mixture-of-experts deployment open
    communicators of their own, left out here."""
    gv = gpu if isinstance(gpu, GPUView) else gpu_view(gpu)
    t = v.positive_int("tp", tp)
    if gv.spec.vendor != "NVIDIA":
        return NON_TORCH_BYTES
    sms = gv.spec.sms
    base = NON_TORCH_BYTES if sms is None else NON_TORCH_PER_SM * sms
    link, nvls = gpu_links(gv, t)
    return non_torch_bytes(t, base=base, interconnect=link, nvls=nvls)


v.guard_module(globals())
