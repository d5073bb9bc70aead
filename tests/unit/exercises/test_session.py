"""gpulesson.exercises.session: the session settings and configure()."""

from __future__ import annotations

import pytest

from gpulesson.exercises import configure, settings
from gpulesson.exercises.session import SOLUTION_MODES, Settings

pytestmark = pytest.mark.usefixtures("clean_session")


def test_defaults():
    assert Settings() == Settings(solutions="on-request", variant=None, progress=True,
                                  progress_path=None)
    assert SOLUTION_MODES == ("on-request", "after-correct", "never")


def test_configure_changes_only_what_it_is_given():
    assert configure(solutions="after-correct", variant=4) is settings
    assert (settings.solutions, settings.variant) == ("after-correct", 4)
    configure(progress=False, progress_path="elsewhere.json")
    assert (settings.solutions, settings.variant) == ("after-correct", 4)
    assert (settings.progress, settings.progress_path) == (False, "elsewhere.json")
    configure(variant=None, progress_path=None)
    assert settings.variant is None and settings.progress_path is None
    assert settings.solutions == "after-correct" and settings.progress is False


@pytest.mark.parametrize("kwargs, words", [({"solutions": "sometimes"}, "solutions must be"),
                                           ({"variant": -3}, "variant must be"),
                                           ({"variant": True}, "variant must be"),
                                           ({"variant": 2.0}, "variant must be")])
def test_configure_refuses_bad_values_and_keeps_the_settings(kwargs, words):
    before = Settings(**vars(settings))
    with pytest.raises(ValueError, match=words):
        configure(**kwargs)
    assert settings == before
