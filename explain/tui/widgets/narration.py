"""The tutorial pane: the current stop's title, narration and question as Markdown; the answer once revealed;
and, when the student has left the tutorial's path, a line that says so instead of a stop's narration.

The Markdown is drawn with rich's Markdown renderer, synchronously, into the lines of one scroll view: the
narration is in the same frame as the rest of the screen, at start-up and on every step change (Textual's
Markdown widget mounts its blocks asynchronously, which showed the narration one or two frames late)."""

from __future__ import annotations

from typing import Any

from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from explain.render.narration import narration_markdown
from explain.render.tables import fit_tables
from explain.tui.state import Tour, View
from explain.tui.tutorial import next_tutorial

KEYS_LINE = "`n`/`→` next stop · `p`/`←` previous · `w` wander through every step"
QUESTION, ANSWER = "**Question.**", "**Answer.**"


def stop_markdown(stop: Any, position: int, total: int, answer_shown: bool, wandering: bool,
                  off_path: str | None = None, next_title: str | None = None) -> str:
    """The Markdown of one stop (duck-typed: title, narration, question, answer).

    ``off_path`` names the step shown when it is not this stop's: the narration then says the student is off
    the tutorial's path (and how to come back) instead of describing a step that is not on screen.
    ``next_title`` is the next tutorial's title, offered at the last stop."""
    if off_path is not None:
        return "\n\n".join([
            f"*stop {position + 1} of {total}: {stop.title}*",
            f"**Off the tutorial's path — `t` returns to stop {position + 1}.**",
            f"You are looking at {off_path}, which is not this stop's step.",
        ])
    parts = [f"*stop {position + 1} of {total}*", f"## {stop.title}", stop.narration.strip()]
    question = getattr(stop, "question", None)
    if question:
        parts.append(f"{QUESTION} {question.strip()}")
        answer = getattr(stop, "answer", None)
        if answer and answer_shown:
            parts.append(f"{ANSWER} {answer.strip()}")
        elif answer:
            parts.append("*Press* `a` *to reveal the answer.*")
    if wandering:
        parts.append("*You are wandering through every step: press* `t` *to come back to this stop.*")
    else:
        parts.append(KEYS_LINE)
        if next_title is not None and position == total - 1:
            parts.append(f"*This is the last stop:* `n` *opens the next tutorial, {next_title}.*")
    return "\n\n".join(parts)


def narration(tour: Tour | None, view: View) -> str:
    """The narration pane's Markdown for the tour at ``view``: the stop's, or a line saying the student has left
    its path; at the last stop, the next tutorial is offered."""
    if tour is None:
        return ""
    total = len(tour.stops)
    if not tour.following and tour.off_path(view):
        shown = f"`{view.step.name}`" if view.trace is tour.trace else f"`{view.step.name}` of a run of your own"
        return stop_markdown(tour.current, tour.stop, total, tour.answered, True, off_path=shown)
    nxt = next_tutorial(tour.tutorial) if tour.last and tour.following else None
    return stop_markdown(tour.current, tour.stop, total, tour.answered, wandering=not tour.following,
                         next_title=nxt.title if nxt is not None else None)


def _answer_revealed(old: str, new: str) -> bool:
    """Whether ``new`` is ``old``'s stop with its answer just revealed (the same stop, the answer new)."""
    return ANSWER in new and ANSWER not in old and new.split("\n\n", 1)[0] == old.split("\n\n", 1)[0]


class NarrationPane(ScrollView):
    """The narration of the current stop (``text`` is its Markdown source), drawn line by line: the lines are
    rendered when the text or the width changes, and the virtual size follows, so a new stop needs no second
    layout pass (a container of auto-height widgets reflowed once more when its scrollbar changed)."""

    text: reactive[str] = reactive("", layout=False)

    def __init__(self, text: str = "", *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.set_reactive(NarrationPane.text, text)
        self._lines: list[Strip] = []
        self._width = 0

    def _render_lines(self, width: int) -> None:
        width = max(width, 10)
        console = self.app.console
        options = console.options.update_width(width)
        # a table wider than the pane becomes a list (rich cut its cells to 'fre…' and '(1.…')
        lines = console.render_lines(narration_markdown(fit_tables(self.text, width)), options, style=self.rich_style,
                                     pad=True)
        self._lines = [Strip(line, width) for line in lines]
        self._width = width
        self.virtual_size = Size(width, len(self._lines))
        self._scroll_update(self.virtual_size)  # the scrollbar now, in this frame

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        # A layout pass passes the view's own size as its virtual size, which ScrollView takes for a change and
        # repaints the scrollbar after the frame (one more frame per step). Only a real resize is a change here:
        # the virtual size is ours, and _render_lines keeps the scrollbar up to date.
        if size == self._size and container_size == self.container_size:
            return False
        return super()._size_updated(size, virtual_size, container_size, layout)

    def watch_text(self, old: str, new: str) -> None:
        if self.is_mounted and self.scrollable_content_region.width:
            self._render_lines(self.scrollable_content_region.width)
            self.scroll_to(y=self._answer_line() if _answer_revealed(old, new) else 0, animate=False,
                           immediate=True)
            self.refresh()
        else:  # hidden (wandering at 80 columns): no width to draw at; drawn at its first paint once shown
            self._width = 0

    def _answer_line(self) -> int:
        """Where to scroll when the answer has just been revealed (on a small screen it is below the fold): the
        question's line when question and answer fit the pane together, else the answer's."""
        plain = [line.text.strip() for line in self._lines]
        q = next((i for i, t in enumerate(plain) if t.startswith("Question.")), 0)
        a = next((i for i, t in enumerate(plain) if t.startswith("Answer.")), q)
        end = next((i for i in range(a + 1, len(plain)) if not plain[i]), len(plain))  # the answer's last line
        return q if end - q <= self.scrollable_content_region.height else a

    def scroll_half(self, direction: int) -> None:
        """Half a pane down (1) or up (-1)."""
        self.scroll_relative(y=direction * max(1, self.size.height // 2), animate=False)

    def on_resize(self) -> None:
        self._render_lines(self.scrollable_content_region.width)

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        if width != self._width:
            self._render_lines(width)
        index = y + int(self.scroll_y)
        if index >= len(self._lines):
            return Strip.blank(width, self.rich_style)
        return self._lines[index].crop(int(self.scroll_x), int(self.scroll_x) + width)
