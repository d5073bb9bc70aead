/*
 * The site's exercises, page side: check answers in the reader's browser.
 *
 * Added by scripts/gl_exercises.py to pages that hold an exercise. The markup of each
 * exercise comes from the build (gl_exercises.live_markup): the static rendering
 * (question, answer format, hints, folded solution) plus hidden controls. This script
 * shows the controls, starts one Web Worker (python-worker.js) that runs the course's
 * Python package in Pyodide, and sends each answer to
 * gpulesson.exercises.browser.handle_json, the checker the notebooks use. It holds no
 * answer and no checking rule: it moves text between the page and Python, shows the
 * answer it gets back, and keeps the progress record Python writes.
 *
 * DOM contract (tests and other tools rely on it):
 *   [data-exercise="<slug>:<n>"]  each exercise; data-state = static | loading | live |
 *                                 restarting | failed | file ("live": it can be checked),
 *                                 or unavailable (its checker needs a library a browser
 *                                 cannot load: it stays static, and says so)
 *   [data-answer]                 its answer control (the code editor's editable element,
 *                                 whose `value` is the code, for a code exercise)
 *   button[data-check]            checks (or commits a prediction)
 *   [data-feedback]               what the checker said; data-status = correct | mistake |
 *                                 incorrect | invalid | committed | compared | timeout | error
 *
 * A learner's function runs in the worker with a time limit (data-time-limit, in ms; a
 * page may lower it with window.GL_EXERCISE_TIME_LIMIT_MS, read at each check, as the
 * browser tests do): past it the worker is stopped, the learner told, and a fresh worker
 * started.
 *
 * Progress lives in localStorage under "gpulesson-progress", in the schema of the
 * notebooks' .gpulesson-progress.json (Python writes it); it is never sent anywhere.
 * window.GLExercises.stats holds the start-up and round-trip times.
 *
 * Everything the worker sends is untrusted (a learner's code runs in it, and can patch the
 * checker or post messages of its own):
 *   - an answer is taken only with the nonce of its request, which only the worker's own
 *     dispatcher holds (learnerSafe.nonce);
 *   - after a code check the worker is replaced by a fresh one, so no patch outlives the
 *     check that made it (engine.recycle); the fresh one starts at once, so that it is
 *     ready, its lesson imported, when the learner checks again;
 *   - feedback is built from text and an allow-list of tags (learnerSafe.fragment);
 *   - a progress record is parsed, checked (size, depth, schema) and compared with the
 *     previous one before it is stored: a check may change its own exercise's entry only,
 *     and nothing may disappear (progressStore.accept); otherwise the previous one is kept;
 *   - what cannot be read of a stored record is kept aside under
 *     "gpulesson-progress-set-aside" (and in Export), never dropped;
 *   - the worker starts from a blob: URL, so it inherits the page's Content-Security-Policy
 *     (connect-src 'self', a meta tag the build adds): learner code reaches no other host.
 */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script) { return; }
  var siteRoot = new URL("../../", script.src); // this file lives at _lib/course/
  var KEY = "gpulesson-progress";
  var config = {
    pyodide: new URL(script.getAttribute("data-pyodide"), siteRoot).href,
    snapshot: script.getAttribute("data-pyodide-snapshot")
      ? new URL(script.getAttribute("data-pyodide-snapshot"), siteRoot).href : null,
    // the packs to unpack, in order (the calculators' pack, then the exercises' rest)
    pack: script.getAttribute("data-pack").split(/\s+/).filter(Boolean).map(function (url) {
      return new URL(url, siteRoot).href;
    }),
    editor: new URL(script.getAttribute("data-editor"), siteRoot).href,
    worker: new URL("python-worker.js", script.src).href,
    timeLimitMs: Number(script.getAttribute("data-time-limit") || 10000),
    bootTimeoutMs: Number(window.GL_CALC_TIMEOUT_MS || script.getAttribute("data-timeout") ||
                          60000),
  };
  var stats = { pageToLiveMs: null, bootMs: null, roundTrips: [], python: [], restarts: 0,
                info: null, starts: 0, readies: 0 }; // workers started, and those that got ready
  var api = { stats: stats, exercises: [] }; // progressStore and learnerSafe added below
  window.GLExercises = api;

  var SYMBOLS = { correct: "\u2714", mistake: "\u2718", incorrect: "\u2718", invalid: "\u26a0",
                  committed: "\u270e", compared: "\u2194", timeout: "\u23f1", error: "\u26a0" };
  var STATUS = {
    loading: "Starting the checker (the course's Python, in your browser)\u2026 You can " +
      "type your answers already; they are checked as soon as it is ready.",
    live: "Ready: every answer is checked in your browser by the course's own Python.",
    restarting: "Restarting Python after a function that ran too long\u2026",
    file: "This page was opened from a file, and browsers do not let a file start the " +
      "checker: each exercise shows its question, hints and folded solution. To check your " +
      "answers, serve the site (\"make serve\" in the course folder, then open " +
      "http://127.0.0.1:8000/) or open the notebook in Jupyter.",
    failed: function (reason) {
      return "The checker could not start (" + reason + "). Each exercise still shows its " +
        "question, hints and folded solution; the notebook checks answers in Jupyter. If " +
        "you host this site, serve .mjs files as text/javascript and .wasm files as " +
        "application/wasm (\"make serve\" does).";
    },
  };

  // ---------------------------------------------------------------- kept progress
  var storage = {
    problem: null,
    read: function () {
      try { return window.localStorage.getItem(KEY); } catch (error) {
        this.problem = "This browser does not let the page keep your progress (" +
          (error && error.name || error) + "); answers are still checked.";
        return null;
      }
    },
    write: function (text) {
      try { window.localStorage.setItem(KEY, text); return true; } catch (error) {
        this.problem = "Your progress could not be saved in this browser (" +
          (error && error.name || error) + ").";
        return false;
      }
    },
    readKey: function (key) {
      try { return window.localStorage.getItem(key); } catch (error) { return null; }
    },
    writeKey: function (key, text) {
      try { window.localStorage.setItem(key, text); return true; } catch (error) {
        this.problem = "Part of your progress could not be kept aside in this browser (" +
          (error && error.name || error) + ").";
        return false;
      }
    },
  };

  // ---------------------------------------------------------------- untrusted input
  var HTML_NS = "http://www.w3.org/1999/xhtml";
  var learnerSafe = {
    // Tags feedback may hold (exercises.render.markup): no attribute is ever kept.
    TAGS: { CODE: 1, STRONG: 1, EM: 1, SUP: 1, SUB: 1, B: 1, I: 1, BR: 1, P: 1, UL: 1, OL: 1,
            LI: 1, PRE: 1, SMALL: 1 },
    DROP: { SCRIPT: 1, STYLE: 1, TEMPLATE: 1, IFRAME: 1, OBJECT: 1, EMBED: 1, NOSCRIPT: 1,
            TEXTAREA: 1, TITLE: 1 },
    MAX_TEXT: 4000,
    nonce: function () {
      var bytes = new Uint32Array(4);
      window.crypto.getRandomValues(bytes);
      return Array.prototype.map.call(bytes, function (b) { return b.toString(36); }).join("-");
    },
    // The feedback's HTML as nodes of this page: parsed inert (DOMParser runs no script and
    // loads nothing), then rebuilt from text nodes and allowed tags without attributes.
    fragment: function (html) {
      var out = document.createDocumentFragment();
      var parsed = new DOMParser().parseFromString(String(html).slice(0, 4 * this.MAX_TEXT),
                                                   "text/html");
      var self = this;
      var budget = { nodes: 500 };
      (function copy(from, to, depth) {
        Array.prototype.forEach.call(from.childNodes, function (node) {
          if (budget.nodes-- <= 0) { return; }
          if (node.nodeType === 3) {
            to.appendChild(document.createTextNode(node.nodeValue));
          } else if (node.nodeType === 1 && node.namespaceURI === HTML_NS &&
                     !self.DROP[node.nodeName]) { // SVG and MathML are dropped whole
            if (self.TAGS[node.nodeName] && depth < 8) {
              var element = document.createElement(node.nodeName.toLowerCase());
              to.appendChild(element);
              copy(node, element, depth + 1);
            } else {
              copy(node, to, depth + 1); // an unknown tag: its text only
            }
          }
        });
      })(parsed.body || parsed, out, 0);
      return out;
    },
    text: function (value, limit) {
      return typeof value === "string" ? value.slice(0, limit || this.MAX_TEXT) : "";
    },
    // An answer object as the page uses it: known status, bounded texts, nothing else.
    answer: function (raw) {
      var a = raw && typeof raw === "object" ? raw : {};
      var details = Array.isArray(a.details) ? a.details.slice(0, 20) : [];
      return {
        status: Object.prototype.hasOwnProperty.call(SYMBOLS, a.status) ? a.status : "error",
        message: this.text(a.message) || (a.status in SYMBOLS ? "" :
          "The checker's answer could not be read."),
        message_html: typeof a.message_html === "string" ? a.message_html : null,
        details: details.map(function (d) { return learnerSafe.text(d, 500); }),
        output: this.text(a.output, 8000),
        output_dropped: typeof a.output_dropped === "number" && isFinite(a.output_dropped) ?
          Math.max(0, Math.floor(a.output_dropped)) : 0,
        progress: a.progress && typeof a.progress === "object" ? a.progress : null,
        restart: a.restart === true,
      };
    },
  };

  // ---------------------------------------------------------------- progress, checked
  // The record's schema (the notebook's file): {"version": n, "exercises": {id: entry}}, an
  // entry {"attempts": count, "done": bool, "last"/"done_at": time, "variant": n|null},
  // other keys kept if small. What fails is set aside, never dropped.
  var progressStore = {
    ASIDE_KEY: "gpulesson-progress-set-aside",
    MAX_CHARS: 4 * 1024 * 1024,
    MAX_ASIDE_CHARS: 1024 * 1024,
    MAX_DEPTH: 32,
    MAX_ENTRY_CHARS: 64 * 1024,
    MAX_COUNT: 1e9,
    ID: /^[a-z][a-z0-9_]{0,99}-ex[1-9][0-9]{0,5}$/,
    // Iterative (a 5,000-level entry never reaches the call stack): depth of nesting.
    depthAtMost: function (value, limit) {
      var stack = [[value, 1]];
      while (stack.length) {
        var top = stack.pop();
        var item = top[0];
        if (item && typeof item === "object") {
          if (top[1] > limit) { return false; }
          var children = Array.isArray(item) ? item : Object.keys(item).map(function (k) {
            return item[k];
          });
          for (var i = 0; i < children.length; i++) { stack.push([children[i], top[1] + 1]); }
        }
      }
      return true;
    },
    isCount: function (v) {
      return typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= this.MAX_COUNT;
    },
    // Why an entry cannot be kept, or "" when it can.
    entryProblem: function (id, entry) {
      if (!this.ID.test(id)) { return "not an exercise id"; }
      if (!entry || typeof entry !== "object" || Array.isArray(entry)) { return "not a record"; }
      if (!this.depthAtMost(entry, this.MAX_DEPTH)) { return "nested too deeply"; }
      var size = JSON.stringify(entry).length;
      if (size > this.MAX_ENTRY_CHARS) { return "too large"; }
      if ("attempts" in entry && !this.isCount(entry.attempts)) { return "a count that is not one"; }
      if ("done" in entry && typeof entry.done !== "boolean") { return "done that is not true/false"; }
      var self = this;
      var bad = ["last", "done_at"].filter(function (k) {
        return k in entry && (typeof entry[k] !== "string" || entry[k].length > 40);
      });
      if (bad.length) { return "a time that is not one"; }
      if ("variant" in entry && entry.variant !== null && !self.isCount(entry.variant)) {
        return "a variant that is not one";
      }
      return "";
    },
    // {record, aside: {where: text}, problem} from stored or sent text; never throws.
    check: function (text) {
      var empty = { version: 1, exercises: {} };
      if (text === null || text === undefined || (typeof text === "string" && !text.trim())) {
        return { record: null, aside: {}, problem: "" };
      }
      if (typeof text !== "string") { return { record: empty, aside: {}, problem: "not text" }; }
      if (text.length > this.MAX_CHARS) {
        return { record: empty, aside: { "": text }, problem: "too large" };
      }
      var data;
      try { data = JSON.parse(text); } catch (error) {
        return { record: empty, aside: { "": text }, problem: "not JSON" };
      }
      if (!data || typeof data !== "object" || Array.isArray(data) || !data.exercises ||
          typeof data.exercises !== "object" || Array.isArray(data.exercises)) {
        return { record: empty, aside: { "": text }, problem: "not a progress record" };
      }
      var record = {}, aside = {}, self = this;
      Object.keys(data).forEach(function (key) {
        if (key === "exercises") { return; }
        var value = data[key];
        if (self.depthAtMost(value, self.MAX_DEPTH) &&
            JSON.stringify(value).length <= self.MAX_ENTRY_CHARS) {
          record[key] = value;
        } else {
          aside[key] = self.safeText(value);
        }
      });
      if (!Number.isInteger(record.version) || record.version < 1) { record.version = 1; }
      record.exercises = {};
      var raw = null; // each entry's own text, read only when one is set aside
      Object.keys(data.exercises).forEach(function (id) {
        var entry = data.exercises[id];
        if (self.entryProblem(id, entry)) {
          raw = raw || self.rawEntries(text);
          aside["exercises/" + id] = typeof raw[id] === "string" ? raw[id] : self.safeText(entry);
        } else {
          record.exercises[id] = entry;
        }
      });
      return { record: record, aside: aside, problem: "" };
    },
    // {id: the entry's text as stored} for the "exercises" of a record's text: what is
    // kept aside is the text itself (a 5,000-digit count parses to Infinity). Linear: one
    // pass over strings and brackets, keys recognised by the ":" after them.
    rawEntries: function (text) {
      var token = /"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\],]/g, colon = /\s*:\s*/y;
      var out = {}, depth = 0, match, top = null, key = null, start = -1;
      try {
        while ((match = token.exec(text)) !== null) {
          var t = match[0];
          if (t.charAt(0) === '"') {
            colon.lastIndex = token.lastIndex;
            if (colon.test(text)) {
              if (depth === 1) { top = JSON.parse(t); }
              else if (depth === 2 && top === "exercises") {
                key = JSON.parse(t);
                start = colon.lastIndex;
              }
            }
          } else if (t === "{" || t === "[") {
            depth += 1;
          } else {
            if (depth === 2 && key !== null && t !== "]") {
              out[key] = text.slice(start, match.index).trim();
              key = null;
            }
            if (t !== ",") { depth -= 1; }
          }
        }
      } catch (error) { /* not shaped as a record: the parsed values are kept instead */ }
      return out;
    },
    safeText: function (value) {
      if (!this.depthAtMost(value, 1000)) { return "(nested more than 1,000 levels)"; }
      try { return JSON.stringify(value).slice(0, this.MAX_ENTRY_CHARS); } catch (error) {
        return String(value).slice(0, this.MAX_ENTRY_CHARS);
      }
    },
    // JSON with sorted keys, to compare two entries whatever their key order.
    canonical: function (value) {
      if (!value || typeof value !== "object") { return JSON.stringify(value); }
      if (Array.isArray(value)) {
        return "[" + value.map(this.canonical, this).join(",") + "]";
      }
      var self = this;
      return "{" + Object.keys(value).sort().map(function (k) {
        return JSON.stringify(k) + ":" + self.canonical(value[k]);
      }).join(",") + "}";
    },
    readAside: function () {
      var text = storage.readKey(this.ASIDE_KEY);
      try {
        var data = JSON.parse(text || "{}");
        return data && typeof data === "object" && !Array.isArray(data) ? data : {};
      } catch (error) { return { "": String(text).slice(0, this.MAX_ASIDE_CHARS) }; }
    },
    // Keep parts aside (by where they were; a second one at the same place gets a number).
    setAside: function (parts) {
      var keys = Object.keys(parts || {});
      if (!keys.length) { return true; }
      var kept = this.readAside();
      var known = {};
      Object.keys(kept).forEach(function (k) { known[kept[k]] = true; });
      keys.forEach(function (where) {
        var text = typeof parts[where] === "string" ? parts[where] : String(parts[where]);
        if (known[text]) { return; }
        var key = where, n = 1;
        while (Object.prototype.hasOwnProperty.call(kept, key)) { n += 1; key = where + " (" + n + ")"; }
        kept[key] = text;
      });
      var out = JSON.stringify(kept);
      if (out.length > this.MAX_ASIDE_CHARS) {
        panel.note("Part of your saved progress could not be read, and it is too large to " +
                   "keep aside in this browser; Export progress saves what is kept.");
        return false;
      }
      return storage.writeKey(this.ASIDE_KEY, out);
    },
    // The stored record, checked, for Python: what cannot be read is set aside first.
    load: function () {
      var text = storage.read();
      var checked = this.check(text);
      if (checked.record === null) { return null; }
      if (Object.keys(checked.aside).length) {
        if (!this.setAside(checked.aside)) { return text; } // nothing is dropped unkept
        var clean = JSON.stringify(checked.record, null, 1);
        storage.write(clean);
        this.notices.push(checked.problem ?
          "The progress saved in this browser could not be read (" + checked.problem + "), " +
          "so it starts again from nothing; what was saved is kept aside (Export progress " +
          "includes it)." :
          Object.keys(checked.aside).length + " part(s) of the progress saved in this browser " +
          "could not be read; they are kept aside (Export progress includes them) and the " +
          "rest carried over.");
        return clean;
      }
      return text;
    },
    // Whether Python's record may replace the one it was sent (``sent``: that text),
    // for a request of ``payload``: "" when it may, else why not.
    refusal: function (progress, sent, payload) {
      if (typeof progress.text !== "string") { return "it holds no record"; }
      var next = this.check(progress.text);
      if (next.problem || next.record === null) { return "it is " + (next.problem || "empty"); }
      if (Object.keys(next.aside).length) { return "it holds entries that are not records"; }
      var before = this.check(sent).record || { exercises: {} };
      var own = payload && typeof payload.exercise === "string" ?
        payload.exercise.replace(":", "-ex") : null;
      var isImport = payload && payload.action === "import";
      var self = this, why = "";
      Object.keys(before.exercises).forEach(function (id) {
        if (why) { return; }
        var old = before.exercises[id], now = next.record.exercises[id];
        if (!now) { why = "it drops the entry " + id; return; }
        if (id === own || isImport) {
          if ((now.attempts || 0) < (old.attempts || 0) || (old.done === true && now.done !== true)) {
            why = "it takes back progress of " + id;
          }
        } else if (self.canonical(old) !== self.canonical(now)) {
          why = "it changes the entry of another exercise, " + id;
        }
      });
      if (!why && !isImport) {
        Object.keys(next.record.exercises).forEach(function (id) {
          if (!why && id !== own && !before.exercises[id]) { why = "it adds an entry for " + id; }
        });
      }
      return why;
    },
    // Store Python's record if it may replace the previous one; the previous one is kept
    // otherwise. Returns whether it was stored.
    accept: function (progress, sent, payload) {
      if (!progress) { return false; }
      if (progress.set_aside && typeof progress.set_aside === "object") {
        this.setAside(progress.set_aside);
      }
      var why = this.refusal(progress, sent, payload);
      if (why) {
        this.notices.push("Your progress was not updated: the checker's record could not be " +
          "trusted (" + why + "); what was saved before is kept.");
        return false;
      }
      return storage.write(progress.text);
    },
    exportText: function () {
      var checked = this.check(storage.read());
      var record = checked.record || { exercises: {}, version: 1 };
      var aside = this.readAside();
      Object.keys(checked.aside).forEach(function (k) { aside[k] = checked.aside[k]; });
      if (Object.keys(aside).length) { record.set_aside = aside; }
      return JSON.stringify(record, null, 1);
    },
    notices: [], // what the learner must be told, shown with the next progress
    takeNotices: function () { return this.notices.splice(0).join(" "); },
  };

  api.progressStore = progressStore; // for the browser tests: what a record check says
  api.learnerSafe = learnerSafe;

  // ---------------------------------------------------------------- the worker
  var engine = {
    worker: null,
    ready: false,
    failed: false,
    queue: [],
    current: null,
    nextId: 1,
    listeners: [],
    start: function () {
      var self = this;
      this.ready = false;
      stats.starts += 1;
      var timer = window.setTimeout(function () {
        self.fail("no answer from Python after " + Math.round(config.bootTimeoutMs / 1000) +
                  " s", true);
      }, config.bootTimeoutMs);
      try {
        this.worker = new Worker(this.workerURL(), { type: "module", name: "gpulesson-exercises" });
      } catch (error) {
        window.clearTimeout(timer);
        this.fail(String(error && error.message || error));
        return;
      }
      var worker = this.worker;
      worker.onerror = function (event) {
        event.preventDefault();
        if (worker !== self.worker) { return; }
        window.clearTimeout(timer);
        if (self.ready && self.current) { // Python itself crashed while checking
          self.restart("error", "Python stopped while checking your function (" +
                       (event.message || "the worker failed") + "); it is restarting.");
        } else {
          self.fail("its script could not be loaded");
        }
      };
      worker.onmessage = function (event) {
        if (worker !== self.worker) { return; }
        var message = event.data;
        if (!message || typeof message !== "object") { return; }
        if (message.type === "ready" && !self.ready) {
          window.clearTimeout(timer);
          self.ready = true;
          self.failed = false;
          stats.readies += 1;
          if (stats.bootMs === null) { stats.bootMs = message.bootMs; stats.info = message; }
          self.listeners.forEach(function (listener) { listener("ready"); });
          self.pump();
        } else if (message.type === "answer") {
          var job = self.current;
          // only the worker's dispatcher knows the request's nonce: a message a learner's
          // code posts itself never passes for an answer
          if (!job || job.id !== message.id || job.nonce !== message.nonce) { return; }
          window.clearTimeout(job.timer);
          self.current = null;
          stats.roundTrips.push(performance.now() - job.sent);
          stats.python.push(typeof message.ms === "number" ? message.ms : null);
          var answer;
          try {
            answer = learnerSafe.answer(JSON.parse(String(message.json).slice(0, 8 * 1024 * 1024)));
          } catch (error) {
            answer = learnerSafe.answer({ status: "error",
                                          message: "The checker's answer could not be read." });
          }
          answer.sent = job.payload.progress;
          answer.request = job.payload;
          // a learner's code ran in this worker: the next request gets a fresh one
          var recycle = answer.restart || job.payload.action === "code";
          job.callback(answer);
          if (recycle) {
            // the fresh worker starts now, not at the next check: Python is most often
            // ready again (and the lesson imported, below) by the time the learner checks
            self.recycle();
            self.stopped = false;
            self.start();
          } else { self.pump(); }
        } else if (message.type === "failed" && !self.ready) {
          window.clearTimeout(timer);
          self.fail(message.message);
        }
      };
      worker.postMessage({ type: "boot", pyodide: config.pyodide, pack: config.pack,
                           snapshot: config.snapshot });
    },
    // The worker's script, started from a blob: URL so that the worker inherits this
    // page's Content-Security-Policy (connect-src 'self'): a worker loaded from its own
    // URL would take its policy from its response's headers, which a static host sets
    // for no one.
    workerURL: function () {
      if (!this.blobURL) {
        var source = "import " + JSON.stringify(config.worker) + ";\n";
        this.blobURL = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
      }
      return this.blobURL;
    },
    // Stop the worker a learner's code ran in; the next request starts a fresh one (not
    // before: a page left meanwhile downloads nothing). The exercises stay as they are.
    recycle: function () {
      if (this.worker) { this.worker.terminate(); this.worker = null; }
      this.ready = false;
      this.stopped = true;
      stats.recycled = (stats.recycled || 0) + 1;
    },
    fail: function (reason, keepWaiting) {
      if (this.ready) { return; }
      if (!keepWaiting && this.worker) { this.worker.terminate(); this.worker = null; }
      this.failed = true;
      this.listeners.forEach(function (listener) { listener("failed", reason); });
    },
    // Stop the worker (a function that runs too long), answer the request it was on, and
    // start a fresh one; queued requests wait for it.
    restart: function (status, message) {
      var job = this.current;
      this.current = null;
      if (this.worker) { this.worker.terminate(); this.worker = null; }
      this.ready = false;
      stats.restarts += 1;
      this.listeners.forEach(function (listener) { listener("restarting"); });
      if (job) {
        window.clearTimeout(job.timer);
        job.callback(learnerSafe.answer({ status: status, message: message }));
      }
      this.start();
    },
    request: function (payload, callback, limitMs) {
      this.queue.push({ payload: payload, callback: callback, limitMs: limitMs || 0 });
      if (this.stopped) { this.stopped = false; this.start(); }
      this.pump();
    },
    pump: function () {
      if (!this.ready || this.current || !this.queue.length) { return; }
      var self = this;
      var job = this.current = this.queue.shift();
      job.id = this.nextId++;
      job.nonce = learnerSafe.nonce();
      job.payload.progress = progressStore.load(); // checked; unreadable parts set aside
      job.sent = performance.now();
      if (job.limitMs) {
        job.timer = window.setTimeout(function () {
          if (self.current === job) {
            var seconds = Math.round(job.limitMs / 100) / 10;
            self.restart("timeout", "Your function was still running after " + seconds +
                         " s, so it was stopped: is there a loop that never ends? Python " +
                         "restarts in a few seconds; fix the code and check it again.");
          }
        }, job.limitMs);
      }
      this.worker.postMessage({ type: "call", id: job.id, nonce: job.nonce,
                               json: JSON.stringify(job.payload) });
    },
  };

  // ---------------------------------------------------------------- the page's panel
  var panel = {
    status: null, box: null, summary: null, message: null, slug: null,
    init: function (slug) {
      this.slug = slug;
      this.status = document.querySelector("[data-gl-status]");
      this.box = document.querySelector("[data-gl-progress]");
      if (this.box) {
        this.summary = this.box.querySelector("[data-progress-summary]");
        this.message = this.box.querySelector("[data-progress-message]");
        var exportButton = this.box.querySelector("[data-progress-export]");
        var importButton = this.box.querySelector("[data-progress-import]");
        var file = this.box.querySelector("[data-progress-file]");
        if (exportButton) { exportButton.addEventListener("click", exportProgress); }
        if (importButton && file) {
          importButton.addEventListener("click", function () { file.click(); });
          file.addEventListener("change", function () {
            if (file.files && file.files[0]) { importProgress(file.files[0]); }
            file.value = "";
          });
        }
      }
    },
    say: function (text) { if (this.status) { this.status.textContent = text; } },
    note: function (text) { if (this.message) { this.message.textContent = text || ""; } },
    // Show (and keep, if it may be kept: progressStore.accept) the progress of an answer.
    show: function (answer) {
      var progress = answer && answer.progress;
      if (!progress || typeof progress !== "object") { return; }
      var stored = progressStore.accept(progress, answer.sent, answer.request);
      if (this.box) { this.box.hidden = false; }
      if (stored && this.summary && typeof progress.summary === "string") {
        this.summary.textContent = "Your progress in this browser: " +
          progress.summary.slice(0, 500);
      }
      var done = stored && Array.isArray(progress.done) ? progress.done : null;
      if (done) {
        api.exercises.forEach(function (ex) { ex.markDone(done.indexOf(ex.number) >= 0); });
      }
      var notes = [typeof progress.reset === "string" ? progress.reset.slice(0, 500) : "",
                   progressStore.takeNotices(), storage.problem || ""];
      var said = notes.filter(Boolean).join(" ");
      if (said) { this.note(said); }
      return said;
    },
  };

  function exportProgress() {
    var text = progressStore.exportText(); // the record, and what was kept aside
    var link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([text], { type: "application/json" }));
    link.download = "gpulesson-progress.json";
    document.body.appendChild(link);
    link.click();
    link.remove();
    window.setTimeout(function () { URL.revokeObjectURL(link.href); }, 1000);
    panel.note("Saved gpulesson-progress.json to your downloads. For Jupyter, rename it " +
               ".gpulesson-progress.json and put it next to the notebook.");
  }

  function importProgress(file) {
    var reader = new FileReader();
    reader.onload = function () {
      engine.request({ action: "import", lesson: panel.slug, imported: String(reader.result) },
        function (answer) {
          if (answer.status === "error" || answer.status === "invalid") {
            panel.note(answer.message);
            return;
          }
          if (!panel.show(answer)) { panel.note(answer.message); }
        });
    };
    reader.onerror = function () { panel.note("That file could not be read."); };
    reader.readAsText(file);
  }

  // ---------------------------------------------------------------- one exercise
  // The parts of an exercise's markup (written by scripts/gl_exercises.py): the property of
  // an Exercise that holds each, and the selector that finds it (null where it is absent).
  var PARTS = { live: "[data-gl-live]", form: "[data-gl-form]", answer: "[data-answer]",
                button: "button[data-check]", feedback: "[data-feedback]",
                output: "[data-output]", doneNote: "[data-done-note]",
                hintButton: "button[data-hint]", hintsShown: "[data-hints-shown]",
                staticHints: "details.gl-hints", solution: "details.gl-solution" };

  function Exercise(root) {
    this.root = root;
    this.ref = root.getAttribute("data-exercise");
    this.number = Number(this.ref.split(":")[1]);
    this.kind = root.getAttribute("data-kind");
    Object.keys(PARTS).forEach(function (part) {
      this[part] = root.querySelector(PARTS[part]);
    }, this);
    this.hints = this.staticHints ? Array.prototype.slice.call(
      this.staticHints.querySelectorAll(":scope > ol > li")) : [];
    this.hintCount = 0;
    this.committed = false;
    this.busy = false;
    var self = this;
    if (this.form) {
      this.form.addEventListener("submit", function (event) {
        event.preventDefault();
        self.check();
      });
    }
    if (this.hintButton) {
      this.hintButton.addEventListener("click", function () { self.nextHint(); });
    }
    if (this.kind === "predict") { this.hideMeasurement(); }
  }

  Exercise.prototype.setState = function (state) {
    this.root.setAttribute("data-state", state);
    var waiting = state === "restarting";
    if (this.button) { this.button.disabled = waiting || (this.committed && this.kind === "predict"); }
  };

  // Show the controls (the moment this script runs: answers typed before Python is ready
  // are checked once it is), and swap the static lists for their live forms.
  Exercise.prototype.show = function () {
    if (!this.live) { return; }
    this.live.hidden = false;
    if (this.staticHints && this.hintButton) { this.staticHints.hidden = true; }
    this.swapped = [];
    // the radio buttons replace the list of options, the editor the signature
    var query = { choice: ".gl-answer-format, ol.gl-options",
                  code: ".gl-answer-format, pre.gl-signature" }[this.kind];
    var self = this;
    if (query) {
      Array.prototype.forEach.call(this.root.querySelectorAll(query), function (el) {
        if (el.closest("[data-gl-live]")) { return; }
        el.hidden = true;
        self.swapped.push(el);
      });
    }
    this.setState("loading");
  };

  // Python could not start: back to the static rendering, with the reason.
  Exercise.prototype.unavailable = function (state, message) {
    if (this.form) { this.form.hidden = true; }
    (this.swapped || []).forEach(function (el) { el.hidden = false; });
    this.setFeedback("error", message);
    this.setState(state);
    if (this.staticHints && this.hintCount === 0) {
      this.staticHints.hidden = false;
      if (this.hintButton) { this.hintButton.parentNode.hidden = true; }
    }
    this.revealMeasurement();
  };

  Exercise.prototype.makeEditor = function () {
    if (this.kind !== "code" || !window.GLCodeEditor || this.editor) { return; }
    var textarea = this.answer;
    var self = this;
    var label = this.root.querySelector("label[for='" + textarea.id + "']");
    this.editor = window.GLCodeEditor.create(textarea, {
      attributes: {
        "data-answer": "",
        role: "textbox",
        "aria-labelledby": label ? label.id : "",
        "aria-describedby": textarea.getAttribute("aria-describedby") || "",
      },
      onSubmit: function () { self.check(); },
    });
    this.answer = this.editor.element;
    if (label) {
      label.removeAttribute("for");
      label.addEventListener("click", function () { self.editor.focus(); });
    }
  };

  Exercise.prototype.payload = function () {
    if (this.kind === "code") {
      return { action: "code", exercise: this.ref, source: String(this.answer.value) };
    }
    if (this.kind === "choice") {
      var chosen = this.answer.querySelector("input[type=radio]:checked");
      return { action: "check", exercise: this.ref, answer: chosen ? chosen.value : "" };
    }
    if (this.kind === "predict") {
      var measured = Number(this.root.getAttribute("data-measured"));
      if (this.root.hasAttribute("data-measured") && isFinite(measured)) {
        return { action: "compare", exercise: this.ref, answer: this.answer.value,
                 measured: measured };
      }
    }
    return { action: "check", exercise: this.ref, answer: this.answer.value };
  };

  Exercise.prototype.check = function () {
    if (this.busy || this.root.getAttribute("data-state") === "restarting" ||
        (this.kind === "predict" && this.committed)) { return; }
    if (engine.failed) { return; }
    var self = this;
    this.busy = true;
    this.feedback.setAttribute("data-status", "");
    this.feedback.setAttribute("aria-busy", "true");
    this.feedback.textContent = engine.ready ? "Checking\u2026" :
      "Your answer is checked as soon as Python has started\u2026";
    // read at each check, so that a test can lower it for one call only
    var limit = this.kind === "code" ?
      Number(window.GL_EXERCISE_TIME_LIMIT_MS || config.timeLimitMs) : 0;
    engine.request(this.payload(), function (answer) { self.answered(answer); }, limit);
  };

  Exercise.prototype.setFeedback = function (status, message, details, html) {
    var box = this.feedback;
    box.textContent = "";
    box.removeAttribute("aria-busy");
    if (SYMBOLS[status]) {
      var symbol = document.createElement("span");
      symbol.setAttribute("aria-hidden", "true");
      symbol.className = "gl-ex-symbol";
      symbol.textContent = SYMBOLS[status] + " ";
      box.appendChild(symbol);
    }
    var text = document.createElement("span");
    text.className = "gl-ex-message";
    // Python escapes it (exercises.browser.message_html), but a learner's code may have
    // patched Python: rebuilt here from text and allowed tags only
    if (html) { text.appendChild(learnerSafe.fragment(html)); }
    else { text.textContent = message || ""; }
    box.appendChild(text);
    (details || []).forEach(function (line) {
      var small = document.createElement("small");
      small.textContent = line;
      box.appendChild(document.createElement("br"));
      box.appendChild(small);
    });
    box.setAttribute("data-status", status);
    box.className = "gl-ex-feedback gl-ex-" + status;
  };

  Exercise.prototype.answered = function (answer) {
    this.busy = false;
    var status = answer.status || "error";
    this.setFeedback(status, answer.message, answer.details, answer.message_html);
    if (this.answer && this.kind !== "choice" && this.kind !== "code") {
      if (status === "invalid") { this.answer.setAttribute("aria-invalid", "true"); }
      else { this.answer.removeAttribute("aria-invalid"); }
    }
    if (this.output) {
      var text = answer.output || "";
      if (answer.output_dropped) {
        text += "\n\u2026 (" + answer.output_dropped.toLocaleString("en") +
          " more characters not shown)";
      }
      this.output.hidden = !text;
      this.output.querySelector("pre").textContent = text;
    }
    if (status === "correct" && this.solution) { this.solution.open = true; }
    if (this.kind === "predict" && (status === "compared" || status === "committed")) {
      this.committed = true;
      this.answer.readOnly = true;
      this.button.disabled = true;
      this.button.textContent = "Prediction committed";
      this.revealMeasurement();
    }
    panel.show(answer);
  };

  Exercise.prototype.nextHint = function () {
    if (!this.hintsShown || this.hintCount >= this.hints.length) { return; }
    var item = document.createElement("li");
    item.innerHTML = this.hints[this.hintCount].innerHTML; // built from the bank at build time
    this.hintsShown.querySelector("ol").appendChild(item);
    this.hintsShown.hidden = false;
    this.hintCount += 1;
    if (this.hintCount >= this.hints.length) {
      this.hintButton.textContent = "No more hints";
      this.hintButton.disabled = true;
    } else {
      this.hintButton.textContent = "Hint (" + (this.hintCount + 1) + " of " +
        this.hints.length + ")";
    }
  };

  Exercise.prototype.markDone = function (done) {
    if (this.doneNote) { this.doneNote.hidden = !done; }
    this.root.classList.toggle("gl-ex-is-done", Boolean(done));
  };

  // Predict, then reveal: the build's measurement stays hidden until a prediction is
  // committed (or the reader asks to see it without one).
  Exercise.prototype.hideMeasurement = function () {
    var id = this.root.getAttribute("data-measurement");
    var cell = id && document.getElementById(id);
    var output = cell && cell.querySelector(".cell_output");
    if (!output) { return; }
    this.measurementOutput = output;
    output.hidden = true;
    var note = this.measurementNote = document.createElement("div");
    note.className = "gl-measurement-note";
    var text = document.createElement("p");
    text.textContent = "What this cell measured when the site was built appears here once " +
      "you have committed a prediction in exercise " + this.number + " above.";
    var button = document.createElement("button");
    button.type = "button";
    button.className = "gl-ex-button";
    button.textContent = "Show the measurement without predicting";
    var self = this;
    button.addEventListener("click", function () { self.revealMeasurement(); });
    note.appendChild(text);
    note.appendChild(button);
    output.parentNode.insertBefore(note, output);
  };

  Exercise.prototype.revealMeasurement = function () {
    if (!this.measurementOutput) { return; }
    this.measurementOutput.hidden = false;
    if (this.measurementNote) { this.measurementNote.remove(); this.measurementNote = null; }
  };

  // ---------------------------------------------------------------- start
  function loadEditor(callback) {
    var tag = document.createElement("script");
    tag.src = config.editor;
    tag.onload = callback;
    tag.onerror = callback; // the text area stays: a plain editor still works
    document.head.appendChild(tag);
  }

  function start() {
    // an exercise whose checker needs a library a browser cannot load stays static
    var roots = document.querySelectorAll("[data-exercise]:not([data-state=unavailable])");
    if (!roots.length) { return; }
    var exercises = Array.prototype.map.call(roots, function (root) { return new Exercise(root); });
    api.exercises = exercises;
    panel.init(exercises[0].ref.split(":")[0]);
    if (window.location.protocol === "file:") {
      panel.say(STATUS.file);
      exercises.forEach(function (ex) { ex.revealMeasurement(); ex.setState("file"); });
      return;
    }
    exercises.forEach(function (ex) { ex.show(); });
    panel.say(STATUS.loading);
    if (exercises.some(function (ex) { return ex.kind === "code"; })) {
      loadEditor(function () { exercises.forEach(function (ex) { ex.makeEditor(); }); });
    }
    var first = true;
    engine.listeners.push(function (event, reason) {
      if (event === "ready") {
        exercises.forEach(function (ex) { ex.setState("live"); });
        panel.say(STATUS.live);
        if (first) {
          first = false;
          stats.pageToLiveMs = performance.now();
          engine.request({ action: "progress", lesson: panel.slug },
                         function (answer) { panel.show(answer); });
        } else {
          // a fresh worker after a code check: import the lesson's exercises now (what the
          // first request above does), not when the learner's next check arrives
          engine.request({ action: "progress", lesson: panel.slug }, function () {});
        }
      } else if (event === "restarting") {
        exercises.forEach(function (ex) { ex.setState("restarting"); });
        panel.say(STATUS.restarting);
      } else if (event === "failed") {
        var message = STATUS.failed(reason);
        panel.say(message);
        exercises.forEach(function (ex) {
          ex.busy = false;
          ex.unavailable("failed", "The checker could not start: the answer and worked " +
                         "solution are folded below.");
        });
      }
    });
    engine.start();
  }

  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); }
  else { start(); }
})();
