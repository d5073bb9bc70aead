/*
 * What the course's loaders (calculators.js, exercises.js) read from their script tag, read
 * one way for both.
 *
 * The build writes this file inline in the <head> of each page that holds a calculator or
 * an exercise (scripts/gl_calculators.py, add_loader), before the deferred loaders: it
 * costs no request, and a page with both kinds of loader holds it once.
 *
 * GLLoader.settings(script) gives, for a loader's <script> element:
 *   siteRoot   the site's root URL (the loaders live at _lib/course/);
 *   pyodide    the vendored Pyodide folder (data-pyodide, site-relative);
 *   snapshot   its start-up snapshot (data-pyodide-snapshot), or null when the build made
 *              none;
 *   pack       the package pack the worker loads (data-pack, site-relative);
 *   worker     the Python worker beside the loader (python-worker.js);
 *   timeoutMs  how long to wait for Python to start (data-timeout, in ms; a page may lower
 *              it with window.GL_CALC_TIMEOUT_MS, as the browser tests do).
 */
window.GLLoader = window.GLLoader || {
  settings: function (script) {
    "use strict";
    var siteRoot = new URL("../../", script.src);
    function onSite(attribute) {
      var value = script.getAttribute(attribute);
      return value ? new URL(value, siteRoot).href : null;
    }
    return {
      siteRoot: siteRoot,
      pyodide: onSite("data-pyodide"),
      snapshot: onSite("data-pyodide-snapshot"),
      pack: onSite("data-pack"),
      worker: new URL("python-worker.js", script.src).href,
      timeoutMs: Number(window.GL_CALC_TIMEOUT_MS || script.getAttribute("data-timeout") ||
                        60000),
    };
  },
};
