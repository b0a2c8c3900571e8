"""The patching sweep screen (``P``, on a run opened by ``explain patch … --sweep``): layers down, positions
(or heads) across, each cell the recovered fraction of the logit difference when that cell of the corrupted run
is taken from the clean run, on a fixed blue–white–red scale (−1, 0, 1). Enter records that cell's patched run
and opens it, at the patched step, in the step view."""

from __future__ import annotations

import math

from rich.text import Text

from explain.core.text import quoted
from explain.interp.patching import Sweep, describe
from explain.ops.base import num
from explain.render.patching import fraction, rows_legend
from explain.tui.screens.interp_grid import GridScreen, heat

TINT = 0.15  # the least colour a cell printed as non-zero gets: on the −1…1 scale −0.03 was as white as 0


def tinted(v: float) -> float:
    """``v`` for the colour scale: a value the cell prints as non-zero (|v| ≥ 0.005 at two decimals) at least
    ±TINT, so it never reads as white beside a 0; a value printed as 0.00 stays white."""
    return math.copysign(max(abs(v), TINT), v) if abs(v) >= 0.005 else 0.0


class SweepScreen(GridScreen):
    # the title says what the rows, the columns and the numbers are, and warns when the fractions are ratios of small
    # numbers: at 80 columns that is 8 lines, which the grid screens' 6 cut (the warning and the keys were lost)
    DEFAULT_CSS = "SweepScreen #grid-title { max-height: 13; }"

    def __init__(self, sweep: Sweep) -> None:
        super().__init__()
        self.sweep = sweep

    def picture_name(self) -> str:
        """``patching gpt tired vs happy``: the model and the words of the logit difference."""
        r = self.sweep.runs
        return f"patching {r.corrupt.config.model} {r.word_text} vs {r.vs_text}"

    def header(self) -> Text:
        r = self.sweep.runs
        return Text.assemble(("activation patching", "bold cyan"), f": logit[{quoted(r.word_text)}] − logit[{quoted(r.vs_text)}]"
                             f" is {num(r.clean_diff, 4)} clean and {num(r.corrupt_diff, 4)} corrupted; each cell is "
                             "the recovered fraction (patched − corrupted) / (clean − corrupted); "
                             f"{rows_legend(self.sweep)}.\n",
                             *[(f"Note: {n}.\n", "bold") for n in r.notes()],
                             # the scale's legend: the heatmap had none, and a reader took its blue for a value
                             "colour: ", (" -1 ", heat(-1.0, diverging=True)), (" 0 ", heat(0.0, diverging=True)),
                             (" +1 ", heat(1.0, diverging=True)), " (blue: the patch moved it further from the clean "
                             "run; any cell not shown as 0.00 is tinted)\n",
                             ("Enter records and opens that patched run · Esc closes", "dim"))

    def columns(self) -> list[str]:
        s = self.sweep
        if s.kind == "heads":
            return [c.replace("head ", "h") for c in s.columns]
        return [f"{c} {w}" for c, w in enumerate(s.columns)]

    def rows(self) -> list[tuple[str, list[Text]]]:
        # rows by layer and fixed decimals, as the printed heatmap: an 8-token sweep fits 80 columns
        return [(str(r), [Text(fraction(v), style=heat(tinted(v), hi=1.0, diverging=True)) for v in row])
                for r, row in enumerate(self.sweep.recovered)]

    def describe(self, row: int, col: int) -> Text:
        s = self.sweep
        if not 0 <= row < len(s.steps) or not 0 <= col < s.recovered.shape[1]:
            return Text("")
        name, where = s.where(row, col)
        return Text.assemble((name, "cyan"), f" ({describe(s.runs.corrupt[name], where)}) from the clean run: "
                             f"logit difference {num(s.diffs[row, col], 4)}, recovered {num(s.recovered[row, col], 4)}")

    def source(self, row: int, col: int):
        return self.sweep.open(row, col)
