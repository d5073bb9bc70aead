"""Fixtures of the registry tests: a small calculator declared only for the tests.

The toy calculator's function only echoes its SI inputs, so tests that use it check what
the engine and the widget builder do around a calculator (defaults, presets, units,
validation, JSON, widgets), not a formula.
"""

from __future__ import annotations

import pytest

from gpulesson import calculators as C
from gpulesson.calculators import Calculator, Choice, Input, Keyed, Output


def _echo(**kw):
    return {
        "n_out": kw["n"],
        "rate_out": kw["rate"],
        "peak_out": kw["peak"],
        "big": 2**60 + kw["n"],
        "precision_out": kw["precision"],
    }


TOY = Calculator(
    name="_toy",
    title="Toy",
    description="Echoes its inputs.",
    lesson="parallelism_at_the_core",
    inputs=(
        Input("n", "Count", "integer", 8, 1, 1024, 1),
        Input("precision", "Precision", "choice", "bf16",
              choices=(Choice("bf16", "BF16"), Choice("fp32", "FP32"))),
        Input("gpu", "GPU", "preset", "fast",
              choices=(Choice("fast", "Fast GPU"), Choice("old", "Old GPU"),
                       Choice(C.CUSTOM, "Custom")),
              fills={"fast": {"peak": Keyed("precision", {"bf16": 1000e12, "fp32": 60e12}),
                              "rate": 3.35e12},
                     "old": {"peak": Keyed("precision", {"fp32": 15.7e12}),
                             "rate": 0.9e12}}),
        Input("peak", "Peak", "number", None, 0.001, 1e5, unit="TFLOP/s", scale=1e12,
              dimension="flop/s"),
        Input("rate", "Bandwidth", "number", None, 0.01, 100, unit="TB/s", scale=1e12,
              dimension="bytes/s"),
    ),
    outputs=(
        Output("n_out", "n", "count"),
        Output("rate_out", "rate", "bytes/s"),
        Output("peak_out", "peak", "flop/s"),
        Output("big", "big", "count"),
        Output("precision_out", "precision", "text"),
    ),
    function=_echo,
)


@pytest.fixture()
def toy():
    C.CALCULATORS._add(TOY)
    yield TOY.name
    C.CALCULATORS._items.pop(TOY.name)
