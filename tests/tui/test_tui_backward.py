"""Pilot tests of the backward pass in the TUI: ``r`` records it after the forward steps (which keep their
indices), jumps between a value and its gradient, and the drill-down explains gradient cells (softmax's row
terms, layer norm's, the mask's zero); a run started with --backward shows the same steps."""

from __future__ import annotations

import pytest
from conftest import drive, goto, text_of

import explain
from explain.ops.base import num
from explain.tui.app import ExplainApp
from explain.tui.widgets.cell_panel import CellPanel
from explain.tui.widgets.operands import Operands
from explain.tui.widgets.step_tree import StepTree
from explain.tui.widgets.tensor_view import TensorView


def panel(app) -> str:
    return app.screen.query_one(CellPanel).plain()


async def _recorded(app, pilot, before: int) -> None:
    """Wait for the worker thread and for its result to reach the screen (slow on a loaded machine)."""
    for _ in range(200):
        await app.workers.wait_for_complete()
        await pilot.pause(0.05)
        if len(app.screen.trace) > before:
            return


def test_r_records_the_backward_pass_and_jumps_between_value_and_gradient(gpt_trace):
    app = ExplainApp(gpt_trace)

    async def script(pilot):
        s = app.screen
        n_forward = len(gpt_trace)
        await goto(pilot, "blocks.0.attn.q")
        await pilot.pause()
        index = s.view.index
        await pilot.press("r")
        await _recorded(app, pilot, n_forward)
        assert len(s.trace) > n_forward and s.trace[index].name == "blocks.0.attn.q"  # forward steps kept
        assert s.view.step.name == "blocks.0.attn.q.grad"
        await pilot.press("r")
        assert s.view.step.name == "blocks.0.attn.q"
        await goto(pilot, "tokens", "r")  # integers: no gradient, a message, no move
        assert s.view.step.name == "tokens"
        await pilot.press("end")
        assert s.view.step.name == "W_E.grad"
        await pilot.press("r")  # a parameter has no step to go back to: stays
        assert s.view.step.name == "W_E.grad"
        labels = [str(n.label) for n in s.query_one(StepTree)._leaves]
        assert any(lb.startswith("pattern.grad") for lb in labels)

    drive(app, script)


def test_gradient_cells_are_explained():
    app = ExplainApp(explain.run("gpt", random_weights=True, backward=True))

    async def script(pilot):
        await goto(pilot, "blocks.0.attn.masked.grad")
        await pilot.pause()
        assert "only this key is visible in the row" in panel(app)  # row 0 of a causal pattern: weight 1
        await pilot.press("j")
        await pilot.pause()
        text = panel(app)
        assert "rowsum" in text and "δ" in text  # the softmax Jacobian's row terms
        operands = text_of(app.screen.query_one(Operands))
        assert "Sₘ (1, 2, 4, 4)" in operands and "not read here" in operands  # its backward reads A, not S
        assert "∂L/∂A (1, 2, 4, 4)" in operands and " A (1, 2, 4, 4)" in operands  # no room for names: none cut
        await goto(pilot, "blocks.0.attn.scaled.grad", "l", "k")
        await pilot.pause()
        assert "no gradient flows to it" in panel(app)  # (0, 1): a masked score
        await goto(pilot, "blocks.0.resid_pre.grad.from.blocks.0.ln1")
        await pilot.pause()
        text = panel(app)
        assert "mean(dx̂)" in text and "σ" in text  # layer norm's backward
        await goto(pilot, "blocks.0.ln1.grad")
        await pilot.pause()
        assert "the sum of 3 gradients" in panel(app)

    drive(app, script)


SIZES = [(80, 24), (120, 40), (200, 50)]
GRADIENT_CELLS = ["blocks.1.attn.masked.grad", "blocks.0.resid_pre.grad.from.blocks.0.ln1", "W_E.grad",
                  "blocks.0.attn.W_Q.grad", "logits.grad"]


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_gradient_cells_readable_at_every_size(size):
    """Softmax's and layer norm's gradient cells (and a parameter's, the logits'): the drill-down's result line
    on screen, and the result matrix shows at least one row (a 4-D slice with word rulers needs more than the
    matrix's bare minimum of lines)."""
    trace = explain.run("gpt", random_weights=True, backward=True)
    app = ExplainApp(trace)

    async def script(pilot):
        s = app.screen
        for name in GRADIENT_CELLS:
            s.view = s.view.go(trace[name].index).move(1, 1)
            await pilot.pause()
            await pilot.pause()
            panel = s.query_one(CellPanel)
            ex = panel.explanation(s.view)
            last = panel.plain().splitlines()[-1]
            assert last.rstrip().endswith(f"= {num(ex.value)}"), (name, size, last)
            tensor = s.query_one(TensorView)
            shown = text_of(tensor, tensor.region.width).splitlines()[: tensor.region.height]
            row = str(s.view.cell[0])
            assert any(line.split()[:1] == [row] for line in shown), (name, size, shown)  # the cursor's row

    drive(app, script, size=size)
