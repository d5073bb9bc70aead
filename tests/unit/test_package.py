"""Rules for the whole package ``gpulesson``, each checked on every module it has.

* Pure modules import only the standard library: they run in the browser (Pyodide) or
  without a kernel. The few modules allowed numpy, matplotlib, ipywidgets or mpi4py are
  listed in ``HEAVY``; every other module is pure.
* No import cycle between the package's modules.
* No module over 1,000 lines: the package's, and the tests', scripts', benchmarks' and
  the site's JavaScript.

The modules are found on disk (``gpulesson/**/*.py``), so a new module or a new subpackage
is checked as soon as it exists, without being listed here.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections import deque
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = "gpulesson"
MAX_LINES = 1000

#: The modules allowed to import third-party packages (a name covers its submodules).
HEAVY = {
    "gpulesson.device": "numpy, and cupy where a GPU is usable",
    "gpulesson.bench": "numpy, and cupyx's timer on a GPU",
    "gpulesson.machine": "numpy: it measures this machine",
    "gpulesson.plotting": "matplotlib",
    "gpulesson.diagrams": "matplotlib: it draws the lessons' schematics",
    "gpulesson.collectives": "mpi4py and numpy: a real all-reduce",
    "gpulesson.widgets": "ipywidgets",
    "gpulesson.exercises.widgets": "ipywidgets",
}


def module_files(root: Path, package: str) -> dict[str, Path]:
    """Every module of ``package`` (the folder ``root/package``), by dotted name."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def within(module: str, names: Iterable[str]) -> bool:
    """Whether ``module`` is one of ``names`` or inside one of them."""
    return any(module == name or module.startswith(name + ".") for name in names)


MODULES = module_files(REPO, PACKAGE)
PURE = [name for name in MODULES if not within(name, HEAVY)]
#: The course's other code, by path, held to the package's length: its tests, scripts,
#: benchmarks, the root conftest.py and the site's JavaScript.
OTHER_CODE = {
    str(path.relative_to(REPO)): path
    for pattern in ("tests/**/*.py", "scripts/**/*.py", "scripts/**/*.js", "scripts/**/*.mjs",
                    "benchmarks/**/*.py", "conftest.py")
    for path in sorted(REPO.glob(pattern)) if "__pycache__" not in path.parts
}


# ---------------------------------------------------------------------------------------
# Pure modules import only the standard library

# Run without site-packages (-S: the package is imported from its source folder) with every
# third-party top-level package made unimportable, import each module afresh (the package's
# modules are forgotten before each), and report per module the import error, or the
# modules it loaded that are neither built in, nor in the standard library, nor ours.
SCRIPT = r"""
import importlib, importlib.abc, json, sys
root, package, names = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.path.insert(0, root)
def ours(name):
    top = name.partition(".")[0]
    return top in sys.stdlib_module_names or top == package
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if not ours(name):
            raise ImportError(f"blocked third-party import: {name}")
        return None
sys.meta_path.insert(0, Block())
report = {}
for name in names:
    for loaded in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        del sys.modules[loaded]
    before = set(sys.modules)
    try:
        importlib.import_module(name)
    except BaseException as exc:
        report[name] = f"{type(exc).__name__}: {exc}"
        continue
    foreign = sorted(m for m in set(sys.modules) - before if not ours(m))
    report[name] = "non-stdlib modules loaded: " + ", ".join(foreign) if foreign else ""
print(json.dumps(report))
"""


def third_party_imports(root: Path, package: str, names: list[str]) -> dict[str, str]:
    """Per module: what importing it with third-party packages blocked said ("" if pure)."""
    proc = subprocess.run([sys.executable, "-S", "-c", SCRIPT, str(root), package, *names],
                          capture_output=True, text=True, cwd=root, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def import_report() -> dict[str, str]:
    return third_party_imports(REPO, PACKAGE, PURE)


@pytest.mark.parametrize("module", PURE)
def test_module_imports_only_the_standard_library(module: str,
                                                  import_report: dict[str, str]) -> None:
    assert import_report[module] == "", (
        f"{module}: {import_report[module]}. Import the package lazily inside the function "
        f"that needs it, or, if the whole module needs it, add the module to HEAVY")


def test_every_module_allowed_third_party_imports_exists() -> None:
    """A name left in HEAVY after its module has gone would exempt whatever takes it next."""
    stale = [name for name in HEAVY if not any(within(m, [name]) for m in MODULES)]
    assert not stale, f"HEAVY names modules that do not exist: {stale}"


def test_the_import_check_sees_a_third_party_import(tmp_path: Path) -> None:
    """On a package made for the purpose: a module importing numpy, directly or through a
    sibling, is caught; one importing numpy inside a function only when it is called is
    pure."""
    demo = tmp_path / "demo"
    (demo / "sub").mkdir(parents=True)
    files = {"__init__.py": "", "pure.py": "import json\n", "heavy.py": "import numpy\n",
             "sub/__init__.py": "from demo import heavy\n",
             "lazy.py": "def f():\n    import numpy\n    return numpy\n"}
    for name, text in files.items():
        (demo / name).write_text(text, encoding="utf-8")
    names = sorted(module_files(tmp_path, "demo"))
    assert names == ["demo", "demo.heavy", "demo.lazy", "demo.pure", "demo.sub"]
    report = third_party_imports(tmp_path, "demo", names)
    assert report["demo"] == report["demo.pure"] == report["demo.lazy"] == ""
    assert report["demo.heavy"] == "ImportError: blocked third-party import: numpy"
    assert report["demo.sub"] == "ImportError: blocked third-party import: numpy"


# ---------------------------------------------------------------------------------------
# No import cycle


def imports_of(module: str, modules: Mapping[str, Path], package: str) -> set[str]:
    """The modules of ``package`` that ``module`` imports anywhere in its file.

    Every import statement counts, at module level, inside functions and under
    ``if TYPE_CHECKING:``. ``import p.a`` and ``from p.a import f`` name ``p.a``;
    ``from p import a`` names the submodule ``p.a`` if there is one, else the package ``p``
    itself; relative imports (``from . import a``, ``from ..a import f``) are resolved
    from the module's package.
    """
    path = modules[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    here = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = here.split(".")
                if node.level > len(parts):
                    raise ValueError(f"{path}:{node.lineno}: relative import beyond {package}")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                       for alias in node.names]
        else:
            continue
        for target in targets:
            if not within(target, [package]):
                continue
            while target not in modules and "." in target:  # p.a.f -> p.a
                target = target.rpartition(".")[0]
            if target != module:
                found.add(target)
    return found


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module -> the package's modules it imports."""
    modules = module_files(root, package)
    return {name: imports_of(name, modules, package) for name in modules}


def strongly_connected(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm: the groups of modules that can each reach the others."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while not group or group[-1] != node:
                group.append(stack.pop())
            groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(groups)


def shortest_cycle(graph: Mapping[str, set[str]], start: str, group: set[str]) -> list[str]:
    """The shortest path from ``start`` back to itself inside ``group``, both ends listed."""
    came_from: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(graph[node] & group):
            if nxt == start:
                path = [node]
                while came_from[path[-1]] is not None:
                    path.append(came_from[path[-1]])  # type: ignore[arg-type]
                return [*reversed(path), start]
            if nxt not in came_from:
                came_from[nxt] = node
                queue.append(nxt)
    raise AssertionError(f"{start} is on no cycle of {sorted(group)}")


def import_cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Each import cycle, as ``[a, b, ..., a]``: in every group of modules that import each
    other, the shortest cycle through each member, each cycle listed once (starting at its
    first module in sorted order)."""
    cycles = set()
    for group in strongly_connected(graph):
        if len(group) < 2:
            continue
        for start in group:
            ring = shortest_cycle(graph, start, set(group))[:-1]
            first = ring.index(min(ring))
            ring = ring[first:] + ring[:first]
            cycles.add((*ring, ring[0]))
    return [list(cycle) for cycle in sorted(cycles)]


def test_no_import_cycle() -> None:
    """No cycle among the package's modules, module-level or function-level imports."""
    cycles = import_cycles(import_graph(REPO, PACKAGE))
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_cycle_check_resolves_every_import_form(tmp_path: Path) -> None:
    """On a package made for the purpose: a function-level relative import, ``from package
    import submodule``, a relative import into a subpackage, ``import package.module`` and
    ``from .. import name`` (a name of the package itself) are all edges."""
    demo = tmp_path / "demo"
    (demo / "sub").mkdir(parents=True)
    files = {"__init__.py": "from demo.a import f\nVERSION = 1\n",
             "a.py": "def f():\n    from . import b\n    return b\n",
             "b.py": "import json\n\nfrom demo import c\n",
             "c.py": "from .sub.d import g\n",
             "sub/__init__.py": "",
             "sub/d.py": "import demo.a\nfrom .. import VERSION\n\ndef g():\n    return VERSION\n"}
    for name, text in files.items():
        (demo / name).write_text(text, encoding="utf-8")
    graph = import_graph(tmp_path, "demo")
    assert graph == {"demo": {"demo.a"}, "demo.a": {"demo.b"}, "demo.b": {"demo.c"},
                     "demo.c": {"demo.sub.d"}, "demo.sub": set(),
                     "demo.sub.d": {"demo", "demo.a"}}
    assert import_cycles(graph) == [
        ["demo", "demo.a", "demo.b", "demo.c", "demo.sub.d", "demo"],
        ["demo.a", "demo.b", "demo.c", "demo.sub.d", "demo.a"],
    ]
    (demo / "sub/d.py").write_text("VERSION = 2\n", encoding="utf-8")
    assert import_cycles(import_graph(tmp_path, "demo")) == []


# ---------------------------------------------------------------------------------------
# No module over 1,000 lines

TOO_LONG_TODAY: dict[str, str] = {}


@pytest.mark.parametrize("module", [
    pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=TOO_LONG_TODAY[name]))
    if name in TOO_LONG_TODAY else name
    for name in {**MODULES, **OTHER_CODE}
])
def test_module_is_at_most_1000_lines(module: str) -> None:
    path = MODULES.get(module) or OTHER_CODE[module]
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, (
        f"{path.relative_to(REPO)} has {lines:,} lines, more than {MAX_LINES:,}: split it")
