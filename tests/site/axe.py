"""axe-core in the browser tests: run it on an open page, in light and in dark mode.

axe-core comes from npm (pinned in ``package-lock.json``; ``make test`` runs ``npm ci``) and
is injected as an inline script, so running it makes no request. Its default rules cover
WCAG 2.x A and AA (colour contrast, labels, names, landmarks ...) and best practices; the
course fails a page on any violation of *serious* or *critical* impact.

Colour contrast is checked once per look, not once per element. A lesson page holds some
12,000 elements, 7,000 of them highlighted code tokens in a few dozen styles, and the same
paragraphs, tables and controls recur on every page; axe's contrast check (a stack of
backgrounds per element) took about two thirds of its time. Before each run, every element
that shows text is given a look: its own computed colour, background, opacity, font size,
weight, position and clipping, its tag and class, and the same of each of its ancestors up
to the root. An element whose look was already checked, earlier on the page or on an earlier
page in this test process, is marked, and the contrast rule skips the marked ones. Every
other rule still sees every element, and every look a reader can see is measured once. Only
elements axe would measure count as checked: visible ones (a closed solution is not), with a
letter or a digit in their own text, or form controls. ``test_accessibility.py`` plants
looks that differ only in their background, or that only become visible later, and axe must
report each.
"""

from __future__ import annotations

from typing import Any

import pytest

from .building import REPO_ROOT
from .harness import RecordedPage

AXE = REPO_ROOT / "node_modules" / "axe-core" / "axe.min.js"
FAILING_IMPACTS = ("serious", "critical")
#: The attribute that marks an element whose look was already checked for contrast.
REPEAT = "data-gl-axe-repeat"
#: The looks this test process has had checked (hashes from ``_MARK_REPEATS``).
_CHECKED_LOOKS: set[str] = set()

_MARK_REPEATS = """
([attr, checked]) => {
  const done = new Set(checked);
  const hash = (text) => {  // FNV-1a and the same with Murmur's multiplier: 64 bits
    let a = 0x811c9dc5, b = 0x811c9dc5;
    for (let i = 0; i < text.length; i += 1) {
      const c = text.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x5bd1e995);
    }
    return (a >>> 0).toString(16) + "-" + (b >>> 0).toString(16);
  };
  const looks = new Map();
  const lookOf = (el) => {
    if (!el) { return ""; }
    if (!looks.has(el)) {
      const s = getComputedStyle(el);
      const own = [el.tagName, el.getAttribute("class"), s.color, s.backgroundColor,
                   s.backgroundImage, s.opacity, s.fontSize, s.fontWeight, s.textShadow,
                   s.webkitTextStrokeWidth, s.display, s.visibility, s.position, s.zIndex,
                   s.clip, s.clipPath, s.filter, s.mixBlendMode].join(" ");
      looks.set(el, hash(own + " < " + lookOf(el.parentElement)));
    }
    return looks.get(el);
  };
  const CONTROLS = new Set(["INPUT", "SELECT", "TEXTAREA", "BUTTON", "OPTION"]);
  const measured = (el) => {
    if (!el.checkVisibility({opacityProperty: true, visibilityProperty: true})) {
      return false;
    }
    if (CONTROLS.has(el.tagName)) { return true; }
    for (const node of el.childNodes) {
      if (node.nodeType === Node.TEXT_NODE && /[\\p{L}\\p{N}]/u.test(node.data)) {
        return true;
      }
    }
    return false;
  };
  for (const el of document.querySelectorAll("[" + attr + "]")) { el.removeAttribute(attr); }
  const fresh = new Set();
  for (const el of document.body.querySelectorAll("*")) {
    if (!measured(el)) { continue; }
    const look = lookOf(el);
    if (done.has(look) || fresh.has(look)) { el.setAttribute(attr, ""); }
    else { fresh.add(look); }
  }
  return Array.from(fresh);
}
"""

_RUN = """
async (rules) => {
  const options = { resultTypes: ["violations"] };
  if (rules) { options.runOnly = { type: "rule", values: rules }; }
  const result = await axe.run(document, options);
  return result.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help, count: v.nodes.length,
    nodes: v.nodes.slice(0, 4).map((n) => n.target.join(" ") + " :: " +
                                           (n.failureSummary || "").replace(/\\s+/g, " ")),
  }));
}
"""


def violations(recorded: RecordedPage, rules: list[str] | None = None) -> list[dict[str, Any]]:
    """Every axe-core violation of the open page, whatever its impact (``rules``: only
    these axe rules; default: all of axe's default rules)."""
    if not AXE.is_file():
        pytest.fail(f"{AXE} is missing: run `npm ci` (make test does)", pytrace=False)
    page = recorded.page
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
        page.evaluate("(attr) => axe.configure({rules: [{id: 'color-contrast', "
                      "selector: `*:not([${attr}])`}]})", REPEAT)
    if rules is not None and "color-contrast" not in rules:
        return page.evaluate(_RUN, rules)
    # marked afresh before each contrast run: the page's colours may have changed since
    fresh = page.evaluate(_MARK_REPEATS, [REPEAT, sorted(_CHECKED_LOOKS)])
    found = page.evaluate(_RUN, rules)
    _CHECKED_LOOKS.update(fresh)
    return found


def serious(found: list[dict[str, Any]]) -> list[str]:
    """The serious and critical violations, one readable block each."""
    return [f"{v['impact']}: {v['id']} ({v['help']}), {v['count']} element(s):\n      "
            + "\n      ".join(v["nodes"]) for v in found if v["impact"] in FAILING_IMPACTS]


def assert_accessible(recorded: RecordedPage, what: str) -> None:
    """axe-core finds nothing serious on the open page, in light and then in dark mode.

    All default rules run in the page's own mode; then the page is switched the way a
    reader's system switches it (``prefers-color-scheme``; the site follows it in its
    default "auto" mode) and the colour contrast, the one property a colour mode changes,
    is checked again. One page load checks both. The theme's colour transitions are
    turned off first, so that no colour is measured half-way.
    """
    page = recorded.page
    problems = [f"[light] {p}" for p in serious(violations(recorded))]
    page.add_style_tag(content="*, *::before, *::after { transition: none !important; "
                               "animation: none !important; }")
    page.emulate_media(color_scheme="dark")
    try:
        page.wait_for_function("document.documentElement.dataset.theme === 'dark'",
                               timeout=5_000)
        found = violations(recorded, ["color-contrast"])
        problems += [f"[dark] {p}" for p in serious(found)]
    finally:
        page.emulate_media(color_scheme="light")
    assert not problems, f"{what}: axe-core\n  " + "\n  ".join(problems)
