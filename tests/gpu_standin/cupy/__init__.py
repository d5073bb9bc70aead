"""A stand-in for the part of CuPy the course uses, computed with numpy on the CPU.

A TEST FIXTURE, never installed for learners: ``tests/gpu_standin/plugin.py`` puts the
folder above this package at the front of ``PYTHONPATH`` (with ``GPULESSON_DEVICE=gpu``)
for the runs that exercise the lessons' GPU branches. ``gpulesson.device`` then finds a
"usable GPU": ``cupy.cuda.runtime.getDeviceCount()`` is 1, a tiny kernel returns the right
sum, and the device reports a small memory (:data:`MEMORY_BYTES`), so that
``gpulesson.bench.sizes_for`` picks the small end of its GPU size tables, which a CPU can
run in seconds.

The point is not speed but the API. The stand-in behaves like CuPy where a lesson can get
CuPy wrong, and fails loudly where real CuPy would, or where real CuPy would silently give
a wrong answer:

* **Implicit conversion to numpy is refused**, with CuPy's own message: ``np.asarray``,
  matplotlib or any numpy function that needs a host array raises ``TypeError`` (CuPy's
  ``ndarray.__array__``). ``.get()``, ``cupy.asnumpy`` and ``gpulesson.device.to_numpy``
  are the explicit ways. Mixing a numpy array into a CuPy operation raises ``TypeError``
  too (no implicit host-to-device copy). numpy functions on stand-in arrays dispatch to
  the stand-in (NEP 18, ``__array_function__``), as they do with CuPy.
* **A clock read with GPU work still queued fails.** A CuPy call returns before the GPU has
  done the work, so ``t0 = perf_counter(); f(); t1 = perf_counter()`` measures the launch.
  The stand-in counts every "kernel" (every operation that computes array values) as
  queued until a synchronisation: ``cupy.cuda.runtime.deviceSynchronize()``,
  ``cupy.cuda.Device().synchronize()``, a stream's or event's ``synchronize()``, or an
  implicit one (``.get()``, ``float()``, printing, ``item()``...). Host-to-device copies
  (``cupy.asarray`` of host data) are synchronous, as CUDA's pageable copies are. Reading
  ``time.perf_counter`` (or ``perf_counter_ns``, ``time.time``, ``time.monotonic``) from
  course code (anything outside the Python installation and this stand-in) while kernels
  launched since the previous such read are still queued raises :class:`StandinMisuseError`.
  ``cupyx.profiler.benchmark`` synchronises, as CuPy's does.
* **Device memory is finite**: allocations beyond :data:`MEMORY_BYTES` raise
  ``cupy.cuda.memory.OutOfMemoryError``; the default memory pool reports the bytes in use,
  each allocation rounded up to 512 bytes as CuPy's pool does.

FP16 matrix products are computed in float32 and rounded to float16 (as Tensor Cores
accumulate in FP32), so the stand-in's FP16 GEMMs take as long as FP32 ones on the CPU.
Set ``GPULESSON_STANDIN_MEMORY`` (bytes) to present a larger or smaller device.
"""

from __future__ import annotations

import builtins
import functools
import operator
import os
import sys
import time as _time
import types
import weakref
from pathlib import Path

import numpy

__version__ = "13.6.0"
#: Marks this package as the test stand-in (real CuPy has no such attribute).
__standin__ = True

#: The device's memory in bytes: small, so that size tables pick CPU-sized problems.
MEMORY_BYTES = int(os.environ.get("GPULESSON_STANDIN_MEMORY", str(2**30)))
#: The device's name, as ``getDeviceProperties(0)["name"]`` gives it.
DEVICE_NAME = "gpulesson GPU stand-in (numpy on the CPU)"
_ALLOCATION_UNIT = 512  # CuPy's memory pool rounds every allocation up to this
_STANDIN_ROOT = str(Path(__file__).resolve().parent.parent)


class StandinMisuseError(RuntimeError):
    """The code did something that silently goes wrong on a real GPU."""


# ---------------------------------------------------------------------------------------
# The queue of launched work, and the clock guard


class _Queue:
    """How many kernels were launched, and up to which one the host has waited."""

    launched = 0
    synchronized = 0
    checked = 0  # kernels launched up to the last guarded clock read
    last_kernel = ""

    @classmethod
    def launch(cls, what: str) -> None:
        cls.launched += 1
        cls.last_kernel = what

    @classmethod
    def synchronize(cls) -> None:
        cls.synchronized = cls.launched


_REAL_CLOCKS = {name: getattr(_time, name)
                for name in ("perf_counter", "perf_counter_ns", "time", "monotonic")}
_EXEMPT = tuple(os.path.realpath(p) for p in
                {sys.prefix, sys.base_prefix, sys.exec_prefix, _STANDIN_ROOT} if p)


def _caller_is_course_code(frame: types.FrameType | None) -> bool:
    if frame is None:
        return False
    filename = frame.f_code.co_filename
    if filename.startswith("<") and not filename.startswith("<ipython-input"):
        return False
    path = os.path.realpath(filename) if not filename.startswith("<") else filename
    return not path.startswith(_EXEMPT) or "/site-packages/gpulesson" in path


def _guarded(name: str):
    real = _REAL_CLOCKS[name]

    @functools.wraps(real)
    def clock():
        if _Queue.launched > builtins.max(_Queue.synchronized, _Queue.checked) and \
                _caller_is_course_code(sys._getframe(1)):
            queued = _Queue.launched - builtins.max(_Queue.synchronized, _Queue.checked)
            _Queue.checked = _Queue.launched
            raise StandinMisuseError(
                f"time.{name}() was read while {queued} GPU kernel(s) were still queued "
                f"(the last: {_Queue.last_kernel}). A CuPy call returns before the GPU is "
                "done, so this timing would measure the launch, not the work: call "
                "gpulesson.device.synchronize() (cupy.cuda.runtime.deviceSynchronize()) "
                "before reading the clock, or time with gpulesson.bench.benchmark.")
        _Queue.checked = _Queue.launched
        return real()

    return clock


for _name in _REAL_CLOCKS:
    setattr(_time, _name, _guarded(_name))

if os.environ.get("GPULESSON_STANDIN_LOG"):  # the plugin's record of which kernels used it
    with open(os.environ["GPULESSON_STANDIN_LOG"], "a", encoding="utf-8") as _log:
        _log.write(f"imported by process {os.getpid()}\n")


# ---------------------------------------------------------------------------------------
# Device memory


class _Memory:
    used = 0
    peak = 0


def _rounded(nbytes: int) -> int:
    return -(-int(nbytes) // _ALLOCATION_UNIT) * _ALLOCATION_UNIT if nbytes else 0


def _release(nbytes: int) -> None:
    _Memory.used -= nbytes


def _account(array: numpy.ndarray) -> None:
    """Charge a new device buffer to the device's memory (views are free)."""
    if array.base is not None and isinstance(array.base, numpy.ndarray):
        return
    size = _rounded(array.nbytes)
    if _Memory.used + size > MEMORY_BYTES:
        from cupy.cuda.memory import OutOfMemoryError

        raise OutOfMemoryError(size, _Memory.used, MEMORY_BYTES)
    _Memory.used += size
    _Memory.peak = builtins.max(_Memory.peak, _Memory.used)
    weakref.finalize(array, _release, size)


# ---------------------------------------------------------------------------------------
# The array


def _refuse_host(value, what="this operation"):
    raise TypeError(
        f"Unsupported type {type(value)!r} for {what}: a numpy array lives on the host. "
        "Copy it to the device first with cupy.asarray (the stand-in refuses the implicit "
        "host-to-device copy, as CuPy does).")


def _unwrap(value, what="this operation"):
    """Device arrays to their numpy buffers; host arrays refused; containers recursed."""
    if isinstance(value, ndarray):
        return value._a
    if isinstance(value, numpy.ndarray):
        if value.ndim == 0:
            return value[()]
        _refuse_host(value, what)
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v, what) for v in value)
    return value


def _wrap(result, *, kernel: str | None = None):
    """numpy results to device arrays (0-d for scalars, as CuPy returns)."""
    if isinstance(result, numpy.ndarray):
        out = ndarray._from_numpy(result)
    elif isinstance(result, (numpy.generic, bool)):
        out = ndarray._from_numpy(numpy.asarray(result))
    elif isinstance(result, tuple):
        return tuple(_wrap(r, kernel=kernel) for r in result)
    elif isinstance(result, list):
        return [_wrap(r, kernel=kernel) for r in result]
    else:
        return result
    if kernel:
        _Queue.launch(kernel)
    return out


def _matmul(a, b, out=None):
    """``a @ b`` in numpy, FP16 products accumulated in float32 (as Tensor Cores do)."""
    if a.dtype == numpy.float16 and b.dtype == numpy.float16:
        result = numpy.matmul(a.astype(numpy.float32), b.astype(numpy.float32))
        if out is not None:
            out[...] = result
            return out
        return result.astype(numpy.float16)
    return numpy.matmul(a, b) if out is None else numpy.matmul(a, b, out=out)


def _binary(op, name, reflected=False):
    def method(self, other):
        if isinstance(other, numpy.ndarray) and other.ndim > 0:
            _refuse_host(other, f"ndarray.{name}")
        if not isinstance(other, (ndarray, numpy.ndarray, numpy.generic, int, float,
                                  complex, bool)):
            return NotImplemented
        x = _unwrap(other)
        result = op(x, self._a) if reflected else op(self._a, x)
        return _wrap(result, kernel=name)

    method.__name__ = name
    return method


def _inplace(op, name):
    def method(self, other):
        if isinstance(other, numpy.ndarray) and other.ndim > 0:
            _refuse_host(other, f"ndarray.{name}")
        x = _unwrap(other)
        if op is _matmul:
            self._a[...] = _matmul(self._a, x)
        else:
            op(self._a, x, out=self._a, casting="same_kind")
        _Queue.launch(name)
        return self

    method.__name__ = name
    return method


def _unary(op, name):
    def method(self):
        return _wrap(op(self._a), kernel=name)

    method.__name__ = name
    return method


def _reduction(name):
    def method(self, *args, **kwargs):
        kwargs = {k: _unwrap(v) for k, v in kwargs.items()}
        if "out" in kwargs and isinstance(kwargs["out"], numpy.ndarray):
            raise TypeError("out must be a cupy.ndarray")
        return _wrap(getattr(self._a, name)(*_unwrap(args), **kwargs), kernel=name)

    method.__name__ = name
    return method


def _host_read(read, name):
    """A method that returns ``read(the numpy buffer, *args)`` once the queue is done."""
    def method(self, *args):
        _Queue.synchronize()
        return read(self._a, *args)

    method.__name__ = name
    return method


class ndarray:
    """A device array: a numpy buffer that refuses to be read implicitly on the host."""

    __slots__ = ("_a", "__weakref__")
    __array_priority__ = 100

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order="C"):
        buffer = numpy.empty(shape, dtype=dtype, order=order)
        _account(buffer)
        self._a = buffer

    @classmethod
    def _from_numpy(cls, array: numpy.ndarray) -> ndarray:
        obj = object.__new__(cls)
        _account(array)
        obj._a = array
        return obj

    # -- what describes the array (no kernel, no synchronisation)
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    nbytes = property(lambda self: self._a.nbytes)
    itemsize = property(lambda self: self._a.itemsize)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: self._a.flags)
    device = property(lambda self: cuda.Device(0))
    T = property(lambda self: ndarray._from_numpy(self._a.T))

    # -- host copies: explicit only
    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            "Implicit conversion to a NumPy array is not allowed. "
            "Please use `.get()` to construct a NumPy array explicitly.")

    def get(self, stream=None, order="C", out=None, blocking=True):
        _Queue.synchronize()
        if out is not None:
            out[...] = self._a
            return out
        return numpy.array(self._a, order=order)

    def set(self, arr, stream=None):
        if not isinstance(arr, numpy.ndarray):
            raise TypeError(f"Only numpy.ndarray can be set to cupy.ndarray, got {type(arr)}")
        self._a[...] = arr

    # -- host values: each waits for the queued kernels, as a device-to-host copy does
    item = _host_read(numpy.ndarray.item, "item")
    tolist = _host_read(numpy.ndarray.tolist, "tolist")
    __float__ = _host_read(float, "__float__")
    __int__ = _host_read(int, "__int__")
    __index__ = _host_read(operator.index, "__index__")
    __complex__ = _host_read(complex, "__complex__")
    __bool__ = _host_read(bool, "__bool__")
    __repr__ = _host_read(repr, "__repr__")
    __str__ = _host_read(str, "__str__")
    __format__ = _host_read(format, "__format__")

    def __len__(self):
        if self._a.ndim == 0:
            raise TypeError("len() of unsized object")
        return len(self._a)

    def __iter__(self):
        if self._a.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self._a.shape[0]))

    # -- indexing
    def __getitem__(self, key):
        result = self._a[_unwrap_index(key)]
        if isinstance(result, numpy.ndarray) and result.base is not None:
            return ndarray._from_numpy(result)  # a view: no kernel
        return _wrap(result, kernel="getitem")

    def __setitem__(self, key, value):
        if isinstance(value, numpy.ndarray) and value.ndim > 0:
            _refuse_host(value, "ndarray.__setitem__")
        self._a[_unwrap_index(key)] = _unwrap(value)
        _Queue.launch("setitem")

    # -- numpy protocols: dispatch to the stand-in, like CuPy
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        for x in inputs + tuple(kwargs.get("out", ()) or ()):
            if isinstance(x, numpy.ndarray) and x.ndim > 0:
                _refuse_host(x, f"numpy.{ufunc.__name__}")
        args = _unwrap(inputs)
        if "out" in kwargs:
            outs = kwargs["out"]
            kwargs["out"] = tuple(_unwrap(o) for o in outs)
            getattr(ufunc, method)(*args, **kwargs)
            _Queue.launch(ufunc.__name__)
            return outs[0] if len(outs) == 1 else outs
        return _wrap(getattr(ufunc, method)(*args, **kwargs), kernel=ufunc.__name__)

    def __array_function__(self, func, types_, args, kwargs):
        ours = getattr(sys.modules[__name__], func.__name__, None)
        if ours is None or ours is func:
            return NotImplemented
        return ours(*args, **kwargs)

    # -- methods
    def astype(self, dtype, order="K", casting=None, subok=None, copy=True):
        if not copy and numpy.dtype(dtype) == self.dtype:
            return self
        return _wrap(self._a.astype(dtype, order=order), kernel="astype")

    def copy(self, order="C"):
        return _wrap(self._a.copy(order=order), kernel="copy")

    def reshape(self, *shape, order="C"):
        result = self._a.reshape(*shape, order=order)
        return ndarray._from_numpy(result) if result.base is not None else _wrap(
            result, kernel="reshape")

    def ravel(self, order="C"):
        return self.reshape(-1, order=order)

    def flatten(self, order="C"):
        return _wrap(self._a.flatten(order=order), kernel="flatten")

    def view(self, dtype=None):
        return ndarray._from_numpy(self._a.view() if dtype is None else self._a.view(dtype))

    def transpose(self, *axes):
        return ndarray._from_numpy(self._a.transpose(*axes))

    def swapaxes(self, a, b):
        return ndarray._from_numpy(self._a.swapaxes(a, b))

    def squeeze(self, axis=None):
        return ndarray._from_numpy(self._a.squeeze(axis))

    def fill(self, value):
        if isinstance(value, numpy.ndarray) and value.ndim > 0:
            _refuse_host(value, "ndarray.fill")
        self._a.fill(_unwrap(value))
        _Queue.launch("fill")

    def dot(self, b, out=None):
        return matmul(self, b, out=out)

    for _name in ("sum", "mean", "max", "min", "std", "var", "prod", "argmax", "argmin",
                  "cumsum", "any", "all", "clip", "round", "nonzero", "conj", "trace"):
        locals()[_name] = _reduction(_name)
    del _name

    # the arithmetic operators, each with its reflected form (``2 * a`` as ``a * 2``)
    for _op, _ufunc, _kernel in (("add", numpy.add, "add"),
                                 ("sub", numpy.subtract, "subtract"),
                                 ("mul", numpy.multiply, "multiply"),
                                 ("truediv", numpy.true_divide, "true_divide"),
                                 ("floordiv", numpy.floor_divide, "floor_divide"),
                                 ("mod", numpy.remainder, "remainder"),
                                 ("pow", numpy.power, "power"),
                                 ("matmul", _matmul, "matmul")):
        locals()[f"__{_op}__"] = _binary(_ufunc, _kernel)
        locals()[f"__r{_op}__"] = _binary(_ufunc, _kernel, True)
    del _op, _ufunc, _kernel
    __and__ = _binary(numpy.bitwise_and, "bitwise_and")
    __or__ = _binary(numpy.bitwise_or, "bitwise_or")
    __xor__ = _binary(numpy.bitwise_xor, "bitwise_xor")
    __lt__ = _binary(numpy.less, "less")
    __le__ = _binary(numpy.less_equal, "less_equal")
    __gt__ = _binary(numpy.greater, "greater")
    __ge__ = _binary(numpy.greater_equal, "greater_equal")
    __eq__ = _binary(numpy.equal, "equal")
    __ne__ = _binary(numpy.not_equal, "not_equal")
    __iadd__ = _inplace(numpy.add, "add")
    __isub__ = _inplace(numpy.subtract, "subtract")
    __imul__ = _inplace(numpy.multiply, "multiply")
    __itruediv__ = _inplace(numpy.true_divide, "true_divide")
    __ipow__ = _inplace(numpy.power, "power")
    __imatmul__ = _inplace(_matmul, "matmul")
    __neg__ = _unary(numpy.negative, "negative")
    __pos__ = _unary(numpy.positive, "positive")
    __abs__ = _unary(numpy.absolute, "absolute")
    __invert__ = _unary(numpy.invert, "invert")
    __hash__ = None


def _unwrap_index(key):
    if isinstance(key, ndarray):
        return key._a
    if isinstance(key, tuple):
        return tuple(k._a if isinstance(k, ndarray) else k for k in key)
    return key


# ---------------------------------------------------------------------------------------
# The module's functions


def asarray(a, dtype=None, order=None, *, blocking=False):
    """Device array from device or host data; a host copy is synchronous (CUDA's pageable
    copies are), so it is not a queued kernel."""
    if isinstance(a, ndarray):
        return a if dtype is None or numpy.dtype(dtype) == a.dtype else a.astype(dtype)
    return ndarray._from_numpy(numpy.array(a, dtype=dtype, order=order or "K", copy=True))


def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, *, blocking=False):
    if isinstance(obj, ndarray):
        return _wrap(numpy.array(obj._a, dtype=dtype, copy=True, order=order, ndmin=ndmin),
                     kernel="array")
    return ndarray._from_numpy(numpy.array(obj, dtype=dtype, copy=True, order=order,
                                           ndmin=ndmin))


def ascontiguousarray(a, dtype=None):
    return _wrap(numpy.ascontiguousarray(_unwrap(a), dtype=dtype), kernel="copy")


def asnumpy(a, stream=None, order="C", out=None, blocking=True):
    if isinstance(a, ndarray):
        return a.get(out=out)
    return numpy.asarray(a, order=order)


def get_array_module(*args):
    return sys.modules[__name__] if builtins.any(isinstance(a, ndarray) for a in args) else numpy


def empty(shape, dtype=float, order="C"):
    return ndarray._from_numpy(numpy.empty(shape, dtype=dtype, order=order))  # no kernel


def empty_like(a, dtype=None, order="K", shape=None):
    return ndarray._from_numpy(numpy.empty_like(_unwrap(a), dtype=dtype, order=order,
                                                shape=shape))


def matmul(a, b, out=None, **kwargs):
    result = _matmul(_unwrap(a), _unwrap(b), None if out is None else _unwrap(out))
    if out is not None:
        _Queue.launch("matmul")
        return out
    return _wrap(result, kernel="matmul")


dot = matmul


def copyto(dst, src, casting="same_kind", where=True):
    numpy.copyto(_unwrap(dst), _unwrap(src, "copyto"), casting=casting, where=_unwrap(where))
    _Queue.launch("copyto")


def _wrapped(name):
    fn = getattr(numpy, name)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        out = kwargs.get("out")
        args = _unwrap(args, f"cupy.{name}")
        kwargs = {k: _unwrap(v, f"cupy.{name}") for k, v in kwargs.items()}
        result = fn(*args, **kwargs)
        if isinstance(out, ndarray):
            _Queue.launch(name)
            return out
        return _wrap(result, kernel=name)

    return call


_FUNCTIONS = """abs absolute add subtract multiply divide true_divide floor_divide power
    remainder mod negative positive sqrt square cbrt reciprocal exp exp2 expm1 log log2 log10
    log1p sin cos tan tanh sinh cosh arctan arctan2 hypot sign floor ceil rint trunc around
    round fabs maximum minimum fmax fmin clip where sum mean std var max min amax amin argmax
    argmin prod cumsum cumprod nansum nanmax nanmin any all count_nonzero nonzero
    einsum outer inner tensordot vdot kron trace transpose reshape ravel concatenate stack
    vstack hstack dstack column_stack split array_split expand_dims squeeze broadcast_to
    tile repeat flip fliplr flipud roll take take_along_axis sort argsort searchsorted
    unique bincount diff allclose isclose array_equal isfinite isnan isinf logical_and
    logical_or logical_not logical_xor greater greater_equal less less_equal equal not_equal
    zeros_like ones_like full_like diag diagonal tril triu meshgrid histogram percentile
    median average cov corrcoef""".split()
for _name in _FUNCTIONS:
    globals()[_name] = _wrapped(_name)


def _creation(name):
    fn = getattr(numpy, name)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        return _wrap(fn(*args, **kwargs), kernel=name)  # a fill kernel on the device

    return call


for _name in ("zeros", "ones", "full", "arange", "linspace", "logspace", "eye", "identity"):
    globals()[_name] = _creation(_name)
del _name

# dtypes and constants, as CuPy re-exports numpy's
for _name in ("bool_ complex64 complex128 dtype e finfo float16 float32 float64 iinfo inf "
              "int8 int16 int32 int64 intp nan newaxis pi uint8 uint16 uint32 uint64").split():
    globals()[_name] = getattr(numpy, _name)
del _name
half, single, double = numpy.float16, numpy.float32, numpy.float64

# The submodules register themselves in sys.modules (import cupy.cuda, cupy.random ...).
from cupy import _core, cuda, linalg, random  # noqa: E402,F401


def get_default_memory_pool():
    return cuda.memory._POOL


def get_default_pinned_memory_pool():
    return cuda.memory._PINNED_POOL


def is_available():
    return True


def show_config():
    print(f"CuPy stand-in {__version__} (numpy {numpy.__version__} on the CPU), "
          f"device: {DEVICE_NAME}, {MEMORY_BYTES:,} bytes")
