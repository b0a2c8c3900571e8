"""The current step's header: name and op kind with its position in the run, formula, shape signature and
note (:func:`explain.render.step.step_header`, the plain printer's header). The operands pane and the
drill-down name the inputs."""

from __future__ import annotations

import os
from typing import Any

from rich.console import Group
from rich.text import Text

from explain.render.drill import text_lines
from explain.render.predictions import text_so_far
from explain.render.step import step_header
from explain.tui.fit import centre_width
from explain.tui.state import View
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


def header_lines(view: View, width: int, stop: str = "") -> int:
    """Lines the header takes at ``width`` columns (the note wraps)."""
    return len(text_lines(header(view, max(10, width), stop), max(10, width)))


def short(label: str) -> str:
    """A weights label with its file's name, not its whole path ('checkpoint: gpt2_tiny'): the header's room."""
    kind, sep, path = label.partition(": ")
    if sep and kind in ("checkpoint", "weights") and os.sep in path:
        return f"{kind}: {os.path.basename(path.rstrip(os.sep))}"
    return label


def header(view: View, width: int = 200, stop: str = "") -> Any:
    """The step's header; on a generation's steps the text so far comes first (what the student reads). The
    first line says 'step 45 of 95', or '45/95' where that keeps it on one line (a generation's long names),
    then which weights the run shows ('trained: gpt-tiny', 'random, seed 0'), on a line of its own where the
    first has no room. Words the checkpoint's vocabulary lacks are named on every step: they read as <unk>.
    ``stop`` ('stop 1 of 4': a tutorial whose narration is hidden) comes first."""
    where = f"{stop} · " * bool(stop) + f"step {view.index + 1} of {len(view.trace)}"
    room = width - len(view.step.name) - len(view.step.op) - 6
    if len(where) > room:
        where = f"{stop.replace(' of ', '/')} · " * bool(stop) + f"{view.index + 1}/{len(view.trace)}"
    weights = short(view.trace.weights)
    if weights and len(where) + len(weights) + 3 <= room:
        where, weights = f"{where} · {weights}", ""
    title, *rest = step_header(view.step, where).renderables
    lines: list[Any] = [title]
    if weights:
        lines.append(Text(weights, style="dim"))
    if view.trace.unknown_words:  # under the title: a short screen shows the header's first four lines only
        words = ", ".join(f"'{w}'" for w in view.trace.unknown_words)
        lines.append(Text(f"not in the vocabulary, read as <unk>: {words}", style="yellow"))
    batch = view.lead[0] if view.lead and view.step.axes[:1] == ("batch",) else 0
    text = text_so_far(view.trace, view.index, batch)
    return Group(*([] if text is None else [text]), *lines, *rest)
