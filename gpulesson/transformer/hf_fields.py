"""Reading a ``config.json`` safely: the file, its fields, and errors that name both.

A ``config.json`` is data from anywhere (a download, a learner's edit), so every value is
checked before it reaches :class:`~gpulesson.transformer.TransformerConfig`:

* the file is read up to :data:`MAX_CONFIG_BYTES` (a real one is a few kilobytes; a
  device such as ``/dev/zero`` or a runaway file is refused, not read to the end), and
  JSON nested beyond what the parser handles is refused with a message, not a
  ``RecursionError``;
* a size is a JSON integer from 1 (or 0 where zero means "none") to
  :data:`MAX_CONFIG_INT` (2**31 - 1, what the engines' 32-bit fields hold): ``32.9``,
  ``true``, ``"32"`` and ``1e308`` are refused, not rounded or parsed;
* a flag is ``true`` or ``false``, a rate a number from 0 to 1;
* every refusal names the key of the file and the :class:`TransformerConfig` field it
  sets, shows the value (cut short, huge numbers in scientific form) and says what is
  allowed.

Used by :mod:`gpulesson.transformer.hf`; nothing here is public.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from collections.abc import Mapping
from typing import Any

from gpulesson import _validate as v

__all__: list[str] = []

#: Largest ``config.json`` read, in bytes (4 MiB; real files are 1-10 kB, multimodal ones
#: with long label maps up to a few hundred kB).
MAX_CONFIG_BYTES = 4 * 2**20
#: Largest integer a size may have: 2**31 - 1.
MAX_CONFIG_INT = 2**31 - 1


def shown(value: object) -> str:
    """A value for a message: short, huge numbers in scientific form, with its JSON type."""
    if isinstance(value, float) and math.isfinite(value) and abs(value) >= 1e15:
        text = f"{value:.4g}"
    else:
        text = v._short_repr(value)
    kind = {bool: "boolean", int: "integer", float: "number", str: "string",
            list: "array", dict: "object", type(None): "null"}.get(type(value),
                                                                     type(value).__name__)
    return f"{text} ({kind})"


def load(config: object) -> Mapping[str, Any]:
    """The parsed JSON object of ``config``: a mapping as it is, a path read with a cap."""
    if isinstance(config, Mapping):
        return config
    if not isinstance(config, (str, os.PathLike)):
        raise TypeError("config must be a parsed config.json (a mapping) or a path to one, "
                        f"got {type(config).__name__}")
    path = os.fspath(config)
    with open(path, "rb") as handle:
        data = handle.read(MAX_CONFIG_BYTES + 1)
    if len(data) > MAX_CONFIG_BYTES:
        raise ValueError(f"config file {path!r} is larger than {MAX_CONFIG_BYTES:,} bytes "
                         "(4 MiB): a config.json holds a few kilobytes")
    try:
        loaded = json.loads(data.decode("utf-8"))
    except RecursionError:
        raise ValueError(f"config file {path!r} nests its JSON too deeply to read (a "
                         "config.json nests two or three levels)") from None
    except (UnicodeDecodeError, ValueError) as error:
        raise ValueError(f"config file {path!r} is not valid UTF-8 JSON: "
                         f"{str(error)[:200]}") from None
    if not isinstance(loaded, Mapping):
        raise ValueError(f"config file {path!r} must hold a JSON object, got "
                         f"{shown(loaded)}")
    return loaded


class Fields:
    """Typed access to a config's keys that records which key set which field.

    Each accessor takes the :class:`TransformerConfig` field it fills (or what the key
    controls), then the key and its aliases; a refusal names both.
    """

    def __init__(self, raw: Mapping[str, Any], model_type: str,
                 defaults: Mapping[str, Any] | None = None) -> None:
        self.raw = dict(defaults or {})
        self.raw.update({k: val for k, val in raw.items() if val is not None
                         or k not in self.raw})
        self.model_type = model_type
        #: field -> the key it was read from
        self.origins: dict[str, str] = {}

    def _find(self, keys: tuple[str, ...]) -> tuple[str, Any] | None:
        for key in keys:
            if self.raw.get(key) is not None:
                return key, self.raw[key]
        return None

    def _bad(self, key: str, field: str, allowed: str, value: object) -> ValueError:
        return ValueError(f"config.json key {key!r} (TransformerConfig field {field!r}) "
                          f"must be {allowed}, got {shown(value)}")

    def missing(self, field: str, key: str) -> ValueError:
        return ValueError(f"config.json of model_type {self.model_type!r} is missing "
                          f"{key!r} (TransformerConfig field {field!r}), which the "
                          f"{self.model_type} reader needs")

    def has(self, key: str) -> bool:
        return self.raw.get(key) is not None

    def int(self, field: str, *keys: str, default: int | None = None, low: int = 1) -> int:
        """The integer at the first of ``keys`` present, from ``low`` to 2**31 - 1."""
        found = self._find(keys)
        if found is None:
            if default is None:
                raise self.missing(field, keys[0])
            return default
        key, value = found
        self.origins.setdefault(field, key)
        if type(value) is not int or not low <= value <= MAX_CONFIG_INT:
            raise self._bad(key, field, f"an integer from {low} to {MAX_CONFIG_INT:,}", value)
        return value

    def flag(self, field: str, key: str, default: bool = False) -> bool:
        value = self.raw.get(key)
        if value is None:
            return default
        self.origins.setdefault(field, key)
        if not isinstance(value, bool):
            raise self._bad(key, field, "true or false", value)
        return value

    def rate(self, field: str, key: str) -> float:
        """A probability (dropout): a number from 0 to 1; 0 when absent."""
        value = self.raw.get(key)
        if value is None:
            return 0.0
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                0 <= value <= 1):
            raise self._bad(key, field, "a number from 0 to 1", value)
        return float(value)

    def number(self, field: str, key: str) -> float:
        """A finite non-negative number (a clamp's limit); 0 when absent."""
        value = self.raw.get(key)
        if value is None:
            return 0.0
        # an integer beyond the float range (10**400) compares below infinity but has no
        # float: the bound is the largest float, so it is refused with the others
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                0 <= value <= sys.float_info.max):
            raise self._bad(key, field, "a finite non-negative number", value)
        self.origins.setdefault(field, key)
        return float(value)

    def text(self, field: str, key: str, default: str) -> str:
        value = self.raw.get(key)
        if value is None:
            return default
        if not isinstance(value, str) or len(value) > 200:
            raise self._bad(key, field, "a short string", value)
        return value

    def int_list(self, field: str, key: str, *, length: int | None = None) -> list[int]:
        """A list of integers from 0 to 2**31 - 1 (``[]`` when absent)."""
        value = self.raw.get(key)
        if value is None:
            return []
        allowed = "a list of integers from 0" + (f", {length} of them" if length else "")
        if not isinstance(value, list) or (length is not None and len(value) != length):
            raise self._bad(key, field, allowed, value)
        if any(type(x) is not int or not 0 <= x <= MAX_CONFIG_INT for x in value):
            raise self._bad(key, field, allowed, value)
        return value

    def str_list(self, field: str, key: str, *, length: int) -> list[str] | None:
        """A list of ``length`` short strings, or ``None`` when absent."""
        value = self.raw.get(key)
        if value is None:
            return None
        if (not isinstance(value, list) or len(value) != length
                or any(not isinstance(x, str) or len(x) > 100 for x in value)):
            raise self._bad(key, field, f"a list of {length} strings, one per layer", value)
        return value


def located(error: Exception, fields: Fields) -> ValueError:
    """``error`` (raised by :class:`TransformerConfig`) led by the key that set the field it
    names first, so that the reader of the file knows what to change."""
    message = str(error)
    spots = []
    for field, key in fields.origins.items():
        match = re.search(rf"(?<![A-Za-z_]){re.escape(field)}(?![A-Za-z_])", message)
        if match:
            spots.append((match.start(), field, key))
    if spots:
        _, field, key = min(spots)
        return ValueError(f"config.json key {key!r} (TransformerConfig field {field!r}): "
                          f"{message}")
    return ValueError(f"config.json of model_type {fields.model_type!r}: {message}")
