"""One head's attention pattern as a heatmap tile (token labels on both axes), for the heads screen."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from explain.render.grid import draw_window, fit_window
from explain.render.step import axis_labels
from explain.render.tensor import Scale
from explain.tui.state import View, slice_label


class PatternTile(Widget):
    """The 2-D slice ``view.lead`` of the view's step, fitted to the tile, with the view's cell marked."""

    DEFAULT_CSS = "PatternTile { height: 1fr; width: 1fr; padding: 0 1; }"

    def __init__(self, view: View) -> None:
        super().__init__()
        self.view = view

    def render(self) -> Text:
        view, step = self.view, self.view.step
        nd = len(step.shape)
        rows, cols = axis_labels(view.trace, step, nd - 2, view.lead), axis_labels(view.trace, step, nd - 1, view.lead)
        mat = view.matrix()
        win = fit_window(mat, (0, 0), view.cell, max(self.content_size.width, 8),
                         max(self.content_size.height - 1, 3), row_labels=rows, col_labels=cols,
                         precision=min(view.precision, 2), values=view.values)
        scale = Scale(0.0, 1.0, False) if view.heat else None
        title = Text(slice_label(step, view.lead) or step.name, style="bold yellow")
        return Text("\n").join([title, draw_window(mat, win, row_labels=rows, col_labels=cols,
                                                   precision=min(view.precision, 2), values=view.values,
                                                   scale=scale, cursor=view.cell)])
