"""How a kernel exercise is declared (gpulesson/exercises/kernel.py): a kernel source's
signature and rewritten bodies, and an exercise built from its model kernel."""

from __future__ import annotations

import pytest

from gpulesson.exercises.kernel import KernelSource, first_is, kernel_exercise, kernel_mistake

MODEL = KernelSource("scale", """
@cuda.jit
def scale(a, x, out):
    i = cuda.grid(1)  # one element per thread
    if i < out.size:
        out[i] = a * x[i]
""", constants={"UNUSED": 3})


def test_a_kernel_sources_signature_is_its_def_line() -> None:
    assert MODEL.signature == "a, x, out"
    with pytest.raises(ValueError, match="no line 'def other"):
        _ = KernelSource("other", MODEL.source).signature


def test_another_body_keeps_the_header_and_the_constants() -> None:
    rewritten = MODEL.with_body("""
    i = cuda.grid(1)
    out[i] = a * x[i]
""")
    assert rewritten.source == ("@cuda.jit\ndef scale(a, x, out):\n    i = cuda.grid(1)\n"
                                "    out[i] = a * x[i]")
    assert rewritten.constants == MODEL.constants and rewritten.__name__ == "scale"


def test_an_exercise_takes_its_task_name_and_signature_from_the_model() -> None:
    mistake = kernel_mistake("no_bounds_check", "Guard the access.",
                             MODEL.edited("    if i < out.size:\n        out[i]", "    out[i]"),
                             first_is("out_of_bounds"))
    exercise = kernel_exercise("some_lesson", 3, "Scale a vector", MODEL, question="Write it.",
                               hints=("One thread per element.",), solution="As shown.",
                               mistakes=(mistake,))
    assert (exercise.id, exercise.task, exercise.function_name, exercise.signature) == (
        "some_lesson-ex3", "scale", "scale", "a, x, out")
    assert exercise.reference is MODEL and exercise.model_solution is MODEL
    assert exercise.mistakes == (mistake,) and exercise.hint_texts() == ["One thread per element."]


def test_the_feedback_of_a_kernel_reads_as_sentences() -> None:
    """The checker's summary was "passed the the softmax of every row checks" and a failure
    ran into the next sentence: "... must store its results in out Try again" (the site's
    lesson 3 exercise page, 2026-12-06)."""
    from gpulesson.exercises import browser
    from gpulesson.kernelcheck import numba_cuda

    # the worked solution's `from numba import cuda` runs in this process, and Numba picks
    # its target once per process: let it pick as the course does (the simulator without a
    # GPU), so the Numba tests that run later in this process find that target
    numba_cuda()

    right = browser.handle({"action": "code", "exercise": "inside_the_gpu:17",
                            "source": browser.learner_solution(
                                browser.exercise("inside_the_gpu:17"))})
    assert right["status"] == "correct", right["message"]
    assert "the the" not in right["message"]
    assert "(the softmax of every row)" in right["message"]
    for body, expected in (("pass", "store its results in out. Try again"),
                           ("raise ValueError('boom')", ". Try again")):
        wrong = browser.handle({"action": "code", "exercise": "inside_the_gpu:1",
                                "source": f"def vector_add(a, b, out):\n    {body}\n"})
        assert wrong["status"] == "incorrect" and expected in wrong["message"], wrong["message"]
    zero = browser.handle({"action": "code", "exercise": "inside_the_gpu:10",
                           "source": "def sum_kernel(x, out):\n    pass\n"})
    assert "(it differs). Try again" in zero["message"], zero["message"]
    traffic = " ".join(wrong["details"])  # a kernel that touched no global memory
    assert "0 sectors" not in traffic and "100% of them used" not in traffic, traffic
    assert "0 global requests (no global memory touched)" in traffic, traffic
