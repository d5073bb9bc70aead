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

Beside the runtime goes ``python-snapshot.bin.gz``: the memory of a Pyodide that has
already started, made here by ``scripts/pyodide_snapshot.mjs`` under Node (about 6 MB).
The site's Python worker restores it instead of initialising CPython (0.6 s instead of
about 4 s on a 2-core machine), and starts the ordinary way when it cannot. The manifest
names it (``snapshot``); the Sphinx extensions pass it to the pages.

A static host must serve ``.mjs`` as ``text/javascript`` and ``.wasm`` as
``application/wasm`` (``make serve`` does: ``scripts/serve_site.py``).

Usage: ``python scripts/vendor_pyodide.py [--node-modules DIR] [--out DIR]`` (``make
site-assets``, run by ``make book`` and ``make test``, after ``npm ci``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
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
#: The start-up snapshot, in the version folder, and the Node script that makes it.
SNAPSHOT = "python-snapshot.bin.gz"
SNAPSHOT_SCRIPT = HERE / "pyodide_snapshot.mjs"


def vendor(node_modules: Path, out: Path, *, snapshot: bool = True) -> dict[str, object]:
    """Copy Pyodide's core files into ``out/_pyodide/<version>/``, add the start-up
    snapshot (:func:`make_snapshot`) unless ``snapshot`` is false; return the manifest.

    Parameters
    ----------
    node_modules, out:
        as for :func:`vendor_js.vendor` (the folder ``npm ci`` wrote; the ``_vendor`` folder).
    snapshot:
        whether to make the start-up snapshot (it needs Node and the real runtime).

    Returns
    -------
    dict
        ``{"version", "license", "path", "files", "bytes", "snapshot"}``, also written to
        ``out/_pyodide/manifest.json``; ``path`` is site-relative and ends with ``/``;
        ``snapshot`` is the snapshot's site-relative path, or ``null`` without one.

    Raises
    ------
    FileNotFoundError
        when the npm package (or one of its core files) is missing.
    RuntimeError
        when Node fails to make the snapshot.
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
        "snapshot": None,
    }
    if snapshot:
        made = make_snapshot(dest)
        manifest["snapshot"] = f"{SITE_FOLDER}/{version}/{made.name}"
        manifest["snapshot_bytes"] = made.stat().st_size
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def make_snapshot(folder: Path, node: str = "node") -> Path:
    """Start the Pyodide in ``folder`` under Node and write its memory snapshot,
    gzip-compressed, to ``folder/SNAPSHOT``; return that path."""
    target = folder / SNAPSHOT
    done = subprocess.run([node, str(SNAPSHOT_SCRIPT), str(folder), str(target)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0 or not target.is_file():
        raise RuntimeError(f"{SNAPSHOT_SCRIPT.name} failed ({done.returncode}): "
                           f"{done.stderr.strip()[-2000:]}")
    return target


def _report(manifest: dict[str, object]) -> list[str]:
    size = int(manifest["bytes"]) / 1e6  # type: ignore[call-overload]
    lines = [f"vendored pyodide@{manifest['version']} ({size:.1f} MB) -> "
             f"_build/html/{manifest['path']}"]
    if manifest.get("snapshot"):
        snap = int(manifest["snapshot_bytes"]) / 1e6  # type: ignore[call-overload]
        lines.append(f"start-up snapshot ({snap:.1f} MB) -> _build/html/{manifest['snapshot']}")
    return lines


def main(argv: list[str] | None = None) -> int:
    return run_cli("vendor_pyodide", __doc__.splitlines()[0], vendor, _report, argv)


if __name__ == "__main__":
    sys.exit(main())
