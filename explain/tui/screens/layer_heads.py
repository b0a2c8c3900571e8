"""One layer's heads (``z`` on the layer × head grid, :mod:`explain.tui.screens.heads`): every head's attention
pattern side by side, as heatmaps with their values, the tokens on the rows (queries) and key indices on the
columns, on the [0, 1] scale of probabilities; the cell under the main cursor is marked in every head, so heads
can be compared cell by cell. Also the helpers both screens use (which steps are patterns, the head axis).

As many tiles per row as fit whole (GPT-2 small's 12 heads of a short text: 4 × 3 at 120 columns); more rows
scroll. Arrows choose a head (the one the step view shows is marked), Enter opens it in the step view, ``n`` /
``p`` page to the next / previous layer's pattern. Dismisses with the view to show, or None."""

from __future__ import annotations

from dataclasses import replace

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from explain.trace import Step, Trace
from explain.tui import picture
from explain.tui.needs import is_pattern
from explain.tui.state import View
from explain.tui.widgets.pattern_tile import PatternTile

MAX_TILES = 16
GAP = 1  # columns between tiles (the key ruler and the values already end in a space)


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


def head_axis(step: Step) -> int | None:
    """The position of the head axis among the step's leading (slice) axes, if it has one."""
    axes = list(step.axes[:-2])
    return axes.index("head") if "head" in axes else None


def tiles_per_row(n: int, need: int, width: int) -> int:
    """How many tiles of ``need`` columns fit side by side in ``width``, with GAP between them."""
    return max(1, min(n, (width + GAP) // (need + GAP)))


class LayerHeadsScreen(ModalScreen[View | None]):
    """One tile per head (at most 16) of the pattern in ``view``."""

    DEFAULT_CSS = """
    LayerHeadsScreen { align: center middle; }
    LayerHeadsScreen #dialog { width: 100%; height: 100%; border: round $accent; background: $surface; }
    LayerHeadsScreen #tiles-scroll { height: 1fr; }
    LayerHeadsScreen #tiles { height: auto; grid-rows: auto; grid-gutter: 1 1; }
    """

    BINDINGS = [Binding("escape,q,z", "dismiss(None)", "back to the grid"), Binding("enter", "open", "open head"),
                Binding("left,h", "choose(0, -1)", show=False), Binding("right,l", "choose(0, 1)", show=False),
                Binding("up,k", "choose(-1, 0)", show=False), Binding("down,j", "choose(1, 0)", show=False),
                Binding("n,pagedown", "layer(1)", "next layer"), Binding("p,pageup", "layer(-1)", "previous layer"),
                picture.BINDING]

    def __init__(self, view: View) -> None:
        super().__init__()
        self.view = view  # the step view's own: its head is the one "shown"
        self.pattern = view
        axis = head_axis(view.step)
        self.selected = view.lead[axis] if axis is not None and axis < len(view.lead) else 0
        self._per_row = 1

    # -- what is shown -------------------------------------------------------------------------------------
    def _patterns(self) -> list[Step]:
        return [s for s in self.view.trace if is_pattern(s)]

    def _views(self) -> list[tuple[View, int | None]]:
        step = self.pattern.step
        axis = head_axis(step)
        if axis is None:
            return [(self.pattern, None)]
        lead = self.pattern.lead
        return [(replace(self.pattern, lead=tuple(h if i == axis else x for i, x in enumerate(lead))), h)
                for h in range(min(step.shape[axis], MAX_TILES))]

    def picture_name(self) -> str:
        """``heads gpt blocks.1.attn.pattern``: the model and the pattern whose heads are shown."""
        return f"heads {self.view.trace.config.model} {self.pattern.step.name}"

    def _header(self) -> Text:
        step, patterns = self.pattern.step, self._patterns()
        n = step.shape[head_axis(step)] if head_axis(step) is not None else 1
        more = f" (first {MAX_TILES} of {n})" if n > MAX_TILES else ""
        layer = f"  pattern {patterns.index(step) + 1} of {len(patterns)}" if len(patterns) > 1 else ""
        colours = {"row": "each row's own min–max", "slice": "each head's own min–max"}.get(self.pattern.scale,
                                                                                             "[0, 1]")
        return Text.assemble((step.name, "bold cyan"), f": {n} head{'s' if n != 1 else ''}{more}{layer}. Rows are "
                             f"queries, columns keys; colours on {colours}.\n",
                             ("←↑↓→ choose a head · Enter opens it · n/p layer · c svg · Esc closes", "dim"))

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self._header(), id="heads-title")
            with VerticalScroll(id="tiles-scroll", can_focus=False):  # the arrows choose heads; it scrolls to them
                yield Grid(*self._tiles(), id="tiles")

    def _tiles(self) -> list[PatternTile]:
        shown = self.view.index == self.pattern.index
        axis = head_axis(self.pattern.step)
        current = self.view.lead[axis] if shown and axis is not None and axis < len(self.view.lead) else None
        return [PatternTile(v, h, selected=(h or 0) == self.selected, shown=h == current) for v, h in self._views()]

    def on_mount(self) -> None:
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        """Tiles per row: as many as fit whole in the width there is."""
        tiles = list(self.query(PatternTile))
        if not tiles:
            return
        width = self.query_one("#tiles", Grid).content_size.width or self.size.width - 4
        self._per_row = tiles_per_row(len(tiles), max(t.needed_width() for t in tiles), width)
        grid = self.query_one("#tiles", Grid)
        grid.styles.grid_size_columns = self._per_row
        grid.styles.grid_gutter_horizontal = GAP

    # -- actions -------------------------------------------------------------------------------------------
    def action_choose(self, d_row: int, d_col: int) -> None:
        n = len(self._views())
        target = self.selected + d_row * self._per_row + d_col
        if not 0 <= target < n:
            return
        self.selected = target
        for tile in self.query(PatternTile):
            tile.selected = (tile.head or 0) == target
            tile.refresh()
        chosen = [t for t in self.query(PatternTile) if t.selected]
        if chosen:
            chosen[0].scroll_visible(animate=False)

    def action_open(self) -> None:
        views = self._views()
        self.dismiss(views[min(self.selected, len(views) - 1)][0])

    async def action_layer(self, delta: int) -> None:
        patterns = self._patterns()
        i = patterns.index(self.pattern.step) + delta
        if not 0 <= i < len(patterns):
            self.notify(f"no {'later' if delta > 0 else 'earlier'} attention pattern", timeout=2)
            return
        self.pattern = replace(self.pattern, index=patterns[i].index).clamped()
        self.query_one("#heads-title", Static).update(self._header())
        grid = self.query_one("#tiles", Grid)
        await grid.remove_children()
        await grid.mount_all(self._tiles())
        self._fit()
