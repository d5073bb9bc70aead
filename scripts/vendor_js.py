"""Copy the JavaScript the site needs from ``node_modules`` into ``_vendor/``.

The published site must work with no network: by default the ipywidgets manager,
RequireJS and MathJax would load from public CDNs when a reader opens a page. Instead
``npm ci`` fetches pinned versions (``package-lock.json``) at build time and this script
copies the few files a browser needs into ``_vendor/``.

``_vendor/`` mirrors the root of the built site: ``_config.yml`` lists it in
``html_extra_path``, so ``_vendor/_lib/x`` is published as ``_build/html/_lib/x``. It is
deliberately *not* under ``_static/``, whose every ``.js`` file Jupyter Book 1 loads on
every page. Other vendored trees (for example ``_vendor/_pyodide/<version>/``) can live
beside ``_lib/``; this script only ever rewrites ``_vendor/_lib/``.

The code exercises' editor (CodeMirror 6) is a set of ES modules; :data:`BUILT` bundles
them with esbuild (a pinned development dependency) into one script, from the course's
entry file ``scripts/site_js/code-editor-entry.js``, with the licences of every package
that went into it beside the bundle.

Usage: ``python scripts/vendor_js.py [--node-modules DIR] [--out DIR]`` (run by
``make book`` and ``make test`` after ``npm ci``).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent

# What the site loads, relative to each npm package, and where it lands under _lib/.
# Paths are what a browser requests, so _config.yml refers to them (see SITE_PATHS).
BUNDLES: dict[str, dict[str, object]] = {
    "requirejs": {
        "dest": "requirejs",
        # require.js is small (85 kB) and the package ships no minified build.
        "files": ["require.js"],
    },
    "@jupyter-widgets/html-manager": {
        "dest": "jupyter-widgets",
        # embed-amd.js is the self-contained AMD bundle (base, controls and output
        # widgets) for ipywidgets 8; the hashed font files are fetched by its CSS
        # relative to the script's own URL.
        "files": ["dist/embed-amd.js", "dist/embed.js.LICENSE.txt"],
        "globs": ["dist/*.woff2", "dist/*.woff", "dist/*.ttf", "dist/*.eot", "dist/*.svg"],
    },
    "mathjax": {
        "dest": "mathjax",
        # tex-chtml.js plus the components it loads on demand (TeX extensions via
        # autoload, the CHTML fonts, the accessibility menu and its speech rules).
        "files": ["es5/tex-chtml.js", "LICENSE"],
        "trees": ["es5/input", "es5/output", "es5/a11y", "es5/ui", "es5/sre", "es5/adaptors"],
    },
}

# Site-relative URLs that _config.yml points at (tests/site/test_site_config.py checks them).
SITE_PATHS = {
    "requirejs": "_lib/requirejs/require.js",
    "@jupyter-widgets/html-manager": "_lib/jupyter-widgets/embed-amd.js",
    "mathjax": "_lib/mathjax/tex-chtml.js",
}
# The course's own scripts (scripts/site_js/), published beside the libraries they adapt.
OWN_SCRIPTS = {"widgets-setup.js": "_lib/course/widgets-setup.js"}
# Scripts bundled from npm packages by esbuild: name -> the entry file (in scripts/site_js/),
# the bundle's site path, and the package whose version names the bundle.
BUILT: dict[str, dict[str, str]] = {
    "codemirror": {
        "entry": "code-editor-entry.js",
        "path": "_lib/codemirror/code-editor.js",
        "version_of": "@codemirror/view",
    },
}


Manifest = TypeVar("Manifest")


def package_meta(package_dir: Path) -> dict[str, Any]:
    """The ``package.json`` of an npm package that ``npm ci`` installed in ``package_dir``.

    Raises ``FileNotFoundError`` saying to run ``npm ci`` when it is not there. Shared with
    ``scripts/vendor_pyodide.py``.
    """
    meta_file = package_dir / "package.json"
    if not meta_file.is_file():
        raise FileNotFoundError(
            f"{meta_file} is missing: run `npm ci` in {ROOT} first (make book does)"
        )
    return json.loads(meta_file.read_text(encoding="utf-8"))


def run_cli(name: str, description: str, vendor_into: Callable[[Path, Path], Manifest],
            report: Callable[[Manifest], Iterable[str]], argv: list[str] | None) -> int:
    """The command line of the vendoring scripts: ``[--node-modules DIR] [--out DIR]``.

    Runs ``vendor_into(node_modules, out)`` and prints ``report(manifest)``; a missing
    package or file, or a step that failed (RuntimeError), prints ``<name>: <why>`` to stderr
    and returns 1.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--node-modules", type=Path, default=ROOT / "node_modules")
    parser.add_argument("--out", type=Path, default=ROOT / "_vendor")
    args = parser.parse_args(argv)
    try:
        manifest = vendor_into(args.node_modules, args.out)
    except (FileNotFoundError, RuntimeError) as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 1
    for line in report(manifest):
        print(line)
    return 0


def _copy_file(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dst)


def vendor(node_modules: Path, out: Path) -> dict[str, dict[str, str]]:
    """Copy every bundle of :data:`BUNDLES` into ``out/_lib`` and return a manifest.

    Parameters
    ----------
    node_modules:
        the ``node_modules`` folder written by ``npm ci``.
    out:
        the ``_vendor`` folder (the root of the extra files published with the site).

    Returns
    -------
    dict
        package name -> ``{"version", "license", "path"}`` (also written to
        ``out/_lib/VERSIONS.json``).
    """
    lib = out / "_lib"
    if lib.exists():
        shutil.rmtree(lib)
    manifest: dict[str, dict[str, str]] = {}
    for package, spec in BUNDLES.items():
        pkg_dir = node_modules / package
        meta = package_meta(pkg_dir)
        dest = lib / str(spec["dest"])
        for rel in spec.get("files", []):  # type: ignore[union-attr]
            src = pkg_dir / rel
            if not src.is_file():
                raise FileNotFoundError(f"{package}@{meta['version']} has no {rel}")
            _copy_file(src, dest / Path(rel).name)
        for pattern in spec.get("globs", []):  # type: ignore[union-attr]
            matches = sorted(pkg_dir.glob(pattern))
            for src in matches:
                _copy_file(src, dest / src.name)
        for rel in spec.get("trees", []):  # type: ignore[union-attr]
            src_tree = pkg_dir / rel
            # Keep the tree's position relative to the entry script (es5/x -> x).
            shutil.copytree(src_tree, dest / Path(rel).relative_to("es5"))
        manifest[package] = {
            "version": str(meta["version"]),
            "license": str(meta.get("license", "see package")),
            "path": SITE_PATHS[package],
        }
    for name, site_path in OWN_SCRIPTS.items():
        _copy_file(ROOT / "scripts" / "site_js" / name, out / site_path)
    for name, spec in BUILT.items():
        manifest[name] = bundle(node_modules, ROOT / "scripts" / "site_js" / spec["entry"],
                                out / spec["path"], spec["version_of"])
        manifest[name]["path"] = spec["path"]
    (lib / "VERSIONS.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def _package_of(path: str) -> str | None:
    """The npm package a path under ``node_modules`` belongs to (``@scope/name`` or ``name``)."""
    match = re.search(r"node_modules/((?:@[^/]+/)?[^/]+)/", path.replace("\\", "/"))
    return match.group(1) if match else None


def bundle(node_modules: Path, entry: Path, target: Path, version_of: str) -> dict[str, str]:
    """Bundle ``entry`` and the npm modules it imports into one minified script ``target``.

    Runs the pinned esbuild of ``node_modules``; writes ``LICENSES.txt`` beside ``target``
    with the licence of every package the bundle holds. Returns the manifest entry:
    ``{"version": "<version_of>@<version>", "license", "packages"}``.
    """
    esbuild = node_modules / ".bin" / "esbuild"
    if not esbuild.is_file():
        raise FileNotFoundError(f"{esbuild} is missing: run `npm ci` in {ROOT} first")
    target.parent.mkdir(parents=True, exist_ok=True)
    meta_file = target.with_suffix(".meta.json")
    proc = subprocess.run(
        [str(esbuild), str(entry), "--bundle", "--minify", "--format=iife", "--target=es2020",
         "--legal-comments=none", f"--outfile={target}", f"--metafile={meta_file}",
         "--log-level=warning"],
        cwd=node_modules.parent, capture_output=True, text=True, check=False,
    )
    if proc.returncode != 0:
        raise FileNotFoundError(f"esbuild could not bundle {entry.name}: {proc.stderr.strip()}")
    inputs = json.loads(meta_file.read_text(encoding="utf-8"))["inputs"]
    meta_file.unlink()
    packages = sorted({name for path in inputs if (name := _package_of(path))})
    licences = []
    versions = {}
    for name in packages:
        meta = package_meta(node_modules / name)
        versions[name] = str(meta["version"])
        found = sorted((node_modules / name).glob("LICEN[CS]E*"))
        text = found[0].read_text(encoding="utf-8").strip() if found else (
            f"License: {meta.get('license', 'see package')}")
        licences.append(f"{name}@{meta['version']}\n{'=' * 40}\n{text}\n")
    (target.parent / "LICENSES.txt").write_text("\n".join(licences), encoding="utf-8")
    lead = package_meta(node_modules / version_of)
    return {"version": str(lead["version"]), "built_from": version_of,
            "license": str(lead.get("license", "see package")),
            "packages": versions}  # type: ignore[dict-item]


def main(argv: list[str] | None = None) -> int:
    return run_cli("vendor_js", __doc__.splitlines()[0], vendor,
                   lambda manifest: [f"vendored {package}@{info['version']} -> "
                                     f"_build/html/{info['path']}"
                                     for package, info in manifest.items()], argv)


if __name__ == "__main__":
    sys.exit(main())
