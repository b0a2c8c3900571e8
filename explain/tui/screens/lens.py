"""The logit lens screen (``y``): layers down, positions across, each cell the top word read there and its
probability (white to red on [0, 1]); the line below follows, for the cursor's position, the word the model
finally predicts there: its rank and probability after each layer. Enter opens the cell's recorded step
(``lens.POINT.probs`` at that position and word) in the step view."""

from __future__ import annotations

from rich.text import Text

from explain.interp.lens import Lens, summary
from explain.interp.names import lens_point, lens_probs
from explain.ops.base import num
from explain.trace import Trace
from explain.tui.screens.interp_grid import GridScreen, heat


class LensScreen(GridScreen):
    def __init__(self, trace: Trace) -> None:
        super().__init__()
        self.trace = trace
        self.lens: Lens = summary(trace)
        self.tokens = list(trace.labels.get("pos") or [])
        self._final: dict[int, Lens] = {}

    def header(self) -> Text:
        return Text.assemble(("logit lens", "bold cyan"), ": the residual after each block (0: the embeddings) and "
                             "each attention (+attn), read through the final norm and the unembedding. Each cell: "
                             "the top next word there and its probability.\n",
                             ("arrows move · Enter opens the cell's step · Esc closes", "dim"))

    def columns(self) -> list[str]:
        return [f"{t} {w}" for t, w in enumerate(self.tokens)]

    def rows(self) -> list[tuple[str, list[Text]]]:
        return [(r.label, [Text(f"{w} {num(p, 2)}", style=heat(p)) for _, w, p in r.top]) for r in self.lens.rows]

    def _following(self, pos: int) -> Lens:
        """The lens read for the word the model finally predicts at ``pos``."""
        if pos not in self._final:
            word = self.lens.rows[-1].top[pos][0]
            self._final[pos] = summary(self.trace, word, pos, word_text=self.lens.rows[-1].top[pos][1])
        return self._final[pos]

    def describe(self, row: int, col: int) -> Text:
        if not 0 <= row < len(self.lens.rows) or not 0 <= col < len(self.tokens):
            return Text("")
        follow = self._following(col)
        ranks = " → ".join(f"{r.label}: {r.rank}" for r in follow.rows)
        here = follow.rows[row]
        return Text.assemble((here.step, "cyan"),
                             f"  the final prediction after position {col}, {follow.word_text!r}, has rank "
                             f"{here.rank} and p = {num(here.prob, 4)} here; its rank layer by layer: {ranks}")

    def source(self, row: int, col: int) -> tuple[str, tuple[int, ...]]:
        word = self.lens.rows[row].top[col][0]
        return lens_probs(lens_point(self.lens.rows[row].step)), (0, col, word)
