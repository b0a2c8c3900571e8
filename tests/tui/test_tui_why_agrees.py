"""Issue 42: the "why" screens agree with what they say, and words stand where the run has them. Each test was a
defect seen on a real terminal (the issue's item number in its name); screens are pinned at 80×24, 120×40 and
200×50 with Pilot."""

from __future__ import annotations

import pytest
from conftest import _until, drive, text_of

from explain.tui.app import ExplainApp
from explain.tui.widgets.predictions import PredictionsPane
from explain.tutorial import load_tutorial, run_tutorial

SIZES = [(80, 24), (120, 40), (200, 50)]


@pytest.fixture(scope="module")
def lens_tutorial():
    tut = load_tutorial("18-the-logit-lens")
    return tut, run_tutorial(tut)


@pytest.mark.parametrize("size", SIZES)
def test_item1_a_lens_stop_predicts_with_its_own_read(lens_tutorial, size):
    # tutorial 18, stop 3 (after block 0's attention): the narration says mat has p 0.0105 and the top word is
    # <bos> at 0.34; the predictions pane showed the model's final 'mat 0.9404' beside it
    tut, trace = lens_tutorial
    app = ExplainApp(trace, tutorial=tut)

    async def script(pilot):
        await pilot.press("n", "n")
        await _until(pilot, lambda: app.screen.view.step.name == "lens.blocks.0.resid_mid.probs")
        pane = app.screen.query_one(PredictionsPane)
        if size == (80, 24) and not pane.region.height:
            return  # no room for the pane at 80×24: nothing on screen contradicts the narration
        text = text_of(pane)
        assert "the lens after block 0's attention" in text
        assert "'<bos>'  0.3377" in text and "0.9404" not in text

    drive(app, script, size=size)


@pytest.mark.parametrize("size", SIZES)
def test_item4_the_narration_pane_draws_bos(lens_tutorial, size):
    from explain.tui.widgets.narration import NarrationPane

    tut, trace = lens_tutorial
    app = ExplainApp(trace, tutorial=tut)

    async def script(pilot):
        await pilot.press("n", "n")
        await _until(pilot, lambda: app.screen.view.step.name == "lens.blocks.0.resid_mid.probs")
        await pilot.pause()
        pane = app.screen.query_one(NarrationPane)
        text = " ".join(" ".join(line.text for line in pane._lines).split())
        assert "the top word is now <bos>, with only 0.34" in text, text

    drive(app, script, size=size)
