"""Every key of the step screen, in one table: the screen's bindings, the Footer, the help screen and the
command palette are all built from :data:`KEYS`, so they cannot disagree.

Keys: steps move on ←/→ and n/p (in a tutorial: stop to stop); the cell cursor moves on h j k l or
shift+arrows (and ↑/↓ when the matrix has focus), so step and cell movement never share a key. H J K L and
PgUp/PgDn move the cursor a window at a time, which pans a big tensor.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding


@dataclass(frozen=True)
class Key:
    """One action: its keys (Textual names, comma-separated), the action string, a short footer label, the
    help text (help screen and command palette), its section in the help screen."""

    keys: str
    action: str
    label: str
    help: str
    section: str
    display: str | None = None  # how the footer and help show the keys
    group: str | None = None  # footer group: consecutive keys with the same group share it as description
    priority: bool = False  # also when a focused widget binds the key (the tree binds shift+arrows)

    @property
    def shown_keys(self) -> str:
        """Every key of the action, as a user types it: ``→ n``, ``h shift+←``, ``]``."""
        return " ".join(_pretty(k) for k in self.keys.split(","))


NAMES = {"right": "→", "left": "←", "up": "↑", "down": "↓", "slash": "/", "question_mark": "?",
         "right_square_bracket": "]", "left_square_bracket": "[", "less_than_sign": "<", "greater_than_sign": ">",
         "plus": "+", "equals_sign": "=", "minus": "-", "home": "Home", "end": "End", "pagedown": "PgDn",
         "pageup": "PgUp", "full_stop": ".", "comma": ","}


def _pretty(key: str) -> str:
    *mods, name = key.split("+")
    return "+".join([*mods, NAMES.get(name, name)])


KEYS: list[Key] = [
    # the Footer shows keys in this order (it scrolls sideways when they do not fit): the most used first
    Key("right,n", "next", "next", "Next step; in a tutorial, the next stop", "Steps", "→/n", group="step"),
    Key("left,p", "previous", "prev", "Previous step; in a tutorial, the previous stop", "Steps", "←/p", group="step"),
    Key("h,shift+left", "move(0, -1)", "cell", "Cell cursor left", "Cell", "h", group="cell", priority=True),
    Key("j,shift+down", "move(1, 0)", "cell", "Cell cursor down", "Cell", "j", group="cell", priority=True),
    Key("k,shift+up", "move(-1, 0)", "cell", "Cell cursor up", "Cell", "k", group="cell", priority=True),
    Key("l,shift+right", "move(0, 1)", "cell", "Cell cursor right", "Cell", "l", group="cell", priority=True),
    Key("d", "scroll_drill(1)", "scroll", "Scroll the drill-down down (its result line stays)", "Cell",
        group="drill"),
    Key("u", "scroll_drill(-1)", "scroll", "Scroll the drill-down up", "Cell", group="drill"),
    Key("s", "turn(-1, 1)", "slice", "Next slice along the last leading axis (the head)", "Slice", group="slice"),
    Key("S", "turn(-1, -1)", "slice", "Previous slice along the last leading axis", "Slice", group="slice"),
    Key("b", "turn(0, 1)", "slice", "Next slice along the first leading axis (the batch)", "Slice", group="slice"),
    Key("B", "turn(0, -1)", "slice", "Previous slice along the first leading axis", "Slice", group="slice"),
    Key("a", "answer", "answer", "Reveal the answer to the stop's question", "Tutorial"),
    Key("w", "wander", "wander", "Leave the tutorial's stops and step through everything", "Tutorial"),
    Key("t", "back_to_tutorial", "tutorial", "Back to the tutorial, at the stop you left", "Tutorial"),
    Key("full_stop", "scroll_narration(1)", "narration", "Scroll the narration down", "Tutorial", ".",
        group="narration"),
    Key("comma", "scroll_narration(-1)", "narration", "Scroll the narration up", "Tutorial", ",",
        group="narration"),
    Key("question_mark", "help", "help", "Keys and what the panes show", "App", "?"),
    Key("q", "quit", "quit", "Quit", "App"),
    Key("slash", "search", "search", "Search steps by name or op kind", "Steps", "/"),
    Key("g", "goto", "go to", "Go to a step by its name (Tab completes)", "Steps"),
    Key("right_square_bracket", "next_kind", "same op", "Next step of the same op kind", "Steps", "]",
        group="same op"),
    Key("left_square_bracket", "previous_kind", "same op", "Previous step of the same op kind", "Steps", "[",
        group="same op"),
    Key("home,less_than_sign", "first", "first", "First step (first stop)", "Steps", "<", group="first/last"),
    Key("end,greater_than_sign", "last", "last", "Last step (last stop)", "Steps", ">", group="first/last"),
    Key("v", "cycle_show", "values/colours", "Cells show values on colours, colours only, or values only", "View"),
    Key("plus,equals_sign", "precision(1)", "digits", "One more digit after the point", "View", "+",
        group="digits"),
    Key("minus", "precision(-1)", "digits", "One digit fewer", "View", "-", group="digits"),
    Key("m", "heads", "heads", "All heads' attention patterns side by side", "View"),
    Key("i", "toggle_operands", "inputs", "Show or hide the operands (the step's inputs)", "View"),
    Key("T", "toggle_sidebar", "tree", "Show or hide the step tree / narration", "View"),
    Key("e", "rerun", "re-run", "Change the input text and the config, and run again", "Run"),
    Key("r", "gradient", "∂L/∂", "A value ↔ its gradient ∂L/∂… (the first time: record the backward pass)", "Run"),
    Key("x", "export_step", "export", "Export this step as a numpy script (in this folder)", "Run"),
    Key("X", "export_run", "export run", "Export the whole run as a numpy script", "Run"),
    Key("G", "generate", "generate", "Generate new tokens after this run's text (5 more each time; gpt only)", "Run"),
    Key("H", "page(0, -1)", "pan", "Pan left a window", "Cell", group="pan"),
    Key("J,pagedown", "page(1, 0)", "pan", "Pan down a window", "Cell", "J", group="pan"),
    Key("K,pageup", "page(-1, 0)", "pan", "Pan up a window", "Cell", "K", group="pan"),
    Key("L", "page(0, 1)", "pan", "Pan right a window", "Cell", group="pan"),
]

SECTIONS = ("Steps", "Cell", "Slice", "View", "Tutorial", "Run", "App")  # the help screen's order

TUTORIAL_ACTIONS = {"wander", "back_to_tutorial", "answer", "scroll_narration"}


def bindings() -> list[Binding]:
    """The step screen's bindings, grouped for the Footer."""
    groups: dict[str, Binding.Group] = {}
    out = []
    for k in KEYS:
        group = None
        if k.group:
            group = groups.setdefault(k.group, Binding.Group(k.group, compact=True))
        out.append(Binding(k.keys, k.action, k.label, show=True, key_display=k.display, priority=k.priority,
                           tooltip=k.help, group=group))
    return out
