"""``f`` on a 49,152-word step (issue 42 item 12): the step opens at token 0, the most probable word ~43,000
columns to the right; ``f`` brings the cursor there, the matrix window follows it (its column on screen, with its
word) and the drill-down explains that cell. At 80×24, 120×40 and 200×50; on the old code ``f`` did nothing."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import drive, text_of

import explain
from explain.tui.app import ExplainApp
from explain.tui.widgets.cell_panel import CellPanel
from explain.tui.widgets.tensor_view import TensorView

_TRACE: list[object] = []


def big_vocab():
    if not _TRACE:
        _TRACE.append(explain.run("gpt", d_vocab=49_152, random_weights=True, text="the cat sat on the mat"))
    return _TRACE[0]


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)])
def test_f_brings_the_most_probable_word_on_screen(size):
    trace = big_vocab()
    best = int(np.argmax(trace["probs"].output[0, 0]))
    app = ExplainApp(trace)

    async def script(pilot):
        screen = app.screen
        screen.view = screen.view.go(trace["probs"].index)
        await pilot.pause()
        assert str(best) not in text_of(screen.query_one(TensorView), width=400)  # far off screen
        await pilot.press("f")
        await pilot.pause()
        assert screen.view.index_of_cell == (0, 0, best)
        assert str(best) in text_of(screen.query_one(TensorView), width=400)  # the window followed
        assert f"P[0, 0, {best}]" in text_of(screen.query_one(CellPanel), width=400)

    drive(app, script, size=size)
