"""gpulesson.diagrams: the lesson's schematics draw what gpulesson.execution computes.

Each test counts the shapes a figure drew (by their gids) against the execution model, for
the lesson's own case and a second one, and checks that a figure refuses to go without a
title (its alt text on the site).
"""

from __future__ import annotations

from collections import Counter

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from gpulesson import diagrams, execution, hardware, units  # noqa: E402

TITLE = "A schematic"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _gids(fig) -> Counter:
    return Counter(artist.get_gid() for ax in fig.axes for artist in ax.get_children()
                   if artist.get_gid())


def _texts(fig) -> str:
    return "\n".join(t.get_text() for ax in fig.axes for t in ax.texts) + "\n" + \
        (fig._suptitle.get_text() if fig._suptitle else "")


@pytest.mark.parametrize(("n", "threads", "gpu"), [(1000, 256, "H100 SXM"),
                                                   (5000, 128, "L4")])
def test_grid_hierarchy_draws_the_launch_and_the_blocks_of_one_sm(n, threads, gpu) -> None:
    fig = diagrams.grid_hierarchy(n, threads, gpu=gpu, title=TITLE)
    gids = _gids(fig)
    spec = execution.gpu_execution(gpu)
    occ = execution.occupancy(threads, arch=spec.compute_capability)
    blocks = -(-n // threads)
    idle = blocks * threads - n
    # the warp where the data ends: its busy lanes are what is left of n after whole warps
    assert gids["lane:busy"] + gids["lane:idle"] == 32
    assert gids["lane:busy"] == (n - 1) % 32 + 1
    assert gids["warp:busy"] == -(-(threads - idle) // 32)
    assert gids["sm:warp"] == occ.warps_per_sm
    text = _texts(fig)
    assert f"{blocks:,} blocks of {threads:,} threads" in text
    assert f"({idle:,} threads idle)" in text
    assert f"{occ.blocks_per_sm} blocks resident" in text
    assert f"({spec.sms} SMs)" in text


@pytest.mark.parametrize(("stride", "offset", "element_bytes"),
                         [(1, 0, 4), (1, 1, 4), (2, 0, 4), (8, 0, 4), (3, 5, 2), (1, 1, 12)])
def test_sector_diagram_shades_the_sectors_coalescing_counts(stride, offset,
                                                             element_bytes) -> None:
    fig = diagrams.sector_diagram([(stride, offset)], element_bytes=element_bytes, title=TITLE)
    gids = _gids(fig)
    c = execution.coalescing(stride, element_bytes=element_bytes, offset_elements=offset)
    assert gids["sector:touched"] == c.sectors
    assert gids["element"] == c.threads
    # the axis ends at the last sector read: every sector drawn is before it
    last = max(s for t in execution.warp_sectors(stride, element_bytes=element_bytes,
                                                 offset_elements=offset) for s in t)
    assert gids["sector:touched"] + gids["sector:untouched"] == last + 1
    assert f"{c.sectors} sectors, {c.bytes_moved:,} bytes moved" in _texts(fig)


def test_sector_diagram_draws_one_row_per_case_on_one_axis() -> None:
    cases = [(1, 0), (8, 0)]
    gids = _gids(diagrams.sector_diagram(cases, title=TITLE))
    assert gids["sector:touched"] == sum(execution.coalescing(s, offset_elements=o).sectors
                                         for s, o in cases)
    assert gids["sector:touched"] + gids["sector:untouched"] == 2 * 32  # stride 8's span
    for bad in ([], "abc", [(1,)], 3):
        with pytest.raises(ValueError, match="cases must hold at least one"):
            diagrams.sector_diagram(bad, title=TITLE)
    with pytest.raises(ValueError, match="stride must be a positive integer, got 0"):
        diagrams.sector_diagram([(0, 0)], title=TITLE)


@pytest.mark.parametrize(("m", "k", "n", "tile", "block"),
                         [(20, 13, 18, 8, (1, 1)), (32, 32, 16, 16, (1, 0)),
                          (5, 40, 7, 8, (0, 0))])
def test_tile_diagram_walks_one_block_along_k(m, k, n, tile, block) -> None:
    fig = diagrams.tile_diagram(m, k, n, tile, block=block, title=TITLE)
    gids = _gids(fig)
    steps = execution.tiles(k, 1, tile_m=tile, tile_n=1)
    assert gids["tile:A"] == gids["tile:B"] == steps
    assert gids["tile:C"] == 1
    # overhang hatched wherever a dimension is not a whole number of tiles
    ragged = sum(1 for rows, cols in ((k, n), (m, k), (m, n)) for d in (rows, cols)
                 if d % tile)
    assert (gids["overhang"] > 0) == (ragged > 0)
    text = _texts(fig)
    grid = (execution.tiles(m, 1, tile_m=tile, tile_n=1),
            execution.tiles(n, 1, tile_m=tile, tile_n=1))
    assert f"A grid of {grid[0]} × {grid[1]} blocks of {tile} × {tile} threads" in text
    assert f"takes {steps} steps along K" in text


def test_tile_diagram_refuses_a_block_outside_the_grid() -> None:
    with pytest.raises(ValueError, match=r"block must be \(row, column\) in the 3 × 3 grid"):
        diagrams.tile_diagram(20, 13, 18, 8, block=(3, 0), title=TITLE)
    with pytest.raises(ValueError, match="block must be"):
        diagrams.tile_diagram(20, 13, 18, 8, block="a", title=TITLE)


def _mesh(fig, gid: str):
    return next(a for ax in fig.axes for a in ax.collections if a.get_gid() == gid)


def test_wave_diagram_fills_a_cell_per_tile_and_leaves_the_tail_idle() -> None:
    shapes = [(4096, 4096, 4096), (4097, 4096, 4096)]
    fig = diagrams.wave_diagram(shapes, gpu="H100 SXM", title=TITLE)
    sms = execution.gpu_execution("H100 SXM").sms
    most = max(execution.gemm_waves(m, n, sms=sms).waves for m, n, _ in shapes)
    for ax, (m, n, k) in zip(fig.axes, shapes, strict=True):
        g = execution.gemm_waves(m, n, sms=sms)
        cells = _mesh(fig, f"waves:{m}x{n}x{k}").get_array().reshape(most, sms)
        assert int(cells.sum()) == g.tiles
        assert int(cells[g.waves - 1].sum()) == g.last_wave_tiles
        assert int(cells.count()) == g.waves * sms   # no cells for waves that never run
        assert f"{g.tiles:,} tiles, {g.waves} waves, the last holding " \
            f"{g.last_wave_tiles};" in ax.get_title(loc="left")


def test_wave_diagram_captions_the_predicted_time_of_gemm_time() -> None:
    fig = diagrams.wave_diagram([(4097, 4096, 4096)], gpu="B200", title=TITLE)
    caption = fig.axes[0].get_title(loc="left")
    spec = execution.gpu_execution("B200")
    seconds = execution.gemm_time(4097, 4096, 4096, sms=spec.sms,
                                  peak_flops=hardware.gpu("B200").dense("bf16"))
    assert caption.endswith(f"predicted {units.format_seconds(seconds)}")
    for bad in ([], 1, [(4096, 4096)]):
        with pytest.raises(ValueError, match="shapes must hold at least one"):
            diagrams.wave_diagram(bad, title=TITLE)


DRAW = {
    "grid_hierarchy": lambda title: diagrams.grid_hierarchy(1000, 256, title=title),
    "sector_diagram": lambda title: diagrams.sector_diagram(title=title),
    "tile_diagram": lambda title: diagrams.tile_diagram(20, 13, 18, 8, title=title),
    "wave_diagram": lambda title: diagrams.wave_diagram([(4096, 4096, 4096)], title=title),
}


def test_every_public_diagram_is_checked_here() -> None:
    assert set(DRAW) == set(diagrams.__all__)


@pytest.mark.parametrize("name", sorted(DRAW))
@pytest.mark.parametrize("title", ["", "   ", None])
def test_a_figure_needs_a_title_for_its_alt_text(name, title) -> None:
    with pytest.raises(ValueError, match="title must be a sentence"):
        DRAW[name](title)


@pytest.mark.parametrize("name", sorted(DRAW))
def test_the_title_is_shown_whole(name) -> None:
    title = "A long title that says what the figure shows, " * 3
    fig = DRAW[name](title)
    assert " ".join(fig._suptitle.get_text().split()) == " ".join(title.split())


def test_bad_sizes_are_refused_by_the_execution_model() -> None:
    with pytest.raises(ValueError, match="threads_per_block"):
        diagrams.grid_hierarchy(1000, 2048, title=TITLE)
