"""The drill-down: how the selected cell was computed, from the op's own cell explanation
(``trace.explain(step, index)``), drawn with :func:`explain.render.step.explanation_view`.

Three parts: a head line (which cell), a scrolling body (the title, the table of terms, the arithmetic) and
the result line pinned at the bottom, so the answer is on screen at every size; ``d``/``u`` scroll the body
when it is longer than the pane. The table of terms is windowed (``⋮``) to the rows the pane has room for.

Explanations are cached per step and cell, so moving back and forth costs nothing.
"""

from __future__ import annotations

import io
from dataclasses import replace
from typing import Any

from rich.console import Console, Group
from rich.measure import Measurement
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.reactive import reactive
from textual.widgets import Static

from explain.errors import ExplainError
from explain.ops.base import CellExplanation, idx, precision
from explain.render.step import explanation_body, explanation_result, widest_row
from explain.tui.state import View, changed

CACHE_SIZE = 256
DEPENDS = ('trace', 'index', 'lead', 'cell', 'precision')
MEASURE_ROWS = 64  # the widest cell of each column of the table of terms is looked for in this many rows
_measurer = Console(file=io.StringIO(), width=100, color_system=None, legacy_windows=False)


class CellPanel(Vertical):
    """How the cell under the cursor was computed: head, scrolling body, pinned result."""

    view: reactive[View | None] = reactive(None, repaint=False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._cache: dict[tuple, CellExplanation | str] = {}
        self._measures: dict[tuple, tuple[int, int, int]] = {}  # needs(), per step, cell and width
        self._table_rows = 12
        self._planned: tuple[int, int] | None = None  # the content size the step screen's layout gives it
        self._drawn_at: tuple[int, int] | None = None  # the size the drill-down was last drawn for

    def compose(self) -> ComposeResult:
        yield Static(id="cell-head")
        with VerticalScroll(id="cell-scroll", can_focus=False):
            yield Static(id="cell-body")
        yield Static(id="cell-result")

    def explanation(self, view: View) -> CellExplanation | str:
        """The cell's explanation, or a one-line reason there is none."""
        index = view.index_of_cell
        key = (id(view.trace), view.index, index, view.precision)
        if key not in self._cache:
            if len(self._cache) >= CACHE_SIZE:
                self._cache.clear()
            try:
                with precision(view.precision):  # its arithmetic at the +/- setting
                    self._cache[key] = view.trace.explain(view.step, index)
            except ExplainError as exc:
                self._cache[key] = str(exc)
        return self._cache[key]

    # -- what it shows ----------------------------------------------------------------------------------------
    def parts(self, view: View, table_rows: int, width: int | None = None) -> tuple[Any, Any, Any]:
        """The head, the body and the result for ``view``, the table cut to ``table_rows`` rows, the result
        broken to ``width`` columns (before its ``=`` signs: the value is always whole)."""
        step = view.step
        head = Text.assemble(("drill-down ", "bold"), (f"{step.syms.out}{idx(view.index_of_cell)}", "bold cyan"),
                             ("  h j k l move · d u scroll", "dim"))
        if step.output is None:
            return head, Text("shape only: no values to explain", style="dim"), Text("")
        ex = self.explanation(view)
        if isinstance(ex, str):
            return head, Text(ex, style="red"), Text("")
        return (head, explanation_body(ex, precision=view.precision, max_rows=table_rows),
                explanation_result(ex, precision=view.precision, width=width))

    def needs(self, view: View, width: int) -> tuple[int, int, int]:
        """(natural width, lines for everything, lines with the table cut to one row) at ``width`` columns.

        Measured on a stand-in with one row in the table of terms, each of its cells the widest of that column
        (over the first MEASURE_ROWS rows): every row of a table is one line (its columns never wrap), so the
        stand-in's width is the table's and its height plus the other rows is the whole drill-down's, at the
        cost of one row instead of a rich layout of every row (a 768-term dot product measured in full took
        ~20 ms, three times per step change). Cached per step, cell and width."""
        key = (id(view.trace), view.index, view.index_of_cell, view.precision, width)
        if key in self._measures:
            return self._measures[key]
        if view.step.output is None or isinstance(self.explanation(view), str):
            return 40, 3, 3
        ex = self.explanation(view)
        assert isinstance(ex, CellExplanation)
        head, _, result = self.parts(view, 1, max(20, width - 2))
        stand_in = replace(ex, rows=[widest_row(ex, view.precision, MEASURE_ROWS)]) if ex.rows else ex
        body = explanation_body(stand_in, precision=view.precision, max_rows=1)
        options = _measurer.options.update(width=max(20, width - 2))
        natural = Measurement.get(_measurer, options, Group(head, body, result)).maximum + 3
        full = len(_measurer.render_lines(Group(head, body, result), options, pad=False)) + 1
        full += max(0, len(ex.rows) - 1)
        short = full - max(0, len(ex.rows) - 2)
        if len(self._measures) >= CACHE_SIZE:
            self._measures.clear()
        self._measures[key] = (natural, full, short)
        return natural, full, short

    def plain(self) -> str:
        """The whole drill-down as plain text (what a test reads)."""
        if self.view is None:
            return ""
        console = Console(file=io.StringIO(), width=200, color_system=None, legacy_windows=False)
        console.print(Group(*self.parts(self.view, self._table_rows)), crop=False, soft_wrap=True)
        return console.file.getvalue()

    # -- drawing -------------------------------------------------------------------------------------------
    def watch_view(self, old: View | None, new: View | None) -> None:
        if changed(old, new, DEPENDS):
            self._draw()

    def plan_size(self, width: int, height: int) -> None:
        """The content size the screen's layout is about to give this pane: the drill-down is drawn for it in
        the same frame as the step change, instead of for the old size and again when the resize comes."""
        self._planned = (max(1, width), max(1, height))

    def _drill_size(self) -> tuple[int, int]:
        if self._planned is not None:
            return self._planned
        return self.content_size.width, self.content_size.height

    def on_resize(self) -> None:
        self._planned = None  # the real size is here: from now on it is the one to draw for
        if self._drawn_at != self._drill_size():
            self._draw()

    def _draw(self) -> None:
        view = self.view
        if view is None or not self.is_mounted or not all(self._drill_size()):  # no size yet: drawn on resize
            return
        head_w = self.query_one("#cell-head", Static)
        body_w = self.query_one("#cell-body", Static)
        result_w = self.query_one("#cell-result", Static)
        ex = self.explanation(view) if view.step.output is not None else None
        rows = len(ex.rows) if isinstance(ex, CellExplanation) else 0
        self._table_rows = self._rows_that_fit(view, rows)
        head, body, result = self.parts(view, self._table_rows, self._drill_size()[0])
        head_w.update(head)
        body_w.update(body)
        result_w.update(result)
        scroll = self.query_one("#cell-scroll", VerticalScroll)
        # the body takes what it needs, up to what leaves the head and the result on screen: the result
        # follows the arithmetic, and is pinned at the bottom when the body has to scroll
        self._drawn_at = self._drill_size()
        result_h = len(result.plain.split("\n")) if isinstance(result, Text) else 1
        if result_w.styles.height is None or result_w.styles.height.value != result_h:
            result_w.styles.height = result_h  # a style set is a layout: only when it changes
        scroll.styles.max_height = max(1, self._drawn_at[1] - 1 - result_h)
        scroll.scroll_home(animate=False)

    def _rows_that_fit(self, view: View, rows: int) -> int:
        """How many rows of the table of terms fit beside the rest of the body (at least 2)."""
        width, height = self._drill_size()
        if rows <= 2 or height <= 0:
            return max(rows, 2)
        _, full, _ = self.needs(view, width or 40)
        spare = height - (full - rows)
        return max(2, min(rows, spare))

    def scroll_body(self, direction: int) -> None:
        """Scroll the body half a pane (the result line stays)."""
        scroll = self.query_one("#cell-scroll", VerticalScroll)
        step = max(1, scroll.size.height // 2)
        scroll.scroll_relative(y=direction * step, animate=False)
