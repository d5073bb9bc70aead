"""Formatting and parsing of quantities with units.

Every formula in :mod:`gpulesson` works in SI base units (bytes, FLOPs, seconds, bytes/s,
FLOP/s, watts, USD). Prefixes appear only here, at the edge where a number meets a reader:

* decimal prefixes (k, M, G, T, P, E = 10^3 ... 10^18) for bytes, FLOPs and rates, as GPU
  datasheets use them ("80 GB", "3.35 TB/s", "989 TFLOP/s"); a typed FLOP count also
  reads Z and Y (10^21, 10^24), the scale of a training run ("26.95 ZFLOP");
* binary prefixes (KiB, MiB, GiB, TiB = 2^10 ... 2^40) only when asked for, and always
  spelled with the ``i`` so a reader can tell them apart (1 GiB = 1.0737 GB).

Standard library only: this module also runs in the browser (Pyodide).
Taught in: ``book/conventions.md`` (GB vs GiB, FLOPs vs FLOP/s).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

from gpulesson import _validate

__all__ = [
    "DIMENSIONS",
    "format_bandwidth",
    "format_by_size",
    "format_bytes",
    "format_flop_rate",
    "format_flops",
    "format_quantity",
    "format_seconds",
    "format_significant",
    "format_usd",
    "keep_percent",
    "parse_bare_power",
    "parse_quantity",
    "parse_scaled_number",
    "parse_scaled_quantity",
    "significant_figures",
]

_SI = [(1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")]
_BINARY = [(2.0**40, "Ti"), (2.0**30, "Gi"), (2.0**20, "Mi"), (2.0**10, "Ki"), (1.0, "")]


_MAX_DIGITS = 20


def _check_number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} "
                        f"{_validate._short_repr(value)}")
    try:
        value = float(value)
    except OverflowError:
        raise ValueError(f"{name} must be a finite number no larger than "
                         f"{_validate.FLOAT_MAX:.4g}, got {_validate._short_repr(value)}"
                         ) from None
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return value


def _check_digits(digits: object, *, low: int) -> int:
    """``digits`` as an ``int`` from ``low`` (0 for decimals, 1 for significant figures)
    to 20, else ``ValueError``/``TypeError`` naming it."""
    if isinstance(digits, bool) or not isinstance(digits, int):
        raise TypeError(f"digits must be an integer from {low} to {_MAX_DIGITS}, got "
                        f"{_validate._short_repr(digits)} ({type(digits).__name__})")
    if not low <= digits <= _MAX_DIGITS:
        what = "a positive integer" if low == 1 else "an integer"
        raise ValueError(f"digits must be {what} from {low} to {_MAX_DIGITS}, got {digits}")
    return digits


def _scaled(value: float, table: list[tuple[float, str]], digits: int) -> tuple[str, str]:
    """Pick the largest prefix that keeps the mantissa >= 1 and format it."""
    magnitude = abs(value)
    for factor, prefix in table:
        if magnitude >= factor:
            return f"{value / factor:,.{digits}f}", prefix
    return f"{value:,.{digits}g}", ""


def format_bytes(n: float, *, binary: bool = False, digits: int = 1) -> str:
    """Format a byte count: ``14e9 -> '14.0 GB'``; with ``binary=True`` ``-> '13.0 GiB'``."""
    value = _check_number("n", n)
    text, prefix = _scaled(value, _BINARY if binary else _SI, _check_digits(digits, low=0))
    return f"{text} {prefix}B"


def format_flops(n: float, *, digits: int = 2) -> str:
    """Format a FLOP *count*: ``1.1e9 -> '1.10 GFLOP'`` (a count has no ``/s``)."""
    text, prefix = _scaled(_check_number("n", n), _SI, _check_digits(digits, low=0))
    return f"{text} {prefix}FLOP"


def format_flop_rate(rate: float, *, digits: int = 1) -> str:
    """Format a FLOP *rate*: ``989.4e12 -> '989.4 TFLOP/s'``."""
    text, prefix = _scaled(_check_number("rate", rate), _SI, _check_digits(digits, low=0))
    return f"{text} {prefix}FLOP/s"


def format_bandwidth(rate: float, *, digits: int = 2) -> str:
    """Format bytes per second with decimal prefixes: ``3.35e12 -> '3.35 TB/s'``."""
    text, prefix = _scaled(_check_number("rate", rate), _SI, _check_digits(digits, low=0))
    return f"{text} {prefix}B/s"


def format_seconds(seconds: float, *, digits: int = 3) -> str:
    """Format a duration with a readable unit: ns, µs, ms, s, min, h or days.

    ``digits`` is the number of significant digits.
    """
    s = _check_number("seconds", seconds)
    digits = _check_digits(digits, low=1)
    magnitude = abs(s)
    for factor, unit in [(86400.0, "days"), (3600.0, "h"), (60.0, "min"), (1.0, "s"),
                         (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")]:
        if magnitude >= factor:
            return f"{_significant(s / factor, digits)} {unit}"
    return f"{_significant(s / 1e-9, digits)} ns" if s else "0 s"


def format_usd(amount: float, *, cents: bool | None = None, digits: int | None = None) -> str:
    """Format US dollars: ``1234.5 -> '$1,234.50'``, ``0.0831 -> '$0.0831'``.

    Amounts under one dollar keep three significant digits so that costs per 1K tokens
    stay readable; ``cents`` forces (True) or drops (False) two decimals. ``digits`` shows
    that many significant digits instead (``6867.84 -> '$6,868'`` with 4,
    ``0.0017528 -> '$0.001753'``), with two decimals when any are shown (``'$2.50'``):
    what an answer checked to a tolerance shows.
    """
    value = _check_number("amount", amount)
    sign = "-" if value < 0 else ""
    value = abs(value)
    if digits is not None:
        text = _significant(value, _check_digits(digits, low=1))
        if "." in text and "e" not in text:
            whole, fraction = text.split(".")
            fraction = fraction.rstrip("0")
            text = whole if not fraction else f"{whole}.{fraction.ljust(2, '0')}"
        return f"{sign}${text}"
    if cents is None:
        cents = value < 1e6
    if (0 < value < 1 and cents) or value >= SCIENTIFIC_ABOVE:
        return f"{sign}${_significant(value, 3)}"
    return f"{sign}${_fixed(value, 2 if cents else 0)}"


#: The space a line must not break at: after a digit, before a percent sign.
_PERCENT_SPACE = re.compile(r"(?<=\d) (?=%)")


def keep_percent(text: str) -> str:
    """``text`` with a no-break space (U+00A0) between each digit and the "%" after it.

    The course writes a share with a space before its sign ("6.7 %"); a narrow column may
    break a line at that space and start the next with "%". The site's pages
    (``scripts/gl_typography.py``), the exercises' texts and the calculators' help join
    them with this."""
    return _PERCENT_SPACE.sub("\u00a0", text)


def format_significant(value: float, digits: int) -> str:
    """``value`` with ``digits`` significant figures and thousands separators:
    ``1234.5 -> '1,235'`` (3, a half rounded up), ``0.012345 -> '0.0123'`` (3); an ``int``
    exactly, whole (``12 -> '12'``, not ``'12.0'``; no detour through float above 2^53)."""
    digits = _check_digits(digits, low=1)
    if isinstance(value, int) and not isinstance(value, bool):
        _validate.number_at_least("value", value, -_validate.FLOAT_MAX)
        if abs(value) < SCIENTIFIC_ABOVE:
            return f"{value:,}"
    value = _check_number("value", value)
    if value == 0:
        return "0"
    if not SCIENTIFIC_BELOW <= abs(value) < SCIENTIFIC_ABOVE:
        return f"{value:.{digits - 1}e}"  # not 300 zeros, nor 102 commas
    magnitude = math.floor(math.log10(abs(value)))
    decimals = max(digits - 1 - magnitude, 0)
    text = _fixed(value, decimals)
    if decimals and math.floor(math.log10(abs(float(text.replace(",", ""))) or 1)) > magnitude:
        text = _fixed(value, decimals - 1)  # 9.995 to 3 figures is 10.0, not 10.00
    return text


def _fixed(value: float, decimals: int) -> str:
    """``value`` with ``decimals`` decimals and thousands separators, a half rounded up as
    a reader rounds it: ``62.5 -> '63'`` and ``13.5 -> '14'`` (Python's own formatting
    rounds half to even). The half is read in ``value`` to 15 significant digits, as a
    reader writes it: the float under ``2.675`` is just below it, and 50,000 times
    $0.00225 comes out as 112.49999999999999."""
    # 15 significant digits, where they reach the decimals asked for
    text = (f"{float(value):.15g}" if abs(value) < 10.0 ** (15 - decimals)
            else repr(float(value)))
    exact = Decimal(text).quantize(Decimal(1).scaleb(-decimals), ROUND_HALF_UP)
    return f"{exact:,.{decimals}f}"


def significant_figures(value: float) -> int:
    """How many significant figures ``value`` is written with, float noise dropped (15 at
    most): ``28_350_000 -> 4``, ``85.520809984 -> 11``, ``0.00123 -> 3``, ``0 -> 0``."""
    value = _check_number("value", value)
    return len(f"{abs(float(value)):.15g}".split("e")[0].replace(".", "").strip("0"))


def format_by_size(value: float, steps: tuple[tuple[float, str], ...]) -> str:
    """``value`` in the format spec of the first ``(at_least, spec)`` step it reaches, the
    last step's below them all: a table's column that shows fewer decimals as its numbers
    grow. ``((100, ",.0f"), (10, ".1f"), (0, ".3g"))`` writes ``1234.5 -> '1,234'``,
    ``12.34 -> '12.3'``, ``0.0123 -> '0.0123'``."""
    value = _check_number("value", value)
    if not isinstance(steps, tuple) or not steps or not all(
            isinstance(step, tuple) and len(step) == 2 and isinstance(step[1], str)
            and not isinstance(step[0], bool) and isinstance(step[0], (int, float))
            for step in steps):
        raise TypeError("steps must be a non-empty tuple of (at_least, format spec) pairs, "
                        f"got {_validate._short_repr(steps)}")
    spec = next((spec for at_least, spec in steps if value >= at_least), steps[-1][1])
    try:
        return format(value, spec)
    except ValueError:
        raise ValueError(f"steps must hold format specs for a float, such as '.1f'; "
                         f"{spec!r:.40} is not one") from None


#: Beyond these magnitudes :func:`format_significant` and :func:`format_usd` write
#: scientific notation (``1e308 -> '1.00e+308'``): a whole 1e308 has 309 digits.
SCIENTIFIC_ABOVE = 1e21
SCIENTIFIC_BELOW = 1e-9


_significant = format_significant


# ---------------------------------------------------------------------------------------
# Parsing "14 GB", "14e9 bytes", "13.04 GiB", "1.1 TFLOP", "239 tokens/s", "$0.08" ...

#: Units a learner may type, by dimension, with their factor to the SI base unit.
DIMENSIONS: Mapping[str, Mapping[str, float]] = {
    "bytes": {"b": 1, "byte": 1, "bytes": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
              "pb": 1e15, "eb": 1e18, "kib": 2**10, "mib": 2**20, "gib": 2**30,
              "tib": 2**40, "pib": 2**50, "eib": 2**60,
              # spelt out, as decimal as their symbols (book/conventions.md: 1 GB = 10^9 B)
              **{f"{p}byte{s}": f for p, f in (("kilo", 1e3), ("mega", 1e6), ("giga", 1e9),
                                                ("tera", 1e12), ("peta", 1e15),
                                                ("exa", 1e18), ("kibi", 2**10),
                                                ("mebi", 2**20), ("gibi", 2**30),
                                                ("tebi", 2**40))
                 for s in ("", "s")}},
    "flops": {"flop": 1, "flops": 1, "kflop": 1e3, "mflop": 1e6, "gflop": 1e9,
              "tflop": 1e12, "pflop": 1e15, "eflop": 1e18, "kflops": 1e3, "mflops": 1e6,
              "gflops": 1e9, "tflops": 1e12, "pflops": 1e15, "eflops": 1e18,
              # a training run's total, 1e22 to 1e25 FLOP: "26.95 ZFLOP", "3.8 YFLOP"
              "zflop": 1e21, "yflop": 1e24, "zflops": 1e21, "yflops": 1e24},
    "flop/s": {"flop/s": 1, "kflop/s": 1e3, "mflop/s": 1e6, "gflop/s": 1e9,
               "tflop/s": 1e12, "pflop/s": 1e15, "eflop/s": 1e18, "flops": 1,
               "gflops": 1e9, "tflops": 1e12, "pflops": 1e15},
    "bytes/s": {"b/s": 1, "kb/s": 1e3, "mb/s": 1e6, "gb/s": 1e9, "tb/s": 1e12,
                "pb/s": 1e15, "eb/s": 1e18, "kib/s": 2**10, "mib/s": 2**20,
                "gib/s": 2**30, "tib/s": 2**40},
    "seconds": {"s": 1, "sec": 1, "second": 1, "seconds": 1, "ms": 1e-3, "us": 1e-6,
                "µs": 1e-6, "ns": 1e-9, "min": 60, "minute": 60, "minutes": 60, "h": 3600,
                "hour": 3600, "hours": 3600, "day": 86400, "days": 86400, "secs": 1,
                **{f"{p}second{s}": f for p, f in (("milli", 1e-3), ("micro", 1e-6),
                                                    ("nano", 1e-9)) for s in ("", "s")}},
    "tokens/s": {"tokens/s": 1, "tok/s": 1, "token/s": 1, "tokens/sec": 1},
    "usd": {"$": 1, "usd": 1, "dollar": 1, "dollars": 1, "cent": 0.01, "cents": 0.01,
            "¢": 0.01},
    "count": {"": 1, "x": 1, "×": 1, "k": 1e3, "m": 1e6, "b": 1e9, "billion": 1e9,
              "million": 1e6, "thousand": 1e3},
    "percent": {"%": 0.01, "": 1, "percent": 0.01},
}

#: The scale words a count reads after its number ("157k", "2.5M", "7B", "3 million"). A
#: sum of money reads the same ones ("6.9k" is $6,900, as "$6.9k" and "6.9k USD" are);
#: no other dimension does ("5 M" is no duration, "1.2 m" no size).
_COUNT_SCALES: Mapping[str, float] = {w: f for w, f in DIMENSIONS["count"].items()
                                      if w.isalpha() and f != 1}

_MAX_INPUT_CHARS = 64
_NUMBER = re.compile(
    r"^\s*(?P<sign>[+-](?=\s*\$))?\s*(?P<dollar>\$)?\s*"
    r"(?P<num>[+-]?((?P<whole>\d[\d,_]*)\.?\d*|\.\d+)([eE][+-]?\d+)?)\s*(?P<unit>.*?)\s*$"
)
#: A power of ten after the number, as the lessons write one: "× 10^22", "x 10^9", "*10**12".
_POWER_OF_TEN = re.compile(r"^[×xX*·]\s*10\s*(\^|\*\*)\s*(?P<exp>[+\-\u2212]?\d{1,3})(?![\d.])"
                          r"(?P<rest>.*)$")
#: The whole part of a number with thousands separators: groups of three after the first.
_GROUPED = re.compile(r"\d{1,3}(,\d{3})+|\d{1,3}(_\d{3})+|\d+")


def _number(text: str, match: re.Match[str]) -> float:
    """The number of ``match`` (``_NUMBER``), its separators checked.

    ``1,024`` and ``1_000_000`` are read; ``1,5`` (a decimal comma) and ``12,34,5`` are
    refused with a message saying how to write them, never read as 15 or 12345.
    """
    num, whole = match["num"], match["whole"]
    shown = text.strip()
    if whole is not None and not _GROUPED.fullmatch(whole):
        parts = re.split("[,_]", whole)
        decimal = (len(parts) == 2 and "," in whole and len(parts[1]) != 3
                   and "." not in num and parts[1] != "")
        if decimal:
            raise ValueError(f"{shown!r}: use a point for decimals, as in "
                             f"{num.replace(',', '.')}; a comma only separates thousands "
                             "(1,024).")
        raise ValueError(f"{shown!r}: separate thousands in groups of three (1,234,567 or "
                         "1234567), or leave the separators out.")
    return float(num.replace(",", "").replace("_", ""))


#: A power after a whole number: "2^23", "2**23", "10^-3" (the exponent at most 4 digits).
_POWER = re.compile(r"^(\^|\*\*)\s*(?P<exp>[+\-]?\d{1,4})(?![\d.])\s*(?P<rest>.*)$")
#: One factor after the number or the power: "× 8", "x 2^10" (never "× 8e3" or "× 1,024").
_FACTOR = re.compile(r"^[×xX*·]\s*(?P<num>\d+(\.\d+)?|\.\d+)"
                     r"(\s*(\^|\*\*)\s*(?P<exp>[+\-]?\d{1,4}))?"
                     r"(?![\d.,_eE^*])\s*(?P<rest>.*)$")
#: Dimensions that read a power of any base: a count or a size a lesson writes as 2^n.
_POWER_DIMENSIONS = ("count", "bytes")
#: Dimensions that read a negative power of two: a plain number a lesson writes as 2^-n
#: (FP16's smallest normal number, 2^-14). Not bytes (a fraction of a byte is no size a
#: lesson asks for) nor a share (a bare number there is read in percent).
_NEGATIVE_POWER_OF_TWO_DIMENSIONS = ("count",)
#: What is left when a calculation was typed: a fraction "/4", a power not read "^2.5".
_FRACTION = re.compile(r"^/\s*[+\-]?[\d.]")
_OPERATOR = re.compile(r"^(\^|\*\*)")
_TIMES = re.compile(r"^[×xX*·]\s*[\d.]")


def _power(base: str, exponent: str, dimension: str, shown: str,
           example: str) -> Fraction:
    """``base ** exponent`` exactly (whole numbers: arithmetic, never ``eval``); a base
    other than 10 only for counts and bytes, a negative exponent only for 10 and, for a
    count (a plain number), 2: "2^-14", as the lessons write FP16's smallest normal."""
    exp, whole = int(exponent), int(base)
    if whole != 10:
        if dimension not in _POWER_DIMENSIONS:
            raise ValueError(f"{shown!r}: a power is read here only as a power of ten "
                             f"(1e9 or 10^9); type the value as one number, for example "
                             f"{example}.")
        if exp < 0 and dimension not in _NEGATIVE_POWER_OF_TWO_DIMENSIONS:
            raise ValueError(f"{shown!r}: type a power with a whole exponent of 0 or more "
                             f"(2^23), or the value as one number, for example {example}.")
        if exp < 0 and whole != 2:
            raise ValueError(f"{shown!r}: a negative power is read only of 2 or 10 (2^-14, "
                             f"10^-3); otherwise type the value as one number, for example "
                             f"{example}.")
    # past the float range (1.8e308; below 1e-323 a float is 0): not computed
    if whole > 1 and (exp * math.log10(whole) > 400 or exp * math.log10(whole) < -323):
        raise ValueError(f"{shown!r} is too {'large' if exp > 0 else 'small'} to be a "
                         "sensible answer.")
    return Fraction(whole) ** exp


def _leading_number(text: str, dimension: str) -> tuple[float, str, re.Match[str]]:
    """The number at the start of ``text`` (with a power or one factor, as the lessons
    write them: ``8.4 × 10^22``, ``2^23``, ``2^10 × 8``, ``8 × 2^10``), what follows it
    (the unit) and the match of ``_NUMBER``."""
    example = _example(dimension)
    shown = text.strip()
    match = _NUMBER.match(text.replace("\u2212", "-"))
    if not match:
        raise ValueError(f"Could not read a number in {shown!r}; type for example {example}.")
    number = _number(text, match)
    if match["sign"] == "-":
        number = -number
    unit = match["unit"].strip()
    power = _POWER_OF_TEN.match(unit)
    if power and "e" not in match["num"].lower():
        # "8.4 × 10^22 FLOP", as the lessons write large numbers: 8.4e22 FLOP
        exponent = int(power["exp"].replace("\u2212", "-"))
        number = float(f"{number!r}e{exponent}") if "e" not in repr(number) else (
            number * 10.0 ** max(min(exponent, 300), -300))  # inf past the float range
        return number, power["rest"].strip(), match
    exact: Fraction | None = None
    lead = _POWER.match(unit)
    if lead:  # "2^23", "2**23 bytes", "10^9"
        if not match["num"].isdigit():
            raise ValueError(f"{shown!r}: a power is read as a whole number to a whole "
                             f"power (2^23); otherwise type the value as one number, for "
                             f"example {example}.")
        exact = _power(match["num"], lead["exp"], dimension, shown, example)
        unit = lead["rest"]
    factor = _FACTOR.match(unit)
    if factor and "e" not in match["num"].lower() and (exact is not None or factor["exp"]):
        # "2^10 × 8", "8 × 2^10": one factor, and a power on one side at least
        times: Fraction | None = Fraction(factor["num"])
        if factor["exp"]:  # "× 1.5^2" is never read: a power's base is a whole number
            times = (None if "." in factor["num"] else
                     _power(factor["num"], factor["exp"], dimension, shown, example))
        if times is not None:
            exact = (Fraction(number) if exact is None else exact) * times
            unit = factor["rest"]
    if _FRACTION.match(unit):
        raise ValueError(f"{shown!r} is a fraction; type the value as one number (a "
                         f"decimal), for example {example}.")
    if _OPERATOR.match(unit) or (exact is not None and _TIMES.match(unit)):
        raise ValueError(f"{shown!r}: a power is read as a whole number to a whole power "
                         f"(2^23, 2^10 × 8); otherwise type the value as one number, for "
                         f"example {example}.")
    if exact is not None:
        try:
            number = float(exact)
        except OverflowError:
            raise ValueError(f"{shown!r} is too large to be a sensible answer.") from None
    return number, unit.strip(), match


@_validate.learner_messages
def parse_quantity(text: str, dimension: str = "count", *, allow_negative: bool = False) -> float:
    """Parse a learner's answer such as ``"14 GB"`` into SI base units (here 14e9 bytes).

    Numbers may use ``e`` notation and thousands separators in groups of three
    (``1,024``, ``1_000_000``); a decimal comma (``1,5``) is refused with a message asking
    for a point, and a power of ten written ``× 10^n`` (``x 10^n``, ``*10**n``) reads as
    ``en``. A whole power, ``10^9`` (any dimension) or ``2^23``, ``2**30 bytes``,
    ``2^10 × 8`` (counts and bytes) or ``2^-14`` (counts), is computed exactly on whole
    numbers; a fraction (``3/4``, ``1/0``) is refused with a message asking for one
    number, never divided. A bare number is read in the base unit of ``dimension``
    (bytes, FLOPs, seconds ...); money reads the scale words a count reads (``6.9k``,
    ``2.5M``, ``1.2B``, ``3 million``). Nothing is ever ``eval``-ed: regular expressions and
    integer arithmetic only.

    Raises
    ------
    ValueError
        with a message that says what was typed, what was expected and an example. The
        message is meant to be shown to the learner as it is.
    """
    if not isinstance(dimension, str) or dimension not in DIMENSIONS:
        raise ValueError(f"dimension must be one of {sorted(DIMENSIONS)}, "
                         f"got {_validate._short_repr(dimension)}")
    if not isinstance(text, str):
        raise TypeError(f"text must be a string (the answer as typed), got "
                        f"{type(text).__name__}")
    allow_negative = _validate.boolean("allow_negative", allow_negative)
    units = DIMENSIONS[dimension]
    example = _example(dimension)
    if not text.strip():
        raise ValueError(f"Please type a number, for example {example}.")
    if len(text) > _MAX_INPUT_CHARS:
        raise ValueError(
            f"That answer is {len(text)} characters long; type just a number and a unit, "
            f"for example {example}."
        )
    number, unit, match = _leading_number(text, dimension)
    if match["dollar"]:
        if dimension != "usd":
            raise ValueError(f"A dollar amount was typed, but the answer is in {dimension}.")
        unit = unit or "$"
        if DIMENSIONS["usd"].get(unit.lower(), 1) != 1:  # "$5 cents": dollars or cents?
            raise ValueError(f"{text.strip()!r} has a dollar sign and {unit!r}; type "
                             f"dollars ($0.05) or cents (5 cents).")
    # the micro sign (µ, U+00B5) and the Greek mu (μ, U+03BC) look alike; keyboards give either
    key = unit.lower().replace(" ", "").replace("\u03bc", "\u00b5")
    if dimension == "bytes" and unit in {"b"}:  # lower-case b is ambiguous (bit): refuse it
        raise ValueError("'b' could mean bits; write B or bytes, for example 14 GB.")
    if dimension == "bytes" and (re.fullmatch(r"[KMGTPE]i?b", unit) or re.fullmatch(
            r"([kmgtp]|kilo|mega|giga|tera|peta)?bits?", unit, re.IGNORECASE)):
        # "112 Gb" is gigabits, 14 GB, and "Gib" gibibits: never read them as bytes (all
        # lower case, "gb", stays GB, as in a byte rate below)
        raise ValueError(f"{unit!r} is bits; this answer is in bytes (8 bits to a byte): "
                         "for example 112 Gb is 14 GB.")
    if dimension == "bytes/s" and re.fullmatch(r"([MGTP]b|[kKmMgGtTpP]?bits?)(/s|ps)", unit):
        # network links are quoted in bits per second (400 Gb/s): never read them as bytes
        # (all lower case, "gb/s", stays a byte rate, as "gb" is GB)
        raise ValueError(f"{unit!r} is bits per second; this answer is in bytes per second "
                         "(8 bits to a byte): for example 400 Gb/s is 50 GB/s.")
    if dimension == "usd" and key in _COUNT_SCALES:
        units = {**units, key: _COUNT_SCALES[key]}  # "6.9k" dollars, as "157k" is a count
    if key not in units and not (key == "" and dimension in {"bytes", "flops", "flop/s",
                                                               "bytes/s", "seconds",
                                                               "tokens/s", "usd"}):
        allowed = ", ".join(u for u in _display_units(dimension) if u)
        raise ValueError(
            f"Unknown unit {unit!r} for {dimension}; use one of: {allowed} (for example {example})."
        )
    value = number * units.get(key, 1)
    if not math.isfinite(value):
        raise ValueError(f"{text.strip()!r} is too large to be a sensible answer.")
    if value < 0 and not allow_negative:
        raise ValueError(f"{text.strip()!r} is negative; this quantity cannot be below zero.")
    return value


def _display_units(dimension: str) -> list[str]:
    preferred = {
        "bytes": ["B", "kB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB"],
        "flops": ["FLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP", "ZFLOP", "YFLOP"],
        "flop/s": ["FLOP/s", "GFLOP/s", "TFLOP/s", "PFLOP/s"],
        "bytes/s": ["B/s", "MB/s", "GB/s", "TB/s"],
        "seconds": ["ns", "µs", "ms", "s", "min", "h", "days"],
        "tokens/s": ["tokens/s"],
        "usd": ["$", "USD", "cents", "k", "M", "B (billion)"],
        "count": ["", "k", "M", "B (billion)"],
        "percent": ["%"],
    }
    return preferred[dimension]


def _example(dimension: str) -> str:
    return {
        "bytes": "'14 GB' or '13.04 GiB' or '14e9'",
        "flops": "'1.1 GFLOP' or '1.1e9'",
        "flop/s": "'989 TFLOP/s'",
        "bytes/s": "'3.35 TB/s'",
        "seconds": "'12 ms' or '3.5 days'",
        "tokens/s": "'239 tokens/s' or '239'",
        "usd": "'$0.08' or '0.08'",
        "count": "'4096' or '7e9'",
        "percent": "'45%' or '0.45'",
    }[dimension]


def _format_count(value: float) -> str:
    """``1234 -> '1,234'``; an ``int`` stays exact at any size (no trip through float,
    which keeps only 53 bits); a fractional count keeps four significant digits."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if float(value).is_integer():
        return f"{value:,.0f}"
    return _significant(value, 4)


def format_quantity(value: float, dimension: str) -> str:
    """Format ``value`` (SI base units) in the natural unit of ``dimension``."""
    formatters = {
        "bytes": format_bytes,
        "flops": format_flops,
        "flop/s": format_flop_rate,
        "bytes/s": format_bandwidth,
        "seconds": format_seconds,
        "usd": format_usd,
        "tokens/s": lambda v: f"{_significant(v, 3)} tokens/s",
        "count": _format_count,
        "percent": lambda v: f"{100 * v:.1f}%",
    }
    if not isinstance(dimension, str) or dimension not in formatters:
        raise ValueError(f"dimension must be one of {sorted(formatters)}, "
                         f"got {_validate._short_repr(dimension)}")
    if dimension in ("tokens/s", "percent"):
        value = _check_number("value", value)
    return formatters[dimension](value)


#: Scale words a learner may put between a number and the unit word of a count or a rate:
#: "28.35M parameters", "156.7k conversations", "1.97k tokens/s", "$867.9k".
#: The count's own scale words (:data:`DIMENSIONS`), and "bn", "t" and "trillion".
_SCALES = {**_COUNT_SCALES, "bn": 1e9, "t": 1e12, "trillion": 1e12}
_SCALED_NUMBER = re.compile(r"^\s*(?P<num>(\d[\d,_]*\.?\d*|\.\d+)([eE][+-]?\d+)?)\s*"
                            r"(?P<scale>[a-z]+)\s*$", re.IGNORECASE)
#: A power in a typed number ("1.4 × 10^12", "2^20"), read by parse_quantity.
_POWER_IN_NUMBER = re.compile(r"\d\s*([×xX*·]\s*10\s*)?(\^|\*\*)")
#: The dimensions whose own unit words may follow a scale word ("k tokens/s", "k USD").
_SCALED_DIMENSIONS = ("tokens/s", "usd")


def parse_scaled_number(text: str) -> float | None:
    """A number with a scale word, ``"28.35M"`` or ``"1.4 trillion"`` (or a power,
    ``"1.4 × 10^12"``, ``"2^20"``), as a plain number; ``None`` when ``text`` is not one."""
    if _POWER_IN_NUMBER.search(text):  # "1.4 × 10^12" before "tokens"
        try:
            return parse_quantity(text.strip(), "count")
        except ValueError:
            return None
    match = _SCALED_NUMBER.match(text)
    if match is None or match["scale"].lower() not in _SCALES:
        return None
    return parse_quantity(match["num"], "count") * _SCALES[match["scale"].lower()]


def parse_bare_power(text: str, dimension: str) -> float | None:
    """A power typed with no unit (``"2^23"``, ``"2^10 × 8"``) as a number, for an exercise
    to read in its own unit as it reads a bare number; ``None`` when ``text`` is not one.
    ``ValueError`` with a learner's message when the power cannot be read."""
    if len(text) > _MAX_INPUT_CHARS or not _POWER_IN_NUMBER.search(text):
        return None
    number, unit, match = _leading_number(text, dimension)
    return None if unit or match["dollar"] or match["sign"] else number


def parse_scaled_quantity(text: str, dimension: str) -> float | None:
    """``"1.97k tokens/s"``, ``"$867.9k"``, ``"868k USD"``, ``"$0.87 million"``: a scaled
    number and a unit of a rate or money ``dimension``, in SI base units; ``None`` when
    ``text`` is not one (or the dimension takes no scale words before its units)."""
    if dimension not in _SCALED_DIMENSIONS:
        return None
    units = DIMENSIONS[dimension]
    rest = text.strip()
    if dimension == "usd" and rest.startswith("$"):
        rest, word = rest[1:], "$"
    else:
        word = next((w for w in sorted(units, key=len, reverse=True)
                     if w and rest.lower().endswith(w)), None)
        if word is None:
            return None
        rest = rest[: len(rest) - len(word)]
    scaled = parse_scaled_number(rest)
    return None if scaled is None else scaled * units[word]


_validate.guard_module(globals())
