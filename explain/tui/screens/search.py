"""Find a step: ``/`` searches (every word of the query in the name or the op kind; the list narrows as you
type, and says so when nothing matches) and ``g`` goes to a step by its exact name (Tab cycles through the
names that start with what was typed; a wrong name lists the closest steps, to pick with ↑/↓ and Enter).
Dismisses with the chosen step's index, or None."""

from __future__ import annotations

import difflib

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from explain.core.shape_rules import fmt_shape
from explain.trace import Step, Trace
from explain.tui.state import match_steps

CLOSEST = 8  # how many of the closest names an unknown go-to name lists


def closest_steps(trace: Trace, name: str, n: int = CLOSEST) -> list[Step]:
    """The steps whose names are closest to ``name``: those containing it first, then by similarity."""
    low = name.lower()
    contains = [s for s in trace if low and low in s.name.lower()]
    near = difflib.get_close_matches(name, trace.names(), n=n, cutoff=0.3)
    out = contains + [trace[m] for m in near if trace[m] not in contains]
    return out[:n]


def completions(trace: Trace, prefix: str) -> list[str]:
    """Step names that start with ``prefix`` (case-insensitive), in run order."""
    low = prefix.lower()
    return [s.name for s in trace if s.name.lower().startswith(low)]


class SearchScreen(ModalScreen[int | None]):
    """A query box over a list of matching steps (search), or a name box with completion (go to)."""

    BINDINGS = [
        Binding("escape", "dismiss(None)", "close", show=True),
        Binding("down", "cursor(1)", "next match", show=False),
        Binding("up", "cursor(-1)", "previous match", show=False),
        Binding("tab", "complete(1)", "complete", show=False, priority=True),
        Binding("shift+tab", "complete(-1)", "complete", show=False, priority=True),
    ]

    def __init__(self, trace: Trace, mode: str = "search", current: int = 0) -> None:
        super().__init__()
        self.trace = trace
        self.mode = mode
        self.current = max(0, min(current, len(trace) - 1))
        self._cycle: tuple[str, list[str], int] | None = None  # (typed prefix, its completions, position)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            if self.mode == "goto":
                yield Static("Go to step: type its name (Tab cycles through the names that start so), "
                             "Enter goes, Esc closes", id="hint")
                # the placeholder is a real step of this run: the one after the step shown
                example = self.trace[min(self.current + 1, len(self.trace) - 1)].name
                yield Input(placeholder=example, id="query")
                yield Static("", id="error")
            else:
                yield Static("Search steps: words of the name or an op kind (softmax, matmul…); "
                             "↑/↓ choose, Enter goes, Esc closes", id="hint")
                yield Input(placeholder="attn pattern", id="query")
                yield Static("", id="error")
            yield OptionList(id="matches")

    def on_mount(self) -> None:
        self.query_one(Input).focus()
        if self.mode == "search":
            self._fill(match_steps(self.trace, ""))
        else:
            self.query_one(OptionList).display = False

    def on_key(self, event: events.Key) -> None:
        """Keys typed while the dialog is still opening (before the box has focus) go into the box, so a fast
        typist loses nothing."""
        field = self.query_one(Input)
        if field.has_focus:
            return
        if event.is_printable and event.character:
            field.insert_text_at_cursor(event.character)
            event.stop()
        elif event.key == "enter":
            event.stop()
            field.focus()
            self._submitted(Input.Submitted(field, field.value))

    def _fill(self, hits: list[Step]) -> None:
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options([Option(Text.assemble(s.name, "  ", (f"{s.op} {fmt_shape(s.shape)}", "dim")),
                                    id=str(s.index)) for s in hits])
        options.display = bool(hits)
        if hits:
            options.highlighted = 0

    def _say(self, message: str) -> None:
        self.query_one("#error", Static).update(Text(message, style="bold red") if message else "")

    @on(Input.Changed, "#query")
    def _changed(self, event: Input.Changed) -> None:
        if self.mode == "search":
            hits = match_steps(self.trace, event.value)
            self._fill(hits)
            self._say("" if hits else f"no step matches '{event.value.strip()}'")
            return
        if self._cycle is None or event.value not in self._cycle[1]:
            self._cycle = None  # typing (not Tab) starts a new completion
            self._say("")
            self.query_one(OptionList).display = False

    def action_complete(self, delta: int) -> None:
        """Tab: the next name that starts with what was typed (shift+Tab: the previous), round and round."""
        if self.mode != "goto":
            self.focus_next() if delta > 0 else self.focus_previous()
            return
        field = self.query_one(Input)
        if self._cycle is None:
            names = completions(self.trace, field.value)
            if not names:
                self._say(f"no step name starts with '{field.value}'")
                return
            self._cycle = (field.value, names, -1 if delta > 0 else 0)
        prefix, names, pos = self._cycle
        pos = (pos + delta) % len(names)
        self._cycle = (prefix, names, pos)
        field.value = names[pos]
        field.cursor_position = len(field.value)
        self._say(f"{pos + 1} of {len(names)} names starting with '{prefix}'" if len(names) > 1 else "")

    def action_cursor(self, delta: int) -> None:
        options = self.query_one(OptionList)
        if options.display and options.option_count:
            current = options.highlighted if options.highlighted is not None else -1
            options.highlighted = max(0, min(options.option_count - 1, current + delta))

    @on(Input.Submitted, "#query")
    def _submitted(self, event: Input.Submitted) -> None:
        options = self.query_one(OptionList)
        name = event.value.strip()
        if self.mode == "goto" and name in self.trace:
            self.dismiss(self.trace[name].index)
            return
        if options.display and options.highlighted is not None:
            self.dismiss(int(options.get_option_at_index(options.highlighted).id or 0))
            return
        if self.mode == "goto":
            near = closest_steps(self.trace, name)
            self._fill(near)
            self._say(f"no step named '{name}' in this {self.trace.config.model} run"
                      + ("; the closest are below (↑/↓, Enter)" if near else ""))

    @on(OptionList.OptionSelected, "#matches")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(int(event.option.id or 0))
