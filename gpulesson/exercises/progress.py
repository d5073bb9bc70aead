"""A learner's local progress: which exercises were answered correctly.

A small JSON file next to the notebook (``.gpulesson-progress.json`` in the kernel's
working directory, which Jupyter sets to the notebook's folder). It is never required,
never sent anywhere, and deleting it loses nothing else. Any failure to read or write it
(read-only folder, browser sandbox, a corrupt file) is silently tolerated: the exercise
works the same, only the summary forgets.

Standard library only.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from gpulesson.exercises.catalogue import lesson_module
from gpulesson.exercises.session import settings

__all__ = ["PROGRESS_FILE", "load_progress", "progress_path", "progress_summary", "record"]

PROGRESS_FILE = ".gpulesson-progress.json"
_VERSION = 1


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


def load_progress(path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The record as ``{"version": 1, "exercises": {id: {...}}}``; empty when unreadable."""
    empty: dict[str, Any] = {"version": _VERSION, "exercises": {}}
    try:
        data = json.loads(progress_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return empty
    if not isinstance(data, dict) or not isinstance(data.get("exercises"), dict):
        return empty
    return {"version": _VERSION, "exercises": {
        k: v for k, v in data["exercises"].items() if isinstance(k, str) and isinstance(v, dict)
    }}


def record(exercise_id: str, status: str, *, variant: int | None = None,
           path: str | os.PathLike[str] | None = None) -> bool:
    """Note one answer to ``exercise_id`` (``status`` as in :class:`Feedback`).

    ``correct`` and ``compared`` (a prediction set against a measurement) mark the
    exercise done; other statuses count attempts. Returns whether the file was written;
    never raises.
    """
    if not _enabled():
        return False
    try:
        target = progress_path(path)
        data = load_progress(target)
        entry = data["exercises"].setdefault(exercise_id, {"attempts": 0, "done": False})
        entry["attempts"] = int(entry.get("attempts", 0)) + 1
        entry["last"] = time.strftime("%Y-%m-%dT%H:%M:%S")
        if status in ("correct", "compared"):
            if not entry.get("done"):
                entry["done_at"] = entry["last"]
            entry["done"] = True
        if variant is not None:
            entry["variant"] = variant
        text = json.dumps(data, indent=1, sort_keys=True)
        fd, tmp = tempfile.mkstemp(prefix=".gpulesson-progress-", dir=target.parent or ".")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return True
    except (OSError, ValueError, TypeError):
        return False


def progress_summary(lesson: str, path: str | os.PathLike[str] | None = None) -> str:
    """One line: how many of ``lesson``'s exercises are done, and which to do next.

    >>> progress_summary("parallelism_at_the_core")  # doctest: +SKIP
    'Parallelism at the Core: 3 of 12 exercises done (1, 2, 5); next: exercise 3.'
    """
    module = lesson_module(lesson)
    numbers = [ex.number for ex in module.EXERCISES]
    done_ids = {k for k, v in load_progress(path)["exercises"].items() if v.get("done")}
    done = [n for n in numbers if f"{lesson}-ex{n}" in done_ids]
    title = getattr(module, "TITLE", lesson)
    line = f"{title}: {len(done)} of {len(numbers)} exercises done"
    if done:
        line += f" ({', '.join(str(n) for n in done)})"
    todo = [n for n in numbers if n not in done]
    line += f"; next: exercise {todo[0]}." if todo else "; all done."
    return line
