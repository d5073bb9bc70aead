"""The registry: every calculator of the course, declared once.

Each :class:`Calculator` names its inputs (label, unit, default, range, step, choices,
presets), its outputs (label and how to format them) and a compute function that maps the
validated inputs to output values **by calling the calculator functions** of
:mod:`gpulesson.gemm`, :mod:`gpulesson.memory`, :mod:`gpulesson.flops`,
:mod:`gpulesson.planning` and the others. The registry holds no formula of its own: change
a formula in its module and every widget, site calculator and exercise follows.

Three front ends read this registry:

* :func:`gpulesson.widgets.calculator_widget` builds an ipywidgets calculator (Jupyter);
* the static site runs this very package in Pyodide and calls :func:`apply_changes` on
  every change (:mod:`gpulesson.browser`; :func:`describe` gives the JSON spec of a form);
* the static HTML written at build time shows :func:`example`, the worked example.

Units. Every input is entered in the unit shown next to it (``unit``), for example a
bandwidth in TB/s; ``scale`` converts it to the SI base unit the calculator functions take
(``3.35 TB/s × 1e12 = 3.35e12 B/s``). Outputs are SI values, formatted for a reader by
:mod:`gpulesson.units`.

Presets. An input of kind ``"preset"`` (a model, a GPU) fills other inputs with values
taken from :data:`gpulesson.transformer.PRESETS` or :data:`gpulesson.hardware.GPUS`; a fill
may depend on another input (a GPU's peak FLOP/s depends on the chosen precision). Every
preset has a ``"custom"`` choice; editing a filled input by hand makes the preset custom,
unless the preset only suggests it (a GPU's dated price: ``Preset(..., suggests=...)``).

API: :data:`CALCULATORS` (ordered, course order), :func:`get`, :func:`compute` (validated
outputs in SI units), :func:`example` (the worked example), :func:`describe` (JSON spec),
:func:`evaluate` (never raises: values, formatted text or the error and the input at
fault), :func:`apply_preset` (what a preset choice fills in), :func:`apply_changes` (the
preset rules of a live form and what it then shows), :func:`preset_links` (which presets
fill, or are keyed by, each input), :func:`resolve` and :func:`si_inputs` (the inputs as
shown and as passed on), :func:`sweep` (outputs across one input, for plots),
:func:`format_output` and :func:`to_json` (integers above 2^53 as strings).

The package
-----------

========================  ================================================================
``spec``                  the declarations: :class:`Calculator`, :class:`Input` (made by
                          :func:`Number`, :func:`Integer`, :func:`Select`, :func:`Preset`),
                          :class:`Choice`, :class:`Keyed`, :class:`Output`
``registry``              :data:`CALCULATORS`, :func:`get`, the checks of a declaration
``engine``                resolve, validate, convert to SI, compute, sweep, example, presets
``formatting``            :func:`format_output`, :func:`to_json`
``forms``                 :func:`evaluate`, :func:`describe`, :func:`apply_changes`,
                          :func:`preset_links`: what a form shows
``shared``                inputs and outputs several lessons declare alike (model, GPU and
                          precision groups, the training cluster, prices)
``lessons.<slug>``        the calculators of one lesson of :mod:`gpulesson.course`
========================  ================================================================

Adding a calculator
-------------------

Edit one file, the module of the lesson that teaches it,
``gpulesson/calculators/lessons/<slug>.py`` (create it, named by the slug, for a lesson
that has none yet):

1. write its function: keyword arguments in SI units, one value per output, every value
   from a formula module (``gpulesson.memory``, ``gpulesson.planning`` ...); a rule of your
   own belongs in a formula module, not here;
2. declare it: ``Calculator(name=..., title=..., description=..., lesson=LESSON,
   inputs=(...), outputs=(...), function=..., sources=(...))``, with inputs such as
   ``Integer("workers", "Workers", default=64, range=(1, 1_000_000))`` and the shared ones
   of :mod:`gpulesson.calculators.shared`;
3. add it to the module's ``ENTRIES``, in the order the lesson shows it.

The registry picks it up in course order and checks its declaration at import; the
Jupyter widget, the static HTML, the site's live calculator and the JSON spec follow
without further code. Then test it on a published figure in
``tests/unit/calculators/test_<slug>.py``.

Standard library only: this package runs in the browser (Pyodide).
"""

from __future__ import annotations

from gpulesson.calculators import lessons as _lessons
from gpulesson.calculators import spec as _spec
from gpulesson.calculators.engine import (
    apply_preset,
    compute,
    example,
    resolve,
    si_inputs,
    sweep,
)
from gpulesson.calculators.formatting import format_output, to_json
from gpulesson.calculators.forms import apply_changes, describe, evaluate, preset_links
from gpulesson.calculators.registry import CALCULATORS, get
from gpulesson.calculators.spec import *  # noqa: F403 - the declarations, as spec.__all__ lists them

__all__ = [
    *_spec.__all__,
    "CALCULATORS",
    "apply_changes",
    "apply_preset",
    "compute",
    "describe",
    "evaluate",
    "example",
    "format_output",
    "get",
    "preset_links",
    "resolve",
    "si_inputs",
    "sweep",
    "to_json",
]

# every lesson's entries, in course order, each checked as it is added
for _entry in _lessons.entries():
    CALCULATORS._add(_entry)
