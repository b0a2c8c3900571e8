"""The step screen's layout at 80×24, 100×30, 120×40 and 200×50: the drill-down's result line is always on
screen (a matmul score, a softmax weight, a sum-normalised weight, a layer norm, the loss), the result matrix
shows whole where it fits and never with zero rows, hidden panes are said, the layout follows every resize;
and :func:`explain.tui.layout.plan` on its own."""

from __future__ import annotations

import pytest
from conftest import drill_answer, drive

import explain
from explain.tui import layout
from explain.tui.app import ExplainApp
from explain.tui.widgets.cell_panel import CellPanel
from explain.tui.widgets.tensor_view import TensorView

SIZES = [(80, 24), (100, 30), (120, 40), (200, 50)]
TEXT12 = "the quick brown fox jumps over the lazy dog and the cat"


@pytest.fixture(scope="module")
def gpt12():
    """A gpt run on 12 tokens: 12-entry softmax rows."""
    return explain.run("gpt", d_model=16, n_heads=2, text=TEXT12)


@pytest.fixture(scope="module")
def simple_sum():
    return explain.run("simple", normalize="sum")


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
        assert s._layout.side_by_side and s._layout.drill_w > 46  # the drill-down widens when there is room

    drive(app, script, size=(200, 50))


def test_layout_follows_every_resize(gpt_trace):
    app = ExplainApp(gpt_trace)

    async def script(pilot):
        s = app.screen
        s.view = s.view.go(gpt_trace["blocks.0.attn.scores"].index)
        await pilot.pause()
        assert not s._layout.operands_h and "operands" in s._layout.hidden
        assert "operands hidden" in s.query_one(TensorView).hint
        await pilot.resize_terminal(200, 50)
        await pilot.pause()
        assert s._layout.operands_h and s._layout.sidebar_w and s._layout.side_by_side
        assert s.query_one("#operands").display
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert not s._layout.operands_h and not s._layout.side_by_side

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


def needs(**kw) -> layout.Needs:
    base = dict(info_h=4, matrix_w=40, matrix_h=9, drill_w=60, drill_h=14, drill_min_h=9, operands_h=8)
    return layout.Needs(**{**base, **kw})


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_plan_gives_the_drill_down_its_minimum_first(size):
    w, h = size
    plan = layout.plan(w, h, needs())
    body = h - 1
    assert plan.drill_h >= 9 and plan.matrix_h >= layout.MATRIX_MIN_H
    used = plan.info_h + plan.operands_h + (plan.matrix_h if plan.side_by_side else plan.matrix_h + plan.drill_h)
    assert used <= body
    if not plan.operands_h:
        assert "operands" in plan.hidden


def test_plan_keeps_a_row_of_a_matrix_with_tall_headers():
    """A 4-D slice with word rulers has 4 lines of titles and rulers: its minimum is those, a row, the legend."""
    for w, h in SIZES:
        plan = layout.plan(w, h, needs(matrix_h=10, matrix_min_h=6, drill_h=30, drill_min_h=9))
        assert plan.matrix_h >= 6, (w, h)


def test_plan_user_choice_of_operands():
    assert layout.plan(200, 50, needs(), operands=False).operands_h == 0
    tight = layout.plan(80, 24, needs())
    assert tight.operands_h == 0 and "operands" in tight.hidden  # automatic: no room at 80×24
    assert layout.plan(80, 24, needs(), operands=True).matrix_h >= layout.MATRIX_MIN_H


def test_a_wide_screen_shows_a_12_token_operand_whole(gpt12):
    """At 200×50 the operands get what they need: all 12 rows of the masked scores beside which the pattern is
    computed (the operand pane once stopped at 6 rows above a half-empty screen)."""
    from conftest import text_of

    from explain.tui.widgets.operands import Operands

    app = ExplainApp(gpt12)

    async def script(pilot):
        s = app.screen
        s.view = s.view.go(gpt12["blocks.0.attn.pattern"].index)
        await pilot.pause()
        await pilot.pause()
        ops = s.query_one(Operands)
        assert ops.display and s._layout.operands_h >= 12 + 3
        rows = [line.split()[0] for line in text_of(ops).splitlines()[3:] if line.strip()]
        assert rows == [str(i) for i in range(12)], rows

    drive(app, script, size=(200, 50))
