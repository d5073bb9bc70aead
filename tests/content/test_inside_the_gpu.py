"""The lesson *Inside the GPU: threads, warps, tiles and waves*
(``notebooks/inside_the_gpu.ipynb``): the promises its page makes, checked without running it
(nbval runs it).

* the skeleton of the house style (``nbtools``): label, shared GPU note, what you'll learn /
  need, set-up, key takeaways, key terms, the link to the exercise notebook;
* every "Pause and think" has its answer in a collapsed dropdown;
* its calculators are the registry's, its glossary terms and citations exist;
* every figure of the prose is a claim: the sentence as the page has it, rebuilt here from
  the calculators (``gpulesson.execution``, ``hardware``, ``gemm``, ``units``), or a number
  that is not a result (``NOT_FIGURES``: the lesson's chosen sizes);
* its kernels are checked in view (the kernel checker's reports are printed), and every
  timing on a GPU sits behind ``dev.is_gpu``.
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

from gpulesson import execution, gemm, hardware, transformer, units

from . import nbtools as nb
from . import study_time
from .claims import claim_tests, claims, page

SLUG = "inside_the_gpu"
NOTEBOOK = nb.notebook(SLUG)
PAGE = page(NOTEBOOK)

H100X, B200X = execution.gpu_execution("H100 SXM"), execution.gpu_execution("B200")
A100X = execution.gpu_execution("A100 80GB")
H100, B200 = hardware.gpu("H100 SXM"), hardware.gpu("B200")
LIM = H100X.limits  # compute capability 9.0
WARP = LIM.warp_size
SECTOR = execution.coalescing().sector_bytes
N_VEC, T = 1_000_000, 256  # the lesson's vector and block size
KIB = 1024
WORDS = {1.25: "a quarter"}


def _n(value: int) -> str:
    return f"{value:,}"


def _pct(fraction: float, digits: int = 1) -> str:
    return f"{100 * fraction:.{digits}f} %"


def _blocks(n: int, threads: int = T) -> int:
    return execution.tiles(n, 1, tile_m=threads, tile_n=1)


def _occ(threads: int, registers: int = 32, shared: int = 0, arch: str = "9.0"):
    return execution.occupancy(threads, registers_per_thread=registers,
                               shared_memory_per_block=shared, arch=arch)


def _time(m: int, gpu: str = "H100 SXM", n: int = 4096, k: int = 4096) -> float:
    spec = execution.gpu_execution(gpu)
    return execution.gemm_time(m, n, k, peak_flops=hardware.gpu(gpu).dense("bf16"),
                               sms=spec.sms)


def _waves(m: int, gpu: str = "H100 SXM", n: int = 4096) -> execution.GemmWaves:
    return execution.gemm_waves(m, n, sms=execution.gpu_execution(gpu).sms)


def _branch(condition, threads: int = 1024) -> execution.BranchCost:
    return execution.branch_cost([condition(i) for i in range(threads)])


def _vector_bytes() -> int:
    return 3 * 4 * N_VEC  # a, b and out, 4-byte floats


def _first_step_b200() -> int:
    """The fewest rows at which a × 4,096 GEMM needs a fifth wave on a B200."""
    return next(m for m in range(4096, 8192) if _waves(m, "B200").waves > 4)


def _intensity(tile: int, b: float = 4) -> float:
    return execution.tiled_matmul_intensity(4096, 4096, 4096, tile_m=tile, bytes_per_element=b)


def _bright() -> tuple[float, float, float]:
    """Pause 2: 1 % of pixels on a path ten times as slow. The share of warps with a bright
    pixel, the expected time per warp (fast path = 1), and the time after compaction."""
    p = 1 - 0.99**WARP
    split = execution.warp_divergence(1, then_cost=10, else_cost=1).cycles
    fast = execution.warp_divergence(0, then_cost=10, else_cost=1).cycles
    bright = execution.warp_divergence(WARP, then_cost=10, else_cost=1).cycles
    return p, (1 - p) * fast + p * split, 0.99 * fast + 0.01 * bright


def _copy_efficiency(stride: int) -> float:
    """A strided copy: the load at ``stride``, the store coalesced; useful over moved bytes."""
    load, store = execution.coalescing(stride), execution.coalescing(1)
    return (load.useful_bytes + store.useful_bytes) / (load.bytes_moved + store.bytes_moved)


def _cap() -> tuple[execution.Occupancy, execution.Occupancy]:
    return _occ(256, 40), _occ(256, 32)


def _padding() -> tuple[execution.GemmWaves, execution.GemmWaves]:
    return _waves(4096, n=4160), _waves(4096)


CLAIMS = claims(
    # Introduction
    lambda: f"of {WARP} threads that move in step",
    lambda: f"a {_n(4097)} × {_n(4096)} matrix product is predicted to take "
     f"{WORDS[_time(4097) / _time(4096)]} longer than a {_n(4096)} × {_n(4096)} one",
    # 1. Threads, blocks and the grid
    lambda: f"(up to {_n(LIM.max_threads_per_block)})",
    lambda: (lambda b, per_sm: f"A million elements in blocks of {T} threads: {_n(b)} blocks, "
             f"{_n(b * T)} threads, the last {b * T - N_VEC} of them idle. An H100 SXM has "
             f"{H100X.sms} SMs of {_n(LIM.max_threads_per_sm)} threads each: "
             f"{_n(H100X.sms * LIM.max_threads_per_sm)} threads at once, {per_sm} of these "
             f"blocks per SM, {_n(H100X.sms * per_sm)} blocks per round, so the {_n(b)} "
             f"blocks run in {execution.waves(b, sms=H100X.sms, blocks_per_sm=per_sm)} rounds")(
        _blocks(N_VEC), _occ(T).blocks_per_sm),
    lambda: f"An H100 SXM keeps {_n(H100X.sms * LIM.max_threads_per_sm)} threads in flight "
     f"({H100X.sms} SMs × {_n(LIM.max_threads_per_sm)}), a B200 "
     f"{_n(B200X.sms * B200X.limits.max_threads_per_sm)} ({B200X.sms} × "
     f"{_n(B200X.limits.max_threads_per_sm)})",
    lambda: f"The million-element addition moves {units.format_bytes(_vector_bytes())}; at "
     f"{units.format_bandwidth(H100.bandwidth)} that takes "
     f"{units.format_seconds(_vector_bytes() / H100.bandwidth)} on an H100 and "
     f"{units.format_seconds(_vector_bytes() / B200.bandwidth)} on a B200 at "
     f"{units.format_bandwidth(B200.bandwidth)}",
    lambda: f"a block of {_n(N_VEC)} threads is not allowed (at most "
     f"{_n(LIM.max_threads_per_block)})",
    lambda: "a vocabulary of "
     f"{_n(transformer.preset('gpt2').vocab)} tokens",
    # 2. Warps and divergence
    lambda: f"{WARP} consecutive threads (the first {WARP} threads of a block, the next "
     f"{WARP},",
    lambda: f"On {_n(1024)} threads ({_branch(lambda i: True).warps} warps) with two equally "
     "long sides",
    lambda: "splits every warp, and the kernel takes "
     f"{_branch(lambda i: i % 2 == 0).slowdown:g}× as long",
    lambda: (lambda q, r: f"`i % 64 < 16` splits {q.divergent_warps} of the {q.warps} warps, "
             f"{q.slowdown:g}×. A bounds check `i < 1000` splits "
             + {1: "one"}[r.divergent_warps] + f" warp of {WARP}, the last: "
             f"{r.slowdown:.3g}×")(_branch(lambda i: i % 64 < 16), _branch(lambda i: i < 1000)),
    lambda: f"A warp is {WARP} threads on both, and an SM of either holds "
     + ({LIM.max_warps_per_sm, B200X.limits.max_warps_per_sm} == {64} and "64")
     + " warps at once",
    lambda: f"A warp of {WARP} threads holds at least one bright pixel with probability "
     f"$1 - 0.99^{{{WARP}}}$, about {100 * _bright()[0]:.0f} %",
    lambda: (lambda p, t, _: f"({1 - p:.2f} × 1 + {p:.2f} × "
             f"{execution.warp_divergence(1, then_cost=10, else_cost=1).cycles:g} ≈ {t:.1f})")(
        *_bright()),
    lambda: f"about {_bright()[2]:.1f} times",
    # 3. Coalescing
    lambda: f"{SECTOR}-byte",
    lambda: f"{{{SECTOR}\\,\\text{{bytes}}",
    lambda: f"Do the {execution.coalescing().threads} reads",
    lambda: (lambda a, s, two, wide: f"{a.threads} threads reading consecutive 4-byte floats, "
             f"aligned: {a.sectors} sectors for {a.bytes_moved} bytes, {_pct(a.efficiency, 0)}. "
             f"Shifted by one element: {s.sectors} sectors, {_pct(s.efficiency, 0)}. Every "
             f"second element (stride 2): {_pct(two.efficiency, 0)}. A stride of 8 elements "
             "or more, such as one column of a row-major matrix: each thread gets a sector of "
             f"its own, {wide.sectors} sectors ({_n(wide.bytes_moved)} bytes) for "
             f"{wide.useful_bytes} useful bytes, {_pct(wide.efficiency)}")(
        execution.coalescing(1), execution.coalescing(1, offset_elements=1),
        execution.coalescing(2), execution.coalescing(8)),
    lambda: (lambda e: f"At {_pct(e)} efficiency an H100's "
             f"{units.format_bandwidth(H100.bandwidth)} delivers "
             f"{H100.bandwidth * e / 1e9:.0f} GB/s of useful data, and a B200's "
             f"{units.format_bandwidth(B200.bandwidth)} delivers "
             f"{B200.bandwidth * e / 1e9:.0f} GB/s")(
        execution.coalescing(32).efficiency),
    lambda: f"each element is {4 * 4} bytes",
    lambda: (lambda c: f"The `x` values are {c.stride * c.element_bytes} bytes apart, "
             f"a stride of {c.stride} floats: {c.sectors} sectors for "
             f"{c.useful_bytes} useful bytes, {_pct(c.efficiency, 0)}")(
        execution.coalescing(4)),
    lambda: f"the `x` values are consecutive: {execution.coalescing(1).sectors} sectors, "
     f"{_pct(execution.coalescing(1).efficiency, 0)}",
    # 4. Shared-memory tiling
    lambda: f"{_intensity(1):.3f} FLOP/byte naive, {_intensity(8):.2f} with 8 × 8 tiles, "
     f"{_intensity(16):.2f} with 16 × 16, {_intensity(32):.2f} with 32 × 32. Two 32 × 32 FP32 "
     f"tiles take {units.format_bytes(2 * 32 * 32 * 4, binary=True)} of shared memory per "
     "block",
    lambda: f"The FP32 ridge point is {H100.ridge_point('fp32'):.1f} FLOP/byte on an H100 "
     f"({units.format_flop_rate(H100.dense('fp32'))} over "
     f"{units.format_bandwidth(H100.bandwidth)}) and {B200.ridge_point('fp32'):.2f} on a B200 "
     f"({units.format_flop_rate(B200.dense('fp32'))} over "
     f"{units.format_bandwidth(B200.bandwidth)})",
    # 3.1 of the review: a bound only if every request went to DRAM
    lambda: f"If every request went to DRAM, the naive kernel, at {_intensity(1):.3f}, could "
     f"reach at most {_pct(_intensity(1) * H100.bandwidth / H100.dense('fp32'))} of the "
     f"H100's FP32 peak and {_pct(_intensity(1) * B200.bandwidth / B200.dense('fp32'))} of "
     "the B200's",
    lambda: f"32 × 32 tiles ({_intensity(32):.2f}) come close to the B200's ridge",
    # 3.5 of the review: the whole copy's efficiency, its stores coalesced
    lambda: "8 / (4 s + 4) = 2 / (s + 1) for a stride s up to "
     f"{SECTOR // 4}, {_pct(_copy_efficiency(2), 0)} at stride 2 rather than the load's "
     f"{_pct(execution.coalescing(2).efficiency, 0)}",
    # 3.2 of the review: the other tile orientation has no fifth wave
    lambda: (lambda w: f"With 128 × 256 tiles, the other orientation cuBLAS also has, "
             f"{_n(4097)} rows make {w.tiles_m} × {w.tiles_n} = {w.tiles} tiles: exactly "
             f"{w.waves} waves, " + units.format_seconds(execution.gemm_time(
                 4097, 4096, 4096, peak_flops=H100.dense("bf16"), sms=H100X.sms, tile_m=128,
                 tile_n=256)) + ", no penalty")(
        execution.gemm_waves(4097, 4096, sms=H100X.sms, tile_m=128, tile_n=256)),
    # 3.9 of the review: the timed sum is the lesson's 64-thread blocks
    lambda: f"runs $2^{{24}}$ numbers in this lesson's 64-thread blocks: "
     f"{_n(_blocks(2**24, 64))} atomic additions",
    lambda: f"In BF16 the ridges are {H100.ridge_point('bf16'):.0f} and "
     f"{B200.ridge_point('bf16'):.0f} FLOP/byte",
    lambda: f"({_intensity(128, 2):.1f} FLOP/byte for 128 × 128 tiles)",
    lambda: f"An H100 block may use {LIM.shared_memory_per_block // KIB} KiB",
    lambda: f"$T = 128$ needs {2 * 128 * 128 * 4 // KIB} KiB, which "
     + ("fits" if 2 * 128 * 128 * 4 <= LIM.shared_memory_per_block else "?")
     + ". But a block of $T \\times T$ threads is limited to "
     f"{_n(LIM.max_threads_per_block)} threads ($T \\le "
     f"{math.isqrt(LIM.max_threads_per_block)}$)",
    lambda: f"({LIM.max_registers_per_thread})",
    # 5. Occupancy
    lambda: f"at most {_n(LIM.max_threads_per_sm)} per SM on an H100 or B200 "
     f"({LIM.max_warps_per_sm} warps), so $\\lfloor {LIM.max_warps_per_sm} / w \\rfloor$",
    lambda: f"blocks: at most {LIM.max_blocks_per_sm} per SM",
    lambda: f"{_n(LIM.registers_per_sm)} per SM, allocated per warp in units of "
     f"{LIM.register_allocation_unit}, in " + {4: "four"}[LIM.register_partitions]
     + f" partitions of {_n(LIM.registers_per_sm // LIM.register_partitions)}",
    lambda: f"up to {LIM.shared_memory_per_sm // KIB} KiB per SM, allocated per block in units "
     f"of {LIM.shared_memory_allocation_unit} bytes, plus "
     f"{LIM.reserved_shared_memory_per_block // KIB} KiB",
    lambda: (lambda a, b, c, d: f"256-thread blocks with 32 registers per thread: "
             f"{a.blocks_per_sm} blocks, {_pct(a.occupancy, 0)}. With 64 registers: "
             f"{b.blocks_per_sm} blocks, {_pct(b.occupancy, 0)}. 128-thread blocks with 37 "
             f"registers: a warp's {_n(37 * WARP)} registers round up to "
             f"{_n(c.registers_per_block // c.warps_per_block)}, each partition holds "
             f"{c.warps_per_sm // LIM.register_partitions} warps, {_pct(c.occupancy, 0)}. "
             "256-thread blocks using 48 KiB of shared memory: each takes "
             f"{d.shared_memory_per_block // KIB} KiB, {d.blocks_per_sm} fit, "
             f"{_pct(d.occupancy, 0)}")(
        _occ(256), _occ(256, 64), _occ(128, 37), _occ(256, 32, 48 * KIB)),
    lambda: f"Compute capabilities {H100X.compute_capability} and {B200X.compute_capability} "
     "have the "
     + ("same" if (LIM.max_threads_per_sm, LIM.max_blocks_per_sm, LIM.registers_per_sm,
                  LIM.shared_memory_per_sm) == (
        B200X.limits.max_threads_per_sm, B200X.limits.max_blocks_per_sm,
        B200X.limits.registers_per_sm, B200X.limits.shared_memory_per_sm) else "?")
     + f" per-SM limits ({_n(LIM.max_threads_per_sm)} threads, {LIM.max_blocks_per_sm} "
     f"blocks, {_n(LIM.registers_per_sm)} registers, {LIM.shared_memory_per_sm // KIB} KiB of "
     "shared memory)",
    lambda: f"{H100X.sms} against {B200X.sms}: at the same occupancy a B200 keeps "
     f"{100 * (B200X.sms / H100X.sms - 1):.0f} % more threads in flight",
    lambda: (lambda hi, lo: f"At 40 registers a warp holds "
             f"{_n(hi.registers_per_block // hi.warps_per_block)} registers, a partition "
             f"{hi.warps_per_sm // LIM.register_partitions} warps, the SM {hi.warps_per_sm} "
             f"warps: {hi.blocks_per_sm} blocks, {_pct(hi.occupancy, 0)}. At 32 registers, "
             f"{_n(lo.registers_per_block // lo.warps_per_block)} per warp, "
             f"{lo.warps_per_sm // LIM.register_partitions} per partition: "
             f"{lo.blocks_per_sm} blocks, {_pct(lo.occupancy, 0)}")(*_cap()),
    # 6. Tile and wave quantisation
    lambda: f"{A100X.sms} SMs, one 256 × 128 tile per SM, a wave of "
     f"{_waves(4096, 'A100 80GB').wave_size} tiles",
    lambda: (lambda a, b: f"H100 SXM, 256 × 128 tiles, {H100X.sms} SMs: {_n(4096)} × "
             f"{_n(4096)} makes {a.tiles} tiles, {a.fractional_waves:.2f} waves, so "
             f"{a.waves} waves, {_pct(a.efficiency)} of the arithmetic useful; predicted "
             f"{units.format_seconds(_time(4096))} (the peak alone would give "
             + units.format_seconds(gemm.flops(4096, 4096, 4096) / H100.dense("bf16"))
             + f"). At {_n(4097)} rows the tiles become {b.tiles}: "
             f"{b.fractional_waves:.2f} waves, so {b.waves}, the last holding "
             f"{b.last_wave_tiles} tiles; {_pct(b.efficiency)} useful, "
             f"{units.format_seconds(_time(4097))}. "
             + WORDS[_time(4097) / _time(4096)].capitalize()
             + f" more time for {100 * (4097 / 4096 - 1):.3f} % more work")(
        _waves(4096), _waves(4097)),
    lambda: (lambda a, b: f"{_waves(4096).wave_size} tiles on an H100, {a.wave_size} on a "
             f"B200. The B200 runs the {_n(4096)} × {_n(4096)} GEMM in {a.waves} waves at "
             f"{_pct(a.efficiency)} useful arithmetic ({a.fractional_waves:.2f} waves' worth "
             "of tiles), and the extra row does not cost it a wave: "
             f"{b.tiles} tiles are {b.fractional_waves:.2f} waves, still {b.waves}. Its step "
             f"comes later, at {_n(_first_step_b200())} rows")(
        _waves(4096, "B200"), _waves(4097, "B200")),
    lambda: (lambda pad, plain: f"{pad.tiles_n} tiles instead of {plain.tiles_n} across $N$ "
             f"({_n(4160)} / 128 = {4160 / 128:g}), so {pad.tiles} tiles for {_n(4096)} × "
             f"{_n(4160)}, exactly {pad.waves} waves of {pad.wave_size}; the unpadded shape had "
             f"{plain.tiles} tiles, also {plain.waves} waves. The time is the "
             + ("same" if _time(4096, n=4160) == _time(4096) else "?")
             + f", {100 * (4160 / 4096 - 1):.1f} % more arithmetic")(*_padding()),
    # 7. The reduction
    lambda: f"$2^{{20}}$ = {_n(2**20)} numbers in 256-thread blocks: "
     f"{_n(_blocks(2**20))} blocks, each {int(math.log2(T))} tree steps, then "
     f"{_n(_blocks(2**20))} atomic additions",
    lambda: f"reading the {units.format_bytes(4 * 2**20)} of $2^{{20}}$ floats takes "
     f"{units.format_seconds(4 * 2**20 / H100.bandwidth)} at an H100's "
     f"{units.format_bandwidth(H100.bandwidth)} and "
     f"{units.format_seconds(4 * 2**20 / B200.bandwidth)} at a B200's "
     f"{units.format_bandwidth(B200.bandwidth)}",
    lambda: f"The {_n(_blocks(2**20))} atomic additions",
    # Key takeaways
    lambda: f"{WARP} threads",
)

#: Numbers of the prose that are not results: the lesson's chosen sizes.
NOT_FIGURES = (
    "a vector of $2^{24}$ elements",          # the GPU cell's size
    "1,000,000 pixels",                       # pause 2's image
    "cap it at 32",                           # pause 5's compiler option
    "256-thread blocks uses 40 registers",
    "two 4,096 × 4,096 BF16 matrices on an H100 in 256 ×\n128 tiles",  # section 6's question
    "makes it 4,097 × 4,096",
    "from 4,096 to 4,160",                    # pause 6's padding
    "256 × 128 tiles and tokens in multiples of 4,096",
    "with blocks of 256 threads",             # section 7, the block of the worked number
    "256 small integers",                     # the table's input
)


(test_claim, test_every_figure_is_claimed,
 test_every_listed_non_figure_is_on_the_page) = claim_tests(__name__, NOTEBOOK)


# ---------------------------------------------------------------------------------------
# Structure


def test_skeleton_of_the_house_style() -> None:
    nb.check_skeleton(SLUG, "Inside the GPU: threads, warps, tiles and waves",
                      headings=("## References",), set_up=True)


def test_every_pause_and_think_hides_its_answer() -> None:
    """One prompt per section, each with a collapsed answer."""
    nb.check_pauses_hide_answers(nb.markdown(NOTEBOOK), at_least=7)


def test_each_section_ends_with_the_h100_and_the_b200() -> None:
    text = nb.markdown(NOTEBOOK)
    sections = text.split("\n## ")[1:]
    numbered = [s for s in sections if s[:2].rstrip(".").isdigit()]
    assert len(numbered) == 7
    for section in numbered:
        assert "**On an H100 and a B200.**" in section, section[:40]


def test_calculators_terms_citations_and_exercise_notebook() -> None:
    nb.check_registry_widgets(SLUG, {"occupancy", "gemm_waves", "coalescing", "tiled_matmul"})
    text = nb.markdown(NOTEBOOK)
    terms = nb.check_terms_in_glossary(text)
    assert {"warp", "occupancy", "wave quantisation", "race condition"} <= terms
    assert len(nb.check_citations_in_bibliography(text)) >= 7
    nb.check_exercise_notebook(SLUG)


def test_the_kernels_are_checked_in_view_and_timed_only_on_a_gpu() -> None:
    """The checker's verdicts on the right and the broken kernels are printed where a
    learner sees them; every cell that imports CuPy runs only when kernels run on a real
    GPU (``on_gpu``: a GPU device and Numba's real CUDA target) and its output is not
    compared (timings)."""
    sources = nb.code_cells(NOTEBOOK)
    checked = "\n".join(src for src, _ in sources if "check_kernel(" in src)
    for kernel in ("vector_add_unguarded", "matmul_one_barrier", "sum_no_atomic",
                   "sum_no_barrier"):
        assert kernel in checked, kernel
    assert "cuda = numba_cuda(dev)" in sources[0][0]
    for src, tags in sources:
        if "cupy" in src:
            assert "if on_gpu:" in src and "nbval-ignore-output" in tags, src[:60]


def test_the_schematics_are_folded_drawn_by_gpulesson_and_titled_for_alt_text() -> None:
    """Review 3.8: four schematics (the launch, a warp's sectors, a tile along K, waves),
    each in a ``hide-input`` cell (no study time), drawn by ``gpulesson.diagrams`` from
    ``gpulesson.execution``, with a literal title that the site turns into the image's alt
    text (``gl_exercises.plot_titles``)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    import gl_exercises

    drawn = {}
    for src, tags in nb.code_cells(NOTEBOOK):
        for name in re.findall(r"diagrams\.(\w+)\(", src):
            assert "hide-input" in tags, src[:60]
            titles = gl_exercises.plot_titles(src)
            # one whole title, no typed number in it (a digit after a letter is a name: H100)
            assert len(titles) == 1 and "…" not in titles[0] and \
                not re.search(r"(?<![A-Za-z\d])\d", titles[0]), titles
            drawn[name] = titles[0]
    assert sorted(drawn) == ["grid_hierarchy", "sector_diagram", "tile_diagram",
                             "wave_diagram"]


def test_the_core_fits_one_sitting_and_keeps_the_essential_kernels() -> None:
    """Issue 32: a core of at most about 90 minutes by the study-time model; issue 33: the
    kernels stay, the ones past the first six as "Going further" practice. The core keeps
    a 1-D and a 2-D map and the shared-memory tile (the reduction is taught in section 7
    and leads the practice set: the exercises stay in order)."""
    core = study_time.core_exercises(SLUG)
    assert core == [1, 2, 3, 4, 5, 6], core
    assert study_time.counts(SLUG).exercises["kernel"] == 3
    assert study_time.study_minutes(SLUG) <= 90, study_time.counts(SLUG)


def test_exercise_21_says_where_the_interleaved_tree_splits_warps() -> None:
    """Audit B item 10: with the interleaved tree (``tid % (2 * step) == 0``) every step
    splits every warp of the block except the last (step = BLOCK / 2), where only thread 0
    adds and the first warp alone is split (execution.branch_cost)."""
    from gpulesson.exercises.bank._inside_the_gpu_kernels import dot
    from gpulesson.kernelcheck import tasks

    block = tasks.SUM_BLOCK
    steps = [2**k for k in range(int(math.log2(block)))]
    split = [execution.branch_cost([t % (2 * st) == 0 for t in range(block)])
             for st in steps]
    assert all(c.divergent_warps == c.warps for c in split[:-1])
    assert split[-1].divergent_warps == 1 < split[-1].warps
    texts = [dot.solution, *(m.hint for m in dot.mistakes if m.key == "interleaved_tree")]
    for text in texts:
        text = " ".join(text.split())
        assert "every warp at every step" in text
        assert re.search(r"every warp at every step (of the tree )?but the last", text), text


def test_blocks_can_wait_in_a_cluster_and_a_stray_access_can_fault() -> None:
    """Two absolutes the CUDA C++ Programming Guide contradicts: the blocks of a thread
    block cluster (compute capability 9.0 on, the H100 and B200 of this lesson) can wait
    for each other at a cluster barrier, as can all blocks of a cooperative launch; and an
    access past an allocation that leaves mapped memory stops the kernel with an
    illegal-address error. The lesson qualifies both."""
    assert {"9.0", "10.0"} <= set(execution.ARCHITECTURES)
    text = " ".join(nb.markdown(NOTEBOOK).split())
    assert "can never wait for each other" not in text
    assert "outside a cluster or a cooperative launch" in text
    assert "does not even fail" not in text and "often does not fail" in text


def test_cupy_sum_is_not_said_to_add_its_partial_sums_atomically() -> None:
    """``cupy.sum`` of a whole array runs CUB's device reduction (CuPy's default
    accelerator) or CuPy's own reduction kernel: both combine the blocks' partial sums in
    a second pass, with no same-address atomics to compare against the lesson's 262,144."""
    text = " ".join(nb.markdown(NOTEBOOK).split())
    assert "adds far fewer partial sums atomically" not in text
    assert "in a second pass, not with atomics on one address" in text
