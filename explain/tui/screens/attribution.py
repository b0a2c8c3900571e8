"""The attribution screen (``A``): each part of the final residual (embeddings, each head, each attention bias,
each MLP) and its contribution to the logit difference between the model's top word and its runner-up at the
last position (or the words a run opened by ``explain attribute`` was recorded for), largest first, coloured blue (against) to red (for); the sum beside the run's logit, and the
convention (the final norm's scale frozen at its run value, TransformerLens's). Enter opens the contribution's
recorded step (``attrib.contributions``) in the step view."""

from __future__ import annotations

from rich.text import Text

from explain.core.text import quoted
from explain.interp.attribution import CONVENTION, Attribution
from explain.interp.names import attr
from explain.ops.base import num
from explain.tui.screens.interp_grid import GridScreen, heat


class AttributionScreen(GridScreen):
    def __init__(self, result: Attribution) -> None:
        super().__init__()
        self.result = result
        self.order = sorted(range(len(result.parts)), key=lambda i: -abs(result.parts[i][1]))
        self.top = max((abs(v) for _, v in result.parts), default=1.0) or 1.0

    def _what(self) -> str:
        a = self.result
        return f"logit[{quoted(a.word_text)}]" + (f" − logit[{quoted(a.vs_text)}]" if a.vs is not None else "")

    def picture_name(self) -> str:
        """``attribution gpt happy vs cat``: the model and the words of the difference."""
        a = self.result
        return f"attribution {a.trace.config.model} {a.word_text}" + (f" vs {a.vs_text}" if a.vs is not None else "")

    def header(self) -> Text:
        a = self.result
        return Text.assemble(("attribution", "bold cyan"), f": who writes {self._what()} after position "
                             f"{a.position}. Sum of the parts {num(a.total, 4)} = the run's {num(a.logit, 4)} "
                             f"(difference {a.total - a.logit:.1e}).\n", (f"{CONVENTION}. ", "dim"),
                             ("Enter opens the step · Esc closes", "dim"))

    def columns(self) -> list[str]:
        return ["contribution", "share of |all|"]

    def rows(self) -> list[tuple[str, list[Text]]]:
        parts = self.result.parts
        whole = sum(abs(v) for _, v in parts) or 1.0
        return [(parts[i][0], [Text(num(parts[i][1], 4), style=heat(parts[i][1], hi=self.top, diverging=True)),
                               Text(f"{100 * abs(parts[i][1]) / whole:.1f}%")]) for i in self.order]

    def describe(self, row: int, col: int) -> Text:
        if not 0 <= row < len(self.order):
            return Text("")
        p = self.order[row]
        label, value = self.result.parts[p]
        return Text.assemble((attr("contributions"), "cyan"), f"[{p}]  {label}: {num(value, 6)}")

    def source(self, row: int, col: int) -> tuple[str, tuple[int, ...]]:
        return attr("contributions"), (self.order[row],)
