/*
 * The site's calculators, worker side: Pyodide running the course's own Python package.
 *
 * Started (as a module worker) by calculators.js on pages that hold a calculator. It boots
 * the vendored Pyodide, writes the package files packed at build time (the same files the
 * notebooks import) into Pyodide's file system, imports gpulesson.browser and then answers
 * each request with gpulesson.browser.react_json: JSON text in, JSON text out, so integers
 * above 2^53 arrive as strings. No formula lives here.
 *
 * Messages in:  {type: "boot", pyodide: URL of the Pyodide folder, pack: URL of the pack}
 *               {type: "react", id, name, values: {input: text}, changed: [input, ...]}
 * Messages out: {type: "ready", bootMs, python, pyodide, package, sha256}
 *               {type: "answer", id, json, ms}     (ms: time spent in Python)
 *               {type: "failed", message}
 */
let react = null;

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
  const module = pyodide.pyimport(pack.entry);
  react = module.react_json;
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

self.onmessage = (event) => {
  const message = event.data;
  if (message.type === "boot") {
    boot(message).catch((error) => {
      self.postMessage({ type: "failed", message: String((error && error.message) || error) });
    });
  } else if (message.type === "react") {
    const started = performance.now();
    let json;
    try {
      json = react(message.name, JSON.stringify(message.values), JSON.stringify(message.changed));
    } catch (error) {
      // react_json answers bad input itself; this is a bug, shown as a message, not thrown
      json = JSON.stringify({
        updates: {},
        result: { ok: false, error: `internal error: ${error.message || error}`, input: null },
      });
    }
    self.postMessage({ type: "answer", id: message.id, json, ms: performance.now() - started });
  }
};
