"""Argument checks shared by every calculator module (standard library only).

One place for the checks that the calculator contract (``docs/calculator-api.md``) asks of every
function: bad input raises an error whose message names the argument, the value and
what is allowed, for example ``ValueError: layers must be a positive integer, got 0``.

* ``bool`` is never accepted as a number (``True`` is not ``1`` here).
* NaN and infinities are refused.
* An integer argument (a count such as ``layers``) must be an ``int`` (or a NumPy
  integer); ``32.0`` is refused with a ``TypeError`` so that counts stay exact.
* Integers beyond the range of a float (about 1.8e308, 2^1024 and up) are refused: every
  formula meets floats somewhere, and ``float(10**400)`` would raise ``OverflowError``.
* A name looked up in a table (precision, preset, GPU, collective, recompute mode)
  that is unknown raises :class:`UnknownNameError`, which is both a ``KeyError`` and a
  ``ValueError`` and lists the known names.

The results, too: :func:`guard_module` (one call at the end of each calculator module)
wraps the module's public functions so that every result is checked to be finite, an
arithmetic failure (``OverflowError``, ``ZeroDivisionError``) becomes a ``ValueError``
naming the inputs, and every flag (a parameter declared ``bool``) refuses anything but
``True`` or ``False``. A function added to a module's ``__all__`` is covered without
further code.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import numbers
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

__all__ = [
    "NoFiniteResultError",
    "UnknownNameError",
    "boolean",
    "choice",
    "fraction",
    "guard_module",
    "guarded",
    "learner_messages",
    "lookup",
    "nonneg_int",
    "nonneg_number",
    "number_at_least",
    "positive_int",
    "positive_ints",
    "positive_number",
    "tensor_bytes",
]

T = TypeVar("T")

#: The largest finite float; an integer beyond it cannot become a float.
FLOAT_MAX = sys.float_info.max
_INT_MAX = int(FLOAT_MAX)


class UnknownNameError(KeyError, ValueError):
    """An unknown name (preset, GPU, precision, collective ...): lists the known ones.

    It derives from both ``KeyError`` (a failed lookup) and ``ValueError`` (a bad
    argument value), so either ``except`` clause catches it.
    """

    def __str__(self) -> str:  # KeyError would print the message in quotes
        return str(self.args[0]) if self.args else ""


class NoFiniteResultError(ValueError):
    """Raised by :func:`guarded` when a call has no finite result (a NaN or an infinity in
    it, or an ``ArithmeticError`` inside): the inputs are too large or too small for the
    formula.

    A ``ValueError`` like any other bad input; it also carries what a front end needs to
    name the input at fault in its own words (the calculators' engine names the form's
    field): ``function`` (its name), ``arguments`` (by parameter name), ``where`` (what
    overflowed, ``".cost_per_million_tokens"``, or ``""`` for an arithmetic failure).
    """

    def __init__(self, message: str, *, function: str = "",
                 arguments: Mapping[str, Any] | None = None, where: str = "") -> None:
        super().__init__(message)
        self.function = function
        self.arguments = dict(arguments or {})
        self.where = where


def _type_name(value: object) -> str:
    return type(value).__name__


def _is_real(value: object) -> bool:
    if type(value) is int or type(value) is float:  # fast path for the common case
        return True
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and not (
        type(value).__name__ == "bool_"
    )


def _is_int(value: object) -> bool:
    if type(value) is int:  # fast path for the common case
        return True
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and not (
        type(value).__name__ == "bool_"
    )


def _int_text(value: int) -> str:
    """An integer for a message: in full when short, else its size (10**400 has 401 digits)."""
    if -10**30 < value < 10**30:
        return str(value)
    exponent = math.floor(math.log10(abs(value)))  # str() of 10**5000 itself fails
    sign = "-" if value < 0 else ""
    return f"an integer of {value.bit_length():,} bits (about {sign}10^{exponent})"


def _in_float_range(name: str, value: int, what: str) -> int:
    if -_INT_MAX <= value <= _INT_MAX:
        return value
    raise ValueError(f"{name} must be {what} no larger than {FLOAT_MAX:.4g} (the float "
                     f"range), got {_int_text(value)}")


def _int_at_least(name: str, value: object, low: int, what: str) -> int:
    """``value`` as an ``int`` if it is an integer >= ``low`` (0 or 1), else raise naming
    ``what`` it must be."""
    if not _is_int(value):
        raise TypeError(f"{name} must be {what}, got {_short_repr(value)} ({_type_name(value)})")
    result = int(value)  # type: ignore[call-overload]
    if result < low:
        raise ValueError(f"{name} must be {what}, got {_int_text(result)}")
    return _in_float_range(name, result, what)


def positive_int(name: str, value: object) -> int:
    """Return ``value`` as an ``int`` if it is an integer >= 1, else raise."""
    if type(value) is int and 1 <= value <= _INT_MAX:  # fast path, the common case
        return value
    return _int_at_least(name, value, 1, "a positive integer")


def positive_ints(**values: object) -> tuple[int, ...]:
    """:func:`positive_int` of each keyword argument, returned in the order given.

    ``b, s = positive_ints(batch=batch, seq_len=seq_len)``: the first bad one raises,
    named by its keyword.
    """
    return tuple(positive_int(name, value) for name, value in values.items())


def nonneg_int(name: str, value: object) -> int:
    """Return ``value`` as an ``int`` if it is an integer >= 0, else raise."""
    if type(value) is int and 0 <= value <= _INT_MAX:  # fast path, the common case
        return value
    return _int_at_least(name, value, 0, "a non-negative integer")


def _finite(name: str, value: object, what: str) -> int | float:
    if type(value) is float and value - value == 0.0:  # finite float fast path
        return value
    if type(value) is int and -_INT_MAX <= value <= _INT_MAX:
        return value
    if not _is_real(value):
        raise TypeError(f"{name} must be {what}, got {_short_repr(value)} ({_type_name(value)})")
    if _is_int(value):
        return _in_float_range(name, int(value), what)  # type: ignore[call-overload]
    try:
        result = float(value)  # type: ignore[arg-type]
    except (OverflowError, ValueError, TypeError):  # a Fraction beyond the float range
        raise ValueError(f"{name} must be {what} within the float range (at most "
                         f"{FLOAT_MAX:.4g}), got {_short_repr(value)}") from None
    if not math.isfinite(result):
        raise ValueError(f"{name} must be {what}, got {result!r}")
    return result


def positive_number(name: str, value: object) -> int | float:
    """Return a finite number > 0 (ints stay ints), else raise."""
    result = _finite(name, value, "a finite positive number")
    if result <= 0:
        raise ValueError(f"{name} must be a finite positive number, got {result!r}")
    return result


def nonneg_number(name: str, value: object) -> int | float:
    """Return a finite number >= 0 (ints stay ints), else raise."""
    result = _finite(name, value, "a finite non-negative number")
    if result < 0:
        raise ValueError(f"{name} must be a finite non-negative number, got {result!r}")
    return result


def number_at_least(name: str, value: object, low: float) -> int | float:
    """Return a finite number >= ``low``, else raise."""
    result = _finite(name, value, f"a finite number >= {low:g}")
    if result < low:
        raise ValueError(f"{name} must be a finite number >= {low:g}, got {result!r}")
    return result


def fraction(
    name: str,
    value: object,
    *,
    allow_zero: bool = True,
    allow_one: bool = True,
) -> float:
    """Return a number in [0, 1] (ends included or not as asked), else raise."""
    low = "[" if allow_zero else "("
    high = "]" if allow_one else ")"
    what = f"a number in {low}0, 1{high}"
    result = float(_finite(name, value, what))
    if result < 0 or result > 1 or (result == 0 and not allow_zero) or (
        result == 1 and not allow_one
    ):
        raise ValueError(f"{name} must be {what}, got {result!r}")
    return result


def boolean(name: str, value: object) -> bool:
    """Return ``value`` if it is a ``bool`` (or a NumPy bool), else raise ``TypeError``.

    ``"no"``, ``0`` and ``None`` are refused: a flag that accepted any truthy value would
    read ``allow_negative="no"`` as yes.
    """
    if isinstance(value, bool):
        return value
    if type(value).__name__ == "bool_" and type(value).__module__ == "numpy":
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {_short_repr(value)} "
                    f"({_type_name(value)})")


def _short_repr(value: object, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters (a message never holds a megabyte)."""
    if type(value) is int and not -10**30 < value < 10**30:
        return _int_text(value)
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a broken __repr__ must not hide the real message
        text = f"<{_type_name(value)} object>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _normalise(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch not in " -_.")


def choice(name: str, value: object, choices: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``choices`` (exact strings), else raise."""
    options = list(choices)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {options}, got {value!r} ({_type_name(value)})")
    if value not in options:
        raise UnknownNameError(f"{name} must be one of {options}, got {value!r}")
    return value


_INDEXES: dict[tuple[int, int], tuple[object, object, dict[str, str]]] = {}


def _index(table: Mapping[str, object], aliases: Mapping[str, str] | None) -> dict[str, str]:
    """Normalised spelling -> canonical key, built once per (table, aliases) pair."""
    cache_key = (id(table), id(aliases))
    hit = _INDEXES.get(cache_key)
    if hit is not None and hit[0] is table and hit[1] is aliases:
        return hit[2]
    index = {_normalise(key): key for key in table}
    for alias, target in (aliases or {}).items():
        index.setdefault(_normalise(alias), target)
    # a canonical spelling finds itself without normalising (the planners look names up
    # tens of thousands of times per layout search)
    index.update((key, key) for key in table)
    _INDEXES[cache_key] = (table, aliases, index)  # keeps both alive: ids stay unique
    return index


def lookup(
    name: str,
    value: object,
    table: Mapping[str, T],
    aliases: Mapping[str, str] | None = None,
) -> tuple[str, T]:
    """Look ``value`` up in ``table`` ignoring case, spaces, '-', '_' and '.'.

    Returns ``(canonical_name, entry)``. ``aliases`` maps extra spellings to canonical
    names. An unknown name raises :class:`UnknownNameError` listing the known names.
    """
    if not isinstance(value, str):
        raise TypeError(
            f"{name} must be a name (str), got {value!r} ({_type_name(value)}); "
            f"known: {', '.join(table)}"
        )
    index = _index(table, aliases)
    key = index.get(value)
    if key is None:
        key = index.get(_normalise(value))
    if key is None:
        raise UnknownNameError(
            f"unknown {name} {value!r}; known {name}s: {', '.join(table)}"
        )
    return key, table[key]


def tensor_bytes(elements: int, bytes_per_element: int | float) -> int:
    """Exact byte count of ``elements`` values of ``bytes_per_element`` bytes each.

    Integers stay exact; a fractional size (``0.5`` byte for int4) is multiplied exactly
    (as a binary fraction) and rounded up to whole bytes, the way packed storage pads.
    """
    if isinstance(bytes_per_element, int):
        return elements * bytes_per_element
    numerator, denominator = float(bytes_per_element).as_integer_ratio()
    return -((-elements * numerator) // denominator)


# ---------------------------------------------------------------------------------------
# Results: every public function of a calculator module returns finite numbers

#: Annotations (as written, ``from __future__ import annotations``) that make a flag.
_FLAG_ANNOTATIONS = {"bool": False, "bool | None": True, "None | bool": True,
                     "Optional[bool]": True}
_MAX_DEPTH = 6  # containers inside containers looked into
_PLAIN = (int, str, bool, type(None))
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
_calls = threading.local()  # how deep this thread is inside guarded functions


def _flags(func: Callable[..., Any]) -> tuple[tuple[str, int | None, bool], ...]:
    """``(name, position or None, None allowed)`` of each parameter declared ``bool``
    (by its annotation, or by a ``True``/``False`` default)."""
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return ()
    found = []
    for position, param in enumerate(signature.parameters.values()):
        annotation = param.annotation
        if isinstance(annotation, str) and annotation in _FLAG_ANNOTATIONS:
            none_ok = _FLAG_ANNOTATIONS[annotation]
        elif annotation is bool or isinstance(param.default, bool):
            none_ok = False
        else:
            continue
        none_ok = none_ok or param.default is None
        positional = param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD)
        found.append((param.name, position if positional else None, none_ok))
    return tuple(found)


def _bound(func: Callable[..., Any], args: tuple[Any, ...],
           kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of a call by parameter name (positional ones named too)."""
    try:
        return dict(inspect.signature(func).bind_partial(*args, **kwargs).arguments)
    except (TypeError, ValueError):
        named = {f"#{i}": a for i, a in enumerate(args)}
        named.update(kwargs)
        return named


def _call_text(func: Callable[..., Any], args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> str:
    """``name(key=value, ...)`` with every value cut short, for a message."""
    parts = [f"{k}={_short_repr(x, 40)}" for k, x in _bound(func, args, kwargs).items()]
    text = ", ".join(parts)
    if len(text) > 240:
        text = text[:237] + "..."
    return f"{func.__name__}({text})"


def _field_names(kind: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = tuple(f.name for f in dataclasses.fields(kind))
    return names


def _children(item: Any) -> list[tuple[str, Any]] | None:
    """``(path step, value)`` of what ``item`` holds, or ``None`` for a leaf."""
    if isinstance(item, Mapping):
        return [(f"[{key!r}]", sub) for key, sub in item.items()]
    if isinstance(item, (tuple, list)):
        return [(f"[{i}]", sub) for i, sub in enumerate(item)]
    if dataclasses.is_dataclass(item) and not isinstance(item, type):
        return [(f".{name}", getattr(item, name, None)) for name in _field_names(type(item))]
    return None


def _leaf_bad(item: Any) -> float | None:
    """The non-finite value a leaf stands for (inf for a Fraction beyond the range)."""
    kind = type(item)
    if kind is float:
        return item if item - item != 0.0 else None
    if isinstance(item, _PLAIN):
        return None
    if isinstance(item, complex):
        finite = math.isfinite(item.real) and math.isfinite(item.imag)
        return None if finite else math.nan
    if isinstance(item, numbers.Real) and not isinstance(item, numbers.Integral):
        try:
            as_float = float(item)
        except (OverflowError, ValueError, TypeError):
            return math.inf
        return None if math.isfinite(as_float) else as_float
    return None


def _any_bad(item: Any, depth: int = 0) -> bool:
    """Whether ``item`` holds a NaN or an infinity (the fast pass: no paths built)."""
    kind = type(item)
    if kind is float:
        return item - item != 0.0
    if kind is int or kind is str or kind is bool or item is None:
        return False
    if depth < _MAX_DEPTH:
        if kind is tuple or kind is list:
            values: Iterable[Any] = item
        elif kind in _FIELD_NAMES or (dataclasses.is_dataclass(item)
                                      and not isinstance(item, type)):
            names = _field_names(kind)
            held = getattr(item, "__dict__", None)
            values = (held.values() if held is not None and len(held) == len(names)
                      else [getattr(item, name, None) for name in names])
        elif isinstance(item, Mapping):
            values = item.values()
        else:
            return _leaf_bad(item) is not None
        for sub in values:
            sub_kind = type(sub)
            if sub_kind is float:
                if sub - sub != 0.0:
                    return True
            elif sub_kind is not int and sub_kind is not str and sub is not None and (
                _any_bad(sub, depth + 1)
            ):
                return True
        return False
    return _leaf_bad(item) is not None


def _first_non_finite(value: Any) -> tuple[str, float] | None:
    """Where ``value`` (a number, a tuple, list or mapping of them, a dataclass) holds a
    NaN or an infinity: ``(path, the value)``; ``None`` when all is finite."""
    if not _any_bad(value):
        return None
    stack: list[tuple[str, Any, int]] = [("", value, 0)]
    while stack:
        path, item, depth = stack.pop()
        children = _children(item) if depth < _MAX_DEPTH else None
        if children is None:
            bad = _leaf_bad(item)
            if bad is not None:
                return path or "the result", bad
            continue
        stack.extend(reversed([(path + step, sub, depth + 1) for step, sub in children]))
    return None  # pragma: no cover - the fast pass found one


def _renamed(error: Exception, func: Callable[..., Any], args: tuple[Any, ...],
             kwargs: Mapping[str, Any]) -> Exception | None:
    """``error`` again, its message led by the call, when the message names none of the
    call's arguments (a check deep inside: ``hours must be finite`` from ``on_prem_tco``);
    ``None`` when it already names one."""
    names = [name for name in _bound(func, args, kwargs) if not name.startswith("#")]
    message = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
    if not names or any(name in message for name in names):
        return None
    text = f"{_call_text(func, args, kwargs)}: {message}"
    try:
        return type(error)(text)
    except Exception:  # noqa: BLE001 - an exception class with another signature
        return ValueError(text)


def learner_messages(func: Callable[..., T]) -> Callable[..., T]:
    """Mark ``func`` as one whose error messages are written for a learner and shown as
    they are (:func:`gpulesson.units.parse_quantity`): :func:`guarded` leaves them alone
    instead of leading them with the call."""
    func.__gl_learner_messages__ = True  # type: ignore[attr-defined]
    return func


def guarded(func: Callable[..., T]) -> Callable[..., T]:
    """``func`` with the contract of a calculator enforced around it.

    * a flag (a parameter declared ``bool``) that is not ``True``/``False`` raises
      ``TypeError`` naming it;
    * an ``ArithmeticError`` inside (``OverflowError``, ``ZeroDivisionError``) becomes a
      ``ValueError`` that names the call and its inputs;
    * a ``ValueError``, ``TypeError`` or ``KeyError`` whose message names none of the
      arguments (it came from a check deeper down) is raised again, of the same type, led
      by the call and its inputs (unless ``func`` writes its messages for a learner:
      :func:`learner_messages`);
    * an ``AttributeError`` (an argument lacks what the formula reads: ``None`` for a
      config) becomes a ``TypeError``, and an ``OSError`` (a path given that cannot be
      read) a ``ValueError``, both led by the call and its inputs;
    * a result holding NaN or an infinity (in a number, a tuple, a mapping or a dataclass)
      raises ``ValueError`` naming the call, its inputs and where the result overflowed.

    Both failures of the result raise :class:`NoFiniteResultError` (a ``ValueError``), so
    that a front end can put the message in its own words.

    A guarded function called by another one (in the same thread) runs unchecked: the
    outermost call checks the final result, so a calculator built from calculators pays
    for one check, not one per step.

    ``inspect.signature`` and ``inspect.getsource`` still see ``func`` (``__wrapped__``).
    """
    if getattr(func, "__gl_guarded__", False):
        return func
    flags = _flags(func)
    as_is = getattr(func, "__gl_learner_messages__", False)

    @functools.wraps(func)
    def checked(*args: Any, **kwargs: Any) -> T:
        depth = getattr(_calls, "depth", 0)
        if depth:  # called by another guarded function: the outer call checks the result
            return func(*args, **kwargs)
        for name, position, none_ok in flags:
            if name in kwargs:
                value = kwargs[name]
            elif position is not None and position < len(args):
                value = args[position]
            else:
                continue
            if value is None and none_ok:
                continue
            if value is not True and value is not False:
                boolean(name, value)
        _calls.depth = 1
        try:
            result = func(*args, **kwargs)
        except ArithmeticError as error:
            raise NoFiniteResultError(
                f"{_call_text(func, args, kwargs)} cannot be computed: the inputs are beyond "
                f"what a float holds ({type(error).__name__}: {error}); use smaller values",
                function=func.__name__, arguments=_bound(func, args, kwargs),
            ) from error
        except (ValueError, TypeError, KeyError) as error:
            renamed = None if as_is else _renamed(error, func, args, kwargs)
            if renamed is None:
                raise
            raise renamed from error
        except AttributeError as error:  # an argument lacks what the formula reads
            raise TypeError(f"{_call_text(func, args, kwargs)}: an argument is not of the "
                            f"type this function takes ({error})") from error
        except OSError as error:  # a path given cannot be read
            raise ValueError(f"{_call_text(func, args, kwargs)}: cannot read what was "
                             f"given ({type(error).__name__}: {error})") from error
        finally:
            _calls.depth = 0
        kind = type(result)
        if kind is int or kind is str or kind is bool:
            return result
        if kind is float:
            if result - result == 0.0:
                return result
            where: tuple[str, float] | None = ("the result", result)
        else:
            where = _first_non_finite(result)
        if where is not None:
            path, bad = where
            raise NoFiniteResultError(
                f"{_call_text(func, args, kwargs)} has no finite result ({path} would be "
                f"{bad!r}): the inputs are too large or too small for this formula",
                function=func.__name__, arguments=_bound(func, args, kwargs), where=path,
            )
        return result

    checked.__gl_guarded__ = True  # type: ignore[attr-defined]
    for attribute in ("cache_clear", "cache_info"):  # keep an lru_cache's handles
        if hasattr(func, attribute):
            setattr(checked, attribute, getattr(func, attribute))
    return checked


def guard_module(namespace: dict[str, Any]) -> None:
    """Guard (:func:`guarded`) every public function of a module, in place.

    Call it once, as the last line of a calculator module: ``v.guard_module(globals())``.
    The public functions are the callables of ``__all__`` defined in that module (classes
    and names imported from elsewhere are left alone); a function added later to
    ``__all__`` is covered without further code.
    """
    module = namespace.get("__name__")
    for name in namespace.get("__all__", ()):
        obj = namespace.get(name)
        if obj is None or isinstance(obj, type) or not callable(obj):
            continue
        if getattr(obj, "__module__", None) != module:
            continue
        namespace[name] = guarded(obj)
