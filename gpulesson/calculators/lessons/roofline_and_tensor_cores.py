"""Lesson 2, ``roofline_and_tensor_cores``: a GEMM on the roofline of a GPU."""

from __future__ import annotations

from typing import Any

from gpulesson import gemm, memory, roofline
from gpulesson.calculators import shared
from gpulesson.calculators.spec import Calculator, Output

LESSON = "roofline_and_tensor_cores"


def _gemm_calc(**kw: Any) -> dict[str, Any]:
    a = gemm.analyse(kw["m"], kw["k"], kw["n"], peak_flops=kw["peak_flops"],
                     bandwidth=kw["bandwidth"],
                     bytes_per_element=memory.precision_bytes(kw["dtype"]),
                     read_c=kw["read_c"] == "yes")
    return {
        "flops": a.flops, "bytes": a.bytes, "intensity": a.intensity,
        "ridge_point": a.ridge_point, "compute_time": a.compute_time,
        "memory_time": a.memory_time, "time": a.time, "bound": a.bound,
        "attainable": roofline.attainable_flops(a.intensity, kw["peak_flops"],
                                                kw["bandwidth"]),
    }


GEMM = Calculator(
    name="gemm",
    title="Tensor-core GEMM calculator",
    description="FLOPs, minimum bytes, arithmetic intensity and roofline time of "
                "C = A·B with A of M×K and B of K×N on a chosen GPU.",
    lesson=LESSON,
    inputs=(
        shared.matrix_dimension("m", "M (rows of A and C)"),
        shared.matrix_dimension("k", "K (inner dimension)"),
        shared.matrix_dimension("n", "N (columns of B and C)"),
        shared.dtype_input(),
        shared.yes_no("read_c", "Also read C (β ≠ 0)", "no",
                      "C = αAB + βC reads C as well: one more M×N matrix of traffic."),
        *shared.gpu_inputs("H100 SXM", peak=True, bandwidth=True),
    ),
    outputs=(
        Output("flops", "Operations (2·M·K·N)", "flops"),
        Output("bytes", "Minimum memory traffic", "bytes"),
        Output("intensity", "Arithmetic intensity", "intensity"),
        Output("ridge_point", "GPU ridge point", "intensity"),
        Output("compute_time", "Time at peak compute", "seconds"),
        Output("memory_time", "Time at peak bandwidth", "seconds"),
        Output("time", "Roofline time", "seconds"),
        Output("bound", "Bound by", "text"),
        Output("attainable", "Attainable FLOP/s", "flop/s"),
    ),
    function=_gemm_calc,
    sources=("Williams, Waterman & Patterson 2009 (roofline)", shared.GPU_NOTE),
)

ENTRIES = (GEMM,)
