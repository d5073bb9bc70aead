"""The stand-in's ``cupy.cuda.driver``: its error type only."""


class CUDADriverError(RuntimeError):
    """As CuPy's driver error (never raised by the stand-in)."""
