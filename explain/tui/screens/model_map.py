"""The model map (``M``): the whole architecture of the run on one screen, drawn by
:mod:`explain.render.model_map`: the input and embeddings, each block's parts in order (``+`` the residual adds,
the norms, attention, MLP), the final norm, logits and loss; the transformer's encoder and decoder side by side,
its head below them. Shapes ride on the edges; above each block its residual stream runs from what each ``+``
adds back, over the branch, into the ``+`` (when every block's would not fit the height, the chosen block's
alone). The part the step screen is on is lit (a gradient or a generated
token's step lights the forward part it comes from); the arrows choose a part, Enter jumps to its first step.
Dismisses with the step index to show, or None. A model with more blocks than the height scrolls."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from explain.core.shape_rules import fmt_shape
from explain.render.model_map import Node, build, forward_name, lines_of
from explain.trace import Trace
from explain.tui import picture

GAP = 3  # columns between the encoder's and the decoder's column


class ModelMapScreen(ModalScreen[int | None]):
    """The map of ``trace``, with the part holding step ``index`` lit and chosen."""

    DEFAULT_CSS = """
    ModelMapScreen { align: center middle; }
    ModelMapScreen #dialog { width: 100%; height: 100%; border: round $accent; background: $surface; padding: 0 1; }
    ModelMapScreen #map-scroll { height: 1fr; }
    ModelMapScreen #map { height: auto; }
    """
    BINDINGS = [Binding("escape,q,M", "dismiss(None)", "close"), Binding("enter", "jump", "jump"),
                Binding("left,h", "step(-1)", show=False), Binding("right,l", "step(1)", show=False),
                Binding("up,k", "line(-1)", show=False), Binding("down,j", "line(1)", show=False), picture.BINDING]

    def __init__(self, trace: Trace, index: int) -> None:
        super().__init__()
        self.trace = trace
        self.columns, self.tail = build(trace)
        self.order: list[Node] = [n for rows in self.columns + [self.tail] for row in rows for n in row.nodes]
        here = trace[index].name
        forward = forward_name(here)
        self.lit = {trace[forward].index} if forward in trace else set()
        owners = [n for n in self.order if self.lit & set(n.steps)]
        self.chosen = owners[0] if owners else self.order[0]
        self.here = here
        self.places: dict[int, tuple[int, int]] = {}

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self._title(), id="map-title")
            with VerticalScroll(id="map-scroll", can_focus=False):
                yield Static("", id="map")
            yield Static("", id="map-foot")

    def picture_name(self) -> str:
        """``model map gpt``."""
        return f"model map {self.trace.config.model}"

    def _title(self) -> Text:
        cfg = self.trace.config
        blocks = sum(1 for rows in self.columns for r in rows if r.label)
        where = "lit (yellow)" if self.lit else f"not drawn here ({self.here})"
        return Text.assemble((f"Model map: {cfg.model}", "bold"), f", {blocks} blocks; the step you are on is "
                             f"{where}.\n", ("←→↑↓ choose · Enter jumps there · c svg · Esc closes", "dim"))

    def _draw(self, width: int, streams: set[str] | None = None) -> Text:
        self.places = {}
        lines: list[Text] = []
        if len(self.columns) == 1:
            lines = lines_of(self.columns[0], width, self.lit, self.chosen, self.places, 0, 0, streams=streams)
        elif self.columns:
            half = (width - GAP) // 2
            cols = [lines_of(rows, half, self.lit, self.chosen, self.places, c * (half + GAP), 0, streams=streams)
                    for c, rows in enumerate(self.columns[:2])]
            names = [self.trace[rows[0].nodes[0].steps[0]].name.split(".")[0] for rows in self.columns[:2]]
            heads = [Text(name, style="bold underline") for name in names]  # the steps' own prefixes
            for i in range(max(len(c) for c in cols)):
                left = cols[0][i] if i < len(cols[0]) else Text("")
                right = cols[1][i] if i < len(cols[1]) else Text("")
                lines.append(Text.assemble(left, " " * (half + GAP - left.cell_len), right))
            for key, (line, col) in list(self.places.items()):
                self.places[key] = (line + 1, col)
            lines.insert(0, Text.assemble(heads[0], " " * (half + GAP - heads[0].cell_len), heads[1]))
        tail = lines_of(self.tail, width, self.lit, self.chosen, self.places, 0, len(lines), last_edge=False)
        return Text("\n").join(lines + tail)

    def _foot(self) -> Text:
        node = self.chosen
        first, last = self.trace[node.steps[0]], self.trace[node.steps[-1]]
        span = first.name if len(node.steps) == 1 else f"{first.name} … {last.name}"
        n = len(node.steps)
        if node.label == "+" and n == 1:  # what is added to what: the stream and the branch, by name
            return Text.assemble(("+", "bold"), f"  {first.name} = {' + '.join(first.inputs)} → ",
                                 (fmt_shape(last.shape), "green"))
        return Text.assemble((node.label, "bold"), f"  {n} step{'s' if n != 1 else ''}: {span} → ",
                             (fmt_shape(last.shape), "green"))

    def on_resize(self) -> None:  # also the first layout
        self._redraw()

    def _redraw(self) -> None:
        width = max(self.size.width - 4, 20)  # border and padding
        title = len(self._title().wrap(self.app.console, width))
        drawn = self._draw(width)
        if len(drawn.plain.splitlines()) > self.size.height - 3 - title:  # border, foot: GPT-2 small at 80x24
            blocks = [r.label for rows in self.columns for r in rows if r.label]
            mine = [r.label for rows in self.columns for r in rows for n in r.nodes if n is self.chosen]
            drawn = self._draw(width, {mine[0] if mine and mine[0] else blocks[0]} if blocks else set())
        self.query_one("#map", Static).update(drawn)
        self.query_one("#map-foot", Static).update(self._foot())
        line = self.places.get(id(self.chosen), (0, 0))[0]
        self.query_one("#map-scroll", VerticalScroll).scroll_to(y=max(0, line - 3), animate=False)

    # -- actions -------------------------------------------------------------------------------------------
    def action_step(self, delta: int) -> None:
        i = self.order.index(self.chosen) + delta
        if 0 <= i < len(self.order):
            self.chosen = self.order[i]
            self._redraw()

    def action_line(self, delta: int) -> None:
        """The nearest part on the next line drawn up or down (the other column's too, beside it)."""
        line, col = self.places[id(self.chosen)]
        ahead = [(n, p) for n in self.order if (p := self.places.get(id(n))) and (p[0] - line) * delta > 0]
        if not ahead:
            return
        nearest = min(abs(p[0] - line) for _, p in ahead)
        row = [(n, p) for n, p in ahead if abs(p[0] - line) == nearest]
        self.chosen = min(row, key=lambda np_: abs(np_[1][1] - col))[0]
        self._redraw()

    def action_jump(self) -> None:
        self.dismiss(self.chosen.steps[0])

