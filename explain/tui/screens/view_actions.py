"""The step screen's free movement and view settings: same op kind (``]``/``[``), the cell cursor and pages,
slices (``s``/``b``), what cells show (``v``), the colour scale (``V``), precision (``+``/``-``), panes (``i``,
``T``), the drill-down's and narration's scrolling, search and go-to (``/``, ``g``), the heads view (``m``),
help and quit. A mixin for :class:`~explain.tui.screens.step.StepScreen`, which owns the view these change."""

from __future__ import annotations

from dataclasses import replace

from explain.render.colour import SCALE_MODES, SCALE_NAMES
from explain.tui import layout
from explain.tui.state import MAX_PRECISION, MIN_PRECISION, SHOW_MODES, View, next_of_kind
from explain.tui.widgets.cell_panel import CellPanel
from explain.tui.widgets.tensor_view import TensorView


class ViewActions:
    """Movement and view settings, for :class:`~explain.tui.screens.step.StepScreen` (which provides view, tour,
    trace, tutorial, _layout, _leave_path and the Screen methods)."""

    def _kind(self, direction: int) -> None:
        i = next_of_kind(self.trace, self.view.index, direction)
        if i is None:
            self.notify(f"no {'later' if direction > 0 else 'earlier'} {self.view.step.op} step", timeout=3)
            return
        self._leave_path(f"{'] (next' if direction > 0 else '[ (previous'} {self.view.step.op})")
        self.view = self.view.go(i)

    def action_next_kind(self) -> None:
        self._kind(1)

    def action_previous_kind(self) -> None:
        self._kind(-1)

    def action_move(self, d_row: int, d_col: int) -> None:
        self.view = self.view.move(d_row, d_col)

    def action_page(self, d_row: int, d_col: int) -> None:
        rows, cols = self.query_one(TensorView).page
        self.view = self.view.move(d_row * rows, d_col * cols)

    def action_turn(self, axis: int, delta: int) -> None:
        if not self.view.step.shape[:-2]:
            self.notify("this step has no slices: it is 2-D or smaller", timeout=3)
            return
        self.view = self.view.turn(axis, delta)

    def action_cycle_show(self) -> None:
        if self.view.no_color:
            self.notify("NO_COLOR is set: cells always show values", timeout=3)
            return
        mode = SHOW_MODES[(SHOW_MODES.index(self.view.show) + 1) % len(SHOW_MODES)]
        self.view = replace(self.view, show=mode)
        self.notify(f"cells show: {dict(both='values on colours', colours='colours', values='values')[mode]}",
                    timeout=2)

    def action_cycle_scale(self) -> None:
        if not self.view.heat:
            self.notify("no colours to scale: NO_COLOR is set" if self.view.no_color else
                        "no colours to scale: v turns them on", timeout=3)
            return
        mode = SCALE_MODES[(SCALE_MODES.index(self.view.scale) + 1) % len(SCALE_MODES)]
        self.view = replace(self.view, scale=mode)
        self.notify(f"colour scale: {SCALE_NAMES[mode]}", timeout=2)

    def action_precision(self, delta: int) -> None:
        p = max(MIN_PRECISION, min(MAX_PRECISION, self.view.precision + delta))
        self.view = replace(self.view, precision=p)

    def action_toggle_operands(self) -> None:
        shown = bool(self._layout and self._layout.operands_h)
        self.show_operands = not shown
        if self.show_operands and self._layout and not self._layout.operands_h:
            self.notify(f"no room for the operands at {self.size.height} rows: the drill-down and the result "
                        "come first (make the terminal taller)", timeout=4)

    def action_toggle_sidebar(self) -> None:
        tutorial = self.tutorial is not None and self.tutorial_on
        if not layout.centre_width(self.size.width, tutorial)[0]:
            need = 80 if tutorial else layout.SIDE_MIN
            self.notify(f"the {'narration' if tutorial else 'step tree'} needs {need} columns; this terminal has "
                        f"{self.size.width}. / searches the steps and g goes to one by name.", timeout=5)
            return
        self.show_sidebar = not self.show_sidebar

    def action_scroll_drill(self, direction: int) -> None:
        self.query_one(CellPanel).scroll_body(direction)

    def action_search(self) -> None:
        self._open_search("search")

    def action_goto(self) -> None:
        self._open_search("goto")

    def _open_search(self, mode: str) -> None:
        from explain.tui.screens.search import SearchScreen  # lazy: screen loaded on first use

        def chosen(index: int | None) -> None:
            if index is not None and index != self.view.index:
                self._leave_path("search" if mode == "search" else "go to")
                self.view = self.view.go(index)

        self.app.push_screen(SearchScreen(self.trace, mode, current=self.view.index), chosen)

    def action_heads(self) -> None:
        from explain.tui.screens.heads import (  # lazy: screen loaded on first use
            HeadsScreen,
            pattern_step,
        )

        step = pattern_step(self.trace, self.view.index)
        if step is None:
            self.notify("this run has no attention pattern with heads", timeout=3)
            return
        def opened(view: View | None) -> None:  # Enter on a tile: that head's pattern, at the grid's cell
            if view is None:
                return
            if view.index != self.view.index:
                self._leave_path("the heads view")
            self.view = replace(self.view, index=view.index, lead=view.lead, cell=view.cell).clamped()

        self.app.push_screen(HeadsScreen(self.view.go(step.index)), opened)

    def action_help(self) -> None:
        from explain.tui.screens.help import HelpScreen  # lazy: screen loaded on first use

        self.app.push_screen(HelpScreen())

    def action_quit(self) -> None:
        self.app.exit()
