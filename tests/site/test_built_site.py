"""The built site, read from disk without a browser: what its pages and calculators need.

Reads the built site (the session fixture ``site_dir``: this session's build, or
``GL_SITE_DIR``): the vendored JavaScript, Pyodide (in its versioned folder) and the
package pack published at the site root and never under ``_static``; the calculator loader
on exactly the pages with a calculator; the widget manager and the saved widget state only
on pages that show a widget (``scripts/gl_widgets.py``); every registry calculator on the
calculators page with a link to its lesson; the GPU tables generated from the data (dense
and sparse apart, every source listed); the instructors page; on every lesson a download
of the notebook, glossary links and citations, no thebe, and launch buttons exactly when
``_config.yml`` names a real repository (the deploy workflow's build), none while it holds
the placeholder.
"""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest
import yaml

from gpulesson import calculators, hardware

from .building import REPO_ROOT, calculator_pack, script_module

pytestmark = pytest.mark.book

LOADER = "_lib/course/calculators.js"


def _pages(site_dir: Path) -> list[Path]:
    return [p for p in sorted(site_dir.rglob("*.html"))
            if not {"_lib", "_static", "_pyodide", "_sources"} & set(p.parts)]


def _text(html: str) -> str:
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))


def test_vendored_files_and_the_pack_are_published_at_the_site_root(site_dir: Path) -> None:
    """The JavaScript of ``scripts/vendor_js.py``, Pyodide's core in its versioned folder,
    the course's own scripts and the package pack: at the site root, never under
    ``_static`` (which every page would load)."""
    for path in ("_lib/requirejs/require.js", "_lib/jupyter-widgets/embed-amd.js",
                 "_lib/mathjax/tex-chtml.js", "_lib/course/widgets-setup.js",
                 "_lib/VERSIONS.json"):
        assert (site_dir / path).is_file(), f"{path} was not published"
    vendor = script_module("vendor_pyodide")
    manifest = json.loads((site_dir / "_pyodide" / "manifest.json").read_text(encoding="utf-8"))
    folder = site_dir / manifest["path"]
    assert folder.name == manifest["version"]
    for name in vendor.CORE_FILES:
        assert (folder / name).is_file(), f"{name} was not published"
    # the start-up snapshot (scripts/pyodide_snapshot.mjs): gzip, in the version's folder
    assert manifest["snapshot"] == f"{manifest['path']}{vendor.SNAPSHOT}"
    with (site_dir / manifest["snapshot"]).open("rb") as snapshot:
        assert snapshot.read(2) == b"\x1f\x8b", "the start-up snapshot is not gzip"
    for folder_name in ("_lib", "_pyodide"):
        assert not (site_dir / "_static" / folder_name).exists(), f"{folder_name} under _static"
    ext = script_module("gl_calculators")
    pack = ext.read_pack(site_dir / ext.PACK_PATH)  # a zip archive (ext.pack_archive)
    assert pack["files"] == calculator_pack()["files"], (
        "the published pack differs from the package: rebuild the site")
    # its byte code (scripts/pyodide_compile.mjs): one .pyc per module, for Pyodide's Python
    tag = "cpython-" + "".join(pack["python"].split(".")[:2])
    assert {path for path in pack["bytecode"]} == {
        f"{folder}/__pycache__/{name[:-3]}.{tag}.pyc"
        for folder, _, name in (path.rpartition("/") for path in pack["files"])
        if name.endswith(".py")}
    for script in ext.SCRIPTS:
        assert (site_dir / ext.COURSE_DIR / script).is_file()


def test_icons_come_from_the_webfont_and_stay_decorative(site_dir: Path) -> None:
    """No page loads the theme's fontawesome.js (1.49 MB; book/_templates/layout.html):
    its stylesheet's webfont draws the icons, and every icon the pages or the theme's
    scripts use has a rule in gpulesson.css that gives it the theme's character with empty
    alternative text, so that no private-use character enters a link's or button's name."""
    theme_css = (site_dir / "_static" / "styles" / "pydata-sphinx-theme.css").read_text(
        encoding="utf-8")
    glyphs: dict[str, str] = {}  # icon -> the character the theme draws it with
    for selectors, char in re.findall(r'([^{}]+)\{content:"(\\f[0-9a-f]{3})"\}', theme_css):
        for icon in re.findall(r"\.(fa-[a-z0-9-]+):before", selectors):
            glyphs.setdefault(icon, char)
    used: set[str] = set()
    for page in _pages(site_dir):
        html = page.read_text(encoding="utf-8")
        assert "fontawesome.js" not in html, f"{page.name} loads fontawesome.js"
        for classes in re.findall(r' class="([^"]*)"', html):
            used |= {c for c in classes.split() if c in glyphs}
    for script in (site_dir / "_static" / "scripts").glob("*.js"):
        if script.name != "fontawesome.js":
            used |= set(re.findall(r"\b(fa-[a-z0-9-]+)\b", script.read_text(
                encoding="utf-8"))) & set(glyphs)
    assert {"fa-bars", "fa-angle-left", "fa-magnifying-glass"} <= used, sorted(used)
    ours = dict(re.findall(r'\.(fa-[a-z0-9-]+)::before \{ content: "(\\f[0-9a-f]{3})" / ""; \}',
                           (site_dir / "_static" / "gpulesson.css").read_text(encoding="utf-8")))
    assert {icon: ours.get(icon) for icon in used} == {icon: glyphs[icon] for icon in used}


def test_widget_state_and_manager_only_where_a_widget_shows(site_dir: Path) -> None:
    """The lessons' calculators show their static HTML, so their widgets' saved state (about
    1,200 models on one lesson) and the embed manager that would rebuild them are left out;
    a page with a widget view keeps both (the configuration-check book has one)."""
    ext = script_module("gl_widgets")
    config = yaml.safe_load((REPO_ROOT / "_config.yml").read_text(encoding="utf-8"))
    manager = [Path(path).name for path in config["sphinx"]["config"]["nb_ipywidgets_js"]]
    with_calculator = []
    for page in _pages(site_dir):
        html = page.read_text(encoding="utf-8")
        shows = ext.WIDGET_VIEW in html
        name = page.relative_to(site_dir).as_posix()
        assert (ext.WIDGET_STATE in html) == shows, f"{name}: widget state without a widget"
        for script in manager:
            assert (script in html) == shows, f"{name}: {script} without a widget"
        if 'class="gl-calculator"' in html and name.startswith("notebooks/"):
            with_calculator.append(name)
    assert with_calculator, "no lesson shows a calculator: nothing here was checked"


def test_the_loader_is_on_exactly_the_pages_with_a_calculator(site_dir: Path) -> None:
    with_calculator, without = [], []
    for page in _pages(site_dir):
        html = page.read_text(encoding="utf-8")
        has_calc = re.search(r'class="gl-calculator"[^>]*data-calculator="(\w+)"', html)
        has_registry_calc = has_calc and has_calc.group(1) in calculators.CALCULATORS
        loads = LOADER in html
        assert "_pyodide/" not in re.sub(r'data-pyodide(-snapshot)?="_pyodide/', "", html), (
            f"{page}: Pyodide is referenced outside the loader's attributes")
        assert bool(has_registry_calc) == loads, (
            f"{page.relative_to(site_dir)}: calculator={bool(has_registry_calc)}, "
            f"loader={loads}")
        (with_calculator if loads else without).append(page)
    assert site_dir / "book" / "calculators.html" in with_calculator
    assert site_dir / "book" / "intro.html" in without
    js = [p for p in (site_dir / "_static").rglob("*.js") if "calculators" in p.name]
    assert not js, f"calculator code under _static (loaded on every page): {js}"


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


def test_instructors_page_says_how_to_export_and_run(site_dir: Path) -> None:
    text = _text((site_dir / "book" / "instructors.html").read_text(encoding="utf-8"))
    for needle in ("make student", "python -m gpulesson.exercises export", "--variant",
                   "answer_key", "make gpu-check", "Binder", "Colab", "JupyterHub"):
        assert needle in text, f"instructors page lacks {needle!r}"


def test_every_lesson_has_a_download_glossary_links_citations_and_true_buttons(
        site_dir: Path) -> None:
    import yaml

    from .building import REPO_ROOT

    config = yaml.safe_load((REPO_ROOT / "_config.yml").read_text(encoding="utf-8"))
    ext = script_module("gl_exercises")
    real = not ext.placeholder_url(config["repository"]["url"])
    hub = real and not ext.placeholder_url(config["launch_buttons"].get("jupyterhub_url"))
    lessons = sorted((site_dir / "notebooks").glob("*.html"))
    assert lessons, "no lesson was built"
    missing: list[str] = []
    for page in lessons:
        html = page.read_text(encoding="utf-8")
        slug = page.stem
        wanted = {
            "notebook download": f"_sources/notebooks/{slug}.ipynb",
            "glossary link": "glossary.html#term-",
            "citation": "references.html#",
        }
        launch = {"Binder": ("mybinder.org/v2/gh/", real),
                  "Colab": ("colab.research.google.com/github/", real),
                  "JupyterHub": ("/hub/user-redirect/git-pull", hub),
                  "repository button": (config["repository"]["url"], real)}
        missing += [f"{slug}: {what}" for what, needle in wanted.items() if needle not in html]
        missing += [f"{slug}: {what} {'missing' if wanted_here else 'shown for a placeholder'}"
                    for what, (needle, wanted_here) in launch.items()
                    if (needle in html) != wanted_here]
        if "thebe" in html.lower().replace("thebelab", ""):
            missing.append(f"{slug}: thebe is still on the page")
        assert (site_dir / "_sources" / "notebooks" / f"{slug}.ipynb").is_file()
    assert not missing, "\n".join(missing)
