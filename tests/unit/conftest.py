"""Hypothesis settings for the unit tests: the same examples on every run, and no clock.

Hypothesis' defaults draw new examples on every run and fail an example that takes more
than 200 ms (``deadline``), or whose data take too long to draw (``HealthCheck.too_slow``).
On CI (two shared cores, two pytest workers, the book build and Chromium beside them) a
worker descheduled for a quarter of a second failed a correct test, and a rare example met
by chance failed one run and not the next. The ``course`` profile, loaded unless
``--hypothesis-profile`` names another, draws the same examples every run (derandomized
from each test's source) without timing them. ``--hypothesis-profile=explore`` draws fresh
examples, as Hypothesis does by default, to look for new ones by hand; ``make fuzz`` runs
the unit tests with the ``deep`` profile, ten times as many examples and fresh ones.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("course", deadline=None, derandomize=True, database=None,
                          print_blob=True, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("explore", deadline=None, print_blob=True)
_DEPTH_TEXT = os.environ.get("GL_FUZZ_DEPTH") or "1"
_DEPTH_OK = _DEPTH_TEXT.isdigit() and int(_DEPTH_TEXT) >= 1
#: ``make fuzz`` (GL_FUZZ_DEPTH=N): every property test's examples times N; 1 unless set.
FUZZ_DEPTH = int(_DEPTH_TEXT) if _DEPTH_OK else 1
#: ``make fuzz``: fresh examples, FUZZ_DEPTH times Hypothesis' 100 per test (test_fuzz.py
#: scales its own counts by the same depth).
settings.register_profile("deep", deadline=None, print_blob=True, database=None,
                          max_examples=100 * FUZZ_DEPTH,
                          suppress_health_check=[HealthCheck.too_slow])


def pytest_configure(config: pytest.Config) -> None:
    if not _DEPTH_OK:
        raise pytest.UsageError(f"GL_FUZZ_DEPTH must be a whole number of at least 1, got "
                                f"{_DEPTH_TEXT!r}")
    if not config.getoption("hypothesis_profile", default=None):
        settings.load_profile("course")
