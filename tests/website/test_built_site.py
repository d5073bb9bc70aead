"""The built site holds what its calculators need, and the reference pages this issue adds.

Reads the built site (the session fixture ``site_dir``: ``make book``'s build, or
``GL_SITE_DIR``) without a browser: the vendored Pyodide in its versioned folder, the
package pack, the loader on exactly the pages with a calculator, every registry calculator
on the calculators page with a link to its lesson, the GPU tables generated from the data
(dense and sparse apart, every source listed), the instructors page. Also, without a
build: ``scripts/vendor_pyodide.py`` and the MIME types of ``make serve``.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import json
import re
import threading
import urllib.request
from html import unescape
from pathlib import Path

import pytest
import yaml

from gpulesson import calculators, hardware

REPO = Path(__file__).resolve().parents[2]
LOADER = "_lib/course/calculators.js"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pages(site_dir: Path) -> list[Path]:
    return [p for p in sorted(site_dir.rglob("*.html"))
            if not {"_lib", "_static", "_pyodide", "_sources"} & set(p.parts)]


def _text(html: str) -> str:
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))


# ---------------------------------------------------------------------------------------
# Without a build


def test_vendor_pyodide_copies_the_pinned_core_into_a_versioned_folder(tmp_path: Path) -> None:
    vendor = _load("vendor_pyodide")
    lock = json.loads((REPO / "package-lock.json").read_text(encoding="utf-8"))
    pinned = lock["packages"]["node_modules/pyodide"]["version"]
    package = json.loads((REPO / "package.json").read_text(encoding="utf-8"))
    assert package["dependencies"]["pyodide"] == pinned, "pyodide must be pinned exactly"
    modules = tmp_path / "node_modules" / "pyodide"
    modules.mkdir(parents=True)
    for name in vendor.CORE_FILES:
        content = json.dumps({"version": pinned}) if name == "package.json" else name
        (modules / name).write_text(content, encoding="utf-8")
    (tmp_path / "_vendor" / "_pyodide" / "0.0.1").mkdir(parents=True)  # an older version
    manifest = vendor.vendor(tmp_path / "node_modules", tmp_path / "_vendor")
    assert manifest["path"] == f"_pyodide/{pinned}/"
    folder = tmp_path / "_vendor" / "_pyodide"
    assert sorted(p.name for p in folder.iterdir()) == sorted([pinned, "manifest.json"])
    assert {p.name for p in (folder / pinned).iterdir()} == set(vendor.CORE_FILES)
    (modules / "pyodide.asm.wasm").unlink()
    with pytest.raises(FileNotFoundError, match="pyodide.asm.wasm"):
        vendor.vendor(tmp_path / "node_modules", tmp_path / "_vendor")


def test_make_serve_sends_the_types_pyodide_needs(tmp_path: Path) -> None:
    serve_site = _load("serve_site")
    for name in ("a.mjs", "b.wasm", "c.js", "d.json", "index.html"):
        (tmp_path / name).write_text("x", encoding="utf-8")
    handler = functools.partial(serve_site.SiteHandler, directory=str(tmp_path))
    handler.log_message = lambda *args: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        def kind(name: str) -> str:
            url = f"http://127.0.0.1:{server.server_address[1]}/{name}"
            with urllib.request.urlopen(url, timeout=10) as response:
                return response.headers.get_content_type()

        assert kind("a.mjs") == "text/javascript"
        assert kind("b.wasm") == "application/wasm"
        assert kind("c.js") == "text/javascript"
    finally:
        server.shutdown()
        server.server_close()
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "scripts/serve_site.py" in makefile, "make serve must use the typed server"


def test_deploy_workflow_tests_then_publishes_the_built_site() -> None:
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "deploy.yml").read_text(
        encoding="utf-8"))
    steps = workflow["jobs"]["build"]["steps"]
    runs = [step.get("run", "") for step in steps]
    uses = [step.get("uses", "") for step in steps]
    test_at = next(i for i, run in enumerate(runs) if run.startswith("make test"))
    upload_at = next(i for i, use in enumerate(uses) if use.startswith(
        "actions/upload-pages-artifact"))
    assert test_at < upload_at, "publish only what passed make test"
    assert steps[upload_at]["with"]["path"] == "_build/html"
    deploy = workflow["jobs"]["deploy"]
    assert deploy["needs"] == "build"
    assert deploy["steps"][-1]["uses"].startswith("actions/deploy-pages")


def test_reference_pages_are_in_the_toc() -> None:
    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    reference = next(part for part in toc["parts"] if part["caption"] == "Reference")
    files = [chapter["file"] for chapter in reference["chapters"]]
    for page in ("book/calculators", "book/hardware", "book/instructors"):
        assert page in files


# ---------------------------------------------------------------------------------------
# The built site


@pytest.mark.book
def test_pyodide_and_the_pack_are_published(site_dir: Path) -> None:
    vendor = _load("vendor_pyodide")
    manifest = json.loads((site_dir / "_pyodide" / "manifest.json").read_text(encoding="utf-8"))
    folder = site_dir / manifest["path"]
    assert folder.name == manifest["version"]
    for name in vendor.CORE_FILES:
        assert (folder / name).is_file(), f"{name} was not published"
    assert not (site_dir / "_static" / "_pyodide").exists(), "never under _static"
    ext = _load("gl_calculators")
    pack = json.loads((site_dir / ext.PACK_PATH).read_text(encoding="utf-8"))
    assert pack["files"] == ext.make_pack()["files"], (
        "the published pack differs from the package: rebuild the site")
    for script in ext.SCRIPTS:
        assert (site_dir / ext.COURSE_DIR / script).is_file()


@pytest.mark.book
def test_the_loader_is_on_exactly_the_pages_with_a_calculator(site_dir: Path) -> None:
    with_calculator, without = [], []
    for page in _pages(site_dir):
        html = page.read_text(encoding="utf-8")
        has_calc = re.search(r'class="gl-calculator"[^>]*data-calculator="(\w+)"', html)
        has_registry_calc = has_calc and has_calc.group(1) in calculators.CALCULATORS
        loads = LOADER in html
        assert "_pyodide/" not in html.replace('data-pyodide="_pyodide/', ""), (
            f"{page}: Pyodide is referenced outside the loader's attribute")
        assert bool(has_registry_calc) == loads, (
            f"{page.relative_to(site_dir)}: calculator={bool(has_registry_calc)}, "
            f"loader={loads}")
        (with_calculator if loads else without).append(page)
    assert site_dir / "book" / "calculators.html" in with_calculator
    assert site_dir / "book" / "intro.html" in without
    js = [p for p in (site_dir / "_static").rglob("*.js") if "calculators" in p.name]
    assert not js, f"calculator code under _static (loaded on every page): {js}"


@pytest.mark.book
def test_calculators_page_has_every_calculator_and_its_lesson(site_dir: Path) -> None:
    html = (site_dir / "book" / "calculators.html").read_text(encoding="utf-8")
    names = re.findall(r'class="gl-calculator"[^>]*data-calculator="(\w+)"', html)
    assert sorted(names) == sorted(calculators.CALCULATORS)
    built = {p.stem for p in (site_dir / "notebooks").glob("*.html")}
    for name in names:
        lesson = calculators.get(name).lesson
        block = html.split(f'data-calculator="{name}"', 1)[1].split('class="gl-calculator"')[0]
        if lesson in built:
            assert f'href="../notebooks/{lesson}.html"' in block, f"{name}: no lesson link"
        else:
            assert f"the lesson {lesson} (not yet published)" in block


@pytest.mark.book
def test_hardware_page_is_generated_from_the_data(site_dir: Path) -> None:
    """Dense and sparse in separate tables: the H100 SXM's dense BF16 is 989.4 TFLOP/s and
    its 2:4-sparse figure 1,978.9 (NVIDIA H100 whitepaper, 2022)."""
    html = (site_dir / "book" / "hardware.html").read_text(encoding="utf-8")
    tables = re.findall(r"<table.*?</table>", html, flags=re.S)
    captions = [_text(t.split("</caption>")[0]) for t in tables]
    dense = tables[next(i for i, c in enumerate(captions) if "Dense" in c)]
    sparse = tables[next(i for i, c in enumerate(captions) if "sparsity" in c)]

    def cell(table: str, gpu: str, column: str) -> str:
        rows = [[_text(c).strip() for c in re.findall(r"<t[hd].*?</t[hd]>", r, flags=re.S)]
                for r in re.findall(r"<tr.*?</tr>", table, flags=re.S)]
        return next(r for r in rows if r[0] == gpu)[rows[0].index(column)]

    assert cell(dense, "H100 SXM", "BF16") == "989.4"
    assert cell(sparse, "H100 SXM", "BF16") == "1,978.9"
    assert cell(dense, "V100 SXM", "BF16") == "—", "no BF16 on a V100"
    text = _text(html)
    for gpu in hardware.GPUS:
        assert gpu in text
    for source in hardware.SOURCES.values():
        assert source["url"] in html and source["title"] in text


@pytest.mark.book
def test_instructors_page_says_how_to_export_and_run(site_dir: Path) -> None:
    text = _text((site_dir / "book" / "instructors.html").read_text(encoding="utf-8"))
    for needle in ("make student", "python -m gpulesson.exercises export", "--variant",
                   "answer_key", "make gpu-check", "Binder", "Colab", "JupyterHub"):
        assert needle in text, f"instructors page lacks {needle!r}"


@pytest.mark.book
def test_every_lesson_has_launch_buttons_a_download_glossary_links_and_citations(
        site_dir: Path) -> None:
    lessons = sorted((site_dir / "notebooks").glob("*.html"))
    assert lessons, "no lesson was built"
    missing: list[str] = []
    for page in lessons:
        html = page.read_text(encoding="utf-8")
        slug = page.stem
        wanted = {
            "Binder": "mybinder.org/v2/gh/",
            "Colab": "colab.research.google.com/github/",
            "JupyterHub": "/hub/user-redirect/git-pull",
            "notebook download": f"_sources/notebooks/{slug}.ipynb",
            "glossary link": "glossary.html#term-",
            "citation": "references.html#",
        }
        missing += [f"{slug}: {what}" for what, needle in wanted.items() if needle not in html]
        assert (site_dir / "_sources" / "notebooks" / f"{slug}.ipynb").is_file()
    assert not missing, "\n".join(missing)
