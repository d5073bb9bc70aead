"""Lesson 2, *Rooflines and Tensor Cores* (``notebooks/roofline_and_tensor_cores.ipynb``):
the promises its page makes, checked without running it (nbval runs it).

* the skeleton of the house style (``nbtools``): label, shared GPU note, what you'll learn /
  need, set-up, key takeaways, key terms, the link to the exercise notebook;
* every "Pause and think" has its answer in a collapsed dropdown, among them the three the
  lesson turns on (a square GEMM compute-bound but one token memory-bound, the sparse
  headline, a recurrent step far below the roof);
* its calculator is the registry's, its glossary terms and citations exist;
* every figure of the prose is a claim: the sentence as the page has it, rebuilt here from
  the calculators (``CLAIMS``), or a number that is not a result (``NOT_FIGURES``: the
  seed page's figures as it printed them, the lesson's chosen sizes, names);
* the seed figures the lesson recomputes come out as the seed printed them.

``hardware.flops_per_watt``, once a helper of this lesson's bank, is tested with the other
datasheet figures in ``tests/unit/test_hardware.py``; the formats of
``gpulesson.precision`` against NumPy's ``finfo`` and the FP8 specification in
``tests/unit/test_precision.py``.
"""

from __future__ import annotations

import math

import pytest

from gpulesson import (
    calculators,
    flops,
    gemm,
    hardware,
    memory,
    precision,
    roofline,
    transformer,
    units,
)
from gpulesson.bench import sizes_for
from gpulesson.exercises.bank.roofline_and_tensor_cores import seed_bytes_precision
from gpulesson.precision import float_format

from . import nbtools as nb
from .claims import claim_tests, claims
from .reference import A100, H100, L38, RTX

SLUG = "roofline_and_tensor_cores"
NOTEBOOK = nb.notebook(SLUG)

N = 4096  # the square GEMM of sections 1 and 5
SEED_MS = 0.034  # the seed page's execution time for it, as printed there
KERNEL = 20  # FLOP/byte: the kernel of the second Pause and think
D_RNN = 1024  # the width of the recurrence in section 6
WORDS = {15: "fifteenth"}


# ---------------------------------------------------------------------------------------
# The calculator's numbers, as the lesson's cells ask for them


def _worked() -> dict[str, str]:
    """The gemm calculator's first state: the worked example of section 1."""
    return calculators.evaluate("gemm")["text"]


def _one_token() -> dict:
    """The MLP up-projection of Llama-3-8B for one token, BF16 on an H100 SXM."""
    return calculators.evaluate("gemm", {"m": 1, "k": L38.hidden, "n": L38.ffn})


def _square(dtype: str = "bf16") -> dict:
    return calculators.compute("gemm", m=N, k=N, n=N, dtype=dtype)


def _seed_candidates() -> list[tuple[float, str, str, str, str]]:
    """Every time the course's GPU figures give the seed's GEMM: (ms, GPU, dense or 2:4
    sparse, dtype, FLOPs or multiply-adds counted), as the lesson's cell searches them."""
    found = []
    for spec in hardware.GPUS.values():
        for kind, table in (("dense", spec.peak_flops), ("2:4 sparse", spec.sparse_flops)):
            for dtype, peak in table.items():
                for counted, work in (("FLOPs", gemm.flops(N, N, N)),
                                      ("multiply-adds", gemm.flops(N, N, N) / 2)):
                    t = roofline.time(flops=work, bytes=0, peak_flops=peak,
                                      bandwidth=spec.bandwidth)
                    found.append((t * 1e3, spec.name, kind, dtype, counted))
    return found


def _nearest() -> list[tuple[float, str, str, str, str]]:
    return [c for c in _seed_candidates() if abs(c[0] - SEED_MS) < 0.001]


def _nearest_text() -> str:
    """'The nearest, 0.0347 ms, and the others near it all need an H100 or H200 running in
    FP8 (or INT8), or at a
    2:4-sparse rate, and the 16-bit ones count multiply-adds', checked part by part."""
    near = _nearest()
    assert not any(f"{c[0]:.3f}" == f"{SEED_MS:.3f}" for c in _seed_candidates())
    (ms,) = {f"{c[0]:.4f}" for c in near}
    names = " or ".join(sorted({c[1].split()[0] for c in near}))
    assert all(c[2] == "2:4 sparse" or c[3] in ("fp8", "int8") for c in near)
    assert all(c[4] == "multiply-adds" for c in near if c[3] in ("fp16", "bf16"))
    return f"The nearest, {ms} ms, and the others near it all need an {names}"


def _roof(intensity: float, peak: float = H100.dense("bf16"),
          bandwidth: float = H100.bandwidth) -> float:
    return roofline.attainable_flops(intensity, peak_flops=peak, bandwidth=bandwidth)


def _rnn_steps() -> int:
    """The recurrence's steps on a CPU: the kernels' FLOP budget (8 FLOPs per element of
    the largest element-wise size for the CPU) over one 1024-wide step."""
    return 8 * sizes_for("cpu", "elementwise")[-1] // gemm.flops(1, D_RNN, D_RNN)


def _cnn_side() -> int:
    """The CNN kernel's image side on a CPU: the same FLOP budget over a 3×3 convolution of
    64 channels in and out (the kernel's s)."""
    return round(math.sqrt(8 * sizes_for("cpu", "elementwise")[-1] / gemm.flops(1, 9 * 64, 64)))


def _rnn_intensity(batch: int = 1) -> float:
    return gemm.arithmetic_intensity(batch, D_RNN, D_RNN, bytes_per_element=4)


def _rnn_roof() -> float:
    """What an H100 SXM's FP32 roofline allows one recurrent step."""
    return _roof(_rnn_intensity(), peak=H100.dense("fp32"))


def _tflop(rate: float, digits: int = 1) -> str:
    return f"{rate / 1e12:,.{digits}f}"


def _fp16_accumulator_step() -> tuple[int, float]:
    """Where FP16's spacing reaches 0.5: 2^(m-1), and the spacing there, 2^(m-1)·ε."""
    fp16 = float_format("fp16")
    start = 2 ** (fp16.fraction_bits - 1)
    return start, start * fp16.epsilon


def _e2m1() -> str:
    """FP4 E2M1's non-negative values, as the lesson lists them."""
    values = [f"{v:g}" for v in float_format("fp4_e2m1").values]
    return ", ".join(values[:-1]) + " or " + values[-1]


def _fp4_70b(name: str) -> str:
    n = transformer.param_count(transformer.preset("llama-3-70b"))
    return units.format_bytes(memory.weight_bytes(n, precision=name), digits=1)


def _latex_power(x: float) -> str:
    """``x`` to two significant digits as the page writes it: ``$6.1\\times10^{-5}$``."""
    mantissa, exponent = f"{x:.1e}".split("e")
    return f"${mantissa}\\times10^{{{int(exponent)}}}$"


CLAIMS = claims(
    # 1. How long should a matrix multiplication take?
    lambda: (lambda r: f"For $M = K = N = {r['m']}$ in {r['dtype'].upper()} ($b = "
             f"{memory.precision_bytes(r['dtype']):g}$) on an {r['gpu']} ({r['peak_flops']} "
             f"TFLOP/s dense BF16, {r['bandwidth']} TB/s)")(calculators.resolve("gemm")),
    lambda: f"$F = 2 \\times {N}^3$ = "
     f"**{_worked()['flops']}**",
    lambda: f"$Q = 3 \\times {N}^2 \\times 2$ bytes = **{_worked()['bytes']}**",
    lambda: f"$I$ = **{_worked()['intensity']}**",
    lambda: f"arithmetic alone takes **{_worked()['compute_time']}**, traffic alone "
     f"**{_worked()['memory_time']}**: the GEMM is {{term}}`{_worked()['bound']}-bound`, and "
     f"{_worked()['time']} is the floor",
    lambda: f"takes part in {N:,} multiply-adds: {_worked()['intensity']}, so the arithmetic"
     f" ({_worked()['compute_time']}) takes "
     f"{_square()['compute_time'] / _square()['memory_time']:.1f} times as long as the "
     f"traffic ({_worked()['memory_time']})",
    lambda: (lambda t, v: f"still reads every one of its {L38.hidden:,} × {L38.ffn:,} "
             "BF16 weights, but uses each only once, for a single multiply-add: 2 FLOPs for "
             f"2 bytes, an intensity of {t['intensity']}. Its arithmetic would take "
             f"{t['compute_time']}; reading the {t['bytes']} takes {t['memory_time']}, "
             f"{v['memory_time'] / v['compute_time']:.0f} times as long, so the roofline "
             f"allows it {t['attainable']}, "
             f"{100 * flops.utilization(v['attainable'], H100.dense('bf16')):.2f} % of the "
             "peak")(_one_token()["text"], _one_token()["values"]),
    # The seed page's figures, recomputed.
    lambda: f'"{gemm.flops(N, N, N) / 1e9:.1f} GFLOPS" of '
     "operations",
    lambda: f"{units.format_bytes(_square('fp32')['bytes'])} of memory and "
     f"{_square('fp32')['intensity']:.1f} ops/byte",
    lambda: f"it is a count: {units.format_flops(gemm.flops(N, N, N), digits=1)}, not "
     f"{units.format_flops(gemm.flops(N, N, N), digits=1)}/s",
    lambda: "Which peak rate would turn "
     f"{units.format_flops(gemm.flops(N, N, N), digits=1)} into",
    _nearest_text,
    lambda: f"the honest answers are **{units.format_seconds(_square('fp32')['time'])}** on "
     "the H100's ordinary FP32 cores, or "
     f"**{units.format_seconds(_square('tf32')['time'])}** if the tensor cores may round the "
     "inputs to TF32. Stored in BF16, the same GEMM moves "
     f"**{units.format_bytes(_square()['bytes'])}**, does "
     f"**{_square()['intensity']:,.0f} FLOP/byte** and takes at least "
     f"**{units.format_seconds(_square()['time'])}**",
    # 2. The roofline.
    lambda: "An H100 SXM in dense BF16 has its ridge at "
     f"{units.format_flop_rate(H100.dense('bf16'))} ÷ {units.format_bandwidth(H100.bandwidth)}"
     f" = **{H100.ridge_point('bf16'):.0f} FLOP/byte**; an A100 80GB at "
     f"{_tflop(A100.dense('bf16'), 0)} TFLOP/s ÷ {A100.bandwidth / 1e12:.3f} TB/s = "
     f"**{A100.ridge_point('bf16'):.0f} FLOP/byte**",
    lambda: f"At {KERNEL} FLOP/byte it sits on the slope, far left of the "
     f"{H100.ridge_point('bf16'):.0f} FLOP/byte ridge: its ceiling is ${KERNEL} \\times "
     f"{H100.bandwidth / 1e12:.2f}$ TB/s = {_tflop(_roof(KERNEL), 0)} TFLOP/s whatever the "
     "peak. Doubling the peak changes "
     + ("nothing" if _roof(KERNEL, peak=2 * H100.dense("bf16")) == _roof(KERNEL) else "?")
     + " (it only moves the ridge further right, to "
     f"{roofline.ridge_point(2 * H100.dense('bf16'), H100.bandwidth):.0f} FLOP/byte). Doubling"
     f" the bandwidth doubles its ceiling to "
     f"{_tflop(_roof(KERNEL, bandwidth=2 * H100.bandwidth), 0)} TFLOP/s: the ridge moves left"
     f" to {roofline.ridge_point(H100.dense('bf16'), 2 * H100.bandwidth):.0f} FLOP/byte, "
     f"still far right of {KERNEL}",
    # 3. This machine's roofline.
    lambda: "The FP32 intensity of a 64×64×64 product is $2\\cdot 64^3 / (3\\cdot 64^2 "
     f"\\cdot 4) \\approx {gemm.arithmetic_intensity(64, 64, 64, bytes_per_element=4):.1f}$ "
     "FLOP/byte",
    lambda: "so "
     f"{gemm.arithmetic_intensity(64, 64, 64, bytes_per_element=4):.1f} lands close to it",
    lambda: "\\ "
     f"{gemm.arithmetic_intensity(64, 64, 64, bytes_per_element=4):.1f}\\,W)$",
    # 4. Number formats.
    lambda: "Why does FP16 run at "
     f"{_tflop(H100.dense('fp16'), 0)} TFLOP/s on an H100",
    # Loss scaling answers FP16's narrow range at the bottom, not its top: gradients below
    # the smallest normal lose digits or underflow (Micikevicius et al. 2018, section 3.2)
    lambda: "a narrow range, its normal numbers running from "
     f"{_latex_power(float_format('fp16').smallest_normal)} to "
     f"{float_format('fp16').largest:,.0f}: small gradients lose digits or underflow to "
     "zero, which is why FP16 training needs loss scaling",
    lambda: "the Tensor Cores round "
     f"the inputs to {float_format('tf32').fraction_bits} fraction bits",
    lambda: "Once the running sum passes "
     f"{_fp16_accumulator_step()[0]}, FP16 can only represent it to the nearest "
     f"{_fp16_accumulator_step()[1]:g}",
    lambda: f"Plain FP32 on an H100 runs at {units.format_flop_rate(H100.dense('fp32'))}, one "
     f"{WORDS[round(H100.dense('bf16') / H100.dense('fp32'))]} of BF16",
    lambda: "multiples of 16 bytes' worth of elements ("
     f"{16 / memory.precision_bytes('fp16'):.0f} in FP16 or BF16, "
     f"{16 / memory.precision_bytes('tf32'):.0f} in TF32, "
     f"{16 / memory.precision_bytes('int8'):.0f} in INT8 and FP8), and on the A100 best at "
     f"multiples of 128 bytes ({128 / memory.precision_bytes('fp16'):.0f} FP16 elements)",
    lambda: (lambda v, m: f"a vocabulary of {v:,} tokens to {math.ceil(v / m) * m:,}")(
        transformer.preset("gpt2").vocab, int(128 / memory.precision_bytes("fp16"))),
    # 5. Reading a datasheet.
    lambda: "FP16 and BF16 are with FP32 accumulation and "
     + {True: "equal"}[all(g.peak_flops["bf16"] == g.peak_flops["fp16"]
                          for g in hardware.GPUS.values() if "bf16" in g.peak_flops)]
     + " wherever a GPU supports both (the V100 "
     + {False: "has no"}["bf16" in hardware.gpu("V100 SXM").peak_flops] + " BF16)",
    lambda: f"The H100's {_tflop(H100.sparse_flops['fp16'], 0)} is its **2:4-sparse** FP16 "
     "rate",
    lambda: f"Its dense rate is {_tflop(H100.dense('fp16'))}. Next to the A100's dense "
     f"{_tflop(A100.dense('fp16'), 0)}, the table suggests the H100 is "
     f"{H100.sparse_flops['fp16'] / A100.dense('fp16'):.1f} times faster for a dense matrix "
     f"product; dense against dense it is {H100.dense('fp16') / A100.dense('fp16'):.1f} "
     "times",
    lambda: f"The RTX 4090's {_tflop(RTX.dense('fp16'), 0)} is right, as the rate with FP32 "
     f"accumulation ({_tflop(RTX.dense('fp16'))}); with an FP16 accumulator the card does "
     + {2: "twice"}[round(RTX.other_flops["fp16_fp16_accumulate"] / RTX.dense("fp16"))]
     + f" that, {_tflop(RTX.other_flops['fp16_fp16_accumulate'])}",
    lambda: "Its FP32 rate, though, is "
     f"{units.format_flop_rate(RTX.dense('fp32'))}, not 35",
    lambda: f"plans the run at the {_tflop(H100.sparse_flops['bf16'], 0)} TFLOP/s on the "
     "datasheet's front page",
    lambda: "The plan is off by a factor of "
     + {2: "two"}[round(H100.sparse_flops["bf16"] / H100.dense("bf16"))]
     + f". {_tflop(H100.sparse_flops['bf16'], 0)} ({_tflop(H100.sparse_flops['bf16'])}) "
     "TFLOP/s is the 2:4-sparse rate",
    lambda: f"run at the dense {units.format_flop_rate(H100.dense('bf16'))} at best: the "
     f"4096³ BF16 GEMM of section 1 takes at least {units.format_seconds(_square()['time'])}, "
     "not the "
     + units.format_seconds(roofline.time(flops=gemm.flops(N, N, N),
                                         bytes=gemm.min_bytes(N, N, N, bytes_per_element=2),
                                         peak_flops=H100.sparse_flops["bf16"],
                                         bandwidth=H100.bandwidth))
     + " the headline suggests",
    # 6. Which architectures keep a processor busy?
    lambda: f"One step multiplies a single row vector by the {D_RNN} × {D_RNN} FP32 weight "
     f"matrix: it moves {units.format_bytes(gemm.min_bytes(1, D_RNN, D_RNN, 4))} (the weights,"
     f" plus the vector in and out) to do {units.format_flops(gemm.flops(1, D_RNN, D_RNN))}, "
     f"an intensity of {_rnn_intensity():.2f} FLOP/byte",
    lambda: "Even on an H100 SXM the roofline would allow it "
     f"{units.format_flop_rate(_rnn_roof())} in FP32, "
     f"{100 * flops.utilization(_rnn_roof(), H100.dense('fp32')):.1f} % of the "
     f"{units.format_flop_rate(H100.dense('fp32'))} peak",
    lambda: f"with the {_rnn_steps()} steps the lesson uses on a CPU, the intensity is "
     f"{_rnn_intensity(_rnn_steps()):.2f} FLOP/byte",
    lambda: "(If the "
     f"{units.format_bytes(memory.weight_bytes(D_RNN * D_RNN, precision='fp32'))} of weights "
     "stay in a cache",
    lambda: f"(about {_rnn_intensity():.1f} FLOP/byte in "
     "FP32)",
    lambda: "more arithmetic than the convolution's FLOPs it is credited with (about "
     f"{100 * 2 / _cnn_side():.0f} % more for the CPU's {_cnn_side()} × {_cnn_side()} image)",
    lambda: f"BF16 raises the ceiling from {_tflop(H100.dense('fp32'))} to "
     f"{units.format_flop_rate(H100.dense('bf16'))} (about "
     f"{H100.dense('bf16') / H100.dense('fp32'):.0f} times)",
    lambda: f"Each step becomes a $256 \\times {D_RNN}$ by ${D_RNN} \\times {D_RNN}$ product: "
     "the weights are read once per step but used 256 times, so the intensity rises from "
     f"{_rnn_intensity():.2f} to {_rnn_intensity(256):.1f} FLOP/byte in FP32",
    # Key takeaways.
    lambda: "Their peak is "
     f"{H100.dense('bf16') / H100.dense('fp32'):.0f} times FP32's on an H100",
    # 4. Block-scaled formats
    lambda: f"an FP4 (E2M1) number is one of {_e2m1()}",
    lambda: "the largest is only "
     f"{precision.block_format('mxfp4').block_dynamic_range:g} times the smallest non-zero "
     "value",
    lambda: (lambda mx, nv: f"the OCP MX formats an {mx.scale.bits}-bit power "
             f"of two per {mx.block_size} elements, NVFP4 an FP8 (E4M3) scale "
             f"per {nv.block_size} elements")(
       precision.block_format("mxfp4"), precision.block_format("nvfp4")),
    lambda: f"MXFP4 takes {precision.bits_per_element('mxfp4'):g} bits per element and NVFP4 "
     f"{precision.bits_per_element('nvfp4'):g}, not "
     f"{precision.block_format('mxfp4').element.bits}: Llama-3-70B's weights take "
     f"{_fp4_70b('mxfp4').replace(' GB', '')} GB in MXFP4 and {_fp4_70b('nvfp4')} in NVFP4, "
     f"against the {_fp4_70b('int4')}",
    lambda: "a relative step of "
     f"{precision.block_format('nvfp4').epsilon:g}",
)

#: Numbers of the prose that are not results.
NOT_FIGURES = (
    # the seed page's figures, quoted as it printed them (its time, its benchmark table,
    # its utilisation table)
    "0.034 ms",
    "1,979 TFLOPS for the H100 SXM, 312 for the A100, 125 for the V100 and 165 for the RTX "
    "4090; for FP32 it gives 35",
    "Transformers 70 to 85 % utilisation with an 8× Tensor Core benefit, CNNs 80 to 95 % with"
    " 4×, RNNs and LSTMs 10 to 40 % with little benefit, GNNs 10 to 30 % with none",
    # the lesson's chosen sizes and inputs
    "4096×4096", "over 2,048 tokens", "intensity 20 FLOP/byte", "the 4,096 products",
    "size 4096 against one of 4095", "a batch of 256 sequences", "only the 64 channels",
    # a share, not a result ("a share of roofline above 100 %"), and names
    "above 100 %", "16-bit", "RTX 4090",
    # releases' names (NVIDIA: CUDA 13.5, November 2026, general availability for Rubin;
    # CUDA Toolkit 13.4 release notes, 2026-09-11: Rubin preview)
    "CUDA 13.5 (November 2026)", "(13.4, in September, had a preview)",
)




(test_claim, test_every_figure_is_claimed,
 test_every_listed_non_figure_is_on_the_page) = claim_tests(__name__, NOTEBOOK)


# ---------------------------------------------------------------------------------------
# Structure


def test_skeleton_of_the_house_style() -> None:
    nb.check_skeleton(SLUG, "Rooflines and Tensor Cores", set_up=True)


def test_every_pause_and_think_hides_its_answer() -> None:
    """Seven prompts at least, each with a collapsed answer; three of them ask why a 4096³
    GEMM is compute-bound where one token is memory-bound, why the 1,979 TFLOP/s headline
    does not apply to a dense model, and why a recurrent step sits far below the roof."""
    blocks = nb.check_pauses_hide_answers(nb.markdown(NOTEBOOK), at_least=7)
    prompts = [block.split(":::{admonition} Answer", 1)[0] for block in blocks]
    for topic in ("one-token layer", "1,979 TFLOP/s", "recurrent step"):
        assert any(topic in prompt for prompt in prompts), topic


def test_calculator_terms_citations_and_exercise_notebook() -> None:
    """The page's shared promises (nbtools): its registry calculator, glossary terms and
    citations that exist, and the exercise notebook showing every exercise once."""
    nb.check_registry_widgets(SLUG, {"gemm"})
    text = nb.markdown(NOTEBOOK)
    assert len(nb.check_terms_in_glossary(text)) >= 20
    assert len(nb.check_citations_in_bibliography(text)) >= 10
    nb.check_exercise_notebook(SLUG)


def test_checks_that_teach_are_in_view() -> None:
    """The formats table is compared with NumPy's ``finfo`` where the page says so, and a
    visible cell shows on a tiny image that the CNN kernel's method, nine products of the
    padded image stored row after row and shifted by rows, with the padding columns dropped,
    equals the direct 3×3 convolution. The kernel itself uses that method: each shift one
    contiguous product, not a 3-D strided view that NumPy broadcasts into one small product
    per image row (270 of them at 30 × 30 pixels, 0.40x a square GEMM's rate, audit A)."""
    assert "the cell compares them with NumPy's `finfo`" in nb.markdown(NOTEBOOK)
    code = nb.code(NOTEBOOK, hidden=False)
    assert any("precision.FORMATS" in src and "np.finfo" in src for src in code)
    check = next(src for src in code if "np.allclose(direct, shifted)" in src)
    assert "rows[dy * 6 + dx:dy * 6 + dx + 24]" in check and ".reshape(4, 6, 2)[:, :4]" in check
    kernels = next(src for src in code if "def architecture_kernels" in src)
    assert "xp.matmul(X[off:off + s * w], K[dy, dx])" in kernels
    assert "y.reshape(s, w, C)[:, :s]" in kernels
    assert "X[dy:dy + s, dx:dx + s]" not in kernels


# ---------------------------------------------------------------------------------------
# Published figures the lesson teaches


def test_seed_gemm_figures_are_fp32_ones():
    """The seed calculator page: 4096^3 GEMM, '201.3 MB' and '682.7 ops/byte'. Both follow
    from 3·N² elements of 4 bytes (FP32), which exercise 1 asks the learner to find."""
    n = 4096
    assert round(gemm.min_bytes(n, n, n, bytes_per_element=4) / 1e6, 1) == 201.3
    assert round(gemm.arithmetic_intensity(n, n, n, bytes_per_element=4), 1) == 682.7
    assert seed_bytes_precision.answer_value() == "fp32"


def test_h100_dense_and_sparse_as_taught() -> None:
    """NVIDIA H100 whitepaper (2022), SXM5 column: FP16/BF16 Tensor Core 989.4 TFLOPS dense,
    1,978.9 TFLOPS with 2:4 sparsity. A 4096³ BF16 GEMM (2·4096³ = 137.4 GFLOP) then takes
    at least 138.9 µs at the dense rate; the sparse headline would claim 69.5 µs."""
    assert H100.peak_flops["bf16"] == pytest.approx(989.4e12)
    assert H100.sparse_flops["bf16"] == pytest.approx(1978.9e12)
    assert gemm.flops(4096, 4096, 4096) / 989.4e12 == pytest.approx(138.9e-6, abs=0.05e-6)


def test_fp4_exercise_counts_the_block_scales():
    """OCP MX v1.0 (section 5) and NVIDIA's NVFP4 (2025): MXFP4 stores one 8-bit scale per
    32 E2M1 elements, 4.25 bits each; Llama-3-70B's 70.55B weights then take 37.48 GB, and
    the bare half byte per weight is the declared mistake."""
    from gpulesson.exercises import lesson_module

    ex = next(e for e in lesson_module("roofline_and_tensor_cores").EXERCISES if e.number == 10)
    n = transformer.param_count(transformer.preset("llama-3-70b"))
    assert ex.answer_value() == n * (4 + 8 / 32) / 8
    assert ex.check(f"{n * 0.5 / 1e9:.2f} GB").mistake == "forgot_scales"


@pytest.mark.parametrize("slug", ["parallelism_at_the_core", SLUG])
def test_the_next_generation_is_dated_by_the_table(slug):
    """Rubin and MI400 are said to be missing from the datasheet table as of the table's own
    date (gpus.json current_generation.as_of), not 'announced for the second half of 2026',
    which a reader in December 2026 would take as still to come: in this lesson, which
    holds the table, and in lesson 1, which names the GPUs after the H100. Both name CUDA
    13.5's general availability for Rubin (November 2026), not 13.4's preview alone."""
    import calendar

    year, month = hardware.CURRENT_GENERATION_AS_OF.split("-")
    text = " ".join(nb.markdown(nb.notebook(slug)).split())
    assert f"as of its date ({calendar.month_name[int(month)]} {year})" in text
    assert "{cite:p}`nvidia2026cuda134,nvidia2026cuda135`" in text
    assert "CUDA 13.5 (November 2026)" in text
    assert "announced for the second half" not in text


def test_the_fp32_line_is_an_accumulator_not_a_tensor_core():
    """Section 4's FP32 running sum shows what an FP32 accumulator buys. It is not what a
    Tensor Core computes: Fasi, Higham, Mikaitis and Pranesh (2021) measured block-wise
    addition with truncating alignment, and DeepSeek-V3 (2024, section 3.3.2) found Hopper's
    FP8 accumulation keeps about 14 bits. The page says so and cites both."""
    text = " ".join(nb.markdown(NOTEBOOK).split())
    assert "the FP32 line is what a Tensor Core computes" not in text
    assert "the FP32 line shows what an FP32 accumulator buys" in text
    assert "{cite:p}`fasi2021tensorcores`" in text and "{cite:p}`deepseek2024v3`" in text


def test_the_source_list_names_every_figure_of_the_datasheet_table():
    """Section 5 says every figure of its GPU table "names its datasheet and date (listed
    below the table)". The list below it must then hold, for each GPU, the source of every
    figure the table prints (memory, bandwidth, power and the dense peaks), not one source
    per GPU: the B300's and GB300's rows once cited only NVIDIA's Blackwell Ultra blog,
    which gives their 288 GB and none of their peaks (those come from the HGX B300 page and
    the GB300 NVL72 page, the B300's bandwidth from aiconfigurator, its power from the
    Blackwell Ultra datasheet). The notebook's two cells run here, the table helper
    replaced by one that keeps the rows."""
    (table_cell,) = (c for c in nb.cells(NOTEBOOK) if c.get("id") == "7e08a22b")
    (source_cell,) = (c for c in nb.cells(NOTEBOOK) if c.get("id") == "072c21cf")
    tables: list[list[list[str]]] = []
    namespace = {"hardware": hardware,
                 "html_table": lambda header, rows, **kw: tables.append(rows)}
    for cell in (table_cell, source_cell):
        exec(compile("".join(cell["source"]), f"{SLUG}.ipynb:{cell['id']}", "exec"),
             namespace)
    listed = {(source, name) for source, names in tables[-1] for name in names.split(", ")}
    shown = ("memory_bytes", "bandwidth", "tdp_watts",
             *(f"peak_flops.{d}" for d in ("fp64", "fp32", "tf32", "fp16", "fp8", "fp4")))
    missing = sorted((spec.name, key) for spec in hardware.GPUS.values() for key in shown
                     if key in spec.figure_sources
                     and (spec.figure_sources[key], spec.name) not in listed)
    assert not missing, missing
    assert any("HGX B300 column" in source and "B300" in names.split(", ")
               for source, names in tables[-1])
