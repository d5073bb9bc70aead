"""The stand-in's ``cupy.random``: numpy's generators, drawing onto the device.

Drawing is a kernel (queued until a synchronisation). The numbers are numpy's, so a seed
gives the same stream here as in numpy, which real CuPy does not promise."""

from __future__ import annotations

import numpy
from cupy import _wrap


def _device(draw):
    def method(self, *args, **kwargs):
        return _wrap(draw(self._g, *args, **kwargs), kernel=f"random.{draw.__name__}")

    method.__name__ = draw.__name__
    return method


class Generator:
    """``cupy.random.default_rng(seed)``."""

    def __init__(self, seed=None):
        self._g = numpy.random.default_rng(seed)

    def random(self, size=None, dtype=numpy.float64, out=None):
        return _wrap(self._g.random(size, dtype=dtype), kernel="random.random")

    def standard_normal(self, size=None, dtype=numpy.float64, out=None):
        return _wrap(self._g.standard_normal(size, dtype=dtype), kernel="random.normal")

    def integers(self, low, high=None, size=None, dtype=numpy.int64, endpoint=False):
        return _wrap(self._g.integers(low, high, size=size, dtype=dtype, endpoint=endpoint),
                     kernel="random.integers")

    normal = _device(numpy.random.Generator.normal)
    uniform = _device(numpy.random.Generator.uniform)


def default_rng(seed=None):
    return Generator(seed)


class RandomState:
    """``cupy.random.RandomState(seed)``, the legacy interface."""

    def __init__(self, seed=None):
        self._g = numpy.random.RandomState(seed)

    def random_sample(self, size=None, dtype=float):
        return _wrap(self._g.random_sample(size).astype(dtype, copy=False),
                     kernel="random.random_sample")

    def standard_normal(self, size=None, dtype=float):
        return _wrap(self._g.standard_normal(size).astype(dtype, copy=False),
                     kernel="random.standard_normal")

    def rand(self, *size, dtype=float):
        return self.random_sample(size or None, dtype=dtype)

    def randn(self, *size, dtype=float):
        return self.standard_normal(size or None, dtype=dtype)

    normal = _device(numpy.random.RandomState.normal)
    uniform = _device(numpy.random.RandomState.uniform)
    randint = _device(numpy.random.RandomState.randint)

    def seed(self, seed=None):
        self._g.seed(seed)


_GLOBAL = RandomState()


def seed(seed=None):
    _GLOBAL.seed(seed)


def random(size=None, dtype=float):
    return _GLOBAL.random_sample(size, dtype=dtype)


random_sample = rand_ = random


def rand(*size, dtype=float):
    return _GLOBAL.rand(*size, dtype=dtype)


def randn(*size, dtype=float):
    return _GLOBAL.randn(*size, dtype=dtype)


def standard_normal(size=None, dtype=float):
    return _GLOBAL.standard_normal(size, dtype=dtype)


def normal(loc=0.0, scale=1.0, size=None, dtype=float):
    return _wrap(_GLOBAL._g.normal(loc, scale, size).astype(dtype, copy=False),
                 kernel="random.normal")


def uniform(low=0.0, high=1.0, size=None, dtype=float):
    return _wrap(_GLOBAL._g.uniform(low, high, size).astype(dtype, copy=False),
                 kernel="random.uniform")


def randint(low, high=None, size=None, dtype=int):
    return _wrap(_GLOBAL._g.randint(low, high, size, dtype=dtype), kernel="random.randint")
