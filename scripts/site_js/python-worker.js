/*
 * The site's Python, worker side: Pyodide running the course's own Python package.
 *
 * Started (as a module worker) by calculators.js on pages that hold a calculator and by
 * exercises.js on pages that hold an exercise, one worker each. It boots the vendored
 * Pyodide, unpacks the package files packed at build time (the same files the notebooks
 * import; one zip archive, scripts/gl_calculators.py's pack_archive) into Pyodide's file
 * system with Pyodide's own unpackArchive, imports the pack's entry module and then answers
 * each request with a function of that module: JSON text in, JSON text out, so integers
 * above 2^53 arrive as strings. No formula and no checking rule lives here.
 *
 * The pack also holds the package's byte code, compiled at build time by this very Pyodide
 * (scripts/pyodide_compile.mjs): checked hash-based .pyc files, unpacked beside the sources
 * into __pycache__, so the import reads code instead of compiling it (Pyodide's Python
 * writes none itself). Python uses a .pyc only while its source hashes the same, and
 * compiles the source otherwise; the sources stay for tracebacks and inspect (the model
 * solutions' source, the kernel checker's lines). The archive's gl-pack.json holds the rest
 * of the pack: version, entry module, sha256 of the sources, the paths of every file and
 * .pyc (the exercises' pages unpack the calculators' pack and then an archive of what it
 * lacks; the worker checks that nothing listed is missing). Every worker unpacks them
 * afresh into its own file system: nothing a learner's code writes there outlives the
 * worker, which the page replaces after each code check.
 *
 * When the page names a memory snapshot of a started interpreter (made at build time by
 * scripts/pyodide_snapshot.mjs), Pyodide restores it instead of initialising CPython,
 * several times faster; if the snapshot cannot be fetched or restored, Pyodide starts the
 * ordinary way and the console says why. "ready" tells which way it started.
 *
 * Messages in:  {type: "boot", pyodide: URL of the Pyodide folder, pack: URL of the pack
 *                or URLs of packs to unpack in order (the exercises' pages: the calculators'
 *                pack, then the rest), snapshot: URL of the snapshot or null}
 *               {type: "react", id, name, values: {input: text}, changed: [input, ...]}
 *                 (calculators: gpulesson.browser.react_json)
 *               {type: "call", id, nonce, json}
 *                 (exercises: gpulesson.exercises.browser.handle_json)
 * Messages out: {type: "ready", bootMs, python, pyodide, package, sha256, bytecode: number
 *                of .pyc files written, snapshot: bool}
 *               {type: "answer", id, nonce, json, ms}     (ms: time spent in Python)
 *               {type: "failed", message}
 *
 * A learner's code runs inside a "call" and can reach this worker's globals (Pyodide's
 * `js` module): it may post messages of its own or replace `postMessage`. So the answer
 * goes out through the `postMessage` this module kept before any learner's code ran, with
 * the request's nonce, which only the page and this dispatcher hold; the page takes no
 * other message as an answer and starts a fresh worker after each code check. A request
 * that throws (Python stopped: a fatal error, a stack overflow) is answered with a
 * learner-facing message and `restart: true`, and the page replaces the worker.
 *
 * Whatever Python prints outside a request goes to the console as a warning; the
 * exercises capture what a learner's code prints themselves.
 */
let entry = null;
// kept before any learner's code runs: a replaced self.postMessage never sees an answer
const post = self.postMessage.bind(self);

async function snapshotMemory(url) {
  const response = await fetch(url);
  if (!response.ok) {
    throw new Error(`${response.status} ${url}`);
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (bytes[0] !== 0x1f || bytes[1] !== 0x8b) {
    return bytes; // a host that sent it with Content-Encoding: gzip, already decoded
  }
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

// A download started early, awaited later: its failure is kept, never left unhandled.
function settled(promise) {
  return promise.then((value) => ({ value }), (error) => ({ error }));
}

async function startPyodide(config) {
  const memory = config.snapshot ? settled(snapshotMemory(config.snapshot)) : null;
  const { loadPyodide } = await import(config.pyodide + "pyodide.mjs");
  const options = {
    indexURL: config.pyodide,
    stdout: () => {},
    stderr: (text) => console.warn("[python]", text),
  };
  if (memory) {
    try {
      const { value, error } = await memory;
      if (error) {
        throw error;
      }
      const pyodide = await loadPyodide({ ...options, _loadSnapshot: value });
      pyodide.runPython("import random\nrandom.seed()"); // its state was frozen at build time
      return { pyodide, snapshot: true };
    } catch (error) {
      console.warn("[python] the start-up snapshot could not be used " +
                   `(${(error && error.message) || error}); starting Python without it`);
    }
  }
  return { pyodide: await loadPyodide(options), snapshot: false };
}

// the member of the pack's archive that describes it (gl_calculators.PACK_INDEX)
const PACK_INDEX = "gl-pack.json";

async function fetchPack(url) {
  const response = await fetch(url);
  if (!response.ok) {
    throw new Error(`could not load the course package (${response.status} ${url})`);
  }
  return new Uint8Array(await response.arrayBuffer());
}

async function boot(config) {
  const started = performance.now();
  // downloaded while Python starts, all at once
  const packed = [].concat(config.pack).map((url) => settled(fetchPack(url)));
  const { pyodide, snapshot } = await startPyodide(config);
  const base = "/home/pyodide/site-packages-gl";
  for (const download of packed) { // in order: the last one's index describes the whole
    const { value: archive, error } = await download;
    if (error) {
      throw error;
    }
    pyodide.unpackArchive(archive, "zip", { extractDir: base });
  }
  const pack = JSON.parse(pyodide.FS.readFile(`${base}/${PACK_INDEX}`, { encoding: "utf8" }));
  const missing = [...pack.files, ...(pack.bytecode || [])].filter(
    (path) => !pyodide.FS.analyzePath(`${base}/${path}`).exists);
  if (missing.length) { // a pack from another build than the page's
    throw new Error(`the course package is incomplete (${missing.length} files missing, ` +
                    `${missing[0]} first): reload the page`);
  }
  pyodide.runPython(
    `import sys\nsys.path.insert(0, ${JSON.stringify(base)})\nimport ${pack.entry}`
  );
  entry = pyodide.pyimport(pack.entry);
  const python = pyodide.runPython("import platform; platform.python_version()");
  post({
    type: "ready",
    bootMs: performance.now() - started,
    python,
    pyodide: pyodide.version,
    package: pack.version,
    sha256: pack.sha256,
    bytecode: (pack.bytecode || []).length,
    snapshot,
  });
}

function internalError(message, error) {
  // the Python side answers bad input itself: this is Python stopping (a fatal error, a
  // stack overflow in the interpreter), shown as a message, not thrown
  const reason = String((error && error.message) || error).split("\n")[0].slice(0, 200);
  if (message.type === "react") {
    const text = `internal error: ${reason}`;
    return JSON.stringify({ updates: {}, result: { ok: false, error: text, input: null } });
  }
  return JSON.stringify({
    status: "error",
    message: `Python stopped while checking this (${reason}). It restarts by itself: ` +
      "check again in a few seconds, and look for code that recurses or exits.",
    details: [], mistake: null, progress: null, restart: true,
  });
}

self.onmessage = (event) => {
  const message = event.data;
  if (message.type === "boot") {
    boot(message).catch((error) => {
      post({ type: "failed", message: String((error && error.message) || error) });
    });
    return;
  }
  const started = performance.now();
  let json;
  try {
    if (message.type === "react") {
      json = entry.react_json(message.name, JSON.stringify(message.values),
                              JSON.stringify(message.changed));
    } else if (message.type === "call") {
      json = entry.handle_json(message.json);
    } else {
      throw new Error(`unknown message ${message.type}`);
    }
  } catch (error) {
    json = internalError(message, error);
  }
  post({ type: "answer", id: message.id, nonce: message.nonce, json,
         ms: performance.now() - started });
};
