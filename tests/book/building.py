"""Build a Jupyter Book the way ``make book`` does and capture the outcome.

Used by the session fixture ``built_site`` (tests/conftest.py) for the course itself and by
tests that build a small book of their own with the course's configuration.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
#: The flags of `make book`: warnings are errors, nitpicky references, report them all.
JB_FLAGS = ("-W", "-n", "--keep-going")


@dataclass(frozen=True)
class BookBuild:
    """The outcome of one book build."""

    returncode: int
    html_dir: Path
    log: str
    seconds: float

    @property
    def ok(self) -> bool:
        """True when the build exited 0 and wrote an index page."""
        return self.returncode == 0 and (self.html_dir / "index.html").is_file()

    def tail(self, lines: int = 80) -> str:
        """The end of the build log, for failure messages."""
        return "\n".join(self.log.splitlines()[-lines:])


def jupyter_book_command() -> str:
    """The ``jupyter-book`` of this environment (beside the running Python)."""
    beside_python = Path(sys.executable).with_name("jupyter-book")
    if beside_python.exists():
        return str(beside_python)
    found = shutil.which("jupyter-book")
    if found is None:
        raise FileNotFoundError("jupyter-book is not installed: run `make test` (installs .[dev])")
    return found


def build_book(source: Path, *extra: str) -> BookBuild:
    """Build the book in ``source`` into ``source/_build/html`` with the flags of make book."""
    start = time.perf_counter()
    proc = subprocess.run(
        [jupyter_book_command(), "build", str(source), *JB_FLAGS, *extra],
        cwd=source,
        capture_output=True,
        text=True,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )
    return BookBuild(
        returncode=proc.returncode,
        html_dir=source / "_build" / "html",
        log=proc.stdout + proc.stderr,
        seconds=time.perf_counter() - start,
    )
