"""The drill-down: how the selected cell was computed, from the op's own cell explanation
(``trace.explain(step, index)``), drawn with :func:`explain.render.step.explanation_view`.

Explanations are cached per step and cell, so moving back and forth costs nothing; the table of terms is
windowed to the panel's height.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.text import Text

from explain.errors import ExplainError
from explain.ops.base import CellExplanation, idx
from explain.render.step import explanation_view
from explain.tui.state import View
from explain.tui.widgets.view_widget import ViewWidget

CACHE_SIZE = 256


class CellPanel(ViewWidget):
    """How the cell under the cursor was computed."""

    DEPENDS = ('trace', 'index', 'lead', 'cell', 'precision')
    RELAYOUT = ()  # the panel's size does not follow its content

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._cache: dict[tuple, CellExplanation | str] = {}

    def explanation(self, view: View) -> CellExplanation | str:
        """The cell's explanation, or a one-line reason there is none."""
        index = view.index_of_cell
        key = (id(view.trace), view.index, index)
        if key not in self._cache:
            if len(self._cache) >= CACHE_SIZE:
                self._cache.clear()
            try:
                self._cache[key] = view.trace.explain(view.step, index)
            except ExplainError as exc:
                self._cache[key] = str(exc)
        return self._cache[key]

    def render(self) -> Any:
        view = self.view
        if view is None:
            return ""
        step = view.step
        head = Text.assemble(("drill-down ", "bold"), (f"{step.syms.out}{idx(view.index_of_cell)}", "bold cyan"),
                             ("  (h j k l move)", "dim"))
        if step.output is None:
            return Group(head, Text("shape only: no values to explain", style="dim"))
        ex = self.explanation(view)
        if isinstance(ex, str):
            return Group(head, Text(ex, style="red"))
        # the title, the arithmetic lines and the result take about this many lines besides the table
        rows = max(3, self.content_size.height - 4 - len(ex.lines) - 2)
        return Group(head, explanation_view(ex, precision=view.precision, max_rows=rows))
