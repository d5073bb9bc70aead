"""The registry: every calculator by name, in course order, checked when it is added.

:data:`CALCULATORS` is filled once, when :mod:`gpulesson.calculators` is imported, from
the lesson modules of :mod:`gpulesson.calculators.lessons`. Each entry's declaration is
checked as it is added, so a broken entry fails at import rather than in front of a
reader: unique names, a kind and a range for every input, choices for every choice, a
``custom`` choice for every preset, fills that name real inputs, a default for every
input (its own, or its preset's), known output formats and a lesson of
:mod:`gpulesson.course`.

Standard library only: this module runs in the browser (Pyodide).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from gpulesson import course, units
from gpulesson.calculators.spec import CUSTOM, FORMATS, KINDS, Calculator, Keyed

__all__ = ["CALCULATORS", "check_declaration", "get"]


class _Registry(Mapping[str, Calculator]):
    """An ordered, read-only mapping name -> :class:`Calculator` (course order)."""

    def __init__(self) -> None:
        self._items: dict[str, Calculator] = {}

    def __getitem__(self, name: str) -> Calculator:
        return self._items[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"CALCULATORS({', '.join(self._items)})"

    def _add(self, calc: Calculator) -> None:
        if calc.name in self._items:
            raise ValueError(f"calculator {calc.name!r} is declared twice")
        check_declaration(calc)
        self._items[calc.name] = calc

    def _remove(self, name: str) -> None:
        """Take an entry out again (for the tests' own entries)."""
        del self._items[name]


#: Every calculator of the course, in course order.
CALCULATORS = _Registry()


def get(name: str) -> Calculator:
    """The calculator called ``name``; ``KeyError`` lists the known names."""
    if not isinstance(name, str) or name not in CALCULATORS:
        raise KeyError(
            f"unknown calculator {name!r}; known calculators: {', '.join(CALCULATORS)}"
        )
    return CALCULATORS[name]


def check_declaration(calc: Calculator) -> None:
    """Raise ``ValueError`` naming the calculator and the input or output at fault."""
    names = [i.name for i in calc.inputs]
    if len(set(names)) != len(names):
        raise ValueError(f"{calc.name}: duplicate input names in {names}")
    outs = [o.name for o in calc.outputs]
    if len(set(outs)) != len(outs):
        raise ValueError(f"{calc.name}: duplicate output names in {outs}")
    filled: dict[str, str] = {}
    for spec in calc.inputs:
        if not spec.name.isidentifier():
            raise ValueError(f"{calc.name}: input name {spec.name!r} is not an identifier "
                             "(name first, then the label)")
        if spec.kind not in KINDS:
            raise ValueError(f"{calc.name}.{spec.name}: kind must be one of {KINDS}")
        if spec.kind in ("number", "integer"):
            if spec.min is None or spec.max is None or spec.min > spec.max:
                raise ValueError(f"{calc.name}.{spec.name}: needs a range min <= max")
            if spec.dimension not in units.DIMENSIONS:
                raise ValueError(f"{calc.name}.{spec.name}: unknown dimension {spec.dimension}")
        if spec.kind in ("choice", "preset") and not spec.choices:
            raise ValueError(f"{calc.name}.{spec.name}: a {spec.kind} needs choices")
        if spec.kind == "preset":
            if CUSTOM not in spec.choice_values():
                raise ValueError(f"{calc.name}.{spec.name}: a preset needs a 'custom' choice")
            for choice, fills in spec.fills.items():
                if choice not in spec.choice_values():
                    raise ValueError(f"{calc.name}.{spec.name}: fill for unknown {choice!r}")
                for target, raw in fills.items():
                    if target not in names or target == spec.name:
                        raise ValueError(f"{calc.name}.{spec.name}: fills unknown {target!r}")
                    if isinstance(raw, Keyed) and (
                            raw.by not in names or calc.input(raw.by).kind != "choice"):
                        raise ValueError(f"{calc.name}.{spec.name}: keyed by {raw.by!r}, "
                                         "which is not a choice input")
                    filled[target] = spec.name
            unfilled = set(spec.suggests) - {t for fills in spec.fills.values() for t in fills}
            if unfilled:
                raise ValueError(f"{calc.name}.{spec.name}: suggests {sorted(unfilled)}, "
                                 "which it never fills")
    for spec in calc.inputs:
        if spec.default is None and not _default_from_preset(calc, spec.name, filled):
            raise ValueError(f"{calc.name}.{spec.name}: needs a default")
    for o in calc.outputs:
        if o.format not in FORMATS:
            raise ValueError(f"{calc.name}.{o.name}: unknown format {o.format!r}")
    if calc.lesson not in course.SLUGS:
        raise ValueError(f"{calc.name}: lesson {calc.lesson!r} is not in gpulesson.course")


def _default_from_preset(calc: Calculator, target: str, filled: Mapping[str, str]) -> bool:
    preset_name = filled.get(target)
    if preset_name is None:
        return False
    preset = next(i for i in calc.inputs if i.name == preset_name)
    return preset.default not in (None, CUSTOM) and target in preset.fills.get(preset.default, {})
