"""The plugins of the whole test session, loaded from the repository root.

``tests.site.nbval_reference`` gives nbval's ``nbval-check-output`` cells the book build's
run of the same cell as reference (the notebooks are committed without outputs);
``tests.scheduling`` orders the session (the book build first) and groups it for the two
workers of ``make test``; ``tests.nbval_kernels`` starts nbval's kernels on Unix sockets,
so that two kernels started at once never race for a TCP port. They are loaded here
because the notebooks are outside ``tests/``, and only a root conftest's plugins reach
them.

Also here: pytest keeps the test modules it has rewritten (its assertion messages) in
``__pycache__`` even where the environment sets ``PYTHONDONTWRITEBYTECODE``. pytest writes
that cache only while ``sys.dont_write_bytecode`` is false, so under that variable every
process of every run (each xdist worker, each pytest a test starts) rewrote all 250 test
modules again: 7 of the 14 CPU-seconds of a worker's collection here. The flag is lifted
for the collection alone (when the test modules are imported) and restored before any test
runs; a rewritten module is reused only while its source is unchanged (pytest checks).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

pytest_plugins = ("tests.site.nbval_reference", "tests.scheduling", "tests.nbval_kernels")


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Iterator[None]:
    saved = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = saved
