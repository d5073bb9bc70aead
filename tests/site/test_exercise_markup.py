"""The site extension ``scripts/gl_exercises.py``, checked without building the book.

The exercises' markup of the DOM contract for every exercise of every lesson (one answer
control, one check button, one feedback region, labels, unique ids, the controls hidden
until the page makes them live, the worked solution pasteable); the pairing of a
prediction with the cell that revealed its measurement; the notebook's stub in the
editor; launch and repository buttons dropped for a placeholder repository and kept for a
real one; the footer's years.
"""

from __future__ import annotations

import calendar
import json
from types import SimpleNamespace

import pytest
from bs4 import BeautifulSoup
from docutils import nodes

from gpulesson.exercises import browser
from gpulesson.exercises.catalogue import available_lessons, lesson_module
from gpulesson.exercises.render import static_html

from .building import REPO_ROOT, exercise_pack, exercises_left_static, script_module

EXT = script_module("gl_exercises")
EXERCISES = [ex.variant(None) for slug in available_lessons()
             for ex in lesson_module(slug).EXERCISES]


@pytest.mark.parametrize("ex", EXERCISES, ids=[ex.id for ex in EXERCISES])
def test_live_markup_carries_the_dom_contract(ex) -> None:
    markup = EXT.live_markup(static_html(ex), ex, stub="def f():\n    return 1\n",
                             measurement=f"{ex.id}-measurement" if ex.kind == "predict" else None,
                             measured=2.5 if ex.kind == "predict" else None)
    soup = BeautifulSoup(markup, "html.parser")
    block = soup.select_one("div.gl-exercise")
    assert block["data-exercise"] == f"{ex.lesson}:{ex.number}"
    assert block["data-state"] == "static" and block["data-kind"] == ex.kind
    live = block.select_one("[data-gl-live]")
    assert live.has_attr("hidden")
    assert len(block.select("[data-answer]")) == 1
    assert len(block.select("button[data-check]")) == 1
    assert block.select_one("[data-feedback]")["data-status"] == ""
    ids = [el["id"] for el in soup.select("[id]")]
    assert len(ids) == len(set(ids)), "ids repeat"
    for target in (t for el in soup.select("[aria-describedby]")
                   for t in el["aria-describedby"].split()):
        assert target in ids, f"aria-describedby points at a missing {target}"
    for control in block.select("input:not([type=file]), textarea"):
        assert block.find("label", attrs={"for": control["id"]}), control
    # the static rendering is all still there, before the controls
    assert block.select_one("details.gl-solution") is not None
    if ex.hints:
        assert block.select_one("button[data-hint]").get_text() == f"Hint (1 of {len(ex.hints)})"
        assert str(block).index("data-gl-live") < str(block).index('class="gl-hints"')
    if ex.kind == "choice":
        values = [i["value"] for i in block.select("[data-answer] input[type=radio]")]
        assert values == [key for key, _ in ex.option_pairs()]
    if ex.kind == "code":
        assert block["data-function"] == ex.function_name
        assert block.select_one("textarea[data-answer]").get_text() == "def f():\n    return 1\n"
        assert block.select_one("pre.gl-model-solution").get_text() == \
            browser.learner_solution(ex)
        assert f"Check {ex.function_name}" in block.select_one("button[data-check]").get_text()
    if ex.kind == "predict":
        assert block["data-measurement"] == f"{ex.id}-measurement"
        assert float(block["data-measured"]) == 2.5
        assert block.select_one("button[data-check]").get_text() == "Commit prediction"


def test_live_markup_refuses_markup_of_another_exercise() -> None:
    first, second = EXERCISES[0], EXERCISES[1]
    with pytest.raises(ValueError, match=second.id):
        EXT.live_markup(static_html(first), second)


def _cell(*outputs: str) -> nodes.container:
    cell = nodes.container(nb_element="cell_code", classes=["cell"])
    out = nodes.container(nb_element="cell_code_output", classes=["cell_output"])
    for text in outputs:
        out += nodes.raw("", text, format="html")
    cell += out
    return cell


def test_a_prediction_is_paired_with_the_cell_that_revealed_it() -> None:
    slug = "flops_and_scaling"
    predict = next(ex for ex in lesson_module(slug).EXERCISES if ex.kind == "predict")
    other = next(ex for ex in lesson_module(slug).EXERCISES if ex.kind == "numeric")
    revealed = predict.variant(None).compare(None, 0.5)
    from gpulesson.exercises.render import feedback_html

    doc = nodes.document(None, None)
    shown = _cell(static_html(predict.variant(None)))
    unrelated = _cell("<p>no reveal here</p>")
    reveal = _cell("<pre>MFU 50%</pre>", feedback_html(revealed))
    later = _cell(static_html(other.variant(None)), feedback_html(revealed))
    for node in (shown, unrelated, reveal, later):
        doc += node
    found = EXT.measurement_cells(doc)
    assert list(found) == [predict.id]
    cell, text = found[predict.id]
    assert cell is reveal
    assert browser.measured_value(predict.variant(None), text) == pytest.approx(0.5)


def test_a_revealed_measurement_says_where_the_comparison_is() -> None:
    """Review 3, S3: once a prediction is committed the page shows the build's output, which
    told the reader to commit a prediction before running the measurement."""
    from gpulesson.exercises.core import NO_PREDICTION_YET
    from gpulesson.exercises.render import feedback_html

    predict = next(ex for ex in lesson_module("flops_and_scaling").EXERCISES
                   if ex.kind == "predict").variant(None)
    output = feedback_html(predict.compare(None, 0.5))
    assert NO_PREDICTION_YET in output   # what Jupyter shows
    reveal = _cell("<pre>MFU 50%</pre>", output)
    assert EXT.site_measurement(reveal, predict.number) == 1
    text = reveal.astext()
    assert NO_PREDICTION_YET not in text
    assert f"exercise {predict.number} above compares it with your prediction" in text
    assert browser.measured_value(predict, " ".join(text.split())) == pytest.approx(0.5)


def test_the_editor_starts_from_the_notebooks_stub() -> None:
    ex = next(e for e in EXERCISES if e.id == "optimisations-ex2")
    stub = "import math\n\n\ndef merge_sums(m_a, l_a, m_b, l_b):\n    return None\n"
    sources = ["from gpulesson.exercises import load_lesson", "lesson.show(2)", stub]
    assert EXT._stub(ex, sources) == stub
    assert EXT._stub(ex, ["lesson.check(2, merge_sums)"]).startswith(
        f"def merge_sums({ex.signature}):")


@pytest.mark.parametrize(("url", "placeholder"), [
    ("https://github.com/example/gpu-mathematics-for-ml", True),
    ("https://jupyterhub.example.org", True),
    ("https://hub.example.com/x", True),
    ("", True),
    (None, True),
    ("https://github.com/acme-university/gpu-course", False),
    ("https://mybinder.org", False),
    ("https://hub.uni-example.de", False),
])
def test_placeholder_urls(url, placeholder) -> None:
    assert EXT.placeholder_url(url) is placeholder


def _config(repository: str, hub: str) -> SimpleNamespace:
    return SimpleNamespace(copyright="2025", html_theme_options={
        "repository_url": repository, "use_repository_button": True,
        "launch_buttons": {"binderhub_url": "https://mybinder.org",
                           "colab_url": "https://colab.research.google.com",
                           "jupyterhub_url": hub, "notebook_interface": "jupyterlab"}})


def test_a_placeholder_repository_shows_no_buttons() -> None:
    config = _config("https://github.com/example/gpu-mathematics-for-ml", "")
    EXT._on_config_inited(None, config)
    options = config.html_theme_options
    assert options["launch_buttons"] == {} and options["use_repository_button"] is False
    assert "repository_url" not in options


def test_a_real_repository_keeps_its_buttons_but_no_placeholder_hub() -> None:
    config = _config("https://github.com/acme/gpu-course", "https://jupyterhub.example.org")
    EXT._on_config_inited(None, config)
    options = config.html_theme_options
    assert options["repository_url"] == "https://github.com/acme/gpu-course"
    assert options["use_repository_button"] is True
    assert set(options["launch_buttons"]) == {"binderhub_url", "colab_url", "notebook_interface"}
    real_hub = _config("https://github.com/acme/gpu-course", "https://hub.acme.edu")
    EXT._on_config_inited(None, real_hub)
    assert real_hub.html_theme_options["launch_buttons"]["jupyterhub_url"] == \
        "https://hub.acme.edu"


def test_the_footer_runs_to_this_year(monkeypatch: pytest.MonkeyPatch) -> None:
    in_2026 = calendar.timegm((2026, 12, 1, 12, 0, 0))
    assert EXT.copyright_years("2025", in_2026) == "2025–2026"
    assert EXT.copyright_years("2025", calendar.timegm((2025, 6, 1, 0, 0, 0))) == "2025"
    assert EXT.copyright_years("The course authors", in_2026) == "The course authors"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(calendar.timegm((2027, 1, 2, 0, 0, 0))))
    assert EXT.copyright_years("2025") == "2025–2027"


def test_an_exercise_the_browser_cannot_check_stays_static_and_says_why() -> None:
    ex = next(e for e in EXERCISES if e.kind == "code")
    markup = EXT.live_markup(static_html(ex), ex, needs=["numba", "numpy"])
    soup = BeautifulSoup(markup, "html.parser")
    block = soup.select_one("div.gl-exercise")
    assert block["data-state"] == "unavailable"
    assert not block.select("[data-gl-live], [data-answer], button[data-check]")
    note = block.select_one("[data-unavailable]").get_text()
    assert "Jupyter" in note and "numba, numpy" in note
    assert block.select_one("details.gl-solution") is not None


FAKE_BANK = '''
from gpulesson.exercises.core import NumericExercise

LESSON = "zz_fake"
TITLE = "Fake"


def _needs_a_library(p):
    import not_an_installed_library  # noqa: F401
    return 1.0


def _broken(p):
    return 1 / 0


EXERCISES = (
    NumericExercise(lesson=LESSON, number=1, title="fine", question="q", solution="s",
                    answer=lambda p: 2.0, unit="GB", dimension="bytes"),
    NumericExercise(lesson=LESSON, number=2, title="library", question="q", solution="s",
                    answer=_needs_a_library, unit="GB", dimension="bytes"),
    NumericExercise(lesson=LESSON, number=3, title="bug", question="q", solution="s",
                    answer=_broken, unit="GB", dimension="bytes"),
)
'''


def test_the_build_tells_a_missing_library_from_a_bug() -> None:
    """Run in the pack alone, an exercise that imports a library the pack lacks names it;
    one that fails for another reason names none (the build warns, so -W fails it)."""
    assert exercises_left_static() == {} or all(
        found["needs"] for found in exercises_left_static().values())
    pack = exercise_pack()
    pack = {**pack, "files": {**pack["files"],
                              "gpulesson/exercises/bank/zz_fake.py": FAKE_BANK}}
    found = EXT.browser_unavailable(pack)
    assert "zz_fake:1" not in found
    assert found["zz_fake:2"]["needs"] == ["not_an_installed_library"]
    assert found["zz_fake:3"]["needs"] == [] and "ZeroDivisionError" in found["zz_fake:3"]["why"]


def _glossary_definition(*children: nodes.Node) -> nodes.definition:
    definition = nodes.definition()
    definition += nodes.paragraph("", "", *children)
    return definition


def _citation(key: str) -> nodes.Node:
    from sphinx import addnodes

    ref = addnodes.pending_xref(key, nodes.inline(key, key), refdomain="cite", reftype="p",
                                reftarget=key)
    return ref


@pytest.mark.parametrize(("children", "expected"), [
    # "... intensity {cite:p}`williams2009roofline`. Plotted ..." (the glossary's Roofline)
    ((nodes.Text("the smaller of the peak and the bandwidth times the intensity "),
      _citation("williams2009roofline"), nodes.Text(". Plotted on log axes it looks")),
     "the smaller of the peak and the bandwidth times the intensity."),
    # "(Mixtral 8x7B: 12.9B of 46.7B {cite:p}`jiang2024mixtral`). Training ..."
    ((nodes.Text("the total minus the experts (Mixtral: 12.9B of 46.7B\n"),
      _citation("jiang2024mixtral"), nodes.Text("). Training FLOPs count")),
     "the total minus the experts (Mixtral: 12.9B of 46.7B)."),
    # "Zero Redundancy Optimizer {cite:p}`rajbhandari2020zero`: data parallelism ..."
    ((nodes.Text("Zero Redundancy Optimizer "), _citation("rajbhandari2020zero"),
      nodes.Text(": data parallelism that shards. More")),
     "Zero Redundancy Optimizer: data parallelism that shards."),
    # a word right after the citation keeps its space
    ((nodes.Text("The gated MLP of Llama "), _citation("shazeer2020glu"),
      nodes.Text("and many models. More")),
     "The gated MLP of Llama and many models."),
])
def test_key_term_definitions_drop_raw_citation_keys(children, expected) -> None:
    """Review 3, defects 1.8, 2.7, 4.6 and 5.3: a citation inside a glossary entry showed
    up in a lesson's Key terms as its raw BibTeX key."""
    sentence = EXT._first_sentence(_glossary_definition(*children))
    assert "".join(node.astext() for node in sentence) == expected


def _plot_cell(source: str) -> nodes.container:
    cell = nodes.container(nb_element="cell_code", classes=["cell"])
    cell += nodes.literal_block(source, source)
    out = nodes.container(nb_element="cell_code_output", classes=["cell_output"])
    out += nodes.image(uri="../_images/e3e8ab0.png")
    cell += out
    return cell


def test_a_figure_titled_by_a_value_first_has_its_own_alt_text() -> None:
    """An alt text built from an f-string title that starts with a value says little once
    the values are left out ("…: iteration ends at …" gives "Figure: iteration ends"); such
    a cell states its alt text itself (cell metadata ``mystnb: image: alt``, which myst-nb
    puts on the image)."""
    missing = []
    for slug in available_lessons():
        cells = json.loads((REPO_ROOT / "notebooks" / f"{slug}.ipynb").read_text(
            encoding="utf-8"))["cells"]
        for cell in cells:
            titles = EXT.plot_titles("".join(cell["source"])) if cell["cell_type"] == "code" else []
            alt = cell["metadata"].get("mystnb", {}).get("image", {}).get("alt", "")
            if any(t.startswith("…") for t in titles) and not alt.startswith("Figure: "):
                missing.append(f"{slug} {cell.get('id')}: {titles}")
    assert not missing, missing


def test_every_figure_gets_an_alt_text_from_its_titles() -> None:
    """Review 4, R-6: a plot's alt text was its file path (20 of 20 figures)."""
    section = nodes.section()
    section += nodes.title("", "6. Rooflines")
    titled = _plot_cell('fig, (a, b) = plt.subplots(1, 2)\n'
                        'label_axes(a, "n", "t", title="Alpha-beta model: latency for small "\n'
                        '           "messages, bandwidth for large")\n'
                        'b.set_title(f"{name}: measured")\nplt.show()\n')
    untitled = _plot_cell("plt.plot(x, y)\nplt.show()\n")
    section += titled
    section += untitled
    doc = nodes.document(None, None)
    doc += section
    assert EXT.figure_alt_texts(doc) == 2
    assert titled.next_node(nodes.image)["alt"] == (
        "Figure: Alpha-beta model: latency for small messages, bandwidth for large; "
        "measured")
    assert untitled.next_node(nodes.image)["alt"] == "Figure of the section “6. Rooflines”"
    assert EXT.figure_alt_texts(doc) == 0   # an alt text already given is kept


@pytest.mark.parametrize(("title", "alt"), [
    ("Buy a DGX H100 or rent 8 H100s at … per GPU-hour", "Buy a DGX H100 or rent 8 H100s"),
    ("Memory during one training step of … layers", "Memory during one training step"),
    ("Memory of … layers against k", "Memory against k"),
    ("…: iteration ends at …", "iteration ends"),
    ("Llama-2-7B training, …", "Llama-2-7B training"),
    ("Speed at … and at …", "Speed"),
    ("Roofline of an H100", "Roofline of an H100"),
    ("MFU of a … training step", None),   # no phrase to leave out: the title is not used
    ("…", None),
])
def test_an_alt_text_leaves_out_what_the_code_fills_in(title: str, alt: str | None) -> None:
    assert EXT.alt_title(title) == alt


def test_no_figures_alt_text_holds_a_placeholder() -> None:
    """2026-12-06: 3 of the site's 43 figure alt texts read "…" where the code fills in a
    value ("rent 8 H100s at … per GPU-hour"). Every lesson's plotting cell without an alt
    text of its own (cell metadata) gets one with no "…" in it."""
    checked, bad = 0, []
    for slug in available_lessons():
        cells = json.loads((REPO_ROOT / "notebooks" / f"{slug}.ipynb").read_text(
            encoding="utf-8"))["cells"]
        for cell in cells:
            source = "".join(cell["source"])
            if (cell["cell_type"] != "code" or not EXT.plot_titles(source)
                    or cell["metadata"].get("mystnb", {}).get("image", {}).get("alt")):
                continue
            section = nodes.section()
            section += nodes.title("", "A section")
            section += (drawn := _plot_cell(source))
            doc = nodes.document(None, None)
            doc += section
            assert EXT.figure_alt_texts(doc) == 1
            checked += 1
            alt = drawn.next_node(nodes.image)["alt"]
            if "…" in alt or not alt.startswith("Figure: "):
                bad.append(f"{slug} {cell.get('id')}: {alt}")
    assert checked >= 10, checked
    assert not bad, bad
