"""The logit lens screen (``y``): layers down, positions across, each cell the top word read there and its
probability (white to red on [0, 1]); the line below follows, for the cursor's position, the word the model
finally predicts there (at the position ``explain lens --word W`` read, W): its rank and probability after each
layer. Enter opens the cell's recorded step
(``lens.POINT.probs`` at that position and word) in the step view."""

from __future__ import annotations

from rich.text import Text

from explain.core.text import quoted
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
        asked = trace.lens  # what explain lens [--word W] [--position P] summarised: W is followed at P
        self.position = asked.position if asked is not None else 0  # where the cursor starts
        self.asked: Lens | None = asked if asked is not None and asked.word is not None else None
        if self.asked is not None:
            self._final[self.asked.position] = self.asked

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

    def picture_name(self) -> str:
        """``lens gpt happy``: the model and the word followed (asked for, else the text's last word)."""
        word = self.asked.word_text if self.asked is not None else (self.tokens[-1] if self.tokens else "")
        return f"lens {self.trace.config.model} {word}"

    def first_cell(self) -> tuple[int, int]:
        return 0, self.position

    def describe(self, row: int, col: int) -> Text:
        if not 0 <= row < len(self.lens.rows) or not 0 <= col < len(self.tokens):
            return Text("")
        follow = self._following(col)
        here = follow.rows[row]
        what = "the word asked for" if follow is self.asked else "the final prediction"
        return Text.assemble((here.step, "cyan"),
                             f"  {what} after position {col}, {quoted(follow.word_text)}, has rank "
                             f"{here.rank} and p = {num(here.prob, 4)} here; its rank layer by layer: ",
                             trail([(r.label, r.rank or 0) for r in follow.rows], row))

    def source(self, row: int, col: int) -> tuple[str, tuple[int, ...]]:
        word = self.lens.rows[row].top[col][0]
        return lens_probs(lens_point(self.lens.rows[row].step)), (0, col, word)


def trail(ranks: list[tuple[str, int]], at: int, around: int = 3) -> Text:
    """The rank at each point, a run of equal ranks said once ('3–9+attn: 5'), the first and the last point always
    and only the runs near ``at`` (its own in bold) between them, so the line stays a few lines long on a 30-layer
    model (61 points) at 80 columns."""
    runs: list[tuple[int, int]] = []  # [first, last] point of each run of one rank
    for i, (_, rank) in enumerate(ranks):
        if runs and ranks[runs[-1][0]][1] == rank:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    mine = next(k for k, (a, b) in enumerate(runs) if a <= at <= b)
    keep = {0, len(runs) - 1, *range(mine - around, mine + around + 1)}
    out, last = Text(), -1
    for k, (a, b) in enumerate(runs):
        if k not in keep:
            continue
        if out:
            out.append(" … " if k != last + 1 else " → ")
        label = ranks[a][0] if a == b else f"{ranks[a][0]}–{ranks[b][0]}"
        out.append(f"{label}: {ranks[a][1]}", style="bold" if k == mine else "")
        last = k
    return out
