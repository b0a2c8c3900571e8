"""Tutorials 22 ("From text to ids") and 23 ("Attention without the matrix") read at 80x24, 120x40 and 200x50: every
stop opens on its step with its narration, and the last stop's drill-down gives the exact value (1.2699)."""

from __future__ import annotations

import pytest
from conftest import drive, region_lines

from explain.tui.app import ExplainApp
from explain.tui.widgets.narration import NarrationPane
from explain.tutorial import load_tutorial, run_tutorial

SIZES = [(80, 24), (120, 40), (200, 50)]


@pytest.fixture(scope="module")
def tutorials():
    return {n: (t, run_tutorial(t)) for n, t in ((n, load_tutorial(n)) for n in ("22", "23"))}


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("name", ["22", "23"])
def test_every_stop_reads(tutorials, name, size) -> None:
    tut, trace = tutorials[name]
    app = ExplainApp(trace, tutorial=tut)
    seen: list[tuple[str, str, str]] = []

    async def script(pilot):
        for k in range(len(tut.stops)):
            if k:
                await pilot.press("n")
            await pilot.pause()
            pane = pilot.app.screen.query_one(NarrationPane)
            screen = " ".join(" ".join(region_lines(pilot.app, pilot.app.screen.region)).split())
            seen.append((pilot.app.screen.view.step.name, pane.text, screen))

    drive(app, script, size=size)
    assert [s for s, _, _ in seen] == [stop.step for stop in tut.stops]
    for k, (stop, (_, text, screen)) in enumerate(zip(tut.stops, seen)):
        assert f"stop {k + 1} of {len(tut.stops)}" in text and stop.title in text, (k, text[:200])
        assert stop.step in screen  # the step's header is on screen
    if name == "23":
        assert "1.2699" in seen[-1][2]  # Z[0, 0], the stop's cell, in its drill-down
        if size != (80, 24):  # 80x24 shows it after d (the drill-down scrolls)
            assert "plain: 1.269872937345666" in seen[-1][2]  # beside it, the plain kernel's value of the cell
