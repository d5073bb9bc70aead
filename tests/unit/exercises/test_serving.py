"""gpulesson.exercises.serving: the decode step lessons 6 and 8 pose, assembled once."""

from __future__ import annotations

import pytest

from gpulesson import calculators
from gpulesson.exercises import serving


def test_llama3_8b_on_an_h100_from_the_published_figures() -> None:
    """Llama 3 8B (config.json / model card: 8,030,261,248 parameters, 32 layers, 8 KV heads
    of 128) in BF16 on an H100 SXM (datasheet: 3.35 TB/s). At batch 1 a step reads every
    weight: 3.35e12 / (2 x 8,030,261,248) = 208.6 tokens/s; an 8,192-token cache adds
    2 x 32 x 8 x 128 x 2 bytes per token, 1 GiB, to every step."""
    weights = 2 * 8_030_261_248
    cache = 2 * 32 * 8 * 128 * 2 * 8192
    assert cache == 2**30
    alone = serving.decode_speed("llama-3-8b", "H100 SXM", context=8192, batch=1, kv=False)
    assert alone.tokens_per_second == pytest.approx(3.35e12 / weights)
    assert round(alone.tokens_per_second) == 209
    read = serving.decode_speed("llama-3-8b", "H100 SXM", context=8192, batch=4)
    assert read.per_sequence == pytest.approx(3.35e12 / (weights + 4 * cache))
    assert read.tokens_per_second == pytest.approx(4 * read.per_sequence)
    assert read.step_time == pytest.approx(1 / read.per_sequence)


@pytest.mark.parametrize(("model", "gpu", "batch"), [("llama-3-8b", "H100 SXM", 8),
                                                      ("mistral-7b", "A100 80GB", 16),
                                                      ("llama-2-7b", "H200", 1)])
def test_agrees_with_the_inference_calculator(model: str, gpu: str, batch: int) -> None:
    """The registry's ``inference`` entry (BF16 weights and cache, the GPU's own peak and
    bandwidth, a cache of prompt + new tokens) gives the same decode speeds."""
    out = calculators.compute("inference", model=model, gpu=gpu, batch=batch, prompt=2048,
                              new_tokens=512)
    speed = serving.decode_speed(model, gpu, context=2048 + 512, batch=batch)
    assert speed.tokens_per_second == pytest.approx(out["decode_total"], rel=1e-12)
    assert speed.per_sequence == pytest.approx(out["decode_per_user"], rel=1e-12)


def test_bad_input_names_the_argument() -> None:
    with pytest.raises(KeyError, match="known presets"):
        serving.decode_speed("llama-9", "H100 SXM", context=8, batch=1)
    with pytest.raises(KeyError, match="known GPUs"):
        serving.decode_speed("llama-3-8b", "H900", context=8, batch=1)
    with pytest.raises(ValueError, match="batch"):
        serving.decode_speed("llama-3-8b", "H100 SXM", context=8, batch=0)
    for kv in (True, False):
        with pytest.raises(ValueError, match="context must be a positive integer"):
            serving.decode_speed("llama-3-8b", "H100 SXM", context=0, batch=1, kv=kv)


def test_a_sparse_attention_model_reads_its_top_k(monkeypatch: pytest.MonkeyPatch) -> None:
    """DeepSeek-V3.2 (config.json) at 131,072 tokens: a step reads per sequence the
    latents of the 2,048 tokens the indexer picks and every indexer key, 61 x (2,048 x
    1,152 + 131,072 x 132) = 1,199,308,800 bytes, not the 10,266,083,328 it holds."""
    from pathlib import Path

    from gpulesson import transformer
    from gpulesson.transformer import presets
    path = Path(__file__).parents[2] / "data" / "hf_configs" / "deepseek_v32__DeepSeek-V3.2.json"
    cfg = transformer.from_hf_config(path)
    monkeypatch.setattr(presets, "PRESETS", {"dsa": cfg})
    weights = 2 * transformer.param_count(cfg)
    step = serving.decode_speed("dsa", "H100 SXM", context=131072, batch=2)
    assert step.step_time == pytest.approx((weights + 2 * 1_199_308_800) / 3.35e12,
                                           rel=1e-12)
