"""The drill-down: how the selected cell was computed, from the op's own cell explanation
(``trace.explain(step, index)``), drawn with :func:`explain.render.drill.drill_lines`.

Three parts: a head line (which cell), a body (the title, the table of terms, the arithmetic) and the result
line, so the answer is on screen at every size. It is drawn when it paints, for its own content region (as the
result matrix is): the table of terms cut (``⋮``) to the rows that fit, a body still too long scrolled by
``d``/``u`` with the result line pinned at the bottom. Nobody tells it its size before Textual does, and a step
change draws it once, at the size it is given in that frame.

Explanations are cached per step and cell (:mod:`explain.render.measure`), so moving back and forth costs nothing.
"""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console, Group
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from explain.ops.base import CellExplanation, precision
from explain.render import fit
from explain.render.drill import Drill, drill_lines
from explain.render.measure import drill_content, drill_frame, drill_head, drill_size, explanation
from explain.render.step import explanation_body, explanation_result
from explain.tui.state import View, changed

DEPENDS = ('trace', 'index', 'lead', 'cell', 'precision')
RELAYOUT = ('trace', 'index', 'lead', 'precision')  # cells of one step have drill-downs of one shape


class CellPanel(Widget):
    """How the cell under the cursor was computed: head, body (its table cut to fit), pinned result."""

    view: reactive[View | None] = reactive(None, repaint=False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._drawn: tuple[tuple, Drill] | None = None  # the last drawing and what it was drawn for
        self._table_rows = 12
        self.body_offset = 0  # lines of the body scrolled past (d/u)
        self.max_scroll = 0  # how far the body can scroll at the size last drawn (0: it fits)

    def explanation(self, view: View) -> CellExplanation | str:
        """The cell's explanation, or a one-line reason there is none."""
        return explanation(view)

    def get_content_width(self, container: Any, viewport: Any) -> int:
        """``width: auto`` (beside the matrix, where it has room): its natural width."""
        return drill_size(self.view, container.width - 2 * fit.DRILL_PAD)[0] - drill_frame() if self.view is not None else 40

    def get_content_height(self, container: Any, viewport: Any, width: int) -> int:
        """``height: auto``: every line at this width, or, where the screen's layout class says the drill-down
        gets its least (``-drill-least`` on an ancestor), its lines with the table of terms cut to two rows."""
        if self.view is None:
            return 1
        least = any(node.has_class("-drill-least") for node in self.ancestors)
        return drill_size(self.view, width)[2 if least else 1]

    def plain(self) -> str:
        """The whole drill-down as plain text, its table cut as on screen (what a test reads)."""
        if self.view is None:
            return ""
        ex = drill_content(self.view)
        body: Any = ex if isinstance(ex, Text) else explanation_body(ex, precision=self.view.precision,
                                                                     max_rows=self._table_rows)
        result = explanation_result(ex, precision=self.view.precision) if isinstance(ex, CellExplanation) else ""
        console = Console(file=io.StringIO(), width=200, color_system=None, legacy_windows=False)
        console.print(Group(drill_head(self.view), body, result), crop=False, soft_wrap=True)
        return console.file.getvalue()

    # -- drawing -------------------------------------------------------------------------------------------
    def watch_view(self, old: View | None, new: View | None) -> None:
        if changed(old, new, DEPENDS):
            self.body_offset = 0
            # a new step may need another height (auto): a layout, in the same frame; a cell only a repaint
            self.refresh(layout=changed(old, new, RELAYOUT))

    def drawing(self) -> Drill | None:
        """The drill-down for the view at this widget's content size (cached until either changes)."""
        view = self.view
        width, height = self.content_size
        if view is None or not width or not height:
            return None
        key = (id(view.trace), view.index, view.index_of_cell, view.precision, width, height, self.body_offset)
        if self._drawn is None or self._drawn[0] != key:
            with precision(view.precision):
                drill = drill_lines(drill_head(view), drill_content(view), view.precision, width, height,
                                    self.body_offset)
            self._drawn = (key, drill)
        return self._drawn[1]

    def render(self) -> Any:
        drill = self.drawing()
        if drill is None:
            return Text("")
        self._table_rows, self.max_scroll = drill.table_rows, drill.max_scroll
        return Group(*drill.lines)  # rich's lines as drawn (each cut with … at the pane's edge)

    def scroll_body(self, direction: int) -> None:
        """Scroll the body half a pane (the head and the result line stay)."""
        step = max(1, self.content_size.height // 2)
        offset = max(0, min(self.max_scroll, self.body_offset + direction * step))
        if offset != self.body_offset:
            self.body_offset = offset
            self.refresh()
