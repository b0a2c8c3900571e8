"""The current step's header: name and op kind with its position in the run, formula, shape signature and
note (:func:`explain.render.step.step_header`, the plain printer's header). The operands pane and the
drill-down name the inputs."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console, Group

from explain.render.predictions import text_so_far
from explain.render.step import step_header
from explain.tui.state import View
from explain.tui.widgets.view_widget import ViewWidget


class StepInfo(ViewWidget):
    """Name [op] and step n of N, formula, signature, note; on a generation's steps, the text so far."""

    DEPENDS = ('trace', 'index', 'lead')

    def render(self) -> Any:
        view = self.view
        if view is None:
            return ""
        return header(view, self.content_size.width or 200)

    def height_at(self, view: View, width: int) -> int:
        """Lines the header takes at ``width`` columns (the note wraps)."""
        console = Console(file=io.StringIO(), width=max(10, width), color_system=None, legacy_windows=False)
        return len(console.render_lines(header(view, max(10, width)), pad=False))


def header(view: View, width: int = 200) -> Any:
    """The step's header; on a generation's steps the text so far comes first (what the student reads). The
    first line says 'step 45 of 95', or '45/95' where that keeps it on one line (a generation's long names)."""
    where = f"step {view.index + 1} of {len(view.trace)}"
    if len(view.step.name) + len(view.step.op) + len(where) + 6 > width:
        where = f"{view.index + 1}/{len(view.trace)}"
    head = step_header(view.step, where)
    batch = view.lead[0] if view.lead and view.step.axes[:1] == ("batch",) else 0
    text = text_so_far(view.trace, view.index, batch)
    return head if text is None else Group(text, head)
