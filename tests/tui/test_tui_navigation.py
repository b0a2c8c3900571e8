"""Pilot tests: moving through the steps (keys, tree, search, go to), the cell cursor (keys and mouse),
slices, precision and display modes, resizing."""

from __future__ import annotations

from conftest import drive, text_of

from explain.tui.app import ExplainApp
from explain.tui.widgets.cell_panel import CellPanel
from explain.tui.widgets.step_tree import StepTree
from explain.tui.widgets.tensor_view import TensorView


def test_next_previous_first_last(gpt_trace):
    app = ExplainApp(gpt_trace)

    async def script(pilot):
        s = app.screen
        assert s.view.index == 0
        await pilot.press("n", "right", "right")
        assert s.view.index == 3
        await pilot.press("p", "left")
        assert s.view.index == 1
        await pilot.press("end")
        assert s.view.step.name == "loss"
        await pilot.press("n")  # past the end: stays
        assert s.view.step.name == "loss"
        await pilot.press("home")
        assert s.view.index == 0
        await pilot.press("greater_than_sign")
        assert s.view.step.name == "loss"
        await pilot.press("less_than_sign")
        assert s.view.index == 0

    drive(app, script)


def test_same_op_kind_jumps(gpt_trace):
    app = ExplainApp(gpt_trace)

    async def script(pilot):
        s = app.screen
        await pilot.press("g")
        await pilot.pause()
        await pilot.press(*"blocks.0.attn.pattern", "enter")
        assert s.view.step.name == "blocks.0.attn.pattern"
        await pilot.press("right_square_bracket")
        assert s.view.step.name == "blocks.1.attn.pattern"
        await pilot.press("right_square_bracket")  # the next softmax is the vocabulary's
        assert s.view.step.name == "probs"
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert s.view.step.name == "blocks.0.attn.pattern"

    drive(app, script)


def test_search_narrows_and_goes(gpt_trace):
    app = ExplainApp(gpt_trace)

    async def script(pilot):
        await pilot.press("slash")
        assert type(app.screen).__name__ == "SearchScreen"
        await pilot.press(*"attn pattern")
        await pilot.pause()
        assert app.screen.query_one("OptionList").option_count == 2
        await pilot.press("down", "enter")
        await pilot.pause()
        assert type(app.screen).__name__ == "StepScreen"
        assert app.screen.view.step.name == "blocks.1.attn.pattern"

    drive(app, script)


def test_goto_wrong_name_suggests_and_stays_open(gpt_trace):
    app = ExplainApp(gpt_trace)

    async def script(pilot):
        await pilot.press("g")
        await pilot.pause()
        await pilot.press(*"blocks.0.ln9", "enter")
        await pilot.pause()
        assert type(app.screen).__name__ == "SearchScreen"
        assert "no step named 'blocks.0.ln9'" in str(app.screen.query_one("#error").render())
        matches = app.screen.query_one("#matches")  # the closest steps, listed inside the TUI
        names = [str(matches.get_option_at_index(i).prompt).split()[0] for i in range(matches.option_count)]
        assert "blocks.0.ln2" in names and "blocks.0.ln1" in names and matches.display
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.view.index == 0

    drive(app, script)


def test_tree_follows_and_selects(gpt_trace):
    app = ExplainApp(gpt_trace)

    async def script(pilot):
        s = app.screen
        tree = s.query_one(StepTree)
        await pilot.press("n", "n", "n")
        await pilot.pause()
        assert tree.cursor_node.data == 3
        tree.focus()
        await pilot.press("down")
        await pilot.pause()
        assert s.view.step.name == "blocks.0.ln1"
        await pilot.press("down")  # onto the "attn" group: the step stays
        await pilot.pause()
        assert tree.cursor_node.data == -1 and s.view.step.name == "blocks.0.ln1"
        await pilot.press("down")
        await pilot.pause()
        assert s.view.step.name == "blocks.0.attn.q" and tree.cursor_node.data == s.view.index

    drive(app, script)


def test_cell_cursor_keys_mouse_and_slices(gpt_trace):
    app = ExplainApp(gpt_trace)

    async def script(pilot):
        s = app.screen
        await pilot.press("g")
        await pilot.pause()
        await pilot.press(*"blocks.0.attn.scores", "enter")
        await pilot.press("l", "l", "j", "shift+down", "shift+left")
        assert s.view.cell == (2, 1)
        await pilot.press("k", "h", "h", "h")  # clamped at the edge
        assert s.view.cell == (1, 0)
        await pilot.press("s")
        assert s.view.lead == (0, 1)
        assert "head 1 of 2" in text_of(s.query_one(TensorView))
        await pilot.press("S")
        assert s.view.lead == (0, 0)
        await pilot.press("b")  # one batch: wraps to itself
        assert s.view.lead == (0, 0)
        view = s.query_one(TensorView)
        view.focus()
        await pilot.press("down")  # ↑/↓ move the cell when the matrix has focus
        assert s.view.cell == (2, 0)
        win = view._window
        x = view.gutter.left + win.label_width + win.widths[0] + win.widths[1] + 1  # column 2
        y = view.gutter.top + view._title_lines + win.header_lines + 3  # row 3
        await pilot.click(TensorView, offset=(x, y))
        await pilot.pause()
        assert s.view.cell == (3, 2)
        assert "S[0, 0, 3, 2]" in s.query_one(CellPanel).plain()

    drive(app, script)


def test_precision_and_display_modes(attention_trace):
    app = ExplainApp(attention_trace)

    async def script(pilot):
        s = app.screen
        await pilot.press("end")
        value = f"{float(s.view.step.output[0, 0]):.4f}"
        assert value in text_of(s.query_one(TensorView))
        await pilot.press("minus", "minus")
        assert s.view.precision == 2
        assert f"{float(s.view.step.output[0, 0]):.2f}" in text_of(s.query_one(TensorView))
        await pilot.press("plus")
        assert s.view.precision == 3
        await pilot.press("v")
        assert s.view.show == "colours" and not s.view.values and s.view.heat
        assert f"{float(s.view.step.output[0, 0]):.3f}" not in text_of(s.query_one(TensorView))
        await pilot.press("v")
        assert s.view.show == "values" and s.view.values and not s.view.heat
        assert "values only" in text_of(s.query_one(TensorView))

    drive(app, script)


def test_big_tensor_window_pans(wide_trace):
    app = ExplainApp(wide_trace)

    async def script(pilot):
        s = app.screen
        await pilot.press("g")
        await pilot.pause()
        await pilot.press(*"logits", "enter")
        await pilot.pause()
        view = s.query_one(TensorView)
        shown = text_of(view)
        assert "…" in shown and "2999" not in shown
        cols = view.page[1]
        await pilot.press("L")
        await pilot.pause()
        assert s.view.cell[1] == cols
        header = text_of(view).splitlines()[2]  # the index ruler, after the title and slice lines
        assert header.lstrip().startswith("…") and header.rstrip().endswith("…")  # elided on both sides
        s.view = s.view.move(0, 5000)  # to the last column (clamped)
        await pilot.pause()
        assert s.view.cell[1] == 2999
        shown = text_of(view)
        assert "2999" in shown and not shown.splitlines()[2].rstrip().endswith("…")
        page = view.page[1]
        await pilot.press("H")
        await pilot.pause()
        assert s.view.cell[1] == 2999 - page
        assert "cells shown" not in shown  # a (4, 3000) slice is small: one scale for the slice

    drive(app, script)


def test_resize_keeps_state_and_refits(wide_trace):
    app = ExplainApp(wide_trace)

    async def script(pilot):
        s = app.screen
        await pilot.press("g")
        await pilot.pause()
        await pilot.press(*"logits", "enter", "l", "l", "l")
        wide = s.query_one(TensorView).page[1]
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert s.view.step.name == "logits" and s.view.cell == (0, 3)
        assert s.has_class("-narrow")
        assert s.query_one(TensorView).page[1] != wide  # refitted (narrow: the drill-down moves below)
        await pilot.resize_terminal(200, 60)
        await pilot.pause()
        assert s.has_class("-wide") and s.query_one(TensorView).page[1] > 2 * wide

    drive(app, script)
