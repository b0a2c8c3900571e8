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

from explain.core.names import lens_read
from explain.interp.names import lens_point, point_phrase
from explain.render.panes import PREDICTION_ROWS, predictions_height, shows_predictions
from explain.render.predictions import predictions_view, repr_token
from explain.report.predict import predictions
from explain.tui.widgets.view_widget import ViewWidget


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
        k = max(1, min(PREDICTION_ROWS, self.size.height - 4)) if self.size.height else PREDICTION_ROWS
        p = predictions(view.trace, step, position, batch, k)
        after = f" {repr_token(p.after)}" if p.after else ""
        read = lens_read(step.name)
        lens = f"the lens {point_phrase(lens_point(read))}: " if read is not None and p.source == read else ""
        head = Text.assemble((lens, "bold magenta"), ("next token", "bold"), (f" after position {p.position}{after}", "bold cyan"),
                             (f", sequence {p.batch}" if p.batch else "", "dim"))
        return Group(head, predictions_view(p, title=False))
