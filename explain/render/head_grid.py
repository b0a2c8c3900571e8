"""The layer × head grid of attention patterns (BertViz's model view, drawn in text): every head of every layer
as a small heatmap, two pattern rows to a character (``▀``: the upper half's colour in front, the lower's
behind), on the step screen's colour scale, the step screen's cell marked ``+`` in every tile.

A pattern longer than its tile is max-pooled (:func:`pool`): each drawn cell is the largest weight of a block
of queries × keys, so no strong weight disappears in the drawing; a short one is drawn with each key several
columns wide. A block whose every weight is 0 (masked: a score of −inf) is grey, as the step screen's masked
cells. :func:`geometry` fits tiles to a width and height and says how many layers and heads a page holds."""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import Any

from rich.style import Style
from rich.text import Text

from explain.render.colour import MASKED_STYLE, Scale

MIN_TILE_W = 3  # a tile narrower than this is no picture: the heads are paged instead
MIN_TILE_H = 2  # text rows (four pattern rows)
LABEL_W = 5  # "D11x ": the row label left of each row of tiles


@dataclass(frozen=True)
class Pooled:
    """A pattern drawn at ``values.shape``: ``row_edges``/``col_edges`` are the first query/key of each drawn
    row/column (the last edge is the pattern's length), so a block is ``edges[i]:edges[i + 1]``."""

    values: Any
    row_edges: tuple[int, ...]
    col_edges: tuple[int, ...]

    @property
    def block(self) -> tuple[int, int]:
        """The largest block a drawn cell stands for: (queries, keys); (1, 1) when nothing is pooled."""
        return (max(b - a for a, b in zip(self.row_edges, self.row_edges[1:])),
                max(b - a for a, b in zip(self.col_edges, self.col_edges[1:])))

    def at(self, q: int, k: int) -> tuple[int, int]:
        """The drawn cell that holds query ``q``, key ``k``."""
        return bisect.bisect_right(self.row_edges, q) - 1, bisect.bisect_right(self.col_edges, k) - 1


def _edges(n: int, parts: int) -> tuple[int, ...]:
    """``parts`` + 1 edges splitting ``n`` into nearly equal blocks (each index its own block when n ≤ parts)."""
    if n <= parts:
        return tuple(range(n + 1))
    return tuple(round(i * n / parts) for i in range(parts + 1))


def pool(heads: Any, rows: int, cols: int) -> list[Pooled]:
    """Every head of ``heads`` (H, T_q, T_k) max-pooled to at most ``rows`` × ``cols``. The rows are reduced
    block by block along the query axis (a contiguous max, numpy's fast path: 20 ms for 12 heads of 1,024
    tokens, where ``np.maximum.reduceat`` takes 120 ms), then the columns with ``reduceat`` on what is left."""
    import numpy as np  # lazy: numpy off the shape path

    heads = np.asarray(heads)
    re, ce = _edges(heads.shape[-2], rows), _edges(heads.shape[-1], cols)
    if len(re) - 1 < heads.shape[-2]:
        heads = np.stack([heads[:, a:b, :].max(axis=1) for a, b in zip(re, re[1:])], axis=1)
    if len(ce) - 1 < heads.shape[-1]:
        heads = np.maximum.reduceat(heads, list(ce[:-1]), axis=-1)
    return [Pooled(h, re, ce) for h in heads]


@dataclass(frozen=True)
class Geometry:
    """How the grid is drawn: each tile ``tile_w`` columns by ``tile_h`` text rows (two pattern rows each),
    ``gap`` blank rows between rows of tiles, and how many layers and heads one page shows."""

    tile_w: int
    tile_h: int
    gap: int
    layers_per_page: int
    heads_per_page: int

    def pool_shape(self, n: int) -> tuple[int, int]:
        """The drawn size of an n × n pattern: its own size when it fits, else the tile's."""
        return min(n, 2 * self.tile_h), min(n, self.tile_w)


def geometry(n_layers: int, n_heads: int, n: int, width: int, height: int) -> Geometry:
    """Tiles as large as ``width`` × ``height`` (the grid's own area, the head ruler included) allow for every
    head and every layer; when they would be smaller than :data:`MIN_TILE_W` × :data:`MIN_TILE_H`, fewer
    heads or layers a page. A short pattern's tile is no bigger than it needs; a tile is as tall as a square
    picture, or taller where that draws every query unpooled (rows are pooled only when the height is short)."""
    heads_per_page = max(1, min(n_heads, (width - LABEL_W) // (MIN_TILE_W + 1)))
    avail = (width - LABEL_W) // heads_per_page - 1
    tile_w = max(MIN_TILE_W, n * min(avail // n, 4) if n <= avail else avail)  # a short pattern: keys ×1–4 wide
    rows = height - 1  # the head ruler
    per_layer = rows // n_layers if n_layers else rows
    gap = 1 if per_layer >= MIN_TILE_H + 2 else 0
    want_h = max(math.ceil(tile_w / 2), math.ceil(n / 2))  # square, or every query when the height has room
    tile_h = max(MIN_TILE_H, min(want_h, per_layer - gap))
    layers_per_page = max(1, min(n_layers, (rows + gap) // (tile_h + gap)))
    return Geometry(tile_w, tile_h, gap, layers_per_page, heads_per_page)


_STYLES: dict[tuple[str, str], Style] = {}


def _style(fg: str, bg: str) -> Style:
    key = (fg, bg)
    if key not in _STYLES:
        _STYLES[key] = Style.parse(f"{fg} on {bg}")
    return _STYLES[key]


MASKED_BG = MASKED_STYLE.split(" on ")[-1]


def _colour(v: float, scale: Scale) -> str:
    return MASKED_BG if v == 0.0 and scale.lo >= 0 else scale.palette[scale.bin(v)]


def tile_lines(p: Pooled | None, geo: Geometry, n: int, scale_mode: str, cursor: tuple[int, int] | None) -> list[Text]:
    """One tile's ``geo.tile_h`` lines of ``geo.tile_w`` cells (a pattern not yet pooled: dim dots)."""
    w, h = geo.tile_w, geo.tile_h
    if p is None:
        return [Text("·" * w, style="dim") for _ in range(h)]
    vals = p.values
    rows, cols = vals.shape
    sx, sy = max(1, w // cols), max(1, (2 * h) // rows)  # a short pattern: each key sx columns, each query sy rows
    scale = Scale(0.0, 1.0, False)
    if scale_mode == "slice":
        scale = Scale(float(vals.min()), float(vals.max()), False)
    cur = p.at(*cursor) if cursor is not None else None
    out = []
    for line in range(h):
        runs: list[list] = []  # [characters, style]: a run of one style is one span (Textual styles spans, not cells)

        def put(ch: str, style: Style | None, runs: list[list] = runs) -> None:
            if runs and runs[-1][1] is style:
                runs[-1][0] += ch
            else:
                runs.append([ch, style])
        for x in range(w):
            c = x // sx
            cells = []
            for half in (0, 1):
                r = (2 * line + half) // sy
                if r >= rows or c >= cols:
                    cells.append(None)
                    continue
                s = scale
                if scale_mode == "row":
                    s = Scale(float(vals[r].min()), float(vals[r].max()), False)
                cells.append((r, _colour(float(vals[r, c]), s)))
            top, bottom = cells
            if top is None and bottom is None:
                put(" ", None)
                continue
            fg = top[1] if top else "default"
            bg = bottom[1] if bottom else "default"
            marked = (cur is not None and c == cur[1] and x % sx == 0 and line == (cur[0] * sy) // 2)  # one mark
            if marked:  # the step screen's cell, in every tile: a + on the colour of its block
                mark_bg = top[1] if top and top[0] == cur[0] else bg
                put("+", _style("bold #ffffff", mark_bg))
            elif top is None:
                put("▄", _style(bg, "default"))
            else:
                put("▀", _style(fg, bg))
        text = Text(no_wrap=True, overflow="crop")
        for chars, style in runs:
            text.append(chars, style)
        out.append(text)
    return out


def key_axis(p: Pooled, words: list[str], width: int) -> str:
    """The keys' words under a tile's columns, each starting at its key's first column; a word that would run
    into the one before is left out (as a ruler's tick labels), the last cut at the tile's edge."""
    sx = max(1, width // (len(p.col_edges) - 1))
    out, free = [" "] * width, 0
    for c, k in enumerate(p.col_edges[:-1]):
        x = c * sx
        if x >= free and k < len(words) and x < width:
            word = words[k][: width - x]
            out[x:x + len(word)] = word
            free = x + len(word) + 1
    return "".join(out)


def query_axis(p: Pooled, words: list[str], tile_h: int) -> list[str]:
    """The queries' words beside a tile's text rows: each text row draws two pattern rows (``▀`` the upper),
    so it names the query of each (``the/cat``), one word when both halves are one query."""
    rows = len(p.row_edges) - 1
    sy = max(1, (2 * tile_h) // rows)
    out = []
    for line in range(tile_h):
        qs = dict.fromkeys(p.row_edges[r] for r in ((2 * line) // sy, (2 * line + 1) // sy) if r < rows)
        out.append("/".join(words[q] for q in qs if q < len(words)))
    return out


def draw_grid(tiles: dict[tuple[int, int], Pooled | None], layers: list[int], heads: list[int], geo: Geometry,
              n: int, *, selected: tuple[int, int], cursor: tuple[int, int] | None, scale_mode: str = "fixed",
              kv: dict[int, int] | None = None, labels: dict[int, str] | None = None,
              words: dict[int, tuple[list[str], list[str]]] | None = None) -> Text:
    """A page of the grid: a ruler of head numbers (and, for grouped-query attention, the key/value head each
    query head shares, ``kv``), then one row of tiles per layer, labelled ``L3``; the ``selected`` (layer,
    head) tile has its labels reversed and a bar either side. ``labels``: each layer's (``L3`` by default).
    ``words``: each layer's (query words, key words): the selected layer's keys are a ruler under the heads',
    and each layer's queries stand right of its last tile."""
    out = Text(no_wrap=True, overflow="crop")

    def ruler(label: str, texts: dict[int, str]) -> None:
        out.append(label.ljust(LABEL_W), "dim")
        for h in heads:
            cell = texts[h][:geo.tile_w].center(geo.tile_w)
            out.append(" ")
            out.append(cell, "bold reverse" if h == selected[1] else "bold")
        out.append("\n")

    ruler("", {h: f"h{h}" if geo.tile_w >= 3 else str(h) for h in heads})
    if kv:
        ruler("kv", {h: f"kv{kv[h]}" if geo.tile_w >= 4 else str(kv[h]) for h in heads})
    mine = (words or {}).get(selected[0])
    if mine:
        tile = next((t for h in heads if (t := tiles.get((selected[0], h)))), None)
        axis = key_axis(tile, mine[1], geo.tile_w) if tile else ""
        out.append("keys".ljust(LABEL_W), "dim")
        out.append("".join(" " + axis for _ in heads).rstrip() + "\n", "cyan")
    for li, layer in enumerate(layers):
        lines = {h: tile_lines(tiles.get((layer, h)), geo, n, scale_mode, cursor) for h in heads}
        first = next((t for h in heads if (t := tiles.get((layer, h)))), None)
        queries = query_axis(first, words[layer][0], geo.tile_h) if first and words and layer in words else []
        for row in range(geo.tile_h):
            label = ((labels or {}).get(layer, f"L{layer}") if row == 0 else "")[:LABEL_W - 1]
            out.append(label.ljust(LABEL_W), "bold reverse" if layer == selected[0] and row == 0 else "bold")
            for h in heads:
                chosen = (layer, h) == selected
                prev_chosen = (layer, heads[heads.index(h) - 1]) == selected if heads.index(h) else False
                out.append("▌" if chosen else ("▐" if prev_chosen else " "), "bold yellow")
                out.append_text(lines[h][row])
            out.append("▐" if (layer, heads[-1]) == selected else " ", "bold yellow")
            if row < len(queries):
                out.append(queries[row], "cyan")
            out.append("\n")
        if geo.gap and li < len(layers) - 1:
            out.append("\n" * geo.gap)
    out.rstrip()
    return out
