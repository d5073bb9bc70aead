"""Lesson 10's calculators on published figures: ``planning`` (gpulesson.planning.plan_training)
and ``serving_plan`` (gpulesson.planning.plan_serving)."""

from __future__ import annotations

import re

import pytest

from gpulesson import calculators as C
from gpulesson import flops, planning, prices
from gpulesson.calculators import forms

M = 2**20


def test_llama2_7b_published_gpu_hours_are_above_the_planners_bound():
    """Touvron et al. 2023 (Llama 2): 7B on 2.0T tokens (Table 1), 4M tokens per step
    (§2.2), 184,320 A100-80GB GPU-hours (Table 2), which is 39 % MFU. The plan counts the
    same 6·N·D = 8.09e22 FLOPs and predicts more than that MFU: it leaves out what a real
    run also spends (restarts, data loading, launch gaps), so its GPU-hours are a floor."""
    out = C.compute("planning", gpu="A100 80GB")
    assert out["total_flops"] == pytest.approx(8.086e22, rel=1e-3)
    implied = flops.utilization(out["total_flops"] / (184_320 * 3600), 312e12)
    assert implied == pytest.approx(0.39, abs=0.005)
    assert out["mfu"] > implied and out["gpu_hours"] < 184_320
    model = flops.flops_per_token(out["n_params"], layers=32, heads=32, head_dim=128,
                                  seq_len=4096) * 2e12  # MFU counts attention too
    assert out["gpu_hours"] == pytest.approx(model / (out["mfu"] * 312e12) / 3600, rel=1e-6)


def test_defect_sweep_never_gives_a_gpu_a_fraction_of_a_sequence():
    """4M tokens of 4,096-token sequences are 1,024 sequences: up to 16,384 GPUs the plan
    stays feasible by putting the rest into tensor and pipeline parallelism, and the MFU
    falls as each GPU's share of a step shrinks."""
    cluster = [64, 1024, 4096, 16384]
    sweep = C.sweep("planning", "n_gpus", cluster)
    for n, out in zip(cluster, sweep, strict=True):
        assert out["feasible"], (n, out["problems"])
        dp = int(out["degrees"].split("dp ")[1].split(" ")[0])
        assert dp <= 1024 and out["micro_batches"] >= 1
    mfus = [out["mfu"] for out in sweep]
    assert mfus == sorted(mfus, reverse=True)


def test_llama2_7b_needs_more_than_one_80_gb_gpu():
    """Rajbhandari et al. 2020 (ZeRO), §3.1: 16 bytes per parameter of model state with
    mixed-precision Adam, 107.8 GB for Llama-2-7B: more than one 80 GB GPU holds, whatever
    the layout, and plain data parallelism on 64 GPUs does not fit either."""
    alone = C.compute("planning", n_gpus=1)
    assert alone["fits"] is False and alone["feasible"] is False
    assert alone["bottleneck"] == "memory: no layout fits on these GPUs"
    plain = C.compute("planning", layout="manual", tp=1, pp=1, zero_stage=0)
    assert plain["fits"] is False and plain["memory_per_gpu"] > 107.8e9
    assert plain["bottleneck"] == "memory: this layout does not fit on these GPUs"


@pytest.mark.parametrize(("degrees", "field"), [({"tp": 3}, "tp"),
                                               ({"tp": 8, "pp": 16}, "pp"),
                                               ({"tp": 8, "cp": 3}, "cp")])
def test_a_hand_set_layout_that_does_not_divide_the_gpus_marks_its_degree(degrees, field):
    """Walk of 2026-12-07: tp 3 on 64 GPUs marked the Parallel layout menu invalid, not the
    field typed in. The first degree at which tp × cp × pp stops dividing the GPUs is the
    one named and marked; a layout that divides them plans."""
    shown = C.evaluate("planning", {"layout": "manual", **degrees})
    assert not shown["ok"] and shown["input"] == field, shown
    assert "must divide the 64 GPUs" in shown["error"]
    assert C.evaluate("planning", {"layout": "manual", "tp": 8, "pp": 8})["ok"]


def test_deepseek_v3s_layout_fits_with_its_own_activation_recipe_only():
    """DeepSeek-AI 2024 (DeepSeek-V3 technical report): 2,048 H800s (§3.1) with 16-way
    pipeline and 64-way expert parallelism and no tensor parallelism (§3.2), batch 15,360
    sequences of 4,096 tokens (§4.2), FP8 training (§3.3). Its layout holds in 80 GB only
    because the report recomputes the RMSNorms and MLA up-projections (§3.2.3) and caches
    activations in FP8 (§3.3.3): the form's "DeepSeek-V3's recipe". With selective
    recomputation the same layout overflows the H100's 81.2 GB usable."""
    run = dict(model="deepseek-v3", n_gpus=2048, layout="manual", tp=1, pp=16, ep=64,
               zero_stage=1, batch=1, interleave=1, seq_len=4096, dtype="fp8",
               step_tokens=15_360 * 4096 / 1e6)
    selective = C.compute("planning", recompute="selective", **run)
    recipe = C.compute("planning", recompute="deepseek-v3", **run)
    assert not selective["fits"] and selective["memory_per_gpu"] > 81.2e9
    assert recipe["fits"] and recipe["memory_per_gpu"] < selective["memory_per_gpu"] / 1.5


def test_the_recipe_on_a_model_without_latent_attention_is_an_inline_error():
    """Llama 2 7B has no latent attention: the form names the recomputation input and the
    modes that apply, instead of raising."""
    shown = forms.evaluate("planning", {"recompute": "deepseek-v3"})
    assert shown["ok"] is False and shown["input"] == "recompute"
    assert "latent attention" in shown["error"] and "'selective'" in shown["error"]


def test_an_older_attention_kernel_slows_the_plan_or_is_refused_inline():
    """Llama 2 7B at 32,768 tokens: the Triton kernel (llm-foundry's) makes the plan's
    step longer on an H100 and an A100; on a B200, where no speed of that kernel is
    published, the form names the input instead of raising."""
    long = dict(seq_len=32768, n_gpus=8)
    for gpu in ("H100 SXM", "A100 80GB"):
        fused = C.compute("planning", gpu=gpu, **long)
        triton = C.compute("planning", gpu=gpu, attention_kernel="triton", **long)
        assert triton["step_time"] > 1.1 * fused["step_time"], gpu
    shown = forms.evaluate("planning", {"gpu": "B200", "attention_kernel": "triton"})
    assert shown["ok"] is False and shown["input"] == "attention_kernel"
    assert "no published speed of 'triton' on Blackwell" in shown["error"]


def test_a_slow_network_makes_the_run_communication_bound():
    """ZeRO-1 over 64 H100s synchronises the gradients every step: over 0.1 GB/s per GPU
    that outlasts the compute, so communication is the bottleneck; at 50 GB/s (400 Gb/s
    InfiniBand NDR) compute is."""
    assert C.compute("planning")["bottleneck"] == "compute: the GPUs' arithmetic sets the pace"
    slow = C.compute("planning", layout="manual", tp=1, pp=1, zero_stage=1, scaleout=0.1)
    assert slow["efficiency"] < 0.5
    assert slow["bottleneck"].startswith("communication")


def test_price_follows_the_gpu():
    """The H100's dated default price, $6.88 (AWS p5.48xlarge on demand, 2026-09-19,
    gpulesson.prices); a GPU without a dated price asks for a quote instead of borrowing
    it."""
    h100 = C.compute("planning")
    quote = prices.default_price("H100 SXM")
    assert h100["price_note"] == (f"at ${quote.usd_per_gpu_hour:.2f} per GPU-hour: "
                                  f"{quote.provider} {quote.instance}, {quote.kind} cloud, "
                                  f"{quote.offer}, {quote.date}")
    assert h100["cost"] == pytest.approx(quote.usd_per_gpu_hour * h100["gpu_hours"])
    # Walk of 2026-12-07: the H100 PCIe's default is a specialist cloud's, which beside the
    # SXM's hyperscaler price made the slower card look half as dear, on both forms; the
    # notes name the quote, and a typed price says so
    pcie = prices.default_price("H100 PCIe")
    for name, note in (("planning", "price_note"), ("serving_plan", "price_note")):
        text = C.compute(name, gpu="H100 PCIe", model="llama-3-8b")[note]
        assert f"{pcie.provider} {pcie.instance}, {pcie.kind} cloud" in text, (name, text)
    for gpu, price in (("H100 SXM", 3.2), ("L4", 0.8), ("A100 40GB", 2.741)):
        typed = C.compute("planning", gpu=gpu, usd_per_gpu_hour=price)["price_note"]
        assert typed == f"at ${price:.2f} per GPU-hour (as entered)", typed
    b200 = planning.gpu_view("B200")
    text = C.compute("planning", gpu="B200")["price_note"]
    assert ("enter a quote" in text) == (b200.price is None)


@pytest.mark.parametrize("model", ["llama-2-7b", "mixtral-8x7b", "deepseek-v3", "gpt-oss-120b"])
def test_the_time_follows_from_the_model_flops_the_mfu_counts(model):
    """The dashboard showed 6·N·D FLOPs and an MFU that counts attention too: 8.09e22 ÷
    (64 × 989.4 TFLOP/s × 56.3 %) is 26.3 days, and it said 30.5 (the site, 2026-12-07).
    It now also shows the model FLOPs its MFU counts, and the chain closes on them:
    time = model FLOPs ÷ (GPUs × dense BF16 peak × MFU)."""
    out = C.compute("planning", model=model, n_gpus=256)
    peak = C.resolve("planning", model=model)["peak_flops"] * 1e12
    assert out["time"] == pytest.approx(out["model_flops"] / (256 * peak * out["mfu"]),
                                        rel=1e-9)
    assert out["model_flops"] > out["total_flops"]  # attention's FLOPs on top of 6·N·D


def test_a_run_shorter_than_one_step_is_an_inline_error():
    """1,000,000 training tokens against 4,194,304 per step: the dashboard said the run
    took 658 ms where its one step took 2.76 s (the site, 2026-12-07). A run is whole
    steps: the form names the tokens and the least it takes; one step's tokens plan."""
    shown = {**C.resolve("planning"), "tokens": 0.001}
    result = forms.evaluate("planning", shown)
    assert result["ok"] is False and result["input"] == "tokens"
    assert "4,194,304" in result["error"]
    least = float(re.search(r"at least ([\d.]+) billion", result["error"]).group(1))
    assert forms.evaluate("planning", {**shown, "tokens": least})["ok"]  # the advice plans
    one_step = C.compute("planning", tokens=4 * M / 1e9)
    assert one_step["time"] == pytest.approx(one_step["step_time"], rel=1e-9)


@pytest.mark.parametrize(("name", "changes"), [("planning", {"n_gpus": 2048}),
                                               ("serving_plan", {})])
def test_a_typed_price_changes_the_cost_and_nothing_else(name, changes):
    """Typing $3.20 over the H100's $6.88 turned the GPU custom, a bare GPU without NVLink
    or fitted factors: on 2,048 GPUs the MFU fell from 48.2 % to 27.5 %, and the serving
    dashboard's feasible plan became infeasible (the site, 2026-12-07). The form keeps the
    GPU: only the outputs of money move."""
    shown = {**C.resolve(name), **changes}
    before = forms.evaluate(name, shown)["values"]
    shown["usd_per_gpu_hour"] = 3.2
    answer = C.apply_changes(name, shown, ["usd_per_gpu_hour"])
    assert "gpu" not in answer["updates"]
    after = answer["result"]["values"]
    moved = {k for k in before if before[k] != after[k]}
    assert moved and all(("cost" in k or "price" in k) for k in moved), moved
    # a change of precision refills the GPU's peak, and keeps the price typed
    shown["dtype"] = "fp16"
    refilled = C.apply_changes(name, shown, ["dtype"])
    assert "usd_per_gpu_hour" not in refilled["updates"] and "peak_flops" in refilled["updates"]
    assert all(refilled["result"]["values"][k] == after[k] for k in moved)


def test_serving_plan_meets_the_slos():
    """The deployment dashboard's starting point: Llama 3 70B, 20 requests/s of 2,000 tokens
    in and 300 out, 200 ms to the first token and 50 ms per token."""
    out = C.compute("serving_plan")
    assert out["feasible"] is True
    assert out["ttft"] <= 0.2 and out["tpot"] <= 0.05
    assert out["throughput"] == pytest.approx(20 * 300)
    assert out["max_concurrency"] == pytest.approx(out["kv_cache_tokens"] / 8192)
    impossible = C.compute("serving_plan", ttft_slo=1, prompt_tokens=32000,
                           max_model_len=40000)
    assert impossible["feasible"] is False and "ttft_slo" in impossible["problems"]


@pytest.mark.parametrize("model", ["mixtral-8x7b", "qwen3-30b-a3b", "deepseek-v3", "qwen3-8b",
                                   "llama-4-maverick", "kimi-k2", "minimax-m2.7",
                                   "deepseek-v3.2", "glm-5.1"])
def test_a_preset_is_planned_with_its_whole_config(model):
    """The form shows a model's shape only; a preset still brings its experts, latent
    attention and the rest of its config.json (gpulesson.transformer.PRESETS), so the
    dashboard plans Mixtral 8x7B as 46.7B parameters with 12.9B active, as
    planning.plan_training does, not as a dense 7B model."""
    shown = C.compute("planning", model=model, n_gpus=256)
    direct = planning.plan_training(model, "H100 SXM", n_gpus=256, tokens=2e12,
                                    global_batch_tokens=4 * 2**20, seq_len=4096)
    assert shown["mfu"] == pytest.approx(direct.mfu, rel=1e-9)
    assert shown["memory_per_gpu"] == pytest.approx(direct.memory_per_gpu, rel=1e-9)
    edited = C.compute("planning", model=model, n_gpus=256, layers=8)
    assert edited["total_flops"] < shown["total_flops"]  # an edit to the shape still counts


@pytest.mark.parametrize("gpu", ["H100 SXM", "GB200 NVL72"])
def test_every_tensor_parallel_size_in_range_gets_a_plan_or_a_message_naming_tp(gpu):
    """Audit of the site's calculators (2026-12): tp accepts 0 to 64, but on an H100 SXM
    (8 GPUs per NVLink domain) tp = 9 to 63, not a multiple of 8, stopped the serving
    calculator with "plan_serving(model=TransformerConfig(hidden=8192, layers..., gpu=
    GPUSpec(...: size (12) must be a multiple of the 8 ranks ...", a repr naming no
    input. Each size now gives a plan (its problems listed) or a message naming tp, its
    value and the sizes allowed."""
    for tp in range(0, 65):
        result = C.evaluate("serving_plan", {"gpu": gpu, "tp": tp})
        if result["ok"]:
            continue
        message = result["error"]
        assert result["input"] == "tp", (tp, message)
        assert message.startswith("tp (") and f"got {tp}" in message, message
        assert "plan_serving(" not in message and "TransformerConfig(" not in message


def test_a_serving_plan_that_nothing_serves_does_not_say_tp_as_set():
    """Audit of the presets of 2025-26 (2026-12): with tp left to the planner (0) and no
    size serving the traffic (Kimi K2's 2.05 TB of BF16 weights on 8 H100s, Llama 4
    Maverick's 801 GB), the plan shown said "Why: tp as set", though the reader set none.
    It now says the planner tried the sizes and shows the one with the fewest problems;
    a tp the reader sets still reads "tp as set"."""
    for model in ("kimi-k2", "llama-4-maverick"):
        out = C.compute("serving_plan", model=model)
        assert out["feasible"] is False and "no room for a KV cache" in out["problems"]
        assert out["reason"].startswith("No tensor-parallel size the planner tried"), out
        assert f"shown: tp {out['layout'].split()[1]}," in out["reason"], out
    assert C.compute("serving_plan", model="kimi-k2", tp=8)["reason"] == "tp as set"


def test_a_serving_plan_that_nothing_serves_shows_the_nearest_tp():
    """Audit of the presets of 2025-26 (2026-12): Kimi K2 in FP8 on H200s, tp left to the
    planner. Every size fails, tp 2, 4 and 8 each with two problems (no room for a KV
    cache, then the traffic), and the plan shown was the first of them, tp 2, 360.1 GiB
    short, where tp 8 is 2.6 GiB short (Moonshot AI's deployment guide for Kimi K2: the
    smallest unit for its FP8 weights at 128k tokens on H200 or H20 is 16 GPUs). Of the
    plans with the fewest problems the largest tp is now shown."""
    out = C.compute("serving_plan", model="kimi-k2", gpu="H200", weight_dtype="fp8")
    assert out["feasible"] is False
    assert out["layout"].startswith("tp 8 "), out["layout"]
    short = C.evaluate("serving_plan", {"model": "kimi-k2", "gpu": "H200",
                                        "weight_dtype": "fp8", "tp": 2})["text"]["problems"]
    assert ", 386.60 GB (360.05 GiB) short;" in short, short


def test_several_problems_read_as_a_list_not_one_run_on_sentence():
    """Audit of the site's calculators (2026-12): the planners joined a plan's problems
    with a bare space, so tp = 3 on the serving planner read "tp = 3 must divide the 64
    attention heads qps: 20 requests/s overload 1 replica(s) ...", the end of one problem
    indistinguishable from the start of the next. Several are now numbered; one, or
    none, reads as before."""
    two = C.evaluate("serving_plan", {"tp": 3})["text"]["problems"]
    assert two.startswith("(1) tp = 3 must divide the 64 attention heads; (2) "), two
    assert "; (3) qps: " in two, two
    training = C.evaluate("parallel_traffic", {"pp": 16, "layers": 2,
                                               "step_tokens": 0.001})["text"]["problems"]
    assert training.startswith("(1) ") and "; (2) " in training, training
    one = C.evaluate("planning", {"n_gpus": 1})["text"]["problems"]
    assert one.startswith("memory: ") and "(1)" not in one
    assert C.evaluate("serving_plan")["text"]["problems"] == "none"


def test_fp32_is_planned_only_as_a_measured_rate():
    """plan_training plans BF16, FP16 and FP8. On a GPU preset the form's TF32 and FP32
    put their peak in the BF16 peak's place: Llama 2 7B on 64 H100s in FP32 read 65.9 %
    "MFU over the BF16 dense peak", against FP32's 67 TFLOP/s (4.4 % of the BF16 peak).
    Section 6 of the lesson keeps FP32 for a custom GPU whose peak is the rate measured on
    the reader's machine."""
    with pytest.raises(ValueError, match=r"^dtype: .*got 'fp32'"):
        C.compute("planning", dtype="fp32")
    shown = forms.evaluate("planning", {"dtype": "tf32", "gpu": "A100 80GB"})
    assert shown["ok"] is False and shown["input"] == "dtype"
    measured = C.compute("planning", gpu="custom", dtype="fp32", peak_flops=1.0,
                         matmul_efficiency=100, gpu_memory=64.0, bandwidth=0.05,
                         gpus_per_node=1, scaleout=1, n_gpus=1, usd_per_gpu_hour=0)
    assert 0 < measured["mfu"] < 1


def test_serving_plan_data_parallel_attention_and_expert_parallelism():
    """The serving entry hands dp and the MoE layers' layout to plan_serving: DeepSeek-V3
    in FP8 on 8 H200 as 8 engines with whole experts (vLLM --data-parallel-size 8
    --enable-expert-parallel) shows the 8 engines' pools summed, 8 x one engine's, and
    more weights per GPU than TP8 (the non-expert weights copied per engine); a dense
    model refuses dp, naming it."""
    base = {"model": "deepseek-v3", "gpu": "H200", "weight_dtype": "fp8", "qps": 0}
    dp8 = C.compute("serving_plan", **base, tp=1, dp=8, moe_layers="ep")
    tp8 = C.compute("serving_plan", **base, tp=8)
    plan = planning.plan_serving("deepseek-v3", "H200", tp=1, dp=8, expert_parallel=True,
                                 weight_dtype="fp8", max_model_len=8192, qps=None,
                                 prompt_tokens=2000, output_tokens=300)
    assert dp8["kv_cache_tokens"] == 8 * plan.kv_cache_tokens
    assert dp8["kv_cache_tokens"] > tp8["kv_cache_tokens"]
    assert dp8["weights"] > tp8["weights"]
    assert C.evaluate("serving_plan", {**base, "tp": 1, "dp": 8, "moe_layers": "ep"}
                      )["text"]["layout"] == "tp 1 × dp 8 × 1 replica = 8 GPUs"
    dense = C.evaluate("serving_plan", {"dp": 2})
    assert not dense["ok"] and dense["input"] == "dp" and "dense model" in dense["error"]


def test_expert_parallel_refusals_name_the_forms_inputs():
    """Audit (2026-12): plan_serving refuses expert parallelism on a dense model, or on
    more GPUs than experts, naming its argument expert_parallel, which the form calls
    "MoE layers" (moe_layers); the form matched the word "experts" in the message and
    put the error beside the custom model's number of experts. It now sits beside the
    input at fault: MoE layers for a dense model, dp for too many GPUs."""
    dense = C.evaluate("serving_plan", {"moe_layers": "ep"})
    assert not dense["ok"] and dense["input"] == "moe_layers", dense
    assert "llama-3-70b" in dense["error"] and "dense" in dense["error"]
    for inputs in ({"model": "mixtral-8x7b", "tp": 1, "dp": 16, "moe_layers": "ep"},
                   {"model": "deepseek-v3", "gpu": "H200", "tp": 64, "dp": 8,
                    "moe_layers": "ep"}):
        many = C.evaluate("serving_plan", inputs)
        assert not many["ok"] and many["input"] == "dp", many
        assert "routed experts" in many["error"], many
    # tp left to the planner: only when even tp 1 has more GPUs than experts
    assert C.evaluate("serving_plan", {"model": "mixtral-8x7b", "tp": 0, "dp": 8,
                                       "moe_layers": "ep"})["ok"]
    assert C.evaluate("serving_plan", {"model": "mixtral-8x7b", "tp": 0, "dp": 9,
                                       "moe_layers": "ep"})["input"] == "dp"


def test_serving_plan_fp8_is_one_figure_on_the_form_and_the_planner():
    """Audit (2026-12-06): Llama 3 70B in FP8 on 8 H100s at full load read 3,212 tokens/s
    from plan_serving and 4,452 on this form with its precision set to FP8, which put the
    FP8 peak in the BF16 peak's place for every product and attention too. The planner now
    picks the products' precision from the weights and the GPU; the form's precision only
    keys the peak shown, and both precisions give the planner's figure. FP8 products on
    BF16 weights (which vLLM does not run) are refused, naming the input."""
    base = {"model": "llama-3-70b", "gpu": "H100 SXM", "tp": 8, "qps": 0,
            "weight_dtype": "fp8", "ttft_slo": 0, "tpot_slo": 0}
    plan = planning.plan_serving("llama-3-70b", "H100 SXM", tp=8, weight_dtype="fp8",
                                 max_model_len=8192, qps=None, prompt_tokens=2000,
                                 output_tokens=300)
    for dtype in ("bf16", "fp8"):
        out = C.compute("serving_plan", **base, dtype=dtype)
        assert out["throughput"] == pytest.approx(plan.throughput, rel=1e-9), dtype
    shown = C.evaluate("serving_plan", {**base, "weight_dtype": "bf16", "dtype": "fp8"})
    assert not shown["ok"] and shown["input"] == "dtype", shown


def test_no_room_for_a_kv_cache_says_what_is_taken_in_the_unit_typed():
    """Site audit (2026-12-06): GPU memory typed as 2.5 GB read "-15.9 GiB left of 2.1
    GiB" (GB typed, GiB shown, a negative "left"). The problem now states what the weights,
    activations and non-torch memory take against what vLLM may use (90 % of 2.5 GB =
    2.25 GB), in GB with the GiB beside, and never a negative amount."""
    import re

    typed = 2.5
    out = C.compute("serving_plan", gpu_memory=typed)
    problem = out["problems"].split("; (2)")[0]
    assert "no room for a KV cache" in problem
    assert not re.search(r"-\d", problem), problem
    usable = typed * C.resolve("serving_plan")["utilization"] / 100
    assert f"the {usable:.2f} GB (" in problem, problem
    taken = float(re.search(r"take ([\d.]+) GB \(", problem).group(1))
    assert taken > usable, problem


def test_a_traffic_too_small_for_the_planner_names_the_traffic_field():
    """Site audit (2026-12-06): Traffic (qps) = 1e-320, inside its range, showed the guard's
    "plan_serving(model=TransformerConfig(...), gpu=GPUSpec(...), ...) has no finite
    result": an internal call dumped, no field named. (Now refused by the range: 0, or at
    least 0.001 requests/s; test_engine covers the guard's path.)"""
    out = C.evaluate("serving_plan", {"qps": 1e-320})
    assert out["ok"] is False and out["input"] == "qps", out
    message = out["error"]
    assert message.startswith("qps (Traffic") and "1e-320" in message, message
    assert "TransformerConfig(" not in message and "plan_serving(" not in message, message


@pytest.mark.parametrize(("qps", "expected"), [(1, "tp 4 x 1 replica."),
                                               (1e6, "tp 4 x {:,} replicas.")])
def test_the_reason_counts_replicas_as_the_layout_does(qps, expected):
    """Edge audit (2026-12-06): the reason read "tp 4 x 1 replicas" and, at 1e6 requests/s,
    "tp 4 x 163614 replicas" where the layout beside it writes "1 replica"; the layout
    itself read "163614 replicas = 654456 GPUs". Both now write counts as the other outputs
    do ("163,614")."""
    out = C.compute("serving_plan", qps=qps)
    replicas = int(out["layout"].split(" × ")[1].split()[0].replace(",", ""))
    expected = expected.format(replicas)
    assert expected.startswith(f"tp 4 x {replicas:,} replica"), (out["layout"], expected)
    assert f"× {replicas:,} replica" in out["layout"] and "GPU" in out["layout"], out
    gpus = out["layout"].split(" = ")[1].split()[0]
    assert gpus == f"{int(gpus.replace(',', '')):,}", out["layout"]
    assert expected in out["reason"], out["reason"]


def test_a_training_plan_that_cannot_run_is_not_priced():
    """Walk of 2026-12-07: Llama 3 70B on one H100 read "Feasible: no" beside a cost of
    $2,851,771, a figure easy to take at face value on a phone where the verdict has
    scrolled away. A plan that cannot run is now not priced, as the serving planner's is
    not; its MFU, step and days stay, as if it fitted (lesson 10's exercise 9 reads them
    for a machine too small), and a plan that runs is priced."""
    inputs = {"model": "llama-3-70b", "n_gpus": 1}
    out = C.compute("planning", **inputs)
    assert out["feasible"] is False and "use at least 14 GPUs" in out["problems"]
    assert out["cost"] is None and out["time"] > 0 and 0 < out["mfu"] < 1
    text = C.evaluate("planning", inputs)["text"]
    assert text["cost"] == "none: no cost for a plan that cannot run"
    assert text["price_note"] == "not priced: the plan cannot run"
    fine = C.evaluate("planning", {"model": "llama-3-70b", "n_gpus": 64})["text"]
    assert fine["feasible"] == "yes" and fine["cost"].startswith("$"), fine
    assert fine["price_note"].startswith("at $"), fine


@pytest.mark.parametrize("inputs, problem", [
    ({"tp": 1}, "no room for a KV cache"),  # Llama 3 70B's 141 GB of BF16 on one H100
    ({"tpot_slo": 0.001}, "tpot_slo"),
])
def test_a_serving_plan_that_cannot_run_shows_no_throughput_or_cost(inputs, problem):
    """Audit (2026-12-06): Llama 3 70B at tp 1 on one H100 (weights that do not fit, 20
    requests/s overloading it) read 6,000 tokens/s and $0.32 per million output tokens
    beside "Feasible: no", 16 times cheaper than the feasible plan's $5.10 at tp 4: the
    planner's throughput is the traffic asked for, not what the plan delivers. A plan
    that cannot run now shows neither, saying why; a feasible one shows both."""
    out = C.compute("serving_plan", **inputs)
    assert out["feasible"] is False and problem in out["problems"], out["problems"]
    assert out["throughput"] is None and out["cost"] is None
    shown = C.evaluate("serving_plan", inputs)
    assert shown["ok"], shown
    text = shown["text"]
    assert text["throughput"].startswith("none: this plan cannot serve"), text
    assert text["cost"].startswith("none: no cost for a plan that cannot run"), text
    assert text["price_note"] == "not priced: the plan cannot run"
    assert "$" not in text["cost"] and "tokens/s" not in text["throughput"]
    fine = C.evaluate("serving_plan", {})["text"]
    assert fine["feasible"] == "yes"
    assert fine["throughput"] == "6,000 tokens/s" and fine["cost"].startswith("$")


def test_the_serving_form_offers_the_published_mixed_checkpoints():
    """Walk of 2026-12-07: the form offered gpt-oss-120b only as MXFP4 throughout, 59.4 GiB,
    below the 60.8 GiB checkpoint whose non-expert parts are BF16 (OpenAI's model card),
    and Llama 3.1 405B FP8 only as FP8 throughout. Both mixed checkpoints are choices now,
    planned as gpulesson.planning plans them; a dense model cannot take MXFP4 experts."""
    choices = {c.value for c in C.get("serving_plan").input("weight_dtype").choices}
    assert {"mxfp4_experts", "fp8_ffn"} <= choices
    base = {"model": "gpt-oss-120b", "tp": 1, "max_model_len": 131072, "qps": 0,
            "ttft_slo": 0, "tpot_slo": 0}
    mixed = C.compute("serving_plan", **base, weight_dtype="mxfp4_experts")
    plan = planning.plan_serving("gpt-oss-120b", "H100 SXM", tp=1, max_model_len=131072,
                                 weight_dtype="mxfp4_experts", prompt_tokens=2000,
                                 output_tokens=300)
    assert mixed["weights"] == plan.budget.weights
    # the 60.8 GiB checkpoint, its FP32 rotary table and, on Hopper, the copies of the
    # experts' scales vLLM's Triton kernels keep: vLLM 0.14.1 printed 64.38 GiB (#33155)
    assert mixed["weights"] / 2**30 == pytest.approx(64.38, rel=0.005)
    assert mixed["weights"] > C.compute("serving_plan", **base, weight_dtype="mxfp4")["weights"]
    dense = C.evaluate("serving_plan", {"model": "llama-3-8b", "weight_dtype": "mxfp4_experts"})
    assert not dense["ok"] and dense["input"] == "weight_dtype", dense


def test_without_a_traffic_the_form_speaks_of_a_full_replica():
    """Screenshot check (2026-12-07): at Traffic 0 the reason read "Fewest GPUs that meet
    the traffic" and the price "per million output tokens at the traffic", where no traffic
    was asked; both speak of the full replica now, and of the traffic when there is one."""
    idle = C.evaluate("serving_plan", {"qps": 0})["text"]
    assert idle["reason"].startswith("Fewest GPUs that run a full replica: "), idle["reason"]
    assert idle["price_note"].startswith("per million output tokens at full load, at $")
    busy = C.evaluate("serving_plan", {"qps": 20})["text"]
    assert busy["reason"].startswith("Fewest GPUs that meet the traffic: "), busy["reason"]
    assert busy["price_note"].startswith("per million output tokens at the traffic, at $")


def test_the_serving_form_offers_vllms_kv_cache_types():
    """Audit (2026-12-06): the deployment form's KV cache offered every storage precision
    (INT4, NVFP4, FP32 ...), which vLLM's --kv-cache-dtype does not take; it offers
    vLLM's auto (its default), BF16, FP16 and FP8 now, auto reading as BF16 for Llama 3
    70B and as FP8 for DeepSeek-V3.2."""
    spec = next(i for i in C.get("serving_plan").inputs if i.name == "kv_dtype")
    assert [c.value for c in spec.choices] == ["auto", "bf16", "fp16", "fp8"]
    assert C.compute("serving_plan", kv_dtype="auto") == C.compute("serving_plan")
    refused = C.evaluate("serving_plan", {"kv_dtype": "int4"})
    assert not refused["ok"] and refused["input"] == "kv_dtype", refused
    v32 = {"model": "deepseek-v3.2", "gpu": "H200", "weight_dtype": "fp8", "tp": 8, "qps": 0}
    assert C.compute("serving_plan", **v32, kv_dtype="auto")["kv_cache_tokens"] == \
        C.compute("serving_plan", **v32, kv_dtype="fp8")["kv_cache_tokens"]


def test_the_serving_plan_shows_the_memory_outside_pytorch():
    """The deployment dashboard shows the non-torch memory its KV cache was sized with:
    vLLM's NCCL buffers grow with the tensor-parallel group (about 2 GiB on each of eight
    H100s, 0.14 GiB on one), so a learner can see where the cache of a large tp went."""
    from gpulesson.planning import gpu_view
    from gpulesson.planning.non_torch import vllm_non_torch_bytes

    for tp in (1, 8):
        out = C.compute("serving_plan", tp=tp)
        assert out["non_torch"] == vllm_non_torch_bytes(gpu_view("H100 SXM"), tp)
    assert C.evaluate("serving_plan", {"tp": 8})["text"]["non_torch"] == "2.2 GB (2.02 GiB)"
