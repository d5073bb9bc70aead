"""The declarations of a calculator: its inputs, outputs and the function linking them.

A calculator is data: a :class:`Calculator` names its inputs (:class:`Input`: label, unit,
default, range, step, choices, presets), its outputs (:class:`Output`: label and format)
and the function that maps the validated inputs to output values. The engine
(:mod:`gpulesson.calculators.engine` and :mod:`gpulesson.calculators.forms`) reads these
declarations; nothing here computes.

Inputs are declared with one constructor per kind, and every argument after the name and
the label is a keyword:

* :func:`Number` and :func:`Integer`: a value in ``range`` (inclusive, in the unit shown);
* :func:`Select`: one of a few :class:`Choice` values (a precision, yes or no);
* :func:`Preset`: a choice that fills other inputs (a model fills its shape, a GPU its
  datasheet figures), possibly depending on another input (:class:`Keyed`).

For example ``Integer("workers", "Workers", default=64, range=(1, 1_000_000))``.
:class:`Input` itself takes keywords only too, so no number can land in the wrong field.

Standard library only: this module runs in the browser (Pyodide).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

__all__ = [
    "CUSTOM",
    "FORMATS",
    "KINDS",
    "Calculator",
    "Choice",
    "Input",
    "Integer",
    "Keyed",
    "Number",
    "Output",
    "Preset",
    "Select",
]

#: The choice every preset input has: keep the values as they are.
CUSTOM = "custom"

#: Input kinds.
KINDS = ("number", "integer", "choice", "preset")

#: Output formats: the dimensions :func:`gpulesson.units.format_quantity` writes, then the
#: formats of :func:`gpulesson.calculators.formatting.format_output` itself.
FORMATS = ("bytes", "flops", "flop/s", "bytes/s", "seconds", "usd", "tokens/s", "count",
           "percent", "ratio", "intensity", "text", "bool", "number", "words")


@dataclass(frozen=True)
class Choice:
    """One option of a ``choice`` or ``preset`` input: the value passed on, and its label."""

    value: str
    label: str


@dataclass(frozen=True, kw_only=True)
class Keyed:
    """A preset fill that depends on another input's value (in SI units).

    Example: a GPU's dense peak depends on the precision, so the GPU preset fills
    ``peak_flops`` with ``Keyed(by="dtype", values={"bf16": 989.4e12, ...})``. A missing
    key means the datasheet gives no figure for that combination.
    """

    by: str
    values: Mapping[str, float]
    missing: str = ""  # message shown when the key is absent; {choice} and {key} filled in


@dataclass(frozen=True, kw_only=True)
class Input:
    """One input of a calculator (declare it with :func:`Number`, :func:`Integer`,
    :func:`Select` or :func:`Preset`).

    Parameters
    ----------
    name:
        keyword used by :func:`~gpulesson.calculators.compute` (and ``name=`` in the static
        HTML); a Python identifier.
    label:
        what the reader sees, without the unit.
    kind:
        ``"number"``, ``"integer"``, ``"choice"`` or ``"preset"``.
    default:
        the worked example's value, in ``unit``. ``None`` for an input filled by a preset
        whose default is not custom: its default then comes from that preset.
    min, max, step:
        the allowed range (inclusive) and the widget step, in ``unit``.
    smallest:
        for a range from 0: the smallest value above 0 accepted (0 itself is; a price or a
        traffic of 1e-300 is not, its outputs would read $1e-300 or overflow).
    unit:
        unit shown to the reader (``"TB/s"``); values are entered in it.
    scale:
        factor from ``unit`` to the SI base unit the calculator functions take.
    dimension:
        dimension of the SI value (a key of :data:`gpulesson.units.DIMENSIONS`).
    choices:
        options of a ``choice`` or ``preset`` input (a preset lists ``custom`` too).
    fills:
        for a preset: choice -> {input name: SI value or :class:`Keyed`}.
    suggests:
        for a preset: the inputs among its fills that it only suggests (a GPU's dated
        price): choosing fills them, but editing one keeps the choice, since they are not
        properties of it.
    help:
        one or two sentences: what the input means, where a default comes from.
    advanced:
        shown folded away (architecture details), still editable.
    slider:
        draw a slider rather than a text box (small ranges only).
    """

    name: str
    label: str
    kind: str = "number"
    default: Any = None
    min: float | None = None
    max: float | None = None
    step: float | None = None
    smallest: float | None = None
    unit: str = ""
    scale: float = 1.0
    dimension: str = "count"
    choices: tuple[Choice, ...] = ()
    fills: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    suggests: tuple[str, ...] = ()
    help: str = ""
    advanced: bool = False
    slider: bool = False

    def choice_values(self) -> tuple[str, ...]:
        return tuple(c.value for c in self.choices)


def _bounds(name: str, range: tuple[float, float]) -> tuple[float, float]:
    """``range`` as ``(min, max)``; ``ValueError`` naming the input unless min <= max."""
    if not isinstance(range, tuple) or len(range) != 2:
        raise TypeError(f"{name}: range must be a tuple (min, max), got {range!r}")
    low, high = range
    for end in (low, high):
        if isinstance(end, bool) or not isinstance(end, (int, float)):
            raise TypeError(f"{name}: range must hold two numbers, got {range!r}")
    if low > high:
        raise ValueError(f"{name}: range must be (min, max) with min <= max, got {range!r}")
    return low, high


def Number(name: str, label: str, *, range: tuple[float, float], default: float | None = None,
           step: float | None = None, unit: str = "", scale: float = 1.0,
           dimension: str = "count", help: str = "", advanced: bool = False,
           slider: bool = False, smallest: float | None = None) -> Input:
    """A real number in ``range`` (inclusive), entered in ``unit``.

    ``scale`` converts the shown unit to the SI value the calculator function receives
    (``unit="TB/s", scale=1e12``); ``dimension`` says what that SI value is (``"bytes/s"``).
    ``step`` is the widget's step, a hint only. ``smallest``, for a range from 0, is the
    smallest value above 0 accepted (0 stays allowed); the help then says so.
    """
    low, high = _bounds(name, range)
    if smallest is not None:
        if low != 0 or isinstance(smallest, bool) or not isinstance(smallest, (int, float)) \
                or not 0 < smallest <= high:
            raise ValueError(f"{name}: smallest must be a number in (0, max] of a range "
                             f"from 0, got {smallest!r} for range {range!r}")
        shown = f"{smallest:g} {unit}".strip()
        if unit.startswith("$"):
            shown = f"${smallest:g}{unit[1:]}"
        help = (help + " " if help else "") + f"Enter 0 or at least {shown}."
    return Input(name=name, label=label, kind="number", default=default, min=low, max=high,
                 step=step, smallest=smallest, unit=unit, scale=scale, dimension=dimension,
                 help=help, advanced=advanced, slider=slider)


def Integer(name: str, label: str, *, range: tuple[int, int], default: int | None = None,
            step: int = 1, unit: str = "", help: str = "", advanced: bool = False,
            slider: bool = False) -> Input:
    """A whole number in ``range`` (inclusive): a count such as layers, GPUs or tokens."""
    low, high = _bounds(name, range)
    return Input(name=name, label=label, kind="integer", default=default, min=low, max=high,
                 step=step, unit=unit, help=help, advanced=advanced, slider=slider)


def Select(name: str, label: str, *, choices: tuple[Choice, ...], default: str | None = None,
           help: str = "", advanced: bool = False) -> Input:
    """One of ``choices``, passed on as its ``value`` (a string)."""
    return Input(name=name, label=label, kind="choice", default=default,
                 choices=tuple(choices), help=help, advanced=advanced)


def Preset(name: str, label: str, *, choices: tuple[Choice, ...],
           fills: Mapping[str, Mapping[str, Any]], default: str, help: str = "",
           suggests: tuple[str, ...] = ()) -> Input:
    """A choice that fills other inputs: ``fills[choice] = {input: SI value or Keyed}``.

    ``choices`` must include :data:`CUSTOM` (fills nothing, keeps what the reader typed).
    ``suggests``: filled inputs that are not properties of the choice (a GPU's dated
    price): editing one keeps the choice rather than turning it ``custom``.
    """
    return Input(name=name, label=label, kind="preset", default=default,
                 choices=tuple(choices), fills=fills, help=help, suggests=tuple(suggests))


@dataclass(frozen=True)
class Output:
    """One output: a name, a label and how to format its (SI) value.

    ``format`` is one of :data:`FORMATS`: a dimension of
    :func:`gpulesson.units.format_quantity` (``"bytes"``, ``"flops"``, ``"flop/s"``,
    ``"bytes/s"``, ``"seconds"``, ``"usd"``, ``"tokens/s"``, ``"count"``, ``"percent"``) or
    ``"ratio"`` (×), ``"intensity"`` (FLOP/byte), ``"text"``, ``"bool"`` (yes/no),
    ``"number"`` (significant digits and ``unit``) and ``"words"`` (135 billion).
    ``binary`` adds the GiB figure to a bytes output; FLOP counts beyond the E prefix are
    written as powers of ten. ``missing`` is the text shown when the value is ``None``:
    a quantity these inputs give none of (a break-even that never comes). Everything after
    ``format`` is a keyword.
    """

    name: str
    label: str
    format: str
    _: KW_ONLY
    unit: str = ""
    digits: int = 3
    help: str = ""
    binary: bool = False
    missing: str = ""

    def __post_init__(self) -> None:
        if self.binary and self.format != "bytes":
            raise ValueError(f"{self.name}: binary applies to bytes outputs only")


@dataclass(frozen=True, kw_only=True)
class Calculator:
    """A calculator of the course: inputs, outputs and the function that links them.

    ``function`` receives every input as a keyword argument in SI units (integers as
    ``int``, choices as ``str``) and returns a mapping with exactly one value per output.
    It only assembles arguments for the formula modules (:mod:`gpulesson.memory`,
    :mod:`gpulesson.flops` ...) and returns what they compute. ``lesson`` is the slug of
    the lesson that teaches it (:data:`gpulesson.course.SLUGS`).
    """

    name: str
    title: str
    description: str
    lesson: str
    inputs: tuple[Input, ...]
    outputs: tuple[Output, ...]
    function: Callable[..., Mapping[str, Any]]
    sources: tuple[str, ...] = ()

    def input(self, name: str) -> Input:
        return self._named("input", self.inputs, name)

    def output(self, name: str) -> Output:
        return self._named("output", self.outputs, name)

    def _named(self, what: str, specs: tuple[Any, ...], name: str) -> Any:
        for spec in specs:
            if spec.name == name:
                return spec
        raise KeyError(
            f"calculator {self.name!r} has no {what} {name!r}; "
            f"{what}s are {', '.join(s.name for s in specs)}"
        )
