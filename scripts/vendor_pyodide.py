"""Copy the Pyodide runtime (npm `pyodide`, core only) into `_vendor/_pyodide/<version>/`.

The site's calculators run the course's own Python package in the reader's browser
(``scripts/gl_calculators.py`` explains the design). Pyodide is the CPython interpreter
compiled to WebAssembly; its npm package holds the core files a browser needs (about
13.5 MB, 6.3 MB gzipped), no extra Python packages, and the pinned version comes from
``package-lock.json`` through ``npm ci``.

The files land in a *versioned* folder so a browser may cache them for good and an
upgrade changes every URL. ``_vendor/`` is published at the site root (``html_extra_path``
in ``_config.yml``), so the site serves ``/_pyodide/<version>/pyodide.mjs``; never under
``_static/``, whose every ``.js`` Jupyter Book 1 adds to every page. ``manifest.json``
beside the version folders tells the Sphinx extension which version to point pages at.

A static host must serve ``.mjs`` as ``text/javascript`` and ``.wasm`` as
``application/wasm`` (``make serve`` does: ``scripts/serve_site.py``).

Usage: ``python scripts/vendor_pyodide.py [--node-modules DIR] [--out DIR]`` (``make
site-assets``, run by ``make book`` and ``make test``, after ``npm ci``).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the sibling vendor_js, however this file is loaded
    sys.path.insert(0, str(HERE))
from vendor_js import package_meta, run_cli  # noqa: E402

#: What a browser loads: the ES module, the interpreter (JS glue + WebAssembly), the
#: standard library and the package index Pyodide reads at start-up. Source maps only
#: help a reader's developer tools; they are small and avoid a 404 there.
CORE_FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
    "pyodide.mjs.map",
    "package.json",
)
#: Where the runtime goes under the vendored tree (and so under the site root).
SITE_FOLDER = "_pyodide"
MANIFEST = "manifest.json"


def vendor(node_modules: Path, out: Path) -> dict[str, object]:
    """Copy Pyodide's core files into ``out/_pyodide/<version>/``; return the manifest.

    Parameters
    ----------
    node_modules:
        the ``node_modules`` folder written by ``npm ci``.
    out:
        the ``_vendor`` folder (the root of the extra files published with the site).

    Returns
    -------
    dict
        ``{"version", "license", "path", "files", "bytes"}``, also written to
        ``out/_pyodide/manifest.json``; ``path`` is site-relative and ends with ``/``.

    Raises
    ------
    FileNotFoundError
        when the npm package (or one of its core files) is missing.
    """
    package = node_modules / "pyodide"
    meta = package_meta(package)
    version = str(meta["version"])
    folder = out / SITE_FOLDER
    if folder.exists():  # drop older versions: the site serves exactly the pinned one
        shutil.rmtree(folder)
    dest = folder / version
    dest.mkdir(parents=True)
    total = 0
    for name in CORE_FILES:
        src = package / name
        if not src.is_file():
            raise FileNotFoundError(f"pyodide@{version} has no {name}")
        shutil.copy2(src, dest / name)
        total += src.stat().st_size
    manifest: dict[str, object] = {
        "version": version,
        "license": str(meta.get("license", "MPL-2.0")),
        "path": f"{SITE_FOLDER}/{version}/",
        "files": list(CORE_FILES),
        "bytes": total,
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def _report(manifest: dict[str, object]) -> list[str]:
    size = int(manifest["bytes"]) / 1e6  # type: ignore[call-overload]
    return [f"vendored pyodide@{manifest['version']} ({size:.1f} MB) -> "
            f"_build/html/{manifest['path']}"]


def main(argv: list[str] | None = None) -> int:
    return run_cli("vendor_pyodide", __doc__.splitlines()[0], vendor, _report, argv)


if __name__ == "__main__":
    sys.exit(main())
