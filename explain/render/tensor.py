"""A 2-D window of a tensor as a rich Table: index rulers (token labels where the axis is positions), values
and/or a heatmap background, ``…`` where rows or columns are elided, and the colour scale's range.

The cost of rendering depends on the window, never on the tensor's size: only the cells shown are read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from rich.table import Table
from rich.text import Text

from explain.ops.base import exact_text, num

NEG_INF_STYLE = "bold magenta"


@dataclass(frozen=True)
class Scale:
    """A colour scale: sequential [lo, hi] (probabilities) or diverging around 0 (everything else)."""

    lo: float
    hi: float
    diverging: bool

    def legend(self) -> str:
        kind = "diverging" if self.diverging else "sequential"
        return f"colour scale [{num(self.lo, 3)}, {num(self.hi, 3)}] ({kind})"

    def style(self, v: float) -> str:
        """A background colour for v: blue (negative) – neutral – red (positive), or white→green for [0, 1]."""
        if math.isinf(v) or math.isnan(v):
            return NEG_INF_STYLE
        if self.diverging:
            m = max(abs(self.lo), abs(self.hi)) or 1.0
            t = max(-1.0, min(1.0, v / m))
            if t >= 0:
                r, g, b = 255, int(255 - 175 * t), int(255 - 175 * t)
            else:
                r, g, b = int(255 + 175 * t), int(255 + 175 * t), 255
        else:
            span = (self.hi - self.lo) or 1.0
            t = max(0.0, min(1.0, (v - self.lo) / span))
            r, g, b = int(255 - 200 * t), int(255 - 90 * t), int(255 - 200 * t)
        return f"black on rgb({r},{g},{b})"


@dataclass(frozen=True)
class NumberFormat:
    """How one grid prints its numbers: every value with ``precision`` decimals (exact integers too, so ``2``
    never stands beside ``2.0000``); an integer tensor (token ids, targets) bare; a grid whose values the
    decimals would show as 0 (or are too large to read) as mantissas × 10^``exponent``, said in the legend."""

    precision: int = 4
    integer: bool = False
    exponent: int = 0

    def text(self, v: float) -> str:
        v = float(v)
        if math.isinf(v) or math.isnan(v):
            return exact_text(v) or ""
        if self.integer:
            return str(int(v))
        if self.exponent:
            v = v / 10.0 ** self.exponent
        return f"{v:.{self.precision}f}"

    def legend(self) -> str:
        """``values ×1e-06`` when the grid is scaled, else empty."""
        return f"values ×1e{self.exponent:+03d}" if self.exponent else ""


SAMPLE_MAX = 1 << 16  # a bigger slice decides its number format from an evenly strided sample of its cells


def number_format(mat: Any, precision: int | NumberFormat = 4) -> NumberFormat:
    """The format for a grid of ``mat`` (2-D): scientific only when the whole grid needs it."""
    if isinstance(precision, NumberFormat):
        return precision
    import numpy as np

    arr = np.asarray(mat)
    if arr.dtype.kind in "iub":
        return NumberFormat(precision, integer=True)
    if arr.size > SAMPLE_MAX:
        arr = arr.reshape(-1)[:: arr.size // SAMPLE_MAX + 1]
    mags = np.abs(arr[np.isfinite(arr)]) if arr.size else arr
    hi = float(mags.max()) if mags.size else 0.0
    if hi == 0 or 0.5 * 10.0 ** -precision <= hi < 1e6:
        return NumberFormat(precision)
    return NumberFormat(precision, exponent=int(math.floor(math.log10(hi))))


def fmt(v: Any, precision: int | NumberFormat = 4) -> str:
    """A value as a grid cell shows it (see :class:`NumberFormat`)."""
    nf = precision if isinstance(precision, NumberFormat) else NumberFormat(precision)
    return nf.text(v)


def cell_text(v: float, precision: int | NumberFormat = 4, values: bool = True, blank: str = "    ") -> str:
    """What a cell shows: its value, or (colours only) ``blank`` padding, except −∞, which is always written."""
    if values:
        return fmt(v, precision)
    return ("−∞" if v < 0 else "∞") if math.isinf(v) else blank


def cell_style(v: float, scale: Scale | None) -> str:
    """A cell's style: the heat colour when there is a scale, else only ±inf stands out."""
    if scale is not None:
        return scale.style(v)
    return NEG_INF_STYLE if math.isinf(v) else ""


def scale_for(sample: Any, probability: bool = False) -> Scale:
    """The scale for a tensor: [0, 1] for probabilities (softmax output), else from finite sample values."""
    if probability:
        return Scale(0.0, 1.0, False)
    import numpy as np

    finite = sample[np.isfinite(sample)] if sample.size else sample
    if finite.size == 0:
        return Scale(0.0, 1.0, False)
    lo, hi = float(finite.min()), float(finite.max())
    if lo >= 0 and hi <= 1 and lo != hi:
        return Scale(0.0, 1.0, False)
    return Scale(lo, hi, lo < 0 < hi or lo == hi)



def head_tail(n: int, count: int) -> list[int | None]:
    """numpy-style elision: the first and last indices with one ``…`` between, at most ``count`` shown."""
    if n <= count:
        return list(range(n))
    half = max(1, count // 2)
    return list(range(half)) + [None] + list(range(n - (count - half), n))


def tensor_table(mat: Any, rows: list[int | None], cols: list[int | None], *, row_labels: list[str] | None = None,
                 col_labels: list[str] | None = None, precision: int = 4, values: bool = True, heat: bool = True,
                 scale: Scale | None = None, cursor: tuple[int, int] | None = None, title: str | None = None) -> Table:
    """Render the cells ``rows × cols`` of the 2-D array ``mat`` (None in rows/cols draws a ``…``)."""
    precision = number_format(mat, precision)
    table = Table(show_header=True, header_style="bold", box=None, padding=(0, 1), title=title,
                  title_justify="left", pad_edge=False)
    table.add_column("", style="dim", justify="right", no_wrap=True)
    for c in cols:
        head = "…" if c is None else (f"{c}" if not col_labels else f"{c}:{_short(col_labels[c])}")
        table.add_column(head, justify="right", no_wrap=True)
    for r in rows:
        if r is None:
            table.add_row("⋮", *["⋮" if c is not None else "⋱" for c in cols])
            continue
        label = f"{r}" if not row_labels else f"{r}:{_short(row_labels[r])}"
        cells: list[Any] = [label]
        for c in cols:
            if c is None:
                cells.append("…")
                continue
            v = float(mat[r, c])
            text = cell_text(v, precision, values)
            style = cell_style(v, scale if heat else None)
            if cursor == (r, c):
                style = (style + " reverse bold").strip()
            cells.append(Text(text, style=style))
        table.add_row(*cells)
    return table


def _short(label: str, width: int = 8) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"
