"""A yes/no question as a small modal: Enter (or the first button) answers yes, Esc (or the second) no.
Dismisses with True or False."""

from __future__ import annotations

from rich.markdown import Markdown
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmScreen(ModalScreen[bool]):
    """``question`` (Markdown) with two buttons."""

    BINDINGS = [Binding("escape", "answer(False)", "no"), Binding("enter", "answer(True)", "yes"),
                Binding("y", "answer(True)", "yes", show=False), Binding("n", "answer(False)", "no", show=False)]

    def __init__(self, question: str, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self.question, self.yes, self.no = question, yes, no

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="confirm"):
            yield Static(Markdown(self.question), id="question")
            with Horizontal(id="buttons"):
                yield Button(f"{self.yes} (Enter)", variant="primary", id="yes", compact=True)
                yield Button(f"{self.no} (Esc)", id="no", compact=True)

    def on_mount(self) -> None:
        self.query_one("#yes", Button).focus()

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")
