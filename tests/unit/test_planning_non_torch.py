"""Non-torch memory of a vLLM process from the code (gpulesson/planning/non_torch.py): NCCL's
buffers, NVLS, vLLM's custom all-reduce and which versions count the CUDA context."""

from __future__ import annotations

import pytest

from gpulesson.planning import non_torch as nt

MIB = 2**20


def test_one_nccl_connection_holds_9_19_mib() -> None:
    """NCCL's Simple (4 MiB), LL (512 KiB) and LL128 (4,915,200 bytes) buffers of one
    connection: 9.19 MiB, the figure measured per proxy connection in
    github.com/tonyd2wild/DeepSeek-V4.1-Flash-vLLM-DGX-Spark issue #8 ("NCCL proxy
    connections pin ~9.19 MiB of host memory each", 2026-09)."""
    assert round(nt.NCCL_CONNECTION_BYTES / MIB, 2) == 9.19


def test_nccl_buffers_grow_with_peers_channels_and_nvls() -> None:
    """One GPU: none. Two GPUs through PCIe: 2 communicators x 2 channels x 1 peer. Four
    H200 on an NVSwitch with NVLS: 24 channels x 2 peers, and 16 x 2 x 1 MiB x 4 = 128 MiB of
    NVLS buffer rounded up to the 512 MiB multicast granularity, per communicator."""
    conn = nt.NCCL_CONNECTION_BYTES
    assert nt.nccl_buffer_bytes(1, interconnect="nvswitch", nvls=True) == 0.0
    assert nt.nccl_buffer_bytes(2) == 2 * 2 * 1 * conn
    four = nt.nccl_buffer_bytes(4, interconnect="nvswitch", nvls=True)
    assert four == 2 * (24 * 2 * conn + 512 * MIB)
    assert nt.nccl_buffer_bytes(8, interconnect="nvswitch") == 2 * 24 * 2 * conn
    assert nt.nccl_buffer_bytes(4, interconnect="nvswitch") < four


def test_a_pair_of_gpus_holds_no_nvls_buffer() -> None:
    """NCCL's ``ncclNvlsInit`` (src/transport/nvls.cc, NCCL 2.18 to 2.28: ``if
    (!ncclParamNvlsEnable() || gpuCount <= 2) return ncclSuccess;``) sets NVLS up only for three
    GPUs or more, so two H100s on an NVSwitch hold their rings' buffers and no 512 MiB
    multicast buffer: 2 x 24 x 9.19 MiB = 0.43 GiB, as llm-d's two-H100 vLLM 0.11 run shows
    (0.55 GiB of non-torch memory against 0.13 on one H100)."""
    conn = nt.NCCL_CONNECTION_BYTES
    pair = nt.nccl_buffer_bytes(2, interconnect="nvswitch", nvls=True)
    assert pair == nt.nccl_buffer_bytes(2, interconnect="nvswitch") == 2 * 24 * 1 * conn
    assert round(pair / 2**30, 2) == 0.43
    three = nt.nccl_buffer_bytes(3, interconnect="nvswitch", nvls=True)
    assert three - nt.nccl_buffer_bytes(3, interconnect="nvswitch") == 2 * 512 * MIB


def test_non_torch_adds_the_custom_all_reduce_on_an_nvswitch_only() -> None:
    base = 0.2 * 2**30
    assert nt.non_torch_bytes(1, base=base, interconnect="nvswitch") == base
    pcie = nt.non_torch_bytes(2, base=base)
    switch = nt.non_torch_bytes(2, base=base, interconnect="nvswitch")
    assert pcie == base + nt.nccl_buffer_bytes(2)
    assert switch == base + nt.nccl_buffer_bytes(2, interconnect="nvswitch") + 16 * MIB


@pytest.mark.parametrize(("engine", "version", "kind"), [
    ("V0", "0.6.4.post1", "device"), ("V0", "0.5.3", "device"), ("V0", "0.6.5", "increase"),
    ("V0", "0.7.x", "increase"), ("V1", "0.8.5", "device"), ("V1", "0.9.2", "increase"),
    ("V1", "main 2025-07 (0.9.2-0.10.0)", "increase"), ("V1", ">=0.21", "increase"),
])
def test_which_versions_count_the_cuda_context(engine: str, version: str, kind: str) -> None:
    """vLLM PR #10511 (V0 0.6.5) and PR #19312 (V1 0.9.2) moved to counting the increase
    since the start-up snapshot; earlier versions subtract PyTorch's allocations from the
    whole device's use."""
    assert nt.non_torch_accounting(engine, version) == kind


def test_versions_are_read_from_their_first_number() -> None:
    assert nt.parse_version("0.6.4.post1") == (0, 6, 4)
    assert nt.parse_version("0.9.x") == (0, 9, 99)
    assert nt.parse_version(">=0.21") == (0, 21, 0)


@pytest.mark.parametrize(("call", "name"), [
    (lambda: nt.parse_version("main"), "version"),
    (lambda: nt.non_torch_accounting("V2", "0.9.2"), "engine"),
    (lambda: nt.nccl_buffer_bytes(2, interconnect="nvlink5"), "interconnect"),
    (lambda: nt.nccl_buffer_bytes(2, nvls=True), "nvls"),
    (lambda: nt.nccl_buffer_bytes(0), "tp"),
    (lambda: nt.non_torch_bytes(2, base=-1.0), "base"),
])
def test_bad_input_names_the_argument(call, name: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=name):
        call()
