/*
 * The site's Python, worker side: Pyodide running the course's own Python package.
 *
 * Started (as a module worker) by calculators.js on pages that hold a calculator and by
 * exercises.js on pages that hold an exercise, one worker each. It boots the vendored
 * Pyodide, writes the package files packed at build time (the same files the notebooks
 * import) into Pyodide's file system, imports the pack's entry module and then answers
 * each request with a function of that module: JSON text in, JSON text out, so integers
 * above 2^53 arrive as strings. No formula and no checking rule lives here.
 *
 * Messages in:  {type: "boot", pyodide: URL of the Pyodide folder, pack: URL of the pack}
 *               {type: "react", id, name, values: {input: text}, changed: [input, ...]}
 *                 (calculators: gpulesson.browser.react_json)
 *               {type: "call", id, json}
 *                 (exercises: gpulesson.exercises.browser.handle_json)
 * Messages out: {type: "ready", bootMs, python, pyodide, package, sha256}
 *               {type: "answer", id, json, ms}     (ms: time spent in Python)
 *               {type: "failed", message}
 *
 * Whatever Python prints outside a request goes to the console as a warning; the
 * exercises capture what a learner's code prints themselves.
 */
let entry = null;

async function boot(config) {
  const started = performance.now();
  const { loadPyodide } = await import(config.pyodide + "pyodide.mjs");
  const pyodide = await loadPyodide({
    indexURL: config.pyodide,
    stdout: () => {},
    stderr: (text) => console.warn("[python]", text),
  });
  const response = await fetch(config.pack);
  if (!response.ok) {
    throw new Error(`could not load the course package (${response.status} ${config.pack})`);
  }
  const pack = await response.json();
  const base = "/home/pyodide/site-packages-gl";
  for (const [path, text] of Object.entries(pack.files)) {
    const full = `${base}/${path}`;
    pyodide.FS.mkdirTree(full.slice(0, full.lastIndexOf("/")));
    pyodide.FS.writeFile(full, text);
  }
  pyodide.runPython(
    `import sys\nsys.path.insert(0, ${JSON.stringify(base)})\nimport ${pack.entry}`
  );
  entry = pyodide.pyimport(pack.entry);
  const python = pyodide.runPython("import platform; platform.python_version()");
  self.postMessage({
    type: "ready",
    bootMs: performance.now() - started,
    python,
    pyodide: pyodide.version,
    package: pack.version,
    sha256: pack.sha256,
  });
}

function internalError(message, error) {
  // the Python side answers bad input itself; this is a bug, shown as a message, not thrown
  const text = `internal error: ${(error && error.message) || error}`;
  if (message.type === "react") {
    return JSON.stringify({ updates: {}, result: { ok: false, error: text, input: null } });
  }
  return JSON.stringify({ status: "error", message: text, details: [], mistake: null,
                          progress: null });
}

self.onmessage = (event) => {
  const message = event.data;
  if (message.type === "boot") {
    boot(message).catch((error) => {
      self.postMessage({ type: "failed", message: String((error && error.message) || error) });
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
  self.postMessage({ type: "answer", id: message.id, json, ms: performance.now() - started });
};
