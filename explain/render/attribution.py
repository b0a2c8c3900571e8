"""Rich renderables of direct logit attribution (:mod:`explain.interp.attribution`): each part's contribution,
largest first, then their sum beside the run's logit, and the convention the numbers follow."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from explain.interp.attribution import CONVENTION, Attribution
from explain.ops.base import num, residue


def attribution_table(a: Attribution, digits: int = 4) -> Group:
    tokens = list(a.trace.labels.get("pos") or [])
    what = f"logit[{a.word_text!r}]" + (f" − logit[{a.vs_text!r}]" if a.vs is not None else "")
    after = tokens[a.position] if a.position < len(tokens) else str(a.position)
    title = Text(f"{what} after position {a.position} ({after}): who wrote it", style="italic")
    table = Table()
    table.add_column("rank", justify="right")
    table.add_column("part", no_wrap=True)
    table.add_column("contribution", justify="right")
    for i, (part, value) in enumerate(a.ranked(), 1):
        table.add_row(str(i), part, num(value, digits))
    sums = Text(f"sum of the {len(a.parts)} contributions = {num(a.total, digits)}; the run's {what} = "
                f"{num(a.logit, digits)} (difference {residue(a.total - a.logit)})")
    return Group(title, table, sums, Text(f"Note: {CONVENTION}.", style="dim"))
