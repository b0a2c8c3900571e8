"""The re-run form on a trained run: trained weights have nothing random, so the seed field is not offered; its
row says why and names the weights ("trained: gpt-tiny"), at 80×24 and 120×40 as the compositor draws it. A
random run keeps its seed field (with its seed), and another model chosen in the form gets one too (issue 24)."""

from __future__ import annotations

import pytest
from conftest import _until, drive
from textual.widgets import Input, Select

import explain
from explain.tui.app import ExplainApp

WHY = "— trained: gpt-tiny: nothing random to seed"


def screen_lines(app) -> list[str]:
    return ["".join(seg.text for seg in strip) for strip in app.screen._compositor.render_strips()]


async def open_form(pilot):
    await pilot.press("e")
    await _until(pilot, lambda: type(pilot.app.screen).__name__ == "RerunScreen")
    await _until(pilot, lambda: bool(pilot.app.screen.query("#label-seed")))
    await pilot.pause()
    return pilot.app.screen


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_trained_run_has_no_seed_to_type_and_says_why(size):
    trace = explain.run("gpt", text="the cat sat")
    assert trace.weights == "trained: gpt-tiny"
    seen: dict = {}

    async def script(pilot):
        form = await open_form(pilot)
        seen["inputs"] = [w.id for w in form.query("#form Input")]
        seen["lines"] = screen_lines(pilot.app)
        await pilot.press("ctrl+r")  # nothing changed: the same trained run again
        await pilot.app.workers.wait_for_complete()
        await _until(pilot, lambda: type(pilot.app.screen).__name__ != "RerunScreen")
        seen["after"] = pilot.app.screen.trace.weights

    drive(ExplainApp(trace, options={"text": "the cat sat"}), script, size=size)
    assert "seed" not in seen["inputs"] and "text" in seen["inputs"] and "d_model" in seen["inputs"]
    row = next((line for line in seen["lines"] if " seed " in line), "")
    assert WHY in row, "\n".join(seen["lines"])  # on one line, beside its label, at both sizes
    assert seen["after"] == "trained: gpt-tiny"


def test_a_random_run_keeps_its_seed_and_another_model_gets_one():
    trace = explain.run("gpt", random_weights=True, seed=3, text="the cat sat")
    seen: dict = {}

    async def script(pilot):
        form = await open_form(pilot)
        seen["random"] = form.query_one("#seed", Input).value
        seen["why"] = bool(form.query("#seed-unused"))
        await pilot.press("escape")
        await _until(pilot, lambda: type(pilot.app.screen).__name__ != "RerunScreen")

    drive(ExplainApp(trace, options={"random_weights": True, "seed": 3, "text": "the cat sat"}), script,
          size=(80, 24))
    assert seen == {"random": "3", "why": False}

    trained = explain.run("gpt", text="the cat sat")

    async def other(pilot):
        form = await open_form(pilot)
        form.query_one("#model", Select).value = "transformer"
        await _until(pilot, lambda: bool(form.query("#tie_embeddings")))
        seen["other"] = [w.id for w in form.query("#form Input")]
        seen["why other"] = bool(form.query("#seed-unused"))
        await pilot.press("escape")

    drive(ExplainApp(trained, options={"text": "the cat sat"}), other, size=(80, 24))
    assert "seed" in seen["other"] and not seen["why other"]
