/*
 * Set-up for the ipywidgets 8 embed manager on the course site, loaded after RequireJS and
 * before @jupyter-widgets/html-manager's embed-amd.js on pages with saved widget state
 * (see nb_ipywidgets_js in _config.yml; scripts/vendor_js.py publishes this file).
 *
 * 1. Fonts. Each AMD module of the bundle looks for the icon fonts next to the URL RequireJS
 *    gives that module, by default under <page folder>/@jupyter-widgets/, which does not
 *    exist. Map every module the bundle defines so that its URL lies in the vendored copy,
 *    whatever the page's depth (whichever module loads the fonts first then finds them).
 * 2. MathJax. The widgets typeset labels through the MathJax 2 API
 *    (MathJax.Hub.Queue(["Typeset", MathJax.Hub, element])); the site runs MathJax 3,
 *    where that call throws. Bridge it to MathJax 3's typesetPromise, turning the $...$ a
 *    label uses in Jupyter into \(...\), the only inline delimiters the site's MathJax
 *    reads (so prices like "$5" in the narrative never become formulas).
 */
(function () {
  "use strict";
  var here = document.currentScript && document.currentScript.src;
  if (here && typeof window.require === "function" && window.require.config) {
    var vendored = new URL("../jupyter-widgets/", here).href;
    var paths = { "@jupyter-widgets/html-manager/dist": vendored.slice(0, -1) };
    ["base", "base7", "controls", "controls7", "output", "html-manager"].forEach(function (name) {
      paths["@jupyter-widgets/" + name] = vendored + name; // module URL: vendored/<name>.js
    });
    window.require.config({ paths: paths });
  }

  function dollarsToParens(element) {
    var walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    for (var node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.nodeValue.indexOf("$") >= 0) {
        node.nodeValue = node.nodeValue.replace(/\$([^$]+)\$/g, "\\($1\\)");
      }
    }
  }

  function typeset(element) {
    var mathjax = window.MathJax;
    if (!mathjax || !mathjax.startup || !mathjax.startup.promise) {
      // MathJax 3 has not replaced its configuration object yet: retry once it has.
      document.addEventListener("DOMContentLoaded", function () { typeset(element); }, { once: true });
      return;
    }
    if (!element) { return; }
    dollarsToParens(element);
    mathjax.startup.promise
      .then(function () { return mathjax.typesetPromise([element]); })
      .catch(function (error) { console.warn("MathJax could not typeset a widget", error); });
  }

  var hub = {
    Queue: function () {
      for (var i = 0; i < arguments.length; i++) {
        var job = arguments[i];
        if (Array.isArray(job) && job[0] === "Typeset") { typeset(job[2]); }
        else if (typeof job === "function") { job(); }
      }
    },
  };

  function attach() {
    if (window.MathJax && !window.MathJax.Hub) { window.MathJax.Hub = hub; }
  }
  attach(); // the configuration object, in case a widget renders before MathJax loads
  document.addEventListener("DOMContentLoaded", attach); // MathJax 3 itself, once loaded
})();
