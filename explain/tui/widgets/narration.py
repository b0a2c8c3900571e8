"""The tutorial pane: the current stop's title, narration and question as Markdown; the answer once revealed."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Markdown


def stop_markdown(stop: Any, position: int, total: int, answer_shown: bool, wandering: bool) -> str:
    """The Markdown of one stop (duck-typed: title, narration, question, answer)."""
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
        parts.append("`n`/`→` next stop · `p`/`←` previous · `w` wander through every step")
    return "\n\n".join(parts)


class NarrationPane(VerticalScroll):
    """The narration of the current stop."""

    text: reactive[str] = reactive("", layout=False)

    def compose(self) -> ComposeResult:
        yield Markdown(self.text)

    def watch_text(self, text: str) -> None:
        if self.children:
            self.query_one(Markdown).update(text)
            self.scroll_home(animate=False)
