"""The plugin of the whole test session, loaded from the repository root.

``tests.site.nbval_reference`` gives nbval's ``nbval-check-output`` cells the book build's
run of the same cell as reference (the notebooks are committed without outputs). It is
loaded here because the notebooks are outside ``tests/``, and only a root conftest's plugins
reach them.
"""

pytest_plugins = ("tests.site.nbval_reference",)
