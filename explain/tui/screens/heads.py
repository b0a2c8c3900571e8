"""The heads screen (``m``): every head's attention pattern side by side, as heatmaps with the tokens on both
axes (rows are queries, columns keys), on the [0, 1] scale of probabilities; the cell under the main cursor is
marked in every head, so heads can be compared cell by cell."""

from __future__ import annotations

import math
from dataclasses import replace

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from explain import ops
from explain.trace import Step, Trace
from explain.tui.state import View
from explain.tui.widgets.pattern_tile import PatternTile

MAX_TILES = 16


def is_pattern(step: Step) -> bool:
    """An attention pattern: probabilities over positions (not over the vocabulary)."""
    return ops.get(step.op).probability and len(step.shape) >= 2 and step.axes[-1] != "vocab"


def pattern_step(trace: Trace, index: int) -> Step | None:
    """The pattern to show from step ``index``: that step if it is one, else the first one after it in the
    same block, else the nearest one."""
    here = trace[index]
    if is_pattern(here):
        return here
    patterns = [s for s in trace if is_pattern(s)]
    if not patterns:
        return None
    block = here.group[:1]
    same = [s for s in patterns if s.group[:1] == block and s.index > index]
    return same[0] if same else min(patterns, key=lambda s: abs(s.index - index))


class HeadsScreen(ModalScreen[None]):
    """One tile per head (at most 16) of the pattern in ``view``."""

    BINDINGS = [Binding("escape,q,m", "dismiss", "close")]

    def __init__(self, view: View) -> None:
        super().__init__()
        self.view = view

    def compose(self) -> ComposeResult:
        step = self.view.step
        axes = list(step.axes[:-2])
        head = axes.index("head") if "head" in axes else None
        n = step.shape[head] if head is not None else 1
        views = [self.view] if head is None else [
            replace(self.view, lead=tuple(h if i == head else x for i, x in enumerate(self.view.lead)))
            for h in range(min(n, MAX_TILES))]
        more = f" (first {MAX_TILES} of {n})" if n > MAX_TILES else ""
        with Vertical(id="dialog"):
            yield Static(Text.assemble((step.name, "bold cyan"), f": {n} head(s){more}. Rows are queries, "
                                       "columns keys; colours on [0, 1]. Esc closes.", style=""))
            grid = Grid(id="tiles")
            grid.styles.grid_size_columns = max(1, math.ceil(math.sqrt(len(views))))
            with grid:
                for v in views:
                    yield PatternTile(v)
