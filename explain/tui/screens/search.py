"""Find a step: ``/`` searches (every word of the query in the name or the op kind; the list narrows as you
type) and ``g`` goes to a step by its exact name (Tab completes; a wrong name shows the nearest ones).
Dismisses with the chosen step's index, or None."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from explain.errors import StepNotFound
from explain.shape_rules import fmt_shape
from explain.trace import Trace
from explain.tui.state import match_steps


class SearchScreen(ModalScreen[int | None]):
    """A query box over a list of matching steps (search), or a name box with completion (go to)."""

    BINDINGS = [
        Binding("escape", "dismiss(None)", "close", show=True),
        Binding("down", "cursor(1)", "next match", show=False),
        Binding("up", "cursor(-1)", "previous match", show=False),
    ]

    def __init__(self, trace: Trace, mode: str = "search") -> None:
        super().__init__()
        self.trace = trace
        self.mode = mode

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            if self.mode == "goto":
                yield Static("Go to step: type its name (Tab or → completes), Enter goes, Esc closes", id="hint")
                yield Input(placeholder="blocks.0.attn.pattern", id="query",
                            suggester=SuggestFromList(self.trace.names(), case_sensitive=False))
                yield Static("", id="error")
            else:
                yield Static("Search steps: words of the name or an op kind (softmax, matmul…); "
                             "↑/↓ choose, Enter goes, Esc closes", id="hint")
                yield Input(placeholder="attn pattern", id="query")
                yield OptionList(id="matches")

    def on_mount(self) -> None:
        self.query_one(Input).focus()
        if self.mode == "search":
            self._fill("")

    def _fill(self, query: str) -> None:
        options = self.query_one(OptionList)
        options.clear_options()
        hits = match_steps(self.trace, query)
        options.add_options([Option(Text.assemble(s.name, "  ", (f"{s.op} {fmt_shape(s.shape)}", "dim")),
                                    id=str(s.index)) for s in hits])
        if hits:
            options.highlighted = 0

    @on(Input.Changed, "#query")
    def _changed(self, event: Input.Changed) -> None:
        if self.mode == "search":
            self._fill(event.value)
        else:
            self.query_one("#error", Static).update("")

    def action_cursor(self, delta: int) -> None:
        if self.mode != "search":
            return
        options = self.query_one(OptionList)
        if options.option_count:
            current = options.highlighted if options.highlighted is not None else -1
            options.highlighted = max(0, min(options.option_count - 1, current + delta))

    @on(Input.Submitted, "#query")
    def _submitted(self, event: Input.Submitted) -> None:
        if self.mode == "search":
            options = self.query_one(OptionList)
            if options.highlighted is not None:
                self.dismiss(int(options.get_option_at_index(options.highlighted).id or 0))
            return
        try:
            self.dismiss(self.trace.find(event.value.strip()).index)
        except StepNotFound as exc:
            self.query_one("#error", Static).update(Text(str(exc), style="red"))

    @on(OptionList.OptionSelected, "#matches")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(int(event.option.id or 0))
