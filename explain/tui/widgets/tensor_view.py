"""The result matrix: the current step's output at the chosen slice, a window that fits the widget and follows
the cell cursor (``…`` and ``⋮`` where rows or columns are elided), index rulers with token labels, the
colour legend (a gradient bar with its end values, what the scale covers, swatches for −inf and masked cells),
and the slice always named. The colour scale is the view's (``V`` cycles fixed, per row, per slice).

A repaint reads only the window's cells: the colour scale of a small slice is computed once per step, slice
and scale mode and cached; a big slice (logits, 50257 wide) is scaled over the cells shown.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.events import Click
from textual.reactive import reactive
from textual.widget import Widget

from explain import ops
from explain.core.shape_rules import fmt_shape
from explain.ops.base import num
from explain.render.colour import ColourLegend, Heat, heat_for
from explain.render.fit import matrix_least
from explain.render.grid import Window, draw_window, fit_window, shown
from explain.render.measure import FOOT_LINES, matrix_min_h, matrix_size, number_format_of
from explain.render.step import axis_labels, mask_sources
from explain.render.tensor import NumberFormat
from explain.tui.messages import CellFocused
from explain.tui.state import View, changed, lead_shape, slice_label

RELAYOUT = ("trace", "index", "lead", "precision", "show")  # the changes that can change its size


class TensorView(Widget, can_focus=True):
    """The step's output as a matrix with a cell cursor. Posts :class:`CellFocused` on a click or ↑/↓."""

    BINDINGS = [
        Binding("up", "nudge(-1)", "cell up", show=False),
        Binding("down", "nudge(1)", "cell down", show=False),
    ]

    view: reactive[View | None] = reactive(None, layout=False)
    hint: reactive[str] = reactive("", layout=False)  # what the layout hid for lack of room, said on the title

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._origin = (0, 0)
        self._title_lines = 1
        self._window: Window | None = None
        self._scales: dict[tuple, Heat | NumberFormat] = {}  # per step and slice: colours, number format

    def watch_view(self, old: View | None, new: View | None) -> None:
        if old is None or new is None or old.trace is not new.trace or old.index != new.index:
            self._origin = (0, 0)
        if old is not None and new is not None and old.trace is not new.trace:
            self._scales.clear()
        if changed(old, new, RELAYOUT):  # its size (auto) may change: a layout, in the same frame
            self.refresh(layout=True)

    @property
    def page(self) -> tuple[int, int]:
        """Rows and columns of the window last drawn: how far H J K L move the cursor."""
        if self._window is None:
            return 1, 1
        return (max(1, sum(r is not None for r in self._window.rows)),
                max(1, sum(c is not None for c in self._window.cols)))

    def get_content_width(self, container: Any, viewport: Any) -> int:
        """``width: auto`` (beside a drill-down that takes the rest): the matrix whole and a column before the
        drill-down's rule (fit.fits_beside counts it)."""
        return matrix_size(self.view, container.width)[0] + 1 if self.view is not None else 30

    def get_content_height(self, container: Any, viewport: Any, width: int) -> int:
        """``height: auto`` (below the operands, where it shows whole): titles, rulers, every row, legend; or,
        where the screen's layout class gives it its least (``-matrix-least``), MATRIX_MIN_ROWS of its rows."""
        if self.view is None:
            return 1
        if any(node.has_class("-matrix-least") for node in self.ancestors):
            return matrix_least(matrix_size(self.view, width)[1], matrix_min_h(self.view, width))
        return matrix_size(self.view, width)[1]

    def _heat(self, view: View, mat, win: Window, sources: dict) -> Heat:
        """The window's colours in the view's scale mode, cached per step, slice and mode unless they were
        computed from the cells shown (a big slice), which costs only the window."""
        key = ("heat", view.index, view.lead, view.scale)
        cached = self._scales.get(key)
        if isinstance(cached, Heat):
            return cached
        heat = heat_for(mat, shown(win.rows), shown(win.cols), probability=ops.get(view.step.op).probability,
                        mode=view.scale, masked_by=sources.get("masked_by"))
        if not heat.windowed:
            self._scales[key] = heat
        return heat

    def render(self) -> Text:
        view = self.view
        if view is None:
            return Text("")
        step = view.step
        lines = [Text.assemble(("result ", "bold"), (step.syms.out, "bold cyan"), f"  {fmt_shape(step.shape)}",
                               (f"   {self.hint}" if self.hint else "", "dim italic"))]
        if lead_shape(step):
            lines.append(Text.assemble(("slice ", "dim"), (slice_label(step, view.lead, view.trace), "bold yellow"),
                                       ("  s/S b/B", "dim")))
        self._title_lines = len(lines)
        mat = view.matrix()
        if mat is None:
            return Text("\n").join([*lines, Text("(shape only: no values)", style="dim")])
        if not step.shape:  # a scalar (the loss): a number with its formula, not a 1×1 grid
            return Text("\n").join([Text.assemble(("result ", "bold"), (step.syms.out, "bold cyan")), Text(""),
                                    Text.assemble((f"{step.syms.out} = ", "bold"),
                                                  (num(float(mat[0, 0]), view.precision), "bold green")),
                                    Text(step.formula, style="dim")])
        nf = number_format_of(view)
        nd = len(step.shape)
        row_labels = axis_labels(view.trace, step, nd - 2, view.lead) if nd >= 2 else None
        col_labels = axis_labels(view.trace, step, nd - 1, view.lead) if nd >= 1 else None
        width, height = self.content_size.width, self.content_size.height
        win = fit_window(mat, self._origin, view.cell, max(width, 8),
                         max(height - self._title_lines - FOOT_LINES, 3),
                         row_labels=row_labels, col_labels=col_labels, precision=nf, values=view.values)
        self._window = win
        self._origin = (win.row_start, win.col_start)
        sources = mask_sources(view.trace, step, view.lead)
        heat = self._heat(view, mat, win, sources) if view.heat and not nf.integer else None  # ids: no colour
        seen: set[str] = set()
        grid = draw_window(mat, win, row_labels=row_labels, col_labels=col_labels, precision=nf,
                           values=view.values, scale=heat, cursor=view.cell, seen=seen, **sources)
        hint = "V: scale" if heat is not None else "" if view.no_color else "v: colours"
        # the legend takes a second line where the pane has one to spare (beside the drill-down), so a narrow
        # pane keeps its words whole rather than shortened
        room = height - self._title_lines - win.header_lines - len(win.rows)
        legend = ColourLegend(heat, row=view.cell[0], seen=seen, note=nf.legend(), hint=hint,
                              integer=nf.integer, no_color=view.no_color).lines(max(width, 8), room)
        return Text("\n", no_wrap=True, overflow="ellipsis").join([*lines, grid, *legend])

    def on_click(self, event: Click) -> None:
        if self._window is None:
            return
        cell = self._window.cell_at(event.x - self.gutter.left, event.y - self.gutter.top - self._title_lines)
        if cell is not None:
            self.post_message(CellFocused(*cell))

    def action_nudge(self, d_row: int) -> None:
        if self.view is not None:
            self.post_message(CellFocused(self.view.cell[0] + d_row, self.view.cell[1]))
