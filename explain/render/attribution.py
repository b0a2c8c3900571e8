"""Rich renderables of direct logit attribution (:mod:`explain.interp.attribution`): each part's contribution,
largest first, then their sum beside the run's logit, and the convention the numbers follow."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from explain.interp.attribution import Attribution


def attribution_table(a: Attribution, digits: int = 4) -> Group:
    """The parts ranked by size, their sum and the convention: the attribution's own strings
    (:meth:`~explain.interp.attribution.Attribution.table_parts`, which ``print(a)`` writes too)."""
    caption, grid, sums, note = a.table_parts(digits)
    table = Table()
    for c, heading in enumerate(grid.columns):
        table.add_column(Text(heading), justify="right" if grid.aligned_right(c) else "left", no_wrap=c == 1)
    for row in grid.rows:
        table.add_row(*map(Text, row))  # as Text: a token '[unused0]' (BERT's) is not markup
    return Group(Text(caption.text, style="italic"), table, Text(sums.text), Text(note.text, style="dim"))
