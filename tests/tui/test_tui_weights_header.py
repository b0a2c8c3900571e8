"""The step screen always says which weights it shows ("trained: gpt-tiny" or "random, seed N"), and names the
words the trained vocabulary lacks (read as <unk>), at 80×24, 120×40 and 200×50, on the first step and on a
step with a long name, as the compositor draws the screen."""

from __future__ import annotations

import pytest
from conftest import _until, drive, goto

import explain
from explain.tui.app import ExplainApp

SIZES = [(80, 24), (120, 40), (200, 50)]
UNK = "not in the vocabulary, read as <unk>: 'zebra', 'moon'"


def screen_lines(app) -> list[str]:
    return ["".join(seg.text for seg in strip) for strip in app.screen._compositor.render_strips()]


@pytest.fixture(scope="module")
def traces():
    return {"trained": explain.run("gpt", text="the cat sat on the zebra and moon"),
            "random": explain.run("gpt", random_weights=True, seed=3, text="the cat sat on the mat")}


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_header_names_the_trained_weights_and_the_unknown_words(traces, size):
    trace = traces["trained"]
    assert trace.weights == "trained: gpt-tiny" and trace.unknown_words == ["zebra", "moon"]
    seen: dict[str, list[str]] = {}

    async def script(pilot):
        seen["first"] = screen_lines(pilot.app)
        await goto(pilot, "blocks.1.attn.pattern")
        seen["long name"] = screen_lines(pilot.app)

    drive(ExplainApp(trace), script, size=size)
    for where, lines in seen.items():
        top = "\n".join(lines[:8])
        assert "trained: gpt-tiny" in top, (where, top)
        assert UNK in top, (where, top)
        assert "blocks.1.attn.pattern" in top or where == "first", (where, top)


@pytest.mark.parametrize("size", SIZES[:1], ids=lambda s: f"{s[0]}x{s[1]}")  # the narrowest: the same header
def test_the_header_names_random_weights_and_their_seed(traces, size):
    trace = traces["random"]
    seen: list[str] = []

    async def script(pilot):
        seen.extend(screen_lines(pilot.app))

    drive(ExplainApp(trace), script, size=size)
    top = "\n".join(seen[:8])
    assert "random, seed 3" in top and "<unk>" not in top, top


@pytest.mark.parametrize("keys", ["y", "A"], ids=["lens", "attribution"])
def test_the_header_still_names_the_weights_after_an_interpretability_screen(traces, keys):
    # y and A record their steps into a new trace of the same run; Esc comes back to it. The attribution's trace
    # used to drop its weights: the header read "step 1 of 53" with no "trained: gpt-tiny" and no <unk> line.
    seen: list[str] = []

    async def script(pilot):
        before = len(pilot.app.screen.trace)
        await pilot.press(keys)
        await _until(pilot, lambda: type(pilot.app.screen).__name__ != "StepScreen", tries=3000)
        await pilot.press("escape")
        await _until(pilot, lambda: type(pilot.app.screen).__name__ == "StepScreen"
                     and len(pilot.app.screen.trace) > before, tries=3000)
        await pilot.pause()
        seen.extend(screen_lines(pilot.app))

    drive(ExplainApp(traces["trained"]), script, size=(80, 24))
    top = "\n".join(seen[:8])
    assert "trained: gpt-tiny" in top and UNK in top, top
