/*
 * The site's calculators, page side: bring the static calculators of a page to life.
 *
 * Added by scripts/gl_calculators.py only to pages whose HTML holds a calculator
 * (<div class="gl-calculator" data-calculator=NAME>, the markup of
 * gpulesson.widgets.static_html, showing the worked example computed at build time). It
 * starts one Web Worker (python-worker.js) that runs the course's Python package in
 * Pyodide; every change of an input is sent there and the answer (new input values from
 * a preset, formatted outputs or an error message) is written back into the page. This
 * file holds no formula and no preset rule: it moves text between the page and Python.
 *
 * Attributes of this script tag: data-pyodide (site-relative Pyodide folder),
 * data-pyodide-snapshot (site-relative start-up snapshot, when the build made one), data-pack
 * (site-relative package pack), data-timeout (ms before giving up on Python; a page may
 * lower it with window.GL_CALC_TIMEOUT_MS, as the browser tests do).
 *
 * Python starts when a calculator comes near the screen. Each calculator element gets
 * data-gl-state = loading | live | failed | file and
 * data-gl-pending = number of changes not yet shown (0 when the outputs are current), and a
 * status line (role="status"). window.GLCalculators.stats holds the boot and update times.
 */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script) { return; }
  var siteRoot = new URL("../../", script.src); // this file lives at _lib/course/
  var MISSING = "\u2014";
  var UNREADABLE = "unreadable"; // gpulesson.browser.UNREADABLE
  var config = {
    pyodide: new URL(script.getAttribute("data-pyodide"), siteRoot).href,
    snapshot: script.getAttribute("data-pyodide-snapshot")
      ? new URL(script.getAttribute("data-pyodide-snapshot"), siteRoot).href : null,
    pack: new URL(script.getAttribute("data-pack"), siteRoot).href,
    worker: new URL("python-worker.js", script.src).href,
    timeoutMs: Number(window.GL_CALC_TIMEOUT_MS || script.getAttribute("data-timeout") || 60000),
  };
  var stats = { bootMs: null, pageToReadyMs: null, updates: [], python: [], info: null };
  var api = { stats: stats, calculators: [] };
  window.GLCalculators = api;

  var MESSAGES = {
    loading: "Starting the live calculator\u2026 Until it is ready, the numbers below are " +
      "the worked example, computed when this site was built.",
    pending: "Starting the live calculator\u2026 Your change will be computed as soon as " +
      "it is ready.",
    live: "Live: every change is computed in your browser by the course's own Python " +
      "package, the one the notebooks use.",
    file: "This page was opened from a file, and browsers do not let a file start the " +
      "live calculator: the numbers below are the worked example. To use the calculator, " +
      "serve the site: run \"make serve\" in the course folder and open " +
      "http://127.0.0.1:8000/ (any web server works).",
    failed: function (reason) {
      return "The live calculator could not start (" + reason + "). The numbers below " +
        "are the worked example, computed when this site was built. If you host this " +
        "site, serve .mjs files as text/javascript and .wasm files as application/wasm " +
        "(\"make serve\" does).";
    },
  };

  function Calculator(element) {
    this.element = element;
    this.name = element.getAttribute("data-calculator");
    this.controls = {};
    this.outputs = {};
    this.pending = [];      // inputs changed since the last request, in order
    this.inFlight = false;
    this.dirty = false;     // changed before Python was ready
    this.ready = false;
    var self = this;
    Array.prototype.forEach.call(element.querySelectorAll("input[name], select[name]"),
      function (control) {
        self.controls[control.name] = control;
        control.addEventListener(control.tagName === "SELECT" ? "change" : "input",
          function () { self.changed(control.name); });
        control.setAttribute("data-gl-describedby", control.getAttribute("aria-describedby") || "");
      });
    Array.prototype.forEach.call(element.querySelectorAll("output[data-output]"),
      function (output) { self.outputs[output.getAttribute("data-output")] = output; });
    this.error = element.querySelector(".gl-calc-error");
    if (this.error && !this.error.id) { this.error.id = (element.id || this.name) + "-error"; }
    this.outputBox = element.querySelector(".gl-calc-outputs");
    this.status = document.createElement("p");
    this.status.className = "gl-calc-status";
    this.status.setAttribute("role", "status");
    var description = element.querySelector(".gl-calc-description");
    if (description) { description.insertAdjacentElement("afterend", this.status); }
    else { element.insertBefore(this.status, element.firstChild); }
    this.setState("loading", MESSAGES.loading);
    element.setAttribute("data-gl-pending", "0");
  }

  Calculator.prototype.setState = function (state, message) {
    this.element.setAttribute("data-gl-state", state);
    this.status.textContent = message;
    this.status.classList.toggle("gl-calc-status-problem", state === "failed" || state === "file");
  };

  Calculator.prototype.values = function () {
    var values = {};
    for (var key in this.controls) {
      var control = this.controls[key];
      // A number box whose text the browser cannot read ("1e309", "1e") reports "": send
      // gpulesson.browser.UNREADABLE, or the reader who typed a value is told it needs one.
      values[key] = control.validity && control.validity.badInput ? UNREADABLE : control.value;
    }
    return values;
  };

  Calculator.prototype.changed = function (name) {
    var at = this.pending.indexOf(name);
    if (at >= 0) { this.pending.splice(at, 1); }
    this.pending.push(name);
    this.element.setAttribute("data-gl-pending", String(this.pending.length + (this.inFlight ? 1 : 0)));
    if (!this.ready) {
      if (!this.dirty && this.element.getAttribute("data-gl-state") === "loading") {
        this.dirty = true;
        this.status.textContent = MESSAGES.pending;
        if (this.outputBox) { this.outputBox.classList.add("gl-calc-stale"); }
      }
      return;
    }
    this.send();
  };

  Calculator.prototype.send = function (force) {
    if (this.inFlight || !this.ready || (!force && !this.pending.length)) { return; }
    var changed = this.pending;
    this.pending = [];
    this.inFlight = true;
    this.element.setAttribute("data-gl-pending", "1");
    var self = this;
    var sent = performance.now();
    engine.request(this.name, this.values(), changed, function (answer, pythonMs) {
      self.inFlight = false;
      self.show(answer);
      stats.updates.push(performance.now() - sent);
      stats.python.push(pythonMs);
      if (self.pending.length) { self.send(); }
      else { self.element.setAttribute("data-gl-pending", "0"); }
    });
  };

  Calculator.prototype.show = function (answer) {
    var key;
    this.last = answer; // the last answer, as JSON gave it (big integers are strings)
    for (key in answer.updates) {
      // an input the reader edited while Python was answering keeps the reader's value
      if (this.controls[key] && this.pending.indexOf(key) < 0) {
        this.controls[key].value = String(answer.updates[key]);
      }
    }
    var result = answer.result;
    for (key in this.controls) {
      var control = this.controls[key];
      var invalid = !result.ok && result.input === key;
      var described = control.getAttribute("data-gl-describedby");
      if (invalid) {
        control.setAttribute("aria-invalid", "true");
        control.setAttribute("aria-describedby", (described + " " + this.error.id).trim());
      } else if (control.hasAttribute("aria-invalid")) {
        control.removeAttribute("aria-invalid");
        if (described) { control.setAttribute("aria-describedby", described); }
        else { control.removeAttribute("aria-describedby"); }
      }
    }
    for (key in this.outputs) {
      var text = result.ok ? result.text[key] : MISSING;
      if (this.outputs[key].textContent !== text) { this.outputs[key].textContent = text; }
    }
    if (this.error) {
      // an error, or the warnings of a result that computed (a sparse peak typed as dense)
      this.error.textContent = result.ok ? (result.warnings || []).map(function (w) {
        return w.message;
      }).join(" ") : result.error;
    }
    if (this.outputBox) { this.outputBox.classList.remove("gl-calc-stale"); }
    this.element.classList.toggle("gl-calc-invalid", !result.ok);
    var plot = this.element.querySelector(".gl-calc-plot figcaption");
    if (plot && this.pending.length === 0 && !plot.getAttribute("data-gl-noted") &&
        this.element.getAttribute("data-gl-state") === "live" && this.edited) {
      plot.setAttribute("data-gl-noted", "1");
      plot.appendChild(document.createTextNode(
        " (the plot shows the worked example; run the notebook to redraw it)"));
    }
  };

  // One worker per page, shared by every calculator on it.
  var engine = {
    worker: null,
    nextId: 1,
    callbacks: {},
    start: function (calculators) {
      var self = this;
      // A server that sends .wasm with the wrong type makes Pyodide hang without an error:
      // say so after the timeout, but keep waiting (a slow connection may still get there).
      var timer = window.setTimeout(function () {
        self.fail("no answer from Python after " + Math.round(config.timeoutMs / 1000) + " s",
                  calculators, true);
      }, config.timeoutMs);
      try {
        this.worker = new Worker(config.worker, { type: "module", name: "gpulesson" });
      } catch (error) {
        window.clearTimeout(timer);
        this.fail(String(error && error.message || error), calculators);
        return;
      }
      this.worker.onerror = function (event) {
        window.clearTimeout(timer);
        event.preventDefault();
        self.fail("its script could not be loaded", calculators);
      };
      this.worker.onmessage = function (event) {
        var message = event.data;
        if (message.type === "ready") {
          window.clearTimeout(timer);
          stats.bootMs = message.bootMs;
          stats.pageToReadyMs = performance.now();
          stats.info = message;
          calculators.forEach(function (calc) {
            calc.ready = true;
            calc.setState("live", MESSAGES.live);
            calc.send(true); // recompute from what the page shows now (a browser may restore edits)
          });
        } else if (message.type === "answer") {
          var callback = self.callbacks[message.id];
          delete self.callbacks[message.id];
          if (callback) { callback(JSON.parse(message.json), message.ms); }
        } else if (message.type === "failed") {
          window.clearTimeout(timer);
          self.fail(message.message, calculators);
        }
      };
      this.worker.postMessage({ type: "boot", pyodide: config.pyodide, pack: config.pack,
                                snapshot: config.snapshot });
    },
    fail: function (reason, calculators, keepWaiting) {
      if (this.worker && !keepWaiting) {
        this.worker.terminate();
        this.worker = null;
      }
      calculators.forEach(function (calc) {
        if (calc.ready) { return; }
        calc.setState("failed", MESSAGES.failed(reason));
        if (calc.outputBox) { calc.outputBox.classList.remove("gl-calc-stale"); }
      });
    },
    request: function (name, values, changed, callback) {
      var id = this.nextId++;
      this.callbacks[id] = callback;
      this.worker.postMessage({ type: "react", id: id, name: name, values: values, changed: changed });
    },
  };

  function start() {
    var elements = document.querySelectorAll(".gl-calculator[data-calculator]");
    if (!elements.length) { return; }
    var calculators = Array.prototype.map.call(elements, function (element) {
      var calc = new Calculator(element);
      element.addEventListener("input", function () { calc.edited = true; });
      element.addEventListener("change", function () { calc.edited = true; });
      return calc;
    });
    api.calculators = calculators;
    if (window.location.protocol === "file:") {
      calculators.forEach(function (calc) { calc.setState("file", MESSAGES.file); });
      return;
    }
    // Start Python when a calculator comes near the screen (or is focused, or edited), not
    // before: a reader who never scrolls to it downloads none of Pyodide's 6 MB.
    var started = false;
    var boot = function () {
      if (started) { return; }
      started = true;
      if (observer) { observer.disconnect(); }
      engine.start(calculators);
    };
    var observer = null;
    if ("IntersectionObserver" in window) {
      observer = new IntersectionObserver(function (entries) {
        if (entries.some(function (entry) { return entry.isIntersecting; })) { boot(); }
      }, { rootMargin: "600px 0px" });
      Array.prototype.forEach.call(elements, function (element) { observer.observe(element); });
    } else {
      boot();
    }
    Array.prototype.forEach.call(elements, function (element) {
      element.addEventListener("focusin", boot);
      element.addEventListener("input", boot);
    });
  }

  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); }
  else { start(); }
})();
