"""gpulesson.exercises.progress: the learner's local progress file, which never gets in
the way."""

from __future__ import annotations

import json

import pytest

from gpulesson.exercises import configure, lesson_module, progress, progress_summary
from gpulesson.exercises.progress import (
    PROGRESS_FILE,
    load_progress,
    progress_path,
    record,
    take_notice,
)

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


def test_a_variant_is_credited_only_with_an_answer_to_its_own_numbers():
    # Tried on class variant 3, then solved on the lesson's own numbers (whose worked
    # solutions are on the site): the entry said done with "variant": 3, so the progress
    # file and solved_before() credited variant 3 (audit of 2026-12-06).
    data = progress.record_answer({}, f"{SLUG}-ex2", "incorrect", variant=3)
    data = progress.record_answer(data, f"{SLUG}-ex2", "correct", variant=None)
    entry = data["exercises"][f"{SLUG}-ex2"]
    assert entry["done"] is True and "variant" not in entry
    data = progress.record_answer(data, f"{SLUG}-ex2", "correct", variant=3)
    assert data["exercises"][f"{SLUG}-ex2"]["variant"] == 3


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


TRUNCATED = '{"version": 1, "exercises": {"parallelism_at_the_core-ex1": {"attempts": 2'
UNREADABLE = {"truncated": TRUNCATED, "empty": "", "not json": "{not json", "list": "[]",
              "exercises not an object": '{"exercises": 3}', "not utf-8": "\x00\xff",
              "nested too deep": "[" * 100_000 + "]" * 100_000}


@pytest.mark.parametrize("content", UNREADABLE.values(), ids=UNREADABLE.keys())
def test_an_unreadable_file_is_moved_aside_and_the_learner_told_once(clean_session, content):
    """A truncated, empty, non-UTF-8 or list-shaped file used to load as empty, and the next
    answer rewrote it with one entry: everything else was lost without a word."""
    original = content.encode("latin-1")
    (clean_session / PROGRESS_FILE).write_bytes(original)
    assert load_progress() == {"version": 1, "exercises": {}}  # reading moves nothing
    assert "could not be read" in progress_summary(SLUG)
    assert take_notice() is None
    assert record(f"{SLUG}-ex2", "correct") is True
    kept = list(clean_session.glob(f"{PROGRESS_FILE}.corrupt-*"))
    assert len(kept) == 1 and kept[0].read_bytes() == original
    notice = take_notice()
    assert notice is not None and kept[0].name in notice and "could not be read" in notice
    assert take_notice() is None  # told once
    assert load_progress()["exercises"][f"{SLUG}-ex2"]["done"]
    assert record(f"{SLUG}-ex3", "correct") is True and take_notice() is None


def test_a_second_unreadable_file_is_kept_beside_the_first(clean_session):
    for _ in range(2):
        (clean_session / PROGRESS_FILE).write_text("{oops")
        record(f"{SLUG}-ex1", "incorrect")
    assert len(list(clean_session.glob(f"{PROGRESS_FILE}.corrupt-*"))) == 2


def test_unknown_keys_and_a_newer_version_are_kept(clean_session):
    """Unknown keys used to be dropped and ``version: 2`` written back as 1."""
    target = clean_session / PROGRESS_FILE
    target.write_text(json.dumps({
        "version": 2, "learner": "ada", "settings": {"theme": "dark"},
        "exercises": {f"{SLUG}-ex1": {"attempts": 4, "done": True, "streak": 3},
                      "other_course-ex9": ["kept", "as", "it", "is"]}}))
    assert record(f"{SLUG}-ex1", "incorrect") is True
    data = json.loads(target.read_text())
    assert data["version"] == 2 and data["learner"] == "ada"
    assert data["settings"] == {"theme": "dark"}
    assert data["exercises"]["other_course-ex9"] == ["kept", "as", "it", "is"]
    entry = data["exercises"][f"{SLUG}-ex1"]
    assert entry["streak"] == 3 and entry["attempts"] == 5 and entry["done"] is True
    assert load_progress()["learner"] == "ada"


@pytest.mark.parametrize("attempts", ["1e999", '"many"', "-3", "true", "null", "[1]"])
def test_a_count_that_is_not_a_count_restarts_it(clean_session, attempts):
    """``"attempts": 1e999`` (read as inf) crashed the checker with OverflowError."""
    target = clean_session / PROGRESS_FILE
    entry_text = f'{{"attempts": {attempts}, "done": true}}'
    target.write_text(f'{{"version": 1, "exercises": {{"{SLUG}-ex1": {entry_text}}}}}')
    assert record(f"{SLUG}-ex1", "incorrect") is True
    entry = json.loads(target.read_text())["exercises"][f"{SLUG}-ex1"]
    assert entry["attempts"] == 1 and entry["done"] is True


def test_the_file_keeps_its_permissions(clean_session):
    """The atomic replace used to leave the file with mkstemp's 0600."""
    import os
    import stat

    target = clean_session / PROGRESS_FILE
    record(f"{SLUG}-ex1", "incorrect")
    os.chmod(target, 0o640)
    record(f"{SLUG}-ex1", "correct")
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640


WRITER = """
import sys
from gpulesson.exercises.progress import record
for _ in range(int(sys.argv[2])):
    assert record(sys.argv[1], "incorrect", path=sys.argv[3])
"""


def test_two_processes_recording_at_once_keep_every_update(clean_session):
    """Two writers of 300 records each kept 260 and 71 of them before the lock; all the
    exercise notebooks of a folder share one file."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    target = clean_session / PROGRESS_FILE
    root = str(Path(__file__).resolve().parents[3])
    env = {**os.environ, "PYTHONPATH": root}
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, f"{SLUG}-ex{n}", "300",
                                 str(target)], env=env) for n in (1, 2)]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    exercises = json.loads(target.read_text())["exercises"]
    assert exercises[f"{SLUG}-ex1"]["attempts"] == 300
    assert exercises[f"{SLUG}-ex2"]["attempts"] == 300


def test_without_a_lock_on_the_platform_records_still_work(clean_session, monkeypatch):
    from gpulesson.exercises import progress

    monkeypatch.setattr(progress, "fcntl", None)
    monkeypatch.setattr(progress, "msvcrt", None)
    assert record(f"{SLUG}-ex1", "correct") is True
    assert load_progress()["exercises"][f"{SLUG}-ex1"]["done"]


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


# --------------------------------------------------------------------------- records as data
DEEP = "[" * 5_000 + "]" * 5_000
LONG = "9" * 5_000


def _text(**entries: str) -> str:
    """A record's text with each entry's JSON text as given."""
    body = ", ".join(f'"{SLUG}-ex{k[2:]}": {v}' for k, v in entries.items())
    return f'{{"version": 1, "learner": "ada", "exercises": {{{body}}}}}'


GOOD = '{"attempts": 2, "done": true}'


@pytest.mark.parametrize("bad", [DEEP, f'{{"attempts": {LONG}}}', f'{{"x": {DEEP}}}',
                                 f'{{"attempts": 1, "notes": [{LONG}]}}'],
                         ids=["5,000 levels", "5,000 digits", "deep inside", "long inside"])
def test_one_unreadable_entry_is_set_aside_alone(bad: str) -> None:
    """A 5,000-level entry broke every check, a 5,000-digit count discarded every readable
    entry (issue 35, items 3 and 4): now only that entry is set aside, as its text."""
    parsed = progress.parse_progress(_text(ex1=GOOD, ex2=bad, ex3=GOOD))
    assert parsed.problem is None
    assert set(parsed.record["exercises"]) == {f"{SLUG}-ex1", f"{SLUG}-ex3"}
    assert parsed.record["learner"] == "ada"
    assert parsed.set_aside == {f"exercises/{SLUG}-ex2": bad}


def test_another_deep_key_is_set_aside_and_the_entries_kept() -> None:
    text = _text(ex1=GOOD)[:-1] + f', "settings": {DEEP}}}'
    parsed = progress.parse_progress(text)
    assert parsed.set_aside == {"settings": DEEP}
    assert progress.is_done(parsed.record["exercises"][f"{SLUG}-ex1"])


@pytest.mark.parametrize("text", ["{not json", "[]", '{"exercises": 3}', "", DEEP,
                                  '{"exercises": {"a": 1}} trailing', '{"a": 1,}'])
def test_text_that_is_no_record_is_set_aside_whole(text: str) -> None:
    parsed = progress.parse_progress(text)
    assert parsed.problem and parsed.set_aside == {"": text}
    assert parsed.record == progress.empty_record()


def test_a_file_with_an_unreadable_entry_keeps_the_rest(clean_session):
    """The file as it was is moved aside, the readable entries carried over, the learner
    told once."""
    target = clean_session / PROGRESS_FILE
    target.write_text(_text(ex1=GOOD, ex2=f'{{"attempts": {LONG}}}'))
    assert record(f"{SLUG}-ex3", "correct") is True
    kept = list(clean_session.glob(f"{PROGRESS_FILE}.corrupt-*"))
    assert len(kept) == 1 and LONG in kept[0].read_text()
    data = json.loads(target.read_text())
    assert set(data["exercises"]) == {f"{SLUG}-ex1", f"{SLUG}-ex3"}
    assert data["learner"] == "ada"
    notice = take_notice()
    assert notice is not None and kept[0].name in notice
    assert (f"1 part of your progress file {PROGRESS_FILE} could not be read "
            f"(exercises/{SLUG}-ex2)") in notice
    assert "(1, 3)" in progress_summary(SLUG)


@pytest.mark.parametrize("done", ['"false"', "1", '"yes"', "null", "[true]"])
def test_only_true_marks_an_exercise_done(clean_session, done: str) -> None:
    """A hand-edited ``"done": "false"`` counted as done (issue 35, item 11)."""
    (clean_session / PROGRESS_FILE).write_text(_text(ex1=f'{{"attempts": 1, "done": {done}}}'))
    assert "0 of" in progress_summary(SLUG)
    assert record(f"{SLUG}-ex1", "correct") is True
    assert load_progress()["exercises"][f"{SLUG}-ex1"]["done_at"]


def test_records_are_updated_as_data() -> None:
    before = progress.parse_progress(_text(ex1=GOOD)).record
    after = progress.record_answer(before, f"{SLUG}-ex2", "correct", now="2026-12-06T10:00:00")
    assert before["exercises"].keys() == {f"{SLUG}-ex1"}  # left as it was
    assert after["exercises"][f"{SLUG}-ex2"] == {"attempts": 1, "done": True,
                                                 "last": "2026-12-06T10:00:00",
                                                 "done_at": "2026-12-06T10:00:00"}
    assert progress.summary_of(SLUG, after).startswith(
        f"Parallelism at the Core: 2 of {N} exercises done (1, 2)")
    assert json.loads(progress.serialise(after)) == after


def test_merging_keeps_known_exercises_only_and_true_only() -> None:
    kept = progress.parse_progress(_text(ex1='{"attempts": 3, "done": false}')).record
    junk = {f"not_a_lesson-ex{i}": {"attempts": 1, "done": True} for i in range(30_000)}
    imported = {"exercises": {**junk, f"{SLUG}-ex1": {"attempts": 1, "done": "false"},
                              f"{SLUG}-ex2": {"attempts": 1, "done": True}}}
    merged, left_out = progress.merge_records(kept, imported)
    assert left_out == 30_000
    assert set(merged["exercises"]) == {f"{SLUG}-ex1", f"{SLUG}-ex2"}
    assert merged["exercises"][f"{SLUG}-ex1"] == {"attempts": 3, "done": False}
    assert merged["exercises"][f"{SLUG}-ex2"]["done"] is True
