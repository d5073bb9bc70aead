"""The scripts that vendor, serve and publish the site, checked without building it.

``scripts/vendor_pyodide.py`` copies the pinned Pyodide core into a versioned folder and
stops with Node's message when the start-up snapshot cannot be made; the course package's
byte code is compiled by that Pyodide (``scripts/pyodide_compile.mjs``), and a .pyc that
Pyodide would not use stops the build;
``make serve`` (``scripts/serve_site.py``, also the browser tests' server) sends ``.mjs``
and ``.wasm`` with the types Pyodide needs; the deploy workflow builds the book alone, then
publishes it only once it has passed ``make test``.
"""

from __future__ import annotations

import base64
import functools
import json
import shutil
import urllib.request
import zipfile
from pathlib import Path

import pytest
import yaml

from .building import REPO_ROOT, script_module


def test_vendor_pyodide_copies_the_pinned_core_into_a_versioned_folder(tmp_path: Path) -> None:
    vendor = script_module("vendor_pyodide")
    lock = json.loads((REPO_ROOT / "package-lock.json").read_text(encoding="utf-8"))
    pinned = lock["packages"]["node_modules/pyodide"]["version"]
    package = json.loads((REPO_ROOT / "package.json").read_text(encoding="utf-8"))
    assert package["dependencies"]["pyodide"] == pinned, "pyodide must be pinned exactly"
    modules = tmp_path / "node_modules" / "pyodide"
    modules.mkdir(parents=True)
    for name in vendor.CORE_FILES:
        content = json.dumps({"version": pinned}) if name == "package.json" else name
        (modules / name).write_text(content, encoding="utf-8")
    (tmp_path / "_vendor" / "_pyodide" / "0.0.1").mkdir(parents=True)  # an older version
    manifest = vendor.vendor(tmp_path / "node_modules", tmp_path / "_vendor", snapshot=False)
    assert manifest["path"] == f"_pyodide/{pinned}/" and manifest["snapshot"] is None
    folder = tmp_path / "_vendor" / "_pyodide"
    assert sorted(p.name for p in folder.iterdir()) == sorted([pinned, "manifest.json"])
    assert {p.name for p in (folder / pinned).iterdir()} == set(vendor.CORE_FILES)
    (modules / "pyodide.asm.wasm").unlink()
    with pytest.raises(FileNotFoundError, match="pyodide.asm.wasm"):
        vendor.vendor(tmp_path / "node_modules", tmp_path / "_vendor", snapshot=False)


def test_a_pyodide_that_cannot_start_makes_no_snapshot_and_says_why(tmp_path: Path) -> None:
    """``make site-assets`` stops with Node's own message when the snapshot fails (the
    built site's snapshot is checked by test_built_site.py and, live, by the calculators'
    tests)."""
    vendor = script_module("vendor_pyodide")
    (tmp_path / "pyodide.mjs").write_text("throw new Error('not a real Pyodide');\n",
                                          encoding="utf-8")
    with pytest.raises(RuntimeError, match="not a real Pyodide"):
        vendor.make_snapshot(tmp_path)
    assert not (tmp_path / vendor.SNAPSHOT).exists()


def _vendored_pyodide() -> Path:
    manifest = REPO_ROOT / "_vendor" / "_pyodide" / "manifest.json"
    if not manifest.is_file() or not shutil.which("node"):
        pytest.skip("needs Node and the vendored Pyodide (make site-assets)")
    return manifest.parent.parent / json.loads(manifest.read_text(encoding="utf-8"))["path"]


def test_the_pack_is_compiled_by_the_vendored_pyodide_and_imports_from_it() -> None:
    """``scripts/pyodide_compile.mjs`` gives one checked hash-based .pyc (PEP 552, flags 3)
    per module of the pack, for Pyodide's Python, and Pyodide imports the entry module
    from them without compiling any source (the script checks that itself)."""
    ext = script_module("gl_calculators")
    pack = {"entry": "demo.main", "files": {
        "demo/__init__.py": "",
        "demo/main.py": "from . import helper\nVALUE = helper.double(21)\n",
        "demo/helper.py": "def double(x):\n    return 2 * x\n",
        "demo/data/table.csv": "a,b\n"}}
    compiled = ext.with_bytecode(pack, _vendored_pyodide())
    assert compiled["files"] == pack["files"] and compiled["python"].startswith("3.")
    tag = "cpython-" + "".join(compiled["python"].split(".")[:2])
    assert set(compiled["bytecode"]) == {
        f"demo/__pycache__/{name}.{tag}.pyc" for name in ("__init__", "main", "helper")}
    headers = {base64.b64decode(code)[:8] for code in compiled["bytecode"].values()}
    assert len(headers) == 1 and headers.pop()[4:8] == (3).to_bytes(4, "little")


def test_the_published_pack_is_a_zip_of_its_files_and_binary_byte_code(tmp_path: Path) -> None:
    """The site's pack (``gl_calculators.pack_archive``): the sources, the .pyc files as
    bytes (not base64) and an index with the rest of the pack (its sha256 among it); the
    same bytes for the same pack; unpacked as Pyodide's ``unpackArchive`` does (with
    ``shutil.unpack_archive``) into the files the worker imports; read back whole."""
    ext = script_module("gl_calculators")
    pyc = b"\xcb\r\r\n\x03\x00\x00\x00" + bytes(range(256))
    pack = {"version": "5", "entry": "demo.main", "sha256": "ab" * 32, "python": "3.14.2",
            "left_out": {"demo.plot": ["numpy"]},
            "files": {"demo/__init__.py": "", "demo/main.py": "VALUE = 'é'\n",
                      "demo/data/table.csv": "a,b\n"},
            "bytecode": {"demo/__pycache__/main.cpython-314.pyc":
                         base64.b64encode(pyc).decode("ascii")}}
    archive = ext.pack_archive(pack)
    shuffled = {**dict(reversed(pack.items())), "files": dict(reversed(pack["files"].items()))}
    assert ext.pack_archive(shuffled) == archive
    path = tmp_path / "pack.zip"
    path.write_bytes(archive)
    assert ext.read_pack(path) == pack
    with zipfile.ZipFile(path) as opened:
        assert opened.read("demo/__pycache__/main.cpython-314.pyc") == pyc
        index = json.loads(opened.read(ext.PACK_INDEX))
    assert index["sha256"] == pack["sha256"] and index["entry"] == "demo.main"
    assert index["bytecode"] == ["demo/__pycache__/main.cpython-314.pyc"]
    shutil.unpack_archive(path, tmp_path / "site-packages", "zip")
    unpacked = tmp_path / "site-packages" / "demo"
    assert (unpacked / "main.py").read_bytes() == "VALUE = 'é'\n".encode()
    assert (unpacked / "__pycache__" / "main.cpython-314.pyc").read_bytes() == pyc
    sources_only = {key: value for key, value in pack.items() if key != "bytecode"}
    path.write_bytes(ext.pack_archive(sources_only))
    assert ext.read_pack(path) == sources_only
    with pytest.raises(ValueError, match=ext.PACK_INDEX):
        ext.pack_archive({**pack, "files": {ext.PACK_INDEX: "{}"}})


def test_a_pack_on_top_of_another_holds_only_what_that_one_lacks(tmp_path: Path) -> None:
    """The exercises' pages unpack the calculators' pack, then an archive of the rest
    (``pack_archive(pack, base)``): it leaves out the files ``base`` has with the same
    text and their byte code, keeps a file whose text differs, and its index still lists
    everything; the two read back (in order) as the whole pack, and one alone does not."""
    ext = script_module("gl_calculators")

    def pyc(module: str) -> str:
        return f"demo/__pycache__/{module}.cpython-314.pyc"

    def code(text: str) -> str:
        return base64.b64encode(text.encode()).decode("ascii")

    base = {"version": "5", "entry": "demo.calc", "sha256": "aa" * 32, "python": "3.14.2",
            "files": {"demo/__init__.py": "", "demo/calc.py": "A = 1\n",
                      "demo/shared.py": "B = 2\n"},
            "bytecode": {pyc(m): code(m) for m in ("__init__", "calc", "shared")}}
    pack = {"version": "5", "entry": "demo.ex", "sha256": "bb" * 32, "python": "3.14.2",
            "files": {"demo/__init__.py": "# changed\n", "demo/shared.py": "B = 2\n",
                      "demo/ex.py": "C = 3\n", "numba/__init__.py": ""},
            "bytecode": {**{pyc(m): code(m + "!") for m in ("__init__", "shared", "ex")},
                         "numba/__pycache__/__init__.cpython-314.pyc": code("numba")}}
    (tmp_path / "base.zip").write_bytes(ext.pack_archive(base))
    (tmp_path / "rest.zip").write_bytes(ext.pack_archive(pack, base))
    with zipfile.ZipFile(tmp_path / "rest.zip") as opened:
        assert sorted(opened.namelist()) == sorted([
            ext.PACK_INDEX, "demo/__init__.py", "demo/ex.py", "numba/__init__.py",
            pyc("__init__"), pyc("ex"), "numba/__pycache__/__init__.cpython-314.pyc"])
        index = json.loads(opened.read(ext.PACK_INDEX))
    assert index["files"] == sorted(pack["files"]) and index["sha256"] == pack["sha256"]
    assert len(index["bytecode"]) == 4
    whole = ext.read_pack(tmp_path / "base.zip", tmp_path / "rest.zip")
    assert whole["files"] == pack["files"]
    assert whole["bytecode"][pyc("shared")] == code("shared")  # the base's: same source
    assert whole["bytecode"][pyc("ex")] == code("ex!")
    with pytest.raises(KeyError, match="shared"):
        ext.read_pack(tmp_path / "rest.zip")


def test_pack_byte_code_that_pyodide_would_not_use_stops_the_build(tmp_path: Path) -> None:
    """Python silently compiles a module whose .pyc does not match: the build must not."""
    ext = script_module("gl_calculators")
    fake = tmp_path / "node"  # a compile script's answer where one module was recompiled
    fake.write_text("#!/bin/sh\ncat > /dev/null\necho '" + json.dumps(
        {"tag": "cpython-314", "python": "3.14.0", "bytecode": {},
         "recompiled": ["demo/main.py"]}) + "'\n", encoding="utf-8")
    fake.chmod(0o755)
    with pytest.raises(ext.ExtensionError, match="demo/main.py from source"):
        ext.with_bytecode({"entry": "demo.main", "files": {"demo/main.py": ""}}, tmp_path,
                          node=str(fake))
    fake.write_text("#!/bin/sh\necho 'SyntaxError: nope' >&2\nexit 1\n", encoding="utf-8")
    with pytest.raises(ext.ExtensionError, match="SyntaxError: nope"):
        ext.with_bytecode({"entry": "demo.main", "files": {"demo/main.py": ""}}, tmp_path,
                          node=str(fake))


def test_make_serve_sends_the_types_pyodide_needs(tmp_path: Path) -> None:
    serve_site = script_module("serve_site")
    for name in ("a.mjs", "b.wasm", "c.js", "d.json", "index.html"):
        (tmp_path / name).write_text("x", encoding="utf-8")
    handler = functools.partial(serve_site.SiteHandler, directory=str(tmp_path))
    handler.log_message = lambda *args: None  # type: ignore[method-assign]
    with serve_site.in_background(serve_site.SiteHTTPServer(("127.0.0.1", 0), handler)) as server:
        def kind(name: str) -> str:
            url = f"http://127.0.0.1:{server.server_address[1]}/{name}"
            with urllib.request.urlopen(url, timeout=10) as response:
                return response.headers.get_content_type()

        assert kind("a.mjs") == "text/javascript"
        assert kind("b.wasm") == "application/wasm"
        assert kind("c.js") == "text/javascript"
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    assert "scripts/serve_site.py" in makefile, "make serve must use the typed server"


def test_make_serve_is_quiet_when_a_reader_leaves_mid_download(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A browser that closes a connection mid-reply (a reader leaving a page while Pyodide
    loads) is no error to print; any other failure of a request still is."""
    server = script_module("serve_site").SiteHTTPServer(("127.0.0.1", 0), None)
    try:
        for error in (ConnectionResetError(104, "reset"), BrokenPipeError(32, "pipe"),
                      ValueError("a real fault")):
            try:
                raise error
            except Exception:
                server.handle_error(None, ("127.0.0.1", 50000))
    finally:
        server.server_close()
    printed = capsys.readouterr().err
    assert printed.count("Exception occurred during processing of request") == 1, printed
    assert "a real fault" in printed and "reset" not in printed and "pipe" not in printed


def test_deploy_workflow_tests_then_publishes_the_built_site() -> None:
    workflow = yaml.safe_load((REPO_ROOT / ".github" / "workflows" / "deploy.yml").read_text(
        encoding="utf-8"))
    steps = workflow["jobs"]["build"]["steps"]
    runs = [step.get("run", "") for step in steps]
    uses = [step.get("uses", "") for step in steps]
    test_at = next(i for i, run in enumerate(runs) if run.startswith("make test"))
    upload_at = next(i for i, use in enumerate(uses) if use.startswith(
        "actions/upload-pages-artifact"))
    assert test_at < upload_at, "publish only what passed make test"
    # the published measurements come from a build with the machine to itself: in make test
    # the notebooks would share the two cores with the other worker's tests
    book_at = next(i for i, run in enumerate(runs) if run.strip() == "make book")
    assert book_at < test_at, "build the book alone before make test"
    assert steps[test_at]["env"]["GL_SITE_DIR"] == "_build/html", "test that very build"
    assert steps[upload_at]["with"]["path"] == "_build/html"
    deploy = workflow["jobs"]["deploy"]
    assert deploy["needs"] == "build"
    assert deploy["steps"][-1]["uses"].startswith("actions/deploy-pages")


def test_book_cache_is_cleared_when_what_the_notebooks_compute_from_changes(
        tmp_path: Path) -> None:
    """scripts/book_cache.py (make book, and a test session's build, call it first): the
    execution cache survives a build with the same gpulesson and tests/data, and goes when
    a file there changes; byte code does not count."""
    cache = script_module("book_cache")
    (tmp_path / "gpulesson" / "__pycache__").mkdir(parents=True)
    (tmp_path / "tests" / "data").mkdir(parents=True)
    (tmp_path / "gpulesson" / "flops.py").write_text("PEAK = 1\n", encoding="utf-8")
    (tmp_path / "tests" / "data" / "runs.json").write_text("[]\n", encoding="utf-8")
    executed = tmp_path / cache.CACHE / "executed"
    read = tmp_path / cache.DOCTREES  # Sphinx re-reads only what it has no record of

    def fill() -> None:
        for folder in (executed, read):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "lesson").write_text("{}", encoding="utf-8")

    fill()
    assert cache.refresh(tmp_path) is True and not executed.exists() and not read.exists()
    fill()  # the build after it
    assert cache.refresh(tmp_path) is False and executed.exists() and read.exists()
    (tmp_path / "gpulesson" / "__pycache__" / "flops.cpython-311.pyc").write_bytes(b"\0")
    assert cache.refresh(tmp_path) is False and executed.exists()
    (tmp_path / "gpulesson" / "flops.py").write_text("PEAK = 2\n", encoding="utf-8")
    assert cache.refresh(tmp_path) is True and not executed.exists() and not read.exists()
    fill()
    (tmp_path / "tests" / "data" / "runs.json").write_text("[1]\n", encoding="utf-8")
    assert cache.refresh(tmp_path) is True and not executed.exists()
    assert cache.refresh(tmp_path) is False
