"""A small calculator declared only for the tests of the engine and the widget builder.

Its function only echoes its SI inputs (plus one integer beyond 2^53), so the tests that
use it check what the engine, the forms and the widgets do around a calculator (defaults,
presets, units, validation, JSON, widgets), not a formula.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from gpulesson import calculators as C

#: The inputs the toy echoes: each one's SI value is the output ``<input>_out``, labelled
#: with the input's name and shown in this format.
ECHOED = {"n": "count", "rate": "bytes/s", "peak": "flop/s", "precision": "text"}


def echo(**kw):
    return {f"{name}_out": kw[name] for name in ECHOED} | {"big": 2**60 + kw["n"]}


TOY = C.Calculator(
    name="_toy",
    title="Toy",
    description="Echoes its inputs.",
    lesson="parallelism_at_the_core",
    inputs=(
        C.Integer("n", "Count", default=8, range=(1, 1024)),
        C.Select("precision", "Precision", default="bf16",
                 choices=(C.Choice("bf16", "BF16"), C.Choice("fp32", "FP32"))),
        C.Preset("gpu", "GPU", default="fast",
                 choices=(C.Choice("fast", "Fast GPU"), C.Choice("old", "Old GPU"),
                          C.Choice(C.CUSTOM, "Custom")),
                 fills={"fast": {"peak": C.Keyed(by="precision",
                                                 values={"bf16": 1000e12, "fp32": 60e12}),
                                 "rate": 3.35e12},
                        "old": {"peak": C.Keyed(by="precision", values={"fp32": 15.7e12}),
                                "rate": 0.9e12}}),
        C.Number("peak", "Peak", range=(0.001, 1e5), unit="TFLOP/s", scale=1e12,
                 dimension="flop/s"),
        C.Number("rate", "Bandwidth", range=(0.01, 100), unit="TB/s", scale=1e12,
                 dimension="bytes/s"),
    ),
    outputs=(*(C.Output(f"{name}_out", name, fmt) for name, fmt in ECHOED.items()),
             C.Output("big", "big", "count")),
    function=echo,
)


@contextlib.contextmanager
def registered() -> Iterator[str]:
    """The toy calculator in the registry for the duration of a ``with``; its name."""
    C.CALCULATORS._add(TOY)
    try:
        yield TOY.name
    finally:
        C.CALCULATORS._remove(TOY.name)
