"""The tutorial picker: every shipped tutorial in a list (number, title, stops, model); Enter opens the one
highlighted, Esc closes the list (the tutorial behind it stays), q quits. ``explain tutorial`` with no name
opens the TUI on it. Dismisses with the chosen tutorial's name, or None."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from explain.tui import picture


def entry(tut: Any) -> Text:
    """One line of the list: ``03  The Illustrated Transformer's Thinking Machines   7 stops · attention``."""
    number, _, _ = tut.name.partition("-")
    line = Text.assemble((f"{number:>2}  ", "bold"), tut.title, (f"  · {tut.model}, {len(tut.stops)} stops", "dim"))
    line.no_wrap, line.overflow = True, "ellipsis"  # one line each: a narrow terminal cuts the tail, not the title
    return line


class TutorialPicker(ModalScreen[str | None]):
    """Choose a tutorial: ↑/↓ (or its number's first digit) move, Enter opens, Esc closes, q quits."""

    BINDINGS = [Binding("escape", "dismiss(None)", "close"), Binding("q", "app.quit", "quit"), picture.BINDING]

    def __init__(self, tutorials: list[Any], current: str | None = None) -> None:
        super().__init__()
        self.tutorials = tutorials
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="picker"):
            yield Static(Text.assemble(("Tutorials", "bold"), "  ↑/↓ choose · Enter open · c svg · Esc close · q quit"),
                         id="picker-title")
            yield OptionList(*[Option(entry(t), id=t.name) for t in self.tutorials], id="tutorials")

    def on_mount(self) -> None:
        options = self.query_one("#tutorials", OptionList)
        names = [t.name for t in self.tutorials]
        options.highlighted = names.index(self.current) if self.current in names else 0
        options.focus()

    @on(OptionList.OptionSelected, "#tutorials")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)
