"""Fixtures of the registry tests."""

from __future__ import annotations

import pytest

from .toy import registered


@pytest.fixture()
def toy():
    """The toy calculator of ``toy.py``, registered for one test; its name."""
    with registered() as name:
        yield name
