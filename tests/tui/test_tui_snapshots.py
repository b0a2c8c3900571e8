"""SVG snapshots of the main screens (pytest-textual-snapshot). Update with ``--snapshot-update`` and look at
the SVGs in tests/tui/__snapshots__/ before committing them."""

from __future__ import annotations

from conftest import fake_tutorial
from textual.widgets import Input

import explain
from explain.tui.app import ExplainApp


def gpt() -> ExplainApp:
    return ExplainApp(explain.run("gpt", random_weights=True))


def go_to(app: ExplainApp, name: str, *keys: str):
    """A run_before that puts the step screen on step ``name`` and then presses ``keys``. (Typing into the
    go-to dialog races its mounting on a loaded machine: the first letters reach the step screen.)"""

    async def before(pilot):
        s = app.screen
        s.view = s.view.go(s.trace[name].index)
        await pilot.pause()
        await pilot.press(*keys)
        await pilot.pause()

    return before


def test_snapshot_attention_pattern(snap_compare):
    app = gpt()
    assert snap_compare(app, run_before=go_to(app, "blocks.0.attn.pattern", "j", "j", "l", "s"),
                        terminal_size=(120, 40))


def test_snapshot_tutorial_small_terminal(snap_compare):
    app = ExplainApp(explain.run("gpt", random_weights=True), tutorial=fake_tutorial())
    assert snap_compare(app, press=["n", "n"], terminal_size=(80, 24))


def test_snapshot_logits_window(snap_compare):
    app = ExplainApp(explain.run("gpt", d_vocab=3000, n_layers=1))
    assert snap_compare(app, run_before=go_to(app, "logits", "L", "L", "j"), terminal_size=(120, 40))


def test_snapshot_help(snap_compare):
    assert snap_compare(gpt(), press=["question_mark"], terminal_size=(120, 40))


def test_snapshot_rerun_form(snap_compare):
    """The re-run form (e). Its focused field's cursor blinks every 0.5 s, so whether a screenshot catches it lit
    depends on the machine's speed: the test stops the blink (the cursor then stays lit) before the picture."""
    app = gpt()

    async def open_form(pilot):
        await pilot.press("e")
        await pilot.pause()
        for field in app.screen.query(Input):
            field.cursor_blink = False
        await pilot.pause()

    assert snap_compare(app, run_before=open_form, terminal_size=(120, 40))


def test_snapshot_heads(snap_compare):
    """One layer's heads with their values: the grid's zoom (m, then z)."""
    app = ExplainApp(explain.run("multihead", n_heads=4, d_model=16))
    assert snap_compare(app, press=["m", "z"], terminal_size=(120, 40))


def test_snapshot_head_grid(snap_compare):
    """The layer × head grid (m) of a 2-layer, 4-head gpt at 120×40: every tile, the + cell, the kv-free ruler."""
    app = ExplainApp(explain.run("gpt", n_heads=4, d_model=16))
    assert snap_compare(app, press=["m"], terminal_size=(120, 40))


def test_snapshot_scores_80x24(snap_compare):
    """The default terminal size: the drill-down complete (its result line last), operands said hidden."""
    app = gpt()

    async def to_scores(pilot):  # set the step directly: typing into go-to races the dialog on a loaded machine
        s = app.screen
        s.view = s.view.go(s.trace["blocks.0.attn.scores"].index).move(1, 1)
        await pilot.pause()

    assert snap_compare(app, run_before=to_scores, terminal_size=(80, 24))


def test_snapshot_tutorial_120x40(snap_compare):
    """The default walkthrough's 6×6 sum-normalised weights whole, with their drill-down beside the narration."""
    from explain.tutorial import load_tutorial, run_tutorial

    tut = load_tutorial("1")
    assert snap_compare(ExplainApp(run_tutorial(tut), tutorial=tut), press=["n", "n"], terminal_size=(120, 40))


def test_snapshot_tutorial_picker_80x24(snap_compare):
    """``explain tutorial`` with no name, in the size most terminals open at: one line per tutorial."""
    from explain.tutorial import load_tutorial, run_tutorial

    tut = load_tutorial("1")
    assert snap_compare(ExplainApp(run_tutorial(tut), tutorial=tut, pick=True), terminal_size=(80, 24))
