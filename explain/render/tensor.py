"""How a tensor's cells are written: one :class:`NumberFormat` per grid, a cell's text, numpy-style elision.
The one tensor renderable is :class:`explain.render.grid.TensorWindow`; its colours are in
:mod:`explain.render.colour` (``Scale`` and ``scale_for`` are re-exported here for their old importers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from explain.ops.base import exact_text, grid_number
from explain.render.colour import Scale, scale_for

__all__ = ["NumberFormat", "Scale", "cell_text", "fmt", "head_tail", "number_format", "scale_for"]


@dataclass(frozen=True)
class NumberFormat:
    """How one grid prints its numbers: every value with ``precision`` decimals (exact integers too, so ``2``
    never stands beside ``2.0000``); an integer tensor (token ids, targets) bare; a grid whose values the
    decimals would show as 0 (or are too large to read) as mantissas × 10^``exponent``, said in the legend;
    one value that would round to 0 among larger ones as ``1.1e-07`` (never ``0.0000``), and −0 as 0.
    ``words``: the vocabulary of an integer tensor of token ids, each id then written with its word (``20
    starts``), so nobody matches ids to words by hand."""

    precision: int = 4
    integer: bool = False
    exponent: int = 0
    words: Any = field(default=None, compare=False)

    def text(self, v: float) -> str:
        v = float(v)
        if math.isinf(v) or math.isnan(v):
            return exact_text(v) or ""
        if self.integer:
            i = int(v)
            return f"{i} {self.words[i]}" if self.words is not None and 0 <= i < len(self.words) else str(i)
        if self.exponent < -300:  # a subnormal grid (5e-324 has exponent -324): 10.0 ** -324 is 0.0
            v = v * 1e300 / 10.0 ** (self.exponent + 300)
        elif self.exponent:
            v = v / 10.0 ** self.exponent
        return grid_number(v, self.precision)  # the table of terms' cells and str(explanation) write it alike

    def legend(self) -> str:
        """``values ×1e-06`` when the grid is scaled, else empty."""
        return f"values ×1e{self.exponent:+03d}" if self.exponent else ""


SAMPLE_MAX = 1 << 16  # a bigger slice decides its number format from an evenly strided sample of its cells


def number_format(mat: Any, precision: int | NumberFormat = 4, words: Any = None) -> NumberFormat:
    """The format for a grid of ``mat`` (2-D): scientific only when the whole grid needs it; ``words`` (the
    vocabulary) for a tensor of token ids."""
    if isinstance(precision, NumberFormat):
        return precision
    import numpy as np  # lazy: numpy off the shape path

    arr = np.asarray(mat)
    if arr.dtype.kind in "iub":
        return NumberFormat(precision, integer=True, words=words if arr.dtype.kind in "iu" else None)
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


def head_tail(n: int, count: int) -> list[int | None]:
    """numpy-style elision: the first and last indices with one ``…`` between, at most ``count`` shown."""
    if n <= count:
        return list(range(n))
    half = max(1, count // 2)
    return list(range(half)) + [None] + list(range(n - (count - half), n))
