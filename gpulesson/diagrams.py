"""Schematics of how a GPU runs a kernel, drawn with matplotlib: the grid of blocks of warps
of threads, a warp's load over 32-byte sectors, a shared-memory tile moving along K, and the
waves of a GEMM's tiles over the SMs.

Usage::

    import matplotlib.pyplot as plt
    from gpulesson import diagrams

    diagrams.grid_hierarchy(1000, 256, gpu="H100 SXM",
                            title="A grid of blocks, a block of warps, a warp of threads")
    plt.show()

Every number a figure shows comes from :mod:`gpulesson.execution` (blocks, warps, blocks
per SM, sectors, tiles, waves); this module only lays them out. Each function takes the
figure's ``title``, which the site also reads as the figure's alt text
(``scripts/gl_exercises.py``, ``figure_alt_texts``), so write it as a sentence that says
what the picture shows. Each returns the matplotlib ``Figure``; the shapes it draws carry
gids (``"lane:idle"``, ``"sector:touched"``, ...) so a test can count them. Nothing here is
random or picks a backend.

Taught in: ``inside_the_gpu``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.collections import LineCollection
from matplotlib.colors import ListedColormap
from matplotlib.patches import ConnectionPatch, Rectangle

from gpulesson import execution, hardware, units
from gpulesson.plotting import PALETTE, label_axes

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["grid_hierarchy", "sector_diagram", "tile_diagram", "wave_diagram"]

BLUE, ORANGE, GREEN, PINK = PALETTE[0], PALETTE[1], PALETTE[2], PALETTE[3]
IDLE = "#DDDDDD"
LIGHT = "#F6D5B8"  # a light orange: sectors that move
MAX_DRAWN_BLOCKS = 8


def _title(title: str) -> str:
    if not isinstance(title, str) or not title.strip():
        raise ValueError("title must be a sentence saying what the figure shows (it is the "
                         f"figure's alt text on the site), got {title!r}")
    return title


def _tuples(name: str, value: object, size: int, what: str) -> list[tuple]:
    """``value`` as a list of ``size``-tuples, or an error naming the argument."""
    items = [] if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) else \
        list(value)
    if not items or not all(isinstance(i, (tuple, list)) and len(i) == size for i in items):
        raise ValueError(f"{name} must hold at least one {what}, got {value!r}")
    return [tuple(i) for i in items]


def _suptitle(fig: Figure, title: str) -> None:
    """The title over the figure, wrapped to its width (about ten characters an inch)."""
    fig.suptitle(textwrap.fill(title, int(10 * fig.get_figwidth())), fontsize=11)


def _blank(ax: Axes, width: float, height: float) -> None:
    """An axes without axis for a schematic, filling its figure below the title."""
    ax.figure.subplots_adjust(left=0.01, right=0.99, bottom=0.01, top=0.9)
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.axis("off")


def _box(ax: Axes, x: float, y: float, w: float, h: float, *, color: str, gid: str,
         hatch: str | None = None, edge: str = "white", linewidth: float = 0.8
         ) -> Rectangle:
    patch = Rectangle((x, y), w, h, facecolor=color, edgecolor=edge, hatch=hatch,
                      linewidth=linewidth)
    patch.set_gid(gid)
    ax.add_patch(patch)
    return patch


def _label(ax: Axes, x: float, y: float, text: str, **kw) -> None:
    """A row's caption, on white so the zoom lines pass behind it."""
    ax.text(x, y, text, va="center", zorder=3, fontsize=kw.pop("fontsize", 9),
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.0}, **kw)


def _zoom(ax: Axes, source: tuple[float, float, float], target: tuple[float, float, float]
          ) -> None:
    """Two grey lines from a span (x0, x1, y) of one row to a span of the row below."""
    for a, b in ((source[0], target[0]), (source[1], target[1])):
        ax.add_artist(ConnectionPatch((a, source[2]), (b, target[2]), "data", "data",
                                      color="#999999", linewidth=0.7, linestyle="--",
                                      zorder=1))


# ---------------------------------------------------------------------------------------
# 1. Grid, blocks, warps, threads, and an SM


def grid_hierarchy(n: int, threads: int, *, gpu: str = "H100 SXM", title: str) -> Figure:
    """The launch of a 1-D kernel over ``n`` elements in blocks of ``threads``: the grid's
    blocks, the last block's warps, the warp holding the end of the data thread by thread
    (idle threads hatched: the bounds check turns them away), and the blocks one SM of
    ``gpu`` holds at once (:func:`execution.occupancy`, 32 registers a thread, no shared
    memory).
    """
    title = _title(title)
    spec = execution.gpu_execution(gpu)
    occ = execution.occupancy(threads, arch=spec.compute_capability)
    warp = spec.limits.warp_size
    blocks = execution.tiles(n, 1, tile_m=threads, tile_n=1)
    last = blocks - 1
    first_idle = n - last * threads            # threads of the last block that have data
    warps = occ.warps_per_block
    edge_warp = min((first_idle - 1) // warp, warps - 1)  # the warp that holds element n-1

    fig, ax = plt.subplots(figsize=(7.6, 5.8))
    _blank(ax, 100, 78)
    _suptitle(fig, title)

    # the grid: at most MAX_DRAWN_BLOCKS blocks, the last one always drawn
    drawn = sorted(set(range(min(blocks, MAX_DRAWN_BLOCKS - 1))) | {last})
    width = 100 / len(drawn)
    _label(ax, 0, 75, f"Grid: {blocks:,} blocks of {threads:,} threads for n = {n:,} "
           f"elements ({blocks * threads - n:,} threads idle)")
    y_grid = 64
    for j, b in enumerate(drawn):
        x = j * width
        if b == last:
            busy = width * first_idle / threads
            _box(ax, x, y_grid, busy, 7, color=BLUE, gid="block:busy")
            if first_idle < threads:
                _box(ax, x + busy, y_grid, width - busy, 7, color=IDLE, hatch="///",
                     gid="block:idle")
            last_x = x
        else:
            _box(ax, x, y_grid, width, 7, color=BLUE, gid="block:busy")
        label = f"block {b:,}" if b - 1 in drawn or b == 0 else f"… block {b:,}"
        ax.text(x + width / 2, y_grid + 3.5, label, color="white", ha="center", va="center",
                fontsize=8, fontweight="bold")

    # the last block's warps
    y_warps = 48
    wwidth = 100 / warps
    _label(ax, 0, 58, f"Block {last:,}: {warps} warps of {warp} threads")
    for w in range(warps):
        lo = w * warp                              # first thread of the warp in the block
        busy = max(0, min(warp, first_idle - lo))
        x = w * wwidth
        if busy:
            _box(ax, x, y_warps, wwidth * busy / warp, 6, color=GREEN, gid="warp:busy")
        if busy < warp:
            _box(ax, x + wwidth * busy / warp, y_warps, wwidth * (warp - busy) / warp, 6,
                 color=IDLE, hatch="///", gid="warp:idle")
        if warps <= 16:   # more warps than that leave no room for a label
            ax.text(x + wwidth / 2, y_warps + 3, f"warp {w}" if warps <= 8 else f"{w}",
                    ha="center", va="center", fontsize=7,
                    color="white" if 2 * busy >= warp else "black")
    _zoom(ax, (last_x, last_x + width, y_grid), (0, 100, y_warps + 6))

    # the warp at the end of the data, lane by lane
    y_lanes = 32
    lwidth = 100 / warp
    base = last * threads + edge_warp * warp       # global index i of lane 0
    _label(ax, 0, 42, f"Warp {edge_warp} of block {last:,}: lane t is element "
           f"i = {last:,} × {threads:,} + {edge_warp * warp} + t; "
           "the bounds check idles i ≥ n")
    for t in range(warp):
        busy = base + t < n
        _box(ax, t * lwidth, y_lanes, lwidth, 5, color=ORANGE if busy else IDLE,
             hatch=None if busy else "///", gid="lane:busy" if busy else "lane:idle")
    for t, align in ((0, "left"), (warp - 1, "right")):
        ax.text(t * lwidth + (lwidth if align == "right" else 0), y_lanes - 1,
                f"i = {base + t:,}", ha=align, va="top", fontsize=7)
    _zoom(ax, (edge_warp * wwidth, (edge_warp + 1) * wwidth, y_warps), (0, 100, y_lanes + 5))

    # one SM and the blocks resident on it, a row of at most eight blocks
    _label(ax, 0, 20, f"One SM of the {gpu} ({spec.sms} SMs): {occ.blocks_per_sm} blocks "
           f"resident, {occ.warps_per_sm} warps, {occ.warps_per_sm * warp:,} threads")
    _box(ax, 0, 0.5, 100, 15, color="white", edge="black", gid="sm")
    cols = min(occ.blocks_per_sm, 8)
    rows = -(-occ.blocks_per_sm // cols)
    cell_w, cell_h = 99 / cols, 14 / rows
    for b in range(occ.blocks_per_sm):
        bx, by = 0.5 + (b % cols) * cell_w, 1 + (rows - 1 - b // cols) * cell_h
        for w in range(warps):   # a block as a row of warp stripes
            _box(ax, bx + 0.4 + w * (cell_w - 0.8) / warps, by + 0.4, (cell_w - 0.8) / warps,
                 cell_h - 0.8, color=BLUE if w % 2 else GREEN, gid="sm:warp")
    return fig


# ---------------------------------------------------------------------------------------
# 2. A warp's load over 32-byte sectors


def sector_diagram(cases: Sequence[tuple[int, int]] = ((1, 0), (1, 1), (2, 0), (8, 0)), *,
                   element_bytes: int = 4, title: str) -> Figure:
    """One row per ``(stride, offset)`` case: the 32 threads of a warp (dots), the element
    each reads (a dark bar at its byte address) and the 32-byte sectors of memory, shaded
    where some thread's element falls (:func:`execution.warp_sectors`), so they move;
    the caption gives :func:`execution.coalescing`'s sectors, bytes and efficiency. All rows
    share one byte axis, so a wide stride is also a wide picture.
    """
    title = _title(title)
    rows = []
    for stride, offset in _tuples("cases", cases, 2, "(stride, offset) pair"):
        c = execution.coalescing(stride, element_bytes=element_bytes, offset_elements=offset)
        per_thread = execution.warp_sectors(stride, element_bytes=element_bytes,
                                            offset_elements=offset)
        rows.append((c, per_thread))
    sector = rows[0][0].sector_bytes
    span = sector * (1 + max(s for _, per in rows for t in per for s in t))  # bytes drawn

    fig, ax = plt.subplots(figsize=(7.6, 0.8 + 1.25 * len(rows)))
    height = 10 * len(rows)
    _blank(ax, span, height)
    ax.set_xlim(-0.01 * span, span * 1.01)
    _suptitle(fig, title)
    for r, (c, per_thread) in enumerate(rows):
        y = height - 10 * (r + 1)                  # bottom of this row's band
        touched = {s for t in per_thread for s in t}
        for s in range(span // sector):
            moved = s in touched
            _box(ax, s * sector, y + 1, sector, 2.4, color=LIGHT if moved else "white",
                 edge="none", gid="sector:touched" if moved else "sector:untouched")
        starts = [(c.offset_elements + t * c.stride) * c.element_bytes
                  for t in range(c.threads)]
        for x in starts:
            _box(ax, x, y + 1, c.element_bytes, 2.4, color=BLUE, edge="white",
                 gid="element", linewidth=0.2)
        ax.vlines(range(0, span + 1, sector), y + 1, y + 3.4, colors="#555555",
                  linewidths=0.8, zorder=2)   # the sector boundaries, over the elements
        ax.hlines([y + 1, y + 3.4], 0, span, colors="#555555", linewidths=0.8, zorder=2)
        lanes = [(t + 0.5) * span / c.threads for t in range(c.threads)]
        ax.add_collection(LineCollection(
            [[(lane, y + 6.2), (x + c.element_bytes / 2, y + 3.4)]
             for lane, x in zip(lanes, starts, strict=True)],
            colors="#777777", linewidths=0.5))
        ax.plot(lanes, [y + 6.2] * len(lanes), "o", color=GREEN, markersize=3, zorder=3,
                gid="lane")
        kind = "consecutive" if c.stride == 1 else f"stride {c.stride}"
        where = "aligned" if c.offset_elements == 0 else \
            f"shifted by {c.offset_elements} element{'s' * (c.offset_elements > 1)}"
        _label(ax, 0, y + 8.3,
               f"{kind}, {where}: {c.sectors} sectors, "
               f"{c.bytes_moved:,} bytes moved for {c.useful_bytes:,} bytes asked, "
               f"{100 * c.efficiency:.3g} % efficiency", fontsize=8.5)
    ax.text(span, -0.5, f"byte address → (one box = a {sector}-byte sector; "
            f"dots: the warp's {rows[0][0].threads} threads)", ha="right", va="top",
            fontsize=8)
    return fig


# ---------------------------------------------------------------------------------------
# 3. A shared-memory tile moving along K

STEP_COLOURS = (PALETTE[0], PALETTE[1], PALETTE[2], PALETTE[4], PALETTE[3], PALETTE[5])


def _matrix(ax: Axes, x: float, y: float, rows: int, cols: int, tile: int, name: str
            ) -> list[tuple[float, float, float, float]]:
    """A ``rows × cols`` matrix at (x, y) (y grows downwards) and its tile grid, dashed;
    returns the tiles' overhang past its edges, (x, y, width, height) boxes, to hatch."""
    padded_r, padded_c = -(-rows // tile) * tile, -(-cols // tile) * tile
    overhang = [(ox, oy, w, h) for ox, oy, w, h in ((x + cols, y, padded_c - cols, padded_r),
                                                    (x, y + rows, cols, padded_r - rows))
                if w and h]
    _box(ax, x, y, cols, rows, color="#F2F2F2", edge="black", gid=f"matrix:{name}")
    ax.vlines([x + c for c in range(tile, padded_c, tile)], y, y + padded_r,
              colors="#888888", linestyles="--", linewidths=0.7, zorder=2)
    ax.hlines([y + r for r in range(tile, padded_r, tile)], x, x + padded_c,
              colors="#888888", linestyles="--", linewidths=0.7, zorder=2)
    return overhang


def tile_diagram(m: int, k: int, n: int, tile: int, *, block: tuple[int, int] = (0, 0),
                 title: str) -> Figure:
    """A tiled ``m × k`` by ``k × n`` product (the lesson's ``matmul_tiled``): B above C, A
    to its left, the tile grid dashed, the overhang past the edges hatched. One block's
    tile of C (``block`` = (row, column) in the grid of blocks) stays put while its row of
    A-tiles and column of B-tiles pass through shared memory one pair per step along K,
    each pair in its own colour. Grid and steps are :func:`execution.tiles` counts.
    """
    title = _title(title)
    grid_rows = execution.tiles(m, 1, tile_m=tile, tile_n=1)
    grid_cols = execution.tiles(n, 1, tile_m=tile, tile_n=1)
    steps = execution.tiles(k, 1, tile_m=tile, tile_n=1)
    if not (isinstance(block, (tuple, list)) and len(block) == 2
            and all(isinstance(b, int) and not isinstance(b, bool) for b in block)
            and 0 <= block[0] < grid_rows and 0 <= block[1] < grid_cols):
        raise ValueError(f"block must be (row, column) in the {grid_rows} × {grid_cols} grid "
                         f"of blocks, got {block!r}")
    bi, bj = block
    if steps > len(STEP_COLOURS):
        raise ValueError(f"k must take at most {len(STEP_COLOURS)} steps of the tile "
                         f"({len(STEP_COLOURS) * tile} for a tile of {tile}), got {k}")
    gap = max(2.0, tile / 2)
    pk = steps * tile
    width, height = pk + gap + grid_cols * tile, pk + gap + grid_rows * tile
    fig, ax = plt.subplots(figsize=(6.4, 6.4 * height / (width + 10)))
    _blank(ax, width + 10, height)
    ax.set_xlim(-1, width + 10)
    ax.set_ylim(height + 1, -1)                 # rows grow downwards, as in a matrix
    ax.set_aspect("equal")
    _suptitle(fig, title)

    cx, cy = pk + gap, pk + gap                 # the corner of C (and of A's rows, B's cols)
    overhang = (_matrix(ax, cx, 0, k, n, tile, "B") + _matrix(ax, 0, cy, m, k, tile, "A")
                + _matrix(ax, cx, cy, m, n, tile, "C"))
    ax.text(cx - 0.5, k / 2, f"B ({k} × {n})", ha="right", va="center", fontsize=9)
    ax.text(k / 2, cy - 0.5, f"A ({m} × {k})", ha="center", va="bottom", fontsize=9)
    ax.text(cx + grid_cols * tile + 0.8, cy + m / 2, f"C ({m} × {n})", ha="left",
            va="center", fontsize=9)

    for t in range(steps):
        colour = STEP_COLOURS[t]
        for x, y, gid in ((t * tile, cy + bi * tile, "tile:A"),
                          (cx + bj * tile, t * tile, "tile:B")):
            _box(ax, x, y, tile, tile, color=colour, edge="black", gid=gid)
            ax.text(x + tile / 2, y + tile / 2, f"step {t}", color="white", ha="center",
                    va="center", fontsize=8, fontweight="bold", zorder=4)
    _box(ax, cx + bj * tile, cy + bi * tile, tile, tile, color="black", edge="black",
         gid="tile:C")
    ax.text(cx + (bj + 0.5) * tile, cy + (bi + 0.5) * tile, f"block\n({bi}, {bj})",
            color="white", ha="center", va="center", fontsize=8, zorder=4)
    for x, y, w, h in overhang:   # hatched over the tiles too: those elements are zeros
        patch = Rectangle((x, y), w, h, facecolor="none", edgecolor="#999999", hatch="///",
                          linewidth=0.5, zorder=3)
        patch.set_gid("overhang")
        ax.add_patch(patch)

    notes = (f"A grid of {grid_rows} × {grid_cols} blocks of {tile} × {tile} threads, one "
             f"per tile of C. Block ({bi}, {bj}) takes {steps} steps along K:",
             "at each, its threads copy one tile of A and one of B (one colour) into shared "
             "memory,",
             f"wait at a barrier, multiply, and wait again. Every number copied is used "
             f"{tile} times.",
             "Hatched: past the matrix's edge, loaded as zeros.")
    ax.text(-1, height + 1.2, "\n".join(notes), ha="left", va="top", fontsize=8)
    return fig


# ---------------------------------------------------------------------------------------
# 4. Waves of tiles over the SMs


def wave_diagram(shapes: Sequence[tuple[int, int, int]], *, gpu: str = "H100 SXM",
                 tile_m: int = 256, tile_n: int = 128, dtype: str = "bf16",
                 title: str) -> Figure:
    """One panel per GEMM shape ``(m, n, k)``: a row per wave, a cell per SM, filled where
    the wave gives that SM a tile (:func:`execution.gemm_waves`), so a last, partial wave
    shows as a short row; the caption adds the predicted time of
    :func:`execution.gemm_time` at the GPU's dense peak in ``dtype``. The panels share
    their scale: one more row of waves is one more row of the picture.
    """
    title = _title(title)
    shapes = _tuples("shapes", shapes, 3, "(m, n, k) GEMM")
    spec = execution.gpu_execution(gpu)
    peak = hardware.gpu(gpu).dense(dtype)
    layouts = [execution.gemm_waves(m, n, sms=spec.sms, tile_m=tile_m, tile_n=tile_n)
               for m, n, _ in shapes]
    most = max(g.waves for g in layouts)
    fig, axes = plt.subplots(len(shapes), 1, figsize=(7.6, 0.9 + (0.3 * most + 0.9)
                                                      * len(shapes)), squeeze=False)
    _suptitle(fig, title)
    cmap = ListedColormap([IDLE, BLUE])
    for ax, (m, n, k), g in zip(axes[:, 0], shapes, layouts, strict=True):
        filled = np.full((most, g.wave_size), np.nan)   # no wave at all: nothing drawn
        filled[:g.waves] = 0                      # an SM this wave leaves idle
        filled.flat[:g.tiles] = 1                 # tile i runs in wave i // wave_size
        mesh = ax.pcolormesh(np.arange(g.wave_size + 1), np.arange(most + 1),
                             np.ma.masked_invalid(filled),
                             cmap=cmap, vmin=0, vmax=1, edgecolors="white", linewidth=0.3)
        mesh.set_gid(f"waves:{m}x{n}x{k}")
        ax.set_ylim(most, 0)                      # wave 1 on top: time runs down
        ax.set_yticks([w + 0.5 for w in range(g.waves)], [str(w + 1) for w in range(g.waves)])
        ax.grid(False)
        seconds = execution.gemm_time(m, n, k, peak_flops=peak, sms=spec.sms, tile_m=tile_m,
                                      tile_n=tile_n)
        ax.set_title(f"{m:,} × {n:,} × {k:,}: {g.tiles:,} tiles, {g.waves} waves, the last "
                     f"holding {g.last_wave_tiles}; {100 * g.efficiency:.1f} % useful, "
                     f"predicted {units.format_seconds(seconds)}", fontsize=8.5, loc="left")
        label_axes(ax, f"SM of the {gpu} ({spec.sms}); a wave gives each SM one "
                   f"{tile_m} × {tile_n} tile", "Wave")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.legend(handles=[Rectangle((0, 0), 1, 1, color=BLUE, label="an SM with a tile"),
                        Rectangle((0, 0), 1, 1, color=IDLE, label="an idle SM")],
               loc="lower center", ncol=2, fontsize=8)
    return fig
