"""The stand-in's ``cupy._core``: cuBLAS's compute type per dtype (TF32 or full FP32).

``gpulesson.machine`` switches float32 GEMMs to TF32 through ``set_compute_type``; the
stand-in records the choice (its products are always full FP32 numpy)."""

from __future__ import annotations

import numpy
from cupy._core import _routines_linalg

_COMPUTE_TYPES: dict = {}


def set_compute_type(dtype, compute_type):
    """Record ``compute_type`` (a ``_routines_linalg.COMPUTE_TYPE_*``) for ``dtype``."""
    if compute_type not in _routines_linalg.COMPUTE_TYPES:
        raise ValueError(f"compute_type must be one of {_routines_linalg.COMPUTE_TYPES}, "
                         f"got {compute_type!r}")
    _COMPUTE_TYPES[numpy.dtype(dtype)] = compute_type


def get_compute_type(dtype):
    """The compute type recorded for ``dtype`` (the default when none was set)."""
    return _COMPUTE_TYPES.get(numpy.dtype(dtype), _routines_linalg.COMPUTE_TYPE_DEFAULT)
