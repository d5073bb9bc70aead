"""Accessibility in Chromium: what axe-core cannot see on its own.

axe-core itself runs on every page, in light and dark mode, in the same page load as the
offline check (``test_site_pages.py`` calls :func:`.axe.assert_accessible`). Here: the
check can fail (a planted violation is caught); the solutions of the exercises start
collapsed and open with the mouse and with the keyboard; every calculator control has a
label, results sit in a live region and messages in an alert.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .axe import FAILING_IMPACTS, assert_accessible, violations
from .harness import RecordedPage

pytestmark = pytest.mark.browser


def test_axe_finds_a_planted_violation(site_page: RecordedPage) -> None:
    """The check can fail: an unlabelled input and grey-on-grey text are reported."""
    site_page.open("book/intro.html")
    site_page.page.evaluate(
        """() => {
          const main = document.querySelector("main");
          main.insertAdjacentHTML("afterbegin",
            '<input type="number" id="planted"><p style="color:#aaa;background:#bbb">low</p>');
        }"""
    )
    found = {v["id"]: v["impact"] for v in violations(site_page)}
    with pytest.raises(AssertionError, match="color-contrast"):
        assert_accessible(site_page, "planted")
    assert found.get("label") in FAILING_IMPACTS, found
    assert found.get("color-contrast") in FAILING_IMPACTS, found


def _exercise_page(site_dir: Path) -> str:
    for page in sorted((site_dir / "exercises").glob("*.html")):
        if 'class="gl-solution"' in page.read_text(encoding="utf-8"):
            return page.relative_to(site_dir).as_posix()
    raise AssertionError("no exercise page with a solution")


def test_solutions_start_collapsed_and_open_by_click_and_keyboard(
        site_page: RecordedPage, site_dir: Path) -> None:
    path = _exercise_page(site_dir)
    site_page.open(path)
    page = site_page.page
    solutions = page.locator("details.gl-solution")
    count = solutions.count()
    assert count > 0
    open_at_start = page.evaluate(
        "Array.from(document.querySelectorAll('details.gl-solution')).filter(d => d.open).length"
    )
    assert open_at_start == 0, f"{open_at_start} of {count} solutions start open"
    first = solutions.nth(0)
    first.locator(":scope > summary").click()
    assert first.evaluate("d => d.open"), "a click did not open the solution"
    assert first.locator(":scope > :not(summary)").first.is_visible()
    second = solutions.nth(1) if count > 1 else first
    if second is first:
        first.locator(":scope > summary").click()  # close it again
    second.locator(":scope > summary").focus()
    assert page.evaluate("document.activeElement.tagName") == "SUMMARY"
    page.keyboard.press("Enter")
    assert second.evaluate("d => d.open"), "Enter on the summary did not open the solution"
    page.keyboard.press("Space")
    assert not second.evaluate("d => d.open"), "Space on the summary did not close it"
    site_page.assert_clean(path)


def test_calculator_controls_are_labelled_and_results_announced(
        site_page: RecordedPage) -> None:
    site_page.open("book/calculators.html", settle=False)
    report = site_page.page.evaluate(
        """() => Array.from(document.querySelectorAll('.gl-calculator')).map((calc) => ({
            name: calc.dataset.calculator,
            unlabelled: Array.from(calc.querySelectorAll('input, select')).filter(
              (c) => !c.labels || c.labels.length === 0 || !c.labels[0].textContent.trim()
            ).map((c) => c.name),
            live: !!calc.querySelector('[aria-live=polite] output'),
            alert: !!calc.querySelector('.gl-calc-error[role=alert]'),
          }))"""
    )
    assert report, "no calculator on the page"
    for calc in report:
        assert not calc["unlabelled"], f"{calc['name']}: unlabelled {calc['unlabelled']}"
        assert calc["live"], f"{calc['name']}: outputs are not in an aria-live region"
        assert calc["alert"], f"{calc['name']}: no role=alert element for messages"
