"""Lesson 6, *Inference: Prefill, Decode and the KV Cache*: its exercise bank's checks
specific to this lesson (the rest of its checks, and every figure of its prose, are in
``test_inference_and_kv_cache.py``).

* the code exercise's reference reproduces the vLLM paper's KV-cache figures (Kwon et al.
  2023), and the hidden-size formula a learner writes is named as a mistake;
* the numeric exercises' defaults and the published designs they reproduce (Llama 3 70B's
  config, the A100 and H100 datasheets, DeepSeek-V2's MLA, Mixtral's experts);
* every drawn variant fits on its GPU, and the exercise notebook shows every exercise once.

The bank itself (reference accepted, each mistake its own hint, variants) is covered for
every lesson by ``tests/unit/exercises/test_bank.py``.
"""

from __future__ import annotations

import pytest

from gpulesson import hardware, inference, memory, transformer
from gpulesson.exercises import lesson_module

from . import nbtools as nb
from .test_inference_and_kv_cache import SLUG

BANK = lesson_module(SLUG)


def _exercise(number: int):
    return BANK.EXERCISES[number - 1]


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


def test_new_exercises_reproduce_the_published_designs():
    """DeepSeek-AI 2024 (DeepSeek-V2, Table 1): MLA caches (d_c + d_R) l values per token,
    512 + 64 for DeepSeek-V3's 61 layers; the multi-head formula is the declared mistake.
    Jiang et al. 2024 (Mixtral, section 2.1): at batch 1 a decode step reads the 12.9B
    active parameters; under uniform routing a batch of B reads E(1 - (1 - k/E)^B) experts
    per layer."""
    from dataclasses import replace

    kv = next(e for e in BANK.EXERCISES if e.number == 11)
    assert kv.answer_value() == 61 * (512 + 64) * 2 * 32768
    mha = 61 * 2 * 128 * 128 * 2 * 32768
    assert kv.check(f"{mha / 1e9:.2f} GB").mistake == "mha_for_latent"
    moe = next(e for e in BANK.EXERCISES if e.number == 12)
    at_one = replace(moe, params={"model": "mixtral-8x7b", "batch": 1})
    assert at_one.answer_value() == 2 * 12_879_925_248
    at_four = replace(moe, params={"model": "mixtral-8x7b", "batch": 4})
    routed = 32 * 8 * 3 * 4096 * 14336
    assert at_four.answer_value() == pytest.approx(
        2 * (46_702_792_704 - routed + routed * (1 - 0.75**4)), rel=1e-12)


#: What each exercise's question puts on its one GPU beside the weights: the conversations
#: in flight (their number and tokens each) and any prompt being prefilled. Exercises 3
#: and 8 name no GPU that holds the model (3 asks how many H100s the cache needs).
_HELD = {
    2: lambda p: (1, 0, 0),
    5: lambda p: (1, p["context"], 0),
    6: lambda p: (0, 0, 0),
    7: lambda p: (p["batch"], p["context"], 0),
    9: lambda p: (p["batch"], p["context"], 0),
    13: lambda p: (1, p["prompt"], 0),
    14: lambda p: (p["batch"], p["context"], p["prompt"]),
    15: lambda p: (p["batch"], p["input"] + p["output"], 0),
}


def test_every_drawn_variant_fits_on_its_gpu():
    """Audit C, finding 3: exercise 9 drew Llama-2-7B with 32 conversations of 8,192 tokens
    on an 80 GB GPU (153 GB), exercise 6 a 70B BF16 model on one (142 GB), exercise 15
    32 Llama-2-13B conversations on an H100. Over class seeds 0..299, the weights at the
    variant's precision + every KV cache held (BF16) + section 4's 2 GB of overhead must fit
    in the GPU's memory."""
    on_a_gpu = {n for n, ex in enumerate(BANK.EXERCISES, 1)
                if isinstance(ex.defaults, dict) and "gpu" in ex.defaults}
    assert on_a_gpu - {8} <= set(_HELD), on_a_gpu   # 8: the GPU's ratio alone, no model
    for number, held in _HELD.items():
        ex = _exercise(number)
        for seed in range(300):
            p = ex.variant(seed).inputs
            batch, tokens, prompt = held(p)
            if "model" in p:
                cfg = transformer.preset(p["model"])
                n = transformer.param_count(cfg)
                kv = (inference.kv_cache_bytes(cfg, seq_len=tokens, batch=batch) if tokens
                      else 0) + (inference.kv_cache_bytes(cfg, seq_len=prompt) if prompt else 0)
            else:
                n, kv = p["n_params"], 0
            need = memory.inference_memory(n, precision=p.get("precision", "bf16"),
                                           kv_cache_bytes=kv, overhead_bytes=2e9).total
            assert memory.fits(need, hardware.gpu(p["gpu"]).memory_bytes), (number, seed, p)
