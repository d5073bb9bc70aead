"""Content tests: what the course's pages promise, checked without running them (nbval
runs the notebooks).

Every lesson has its ``test_<slug>.py`` (``test_claims.py`` requires it): the skeleton of
the house style, every figure of the prose as a claim rebuilt from the calculators, and
the checks specific to that lesson and its exercise bank. Where that outgrows 1,000 lines,
``test_<slug>.py`` keeps the claims and the helpers they need, and a topic moves to
``test_<slug>_<topic>.py`` (``test_distributed_math_sources.py``, for one), which imports
what it shares from ``test_<slug>.py``. What every bank owes (reference accepted, each
mistake its own hint, variants) is checked for all lessons at once by
``tests/unit/exercises/test_bank.py``. Shared helpers: ``nbtools.py`` (a notebook's
structure), ``claims.py`` (figures and claims), ``reference.py`` (the GPUs, models and
figure formats the pages share), ``book_figures.py`` (the narrative pages' figures) and
``study_time.py`` (the study-time model).
"""
