"""Tutorial 17's RoPE tables in the tutorial pane, at 80×24, 120×40 and 200×50: every cell readable whole.
Drawn as tables, rich cut them to 'fre…' and '(1.…' in the 30- to 60-column pane; a table wider than the pane is
now a list, each row an item with its cells under their columns' names (explain.render.tables)."""

from __future__ import annotations

import pytest
from conftest import drive

from explain.tui.app import ExplainApp
from explain.tui.widgets.narration import NarrationPane
from explain.tutorial import load_tutorial, run_tutorial

CELLS = {3: ["pair (0, 2)", "frequency: 10000^0 = 1", "angle at p = 2: 2 rad", "before: (1.2, 0)", "pair (1, 3)",
             "frequency: 10000^(−1/2) = 0.01", "(1.5997, 0.0320)"],
         4: ["convention rotate-half", "who uses it: Hugging Face, this model", "convention interleaved",
             "(−1.9543, 0.4253, 0, 0)"]}


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_rope_tables_are_readable_in_the_tutorial_pane(size) -> None:
    tut = load_tutorial("17")
    app = ExplainApp(run_tutorial(tut), tutorial=tut)

    async def script(pilot):
        await pilot.press("n")  # the tutorial opens at stop 1
        for stop in (3, 4):
            await pilot.press("n")
            await pilot.pause()
            pane = app.screen.query_one(NarrationPane)
            assert f"stop {stop} of 7" in pane.text
            lines = [strip.text.rstrip() for strip in pane._lines]
            flat = " ".join(line.strip() for line in lines)
            assert not any("…" in line for line in lines), lines
            for cell in CELLS[stop]:
                assert cell in flat, (stop, cell, lines)
            assert all(len(line) <= pane.scrollable_content_region.width for line in lines)

    drive(app, script, size=size)
