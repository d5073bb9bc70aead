"""Exercises that check answers, explain mistakes, and serve learners and instructors.

Four kinds (:mod:`gpulesson.exercises.core`, standard library only, runs in Pyodide):

* :class:`NumericExercise`: a number with units ("14 GB", "14e9 bytes", "13.04 GiB" are
  all read by :func:`gpulesson.units.parse_quantity`), accepted within a relative
  tolerance;
* :class:`ChoiceExercise`: multiple choice, the correct option chosen by a calculator;
* :class:`PredictExercise`: predict, then run: the learner commits a number, a later cell
  measures the real one and :meth:`Lesson.reveal` says how far off it was;
* :class:`CodeExercise`: the learner writes a small function (a real callable, never a
  string) that is checked against the reference calculator on the lesson's numbers and
  on random valid inputs, and the first input where it differs is reported.

``check(answer) -> Feedback`` is pure and never raises for anything a learner can type or
write: a function that raises (``SystemExit`` included) is reported, a ratio far off the
scale is "far too high", and a failure to build feedback is ``invalid`` feedback saying why.
In Jupyter a check runs under guard (:mod:`gpulesson.exercises.guard`: a time budget,
printed output captured and shown, interrupts reported); in the browser the same check is
a plain call inside a Web Worker that the page stops on timeout.
Each exercise declares common mistakes as functions of its inputs (see
:mod:`gpulesson.exercises.mistakes`); a wrong answer that matches one gets that mistake's
hint. Hints come one at a time; the worked solution after a correct answer or on request.

Using exercises in a notebook::

    from gpulesson.exercises import load_lesson
    lesson = load_lesson("parallelism_at_the_core")
    lesson.show(1)        # live widget in Jupyter; question + collapsed solution on the site

Adding exercises for a lesson
-----------------------------
1. Create ``gpulesson/exercises/bank/<lesson_slug>.py`` defining ``LESSON`` (the slug),
   ``TITLE`` and ``EXERCISES``, a tuple numbered 1, 2, ... (ids are ``<slug>-ex<N>``;
   never renumber a published exercise: the number keys learners' progress).
2. Every answer comes from a calculator (``gpulesson.gemm``, ``memory``, ``inference``
   ...): ``answer=lambda p: gemm.flops(p["m"], p["k"], p["n"])``. Never type a number
   that a calculator computes; that includes the worked solution, whose figures come
   from ``derived(p)``.
   Words and names come from the shared vocabulary, used through its modules as the
   calculators are (``core.NumericExercise``, ``wording.count(n)``, ``mistakes.gib_as_gb``;
   only ``Mistake`` is imported by name): :mod:`~gpulesson.exercises.wording` spells
   numbers, sizes and models and holds the unit words a learner may type
   (``extra_units=wording.PARAMS``, ``GPUS``, ``TOKENS`` ...), ``bank/_common.py`` the
   type of a variant's parameters, the reference GPU, the shared GPU menu and the model a
   variant names (``P``, ``H100``, ``SERVING_GPUS``, ``config``, imported by name) and the
   figures and slips several banks work out alike (``_common.sparse_peak(p)``,
   ``_common.decode_ceiling``, ``_common.training_seconds``, ``_common.intensity_slips``
   ...); the title is :func:`gpulesson.course.title` of the slug. A bank defines only what
   belongs to its own lesson.
3. Declare mistakes as the answer a learner making them would give, computed with the
   same calculators (``mistakes.counted_macs(lambda p: gemm.flops(...) / 2)``), with a hint
   that names the mistake. A kernel exercise is ``kernel_exercise(LESSON, number, title,
   MODEL, ...)`` (:mod:`~gpulesson.exercises.kernel`): its task, name, signature and worked
   solution come from the model kernel, and its mistakes are edits of it. Mistakes must
   stay distinguishable from the answer and from each other; :meth:`Exercise.problems`
   says when they are not.
4. Give ``sample(rng)`` to draw class variants (``variant(seed)`` retries draws until
   every mistake stays distinguishable) and ``defaults`` for the lesson's own numbers.
5. Write ``exercises/<slug>.ipynb``: a title cell with the label ``(<slug>_exercises)=``,
   ``lesson = load_lesson("<slug>")`` and one ``lesson.show(N)`` cell per exercise
   (tags ``nbval-ignore-output`` and ``remove-input``); a code exercise's cell hands out a
   stub, ``def <function_name>(<signature>): return None``. The site checks the exercises
   in the browser (:mod:`gpulesson.exercises.browser`), so the ``load_lesson`` cell, the
   stubs and a progress printout carry ``remove-cell``. The notebook needs no hidden
   checks (step 6 makes them); a cell an instructor's student edition must not contain
   (a reference solution) carries the tag ``solution``.
6. ``tests/unit/exercises/test_bank.py`` checks every bank module automatically: reference
   accepted (model solutions included), each mistake gets its own hint, nonsense gets
   generic feedback, variants stay valid, static HTML has the collapsed solution, and the
   notebook's stub has the signature and is not taken for an answer.

Instructors: ``python -m gpulesson.exercises export --all --out export/`` (or
``make student``) writes student notebooks without solutions, and answer keys.
Progress: :func:`progress_summary` reads the local ``.gpulesson-progress.json``; an
unreadable file is moved aside, never silently replaced (:mod:`gpulesson.exercises.progress`).

The modules, in the order they build on each other
--------------------------------------------------
Each imports only modules listed before it, so there is no import circle; the one
exception is :meth:`Lesson.show`, which loads ``widgets`` (and so ipywidgets) when called.

``feedback``
    :class:`Feedback` (plain data), its statuses, and the wording of numbers and ratios;
``core``
    exercise kinds, checking;
``kernel``
    CUDA kernel exercises, and the helpers their mistakes are declared with;
``mistakes``, ``wording``, ``serving``, ``bank/_common``
    what the banks share: common mistakes, how numbers, names and units are spelled, a
    decode step several lessons ask about, the GPUs and the type of a variant's parameters;
``bank/<slug>``
    one lesson's exercises;
``render``
    HTML for the site and the feedback, Markdown for the answer key;
``session``
    the session settings (:func:`configure`, :data:`settings`);
``guard``
    how a check runs: under a time budget with output captured (Jupyter), or as a plain
    call (the browser);
``catalogue``
    which lessons have exercises (:func:`available_lessons`, :func:`lesson_module`);
``progress``
    the local progress file;
``lesson``
    :class:`Lesson`, what a notebook uses;
``widgets``
    the ipywidgets layer (the only module that needs more than the standard library);
``export``, ``__main__``
    student editions, answer keys and the command line.
"""

from gpulesson.exercises.catalogue import available_lessons, lesson_module
from gpulesson.exercises.core import (
    ChoiceExercise,
    CodeExercise,
    Exercise,
    Feedback,
    Mistake,
    NumericExercise,
    PredictExercise,
    format_number,
)
from gpulesson.exercises.lesson import Lesson, load_lesson
from gpulesson.exercises.progress import progress_summary
from gpulesson.exercises.render import answer_key_markdown, feedback_html, static_html
from gpulesson.exercises.session import configure, settings

__all__ = [
    "ChoiceExercise",
    "CodeExercise",
    "Exercise",
    "Feedback",
    "Lesson",
    "Mistake",
    "NumericExercise",
    "PredictExercise",
    "answer_key_markdown",
    "available_lessons",
    "configure",
    "feedback_html",
    "format_number",
    "lesson_module",
    "load_lesson",
    "progress_summary",
    "settings",
    "static_html",
]
