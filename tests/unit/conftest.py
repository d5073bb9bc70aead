"""Hypothesis settings for the unit tests: the same examples on every run, and no clock.

Hypothesis' defaults draw new examples on every run and fail an example that takes more
than 200 ms (``deadline``), or whose data take too long to draw (``HealthCheck.too_slow``).
On CI (two shared cores, two pytest workers, the book build and Chromium beside them) a
worker descheduled for a quarter of a second failed a correct test, and a rare example met
by chance failed one run and not the next. The ``course`` profile, loaded unless
``--hypothesis-profile`` names another, draws the same examples every run (derandomized
from each test's source) without timing them. ``--hypothesis-profile=explore`` draws fresh
examples, as Hypothesis does by default, to look for new ones by hand.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("course", deadline=None, derandomize=True, database=None,
                          print_blob=True, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("explore", deadline=None, print_blob=True)


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("hypothesis_profile", default=None):
        settings.load_profile("course")
