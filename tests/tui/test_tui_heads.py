"""One layer's heads (``m`` then ``z``: the grid's zoom) at GPT-2 small's 12 heads: 4 tiles a row at 120 columns, each with every key column
and a one-line title; the head the step view shows is marked; the arrows choose a head and Enter opens it in
the step view; n/p page through the layers' patterns."""

from __future__ import annotations

from conftest import drive, text_of

import explain
from explain.tui.app import ExplainApp
from explain.tui.screens.layer_heads import LayerHeadsScreen, tiles_per_row
from explain.tui.widgets.pattern_tile import PatternTile

TRACE = None


def twelve_heads():
    global TRACE
    if TRACE is None:  # GPT-2 small's head count and a short text; small widths keep the test fast
        TRACE = explain.run("gpt", d_model=48, n_heads=12, n_layers=2, text="The cat is happy")
    return TRACE


def test_twelve_heads_fit_whole_at_120_columns():
    app = ExplainApp(twelve_heads())

    async def script(pilot):
        await pilot.press("m")
        await pilot.pause()
        await pilot.press("z")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, LayerHeadsScreen) and screen._per_row == 4
        tiles = list(screen.query(PatternTile))
        assert [t.head for t in tiles] == list(range(12))
        for tile in tiles:
            lines = text_of(tile, width=tile.content_size.width).splitlines()
            assert "…" not in "\n".join(lines)  # every key column, every query row
            assert lines[1].split() == ["0", "1", "2", "3"] and len(lines) == 2 + 4
            assert lines[0].strip().startswith(("▶ head", "head")) and "of" not in lines[0]  # one short line
            assert tile.region.width >= tile.needed_width()  # drawn as wide as it needs
        assert "shown" in text_of(tiles[0]) and "▶" in text_of(tiles[0])  # the step view's head, chosen first

    drive(app, script, size=(120, 40))


def test_arrows_choose_a_head_enter_opens_it_and_n_pages_layers():
    app = ExplainApp(twelve_heads())

    async def script(pilot):
        await pilot.press("m")
        await pilot.pause()
        await pilot.press("z")
        await pilot.pause()
        await pilot.press("n")  # the next layer's pattern
        await pilot.pause()
        assert app.screen.pattern.step.name == "blocks.1.attn.pattern"
        await pilot.press("down", "right", "right")  # a row down is 4 heads on: head 6
        await pilot.pause()
        assert app.screen.selected == 6
        await pilot.press("enter")
        await pilot.pause()
        view = app.screen.view
        assert view.step.name == "blocks.1.attn.pattern" and view.lead == (0, 6)

    drive(app, script, size=(120, 40))


def test_tiles_per_row_counts_the_gaps():
    assert tiles_per_row(12, 28, 115) == 4 and tiles_per_row(12, 28, 114) == 3
    assert tiles_per_row(2, 28, 500) == 2 and tiles_per_row(12, 300, 80) == 1
