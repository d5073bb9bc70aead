"""Lesson 1's calculators on published figures: Amdahl's law, will a model fit on one GPU,
and the decode ceiling that memory bandwidth sets."""

from __future__ import annotations

import pytest

from gpulesson import calculators as C


def test_amdahl_reproduces_hennessy_and_pattersons_web_server():
    """Hennessy & Patterson, Computer Architecture: A Quantitative Approach (5th ed., 2012),
    section 1.9: a processor 10× faster on the 40 % of the time spent computing (the other
    60 % waits for I/O) speeds the whole up 1 / (0.6 + 0.4/10) = 1/0.64, about 1.56×."""
    out = C.compute("amdahl", serial_fraction=60, workers=10)
    assert out["speedup"] == pytest.approx(1.5625, rel=1e-12)
    assert C.evaluate("amdahl", {"serial_fraction": 60, "workers": 10})["text"] == {
        "speedup": "1.56×"}


def test_amdahl_speedup_never_passes_one_over_the_serial_share():
    """Amdahl 1967: the serial share bounds the speed-up; with 5 % serial (95 % parallel)
    no number of workers passes 1/0.05 = 20× (a million workers get 19.9996×)."""
    assert C.compute("amdahl", serial_fraction=5, workers=1_000_000)["speedup"] == \
        pytest.approx(20, abs=1e-3)
    assert C.compute("amdahl", serial_fraction=5, workers=1)["speedup"] == 1


def test_will_it_fit_llama3_8b_conversations_on_one_h100():
    """Meta-Llama-3-8B: 8,030,261,248 parameters, 16,060,522,496 bytes in BF16 (its
    safetensors index), and from its config.json (32 layers, 8 KV heads of 128) a BF16 KV
    cache of 2 × 32 × 8 × 128 × 8,192 × 2 = 1,073,741,824 bytes per 8,192-token
    conversation. On an 80 GB H100 SXM (datasheet) with 2 GB of overhead,
    (80e9 − 16,060,522,496 − 2e9) / 1,073,741,824 = 57.7: 57 conversations fit, 58 do not."""
    one = C.compute("will_it_fit")
    assert (one["n_params"], one["weights"], one["kv_cache"]) == (
        8_030_261_248, 16_060_522_496, 1_073_741_824)
    assert one["total"] == 16_060_522_496 + 1_073_741_824 + 2e9
    assert C.compute("will_it_fit", batch=57)["fits"] is True
    too_many = C.compute("will_it_fit", batch=58)
    assert too_many["fits"] is False and too_many["gpus_needed"] == 2
    assert too_many["headroom"] == pytest.approx(80e9 - 80_337_548_288, abs=1)


def test_decode_ceiling_llama2_7b_on_an_h100():
    """Decoding reads every weight once per step. Llama-2-7B: 6,738,415,616 parameters
    (its safetensors index), 13,476,831,232 bytes in BF16; the H100 SXM reads 3.35 TB/s
    (datasheet): at most 3.35e12 / 13,476,831,232 = 248.6 tokens/s at batch 1, and a batch
    of 64 shares each read: 64 × 248.6 = 15,909 tokens/s."""
    one = C.compute("decode_ceiling")
    assert one["weights"] == 13_476_831_232
    assert one["tokens_per_second"] == pytest.approx(248.575, rel=1e-5)
    assert C.evaluate("decode_ceiling")["text"]["tokens_per_second"] == "249 tokens/s"
    assert C.compute("decode_ceiling", batch=64)["tokens_per_second"] == pytest.approx(
        64 * 248.575, rel=1e-5)


def test_kimi_k2_does_not_fit_and_decodes_at_its_active_weights():
    """Kimi K2 (moonshotai/Kimi-K2-Instruct's config.json): 1,026,408,232,448 parameters,
    2,052,816,464,896 bytes in BF16; its latent cache is 61 layers x (512 + 64) values x
    2 bytes = 70,272 bytes per token, 575,668,224 for 8,192 tokens. With 2 GB of overhead
    that is 2,055.39 GB: 26 GPUs of 80 GB. A decode step at batch 1 reads the 32,861,500,928
    parameters one token uses (8 of 384 experts): 65,723,001,856 bytes, at 3.35 TB/s at
    most 50.97 tokens/s, although the menu shows the count to 12 digits (1,026.40823245
    billion)."""
    fit = C.compute("will_it_fit", model="kimi-k2")
    assert (fit["n_params"], fit["weights"], fit["kv_cache"]) == (
        1_026_408_232_448, 2_052_816_464_896, 575_668_224)
    assert fit["fits"] is False and fit["gpus_needed"] == 26
    one = C.compute("decode_ceiling", model="kimi-k2")
    assert one["weights"] == pytest.approx(65_723_001_856, rel=1e-12)
    assert one["tokens_per_second"] == pytest.approx(3.35e12 / 65_723_001_856, rel=1e-12)
    assert C.evaluate("decode_ceiling", {"model": "kimi-k2"})["text"][
        "tokens_per_second"] == "51.0 tokens/s"


def test_decode_ceiling_says_when_the_weights_do_not_fit_the_gpu():
    """Review r22 F6: DeepSeek-V3 in FP8 (671,026,419,200 parameters, its safetensors
    index: 671.0 GB at a byte each) on one 80 GB H100 SXM (datasheet) got a ceiling of
    1,278 tokens/s at batch 256 with no warning. 671.0 / 80 = 8.4, so at least 9 GPUs; a
    7B model in FP32 (28 GB) on a 24 GB L4 needs 2. The count is the will-it-fit
    calculator's own (no overhead). A diff review the same day: the batch's KV caches count
    too (256 sequences of 2,000 GB read "yes" on one H100)."""
    big = C.evaluate("decode_ceiling", {"model": "deepseek-v3", "precision": "fp8",
                                        "batch": 256})
    assert big["ok"] and big["text"]["tokens_per_second"] == "1,278 tokens/s"
    assert (big["values"]["fits_one_gpu"], big["values"]["gpus_needed"]) == (False, 9)
    l4 = C.compute("decode_ceiling", model="custom", n_params=7, precision="fp32", gpu="L4")
    assert (l4["fits_one_gpu"], l4["gpus_needed"]) == (False, 2)
    fits = C.compute("decode_ceiling")  # Llama-2-7B in BF16, 13.5 GB on 80 GB
    assert (fits["fits_one_gpu"], fits["gpus_needed"]) == (True, 1)
    # 13.5 GB of weights and 32 caches of 2 GB: 77.5 GB fit, 34 caches (81.5 GB) do not
    held = C.compute("decode_ceiling", batch=32, kv_per_sequence=2)
    over = C.compute("decode_ceiling", batch=34, kv_per_sequence=2)
    assert (held["fits_one_gpu"], over["fits_one_gpu"], over["gpus_needed"]) == (True, False, 2)
    same = C.compute("will_it_fit", model="deepseek-v3", precision="fp8", batch=1,
                     context=1, overhead=0, kv_dtype="fp8")
    assert same["gpus_needed"] == 9
    spec = C.get("decode_ceiling")
    ceiling = next(o for o in spec.outputs if o.name == "tokens_per_second")
    assert "assumes the weights and the caches fit" in ceiling.help


def test_will_it_fit_prices_gpt_oss_as_its_checkpoint_ships():
    """Review r22 F7: gpt-oss-120b in "MXFP4" priced all 116.83 B parameters at 4.25 bits,
    62.1 GB, where its checkpoint stores only the routed experts' matrices in MXFP4 and
    the rest in BF16: OpenAI's model card gives 60.8 GiB (65.2 GB), the figure of lesson 4.
    The "MXFP4 experts, BF16 rest" choice gives it, and the all-MXFP4 choice says it is
    all weights; a dense model cannot take the mix, and the error names the input."""
    mixed = C.evaluate("will_it_fit", {"model": "gpt-oss-120b", "precision": "mxfp4_experts"})
    assert mixed["ok"] and mixed["text"]["weights"] == "65.2 GB"
    assert round(mixed["values"]["weights"] / 2**30, 1) == 60.8  # the model card's GiB
    assert mixed["values"]["fits"] is True
    flat = C.evaluate("will_it_fit", {"model": "gpt-oss-120b", "precision": "mxfp4"})
    assert flat["text"]["weights"] == "62.1 GB"
    labels = {c.value: c.label for i in C.get("will_it_fit").inputs if i.name == "precision"
              for c in i.choices}
    assert "all weights" in labels["mxfp4"] and "BF16 rest" in labels["mxfp4_experts"]
    dense = C.evaluate("will_it_fit", {"precision": "mxfp4_experts"})  # Llama-3-8B
    assert dense["ok"] is False and dense["input"] == "precision"
    assert "mixture-of-experts" in dense["error"]
