"""One head's attention pattern as a heatmap tile, for the heads screen: a one-line title (``head 3``, the
selected tile marked ``▶``, the head the step view is on said ``· shown``), key indices above, query labels on
the left, every key column whenever the tile is as wide as :meth:`PatternTile.needed_width`."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from explain.render.colour import heat_for
from explain.render.grid import draw_window, fit_window, shown
from explain.render.step import axis_labels, mask_sources
from explain.tui.state import View

PRECISION = 2  # two decimals: 0.10 and 0.30 apart, and 12 tiles in 120 columns


class PatternTile(Widget):
    """The 2-D slice ``view.lead`` of the view's step, fitted to the tile, with the view's cell marked."""

    DEFAULT_CSS = "PatternTile { height: auto; width: 1fr; }"

    def __init__(self, view: View, head: int | None, selected: bool = False, shown: bool = False) -> None:
        super().__init__()
        self.view, self.head, self.selected, self.shown = view, head, selected, shown

    def _labels(self) -> list[str] | None:
        step = self.view.step
        return axis_labels(self.view.trace, step, len(step.shape) - 2, self.view.lead)

    def needed_width(self) -> int:
        """Characters the whole pattern needs: query labels and every key column (keys by index only: they are
        the same tokens as the rows, and word rulers would double the width)."""
        mat = self.view.matrix()
        win = fit_window(mat, (0, 0), (0, 0), 10_000, mat.shape[0] + 1, row_labels=self._labels(),
                         precision=PRECISION, values=self.view.values)
        return win.label_width + sum(win.widths)

    def title(self) -> Text:
        batch = self.view.lead[0] if len(self.view.lead) > 1 else None
        name = f"head {self.head}" if self.head is not None else self.view.step.name
        text = Text(("▶ " if self.selected else "  ") + (f"b{batch} " if batch else "") + name,
                    style="bold reverse" if self.selected else "bold yellow")
        if self.shown:
            text.append(" · shown", style="dim")
        return text

    def get_content_height(self, container, viewport, width: int) -> int:
        return self.view.matrix().shape[0] + 2  # title, key ruler, one line per query

    def render(self) -> Text:
        view = self.view
        mat, rows = view.matrix(), self._labels()
        win = fit_window(mat, (0, 0), view.cell, max(self.content_size.width, 8), mat.shape[0] + 1,
                         row_labels=rows, precision=PRECISION, values=view.values)
        # the step view's colour scale (V), and its masked cells grey: a tile is small, so its scale is cheap
        sources = mask_sources(view.trace, view.step, view.lead)
        heat = (heat_for(mat, shown(win.rows), shown(win.cols), True, view.scale, sources.get("masked_by"))
                if view.heat else None)
        body = draw_window(mat, win, row_labels=rows, precision=PRECISION, values=view.values, scale=heat,
                           cursor=view.cell, **sources)
        return Text("\n").join([self.title(), body])
