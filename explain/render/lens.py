"""Rich renderables of the logit lens (:mod:`explain.interp.lens`): per point, the top word at every position
with its probability, and the chosen word's rank and probability."""

from __future__ import annotations

from rich.table import Table

from explain.interp.lens import Lens
from explain.ops.base import num


def lens_grid(lens: Lens, digits: int = 2) -> Table:
    """Points down, positions across: the top word at each position and its probability."""
    tokens = list(lens.trace.labels.get("pos") or [])
    table = Table(title="logit lens: the top word at each position, read after each layer", title_justify="left")
    table.add_column("layer", justify="right", no_wrap=True)
    for t, tok in enumerate(tokens):
        table.add_column(f"{t} {tok}", no_wrap=True, style="bold" if t == lens.position else "")
    for row in lens.rows:
        table.add_row(row.label, *[f"{w} {num(p, digits)}" for _, w, p in row.top])
    return table


def lens_word(lens: Lens, digits: int = 4) -> Table:
    """Points down: the top word at the position read, and the chosen word's rank and probability."""
    pos = lens.position
    tokens = list(lens.trace.labels.get("pos") or [])
    after = tokens[pos] if pos < len(tokens) else str(pos)
    table = Table(title=f"after position {pos} ({after}): the next word, read after each layer", title_justify="left")
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
    return table
