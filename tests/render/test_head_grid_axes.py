"""The heads grid (``m``, issue 42 item 12): rows are max-pooled only when the height is short, and the tiles
have words on their axes (the keys' words under the head ruler, each layer's queries right of its tiles). On the
render layer; both fail on the old code (a 30-query pattern at 120×40 was pooled to 26 rows while 30 fitted;
draw_grid took no words)."""

from __future__ import annotations

import numpy as np

from explain.render.head_grid import draw_grid, geometry, pool


def test_rows_are_pooled_only_when_the_height_is_short():
    # 4 heads of 30 tokens in 2 layers at about 120x40: the tile is 26 columns wide, and 15 text rows a layer fit
    geo = geometry(2, 4, 30, 103, 34)
    assert geo.tile_w < 30 and geo.pool_shape(30) == (30, geo.tile_w)  # keys pooled to the width, queries whole
    assert geo.layers_per_page == 2  # and both layers still on one page
    short = geometry(12, 4, 30, 103, 34)  # 12 layers in the same height: a layer's rows must pool
    assert short.pool_shape(30)[0] < 30 and short.layers_per_page == 12
    square = geometry(1, 1, 4, 40, 30)  # a short pattern keeps its square picture (each query several rows)
    assert square.tile_h >= square.tile_w // 2


def test_the_axes_carry_the_words():
    words = ["the", "cat", "sat", "on", "the", "mat"]
    heads = np.tril(np.ones((2, 6, 6)))
    heads /= heads.sum(-1, keepdims=True)
    geo = geometry(1, 2, 6, 60, 12)
    pooled = pool(heads, *geo.pool_shape(6))
    grid = draw_grid({(0, 0): pooled[0], (0, 1): pooled[1]}, [0], [0, 1], geo, 6, selected=(0, 0),
                     cursor=None, words={0: (words, words)}).plain.splitlines()
    keys = grid[1]
    assert keys.startswith("keys")
    for h in (0, 1):  # each key's word starts at its own column in each tile
        left = 5 + 1 + h * (geo.tile_w + 1)
        sx = geo.tile_w // 6
        assert sx >= 4 and [keys[left + k * sx:left + k * sx + 3].strip() for k in range(6)] == words
    queries = [ln[5 + 2 * (geo.tile_w + 1) + 1:].strip() for ln in grid[2:]]
    shown = [w for q in queries for w in q.split("/") if w]  # a row below the last query is blank
    assert list(dict.fromkeys(shown)) == ["the", "cat", "sat", "on", "mat"] and len(queries) == geo.tile_h
