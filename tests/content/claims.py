"""Claims: a figure as a page states it, held against the call that computes it.

A page of the course (a lesson notebook's markdown, or a narrative page in ``book/``) states
figures in its prose: "Llama-3-8B keeps 128 KiB per token". Each such figure is a
:class:`Claim`: a function that builds, from the calculators, the text exactly as it reads
in the page's markdown. The claim holds while the page still says what the calculators
give: a change of formula, or an edit of the sentence, fails the test that names the claim.
The expected text is the calculators' own output, never a second typed copy, so fixing a
formula constant means fixing the constant and the sentences that state its figures; the
claim lists stay as they are. A failing claim names the text the calculators now give and
the passage of the page closest to it.

``uncovered_figures`` closes the loop: every number in the prose must lie inside a claim's
text or inside an explicitly listed non-figure (a year, "lesson 7", a formula's constant),
so a figure added to a page without a claim fails too.

Matching is on the markdown as written, with whitespace collapsed and MyST's backslash
escapes removed (:func:`rendered`), so a claim may span a line break of the source and
``\\$`` on the page is ``$`` in the claim. Maths stays as written (``$T^\\ast$``).
"""

from __future__ import annotations

import difflib
import functools
import json
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True, eq=False)
class Claim:
    """A figure on a page: ``compute`` returns, from the calculators, the text exactly as
    the page's markdown has it."""

    compute: Callable[[], str]

    @functools.cached_property
    def text(self) -> str:
        """The text the calculators give, computed once."""
        return self.compute()

    def check(self, page: str, where: str) -> None:
        """Fail unless the page (:func:`page` text) holds the text the calculators give;
        the message quotes the passage of the page closest to it."""
        text = rendered(self.text)
        assert text in page, (f"{where} no longer says what the calculators give, {text!r}; "
                              f"closest on the page: {closest(text, page)!r}")


def claims(*computes: Callable[[], str]) -> list[Claim]:
    """A list of claims, one per function that builds a figure's text."""
    for compute in computes:
        if not callable(compute):
            raise TypeError(f"a claim is the call that builds the page's text, not "
                            f"{compute!r}: the page holds the only typed copy")
    return [Claim(compute) for compute in computes]


def _claim_id(claim: Claim) -> str:
    """A claim's test id: the name of the function that builds its text, or the line where
    a lambda stands. Not the text itself: computing it would run the claim's calculators
    (the planning lesson's take seconds: leave-one-out refits) when the test is collected,
    in every xdist worker, rather than once when it runs. A failing claim quotes its text."""
    code = getattr(claim.compute, "__code__", None)
    name = getattr(claim.compute, "__name__", "claim")
    if code is None or name != "<lambda>":
        return name
    return f"{Path(code.co_filename).stem}:{code.co_firstlineno}"


def parametrize(items: Sequence[Claim]) -> pytest.MarkDecorator:
    """``@parametrize(CLAIMS)``: one test per claim, named after the function that builds
    its text (:func:`_claim_id`)."""
    return pytest.mark.parametrize("claim", items,
                                   ids=[_claim_id(c) for c in items])


def claim_test(claimed: Sequence[Claim], page_text: str, where: str) -> Callable[[Claim], None]:
    """``test_claim = claim_test(CLAIMS, PAGE, where)``: one test per claim of ``claimed``
    (:func:`parametrize`), each failing when the page (:func:`page` text) no longer says
    what the calculators give; ``where`` names the page in the message."""

    @parametrize(claimed)
    def test_claim(claim: Claim) -> None:
        claim.check(page_text, where)

    return test_claim


def claim_tests(module: str, path: Path) -> tuple[Callable[..., None], ...]:
    """The tests of a page's figures, for the content test ``module`` (its ``__name__``)
    of the page at ``path``, which defines ``CLAIMS`` and ``NOT_FIGURES`` (the numbers of
    its prose that are not results); the claims are checked in :func:`page` of ``path``::

        (test_claim, test_every_figure_is_claimed,
         test_every_listed_non_figure_is_on_the_page) = claim_tests(__name__, NOTEBOOK)

    ``test_claim``: one test per claim (:func:`claim_test`); ``test_every_figure_is_claimed``:
    every figure of the prose lies in a claim's text or a listed non-figure
    (:func:`uncovered_figures`); ``test_every_listed_non_figure_is_on_the_page``: no listed
    non-figure is stale. ``NOT_FIGURES`` is read when the tests run, so the module may add
    to it after this call (a "Going further" box's claims, checked by their own
    :func:`claim_test`). Each test carries the page it reads (``page``) and the module whose
    ``CLAIMS`` it checks (``content_module``)."""
    defined = sys.modules[module]
    page_text = page(path)
    where = (path.resolve().relative_to(REPO).as_posix() if path.resolve().is_relative_to(REPO)
             else path.name)

    def test_every_figure_is_claimed() -> None:
        covered = [c.text for c in defined.CLAIMS] + list(defined.NOT_FIGURES)
        missing = uncovered_figures(markdown_of(path), covered)
        assert not missing, f"{where}: figures that are neither claimed nor listed: {missing}"

    def test_every_listed_non_figure_is_on_the_page() -> None:
        stale = [text for text in defined.NOT_FIGURES if rendered(text) not in page_text]
        assert not stale, f"{where} no longer says these listed non-figures: {stale}"

    tests = (claim_test(defined.CLAIMS, page_text, where), test_every_figure_is_claimed,
             test_every_listed_non_figure_is_on_the_page)
    for test in tests:  # what they check, for the rule that every lesson checks its own page
        test.page, test.content_module = path.resolve(), module  # type: ignore[attr-defined]
    return tests


def closest(text: str, page: str) -> str:
    """The passage of ``page`` (as long as ``text``, starting at a word) most like
    ``text``: what the page says where the calculators' text was expected."""
    if not page:
        return ""
    starts = [0] + [m.end() for m in re.finditer(r" ", page)]
    windows = [page[i:i + len(text)] for i in starts]
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(text)

    def likeness(window: str) -> float:
        matcher.set_seq1(window)
        return matcher.quick_ratio() and matcher.ratio()

    ranked = sorted(windows, key=lambda w: (-_quick(w, text), w))[:50]
    return max(ranked, key=likeness)


def _quick(window: str, text: str) -> int:
    """Shared words of ``window`` and ``text``: a cheap first ranking for :func:`closest`."""
    return len(set(window.split()) & set(text.split()))


# ---------------------------------------------------------------------------------------
# Reading pages


def _unescaped(markdown: str) -> str:
    return re.sub(r"\\([$*_#|])", r"\1", markdown)


def rendered(markdown: str) -> str:
    r"""The text for matching: MyST's backslash escapes (``\$``, ``\*`` ...) removed and all
    whitespace collapsed to single spaces."""
    return " ".join(_unescaped(markdown).split())


def markdown_of(path: Path) -> str:
    """A page's markdown: a ``.md`` file as it is, or every markdown cell of a notebook, in
    order, separated by a blank line."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".ipynb":
        return text
    cells = json.loads(text)["cells"]
    return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def page(path: Path) -> str:
    """The page as :func:`rendered` text, for :meth:`Claim.check`."""
    return rendered(markdown_of(path))


# ---------------------------------------------------------------------------------------
# Every figure is claimed

#: A number as prose writes it: 8,192 or 3.35 or 0.5, not glued to letters (H100, FP16,
#: 70B and sm_90 are names, not figures).
_NUMBER = re.compile(r"(?<![\w.,])\d+(?:,\d{3})*(?:\.\d+)?(?![\w])")
#: Parts of a page whose digits are not figures: labels, roles ({ref}`..`, {cite}`..`,
#: {term}`..`), link targets, directive names and option lines, fenced code, comments,
#: HTML tags, headings' section numbers, the numbers of an ordered list's items and bare
#: years.
_NOT_PROSE = (
    re.compile(r"^\(\w+\)=$", re.M),
    re.compile(r"\{(?:ref|cite(?::\w+)?|numref|doc|download)\}`[^`]*`"),
    re.compile(r"\]\([^)]*\)"),
    re.compile(r"^(`{3,}|~{3,}|:{3,}).*$", re.M),
    re.compile(r"^:[\w-]+:.*$", re.M),
    re.compile(r"<!--.*?-->|^%.*$", re.M | re.S),
    re.compile(r"<[^>\n]+>"),
    re.compile(r"^#+ \d+(?:\.\d+)*\.?", re.M),
    re.compile(r"^ {0,3}\d+\.(?= )", re.M),
    re.compile(r"(`+)(?:(?!\1)(?:[^\n`]|\n(?![ \t]*\n)))+?\1"),
)
_YEAR = re.compile(r"(?:19|20)\d\d")


_TERM = re.compile(r"(\{term\}`)([^`<]*?)((?:\s*<[^<>`]+>)?`)")
_FENCE = re.compile(r"^(`{3,}|~{3,}|:{3,})\s*(\S*)")
_CODE_DIRECTIVES = ("{code", "{code-block", "{code-cell", "{literalinclude")


def _blank(text: str) -> str:
    return re.sub(r"\S", "\x01", text)


def _without_code_blocks(text: str) -> str:
    """``text`` with fenced code blocks blanked. Fences are read in order, as MyST does:
    a bare fence closes the innermost open fence of the same character and at most its
    length, and opens a code block only when no such fence is open."""
    out, stack, code = [], [], None  # stack: (char, length) of open directive fences
    for line in text.split("\n"):
        m = _FENCE.match(line)
        if code is not None:  # inside a code block: only its own closing fence ends it
            if m and m.group(1)[0] == code[0] and len(m.group(1)) >= code[1] \
                    and not m.group(2):
                code = None
            out.append(_blank(line))
            continue
        if m:
            mark, info = m.group(1), m.group(2)
            opens_code = mark[0] != ":" and (not info.startswith("{")
                                             or info.startswith(_CODE_DIRECTIVES))
            if not info and stack and stack[-1][0] == mark[0] and stack[-1][1] <= len(mark):
                stack.pop()
            elif opens_code:
                code = (mark[0], len(mark))
            elif info:
                stack.append((mark[0], len(mark)))
        out.append(line)
    return "\n".join(out)


def _prose_only(markdown: str) -> str:
    """:func:`rendered` text with every character outside the prose blanked (``\x01``):
    the same length and offsets as ``rendered(markdown)``."""
    text = _without_code_blocks(_unescaped(markdown))
    # a {term} role's text is prose; its role name and target are not
    text = _TERM.sub(lambda m: _blank(m.group(1)) + m.group(2) + _blank(m.group(3)), text)
    for pattern in _NOT_PROSE:
        text = pattern.sub(lambda m: _blank(m.group(0)), text)
    return " ".join(text.split())


def figures(markdown: str) -> list[tuple[int, str]]:
    """``(offset, number)`` of each figure in the prose of ``markdown`` (offsets into
    :func:`rendered` text). Integers below 10 and years are words, not figures, unless an
    escaped dollar sign stands before them (``\\$2`` is a price; ``$2^{10}$`` is maths)."""
    found = []
    prose = _prose_only(markdown)
    # the same text with each escaped dollar one marker character: offsets unchanged
    marked = _prose_only(markdown.replace("\\$", "\x02"))
    for m in _NUMBER.finditer(prose):
        token = m.group(0)
        price = m.start() > 0 and marked[m.start() - 1] == "\x02"
        if not price and (_YEAR.fullmatch(token)
                          or ("," not in token and "." not in token and int(token) < 10)):
            continue
        found.append((m.start(), token))
    return found


def uncovered_figures(markdown: str, covered: Iterable[str]) -> list[str]:
    """The figures of ``markdown``'s prose that lie inside no occurrence of a ``covered``
    text (the claims' texts and the page's listed non-figures), each with its context."""
    text = rendered(markdown)
    spans = []
    for item in covered:
        needle = rendered(item)
        start = text.find(needle)
        while needle and start >= 0:
            spans.append((start, start + len(needle)))
            start = text.find(needle, start + 1)
    missing = []
    for offset, token in figures(markdown):
        if not any(a <= offset and offset + len(token) <= b for a, b in spans):
            missing.append(f"{token!r} in …{text[max(0, offset - 40):offset + 40]}…")
    return missing
