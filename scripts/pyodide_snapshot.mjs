/*
 * A memory snapshot of a freshly started Pyodide, for the site's Python worker.
 *
 * Starting Pyodide spends most of its time initialising CPython inside WebAssembly: about
 * 4 s on a 2-core machine, 1-2 s on a recent laptop, on every page with a calculator or an
 * exercise and after every restart of the checker. Pyodide can instead restore the memory
 * of an interpreter that has already started (its `_makeSnapshot` / `_loadSnapshot`
 * options), which takes about 0.6 s on the same 2-core machine. This script starts the
 * vendored Pyodide once under Node, takes that snapshot and writes it gzip-compressed
 * (31 MB of memory, about 6 MB on disk) next to the runtime. `python-worker.js` restores
 * it when the page names it, and starts Pyodide the ordinary way when it cannot.
 *
 * The snapshot holds the interpreter only: no course code, no files (Pyodide's file
 * system lives outside the WebAssembly memory and is rebuilt on every start), so it
 * depends on the Pyodide version alone and sits in that version's folder. What a started
 * interpreter has drawn at random is frozen in it: the hash secret of str and bytes (the
 * same for every reader of one build, which only matters against hash flooding) and the
 * state of the `random` module, which the worker seeds afresh after each restore. Two runs
 * of this script give different snapshots for the same reason.
 *
 * Usage: node scripts/pyodide_snapshot.mjs <pyodide folder> <output file>
 * (scripts/vendor_pyodide.py runs it; `make site-assets`).
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";

const [folder, output] = process.argv.slice(2);
if (!folder || !output) {
  console.error("usage: node scripts/pyodide_snapshot.mjs <pyodide folder> <output file>");
  process.exit(2);
}
const indexURL = resolve(folder) + "/"; // under Node, Pyodide takes a path
// Emscripten records the program's path as the environment variable "_"; in a browser it
// is "./this.program". Without this the snapshot would carry this machine's path.
process.argv[1] = "./this.program";
const { loadPyodide } = await import(pathToFileURL(indexURL + "pyodide.mjs").href);
const pyodide = await loadPyodide({ indexURL, _makeSnapshot: true });
const memory = pyodide.makeMemorySnapshot();
const packed = gzipSync(memory, { level: 9 });
writeFileSync(output, packed);
console.log(JSON.stringify({ version: pyodide.version, memory_bytes: memory.length,
                             bytes: packed.length }));
