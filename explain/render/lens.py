"""Rich renderables of the logit lens (:mod:`explain.interp.lens`): per point, the top word at every position
with its probability, and the chosen word's rank and probability."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from explain.interp.lens import Lens


def lens_grid(lens: Lens, digits: int = 2) -> Group:
    """Points down, positions across: the top word at each position and its probability (the strings are the
    lens's own, :meth:`~explain.interp.lens.Lens.grid_parts`, which ``print(lens)`` writes too)."""
    caption, grid = lens.grid_parts(digits)
    # the caption is a line of its own above the table, as attribution's is: a table's title wraps to the table's
    # width, which cut this one into three lines above a narrow table
    table = Table()
    # the layer column is never cut ('10+a…' lost which layer), and a cell too narrow for its word and probability
    # wraps the probability onto a second line instead of cutting it ('␣the 0.…')
    table.add_column(Text(grid.columns[0]), justify="right", no_wrap=True, min_width=max(len(r.label) for r in lens.rows))
    for c, heading in enumerate(grid.columns[1:], 1):
        table.add_column(Text(heading), style="bold" if c == grid.bold else "")
    for row in grid.rows:
        table.add_row(*map(Text, row))  # as Text: a token '[unused0]' (BERT's) is not markup
    return Group(Text(caption.text, style="italic"), table)


def lens_word(lens: Lens, digits: int = 4) -> Group:
    """Points down: the top word at the position read, and the chosen word's rank and probability."""
    caption, grid = lens.word_parts(digits)
    table = Table()
    for c, heading in enumerate(grid.columns):
        table.add_column(Text(heading), justify="right" if grid.aligned_right(c) else "left", no_wrap=c != 2)
    for row in grid.rows:
        table.add_row(*map(Text, row))  # as Text: a token '[unused0]' (BERT's) is not markup
    return Group(Text(caption.text, style="italic"), table)
