"""Arrays for the pure-Python CUDA runtime: :class:`DeviceArray`, a flat ``array.array``
with a shape, a dtype and an address, and the scalar types a kernel names (``float32``).

A float32 array stores float32 values (``array.array("f")`` rounds every store), so a
kernel computes as it would on the device. Host data converts in and out: numpy arrays
(when numpy is installed), nested lists, or numbers. Standard library only.
"""

from __future__ import annotations

import array
import math
import struct
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["DTYPES", "DeviceArray", "Scalar", "as_device", "dtype_name", "float32",
           "float64", "int32", "int64", "uint32", "zeros"]

#: Element types: name -> (array typecode, bytes).
DTYPES = {"float32": ("f", 4), "float64": ("d", 8), "int32": ("i", 4), "int64": ("q", 8),
          "uint32": ("I", 4), "uint64": ("Q", 8), "int16": ("h", 2), "uint16": ("H", 2),
          "int8": ("b", 1), "uint8": ("B", 1)}
_PYTHON = {"float": "float64", "int": "int64", "bool": "uint8", "bool_": "uint8"}
_F32 = struct.Struct("f")


class Scalar:
    """A scalar type as a kernel uses it: ``float32(0.0)`` casts, ``float32`` names a
    dtype (``cuda.shared.array(32, float32)``)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.kind = "f" if name.startswith("float") else "i"
        self.bits = DTYPES[name][1] * 8

    def __call__(self, value: Any = 0) -> Any:
        if self.kind == "f":
            value = float(value)
            if self.bits == 32 and math.isfinite(value):
                try:
                    return _F32.unpack(_F32.pack(value))[0]
                except OverflowError:
                    return math.copysign(math.inf, value)
            return value
        value = int(value)
        if self.name.startswith("u"):
            return value % (1 << self.bits)
        half = 1 << (self.bits - 1)
        return (value + half) % (1 << self.bits) - half

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__


float32, float64 = Scalar("float32"), Scalar("float64")
int32, int64, uint32 = Scalar("int32"), Scalar("int64"), Scalar("uint32")


def dtype_name(dtype: Any) -> str:
    """The name of ``dtype``: a string, a numpy dtype or type, a Numba type, a
    :class:`Scalar`, or Python's ``float``/``int``. ``ValueError`` for anything else."""
    if isinstance(dtype, str):
        name = dtype
    elif isinstance(getattr(dtype, "name", None), str):
        name = dtype.name
    elif isinstance(dtype, type):
        name = dtype.__name__
    else:
        name = str(dtype)
    name = _PYTHON.get(name, name)
    if name not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    return name


def _shape(shape: Any) -> tuple[int, ...]:
    parts = shape if isinstance(shape, tuple) else (shape,)
    out = []
    for part in parts:
        if isinstance(part, bool) or not hasattr(part, "__index__"):
            raise ValueError(f"shape must be an int or a tuple of ints, got {shape!r}")
        out.append(part.__index__())
    if not out or any(n < 0 for n in out):
        raise ValueError(f"shape must hold 1 or more sizes of 0 or more, got {shape!r}")
    return tuple(out)


class DeviceArray:
    """An array a kernel reads and writes: ``a[i]``, ``a[i, j]``, ``a.shape``, ``a.size``,
    ``a.ndim``, ``a.dtype``, ``len(a)``.

    ``space`` is ``"global"``, ``"shared"`` or ``"local"``; ``base`` its byte address (for
    the sector and bank counts). While a kernel runs, its accesses go through the runtime,
    which checks and records them; outside a run the array is plain data.
    """

    __slots__ = ("data", "shape", "ndim", "size", "dtype", "itemsize", "strides", "name",
                 "space", "base", "read_only", "written", "reads", "writes", "atomics",
                 "last_writer", "block")

    def __init__(self, data: array.array, shape: tuple[int, ...], dtype: str, *,
                 name: str = "array", space: str = "global", base: int = 0) -> None:
        self.data, self.shape, self.dtype = data, shape, dtype
        self.ndim, self.size = len(shape), math.prod(shape)
        self.itemsize = DTYPES[dtype][1]
        strides, step = [], 1
        for n in reversed(shape):
            strides.append(step)
            step *= n
        self.strides = tuple(reversed(strides))
        self.name, self.space, self.base = name, space, base
        self.read_only = False
        self.written: list[bool] | None = None
        self.reads: dict = {}
        self.writes: dict = {}
        self.atomics: dict = {}
        self.last_writer: dict = {}
        self.block = -1

    @classmethod
    def full(cls, shape: Any, value: Any, dtype: Any = "float32", **kw: Any) -> DeviceArray:
        name = dtype_name(dtype)
        dims = _shape(shape)
        code = DTYPES[name][0]
        return cls(array.array(code, [value]) * math.prod(dims), dims, name, **kw)

    def __len__(self) -> int:
        return self.shape[0]

    def flat_index(self, index: Any) -> int:
        """The position of ``a[index]`` in :attr:`data`; ``IndexError`` outside."""
        parts = index if isinstance(index, tuple) else (index,)
        if len(parts) != self.ndim:
            raise IndexError(f"{self.name} has {self.ndim} dimension(s), indexed with "
                             f"{len(parts)}")
        flat = 0
        for part, n, stride in zip(parts, self.shape, self.strides, strict=True):
            i = part.__index__()
            if not 0 <= i < n:
                raise IndexError(f"index {i} is outside {self.name}'s {n} elements")
            flat += i * stride
        return flat

    def __getitem__(self, index: Any) -> Any:
        return self.data[self.flat_index(index)]

    def __setitem__(self, index: Any, value: Any) -> None:
        self.data[self.flat_index(index)] = value

    def tolist(self) -> Any:
        """The elements as (nested) lists."""
        values = self.data.tolist()
        for n in reversed(self.shape[1:]):
            values = [values[i:i + n] for i in range(0, len(values), n)]
        return values

    def copy_to_host(self) -> Any:
        """A numpy array of the elements when numpy is installed, nested lists otherwise."""
        try:
            import numpy
        except ImportError:
            return self.tolist()
        return numpy.array(self.data.tolist(), dtype=self.dtype).reshape(self.shape)

    def copy(self, **kw: Any) -> DeviceArray:
        options = {"name": self.name, "space": self.space, "base": self.base, **kw}
        return DeviceArray(array.array(self.data.typecode, self.data), self.shape,
                           self.dtype, **options)

    def __repr__(self) -> str:
        return f"<{self.space} array {self.name} {self.shape} {self.dtype}>"


def _flatten(values: Any) -> tuple[list[Any], tuple[int, ...]]:
    if not isinstance(values, (list, tuple)):
        return [values], ()
    if not values:
        return [], (0,)
    parts = [_flatten(v) for v in values]
    inner = parts[0][1]
    if any(p[1] != inner for p in parts):
        raise ValueError("a nested list must be rectangular")
    return [x for p in parts for x in p[0]], (len(values), *inner)


def as_device(values: Any, *, dtype: Any = None, name: str = "array") -> DeviceArray:
    """A copy of ``values`` (a numpy array, nested lists or a :class:`DeviceArray`) as a
    global :class:`DeviceArray`."""
    if isinstance(values, DeviceArray):
        return values.copy(name=name, space="global")
    if hasattr(values, "shape") and hasattr(values, "dtype") and hasattr(values, "ravel"):
        kind = dtype_name(dtype if dtype is not None else values.dtype)
        flat = values.ravel().tolist()
        shape = tuple(int(n) for n in values.shape)
    else:
        flat, shape = _flatten(values)
        if not shape:
            raise ValueError(f"{name} must be an array or a list, got {type(values).__name__}")
        if dtype is None:
            dtype = "float32" if any(isinstance(v, float) for v in flat) else "int64"
        kind = dtype_name(dtype)
    data = array.array(DTYPES[kind][0], flat)
    return DeviceArray(data, shape, kind, name=name)


def zeros(shape: Any, dtype: Any = "float32", name: str = "array") -> DeviceArray:
    """A global array of zeros."""
    return DeviceArray.full(shape, 0, dtype, name=name)


def from_values(values: Iterable[Any], shape: Sequence[int], dtype: Any = "float32",
                name: str = "array") -> DeviceArray:
    """A global array from flat ``values`` in C order."""
    kind = dtype_name(dtype)
    return DeviceArray(array.array(DTYPES[kind][0], values), tuple(shape), kind, name=name)
