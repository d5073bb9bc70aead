"""scripts/new_lesson.py (``make lesson``): one command adds a lesson that the suite accepts.

The main test runs ``make lesson`` in a copy of the repository (the folders a lesson
touches and the tests that read them, about 6 MB) and then, in that copy, the tests that
enumerate the course's lessons, narrowed to the new lesson where they are parametrized:
its own content test and the rule that it must have one, the course list, the exercise
catalogue and bank checks, the calculator registry, the exercise-page and cross-link rules,
the table of contents, the intro and seed-corrections pages, the study-time row, and both
new notebooks run by nbval. About 20 s on two cores.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpulesson import course

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "new_lesson.py"
#: What a copy of the repository needs for the command and the tests below.
COPIED = ("gpulesson", "tests", "scripts", "notebooks", "exercises", "book", "_toc.yml",
          "_config.yml", "pyproject.toml", "conftest.py", "Makefile")
SLUG, TITLE = "kv_offload", "Offloading the KV Cache"
#: The tests that enumerate lessons and are not parametrized by lesson: run whole.
WHOLE = ("test_course", "test_catalogue", "test_one_lesson_module_per_slug",
         "test_toc_lists_only_files", "test_every_notebook_is_in_the_toc",
         "test_lessons_follow_course_order", "test_intro_lists_the_lessons",
         "test_seed_corrections_has_one_section", "test_seed_corrections_groups",
         "test_the_pace_is_fitted", "intro.md")
TEST_FILES = ("tests/content/test_claims.py", "tests/unit/test_course.py",
              "tests/unit/exercises/test_catalogue.py", "tests/unit/exercises/test_bank.py",
              "tests/unit/calculators/test_registry.py", "tests/content/test_exercise_pages.py",
              "tests/content/test_cross_links.py", "tests/content/test_reference_pages.py",
              "tests/content/test_book_pages.py", "tests/content/test_study_time.py",
              "tests/site/test_site_config.py")


def _script():
    spec = importlib.util.spec_from_file_location("new_lesson", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _copy(root: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in COPIED:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, root / name, ignore=ignore)
        else:
            shutil.copy2(source, root / name)
    return root


def _env() -> dict[str, str]:
    """The environment of the copy's processes: none of this session's pytest settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "GL_"))}
    return {**env, "PYTHONDONTWRITEBYTECODE": "1", "MPLBACKEND": "Agg"}


def _make_lesson(root: Path, *args: str) -> subprocess.CompletedProcess:
    bin_dir = str(Path(sys.executable).parent)
    command = ["make", "-s", "-o", "install", "lesson", f"BIN={bin_dir}", *args]
    if shutil.which("make") is None:
        values = dict(a.split("=", 1) for a in args)
        command = [sys.executable, "scripts/new_lesson.py", values["SLUG"], values["TITLE"]]
    return subprocess.run(command, cwd=root, env=_env(), capture_output=True, text=True,
                          timeout=120)


def test_one_command_adds_a_lesson_that_the_suite_accepts(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    made = _make_lesson(root, f"SLUG={SLUG}", f"TITLE={TITLE}")
    assert made.returncode == 0, made.stdout + made.stderr
    for path in (f"notebooks/{SLUG}.ipynb", f"exercises/{SLUG}.ipynb",
                 f"gpulesson/exercises/bank/{SLUG}.py",
                 f"gpulesson/calculators/lessons/{SLUG}.py", f"tests/content/test_{SLUG}.py"):
        assert (root / path).is_file(), path
    first = json.loads((root / "notebooks" / f"{SLUG}.ipynb").read_text("utf-8"))["cells"][0]
    assert "".join(first["source"]).startswith(f"({SLUG})=\n# {TITLE}\n")
    number = len(course.LESSONS) + 1
    assert f"{number}. {{doc}}`/notebooks/{SLUG}`" in (root / "book/intro.md").read_text()
    assert re.search(rf"^\| {{doc}}`/notebooks/{SLUG}` \| about \d+ min \|",
                     (root / "book/how_to_use.md").read_text(), re.M)

    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         "--nbval-lax", "--nbval-current-env", "-p", "tests.gpu_standin.plugin",
         "--gpu-standin", "-k", " or ".join((SLUG, *WHOLE)), f"tests/content/test_{SLUG}.py",
         *TEST_FILES, f"notebooks/{SLUG}.ipynb", f"exercises/{SLUG}.ipynb"],
        cwd=root, env=_env(), capture_output=True, text=True, timeout=300)
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    passed = int(re.search(r"(\d+) passed", summary).group(1))
    assert passed >= 60, summary  # the new lesson's tests were selected, not deselected


def test_the_command_refuses_what_would_clash() -> None:
    """A lesson the course has, a slug that is not a module name, a title another lesson
    has, a question without its question mark or starting with a capital ("How ...?" would
    read "11. kv_offload: How ...?" in book/intro.md's list): refused before anything is
    written, each named."""
    script = _script()
    taken = course.LESSONS[0]
    problems = script.refuse(REPO, taken.slug, taken.title, "why?")
    assert any("is already lesson 1" in p for p in problems)
    assert any("is another lesson's" in p for p in problems)
    assert any("exists already" in p for p in problems)
    assert any("must be lower-case words" in p
               for p in script.refuse(REPO, "KV-offload", "A title", "why?"))
    assert any("ending with '?'" in p for p in script.refuse(REPO, "kv_offload", "A", "why"))
    assert any("must start in lower case" in p
               for p in script.refuse(REPO, "kv_offload", "A", "How much does it cost?"))
    for question in ("how much does it cost?", "GPU or CPU: where does the cache go?",
                     "FlashAttention: what does it save?", "?"):
        assert script.refuse(REPO, SLUG, TITLE, question) == [], question
    assert script.refuse(REPO, SLUG, TITLE, "why?") == []


@pytest.mark.parametrize("title", ["Offloading the KV Cache", 'The "What" of It',
                                   "Backslash \\ and ünïcode"])
def test_a_title_is_written_as_it_reads(title: str) -> None:
    """The title is typed once, as a string literal in the course's entry (before the end
    of ``LESSONS``) that reads back as the title; the new bank reads it from there."""
    script = _script()
    bank = (script.SKELETON / "gpulesson/exercises/bank/skeleton_lesson.py").read_text()
    renamed = script._renamed(bank, SLUG, title, ".py")
    assert re.findall(r"^(LESSON|TITLE) = (.+)$", renamed, re.M) == [
        ("LESSON", f'"{SLUG}"'), ("TITLE", "course.title(LESSON)")]
    assert f"*{title}*" in renamed  # the docstring names the lesson
    entries = script.add_to_course((REPO / "gpulesson/course.py").read_text(), SLUG, title)
    start = entries.index("LESSONS: tuple[LessonInfo, ...]")
    block = entries[start:entries.index("\n)\n", start) + 3]
    names: dict = {"LessonInfo": lambda *a: a}
    exec(block.replace("LESSONS: tuple[LessonInfo, ...]", "LESSONS"), names)
    assert names["LESSONS"][-1] == (len(course.LESSONS) + 1, SLUG, title)
