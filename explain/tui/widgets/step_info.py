"""The current step's header: name and op kind with its position in the run, formula, shape signature and
note (:func:`explain.render.step.step_header`, the plain printer's header). The operands pane and the
drill-down name the inputs."""

from __future__ import annotations

from typing import Any

from textual.reactive import reactive
from textual.widget import Widget

from explain.render.step import step_header
from explain.tui.state import View, changed


class StepInfo(Widget):
    """Name [op] and step n of N, formula, signature, note."""

    view: reactive[View | None] = reactive(None, repaint=False)
    DEPENDS = ('trace', 'index')  # the parts of the View this widget draws; other changes do not repaint it

    def watch_view(self, old: View | None, new: View | None) -> None:
        if changed(old, new, self.DEPENDS):
            self.refresh(layout=changed(old, new, ("trace", "index")))

    def render(self) -> Any:
        view = self.view
        if view is None:
            return ""
        return step_header(view.step, f"step {view.index + 1} of {len(view.trace)}")
