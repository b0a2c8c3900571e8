"""Markdown tables that fit the pane they are drawn in: a tutorial's narration may hold a table (tutorial 17's
pairs of dimensions and their angles), and the tutorial pane is 30 to 60 columns wide. Squeezed into that,
rich cut each cell to a few letters (``fre…``, ``(1.…``) and the student could read none of it.

:func:`fit_tables` keeps a table that fits the width whole and writes one that does not as a list, one item a
row, each cell under its column's name::

    - pair (0, 2)
        - frequency: 10000^0 = 1
        - angle at p = 2: 2 rad

Pure text in, text out: the TUI's narration pane calls it with its width.
"""

from __future__ import annotations

import re

from rich.cells import cell_len

_RULE = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")  # | --- | :---: |
_MARKUP = re.compile(r"[*_`]")  # emphasis and code marks take no room on screen


def _cells(line: str) -> list[str]:
    """The cells of one table row: ``| a | b |`` → ``["a", "b"]``."""
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") else inner
    return [cell.strip() for cell in inner.split("|")]


def _width(rows: list[list[str]]) -> int:
    """Columns rich's Markdown takes to draw a table with no cell wrapped: each column its widest cell and a
    space either side (tests/render/test_fit_tables.py checks this against rich itself)."""
    widths = [max(cell_len(_MARKUP.sub("", row[i])) if i < len(row) else 0 for row in rows)
              for i in range(max(len(row) for row in rows))]
    return sum(widths) + 2 * len(widths)


def _as_list(header: list[str], body: list[list[str]]) -> list[str]:
    """A table as a Markdown list: each row an item named by its first cell (after the first column's name,
    when it has one), its other cells beneath it as ``name: value``."""
    out: list[str] = []
    for row in body:
        row = row + [""] * (len(header) - len(row))
        first = f"{header[0]} {row[0]}" if header[0] else row[0]
        out.append(f"- **{first}**" if first else "-")
        out.extend(f"    - {name}: {cell}" if name else f"    - {cell}" for name, cell in zip(header[1:], row[1:]))
    return out


def fit_tables(markdown: str, width: int) -> str:
    """``markdown`` with every table wider than ``width`` columns written as a list (see the module's doc);
    a table that fits, and everything else, is left as it is."""
    lines = markdown.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        if lines[i].lstrip().startswith("|") and i + 1 < len(lines) and _RULE.match(lines[i + 1]):
            end = i + 2
            while end < len(lines) and lines[end].lstrip().startswith("|"):
                end += 1
            header, body = _cells(lines[i]), [_cells(line) for line in lines[i + 2:end]]
            if body and _width([header, *body]) > width:
                out.extend(_as_list(header, body))
            else:
                out.extend(lines[i:end])
            i = end
        else:
            out.append(lines[i])
            i += 1
    return "\n".join(out)
