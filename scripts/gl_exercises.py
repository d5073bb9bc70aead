"""Sphinx extension: the exercises live on the site, and what every page says is true of it.

Exercises. A notebook's ``lesson.show(n)`` leaves the static rendering of an exercise in
the page (:func:`gpulesson.exercises.render.static_html`: question, answer format, hints,
a folded solution). On any page that holds one, this extension

* gives each exercise the attributes and controls of the site's DOM contract
  (:func:`live_markup`): ``data-exercise="<slug>:<n>"`` and ``data-state`` on the
  exercise, an answer control carrying ``data-answer`` (a text box, radio buttons, or for a
  code exercise a text area that the page turns into a code editor, holding the
  notebook's stub), a ``button[data-check]`` and a ``[data-feedback]`` region whose
  ``data-status`` the page sets; the controls stay ``hidden`` until Python is ready, so a
  page that cannot run them shows only the static rendering;
* pairs each predict-then-run exercise with the cell below it that revealed the build's
  measurement (its ``lesson.reveal`` output, :func:`measurement_cells`): the cell gets an
  id the exercise points at (``data-measurement``), and the measured figure is written on
  the exercise (``data-measured``, SI units), so the page can hide the measurement until a
  prediction is committed, then compare the two with the exercise's own rule;
* leaves static, with a note, an exercise whose checker needs a library a browser cannot
  load: :func:`browser_unavailable` finds them by running every reference answer in the
  standard library and the pack alone, as in Pyodide (the CUDA kernel exercises run there:
  their checker is a pure-Python runtime, and the pack's ``numba`` is its stand-in);
* adds the site's introduction (how the exercises work here, and the progress kept in
  this browser, with export and import) before the page's first section;
* adds the page side (``scripts/site_js/exercises.js``), the Python worker it shares with
  the calculators and the code editor bundled by ``scripts/vendor_js.py``, and writes the
  exercises' package pack (:func:`exercise_pack`: :mod:`gpulesson.exercises.browser` and
  every bank module) into the site.

Pages. Independent of exercises, this extension also

* shows launch and repository buttons only when ``repository.url`` is a real repository
  (the deploy workflow puts the published repository there); a placeholder host
  (``example.org``, ``github.com/example/...``) drops them, and a placeholder JupyterHub
  drops that button alone (:func:`placeholder_url`);
* writes the current year into the copyright line (``2025–2026``; ``SOURCE_DATE_EPOCH``
  fixes it for reproducible builds);
* gives the "Key terms" list of every lesson a one-line definition per term, the first
  sentence of its glossary entry (:func:`key_term_definitions`);
* adds ``scripts/site_js/site.js`` to every page: search results quote the article, not
  the page's buttons and contents list, and a display equation wider than the column is
  set smaller until it fits (or scrolls, with a cue);
* deletes the theme's Jinja fragments that Sphinx copies into ``_static``
  (:data:`TEMPLATE_FRAGMENTS`): they are not pages, and a browser that opens one requests
  ``{{ pathto(...) }}`` from the site;
* writes the site's front door, ``index.html`` (:func:`front_door`): a page that sends the
  reader on to the root page, as the bare redirect sphinx-external-toc would write does,
  but with a title, a link to follow where redirects are off, and an empty inline icon, so
  that a browser opening the site's address asks for no ``/favicon.ico``, which the site
  lacks.

Loaded by ``_config.yml`` (``sphinx: local_extensions``) after ``gl_calculators``.
"""

from __future__ import annotations

import html
import json
import os
import re
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the sibling gl_calculators, however this file is loaded
    sys.path.insert(0, str(HERE))
import gl_calculators  # noqa: E402

logger = logging.getLogger(__name__)

ROOT = HERE.parent
COURSE_DIR = gl_calculators.COURSE_DIR
#: The page side of the exercises, as Sphinx sees it (local scripts get a ``_static/``
#: prefix, hence ``../``).
LOADER = f"../{COURSE_DIR}/exercises.js"
#: The scripts this extension publishes under ``_lib/course/`` (the worker is
#: gl_calculators', shared): the exercises' page side, and the repairs of every page.
SCRIPTS = ("exercises.js", "site.js")
#: The repairs of every page (search passages, wide equations), as Sphinx sees it.
SITE_SCRIPT = f"../{COURSE_DIR}/site.js"
#: The module the exercises' worker imports, and the package imported by name at run time.
ENTRY_MODULE = "gpulesson.exercises.browser"
WHOLE_PACKAGES = ("gpulesson.exercises.bank", *gl_calculators.WHOLE_PACKAGES)
#: What the exercises' pages load after the calculators' pack (gl_calculators.PACK_PATH):
#: the exercises' pack less the files that one holds (gl_calculators.pack_archive).
PACK_PATH = f"{COURSE_DIR}/gpulesson-exercises-pack.zip"
#: The code editor bundle (scripts/vendor_js.py, BUILT["codemirror"]).
EDITOR_PATH = "_lib/codemirror/code-editor.js"
#: How long a learner's function may run before the page stops it, in milliseconds.
DEFAULT_TIME_LIMIT_MS = 10_000
#: How long the page waits for Python to start before it says it could not.
DEFAULT_BOOT_TIMEOUT_MS = 60_000
#: Every page's Content-Security-Policy (``gl_content_security_policy`` in _config.yml):
#: connections to the site only, so that a learner's code checked in the page's worker
#: reaches no other host.
DEFAULT_POLICY = "connect-src 'self'"
#: Jinja fragments of the theme that Sphinx copies into _static: not pages, never served.
TEMPLATE_FRAGMENTS = ("webpack-macros.html", "sbt-webpack-macros.html")
#: Hosts that only ever stand for "put your own here".
PLACEHOLDER_HOSTS = ("example.org", "example.com", "example.net", "example.edu")

_EXERCISE = re.compile(
    r'<div class="gl-exercise[^"]*" id="(?P<slug>[a-z][a-z0-9_]*)-ex(?P<number>[0-9]+)" '
    r'data-kind="(?P<kind>[a-z]+)"')
#: The worked solution's code, shown as a learner can paste it into the editor (the bank
#: names it privately and imports its modules elsewhere: exercises.browser.learner_solution).
_MODEL_SOLUTION = re.compile(r'(<pre class="gl-model-solution"><code>).*?(</code></pre>)', re.S)
_REVEALED = re.compile(r'<div class="gl-feedback gl-feedback-compared"[^>]*>(?P<body>.*?)</div>',
                       re.S)


# ---------------------------------------------------------------------------------------
# Repository and launch buttons, copyright


def placeholder_url(url: Any) -> bool:
    """True when ``url`` is empty or only stands for a real address (``example.org``,
    ``github.com/example/...``)."""
    if not isinstance(url, str) or not url.strip():
        return True
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower()
    if not host or host in PLACEHOLDER_HOSTS or host.endswith(
            tuple("." + h for h in PLACEHOLDER_HOSTS)):
        return True
    owner = parts.path.strip("/").split("/")[0].lower()
    return host in ("github.com", "gitlab.com") and owner in ("", "example", "your-name",
                                                               "owner")


def copyright_years(first: str, now: float | None = None) -> str:
    """``first`` (a year) to the current one: ``"2025"`` in 2025, ``"2025–2026"`` after.

    ``now`` defaults to ``SOURCE_DATE_EPOCH`` when set (a reproducible build), else the
    clock. Anything but a plain year is returned as it is.
    """
    text = str(first).strip()
    if not re.fullmatch(r"\d{4}", text):
        return text
    if now is None:
        epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
        now = float(epoch) if epoch.strip().isdigit() else time.time()
    year = time.gmtime(now).tm_year
    return text if year <= int(text) else f"{text}–{year}"


def _on_config_inited(app: Sphinx, config: Any) -> None:
    options = config.html_theme_options
    if placeholder_url(options.get("repository_url")):
        for key in ("use_repository_button", "use_issues_button", "use_edit_page_button",
                    "use_source_button"):
            options[key] = False
        options["launch_buttons"] = {}
        options.pop("repository_url", None)
    else:
        launch = dict(options.get("launch_buttons") or {})
        for key in ("binderhub_url", "colab_url", "jupyterhub_url"):
            if key in launch and placeholder_url(launch[key]):
                launch.pop(key)
        options["launch_buttons"] = launch
    config.copyright = copyright_years(config.copyright)


# ---------------------------------------------------------------------------------------
# Exercises: the markup of the DOM contract


def exercise(ref: str) -> Any:
    """The exercise a page calls ``"<slug>:<number>"``, as the site's Python sees it."""
    from gpulesson.exercises import browser

    return browser.exercise(ref)


def _inline(text: str) -> str:
    from gpulesson.exercises.render import markup

    block = markup(text)
    return block[3:-4] if block.startswith("<p>") and block.endswith("</p>") else block


def _stub(ex: Any, sources: Iterable[str]) -> str:
    """The notebook's stub of code exercise ``ex`` (the cell that defines its function,
    imports included), else one written from its signature. A kernel's stub starts with
    what the notebook's earlier cells define for it: ``from numba import cuda`` (the
    stand-in, on the site) and the constants it names."""
    head = f"def {ex.function_name}("
    for source in sources:
        if re.search(rf"^{re.escape(head)}", source, re.M) and not re.search(
                r"\blesson\.", source):  # not lesson.show(...); gpulesson.x is fine
            return _kernel_prelude(ex, source) + source.strip() + "\n"
    return f"{head}{ex.signature}):\n    return None  # replace with your code\n"


def _kernel_prelude(ex: Any, source: str) -> str:
    """``from numba import cuda, ...`` and the constants a kernel stub uses but does not
    define itself (the notebook defines them in earlier cells); empty for other code."""
    model = getattr(ex, "model_solution", None)
    if not hasattr(model, "learner_text"):
        return ""
    from gpulesson.exercises.kernel import IMPORTS

    defined = [line for line in source.splitlines() if "import" in line or "=" in line]
    constants = "".join(
        f"{name} = {value!r}\n" for name, value in model.constants.items()
        if re.search(rf"\b{name}\b", source)
        and not any(re.search(rf"\b{name}\b", line.split("=")[0]) for line in defined))
    return f"{IMPORTS}\nimport math\n\n" + (f"{constants}\n" if constants else "\n")


def controls_html(ex: Any, *, stub: str = "", time_limit_ms: int = DEFAULT_TIME_LIMIT_MS) -> str:
    """The live controls of exercise ``ex`` (hidden until Python is ready)."""
    from gpulesson.exercises.core import ChoiceExercise, CodeExercise, PredictExercise

    eid = html.escape(ex.id)
    unit = f" ({html.escape(ex.unit)})" if getattr(ex, "unit", "") else ""
    described = f"{eid}-format"
    parts = ['<div class="gl-ex-live" data-gl-live hidden>',
             '<p class="gl-ex-done" data-done-note hidden><span aria-hidden="true">✔</span> '
             "Done in this browser.</p>",
             f'<form class="gl-ex-form" data-gl-form novalidate '
             f'aria-label="Your answer to exercise {ex.number}">']
    if isinstance(ex, ChoiceExercise):
        parts.append(f'<fieldset class="gl-ex-choices" data-answer aria-describedby="{described}">'
                     "<legend>Your answer</legend>")
        for i, (key, label) in enumerate(ex.option_pairs()):
            oid = f"{eid}-option-{i + 1}"
            parts.append(f'<div class="gl-ex-choice"><input type="radio" name="{eid}-choice" '
                         f'id="{oid}" value="{html.escape(key)}" data-option="{html.escape(key)}">'
                         f'<label for="{oid}">{_inline(label)}</label></div>')
        parts.append("</fieldset>")
        parts.append('<button type="submit" class="gl-ex-button gl-ex-primary" data-check>'
                     "Check</button>")
    elif isinstance(ex, CodeExercise):
        seconds = f"{time_limit_ms / 1000:g}"
        lines = max(6, min(24, stub.count("\n") + 3))
        parts.append(
            f'<label class="gl-ex-label" for="{eid}-code" id="{eid}-code-label">Your function '
            f"<code>{html.escape(ex.function_name)}</code></label>"
            f'<p class="gl-ex-keys" id="{eid}-keys">In the editor, Tab indents; press Esc, '
            "then Tab, to move on. Ctrl+Enter checks. Your function runs in your browser and "
            f"is stopped if it takes more than {seconds} s.</p>"
            f'<div class="gl-ex-editor" data-editor><textarea id="{eid}-code" data-answer '
            f'rows="{lines}" spellcheck="false" autocomplete="off" autocapitalize="off" '
            f'aria-describedby="{eid}-keys {described}">{html.escape(stub)}</textarea></div>'
            '<button type="submit" class="gl-ex-button gl-ex-primary" data-check>Check '
            f"{html.escape(ex.function_name)}</button>")
    else:
        predict = isinstance(ex, PredictExercise)
        label = "Your prediction" if predict else "Your answer"
        button = "Commit prediction" if predict else "Check"
        parts.append(
            f'<label class="gl-ex-label" for="{eid}-answer">{label}{unit}</label>'
            f'<input type="text" class="gl-ex-input" id="{eid}-answer" data-answer '
            'autocomplete="off" autocapitalize="off" spellcheck="false" inputmode="text" '
            f'aria-describedby="{described}">'
            f'<button type="submit" class="gl-ex-button gl-ex-primary" data-check>{button}'
            "</button>")
    parts.append("</form>")
    parts.append(f'<div class="gl-ex-feedback" id="{eid}-feedback" data-feedback data-status="" '
                 'role="status" aria-live="polite"></div>')
    if isinstance(ex, CodeExercise):
        parts.append('<div class="gl-ex-output" data-output hidden>'
                     '<p class="gl-ex-output-title">What your code printed</p>'
                     '<pre tabindex="0" aria-label="What your code printed"></pre></div>')
    hints = ex.hint_texts()
    if hints:
        parts.append('<div class="gl-ex-actions">'
                     '<button type="button" class="gl-ex-button" data-hint>'
                     f"Hint (1 of {len(hints)})</button></div>"
                     '<div class="gl-ex-hints" data-hints-shown hidden>'
                     '<p class="gl-ex-hints-title">Hints</p><ol aria-live="polite"></ol></div>')
    parts.append("</div>")
    return "".join(parts)


def live_markup(static: str, ex: Any, *, stub: str = "", measurement: str | None = None,
                measured: float | None = None,
                time_limit_ms: int = DEFAULT_TIME_LIMIT_MS,
                needs: list[str] | None = None) -> str:
    """The static rendering ``static`` of ``ex`` with the attributes and controls of the
    site's DOM contract (see the module docstring).

    ``needs``: the libraries its checker needs that a browser cannot load (see
    :func:`browser_unavailable`); the exercise then keeps its static rendering, says so,
    and gets ``data-state="unavailable"`` instead of controls.
    """
    opening = _EXERCISE.search(static)
    if opening is None or f"{opening['slug']}-ex{opening['number']}" != ex.id:
        raise ValueError(f"no static rendering of {ex.id} in the markup given")
    ref = f"{ex.lesson}:{ex.number}"
    if needs:
        attributes = f' data-exercise="{ref}" data-state="unavailable"'
        text = static[:opening.end()] + attributes + static[opening.end():]
        libraries = ", ".join(sorted(needs))
        note = ('<p class="gl-ex-unavailable" data-unavailable>This exercise is checked in '
                f"Jupyter only: its checker needs {html.escape(libraries)}, which the site's "
                "Python in your browser does not have. Open this notebook in Jupyter to check "
                "your answer; the question, the hints and the worked solution are here.</p>")
        at = text.find('<p class="gl-answer-format">')
        at = at if at >= 0 else text.rfind("</div>")
        return text[:at] + note + "\n" + text[at:]
    attributes = f' data-exercise="{ref}" data-state="static"'
    if measurement is not None:
        attributes += f' data-measurement="{html.escape(measurement)}"'
    if measured is not None:
        attributes += f' data-measured="{measured!r}"'
    if getattr(ex, "function_name", None):
        attributes += f' data-function="{html.escape(ex.function_name)}"'
    text = static[:opening.end()] + attributes + static[opening.end():]
    if getattr(ex, "function_name", None):
        from gpulesson.exercises.browser import learner_solution

        pasteable = html.escape(learner_solution(ex), quote=False)
        text = _MODEL_SOLUTION.sub(lambda m: m.group(1) + pasteable + m.group(2), text, count=1)
    text = text.replace('<p class="gl-answer-format">',
                        f'<p class="gl-answer-format" id="{html.escape(ex.id)}-format">', 1)
    controls = controls_html(ex, stub=stub, time_limit_ms=time_limit_ms)
    for anchor in ('<details class="gl-hints">', '<details class="gl-solution">',
                   '<p class="gl-solution-withheld">'):
        at = text.find(anchor)
        if at >= 0:
            return text[:at] + controls + "\n" + text[at:]
    at = text.rfind("</div>")
    return text[:at] + controls + "\n" + text[at:]


# ---------------------------------------------------------------------------------------
# Exercises: the page's cells


def _cells(doctree: nodes.document) -> list[nodes.container]:
    return [node for node in doctree.findall(nodes.container)
            if node.get("nb_element") == "cell_code"]


def _html_outputs(cell: nodes.Element) -> list[nodes.raw]:
    return [node for node in cell.findall(nodes.raw) if "html" in node.get("format", "")]


def _plain(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def measurement_cells(doctree: nodes.document) -> dict[str, tuple[nodes.container, str]]:
    """Exercise id -> (the cell that revealed its measurement, that feedback's plain text).

    A cell whose output is a revealed comparison (``gl-feedback-compared``) belongs to the
    nearest predict-then-run exercise above it that has none yet.
    """
    found: dict[str, tuple[nodes.container, str]] = {}
    waiting: list[str] = []
    for cell in _cells(doctree):
        for raw in _html_outputs(cell):
            text = raw.astext()
            for match in _EXERCISE.finditer(text):
                if match["kind"] == "predict":
                    waiting.append(f"{match['slug']}-ex{match['number']}")
            revealed = _REVEALED.search(text)
            if revealed and waiting:
                found[waiting.pop()] = (cell, _plain(revealed["body"]))
                waiting.clear()
    return found


def site_measurement(cell: nodes.Element, number: int) -> int:
    """Rewrite a measurement cell's Jupyter line for the site; returns the lines changed.

    The build ran the cell without a prediction, so its feedback ends with Jupyter's
    :data:`~gpulesson.exercises.core.NO_PREDICTION_YET`. The page shows that output only
    once the reader has committed a prediction (or asked to see it), so the line would
    tell them to do what they just did (review 3, S3): it says where the comparison is.
    """
    from gpulesson.exercises.core import NO_PREDICTION_YET

    site_line = html.escape(f"Measured when this site was built; exercise {number} above "
                            "compares it with your prediction.")
    changed = 0
    for raw in _html_outputs(cell):
        text = raw.astext()
        if NO_PREDICTION_YET in text:
            text = text.replace(NO_PREDICTION_YET, site_line)
            raw.children = [nodes.Text(text)]
            raw.rawsource = text
            changed += 1
    return changed


def _notebook_sources(app: Sphinx, docname: str) -> list[str]:
    path = Path(app.env.doc2path(docname))
    if path.suffix != ".ipynb":
        return []
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return ["".join(cell.get("source", "")) for cell in notebook.get("cells", [])
            if cell.get("cell_type") == "code"]


def site_introduction(time_limit_ms: int = DEFAULT_TIME_LIMIT_MS) -> str:
    """What a reader of an exercise page needs to know about using it on the site (the
    notebook's own introduction says how the exercises work anywhere)."""
    seconds = f"{time_limit_ms / 1000:g}"
    return (
        '<aside class="gl-ex-intro" aria-labelledby="gl-ex-intro-title">'
        '<p class="gl-ex-intro-title" id="gl-ex-intro-title"><strong>On this site</strong></p>'
        "<p>Your browser checks every answer with the course's own Python, the checker the "
        "notebook uses, so both give the same feedback. A prediction is committed first; "
        "then the page shows the measurement made when this site was built. A code exercise "
        f"runs the function you write in your browser and stops it after {seconds} s.</p>"
        '<p class="gl-ex-status" data-gl-status role="status">The checker starts once the '
        "page has loaded; until then each exercise shows its question, its hints and its "
        "folded solution.</p>"
        '<div class="gl-ex-progress" data-gl-progress hidden>'
        '<p data-progress-summary aria-live="polite"></p>'
        '<p class="gl-ex-progress-note">Your progress is kept in this browser only and is '
        "never sent anywhere. To carry it to Jupyter, export it and save the file as "
        "<code>.gpulesson-progress.json</code> next to the notebook; import a notebook's "
        "file to bring its progress here.</p>"
        '<p class="gl-ex-progress-actions">'
        '<button type="button" class="gl-ex-button" data-progress-export>Export progress'
        "</button> "
        '<button type="button" class="gl-ex-button" data-progress-import>Import progress'
        "</button>"
        '<input type="file" accept=".json,application/json" data-progress-file hidden '
        'aria-label="Progress file to import"></p>'
        '<p class="gl-ex-progress-message" data-progress-message role="status"></p>'
        "</div></aside>"
    )


def _on_doctree_resolved(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    key_term_definitions(app, doctree)
    figure_alt_texts(doctree)
    if app.builder.format != "html":
        return
    measured = measurement_cells(doctree)
    unavailable = getattr(app.env, "gl_unavailable", {})
    sources: list[str] | None = None
    limit = app.config.gl_exercise_time_limit_ms
    found = 0
    for cell in _cells(doctree):
        for raw in _html_outputs(cell):
            text = raw.astext()
            matches = list(_EXERCISE.finditer(text))
            if not matches:
                continue
            for match in reversed(matches):
                ref = f"{match['slug']}:{match['number']}"
                try:
                    ex = exercise(ref)
                except KeyError as error:
                    logger.warning(f"{docname}: {error}", location=cell)
                    continue
                if ex.kind != match["kind"]:
                    logger.warning(f"{docname}: exercise {ref} shows as {match['kind']} but "
                                   f"is {ex.kind} in its bank", location=cell)
                    continue
                end = _end_of_div(text, match.start())
                stub = ""
                if ex.kind == "code" and ref not in unavailable:
                    if sources is None:
                        sources = _notebook_sources(app, docname)
                    stub = _stub(ex, sources)
                measurement = value = None
                if ex.kind == "predict" and ex.id in measured:
                    target, plain = measured[ex.id]
                    from gpulesson.exercises.browser import measured_value

                    value = measured_value(ex, plain)
                    if value is None:
                        logger.warning(f"{docname}: the measurement of {ref} cannot be read "
                                       f"from {plain!r}", location=target)
                    else:
                        measurement = f"{ex.id}-measurement"
                        if measurement not in target["ids"]:
                            target["ids"].append(measurement)
                        target["classes"].append("gl-measurement")
                        site_measurement(target, ex.number)
                text = (text[:match.start()]
                        + live_markup(text[match.start():end], ex, stub=stub,
                                      measurement=measurement, measured=value,
                                      time_limit_ms=limit, needs=unavailable.get(ref))
                        + text[end:])
                found += 1
            raw.children = [nodes.Text(text)]
            raw.rawsource = text
    if found:
        _insert_introduction(doctree, site_introduction(limit))


def _end_of_div(text: str, start: int) -> int:
    """The index just after the ``</div>`` closing the ``<div`` at ``start``."""
    depth = 0
    for tag in re.finditer(r"<(/?)div\b[^>]*>", text[start:]):
        depth += -1 if tag.group(1) else 1
        if depth == 0:
            return start + tag.end()
    return len(text)


def _insert_introduction(doctree: nodes.document, markup: str) -> None:
    intro = nodes.raw("", markup, format="html")
    top = next(iter(doctree.findall(nodes.section)), None)
    if top is None:
        doctree.insert(0, intro)
        return
    for i, child in enumerate(top.children):
        if isinstance(child, nodes.section) or (
                isinstance(child, nodes.container) and child.get("nb_element") == "cell_code"):
            top.insert(i, intro)
            return
    top.append(intro)


# ---------------------------------------------------------------------------------------
# Figures: alt text from the titles the cell gives its plots

#: A plot title in a cell's code: ``title="..."``, ``set_title("...")``, ``suptitle(...)``;
#: an f-string's fields become "…" (their values are not known here).
_PLOT_TITLE = re.compile(r"""(?:\btitle=|set_title\(|suptitle\()\s*(f?)(["'])(.*?)\2""")


_MORE_LITERAL = re.compile(r"""\s*(f?)(["'])(.*?)\2""")


def _literal(match: re.Match[str]) -> str:
    return re.sub(r"\{[^{}]*\}", "…", match[3]) if match[1] else match[3]


def plot_titles(source: str) -> list[str]:
    """The literal titles a cell's code gives its plots, in order, each once."""
    titles = []
    for match in _PLOT_TITLE.finditer(source):
        text = _literal(match)
        end = match.end()
        while more := _MORE_LITERAL.match(source, end):   # "a " "b": one string
            text += _literal(more)
            end = more.end()
        text = " ".join(text.replace("\\n", " ").split()).rstrip(" ,:;")
        if text and text not in titles:
            titles.append(text)
    return titles


#: A value a plot's title is filled in with ("…" in :func:`plot_titles`) and the phrase it
#: sits in: the preposition before it and the words after it up to the next preposition,
#: conjunction or punctuation ("at … per GPU-hour", "of … layers" in "of … layers against k").
_FILLED_PHRASE = re.compile(
    r"\s*\b(?:at|of|for|with|on|in|by|from|to)\s+…"
    r"(?:\s+(?!(?:at|of|for|with|on|in|by|from|to|against|and|or|versus|vs)\b)[^\s,;:()…]+)*")
#: A title that starts with a value and a colon ("…: measured"); a part of a title, between
#: commas, that is a value alone ("Llama-2-7B training, …").
_FILLED_LABEL = re.compile(r"^…\s*:\s*")
_FILLED_PART = re.compile(r"\s*,\s*…\s*(?=,|$)")
_DANGLING = re.compile(r"(?:\s+(?:and|or))+\s*$")


def alt_title(title: str) -> str | None:
    """A plot title as an alt text can say it: a value filled in by code (``…``) is left out
    with the phrase it sits in ("rent 8 H100s at … per GPU-hour" -> "rent 8 H100s"); None
    when one cannot be left out so (the figure then needs its title from elsewhere)."""
    text = _FILLED_PHRASE.sub("", _FILLED_PART.sub("", _FILLED_LABEL.sub("", title)))
    text = _DANGLING.sub("", " ".join(text.split()).rstrip(" ,:;")).rstrip(" ,:;")
    return text if text and "…" not in text else None


def figure_alt_texts(doctree: nodes.document) -> int:
    """Give every image a notebook cell drew an alt text; returns the number given.

    myst-nb leaves a plot's ``alt`` unset, so the page shows the image's file path to a
    screen reader (review 4, R-6: 20 of 20 figures). The alt text is "Figure: " and the
    titles the cell's code gives its plots, less any value the code fills in
    (:func:`alt_title`: 3 of 43 alt texts read "…" for one, 2026-12-06); a cell without
    such a title names the section.
    """
    given = 0
    for cell in _cells(doctree):
        images = [image for image in cell.findall(nodes.image) if not image.get("alt")]
        if not images:
            continue
        source = " ".join(block.astext() for block in cell.findall(nodes.literal_block))
        titles = [alt for alt in map(alt_title, plot_titles(source)) if alt]
        if titles:
            alt = "Figure: " + "; ".join(titles)
        else:
            section = next((node for node in _ancestors(cell)
                            if isinstance(node, nodes.section)), None)
            title = section.next_node(nodes.title) if section is not None else None
            alt = (f"Figure of the section “{title.astext()}”" if title is not None
                   else "Figure drawn by the code above")
        for image in images:
            image["alt"] = alt
            given += 1
    return given


def _ancestors(node: nodes.Node) -> Iterable[nodes.Node]:
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


# ---------------------------------------------------------------------------------------
# Key terms: one line each


def _glossary_sentences(app: Sphinx) -> dict[str, list[nodes.Node]]:
    """Glossary anchor -> the first sentence of its entry, as nodes (cached per build)."""
    cache = getattr(app.env, "gl_glossary_sentences", None)
    if cache is not None:
        return cache
    found: dict[str, list[nodes.Node]] = {}
    std = app.env.get_domain("std")
    docs = {doc for (kind, _name), (doc, _anchor) in getattr(std, "objects", {}).items()
            if kind == "term"}
    for doc in sorted(docs):
        try:
            tree = app.env.get_doctree(doc)
        except (FileNotFoundError, OSError):
            continue
        for item in tree.findall(nodes.definition_list_item):
            terms = [t for t in item.children if isinstance(t, nodes.term)]
            definition = next((d for d in item.children if isinstance(d, nodes.definition)),
                              None)
            if not terms or definition is None:
                continue
            sentence = _first_sentence(definition)
            for term in terms:
                for anchor in term["ids"]:
                    found[anchor] = sentence
    app.env.gl_glossary_sentences = found  # type: ignore[attr-defined]
    return found


def _is_citation(node: nodes.Node) -> bool:
    """A ``{cite:p}`` reference not yet resolved: its text is the raw BibTeX key."""
    return isinstance(node, addnodes.pending_xref) and node.get("refdomain") == "cite"


def _first_sentence(definition: nodes.definition) -> list[nodes.Node]:
    """The first sentence of a glossary entry, as nodes, without its citations.

    A citation in another page's tree is unresolved, so its text would be the raw BibTeX
    key ("... intensity williams2009roofline."): it is dropped with the space before it,
    and a space is kept only where a word follows.
    """
    paragraph = next(iter(definition.findall(nodes.paragraph)), None)
    if paragraph is None:
        return []
    out: list[nodes.Node] = []
    after_citation = False
    for child in paragraph.children:
        if _is_citation(child):
            if out and isinstance(out[-1], nodes.Text):
                out[-1] = nodes.Text(str(out[-1]).rstrip())
            after_citation = True
            continue
        if after_citation and not re.match(r"[\s.,;:!?)\]]", child.astext()[:1] or "."):
            out.append(nodes.Text(" "))
        after_citation = False
        if isinstance(child, nodes.Text):
            text = str(child)
            end = re.search(r"[.!?](\s|$)", text)
            if end:
                out.append(nodes.Text(text[:end.start() + 1]))
                return out
            out.append(nodes.Text(text))
        elif isinstance(child, nodes.math):
            out.append(child.deepcopy())
        else:  # cross-references (unresolved in another page's tree) become their text
            text = child.astext()
            end = re.search(r"[.!?](\s|$)", text)
            emphasis = isinstance(child, nodes.emphasis)
            piece = text[:end.start() + 1] if end else text
            out.append(nodes.emphasis(piece, piece) if emphasis else nodes.Text(piece))
            if end:
                return out
    return out


def key_term_definitions(app: Sphinx, doctree: nodes.document) -> int:
    """Turn each "Key terms" paragraph of term links into a list: term, one-line definition.

    Returns the number of terms defined. A paragraph is changed only when it holds nothing
    but glossary links and separators; any other text keeps it as it is.
    """
    sentences = None
    count = 0
    for section in list(doctree.findall(nodes.section)):
        title = section.next_node(nodes.title)
        if title is None or title.parent is not section or \
                title.astext().strip().lower() != "key terms":
            continue
        for paragraph in [c for c in section.children if isinstance(c, nodes.paragraph)]:
            links = [c for c in paragraph.children if isinstance(c, nodes.reference)]
            rest = "".join(c.astext() for c in paragraph.children
                           if not isinstance(c, nodes.reference))
            if not links or rest.strip(" ,.;\n"):
                continue
            if sentences is None:
                sentences = _glossary_sentences(app)
            items = nodes.bullet_list(classes=["gl-key-terms"])
            for link in links:
                anchor = link.get("refuri", "").rpartition("#")[2]
                item = nodes.list_item()
                para = nodes.paragraph()
                para += link.deepcopy()
                sentence = sentences.get(anchor)
                if sentence:
                    para += nodes.Text(": ")
                    for node in sentence:
                        para += node.deepcopy()
                item += para
                items += item
                count += 1
            paragraph.replace_self(items)
    return count


# ---------------------------------------------------------------------------------------
# The page side and the pack


#: ``from numba import cuda`` in the browser: the course's stand-in for Numba's CUDA module
#: (:mod:`gpulesson.kernelcheck.shim`), so that a kernel exercise's code reads as it does in
#: Jupyter. Only the exercises' pack has it: the browser's Python has no Numba to replace.
NUMBA_SHIM = {"numba/__init__.py": (
    '"""The course\'s stand-in for Numba on the site: kernels run in the pure-Python CUDA\n'
    'runtime of gpulesson.kernelcheck (the browser has no Numba)."""\n\n'
    "from gpulesson.kernelcheck.shim import cuda, float32, float64, int32, int64, uint32\n\n"
    '__all__ = ["cuda", "float32", "float64", "int32", "int64", "uint32"]\n')}


def exercise_pack() -> dict[str, Any]:
    """The exercises' pack: :mod:`gpulesson.exercises.browser`'s files, every bank, and the
    ``numba`` stand-in (:data:`NUMBA_SHIM`)."""
    import hashlib

    pack = gl_calculators.make_pack(ENTRY_MODULE, WHOLE_PACKAGES)
    pack["files"] = dict(sorted({**pack["files"], **NUMBA_SHIM}.items()))
    pack["sha256"] = hashlib.sha256(json.dumps(pack["files"], sort_keys=True).encode(
        "utf-8")).hexdigest()
    return pack


_SANDBOX = r"""
import importlib.abc, json, sys
sys.path.insert(0, sys.argv[1])
left_out = json.loads(sys.argv[2])
missing = []


class Absent(importlib.abc.MetaPathFinder):
    # last on the path: sees every import nothing could find (a package module left out
    # of the pack stands for the libraries it needs)
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if name in left_out:
            missing.extend(left_out[name])
        elif top not in sys.stdlib_module_names and top != "gpulesson":
            missing.append(top)
        return None


sys.meta_path.append(Absent())
from gpulesson.exercises import browser
from gpulesson.exercises.catalogue import available_lessons
from gpulesson.exercises.core import CodeExercise, PredictExercise

found = {}
for slug in available_lessons():
    del missing[:]
    try:
        lesson = browser._lesson(slug)
    except BaseException as error:
        found[slug] = {"needs": sorted(set(missing)), "why": f"{type(error).__name__}: {error}"}
        continue
    for ex in lesson:
        ref = f"{slug}:{ex.number}"
        del missing[:]
        try:
            if isinstance(ex, CodeExercise):
                answer = browser.check_code(ref, browser.learner_solution(ex))
                if answer["status"] != "correct" and ex.model_solution is not None:
                    direct = ex.check(ex.model_solution)  # says what it lacks, if anything
                    answer = {"status": direct.status, "message": direct.message}
            elif isinstance(ex, PredictExercise):
                answer = browser.check(ref, "1")
            else:
                answer = browser.check(ref, ex.example_answers()["reference"])
            ok = answer["status"] in ("correct", "committed")
            why = answer["message"]
        except BaseException as error:
            ok, why = False, f"{type(error).__name__}: {error}"
        if not ok:
            found[ref] = {"needs": sorted(set(missing)), "why": why}
print(json.dumps(found))
"""


def browser_unavailable(pack: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The exercises the browser cannot check, and why: ``{ref: {"needs", "why"}}``.

    Runs every exercise's reference answer (a code exercise: its model solution, as the
    page shows it) through :mod:`gpulesson.exercises.browser` imported from ``pack`` alone
    in ``python -I -S``: the standard library and the pack, as in Pyodide. ``needs`` lists
    the third-party libraries its checker tried to import and could not (``["numba"]`` for
    a CUDA kernel, checked by Numba's simulator); a reference key ``<slug>`` stands for a
    lesson whose bank did not load. An exercise that fails with ``needs`` empty is a bug
    of the site's Python, not a missing library: the caller reports it.
    """
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="gl-pack-") as folder:
        for path, text in pack["files"].items():
            target = Path(folder, path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        left_out = json.dumps(pack.get("left_out", {}))
        proc = subprocess.run([sys.executable, "-I", "-S", "-c", _SANDBOX, folder, left_out],
                              capture_output=True, text=True, timeout=600, cwd=folder)
    if proc.returncode != 0:
        raise ExtensionError(f"the exercises' pack does not run on its own: {proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _on_builder_inited(app: Sphinx) -> None:
    if app.builder.format == "html":
        pack = app.env.gl_exercise_pack = exercise_pack()  # type: ignore[attr-defined]
        unavailable: dict[str, list[str]] = {}
        app.env.gl_exercise_pack = gl_calculators.compiled_pack(  # type: ignore[attr-defined]
            app, pack)
        for ref, found in browser_unavailable(pack).items():
            if not found["needs"]:
                logger.warning(f"exercise {ref} fails in the browser's Python although it "
                               f"needs no other library: {found['why']}")
                continue
            if ":" in ref:
                unavailable[ref] = found["needs"]
            else:  # a whole lesson's bank
                from gpulesson.exercises.catalogue import lesson_module

                for ex in lesson_module(ref).EXERCISES:
                    unavailable[f"{ref}:{ex.number}"] = found["needs"]
        app.env.gl_unavailable = unavailable  # type: ignore[attr-defined]
        # after Sphinx's own scripts (searchtools.js among them), on every page
        app.add_js_file(SITE_SCRIPT, loading_method="defer", priority=900)


def policy_meta(policy: str) -> str:
    """The ``<meta>`` tag that sets ``policy`` as the page's Content-Security-Policy."""
    return (f'<meta http-equiv="Content-Security-Policy" '
            f'content="{html.escape(policy, quote=True)}" />\n')


def _on_html_page_context(app: Sphinx, pagename: str, templatename: str,
                          context: dict[str, Any], doctree: Any) -> None:
    if app.config.gl_content_security_policy:  # first in <head>: before anything loads
        context["metatags"] = (policy_meta(app.config.gl_content_security_policy)
                               + context.get("metatags", ""))
    body = context.get("body") or ""
    if "data-exercise=" not in body:
        return
    if not app.config.gl_pyodide_path:
        raise ExtensionError(
            f"{pagename} holds an exercise but the vendored Pyodide is missing "
            "(_vendor/_pyodide/manifest.json): run `make site-assets` (make book does)"
        )
    pack = app.env.gl_exercise_pack  # type: ignore[attr-defined]
    # the calculators' pack first (a lesson's page has it cached), then the rest: publish()
    packs = (gl_calculators.pack_url(app.env.gl_pack),  # type: ignore[attr-defined]
             gl_calculators.pack_url(pack).replace(gl_calculators.PACK_PATH, PACK_PATH))
    app.add_js_file(
        LOADER,
        loading_method="defer",
        **{
            **gl_calculators.pyodide_attributes(app),
            "data-pack": " ".join(packs),
            "data-editor": EDITOR_PATH,
            "data-time-limit": str(app.config.gl_exercise_time_limit_ms),
            "data-timeout": str(app.config.gl_calculator_timeout_ms),
        },
    )


#: The front door's icon: an empty one inline, so that opening the site's address asks the
#: server for no icon at all (a request the redirect would cut off half-way).
NO_ICON = "data:,"


def front_door(title: str, first_page: str) -> str:
    """The site's ``index.html``: it sends the reader to ``first_page`` at once and shows
    ``title`` and a link meanwhile. It names :data:`NO_ICON` as its icon: a page without one
    makes the browser ask for ``/favicon.ico``, which the site lacks (a 404), and the
    site's own icon would be requested while the redirect leaves (an aborted request)."""
    first, name = html.escape(first_page), html.escape(title)
    return ('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<title>{name}</title>\n<link rel="icon" href="{NO_ICON}">\n'
            f'<meta http-equiv="Refresh" content="0; url={first}">\n</head>\n<body>\n'
            f'<p><a href="{first}">{name}</a></p>\n</body>\n</html>\n')


def _on_build_finished(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    if app.builder.name == "html" and app.config.root_doc != "index":
        (out / "index.html").write_text(
            front_door(app.config.html_title, f"{app.config.root_doc}.html"), encoding="utf-8")
    for name in TEMPLATE_FRAGMENTS:
        (out / "_static" / name).unlink(missing_ok=True)
    # the shared worker (gl_calculators.SCRIPTS) too, on a site without calculators
    # less what the calculators' pack holds: the pages load both (_on_html_page_context)
    gl_calculators.publish(app, PACK_PATH, app.env.gl_exercise_pack,  # type: ignore[attr-defined]
                           (*SCRIPTS, *gl_calculators.SCRIPTS),
                           base=app.env.gl_pack)  # type: ignore[attr-defined]


def setup(app: Sphinx) -> dict[str, Any]:
    app.setup_extension("gl_calculators")  # its config values and the shared worker
    app.add_config_value("gl_exercise_time_limit_ms", DEFAULT_TIME_LIMIT_MS, "html")
    app.add_config_value("gl_content_security_policy", DEFAULT_POLICY, "html")
    return gl_calculators.connect(app, {"config-inited": _on_config_inited,
                                        "builder-inited": _on_builder_inited,
                                        "doctree-resolved": _on_doctree_resolved,
                                        "html-page-context": _on_html_page_context,
                                        "build-finished": _on_build_finished})
