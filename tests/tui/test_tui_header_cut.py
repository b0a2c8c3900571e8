"""The step header on a short terminal: the CSS caps it at 4 lines, and where that cuts the note, its last line
ends with "…" (it read "Row i says how much query i" at 80×24, as if the sentence ended there). Where the header
fits, nothing is added."""

from __future__ import annotations

import pytest
from conftest import drive, goto

import explain
from explain.tui.app import ExplainApp


def screen_lines(app) -> list[str]:
    return ["".join(seg.text for seg in strip) for strip in app.screen._compositor.render_strips()]


@pytest.fixture(scope="module")
def trace():
    return explain.run("gpt", text="the cat sat on the mat")


def pattern_screen(trace, size: tuple[int, int]) -> list[str]:
    """The screen's lines on the first attention pattern's step."""
    seen: list[str] = []

    async def script(pilot):
        await goto(pilot, "blocks.0.attn.pattern")
        seen.extend(screen_lines(pilot.app))

    drive(ExplainApp(trace), script, size=size)
    return seen


@pytest.mark.parametrize("size", [(80, 24), (100, 24)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_cut_header_says_so(trace, size):
    seen = pattern_screen(trace, size)
    centre = [line.split("▕", 1)[-1] for line in seen]  # without the step tree, where it is shown
    assert centre[0].strip().startswith("blocks.0.attn.pattern")
    assert centre[3].rstrip().endswith("…") and "Attention weights" in centre[3], centre[:5]
    assert centre[4].lstrip().startswith("result A"), centre[:5]


@pytest.mark.parametrize("size", [(120, 40), (200, 50)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_whole_header_has_no_mark(trace, size):
    top = pattern_screen(trace, size)[:8]
    note = [line for line in top if "Attention weights" in line]
    assert note and "…" not in "".join(top), top
    assert any(line.rstrip().endswith("each position.") for line in top), top
