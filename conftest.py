"""The plugins of the whole test session, loaded from the repository root.

``tests.site.nbval_reference`` gives nbval's ``nbval-check-output`` cells the book build's
run of the same cell as reference (the notebooks are committed without outputs);
``tests.scheduling`` orders the session (the book build first) and groups it for the two
workers of ``make test``; ``tests.nbval_kernels`` starts nbval's kernels on Unix sockets,
so that two kernels started at once never race for a TCP port. They are loaded here
because the notebooks are outside ``tests/``, and only a root conftest's plugins reach
them.
"""

pytest_plugins = ("tests.site.nbval_reference", "tests.scheduling", "tests.nbval_kernels")
