"""The mixture of experts in the TUI, at 80×24, 120×40 and 200×50: E opens a mixture layer's tokens × experts grid
(words on the rows, the kept weights, '·' where a token did not go, each expert's load), n/p change layer, Enter
opens the choice step at that token and expert, whose drill-down says why; an expert's step greys the rows of
the tokens it did not take; a run without experts says why E does nothing."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import _until, drive, goto, text_of
from textual.widgets import DataTable, Input

import explain
from explain.tui.app import ExplainApp
from explain.tui.keys import KEYS

SIZES = [(80, 24), (120, 40), (200, 50)]
TEXT = "the cat sat on the mat and the dog ran"
_RUN = {}


def moe_run():
    if "run" not in _RUN:
        _RUN["run"] = explain.run("llama", n_experts=6, experts_per_token=2, text=TEXT)
    return _RUN["run"]


def _on(pilot, name: str):
    def ready() -> bool:
        screen = pilot.app.screen
        if type(screen).__name__ != name:
            return False
        tables = screen.query(DataTable)
        return name == "StepScreen" or (bool(tables) and tables.first().row_count > 0)

    return _until(pilot, ready, tries=3000)  # a hang guard: a loaded machine is slow


def test_the_key_is_in_the_key_table() -> None:
    key = next(k for k in KEYS if k.action == "experts")
    assert key.keys == "E" and key.section == "Why"


@pytest.mark.parametrize("size", SIZES)
def test_experts_screen_and_why(size) -> None:
    trace = moe_run()
    app = ExplainApp(trace)

    async def script(pilot):
        await goto(pilot, "blocks.1.attn.q")
        await pilot.press("E")
        await _on(pilot, "ExpertsScreen")
        screen = app.screen
        table = screen.query_one(DataTable)
        assert screen.step.name == "blocks.1.mlp.kept_weights"  # the layer of the step shown
        assert table.row_count == 11 and len(table.columns) == 7  # 10 tokens + the load; the label column + 6
        assert table.region.width > 0 and table.region.height >= 3
        title = text_of(screen.query_one("#grid-title"))
        assert "tokens down" in title and "Enter: why" in title
        kept = trace["blocks.1.mlp.kept_weights"].output[0]
        assert str(table.get_row_at(1)[0]) == "1 cat"  # the words on the rows
        load = [int(str(c)) for c in table.get_row_at(10)[1:]]
        assert load == (kept > 0).sum(axis=0).tolist() and sum(load) == 20
        await pilot.press("p")  # the previous mixture layer
        await pilot.pause()
        assert screen.step.name == "blocks.0.mlp.kept_weights"
        kept = trace["blocks.0.mlp.kept_weights"].output[0]
        e = int(np.argmax(kept[2]))  # the expert token 2 gives the most weight
        await pilot.press(*["down"] * (2 - table.cursor_coordinate.row))
        await pilot.press(*(["right"] * (e + 1 - table.cursor_coordinate.column) if e + 1 >= table.cursor_coordinate.column
                            else ["left"] * (table.cursor_coordinate.column - e - 1)))
        await pilot.pause()
        line = text_of(screen.query_one("#grid-cell"))
        assert f"2 sat → expert {e}: weight" in line and "goes to experts" in line
        await pilot.press("enter")
        await _on(pilot, "StepScreen")
        view = app.screen.view
        assert view.step.name == "blocks.0.mlp.choice" and view.index_of_cell == (0, 2, e)
        ex = view.trace.explain(view.step, view.index_of_cell)
        assert ex.title.endswith(f"position 2 'sat' goes to expert {e}")

    drive(app, script, size=size)


@pytest.mark.parametrize("size", SIZES)
def test_an_experts_step_greys_the_tokens_it_did_not_take(size) -> None:
    trace = moe_run()
    app = ExplainApp(trace)

    async def script(pilot):
        await goto(pilot, "blocks.0.mlp.experts.pre")
        await _until(pilot, lambda: app.screen.view.step.name == "blocks.0.mlp.experts.pre")
        view = app.screen.view
        e = view.lead[1]
        choice = trace["blocks.0.mlp.choice"].output[0]
        not_taken = int(np.nonzero(choice[:, e] == 0)[0][0])
        await pilot.press(*["j"] * not_taken)
        await _until(pilot, lambda: app.screen.view.cell[0] == not_taken)
        ex = view.trace.explain(app.screen.view.step, app.screen.view.index_of_cell)
        assert re.search(rf"position {not_taken} '[^']+' did not go to expert {e}", ex.title) and ex.value == 0
        panel = text_of(app.screen.query_one("#cell"))
        assert "did not go to expert" in panel
        legend = text_of(app.screen.query_one("#tensor"), width=size[0])
        assert "unrouted" in legend  # the greyed rows' swatch

    drive(app, script, size=size)


def test_a_run_without_experts_says_why() -> None:
    app = ExplainApp(explain.run("llama"))

    async def script(pilot):
        await pilot.press("E")
        await pilot.pause()
        assert type(app.screen).__name__ == "StepScreen"
        assert any("no mixture of experts" in str(n.message) for n in app._notifications)

    drive(app, script, size=(80, 24))


def test_the_rerun_form_changes_the_router() -> None:
    opts = {"n_experts": 6, "experts_per_token": 2, "text": TEXT}
    app = ExplainApp(explain.run("llama", **opts), options=opts)

    async def script(pilot):
        s = app.screen
        await pilot.press("e")
        await _until(pilot, lambda: bool(app.screen.query("#n_experts")))
        form = app.screen
        assert form.query_one("#n_experts", Input).value == "6"
        assert form.query_one("#experts_per_token", Input).value == "2"
        form.query_one("#experts_per_token", Input).value = "3"
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await _until(pilot, lambda: s.trace.config.experts_per_token == 3)
        assert (s.trace["blocks.0.mlp.choice"].output.sum(-1) == 3).all()

    drive(app, script, size=(120, 40))
