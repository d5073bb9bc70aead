"""Kernel exercises: the learner writes a CUDA kernel, and the kernel checker runs it.

A :class:`KernelExercise` is a :class:`~gpulesson.exercises.core.CodeExercise` whose answer
is a ``@cuda.jit`` kernel (Numba). :meth:`KernelExercise.check` runs it with
:func:`gpulesson.kernelcheck.check_kernel` on the task's shapes, ragged edges included, in
two thread orders, and reports the first problem with its thread, element and line: an
index out of bounds, a race, a missing barrier, a wrong or missing element. A report that
matches a declared :class:`KernelMistake` gets that mistake's hint.

The model solution and each mistake are kernel *sources* (:class:`KernelSource`): the
worked solution shows exactly the code the checker runs, and the bank module stays
standard-library only. The checker imports numpy and Numba when it runs a kernel, not when
this module is imported.
Taught in: ``exercises/inside_the_gpu.ipynb``.
"""

from __future__ import annotations

import hashlib
import linecache
import math
import re
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from gpulesson.exercises.core import CodeExercise, Feedback, Mistake
from gpulesson.kernelcheck import check_kernel, counters, python_function, shim

__all__ = ["KernelExercise", "KernelMistake", "KernelSource", "first_is", "kernel_exercise",
           "kernel_mistake"]

#: The imports a kernel source starts with, as a learner writes them.
IMPORTS = "from numba import cuda, float32, int32"


class KernelSource:
    """A kernel written out as source (``@cuda.jit`` included), compiled on first use.

    ``py_func`` is the kernel's Python function, which is what the checker runs; ``source``
    is what the worked solution shows. ``constants`` are module-level names the kernel uses
    (``TILE = 8``).
    """

    def __init__(self, name: str, source: str, constants: Mapping[str, Any] | None = None):
        self.__name__ = name
        self.source = source.strip("\n")
        self.constants = dict(constants or {})
        self._function: Any = None

    @property
    def py_func(self) -> Any:
        if self._function is None:
            namespace: dict[str, Any] = {"cuda": shim.cuda, "float32": shim.float32,
                                         "int32": shim.int32, "math": math, **self.constants}
            # The checker reads a kernel's lines back by file name (linecache), so each
            # source needs a name of its own: a model kernel and its mistakes share a
            # function name, and under one file name whichever was compiled last stood in
            # for all of them (the model checked as a mistake's text, depending on order).
            digest = hashlib.sha256(self.source.encode("utf-8")).hexdigest()[:12]
            filename = f"<{self.__name__} {digest}>"
            code = compile(self.source + "\n", filename, "exec")
            exec(code, namespace)  # noqa: S102
            linecache.cache[filename] = (len(self.source), None, self.source.splitlines(True),
                                         filename)
            function = getattr(namespace[self.__name__], "py_func", namespace[self.__name__])
            function._course_kernel = True  # its checker report may be kept
            self._function = function
        return self._function

    def learner_text(self) -> str:
        """The kernel as a learner types it: the imports, the constants, the kernel."""
        constants = "".join(f"{name} = {value!r}\n" for name, value in self.constants.items())
        uses_math = "math." in self.source
        head = IMPORTS + ("\nimport math" if uses_math else "") + "\n\n"
        return head + (constants + "\n" if constants else "") + "\n" + self.source + "\n"

    @property
    def signature(self) -> str:
        """The kernel's parameters as its ``def`` line names them: ``'a, x, y'``."""
        return self._header().rsplit("(", 1)[1].removesuffix("):")

    def _header(self) -> str:
        """The lines up to the kernel's ``def`` line, that line included."""
        found = re.search(rf"^def {re.escape(self.__name__)}\(.*\):$", self.source, re.M)
        if found is None:
            raise ValueError(f"{self.__name__} has no line 'def {self.__name__}(...):'")
        return self.source[:found.end()]

    def with_body(self, body: str) -> KernelSource:
        """The same kernel, decorator and ``def`` line, with another body (a mistake that
        rewrites the whole kernel): ``body`` is the indented lines after the ``def``."""
        return KernelSource(self.__name__, self._header() + "\n" + body.strip("\n"),
                            self.constants)

    def edited(self, old: str, new: str = "", *, occurrence: int = 1) -> KernelSource:
        """The same kernel with the ``occurrence``-th ``old`` replaced by ``new`` (a mistake
        made on purpose). ``ValueError`` when ``old`` does not occur that often."""
        parts = self.source.split(old)
        if len(parts) <= occurrence:
            raise ValueError(f"{old!r} occurs {len(parts) - 1} times in {self.__name__}, "
                             f"not {occurrence}")
        text = old.join(parts[:occurrence]) + new + old.join(parts[occurrence:])
        return KernelSource(self.__name__, text, self.constants)

    def __call__(self, *args: Any) -> Any:  # a kernel is launched, not called
        raise TypeError(f"launch {self.__name__} as {self.__name__}[grid, block](...)")

    def __repr__(self) -> str:
        return f"KernelSource({self.__name__!r})"


@dataclass(frozen=True)
class KernelMistake(Mistake):
    """A common kernel bug: a kernel that makes it, and how the checker's report shows it.

    Parameters
    ----------
    kernel:
        a :class:`KernelSource` with the bug (for tests, and to show what it looks like).
    detect:
        ``detect(report) -> bool``: whether a failing report is this mistake (for example
        ``lambda r: r.first.kind == "out_of_bounds"``).
    """

    kernel: KernelSource | None = None
    detect: Callable[[Any], bool] = field(default=lambda report: False)


def kernel_exercise(lesson: str, number: int, title: str, model: KernelSource, *,
                    question: str, hints: tuple[str, ...], solution: str,
                    mistakes: tuple[KernelMistake, ...]) -> KernelExercise:
    """A kernel exercise on the checker's task named after its model kernel: the learner
    writes a kernel of the model's name and signature, checked against the model, which is
    also the worked solution."""
    return KernelExercise(lesson=lesson, number=number, title=title, task=model.__name__,
                          function_name=model.__name__, signature=model.signature,
                          question=question, hints=hints, solution=solution, reference=model,
                          model_solution=model, mistakes=mistakes)


def kernel_mistake(key: str, hint: str, kernel: KernelSource,
                   detect: Callable[[Any], bool]) -> KernelMistake:
    """A kernel bug a learner makes: ``kernel`` makes it and ``detect`` knows its report. It
    has no value to compare, a kernel being checked by running it."""
    return KernelMistake(key, hint, lambda p: None, kernel=kernel, detect=detect)


def first_is(kind: str, *, at: str | None = None) -> Callable[[Any], bool]:
    """A ``detect``: the report's first problem is of ``kind`` (``"race"``,
    ``"out_of_bounds"`` ...), and with ``at`` on a line of the kernel that holds that text."""

    def detect(report: Any) -> bool:
        first = report.first
        return (first is not None and first.kind == kind
                and (at is None or (first.site is not None and at in first.site.text)))

    return detect


# Reports of the course's own kernels (model solutions, mistakes), by the function checked;
# a learner's kernels are checked afresh each time, since the globals they read may change.
_REPORTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@dataclass(frozen=True, kw_only=True)
class KernelExercise(CodeExercise):
    """Write a CUDA kernel; the kernel checker runs it on the task's shapes.

    Parameters
    ----------
    task:
        the name of a :data:`gpulesson.kernelcheck.TASKS` entry (shapes, launch, expected
        result); ``function_name`` is usually the same.
    model_solution, reference:
        the model kernel (a :class:`KernelSource`).
    mistakes:
        :class:`KernelMistake` declarations, tried in order.
    """

    kind: ClassVar[str] = "code"

    task: str
    sample_input: Callable[[Any], Mapping[str, Any]] = field(default=lambda rng: {})
    trials: int = 0

    def answer_text(self) -> str:
        return f"a kernel {self.function_name}({self.signature})"

    def model_solution_source(self) -> str:
        solution = self.model_solution
        return solution.learner_text() if isinstance(solution, KernelSource) else \
            super().model_solution_source()

    def report(self, kernel: Any) -> Any:
        """The checker's :class:`~gpulesson.kernelcheck.Report` for ``kernel``."""
        fn = python_function(kernel)
        ours = getattr(fn, "_course_kernel", False)
        if ours and fn in _REPORTS:
            return _REPORTS[fn]
        found = check_kernel(fn, self.task)
        if ours:
            _REPORTS[fn] = found
        return found

    def check(self, answer: Any) -> Feedback:
        if isinstance(answer, str):
            return self._feedback("invalid", "Pass the kernel itself, not text: "
                                  f"check({self.function_name}) without quotes.")
        if not callable(answer) and not hasattr(answer, "py_func"):
            return self._feedback("invalid", f"Define a kernel {self.function_name}"
                                  f"({self.signature}) with @cuda.jit in a cell and pass it "
                                  f"(got {type(answer).__name__}).")
        try:
            report = self.report(answer)
        except TypeError as error:
            return self._feedback("invalid", f"{error}: define {self.function_name} with "
                                  "def, under @cuda.jit.")
        except ValueError as error:  # the source cannot be read, or a launch is refused
            return self._feedback("invalid", str(error))
        traffic = self.traffic_text(report)
        if report.ok:
            return self._feedback("correct", f"Correct: {report.summary()} No access out of "
                                  "bounds, no race, every element right, in two thread "
                                  f"orders. {traffic}", value=self.function_name,
                                  details=tuple(report.notes))
        case = report.first_case
        details = (f"first failing input: {case.label}, {case.schedule} thread order",
                   report.tally(),
                   *(f"- {finding}" for finding in report.findings[1:5]),
                   *((traffic,) if traffic else ()))
        for mistake in self.mistakes:
            if isinstance(mistake, KernelMistake) and mistake.detect(report):
                return self._feedback("mistake", f"Not yet: {report.summary()} "
                                      f"{self.mistake_hint(mistake.key)}",
                                      mistake=mistake.key, details=details)
        return self._feedback("incorrect", f"Not yet: {report.summary()} Try again, or ask "
                              "for a hint.", details=details)

    @staticmethod
    def traffic_text(report: Any) -> str:
        """Predicted against counted global traffic, on the first (whole) shape."""
        if report.traffic is None:
            return ""
        return counters.prediction_text(report.predicted_bytes, report.traffic)

    def mistake_function(self, key: str) -> Any:
        """The declared kernel that makes mistake ``key``."""
        for mistake in self.mistakes:
            if mistake.key == key and isinstance(mistake, KernelMistake):
                return mistake.kernel
        raise KeyError(f"{self.id} has no kernel mistake {key!r}")

    def problems(self) -> list[str]:
        found = []
        if self.model_solution is None or not self.check(self.model_solution).correct:
            found.append("the model solution does not pass check()")
        for mistake in self.mistakes:
            if not isinstance(mistake, KernelMistake) or mistake.kernel is None:
                found.append(f"mistake {mistake.key} declares no kernel")
                continue
            feedback = self.check(mistake.kernel)
            if feedback.mistake != mistake.key:
                found.append(f"the kernel of mistake {mistake.key} is reported as "
                             f"{feedback.mistake or feedback.status}: {feedback.message}")
        return found
