"""Every key of the step screen, in one table: the screen's bindings, the Footer, the help screen and the
command palette are all built from :data:`KEYS`, so they cannot disagree.

Keys: steps move on ←/→ and n/p (in a tutorial: stop to stop); the cell cursor moves on h j k l or
shift+arrows (and ↑/↓ when the matrix has focus), so step and cell movement never share a key. H J K L and
PgUp/PgDn move the cursor a window at a time, which pans a big tensor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from textual.binding import ActiveBinding, Binding

from explain.tui.needs import NEEDS


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
    needs: str = ""  # what it needs of the run, words of explain.tui.needs.NEEDS: shown and run only where they hold

    @property
    def name(self) -> str:
        """The action's name, as ``check_action`` is asked it: ``turn`` for ``turn(-1, 1)``, ``model_map`` for
        the app's ``app.model_map``."""
        return self.action.split("(")[0].removeprefix("app.")

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
    # The Footer shows the keys that work on this run in this order while they fit (then "? more"): the most used
    # first, then what a student cannot find by moving alone (the why views, slices, the map, generation, the
    # gradient, a re-run, export); the help screen orders them by section.
    Key("right,n", "next", "next", "Next step; in a tutorial, the next stop", "Steps", "→/n", group="step"),
    Key("left,p", "previous", "prev", "Previous step; in a tutorial, the previous stop", "Steps", "←/p", group="step"),
    Key("h,shift+left", "move(0, -1)", "cell", "Cell cursor left", "Cell", "h", group="cell", priority=True),
    Key("j,shift+down", "move(1, 0)", "cell", "Cell cursor down", "Cell", "j", group="cell", priority=True),
    Key("k,shift+up", "move(-1, 0)", "cell", "Cell cursor up", "Cell", "k", group="cell", priority=True),
    Key("l,shift+right", "move(0, 1)", "cell", "Cell cursor right", "Cell", "l", group="cell", priority=True),
    Key("d", "scroll_drill(1)", "scroll", "Scroll the drill-down down (its result line stays)", "Cell",
        group="drill"),
    Key("u", "scroll_drill(-1)", "scroll", "Scroll the drill-down up", "Cell", group="drill"),
    Key("a", "answer", "answer", "Reveal the answer to the stop's question", "Tutorial", needs="tutorial"),
    Key("w", "wander", "wander", "Leave the tutorial's stops and step through everything", "Tutorial",
        needs="tutorial"),
    # why: the views of issue 27 as one footer item (yAPWE why), each shown where the run has what it reads
    Key("y", "lens", "lens", "The logit lens: the top word after each layer and each attention, at every position",
        "Why", group="why", needs="stream"),
    Key("A", "attribution", "attribution", "Direct logit attribution: which head, MLP or embedding writes the top "
        "word (against the runner-up; on a run of 'explain attribute', its words)", "Why", group="why",
        needs="stream"),
    Key("P", "patching", "patching", "Activation patching: the recovered fraction per layer × position (a run "
        "opened by 'explain patch --sweep'; after --step, that patch's)", "Why", group="why", needs="patching"),
    Key("W", "generated", "attention to new", "Each generated token's attention over the text so far (grows with G)",
        "Why", group="why", needs="generation"),
    Key("E", "experts", "experts", "A mixture layer's router: tokens × experts, each token's kept weight, the load "
        "(--experts; Enter: why this expert)", "Why", group="why", needs="experts"),
    Key("s", "turn(-1, 1)", "slice", "Next slice along the last leading axis (the head)", "Slice", group="slice",
        needs="slices"),
    Key("S", "turn(-1, -1)", "slice", "Previous slice along the last leading axis", "Slice", group="slice",
        needs="slices"),
    Key("b", "turn(0, 1)", "slice", "Next slice along the first leading axis (the batch)", "Slice", group="slice",
        needs="slices"),
    Key("B", "turn(0, -1)", "slice", "Previous slice along the first leading axis", "Slice", group="slice",
        needs="slices"),
    # the app's actions (M U D), so the step screen's files stay the house rewrite's (issue 23)
    Key("M", "app.model_map", "map", "The model map: embed → blocks → logits, this step lit; Enter jumps",
        "View"),
    Key("G", "generate", "generate", "Generate new tokens after this run's text (5 more each time; gpt, llama)", "Run",
        needs="generates"),
    Key("D", "app.live_sampling", "draw", "Live sampling: change this new token's temperature, top-k, top-p "
        "and seed; its draw is redone at once and the tokens after it regenerated", "Run", needs="generation"),
    Key("r", "gradient", "∂L/∂", "A value ↔ its gradient ∂L/∂… (the first time: record the backward pass)", "Run"),
    Key("e", "rerun", "re-run", "Change the input text and the config, and run again", "Run"),
    Key("x", "export_step", "export", "Export this step as a numpy script (in this folder)", "Run", group="export"),
    Key("X", "export_run", "export run", "Export the whole run as a numpy script", "Run", group="export"),
    # the app's action, bound by every screen (explain/tui/picture.py): each names the picture after what it shows
    Key("c", "app.picture", "svg", "Save the screen as an SVG picture, named after what it shows (in this folder)",
        "Run"),
    Key("o", "tokenizer", "text→ids", "How the text became ids: the tokenizer's steps (normalisation, the pieces "
        "and their bytes, each merge with its rank, the ids); the first time, the run again with them first", "Run",
        needs="text"),
    Key("t", "back_to_tutorial", "tutorial", "Back to the tutorial, at the stop you left", "Tutorial",
        needs="tutorial"),
    Key("full_stop", "scroll_narration(1)", "narration", "Scroll the narration down", "Tutorial", ".",
        group="narration", needs="tutorial"),
    Key("comma", "scroll_narration(-1)", "narration", "Scroll the narration up", "Tutorial", ",",
        group="narration", needs="tutorial"),
    Key("m", "heads", "heads", "Every layer × head attention pattern, as a grid", "View", needs="patterns"),
    Key("slash", "search", "search", "Search steps by name or op kind", "Steps", "/"),
    Key("g", "goto", "go to", "Go to a step by its name (Tab completes)", "Steps"),
    Key("right_square_bracket", "next_kind", "same op", "Next step of the same op kind", "Steps", "]",
        group="same op"),
    Key("left_square_bracket", "previous_kind", "same op", "Previous step of the same op kind", "Steps", "[",
        group="same op"),
    Key("home,less_than_sign", "first", "first", "First step (first stop)", "Steps", "<", group="first/last"),
    Key("end,greater_than_sign", "last", "last", "Last step (last stop)", "Steps", ">", group="first/last"),
    Key("v", "cycle_show", "values/colours", "Cells show values on colours, colours only, or values only", "View"),
    Key("V", "cycle_scale", "scale", "Colour scale: fixed ([0, 1] for weights), each row's own min–max, or the "
        "slice's min–max (0.1 vs 0.3 apart)", "View"),
    Key("plus,equals_sign", "precision(1)", "digits", "One more digit after the point", "View", "+",
        group="digits"),
    Key("minus", "precision(-1)", "digits", "One digit fewer", "View", "-", group="digits"),
    Key("i", "toggle_operands", "inputs", "Show or hide the operands (the step's inputs)", "View"),
    Key("T", "toggle_sidebar", "tree", "Show or hide the step tree / narration", "View"),
    Key("H", "page(0, -1)", "pan", "Pan left a window", "Cell", group="pan"),
    Key("J,pagedown", "page(1, 0)", "pan", "Pan down a window", "Cell", "J", group="pan"),
    Key("K,pageup", "page(-1, 0)", "pan", "Pan up a window", "Cell", "K", group="pan"),
    Key("L", "page(0, 1)", "pan", "Pan right a window", "Cell", group="pan"),
    Key("f", "top", "top", "Cursor to the row's largest value: the most probable word (the drawn one on a new token)", "Cell"),
    Key("U", "app.show_link", "link", "The link to what is on screen: the tutorial's stop, or the run's model, "
        "text, step and cell (served: the address to share; in a terminal: explain run LINK)", "App"),
    # last, and at every width: the way to every other key ("? more" when some do not fit), and the way out
    Key("question_mark", "help", "help", "Keys and what the panes show", "App", "?"),
    Key("q", "quit", "quit", "Quit", "App"),
]

SECTIONS = ("Steps", "Cell", "Slice", "View", "Tutorial", "Run", "Why", "App")  # the help screen's order

ALWAYS_IN_FOOTER = ("help", "quit")  # at every width: the way to every other key, and the way out
PALETTE_WIDTH = 12  # the palette key Textual docks at the footer's right ("▏^p palette")
MORE = "more"  # help's footer label when some keys that work here do not fit: "? more"


def _needs_by_name() -> dict[str, str]:
    """Each action name's needs; the keys of one action (s S b B: turn) need the same, and every word is known."""
    out: dict[str, str] = {}
    for k in KEYS:
        if out.setdefault(k.name, k.needs) != k.needs:
            raise ValueError(f"the keys of {k.name} need different things: {out[k.name]!r} and {k.needs!r}")
        if not set(k.needs.split()) <= set(NEEDS):
            raise ValueError(f"{k.keys} needs {k.needs!r}; known: {list(NEEDS)}")
    return out


NEEDS_OF: dict[str, str] = _needs_by_name()  # action name → the words its keys need


def works(name: str, have: frozenset[str]) -> bool:
    """Whether the action ``name`` works on a run that ``have`` (:func:`explain.tui.needs.facts`) its needs."""
    return set(NEEDS_OF.get(name, "").split()) <= have


def _footer_items(shown: list[Key]) -> list[list[Key]]:
    """The footer's items: a run of keys of one group is one item (its keys, then its one label)."""
    items: list[list[Key]] = []
    for k in shown:
        if items and k.group and items[-1][0].group == k.group:
            items[-1].append(k)
        else:
            items.append([k])
    return items


def _item_width(item: list[Key]) -> int:
    """Columns an item takes in Textual's Footer: a key alone is " key label " and a margin; a group is its
    keys run together, a space, its label and a margin (Footer's own CSS, non-compact)."""
    shown = [k.display or _pretty(k.keys.split(",")[0]) for k in item]
    if len(item) > 1:
        return 1 + sum(len(d) for d in shown) + 1 + len(item[0].group or "") + 1
    return len(shown[0]) + 2 + len(item[0].label) + 1


@dataclass(frozen=True)
class Shown:
    """What the Footer shows at one width: the actions, and whether keys that work here were left out."""

    actions: frozenset[str]
    more: bool


def footer_actions(width: int, enabled: Callable[[str], bool]) -> Shown:
    """The actions the Footer shows at ``width`` columns: help and quit always, then the keys ``enabled`` (by
    action name) in :data:`KEYS` order while they fit; every key is also in help (``?``) and the palette, and
    ``more`` says that some are only there. A group of keys (h j k l: cell) is shown whole or not at all."""
    live = [k for k in KEYS if enabled(k.name)]
    room = width - PALETTE_WIDTH - sum(_item_width([k]) for k in live if k.action in ALWAYS_IN_FOOTER)
    chosen = {k.action for k in live if k.action in ALWAYS_IN_FOOTER}
    for item in _footer_items([k for k in live if k.action not in ALWAYS_IN_FOOTER]):
        w = _item_width(item)
        if w > room:
            break  # the order is the priority: a later, narrower key does not jump ahead
        room -= w
        chosen.update(k.action for k in item)
    return Shown(frozenset(chosen), more=len(chosen) < len(live))


def in_footer(active: dict[str, Any], shown: Shown) -> dict[str, Any]:
    """Textual's active bindings less the keys of :data:`KEYS` that are not ``shown`` (what fits the width), help
    labelled "more" when keys were left out: the Footer is their only reader (key presses go through the binding
    chain, not this map), so a key left out still works, and help (``?``) and the palette list every key."""
    actions = {k.action for k in KEYS}
    out = {key: b for key, b in active.items() if b.binding.action not in actions or b.binding.action in shown.actions}
    if shown.more:
        out = {key: ActiveBinding(b.node, replace(b.binding, description=MORE), b.enabled, b.tooltip)
               if b.binding.action == "help" else b for key, b in out.items()}
    return out


def palette_title(key: Key) -> str:
    """The key's command in the palette: its help, led by its footer group's label when the help does not say
    it, so what the footer shows ("yAPW why") is what the palette finds ("why")."""
    if key.group and key.group.lower() not in key.help.lower():
        return f"{key.group}: {key.help}"
    return key.help


def bindings() -> list[Binding]:
    """The step screen's bindings, grouped for the Footer; then, hidden, each key with needs once more as
    ``refused(i)`` (``i``: its place in :data:`KEYS`), which Textual tries when the first is disabled by
    ``check_action``, so a key pressed where it cannot work says why instead of nothing."""
    groups: dict[str, Binding.Group] = {}
    out = []
    for k in KEYS:
        group = None
        if k.group:
            group = groups.setdefault(k.group, Binding.Group(k.group, compact=True))
        out.append(Binding(k.keys, k.action, k.label, show=True, key_display=k.display, priority=k.priority,
                           tooltip=k.help, group=group))
    out += [Binding(k.keys, f"refused({i})", show=False, priority=k.priority) for i, k in enumerate(KEYS) if k.needs]
    return out
