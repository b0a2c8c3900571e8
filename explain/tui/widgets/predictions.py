"""The predictions pane: on a step with a vocabulary axis (logits, probabilities, the sampling steps of a
generation) or a generation's draw, the top next tokens as words with p and log p for the position under the
cursor (the batch slice shown), and the token that really comes next with its rank. Hidden on other steps.

It draws :func:`explain.report.predict.predictions` with :func:`explain.render.predictions.predictions_view`, the same
value ``--plain`` and ``--json`` print.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.text import Text

from explain.core.names import is_draw, lens_read
from explain.interp.names import lens_point, point_phrase
from explain.render.predictions import predictions_view, repr_token
from explain.report.predict import has_predictions, predictions
from explain.trace import Step
from explain.tui.state import View
from explain.tui.widgets.view_widget import ViewWidget

TOP = 5  # rows of the table when there is room (fewer when the layout gives the pane less)


def shows_predictions(view: View) -> bool:
    """Whether the current step is about next tokens: its last axis is the vocabulary, or it is a draw."""
    step: Step = view.step
    return step.output is not None and has_predictions(view.trace) and (
        step.axes[-1:] == ("vocab",) or is_draw(step.name))


def predictions_height(view: View) -> int:
    """Lines for the whole pane on this step: title, header, TOP rows, the actual token (row and line); 0 on a
    step without predictions."""
    return TOP + 4 if shows_predictions(view) else 0


class PredictionsPane(ViewWidget):
    """The top next tokens at the cursor's position (as many as its height holds)."""

    DEPENDS = ("trace", "index", "lead", "cell")

    def get_content_height(self, container: Any, viewport: Any, width: int) -> int:
        """``height: auto``: the whole pane (the step screen's CSS may cut it to its least)."""
        return predictions_height(self.view) if self.view is not None else 0

    def render(self) -> Any:
        view = self.view
        if view is None or not shows_predictions(view):
            return ""
        step = view.step
        batch = view.lead[0] if view.lead and step.axes[:1] == ("batch",) else 0
        position = view.cell[0] if step.axes[-2:-1] == ("pos",) and len(step.shape) >= 2 else -1
        k = max(1, min(TOP, self.size.height - 4)) if self.size.height else TOP
        p = predictions(view.trace, step, position, batch, k)
        after = f" {repr_token(p.after)}" if p.after else ""
        read = lens_read(step.name)
        lens = f"the lens {point_phrase(lens_point(read))}: " if read is not None and p.source == read else ""
        head = Text.assemble((lens, "bold magenta"), ("next token", "bold"), (f" after position {p.position}{after}", "bold cyan"),
                             (f", sequence {p.batch}" if p.batch else "", "dim"))
        return Group(head, predictions_view(p, title=False))
