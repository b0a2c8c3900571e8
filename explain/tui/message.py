"""A one-line message in the app: what a served visitor sees when the link they followed cannot be opened
(instead of a traceback in the browser, or a session that ends without a word)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Footer, Static


class MessageApp(App[None]):
    """One line and a key to quit."""

    TITLE = "explain"
    BINDINGS = [("q", "quit", "Quit")]
    DEFAULT_CSS = "#message { margin: 1 2; }"

    def __init__(self, line: str) -> None:
        super().__init__()
        self.line = line

    def compose(self) -> ComposeResult:
        yield Static(self.line, id="message", markup=False)
        yield Footer()
