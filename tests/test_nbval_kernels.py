"""nbval's kernels on Unix sockets (``tests/nbval_kernels.py``): no TCP port to race for."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import nbval.kernel
import pytest

from tests import nbval_kernels

pytestmark = pytest.mark.skipif(not nbval_kernels.ipc_supported(),
                                reason="no Unix-domain sockets here: nbval keeps TCP ports")


def test_the_session_starts_nbvals_kernels_through_the_plugin() -> None:
    assert nbval.kernel.start_new_kernel is nbval_kernels.start_new_kernel


def test_a_kernel_answers_over_unix_sockets_and_opens_no_tcp_port() -> None:
    manager, client = nbval.kernel.start_new_kernel(
        kernel_name=nbval.kernel.CURRENT_ENV_KERNEL_NAME, cwd=os.getcwd())
    try:
        prefix = manager.ip
        ports = [manager.shell_port, manager.iopub_port, manager.stdin_port, manager.hb_port,
                 manager.control_port]
        sockets = [Path(f"{prefix}-{port}") for port in ports]
        assert manager.transport == "ipc" and len(set(sockets)) == 5
        assert all(stat.S_ISSOCK(path.stat().st_mode) for path in sockets), sockets
        client.execute("print(6 * 7)")
        reply = client.get_shell_msg(timeout=30)
        assert reply["content"]["status"] == "ok"
        # a second kernel of the same process gets sockets of its own
        assert nbval_kernels.socket_prefix() != prefix
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    assert not any(path.exists() for path in sockets), "the kernel's sockets were left behind"
