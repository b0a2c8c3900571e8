"""Unit tests of the TUI's pure parts: the window fitting and drawing (cost bounded by the window), the View
state, step matching, export file naming, stop resolution."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import FakeStop

from explain.render.grid import draw_window, fit_axis, fit_window
from explain.tui.export import default_name, step_stem, target_path
from explain.tui.state import View, full_index, match_steps, next_of_kind, split_index
from explain.tui.tutorial import resolve_stops, stop_target


class CountingMatrix:
    """A 2-D "array" that counts the cells read, to prove a window reads only its own cells."""

    def __init__(self, rows: int, cols: int) -> None:
        self.shape = (rows, cols)
        self.reads: set[tuple[int, int]] = set()

    def __getitem__(self, key: tuple[int, int]) -> float:
        r, c = key
        self.reads.add((r, c))
        return float((r * 31 + c * 17) % 200 - 100) / 7


def test_fit_axis_shows_everything_that_fits():
    assert fit_axis(4, 0, 0, 10, lambda i: 1, 1) == [0, 1, 2, 3]


def test_fit_axis_elides_and_follows_the_cursor():
    shown = fit_axis(100, 0, 0, 6, lambda i: 1, 1)
    assert shown == [0, 1, 2, 3, 4, None]
    shown = fit_axis(100, 0, 50, 6, lambda i: 1, 1)  # cursor past the window: the window ends at the cursor
    assert shown[0] is None and shown[-1] is None and 50 in shown and len(shown) <= 6
    shown = fit_axis(100, 0, 99, 6, lambda i: 1, 1)
    assert shown[0] is None and shown[-1] == 99 and len(shown) == 6


def test_fit_axis_refills_after_growing():
    # a window that started at 90 of 100 and now has room for 20 slots shows the end, not a half-empty window
    shown = fit_axis(100, 90, 95, 20, lambda i: 1, 1)
    assert shown[-1] == 99 and len(shown) == 20


def test_window_reads_only_its_cells():
    big = CountingMatrix(128, 50257)
    win = fit_window(big, (0, 25000), (64, 25010), 80, 20, precision=4)
    draw_window(big, win, precision=4, cursor=(64, 25010))
    shown = sum(r is not None for r in win.rows) * sum(c is not None for c in win.cols)
    assert 0 < len(big.reads) <= 2 * shown + 40  # the window's cells, plus the columns tried while fitting
    assert len(big.reads) < 2000
    assert win.cols[0] is None and win.cols[-1] is None  # elided on both sides


def test_drawn_window_has_rulers_labels_and_ellipses():
    mat = np.arange(200, dtype=float).reshape(10, 20)
    labels = [f"t{i}" for i in range(10)]
    win = fit_window(mat, (0, 0), (0, 0), 40, 8, row_labels=labels, precision=1)
    text = draw_window(mat, win, row_labels=labels, precision=1).plain
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["0", "1", "2"] and lines[0].rstrip().endswith("…")
    assert lines[1].startswith("0 t0")
    assert lines[-1].lstrip().startswith("⋮")


def test_cell_at_maps_a_position_back_to_the_cell():
    mat = np.arange(16, dtype=float).reshape(4, 4)
    win = fit_window(mat, (0, 0), (0, 0), 60, 10, precision=1)
    x = win.label_width + win.widths[0] + win.widths[1] + 1  # inside column 2
    assert win.cell_at(x, win.header_lines + 3) == (3, 2)
    assert win.cell_at(0, win.header_lines) is None  # the row label


def test_minus_inf_is_always_written():
    mat = np.array([[1.0, -np.inf]])
    win = fit_window(mat, (0, 0), (0, 0), 40, 5, values=False)
    assert "−∞" in draw_window(mat, win, values=False).plain
    assert "−inf" in draw_window(mat, fit_window(mat, (0, 0), (0, 0), 40, 5), values=True).plain


def test_view_keeps_slice_and_cell_where_they_fit(gpt_trace):
    v = View(gpt_trace).go(gpt_trace["blocks.0.attn.q"].index).turn(-1, 1).move(2, 3)
    assert v.lead == (0, 1) and v.cell == (2, 3)
    v = v.go(gpt_trace["blocks.0.attn.scores"].index)  # same head, same cell
    assert v.lead == (0, 1) and v.cell == (2, 3)
    v = v.go(gpt_trace["loss"].index)  # a scalar: one cell, no slice
    assert v.lead == () and v.cell == (0, 0) and v.index_of_cell == ()


def test_turn_wraps_around(gpt_trace):
    v = View(gpt_trace).go(gpt_trace["blocks.0.attn.pattern"].index)
    assert v.turn(-1, 1).turn(-1, 1).lead == (0, 0)  # two heads
    assert v.turn(-1, -1).lead == (0, 1)
    assert v.turn(0, 1).lead == (0, 0)  # one batch


def test_index_conversions_round_trip(gpt_trace):
    for name in ("loss", "tokens", "pos_embed", "blocks.0.attn.pattern", "token_loss"):
        step = gpt_trace[name]
        index = tuple(n - 1 for n in step.shape)
        lead, cell = split_index(step, index)
        assert full_index(step, lead, cell) == index


def test_match_steps_and_next_of_kind(gpt_trace):
    names = [s.name for s in match_steps(gpt_trace, "attn pattern")]
    assert names == ["blocks.0.attn.pattern", "blocks.1.attn.pattern"]
    assert [s.name for s in match_steps(gpt_trace, "softmax")][:2] == ["blocks.0.attn.pattern",
                                                                       "blocks.1.attn.pattern"]
    # a part of an op kind finds it, as a part of a name does: "soft" is what a student types for softmax
    assert [s.name for s in match_steps(gpt_trace, "soft")] == [s.name for s in match_steps(gpt_trace, "softmax")]
    assert {s.op for s in match_steps(gpt_trace, "mask")} == {"mask"}
    first = gpt_trace["blocks.0.attn.pattern"].index
    assert gpt_trace[next_of_kind(gpt_trace, first, 1)].name == "blocks.1.attn.pattern"
    assert next_of_kind(gpt_trace, first, -1) is None


def test_export_names_and_paths(gpt_trace, tmp_path):
    assert step_stem("blocks.0.attn.scores") == "blocks_0_attn_scores"
    assert default_name(gpt_trace, ["blocks.0.attn.scores"]) == "blocks_0_attn_scores.py"
    assert default_name(gpt_trace, None) == "gpt_run.py"
    assert target_path("a", tmp_path) == tmp_path / "a.py"  # no suffix: .py
    assert target_path("sub/a.txt", tmp_path) == tmp_path / "sub" / "a.txt"
    assert target_path(str(tmp_path / "b.py"), Path("/elsewhere")) == tmp_path / "b.py"  # absolute stays


def test_stops_resolve_to_steps_and_groups(gpt_trace, tutorial):
    assert stop_target(gpt_trace, FakeStop("blocks.0.attn", "t", "n")).name == "blocks.0.attn.q"
    assert [gpt_trace[i].name for i in resolve_stops(gpt_trace, tutorial)] == [
        "embed", "blocks.0.attn.q", "blocks.0.attn.masked"]
    tutorial.stops.append(FakeStop("blocks.9.nothing", "bad", "n"))
    with pytest.raises(Exception, match="bad"):
        resolve_stops(gpt_trace, tutorial)
