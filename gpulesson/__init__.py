"""gpulesson: the helper package of the course *GPU Mathematics for Machine Learning*.

Import the submodule you need (``from gpulesson import gemm``). This file stays light on
purpose: importing it must not import numpy, matplotlib or ipywidgets, because the pure-
Python calculator modules also run in a browser (Pyodide) where those are absent.
"""

__version__ = "0.1.0"
