"""The loss curve of ``explain train`` spans its axis: step 1 in the first column, the last step in the last, at
every width (session 9, tmux at 200x50: 200 steps filled 100 of the 192 columns, as if training had stopped
halfway; 112 of 120 and 67 of 72 at the smaller sizes)."""

from __future__ import annotations

import pytest

from explain.render.curve import HELD, TRAIN, loss_curve

LABEL = 8  # the y labels' width and the axis character


def columns(text: str, mark: str) -> set[int]:
    rows = text.splitlines()[:-2]  # the axis and the legend follow the plot
    return {x - LABEL for row in rows for x, ch in enumerate(row) if ch == mark and x >= LABEL}


@pytest.mark.parametrize("width", [80, 120, 200])
@pytest.mark.parametrize("total", [30, 200, 2000])
def test_a_finished_run_spans_the_axis(width, total):
    losses = [4.0 - i / total for i in range(total)]
    held = [(s, 3.9 - s / total) for s in range(25, total + 1, 25)]
    plot = loss_curve(losses, held, total, width, 20).plain
    w = width - LABEL
    used = columns(plot, TRAIN) | columns(plot, HELD)
    assert min(used) == 0 and max(used) == w - 1, (min(used), max(used), w)
    assert len(columns(plot, TRAIN)) >= min(w, total) - len(columns(plot, HELD))  # every column has its point
    assert plot.splitlines()[0][LABEL - 1:LABEL + 1] == "┤·"  # the first steps: the highest loss, the top row


def test_a_run_under_way_fills_its_share_of_the_axis():
    plot = loss_curve([4.0 - i / 100 for i in range(50)], [(25, 3.8), (50, 3.6)], 2000, 80, 20).plain
    used = columns(plot, TRAIN) | columns(plot, HELD)
    assert max(used) == 1  # step 50 of 2000 on 72 columns (steps 1 and 2000 at columns 0 and 71): 49·71/1999
