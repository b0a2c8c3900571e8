"""The attention-to-generated-tokens screen (``W``, on a generation): one row per new token (its query: the
prompt's last token, then each token fed back), one column per position of the text so far, each cell the weight
the row's token gives that position in one layer and head. It grows with the text: after ``G`` (five more
tokens) the rows and columns grow. ``n``/``p`` change the layer, ``s``/``S`` the head; Enter opens the row's
recorded step (``gen.N.blocks.L.attn.pattern``)."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.binding import Binding

from explain.interp.generated import GeneratedAttention, generated_attention
from explain.ops.base import num
from explain.trace import Trace
from explain.tui.screens.interp_grid import GridScreen, heat


class GeneratedScreen(GridScreen):
    # n/p and s/S as two footer groups ("np layer  sS head"): with c (svg) the footer still fits 80 columns
    _layer, _head = Binding.Group("layer", compact=True), Binding.Group("head", compact=True)
    BINDINGS = [Binding("n", "layer(1)", "next layer", group=_layer), Binding("p", "layer(-1)", "prev layer", group=_layer),
                Binding("s", "head(1)", "next head", group=_head), Binding("S", "head(-1)", "prev head", group=_head)]

    def __init__(self, current: Callable[[], Trace], layer: int = -1, head: int = 0) -> None:
        super().__init__()
        self.current = current  # the step screen's trace now: a G there grows this view
        self.trace = current()
        self.L = self.trace.config.n_layers
        self.at_layer, self.at_head = layer % self.L, head
        self.att: GeneratedAttention = generated_attention(self.trace, self.at_layer, self.at_head)

    def on_mount(self) -> None:
        super().on_mount()
        self.set_interval(0.5, self._follow)

    def _follow(self) -> None:
        if self.current() is not self.trace and self.current().generation is not None:
            self.trace = self.current()
            self._reload()

    def _reload(self) -> None:
        self.att = generated_attention(self.trace, self.at_layer, self.at_head)
        self.fill(keep=None)

    def picture_name(self) -> str:
        """``attention to new gpt layer 1 head 0``."""
        return f"attention to new {self.trace.config.model} layer {self.att.layer} head {self.att.head}"

    def header(self) -> Text:
        g = self.att
        return Text.assemble(("attention to generated tokens", "bold cyan"), f": layer {g.layer}, head {g.head}; "
                             f"{len(g.queries)} new tokens over a prompt of {g.prompt_len}. Row n is "
                             "gen.n.blocks.L.attn.pattern; it grows with the text (G in the step view).\n",
                             ("n/p layer · s/S head · Enter opens the row's step · Esc closes", "dim"))

    def columns(self) -> list[str]:
        g = self.att
        return [f"{i} {w}" + ("*" if i >= g.prompt_len else "") for i, w in enumerate(g.keys)]

    def rows(self) -> list[tuple[str, list[Text]]]:
        g = self.att
        return [(f"{n} {q}", [Text(num(v, 2) if v == v else "", style=heat(v)) for v in row])
                for n, (q, row) in enumerate(zip(g.queries, g.weights))]

    def describe(self, row: int, col: int) -> Text:
        g = self.att
        if not 0 <= row < len(g.steps) or not 0 <= col < g.weights.shape[1]:
            return Text("")
        v = g.weights[row, col]
        if v != v:
            return Text(f"position {col} comes after token {row}: it cannot attend there (causal)")
        return Text.assemble((g.steps[row], "cyan"), f"  {g.queries[row]!r} gives {g.keys[col]!r} (position {col}) "
                             f"weight {num(v, 4)}")

    def source(self, row: int, col: int) -> tuple[str, tuple[int, ...]]:
        g = self.att
        q = g.prompt_len - 1 if row == 0 else 0
        return g.steps[row], (g.item, g.head, q, col)

    def action_layer(self, delta: int) -> None:
        self.at_layer = (self.at_layer + delta) % self.L
        self._reload()

    def action_head(self, delta: int) -> None:
        self.at_head = (self.at_head + delta) % self.trace[self.att.steps[0]].shape[-3]
        self._reload()
