"""The claim machinery itself (``tests/content/claims.py``): what counts as a figure, and
when a claim or a listed non-figure covers it; and that every lesson of the course has its
content test, whose claims are checked."""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path

import pytest

from gpulesson import course

from .claims import (
    Claim,
    claim_tests,
    claims,
    figures,
    parametrize,
    rendered,
    uncovered_figures,
)

PAGE = """(slug)=
# A page

## 3. Decode on an H100

An H100 SXM reads 3.35 TB/s; an 8,192-token prompt of Llama-3-70B takes {term}`about 169 ms <TTFT>`
in 2024 (see {cite:p}`dao2022flashattention` and [lesson 7](distributed_math.ipynb)).
Two GPUs, 12\\$ an hour, `sizes = 4096` and ``(128)``.

```python
x = 4096
```
"""


def test_figures_are_numbers_of_the_prose_only() -> None:
    assert [token for _, token in figures(PAGE)] == ["3.35", "8,192", "169", "12"]


def test_a_claim_or_a_listed_text_covers_its_figures() -> None:
    missing = uncovered_figures(PAGE, ["reads 3.35 TB/s", "an 8,192-token prompt"])
    assert [m.split(" in ")[0] for m in missing] == ["'169'", "'12'"]
    assert uncovered_figures(PAGE, ["reads 3.35 TB/s", "an 8,192-token prompt",
                                    "{term}`about 169 ms <TTFT>`", "12$ an hour"]) == []


def test_a_claim_fails_when_the_page_or_the_calculator_changes() -> None:
    """A claim is the calculators' text; it fails, quoting the page's closest passage, as
    soon as the page no longer says it (the sentence or the calculator changed)."""
    page = rendered(PAGE)
    Claim(lambda: "reads 3.35 TB/s").check(page, "the page")
    with pytest.raises(AssertionError, match=r"calculators give, 'reads 3.36 TB/s'; closest "
                                             r"on the page: 'reads 3.35 TB/s'"):
        Claim(lambda: "reads 3.36 TB/s").check(page, "the page")


def test_a_claim_is_the_call_alone() -> None:
    """The page holds the only typed copy of a figure: a claim list takes the calls that
    build the text, and refuses a typed text next to one."""
    assert [c.text for c in claims(lambda: "reads 3.35 TB/s")] == ["reads 3.35 TB/s"]
    with pytest.raises(TypeError, match="the page holds the only typed copy"):
        claims(("reads 3.35 TB/s", lambda: "reads 3.35 TB/s"))  # type: ignore[arg-type]


def test_collecting_a_claim_runs_no_calculator() -> None:
    """A claim's test is named after the call that builds its text, so collecting it (in
    every xdist worker) computes nothing; the text is computed once, when the test runs."""
    calls: list[str] = []

    def lesson_figure() -> str:
        calls.append("ran")
        return "reads 3.35 TB/s"

    listed = claims(lesson_figure, lambda: "keeps 128 KiB per token")
    mark = parametrize(listed)
    assert calls == []
    assert mark.kwargs["ids"] == ["lesson_figure", f"test_claims:{_line_of(listed[1])}"]
    assert listed[0].text == listed[0].text == "reads 3.35 TB/s" and calls == ["ran"]


def _line_of(claim: Claim) -> int:
    return claim.compute.__code__.co_firstlineno


def test_fences_are_read_in_order() -> None:
    """A bare fence closes the open admonition; prose after it is prose again, and a code
    block inside an admonition is code."""
    page = """```{admonition} Note
:class: tip
Inside, 250 times.

```python
y = 512
```
```

After the admonition, 1,024 GPUs.

```
a bare code block, 777
```
"""
    assert [token for _, token in figures(page)] == ["250", "1,024"]


def test_the_numbers_of_an_ordered_list_are_not_figures() -> None:
    """A list item's number is its place ("10. {doc}`...`"), not a figure; figures in
    the item's text still are."""
    page = "1. first\n\n10. {doc}`/notebooks/x`: why 250 GPUs, not 1.5 or 12?\n"
    assert [token for _, token in figures(page)] == ["250", "1.5", "12"]


def test_a_small_price_is_a_figure_and_a_small_power_is_not() -> None:
    """An integer below 10 is a word, except as a price: ``\\$2 per GPU-hour`` must be
    claimed like any figure, while ``$2^{10}$`` (maths) and "2 GPUs" stay words."""
    page = "At \\$2 per GPU-hour, 2 GPUs cost \\$4, and $2^{10}$ is 1,024."
    assert [token for _, token in figures(page)] == ["2", "4", "10", "1,024"]


def test_roles_and_wrapped_code_spans() -> None:
    """A plain {term} role leaves no stray backtick behind, and a code span that wraps
    over a line break is code."""
    page = "The {term}`ridge point` is 295 FLOP/byte; `x =\n4096` is code; 61 more.\n"
    assert [token for _, token in figures(page)] == ["295", "61"]


def test_the_tests_of_a_page_fail_on_an_unclaimed_figure_and_a_stale_non_figure(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``claim_tests`` gives a content test module its three tests, on the page it reads from
    ``path``; the figure and non-figure checks read ``NOT_FIGURES`` when they run, so a
    module may add to it later."""
    path = tmp_path / "a_page.md"
    path.write_text(PAGE, encoding="utf-8")
    module = types.ModuleType("a_content_test")
    module.CLAIMS = claims(lambda: "reads 3.35 TB/s")
    module.NOT_FIGURES = ("an 8,192-token prompt", "{term}`about 169 ms <TTFT>`")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    test_claim, every_figure, non_figures = claim_tests(module.__name__, path)
    assert test_claim.pytestmark[0].args[1] is module.CLAIMS
    assert {(t.page, t.content_module) for t in (test_claim, every_figure, non_figures)} == {
        (path.resolve(), module.__name__)}
    test_claim(module.CLAIMS[0])
    with pytest.raises(AssertionError, match="a_page.md no longer says"):
        test_claim(Claim(lambda: "reads 3.36 TB/s"))
    with pytest.raises(AssertionError, match=r"a_page.md: figures that are neither .*'12'"):
        every_figure()
    module.NOT_FIGURES += ("12$ an hour",)
    every_figure()
    non_figures()
    module.NOT_FIGURES += ("13$ an hour",)
    with pytest.raises(AssertionError, match=r"no longer says .*'13\$ an hour'"):
        non_figures()


# ---------------------------------------------------------------------------------------
# Every lesson's figures are claims


@pytest.mark.parametrize("slug", course.SLUGS)
def test_every_lesson_has_its_content_test_and_its_claims_are_checked(slug: str) -> None:
    """``tests/content/test_<slug>.py`` exists for every lesson of ``gpulesson.course``
    (``make lesson`` writes one), declares its ``CLAIMS`` (at least one) and checks them:
    one test per claim (``test_claim``, parametrized over ``CLAIMS``) and a test that every
    figure of the page lies in a claim or a listed non-figure
    (``test_every_figure_is_claimed``), all three of ``claim_tests`` made on the lesson's own
    notebook with the module's own ``CLAIMS``: a content test that imports another lesson's
    tests checks that lesson's page, not its own."""
    path = Path(__file__).with_name(f"test_{slug}.py")
    assert path.is_file(), f"lesson {slug!r} has no content test: write {path.name}"
    module = importlib.import_module(f"{__package__}.test_{slug}")
    claimed = getattr(module, "CLAIMS", None)
    assert isinstance(claimed, list) and claimed, f"{path.name} declares no CLAIMS"
    assert all(isinstance(c, Claim) for c in claimed), f"{path.name}: CLAIMS holds non-claims"
    marks = getattr(getattr(module, "test_claim", None), "pytestmark", [])
    assert any(m.name == "parametrize" and m.args[1] is claimed for m in marks), \
        f"{path.name} has no test_claim parametrized over CLAIMS"
    assert callable(getattr(module, "test_every_figure_is_claimed", None)), \
        f"{path.name} does not check that every figure of the page is claimed"
    lesson_page = (Path(__file__).parents[2] / "notebooks" / f"{slug}.ipynb").resolve()
    for name in ("test_claim", "test_every_figure_is_claimed",
                 "test_every_listed_non_figure_is_on_the_page"):
        test = getattr(module, name, None)
        assert getattr(test, "page", None) == lesson_page, \
            f"{path.name}: {name} does not check notebooks/{slug}.ipynb (claim_tests of it)"
        assert getattr(test, "content_module", None) == module.__name__, \
            f"{path.name}: {name} checks the CLAIMS of {getattr(test, 'content_module', None)}"
