/*
 * The course package's byte code, compiled by the site's own Pyodide, for the Python worker.
 *
 * A page's Python imports the course package from the pack (scripts/gl_calculators.py
 * packs its files). Pyodide's Python writes no byte code (sys.dont_write_bytecode), so
 * every worker compiled every module it imported from source on each start: on 2026-12-06
 * 0.15-0.41 s of a calculator's 1.3-2.0 s wait on a cached visit. This script compiles
 * them once, at build time, with the vendored Pyodide itself under Node, so the magic
 * number and the code objects are exactly those of the Python that will run them.
 *
 * The .pyc files are hash-based and checked (PEP 552): the worker writes the sources with
 * the time of the write, so a timestamp .pyc would never match; a checked one is used when
 * the hash of the source beside it matches, and otherwise Python compiles the source as
 * before (never runs stale code). That fallback is silent, so this script imports the
 * pack's entry module from the compiled files and fails when any module of the package
 * was compiled from source instead.
 *
 * Input (stdin): {"entry": module, "files": {path: text}} (the pack). Output (stdout):
 * {"tag": cache tag, "python": version, "bytecode": {pyc path: base64}, "recompiled": []}.
 *
 * Usage: node scripts/pyodide_compile.mjs <pyodide folder> < pack.json
 * (scripts/gl_calculators.py runs it while building the site).
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { gunzipSync } from "node:zlib";

const [folder] = process.argv.slice(2);
if (!folder) {
  console.error("usage: node scripts/pyodide_compile.mjs <pyodide folder> < pack.json");
  process.exit(2);
}
const indexURL = resolve(folder) + "/";
process.argv[1] = "./this.program"; // as pyodide_snapshot.mjs
const pack = JSON.parse(readFileSync(0, "utf-8"));
const { loadPyodide } = await import(pathToFileURL(indexURL + "pyodide.mjs").href);
const options = { indexURL, stdout: () => {}, stderr: (text) => console.error(text) };
const snapshot = indexURL + "python-snapshot.bin.gz";
if (existsSync(snapshot)) { // the worker's own start, and 0.5 s instead of 3 s here
  options._loadSnapshot = gunzipSync(readFileSync(snapshot));
}
const pyodide = await loadPyodide(options);
// written as python-worker.js writes them, where it writes them: the hash of each source
// must be that of the bytes the worker's Python reads
const base = "/home/pyodide/site-packages-gl";
for (const [path, text] of Object.entries(pack.files)) {
  const full = `${base}/${path}`;
  pyodide.FS.mkdirTree(full.slice(0, full.lastIndexOf("/")));
  pyodide.FS.writeFile(full, text);
}
pyodide.globals.set("pack_json", JSON.stringify({ entry: pack.entry, base,
                                                  paths: Object.keys(pack.files) }));
const result = pyodide.runPython(`
import base64, importlib, importlib.util, json, os, py_compile, sys
from importlib import _bootstrap_external

pack = json.loads(pack_json)
base = pack["base"]
bytecode = {}
for path in pack["paths"]:
    if path.endswith(".py"):
        pyc = py_compile.compile(
            os.path.join(base, path), doraise=True,
            invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
        with open(pyc, "rb") as f:
            bytecode[os.path.relpath(pyc, base)] = base64.b64encode(f.read()).decode("ascii")

recompiled = []
original = _bootstrap_external.SourceLoader.source_to_code
def counting(self, data, path, *args, **kwargs):
    recompiled.append(os.path.relpath(path, base))
    return original(self, data, path, *args, **kwargs)
_bootstrap_external.SourceLoader.source_to_code = counting
sys.path.insert(0, base)
importlib.import_module(pack["entry"])
_bootstrap_external.SourceLoader.source_to_code = original
json.dumps({"tag": sys.implementation.cache_tag, "python": sys.version.split()[0],
            "bytecode": bytecode,
            "recompiled": [p for p in recompiled if p in pack["paths"]]})
`);
process.stdout.write(result + "\n");
