"""Issue 42 item 12: below 80×24 a tutorial's narration has no room, and with it went 'stop 1 of 4': the student
no longer knew where in the tutorial they were. The step header now says it when the narration cannot. Pilot at
70×20 and 60×20 (header), and at 80×24, 120×40, 200×50 (the narration says it; the header does not repeat it)."""

from __future__ import annotations

import pytest
from conftest import _until, drive, text_of

from explain.tui.app import ExplainApp
from explain.tui.widgets.narration import NarrationPane
from explain.tui.widgets.step_info import StepInfo
from explain.tutorial import load_tutorial, run_tutorial


@pytest.fixture(scope="module")
def lens18():
    tut = load_tutorial("18-the-logit-lens")
    return tut, run_tutorial(tut)


@pytest.mark.parametrize("size", [(70, 20), (60, 20)])
def test_a_small_terminal_keeps_the_stop(lens18, size):
    tut, trace = lens18
    app = ExplainApp(trace, tutorial=tut)

    async def script(pilot):
        await pilot.pause()
        info = text_of(app.screen.query_one(StepInfo), width=size[0])
        assert "stop 1 of 5" in info or "stop 1/5" in info, info
        await pilot.press("n")
        await _until(pilot, lambda: app.screen.tour.stop == 1)
        await pilot.pause()
        info = text_of(app.screen.query_one(StepInfo), width=size[0])
        assert "stop 2 of 5" in info or "stop 2/5" in info, info

    drive(app, script, size=size)


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)])
def test_the_narration_says_the_stop_where_it_shows(lens18, size):
    tut, trace = lens18
    app = ExplainApp(trace, tutorial=tut)

    async def script(pilot):
        await pilot.pause()
        assert app.screen.query_one(NarrationPane).region.width
        assert "stop 1 of 5" in app.screen.query_one(NarrationPane).text
        assert "stop 1" not in text_of(app.screen.query_one(StepInfo), width=size[0])

    drive(app, script, size=size)
