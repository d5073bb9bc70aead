"""The site: the book build, the built site read from disk, and the site in Chromium.

``building.py`` builds the book (once per test session, shared with the nbval references
of ``nbval_reference.py``); ``conftest.py`` holds the fixtures; ``harness.py`` and
``axe.py`` serve the site and drive the browser. Checks of the book's sources that need no
build live in ``tests/content``.
"""
