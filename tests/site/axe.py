"""axe-core in the browser tests: run it on an open page, in light and in dark mode.

axe-core comes from npm (pinned in ``package-lock.json``; ``make test`` runs ``npm ci``) and
is injected as an inline script, so running it makes no request. Its default rules cover
WCAG 2.x A and AA (colour contrast, labels, names, landmarks ...) and best practices; the
course fails a page on any violation of *serious* or *critical* impact.
"""

from __future__ import annotations

from typing import Any

import pytest

from .building import REPO_ROOT
from .harness import RecordedPage

AXE = REPO_ROOT / "node_modules" / "axe-core" / "axe.min.js"
FAILING_IMPACTS = ("serious", "critical")

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
    return page.evaluate(_RUN, rules)


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
