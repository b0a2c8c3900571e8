"""Issue 42 item 12: a step's description was clipped at its third line ("p = 1 costs 0; p …") above blank rows,
and at 200×50 the backward tree's names were cut at 29 columns. Now the header is whole wherever every pane
below it is whole too (fit.step_classes adds -info-whole), and from 180 columns the tree is 54 wide. Pilot at
80×24, 120×40 and 200×50 on the trained GPT's backward pass; each fails on the old code."""

from __future__ import annotations

import pytest
from conftest import drive, text_of

import explain
from explain.tui.app import ExplainApp
from explain.tui.widgets.step_info import StepInfo

_TRACE: list[object] = []


def trace():
    if not _TRACE:
        _TRACE.append(explain.run("gpt", trained=True, backward=True))
    return _TRACE[0]


CASES = {(80, 24): ("token_loss", "0 costs ∞."),
         (120, 40): ("blocks.0.resid_mid.grad.from.blocks.0.resid_post", "gradient highway from the loss to every block."),
         (200, 50): ("blocks.0.resid_mid.grad.from.blocks.0.resid_post", "blocks.0.resid_post.grad ← resid_mid (1, 4, 64)")}


@pytest.mark.parametrize("size", list(CASES))
def test_the_note_is_whole_above_room_and_the_tree_names_whole(size):
    t = trace()
    name, whole = CASES[size]
    app = ExplainApp(t)

    async def script(pilot):
        screen = app.screen
        screen.view = screen.view.go(t[name].index)
        await pilot.pause()
        header = text_of(screen.query_one(StepInfo), width=400)
        note = " ".join(t[name].note.split())
        if size != (200, 50):
            assert " ".join(header.split()).endswith(note) and whole in " ".join(header.split())  # no "…"
            return
        tree = screen.query_one("#tree")
        tree.select_node(None)
        line = next(tree.render_line(y).text for y in range(tree.size.height)
                    if "resid_post.grad ← resid_mid" in tree.render_line(y).text)
        assert whole in line  # the name and its shape, whole

    drive(app, script, size=size)

