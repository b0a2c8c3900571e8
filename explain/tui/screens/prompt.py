"""A one-line question with a prefilled answer (the export's file name): Enter answers, Esc cancels. The caller
may check the answer and refuse it with a message shown under the field (:meth:`PromptScreen.refuse`), so the
dialog stays open with what was typed. Dismisses with the text, or None."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class PromptScreen(ModalScreen[str | None]):
    """``question`` over an Input holding ``value``; ``check(text)`` returns an error message or None."""

    BINDINGS = [Binding("escape", "dismiss(None)", "cancel")]

    def __init__(self, question: str, value: str = "", check: Callable[[str], str | None] | None = None) -> None:
        super().__init__()
        self.question, self.value, self.check = question, value, check

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self.question, id="question")
            yield Input(self.value, id="answer")
            yield Static("", id="error")
            yield Static(Text("Enter writes · Esc cancels", style="dim"), id="keys")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def refuse(self, message: str) -> None:
        self.query_one("#error", Static).update(Text(message, style="bold red"))

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        try:
            problem = "give a file name" if not text else (self.check(text) if self.check else None)
        except Exception as exc:  # a bug in a check must not end the app: the dialog stays open and says so
            problem = f"internal error: {exc!r}"
        if problem:
            self.refuse(problem)
            return
        self.dismiss(text)
