"""The current step's header: name and op kind with its position in the run, formula, shape signature and
note (:func:`explain.render.step.step_header`, the plain printer's header). The operands pane and the
drill-down name the inputs."""

from __future__ import annotations

from typing import Any

from rich.console import Group

from explain.render.drill import text_lines
from explain.render.fit import centre_width
from explain.render.panes import header, header_lines, short  # noqa: F401 - drawn here, measured there
from explain.tui.widgets.view_widget import ViewWidget


class StepInfo(ViewWidget):
    """Name [op] and step n of N, formula, signature, note; on a generation's steps, the text so far."""

    DEPENDS = ('trace', 'index', 'lead')
    RELAYOUT = DEPENDS  # a batch's text so far is a line of its own

    def render(self) -> Any:
        view = self.view
        if view is None:
            return ""
        width, height = self.content_size.width or 200, self.content_size.height
        lines = text_lines(header(view, width, self.stop()), width)
        if not height or len(lines) <= height:
            return Group(*lines)
        # the CSS caps the header (4 lines on a short terminal): the last line shown says the note goes on,
        # where it was cut mid-sentence ("Row i says how much query i") as if that were all
        shown = lines[:height]
        last = shown[-1]
        last.rstrip()
        if last.cell_len <= width - 2:  # apart from the line's last word: "(6, 3)…" read as part of the shape
            last.append(" ")
        last.truncate(width - 1)
        last.append("…")
        return Group(*shown)

    def get_content_height(self, container: Any, viewport: Any, width: int) -> int:
        """``height: auto``: the header's lines at this width (the step screen's CSS caps them)."""
        return header_lines(self.view, width, self.stop()) if self.view is not None else 1

    def stop(self) -> str:
        """'stop 1 of 4' when a tutorial is followed and its narration, which says it, has no room (below 80
        columns): the header says it instead, so a student on a small terminal still knows where they are."""
        tour = getattr(self.screen, "tour", None) if self.is_attached else None
        if tour is None or not tour.following or centre_width(self.app.size.width, True)[0]:
            return ""
        return f"stop {tour.stop + 1} of {len(tour.stops)}"


