"""The GPU stand-in: a numpy-backed CuPy for the test suite (``cupy/``, ``cupyx/``) and
the pytest plugin that runs the notebooks on it (``plugin.py``). Never installed."""
