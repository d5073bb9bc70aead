"""Clear the book's execution cache when what the notebooks compute from has changed.

Jupyter Book's ``execute_notebooks: cache`` runs a notebook again only when its own code
cells change. The pages print what ``gpulesson`` computes from its code and data, and
lessons 7 and 10 also read ``tests/data/``; a change there left built pages printing
figures the code no longer gives (on 2026-12-06 lesson 10's exercise page showed a plan at
70.9 % MFU, 21 minutes, where the code and the lesson beside it said 51.8 %, 28 minutes).

``make book``, and the build of a test session (``tests/site/building.py``), call
:func:`refresh` first: it hashes those inputs, and when the digest differs from the one
kept beside the cache it removes the cache, and Sphinx's record of what it has read (which
would otherwise re-read only the files whose own dates changed), so every notebook runs
again.

Usage: ``python scripts/book_cache.py [ROOT]`` (ROOT: the repository, by default the
folder above this script).
"""

from __future__ import annotations

import hashlib
import shutil
import sys
from pathlib import Path

#: What the notebooks compute from, besides their own cells: folders of the repository.
INPUTS = ("gpulesson", "tests/data")
#: Jupyter Book's cache of executed notebooks, Sphinx's environment (the pages it has read),
#: and the digest kept beside them.
CACHE = Path("_build") / ".jupyter_cache"
DOCTREES = Path("_build") / ".doctrees"
STAMP = Path("_build") / ".jupyter_cache.inputs"


def inputs_digest(root: Path) -> str:
    """SHA-256 over the path and bytes of every file under :data:`INPUTS` (byte code
    and its ``__pycache__`` folders left out), in sorted order."""
    digest = hashlib.sha256()
    for folder in INPUTS:
        base = root / folder
        files = sorted(p for p in base.rglob("*") if p.is_file()
                       and "__pycache__" not in p.parts and p.suffix != ".pyc")
        for path in files:
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def refresh(root: Path) -> bool:
    """Remove ``root``'s execution cache and Sphinx environment when the inputs changed
    since they were filled, and record their digest; True when a cache was removed."""
    digest = inputs_digest(root)
    stamp = root / STAMP
    if stamp.is_file() and stamp.read_text(encoding="utf-8").strip() == digest:
        return False
    removed = False
    for folder in (root / CACHE, root / DOCTREES):
        if folder.exists():
            shutil.rmtree(folder)
            removed = True
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(digest + "\n", encoding="utf-8")
    return removed


def main(argv: list[str]) -> int:
    root = Path(argv[1]).resolve() if len(argv) > 1 else Path(__file__).resolve().parents[1]
    if refresh(root):
        print(f"{', '.join(INPUTS)} changed since the last build: every notebook runs again "
              f"(removed {CACHE} and {DOCTREES})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
