"""A learner's local progress: which exercises were answered correctly.

Two layers. **Records** are plain data (a ``dict``, the JSON object below), read, updated,
merged and summarised by pure functions that touch no file: :func:`parse_progress`,
:func:`record_answer`, :func:`merge_records`, :func:`summary_of`, :func:`serialise`. The
site's Python worker uses only these (the page keeps the text in ``localStorage``). The
**file** is a thin shell around them for the notebooks: a small JSON file next to the
notebook (``.gpulesson-progress.json`` in the kernel's working directory, which Jupyter
sets to the notebook's folder), read by :func:`load_progress` and
:func:`progress_summary`, updated by :func:`record`. It is never required and never sent
anywhere; a folder that cannot be written only means the summary forgets.

The record: ``{"version": 1, "exercises": {"<slug>-ex<n>": {"attempts": int, "done":
bool, "last": time, "done_at": time, "variant": int}}, ...}``.

Reading is bounded: text over :data:`MAX_BYTES`, an entry nested deeper than
:data:`MAX_ENTRY_DEPTH` or an integer of more than :data:`MAX_DIGITS` digits is never
parsed whole. :func:`parse_progress` keeps every entry it can read and sets the others
aside (their text, in :attr:`Parsed.set_aside`), so one bad entry never costs the rest.

What is in the file is never lost silently:

* a file that cannot be read (truncated, empty, not UTF-8, not a JSON object, nested too
  deep, larger than :data:`MAX_BYTES`), or one with entries that cannot be, is moved aside
  as ``.gpulesson-progress.json.corrupt-<time>`` before a new one is started with what
  could be read, and the learner is told once (:func:`take_notice`, which the exercises
  show with the next feedback);
* keys this version does not know are kept as they are, in the file and in each entry,
  and a newer ``version`` is never written back as an older one;
* every update is a read-modify-write under a lock (``<file>.lock``, ``fcntl.flock`` or
  ``msvcrt.locking``; no lock where neither exists, as in the browser), so two notebooks
  recording at once both keep their answers;
* the file is replaced atomically and keeps its permission bits.

Standard library only.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import stat
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from json.decoder import scanstring
from pathlib import Path
from typing import Any

from gpulesson.exercises.catalogue import available_lessons, lesson_module
from gpulesson.exercises.session import settings

try:  # POSIX
    import fcntl
except ImportError:  # Windows, some browsers' Python
    fcntl = None  # type: ignore[assignment]
try:  # Windows
    import msvcrt
except ImportError:
    msvcrt = None  # type: ignore[assignment]

__all__ = ["MAX_BYTES", "MAX_DIGITS", "MAX_ENTRY_DEPTH", "PROGRESS_FILE", "Parsed",
           "ProgressUnreadable", "empty_record", "enabled", "exercise_ids", "is_done",
           "load_progress", "merge_records", "parse_progress", "progress_path",
           "progress_summary", "record", "record_answer", "serialise", "summary_of",
           "take_notice"]

PROGRESS_FILE = ".gpulesson-progress.json"
_VERSION = 1
#: A progress file larger than this is not read (a few thousand exercises fit in 1 MB).
MAX_BYTES = 16 * 2**20
#: The deepest nesting read back in one entry (a record's entry is one level deep; keys
#: of a newer version may nest a little more).
MAX_ENTRY_DEPTH = 32
#: The longest integer read back (an attempt count has a few digits; 5,000 digits would
#: cost quadratic time to convert, and Python refuses more than 4,300).
MAX_DIGITS = 30
#: How long a record waits for another notebook's update before giving up (seconds).
LOCK_TIMEOUT_S = 10.0

_notice: list[str] = []


def progress_path(path: str | os.PathLike[str] | None = None) -> Path:
    """Where progress is kept: ``path``, else the session's ``progress_path`` (see
    :func:`~gpulesson.exercises.session.configure`), else ``$GPULESSON_PROGRESS_FILE``,
    else ``./.gpulesson-progress.json``."""
    if path is not None:
        return Path(path)
    if settings.progress_path is not None:
        return Path(settings.progress_path)
    env = os.environ.get("GPULESSON_PROGRESS_FILE")
    return Path(env) if env else Path.cwd() / PROGRESS_FILE


def enabled() -> bool:
    """Whether progress is kept: the session's ``progress`` setting and no
    ``GPULESSON_PROGRESS=0`` (or off, no, false) in the environment."""
    return settings.progress and os.environ.get("GPULESSON_PROGRESS", "").lower() not in {
        "0", "off", "no", "false"}



class ProgressUnreadable(Exception):
    """Progress text that cannot be used at all; the message says why."""


_Unreadable = ProgressUnreadable  # the name the file layer used


@dataclass
class Parsed:
    """What :func:`parse_progress` read.

    ``record``: the readable record (``version``, ``exercises`` and any other key, each
    kept as it is). ``set_aside``: the text of each part that could not be read, by where
    it was (``"exercises/<id>"`` for an entry, the key for another part, ``""`` for the
    whole text). ``problem``: why the whole text could not be read, or ``None``.
    """

    record: dict[str, Any] = field(default_factory=lambda: empty_record())
    set_aside: dict[str, str] = field(default_factory=dict)
    problem: str | None = None


def empty_record() -> dict[str, Any]:
    """A record with no exercise in it."""
    return {"version": _VERSION, "exercises": {}}


class _TooLong(ValueError):
    """An integer of more than :data:`MAX_DIGITS` digits."""


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise _TooLong(f"an integer of {len(text):,} digits")
    return int(text)


def _loads(text: str) -> Any:
    """``json.loads`` that refuses long integers (:class:`_TooLong`)."""
    return json.loads(text, parse_int=_bounded_int)


def _depth_at_most(value: Any, limit: int) -> bool:
    """Whether ``value`` nests at most ``limit`` levels (iterative: never recurses)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return False
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return True


# A JSON string, a bracket, or anything else up to the next delimiter: enough to find
# where a value ends without parsing it (linear, no recursion).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)
_SCALAR = re.compile(r"[^\s,\]}]+")
_SPACE = re.compile(r"[ \t\n\r]*")


def _skip_value(text: str, at: int) -> int:
    """Where the JSON value starting at ``at`` ends (syntax checked only loosely: what it
    holds is parsed on its own afterwards)."""
    char = text[at:at + 1]
    if char == '"':
        match = _STRING.match(text, at)
        if match is None:
            raise ValueError("an unterminated string")
        return match.end()
    if char in ("{", "["):
        depth = 0
        for token in _TOKEN.finditer(text, at):
            piece = token.group()
            if piece in ("{", "["):
                depth += 1
            elif piece in ("}", "]"):
                depth -= 1
                if depth == 0:
                    return token.end()
        raise ValueError("an unterminated object or list")
    match = _SCALAR.match(text, at)
    if match is None:
        raise ValueError(f"no value at character {at}")
    return match.end()


def _members(text: str, at: int) -> tuple[list[tuple[str, str]], int]:
    """The members of the JSON object starting at ``at``, each as (key, its value's text),
    and where the object ends. ``ValueError`` when it is not one."""
    if text[at:at + 1] != "{":
        raise ValueError("not an object")
    members: list[tuple[str, str]] = []
    at = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
    if text[at:at + 1] == "}":
        return members, at + 1
    while True:
        if text[at:at + 1] != '"':
            raise ValueError(f"a key was expected at character {at}")
        key, at = scanstring(text, at + 1)
        at = _SPACE.match(text, at).end()  # type: ignore[union-attr]
        if text[at:at + 1] != ":":
            raise ValueError(f"':' was expected at character {at}")
        at = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
        end = _skip_value(text, at)
        members.append((key, text[at:end]))
        at = _SPACE.match(text, end).end()  # type: ignore[union-attr]
        if text[at:at + 1] == "}":
            return members, at + 1
        if text[at:at + 1] != ",":
            raise ValueError(f"',' or '}}' was expected at character {at}")
        at = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]


def _part(text: str) -> tuple[bool, Any]:
    """``(True, value)`` for one part's text that reads within the limits, else
    ``(False, None)``."""
    try:
        value = _loads(text)
    except (ValueError, RecursionError):
        return False, None
    return _depth_at_most(value, MAX_ENTRY_DEPTH), value


def _whole(text: str) -> dict[str, Any]:
    """The text as one object, or :class:`ProgressUnreadable`; parts that are too deep or
    hold a long integer are left to :func:`_salvage` (``_TooLong``, ``RecursionError``)."""
    try:
        data = _loads(text)
    except (_TooLong, RecursionError):
        raise
    except ValueError as error:
        raise ProgressUnreadable("it is empty" if not text.strip() else
                                 f"it is not valid JSON ({error})") from error
    if not isinstance(data, dict):
        raise ProgressUnreadable(f"it holds a JSON {type(data).__name__}, not an object")
    return data


def _salvage(text: str) -> tuple[dict[str, Any], dict[str, str]]:
    """Every part of the record's text that reads, and the text of the others."""
    try:
        top, end = _members(text, _SPACE.match(text).end())  # type: ignore[union-attr]
        if text[end:].strip():
            raise ValueError("text after the object")
    except ValueError as error:
        if text.lstrip()[:1] not in ("{", ""):
            raise ProgressUnreadable("it is nested too deeply, not an object") from error
        raise ProgressUnreadable(f"it is not valid JSON ({error})") from error
    data: dict[str, Any] = {}
    aside: dict[str, str] = {}
    for key, part in top:
        if key == "exercises" and part.startswith("{"):
            entries: dict[str, Any] = {}
            for name, entry in _members(part, 0)[0]:
                ok, value = _part(entry)
                if ok:
                    entries[name] = value
                else:
                    entries.pop(name, None)
                    aside[f"exercises/{name}"] = entry
            data[key] = entries
            continue
        ok, value = _part(part)
        if ok:
            data[key] = value
        else:
            aside[key] = part
    return data, aside


def parse_progress(text: str | bytes | None) -> Parsed:
    """Read a progress record from its text; never raises.

    ``None`` or blank text is an empty record. Text that cannot be a record at all (over
    :data:`MAX_BYTES`, not UTF-8, not a JSON object, an ``exercises`` that is not an
    object) gives an empty record, the whole text set aside and the ``problem``. An entry
    (or another key) nested deeper than :data:`MAX_ENTRY_DEPTH` or holding an integer of
    more than :data:`MAX_DIGITS` digits is set aside alone; everything else is kept as
    it is (entries of other shapes included: :func:`record_answer` replaces only the one
    it updates).
    """
    if text is None:
        return Parsed()
    try:
        if isinstance(text, bytes | bytearray):
            if len(text) > MAX_BYTES:
                raise ProgressUnreadable(f"it is larger than {MAX_BYTES // 2**20} MiB")
            try:
                text = bytes(text).decode("utf-8")
            except UnicodeDecodeError as error:
                raise ProgressUnreadable("it is not UTF-8 text") from error
        if not isinstance(text, str):
            raise ProgressUnreadable(f"it is a {type(text).__name__}, not text")
        if not text.strip():
            raise ProgressUnreadable("it is empty")
        if len(text) > MAX_BYTES:
            raise ProgressUnreadable(f"it is larger than {MAX_BYTES // 2**20} MiB")
        aside: dict[str, str] = {}
        try:
            data = _whole(text)
            for name, entry in list(_exercises_of(data).items()):
                if not _depth_at_most(entry, MAX_ENTRY_DEPTH):
                    aside[f"exercises/{name}"] = json.dumps(entry)  # within json's depth
                    del data["exercises"][name]
            for key in [k for k in data if k != "exercises"]:
                if not _depth_at_most(data[key], MAX_ENTRY_DEPTH):
                    aside[key] = json.dumps(data.pop(key))
        except (_TooLong, RecursionError):
            data, aside = _salvage(text)
        _exercises_of(data)
        return Parsed(_normalised(data), aside)
    except ProgressUnreadable as problem:
        return Parsed(problem=str(problem), set_aside={"": text if isinstance(text, str)
                                                       else repr(text)[:MAX_BYTES]})


def _exercises_of(data: dict[str, Any]) -> dict[str, Any]:
    exercises = data.get("exercises", {})
    if not isinstance(exercises, dict):
        raise ProgressUnreadable("its 'exercises' is not an object")
    return exercises


def _read(target: Path) -> bytes | None:
    """The file's bytes (at most :data:`MAX_BYTES` + 1), ``None`` when there is no file;
    :class:`ProgressUnreadable` for a folder."""
    try:
        with open(target, "rb") as handle:
            return handle.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return None
    except IsADirectoryError as error:
        raise ProgressUnreadable("it is a folder") from error


def _normalised(data: Mapping[str, Any] | None) -> dict[str, Any]:
    """``data`` with a ``version`` (a newer one kept) and an ``exercises`` object; every
    other key kept as it is."""
    out = dict(data or {})
    version = out.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < _VERSION:
        out["version"] = _VERSION
    out["exercises"] = dict(out.get("exercises") or {})
    return out


def serialise(record: Mapping[str, Any]) -> str:
    """The record as the file holds it (and the site keeps it): indented JSON, keys
    sorted."""
    return json.dumps(record, indent=1, sort_keys=True)


def _load(path: str | os.PathLike[str] | None) -> Parsed:
    try:
        raw = _read(progress_path(path))
    except ProgressUnreadable as problem:
        return Parsed(problem=str(problem))
    except OSError:
        return Parsed()
    return parse_progress(raw)


def load_progress(path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The record, ``{"version": 1, "exercises": {id: {...}}, ...}`` with any other keys the
    file holds and every entry that can be read; empty when there is no file or it cannot
    be read (it is left as it is: :func:`record` moves an unreadable file aside before
    writing a new one)."""
    return _load(path).record


def take_notice() -> str | None:
    """What the learner must be told once about the progress file (it could not be read and
    was moved aside), or ``None``. Taking it clears it."""
    return _notice.pop(0) if _notice else None


def _attempts(value: Any) -> int:
    """A count of attempts read from the file; 0 for anything that is not one
    (``1e999`` reads as inf, text, a negative number)."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(value, 0)
    if isinstance(value, float) and math.isfinite(value) and value >= 0:
        return int(value)
    return 0


def is_done(entry: Any) -> bool:
    """Whether an entry marks its exercise done: ``"done": true`` and nothing else
    (``"false"``, ``1`` or ``"yes"`` from a hand-edited file are not done)."""
    return isinstance(entry, dict) and entry.get("done") is True


def record_answer(record: Mapping[str, Any], exercise_id: str, status: str, *,
                  variant: int | None = None, now: str | None = None) -> dict[str, Any]:
    """``record`` with one answer to ``exercise_id`` noted (``status`` as in
    :class:`Feedback`): a new record, ``record`` is left as it is.

    Every answer counts an attempt; ``correct`` and ``compared`` (a prediction set against
    a measurement) mark the exercise done, at ``now`` (default: this second, local time),
    and set its ``variant`` to the numbers answered (none for the lesson's own).
    An entry that is not a record is replaced; every other entry and key is kept.
    """
    data = _normalised(record)
    old = data["exercises"].get(exercise_id)
    entry = dict(old) if isinstance(old, dict) else {"attempts": 0, "done": False}
    entry["attempts"] = _attempts(entry.get("attempts")) + 1
    entry["last"] = now or time.strftime("%Y-%m-%dT%H:%M:%S")
    if status in ("correct", "compared"):
        if not is_done(entry):
            entry["done_at"] = entry["last"]
        entry["done"] = True
        # the numbers it was solved with: a right answer to the lesson's own numbers (whose
        # solutions are on the site) must not stand under a class variant tried before
        if variant is None:
            entry.pop("variant", None)
        else:
            entry["variant"] = variant
    data["exercises"][exercise_id] = entry
    return data


def record(exercise_id: str, status: str, *, variant: int | None = None,
           path: str | os.PathLike[str] | None = None) -> bool:
    """Note one answer to ``exercise_id`` in the progress file (:func:`record_answer`).

    Returns whether the file was written; never raises. A file that could not be read,
    wholly or in part, is moved aside first, and the learner told once
    (:func:`take_notice`); the new file holds every entry that could be read.
    """
    if not enabled() or not isinstance(exercise_id, str):
        return False
    try:
        target = progress_path(path)
        with _locked(target):
            try:
                parsed = parse_progress(_read(target))
            except ProgressUnreadable as problem:
                parsed = Parsed(problem=str(problem), set_aside={"": ""})
            if parsed.set_aside:
                kept = _move_aside(target)
                if parsed.problem is not None:
                    _notice.append(f"Your progress file {target.name} could not be read "
                                   f"({parsed.problem}); it was kept as {kept.name} and a "
                                   "new one was started.")
                else:
                    where = ", ".join(sorted(parsed.set_aside))
                    n = len(parsed.set_aside)
                    _notice.append(f"{n} {'part' if n == 1 else 'parts'} of your progress "
                                   f"file {target.name} could not be read ({where:.200}); "
                                   f"the file as it was is kept as {kept.name}, and "
                                   "everything else carried over.")
            data = record_answer(parsed.record, exercise_id, status, variant=variant)
            _write(target, serialise(data))
        return True
    except (OSError, ValueError, TypeError, RecursionError, TimeoutError):
        return False


def merge_records(kept: Mapping[str, Any], imported: Mapping[str, Any], *,
                  known: set[str] | None = None) -> tuple[dict[str, Any], int]:
    """Both records in one, and how many imported entries were left out.

    An exercise done in either is done (``"done": true`` only, :func:`is_done`); the larger
    attempt count, the earliest ``done_at`` and the latest ``last`` are kept. Imported
    entries that are not records, or whose id is not in ``known`` (default: every
    exercise of the course, :func:`exercise_ids`), are left out.
    """
    known = exercise_ids() if known is None else known
    merged = _normalised(kept)
    merged["exercises"] = {k: dict(v) if isinstance(v, dict) else v
                           for k, v in merged["exercises"].items()}
    left_out = 0
    for key, entry in _normalised(imported)["exercises"].items():
        if key not in known or not isinstance(entry, dict):
            left_out += 1
            continue
        mine = merged["exercises"].get(key)
        mine = dict(mine) if isinstance(mine, dict) else {}
        both = (mine, entry)
        mine["attempts"] = max(_attempts(e.get("attempts")) for e in both)
        mine["done"] = any(is_done(e) for e in both)
        for name, pick in (("done_at", min), ("last", max)):
            values = [e[name] for e in both if isinstance(e.get(name), str)]
            if values:
                mine[name] = pick(values)
        if "variant" in entry:
            mine["variant"] = entry["variant"]
        merged["exercises"][key] = mine
    return merged, left_out


def exercise_ids() -> set[str]:
    """The id of every exercise of the course (``"<slug>-ex<n>"``)."""
    return {ex.id for slug in available_lessons() for ex in lesson_module(slug).EXERCISES}


def _move_aside(target: Path) -> Path:
    """Rename the unreadable ``target`` to ``<name>.corrupt-<time>`` (never over another)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    kept = target.with_name(f"{target.name}.corrupt-{stamp}")
    n = 1
    while kept.exists():
        n += 1
        kept = target.with_name(f"{target.name}.corrupt-{stamp}-{n}")
    os.replace(target, kept)
    return kept


def _write(target: Path, text: str) -> None:
    """Replace ``target`` with ``text`` atomically, keeping its permission bits."""
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=".gpulesson-progress-", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


@contextlib.contextmanager
def _locked(target: Path) -> Iterator[None]:
    """Hold ``<target>.lock`` exclusively (other notebooks wait, up to
    :data:`LOCK_TIMEOUT_S`); no lock where the platform has none."""
    lock = _lock_functions()
    if lock is None:
        yield
        return
    acquire, release = lock
    fd = os.open(f"{target}.lock", os.O_RDWR | os.O_CREAT, 0o666)
    try:
        deadline = time.monotonic() + LOCK_TIMEOUT_S
        try:
            while not acquire(fd):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{target}.lock is held by another process")
                time.sleep(0.005)
        except OSError as error:
            if isinstance(error, TimeoutError):
                raise
            yield  # the file system cannot lock (ENOSYS, ENOLCK): go on without it
            return
        try:
            yield
        finally:
            release(fd)
    finally:
        os.close(fd)


def _lock_functions() -> tuple[Any, Any] | None:
    """``(try_acquire(fd) -> bool, release(fd))`` for this platform, or ``None``."""
    if fcntl is not None and hasattr(fcntl, "flock"):
        def acquire(fd: int) -> bool:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                return False

        return acquire, lambda fd: fcntl.flock(fd, fcntl.LOCK_UN)
    if msvcrt is None:
        return None

    def acquire_windows(fd: int) -> bool:
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False

    def release_windows(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

    return acquire_windows, release_windows


def summary_of(lesson: str, record: Mapping[str, Any], problem: str | None = None) -> str:
    """One line: how many of ``lesson``'s exercises ``record`` marks done, and which to do
    next; ``problem`` (why the record could not be read) is added in brackets.

    >>> summary_of("parallelism_at_the_core", empty_record())  # doctest: +SKIP
    'Parallelism at the Core: 0 of 12 exercises done; next: exercise 1.'
    """
    module = lesson_module(lesson)
    numbers = [ex.number for ex in module.EXERCISES]
    exercises = record.get("exercises")
    entries = exercises if isinstance(exercises, Mapping) else {}
    done = [n for n in numbers if is_done(entries.get(f"{lesson}-ex{n}"))]
    title = getattr(module, "TITLE", lesson)
    line = f"{title}: {len(done)} of {len(numbers)} exercises done"
    if done:
        line += f" ({', '.join(str(n) for n in done)})"
    todo = [n for n in numbers if n not in done]
    line += f"; next: exercise {todo[0]}." if todo else "; all done."
    if problem:
        line += f" (the progress file could not be read: {problem})"
    return line


def progress_summary(lesson: str, path: str | os.PathLike[str] | None = None) -> str:
    """One line: how many of ``lesson``'s exercises are done, and which to do next.

    >>> progress_summary("parallelism_at_the_core")  # doctest: +SKIP
    'Parallelism at the Core: 3 of 12 exercises done (1, 2, 5); next: exercise 3.'
    """
    lesson_module(lesson)  # an unknown lesson names the known ones
    parsed = _load(path)
    return summary_of(lesson, parsed.record, parsed.problem)
