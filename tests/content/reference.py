"""What the course's pages have in common, defined once for their content tests: the GPUs
and models they quote (looked up in gpulesson's tables, never retyped) and the ways a page
prints a figure. The lesson tests (``test_<slug>.py``) and the figures of the narrative
pages (``book_figures.py``) import them from here.
"""

from __future__ import annotations

from gpulesson import units
from gpulesson.hardware import gpu
from gpulesson.transformer import param_count, preset

# ---------------------------------------------------------------------------------------
# The GPUs and models the pages quote

H100 = gpu("H100 SXM")
A100 = gpu("A100 80GB")
RTX = gpu("RTX 4090")
GPT3 = preset("gpt3-175b")
L27 = preset("llama-2-7b")
L38 = preset("llama-3-8b")
L270 = preset("llama-2-70b")
L370 = preset("llama-3-70b")
L405 = preset("llama-3.1-405b")
N7 = param_count(L27)
N405 = param_count(L405)


# ---------------------------------------------------------------------------------------
# A figure as a page prints it


def pct(fraction: float, digits: int = 0) -> str:
    """A share as most lessons write it, with a space before the sign: "46.2 %"."""
    return f"{100 * fraction:.{digits}f} %"


def pct_unspaced(fraction: float, digits: int = 0) -> str:
    """A share as the narrative pages and the cost lessons write it: "46.2%"."""
    return f"{100 * fraction:.{digits}f}%"


def gb(n_bytes: float, digits: int = 1) -> str:
    """Bytes in decimal units, as :func:`gpulesson.units.format_bytes` prints them."""
    return units.format_bytes(n_bytes, digits=digits)


def dollars(amount: float) -> str:
    """Whole dollars, as the pages write large sums: "$11,379"."""
    return units.format_usd(amount, cents=False)


__all__ = ["A100", "GPT3", "H100", "L27", "L38", "L270", "L370", "L405", "N7", "N405", "RTX",
           "dollars", "gb", "pct", "pct_unspaced"]
