"""The drill-down's table of terms at the pane's edge: a table one or two columns too wide drops its outer
spaces instead of letting rich cut its last column. At 80×24, tutorial 16's softmax cell read "weig…" and
"0.76…" in the weights column beside the scroll bar: the answer's own column, cut."""

from __future__ import annotations

import pytest
from rich.cells import cell_len
from rich.text import Text

import explain
from explain.render.drill import drill_lines


@pytest.fixture(scope="module")
def softmax_cell():
    trace = explain.run("gpt", text="fox letter journey happy were mat fox letter journey happy were mat")
    return trace.explain("probs", (0, 9, 65))


def table_lines(drill) -> list[str]:
    """The header of the table of terms (the line whose first column is k) and the rows under it."""
    plain = [line.plain for line in drill.lines]
    start = next(i for i, line in enumerate(plain) if line.split()[:1] == ["k"])
    return [line for line in plain[start:] if "⋮" in line or "<" in line or line.split()[:1] == ["k"]
            or line.split()[:1] and line.split()[0].isdigit()]


@pytest.mark.parametrize("spare", [0, -1, -2])
def test_the_weights_column_is_whole_at_and_just_under_the_tables_width(softmax_cell, spare):
    wide = drill_lines(Text("head"), softmax_cell, 4, 200, 40)
    header = next(line.plain for line in wide.lines if "score − max" in line.plain)
    natural = cell_len(header.rstrip()) + 1  # the table with a space at either edge
    drill = drill_lines(Text("head"), softmax_cell, 4, natural + spare, 40)
    lines = table_lines(drill)
    assert len(lines) > 3 and all("…" not in line for line in lines), lines
    assert lines[0].rstrip().endswith("weight") and any(line.rstrip().endswith("0.7660") for line in lines), lines
    # with room the table keeps its edge spaces (the screens people know do not change); without, it drops them
    assert all(line.endswith(" ") == (spare == 0) for line in lines), lines


@pytest.mark.parametrize("spare", [-3, -4])
def test_a_table_wider_still_closes_its_columns_up(softmax_cell, spare):
    """Issue 42 item 12: at 80×24 tutorial 12's softmax table (its k column holding '30 hungry') was 3–4 columns
    too wide even without its edge spaces, and rich cut the weights again ('weig…', '0.73…'). One space between
    columns instead of two keeps the answer whole. Fails on the old code."""
    wide = drill_lines(Text("head"), softmax_cell, 4, 200, 40)
    header = next(line.plain for line in wide.lines if "score − max" in line.plain)
    natural = cell_len(header.rstrip()) + 1
    lines = table_lines(drill_lines(Text("head"), softmax_cell, 4, natural + spare, 40))
    assert all("…" not in line for line in lines), lines
    assert lines[0].rstrip().endswith("weight") and any(line.rstrip().endswith("0.7660") for line in lines), lines
    assert "score score − max" in lines[0]  # one space between the columns, not two


def test_a_table_far_too_wide_is_still_cut_at_the_edge(softmax_cell):
    drill = drill_lines(Text("head"), softmax_cell, 4, 30, 40)
    assert any("…" in line for line in table_lines(drill))
