"""ViewWidget: the base of the widgets that draw part of the step screen's current View.

The screen binds its View down to each widget (attributes down); a widget names the View fields it draws in
``DEPENDS`` and repaints only when one of them changes, so moving the cell cursor does not repaint the step's
header, and a repaint's cost stays with the widgets the change affects.
"""

from __future__ import annotations

from typing import ClassVar

from textual.reactive import reactive
from textual.widget import Widget

from explain.tui.state import View, changed


class ViewWidget(Widget):
    """A widget drawn from the current View."""

    view: reactive[View | None] = reactive(None, repaint=False)
    DEPENDS: ClassVar[tuple[str, ...]] = ("trace", "index")  # the View fields this widget draws
    RELAYOUT: ClassVar[tuple[str, ...]] = ("trace", "index")  # the changes that can change its size

    def watch_view(self, old: View | None, new: View | None) -> None:
        if changed(old, new, self.DEPENDS):
            self.refresh(layout=changed(old, new, self.RELAYOUT))
