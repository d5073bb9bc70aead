"""``book/instructors.md``: the commands it prints work as written, and what it says the
export does is what the export does.

Every ``python -m gpulesson.exercises ...`` command of the page is parsed by the command
line's own parser, every ``make`` target it names is a target of the Makefile, and the
solution modes it names are the package's (the repository's notebooks open a worked
solution on request; the export writes ``after-correct`` unless told ``never``). One export
is run, for one lesson and one variant, and its notebook is read back.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from gpulesson.exercises import __main__ as cli
from gpulesson.exercises import export as export_module
from gpulesson.exercises.session import SOLUTION_MODES, Settings

REPO = Path(__file__).resolve().parents[2]
PAGE = (REPO / "book" / "instructors.md").read_text(encoding="utf-8")
MAKEFILE = (REPO / "Makefile").read_text(encoding="utf-8")


def _bash_lines() -> list[str]:
    """The command lines of the page's ``bash`` blocks, comments and loop syntax dropped."""
    lines = []
    for block in re.findall(r"^```bash\n(.*?)^```", PAGE, flags=re.M | re.S):
        for line in block.splitlines():
            line = line.split("#", 1)[0].strip()
            if line and not line.startswith(("for ", "done")):
                lines.append(line)
    return lines


def _cli_commands() -> list[list[str]]:
    """The arguments of every ``python -m gpulesson.exercises`` command on the page, in
    code blocks and inline code alike (``"$n"`` read as a variant number)."""
    found = re.findall(r"python -m gpulesson\.exercises ([^`\n]+)", PAGE)
    return [shlex.split(args.replace('"$n"', "1").replace("$n", "1")) for args in found]


def test_the_page_has_the_commands_it_documents() -> None:
    commands = _cli_commands()
    assert {args[0] for args in commands} >= {"export", "list", "progress"}
    assert len(_bash_lines()) >= 6


@pytest.mark.parametrize("args", _cli_commands(), ids=lambda a: " ".join(a))
def test_every_exercises_command_parses(args: list[str]) -> None:
    """A flag the command line does not know, or a missing required one, exits here."""
    try:
        cli._parser().parse_args(args)
    except SystemExit as error:  # argparse's way of refusing
        pytest.fail(f"`python -m gpulesson.exercises {' '.join(args)}` is refused "
                    f"(exit {error.code})")


def test_every_make_target_exists() -> None:
    named = set(re.findall(r"`make ([a-z-]+)", PAGE))
    named |= {line.split()[1] for line in _bash_lines() if line.startswith("make ")}
    targets = set(re.findall(r"^([a-z][a-z-]*):", MAKEFILE, flags=re.M))
    assert named, "the page names no make target"
    assert named <= targets, f"not targets of the Makefile: {sorted(named - targets)}"
    # `make student VARIANT=3` must reach the export as --variant
    assert re.search(r"^student:.*\n(?:\t.*\n)*?\t.*--variant \$\(VARIANT\)", MAKEFILE, re.M)


def test_the_solution_modes_are_the_packages() -> None:
    """The page's account: on request in the repository, after a correct answer by
    default in an export, never on request."""
    assert Settings().solutions == "on-request"
    assert "(the `on-request` mode)" in PAGE
    assert "`--solutions after-correct`, the default" in PAGE
    default = cli._parser().parse_args(["export", "--all", "--out", "x"]).solutions
    assert default == "after-correct"
    assert {"on-request", "after-correct", "never"} == set(SOLUTION_MODES)


def test_an_export_writes_what_the_page_says(tmp_path: Path) -> None:
    """Student notebook without outputs, mode and variant set in its first code cell and
    said at its top; an answer key beside it."""
    assert "`export/students/<lesson>.ipynb`" in PAGE and "`export/answer_key/<lesson>.md`" in PAGE
    results = export_module.export(["memory_what_fits"], tmp_path, root=REPO, variant=7,
                                   solutions="never")
    (result,) = results
    nb = json.loads(Path(result.student_notebook).read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(not c.get("outputs") for c in code)
    first = "".join(code[0]["source"])
    assert "configure(solutions='never', variant=7)" in first, first
    top = "".join(nb["cells"][1]["source"]) if nb["cells"][1]["cell_type"] == "markdown" else ""
    assert "variant 7" in top, top
    assert not any("solution" in c.get("metadata", {}).get("tags", []) for c in nb["cells"])
    key = Path(result.answer_key).read_text(encoding="utf-8")
    assert "Variant seed: 7." in key
    assert (tmp_path / "students").is_dir() and (tmp_path / "answer_key").is_dir()


def test_the_page_says_the_numbers_come_from_the_installed_course(tmp_path: Path) -> None:
    # The page said "The same variant number always gives the same numbers", but a student
    # edition holds none: it draws them from the gpulesson installed where it runs, and a
    # course whose banks changed draws some variants differently (roofline ex1 and
    # optimisations ex7 did on 2026-12-06), so the key no longer matches.
    from gpulesson.exercises import load_lesson

    export_module.export(["memory_what_fits"], tmp_path, variant=7)
    student = (tmp_path / "students" / "memory_what_fits.ipynb").read_text(encoding="utf-8")
    answers = [ex.answer_text() for ex in load_lesson("memory_what_fits", variant=7).exercises
               if hasattr(ex, "rtol")]
    assert answers and not [a for a in answers if a in student]
    assert "same version of the course" in " ".join(PAGE.split())


def _help(parser, option: str) -> str:
    """The help text of ``option`` of the ``export`` command."""
    sub = next(a for a in parser._actions if a.dest == "command").choices["export"]
    return " ".join(next(a for a in sub._actions if option in a.option_strings).help.split())


def test_the_page_does_not_sell_hidden_solutions_as_protection() -> None:
    """The page said ``--solutions never`` keeps solutions hidden "for a graded assignment".
    It hides them from the widgets only: the answers stay one line of Python away in the
    student's kernel (checked below, as the page now says), and without a variant the site
    publishes them. The page and ``--help`` say so and send graded work to a variant."""
    text = " ".join(PAGE.split())
    assert "for a graded assignment" not in text
    assert "not a graded class" not in text
    assert "Hidden is not secret" in text and "neither protects it" in text
    shown = 'load_lesson("memory_what_fits").exercises[0].answer_text()'
    assert shown in text and "`.solution_text()`" in text
    graded = re.search(r"For graded work[^.]*\.", text)
    assert graded and "make student VARIANT=N" in graded.group(0), graded
    assert "answer key" in graded.group(0)
    helped = _help(cli._parser(), "--solutions")
    assert "not a protection" in helped and "--variant" in helped, helped
    assert "website" in _help(cli._parser(), "--variant")


def test_what_the_page_says_a_student_can_print_is_true() -> None:
    """In a ``never`` session, the expression the page quotes still prints the answer and
    the worked solution: the page's warning is not a hypothetical."""
    from gpulesson.exercises import configure, load_lesson, settings

    saved = (settings.solutions, settings.variant)
    try:
        configure(solutions="never", variant=7)
        exercise = load_lesson("memory_what_fits").exercises[0]
        assert exercise.answer_text() == load_lesson("memory_what_fits",
                                                     variant=7).exercises[0].answer_text()
        assert exercise.answer_text() and exercise.solution_text()
    finally:
        configure(solutions=saved[0], variant=saved[1])
