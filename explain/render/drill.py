"""The drill-down drawn for the pane it is given: a head line, a body (the title, the table of terms, the
arithmetic) and the result line, whatever the pane's size. The table of terms is cut (``⋮``) to the rows that
fit beside the rest; a body still too long scrolls, with the result line pinned at the bottom. Also its
measures (natural width, lines for everything, lines with the table cut short), which the step screen's layout
reads: both from the same rendering, so the measure and the picture agree.

Pure functions of an explanation and a size: the TUI's drill-down calls :func:`drill_lines` when it paints,
from its own content region, so it draws for the size Textual gave it in the frame the size came with.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, replace
from typing import Any

from rich.console import Console, Group
from rich.measure import Measurement
from rich.text import Text

from explain.ops.base import CellExplanation
from explain.render.step import explanation_body, explanation_result, table_rows, widest_row

MEASURE_ROWS = 64  # the widest cell of each column of the table of terms is looked for in this many rows
_console = Console(file=io.StringIO(), width=100, color_system=None, legacy_windows=False)


@dataclass(frozen=True)
class Drill:
    """The drill-down at one size: the lines to draw, the rows of the table shown, how far the body scrolls."""

    lines: list[Text]
    table_rows: int
    max_scroll: int


def text_lines(renderable: Any, width: int) -> list[Text]:
    """``renderable`` wrapped to ``width`` columns, a Text per line with its styles (what a pane draws, cut to
    its height by the caller)."""
    options = _console.options.update(width=max(1, width))
    return [Text.assemble(*((seg.text, seg.style) for seg in line if not seg.control))
            for line in _console.render_lines(renderable, options, pad=False)]


def _shown(ex: CellExplanation, rows: int) -> int:
    """Lines the table of terms takes with ``rows`` asked for (its ``⋮`` included; 0 without a table)."""
    if not (ex.columns and ex.rows):
        return 0
    n = len(ex.rows)
    return len(table_rows(n, n if rows >= n - 1 else max(2, rows), ex.focus))


def body_parts(ex: CellExplanation | Text, precision: int, width: int, height: int) -> tuple[list[Text], int]:
    """The body's lines at ``width`` with the table of terms cut to fit ``height`` lines (never below two rows:
    then the body is longer than ``height`` and scrolls), and the rows asked of the table."""
    if isinstance(ex, Text):
        return text_lines(ex, width), 0
    n = len(ex.rows)
    if not (ex.columns and ex.rows) or n <= 2:
        return text_lines(explanation_body(ex, precision=precision, max_rows=max(n, 2), width=width), width), max(n, 2)
    short = text_lines(explanation_body(ex, precision=precision, max_rows=2, width=width), width)
    spare = height - (len(short) - _shown(ex, 2))  # lines for the table's rows (and its ⋮)
    if spare <= _shown(ex, 2):
        return short, 2
    rows = n if spare >= n else max(2, spare - 1)
    body = text_lines(explanation_body(ex, precision=precision, max_rows=rows, width=width), width)
    over = len(body) - height
    if over > 0 and rows > 2:  # a cut that added a ⋮ gap, or a row that wrapped: the table gives the lines back
        rows = max(2, min(rows, n - 2) - over)
        body = text_lines(explanation_body(ex, precision=precision, max_rows=rows, width=width), width)
    return body, rows


def drill_lines(head: Text, ex: CellExplanation | Text, precision: int, width: int, height: int,
                scroll: int = 0) -> Drill:
    """The drill-down in ``width`` × ``height`` cells: the head, the body (its table cut to fit; scrolled by
    ``scroll`` lines when it is still too long) and the result, right after the body or pinned at the bottom."""
    width, height = max(1, width), max(1, height)
    result = (explanation_result(ex, precision=precision, width=width) if isinstance(ex, CellExplanation)
              else Text(""))
    result_lines = [Text(line, style=result.style) for line in result.plain.split("\n")] if result.plain else []
    room = max(1, height - 1 - len(result_lines))
    body, rows = body_parts(ex, precision, width, room)
    if len(body) > room and width > 2:  # it scrolls: a column for its scroll bar
        body, rows = body_parts(ex, precision, width - 1, room)
    max_scroll = max(0, len(body) - room)
    scroll = max(0, min(scroll, max_scroll))
    shown = body[scroll: scroll + room]
    if max_scroll:
        shown = [line.copy() for line in shown]
        thumb = max(1, room * room // len(body))
        start = min(room - thumb, round(scroll * (room - thumb) / max_scroll))
        for i, line in enumerate(shown):
            line.truncate(width - 1, pad=True)
            line.append("█" if start <= i < start + thumb else "▕", "dim")
    lines = [head, *shown, *result_lines]
    for line in lines:
        line.no_wrap, line.overflow = True, "ellipsis"
    return Drill(lines, rows, max_scroll)


def drill_measure(head: Text, ex: CellExplanation | Text, precision: int, width: int) -> tuple[int, int, int]:
    """(natural width, lines for everything, lines with the table cut to two rows) at ``width`` columns.

    Measured on a stand-in with one row in the table of terms, each of its cells the widest of that column
    (over the first MEASURE_ROWS rows): every row of a table is one line (its columns never wrap), so the
    stand-in's width is the table's and its height plus the other rows is the whole drill-down's, at the
    cost of one row instead of a rich layout of every row (a 768-term dot product measured in full took
    ~20 ms)."""
    width = max(20, width)
    if not isinstance(ex, CellExplanation):
        body = Group(head, ex)
        lines = len(text_lines(body, width))
        return max(40, Measurement.get(_console, _console.options, body).maximum), lines, lines
    result = explanation_result(ex, precision=precision, width=width)
    stand_in = replace(ex, rows=[widest_row(ex, precision, MEASURE_ROWS)]) if ex.rows else ex
    one = Group(head, explanation_body(stand_in, precision=precision, max_rows=1), result)
    natural = Measurement.get(_console, _console.options.update(width=width), one).maximum
    lines = len(text_lines(one, width))
    extra = max(0, len(ex.rows) - 1)
    return natural, lines + extra, lines + max(0, _shown(ex, 2) - 1)
