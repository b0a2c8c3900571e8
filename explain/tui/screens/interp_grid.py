"""The base of the interpretability screens (the logit lens, attribution, a patching sweep, attention to generated
tokens): a title, a table of coloured cells with a cell cursor (Textual's DataTable: it scrolls both ways and
keeps the row labels in view), a line about the cell under the cursor, and a Footer with the screen's keys
(``c`` saves the screen as an SVG, named by each screen's ``picture_name``).
Enter on a cell dismisses the screen with what that cell is computed from (a step and its cell), for the step
screen to show; Esc closes."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Static

from explain.tui import picture

Cell = tuple[str, tuple[int, ...]]  # a step name and the index of one of its cells


def heat(value: float, lo: float = 0.0, hi: float = 1.0, diverging: bool = False) -> str:
    """A background for ``value`` on [lo, hi]: white to red, or (diverging, around 0) blue, white, red."""
    if value != value:  # NaN: nothing there
        return ""
    if diverging:
        x = max(-1.0, min(1.0, value / (hi or 1.0)))
        r, g, b = (255, int(255 * (1 - x)), int(255 * (1 - x))) if x >= 0 else \
            (int(255 * (1 + x)), int(255 * (1 + x)), 255)
    else:
        x = max(0.0, min(1.0, (value - lo) / ((hi - lo) or 1.0)))
        r, g, b = 255, int(255 * (1 - 0.75 * x)), int(255 * (1 - 0.9 * x))
    return f"black on rgb({r},{g},{b})"


class WholeColumns(DataTable):
    """A DataTable that scrolls by whole columns: the column beside the fixed labels starts where a column starts,
    never mid-word ('ed 0.49' at 80×24, issue 42 item 7)."""

    def _column_starts(self) -> list[int]:
        """Where each scrolling column starts and, last, where they end (x from the first one's start)."""
        x, starts = 0, []
        for column in self.ordered_columns[self.fixed_columns:]:
            starts.append(x)
            x += column.get_render_width(self)
        return [*starts, x]

    def _whole(self, value: float) -> float:
        # the next column start at or right of the scroll: the cursor stays in view (it was at the right edge, or
        # it is the leftmost column, which starts there). At the far end that start may lie past the widest scroll
        # the table's width allows: the view then ends in blank columns rather than begin mid-word
        *starts, end = self._column_starts()
        later = [b for b in starts if value <= b < end]
        return float(later[0]) if later and value > 0 else value

    def validate_scroll_x(self, value: float) -> float:
        return self._whole(super().validate_scroll_x(value))

    def validate_scroll_target_x(self, value: float) -> float:
        return self._whole(super().validate_scroll_target_x(value))


class GridScreen(ModalScreen[Any]):
    """A table of cells; subclasses say what is in it (:meth:`header`, :meth:`columns`, :meth:`rows`,
    :meth:`describe`, :meth:`source`)."""

    DEFAULT_CSS = """
    GridScreen { align: center middle; }
    GridScreen #dialog { width: 100%; height: 100%; border: round $accent; background: $surface; }
    GridScreen #grid-title, GridScreen #grid-cell { height: auto; max-height: 6; padding: 0 1; }
    GridScreen DataTable { height: 1fr; }
    """
    # Enter has priority: the DataTable's own (hidden) Enter would otherwise shadow it, and the footer would not
    # say what Enter does
    BINDINGS = [Binding("escape,q", "dismiss(None)", "close"), Binding("enter", "open", "open cell", priority=True),
                picture.BINDING]

    def header(self) -> Text:
        raise NotImplementedError

    def columns(self) -> list[str]:
        raise NotImplementedError

    def rows(self) -> list[tuple[str, list[Text]]]:
        raise NotImplementedError

    def describe(self, row: int, col: int) -> Text:
        """A line about the cell under the cursor."""
        return Text("")

    def source(self, row: int, col: int) -> Any:
        """What Enter on this cell gives the step screen (None: nothing to open)."""
        return None

    def first_cell(self) -> tuple[int, int]:
        """The (row, column) the cursor starts on."""
        return 0, 0

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self.header(), id="grid-title")
            yield WholeColumns(cursor_type="cell", zebra_stripes=False, id="grid")
            yield Static("", id="grid-cell")
        yield Footer()

    def on_mount(self) -> None:
        self.fill()
        self.query_one(DataTable).focus()

    def fill(self, keep: tuple[int, int] | None = None) -> None:
        table = self.query_one(DataTable)
        table.clear(columns=True)
        table.add_columns("", *self.columns())
        table.fixed_columns = 1
        for label, cells in self.rows():
            table.add_row(Text(label, style="bold"), *cells)
        self.query_one("#grid-title", Static).update(self.header())
        if keep is not None:
            table.move_cursor(row=keep[0], column=keep[1])
        elif table.row_count:
            row, col = self.first_cell()
            table.move_cursor(row=row, column=col + 1)

    def cursor(self) -> tuple[int, int]:
        """The cursor as (row, column of the data: the label column is −1)."""
        c = self.query_one(DataTable).cursor_coordinate
        return c.row, c.column - 1

    @on(DataTable.CellHighlighted)
    def _highlighted(self, event: DataTable.CellHighlighted) -> None:
        row, col = event.coordinate.row, event.coordinate.column - 1
        self.query_one("#grid-cell", Static).update(self.describe(row, col) if col >= 0 else Text(""))

    @on(DataTable.CellSelected)
    def _selected(self, event: DataTable.CellSelected) -> None:
        self.action_open()

    def action_open(self) -> None:
        # Enter has priority, so it can arrive before the table is composed (a key typed as the screen opens)
        if not self.query(DataTable):
            return
        row, col = self.cursor()
        if col < 0:
            return
        chosen = self.source(row, col)
        if chosen is not None:
            self.dismiss(chosen)
