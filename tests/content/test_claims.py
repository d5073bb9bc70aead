"""The claim machinery itself (``tests/content/claims.py``): what counts as a figure, and
when a claim or a listed non-figure covers it."""

from __future__ import annotations

import pytest

from .claims import Claim, figures, rendered, uncovered_figures

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
    page = rendered(PAGE)
    Claim("reads 3.35 TB/s", lambda: "reads 3.35 TB/s").check(page, "the page")
    with pytest.raises(AssertionError, match="calculators now give"):
        Claim("reads 3.35 TB/s", lambda: "reads 3.36 TB/s").check(page, "the page")
    with pytest.raises(AssertionError, match="no longer on"):
        Claim("reads 3.36 TB/s", lambda: "reads 3.36 TB/s").check(page, "the page")


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


def test_roles_and_wrapped_code_spans() -> None:
    """A plain {term} role leaves no stray backtick behind, and a code span that wraps
    over a line break is code."""
    page = "The {term}`ridge point` is 295 FLOP/byte; `x =\n4096` is code; 61 more.\n"
    assert [token for _, token in figures(page)] == ["295", "61"]
