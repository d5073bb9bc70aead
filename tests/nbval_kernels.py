"""nbval's kernels talk over Unix sockets, not TCP ports, so that no two kernels race for one.

A Jupyter kernel's client picks its five TCP ports by asking the system for free ones and
closing them again; the kernel binds them a moment later. Two kernels started at the same
moment on one machine (``make test``'s two workers each start a notebook's kernel, and the
book build starts its own) can be handed the same port in between: the loser stops with
``ZMQError: Address already in use`` and nbval reports "Kernel died before replying to
kernel_info" for every cell of its notebook (seen once in four full runs here on
2026-12-07; nbmake#129 and nbconvert#1066 report the same race under pytest-xdist).

Here each kernel nbval starts gets ``transport="ipc"``: its five sockets are files in a
folder of this test process's own, named after the kernel, so nothing is left to chance
and nothing else on the machine can take them. Where Unix sockets are missing (Windows),
nbval keeps its TCP ports. The book build's kernels keep theirs: with nbval's off TCP,
none of its kernels can collide with them.

The root ``conftest.py`` loads this plugin (``pytest_plugins``), as it does the others
that must reach the notebooks.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from typing import Any

import pytest

#: Folder of this process's kernel sockets (made when the first kernel starts).
_FOLDER: list[str] = []
_COUNT = itertools.count(1)


def ipc_supported() -> bool:
    """Whether this system has Unix-domain sockets for ZeroMQ's ``ipc://`` transport."""
    return os.name == "posix"


def socket_prefix() -> str:
    """A path prefix for one kernel's sockets (``<prefix>-<n>`` each): a new name in this
    process's own temporary folder, short enough for a socket's path (about 100 bytes)."""
    if not _FOLDER:
        _FOLDER.append(tempfile.mkdtemp(prefix="gl-kernels-"))
    return os.path.join(_FOLDER[0], f"k{next(_COUNT)}")


def start_new_kernel(startup_timeout: float = 60, kernel_name: str = "python",
                     **kwargs: Any) -> tuple[Any, Any]:
    """What nbval's own ``start_new_kernel`` does (a manager that knows nbval's kernel for
    the current environment, a started kernel, a client that waits for it to answer), over
    ``ipc`` with a socket prefix of its own (:func:`socket_prefix`). Returns the manager
    and the client."""
    from jupyter_client.manager import KernelManager
    from nbval.kernel import NbvalKernelspecManager

    manager = KernelManager(kernel_name=kernel_name, transport="ipc", ip=socket_prefix(),
                            kernel_spec_manager=NbvalKernelspecManager())
    manager.start_kernel(**kwargs)
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=startup_timeout)
    except RuntimeError:
        client.stop_channels()
        manager.shutdown_kernel()
        raise
    return manager, client


def pytest_configure(config: pytest.Config) -> None:
    try:
        import nbval.kernel
    except ImportError:  # nbval is not installed: no notebook runs
        return
    if ipc_supported():
        nbval.kernel.start_new_kernel = start_new_kernel


def pytest_unconfigure(config: pytest.Config) -> None:
    if _FOLDER:
        shutil.rmtree(_FOLDER.pop(), ignore_errors=True)
