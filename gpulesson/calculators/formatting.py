"""Output values written for a reader, and values made safe for JavaScript.

:func:`format_output` writes an output's SI value with its unit (prefixes and GB vs GiB
from :mod:`gpulesson.units`); :func:`to_json` turns integers above 2^53, which a
JavaScript number cannot hold exactly, into strings before anything crosses into the
browser.

Standard library only: this module runs in the browser (Pyodide).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from gpulesson import _validate, units
from gpulesson.calculators.spec import Output

__all__ = ["MAX_SAFE_INTEGER", "format_output", "message_number", "to_json"]

#: Integers larger than 2^53 lose precision in JavaScript, whose numbers are doubles.
MAX_SAFE_INTEGER = 2**53
_FLOAT_MAX_INT = int(_validate.FLOAT_MAX)


#: Beyond these magnitudes a number in a message is written in scientific notation: a
#: whole 1e308 has 309 digits (and 102 commas), 1e-300 has 300 zeros.
HUGE = 1e15
TINY = 1e-4


def message_number(value: Any) -> str:
    """A number as an error message shows it (a limit, or what a reader typed): whole
    numbers with thousands separators (``65536 -> '65,536'``), others to six figures, and
    beyond :data:`HUGE` or under :data:`TINY` in scientific notation (``1e308 ->
    '1e+308'``, ``1e-300 -> '1e-300'``); ``None`` is ``'?'``."""
    if value is None:
        return "?"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return repr(value)[:60]
    if isinstance(value, int) and abs(value) > _FLOAT_MAX_INT:
        return _validate._int_text(value)  # no float holds it
    value = float(value)
    if not math.isfinite(value):
        return repr(value)
    magnitude = abs(value)
    if magnitude >= HUGE or 0 < magnitude < TINY:
        return f"{value:.4g}"  # 'g' writes an exponent at these magnitudes
    if value.is_integer() and magnitude >= 1e4:
        return f"{int(value):,}"
    return f"{value:g}"


def format_output(spec: Output, value: Any) -> str:
    """Format an output value for a reader (units from :mod:`gpulesson.units`)."""
    fmt = spec.format
    if value is None and spec.missing:  # none for these inputs (a break-even never reached)
        return spec.missing
    if fmt == "text":
        return str(value)
    if fmt == "bool":
        return "yes" if value else "no"
    if fmt == "ratio":
        return f"{units.format_significant(value, spec.digits)}×"
    if fmt == "intensity":
        return f"{units.format_significant(value, spec.digits)} FLOP/byte"
    if fmt == "flops" and abs(value) >= 1e21:  # beyond the E prefix: powers of ten
        return _power_of_ten(value, spec.digits) + " FLOP"
    if fmt == "words":
        return _in_words(value, spec.digits, spec.unit)
    if fmt == "bytes" and spec.binary:
        return f"{units.format_bytes(value)} ({_binary_figure(value)})"
    if fmt == "number":
        text = units.format_significant(value, spec.digits)
        return f"{text} {spec.unit}".strip()
    if fmt == "bytes/s":  # significant digits, as the lesson writes them: 419 GB/s, 1.68 TB/s
        # the prefix of the rounded figure: 999.6 GB/s is 1.00 TB/s, not "1,000 GB/s"
        rounded = float(f"{value:.{spec.digits}g}")
        number, prefixed = units.format_bandwidth(rounded, digits=12).split(" ")
        text = f"{units.format_significant(float(number.replace(',', '')), spec.digits)} {prefixed}"
        return f"{text} {spec.unit}".strip() if spec.unit else text
    if fmt == "usd":  # one style beside each other: cents below $1,000, whole dollars above
        text = units.format_usd(value, cents=abs(value) < 1000)
        return f"{text} {spec.unit}".strip() if spec.unit else text
    text = units.format_quantity(value, fmt)
    return f"{text} {spec.unit}".strip() if spec.unit else text


def _binary_figure(value: float, figures: int = 3) -> str:
    """A byte count in binary units to at most ``figures`` significant figures, without
    trailing zeros: ``2**30 -> '1 GiB'``, ``469762048 -> '448 MiB'``, ``6.25 * 2**30 ->
    '6.25 GiB'``; never ``'1.00 GiB'``, whose zeros claim a precision the decimal figure
    beside it lacks. The prefix is :func:`gpulesson.units.format_bytes`'s."""
    whole = units.format_bytes(value, binary=True, digits=0).split(" ")[0]
    integer_digits = len(whole.replace(",", "").lstrip("-"))
    text = units.format_bytes(value, binary=True, digits=max(figures - integer_digits, 0))
    number, unit = text.split(" ")
    if "." in number:
        number = number.rstrip("0").rstrip(".")
    return f"{number} {unit}"


_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def _power_of_ten(value: float, digits: int) -> str:
    """``8.09e22 -> '8.09 × 10²²'``."""
    mantissa, exponent = f"{value:.{max(digits - 1, 0)}e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


_WORDS = ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"), (1e3, "thousand"))


def _in_words(value: float, digits: int, unit: str) -> str:
    """``1.348e11 -> '135 billion'``: large counts a reader can say aloud."""
    for factor, word in _WORDS:
        if abs(value) >= factor:
            return f"{units.format_significant(value / factor, digits)} {word} {unit}".strip()
    return f"{units.format_significant(value, digits)} {unit}".strip()


def to_json(value: Any) -> Any:
    """``value`` made JSON-safe for the browser: integers above 2^53 become strings."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value) if abs(value) > MAX_SAFE_INTEGER else value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot send a non-finite number to the browser: {value!r}")
        return value
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    return str(value)
