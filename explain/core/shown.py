"""How a result of the Python API shows itself outside the TUI: as plain text (``str(result)``, what ``print``
writes) and as one self-contained HTML table for notebooks (``result._repr_html_()``, what Jupyter draws).

A result (a cell's explanation, the logit lens, an attribution, a patch) says what it shows as a list of
:class:`Line` s and :class:`Grid` s of strings, built in its own layer from the same strings the CLI's
``--plain`` tables print; :class:`Showable` turns that list into text and HTML. Nothing here imports rich (the
core never does), so a lower layer's object prints itself without an import running up to ``render``.

The HTML has no script and no stylesheet: inline styles only, every text escaped (a token ``<script>`` is
printed as text), and no colour of its own except where it sets both the text and the background (the patch
heatmap's cells), so it reads the same in a notebook's light and dark themes.
"""

from __future__ import annotations

import html
import unicodedata
from dataclasses import dataclass

STYLES = {  # a line's style, as inline CSS: weight, slant and opacity keep the theme's own colours
    "": "",
    "title": "font-weight:bold",
    "caption": "font-style:italic",
    "result": "font-weight:bold",
    "note": "opacity:0.7",
    "warn": "font-weight:bold",
    "origin": "font-style:italic",
}


@dataclass(frozen=True)
class Line:
    """One line of text, and how it is emphasised (a key of :data:`STYLES`)."""

    text: str
    style: str = ""


@dataclass(frozen=True)
class Grid:
    """A table of strings: its column headings, its rows, which columns are right-aligned (numbers; all when
    empty), which column is emphasised (the position a lens reads; -1: none) and, for a heatmap, a value in
    [-1, 1] per cell that colours its background (blue, white, red)."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    right: tuple[bool, ...] = ()
    bold: int = -1
    heat: tuple[tuple[float, ...], ...] = ()

    def aligned_right(self, col: int) -> bool:
        return self.right[col] if col < len(self.right) else not self.right


Part = Line | Grid


def width(text: str) -> int:
    """Columns ``text`` takes in a monospace font: a wide (CJK) character two, a combining mark none."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
               for c in text)


def _pad(text: str, n: int, right: bool) -> str:
    gap = " " * max(0, n - width(text))
    return gap + text if right else text + gap


def grid_text(grid: Grid) -> list[str]:
    """The grid as lines: headings, then rows, columns two spaces apart, each as wide as its widest cell."""
    table = [grid.columns, *grid.rows]
    widths = [max(width(row[c]) for row in table if c < len(row)) for c in range(len(grid.columns))]
    return ["  ".join(_pad(cell, widths[c], grid.aligned_right(c)) for c, cell in enumerate(row)).rstrip()
            for row in table]


def as_text(parts: list[Part]) -> str:
    """The parts as plain text, a line each (a grid its lines)."""
    out: list[str] = []
    for part in parts:
        out.extend(grid_text(part) if isinstance(part, Grid) else part.text.split("\n"))
    return "\n".join(out)


def heat_style(v: float) -> str:
    """A heatmap cell's background from blue (−1) through white (0) to red (+1), its text black on it: the colours
    the terminal's heatmap uses, with both set, so the cell reads in a light and a dark theme alike."""
    x = max(-1.0, min(1.0, float(v))) if v == v else 0.0  # NaN: white
    r, g, b = (255, int(255 * (1 - x)), int(255 * (1 - x))) if x >= 0 else (int(255 * (1 + x)), int(255 * (1 + x)), 255)
    return f"color:#000;background-color:rgb({r},{g},{b})"


_CELL = "padding:1px 8px;text-align:{};white-space:pre;{}"


def grid_html(grid: Grid) -> str:
    """The grid as an HTML table: a heading row (a rule under it in the text's own colour), then the rows."""
    def cell(tag: str, text: str, col: int, extra: str = "") -> str:
        bold = "font-weight:bold;" if col == grid.bold else ""
        align = "right" if grid.aligned_right(col) else "left"
        return f'<{tag} style="{_CELL.format(align, bold + extra)}">{html.escape(text)}</{tag}>'

    head = "".join(cell("th", c, i, "border-bottom:1px solid currentColor;") for i, c in enumerate(grid.columns))
    rows = []
    for r, row in enumerate(grid.rows):
        heat = grid.heat[r] if r < len(grid.heat) else ()
        rows.append("<tr>" + "".join(cell("td", text, c, heat_style(heat[c - 1]) if 0 < c <= len(heat) else "")
                                     for c, text in enumerate(row)) + "</tr>")
    return ('<table style="border-collapse:collapse;margin:4px 0;font-family:monospace">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")


def as_html(parts: list[Part]) -> str:
    """The parts as one ``<div>``: each line a ``<div>`` of its own (escaped, spaces kept), each grid a table."""
    out = []
    for part in parts:
        if isinstance(part, Grid):
            out.append(grid_html(part))
        else:
            style = "white-space:pre-wrap;" + STYLES.get(part.style, "")
            out.append(f'<div style="{style}">{html.escape(part.text) or "&nbsp;"}</div>')
    return f'<div style="font-family:monospace;line-height:1.4">{"".join(out)}</div>'


class Showable:
    """A result that prints as text (``str``) and draws as HTML in a notebook (``_repr_html_``) from what its
    :meth:`display_parts` gives. The heatmap column convention: a grid's ``heat`` covers its columns after the first."""

    def display_parts(self) -> list[Part]:
        raise NotImplementedError

    def __str__(self) -> str:
        return as_text(self.display_parts())

    def _repr_html_(self) -> str:
        return as_html(self.display_parts())
