"""gpulesson.exercises.progress: the learner's local progress file, which never gets in
the way."""

from __future__ import annotations

import json

import pytest

from gpulesson.exercises import configure, lesson_module, progress_summary
from gpulesson.exercises.progress import PROGRESS_FILE, load_progress, progress_path, record

pytestmark = pytest.mark.usefixtures("clean_session")

SLUG = "parallelism_at_the_core"
N = len(lesson_module(SLUG).EXERCISES)


def test_summary_without_a_file():
    assert progress_summary(SLUG) == (f"Parallelism at the Core: 0 of {N} exercises done; "
                                      "next: exercise 1.")


def test_attempts_and_done_are_kept_next_to_the_notebook(clean_session):
    assert record(f"{SLUG}-ex2", "incorrect") is True
    assert record(f"{SLUG}-ex2", "correct", variant=4) is True
    assert record(f"{SLUG}-ex1", "compared") is True
    record(f"{SLUG}-ex2", "mistake")
    data = json.loads((clean_session / PROGRESS_FILE).read_text())
    entry = data["exercises"][f"{SLUG}-ex2"]
    assert entry["attempts"] == 3 and entry["done"] is True and entry["variant"] == 4
    assert entry["done_at"] <= entry["last"]
    assert data["exercises"][f"{SLUG}-ex1"]["done"] is True   # a prediction compared
    assert progress_summary(SLUG) == (f"Parallelism at the Core: 2 of {N} exercises done "
                                      "(1, 2); next: exercise 3.")


def test_all_done():
    for n in range(1, N + 1):
        record(f"{SLUG}-ex{n}", "correct")
    assert progress_summary(SLUG).endswith("; all done.")


def test_where_the_file_goes(clean_session, monkeypatch):
    assert progress_path() == clean_session / PROGRESS_FILE
    monkeypatch.setenv("GPULESSON_PROGRESS_FILE", str(clean_session / "env.json"))
    assert progress_path() == clean_session / "env.json"
    configure(progress_path=str(clean_session / "set.json"))
    assert progress_path() == clean_session / "set.json"
    assert progress_path(clean_session / "given.json") == clean_session / "given.json"


def test_unwritable_location_is_tolerated(clean_session):
    target = clean_session / "missing-dir" / "sub" / PROGRESS_FILE
    assert record(f"{SLUG}-ex2", "correct", path=target) is False
    assert "0 of" in progress_summary(SLUG, target)


def test_a_file_in_the_way_is_tolerated(clean_session):
    """Even root cannot create a file below a regular file: the write fails quietly."""
    blocker = clean_session / "not-a-folder"
    blocker.write_text("x")
    assert record(f"{SLUG}-ex2", "correct", path=blocker / PROGRESS_FILE) is False
    assert load_progress(blocker / PROGRESS_FILE)["exercises"] == {}


@pytest.mark.parametrize("content", ["{not json", "[]", '{"exercises": 3}', "\x00\xff"])
def test_corrupt_file_is_ignored_and_replaced(clean_session, content):
    (clean_session / PROGRESS_FILE).write_text(content, encoding="latin-1")
    assert load_progress() == {"version": 1, "exercises": {}}
    assert record(f"{SLUG}-ex2", "correct") is True
    assert load_progress()["exercises"][f"{SLUG}-ex2"]["done"]


@pytest.mark.parametrize("value", ["0", "off", "no", "false", "OFF"])
def test_progress_can_be_switched_off_by_the_environment(clean_session, monkeypatch, value):
    monkeypatch.setenv("GPULESSON_PROGRESS", value)
    assert record(f"{SLUG}-ex2", "correct") is False
    assert not (clean_session / PROGRESS_FILE).exists()


def test_progress_can_be_switched_off_by_configure(clean_session):
    configure(progress=False)
    assert record(f"{SLUG}-ex2", "correct") is False
    assert not (clean_session / PROGRESS_FILE).exists()


def test_unknown_lesson_names_the_known_ones():
    with pytest.raises(KeyError, match=SLUG):
        progress_summary("no_such_lesson")
