"""The step screen as Textual lays it out, at 60×20 up to 200×50: the drill-down's result line is always on
screen (a matmul score, a softmax weight, a sum-normalised weight, a layer norm, the loss), the result matrix
shows whole where it fits and never with fewer than three rows where the terminal has them, hidden panes are
said, the layout follows every resize. (:func:`explain.render.fit.step_classes` on its own: test_tui_fit.py.)"""

from __future__ import annotations

import pytest
from conftest import drill_answer, drive

import explain
from explain.render.measure import matrix_size
from explain.tui.app import ExplainApp
from explain.tui.widgets.cell_panel import CellPanel
from explain.tui.widgets.tensor_view import TensorView

SIZES = [(60, 20), (80, 24), (100, 30), (120, 40), (160, 45), (200, 50)]
TEXT12 = "the quick brown fox jumps over the lazy dog and the cat"


@pytest.fixture(scope="module")
def gpt12():
    """A gpt run on 12 tokens: 12-entry softmax rows."""
    return explain.run("gpt", d_model=16, n_heads=2, text=TEXT12)


@pytest.fixture(scope="module")
def simple_sum():
    return explain.run("simple", normalize="sum")


def shown(screen, selector: str) -> bool:
    """Whether the pane is laid out with room on the screen (displayed, with a height)."""
    region = screen.query_one(selector).region
    return region.height > 0 and region.width > 0


def on_screen(app, widget) -> bool:
    """Whether all of ``widget`` is inside the screen (not clipped by the terminal's edge)."""
    r, screen = widget.region, app.screen.region
    return r.height > 0 and r.width > 0 and screen.contains_region(r)


CASES = [("gpt", "blocks.0.attn.scores"), ("gpt", "blocks.0.attn.pattern"), ("sum", "attn.pattern"),
         ("gpt", "blocks.0.ln1"), ("gpt", "loss")]


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_result_line_on_screen_for_every_kind(size, gpt_trace, simple_sum):
    for trace in (gpt_trace, simple_sum):
        app = ExplainApp(trace)
        names = [n for which, n in CASES if (which == "sum") == (trace is simple_sum)]

        async def script(pilot, app=app, trace=trace, names=names):
            s = app.screen
            for name in names:
                s.view = s.view.go(trace[name].index).move(1, 1)
                await pilot.pause()
                await pilot.pause()
                panel = s.query_one(CellPanel)
                ex = panel.explanation(s.view)
                assert on_screen(app, panel), (name, size, panel.region)
                answer = drill_answer(app)  # the last line the drill-down draws on screen
                assert answer.endswith(f"= {ex.value:.4f}"), (name, size, answer)
                tensor = s.query_one(TensorView)
                assert tensor.page[0] >= 1 and on_screen(app, tensor)  # never zero rows
                last = panel.plain().splitlines()[-1]
                assert last.rstrip().endswith(f"= {ex.value:.4f}") and answer.endswith(last.strip())

        drive(app, script, size=size)


def test_tutorial_six_by_six_whole_at_120x40():
    from explain.tutorial import load_tutorial, run_tutorial

    tut = load_tutorial("1")
    app = ExplainApp(run_tutorial(tut), tutorial=tut)

    async def script(pilot):
        s = app.screen
        for name in ("attn.scores", "attn.pattern"):
            s.view = s.view.go(s.trace[name].index)
            await pilot.pause()
            await pilot.pause()
            assert s.query_one(TensorView).page == (6, 6), name
            assert "row sum = " in s.query_one(CellPanel).plain() or name == "attn.scores"
            assert "0.9544 / 6.5617 = 0.1455" in s.query_one(CellPanel).plain() or name == "attn.scores"

    drive(app, script, size=(120, 40))


def test_softmax_row_of_twelve_whole_at_200x50(gpt12):
    app = ExplainApp(gpt12)

    async def script(pilot):
        s = app.screen
        s.view = s.view.go(gpt12["blocks.0.attn.pattern"].index).move(11, 3)
        await pilot.pause()
        await pilot.pause()
        text = s.query_one(CellPanel).plain()
        rows = [line.split() for line in text.splitlines() if line.split()[:1] and line.split()[0].isdigit()]
        assert [int(r[0]) for r in rows] == list(range(12))  # every entry of the row, no ⋮
        assert all("…" not in line for line in text.splitlines())  # no number is cut
        assert s.query_one(TensorView).page == (12, 12)
        # the drill-down beside the matrix, as wide as its longest line (more than its least)
        assert "-beside" in s.fit.classes and s.query_one(CellPanel).region.width > 46

    drive(app, script, size=(200, 50))


def test_layout_follows_every_resize(gpt_trace):
    app = ExplainApp(gpt_trace)

    async def script(pilot):
        s = app.screen
        s.view = s.view.go(gpt_trace["blocks.0.attn.scores"].index)
        await pilot.pause()
        assert not shown(s, "#operands") and "operands" in s.fit.hidden
        assert "operands hidden" in s.query_one(TensorView).hint
        await pilot.resize_terminal(200, 50)
        await pilot.pause()
        assert shown(s, "#operands") and shown(s, "#sidebar") and "-beside" in s.fit.classes
        assert s.query_one(TensorView).hint == ""
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert not shown(s, "#operands") and "-beside" not in s.fit.classes and not shown(s, "#sidebar")

    drive(app, script, size=(80, 24))


def test_tree_key_at_80_columns_says_why(gpt_trace):
    app = ExplainApp(gpt_trace)

    async def script(pilot):
        await pilot.press("T")
        await pilot.pause()
        notes = [n.message for n in app._notifications]
        assert any("needs 100 columns" in m and "80" in m for m in notes)
        assert app.screen.show_sidebar  # nothing toggled silently

    drive(app, script, size=(80, 24))


def test_drill_down_scrolls_and_keeps_its_result(gpt_trace):
    """A 32-term layer-norm row at 80×24 does not fit: d scrolls the body, the result line stays."""
    app = ExplainApp(gpt_trace)

    async def script(pilot):
        s = app.screen
        s.view = s.view.go(gpt_trace["blocks.0.mlp.post"].index + 1)  # mlp_out: a linear over 32 features
        await pilot.pause()
        await pilot.pause()
        panel = s.query_one(CellPanel)
        before, answer = panel.body_offset, drill_answer(app)
        assert answer.endswith(f"= {panel.explanation(s.view).value:.4f}")
        await pilot.press("d")
        await pilot.pause()
        if panel.max_scroll:
            assert panel.body_offset > before
        assert on_screen(app, panel) and drill_answer(app) == answer  # the result line stays
        await pilot.press("u")
        await pilot.pause()
        assert panel.body_offset == before

    drive(app, script, size=(80, 24))



REGION_STEPS = ["blocks.0.attn.scores", "blocks.0.attn.pattern", "blocks.0.mlp_out", "logits", "loss", "embed"]


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_regions_at_every_size(gpt12, size):
    """The real regions Textual gives the panes, on a 12-token run: nothing overlaps or falls off the screen;
    the drill-down's last line on screen is its result; the matrix shows whole where it fits and at least
    three rows (all of a smaller result) at every size; each pane hidden for lack of room is said on the
    matrix's title (and a pane that is said hidden is hidden)."""
    app = ExplainApp(gpt12)

    async def script(pilot):
        s = app.screen
        for name in REGION_STEPS:
            view = s.view.go(gpt12[name].index)
            s.view = view.move(1 - view.cell[0], 1 - view.cell[1])  # row 1: a window cut below it only
            await pilot.pause()
            await pilot.pause()
            step, panel, tensor = s.view.step, s.query_one(CellPanel), s.query_one(TensorView)
            where = (name, size, sorted(s.fit.classes))
            panes = [s.query_one(p) for p in ("#info", "#operands", "#predictions", "#work")]
            tops = [p.region for p in panes if p.region.height]
            assert all(a.bottom <= b.y for a, b in zip(tops, tops[1:])), where  # one under the other
            assert all(on_screen(app, w) for w in (panel, tensor)), where
            ex = panel.explanation(s.view)
            if not isinstance(ex, str):
                assert drill_answer(app).endswith(f"= {ex.value:.4f}") or "= id" in drill_answer(app), where
            rows = 1 if not step.shape else s.view.matrix().shape[0]
            shown_rows = tensor.page[0] if step.shape else 1
            assert shown_rows >= min(rows, 3), where
            if tensor.content_region.height >= matrix_size(s.view, tensor.content_region.width)[1]:
                assert shown_rows == min(rows, 500), where  # whole where it has the room
            hint = tensor.hint
            assert ("operands" in hint) == (bool(step.inputs) and not shown(s, "#operands")), where
            assert ("tree hidden (T)" in hint) == (not shown(s, "#sidebar")), where
            assert ("predictions: no room" in hint) == ("predictions" in s.fit.hidden), where
            if "predictions" in s.fit.hidden:
                assert not shown(s, "#predictions")

    drive(app, script, size=size)
