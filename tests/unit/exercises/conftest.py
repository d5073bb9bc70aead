"""Fixtures of the exercise tests."""

from __future__ import annotations

import dataclasses

import pytest

from gpulesson.exercises import settings
from gpulesson.exercises.progress import take_notice


@pytest.fixture
def clean_session(tmp_path, monkeypatch):
    """A fresh working folder (where the progress file goes), no progress variables in
    the environment, no pending notice about a progress file, and the session settings
    restored afterwards."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GPULESSON_PROGRESS", raising=False)
    monkeypatch.delenv("GPULESSON_PROGRESS_FILE", raising=False)
    saved = dataclasses.asdict(settings)
    while take_notice():  # a notice about another test's file is not this test's
        pass
    yield tmp_path
    for name, value in saved.items():
        setattr(settings, name, value)
    while take_notice():
        pass
