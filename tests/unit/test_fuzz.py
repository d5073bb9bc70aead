"""Fuzzing the whole contract: no crash, no hang, no inf or NaN, whatever comes in.

Property-based (Hypothesis), bounded (a fixed number of examples per target, a derandomised
seed, each call under a 2 s alarm) and found by introspection, so that a new function or a
new exercise is fuzzed as soon as it exists:

* every public function of every calculator module (``calculator_modules.py``: every
  module of the package but the front ends and helpers), called with valid values, bad
  values of every kind (``None``, text, ``True``, NaN, infinities, negatives, containers,
  objects), extreme finite values (1.7e308, 5e-324) and integers beyond the float range
  (10**400). The contract: it returns a result without NaN or infinity, or refuses with
  ``ValueError``, ``TypeError`` or ``KeyError`` whose message names one of the arguments
  given;
* every exercise's checker with malformed and extreme answers (text, numbers at the ends
  of the float range, decimal commas, objects; for a code exercise, functions that return
  odd things or raise anything, ``SystemExit`` included): it never raises and always
  answers with a known status; every predict-then-run comparison likewise;
* every registry calculator through :func:`gpulesson.calculators.evaluate` and
  :func:`gpulesson.browser.react_json`, which never raise and answer strict JSON;
* the site's exercises (:func:`gpulesson.exercises.browser.handle_json`) with odd requests,
  hostile learner code and broken, deep or huge progress records: strict JSON in UTF-8, a
  known status, never "internal error"; the progress reader
  (:func:`gpulesson.exercises.progress.parse_progress`), which never raises and sets aside
  what it cannot read; the MPI worker's command line, which exits with status 2 and one
  message or accepts only arguments in range.

At the end the suite prints its figures: calls made, refusals (a clean error) and escapes
(anything else: must be 0).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import math
import signal
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpulesson import browser, calculators
from gpulesson.exercises import (
    ChoiceExercise,
    CodeExercise,
    NumericExercise,
    PredictExercise,
    available_lessons,
    lesson_module,
)
from gpulesson.exercises.core import STATUSES
from gpulesson.exercises.kernel import KernelExercise

from .calculator_modules import calculator_modules
from .conftest import FUZZ_DEPTH

#: A call may use this much of the process's CPU time (``ITIMER_PROF``: what it computes,
#: not the time other processes on a shared machine take from it) ...
CALL_LIMIT_S = 2.0
#: ... and, for a call that waits instead of computing, this much wall time.
WAIT_LIMIT_S = 30.0
FIGURES: Counter[str] = Counter()

#: Functions whose work is not bounded yet, with the reason: a call that runs past the
#: limit is counted as "pending", not as an escape (tests/unit/test_distributed.py holds the
#: test that fails until the work is bounded).
PENDING: dict[str, str] = {}


def examples(count: int) -> int:
    """``count`` examples, times the fuzzing depth: ``make fuzz`` (GL_FUZZ_DEPTH=N) draws N
    times as many, afresh on every run, to look for new failures by hand; ``make test``
    draws the same ones every time."""
    return count * FUZZ_DEPTH


FUZZ = settings(max_examples=examples(40), deadline=None, database=None,
                derandomize=FUZZ_DEPTH == 1, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ---------------------------------------------------------------------------------------
# What is fuzzed, found by introspection


def public_functions() -> list[tuple[str, Callable[..., Any]]]:
    """Every public function, once: where a package re-exports its submodules' functions,
    they are fuzzed under the submodule that defines them."""
    out = []
    for name in calculator_modules():
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", ()):
            obj = getattr(module, attr)
            if callable(obj) and not isinstance(obj, type) and getattr(
                obj, "__module__", name
            ) == name:
                out.append((f"{name}.{attr}", obj))
    return out


FUNCTIONS = public_functions()


# ---------------------------------------------------------------------------------------
# Values


class _Opaque:
    """An object of no use to any calculator."""

    def __repr__(self) -> str:
        return "<opaque>"


BAD = [None, "", "abc", "-1", True, False, math.nan, math.inf, -math.inf, -1, 0, -2.5,
       [], {}, (), [1, 2], {"a": 1}, _Opaque(), b"14", 1j]
EXTREME = [1.7976931348623157e308, -1.7976931348623157e308, 5e-324, 1e-300, 1e300,
           2**1023, 2**53 + 1, 0.1]
HUGE = [10**400, -(10**400), 2**1024, 10**5000]
ODD = BAD + EXTREME + HUGE

NAMES = ["mixed", "bf16", "fp16", "fp32", "fp8", "int8", "adam", "sgd", "none", "selective",
         "full", "all_reduce", "all_gather", "reduce_scatter", "broadcast", "gpipe", "1f1b",
         "interleaved", "bytes", "count", "seconds", "usd", "percent", "llama-2-7b", "gpt2",
         "H100 SXM", "A100 80GB", "float16", "bfloat16", "14 GB", "1,024", "q", "v"]


def _valid_pool(annotation: str) -> list[Any]:
    """Plausible values for a parameter declared ``annotation`` (so calls get past the
    first check and into the formula)."""
    from gpulesson.distributed import pipeline_schedule
    from gpulesson.hardware import gpu
    from gpulesson.transformer import preset

    text = str(annotation)
    pool: list[Any] = []
    if "TransformerConfig" in text:
        pool += [preset("gpt2"), preset("llama-2-7b"), preset("llama-3-70b")]
    if "Spec" in text:
        pool += [gpu("H100 SXM"), gpu("V100 SXM"), gpu("L4")]
    if "PipelineSlot" in text:
        pool += [pipeline_schedule(2, 4), pipeline_schedule(4, 8, schedule="1f1b")]
    if "tuple[str" in text or "list[str" in text:
        pool += [("q", "v"), ["q", "k", "v", "o"], ("mlp",)]
    if "bool" in text:
        pool += [True, False]
    if "int" in text:
        pool += [0, 1, 2, 3, 4, 8, 16, 64, 1024, 10**6, 2**40]
    if "float" in text:
        pool += [0.5, 1.0, 2.0, 12.0, 0.9, 7e9, 1e12, 3.35e12, 989e12, 80e9, 1e20]
    if text.startswith("str") or "| str" in text or text == "str | None":
        pool += NAMES
    if "None" in text:
        pool.append(None)
    return pool or [1.0, 2, "bf16"]


#: The strategies of :func:`_calls`, made once. A ``sampled_from`` of a list is a new
#: strategy at every call, which Hypothesis validates and labels (a hash of every
#: element's repr) at every draw: half of this module's time went there. The same
#: strategies draw the same examples. A pool holding a list (a fresh one at every call, as
#: a function might change it) is still made at every draw.
_ODD = st.sampled_from(ODD)
_POOLS: dict[str, Any] = {}


@functools.cache
def _odd_names(names: tuple[str, ...]) -> Any:
    return st.sets(st.sampled_from(names), max_size=2)


def _pool_strategy(annotation: Any) -> Any:
    key = str(annotation)
    if key not in _POOLS:
        pool = _valid_pool(annotation)
        _POOLS[key] = None if any(isinstance(v, list) for v in pool) else st.sampled_from(pool)
    cached = _POOLS[key]
    return st.sampled_from(_valid_pool(annotation)) if cached is None else cached


@st.composite
def _calls(draw: st.DrawFn, signature: inspect.Signature) -> dict[str, Any]:
    """Keyword arguments: mostly valid, up to two (or none) drawn from the odd values."""
    params = [p for p in signature.parameters.values()
              if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    names = [p.name for p in params]
    odd = draw(_odd_names(tuple(names))) if names else set()
    args: dict[str, Any] = {}
    for param in params:
        optional = param.default is not param.empty
        if optional and param.name not in odd and not draw(st.booleans()):
            continue
        args[param.name] = draw(_ODD if param.name in odd else _pool_strategy(param.annotation))
    return args


# ---------------------------------------------------------------------------------------
# The contract


class _Hang(BaseException):
    pass


def _ring(_signum: int, _frame: Any) -> None:
    raise _Hang


def _within_limit(function: Callable[[], Any]) -> Any:
    """``function()``, stopped by :class:`_Hang` past :data:`CALL_LIMIT_S` of CPU time or
    :data:`WAIT_LIMIT_S` of wall time. CPU time, because under a load of ten a first call
    that computes for 0.1 s on a quiet machine has been seen to run past 2 s of wall time."""
    timers = ((signal.SIGPROF, signal.ITIMER_PROF, CALL_LIMIT_S),
              (signal.SIGALRM, signal.ITIMER_REAL, WAIT_LIMIT_S))
    previous = [signal.signal(number, _ring) for number, _, _ in timers]
    for _, which, seconds in timers:
        signal.setitimer(which, seconds)
    try:
        return function()
    finally:
        for (number, which, _), handler in zip(timers, previous, strict=True):
            signal.setitimer(which, 0)
            signal.signal(number, handler)


def _non_finite(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` holds a NaN or an infinity (numbers, containers, dataclasses)."""
    import dataclasses

    if isinstance(value, bool) or value is None or isinstance(value, (int, str, bytes)):
        return False
    if isinstance(value, float):
        return not math.isfinite(value)
    if depth > 6:
        return False
    if isinstance(value, dict):
        return any(_non_finite(v, depth + 1) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_non_finite(v, depth + 1) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return any(_non_finite(getattr(value, f.name), depth + 1)
                   for f in dataclasses.fields(value))
    return False


def _message(error: BaseException) -> str:
    if isinstance(error, KeyError) and error.args:
        return str(error.args[0])
    return str(error)


def _verdict(qualname: str, function: Callable[..., Any], args: dict[str, Any]) -> str:
    """``""`` when the call kept the contract, else what went wrong."""
    FIGURES["calls"] += 1
    try:
        result = _within_limit(lambda: function(**args))
    except _Hang:
        if qualname in PENDING:
            FIGURES["pending"] += 1
            return ""
        return f"ran past {CALL_LIMIT_S} s of CPU time or {WAIT_LIMIT_S} s of wall time"
    except (ValueError, TypeError, KeyError) as error:
        FIGURES["refusals"] += 1
        message = _message(error)
        if getattr(function, "__gl_learner_messages__", False):
            # written for the learner who typed the text: it says what was typed and how
            # to write it, not the parameter's name
            return "" if message.strip() else f"{type(error).__name__} without a message"
        if args and not any(name in message for name in args):
            return f"{type(error).__name__} naming no argument: {message[:300]}"
        return ""
    except BaseException as error:  # noqa: BLE001 - the escapes this suite looks for
        return f"escaped with {type(error).__name__}: {str(error)[:300]}"
    if _non_finite(result):
        return f"returned NaN or infinity: {result!r:.300}"
    return ""


def _count_escape(problem: str) -> str:
    if problem:
        FIGURES["escapes"] += 1
    return problem


@pytest.fixture(scope="module", autouse=True)
def _report(request: pytest.FixtureRequest):
    yield
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    line = (f"fuzz: {FIGURES['calls']:,} calls, {FIGURES['refusals']:,} refusals, "
            f"{FIGURES['escapes']:,} escapes, {FIGURES['checks']:,} answers checked, "
            f"{FIGURES['pending']:,} pending (unbounded work, see PENDING)")
    if reporter is None or capture is None:  # pragma: no cover - a bare run
        print(line, file=sys.stderr)
        return
    with capture.global_and_fixture_disabled():
        reporter.write_line("")
        reporter.write_line(line)


# ---------------------------------------------------------------------------------------
# Every public function


def test_the_fuzz_finds_the_calculators() -> None:
    modules = calculator_modules()
    for name in ("gpulesson.gemm", "gpulesson.memory", "gpulesson.units",
                 "gpulesson.distributed", "gpulesson.planning"):
        assert name in modules
    assert len(FUNCTIONS) >= 90


@pytest.mark.parametrize(("qualname", "function"), FUNCTIONS, ids=[q for q, _ in FUNCTIONS])
@FUZZ
@given(data=st.data())
def test_every_public_function_keeps_the_contract(qualname: str, function: Callable[..., Any],
                                                  data: st.DataObject) -> None:
    args = data.draw(_calls(inspect.signature(function)), label="arguments")
    problem = _count_escape(_verdict(qualname, function, args))
    assert problem == "", f"{qualname}(**{args!r:.400}): {problem}"


# ---------------------------------------------------------------------------------------
# Every exercise's checker

ANSWERS = ["", " ", "abc", "5e-324", "1e308", "-1e308", "1.7976931348623157e308", "1e309",
           "1e-320 GB", "1e308 GB", "1e308 ms", "1e308 ns", "5e-324 days", "$1e308", "-$5",
           "1,5", "12,34,5", "1_5", "1,024", "9" * 63, "9" * 65, "NaN", "inf", "-0", "0",
           "0 GB", "1/0", "2**1024", "1e", "e9", ".", "-", "+", "..5", "1..5", "14 GB GB",
           "14 parsecs", "\u221214 GB", "１４ GB", "14\u00a0GB", "٣", "\x00", "yes", "a",
           "__import__('os').system('true')", "{}", "[]", "None", "🙂", "14e9 bytes"]
ODD_ANSWERS = [None, True, 0, -1, 5e-324, 1.7976931348623157e308, math.nan, math.inf,
               10**400, 2**1023, [], {}, ("a",), _Opaque(), b"14 GB", 1j]


class _Weird(float):
    def __repr__(self) -> str:
        raise RuntimeError("a repr that fails")


class _WeirdError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("a str that fails")


def _returning(value: Any) -> Callable[..., Any]:
    return lambda **kwargs: value


def _raising(error: BaseException) -> Callable[..., Any]:
    def learner(**kwargs: Any) -> Any:
        raise error

    return learner


LEARNER_FUNCTIONS = [_returning(v) for v in ODD_ANSWERS + [_Weird(1.0), "12", -0.0]] + [
    _raising(e) for e in (SystemExit(0), SystemExit("bye"), GeneratorExit(),
                          BaseException("odd"), ValueError("v"), RecursionError(),
                          MemoryError(), _WeirdError(), ZeroDivisionError())] + [
    lambda: 1, lambda *a: 1, lambda **kw: sum(kw.values()) * 1e308 * 10,
    lambda **kw: 10**400, lambda **kw: -(10**400), lambda **kw: sys.exit(1)]

EXERCISES = [ex for slug in available_lessons() for ex in lesson_module(slug).EXERCISES]


_WARMED: set[str] = set()


def _warm_the_kernel_checker(exercise: Any) -> None:
    """The first kernel check of a process imports Numba's CUDA simulator (over a second
    on 2 busy cores): a one-time cost, not unbounded work, so it is paid before the clock
    of :func:`_within_limit` starts."""
    if isinstance(exercise, KernelExercise) and "kernel" not in _WARMED:
        exercise.check(lambda: None)
        _WARMED.add("kernel")


def _answers(exercise: Any) -> st.SearchStrategy[Any]:
    """The answers drawn for ``exercise``: one strategy per exercise, made once (see
    :data:`_POOLS`)."""
    if exercise.id not in _ANSWERS:
        _ANSWERS[exercise.id] = _make_answers(exercise)
    return _ANSWERS[exercise.id]


_ANSWERS: dict[str, st.SearchStrategy[Any]] = {}


def _make_answers(exercise: Any) -> st.SearchStrategy[Any]:
    if isinstance(exercise, CodeExercise):
        return st.sampled_from(LEARNER_FUNCTIONS)
    typed = [*ANSWERS]
    if isinstance(exercise, (NumericExercise, PredictExercise)) and exercise.unit:
        typed += [f"{a} {exercise.unit}" for a in ("5e-324", "1e308", "1,5", "-3", "0")]
    if isinstance(exercise, ChoiceExercise):
        typed += [key for key, _ in exercise.option_pairs()] + ["A", "Z"]
    return st.one_of(st.sampled_from(typed), st.sampled_from(ODD_ANSWERS),
                     st.text(max_size=80),
                     st.floats(allow_nan=True, allow_infinity=True).map(repr),
                     st.integers(-(10**320), 10**320).map(str))


@pytest.mark.parametrize("exercise", EXERCISES, ids=[ex.id for ex in EXERCISES])
@FUZZ
@given(data=st.data())
def test_every_check_answers_anything(exercise: Any, data: st.DataObject) -> None:
    answer = data.draw(_answers(exercise), label="answer")
    FIGURES["checks"] += 1
    _warm_the_kernel_checker(exercise)
    try:
        feedback = _within_limit(lambda: exercise.check(answer))
    except BaseException as error:  # noqa: BLE001 - a check never raises
        _count_escape("raised")
        pytest.fail(f"{exercise.id}.check({answer!r:.200}) raised {type(error).__name__}: "
                    f"{error!s:.300}")
    assert feedback.status in STATUSES and feedback.message.strip()
    assert feedback.exercise_id == exercise.id


PREDICTIONS = [None, 0.0, 5e-324, 1e-300, 1.0, 1e300, 1.7976931348623157e308, math.inf,
               math.nan, -1.0, "12", True, 10**400]
MEASURED = [5e-324, 1e-300, 1e-9, 1.0, 3.5, 1e300, 1.7976931348623157e308, 0.0, -1.0,
            math.nan, math.inf, "3", None, True, 10**400]
PREDICT_EXERCISES = [ex for ex in EXERCISES if isinstance(ex, PredictExercise)]


@pytest.mark.parametrize("exercise", PREDICT_EXERCISES, ids=[ex.id for ex in PREDICT_EXERCISES])
@FUZZ
@given(prediction=st.sampled_from(PREDICTIONS), measured=st.sampled_from(MEASURED))
def test_every_comparison_answers_anything(exercise: PredictExercise, prediction: Any,
                                           measured: Any) -> None:
    FIGURES["checks"] += 1
    try:
        feedback = exercise.compare(prediction, measured)
    except BaseException as error:  # noqa: BLE001 - a comparison never raises
        _count_escape("raised")
        pytest.fail(f"{exercise.id}.compare({prediction!r}, {measured!r}) raised "
                    f"{type(error).__name__}: {error}")
    assert feedback.status in ("compared", "invalid") and feedback.message.strip()


# ---------------------------------------------------------------------------------------
# Every registry calculator, in Python and as the browser calls it

CALCULATORS = list(calculators.CALCULATORS)


def _input_values(spec: Any) -> list[Any]:
    values: list[Any] = [spec.default, spec.min, spec.max]
    values += [c.value for c in getattr(spec, "choices", ()) or ()]
    return [v for v in values if v is not None] + ODD


@pytest.mark.parametrize("name", CALCULATORS)
@settings(FUZZ, max_examples=examples(25))
@given(data=st.data())
def test_every_calculator_evaluates_anything(name: str, data: st.DataObject) -> None:
    calc = calculators.get(name)
    inputs = {spec.name: data.draw(st.sampled_from(_input_values(spec)), label=spec.name)
              for spec in calc.inputs if data.draw(st.booleans(), label=f"set {spec.name}")}
    FIGURES["calls"] += 1
    try:
        result = _within_limit(lambda: calculators.evaluate(name, inputs))
    except BaseException as error:  # noqa: BLE001 - documented never to raise
        _count_escape("raised")
        pytest.fail(f"evaluate({name!r}, {inputs!r:.300}) raised {type(error).__name__}: "
                    f"{error!s:.300}")
    if not result["ok"]:
        FIGURES["refusals"] += 1
        assert result["error"]
    else:
        assert not _non_finite(result["values"])
    json.dumps(result, allow_nan=False)


TEXTS = st.one_of(st.text(max_size=30), st.sampled_from(
    ["", "1", "0", "-1", "1e308", "1e400", "1" + "0" * 400, "nan", "inf", "-inf", "5e-324",
     "custom", "bf16", "H100 SXM", "1,5", "0x10", "1_000", "  8  "]))


@pytest.mark.parametrize("name", CALCULATORS)
@settings(FUZZ, max_examples=examples(15))
@given(data=st.data())
def test_the_browser_entry_answers_anything(name: str, data: st.DataObject) -> None:
    calc = calculators.get(name)
    values = {spec.name: data.draw(TEXTS, label=spec.name) for spec in calc.inputs}
    changed = data.draw(st.lists(st.sampled_from([s.name for s in calc.inputs] + ["x"]),
                                 max_size=3), label="changed")
    FIGURES["calls"] += 1
    try:
        answer = _within_limit(lambda: browser.react_json(name, json.dumps(values),
                                                          json.dumps(changed)))
    except BaseException as error:  # noqa: BLE001 - the page's one function never raises
        _count_escape("raised")
        pytest.fail(f"react_json({name!r}, {values!r:.300}) raised "
                    f"{type(error).__name__}: {error!s:.300}")
    decoded = json.loads(answer, parse_constant=lambda c: pytest.fail(f"{c} in {answer}"))
    if not decoded["result"]["ok"]:
        FIGURES["refusals"] += 1


# ---------------------------------------------------------------------------------------
# from_hf_config: real config.json files with hostile values (issue 35, item 8)

def _hf_files() -> list[Any]:
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "data" / "hf_configs"
    return sorted(p for p in folder.glob("*.json") if p.name != "index.json")


HF_FILES = _hf_files()
#: Size keys and the field each sets: a bad value there must never reach the model.
HF_SIZE_KEYS = {"hidden_size": "hidden", "num_hidden_layers": "layers",
                "num_attention_heads": "heads", "vocab_size": "vocab"}


def _deep(levels: int) -> list[Any]:
    out: list[Any] = []
    for _ in range(levels):
        out = [out]
    return out


HF_ODD = BAD + EXTREME + HUGE + [32.9, 32.0, "32", 1e308, 2**31, _deep(100_000), "x" * 10_000,
                                 {"model_type": "llama"}, [None] * 1000]


def _reads(raw: dict[str, Any], target: dict[str, Any], key: str) -> bool:
    """Whether the family's reader takes its size from ``key`` of ``target`` (part of
    ``raw``): a valid count put there, 7, comes out as the model's size; a file that then
    fails to read counts as read."""
    from gpulesson import transformer

    saved = target[key]
    target[key] = 7
    try:
        return getattr(transformer.from_hf_config(raw), HF_SIZE_KEYS[key]) == 7
    except (ValueError, TypeError):
        return True
    finally:
        target[key] = saved


@pytest.mark.parametrize("path", HF_FILES, ids=[p.stem for p in HF_FILES])
@settings(FUZZ, max_examples=examples(20))
@given(data=st.data())
def test_from_hf_config_refuses_hostile_values(path: Any, data: st.DataObject) -> None:
    """A real file with one or two values replaced by odd ones: the reader returns a model
    with a finite count or refuses with ``ValueError``/``TypeError`` naming the key; a bad
    value under a size key every reader needs is never accepted."""
    from gpulesson import transformer

    raw = json.loads(path.read_text())
    target = raw.get("text_config") if isinstance(raw.get("text_config"), dict) else raw
    keys = sorted(target)
    changed = data.draw(st.lists(st.sampled_from(keys + list(HF_SIZE_KEYS)), min_size=1,
                                 max_size=2, unique=True), label="keys")
    for key in changed:
        target[key] = data.draw(st.sampled_from(HF_ODD), label=key)
    FIGURES["calls"] += 1
    try:
        cfg = _within_limit(lambda: transformer.from_hf_config(raw))
        count = transformer.param_count(cfg)
    except (ValueError, TypeError) as error:
        FIGURES["refusals"] += 1
        message = str(error)
        named = "config.json key '" in message or "model_type" in message
        problem = "" if named and len(message) < 2000 else f"unclear refusal: {message[:300]}"
    except BaseException as error:  # noqa: BLE001 - the escapes this suite looks for
        problem = f"escaped with {type(error).__name__}: {str(error)[:300]}"
    else:
        # a null is an absent key (the family's default applies); anything else that is
        # no integer from 1 to 2**31 - 1 must not become the model's size (unless the
        # family reads that size from another key that the file holds: EXAONE's
        # num_layers, where 32.0 under num_hidden_layers is ignored, not read as 32)
        slipped = [k for k in changed if k in HF_SIZE_KEYS and target[k] is not None
                   and not (type(target[k]) is int and 1 <= target[k] < 2**31)
                   and getattr(cfg, HF_SIZE_KEYS[k]) == target[k] and _reads(raw, target, k)]
        problem = f"accepted invalid {slipped}" if slipped or not isinstance(count, int) else ""
    assert _count_escape(problem) == "", f"{path.name} with {changed}: {problem}"


# ---------------------------------------------------------------------------------------
# The log parsers (issue 35, item 7): any text, no escape, no hang, nothing invented


_LOG_PIECES = st.sampled_from([
    "#       size         count      type   redop    root     time   algbw   busbw #wrong\n",
    "  1073741824     268435456     float     sum      -1    10776   99.64  186.83      0\n",
    "        8             2     float     sum      -1    42.56    0.00    0.00      0\n",
    "#  Rank  0 Group  0 Pid  1 on host0 device  0 [0x0f] NVIDIA H100\n",
    "Loading model weights took 14.99 GB\n", "# GPU blocks: 1952\n",
    "Maximum concurrency for 4096 tokens per request: 1.56x\n", "\n" * 1000, " \t" * 500,
    "9" * 5000, "-1 -1 nan inf 1e308 N/A abc\n", "NCCL INFO Channel 00/0\n",
])
_LOG_TEXT = st.lists(st.one_of(_LOG_PIECES, st.text(max_size=40)), max_size=30).map("".join)


@given(text=_LOG_TEXT)
@FUZZ
def test_log_parsers_answer_any_text(text: str) -> None:
    """parse_nccl_tests (both), parse_vllm_log and reconcile_nccl_tests: a clear ValueError
    or a result, within the fuzz's limit, for any text; every row they return is finite."""
    from gpulesson.collectives import parse_nccl_tests as rows_of
    from gpulesson.planning import reconcile_nccl_tests
    from gpulesson.planning.logs import parse_nccl_tests, parse_vllm_log

    for call in (lambda: parse_nccl_tests(text), lambda: rows_of(text),
                 lambda: parse_vllm_log(text),
                 lambda: reconcile_nccl_tests(text, line_rate=50e9, tier="network")):
        try:
            out = _within_limit(call)
        except ValueError as err:
            assert str(err)
            continue
        numbers = json.dumps(out, default=lambda o: getattr(o, "__dict__", str(o)))
        assert "Infinity" not in numbers and "NaN" not in numbers


# ---------------------------------------------------------------------------------------
# The site's exercises, the progress record and the MPI worker (issue 35)

#: Learner code a page may send: odd, hostile or broken, never an endless loop (the page
#: stops those itself).
SOURCES = st.one_of(st.text(max_size=60), st.sampled_from([
    "raise KeyboardInterrupt", "raise SystemExit(3)", "raise GeneratorExit",
    "class B(BaseException):\n    pass\nraise B()", "import os\nos._exit(1)",
    "class E(Exception):\n    def __str__(self):\n        raise ValueError\nraise E()",
    "print('\\ud800')", "x = " + "1+" * 6000 + "1", "x = " + "-" * 9000 + "1",
    "def f(n):\n    return f(n + 1)\nf(0)", "import sys\nsys.setrecursionlimit(10)\n",
    "import gpulesson.exercises.browser as b\nb.message_html = None",
    "def matmul_flops(m, k, n):\n    raise KeyboardInterrupt",
    "def matmul_flops(m, k, n):\n    return float('nan')",
    "matmul_flops = 3", "", "x" * 20_001]))
#: Stored or imported progress: broken, deep, huge, of another shape.
PROGRESS_TEXTS = st.one_of(st.none(), st.text(max_size=40), st.sampled_from([
    "{", "[]", "null", '{"exercises": 3}', '{"exercises": {"a": 1}} trailing',
    '{"version": 1, "exercises": {"x-ex1": ' + "[" * 5000 + "]" * 5000 + "}}",
    '{"exercises": {"parallelism_at_the_core-ex1": {"attempts": ' + "9" * 5000 + "}}}",
    '{"exercises": {"parallelism_at_the_core-ex1": {"attempts": 1e999, "done": "false"}}}',
    '{"exercises": {"parallelism_at_the_core-ex2": {"done": true}}, "x": ' + "{" * 900
    + "}" * 900 + "}",
    '{"exercises": {"' + "k" * 1000 + '": {}}}', "\ud800", "{\"exercises\": {}}" * 1000]),
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                 lambda inner: st.lists(inner, max_size=3)
                 | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                 max_leaves=10).map(lambda v: json.dumps({"exercises": {"a-ex1": v}})))
REQUESTS = st.fixed_dictionaries({
    "action": st.sampled_from(["check", "code", "compare", "progress", "import", "fly", None]),
    "exercise": st.sampled_from(["parallelism_at_the_core:3", "memory_what_fits:4",
                                 "memory_what_fits:99", "nope:1", "", None, 7]),
    "lesson": st.sampled_from(["memory_what_fits", "nope", None, 3]),
    "answer": st.one_of(st.text(max_size=20), st.sampled_from(["26 GB", "1e308", None])),
    "source": SOURCES, "measured": st.sampled_from([1.0, -1.0, "x", None, 1e308]),
    "progress": PROGRESS_TEXTS, "imported": PROGRESS_TEXTS,
})


@settings(FUZZ, max_examples=examples(120))
@given(request=REQUESTS)
def test_the_exercise_entry_answers_anything(request: dict[str, Any]) -> None:
    """gpulesson.exercises.browser.handle_json: strict JSON that UTF-8 can carry, a known
    status and a learner's sentence, whatever the page (or a learner's code) sends."""
    from gpulesson.exercises import browser as exercises_browser

    FIGURES["calls"] += 1
    try:
        text = _within_limit(lambda: exercises_browser.handle_json(json.dumps(request)))
    except BaseException as error:  # noqa: BLE001 - the page's one function never raises
        _count_escape("raised")
        pytest.fail(f"handle_json raised {type(error).__name__}: {error!s:.300}")
    text.encode("utf-8")
    answer = json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in {text:.300}"))
    assert answer["status"] in (*STATUSES, None), answer
    assert "internal error" not in answer["message"]
    if answer["status"] in ("error", "invalid"):
        FIGURES["refusals"] += 1
        assert answer["message"].strip()


@settings(FUZZ, max_examples=examples(80))
@given(text=PROGRESS_TEXTS)
def test_a_progress_record_reads_from_anything(text: str | None) -> None:
    """parse_progress never raises; what it keeps is a record, what it cannot read is set
    aside as text, never lost."""
    from gpulesson.exercises import progress

    FIGURES["calls"] += 1
    try:
        parsed = _within_limit(lambda: progress.parse_progress(text))
    except BaseException as error:  # noqa: BLE001 - reading progress never raises
        _count_escape("raised")
        pytest.fail(f"parse_progress raised {type(error).__name__}: {error!s:.300}")
    assert isinstance(parsed.record["exercises"], dict)
    assert all(isinstance(v, str) for v in parsed.set_aside.values())
    json.loads(progress.serialise(parsed.record))  # what is kept can be written back
    if parsed.problem is not None:
        FIGURES["refusals"] += 1
        assert parsed.set_aside == {"": text}


WORKER_WORDS = st.sampled_from([
    "--sizes", "--iterations", "--warmup", "--repeats", "--dtype", "--passes", "--in-place",
    "--algorithm", "--min-seconds-per-size", "--max-seconds-per-size", "--output", "--json",
    "4096", "0", "-1", "3", "abc", "1e3", "nan", "inf", "1001", "100001", "4096,8192", ",",
    "float64", "both", "ring", "/no/such/dir/r.json", ".", "r.json", "", "2**40"])


@settings(FUZZ, max_examples=examples(150))
@given(argv=st.lists(WORKER_WORDS, max_size=8))
def test_the_mpi_worker_accepts_only_arguments_in_range(argv: list[str]) -> None:
    """python -m gpulesson.collectives: exit status 2 and one message, or arguments that
    are all in their ranges; never a traceback."""
    import contextlib
    import io

    from gpulesson.collectives import mpi

    FIGURES["calls"] += 1
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr):
            args = mpi.worker_arguments(argv)
    except SystemExit as ended:
        FIGURES["refusals"] += 1
        assert ended.code == 2 and stderr.getvalue().count("error:") == 1, stderr.getvalue()
        return
    except BaseException as error:  # noqa: BLE001 - the escapes this suite looks for
        _count_escape("raised")
        pytest.fail(f"worker_arguments({argv}) raised {type(error).__name__}: {error}")
    assert 1 <= args.iterations <= mpi.MAX_ITERATIONS and 0 <= args.warmup
    assert 1 <= args.repeats <= mpi.MAX_REPEATS and args.passes in mpi.PASSES
    assert args.sizes and all(s > 0 and s % (8 if args.dtype == "float64" else 4) == 0
                              for s in args.sizes)
    for seconds in (args.min_seconds_per_size, args.max_seconds_per_size):
        assert math.isfinite(seconds) and 0 <= seconds <= mpi.MAX_SECONDS_PER_SIZE
