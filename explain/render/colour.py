"""Colour that carries the value: the heat palettes, the colour scale of a window (fixed, the slice's own
min–max, or each row's own), the styles of −inf and masked cells, and the legend drawn under every heatmap
(a gradient bar with its end values, what the scale covers, a swatch for each special kind of cell shown).

The palettes are colours of the xterm 256-colour palette, so a terminal with 256 colours shows what a
truecolor one does: rich's downgrade maps each to itself (the light grey to its neighbour) and no two bins
merge (a test checks). Each scale has
a few bins, not a continuous ramp: the bar under the grid then shows every colour a cell can have, and 0.1 vs
0.3 on the fixed [0, 1] scale are two bins apart. Under NO_COLOR nothing here is used but the plain styles
(−inf bold, masked dim): cells show values only.

Cost: a scale reads the slice once when the slice is small (callers cache it per step and slice) and only the
cells shown when it is big (a 50257-wide row of logits), so a repaint costs what the window does.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from explain.ops.base import num

# viridis-like, dark (low) to bright (high), as xterm-256 cube colours (54 60 24 30 36 71 77 148 184 220)
SEQUENTIAL = ("#5f0087", "#5f5f87", "#005f87", "#008787", "#00af87", "#5faf5f", "#5fd75f", "#afd700",
              "#d7d700", "#ffd700")
SEQUENTIAL_DARK = 5  # the first bins are dark: their values are written in white
# RdBu-like, blue (negative) – light grey (0) – red (positive), xterm-256 (18 25 68 110 189 254→253 224 216 167 124 88)
DIVERGING = ("#000087", "#005faf", "#5f87d7", "#87afd7", "#d7d7ff", "#e4e4e4", "#ffd7d7", "#ffaf87", "#d75f5f",
             "#af0000", "#870000")
DIVERGING_DARK = (0, 1, 9, 10)

NEG_INF_STYLE = "bold #ffffff on #585858"  # a score this step set to −inf (masked): grey, no hue of a palette
BEFORE_STYLE = "#bcbcbc on #3a3a3a"  # a score that was −inf already (an earlier mask): a darker grey
MASKED_STYLE = "#a8a8a8 on #303030"  # a weight that is 0 because its score was −inf: darker still
NEG_INF_PLAIN = "bold"  # without colours (NO_COLOR, values only): marked by style alone
BEFORE_PLAIN = MASKED_PLAIN = "dim"
# the special cells: (a sample cell, what it means, its style, its style without colours)
SWATCHES = {"-inf": ("−∞", "masked", NEG_INF_STYLE, NEG_INF_PLAIN),
            "-inf-before": ("−∞", "masked before", BEFORE_STYLE, BEFORE_PLAIN),
            "masked": ("0", "masked (score −inf)", MASKED_STYLE, MASKED_PLAIN),
            "idle": ("0", "unrouted (not sent to this expert)", "#8a8a8a on #262626", "dim")}  # render.step.idle_rows

SCALE_MODES = ("fixed", "row", "slice")  # what the key cycles: see :func:`heat_for`
SCALE_NAMES = {"fixed": "fixed ([0, 1] for weights, 0 at the centre for signed values)",
               "row": "each row's own min–max", "slice": "the slice's own min–max"}
WHOLE_SLICE_MAX = 1 << 18  # slices up to this many cells get a scale over the whole slice


@dataclass(frozen=True)
class Scale:
    """A colour scale: sequential bins over [lo, hi], or diverging bins over [−m, m] around 0."""

    lo: float
    hi: float
    diverging: bool

    @property
    def palette(self) -> tuple[str, ...]:
        return DIVERGING if self.diverging else SEQUENTIAL

    @property
    def ends(self) -> tuple[float, float]:
        """The values at the two ends of the bar: [−m, m] for a diverging scale, so 0 sits in the middle."""
        if self.diverging:
            m = max(abs(self.lo), abs(self.hi))
            return -m, m
        return self.lo, self.hi

    def legend(self) -> str:
        kind = "diverging" if self.diverging else "sequential"
        return f"colour scale [{num(self.lo, 3)}, {num(self.hi, 3)}] ({kind})"

    def bin(self, v: float) -> int:
        """The palette index of a finite value (clamped to the ends)."""
        lo, hi = self.ends
        n = len(self.palette)
        span = hi - lo
        if span <= 0:  # one value (a row with one weight left by the mask): the middle colour, neither end
            return n // 2
        return max(0, min(n - 1, int((v - lo) / span * n)))

    def style(self, v: float) -> str:
        """The cell style for v: its bin's colour as background, the value in white or black to read on it."""
        if math.isinf(v) or math.isnan(v):
            return NEG_INF_STYLE
        i = self.bin(v)
        dark = i in DIVERGING_DARK if self.diverging else i < SEQUENTIAL_DARK
        return f"{'#ffffff' if dark else '#000000'} on {self.palette[i]}"

    def at(self, row: int) -> Scale:
        """The scale of a row: this one (a :class:`Heat` in row mode has one per row)."""
        return self


@dataclass(frozen=True)
class Heat:
    """The colours of one window: a scale for every row (``rows``, row mode) or one for all, and what it covers
    (said by the legend). ``windowed``: computed from the cells shown, so it cannot be cached for the slice."""

    mode: str
    scale: Scale
    covers: str
    rows: dict[int, Scale] | None = None
    windowed: bool = False

    def at(self, row: int) -> Scale:
        if self.rows is not None and row in self.rows:
            return self.rows[row]
        return self.scale


def scale_for(sample: Any, probability: bool = False) -> Scale:
    """The fixed scale for a tensor: [0, 1] for probabilities (softmax output); [0, 1] for values inside it;
    diverging around 0 for values of both signs; else the finite sample's min–max."""
    if probability:
        return Scale(0.0, 1.0, False)
    import numpy as np  # lazy: numpy off the shape path

    finite = sample[np.isfinite(sample)] if sample.size else sample
    if finite.size == 0:
        return Scale(0.0, 1.0, False)
    lo, hi = float(finite.min()), float(finite.max())
    if lo >= 0 and hi <= 1 and lo != hi:
        return Scale(0.0, 1.0, False)
    return Scale(lo, hi, lo < 0 < hi or lo == hi)


def heat_for(mat: Any, rows: Iterable[int], cols: Iterable[int], probability: bool = False,
             mode: str = "fixed", masked_by: Any = None) -> Heat:
    """The colours of a window of ``mat`` (2-D) showing ``rows`` × ``cols``:

    - ``fixed``: probabilities on [0, 1] (comparable across rows, heads and steps); other values diverging
      around 0 over the slice;
    - ``slice``: the slice's own min–max, so weights of 0.1 and 0.3 get colours far apart;
    - ``row``: each row's own min–max (a query's weights against each other).

    ``masked_by`` (a softmax after a mask: its input's 2-D slice): the weights of 0 its −inf cells made are
    left out of the min–max, so a causal row's real weights get the whole range. A slice of at most
    :data:`WHOLE_SLICE_MAX` cells is read whole (cache the result per step and slice); a bigger one only at the
    cells shown (``windowed``), so the cost stays the window's."""
    import numpy as np  # lazy: numpy off the shape path

    rows, cols = list(rows), list(cols)
    whole = mat.size <= WHOLE_SLICE_MAX
    sample = np.asarray(mat if whole else mat[np.ix_(rows, cols)], dtype=float)
    if masked_by is not None and mode != "fixed":
        hidden = np.asarray(masked_by if whole else masked_by[np.ix_(rows, cols)], dtype=float) == -np.inf
        sample = np.where(hidden, np.nan, sample)  # not finite: out of the min–max, as −inf is
    covers = "this slice" if whole else "the cells shown"
    if mode == "fixed":
        if probability:
            return Heat(mode, Scale(0.0, 1.0, False), "probabilities")
        return Heat(mode, scale_for(sample), covers, windowed=not whole)
    if mode == "slice":
        finite = sample[np.isfinite(sample)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        return Heat(mode, Scale(lo, hi, False), covers, windowed=not whole)
    # row: each row's own min–max, over the whole row when the slice is small, over its shown cells when big
    source = sample  # the whole slice when it is small, else the cells shown
    finite = np.isfinite(source)
    any_finite = finite.any(axis=1)
    lo = np.where(finite, source, np.inf).min(axis=1)
    hi = np.where(finite, source, -np.inf).max(axis=1)
    keys = range(mat.shape[0]) if whole else rows
    per_row = {r: Scale(float(lo[k]), float(hi[k]), False) if any_finite[k] else Scale(0.0, 1.0, False)
               for k, r in enumerate(keys)}
    first = per_row[rows[0]] if rows else Scale(0.0, 1.0, False)
    return Heat(mode, first, "each row" if whole else "each row's cells shown", rows=per_row, windowed=not whole)


def special_kind(v: float, masked_by: Any, before: Any, r: int, c: int) -> str:
    """Which special cell (r, c) of value v is: ``-inf`` (masked by this step), ``-inf-before`` (already −inf
    in the input), ``masked`` (a weight of 0 because its score was −inf), or "" for an ordinary cell."""
    neg_inf = float("-inf")
    if v == neg_inf:
        return "-inf-before" if before is not None and float(before[r, c]) == neg_inf else "-inf"
    if masked_by is not None and v == 0.0 and float(masked_by[r, c]) == neg_inf:
        return "masked"
    return ""


def cell_style(v: float, scale: Scale | Heat | None, row: int = 0, kind: str = "") -> str:
    """A cell's style: the heat colour of its row's scale; a special cell (``kind``, see :func:`special_kind`)
    grey, or bold/dim without a scale, so it stands out under NO_COLOR too. A −inf without a kind is this
    step's."""
    if not kind and math.isinf(v) and v < 0:
        kind = "-inf"
    if kind:
        _, _, style, plain = SWATCHES[kind]
        return style if scale is not None else plain
    if scale is None:
        return ""
    return scale.at(row).style(v)


# -- the legend ------------------------------------------------------------------------------------------------

def _covers(heat: Heat, row: int, words: int) -> str:
    """What the scale covers, in words (0 long, 1 short, 2 tiny): the mode and the cells it was taken over."""
    shown = heat.windowed
    if heat.mode == "row":
        return (f"row {row}'s {'shown ' if shown else ''}min–max (each row its own)", f"row {row} min–max",
                f"row {row}")[words]
    if heat.mode == "slice":
        if shown:
            return ("min–max of the cells shown", "shown min–max", "shown")[words]
        return ("this slice's min–max", "slice min–max", "slice")[words]
    if heat.covers == "probabilities":
        return ("probabilities, fixed [0, 1]", "fixed [0, 1]", "fixed")[words]
    where = ("the cells shown", "shown", "shown")[words] if shown else ("this slice", "slice", "slice")[words]
    if heat.scale.diverging and words < 2:
        return f"{where}, 0 at the centre" if words == 0 else f"{where}, 0 centre"
    return where


# the legend's forms, longest first: (characters a bar block takes, words (0 long, 1 short, 2 tiny, 3 none),
# the key hint, digits of the end values, the separator, swatch cells padded); the later ones also shorten the
# swatches' and the note's words
LEVELS = ((2, 0, True, 3, "  ", True), (1, 0, True, 3, "  ", True), (1, 0, False, 3, "  ", True),
          (1, 1, True, 3, "  ", True), (1, 1, False, 3, "  ", True), (1, 2, False, 3, " ", True),
          (1, 2, False, 2, " ", True), (1, 2, False, 2, " ", False), (1, 3, False, 2, " ", False))


def _bar(scale: Scale, block: int, digits: int) -> Text:
    lo, hi = scale.ends
    out = Text(no_wrap=True)
    out.append(num(lo, digits) + " ", "bold")
    for colour in scale.palette:
        out.append("█" * block, colour)
    out.append(" " + num(hi, digits), "bold")
    return out


class ColourLegend:
    """The legend under a heatmap, one line fitted to the width it is given: the gradient bar (one block per
    colour) with its end values, what the scale covers (and which mode is on), a swatch for −inf and masked
    cells when the window shows some, and the number format's note (``values ×1e-06``). Narrower widths get
    shorter forms, never a cut: the bar's blocks halve, the words shorten, the key hint goes.

    ``hint``: the key that changes the scale (or turns colours on); ``integer``: a tensor of ids, not coloured;
    ``styled``: text attributes show (a terminal, even under NO_COLOR; not a file), so masked cells can be said
    to be dim."""

    def __init__(self, heat: Heat | None, *, row: int = 0, seen: Iterable[str] = (), note: str = "",
                 hint: str = "", integer: bool = False, no_color: bool = False, styled: bool = True) -> None:
        self.heat, self.row, self.seen, self.note = heat, row, [s for s in SWATCHES if s in set(seen)], note
        self.hint, self.integer, self.no_color, self.styled = hint, integer, no_color, styled

    def _pieces(self, level: int, part: str = "all") -> list[Text]:
        """The legend's pieces at a level of shortening (an index of :data:`LEVELS`): ``head`` the scale (bar
        and words), ``tail`` the swatches and the note, ``all`` both."""
        if part == "tail":
            return self._tail(level)
        block, words, hint, digits, _, padded = LEVELS[level]
        parts: list[Text] = []
        heat = self.heat
        if self.integer:
            parts.append(Text("ids (integers): no colour" if not words else "ids: no colour", "dim"))
        elif heat is not None:
            parts.append(_bar(heat.at(self.row), block, digits))
            hinted = f" ({self.hint})" if self.hint and hint else ""
            if words < 3:
                parts.append(Text(_covers(heat, self.row, words) + hinted, "dim"))
        elif self.no_color:
            parts.append(Text("NO_COLOR is set: values only" if not words else "values only", "dim"))
        elif self.hint:
            parts.append(Text(f"values only ({self.hint})" if hint else "values only", "dim"))
        return parts if part == "head" else parts + self._tail(level)

    def _tail(self, level: int) -> list[Text]:
        """The swatches of the special cells shown and the number format's note, at a level of shortening."""
        _, words, _, _, _, padded = LEVELS[level]
        tiny, heat = words >= 2, self.heat
        parts: list[Text] = []
        both = "-inf-before" in self.seen  # two masks in one grid: this step's cells and the earlier ones
        for kind in self.seen:
            sample, label, style, plain = SWATCHES[kind]
            if kind == "-inf" and both:
                label = "masked here"
            if tiny:
                label = {"-inf": "here" if both else "masked", "-inf-before": "before"}.get(kind, label.split()[0])
            if heat is not None:  # a sample cell as the grid draws it, then what it means
                parts.append(Text.assemble((f" {sample} " if padded else sample, style), " ", (label, "dim")))
            elif kind != "-inf" and self.styled:  # no colours: marked by style (this step's −inf: bold)
                parts.append(Text.assemble((sample, plain), " ", (f"{plain}: {label}", "dim")))
        if self.note:
            parts.append(Text(self.note.split(" ")[-1] if tiny else self.note, "bold"))
        return parts

    def _fit(self, width: int, part: str = "all") -> tuple[int, Text]:
        """The first level whose form of ``part`` fits ``width`` columns, and that form (the shortest, cropped,
        when none does)."""
        out = Text("")
        for level in range(len(LEVELS)):
            out = Text(LEVELS[level][4], no_wrap=True).join(self._pieces(level, part))
            out.no_wrap, out.overflow = True, "ellipsis"
            if out.cell_len <= width:
                return level, out
        return len(LEVELS) - 1, out

    def text(self, width: int) -> Text:
        """The longest form that fits ``width`` columns in one line."""
        return self._fit(width)[1]

    def lines(self, width: int, room: int = 1) -> list[Text]:
        """The legend in at most ``room`` lines of ``width`` columns: one line when it fits with its words
        whole; else, given two lines, the scale on the first and the swatches and note on the second, each in
        its longest form that fits (a narrow pane with lines to spare: the words stay readable)."""
        level, one = self._fit(width)
        if room < 2 or LEVELS[level][1] == 0 or not self._tail(0):
            return [one]
        head, tail = self._fit(width, "head")[1], self._fit(width, "tail")[1]
        return [head, tail] if head.plain else [one]

    def __rich_console__(self, console: Any, options: Any) -> Any:
        yield self.text(options.max_width)
