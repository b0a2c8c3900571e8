"""The help screen (``?``): every key from :data:`explain.tui.keys.KEYS`, by section, and what each pane shows."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from explain.tui import picture
from explain.tui.keys import KEYS, SECTIONS, Key

PANES = " ".join("""\
Left: the step tree (model → block → attention → op, each with its output shape), or in a tutorial the
narration of the current stop. Middle: the step's formula, shape signature and note; its operands; its
result as a matrix with a cell cursor. Right (or below, in a narrow terminal): how the cell under the
cursor was computed. Big tensors show a window with … where rows or columns are left out: move the cursor
past the edge, or pan with H J K L, to see more. 3- and 4-D results show one 2-D slice, always named.
Ctrl+P opens the command palette: every action, searchable.""".split())


def keys_table() -> Table:
    table = Table(box=None, padding=(0, 2), show_header=False)
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column()
    for section in SECTIONS:
        table.add_row(Text(section, style="bold underline"), "")
        for k in KEYS:
            if k.section == section:
                table.add_row(*_key_row(k))
    table.add_row("ctrl+p", "Command palette (every action, and the theme: light or dark)")
    table.add_row("↑ ↓", "In the matrix: cell cursor up/down. In the tree: move through the steps.")
    table.add_row("tab", "Move the focus between the tree and the matrix")
    return table


def _key_row(k: Key) -> tuple[str, str]:
    return k.shown_keys, k.help


class HelpScreen(ModalScreen[None]):
    """Keys and panes."""

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "close"), picture.BINDING]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="dialog"):
            yield Static(Text("explain: step through a transformer one operation at a time", style="bold"))
            yield Static(PANES, id="panes")
            yield Static(keys_table())
            yield Static(Text("Esc, q or ? closes this help.", style="dim"))
