"""A learner's local progress: which exercises were answered correctly.

A small JSON file next to the notebook (``.gpulesson-progress.json`` in the kernel's
working directory, which Jupyter sets to the notebook's folder). It is never required and
never sent anywhere; a folder that cannot be written only means the summary forgets.

What is in the file is never lost silently:

* a file that cannot be read (truncated, empty, not UTF-8, not a JSON object, nested too
  deep, larger than :data:`MAX_BYTES`) is moved aside as
  ``.gpulesson-progress.json.corrupt-<time>`` before a new one is started, and the learner
  is told once (:func:`take_notice`, which the exercises show with the next feedback);
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
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gpulesson.exercises.catalogue import lesson_module
from gpulesson.exercises.session import settings

try:  # POSIX
    import fcntl
except ImportError:  # Windows, some browsers' Python
    fcntl = None  # type: ignore[assignment]
try:  # Windows
    import msvcrt
except ImportError:
    msvcrt = None  # type: ignore[assignment]

__all__ = ["MAX_BYTES", "PROGRESS_FILE", "load_progress", "progress_path", "progress_summary",
           "record", "take_notice"]

PROGRESS_FILE = ".gpulesson-progress.json"
_VERSION = 1
#: A progress file larger than this is not read (a few thousand exercises fit in 1 MB).
MAX_BYTES = 16 * 2**20
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


def _enabled() -> bool:
    return settings.progress and os.environ.get("GPULESSON_PROGRESS", "").lower() not in {
        "0", "off", "no", "false"}


class _Unreadable(Exception):
    """The progress file exists but cannot be used; the message says why."""


def _read(target: Path) -> dict[str, Any] | None:
    """The file's object, ``None`` when there is no file; :class:`_Unreadable` otherwise."""
    try:
        with open(target, "rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return None
    except IsADirectoryError as error:
        raise _Unreadable("it is a folder") from error
    if len(raw) > MAX_BYTES:
        raise _Unreadable(f"it is larger than {MAX_BYTES // 2**20} MiB")
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise _Unreadable("it is not UTF-8 text") from error
    except RecursionError as error:
        raise _Unreadable("it is nested too deeply") from error
    except ValueError as error:
        raise _Unreadable("it is empty" if not raw.strip() else
                          f"it is not valid JSON ({error})") from error
    if not isinstance(data, dict):
        raise _Unreadable(f"it holds a JSON {type(data).__name__}, not an object")
    if not isinstance(data.get("exercises", {}), dict):
        raise _Unreadable("its 'exercises' is not an object")
    return data


def _normalised(data: dict[str, Any] | None) -> dict[str, Any]:
    """``data`` with a ``version`` (a newer one kept) and an ``exercises`` object; every
    other key kept as it is."""
    out = dict(data or {})
    version = out.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < _VERSION:
        out["version"] = _VERSION
    out["exercises"] = dict(out.get("exercises") or {})
    return out


def load_progress(path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The record, ``{"version": 1, "exercises": {id: {...}}, ...}`` with any other keys the
    file holds; empty when there is no file or it cannot be read (it is left as it is:
    :func:`record` moves an unreadable file aside before writing a new one)."""
    try:
        return _normalised(_read(progress_path(path)))
    except (_Unreadable, OSError):
        return _normalised(None)


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


def record(exercise_id: str, status: str, *, variant: int | None = None,
           path: str | os.PathLike[str] | None = None) -> bool:
    """Note one answer to ``exercise_id`` (``status`` as in :class:`Feedback`).

    ``correct`` and ``compared`` (a prediction set against a measurement) mark the
    exercise done; other statuses count attempts. Returns whether the file was written;
    never raises.
    """
    if not _enabled() or not isinstance(exercise_id, str):
        return False
    try:
        target = progress_path(path)
        with _locked(target):
            try:
                data = _normalised(_read(target))
            except _Unreadable as problem:
                kept = _move_aside(target)
                _notice.append(f"Your progress file {target.name} could not be read "
                               f"({problem}); it was kept as {kept.name} and a new one "
                               "was started.")
                data = _normalised(None)
            entry = data["exercises"].get(exercise_id)
            if not isinstance(entry, dict):
                entry = data["exercises"][exercise_id] = {"attempts": 0, "done": False}
            entry["attempts"] = _attempts(entry.get("attempts")) + 1
            entry["last"] = time.strftime("%Y-%m-%dT%H:%M:%S")
            if status in ("correct", "compared"):
                if not entry.get("done"):
                    entry["done_at"] = entry["last"]
                entry["done"] = True
            if variant is not None:
                entry["variant"] = variant
            _write(target, json.dumps(data, indent=1, sort_keys=True))
        return True
    except (OSError, ValueError, TypeError, RecursionError, TimeoutError):
        return False


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


def progress_summary(lesson: str, path: str | os.PathLike[str] | None = None) -> str:
    """One line: how many of ``lesson``'s exercises are done, and which to do next.

    >>> progress_summary("parallelism_at_the_core")  # doctest: +SKIP
    'Parallelism at the Core: 3 of 12 exercises done (1, 2, 5); next: exercise 3.'
    """
    module = lesson_module(lesson)
    numbers = [ex.number for ex in module.EXERCISES]
    problem = ""
    try:
        data = _normalised(_read(progress_path(path)))
    except _Unreadable as error:
        data, problem = _normalised(None), f" (the progress file could not be read: {error})"
    except OSError:
        data = _normalised(None)
    done_ids = {k for k, v in data["exercises"].items()
                if isinstance(v, dict) and v.get("done")}
    done = [n for n in numbers if f"{lesson}-ex{n}" in done_ids]
    title = getattr(module, "TITLE", lesson)
    line = f"{title}: {len(done)} of {len(numbers)} exercises done"
    if done:
        line += f" ({', '.join(str(n) for n in done)})"
    todo = [n for n in numbers if n not in done]
    line += f"; next: exercise {todo[0]}." if todo else "; all done."
    return line + problem
