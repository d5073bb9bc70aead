"""Sphinx extension: live calculators on the static site, and the GPU table page.

Design (one source of truth). A calculator of :mod:`gpulesson.calculators` appears on a page
as the static markup of :func:`gpulesson.widgets.static_html`, computed at build time: the
worked example's numbers, so a reader never sees an empty box. On pages that contain one,
a small loader (``scripts/site_js/calculators.js``) starts a Web Worker
(``python-worker.js``) that boots Pyodide (vendored by ``scripts/vendor_pyodide.py``
into ``_pyodide/<version>/``) and loads the course's own package, packed by this extension
at build time from the very files the notebooks import. From then on every change of an
input goes to :func:`gpulesson.browser.react_json` and the page shows what Python answers:
no formula exists in JavaScript. Pages without a calculator load none of it.

What this extension adds:

``calculator`` directive
    ````{calculator} kv_cache```` places calculator ``kv_cache`` on any page, with a link
    to the lesson that explains it (``:no-lesson-link:`` drops it). ``:values:`` takes a
    JSON object of inputs in shown units (``{"model": "llama-3-70b"}``).
``gpu-table`` directive
    the GPU specification tables of ``book/hardware.md``, generated from
    :data:`gpulesson.hardware.GPUS` and their sources (dense and sparse rates apart).
``html-page-context``
    adds the loader (with the Pyodide folder and the package pack as data attributes) to
    exactly the pages whose HTML holds a registry calculator, wherever it came from (this
    directive or a notebook's ``calculator_widget`` output); two accessibility repairs of
    generated markup (see ``_MYSTNB_SUMMARY`` and ``_BIBLIOENTRY``).
``build-finished``
    writes the pack (``_lib/course/gpulesson-pack.zip``: every module of the package
    that :mod:`gpulesson.browser` imports, transitively, every module of the packages it
    imports by name at run time (:data:`WHOLE_PACKAGES`), plus ``gpulesson/data``, with
    their byte code compiled by the vendored Pyodide: :func:`with_bytecode`; one zip
    archive, :func:`pack_archive`) and the two scripts into the output folder.

Loaded by ``_config.yml`` (``sphinx: local_extensions``).
"""

from __future__ import annotations

import ast
import base64
import functools
import hashlib
import importlib.util
import io
import json
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parent.parent
SITE_JS = ROOT / "scripts" / "site_js"
#: The course's browser scripts this extension publishes (under ``_lib/course/``).
SCRIPTS = ("calculators.js", "python-worker.js")
COURSE_DIR = "_lib/course"
#: The loader as Sphinx sees it (local scripts are prefixed with ``_static/``).
LOADER = f"../{COURSE_DIR}/calculators.js"
#: The module the browser imports; the pack is its import closure within the package.
ENTRY_MODULE = "gpulesson.browser"
#: Packages packed whole, every module in them: the registry imports its lesson modules
#: (``gpulesson.calculators.lessons.<slug>``) by name at run time, in course order, which no
#: reading of import statements can see.
WHOLE_PACKAGES = ("gpulesson.calculators",)
#: The package pack, site-relative (see :func:`make_pack`): a zip archive
#: (:func:`pack_archive`).
PACK_PATH = f"{COURSE_DIR}/gpulesson-pack.zip"
#: The member of a pack's archive that describes it (:func:`pack_archive`).
PACK_INDEX = "gl-pack.json"
#: The Node script that compiles a pack with the vendored Pyodide (:func:`with_bytecode`).
COMPILE_SCRIPT = ROOT / "scripts" / "pyodide_compile.mjs"
#: How long the page waits for Python before it says the calculator could not start.
DEFAULT_TIMEOUT_MS = 60_000


# ---------------------------------------------------------------------------------------
# The pack: the package's own files, as the notebooks import them


def _package_dir() -> Path:
    import gpulesson

    return Path(gpulesson.__file__).resolve().parent


def _module_file(package: Path, module: str) -> Path | None:
    rel = module.split(".")[1:]
    candidate = package.joinpath(*rel)
    if candidate.with_suffix(".py").is_file():
        return candidate.with_suffix(".py")
    if (candidate / "__init__.py").is_file():
        return candidate / "__init__.py"
    return None


def _imports(path: Path, module: str) -> tuple[set[str], set[str], set[str]]:
    """(package modules imported at module level, package modules imported only inside a
    function, third-party modules imported at module level)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    ours: set[str] = set()
    deferred: set[str] = set()
    foreign: set[str] = set()
    top_level = set(map(id, tree.body))
    for statement in tree.body:  # module level includes `if`/`try` blocks, not functions
        if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            top_level.update(map(id, ast.walk(statement)))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        found: list[str] = []
        if isinstance(node, ast.Import):
            found = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):  # relative ones resolved as Python does
            base = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            found = [base] + [f"{base}.{alias.name}" for alias in node.names]
        for name in found:
            top = name.partition(".")[0]
            if top == "gpulesson":
                (ours if id(node) in top_level else deferred).add(name)
            elif (top and top not in sys.stdlib_module_names and top != "__future__"
                  and id(node) in top_level):
                foreign.add(name)
    return ours, deferred - ours, foreign


def _modules_in(package: Path, name: str) -> list[str]:
    """Every module of subpackage ``name`` of ``gpulesson`` (at ``package``), nested ones too."""
    root = package.joinpath(*name.split(".")[1:])
    found = []
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found.append(".".join(parts))
    return found


def pack_files(entry: str = ENTRY_MODULE, whole: Iterable[str] = WHOLE_PACKAGES,
               left_out: dict[str, list[str]] | None = None) -> dict[str, str]:
    """The files the browser needs to import ``entry``: path -> text.

    Every module of ``gpulesson`` that ``entry`` imports (at module level or inside a
    function, transitively), every module of a package of ``whole`` (default
    :data:`WHOLE_PACKAGES`) it imports, each package's ``__init__.py``, and every file of
    ``gpulesson/data``. Raises :class:`~sphinx.errors.ExtensionError` when a module the
    browser imports imports a third-party library at module level (it could not run in
    Pyodide). A module imported only inside a function and that needs a third-party library
    (``Lesson.show`` loads the ipywidgets layer) is left out: that function has no use in
    the browser, and calling it there would raise ``ImportError``; ``left_out``, when
    given, receives each such module with the libraries it needs.
    """
    package = _package_dir()
    whole = tuple(whole)
    todo: list[tuple[str, bool]] = [(entry, True), ("gpulesson", True)]
    seen: dict[str, bool] = {}
    files: dict[str, str] = {}
    while todo:
        module, needed = todo.pop()
        if module in seen and (seen[module] or not needed):
            continue
        seen[module] = needed
        path = _module_file(package, module)
        if path is None:  # "gpulesson.x.name" where name is a function or class
            continue
        rel = path.relative_to(package.parent).as_posix()
        ours, deferred, foreign = _imports(path, module)
        if foreign:
            if not needed:  # only a function imports it: leave it out
                if left_out is not None:
                    left_out[module] = sorted({name.partition(".")[0] for name in foreign})
                continue
            raise ExtensionError(
                f"{rel} imports {', '.join(sorted(foreign))} at module level: the site's "
                "calculators and exercises run in Pyodide with the standard library only"
            )
        files[rel] = path.read_text(encoding="utf-8")
        parts = module.split(".")
        todo.extend((".".join(parts[:i]), True) for i in range(1, len(parts)))  # parents
        todo.extend((name, needed) for name in ours)
        todo.extend((name, False) for name in deferred)
        if module in whole:
            todo.extend((name, needed) for name in _modules_in(package, module))
    for data in sorted((package / "data").rglob("*")):
        if data.is_file() and "__pycache__" not in data.parts:
            files[data.relative_to(package.parent).as_posix()] = data.read_text(encoding="utf-8")
    return dict(sorted(files.items()))


@functools.cache
def _package_sources() -> tuple[str, ...]:
    """Absolute paths of the packed files and of this extension: what a page with a
    calculator or the GPU table depends on (Sphinx re-reads it when one changes)."""
    root = _package_dir().parent
    return (__file__, *(str(root / path) for path in pack_files()))


def make_pack(entry: str = ENTRY_MODULE,
              whole: Iterable[str] = WHOLE_PACKAGES) -> dict[str, Any]:
    """The pack the browser loads: ``{"version", "entry", "sha256", "files", "left_out"}``
    (the files of :func:`pack_files` for ``entry`` and ``whole``; ``left_out``: the package
    modules only a function imports that need a third-party library, with those libraries)."""
    import gpulesson

    left_out: dict[str, list[str]] = {}
    files = pack_files(entry, whole, left_out)
    digest = hashlib.sha256(json.dumps(files, sort_keys=True).encode("utf-8")).hexdigest()
    return {"version": gpulesson.__version__, "entry": entry, "sha256": digest, "files": files,
            "left_out": dict(sorted(left_out.items()))}


def with_bytecode(pack: dict[str, Any], folder: Path, node: str = "node") -> dict[str, Any]:
    """``pack`` with the byte code of its modules, compiled by the Pyodide in ``folder``.

    Pyodide's Python writes no byte code, so without it each worker compiles every module it
    imports from source (on 2026-12-06, 0.15-0.41 s of a calculator's start on a cached
    visit). ``scripts/pyodide_compile.mjs`` compiles the pack under Node with that very
    Pyodide (its magic number and code objects exactly those the browser runs) into checked
    hash-based ``.pyc`` files (PEP 552: used while the source beside them hashes the same,
    so never stale, whatever the files' dates), and imports the pack's entry module from
    them. Adds ``"bytecode"`` (``__pycache__`` path -> base64) and ``"python"`` (the
    version they are for); ``"sha256"`` stays that of the sources.

    Raises :class:`~sphinx.errors.ExtensionError` when Node fails, or when any module of the
    pack was compiled from source after all (the browser would silently do the same).
    """
    done = subprocess.run(
        [node, str(COMPILE_SCRIPT), str(folder)],
        input=json.dumps({"entry": pack["entry"], "files": pack["files"]}),
        capture_output=True, text=True, encoding="utf-8", check=False)
    if done.returncode != 0:
        raise ExtensionError(f"{COMPILE_SCRIPT.name} failed ({done.returncode}): "
                             f"{done.stderr.strip()[-2000:]}")
    compiled = json.loads(done.stdout.strip().splitlines()[-1])
    if compiled["recompiled"]:
        raise ExtensionError(
            f"Pyodide compiled {', '.join(compiled['recompiled'])} from source although "
            "the pack holds its byte code: the .pyc files do not match")
    return {**pack, "python": compiled["python"], "bytecode": compiled["bytecode"]}


def pack_archive(pack: dict[str, Any], base: dict[str, Any] | None = None) -> bytes:
    """``pack`` as the site publishes it: a zip archive (deflated) of its files, its byte
    code (``.pyc`` files, binary) and :data:`PACK_INDEX`, a JSON object with the rest of the
    pack, the files' and the byte code's paths in place of their contents. The worker
    unpacks it with Pyodide's own ``unpackArchive`` into the folder it imports from.

    With ``base`` (a pack the page unpacks first, its archive published beside this one),
    the archive leaves out every file that ``base`` holds with the same text, and that
    file's byte code where ``base`` has it: the exercises' pages load the calculators' pack
    and then the rest, so a reader who saw a lesson downloads only the rest. The index
    still lists every file and ``.pyc`` of ``pack`` (the worker checks they are all there).

    Base64 text in JSON made the byte code a third larger than its bytes, and a host that
    compresses nothing (``python -m http.server``, the offline copy) sent the whole JSON as
    it is: on 2026-12-06 the exercises' pack was 5.19 MB as JSON and 1.66 MB as this
    archive (1.82 MB as gzipped JSON). The archive is the same for the same pack: members
    in order, with a fixed date.
    """
    bytecode = {path: base64.b64decode(code) for path, code in pack.get("bytecode", {}).items()}
    index = {key: value for key, value in pack.items() if key not in ("files", "bytecode")}
    index["files"] = sorted(pack["files"])
    index["bytecode"] = sorted(bytecode)
    members = {**{path: text.encode("utf-8") for path, text in pack["files"].items()},
               **bytecode}
    if base is not None:
        shared = {path for path, text in pack["files"].items() if base["files"].get(path) == text}
        for code in bytecode:  # <folder>/__pycache__/<module>.<tag>.pyc
            folder, _, name = code.rpartition("__pycache__/")
            if f"{folder}{name.split('.')[0]}.py" in shared and code in base.get("bytecode", {}):
                del members[code]
        for path in shared:
            del members[path]
    if PACK_INDEX in members:
        raise ValueError(f"a pack may not hold a file named {PACK_INDEX}")
    members[PACK_INDEX] = json.dumps(index, ensure_ascii=False, sort_keys=True).encode("utf-8")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for path in sorted(members):
            info = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, members[path], compresslevel=9)
    return out.getvalue()


def read_pack(*paths: Path) -> dict[str, Any]:
    """The pack in the archives at ``paths`` (:func:`pack_archive`), unpacked in order as
    the worker does (the index is the last one's), as :func:`make_pack` and
    :func:`with_bytecode` give it: ``"files"`` path -> text, ``"bytecode"`` path -> base64.
    Raises :class:`KeyError` when a file the index lists is in none of them."""
    members: dict[str, bytes] = {}
    for path in paths:
        with zipfile.ZipFile(path) as archive:
            members.update((name, archive.read(name)) for name in archive.namelist())
    pack = json.loads(members[PACK_INDEX].decode("utf-8"))
    pack["files"] = {name: members[name].decode("utf-8") for name in pack["files"]}
    codes = pack.pop("bytecode")
    if codes:
        pack["bytecode"] = {name: base64.b64encode(members[name]).decode("ascii")
                            for name in codes}
    return pack


def compiled_pack(app: Sphinx, pack: dict[str, Any]) -> dict[str, Any]:
    """``pack`` with its byte code (:func:`with_bytecode`) when the vendored Pyodide and
    Node are there; ``pack`` as it is otherwise (the browser compiles the sources)."""
    for extra in app.config.html_extra_path:
        manifest = Path(app.confdir, extra, "_pyodide", "manifest.json")
        if manifest.is_file():
            folder = manifest.parent.parent / json.loads(manifest.read_text("utf-8"))["path"]
            if (folder / "pyodide.mjs").is_file() and shutil.which("node"):
                return with_bytecode(pack, folder)
    return pack


def pyodide_manifest(app: Sphinx) -> dict[str, Any] | None:
    """The vendored Pyodide (``_pyodide/manifest.json`` in an ``html_extra_path`` folder)."""
    for extra in app.config.html_extra_path:
        manifest = Path(app.confdir, extra, "_pyodide", "manifest.json")
        if manifest.is_file():
            return json.loads(manifest.read_text(encoding="utf-8"))
    return None


# ---------------------------------------------------------------------------------------
# Directives


class CalculatorDirective(SphinxDirective):
    """````{calculator} NAME```` : a registry calculator, live on the site."""

    required_arguments = 1
    option_spec = {
        "values": directives.unchanged,
        "no-lesson-link": directives.flag,
    }

    def run(self) -> list[nodes.Node]:
        from gpulesson import calculators
        from gpulesson.widgets import static_html

        name = self.arguments[0].strip()
        if name not in calculators.CALCULATORS:
            raise self.error(
                f"unknown calculator {name!r}; known: {', '.join(calculators.CALCULATORS)}"
            )
        values: dict[str, Any] = {}
        if "values" in self.options:
            try:
                values = json.loads(self.options["values"])
            except json.JSONDecodeError as exc:
                raise self.error(f":values: must be a JSON object: {exc}") from exc
            if not isinstance(values, dict):
                raise self.error(":values: must be a JSON object")
        # ids unique within the page: gl-<name>, gl-<name>-2, ...
        counts = self.env.temp_data.setdefault("gl_calculator_ids", {})
        counts[name] = counts.get(name, 0) + 1
        uid = f"gl-{name.replace('_', '-')}" + (f"-{counts[name]}" if counts[name] > 1 else "")
        try:
            markup = static_html(name, values, uid=uid)
        except (ValueError, KeyError) as exc:
            raise self.error(f"calculator {name}: {exc}") from exc
        for path in _package_sources():  # re-read this page when the package changes
            self.env.note_dependency(path)
        result: list[nodes.Node] = [nodes.raw("", markup, format="html")]
        calc = calculators.get(name)
        lesson_doc = f"notebooks/{calc.lesson}"
        if "no-lesson-link" not in self.options and self.env.docname != lesson_doc:
            result.append(self._lesson_link(lesson_doc, calc.lesson))
        return result

    def _lesson_link(self, lesson_doc: str, slug: str) -> nodes.paragraph:
        para = nodes.paragraph(classes=["gl-calc-lesson"])
        para += nodes.Text("Explained in ")
        if lesson_doc in self.env.found_docs:
            ref = addnodes.pending_xref(
                "", refdomain="std", reftype="doc", reftarget=f"/{lesson_doc}",
                refexplicit=False, refwarn=True, refdoc=self.env.docname,
            )
            ref += nodes.literal("", slug)
            para += ref
        else:  # the lesson is not on the site yet: name it, link nothing
            para += nodes.Text(f"the lesson {slug} (not yet published)")
        para += nodes.Text(".")
        return para


def _plain_number(value: float, decimals: int = 2) -> str:
    text = f"{value:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _table(caption: str, header: list[str], rows: Iterable[list[nodes.Node | str]],
           classes: Iterable[str] = ()) -> nodes.table:
    table = nodes.table(classes=["gl-gpu-table", *classes])
    table += nodes.title(text=caption)
    group = nodes.tgroup(cols=len(header))
    table += group
    for _ in header:
        group += nodes.colspec(colwidth=10)
    head = nodes.thead()
    group += head
    header_row = nodes.row()
    for title in header:
        header_row += nodes.entry("", nodes.paragraph(text=title))
    head += header_row
    body = nodes.tbody()
    group += body
    for cells in rows:
        row = nodes.row()
        for cell in cells:
            para = nodes.paragraph()
            para += nodes.Text(cell) if isinstance(cell, str) else cell
            row += nodes.entry("", para)
        body += row
    return table


#: Column titles of the "other rates" of :attr:`gpulesson.hardware.GPUSpec.other_flops`.
OTHER_RATES = {
    "fp64_vector": "FP64 on vector units",
    "fp16_fp16_accumulate": "FP16 with FP16 accumulation",
    "fp8_fp16_accumulate": "FP8 with FP16 accumulation",
}


def _source_id(key: str, prefix: str = "gpu-source") -> str:
    return f"{prefix}-{nodes.make_id(key)}"


def _role(spec: Any) -> str:
    """The GPU's place in the course: the teaching baseline, the newest in the table."""
    if spec.is_teaching_baseline:
        return "teaching baseline"
    return "newest in the table" if spec.is_current_generation else ""


class GPUTableDirective(SphinxDirective):
    """The GPU specification tables, generated from :mod:`gpulesson.hardware` at build time."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        from gpulesson import hardware
        from gpulesson.hardware import _cite  # the same citation text the specs carry

        for path in _package_sources():  # re-read this page when the data changes
            self.env.note_dependency(path)
        by_citation = {_cite(hardware.SOURCES, key): key for key in hardware.SOURCES}
        numbers = {key: i for i, key in enumerate(hardware.SOURCES, start=1)}
        gpus = list(hardware.GPUS.values())
        dtypes = list(hardware.DTYPES)
        missing = "—"

        def rate(value: float | None) -> str:
            return missing if value is None else _plain_number(value / 1e12)

        def source_links(spec: hardware.GPUSpec) -> nodes.inline:
            keys: list[str] = []
            for citation in spec.figure_sources.values():
                key = by_citation.get(citation)
                if key and key not in keys:
                    keys.append(key)
            holder = nodes.inline()
            for i, key in enumerate(sorted(keys, key=numbers.__getitem__)):
                if i:
                    holder += nodes.Text(" ")
                number = numbers[key]
                holder += nodes.reference("", f"[{number}]", refuri=f"#{_source_id(key)}",
                                          reftitle=hardware.SOURCES[key]["title"])
            return holder

        def gb(value: float | None, decimals: int = 2) -> str:
            return missing if value is None else _plain_number(value / 1e9, decimals)

        memory = _table(
            "Memory, bandwidth and power (GB = 10⁹ bytes; MiB = 2²⁰ bytes)",
            ["GPU", "Role", "Architecture (year)", "Memory (GB, datasheet)",
             "Reported (MiB)", f"Usable (GB, {hardware.USABLE_MEMORY_FRACTION:g} of the "
             "reported or datasheet total)", "Memory type", "Bandwidth (TB/s)",
             "Board power (W)", "Sources"],
            ([g.name, _role(g), f"{g.vendor} {g.architecture} ({g.released})",
              _plain_number(g.memory_bytes / 1e9),
              missing if g.reported_memory_bytes is None
              else _plain_number(g.reported_memory_bytes / 2**20, 0),
              gb(g.usable_memory(), 1), g.memory_type,
              _plain_number(g.bandwidth / 1e12, 3), _plain_number(g.tdp_watts),
              source_links(g)] for g in gpus),
        )
        links = _table(
            "Links between GPUs and to the network",
            ["GPU", "Link", "GPU-to-GPU per GPU, both directions (GB/s)",
             "GPUs in one NVLink or Infinity Fabric domain",
             "Typical scale-out NIC per GPU, one direction (GB/s)"],
            ([g.name, g.interconnect, _plain_number(g.interconnect_bandwidth / 1e9),
              str(g.nvlink_domain), gb(g.scaleout_bandwidth, 2)]
             for g in gpus),
        )
        dense = _table(
            "Dense peak rates in TFLOP/s (INT8 in TOPS): the figures for MFU and rooflines",
            ["GPU", *(d.upper() for d in dtypes), "BF16 ridge point (FLOP/B)"],
            ([g.name, *(rate(g.peak_flops.get(d)) for d in dtypes),
              _plain_number(g.ridge_point("bf16"), 0) if "bf16" in g.peak_flops else missing]
             for g in gpus),
        )
        sparse_gpus = [g for g in gpus if g.sparse_flops]
        sparse_types = [d for d in dtypes if any(d in g.sparse_flops for g in sparse_gpus)]
        sparse = _table(
            "2:4 structured-sparsity peak rates in TFLOP/s (INT8 in TOPS): the figures "
            "datasheets headline, twice the dense rate (four thirds of it for Blackwell "
            "Ultra FP4); never use them for MFU",
            ["GPU", *(d.upper() for d in sparse_types)],
            ([g.name, *(rate(g.sparse_flops.get(d)) for d in sparse_types)]
             for g in sparse_gpus),
        )
        other_keys = sorted({k for g in gpus for k in g.other_flops})
        other = _table(
            "Other rates in TFLOP/s",
            ["GPU", *(OTHER_RATES.get(k, k.upper()) for k in other_keys)],
            ([g.name, *(rate(g.other_flops.get(k)) for k in other_keys)]
             for g in gpus if g.other_flops),
        )
        price_table, price_sources = _price_nodes(missing)
        notes = nodes.definition_list(classes=["gl-gpu-notes"])
        for g in gpus:
            if g.notes:
                item = nodes.definition_list_item()
                item += nodes.term(text=g.name)
                item += nodes.definition("", nodes.paragraph(text=g.notes))
                notes += item
        sources = nodes.enumerated_list(classes=["gl-gpu-sources"], enumtype="arabic")
        for key, src in hardware.SOURCES.items():
            para = nodes.paragraph(ids=[_source_id(key)])
            para += nodes.Text(f"{src['title']}, {src['publisher']}, {src['date']}. ")
            para += nodes.reference("", src["url"], refuri=src["url"])
            sources += nodes.list_item("", para)
        section_notes = nodes.rubric(text="Notes")
        section_sources = nodes.rubric(text="Sources")
        section_prices = nodes.rubric(text="Price sources")
        return [memory, dense, sparse, other, links, price_table, section_notes, notes,
                section_sources, sources, section_prices, price_sources]


def _price_nodes(missing: str) -> tuple[nodes.table, nodes.enumerated_list]:
    """The dated cloud prices of :mod:`gpulesson.prices` (current quotes, the default of
    each GPU marked) and the list of their sources."""
    from gpulesson import hardware, prices

    numbers = {key: i for i, key in enumerate(prices.SOURCES, start=1)}
    by_title = {f"{s['title']}, {s['publisher']}, {s['date']}": key
                for key, s in prices.SOURCES.items()}
    rows = []
    for name in hardware.GPUS:
        current = prices.current_quotes(name)
        default = prices.default_price(name) if current else None
        for q in current:
            key = by_title[q.source]
            link = nodes.reference("", f"[{numbers[key]}]",
                                   refuri=f"#{_source_id(key, 'price-source')}",
                                   reftitle=prices.SOURCES[key]["title"])
            rows.append([name, q.provider, q.kind, q.instance, str(q.gpus),
                         f"${q.usd_per_gpu_hour:,.2f}",
                         "default" if q is default else "", q.date, link])
        if not current:
            rows.append([name, missing, missing, missing, missing, missing,
                         "no quote found", missing, missing])
    table = _table(
        "Cloud prices per GPU-hour, on demand (USD): hyperscalers (AWS, Azure, OCI) and "
        "specialist GPU clouds; the calculators default to the row marked default",
        ["GPU", "Provider", "Kind", "Instance", "GPUs", "Per GPU-hour", "Default", "Read on",
         "Source"],
        rows, classes=["gl-price-table"])
    listing = nodes.enumerated_list(classes=["gl-price-sources"], enumtype="arabic")
    for key, src in prices.SOURCES.items():
        para = nodes.paragraph(ids=[_source_id(key, "price-source")])
        para += nodes.Text(f"{src['title']}, {src['publisher']}, {src['date']}. ")
        para += nodes.reference("", src["url"], refuri=src["url"])
        listing += nodes.list_item("", para)
    return table, listing


# ---------------------------------------------------------------------------------------
# Events

_CALC_ATTR = re.compile(r'class="gl-calculator"[^>]*\bdata-calculator="([^"]+)"')


def page_calculators(body: str) -> list[str]:
    """The registry calculators a page's HTML body holds (static markup), in order."""
    from gpulesson import calculators

    return [name for name in _CALC_ATTR.findall(body) if name in calculators.CALCULATORS]


def _on_config_inited(app: Sphinx, config: Any) -> None:
    # A config value with rebuild="html": when the vendored Pyodide changes version,
    # Sphinx rewrites every page, so no page keeps pointing at a folder that is gone.
    manifest = pyodide_manifest(app)
    config.gl_pyodide_path = str(manifest["path"]) if manifest else ""
    config.gl_pyodide_snapshot = str((manifest or {}).get("snapshot") or "")


def pyodide_attributes(app: Sphinx) -> dict[str, str]:
    """The loader tag's attributes that point the Python worker at the vendored Pyodide:
    its folder, and its start-up snapshot when ``make site-assets`` made one."""
    attributes = {"data-pyodide": app.config.gl_pyodide_path}
    if app.config.gl_pyodide_snapshot:
        attributes["data-pyodide-snapshot"] = app.config.gl_pyodide_snapshot
    return attributes


def _on_builder_inited(app: Sphinx) -> None:
    if app.builder.format == "html":
        app.env.gl_pack = compiled_pack(app, make_pack())  # type: ignore[attr-defined]


def pack_url(pack: dict[str, Any]) -> str:
    """Site-relative URL of the pack; its hash in the query, so a browser never keeps a
    stale copy (the file name is stable, so pages of an incremental build stay valid); the
    Python its byte code is for, when it has some."""
    version = f"{pack['sha256'][:16]}"
    if pack.get("bytecode"):  # a new Python, new byte code: a new URL
        version += f"-py{pack['python']}"
    return f"{PACK_PATH}?v={version}"


#: myst-nb labels the toggle of a hidden cell "Toggle hidden content" while it shows "Show
#: code cell source": a screen reader and a speech-input user then disagree on its name
#: (WCAG 2.5.3, label in name). Without the label the visible text names it.
_MYSTNB_SUMMARY = '<summary aria-label="Toggle hidden content">'
#: docutils marks bibliography entries (in a role="list") with DPUB-ARIA's doc-biblioentry,
#: a role ARIA has deprecated and that is no list item, so the list has no valid children
#: for assistive technology (axe-core: aria-required-children, critical). A list item is
#: what each entry is.
_BIBLIOENTRY = 'role="doc-biblioentry"'


def _on_html_page_context(app: Sphinx, pagename: str, templatename: str,
                          context: dict[str, Any], doctree: Any) -> None:
    body = context.get("body") or ""
    if _MYSTNB_SUMMARY in body:
        body = context["body"] = body.replace(_MYSTNB_SUMMARY, "<summary>")
    if _BIBLIOENTRY in body:
        body = context["body"] = body.replace(_BIBLIOENTRY, 'role="listitem"')
    if "gl-calculator" not in body or not page_calculators(body):
        return
    if not app.config.gl_pyodide_path:
        raise ExtensionError(
            f"{pagename} holds a calculator but the vendored Pyodide is missing "
            "(_vendor/_pyodide/manifest.json): run `make site-assets` (make book does)"
        )
    app.add_js_file(
        LOADER,
        loading_method="defer",
        **{
            **pyodide_attributes(app),
            "data-pack": pack_url(app.env.gl_pack),  # type: ignore[attr-defined]
            "data-timeout": str(app.config.gl_calculator_timeout_ms),
        },
    )


def publish(app: Sphinx, pack_path: str, pack: dict[str, Any], scripts: Iterable[str],
            base: dict[str, Any] | None = None) -> None:
    """Write ``pack`` at ``pack_path`` (site-relative; :func:`pack_archive`, less what
    ``base`` holds) and copy ``scripts`` (from
    ``scripts/site_js/``) into the site's :data:`COURSE_DIR`: what a loader added by
    :func:`add_loader` fetches."""
    out = Path(app.outdir)
    (out / COURSE_DIR).mkdir(parents=True, exist_ok=True)
    (out / pack_path).write_bytes(pack_archive(pack, base))
    for name in scripts:
        shutil.copy2(SITE_JS / name, out / COURSE_DIR / name)


def _on_build_finished(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    publish(app, PACK_PATH, app.env.gl_pack, SCRIPTS)  # type: ignore[attr-defined]


#: What each of the course's extensions tells Sphinx: it reads and writes in parallel safely.
METADATA = {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}


def connect(app: Sphinx, handlers: Mapping[str, Callable[..., Any]]) -> dict[str, Any]:
    """Connect each event of ``handlers`` to its handler, in order; the metadata ``setup``
    returns (:data:`METADATA`)."""
    for event, handler in handlers.items():
        app.connect(event, handler)
    return dict(METADATA)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("gl_calculator_timeout_ms", DEFAULT_TIMEOUT_MS, "html")
    app.add_config_value("gl_pyodide_path", "", "html")
    app.add_config_value("gl_pyodide_snapshot", "", "html")
    app.add_directive("calculator", CalculatorDirective)
    app.add_directive("gpu-table", GPUTableDirective)
    return connect(app, {"config-inited": _on_config_inited,
                         "builder-inited": _on_builder_inited,
                         "html-page-context": _on_html_page_context,
                         "build-finished": _on_build_finished})
