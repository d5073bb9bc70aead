"""Small pieces of wording the exercise banks share: unit words, number styles, names.

Formulas live in the calculator modules and quantities are formatted by
:mod:`gpulesson.units`; what is here is only how the banks' questions and solutions spell
things (``"989.4 TFLOP/s"``, ``"8.09e22"``, ``"40%"``, ``"4,096"``, ``"6.74B"``,
``"2T"``, ``"1 sequence"``, ``"Llama 2 7B"``, ``"BF16"``) and the extra unit words a
learner may type. One copy, so that every lesson's exercises read alike.
Standard library only.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Mapping
from types import MappingProxyType

from gpulesson.exercises.core import format_number
from gpulesson.transformer import model_label  # the banks spell models through wording
from gpulesson.units import format_bandwidth, format_bytes, format_flops

__all__ = ["CONVERSATIONS", "GPUS", "GPU_HOURS", "MONTHS", "PARAMS", "PARAMS_IN_MILLIONS",
           "PER_BYTE", "PER_WATT", "PRECISION_LABELS", "SEQUENCES", "TIMES", "TOKENS",
           "TOKENS_PER_SECOND", "bandwidth", "billions", "count", "flop_count", "model_label",
           "percent", "plural", "precision_label", "rounded_percent", "scientific", "size",
           "tflop_rate", "token_rate", "trillions", "trim_zeros", "value_bytes", "with_article"]

#: Words for a plain ratio: "3×", "3 x", "3 times".
TIMES: Mapping[str, float] = MappingProxyType({"×": 1, "x": 1, "times": 1})
#: Words for an arithmetic intensity.
PER_BYTE: Mapping[str, float] = MappingProxyType({
    "FLOP/byte": 1, "FLOPs/byte": 1, "FLOP/B": 1, "FLOPs per byte": 1, "FLOP per byte": 1})
#: Words for an energy efficiency, with their scale to FLOP/s per watt.
PER_WATT: Mapping[str, float] = MappingProxyType({
    "GFLOP/s/W": 1e9, "GFLOP/s per W": 1e9, "GFLOP/s per watt": 1e9, "GFLOP/J": 1e9,
    "TFLOP/s/W": 1e12, "TFLOP/s per W": 1e12, "TFLOP/s per watt": 1e12, "FLOP/s/W": 1,
    "FLOP/J": 1})

# The counts the banks ask for, each with the words (and scales) a learner may type after
# the number. Matching ignores case (gpulesson.exercises.core).

#: Words for a count of parameters.
PARAMS: Mapping[str, float] = MappingProxyType({"parameters": 1, "params": 1, "parameter": 1})
#: A count of parameters answered in millions (LoRA adapters): "4.19 million", "4.19 m".
PARAMS_IN_MILLIONS: Mapping[str, float] = MappingProxyType({
    **PARAMS, "m parameters": 1e6, "million parameters": 1e6, "million": 1e6, "m": 1e6})
#: Words for a count of GPUs.
GPUS: Mapping[str, float] = MappingProxyType({"GPUs": 1, "GPU": 1})
#: Words for a count of sequences in a batch.
SEQUENCES: Mapping[str, float] = MappingProxyType({"sequences": 1, "sequence": 1, "seqs": 1})
#: Words for a count of users served at once.
CONVERSATIONS: Mapping[str, float] = MappingProxyType({
    "users": 1, "user": 1, "sequences": 1, "sequence": 1, "conversations": 1,
    "conversation": 1})
#: Words for a count of tokens, in full or in billions and trillions.
TOKENS: Mapping[str, float] = MappingProxyType({
    "tokens": 1, "token": 1, "trillion tokens": 1e12, "billion tokens": 1e9, "t tokens": 1e12,
    "b tokens": 1e9, "trillion": 1e12, "t": 1e12})
#: Words for a throughput in tokens per second, in full, thousands or millions.
TOKENS_PER_SECOND: Mapping[str, float] = MappingProxyType({
    "tokens/s": 1, "tok/s": 1, "k tokens/s": 1e3, "m tokens/s": 1e6, "million tokens/s": 1e6})
#: Words for GPU-hours, in full or in millions.
GPU_HOURS: Mapping[str, float] = MappingProxyType({
    "gpu-hours": 1, "gpu hours": 1, "gpu-hour": 1, "hours": 1, "h": 1, "m gpu-hours": 1e6,
    "million gpu-hours": 1e6, "million": 1e6})
#: Words for a span in months (years count twelve).
MONTHS: Mapping[str, float] = MappingProxyType({
    "months": 1, "month": 1, "mo": 1, "years": 12, "year": 12})

#: How the texts name a number format or precision key of the calculators.
PRECISION_LABELS: Mapping[str, str] = MappingProxyType({
    "fp64": "FP64", "fp32": "FP32", "tf32": "TF32", "bf16": "BF16", "fp16": "FP16",
    "fp8": "FP8", "int8": "INT8", "int4": "INT4", "mxfp8": "MXFP8", "fp6": "FP6",
    "mxfp6": "MXFP6", "nvfp4": "NVFP4", "mxfp4": "MXFP4", "fp4": "FP4"})

_TRAILING_ZEROS = re.compile(r"(\.\d*?)0+(?=\s)")


def trim_zeros(text: str) -> str:
    """Drop trailing zeros of a formatted quantity: ``'24.0 GB' -> '24 GB'``,
    ``'50.00 GB/s' -> '50 GB/s'``; ``'3.35 TB/s'`` unchanged."""
    return _TRAILING_ZEROS.sub(r"\1", text).replace(". ", " ")


def size(n_bytes: float, digits: int = 1, *, binary: bool = False) -> str:
    """A size as the texts write it, to ``digits`` decimals without trailing zeros:
    ``24e9 -> '24 GB'``, ``1.5e9 -> '1.5 GB'``, with ``binary=True`` in GiB, MiB ..."""
    return trim_zeros(format_bytes(n_bytes, binary=binary, digits=digits))


def bandwidth(rate: float, digits: int = 2) -> str:
    """A bandwidth without trailing zeros: ``3.35e12 -> '3.35 TB/s'``, ``50e9 -> '50 GB/s'``."""
    return trim_zeros(format_bandwidth(rate, digits=digits))


def flop_count(n: float) -> str:
    """A count of FLOPs without trailing zeros: ``2e12 -> '2 TFLOP'``."""
    return trim_zeros(format_flops(n))


def scientific(value: float, digits: int = 3) -> str:
    """Papers' notation without a '+': ``8.4e22 -> '8.40e22'``."""
    mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def percent(fraction: float, digits: int = 3) -> str:
    """``0.4 -> '40%'``, ``0.3456 -> '34.6%'`` (``digits`` significant figures)."""
    return f"{format_number(100 * fraction, digits)}%"


def rounded_percent(fraction: float, decimals: int = 0) -> str:
    """A share rounded to whole per cent, or to ``decimals`` places, however large:
    ``0.05 -> '5%'``, ``0.384 -> '38%'``, ``(0.1234, 1) -> '12.3%'`` (where
    :func:`percent` keeps significant figures)."""
    return f"{fraction:.{decimals}%}"


def count(n: float) -> str:
    """A count in full, with thousands separators: ``4096 -> '4,096'``; a float is rounded
    to a whole number (``2400.0 -> '2,400'``, ``68678.4 -> '68,678'``)."""
    if isinstance(n, bool) or not isinstance(n, numbers.Real):
        raise TypeError(f"n must be a number, got {type(n).__name__}")
    return f"{n:,}" if isinstance(n, numbers.Integral) else f"{n:,.0f}"


def plural(n: float, singular: str, plural_form: str | None = None) -> str:
    """A count and its noun: ``'1 sequence'``, ``'8 sequences'``, ``'1,024 tokens'``
    (the count as :func:`count` writes it; ``plural_form`` defaults to ``singular + 's'``)."""
    noun = singular if n == 1 else (plural_form or singular + "s")
    return f"{count(n)} {noun}"


def billions(n: float, digits: int = 3, *, long: bool = False) -> str:
    """A count in billions as papers write it: ``6.738e9 -> '6.74B'``, or with
    ``long=True`` (and ``digits=4``) ``'6.738 billion'``."""
    return f"{format_number(n / 1e9, digits)}{' billion' if long else 'B'}"


def trillions(n: float, digits: int = 3, *, long: bool = False) -> str:
    """A count in trillions (tokens, mostly): ``2e12 -> '2T'``, ``1.4e12 -> '1.4T'``, or
    with ``long=True`` ``'2 trillion'``."""
    return f"{format_number(n / 1e12, digits)}{' trillion' if long else 'T'}"


def tflop_rate(rate: float, digits: int = 5) -> str:
    """``989.4e12 -> '989.4 TFLOP/s'``."""
    return f"{format_number(rate / 1e12, digits)} TFLOP/s"


def token_rate(rate: float) -> str:
    """A decode or prefill speed: ``1234.56 -> '1,235 tokens/s'`` (four significant
    figures)."""
    return f"{format_number(rate, 4)} tokens/s"


def value_bytes(n_bytes: float) -> str:
    """The bytes of one stored value, with the noun in the right number: ``2 -> '2 bytes'``,
    ``1 -> '1 byte'`` (FP8, INT8), ``0.5 -> '0.5 bytes'`` (INT4), ``4 -> '4 bytes'``."""
    if isinstance(n_bytes, bool) or not isinstance(n_bytes, numbers.Real) or n_bytes <= 0:
        raise ValueError(f"n_bytes must be a positive number, got {n_bytes!r}")
    return f"{format_number(n_bytes)} byte{'' if n_bytes == 1 else 's'}"


#: Capital letters whose spoken name starts with a vowel sound ("eff", "aitch", "el", "em",
#: "en", "ar", "ess", "ex"): an initialism or model code starting with one takes "an".
_AN_LETTERS = frozenset("AEFHILMNORSX")


def with_article(name: str) -> str:
    """A name with its indefinite article, as it is read aloud: ``'an H100 SXM'``,
    ``'a B200'``, ``'an L4'``, ``'an MI300X'``, ``'an RTX 4090'``, ``'a GPU'``, ``'an 8B'``,
    ``'an 11B'``, ``'a 110B'``, ``'a 7B'`` (a number as it is read aloud). A name
    that starts with a capital followed by a capital or a digit is read letter by letter;
    any other is a word, ``'an accelerator'``. ``ValueError`` for an empty name."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    text = name.strip()
    if text[0].isdigit():  # read as a number: "an" before eight, eleven and eighteen
        whole = re.match(r"[\d,]*", text).group(0).replace(",", "")  # type: ignore[union-attr]
        an = whole.startswith("8") or (whole[:2] in ("11", "18") and len(whole) % 3 == 2)
        return f"{'an' if an else 'a'} {text}"
    spelled = text[0].isupper() and (len(text) == 1 or not text[1].islower())
    an = text[0] in _AN_LETTERS if spelled else text[0].lower() in "aeiou"
    return f"{'an' if an else 'a'} {text}"


def precision_label(key: str) -> str:
    """The reader's name of a precision key (``'bf16' -> 'BF16'``); ``KeyError`` for a key
    the calculators do not use."""
    return PRECISION_LABELS[key]
