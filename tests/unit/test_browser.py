"""The Python side of the site's calculators (:mod:`gpulesson.browser`) and its pack.

What the browser runs is checked here in CPython: text from form controls parsed into the
registry's types and handed to the preset rules of
:func:`gpulesson.calculators.apply_changes`, errors as messages, large integers as
strings, and the pack the site ships (``scripts/gl_calculators.py``): exactly the
package's files, every module the registry imports (its lesson modules are imported by
name), standard library only, and it answers like the installed package when imported
on its own in a bare interpreter (``python -I -S``, as in Pyodide: no site-packages).
"""

from __future__ import annotations

import importlib.util
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from gpulesson import browser, calculators
from gpulesson.calculators.engine import _range_text

REPO = Path(__file__).resolve().parents[2]


def _load_extension():
    spec = importlib.util.spec_from_file_location("gl_calculators",
                                                  REPO / "scripts" / "gl_calculators.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ext = _load_extension()


# ---------------------------------------------------------------------------------------
# react: the page's text through the preset rules of gpulesson.calculators.apply_changes


def _as_text(value: object) -> str:
    return "" if value is None else str(value)


def _edit(rng: random.Random, spec: calculators.Input) -> str:
    """What a reader might type into or choose in the control of ``spec``."""
    if spec.kind in ("choice", "preset"):
        return rng.choice(spec.choice_values())
    return rng.choice([str(spec.min), str(spec.max), str((spec.min + spec.max) / 2), "",
                       "abc", str(spec.max * 3), "1e3"])


@pytest.mark.parametrize("name", list(calculators.CALCULATORS))
def test_react_is_apply_changes_of_the_parsed_text(name: str) -> None:
    """Over a seeded run of a reader's edits, the answer is exactly the registry's
    apply_changes of the parsed values: the bridge adds parsing and JSON, no rule."""
    rng = random.Random(name)
    calc = calculators.get(name)
    text = {k: _as_text(v) for k, v in calculators.resolve(name).items()}
    for _ in range(12):
        spec = rng.choice(calc.inputs)
        text[spec.name] = _edit(rng, spec)
        answer = browser.react(name, text, [spec.name])
        parsed = {k: browser.parse_value(calc.input(k), v) for k, v in text.items()}
        expected = calculators.apply_changes(name, parsed, [spec.name])
        assert answer == {"updates": calculators.to_json(expected["updates"]),
                          "result": expected["result"]}
        text.update({k: _as_text(v) for k, v in answer["updates"].items()})


def test_the_same_figure_typed_again_keeps_the_preset() -> None:
    """NVIDIA H100 whitepaper (2022): H100 SXM5, 989.4 TFLOP/s dense BF16, 3.35 TB/s.
    "989.40" is that figure; "500" is not, and turns the GPU preset to custom."""
    values = {"gpu": "H100 SXM", "dtype": "bf16", "peak_flops": "989.40", "bandwidth": "3.35"}
    assert browser.react("gemm", values, ["peak_flops"])["updates"] == {}
    edited = browser.react("gemm", {**values, "peak_flops": "500"}, ["peak_flops"])
    assert edited["updates"] == {"gpu": "custom"}
    assert edited["result"]["ok"]


def test_a_gpu_without_the_precision_names_the_preset() -> None:
    """The V100 has no BF16 (NVIDIA V100 datasheet, 2020)."""
    answer = browser.react("gemm", {"gpu": "V100 SXM", "dtype": "bf16"}, ["gpu"])
    assert not answer["result"]["ok"]
    assert answer["result"]["input"] == "gpu"
    assert "bf16" in answer["result"]["error"]


@pytest.mark.parametrize(("kind", "text", "expected"), [
    ("integer", "4096", 4096),
    ("integer", "9007199254740993", 9007199254740993),  # 2^53 + 1, exact
    ("integer", "1.5", 1.5),                             # validation names it
    ("integer", "", None),
    ("number", "3.35", 3.35),
    ("number", "80", 80.0),
    ("number", "1e-7", 1e-7),
    ("number", "  ", None),
    ("number", "abc", "abc"),
])
def test_parse_value(kind: str, text: str, expected: object) -> None:
    spec = calculators.Input(name="x", label="X", kind=kind, default=1, min=0, max=1)
    value = browser.parse_value(spec, text)
    assert value == expected and type(value) is type(expected)


def test_empty_and_out_of_range_inputs_become_messages() -> None:
    empty = browser.react("amdahl", {"serial_fraction": "", "workers": "8"}, ["serial_fraction"])
    assert not empty["result"]["ok"] and empty["result"]["input"] == "serial_fraction"
    assert "needs a value" in empty["result"]["error"]
    big = browser.react("amdahl", {"serial_fraction": "0.1", "workers": "-3"}, ["workers"])
    assert big["result"]["input"] == "workers" and "between" in big["result"]["error"]


def test_react_json_round_trips_and_keeps_large_integers_exact() -> None:
    answer = json.loads(browser.react_json("param_count", json.dumps({"model": "llama-3-70b"}),
                                           json.dumps(["model"])))
    # Meta's Llama 3 70B model card: 70.6B parameters (70,553,706,496 counted exactly)
    assert answer["result"]["values"]["total"] == 70_553_706_496
    big = 2**60 + 1
    assert json.loads(json.dumps(calculators.to_json({"n": big})))["n"] == str(big)


def test_react_json_answers_bad_requests_with_a_message() -> None:
    unknown = json.loads(browser.react_json("no_such", "{}", "[]"))
    assert not unknown["result"]["ok"] and "no_such" in unknown["result"]["error"]
    broken = json.loads(browser.react_json("gemm", "[1, 2]", "[]"))
    assert not broken["result"]["ok"] and "bad request" in broken["result"]["error"]


@pytest.mark.parametrize("typed", ["1" + "0" * 400, "-" + "9" * 330, "1e400", "nan"])
def test_react_json_answers_numbers_beyond_float_range(typed: str) -> None:
    """An integer of 401 digits typed into a box raised OverflowError out of the one
    function the page calls; it is a message naming the input."""
    answer = json.loads(browser.react_json("amdahl", json.dumps({"workers": typed}),
                                           json.dumps(["workers"])))
    assert answer["result"]["ok"] is False and answer["result"]["input"] == "workers"


def test_react_json_answers_nesting_too_deep_for_json() -> None:
    answer = json.loads(browser.react_json("amdahl", "[" * 100_000 + "]" * 100_000))
    assert answer["result"]["ok"] is False and "bad request" in answer["result"]["error"]


# ---------------------------------------------------------------------------------------
# The pack the site ships


def test_pack_is_the_packages_own_files() -> None:
    pack = ext.make_pack()
    package = REPO / "gpulesson"
    for path, text in pack["files"].items():
        assert (REPO / path).read_text(encoding="utf-8") == text, path
    names = set(pack["files"])
    for needed in ("gpulesson/__init__.py", "gpulesson/browser.py",
                   "gpulesson/calculators/__init__.py", "gpulesson/calculators/engine.py",
                   "gpulesson/planning/__init__.py", "gpulesson/units.py", "gpulesson/hardware.py",
                   "gpulesson/data/gpus.json"):
        assert needed in names
    lessons = {p.relative_to(REPO).as_posix()
               for p in (package / "calculators" / "lessons").glob("*.py")}
    assert lessons and lessons <= names
    # nothing that needs numpy, matplotlib or ipywidgets
    for heavy in ("widgets", "display", "bench", "device", "machine", "plotting"):
        assert f"gpulesson/{heavy}.py" not in names
    assert len(pack["sha256"]) == 64
    assert {p.name for p in (package / "data").iterdir() if p.is_file()} <= {
        Path(n).name for n in names}


IMPORTED = r"""
import json, sys
import gpulesson.browser
print(json.dumps(sorted(m.__file__ for name, m in sys.modules.items()
                        if name.partition(".")[0] == "gpulesson")))
"""


def test_pack_holds_every_module_the_registry_imports() -> None:
    """Whatever importing gpulesson.browser loads, in a fresh interpreter (the registry
    and the lesson modules it imports by name), the pack holds."""
    proc = subprocess.run([sys.executable, "-c", IMPORTED], capture_output=True, text=True,
                          timeout=120, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    loaded = {Path(f).resolve().relative_to(REPO).as_posix() for f in json.loads(proc.stdout)}
    assert any(p.startswith("gpulesson/calculators/lessons/") for p in loaded)
    missing = loaded - set(ext.pack_files())
    assert not missing, f"imported but not packed: {sorted(missing)}"


def test_a_package_imported_by_name_is_packed_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No import statement names the lesson modules (they are imported by slug at run
    time), so the pack takes every module of the packages in ``WHOLE_PACKAGES``."""
    fake = tmp_path / "gpulesson"
    (fake / "calculators" / "lessons").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "browser.py").write_text("from gpulesson import calculators\n")
    (fake / "calculators" / "__init__.py").write_text(
        "import importlib\nimportlib.import_module('gpulesson.calculators.lessons.one')\n")
    (fake / "calculators" / "lessons" / "__init__.py").write_text("")
    (fake / "calculators" / "lessons" / "one.py").write_text("from gpulesson import units\n")
    (fake / "units.py").write_text("")
    (fake / "unused.py").write_text("")
    monkeypatch.setattr(ext, "_package_dir", lambda: fake)
    assert set(ext.pack_files()) == {
        "gpulesson/__init__.py", "gpulesson/browser.py", "gpulesson/calculators/__init__.py",
        "gpulesson/calculators/lessons/__init__.py", "gpulesson/calculators/lessons/one.py",
        "gpulesson/units.py"}


def test_pack_refuses_a_module_that_imports_a_third_party_library(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "gpulesson"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "browser.py").write_text("from gpulesson import calc\n")
    (fake / "calc.py").write_text("import numpy\n")
    monkeypatch.setattr(ext, "_package_dir", lambda: fake)
    with pytest.raises(Exception, match="numpy"):
        ext.pack_files()
    (fake / "calc.py").write_text("def f():\n    import numpy\n    return numpy\n")
    assert set(ext.pack_files()) == {"gpulesson/__init__.py", "gpulesson/browser.py",
                                     "gpulesson/calc.py"}


SANDBOX = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from gpulesson import browser, calculators
out = {}
for name in calculators.CALCULATORS:
    shown = calculators.resolve(name)
    out[name] = json.loads(browser.react_json(name, json.dumps({k: str(v) for k, v in
                                                                shown.items()}), "[]"))
bad = [m for m in sys.modules if m.partition(".")[0] not in sys.stdlib_module_names
       and m.partition(".")[0] not in ("gpulesson", "__main__")]
assert calculators.__file__.startswith(sys.argv[1]), calculators.__file__
print(json.dumps({"answers": out, "foreign": bad, "names": list(calculators.CALCULATORS)}))
"""


def test_pack_alone_answers_like_the_installed_package(tmp_path: Path) -> None:
    for path, text in ext.make_pack()["files"].items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", SANDBOX, str(tmp_path)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["foreign"] == []
    assert report["names"] == list(calculators.CALCULATORS)
    for name, answer in report["answers"].items():
        shown = calculators.resolve(name)
        here = json.loads(browser.react_json(name, json.dumps({k: str(v) for k, v in
                                                               shown.items()}), "[]"))
        assert answer == here, name
        assert answer["result"]["ok"], f"{name}: {answer['result']}"


def test_page_calculators_finds_registry_markup_only() -> None:
    body = ('<div class="gl-calculator" data-calculator="gemm" id="a">'
            '<div class="gl-calculator" data-calculator="demo" id="b">')
    assert ext.page_calculators(body) == ["gemm"]
    assert ext.page_calculators("<p>no calculator</p>") == []


@pytest.mark.parametrize(("name", "box"), [("gemm", "m"), ("amdahl", "serial_fraction")])
def test_a_box_the_browser_cannot_read_is_not_called_empty(name: str, box: str) -> None:
    """Audit 2026-12-06: typed into a number box, "1e309" (beyond a double) or "1e" leaves
    the box's value empty, and the reader who typed it was told the box "needs a value".
    The page sends :data:`browser.UNREADABLE` for such a box; the message names the box
    and its range and says that what is typed is not a number."""
    spec = calculators.get(name).input(box)
    text = {k: _as_text(v) for k, v in calculators.resolve(name).items()}
    result = browser.react(name, {**text, box: browser.UNREADABLE}, [box])["result"]
    assert not result["ok"] and result["input"] == box
    assert result["error"].startswith(f"{box} ({spec.label}) must be a ")
    assert "needs a value" not in result["error"]
    assert "not a number" in result["error"]
    assert _range_text(spec) in result["error"]
    # an empty box still needs a value, and another input at fault keeps its own message
    assert "needs a value" in browser.react(name, {**text, box: ""}, [box])["result"]["error"]
    other = next(s for s in calculators.get(name).inputs
                 if s.kind in ("number", "integer") and s.name != box)
    both = browser.react(name, {**text, other.name: "-1", box: browser.UNREADABLE}, [box])
    assert both["result"]["input"] in (box, other.name)
    if both["result"]["input"] == other.name:
        assert "not a number the browser can read" not in both["result"]["error"]
    # the page sends the same text (scripts/site_js/calculators.js)
    script = Path(__file__).parents[2] / "scripts" / "site_js" / "calculators.js"
    assert f'var UNREADABLE = "{browser.UNREADABLE}";' in script.read_text(encoding="utf-8")
