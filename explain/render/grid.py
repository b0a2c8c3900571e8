"""A tensor window: which rows and columns of a 2-D slice fit a given area, and that window drawn as rich
Text with fixed column widths (so a mouse position maps back to a cell).

The TUI's window follows a cursor and can be panned (:func:`fit_window`); the plain printer's is numpy-style,
head and tail, as many columns as the console is wide (:class:`TensorWindow`, a rich renderable with its
colour legend). Both are drawn by :func:`draw_window` with one :class:`~explain.render.tensor.NumberFormat`
per slice and the colours of :mod:`explain.render.colour`.

Cost: fitting and drawing read only the cells of the window (plus the headers of the columns tried), never
the whole tensor, so a 50257-wide row of logits costs what a 4-wide one does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.console import Group
from rich.text import Text

from explain.render.colour import ColourLegend, Heat, Scale, cell_style, heat_for, special_kind
from explain.render.tensor import NumberFormat, cell_text, head_tail, number_format

ROW_GAP = 1  # a "⋮" line stands for elided rows
COL_GAP = 2  # a "…" column (and its space) stands for elided columns
LABEL_MAX = 8  # token labels are cut to this many characters when the window would not fit whole otherwise
LABEL_WHOLE = 24  # up to this many when it does (no 'the/<pa…' beside free space)
CURSOR_STYLE = "reverse bold"
MARK_STYLE = "bold underline"  # the input cells that fed the cell under the cursor (readable without colour)
MARK_RULER = "bold underline yellow"


@dataclass(frozen=True)
class Marks:
    """The cells of a 2-D slice to mark: a row (int) or every row (None) × a column or every column."""

    r: int | None
    c: int | None

    def row(self, r: int) -> bool:
        return self.r is None or self.r == r

    def col(self, c: int) -> bool:
        return self.c is None or self.c == c

    @property
    def anchor(self) -> tuple[int, int]:
        """A marked cell to keep in the window."""
        return (self.r or 0, self.c or 0)


@dataclass(frozen=True)
class Window:
    """The rows and columns of a 2-D slice that are shown (None marks an elision) and each column's width."""

    rows: list[int | None]
    cols: list[int | None]
    widths: list[int]  # one per entry of cols, including the separating space
    label_width: int
    header_lines: int
    label_max: int = LABEL_MAX  # the token labels' length

    @property
    def row_start(self) -> int:
        return next(r for r in self.rows if r is not None)

    @property
    def col_start(self) -> int:
        return next(c for c in self.cols if c is not None)

    def cell_at(self, x: int, y: int) -> tuple[int, int] | None:
        """The (row, col) drawn at offset (x, y) of the grid, or None for a ruler, label or elision."""
        ri = y - self.header_lines
        if not 0 <= ri < len(self.rows) or self.rows[ri] is None:
            return None
        left = self.label_width
        for c, w in zip(self.cols, self.widths):
            if left <= x < left + w:
                return None if c is None else (self.rows[ri], c)  # type: ignore[return-value]
            left += w
        return None


def _plain_format(mat: Any, precision: int | NumberFormat) -> NumberFormat:
    """The given format, or plain decimals for a number: never a pass over the matrix here (the window's cost
    stays the window's; callers that want a grid-wide format compute it once with ``number_format``)."""
    if isinstance(precision, NumberFormat):
        return precision
    return NumberFormat(precision, integer=getattr(getattr(mat, "dtype", None), "kind", "f") in "iub")


def fit_axis(n: int, origin: int, cursor: int, capacity: int, size: Callable[[int], int],
             gap: int) -> list[int | None]:
    """Indices of an axis of length ``n`` that fit ``capacity`` (index i takes ``size(i)``, an elision takes
    ``gap``), starting at ``origin`` if the cursor is then visible, else ending at the cursor. At least the
    cursor is always shown. Work is proportional to the indices shown, not to ``n``."""
    if n <= 0:
        return []
    cursor = max(0, min(cursor, n - 1))
    start = max(0, min(origin, cursor))

    def forward(first: int) -> list[int]:
        used, out, i = (gap if first > 0 else 0), [], first
        while i < n:
            need = size(i) + (gap if i + 1 < n else 0)
            if out and used + need > capacity:
                break
            out.append(i)
            used += size(i)
            i += 1
        return out

    def backward(last: int) -> list[int]:
        used, out, i = (gap if last + 1 < n else 0), [], last
        while i >= 0:
            need = size(i) + (gap if i > 0 else 0)
            if out and used + need > capacity:
                break
            out.append(i)
            used += size(i)
            i -= 1
        return out[::-1]

    shown = forward(start)
    if cursor > shown[-1]:
        shown = backward(cursor)
    elif shown[-1] == n - 1 and start > 0:
        # the window reaches the end with room to spare (after a resize): fill it from the end
        back = backward(n - 1)
        if back[0] < start:
            shown = back
    out: list[int | None] = list(shown)
    if shown[0] > 0:
        out.insert(0, None)
    if shown[-1] < n - 1:
        out.append(None)
    return out


def _label(labels: list[str] | None, i: int, limit: int = LABEL_MAX) -> str:
    if not labels:
        return ""
    s = labels[i]
    return s if len(s) <= limit else s[: limit - 1] + "…"


def fit_window(mat: Any, origin: tuple[int, int], cursor: tuple[int, int], width: int, height: int, *,
               row_labels: list[str] | None = None, col_labels: list[str] | None = None,
               precision: int | NumberFormat = 4, values: bool = True) -> Window:
    """The window of ``mat`` (2-D) that fits ``width`` × ``height`` characters, rulers and labels included.
    ``precision`` is a :class:`NumberFormat` (the caller computes it once per slice) or a number of decimals.
    Token labels are whole (up to LABEL_WHOLE) when every column still fits, else cut to LABEL_MAX."""
    args = (mat, origin, cursor, width, height, row_labels, col_labels, precision, values)
    if row_labels or col_labels:
        whole = _fit(*args, LABEL_WHOLE)
        if None not in whole.cols:
            return whole
    return _fit(*args, LABEL_MAX)


def _fit(mat: Any, origin: tuple[int, int], cursor: tuple[int, int], width: int, height: int,
         row_labels: list[str] | None, col_labels: list[str] | None, precision: int | NumberFormat, values: bool,
         limit: int) -> Window:
    precision = _plain_format(mat, precision)
    n_rows, n_cols = mat.shape
    header = 2 if col_labels else 1
    capacity = max(1, height - header)
    rows = fit_axis(n_rows, origin[0], cursor[0], capacity, lambda i: 1, ROW_GAP)
    while len(rows) > capacity and None in rows:  # too short for a ⋮ and the cursor's row: the row wins
        rows.remove(None)
    shown_rows = [r for r in rows if r is not None]
    idx_w = len(str(shown_rows[-1])) if shown_rows else 1
    lab_w = max((len(_label(row_labels, r, limit)) for r in shown_rows), default=0) if row_labels else 0
    label_width = idx_w + (lab_w + 1 if lab_w else 0) + 1

    cache: dict[int, int] = {}

    def col_width(c: int) -> int:
        if c not in cache:
            cells = max((len(cell_text(float(mat[r, c]), precision, values, "  ")) for r in shown_rows), default=1)
            cache[c] = max(len(str(c)), len(_label(col_labels, c, limit)), cells) + 1
        return cache[c]

    cols = fit_axis(n_cols, origin[1], cursor[1], max(1, width - label_width), col_width, COL_GAP)
    widths = [COL_GAP if c is None else col_width(c) for c in cols]
    return Window(rows, cols, widths, label_width, header, limit)


def draw_window(mat: Any, win: Window, *, row_labels: list[str] | None = None, col_labels: list[str] | None = None,
                precision: int | NumberFormat = 4, values: bool = True, scale: Scale | Heat | None = None,
                cursor: tuple[int, int] | None = None, marks: Marks | None = None, masked_by: Any = None,
                before: Any = None, seen: set[str] | None = None, idle: Any = None) -> Text:
    """The window as Text: an index ruler (and a token ruler) above, index and token labels on the left, one
    cell per shown (row, col), ``…``/``⋮`` where indices are elided, −inf always spelled out.

    ``masked_by``: the 2-D input slice whose −inf cells this output masks (a softmax after a mask), drawn as
    masked; ``before``: the 2-D input slice whose −inf cells were −inf already (an earlier mask), drawn apart
    from the −inf this step makes; ``idle``: a flag per row, set for the positions the router did not send to the
    expert shown (drawn greyed); ``seen`` collects the special cells drawn (``-inf``, ``-inf-before``, ``masked``,
    ``idle``) for the legend's swatches."""
    precision = _plain_format(mat, precision)
    out = Text(no_wrap=True, overflow="crop")
    lw = win.label_width
    cur_r, cur_c = cursor if cursor is not None else (-1, -1)
    out.append(" " * lw)
    for c, w in zip(win.cols, win.widths):
        ruler = MARK_RULER if marks is not None and c is not None and marks.col(c) else "dim"
        out.append(("…" if c is None else str(c)).rjust(w - 1) + " ", "bold" if c == cur_c else ruler)
    if col_labels:
        out.append("\n" + " " * lw)
        for c, w in zip(win.cols, win.widths):
            out.append(("" if c is None else _label(col_labels, c, win.label_max)).rjust(w - 1) + " ",
                       "bold" if c == cur_c else "dim italic")
    shown = [r for r in win.rows if r is not None]
    idx_w = len(str(shown[-1])) if shown else 1
    for r in win.rows:
        out.append("\n")
        if r is None:
            out.append("⋮".rjust(idx_w).ljust(lw), "dim")
            out.append("".join(("⋱" if c is None else "⋮").rjust(w - 1) + " " for c, w in zip(win.cols, win.widths)),
                       "dim")
            continue
        label = str(r).rjust(idx_w) + (" " + _label(row_labels, r, win.label_max) if row_labels else "")
        ruler = MARK_RULER if marks is not None and marks.row(r) else "dim"
        out.append(label.ljust(lw), "bold" if r == cur_r else ruler)
        for c, w in zip(win.cols, win.widths):
            if c is None:
                out.append("…".rjust(w - 1) + " ", "dim")
                continue
            v = float(mat[r, c])
            kind = "idle" if idle is not None and idle[r] else special_kind(v, masked_by, before, r, c)
            if seen is not None and kind:
                seen.add(kind)
            style = cell_style(v, scale, r, kind)
            if r == cur_r and c == cur_c:
                style = f"{style} {CURSOR_STYLE}".strip()
            elif marks is not None and marks.row(r) and marks.col(c):
                style = f"{style} {MARK_STYLE}".strip()
            out.append(cell_text(v, precision, values, " " * (w - 1)).rjust(w - 1), style)
            out.append(" ")
    return out


def window_scale(mat: Any, win: Window, probability: bool = False) -> tuple[Scale, str]:
    """The fixed colour scale for a window and what it covers: [0, 1] for probabilities; the whole slice when
    it is small (the caller caches it per step and slice); otherwise the cells shown, so the cost stays the
    window's. See :func:`explain.render.colour.heat_for` for the other scales."""
    heat = heat_for(mat, shown(win.rows), shown(win.cols), probability)
    return heat.scale, heat.covers


def shown(indices: list[int | None]) -> list[int]:
    """The indices of a window's axis without its elisions."""
    return [i for i in indices if i is not None]


def head_tail_window(mat: Any, max_rows: int, width: int, *, row_labels: list[str] | None = None,
                     col_labels: list[str] | None = None, precision: int | NumberFormat = 4,
                     values: bool = True) -> Window:
    """numpy-style: the first and last rows (at most ``max_rows``) and as many first and last columns as fit
    ``width`` characters, with a ``…`` column between; no number is ever cut."""
    nf = number_format(mat, precision)
    n_rows, n_cols = mat.shape
    rows = head_tail(n_rows, max_rows)
    shown = [r for r in rows if r is not None]
    header = 2 if col_labels else 1
    idx_w = len(str(shown[-1])) if shown else 1
    lab_w = max((len(_label(row_labels, r)) for r in shown), default=0) if row_labels else 0
    label_width = idx_w + (lab_w + 1 if lab_w else 0) + 1

    def col_width(c: int) -> int:
        cells = max((len(cell_text(float(mat[r, c]), nf, values, "  ")) for r in shown), default=1)
        return max(len(str(c)), len(_label(col_labels, c)), cells) + 1

    count = min(n_cols, max(2, width // 2))  # a column takes 2 characters at least: never measure all 10⁷
    measured: dict[int, int] = {}
    while True:
        cols = head_tail(n_cols, count)
        widths = [COL_GAP if c is None else measured.get(c) or measured.setdefault(c, col_width(c)) for c in cols]
        if count <= 2 or label_width + sum(widths) <= width:
            return Window(rows, cols, widths, label_width, header)
        count = min(count - 1, max(2, (count * width) // max(1, label_width + sum(widths))))


class TensorWindow:
    """A 2-D slice as a rich renderable: numpy-style window fitted to the console's width at render time,
    rulers, token labels, heat colours and the ``…`` column that marks hidden columns, then its legend (the
    colour bar, the −inf and masked swatches, the number format's note) fitted to the same width.

    ``heat``: colour the cells (the scale is the fixed one: :func:`~explain.render.colour.heat_for`) unless the
    tensor holds integers (token ids, targets: labels, not magnitudes); ``probability``: [0, 1]; ``masked_by``
    and ``before``: see :func:`draw_window`."""

    def __init__(self, mat: Any, *, max_rows: int = 8, row_labels: list[str] | None = None,
                 col_labels: list[str] | None = None, precision: int | NumberFormat = 4, values: bool = True,
                 heat: bool = False, probability: bool = False, masked_by: Any = None, before: Any = None,
                 legend: bool = True, idle: Any = None) -> None:
        self.mat, self.max_rows, self.row_labels, self.col_labels = mat, max_rows, row_labels, col_labels
        self.nf, self.values = number_format(mat, precision), values
        self.heat, self.probability, self.legend = heat, probability, legend
        self.masked_by, self.before, self.idle = masked_by, before, idle

    def __rich_console__(self, console: Any, options: Any) -> Any:
        win = head_tail_window(self.mat, self.max_rows, options.max_width, row_labels=self.row_labels,
                               col_labels=self.col_labels, precision=self.nf, values=self.values)
        heat = None
        if self.heat and not self.nf.integer:
            heat = heat_for(self.mat, shown(win.rows), shown(win.cols), self.probability, masked_by=self.masked_by)
        seen: set[str] = set()
        grid = draw_window(self.mat, win, row_labels=self.row_labels, col_labels=self.col_labels, precision=self.nf,
                           values=self.values, scale=heat, masked_by=self.masked_by, before=self.before, seen=seen,
                           idle=self.idle)
        if not self.legend:
            yield grid
            return
        legend = ColourLegend(heat, seen=seen, note=self.nf.legend(), integer=self.heat and self.nf.integer,
                              styled=console.color_system is not None)
        line = legend.text(options.max_width)
        yield Group(grid, line) if line.plain else grid
