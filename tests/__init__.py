"""The course's test suite.

A package, so that pytest imports each test folder under its full name (``tests.site``,
``tests.content``, ...): a folder named ``site`` imported on its own would be mistaken for
Python's standard ``site`` module.
"""
