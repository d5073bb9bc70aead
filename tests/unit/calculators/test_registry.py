"""Every registry entry: where it is declared, its worked example, its JSON spec, its
presets wired to the tables they claim, its errors naming the input; and what the
registry's modules may import."""

from __future__ import annotations

import ast
import json
import math
import random
import re
import sys
from pathlib import Path

import pytest

from gpulesson import calculators as C
from gpulesson import course, execution, hardware, transformer
from gpulesson.calculators import engine, lessons

NAMES = list(C.CALCULATORS)
PACKAGE = Path(C.__file__).resolve().parent


def test_one_lesson_module_per_slug_and_entries_in_course_order():
    modules = sorted(p.stem for p in (PACKAGE / "lessons").glob("*.py") if p.stem != "__init__")
    assert set(modules) <= set(course.SLUGS), "a lesson module not named by a lesson slug"
    order = [course.number(C.get(name).lesson) for name in NAMES]
    assert order == sorted(order)
    assert [c.name for c in lessons.entries()] == NAMES


def test_an_entry_filed_under_another_lesson_is_refused(monkeypatch):
    from dataclasses import replace

    from gpulesson.calculators.lessons import optimisations

    moved = replace(optimisations.ENTRIES[0], lesson="cost_economics")
    monkeypatch.setattr(optimisations, "ENTRIES", (moved,))
    with pytest.raises(ValueError, match="lessons.optimisations declares 'flash_attention' "
                                         "with lesson 'cost_economics'"):
        lessons.entries()


@pytest.mark.parametrize("name", NAMES)
def test_example_computes_every_declared_output(name):
    calc = C.get(name)
    ex = C.example(name)
    assert list(ex["outputs"]) == [o.name for o in calc.outputs]
    assert set(ex["inputs"]) == {i.name for i in calc.inputs}
    assert calc.title and calc.description
    result = C.evaluate(name)
    assert result["ok"], result
    for out in calc.outputs:
        text = result["text"][out.name]
        assert text and "nan" not in text.lower() and "inf" not in text.lower()


def _walk(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _walk(v)
    elif isinstance(value, list):
        for v in value:
            yield from _walk(v)
    else:
        yield value


@pytest.mark.parametrize("name", NAMES)
def test_describe_is_json_with_no_unsafe_integers(name):
    spec = C.describe(name)
    assert json.loads(json.dumps(spec, allow_nan=False)) == spec
    for leaf in _walk(spec):
        if isinstance(leaf, int) and not isinstance(leaf, bool):
            assert abs(leaf) <= 2**53
    assert [i["name"] for i in spec["inputs"]] == [i.name for i in C.get(name).inputs]


@pytest.mark.parametrize("name", NAMES)
def test_every_input_and_choice_is_documented(name):
    for spec in C.get(name).inputs:
        assert spec.label
        if spec.kind in ("number", "integer"):
            default = C.resolve(name)[spec.name]
            assert spec.min <= default <= spec.max, spec.name
        else:
            assert all(c.label for c in spec.choices)


@pytest.mark.parametrize("name", NAMES)
def test_every_number_input_out_of_range_raises_naming_it(name):
    calc = C.get(name)
    for spec in calc.inputs:
        if spec.kind not in ("number", "integer"):
            continue
        bad = spec.max * 2 + 1
        with pytest.raises(ValueError) as err:
            C.compute(name, **{spec.name: bad})
        assert str(err.value).startswith(f"{spec.name} ("), str(err.value)
        assert "between" in str(err.value)
        result = C.evaluate(name, {spec.name: bad})
        assert result["ok"] is False and result["input"] == spec.name


def _reader_draw(calc: C.Calculator, rng: random.Random) -> dict[str, object]:
    """Inputs a reader could set on the site: presets and choices at random, and the
    numbers a preset does not fill anywhere in their range (an end one time in five)."""
    drawn: dict[str, object] = {}
    filled: set[str] = set()
    for spec in calc.inputs:
        if spec.kind == "preset":
            drawn[spec.name] = rng.choice(spec.choice_values())
            filled |= set(spec.fills.get(drawn[spec.name], {}))
    for spec in calc.inputs:
        if spec.name in drawn or spec.name in filled:
            continue
        if spec.kind == "choice":
            drawn[spec.name] = rng.choice(spec.choice_values())
            continue
        low, high = float(spec.min), float(spec.max)
        if rng.random() < 0.2:
            value = rng.choice((low, high))
        elif low > 0 and high / low > 100:
            value = math.exp(rng.uniform(math.log(low), math.log(high)))
        else:
            value = rng.uniform(low, high)
        drawn[spec.name] = round(value) if spec.kind == "integer" else float(f"{value:.4g}")
    return drawn


#: A call written out (``plan_serving(model=TransformerConfig(...``): what
#: gpulesson._validate.guarded puts before a message from deep inside, for a programmer.
CALL_TEXT = re.compile(r"\b\w+\(\w+=")


@pytest.mark.parametrize("name", NAMES)
def test_inputs_in_range_give_outputs_or_a_message_naming_an_input(name):
    """Audit of the site's calculators (2026-12): the site's own random test draws inputs
    in range and skips every set the package refuses, so a refusal that named no input
    and read as a call ("plan_serving(model=TransformerConfig(hidden=8192, layers...,
    gpu=GPUSpec(...: size (12) must be a multiple of the 8 ranks ...", the serving
    planner at tp = 12) passed unseen. Here every refusal must name the input to mark,
    and no message may be a call written out."""
    calc = C.get(name)
    rng = random.Random(f"reader-{name}")
    for _ in range(40):
        drawn = _reader_draw(calc, rng)
        result = C.evaluate(name, drawn)
        if result["ok"]:
            assert not any(CALL_TEXT.search(t) for t in result["text"].values()), drawn
            continue
        assert result["input"] is not None, (drawn, result["error"])
        assert not CALL_TEXT.search(result["error"]), (drawn, result["error"])


@pytest.mark.parametrize("name", NAMES)
def test_unknown_choice_raises_naming_it(name):
    for spec in C.get(name).inputs:
        if spec.kind in ("choice", "preset"):
            with pytest.raises(ValueError, match=rf"^{spec.name} "):
                C.compute(name, **{spec.name: "no-such-choice"})


# --- presets are wired to the tables they claim ---------------------------------------

SHAPE = ("hidden", "layers", "heads", "kv_heads", "head_dim", "ffn", "vocab", "max_positions")


def _with_preset(preset: str) -> list[str]:
    return [n for n in NAMES if any(i.name == preset and i.kind == "preset"
                                    for i in C.get(n).inputs)]


@pytest.mark.parametrize("name", _with_preset("model"))
def test_every_model_preset_fills_the_models_config(name):
    """Each model choice fills the shape (or the count) of gpulesson.transformer.PRESETS,
    whose figures come from the models' config.json files. A count is computed in billions
    to 12 significant digits: exact below a trillion, Kimi K2's 1,026,408,232,448 as
    1,026.40823245 billion (2 parameters off, which preset_config's tolerance of a
    billionth keeps the preset's); its box shows it to four digits (671 for DeepSeek-V3's
    671.0264192), which the calculation reads as the exact count."""
    inputs = {i.name for i in C.get(name).inputs}
    for key, cfg in transformer.PRESETS.items():
        shown = C.resolve(name, model=key)
        if "n_params" in inputs:
            count = transformer.param_count(cfg)
            billions = float(f"{count / 1e9:.12g}")
            assert shown["n_params"] == engine._in_box(billions), key
            exact = C.si_inputs(name, model=key)["n_params"]
            assert exact == pytest.approx(billions * 1e9, rel=1e-15), key
            assert C.si_inputs(name, model=key, n_params=shown["n_params"]) == \
                C.si_inputs(name, model=key), key
            if count < 1e12:
                assert round(exact) == count, key
            continue
        assert tuple(shown[k] for k in SHAPE) == tuple(getattr(cfg, k) for k in SHAPE), key
        assert shown["embeddings"] == ("tied" if cfg.tied_embeddings else "untied")
        assert shown["mlp"] == ("gated" if cfg.gated_mlp else "plain")
        assert shown["norm"] == cfg.norm


@pytest.mark.parametrize("name", _with_preset("model"))
def test_every_model_preset_computes_at_the_defaults(name):
    """Every model of the menu, the 1T-parameter Kimi K2 and Llama 4's chunked layers
    included, gives every output of every calculator that takes a model at its default
    inputs: no error, no NaN or infinity, and a model that does not fit says so
    (``fits`` is a bool or a sentence, never missing)."""
    calc = C.get(name)
    for key in transformer.PRESETS:
        out = C.compute(name, model=key)
        assert set(out) == {o.name for o in calc.outputs}, key
        for field, value in out.items():
            if isinstance(value, float):
                assert math.isfinite(value), (key, field, value)
        if "fits" in out:
            assert isinstance(out["fits"], (bool, str)) and out["fits"] != "", key
    if name in ("will_it_fit", "training_memory", "inference", "zero"):
        # 2.05 TB of BF16 weights: not on one 80 GB GPU, nor its training state (16.4 TB)
        # sharded over the 64 GPUs of zero's defaults (256.6 GB each)
        fits = C.compute(name, model="kimi-k2")["fits"]
        assert fits is False or fits.startswith("no: at least 26 GPUs"), fits


@pytest.mark.parametrize("name", _with_preset("gpu"))
def test_every_gpu_preset_fills_the_datasheet_figures(name):
    """Each GPU choice fills the figures of gpulesson.hardware.GPUS (datasheets), the dense
    peak of the chosen precision, and an SM count that of gpulesson.execution (a preset with
    SM counts lists the GPUs that module knows); a precision without a figure names the GPU
    input."""
    calc = C.get(name)
    fills = calc.input("gpu").fills
    for key, gpu in hardware.GPUS.items():
        if key not in fills:
            assert key not in execution.GPU_EXECUTION, key
            assert any("sms" in fill for fill in fills.values()), key
            continue
        filled = set(fills[key])
        # the planners' presets also fill what gpulesson.planning.gpu_view reads of the GPU
        assert filled and filled <= {"gpu_memory", "bandwidth", "peak_flops", "sms",
                                     "matmul_efficiency", "usd_per_gpu_hour",
                                     "gpus_per_node", "scaleout"}
        for dtype in ("bf16", "fp32"):
            values = {"gpu": key, **({"dtype": dtype} if "peak_flops" in filled else {})}
            if "peak_flops" in filled and dtype not in gpu.peak_flops:
                with pytest.raises(ValueError, match=rf"^gpu: {key} has no dense {dtype}"):
                    C.resolve(name, **values)
                continue
            # the figures the calculation takes (SI units), whatever the boxes round
            exact = C.si_inputs(name, **values)
            assert C.si_inputs(name, **C.resolve(name, **values)) == exact, key
            if "sms" in filled:
                assert exact["sms"] == execution.gpu_execution(key).sms
            if "gpu_memory" in filled:
                # a planner starts from the reported total (GPUSpec.memory_total)
                memory = gpu.memory_total if "matmul_efficiency" in filled else gpu.memory_bytes
                assert exact["gpu_memory"] == pytest.approx(memory, rel=1e-12)
            if "bandwidth" in filled:
                assert exact["bandwidth"] == pytest.approx(gpu.bandwidth, rel=1e-12)
            if "peak_flops" in filled:
                assert exact["peak_flops"] == pytest.approx(gpu.peak_flops[dtype], rel=1e-12)


# --- what the registry may import -----------------------------------------------------

#: The formula modules (and the lesson list) the registry builds on.
FORMULA_MODULES = {"course", "units", "_validate", "gemm", "roofline", "transformer",
                   "activations", "memory", "flops", "inference", "distributed", "cost",
                   "optimisations", "hardware", "planning", "prices", "execution",
                   "serving_techniques"}


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")),
                         ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_registry_modules_import_only_formula_modules_and_each_other(path: Path):
    """The registry declares; it builds on the formula modules and never on a front end
    (widgets, exercises) or a third-party library."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = ([f"{node.module}.{a.name}" for a in node.names]
                     if node.module == "gpulesson" else [node.module])
        else:
            assert not isinstance(node, ast.ImportFrom), "relative import"
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] != "gpulesson":
                assert parts[0] in sys.stdlib_module_names, name
            elif parts[1] != "calculators":
                assert parts[1] in FORMULA_MODULES, name

