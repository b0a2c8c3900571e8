"""Issue 42 item 7: at 80×24 the logit lens's table scrolled so its first scrolling column was cut mid-word
('ey 0.85' for '2 journey'); it now scrolls by whole columns, to the far end. Pilot at 80×24, 120×40, 200×50 on a
12-token trained GPT run, the cursor walked right to the last position and back."""

from __future__ import annotations

import pytest
from conftest import _until, drive

import explain
from explain.tui.app import ExplainApp

SIZES = [(80, 24), (120, 40), (200, 50)]
TEXT = "fox letter journey happy were mat fox letter journey happy were mat"


@pytest.fixture(scope="module")
def run12():
    return explain.run("gpt", trained=True, text=TEXT)


def _starts(table) -> list[int]:
    """Where each column after the fixed label column starts, by the columns' own widths."""
    x, out = 0, []
    for column in table.ordered_columns[table.fixed_columns:]:
        out.append(x)
        x += column.get_render_width(table)
    return out


@pytest.mark.parametrize("size", SIZES)
def test_item7_the_lens_scrolls_by_whole_columns(run12, size):
    from textual.widgets import DataTable

    app = ExplainApp(run12)

    async def script(pilot):
        await pilot.press("y")
        await _until(pilot, lambda: type(app.screen).__name__ == "LensScreen" and bool(app.screen.query(DataTable)),
                     tries=500)
        table = app.screen.query_one(DataTable)
        await _until(pilot, lambda: table.row_count > 0)
        seen = set()
        for key in ["right"] * 12 + ["left"] * 12:
            await pilot.press(key)
            await pilot.pause()
            seen.add(round(table.scroll_x))
            assert round(table.scroll_x) in _starts(table), (key, table.scroll_x, _starts(table))
        if size == (80, 24):
            assert len(seen) > 1  # it did scroll: twelve positions do not fit 80 columns

    drive(app, script, size=size)
