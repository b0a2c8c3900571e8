"""Issue 42 item 12: the patching heatmap had no legend and drew −0.03 as white as 0 (a fixed −1…1 scale). It now
says what its colours mean, and any cell printed as non-zero is tinted. Pilot at 80×24, 120×40, 200×50."""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import _until, drive

from explain.interp import sweep
from explain.tui.app import App
from explain.tui.screens.interp_grid import heat
from explain.tui.screens.sweep import SweepScreen

SIZES = [(80, 24), (120, 40), (200, 50)]


@pytest.fixture(scope="module")
def small_negative():
    s = sweep("gpt", "The cat is happy", "The dog is happy", "happy", "hungry", "resid", trained=True)
    recovered = s.recovered.copy()
    recovered[1, 0] = -0.03  # as a sweep of a larger model gives: a small step the wrong way
    return replace(s, recovered=recovered)


@pytest.mark.parametrize("size", SIZES)
def test_the_heatmap_has_a_legend_and_tints_small_values(small_negative, size):
    app = App()

    async def script(pilot):
        screen = SweepScreen(small_negative)
        await app.push_screen(screen)
        await _until(pilot, lambda: screen.query("#grid-title"))
        title = str(screen.query_one("#grid-title").render())
        assert "colour:" in title and "-1" in title and "+1" in title and "Esc closes" in title, title
        white = heat(0.0, diverging=True)
        for r, (_, cells) in enumerate(screen.rows()):
            for c, cell in enumerate(cells):
                assert (str(cell.style) == white) == (cell.plain == "0.00"), (r, c, cell.plain, cell.style)
        assert screen.rows()[1][1][0].plain == "-0.03"

    drive(app, script, size=size)
