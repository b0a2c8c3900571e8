"""The current step's header: name and op kind with its position in the run, formula, shape signature and
note (:func:`explain.render.step.step_header`, the plain printer's header). The operands pane and the
drill-down name the inputs."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from explain.render.step import step_header
from explain.tui.state import View
from explain.tui.widgets.view_widget import ViewWidget


class StepInfo(ViewWidget):
    """Name [op] and step n of N, formula, signature, note."""

    DEPENDS = ('trace', 'index')

    def render(self) -> Any:
        view = self.view
        if view is None:
            return ""
        return step_header(view.step, f"step {view.index + 1} of {len(view.trace)}")

    def height_at(self, view: View, width: int) -> int:
        """Lines the header takes at ``width`` columns (the note wraps)."""
        console = Console(file=io.StringIO(), width=max(10, width), color_system=None, legacy_windows=False)
        return len(console.render_lines(step_header(view.step, f"step {view.index + 1} of {len(view.trace)}"),
                                        pad=False))
