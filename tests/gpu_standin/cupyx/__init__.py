"""The stand-in's ``cupyx`` (see ``cupy/__init__.py``): the profiler's ``benchmark``."""
