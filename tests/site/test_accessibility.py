"""Accessibility in Chromium: what axe-core cannot see on its own.

axe-core itself runs on every page, in light and dark mode, in the same page load as the
offline check (``test_site_pages.py`` calls :func:`.axe.assert_accessible`). Here: the
check can fail (a planted violation is caught, and measuring each look once hides none);
the solutions of the exercises start collapsed and open with the mouse and with the
keyboard; every calculator control has a label, results sit in a live region and messages
in an alert.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .axe import FAILING_IMPACTS, REPEAT, assert_accessible, violations
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
    with pytest.raises(AssertionError) as failed:
        assert_accessible(site_page, "planted")
    for rule in ("label", "color-contrast"):
        assert any(f"{impact}: {rule} (" in str(failed.value) for impact in FAILING_IMPACTS), (
            rule, str(failed.value))


def test_a_look_checked_once_still_catches_what_differs(site_page: RecordedPage) -> None:
    """Contrast is measured once per look (``axe.py``): a repeated paragraph is skipped,
    but a code token whose background alone differs is measured, and so is text that only
    becomes visible after a check (a solution opened later)."""
    site_page.open("book/intro.html")
    page = site_page.page
    assert not [v for v in violations(site_page) if v["id"] == "color-contrast"]
    page.evaluate(
        """() => {
          const main = document.querySelector("main");
          const line = (bg) => `<span style="background:${bg}"><span class="n">alpha</span></span>`;
          const tokens = line("#fff").repeat(40);
          main.insertAdjacentHTML("afterbegin",
            '<p>A paragraph.</p><p>Another, in the same look.</p>' +
            '<div class="highlight"><pre>' + tokens +
            line("#333").replace("<span", '<span id="dark-line"') +
            '</pre></div>' +
            '<details id="later"><summary>Solution</summary>' +
            '<p id="low" style="color:#aaa;background:#bbb">low</p></details>');
        }"""
    )
    found = [v for v in violations(site_page) if v["id"] == "color-contrast"]
    assert page.locator(f"main > p[{REPEAT}]").count() == 1, "a repeated look was measured again"
    assert len(found) == 1 and found[0]["count"] == 1 and "#dark-line" in found[0]["nodes"][0], (
        found)
    page.evaluate("document.querySelector('#later').open = true")
    found = [v for v in violations(site_page) if v["id"] == "color-contrast"]
    assert len(found) == 1 and "#low" in found[0]["nodes"][0], found


def _exercise_page(site_dir: Path) -> str:
    for page in sorted((site_dir / "exercises").glob("*.html")):
        if 'class="gl-solution"' in page.read_text(encoding="utf-8"):
            return page.relative_to(site_dir).as_posix()
    raise AssertionError("no exercise page with a solution")


def test_solutions_start_collapsed_and_open_by_click_and_keyboard(
        site_page: RecordedPage, site_dir: Path) -> None:
    path = _exercise_page(site_dir)
    # plain HTML: no need to wait for Python in the browser (the page's own check waits)
    site_page.open(path, settle=False)
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


def _toggle_names(page: object) -> list[dict[str, object]]:
    """Each dropdown's title, its button's accessible name (Chromium's, through Playwright's
    ARIA snapshot), whether the box is open, and where the button sits."""
    found = []
    buttons = page.locator("div.dropdown.admonition > .admonition-title > button.toggle-button")
    for i in range(buttons.count()):
        button = buttons.nth(i)
        facts = button.evaluate("""b => {
          const title = b.closest('.admonition-title').cloneNode(true);
          title.querySelectorAll('button, .headerlink').forEach(e => e.remove());
          const r = b.getBoundingClientRect();
          return {title: title.textContent.replace(/\\s+/g, ' ').trim(),
                  expanded: b.getAttribute('aria-expanded'),
                  hidden: b.closest('.admonition').classList.contains('toggle-hidden'),
                  box: [r.width, r.height]};
        }""")
        named = re.search(r'button "([^"]*)"', button.aria_snapshot())
        facts["name"] = named.group(1) if named else None
        found.append(facts)
    return found


def test_a_dropdowns_button_says_what_it_opens(site_page: RecordedPage) -> None:
    """2026-12-06: every folded box's button (sphinx-togglebutton) was named "Toggle hidden
    content", whatever it opened. site.js names it after the box's title, led by the hint
    the button shows ("Click to show: Answer"), and renames it as the box opens and closes
    by mouse or keyboard; the extension's own state (aria-expanded) follows, and a closed
    box's button keeps its size."""
    site_page.open("notebooks/cost_economics.html", settle=False)
    page = site_page.page
    page.wait_for_function("document.querySelectorAll('button.toggle-button[aria-label]')"
                           ".length > 0")
    before = _toggle_names(page)
    assert len(before) >= 5, before
    for box in before:
        assert box["title"] and box["expanded"] == "false" and box["hidden"], box
        assert box["name"] == f'Click to show: {box["title"]}', box
    first = page.locator("div.dropdown.admonition > .admonition-title > button.toggle-button")
    first.first.click()
    opened = _toggle_names(page)[0]
    assert opened["expanded"] == "true" and not opened["hidden"], opened
    assert opened["name"] == f'Click to hide: {opened["title"]}', opened
    first.first.focus()
    page.keyboard.press("Enter")
    closed = _toggle_names(page)[0]
    assert closed["hidden"] and closed["name"] == f'Click to show: {closed["title"]}', closed
    assert closed["box"] == before[0]["box"], (before[0], closed)
    page.keyboard.press("Space")
    assert _toggle_names(page)[0]["expanded"] == "true", "Space did not open the box again"
    site_page.assert_clean()


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


#: The focused element's ring: an outline or a box-shadow that shows, and whether an
#: ancestor that hides its overflow cuts the ring (more than a pixel of it outside that box).
_FOCUS_RING = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) { return null; }
  const s = getComputedStyle(el);
  const r = el.getBoundingClientRect();
  const width = s.outlineStyle !== 'none' ? parseFloat(s.outlineWidth) : 0;
  const shadow = s.boxShadow !== 'none' && !/^rgba\\(0, 0, 0, 0\\)/.test(s.boxShadow)
                 && /\\d+px \\d+px [1-9]/.test(s.boxShadow + ' 0px 0px 0');
  // a dropdown's button: the theme draws the ring on its title's ::before
  let drawn = false;
  for (let p = el.parentElement, i = 0; p && i < 3; p = p.parentElement, i += 1) {
    for (const pseudo of ['::before', '::after']) {
      if (getComputedStyle(p, pseudo).outlineStyle !== 'none') { drawn = true; }
    }
  }
  const spread = width > 0 ? width + parseFloat(s.outlineOffset) : 0;
  let cut = null;
  if (width > 0 && spread > 0) {
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      const ps = getComputedStyle(p);
      if (ps.overflowX === 'visible' && ps.overflowY === 'visible') { continue; }
      const b = p.getBoundingClientRect();
      if (r.top - spread < b.top - 1 || r.bottom + spread > b.bottom + 1 ||
          r.left - spread < b.left - 1 || r.right + spread > b.right + 1) {
        cut = p.tagName + '.' + String(p.className).split(' ').slice(0, 3).join('.');
      }
      break;
    }
  }
  return {what: el.tagName + '.' + String(el.className).split(' ').slice(0, 3).join('.') + ' "'
                + (el.innerText || el.getAttribute('aria-label') || '').trim().slice(0, 30) + '"',
          shown: r.width > 0 && r.height > 0, ring: width > 0 || shadow || drawn, cut};
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_keyboard_focus_is_always_seen(browser: object, site_server: object,
                                           scheme: str) -> None:
    """Tab through a lesson page (the theme's buttons and menus, the contents, folded code
    cells, dropdowns, a calculator): every stop shows a ring (an outline or a box-shadow)
    and no box that hides its overflow cuts it. 2026-12-06: the theme's .btn buttons
    (search, sidebar toggles, download menu) showed no focus at all, and a folded cell's
    "Show code cell source" showed two side bars of its ring."""
    from .harness import recorded_page

    with recorded_page(browser, site_server, scheme) as recorded:
        recorded.open("notebooks/cost_economics.html", settle=False)
        page = recorded.page
        page.add_style_tag(content="*, *::before, *::after { transition: none !important; }")
        kinds = {"BUTTON": 0, "SUMMARY": 0, "INPUT": 0, "A": 0, "SELECT": 0}
        problems = []
        first = None
        for _ in range(600):
            page.keyboard.press("Tab")
            stop = page.evaluate(_FOCUS_RING)
            if stop is None or not stop["shown"]:
                continue
            if stop["what"] == first:
                break  # round the page once
            first = first or stop["what"]
            kinds[stop["what"].split(".")[0]] = kinds.get(stop["what"].split(".")[0], 0) + 1
            if not stop["ring"]:
                problems.append(f"no ring: {stop['what']}")
            elif stop["cut"]:
                problems.append(f"ring cut by {stop['cut']}: {stop['what']}")
        assert all(kinds[k] > 0 for k in ("BUTTON", "SUMMARY", "INPUT", "A")), kinds
        assert not problems, f"{scheme}: " + "\n  ".join(sorted(set(problems)))


def test_reduced_motion_stops_the_fades(browser: object, site_server: object) -> None:
    """A reader who asks for less motion (prefers-reduced-motion) sees no animation or
    transition of any length: unfolding a code cell (myst-nb's fade), opening a dropdown
    (sphinx-togglebutton's), switching the colour mode (the theme's colour transitions).
    2026-12-06: all three ran at full length under "reduce"."""
    from .harness import new_context, record_page

    context = new_context(browser, "light")
    try:
        recorded = record_page(context, site_server)
        page = recorded.page
        page.emulate_media(reduced_motion="reduce")
        recorded.open("notebooks/cost_economics.html", settle=False)
        page.evaluate("""() => { window.glMotion = [];
          const note = (e) => window.glMotion.push(e.type + ' ' + (e.animationName ||
            e.propertyName) + ' ' + e.target.tagName + '.' + String(e.target.className)
            .slice(0, 40) + ' ' + getComputedStyle(e.target)[e.animationName !== undefined
            ? 'animationDuration' : 'transitionDuration']);
          document.addEventListener('animationstart', note, true);
          document.addEventListener('transitionrun', note, true); }""")
        page.locator("details.hide > summary").first.click()
        page.locator("div.dropdown.admonition button.toggle-button").first.click()
        page.locator("button.theme-switch-button").first.click()
        page.wait_for_timeout(500)
        started = page.evaluate("window.glMotion")
        assert started, "nothing moved at all: the check would see no motion to stop"
        slow = [m for m in started if not m.endswith(" 1e-05s") and not m.endswith(" 0s")]
        assert not slow, "\n".join(slow[:10])
        recorded.assert_clean()
    finally:
        context.close()
