"""The order of the test session, and how ``make test`` shares it between two processes.

``make test`` runs pytest with pytest-xdist on two workers (``-n 2``; ``TEST_WORKERS=0``
runs it in one process). In one process the second core sat idle for much of the run: the
book build executes the notebooks one at a time, and Chromium renders and runs a page
while pytest waits. Two workers keep both cores busy (a fresh clone's pytest: 750 s in one
process, 554 s on two). This plugin sets the order the work is handed out in:

1. ``tests/site/test_book_build.py``, so that one worker starts the book build first;
2. every test that does not read the session's book (:func:`needs_book`): the unit and
   content tests, the exercise notebooks, the site tests that build a book of their own,
   which the other worker runs while the book builds;
3. the lesson notebooks (nbval), whose tagged cells take the build's outputs as reference;
4. the rest of ``tests/site``, which needs the built site;
5. last, the page loads of :data:`SPREAD`, handed out one by one: whichever worker ends its
   last file first takes them, so the two end close together (when a whole file came
   last, the other worker sat idle for its 20-30 s).

Before stage 2 held every test that needs no book, the second worker ran out of work some
way into the build and sat waiting for it at the first tagged cell (21 s in a fresh clone's
run here). A file goes where its most demanding test goes.

Every test file stays on one worker (its module fixtures are set up once), except the
modules of :data:`SPREAD`, whose tests are independent page loads and are spread over both;
a notebook is a file too, so nbval runs its cells in one kernel, in order. The scheduler
that does this is made by :func:`pytest_xdist_make_scheduler` (xdist's own ``--dist
loadgroup`` cannot: with pytest 9 the group names it adds never reach the node ids it
sends). The book itself is built once per run, by whichever worker asks first
(:func:`tests.site.building.course_build` holds a file lock for the others).

Without xdist the same order applies, in one process.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from tests.site.nbval_reference import CHECK_TAG

REPO = Path(__file__).resolve().parents[1]
#: Starts the book build: first in the session.
FIRST = "tests/site/test_book_build.py"
#: Modules whose tests are handed out one by one (each opens its own page).
SPREAD = frozenset({"tests/site/test_site_pages.py"})


def _relative(item: pytest.Item) -> str:
    return _relative_path(str(item.path))


@functools.cache
def _relative_path(path: str) -> str:
    """``path`` relative to the repository (once per file: resolving it for each of the
    8,500 tests took a second and a half of every process's collection)."""
    resolved = Path(path).resolve()
    try:
        return resolved.relative_to(REPO).as_posix()
    except ValueError:  # a test outside the repository (pytester's temporary folders)
        return resolved.as_posix()


def needs_book(item: pytest.Item) -> bool:
    """Whether ``item`` reads the session's course build: a test with the ``built_site``
    fixture (``site_dir``, ``site_server``, ``site_page`` ... lead to it), or an nbval cell
    tagged ``nbval-check-output``, whose reference is the build's run of it."""
    if "built_site" in getattr(item, "fixturenames", ()):
        return True
    cell = getattr(item, "cell", None)
    return cell is not None and CHECK_TAG in cell.get("metadata", {}).get("tags", [])


def stage(relative: str, reads_book: bool) -> int:
    """Where a test file goes in the session: 0 the build, 1 no book, 2 notebooks that
    compare with the book, 3 the site, 4 the site's page loads of :data:`SPREAD`.
    ``reads_book``: any of the file's tests does."""
    if relative == FIRST:
        return 0
    if not reads_book:
        return 1
    if relative.endswith(".ipynb"):
        return 2
    return 4 if relative in SPREAD else 3


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    units: dict[str, list[pytest.Item]] = {}
    for item in items:
        units.setdefault(scope(item.nodeid), []).append(item)
    where = {}
    for unit in units.values():
        reads_book = any(needs_book(item) for item in unit)
        for item in unit:
            where[id(item)] = stage(_relative(item), reads_book)
    items.sort(key=lambda item: where[id(item)])  # stable: file order kept within a stage


def scope(nodeid: str) -> str:
    """The unit a worker is handed: the test's file, or the test itself in :data:`SPREAD`."""
    file = nodeid.split("::", 1)[0]
    return nodeid if file in SPREAD else file


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """pytest-xdist: hand out :func:`scope` units in the order of the collection."""
    from xdist.scheduler import LoadScopeScheduling

    class CourseScheduling(LoadScopeScheduling):
        def __init__(self, config: pytest.Config, log: object = None) -> None:
            super().__init__(config, log)
            config.option.loadscopereorder = False  # keep the order set above

        def _split_scope(self, nodeid: str) -> str:
            return scope(nodeid)

    return CourseScheduling(config, log)
