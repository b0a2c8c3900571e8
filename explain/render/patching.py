"""Rich renderables of activation patching (:mod:`explain.interp.patching`): one patched run's logit difference
against the clean and corrupted runs, and a sweep's recovered fractions as a heatmap (layers down, positions or
heads across), each cell its number on the diverging palette the matrices use. The strings are the results' own
(:mod:`explain.interp.patch_shown`), which ``print(result)`` and a notebook write too."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from explain.core.shown import Grid, Line, Part
from explain.interp.patch_shown import fraction, patched_parts, rows_legend, runs_line, sweep_parts
from explain.interp.patching import Patched, Sweep

__all__ = ["fraction", "patched_view", "rows_legend", "runs_line", "sweep_heatmap"]
LINE_STYLES = {"warn": "bold", "caption": "italic", "note": "dim"}


def _line(line: Line) -> Text:
    return Text(line.text, style=LINE_STYLES.get(line.style, ""))


def patched_view(p: Patched, digits: int = 4) -> Group:
    return Group(*(_line(part) for part in patched_parts(p, digits) if isinstance(part, Line)))


def _style(v: float) -> str:
    """A background from blue (−1) through white (0) to red (+1), fixed scale: the recovered fraction's own."""
    x = max(-1.0, min(1.0, v))
    r, g, b = (255, int(255 * (1 - x)), int(255 * (1 - x))) if x >= 0 else \
        (int(255 * (1 + x)), int(255 * (1 + x)), 255)
    return f"black on rgb({r},{g},{b})"


def _heatmap(grid: Grid) -> Table:
    table = Table(padding=(0, 1), collapse_padding=True)
    for c, heading in enumerate(grid.columns):
        table.add_column(Text(heading), no_wrap=True, justify="right" if grid.aligned_right(c) else "left")
    for row, heat in zip(grid.rows, grid.heat):
        table.add_row(Text(row[0]), *[Text(text, style=_style(v)) for text, v in zip(row[1:], heat)])
    return table


def sweep_heatmap(s: Sweep, digits: int = 2) -> Group:
    parts: list[Part] = sweep_parts(s, digits)
    return Group(*(_heatmap(part) if isinstance(part, Grid) else _line(part) for part in parts))
