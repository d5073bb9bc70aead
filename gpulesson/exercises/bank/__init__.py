"""Exercise definitions, one module per lesson: ``bank/<lesson_slug>.py``.

A bank module defines ``LESSON`` (the slug), ``TITLE`` (the lesson's title) and
``EXERCISES`` (a tuple of exercises numbered 1, 2, ...). See the package docstring of
:mod:`gpulesson.exercises` for how to write one. Standard library and the calculator
modules only. The course order of the lessons is :data:`gpulesson.course.SLUGS`.
"""
