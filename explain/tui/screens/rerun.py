"""The re-run form: it edits the inputs of the run shown (one dict of :func:`explain.run` keyword arguments:
text, tokens, embeddings, weights, every config value, normalize) and runs them itself, so a refused run keeps
the form open with what was typed and the error beside the field it concerns. Dismisses with
``(trace, inputs)`` after a run, or None.

Fields are only those the model uses (:func:`fields_for`); a field left as it was keeps the input unchanged
(a derived value stays derived), so a re-run that changes nothing reproduces the run, a tutorial's hand-written
embeddings and weights included. :func:`parse_form` turns the typed strings into inputs, in one place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static

from explain.core.errors import ExplainError, UsageError
from explain.core.options import OPTION, OPTIONS, parse_option
from explain.core.registry import MODELS, entry, option_help
from explain.engine import api
from explain.trace import Trace
from explain.tui.background import in_background

BATCH_SEPARATOR = " | "


@dataclass(frozen=True)
class Field:
    """One field of the form: the run option it sets, its label, its kind (int, text, choice or bool), its help."""

    key: str
    label: str
    kind: str = "int"
    help: str = ""
    choices: tuple[str, ...] = ()


# The form's fields come from the option definitions (explain.core.options): the input texts, every integer and
# every choice and model switch (on/off); token ids, embeddings, weights and checkpoints are carried over, not
# typed.
FIELDS: dict[str, Field] = {o.name: Field(o.name, o.form_label, o.type, option_help(o),
                                          ("on", "off") if o.type == "bool" else o.choices)
                            for o in OPTIONS if o.type in ("int", "choice", "text", "bool") and o.group != "backward"}
_SWITCH = {True: "on", False: "off"}
DIMENSIONS = tuple(o.name for o in OPTIONS if o.type == "int" and o.name != "seed")
DERIVED = ("d_head", "d_ff", "d_out")  # worked out from d_model and the heads unless given


def fields_for(model: str, inputs: dict[str, Any]) -> list[Field]:
    """The fields of the options that change this model's steps (the option definitions say which), with these
    inputs: given embeddings fix d_model and replace the vocabulary; a checkpoint's config.json sets every
    dimension and its weights."""
    keys = [k for k in FIELDS if OPTION[k].changes(entry(model))]  # a name the form offers from MODELS
    if inputs.get("embeddings") is not None:
        keys = [k for k in keys if k not in ("d_model", "d_vocab")]
    if inputs.get("checkpoint") is not None:
        keys = [k for k in keys if k not in DIMENSIONS and k != "seed"]
    return [FIELDS[k] for k in keys]


def shown_values(trace: Trace, inputs: dict[str, Any]) -> dict[str, str]:
    """What each field shows: the input as given, else the value the run used (derived ones included)."""
    cfg = trace.config.to_dict()
    out: dict[str, str] = {}
    text = inputs.get("text")
    if isinstance(text, list):
        text = BATCH_SEPARATOR.join(text)
    out["text"] = text if text is not None else trace.tokens_text()
    out["target"] = inputs.get("target") or " ".join((trace.labels.get("tgt") or [])[1:])
    for key in FIELDS:
        if key in DERIVED and inputs.get(key) is None and getattr(trace.config, key, None) is None:
            out[key] = ""  # worked out, not given: blank (its value is the placeholder), so a change of d_model
            continue  # re-derives it, and "give d_head" after one means an empty field, not a filled one
        if key not in out:
            value = inputs.get(key, cfg.get(key))
            out[key] = "" if value is None else _SWITCH.get(value, str(value)) if isinstance(value, bool) \
                else str(value)
    return out


def parse_form(model: str, typed: dict[str, str], shown: dict[str, str], inputs: dict[str, Any],
               same_model: bool) -> tuple[dict[str, Any], dict[str, str]]:
    """The inputs of the re-run, and an error per field (empty when every field parses).

    A field whose text is unchanged keeps the input as it was; a changed one replaces it; a blank one goes back
    to the model's default. Changing the text drops the given token ids and embeddings (the text replaces them)
    and given weights (their vocabulary no longer fits); changing a dimension drops given weights too."""
    out: dict[str, Any] = dict(inputs) if same_model else {}
    errors: dict[str, str] = {}
    changed: set[str] = set()
    for key, raw in typed.items():
        raw = raw.strip()
        if same_model and raw == shown.get(key, "").strip():
            continue
        changed.add(key)
        field = FIELDS[key]
        if not raw:
            out.pop(key, None)
        elif field.kind == "int":
            try:  # digits and caps checked in one place (explain.core.limits): a 5,000-digit paste is refused
                out[key] = parse_option(key, raw)
            except UsageError as exc:
                errors[key] = str(exc)
        elif field.kind == "bool":
            out[key] = raw == "on"
        elif key == "text":
            texts = [t.strip() for t in raw.split(BATCH_SEPARATOR.strip()) if t.strip()]
            out["text"] = texts if len(texts) > 1 else texts[0]
        else:
            out[key] = raw
    if "text" in changed:
        for key in ("tokens", "embeddings", "weights"):
            out.pop(key, None)
    elif same_model and ("tokens" in out or "embeddings" in out):
        # the text field showed the labels of the given ids or embeddings; they stay the input
        if not isinstance(inputs.get("text"), (str, list)):
            out.pop("text", None)
    if changed & set(DIMENSIONS) and isinstance(out.get("weights"), dict):
        out.pop("weights")
    return out, errors


# CLI flags as the form's fields (token ids and embeddings are typed as text)
_FLAGS = {**{o.flag: o.name for o in OPTIONS if o.name in FIELDS}, "--tokens": "text", "--embeddings": "text"}
# an error names a field by its flag, or by the bare name or flag word of a number or choice field (d_model,
# heads, normalize); texts and switches are not looked for bare: "text" or "causal" in a message is prose
_NAMED = sorted({w for k, f in FIELDS.items() if f.kind in ("int", "choice")
                 for w in (k, OPTION[k].flag.lstrip("-"))}, key=len, reverse=True)
_MENTION = re.compile(r"--[a-z][a-z-]*|\b(?:" + "|".join(map(re.escape, _NAMED)) + r")\b")


def field_of_error(message: str, keys: list[str], changed: set[str] | frozenset[str] = frozenset()
                   ) -> tuple[str | None, str]:
    """The field an engine error concerns (of the flags and option names it mentions that the form shows, one
    the user changed first, else the first), and the message in the form's words (``use --heads 4`` →
    ``use heads 4``)."""
    mentioned: list[str] = []
    for m in _MENTION.finditer(message):
        word = m.group(0)
        key = _FLAGS.get(word) or _FLAGS.get(f"--{word}") or word
        if key in keys and key not in mentioned:
            mentioned.append(key)
    found = next((k for k in mentioned if k in changed), mentioned[0] if mentioned else None)
    text = re.sub(r"--[a-z][a-z-]*", lambda m: FIELDS[_FLAGS[m.group(0)]].label if m.group(0) in _FLAGS
                  else m.group(0), message)
    return found, text


class RerunScreen(ModalScreen[tuple[Trace, dict[str, Any]] | None]):
    """Model, input and the dimensions the model uses; Enter runs (the form stays open until the run is
    done, and shows a refusal beside its field), Esc cancels."""

    BINDINGS = [Binding("escape", "dismiss(None)", "cancel"), Binding("ctrl+r", "submit", "run")]

    def __init__(self, trace: Trace, inputs: dict[str, Any], note: str = "") -> None:
        super().__init__()
        self.trace = trace
        self.inputs = {k: v for k, v in inputs.items() if k != "model"}  # the model is the trace's
        self.model = trace.config.model
        self.shown = shown_values(trace, self.inputs)
        self.note = note
        # trained weights (``trained: gpt-tiny``) have nothing random: the seed field would mean nothing there
        self.trained = trace.weights if trace.weights.startswith("trained:") else ""
        self._built: str | None = None  # the model whose fields are shown
        self._said: dict[str, str] = {}  # the fields with a message, and what they held when it was given

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("Re-run: change what you want; what you leave as it is stays as it was. "
                         "Blank = the model's default." + (f"\n{self.note}" if self.note else ""), id="hint")
            with Grid(id="form"):
                yield Label("model")
                yield Select([(f"{m}: {d.summary}"[:44], m) for m, d in MODELS.items()], value=self.model, allow_blank=False,
                             id="model", compact=True)
            with Vertical(id="foot"):  # docked: the message and the buttons stay on screen, the form scrolls
                yield Static("", id="error")
                with Horizontal(id="buttons"):
                    yield Button("Run", variant="primary", id="run", compact=True)
                    yield Button("Cancel", id="cancel", compact=True)

    async def on_mount(self) -> None:
        await self._build(self.model)

    async def _build(self, model: str) -> None:
        """The fields of ``model``: the run's values for the run's own model, the defaults for another."""
        grids = self.query("#form")
        if model == self._built or not grids:  # no form: the app quit as the screen opened ('q' then 'e')
            return
        self._built = model
        grid = grids.first(Grid)
        await grid.remove_children(list(grid.children)[2:])
        same = model == self.model
        widgets: list[Any] = []
        for field in fields_for(model, self.inputs if same else {}):
            value = self.shown.get(field.key, "") if same or field.key in ("text", "target") else ""
            widgets.append(Label(field.label, id=f"label-{field.key}"))
            if field.kind == "bool" and not value:  # another model's form: the switch's default
                value = _SWITCH[bool(OPTION[field.key].default)]
            if field.key == "seed" and same and self.trained:  # shown, not typed: a word of why instead
                widgets.append(Static(Text(f"— {self.trained}: nothing random to seed",
                                           style="dim italic"), id="seed-unused"))
            elif field.kind in ("choice", "bool"):
                widgets.append(Select([(n, n) for n in field.choices], value=value or field.choices[0],
                                      allow_blank=False, id=field.key, compact=True))
            else:
                worked = f"{self.trace.config.to_dict()[field.key]}, worked out" if same and not value and \
                    field.key in DERIVED else field.help
                widgets.append(Input(value, placeholder=worked, type="text", id=field.key, compact=True,
                                     classes="wide" if field.kind == "text" else ""))
            # the message sits under the field, in its column (a row spanning both columns is measured at the
            # first column's 11 cells: a two-line message took ten rows at 80×24)
            widgets.append(Static("", id=f"errpad-{field.key}", classes="field-error"))
            widgets.append(Static("", id=f"error-{field.key}", classes="field-error"))
        await grid.mount_all(widgets)
        self._focus_first()

    def _focus_first(self) -> None:
        fields = self.query("#form Input")
        if fields:
            fields.first().focus()

    def typed(self) -> dict[str, str]:
        """Each field's text as typed."""
        out: dict[str, str] = {}
        for field in fields_for(self.query_one("#model", Select).value, self.inputs):
            for widget in self.query(f"#{field.key}"):
                out[field.key] = str(widget.value) if widget.value is not Select.BLANK else ""
        return out

    @on(Select.Changed, "#model")
    async def _model_changed(self, event: Select.Changed) -> None:
        await self._build(str(event.value))

    def _say(self, errors: dict[str, str], general: str = "") -> None:
        for widget in self.query(".field-error"):  # each field's error shows right under it
            widget.update("")
            widget.remove_class("-shown")
        typed = self.typed()
        self._said = {key: typed.get(key, "") for key in errors}  # what each message is about
        for key, message in errors.items():
            for widget in self.query(f"#error-{key}"):
                widget.update(Text(f"↑ {message}", style="bold red"))
            for widget in self.query(f"#error-{key}, #errpad-{key}"):
                widget.add_class("-shown")
        self.query_one("#error", Static).update(Text(general, style="bold red") if general else "")

    def action_submit(self) -> None:
        model = str(self.query_one("#model", Select).value)
        options, errors = parse_form(model, self.typed(), self.shown, self.inputs, model == self.model)
        if errors:
            self._say(errors, "fix the field marked in red")
            return
        self._say({}, "")
        self.query_one("#error", Static).update(Text(f"running {model}…", style="italic"))
        self._run(model, options)

    @work(exclusive=True, group="run", exit_on_error=False)
    async def _run(self, model: str, options: dict[str, Any]) -> None:
        try:
            # api.run looked up at call time (not imported by name), so a test can slow the engine down
            trace = await in_background(lambda: api.run(model, **options))
        except ExplainError as exc:
            self._refused(str(exc))
        except Exception as exc:  # a bug in the engine must not take the session down with it
            self._refused(f"internal error: {exc!r}")
        else:
            self.dismiss((trace, options))

    def _refused(self, message: str) -> None:
        """The run was refused: the form stays as typed, the error beside its field (or under the form)."""
        typed = self.typed()
        changed = {k for k, v in typed.items() if v.strip() != self.shown.get(k, "").strip()}
        key, text = field_of_error(message, list(typed), changed)
        self._say({key: text} if key else {}, "the run was refused: see the field in red" if key else text)
        if key:
            for widget in self.query(f"#{key}"):
                widget.focus()

    @on(Input.Changed)
    def _edited(self, event: Input.Changed) -> None:
        """A field being fixed loses its message (it was about what the field said then)."""
        if self._said.get(event.input.id or "", event.value) != event.value:
            for widget in self.query(f"#error-{event.input.id}, #errpad-{event.input.id}"):
                widget.remove_class("-shown")

    @on(Input.Submitted)
    def _enter(self) -> None:
        self.action_submit()

    @on(Button.Pressed, "#run")
    def _run_pressed(self) -> None:
        self.action_submit()

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss(None)
