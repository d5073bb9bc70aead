"""The stand-in's ``cupy.cuda.compiler``: its error type only."""


class CompileException(Exception):
    """As CuPy's NVRTC error (never raised by the stand-in)."""
