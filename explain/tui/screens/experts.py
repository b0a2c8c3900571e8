"""The experts screen (``E``): one mixture layer's router at a glance, tokens down (their words on the rows),
experts across, each cell the kept weight the token gives that expert (white to red on [0, the layer's largest];
``·`` where the token did not go); the last row counts the tokens each expert took (its load). The line below
says, for the cell under the cursor, the token's choice: the weight, the score and its rank, the experts it went
to. ``n``/``p`` move to the next or previous mixture layer of the same pass; Enter opens the choice step at that
cell, whose drill-down says why (the rank, the choosing bias, a dropped group, a tie)."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding

from explain.ops.base import num
from explain.trace import Step, Trace
from explain.tui.screens.interp_grid import GridScreen, heat


class ExpertsScreen(GridScreen):
    """The kept weights of the mixture layers ``kept`` (their ``keep`` steps), starting at ``at``, batch item
    ``item``."""

    BINDINGS = [*GridScreen.BINDINGS, Binding("n", "layer(1)", "next layer"), Binding("p", "layer(-1)", "prev layer")]

    def __init__(self, trace: Trace, kept: list[Step], at: int = 0, item: int = 0) -> None:
        super().__init__()
        self.trace, self.kept, self.at, self.item = trace, kept, at, item

    # -- the layer shown --------------------------------------------------------------------------------------
    @property
    def step(self) -> Step:
        return self.kept[self.at]

    def _arrays(self):
        """(kept weights, choice, router scores) of the layer shown, (T, E) each, for the batch item."""
        step = self.step
        lead = (self.item,) if len(step.shape) == 3 else ()
        choice, scores = (self.trace.value(n) for n in step.inputs[1::-1])  # keep(scores, choice)
        return step.output[lead], choice[lead], scores[lead]

    def _words(self) -> list[str]:
        step = self.step
        words = self.trace.axis_labels(step.axes[-2], self.item) or []
        return [f"{t} {words[t]}" if t < len(words) else str(t) for t in range(step.shape[-2])]

    def picture_name(self) -> str:
        """``experts mixtral blocks.0.mlp``: the model and the mixture layer shown."""
        return f"experts {self.trace.config.model} {self.step.name.rsplit('.', 1)[0]}"

    # -- the grid ---------------------------------------------------------------------------------------------
    def header(self) -> Text:
        step = self.step
        cfg = self.trace.config
        n, total = self.at + 1, len(self.kept)
        return Text.assemble(("experts", "bold cyan"), f" of {step.name.rsplit('.', 1)[0]} (mixture layer {n} of "
                             f"{total}): tokens down, the {step.shape[-1]} experts across; each cell the token's kept "
                             f"weight ({cfg.experts_per_token} per token; '·': not sent there). The last row: how "
                             "many tokens each expert took.\n",
                             ("arrows move · Enter: why (the choice's drill-down) · n/p: next/previous layer · "
                              "Esc closes", "dim"))

    def columns(self) -> list[str]:
        return [f"e{e}" for e in range(self.step.shape[-1])]

    def rows(self) -> list[tuple[str, list[Text]]]:
        weights, choice, _ = self._arrays()
        top = float(weights.max()) or 1.0
        out = [(word, [Text(num(w, 2), style=heat(float(w), 0.0, top)) if c > 0 else Text("·", style="dim")
                       for w, c in zip(weights[t], choice[t])])
               for t, word in enumerate(self._words())]
        load = (choice > 0).sum(axis=0)
        out.append(("tokens", [Text(str(int(n)), style="bold") for n in load]))
        return out

    def describe(self, row: int, col: int) -> Text:
        weights, choice, scores = self._arrays()
        if not 0 <= col < weights.shape[1]:
            return Text("")
        if row >= weights.shape[0]:  # the load row
            took = [t for t in range(weights.shape[0]) if choice[t, col] > 0]
            words = self._words()
            return Text(f"expert {col} took {len(took)} of {weights.shape[0]} tokens: "
                        + (", ".join(words[t] for t in took) or "none"))
        went = [int(e) for e in (choice[row] > 0).nonzero()[0]]
        rank = 1 + int((scores[row] > scores[row, col]).sum())
        kind = "probability" if self.trace.config.router == "softmax" else "score"
        where = (f"weight {num(weights[row, col])}" if col in went else "not sent there (weight 0)")
        return Text.assemble((self._words()[row], "bold"), f" → expert {col}: ", (where, "bold green"),
                             f"; its router {kind} {num(scores[row, col])} ranks {rank} of {weights.shape[1]}. "
                             f"This token goes to experts {', '.join(map(str, went))}.")

    def source(self, row: int, col: int) -> tuple[str, tuple[int, ...]] | None:
        step = self.step
        if row >= step.shape[-2] or not 0 <= col < step.shape[-1]:
            return None
        lead = (self.item,) if len(step.shape) == 3 else ()
        return step.inputs[1], lead + (row, col)  # the choice step, at this token and expert

    def action_layer(self, delta: int) -> None:
        to = self.at + delta
        if not 0 <= to < len(self.kept):
            self.notify(f"no {'later' if delta > 0 else 'earlier'} mixture layer", timeout=3)
            return
        keep = self.cursor()
        self.at = to
        self.fill(keep=(keep[0], keep[1] + 1))
