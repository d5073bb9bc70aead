"""The calculators of each lesson: one module per lesson, named by its slug.

``gpulesson/calculators/lessons/<slug>.py`` declares the calculators the lesson ``<slug>``
of :mod:`gpulesson.course` teaches, and lists them in ``ENTRIES`` in the order the lesson
shows them. :func:`entries` imports the modules in course order (a lesson without
calculators has no module) and checks that every entry names its own lesson, so the
registry is in course order by construction.

A module here only declares: each entry's function assembles the arguments of the
formula modules (:mod:`gpulesson.memory`, :mod:`gpulesson.flops`, :mod:`gpulesson.planning`
...) and returns what they compute; inputs and outputs that several lessons share come
from :mod:`gpulesson.calculators.shared`.

Standard library only: these modules run in the browser (Pyodide), which loads every file
of the package (``scripts/gl_calculators.py`` packs ``gpulesson.calculators`` whole, since
the modules are imported here by name).
"""

from __future__ import annotations

import importlib

from gpulesson import course
from gpulesson.calculators.spec import Calculator

__all__ = ["entries"]


def entries() -> tuple[Calculator, ...]:
    """Every lesson module's ``ENTRIES``, lessons in course order.

    Raises
    ------
    ValueError
        when an entry's ``lesson`` is not the slug of the module that declares it.
    """
    found: list[Calculator] = []
    for slug in course.SLUGS:
        name = f"{__name__}.{slug}"
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # this lesson has no calculators
                continue
            raise
        for calc in module.ENTRIES:
            if calc.lesson != slug:
                raise ValueError(f"{name} declares {calc.name!r} with lesson "
                                 f"{calc.lesson!r}; entries of this module have lesson "
                                 f"{slug!r}")
            found.append(calc)
    return tuple(found)
