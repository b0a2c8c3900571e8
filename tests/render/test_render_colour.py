"""Colour that carries the value (issue 10): the palettes survive rich's downgrade to 256 colours, 0.1 and 0.3
get different colours, the scales (fixed, per row, per slice) and what they cover, the legend (a gradient bar
with its end values, swatches for −inf and masked cells) fitted to narrow widths without a cut, no colour for
integer tensors and scalars, and a big slice scaled from the cells shown only."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from rich.color import Color, ColorSystem
from rich.console import Console
from rich.style import Style

import explain
from explain.render.colour import (
    BEFORE_STYLE,
    DIVERGING,
    MASKED_STYLE,
    NEG_INF_STYLE,
    SEQUENTIAL,
    ColourLegend,
    Scale,
    cell_style,
    heat_for,
)
from explain.render.grid import TensorWindow, draw_window, fit_window
from explain.render.step import step_output


def render(renderable, width: int = 60, color_system: str | None = None) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=color_system, legacy_windows=False)
    console.print(renderable)
    return console.file.getvalue()


def background(style: str) -> Color:
    return Style.parse(style).bgcolor


@pytest.mark.parametrize("palette", [SEQUENTIAL, DIVERGING], ids=["sequential", "diverging"])
def test_palettes_keep_every_colour_apart_in_256_colours(palette):
    down = [Color.parse(c).downgrade(ColorSystem.EIGHT_BIT) for c in palette]
    assert len({d.number for d in down}) == len(palette)  # no two bins merge
    # each is an xterm colour: 256 colours show what truecolor does (rich maps a light grey to its neighbour)
    for d, c in zip(down, palette):
        assert max(abs(a - b) for a, b in zip(d.get_truecolor(), Color.parse(c).get_truecolor())) <= 10, c


def test_special_cells_differ_from_every_heat_colour_in_256_colours():
    heat = {Color.parse(c).downgrade(ColorSystem.EIGHT_BIT).number for c in SEQUENTIAL + DIVERGING}
    styles = (NEG_INF_STYLE, BEFORE_STYLE, MASKED_STYLE)
    special = {background(s).downgrade(ColorSystem.EIGHT_BIT).number for s in styles}
    assert len(special) == 3 and not special & heat


def test_attention_weights_point_one_and_point_three_differ_on_the_fixed_scale():
    fixed = Scale(0.0, 1.0, False)
    assert fixed.style(0.1) != fixed.style(0.3)
    assert fixed.bin(0.0) == 0 and fixed.bin(1.0) == len(SEQUENTIAL) - 1


def test_slice_and_row_scales_spread_close_weights():
    mat = np.array([[0.12, 0.17, 0.41], [0.30, 0.31, 0.39]])
    fixed = heat_for(mat, [0, 1], [0, 1, 2], probability=True)
    assert fixed.covers == "probabilities" and fixed.scale.style(0.12) == fixed.scale.style(0.17)
    whole = heat_for(mat, [0, 1], [0, 1, 2], probability=True, mode="slice")
    assert (whole.scale.lo, whole.scale.hi) == (0.12, 0.41) and whole.scale.style(0.12) != whole.scale.style(0.17)
    rows = heat_for(mat, [0, 1], [0, 1, 2], probability=True, mode="row")
    assert (rows.at(1).lo, rows.at(1).hi) == (0.30, 0.39)
    assert rows.at(1).style(0.30) != rows.at(1).style(0.31) and rows.at(0).bin(0.41) == len(SEQUENTIAL) - 1


def test_signed_values_diverge_around_zero():
    heat = heat_for(np.array([[-2.0, 0.0, 1.0]]), [0], [0, 1, 2])
    assert heat.scale.diverging and heat.scale.ends == (-2.0, 2.0)
    assert background(heat.scale.style(0.0)).name == DIVERGING[len(DIVERGING) // 2]


class Guarded:
    """A slice that refuses to be read whole: only fancy-indexed windows of it."""

    def __init__(self, arr):
        self.arr, self.shape, self.size, self.reads = arr, arr.shape, arr.size, []

    def __getitem__(self, key):
        self.reads.append(key)
        return self.arr[key]

    def __array__(self, *args, **kwargs):
        raise AssertionError("the whole slice was read")


@pytest.mark.parametrize("mode", ["fixed", "row", "slice"])
def test_a_big_slice_is_scaled_from_the_cells_shown(mode):
    big = Guarded(np.random.default_rng(0).normal(size=(8, 50257)))
    heat = heat_for(big, [0, 1, 7], [0, 1, 50256], mode=mode)
    assert heat.windowed and len(big.reads) == 1
    assert "shown" in ColourLegend(heat).text(200).plain


def test_legend_is_a_bar_with_its_end_values_and_what_it_covers():
    heat = heat_for(np.array([[0.1, 0.9]]), [0], [0, 1], probability=True)
    line = render(ColourLegend(heat, hint="V: scale"), width=60).rstrip("\n")
    assert line.startswith("0 ") and "█" * len(SEQUENTIAL) in line and " 1 " in line
    assert "[0, 1]" in line and "V: scale" in line


@pytest.mark.parametrize("width", [30, 40, 44, 48, 60, 120])
@pytest.mark.parametrize("extra", [{"seen": {"masked"}}, {"note": "values ×1e-06"}], ids=["masked", "note"])
def test_legend_fits_narrow_widths_without_a_cut(width, extra):
    heat = heat_for(np.array([[0.1456, 0.2278], [0.5, 0.5]]), [0, 1], [0, 1], probability=True, mode="row")
    line = ColourLegend(heat, row=0, hint="V: scale", **extra).text(width)
    assert line.cell_len <= width or width < 44  # 44 columns hold the shortest form whole
    if width >= 44:
        assert "…" not in line.plain and "0.1" in line.plain and "0.2" in line.plain and "row 0" in line.plain
        assert ("masked" if "seen" in extra else "×1e-06") in line.plain
    if width >= 60:
        assert "0.146" in line.plain and "0.228" in line.plain


def test_legend_in_256_colours_draws_each_bin():
    heat = heat_for(np.array([[0.0, 1.0]]), [0], [0, 1], probability=True)
    out = render(ColourLegend(heat), width=60, color_system="256")
    codes = {Color.parse(c).downgrade(ColorSystem.EIGHT_BIT).number for c in SEQUENTIAL}
    assert {int(n) for n in re.findall(r"38;5;(\d+)", out)} >= codes


def test_masked_scores_and_weights_are_grey_and_named():
    t = explain.run("gpt")
    masked = render(step_output(t, t["blocks.0.attn.masked"], heat=True), width=60, color_system="truecolor")
    assert "48;2;88;88;88" in masked and re.search(r"−∞ +masked", re.sub(r"\x1b\[[0-9;]*m", "", masked))
    pattern = render(step_output(t, t["blocks.0.attn.pattern"], heat=True), width=60, color_system="truecolor")
    plain = re.sub(r"\x1b\[[0-9;]*m", "", pattern)
    assert "48;2;48;48;48" in pattern and "masked (score −inf)" in plain and "fixed [0, 1]" in plain
    assert all(len(line) <= 60 for line in plain.splitlines())


def test_without_colours_values_only_and_no_bar():
    t = explain.run("gpt")
    out = render(step_output(t, t["blocks.0.attn.pattern"], heat=False), width=60)
    assert "█" not in out and "1.0000" in out
    assert cell_style(float("-inf"), None) == "bold" and cell_style(0.0, None, kind="masked") == "dim"
    legend = ColourLegend(None, no_color=True, seen={"masked", "-inf"}).text(60).plain
    assert legend.startswith("NO_COLOR is set: values only") and "dim: masked" in legend


def test_integer_tensors_and_scalars_get_no_colour():
    t = explain.run("gpt")
    tokens = render(step_output(t, t["tokens"], heat=True), width=60, color_system="truecolor")
    assert "48;2" not in tokens and "█" not in tokens and "no colour" in tokens
    loss = render(step_output(t, t["loss"], heat=True), width=60, color_system="truecolor")
    assert "48;2" not in loss and "█" not in loss


def test_tensor_window_legend_fits_its_width():
    mat = np.random.default_rng(1).normal(size=(4, 40))
    for width in (40, 48, 80):
        out = render(TensorWindow(mat, heat=True), width=width)
        assert all(len(line) <= width for line in out.splitlines()) and "█" in out


def test_draw_window_collects_the_special_cells_it_draws():
    scores = np.array([[0.5, -np.inf], [0.2, 0.3]])
    weights = np.array([[1.0, 0.0], [0.47, 0.53]])
    seen: set[str] = set()
    win = fit_window(weights, (0, 0), (0, 0), 40, 5)
    draw_window(weights, win, scale=Scale(0.0, 1.0, False), masked_by=scores, seen=seen)
    assert seen == {"masked"}
    seen.clear()
    draw_window(scores, fit_window(scores, (0, 0), (0, 0), 40, 5), scale=Scale(-1, 1, True), seen=seen)
    assert seen == {"-inf"}


def test_a_second_mask_draws_its_own_cells_apart_from_the_first():
    causal = np.array([[0.5, -np.inf, -np.inf], [0.2, 0.3, -np.inf]])
    padded = np.array([[0.5, -np.inf, -np.inf], [0.2, -np.inf, -np.inf]])  # key 1 of this text is <pad>
    seen: set[str] = set()
    grid = draw_window(padded, fit_window(padded, (0, 0), (0, 0), 40, 5), scale=Scale(-1, 1, True), before=causal,
                       seen=seen)
    assert seen == {"-inf", "-inf-before"}
    styles = {span.style for span in grid.spans}
    assert NEG_INF_STYLE in styles and BEFORE_STYLE in styles
    legend = ColourLegend(heat_for(padded, [0, 1], [0, 1, 2]), seen=seen)
    assert re.search(r"−∞ +masked here +−∞ +masked before", legend.text(80).plain)
    short = legend.text(44).plain
    assert "here" in short and "before" in short and len(short) <= 44


def test_plain_tutorial_of_two_masks_names_both():
    from explain.tutorial import load_tutorial, run_tutorial

    t = run_tutorial(load_tutorial("13"))
    out = render(step_output(t, t["blocks.0.attn.pad_masked"], heat=True, lead=(1, 0)), width=80,
                 color_system="256")
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    assert re.search(r"masked here +−∞ +masked before", plain), plain


def test_a_window_one_row_high_drops_its_elision_not_the_legend():
    """Room for one row: the cursor's row is drawn without the ⋮ above it, so the grid keeps to its height and
    the legend under it stays on screen."""
    mat = np.arange(36, dtype=float).reshape(6, 6)
    win = fit_window(mat, (0, 0), (5, 0), 60, 2, col_labels=[str(i) for i in range(6)])
    assert win.rows == [5]
    assert len(draw_window(mat, win, col_labels=[str(i) for i in range(6)]).plain.splitlines()) == 3


def test_masked_weights_stay_out_of_the_row_and_slice_ranges():
    scores = np.array([[0.3, -np.inf, -np.inf], [0.1, 0.2, -np.inf], [0.1, 0.2, 0.3]])
    weights = np.array([[1.0, 0.0, 0.0], [0.45, 0.55, 0.0], [0.3, 0.33, 0.37]])
    rows = heat_for(weights, [0, 1, 2], [0, 1, 2], True, "row", masked_by=scores)
    assert (rows.at(1).lo, rows.at(1).hi) == (0.45, 0.55)  # not [0, 0.55]: the masked 0 is left out
    assert rows.at(0).bin(1.0) == len(SEQUENTIAL) // 2  # one weight left: the middle colour, neither end
    whole = heat_for(weights, [0, 1, 2], [0, 1, 2], True, "slice", masked_by=scores)
    assert (whole.scale.lo, whole.scale.hi) == (0.3, 1.0)
    big = Guarded(np.zeros((8, 50257)))
    mask = Guarded(np.zeros((8, 50257)))
    assert heat_for(big, [0, 7], [0, 50256], True, "row", masked_by=mask).windowed and len(mask.reads) == 1


def test_a_narrow_legend_with_a_line_to_spare_keeps_its_words():
    heat = heat_for(np.array([[-0.5, 0.5]]), [0], [0, 1])
    legend = ColourLegend(heat, seen={"-inf", "-inf-before"}, hint="V: scale")
    one = legend.lines(60, room=1)
    assert len(one) == 1 and "here" in one[0].plain and one[0].cell_len <= 60
    two = [line.plain for line in legend.lines(60, room=2)]
    assert len(two) == 2 and "0 at the centre" in two[0] and "masked here" in two[1] and "masked before" in two[1]
    assert len(legend.lines(200, room=2)) == 1  # fits whole on one line: one line
