"""Issue 42 item 3: after r (the backward pass recorded), G generates from the forward run, where it was refused
with CLI advice ('drop --backward'), and no way out in the TUI; G then r already worked. Pilot at 80×24, 120×40
and 200×50."""

from __future__ import annotations

import pytest
from conftest import _until, drive

import explain
from explain.tui.app import ExplainApp

SIZES = [(80, 24), (120, 40), (200, 50)]


@pytest.mark.parametrize("size", SIZES)
def test_item3_g_after_r_generates_from_the_forward_run(size):
    trace = explain.run("gpt", random_weights=True, text="the cat is")
    app = ExplainApp(trace, options={"random_weights": True, "text": "the cat is"}, start="probs")
    said: list[str] = []

    async def script(pilot):
        screen = app.screen
        real = screen.notify
        screen.notify = lambda message, *a, **k: (said.append(str(message)), real(message, *a, **k))[1]
        await pilot.press("r")
        await _until(pilot, lambda: screen.trace.backward is not None, tries=400)
        assert screen.trace.backward is not None
        await pilot.press("G")
        await _until(pilot, lambda: screen.trace.generation is not None, tries=400)
        assert screen.trace.generation is not None, said
        assert not any("--backward" in m or "drop" in m for m in said), said
        assert any("from the forward pass" in m for m in said), said
        assert screen.view.step.name == "gen.0.next_logits"

    drive(app, script, size=size)
