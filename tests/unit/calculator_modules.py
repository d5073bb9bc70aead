"""Which modules of ``gpulesson`` hold calculators, found on disk.

Every module of the package is a calculator module (pure functions of numbers, each ending
with ``v.guard_module(globals())``) except the front ends, the helpers and the modules that
need numpy or more, listed in :data:`NOT_CALCULATORS`. A new module, or a module split into
a package, is therefore held to the calculators' contract as soon as it exists.
"""

from __future__ import annotations

import pkgutil

import gpulesson

#: Modules (a name covers its submodules) that are not calculators.
NOT_CALCULATORS = (
    "gpulesson._validate",      # the checks themselves
    "gpulesson.calculators",    # the registry: evaluate() never raises, fuzzed on its own
    "gpulesson.browser",        # the site's entry, fuzzed on its own
    "gpulesson.exercises",      # checkers, fuzzed on their own
    "gpulesson.course",         # the course's table of lessons
    "gpulesson.display",        # the two renderings of an interactive thing
    "gpulesson.widgets",        # ipywidgets
    "gpulesson.device",         # numpy or cupy
    "gpulesson.bench",          # timing
    "gpulesson.machine",        # measuring this machine
    "gpulesson.side_by_side",   # lesson 1's table of this machine and its layer timing
    "gpulesson.plotting",       # matplotlib
    "gpulesson.diagrams",       # matplotlib: schematics drawn from gpulesson.execution
    "gpulesson.collectives",    # mpi4py
    "gpulesson.forward_pass",   # a measured forward pass in numpy
    "gpulesson.kernelcheck",    # runs learners' kernels in a pure-Python CUDA runtime
)


def calculator_modules() -> list[str]:
    """Dotted names of the calculator modules, sorted."""
    names = [info.name for info in pkgutil.walk_packages(gpulesson.__path__, "gpulesson.")]
    return sorted(name for name in names if not any(
        name == skip or name.startswith(skip + ".") for skip in NOT_CALCULATORS))
