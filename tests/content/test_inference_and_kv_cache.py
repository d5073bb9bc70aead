"""Lesson 5, *Inference: Prefill, Decode and the KV Cache*: its exercise bank's helper and
published figures, and the wiring of its two notebooks.

The bank itself (reference accepted, each mistake its own hint, variants) is covered for
every lesson by ``tests/exercises/test_bank.py``; here are the checks specific to this one.
"""

from __future__ import annotations

import pytest

from gpulesson import hardware, inference, memory, transformer
from gpulesson.exercises import lesson_module

from . import nbtools as nb

SLUG = "inference_and_kv_cache"
BANK = lesson_module(SLUG)


def _exercise(number: int):
    return BANK.EXERCISES[number - 1]


def _fits(cfg, batch: int, *, context: int, gpu_memory: float, overhead: float) -> bool:
    kv = inference.kv_cache_bytes(cfg, seq_len=context, batch=batch)
    need = memory.inference_memory(transformer.param_count(cfg), precision="bf16",
                                   kv_cache_bytes=kv, overhead_bytes=overhead)
    return need.total <= gpu_memory


@pytest.mark.parametrize("model", ["llama-2-7b", "llama-3-8b", "mistral-7b", "qwen2.5-7b"])
@pytest.mark.parametrize("context", [1, 2048, 8192, 131072])
@pytest.mark.parametrize("gpu", ["L4", "A100 40GB", "H100 SXM", "MI300X"])
def test_max_sequences_is_the_largest_batch_that_fits(model, context, gpu):
    cfg = transformer.preset(model)
    mem = hardware.gpu(gpu).memory_bytes
    n = inference.max_concurrent_sequences(cfg, context=context, gpu_memory=mem,
                                           overhead=2e9)
    if n:
        assert _fits(cfg, n, context=context, gpu_memory=mem, overhead=2e9)
    assert not _fits(cfg, n + 1, context=context, gpu_memory=mem, overhead=2e9)


def test_max_sequences_is_zero_when_the_weights_do_not_fit():
    """Llama-3-70B in BF16 (141 GB of weights) on one 80 GB H100."""
    cfg = transformer.preset("llama-3-70b")
    assert inference.max_concurrent_sequences(cfg, context=8192, gpu_memory=80e9) == 0
    assert inference.max_concurrent_sequences(cfg, context=8192, gpu_memory=80e9,
                                              precision="fp8") == 2


def test_max_sequences_refuses_bad_input_naming_it():
    with pytest.raises(ValueError, match="context must be a positive integer"):
        inference.max_concurrent_sequences(transformer.preset("llama-3-8b"), context=0,
                                           gpu_memory=80e9)
    with pytest.raises(ValueError, match="gpu_memory"):
        inference.max_concurrent_sequences(transformer.preset("llama-3-8b"), context=8,
                                           gpu_memory=-1)
    with pytest.raises(ValueError, match="precision"):
        inference.max_concurrent_sequences(transformer.preset("llama-3-8b"), context=8,
                                           gpu_memory=80e9, precision="fp7")


def test_kv_code_reference_reproduces_the_vllm_paper():
    """Kwon et al. 2023 (vLLM), section 3: for a 13B OPT model one token's KV cache is
    2 (key and value) x 5120 (hidden) x 40 (layers) x 2 bytes = 800 KB, and a 2,048-token
    request holds up to 1.6 GB. OPT-13B is multi-head: 40 heads of 128."""
    reference = _exercise(4).reference
    per_token = reference(layers=40, heads=40, kv_heads=40, head_dim=128, seq_len=1,
                          batch=1, bytes_per_element=2)
    assert per_token == 2 * 5120 * 40 * 2
    assert round(per_token / 1024) == 800
    assert round(reference(layers=40, heads=40, kv_heads=40, head_dim=128, seq_len=2048,
                           batch=1, bytes_per_element=2) / 1e9, 1) == 1.7
    assert round(2048 * 800e3 / 1e9, 1) == 1.6  # the paper's own rounding of the same count


def test_code_exercise_names_the_hidden_size_formula():
    """The widely quoted B x S x H x L x 2 x bytes, with H the hidden size, written by a
    learner, is recognised on a GQA model (Llama-3-8B: 32 query heads, 8 KV heads)."""
    ex = _exercise(4)

    def hidden_size_formula(layers, heads, kv_heads, head_dim, seq_len, batch,
                            bytes_per_element):
        hidden = heads * head_dim
        return batch * seq_len * hidden * layers * 2 * bytes_per_element

    feedback = ex.check(hidden_size_formula)
    assert feedback.mistake == "hidden_instead_of_kv" and "KV heads" in feedback.message
    assert ex.check(ex.model_solution).correct


def test_kv_exercise_default_is_llama3_70b_at_32k_and_batch_8():
    """Llama 3 70B config.json: 80 layers, 8 KV heads of 128. 8 x 32,768 tokens in BF16 is
    2 x 80 x 8 x 128 x 2 bytes x 262,144 tokens = exactly 80 GiB."""
    ex = _exercise(3)
    assert ex.inputs == {"model": "llama-3-70b", "seq_len": 32768, "batch": 8,
                         "kv_dtype": "bf16"}
    assert ex.answer_value() == 80 * 2**30
    assert ex.check("80 GiB").correct and ex.check("85.9 GB").correct
    assert ex.check("687.2 GB").mistake == "hidden_instead_of_kv"


def test_decode_ceiling_exercise_default_is_a_13b_fp16_model_on_an_h100():
    """26 GB of FP16 weights read per token at the H100 SXM's 3.35 TB/s: 128.8 tokens/s."""
    ex = _exercise(6)
    assert round(ex.answer_value(), 1) == 128.8
    assert ex.check("257.7 tokens/s").mistake == "one_byte_per_param"


def test_compute_bound_batch_exercise_uses_the_dense_peak_of_the_a100():
    """A100 80GB datasheet: 312 TFLOP/s dense BF16 (624 sparse), 2,039 GB/s."""
    ex = _exercise(8)
    assert ex.inputs["gpu"] == "A100 80GB"
    assert round(ex.answer_value()) == 153
    assert ex.check("306").mistake == "used_sparse_peak"


def test_exercise_notebook_shows_every_exercise_once():
    sources = nb.check_exercise_notebook(SLUG)
    assert any("lesson.reveal(10," in s for s in sources)  # the predict-then-run result


def test_lesson_embeds_the_inference_calculators_and_links_its_exercises():
    nb.check_skeleton(SLUG, "Inference: Prefill, Decode and the KV Cache")
    assert {"inference", "kv_cache"} <= nb.widgets_used(nb.notebook(SLUG))
