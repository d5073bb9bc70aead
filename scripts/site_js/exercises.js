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
    pack: new URL(script.getAttribute("data-pack"), siteRoot).href,
    editor: new URL(script.getAttribute("data-editor"), siteRoot).href,
    worker: new URL("python-worker.js", script.src).href,
    timeLimitMs: Number(script.getAttribute("data-time-limit") || 10000),
    bootTimeoutMs: Number(window.GL_CALC_TIMEOUT_MS || script.getAttribute("data-timeout") ||
                          60000),
  };
  var stats = { pageToLiveMs: null, bootMs: null, roundTrips: [], python: [], restarts: 0,
                info: null };
  var api = { stats: stats, exercises: [] };
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
  };

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
      var timer = window.setTimeout(function () {
        self.fail("no answer from Python after " + Math.round(config.bootTimeoutMs / 1000) +
                  " s", true);
      }, config.bootTimeoutMs);
      try {
        this.worker = new Worker(config.worker, { type: "module", name: "gpulesson-exercises" });
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
        if (message.type === "ready") {
          window.clearTimeout(timer);
          self.ready = true;
          self.failed = false;
          if (stats.bootMs === null) { stats.bootMs = message.bootMs; stats.info = message; }
          self.listeners.forEach(function (listener) { listener("ready"); });
          self.pump();
        } else if (message.type === "answer") {
          var job = self.current;
          if (!job || job.id !== message.id) { return; }
          window.clearTimeout(job.timer);
          self.current = null;
          stats.roundTrips.push(performance.now() - job.sent);
          stats.python.push(message.ms);
          var answer;
          try { answer = JSON.parse(message.json); } catch (error) {
            answer = { status: "error", message: "The checker's answer could not be read.",
                       details: [], progress: null };
          }
          job.callback(answer);
          self.pump();
        } else if (message.type === "failed") {
          window.clearTimeout(timer);
          self.fail(message.message);
        }
      };
      worker.postMessage({ type: "boot", pyodide: config.pyodide, pack: config.pack,
                           snapshot: config.snapshot });
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
        job.callback({ status: status, message: message, details: [], progress: null });
      }
      this.start();
    },
    request: function (payload, callback, limitMs) {
      this.queue.push({ payload: payload, callback: callback, limitMs: limitMs || 0 });
      this.pump();
    },
    pump: function () {
      if (!this.ready || this.current || !this.queue.length) { return; }
      var self = this;
      var job = this.current = this.queue.shift();
      job.id = this.nextId++;
      var stored = storage.read();
      job.payload.progress = stored;
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
      this.worker.postMessage({ type: "call", id: job.id, json: JSON.stringify(job.payload) });
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
    show: function (progress) {
      if (!progress) { return; }
      if (typeof progress.text === "string") { storage.write(progress.text); }
      if (this.box) { this.box.hidden = false; }
      if (this.summary && progress.summary) {
        this.summary.textContent = "Your progress in this browser: " + progress.summary;
      }
      var done = progress.done || [];
      api.exercises.forEach(function (ex) { ex.markDone(done.indexOf(ex.number) >= 0); });
      if (progress.reset) { this.note(progress.reset); }
      if (storage.problem) { this.note(storage.problem); }
    },
  };

  function exportProgress() {
    var text = storage.read() || JSON.stringify({ exercises: {}, version: 1 }, null, 1);
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
          panel.show(answer.progress);
          panel.note(answer.message);
        });
    };
    reader.onerror = function () { panel.note("That file could not be read."); };
    reader.readAsText(file);
  }

  // ---------------------------------------------------------------- one exercise
  function Exercise(root) {
    this.root = root;
    this.ref = root.getAttribute("data-exercise");
    this.number = Number(this.ref.split(":")[1]);
    this.kind = root.getAttribute("data-kind");
    this.live = root.querySelector("[data-gl-live]");
    this.form = root.querySelector("[data-gl-form]");
    this.answer = root.querySelector("[data-answer]");
    this.button = root.querySelector("button[data-check]");
    this.feedback = root.querySelector("[data-feedback]");
    this.output = root.querySelector("[data-output]");
    this.doneNote = root.querySelector("[data-done-note]");
    this.hintButton = root.querySelector("button[data-hint]");
    this.hintsShown = root.querySelector("[data-hints-shown]");
    this.staticHints = root.querySelector("details.gl-hints");
    this.solution = root.querySelector("details.gl-solution");
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
    if (html) { text.innerHTML = html; } // escaped by Python (exercises.browser.message_html)
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
    panel.show(answer.progress);
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
                         function (answer) { panel.show(answer.progress); });
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
