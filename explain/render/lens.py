"""Rich renderables of the logit lens (:mod:`explain.interp.lens`): per point, the top word at every position
with its probability, and the chosen word's rank and probability."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from explain.interp.lens import Lens
from explain.ops.base import num


def lens_grid(lens: Lens, digits: int = 2) -> Group:
    """Points down, positions across: the top word at each position and its probability."""
    tokens = list(lens.trace.labels.get("pos") or [])
    # the title is a line of its own above the table, as attribution's is: a table's title wraps to the table's
    # width, which cut this one into three lines above a narrow table
    title = Text("logit lens: the top word at each position, read after each layer", style="italic")
    table = Table()
    # the layer column is never cut ('10+a…' lost which layer), and a cell too narrow for its word and probability
    # wraps the probability onto a second line instead of cutting it ('␣the 0.…')
    table.add_column("layer", justify="right", no_wrap=True, min_width=max(len(r.label) for r in lens.rows))
    for t, tok in enumerate(tokens):
        table.add_column(f"{t} {tok}", style="bold" if t == lens.position else "")
    for row in lens.rows:
        table.add_row(row.label, *[f"{w} {num(p, digits)}" for _, w, p in row.top])
    return Group(title, table)


def lens_word(lens: Lens, digits: int = 4) -> Group:
    """Points down: the top word at the position read, and the chosen word's rank and probability."""
    pos = lens.position
    tokens = list(lens.trace.labels.get("pos") or [])
    after = tokens[pos] if pos < len(tokens) else str(pos)
    title = Text(f"after position {pos} ({after}): the next word, read after each layer", style="italic")
    table = Table()
    table.add_column("layer", justify="right", no_wrap=True)
    table.add_column("top word", no_wrap=True)
    table.add_column("p", justify="right")
    if lens.word is not None:
        table.add_column(f"rank of {lens.word_text!r}", justify="right", no_wrap=True)
        table.add_column(f"p({lens.word_text!r})", justify="right", no_wrap=True)
    for row in lens.rows:
        _, w, p = row.top[pos]
        cells = [row.label, w, num(p, digits)]
        if lens.word is not None:
            cells += [str(row.rank), num(row.prob, digits)]
        table.add_row(*cells)
    return Group(title, table)
