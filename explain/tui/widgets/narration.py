"""The tutorial pane: the current stop's title, narration and question as Markdown; the answer once revealed;
and, when the student has left the tutorial's path, a line that says so instead of a stop's narration.

The Markdown is drawn by one Static (rich's Markdown renderer), synchronously: the narration is in the same
frame as the rest of the screen, at start-up and on every step change (Textual's Markdown widget mounts its
blocks asynchronously, which showed the narration one or two frames late)."""

from __future__ import annotations

from typing import Any

from rich.markdown import Markdown
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Static

KEYS_LINE = "`n`/`→` next stop · `p`/`←` previous · `w` wander through every step"


def stop_markdown(stop: Any, position: int, total: int, answer_shown: bool, wandering: bool,
                  off_path: str | None = None, next_title: str | None = None) -> str:
    """The Markdown of one stop (duck-typed: title, narration, question, answer).

    ``off_path`` names the step shown when it is not this stop's: the narration then says the student is off
    the tutorial's path (and how to come back) instead of describing a step that is not on screen.
    ``next_title`` is the next tutorial's title, offered at the last stop."""
    if off_path is not None:
        return "\n\n".join([
            f"*stop {position + 1} of {total}: {stop.title}*",
            "## Off the tutorial's path",
            f"Off the tutorial's path — `t` returns to stop {position + 1}.",
            f"You are looking at `{off_path}`, which is not this stop's step.",
        ])
    parts = [f"*stop {position + 1} of {total}*", f"## {stop.title}", stop.narration.strip()]
    question = getattr(stop, "question", None)
    if question:
        parts.append(f"**Question.** {question.strip()}")
        answer = getattr(stop, "answer", None)
        if answer and answer_shown:
            parts.append(f"**Answer.** {answer.strip()}")
        elif answer:
            parts.append("*Press* `a` *to reveal the answer.*")
    if wandering:
        parts.append("*You are wandering through every step: press* `t` *to come back to this stop.*")
    else:
        parts.append(KEYS_LINE)
        if next_title is not None and position == total - 1:
            parts.append(f"*This is the last stop:* `n` *opens the next tutorial, {next_title}.*")
    return "\n\n".join(parts)


class NarrationPane(VerticalScroll):
    """The narration of the current stop (``text`` is its Markdown source)."""

    text: reactive[str] = reactive("", layout=False)

    def __init__(self, text: str = "", *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.set_reactive(NarrationPane.text, text)

    def compose(self) -> ComposeResult:
        yield Static(Markdown(self.text), id="narration-text")

    def watch_text(self, text: str) -> None:
        if self.children:
            self.query_one("#narration-text", Static).update(Markdown(text))
            self.scroll_home(animate=False)
