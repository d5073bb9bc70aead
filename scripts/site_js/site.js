/*
 * Small repairs on every page of the site (added by scripts/gl_exercises.py).
 *
 * - Search results: Sphinx's search shows, under each hit, a passage of the page's
 *   [role=main] element, which in this theme also holds the page's buttons and its
 *   "Contents" list, so results read "Contents The nine lessons What you need ...". The
 *   passage is taken from the article alone.
 * - Display equations wider than the text column (the pipeline-bubble equation) are set
 *   smaller, down to 70 % (85 % on a phone), until they fit; one that still does not fit
 *   scrolls sideways.
 * - Whatever scrolls sideways (an equation, a wide table, an output table on a phone)
 *   shows a shadow on the side that has more to see (gpulesson.css) and becomes a
 *   keyboard stop, so the arrow keys can scroll it.
 * - Folded boxes (sphinx-togglebutton's dropdowns): the extension names every button
 *   "Toggle hidden content", which does not say what opens. Each button is named after its
 *   box's title, led by the hint the button shows ("Click to show: Answer"), and renamed
 *   whenever the extension opens or closes the box.
 */
(function () {
  "use strict";

  // ------------------------------------------------------------ search passages
  /* global Search */
  if (typeof Search !== "undefined" && Search && typeof Search.htmlToText === "function") {
    var original = Search.htmlToText;
    Search.htmlToText = function (htmlString, anchor) {
      var doc = new DOMParser().parseFromString(htmlString, "text/html");
      var article = doc.querySelector("[role=main] article") || doc.querySelector("article");
      if (!article) { return original(htmlString, anchor); }
      var drop = [".headerlink", "script", "style", ".bd-header-article", ".bd-sidebar-secondary",
                  ".prev-next-area", ".toctree-wrapper", ".gl-ex-intro", ".gl-ex-live",
                  ".gl-calc-status"];
      drop.forEach(function (query) {
        article.querySelectorAll(query).forEach(function (el) { el.remove(); });
      });
      if (anchor) {
        var part = article.querySelector(anchor);
        if (part) { return part.textContent; }
      }
      return article.textContent;
    };
  }

  // ------------------------------------------------------------ folded boxes
  // The extension adds its buttons when the document has loaded (after this deferred
  // script runs), and sets aria-expanded and data-toggle-hint on each open and close. The
  // visible hint leads the name, so the name holds the button's visible text.
  var TOGGLES = ".admonition-title > button.toggle-button";

  function hint(open) {
    /* global toggleHintShow, toggleHintHide */
    var show = typeof toggleHintShow === "string" && toggleHintShow ? toggleHintShow : "Show";
    var hide = typeof toggleHintHide === "string" && toggleHintHide ? toggleHintHide : "Hide";
    return open ? hide : show;
  }

  function boxTitle(button) {
    var title = button.closest(".admonition-title").cloneNode(true);
    title.querySelectorAll("button, .headerlink").forEach(function (el) { el.remove(); });
    return title.textContent.replace(/\s+/g, " ").trim();
  }

  function nameToggle(button) {
    var title = button.getAttribute("data-gl-title");
    if (title === null) {
      title = boxTitle(button);
      button.setAttribute("data-gl-title", title);
    }
    if (!title) { return; }
    var name = hint(button.getAttribute("aria-expanded") === "true") + ": " + title;
    if (button.getAttribute("aria-label") !== name) { button.setAttribute("aria-label", name); }
  }

  var toggleWatch = typeof MutationObserver === "undefined" ? null :
    new MutationObserver(function (changes) {
      changes.forEach(function (change) { nameToggle(change.target); });
    });

  function nameToggles() {
    Array.prototype.forEach.call(document.querySelectorAll(TOGGLES), function (button) {
      if (!button.hasAttribute("data-gl-title") && toggleWatch) {
        toggleWatch.observe(button, { attributes: true,
                                      attributeFilter: ["aria-expanded", "data-toggle-hint"] });
      }
      nameToggle(button);
    });
  }

  nameToggles();
  document.addEventListener("DOMContentLoaded", nameToggles);
  window.addEventListener("load", nameToggles);

  // ------------------------------------------------------------ wide equations
  // On a phone the text is small already: an equation set below 85 % of it was unreadable
  // (review 4, R-5), so there it scrolls sooner instead.
  var SMALLEST = 0.7, SMALLEST_ON_A_PHONE = 0.85, PHONE = "(max-width: 767.98px)";

  function fit() {
    var shown = document.querySelectorAll("main mjx-container[display='true']");
    var smallest = window.matchMedia && window.matchMedia(PHONE).matches ?
      SMALLEST_ON_A_PHONE : SMALLEST;
    Array.prototype.forEach.call(shown, function (box) {
      box.style.fontSize = "";
      var room = box.clientWidth;
      var needed = box.scrollWidth;
      var scale = 1;
      if (room > 0 && needed > room + 1) {
        scale = Math.max(smallest, Math.floor((room / needed) * 100) / 100);
        box.style.fontSize = Math.round(scale * 100) + "%";
      }
    });
    cue();
  }

  // ------------------------------------------------------------ the scroll cue
  // What scrolls sideways (a wide table, an output table on a phone, an equation) gets a
  // shadow on each side that has more to see, and a keyboard stop so arrows can scroll it.
  // A notebook's own HTML output may wrap a table in a box of its own that scrolls.
  var WATCHED = ".bd-article pre, .bd-article .pst-scrollable-table-container, " +
    ".bd-article mjx-container[display='true'], " +
    ".bd-article .cell_output .text_html > div[style*='overflow']";

  function edges(box) {
    var more = box.scrollWidth - box.clientWidth;
    box.classList.toggle("gl-more-left", more > 1 && box.scrollLeft > 1);
    box.classList.toggle("gl-more-right", more > 1 && box.scrollLeft < more - 1);
  }

  function cue() {
    Array.prototype.forEach.call(document.querySelectorAll(WATCHED), function (box) {
      var scrolls = box.scrollWidth > box.clientWidth + 1;
      box.classList.toggle("gl-scrolls", scrolls);
      if (scrolls && !box.hasAttribute("tabindex")) {
        box.setAttribute("tabindex", "0");
        box.setAttribute("data-gl-tabstop", "");
      } else if (!scrolls && box.hasAttribute("data-gl-tabstop")) {
        box.removeAttribute("tabindex");
        box.removeAttribute("data-gl-tabstop");
      }
      if (!box.hasAttribute("data-gl-cue")) {
        box.setAttribute("data-gl-cue", "");
        box.addEventListener("scroll", function () { edges(box); }, { passive: true });
      }
      edges(box);
      if (box.classList.contains("pst-scrollable-table-container")) { tableHint(box, scrolls); }
    });
  }

  // A table's rows paint over any shadow, so a wide table also gets a line of text.
  function tableHint(box, scrolls) {
    var hint = box.previousElementSibling;
    var ours = hint && hint.classList.contains("gl-scroll-hint");
    if (scrolls && !ours) {
      hint = document.createElement("p");
      hint.className = "gl-scroll-hint";
      hint.textContent = "This table is wider than the page: scroll it sideways to see " +
        "every column.";
      box.parentNode.insertBefore(hint, box);
    } else if (!scrolls && ours) {
      hint.remove();
    }
  }

  function whenTypeset() {
    var mj = window.MathJax;
    if (mj && mj.startup && mj.startup.promise) {
      mj.startup.promise.then(fit);
    } else {
      fit();
    }
  }

  var pending = null;
  window.addEventListener("resize", function () {
    window.clearTimeout(pending);
    pending = window.setTimeout(fit, 150);
  });
  if (document.readyState === "complete") { whenTypeset(); }
  else { window.addEventListener("load", whenTypeset); }
})();
