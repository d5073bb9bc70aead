"""Command line: ``python -m gpulesson.exercises {export,list,progress} ...``.

Examples::

    python -m gpulesson.exercises export --all --out export/
    python -m gpulesson.exercises export --lesson parallelism_at_the_core --variant 7 --out a/
    python -m gpulesson.exercises list
    python -m gpulesson.exercises progress parallelism_at_the_core
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from gpulesson.exercises.catalogue import available_lessons, lesson_module
from gpulesson.exercises.export import export, find_root
from gpulesson.exercises.progress import (
    PROGRESS_FILE,
    parse_progress,
    progress_path,
    progress_summary,
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m gpulesson.exercises",
                                     description="Exercises of the course: export, list, "
                                                 "progress.")
    sub = parser.add_subparsers(dest="command", required=True)

    exp = sub.add_parser("export", help="student notebooks without solutions + answer keys")
    which = exp.add_mutually_exclusive_group(required=True)
    which.add_argument("--lesson", action="append", metavar="SLUG",
                       help="a lesson slug (repeat for several)")
    which.add_argument("--all", action="store_true", help="every lesson with exercises")
    exp.add_argument("--out", required=True, help="output folder (created)")
    exp.add_argument("--variant", type=int, default=None,
                     help="class variant seed (default: the lesson's own numbers, "
                          "whose answers the course website shows)")
    exp.add_argument("--solutions", choices=["after-correct", "never"],
                     default="after-correct",
                     help="when students see worked solutions (default: after-correct); "
                          "a guard against accidental peeking, not a protection: a "
                          "student can print the answers from Python, so for graded "
                          "work export a --variant and mark from its answer key")
    exp.add_argument("--root", default=None,
                     help="course repository (default: found from the current folder)")

    sub.add_parser("list", help="lessons and their exercises")

    prog = sub.add_parser("progress", help="one line of local progress per lesson")
    prog.add_argument("lesson", nargs="*", help="lesson slugs (default: all)")
    prog.add_argument("--file", default=None, help="progress file, which must exist "
                      "(default: ./.gpulesson-progress.json, else the one beside the "
                      "exercise notebooks, exercises/.gpulesson-progress.json)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return the exit status (0, or 2 with a one-line message on stderr:
    whatever goes wrong is reported as ``error: ...``, never as a traceback)."""
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except Exception as error:  # noqa: BLE001 - the command line prints, it never crashes
        print(f"error: {_message(error)}", file=sys.stderr)
        return 2


def _message(error: Exception) -> str:
    """An error as one line: its message, with its kind where the message alone is unclear."""
    text = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
    text = " ".join(text.split()) or type(error).__name__
    if not isinstance(error, (KeyError, ValueError, OSError)):
        text = f"{text} ({type(error).__name__})"
    return text


def _not_progress(path: Path) -> str:
    """Why the file at ``path`` is not a progress file, or ``""`` when it is one (a JSON
    object with an ``exercises`` record, as every file the notebooks write has)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return f"cannot be read ({_message(error)})"
    problem = parse_progress(text).problem  # not JSON, not an object, too large ...
    if problem:
        return f"is not a progress file: {problem}"
    if "exercises" not in json.loads(text):  # an object, parse_progress has said so
        return "is not a progress file: it holds no \"exercises\" record"
    return ""


def _progress_file(given: str | None) -> Path:
    """The progress file to read, saying on stderr which one when it is not the obvious one.

    Without ``--file``: the default file (:func:`~gpulesson.exercises.progress.
    progress_path`) if it exists, else the one the exercise notebooks write, in the
    course's ``exercises/`` folder (a notebook's kernel runs in its own folder); neither
    there means nothing answered yet. A ``--file`` that is not a file is an error
    (``ValueError``): a mistyped path must not report a student as having done nothing.
    """
    first = progress_path(given)
    if given is not None:
        # A mistyped --file must not read as a student who answered nothing.
        what = ("is a folder, not a progress file" if first.is_dir() else
                "does not exist" if not first.is_file() else _not_progress(first))
        if what:
            raise ValueError(f"--file {given}: {what}; give the path of a progress "
                             f"file ({PROGRESS_FILE})")
    candidates = [first]
    if given is None:
        beside_notebooks = find_root() / "exercises" / PROGRESS_FILE
        if beside_notebooks.resolve() != first.resolve():
            candidates.append(beside_notebooks)
    for path in candidates:
        if path.exists():
            if path != first:
                print(f"(progress from {path}, where the exercise notebooks keep it)",
                      file=sys.stderr)
            return path
    print(f"(no progress file at {' or '.join(str(p) for p in candidates)}: nothing "
          "answered there yet)", file=sys.stderr)
    return first


def _run(args: argparse.Namespace) -> int:
    if args.command == "export":
        if args.variant is not None and args.variant < 0:
            print("error: --variant must be a non-negative integer", file=sys.stderr)
            return 2
        root = args.root or find_root()
        results = export(None if args.all else args.lesson, args.out, root=root,
                         variant=args.variant, solutions=args.solutions)
        for r in results:
            student = (f"{r.student_notebook} ({r.removed_cells} solution cells removed)"
                       if r.student_notebook else "no exercises/ notebook yet")
            print(f"{r.lesson}: {student}; answer key {r.answer_key}")
        return 0
    if args.command == "list":
        for slug in available_lessons():
            module = lesson_module(slug)
            print(f"{slug}: {module.TITLE} ({len(module.EXERCISES)} exercises)")
            for ex in module.EXERCISES:
                print(f"  {ex.id:<40} {ex.kind:<8} {ex.title_text()}")
        return 0
    if args.command == "progress":
        slugs = args.lesson or available_lessons()
        for slug in slugs:
            lesson_module(slug)  # an unknown slug is an error before anything is printed
        path = _progress_file(args.file)
        for slug in slugs:
            print(progress_summary(slug, path))
        return 0
    return 2  # pragma: no cover - argparse requires a command


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
