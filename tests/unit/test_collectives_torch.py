"""gpulesson.collectives.torch_dist: the all-reduce measurement on torch.distributed (gloo).

PyTorch is not a dependency of the course, so these tests run only where it is
importable; elsewhere they are skipped, saying so. To run them, install the CPU build
into a separate environment with the course's test dependencies::

    python3 -m venv /tmp/torchvenv
    /tmp/torchvenv/bin/pip install torch numpy pytest
    PYTHONPATH=$PWD /tmp/torchvenv/bin/python -m pytest --noconftest \
        tests/unit/test_collectives_torch.py

``--noconftest`` skips the repository's conftests, which need the book's packages.

Expected sums are computed from the documented inputs (rank r contributes
(r + 1) + (i mod 8) / 8 at element i), as in ``tests/unit/test_collectives.py``.
"""

from __future__ import annotations

import subprocess

import pytest

from gpulesson import collectives as C

pytestmark = pytest.mark.skipif(
    not C.torch_available(),
    reason="PyTorch is not installed here (the course does not depend on it); see this "
           "module's docstring to run these tests in an environment with torch")

KiB = 2**10


def test_gloo_allreduce_returns_the_sum_with_nccl_tests_bandwidths():
    ms = C.run_torch_allreduce(2, [4 * KiB, 256 * KiB], iterations=4, warmup=1, repeats=2)
    assert [m.size_bytes for m in ms] == [4 * KiB, 256 * KiB]
    for m in ms:
        assert m.backend == "gloo" and m.in_place and m.n_ranks == 2 and m.wrong == 0
        assert list(m.result_head) == [3 + 2 * (i % 8) / 8 for i in range(16)]
        assert m.time_seconds > 0 and m.repeats == 2
        assert m.bus_bandwidth == pytest.approx(m.algorithm_bandwidth, rel=1e-12)  # n = 2
        assert m.library.startswith("PyTorch ") and "gloo" in m.library


def test_the_one_command_prints_nccl_tests_rows():
    """``torchrun --standalone --nproc-per-node=2 -m gpulesson.collectives.torch_dist
    --backend gloo``: the in-place column measured, the out-of-place one N/A."""
    command = C.torch_command(2, [4 * KiB, 64 * KiB], iterations=2, warmup=1, repeats=1)
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = C.parse_nccl_tests(proc.stdout)
    assert [r.size_bytes for r in rows] == [4 * KiB, 64 * KiB]
    assert all(r.out_of_place_us is None and r.in_place_wrong == 0 and r.in_place_us > 0
               for r in rows)
