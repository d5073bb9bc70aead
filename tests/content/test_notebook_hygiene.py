"""Tracked notebooks are committed clean: no outputs, no execution counts, no widget state,
no stray metadata, only the documented cell tags, and the standard ``python3`` kernel.

Outputs belong to the build (``make book``) and to nbval, never to git: they make diffs
unreadable, go stale, and can leak a machine's paths or timings.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import nbformat
import pytest

from gpulesson import course

from . import nbtools as nb

REPO_ROOT = Path(__file__).resolve().parents[2]

#: Notebook-level metadata a committed notebook may carry.
ALLOWED_NOTEBOOK_METADATA = {"kernelspec", "language_info"}
#: Cell-level metadata: tags, and myst-nb's per-cell options (captions, figure names).
ALLOWED_CELL_METADATA = {"tags", "mystnb"}
#: The tag vocabulary (CONTRIBUTING.md, "Notebooks"), plus Jupyter Book's standard
#: remove/hide variants.
ALLOWED_TAGS = {
    "remove-cell",
    "remove-input",
    "remove-output",
    "hide-input",
    "hide-output",
    "hide-cell",
    "raises-exception",
    "nbval-check-output",
    "nbval-ignore-output",
    # reference solutions and the hidden checks that use them: left out of the student
    # editions that `python -m gpulesson.exercises export` writes
    "solution",
}


def tracked_notebooks() -> list[Path]:
    """Notebooks git tracks (or, outside a git checkout, every notebook of the course)."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--", "*.ipynb"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        paths = [REPO_ROOT / p for p in out.split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        paths = sorted(REPO_ROOT.glob("notebooks/*.ipynb")) + sorted(
            REPO_ROOT.glob("exercises/*.ipynb")
        )
    return [p for p in paths if p.exists()]


def hygiene_problems(raw: dict) -> list[str]:
    """Everything that makes a notebook (as parsed JSON) unfit to commit; empty if clean."""
    problems: list[str] = []
    meta = raw.get("metadata", {})
    stray = sorted(set(meta) - ALLOWED_NOTEBOOK_METADATA)
    if "widgets" in meta:
        problems.append("notebook metadata holds saved widget state ('widgets')")
    stray = [key for key in stray if key != "widgets"]
    if stray:
        problems.append(f"stray notebook metadata {stray} (allowed: kernelspec, language_info)")
    kernel = meta.get("kernelspec", {}).get("name")
    if kernel != "python3":
        problems.append(f"kernelspec name is {kernel!r}; use 'python3' (the course's .venv)")
    seen: dict[str, int] = {}
    for index, cell in enumerate(raw.get("cells", [])):
        where = f"cell {index} ({cell.get('cell_type')})"
        if cell.get("id") is not None and cell["id"] in seen:
            # nbformat replaces a repeated id with a random one at every load, so links to
            # the cell and the built page would change from build to build
            problems.append(f"{where} repeats the id {cell['id']!r} of cell "
                            f"{seen[cell['id']]}")
        if cell.get("id") is not None:
            seen.setdefault(cell["id"], index)
        if cell.get("cell_type") == "code":
            if cell.get("outputs"):
                problems.append(f"{where} has {len(cell['outputs'])} output(s)")
            if cell.get("execution_count") is not None:
                problems.append(f"{where} has execution count {cell['execution_count']}")
        if cell.get("attachments"):
            problems.append(f"{where} has attachments (put images in files)")
        cell_meta = cell.get("metadata", {})
        extra = sorted(set(cell_meta) - ALLOWED_CELL_METADATA)
        if extra:
            problems.append(f"{where} has stray metadata {extra} (allowed: tags, mystnb)")
        unknown = sorted(set(cell_meta.get("tags", [])) - ALLOWED_TAGS)
        if unknown:
            problems.append(f"{where} has unknown tags {unknown} (see CONTRIBUTING.md)")
    return problems


NOTEBOOKS = tracked_notebooks()


@pytest.mark.skipif(not NOTEBOOKS, reason="no notebook is tracked yet")
@pytest.mark.parametrize(
    "path", NOTEBOOKS, ids=[str(p.relative_to(REPO_ROOT)) for p in NOTEBOOKS]
)
def test_tracked_notebook_is_clean(path: Path) -> None:
    raw = json.loads(path.read_text(encoding="utf-8"))
    nbformat.validate(nbformat.from_dict(raw))  # raises on an invalid notebook
    problems = hygiene_problems(raw)
    assert not problems, (
        f"{path.relative_to(REPO_ROOT)} is not clean:\n  - "
        + "\n  - ".join(problems)
        + "\nClear it with: jupyter nbconvert --clear-output --inplace "
        + str(path.relative_to(REPO_ROOT)) + " (nbconvert comes with JupyterLab: make lab)"
    )


@pytest.mark.parametrize("slug", course.SLUGS)
def test_no_hidden_cell_asserts(slug: str) -> None:
    """What a lesson checks, a learner can read: no hidden cell of its notebook (tagged
    ``remove-cell``) holds an assert."""
    hidden = nb.code(nb.notebook(slug), hidden=True)
    assert not [src for src in hidden if "assert" in src], f"{slug}: a hidden cell asserts"


def _notebook(**meta: object) -> dict:
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3"}, **meta}
    nb.cells = [nbformat.v4.new_markdown_cell("# T"), nbformat.v4.new_code_cell("1 + 1")]
    return json.loads(nbformat.writes(nb))


def test_a_clean_notebook_passes() -> None:
    assert hygiene_problems(_notebook()) == []


def test_a_repeated_cell_id_is_a_problem() -> None:
    raw = _notebook()
    raw["cells"][1]["id"] = raw["cells"][0]["id"]
    (problem,) = hygiene_problems(raw)
    assert problem.startswith("cell 1 (code) repeats the id") and "of cell 0" in problem


def test_each_kind_of_dirt_is_reported() -> None:
    raw = _notebook(widgets={"application/vnd.jupyter.widget-state+json": {}}, jupytext={})
    code = raw["cells"][1]
    code["outputs"] = [{"output_type": "execute_result", "data": {"text/plain": "2"},
                        "metadata": {}, "execution_count": 3}]
    code["execution_count"] = 3
    code["metadata"] = {"tags": ["remove-cell", "my-own-tag"], "scrolled": True}
    raw["metadata"]["kernelspec"]["name"] = "conda-env-x"
    text = "\n".join(hygiene_problems(raw))
    for expected in ("widget state", "stray notebook metadata ['jupytext']", "1 output(s)",
                     "execution count 3", "stray metadata ['scrolled']", "my-own-tag",
                     "'conda-env-x'"):
        assert expected in text, f"missing {expected!r} in:\n{text}"
