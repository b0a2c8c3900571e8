"""The current step's header: its position in the run, name and op kind, formula, shape signature and note
(:func:`explain.render.step.step_header`, the plain printer's header)."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from explain.render.step import step_header
from explain.tui.state import View


class StepInfo(Widget):
    """Step n of N, name [op], formula, signature, note."""

    view: reactive[View | None] = reactive(None, layout=True)

    def render(self) -> Any:
        view = self.view
        if view is None:
            return ""
        step = view.step
        where = Text(f"step {step.index + 1} of {len(view.trace)}", style="dim")
        if step.inputs:
            where.append("   inputs: " + ", ".join(step.inputs), style="dim")
        return Group(where, step_header(step))
