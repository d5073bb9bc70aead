"""The order of the test session, and how ``make test`` shares it between two processes.

``make test`` runs pytest with pytest-xdist on two workers (``-n 2``; ``TEST_WORKERS=0``
runs it in one process). In one process the second core sat idle for much of the run: the
book build executes the notebooks one at a time, and Chromium renders and runs a page
while pytest waits. Two workers keep both cores busy (a fresh clone's pytest: 750 s in one
process, 554 s on two). This plugin sets the order the work is handed out in:

1. ``tests/site/test_book_build.py``, so that one worker starts the book build first;
2. every test that needs no book (``tests/unit``, ``tests/content`` ...), which the other
   worker runs while the book builds;
3. the notebooks (nbval), whose tagged cells take the build's outputs as reference;
4. the rest of ``tests/site``, which needs the built site.

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

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: Starts the book build: first in the session.
FIRST = "tests/site/test_book_build.py"
#: Modules whose tests are handed out one by one (each opens its own page).
SPREAD = frozenset({"tests/site/test_site_pages.py"})


def _relative(item: pytest.Item) -> str:
    path = Path(str(item.path)).resolve()
    try:
        return path.relative_to(REPO).as_posix()
    except ValueError:  # a test outside the repository (pytester's temporary folders)
        return path.as_posix()


def stage(relative: str) -> int:
    """Where a test file goes in the session: 0 the build, 1 no book, 2 notebooks, 3 site."""
    if relative == FIRST:
        return 0
    if relative.endswith(".ipynb"):
        return 2
    if relative.startswith("tests/site/"):
        return 3
    return 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    where = {id(item): stage(_relative(item)) for item in items}
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
