"""A one-line question with a prefilled answer (the export's file name): Enter answers, Esc cancels. The caller
may check the answer and refuse it with a message shown under the field (:meth:`PromptScreen.refuse`), so the
dialog stays open with what was typed. Dismisses with the text, or None.

The prefilled answer is not selected: a key typed goes in at the cursor (its end), and the key that opened the
dialog, pressed again before anything else, does nothing: a second ``c`` replaced the whole suggested name with
``c`` (issue 42 item 12). Ctrl+U clears the field to type a new name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class AnswerField(Input):
    """An Input that ignores ``opener`` (the key that opened its dialog) until another key is pressed in it."""

    def __init__(self, value: str, opener: str | None = None, **kwargs: Any) -> None:
        super().__init__(value, select_on_focus=False, **kwargs)
        self.opener, self.touched = opener, False

    async def _on_key(self, event: events.Key) -> None:
        # runs before Input's own _on_key (Textual calls each class's handler, the subclass first): a key pressed
        # twice by a user who thought the first one missed is dropped here, before it reaches the field
        if not self.touched and self.opener is not None and event.character == self.opener:
            event.stop()
            event.prevent_default()
            return
        self.touched = True


class PromptScreen(ModalScreen[str | None]):
    """``question`` over an Input holding ``value``; ``check(text)`` returns an error message or None; ``opener``
    is the key that opened the dialog (dropped until the name is edited)."""

    BINDINGS = [Binding("escape", "dismiss(None)", "cancel")]

    def __init__(self, question: str, value: str = "", check: Callable[[str], str | None] | None = None,
                 opener: str | None = None) -> None:
        super().__init__()
        self.question, self.value, self.check, self.opener = question, value, check, opener

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self.question, id="question")
            yield AnswerField(self.value, self.opener, id="answer")
            yield Static("", id="error")
            yield Static(Text("Enter writes · Esc cancels · Ctrl+U clears", style="dim"), id="keys")

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
