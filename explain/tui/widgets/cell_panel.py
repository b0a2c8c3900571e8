"""The drill-down: how the selected cell was computed, from the op's own cell explanation
(``trace.explain(step, index)``), drawn with :func:`explain.render.drill.drill_lines`.

Three parts: a head line (which cell), a body (the title, the table of terms, the arithmetic) and the result
line, so the answer is on screen at every size. It is drawn when it paints, for its own content region (as the
result matrix is): the table of terms cut (``⋮``) to the rows that fit, a body still too long scrolled by
``d``/``u`` with the result line pinned at the bottom. Nobody tells it its size before Textual does, and a step
change draws it once, at the size it is given in that frame.

Explanations are cached per step and cell, so moving back and forth costs nothing.
"""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console, Group
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from explain.errors import ExplainError
from explain.ops.base import CellExplanation, idx, precision
from explain.render.drill import Drill, drill_lines, drill_measure
from explain.render.step import explanation_body, explanation_result
from explain.tui.state import View, changed

CACHE_SIZE = 256
DEPENDS = ('trace', 'index', 'lead', 'cell', 'precision')


class CellPanel(Widget):
    """How the cell under the cursor was computed: head, body (its table cut to fit), pinned result."""

    view: reactive[View | None] = reactive(None, repaint=False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._cache: dict[tuple, CellExplanation | str] = {}
        self._measures: dict[tuple, tuple[int, int, int]] = {}  # needs(), per step, cell and width
        self._drawn: tuple[tuple, Drill] | None = None  # the last drawing and what it was drawn for
        self._table_rows = 12
        self.body_offset = 0  # lines of the body scrolled past (d/u)
        self.max_scroll = 0  # how far the body can scroll at the size last drawn (0: it fits)

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
    def head(self, view: View) -> Text:
        return Text.assemble(("drill-down ", "bold"), (f"{view.step.syms.out}{idx(view.index_of_cell)}", "bold cyan"),
                             ("  h j k l move · d u scroll", "dim"))

    def content(self, view: View) -> CellExplanation | Text:
        """The explanation, or a one-line reason there is none (as dim or red text)."""
        if view.step.output is None:
            return Text("shape only: no values to explain", style="dim")
        ex = self.explanation(view)
        return Text(ex, style="red") if isinstance(ex, str) else ex

    def needs(self, view: View, width: int) -> tuple[int, int, int]:
        """(natural width, lines for everything, lines with the table cut to two rows) at ``width`` columns,
        frame included (the padding, and a rule: the layout adds its own line for it below the matrix).
        Cached per step, cell and width."""
        key = (id(view.trace), view.index, view.index_of_cell, view.precision, width)
        if key not in self._measures:
            if len(self._measures) >= CACHE_SIZE:
                self._measures.clear()
            w, full, short = drill_measure(self.head(view), self.content(view), view.precision, max(20, width - 2))
            self._measures[key] = (w + 3, full + 1, short + 1)
        return self._measures[key]

    def plain(self) -> str:
        """The whole drill-down as plain text, its table cut as on screen (what a test reads)."""
        if self.view is None:
            return ""
        ex = self.content(self.view)
        body: Any = ex if isinstance(ex, Text) else explanation_body(ex, precision=self.view.precision,
                                                                     max_rows=self._table_rows)
        result = explanation_result(ex, precision=self.view.precision) if isinstance(ex, CellExplanation) else ""
        console = Console(file=io.StringIO(), width=200, color_system=None, legacy_windows=False)
        console.print(Group(self.head(self.view), body, result), crop=False, soft_wrap=True)
        return console.file.getvalue()

    # -- drawing -------------------------------------------------------------------------------------------
    def watch_view(self, old: View | None, new: View | None) -> None:
        if changed(old, new, DEPENDS):
            self.body_offset = 0
            self.refresh()

    def drawing(self) -> Drill | None:
        """The drill-down for the view at this widget's content size (cached until either changes)."""
        view = self.view
        width, height = self.content_size
        if view is None or not width or not height:
            return None
        key = (id(view.trace), view.index, view.index_of_cell, view.precision, width, height, self.body_offset)
        if self._drawn is None or self._drawn[0] != key:
            with precision(view.precision):
                drill = drill_lines(self.head(view), self.content(view), view.precision, width, height,
                                    self.body_offset)
            self._drawn = (key, drill)
        return self._drawn[1]

    def render(self) -> Text:
        drill = self.drawing()
        if drill is None:
            return Text("")
        self._table_rows, self.max_scroll = drill.table_rows, drill.max_scroll
        return Text("\n", no_wrap=True, overflow="ellipsis").join(drill.lines)

    def scroll_body(self, direction: int) -> None:
        """Scroll the body half a pane (the head and the result line stay)."""
        step = max(1, self.content_size.height // 2)
        offset = max(0, min(self.max_scroll, self.body_offset + direction * step))
        if offset != self.body_offset:
            self.body_offset = offset
            self.refresh()
