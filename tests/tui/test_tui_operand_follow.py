"""Issue 42 item 12: the operand windows follow the cursor the same way. On logits.grad (log softmax's
backward) with the cursor on column 28, ``log P`` showed columns 24–28 but ``∂L/∂log P`` stood at column 0: its
feed is the whole row, so nothing kept column 28 in view. Every operand as long as the result along an axis now
keeps the cursor's own row/column in its window. Drawn without Pilot (operand_view is a pure function of the
view); fails on the old code."""

from __future__ import annotations

import re

import explain
from explain import ops
from explain.render.view import View
from explain.tui.widgets.operands import operand_view


def _columns(text: str) -> set[int]:
    header = next(ln for ln in text.splitlines() if re.match(r"^\s+(…\s+)?\d+(\s+\d+)*(\s+…)?\s*$", ln))
    return {int(x) for x in header.split() if x.isdigit()}


def test_every_operand_window_holds_the_cursors_column():
    trace = explain.run("gpt", trained=True, backward=True)
    for name in ("logits.grad", "probs"):
        view = View(trace, trace[name].index).clamped().move(1, 28)
        step = view.step
        feeds = ops.get(step.op).feeds(view.index_of_cell, trace.inputs_of(step), **step.attrs)
        shown = 0
        for i, (inp, feed) in enumerate(zip(step.inputs, feeds)):
            if feed is None or trace.value(inp) is None or trace.value(inp).shape != step.output.shape:
                continue  # not read here, or not shaped as the result
            text = operand_view(view, inp, f"x{i}", 60, feed).plain
            assert 28 in _columns(text), (name, inp, text)
            shown += 1
        assert shown >= 1, name
