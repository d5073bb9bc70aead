"""The stand-in's ``cupy.linalg``: numpy's, on device arrays."""

from __future__ import annotations

import functools

import numpy
from cupy import _unwrap, _wrap


def _wrapped(name):
    fn = getattr(numpy.linalg, name)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        return _wrap(fn(*_unwrap(args, f"cupy.linalg.{name}"), **kwargs),
                     kernel=f"linalg.{name}")

    return call


for _name in ("norm", "solve", "inv", "qr", "svd", "eigh", "cholesky", "det", "lstsq",
              "matrix_power"):
    globals()[_name] = _wrapped(_name)
del _name
