"""The order and the grouping ``tests/scheduling.py`` gives the two workers of ``make test``."""

from __future__ import annotations

from tests import scheduling


def test_the_book_build_comes_first_and_the_site_last() -> None:
    """The build starts at once on one worker; the tests that need no book keep the other
    busy meanwhile; notebooks, whose tagged cells read the build, and the site follow."""
    files = ["tests/site/test_site_pages.py", "notebooks/flops_and_scaling.ipynb",
             "tests/unit/test_units.py", "tests/site/test_book_build.py",
             "exercises/cost_economics.ipynb", "tests/content/test_claims.py"]
    assert sorted(files, key=scheduling.stage) == [
        "tests/site/test_book_build.py", "tests/unit/test_units.py",
        "tests/content/test_claims.py", "notebooks/flops_and_scaling.ipynb",
        "exercises/cost_economics.ipynb", "tests/site/test_site_pages.py"]


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
