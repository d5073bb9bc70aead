"""The order and the grouping ``tests/scheduling.py`` gives the two workers of ``make test``."""

from __future__ import annotations

from types import SimpleNamespace

import nbformat

from tests import scheduling

from .site.building import REPO_ROOT


def test_the_book_build_comes_first_and_the_site_last() -> None:
    """The build starts at once on one worker; whatever reads no book keeps the other busy
    meanwhile; the notebooks whose tagged cells read the build, and the site, follow; the
    independent page loads close the run, so that both workers end together."""
    files = [("tests/site/test_site_pages.py", True), ("notebooks/flops_and_scaling.ipynb", True),
             ("tests/unit/test_units.py", False), ("tests/site/test_book_build.py", True),
             ("exercises/cost_economics.ipynb", False),
             ("tests/site/test_book_config_in_browser.py", False),
             ("tests/site/test_site_truth.py", True), ("tests/content/test_claims.py", False)]
    assert [name for name, _ in sorted(files, key=lambda f: scheduling.stage(*f))] == [
        "tests/site/test_book_build.py", "tests/unit/test_units.py",
        "exercises/cost_economics.ipynb", "tests/site/test_book_config_in_browser.py",
        "tests/content/test_claims.py", "notebooks/flops_and_scaling.ipynb",
        "tests/site/test_site_truth.py", "tests/site/test_site_pages.py"]


def _cells(notebook: str) -> list[SimpleNamespace]:
    """nbval's items of ``notebook``, as far as :func:`scheduling.needs_book` reads them."""
    cells = nbformat.read(REPO_ROOT / notebook, 4).cells
    return [SimpleNamespace(cell=cell) for cell in cells if cell.cell_type == "code"]


def test_what_reads_the_book_is_told_by_fixtures_and_tags() -> None:
    """A lesson compares tagged cells with the build; an exercise notebook has none. A site
    test reads the book through ``site_page``'s chain of fixtures; a test of a book of its
    own does not."""
    assert any(scheduling.needs_book(item) for item in _cells("notebooks/flops_and_scaling.ipynb"))
    assert not any(scheduling.needs_book(item)
                   for item in _cells("exercises/flops_and_scaling.ipynb"))
    page = SimpleNamespace(fixturenames=["site_page", "browser", "site_server", "site_dir",
                                         "built_site"])
    own_book = SimpleNamespace(fixturenames=["demo_page", "browser", "demo_book", "tmp_path"])
    assert scheduling.needs_book(page) and not scheduling.needs_book(own_book)


def _test(nodeid: str, *fixtures: str) -> SimpleNamespace:
    """A collected test, as far as the scheduling reads it."""
    return SimpleNamespace(nodeid=nodeid, path=REPO_ROOT / nodeid.split("::")[0],
                           fixturenames=list(fixtures))


def test_a_file_goes_where_its_most_demanding_test_goes() -> None:
    """One test of a module reads the book: the whole module waits for it, in its order."""
    items = [_test("tests/site/test_mixed.py::test_own_book", "demo_book"),
             _test("tests/site/test_mixed.py::test_page", "site_page", "built_site"),
             _test("tests/unit/test_units.py::test_a")]
    scheduling.pytest_collection_modifyitems(items)
    assert [item.nodeid for item in items] == [
        "tests/unit/test_units.py::test_a", "tests/site/test_mixed.py::test_own_book",
        "tests/site/test_mixed.py::test_page"]


def test_a_notebook_and_a_module_stay_on_one_worker_and_page_loads_spread() -> None:
    """nbval runs a notebook's cells in one kernel, and a module's fixtures are set up once:
    both are one unit. Each page load of test_site_pages.py is a unit of its own."""
    cells = {scheduling.scope(f"notebooks/flops_and_scaling.ipynb::Cell {i}") for i in range(3)}
    assert cells == {"notebooks/flops_and_scaling.ipynb"}
    module = {scheduling.scope(f"tests/site/test_calculators_live.py::test_{name}")
              for name in ("a", "b[x]")}
    assert module == {"tests/site/test_calculators_live.py"}
    pages = [f"tests/site/test_site_pages.py::test_page_loads_cleanly_and_offline[{p}]"
             for p in ("book/intro.html", "genindex.html")]
    assert [scheduling.scope(page) for page in pages] == pages
