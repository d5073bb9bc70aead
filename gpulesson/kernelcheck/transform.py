"""The kernel as the runtime runs it: the learner's source, rewritten so that every array
access, branch, loop step and barrier passes through the runtime.

:func:`instrument` parses the source of a kernel (or a device function) and rewrites it:

* ``a[i]`` (a load) becomes ``__gl_ld(a, i, site)``, ``a[i] = v`` becomes
  ``__gl_st(a, i, v, site)`` and ``a[i] += v`` ``__gl_aug(a, i, "+", v, site)``: the
  runtime checks the index, records the access for the race and traffic checks, and leaves
  tuples and lists (``x.shape[0]``) alone;
* the test of every ``if``, ``while`` and conditional expression becomes
  ``__gl_br(test, site)``, which records which threads of a warp took which side;
* the body of every loop, ``except`` clause and ``finally`` clause starts with
  ``__gl_tick(loop)``, which counts loop iterations and stops a kernel that has run past its
  time budget (even one that catches every exception: the clause itself re-raises);
* in the kernel itself, ``cuda.syncthreads()`` (and ``syncthreads_count/and/or``) and the
  warp operations (``cuda.shfl_down_sync(...)``, ``cuda.syncwarp()``, ...) become
  ``yield`` points: each CUDA thread is a generator that the scheduler advances to its next
  barrier, so the threads of a block meet there without OS threads. A device function that
  holds a warp operation becomes a generator too, and its calls ``yield from`` it.

Line numbers are kept, so a finding names the learner's own line. Standard library only.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BARRIERS", "WARP_OPS", "Instrumented", "SiteInfo", "SourceUnavailable",
           "instrument", "source_of"]

#: Block-wide barriers: every thread of the block meets there.
BARRIERS = ("syncthreads", "syncthreads_count", "syncthreads_and", "syncthreads_or")
#: Warp-wide operations: the lanes of a warp meet there and exchange values.
WARP_OPS = ("syncwarp", "shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync",
            "all_sync", "any_sync", "ballot_sync", "eq_sync")
_AUG = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
        ast.Mod: "%", ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
        ast.LShift: "<<", ast.RShift: ">>", ast.MatMult: "@"}


class SourceUnavailable(ValueError):
    """The kernel's source cannot be read, so the runtime cannot follow it."""


@dataclass(frozen=True)
class SiteInfo:
    """A place in the kernel: line (in the file), column, what happens there, the loops
    around it (innermost last), the text of the line, and the lines (in the file) of the
    ``if`` statements whose body holds it (innermost last)."""

    line: int
    column: int
    kind: str  # "load", "store", "update", "branch" (an if without else, a while),
    #           "branch_else", "select" (x if c else y), "loop", "barrier", "warp", "atomic",
    #           "shared", "local"
    loops: tuple[int, ...]
    text: str
    function: str
    def_line: int
    ifs: tuple[int, ...] = ()

    @property
    def relative_line(self) -> int:
        """The line counted from the function's ``def`` line (1)."""
        return self.line - self.def_line + 1


@dataclass
class Instrumented:
    """A kernel rewritten for the runtime: its code (run with :meth:`define`), the sites,
    whether it is a generator (it has barriers), and the device functions it calls."""

    name: str
    code: types.CodeType | None
    sites: dict[int, SiteInfo]
    def_line: int
    filename: str
    generator: bool
    freevars: tuple[str, ...]
    closure: tuple[Any, ...]
    devices: dict[str, Instrumented] = field(default_factory=dict)
    origin: Any = None

    def define(self, namespace: dict[str, Any], closure: tuple[Any, ...] | None = None,
               values: Callable[[str, Any], Any] | None = None) -> types.FunctionType:
        """The function, defined in ``namespace`` (its globals), with the values of
        ``closure`` (default: the original function's) for its free variables, each passed
        through ``values(name, value)`` when given."""
        if self.code is None:  # a lambda: run as it is (it can touch no array anyway)
            return self.origin
        exec(self.code, namespace)  # noqa: S102 - the rewritten kernel, never run unguarded
        made = namespace.pop("__gl_made")
        if self.freevars:
            cells = self.closure if closure is None else closure
            got = [cell.cell_contents for cell in cells]
            if values is not None:
                got = [values(name, value) for name, value in zip(self.freevars, got,
                                                                   strict=True)]
            return made(*got)
        return made


def source_of(fn: types.FunctionType) -> tuple[str, int, str]:
    """``(source, first line, file name)`` of ``fn``, decorators included."""
    filename = fn.__code__.co_filename
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as error:
        cached = linecache.getlines(filename)
        if not cached:
            raise SourceUnavailable(
                f"the source of {fn.__name__} cannot be read ({error}): define the kernel in a "
                "notebook cell, a file or the page's editor") from None
        lines, first = inspect.getblock(cached[fn.__code__.co_firstlineno - 1:]), \
            fn.__code__.co_firstlineno
    return "".join(lines), max(first, 1), filename


class _Rewriter(ast.NodeTransformer):
    """Rewrites one function definition; ``yields``: barriers become yield points."""

    def __init__(self, first_line: int, lines: list[str], yields: bool,
                 generator_calls: set[str], sites: dict[int, SiteInfo], function: str,
                 def_line: int) -> None:
        self.offset = first_line - 1
        self.lines = lines
        self.yields = yields
        self.generator_calls = generator_calls
        self.sites = sites
        self.function, self.def_line = function, def_line
        self.loops: list[int] = []
        self.ifs: list[int] = []  # lines of the if statements around the node visited
        self.depth = 0  # nested function definitions
        self.temps = 0
        self.has_yield = False

    # helpers -------------------------------------------------------------------
    def site(self, node: ast.AST, kind: str) -> int:
        sid = len(self.sites)
        line = getattr(node, "lineno", 1) + self.offset
        text = self.lines[line - 1 - self.offset].strip() if 0 <= line - 1 - self.offset < len(
            self.lines) else ""
        self.sites[sid] = SiteInfo(line, getattr(node, "col_offset", 0), kind,
                                   tuple(self.loops), text, self.function, self.def_line,
                                   tuple(self.ifs))
        return sid

    @staticmethod
    def call(name: str, *args: ast.expr) -> ast.Call:
        return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=list(args), keywords=[])

    def tick(self, loop: int) -> ast.stmt:
        return ast.Expr(self.call("__gl_tick", ast.Constant(loop)))

    @staticmethod
    def index_expr(node: ast.expr) -> ast.expr:
        if isinstance(node, ast.Slice):
            return _Rewriter.call("slice", *(part if part is not None else ast.Constant(None)
                                             for part in (node.lower, node.upper, node.step)))
        if isinstance(node, ast.Tuple):
            return ast.Tuple(elts=[_Rewriter.index_expr(e) for e in node.elts], ctx=ast.Load())
        return node

    # definitions ------------------------------------------------------------------
    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.depth += 1
        try:
            self.generic_visit(node)
        finally:
            self.depth -= 1
        return node

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]
    visit_Lambda = visit_FunctionDef  # type: ignore[assignment]

    # memory ---------------------------------------------------------------------
    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load):
            sid = self.site(node, "load")
            return ast.copy_location(self.call("__gl_ld", node.value, self.index_expr(
                node.slice), ast.Constant(sid)), node)
        return node

    def _store(self, target: ast.expr, value: ast.expr, node: ast.AST) -> list[ast.stmt]:
        if isinstance(target, ast.Subscript):
            base = self.visit(target.value)
            index = self.index_expr(self.visit(target.slice))
            sid = self.site(target, "store")
            return [ast.Expr(self.call("__gl_st", base, index, value, ast.Constant(sid)))]
        if isinstance(target, (ast.Tuple, ast.List)) and _has_subscript(target):
            names = []
            for _ in target.elts:
                self.temps += 1
                names.append(f"__gl_t{self.temps}")
            out: list[ast.stmt] = [ast.Assign(
                targets=[ast.Tuple(elts=[ast.Name(id=n, ctx=ast.Store()) for n in names],
                                   ctx=ast.Store())], value=value)]
            for element, name in zip(target.elts, names, strict=True):
                out += self._store(element, ast.Name(id=name, ctx=ast.Load()), node)
            return out
        return [ast.Assign(targets=[self.visit(target)], value=value)]

    def visit_Assign(self, node: ast.Assign) -> Any:
        if not any(_has_subscript(t) for t in node.targets):
            self.generic_visit(node)
            return node
        value = self.visit(node.value)
        if len(node.targets) == 1:
            out = self._store(node.targets[0], value, node)
        else:
            self.temps += 1
            name = f"__gl_t{self.temps}"
            out = [ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=value)]
            for target in node.targets:
                out += self._store(target, ast.Name(id=name, ctx=ast.Load()), node)
        return [ast.copy_location(stmt, node) for stmt in out]

    def visit_AugAssign(self, node: ast.AugAssign) -> Any:
        if not isinstance(node.target, ast.Subscript):
            self.generic_visit(node)
            return node
        base = self.visit(node.target.value)
        index = self.index_expr(self.visit(node.target.slice))
        value = self.visit(node.value)
        sid = self.site(node.target, "update")
        return ast.copy_location(ast.Expr(self.call(
            "__gl_aug", base, index, ast.Constant(_AUG[type(node.op)]), value,
            ast.Constant(sid))), node)

    # control flow ---------------------------------------------------------------------
    def _branch(self, node: ast.If | ast.While | ast.IfExp) -> None:
        kind = ("select" if isinstance(node, ast.IfExp) else
                "branch_else" if isinstance(node, ast.If) and node.orelse else "branch")
        sid = self.site(node, kind)
        node.test = ast.copy_location(self.call("__gl_br", node.test, ast.Constant(sid)),
                                      node.test)

    def visit_If(self, node: ast.If) -> ast.AST:
        node.test = self.visit(node.test)
        self.ifs.append(node.lineno + self.offset)  # the sites of its body are inside it
        try:
            node.body = self._body(node.body)
        finally:
            self.ifs.pop()
        node.orelse = self._body(node.orelse) if node.orelse else []
        self._branch(node)
        return node

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        self.generic_visit(node)
        self._branch(node)
        return node

    def _loop(self, node: ast.For | ast.While) -> ast.AST:
        sid = self.site(node, "loop")
        if isinstance(node, ast.For):
            node.iter = self.visit(node.iter)
            node.target = self.visit(node.target)
        else:
            node.test = self.visit(node.test)
        self.loops.append(sid)
        try:
            node.body = self._body(node.body)
        finally:
            self.loops.pop()
        node.orelse = self._body(node.orelse, tick=False)
        node.body.insert(0, ast.copy_location(self.tick(sid), node))
        if isinstance(node, ast.While):
            self._branch(node)
        return node

    visit_For = _loop  # type: ignore[assignment]
    visit_While = _loop  # type: ignore[assignment]

    def _body(self, body: list[ast.stmt], tick: bool = False) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in body:
            done = self.visit(stmt)
            if isinstance(done, list):
                out.extend(done)
            elif done is not None:
                out.append(done)
        if tick:
            out.insert(0, self.tick(-1))
        return out or [ast.Pass()]

    def visit_Try(self, node: ast.Try) -> ast.AST:
        node.body = self._body(node.body)
        for handler in node.handlers:
            if handler.type is not None:
                handler.type = self.visit(handler.type)
            handler.body = [ast.copy_location(self.tick(-1), handler),
                            *self._body(handler.body)]
        node.orelse = self._body(node.orelse) if node.orelse else []
        if node.finalbody:
            node.finalbody = [ast.copy_location(self.tick(-1), node),
                              *self._body(node.finalbody)]
        return node

    visit_TryStar = visit_Try  # type: ignore[assignment]

    # barriers and warp operations -------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute)
                and func.value.attr in ("atomic", "shared", "local")):
            space = func.value.attr
            if space == "atomic":
                sid = self.site(node, "atomic")
                return ast.copy_location(ast.Call(
                    func=ast.Name(id="__gl_atomic", ctx=ast.Load()),
                    args=[ast.Constant(func.attr), ast.Constant(sid), *node.args],
                    keywords=node.keywords), node)
            if func.attr == "array":
                sid = self.site(node, space)
                return ast.copy_location(ast.Call(
                    func=ast.Name(id=f"__gl_{space}", ctx=ast.Load()),
                    args=[ast.Constant(sid), *node.args], keywords=node.keywords), node)
        if not self.yields or self.depth:
            return node
        if isinstance(func, ast.Attribute) and func.attr in BARRIERS + WARP_OPS:
            kind = "barrier" if func.attr in BARRIERS else "warp"
            sid = self.site(node, kind)
            self.has_yield = True
            return ast.copy_location(ast.Yield(value=ast.Tuple(elts=[
                ast.Constant(kind), ast.Constant(sid), ast.Constant(func.attr),
                ast.Tuple(elts=list(node.args), ctx=ast.Load())], ctx=ast.Load())), node)
        if isinstance(func, ast.Name) and func.id in self.generator_calls:
            self.has_yield = True
            return ast.copy_location(ast.YieldFrom(value=node), node)
        return node


def _has_subscript(target: ast.expr) -> bool:
    if isinstance(target, ast.Subscript):
        return True
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(_has_subscript(e) for e in target.elts)
    return False


def _called_names(tree: ast.AST) -> set[str]:
    return {node.func.id for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}


def instrument(fn: types.FunctionType, *, resolve: Callable[[str], Any] | None = None,
               _seen: dict[int, Instrumented] | None = None,
               _sites: dict[int, SiteInfo] | None = None) -> Instrumented:
    """Rewrite ``fn`` (a plain function, written as a CUDA kernel) for the runtime.

    ``resolve(name)`` returns the Python function of a device function the kernel calls by
    ``name`` (or ``None``): those are rewritten too, and a device function that holds a warp
    operation or a barrier becomes a generator that the kernel runs with ``yield from``.
    """
    seen = {} if _seen is None else _seen
    sites: dict[int, SiteInfo] = {} if _sites is None else _sites
    if fn.__name__ == "<lambda>":
        return Instrumented(fn.__name__, None, sites, fn.__code__.co_firstlineno,
                            fn.__code__.co_filename, False, (), (), {}, fn)
    key = id(fn.__code__)
    if key in seen:
        return seen[key]
    source, first, filename = source_of(fn)
    text = textwrap.dedent(source)
    try:
        tree = ast.parse(text)
    except SyntaxError as error:
        raise SourceUnavailable(f"the source of {fn.__name__} could not be parsed: "
                                f"{error.msg}") from None
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if not defs:
        raise SourceUnavailable(f"no function definition found in the source of {fn.__name__}")
    node = defs[0]
    node.decorator_list = []
    devices: dict[str, Instrumented] = {}
    generator_calls: set[str] = set()
    if resolve is not None:
        for name in sorted(_called_names(node)):
            device = resolve(name)
            if device is not None and id(device.__code__) != key:
                done = instrument(device, resolve=resolve, _seen=seen, _sites=sites)
                devices[name] = done
                if done.generator:
                    generator_calls.add(name)
    rewriter = _Rewriter(first, text.splitlines(), yields=True,
                         generator_calls=generator_calls, sites=sites, function=node.name,
                         def_line=node.lineno + first - 1)
    node.body = rewriter._body(node.body)
    freevars = fn.__code__.co_freevars
    if freevars:  # a closure: define it inside a maker that takes the free variables
        maker = ast.FunctionDef(
            name="__gl_maker", args=ast.arguments(
                posonlyargs=[], args=[ast.arg(arg=v) for v in freevars], vararg=None,
                kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
            body=[node, ast.Return(value=ast.Name(id=node.name, ctx=ast.Load()))],
            decorator_list=[], returns=None)
        if "type_params" in ast.FunctionDef._fields:
            maker.type_params = []
        body: list[ast.stmt] = [maker, ast.Assign(targets=[ast.Name(id="__gl_made",
                                                                    ctx=ast.Store())],
                                                  value=ast.Name(id="__gl_maker",
                                                                 ctx=ast.Load()))]
    else:
        body = [node, ast.Assign(targets=[ast.Name(id="__gl_made", ctx=ast.Store())],
                                 value=ast.Name(id=node.name, ctx=ast.Load()))]
    module = ast.Module(body=body, type_ignores=[])
    ast.fix_missing_locations(module)
    for part in ast.walk(module):  # rewritten nodes take their place from the original's
        if hasattr(part, "lineno") and hasattr(part, "end_lineno"):
            if part.end_lineno is None or part.end_lineno < part.lineno:
                part.end_lineno = part.lineno
            if part.end_lineno == part.lineno and (part.end_col_offset is None or
                                                   part.end_col_offset < part.col_offset):
                part.end_col_offset = part.col_offset
    ast.increment_lineno(module, first - 1)
    code = compile(module, filename, "exec")
    done = Instrumented(node.name, code, rewriter.sites, node.lineno, filename,
                        rewriter.has_yield, freevars, fn.__closure__ or (), devices, fn)
    seen[key] = done
    return done
