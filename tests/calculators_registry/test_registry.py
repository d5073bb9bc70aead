"""Every registry entry: its worked example computes, its spec is JSON, its presets are
wired to the published figures they claim, and its errors name the input."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpulesson import calculators as C
from gpulesson import course, hardware, transformer

NAMES = list(C.CALCULATORS)

#: Calculators the course must have (the seed page's and lesson 1's explorers).
REQUIRED = {
    "gemm", "training_memory", "param_count", "training_flops", "inference",
    "scaling_efficiency", "zero", "pipeline_bubble", "tco", "cost_per_token",
    "flash_attention", "checkpointing", "amdahl", "will_it_fit", "decode_ceiling",
}

LESSONS = set(course.SLUGS)


def test_every_required_calculator_is_registered():
    missing = REQUIRED - set(C.CALCULATORS)
    assert not missing, f"not yet in the registry: {sorted(missing)}"


@pytest.mark.parametrize("name", NAMES)
def test_example_computes_every_declared_output(name):
    calc = C.get(name)
    ex = C.example(name)
    assert list(ex["outputs"]) == [o.name for o in calc.outputs]
    assert set(ex["inputs"]) == {i.name for i in calc.inputs}
    assert calc.lesson in LESSONS
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


def test_big_integers_cross_as_strings():
    """A GEMM of 262144³ is 2^55 FLOPs: past 2^53, so it must reach JavaScript as text."""
    result = C.evaluate("gemm", {"m": 262_144, "k": 262_144, "n": 262_144})
    assert result["values"]["flops"] == str(2 * 262_144**3)
    assert int(result["values"]["flops"]) == 2**55


@pytest.mark.parametrize("name", NAMES)
def test_every_input_and_choice_is_documented(name):
    for spec in C.get(name).inputs:
        assert spec.label
        if spec.kind in ("number", "integer"):
            assert spec.min is not None and spec.max is not None
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


@pytest.mark.parametrize("name", NAMES)
def test_unknown_choice_raises_naming_it(name):
    for spec in C.get(name).inputs:
        if spec.kind in ("choice", "preset"):
            with pytest.raises(ValueError, match=rf"^{spec.name} "):
                C.compute(name, **{spec.name: "no-such-choice"})


# --- presets are wired to the sources they claim ------------------------------------


def test_model_preset_fills_the_published_shape_and_count():
    """GPT-2 small has 124,439,808 parameters (Hugging Face openai-community/gpt2)."""
    out = C.compute("param_count", model="gpt2")
    assert out["total"] == 124_439_808
    """Llama-2-7B: 6,738,415,616 (meta-llama/Llama-2-7b-hf safetensors index)."""
    assert C.compute("param_count", model="llama-2-7b")["total"] == 6_738_415_616
    shown = C.resolve("param_count", model="llama-3-8b")
    cfg = transformer.preset("llama-3-8b")
    assert (shown["hidden"], shown["layers"], shown["heads"], shown["kv_heads"],
            shown["ffn"], shown["vocab"]) == (cfg.hidden, cfg.layers, cfg.heads,
                                              cfg.kv_heads, cfg.ffn, cfg.vocab)


def test_gpu_preset_fills_the_datasheet_figures():
    """H100 SXM: 989.4 dense BF16 TFLOP/s (not the 1,979 sparse figure), 3.35 TB/s."""
    shown = C.resolve("gemm", gpu="H100 SXM", dtype="bf16")
    assert shown["peak_flops"] == 989.4 and shown["bandwidth"] == 3.35
    assert C.resolve("gemm", gpu="H100 SXM", dtype="fp8")["peak_flops"] == 1978.9
    assert C.resolve("training_memory", gpu="A100 80GB")["gpu_memory"] == 80
    for name in hardware.GPUS:
        assert C.resolve("gemm", gpu=name, dtype="fp32")["bandwidth"] * 1e12 == \
            pytest.approx(hardware.gpu(name).bandwidth, rel=1e-12)


def test_gpu_without_the_precision_is_an_error_naming_the_gpu_input():
    """The V100 datasheet has no BF16 tensor-core rate."""
    with pytest.raises(ValueError, match=r"^gpu: V100 SXM has no dense bf16 figure"):
        C.compute("gemm", gpu="V100 SXM", dtype="bf16")
    assert C.compute("gemm", gpu="V100 SXM", dtype="fp16")["flops"] == 2 * 4096**3


def test_worked_examples_reproduce_published_figures():
    """Anchors for the defaults a reader sees first.

    * GEMM 4096³: 2·4096³ = 137,438,953,472 FLOPs (the seed page's 137.4 GFLOP).
    * KV cache of Llama-3-8B at 8K context in BF16: 2·32·8·128·8192·2 bytes = 1 GiB
      (config.json: 32 layers, 8 KV heads of 128).
    * Llama-2-7B training on 2T tokens: 6·N·D = 8.09e22 FLOPs (Touvron et al. 2023 report
      184,320 A100-80GB GPU-hours for the 7B; 8.09e22 / (184,320 h · 3600 · 312e12)
      is an MFU of about 39 %, so 40 % gives about 180K GPU-hours).
    """
    assert C.example("gemm")["outputs"]["flops"] == 137_438_953_472
    assert C.example("kv_cache")["outputs"]["total"] == 2**30
    out = C.example("training_flops")["outputs"]
    assert out["total"] == pytest.approx(8.086e22, rel=1e-3)
    gpu_hours = out["time"] * C.example("training_flops")["inputs"]["n_devices"] / 3600
    assert gpu_hours == pytest.approx(184_320, rel=0.05)
    assert out["gpu_hours"] == pytest.approx(gpu_hours, rel=1e-12)


def test_invalid_combination_names_the_argument():
    """tp must divide the number of heads (32 for Llama-2-7B)."""
    result = C.evaluate("training_memory", {"tp": 3})
    assert result["ok"] is False
    assert result["error"] == "tp must divide heads (32), got 3"
    assert result["input"] == "tp"


# --- standard library only -----------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
STDLIB = set(sys.stdlib_module_names)


def test_calculators_module_imports_only_the_standard_library_and_calculators():
    tree = ast.parse((ROOT / "gpulesson" / "calculators.py").read_text(encoding="utf-8"))
    allowed_package = {"course", "units", "gemm", "roofline", "transformer", "memory", "flops",
                       "inference", "distributed", "cost", "optimisations", "hardware",
                       "_validate"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                assert alias.name.split(".")[0] in STDLIB, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.module == "gpulesson":
                assert {a.name for a in node.names} <= allowed_package, node.names
            elif node.module and node.module.startswith("gpulesson."):
                assert node.module.split(".")[1] in allowed_package, node.module
            else:
                assert node.module and node.module.split(".")[0] in STDLIB, node.module


def test_registry_runs_with_numpy_and_ipywidgets_unavailable():
    """As in Pyodide: import the registry and compute every example without them."""
    code = (
        "import sys\n"
        "for mod in ('numpy', 'ipywidgets', 'matplotlib', 'traitlets', 'IPython'):\n"
        "    sys.modules[mod] = None\n"
        "from gpulesson import calculators as C\n"
        "for name in C.CALCULATORS:\n"
        "    assert C.evaluate(name)['ok'], name\n"
        "    C.describe(name)\n"
        "print(len(C.CALCULATORS))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == len(C.CALCULATORS)
