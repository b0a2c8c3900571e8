"""The result matrix's colours on screen (issue 10): the legend (gradient bar, end values, what the scale
covers, the −inf and masked swatches) is on screen whole at 80×24, 120×40 and 200×50; ``V`` cycles the scale
(fixed, per row, per slice) and the legend says which; ids get no colour; NO_COLOR keeps values and styles."""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import drive, text_of
from textual.geometry import Region

from explain.tui.app import ExplainApp
from explain.tui.widgets.tensor_view import TensorView

SIZES = [(80, 24), (120, 40), (200, 50)]


def screen_lines(widget) -> list[str]:
    """The widget's lines as Textual draws them (cropped to its size, so a cut shows)."""
    return [strip.text for strip in widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))]


def legend_line(app) -> str:
    """The legend as drawn on screen: its bar line, and its second line (the swatches) where the pane had a
    line to spare for it."""
    tensor = app.screen.query_one(TensorView)
    r, screen = tensor.region, app.screen.region
    assert r.height > 0 and screen.contains_region(r), (r, screen)
    lines = [line.rstrip() for line in screen_lines(tensor)]
    at = [i for i, line in enumerate(lines) if "█" in line or "no colour" in line or "values only" in line]
    assert at, lines
    legend = lines[at[-1]].strip()
    after = lines[at[-1] + 1].strip() if at[-1] + 1 < len(lines) else ""
    return f"{legend}  {after}" if after.startswith(("−∞", "0 ", "values ×")) else legend


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_legend_whole_on_screen_in_every_scale(size, gpt_trace):
    app = ExplainApp(gpt_trace)
    expect = {  # step: the words each scale's legend must show, in the order V cycles them
        "blocks.0.attn.pattern": ("fixed", "row 1", "slice"),
        "blocks.0.attn.masked": ("slice", "row 1", "slice"),
        "embed": ("slice", "row 1", "slice"),
    }

    async def script(pilot):
        s = app.screen
        for name, words in expect.items():
            s.view = replace(s.view.go(gpt_trace[name].index), cell=(1, 0))
            for word in words:
                await pilot.pause()
                line = legend_line(app)
                assert word in line and not line.endswith("…"), (name, size, line)
                lo, hi = line.split("█")[0].strip(), line.split("█")[-1].split()[0]
                assert float(lo.replace("−", "-")) < float(hi), line  # both end values whole
                if name != "embed":
                    assert "masked" in line, line  # the −inf / masked swatch
                await pilot.press("V")
            assert s.view.scale == "fixed"  # three presses: round the cycle

    drive(app, script, size=size)


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_ids_and_the_loss_get_no_colour(size, gpt_trace):
    app = ExplainApp(gpt_trace)

    async def script(pilot):
        s = app.screen
        s.view = s.view.go(gpt_trace["tokens"].index)
        await pilot.pause()
        assert "ids" in legend_line(app) and "█" not in legend_line(app)
        s.view = s.view.go(gpt_trace["loss"].index)
        await pilot.pause()
        assert "█" not in "".join(screen_lines(s.query_one(TensorView)))

    drive(app, script, size=size)


def test_row_scale_follows_the_cursor_row(gpt_trace):
    app = ExplainApp(gpt_trace)

    async def script(pilot):
        s = app.screen
        s.view = s.view.go(gpt_trace["blocks.0.attn.pattern"].index)
        await pilot.press("V")
        await pilot.pause()
        assert s.view.scale == "row" and "row 0" in legend_line(app)
        await pilot.press("j", "j")
        await pilot.pause()
        assert "row 2" in legend_line(app)

    drive(app, script, size=(120, 40))


def test_no_color_values_only_and_c_says_why(monkeypatch, gpt_trace):
    monkeypatch.setenv("NO_COLOR", "1")
    app = ExplainApp(gpt_trace)

    async def script(pilot):
        s = app.screen
        s.view = s.view.go(gpt_trace["blocks.0.attn.pattern"].index)
        await pilot.pause()
        text = text_of(s.query_one(TensorView))
        assert "NO_COLOR is set: values only" in text and "█" not in text and "0.0000" in text
        await pilot.press("V")
        await pilot.pause()
        assert s.view.scale == "fixed" and any("NO_COLOR" in n.message for n in app._notifications)

    drive(app, script, size=(120, 40))


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_two_masks_apart_in_the_padding_tutorial(size):
    """Tutorial 13's padding mask: its own −inf cells and the causal mask's earlier ones have two swatches,
    and the weights after both are drawn masked; the legend whole at every size."""
    from explain.tutorial import load_tutorial, run_tutorial

    tut = load_tutorial("13")
    app = ExplainApp(run_tutorial(tut), tutorial=tut)

    async def script(pilot):
        s = app.screen
        for name, words in (("blocks.0.attn.pad_masked", ("here", "before")), ("blocks.0.attn.pattern", ("masked",))):
            s.view = replace(s.view.go(s.trace[name].index), lead=(1, 0), cell=(5, 4))
            await pilot.pause()
            line = legend_line(app)
            assert all(w in line for w in words) and not line.endswith("…"), (name, size, line)

    drive(app, script, size=size)
