"""The package gpulesson.exercises as a whole: its public names, no import hidden in a
function (to dodge a cycle) but the optional widget layer's, and which modules stay pure.
The package-wide import-cycle check is ``tests/unit/test_package.py``."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import gpulesson.exercises as package
from gpulesson.exercises.session import Settings, configure, settings

PACKAGE_DIR = Path(package.__file__).parent
NAME = package.__name__

#: The one import inside a function: the optional widget layer, which needs ipywidgets.
LOCAL_IMPORTS = {("gpulesson.exercises.lesson", "Lesson.show", "gpulesson.exercises.widgets")}
#: The only module that may load more than the standard library (and the calculators).
WIDGET_LAYER = {"gpulesson.exercises.widgets"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_DIR).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join((NAME, *parts))


MODULES = {_module_name(p): p for p in sorted(PACKAGE_DIR.rglob("*.py"))}


def _is_package(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules of this package that one import statement loads by name."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            anchor = module if _is_package(module) else module.rpartition(".")[0]
            for _ in range(node.level - 1):
                anchor = anchor.rpartition(".")[0]
            base = f"{anchor}.{base}" if base else anchor
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                 for a in node.names]
    return [n for n in names if n in MODULES]


def _scope(tree: ast.Module) -> dict[ast.AST, str]:
    """Every import node inside a function or class, with the qualified name around it."""
    found: dict[ast.AST, str] = {}

    def visit(node: ast.AST, where: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, [*where, child.name])
            else:
                if isinstance(child, (ast.Import, ast.ImportFrom)) and where:
                    found[child] = ".".join(where)
                visit(child, where)

    visit(tree, [])
    return found


def test_only_the_widget_layer_is_imported_inside_a_function():
    local = set()
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node, where in _scope(tree).items():
            targets = _targets(module, node) or [
                getattr(node, "module", None) or node.names[0].name]
            local |= {(module, where, t) for t in targets}
    assert local == LOCAL_IMPORTS


def test_the_pure_modules_load_no_widget_layer_and_no_numpy():
    """Everything but the widgets runs without ipywidgets, IPython or numpy (Pyodide)."""
    pure = sorted(set(MODULES) - WIDGET_LAYER - {f"{NAME}.__main__"})
    code = ("import importlib, sys\n"
            f"for name in {pure!r}: importlib.import_module(name)\n"
            "bad = [m for m in ('numpy', 'ipywidgets', 'IPython', 'matplotlib') "
            "if m in sys.modules]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True)


#: What notebooks, pages, scripts and tests import from the package itself.
PUBLIC = ("ChoiceExercise", "CodeExercise", "Exercise", "Feedback", "Lesson", "Mistake",
          "NumericExercise", "PredictExercise", "answer_key_markdown", "available_lessons",
          "configure", "feedback_html", "format_number", "lesson_module", "load_lesson",
          "progress_summary", "settings", "static_html")


def test_public_names():
    assert sorted(package.__all__) == sorted(PUBLIC)
    for name in PUBLIC:
        assert getattr(package, name).__module__.startswith(f"{NAME}."), name
    assert package.settings is settings and isinstance(settings, Settings)
    assert package.configure is configure
